"""A region of an image with an EXIF orientation: of its stored pixels, its crop saying the same orientation.

PDI-GRAMMAR.md's reading: ``rect`` and ``crop`` (and ``xywh=``, an alias) name the stored pixels, whatever the EXIF
``Orientation`` (CIPA DC-008 tag 0x0112) says. A browser shows a JPEG, and a PNG with an ``eXIf`` chunk, turned as
it says; a crop of one is a PNG whose ``eXIf`` says the same orientation, so that it is shown turned as the region
is seen in the whole (``tests/server/test_server_image_orientation_browser.py`` measures both in Chromium). The
oracle is Pillow: ``Image.open(...).crop(...)`` for the stored pixels, ``ImageOps.exif_transpose`` for what is seen.
"""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageOps

from pdi.fragments.image import evaluate_image, shown_box

WIDTH, HEIGHT = 9, 5


def _numbered(orientation: int) -> Image.Image:
    """A stored image whose every pixel has its own colour, its EXIF saying ``orientation``."""
    image = Image.new("RGB", (WIDTH, HEIGHT))
    image.putdata([(20 * x, 40 * y, 100) for y in range(HEIGHT) for x in range(WIDTH)])
    image.getexif()[0x0112] = orientation
    return image


def _file(fmt: str, orientation: int) -> bytes:
    out = io.BytesIO()
    image = _numbered(orientation)
    options = {"JPEG": {"quality": 100, "subsampling": 0}, "PNG": {}, "WEBP": {"lossless": True}}[fmt]
    image.save(out, format=fmt, exif=image.getexif().tobytes(), **options)
    return out.getvalue()


boxes = st.tuples(st.integers(0, WIDTH), st.integers(0, HEIGHT), st.integers(0, WIDTH), st.integers(0, HEIGHT)).map(
    lambda b: (min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3]))
).filter(lambda b: b[0] < b[2] and b[1] < b[3])


@settings(max_examples=200)
@given(orientation=st.integers(1, 8), box=boxes)
def test_a_region_is_seen_where_pillow_shows_its_stored_pixels(orientation: int, box: tuple[int, int, int, int]) -> None:
    whole = _numbered(orientation)
    seen = shown_box(orientation, box, WIDTH, HEIGHT)
    # the stored pixels of the box, turned as a browser turns the whole, are what is seen at the box shown
    cut = whole.crop(box)
    cut.getexif()[0x0112] = orientation
    assert ImageOps.exif_transpose(cut).tobytes() == ImageOps.exif_transpose(whole).crop(seen).tobytes()


@settings(max_examples=60)
@given(fmt=st.sampled_from(["JPEG", "PNG"]), orientation=st.integers(1, 8), box=boxes)
def test_a_crop_is_of_the_stored_pixels_and_says_the_orientation(fmt: str, orientation: int,
                                                                 box: tuple[int, int, int, int]) -> None:
    data = _file(fmt, orientation)
    cut = evaluate_image("crop", [box[:2], box[2:]], data, f"image/{fmt.lower()}", None)
    png = Image.open(io.BytesIO(cut.data))
    assert png.format == "PNG"
    stored = Image.open(io.BytesIO(data))
    assert png.convert("RGB").tobytes() == stored.convert("RGB").crop(box).tobytes()  # the stored pixels, as cut
    region = cut.region
    assert region is not None and (region.width, region.height) == (WIDTH, HEIGHT)  # the stored size
    said = png.getexif().get(0x0112)
    assert (said or 1) == orientation  # a browser shows the crop turned as it shows the whole
    seen = ImageOps.exif_transpose(stored.convert("RGB")).crop(shown_box(orientation, box, WIDTH, HEIGHT))
    assert ImageOps.exif_transpose(png).convert("RGB").tobytes() == seen.tobytes()


def test_a_webp_crop_says_no_orientation() -> None:
    # a browser shows a WebP as stored, whatever its EXIF says (Chromium, measured): so is its crop
    data = _file("WEBP", 6)
    assert Image.open(io.BytesIO(data)).getexif().get(0x0112) == 6
    png = Image.open(io.BytesIO(evaluate_image("crop", [(1, 1), (4, 3)], data, "image/webp", None).data))
    assert png.getexif().get(0x0112) is None
    assert png.convert("RGB").tobytes() == Image.open(io.BytesIO(data)).convert("RGB").crop((1, 1, 4, 3)).tobytes()
