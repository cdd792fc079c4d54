"""The text layer of a PDF (``docs/pdf-text-layer.md``, :mod:`pdi.fragments.pdf`) on the corpus of tests/data/pdf.

The oracle is poppler (Debian's poppler-utils, another PDF reader than the
PDFium the layer comes from): ``pdfinfo`` for the number of pages and
``pdftotext`` for each page's text. The two order a page's text differently
(pdftotext analyses the layout; the layer follows the content stream) and
spell ligatures, hyphenation and Arabic presentation forms differently, so
what is compared is the multiset of each page's letters and digits after
NFKC and case folding: the same characters, page by page.
"""

from __future__ import annotations

import collections
import math
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.errors import NotFoundError, ParseError
from pdi.fragments.pdf import text_layer

CORPUS = Path(__file__).resolve().parent / "data" / "pdf"
FILES = sorted(CORPUS.glob("*.pdf"))


def _poppler(program: str) -> str:
    found = shutil.which(program)
    assert found, f"{program} is missing: scripts/bootstrap --dev installs Debian's poppler-utils"
    return found


def _letters(text: str) -> collections.Counter[str]:
    return collections.Counter(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())


def test_corpus_is_there() -> None:
    assert len(FILES) >= 12


@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_pages_and_their_letters_agree_with_pdftotext(path: Path) -> None:
    info = subprocess.run([_poppler("pdfinfo"), str(path)], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.MULTILINE).group(1))  # type: ignore[union-attr]
    theirs = subprocess.run([_poppler("pdftotext"), "-q", "-enc", "UTF-8", str(path), "-"],
                            capture_output=True, check=True).stdout.decode("utf-8").split("\f")[:-1]
    layer = text_layer(path.read_bytes())
    assert layer.pages == pages == len(theirs)
    assert layer.text.count("\f") == pages - 1
    assert len(layer.boxes) == 4 * len(layer.text)
    for number in range(1, pages + 1):
        start, end = layer.page_range(number)
        page = layer.text[start:end]
        assert "\f" not in page
        assert page == "" or page.endswith("\r\n")
        assert re.search(r"\r(?!\n)|(?<!\r)\n", page) is None, "CRLF-canonical"
        assert _letters(page) == _letters(theirs[number - 1]), f"page {number}"


def test_hyphen_at_a_line_end_is_kept_with_its_line_break() -> None:
    # tracemonkey.pdf, page 1: "… are pop-" / "ular since …" (pdftotext joins "popular")
    layer = text_layer((CORPUS / "tracemonkey.pdf").read_bytes())
    at = layer.text.index("are pop-\r\nular")
    hyphen = at + len("are pop")
    assert layer.box(hyphen) is not None and layer.box(hyphen + 1) is None and layer.box(hyphen + 2) is None
    before, after = layer.box(hyphen - 1), layer.box(hyphen + 3)
    assert before is not None and after is not None
    assert after[2] < before[2]  # "u" starts the next line, further down (PDF y grows upwards)
    assert "\ufffe" not in layer.text


def test_a_glyph_mapped_to_a_control_character_is_no_line_break() -> None:
    # tracemonkey.pdf, page 1: pdfTeX draws "©" as a circle whose ToUnicode is CR, then "c"
    layer = text_layer((CORPUS / "tracemonkey.pdf").read_bytes())
    at = layer.text.index("Copyright \ufffdc 2009 ACM")
    assert layer.box(at + len("Copyright ")) is not None


def test_ligatures_are_spelt_out_each_letter_with_the_ligatures_box() -> None:
    layer = text_layer((CORPUS / "copy_paste_ligatures.pdf").read_bytes())
    assert layer.text == "abcdef" "ff" "fi" "fl" "ffi" "ffl" "ſt" "st" "ghijklmno\r\n"
    f, i = layer.box(layer.text.index("fi")), layer.box(layer.text.index("fi") + 1)
    assert f is not None and f == i


def test_overprinted_text_is_read_once_and_an_empty_page_is_empty() -> None:
    layer = text_layer((CORPUS / "hand-overprint-hyphens.pdf").read_bytes())
    assert layer.text.count("Bold by overprinting") == 1
    assert "soft hy-\r\nphen" in layer.text and "hard hy-\r\nphen" in layer.text
    assert layer.pages == 2 and layer.page_range(2) == (len(layer.text), len(layer.text))
    assert layer.text.endswith("\r\n\f")


def test_a_page_with_no_text_layer() -> None:
    layer = text_layer((CORPUS / "ccitt_EndOfBlock_false.pdf").read_bytes())
    assert layer.text == "" and layer.pages == 1 and layer.page_range(1) == (0, 0)


