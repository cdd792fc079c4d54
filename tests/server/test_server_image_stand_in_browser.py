"""The viewer's stand-in for an image too large for a browser to decode, in Chromium.

A PNG of a few dozen octets whose header claims 100,000 × 100,000 pixels: the page draws a blank SVG of its shape in
place of it, the cited region outlined on it where the name puts it, and a box dragged on the stand-in is named in
the image's own pixels (x = round(CSS offset × 100,000 / CSS width)).
"""

from __future__ import annotations

import base64
import json
import time
import urllib.parse
from pathlib import Path

from server_helpers import pixel_bomb, serving
from test_server_pages_screenshots import SHOTS

from chromium_helpers import open_page
from pdi.archive import Archive
from pdi.capture.browser import Pipe, devtools

S = "maps.library.example.us"


def _js(pipe: Pipe, session: str, expression: str) -> object:
    result = pipe.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True},
                       session, time.monotonic() + 30)
    return result["result"].get("value")


def _box(pipe: Pipe, session: str, key: str) -> list[float]:
    found = _js(pipe, session, f"(() => {{ const r = document.getElementById({json.dumps(key)}).getBoundingClientRect();"
                               " return [r.left, r.top, r.width, r.height]; })()")
    assert isinstance(found, list)
    return [float(v) for v in found]


def test_the_stand_in_shows_the_region_and_names_a_dragged_box(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, pixel_bomb(100_000, 100_000), format="png"))
    cited = name + "#rect=(25000,50000),(75000,100000)"
    with serving(location) as (_, port), devtools() as pipe:
        session = open_page(pipe, f"http://127.0.0.1:{port}/view?pdi={urllib.parse.quote(cited, safe='')}")
        pipe.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1100, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session, time.monotonic() + 30)
        assert _js(pipe, session, "document.getElementById('image').complete"
                                  " && document.getElementById('image').naturalWidth") == 960
        left, top, width, height = _box(pipe, session, "image")
        assert abs(width - height) < 1 and width > 100  # the image's shape, a square
        box = _box(pipe, session, "cited")
        expected = [left + width / 4, top + height / 2, width / 2, height / 2]
        assert all(abs(a - b) < 1 for a, b in zip(box, expected, strict=True)), (box, expected)
        SHOTS.mkdir(parents=True, exist_ok=True)  # what a reader sees: the stand-in, the region outlined on it
        (SHOTS / "viewer-image-stand-in-1100.png").write_bytes(base64.b64decode(
            pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)["data"]))
        _js(pipe, session, "window.scrollTo(0, 0)")  # and the page's top: the note that says why, and the bytes
        (SHOTS / "viewer-image-stand-in-1100-top.png").write_bytes(base64.b64decode(
            pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)["data"]))
        # the corners typed in: the page names them and checks them with /api/resolve
        _js(pipe, session, """(() => { for (const [k, v] of [["x1", 10], ["y1", 20], ["x2", 99990], ["y2", 50000]]) {
              const input = document.getElementById(k); input.value = v;
              input.dispatchEvent(new Event("change")); } })()""")
        offered = _js(pipe, session, """(async () => {
          const input = document.getElementById("name"), until = performance.now() + 20000;
          while (input.dataset.state !== "verified" && input.dataset.state !== "error" && performance.now() < until)
            await new Promise((resolve) => setTimeout(resolve, 25));
          return input.dataset.state === "verified" ? input.value : "error: " + input.dataset.error; })()""")
        assert offered == name + "#rect=(10,20),(99990,50000)"
