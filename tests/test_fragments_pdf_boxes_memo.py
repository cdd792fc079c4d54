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
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pdi.fragments.pdf as pdf
from pdi.fragments import evaluate

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
