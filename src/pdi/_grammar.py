"""Character classes and %-escaping that the PDI grammar's parts share (draft lines 154-217).

Unique ids and element names (:mod:`pdi.identifier`) are written with the
draft's ``alpha / digit / other``; format tokens (:mod:`pdi.formats`) with the
characters media-type and charset names hold. This module, which imports
nothing of pdi's but its errors and its wording, is where those sets and their escaping live once.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from pdi._wording import clipped
from pdi.errors import ParseError

#: alpha / digit / other (line 154, 215): what a unique id or a token carries unescaped.
UNIQUE_SAFE: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789()-:;$_!'")
#: What a format token carries unescaped (docs/reference/identifiers.md, "Format tokens"): the characters
#: that media-type names (RFC 6838 §4.2) and charset names (RFC 2978 §2.3) may
#: hold, all of them RFC 2045 token characters, less the PDI's reserved ones
#: (line 217: ``%`` ``.`` ``#`` ``+`` are %-escaped; ``+`` stands once, between
#: major and minor type). Not ``( ) : ;``, RFC 2045 tspecials that no
#: media-type or charset name holds.
TOKEN_SAFE: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!$&'-^_`{}~")
_TOKEN_PART: Final = r"(?:[A-Za-z0-9!$&'\-^_`{}~]|%[0-9A-Fa-f]{2})+"
#: A format token as a regular expression: token characters and %-escapes, with
#: at most one literal ``+`` (``major+minor``), never first or last.
TOKEN_PATTERN: Final = rf"{_TOKEN_PART}(?:\+{_TOKEN_PART})?"
ESCAPE_RE: Final = re.compile(r"%([0-9A-Fa-f]{2})")


def upper_hex(text: str) -> str:
    """``text`` with the hex digits of every %-escape in upper case (equivalence, PDI-GRAMMAR.md §2.2)."""
    if "%" not in text:
        return text
    return ESCAPE_RE.sub(lambda m: "%" + m.group(1).upper(), text)


def escape(value: str, safe: frozenset[str]) -> str:
    """``value`` with every character outside ``safe`` %-escaped as UTF-8, upper-case hex."""
    try:
        return value.translate(_escapes(safe))
    except UnicodeEncodeError as exc:
        at = next(i for i, ch in enumerate(value) if "\ud800" <= ch <= "\udfff")  # what UTF-8 cannot encode
        raise ParseError(
            f"'{clipped(value)}' is not valid Unicode text: a lone surrogate U+{ord(value[at]):04X} has no UTF-8 encoding",
            text=value,
            offset=at,
            rule="unique-id",
        ) from exc


class _Escapes(dict[int, str]):
    """What :meth:`str.translate` writes for each character: itself when ``safe``, else its %-escapes.

    Filled as characters are met (translating in C was four times the speed of a loop over the
    characters, a twentieth of a WARC import, which names every page by its URL); the first 2,048 code
    points are kept, so a stranger's text cannot grow the table without bound.
    """

    def __init__(self, safe: frozenset[str]) -> None:
        super().__init__()
        self.safe = safe

    def __missing__(self, code: int) -> str:
        char = chr(code)
        written = char if char in self.safe else "%" + char.encode("utf-8").hex("%").upper()
        if code < 0x800:
            self[code] = written
        return written


@functools.lru_cache(maxsize=16)
def _escapes(safe: frozenset[str]) -> _Escapes:
    return _Escapes(safe)
