"""An image whose header claims more pixels than Pillow will open (a "pixel bomb", 100,000 × 100,000 in a file of
a few dozen octets) is not a 500 in the viewer (found by a tester: the viewer's page failed with Pillow's
``DecompressionBombError``): its size is read from the header alone, as ``rect`` reads it, and its crop is a
typed limit. Its octets are still served whole.

The PNG is written here by its specification (PNG §5: the signature, an IHDR of width, height, bit depth 8 and
colour type 0, each chunk with its CRC-32, then IEND): Pillow refuses to open more than twice
``Image.MAX_IMAGE_PIXELS`` (89,478,485), and 10^10 is more.
"""

from __future__ import annotations

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
