"""RFC 2047 encoded words (``=?charset?q?…?=``) in a header field, found and decoded as Python's
:func:`email.header.decode_header` finds and decodes them, in time linear in their number.

Pure: no I/O, nothing of pdi's. Used by :mod:`pdi.mail` (a message's fields) and :mod:`pdi.mhtml.headers`
(an MHTML file's).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

__all__ = ["ENCODED_WORD", "MAX_ENCODED_WORDS", "decode_header", "without_languages"]

#: An RFC 2047 encoded word as Python's ``email.header`` finds one (its ``ecre``): charset, encoding, encoded text.
ENCODED_WORD: Final = re.compile(r"=\?([^?]*?)\?([qQbB])\?(.*?)\?=", re.MULTILINE)
#: The most encoded words of one field decoded: the rest of the field, from the next encoded word on, is given
#: as written. Decoding costs some 5 µs a word, so a Subject of 3,000,000 (a 42 MB message) took 15 s to show
#: at each ``pdi get --info`` or ``/view`` of it; a field a person wrote holds a few (RFC 2047 §2: 75 characters
#: at most a word), a ``To`` of a thousand recipients' names a few thousand.
MAX_ENCODED_WORDS: Final = 10_000


def decode_header(value: str, *, text: bool = False) -> list[tuple[bytes | str, str | None]]:
    """What :func:`email.header.decode_header` gives for ``value``, in time linear in its length.

    Written out because the standard library's takes time that grows with the square of the encoded words of a
    line (it pops each from the front of a list, deletes each dropped space from the middle of one and joins
    the decoded words by concatenating them): a ``Subject`` of 60,000 encoded words (840 KB) cost 3 s to show,
    500,000 (7 MB) 212 s. The same steps, the same answers (``tests/test_mail.py`` compares them); the same
    ``HeaderParseError`` for base64 that does not decode. Past :data:`MAX_ENCODED_WORDS` encoded words, the rest
    of ``value`` after the word before the next one is one more word of no charset, as written (its white space
    too; bytes, ``None``).

    With ``text``, each run of words of no charset is given as the ``str`` it is (the text as written), not as
    Python's ``raw-unicode-escape`` bytes of it, which no decoding reads back as written: ``\\u0041`` written in
    a field and ``A`` give the same bytes, and ``\\u0100`` and the letter U+0100 too."""
    import binascii
    import email.base64mime
    import email.errors
    import email.header
    import email.quoprimime

    if next(_encoded_words(value), None) is None:
        return [(value, None)]
    collapsed: list[tuple[bytes | str, str | None]] = []
    # each run of words of one charset gathered in one buffer as it is read, never a list of every word: a field
    # of 1,000,000 encoded words (14 MB) held 470 MB of lists of its words and their pieces
    run = bytearray()
    written: list[str] = []  # with text: the run of words of no charset, as written
    pieces = 0
    last_charset: str | None = None
    decoded = 0
    end = 0
    for encoded, encoding, charset, _start, end_of_word in _kept(_words(value)):
        if encoding is not None:
            decoded += 1
            if decoded > MAX_ENCODED_WORDS:  # the rest as written (from the end of the word before): no charset
                encoded, encoding, charset = value[end:], None, None
        end = end_of_word
        word: bytes | str = encoded
        if encoding == "q":
            word = email.quoprimime.header_decode(encoded)
        elif encoding == "b":
            padding = len(encoded) % 4  # as Python's: the missing padding added
            try:
                word = email.base64mime.decode(encoded + "==="[: 4 - padding] if padding else encoded)
            except binascii.Error:
                raise email.errors.HeaderParseError("Base64 decoding error") from None
        octets = bytes(word, "raw-unicode-escape") if isinstance(word, str) else word
        if pieces and charset != last_charset:
            collapsed.append(("".join(written) if text and last_charset is None else bytes(run), last_charset))
            run, written, pieces = bytearray(), [], 0
        # words of no charset are joined by a space (the rest as written: by the white space it holds, if any)
        if pieces and charset is None and not (
                decoded > MAX_ENCODED_WORDS and (run[-1:].isspace() or octets[:1].isspace())):
            run += b" "
            written.append(" ")
        run += octets
        if text and charset is None:
            written.append(encoded)
        pieces += 1
        last_charset = charset
        if decoded > MAX_ENCODED_WORDS:
            break
    if not pieces:  # an encoded word found across a line break, which no line holds: as Python answers it
        return email.header.decode_header(value)
    collapsed.append(("".join(written) if text and last_charset is None else bytes(run), last_charset))
    return collapsed


def without_languages(chunks: list[tuple[bytes | str, str | None]]) -> list[tuple[bytes | str, str | None]]:
    """``chunks`` of :func:`decode_header` with each charset's RFC 2231 §5 language left off (``=?US-ASCII*EN?Q?…?=``
    is US-ASCII text in English, its octets those of ``=?US-ASCII?Q?…?=``), and the chunks of one charset that then
    meet joined, as :func:`decode_header` joins the words of one charset (an ISO-2022-JP escape before the words).

    Python's ``decode_header`` keeps ``us-ascii*en`` as the charset, which no codec is named (its header registry's
    parser leaves the language off, as here)."""
    out: list[tuple[bytes | str, str | None]] = []
    for chunk, charset in chunks:
        if charset is not None and "*" in charset:
            charset = charset.partition("*")[0]
        if out and charset is not None and out[-1][1] == charset and isinstance(chunk, bytes):
            before = out[-1][0]
            assert isinstance(before, bytes)  # an encoded run's chunk is its octets
            out[-1] = (before + chunk, charset)
        else:
            out.append((chunk, charset))
    return out


def _encoded_words(text: str) -> Iterator[tuple[int, int, str, str, str]]:
    """What ``ENCODED_WORD.finditer(text)`` finds, as (start, end, charset, encoding, encoded text), in time linear in
    ``text``.

    The regular expression tries each ``=?`` in turn, and from each one that a charset and ``?q?`` follow, reads on
    to the next ``?=`` of the line: a field of 20,000 ``=?a?q?x`` and no ``?=`` (140 KB) took 44 s, 200,000 would
    have taken an hour. Its match is fixed, so it is found here with ``find``: from ``=?``, the charset up to the
    next ``?`` (it holds none), then ``q``/``b`` (any case) and ``?``, then the encoded text up to the first ``?=``,
    which holds no line feed (the expression's ``.``); each ``find`` for a ``?=`` or a line feed is kept for the
    starts after it, so no octet is read twice for them."""
    next_end = next_lf = -2  # the first "?=" (line feed) found at or after where it was last looked for; -2: not yet
    at = 0
    while (start := text.find("=?", at)) >= 0:
        mark = text.find("?", start + 2)
        if mark < 0:
            return  # no charset ends: no word from here on
        at = start + 1
        if text[mark + 1 : mark + 2] not in ("q", "Q", "b", "B") or text[mark + 2 : mark + 3] != "?":
            continue
        body = mark + 3
        if next_end != -1 and next_end < body:
            next_end = text.find("?=", body)
        if next_end < 0:
            return  # no word ends from here on
        if next_lf != -1 and next_lf < body:
            next_lf = text.find("\n", body)
        if 0 <= next_lf < next_end:
            continue  # the encoded text would hold a line feed
        yield start, next_end + 2, text[start + 2 : mark], text[mark + 1], text[body:next_end]
        at = next_end + 2


_Word = tuple[str, "str | None", "str | None", int, int]


def _words(value: str) -> Iterator[_Word]:
    """The words of ``value``, line by line, as Python's ``decode_header`` splits them: (text, None, None, start,
    end) for text between encoded words (the first of a line without its leading white space), and (encoded text,
    encoding, charset, start, end) for each encoded word, both lower case; ``start`` and ``end``: where it starts
    and ends in ``value``."""
    offset = 0
    for ended in value.splitlines(keepends=True):
        line = ended.splitlines()[0]
        at = 0
        for start, end, charset, encoding, encoded in _encoded_words(line):
            unencoded = line[at:start]
            if not at:  # text before the line's first encoded word (a word is never empty: at > 0 after one)
                unencoded = unencoded.lstrip()
            if unencoded:
                yield unencoded, None, None, offset + start - len(unencoded), offset + start
            yield encoded, encoding.lower(), charset.lower(), offset + start, offset + end
            at = end
        rest = line[at:].lstrip() if not at else line[at:]
        if rest:
            yield rest, None, None, offset + len(line) - len(rest), offset + len(line)
        offset += len(ended)


def _kept(words: Iterator[_Word]) -> Iterator[_Word]:
    """``words`` without the white space between two encoded words (RFC 2047 §6.2), as Python drops it: a word
    that is all white space, between two encoded words of the words as read."""
    before: _Word | None = None
    last: _Word | None = None
    for word in words:
        if last is not None and not (before is not None and word[1] and before[1] and last[0].isspace()):
            yield last
        before, last = last, word
    if last is not None:
        yield last
