"""``rect`` on images larger than Pillow opens (a map scan of 250 million pixels): named from the header alone.

Pillow refuses to open an image whose header claims more than twice
``Image.MAX_IMAGE_PIXELS`` (178,956,970 pixels); ``rect`` returns the stored
image unchanged and needs only its size and frames, read by
``pdi.fragments.image_size``. ``crop`` decodes: libvips, streaming (tests/test_fragments_image_streamed.py). The
20000×12500 PNG is real (every row in its IDAT, one grey level); the others
are small files Pillow wrote whose size fields are rewritten to claim more
than Pillow opens (which Pillow is asked to confirm).
"""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from PIL import Image

from pdi.archive import Archive, Generic
from pdi.errors import LimitError, NotFoundError, UnsupportedError
from pdi.fragments import evaluate
from peak_memory import run_with_peak
from support.big_image import chunk, grey_png
from support.tiff import tiff_chain

S = "maps.library.example.us"
WIDTH, HEIGHT = 20_000, 12_500  # 250 million pixels


@pytest.fixture(scope="module")
def map_scan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "map.png"
    path.write_bytes(grey_png(WIDTH, HEIGHT))
    return path


def test_the_big_png_is_a_real_png_pillow_refuses() -> None:
    small = grey_png(300, 200, level=77)
    with Image.open(io.BytesIO(small)) as image:  # the same writer, small: Pillow decodes every pixel
        assert image.size == (300, 200) and image.mode == "L" and image.getextrema() == (77, 77)
    assert 2 * (Image.MAX_IMAGE_PIXELS or 0) < WIDTH * HEIGHT


def test_rect_of_a_250_million_pixel_png_returns_it_whole_with_its_region(map_scan: Path) -> None:
    data = map_scan.read_bytes()
    assert len(data) < 1_000_000
    with pytest.raises(Image.DecompressionBombError):
        Image.open(io.BytesIO(data))
    result = evaluate("rect", ((1000, 2000), (3000, 2500)), data, media_type="image/png", charset=None)
    assert result.data is data and result.media_type == "image/png" and not result.clamped
    region = result.region
    assert region is not None and vars(region) == {
        "x1": 1000, "y1": 2000, "x2": 3000, "y2": 2500, "frame": 0, "width": WIDTH, "height": HEIGHT, "frames": 1}
    past = evaluate("rect", ((19_990, 12_000), (20_500, 13_000)), data, media_type="image/png", charset=None)
    assert past.clamped and not past.past_end and past.region is not None
    assert (past.region.x2, past.region.y2) == (WIDTH, HEIGHT)
    beyond = evaluate("rect", ((20_000, 0), (20_001, 1)), data, media_type="image/png", charset=None)
    assert beyond.past_end
    with pytest.raises(NotFoundError, match="frame 1 is not in this image: it has 1 frame"):
        evaluate("rect", ((0, 0), (1, 1), 1), data, media_type="image/png", charset=None)


def test_crop_of_it_is_cut_by_streaming(map_scan: Path) -> None:
    # past Pillow's bound, libvips cuts it in a bounded child (tests/test_fragments_image_streamed.py: the pixels,
    # the memory)
    result = evaluate("crop", ((0, 0), (10, 10)), map_scan.read_bytes(), media_type="image/png", charset=None)
    with Image.open(io.BytesIO(result.data)) as cut:
        assert (result.media_type, cut.size, cut.mode, cut.getextrema()) == ("image/png", (10, 10), "L", (0x80, 0x80))


def _pillow_wrote(form: str, mode: str = "RGB", frames: int = 1, **options: object) -> bytearray:
    images = [Image.new(mode, (8, 6), k * 40) for k in range(frames)]
    out = io.BytesIO()
    if frames > 1:
        options.update(save_all=True, append_images=images[1:])
    images[0].save(out, format=form, **options)
    return bytearray(out.getvalue())


