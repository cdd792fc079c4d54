"""A video frame's region as ffmpeg decodes it and Pillow cuts it: what a ``#crop=`` of a stored video must give,
worked out without pdi."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

from PIL import Image

from pdi.archive import Resolved

#: The region the fixity tests cut: 16 × 16 pixels at the first frame's top-left corner.
SIDE = 16


def first_frame_region(directory: Path, data: bytes) -> bytes:
    """The RGB pixels of the ``SIDE`` × ``SIDE`` top-left region of the first frame of the video ``data`` (written
    into ``directory``), decoded by ffmpeg and cut by Pillow."""
    path = directory / "frame-source.mp4"
    path.write_bytes(data)
    png = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-frames:v", "1", "-f", "image2pipe",
                          "-c:v", "png", "-pix_fmt", "rgb24", "-"], check=True, capture_output=True, timeout=60).stdout
    return Image.open(io.BytesIO(png)).convert("RGB").crop((0, 0, SIDE, SIDE)).tobytes()


def region_pixels(answer: Resolved) -> bytes:
    """The RGB pixels of a region pdi answered, which must be ``SIDE`` × ``SIDE``."""
    image = Image.open(io.BytesIO(answer.data))
    assert image.size == (SIDE, SIDE)
    return image.convert("RGB").tobytes()
