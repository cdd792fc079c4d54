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
  (:func:`_parse`), so that an enclosed message nested in another at any depth
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

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage, Message
from typing import Any, Final

from pdi import formats
from pdi._wording import clipped, plural
from pdi.charsets.rfc2047 import decode_header
from pdi.errors import LimitError, NotFoundError, ParseError
from pdi.mail.delimiters import Delimiters

__all__ = [
    "MAX_COMMENT_DEPTH", "MAX_FIELD_MARKS", "MAX_MESSAGE_ID_OCTETS", "THREAD_HEAD", "Mail", "MailLimits", "MailPart", "ThreadIds",
    "entity_span", "head_message_id", "ids_written",
    "message_id_of_mid", "message_ids", "mid_name", "mid_url", "read_head", "read_message", "thread_ids",
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
class MailLimits:
    """What reading one message may cost, each past it a clear :class:`~pdi.errors.LimitError`.

    ``max_bytes`` 64 MiB of message (a transfer encoding never decodes to
    more than it is written in, so no part's decoded octets pass it);
    ``max_parts`` 1,000 entities; ``max_depth`` 32 nested entities (the
    parser recurses once a level; an enclosed message is not entered, so the
    entities in it are neither counted nor nested); ``max_lines`` 2,000,000 lines (LF, CR
    or CR LF ended: the parser keeps each line it reads as a string of its
    own, some 90 octets beside the line, so that 28 MB of two-letter lines
    took 900 MB; a 64 MiB attachment in base64 is some 880,000 lines),
    counted before the parser runs; ``max_delimiters`` 20,000 boundary
    delimiter lines (a line that starts ``--`` and the boundary of the
    multipart whose body holds it, up to its close delimiter; a line that
    starts ``--`` and none, a patch's or a log's, is not counted), counted
    after the parser has read the message, the parts it makes counted
    against ``max_parts`` as it makes them, by the code that counts those of
    a message read by its structure (:class:`pdi.mail.delimiters.Delimiters`), so
    both refuse the same messages; ``max_fields`` 100,000 lines that
    could be header fields, counted before the parser runs (of a message
    read by its structure, :mod:`pdi.mail.large`, those of its header
    blocks), so that it never builds millions of objects; ``max_content_field`` 4 KiB of one
    ``Content-…`` field, its continuation lines counted (the parser reads
    one again each time the message's structure is asked about, in time
    that grows faster than its length: 14 KB of parameters cost a second),
    and ``max_content_fields`` 128 KiB of them in all (999 parts of 4,000
    octets each cost 115 s), both counted as the parser reads each header
    field of each entity (:func:`_bounded_policy`), so a body's line that
    only looks like one is not.
    """

    max_bytes: int = 64 << 20
    max_parts: int = 1000
    max_depth: int = 32
    max_lines: int = 2_000_000
    max_delimiters: int = 20_000
    max_fields: int = 100_000
    max_content_field: int = 4096
    max_content_fields: int = 128 << 10


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
            return _header_text(decode_header(raw, text=True))
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
            " (pdi add FILE.mbox deposits each of its messages)", offset=0, rule="message",
        )
    if not _FIELD_NAME.match(first):
        shown = first[:40].decode("ascii", "backslashreplace")
        raise ParseError(
            f"line 1 is not a header field (a name, then ':'): {shown!r}; a message starts with its header fields",
            offset=0, rule="message",
        )


def _check_shape(data: bytes, limits: MailLimits) -> None:
    """Refuse what is no message, or would cost too much to parse, before the parser sees it."""
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
    # the parser's lines (as bytes.splitlines cuts them): one a line end, and a last one that has none
    lines = data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n") + (not data.endswith((b"\n", b"\r")))
    if lines > limits.max_lines:
        raise LimitError(
            f"the message has {lines:,} lines, more than the limit of {limits.max_lines:,} (Python's parser keeps"
            " each line as an object of its own)"
        )
    if data.count(b":") > limits.max_fields:  # only then can there be that many fields: count them
        fields = sum(1 for _ in _FIELD_LIKE.finditer(data))
        if fields > limits.max_fields:
            raise LimitError(
                f"the message has {fields} lines that could be header fields, more than the limit of"
                f" {limits.max_fields}"
            )


