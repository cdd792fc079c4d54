"""One e-mail message read within limits: its header fields, its body's text, its parts (``docs/email.md``).

:func:`read_message` parses the octets with Python's :mod:`email`
(``email.policy.default``), after refusing what no message is and what
would cost too much (:class:`MailLimits`); nothing is written back: the
octets a deposit stores are the message's own.

* **The body's text** (:func:`pdi.fragments.email_text.body_text`, with the
  fragments that count in it): the part
  :meth:`email.message.EmailMessage.get_body` finds with the preference
  ``("plain", "html")`` (the first ``text/plain`` part, depth first, that is
  not an attachment and not past the start part of a ``multipart/related``;
  else the first ``text/html`` so found); its octets with the transfer
  encoding removed (Python's ``get_payload(decode=True)``), decoded in its
  ``charset`` parameter (US-ASCII when none; a name pdi's charsets do not
  know as UTF-8), an undecodable octet read as U+FFFD; every line ending
  written CRLF. A ``text/html`` body is then read as its *page text*
  (:func:`pdi.fragments.pagetext.markup_page_text`, the text a text
  directive matches in: one line per block). A message with neither has an
  empty body text.
* **The parts** (:meth:`Mail.parts`): the leaves of the MIME tree in depth
  first order, numbered from 0: every entity that is not a multipart, a
  ``message/rfc822`` (or other ``message/*``) part counted as one leaf, not
  entered: the parser reads its body as written, as a leaf's
  (:func:`pdi.mail.parser.parse`), so that an enclosed message nested in another at any depth
  is kept, as :mod:`pdi.mail.large` keeps it, and nothing recurses into it
  (a ``message/delivery-status``'s blocks are read as Python reads them);
  a message that is not multipart is its own part 0.
* **A part's name** (:meth:`Mail.find_part`): its number; ``cid:ID``, the
  part whose ``Content-ID`` is ``ID`` (RFC 2392, compared as
  :mod:`pdi.mhtml` compares them); else the first part whose
  ``Content-Location`` is the name (compared as :mod:`pdi.mhtml` compares
  locations), else the first whose file name (``Content-Disposition``'s
  ``filename``, else ``Content-Type``'s ``name``, RFC 2231 and RFC 2047
  decoded) is the name.

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage, Message
from typing import Any, Final

from pdi import charsets, formats
from pdi._wording import plural
from pdi.charsets.rfc2047 import decode_header, without_languages
from pdi.errors import LimitError, NotFoundError, ParseError, UnsupportedError
from pdi.mail.delimiters import WINDOW, Delimiters, Octets
from pdi.mail.limits import (
    MailLimits,
    too_deep,
    too_deep_for_python,
    too_many_entities,
    too_many_fields,
)
from pdi.mail.parser import FieldTooLong, TooManyFields, bounded_policy, parse

__all__ = [
    "MAX_MESSAGE_ID_OCTETS", "THREAD_HEAD", "Mail", "MailLimits", "MailPart", "ThreadIds",
    "entity_span", "head_message_id", "ids_written", "line_count",
    "message_id_of_mid", "message_ids", "mid_name", "mid_url", "more_lines_than", "read_head", "read_message",
    "thread_ids",
    "too_many_entities",
]

#: A line that may be a header field: a field name (RFC 5322 §3.6.8: printable ASCII but ``:``) and a colon.
_FIELD_LIKE: Final = re.compile(rb"(?:^|(?<=[\r\n]))[!-9;-~]+[ \t]*:", re.MULTILINE)
_FIELD_NAME: Final = re.compile(rb"[!-9;-~]+[ \t]*:")
_NUL: Final = b"\x00"
#: The first octets of a message its thread's ids are read from (:func:`thread_ids`): its header fields, as a rule.
THREAD_HEAD: Final = 1 << 20
#: The longest Message-ID a message is named by (octets, its angle brackets counted): RFC 5322 §2.1.1 bounds a
#: line at 998 octets, and a msg-id (§3.6.4) holds no folding white space, so no message's Message-ID is longer.
#: A longer one would give a name as long, which no resolver's URL may carry (64 KiB at most): the message is
#: named by the next serial, as one without a Message-ID is (:func:`mid_name`).
MAX_MESSAGE_ID_OCTETS: Final = 998


@dataclass(frozen=True)
class MailPart:
    """One leaf of a message's MIME tree: its number, where it is, and what it is called."""

    index: int
    #: the numbers of the entities above it and its own, from the top (``(1, 0)``: the first of the second)
    path: tuple[int, ...]
    media_type: str
    charset: str | None
    filename: str | None
    content_id: str | None
    location: str | None
    disposition: str | None
    entity: Message = field(repr=False, compare=False)
    #: where it lies in the message's octets, for a message read by its structure (:func:`pdi.mail.large.read_large`):
    #: the start of its header block, of its body, and the end of its body; ``None`` when read whole
    span: tuple[int, int, int] | None = field(default=None, repr=False, compare=False)

    def octets(self) -> bytes:
        """The part's octets with its transfer encoding removed (an enclosed message read whole, its body as
        written, or one parsed by another reader, as Python writes it; :meth:`Mail.part_octets` gives its octets
        as the message holds them)."""
        if self.entity.get_content_maintype() == "message":
            inner = self.entity.get_payload()
            if isinstance(inner, list) and inner and isinstance(inner[0], Message):
                import email.policy

                return bytes(inner[0].as_bytes(policy=email.policy.compat32))
        payload = self.entity.get_payload(decode=True)
        return payload if isinstance(payload, bytes) else b""

    @property
    def served_type(self) -> str:
        """The media type it is answered with (a text part's with its charset)."""
        return f"{self.media_type}; charset={self.charset}" if self.charset else self.media_type