def test_generated_characters_have_no_box() -> None:
    layer = text_layer((CORPUS / "rotation.pdf").read_bytes())
    for offset, char in enumerate(layer.text):
        box = layer.box(offset)
        if char in "\r\n\f":
            assert box is None
        else:
            assert box is not None and not math.isnan(box[1])
    page_2 = layer.box(layer.page_range(2)[0])
    assert page_2 is not None and page_2[0] == 2


def test_not_a_pdf() -> None:
    with pytest.raises(ParseError):
        text_layer(b"%PDF-1.7\nnot really")
    with pytest.raises(ParseError):
        text_layer((CORPUS / "hand-overprint-hyphens.pdf").read_bytes()).page_range(3)


# --- rect: a region of a page in points from the CropBox's top-left (docs/pdf-text-layer.md §3) -----------------

def _poppler_words(path: Path, page: int) -> list[tuple[float, float, float, float, str]]:
    """pdftotext -bbox's words of ``page``: xMin, yMin, xMax, yMax in points from the page's top-left, and the word."""
    import html

    out = subprocess.run([_poppler("pdftotext"), "-bbox", "-f", str(page), "-l", str(page), str(path), "-"],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    found = re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>', out)
    return [(float(a), float(b), float(c), float(d), html.unescape(w)) for a, b, c, d, w in found]


@pytest.mark.parametrize(("name", "page"), [("tracemonkey.pdf", 1), ("pdfjs_wikipedia.pdf", 1), ("sizes.pdf", 2)])
def test_a_rect_around_each_word_poppler_boxes_names_that_word(
    name: str, page: int, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pdi.fragments.pdf as pdf
    from pdi.fragments import evaluate
    from pdi.fragments.pdf import build_layer_index

    data = (CORPUS / name).read_bytes()
    index = build_layer_index(data)
    # Each rect reads its page's boxes in a new PDFium child, 0.2 s: nearly a thousand words took three minutes.
    # The child runs once for the page; each word's rect still goes through evaluate and selects from those boxes.
    real, held = pdf.page_boxes, {}

    def read_once(d: bytes, i: bytes | None, number: int, **kw: str) -> pdf.PageBoxes:
        if i is not index:
            return real(d, i, number, **kw)
        if number not in held:
            held[number] = real(d, i, number, **kw)
        return held[number]

    monkeypatch.setattr(pdf, "page_boxes", read_once)
    words = _poppler_words(CORPUS / name, page)
    assert words
    differ = []
    for x1, y1, x2, y2, word in words:
        rect = [(math.floor(x1), math.floor(y1)), (math.ceil(x2), math.ceil(y2)), page - 1]
        got = evaluate("rect", rect, data, media_type="application/pdf", index=index)
        assert got.media_type == "text/plain" and got.region is not None and got.page is not None
        text = got.data.decode("utf-8")
        if unicodedata.normalize("NFKC", text) != unicodedata.normalize("NFKC", word):
            differ.append((word, text))
    # the one word the two read otherwise: tracemonkey's "©" is a glyph mapped to CR (rule 3 makes it U+FFFD)
    assert differ in ([], [("c", "\ufffdc")]), differ[:5]


def test_a_rect_knows_each_page_size_as_pdfinfo_gives_it() -> None:
    from pdi.fragments import evaluate

    path = CORPUS / "sizes.pdf"
    data = path.read_bytes()
    info = subprocess.run([_poppler("pdfinfo"), "-f", "1", "-l", "3", str(path)], capture_output=True, text=True,
                          check=True, timeout=60).stdout
    sizes = [(float(w), float(h)) for w, h in re.findall(r"Page +\d+ size: +([\d.]+) x ([\d.]+) pts", info)]
    assert len(sizes) == 3
    for frame, (width, height) in enumerate(sizes):
        got = evaluate("rect", [(0, 0), (5000, 5000), frame], data, media_type="application/pdf")
        assert got.region is not None and got.page is not None
        assert (got.region.width, got.region.height) == (math.ceil(width), math.ceil(height))
        assert (got.region.x2, got.region.y2) == (got.region.width, got.region.height) and got.clamped
        assert (got.page.width, got.page.height) == (width, height)


def test_a_rect_over_a_whole_page_is_its_text_and_its_ranges_are_the_layers() -> None:
    from pdi.fragments import evaluate

    data = (CORPUS / "tracemonkey.pdf").read_bytes()
    layer = text_layer(data)
    start, end = layer.page_range(2)
    got = evaluate("rect", [(0, 0), (612, 792), 1], data, media_type="application/pdf")
    # every character of the page but the final CR LF (no character with a box follows it)
    assert got.data.decode("utf-8") == layer.text[start:end - 2]
    assert [(r.start, r.end) for r in got.ranges] == [(start, end - 2)]
    before = len(layer.text[:start].encode("utf-8"))
    assert (got.ranges[0].byte_start, got.ranges[0].byte_end) == (before, before + len(got.data))
    assert not got.clamped and not got.past_end


def test_a_rect_on_no_page_and_an_empty_rect() -> None:
    from pdi.errors import NotFoundError
    from pdi.fragments import evaluate

    data = (CORPUS / "sizes.pdf").read_bytes()
    with pytest.raises(NotFoundError, match=r"page 4 .* it has 3"):
        evaluate("rect", [(0, 0), (10, 10), 3], data, media_type="application/pdf")
    empty = evaluate("rect", [(0, 0), (1, 1)], data, media_type="application/pdf")
    assert empty.data == b"" and empty.ranges == ()
    past = evaluate("rect", [(700, 0), (800, 10)], data, media_type="application/pdf")
    assert past.past_end


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_passage_read_from_a_held_layer_is_the_one_read_afresh(data: st.DataObject) -> None:
    """The layers a resolver holds (read once, then by the index's digest) count as a fresh read does."""
    import pdi.fragments.pdf as pdf
    from pdi.fragments.text import evaluate_pdi

    octets = _TRACEMONKEY.read_bytes()
    index = _index_of(octets)
    layer = pdf.TextLayer.from_bytes(index, len(octets))
    scheme = data.draw(st.sampled_from(["char", "line"]))
    top = len(layer.text) + 5 if scheme == "char" else layer.text.count("\n") + 3
    a = data.draw(st.integers(0, top))
    b = data.draw(st.integers(a, top))
    afresh = evaluate_pdi(scheme, (a, b), layer.utf8, charset="utf-8", media_type="text/plain")
    for _ in range(2):  # the first may read the layer, the second finds it held
        held = pdf.evaluate_pdf(scheme, (a, b), octets, "application/pdf", None, index=index)
        assert (held.data, held.ranges, held.clamped, held.past_end) == (
            afresh.data, afresh.ranges, afresh.clamped, afresh.past_end)
    assert bytes(index[-16:]) in {key for key, _ in pdf._recent}
    assert sum(k.held for k in pdf._recent.values()) <= pdf._HELD


_TRACEMONKEY = CORPUS / "tracemonkey.pdf"
_INDEXES: dict[int, bytes] = {}


def _index_of(octets: bytes) -> bytes:
    from pdi.fragments.pdf import build_layer_index

    if len(octets) not in _INDEXES:
        _INDEXES[len(octets)] = build_layer_index(octets)
    return _INDEXES[len(octets)]


@pytest.mark.parametrize("scheme", ["rect", "viewrect"])
def test_a_region_past_a_pages_edge_is_said_past_that_pages_edge_not_past_the_pages(scheme: str) -> None:
    """Found trying each medium end to end (2026-11-28): ``#rect=(5000,5000),(6000,6000)`` on the 14-page
    tracemonkey.pdf was said to lie "wholly past the end (the PDF has 14 pages)", when it lies past the edge of its
    page. What is said names the page and its size in whole points, as pdfinfo gives it (rounded up, the bound
    corners are clamped to)."""
    from pdi.fragments import evaluate
    from pdi.fragments.results import past_end_message

    path = CORPUS / "sizes.pdf"
    info = subprocess.run([_poppler("pdfinfo"), "-f", "2", "-l", "2", str(path)], capture_output=True, text=True,
                          check=True, timeout=60).stdout
    width, height = (float(n) for n in re.findall(r"Page +2 size: +([\d.]+) x ([\d.]+) pts", info)[0])
    positions: list[object] = ([(5000, 0), (6000, 10), 1] if scheme == "rect" else [5000, 0, 1000, 10, 2])
    got = evaluate(scheme, positions, path.read_bytes(), media_type="application/pdf")
    assert got.past_end
    said = past_end_message("NAME", got)
    assert said == (f"NAME lies wholly past the edge of page 2 (it is {math.ceil(width)}x{math.ceil(height)}"
                    " points): it selects nothing")


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=10, max_value=40), st.integers(min_value=0, max_value=3),
       st.sampled_from(["", ".5", ".1234567"]))