def _walk(entity: Message, path: tuple[int, ...], limits: MailLimits, count: list[int]) -> Iterator[
        tuple[tuple[int, ...], Message]]:
    """The leaves under ``entity``, depth first, within the limits (every entity counted, leaves or not)."""
    count[0] += 1
    if count[0] > limits.max_parts:
        raise too_many_entities(limits, path)
    if len(path) > limits.max_depth:
        raise _too_deep(path, limits)
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
    charset by a space, and a space between an encoded run and plain text unless that text has one there.
    """
    import email.charset
    import email.header

    runs: list[tuple[str, str]] = []  # (text, charset as Header names it; us-ascii for text of no charset)
    for chunk, charset in chunks:
        if charset is None:
            text = chunk if isinstance(chunk, str) else chunk.decode("us-ascii")
            name = "us-ascii"
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


def _dotted(path: tuple[int, ...]) -> str:
    return ".".join(map(str, path)) or "0"


def _too_deep(path: tuple[int, ...], limits: MailLimits) -> LimitError:
    """The refusal of the entity at ``path``, the first found past ``limits.max_depth`` (that many part numbers)."""
    return LimitError(f"the message nests more than {limits.max_depth} entities deep (the limit"
                      f" MailLimits.max_depth): part {_dotted(path)} is {len(path)} deep")


def too_many_entities(limits: MailLimits, path: tuple[int, ...]) -> LimitError:
    """The refusal of the entity at ``path``, the first past ``limits.max_parts`` (depth first)."""
    return LimitError(f"the message has more than {limits.max_parts:,} entities (parts and multiparts, the limit"
                      f" MailLimits.max_parts): part {clipped(_dotted(path), 120)} is past it")


def _too_deep_for_python(deepest: tuple[int, ...], limits: MailLimits, what: str) -> LimitError:
    """The refusal of a message nested deeper than Python recurses, though within a ``max_depth`` set that high."""
    return LimitError(f"the message nests its entities deeper than {what} (part {clipped(_dotted(deepest), 120)} is"
                      f" {len(deepest):,} deep), though within the limit of {limits.max_depth:,}"
                      " (MailLimits.max_depth): a lower limit refuses it naming the first part past it")


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


def _bounded_policy(limits: MailLimits) -> Any:
    """``email.policy.default``, but each ``Content-…`` field the parser reads is bounded as it is read
    (:meth:`~email.policy.Policy.header_source_parse`, which every header field of every entity passes through
    before the parser or anyone asks for it): one of more than ``max_content_field`` octets, its continuation
    lines counted, or more than ``max_content_fields`` of them in all, is a :class:`LimitError` (the parser
    reads such a field again each time the message's structure is asked about, in time that grows faster than
    its length). A body's line that only looks like such a field is never read as one, so never counted."""
    return _policy_class()(tally=[0], bounds=limits, deepest=[()], parsing=[False], entities=[1], fetched={})


