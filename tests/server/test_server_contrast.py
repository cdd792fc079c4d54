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
from test_server_pages_screenshots import dark, page_url

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


#: How a table's caption and its column headings are drawn: [text-align, font-weight, heading background].
CAPTION = """JSON.stringify([getComputedStyle(document.querySelector('table.catalogue caption')).textAlign,
  getComputedStyle(document.querySelector('table.catalogue caption')).fontWeight,
  getComputedStyle(document.querySelector('table.catalogue thead th')).backgroundColor])"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_tombstones_table_is_drawn_as_the_catalogues_tables(
    served: Served, media: tuple[str, dict[str, str]], scheme: str
) -> None:
    # the table of what was withdrawn had its caption centred in plain type and its headings on the page's
    # background, where every other table of the catalogue (a month's days) has it left, bold, on a tint
    drawn = []
    with devtools() as pipe:
        for url in (served.url + "/series/library.example.us/2026/11", page_url(served, media, "tombstone")):
            session = open_page(pipe, url)
            if scheme == "dark":
                dark(pipe, session, time.monotonic() + 30)
            drawn.append(json.loads(pipe.call("Runtime.evaluate", {"expression": CAPTION, "returnByValue": True},
                                              session, time.monotonic() + 30)["result"]["value"]))
    month, tombstone = drawn
    assert month[:2] == ["left", "600"], month  # as a catalogue's caption is drawn (docs: the catalogue's tables)
    assert tombstone == month
