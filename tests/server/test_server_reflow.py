"""The narrowest phones: every control of the site's header inside the window, and no page scrolling sideways.

WCAG 2.1 §1.4.10 "Reflow" asks that content read without scrolling sideways
at 320 CSS px; phones are 320 (the first iPhone SE), 360 (most Android
phones) and 375 (the iPhone SE and mini) wide. The axe test checks a 390 px
phone; here the header, which every page shares, is measured in Chromium at
the narrower widths, on a few pages of different kinds. Screenshots:
``reflow-PAGE-WIDTH.png``.
"""

from __future__ import annotations

import time
import urllib.parse
from typing import Any

import pytest
from server_helpers import Served
from test_server_pages_screenshots import page_url
from test_server_pdf_viewer import _shoot

from chromium_helpers import open_page
from pdi.capture.browser import devtools

#: What sticks out of the window: the tags, ids and right edges of the header's controls past its right edge.
OUTSIDE = """[...document.querySelectorAll('header.site a, header.site input, header.site button, header.site label')]
  .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
  .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' ' + (e.textContent || '').trim()
       + ' right=' + Math.round(e.getBoundingClientRect().right))"""


@pytest.mark.parametrize("width", [320, 360, 375])
@pytest.mark.parametrize("page", ["home", "search", "text"])
def test_the_header_fits_the_narrowest_phones(served: Served, page: str, width: int) -> None:
    path = {"home": "/", "search": "/search?q=world",
            "text": "/view?pdi=" + urllib.parse.quote(served.text + "#char=7,12", safe="")}[page]
    with devtools() as pipe:
        session = open_page(pipe, served.url + path)
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 700, "deviceScaleFactor": 1,
                                                          "mobile": True}, session, deadline)

        def js(expression: str) -> object:
            return pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                             session, deadline)["result"]["value"]

        js("scrollTo(0, 0)")  # the header in the picture (a passage scrolls itself into view)
        _shoot(pipe, session, f"reflow-{page}-{width}.png")
        outside = js(OUTSIDE)
        widths = js("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        # the button of the page's one box to resolve a name: the header's Go, or the home page's own Resolve
        go = js("document.querySelector('form[action=\"/view\"] button').getBoundingClientRect().width")
    assert widths == [width, width], f"{page} at {width} px scrolls sideways: {widths}; outside: {outside}"
    assert outside == [], f"{page} at {width} px: the header's controls past the window's edge: {outside}"
    assert isinstance(go, (int, float)) and go > 20  # the button is drawn whole, not squeezed to nothing


@pytest.mark.parametrize("page", ["replay-select", "text"])
def test_a_names_box_is_wide_enough_to_read_on_a_phone(served: Served, page: str) -> None:
    # 390 px: each box a name appears in (the viewer's, and the tools above a replayed page for selecting) takes
    # the width under its label, as the viewer's does, not a column of 110 px beside it (a name is 60 characters
    # and more; the box shows at most a quarter of it)
    path = {"replay-select": "/view?pdi=" + urllib.parse.quote(served.capture, safe="") + "&select=1",
            "text": "/view?pdi=" + urllib.parse.quote(served.text, safe="")}[page]
    with devtools() as pipe:
        session = open_page(pipe, served.url + path)
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1,
                                                          "mobile": True}, session, deadline)
        boxes = pipe.call("Runtime.evaluate", {"expression": "[...document.querySelectorAll('.offer input')]"
                                               ".filter((i) => i.checkVisibility()).map((i) => i.getBoundingClientRect().width)",
                                               "returnByValue": True}, session, deadline)["result"]["value"]
        _shoot(pipe, session, f"reflow-{page}-names-390.png")
    # more than half the window: its paddings and a copy button and a link beside it take the rest
    assert boxes and min(boxes) > 390 / 2, boxes


