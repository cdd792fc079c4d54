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
(:class:`pdi.server.process.guarded.GuardedHttpToolsProtocol`) closes a
connection whose request line and headers take longer than
:data:`DEFAULT_HEADER_SECONDS` (slowloris), and refuses a head larger than
:data:`MAX_TARGET_OCTETS`, :data:`MAX_HEAD_FIELDS` and :data:`MAX_HEAD_OCTETS`
allow, before it is kept in memory, and more than :data:`MAX_PIPELINED` requests
pipelined behind the one being answered, and drops one that takes none of an answer's octets for
:data:`DEFAULT_SEND_SECONDS` while they wait (a client that asks and never reads); uvicorn's own
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

import collections
import contextvars
import ipaddress
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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
#: How long a client may leave an answer's octets untaken: past this with none of them taken (the connection's
#: buffer full and not shrinking, or its socket not writable for ``sendfile``), the connection is dropped and what
#: it held freed (nginx's ``send_timeout``, 60 s, "between two successive write operations").
DEFAULT_SEND_SECONDS = 60.0
#: The longest request target taken (a longer one is ``414``): a name with an encapsulated URL and its fragment
#: fit many times over.
MAX_TARGET_OCTETS = 64 * 1024 - 1  # httptools' own bound on a URL it parses
#: The most header fields a request may have, and the most octets its head may hold beyond its target (more is
#: ``431``, RFC 6585 §5): a browser sends twenty fields and a few kilobytes.
MAX_HEAD_FIELDS = 200
MAX_HEAD_OCTETS = 64 * 1024
#: Connections and tasks at once beyond which uvicorn answers 503.
DEFAULT_MAX_CONNECTIONS = 512
#: The most requests pipelined on one connection (RFC 9112 §9.3.2) that wait behind the one being answered, each
#: with its head kept: the next is ``503`` and the connection closed after their answers.
MAX_PIPELINED = 16
#: How long a request's body may take, before the time its octets earn (Apache mod_reqtimeout's body=20).
DEFAULT_BODY_SECONDS = 20.0
#: Octets of a body that earn it one second more (mod_reqtimeout's MinRate=500).
DEFAULT_BODY_RATE = 500
#: The captures (documents) of a URL, or versions of a document, one Memento TimeMap page holds the mementos of
#: (:mod:`pdi.server.protocol.memento_oaipmh`; RFC 7089 leaves a page's size to the server).
TIMEMAP_PAGE = 1000


#: An answer of this many octets or more, made in memory by expensive work, counts against the worker's
#: :class:`AnswerBudget` until it is sent, and is sent by :class:`PacedAnswers` a :data:`PIECE` at a time.
PACED_FROM = 1 << 20
#: The octets of one piece of a paced answer: written once the client has taken the piece before it.
PIECE = 1 << 18
#: The octets of answers made in memory that a worker sends at once (``pdi serve --answer-mib``).
DEFAULT_ANSWER_MIB = 256