@dataclass(frozen=True)
class Mail:
    """A message as :func:`read_message` read it."""

    message: EmailMessage
    parts: tuple[MailPart, ...]
    #: what Python's parser found wrong but read past (its defects' class names, with the part's number)
    defects: tuple[str, ...]
    #: the octets it was read from
    data: bytes = field(default=b"", repr=False, compare=False)
    #: the limits it was read within (:func:`entity_span` cuts its multiparts again within them)
    limits: MailLimits = field(default_factory=MailLimits, repr=False, compare=False)
    #: whether it was read by its structure (:func:`pdi.mail.large.read_large`: no :attr:`data`, its parts' spans
    #: known, its body's octets read alone), not whole
    by_structure: bool = field(default=False, compare=False)

    def part_octets(self, part: MailPart) -> bytes:
        """A part's octets: its body with its transfer encoding removed; an enclosed message (``message/*``)
        exactly as the message holds it (:func:`entity_span`), its transfer encoding removed if it has one."""
        if part.entity.get_content_maintype() != "message" or not self.data:
            return part.octets()
        span = entity_span(self.data, self.message, part.path, self.limits)
        if span is None:  # the parser read past a defect the octets cannot be cut along: as Python writes it
            return part.octets()
        body = self.data[_body_start(self.data, *span) : span[1]]
        encoding = str(part.entity.get("Content-Transfer-Encoding", "")).strip().lower()
        if encoding == "base64":  # as get_payload(decode=True) decodes a base64 part (it raises nothing)
            from email._encoded_words import decode_b  # type: ignore[import-not-found]

            return bytes(decode_b(b"".join(body.splitlines()))[0])
        if encoding == "quoted-printable":
            import quopri

            return quopri.decodestring(body)
        return body

    def header(self, name: str) -> str | None:
        """A header field's value as written (the first of several), unfolded, its RFC 2047 encoded words
        decoded (comments and all: ``jgb at example.com (Jesus M. Gonzalez-Barahona)``), or ``None``."""
        import email.errors

        raw = self.raw_header(name)
        if raw is None:
            return None
        try:
            return _header_text(without_languages(decode_header(raw, text=True)))  # RFC 2231 §5: =?UTF-8*FR?…
        except (LookupError, ValueError, UnicodeError, email.errors.HeaderParseError):
            return raw  # an encoded word that does not decode (its charset, its base64): as written

    def raw_header(self, name: str) -> str | None:
        """A header field's value as written (folded lines joined), or ``None``."""
        for key, value in self.message.raw_items():
            if key.lower() == name.lower():
                return " ".join(_octets_read(str(value)).split())
        return None

    def _ids(self, name: str) -> tuple[str, ...]:
        """The message ids of a header field (the first of several), as :func:`ids_written` reads them."""
        for key, value in self.message.raw_items():
            if key.lower() == name.lower():
                return ids_written(str(value))
        return ()

    @property
    def message_id(self) -> str | None:
        """The ``Message-ID`` (with its angle brackets; one that is not UTF-8, its ``mid:`` URL), or ``None``."""
        found = self._ids("Message-ID")
        return found[0] if found else None

    @property
    def in_reply_to(self) -> tuple[str, ...]:
        """The message ids of ``In-Reply-To``."""
        return self._ids("In-Reply-To")

    @property
    def references(self) -> tuple[str, ...]:
        """The message ids of ``References``, oldest first."""
        return self._ids("References")

    @property
    def thread(self) -> ThreadIds:
        """Its ids as a thread reads them (:class:`ThreadIds`)."""
        return _thread(self.message_id, self.in_reply_to, self.references)

    def body_part(self) -> Message | None:
        """The entity the body's text is read from (see the module docstring), or ``None``."""
        body = self.message.get_body(preferencelist=("plain", "html"))
        return body

    def body_index(self) -> int | None:
        """The number of the part the body's text is read from, or ``None``."""
        body = self.body_part()
        return next((p.index for p in self.parts if p.entity is body), None)

    def facts(self, characters: int | None) -> dict[str, Any]:
        """What ``pdi get --info`` and the reader show of the message, as JSON values, its body text being
        ``characters`` long (``None`` when its text is past a limit:
        :func:`pdi.fragments.email_text.message_facts` reads it)."""
        at = self.body_index()
        return {
            "from": self.header("From"),
            "to": self.header("To"),
            "cc": self.header("Cc"),
            "date": self.header("Date"),
            "subject": self.header("Subject"),
            "message_id": self.message_id,
            "in_reply_to": list(self.in_reply_to),
            "references": list(self.references),
            "body": None if at is None else {
                "part": at, "media_type": self.parts[at].media_type, "charset": self.parts[at].charset,
                "characters": characters,
            },
            "parts": [
                {"part": p.index, "media_type": p.media_type, "charset": p.charset, "filename": p.filename,
                 "content_id": p.content_id, "location": p.location, "disposition": p.disposition}
                for p in self.parts
            ],
            "defects": list(self.defects),
        }

    def find_part(self, name: object) -> MailPart:
        """The part ``name`` names (a number, ``cid:…``, a Content-Location or a file name); else :class:`NotFoundError`."""
        from pdi.mhtml.locations import cid_of, comparable, is_cid

        if isinstance(name, int) and not isinstance(name, bool):
            if 0 <= name < len(self.parts):
                return self.parts[name]
            raise NotFoundError(
                f"part={name}: the message has {plural(len(self.parts), 'part')}, numbered from 0"
            )
        if not isinstance(name, str) or not name:
            raise ParseError(f"part= takes one part number or name, not {name!r}", rule="part")
        if is_cid(name):
            wanted = cid_of(name)
            for part in self.parts:
                if part.content_id is not None and part.content_id == wanted:
                    return part
            raise NotFoundError(f"part={name}: no part of the message has the Content-ID <{wanted}>")

        def key(location: str) -> str:
            try:
                return comparable(location)
            except Exception:  # a location that is no URI is compared as written
                return location

        for part in self.parts:
            if part.location is not None and key(part.location) == key(name):
                return part
        for part in self.parts:
            if part.filename is not None and part.filename == name:
                return part
        raise NotFoundError(f"part={name}: no part of the message has that Content-Location or file name")


