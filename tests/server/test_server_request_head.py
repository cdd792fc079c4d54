"""A request's head is bounded before it is kept, and what the parser refuses is said (``pdi serve``'s protocol).

RFC 9112 §3 ("A server that receives a request-target longer than any URI it wishes to parse MUST respond with a
414 (URI Too Long) status code"), RFC 6585 §5 (431 Request Header Fields Too Large: "the server is unwilling to
process the request because its header fields are too large ... either collectively, or individually"), RFC 9110
§9.1 ("An origin server that receives a request method that is unrecognized or not implemented SHOULD respond with
the 501 (Not Implemented) status code"). The bounds are those ``pdi.server.process.limits`` documents: a target of
64 KiB, 200 header fields, and 64 KiB of head beyond the target. Each refusal is an RFC 9457 problem, and the
connection is closed after it. A stranger streaming millions of tiny header fields (a few octets each, many times
their size in memory once kept) is refused within the bound: the server's peak memory, read from the kernel
(``VmHWM`` of each process), does not grow by the size it was sent.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from server_helpers import on_own_protocol, read_response, start_serve, stop, wait_answering

from pdi.archive import Archive
from pdi.server import create_app
from support.procnet import peak_kib

S = "library.example.us"
KIB = 1024


def _ask(port: int, *pieces: bytes) -> bytes:
    """Send ``pieces`` one after another (stopping if the server closes) and read the answer to its end."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        try:
            for piece in pieces:
                conn.sendall(piece)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused and closed before all was sent: the answer is read below
        answer = b""
        try:
            while piece := conn.recv(65536):
                answer += piece
        except ConnectionResetError:
            pass
    return answer


def _problem(answer: bytes, status: int) -> dict[str, object]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 %d " % status), answer[:300]
    assert b"content-type: application/problem+json" in head.lower()
    assert b"connection: close" in head.lower()
    problem: dict[str, object] = json.loads(body)  # nothing after it: one answer, the connection closed
    assert problem["status"] == status
    return problem


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    location = tmp_path_factory.mktemp("head") / "a"
    with Archive.init(str(location)) as opened:
        opened.add_series(S)
    return location


def test_a_target_longer_than_64_kib_is_414_and_one_within_is_read(archive: Path) -> None:
    with on_own_protocol(create_app(str(archive))) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        # 65,535 octets, the longest target taken (httptools reads no longer URL), and one more
        prefix = b"/api/series?"
        within = _ask(port, b"GET " + prefix + b"a" * (65535 - len(prefix)) + b" HTTP/1.1\r\nHost: a\r\n"
                      b"Connection: close\r\n\r\n")
        assert within.startswith(b"HTTP/1.1 200 ") and S.encode() in within, within[:200]
        over = _ask(port, b"GET " + prefix + b"a" * (65536 - len(prefix)) + b" HTTP/1.1\r\nHost: a\r\n\r\n")
        problem = _problem(over, 414)
        assert problem["title"] == "URI Too Long" and "65535 octets" in str(problem["detail"])


def test_more_than_200_fields_or_64_kib_of_them_is_431(archive: Path) -> None:
    with on_own_protocol(create_app(str(archive))) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        fields = b"".join(b"X-Field-%d: x\r\n" % n for n in range(198))
        served = _ask(port, b"GET /robots.txt HTTP/1.1\r\nHost: a\r\n" + fields + b"Connection: close\r\n\r\n")
        assert served.startswith(b"HTTP/1.1 200 "), served[:200]  # 200 fields, Host and Connection among them
        many = _ask(port, b"GET /robots.txt HTTP/1.1\r\nHost: a\r\n" + fields + b"X-One: more\r\n"
                    b"Connection: close\r\n\r\n")
        problem = _problem(many, 431)
        assert problem["title"] == "Request Header Fields Too Large" and "200 header fields" in str(problem["detail"])
        # one field of 100 KiB (more than the fields may hold, less than the whole head), and one without end
        large = _ask(port, b"GET /robots.txt HTTP/1.1\r\nHost: a\r\nX-Large: " + b"x" * (100 * KIB) + b"\r\n\r\n")
        assert "header fields are more than 65536 octets" in str(_problem(large, 431)["detail"])
        endless = _ask(port, b"GET /robots.txt HTTP/1.1\r\nHost: a\r\nX-Large: ", *[b"x" * (64 * KIB)] * 64)
        assert "head is more than" in str(_problem(endless, 431)["detail"])
        # on a kept-alive connection, after a request answered: the next head is bounded from its first octet
        again = _ask(port, b"GET /robots.txt HTTP/1.1\r\nHost: a\r\n\r\nGET /robots.txt HTTP/1.1\r\nHost: a\r\n"
                           b"X-Large: " + b"x" * (250 * KIB), *[b"x" * (64 * KIB)] * 16)
        assert again.startswith(b"HTTP/1.1 200 ") and b"HTTP/1.1 431 " in again, again[:100]


