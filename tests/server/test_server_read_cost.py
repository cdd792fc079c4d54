"""What a read costs ``pdi serve``'s request path grows with the read's octets, not with their square: many small
requests pipelined in one read (each answered from the cache at once, so no bound on the requests waiting stops
them), and a head fed one octet a read (slowloris).

Found in review (2026-11-29): a read was given to the parser one request at a time by cutting what followed each
off as a new ``bytes``, the rest of the read copied once a request: 100,000 pipelined ``GET`` in one read took 31 s
of CPU against 0.6 s before (a read of 256 KiB, some 4,500 such requests, copied 600 MB).

The protocol is driven in memory, its answers counted and dropped; CPU is ``time.process_time``, the least of a few
runs, and a growth ten times the requests is held under 25 times the CPU (linear gives 10, quadratic 100).
"""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import uvicorn
from starlette.applications import Starlette

from pdi.server.process.cache import ResponseCache
from pdi.server.process.connection import CachedAnswerProtocol, answering_protocol
from support.memory_transport import MemoryTransport

#: A name whose fact the cache holds: its N2L is a 302 written at once, while the parser reads on.
QUERY = b"urn:pdi://wire.example.us/2026/11/29/1.text.1"
TAG = '"' + "ab" * 32 + '"'
N2L = b"GET /uri-res/N2L?" + QUERY + b" HTTP/1.1\r\nHost: a\r\n\r\n"


class _Counting(MemoryTransport):
    """A transport counting the answers it is given (their status lines), keeping none."""

    def __init__(self) -> None:
        super().__init__()
        self.answers = 0

    def write(self, data: Any) -> None:
        self.answers += bytes(data).count(b"HTTP/1.1 302 ")


def _connection(loop: asyncio.AbstractEventLoop) -> tuple[CachedAnswerProtocol, _Counting]:
    cache = ResponseCache()
    cache.learn_told(QUERY, TAG, True)
    config = uvicorn.Config(Starlette(), log_level="warning", limit_concurrency=1000)
    config.load()
    state = uvicorn.server.ServerState()

    class Unanswered(answering_protocol(10, cache)):  # type: ignore[misc]
        """A request that goes to the app is taken (its content kept as it comes), and never answered."""

        def _start_asgi_task(self, cycle: Any, app: Any) -> None:
            pass

    protocol = Unanswered(config=config, server_state=state, app_state={}, _loop=loop)
    transport = _Counting()
    protocol.connection_made(transport)
    return protocol, transport


def _cpu(reads: Callable[[], list[bytes]], answers: int) -> float:
    """The least CPU of three connections each given ``reads``, each answering ``answers`` requests."""
    least = float("inf")
    for _ in range(3):
        loop = asyncio.new_event_loop()
        try:
            protocol, transport = _connection(loop)
            given = reads()
            started = time.process_time()
            for read in given:
                protocol.data_received(read)
            least = min(least, time.process_time() - started)
            assert (transport.answers, protocol.refusal, transport.closed) == (answers, None, False)
            protocol.connection_lost(None)
        finally:
            loop.close()
    return least


def test_many_requests_in_one_read_cost_linear_time() -> None:
    small = _cpu(lambda: [N2L * 5_000], 5_000)
    large = _cpu(lambda: [N2L * 50_000], 50_000)
    assert large < 25 * max(small, 0.001), (small, large)


def test_many_requests_in_one_read_are_read_in_bounded_memory() -> None:
    """What the read holds beyond itself while it is read is a small part of it (no copy of its rest a request)."""
    loop = asyncio.new_event_loop()
    try:
        protocol, transport = _connection(loop)
        read = N2L * 20_000
        tracemalloc.start()
        try:
            protocol.data_received(read)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert transport.answers == 20_000
        assert peak < len(read) // 4, (peak, len(read))
        protocol.connection_lost(None)
    finally:
        loop.close()


def test_a_head_one_octet_a_read_costs_linear_time() -> None:
    """Slowloris: a head within its bound fed one octet a read, then answered (the cost of a read is the same
    however many octets of the head came before it)."""

    def head(fields: int) -> list[bytes]:
        whole = N2L[:-2] + b"".join(b"X-%d: %s\r\n" % (i, b"v" * 20) for i in range(fields)) + b"\r\n"
        return [whole[i:i + 1] for i in range(len(whole))]

    # 180 fields, 25 octets each (under 200 fields and 64 KiB), against 18: 4,500 reads against 450 more or less
    small = _cpu(lambda: head(18), 1)
    large = _cpu(lambda: head(180), 1)
    assert large < 25 * max(small, 0.0005), (small, large)


def _chunked(data: bytes) -> Callable[[], list[bytes]]:
    """A chunked POST's head, then in one read its content: ``data`` as one chunk."""
    head = b"POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
    return lambda: [head, b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data)]


def test_chunked_content_that_looks_like_its_end_costs_linear_time() -> None:
    """Chunked content is given to the parser in parts, each ending where the content may end (the last chunk's line
    or a trailer field, then an empty line: ``x CRLF CRLF`` looks like one), so that what follows its end is the
    next request's: many such in a chunk's octets cost a call of the parser each, linear, and within a few times
    what as many one-octet chunks cost (each three of the parser's callbacks)."""
    pattern = b"x\r\n\r\n"
    small = _cpu(_chunked(pattern * 5_000), 0)
    large = _cpu(_chunked(pattern * 50_000), 0)
    assert large < 25 * max(small, 0.001), (small, large)
    head = b"POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
    tiny = _cpu(lambda: [head, b"1\r\nx\r\n" * 50_000 + b"0\r\n\r\n"], 0)  # 300,000 octets, against 250,000
    assert large < 4 * tiny, (large, tiny)
    # and an empty line after an empty line is no end: a run of them costs one search
    runs = _cpu(_chunked(b"\r\n" * 125_000), 0)
    assert runs < tiny, (runs, tiny)
