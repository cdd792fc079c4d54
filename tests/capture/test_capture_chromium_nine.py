"""pdi's MHTML files open in Chromium as the live page did: nine pages, both ways (issue 12).

The nine pages of ``nine_pages.py`` (windows-1251 and Shift_JIS pages with queries and
style sheets without a charset, non-ASCII file names, a relative ``<base>``, ``@font-face``
with ``?#iefix`` and a fragment, ``<iframe srcdoc>``, frames, ``@import`` chains, srcset and
SVG) are served on 127.0.0.1, each resource only at the request target Chromium sends for
it. Debian's Chromium, driven over the DevTools protocol, loads (a) the live page over
HTTP, (b) the file ``pdi capture`` made of it and the file ``pdi mhtml pack`` made of the
same files on disk, opened from ``file:`` (Chromium reads a ``.mhtml`` file as an MHTML
archive), and (c) what ``pdi mhtml unpack`` wrote of each. For every frame of each it
records what loaded: every image's ``naturalWidth`` (each image of the site has its own
width), each styled element's colour and background, the fonts' status
(``document.fonts``) and the text; and it takes a screenshot of the viewport. Each of
(b) and (c) must match (a): the same records, and not one pixel different. The live load
must have asked for every resource of the page, so a page that does not load in full
live cannot pass unnoticed. ``pdi mhtml check`` must find nothing the pages need missing.
"""

from __future__ import annotations

import base64
import io
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from nine_pages import PAGES, Served, site, write_folder
from PIL import Image, ImageChops

from chromium_helpers import navigate_and_wait_for_load
from pdi.capture import capture, capture_with_browser, pack_path, unpack_to
from pdi.capture.browser import Pipe, devtools
from pdi.mhtml import check, parse
from pdi.mhtml.unpack import plan

SITE = site()
BY_TARGET = {r.target: r for r in SITE}
REQUESTED: list[str] = []


class Handler(BaseHTTPRequestHandler):
    """Answers a resource only at its exact request target; 404 for anything else."""

    def do_GET(self) -> None:
        REQUESTED.append(self.path)
        found = BY_TARGET.get(self.path)
        if found is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", found.content_type)
        self.send_header("Content-Length", str(len(found.body)))
        self.end_headers()
        self.wfile.write(found.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


# What loaded in one frame: images, styles, fonts, text.
SUMMARY = """(async () => {
  await document.fonts.ready;
  const images = [...document.querySelectorAll('img, input[type=image]')].map(
    i => i.tagName === 'IMG' ? i.naturalWidth : i.complete);
  const styled = [...document.querySelectorAll('[class]')].map(e => {
    const s = getComputedStyle(e);
    return e.className + ' ' + s.color + ' ' + (s.backgroundImage === 'none' ? 'none' : 'image');
  });
  const fonts = [...document.fonts].map(f => f.family + ' ' + f.status);
  return {images, styled, fonts, text: document.body ? document.body.innerText : null};
})()"""


@dataclass(frozen=True)
class Rendered:
    """What Chromium showed of one page: a record per frame (frame tree order), and pixels."""

    frames: list[Any]
    screenshot: Image.Image


def _frame_ids(node: dict[str, Any]) -> list[str]:
    out = [node["frame"]["id"]]
    for child in node.get("childFrames", []):
        out.extend(_frame_ids(child))
    return out


def render(pipe: Pipe, url: str) -> Rendered:
    """Open ``url`` in a new 800×500 tab; after the load event, what each frame loaded."""
    deadline = time.monotonic() + 60
    target = pipe.call("Target.createTarget", {"url": "about:blank"}, None, deadline)["targetId"]
    session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True}, None, deadline)["sessionId"]
    try:
        pipe.call("Page.enable", None, session, deadline)
        pipe.call("Runtime.enable", None, session, deadline)
        metrics = {"width": 800, "height": 500, "deviceScaleFactor": 1, "mobile": False}
        pipe.call("Emulation.setDeviceMetricsOverride", metrics, session, deadline)
        pipe.events.clear()
        contexts: dict[str, int] = {}

        def seen(message: dict[str, Any]) -> None:
            if message.get("method") == "Runtime.executionContextCreated":
                aux = message["params"]["context"].get("auxData", {})
                if aux.get("isDefault"):
                    contexts[aux["frameId"]] = message["params"]["context"]["id"]

        navigate_and_wait_for_load(pipe, session, url, deadline, seen)
        until = time.monotonic() + 0.5
        while (message := pipe.events.pop(0) if pipe.events else pipe.receive(until)) is not None:
            seen(message)
        tree = pipe.call("Page.getFrameTree", None, session, deadline)["frameTree"]
        frames: list[Any] = []
        for frame in _frame_ids(tree):
            evaluate = {"expression": SUMMARY, "contextId": contexts[frame], "returnByValue": True, "awaitPromise": True}
            frames.append(pipe.call("Runtime.evaluate", evaluate, session, deadline)["result"]["value"])
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)["data"]
        return Rendered(frames, Image.open(io.BytesIO(base64.b64decode(shot))).convert("RGB"))
    finally:
        pipe.call("Target.closeTarget", {"targetId": target}, None, time.monotonic() + 30)


