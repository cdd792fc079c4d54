"""Which characters of a PDF page a ``rect`` or ``viewrect`` selects (docs/pdf-text-layer.md §3), on the page's
boxes as :func:`pdi.fragments.pdf.pages_boxes` gives them."""

from __future__ import annotations

from typing import Protocol


class PageBoxes(Protocol):
    """What of a page (:class:`pdi.fragments.pdf.PageBoxes`, not imported: that module imports this one) the
    selection reads: its text, and each character's box centre (None: it has none)."""

    @property
    def text(self) -> str: ...

    def centre(self, i: int) -> tuple[float, float] | None: ...


def region_characters(page: PageBoxes, x1: int, y1: int, x2: int, y2: int) -> list[int]:
    """The characters (offsets in ``page.text``) a ``rect`` selects: those whose box centre lies in
    ``[x1, x2) × [y1, y2)`` (points from the CropBox's top-left, y downwards), and each character with no box
    (a generated space, a line break) whose nearest characters with a box before and after it are both selected."""
    inside: list[bool | None] = []
    for i in range(len(page.text)):
        centre = page.centre(i)
        inside.append(None if centre is None else (x1 <= centre[0] < x2 and y1 <= centre[1] < y2))
    # whether the nearest character with a box after each one is selected: one pass from the end (a page of two
    # million characters and 40,000 line breaks took 35 s when each break looked ahead through the rest)
    after: list[bool] = [False] * len(inside)
    following = False
    for i in range(len(inside) - 1, -1, -1):
        after[i] = following
        flag = inside[i]
        if flag is not None:
            following = flag
    chosen: list[int] = []
    before = False
    for i, flag in enumerate(inside):
        if flag is None:
            if before and after[i]:
                chosen.append(i)
            continue
        before = flag
        if flag:
            chosen.append(i)
    return chosen
