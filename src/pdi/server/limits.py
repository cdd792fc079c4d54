"""What keeps a stranger's requests from starving everyone else's (the resolver's limits).

Two kinds of work reach the resolver. Most requests are cheap: a catalog
look-up (``N2L``, ``N2Ns``, ``/api/ls``, ``/api/series``, ``/api/meta``)
answers in a millisecond. Some are not: ``N2R``, ``N2C``, ``/api/resolve``,
``/api/cite`` and the viewer read and hash a whole representation and may
run an evaluator over it (an HTML parse for ``#elt=``, an image decode for
``#crop=``), which can take seconds and hundreds of megabytes.

:class:`WorkLimits` runs the expensive work on a small pool of its own
(``evaluations`` threads, two by default: with the number of worker
processes, this is the memory bound), and a
request waits for a place without holding a thread. A request that waits
longer than ``queue_seconds`` is answered ``503 Service Unavailable`` with
``Retry-After``. Cheap requests never wait behind expensive ones: they run
on Starlette's own thread pool.

:class:`GuardedHttpToolsProtocol` is uvicorn's HTTP/1.1 protocol (on the
``httptools`` parser, about three times as fast as ``h11`` for small
answers) with a deadline for each request's line and headers
(``header_seconds``): a client that opens a connection and sends its request slowly, or not at all, is
disconnected, so half-open connections cannot pile up (slowloris). uvicorn's
own ``limit_concurrency`` caps the connections and tasks at once beyond
which it answers ``503``; ``timeout_keep_alive`` closes idle connections.
It also offers each request :class:`~pdi.server.zerocopy.ZeroCopy`, with which
a response sends a verified file's octets with ``sendfile``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from pdi.server.zerocopy import EXTENSION, ZeroCopy

T = TypeVar("T")

#: Expensive evaluations at once in one worker process (each may hold a whole representation in memory).
DEFAULT_EVALUATIONS = 2
#: How long an expensive request may wait for a place before it is answered 503.
DEFAULT_QUEUE_SECONDS = 30.0
#: How long a client may take to send a request's line and headers.
DEFAULT_HEADER_SECONDS = 10.0
#: Connections and tasks at once beyond which uvicorn answers 503.
DEFAULT_MAX_CONNECTIONS = 512
#: The captures (documents) of a URL, or versions of a document, one Memento TimeMap page holds the mementos of
#: (:mod:`pdi.server.interop`; RFC 7089 leaves a page's size to the server).
TIMEMAP_PAGE = 1000


class Busy(Exception):
    """No place for an expensive request came free in time (the server answers 503)."""

    def __init__(self, waited: float) -> None:
        super().__init__(f"the resolver is busy: no place for this request came free within {waited:g} s")
        self.waited = waited


class WorkLimits:
    """A bounded pool for expensive work, with a bounded wait for a place in it."""

    def __init__(self, evaluations: int = DEFAULT_EVALUATIONS, queue_seconds: float = DEFAULT_QUEUE_SECONDS) -> None:
        if evaluations < 1:
            raise ValueError("evaluations must be at least 1")
        self.evaluations = evaluations
        self.queue_seconds = queue_seconds
        self._places: anyio.Semaphore | None = None
        self._threads: anyio.CapacityLimiter | None = None

    def _ready(self) -> tuple[anyio.Semaphore, anyio.CapacityLimiter]:
        # made on first use, inside the server's event loop
        if self._places is None or self._threads is None:
            self._places = anyio.Semaphore(self.evaluations)
            self._threads = anyio.CapacityLimiter(self.evaluations)
        return self._places, self._threads

    async def run(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` on the expensive pool, once a place is free; :class:`Busy` after ``queue_seconds``."""
        places, threads = self._ready()
        try:
            with anyio.fail_after(self.queue_seconds):
                await places.acquire()
        except TimeoutError as exc:
            raise Busy(self.queue_seconds) from exc
        try:
            return await anyio.to_thread.run_sync(work, *args, limiter=threads)
        finally:
            places.release()


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection whose request line and headers are late.

    The deadline starts when the connection opens and again after each
    response (for the next request on a kept-alive connection, unless one
    is already queued behind it); data trickling in does not extend it, only
    a complete request head ends it.
    """

    header_seconds: float = DEFAULT_HEADER_SECONDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_deadline: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        self._disarm()
        self._head_deadline = self.loop.call_later(self.header_seconds, self._late)

    def _disarm(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _late(self) -> None:
        self._head_deadline = None  # armed only while no request head is complete
        if not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()  # the request's head is in
        super().on_headers_complete()
        cycle = self.cycle
        if cycle is not None and cycle.scope is self.scope and not cycle.response_started:
            # the app may send a file's octets with sendfile on this connection (pdi.server.zerocopy)
            extensions: dict[str, Any] = self.scope.setdefault("extensions", {})
            extensions[EXTENSION] = ZeroCopy(self.loop, cycle)

    def on_response_complete(self) -> None:
        queued = bool(self.pipeline)  # a pipelined request whose head is in: it starts now
        super().on_response_complete()
        if not queued and not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def guarded_protocol(header_seconds: float) -> type[GuardedHttpToolsProtocol]:
    """:class:`GuardedHttpToolsProtocol` with its own request-head deadline."""
    return type("GuardedHttpToolsProtocol", (GuardedHttpToolsProtocol,), {"header_seconds": header_seconds})
