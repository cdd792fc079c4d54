"""Text that axe cannot judge (a single character: "content too short"), its contrast measured in Chromium.

WCAG 2.2 §1.4.3 asks 4.5:1 of text against its background (relative luminance and contrast ratio as WCAG defines
them: :func:`test_server_keyboard._contrast`); each colour is read from the page as Chromium computes it, its
background the first opaque one among the element and its ancestors, in the light scheme and the dark.
"""

from __future__ import annotations

import json
import time

import pytest
from server_helpers import Served
from test_server_keyboard import _contrast
from test_server_pages_screenshots import dark

from chromium_helpers import open_page
from pdi.capture.browser import devtools

#: [colour, background] of each element ``SELECTOR`` picks.
COLOURS = """JSON.stringify([...document.querySelectorAll(SELECTOR)].map((e) => { let bg = 'rgb(255, 255, 255)';
  for (let p = e; p; p = p.parentElement) {
    const c = getComputedStyle(p).backgroundColor; if (!/rgba\\(.*, 0\\)$/.test(c) && c !== 'transparent') { bg = c; break; } }
  return [getComputedStyle(e).color, bg]; }))"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_month_without_documents_is_said_legibly(served: Served, scheme: str) -> None:
    # the dot a series' table of years shows for a month with none: #aaa on white was 2.3:1
    with devtools() as pipe:
        session = open_page(pipe, served.url + "/series/library.example.us")
        if scheme == "dark":
            dark(pipe, session, time.monotonic() + 30)
        expression = COLOURS.replace("SELECTOR", json.dumps("#years td.empty"))
        pairs = json.loads(pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                                     session, time.monotonic() + 30)["result"]["value"])
    assert pairs, "no empty month on the page"
    faint = [(colour, bg, round(_contrast(colour, bg), 2)) for colour, bg in pairs if _contrast(colour, bg) < 4.5]
    assert faint == [], faint
