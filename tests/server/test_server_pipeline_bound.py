"""Requests pipelined on one connection (RFC 9112 §9.3.2) wait for their answers within a bound.

Found by a stranger's raw requests (2026-11-27): uvicorn queues every
pipelined request whose head it has parsed (its scope, its fields, its
request cycle: some 2.6 KB each) and reads on each time an answer is done,
so one connection sending 4 MB of ``GET /robots.txt`` and reading none of
the answers made a worker hold 110,000 requests, 290 MB, and three such
connections 550 MB. Now at most :data:`~pdi.server.process.limits.MAX_PIPELINED`
requests wait behind the one being answered; the next is refused ``503``
(an RFC 9457 problem, after the answers before it, as a refused head is),
and the connection is closed: a client that pipelines asks the rest again
on another connection (RFC 9112 §9.3.2: it "SHOULD retry unanswered
requests"). The server's peak memory is read from the kernel (``VmHWM``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from server_helpers import h11_answers, in_thread, start_serve, stop, wait_answering
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from pdi.archive import Archive
from pdi.server.process.connection import answering_protocol
from pdi.server.process.guarded import LINGER_OCTETS
from pdi.server.process.limits import MAX_PIPELINED
from pdi.server.process.run import listening_socket
from support.procnet import peak_kib

S = "library.example.us"
ASKED = b"GET /robots.txt HTTP/1.1\r\nHost: a\r\n\r\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int]]:
    """``pdi serve`` of an empty archive, one worker: its process id and port."""
    location = tmp_path_factory.mktemp("pipeline") / "a"
    with Archive.init(str(location)) as opened:
        opened.add_series(S)
    process, port, _ = start_serve(location, "--workers", "1", "--replay-port", "0", drain=True)
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        yield process.pid, port
    finally:
        stop(process)


def test_requests_past_the_bound_are_refused_after_the_answers_before_them(server: tuple[int, int]) -> None:
    _, port = server
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(ASKED * 40)  # one segment: all of it parsed at once, while the first is being answered
        raw = b""
        while piece := conn.recv(65536):
            raw += piece
    answers, left = h11_answers(raw, ["GET"] * 40)
    statuses = [status for status, _, _ in answers]
    assert statuses == [200] * (MAX_PIPELINED + 1) + [503], statuses
    _, fields, body = answers[-1]
    assert fields["content-type"] == "application/problem+json" and fields["connection"] == "close"
    assert f"more than {MAX_PIPELINED} requests" in json.loads(body)["detail"]
    assert not left


def test_a_connection_pipelining_megabytes_and_reading_nothing_holds_little(server: tuple[int, int]) -> None:
    pid, port = server
    before = peak_kib(pid)
    held = []
    try:
        for _ in range(3):
            conn = socket.create_connection(("127.0.0.1", port), timeout=30)
            held.append(conn)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # reads nothing, and holds little
            conn.setblocking(False)
            sent = 0
            try:
                while sent < 4 << 20:
                    sent += conn.send(ASKED * 2000)
            except BlockingIOError:
                pass  # the server reads no more: what it was sent is in the kernel's buffers
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server refused and closed
        time.sleep(3)  # what the server would queue is queued by then (before: 300 MB more within the first second)
        after = peak_kib(pid)
    finally:
        for conn in held:
            conn.close()
    assert after - before < 30 * 1024, (before, after)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:  # and it goes on answering
        conn.sendall(b"GET /robots.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        assert conn.recv(100).startswith(b"HTTP/1.1 200 ")


def test_after_the_refusal_nothing_more_is_read_while_the_answers_before_it_are_written() -> None:
    """Found when ``test_requests_pipelined_without_reading_their_answers_hold_bounded_memory`` (of
    ``test_server_smuggling.py``) failed once under load (2026-11-29): the refused request paused reading, but the
    first answer done after it resumed it (as it does for the queue), so while the requests before the refusal were
    answered everything the client sent was read and dropped, unbounded (135 MB in the 0.85 s sixteen answers of
    50 ms took). Now reading stays paused from the refusal on: what the client sends after it stays in the kernel's
    buffers until the ``503`` is written; then the connection is closed in stages (RFC 9112 §9.6), what was sent
    read and dropped, :data:`~pdi.server.process.guarded.LINGER_OCTETS` at most."""
    gate = threading.Event()
    asked: list[str] = []

    async def held(request: Request) -> Response:
        asked.append(request.url.path)
        await asyncio.to_thread(gate.wait, 30)
        return PlainTextResponse("ok")

    app = Starlette(routes=[Route("/held", held)])
    read_after: list[int] = []
    lingered: list[int] = []

    class Counting(answering_protocol(10, None)):  # type: ignore[misc, valid-type]
        """The protocol, counting the octets it is given once it has refused a request: before its refusal is
        written, and after (the staged close's)."""

        def data_received(self, data: bytes) -> None:
            if self.refusal is not None:
                (read_after if self._lingered is None else lingered).append(len(data))
            super().data_received(data)

    sock = listening_socket("127.0.0.1", 0)
    sock.listen()
    with in_thread(app, [sock], join=30, log_level="critical", loop="uvloop", http=Counting), \
            socket.create_connection(("127.0.0.1", sock.getsockname()[1]), timeout=30) as conn:
        # one segment: the first answered (held), MAX_PIPELINED queued behind it, the last refused
        conn.sendall(b"GET /held HTTP/1.1\r\nHost: a\r\n\r\n" * (MAX_PIPELINED + 2))
        conn.setblocking(False)
        filler = ASKED * 2000
        sent = 0
        with contextlib.suppress(BlockingIOError):
            while True:  # until the kernel's buffers are full: the server reads none of it
                sent += conn.send(filler)
        assert sent > 0
        gate.set()  # the answers before the refusal are written: the filler is still not read
        conn.settimeout(30)
        raw = b""
        with contextlib.suppress(ConnectionResetError):  # closed with the filler unread: a reset may come first
            while piece := conn.recv(65536):
                raw += piece
    assert asked == ["/held"] * (MAX_PIPELINED + 1)
    assert sum(read_after) == 0, f"{sum(read_after)} octets of the {sent} sent after the refusal were read"
    assert sum(lingered) - max(lingered, default=0) <= LINGER_OCTETS
