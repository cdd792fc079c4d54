"""A message too large to hold, read by its structure: each entity's header fields, each body's octets where they lie.

:func:`pdi.mail.message.read_message` gives Python's parser the whole
message, which keeps every body as a string (a 60 MB message cost some
300 MB to read, its largest attachment decoded twice more). A message of
more than :data:`STREAMED_FROM` octets (an e-mail with a scan or a recording
attached: 32 to 200 MB), or of more lines than Python's parser is given
(:attr:`~pdi.mail.message.MailLimits.max_lines`: it keeps each as an object of
its own), is read here instead (:func:`by_structure`, which every reading of a
message asks, :func:`read_mail`), from any octets that
:func:`len` and a plain ``[start:end]`` slice work on (the archive gives
:class:`pdi.archive.blobs.VerifiedOctets`, every octet from a chunk checked
as it is read, a few chunks held), in memory bounded by a few windows of
:data:`WINDOW` octets, whatever the message's size:

* **One pass** over the octets refuses a NUL octet as
  :func:`~pdi.mail.message.read_message` refuses it.
* **Each entity**, from the top: its header block (up to the empty line,
  or the first line that is no header field, as
  :func:`pdi.mail.message._body_start` and Python's parser find it; at
  most :data:`MAX_HEADER_BLOCK` octets; its lines that may be fields counted
  against :attr:`~pdi.mail.message.MailLimits.max_fields`, all blocks together)
  parsed by Python's :mod:`email`
  with the same bounded policy, so its fields, media type, parameters and
  file name read exactly as there; a ``multipart`` with a ``boundary`` whose
  delimiter lines are found in its body (:class:`Delimiters`: the lines that
  begin ``--`` and its boundary, found a window at a time, counted against
  :attr:`~pdi.mail.message.MailLimits.max_delimiters`) is cut along them, by
  the code :func:`pdi.mail.message.entity_span` cuts a message read whole with (the line ending before a
  delimiter is the delimiter's, RFC 2046 §5.1.1; no close delimiter: the
  last part runs to the end; no delimiter: a leaf, as Python reads it, its
  body running on over the line end before the next delimiter line),
  each part read so in turn (a ``multipart/digest``'s parts ``message/rfc822``
  by default); any other entity is a leaf, its body's octets left where they
  are (an enclosed ``message/rfc822`` is one part, not entered, whatever it holds, as
  :func:`~pdi.mail.message.read_message` reads one: a page or a passage never recurses into it).
* **The leaves** are :class:`~pdi.mail.message.MailPart` values as
  :func:`~pdi.mail.message.read_message` makes them, each with its
  :attr:`~pdi.mail.message.MailPart.span` (where its header block starts,
  where its body starts and ends). The tree of entities (header fields
  only) answers ``get_body`` as the whole message's does, so the body's
  text is read from the same part; that part's body alone is read (at most
  :data:`MAX_BODY_OCTETS`) and decoded as Python decodes it, a window at a
  time (:func:`part_pieces`) into one buffer kept on its entity
  (:func:`body_octets`), its text's one source.
* **A part's octets** (:func:`part_pieces`) are decoded from its body a
  window at a time: base64 cut at a multiple of four characters of its
  alphabet, read as Python reads it (strictly if the whole is valid, else as
  ``binascii``'s lenient mode reads it, which gives the same octets: what is
  not the alphabet skipped, an ``=`` that ends a quad of two or three
  characters ending the decoding, and a last quad of one character making
  Python answer the part as written, its line ends taken out, which the part's
  map learns first); quoted-printable cut only after a line end (or, in a line
  longer than a window, among its last octets where no escape is cut, told by
  the parity of its last run of ``=``; ``=`` CR, a soft break up to the next LF,
  carried across the windows it runs over); uuencode as
  ``email.message._decode_uu`` reads it (its ``begin`` line found by a regular
  expression, each line after it decoded by ``binascii.a2b_uu`` from its first
  octets, an ``end`` line ending it, a line longer than a window kept as its
  first 128 octets; no ``begin`` line, an empty line or one that does not decode
  making Python answer the part as written, which the part's map learns first; a
  ``begin`` line's mode longer than :data:`MAX_BEGIN_LINE` refused naming the
  part); anything else as it is; each piece the same octets as Python's
  ``get_payload(decode=True)`` of the whole, which the tests compare on the same
  messages. :func:`part_map` learns a part's
  decoded size before anything is sent (base64 counted, not decoded; octets as
  written not read) and keeps where its decoding can start again, a window
  apart, so that :func:`part_range` decodes a range from the place nearest
  before it, not from the part's start.

For a message that Python's parser reads past a defect the two cut apart
(a nested multipart that reuses an enclosing boundary; an entity whose
header block's last line, not its first, begins ``From ``, a misplaced
mbox From_ line, which Python reads as its body's first line, here too,
but when an empty line follows it, which Python drops, where the body is
read here from after that empty line) the readings may differ, and the defects listed are those of the
header fields alone (no body is parsed): every message of at most
:data:`STREAMED_FROM` octets and at most ``max_lines`` lines is read by Python's parser, whole, as before.

Pure: no I/O (the octets are read through the object given).
"""

from __future__ import annotations

import bisect
import itertools
import operator
import re
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message
from typing import Final, TypeVar

