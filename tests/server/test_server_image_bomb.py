"""An image whose header claims more pixels than Pillow will open (a "pixel bomb", 100,000 × 100,000 in a file of
a few dozen octets) is not a 500 in the viewer (found by a tester: the viewer's page failed with Pillow's
``DecompressionBombError``): its size is read from the header alone, as ``rect`` reads it, and its crop is a
typed limit. Its octets are still served whole.

The PNG is written here by its specification (PNG §5: the signature, an IHDR of width, height, bit depth 8 and
colour type 0, each chunk with its CRC-32, then IEND): Pillow refuses to open more than twice
``Image.MAX_IMAGE_PIXELS`` (89,478,485), and 10^10 is more.
"""

from __future__ import annotations

import html
import struct
import urllib.parse

from server_helpers import pixel_bomb
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app

S = "library.example.us"


BOMB = pixel_bomb(100_000, 100_000)


def test_a_pixel_bomb_is_sized_from_its_header_in_the_viewer_and_its_octets_are_served(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, BOMB, format="png"))
        client = TestClient(create_app(location, archive=archive))
        page = client.get(f"/view?pdi={urllib.parse.quote(name, safe='')}")
        # its size read from the header alone, as rect= reads it (tests/test_fragments_image_big.py): nothing decoded
        assert page.status_code == 200, page.text[:300]
        assert 'data-width="100000" data-height="100000" data-frames="1"' in page.text
        whole = client.get(f"/uri-res/N2R?{name}")
        assert whole.status_code == 200 and whole.content == BOMB
        crop = client.get(f"/uri-res/N2R?{name}%23crop=(0,0),(10,10)")
        assert crop.status_code == 400 and crop.json()["title"] == "limit exceeded"


def _figure_image(page: str) -> str:
    """The ``src`` of the viewer's ``<img id="image">``, unescaped."""
    return html.unescape(page.split('<img id="image" src="', 1)[1].split('"', 1)[0])


def test_the_viewer_draws_no_image_of_more_pixels_than_a_browser_decodes(location: str) -> None:
    # 10^10 pixels are 40 GB decoded: the page outlines the region on a stand-in of the image's shape (an SVG of a
    # few hundred octets, drawn at the size shown) and links the octets, it does not make the browser decode them
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, BOMB, format="png"))
        client = TestClient(create_app(location, archive=archive))
        page = client.get(f"/view?pdi={urllib.parse.quote(name + '#rect=(25000,50000),(75000,100000)', safe='')}")
        assert page.status_code == 200, page.text[:300]
        shown = _figure_image(page.text)
        assert shown.startswith("data:image/svg+xml,") and "N2R" not in shown
        assert "viewBox='0 0 100000 100000'" in urllib.parse.unquote(shown)
        assert 'style="left:25.0000%;top:50.0000%;width:50.0000%;height:50.0000%"' in page.text
        assert "10,000,000,000 pixels" in page.text and f'href="/uri-res/N2R?{name}"' in page.text


def test_a_large_image_of_frames_is_not_shown_by_crops_refused(location: str) -> None:
    # a GIF of two 20,000 × 10,000 frames (more than Pillow opens): each frame would be shown by a crop, which is
    # refused past Pillow's bound (a broken image); a stand-in is shown for every frame instead
    frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, 20_000, 10_000, 0) + b"\x02\x02\x4c\x01\x00"
    gif = b"GIF89a" + struct.pack("<HHBBB", 20_000, 10_000, 0, 0, 0) + frame * 2 + b"\x3b"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, gif, format="gif"))
        client = TestClient(create_app(location, archive=archive))
        page = client.get(f"/view?pdi={urllib.parse.quote(name + '#rect=(0,0),(10,10),1', safe='')}")
        assert page.status_code == 200, page.text[:300]
        assert 'data-width="20000" data-height="10000" data-frames="2"' in page.text
        assert _figure_image(page.text).startswith("data:image/svg+xml,")
        assert "crop" not in page.text.split('id="figure"', 1)[1].split("</fieldset>", 1)[0]


def test_a_large_image_of_more_frames_than_are_listed_is_chosen_by_number_on_its_stand_in(location: str) -> None:
    # 600 frames: chosen by number, each number put after the stand-in's address (a fragment of it, the same image)
    frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, 20_000, 10_000, 0) + b"\x02\x02\x4c\x01\x00"
    gif = b"GIF89a" + struct.pack("<HHBBB", 20_000, 10_000, 0, 0, 0) + frame * 600 + b"\x3b"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, gif, format="gif"))
        client = TestClient(create_app(location, archive=archive))
        page = client.get(f"/view?pdi={urllib.parse.quote(name + '#rect=(0,0),(10,10),599', safe='')}")
        assert page.status_code == 200, page.text[:300]
        chooser = html.unescape(page.text.split('id="frame"', 1)[1].split(">", 1)[0])
        assert 'max="599"' in chooser and 'value="599"' in chooser
        assert chooser.split('data-src="', 1)[1].startswith("data:image/svg+xml,") and "crop" not in chooser
