"""A hostile client's raw octets to ``pdi serve``, beside Debian's nginx given the same: RFC 9112's framing rules.

Each request below is sent as raw octets, followed on the same connection by
``GET /healthz`` with ``Connection: close``, to ``pdi serve`` and to an nginx
whose every location answers ``200``: what comes back is the class of each
answer (``1xx`` left out), so a request refused and its connection closed is
``[4]``, and one read as the RFC reads it and the connection kept, ``[2, 2]``.
The expected classes are worked out from RFC 9112 (and RFC 9110 for fields),
and nginx is the independent check that a reading is not pdi's own: where the
two agree the test says so, and where they differ the RFC leaves the choice (or
nginx is the one that strays), each reading written down in
``docs/reference/resolver.md`` ("How a request is framed"). Then what neither
may do whatever the cuts of a request (``hypothesis``): answer a smuggled
request, or answer differently for TCP's cutting; and the bounds a stranger
meets: chunk extensions (RFC 9112 §7.1.1), an answer per request even when
the content after it is wrong (§9.3.2), and requests pipelined without reading
their answers, in bounded memory (``VmHWM``).
"""

from __future__ import annotations

import itertools
import json
import re
import socket
import time
import urllib.parse
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_helpers import on_own_protocol, serving
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from pdi._ports import free_port
from pdi.archive import Archive
from support.nginxnode import nginx
from support.procnet import peak_kib

S = "library.example.us"
#: What follows each request on its connection: answered ``2`` if the connection was kept.
LAST = b"GET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
H = b"GET /healthz HTTP/1.1\r\nHost: h\r\n"
TE = b"Transfer-Encoding: chunked\r\n"
#: A request that looks like one but is the content of the one before it.
SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n"


def _chunked(content: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(content), content)