from pdi.errors import LimitError, ParseError, UnsupportedError
from pdi.mail.delimiters import (
    KEPT_OF_LINE,
    WINDOW,
    Delimiters,
    Octets,
)
from pdi.mail.limits import MailClock, MailLimits, too_deep, too_many_entities, too_many_fields
from pdi.mail.message import (
    _FIELD_LIKE,
    Mail,
    MailPart,
    _body_start,
    _first_line,
    _header_block_end,
    _mail_part,
    check_first_line,
    more_lines_than,
)
from pdi.mail.parser import FieldTooLong, bounded_policy

__all__ = [
    "BODY_OCTETS", "KEPT_OF_LINE", "MAX_BODY_OCTETS", "MAX_HEADER_BLOCK", "STREAMED_FROM", "WINDOW", "Delimiters",
    "Octets", "PartMap", "body_octets", "by_structure", "decoded_size", "part_map", "part_pieces", "part_range",
    "read_large", "read_mail", "unheld",
]

#: Messages larger than this (octets) are read here, by their structure, never held; smaller ones whole, by Python's
#: parser, unless they have more lines than it is given (:func:`by_structure`).
STREAMED_FROM: Final = 32 << 20
#: The longest header block of one entity (octets): a message's header fields fill some kilobytes.
MAX_HEADER_BLOCK: Final = 1 << 20
#: The most octets of header blocks read in all.
MAX_HEADER_OCTETS: Final = 8 << 20
#: The longest body (octets, as written, its transfer encoding not removed) that the body's text is read from.
MAX_BODY_OCTETS: Final = 16 << 20


_NUL: Final = b"\x00"


def unheld(size: int) -> bool:
    """Whether a message of ``size`` octets is read by its structure from its octets where they lie, never held
    whole (past :data:`STREAMED_FROM`): what a reader of stored octets knows before it reads one."""
    return size > STREAMED_FROM


def by_structure(octets: Octets, limits: MailLimits | None = None) -> bool:
    """Whether the message ``octets`` hold is read by its structure (:func:`read_large`), not whole by Python's
    parser: the one rule every reading of a message follows (:func:`read_mail`). One past :data:`STREAMED_FROM`
    octets (:func:`unheld`), and one with more lines than ``limits.max_lines``
    (:attr:`~pdi.mail.message.MailLimits.max_lines`, the bound of the lines given to Python's parser, which keeps
    each as an object of its own), are read by their structure, which holds none of a body's lines: a message of
    millions of short lines is read so whatever its size, where it was refused below :data:`STREAMED_FROM` and
    read past it. Its lines are counted a window at a time (:func:`~pdi.mail.message.more_lines_than`), only where
    there can be more than the bound (a line is at least one octet), its CR LF only where its LF and CR leave the
    answer open."""
    if unheld(len(octets)):
        return True
    return more_lines_than(octets, (limits or MailLimits()).max_lines)


def read_mail(octets: Octets, limits: MailLimits | None = None) -> Mail:
    """The message ``octets`` hold, read as every reading of it reads it (:func:`by_structure`): by its structure
    (:func:`read_large`), or whole by Python's parser (:func:`~pdi.mail.message.read_message`), its octets taken
    in hand then (at most :data:`STREAMED_FROM`)."""
    if by_structure(octets, limits):
        return read_large(octets, limits)
    # looked up when read, as the readers that called it did: what a test counts the readings by
    from pdi.mail.message import read_message

    return read_message(octets[0 : len(octets)], limits, lines_checked=True)


def _check_nul(octets: Octets, window_size: int = WINDOW, clock: MailClock | None = None) -> None:
    """A NUL octet refused where it is, in one pass a window at a time (as :func:`~pdi.mail.message.read_message`
    refuses it), ``clock`` looked at before each."""
    size = len(octets)
    for at in range(0, size, window_size):
        if clock is not None:
            clock.check(at)
        nul = octets[at : min(size, at + window_size)].find(_NUL)
        if nul >= 0:
            raise ParseError(f"the message holds a NUL octet at offset {at + nul}: no message holds one",
                             offset=at + nul, rule="message")


