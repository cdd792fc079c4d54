"""Every page of the resolver as a reader sees it: opened in Chromium, checked, and saved as a screenshot.

The screenshots go to ``tests/artifacts/screenshots/`` (ignored by git; or
``$PDI_SCREENSHOTS``) for a person to look at after a run. Each page is also
checked for what must be on it, so a blank or broken page fails.
"""

from __future__ import annotations

import base64
import os
import time
import urllib.parse
from pathlib import Path

import pytest
from server_helpers import Served

from chromium_helpers import open_page
from pdi.capture.browser import devtools

SHOTS = Path(os.environ.get("PDI_SCREENSHOTS") or Path(__file__).resolve().parents[1] / "artifacts" / "screenshots")

#: page name -> (what to open, a JavaScript expression that must be true on it)
PAGES = {
    "home": ("/", "document.querySelector('input, form') !== null && document.body.innerText.includes('library.example.us')"),
    "text": ("/view?pdi={text}%23char=7,12", "document.querySelector('mark') && document.querySelector('mark').textContent === 'world'"),
    "html-source": ("/view?pdi={page}%23elt=1,1", "document.querySelector('mark') !== null"),
    "image": ("/view?pdi={picture}%23(10,5),(30,25)", "document.querySelector('img') && document.querySelector('img').naturalWidth === 40"),
    "sound": ("/view?pdi={sound}", "document.querySelector('audio') !== null"),
    # a text over 1 MiB: a window around the passage, scrolled into view, selections named from the whole
    "long-text": ("/view?pdi={long}%23line=100000,100001", "document.getElementById('passage').textContent === '0100000 line of a long text\\n'"
                  " && window.scrollY > 1000 && Number(document.getElementById('text').dataset.offset) > 0"),
    "generic": ("/view?pdi={versioned}", "document.querySelectorAll('#versions tbody tr').length === 2"),
    "error": ("/view?pdi=urn:pdi://nowhere.example.us/2026/11/22/1.text.1", "document.querySelector('.error') !== null"),
}


@pytest.mark.parametrize("page", list(PAGES))
def test_each_page_shows_what_it_must_and_is_saved(served: Served, page: str) -> None:
    path, check = PAGES[page]
    names = {k: urllib.parse.quote(getattr(served, k), safe="") for k in ("text", "page", "picture", "sound", "versioned", "long")}
    url = served.url + path.format(**names)
    with devtools() as pipe:
        session = open_page(pipe, url)
        deadline = time.monotonic() + 30
        size = {"width": 1100, "height": 700, "deviceScaleFactor": 1, "mobile": False}
        pipe.call("Emulation.setDeviceMetricsOverride", size, session, deadline)
        shown = pipe.call("Runtime.evaluate", {"expression": f"!!({check})", "returnByValue": True}, session, deadline)
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)
    assert shown["result"]["value"] is True, f"{page}: {check}"
    png = base64.b64decode(shot["data"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"{page}.png").write_bytes(png)
