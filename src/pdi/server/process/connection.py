"""``pdi serve``'s HTTP/1.1 connections: pdi's own protocol with a head deadline, cached answers and sendfile.

uvicorn takes the class of its HTTP protocol as ``uvicorn.Config(http=...)``
(a documented option that names a class as well as ``"h11"`` or
``"httptools"``); :func:`answering_protocol` makes the one ``pdi serve``
passes, built on :class:`pdi.server.process.http11.HttpProtocol`, pdi's own
HTTP/1.1 protocol on ``asyncio.Protocol``, ``httptools``' parser and ASGI 3
(no part of uvicorn's protocols is used: what of uvicorn that module relies on
is its :data:`~pdi.server.process.http11.UVICORN_CONTRACT`). Everything else
of the resolver's process uses uvicorn's public API only (``uvicorn.Config``,
``uvicorn.Server``, and ASGI middleware:
:class:`pdi.server.process.cache.CachedAnswers`,
:class:`pdi.server.process.limits.BodyDeadline`,
:class:`pdi.server.process.limits.PacedAnswers`). Five things are done in the
protocol, each for a measured reason that no ASGI hook serves:

* **The request-head deadline** (:class:`~pdi.server.process.guarded.GuardedHttpToolsProtocol`): a
  client that opens a connection and sends its request line and headers
  slowly, or not at all, is disconnected after ``header_seconds``
  (slowloris). uvicorn has no such timeout (``timeout_keep_alive`` only runs
  between requests, and an ASGI app sees a request only once its head is in).
* **The send deadline** (the same, :mod:`pdi.server.process.guarded`): a client
  that asks and then takes none of the answer for ``send_seconds`` is
  dropped, and what the connection's buffer held with it (a client that
  never read held a whole answer in the worker for as long as it stayed
  connected). uvicorn has no such timeout either.
* **Answers from the cache of whole answers written by the connection**
  (:class:`CachedAnswerProtocol`, see :mod:`pdi.server.process.cache`):
  without an ASGI request cycle (a task, the middleware, Starlette), and
  without its scope or :class:`~pdi.server.process.http11.RequestCycle`, which
  is most of what a small answer costs: twice the requests a second and half
  the latency of the same answer from the middleware, as measured when it was
  written.
  A read that is exactly one request head of a strict, common shape, answered
  by the cache's facts (N2L's ``302``, a ``304``) or a whole answer it keeps
  (an N2R's ``200``), is answered in C without ``httptools``' callbacks
  (:data:`FAST_ANSWER`, :mod:`pdi.server.process._fasthead`): under a third
  of the instructions; a first asking of an N2R of that shape, whose head it
  has read, goes to the public path at once
  (:meth:`CachedAnswerProtocol._first_asking`), and one of N2L or of a ``304``
  to the told path (:meth:`CachedAnswerProtocol._first_told`); every other
  read is parsed by ``httptools``.
* **A request asking to switch protocols** (``Upgrade``, which ``pdi serve``
  never does): the parser stops at its head (uvicorn drops the octets read
  after it, logging two warnings); here the ``Upgrade`` is ignored (RFC 9110
  §7.8), what follows is read on as the next request, and such a request with
  content, which the parser skips, is refused (``400``).
* **Zero-copy sendfile** (:class:`pdi.server.process.zerocopy.ZeroCopy`):
  no ASGI extension of uvicorn's serves it (``http.response.pathsend`` or
  ``zerocopysend``), so the request's cycle and its transport are handed to
  the app in the scope.
"""

from __future__ import annotations

import asyncio
import collections
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Final

import httptools

