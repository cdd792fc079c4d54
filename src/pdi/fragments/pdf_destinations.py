"""Where a PDF's named destinations stand in its text layer (RFC 8118 ``nameddest``; docs/pdf-text-layer.md).

Run by :func:`pdi.fragments.pdf.text_layer`, in the PDFium child (:mod:`pdi.fragments.pdf_child`), once the
layer's text and boxes are read: each destination PDFium finds is placed at the start of a line of its page.
"""

from __future__ import annotations

import bisect
import ctypes
import math
from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["TextLayer", "destinations"]

#: How the layer ends a line (docs/pdf-text-layer.md §1; :data:`pdi.fragments.pdf.LINE_BREAK`, which
#: tests/test_fragments_pdf_hostile.py checks is the same). Not imported from there: that module runs this one.
LINE_BREAK = "\r\n"


class TextLayer(Protocol):
    """What this module reads of a :class:`pdi.fragments.pdf.TextLayer`: its text, each character's box (four
    numbers a character, NaN where it has none), its pages, and where each page's text is."""

    @property
    def text(self) -> str: ...
    @property
    def boxes(self) -> Sequence[float]: ...
    @property
    def pages(self) -> int: ...
    def page_range(self, number: int) -> tuple[int, int]: ...

#: The octets of a destination's name (UTF-16) asked for at first; a longer one is asked for again.
_NAME_OCTETS = 1024


def destinations(document: Any, layer: TextLayer) -> dict[str, tuple[int, int]]:
    """The PDF's named destinations (its ``/Names /Dests`` tree and old ``/Dests`` dictionary), each at its position
    in the layer: on its page, the start of the highest line of the layer whose middle (halfway between its
    characters' lowest bottom and highest top) is at or below the destination's top, and whose right edge is
    right of the destination's left when it has one (the first in layer order among equals); the page's start
    when the destination has no top; the page's end when no line is below it. The first of two names alike wins."""
    import pypdfium2.raw as pdfium_c

    found: dict[str, tuple[int, int]] = {}
    pages: dict[int, _PageLines] = {}  # each page's lines read once (found by an attack: read again for each
    # destination, 4,000 destinations on a page of 1,000 lines, a PDF of 119 KB, took 111 s of its 120)
    has_x, has_y, has_zoom = (pdfium_c.FPDF_BOOL() for _ in range(3))
    x, y, zoom = (pdfium_c.FS_FLOAT() for _ in range(3))
    # FPDF_GetNamedDest(index) walks the names from the first to the index-th each time: asked once a name (into a
    # buffer most names fit), not first for its length and then for it, which took twice as long
    buffer = ctypes.create_string_buffer(_NAME_OCTETS)
    for index in range(pdfium_c.FPDF_CountNamedDests(document.raw)):
        size = ctypes.c_long(len(buffer))
        dest = pdfium_c.FPDF_GetNamedDest(document.raw, index, buffer, ctypes.byref(size))
        if size.value < 0:  # a longer name: its length, then it
            pdfium_c.FPDF_GetNamedDest(document.raw, index, None, ctypes.byref(size))
            buffer = ctypes.create_string_buffer(max(size.value, len(buffer)))
            size = ctypes.c_long(len(buffer))
            dest = pdfium_c.FPDF_GetNamedDest(document.raw, index, buffer, ctypes.byref(size))
        if size.value <= 0:
            continue
        page = pdfium_c.FPDFDest_GetDestPageIndex(document.raw, dest) + 1 if dest else 0
        if not 1 <= page <= layer.pages:
            continue  # a destination on no page of the document
        # its UTF-16LE and a terminating NUL, which alone is dropped: a name may end with NULs of its own (a string
        # key, ``(AB\000)``, found by pdf.js's viewer as ``nameddest=AB%00``; all its NULs were dropped, so it was ``AB``)
        octets = buffer.raw[: size.value]
        name = (octets[:-2] if octets.endswith(b"\x00\x00") and len(octets) % 2 == 0 else octets).decode(
            "utf-16-le", "replace")
        start, end = layer.page_range(page)
        offset = start
        if pdfium_c.FPDFDest_GetLocationInPage(dest, has_x, has_y, has_zoom, x, y, zoom) and has_y.value:
            lines = pages.get(page)
            if lines is None:
                lines = pages[page] = _PageLines(_lines(layer, start, end))
            below = lines.highest_below(y.value, x.value if has_x.value else -math.inf)
            offset = end if below is None else below
        found.setdefault(name, (page, offset))
    return found


class _PageLines:
    """A page's lines (:func:`_lines`), to find for a destination the highest line at or below its top and right of
    its left (:meth:`highest_below`) in time of the logarithm of their number, not of their number."""

    def __init__(self, lines: list[tuple[int, float, float]]) -> None:
        # (-middle, start): the highest first, the first in layer order among equals, as min() chose them
        ordered = sorted((-middle, at, right) for at, middle, right in lines)
        self.keys = [(key, at) for key, at, _ in ordered]
        self.size = 1
        while self.size < len(ordered):
            self.size *= 2
        # a tree of maxima of the lines' right edges, in that order: the first right of a left is found down it
        self.tree = [-math.inf] * (2 * self.size)
        for i, (_, _, right) in enumerate(ordered):
            self.tree[self.size + i] = right
        for i in range(self.size - 1, 0, -1):
            self.tree[i] = max(self.tree[2 * i], self.tree[2 * i + 1])

    def highest_below(self, top: float, left: float) -> int | None:
        """Where the highest line whose middle is at or below ``top`` and whose right edge is right of ``left``
        starts (the first in layer order among equals), or None."""
        if math.isnan(top) or math.isnan(left):
            return None  # no middle is at or below it, no edge right of it
        first = bisect.bisect_left(self.keys, (-top, -1))  # the lines whose middle is at or below the top
        found = self._first(1, 0, self.size, first, left)
        return None if found is None else self.keys[found][1]

    def _first(self, node: int, low: int, high: int, first: int, left: float) -> int | None:
        """The first line from ``first`` on, in the tree's order, whose right edge is right of ``left``."""
        if high <= first or self.tree[node] <= left:
            return None
        if high - low == 1:
            return low
        middle = (low + high) // 2
        found = self._first(2 * node, low, middle, first, left)
        return found if found is not None else self._first(2 * node + 1, middle, high, first, left)


def _lines(layer: TextLayer, start: int, end: int) -> list[tuple[int, float, float]]:
    """The lines of ``layer.text[start:end]`` that have a box: (where it starts, its middle, its right edge)."""
    found: list[tuple[int, float, float]] = []
    at = start
    while at < end:
        stop = layer.text.find(LINE_BREAK, at, end)
        stop = end if stop < 0 else stop
        lefts = [i for i in range(at, stop) if not math.isnan(layer.boxes[4 * i])]
        if lefts:
            bottom = min(layer.boxes[4 * i + 1] for i in lefts)
            top = max(layer.boxes[4 * i + 3] for i in lefts)
            found.append((at, (bottom + top) / 2, max(layer.boxes[4 * i + 2] for i in lefts)))
        at = stop + len(LINE_BREAK)
    return found
