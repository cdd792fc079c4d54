"""A request asking to switch protocols (``Upgrade``), which ``pdi serve`` never does (RFC 9110 §7.8).

"A server MAY ignore a received Upgrade header field if it wishes to
continue using the current protocol on that connection": ``pdi serve``
switches to no other protocol (it has no WebSocket route, and speaks no
``h2c``), so what follows such a request's head is HTTP/1.1 as before, its
content first (RFC 9112 §6). Found by a stranger's raw requests
(2026-11-27): the HTTP parser under uvicorn takes ``Connection: Upgrade``
with ``Upgrade`` as the end of HTTP on the connection, skips the request's
content and drops the rest of what it read, then goes on parsing the next
octets as HTTP: a pipelined request after ``curl --http2``'s ``Upgrade:
h2c`` was never answered, and a request's content sent after its head was
answered as a request of its own (a desync, the smuggling a proxy that
forwards ``Upgrade`` would pass on). Each such request also wrote two
warnings to the log, one telling the operator to install a WebSocket
library. Now the octets after a head without content are read as the next
request, a request with content and ``Upgrade`` is refused ``400`` before
its content (which the parser cannot give), and nothing is logged for an
``Upgrade`` ignored.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_helpers import h11_answers, start_serve, stop, wait_answering

from pdi.archive import Archive

S = "library.example.us"
UPGRADE = b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    """``pdi serve`` of an archive with one text: its port and the text's name."""
    location = tmp_path_factory.mktemp("upgrade") / "a"
    with Archive.init(str(location)) as opened:
        opened.add_series(S)
        name = str(opened.add(S, b"Hello, world.\n", format="text"))
    process, port, _ = start_serve(location, "--workers", "1", "--replay-port", "0", drain=True)
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        yield port, name
    finally:
        stop(process)


def _ask(port: int, *pieces: bytes) -> bytes:
    """Send ``pieces``, a moment apart (each its own TCP segment), and read until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        for piece in pieces:
            conn.sendall(piece)
            time.sleep(0.2)
        answer = b""
        while piece := conn.recv(65536):
            answer += piece
    return answer


def test_a_request_after_one_asking_to_upgrade_is_answered(server: tuple[int, str]) -> None:
    port, name = server
    asked = f"GET /uri-res/N2R?{name} HTTP/1.1\r\nHost: a\r\n".encode() + UPGRADE + b"\r\n"
    last = b"GET /robots.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    for pieces in ((asked + asked + last,), (asked, asked + last)):  # pipelined in one segment, or not
        answers, left = h11_answers(_ask(port, *pieces), ["GET", "GET", "GET"])
        assert [status for status, _, _ in answers] == [200, 200, 200], answers
        assert answers[0][2] == answers[1][2] == b"Hello, world.\n" and b"User-agent" in answers[2][2]
        assert not left


@pytest.mark.parametrize("framing", [b"Content-Length: %d\r\n", b"Transfer-Encoding: chunked\r\n"])
def test_content_after_a_head_asking_to_upgrade_is_never_read_as_a_request(
        server: tuple[int, str], framing: bytes) -> None:
    port, _ = server
    inner = b"GET /robots.txt HTTP/1.1\r\nHost: a\r\n\r\n"
    content = inner if b"Length" in framing else b"%x\r\n%s\r\n0\r\n\r\n" % (len(inner), inner)
    head = (b"POST /api/annotation HTTP/1.1\r\nHost: a\r\nContent-Type: application/ld+json\r\n"
            + (framing % len(inner) if b"%d" in framing else framing) + UPGRADE + b"\r\n")
    raw = _ask(port, head, content)
    answers, left = h11_answers(raw, ["POST", "GET"])
    assert [status for status, _, _ in answers] == [400], raw[:600]
    _, fields, body = answers[0]
    assert fields["content-type"] == "application/problem+json" and fields["connection"] == "close"
    assert "Upgrade" in json.loads(body)["detail"]
    assert not left and b"User-agent" not in raw


def test_an_upgrade_ignored_is_not_logged(tmp_path: Path) -> None:
    location = tmp_path / "a"
    with Archive.init(str(location)) as opened:
        opened.add_series(S)
    process, port, _ = start_serve(location, "--workers", "1", "--replay-port", "0")
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        for _ in range(3):
            answers, _ = h11_answers(_ask(port, b"GET /robots.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\n"
                                                + UPGRADE + b"\r\n"), ["GET"])
            assert answers[0][0] == 200
    finally:
        process.terminate()
        assert process.stderr is not None
        logged = process.stderr.read()
        stop(process)
    assert "upgrade" not in logged.lower() and "WebSocket" not in logged, logged
