"""elt on SGML whose internal entities hold elements of the names the text writes too.

:mod:`pdi.fragments.markup.sgml` (module docstring): an element the parser
reads from an entity's replacement text counts, and spans nothing of the
text, a zero-length place where the reference stands or where the next
markup begins; an element whose start tag is written spans its tags. The
names and their order come from ``onsgmls`` run here (the oracle
PDI-GRAMMAR.md §3 names); where each tag is written is recorded while the
test writes the document.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.errors import UnsupportedError
from pdi.fragments.markup.sgml import read_sgml

PROLOG = (
    '<!DOCTYPE a [<!ELEMENT a - - (#PCDATA|b)*><!ELEMENT b - - (#PCDATA)><!ATTLIST b t CDATA #IMPLIED>'
    '<!ENTITY e "<b>x</b>"><!ENTITY f "<b>y</b>&e;">]>\r\n'
)
WRITTEN = ("<b>w</b>", '<b t="&e;">w</b>')  # (in an attribute value, the entity's text is data)
PIECES = st.lists(st.sampled_from([*WRITTEN, "&e;", "&f;", "\r\n", "t"]), max_size=8)


def onsgmls_names(text: str, directory: Path) -> list[str]:
    path = directory / "document.sgml"
    path.write_bytes(text.encode())
    run = subprocess.run(["onsgmls", "-E0", str(path)], capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr  # a valid document
    return [line[1:] for line in run.stdout.splitlines() if line.startswith("(")]


@settings(max_examples=60, deadline=None)
@given(PIECES)
def test_an_entity_element_never_takes_a_written_tag_of_its_name(pieces: list[str]) -> None:
    text = PROLOG + "<a>"
    written: list[tuple[int, int]] = []  # each written <b>'s extent, in order
    references: list[tuple[int, int]] = []  # (where a reference stands, how many elements its entity holds)
    for piece in pieces:
        if piece in WRITTEN:
            written.append((len(text), len(text) + len(piece)))
        elif piece.startswith("&"):
            references.append((len(text), 1 if piece == "&e;" else 2))
        text += piece
    text += "</a>"
    with tempfile.TemporaryDirectory() as directory:
        names = onsgmls_names(text, Path(directory))
    elements = read_sgml(text).elements
    assert [e.name for e in elements] == names == ["A"] + ["B"] * (len(written) + sum(n for _, n in references))
    assert (elements[0].start, elements[0].end) == (len(PROLOG), len(text))
    markup = sorted([start for start, _ in written] + [len(text) - 4])  # where written tags begin
    rest = iter(elements[1:])
    places = sorted([(start, "written", end) for start, end in written] + [(at, "entity", n) for at, n in references])
    for at, what, extent in places:
        if what == "written":
            element = next(rest)
            assert (element.start, element.end) == (at, extent), text
        else:
            next_markup = min(m for m in markup if m > at)
            for _ in range(extent):
                element = next(rest)
                assert element.start == element.end, text
                assert at <= element.start <= next_markup, text


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