def pixels_differing(a: Image.Image, b: Image.Image) -> int:
    """How many pixels differ by more than 16 in some channel (different sizes: all of them)."""
    if a.size != b.size:
        return a.size[0] * a.size[1]
    red, green, blue = ImageChops.difference(a, b).split()
    largest = ImageChops.lighter(ImageChops.lighter(red, green), blue)
    return largest.point(lambda v: 255 if v > 16 else 0).histogram()[255]


@pytest.fixture(scope="module")
def pipe() -> Any:
    with devtools() as p:
        yield p


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    write_folder(SITE, out)
    return out


def _own(name: str) -> list[Served]:
    return [r for r in SITE if r.target.startswith(f"/{name}/") and r.shown]


@pytest.mark.parametrize("name", PAGES)
def test_pdi_files_open_in_chromium_as_the_live_page(
    pipe: Pipe, server: str, folder: Path, tmp_path: Path, name: str
) -> None:
    url = f"{server}/{name}/index.html"
    REQUESTED.clear()
    live = render(pipe, url)
    missing = [r.target for r in _own(name) if r.target not in REQUESTED]
    assert missing == [], "the live page itself did not load in full"

    files = {
        "capture": capture(url, allow_private=True).mhtml,
        "pack": pack_path(folder / name / "index.html").mhtml,
        "browser": capture_with_browser(url, allow_private=True, settle=0.3).mhtml,
    }
    for kind, data in files.items():
        report = check(parse(data))
        assert report.errors == ()
        unsatisfied = [f.message for f in report.warnings if f.code == "unsatisfied-reference"]
        if kind == "browser":
            # What the browser did not load (an EOT font, the srcset and <picture> candidates
            # it did not choose) is not in its capture, and nothing else is missing.
            not_loaded = {server + r.target for r in SITE if not r.shown}
            unsatisfied = [
                m for m in unsatisfied
                if m.rsplit(" -> ", 1)[1].removesuffix(" is in no part").split("#", 1)[0] not in not_loaded
            ]
        assert unsatisfied == []

        archive = tmp_path / f"{kind}.mhtml"
        archive.write_bytes(data)
        opened = render(pipe, archive.as_uri())
        assert opened.frames == live.frames, f"{kind}: Chromium opening the file"
        assert pixels_differing(opened.screenshot, live.screenshot) == 0, f"{kind}: Chromium opening the file"

        out = tmp_path / f"{kind}-unpacked"
        unpack_to(plan(parse(data)), out)
        unpacked = render(pipe, (out / "index.html").as_uri())
        assert unpacked.frames == live.frames, f"{kind}: the unpacked folder"
        assert pixels_differing(unpacked.screenshot, live.screenshot) == 0, f"{kind}: the unpacked folder"
