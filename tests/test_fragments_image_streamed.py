"""``crop`` of images larger than a Pillow crop decodes, and their previews: libvips, streaming, in a bounded child.

The oracles: for images small enough for Pillow to open, Pillow's own crop of the same region
(``pdi.fragments.image``'s path for ordinary images), pixel for pixel; for the 250-million-pixel map scan, the
grey level each pixel was written with (``support.big_image.pattern_value``: worked out, not decoded by any
library). The child's peak resident set is read by ``pdi._bounded`` from the kernel (``VmHWM``).
"""

from __future__ import annotations

import io
import os
import struct
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from pdi.errors import LimitError, UnsupportedError
from pdi.fragments import evaluate
from pdi.fragments import image_streamed as streamed
from pdi.fragments.image_streamed import crop_streamed, preview, run_streamed
from support.big_image import chunk, pattern_png, pattern_value

WIDTH, HEIGHT = 20_000, 12_500  # 250 million pixels, more than Pillow opens
#: One decoded frame of the map is 250 MB: a child that held it would pass this.
MOST_KIB = 160 * 1024


@pytest.fixture(scope="module")
def map_scan(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("map") / "map.png"
    path.write_bytes(pattern_png(WIDTH, HEIGHT))
    return path.read_bytes()


def _pixels(png: bytes) -> tuple[str, np.ndarray]:
    with Image.open(io.BytesIO(png)) as image:
        assert image.format == "PNG"
        return image.mode, np.asarray(image)


# --- small images: the same pixels as Pillow's crop ------------------------------------------------------------

_MODES = {"PNG": ("L", "LA", "RGB", "RGBA", "P", "1", "I;16"), "JPEG": ("L", "RGB"),
          "TIFF": ("L", "RGB", "RGBA", "1", "I;16")}
#: What a crop past Pillow's limit holds where Pillow's own holds a palette or one bit: the same colours.
_EXPANDED = {"P": "RGB", "1": "L"}


def _image(fmt: str, mode: str, width: int, height: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    if mode == "I;16":
        image = Image.fromarray(rng.integers(0, 65536, (height, width), dtype=np.uint16))
    elif mode in ("1", "P"):
        image = Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8)).convert(mode)
    else:
        bands = len(Image.new(mode, (1, 1)).getbands())
        samples = rng.integers(0, 256, (height, width, bands), dtype=np.uint8)
        image = Image.fromarray(samples[..., 0] if bands == 1 else samples, mode)
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


@st.composite
def _cases(draw: st.DrawFn) -> tuple[bytes, str, tuple[int, int, int, int]]:
    fmt = draw(st.sampled_from(sorted(_MODES)))
    mode = draw(st.sampled_from(_MODES[fmt]))
    width, height = draw(st.integers(1, 90)), draw(st.integers(1, 90))
    x1, y1 = draw(st.integers(0, width - 1)), draw(st.integers(0, height - 1))
    x2, y2 = draw(st.integers(x1 + 1, width)), draw(st.integers(y1 + 1, height))
    return _image(fmt, mode, width, height, draw(st.integers(0, 2**16))), fmt, (x1, y1, x2, y2)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_a_streamed_crop_is_pillows_crop_pixel_for_pixel(case: tuple[bytes, str, tuple[int, int, int, int]]) -> None:
    data, fmt, (x1, y1, x2, y2) = case
    pillows = evaluate("crop", ((x1, y1), (x2, y2)), data, media_type=f"image/{fmt.lower()}", charset=None).data
    pillow_mode, pillow_pixels = _pixels(pillows)
    mode, pixels = _pixels(crop_streamed(data, (x1, y1, x2, y2)))
    assert mode == _EXPANDED.get(pillow_mode, pillow_mode)
    if pillow_mode in _EXPANDED:
        with Image.open(io.BytesIO(pillows)) as image:
            pillow_pixels = np.asarray(image.convert(mode))
    assert pixels.shape == pillow_pixels.shape and (pixels == pillow_pixels).all()