#: The words of a catalogue's cells (whole words, up to 12 letters between spaces) that a line break cuts in two, on the page.
CUT_WORDS = """(() => { const cut = [];
  for (const cell of document.querySelectorAll('table.catalogue td, table.catalogue th')) {
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      if (node.data.includes('://')) continue;  // a URL breaks anywhere, as in a browser's address bar
      for (const m of node.data.matchAll(/[^\\s/]+/g)) {  // a line may break after a slash (text/html)
        if (m[0].length > 12) continue;  // a name, a digest, a URL: these break anywhere
        const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].map((b) => Math.round(b.top)));
        if (tops.size > 1) cut.push(m[0]);
      }
    }
  }
  return cut; })()"""


@pytest.mark.parametrize("page", ["document", "series-day"])
def test_a_catalogue_table_on_a_phone_breaks_no_short_word(served: Served, page: str) -> None:
    # 390 px: a catalogue's table (cards there, each cell a line of its card) does not squeeze a key
    # ("title"), a title's words ("versions, retitled") or a person's name to a few letters a line
    path = {"document": "/view?pdi=" + urllib.parse.quote(served.versioned, safe=""),
            "series-day": "/series/library.example.us/2026/11/22"}[page]
    with devtools() as pipe:
        session = open_page(pipe, served.url + path)
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1,
                                                          "mobile": True}, session, deadline)
        cut = pipe.call("Runtime.evaluate", {"expression": CUT_WORDS, "returnByValue": True}, session, deadline)
        widths = pipe.call("Runtime.evaluate", {"expression": "[document.documentElement.scrollWidth,"
                                                " document.documentElement.clientWidth]", "returnByValue": True},
                           session, deadline)["result"]["value"]
        _shoot(pipe, session, f"reflow-{page}-table-390.png")
    assert cut["result"]["value"] == [], cut
    assert widths == [390, 390], widths


#: A series' table of years, its first year's card scrolled into view: each month's cell's [left, right, top], the
#: top of its total's, and the window's width.
MONTHS = """(() => { const year = document.querySelector('#years tbody tr'); year.scrollIntoView({block: 'start'});
  const box = (e) => e.getBoundingClientRect(), cells = [...year.querySelectorAll('td')];
  return [cells.slice(0, 12).map((td) => [box(td).left, box(td).right, Math.round(box(td).top)]),
          Math.round(box(cells[12]).top), innerWidth]; })()"""


@pytest.mark.parametrize(("width", "lines"), [(375, 3), (320, 4)])
def test_a_series_months_stand_side_by_side_in_a_years_card_on_a_phone(served: Served, width: int, lines: int) -> None:
    # a year's card on a phone: its twelve months, each a count or a dot under its name, four to a line (three at
    # 320 px), then its total; not a line each (a screen and a half a year), nor the table of fourteen columns
    # that scrolled four screens in its box to reach its total when each empty month was 112 px wide
    months, total, window = _evaluated(served.url + "/series/library.example.us", width, MONTHS,
                                       f"reflow-series-{width}.png")
    assert window == width
    tops = sorted({top for _, _, top in months})
    assert len(tops) == lines, months
    assert all(left >= 0 and right <= width for left, right, _ in months), months
    assert total > tops[-1], (total, months)  # the total under the months


#: The runs of letters and digits of a capture's URL in the page's heading that a line break cuts in two.
CUT_URL = """(() => { const cut = [];
  for (const url of document.querySelectorAll('.capture-title .url')) {
    const walk = document.createTreeWalker(url, NodeFilter.SHOW_TEXT), nodes = [];
    for (let node = walk.nextNode(); node; node = walk.nextNode()) nodes.push(node);
    for (const node of nodes) for (const m of node.data.matchAll(/[A-Za-z0-9]+/g)) {
      const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      if (new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size > 1) cut.push(m[0]);
    }
  }
  return cut; })()"""


