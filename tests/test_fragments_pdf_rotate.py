"""A page's ``/Rotate`` as pdi reads it: its size, its rendering and its regions (docs/pdf-text-layer.md §3).

ISO 32000-1 §7.7.3.3, Table 30: ``/Rotate`` is "the number of degrees by
which the page shall be rotated clockwise when displayed or printed. The value
shall be a multiple of 90", and it is inheritable. A multiple of 90 out of
0–270 is read as that many degrees, modulo 360, by pdf.js (``Page.rotate`` in
pdf.js's ``core/document.js``: ``rotate % 360`` for 360 and more,
``(rotate % 360 + 360) % 360`` below 0: 450 is 90, -90 is 270) and by PDFium
alike. A value that is *not* a multiple of 90 has no reading in the standard,
and the two differ: pdf.js reads it as 0, PDFium (``CPDF_Page::GetPageRotation``:
``(rotate / 90) % 4`` in C's integer division, a negative result plus 4) as
whole quarter turns towards 0 (91 and 135 are 90, -91 is 270, 45 is 0). PDFium's
public API gives only its reading, so pdi (its page sizes and renderings, made
by PDFium) keeps PDFium's, and the viewer turns pdf.js's drawing of the page
the same way (tests/server/test_server_pdf_viewer.py).

A page is drawn here with a black square at its top-left corner (as displayed
before ``/Rotate``) so each rendering's turn is seen: turned clockwise by 90
that corner is the top-right one, by 180 the bottom-right, by 270 the
bottom-left.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

import pdi.fragments.pdf as pdf
import pdi.fragments.pdf_render as pdf_render
from pdf_helpers import turned_pdf
from pdi.fragments import evaluate

WIDTH, HEIGHT = 200, 400  # turned_pdf's page, in points: 400 × 800 pixels at 144 dpi


#: /Rotate as written -> the clockwise turn in degrees: multiples of 90 as pdf.js and PDFium both read them,
#: other values as PDFium reads them (pdf.js: 0)
TURNS = [(b"0", 0), (b"90", 90), (b"450", 90), (b"-90", 270), (b"-450", 270), (b"720", 0), (b"-180", 180),
         (b"91", 90), (b"135", 90), (b"-91", 270), (b"45", 0), (b"90.5", 90), (b"269", 180)]


def _corner(png: bytes) -> str:
    """Which corner of the rendering the black square is in."""
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
    ys, xs = np.nonzero(pixels < 64)
    y, x = ys.mean() / pixels.shape[0], xs.mean() / pixels.shape[1]
    return ("top" if y < 0.5 else "bottom") + "-" + ("left" if x < 0.5 else "right")


CORNER = {0: "top-left", 90: "top-right", 180: "bottom-right", 270: "bottom-left"}


@pytest.mark.parametrize("inherited", [False, True])
@pytest.mark.parametrize(("rotate", "turn"), TURNS)
def test_a_pages_size_and_rendering_are_turned_as_its_rotate_reads(rotate: bytes, turn: int, inherited: bool) -> None:
    data = turned_pdf(rotate, inherited=inherited)
    layer = pdf.text_layer(data)
    size = (HEIGHT, WIDTH) if turn in (90, 270) else (WIDTH, HEIGHT)
    assert layer.page_sizes == ((float(size[0]), float(size[1])),)
    boxes = pdf.read_pages_now(data, [1])[0][0]
    assert boxes["rotation"] == turn and boxes["crop"] == [0, 0, WIDTH, HEIGHT]
    png = pdf_render.render_png_now(data, 1)
    assert Image.open(io.BytesIO(png)).size == (2 * size[0], 2 * size[1])  # 144 dpi: 2 pixels a point
    assert _corner(png) == CORNER[turn]


@pytest.mark.parametrize(("rotate", "turn"), TURNS)
def test_a_region_names_the_same_marks_whatever_the_rotate_and_renders_turned_as_its_page(rotate: bytes, turn: int,
                                                                                           ) -> None:
    # named from the CropBox's top-left before /Rotate: the square's corner and the word below it, on every page
    data = turned_pdf(rotate)
    assert evaluate("rect", [(0, 30), (60, 80)], data, media_type="application/pdf").data == b"Hi"
    # rendered, the region is turned as its page is (as the viewer shows and outlines it): the pixels PDFium gives
    # for the whole page, turned, where the region lands once turned clockwise (a point x, y of the W × H page is
    # H - y, x turned by 90, W - x, H - y by 180, y, W - x by 270), 2 pixels a unit; the square, filled on whole
    # pixels, alike to the pixel, the word's glyphs as PDFium rasterises them turned (a pixel's shift at an edge)
    x1, y1, x2, y2 = 0, 0, 60, 80
    lands = {0: (x1, y1, x2, y2), 90: (HEIGHT - y2, x1, HEIGHT - y1, x2),
             180: (WIDTH - x2, HEIGHT - y2, WIDTH - x1, HEIGHT - y1), 270: (y1, WIDTH - x2, y2, WIDTH - x1)}[turn]
    whole = Image.open(io.BytesIO(pdf_render.render_png_now(data, 1))).convert("RGB")
    region = Image.open(io.BytesIO(pdf_render.render_png_now(data, 1, (float(x1), float(y1), float(x2), float(y2)))))
    expected = np.asarray(whole.crop(tuple(2 * v for v in lands)))
    got = np.asarray(region.convert("RGB"))
    assert got.shape == expected.shape
    square = {0: (slice(0, 40), slice(0, 40)), 90: (slice(0, 40), slice(-40, None)),
              180: (slice(-40, None), slice(-40, None)), 270: (slice(-40, None), slice(0, 40))}[turn]
    assert (got[square] < 8).all() and (expected[square] < 8).all()
    far = np.abs(got.astype(int) - expected.astype(int)).max(axis=2) > 64
    assert far.mean() < 0.01, far.sum()
    dark = [np.argwhere(image.min(axis=2) < 128) for image in (got, expected)]
    assert np.abs(dark[0].min(axis=0) - dark[1].min(axis=0)).max() <= 1
    assert np.abs(dark[0].max(axis=0) - dark[1].max(axis=0)).max() <= 1


# /UserUnit (PDF 1.6, ISO 32000-1 §8.3.2.3 and Table 30): "the size of default user space units, in multiples of
# 1/72 inch". It changes how large the page is, not its coordinates: the MediaBox, the text's positions, a rect and
# viewrect stay in units of user space, as PDFium and poppler (pdfinfo prints "Page size: 200 x 400 pts", ignoring
# it) read them and as pdf.js's page.view is ([0, 0, 200, 400]; pdf.js applies it to its viewport's scale only:
# PageViewport multiplies scale by userUnit, and the viewer, which fits a page to its width, places user-space
# points through that viewport: tests/server/test_server_pdf_viewer.py). pdi's renderings are 2 pixels a unit.
@pytest.mark.parametrize("unit", [b"2", b"0.5", b"75000", b"-1"])
def test_a_user_unit_changes_no_coordinate_size_or_rendering(unit: bytes) -> None:
    data = turned_pdf(b"0", entries=b"/UserUnit " + unit)
    assert pdf.text_layer(data).page_sizes == ((float(WIDTH), float(HEIGHT)),)
    assert evaluate("rect", [(0, 30), (60, 80)], data, media_type="application/pdf").data == b"Hi"
    assert evaluate("viewrect", ["0", "30", "60", "50"], data, media_type="application/pdf").data == b"Hi"
    png = pdf_render.render_png_now(data, 1)
    assert Image.open(io.BytesIO(png)).size == (2 * WIDTH, 2 * HEIGHT) and _corner(png) == "top-left"


# /Rotate past a C int, huge, signed, or a real: what PDFium reads, worked out by hand from its source, which pdi
# keeps (its sizes and renderings are PDFium's, and /api/pdf/page gives the viewer this rotation, by which it turns
# pdf.js's drawing of a page with text). PDFium's number (FX_Number, core/fxcrt/fx_number.cpp) reads an integer
# into a uint32_t: past 4294967295 it is 0; with a sign, past 2147483647 (2147483648 after "-") it is 0; GetSigned
# casts it to int32_t, so 2147483648 to 4294967295 wrap below 0. A real (it has ".") is a float (2147483700.0 is
# 2147483648.0, 16777217.0 is 16777216.0), which GetSigned casts saturated (towards 0, at INT_MIN and INT_MAX).
# CPDF_Page::GetPageRotation takes (that / 90) % 4 in C (both towards 0), plus 4 below 0.
# pdf.js (Page.rotate, src/core/document.js) reads the number as a double: a multiple of 90 modulo 360, else 0; so
# the two differ on some multiples of 90 (2147483700: PDFium 0, pdf.js 180), which only a scan's page, for which
# the viewer asks pdi nothing, shows as pdf.js reads it (docs/pdf-text-layer.md §3).
PAST = [
    (b"2147483647", 90),  # INT_MAX: 23860929 quarters
    (b"2147483648", 270),  # 2**31, read as INT_MIN: -23860929 quarters, -1 of 4 (pdf.js: 0, no multiple of 90)
    (b"2147483700", 0),  # a multiple of 90, read as -2147483596: -23860928 quarters (pdf.js: 180)
    (b"4294967296", 0),  # 2**32, past a uint32_t: 0
    (b"360000000090", 0),  # a multiple of 90 past a uint32_t: 0 (pdf.js: 90)
    (b"99999999999999999999", 0),
    (b"-2147483648", 270),  # INT_MIN
    (b"-2147483700", 0),  # past INT_MIN after "-": 0 (pdf.js: 180)
    (b"+2147483700", 0),  # past INT_MAX after "+": 0 (pdf.js: 180)
    (b"2147483700.0", 90),  # the float 2147483648, saturated to INT_MAX (pdf.js: 180)
    (b"340282346638528859811704183484516925440.0", 90),  # FLT_MAX, saturated to INT_MAX
    (b"-340282346638528859811704183484516925440.0", 270),  # saturated to INT_MIN
    (b"-90.5", 270),  # -90 towards 0 (pdf.js: 0)
    (b"180.9", 180),
    (b"16777217.0", 90),  # the float 16777216: 186413 quarters (pdf.js: 0)
]


@pytest.mark.parametrize(("rotate", "turn"), PAST)
def test_a_rotate_past_a_c_int_huge_or_real_is_read_as_pdfium_reads_it(rotate: bytes, turn: int) -> None:
    data = turned_pdf(rotate)
    size = (HEIGHT, WIDTH) if turn in (90, 270) else (WIDTH, HEIGHT)
    assert pdf.text_layer(data).page_sizes == ((float(size[0]), float(size[1])),)
    assert pdf.read_pages_now(data, [1])[0][0]["rotation"] == turn  # /api/pdf/page's, the viewer's turn
    png = pdf_render.render_png_now(data, 1)
    assert Image.open(io.BytesIO(png)).size == (2 * size[0], 2 * size[1])
    assert _corner(png) == CORNER[turn]
    assert evaluate("rect", [(0, 30), (60, 80)], data, media_type="application/pdf").data == b"Hi"
