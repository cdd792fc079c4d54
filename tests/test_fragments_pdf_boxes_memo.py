"""Page boxes held a while (:func:`pdi.fragments.pdf.pages_boxes`): a second ``rect`` or ``viewrect`` on a page
starts no PDFium child, a PDF's boxes are never answered for another's, and what is held is what a fresh read gives.

The corpus is tests/data/pdf (its sources named in tests/data/README.md); the oracle for the boxes is poppler's
``pdftotext -bbox`` (another PDF reader than PDFium): a word it boxes on one PDF is found by a rect there.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pdi.fragments.pdf as pdf
from pdi.errors import LimitError, UnsupportedError
from pdi.fragments import evaluate

if TYPE_CHECKING:
    from collections.abc import Iterator

CORPUS = Path(__file__).resolve().parent / "data" / "pdf"


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The works of the PDFium children started from now on (``boxes``, ``layer``, ``render``)."""
    started: list[str] = []
    real = pdf._in_child

    def counted(work: str, *args: Any, **kw: Any) -> bytes:
        started.append(work)
        return real(work, *args, **kw)

    monkeypatch.setattr(pdf, "_in_child", counted)
    return started


def _forget() -> None:
    with pdf._recent_lock:
        getattr(pdf, "_boxes", {}).clear()
        getattr(pdf, "_boxes_refused", {}).clear()


@pytest.fixture(autouse=True)
def _forgotten_after() -> Iterator[None]:
    """What a test here held (boxes or refusals, some made by a child it replaced) is let go after it: a later test
    on the same worker asking the same PDF's page (``sizes.pdf``'s kept layer is the same in every archive) would be
    answered from it."""
    yield
    _forget()