@pytest.mark.parametrize("page", ["replay-capture", "capture-source"])
def test_a_captured_url_in_a_heading_breaks_between_its_parts_on_a_phone(served: Served, page: str) -> None:
    # 390 px: http://www.example.com/news/today.html is a little wider than the banner; it wraps after a slash or
    # before a dot (as a name in a heading does), not inside "html" leaving an "l" on a line of its own
    path = "/view?pdi=" + urllib.parse.quote(served.capture, safe="") + ("&view=source" if page == "capture-source" else "")
    with devtools() as pipe:
        session = open_page(pipe, served.url + path)
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1,
                                                          "mobile": True}, session, deadline)
        found = pipe.call("Runtime.evaluate", {"expression": f"[{CUT_URL}, document.querySelector('.capture-title .url')"
                                               ".textContent]", "returnByValue": True},
                          session, deadline)["result"]["value"]
        _shoot(pipe, session, f"reflow-{page}-url-390.png")
    cut, url = found
    assert url == "http://www.example.com/news/today.html"  # the URL reads back whole
    assert cut == [], found


def test_a_note_above_a_replayed_page_keeps_a_margin_from_the_screens_edges(served: Served) -> None:
    # 390 px: the note that a capture is a later one (or a citation's) stands inside the page's margins, as the
    # banner's text does (1 rem), not against the screen's edges with its rounded corners cut
    later = urllib.parse.quote("urn:pdi://oma.eop.gov.us/1994/10/20/http%3a%2f%2fwww%2eexample%2ecom%2fnews%2ftoday%2ehtml.html.1",
                               safe="")
    path = "/view?pdi=" + urllib.parse.quote(served.capture, safe="") + "&later=" + later
    with devtools() as pipe:
        session = open_page(pipe, served.url + path)
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1,
                                                          "mobile": True}, session, deadline)
        box = pipe.call("Runtime.evaluate", {"expression": "(() => { const r = document.getElementById('later-capture')"
                                             ".getBoundingClientRect(); return [r.left, r.right]; })()",
                                             "returnByValue": True}, session, deadline)["result"]["value"]
        _shoot(pipe, session, "reflow-later-capture-390.png")
    assert box[0] >= 8 and box[1] <= 390 - 8, box


#: The lines the SHA-256 of a tombstone's table is drawn on (their characters), and the page's [scrollWidth, clientWidth].
SHA_LINES = """(() => { const code = document.querySelector('#withdrawn code.sha'), text = code.firstChild, lines = new Map();
  for (let i = 0; i < text.data.length; i++) {
    const r = document.createRange(); r.setStart(text, i); r.setEnd(text, i + 1);
    const top = Math.round(r.getBoundingClientRect().top); lines.set(top, (lines.get(top) || 0) + 1); }
  return [[...lines.values()], [document.documentElement.scrollWidth, document.documentElement.clientWidth]]; })()"""


@pytest.mark.parametrize("width", [1100, 390])
def test_a_tombstones_sha256_is_whole_on_a_desktop_and_within_the_window_on_a_phone(
    served: Served, media: tuple[str, dict[str, str]], width: int
) -> None:
    # 1100 px: the 64 digits of a withdrawn version's SHA-256 stand on one line (they were cut 62 and 2, the
    # deposit time beside them kept on one line); on a phone they wrap within the table's card, the page no wider than the window
    with devtools() as pipe:
        session = open_page(pipe, page_url(served, media, "tombstone"))
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 700, "deviceScaleFactor": 1,
                                                          "mobile": width < 600}, session, deadline)
        lines, widths = pipe.call("Runtime.evaluate", {"expression": SHA_LINES, "returnByValue": True},
                                  session, deadline)["result"]["value"]
        _shoot(pipe, session, f"reflow-tombstone-{width}.png")
    assert sum(lines) == 64
    assert widths[0] == widths[1], f"the page scrolls sideways: {widths}"
    if width >= 1000:
        assert lines == [64], lines


