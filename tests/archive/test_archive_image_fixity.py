"""A damaged stored image is refused as damaged (``DamagedError``, ``500``), not as an image pdi cannot read.

An image's ``rect`` and ``crop`` are evaluated on the blob's map, its octets read by a decoder where it goes
(Pillow's, or libvips' in a child process from the blob's file), and the whole blob is checked against its chunk
digests after. A flipped octet that the decoder stumbles on (a header Pillow no longer recognises, an IDAT whose
CRC or deflate stream libvips refuses) was answered as the decoder's refusal ("not an image format pdi can
read", ``UnsupportedError``, a ``415`` that blames the format), before the check was reached: the answer is now the
archive's damaged-blob answer, naming the chunk, as for every other kind. A refusal of an undamaged image stays
what it is. The damaged offsets are worked out from the formats (PNG §5.3, §11.2.2; ITU T.81 B.2.2; TIFF 6.0
§2), not found by trying.
"""

from __future__ import annotations

import hashlib
import io
import struct
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from pdi.archive import Archive, Generic
from pdi.errors import DamagedError, NotFoundError, UnsupportedError
from pdi.fragments.image import MAX_CROP_PIXELS
from support.big_image import pattern_png
from support.stored_blobs import blob_file, blob_row, flip_octet

S = "pictures.library.example.us"
WIDTH, HEIGHT = 400, 300


def _noise(fmt: str) -> bytes:
    """A ``WIDTH`` × ``HEIGHT`` RGB image of noise in ``fmt``: larger than the 64 KiB a catalog row holds."""
    pixels = np.random.default_rng(7).integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format=fmt)
    return out.getvalue()


def _sof_height(jpeg: bytes) -> int:
    """Where a baseline JPEG's frame header (SOF0, ITU T.81 B.2.2) holds its height's high octet."""
    at = jpeg.index(b"\xff\xc0")
    assert struct.unpack(">H", jpeg[at + 5:at + 7])[0] == HEIGHT  # marker, Lf (2), P (1), then Y
    return at + 5


def _stored(tmp_path: Path, data: bytes, token: str) -> tuple[str, str, str]:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, data, format=token))
    sha256 = hashlib.sha256(data).hexdigest()
    assert blob_row(location, sha256) is None and blob_file(location, sha256).is_file()  # a blob file, mapped
    return location, name, sha256


# (format, its token, the offset flipped, what it is)
HEADERS = [
    ("PNG", "png", 12, "the IHDR chunk's type (PNG §5.3): IHDR becomes IHDS"),
    ("PNG", "png", 17, "IHDR's width, its CRC no longer matching"),
    ("JPEG", "image+jpeg", -1, "the frame header's height (SOF0)"),
    ("TIFF", "tiff", 2, "the TIFF header's 42 (TIFF 6.0 §2): 43"),
]


@pytest.mark.parametrize(("fmt", "token", "offset", "what"), HEADERS, ids=[f"{h[0]}-{h[2]}" for h in HEADERS])
@pytest.mark.parametrize("scheme", ["rect", "crop"])
def test_a_flipped_octet_in_a_stored_images_header_is_damage(tmp_path: Path, fmt: str, token: str, offset: int,
                                                             what: str, scheme: str) -> None:
    data = _noise(fmt)
    if offset < 0:
        offset = _sof_height(data)
    location, name, sha256 = _stored(tmp_path, data, token)
    with Archive.open(location) as archive:  # undamaged, it is cut
        assert not isinstance(archive.resolve(f"{name}#{scheme}=(1,1),(20,20)"), Generic)
    flip_octet(location, sha256, offset)
    with Archive.open(location) as archive, pytest.raises(DamagedError, match=r"damaged: chunk 0 \(octets 0 to"):
        archive.resolve(f"{name}#{scheme}=(1,1),(20,20)")


def test_a_refusal_of_an_undamaged_image_stays_what_it_is(tmp_path: Path) -> None:
    """Checked, the blob is found whole: the evaluator's own refusal is the answer."""
    location, name, _ = _stored(tmp_path, _noise("PNG"), "png")
    with Archive.open(location) as archive:
        with pytest.raises(NotFoundError, match="frame 3 is not in this image"):
            archive.resolve(f"{name}#rect=(1,1),(20,20),3")
        with pytest.raises(UnsupportedError, match="holds no pixels"):
            archive.resolve(f"{name}#crop=({WIDTH},1),({WIDTH + 5},20)")


def test_a_stored_image_not_pillow_reads_is_refused_as_before(tmp_path: Path) -> None:
    """A PNG signature on octets that are no PNG (deposited with ``force``): undamaged, not an image pdi reads."""
    location = str(tmp_path / "archive")
    junk = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 400
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, junk, format="png", force=True))
    with Archive.open(location) as archive, pytest.raises(UnsupportedError, match="not an image format pdi can read"):
        archive.resolve(f"{name}#crop=(1,1),(20,20)")


def test_a_flipped_octet_libvips_stumbles_on_is_damage(tmp_path: Path) -> None:
    """A PNG of more pixels than a Pillow crop decodes is cut by libvips in its child, from the blob's file: an
    octet flipped in the middle of its IDAT (its deflate stream, and the chunk's CRC) is met by libpng there, on
    the way to a region at the foot. Pillow opened the header, intact, so only the child reads the damage."""
    width, height = 8000, 6000
    assert width * height > MAX_CROP_PIXELS
    data = pattern_png(width, height)
    idat = data.index(b"IDAT") + 4
    length = struct.unpack(">I", data[idat - 8:idat - 4])[0]
    location, name, sha256 = _stored(tmp_path, data, "png")
    foot = f"{name}#crop=(10,{height - 10}),(20,{height})"
    flip_octet(location, sha256, idat + length // 2)
    damaged_chunk = (idat + length // 2) >> 20
    with Archive.open(location) as archive, pytest.raises(DamagedError, match=f"damaged: chunk {damaged_chunk} "):
        archive.resolve(foot)
