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

``pdi serve``'s HTTP/1.1 protocol
(:class:`pdi.server.process.connection.GuardedHttpToolsProtocol`) closes a
connection whose request line and headers take longer than
:data:`DEFAULT_HEADER_SECONDS` (slowloris), and refuses a head larger than
:data:`MAX_TARGET_OCTETS`, :data:`MAX_HEAD_FIELDS` and :data:`MAX_HEAD_OCTETS`
allow, before it is kept in memory; uvicorn's own
``limit_concurrency`` caps the connections and tasks at once beyond which it
answers ``503``; ``timeout_keep_alive`` closes idle connections.

:class:`BodyDeadline` bounds the time a request's *body* may take, for every
request the app reads one of, whoever sends it: a bearer token's holder (whose
upload the write API reads, where a stranger's is refused ``401`` before its
body is read, and the connection then closed by the head deadline) trickling
octets, or stopping, is cut off like anyone else. The rule is Apache
``mod_reqtimeout``'s (``RequestReadTimeout body=20,MinRate=500``): the body
may take ``seconds``, and one second more for every ``rate`` octets that
arrive, so a large upload at a fair speed always fits and a slow one does
not. Only the time the app spends waiting for the client counts. Past it,
the app is told the client went away (so a deposit stores nothing) and the
answer is ``408 Request Timeout`` with ``Connection: close`` (RFC 9110
§15.5.9).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.to_thread
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pdi.server.http.middleware import HTTPMiddleware
from pdi.server.http.problems import Busy, problem

if TYPE_CHECKING:
    from pdi.archive import Archive

T = TypeVar("T")

#: Expensive evaluations at once in one worker process (each may hold a whole representation in memory).
DEFAULT_EVALUATIONS = 2
#: How long an expensive request may wait for a place before it is answered 503.
DEFAULT_QUEUE_SECONDS = 30.0
#: How long a client may take to send a request's line and headers.
DEFAULT_HEADER_SECONDS = 10.0
#: The longest request target taken (a longer one is ``414``): a name with an encapsulated URL and its fragment
#: fit many times over.
MAX_TARGET_OCTETS = 64 * 1024 - 1  # httptools' own bound on a URL it parses
#: The most header fields a request may have, and the most octets its head may hold beyond its target (more is
#: ``431``, RFC 6585 §5): a browser sends twenty fields and a few kilobytes.
MAX_HEAD_FIELDS = 200
MAX_HEAD_OCTETS = 64 * 1024
#: Connections and tasks at once beyond which uvicorn answers 503.
DEFAULT_MAX_CONNECTIONS = 512
#: How long a request's body may take, before the time its octets earn (Apache mod_reqtimeout's body=20).
DEFAULT_BODY_SECONDS = 20.0
#: Octets of a body that earn it one second more (mod_reqtimeout's MinRate=500).
DEFAULT_BODY_RATE = 500
#: The captures (documents) of a URL, or versions of a document, one Memento TimeMap page holds the mementos of
#: (:mod:`pdi.server.protocol.memento_oaipmh`; RFC 7089 leaves a page's size to the server).
TIMEMAP_PAGE = 1000


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
            places.acquire_nowait()  # a place free: taken at once, without arming a deadline (a cancel scope)
        except anyio.WouldBlock:
            try:
                with anyio.fail_after(self.queue_seconds):
                    await places.acquire()
            except TimeoutError as exc:
                raise Busy(self.queue_seconds) from exc
        try:
            return await anyio.to_thread.run_sync(work, *args, limiter=threads)
        finally:
            places.release()


class ArchiveHandlers:
    """Route handlers over one archive, whose expensive work runs in the resolver's :class:`WorkLimits`."""

    def __init__(self, archive: Archive, work: WorkLimits) -> None:
        self.archive = archive
        self.work = work


class BodyDeadline(HTTPMiddleware):
    """ASGI middleware: a request's body is cut off when it takes longer than ``seconds`` plus one second for
    every ``rate`` octets received; the answer is then ``408`` (see the module's docstring)."""

    def __init__(self, app: ASGIApp, seconds: float = DEFAULT_BODY_SECONDS, rate: int = DEFAULT_BODY_RATE) -> None:
        super().__init__(app)
        self.seconds = seconds
        self.rate = rate

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        waited = 0.0  # seconds spent waiting for the client's octets
        received = 0
        whole = False  # the body has come to its end: no deadline any more
        late = False
        started = False

        async def timed_receive() -> Message:
            nonlocal waited, received, whole, late
            if late:
                return {"type": "http.disconnect"}
            if whole or started:
                return await receive()
            left = self.seconds + received / self.rate - waited
            begun = time.monotonic()
            with anyio.move_on_after(max(left, 0)):
                message = await receive()
                waited += time.monotonic() - begun
                if message["type"] == "http.request":
                    received += len(message.get("body", b""))
                    whole = not message.get("more_body", False)
                return message
            waited += time.monotonic() - begun
            late = True
            return {"type": "http.disconnect"}  # the app stops reading: nothing it was storing is kept

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if late and not started:
                return  # what the app answers to a client it thinks gone: the 408 is sent instead
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, timed_receive, guarded_send)
        except Exception:
            if not late or started:
                raise
        if late and not started:
            detail = (f"the request's body did not arrive in time: {received} octets in {waited:.1f} s"
                      f" (this server waits {self.seconds:g} s and one second more for every {self.rate} octets)")
            answer = problem(408, "request timeout", detail)
            answer.headers["Connection"] = "close"
            await answer(scope, receive, send)