#: (what the request is and why, its octets, the classes of the answers RFC 9112 asks for): nginx and pdi alike.
AGREED: list[tuple[str, bytes, list[int]]] = [
    ("a bare CR in a field's value (§2.2: invalid)", H + b"X: a\rb\r\n\r\n", [4]),
    ("a bare CR ending the request line (§2.2)", b"GET /healthz HTTP/1.1\rHost: h\r\n\r\n", [4]),
    ("empty lines before the request line (§2.2: SHOULD ignore)", b"\r\n\r\n" + H + b"\r\n", [2, 2]),
    ("an HTTP/1.1 request without Host (§3.2: MUST 400)", b"GET /healthz HTTP/1.1\r\n\r\n", [4]),
    ("two Host fields (§3.2: MUST 400)", H + b"Host: h\r\n\r\n", [4]),
    ("a Host of two values (§3.2: invalid value, MUST 400)", b"GET /healthz HTTP/1.1\r\nHost: a, b\r\n\r\n", [4]),
    ("whitespace before a field's colon (§5.1: MUST 400)", H + b"X-A : b\r\n\r\n", [4]),
    ("Content-Length with whitespace before its colon (§5.1, §11.2)",
     H + b"Content-Length : %d\r\n\r\n" % len(SMUGGLED) + SMUGGLED, [4]),
    ("obs-fold (§5.2: 400 or SP; both refuse)", H + b"X-A: b\r\n c\r\n\r\n", [4]),
    ("obs-fold in Transfer-Encoding (§5.2, §11.2)", H + b"Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n", [4]),
    ("a NUL in a field's value (RFC 9110 §5.5: reject or SP)", H + b"X-A: b\x00c\r\n\r\n", [4]),
    ("a lower-case HTTP-name (§2.3: case-sensitive)", b"GET /healthz http/1.1\r\nHost: h\r\n\r\n", [4]),
    ("a two-digit major version (§2.3: DIGIT . DIGIT)", b"GET /healthz HTTP/01.1\r\nHost: h\r\n\r\n", [4]),
    ("HTTP/2.0 on a request line (RFC 9110 §15.6.6: 505)", b"GET /healthz HTTP/2.0\r\nHost: h\r\n\r\n", [5]),
    ("a later minor version (RFC 9110 §2.5: read as 1.1)", b"GET /healthz HTTP/1.2\r\nHost: h\r\n\r\n", [2, 2]),
    ("a space in the target (§3.2: invalid request line)", b"GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", [4]),
    ("a tab between method and target (§3: method SP request-target, an invalid request line)",
     b"GET\t/healthz HTTP/1.1\r\nHost: h\r\n\r\n", [4]),
    ("a space before the method (§3: an invalid request line)", b" GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n", [4]),
    ("a NUL in the method (§3: method is a token)", b"G\x00ET /healthz HTTP/1.1\r\nHost: h\r\n\r\n", [4]),
    ("a request line without a target (§3)", b"GET\r\nHost: h\r\n\r\n", [4]),
    ("authority form of a GET (§3.2.3: CONNECT only)", b"GET h:80 HTTP/1.1\r\nHost: h\r\n\r\n", [4]),
    ("asterisk form of a GET (§3.2.4: OPTIONS only)", b"GET * HTTP/1.1\r\nHost: h\r\n\r\n", [4]),
    ("Content-Length, then Transfer-Encoding (§6.3 item 3, §11.2)",
     H + b"Content-Length: 5\r\n" + TE + b"\r\n" + _chunked(SMUGGLED), [4]),
    ("Transfer-Encoding, then Content-Length (§6.3 item 3, §11.2)",
     H + TE + b"Content-Length: 5\r\n\r\n" + _chunked(SMUGGLED), [4]),
    ("two different Content-Length (§6.3 item 5: MUST 400)",
     H + b"Content-Length: 3\r\nContent-Length: %d\r\n\r\n" % len(SMUGGLED) + SMUGGLED, [4]),
    ("two equal Content-Length (RFC 9110 §8.6: MAY accept or reject)", H + b"Content-Length: 3\r\n" * 2 + b"\r\nabc",
     [4]),
    ("Content-Length '+3' (RFC 9110 §8.6: 1*DIGIT)", H + b"Content-Length: +3\r\n\r\nabc", [4]),
    ("Content-Length '-3'", H + b"Content-Length: -3\r\n\r\nabc", [4]),
    ("Content-Length '1 2'", H + b"Content-Length: 1 2\r\n\r\n" + b"a" * 12, [4]),
    ("Content-Length '0x3'", H + b"Content-Length: 0x3\r\n\r\nabc", [4]),
    ("Content-Length past 2^64 (§6.3 item 5)", H + b"Content-Length: 99999999999999999999999\r\n\r\nabc", [4]),
    ("Transfer-Encoding in HTTP/1.0 (§6.1: framing faulty)",
     b"GET /healthz HTTP/1.0\r\n" + TE + b"\r\n" + _chunked(SMUGGLED), [4]),
    ("Transfer-Encoding in HTTP/1.0 with Content-Length (§6.1)",
     b"GET /healthz HTTP/1.0\r\n" + TE + b"Content-Length: 5\r\n\r\n0\r\n\r\n", [4]),
    ("chunked, then gzip, in two lines (§6.3 item 4: chunked not final, MUST 400)",
     H + TE + b"Transfer-Encoding: gzip\r\n\r\n0\r\n\r\n", [4]),
    ("chunked in two lines (§7: not applied twice)", H + TE + TE + b"\r\n0\r\n\r\n", [4]),
    ("content that looks like a request (Content-Length) is content",
     H + b"Content-Length: %d\r\n\r\n" % len(SMUGGLED) + SMUGGLED, [2, 2]),
    ("chunked content that looks like a request is content", H + TE + b"\r\n" + _chunked(SMUGGLED), [2, 2]),
    ("'Chunked' (§7: coding names are case-insensitive)", H + b"Transfer-Encoding: Chunked\r\n\r\n0\r\n\r\n", [2, 2]),
    ("a chunk size with leading zeros (§7.1: 1*HEXDIG)", H + TE + b"\r\n0003\r\nabc\r\n0\r\n\r\n", [2, 2]),
    ("a chunk extension (§7.1.1)", H + TE + b"\r\n3;a=\"b c\"\r\nabc\r\n0\r\n\r\n", [2, 2]),
    ("a chunk size, a space, then an extension (§7.1.1: BWS before ';', RFC 9110 §5.6.3: MUST parse)",
     H + TE + b"\r\n3 ;a=b\r\nabc\r\n0\r\n\r\n", [2, 2]),
    ("a chunk size, tabs and spaces, then an extension (§7.1.1: BWS is SP or HTAB)",
     H + TE + b"\r\n3\t \t;a=b\r\nabc\r\n0 ;z\r\n\r\n", [2, 2]),
    ("a chunk size, then whitespace, then the line's end (§7.1: no extension follows; read, the size unambiguous)",
     H + TE + b"\r\n3 \r\nabc\r\n0\r\n\r\n", [2, 2]),
    ("a chunk size, a space, then a second size (§7.1: one chunk-size)", H + TE + b"\r\n3 4\r\nabcd\r\n0\r\n\r\n",
     [4]),
    ("a trailer field (§7.1.2)", H + TE + b"\r\n0\r\nX-A: b\r\n\r\n", [2, 2]),
    ("a chunk size past 64 bits (§7.1: overflow)", H + TE + b"\r\nFFFFFFFFFFFFFFFFF1\r\nabc\r\n0\r\n\r\n", [4]),
    ("a chunk longer than its size (§7.1)", H + TE + b"\r\n3\r\nabcX\r\n0\r\n\r\n", [4]),
    ("a chunk size '0x3' (§7.1)", H + TE + b"\r\n0x3\r\nabc\r\n0\r\n\r\n", [4]),
    ("Connection: close, then more (§9.6: nothing after it read)", H + b"Connection: close\r\n\r\n", [2]),
    ("an error behind an answered request (§9.3.2: in order, then closed)", H + b"\r\n" + H + b"X : y\r\n\r\n", [2, 4]),
    ("an invalid request line behind an answered request, in the same read (§3, §9.3.2)",
     H + b"\r\n" + b"GET\t/healthz HTTP/1.1\r\nHost: h\r\n\r\n", [2, 4]),
]