@functools.cache
def _policy_class() -> Any:
    """The class of :func:`_bounded_policy`'s policies (made once: :mod:`email.policy` is imported when first read)."""
    import email.headerregistry
    import email.policy

    class BoundedMessage(EmailMessage):
        """An entity the parser makes under a BoundedPolicy: it knows its part numbers from the top (as
        :func:`_walk` numbers them), and one attached past ``max_depth`` is refused then, as the parser nests it,
        not after: Python's parser recurses a level an entity, so 1,000 multiparts one in another (33 KB) passed
        the interpreter's recursion limit, a refusal that could name neither the limit nor where."""

        pdi_path: tuple[int, ...] = ()

        def get_content_maintype(self) -> str:
            """``message`` of a ``message/*`` entity, but while the parser reads it (:func:`_parse`), which enters an
            entity of that maintype and reads its body as a message of its own, recursing once an enclosed message
            (a message holding itself 400,000 times passed every interpreter's recursion limit, and 33 times was
            refused past ``max_depth`` where one read by its structure was kept): it reads the body as a leaf's,
            kept as written, not entered (``docs/email.md`` §1: an enclosed message is one part)."""
            maintype = super().get_content_maintype()
            parsing = getattr(self.policy, "parsing", None)
            if maintype == "message" and parsing is not None and parsing[0]:
                return "x-pdi-enclosed"  # (a message/delivery-status, told by get_content_type, is read as Python reads it)
            return maintype

        def _find_body(self, part: Any, preferencelist: Any) -> Iterator[tuple[int, Any]]:
            """The search of :meth:`~email.message.EmailMessage.get_body` (Python's, which recurses through this
            method), but a multipart the parser read as a leaf (no delimiter line in its body, or a close one first:
            its payload is its body's text) holds no body, as a reading by its structure finds: Python's took the
            first character of such a ``multipart/related`` nested in another multipart as its start part, and
            raised ``AttributeError: 'str' object has no attribute 'is_attachment'`` (a ``start`` parameter:
            ``TypeError``). Of any other such multipart it found nothing already."""
            if isinstance(part, Message) and part.get_content_maintype() == "multipart" and not part.is_multipart():
                return
            yield from super()._find_body(part, preferencelist)  # type: ignore[misc]  # (not in typeshed)

        def attach(self, payload: Any) -> None:  # every entity the parser nests in another comes here
            path = (*self.pdi_path, len(self.get_payload()) if self.is_multipart() else 0)
            payload.pdi_path = path  # an entity of another class (made by hand, not parsed): kept all the same
            bounds, deepest = getattr(self.policy, "bounds", None), getattr(self.policy, "deepest", None)
            if deepest is not None and len(path) > len(deepest[0]):
                deepest[0] = path
            if bounds is not None and len(path) > bounds.max_depth:
                raise _too_deep(path, bounds)
            entities = getattr(self.policy, "entities", None)
            if entities is not None and bounds is not None:  # the top's 1 and each nested, as the parser nests it
                entities[0] += 1
                if entities[0] > bounds.max_parts:  # (not millions of parts made first, then counted by _walk)
                    raise too_many_entities(bounds, path)
            super().attach(payload)

    class BoundedPolicy(email.policy.EmailPolicy):
        tally: list[int] | None = None  # octets of Content-… fields read so far (a list made for each parse)
        bounds: MailLimits | None = None
        deepest: list[tuple[int, ...]] | None = None  # the part numbers of the deepest entity nested so far
        parsing: list[bool] | None = None  # [True] while the parser reads (BoundedMessage.get_content_maintype)
        entities: list[int] | None = None  # the entities the parser has made so far, the top's counted
        #: Each field as parsed when first asked for, by its name and value (a dict made for each read): Python
        #: parses a field again each time anyone asks for it (a dozen times a part to read a message's structure,
        #: its facts and its body), in time that grows faster than the field's marks (:data:`MAX_FIELD_MARKS`).
        fetched: dict[tuple[str, str], Any] | None = None
        message_factory = BoundedMessage

        def header_source_parse(self, sourcelines: list[str]) -> tuple[str, str]:
            name = sourcelines[0].split(":", 1)[0].rstrip(" \t")
            if name[:8].lower() == "content-" and self.tally is not None and self.bounds is not None:
                last = sourcelines[-1]
                size = sum(len(line) for line in sourcelines) - (len(last) - len(last.rstrip("\r\n")))
                self.tally[0] += size
                if size > self.bounds.max_content_field:
                    raise _FieldTooLong(name, size, "".join(sourcelines))
                text = "".join(sourcelines)
                nesting = 0 if self._unstructured(name) else _comment_depth(text)
                if nesting > MAX_COMMENT_DEPTH:
                    raise _FieldTooLong(name, size, text, nesting)
                marks = 0 if self._unstructured(name) else _field_marks(text)
                if marks > MAX_FIELD_MARKS:
                    raise _FieldTooLong(name, size, text, marks=marks)
                if self.tally[0] > self.bounds.max_content_fields:
                    raise LimitError(
                        f"the message's Content-… fields are more than {self.bounds.max_content_fields:,} octets in"
                        " all (its parts' MIME structure), the most read of one message"
                    )
            return super().header_source_parse(sourcelines)

        def header_fetch_parse(self, name: str, value: Any) -> Any:
            """The field as :class:`email.policy.EmailPolicy` parses it, but a ``Content-Type`` or
            ``Content-Disposition`` whose value ends with a parameter's ``*`` (``text/plain; a*``: RFC 2231's mark
            of a value in a charset, and no ``=`` nor value after it) is read as Python reads a parameter whose ``*``
            is followed by anything but ``=`` (``a* ``): an invalid one, left out (an ``InvalidHeaderDefect``).
            Python's parser of parameters read past the value's end there (``IndexError``, from the parser,
            ``get_content_type``, ``get_body``)."""
            fetched = self.fetched
            if fetched is None or not isinstance(value, str):
                return self._fetch_parse(name, value)
            key = (name.lower(), value)  # (a field's parse is the same each time it is asked for: kept, one read)
            parsed = fetched.get(key)
            if parsed is None:
                parsed = fetched[key] = self._fetch_parse(name, value)
            return parsed

        def _fetch_parse(self, name: str, value: Any) -> Any:
            if isinstance(value, str) and self._parameterized(name) and _LINE_ENDS.sub("", value).endswith("*"):
                value += " "  # after it, no "=": the invalid parameter Python's parser reads up to the next ";"
            return super().header_fetch_parse(name, value)

        def _parameterized(self, name: str) -> bool:
            """Whether the field ``name`` is parsed as a MIME value and its parameters (``Content-Type``)."""
            factory = self.header_factory
            return isinstance(factory, email.headerregistry.HeaderRegistry) and issubclass(
                factory[name], email.headerregistry.ParameterizedMIMEHeader)

        def _unstructured(self, name: str) -> bool:
            """Whether the field ``name`` is read as unstructured text (``Content-ID``, ``Content-Description``:
            no comment is read in it), not parsed (``Content-Type``, ``Content-Disposition``, …)."""
            factory = self.header_factory
            return isinstance(factory, email.headerregistry.HeaderRegistry) and issubclass(
                factory[name], email.headerregistry.UnstructuredHeader)

    return BoundedPolicy


