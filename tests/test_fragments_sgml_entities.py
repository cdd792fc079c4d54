"""elt on SGML whose internal entities hold elements of the names the text writes too.

:mod:`pdi.fragments.markup.sgml` (module docstring): an element the parser
reads from an entity's replacement text counts, and spans nothing of the
text, a zero-length place where the reference stands; an element whose start
tag is written spans its tags. The
names and their order come from ``onsgmls`` run here (the oracle
PDI-GRAMMAR.md §3 names); where each tag is written is recorded while the
test writes the document.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pdi.errors import UnsupportedError
from pdi.fragments.markup.sgml import read_sgml

PROLOG = (
    '<!DOCTYPE a [<!ELEMENT a - - (#PCDATA|b)*><!ELEMENT b - - (#PCDATA)><!ATTLIST b t CDATA #IMPLIED>'
    '<!ENTITY e "<b>x</b>"><!ENTITY f "<b>y</b>&e;"><!ENTITY g "<b>z</b><!-- &f; -->">]>\r\n'
)
HELD = {"&e;": 1, "&f;": 2, "&g;": 1}  # the elements each reference's entity holds (g's comment holds none)
WRITTEN = ("<b>w</b>", '<b t="&e;">w</b>')  # (in an attribute value, the entity's text is data)
COMMENT = "<!-- &e; &f; -->"  # (a reference in a comment is no reference)
PIECES = st.lists(st.sampled_from([*WRITTEN, *HELD, "\r\n", "t", COMMENT]), max_size=8)


def onsgmls_names(text: str, directory: Path) -> list[str]:
    path = directory / "document.sgml"
    path.write_bytes(text.encode())
    run = subprocess.run(["onsgmls", "-E0", str(path)], capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr  # a valid document
    return [line[1:] for line in run.stdout.splitlines() if line.startswith("(")]


@settings(max_examples=60, deadline=None)
@example(["\r\n", "\r\n", "&e;", "&e;"])  # (found by a hunt: onsgmls reports the held-back record end late)
@given(PIECES)
def test_an_entity_element_never_takes_a_written_tag_of_its_name(pieces: list[str]) -> None:
    text = PROLOG + "<a>"
    written: list[tuple[int, int]] = []  # each written <b>'s extent, in order
    references: list[tuple[int, int]] = []  # (where a reference stands, how many elements its entity holds)
    for piece in pieces:
        if piece in WRITTEN:
            written.append((len(text), len(text) + len(piece)))
        elif piece.startswith("&"):
            references.append((len(text), HELD[piece]))
        text += piece
    text += "</a>"
    with tempfile.TemporaryDirectory() as directory:
        names = onsgmls_names(text, Path(directory))
    elements = read_sgml(text).elements
    assert [e.name for e in elements] == names == ["A"] + ["B"] * (len(written) + sum(n for _, n in references))
    assert (elements[0].start, elements[0].end) == (len(PROLOG), len(text))
    rest = iter(elements[1:])
    places = sorted([(start, "written", end) for start, end in written] + [(at, "entity", n) for at, n in references])
    for at, what, extent in places:
        if what == "written":
            element = next(rest)
            assert (element.start, element.end) == (at, extent), text
        else:  # each of the entity's elements (f's own and those of the e it refers to) where the reference is
            for _ in range(extent):
                element = next(rest)
                assert (element.start, element.end) == (at, at), text


SHORT_REFERENCES = (
    "<!DOCTYPE a [<!ELEMENT a - - (#PCDATA|b)*><!ELEMENT b - - (#PCDATA)>{entities}"
    "<!SHORTREF m '*' {start} '#' {end}><!USEMAP m a>]>\r\n<a>x*y#<b>w</b></a>"
)


def test_a_short_reference_to_an_entity_of_tags_is_refused_naming_the_entity() -> None:
    # ISO 8879 §11.5: in <a>, "*" and "#" are references to s and t, a start tag and an end tag of b; onsgmls
    # reports two B, the first from them, and says nothing of where "*" stands: its tag is not to be told from <b>
    text = SHORT_REFERENCES.format(entities='<!ENTITY s STARTTAG "b"><!ENTITY t ENDTAG "b">', start="s", end="t")
    with tempfile.TemporaryDirectory() as directory:
        assert onsgmls_names(text, Path(directory)) == ["A", "B", "B"]
    with pytest.raises(UnsupportedError, match="maps a short reference to the entity 's'"):
        read_sgml(text)
    for entities in ('<!ENTITY s "<b>"><!ENTITY t "</b>">', ""):  # in a literal; declared where pdi cannot see
        with pytest.raises(UnsupportedError, match="short reference"):
            read_sgml(SHORT_REFERENCES.format(entities=entities, start="s", end="t"))


def test_a_short_reference_to_data_is_read_as_written() -> None:
    text = SHORT_REFERENCES.format(entities='<!ENTITY s SDATA "[ldquo]"><!ENTITY t "z">', start="s", end="t")
    with tempfile.TemporaryDirectory() as directory:
        assert onsgmls_names(text, Path(directory)) == ["A", "B"]
    elements = read_sgml(text).elements
    assert [(e.name, text[e.start : e.end]) for e in elements] == [
        ("A", "<a>x*y#<b>w</b></a>"), ("B", "<b>w</b>")
    ]


MEMO = (
    "<!DOCTYPE memo [\r\n<!ELEMENT memo - - (p+)>\r\n<!ELEMENT p - O (#PCDATA|em)*>\r\n<!ELEMENT em - - (#PCDATA)>\r\n"
    '<!ENTITY sig "<p>Signed, <em>the Clerk</em>">\r\n<!ENTITY close "here</em>">\r\n]>\r\n'
    "<memo>\r\n<p>Second paragraph has <em>emphasis</em> here.\r\n&sig;\r\n<p>An <em>open &close; at last.\r\n</memo>\r\n"
)


def onsgmls_events(text: str, directory: Path) -> list[str]:
    """onsgmls's ESIS of ``text``, with each internal entity's name where the content refers to it (``-oentity``)."""
    path = directory / "document.sgml"
    path.write_bytes(text.encode())
    run = subprocess.run(["onsgmls", "-E0", "-oentity", str(path)], capture_output=True, text=True, timeout=60,
                         check=False)
    assert run.returncode == 0, run.stderr
    events = [line for line in run.stdout.splitlines() if line[:1] in "()" or line.startswith(("Isig ", "Iclose "))]
    return events[2:]  # (-oentity first writes every entity's definition once)


def test_an_element_closed_by_an_entitys_tag_ends_at_the_reference() -> None:
    """Found by trying a memo with a signature entity, 2026-11-30: the <p> before ``&sig;`` (its end tag omitted) was
    cut to end where the document's next markup begins, after the reference, so it held the reference that opens
    the next paragraph; and the elements of ``&sig;`` stood there too. onsgmls closes that <p> where it reads the
    entity's <p>, the reference; an <em> whose end tag the entity ``&close;`` holds ends after that reference."""
    with tempfile.TemporaryDirectory() as directory:
        events = onsgmls_events(MEMO, Path(directory))
    assert events == ["(MEMO", "(P", "(EM", ")EM", "Isig TEXT <p>Signed, <em>the Clerk</em>", ")P", "(P", "(EM", ")EM",
                      ")P", "(P", "(EM", "Iclose TEXT here</em>", ")EM", ")P", ")MEMO"]
    sig = MEMO.index("&sig;")
    elements = read_sgml(MEMO).elements
    assert [e.name for e in elements] == [e[1:] for e in events if e.startswith("(")]
    assert [MEMO[e.start : e.end] for e in elements[1:3]] == [
        "<p>Second paragraph has <em>emphasis</em> here.\r\n", "<em>emphasis</em>"]
    assert [(e.start, e.end) for e in elements[3:5]] == [(sig, sig), (sig, sig)]  # the entity's <p> and <em>
    assert MEMO[elements[5].start : elements[5].end] == "<p>An <em>open &close; at last.\r\n"
    assert MEMO[elements[6].start : elements[6].end] == "<em>open &close;"


def test_an_entitys_elements_stand_at_its_reference_not_at_a_name_that_folds_to_it() -> None:
    """``&ſig;`` (U+017F LONG S, which Python's Unicode case rules match with ``s``) is no reference to ``sig``:
    ``ſ`` starts no SGML name, so the ``&`` is data and onsgmls reads the one element of ``sig`` at ``&sig;``."""
    prolog = ('<!DOCTYPE a [<!ELEMENT a - - (#PCDATA|b)*><!ELEMENT b - - (#PCDATA)>'
              '<!ENTITY sig "<b>x</b>">]>\r\n')
    text = prolog + "<a>t &\u017fig; u &sig; v</a>"
    with tempfile.TemporaryDirectory() as directory:
        assert onsgmls_names(text, Path(directory)) == ["A", "B"]
    elements = read_sgml(text).elements
    at = text.index("&sig;")
    assert [(e.name, e.start, e.end) for e in elements] == [("A", len(prolog), len(text)), ("B", at, at)]
