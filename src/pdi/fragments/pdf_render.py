"""A PDF page or region rendered as PNG by PDFium (docs/pdf-text-layer.md §4), for the viewer and
``/api/pdf/page``.

:func:`render_png` runs PDFium in a child process under :data:`pdi.fragments.pdf.LIMITS`
(:attr:`~pdi.fragments.pdf.PdfiumLimits.page_seconds`; the child is :mod:`pdi.fragments.pdf_child`);
:func:`render_png_now` is what the child runs, in the calling process and unbounded (tests, benchmarks: files one
trusts). A region is named as the text layer's boxes are: points from the CropBox's top-left, before ``/Rotate``.
"""

from __future__ import annotations

import math
from typing import Final

from pdi.errors import LimitError, NotFoundError, PDIError, UnsupportedError
from pdi.fragments import pdf
from pdi.fragments.results import Buffer

#: Renderings of a page or region are made at this many dots per inch (docs/pdf-text-layer.md §4).
RENDER_DPI = 144
#: The most pixels one rendering may have: what is rendered, the region at :data:`RENDER_DPI` (a small region of
#: a huge page renders; a page or region of more, a 14,400-point page whole at 144 dpi, is refused, not rendered).
MAX_RENDER_PIXELS = 40_000_000


#: The most pixels a side of the page PDFium renders a region of (its bitmaps' sides are C ints).
_PDFIUM_SIDE: Final = 2**31 - 1


def render_png(data: Buffer, number: int, region: tuple[float, float, float, float] | None = None, *,
               name: str = pdf.UNNAMED) -> bytes:
    """Page ``number`` (from 1) of the PDF ``data`` rendered by PDFium at :data:`RENDER_DPI`, as PNG; with
    ``region`` (x1, y1, x2, y2 in points from the CropBox's top-left, y downwards, before ``/Rotate``) only that,
    turned as the page is.
    PDFium renders it in a child process, under :data:`pdi.fragments.pdf.LIMITS`
    (:attr:`~pdi.fragments.pdf.PdfiumLimits.page_seconds`); a rendering of more than :data:`MAX_RENDER_PIXELS` is a
    :class:`~pdi.errors.LimitError` naming its size, as is any region of a page more than 2**31 - 1 pixels a side at that resolution (PDFium's bitmaps are of C ints).
    A refusal begins with ``name`` (:func:`pdi.fragments.pdf.said_of`)."""
    args = [str(number), *(repr(float(v)) for v in region or ())]
    try:
        return pdf._in_child("png", data, args, pdf.LIMITS.page_seconds, "page_seconds",
                             f"{pdf.UNNAMED} (page {number})")
    except PDIError as refused:
        if name == pdf.UNNAMED:
            raise
        raise pdf.said_of(refused, name) from refused


def render_png_now(data: Buffer, number: int, region: tuple[float, float, float, float] | None = None) -> bytes:
    """:func:`render_png` in this process, with no limit of time or memory (what its child runs)."""
    import io

    document = pdf.open_document(bytes(data))
    try:
        if not 1 <= number <= len(document):
            raise NotFoundError(f"page {number} is not a page of this PDF: it has {len(document)}")
        page = pdf.load_page(document, number - 1)
        try:
            scale = RENDER_DPI / 72
            left, bottom, right, top = pdf.visible_box(page)
            crop = (0.0, 0.0, 0.0, 0.0)
            what = f"page {number} ({right - left:g}×{top - bottom:g} points)"
            # PDFium places any region in a bitmap of the whole page's pixels, each side a C int: past it the
            # sides wrapped round (a 10-point region of a page 1.1 billion points wide rendered white) or were
            # not finite (a child's OverflowError)
            sides = (page.get_width() * scale, page.get_height() * scale)
            if not all(math.isfinite(side) and math.ceil(side) <= _PDFIUM_SIDE for side in sides):
                raise LimitError(f"{what} at {RENDER_DPI} dpi is {sides[0]:,.0f}×{sides[1]:,.0f} pixels: PDFium"
                                 f" renders no region of a page more than {_PDFIUM_SIDE:,} pixels a side")
            turn = 0  # quarter turns clockwise the region's pixels are given after cropping: the page's /Rotate
            if region is not None:
                turn = page.get_rotation() // 90
                page.set_rotation(0)  # a region is named before /Rotate (in this copy of the document only)
                x1, y1, x2, y2 = (max(0.0, v) for v in region)
                x2, y2 = min(x2, right - left), min(y2, top - bottom)
                if x2 <= x1 or y2 <= y1:
                    raise UnsupportedError("the region holds no point of the page: there is no empty image to return")
                # pypdfium2's crop: points cut from the left, bottom, right and top of the unrotated page
                crop = (x1, (top - bottom) - y2, (right - left) - x2, y1)
                what = f"the region ({x1:g},{y1:g}),({x2:g},{y2:g}) of page {number}"
            # the bitmap pypdfium2's PdfPage.render makes: the page's pixels (its size after /Rotate), rounded up,
            # less each side's cut; PDFium draws into that bitmap only, whatever the page's size
            width, height = math.ceil(page.get_width() * scale), math.ceil(page.get_height() * scale)
            width -= math.ceil(crop[0] * scale) + math.ceil(crop[2] * scale)
            height -= math.ceil(crop[1] * scale) + math.ceil(crop[3] * scale)
            if width * height > MAX_RENDER_PIXELS:
                raise LimitError(f"{what} rendered at {RENDER_DPI} dpi is {width:,}×{height:,} pixels,"
                                 f" {width * height:,}: more than the {MAX_RENDER_PIXELS:,} a rendering may have"
                                 " (pdi.fragments.pdf_render.MAX_RENDER_PIXELS); name a smaller region")
            bitmap = page.render(scale=scale, crop=crop)  # PDFium applies /Rotate to a whole page
            image = bitmap.to_pil()
            if turn:  # shown as the page is, as the viewer outlines it (PIL's turns are counter-clockwise)
                from PIL import Image

                image = image.transpose((Image.Transpose.ROTATE_270, Image.Transpose.ROTATE_180,
                                         Image.Transpose.ROTATE_90)[turn - 1])
            out = io.BytesIO()
            image.save(out, format="PNG")
            return out.getvalue()
        finally:
            page.close()
    finally:
        document.close()
