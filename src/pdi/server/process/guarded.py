"""pdi's HTTP/1.1 protocol guarded against strangers: deadlines, bounds on what is read, refusals and their close.

:class:`GuardedHttpToolsProtocol` is :class:`pdi.server.process.http11.HttpProtocol` (``httptools``' parser,
ASGI 3) with what a connection from a stranger needs and no ASGI hook serves:

* **The request-head deadline**: a client that sends its request line and fields slowly, or not at all, is
  disconnected after ``header_seconds`` (slowloris).
* **The send deadline**: a client that asks and then takes none of the answer for ``send_seconds`` is dropped,
  with what the connection's buffer held for it.
* **Framing bounds** (RFC 9112): a head, a trailer section and chunk extensions are bounded however TCP cut
  them; a request line that is not ``method SP request-target SP HTTP-version`` is ``400``, an unknown method
  ``501``; a client pipelining past :data:`~pdi.server.process.limits.MAX_PIPELINED` is ``503`` and nothing more
  is read from it.
* **Refusals answered with an RFC 9457 problem**, and the connection **closed in stages** (RFC 9112 §9.6): the
  answer taken by the client, then its writing side closed and what it still sends read and dropped, for
  :data:`LINGER_SECONDS` and :data:`LINGER_OCTETS` at most, so that the client reads its refusal rather than a
  reset.
* **Zero-copy sendfile** offered to each request (:class:`pdi.server.process.zerocopy.ZeroCopy`).

:class:`pdi.server.process.connection.CachedAnswerProtocol` builds on it to write the answers the cache holds.
"""

from __future__ import annotations

import asyncio
import fcntl
import re
import sys
import termios
from collections.abc import Callable, Sequence
from typing import Any, Final

import httptools

from pdi._wording import shown_field
from pdi.server.http.bodies import sends_content
from pdi.server.http.loglines import RefusalLog
from pdi.server.http.metrics import count_refusal
from pdi.server.http.middleware import valid_host
from pdi.server.http.problems import problem_body, status_phrase
from pdi.server.process.cache import (
    NOSNIFF,
)
from pdi.server.process.http11 import HttpProtocol
from pdi.server.process.limits import (
    DEFAULT_HEADER_SECONDS,
    DEFAULT_SEND_SECONDS,
    MAX_HEAD_FIELDS,
    MAX_HEAD_OCTETS,
    MAX_PIPELINED,
    MAX_TARGET_OCTETS,
)
from pdi.server.process.zerocopy import EXTENSION, ZeroCopy

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


#: A request's first octet where it is one of the empty lines before it (a tuple: ``in`` a ``bytes`` first tries its
#: argument as an int, a ``TypeError`` raised and cleared).
_CR_LF: Final = (b"\r", b"\n")


def _after_empty_lines(data: bytes, at: int = 0) -> int:
    """Where the empty lines ``data`` begins with (from ``at``) end (:data:`_EMPTY_LINES`; ``at`` where there are
    none)."""
    found = _EMPTY_LINES.match(data, at)
    return at if found is None else found.end()


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


#: Where chunked content may end (RFC 9112 §7.1): its last line (the last chunk's, ``0`` and any extensions, or the
#: trailer section's last field) and an empty line after it. Its own end is always one (llhttp takes no bare LF for
#: a CRLF), and the parser reads the same whatever a part it is given ends at: an empty line inside a chunk's octets
#: that looks like one costs a part more (a call of the parser), at most one every five octets.
_CHUNKED_END: Final = re.compile(rb"[^\r\n]\r\n\r\n")


def _chunked_end(data: bytes, at: int) -> int:
    """Where in ``data``, after ``at``, chunked content may first end (:data:`_CHUNKED_END`: its octet before ``CRLF
    CRLF`` at ``at`` or after), or ``len(data)``; as ``_CHUNKED_END.search`` finds it, a ``memchr`` at a time."""
    start = at
    while True:
        found = data.find(b"\r\n\r\n", start)
        if found < 0:
            return len(data)
        if found > at and data[found - 1] not in b"\r\n":
            return found + 4
        start = _after_empty_lines(data, found)  # past the run of CR and LF: none of it ends the content


#: :attr:`GuardedHttpToolsProtocol._length` not yet looked up.
_UNKNOWN: Final = -1