@pytest.mark.parametrize("scheme", ["rect", "viewrect"])
def test_a_second_region_on_the_same_page_starts_no_pdfium_child(
    scheme: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = (CORPUS / "tracemonkey.pdf").read_bytes()
    index = pdf.build_layer_index(data)
    _forget()
    started = _counting(monkeypatch)
    regions: list[list[object]] = (
        [[(0, 0), (300, 400), 2], [(300, 400), (612, 792), 2], [(0, 0), (612, 792), 2]] if scheme == "rect"
        else [[0, 0, 300, 400, 3], [300, 400, 312, 392, 3], [0, 0, 612, 792, 3]])
    first = evaluate(scheme, regions[0], data, media_type="application/pdf", index=index)
    assert started == ["boxes"]
    for positions in regions[1:]:
        evaluate(scheme, positions, data, media_type="application/pdf", index=index)
    assert started == ["boxes"], "a second region on page 3 started another PDFium child"
    again = evaluate(scheme, regions[0], data, media_type="application/pdf", index=index)
    assert (again.data, again.ranges, again.region, again.page) == (first.data, first.ranges, first.region,
                                                                   first.page)
    evaluate(scheme, [*regions[0][:2], 1] if scheme == "rect" else [*regions[0][:4], 2], data,
             media_type="application/pdf", index=index)
    assert started == ["boxes", "boxes"], "another page is read by PDFium"
    assert sum(held.held for held in pdf._boxes.values()) <= pdf._BOXES_HELD


def _poppler_words(path: Path, page: int) -> list[tuple[float, float, float, float, str]]:
    found = shutil.which("pdftotext")
    assert found, "pdftotext is missing: scripts/bootstrap --dev installs Debian's poppler-utils"
    out = subprocess.run([found, "-bbox", "-f", str(page), "-l", str(page), str(path), "-"],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    words = re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(\w{4,})</word>', out)
    return [(float(a), float(b), float(c), float(d), w) for a, b, c, d, w in words]


def test_two_pdfs_asked_the_same_page_each_get_their_own_boxes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Page 1 of two PDFs, one after the other, as poppler boxes their words: the second is not answered from
    the first's boxes held (nor its kept index's), and each is read once."""
    _forget()
    started = _counting(monkeypatch)
    names = ["tracemonkey.pdf", "pdfjs_wikipedia.pdf"]
    datas = {name: (CORPUS / name).read_bytes() for name in names}
    indexes = {name: pdf.build_layer_index(datas[name]) for name in names}
    del started[:]
    for _ in range(2):
        for name in names:
            words = _poppler_words(CORPUS / name, 1)[:12]
            assert len(words) >= 5
            for x1, y1, x2, y2, word in words:
                got = evaluate("rect", [(math.floor(x1), math.floor(y1)), (math.ceil(x2), math.ceil(y2)), 0],
                               datas[name], media_type="application/pdf", index=indexes[name])
                assert got.data.decode("utf-8") == word, (name, word)
    assert started == ["boxes", "boxes"]


def test_the_same_octets_with_no_kept_index_and_another_pdfium_build_are_read_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Boxes held for a PDF with its kept index are not those of the same PDF with none (a layer made now), and a
    PDFium library replaced under a running resolver (another build) reads the page again."""
    data = (CORPUS / "sizes.pdf").read_bytes()
    index = pdf.build_layer_index(data)
    _forget()
    started = _counting(monkeypatch)
    pdf.page_boxes(data, index, 2)
    pdf.page_boxes(data, None, 2)
    assert started.count("boxes") == 2
    pdf.page_boxes(data, index, 2)
    pdf.page_boxes(data, None, 2)
    assert started.count("boxes") == 2
    monkeypatch.setattr(pdf, "_pdfium_build", lambda: ("another", 0, 0, 0))
    pdf.page_boxes(data, index, 2)
    assert started.count("boxes") == 3


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_boxes_held_are_those_read_afresh(data: st.DataObject) -> None:
    """Any pages of any corpus PDF, asked in any order and any groups (the viewer asks several at once), are the
    boxes a fresh read gives (:func:`pdi.fragments.pdf.read_pages_now`, in this process, no memo)."""
    name = data.draw(st.sampled_from(["tracemonkey.pdf", "sizes.pdf", "pdfjs_wikipedia.pdf"]))
    octets = (CORPUS / name).read_bytes()
    index = _index_of(name, octets)
    layer = pdf.TextLayer.from_bytes(index, len(octets))
    numbers = data.draw(st.lists(st.integers(1, min(layer.pages, 4)), min_size=1, max_size=3, unique=True))
    got = pdf.pages_boxes(octets, index, numbers)
    fresh = pdf.read_pages_now(octets, numbers)
    for number, page, (facts, boxes) in zip(numbers, got, fresh, strict=True):
        start, _ = layer.page_range(number)
        assert (page.number, page.pages, page.start, page.text) == (number, layer.pages, start, facts["text"])
        assert page.boxes.tobytes() == boxes.tobytes()
        assert page.crop == tuple(float(v) for v in facts["crop"]) and page.rotation == int(facts["rotation"])
    assert sum(held.held for held in pdf._boxes.values()) <= pdf._BOXES_HELD


_INDEXES: dict[str, bytes] = {}


def _index_of(name: str, octets: bytes) -> bytes:
    if name not in _INDEXES:
        _INDEXES[name] = pdf.build_layer_index(octets)
    return _INDEXES[name]


def test_a_page_whose_boxes_pdfium_took_too_long_on_is_refused_again_without_a_child(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A child reading a page's boxes past :attr:`PdfiumLimits.page_seconds` (here 0.01 s: less than a Python
    starts in) is a LimitError; the same rect again gives the same refusal and starts none, while another page,
    other limits, or the refusal grown old, start one each."""
    data = (CORPUS / "tracemonkey.pdf").read_bytes()
    index = _index_of("tracemonkey.pdf", data)
    _forget()
    started = _counting(monkeypatch)
    monkeypatch.setattr(pdf, "LIMITS", pdf.PdfiumLimits(page_seconds=0.01))
    said = []
    for scheme, positions in [("rect", [(0, 0), (300, 400), 2]), ("viewrect", [0, 0, 300, 400, 3]),
                              ("rect", [(10, 10), (20, 20), 2])]:
        with pytest.raises(LimitError, match=r"took longer than 0.01 s reading the PDF \(page 3\) \(the limit"
                                             r" pdi.fragments.pdf.LIMITS.page_seconds\)") as refused:
            evaluate(scheme, positions, data, media_type="application/pdf", index=index)
        said.append(str(refused.value))
    assert started == ["boxes"] and len(set(said)) == 1
    with pytest.raises(LimitError):
        evaluate("rect", [(0, 0), (300, 400), 4], data, media_type="application/pdf", index=index)
    assert started == ["boxes", "boxes"], "page 5 is not page 3: PDFium is asked"
    monkeypatch.setattr(pdf, "LIMITS", pdf.PdfiumLimits(page_seconds=0.02))
    with pytest.raises(LimitError, match=r"took longer than 0\.02 s"):
        evaluate("rect", [(0, 0), (300, 400), 2], data, media_type="application/pdf", index=index)
    assert started == ["boxes"] * 3, "other limits: PDFium is asked again"
    monkeypatch.setattr(pdf, "REFUSAL_SECONDS", 0.0)
    with pytest.raises(LimitError):
        evaluate("rect", [(0, 0), (300, 400), 2], data, media_type="application/pdf", index=index)
    assert started == ["boxes"] * 4, "a refusal held no longer: PDFium is asked again"
    monkeypatch.setattr(pdf, "LIMITS", pdf.PdfiumLimits())
    assert evaluate("rect", [(0, 0), (612, 792), 2], data, media_type="application/pdf", index=index).data
    assert started == ["boxes"] * 5  # within its limits: read
    assert len(pdf._boxes_refused) <= pdf._REFUSALS


def test_a_page_pdfium_reads_otherwise_than_the_kept_layer_is_refused_again_without_a_child(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A child answering another text for the page than the kept layer's (a later PDFium build) is refused; the
    refusal is held, so the same page asked again starts no child, and at most so many refusals are held."""
    from pdi.fragments.pdf_pages import pages_to_bytes

    data = (CORPUS / "sizes.pdf").read_bytes()
    index = _index_of("sizes.pdf", data)
    _forget()
    started: list[list[str]] = []

    def otherwise(work: str, octets: object, args: list[str], *rest: object, **kw: object) -> bytes:
        started.append(args)
        return pages_to_bytes([({"text": "other\r\n", "crop": [0, 0, 100, 100], "rotation": 0, "pdfium": "later"},
                                array("d", [1.0] * 28)) for _ in args])

    monkeypatch.setattr(pdf, "_in_child", otherwise)
    for _ in range(3):
        with pytest.raises(UnsupportedError, match=r"PDFium later reads page 2 otherwise than the build"):
            evaluate("rect", [(0, 0), (100, 100), 1], data, media_type="application/pdf", index=index)
    assert started == [["2"]]
    monkeypatch.setattr(pdf, "_REFUSALS", 2)
    for number in (1, 2, 3):
        with pytest.raises(UnsupportedError):
            pdf.page_boxes(data, index, number)
    assert started == [["2"], ["1"], ["3"]] and len(pdf._boxes_refused) == 2
