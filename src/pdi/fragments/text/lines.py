"""Line endings of plain text (RFC 5147 §4.1, the PDI draft's CRLF-canonical text).

RFC 5147 §4.1 names the line endings a text/plain entity may use: CR+LF (the
Internet convention), LF, CR, NEL (U+0085) and CR+NEL. Each of them is *one*
line ending, and counts as one character. The PDI draft stores text with CR+LF
line endings ("CRLF-canonical"); :func:`to_crlf` produces that form.

These functions work on decoded text (code points), so the same rules hold in
every charset: NEL is U+0085 whether it was written as ``C2 85`` (UTF-8),
``85`` (ISO-8859-1) or ``15`` (EBCDIC cp037).
"""

from __future__ import annotations

import re
from typing import Final

from pdi.errors import UnsupportedError

#: Every line ending of RFC 5147 §4.1, longest first so CR+LF and CR+NEL win over a lone CR.
LINE_ENDING_RE: Final = re.compile("\r\n|\r\x85|[\r\n\x85]")

#: The values :func:`line_ending_convention` returns, with the ending each one stands for.
LINE_ENDINGS: Final[dict[str, str]] = {
    "crlf": "\r\n",
    "lf": "\n",
    "cr": "\r",
    "nel": "\x85",
    "crnel": "\r\x85",
}

_NAMES: Final[dict[str, str]] = {ending: name for name, ending in LINE_ENDINGS.items()}


def to_crlf(text: str) -> str:
    """Return ``text`` with every line ending (CRLF, LF, CR, NEL, CR+NEL) written as CRLF.

    >>> to_crlf("a\\nb\\rc\\r\\nd\\x85e\\r\\x85")
    'a\\r\\nb\\r\\nc\\r\\nd\\r\\ne\\r\\n'
    """
    crlf = text.count("\r\n")
    if text.count("\r") == crlf == text.count("\n") and "\x85" not in text:  # every ending CRLF already: no copy
        return text
    # each ending made one LF, longest first (CR LF, CR NEL), then each LF CR LF: str.replace makes its one result
    # (and answers the text itself where it finds nothing), where LINE_ENDING_RE.sub kept a list of every piece
    # between two endings before joining them, 16 octets an ending: 8 MiB of short lines cost 130 MiB beside them
    if crlf:
        text = text.replace("\r\n", "\n")
    if "\r" in text:
        text = text.replace("\r\x85", "\n").replace("\r", "\n")
    return text.replace("\x85", "\n").replace("\n", "\r\n")


def from_crlf(text: str, convention: str) -> str:
    """Write the line endings of CRLF-canonical ``text`` in ``convention`` (a key of :data:`LINE_ENDINGS`).

    ``"mixed"`` and ``"none"`` cannot be restored and leave the text as it is.
    """
    if convention in ("mixed", "none", "crlf"):
        return text
    ending = LINE_ENDINGS.get(convention)
    if ending is None:
        raise UnsupportedError(f"unknown line-ending convention {convention!r}")
    return text.replace("\r\n", ending)


def line_ending_convention(text: str) -> str:
    """Name the line endings ``text`` uses.

    One of ``"crlf"``, ``"lf"``, ``"cr"``, ``"nel"``, ``"crnel"`` (every ending is
    CR+NEL, the EBCDIC mainframe habit), ``"mixed"`` (more than one kind) or
    ``"none"`` (no line ending at all).
    """
    seen: set[str] = set()
    for match in LINE_ENDING_RE.finditer(text):
        seen.add(match.group())
        if len(seen) > 1:
            return "mixed"
    if not seen:
        return "none"
    return _NAMES[seen.pop()]
