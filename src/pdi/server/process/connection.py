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

* **The request-head deadline** (:class:`GuardedHttpToolsProtocol`): a
  client that opens a connection and sends its request line and headers
  slowly, or not at all, is disconnected after ``header_seconds``
  (slowloris). uvicorn has no such timeout (``timeout_keep_alive`` only runs
  between requests, and an ASGI app sees a request only once its head is in).
* **The send deadline** (:class:`GuardedHttpToolsProtocol` too): a client
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
  (:meth:`CachedAnswerProtocol._first_asking`); every other read is parsed by
  ``httptools``.
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
import fcntl
import functools
import http
import re
import sys
import termios
import time
import uuid
from collections.abc import Callable
from typing import Any, ClassVar, Final

import httptools

from pdi._wording import shown_field
from pdi.errors import ParseError
from pdi.server.http.bodies import sends_content
from pdi.server.http.forwarded import NO_PROXIES, TrustedProxies, forwarded_origin
from pdi.server.http.loglines import RefusalLog
from pdi.server.http.metrics import count_refusal
from pdi.server.http.middleware import RANGE_FIELDS, valid_host
from pdi.server.http.problems import problem_body, status_phrase
from pdi.server.http.readers import may_hold_cookie
from pdi.server.process.cache import (
    KNOWN_WIRE_PARTS,
    N2L_PATH,
    NOSNIFF,
    Entity,
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
from pdi.server.process.http11 import HttpProtocol
from pdi.server.process.limits import (
    DEFAULT_HEADER_SECONDS,
    DEFAULT_SEND_SECONDS,
    MAX_HEAD_FIELDS,
    MAX_HEAD_OCTETS,
    MAX_PIPELINED,
    MAX_TARGET_OCTETS,
    client_of,
)
from pdi.server.process.observe import (
    AccessLog,
    clf,
    count_cached_answer,
    log_cached_answer,
)
from pdi.server.process.zerocopy import EXTENSION, ZeroCopy

#: N2L's ``302`` and a ``304`` answered from a worker's facts, and an N2R's ``200`` from its whole answers, straight
#: from one read of a request head of a strict subset of HTTP/1.1 (:mod:`pdi.server.process._fasthead`, compiled;
#: ``None`` where it was not built: every request is parsed by ``httptools``, as it is when the read is anything
#: else): the octets to write, the method, the status and the body's octets; asked with ``first`` (the last
#: argument), a first asking of an N2R of such a head (no whole answer kept under its key, no ``If-None-Match``) is
#: ``(None, method, query, key, Host)``, for :attr:`CachedAnswerProtocol.public` to answer without the parser.
FastAnswer = Callable[[bytes, "collections.OrderedDict[bytes, bytes]", "collections.OrderedDict[bytes, Any]", bytes,
                       bytes, bool], "tuple[bytes, bytes, int, int] | tuple[None, bytes, bytes, bytes, bytes] | None"]
FAST_ANSWER: FastAnswer | None
#: The compiled path's own bounds on a read's octets, a target's and the fields: a connection with tighter ones
#: configured is read by ``httptools`` alone (its ``414`` and ``431`` said as before).
_FAST_READ = _FAST_TARGET = _FAST_FIELDS = 0
try:
    from pdi.server.process import _fasthead
except ImportError:  # built without a C compiler (setup.py)
    FAST_ANSWER = None
else:
    _fasthead.configure(*KNOWN_WIRE_PARTS, Entity)
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


@functools.cache
def status_line(status: int) -> bytes:
    """An HTTP/1.1 status line, with the reason phrase of RFC 9110 §15 (as uvicorn writes it); made once a status."""
    try:
        phrase = http.HTTPStatus(status).phrase.encode()
    except ValueError:
        phrase = b""
    return b"HTTP/1.1 %d %s\r\n" % (status, phrase)


#: The worker's log of refused request heads (one a process: each worker says its own).
_REFUSALS = RefusalLog()
#: The ``Retry-After`` of the connection's own ``503`` refusals (a client past its share of the connections, or of
#: the requests waiting on one): its place is free again as soon as one of its own requests ends.
REFUSED_RETRY_SECONDS: Final = 1
#: The log of connections dropped for taking none of an answer (:meth:`GuardedHttpToolsProtocol._send_stalled`).
_DROPPED = RefusalLog(done="dropped")


#: The most octets of a chunk's size line and the CRLF after its data (RFC 9112 §7.1: 16 hex digits, a CRLF each).
_SIZE_LINE: Final = 24

#: The scheme of a request target in absolute form (RFC 3986 §3.1: ``ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )``).
_SCHEME = re.compile(rb"([A-Za-z][A-Za-z0-9+.-]*)://")


#: How long, at most, a connection is closed in stages after a refusal (RFC 9112 §9.6), and the most octets read
#: and dropped meanwhile (:meth:`GuardedHttpToolsProtocol._linger`): Apache's lingering close waits two seconds; what
#: a client had sent before it read its refusal (requests pipelined, a body) is read, up to a few megabytes, what a
#: kernel's buffers hold on a fast link.
LINGER_SECONDS: Final = 2.0
LINGER_OCTETS: Final = 4 * 1024 * 1024
#: How many of a client's connections refused as they open, for its quarter of ``--max-connections``
#: (:meth:`CachedAnswerProtocol.connection_made`), close in stages at once; past them, each is closed at once. Each
#: lingering one is a place of the worker's connections: unbounded, a client that left them open took every place
#: two seconds at a time (found in review, 2026-11-29).
REFUSED_LINGERING: Final = 4
#: How often a staged close looks whether its client has taken the answers before the refusal, before its linger
#: begins (:meth:`GuardedHttpToolsProtocol._draining`): neither the transport nor the kernel says when the last
#: octet is acknowledged.
_DRAIN_POLL: Final = 0.1
#: ``SIOCOUTQ`` (Linux: the same number as ``TIOCOUTQ``): the octets a TCP socket's send queue holds, not yet
#: acknowledged by the peer (tcp(7)); ``None`` where the system has no such request.
_OUTQ: Final = getattr(termios, "TIOCOUTQ", None) if sys.platform == "linux" else None

#: How many of a request's first octets tell a malformed request line from an unknown method: the longest method
#: llhttp knows (``VERSION-CONTROL``, 15 octets) and the octet after it, with room to spare; counted after the
#: empty lines before it (:data:`_EMPTY_LINES`).
_LINE_PEEK: Final = 64
#: The empty lines before a request line (RFC 9112 §2.2: a server SHOULD ignore them; llhttp skips any number of CR
#: and LF there), which the peek leaves out: a request is refused by what follows them, however many they are.
_EMPTY_LINES = re.compile(rb"[\r\n]*")
#: RFC 9110 §5.6.2's ``token``: what a method is (RFC 9110 §9.1).
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _after_empty_lines(data: bytes) -> int:
    """Where the empty lines ``data`` begins with end (:data:`_EMPTY_LINES`; 0 where there are none)."""
    found = _EMPTY_LINES.match(data)
    return 0 if found is None else found.end()


def _method_refused(line: bytes) -> tuple[int, str]:
    """Why a request whose line llhttp refused at its method (its first octets: ``line``) is refused: a method that
    is a token followed by a space is one this server does not know (RFC 9110 §9.1: ``501``); anything else is not
    a request line (RFC 9112 §3: ``method SP request-target SP HTTP-version``, and "Recipients of an invalid
    request-line SHOULD respond with either a 400 (Bad Request) error or a 301 (Moved Permanently) redirect")."""
    line = line[_after_empty_lines(line):][:_LINE_PEEK]  # the empty lines RFC 9112 §2.2 lets a request follow
    method = _TOKEN.match(line)
    end = method.end() if method is not None else 0
    after = line[end:end + 1]
    if method is not None and after in (b" ", b""):  # a token and a space, or all that came a token
        return 501, "the request's method is not one this server offers (RFC 9110 §9.1)"
    found = (f"after the method {shown_field(line[:end])} comes {shown_field(after)}, not the one space that ends it"
             if end else f"it starts with {shown_field(after)}, not a method's name")
    return 400, f"the request line is not method SP request-target SP HTTP-version (RFC 9112 §3): {found}"


def _after_heads(data: bytes, heads: int) -> bytes:
    """The octets of ``data`` after the end of its ``heads``-th request head (``b"\\r\\n\\r\\n"``): where the
    request after them begins, when they had no content (the requests pipelined in one read are, by RFC 9112
    §9.3.2, idempotent ones: ``GET``, ``HEAD``). Of one with content, the guess is wrong, and only the status of
    the refusal can be (``400`` or ``501``): the request is refused either way."""
    at = 0
    for _ in range(heads):
        while data.startswith(b"\r\n", at):  # empty lines before a request line (RFC 9112 §2.2)
            at += 2
        found = data.find(b"\r\n\r\n", at)
        if found < 0:
            return data
        at = found + 4
    return data[at:]


class _Refused(Exception):
    """Raised in a parser's callback to stop reading a request head that is refused (:attr:`refusal` says why)."""


class GuardedHttpToolsProtocol(HttpProtocol):
    """pdi's HTTP/1.1 protocol (:class:`~pdi.server.process.http11.HttpProtocol`), closing a connection whose request
    line and headers are late or too large.

    The deadline starts when the connection opens and again after each
    response (for the next request on a kept-alive connection, unless one
    is already queued behind it); data trickling in does not extend it, only
    a complete request head ends it. A request target longer than
    :data:`~pdi.server.process.limits.MAX_TARGET_OCTETS` is ``414``; a head
    with more than :data:`~pdi.server.process.limits.MAX_HEAD_FIELDS` fields,
    with fields of more than :data:`~pdi.server.process.limits.MAX_HEAD_OCTETS`
    octets, or still arriving past what those bounds allow, is ``431`` (RFC
    6585 §5), refused as it arrives, before more of it is kept. More than
    :data:`~pdi.server.process.limits.MAX_PIPELINED` requests pipelined
    behind the one being answered: the next is ``503``. A chunked request's
    trailer fields are dropped (never taken as header fields, RFC 9110
    §6.5.1), and a trailer section past the head's bound is ``431``; chunk
    extensions past it, ``400`` (RFC 9112 §7.1.1). A request whose content
    turns out wrong once its answer is written, or under way, gets no other
    answer: its connection is closed (RFC 9112 §9.3.2). A
    request the parser cannot read is answered with an RFC 9457 problem
    naming what the parser found (uvicorn's own answer is a plain "Invalid
    HTTP request received."), an unknown method ``501`` (RFC 9110 §9.1), a
    request line that is not ``method SP request-target SP HTTP-version``
    ``400`` (RFC 9112 §3). After a refusal the connection is closed in stages
    (RFC 9112 §9.6, :meth:`_linger`), bounded in time and octets. It
    also offers each request :class:`~pdi.server.process.zerocopy.ZeroCopy`,
    with which a response sends a verified file's octets with ``sendfile``.
    """

    header_seconds: float = DEFAULT_HEADER_SECONDS
    send_seconds: float = DEFAULT_SEND_SECONDS
    target_octets: int = MAX_TARGET_OCTETS
    head_fields: int = MAX_HEAD_FIELDS
    head_octets: int = MAX_HEAD_OCTETS
    pipelined: int = MAX_PIPELINED
    linger_seconds: float = LINGER_SECONDS
    linger_octets: int = LINGER_OCTETS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # llhttp refuses a request line of any version but 0.9, 1.0, 1.1 and 2.0 ("Invalid HTTP version", a 400);
        # RFC 9110 §2.5 asks a later minor version of HTTP/1 to be read as HTTP/1.1 (HostField reads it so, and
        # answers 505 to another major version). Lenient in the version's digits alone: one digit each still.
        # RFC 9112 §7.1.1 puts BWS before a chunk extension's ";" (``3 ;a=b``), which RFC 9110 §5.6.3 says a
        # recipient MUST parse: llhttp refuses it unless told to read spaces and tabs after a chunk's size (then
        # only CR, LF or ";" may follow them: ``3 4`` is still refused; ``3 \r\n``, outside the grammar, is read
        # as nginx reads it, its size the one any reader of the hex digits finds). Such whitespace counts against
        # the chunk extensions' bound (:meth:`data_received`).
        self.parser.set_dangerous_leniencies(lenient_version=True, lenient_spaces_after_chunk_size=True)
        #: Whether a request's head is being read, the octets read while it was, its fields so far, and why it
        #: is refused (status and detail), if it is.
        self._in_head = True
        self._head_seen = 0
        self._field_octets = 0
        #: Whether the parser holds a request it began reading and has not read whole (its first octets may have
        #: come in the read after another request's: ``_head_seen`` does not say so then). The compiled path
        #: answers no read while it does (:meth:`CachedAnswerProtocol.data_received`).
        self._begun = False
        #: The most octets a head may arrive in: its target, its fields, and each field's ``: `` and CRLF.
        self._head_bound = self.target_octets + self.head_octets + 4 * self.head_fields + 1024
        self.refusal: tuple[int, str] | None = None
        #: The first octets of the request whose head is being read (:data:`_LINE_PEEK` once that many came): what
        #: tells a malformed request line from an unknown method (:meth:`parse_failed`).
        self._line = b""
        #: The staged close's deadline (:meth:`_linger`), and the octets read and dropped since it began (``None``:
        #: not lingering).
        self._linger_timer: asyncio.TimerHandle | None = None
        self._lingered: int | None = None
        #: While a staged close waits for the client to take the answers (:meth:`_draining`): the octets it had
        #: not taken when it last took some, and when that was.
        self._untaken = 0
        self._untaken_since = 0.0
        #: A refusal waiting for the answers before it on the connection (:meth:`_refuse`).
        self._deferred: bytes | None = None
        #: The timer of the request-head deadline, and when the deadline is (``None``: disarmed). Arming it again
        #: moves the time only: a timer that fires before the deadline sets itself again for it (no timer made
        #: and cancelled for every request of a kept-alive connection).
        self._head_deadline: asyncio.TimerHandle | None = None
        self._head_due: float | None = None
        #: The send deadline's timer while writing is paused (the buffer past its high-water mark), and the
        #: octets the buffer held when it was last armed: fewer when it fires means the client took some.
        self._send_timer: asyncio.TimerHandle | None = None
        self._send_held = 0
        #: Where in the octets just fed the head of a request asking to switch protocols ended (the parser left
        #: the rest unread: :meth:`upgrade_asked`), or ``None``.
        self._unread: int | None = None
        #: Whether the parser read a chunk's size line and no octet of the chunk since (what follows the last
        #: chunk's is the trailer section), how many size lines it read, and the octets read while in a trailer
        #: section (:meth:`on_chunk_header`).
        self._in_trailer = False
        self._chunks = 0
        self._trailer_seen = 0
        #: Whether the octets being read are the content of the request whose head was read last (its answer may
        #: be under way, or written), the requests whose content ended, the chunk size lines read before this
        #: request's, the octets of its content given to the app, and the octets of its framing (chunk size lines,
        #: their extensions, the CRLFs, the trailer section: what the parser read of its content but gave no one).
        self._in_content = False
        self._messages = 0
        self._chunks_before = 0
        self._content_octets = 0
        self._framing = 0

    def _arm(self) -> None:
        self._head_due = due = self.loop.time() + self.header_seconds
        if self._head_deadline is None:
            self._head_deadline = self.loop.call_at(due, self._late)

    def _disarm(self) -> None:
        self._head_due = None

    def _late(self) -> None:
        self._head_deadline = None
        due = self._head_due
        if due is None:  # disarmed: a complete request head came in time
            return
        if self.loop.time() < due:  # armed again since: on to the later deadline
            self._head_deadline = self.loop.call_at(due, self._late)
            return
        self._head_due = None
        if not self.transport.is_closing():
            self.transport.close()

    def _stop_deadline(self) -> None:
        self._head_due = None
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def pause_writing(self) -> None:
        """The transport holds more than its high-water mark: the client has :attr:`send_seconds` to take some."""
        super().pause_writing()
        if self._send_timer is None:
            self._send_held = self.transport.get_write_buffer_size()
            self._send_timer = self.loop.call_later(self.send_seconds, self._send_stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def _send_stalled(self) -> None:
        """:attr:`send_seconds` after writing paused, or after the client last took octets: if it took none since,
        the connection is dropped with what its buffer holds (``abort``: a ``close`` would keep it, waiting to write
        it to a client that does not read); else it has as long again."""
        self._send_timer = None
        held = self.transport.get_write_buffer_size()
        if not held:  # all of it taken (and not yet said by resume_writing)
            return
        # closing or not: the keep-alive timeout closes a connection whose answer is all written, and a close
        # keeps what the buffer holds until the client takes it, which one that never reads never does
        if held < self._send_held:  # the client took some: as long again for the next
            self._send_held = held
            self._send_timer = self.loop.call_later(self.send_seconds, self._send_stalled)
            return
        _DROPPED.say_line(self.logger, "dropped the connection of %s: it took none of an answer's %d octets in %g s%s",
                          self.client[0] if self.client else None, held, self.send_seconds)
        self.transport.abort()

    # asyncio.Protocol's own signature takes a BaseTransport: a connection's is a Transport
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self.refusal is not None:  # refused: nothing after it is read (it may wait for the answers before it)
            if self._lingered is not None:  # closing in stages: read, dropped, and bounded (:meth:`_linger`)
                self._lingered += len(data)
                if self._lingered > self.linger_octets:
                    self.transport.abort()
            return
        while True:
            if self._in_head:
                if not self._head_seen:
                    self._line = b""
                if not self._line:  # a request's first octets after the empty lines before it, however many (a
                    # slice: the read itself may be large)
                    start = _after_empty_lines(data)
                    self._line = data[start:start + _LINE_PEEK]
                elif len(self._line) < _LINE_PEEK:  # its line cut by TCP: the rest of its start, rarely
                    self._line += data[:_LINE_PEEK]
                self._head_seen += len(data)
            trailing, chunks = self._in_trailer, self._chunks
            in_content, messages, content = self._in_content, self._messages, self._content_octets
            # HttpProtocol's data_received, inline (a call fewer for each read)
            self._idle_due = None
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserInvalidMethodError as exc:
                if messages != self._messages:  # the refused request followed another in this read
                    self._line = _after_heads(data, self._messages - messages)
                self.parse_failed(exc)
            except httptools.HttpParserError as exc:
                self.parse_failed(exc)
            except httptools.HttpParserUpgrade as exc:
                self.upgrade_asked(exc)
            # a head still incomplete after all this: one field without end, or many (each kept only when complete);
            # the bound holds every head within the target's and the fields' bounds, however TCP cut it
            if self._in_head and self._head_seen > self._head_bound and self.refusal is None:
                self._refuse(431, f"the request's head is more than {self._head_bound} octets (RFC 6585 §5)")
            elif trailing and self._in_trailer and chunks == self._chunks:  # all of it after the last chunk's size
                # line: the trailer section, whose field the parser keeps whole until its end, bounded as a head is
                self._trailer_seen += len(data)
                if self._trailer_seen > self._head_bound and self.refusal is None:
                    self._refuse(431, f"the request's trailer section is more than {self._head_bound} octets"
                                      " (RFC 6585 §5)")
            if in_content and messages == self._messages and self.refusal is None:
                # all of it inside one request's content: what of it was no content is its framing, whose chunk
                # extensions the parser skips unbounded (RFC 9112 §7.1.1: "A server ought to limit the total length
                # of chunk extensions received in a request"): bounded as a head is, beyond the size lines' own
                # less what is counted as a trailer section, which has its own bound (above); checked whatever the
                # read ended at: one ending just after a size line cannot yet tell a chunk's octets from a trailer
                # section, and a client ending each read there would go unbounded (found in review, 2026-11-29)
                self._framing += len(data) - (self._content_octets - content)
                if self._framing - self._trailer_seen > (
                        self._head_bound + _SIZE_LINE * (self._chunks - self._chunks_before)):
                    self._refuse(400, f"the request's chunked framing (its chunk extensions, RFC 9112 §7.1.1) is"
                                      f" more than {self._head_bound} octets")
            unread = self._unread
            if unread is None:
                return
            # a request asking to switch protocols, ignored (:meth:`upgrade_asked`): the parser
            # stopped at its head's end and dropped the rest of ``data``, which is the next request's
            self._unread = None
            data = data[unread:]
            if not data or self.refusal is not None or self.transport.is_closing():
                return

    def upgrade_asked(self, exc: httptools.HttpParserUpgrade) -> None:
        """A request asking to switch protocols (``Connection: Upgrade`` and ``Upgrade``): ``pdi serve`` switches to
        none, so it is answered as if it had not asked (RFC 9110 §7.8: "A server MAY ignore a received Upgrade
        header field"), and the octets after its head (``exc.args[0]`` octets into what the parser was fed, where
        it stopped) are read on as HTTP/1.1 (:meth:`data_received`). Such a request with content is refused before
        it is answered (:meth:`on_headers_complete`): the parser skips the content."""
        if exc.args and isinstance(exc.args[0], int):
            self._unread = exc.args[0]

    def on_message_begin(self) -> None:
        # as HttpProtocol's, inline: no ASGI scope made here (uvicorn's makes it for every request): :meth:`to_app` makes it, for a request
        # that goes to the ASGI app, and an answer the connection writes itself never needs one
        self.url = b""
        self.expect_100_continue = False
        self.headers = []
        self._in_head, self._field_octets, self._begun = True, 0, True
        self._in_content, self._chunks_before, self._content_octets, self._framing = False, self._chunks, 0, 0
        self._trailer_seen = 0  # the last request's trailer section is none of this one's

    def on_url(self, url: bytes) -> None:
        if len(self.url) + len(url) > self.target_octets:
            self.refusal = (414, f"the request target is more than {self.target_octets} octets (RFC 9112 §3)")
            raise _Refused
        # httptools would drop it and what follows: the whole document served for a passage's name (``find``, not
        # ``in``, which first tries b"#" as an int: a TypeError raised and cleared, a request)
        if url.find(b"#") >= 0:
            self.refusal = (400, "the request target holds a '#', which no request target has (RFC 9112 §3.2): a"
                                 " name's fragment is asked for with its '#' written %23")
            raise _Refused
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._field_octets += len(name) + len(value)
        if len(self.headers) >= self.head_fields:
            self.refusal = (431, f"the request has more than {self.head_fields} header fields (RFC 6585 §5)")
            raise _Refused
        if self._field_octets > self.head_octets:
            fields = "header fields" if self._in_head else "header and trailer fields"
            self.refusal = (431, f"the request's {fields} are more than {self.head_octets} octets (RFC 6585 §5)")
            raise _Refused
        if not self._in_head:  # a trailer field, after the content: never one of the request's header fields (RFC
            return  # 9110 §6.5.1: "MUST NOT merge a trailer field into a header section"), and not kept (§6.5.1)
        # HttpProtocol's own on_header, inline (a call fewer for each field of each request)
        name = name.lower()
        if name == b"expect" and value.lower() == b"100-continue" and self.parser.get_http_version() != "1.0":
            self.expect_100_continue = True  # of an HTTP/1.0 request, ignored (RFC 9110 §10.1.1: MUST)
        self.headers.append((name, value))

    def on_message_complete(self) -> None:
        cycle = self.cycle  # HttpProtocol's, inline: the app's request has all its content
        if cycle is not None and not cycle.response_complete:
            cycle.more_body = False
            cycle.message_event.set()
        self._in_head, self._head_seen = True, 0  # what comes next is the next request's head
        self._in_trailer = self._in_content = self._begun = False
        self._messages += 1

    def on_chunk_header(self) -> None:
        """httptools calls it when a chunk's size line is read (it calls an ``on_chunk_header`` the protocol has):
        the chunk's octets follow, or, after the last chunk's (size 0), the trailer section
        (:meth:`data_received` bounds it)."""
        self._in_trailer, self._trailer_seen = True, 0
        self._chunks += 1

    def on_chunk_complete(self) -> None:
        """httptools calls it at a chunk's end (after the trailer section, for the last)."""
        self._in_trailer = False

    def on_body(self, body: bytes) -> None:
        self._in_trailer = False  # a chunk's octets: no trailer section yet
        self._content_octets += len(body)
        super().on_body(body)

    def parse_failed(self, exc: httptools.HttpParserError) -> None:
        """The parser stopped at a request (``exc``): the refusal a callback made (this server's own failure among
        them, :meth:`failed`), or what the parser found, as an RFC 9457 problem."""
        if self.refusal is None:
            found = exc
            cause = found.__context__ if isinstance(found, httptools.HttpParserCallbackError) else found
            if isinstance(found, httptools.HttpParserInvalidMethodError):
                self.refusal = _method_refused(self._line)
            elif self.parser.get_method() == b"CONNECT" and isinstance(cause, httptools.HttpParserInvalidURLError):
                self.refusal = (501, "the request's method is not one this server offers (RFC 9110 §9.1)")
            elif isinstance(cause, httptools.HttpParserInvalidURLError):
                self.refusal = (400, f"the request target is not a URL this server reads (RFC 9112 §3.2): {cause}")
            else:
                said = str(cause) if cause is not None else str(exc)
                self.refusal = (400, f"the request is not HTTP/1.1 as RFC 9112 writes it: {said}")
        self._refuse(*self.refusal)

    def failed(self, exc: Exception) -> None:
        """This server's own code failed on the request whose head is in (``exc``): logged, and its refusal a 500."""
        self.logger.error("the resolver failed on a request", exc_info=exc)
        self.refusal = (500, f"the resolver failed on this request ({type(exc).__name__})")

    def _refuse(self, status: int, detail: str, *, staged: bool = True) -> None:
        """Answer ``status`` with ``detail`` as an RFC 9457 problem, and close the connection in stages (nothing after
        it is read as a request: :meth:`_linger`); say so in the log, who and why, at most a line a second (:class:`~pdi.server.http.loglines.RefusalLog`).
        While an earlier request on the connection is still being answered, the refusal waits for its answer (and
        those queued behind it), and nothing more is read. Not ``staged``: a connection refused as it opens is
        closed as soon as its answer is written."""
        self.refusal = (status, detail)
        _REFUSALS.say(self.logger, self.client[0] if self.client else None, status, detail)
        count_refusal(status)
        phrase = status_phrase(status) or ""
        content = [b"HTTP/1.1 %d %s\r\n" % (status, phrase.encode())]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        body = problem_body(status, detail)
        # nosniff, as every answer the app makes says (pdi.server.http.middleware.BrowserFields): the detail quotes
        # what the client sent
        if status == 503:  # a place held by this client's own requests: free again as soon as one ends (RFC 9110
            content.append(b"retry-after: %d\r\n" % REFUSED_RETRY_SECONDS)  # §10.2.3, §15.6.4)
        content.append(b"content-type: application/problem+json\r\ncontent-length: %d\r\n%s: %s\r\n"
                       b"connection: close\r\n\r\n" % (len(body), *NOSNIFF))
        content.append(body)
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if self._in_content and cycle is not None and cycle.response_started:
            # the content of a request whose answer is written, or under way, is wrong: a second answer would be
            # taken for the next request's (RFC 9112 §9.3.2: answers in the order of the requests); the connection
            # is closed once its answer is whole (RFC 9112 §9.6), and nothing more read (found by probing,
            # 2026-11-29: a trailer section past the bound after an answer was a 431 after the 200)
            self.flow.stop_reading()
            if cycle.response_complete:
                self._linger()
            elif cycle.more_body:  # an app answering as it reads: the rest of the content never comes
                cycle.disconnected = True
                cycle.message_event.set()
                self.transport.close()
            else:
                cycle.keep_alive = False
            return
        if cycle is not None and cycle.more_body and not cycle.response_started and not self.pipeline:
            # the parser stopped inside this request's own content (its chunked framing is wrong, RFC 9112 §7.1):
            # it is answered now, and the app waiting for the rest is told the client left (found in review,
            # 2026-11-27: it waited for the body deadline's 408, twenty seconds, and said the wrong thing)
            cycle.disconnected = True
            cycle.message_event.set()
            self.transport.write(b"".join(content))
            self._linger()
            return
        if self.pipeline or (cycle is not None and not cycle.response_complete):
            self._deferred = b"".join(content)  # written by on_response_complete once the answers before it are
            # paused for good: each answer done would resume it for the queue (found when a test failed once under
            # load, 2026-11-29: all a client sent while the answers before a 503 were written was read, and dropped)
            self.flow.stop_reading()
            return
        self.transport.write(b"".join(content))
        if staged:
            self._linger()
        else:
            self.transport.close()

    def _linger(self) -> None:
        """The connection closed in stages after a refusal, as RFC 9112 §9.6 asks ("If a server performs an
        immediate close of a TCP connection, there is a significant risk that the client will not be able to read
        the last HTTP response"): the writing side half-closed once the answer is written (``write_eof``: a FIN
        after it), then what the client still sends read and dropped, until it closes its side, or
        :attr:`linger_octets` were dropped, or :attr:`linger_seconds` passed, whichever comes first: then closed
        (``abort``). A close with octets unread makes the kernel answer with a reset, which drops what the client
        had not yet read of the answer (found by probing, 2026-11-29: requests pipelined past the bound, and a
        megabyte more, were answered with a reset and no ``503``). The linger's time and octets count from when
        the client has taken every octet written (:meth:`_draining`): counted from the refusal's write, a client
        slow to read a large answer before it lost the answer's tail and the refusal (found in review,
        2026-11-29)."""
        transport = self.transport
        if transport.is_closing() or self._lingered is not None:
            return
        self._lingered = 0
        self._stop_deadline()
        self._idle_due = None
        if transport.can_write_eof():
            transport.write_eof()
        else:  # a transport that cannot half-close (TLS): closed now, as before
            transport.close()
            return
        self.flow.read_stopped = self.flow.read_paused = False
        transport.resume_reading()
        self._untaken = self._unsent()
        if self._untaken:  # the answers not yet all taken: the linger starts once they are (:meth:`_draining`)
            self._untaken_since = self.loop.time()
            self._linger_timer = self.loop.call_later(_DRAIN_POLL, self._draining)
        else:
            self._linger_timer = self.loop.call_later(self.linger_seconds, self._lingered_enough)

    def _unsent(self) -> int:
        """The octets written to the connection that its client has not yet taken: those its transport holds, and
        those its kernel does (``SIOCOUTQ``: sent and not yet acknowledged, or not yet sent; where the system cannot
        say, none)."""
        held = self.transport.get_write_buffer_size()
        sock = self.transport.get_extra_info("socket")
        if sock is None or _OUTQ is None:
            return held
        try:
            queued = fcntl.ioctl(sock.fileno(), _OUTQ, b"\0\0\0\0")
        except (OSError, ValueError):  # closed meanwhile, or no TCP socket
            return held
        return held + int.from_bytes(queued, sys.byteorder, signed=True)

    def _draining(self) -> None:
        """A staged close waiting for the client to take the answers before it (:meth:`_linger`): once every octet
        is taken, the linger begins (:attr:`linger_seconds`, what is read meanwhile counted afresh against
        :attr:`linger_octets`); a client that took none for :attr:`send_seconds` is dropped, as a client taking none
        of any answer is (:meth:`_send_stalled`), with what it left."""
        self._linger_timer = None
        if self.transport.is_closing():
            return
        now = self.loop.time()
        untaken = self._unsent()
        if untaken <= 0:
            self._lingered = 0
            self._linger_timer = self.loop.call_later(self.linger_seconds, self._lingered_enough)
            return
        if untaken < self._untaken:  # the client took some: as long again from now
            self._untaken, self._untaken_since = untaken, now
        elif now - self._untaken_since >= self.send_seconds:
            _DROPPED.say_line(self.logger, "dropped the connection of %s: it took none of an answer's %d octets in %g s%s",
                              self.client[0] if self.client else None, untaken, self.send_seconds)
            self.transport.abort()
            return
        self._linger_timer = self.loop.call_later(_DRAIN_POLL, self._draining)

    def _lingered_enough(self) -> None:
        """:attr:`linger_seconds` after the client took the last octet of the answers (:meth:`_linger`): closed,
        whatever the client does."""
        self._linger_timer = None
        if not self.transport.is_closing():
            self.transport.abort()

    def target_authority(self) -> None:
        """RFC 9112 §3.2.2: of a request in absolute form (``GET http://host/path``, as a proxy sends it), the server
        "MUST ignore the received Host header field (if any) and instead use the host information of the
        request-target": its authority stands as the one ``Host`` field for every reader after (found in review,
        2026-11-27: ``N2Ls`` listed URLs of the Host field's host). Origin form (``/…``) is the first octet.

        Ignored, not unread: §3.2 still has the server answer ``400`` to an HTTP/1.1 request with no ``Host``, to
        one with more than one, and to one whose value is not a host, whatever the form of its target. Such fields
        are left as they came, for :class:`~pdi.server.http.middleware.HostField` to refuse (found by probing,
        2026-11-28: the target's authority stood in for them, and such a request was answered ``200``)."""
        url = self.url
        if url[:1] == b"/" or url == b"*":
            return
        if not (url[:7].lower() == b"http://" or url[:8].lower() == b"https://"):
            scheme = _SCHEME.match(url)
            if scheme is not None:  # absolute form of another scheme: this server is no proxy (found by probing)
                named = scheme[1][:40].decode("ascii").lower()
                self.refusal = (421, f"the request target names the scheme {named!r}: this server answers http and"
                                     " https targets only, and is no proxy (RFC 9110 §15.5.20)")
                raise _Refused
            return
        hosts = [value for name, value in self.headers if name == b"host"]
        if len(hosts) > 1 or (hosts and not valid_host(hosts[0])) or (
                not hosts and self.parser.get_http_version() != "1.0"):
            return
        authority = url.split(b"://", 1)[1].split(b"/", 1)[0].split(b"?", 1)[0]
        self.headers[:] = [*(field for field in self.headers if field[0] != b"host"), (b"host", authority)]

    def on_headers_complete(self) -> None:
        self._disarm()  # the request's head is in
        self._in_head, self._head_seen = False, 0
        if self.parser.should_upgrade() and sends_content(self.headers):
            # the parser takes the octets after such a head for another protocol's, and skips the content: the app
            # would be given none, and the content read as the next request (:meth:`upgrade_asked`)
            self.refusal = (400, "the request asks to switch protocols (Connection: Upgrade, Upgrade) and sends"
                                 " content: this server switches to no other protocol, and reads no content of such"
                                 " a request; send it without Upgrade (RFC 9110 §7.8)")
            raise _Refused
        if len(self.pipeline) >= self.pipelined:
            # HttpProtocol queues each pipelined request and reads on as each answer is done: the queue is bounded here
            self.refusal = (503, f"more than {self.pipelined} requests sent on this connection wait for their"
                                 " answers: those are answered, then the connection is closed; ask the rest on"
                                 " another (RFC 9112 §9.3.2)")
            raise _Refused
        refused = self.framing_refused()
        if refused is not None:
            self.refusal = (400, refused)
            raise _Refused
        self.target_authority()
        self.to_app()
        self._in_content = True
        cycle = self.cycle
        if cycle is not None and cycle.scope is self.scope and not cycle.response_started:
            # the app may send a file's octets with sendfile on this connection (pdi.server.process.zerocopy)
            extensions: dict[str, Any] = self.scope.setdefault("extensions", {})
            extensions[EXTENSION] = ZeroCopy(self.loop, cycle, self.send_seconds)

    def on_response_complete(self) -> None:
        queued = bool(self.pipeline)  # a pipelined request whose head is in: it starts now
        super().on_response_complete()
        deferred = self._deferred
        if deferred is not None and not self.pipeline and not self.transport.is_closing():
            cycle = self.cycle
            if cycle is None or cycle.response_complete:  # the answers before the refusal are written: now it
                self._deferred = None
                self.transport.write(deferred)
                self._linger()
                return
        if not queued and not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_deadline()
        if self._linger_timer is not None:
            self._linger_timer.cancel()
            self._linger_timer = None
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None
        super().connection_lost(exc)


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
    #: The connections each client address holds open in this worker (:meth:`connection_made`), made anew for
    #: each worker's protocol by :func:`answering_protocol`.
    clients: ClassVar[collections.Counter[str]] = collections.Counter()
    #: Of each client address, its connections refused as they opened that are closing in stages (at most
    #: :data:`REFUSED_LINGERING`), made anew for each worker's protocol as :attr:`clients` is.
    refused: ClassVar[collections.Counter[str]] = collections.Counter()

    def on_headers_complete(self) -> None:
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
        parser (:meth:`_first_asking`); any other, read as before."""
        fast = self._fast
        if (fast is not None and self._in_head and not self._head_seen and not self._begun
                and self.refusal is None):
            # asked first, the rest only of a read it answers (most reads it declines cost that look alone); what
            # it touched of the cache is only which entry was used last
            sent = fast(data, self._facts, self._entries, self._origin, _defaults[1], True)
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
                defaults = self.server_state.default_headers
                if defaults is not _defaults[0]:  # uvicorn makes them anew each second (the Date): made again
                    _defaults[:] = defaults, b"".join(b"%s: %s\r\n" % pair for pair in defaults)
                    sent = fast(data, self._facts, self._entries, self._origin, _defaults[1], False)
                if sent is not None and len(sent) == 4:
                    self._idle_due = None
                    wire, method, status, octets = sent
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
        status, lines, body = sent
        defaults = self.server_state.default_headers
        if defaults is not _defaults[0]:  # uvicorn makes them anew each second (the Date)
            _defaults[:] = defaults, b"".join(b"%s: %s\r\n" % pair for pair in defaults)
        head = status_line(status) + _defaults[1] + lines
        self._idle_due = None
        self._disarm()
        self.transport.write(head + body if method == b"GET" else head)
        count_cached_answer(self.loop, method, status, len(body) if method == b"GET" else 0, False)
        # what HttpProtocol does once a response is complete: count it, wait for the next request
        self.cycle = _ANSWERED
        self.server_state.total_requests += 1
        self.keep_alive()
        self._arm()
        return True

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
        if defaults is not _defaults[0]:  # uvicorn makes them anew each second (the Date)
            _defaults[:] = defaults, b"".join(b"%s: %s\r\n" % pair for pair in defaults)
        request_id = None
        if self.json_logs:  # lines end with the head's empty line: the id goes before it
            request_id = uuid.uuid4().hex
            lines = lines[:-2] + b"x-request-id: %s\r\n\r\n" % request_id.encode("ascii")
        head = status_line(status) + _defaults[1] + lines
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
        if told is not None and (n2l or fields[0] is not None):  # from the name's digest alone, no object made
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


#: uvicorn's default headers last seen (Date, Server) and their lines: the same for every answer within a second.
_defaults: list[Any] = [None, b""]

_N2L = N2L_PATH.encode()
#: No ``If-None-Match``, ``Range`` or ``If-Range`` (:func:`~pdi.server.process.cache.conditional_fields`).
_NO_FIELDS: Final = (None, None, None)


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
                  "trusted": trusted, "clients": clients, "refused": refused}
    return type("CachedAnswerProtocol", (CachedAnswerProtocol,), attributes)
