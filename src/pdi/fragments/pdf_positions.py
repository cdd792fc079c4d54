"""What a PDF's page citations mean before its pages are read: RFC 8118's ``page=n`` and ``viewrect=`` (with pdi's
fifth position, the page) as positions, and the refusal of any page of a PDF whose page tree PDFium and pdf.js read
differently (:attr:`pdi.fragments.pdf.TextLayer.page_tree`). Moved out of :mod:`pdi.fragments.pdf`, which reads
the pages."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from pdi._wording import clipped
from pdi.errors import ParseError, UnsupportedError


def cite_pages_of(page_tree: str, number: int) -> None:
    """Refuse page ``number`` of a PDF whose page tree PDFium and pdf.js read differently (``page_tree``, its
    :attr:`~pdi.fragments.pdf.TextLayer.page_tree`, "" where none is known): a page cited must be the same page in
    any viewer."""
    if page_tree:
        raise UnsupportedError(
            f"pdi cites no page of this PDF (page {number} asked): {page_tree_said(page_tree)}, so page"
            f" {number} could be another page, or none, in another viewer; cite the whole PDF, or a passage of its"
            " text (char=, line=, search=)")


def page_tree_said(fault: str) -> str:
    """A PDF's page tree fault (:attr:`~pdi.fragments.pdf.TextLayer.page_tree`) as a deposit's note and a refusal say it."""
    return (f"its page tree is not one PDFium (Chromium's viewer) and pdf.js (Firefox's) are sure to read alike"
            f" ({fault})")


_DECIMAL = re.compile(r"[0-9]{1,9}(?:\.[0-9]{1,6})?")


def viewrect_as_rect(positions: Sequence[object]) -> tuple[tuple[int, int], tuple[int, int], int]:
    """RFC 8118's ``viewrect=left,top,width,height`` (and pdi's fifth position, the page from 1: the one-scheme
    spelling of ``page=n&viewrect=…``) as ``rect``'s positions: the corners rounded outward to whole points."""
    if len(positions) not in (4, 5):
        raise ParseError(f"viewrect= takes left,top,width,height and an optional page, not {len(positions)}"
                         " positions", rule="viewrect")
    numbers: list[float] = []
    for at, value in enumerate(positions[:4]):
        text = str(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
        if not _DECIMAL.fullmatch(text):
            raise ParseError(f"viewrect position {at + 1} ({clipped(repr(value))}) is not a number of points (at most"
                             " 9 digits, then a decimal point, written %2E inside a PDI, and at most 6 after it)",
                             rule="viewrect")
        numbers.append(float(text))
    left, top, width, height = numbers
    if width <= 0 or height <= 0:
        raise ParseError(f"viewrect's width and height are more than 0 (here {width:g} and {height:g})",
                         rule="viewrect")
    page = page_number(positions[4:]) if len(positions) == 5 else 1
    return ((math.floor(left), math.floor(top)), (math.ceil(left + width), math.ceil(top + height)), page - 1)




def page_number(positions: Sequence[object]) -> int:
    """The one page number of ``page=n``: a whole number from 1."""
    if len(positions) != 1 or not isinstance(positions[0], int) or isinstance(positions[0], bool):
        written = ",".join(f"({','.join(map(str, p))})" if isinstance(p, tuple) else str(p) for p in positions)
        raise ParseError(f"page= takes one page number, not {clipped(repr(written))}", rule="page")
    number = positions[0]
    if number < 1:
        raise ParseError(f"pages are counted from 1 (RFC 8118 §3): page={number}", rule="page")
    return number