class _FieldTooLong(Exception):
    """A ``Content-…`` field past :attr:`MailLimits.max_content_field`, or whose comments nest more than
    :data:`MAX_COMMENT_DEPTH` deep (``nesting``), as the parser read it."""

    def __init__(self, name: str, size: int, text: str, nesting: int | None = None, *, marks: int | None = None
                 ) -> None:
        super().__init__(name)
        self.name, self.size, self.text, self.nesting, self.marks = name, size, text, nesting, marks

    def what(self, limits: MailLimits) -> str:
        """What is wrong with the field, after its name (``is 5,031 octets, more than …``)."""
        if self.marks is not None:
            return (f"has {self.marks:,} of the marks ';', '(' and '\"' that part its parameters, comments and quoted"
                    f" strings, more than the {MAX_FIELD_MARKS} pdi reads in a field of the message's MIME structure")
        if self.nesting is not None:
            return (f"has comments nested {self.nesting:,} deep, more than the {MAX_COMMENT_DEPTH} pdi reads in a"
                    " field of the message's MIME structure")
        return (f"is {self.size:,} octets, more than the limit of {limits.max_content_field:,} for a field of the"
                " message's MIME structure")

    def refusal(self, data: bytes, limits: MailLimits) -> LimitError:
        at = data.find(self.text.encode("ascii", "surrogateescape"))  # its line: as the parser counts them
        where = ""
        if at >= 0:
            line = data.count(b"\n", 0, at) + data.count(b"\r", 0, at) - data.count(b"\r\n", 0, at) + 1
            where = f"line {line}: "
        return LimitError(f"{where}the {self.name} field {self.what(limits)}")


