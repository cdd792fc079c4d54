"""A ``pdi serve`` worker answering 200,000 first askings holds no more memory than its bounds (issue 24).

Each ``N2R`` here is a first asking: 1,200 names asked in turn, through a
cache of whole answers of 1 MiB (``--cache-mib 1``: some 350 of these
answers), so the least recently used is always the one asked next and each
answer is made from the catalog and kept, pushing another out. A new
connection every 50 requests, as many short-lived clients make. What a
worker keeps is bounded by ``--cache-mib`` of answers and as many of facts
(``docs/reference/resolver.md``, *Workers, memory and limits*): once both are
full (long before the 20,000th request), its peak resident set (``VmHWM``,
read from the kernel) may not grow with the number of requests answered,
whatever the garbage collector leaves for later.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_helpers import start_serve, stop, wait_answering

from pdi.archive import Archive
from pdi.archive.content import Content

S = "memory.example.us"
#: Names asked in turn: about three times the answers 1 MiB holds.
NAMES = 1_200
#: Requests a connection carries before the client opens another.
PER_CONNECTION = 50
#: MiB the peak may grow by from the 20,000th request to the 200,000th: the allocator's slack, nothing that
#: grows with the requests (each answer is some 2 KiB of memory: 180,000 answers kept would be 350 MiB).
SLACK_MIB = 16


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int, list[bytes]]]:
    """``pdi serve --workers 1 --cache-mib 1`` of :data:`NAMES` small texts: its process id, port and names."""
    location = tmp_path_factory.mktemp("memory") / "a"
    with Archive.init(str(location)) as opened:
        opened.add_series(S)
        made = opened.deposit_batch(S, [([Content(b"text %d of the memory test\n" % i * 8, "text")], None)
                                        for i in range(NAMES)])
        names = [str(d.names[0]).encode() for d in made]
    process, port, _ = start_serve(location, "--workers", "1", "--cache-mib", "1", "--replay-port", "0",
                                   drain=True)
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        yield process.pid, port, names
    finally:
        stop(process)


def _peak_mib(pid: int) -> float:
    """The peak resident set (``VmHWM``) of the process ``pid``, in MiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024


def _ask(port: int, names: list[bytes], start: int, count: int) -> dict[int, int]:
    """``count`` ``N2R`` requests of ``names`` in turn from the ``start``-th, :data:`PER_CONNECTION` a connection;
    how many answers of each status."""
    statuses: dict[int, int] = {}
    asked = start
    while asked < start + count:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            buffered = bytearray()
            for _ in range(min(PER_CONNECTION, start + count - asked)):
                conn.sendall(b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % names[asked % len(names)])
                asked += 1
                status = _answer(conn, buffered)
                statuses[status] = statuses.get(status, 0) + 1
    return statuses


def _answer(conn: socket.socket, buffered: bytearray) -> int:
    """The status of the next answer read from ``conn`` (its body, of its ``Content-Length``, read past)."""
    while (end := buffered.find(b"\r\n\r\n")) < 0:
        piece = conn.recv(65536)
        assert piece, "the server closed the connection"
        buffered += piece
    head = bytes(buffered[:end]).lower()
    length = int(head.split(b"\r\ncontent-length: ", 1)[1].split(b"\r\n", 1)[0])
    while len(buffered) < end + 4 + length:
        piece = conn.recv(65536)
        assert piece, "the server closed the connection"
        buffered += piece
    del buffered[: end + 4 + length]
    return int(head[9:12])


@pytest.mark.slow  # some minutes of requests: started first in a parallel run
def test_a_worker_answering_200000_first_askings_keeps_its_memory_bounded(served: tuple[int, int, list[bytes]]) -> None:
    pid, port, names = served
    assert _ask(port, names, 0, 20_000) == {200: 20_000}
    settled = _peak_mib(pid)
    assert _ask(port, names, 20_000, 180_000) == {200: 180_000}
    peak = _peak_mib(pid)
    assert peak - settled < SLACK_MIB, f"the worker's peak grew from {settled:.1f} MiB to {peak:.1f} MiB"