def test_property_a_viewrect_number_past_its_digits_is_refused_saying_how_many_it_may_have(
        digits: int, at: int, fraction: str) -> None:
    """Found by an attack: ``#viewrect=0,0,99999999999,10`` was refused as "not a number of points (digits, …)",
    when it is digits: more than the 9 whole and 6 decimal digits pdi reads of one (a point is 1/72 inch:
    999,999,999 points are some 350 km, and a millionth of a point is far below any device's resolution). The
    refusal says which position, and the bound."""
    from pdi.fragments import evaluate

    number = "9" * digits + fraction
    positions: list[object] = ["0", "0", "10", "10"]
    positions[at] = number
    with pytest.raises(ParseError) as refused:
        evaluate("viewrect", positions, (CORPUS / "sizes.pdf").read_bytes(), media_type="application/pdf")
    said = str(refused.value)
    assert f"viewrect position {at + 1}" in said and number in said
    assert "at most 9 digits" in said and "6 after" in said


def test_a_viewrect_position_a_stranger_made_long_is_named_clipped() -> None:
    """A refused position is named in the message as ``pdi._wording.clipped`` names what a stranger wrote: at most
    200 characters of it and how many were left out, never a 100,000-character value copied whole."""
    from pdi.fragments import evaluate

    with pytest.raises(ParseError) as refused:
        evaluate("viewrect", ["0", "x" * 100_000, "10", "10"], (CORPUS / "sizes.pdf").read_bytes(),
                 media_type="application/pdf")
    said = str(refused.value)
    assert said.startswith("viewrect position 2 ('xxx") and "characters left out" in said
    assert len(said) < 600


