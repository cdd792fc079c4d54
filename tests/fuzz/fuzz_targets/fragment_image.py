"""``rect`` and ``crop`` on images (``pdi.fragments.image``, Pillow) through :func:`pdi.fragments.evaluate`.

Input: ``fragment NUL media-type NUL image`` (``image/*``). What must hold
(the module docstring): ``rect`` returns the stored bytes unchanged, with a
region inside the frame's width and height and a frame the image has;
``crop`` returns a PNG image of exactly the region's size.
"""

from __future__ import annotations

import io

from fuzz_harness import Target
from PIL import Image

from fuzz_targets._evaluate import evaluated

# pdi refuses a crop of a frame over MAX_CROP_PIXELS (40 million) before decoding it
# (pdi.fragments.image), and Pillow refuses to open an image over 2 × Image.MAX_IMAGE_PIXELS
# (about 179 million). The 250-byte GIF whose third frame claims 6144×25702 pixels
# (tests/data/fuzz/fragment_image/found-gif-frame-158m-pixels; a second and 632 MB before the crop
# limit) is now a LimitError within milliseconds. A crop just under the limit still decodes up to
# 40 million pixels (160 MB in RGBA, about a second), past the harness's budget on a shared
# machine, so here Pillow's limit is 4 million pixels and the LimitError path is what such inputs
# exercise. (Set where the target runs, in the worker, never in the test process.)
_MAX_IMAGE_PIXELS = 4_000_000


def run(data: bytes) -> None:
    Image.MAX_IMAGE_PIXELS = _MAX_IMAGE_PIXELS
    scheme, _, body, _, result = evaluated(
        data, default_scheme="rect", default_type="image/png", family=lambda m: m.startswith("image/")
    )
    if scheme not in ("rect", "crop"):
        return
    region = result.region
    assert region is not None
    assert 0 <= region.x1 <= region.x2 <= region.width
    assert 0 <= region.y1 <= region.y2 <= region.height
    assert 0 <= region.frame < region.frames
    if scheme == "rect":
        assert result.data == body
        return
    assert result.media_type == "image/png"
    with Image.open(io.BytesIO(result.data)) as png:
        assert png.format == "PNG"
        assert png.size == (region.x2 - region.x1, region.y2 - region.y1)


# A 2×2 GIF (written with Pillow), so the warm-up loads Pillow's plugins and the crop path.
_GIF = bytes.fromhex(
    "47494638376102000200810000ff0000ffffff0000000000002c0000000002000200000806000108041010003b"
)

TARGET = Target(
    "fragment_image",
    run,
    warmup=b"crop=(0,0),(1,1)\x00image/gif\x00" + _GIF,
    tokens=(
        b"\x00", b"rect=", b"crop=", b"(0,0),(1,1)", b",1", b",2", b"image/gif", b"image/png", b"image/jpeg",
        b"image/webp", b"image/tiff", b"image/bmp", b"GIF89a", b"GIF87a", b"\x89PNG\r\n\x1a\n", b"IHDR",
        b"IDAT", b"IEND", b"PLTE", b"tRNS", b"iCCP", b"acTL", b"fcTL", b"\xff\xd8\xff", b"\xff\xc0",
        b"\xff\xda", b"II*\x00", b"MM\x00*", b"RIFF", b"WEBPVP8", b"BM", b"!\xf9\x04", b",", b";",
    ),
)
