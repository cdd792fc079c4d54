"""Character classes and %-escaping that the PDI grammar's parts share (draft lines 154-217).

Format tokens (:mod:`pdi.formats`) and unique ids and element names
(:mod:`pdi.identifier`) are written with the same characters; this module,
which imports nothing of pdi's, is where that set and its escaping live once.
"""

from __future__ import annotations

import re
from typing import Final

from pdi.errors import ParseError

#: alpha / digit / other (line 154, 215): what a unique id or a token carries unescaped.
UNIQUE_SAFE: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789()-:;$_!'")
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