def _claiming(form: str) -> tuple[bytes, int, int, int]:
    """A file of ``form`` whose header claims more than Pillow opens: its octets, width, height and frames."""
    if form == "APNG":  # two frames; the IHDR rewritten, its CRC again
        data = _pillow_wrote("PNG", frames=2)
        ihdr = struct.pack(">IIBBBBB", WIDTH, HEIGHT, 8, 2, 0, 0, 0)
        data[8:33] = chunk(b"IHDR", ihdr)
        return bytes(data), WIDTH, HEIGHT, 2
    if form == "JPEG":  # SOF0: length, precision, then lines and samples per line
        data = _pillow_wrote("JPEG", progressive=True)
        at = data.index(b"\xff\xc2")
        data[at + 5:at + 9] = struct.pack(">HH", HEIGHT, WIDTH)
        return bytes(data), WIDTH, HEIGHT, 1
    if form == "GIF":  # the logical screen: Pillow's canvas
        data = _pillow_wrote("GIF", frames=3)
        data[6:10] = struct.pack("<HH", WIDTH, HEIGHT)
        return bytes(data), WIDTH, HEIGHT, 3
    if form == "TIFF":  # two one-pixel pages, the first's ImageWidth and ImageLength (SHORT values) rewritten
        data = bytearray(tiff_chain(2))
        data[19:21], data[31:33] = struct.pack("<H", WIDTH), struct.pack("<H", HEIGHT)
        return bytes(data), WIDTH, HEIGHT, 2
    if form == "BigTIFF":
        return _big_tiff(WIDTH, HEIGHT), WIDTH, HEIGHT, 1
    if form == "WEBP":  # an animation's VP8X canvas (24-bit width and height less one): libwebp's limit is 16383
        data = _pillow_wrote("WEBP", frames=2)
        assert data[12:16] == b"VP8X"
        data[24:30] = (16_000 - 1).to_bytes(3, "little") + (12_000 - 1).to_bytes(3, "little")
        return bytes(data), 16_000, 12_000, 2
    assert form == "BMP"
    data = _pillow_wrote("BMP")
    data[18:26] = struct.pack("<ii", WIDTH, -HEIGHT)  # top-down
    return bytes(data), WIDTH, HEIGHT, 1


def _big_tiff(width: int, height: int) -> bytes:
    """A BigTIFF of one 8-bit grey page claiming ``width`` × ``height`` (its first entries LONG8 values)."""
    tags = [(256, 16, width), (257, 16, height), (258, 3, 8), (262, 3, 1), (273, 16, 8), (279, 16, 1)]
    out = bytearray(b"II+\0" + struct.pack("<HHQ", 8, 0, 17) + b"\x7f" + struct.pack("<Q", len(tags)))
    for tag, kind, value in tags:
        out += struct.pack("<HHQQ", tag, kind, 1, value)
    return bytes(out + struct.pack("<Q", 0))


CLAIMS = ("APNG", "JPEG", "GIF", "TIFF", "BigTIFF", "WEBP", "BMP")


@pytest.mark.parametrize("form", CLAIMS)
def test_rect_of_each_format_claiming_more_than_pillow_opens(form: str) -> None:
    data, width, height, frames = _claiming(form)
    with pytest.raises(Image.DecompressionBombError):  # Pillow read the header, and refused it
        Image.open(io.BytesIO(data))
    last = frames - 1
    result = evaluate("rect", ((10, 20), (30, 40), last), data, media_type="image/x", charset=None)
    assert result.data is data and result.region is not None
    if form == "TIFF":  # its second page is still 1×1: clamped to it
        assert (result.region.width, result.region.height, result.clamped) == (1, 1, True)
    else:
        assert (result.region.width, result.region.height, result.region.frames) == (width, height, frames)
        assert (result.region.x1, result.region.y1, result.region.x2, result.region.y2) == (10, 20, 30, 40)
    first = evaluate("rect", ((0, 0), (1, 1)), data, media_type="image/x", charset=None).region
    assert first is not None and (first.width, first.height, first.frames) == (width, height, frames)
    with pytest.raises(NotFoundError, match=f"frame {frames} is not in this image"):
        evaluate("rect", ((0, 0), (1, 1), frames), data, media_type="image/x", charset=None)
    streamed = {"APNG": "PNG", "JPEG": "JPEG", "TIFF": "TIFF", "BigTIFF": "TIFF"}
    if form in streamed:  # read by streaming: the rows the header claims are not there
        with pytest.raises(UnsupportedError, match=f"crop on image/x: cannot read this {streamed[form]} image: "):
            evaluate("crop", ((0, 0), (1, 1)), data, media_type="image/x", charset=None)
    else:  # Pillow alone reads a GIF, WebP or BMP, and opens none so large
        with pytest.raises(LimitError, match="rect= names the same region"):
            evaluate("crop", ((0, 0), (1, 1)), data, media_type="image/x", charset=None)


