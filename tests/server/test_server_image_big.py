"""A map scan of 250 million pixels (more than Pillow opens) cited by ``rect`` through ``pdi serve`` and the viewer.

N2R of ``NAME#rect=…`` answers the stored octets whole, its canonical ``Link`` naming the region; ``/api/resolve``
says the region and the image's size, read from its header alone; the viewer outlines the region on the server's
preview of it (a browser is not asked to decode a gigabyte); a ``crop`` is cut by libvips, streaming. The PNG is
real (tests/support/big_image.py).
"""

from __future__ import annotations

import html
import io
import json
import urllib.parse
from pathlib import Path

import httpx
import pytest
from PIL import Image
from server_helpers import serving
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app
from support.big_image import grey_png

S = "maps.library.example.us"
WIDTH, HEIGHT = 20_000, 12_500


@pytest.fixture(scope="module")
def map_scan() -> bytes:
    return grey_png(WIDTH, HEIGHT)


def test_rect_through_pdi_serve_answers_the_octets_and_the_region(tmp_path: Path, map_scan: bytes) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, map_scan, format="png"))
    with serving(location) as (_, port):
        base = f"http://127.0.0.1:{port}"
        answer = httpx.get(f"{base}/uri-res/N2R?{name}%23rect=(4000,3000),(6000,4500)", timeout=60)
        assert answer.status_code == 200 and answer.content == map_scan
        assert answer.headers["content-type"] == "image/png" and "warning" not in answer.headers
        assert answer.headers["link"].startswith(f'<{name}#rect=(4000,3000),(6000,4500)>; rel="canonical"')
        said = httpx.get(f"{base}/api/resolve", params={"pdi": f"{name}#rect=(4000,3000),(6000,4500)"}, timeout=60)
        assert said.status_code == 200 and said.json()["fragment"]["region"] == {
            "x1": 4000, "y1": 3000, "x2": 6000, "y2": 4500, "frame": 0, "width": WIDTH, "height": HEIGHT, "frames": 1}
        clamped = httpx.get(f"{base}/uri-res/N2R?{name}%23rect=(19000,12000),(21000,13000)", timeout=60)
        assert clamped.status_code == 200 and clamped.content == map_scan and "past the end" in clamped.headers["warning"]
        # cut by libvips in a bounded child of the resolver's worker (tests/test_fragments_image_streamed.py)
        crop = httpx.get(f"{base}/uri-res/N2R?{name}%23crop=(19990,12490),(20000,12500)", timeout=60)
        assert crop.status_code == 200 and crop.headers["content-type"] == "image/png"
        with Image.open(io.BytesIO(crop.content)) as cut:
            assert (cut.size, cut.mode, cut.getextrema()) == ((10, 10), "L", (0x80, 0x80))


def test_the_viewer_outlines_the_region_over_the_whole_image(location: str, map_scan: bytes) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, map_scan, format="png"))
        client = TestClient(create_app(location, archive=archive))
        page = client.get(f"/view?pdi={urllib.parse.quote(name + '#rect=(5000,2500),(15000,10000)', safe='')}")
        assert page.status_code == 200, page.text[:300]
        assert f'data-width="{WIDTH}" data-height="{HEIGHT}" data-frames="1"' in page.text
        # the cited box, in percent of the image: 25 % from the left, 20 % from the top, half wide, 60 % high
        assert 'style="left:25.0000%;top:20.0000%;width:50.0000%;height:60.0000%"' in page.text
        box = page.text.split('id="cited"', 1)[1].split('title="', 1)[1].split('"', 1)[0]
        assert json.loads(html.unescape(box))["width"] == WIDTH
        # 250 million pixels are a gigabyte decoded: the server's preview is drawn (tests/server/
        # test_server_image_preview.py), and its octets linked
        preview = f"/api/image/preview?pdi={urllib.parse.quote(name, safe='')}"
        assert f'<img id="image" src="{html.escape(preview)}"' in page.text and "250,000,000 pixels" in page.text
        assert f'<a href="/uri-res/N2R?{name}">the bytes</a>' in page.text
