"""An image's size and frames read from its header alone (``pdi.fragments.image_size``), against Pillow's.

Pillow is the independent reader here: on images it writes (each format and
mode it writes, several frames of different sizes where the format holds
them), :func:`image_size` must say what Pillow's ``Image.open`` says of every
frame. Damaged and truncated headers are a :class:`ParseError` naming an
offset, never another exception, and every walk is bounded.
"""

from __future__ import annotations

import io
import struct
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from pdi.errors import LimitError, ParseError
from pdi.fragments import image_size as image_size_module
from pdi.fragments.image_size import ImageSize, image_size
from support.tiff import tiff_chain

#: The modes Pillow writes in each format (its documentation's "file formats" page).
MODES = {
    "PNG": ("1", "L", "LA", "P", "RGB", "RGBA", "I;16"),
    "JPEG": ("L", "RGB", "CMYK"),
    "TIFF": ("1", "L", "LA", "P", "RGB", "RGBA", "CMYK", "I;16", "F"),
    "GIF": ("L", "P", "RGB"),
    "WEBP": ("RGB", "RGBA"),
    "BMP": ("1", "L", "P", "RGB", "RGBA"),
}
#: Formats Pillow writes several frames of (``save_all``).
MULTI = frozenset({"PNG", "TIFF", "GIF", "WEBP"})

sides = st.integers(min_value=1, max_value=70)


@st.composite
def images(draw: st.DrawFn) -> bytes:
    """An image Pillow wrote: a format, a mode it holds, options of the format, and up to four frames whose sizes
    may differ."""
    form = draw(st.sampled_from(sorted(MODES)))
    mode = draw(st.sampled_from(MODES[form]))
    count = draw(st.integers(1, 4)) if form in MULTI else 1
    first = (draw(sides), draw(sides))
    frames = [  # (libwebp animates frames of the canvas's size only)
        Image.new(mode, first if k == 0 or form == "WEBP" else (draw(sides), draw(sides)),
                  draw(st.integers(0, 255)) if mode != "F" else 0.5)
        for k in range(count)
    ]
    for frame in frames:  # a pixel of another colour, so that frames do not merge as duplicates
        frame.putpixel((0, 0), 1.0 if mode == "F" else (draw(st.integers(0, 255)),) * len(frame.getbands()))
    options: dict[str, object] = {}
    if form == "JPEG":
        options = {"progressive": draw(st.booleans()), "quality": draw(st.integers(10, 95))}
    elif form == "TIFF":
        options = {"big_tiff": draw(st.booleans()), "compression": draw(st.sampled_from(["raw", "packbits", None]))}
    elif form == "WEBP":
        options = {"lossless": draw(st.booleans())}
    if count > 1:
        options.update(save_all=True, append_images=frames[1:])
        if form == "GIF":
            options["disposal"] = draw(st.integers(0, 2))
    out = io.BytesIO()
    frames[0].save(out, format=form, **options)
    return out.getvalue()


def pillow_says(data: bytes) -> list[tuple[str, int, int, int]]:
    """For each frame Pillow reaches: its format, the frame's width and height, and the image's frames."""
    with Image.open(io.BytesIO(data)) as image:
        frames = int(getattr(image, "n_frames", 1))
        said = []
        for k in range(frames):
            image.seek(k)
            said.append((str(image.format), image.width, image.height, frames))
        return said


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(images())
def test_the_header_says_what_pillow_says_of_every_frame(data: bytes) -> None:
    for k, (form, width, height, frames) in enumerate(pillow_says(data)):
        assert image_size(data, k) == ImageSize(form, width, height, frames), k


@pytest.mark.parametrize(("form", "mode"), [(f, m) for f in sorted(MODES) for m in MODES[f]])
def test_each_format_and_mode(form: str, mode: str) -> None:
    """Every pair at least once, whatever hypothesis draws: a 37×23 image."""
    out = io.BytesIO()
    Image.new(mode, (37, 23)).save(out, format=form)
    assert image_size(out.getvalue()) == ImageSize(form, 37, 23, 1)


def test_a_bmp_of_a_core_header_and_a_top_down_one() -> None:
    # BITMAPCOREHEADER (12 octets: 16-bit width and height), written by hand: Pillow writes the 40-octet one
    core = b"BM" + struct.pack("<IHHI", 26 + 6, 0, 0, 26) + struct.pack("<IHHHH", 12, 2, 1, 1, 24) + b"\0" * 8
    assert image_size(core) == ImageSize("BMP", 2, 1, 1) and pillow_says(core) == [("BMP", 2, 1, 1)]
    out = io.BytesIO()
    Image.new("RGB", (5, 3)).save(out, format="BMP")
    top_down = bytearray(out.getvalue())
    top_down[22:26] = struct.pack("<i", -3)  # a negative height: rows from the top
    assert image_size(bytes(top_down)) == ImageSize("BMP", 5, 3, 1) == ImageSize(*pillow_says(bytes(top_down))[0])


def test_a_tiff_chain_by_hand_in_both_byte_orders() -> None:
    for order in "<>":
        data = tiff_chain(3, order=order)
        assert [image_size(data, k) for k in range(3)] == [ImageSize(*said) for said in pillow_says(data)]


def test_formats_it_does_not_read_are_none() -> None:
    out = io.BytesIO()
    Image.new("RGB", (4, 4)).save(out, format="PPM")
    assert image_size(out.getvalue()) is None and image_size(b"") is None and image_size(b"<svg/>") is None


def test_a_jpeg_holding_an_mpo_index_is_a_limit() -> None:
    out = io.BytesIO()
    Image.new("RGB", (8, 8)).save(out, format="MPO", save_all=True, append_images=[Image.new("RGB", (8, 8))])
    with pytest.raises(LimitError, match=r"multi-picture JPEG \(MPO\)"):
        image_size(out.getvalue())


