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

from hypothesis import given, settings
from hypothesis import strategies as st

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
