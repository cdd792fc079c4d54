"""A citation that does not parse says which of its two PDIs is at fault (PDI draft, line 168:
``citing@origin=cited``): the citing one before the ``@``, the cited one after the ``=``, the offset into the
whole citation either way."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pdi.errors import ParseError
from pdi.identifier import PDI

A = "urn:pdi://example.ac.gb/2026/11/27/1.text.1"
#: What no PDI starts with: no '@', '#' or '=' in it (they would be read as a citation's or a fragment's marks).
NOT_A_PDI = st.text(alphabet=st.characters(codec="ascii", exclude_characters="@#="), min_size=1, max_size=40).filter(
    lambda t: not t.lower().startswith(("pdi:", "urn:")))


@given(NOT_A_PDI)
def test_a_cited_side_that_is_no_pdi_is_named(cited: str) -> None:
    with pytest.raises(ParseError) as refused:
        PDI.parse(f"{A}@5={cited}")
    assert str(refused.value).startswith("the cited PDI (after '='): ")
    assert refused.value.offset is not None and refused.value.offset >= len(A) + 3


@given(NOT_A_PDI)
def test_a_citing_side_that_is_no_pdi_is_named(citing: str) -> None:
    with pytest.raises(ParseError) as refused:
        PDI.parse(f"{citing}@5={A}")
    assert str(refused.value).startswith("the citing PDI (before '@'): ")
    assert refused.value.offset == 0


def test_a_name_without_a_citation_is_not_said_to_be_one_of_its_sides() -> None:
    with pytest.raises(ParseError) as refused:
        PDI.parse("x")
    assert str(refused.value) == "expected 'urn:pdi:' or 'pdi:' (rule pdi, offset 0)"
    with pytest.raises(ParseError) as refused:  # an '@' in a fragment is the fragment's (not %-escaped)
        PDI.parse(f"{A}#char=1@3")
    assert not str(refused.value).startswith("the citing PDI")


def test_a_citation_cited_is_named_once() -> None:
    with pytest.raises(ParseError) as refused:
        PDI.parse(f"{A}@5={A}@7=zz")
    assert str(refused.value) == ("the cited PDI (after '='): expected 'urn:pdi:' or 'pdi:'"
                                  f" (rule pdi, offset {2 * len(A) + 6})")


B = "pdi://example.ac.gb/2026/11/26/2.html.1"
POSITIONS = st.integers(0, 10**9).map(str)


@given(POSITIONS)
def test_a_citation_without_its_marks_is_told_which_it_lacks(position: str) -> None:
    """PDI-GRAMMAR.md §3: ``NAME@position=PDI``. The two names run together are no PDI; the error names the mark
    left out, the ``=``'s offset the start of the cited name."""
    from pdi.identifier import missing_citation_mark

    lacks_at = missing_citation_mark(f"{A}={B}")
    assert lacks_at is not None and "no '@' before a position" in str(lacks_at) and lacks_at.rule == "citation"
    lacks_eq = missing_citation_mark(f"{A}@{position}{B}")
    assert lacks_eq is not None and "no '=' between the position and the cited PDI" in str(lacks_eq)
    assert lacks_eq.offset == len(A) + 1 + len(position)
    assert missing_citation_mark(f"{A}@{position}={B}") is None  # whole: the grammar's own error, if any
    assert missing_citation_mark(A) is None and missing_citation_mark(f"  {A}#line=1,2 ") is None
    lacks_urn = missing_citation_mark(f"{A}@{position}urn:{B}")  # the cited name in its urn: spelling
    assert lacks_urn is not None and lacks_urn.offset == len(A) + 1 + len(position)


#: Anything a citing name may hold that is no mark and starts no name: letters of any script among them.
_CITING_TAIL = st.text(max_size=20).filter(lambda t: not any(c in t for c in "@=:"))


@given(_CITING_TAIL, POSITIONS)
@example("\u0130", "388")  # LATIN CAPITAL LETTER I WITH DOT ABOVE: str.lower() makes it two characters
@example("\u0130\u0130\u0130", "5")
def test_the_marks_a_citation_lacks_are_found_whatever_letters_its_citing_name_holds(tail: str, position: str) -> None:
    """The marks are looked for in the text as written: a citing name that holds letters of another script (no PDI,
    so its own error counts) is not said to lack an ``=`` it has, and the ``=`` left out is named where it is."""
    from pdi.identifier import missing_citation_mark

    citing = A + tail.rstrip()
    assert missing_citation_mark(f"{citing}@{position}={B}") is None
    lacks_eq = missing_citation_mark(f"{citing}@{position}{B}")
    assert lacks_eq is not None and "no '=' between the position and the cited PDI" in str(lacks_eq)
    assert lacks_eq.offset == len(citing) + 1 + len(position)


@given(st.sampled_from(["urn:pdi://other.ac.gb/2026/11/20/4.text.1", "pdi://x.us/2000/01/02/7", "ocpdi:7", "urn:pdi:"]),
       POSITIONS)
def test_a_citing_name_whose_id_holds_pdi_colon_starts_no_second_name(foreign: str, position: str) -> None:
    """A foreign id that is itself a PDI (a mirror's name for another archive's document) is minted with its ``:``
    kept and its ``/`` escaped (``…/urn:pdi:%2F%2Fother…``): no second name begins there, so a citation with both
    marks is not said to lack its ``@``, nor one that lacks its ``=`` said to lack the ``@`` instead."""
    import datetime

    from pdi.identifier import missing_citation_mark

    citing = str(PDI.build(series="example.ac.gb", date=datetime.date(2026, 11, 27), foreign_id=foreign,
                           format="text", version=1))
    assert missing_citation_mark(f"{citing}#char=5,1") is None  # one name: its own error counts
    assert missing_citation_mark(f"{citing}@{position}={B}#char=5,1") is None
    lacks_at = missing_citation_mark(f"{citing}={B}")
    assert lacks_at is not None and "no '@' before a position" in str(lacks_at)
    lacks_eq = missing_citation_mark(f"{citing}@{position}{B}")
    assert lacks_eq is not None and "no '=' between the position and the cited PDI" in str(lacks_eq)
    assert lacks_eq.offset == len(citing) + 1 + len(position)