from pdi.errors import ParseError
from pdi.server.http.cors import one_vary_head
from pdi.server.http.forwarded import NO_PROXIES, TrustedProxies, forwarded_origin
from pdi.server.http.middleware import RANGE_FIELDS, valid_host
from pdi.server.http.readers import may_hold_cookie
from pdi.server.process.cache import (
    KNOWN_WIRE_PARTS,
    N2L_PATH,
    Headers,
    Kept,
    ResponseCache,
    Validator,
    asked_wire,
    conditional_fields,
    kept_key,
    negotiates,
    request_field,
    respond,
    validated_wire,
    wire,
)
from pdi.server.process.guarded import REFUSED_LINGERING, GuardedHttpToolsProtocol
from pdi.server.process.http11 import STATUS_LINE
from pdi.server.process.limits import (
    DEFAULT_SEND_SECONDS,
    client_of,
)
from pdi.server.process.observe import (
    AccessLog,
    clf,
    count_cached_answer,
    log_cached_answer,
)

#: N2L's ``302`` and a ``304`` answered from a worker's facts, and an N2R's ``200`` from its whole answers, straight
#: from one read of a request head of a strict subset of HTTP/1.1 (:mod:`pdi.server.process._fasthead`, compiled;
#: ``None`` where it was not built: every request is parsed by ``httptools``, as it is when the read is anything
#: else): the octets to write, the method, the status and the body's octets; asked with ``first`` (the last
#: argument), a first asking of an N2R of such a head (no whole answer kept under its key, no ``If-None-Match``) is
#: ``(None, method, query, key, Host)``, for :attr:`CachedAnswerProtocol.public` to answer without the parser, and
#: one of N2L or of an N2R's ``304`` (no fact kept for the name) ``(method, query, If-None-Match)`` (``None`` for
#: N2L), for :attr:`CachedAnswerProtocol.told`.
FastAnswer = Callable[[bytes, "collections.OrderedDict[bytes, bytes]", "collections.OrderedDict[bytes, Any]", bytes,
                       bytes, bool], "tuple[bytes, bytes, int, int] | tuple[None, bytes, bytes, bytes, bytes]"
                                     " | tuple[bytes, bytes, str | None] | None"]
FAST_ANSWER: FastAnswer | None
#: The compiled path's own bounds on a read's octets, a target's and the fields: a connection with tighter ones
#: configured is read by ``httptools`` alone (its ``414`` and ``431`` said as before).
_FAST_READ = _FAST_TARGET = _FAST_FIELDS = 0
try:
    from pdi.server.process import _fasthead
except ImportError:  # built without a C compiler (setup.py)
    FAST_ANSWER = None
else:
    _fasthead.configure(*KNOWN_WIRE_PARTS)
    FAST_ANSWER = _fasthead.answer
    _FAST_READ, _FAST_TARGET, _FAST_FIELDS = _fasthead.MAX_READ, _fasthead.MAX_TARGET, _fasthead.MAX_FIELDS

#: What makes N2R's whole answer or N2L's ``302`` for anyone, in the event loop's thread, when it is the plain case
#: (else ``None``): ``public(path, scheme, local address, Host, query string, revalidating)``: an N2R with
#: ``If-None-Match`` first asks for the :class:`~pdi.server.process.cache.Validator` alone
#: (:meth:`pdi.server.protocol.resolver.Resolver.public_answer`).
PublicAnswers = Callable[[bytes, str, "tuple[str, int | None] | None", bytes, bytes, bool], "Kept | None"]
#: What tells N2L's ``302`` or a ``304`` of a name no fact is kept for yet without an answer object made, asked before
#: :data:`PublicAnswers`: ``told(path, query string, If-None-Match)``, the status, header lines and body, ``True``
#: (not told: ask ``public``) or ``False`` (no one may read it now: the ASGI path says what it is)
#: (:meth:`pdi.server.protocol.resolver.Resolver.public_told`, found beside a ``public`` that is the resolver's
#: :meth:`~pdi.server.protocol.resolver.Resolver.public_answer`).
PublicTold = Callable[[bytes, bytes, "str | None"], "tuple[int, bytes, bytes] | bool"]

#: Request fields after which a request is not the plain case the protocol answers itself
#: (a token is checked first: pdi.server.http.readers answers 401 to one that is not live; If-Match, by the resolver).
#: An ``X-Request-Id`` is echoed, and logged, by the app (pdi.server.process.observe).
_NOT_PLAIN = frozenset({b"content-length", b"transfer-encoding", b"expect", b"upgrade", b"authorization",
                        b"x-request-id", b"if-match", b"if-unmodified-since"})


