"""The staged close after a refusal (RFC 9112 §9.6) begins its linger once the answers are taken, not when written.

``pdi serve`` half-closes a refused connection and then reads and drops what the client still sends, for
:data:`~pdi.server.process.guarded.LINGER_SECONDS` and :data:`~pdi.server.process.guarded.LINGER_OCTETS` at
most, then aborts it (a reset). Counted from the refusal's write, a client reading slowly a large answer before
the refusal lost its tail and the refusal: the octets the server still held (its transport's buffer, its kernel's
send queue) were dropped by the reset (found in review, 2026-11-29). The linger now starts once the client has
taken every octet (the transport's buffer empty, and the kernel's send queue, ``SIOCOUTQ``, acknowledged), and the
wait for that is bounded as any answer's sending is: a client that takes nothing for ``send_seconds`` is dropped.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator

from server_helpers import in_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pdi.server.process.connection import answering_protocol
from pdi.server.process.guarded import LINGER_SECONDS
from pdi.server.process.run import listening_socket

#: The large answer before the refusal: more than the server's kernel may hold for a slow client (tcp_wmem's most,
#: 4 MiB on Linux by default) plus what that client reads in :data:`LINGER_SECONDS`.
BIG = 8 << 20
#: The slow client's pace: 64 KiB every 50 ms (1.3 MB/s), its receive buffer kept small.
PIECE, PAUSE = 64 << 10, 0.05


def _app() -> Starlette:
    async def big(request: Request) -> Response:
        return Response(bytes(range(256)) * (BIG // 256), media_type="application/octet-stream")

    app = Starlette(routes=[Route("/big", big)])
    app.state.cache = app.state.public = None
    return app


@contextlib.contextmanager
def _serving(send_seconds: float) -> Iterator[int]:
    """The app on pdi serve's own protocol (uvloop), with that send deadline: its port."""
    sock = listening_socket("127.0.0.1", 0)
    sock.listen()
    with in_thread(_app(), [sock], join=30, log_level="critical", loop="uvloop",
                   http=answering_protocol(10, None, send_seconds=send_seconds)):
        yield sock.getsockname()[1]


def _slow_client(port: int) -> socket.socket:
    conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 << 10)  # before connecting: the window it offers
    conn.settimeout(30)
    conn.connect(("127.0.0.1", port))
    return conn


#: A large answer's request, then one refused ``501`` (a method the server does not know): the refusal waits for
#: the answer before it, then is written after it.
ASKED = b"GET /big HTTP/1.1\r\nHost: h\r\n\r\nBREW /pot HTTP/1.1\r\nHost: h\r\n\r\n"


def test_a_client_reading_slowly_a_large_answer_before_a_refusal_reads_all_of_it_and_the_refusal() -> None:
    with _serving(send_seconds=60) as port, _slow_client(port) as conn:
        conn.sendall(ASKED)
        started = time.monotonic()
        answer = bytearray()
        with contextlib.suppress(ConnectionResetError):
            while piece := conn.recv(PIECE):
                answer += piece
                time.sleep(PAUSE)
        took = time.monotonic() - started
    assert took > 2 * LINGER_SECONDS, f"read in {took:.1f} s: not slow enough to tell"
    head, _, rest = bytes(answer).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and b"content-length: %d" % BIG in head.lower()
    assert len(rest) > BIG, f"{len(rest)} octets of the {BIG} of the answer came, then a reset"
    assert rest[:BIG] == bytes(range(256)) * (BIG // 256)
    refused_head, _, body = rest[BIG:].partition(b"\r\n\r\n")
    assert refused_head.startswith(b"HTTP/1.1 501 "), rest[BIG:BIG + 200]
    assert "RFC 9110 §9.1" in json.loads(body)["detail"]


def test_a_client_that_takes_nothing_of_the_answer_before_a_refusal_is_dropped_after_the_send_deadline() -> None:
    """The wait for the answers to be taken is bounded: a client that reads none of them is dropped once it took
    nothing for ``send_seconds`` (1 s here), and the server's side is gone (a reset) well before twice that and the
    linger."""
    with _serving(send_seconds=1) as port, _slow_client(port) as conn:
        conn.sendall(ASKED)
        started = time.monotonic()
        time.sleep(1 + LINGER_SECONDS + 2)  # taking nothing: the send deadline passes, and a linger after it
        received = 0
        reset = False
        try:
            while piece := conn.recv(1 << 20):
                received += len(piece)
        except ConnectionResetError:
            reset = True
        assert reset or received < BIG, "the whole answer was kept for a client that read none of it"
        assert time.monotonic() - started < 20
