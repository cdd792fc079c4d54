"""A ``rect``'s characters on a PDF page (:func:`pdi.fragments.pdf_region.region_characters`, on centres worked
out once a page) are exactly those docs/pdf-text-layer.md §3 names, worked out here character by character as
before: a character whose box centre (:meth:`pdi.fragments.pdf.PageBoxes.centre`) lies in ``[x1, x2) × [y1, y2)``,
compared as Python compares an int and a float; one with no box whose nearest boxed characters before and after
it are both selected.

The pages are those of the corpus, tests/data/pdf (their sources named in tests/data/README.md), read by PDFium in
this process (:func:`pdi.fragments.pdf.read_pages_now`).
"""

from __future__ import annotations

import functools
import math
from array import array
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import pdi.fragments.pdf as pdf
from pdi.errors import PDIError
from pdi.fragments.pdf_region import Centres, region_characters

CORPUS = Path(__file__).resolve().parent / "data" / "pdf"


@functools.cache
def _corpus_pages() -> tuple[pdf.PageBoxes, ...]:
    """Every page with text of every PDF of the corpus PDFium opens, as :class:`pdf.PageBoxes` with no centres."""
    pages: list[pdf.PageBoxes] = []
    for path in sorted(CORPUS.glob("*.pdf")):
        data = path.read_bytes()
        try:
            count = pdf.page_count(data)
            read = pdf.read_pages_now(data, list(range(1, count + 1)))
        except PDIError:  # a PDF of the corpus PDFium refuses (scan-bad.pdf): no page to select on
            continue
        for number, (facts, boxes) in enumerate(read, 1):
            if facts["text"]:
                crop = tuple(float(v) for v in facts["crop"])
                pages.append(pdf.PageBoxes(number, count, 0, facts["text"], boxes, (crop[0], crop[1], crop[2],
                                                                                   crop[3]), 0))
    return tuple(pages)


def _as_the_rule_says(page: pdf.PageBoxes, x1: int, y1: int, x2: int, y2: int) -> list[int]:
    inside: list[bool | None] = []
    for i in range(len(page.text)):
        centre = page.centre(i)
        inside.append(None if centre is None else (x1 <= centre[0] < x2 and y1 <= centre[1] < y2))
    nearest_after: list[bool] = [False] * len(inside)
    following = False
    for i in range(len(inside) - 1, -1, -1):
        nearest_after[i] = following
        if inside[i] is not None:
            following = bool(inside[i])
    chosen: list[int] = []
    previous = False
    for i, flag in enumerate(inside):
        if flag is None:
            if previous and nearest_after[i]:
                chosen.append(i)
        else:
            previous = flag
            if flag:
                chosen.append(i)
    return chosen


def test_the_corpus_has_pages_of_many_characters_and_of_no_box() -> None:
    pages = _corpus_pages()
    assert len(pages) >= 20
    assert max(len(page.text) for page in pages) > 4000  # tracemonkey.pdf's pages
    assert any(page.centre(i) is None for page in pages for i in range(len(page.text)))


@st.composite
def _page_and_region(draw: st.DrawFn) -> tuple[pdf.PageBoxes, int, int, int, int]:
    pages = _corpus_pages()
    page = pages[draw(st.integers(0, len(pages) - 1))]
    # corners anywhere on (or past) the page, or on the whole points either side of a character's centre
    centred = [c for c in (page.centre(i) for i in range(len(page.text))) if c is not None]

    def corner(axis: int, most: float) -> int:
        if centred and draw(st.booleans()):
            value = centred[draw(st.integers(0, len(centred) - 1))][axis]
            return max(0, math.floor(value) + draw(st.integers(-1, 1)))
        return draw(st.integers(0, math.ceil(most) + 20))

    xs = sorted((corner(0, page.width), corner(0, page.width)))
    ys = sorted((corner(1, page.height), corner(1, page.height)))
    return page, xs[0], ys[0], xs[1], ys[1]


@settings(max_examples=300, deadline=None)
@given(_page_and_region())
def test_a_regions_characters_on_the_corpus_are_those_the_rule_names(
    case: tuple[pdf.PageBoxes, int, int, int, int],
) -> None:
    page, x1, y1, x2, y2 = case
    expected = _as_the_rule_says(page, x1, y1, x2, y2)
    assert region_characters(page, x1, y1, x2, y2) == expected
    held = pdf.PageBoxes(page.number, page.pages, page.start, page.text, page.boxes, page.crop, page.rotation,
                         Centres.of(page.boxes, page.crop))
    assert region_characters(held, x1, y1, x2, y2) == expected


def test_a_whole_page_selects_every_character_it_boxes_and_an_empty_region_none() -> None:
    for page in _corpus_pages()[:5]:
        boxed = [i for i in range(len(page.text)) if page.centre(i) is not None]
        everywhere = region_characters(page, 0, 0, 10**6, 10**6)
        assert set(boxed) <= set(everywhere) and everywhere == _as_the_rule_says(page, 0, 0, 10**6, 10**6)
        assert region_characters(page, 0, 0, 0, 0) == []


def _one_row(lefts: list[float]) -> pdf.PageBoxes:
    """Characters of width 0 whose centres are at ``lefts`` (y 5 from the top of a CropBox 10 high), NaN: none."""
    boxes = array("d")
    for left in lefts:
        boxes.extend((math.nan,) * 4 if math.isnan(left) else (left, 5.0, left, 5.0))
    return pdf.PageBoxes(1, 1, 0, "x" * len(lefts), boxes, (0.0, 0.0, 2.0**70, 10.0), 0)


def test_a_corner_past_a_floats_precision_is_compared_exactly() -> None:
    """2**53 + 1 is no float: a centre at 2**53 lies before it, one at 2**53 + 2 after; a float rounding the
    corner would take 2**53 as its start."""
    at, past = float(2**53), float(2**53 + 2)
    page = _one_row([at, math.nan, past])
    assert region_characters(page, 2**53 + 1, 0, 2**60, 10) == [2]
    assert region_characters(page, 0, 0, 2**53 + 1, 10) == [0]
    assert region_characters(page, 2**53, 0, 2**53 + 3, 10) == [0, 1, 2]
    assert region_characters(page, 10**400, 0, 10**401, 10) == []  # past any float
    assert region_characters(page, 0, 0, 10**400, 10) == [0, 1, 2]


def test_a_centre_on_the_regions_start_is_in_it_and_on_its_end_is_not() -> None:
    page = _one_row([3.0, 7.0, math.nan, math.nan, 8.0, 9.5])
    assert region_characters(page, 3, 0, 8, 10) == [0, 1]
    assert region_characters(page, 7, 0, 9, 10) == [1, 2, 3, 4]
    assert region_characters(page, 4, 0, 7, 10) == []
    assert region_characters(_one_row([]), 0, 0, 10, 10) == []
    assert region_characters(_one_row([math.nan, math.nan]), 0, 0, 10, 10) == []
