"""A PDF page or region rendered as PNG (:func:`pdi.fragments.pdf_render.render_png`, docs/pdf-text-layer.md §4).

The bound on pixels (:data:`pdi.fragments.pdf_render.MAX_RENDER_PIXELS`) is on what is
rendered: a small region of a huge page (14,400 points square, the largest
page PDF 1.7's Annex C.2 allows: 28,800 pixels square at 144 dpi) renders,
and a region too large is a :class:`~pdi.errors.LimitError` naming the bound
and the size asked, as PDFium's own limits are. The region's pixels are
those an independent renderer gives for the same slice of the page
(poppler's ``pdftoppm -x -y -W -H``) and those PDFium gives for the whole
page, cropped (pypdfium2 called directly). The page is drawn here with
rectangles whose sides fall on whole points, so on whole pixels at 144 dpi
(2 pixels a point): each pixel's colour is worked out by hand.
"""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageChops

import pdi.fragments.pdf as pdf
import pdi.fragments.pdf_render as pdf_render
from pdf_helpers import huge_page_pdf
from pdi.errors import LimitError

CORPUS = Path(__file__).resolve().parent / "data" / "pdf"
SIDE = 14_400  # points: 28,800 pixels at 144 dpi, 829,440,000 pixels the page

#: Top-left-origin rectangles (x1, y1, x2, y2 in points, as a rect names them) and their colours: red across the
#: region's top-left corner, blue across its bottom-right one, green far from it.
SHAPES = [((6_990, 6_990, 7_030, 7_020), (255, 0, 0)), ((7_060, 7_030, 7_120, 7_060), (0, 0, 255)),
          ((100, 100, 200, 200), (0, 255, 0))]
REGION = (7_000, 7_000, 7_100, 7_050)  # 100 × 50 points: 200 × 100 pixels


HUGE = huge_page_pdf(SIDE, SHAPES)