class _Reading:
    """One message's structure being read (:func:`read_large`)."""

    def __init__(self, octets: Octets, limits: MailLimits, window: int = WINDOW) -> None:
        self.octets, self.limits = octets, limits
        self.policy = bounded_policy(limits)
        self.clock = MailClock(limits.max_seconds)
        _check_nul(octets, window, self.clock)
        self.delimiters = Delimiters(octets, limits, window, self.clock)
        self.entities = 0
        self.header_octets = 0
        self.fields = 0  # header fields read so far, of every entity
        self.leaves: list[tuple[tuple[int, ...], Message, tuple[int, int, int]]] = []

    def entity(self, start: int, end: int, path: tuple[int, ...], default: str | None = None) -> Message:
        """The entity at ``octets[start:end]`` (its header fields; a multipart's parts attached), its leaves kept."""
        import email.parser

        self.entities += 1
        self.clock.check(start)
        if self.entities > self.limits.max_parts:
            raise too_many_entities(self.limits, path)
        if len(path) > self.limits.max_depth:
            raise too_deep(path, self.limits)
        body = self._body_start(start, end, path)
        self.header_octets += body - start
        if self.header_octets > MAX_HEADER_OCTETS:
            raise LimitError(f"the message's header blocks are more than {MAX_HEADER_OCTETS:,} octets in all")
        # the lines that may be fields, counted before the parser makes an object of each, as read_message counts
        # them (1,600,000 fields in 8 MiB of header blocks cost 4.5 s and 100 MiB at each reading)
        self.fields += sum(1 for _ in _FIELD_LIKE.finditer(self.octets[start:body]))
        if self.fields > self.limits.max_fields:
            raise too_many_fields(self.limits, path, start)
        # its header fields alone, read as the parser reads them (headersonly: a multipart's body is not looked for)
        try:
            entity: Message = email.parser.BytesHeaderParser(policy=self.policy).parsebytes(self.octets[start:body])
        except FieldTooLong as exc:
            where = "the message's" if not path else f"part {'.'.join(map(str, path))}'s"
            raise LimitError(
                f"{where} {exc.name} field (its header block at offset {start}) {exc.what(self.limits)}"
            ) from None
        if default is not None:  # a digest's part (RFC 2046 §5.1.5), as Python's parser sets it
            entity.set_default_type(default)
        entity.set_payload(None)  # type: ignore[call-overload]  # its body is not read: its parts attached, or ""
        entity.pdi_path = path  # type: ignore[attr-defined]  # as BoundedMessage.attach numbers it
        boundary = entity.get_boundary() if entity.get_content_maintype() == "multipart" else None
        spans = self.delimiters.parts(boundary, body, end, path) if boundary is not None else end
        if isinstance(spans, int):  # a leaf (its body to spans)
            if spans == end and entity.get_content_maintype() == "multipart":  # no delimiter line, or no boundary:
                spans = end = end + _line_end_at(self.octets, end)  # Python reads on over the line end after it
                body = self._body_start(start, end, path)  # (an empty line, or the end of its header block's last)
            entity.set_payload("")
            self.leaves.append((path, entity, (start, body, spans)))
            return entity
        inner = "message/rfc822" if entity.get_content_subtype() == "digest" else None
        for number, (part_start, part_end) in enumerate(spans):
            child = self.entity(part_start, part_end, (*path, number), inner)
            entity.attach(child)
        return entity

    def _body_start(self, start: int, end: int, path: tuple[int, ...]) -> int:
        """Where the body of the entity at ``start`` begins (:func:`pdi.mail.message._body_start`), its header block
        read a growing window at a time up to :data:`MAX_HEADER_BLOCK`, each window's lines whole: its last line, cut
        by the window's end, is read in the next (cut before its colon, it read as no header field, and the rest of
        the header block as the body)."""
        want = min(end - start, 64 << 10)
        while True:
            self.clock.check(start)
            head = self.octets[start : start + want]
            if start + len(head) >= end:
                return start + _body_start(head, 0, len(head))
            # up to its last line end (a CR last may be a CR LF's first half: the line it ends is read next)
            whole = max(head.rfind(b"\n"), head.rfind(b"\r", 0, len(head) - 1)) + 1
            found = _header_block_end(head, 0, whole)
            if found is not None:
                return start + found
            if want >= MAX_HEADER_BLOCK:
                where = "the message's" if not path else f"part {'.'.join(map(str, path))}'s"
                raise LimitError(f"{where} header block is more than {MAX_HEADER_BLOCK:,} octets (offset {start})")
            want = min(end - start, want * 4, MAX_HEADER_BLOCK + 1)


def _line_end_at(octets: Octets, at: int) -> int:
    """How long the line end at offset ``at`` is (CR LF, LF or CR; 0: none): the one an entity that ends at ``at``
    leaves to the delimiter line after it (RFC 2046 §5.1.1), or to the message's end, as the last part with no close
    delimiter does. Python's parser reads it as the entity's own where the entity is a multipart that it reads as a
    leaf for want of a delimiter line (or of a boundary): it takes the line end before a delimiter off a part's
    payload, but off a multipart's epilogue, which that one has none of, so that the entity runs up to the next line
    that is an enclosing multipart's delimiter, or to the message's end (its body's last line end, an empty line of
    its body, or the end of its header block's last line)."""
    after = octets[at : at + 2]
    return 2 if after == b"\r\n" else 1 if after[:1] in (b"\r", b"\n") else 0


def read_large(
    octets: Octets, limits: MailLimits | None = None, *, max_body: int | None = None, window: int = WINDOW
) -> Mail:
    """The message ``octets`` hold, read by its structure (see the module docstring): its entities' header fields,
    its parts with their spans, and the body's part read (when its body is at most ``max_body`` octets as written,
    :data:`MAX_BODY_OCTETS` unless given); ``window``: the octets read at a time in its pass.
    :class:`ParseError` or :class:`LimitError` as :func:`~pdi.mail.message.read_message` refuses."""
    limits = limits or MailLimits()
    size = len(octets)
    first = _first_line(octets[: min(size, 4096)])
    if not first.strip() and not octets[: min(size, WINDOW)].strip():
        raise ParseError("the message is empty: a message starts with its header fields", offset=0, rule="message")
    check_first_line(first)
    reading = _Reading(octets, limits, window)
    message = reading.entity(0, size, ())
    if not message.keys():
        raise ParseError("the message has no header field", offset=0, rule="message")
    parts = tuple(_mail_part(number, path, entity, span) for number, (path, entity, span)
                  in enumerate(reading.leaves))
    defects = [f"part {p.index}: {type(d).__name__}" for p in parts for d in p.entity.defects]
    defects[:0] = [f"message: {type(d).__name__}" for d in message.defects]
    mail = Mail(message, parts, tuple(defects), limits=limits, by_structure=True)  # type: ignore[arg-type]
    body = mail.body_part()
    at = next((p for p in parts if p.entity is body), None)
    most = MAX_BODY_OCTETS if max_body is None else max_body
    if at is not None and at.span is not None and at.span[2] - at.span[1] <= most:
        _read_body(octets, at, window, reading.clock)
    return mail


