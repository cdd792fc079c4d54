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

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_helpers import h11_answers, start_serve, stop, wait_answering

from pdi.archive import Archive
from pdi.server.process.limits import MAX_PIPELINED

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


def _peak_kib(pid: int) -> int:
    """The peak resident set (``VmHWM``, KiB) of the process ``pid`` and of its children (the worker)."""
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    peaks = []
    for one in pids:
        status = Path(f"/proc/{one}/status").read_text()
        peaks.append(int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))))
    return max(peaks)


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
    before = _peak_kib(pid)
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
        after = _peak_kib(pid)
    finally:
        for conn in held:
            conn.close()
    assert after - before < 30 * 1024, (before, after)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:  # and it goes on answering
        conn.sendall(b"GET /robots.txt HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        assert conn.recv(100).startswith(b"HTTP/1.1 200 ")