def _valid_samples() -> list[bytes]:
    samples = []
    for form, mode in (("PNG", "RGB"), ("JPEG", "RGB"), ("TIFF", "L"), ("GIF", "P"), ("WEBP", "RGB"), ("BMP", "L")):
        out = io.BytesIO()
        Image.new(mode, (9, 7)).save(out, format=form)
        samples.append(out.getvalue())
    out = io.BytesIO()
    Image.new("RGB", (9, 7)).save(out, format="TIFF", big_tiff=True)
    samples.append(out.getvalue())
    out = io.BytesIO()
    Image.new("RGB", (9, 7)).save(out, format="WEBP", save_all=True, append_images=[Image.new("RGB", (9, 7), 9)])
    samples.append(out.getvalue())
    return samples


SAMPLES = _valid_samples()


@pytest.mark.parametrize("index", range(len(SAMPLES)))
def test_every_truncation_is_a_size_or_a_parse_error_naming_an_offset(index: int) -> None:
    data = SAMPLES[index]
    whole = image_size(data)
    assert whole is not None and (whole.width, whole.height) == (9, 7)
    for end in range(len(data)):
        try:
            found = image_size(data[:end])
        except ParseError as exc:
            assert exc.offset is not None and f"offset {exc.offset}" in str(exc)
            assert 0 <= exc.offset <= len(data)
        else:  # a prefix holding the whole header: the same size (a GIF's frames are those it reached)
            assert found is None or (found.width, found.height) == (9, 7)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(SAMPLES), st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)), max_size=6),
       st.integers(0, 3))
def test_damaged_headers_are_a_size_a_parse_error_or_a_limit(
    data: bytes, changes: list[tuple[int, int]], frame: int
) -> None:
    damaged = bytearray(data)
    for at, value in changes:
        if at < len(damaged):
            damaged[at] = value
    try:
        found = image_size(bytes(damaged), frame)
    except ParseError as exc:
        assert exc.offset is not None
    except LimitError:
        pass
    else:
        assert found is None or (found.width > 0 and found.height > 0 and found.frames >= 1)


def test_a_walk_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A JPEG of 100,000 empty comment segments before its frame header, a GIF of 100,000 empty extensions: each
    refused after MAX_STEPS steps, at once."""
    monkeypatch.setattr(image_size_module, "MAX_STEPS", 10_000)
    jpeg = (b"\xff\xd8" + b"\xff\xfe\x00\x02" * 100_000 + b"\xff\xc0\x00\x0b\x08\x00\x07\x00\x09\x01\x01\x11\x00"
            + b"\xff\xda")
    gif = b"GIF89a" + struct.pack("<HHBBB", 9, 7, 0, 0, 0) + b"\x21\xfe\x00" * 100_000 + b";"
    monkeypatch.setattr(image_size_module, "MAX_GIF_STEPS", 10_000)  # a GIF's own bound, its blocks' and octets'
    for data, said in ((jpeg, "more than 10,000 steps"), (gif, "more than 10,000 blocks, sub-blocks and stray")):
        started = time.monotonic()
        with pytest.raises(LimitError, match=said):
            image_size(data)
        assert time.monotonic() - started < 2
    monkeypatch.setattr(image_size_module, "MAX_STEPS", 400_000)
    assert image_size(jpeg) == ImageSize("JPEG", 9, 7, 1)  # the same files under the bound: read


def test_a_tiff_of_more_pages_than_fragments_are_evaluated_on_is_a_limit() -> None:
    from pdi.fragments.image import MAX_TIFF_PAGES

    with pytest.raises(LimitError, match="pages or more"):
        image_size(tiff_chain(MAX_TIFF_PAGES + 1))


def test_a_looping_tiff_chain_and_a_directory_without_its_size() -> None:
    looping = tiff_chain(2, loop=True)
    assert image_size(looping, 1) == ImageSize("TIFF", 1, 1, 2)
    no_length = bytearray(tiff_chain(1))
    no_length[10 + 12 + 0:10 + 12 + 2] = struct.pack("<H", 999)  # the second entry's tag, 257, made another
    with pytest.raises(ParseError, match="without ImageLength") as refused:
        image_size(bytes(no_length))
    assert refused.value.offset == 9


def test_a_run_of_fill_octets_and_restart_markers_is_one_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """T.81 B.1.1.2: any marker may follow any number of fill octets (FF), and Pillow skips them, as it skips
    the markers that have no length (RSTn): a run of them is one step of the walk, not one step an octet (4 MB
    of fill octets took 5 s of Python, then were refused)."""
    monkeypatch.setattr(image_size_module, "MAX_STEPS", 1_000)
    jpeg = (b"\xff\xd8" + b"\xff" * 100_000 + b"\xff\xd0\xff\xff\xd7" * 20_000
            + b"\xff\xc0\x00\x0b\x08\x00\x07\x00\x09\x01\x01\x11\x00" + b"\xff" * 50_000 + b"\xff\xda\x00\x02")
    assert Image.open(io.BytesIO(jpeg)).size == (9, 7)
    assert image_size(jpeg) == image_size(memoryview(jpeg)) == ImageSize("JPEG", 9, 7, 1)
    # a run that ends the file is the end of the file inside a marker, where it ends
    with pytest.raises(ParseError, match=r"ends inside a marker.*offset 100002"):
        image_size(b"\xff\xd8" + b"\xff" * 100_000)
    # a marker without a length followed by no FF: what follows it is no marker, as before
    with pytest.raises(ParseError, match=r"begins with FF, not 00.*offset 5"):
        image_size(b"\xff\xd8\xff\xff\xd0\x00\x00\x00\x00")