def _read_body(octets: Octets, part: MailPart, window: int, clock: MailClock) -> None:
    """The body's part read: its octets decoded a window at a time (:func:`part_pieces`, the octets Python's
    ``get_payload(decode=True)`` gives) into one growing buffer, kept as :data:`BODY_OCTETS` of its entity, the
    only copy its text is made from. Its octets as written, as the entity's payload, made Python's decoding copy
    them three times (a check for surrogates, their octets, those decoded; base64 split into a list of lines), and
    a body of 8-bit octets was held as twice its size. A part decoded only from its whole (:class:`UnsupportedError`
    of :func:`part_pieces`) is left to Python: its octets as written, as its payload."""
    assert part.span is not None
    decoded = bytearray()
    try:
        for piece in part_pieces(octets, part, window, clock=clock):
            decoded += piece
    except UnsupportedError:
        part.entity.set_payload(octets[part.span[1] : part.span[2]].decode("ascii", "surrogateescape"))
        return
    setattr(part.entity, BODY_OCTETS, decoded)


#: The attribute of a body's entity (:func:`read_large`) holding its octets decoded (a :class:`bytearray`).
BODY_OCTETS: Final = "pdi_body_octets"


def body_octets(entity: Message) -> bytes | bytearray | None:
    """The octets of the body's ``entity`` with its transfer encoding removed, as :func:`read_large` read them, or
    ``None`` where it did not (a message read whole, a body too long, one Python decodes)."""
    found = getattr(entity, BODY_OCTETS, None)
    return found if isinstance(found, (bytes, bytearray)) else None


def body_unread(mail: Mail) -> MailPart | None:
    """The body's part of a message :func:`read_large` read when its body was too long to be read, else ``None``."""
    body = mail.body_part()
    part = next((p for p in mail.parts if p.entity is body), None)
    if part is None or part.span is None or body is None or body.get_payload() != "" or body_octets(body) is not None:
        return None
    return part if part.span[2] > part.span[1] else None


class _NotStreamed(Exception):
    """A part that cannot be decoded a window at a time (uuencode whose ``begin`` line's mode runs past
    :data:`MAX_BEGIN_LINE`)."""

    def __init__(self, offset: int, what: str) -> None:
        super().__init__(what)
        self.offset, self.what = offset, what


def transfer_encoding(part: MailPart) -> str:
    """The part's transfer encoding as Python's ``get_payload(decode=True)`` reads it (an enclosed message's as
    :meth:`pdi.mail.message.Mail.part_octets` reads it)."""
    if part.entity.get_content_maintype() == "message":
        return str(part.entity.get("Content-Transfer-Encoding", "")).strip().lower()
    return str(part.entity.get("content-transfer-encoding", "")).lower()


_T = TypeVar("_T")

#: Where a part's decoding stands before a window: the octet of the message it goes on from, the characters carried
#: ahead of it (at most a few of base64; of quoted-printable a line's start, or ``=`` CR: a soft break running on).
_State = tuple[int, bytes]


@dataclass(frozen=True)
class PartMap:
    """How many octets a part decodes to, and places its decoding can start again (:func:`part_map`): each the
    octets decoded before it, the message's octet it goes on from, the characters carried ahead of that. ``raw``:
    a base64 part Python answers as it is written, its line ends taken out (its characters of the alphabet are
    one more than a multiple of four, and no padding ends them: ``email._encoded_words.decode_b`` decodes none)."""

    size: int
    resumes: tuple[tuple[int, int, bytes], ...]
    raw: bool = False


def part_pieces(
    octets: Octets, part: MailPart, window: int = WINDOW, mapped: PartMap | None = None, *, clock: MailClock | None = None
) -> Iterator[bytes]:
    """The octets of ``part`` (a leaf :func:`read_large` read from ``octets``), its transfer encoding removed, a
    window at a time: together the octets :meth:`pdi.mail.message.Mail.part_octets` gives of the same part read
    whole. ``mapped``: its :func:`part_map`, made here for a base64 part if not given (whether Python answers it as
    written is known only at its end). :class:`UnsupportedError` for a part whose octets are decoded only from its
    whole (see the module docstring), raised before the first piece that differs. ``clock``: the reading's
    (:func:`read_large`), else one of :attr:`~pdi.mail.message.MailLimits.max_seconds` for the work between two
    pieces (:func:`_part_clock`)."""
    assert part.span is not None
    own = clock is None
    clock = clock or _part_clock(part)
    if mapped is None and _streamed_encoding(part) in ("base64", "uuencode"):
        mapped = part_map(octets, part, window, clock=clock)
    raw = mapped is not None and mapped.raw
    for _, piece in _refused_so(part, _decoding(octets, part, window, (part.span[1], b""), clock, raw)):
        if piece:
            yield piece
            if own:
                clock.restart()


def _part_clock(part: MailPart) -> MailClock:
    """The time decoding ``part`` may take (:attr:`~pdi.mail.message.MailLimits.max_seconds`): all of it for its
    map, and again after each piece handed out (a part sent to a slow client is decoded over minutes)."""
    return MailClock(MailLimits().max_seconds, f"decoding part {part.index} of the message")