def _rgb(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGB")


def _differing(one: Image.Image, other: Image.Image) -> int:
    """How many pixels of two images of one size differ by more than 32 (of 255) in any channel."""
    return int((np.asarray(ImageChops.difference(one, other)).max(axis=2) > 32).sum())


def test_a_small_region_of_a_huge_page_renders_only_the_region() -> None:
    image = _rgb(pdf_render.render_png(HUGE, 1, REGION, name="huge.pdf"))
    assert image.size == (200, 100)
    # red covers points 7000-7030 × 7000-7020 of the region (pixels 0-60 × 0-40), blue 7060-7100 × 7030-7050
    # (pixels 120-200 × 60-100); the rest is the page's white. Pixels one from each side, and inside.
    for x, y, colour in [(1, 1, (255, 0, 0)), (58, 38, (255, 0, 0)), (62, 42, (255, 255, 255)),
                         (61, 1, (255, 255, 255)), (1, 41, (255, 255, 255)), (118, 58, (255, 255, 255)),
                         (121, 61, (0, 0, 255)), (198, 98, (0, 0, 255)), (100, 50, (255, 255, 255))]:
        assert image.getpixel((x, y)) == colour, (x, y)


def test_the_region_is_what_pdftoppm_renders_of_that_slice_of_the_page(tmp_path: Path) -> None:
    x1, y1, x2, y2 = REGION
    (tmp_path / "huge.pdf").write_bytes(HUGE)
    subprocess.run(["pdftoppm", "-r", "144", "-png", "-singlefile", "-x", str(2 * x1), "-y", str(2 * y1),
                    "-W", str(2 * (x2 - x1)), "-H", str(2 * (y2 - y1)), str(tmp_path / "huge.pdf"),
                    str(tmp_path / "poppler")], check=True, capture_output=True, timeout=120)
    theirs = _rgb((tmp_path / "poppler.png").read_bytes())
    ours = _rgb(pdf_render.render_png(HUGE, 1, REGION, name="huge.pdf"))
    assert ours.size == theirs.size == (200, 100)
    assert _differing(ours, theirs) <= 200 * 100 // 100  # at most 1% of the pixels (an edge's anti-aliasing), here none


def test_a_region_is_the_whole_page_rendered_and_cropped() -> None:
    import pypdfium2 as pdfium

    data = (CORPUS / "tracemonkey.pdf").read_bytes()
    region = (100, 150, 400, 330)  # points from the CropBox's top-left: a title, names and text
    ours = _rgb(pdf_render.render_png(data, 1, region, name="tracemonkey.pdf"))
    document = pdfium.PdfDocument(data)
    try:
        whole = document[0].render(scale=2).to_pil().convert("RGB")
    finally:
        document.close()
    theirs = whole.crop(tuple(2 * v for v in region))
    assert ours.size == theirs.size == (600, 360)
    assert _differing(ours, theirs) <= 600 * 360 // 100
    assert ours.getextrema() != ((255, 255), (255, 255), (255, 255))  # it has text: not a blank compared to a blank


def test_a_region_too_large_to_render_is_a_limit_naming_the_bound_and_its_size() -> None:
    with pytest.raises(LimitError) as refused:
        pdf_render.render_png(HUGE, 1, (0, 0, SIDE, SIDE), name="huge.pdf")
    said = str(refused.value)
    assert "28,800×28,800 pixels" in said and "829,440,000" in said, said
    assert f"{pdf_render.MAX_RENDER_PIXELS:,}" in said and "pdi.fragments.pdf_render.MAX_RENDER_PIXELS" in said, said
    assert refused.value.exit_code == 7  # the exit status of PDFium's own limits (tests/test_fragments_pdf_limits.py)
    whole = r"^huge.pdf: page 1 \(14400×14400 points\) rendered at 144 dpi is 28,800×28,800 pixels"  # said of its name
    with pytest.raises(LimitError, match=whole):
        pdf_render.render_png(HUGE, 1, name="huge.pdf")
    # a region of 4,472 points square (8,944 pixels: 79,995,136) is past it too; 3,000 square (36 million) is not
    with pytest.raises(LimitError, match="8,944×8,944 pixels"):
        pdf_render.render_png(HUGE, 1, (0, 0, 4_472, 4_472), name="huge.pdf")


def test_rendering_a_small_region_of_a_huge_page_takes_the_memory_of_the_region() -> None:
    """The child's peak resident set (its VmHWM) for 200 × 100 pixels of a page filled whole: far under what a
    bitmap of the page would take (829,440,000 pixels, 3 octets each: 2.3 GiB, past the child's bound)."""
    import os
    import tempfile

    from pdi._bounded import ChildLimits, run_child

    filled = huge_page_pdf(SIDE, [((0, 0, SIDE, SIDE), (0, 255, 0)), *SHAPES])
    with tempfile.TemporaryFile() as given:
        given.write(filled)
        given.flush()
        os.lseek(given.fileno(), 0, os.SEEK_SET)
        done = run_child(pdf.CHILD, ["png", "1", *map(str, REGION)],
                         ChildLimits(seconds=60, memory=pdf.LIMITS.memory, output=pdf.LIMITS.output),
                         stdin=given.fileno())
    image = _rgb(done.data)
    assert image.size == (200, 100) and image.getpixel((100, 50)) == (0, 255, 0)  # the page's green, not white
    assert 0 < done.peak_kib * 1024 < 200 << 20


def _wide_page(width: bytes, left: bytes = b"0") -> bytes:
    """One page from ``left`` to ``width`` points across and 20 high, a blue square over 0 to 5 points each way."""
    from pdf_helpers import pdf_of

    content = b"0 0 1 rg 0 0 5 5 re f\n"
    return pdf_of([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [" + left + b" 0 " + width + b" 20] /Contents 3 0 R >>",
    ])


@pytest.mark.parametrize("width", [b"100", b"100000000", b"1000000000"])
def test_a_region_of_a_very_wide_page_is_its_pixels(width: bytes) -> None:
    # the region's bottom-left 5 points square (10 pixels) is the blue square, whatever the page's width
    image = _rgb(pdf_render.render_png_now(_wide_page(width), 1, (0, 10, 10, 20)))
    assert image.size == (20, 20)
    assert image.getpixel((1, 18)) == image.getpixel((8, 11)) == (0, 0, 255)
    assert image.getpixel((12, 18)) == image.getpixel((1, 8)) == (255, 255, 255)


@pytest.mark.parametrize(("left", "width"), [(b"0", b"1100000000"), (b"0", b"1" + b"0" * 30 + b".0"),
                                           (b"-3" + b"0" * 38 + b".0", b"3" + b"0" * 38 + b".0")])
def test_a_region_of_a_page_wider_than_pdfium_renders_is_a_limit(left: bytes, width: bytes) -> None:
    # PDFium's bitmap sides are C ints: a page of more than 2**31 - 1 pixels a side at 144 dpi rendered its region
    # white (the side wrapped round), or its child stopped on "Crop exceeds page dimensions" or an OverflowError
    # (a page whose width in floats is infinite)
    data = _wide_page(width, left)
    for region in ((0, 10, 10, 20), None):
        with pytest.raises(LimitError, match="PDFium renders no region of a page more than 2,147,483,647 pixels a side"):
            pdf_render.render_png_now(data, 1, region)
    with pytest.raises(LimitError, match="2,147,483,647 pixels a side"):
        pdf_render.render_png(data, 1, (0, 10, 10, 20), name="wide.pdf")
