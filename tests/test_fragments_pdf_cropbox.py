"""A PDF page's visible region is its CropBox reduced to its intersection with its MediaBox (ISO 32000-1
§14.11.2: the crop, bleed, trim and art boxes "shall not ordinarily extend beyond the boundaries of the media
box. If they do, they are effectively reduced to their intersection with the media box"; Table 30: CropBox's
default is the MediaBox, and both are inheritable), whichever pair of opposite corners a box is written with
(§7.9.5). A ``rect`` (docs/pdf-text-layer.md §3), a rendering and the viewer's ``crop`` are all counted from
that region's top-left.

The page is drawn here: MediaBox [0 0 300 200], CropBox [-50 -50 250 400] (past the MediaBox on three sides), so
the visible region is [0 0 250 200]: what poppler's ``pdfinfo -box`` prints as the CropBox and what
``pdftoppm -cropbox`` renders, the independent tools the values are checked against. On it a red square fills
user space x 10-50, y 150-190 (from the visible top-left: x 10-50, y 10-50) and Helvetica 12 draws "AB" from
(20, 100): "A" and "B" are 667/1000 em wide (Helvetica's AFM), 8 points, so their centres are at x 24 and 32
from the visible left, a little above the baseline, 100 points up from the visible bottom (y 96 or so down
from its top).
"""

from __future__ import annotations

import io
import math
import re
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageChops

import pdi.fragments.pdf as pdf
import pdi.fragments.pdf_render as pdf_render
from pdf_helpers import pdf_of
from pdi.fragments.pdf_region import region_characters


def _page(crop: bytes | None, media: bytes = b"[0 0 300 200]", *, inherited: bool = False) -> bytes:
    """The page; ``inherited``: its boxes on its parent, the page tree's node (Table 30: both are inheritable)."""
    content = zlib.compress(b"1 0 0 rg 10 150 40 40 re f\nBT /F1 12 Tf 20 100 Td (AB) Tj ET\n")
    boxes = b"/MediaBox %s" % media + (b" /CropBox %s" % crop if crop is not None else b"")
    return pdf_of([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 %s >>" % (boxes if inherited else b""),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Page /Parent 2 0 R %s /Resources << /Font << /F1 5 0 R >> >> /Contents 3 0 R >>"
        % (b"" if inherited else boxes),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ])


PAST = _page(b"[-50 -50 250 400]")
#: the same boxes, each with its other two corners: the same visible region
PAST_REVERSED = _page(b"[250 400 -50 -50]", b"[300 200 0 0]")
#: the same boxes, given on the page tree's node and inherited by the page
PAST_INHERITED = _page(b"[-50 -50 250 400]", inherited=True)


def _poppler_crop(tmp_path: Path, data: bytes) -> tuple[float, ...]:
    (tmp_path / "page.pdf").write_bytes(data)
    said = subprocess.run(["pdfinfo", "-box", str(tmp_path / "page.pdf")], check=True, capture_output=True,
                          text=True, timeout=60).stdout
    found = re.search(r"^CropBox:\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$", said, re.M)
    assert found is not None, said
    return tuple(float(v) for v in found.groups())


def _poppler_png(tmp_path: Path, data: bytes, region: tuple[int, int, int, int] | None = None) -> Image.Image:
    (tmp_path / "page.pdf").write_bytes(data)
    cut = [] if region is None else ["-x", str(2 * region[0]), "-y", str(2 * region[1]),
                                     "-W", str(2 * (region[2] - region[0])), "-H", str(2 * (region[3] - region[1]))]
    subprocess.run(["pdftoppm", "-r", "144", "-cropbox", "-png", "-singlefile", *cut, str(tmp_path / "page.pdf"),
                    str(tmp_path / "poppler")], check=True, capture_output=True, timeout=60)
    return Image.open(tmp_path / "poppler.png").convert("RGB")


def _ours(data: bytes, region: tuple[int, int, int, int] | None = None) -> Image.Image:
    return Image.open(io.BytesIO(pdf_render.render_png(data, 1, region, name="page.pdf"))).convert("RGB")


