"""The name a reader meant by a string that is no PDI, where one rule says so; shared by every edge that answers
a name typed or pasted (the command line's error line, the resolver's problem details, the reader's problem
pages), so that they offer the same name; and the mark a citation written without its ``@`` or ``=`` lacks.

Pure: no I/O.
"""

from __future__ import annotations

from pdi._ascii import ascii_lower
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


_CITATION_SHAPE = "a citation is NAME@position=PDI, such as …/2.html.1@388=…/1.text.1#line=5,6"


def missing_citation_mark(text: str) -> ParseError | None:
    """The error that names the mark a citation that did not parse lacks (PDI-GRAMMAR.md §3, ``NAME@position=PDI``): its ``@`` (``A=B``), or the ``=`` between
    its position and the cited PDI (``A@388B``); ``None`` when both are there (the grammar's own error says what
    is wrong then). Without it, the names run together are read as one, and the grammar's error is of a ``/`` in
    the specifier or an element name, true of that reading and no help in mending the citation."""
    text = text.strip()
    lowered = ascii_lower(text)  # one character for one: str.lower() makes 'İ' two, and offsets slip
    # where a second name begins (not the "pdi:" of a "urn:pdi:"): at its "//" too, which no part of a name holds
    # unescaped, where a unique id may hold "pdi:" (a foreign id that is a PDI: "urn:pdi:%2F%2F…")
    starts = [i for i in range(1, len(lowered)) if lowered.startswith("urn:pdi://", i)
              or (lowered.startswith("pdi://", i) and lowered[i - 4:i] != "urn:")]
    if not starts:  # no second name: not a citation written with a mark left out
        return None
    at = text.find("@")
    if at < 0 or at > starts[0]:
        return ParseError(f"not a citation: no '@' before a position ({_CITATION_SHAPE})", rule="citation")
    cited = next((i for i in starts if i > at), None)
    if cited is not None and text[cited - 1] != "=":
        return ParseError(f"no '=' between the position and the cited PDI ({_CITATION_SHAPE})", rule="citation",
                          offset=cited)
    return None