def test_a_damaged_header_past_pillows_bound_is_unsupported_naming_the_offset() -> None:
    data = bytearray(_claiming("JPEG")[0])
    data = data[:data.index(b"\xff\xda")]  # no scan: the walk runs off the end
    with pytest.raises(Image.DecompressionBombError):
        Image.open(io.BytesIO(bytes(data)))
    with pytest.raises(UnsupportedError, match=r"rect on image/jpeg: cannot read this image's header: .*offset \d+"):
        evaluate("rect", ((0, 0), (1, 1)), bytes(data), media_type="image/jpeg", charset=None)


def test_a_format_the_header_reader_does_not_read_is_still_the_limit_it_was() -> None:
    header = b"P5\n%d %d\n255\n" % (WIDTH, HEIGHT)  # a PGM (Netpbm): Pillow reads it; the reader does not
    with pytest.raises(LimitError, match="no fragment of it is evaluated"):
        evaluate("rect", ((0, 0), (1, 1)), header + b"\0" * 16, media_type="image/x-portable-graymap", charset=None)


def test_rect_through_the_archive_returns_the_deposited_octets(location: str, map_scan: Path) -> None:
    data = map_scan.read_bytes()
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, data, format="png"))  # the deposit's format check reads the signature only
        resolved = archive.resolve(f"{name}#rect=(100,200),(300,400)")
        assert bytes(resolved.data) == data and resolved.media_type == "image/png"
        assert resolved.fragment is not None and resolved.fragment.region is not None
        assert vars(resolved.fragment.region) == {
            "x1": 100, "y1": 200, "x2": 300, "y2": 400, "frame": 0, "width": WIDTH, "height": HEIGHT, "frames": 1}
        cut = archive.resolve(f"{name}#crop=(100,200),(300,400)")
        assert not isinstance(cut, Generic) and cut.media_type == "image/png"
        with Image.open(io.BytesIO(cut.data)) as image:
            assert (image.size, image.getextrema()) == ((200, 200), (0x80, 0x80))


_RESOLVE = (
    "import sys\n"
    "from pdi.archive import Archive\n"
    "with Archive.open(sys.argv[1]) as archive:\n"
    "    region = archive.resolve(sys.argv[2]).fragment.region\n"
    "    print(region.width, region.height)\n"
)


def test_rect_of_the_250_million_pixel_png_takes_no_memory_to_speak_of(tmp_path: Path, map_scan: Path) -> None:
    """Peak resident memory of a child process resolving the rect, against the same child on a 40×30 PNG: one
    decoded frame of the map would be 250 MB."""
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(S)
        big = str(archive.add(S, map_scan.read_bytes(), format="png"))
        small = str(archive.add(S, grey_png(40, 30), format="png"))

    def peak_kib(name: str, expected: str) -> int:
        status, peak, out = run_with_peak([sys.executable, "-c", _RESOLVE, location, name + "#rect=(1,2),(3,4)"],
                                          stdout=subprocess.PIPE)
        assert status == 0 and out.decode().strip() == expected
        return peak

    baseline = peak_kib(small, "40 30")
    grown = peak_kib(big, f"{WIDTH} {HEIGHT}") - baseline
    assert grown < 32 * 1024, f"{grown // 1024} MiB more than a rect of a small image"


def test_zlib_rows_compress_as_said(map_scan: Path) -> None:
    """The 250 million pixels are all in the file: its IDAT inflates to every row (a few megabytes at a time)."""
    data = map_scan.read_bytes()
    (length,) = struct.unpack(">I", data[33:37])
    assert data[37:41] == b"IDAT"
    inflater, pending, total = zlib.decompressobj(), data[41:41 + length], 0
    while pending and not inflater.eof:
        total += len(inflater.decompress(pending, 1 << 22))
        pending = inflater.unconsumed_tail
    assert inflater.eof and total == HEIGHT * (WIDTH + 1)