def test_a_head_within_every_bound_is_read_however_it_arrives(archive: Path) -> None:
    """The longest target and 64 KiB of fields less one octet: read whole in one piece, or cut anywhere."""
    target = b"/robots.txt?" + b"a" * (65535 - 12)
    value = b"x" * (64 * KIB - 1 - len(b"X-Large") - len(b"Connection") - len(b"close") - len(b"Host") - 1)
    head = b"GET " + target + b" HTTP/1.1\r\nHost: a\r\nX-Large: " + value + b"\r\nConnection: close\r\n\r\n"
    with on_own_protocol(create_app(str(archive))) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        for cut in (None, 10, len(head) // 2, len(head) - 3):
            pieces = (head,) if cut is None else (head[:cut], head[cut:])
            answer = _ask(port, *pieces)
            assert answer.startswith(b"HTTP/1.1 200 "), (cut, answer[:200])


@pytest.mark.parametrize(("request_head", "status", "said"), [
    (b"BREW /robots.txt HTTP/1.1\r\nHost: a\r\n\r\n", 501, "method is not one this server offers"),
    (b"CONNECT a:80 HTTP/1.1\r\nHost: a:80\r\n\r\n", 501, "method is not one this server offers"),
    (b"GET http://[ HTTP/1.1\r\nHost: a\r\n\r\n", 400, "not a URL this server reads"),
    (b"GET http://a:99999999999/x HTTP/1.1\r\nHost: a\r\n\r\n", 400, "not a URL this server reads"),
    (b"GET /robots.txt HTTP/1.1\r\nHost: a\x00b\r\n\r\n", 400, "Invalid header value char"),
    (b"POST /api/deposit HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
     "Content-Length"),
    (b"GET /robots.txt HTTP/1.1\r\nHost a\r\n\r\n", 400, "not HTTP/1.1 as RFC 9112 writes it"),
    # RFC 9112 §3.2: origin-form = absolute-path [ "?" query ], no fragment; found in review (2026-11-27): the
    # parser dropped it, and a passage's name (its '#' not escaped) was answered with the whole document, 200
    (b"GET /uri-res/N2R?urn:pdi://library.example.us/2026/11/27/1.text.1#char=0,5 HTTP/1.1\r\nHost: a\r\n\r\n",
     400, "holds a '#', which no request target has (RFC 9112 §3.2): a name's fragment is asked for with its '#'"
          " written %23"),
    (b"GET http://a/robots.txt#x HTTP/1.1\r\nHost: a\r\n\r\n", 400, "holds a '#'"),
])
def test_what_the_parser_refuses_is_a_problem_naming_it(archive: Path, request_head: bytes, status: int, said: str,
                                                        ) -> None:
    with on_own_protocol(create_app(str(archive))) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        assert said in str(_problem(_ask(port, request_head), status)["detail"])


def test_a_refusal_waits_for_the_answer_before_it_on_the_connection() -> None:
    """A pipelined request refused while the one before it is still being answered: that answer is written whole,
    then the refusal (before, the refusal was written into the middle of the earlier answer's body)."""
    from starlette.applications import Starlette
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    async def parts() -> AsyncIterator[bytes]:
        for n in range(3):
            yield b"part-%d...\n" % n
            await asyncio.sleep(0.2)

    async def slow(_: object) -> StreamingResponse:
        return StreamingResponse(parts(), headers={"Content-Length": "30"})

    app = Starlette(routes=[Route("/slow", slow)])
    app.state.cache = app.state.public = None
    with on_own_protocol(app) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        for refused, status in ((b"BREW / HTTP/1.1\r\nHost: a\r\n\r\n", 501),
                                (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: a\r\n\r\n", 414)):
            answer = _ask(port, b"GET /slow HTTP/1.1\r\nHost: a\r\n\r\n", refused)
            first, _, rest = answer.partition(b"\r\n\r\n")
            assert first.startswith(b"HTTP/1.1 200 ")
            assert rest.startswith(b"part-0...\npart-1...\npart-2...\nHTTP/1.1 %d " % status), rest[:100]


def test_millions_of_tiny_fields_are_refused_without_being_kept(archive: Path) -> None:
    process, port, _ = start_serve(archive, "--workers", "1", "--replay-port", "0", drain=True)
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        before = peak_kib(process.pid)
        tiny = b"X-A: b\r\n" * (128 * KIB)  # 1 MiB of fields, 131,072 of them
        answer = _ask(port, b"GET /api/series HTTP/1.1\r\nHost: a\r\n", *([tiny] * 40), b"\r\n")
        assert "200 header fields" in str(_problem(answer, 431)["detail"])
        after = peak_kib(process.pid)
        # 40 MiB sent; kept as Python tuples they were 15 times that (the finding this bounds): far less grew
        assert after - before < 20 * KIB, (before, after)
        assert _ask(port, b"GET /robots.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").startswith(
            b"HTTP/1.1 200 ")  # and the server goes on answering
    finally:
        stop(process)


def test_a_failure_in_the_protocols_own_answering_is_a_500_not_the_clients_fault(archive: Path) -> None:
    """The fault is injected (the code that answers plain N2Ls on the connection raising, as a catalog read past
    SQLite's integers once did): the request was good, so the answer is a 500 problem, never a 400."""
    app = create_app(str(archive))

    def failing(*_: object) -> None:
        raise RuntimeError("injected")

    app.state.public = failing
    with on_own_protocol(app, public=True) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        answer = _ask(port, b"GET /uri-res/N2L?urn:pdi://library.example.us/2026/11/26/1.text.1 HTTP/1.1\r\n"
                            b"Host: a\r\n\r\n")
        assert "(RuntimeError)" in str(_problem(answer, 500)["detail"])


def _connect(port: int, source: str) -> socket.socket:
    conn = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))
    conn.sendall(b"GET /robots.txt HTTP/1.1\r\n")  # a request line, and the rest never sent (slowloris)
    return conn


def test_one_client_holds_a_quarter_of_the_connections_and_the_others_are_served(archive: Path) -> None:
    """A client's half-sent requests took every place (found by a tester: 700 of them, and every other reader got
    503 until they timed out). With --max-connections 64, one address holds 16 at most: its 17th is answered 503
    at once, while a reader from another address (127.0.0.2, also this host's loopback) is served."""
    process, port, _ = start_serve(archive, "--workers", "1", "--max-connections", "64", "--replay-port", "0",
                                   drain=True)
    held: list[socket.socket] = []
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        held = [_connect(port, "127.0.0.1") for _ in range(16)]
        refused = _ask(port, b"GET /robots.txt HTTP/1.1\r\nHost: a\r\n\r\n")
        assert "holds 16 connections" in str(_problem(refused, 503)["detail"])
        assert b"\r\nretry-after: 1\r\n" in refused.split(b"\r\n\r\n", 1)[0].lower()  # RFC 9110 §10.2.3
        other = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=("127.0.0.2", 0))
        with other:
            other.sendall(b"GET /robots.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            assert other.recv(100).startswith(b"HTTP/1.1 200 ")
        held.pop().close()  # one place of the 16 given back: the client is served again
        deadline = time.monotonic() + 10
        while not (answer := _ask(port, b"GET /robots.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
                   ).startswith(b"HTTP/1.1 200 "):
            assert time.monotonic() < deadline, answer[:200]  # the server sees the close a moment later
            time.sleep(0.05)
    finally:
        for conn in held:
            conn.close()
        stop(process)


def test_a_client_refused_for_its_connections_reads_its_503_though_it_sent_a_body(archive: Path) -> None:
    """RFC 9112 §9.6: the refusal of a connection past the client's quarter is closed in stages, as every refusal
    is, though nothing of it was read yet: a client that sent a request with a megabyte of content before it read
    reads the ``503``. (Closed at once, the kernel answered the content with a reset; Linux's client still read the
    ``503`` sent before it, which a client whose stack drops what it holds on a reset would not.)"""
    process, port, _ = start_serve(archive, "--workers", "1", "--max-connections", "64", "--replay-port", "0",
                                   drain=True)
    held: list[socket.socket] = []
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        held = [_connect(port, "127.0.0.1") for _ in range(16)]
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            try:
                conn.sendall(b"POST /api/ls HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\n\r\n" + b"x" * 1_000_000)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server closed before all was sent: the 503 must still be read
            time.sleep(0.3)
            answer = b""
            while piece := conn.recv(65536):  # no ConnectionResetError
                answer += piece
        assert "holds 16 connections" in str(_problem(answer, 503)["detail"])
    finally:
        for conn in held:
            conn.close()
        stop(process)


def test_connections_refused_for_a_clients_quarter_take_no_one_elses_place(archive: Path) -> None:
    """Found in review (2026-11-29): since refusals close in stages, each connection refused for its client's quarter
    lingered two seconds, counted among the worker's --max-connections: a client holding its 16 and opening 60 more,
    left open, took all 64 places, and another reader was answered 503 (before, each refused one closed at once).
    A refused client's staged closes are few (:data:`~pdi.server.process.guarded.REFUSED_LINGERING`); past them
    its refusals close at once, and the other reader is served."""
    from pdi.server.process.guarded import REFUSED_LINGERING

    process, port, _ = start_serve(archive, "--workers", "1", "--max-connections", "64", "--replay-port", "0",
                                   drain=True)
    held: list[socket.socket] = []
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        held = [_connect(port, "127.0.0.1") for _ in range(16)]
        refused = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(60)]
        held.extend(refused)
        answers = [_read_some(conn) for conn in refused]
        assert all(b"holds 16 connections" in answer for answer in answers[:REFUSED_LINGERING]), answers[:4]
        with socket.create_connection(("127.0.0.1", port), timeout=30, source_address=("127.0.0.2", 0)) as other:
            other.sendall(b"GET /robots.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            answer = other.recv(100)
        assert answer.startswith(b"HTTP/1.1 200 "), answer
    finally:
        for conn in held:
            conn.close()
        stop(process)


def _read_some(conn: socket.socket) -> bytes:
    """What the server sent on ``conn`` until it closed (or reset) its side."""
    answer = b""
    try:
        while piece := conn.recv(65536):
            answer += piece
    except ConnectionResetError:
        pass
    return answer


def test_a_client_is_an_ipv4_address_or_an_ipv6_64() -> None:
    """One IPv6 host is given a /64 (RFC 6177 §3): its addresses are one client, counted together."""
    from pdi.server.process.limits import client_of as _client_of

    assert _client_of("192.0.2.7") == "192.0.2.7"
    assert _client_of("2001:db8:1:2::7") == _client_of("2001:db8:1:2:ffff::1") == "2001:db8:1:2::/64"
    assert _client_of("2001:db8:1:3::7") != _client_of("2001:db8:1:2::7")
    # an IPv4 client of a socket listening on IPv6 (dual stack: --host ::) is named by its IPv4-mapped address
    # (RFC 4291 §2.5.5.2), which is the IPv4 address's: found by a stranger (2026-11-27), every IPv4 client was
    # one, ::/64, and 16 connections of any one of them left every other IPv4 reader 503
    assert _client_of("::ffff:192.0.2.7") == "192.0.2.7" != _client_of("::ffff:198.51.100.7")
    assert _client_of("::ffff:c000:207") == _client_of("192.0.2.7")


def test_ipv4_clients_of_a_dual_stack_socket_are_each_their_own(archive: Path) -> None:
    """``--host ::ffff:127.0.0.1``: an IPv6 socket that IPv4 clients reach, as a server on ``::`` is reached; the
    clients 127.0.0.1 and 127.0.0.2 are two, each with its own quarter of the connections."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pdi", "serve", "--host", "::ffff:127.0.0.1", "--port", "0", "--replay-port", "0",
         "--workers", "1", "--max-connections", "64", "--archive", str(archive)],
        stderr=subprocess.PIPE, text=True)
    held: list[socket.socket] = []
    try:
        assert process.stderr is not None
        found = re.search(r"at http://\[::ffff:127\.0\.0\.1\]:(\d+)/", process.stderr.readline())
        assert found is not None
        port = int(found[1])
        threading.Thread(target=process.stderr.read, daemon=True).start()
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        held = [_connect(port, "127.0.0.1") for _ in range(16)]
        refused = _ask(port, b"GET /robots.txt HTTP/1.1\r\nHost: a\r\n\r\n")
        assert "holds 16 connections" in str(_problem(refused, 503)["detail"])
        with socket.create_connection(("127.0.0.1", port), timeout=30, source_address=("127.0.0.2", 0)) as other:
            other.sendall(b"GET /robots.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            assert other.recv(100).startswith(b"HTTP/1.1 200 "), "another IPv4 client was refused"
    finally:
        for conn in held:
            conn.close()
        stop(process)


@pytest.mark.parametrize("framing", [b"3\nabc\r\n0\r\n\r\n", b"3\r\nabc\n0\r\n\r\n", b"zz\r\nabc\r\n0\r\n\r\n"])
def test_content_whose_chunked_framing_is_wrong_is_400_at_once(archive: Path, framing: bytes) -> None:
    """RFC 9112 §7.1: ``chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF``. Found in review (2026-11-27): the
    parser refused a bare LF at once, but the refusal waited for the request's own answer, and the app, waiting
    for the rest of its content, answered the body deadline's 408 after 20 s."""
    with on_own_protocol(create_app(str(archive))) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        started = time.monotonic()
        answer = _ask(port, b"POST /api/annotation HTTP/1.1\r\nHost: a\r\nContent-Type: application/ld+json\r\n"
                            b"Transfer-Encoding: chunked\r\n\r\n" + framing)
        assert time.monotonic() - started < 5
        assert "the request is not HTTP/1.1 as RFC 9112 writes it" in str(_problem(answer, 400)["detail"])


def _with_depositor(tmp_path: Path) -> tuple[Path, str]:
    """A new archive with the series ``S`` and a token that deposits in it: where, and the token."""
    location = tmp_path / "a"
    with Archive.init(str(location)) as opened:
        opened.add_series(S)
        _, token = opened.add_token("depositor", role="deposit", series=[S])
    return location, token


def test_an_answer_before_the_content_of_an_expect_100_continue_closes_the_connection(tmp_path: Path) -> None:
    """RFC 9110 §10.1.1: a server answering before it has read the content of a request with ``Expect:
    100-continue`` "SHOULD indicate whether it intends to close the connection". Found in review (2026-11-27):
    after a 401 the connection stayed open, and the next request's first octets were read as this one's
    content. Answered with ``Connection: close``; a request whose content was read keeps its connection."""
    location, token = _with_depositor(tmp_path)
    with on_own_protocol(create_app(str(location))) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        refused = _ask(port, f"POST /api/deposit?series={S}&format=text HTTP/1.1\r\nHost: a\r\n"
                             "Content-Type: text/plain\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n".encode())
        head = refused.split(b"\r\n\r\n", 1)[0].lower()
        assert head.startswith(b"http/1.1 401 ") and b"connection: close" in head, refused[:300]
        assert b"HTTP/1.1 100" not in refused  # nothing was asked of the client's content
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(f"POST /api/deposit?series={S}&format=text HTTP/1.1\r\nHost: a\r\n"
                         f"Authorization: Bearer {token}\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
                         "Expect: 100-continue\r\n\r\n".encode())
            assert conn.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
            conn.sendall(b"hello")
            answer = b""
            while b"\r\n\r\n" not in answer:
                answer += conn.recv(65536)
            assert answer.startswith(b"HTTP/1.1 201 ") and b"connection: close" not in answer.lower(), answer[:300]


def test_an_expect_100_continue_of_a_request_without_content_keeps_the_connection(tmp_path: Path) -> None:
    """RFC 9110 §10.1.1: a server "MAY omit sending a 100 (Continue) response if ... the framing indicates that
    there is no content"; with no content to wait for, nothing on the connection is in doubt. A GET with
    ``Expect: 100-continue`` (curl sends one with a body only, other clients on any request) was answered
    ``Connection: close``, and a request pipelined after it was never answered."""
    location = tmp_path / "a"
    Archive.init(str(location)).close()
    with on_own_protocol(create_app(str(location))) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(b"GET /api HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n"
                         b"GET /api HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n"
                         b"GET /api HTTP/1.1\r\nHost: a\r\n\r\n")
            buffered = bytearray()
            answers = [read_response(conn, buffered) for _ in range(3)]
        for answer in answers:
            head = answer.split(b"\r\n\r\n", 1)[0]
            assert head.startswith(b"HTTP/1.1 200 ") and b"connection: close" not in head.lower(), head
            assert b"100 Continue" not in head


def test_an_expect_100_continue_of_an_http_1_0_request_is_ignored(tmp_path: Path) -> None:
    """RFC 9110 §10.1.1: "A server that receives a 100-continue expectation in an HTTP/1.0 request MUST ignore
    that expectation": no ``100 Continue`` (a status line of a version the client may not read) before the
    answer."""
    location, token = _with_depositor(tmp_path)
    with on_own_protocol(create_app(str(location))) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(f"POST /api/deposit?series={S}&format=text HTTP/1.0\r\nHost: a\r\n"
                         f"Authorization: Bearer {token}\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
                         "Expect: 100-continue\r\n\r\nhello".encode())
            answer = b""
            while more := conn.recv(65536):
                answer += more
        assert answer.startswith(b"HTTP/1.1 201 "), answer[:300]
        assert b" 100 " not in answer.split(b"\r\n", 1)[0] and b"100 Continue" not in answer


@pytest.mark.parametrize("public", [False, True])
def test_a_refusal_after_an_answer_from_the_cache_is_answered(archive: Path, public: bool) -> None:
    """Found in review (2026-11-27): after an answer from the cache the connection's cycle is a stand-in, which
    lacked what the refusal of content cut short reads; every later refusal on that connection (a raw '#', a 414,
    a 431, the parser's 400s) dropped the connection with a traceback instead of its answer."""
    with Archive.open(str(archive)) as opened:
        name = str(opened.add(S, b"kept in the cache\n", format="text"))
    with on_own_protocol(create_app(str(archive)), public=public) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        asked = f"GET /uri-res/N2R?{name} HTTP/1.1\r\nHost: a\r\n\r\n".encode()
        answer = _ask(port, asked, asked, asked, f"GET /uri-res/N2R?{name}#char=0,1 HTTP/1.1\r\nHost: a\r\n\r\n".encode())
    assert answer.count(b"HTTP/1.1 200 ") == 3, answer[:500]
    refusal = answer[answer.rindex(b"HTTP/1.1 400 "):]
    assert "holds a '#'" in str(_problem(refusal, 400)["detail"])


@pytest.mark.parametrize("public", [False, True])
def test_a_target_in_absolute_form_names_the_host(archive: Path, public: bool) -> None:
    """RFC 9112 §3.2.2: for a request in absolute form the origin server "MUST ignore the received Host header field
    (if any) and instead use the host information of the request-target" (found in review, 2026-11-27: N2Ls listed
    the URLs of the Host field's host). Asked twice, so that the second asking meets a kept answer."""
    with Archive.open(str(archive)) as opened:
        name = str(opened.add(S, b"asked through a proxy\n", format="text"))
    with on_own_protocol(create_app(str(archive)), public=public) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        asked = (f"GET http://pdi.example.org/uri-res/N2Ls?{name} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
                 f"GET http://pdi.example.org/uri-res/N2Ls?{name} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                 "Connection: close\r\n\r\n").encode()
        answer = _ask(port, asked)
    assert answer.count(b"HTTP/1.1 200 ") == 2, answer[:400]
    assert answer.count(f"http://pdi.example.org/uri-res/N2R?{name}".encode()) == 2, answer
    assert f"127.0.0.1:{port}".encode() not in answer