@pytest.mark.parametrize(("scheme", "said_first"), [
    ("nameddest", "the PDF has no destination named 'xxx"),
    ("page", "page= takes one page number, not 'xxx"),
    ("search", "none of the words 'xxx"),
])
def test_a_stranger_long_value_of_another_pdf_scheme_is_named_clipped(scheme: str, said_first: str) -> None:
    """As a viewrect position: a destination name, a page number or the words of a search that a stranger wrote
    100,000 characters long is named by at most 200 characters of it and how many were left out, not copied whole
    into the refusal (a problem's detail, a line on stderr)."""
    from pdi.fragments import evaluate

    with pytest.raises((ParseError, NotFoundError)) as refused:
        evaluate(scheme, ["x" * 100_000], (CORPUS / "sizes.pdf").read_bytes(), media_type="application/pdf")
    said = str(refused.value)
    assert said.startswith(said_first) and "characters left out" in said, said[:300]
    assert len(said) < 600


def _digits_pdf() -> bytes:
    """One page reading ``x7 y007 z12``, with the named destinations ``12`` and ``007`` (old-style ``/Dests``)."""
    import zlib

    from pdf_helpers import pdf_of

    content = zlib.compress(b"BT /F1 12 Tf 10 700 Td (x7 y007 z12) Tj ET\n")
    return pdf_of([
        b"<< /Type /Catalog /Pages 2 0 R /Dests << /12 [6 0 R /XYZ 0 720 0] /007 [6 0 R /XYZ 0 720 0] >> >>",
        b"<< /Type /Pages /Kids [6 0 R] /Count 1 >>",
        b"<< /Font << /F1 5 0 R >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources 3 0 R /Contents 4 0 R >>",
    ])


def test_a_destination_name_or_a_search_word_of_digits_is_that_name_or_word() -> None:
    """RFC 8118: ``nameddest=`` names a destination by any string, and ``search=`` looks for words, digits too.
    Found by a property test: a position of digits was read as a number, so ``#nameddest=12`` was refused ("takes
    one destination name") and ``#search=007`` found the ``7`` of ``x7``, not ``007``."""
    from pdi.fragments import evaluate
    from pdi.identifier import Fragment

    data = _digits_pdf()
    found = {}
    for text in ("search=007", "search=%22z12%20007%22", "nameddest=12", "nameddest=007"):
        fragment = Fragment.parse(text, format="pdf")
        assert fragment.scheme is not None
        found[text] = evaluate(fragment.scheme, fragment.positions, data, media_type="application/pdf")
    assert found["search=007"].data == b"007"
    assert found["search=%22z12%20007%22"].data == b"007"  # the first of the words found
    for name in ("nameddest=12", "nameddest=007"):
        assert found[name].data == data and found[name].page is not None and found[name].page.number == 1
    with pytest.raises(NotFoundError):
        evaluate("nameddest", ["7"], data, media_type="application/pdf")


@given(st.sampled_from(["nameddest", "search"]), st.lists(st.text("0123456789", min_size=1, max_size=20), min_size=1,
                                                          max_size=3))
@settings(max_examples=200)
def test_rfc_8118_words_of_digits_stay_as_written(scheme: str, words: list[str]) -> None:
    """What a ``nameddest=`` or ``search=`` position of digits names is those characters (RFC 8118: a string, a
    word), leading zeros and all, and printing the fragment gives them back."""
    from pdi.identifier import Fragment

    fragment = Fragment.parse(f"{scheme}={','.join(words)}", format="pdf")
    assert fragment.positions == tuple(words)
    assert Fragment.parse(str(fragment), format="pdf") == fragment
