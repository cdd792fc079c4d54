"""A chunked request's trailer section (RFC 9112 §7.1.2) is neither taken as header fields nor kept without bound.

RFC 9110 §6.5.1: "A recipient MUST NOT merge a trailer field into a header
section unless the recipient understands the corresponding header field
definition and that definition explicitly permits and defines how trailer
field values can be safely merged", and a recipient "MAY selectively retain
or discard the received trailer fields" (§6.5.1, RFC 9112 §7.1.2); fields that
authenticate or route a request are read before its content. Found by a
stranger's raw requests (2026-11-27): uvicorn's protocol appends each trailer
field to the request's header fields, so a deposit whose only
``Authorization`` came after its content was stored (``201``), and a
``Host`` there made two (``400``); and a trailer field that never ended was
kept, and copied whole at each octet that came (the parser joins its pieces),
until the body's deadline: 59 MB in 20 s, 107 MB more held. Now trailer
fields are dropped as they come, and a trailer section longer than a head may
be is refused ``431`` (RFC 6585 §5) as it arrives. The server's peak memory
is read from the kernel (``VmHWM``).
"""

from __future__ import annotations

import hashlib
import json
import random
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_helpers import h11_answers, start_serve, stop, wait_answering

from pdi.archive import Archive
from support.procnet import peak_kib

S = "library.example.us"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int, str, Path]]:
    """``pdi serve`` of an archive with a series and a deposit token for it: its process id, port, the token and
    the archive."""
    location = tmp_path_factory.mktemp("trailers") / "a"
    with Archive.init(str(location)) as opened:
        opened.add_series(S)
        _, token = opened.add_token("depositor", role="deposit", series=[S])
    process, port, _ = start_serve(location, "--workers", "1", "--replay-port", "0", drain=True)
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        yield process.pid, port, token, location
    finally:
        stop(process)


def _ask(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(request)
        answer = b""
        while piece := conn.recv(65536):
            answer += piece
    return answer


def _deposit(fields: bytes, trailers: bytes) -> bytes:
    """A chunked deposit of a text, with these header fields and trailer fields (each line ending CRLF)."""
    content = b"deposited with a trailer\n"
    return (b"POST /api/deposit?series=%s&format=text HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n%s\r\n%x\r\n%s\r\n0\r\n%s\r\n"
            % (S.encode(), fields, len(content), content, trailers))


def _stored(location: Path) -> int:
    with Archive.open(str(location)) as opened:
        return len(opened.ls(series=S))


def test_a_trailer_field_is_not_a_header_field(server: tuple[int, int, str, Path]) -> None:
    _, port, token, location = server
    before = _stored(location)
    bearer = f"Authorization: Bearer {token}\r\n".encode()
    answers, _ = h11_answers(_ask(port, _deposit(b"", bearer)), ["POST"])
    assert answers[0][0] == 401, answers  # the token after the content is no token: nothing stored
    assert _stored(location) == before
    answers, _ = h11_answers(_ask(port, _deposit(bearer, b"Host: elsewhere.example\r\nX-Forwarded-Host: b\r\n")),
                             ["POST"])
    assert answers[0][0] == 201, answers  # a Host after the content is not a second Host
    assert _stored(location) == before + 1


@pytest.mark.parametrize("endless", [b"X-Trailer: ", b"X-Trailer", b"X: a\r\n" * 100_000])
def test_a_trailer_section_past_a_heads_bound_is_431_as_it_arrives(server: tuple[int, int, str, Path],
                                                                    endless: bytes) -> None:
    pid, port, token, _ = server
    before = peak_kib(pid)
    request = _deposit(f"Authorization: Bearer {token}\r\n".encode(), b"")[:-2] + endless
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        try:
            conn.sendall(request)
            for _ in range(32):  # 32 MiB more, unless refused first
                conn.sendall(b"a" * (1 << 20) if endless.endswith((b" ", b"r")) else b"X: a\r\n" * (1 << 17))
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused and closed
        answer = b""
        try:
            while piece := conn.recv(65536):
                answer += piece
        except ConnectionResetError:
            pass
    answers, _ = h11_answers(answer, ["POST"])
    assert [status for status, _, _ in answers] == [431], answer[:300]
    _, fields, body = answers[0]
    assert fields["connection"] == "close" and "trailer" in json.loads(body)["detail"]
    assert peak_kib(pid) - before < 10 * 1024


@pytest.mark.parametrize("seed", range(4))
def test_chunked_content_however_cut_is_stored_whole(server: tuple[int, int, str, Path], seed: int) -> None:
    """Chunks of any size (up to 512 KiB, more than a head's bound), a small trailer section, the octets sent in
    pieces cut anywhere (between a chunk's size line and its octets too): the content is stored as sent."""
    _, port, token, location = server
    rng = random.Random(seed)
    content = bytes(rng.randrange(32, 127) for _ in range(1 << 20))
    framed, at = b"", 0
    while at < len(content):
        size = rng.choice([1, 7, 4096, 200_000, 512 * 1024])
        piece = content[at:at + size]
        framed += b"%x\r\n%s\r\n" % (len(piece), piece)
        at += size
    request = (b"POST /api/deposit?series=%s&format=text HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\n"
               b"Authorization: Bearer %s\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n%s0\r\n"
               b"X-Checksum: none\r\n\r\n" % (S.encode(), token.encode(), framed))
    cuts = sorted(rng.sample(range(1, len(request)), 40))
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        for start, end in zip([0, *cuts], [*cuts, len(request)], strict=True):
            conn.sendall(request[start:end])
            time.sleep(0.005)  # each piece read apart, as far as the kernel allows
        answer = b""
        while piece := conn.recv(65536):
            answer += piece
    answers, _ = h11_answers(answer, ["POST"])
    assert answers[0][0] == 201, answer[:400]
    name = json.loads(answers[0][2])["pdi"]
    with Archive.open(str(location)) as opened:
        assert opened.get(name).sha256 == hashlib.sha256(content).hexdigest()  # stored as sent
