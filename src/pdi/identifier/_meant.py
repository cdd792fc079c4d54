"""The name a reader meant by a string that is no PDI, where one rule says so; shared by every edge that answers
a name typed or pasted (the command line's error line, the resolver's problem details, the reader's problem
pages), so that they offer the same name.

Pure: no I/O.
"""

from __future__ import annotations

from pdi._wording import NAME_MOST, clipped
from pdi.errors import ParseError, PDIError
from pdi.identifier._pdi import PDI

#: How many of a text's last ``%23`` :func:`hash_unescaped` tries: a fragment's own (a search for ``#``) are few,
#: and a stranger's text may hold a hundred thousand, each try a parse of the whole.
_MOST_TRIED = 4


def hash_unescaped(typed: str) -> str | None:
    """``typed`` (a PDI that does not parse) with a ``%23`` written ``#``, when that is a PDI: the name part of an
    RFC 2169 address (``…/1.text.1%23line=5,6``), whose ``#`` the address writes ``%23``. The last one whose
    mending parses (of the last :data:`_MOST_TRIED`): an id may hold an escaped ``#`` of its own (``a%23b``:
    PDI-GRAMMAR.md §1, reserved characters) before the fragment, and a fragment after its ``#`` (a search for
    ``a#b`` is ``#search=a%23b``); ``None`` when ``typed`` parses as it is, or when no mended text does."""
    if not typed.lower().startswith(("urn:pdi:", "pdi:")) or "%23" not in typed:
        return None
    if _parses(typed):
        return None
    end = len(typed)
    for _ in range(_MOST_TRIED):
        at = typed.rfind("%23", 0, end)
        if at < 0:
            return None
        mended = f"{typed[:at]}#{typed[at + 3:]}"
        if _parses(mended):
            return mended
        end = at
    return None


def _parses(name: str) -> bool:
    """Whether ``name`` is a PDI (:meth:`PDI.parse`, lenient)."""
    try:
        PDI.parse(name)
    except PDIError:
        return False
    return True


def saying_name_meant(error: ParseError) -> ParseError:
    """``error`` (raised on the text of a name) ending ``; did you mean 'NAME'?`` where :func:`hash_unescaped`
    finds the name meant, its rule and offset kept; else ``error`` itself."""
    meant = hash_unescaped(error.text) if error.text and "%23" in error.text else None
    if meant is None:
        return error
    return ParseError(f"{error.reason}; did you mean '{clipped(meant, NAME_MOST)}'?", text=error.text,
                      offset=error.offset, rule=error.rule)