def _rgb16_png(samples: np.ndarray, alpha: bool) -> bytes:
    """A 16-bit RGB(A) PNG written by its specification (PNG §11.2.2: colour type 2 or 6, bit depth 16): Pillow
    writes none."""
    height, width, _ = samples.shape
    rows = b"".join(b"\0" + samples[y].astype(">u2").tobytes() for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 16, 6 if alpha else 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


@pytest.mark.parametrize("alpha", [False, True])
def test_16_bit_colour_is_cut_to_the_octets_pillow_reads(alpha: bool) -> None:
    samples = np.random.default_rng(7).integers(0, 65536, (23, 31, 4 if alpha else 3), dtype=np.uint16)
    data = _rgb16_png(samples, alpha)
    mode, pixels = _pixels(crop_streamed(data, (3, 2, 29, 20)))
    pillow_mode, pillow_pixels = _pixels(evaluate("crop", ((3, 2), (29, 20)), data, media_type="image/png",
                                                  charset=None).data)
    assert mode == pillow_mode == ("RGBA" if alpha else "RGB")
    assert (pixels == pillow_pixels).all()
    assert (pixels == (samples[2:20, 3:29] >> 8)).all()  # the high octets (PNG §7.1: samples are big-endian)


# --- the map scan: 250 million pixels --------------------------------------------------------------------------

@pytest.mark.parametrize(("x1", "y1", "x2", "y2"), [
    (0, 0, 37, 23),                      # the first rows
    (4990, 4990, 5013, 5007),            # across the corner of four squares
    (19_000, 12_000, 20_000, 12_500),    # the last rows and columns
    (123, 7_777, 2_345, 9_999),          # a region of some size in the middle
])
def test_a_crop_of_the_map_is_the_pixels_it_was_written_with(map_scan: bytes, x1: int, y1: int, x2: int, y2: int
                                                               ) -> None:
    with pytest.raises(Image.DecompressionBombError):
        Image.open(io.BytesIO(map_scan))
    result = evaluate("crop", ((x1, y1), (x2, y2)), map_scan, media_type="image/png", charset=None)
    assert result.media_type == "image/png" and not result.clamped and result.region is not None
    assert (result.region.width, result.region.height) == (WIDTH, HEIGHT)
    mode, pixels = _pixels(result.data)
    ys, xs = np.mgrid[y1:y2, x1:x2]
    assert mode == "L" and pixels.shape == (y2 - y1, x2 - x1) and (pixels == pattern_value(xs, ys)).all()


def test_a_crop_past_the_maps_corner_is_clamped_and_one_past_it_holds_nothing(map_scan: bytes) -> None:
    result = evaluate("crop", ((19_990, 12_495), (25_000, 13_000)), map_scan, media_type="image/png", charset=None)
    mode, pixels = _pixels(result.data)
    ys, xs = np.mgrid[12_495:HEIGHT, 19_990:WIDTH]
    assert mode == "L" and result.clamped and (pixels == pattern_value(xs, ys)).all()
    with pytest.raises(UnsupportedError, match="holds no pixels of this 20000×12500 image"):
        evaluate("crop", ((WIDTH, 0), (WIDTH + 5, 5)), map_scan, media_type="image/png", charset=None)


def test_a_crop_of_more_pixels_than_a_crop_answers_is_a_limit_saying_so(map_scan: bytes) -> None:
    with pytest.raises(LimitError) as refused:
        evaluate("crop", ((0, 0), (WIDTH, HEIGHT)), map_scan, media_type="image/png", charset=None)
    assert str(refused.value).startswith(
        "crop of 250,000,000 pixels of a 20000×12500 image: more than the 40,000,000 a crop answers")


def test_a_crop_and_a_preview_of_the_map_take_a_child_a_few_rows_of_memory(map_scan: bytes) -> None:
    """The child's own peak (VmHWM), read by pdi._bounded: a region at the map's foot is read through every row
    above it; one decoded frame would be 250 MB."""
    cut = run_streamed("crop", map_scan, ["PNG", "19000", "12000", "1000", "500"])
    shrunk = run_streamed("preview", map_scan, ["PNG", "4096"])
    assert 0 < cut.peak_kib < MOST_KIB, f"crop: {cut.peak_kib // 1024} MiB"
    assert 0 < shrunk.peak_kib < MOST_KIB, f"preview: {shrunk.peak_kib // 1024} MiB"


def test_the_preview_of_the_map_is_its_checkerboard_4096_pixels_wide(map_scan: bytes) -> None:
    body, media_type = preview(map_scan)
    assert media_type == "image/jpeg"
    with Image.open(io.BytesIO(body)) as image:
        assert image.format == "JPEG" and image.size == (4096, 2560) and image.mode == "L"
        shrunk = np.asarray(image).astype(float)
    scale = 4096 / WIDTH
    for column, row in ((0, 0), (1, 0), (0, 1), (3, 1)):  # the middle of squares: 40 or 200, plus the ramp's 7.5
        x, y = int((column + 0.5) * 5000 * scale), int((row + 0.5) * 5000 * scale)
        expected = (200 if (column + row) % 2 else 40) + 7.5
        assert abs(shrunk[y - 20:y + 20, x - 20:x + 20].mean() - expected) < 3


def test_a_preview_never_enlarges_and_keeps_alpha_as_png() -> None:
    data = _image("PNG", "RGBA", 40, 30, 1)
    body, media_type = preview(data)
    with Image.open(io.BytesIO(body)) as image:
        assert (media_type, image.format, image.size, image.mode) == ("image/png", "PNG", (40, 30), "RGBA")
        assert (np.asarray(image) == np.asarray(Image.open(io.BytesIO(data)))).all()


def test_past_its_deadline_the_child_is_killed_and_the_limit_named(map_scan: bytes,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A deadline far below what any crop takes, so that it is passed on any machine however idle: the child's
    start alone (its interpreter and imports) takes several times 10 ms. (Measured 2026-11-29: a 10×10 crop of
    the map's first rows took its child 0.24 s of CPU time, of its last rows 0.30 s, most of it starting, loading
    libvips and reading the file: libvips inflates 12,000 of the map's rows in 0.06 s, so the deadline of 0.3 s
    this test had was met once, and the crop answered.) The deadline's own path all the same: the parent's timer
    kills the child, and the limit is named."""
    monkeypatch.setattr(streamed, "LIMITS", streamed.StreamedLimits(seconds=0.01))
    began = time.monotonic()
    with pytest.raises(LimitError, match=r"libvips took longer than 0.01 s to cut .*LIMITS\.seconds"):
        crop_streamed(map_scan, (19_000, 12_000, 19_010, 12_010))
    assert time.monotonic() - began < 5


# --- bombs ----------------------------------------------------------------------------------------------------

def _grey_header(width: int, height: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))


def test_a_tiny_file_claiming_100000_by_100000_is_refused_before_decoding() -> None:
    data = _grey_header(100_000, 100_000) + chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + chunk(b"IEND", b"")
    assert len(data) < 100
    began = time.monotonic()
    with pytest.raises(LimitError, match=r"its header claims 10,000,000,000 pixels, more than the 1,000,000,000"
                                         r" pdi decodes \(pdi.fragments.image_streamed.MAX_STREAMED_PIXELS\)"):
        evaluate("crop", ((0, 0), (10, 10)), data, media_type="image/png", charset=None)
    with pytest.raises(LimitError, match="10,000,000,000 pixels, more than the 1,000,000,000 pdi decodes"):
        preview(data)  # the child reads the header, and refuses as the parent does
    assert time.monotonic() - began < 10


def test_an_idat_that_inflates_to_a_gigabyte_is_bounded(tmp_path: Path) -> None:
    """A 1 MB PNG of 30,000×30,000 pixels (900 million, under the streaming bound) whose IDAT inflates to 900 MB
    of zeros, and a 1000×1000 one whose IDAT inflates to a gigabyte, far past its rows: each crop answers or is
    refused, within the deadline, in a child whose memory stays a few rows'."""
    packer, zeros = zlib.compressobj(9), bytes(1 << 20)
    rows = 30_000 * (30_000 + 1)  # each row its filter octet, then its samples
    idat = b"".join(packer.compress(zeros) for _ in range(-(-rows // len(zeros)))) + packer.flush()
    tall = _grey_header(30_000, 30_000) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    short = _grey_header(1000, 1000) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    assert len(tall) < 2 << 20
    for data, box in ((tall, (29_990, 29_990, 30_000, 30_000)), (short, (990, 990, 1000, 1000))):
        began = time.monotonic()
        try:
            outcome = run_streamed("crop", data, ["PNG", *(str(v) for v in (box[0], box[1], 10, 10))])
        except (LimitError, UnsupportedError) as refused:
            assert "libvips" in str(refused) or "cannot read this PNG" in str(refused)
        else:
            assert outcome.peak_kib < MOST_KIB and not _pixels(outcome.data)[1].any()
        assert time.monotonic() - began < streamed.LIMITS.seconds + 5


@pytest.mark.parametrize(("raised", "missing"), [
    ("OSError(\"cannot load library 'libvips.so.42': libvips.so.42: cannot open shared object file\")", "libvips42"),
    ("ModuleNotFoundError(\"No module named 'pyvips'\", name='pyvips')", "pyvips"),
])
def test_a_machine_without_libvips_is_told_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           raised: str, missing: str) -> None:
    """Where libvips (Debian's ``libvips42``) or pyvips is not installed, the crop or preview is refused naming what
    is missing and where to get it, as ffmpeg's or onsgmls' absence is, not the child's traceback's last line
    (found in review, 2026-11-29: "the child reading it stopped (exit status 1): OSError: cannot load ...")."""
    fake = tmp_path / "fake" / "pyvips"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(f"raise {raised}\n")  # what pyvips raises in ABI mode without libvips
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(fake.parent), *os.environ.get("PYTHONPATH", "").split(
        os.pathsep)]))
    small = io.BytesIO()
    Image.new("RGB", (8, 8)).save(small, format="PNG")
    with pytest.raises(UnsupportedError) as refused:
        preview(small.getvalue())
    said = str(refused.value)
    assert "not installed" in said and missing in said and "exit status" not in said, said