@dataclass(frozen=True)
class ThreadIds:
    """What a thread needs of a message (``docs/email.md`` §4), as the catalog's thread index keeps it.

    ``message_id``: its ``Message-ID``; ``parent``: the id it replies to, the
    last of ``In-Reply-To``, else the last of ``References``; ``references``:
    every id it names, those of ``References`` oldest first, then those of
    ``In-Reply-To`` that ``References`` lacks. Ids keep their angle brackets
    and are compared exactly; an id holding octets that are not UTF-8 is its
    ``mid:`` URL (:func:`ids_written`).
    """

    message_id: str | None
    parent: str | None
    references: tuple[str, ...]


def _thread(message_id: str | None, in_reply_to: tuple[str, ...], references: tuple[str, ...]) -> ThreadIds:
    parent = in_reply_to[-1] if in_reply_to else (references[-1] if references else None)
    named = set(references)  # looked up once an id, not along all of References (a message may name 100,000s)
    return ThreadIds(message_id, parent, references + tuple(i for i in dict.fromkeys(in_reply_to) if i not in named))


def thread_ids(head: bytes) -> ThreadIds:
    """The :class:`ThreadIds` of the message whose first octets are ``head`` (at least its header fields),
    read from its header fields alone, as :attr:`Mail.thread` reads them from the whole message."""
    fields = _header_fields(head)

    def ids(name: str) -> tuple[str, ...]:
        # the value as written (its 8-bit octets kept as surrogates): compat32's get() gives a field holding any
        # as a Header whose str() writes each such octet U+FFFD, where Mail reads them as ids_written does
        value = next((v for k, v in fields.raw_items() if k.lower() == name.lower()), None)
        return ids_written(str(value)) if value is not None else ()

    found = ids("Message-ID")
    return _thread(found[0] if found else None, ids("In-Reply-To"), ids("References"))


def message_ids(value: str) -> tuple[str, ...]:
    """The ``<…>`` message ids written in a field (RFC 5322 §3.6.4), in order; comments and phrases left out."""
    return tuple(re.findall(r"<[^<>\s]+>", value))