#: (request, octets, pdi's classes, nginx's classes): where they differ, RFC 9112 (or RFC 9110) allows pdi's.
DIFFERING: list[tuple[str, bytes, list[int], list[int]]] = [
    ("bare LF line ends (§2.2: MAY recognize; pdi does not)", b"GET /healthz HTTP/1.1\nHost: h\n\n", [4], [2, 2]),
    ("a chunk's lines ended by LF (§2.2, §7.1)", H + TE + b"\r\n3\nabc\n0\n\n", [4], [2, 2]),
    ("a field line without a colon (§5: invalid; nginx skips it)", H + b"XAb\r\n\r\n", [4], [2, 2]),
    ("a DEL in a field's value (RFC 9110 §5.5: not field-vchar)", H + b"X-A: a\x7fb\r\n\r\n", [4], [2, 2]),
    ("an octet past ASCII in the target (§3.2, RFC 3986)", b"GET /healthz\xff HTTP/1.1\r\nHost: h\r\n\r\n", [4],
     [2, 2]),
    ("a space after the version (§3: HTTP-version CRLF)", b"GET /healthz HTTP/1.1 \r\nHost: h\r\n\r\n", [4], [2, 2]),
    ("a Host with userinfo (§3.2: uri-host [':' port])", b"GET /healthz HTTP/1.1\r\nHost: u@h\r\n\r\n", [4], [2, 2]),
    ("an empty Host (§3.2: valid, for a target of no authority)", b"GET /healthz HTTP/1.1\r\nHost:\r\n\r\n", [2, 2],
     [4]),
    ("a tab before Transfer-Encoding's value (RFC 9110 §5.6.3: OWS is SP or HTAB)",
     H + b"Transfer-Encoding:\tchunked\r\n\r\n0\r\n\r\n", [2, 2], [5]),
    ("an empty element before chunked (RFC 9110 §5.6.1.2: MUST accept)",
     H + b"Transfer-Encoding: , chunked\r\n\r\n0\r\n\r\n", [2, 2], [5]),
    ("Transfer-Encoding gzip alone (§6.3 item 4: MUST 400; nginx 501, §6.1's SHOULD)",
     H + b"Transfer-Encoding: gzip\r\n\r\nabc", [4], [5]),
    ("chunked, then gzip (§6.3 item 4)", H + b"Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", [4], [5]),
    ("an unknown method (RFC 9110 §9.1: 501; nginx's return answers any)", b"BREW /healthz HTTP/1.1\r\nHost: h\r\n\r\n",
     [5], [2, 2]),
    ("a lower-case method (RFC 9110 §9.1: case-sensitive, so unknown: 501)",
     b"get /healthz HTTP/1.1\r\nHost: h\r\n\r\n", [5], [4]),
    ("HTTP/1.0 keep-alive (§9.3: the recipient MAY honour it)",
     b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", [2], [2, 2]),
    ("whitespace after a chunk extension's ';' (§7.1.1 BWS: llhttp refuses it, with no leniency to read it)",
     H + TE + b"\r\n3; a=b\r\nabc\r\n0\r\n\r\n", [4], [2, 2]),
    ("a known method's name run on (GETX: a token, so another, unknown method: RFC 9110 §9.1, 501)",
     b"GETX /healthz HTTP/1.1\r\nHost: h\r\n\r\n", [5], [2, 2]),
]


def _classes(port: int, pieces: list[bytes], gap: float = 0.0) -> list[int]:
    """Send ``pieces`` (``gap`` seconds apart), then :data:`LAST`, and the class of each answer (``1xx`` left out),
    read until the server closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            for n, piece in enumerate([*pieces[:-1], pieces[-1] + LAST]):
                if n and gap:
                    time.sleep(gap)
                conn.sendall(piece)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused and closed before all was sent: the answer is read below
        answer = b""
        try:
            while piece := conn.recv(65536):
                answer += piece
        except ConnectionResetError:
            pass
    return [int(status[:1]) for status in re.findall(rb"HTTP/1\.[01] (\d{3}) ", answer) if status[:1] != b"1"]


@pytest.fixture(scope="module")
def ports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int, int]]:
    """``pdi serve`` (one worker: one process) and nginx answering ``200`` at every location: their ports, and pdi
    serve's pid."""
    root = tmp_path_factory.mktemp("smuggling")
    with Archive.init(str(root / "archive")) as archive:
        archive.add_series(S)
    port = free_port()
    site = f'server {{ listen 127.0.0.1:{port}; location / {{ return 200 "ok\\n"; }} }}'
    with nginx(site, root / "nginx", lambda: socket.create_connection(("127.0.0.1", port), timeout=1).close()), \
            serving(root / "archive", "--workers", "1") as (process, pdi):
        yield pdi, port, process.pid


@pytest.mark.parametrize(("what", "octets", "expected"), AGREED, ids=[case[0] for case in AGREED])
def test_pdi_and_nginx_answer_as_rfc_9112_asks(ports: tuple[int, int, int], what: str, octets: bytes,
                                               expected: list[int]) -> None:
    pdi, reference, _ = ports
    assert _classes(reference, [octets]) == expected, f"nginx: {what}"
    assert _classes(pdi, [octets]) == expected, f"pdi serve: {what}"


@pytest.mark.parametrize(("what", "octets", "ours", "theirs"), DIFFERING, ids=[case[0] for case in DIFFERING])
def test_where_pdi_and_nginx_differ_the_rfc_allows_pdis_reading(ports: tuple[int, int, int], what: str, octets: bytes,
                                                                 ours: list[int], theirs: list[int]) -> None:
    pdi, reference, _ = ports
    assert _classes(reference, [octets]) == theirs, f"nginx: {what}"
    assert _classes(pdi, [octets]) == ours, f"pdi serve: {what}"


#: The requests whose answer is decided by their head, or by none of their octets: the same however they are cut.
_HEAD_DECIDED = [case for case in AGREED if not case[0].startswith(("a chunk", "Connection: close"))]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(_HEAD_DECIDED), cuts=st.sets(st.integers(1, 400), max_size=4))
def test_a_smuggling_attempt_is_answered_the_same_however_it_is_cut(ports: tuple[int, int, int],
                                                                     case: tuple[str, bytes, list[int]],
                                                                     cuts: set[int]) -> None:
    what, octets, expected = case
    at = [0, *sorted(cut for cut in cuts if cut < len(octets)), len(octets)]
    pieces = [octets[start:end] for start, end in itertools.pairwise(at) if start < end]
    assert _classes(ports[0], pieces, gap=0.01) == expected, what