def part_map(octets: Octets, part: MailPart, window: int = WINDOW, *, clock: MailClock | None = None) -> PartMap:
    """How many octets :func:`part_pieces` gives of ``part``, and where its decoding can start again, a window
    apart (for :func:`part_range`): base64 counted, not decoded (its characters sorted as decoding sorts them),
    octets as written not read at all, quoted-printable and uuencode decoded (nothing kept; whether Python answers
    a uuencoded part as written is learnt so); what :func:`part_pieces` refuses is refused here, before anything
    is sent. ``clock``: the time it may take (:func:`_part_clock` unless given)."""
    assert part.span is not None
    clock = clock or _part_clock(part)
    _, start, end = part.span
    encoding = _streamed_encoding(part)
    if encoding not in ("base64", "quoted-printable", "uuencode"):
        return PartMap(end - start, ((0, start, b""),))
    resumes: list[tuple[int, int, bytes]] = []
    size = 0
    if encoding == "uuencode":
        try:
            for (at, carry), piece in _refused_so(part, _uu_pieces(octets, end, window, (start, b""), clock)):
                if not resumes or at != resumes[-1][1]:  # (a line many windows long: one place, where it starts)
                    resumes.append((size, at, carry))
                size += len(piece)
        except _AsWritten:  # Python's reading raised ValueError: it answers the part as written
            return PartMap(end - start, ((0, start, b""),), raw=True)
        return PartMap(size, tuple(resumes))
    if encoding == "quoted-printable":
        for (at, carry), piece in _refused_so(part, _qp_pieces(octets, start, end, window, (start, b""), clock)):
            # a line's start carried is the octets just before the window: the place is where they begin, so that
            # no place keeps a line (a stranger's lines almost a window long would make each map some windows)
            resumes.append((size, at, carry) if len(carry) <= 2 else (size, at - len(carry), b""))
            size += len(piece)
        return PartMap(size, tuple(resumes))
    as_written: list[tuple[int, int, bytes]] = []
    written = 0
    for (at, carry), text, octets_written in _base64_texts(octets, end, window, (start, b""), clock):
        if text is None:  # Python answers it as written, its line ends taken out
            return PartMap(written, tuple(as_written), raw=True)
        resumes.append((size, at, carry))
        size += len(text) // 4 * 3 - (len(text) - len(text.rstrip(b"=")))
        as_written.append((written, at, b""))
        written += octets_written
    return PartMap(size, tuple(resumes))


def part_range(
    octets: Octets, part: MailPart, mapped: PartMap, first: int, stop: int, window: int = WINDOW
) -> Iterator[bytes]:
    """The octets ``first`` to ``stop`` (not included) of what :func:`part_pieces` gives of ``part``, decoded from
    the last place of ``mapped`` (:func:`part_map`) before ``first``, not from the part's start."""
    if stop <= first:
        return
    assert part.span is not None
    clock = _part_clock(part)
    encoding = _streamed_encoding(part)
    if not encoding or (encoding == "uuencode" and mapped.raw):  # the octets as written
        at, end = part.span[1] + first, part.span[1] + min(stop, mapped.size)
        for offset in range(at, end, window):
            yield octets[offset : min(end, offset + window)]
        return
    k = max(0, bisect.bisect_right([decoded for decoded, _, _ in mapped.resumes], first) - 1)
    decoded, at, carry = mapped.resumes[k] if mapped.resumes else (0, part.span[1], b"")
    for _, piece in _refused_so(part, _decoding(octets, part, window, (at, carry), clock, mapped.raw)):
        if decoded + len(piece) > first:
            yield piece[max(0, first - decoded) : stop - decoded]
            clock.restart()
        decoded += len(piece)
        if decoded >= stop:
            return


def _streamed_encoding(part: MailPart) -> str:
    """``"base64"``, ``"quoted-printable"``, ``"uuencode"`` or ``""`` (octets as written) for a part."""
    encoding = transfer_encoding(part)
    if encoding in ("base64", "quoted-printable"):
        return encoding
    if encoding in ("x-uuencode", "uuencode", "uue", "x-uue") and part.entity.get_content_maintype() != "message":
        return "uuencode"
    return ""


def _decoding(
    octets: Octets, part: MailPart, window: int, state: _State, clock: MailClock, raw: bool = False
) -> Iterator[tuple[_State, bytes]]:
    """The pieces of ``part`` decoded from ``state`` on, each with the state before it (``raw``: a base64 or
    uuencoded part that Python answers as written, :attr:`PartMap.raw`), ``clock`` looked at a window at a time."""
    assert part.span is not None
    _, start, end = part.span
    encoding = _streamed_encoding(part)
    if encoding == "base64" and raw:
        for at in range(state[0], end, window):
            yield (at, b""), octets[at : min(end, at + window)].translate(None, b"\r\n")
    elif encoding == "base64":
        yield from _base64_pieces(octets, end, window, state, clock)
    elif encoding == "quoted-printable":
        yield from _qp_pieces(octets, start, end, window, state, clock)
    elif encoding == "uuencode" and not raw:
        yield from _uu_pieces(octets, end, window, state, clock)
    else:
        for at in range(state[0], end, window):
            yield (at, b""), octets[at : min(end, at + window)]


def _refused_so(part: MailPart, items: Iterator[_T]) -> Iterator[_T]:
    """``items``, a part that cannot be decoded a window at a time refused naming it (:class:`UnsupportedError`)."""
    assert part.span is not None
    _, start, end = part.span
    try:
        yield from items
    except _NotStreamed as exc:
        raise UnsupportedError(
            f"part {part.index} of the message: {exc.what} (offset {exc.offset}), which pdi decodes only in a"
            f" message read whole (at most {STREAMED_FROM:,} octets and {MailLimits().max_lines:,} lines); its octets as written are byte="
            f"{start},{end}"
        ) from None