def ids_written(value: str) -> tuple[str, ...]:
    """The message ids of a header field's value as Python's parser keeps it (each 8-bit octet a surrogate), in
    order (:func:`message_ids`): its folded lines joined, its UTF-8 read (RFC 6532); an id holding an octet that
    is not UTF-8 (``<\xe9@x>`` in Latin-1) is its ``mid:`` URL, each such octet ``%XX`` and each ``%`` ``%25``
    (RFC 2392 §2, as RFC 3986 §2.1 escapes octets: ``mid:%E9@x``), so that no two ids read the same; an id that
    is UTF-8 keeps its angle brackets, so never reads as one of those."""
    kept = value.encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")  # not UTF-8: surrogates
    return tuple(_mid_of_octets(i) if _NOT_UTF8.search(i) else i for i in message_ids(" ".join(kept.split())))


#: An octet that is not UTF-8, as Python's ``surrogateescape`` keeps it.
_NOT_UTF8: Final = re.compile("[\udc80-\udcff]")


def _mid_of_octets(message_id: str) -> str:
    """The ``mid:`` URL of an id holding octets that are not UTF-8 (as surrogates; see :func:`ids_written`)."""
    inner = message_id.removeprefix("<").removesuffix(">")
    return "mid:" + _NOT_UTF8.sub(lambda m: f"%{ord(m.group()) - 0xDC00:02X}", inner.replace("%", "%25"))


def mid_url(message_id: str) -> str:
    """The RFC 2392 ``mid:`` URL of a message id (``<a@b>`` → ``mid:a@b``): the foreign id a message is named by.

    RFC 2392 §2: its ``%`` is written ``%25`` (a ``%`` of the URL is an escaped octet), its other characters
    as they are (a UTF-8 id, RFC 6532, keeps its letters: ``mid:café@example.org``). An id that is not UTF-8
    is read as its ``mid:`` URL already (:func:`ids_written`), and is that."""
    if message_id.startswith("mid:"):
        return message_id
    return "mid:" + message_id.strip().removeprefix("<").removesuffix(">").replace("%", "%25")


def mid_name(message_id: str | None) -> tuple[str | None, str | None]:
    """The foreign id a message whose Message-ID is ``message_id`` is named by (its :func:`mid_url`), or ``None``
    (the next serial names it), with why not: a Message-ID longer than :data:`MAX_MESSAGE_ID_OCTETS`."""
    if message_id is None:
        return None, None
    from urllib.parse import unquote_to_bytes

    # its octets as written, angle brackets counted (an id that is not UTF-8: those its mid: URL escapes)
    size = (len(unquote_to_bytes(message_id[4:])) + 2 if message_id.startswith("mid:")
            else len(message_id.encode("utf-8", "surrogateescape")))
    if size > MAX_MESSAGE_ID_OCTETS:
        return None, (f"its Message-ID is {size:,} octets, longer than the {MAX_MESSAGE_ID_OCTETS} of a line of a"
                      " message (RFC 5322 §2.1.1): it is named by the next serial")
    return mid_url(message_id), None


def message_id_of_mid(url: str) -> str:
    """The message id an RFC 2392 ``mid:`` URL names (``mid:a%40b`` and ``mid:a@b/part`` → ``<a@b>``), as
    :func:`ids_written` reads it (its octets %-decoded; octets that are not UTF-8: its ``mid:`` URL, ``%XX``
    upper case); a ``<…>`` id is taken as it is. :class:`ParseError` for anything else."""
    from urllib.parse import unquote_to_bytes

    text = url.strip()
    if text.startswith("<") and text.endswith(">") and message_ids(text) == (text,):
        return text
    if text[:4].lower() != "mid:":
        raise ParseError(f"{text!r} is neither a mid: URL (RFC 2392) nor a <Message-ID>", rule="mid")
    octets = unquote_to_bytes(text[4:].split("/", 1)[0])
    found = "<" + octets.decode("utf-8", "surrogateescape") + ">"
    if message_ids(found) != (found,):
        raise ParseError(f"{text!r} names no message id (mid:LOCAL@DOMAIN, RFC 2392)", rule="mid")
    return _mid_of_octets(found) if _NOT_UTF8.search(found) else found


def head_message_id(head: bytes) -> str | None:
    """The ``Message-ID`` of the message whose first octets are ``head`` (its header fields), or ``None``."""
    return thread_ids(head).message_id