#: The deepest comments (RFC 5322 §3.2.2: ``(`` … ``)``, nested in one another) of a ``Content-…`` field read
#: (one Python parses: ``Content-Type``, ``Content-Disposition``, ``Content-Transfer-Encoding``, not one it reads
#: as unstructured text), a :class:`LimitError` past it: Python's parser of those fields recurses once a level, so
#: that 1,000 ``(`` (of the 4,096 octets a field may hold) raised ``RecursionError`` wherever the field was read
#: (the parser, ``get_content_type``, ``get_body``), and fewer in a deeper stack; no message nests them more than
#: a level or two.
MAX_COMMENT_DEPTH: Final = 32
#: The line ends Python's policy takes out of a field's value before it parses it (``email.policy.linesep_splitter``).
_LINE_ENDS: Final = re.compile(r"[\r\n]")
#: The most of the marks that part a parsed ``Content-…`` field (``;`` between parameters, ``(`` opening a comment,
#: ``"`` a quoted string) read in one, a :class:`LimitError` past it: Python's parser of those fields takes time
#: that grows faster than their count (4,000 ``;`` took 0.1 s, 1,300 comments 0.6 s, each time the field was
#: read, a dozen times a part: a message of 120 KB took 35 s of CPU to show), where a field a mailer writes has a
#: few (a long file name in RFC 2231's pieces, 78 octets each, some 50 in a field of 4 KiB).
MAX_FIELD_MARKS: Final = 64


def _field_marks(text: str) -> int:
    """The marks of :data:`MAX_FIELD_MARKS` in a field."""
    return text.count(";") + text.count("(") + text.count('"')


#: What :func:`_comment_depth` reads: a backslash and the character it quotes, or a parenthesis.
_COMMENT_MARK: Final = re.compile(r"\\[\s\S]|[()]")


def _comment_depth(text: str) -> int:
    """How deep the comments of a field nest, as Python's parser of its value would nest them, or deeper: in a
    comment a backslash quotes the character after it (a quoted pair); outside one every ``(`` is counted, even in
    a quoted string (where Python opens no comment), so that no lexing of the value nests deeper than this says."""
    depth = deepest = 0
    for found in _COMMENT_MARK.finditer(text):
        mark = found.group()
        if depth > 0 and len(mark) == 2:  # a quoted pair in a comment: nothing opened or closed
            continue
        if mark[-1] == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif mark[-1] == ")" and depth > 0:
            depth -= 1
    return deepest


#: How many octets of a message the parser is given at a time (:func:`_parse`).
_FEED: Final = 64 << 10

#: The private parts of Python's :mod:`email.feedparser` that :func:`_parse` relies on, each with what relies on
#: it (checked by ``tests/test_mail_long_lines.py``, which fails naming the part that changed; on a Python where
#: they are not as expected, :func:`_parse` reads with Python's own buffer).
FEEDPARSER_INTERNALS: Final[dict[str, str]] = {
    "email.feedparser.FeedParser.__init__": "it sets the parser's input, read through the attribute _input, which"
                                            " _parse replaces with a _PiecedLines before the first feed",
    "email.feedparser.FeedParser.feed": "it gives each piece fed to _input.push, and nothing else holds it",
    "email.feedparser.FeedParser.close": "it ends the input with _input.close",
    "email.feedparser.BufferedSubFile": "_PiecedLines is one: the parser reads lines from it (readline,"
                                        " unreadline, the false-EOF matchers) as from the one it replaces",
    "email.feedparser.BufferedSubFile.push": "replaced by _PiecedLines.push, which cuts the same lines",
    "email.feedparser.BufferedSubFile.close": "replaced by _PiecedLines.close, which ends with the same last line",
    "email.feedparser.BufferedSubFile.pushlines": "_PiecedLines gives it each whole line, as push does",
    "email.feedparser.FeedParser._parsegen": "it enters an entity whose get_content_maintype() is 'message' and"
                                             " reads any other non-multipart's body as its payload, whole: a"
                                             " BoundedMessage answers otherwise for message/* while it parses",
}


