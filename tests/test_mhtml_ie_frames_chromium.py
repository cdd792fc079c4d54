"""Internet Explorer's framed page unpacks to the frameset Chromium shows when it opens the file (issue 22).

``tests/data/ie/framed.mht`` is written in Internet Explorer's shape (see
tests/data/README.md): the frameset first, under ``type="multipart/alternative"``, each
frame a multipart/alternative of its own (text/plain, then text/html carrying the
Content-Location), then an image. Debian's Chromium opens the file itself (a ``.mht``
from ``file:`` is read as an MHTML archive) and then the folder ``pdi mhtml unpack``
made of it: the same frameset, the same frames with the same text, colours and image,
and not one pixel different. The screenshot of the unpacked page is kept as
``ie-framed-unpacked.png`` in the test's folder.
"""

from __future__ import annotations

import base64
import io
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops

from chromium_helpers import navigate_and_wait_for_load
from pdi.capture import unpack_to
from pdi.capture.browser import Pipe, devtools
from pdi.mhtml import parse
from pdi.mhtml.unpack import plan

FRAMED = Path(__file__).parent / "data" / "ie" / "framed.mht"

SUMMARY = """(() => ({
  title: document.title,
  frameset: [...document.querySelectorAll('frameset')].map(f => f.cols),
  frames: [...document.querySelectorAll('frame')].map(f => f.name),
  text: document.body && document.body.tagName === 'BODY' ? document.body.innerText : null,
  background: document.body ? getComputedStyle(document.body).backgroundColor : null,
  images: [...document.images].map(i => i.naturalWidth),
}))()"""


def _frame_ids(node: dict[str, Any]) -> list[str]:
    return [node["frame"]["id"], *(i for child in node.get("childFrames", []) for i in _frame_ids(child))]


def _render(pipe: Pipe, url: str) -> tuple[list[Any], Image.Image]:
    """Open ``url`` at 800×500: a record of each frame (frame tree order), and the pixels."""
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
            if message.get("method") == "Runtime.executionContextCreated" and message.get("sessionId") == session:
                aux = message["params"]["context"].get("auxData", {})
                if aux.get("isDefault"):
                    contexts[aux["frameId"]] = message["params"]["context"]["id"]

        navigate_and_wait_for_load(pipe, session, url, deadline, seen)
        until = time.monotonic() + 0.5
        while (message := pipe.events.pop(0) if pipe.events else pipe.receive(until)) is not None:
            seen(message)
        tree = pipe.call("Page.getFrameTree", None, session, deadline)["frameTree"]
        frames = []
        for frame in _frame_ids(tree):
            evaluate = {"expression": SUMMARY, "contextId": contexts[frame], "returnByValue": True}
            frames.append(pipe.call("Runtime.evaluate", evaluate, session, deadline)["result"]["value"])
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)["data"]
        return frames, Image.open(io.BytesIO(base64.b64decode(shot))).convert("RGB")
    finally:
        pipe.call("Target.closeTarget", {"targetId": target}, None, time.monotonic() + 30)


@pytest.fixture(scope="module")
def pipe() -> Iterator[Pipe]:
    with devtools() as p:
        yield p


def test_unpacked_ie_framed_page_renders_the_frameset_as_chromium_opens_the_file(pipe: Pipe, tmp_path: Path) -> None:
    archive = tmp_path / "framed.mht"
    shutil.copyfile(FRAMED, archive)
    opened, opened_pixels = _render(pipe, archive.as_uri())
    # What Chromium shows of the file itself: the frameset, and each frame's page.
    assert opened[0]["title"] == "Framed page" and opened[0]["frameset"] == ["40%,60%"]
    assert [f["text"] for f in opened[1:]] == ["Contents\n\nChapter one", "Chapter one\n\nIt was a dark and stormy night."]
    assert [f["images"] for f in opened] == [[], [], [1]]

    out = tmp_path / "unpacked"
    unpack_to(plan(parse(FRAMED.read_bytes())), out)
    unpacked, unpacked_pixels = _render(pipe, (out / "index.html").as_uri())
    unpacked_pixels.save(tmp_path / "ie-framed-unpacked.png")
    assert unpacked == opened
    difference = ImageChops.difference(opened_pixels, unpacked_pixels)
    assert opened_pixels.size == unpacked_pixels.size and difference.getbbox() is None
