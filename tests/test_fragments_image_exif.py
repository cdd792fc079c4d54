"""Images whose EXIF block is damaged: the image is still read, its region named and cut, and no warning of
Pillow's leaves pdi (the tests run with warnings as errors: pyproject.toml's ``filterwarnings = ["error"]``).

EXIF is metadata beside the pixels (CIPA DC-008, a TIFF image file directory in a JPEG's APP1 segment, a WebP's
``EXIF`` chunk): a rectangle is of the stored pixels, whatever the EXIF says, so a damaged EXIF is no reason to
refuse the image. Pillow reads a JPEG's and a WebP's EXIF as it opens them (for the resolution), and says
"Corrupt EXIF data" as a ``UserWarning`` when the directory's count runs past its end: under ``-W error`` that
warning escaped the evaluator (found in review, 2026-11-29). The images are written with Pillow, their EXIF made
with :class:`PIL.Image.Exif`; then the directory's entry count (the two octets after the TIFF header's eight,
TIFF 6.0 §2) is overwritten with 65,535, and the expected pixels are those painted.
"""

from __future__ import annotations

import io
import warnings

import pytest
from PIL import Image

from pdi.fragments.image import evaluate_image
from pdi.server.pages.cite import image_facts

#: The colour every pixel is painted (lossless WebP and the quality-100 JPEG of one colour keep it within 2).
COLOUR = (200, 40, 10)


def _with_damaged_exif(fmt: str, **options: object) -> bytes:
    exif = Image.Exif()
    exif[0x010F] = "pdi"  # Make
    exif[0x0110] = "a test camera"  # Model
    out = io.BytesIO()
    Image.new("RGB", (40, 30), COLOUR).save(out, format=fmt, exif=exif.tobytes(), **options)
    data = bytearray(out.getvalue())
    header = data.find(b"MM\x00*\x00\x00\x00\x08")  # Pillow writes its EXIF big-endian, the directory at 8
    assert header > 0 and data.find(b"MM\x00*", header + 1) < 0
    data[header + 8:header + 10] = b"\xff\xff"  # 65,535 entries, 786 KB of them: past the block's end
    return bytes(data)


IMAGES = {
    "jpeg": _with_damaged_exif("JPEG", quality=100, subsampling=0),
    "webp": _with_damaged_exif("WEBP", lossless=True),
}


@pytest.mark.parametrize("fmt", sorted(IMAGES))
def test_pillow_says_the_exif_is_corrupt(fmt: str) -> None:
    # the image made is the case: Pillow warns as it reads its EXIF (a JPEG's as it opens it, for its resolution)
    with pytest.warns(UserWarning, match="Corrupt EXIF data"):
        Image.open(io.BytesIO(IMAGES[fmt])).getexif()


@pytest.mark.parametrize("fmt", sorted(IMAGES))
def test_a_region_of_an_image_with_a_damaged_exif_is_named_and_cut(fmt: str) -> None:
    data = IMAGES[fmt]
    media_type = f"image/{fmt}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        named = evaluate_image("rect", [(5, 6), (25, 16)], data, media_type, None)
        cut = evaluate_image("crop", [(5, 6), (25, 16)], data, media_type, None)
        facts = image_facts(data, media_type)
    assert named.data == data and named.media_type == media_type
    region = named.region
    assert region is not None and (region.x1, region.y1, region.x2, region.y2) == (5, 6, 25, 16)
    assert (region.width, region.height, region.frames) == (40, 30, 1)
    assert cut.media_type == "image/png" and cut.region == region
    png = Image.open(io.BytesIO(cut.data))
    assert png.format == "PNG" and png.size == (20, 10)
    rgb = png.convert("RGB").tobytes()
    pixels = [rgb[at:at + 3] for at in range(0, len(rgb), 3)]
    assert len(pixels) == 200
    assert all(max(abs(a - b) for a, b in zip(pixel, COLOUR, strict=True)) <= 2 for pixel in pixels)
    assert (facts.width, facts.height, facts.frames) == (40, 30, 1)


def test_a_tiff_whose_directory_count_runs_past_the_file_is_read_by_the_entries_it_holds() -> None:
    # a TIFF's first directory holds its pixels' own facts (TIFF 6.0 §2: width, strips); a count past the file's
    # end is the same damage in the image's own directory: Pillow reads the entries that are there, and warns
    out = io.BytesIO()
    Image.new("RGB", (40, 30), COLOUR).save(out, format="TIFF")
    data = bytearray(out.getvalue())
    assert data[:8] == b"II*\x00\x08\x00\x00\x00"
    data[8:10] = b"\xff\xff"
    with pytest.warns(UserWarning, match="Corrupt EXIF data"):
        Image.open(io.BytesIO(bytes(data)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cut = evaluate_image("crop", [(0, 0), (2, 2)], bytes(data), "image/tiff", None)
    assert cut.region is not None and (cut.region.width, cut.region.height) == (40, 30)
    assert Image.open(io.BytesIO(cut.data)).convert("RGB").tobytes() == bytes(COLOUR) * 4
