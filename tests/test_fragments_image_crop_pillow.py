"""``crop`` against Pillow: random images of every mode and format pdi cuts, random regions (inside, on the edges,
past them), pdi's PNG decoded equals ``Image.open(...).crop(...)`` of the same file pixel for pixel.

The oracle is Pillow's own reading of the stored file (a JPEG or a lossy WebP is compared with Pillow's decoding
of the same octets, never with the image written), its crop of the region clipped to the image, compared as RGBA
(the colours every mode shows) and, for 16-bit grey, sample for sample (RGBA would keep 8 bits of it). A region
with no pixel is refused, and only such a region. Found nothing to fix (3,000 examples, 2026-12-01); kept as a
guard.
"""

from __future__ import annotations

import io
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from pdi.errors import UnsupportedError
from pdi.fragments.image import evaluate_image

#: The modes written in each format (PT: a palette with a transparent index), and the media type of each.
MODES = {
    "PNG": ["L", "LA", "P", "PT", "RGB", "RGBA", "I;16", "1"],
    "APNG": ["L", "LA", "P", "RGB", "RGBA"],
    "GIF": ["L", "P", "PT", "1"],
    "TIFF": ["L", "LA", "P", "RGB", "RGBA", "I;16", "1"],
    "WEBP": ["RGB", "RGBA"],
    "AWEBP": ["RGB", "RGBA"],
    "JPEG": ["L", "RGB"],
}
MEDIA_TYPES = {"APNG": "image/png", "AWEBP": "image/webp"}


def _image(mode: str, width: int, height: int, seed: int) -> Image.Image:
    draw = random.Random(seed)
    if mode == "PT":
        image = Image.new("P", (width, height))
        image.putpalette([draw.randrange(256) for _ in range(768)])
        image.putdata([draw.randrange(256) for _ in range(width * height)])
        image.info["transparency"] = 3
        return image
    if mode == "I;16":
        image = Image.new("I;16", (width, height))
        image.putdata([draw.randrange(65536) for _ in range(width * height)])
        return image
    bands = 1 if mode in ("1", "P") else len(mode)
    image = Image.frombytes("L" if bands == 1 else mode, (width, height),
                            bytes(draw.randrange(256) for _ in range(width * height * bands)))
    return image.convert("1") if mode == "1" else image.convert("RGB").quantize(16) if mode == "P" else image


def _file(image: Image.Image, fmt: str, option: bool) -> bytes:
    out = io.BytesIO()
    if fmt in ("APNG", "AWEBP") or (fmt == "GIF" and option):  # frames: the image, mirrored, upside down
        frames = [image.transpose(Image.Transpose.FLIP_LEFT_RIGHT), image.transpose(Image.Transpose.FLIP_TOP_BOTTOM)]
        written = {"APNG": "PNG", "AWEBP": "WEBP"}.get(fmt, fmt)
        image.save(out, written, save_all=True, append_images=frames, **({"lossless": True} if written == "WEBP" else {}))
        return out.getvalue()
    options: dict[str, object] = {
        "PNG": {"interlace": option}, "JPEG": {"progressive": option, "quality": 90},
        "TIFF": {"tile": (16, 16)} if option and image.mode != "1" else {}, "WEBP": {"lossless": option}, "GIF": {},
    }[fmt]
    if "transparency" in image.info and fmt in ("PNG", "GIF"):
        options["transparency"] = image.info["transparency"]
    image.save(out, fmt, **options)
    return out.getvalue()


@settings(max_examples=150)
@given(fmt=st.sampled_from(sorted(MODES)), data=st.data(), width=st.integers(1, 40), height=st.integers(1, 40),
       seed=st.integers(0, 9999), option=st.booleans())
def test_a_crop_is_pillows_crop_of_the_same_file(fmt: str, data: st.DataObject, width: int, height: int, seed: int,
                                                 option: bool) -> None:
    mode = data.draw(st.sampled_from(MODES[fmt]))
    stored = _file(_image(mode, width, height, seed), fmt, option)
    frames = getattr(Image.open(io.BytesIO(stored)), "n_frames", 1)
    frame = data.draw(st.integers(0, frames - 1))
    x1, y1 = data.draw(st.integers(0, width + 3)), data.draw(st.integers(0, height + 3))
    x2, y2 = data.draw(st.integers(x1, width + 5)), data.draw(st.integers(y1, height + 5))
    positions: list[object] = [(x1, y1), (x2, y2)] + ([frame] if frame else [])
    box = (x1, y1, min(x2, width), min(y2, height))
    try:
        cut = evaluate_image("crop", positions, stored, MEDIA_TYPES.get(fmt, f"image/{fmt.lower()}"), None)
    except UnsupportedError:
        assert box[2] <= box[0] or box[3] <= box[1]  # refused only when the region holds no pixel
        return
    oracle = Image.open(io.BytesIO(stored))
    oracle.seek(frame)
    expected = oracle.crop(box)
    got = Image.open(io.BytesIO(cut.data))
    assert got.format == "PNG" and got.size == expected.size
    assert cut.clamped == (x2 > width or y2 > height)
    if expected.mode.startswith("I;16"):
        assert got.mode == "I;16" and list(got.get_flattened_data()) == list(expected.get_flattened_data())
    else:
        assert got.convert("RGBA").tobytes() == expected.convert("RGBA").tobytes()