def _not_plain_fields(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a request's fields take it out of the plain case: a body, an upgrade, a token, a request id of its
    own, a date to compare with ``Last-Modified`` (:func:`~pdi.server.http.conditional.dated_fields`), a ``Cookie`` that may hold the sign-in (:func:`~pdi.server.http.readers.may_hold_cookie`: a sign-in
    is checked first, and its answers are never from here), or not one ``Host`` field of a valid value (the
    ASGI path refuses it: :class:`~pdi.server.http.middleware.HostField`); one pass."""
    host = None
    hosts = 0
    modified_since = none_match = False
    for key, value in headers:  # a loop, not any() of a generator: one object fewer a request
        if key == b"host":
            hosts += 1
            host = value
        elif key in _NOT_PLAIN or (key == b"cookie" and may_hold_cookie(value)):
            return True
        elif key == b"if-modified-since":
            modified_since = True
        elif key == b"if-none-match":
            none_match = True
    # If-Modified-Since is the resolver's to answer, but with If-None-Match, which the tag answers (RFC 9110 §13.1.3)
    return hosts != 1 or host is None or not valid_host(host) or (modified_since and not none_match)


def _ranged(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a request has ``Range`` or ``If-Range`` (a ``HEAD`` with them goes to the ASGI path, which drops
    them: :class:`~pdi.server.http.middleware.HeadWithoutRange`)."""
    return any(key in RANGE_FIELDS for key, _ in headers)


class _Answered:
    """What stands for the request cycle of a request answered from the cache: one already complete.

    The protocol looks at its current cycle when the rest of the
    request arrives, when the connection is lost and when it shuts down.
    """

    response_complete = True
    response_started = True
    more_body = False  # its content, if any, was all read (a refusal after it is of the next request)
    keep_alive = True
    disconnected = False
    message_event = asyncio.Event()  # set when a connection is lost: nobody waits on it


_ANSWERED: Any = _Answered()


class CachedAnswerProtocol(GuardedHttpToolsProtocol):
    """pdi's HTTP/1.1 protocol with the request-head deadline, writing answers the cache holds at once.

    See :mod:`pdi.server.process.cache` for when it answers and when it
    leaves the request to the ASGI app. ``cache`` is the worker's
    :class:`~pdi.server.process.cache.ResponseCache`.
    """

    cache: ResponseCache | None = None
    #: Whether the read being parsed is a first asking :attr:`public` declined already (:meth:`data_received`).
    _asked: bool = False
    #: Whether the read being parsed is a first asking :attr:`told` did not tell already (:meth:`data_received`).
    _told: bool = False
    #: N2R's (or N2L's) answer to a name the cache does not hold, made at once when it is the plain case (None: never).
    public: PublicAnswers | None = None
    #: N2L's ``302`` and a ``304`` of a name no fact is kept for, asked before :attr:`public` (None: never).
    told: PublicTold | None = None
    #: The replay origin's port (:mod:`pdi.server.process.origins`): its connections are never answered from the cache.
    replay_port: int | None = None
    #: The access log the answers written here go to (:class:`pdi.server.process.observe.AccessLog`), if any.
    access: AccessLog | None = None
    #: JSON logs (``pdi serve --log-format json``): each answer written here gets a request id, echoed in its
    #: ``X-Request-Id``, and a JSON record (:func:`pdi.server.process.observe.log_cached_answer`).
    json_logs: bool = False
    #: The peers whose ``X-Forwarded-*`` fields say the scheme, host and client (:mod:`pdi.server.http.forwarded`).
    trusted: TrustedProxies = NO_PROXIES
    #: The compiled answer of N2L's ``302``, a ``304`` from the facts and a kept N2R's ``200`` (:data:`FAST_ANSWER`;
    #: ``None``: every read parsed by ``httptools``).
    fast_answer: FastAnswer | None = FAST_ANSWER
    #: uvicorn's default fields last seen (``Date``, ``Server``, made anew each second), their lines then the CORS
    #: fields' lines of every answer written here (the cache's :attr:`~pdi.server.process.cache.ResponseCache.cross_origin`),
    #: and those CORS lines alone: the same for every answer within a second, made once (:func:`answering_protocol`
    #: makes one list for each protocol).
    _heads: ClassVar[list[Any]] = [None, b"", b""]
    #: Whether the CORS fields of an answer depend on the request's ``Origin`` (a list of origins): a request with
    #: one is then the app's, which names it (:class:`~pdi.server.http.cors.CrossOriginReads`).
    _by_origin: bool = False
    #: The connections each client address holds open in this worker (:meth:`connection_made`), made anew for
    #: each worker's protocol by :func:`answering_protocol`.
    clients: ClassVar[collections.Counter[str]] = collections.Counter()
    #: Of each client address, its connections refused as they opened that are closing in stages (at most
    #: :data:`REFUSED_LINGERING`), made anew for each worker's protocol as :attr:`clients` is.
    refused: ClassVar[collections.Counter[str]] = collections.Counter()

    def on_headers_complete(self) -> None:
        if self._too_long:  # a 414 (GuardedHttpToolsProtocol.on_url): nothing of it is answered here
            super().on_headers_complete()
            return
        self._in_head, self._head_seen = False, 0  # as the guarded protocol's, which an answer from here skips
        self.target_authority()  # before the cache reads Host for its key
        try:
            answered = self._answer_from_cache()
        except Exception as exc:  # this server's own code: a 500, never the client's fault (parse_failed)
            self.failed(exc)
            raise
        if not answered:
            super().on_headers_complete()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """A connection, unless its client holds a quarter of the worker's ``--max-connections`` already (at
        least 16): then ``503`` at once, and closed, so that one client's half-sent requests (slowloris) cannot
        take every place. A client is an IPv4 address or an IPv6 /64 (what one host is given); a trusted proxy's
        address, the address of many clients, is not counted. The ``503`` closes in stages as every refusal does
        (:meth:`GuardedHttpToolsProtocol._linger`), for :data:`REFUSED_LINGERING` of the client's at once; past
        them, at once: a client opening more cannot hold places of the worker's ``--max-connections`` with them."""
        super().connection_made(transport)
        self._counted: str | None = None
        self._refused: str | None = None
        self._fast_tables()
        address = self.client[0] if self.client else None
        if address is None or self.limit_concurrency is None or self.trusted.trusts(address):
            return
        peer = client_of(address)
        most = max(16, self.limit_concurrency // 4)
        if self.clients[peer] >= most:
            staged = self.refused[peer] < REFUSED_LINGERING
            if staged:
                self.refused[peer] += 1
                self._refused = peer
            self._refuse(503, f"this client holds {most} connections to this server already; close one"
                              " (or wait for one to end) and ask again", staged=staged)
            return
        self.clients[peer] += 1
        self._counted = peer

    def _fast_tables(self) -> None:
        """Whether this connection's reads may be answered by :data:`FAST_ANSWER` (:meth:`data_received`): only when
        nothing configured asks for the Python path's work (an access log, JSON logs, trusted proxies, the replay
        origin's port, bounds on a head tighter than the compiled path's own), with what it looks answers up in."""
        cache = self.cache
        fast = self.fast_answer
        self._fast: FastAnswer | None = None
        if (fast is None or cache is None or self.access is not None or self.json_logs or self.trusted
                or (self.replay_port is not None and self.server is not None and self.server[1] == self.replay_port)
                or self.target_octets < _FAST_TARGET or self.head_fields < _FAST_FIELDS
                or self.head_octets < _FAST_READ or self._head_bound < _FAST_READ):
            return
        self._fast = fast
        self._facts, self._entries = cache.tables
        self._origin = (self.scheme or "http").encode("ascii") + b"://"

    def data_received(self, data: bytes) -> None:
        """A read that is exactly one request head the compiled path answers (N2L's ``302`` or a ``304`` from the
        name's fact, an N2R's ``200`` from its whole answer kept: :mod:`pdi.server.process._fasthead`), when
        nothing of a request is being read or answered on the connection (nor held by the parser, begun at the
        end of the read before): written at once, as :meth:`_answer_from_cache` writes it; a first asking of an
        N2R of such a head, answered by :attr:`public` as :meth:`_answer_public` would answer it, without the
        parser (:meth:`_first_asking`), and of N2L or a ``304``, by :attr:`told` (:meth:`_first_told`); any
        other, read as before."""
        fast = self._fast
        if (fast is not None and self._in_head and not self._head_seen and not self._begun
                and self.refusal is None):
            # asked first, the rest only of a read it answers (most reads it declines cost that look alone); what
            # it touched of the cache is only which entry was used last
            sent = fast(data, self._facts, self._entries, self._origin, self._heads[1], True)
            cycle = self.cycle
            limit = self.limit_concurrency
            if (sent is not None and (cycle is None or cycle is _ANSWERED) and not self.pipeline
                    and not self.flow.write_paused
                    and (limit is None or max(len(self.connections), len(self.tasks)) < limit)
                    and self.cache is not None and self.cache.fresh):
                if len(sent) == 5:  # a first asking of an N2R: the public path's, else the parser's (below)
                    _, method, query, key, host = sent
                    if self._first_asking(data[len(method) + 1:len(method) + 13], method, query, key, host):
                        return
                    self._asked = True  # not the plain case: the parser reads it, and the ASGI path answers it
                    try:
                        _read(self, data)
                    finally:
                        self._asked = False
                    return
                if len(sent) == 3:  # a first asking of N2L or a 304: the told path's, else the parser's (below)
                    said = self._first_told(*sent)
                    if said is True:
                        return
                    # not told (False: no one may read it, the ASGI path's; None: public_answer's, told not asked
                    # again), read by the parser
                    self._asked, self._told = said is False, True
                    try:
                        _read(self, data)
                    finally:
                        self._asked = self._told = False
                    return
                defaults = self.server_state.default_headers
                heads = self._heads
                if defaults is not heads[0]:  # uvicorn makes them anew each second (the Date): made again
                    heads[:2] = defaults, b"".join(b"%s: %s\r\n" % pair for pair in defaults) + heads[2]
                    sent = fast(data, self._facts, self._entries, self._origin, heads[1], False)
                if sent is not None and len(sent) == 4:
                    self._idle_due = None
                    wire, method, status, octets = sent
                    if self._by_origin:  # its Vary and the connection's Vary: Origin made one field
                        wire = one_vary_head(wire)
                    self.transport.write(wire)
                    count_cached_answer(self.loop, method, status, octets, True)
                    # what HttpProtocol does once a response is complete: count it, wait for the next request
                    self.cycle = _ANSWERED
                    self.server_state.total_requests += 1
                    self.keep_alive()
                    self._arm()
                    return
        _read(self, data)

    def _first_asking(self, path: bytes, method: bytes, query: bytes, key: bytes, host: bytes) -> bool:
        """A first asking of an N2R or I2R (``path``; ``GET`` or ``HEAD``) of one plain head the compiled path read
        (``query``, the answer's ``key``, its ``Host``), answered as :meth:`_answer_from_cache` answers it once the
        parser has read it, without the parser's callbacks, the request's fields read again, or the cache's look-ups
        that miss: the answer :attr:`public` makes, kept and written; whether it was (``False``: nothing was kept or
        learnt, and the parser reads it, :attr:`public` not asked again)."""
        public = self.public
        if public is None:
            return False
        try:
            made = public(path, self.scheme or "http", self.server, host, query, False)
        except Exception as exc:  # this server's own code: a 500, as on_headers_complete says it
            self.failed(exc)
            self._refuse(*self.refusal)  # type: ignore[misc]
            return True
        if made is None:
            return False
        cache = self.cache
        assert cache is not None  # data_received asks only with one
        cache.keep(key, made, query)
        sent = wire(made, _NO_FIELDS)
        if sent is None:
            found = respond(made, None, None, None)
            if found is None:
                return False
            sent = _lines(found)
        self._write_first(method, *sent)
        return True

    def _first_told(self, method: bytes, query: bytes, if_none_match: str | None) -> bool | None:
        """A first asking of N2L (``if_none_match`` ``None``) or an N2R's (or I2R's) ``304`` (an ``If-None-Match`` of
        one tag's 66 characters, which may be a list or weak tags that long: :attr:`told` compares them as
        :func:`~pdi.server.http.conditional.tag_matches` does) of one plain head the compiled path read, for a name
        no fact is kept for: answered by :attr:`told`
        as :meth:`_answer_public` answers it once the parser has read it, without the parser's callbacks, the
        request's fields read again or the cache's look-ups that miss. ``True``: written; ``False``: no one may read
        it now (the ASGI path says what it is, :attr:`public` not asked); ``None``: not told (:attr:`public` asks,
        :attr:`told` not asked again)."""
        told = self.told
        if told is None:
            return None
        try:
            said = told(_N2L if if_none_match is None else _N2R, query, if_none_match)
        except Exception as exc:  # this server's own code: a 500, as on_headers_complete says it
            self.failed(exc)
            self._refuse(*self.refusal)  # type: ignore[misc]
            return True
        if said is True or said is False:
            return None if said else False
        self._write_first(method, *said)
        return True

    def _write_first(self, method: bytes, status: int, lines: bytes, body: bytes) -> None:
        """Write an answer made for a first asking whose head only the compiled path read (:meth:`_first_asking`,
        :meth:`_first_told`), as :meth:`_answer_from_cache` writes one, and wait for the next request."""
        defaults = self.server_state.default_headers
        heads = self._heads
        if defaults is not heads[0]:  # uvicorn makes them anew each second (the Date)
            heads[:2] = defaults, b"".join(b"%s: %s\r\n" % pair for pair in defaults) + heads[2]
        head = STATUS_LINE[status] + heads[1] + lines
        if self._by_origin:  # its Vary and the connection's Vary: Origin made one field
            head = one_vary_head(head)
        self._idle_due = None
        self._disarm()
        self.transport.write(head + body if method == b"GET" else head)
        count_cached_answer(self.loop, method, status, len(body) if method == b"GET" else 0, False)
        # what HttpProtocol does once a response is complete: count it, wait for the next request
        self.cycle = _ANSWERED
        self.server_state.total_requests += 1
        self.keep_alive()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        for counts, peer in ((self.clients, self._counted), (self.refused, self._refused)):
            if peer is not None:
                left = counts[peer] - 1
                if left:
                    counts[peer] = left
                else:
                    del counts[peer]
        self._counted = self._refused = None
        super().connection_lost(exc)

    def _plain(self) -> bool:
        """Whether the request whose head is in is the plain case answered here (the module's docstring)."""
        parser = self.parser
        return not (
            not self.url.startswith(b"/uri-res/")
            or (self.replay_port is not None and self.server is not None and self.server[1] == self.replay_port)
            or (self.cycle is not None and not self.cycle.response_complete)
            or self.pipeline
            or self.flow.write_paused
            or parser.get_http_version() != "1.1"
            or not parser.should_keep_alive()
            or parser.should_upgrade()
            or (self.limit_concurrency is not None
                and max(len(self.connections), len(self.tasks)) >= self.limit_concurrency)
            or parser.get_method() not in (b"GET", b"HEAD")
            or _not_plain_fields(self.headers)
            or (self._by_origin and any(key == b"origin" for key, _ in self.headers))  # the app names the origin
            or (parser.get_method() == b"HEAD" and _ranged(self.headers))  # the ASGI path drops its Range
        )

    def _answer_from_cache(self) -> bool:
        cache = self.cache
        if cache is None or not self._plain():
            return False
        started = time.perf_counter() if self.json_logs else 0.0
        try:
            url = httptools.parse_url(self.url)
        except httptools.HttpParserInvalidURLError:
            return False  # the ASGI path says what is wrong with it
        query = url.query or b""
        scheme: str = self.scheme or "http"
        host = request_field(self.headers, b"host")
        client = self.client[0] if self.client else None
        if self.trusted:  # the client's scheme, host and address, as a trusted proxy says them
            try:
                origin = forwarded_origin(self.headers, client, scheme, self.trusted)
            except ParseError:
                return False  # the ASGI path answers 400, saying what (pdi.server.http.forwarded.TrustedForwarding)
            if origin is not None:
                scheme, host, client = origin.scheme, origin.host, origin.client
        path = url.path
        key = kept_key(path, host, query, scheme)
        if not key:
            return False  # not an answer kept: the app's
        n2l = path == _N2L
        headers = self.headers
        negotiated = not n2l and negotiates(headers)
        fields = conditional_fields(headers)
        cache.refresh()  # stale: asked now, where the catalog can answer at once
        made = asked_wire(cache, query, key, fields, n2l=n2l, negotiated=negotiated)
        if made is not None:
            status, lines, body = made
        else:
            found = None if negotiated else self._answer_public(cache, path, query, scheme, host, key, fields, n2l=n2l)
            if found is None:
                return False  # the app answers it, and counts its look-up in the cache (CachedAnswers)
            status, lines, body = found
        defaults = self.server_state.default_headers
        heads = self._heads
        if defaults is not heads[0]:  # uvicorn makes them anew each second (the Date)
            heads[:2] = defaults, b"".join(b"%s: %s\r\n" % pair for pair in defaults) + heads[2]
        request_id = None
        if self.json_logs:  # lines end with the head's empty line: the id goes before it
            request_id = uuid.uuid4().hex
            lines = lines[:-2] + b"x-request-id: %s\r\n\r\n" % request_id.encode("ascii")
        head = STATUS_LINE[status] + heads[1] + lines
        if self._by_origin:  # its Vary and the connection's Vary: Origin made one field
            head = one_vary_head(head)
        self._disarm()
        method = self.parser.get_method()
        self.transport.write(head + body if method == b"GET" else head)
        octets = len(body) if method == b"GET" else 0
        count_cached_answer(self.loop, method, status, octets, made is not None)
        if self.access is not None:
            self.access.write(clf(client or "-", method.decode("ascii"), self.url, "1.1", status, octets))
        if request_id is not None:
            log_cached_answer(request_id, method, self.url, status, octets, time.perf_counter() - started,
                              client or "-")
        # what HttpProtocol does once a response is complete: count it, wait for the next request
        self.cycle = _ANSWERED
        self._in_content = True  # any content it has (none: a plain request has no Content-Length) is its own
        self.server_state.total_requests += 1
        self.keep_alive()
        self._arm()
        return True


    def _answer_public(
        self, cache: ResponseCache, path: bytes, query: bytes, scheme: str, host: bytes, key: bytes,
        fields: tuple[str | None, str | None, str | None], *, n2l: bool,
    ) -> tuple[int, bytes, bytes] | None:
        """The answer to an N2R or N2L of a name the cache does not hold, made now and kept, when :attr:`public` can
        (status, header lines as sent, body: a whole ``200``'s or a ``302``'s lines made once, kept with it, as
        :func:`~pdi.server.process.cache.asked_wire` makes them).

        Only while the cache is fresh (a stale one is revalidated by the
        ASGI path first, where the catalog cannot say its generation at once),
        for a ``Host`` given (``scheme`` and ``host`` are the client's, as a
        trusted proxy says them), and an N2R's ``Accept`` not naming JSON (the caller asks only then). ``n2l``:
        whether it is N2L's; ``key``, the answer's (:func:`~pdi.server.process.cache.kept_key`); ``fields``, the
        request's :func:`~pdi.server.process.cache.conditional_fields`.
        """
        public = self.public
        if public is None or not cache.fresh or not host or self._asked:  # asked already (data_received): the app's
            return None
        told = self.told
        if told is not None and (n2l or fields[0] is not None) and not self._told:  # from the digest alone
            said = told(path, query, None if n2l else fields[0])
            if said is not True:
                return None if said is False else said
        if fields[0] is not None and not n2l:  # If-None-Match: the entity tag alone may answer (304)
            validator = public(path, scheme, self.server, host, query, True)
            if isinstance(validator, Validator):
                unchanged = validated_wire(validator, fields[0])
                if unchanged is not None:
                    cache.keep(key, validator, query)
                    return unchanged
            elif validator is not None and (found := respond(validator, *fields)) is not None:
                cache.keep(key, validator, query)
                return _lines(found)
        made = public(path, scheme, self.server, host, query, False)
        if made is None:
            return None
        cache.keep(key, made, query)
        sent = wire(made, fields)
        if sent is not None:
            return sent
        found = respond(made, *fields)
        return None if found is None else _lines(found)


#: How a read the compiled path does not answer is read: as the guarded protocol reads it (one call, no ``super()``).
_read = GuardedHttpToolsProtocol.data_received


def _lines(found: tuple[int, Headers, bytes]) -> tuple[int, bytes, bytes]:
    """An answer's status, its header fields as the lines sent (then the empty line), and its body."""
    status, headers, body = found
    return status, b"".join(b"%s: %s\r\n" % pair for pair in headers) + b"\r\n", body



_N2L = N2L_PATH.encode()
_N2R = b"/uri-res/N2R"
#: No ``If-None-Match``, ``Range`` or ``If-Range`` (:func:`~pdi.server.process.cache.conditional_fields`).
_NO_FIELDS: Final = (None, None, None)


def _refusal_cors(cache: ResponseCache | None) -> Any:
    """:attr:`~pdi.server.process.guarded.GuardedHttpToolsProtocol.refusal_cors` of the app whose cache is ``cache``
    (its read paths and its CORS policy), as a class attribute; ``None`` where it has none or says none."""
    reads = None if cache is None else cache.read_paths
    if cache is None or reads is None or not cache.cross_origin.on:
        return None
    policy = cache.cross_origin

    def lines(target: bytes, headers: Sequence[tuple[bytes, bytes]]) -> bytes:
        return reads.refusal_lines(policy, target, headers)

    return staticmethod(lines)


def answering_protocol(
    header_seconds: float, cache: ResponseCache | None, replay_port: int | None = None,
    public: PublicAnswers | None = None, access: AccessLog | None = None, json_logs: bool = False,
    trusted: TrustedProxies = NO_PROXIES, send_seconds: float = DEFAULT_SEND_SECONDS,
) -> type[CachedAnswerProtocol]:
    """:class:`CachedAnswerProtocol` with its own request-head deadline, send deadline and the worker's cache (and ``public``,
    which makes an N2R answer the cache does not hold yet, when it is the plain case).

    A ``public`` that is a resolver's :meth:`~pdi.server.protocol.resolver.Resolver.public_answer` brings that
    resolver's :meth:`~pdi.server.protocol.resolver.Resolver.public_told` (:data:`PublicTold`) with it.
    Connections to ``replay_port`` (the replay origin's) are never answered from it. The ``X-Forwarded-*``
    fields of a peer in ``trusted`` say the scheme and host an answer's URLs name (:mod:`pdi.server.http.forwarded`).
    """
    clients: collections.Counter[str] = collections.Counter()  # the worker's own count of each client's connections
    refused: collections.Counter[str] = collections.Counter()  # and of those refused, closing in stages
    told: PublicTold | None = getattr(getattr(public, "__self__", None), "public_told", None)
    attributes = {"header_seconds": header_seconds, "send_seconds": send_seconds, "cache": cache, "replay_port": replay_port, "access": access,
                  "public": None if public is None else staticmethod(public), "json_logs": json_logs,
                  "told": None if told is None else staticmethod(told),
                  "trusted": trusted, "clients": clients, "refused": refused,
                  "_heads": [None, b"", b"" if cache is None else cache.cross_origin.lines],
                  "_by_origin": cache is not None and cache.cross_origin.by_origin,
                  "refusal_cors": _refusal_cors(cache),
                  "refusal_by_origin": cache is not None and cache.cross_origin.by_origin}
    return type("CachedAnswerProtocol", (CachedAnswerProtocol,), attributes)
