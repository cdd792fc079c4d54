"""A viewer opened at a passage shows it, and the first Tab still stops on the way past the header.

The page's script scrolls the passage (a text's characters, an image's region,
a stretch of sound or video, a PDF's passage) into view. Scrolled there with
``scrollIntoView``, Chromium took the passage as where sequential focus
navigation starts: the first Tab went to the next stop after it, the footer's
"API reference", past the text's own controls and the cite panel, which come
before the text. WCAG 2.2 §2.4.3 (Focus Order, level A) asks for an order that
keeps the page operable; the reader asked for the passage to be shown, not for
the focus to leave the page's controls behind. So the first Tab stops on the
skip link, the first stop of every page (test_server_skip_link.py), and the
passage is still in view.
"""

from __future__ import annotations

import base64
import json
import time

import pytest
from server_helpers import Served
from test_server_keyboard import _js, _key, _keyboard_tab
from test_server_pages_screenshots import SHOTS, page_url

from pdi.capture.browser import devtools

#: page of test_server_pages_screenshots.PAGES -> the element the script scrolls into view once the page is ready
SHOWN = {
    "text": "#passage",
    "long-text": "#passage",
    "email": "#passage",
    "image": "#cited",
    "sound": "#wave",
    "video": "#clip",
    "video-region": "#cited",
    "pdf": ".pdf-marks .hl",
}

#: Whether the element is laid out and whole in the window (vertically): null while it is not there yet.
IN_VIEW = """(() => { const e = document.querySelector(%s); if (!e) return null; const r = e.getBoundingClientRect();
  return r.height > 0 && r.top >= -1 && r.bottom <= innerHeight + 1; })()"""


@pytest.mark.parametrize("page", list(SHOWN))
def test_a_passage_is_shown_and_the_first_tab_offers_to_skip_the_header(
    served: Served, media: tuple[str, dict[str, str]], page: str
) -> None:
    with devtools() as pipe:
        session = _keyboard_tab(pipe, page_url(served, media, page))
        deadline = time.monotonic() + 30
        while not _js(pipe, session, IN_VIEW % json.dumps(SHOWN[page])):  # a PDF's passage is drawn after the load
            assert time.monotonic() < deadline, f"{page}: {SHOWN[page]} never came into view"
            time.sleep(0.1)
        time.sleep(0.3)  # and any later scroll (an image's load, a PDF's page) has happened
        scrolled = _js(pipe, session, "scrollY")
        _key(pipe, session, "Tab", 9)
        first = json.loads(_js(pipe, session, "JSON.stringify([document.activeElement.tagName.toLowerCase(),"
                                              " document.activeElement.getAttribute('href'),"
                                              " (document.activeElement.textContent || '').trim().slice(0, 40)])"))
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"passage-first-tab-{page}.png").write_bytes(base64.b64decode(shot["data"]))
    assert first == ["a", "#main", "Skip to the content"], f"{page}: the first Tab went to {first}"
    assert scrolled > 0 or page in ("text", "email"), f"{page}: not scrolled to its passage"