def test_requests_pipelined_without_reading_their_answers_hold_bounded_memory(ports: tuple[int, int, int]) -> None:
    """RFC 9112 §9.3.2 lets a client pipeline; one that sends 40 MB of requests and reads none of the answers is
    stopped (reading paused, the queue past its bound refused ``503``): the worker's peak memory barely moves."""
    pid = ports[2]
    before = peak_kib(pid)
    request = b"GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n" * 1000
    sent = 0
    with socket.create_connection(("127.0.0.1", ports[0]), timeout=5) as conn:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            while sent < 40_000_000:
                sent += conn.send(request)
        except (TimeoutError, ConnectionResetError, BrokenPipeError):
            pass  # the server stopped reading, or closed after its refusal
    assert sent < 40_000_000, "the server read every request sent without answering"
    assert peak_kib(pid) - before < 16 * 1024


# the protocol's own bounds, on an app that says what it was given


def _echo_app(calls: list[str]) -> Starlette:
    async def echo(request: Request) -> Response:
        calls.append(request.method)
        body = await request.body()
        return PlainTextResponse(f"{len(body)} {body[:20]!r}")

    async def early(request: Request) -> Response:
        calls.append(request.method)
        return PlainTextResponse("early")

    app = Starlette(routes=[Route("/echo", echo, methods=["GET", "POST", "OPTIONS"]), Route("/early", early, methods=["POST"])])
    app.state.cache = app.state.public = None
    return app