#: The octets of a line of uuencode read to decode it: its length character and the characters of the most octets
#: a line holds (63: 85 characters; ``email.message._decode_uu`` reads no more of a line whose rest is not blank).
_UU_KEPT: Final = 128
#: The longest mode (the octal number after ``begin``) of a uuencoded part's ``begin`` line read (octets): a longer
#: one is refused (:class:`UnsupportedError`), as no uuencoder writes one.
MAX_BEGIN_LINE: Final = 64 << 10
#: A ``begin`` line (``email.message._decode_uu``: one that starts ``begin`` and a space) after a line end.
_BEGIN: Final = re.compile(rb"(?<=[\r\n])begin ")
#: A line end as ``bytes.splitlines`` finds one.
_LINE_END: Final = re.compile(rb"\r\n?|\n")
#: The blanks that ``_decode_uu`` strips from an ``end`` line (CR and LF end a line: never in one).
_UU_BLANKS: Final = b" \t\f"


class _AsWritten(Exception):
    """Python's reading of a uuencoded part raised :class:`ValueError` (no ``begin`` line, an empty line before
    ``end``, a line that does not decode): ``get_payload(decode=True)`` answers the part as written."""


class _UuLine:
    """A line of uuencode met a piece at a time (it runs over windows): its first :data:`_UU_KEPT` octets, its
    length, and whether it is an ``end`` line (blanks, ``end``, blanks), in memory bounded whatever its length."""

    __slots__ = ("head", "size", "state", "word")

    def __init__(self) -> None:
        self.head, self.size, self.word = b"", 0, b""
        self.state = 0  # 0: blanks so far; 1: "end" begun; 2: "end" then blanks; 3: no end line

    def feed(self, piece: bytes) -> None:
        if len(self.head) < _UU_KEPT:
            self.head += piece[: _UU_KEPT - len(self.head)]
        self.size += len(piece)
        state = self.state
        if state == 0:
            piece = piece.lstrip(_UU_BLANKS)
            state = 1 if piece else 0
        if state == 1:
            need = 3 - len(self.word)
            self.word, piece = self.word + piece[:need], piece[need:]
            state = 3 if not b"end".startswith(self.word) else 2 if len(self.word) == 3 else 1
        if state == 2 and piece.strip(_UU_BLANKS):
            state = 3
        self.state = state


