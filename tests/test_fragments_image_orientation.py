"""A region of an image with an EXIF orientation: of its stored pixels, its crop saying the same orientation.

PDI-GRAMMAR.md's reading: ``rect`` and ``crop`` (and ``xywh=``, an alias) name the stored pixels, whatever the EXIF
``Orientation`` (CIPA DC-008 tag 0x0112) says. A browser shows a JPEG, and a PNG with an ``eXIf`` chunk, turned as
it says; a crop of one is a PNG whose ``eXIf`` says the same orientation, so that it is shown turned as the region
is seen in the whole (``tests/server/test_server_image_orientation_browser.py`` measures both in Chromium). The
oracle is Pillow: ``Image.open(...).crop(...)`` for the stored pixels, ``ImageOps.exif_transpose`` for what is seen.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
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


# --- read from the header alone: an image larger than Pillow opens --------------------------------------------

#: Other tags of the 0th IFD (Make, Model, Software, ResolutionUnit, YCbCrPositioning), before or after it.
_TAGS = st.dictionaries(st.sampled_from([0x010F, 0x0110, 0x0131, 0x0128, 0x0213]), st.integers(1, 3), max_size=5)


@settings(max_examples=200)
@given(fmt=st.sampled_from(["JPEG", "PNG"]), orientation=st.one_of(st.none(), st.integers(0, 65535)), tags=_TAGS,
       big_endian=st.booleans())
def test_the_header_says_the_orientation_pillow_reads(fmt: str, orientation: int | None, tags: dict[int, object],
                                                      big_endian: bool) -> None:
    """``image_size`` reads the EXIF ``Orientation`` from the header alone as Pillow's ``getexif`` reads it (1 to 8;
    none, or a value out of range: 1), in either byte order, among other tags."""
    from pdi.fragments.image_size import image_size

    image = Image.new("RGB", (WIDTH, HEIGHT))
    exif = image.getexif()
    for tag, value in tags.items():
        exif[tag] = value if tag in (0x0128, 0x0213) else "x" * value
    if orientation is not None:
        exif[0x0112] = orientation
    out = io.BytesIO()
    image.save(out, format=fmt, exif=exif.tobytes())
    data = out.getvalue()
    if big_endian:  # Pillow writes little-endian: the same directory written big-endian, by hand
        data = _big_endian_exif(data, fmt)
    with Image.open(io.BytesIO(data)) as opened:
        read = opened.getexif().get(0x0112)
    expected = read if isinstance(read, int) and 1 <= read <= 8 else 1
    size = image_size(data)
    assert size is not None and size.orientation == expected, (read, size)


def _big_endian_exif(data: bytes, fmt: str) -> bytes:
    """``data`` with its EXIF block (little-endian, as Pillow writes it) replaced by the same entries of the 0th IFD
    (those whose values fit in four octets) written big-endian (TIFF 6.0 §2)."""
    import struct
    import zlib

    with Image.open(io.BytesIO(data)) as opened:
        entries = {t: v for t, v in opened.getexif().items() if isinstance(v, int)}
    ifd = struct.pack(">H", len(entries)) + b"".join(
        struct.pack(">HHIH2x", tag, 3, 1, value & 0xFFFF) for tag, value in sorted(entries.items())) + b"\0\0\0\0"
    tiff = b"MM\0\x2a" + struct.pack(">I", 8) + ifd
    if fmt == "JPEG":
        start = data.index(b"\xff\xe1")
        length = int.from_bytes(data[start + 2:start + 4], "big")
        segment = b"\xff\xe1" + struct.pack(">H", 2 + 6 + len(tiff)) + b"Exif\0\0" + tiff
        return data[:start] + segment + data[start + 2 + length:]
    start = data.index(b"eXIf") - 4
    length = int.from_bytes(data[start:start + 4], "big")
    chunk = struct.pack(">I", len(tiff)) + b"eXIf" + tiff
    chunk += struct.pack(">I", zlib.crc32(chunk[4:]) & 0xFFFFFFFF)
    return data[:start] + chunk + data[start + 12 + length:]


def test_a_crop_of_a_jpeg_larger_than_pillow_opens_says_its_orientation() -> None:
    """A 20,000×9,000 JPEG (180 million pixels: Pillow opens none past 179 million) of orientation 6, made by
    libvips as one grey level, with a dark square written at a known place: its crop, cut streaming, holds the
    stored pixels there and says orientation 6, as a crop Pillow cuts of a small one does (above)."""
    import struct

    import pyvips

    stored = pyvips.Image.black(20_000, 9_000) + 200
    stored = stored.draw_rect(30, 1_000, 2_000, 64, 64, fill=True)  # the dark square, of the stored pixels
    plain = stored.cast("uchar").jpegsave_buffer(Q=90, strip=True)
    exif = Image.Exif()
    exif[0x0112] = 6
    payload = exif.tobytes()  # b"Exif\0\0" and the TIFF block
    data = plain[:2] + b"\xff\xe1" + struct.pack(">H", 2 + len(payload)) + payload + plain[2:]
    cut = evaluate_image("crop", [(960, 1_960), (1_104, 2_104)], data, "image/jpeg", None)
    with Image.open(io.BytesIO(cut.data)) as image:
        assert image.format == "PNG" and image.size == (144, 144)
        assert image.getexif().get(0x0112) == 6
        grey = image.convert("L")
        assert grey.getpixel((72, 72)) < 60 and grey.getpixel((10, 10)) > 180  # the square, stored where it was


@pytest.mark.parametrize("orientation", range(1, 9))
def test_a_preview_is_turned_as_pillow_turns_the_image(orientation: int) -> None:
    """A preview (libvips, in its child) given the image's orientation is the image as ``ImageOps.exif_transpose``
    turns it, pixel for pixel (an RGBA PNG: its preview a lossless PNG), and says no orientation itself."""
    from pdi.fragments.image_streamed import preview

    image = _numbered(1).convert("RGBA")
    out = io.BytesIO()
    image.save(out, format="PNG")  # its orientation given to the preview as the parent reads it from the header
    body, media_type = preview(out.getvalue(), 64, orientation=orientation)
    assert media_type == "image/png"
    image.getexif()[0x0112] = orientation
    with Image.open(io.BytesIO(body)) as shown:
        assert shown.getexif().get(0x0112) is None
        expected = ImageOps.exif_transpose(image)
        assert shown.size == expected.size and shown.convert("RGBA").tobytes() == expected.tobytes()


@pytest.mark.parametrize(("fmt", "orientation"), [("JPEG", 6), ("JPEG", 1), ("PNG", 8), ("PNG", 3), ("WEBP", 6)])
def test_get_info_and_api_resolve_say_the_orientation_and_the_size_shown(tmp_path: Path, fmt: str,
                                                                         orientation: int) -> None:
    """``pdi get --info`` (its ``image`` line) and ``/api/resolve`` (its ``image`` member) say an image's stored
    size, its EXIF orientation as Pillow reads it, and the size a browser shows it at (Pillow's ``exif_transpose``
    of a JPEG or PNG; a WebP shown as stored, its orientation not one a browser applies: 1), whole or with a
    fragment."""
    from click.testing import CliRunner
    from starlette.testclient import TestClient

    from pdi.archive import Archive
    from pdi.cli import cli
    from pdi.server import create_app

    data = _file(fmt, orientation)
    with Image.open(io.BytesIO(data)) as opened:
        applies = fmt in ("JPEG", "PNG")
        said = opened.getexif().get(0x0112, 1) if applies else 1
        shown = ImageOps.exif_transpose(opened).size if applies else opened.size
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series("photos.example.us")
        name = str(archive.add("photos.example.us", data, format={"JPEG": "image+jpeg"}.get(fmt, fmt.lower())))
        client = TestClient(create_app(location, archive=archive))
        for asked in (name, name + "#rect=(1,1),(3,3)"):
            got = client.get("/api/resolve", params={"pdi": asked}).json()["image"]
            assert got == {"width": WIDTH, "height": HEIGHT, "frames": 1, "orientation": said,
                           "shown": {"width": shown[0], "height": shown[1]}}, (asked, got)
    for asked in (name, name + "#rect=(1,1),(3,3)"):
        r = CliRunner().invoke(cli, ["get", asked, "--info", "--archive", location])
        assert r.exit_code == 0, r.output
        line = [line for line in r.stdout.splitlines() if line.startswith("image\t")]
        turned = f", shown turned {shown[0]}x{shown[1]}" if said != 1 else ""
        assert line == [f"image\t{WIDTH}x{HEIGHT} pixels, 1 frame, EXIF orientation {said}{turned}"], r.stdout


def _exif_after_idat(orientation: int) -> bytes:
    """The numbered PNG with an ``eXIf`` chunk saying ``orientation`` after its image data (before ``IEND``), where
    PNG 3rd edition §5.6 lets it stand, and Chromium does not read it (tests/server/
    test_server_image_orientation_browser.py measures that)."""
    import struct
    import zlib

    out = io.BytesIO()
    _numbered(1).save(out, format="PNG")
    png = out.getvalue()
    exif = Image.Exif()
    exif[0x0112] = orientation
    payload = exif.tobytes()[6:]
    chunk = struct.pack(">I", len(payload)) + b"eXIf" + payload
    chunk += struct.pack(">I", zlib.crc32(chunk[4:]) & 0xFFFFFFFF)
    end = png.index(b"IEND") - 4
    return png[:end] + chunk + png[end:]


def test_a_png_whose_exif_follows_its_image_data_is_cut_as_shown_unturned() -> None:
    """Pillow finds such an ``eXIf`` (it reads the whole file); a browser shows the PNG as stored: its crop says no
    orientation, so that it is shown as the region was seen."""
    data = _exif_after_idat(6)
    with Image.open(io.BytesIO(data)) as opened:
        assert opened.getexif().get(0x0112) == 6  # what Pillow reads
    cut = evaluate_image("crop", [(1, 1), (4, 3)], data, "image/png", None)
    with Image.open(io.BytesIO(cut.data)) as image:
        assert image.getexif().get(0x0112) is None and image.size == (3, 2)