@pytest.fixture
def echo() -> Iterator[tuple[int, list[str]]]:
    calls: list[str] = []
    with on_own_protocol(_echo_app(calls)) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        yield port, calls


def _read_all(conn: socket.socket) -> bytes:
    answer = b""
    try:
        while piece := conn.recv(65536):
            answer += piece
    except ConnectionResetError:
        pass
    return answer


def _problem(answer: bytes, status: int) -> str:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 %d " % status), answer[:300]
    assert b"connection: close" in head.lower()
    detail: str = json.loads(body)["detail"]
    return detail


def test_transfer_encoding_in_http_1_0_is_refused_before_the_app(echo: tuple[int, list[str]]) -> None:
    port, calls = echo
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.sendall(b"POST /echo HTTP/1.0\r\nHost: h\r\n" + TE + b"\r\n" + _chunked(b"abc"))
        detail = _problem(_read_all(conn), 400)
    assert "HTTP/1.0" in detail and "RFC 9112 §6.1" in detail
    assert calls == []


def test_the_asterisk_form_is_for_options_alone(echo: tuple[int, list[str]]) -> None:
    port, calls = echo
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.sendall(b"GET * HTTP/1.1\r\nHost: h\r\n\r\n")
        assert "RFC 9112 §3.2.4" in _problem(_read_all(conn), 400)
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.sendall(b"OPTIONS * HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        assert not _read_all(conn).startswith(b"HTTP/1.1 400 ")  # read on (the app's router says what of it)
    assert calls == []


def test_chunk_extensions_are_bounded_and_many_small_ones_are_read(echo: tuple[int, list[str]]) -> None:
    """RFC 9112 §7.1.1: "A server ought to limit the total length of chunk extensions received in a request to an
    amount reasonable for the services provided ... and generate an appropriate 4xx (Client Error) response if
    that amount is exceeded." The parser skips them without bound; the protocol bounds them as a head."""
    port, _ = echo
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.sendall(b"POST /echo HTTP/1.1\r\nHost: h\r\n" + TE + b"\r\n3;a=")
        sent = 0
        try:
            while sent < 20_000_000:
                conn.sendall(b"b" * 16384)
                sent += 16384
        except (BrokenPipeError, ConnectionResetError):
            pass
        detail = _problem(_read_all(conn), 400)
    assert sent < 20_000_000 and time.monotonic() - started < 10  # stopped early (what the kernel buffers aside)
    assert "chunk extensions, RFC 9112 §7.1.1" in detail
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:  # 20,000 chunks of one octet each
        conn.sendall(b"POST /echo HTTP/1.1\r\nHost: h\r\nConnection: close\r\n" + TE + b"\r\n"
                     + b"1;e=v\r\nx\r\n" * 20_000 + b"0\r\n\r\n")
        answer = _read_all(conn)
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"20000 b'xxxxxxxxxxxxxxxxxxxx'")


