"""A message's body text, what its passages count in, each made once a process for the same octets (``docs/email.md`` §2).

:func:`body_text` reads it from a message :mod:`pdi.mail.message` has read
(the part its module docstring names, decoded, CRLF-canonical; an HTML
body as its page text in :data:`pdi.fragments.pagetext.EMAIL_READING`, for
ever). It lives with the fragments, not with the mail reader, because it is
what ``char=`` and ``line=`` of a message count in
(:mod:`pdi.fragments.email`), and because it reads markup: the mail reader
stays on its floor, below the fragments.

Every ``char=``, ``line=`` and ``/view`` of a message, a citation's check, a
quote's re-anchoring, counts on its body text
(:func:`body_text`). A text is indexed once, at deposit;
a message's body text was made again at each request, and an HTML body's
page text costs about a second a megabyte of markup (a 10 MB body of
``<div>``, 28 s a request on a busy machine), so a few readers asking for
one message kept every worker busy. :class:`BodyTexts` makes it once and
keeps it, keyed by the SHA-256 of the message's octets (the fixity of
record: the same octets, the same text), bounded: at most :data:`MAX_KEPT`
texts and :data:`MAX_KEPT_CHARACTERS` characters in all, least recently used
out first. A refusal of the octets themselves (a :class:`~pdi.errors.PDIError`:
no message, a part that cannot be read) is kept too, and said again without
reading the octets again (an HTML body past
:data:`MAX_HTML_BODY` characters, said before the body is
read, among them); one of time (its reading past its processor time, or
past the clock's backstop, which a starved machine may pass where a quiet
one would not: a :class:`~pdi.errors.LimitError` whose ``details`` name its
``seconds``) is not kept. A second request for a message whose text is
being made waits for it, rather than making it a second time.
:func:`message_body_text` is the process's one.

What one making may cost is bounded where the text is made
(:func:`body_text`): an HTML body of more than
:data:`MAX_HTML_BODY` characters is refused before it is
read, and the reading of one has :data:`pdi.fragments.pagetext.MAX_SECONDS` of processor time.

Pure but for the cache, which is its process's own state, shared by its threads: no I/O.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from pdi.errors import LimitError, PDIError
from pdi.fragments.results import Buffer
from pdi.mail.message import read_message

if TYPE_CHECKING:
    from pdi.mail.large import Octets
    from pdi.mail.message import Mail

__all__ = [
    "MAX_HTML_BODY", "MAX_KEPT", "MAX_KEPT_CHARACTERS", "BodyTexts", "body_text", "forget_body_texts", "large_body_text",
    "large_message_body_text", "message_body_text", "message_facts",
]

#: The most body texts kept (and refusals: each counts as one).
MAX_KEPT: Final = 256
#: The most characters of body texts kept in all (at most 4 octets each in memory: 64 MiB): a text longer
#: than this is made again at each request, which only a plain-text body can be (an HTML body's is at most
#: MAX_HTML_BODY characters), and decoding a plain text costs no more than reading its octets.
MAX_KEPT_CHARACTERS: Final = 16 << 20


class BodyTexts:
    """Body texts by the SHA-256 of their messages' octets, bounded (see the module docstring); thread-safe.

    ``make`` makes the body text of a message's octets, or raises the :class:`~pdi.errors.PDIError` it has.
    """

    def __init__(
        self, make: Callable[[bytes], str], max_kept: int = MAX_KEPT, max_characters: int = MAX_KEPT_CHARACTERS
    ) -> None:
        self.make = make
        self.max_kept, self.max_characters = max_kept, max_characters
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, str | PDIError] = OrderedDict()
        self._characters = 0
        self._making: dict[str, threading.Event] = {}

    def text_of(self, data: Buffer, make: Callable[[bytes], str] | None = None) -> str:
        """The body text of the message ``data``: kept, or made (and kept) by ``make`` (else :attr:`make`), or its
        refusal said again."""
        return self.keyed(hashlib.sha256(data).hexdigest(), lambda: (make or self.make)(bytes(data)))

    def keyed(self, key: str, make: Callable[[], str]) -> str:
        """The body text of the message whose octets' SHA-256 is ``key`` (hexadecimal): kept, or made (and kept) by
        ``make``, or its refusal said again (a large message's, read by its structure, not in hand)."""
        while True:
            with self._lock:
                if key in self._kept:
                    self._kept.move_to_end(key)
                    return _said(self._kept[key])
                making = self._making.get(key)
                if making is None:
                    self._making[key] = threading.Event()
                    break
            making.wait()  # another thread makes it: then kept, or (an error not the octets' own) made here
        try:
            found: str | PDIError = make()
        except PDIError as exc:  # the octets' own: the same octets, the same refusal
            found = exc
        except BaseException:
            with self._lock:
                self._making.pop(key).set()
            raise
        with self._lock:
            if not (isinstance(found, LimitError) and "seconds" in found.details):  # a bound of time: not kept
                self._keep(key, found)
            self._making.pop(key).set()
        return _said(found)

    def clear(self) -> None:
        """Forget every text kept."""
        with self._lock:
            self._kept.clear()
            self._characters = 0

    def _keep(self, key: str, found: str | PDIError) -> None:
        size = len(found) if isinstance(found, str) else 0
        if size > self.max_characters:
            return
        self._kept[key] = found
        self._characters += size
        while len(self._kept) > self.max_kept or self._characters > self.max_characters:
            _, dropped = self._kept.popitem(last=False)
            self._characters -= len(dropped) if isinstance(dropped, str) else 0


def _said(found: str | PDIError) -> str:
    if isinstance(found, PDIError):
        raise found.within("")  # a new one each time: one raised again would pile up its tracebacks
    return found


#: The longest ``text/html`` body whose page text is read as the body's text (characters of its CRLF-canonical
#: source): reading markup costs about a second a megabyte (0.8 s for 1 MB of ``<div>`` on one core, 2.8 s on a
#: busy one), so one reading stays some seconds, well inside its deadline (pagetext.MAX_SECONDS); an HTML mail
#: is tens of kilobytes, a newsletter hundreds.
MAX_HTML_BODY: Final = 4 << 20


def _made(octets: bytes, mail: Mail | None = None) -> str:
    """The body text of the message ``octets`` (``mail``: as read already), read as every reading of it is
    (:func:`pdi.mail.large.by_structure`): whole, or by its structure, from its body's part alone
    (:func:`large_body_text`, which refuses a body too long to read so)."""
    if mail is None:
        from pdi.mail.large import by_structure

        if not by_structure(octets):
            return body_text(read_message(octets, lines_checked=True))
    elif not mail.by_structure:
        return body_text(mail)
    return large_body_text(octets, mail)


def large_body_text(data: Octets, mail: Mail | None = None) -> str:
    """The body text of the large message ``data`` (``mail``: as :func:`pdi.mail.large.read_large` read it, if it
    has), read from its body's part alone: what ``char=`` and ``line=`` count on and the full-text index holds. A
    body of more than :data:`pdi.mail.large.MAX_BODY_OCTETS` as written is a :class:`LimitError` naming its part."""
    from pdi.mail.large import MAX_BODY_OCTETS, STREAMED_FROM, body_unread, read_large, unheld
    from pdi.mail.message import MailLimits

    mail = read_large(data) if mail is None else mail
    unread = body_unread(mail)
    if unread is not None:
        assert unread.span is not None
        # why it is read so: its size, or (below STREAMED_FROM) its lines, which a reader of its size is not told
        why = (f"a message of {len(data):,} octets" if unheld(len(data)) else
               f"a message of more than {MailLimits().max_lines:,} lines (read by its structure, as one of more than"
               f" {STREAMED_FROM:,} octets is)")
        raise LimitError(
            f"the message's body (part {unread.index}, {unread.media_type}) is {unread.span[2] - unread.span[1]:,}"
            f" octets as written, more than the {MAX_BODY_OCTETS:,} whose text pdi reads in {why}: its parts are"
            " fetched by part=, its octets by byte="
        )
    return body_text(mail)


_BODY_TEXTS: Final = BodyTexts(_made)


def message_body_text(data: Buffer, mail: Mail | None = None) -> str:
    """The body text of the message whose octets are ``data`` (:func:`body_text` of the message read as
    :func:`pdi.mail.large.read_mail` reads it: whole, or by its structure), made once a process for the same
    octets (:class:`BodyTexts`); its :class:`ParseError` or :class:`LimitError` when it has none, said again
    without reading the octets again. ``mail``: the message read from ``data`` already, its text made from it,
    not from a second reading held beside it (which cost twice the memory a message's reading costs)."""
    return _BODY_TEXTS.text_of(data, lambda octets: _made(octets, mail))


def large_message_body_text(sha256: str, make: Callable[[], str]) -> str:
    """The body text of the message whose octets' SHA-256 is ``sha256``, made by ``make`` (a large message's,
    :func:`large_body_text` of its octets read by verified chunks) once a process, as
    :func:`message_body_text` makes one in hand."""
    return _BODY_TEXTS.keyed(sha256, make)


def forget_body_texts() -> None:
    """Forget every body text this process keeps (as a resolver that has just started knows none)."""
    _BODY_TEXTS.clear()


def body_text(mail: Mail) -> str:
    """The body's text, CRLF-canonical (see :mod:`pdi.mail.message`'s docstring); ``""`` when the message has
    none."""
    from pdi import charsets
    from pdi.fragments.text.lines import to_crlf

    part = mail.body_part()
    if part is None:
        return ""
    label = part.get_content_charset() or "us-ascii"
    try:
        codec = charsets.codec_for(label)
    except Exception:  # a charset pdi does not know: read as UTF-8
        codec = "utf-8"
    from pdi.mail.large import body_octets

    # a large message's body: its octets decoded as it was read (pdi.mail.large), not decoded again from a copy
    payload: object = body_octets(part)
    if payload is None:
        payload = part.get_payload(decode=True)
    # each copy let go once the next is made: the octets, their text, its lines CRLF (a message's size each)
    if isinstance(payload, (bytes, bytearray)):  # UTF-16 without a BOM: big-endian (RFC 2781 §4.3)
        codec = charsets.byte_order(codec, payload[:4])
    decoded = payload.decode(codec, "replace") if isinstance(payload, (bytes, bytearray)) else ""
    del payload
    text = to_crlf(decoded)
    del decoded
    if part.get_content_subtype() == "html":
        from pdi.fragments.pagetext import EMAIL_READING, markup_page_text

        if len(text) > MAX_HTML_BODY:
            at = mail.body_index()
            raise LimitError(
                f"the message's body (part {at}, text/html) is {len(text):,} characters of HTML, more than the"
                f" {MAX_HTML_BODY:,} whose text pdi reads: its parts are fetched by part=, its octets by byte="
            )
        # the reading its passages' positions count in, for ever (a later reading may move the text)
        text = to_crlf(markup_page_text(text, "html", reading=EMAIL_READING).text)
    return text


def message_facts(mail: Mail) -> dict[str, Any]:
    """What ``pdi get --info`` and the reader show of the message (:meth:`pdi.mail.message.Mail.facts`), its body
    text's length in characters ``None`` when the text is past a limit (:data:`MAX_HTML_BODY`, or a large
    message's :data:`pdi.mail.large.MAX_BODY_OCTETS`)."""
    from pdi.mail.large import body_unread

    try:
        characters: int | None = len(message_body_text(mail.data, mail) if mail.data else body_text(mail))
    except LimitError:
        characters = None
    if not mail.data and body_unread(mail) is not None:  # a large message's body past what is read of it
        characters = None
    return mail.facts(characters)
