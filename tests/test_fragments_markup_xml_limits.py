"""What one ``elt`` fragment on XML (SVG too) may cost: the bounds on what expat is given.

expat is fast, but :func:`~pdi.fragments.markup.reading.xml_elements` keeps a
Python value and an attributes dict for every element: 8 MiB of ``<a/>`` was
2 million elements, 1.4 GiB and 12 s on every read, and one tag of 845,000
attributes 500 MiB. The bounds are HTML's (:mod:`pdi.fragments.markup.reading`,
``tests/test_fragments_markup_limits.py``): octets, start tags and a tag's
attributes are counted before expat starts, depth and attributes in all as it
meets them; a document past them is deposited whole, its index holds the
refusal, and its ``elt`` is a :class:`~pdi.errors.LimitError` at once, naming
the bound and ``#char=``. Memory is read from the kernel as a child process's
peak (``tests/peak_memory.py``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pdi import fragments
from pdi.archive import Archive
from pdi.errors import LimitError
from pdi.fragments import markup
from pdi.fragments.markup import bounds
from pdi.fragments.markup.bounds import (
    MAX_ATTRIBUTES,
    MAX_DEPTH,
    MAX_START_TAGS,
    MAX_TAG_ATTRIBUTES,
)
from pdi.fragments.markup.index import ElementIndex
from peak_memory import run_with_peak
from support.kept_refusal import assert_refused_from_the_index, assert_the_command_line_refuses

S = "archives.gov.us"
CITE_TEXT = r"#char=, #line=\) select its text without parsing it"
SVG = '<svg xmlns="http://www.w3.org/2000/svg">'


def elt(document: str | bytes, first: int = 0, last: int = 0, media_type: str = "application/xml") -> bytes:
    data = document.encode() if isinstance(document, str) else document
    return bytes(fragments.evaluate("elt", (first, last), data, media_type=media_type).data)


@pytest.fixture
def no_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """expat must not be started."""
    import xml.parsers.expat

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("expat was started")

    monkeypatch.setattr(xml.parsers.expat, "ParserCreate", refuse)


def test_more_start_tags_than_the_bound_are_refused_before_parsing(no_parse: None) -> None:
    document = "<r>" + "<a/>" * MAX_START_TAGS + "</r>"  # one more than the bound, with <r>
    with pytest.raises(LimitError, match=rf"this XML \({len(document):,} characters\) has {MAX_START_TAGS + 1:,}"
                                         rf" start tags, more than the {MAX_START_TAGS:,} element fragments .*{CITE_TEXT}"):
        elt(document)


def test_end_tags_comments_declarations_and_processing_instructions_are_not_start_tags() -> None:
    tags = "<a/>" * (MAX_START_TAGS - 1)
    document = f'<?xml version="1.0"?><!DOCTYPE r><!-- a --><?pi x?><r>{tags}</r>'
    assert elt(document, MAX_START_TAGS - 1, MAX_START_TAGS - 1) == b"<a/>"


def test_a_document_larger_than_the_bound_is_refused_by_its_size_before_it_is_read(no_parse: None) -> None:
    document = b"<r>" + b" " * bounds.MAX_MARKUP_OCTETS + b"</r>"
    with pytest.raises(LimitError, match=rf"this XML is {bounds.MAX_MARKUP_OCTETS + 7:,} octets, more than the"
                                         rf" 8 MiB .*{CITE_TEXT}"):
        elt(document)
    assert fragments.evaluate("char", (0, 3), document, media_type="application/xml").data == b"<r>"


def test_nesting_deeper_than_the_bound_is_refused_where_it_gets_too_deep() -> None:
    deepest = "<a>" * MAX_DEPTH + "x"
    assert elt(deepest + "</a>" * MAX_DEPTH, MAX_DEPTH - 1, MAX_DEPTH - 1) == b"<a>x</a>"
    opened = "<r>é" + "<a>" * (MAX_DEPTH - 1)  # positions are characters, not octets
    too_deep = opened + "<b>y</b>" + "</a>" * (MAX_DEPTH - 1) + "</r>"
    at = len(opened)
    with pytest.raises(LimitError, match=rf"this XML nests elements more than {MAX_DEPTH} deep \(at character {at}\)"
                                         rf".*{CITE_TEXT}"):
        elt(too_deep)
    # nearly 100,000 deep (as many start tags as allowed), as SVG
    with pytest.raises(LimitError, match=f"more than {MAX_DEPTH} deep"):
        elt(SVG + "<g>" * 99_999 + "</g>" * 99_999 + "</svg>", media_type="image/svg+xml")


def test_a_tag_of_more_attributes_than_the_bound_is_refused_before_parsing(no_parse: None) -> None:
    names = [f'a{i} = "v>{i}"' if i % 2 else f"a{i}='{i}'" for i in range(MAX_TAG_ATTRIBUTES + 1)]
    at = len("<r>é")
    with pytest.raises(LimitError, match=rf"the tag at character {at} has more than {MAX_TAG_ATTRIBUTES}"
                                         rf" attributes.*{CITE_TEXT}"):
        elt("<r>é<p " + " ".join(names) + "/></r>")


def test_a_tag_of_as_many_attributes_as_the_bound_is_read() -> None:
    names = [f'a{i} = "v>{i}"' if i % 2 else f"a{i}='{i}'" for i in range(MAX_TAG_ATTRIBUTES)]
    tag = "<p " + " ".join(names) + "/>"
    assert elt("<r>" + tag + "</r>", 1, 1) == tag.encode()


def test_more_attributes_in_all_than_the_bound_are_refused() -> None:
    tag = "<a " + " ".join(f'b{i}=""' for i in range(100)) + "/>"
    with pytest.raises(LimitError, match=rf"this XML has more than {MAX_ATTRIBUTES:,} attributes.*{CITE_TEXT}"):
        elt("<r>" + tag * (MAX_ATTRIBUTES // 100 + 1) + "</r>")


def test_elements_from_entities_count_towards_the_bound_on_start_tags() -> None:
    """Reported: an entity of 1,000 ``<x/>`` referenced through another 1,950 × 100 times, behind 8 MiB of comment
    (expat's amplification limit lets 8 MiB grow a hundredfold), made expat call back 195 million times: 150 s of
    processor for each elt. An entity's elements are counted as start tags are (in SGML too)."""
    entities = "<!ENTITY a '" + "<x/>" * 1000 + "'><!ENTITY b '" + "&a;" * 100 + "'>"
    prolog = f"<!DOCTYPE r [{entities}]><r>"
    document = prolog + "&b;" * (MAX_START_TAGS // 100_000 + 1) + "<y/></r>"  # 100,000 x, then r and y
    assert len(document) < 10_000 and document.count("<") - document.count("</") - document.count("<!") < 1010  # the entity's 1,000 too
    with pytest.raises(LimitError, match=rf"this XML has more than {MAX_START_TAGS:,} elements, its entities'"
                                         rf" replacement text counted \(at character {len(prolog)}\).*{CITE_TEXT}"):
        elt(document)
    within = prolog + "&a;" * 99 + "<y/></r>"  # 99,000 x, r and y: as many elements as the bound allows, and fewer
    assert elt(within, 1, 1) == b"<y/>"


def test_a_parse_that_failed_is_not_tried_again() -> None:
    document = ("<a>" * (MAX_DEPTH + 1) + "</a>" * (MAX_DEPTH + 1)).encode()
    markup._elements.cache_clear()
    for _ in range(3):
        with pytest.raises(LimitError, match="deep"):
            elt(document)
    assert (markup._elements.cache_info().misses, markup._elements.cache_info().hits) == (1, 2)


@pytest.mark.parametrize(("token", "document"), [
    ("xml", "<r>" + "<a/>" * MAX_START_TAGS + "</r>"),
    ("svg%2Bxml", SVG + "<g>" * MAX_DEPTH + "</g>" * MAX_DEPTH + "</svg>"),
    ("atom%2Bxml", '<feed xmlns="http://www.w3.org/2005/Atom"><entry ' + " ".join(f'a{i}=""' for i in range(300)) + "/></feed>"),
])
def test_a_document_past_the_bounds_is_deposited_and_its_element_fragments_refused_at_once(
    tmp_path: Path, token: str, document: str,
) -> None:
    data = document.encode()
    archive = Archive.init(str(tmp_path / "archive"))
    try:
        archive.add_series(S)
        name = archive.add(S, data, format=token)
        assert archive.get(str(name)).data == data  # kept whole
        assert archive.get(f"{name}#char=0,4").data == data[:4]
        assert_refused_from_the_index(archive, str(name), ("elt=1,1",), rf"(start tags|deep|attributes).*{CITE_TEXT}")
        location = str(tmp_path / "archive")
    finally:
        archive.close()
    assert_the_command_line_refuses(location, f"{name}#elt=1,1", "element fragments")


def test_an_svg_within_the_bounds_is_answered_from_its_index_made_at_deposit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = (SVG + '<rect id="r"/><g><circle/></g></svg>').encode()
    archive = Archive.init(str(tmp_path / "archive"))
    try:
        archive.add_series(S)
        name = archive.add(S, data, format="svg%2Bxml")
        index = archive.fragment_index(archive.get(str(name)).record)
        assert index is not None and ElementIndex.from_bytes(index).failure is None
        import xml.parsers.expat

        def refuse(*args: object, **kwargs: object) -> None:
            raise AssertionError("expat was started")

        monkeypatch.setattr(xml.parsers.expat, "ParserCreate", refuse)  # read from the index, not parsed
        assert archive.get(f"{name}#elt=2,2").data == b"<g><circle/></g>"
    finally:
        archive.close()


# --- memory -------------------------------------------------------------------------------

_PARSE = """
import sys
from pdi import fragments
from pdi.errors import LimitError
data = open(sys.argv[1], "rb").read()
index = fragments.build_index(data, media_type=sys.argv[2])
try:
    fragments.evaluate("elt", (1, 1), data, media_type=sys.argv[2])  # parsed again, without the index
    print("parsed")
except LimitError:
    print("limit")
"""


def _peak_mib(path: Path, media_type: str = "application/xml") -> tuple[float, str]:
    status, peak, out = run_with_peak([sys.executable, "-c", _PARSE, str(path), media_type], stdout=subprocess.PIPE)
    assert status == 0
    return peak / 1024, out.decode().strip()


def test_the_worst_document_within_the_bounds_and_bombs_past_them_stay_in_bounded_memory(tmp_path: Path) -> None:
    small = tmp_path / "small.xml"
    small.write_text("<r>" + "<a>x</a>" * 10 + "</r>")
    base, said = _peak_mib(small)
    assert said == "parsed"
    # as many start tags and attributes as allowed, and the rest of the octets text
    worst = tmp_path / "worst.xml"
    tags = '<a x="1" y="2" z="3"/><a x="1" y="2"/>' * ((MAX_START_TAGS - 1) // 2)  # 5 attributes a pair
    assert 5 * ((MAX_START_TAGS - 1) // 2) <= MAX_ATTRIBUTES
    worst.write_text("<r>" + tags + "w" * (bounds.MAX_MARKUP_OCTETS - len(tags) - 7) + "</r>")
    assert worst.stat().st_size == bounds.MAX_MARKUP_OCTETS
    for media_type in ("application/xml", "image/svg+xml"):
        peak, said = _peak_mib(worst, media_type)
        assert said == "parsed"
        assert peak - base < 200, f"the worst {media_type} within the bounds took {peak - base:.0f} MiB more than a small one"
    empties = "<r>" + "<a/>" * ((bounds.MAX_MARKUP_OCTETS - 7) // 4) + "</r>"  # 8 MiB of <a/>: 2 million elements
    deep = "<a>" * MAX_START_TAGS + "</a>" * MAX_START_TAGS  # as many start tags as allowed, all nested
    crowded = "<r " + " ".join(f'a{i:x}=""' for i in range(800_000)) + "/>"  # one tag, 800,000 attributes
    for label, document in (("empties", empties), ("deep", deep), ("crowded", crowded)):
        bomb = tmp_path / f"{label}.xml"
        bomb.write_text(document)
        peak, said = _peak_mib(bomb)
        assert said == "limit", label
        assert peak - base < 64, f"refusing the {label} bomb took {peak - base:.0f} MiB more than a small document"
