"""The literals of an XML document's internal DTD subset that expat leaves unread, checked.

After a reference to an external parameter entity, which is not read, expat
processes no declaration (XML 1.0 §5.1 forbids it), and so never reads the
entity values and attribute defaults that follow: ``<!ENTITY e "&">``,
``<!ENTITY e "%">`` or ``<!ATTLIST a b CDATA "<">`` there passed, though
their grammar (§2.3 [9] EntityValue, [10] AttValue; §4.1 WFC: Legal
Character; §2.8 WFC: PEs in Internal Subset) makes the document not
well-formed whatever is declared. :func:`subset_error` reads them: expat has
checked the declarations around them (names, keywords, literals' ends), so
only where each declaration and literal begins and ends is found here.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final

from pdi.fragments.markup.xml_names import FIFTH_NAME_ONLY, FIFTH_START, code_point

_NAME: Final = f"[:A-Z_a-z{FIFTH_START}][-.0-9:A-Z_a-z{FIFTH_START}{FIFTH_NAME_ONLY}]*"
_REFERENCE: Final = f"&(?:#[0-9]+;|#x[0-9a-fA-F]+;|{_NAME};)"
#: [9] EntityValue's characters in the internal subset (no parameter-entity reference there, §2.8)
_ENTITY_VALUE: Final = re.compile(f"(?:[^%&]|{_REFERENCE})*")
#: [10] AttValue's
_ATTRIBUTE_VALUE: Final = re.compile(f"(?:[^<&]|{_REFERENCE})*")
_CHARACTER_REFERENCE: Final = re.compile(r"&#(x[0-9a-fA-F]+|[0-9]+);")
#: What the subset holds between declarations: white space, a parameter-entity reference, a comment, a
#: processing instruction, or the start of a declaration (its keyword).
_BETWEEN: Final = re.compile(r"\s+|%[^;]*;|<!--.*?-->|<\?.*?\?>|<!([A-Z]+)", re.DOTALL)
_DECLARATION_PART: Final = re.compile(r""""[^"]*"|'[^']*'|[^"'>]+""")


def subset_error(subset: str) -> str | None:
    """What makes the internal subset ``subset`` (what is between its ``[`` and ``]``) not well-formed in its
    entity values and attribute defaults, or ``None``."""
    at = 0
    while at < len(subset):
        between = _BETWEEN.match(subset, at)
        if between is None:
            return None  # not what expat read: leave it to expat
        at = between.end()
        keyword = between.group(1)
        if keyword is None:
            continue
        literals = []
        while at < len(subset) and subset[at] != ">":
            part = _DECLARATION_PART.match(subset, at)
            if part is None:
                return None
            if part.group()[0] in "\"'":
                literals.append((part.start(), part.group()[1:-1]))
            at = part.end()
        at += 1
        if keyword == "ENTITY" and literals and _entity_value_first(subset, literals[0][0]):
            error = _value_error(literals[0][1], _ENTITY_VALUE, "an entity value", "[9] EntityValue; §2.8")
        elif keyword == "ATTLIST":
            error = next((e for _, v in literals if (e := _value_error(v, _ATTRIBUTE_VALUE, "an attribute default",
                                                                       "[10] AttValue"))), None)
        else:
            error = None
        if error is not None:
            return error
    return None


def _entity_value_first(subset: str, literal_at: int) -> bool:
    """Whether the literal at ``literal_at`` is an entity declaration's value, not its external identifier's."""
    at = literal_at
    while at > 0 and subset[at - 1] in " \t\r\n":
        at -= 1
    return not subset.endswith(("SYSTEM", "PUBLIC"), 0, at)


def _value_error(value: str, grammar: re.Pattern[str], what: str, production: str) -> str | None:
    if not grammar.fullmatch(value):
        return f"{what} ({value[:40]!r}) is not XML 1.0's ({production})"
    for reference in _CHARACTER_REFERENCE.finditer(value):
        point = code_point(reference.group(1))
        if point is None or not (point in (0x9, 0xA, 0xD) or 0x20 <= point <= 0xD7FF or 0xE000 <= point <= 0xFFFD
                                 or 0x10000 <= point <= 0x10FFFF):
            return f"{what} refers to a character that is not an XML Char ({reference.group()}; §4.1 WFC: Legal Character)"
    return None
