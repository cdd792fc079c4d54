"""PDIs (urn:pdi://… and pdi://…), with their fragments and citations: the identifier grammar.

The input is the identifier as UTF-8 text (other bytes as lone surrogates).
What must hold (PDI-GRAMMAR.md §2.2, the canonical form): ``str(p)`` parses
again, to the same canonical text (a fixed point), and is equivalent to the
input; a strict reading that succeeds is the lenient one without warnings; a
concrete identifier matches itself; the derived identifiers and the listing
query of a pattern are built without an error outside pdi.errors.
"""

from __future__ import annotations

import dataclasses

from fuzz_harness import Target

from fuzz_targets._common import text_of
from pdi.errors import PDIError
from pdi.identifier import PDI, equivalent


def run(data: bytes) -> None:
    text = text_of(data)
    p = PDI.parse(text)
    canonical = str(p)
    again = PDI.parse(canonical)
    assert str(again) == canonical
    assert p.canonical() == again
    assert equivalent(text, canonical)
    assert equivalent(text, again, ignore_fragment=True)
    try:
        strict = PDI.parse(text, strict=True)
    except PDIError:
        pass
    else:
        assert strict == dataclasses.replace(p, warnings=())
    if not p.is_pattern:
        assert p.matches(canonical)
        assert p.matches(p.without_fragment()) == (p.fragment is None and p.citation is None)
    p.to_query()
    for view in ("series_name", "country", "date", "media_type"):
        try:
            getattr(p, view)
        except PDIError:
            pass
    for derive in (p.without_fragment, lambda: p.with_version(7), lambda: p.with_format("html")):
        try:
            derived = derive()
        except PDIError:
            continue
        assert str(PDI.parse(str(derived))) == str(derived)
    if p.citation is not None:
        assert str(PDI.parse(str(p.citation.cited))) == str(p.citation.cited.canonical())


TARGET = Target(
    "pdi",
    run,
    warmup=b"urn:pdi://oma.eop.gov.us/1997/09/01/1.text.1#char=37,51",
    tokens=(
        b"urn:pdi://", b"pdi://", b"/", b".", b"*", b"#", b"@", b"=", b",", b"(", b")", b"%", b"%2E",
        b"%2F", b".text.1", b".html.", b".gif.1", b".utf-8.2", b".audio+mpeg.1", b"#char=", b"#line=",
        b"#byte=", b"#rect=", b"#crop=", b"#elt=", b"#name=", b"#sec=", b"#msec=", b"(5,10),(25,30)",
        b"@37=", b"gov.us", b".us/", b"/1997/09/01/", b"/2000/02/29/", b"/0000/01/01/", b"/9999/12/31/",
        b"http:%2F%2F", b"oma.eop.gov.us",
    ),
)