@functools.cache
def _pieced_lines() -> Any:
    """The class of :func:`_parse`'s input buffer (made once: :mod:`email.feedparser` is imported when first read),
    or None when this Python's buffer is not the one it was written against (:func:`_cuts_as_python`): the parser
    then reads with Python's own, as it did before (a message of one long line costs more, none is refused)."""
    import email.feedparser
    import io

    class _PiecedLines(email.feedparser.BufferedSubFile):  # type: ignore[name-defined,misc]  # (not in typeshed)
        """Python's buffer of the parser's lines, but a line not yet ended is held as the pieces it was fed in,
        joined once it ends: Python's writes it into an :class:`io.StringIO` (four octets a character, whatever
        the characters) and reads it out again as a string, so one line of several MiB (RFC 5322 §2.1.1 bounds
        a line at 998 octets; a body breaks that) cost six times its octets on top of the message, eight for
        8-bit octets, and a message of one long line took more to read than any other of its size. The lines
        are cut as Python's are (``StringIO(newline="")``: CR LF, CR or LF; a CR that ends what was fed so far is
        held until the next piece says whether an LF follows it)."""

        def __init__(self) -> None:
            super().__init__()
            self.pieces: list[str] = []  # the line not yet ended: at most its last piece ends with a CR

        def push(self, data: str) -> None:
            if not data:  # says nothing of a CR held: Python's buffer waits for the next piece to say
                return
            if "\n" not in data and "\r" not in data:  # no line ends here: held, unless it ended at a CR
                if self.pieces and self.pieces[-1].endswith("\r"):
                    self.pushlines(["".join(self.pieces)])
                    self.pieces = []
                self.pieces.append(data)
                return
            if self.pieces:  # the line held ends here: at a CR held (or its CR LF), else at data's first line end
                if self.pieces[-1].endswith("\r"):
                    cut = 1 if data.startswith("\n") else 0
                else:
                    ended = _LINE_END.search(data)
                    assert ended is not None
                    cut = ended.end()
                    if cut == len(data) and data.endswith("\r"):  # a CR last: perhaps the first half of CR LF
                        self.pieces.append(data)
                        return
                self.pieces.append(data[:cut])
                line = "".join(self.pieces)
                self.pieces = []
                self.pushlines([line])
                data = data[cut:]
            lines = io.StringIO(data, newline="").readlines()  # a few lines: at most one piece fed
            if lines and not lines[-1].endswith("\n"):
                self.pieces.append(lines.pop())
            self.pushlines(lines)

        def close(self) -> None:
            if self.pieces:
                self.pushlines(["".join(self.pieces)])
                self.pieces = []
            super().close()

    try:
        python = email.feedparser.BufferedSubFile  # type: ignore[attr-defined]
        return _PiecedLines if _cuts_as_python(_PiecedLines, python) else None
    except Exception:  # any internal moved (a method gone, renamed, of another signature)
        return None


#: Pieces that cut lines where :class:`_PiecedLines` must cut as Python's buffer cuts (:func:`_cuts_as_python`):
#: a CR last in a piece, a CR LF cut in two, a line over several pieces, empty pieces, a boundary and no end.
_SAMPLE_PIECES: Final = ("From: a\r", "\nB", "", "x\r", "y\r\n", "\r", "", "\n--b\r", "\n--b", "--\r\r\n", "\n", "tail\r")


def _cuts_as_python(pieced: Any, python: Any) -> bool:
    """Whether a buffer of class ``pieced`` gives the parser the lines a ``python`` buffer gives, fed
    :data:`_SAMPLE_PIECES` and read as the parser reads (a false-EOF matcher for a boundary, a line read back)."""

    def lines(buffer: Any) -> list[str]:
        read: list[str] = []
        buffer.push_eof_matcher(lambda line: line.startswith("--b"))
        matching = True
        for piece in (*_SAMPLE_PIECES, None):
            if piece is None:
                buffer.close()
            else:
                buffer.push(piece)
            while True:
                line = buffer.readline()
                if line == "" and matching:  # the false EOF: the boundary line is read next, then the rest
                    buffer.pop_eof_matcher()
                    matching = False
                    read.append("<eof>")
                    continue
                if not isinstance(line, str) or line == "":
                    break
                if line == "B\r":
                    buffer.unreadline(line)
                    line = buffer.readline()
                read.append(line)
        return read

    expected = lines(python())
    return len(expected) > 3 and lines(pieced()) == expected


