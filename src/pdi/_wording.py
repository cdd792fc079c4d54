"""Counted nouns in what pdi prints: ``1 frame``, ``2 frames``, ``0 frames`` (on the reader's pages grouped by
thousands, :func:`counted`: ``1,234 documents``); and what a stranger wrote, printable and cut short in its middle
(:func:`clipped`: every error and log line that quotes it), a request's header field as its client wrote it
(:func:`shown_field`: every answer that quotes one).

One helper each, so that every count the command, the resolver and the cores'
messages print agrees in number with its noun. Pure.
"""

from __future__ import annotations

import re


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` and ``noun`` in the number the count takes: ``"1 frame"``, ``"2 frames"``, ``"0 frames"``.

    The plural is ``noun`` + ``s`` unless ``nouns`` gives it
    (``plural(2, "entry", "entries")``). Only 1 is singular, as English has it.
    """
    return f"{count} {noun if count == 1 else nouns if nouns is not None else noun + 's'}"


def counted(count: int, noun: str, nouns: str | None = None) -> str:
    """:func:`plural` with the count grouped by thousands, as the reader's pages print a count (``"1,234
    documents"``, ``"1 document"``). :func:`plural` keeps the bare digits, for messages and the command's output,
    which quote limits and sizes as they are written in options and read by scripts."""
    return f"{count:,} {plural(count, noun, nouns).partition(' ')[2]}"


#: The binary prefixes of IEC 80000-13, each 1,024 times the one before it: a KiB is 1,024 bytes.
_BINARY_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB")


def binary_size(count: int) -> str:
    """A count of bytes as a reader takes it in at a glance, to a tenth of the largest binary unit it fills
    (``"1.5 KiB"``, ``"4.1 MiB"``; IEC 80000-13 prefixes), or ``""`` under a KiB, where the count says it best.
    What rounds up to 1,024 of a unit is said in the next (1,048,575 bytes are ``"1.0 MiB"``, not
    ``"1024.0 KiB"``). Shown beside the exact count, never instead of it: a size is checked to the byte."""
    if count < 1024:
        return ""
    unit = 0
    while unit + 1 < len(_BINARY_UNITS) and round(count / 1024 ** (unit + 1), 1) >= 1024:
        unit += 1
    return f"{count / 1024 ** (unit + 1):.1f} {_BINARY_UNITS[unit]}"


def byte_size(count: int, separator: str = "") -> str:
    """A size as a reader reads it: the exact count grouped by thousands, and from a KiB on its
    :func:`binary_size` beside it (``"58 bytes"``, ``"4,480,000 bytes (4.3 MiB)"``); with a ``separator``, the
    binary size after it rather than in parentheses, for a size already said inside some
    (``"(4,480,000 bytes, 4.3 MiB)"`` with ``", "``)."""
    counted = f"{count:,} {'byte' if count == 1 else 'bytes'}"
    approximately = binary_size(count)
    if not approximately:
        return counted
    return f"{counted}{separator}{approximately}" if separator else f"{counted} ({approximately})"


#: What never reaches a terminal as it is: the controls (C0, DEL, C1: category Cc), the line and paragraph
#: separators (Zl, Zp: a log viewer breaks lines at them), Unicode's bidirectional controls (the Bidi_Control
#: property of PropList.txt: ALM, LRM, RLM, the embeddings and overrides, the isolates) and lone surrogates (no
#: character: a name argv carried with surrogateescape, which UTF-8 cannot write). The rest, a zero-width joiner
#: in an emoji or a Persian word, an ideographic space, prints as it is.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with what would drive a terminal (a control character, a line separator, a bidirectional control,
    a lone surrogate) shown as ``\\xNN`` or ``\\uNNNN``: what a stranger wrote never drives the terminal, and prints
    on one line."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


#: The most characters of a message quoted in a line (an error line of ``pdi``, a problem's ``detail``, a log line):
#: one that quotes a stranger's text whole (a 120,000-character option, a name of a megabyte) keeps its start and end.
MESSAGE_MOST = 2_000
#: The most characters of a name quoted in a line (:func:`clipped`): a name pdi mints is under a hundred, one with
#: a foreign id a few hundred; a stranger's may be a megabyte.
NAME_MOST = 1_000


def clipped(text: str, most: int = 200) -> str:
    """``text`` as :func:`printable` shows it when that is at most ``most`` characters; else cut in its middle: as
    much of its start and of its end as ``most`` characters show, and between them how many characters were left
    out (``abc…[119,800 characters left out]…xyz``). What a stranger wrote (a URL, a name, a value a million
    characters long) is named in a message or a log line, never copied into it whole, and never drives the
    terminal: the result is at most ``most`` characters and the marker, on one line. Pure; its time grows with
    ``most``, not with ``text``.
    """
    if len(text) <= most:
        shown = printable(text)
        if len(shown) <= most:
            return shown
    # ``most`` shown characters, a half each side (an escape, ``\x1b``, counted as the characters it shows as)
    start, used = 0, 0
    while start < len(text) and used + len(printable(text[start])) <= most - most // 2:
        used += len(printable(text[start]))
        start += 1
    end, used = len(text), 0
    while end > start and used + len(printable(text[end - 1])) <= most // 2:
        used += len(printable(text[end - 1]))
        end -= 1
    left_out = end - start
    return (f"{printable(text[:start])}…[{left_out:,} character{'' if left_out == 1 else 's'} left out]…"
            f"{printable(text[end:])}")


def shown_url(url: str) -> str:
    """``url`` as a message or a log line may name it: its userinfo (``user:password@`` of RFC 3986 §3.2.1, which
    §3.2.1 deprecates for a password and which a ``--registry`` or ``--key`` URL may still carry) written ``***@``,
    the user too (it may be a token itself); the rest as it is. Pure; a URL without an authority, or without
    userinfo in it, is returned as it is. The authority ends at the first ``/``, ``?`` or ``#`` (§3.2), and its
    userinfo at its last ``@``, as the URL's readers (httpx, urllib) take it."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    # RFC 3986's ends only: a reader that also ends it at "\\" (WHATWG) finds no more userinfo than this shows
    end = next((i for i, char in enumerate(rest) if char in "/?#"), len(rest))
    at = rest.rfind("@", 0, end)
    if at < 0:
        return url
    return f"{scheme}://***@{rest[at + 1:]}"


def public_url(url: str) -> str:
    """``url`` as an answer to anyone lists it (``N2Ls``, a ``Link``): without its userinfo at all, which a reader's
    client would send on as credentials (:func:`shown_url` finds it, a URL without any is returned as it is)."""
    shown = shown_url(url)
    return shown if shown == url else shown.replace("://***@", "://", 1)


#: In :func:`repr`'s writing of a field: a backslash it doubled (matched first, so that ``\\udc80`` written by the
#: client is left as it is); a character U+0080 to U+00FF it escaped ``\\xNN`` (a C1 control, a no-break space);
#: a lone surrogate of ``surrogateescape``, an octet that UTF-8 does not read.
_ESCAPED = re.compile(r"\\\\|\\x([89a-f][0-9a-f])|\\udc([89a-f][0-9a-f])")


def _octet_escaped(found: re.Match[str]) -> str:
    """``\\xNN`` for an octet that UTF-8 does not read alone; ``\\u00NN`` for the character U+00NN it read."""
    if found[1] is not None:
        return "\\u00" + found[1]
    if found[2] is not None:
        return "\\x" + found[2]
    return found[0]


def shown_field(value: str | bytes, most: int = 100) -> str:
    """A request header field's value as an answer's ``detail`` (or a log line) quotes it, ``'…'``: as its client most
    likely wrote it. A field's octets are what it sends (RFC 9110 §5.5 keeps octets beyond ASCII as ``obs-text``),
    and Starlette (like the ASGI servers) reads them as Latin-1, so the UTF-8 ``é`` of ``Accept-Datetime: é`` was
    quoted ``'Ã©'``. Here ``value`` (the field as Starlette gives it, or its octets) is read as UTF-8 again: an
    octet that UTF-8 does not read is shown ``\\xNN``, a control character as :func:`repr` escapes it (never
    driving a terminal; one of U+0080 to U+00FF as ``\\u00NN``, told apart from an octet). At most ``most``
    characters of it are quoted, then ``…`` outside the quotes. A ``str`` that is no Latin-1 reading of octets (a
    character past U+00FF) is quoted as the text it is."""
    if isinstance(value, str):
        try:
            value = value.encode("latin-1")
        except UnicodeEncodeError:
            text = value
        else:
            text = value.decode("utf-8", "surrogateescape")
    else:
        text = value.decode("utf-8", "surrogateescape")
    quoted = repr(text[:most])
    quoted = _ESCAPED.sub(_octet_escaped, quoted)
    return quoted + ("…" if len(text) > most else "")