def read_head(head: bytes, limits: MailLimits | None = None) -> Mail:
    """The message whose first octets are ``head``, read from its header fields alone (its body left out, unread):
    what a list of messages shows of each (:meth:`Mail.header`) and its thread's ids (:attr:`Mail.thread`), from
    the first :data:`THREAD_HEAD` octets of a message however large it is. Refused as :func:`read_message`
    refuses the same fields."""
    return read_message(head[: _head_end(head)] + b"\n\n", limits)


def _head_end(head: bytes) -> int:
    """Where the header fields of the message whose first octets are ``head`` end, as Python's parser ends them:
    at its first empty line (of any line end: CR LF, LF or CR, as the parser cuts lines) or its first line that is
    no header field. Only ``\\n\\n`` and ``\\r\\n\\r\\n`` were looked for: a message of CR line ends (or an LF line
    then a CR LF one) was read whole, its body and all, and refused for what its body holds (a multipart's many
    delimiter lines) where its header fields alone were asked for."""
    for line_start, line_end in _lines(head, 0, len(head)):
        line = head[line_start:line_end]
        if line in (b"\r\n", b"\n", b"\r") or not _HEADER_LINE.match(line):
            return line_start
    return len(head)


def _header_fields(head: bytes) -> Message:
    """The header fields of the message whose first octets are ``head``, read by Python's header parser."""
    import email.parser
    import email.policy

    return email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(head[: _head_end(head)] + b"\n\n")


def _first_line(data: bytes) -> bytes:
    end = data.find(b"\n")
    return data if end < 0 else data[:end]


def check_first_line(first: bytes) -> None:
    """Refuse a message whose first line (``first``) is an mbox's ``From`` line or no header field: a message
    starts with its header fields (read whole here, by its structure in :mod:`pdi.mail.large`)."""
    if first.startswith(b"From "):
        raise ParseError(
            "line 1 is an mbox 'From ' line: this is an mbox file, not one message"
            " (pdi add FILE.mbox, without --format rfc822, deposits each of its messages)", offset=0,
            rule="message",
        )
    if not _FIELD_NAME.match(first):
        # each octet past ASCII and each control one escaped once, as Python writes bytes (\x89, \r): a repr of
        # the text "backslashreplace" makes wrote its backslashes again ('\\x89PNG\r')
        shown = repr(first[:40])[1:]
        raise ParseError(
            f"line 1 is not a header field (a name, then ':'): {shown}; a message starts with its header fields",
            offset=0, rule="message",
        )


def _check_shape(data: bytes, limits: MailLimits, lines_checked: bool = False) -> None:
    """Refuse what is no message, or would cost too much to parse, before the parser sees it (its lines not counted
    again where ``lines_checked``)."""
    if len(data) > limits.max_bytes:
        raise LimitError(f"the message is {len(data)} octets, more than the limit of {limits.max_bytes}")
    if not data.strip():
        raise ParseError("the message is empty: a message starts with its header fields", offset=0, rule="message")
    check_first_line(_first_line(data))
    at = data.find(_NUL)
    if at >= 0:
        line = data.count(b"\n", 0, at) + 1
        raise ParseError(f"line {line} holds a NUL octet (offset {at}): no message holds one", offset=at,
                         rule="message")
    if not lines_checked and more_lines_than(data, limits.max_lines):
        raise LimitError(
            f"the message has {line_count(data):,} lines, more than the limit of {limits.max_lines:,} (Python's parser keeps"
            " each line as an object of its own)"
        )


def _pieces(octets: Octets, window: int) -> Iterator[bytes]:
    """``octets`` a window at a time (:class:`bytes` in hand whole: it is counted in place, not copied)."""
    size = len(octets)
    if isinstance(octets, bytes):
        yield octets
        return
    for at in range(0, size, window):
        yield bytes(octets[at : min(size, at + window)])


def line_count(octets: Octets, window: int = WINDOW) -> int:
    """The lines of the message ``octets`` hold as Python's parser cuts them (as :meth:`bytes.splitlines` does: one
    a line end, LF, CR or CR LF, and a last one that has none), counted a window of ``window`` octets at a time
    (``octets``: :class:`bytes`, or anything :func:`len` and a ``[start:end]`` slice work on), a CR LF cut by a
    window's end counted once."""
    lines = 0
    after_cr = False
    last = b""
    for piece in _pieces(octets, window):
        lines += piece.count(b"\n") + piece.count(b"\r") - piece.count(b"\r\n") - (after_cr and piece[:1] == b"\n")
        after_cr = piece[-1:] == b"\r"
        last = piece[-1:] or last
    return lines + (len(octets) > 0 and last not in (b"\n", b"\r"))


