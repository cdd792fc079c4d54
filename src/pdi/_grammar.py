"""Character classes and %-escaping that the PDI grammar's parts share (draft lines 154-217).

Unique ids and element names (:mod:`pdi.identifier`) are written with the
draft's ``alpha / digit / other``; format tokens (:mod:`pdi.formats`) with the
characters media-type and charset names hold. This module, which imports
nothing of pdi's but its errors, is where those sets and their escaping live once.
"""

from __future__ import annotations

import re
from typing import Final

from pdi.errors import ParseError

#: alpha / digit / other (line 154, 215): what a unique id or a token carries unescaped.
UNIQUE_SAFE: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789()-:;$_!'")
#: What a format token carries unescaped (README "Format tokens"): the characters
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
    out: list[str] = []
    for ch in value:
        if ch in safe:
            out.append(ch)
        else:
            try:
                data = ch.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ParseError(f"{value!r} is not valid Unicode text", rule="unique-id") from exc
            out.extend(f"%{b:02X}" for b in data)
    return "".join(out)
