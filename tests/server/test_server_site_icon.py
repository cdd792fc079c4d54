"""The site's icon (``/favicon.ico``, ``/favicon.svg``): what a browser asks of its own accord gets an image.

Read back by tools other than the code that wrote it: Pillow's ICO and PNG
readers, the standard library's XML parser, and Chromium's image decoders.
"""

from __future__ import annotations

import io
import re
import time
import urllib.request
import urllib.robotparser
import xml.etree.ElementTree as ET
from pathlib import Path

from PIL import Image
from server_helpers import Served
from starlette.testclient import TestClient

from chromium_helpers import open_page
from pdi.archive import Archive
from pdi.capture.browser import devtools
from pdi.server import create_app
from pdi.server.pages.layout import STYLE


def _client(tmp_path: Path) -> TestClient:
    Archive.init(str(tmp_path / "archive")).close()
    return TestClient(create_app(str(tmp_path / "archive")))


def _header_colour() -> tuple[int, int, int]:
    """The header's background as the site's style sheet says it (``header.site{background:#RRGGBB``)."""
    found = re.search(r"header\.site\{background:#([0-9a-f]{6})", STYLE)
    assert found is not None
    return tuple(bytes.fromhex(found[1]))  # type: ignore[return-value]


def test_favicon_ico_is_a_32_pixel_icon_of_the_header_colour_with_a_white_letter(tmp_path: Path) -> None:
    client = _client(tmp_path)
    answer = client.get("/favicon.ico")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "image/x-icon"
    assert answer.headers["cache-control"] == "public, max-age=86400"
    icon = Image.open(io.BytesIO(answer.content))
    assert icon.format == "ICO" and icon.size == (32, 32)
    pixels = icon.convert("RGBA")
    assert pixels.getpixel((0, 0))[3] == 0  # the rounded corner: transparent
    assert pixels.getpixel((28, 29)) == (*_header_colour(), 255)  # the background, below the bowl
    assert pixels.getpixel((10, 20)) == (255, 255, 255, 255)  # the stem of the "p"
    assert pixels.getpixel((17, 14)) == (*_header_colour(), 255)  # the hole in the bowl
    assert pixels.getpixel((23, 14)) == (255, 255, 255, 255)  # the bowl's right side


def test_favicon_svg_is_svg_and_pages_name_it(tmp_path: Path) -> None:
    client = _client(tmp_path)
    answer = client.get("/favicon.svg")
    assert answer.status_code == 200 and answer.headers["content-type"] == "image/svg+xml"
    root = ET.fromstring(answer.content)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox") == "0 0 32 32"
    page = client.get("/series").text
    assert '<link rel="icon" href="/favicon.svg" type="image/svg+xml">' in page


def test_favicon_head_and_revalidation(tmp_path: Path) -> None:
    client = _client(tmp_path)
    got = client.get("/favicon.ico")
    head = client.head("/favicon.ico")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len(got.content)) == got.headers["content-length"]
    assert head.headers["etag"] == got.headers["etag"]
    again = client.get("/favicon.ico", headers={"If-None-Match": got.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == got.headers["etag"]
    other = client.get("/favicon.svg", headers={"If-None-Match": got.headers["etag"]})
    assert other.status_code == 200  # another file's tag
    assert client.post("/favicon.ico").status_code == 405


def test_chromium_decodes_both_icons(served: Served) -> None:
    with urllib.request.urlopen(served.url + "/favicon.ico") as answer:  # over the socket too, as pdi serve answers
        assert Image.open(io.BytesIO(answer.read())).size == (32, 32)
    decode = ("Promise.all([document.querySelector('link[rel=icon]').href, '/favicon.ico'].map((src) =>"
              " new Promise((done) => { const i = new Image(); i.onload = () => done(i.naturalWidth);"
              " i.onerror = () => done(-1); i.src = src; })))")
    with devtools() as pipe:
        session = open_page(pipe, served.url + "/series")
        widths = pipe.call("Runtime.evaluate", {"expression": decode, "awaitPromise": True, "returnByValue": True},
                           session, time.monotonic() + 30)
    assert widths["result"]["value"] == [32, 32]


def test_robots_txt_lets_crawlers_read_documents_and_not_search(tmp_path: Path) -> None:
    client = _client(tmp_path)
    answer = client.get("/robots.txt")
    assert answer.status_code == 200 and answer.headers["content-type"] == "text/plain; charset=utf-8"
    robots = urllib.robotparser.RobotFileParser()  # the standard library's reader of RFC 9309
    robots.parse(answer.text.splitlines())
    for path in ("/", "/series/library.example.us", "/view?pdi=urn:pdi://library.example.us/2026/11/26/1.text.1",
                 "/uri-res/N2R?urn:pdi://library.example.us/2026/11/26/1.text.1", "/favicon.ico"):
        assert robots.can_fetch("SomeBot/1.0", "http://testserver" + path), path
    for path in ("/search?q=court", "/api/search?q=court", "/api/resolve?pdi=x", "/signin", "/oai?verb=Identify",
                 "/timegate/urn:pdi://library.example.us/2026/11/26/1", "/timemap/link/http://example.com/"):
        assert not robots.can_fetch("SomeBot/1.0", "http://testserver" + path), path
