"""Which characters of a PDF page a ``rect`` or ``viewrect`` selects (docs/pdf-text-layer.md §3), on the page's
boxes as :func:`pdi.fragments.pdf.pages_boxes` gives them.

A page's box centres are worked out once, as arrays (:class:`Centres`, held
with the page's boxes): a region is then a few comparisons over those arrays
(a page of tracemonkey.pdf has 4,800 characters; a centre each, worked out in
Python for every region, took about 4 ms a rect).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from array import array


class PageBoxes(Protocol):
    """What of a page (:class:`pdi.fragments.pdf.PageBoxes`, not imported: that module imports this one) the
    selection reads: its text, its boxes and CropBox, and its centres if already worked out."""

    @property
    def text(self) -> str: ...

    @property
    def boxes(self) -> array[float]: ...

    @property
    def crop(self) -> tuple[float, float, float, float]: ...

    @property
    def centres(self) -> Centres | None: ...


@dataclass(frozen=True, eq=False)
class Centres:
    """A page's characters' box centres from the CropBox's top-left, y downwards (:meth:`PageBoxes.centre` of
    each, NaN where a character has none), and for each character with no box where the nearest with one before
    and after it are (-1 and the count of characters where there is none). The arrays are read-only."""

    x: Any  # numpy float64 arrays, one value a character
    y: Any
    #: the characters with no box, and for each the nearest character with a box before it and after it
    gaps: Any
    before: Any
    after: Any

    @classmethod
    def of(cls, boxes: array[float], crop: tuple[float, float, float, float]) -> Centres:
        """The centres of ``boxes`` (four floats a character: left, bottom, right, top) in the CropBox ``crop``,
        each worked out as :meth:`pdi.fragments.pdf.PageBoxes.centre` does (the same IEEE operations, in the
        same order: the same floats)."""
        four = np.frombuffer(boxes, dtype=np.float64).reshape(-1, 4) if len(boxes) else np.empty((0, 4))
        left, bottom, right, top = four[:, 0], four[:, 1], four[:, 2], four[:, 3]
        boxed = ~np.isnan(left)
        with np.errstate(all="ignore"):  # two boxes' sides past half a float's range: infinity, as in Python
            x = np.where(boxed, (left + right) / 2 - crop[0], np.nan)
            y = np.where(boxed, crop[3] - (bottom + top) / 2, np.nan)
        count = len(left)
        places = np.arange(count)
        before = np.maximum.accumulate(np.where(boxed, places, -1)) if count else places
        after = np.minimum.accumulate(np.where(boxed, places, count)[::-1])[::-1] if count else places
        gaps = np.flatnonzero(~boxed)
        made = cls(x, y, gaps, before[gaps], after[gaps])
        for values in (x, y, gaps, made.before, made.after):
            values.flags.writeable = False
        return made


def _float_at_least(n: int) -> float:
    """The least float not below ``n``: for any float ``v``, ``n <= v`` exactly when ``_float_at_least(n) <= v``,
    and ``v < n`` exactly when ``v < _float_at_least(n)`` (Python compares an int and a float exactly; numpy
    would round a coordinate past 2**53 to a float first)."""
    try:
        near = float(n)
    except OverflowError:
        return math.inf
    return math.nextafter(near, math.inf) if near < n else near


def region_characters(page: PageBoxes, x1: int, y1: int, x2: int, y2: int) -> list[int]:
    """The characters (offsets in ``page.text``) a ``rect`` selects: those whose box centre lies in
    ``[x1, x2) × [y1, y2)`` (points from the CropBox's top-left, y downwards), and each character with no box
    (a generated space, a line break) whose nearest characters with a box before and after it are both selected."""
    centres = page.centres if page.centres is not None else Centres.of(page.boxes, page.crop)
    x, y = centres.x, centres.y
    left, right, top, bottom = (_float_at_least(v) for v in (x1, x2, y1, y2))
    inside = (left <= x) & (x < right) & (top <= y) & (y < bottom)  # NaN (no box): False
    # a character with no box: both its nearest boxed neighbours selected (-1 and len: none, so not selected)
    flags = np.append(inside, False)
    inside[centres.gaps] = flags[centres.before] & flags[centres.after]
    chosen: list[int] = np.flatnonzero(inside).tolist()
    return chosen
