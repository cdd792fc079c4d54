"""The viewer's page of an image a stranger deposited: a damaged image is a note, not a 500.

A GIF whose signature libmagic accepts (so it is deposited without ``--force``) may be cut inside a frame:
Pillow's frame count then trips over it with an ``IndexError`` or a ``struct.error`` (the two files found by
fuzzing the image evaluator, tests/data/crashers/, which its crop refuses as unsupported). An APNG may claim
more frames than it holds (its ``acTL`` chunk, which Pillow believes up to 2**31): the page offers those it holds.
A TIFF's later page may name a compression no one knows: Pillow's page count raises ``KeyError`` there.
"""

from __future__ import annotations

import html
import io
import re
import struct
import urllib.parse
import zlib
from pathlib import Path

import pytest
from PIL import Image
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.errors import UnsupportedError
from pdi.fragments import evaluate
from pdi.server import create_app
from pdi.server.pages.cite import image_facts
from support.tiff import tiff_chain

S = "library.example.us"
CRASHERS = Path(__file__).resolve().parent.parent / "data" / "crashers"


@pytest.mark.parametrize("name", ["crash_1734c2416e81a57c.gif", "crash_c0db7a61cd6d1b36.gif"])
def test_a_gif_cut_inside_a_frame_is_shown_with_a_note_not_a_500(location: str, name: str) -> None:
    data = (CRASHERS / name).read_bytes()
    with pytest.raises(UnsupportedError, match="cannot read this image"):
        image_facts(data, "image/gif")
    with Archive.init(location) as archive:
        archive.add_series(S)
        pdi = str(archive.add(S, data, format="gif"))  # a GIF's signature: deposited as it is
        client = TestClient(create_app(location, archive=archive), raise_server_exceptions=False)
        page = client.get(f"/view?pdi={urllib.parse.quote(pdi, safe='')}")
        assert page.status_code == 200, page.text[:300]
        assert "Regions of this image cannot be named here" in page.text and 'id="figure"' not in page.text
        whole = client.get(f"/uri-res/N2R?{pdi}")
        assert whole.status_code == 200 and whole.content == data


def test_an_apng_claiming_two_billion_frames_offers_the_three_it_holds(location: str) -> None:
    images = [Image.new("L", (4, 3), shade) for shade in (0, 100, 200)]
    out = io.BytesIO()
    images[0].save(out, format="PNG", save_all=True, append_images=images[1:])
    at = out.getvalue().index(b"acTL") - 4  # its frame count made 2**31 (APNG §2.1), its CRC-32 made again
    body = b"acTL" + struct.pack(">II", 2**31, 0)
    data = out.getvalue()[:at] + struct.pack(">I", 8) + body + struct.pack(">I", zlib.crc32(body)) \
        + out.getvalue()[at + 20:]
    with Image.open(io.BytesIO(data)) as claimed:
        assert claimed.n_frames == 2**31
    assert image_facts(data, "image/png").frames == 3
    with Archive.init(location) as archive:
        archive.add_series(S)
        pdi = str(archive.add(S, data, format="png"))
        client = TestClient(create_app(location, archive=archive), raise_server_exceptions=False)
        page = client.get(f"/view?pdi={urllib.parse.quote(pdi, safe='')}")
        assert page.status_code == 200, page.text[:300]
        assert re.findall(r'<option value="(\d+)"', page.text) == ["0", "1", "2"]


def test_a_tiff_whose_later_page_has_an_unknown_compression_is_unreadable_not_a_500(location: str) -> None:
    # TIFF 6.0 §3, Compression (259): 44545 is no scheme; Pillow's page count meets it on page 2 as a KeyError
    data = tiff_chain(3, compressions=(1, 44545, 1))
    with pytest.raises(UnsupportedError, match="cannot read this image"):
        image_facts(data, "image/tiff")
    with pytest.raises(UnsupportedError, match="cannot read this image"):
        evaluate("rect", ((0, 0), (1, 1)), data, media_type="image/tiff")
    assert evaluate("rect", ((0, 0), (1, 1), 2), tiff_chain(3, compressions=(1, 1, 1)),
                    media_type="image/tiff").region.frames == 3  # the same with no unknown compression: read
    with Archive.init(location) as archive:
        archive.add_series(S)
        pdi = str(archive.add(S, data, format="tiff"))  # a TIFF's signature: deposited as it is
        client = TestClient(create_app(location, archive=archive), raise_server_exceptions=False)
        page = client.get(f"/view?pdi={urllib.parse.quote(pdi, safe='')}")
        assert page.status_code == 200 and "Regions of this image cannot be named here" in page.text
        region = client.get(f"/uri-res/N2R?{pdi}%23rect=(0,0),(1,1)")
        assert region.status_code == 400 and region.json()["detail"] == (
            "rect on image/tiff: cannot read this image: a value no table of its format holds (44545), a damaged header")


def _gif_of(frames: int) -> bytes:
    """A GIF of ``frames`` frames of 2×1 pixels, each of its own colour (Pillow merges frames alike)."""
    images = [Image.new("RGB", (2, 1), (k % 256, k // 256, 0)) for k in range(frames)]
    out = io.BytesIO()
    images[0].save(out, format="GIF", save_all=True, append_images=images[1:])
    return out.getvalue()


def test_an_image_of_more_frames_than_the_chooser_lists_is_chosen_by_number(location: str) -> None:
    from pdi.server.pages.media_view import MAX_FRAME_OPTIONS

    many = MAX_FRAME_OPTIONS + 1
    data = _gif_of(many)
    with Archive.init(location) as archive:
        archive.add_series(S)
        pdi = str(archive.add(S, data, format="gif"))
        client = TestClient(create_app(location, archive=archive), raise_server_exceptions=False)
        page = client.get(f"/view?pdi={urllib.parse.quote(f'{pdi}#rect=(0,0),(1,1),{many - 1}', safe='')}")
        assert page.status_code == 200, page.text[:300]
        assert "<option" not in page.text  # each frame listed was some 150 octets of the page
        chooser = re.search(r'<input type="number" id="frame" min="0" max="(\d+)" step="1" value="(\d+)"'
                            r' data-src="([^"]+)">', page.text)
        assert chooser is not None and chooser.groups()[:2] == (str(many - 1), str(many - 1))
        # the number after the source is that frame, whole, as an image
        cut = client.get(html.unescape(chooser.group(3)) + str(many - 1))
        assert cut.status_code == 200 and cut.headers["content-type"] == "image/png"
        with Image.open(io.BytesIO(cut.content)) as frame:
            assert frame.size == (2, 1) and frame.convert("RGB").getpixel((0, 0)) == ((many - 1) % 256, (many - 1) // 256, 0)
        few = str(archive.add(S, _gif_of(3), format="gif"))
        listed = client.get(f"/view?pdi={urllib.parse.quote(few, safe='')}")
        assert re.findall(r'<option value="(\d+)"', listed.text) == ["0", "1", "2"]