def more_lines_than(octets: Octets, most: int, window: int = WINDOW) -> bool:
    """Whether the message ``octets`` hold has more than ``most`` lines (:func:`line_count`). Its LF and its CR
    are counted first (a pass of :meth:`bytes.count`, a few milliseconds a MiB): the lines are at least the more
    of the two and at most their sum and one, so only between those is its CR LF counted too, which costs ten
    times as much where lines are short."""
    if len(octets) <= most:  # a line is at least one octet
        return False
    lf = cr = 0
    for piece in _pieces(octets, window):
        lf += piece.count(b"\n")
        cr += piece.count(b"\r")
    if max(lf, cr) > most:
        return True
    return lf + cr + 1 > most and line_count(octets, window) > most


def _walk(entity: Message, path: tuple[int, ...], limits: MailLimits, count: list[int]) -> Iterator[
        tuple[tuple[int, ...], Message]]:
    """The leaves under ``entity``, depth first, within the limits (every entity counted, leaves or not)."""
    count[0] += 1
    if count[0] > limits.max_parts:
        raise too_many_entities(limits, path)
    if len(path) > limits.max_depth:
        raise too_deep(path, limits)
    if entity.get_content_maintype() == "multipart" and entity.is_multipart():
        for number, child in enumerate(entity.get_payload()):
            if isinstance(child, Message):
                yield from _walk(child, (*path, number), limits, count)
        return
    if entity.get_content_maintype() == "message" and entity.is_multipart():
        # an enclosed message is one part; its own entities are counted against the limits all the same
        for child in entity.get_payload():
            if not isinstance(child, Message):
                continue
            for _ in _walk(child, (*path, 0), limits, count):
                pass
    yield path, entity


def _header_text(chunks: list[tuple[bytes | str, str | None]]) -> str:
    """``str(email.header.make_header(chunks))``, the text outside encoded words (``str`` chunks of no charset)
    kept as written.

    Python's ``make_header`` reads that text as the ``raw-unicode-escape`` bytes ``decode_header`` gives, as
    US-ASCII: a UTF-8 field (RFC 6532) was shown ``a \\u2603`` for ``=?utf-8?q?a?= ☃``, or, holding a Latin-1
    letter, with its encoded words not decoded at all. Each encoded run is decoded as ``make_header`` decodes it
    (``Header.append``, the same errors), and the runs are joined as ``Header.__str__`` joins them: runs of one
    charset by a space, and a space between an encoded run and plain text unless that text has one there. A
    Python codec that is no charset (``=?unicode-escape?q?\\u0041?=``, ``idna``, ``punycode``) is a
    ``LookupError``, as an unknown charset is (:func:`pdi.charsets.codec_for` refuses it wherever a charset is named).
    """
    import email.charset
    import email.header

    runs: list[tuple[str, str]] = []  # (text, charset as Header names it; us-ascii for text of no charset)
    for chunk, charset in chunks:
        if charset is None:
            text = chunk if isinstance(chunk, str) else chunk.decode("us-ascii")
            name = "us-ascii"
        else:
            codec = None
            try:  # a charset, never a Python codec that is none (unicode-escape, idna, punycode): docs/reference
                if charset:  # (Python reads an empty charset, =??q?a?=, as US-ASCII)
                    codec = charsets.codec_for(charset)
            except UnsupportedError as exc:
                raise LookupError(str(exc)) from None
            assert isinstance(chunk, bytes)  # an encoded run's octets
            if codec is not None and charsets.byte_order(codec, chunk[:4]) != codec:  # UTF-16, no BOM: RFC 2781 §4.3
                text = chunk.decode(charsets.byte_order(codec, chunk[:4]))
            else:
                text = str(email.header.Header(chunk, charset))
            name = str(email.charset.Charset(charset)).lower()
        if runs and runs[-1][1] == name:  # Header._normalize
            runs[-1] = (runs[-1][0] + " " + text, name)
        else:
            runs.append((text, name))
    out: list[str] = []
    last: str | None = None
    space_before = False
    for text, name in runs:  # Header.__str__
        shown: str | None = name
        if out:
            if last not in (None, "us-ascii"):
                if name == "us-ascii" and not (text and _nonctext(text[0])):
                    out.append(" ")
                    shown = None
            elif name != "us-ascii" and not space_before:
                out.append(" ")
        space_before = bool(text) and _nonctext(text[-1])
        last = shown
        out.append(text)
    return "".join(out)


def _nonctext(char: str) -> bool:
    """As ``email.header.Header._nonctext``: white space, a parenthesis or a backslash."""
    return char.isspace() or char in ("(", ")", "\\")


