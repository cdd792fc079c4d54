"""Image fragments ``rect`` and ``crop`` (draft lines 676–723, PDI-GRAMMAR.md §3) on images made here.

Every test image is painted so that each pixel says where it is (red = x,
green = y), and the expected pixels of a cut are read one by one from the
source image: the reference is ``getpixel``, not the code under test.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from pdi import fragments
from pdi.errors import LimitError, NotFoundError, ParseError, UnsupportedError
from pdi.fragments import Region
from pdi.fragments.image import evaluate_image
from pdi.identifier import PDI


def painted(width: int, height: int, mode: str = "RGB", blue: int = 7) -> Image.Image:
    image = Image.new("RGB", (width, height))
    image.putdata([(x % 256, y % 256, blue) for y in range(height) for x in range(width)])
    return image if mode == "RGB" else image.convert(mode)


def encoded(image: Image.Image, fmt: str = "PNG", **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def opened(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def test_draft_line_707_example_selects_x_5_to_24_and_y_10_to_29() -> None:
    # "#(5,10),(25,30)" is the maximal rectangle with corners (5,10), (24,10), (24,29), (5,29)
    source = painted(40, 40)
    data = encoded(source)
    fragment = PDI.parse("pdi://images.satellite.nasa.gov.us/1997/09/30/1234.gif#(5,10),(25,30)").fragment
    assert fragment is not None and fragment.effective_scheme("gif") == "rect"
    crop = evaluate_image("crop", fragment.positions, data, "image/png", None)
    cut = opened(crop.data)
    assert crop.media_type == "image/png" and cut.format == "PNG"
    assert cut.size == (20, 20)
    assert cut.getpixel((0, 0)) == (5, 10, 7)
    assert cut.getpixel((19, 19)) == (24, 29, 7)
    assert crop.region == Region(5, 10, 25, 30, frame=0, width=40, height=40, frames=1)
    assert not crop.clamped


def test_rect_returns_the_whole_image_and_the_region() -> None:
    data = encoded(painted(40, 30), "GIF")
    result = fragments.evaluate("rect", ((5, 10), (25, 30)), data, media_type="image/gif")
    assert result.data == data  # unchanged: a viewer highlights the region
    assert result.media_type == "image/gif"
    assert result.region == Region(5, 10, 25, 30, 0, 40, 30, 1)
    assert result.ranges == ()


def test_frames_are_zero_based_and_a_missing_frame_is_not_found() -> None:
    # draft line 719: "#(5,10),(25,30),2 refers to the third frame"
    colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
    frames = [Image.new("RGB", (30, 30), colour) for colour in colours]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], duration=100, disposal=1)
    data = out.getvalue()
    for frame, colour in enumerate(colours):
        cut = opened(evaluate_image("crop", ((5, 10), (25, 30), frame), data, "image/gif", None).data)
        assert cut.size == (20, 20)
        rgb = cut.convert("RGB")
        assert {rgb.getpixel((x, y)) for x in range(20) for y in range(20)} == {colour}
    result = evaluate_image("rect", ((5, 10), (25, 30), 2), data, "image/gif", None)
    assert result.region is not None and (result.region.frame, result.region.frames) == (2, 3)
    with pytest.raises(NotFoundError, match=r"frame 3 is not in this image: it has 3 frames \(0 to 2\)"):
        evaluate_image("crop", ((5, 10), (25, 30), 3), data, "image/gif", None)


def test_corners_past_the_edge_are_the_edge_and_say_so() -> None:
    data = encoded(painted(40, 40))
    result = evaluate_image("crop", ((30, 35), (100, 100)), data, "image/png", None)
    assert result.clamped
    assert result.region == Region(30, 35, 40, 40, 0, 40, 40, 1)
    cut = opened(result.data)
    assert cut.size == (10, 5) and cut.getpixel((9, 4)) == (39, 39, 7)
    whole = evaluate_image("rect", ((50, 50), (60, 60)), data, "image/png", None)
    assert whole.clamped and whole.region == Region(40, 40, 40, 40, 0, 40, 40, 1)
    assert whole.past_end and not result.past_end


def test_a_rect_wholly_past_an_edge_says_so() -> None:
    data = encoded(painted(40, 30))
    for corners, past in [
        (((40, 0), (41, 10)), True),  # starts at the right edge and reaches past it
        (((0, 30), (10, 31)), True),  # the same at the bottom
        (((40, 0), (40, 10)), False),  # zero width, exactly at the right edge: a place, not past it
        (((39, 29), (50, 50)), False),  # holds pixel (39, 29)
        (((0, 0), (40, 30)), False),
    ]:
        assert evaluate_image("rect", corners, data, "image/png", None).past_end == past, corners


def test_an_empty_crop_has_no_image_but_an_empty_rect_is_a_place() -> None:
    data = encoded(painted(10, 10))
    assert evaluate_image("rect", ((3, 3), (3, 8)), data, "image/png", None).region == Region(3, 3, 3, 8, 0, 10, 10, 1)
    with pytest.raises(UnsupportedError, match="holds no pixels"):
        evaluate_image("crop", ((3, 3), (3, 8)), data, "image/png", None)


def test_a_jpeg_is_cut_without_loss_and_cmyk_becomes_rgb() -> None:
    source = painted(32, 32, "CMYK")
    data = encoded(source, "JPEG", quality=90)
    decoded = opened(data)
    cut = opened(evaluate_image("crop", ((8, 8), (24, 24)), data, "image/jpeg", None).data)
    assert cut.mode == "RGB" and cut.size == (16, 16)
    expected = decoded.convert("RGB")
    assert all(cut.getpixel((x, y)) == expected.getpixel((x + 8, y + 8)) for x in range(16) for y in range(16))


def test_sixteen_bit_grey_keeps_its_samples_and_32_bit_is_refused() -> None:
    deep = Image.new("I;16B", (10, 10))
    deep.putpixel((2, 2), 40000)
    cut = opened(evaluate_image("crop", ((0, 0), (5, 5)), encoded(deep, "TIFF"), "image/tiff", None).data)
    assert cut.mode == "I;16" and cut.getpixel((2, 2)) == 40000
    with pytest.raises(UnsupportedError, match="32-bit samples"):
        evaluate_image("crop", ((0, 0), (5, 5)), encoded(Image.new("I", (10, 10)), "TIFF"), "image/tiff", None)


def test_the_same_crop_is_the_same_bytes() -> None:
    data = encoded(painted(50, 50, "P"))
    first = evaluate_image("crop", ((1, 2), (30, 40)), data, "image/png", None).data
    assert evaluate_image("crop", ((1, 2), (30, 40)), data, "image/png", None).data == first


@pytest.mark.parametrize(
    ("positions", "message"),
    [
        (((5, 10),), "two corners"),
        (((5, 10), (1, 1)), "ends before it starts"),
        (((5, -1), (9, 9)), "two corners"),
        (((5, 1), (9, 9), -1), "two corners"),
        (((True, 1), (9, 9)), "two corners"),
    ],
)
def test_bad_positions_are_syntax_errors(positions: tuple[object, ...], message: str) -> None:
    with pytest.raises(ParseError, match=message):
        evaluate_image("crop", positions, encoded(painted(10, 10)), "image/png", None)


def test_bytes_that_are_no_image_are_unsupported() -> None:
    with pytest.raises(UnsupportedError, match="not an image format pdi can read"):
        evaluate_image("rect", ((0, 0), (1, 1)), b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml", None)
    whole = encoded(painted(64, 64))
    truncated = whole[: len(whole) // 2]  # the pixel data stops half way
    with pytest.raises(UnsupportedError, match="truncated"):
        evaluate_image("crop", ((0, 0), (60, 60)), truncated, "image/png", None)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 24),
    st.integers(1, 24),
    st.sampled_from(["RGB", "RGBA", "L", "P", "1"]),
    st.sampled_from(["PNG", "GIF", "BMP", "TIFF"]),
    st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30), st.integers(0, 30)),
)
def test_crop_holds_exactly_the_source_pixels(
    width: int, height: int, mode: str, fmt: str, corners: tuple[int, int, int, int]
) -> None:
    xa, ya, xb, yb = corners
    x1, x2, y1, y2 = min(xa, xb), max(xa, xb), min(ya, yb), max(ya, yb)
    if fmt == "GIF" and mode in ("RGBA",):
        mode = "P"
    data = encoded(painted(width, height, mode), fmt)
    source = opened(data)
    cx1, cy1, cx2, cy2 = min(x1, width), min(y1, height), min(x2, width), min(y2, height)
    if cx1 == cx2 or cy1 == cy2:
        with pytest.raises(UnsupportedError):
            evaluate_image("crop", ((x1, y1), (x2, y2)), data, "image/x", None)
        return
    result = evaluate_image("crop", ((x1, y1), (x2, y2)), data, "image/x", None)
    assert result.clamped == (x2 > width or y2 > height)
    cut = opened(result.data)
    assert cut.size == (cx2 - cx1, cy2 - cy1)
    want, got = source.convert("RGBA"), cut.convert("RGBA")
    for y in range(cy1, cy2):
        for x in range(cx1, cx2):
            assert got.getpixel((x - cx1, y - cy1)) == want.getpixel((x, y))


DATA = Path(__file__).resolve().parent / "data" / "crashers"


@pytest.mark.parametrize("name", ["crash_1734c2416e81a57c.gif", "crash_c0db7a61cd6d1b36.gif"])
@pytest.mark.parametrize("scheme", ["rect", "crop"])
@pytest.mark.parametrize("frame", [(), (0,), (1,), (2,)])
def test_damaged_gifs_found_by_fuzzing_are_unsupported_not_a_crash(name: str, scheme: str, frame: tuple[int, ...]) -> None:
    # Pillow raised IndexError and struct.error on these while counting frames.
    data = (DATA / name).read_bytes()
    with pytest.raises(UnsupportedError, match=f"{scheme} on image/gif: cannot read this image"):
        evaluate_image(scheme, ((0, 0), (2, 2), *frame), data, "image/gif", None)


def _two_frame_gif() -> bytes:
    frames = [painted(6, 5, "P", blue=b) for b in (0, 200)]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:])
    return out.getvalue()


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["gif", "png"]),
    st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255)), max_size=4),
    st.integers(1, 400),
    st.sampled_from(["rect", "crop"]),
    st.integers(0, 2),
)
def test_property_damaged_images_give_pdi_errors_only(
    kind: str, changes: list[tuple[int, int]], keep: int, scheme: str, frame: int
) -> None:
    original = _two_frame_gif() if kind == "gif" else encoded(painted(6, 5))
    whole = bytearray(original)
    for at, value in changes:
        whole[at % len(whole)] = value
    data = bytes(whole[:keep])
    # an undamaged image and a frame it has (Pillow counts them) must be answered
    intact = data == original and frame < Image.open(io.BytesIO(original)).n_frames
    try:
        result = evaluate_image(scheme, ((0, 0), (3, 3), frame), data, f"image/{kind}", None)
    except (UnsupportedError, NotFoundError, LimitError):
        assert not intact, f"an intact {kind} with frame {frame} was refused"
        return
    assert result.region is not None and result.region.frame == frame


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF"])
def test_a_small_image_in_a_large_mapped_file_is_cut_without_copying_the_file(tmp_path: Path, fmt: str) -> None:
    """Found by an attack: ``pdi get NAME#crop=(0,0),(2,2)`` of a 10×10 PNG followed by 100 MB of zeros (which
    Pillow never reads) peaked at 239 MB resident, as ``io.BytesIO`` copied the memory map whole before Pillow
    read its header (and a JPEG's scans were counted on another copy). Given a map of such a file of 64 MiB, a
    crop and a rect take little memory, and the crop is the pixels Pillow reads from the file itself."""
    import mmap
    import tracemalloc

    path = tmp_path / f"tail.{fmt.lower()}"
    path.write_bytes(encoded(painted(10, 10), fmt))
    with path.open("r+b") as f:
        f.truncate(64 << 20)  # a hole of zeros after the image's end
    with Image.open(path) as reference:
        expected = reference.convert("RGB").crop((3, 4, 7, 9)).tobytes()
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        tracemalloc.start()
        try:
            crop = evaluate_image("crop", ((3, 4), (7, 9)), mapped, f"image/{fmt.lower()}", None)
            rect = evaluate_image("rect", ((3, 4), (7, 9)), mapped, f"image/{fmt.lower()}", None)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert rect.region == Region(3, 4, 7, 9, 0, 10, 10, 1)
        del rect  # its data is the map itself (the whole image is its answer), released before the map closes
    assert opened(crop.data).convert("RGB").tobytes() == expected
    assert peak < 1 << 20, f"a 4×5 crop of a 10×10 image took {peak:,} octets"


def _unimplemented_kinds() -> list[tuple[str, bytes]]:
    """A DDS whose pixel format flags (DDS_PIXELFORMAT.dwFlags, octets 80 to 83) are none Pillow's plugin
    implements, and a BLP2 whose compression (octets 4 to 7) is none of 1 to 3: Pillow raises
    NotImplementedError on each, from Image.open for the DDS and from load for the BLP."""
    dds = bytearray(encoded(Image.new("RGBA", (4, 4)), "DDS"))
    assert dds[:4] == b"DDS " and dds[80:84] == b"A\0\0\0"  # DDPF_RGB | DDPF_ALPHAPIXELS, as Pillow wrote it
    dds[80:84] = bytes(4)
    blp = bytearray(encoded(Image.new("P", (4, 4)), "BLP"))
    assert blp[:8] == b"BLP2\x01\0\0\0"
    blp[4:8] = (7).to_bytes(4, "little")
    return [("image/vnd-ms.dds", bytes(dds)), ("image/x-blp", bytes(blp))]


@pytest.mark.parametrize(("media_type", "data"), _unimplemented_kinds())
@pytest.mark.parametrize("scheme", ["rect", "crop"])
def test_a_kind_pillow_does_not_implement_is_unsupported_not_a_crash(media_type: str, data: bytes, scheme: str) -> None:
    # NotImplementedError left the evaluator (and the cite page's image facts): a 500 for a stranger's file. The
    # BLP's header is read (a rect needs no pixel); its pixels are not.
    from pdi.server.pages.cite import image_facts

    header_read = media_type == "image/x-blp"
    if header_read and scheme == "rect":
        assert evaluate_image(scheme, ((0, 0), (2, 2)), data, media_type, None).region == Region(0, 0, 2, 2, 0, 4, 4, 1)
        assert image_facts(data, media_type).width == 4
        return
    with pytest.raises(UnsupportedError, match=f"{scheme} on {media_type}: cannot read this image"):
        evaluate_image(scheme, ((0, 0), (2, 2)), data, media_type, None)
    if not header_read:
        with pytest.raises(UnsupportedError, match=f"{media_type}: cannot read this image"):
            image_facts(data, media_type)


EPS_SPY = """
import sys
from pdi.errors import PDIError
from pdi.fragments.image import evaluate_image
from pdi.server.pages.cite import image_facts
data = open(sys.argv[1], "rb").read()
for scheme in ("crop", "rect"):
    try:
        evaluate_image(scheme, ((0, 0), (4, 4)), data, "image/png", None)
        print(scheme, "evaluated")
    except PDIError as exc:
        print(scheme, "refused:", exc)
try:
    image_facts(data, "image/png")
    print("facts read")
except PDIError as exc:
    print("facts refused:", exc)
"""


def test_an_eps_is_never_handed_to_ghostscript_whatever_it_was_deposited_as(tmp_path: Path) -> None:
    """Found by a hunt (2026-12-01): Pillow knows a file by its first octets, and reads an EPS's pixels by running
    Ghostscript (``gs``) on it, so a crop of a stranger's PostScript deposited as an image ran an interpreter of it
    wherever ``gs`` is installed. Here a ``gs`` first on ``PATH`` notes each run: none, and the image is refused as
    one Pillow cannot read (the cite page's facts too)."""
    import os
    import subprocess
    import sys

    spy = tmp_path / "bin"
    spy.mkdir()
    ran = tmp_path / "gs-ran"
    (spy / "gs").write_text(f"#!/bin/sh\necho \"$@\" >> {ran}\nexit 1\n")
    (spy / "gs").chmod(0o755)
    eps = tmp_path / "picture.eps"
    eps.write_bytes(b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 8 8\n%%EndComments\n"
                    b"0 0 1 setrgbcolor 0 0 8 8 rectfill\nshowpage\n%%EOF\n")
    env = {**os.environ, "PATH": f"{spy}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "-c", EPS_SPY, str(eps)], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert not ran.exists(), ran.read_text()
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["crop refused", "rect refused", "facts refused"], lines
