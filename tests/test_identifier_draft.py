"""Every PDI that appears in draft-mallery-urn-pdi-00, read as PDI-GRAMMAR.md says.

Lines 399, 437, 442, 448, 579, 584, 713, 717 and 723 of
``tests/data/specs/draft-mallery-urn-pdi-00.reflowed.txt``. Expected values are
worked out from the draft's text and the grammar page, not from the code.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pdi.errors import ParseError
from pdi.identifier import PDI, Fragment, equivalent

DATA = Path(__file__).resolve().parent / "data"
DRAFT = DATA / "specs" / "draft-mallery-urn-pdi-00.reflowed.txt"


def draft_line(n: int) -> str:
    """The text of numbered line ``n`` of the reflowed draft."""
    for line in DRAFT.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\s*(\d+)  (.*)$", line)
        if m and int(m.group(1)) == n:
            return m.group(2).strip()
    raise AssertionError(f"line {n} not in the draft")


def test_the_draft_lines_hold_the_pdis_we_test() -> None:
    # Guards against testing strings that are not the draft's.
    assert draft_line(399).startswith("pdi://oma.eop.gov.us/1994/10/20/http%3a")
    assert draft_line(437) == "pdi://oma.eop.gov/1997/09/01.html.1"
    assert draft_line(442) == "pdi://oma.eop.gov/1997/09/01.text.1"
    assert draft_line(448) == "pdi://oma.eop.gov/1997/09/01.text.2"
    assert draft_line(579) == "pdi://oma.eop.gov.us/1997/09/01/1.text.1#char=37,51"
    assert draft_line(584) == "pdi://oma.eop.gov.us/1997/09/01/1.text.1#37,51"
    assert (
        draft_line(713) == "pdi://images.satellite.nasa.gov.us/1997/09/30/1234.gif#(5,10),(25,30)"
    )
    assert (
        draft_line(717) == "pdi://images.satellite.nasa.gov.us/1997/09/30/1234.gif#(5,10),(25,30),0"
    )
    assert (
        draft_line(723) == "pdi://images.satellite.nasa.gov.us/1997/09/30/1234.gif#(5,10),(25,30),2"
    )


def test_draft_2_5_format_encapsulated_url_line_399() -> None:
    p = PDI.parse(draft_line(399))
    assert p.series == ("oma", "eop", "gov", "us")
    assert p.series_name == "oma.eop.gov.us"
    assert (p.year, p.month, p.day) == (1994, 10, 20)
    assert p.unique_id == "http://www.whitehouse.gov/"
    assert p.unique_id_raw == "http%3a%2f%2fwww%2ewhitehouse%2egov%2f"
    assert not p.is_serial and p.serial is None
    assert p.format == "html"
    assert p.version == 1
    assert p.fragment is None and p.citation is None
    assert p.warnings == ()
    # Canonical: urn: prefix, hex of %-escapes upper-cased, unique id otherwise as written.
    assert str(p) == (
        "urn:pdi://oma.eop.gov.us/1994/10/20/http%3A%2F%2Fwww%2Ewhitehouse%2Egov%2F.html.1"
    )
    assert PDI.parse(draft_line(399), strict=True) == p


@pytest.mark.parametrize("line", [437, 442, 448])
def test_draft_2_6_version_examples_lack_a_unique_id(line: int) -> None:
    # PDI-GRAMMAR.md §2.8: no unique-id segment; line 129 is not matched.
    text = draft_line(line)
    with pytest.raises(ParseError) as info:
        PDI.parse(text)
    err = info.value
    assert "unique id is missing" in str(err)
    assert err.rule == "resource-identifier"
    # The '/' and unique id were expected right after the day "01", at offset 28.
    assert text[:28] == "pdi://oma.eop.gov/1997/09/01"
    assert err.offset == 28


def test_draft_2_6_version_examples_with_the_unique_id_restored() -> None:
    # What the draft meant: the same document in html and text, then version 2.
    html = PDI.parse("pdi://oma.eop.gov/1997/09/01/1.html.1")
    text1 = PDI.parse("pdi://oma.eop.gov/1997/09/01/1.text.1")
    text2 = PDI.parse("pdi://oma.eop.gov/1997/09/01/1.text.2")
    assert (html.format, html.version) == ("html", 1)
    assert (text1.format, text1.version) == ("text", 1)
    assert (text2.format, text2.version) == ("text", 2)
    # "gov" is not an ISO 3166 code: a warning (§2.3), an error when strict.
    assert any("ISO 3166" in w for w in html.warnings)
    with pytest.raises(ParseError) as info:
        PDI.parse("pdi://oma.eop.gov/1997/09/01/1.html.1", strict=True)
    assert info.value.rule == "iso-country"
    assert info.value.offset == len("pdi://oma.eop.")


def test_draft_3_4_1_text_fragment_line_579() -> None:
    p = PDI.parse(draft_line(579))
    assert p.unique_id == "1" and p.is_serial and p.serial == 1
    assert (p.format, p.version) == ("text", 1)
    assert p.fragment == Fragment("char", (37, 51))
    assert p.warnings == ()
    assert str(p) == "urn:pdi://oma.eop.gov.us/1997/09/01/1.text.1#char=37,51"


def test_draft_3_4_1_text_fragment_default_scheme_line_584() -> None:
    p = PDI.parse(draft_line(584))
    assert p.fragment == Fragment(None, (37, 51))
    assert p.fragment is not None and p.fragment.effective_scheme(p.format) == "char"
    assert p.warnings == ()
    # Line 581-584: equivalent to line 579; the canonical form names the scheme.
    assert str(p) == "urn:pdi://oma.eop.gov.us/1997/09/01/1.text.1#char=37,51"
    assert equivalent(p, draft_line(579))


def test_draft_3_4_5_image_fragment_line_713() -> None:
    p = PDI.parse(draft_line(713))
    assert p.series_name == "images.satellite.nasa.gov.us"
    assert (p.year, p.month, p.day) == (1997, 9, 30)
    assert p.serial == 1234
    assert p.format == "gif"
    # The draft omits the version; PDI-GRAMMAR.md §2.7: version 1 supplied, with a warning.
    assert p.version == 1
    assert len(p.warnings) == 1 and "version" in p.warnings[0]
    assert p.fragment == Fragment(None, ((5, 10), (25, 30)))
    assert p.fragment is not None and p.fragment.effective_scheme("gif") == "rect"
    assert (
        str(p) == "urn:pdi://images.satellite.nasa.gov.us/1997/09/30/1234.gif.1#rect=(5,10),(25,30)"
    )
    with pytest.raises(ParseError) as info:
        PDI.parse(draft_line(713), strict=True)
    assert info.value.rule == "version"


def test_draft_3_4_5_image_fragment_default_frame_line_717() -> None:
    p = PDI.parse(draft_line(717))
    assert p.fragment == Fragment(None, ((5, 10), (25, 30), 0))
    # Line 715: equivalent to line 713 (frame 0 is the default and is dropped).
    assert (
        str(p) == "urn:pdi://images.satellite.nasa.gov.us/1997/09/30/1234.gif.1#rect=(5,10),(25,30)"
    )
    assert equivalent(p, draft_line(713))


def test_draft_3_4_5_image_fragment_third_frame_line_723() -> None:
    p = PDI.parse(draft_line(723))
    assert p.fragment == Fragment(None, ((5, 10), (25, 30), 2))
    assert str(p) == (
        "urn:pdi://images.satellite.nasa.gov.us/1997/09/30/1234.gif.1#rect=(5,10),(25,30),2"
    )
    assert not equivalent(p, draft_line(713))
    assert equivalent(p, draft_line(713), ignore_fragment=True)


def test_grammar_page_1_encapsulated_url_example() -> None:
    # The example under the ABNF of PDI-GRAMMAR.md §1.
    p = PDI.parse("pdi://oma.eop.gov.us/1994/10/20/http%3a%2f%2fwww%2ewhitehouse%2egov%2f.html.1")
    assert (p.unique_id, p.format, p.version) == ("http://www.whitehouse.gov/", "html", 1)


def test_grammar_page_2_4_white_house_unpadded_date() -> None:
    text = "urn:pdi://oma.eop.gov.us/1999/9/16/15.text.1"
    p = PDI.parse(text)
    assert (p.year, p.month, p.day) == (1999, 9, 16)
    assert str(p) == "urn:pdi://oma.eop.gov.us/1999/09/16/15.text.1"
    assert len(p.warnings) == 1 and "month" in p.warnings[0]
    with pytest.raises(ParseError) as info:
        PDI.parse(text, strict=True)
    assert info.value.rule == "month"
    assert info.value.offset == text.index("/9/") + 1