class AnswerBudget:
    """The octets of large answers in hand (:data:`PACED_FROM` or more) a worker may hold while their clients take
    them, given in the order asked for. An answer larger than the whole budget waits for all of it. Used from
    the event loop alone (no lock); each wait is bounded."""

    def __init__(self, octets: int) -> None:
        if octets < 1:
            raise ValueError("an answer budget is at least one octet")
        self.octets = octets
        self.free = octets
        #: What one client may hold before its next large answer is refused at once (a quarter, as of
        #: connections): one client that reads nothing cannot keep everyone else's large answers waiting, nor the
        #: places of its own that wait for room.
        self.share = max(PACED_FROM, octets // 4)
        #: What each client holds (an IPv4 address or an IPv6 /64: :func:`client_of`).
        self.held_by: collections.Counter[str] = collections.Counter()
        self._waiting: collections.deque[tuple[int, anyio.Event]] = collections.deque()

    async def take(self, octets: int, seconds: float, client: str | None = None) -> int:
        """Take ``octets`` (at most the whole budget) once free, within ``seconds``, for ``client``: what was
        taken, for :meth:`give`; :class:`Busy` when it did not come free in time, or at once when the client
        holds its :attr:`share` already."""
        if client is not None and self.held_by[client] >= self.share:  # refused at once: the place it holds is
            # freed for others (a client that reads none of its answers cannot keep their places waiting)
            raise Busy(seconds, f"this client holds {self.held_by[client] >> 20} MiB of large answers it has not"
                                " yet taken, its share of this server's room for them: take them (or close those"
                                " connections) and ask again")
        wanted = await self._take(min(octets, self.octets), seconds)
        if client is not None:
            self.held_by[client] += wanted
        return wanted

    async def _take(self, wanted: int, seconds: float) -> int:
        if not self._waiting and self.free >= wanted:
            self.free -= wanted
            return wanted
        event = anyio.Event()
        entry = (wanted, event)
        self._waiting.append(entry)
        try:
            with anyio.fail_after(seconds):
                await event.wait()
        except BaseException as exc:
            if event.is_set():  # given as the wait ended: it is ours, to give back
                if isinstance(exc, TimeoutError):
                    return wanted
                self.give(wanted)
            else:
                self._waiting.remove(entry)
                self._wake()  # the answers behind it may fit now
            if isinstance(exc, TimeoutError):
                raise Busy(seconds) from exc
            raise
        return wanted

    def give(self, octets: int, client: str | None = None) -> None:
        """Give back what :meth:`take` took for ``client``, once its answer is sent (or its client gone)."""
        if client is not None:
            left = self.held_by[client] - octets
            if left > 0:
                self.held_by[client] = left
            else:
                self.held_by.pop(client, None)
        self.free += octets
        self._wake()

    def _wake(self) -> None:
        while self._waiting and self.free >= self._waiting[0][0]:
            wanted, event = self._waiting.popleft()
            self.free -= wanted
            event.set()


@dataclass
class _Request:
    """What :class:`PacedAnswers` knows of the request being answered, for :meth:`WorkLimits.run`: its client,
    whether it is a ``HEAD`` (whose answer has no body to hold room for), and the room its answers hold."""

    client: str | None
    head: bool
    held: list[tuple[AnswerBudget, int]] = field(default_factory=list)

    def give_back(self) -> None:
        while self.held:
            budget, octets = self.held.pop()
            budget.give(octets, self.client)


#: The request being answered (:class:`PacedAnswers` sets it for each).
_REQUEST: contextvars.ContextVar[_Request | None] = contextvars.ContextVar("pdi_request_answered", default=None)


def client_of(address: str) -> str:
    """The client an address is counted as: an IPv4 address itself, an IPv6 address by its /64 (one host's), an
    IPv4-mapped IPv6 address (``::ffff:192.0.2.7``, an IPv4 client of a dual-stack socket: RFC 4291 §2.5.5.2) as
    the IPv4 address it maps."""
    if ":" not in address:
        return address
    try:
        bare = ipaddress.IPv6Address(address.split("%", 1)[0])
    except ValueError:
        return address
    mapped = bare.ipv4_mapped
    if mapped is not None:
        return str(mapped)
    return str(ipaddress.IPv6Network((bare, 64), strict=False))


def answer_octets(result: object, depth: int = 0) -> int:
    """The octets an expensive work's result holds of its answer: a text's or bytes' length, a response's or
    a whole N2R answer's body (:class:`~pdi.server.process.cache.Entity`), the texts of a JSON answer's values
    (four levels deep: ``/api/rfc5147``'s ``text``); 0 for anything else."""
    if isinstance(result, (bytes, bytearray, str)):
        return len(result)
    body = getattr(result, "body", None)
    if isinstance(body, (bytes, bytearray, memoryview)):
        return len(body)
    if depth < 4 and isinstance(result, Mapping):
        return sum(answer_octets(value, depth + 1) for value in result.values())
    if depth < 4 and isinstance(result, (list, tuple)):
        return sum(answer_octets(value, depth + 1) for value in result)
    return 0


class WorkLimits:
    """A bounded pool for expensive work, with a bounded wait for a place in it, and the worker's
    :class:`AnswerBudget` for the large answers it makes."""

    def __init__(self, evaluations: int = DEFAULT_EVALUATIONS, queue_seconds: float = DEFAULT_QUEUE_SECONDS,
                 answer_octets: int = DEFAULT_ANSWER_MIB << 20) -> None:
        if evaluations < 1:
            raise ValueError("evaluations must be at least 1")
        self.evaluations = evaluations
        self.queue_seconds = queue_seconds
        self.answers = AnswerBudget(answer_octets)
        self._places: anyio.Semaphore | None = None
        self._threads: anyio.CapacityLimiter | None = None

    def _ready(self) -> tuple[anyio.Semaphore, anyio.CapacityLimiter]:
        # made on first use, inside the server's event loop
        if self._places is None or self._threads is None:
            self._places = anyio.Semaphore(self.evaluations)
            self._threads = anyio.CapacityLimiter(self.evaluations)
        return self._places, self._threads

    async def run(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` on the expensive pool, once a place is free; :class:`Busy` after ``queue_seconds``.

        A result that holds an answer of :data:`PACED_FROM` octets or more (:func:`answer_octets`) of a ``GET``
        keeps the place until as many octets of the :class:`AnswerBudget` are free (:class:`Busy` after
        ``queue_seconds``, or at once when its client holds its share already), which the request holds until
        its answer is sent (:class:`PacedAnswers`). So the large answers a worker holds are the budget's, and at
        most one a place more waiting for it, however slowly their clients read.
        """
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
            result = await anyio.to_thread.run_sync(work, *args, limiter=threads)
            await self.hold(answer_octets(result))
            return result
        finally:
            places.release()

    async def hold(self, octets: int) -> None:
        """The current request's answer holds ``octets`` in memory: when they are :data:`PACED_FROM` or more, room
        for them in the :class:`AnswerBudget`, held until the answer is sent (:class:`PacedAnswers`); waited for
        (:class:`Busy` after ``queue_seconds``, or at once when the client holds its share). Nothing outside a
        request (no :class:`PacedAnswers`), or for a ``HEAD`` (no body). :meth:`run` says it of each result; a
        handler says it of an answer it holds otherwise (a replayed page's file, kept or made)."""
        request = _REQUEST.get()
        if request is None or request.head or octets < PACED_FROM:
            return
        # a request's answer is its last large result (an earlier one went into it): it never waits for room it
        # holds itself
        request.give_back()
        taken = await self.answers.take(octets, self.queue_seconds, request.client)
        request.held.append((self.answers, taken))


class PacedAnswers(HTTPMiddleware):
    """ASGI middleware (the outermost): a body message of :data:`PACED_FROM` octets or more goes to the server a
    :data:`PIECE` at a time, each once the client has taken enough of the ones before (uvicorn's ``send`` waits
    while the connection's buffer is past its high-water mark), so the connection never holds a copy of it;
    and the answer budget a request's expensive work took (:meth:`WorkLimits.run`) is given back when its
    answer has been sent, or has failed, or its client has gone (``pdi serve`` drops a client that takes
    none of it for ``--send-timeout`` seconds)."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        peer = scope.get("client")
        request = _Request(client_of(peer[0]) if peer else None, scope.get("method") == "HEAD")
        token = _REQUEST.set(request)

        async def paced(message: Message) -> None:
            body = message.get("body", b"") if message["type"] == "http.response.body" else b""
            if len(body) < PACED_FROM:
                await send(message)
                return
            view = memoryview(body)
            for start in range(0, len(view), PIECE):
                await send({"type": "http.response.body", "body": view[start:start + PIECE], "more_body": True})
            if not message.get("more_body", False):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

        try:
            await self.app(scope, receive, paced)
        finally:
            _REQUEST.reset(token)
            request.give_back()


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