def _octets_read(text: str) -> str:
    """A header value Python read from octets: its 8-bit octets (kept as surrogates) read as UTF-8 (RFC 6532),
    each octet that is not UTF-8 as U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _content_id(entity: Message) -> str | None:
    raw = entity.get("Content-ID")
    if raw is None:
        return None
    text = " ".join(_octets_read(str(raw)).split())
    return text[1:-1] if text.startswith("<") and text.endswith(">") else text or None


def _filename(entity: Message) -> str | None:
    try:
        name = entity.get_filename()
    except Exception:  # a parameter Python cannot decode names no file
        return None
    return str(name) if name else None


def read_message(data: bytes, limits: MailLimits | None = None, *, lines_checked: bool = False) -> Mail:
    """The message ``data`` is (see the module docstring); :class:`ParseError` or :class:`LimitError` if none.
    ``lines_checked``: the caller has found that ``data`` has no more lines than ``limits.max_lines``
    (:func:`pdi.mail.large.by_structure` answered no), so they are not counted again (some 6 ms for 10 MB)."""
    limits = limits or MailLimits()
    data = bytes(data)
    _check_shape(data, limits, lines_checked)
    policy = bounded_policy(limits)
    try:
        message = parse(data, policy)
    except RecursionError as exc:  # nesting is refused past max_depth as it is parsed: a max_depth set too high
        raise too_deep_for_python(policy.deepest[0], limits, "Python's parser follows") from exc
    except FieldTooLong as exc:
        raise exc.refusal(data, limits) from None
    except TooManyFields as exc:  # counted as the parser reads each header field (a body's lines are none)
        top = policy.top[0]() if policy.top[0] is not None else None  # (alive: the traceback holds the parser)
        raise too_many_fields(limits, exc.path, _entity_start(data, top, exc.path, limits)) from None
    assert isinstance(message, EmailMessage)
    if not message.keys():
        raise ParseError("the message has no header field", offset=0, rule="message")
    _count_delimiters(data, message, limits)
    parts: list[MailPart] = []
    defects: list[str] = []
    try:
        leaves = list(_walk(message, (), limits, [0]))
    except RecursionError as exc:
        raise too_deep_for_python(policy.deepest[0], limits, "pdi reads") from exc
    for number, (path, entity) in enumerate(leaves):
        parts.append(_mail_part(number, path, entity))
        defects.extend(f"part {number}: {type(d).__name__}" for d in entity.defects)
    defects[:0] = [f"message: {type(d).__name__}" for d in message.defects]
    return Mail(message, tuple(parts), tuple(defects), data, limits)


def _entity_start(data: bytes, message: Message | None, path: tuple[int, ...], limits: MailLimits) -> int | None:
    """Where the entity at ``path`` of ``message`` (as far as the parser had read it) starts in ``data``, if found."""
    if message is None:
        return None
    try:
        span = entity_span(data, message, path, limits)
    except Exception:  # (a message refused part way: where is a courtesy, the refusal stands without it)
        return None
    return None if span is None else span[0]


def _count_delimiters(data: bytes, message: Message, limits: MailLimits) -> None:
    """The boundary delimiter lines of the message's multiparts counted against ``limits.max_delimiters`` as a
    message read by its structure counts them (:class:`pdi.mail.delimiters.Delimiters`, the same code): each multipart's
    body cut along the lines that begin ``--`` and its boundary, depth first, its parts read so in turn. A line
    that begins ``--`` and no open multipart's boundary (a patch, a log in a text part) is not counted; Python's
    parser costs nothing more for it than for any line, and the parts it makes are counted as it makes them."""
    delimiters = Delimiters(data, limits)
    pending: list[tuple[Message, int, int, tuple[int, ...]]] = [(message, 0, len(data), ())]
    while pending:
        entity, start, end, path = pending.pop()
        boundary = entity.get_boundary() if entity.get_content_maintype() == "multipart" else None
        if boundary is None:
            continue
        # counted even where Python read it as a leaf (no delimiter line in it, a close one first), as read_large does
        spans = delimiters.parts(boundary, _body_start(data, start, end), end, path)
        children = entity.get_payload()
        if isinstance(spans, int) or not isinstance(children, list):
            continue
        found = [(child, *span, (*path, number)) for number, (child, span) in enumerate(zip(children, spans, strict=False))
                 if isinstance(child, Message)]
        pending.extend(reversed(found))  # depth first, in order: as read_large counts them


def _mail_part(number: int, path: tuple[int, ...], entity: Message,
               span: tuple[int, int, int] | None = None) -> MailPart:
    """The :class:`MailPart` numbered ``number`` of the leaf ``entity`` at ``path`` (``span``: where it lies)."""
    media_type = entity.get_content_type()
    charset = entity.get_content_charset() if entity.get_content_maintype() == "text" else None
    if not formats.is_media_type(media_type):  # Python's reading keeps any octets but a second "/"
        # RFC 2045 §5.2: a syntactically invalid one is taken as the default, plain text, as Python takes those
        # it reads as invalid (no charset: read as UTF-8, pdi's choice for a text that names none)
        media_type, charset = "text/plain", None
    location = entity.get("Content-Location")
    return MailPart(
        number, path, media_type, charset, _filename(entity), _content_id(entity),
        None if location is None else "".join(_octets_read(str(location)).split()) or None,
        entity.get_content_disposition(), entity, span,
    )


#: A line that goes on a header (Python's ``feedparser.headerRE``): a field's name and colon, a folded line's
#: white space, or an mbox ``From `` line; any other line ends the header fields.
_HEADER_LINE: Final = re.compile(rb"From |[\041-\071\073-\176]*:|[\t ]")
_LINE: Final = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n|$)")


def _lines(data: bytes, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Each line of ``data[start:end]`` as (start, end after its line ending), as Python's parser splits lines."""
    at = start
    while at < end:
        match = _LINE.match(data, at, end)
        assert match is not None
        if match.end() == at:
            return
        yield at, match.end()
        at = match.end()


