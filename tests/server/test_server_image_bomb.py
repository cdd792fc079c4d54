"""An image whose header claims more pixels than Pillow will open (a "pixel bomb", 100,000 × 100,000 in a file of
a few dozen octets) is a typed limit in the viewer, as its crop is, not a 500 (found by a tester: the viewer's
page failed with Pillow's ``DecompressionBombError``). Its octets are still served whole.

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


def test_a_pixel_bomb_is_a_limit_in_the_viewer_and_its_octets_are_served(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, BOMB, format="png"))
        client = TestClient(create_app(location, archive=archive))
        page = client.get(f"/view?pdi={urllib.parse.quote(name, safe='')}")
        assert page.status_code == 400, page.text[:300]  # a limit the request met, not a failure of the server
        assert "text/html" in page.headers["content-type"]  # the viewer's own page, saying so
        assert f"its header claims {100_000 * 100_000:,} pixels" in page.text and "limit exceeded" in page.text.lower()
        whole = client.get(f"/uri-res/N2R?{name}")
        assert whole.status_code == 200 and whole.content == BOMB
        crop = client.get(f"/uri-res/N2R?{name}%23crop=(0,0),(10,10)")
        assert crop.status_code == 400 and crop.json()["title"] == "limit exceeded"