def _parse(data: bytes, policy: Any, feed: int = _FEED) -> Message:
    """``data`` read by Python's parser as :func:`email.message_from_bytes` reads it (the same feed parser, given
    the message a piece at a time, as :meth:`email.parser.Parser.parse` gives it a file), without the copies that
    function makes of the whole message first: its text (an ``str`` as long as the message) and a
    :class:`io.StringIO` of that text (four octets a character), which made a 60 MiB message cost 600 MiB to
    read. Given ``feed`` octets at a time, the parser holds at most the longest line beside what it keeps.
    ``policy``: :func:`_bounded_policy`'s for the limits it is read within."""
    import email.parser

    parser = email.parser.BytesFeedParser(policy=policy)
    pieced = _pieced_lines()
    if pieced is not None and type(getattr(parser, "_input", None)) in pieced.__bases__:  # Python's, unread yet
        try:
            parser._input = pieced()  # type: ignore[attr-defined]  # a long line held in pieces (FEEDPARSER_INTERNALS)
        except AttributeError:  # not an attribute of its own here: the parser keeps Python's buffer
            pass
    parsing = getattr(policy, "parsing", None)
    if parsing is not None:
        parsing[0] = True  # an enclosed message is read as a leaf, not entered (BoundedMessage.get_content_maintype)
    try:
        for at in range(0, len(data), feed):
            parser.feed(data[at : at + feed])
        return parser.close()
    finally:
        if parsing is not None:
            parsing[0] = False


def read_message(data: bytes, limits: MailLimits | None = None) -> Mail:
    """The message ``data`` is (see the module docstring); :class:`ParseError` or :class:`LimitError` if none."""
    limits = limits or MailLimits()
    data = bytes(data)
    _check_shape(data, limits)
    policy = _bounded_policy(limits)
    try:
        message = _parse(data, policy)
    except RecursionError as exc:  # nesting is refused past max_depth as it is parsed: a max_depth set too high
        raise _too_deep_for_python(policy.deepest[0], limits, "Python's parser follows") from exc
    except _FieldTooLong as exc:
        raise exc.refusal(data, limits) from None
    assert isinstance(message, EmailMessage)
    if not message.keys():
        raise ParseError("the message has no header field", offset=0, rule="message")
    _count_delimiters(data, message, limits)
    parts: list[MailPart] = []
    defects: list[str] = []
    try:
        leaves = list(_walk(message, (), limits, [0]))
    except RecursionError as exc:
        raise _too_deep_for_python(policy.deepest[0], limits, "pdi reads") from exc
    for number, (path, entity) in enumerate(leaves):
        parts.append(_mail_part(number, path, entity))
        defects.extend(f"part {number}: {type(d).__name__}" for d in entity.defects)
    defects[:0] = [f"message: {type(d).__name__}" for d in message.defects]
    return Mail(message, tuple(parts), tuple(defects), data, limits)


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
#: A line end, as :class:`io.StringIO` with ``newline=""`` cuts lines (Python's parser's buffer).
_LINE_END: Final = re.compile(r"\r\n|\r|\n")


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
    or (no empty line: a missing separator) at the first line that is no header field."""
    found = _header_block_end(data, start, end)
    return end if found is None else found


def _header_block_end(data: bytes, start: int, end: int) -> int | None:
    """:func:`_body_start` of ``data[start:end]``, or ``None`` when every line of it goes on the header block."""
    for line_start, line_end in _lines(data, start, end):
        line = data[line_start:line_end]
        if line in (b"\r\n", b"\n", b"\r"):
            return line_end
        if not _HEADER_LINE.match(line):
            return line_start
    return None


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