def _differing(one: Image.Image, other: Image.Image) -> int:
    """How many pixels of two images of one size differ by more than 32 (of 255) in any channel."""
    return int((np.asarray(ImageChops.difference(one, other)).max(axis=2) > 32).sum())


@pytest.mark.parametrize("data", [PAST, PAST_REVERSED, PAST_INHERITED], ids=["as-written", "other-corners",
                                                                             "inherited"])
def test_iso32000_14_11_2_the_crop_is_the_cropbox_clipped_to_the_mediabox(tmp_path: Path, data: bytes) -> None:
    assert _poppler_crop(tmp_path, data) == (0, 0, 250, 200)
    page = pdf.page_boxes(data, None, 1, name="page.pdf")
    assert page.crop == (0, 0, 250, 200)
    assert (page.width, page.height) == (250, 200)
    assert page.to_json()["crop"] == [0, 0, 250, 200]  # what the viewer is given
    facts, _ = pdf.read_pages_now(data, [1])[0]
    assert facts["crop"] == [0, 0, 250, 200]


def test_iso32000_14_11_2_with_no_cropbox_the_crop_is_the_mediabox(tmp_path: Path) -> None:
    data = _page(None)
    assert _poppler_crop(tmp_path, data) == (0, 0, 300, 200)
    assert pdf.page_boxes(data, None, 1, name="page.pdf").crop == (0, 0, 300, 200)


def test_a_rect_is_counted_from_the_visible_top_left() -> None:
    page = pdf.page_boxes(PAST, None, 1, name="page.pdf")
    a, b = page.text.index("A"), page.text.index("B")
    centre_a, centre_b = page.centre(a), page.centre(b)
    assert centre_a is not None and centre_b is not None
    assert centre_a[0] == pytest.approx(24, abs=0.5) and centre_b[0] == pytest.approx(32, abs=0.5)
    assert 90 < centre_a[1] < 100  # above the baseline, 100 points up from the visible bottom: 100 down
    chosen = region_characters(page, 0, 80, 60, 110)
    assert "".join(page.text[i] for i in chosen) == "AB"
    said = pdf.evaluate_pdf("rect", ((0, 80), (60, 110), 0), PAST, "application/pdf", None)
    assert said.data == b"AB"


@pytest.mark.parametrize("data", [PAST, PAST_INHERITED], ids=["as-written", "inherited"])
def test_the_whole_page_renders_as_pdftoppm_renders_its_cropbox(tmp_path: Path, data: bytes) -> None:
    theirs = _poppler_png(tmp_path, data)
    ours = _ours(data)
    assert ours.size == theirs.size == (500, 400)
    assert _differing(ours, theirs) <= 500 * 400 // 100


@pytest.mark.parametrize("data", [PAST, PAST_INHERITED], ids=["as-written", "inherited"])
@pytest.mark.parametrize("region", [(0, 0, 60, 60), (5, 5, 250, 200), (30, 20, 100, 70)])
def test_a_region_renders_as_pdftoppm_renders_that_slice_of_the_cropbox(
        tmp_path: Path, data: bytes, region: tuple[int, int, int, int]) -> None:
    theirs = _poppler_png(tmp_path, data, region)
    ours = _ours(data, region)
    x1, y1, x2, y2 = region
    assert ours.size == theirs.size == (2 * (x2 - x1), 2 * (y2 - y1))
    assert _differing(ours, theirs) <= ours.size[0] * ours.size[1] // 100
    if x1 < 30 and y1 < 30:  # the red square's pixels, found by its drawing, not by either renderer
        assert ours.getpixel((2 * (30 - x1), 2 * (30 - y1))) == (255, 0, 0)


def test_a_region_past_the_visible_page_is_clamped_to_it() -> None:
    """A region's corners are clamped to the visible region's size (§3): x 200-300 keeps 200-250, 50 points."""
    ours = _ours(PAST, (200, 0, 300, 200))
    assert ours.size == (100, 400)