def _content_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The length of a request's content by its fields, as llhttp read them (one ``Content-Length`` of digits, never
    beside ``Transfer-Encoding``: llhttp refuses either), or ``None`` where it is chunked (RFC 9112 §6.3)."""
    length = 0
    for name, value in headers:
        if name == b"transfer-encoding":
            return None
        if name == b"content-length":
            length = int(value)
    return length


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
    #: The CORS fields' lines of a refusal (:meth:`_refuse`) of the request whose target and fields read so far are
    #: given, as the app says them on its read paths (:meth:`pdi.server.http.cors.ReadPaths.refusal_lines`, set
    #: by :func:`pdi.server.process.connection.answering_protocol`); ``None``: none.
    refusal_cors: Callable[[bytes, Sequence[tuple[bytes, bytes]]], bytes] | None = None
    #: Whether those fields name the request's ``Origin`` (``--cors-origin`` lists origins): a refusal of a head the
    #: parser could not read then waits for the rest of it (:meth:`_await_origin`).
    refusal_by_origin: bool = False

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
        #: The last octets (four at most) read of a request head begun and not yet whole, or of its content, where
        #: an empty line ending it may begin (:meth:`_request_end`), and the length its content declares (``None``:
        #: chunked; :data:`_UNKNOWN`: not yet looked up).
        self._held_end = b""
        self._length: int | None = _UNKNOWN
        #: The most octets a head may arrive in: its target, its fields, and each field's ``: `` and CRLF.
        self._head_bound = self.target_octets + self.head_octets + 4 * self.head_fields + 1024
        self.refusal: tuple[int, str] | None = None
        #: Whether the target of the request whose head is being read is longer than :attr:`target_octets` (its
        #: ``414`` waits for the head's end: :meth:`on_url`).
        self._too_long = False
        #: Of a target too long: whether its path may go on in the octets dropped (no ``?`` nor ``#`` yet), whether
        #: it did with a ``/`` (:meth:`_path_dropped`), and the last two octets looked at.
        self._path_cut = self._slash_dropped = False
        self._dropped_tail = b""
        #: The octets of the request head being read, while it is split over reads (kept for a refusal of it,
        #: :meth:`_failed_fields`); of a head the parser refused, all it read of it (``None``: none refused); and
        #: whether its refusal waits for the rest of the head (:meth:`_await_origin`).
        self._head_part = bytearray()
        self._failed_head: bytes | None = None
        self._awaiting = False
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
        #: The length of the chunked content's part being given to the parser, and the octets of content given to
        #: the app before it: what :meth:`on_message_complete` counts the framing of the part that ends the content by
        self._piece = (0, 0)

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
        if self._awaiting and self.refusal is not None:  # a refused head's rest never came: refused with what did
            self._awaiting = False
            self._refuse(*self.refusal)
            return
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
            if self._awaiting:  # but the rest of a refused head, for its Origin (:meth:`_await_origin`)
                self._awaited(data)
                return
            if self._lingered is not None:  # closing in stages: read, dropped, and bounded (:meth:`_linger`)
                self._lingered += len(data)
                if self._lingered > self.linger_octets:
                    self.transport.abort()
            return
        read, at, size = data, 0, len(data)
        while True:
            # one request's head, or its content by length, at a time: what follows it in the read is the next
            # request's, counted against its own bounds from its first octet (found in review, 2026-11-29: a head
            # begun in the read of the request before it went uncounted for that read, one read of slack past the
            # bound, and its line was taken from the next read); each part a slice of the read, never the read's
            # rest (found in review, 2026-11-29: the rest copied once a request, 100,000 pipelined GET in one read
            # took 31 s of CPU, not 0.6)
            if self._in_head and not self._begun and read[at:at + 1] not in _CR_LF:  # most reads: a head from its
                found = read.find(b"\r\n\r\n", at)  # first octet (:meth:`_request_end`, inline: a call fewer)
                end = size if found < 0 else found + 4
            else:
                end = self._request_end(read, at)
            data = read if at == 0 and end == size else read[at:end]
            if self._in_head:
                if not self._head_seen:
                    self._line = b""
                    if self._head_part:  # the last head's, split over reads
                        self._head_part = bytearray()
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
                if in_content and self._length is None:  # chunked content: fed up to where it ends, found as it is
                    fed = self._feed_chunked(read, at)
                    if fed < end:
                        end, data = fed, read[at:fed]
                else:
                    self.parser.feed_data(data)
            except httptools.HttpParserError as exc:
                if self._in_head and not self._too_long:  # the head's octets read, for its refusal's CORS fields
                    self._failed_head = bytes(self._head_part) + data
                self.parse_failed(exc)
            except httptools.HttpParserUpgrade as exc:
                self.upgrade_asked(exc)
            if self._begun:  # a head begun and not yet whole, or its content read on: where an empty line may begin
                # (its end ends a head, or may end chunked content: :meth:`_request_end`)
                self._held_end = data[-4:] if len(data) >= 4 else (self._held_end + data)[-4:]
                if self._in_head and self.refusal is None:  # split over reads: kept, bounded as the head is
                    self._head_part += data
            elif self._held_end:
                self._held_end = b""
            if self._head_part and not self._in_head:  # the head is in: what was kept of it is let go (an idle
                self._head_part = bytearray()  # keep-alive connection holds none of it)
            # a head still incomplete after all this: one field without end, or many (each kept only when complete);
            # the bound holds every head within the target's and the fields' bounds, however TCP cut it
            if self._in_head and self._head_seen > self._head_bound and self.refusal is None:
                if self._too_long:  # the target is what is too long: said so, its fields (an Origin) perhaps unread
                    self._refuse(*self._target_refusal())
                else:
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
                # section, and a client ending each read there would go unbounded (found in review, 2026-11-29).
                # The part that ends the content is counted as it ends, before the app is told (on_message_complete)
                self._framing += len(data) - (self._content_octets - content)
                if self._framing_over(0):
                    self._refuse(400, self._framing_said())
            unread = self._unread
            if unread is not None:
                # a request asking to switch protocols, ignored (:meth:`upgrade_asked`): the parser
                # stopped at its head's end and dropped the rest of ``data``, which is the next request's
                self._unread = None
                end = at + unread
            if end >= size or self.refusal is not None or self.transport.is_closing():
                return
            at = end

    def _request_end(self, data: bytes, at: int) -> int:
        """Where in ``data``, from ``at`` on, the part of a request being read ends, if it does (else ``len(data)``): a
        head at its empty line (RFC 9112 §2.1; llhttp takes no bare LF for a CRLF), content by length after its last
        octet, chunked content at the next place it may end (:data:`_CHUNKED_END`). What follows the end of a request
        in a read is thus always the next request's, from its first octet."""
        if self._in_head:
            if self._begun:  # the head's empty line may begin in the octets before this read
                held = self._held_end[-3:]
                found = (held + data[at:at + 3]).find(b"\r\n\r\n")
                if found >= 0:
                    return at + found + 4 - len(held)
                found = data.find(b"\r\n\r\n", at)
                return len(data) if found < 0 else found + 4
            # the empty lines before a request line (RFC 9112 §2.2) are none of its head's
            start = _after_empty_lines(data, at) if data[at:at + 1] in _CR_LF else at
            found = data.find(b"\r\n\r\n", start)
            return len(data) if found < 0 else found + 4
        if self._in_content:
            length = self._length
            if length == _UNKNOWN:
                self._length = length = _content_length(self.headers)
            if length is None:  # found as it is read (:meth:`_feed_chunked`)
                return len(data)
            left = length - self._content_octets
            if 0 < left < len(data) - at:
                return at + left
        return len(data)

    def _feed_chunked(self, data: bytes, at: int) -> int:
        """``data`` from ``at`` on, chunked content, given to the parser a part at a time, each ending where the content
        may end (:data:`_CHUNKED_END`; the octets before ``at`` held in :attr:`_held_end`), until it does: where it
        did, or ``len(data)``."""
        parser, messages, size = self.parser, self._messages, len(data)
        held = self._held_end
        end = size
        if held:
            for found in _CHUNKED_END.finditer(held + data[at:at + 4]):
                if found.end() > len(held):
                    end = at + found.end() - len(held)
                    break
        if end == size:
            end = _chunked_end(data, at)
        if at == 0 and end == size:  # the read whole (most chunked reads: their end, if any, is the read's)
            self._piece = (size, self._content_octets)
            parser.feed_data(data)
            return size
        view = memoryview(data)
        first, before = at, self._content_octets  # the parts before the one that ends the content count with it
        while True:
            self._piece = (end - first, before)
            parser.feed_data(view[at:end])
            if end == size or self._messages != messages:
                return end
            at = end
            end = _chunked_end(data, at)

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
        self._too_long = False
        self.expect_100_continue = False
        self.headers = []
        self._in_head, self._field_octets, self._begun, self._length = True, 0, True, -1  # _UNKNOWN (a constant)
        self._in_content, self._chunks_before, self._content_octets, self._framing = False, self._chunks, 0, 0
        self._trailer_seen = 0  # the last request's trailer section is none of this one's

    def on_url(self, url: bytes) -> None:
        if self._too_long:  # the rest of a target past the bound: read and dropped (the head's bound holds it)
            if self._path_cut:
                self._path_dropped(url)
            return
        if len(self.url) + len(url) > self.target_octets:
            # refused once the head is in (:meth:`on_headers_complete`), the target's first octets kept: the
            # refusal of a read path then carries the CORS fields its Origin asks for, so that a script of another
            # origin reads the 414 (found in review, 2026-12-01: refused here, before any field, it had none, and
            # a script's fetch of a long URL failed as a network error)
            self._too_long = True
            kept = self.target_octets - len(self.url)
            self.url += url[:kept]
            self._path_cut = self.url.find(b"?") < 0 and self.url.find(b"#") < 0
            self._slash_dropped, self._dropped_tail = False, self.url[-2:]
            if self._path_cut:
                self._path_dropped(url[kept:])
            return
        # httptools would drop it and what follows: the whole document served for a passage's name (``find``, not
        # ``in``, which first tries b"#" as an int: a TypeError raised and cleared, a request)
        if url.find(b"#") >= 0:
            self.refusal = (400, "the request target holds a '#', which no request target has (RFC 9112 §3.2): a"
                                 " name's fragment is asked for with its '#' written %23")
            raise _Refused
        self.url += url

    def _path_dropped(self, piece: bytes) -> None:
        """``piece``, the next octets of a target too long, dropped: whether the path goes on in them with a ``/``
        (or ``%2F``, a ``/`` once decoded, as the app's routes match a path; its first octets perhaps the last of
        what came before), up to the ``?`` or ``#`` that ends it (:meth:`_refusal_target`)."""
        ends = [at for at in (piece.find(b"?"), piece.find(b"#")) if at >= 0]
        path = piece[:min(ends)] if ends else piece
        seen = self._dropped_tail + path
        if path.find(b"/") >= 0 or seen.lower().find(b"%2f") >= 0:
            self._slash_dropped = True
            self._path_cut = False  # known: the rest is not looked at
        elif ends:
            self._path_cut = False
        self._dropped_tail = seen[-2:]

    def _refusal_target(self) -> bytes:
        """The target a refusal's CORS fields are those of (:attr:`refusal_cors`): the target read, or of a target too
        long, its first :attr:`target_octets` octets, and a ``/`` after them where its path went on with one in
        what was dropped: a path the routes' patterns match as they match the whole path (a segment's
        ``{service}`` does not match a path with a ``/`` after it; a ``{target:path}`` matches both; no route
        without parameters is as long)."""
        if self._too_long and self._slash_dropped:
            return self.url + b"/"
        return self.url

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

    def _framing_over(self, more: int) -> bool:
        """Whether this request's chunked framing, with ``more`` octets of it not yet counted, is past its bound: a
        head's, beyond the size lines' own, less what is counted as a trailer section."""
        return self._framing + more - self._trailer_seen > (
            self._head_bound + _SIZE_LINE * (self._chunks - self._chunks_before))

    def _framing_said(self) -> str:
        return f"the request's chunked framing (its chunk extensions, RFC 9112 §7.1.1) is more than {self._head_bound} octets"

    def on_message_complete(self) -> None:
        if self._length is None and self._in_content and self.refusal is None:
            # chunked content ends in the part given to the parser (one that ends where the content may, as every
            # part does: _feed_chunked): that part's framing is counted before the app has its content, not after
            # (found by a probe, 2026-11-30: a last part of 90 KB of one extension went uncounted, 223 KB passed)
            size, before = self._piece
            if self._framing_over(size - (self._content_octets - before)):
                self.refusal = (400, self._framing_said())
                raise _Refused
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
        if not self._await_origin():
            self._refuse(*self.refusal)

    def _failed_fields(self) -> tuple[bytes, list[tuple[bytes, bytes]]] | None:
        """Of a request head the parser refused (:attr:`_failed_head`, as far as it was read), its target and its
        ``Origin`` fields, read line by line past what the parser refused (a field line that is none, a value
        holding a control character a browser's ``fetch`` sends, as Chromium does: Fetch's header value forbids
        only NUL, CR and LF), so that the refusal carries the CORS fields the app gives the target's path
        (:meth:`pdi.server.http.cors.ReadPaths.refusal_lines`); ``None`` where its request line did not come
        whole, ``method SP request-target SP HTTP-version`` (RFC 9112 §3): no path is known. Only lines ended by
        their line feed are read (a line cut by TCP may be an ``Origin`` cut short). A request line cut by TCP
        after its target's SP gives that target (a target holds no SP), its version a beginning of ``HTTP/``."""
        head = self._failed_head
        if head is None:
            return None
        start = _after_empty_lines(head)
        end = head.find(b"\n", start)
        parts = head[start:end if end >= 0 else len(head)].rstrip(b"\r").split(b" ")
        if len(parts) != 3 or not parts[1] or not (
                parts[2].startswith(b"HTTP/") or (end < 0 and b"HTTP/".startswith(parts[2][:5]))):
            return None
        if end < 0:
            return parts[1], []
        origins = []
        for line in head[end + 1:].split(b"\n")[:-1]:
            line = line.rstrip(b"\r")
            if not line:  # the head's end
                break
            name, colon, value = line.partition(b":")
            if colon and name.lower() == b"origin":
                origins.append((b"origin", value.strip(b" \t")))
        return parts[1], origins

    def _await_origin(self) -> bool:
        """Whether the refusal of a head the parser refused waits for the rest of the head: only where the fields
        name the ``Origin`` (:attr:`refusal_by_origin`) of a read path, its request line read whole and its empty
        line not yet (a browser sends a field it may hold a control character in before ``Origin``: Chromium
        does). It is written when the head's empty line comes (:meth:`_awaited`), at the head's bound, or at the
        head's deadline (:meth:`_late`), whichever is first, with what came of it."""
        head = self._failed_head
        cors = self.refusal_cors
        if (not self.refusal_by_origin or cors is None or head is None or self.refusal is None
                or self.refusal[0] != 400 or head.find(b"\r\n\r\n") >= 0 or len(head) > self._head_bound):
            return False
        read = self._failed_fields()
        if read is None or not cors(read[0], ()):
            return False
        self._awaiting = True
        return True

    def _awaited(self, data: bytes) -> None:
        """More of a refused head whose refusal waits (:meth:`_await_origin`): written once its empty line came, or
        past the head's bound."""
        head = self._failed_head or b""
        seen = len(head)
        head += data
        self._failed_head = head
        if head.find(b"\r\n\r\n", max(0, seen - 3)) >= 0 or len(head) > self._head_bound:
            self._awaiting = False
            assert self.refusal is not None
            self._refuse(*self.refusal)

    def failed(self, exc: Exception) -> None:
        """This server's own code failed on the request whose head is in (``exc``): logged, and its refusal a 500."""
        self.logger.error("the resolver failed on a request", exc_info=exc)
        self.refusal = (500, f"the resolver failed on this request ({type(exc).__name__})")

    def busy_app(self) -> Any:
        """:func:`~pdi.server.process.http11.service_unavailable`, with the CORS fields the app gives the request's path
        (:attr:`refusal_cors`) and ``Retry-After``, so that a script of another origin reads the ``503`` of a server
        past ``--max-connections`` (found in review, 2026-12-01: it had none, and the script saw a network error)."""
        cors = self.refusal_cors
        lines = cors(self.url, self.headers) if cors is not None else b""
        if not lines:
            return super().busy_app()
        fields = [tuple(line.split(b": ", 1)) for line in lines.split(b"\r\n") if line]

        async def busy(scope: Any, receive: Any, send: Any) -> None:
            await send({"type": "http.response.start", "status": 503, "headers": [
                *fields, (b"retry-after", b"%d" % REFUSED_RETRY_SECONDS), (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", b"19"), (b"connection", b"close")]})
            await send({"type": "http.response.body", "body": b"Service Unavailable", "more_body": False})

        return busy

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
        cors = self.refusal_cors
        read = self._failed_fields() if cors is not None and status == 400 else None
        if read is not None and cors is not None:  # a head the parser refused: its target and Origin as its lines say them
            content.append(cors(*read))
        elif cors is not None and self.url and status != 500 and (self.headers or not self._in_head or status == 431):
            # a refusal of a request whose line was read (a field after it read, or its head whole; or a 431 of a
            # head past its bound, which its target, bounded, cannot be), of a read path: the CORS fields the app
            # gives that path, so that another origin's script reads it, a 503's Retry-After too (found in review,
            # 2026-12-01: none, and the script saw a network error). A 500 is this server's own failure, perhaps of
            # a read the parser did not see (the compiled path's): the target and fields may be another request's
            content.append(cors(self._refusal_target(), self.headers))
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

    def _target_refusal(self) -> tuple[int, str]:
        return 414, f"the request target is more than {self.target_octets} octets (RFC 9112 §3)"

    def on_headers_complete(self) -> None:
        self._disarm()  # the request's head is in
        self._in_head, self._head_seen = False, 0
        if self._too_long:
            self.refusal = self._target_refusal()
            raise _Refused
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
