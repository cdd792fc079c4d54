"""A crop of a decompression bomb is refused before it is decoded (issue 12).

Reported: eight parallel 2×2 crops of a 420 KB PNG of 12,000×12,000 pixels
took 3 GB. The PNG here is made with Pillow (one grey level, so it compresses
to a few hundred kilobytes), and the crop runs in a child process whose peak
memory is read from the kernel.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from pdi.errors import LimitError
from pdi.fragments import evaluate
from pdi.fragments.image import MAX_CROP_PIXELS
from peak_memory import run_with_peak


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bomb") / "bomb.png"
    buffer = io.BytesIO()
    Image.new("L", (12_000, 12_000), 7).save(buffer, format="PNG", optimize=True)
    path.write_bytes(buffer.getvalue())
    return path


def test_a_crop_of_a_huge_frame_is_a_limit_and_the_rect_still_names_it(bomb: Path) -> None:
    data = bomb.read_bytes()
    assert len(data) < 1_000_000 and MAX_CROP_PIXELS < 12_000 * 12_000
    with pytest.raises(LimitError, match="12000×12000"):
        evaluate("crop", ((0, 0), (2, 2)), data, media_type="image/png", charset=None)
    region = evaluate("rect", ((0, 0), (2, 2)), data, media_type="image/png", charset=None).region
    assert region is not None and (region.width, region.height, region.x2, region.y2) == (12_000, 12_000, 2, 2)


def test_refusing_it_takes_no_memory_to_speak_of(bomb: Path) -> None:
    script = (
        "import sys\n"
        "from pdi.fragments import evaluate\n"
        "from pdi.errors import LimitError\n"
        "data = open(sys.argv[1], 'rb').read()\n"
        "try:\n"
        "    evaluate('crop', ((0, 0), (2, 2)), data, media_type='image/png', charset=None)\n"
        "except LimitError:\n"
        "    print('limit')\n"
    )
    small = bomb.parent / "small.png"
    Image.new("L", (40, 30), 7).save(small, format="PNG")

    def peak_kib(path: Path, expected: str) -> int:
        status, peak, out = run_with_peak([sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE)
        assert status == 0
        assert out.decode().strip() == expected
        return peak

    baseline = peak_kib(small, "")  # the same child cutting a 40x30 image: the interpreter and Pillow
    # no more than that and a little: one decoded frame of the bomb alone is 144 MB
    grown = peak_kib(bomb, "limit") - baseline
    assert grown < 32 * 1024, f"{grown // 1024} MiB more than a small crop"


def test_a_gif_whose_later_frame_claims_158_million_pixels() -> None:
    # Found by fuzzing (tests/data/README.md): a 250-byte GIF whose frames 0 and 1 are 4×3
    # pixels and whose frame 2 claims 6144×25702, under Pillow's own bomb limit. Frame 2
    # is not cut; frame 1 is; rect names frame 2 from its header alone.
    raw = (Path(__file__).parent / "data" / "fuzz" / "fragment_image" / "found-gif-frame-158m-pixels").read_bytes()
    fragment, media_type, data = raw.split(b"\0", 2)
    assert (fragment, media_type, data[:6]) == (b"crop=(0,0),(2,2),2", b"image/gif", b"GIF87a")
    assert 2 * Image.MAX_IMAGE_PIXELS > 6144 * 25702  # Pillow alone would decode it
    with pytest.raises(LimitError, match="6144×25702"):
        evaluate("crop", ((0, 0), (2, 2), 2), data, media_type="image/gif", charset=None)
    region = evaluate("rect", ((0, 0), (2, 2), 2), data, media_type="image/gif", charset=None).region
    assert region is not None and (region.width, region.height, region.frame, region.frames) == (6144, 25702, 2, 3)
    cut = evaluate("crop", ((0, 0), (2, 2), 1), data, media_type="image/gif", charset=None)
    with Image.open(io.BytesIO(cut.data)) as png:
        assert (png.format, png.size) == ("PNG", (2, 2))