# --- a CropBox that shares no area with the MediaBox -----------------------------------------------------------
# §14.11.2 reduces it to its intersection with the MediaBox, which is empty: a page of no area, nothing to show.
# pdf.js, the viewer, then shows the MediaBox (its Page.view: "Empty /CropBox and /MediaBox intersection", the
# MediaBox), as PDFium shows the MediaBox for a CropBox of no area; the viewer's rect is drawn on that, so pdi's
# rect, renderings and crop count from the MediaBox too.

DISJOINT = _page(b"[400 400 500 500]")  # wholly outside the MediaBox
TOUCHING = _page(b"[300 0 400 200]")  # sharing the MediaBox's right edge only: no area
DISJOINT_INHERITED = _page(b"[400 400 500 500]", inherited=True)


def _poppler_media_png(tmp_path: Path, data: bytes) -> Image.Image:
    (tmp_path / "page.pdf").write_bytes(data)  # pdftoppm draws the MediaBox unless told -cropbox
    subprocess.run(["pdftoppm", "-r", "144", "-png", "-singlefile", str(tmp_path / "page.pdf"),
                    str(tmp_path / "poppler")], check=True, capture_output=True, timeout=60)
    return Image.open(tmp_path / "poppler.png").convert("RGB")


@pytest.mark.parametrize("data", [DISJOINT, TOUCHING, DISJOINT_INHERITED], ids=["disjoint", "touching", "inherited"])
def test_a_cropbox_sharing_no_area_with_the_mediabox_shows_the_mediabox_as_the_viewer_does(
        tmp_path: Path, data: bytes) -> None:
    """Found: the crop was PDFium's empty intersection ([0 0 0 0], or [300 0 300 200]), so a rendering failed
    ("the child reading it stopped ... Crop exceeds page dimensions") and the rect the viewer drew on the
    MediaBox named no character."""
    page = pdf.page_boxes(data, None, 1, name="page.pdf")
    assert page.crop == (0, 0, 300, 200)
    assert (page.width, page.height) == (300, 200)
    facts, _ = pdf.read_pages_now(data, [1])[0]
    assert facts["crop"] == [0, 0, 300, 200]
    assert pdf.text_layer(data).page_sizes == ((300, 200),)
    assert pdf.evaluate_pdf("rect", ((0, 80), (60, 110), 0), data, "application/pdf", None).data == b"AB"
    ours, theirs = _ours(data), _poppler_media_png(tmp_path, data)
    assert ours.size == theirs.size == (600, 400)
    assert _differing(ours, theirs) <= 600 * 400 // 100
    assert ours.getpixel((60, 60)) == (255, 0, 0)  # the red square, 30 points from the MediaBox's top-left
    assert _ours(data, (0, 0, 60, 60)).size == (120, 120)


def _wider_than_a_float(rotate: int) -> bytes:
    """One page whose MediaBox runs from -3e38 to 3e38 points across (each edge a float; the width, 6e38, not)."""
    edge = b"3" + b"0" * 38 + b".0"
    return pdf_of([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [-" + edge + b" 0 " + edge + b" 20] /Rotate %d >>" % rotate,
    ])


@pytest.mark.parametrize("rotate", [0, 90])
def test_a_page_wider_than_a_float_holds_has_a_finite_size(rotate: int) -> None:
    """PDFium's page width is a float, infinite here: the layer kept it so, and N2C's JSON of the page's size was a
    500 (tests/server/test_server_pdf.py). pdfminer.six reads the MediaBox in doubles: the size is its sides, after
    /Rotate, up to PDFium keeping each edge as a float."""
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser

    data = _wider_than_a_float(rotate)
    (page,) = PDFPage.create_pages(PDFDocument(PDFParser(io.BytesIO(data))))
    left, bottom, right, top = page.mediabox
    expected = (right - left, top - bottom) if rotate == 0 else (top - bottom, right - left)
    (size,) = pdf.text_layer(data).page_sizes
    assert all(map(math.isfinite, size))
    assert size == pytest.approx(expected, rel=1e-6)