def _body_start(data: bytes, start: int, end: int) -> int:
    """Where the body of the entity ``data[start:end]`` begins: after the empty line that ends its header fields,
    or (no empty line: a missing separator) at the first line that is no header field; or, no empty line ending
    them, at their last line when it begins ``From `` and is not their first (:func:`_header_scan`)."""
    found, last_from = _header_scan(data, start, end)
    return found if found is not None else end if last_from is None else last_from


def _header_block_end(data: bytes, start: int, end: int) -> int | None:
    """:func:`_body_start` of ``data[start:end]``, or ``None`` when every line of it goes on the header block."""
    return _header_scan(data, start, end)[0]


def _header_scan(data: bytes, start: int, end: int) -> tuple[int | None, int | None]:
    """Where the header block of ``data[start:end]`` ends (``None``: every line of it goes on it), and where its
    last line starts if that line begins ``From `` and is not its first (else ``None``).

    Python's parser reads a header block's last line that begins ``From `` (an mbox From_ line misplaced) as the
    body's first line (``feedparser._parse_headers`` unreads it), where the header block is ended by a line that is
    no header field or by the entity's end; its first line so is its envelope line (``set_unixfrom``). Ended by an
    empty line, the body is that From_ line and what follows the empty line, the empty line dropped: no span of the
    octets, left as it was (the header block ends after the empty line)."""
    last_from: int | None = None
    first = True
    for line_start, line_end in _lines(data, start, end):
        line = data[line_start:line_end]
        if line in (b"\r\n", b"\n", b"\r"):
            return line_end, None
        if not _HEADER_LINE.match(line):
            return (line_start if last_from is None else last_from), None
        last_from = line_start if not first and line.startswith(b"From ") else None
        first = False
    return None, last_from


def entity_span(data: bytes, message: Message, path: tuple[int, ...], limits: MailLimits) -> tuple[int, int] | None:
    """Where the entity at ``path`` (:attr:`MailPart.path`) of the message ``message`` read from ``data`` within
    ``limits`` (:func:`read_message`) lies in ``data``: from the first octet of its header fields to the end of its
    body, which is, in a multipart, the line ending before the next boundary delimiter line (that line ending is the
    delimiter's, RFC 2046 §5.1.1).

    Each multipart on the way is cut by :meth:`pdi.mail.delimiters.Delimiters.parts`, the code that cuts a message
    read by its structure (:mod:`pdi.mail.large`) and that counted this one's delimiter lines as it was read, so
    the two readings cut alike: delimiter lines found as Python's parser finds them (a line that begins ``--`` and
    the boundary, then ``--`` or not, then spaces or tabs), one right after another taken with it. Its lines are
    counted against ``limits`` again, which hold: the message was read within them, every one of its multiparts cut
    so (:func:`_count_delimiters`), and those on the way to ``path`` are some of them, cut from the same octets.
    ``None`` when the octets do not hold as many parts as the parser read.
    """
    delimiters = Delimiters(data, limits)
    start, end = 0, len(data)
    entity = message
    walked: tuple[int, ...] = ()
    for number in path:
        boundary = entity.get_boundary()
        children = entity.get_payload()
        if boundary is None or not isinstance(children, list) or number >= len(children):
            return None
        parts = delimiters.parts(boundary, _body_start(data, start, end), end, walked)
        if isinstance(parts, int) or number >= len(parts):  # (an int: Python read it as a leaf)
            return None
        start, end = parts[number]
        child = children[number]
        if not isinstance(child, Message):
            return None
        entity, walked = child, (*walked, number)
    return start, end