def _uu_line(head: bytes, size: int, end_line: bool) -> bytes | None:
    """What ``email.message._decode_uu`` makes of a line after ``begin`` (``head``: its first :data:`_UU_KEPT`
    octets; ``size``: its length): ``None`` for the ``end`` line; :class:`_AsWritten` where it raises.

    It tries ``binascii.a2b_uu`` of the line, then of its first ``((length - 32) & 63) * 4 + 5) // 3`` octets: the
    length character and the characters it decodes; ``a2b_uu`` reads no more of a line than those (it checks that
    the rest is blank, and refuses it else), so the second gives what the first gives when the first decodes."""
    import binascii

    if size == 0:  # "Truncated input"
        raise _AsWritten
    if end_line:
        return None
    try:
        return binascii.a2b_uu(head[: (((head[0] - 32) & 63) * 4 + 5) // 3])
    except binascii.Error:
        raise _AsWritten from None


def _uu_begin(octets: Octets, start: int, end: int, window: int, clock: MailClock) -> int | None:
    """Where the encoded lines of the uuencoded body ``octets[start:end]`` start: after its first line that starts
    ``begin`` and a space and whose next word ``int(mode, 8)`` reads (``email.message._decode_uu``), found by a
    regular expression a window at a time; ``None`` if there is none."""
    previous, offset = b"\n", start  # the body's start is a line's start
    while offset < end:
        clock.check(offset)
        text = previous + octets[offset : min(end, offset + window)]
        base = offset - len(previous)
        for found in _BEGIN.finditer(text):
            at = base + found.start()
            clock.tick(at)  # (a window of many begin lines whose mode is no number)
            ended = _LINE_END.search(text, found.end())  # the line in hand (a stranger's many begin lines)
            if ended is not None:
                mode = text[found.end() : ended.start()].partition(b" ")[0]
            else:  # it runs past the window
                line = octets[at + 6 : min(end, at + 7 + MAX_BEGIN_LINE)]
                cut = _LINE_END.search(line)
                mode = (line[: cut.start()] if cut is not None else line).partition(b" ")[0]
            if len(mode) > MAX_BEGIN_LINE:  # (wherever a window cuts it)
                raise _NotStreamed(at, f"its uuencode has a begin line whose mode is more than {MAX_BEGIN_LINE:,}"
                                       " octets")
            try:
                int(mode, 8)
            except ValueError:
                continue
            return _next_line(octets, at, end, window, clock)
        offset += len(text) - len(previous)
        previous = text[-6:]
    return None


def _next_line(octets: Octets, at: int, end: int, window: int, clock: MailClock) -> int:
    """Where the line after the one at ``at`` starts (``end`` if it is the last), read a window at a time."""
    while at < end:
        clock.check(at)
        text = octets[at : min(end, at + window + 1)]  # one more: a CR's LF
        ended = _LINE_END.search(text, 0, len(text) - 1 if at + len(text) < end else len(text))
        if ended is not None:
            return at + (ended.end() if text[ended.start() : ended.start() + 2] != b"\r\n" else ended.start() + 2)
        if at + len(text) >= end:  # the last piece searched whole: the line runs to the end (a piece of one octet
            return end             # moved ``at`` by none, and a begin line unended at the body's end spun forever)
        at += len(text) - 1
    return end


def _uu_pieces(
    octets: Octets, end: int, window: int, state: _State, clock: MailClock
) -> Iterator[tuple[_State, bytes]]:
    """A uuencoded body decoded a window at a time from ``state`` as ``email.message._decode_uu`` decodes the whole
    (``get_payload(decode=True)``): its ``begin`` line found (:func:`_uu_begin`; ``state``'s carry is ``B`` at a
    line after it), then each line that ends in the window decoded (:func:`_uu_line`), a line longer than a window
    kept as :class:`_UuLine`, a CR at a window's end held for an LF after it; the ``end`` line ends the decoding.
    Each piece's state is where the first line it decodes starts. :class:`_AsWritten` where Python's reading
    raises (the part's map learns it first)."""
    at, carry = state
    if carry != b"B":
        begun = _uu_begin(octets, at, end, window, clock)
        if begun is None:  # "`begin` line not found"
            raise _AsWritten
        at = begun
    line: _UuLine | None = None  # a line begun in a window before, not ended
    line_at, held, offset = at, b"", at
    while offset < end:
        clock.check(offset)
        read = octets[offset : min(end, offset + window)]
        text, base = held + read, offset - len(held)
        offset += len(read)
        held = b""
        if offset < end and text.endswith(b"\r"):  # perhaps a CR LF's CR
            text, held = text[:-1], b"\r"
        before, position = line_at, 0
        decoded: list[bytes] = []
        for piece in text.splitlines(keepends=True):
            position += len(piece)
            content = piece.rstrip(b"\r\n")
            if len(content) == len(piece) and offset < end:  # the window's last line goes on in the next
                line = line or _UuLine()
                line.feed(content)
                break
            if line is not None:
                line.feed(content)
                octets_of = _uu_line(line.head, line.size, line.state == 2)
                line = None
            else:
                octets_of = _uu_line(content[:_UU_KEPT], len(content), content.strip(_UU_BLANKS) == b"end")
            if octets_of is None:  # the end line
                yield (before, b"B"), b"".join(decoded)
                return
            decoded.append(octets_of)
            line_at = base + position
        yield (before, b"B"), b"".join(decoded)
    if line is not None:  # (a window that ended with a CR, held, and the part's end)
        octets_of = _uu_line(line.head, line.size, line.state == 2)
        yield (line_at, b"B"), octets_of or b""


#: The base64 alphabet.
_ALPHABET: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
#: The octets base64 decoding passes over (Python's falls back to ``binascii``'s lenient mode, which skips them):
#: all but the alphabet and ``=``, line ends among them.
_SKIPPED: Final = bytes(range(256)).translate(None, _ALPHABET + b"=")


def _base64_step(carry: bytes, written: bytes) -> tuple[bytes, bytes, bool]:
    """A window of base64 ``written`` after ``carry``, read as ``get_payload(decode=True)`` reads the whole: the
    characters decoded now (whole quads of the alphabet; the last padded if the decoding ends here), what is
    carried to the next window (the quad begun, and an ``=`` after two of it), and whether the decoding ends here.

    Python decodes the whole strictly if it can, else as ``binascii.a2b_base64`` does leniently: both give the
    same octets, those of the lenient reading, which skips what is not the alphabet or ``=``, skips an ``=`` that
    follows fewer than two characters of a quad, and reads no more after ``=`` ends a quad of two or three
    (``==`` after two, ``=`` after three)."""
    text = carry + written.translate(None, _SKIPPED)
    if b"=" not in text:
        cut = len(text) - len(text) % 4
        return text[:cut], text[cut:], False
    decoded: list[bytes] = []
    carry = b""
    for at in range(0, len(text), _SORTED_AT_A_TIME):  # (a window of "QUJD=" again and again is 200,000 runs)
        quads, carry, ended = _base64_sorted(carry + text[at : at + _SORTED_AT_A_TIME])
        decoded.append(quads)
        if ended:
            break
    return b"".join(decoded), carry, ended


#: The characters of base64 holding ``=`` sorted at a time (:func:`_base64_sorted`): each ``=`` costs some 80 octets.
_SORTED_AT_A_TIME: Final = 64 << 10


def _base64_sorted(text: bytes) -> tuple[bytes, bytes, bool]:
    """:func:`_base64_step` of ``text`` (the alphabet and ``=`` alone, a quad begun before it first)."""
    # each "=" by where in its quad it falls, all by builtins (a stranger's "QUJD=" again and again made a loop of
    # Python's over the runs of "=" cost 0.25 s a MiB): 0-3, and 4 more where characters come before it
    segments = text.split(b"=")
    counts = list(itertools.accumulate(map(len, segments)))  # the alphabet's characters before each "="
    marks = bytes(map(operator.add, map((4).__rmod__, counts[:-1]), map((4).__mul__, map(bool, segments))))
    ends = [found for found in (marks.find(3), marks.find(7), marks.find(2, 1)) if found >= 0]
    if ends:  # "=" after three characters of a quad, or the second "=" after two: nothing after it is read
        first = min(ends)
        quad = counts[first] % 4
        return b"".join(segments[: first + 1]) + b"=" * (4 - quad), b"", True
    alphabet = b"".join(segments)
    quad = len(alphabet) % 4
    pending = b"=" if quad == 2 and text.endswith(b"=") else b""  # its second may begin the next window
    return alphabet[: len(alphabet) - quad], alphabet[len(alphabet) - quad :] + pending, False


def _base64_texts(
    octets: Octets, end: int, window: int, state: _State, clock: MailClock
) -> Iterator[tuple[_State, bytes | None, int]]:
    """Each window of base64 from ``state`` on, with the state before it: the characters decoded there
    (:func:`_base64_step`; after the last window, the quad begun padded, or ``None`` if it is one character, for
    which Python answers the whole as written) and the octets written there less its line ends."""
    carry = state[1]
    for at in range(state[0], end, window):
        clock.check(at)
        before = carry
        written = octets[at : min(end, at + window)]
        text, carry, ended = _base64_step(carry, written)
        yield (at, before), text, len(written) - written.count(b"\r") - written.count(b"\n")
        if ended:
            return
    quad = carry.rstrip(b"=")
    yield (end, carry), None if len(quad) == 1 else quad + b"=" * (4 - len(quad)) if quad else b"", 0


def _base64_pieces(
    octets: Octets, end: int, window: int, state: _State, clock: MailClock
) -> Iterator[tuple[_State, bytes]]:
    """Base64 decoded a window at a time from ``state``: each piece what the whole decodes to there
    (:func:`_base64_texts`)."""
    import binascii

    for before, text, _ in _base64_texts(octets, end, window, state, clock):
        if text is None:  # (a part's map says so first: :attr:`PartMap.raw`)
            raise _NotStreamed(end, "its base64 ends with one character of a quad, which Python answers as written")
        yield before, binascii.a2b_base64(text) if text else b""


def _qp_pieces(
    octets: Octets, start: int, end: int, window: int, state: _State, clock: MailClock
) -> Iterator[tuple[_State, bytes]]:
    """Quoted-printable decoded a window at a time from ``state`` as ``quopri.decodestring`` (``binascii.a2b_qp``)
    decodes the whole: each window cut after its last line end (no escape reaches past one), or in a line longer
    than a window where no escape (``=XX``, ``==``, ``=`` and its line end) is cut (:func:`_qp_cut`); ``=`` CR,
    which Python reads as a soft break running to the next LF, carried as such (``=`` CR) across the windows it
    runs over."""
    import quopri

    carry = state[1]
    for at in range(state[0], end, window):
        clock.check(at)
        before = carry
        text = carry + octets[at : min(end, at + window)]
        if at + window >= end:
            carry = b""
        else:
            cut = text.rfind(b"\n") + 1  # a line's escapes never reach past its end
            if cut == 0 and b"=\r" in text and quopri.decodestring(text + b"G") == quopri.decodestring(text):
                # a soft break "=" CR runs on past the window (what follows it is not read, up to an LF)
                yield (at, before), quopri.decodestring(text)
                carry = b"=\r"
                continue
            if cut == 0:  # a line longer than a window (and no soft break running on in it)
                cut = _qp_cut(text)
            text, carry = text[:cut], text[cut:]
        yield (at, before), quopri.decodestring(text) if text else b""
    if carry:
        yield (end, carry), quopri.decodestring(carry)


#: The hexadecimal digits, as ``binascii.a2b_qp`` reads an escape's.
_HEX: Final = frozenset(b"0123456789ABCDEFabcdef")


def _qp_cut(text: bytes) -> int:
    """Where ``text`` (quoted-printable read from an escape's start on, no LF in it, no soft break ``=`` CR running
    on) can be cut, among its last few octets, so that each side decodes to what the whole decodes to there.

    ``binascii.a2b_qp`` reads left to right: an ``=`` begins an escape (``=XX``, ``==``, ``=`` alone when neither
    follows; ``=`` at the very end is dropped), anything else is itself. A cut at ``c`` is whole unless an escape
    begins at ``c - 1``, or at ``c - 2`` with two hex digits after it; of three places in a row one is whole (an
    escape is at most three octets). Whether an ``=`` begins an escape is the parity of the run of ``=`` it ends
    (its first begins one: no escape ends with ``=`` but ``==``), so no more than that run is looked at: a line
    of ``=`` every octet or two, many windows long, is cut as any other (it was refused before, past 4 MiB)."""
    for cut in range(len(text) - 2, max(0, len(text) - 8), -1):
        if not (_escape_at(text, cut - 1) or (
                _escape_at(text, cut - 2) and text[cut - 1] in _HEX and text[cut] in _HEX)):
            return cut
    return 0  # (a text of a few octets: carried whole)


def _escape_at(text: bytes, at: int) -> bool:
    """Whether an escape begins at ``text[at]`` (:func:`_qp_cut`): an ``=`` that is not the second of ``==``."""
    if at < 0 or text[at] != 0x3D:
        return False
    run = at + 1 - len(text[: at + 1].rstrip(b"="))  # the run of "=" that ends at it
    return run % 2 == 1


def decoded_size(octets: Octets, part: MailPart) -> int:
    """How many octets :func:`part_pieces` gives of ``part`` (:attr:`PartMap.size` of :func:`part_map`)."""
    return part_map(octets, part).size


def part_octets(octets: Octets, part: MailPart) -> bytes:
    """The octets of ``part`` whole (:func:`part_pieces` joined): for an evaluator that answers them in hand."""
    return b"".join(part_pieces(octets, part))