#: A table's caption: its box's right edge, the window's width and the root's font size (1 rem).
CAPTION = """((table) => { const c = document.querySelector(table + ' caption').getBoundingClientRect();
  return [c.right, window.innerWidth, parseFloat(getComputedStyle(document.documentElement).fontSize)]; })"""


@pytest.mark.parametrize("page", ["series", "tombstone"])
def test_a_long_caption_of_a_table_wider_than_a_phone_stays_in_sight(
    served: Served, media: tuple[str, dict[str, str]], page: str
) -> None:
    # 390 px: a table's caption ("Documents by year and month", "What was here, as the catalog recorded it") was as
    # wide as its table, which scrolled in its box, the caption's end out of sight and faded; the table is cards
    # now, its caption within the page's margin (0.75 rem)
    table, margin = {"series": ("#years", 0.75), "tombstone": ("#withdrawn", 0.75)}[page]
    right, window, rem = _evaluated(page_url(served, media, page), 390, f"{CAPTION}('{table}')",
                                    f"reflow-{page}-caption.png")
    assert right <= window - margin * rem, (right, window, rem)


#: The home page's two forms: for each, its box's [left, right, top, bottom] and its button's [top, bottom].
HOME_FORMS = """[...document.querySelectorAll('main form.wide')].map((f) => {
  const i = f.querySelector('input').getBoundingClientRect(), b = f.querySelector('button').getBoundingClientRect();
  return [[i.left, i.right, i.top, i.bottom], [b.top, b.bottom]]; })"""


def test_the_home_pages_two_boxes_stand_one_under_the_other(served: Served) -> None:
    # 1100 px: "Resolve a name" and "Captures of a URL" are two rows of one form's shape: their boxes begin and end
    # at the same x (the second began 17 px further right, after its longer label), each button as tall as its box
    forms = _evaluated(served.url + "/", 1100, HOME_FORMS, "home-forms-1100.png")
    (box1, button1), (box2, button2) = forms
    assert abs(box1[0] - box2[0]) <= 1 and abs(box1[1] - box2[1]) <= 1, (box1, box2)
    for box, button in ((box1, button1), (box2, button2)):
        assert abs(box[2] - button[0]) <= 1 and abs(box[3] - button[1]) <= 1, (box, button)


#: The labels of the series' names in a page's table of series (between dots) that a line break cuts in two.
CUT_LABELS = """(() => { const cut = [];
  for (const code of document.querySelectorAll('#series td code')) {
    const walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) for (const m of node.data.matchAll(/[^.]+/g)) {
      const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      if (new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size > 1) cut.push(m[0]);
    }
  }
  return [cut, document.querySelectorAll('#series td code').length]; })()"""


@pytest.mark.parametrize("path", ["/", "/series"])
def test_a_series_name_in_a_table_wraps_between_its_labels_on_a_phone(served: Served, path: str) -> None:
    # 390 px: "elsewhere.example.us" in its cell wrapped as "elsewhere.e" and "xample.us"; a series name wraps
    # before a dot, as a name in a heading does (pdi.server.pages.layout.breakable)
    with devtools() as pipe:
        session = open_page(pipe, served.url + path)
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1,
                                                          "mobile": True}, session, deadline)
        cut, names = pipe.call("Runtime.evaluate", {"expression": CUT_LABELS, "returnByValue": True},
                               session, deadline)["result"]["value"]
        _shoot(pipe, session, f"reflow-series-names{path.replace('/', '-')}390.png")
    assert names >= 2
    assert cut == [], cut


def _evaluated(url: str, width: int, expression: str, shot: str) -> Any:
    """What ``expression`` gives on the page at ``url`` in a window ``width`` CSS px wide (a phone's below 600 px),
    the page shot as ``shot`` after."""
    with devtools() as pipe:
        session = open_page(pipe, url)
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 700, "deviceScaleFactor": 1,
                                                          "mobile": width < 600}, session, deadline)
        value = pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                          session, deadline)["result"]["value"]
        _shoot(pipe, session, shot)
    return value