@pytest.mark.parametrize("wrong", [b"0\r\nX: " + b"a" * 300_000 + b"\r\n\r\n", b"3\r\nabcX\r\n0\r\n\r\n",
                                   b"3;a=" + b"b" * 300_000 + b"\r\nabc\r\n0\r\n\r\n"])
def test_wrong_content_after_its_answer_gets_no_second_answer(echo: tuple[int, list[str]], wrong: bytes) -> None:
    """RFC 9112 §9.3.2: answers go in the order of the requests, one each; a request answered before its content
    came (``/early`` reads none), whose content then is wrong (a trailer section or chunk extensions past the
    bound, a chunk longer than its size), gets no second answer, which a client would take for its next
    request's: the connection is closed (before, a ``431`` or ``400`` followed the ``200``)."""
    port, calls = echo
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.sendall(b"POST /early HTTP/1.1\r\nHost: h\r\n" + TE + b"\r\n")
        first = conn.recv(65536)
        while first.startswith(b"HTTP/1.1 200 ") and not first.endswith(b"early") and len(first) < 4096:
            more = conn.recv(65536)  # the head and its body may come in two writes (a loaded machine)
            if not more:
                break
            first += more
        assert first.startswith(b"HTTP/1.1 200 ") and first.endswith(b"early"), first
        try:
            conn.sendall(wrong + b"GET /echo HTTP/1.1\r\nHost: h\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        rest = _read_all(conn)
    assert rest == b""
    assert calls == ["POST"]


def test_chunk_extensions_are_bounded_when_every_read_ends_at_a_size_line(echo: tuple[int, list[str]]) -> None:
    """The bound of RFC 9112 §7.1.1 holds however the client cuts its content: each piece sent alone, ending just
    after a chunk's size line (where the reader cannot yet tell a chunk's from a trailer section's), long
    extensions in each (found in review, 2026-11-29: such reads were never counted against the bound, and 3 MB of
    extensions were read to the end and answered ``200``)."""
    port, _ = echo
    piece = b"x\r\n1;e=" + b"v" * 16_000 + b"\r\n"
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.sendall(b"POST /echo HTTP/1.1\r\nHost: h\r\nConnection: close\r\n" + TE + b"\r\n1\r\n")
        try:
            while sent < 3_000_000:
                time.sleep(0.01)  # each piece its own read
                conn.sendall(piece)
                sent += len(piece)
            conn.sendall(b"x\r\n0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        detail = _problem(_read_all(conn), 400)
    # refused, not read to the end: what was sent after the refusal was read and dropped (the staged close, which
    # lasts longer than this client's pace takes to send it all), so how much was sent tells nothing here
    assert "chunk extensions, RFC 9112 §7.1.1" in detail


@pytest.mark.parametrize(("content", "refused"), [
    (b"3;a=" + b"b" * 140_000 + b"\r\nabc\r\n0\r\n\r\n", True),
    (b"3;a=" + b"b" * 120_000 + b"\r\nabc\r\n0\r\n\r\n", False),
    # the chunk's octets end as content may ("c\r\n\r\n"): the parser is given two parts, the second ending it
    (b"5;a=" + b"b" * 70_000 + b"\r\nc\r\n\r\n\r\n0;a=" + b"b" * 70_000 + b"\r\n\r\n", True),
    (b"0;a=" + b"b" * 140_000 + b"\r\n\r\n", True),
], ids=["one of 140 KB", "one of 120 KB", "two of 70 KB, a chunk between", "on the last chunk"])
def test_chunk_extensions_in_the_read_that_ends_the_content_count(
        echo: tuple[int, list[str]], content: bytes, refused: bool) -> None:
    """The bound (a head's, about 130 KB: docs/reference/resolver.md) holds for the read that ends the content too,
    counted before the app has it: all sent at once, in one or two reads (found by a probe, 2026-11-30: that read
    was never counted, and 223 KB of one extension sent at once was read and answered ``200``)."""
    port, calls = echo
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        try:
            conn.sendall(b"POST /echo HTTP/1.1\r\nHost: h\r\nConnection: close\r\n" + TE + b"\r\n" + content)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = _read_all(conn)
    if refused:
        assert "chunk extensions, RFC 9112 §7.1.1" in _problem(answer, 400)
        assert calls in ([], ["POST"])  # the app may have had the head, never the content's end
    else:
        assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"3 b'abc'"), answer[:200]


def test_a_space_after_a_chunk_size_counts_against_the_extensions_bound(echo: tuple[int, list[str]]) -> None:
    """Whitespace after a chunk's size (RFC 9112 §7.1.1's BWS, read since llhttp is told to) is framing as an
    extension is: a size line of endless spaces is refused ``400`` once past the bound, not read to its end."""
    port, _ = echo
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.sendall(b"POST /echo HTTP/1.1\r\nHost: h\r\n" + TE + b"\r\n3")
        sent = 0
        try:
            while sent < 20_000_000:
                conn.sendall(b" \t" * 8192)
                sent += 16384
        except (BrokenPipeError, ConnectionResetError):
            pass
        detail = _problem(_read_all(conn), 400)
    assert sent < 20_000_000
    assert "chunk extensions, RFC 9112 §7.1.1" in detail


@pytest.mark.parametrize(("line", "status", "said"), [
    (b"GET\t/echo HTTP/1.1", 400, "RFC 9112 §3"),
    (b"POST\t/echo HTTP/1.1", 400, "RFC 9112 §3"),
    (b"GET/echo HTTP/1.1", 400, "RFC 9112 §3"),
    (b" GET /echo HTTP/1.1", 400, "RFC 9112 §3"),
    (b"BREW /echo HTTP/1.1", 501, "RFC 9110 §9.1"),
    (b"GETX /echo HTTP/1.1", 501, "RFC 9110 §9.1"),
    (b"get /echo HTTP/1.1", 501, "RFC 9110 §9.1"),
])
def test_a_malformed_request_line_is_400_and_an_unknown_method_501(echo: tuple[int, list[str]], line: bytes,
                                                                    status: int, said: str) -> None:
    """RFC 9112 §3: ``request-line = method SP request-target SP HTTP-version``, and an invalid request line SHOULD
    be ``400``; a method that is a token this server does not know, RFC 9110 §9.1's ``501``. Both whether the line
    starts a read or follows an answered request in the same read."""
    port, calls = echo
    for before in (b"", b"GET /echo HTTP/1.1\r\nHost: h\r\n\r\n"):
        with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
            conn.sendall(before + line + b"\r\nHost: h\r\n\r\n")
            answer = _read_all(conn)
        if before:  # the answer to the request before it, then its refusal
            assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
            answer = answer[answer.index(b"HTTP/1.1 ", 1):]
        assert said in _problem(answer, status), (before, line)
    assert calls == ["GET"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(empty=st.integers(0, 3000), cut=st.integers(0, 6000), line=st.sampled_from(
    [(b"BREW /echo HTTP/1.1", 501), (b"GET\t/echo HTTP/1.1", 400)]), after=st.booleans())
def test_empty_lines_before_a_request_line_do_not_change_its_refusal(
        echo: tuple[int, list[str]], empty: int, cut: int, line: tuple[bytes, int], after: bool) -> None:
    """RFC 9112 §2.2: a server SHOULD ignore empty lines before a request line; llhttp skips any number of them.
    However many come (more than the first octets peeked at: 33 filled them, and ``BREW`` was "it starts with ''",
    400), and however TCP cuts them, an unknown method is still ``501`` and a malformed line ``400``; the same after
    an answered request in the same read."""
    port, _ = echo
    text, status = line
    before = b"GET /echo HTTP/1.1\r\nHost: h\r\n\r\n" if after else b""
    octets = before + b"\r\n" * empty + text + b"\r\nHost: h\r\n\r\n"
    cut = min(cut, len(octets))
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.sendall(octets[:cut])
        time.sleep(0.01)
        conn.sendall(octets[cut:])
        answer = _read_all(conn)
    if after:
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
        answer = answer[answer.index(b"HTTP/1.1 ", 1):]
    assert ("RFC 9110 §9.1" if status == 501 else "RFC 9112 §3") in _problem(answer, status), (empty, cut)


def test_http_1_0_keep_alive_is_answered_connection_close(ports: tuple[int, int, int]) -> None:
    """RFC 9112 §9.3: of an HTTP/1.0 request, ``Connection: keep-alive`` is honoured at the recipient's choice;
    pdi serve does not, and says so in the answer (``Connection: close``), then closes; nginx keeps it and says
    ``keep-alive``."""
    pdi, reference, _ = ports
    for port, said in ((pdi, b"connection: close"), (reference, b"connection: keep-alive")):
        with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
            conn.sendall(b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            head = conn.recv(65536).partition(b"\r\n\r\n")[0].lower()
        assert head.startswith(b"http/1.1 200 ") and said in head.split(b"\r\n"), (port, head)


# closing in stages after a refusal (RFC 9112 §9.6)

#: Requests pipelined past the bound (16 queued behind the one answered: the 18th is refused ``503``).
PIPELINED = b"GET /echo HTTP/1.1\r\nHost: h\r\n\r\n" * 40


def test_a_client_that_sent_more_than_was_read_reads_its_503(echo: tuple[int, list[str]]) -> None:
    """RFC 9112 §9.6: a server closing a connection its client still writes to should close in stages, so that the
    client's TCP stack does not meet a reset before it reads the answer. A client that pipelines past the bound and
    then sends a megabyte more, reading nothing until all is sent, reads every answer and the ``503`` (before, the
    server closed at once with octets unread: a reset, and the client read no ``503``)."""
    port, _ = echo
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
            conn.sendall(PIPELINED + b"x" * 1_000_000)
            time.sleep(0.3)
            answer = b""
            while piece := conn.recv(65536):  # no ConnectionResetError: the server half-closed, then read on
                answer += piece
        assert answer.count(b"HTTP/1.1 200 ") == 17
        refused = answer[answer.index(b"HTTP/1.1 503 "):]
        assert "RFC 9112 §9.3.2" in _problem(refused, 503)


def _closed(conn: socket.socket) -> bool:
    """Whether the server has closed its side for good: octets sent to it now are met with a reset."""
    try:
        conn.sendall(b"x")
        time.sleep(0.1)
        conn.sendall(b"x")
        time.sleep(0.1)
        conn.sendall(b"x")
    except (BrokenPipeError, ConnectionResetError):
        return True
    return False


def test_the_staged_close_is_bounded_in_time(echo: tuple[int, list[str]]) -> None:
    """A client that reads its ``503`` and then neither closes nor stops sending is closed on for good after the
    linger's deadline (:data:`~pdi.server.process.guarded.LINGER_SECONDS`), whatever it sends meanwhile."""
    from pdi.server.process.guarded import LINGER_SECONDS

    port, _ = echo
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.sendall(PIPELINED)
        answer = _read_all(conn)  # the server's half-close ends it: the client has not closed
        assert b"HTTP/1.1 503 " in answer
        started = time.monotonic()
        assert not _closed(conn)  # still read (and dropped) a while
        while not _closed(conn):
            assert time.monotonic() - started < LINGER_SECONDS + 3
    assert time.monotonic() - started >= LINGER_SECONDS - 0.5


def test_the_staged_close_is_bounded_in_octets(echo: tuple[int, list[str]]) -> None:
    """A client that sends without end after its refusal has :data:`~pdi.server.process.guarded.LINGER_OCTETS`
    read and dropped at most, then the connection is closed (what the kernels' buffers hold aside)."""
    from pdi.server.process.guarded import LINGER_OCTETS, LINGER_SECONDS

    port, _ = echo
    started = time.monotonic()
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.sendall(PIPELINED)
        try:
            while sent < 100 * LINGER_OCTETS:
                sent += conn.send(b"x" * 65536)
        except (BrokenPipeError, ConnectionResetError):
            pass
    assert sent < 100 * LINGER_OCTETS
    assert time.monotonic() - started < LINGER_SECONDS + 5
