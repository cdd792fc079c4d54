"""The reader's pages from the keyboard, in Chromium: every control labelled, reached by Tab, its focus visible, Enter acts.

Keys are sent as a keyboard sends them (``Input.dispatchKeyEvent``); what
has the focus, and how it is drawn, is read from the page.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.parse
from typing import Any

import pytest
from server_helpers import Served
from test_server_pages_screenshots import PAGES, SHOTS, dark, page_url

from chromium_helpers import clipboard_text, open_page
from pdi.capture.browser import Pipe, devtools

#: Every control of the page (an archived page's, in its frame, excepted) and what it is called, or why not.
CONTROLS = """JSON.stringify([...document.querySelectorAll("input, select, textarea, button")]
  .filter((c) => c.type !== "hidden")
  .map((c) => [c.id || c.name || c.outerHTML.slice(0, 60),
               [...c.labels].map((l) => l.textContent.trim()).join(" ") || c.getAttribute("aria-label")
               || (c.tagName === "BUTTON" ? c.textContent.trim() : "")]))"""

#: What has the focus: its tag, id, text, and whether its focus is drawn (an outline).
FOCUSED = """JSON.stringify((() => { const e = document.activeElement; const s = getComputedStyle(e);
  return [e.tagName.toLowerCase(), e.id, (e.textContent || "").trim().slice(0, 30), e.matches(":focus-visible"),
          s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 1]; })())"""


def _js(pipe: Pipe, session: str, expression: str) -> Any:
    answer = pipe.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True,
                                            "userGesture": True}, session, time.monotonic() + 30)
    assert "exceptionDetails" not in answer, answer
    return answer["result"].get("value")


def _key(pipe: Pipe, session: str, key: str, code: int, text: str = "", shift: bool = False) -> None:
    for kind in ("keyDown", "keyUp"):
        params: dict[str, Any] = {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code,
                                  "modifiers": 8 if shift else 0}
        if text and kind == "keyDown":
            params["text"] = text
        pipe.call("Input.dispatchKeyEvent", params, session, time.monotonic() + 30)


def _tab_to(pipe: Pipe, session: str, wanted: str, most: int = 40) -> list[list[Any]]:
    """Press Tab until the element of id ``wanted`` has the focus: every element focused on the way."""
    visited: list[list[Any]] = []
    for _ in range(most):
        _key(pipe, session, "Tab", 9)
        visited.append(json.loads(_js(pipe, session, FOCUSED)))
        if visited[-1][1] == wanted:
            return visited
    raise AssertionError(f"Tab never reached #{wanted}: {visited}")


def _keyboard_tab(pipe: Pipe, url: str) -> str:
    session = open_page(pipe, url)
    deadline = time.monotonic() + 30
    pipe.call("Emulation.setFocusEmulationEnabled", {"enabled": True}, session, deadline)
    size = {"width": 1100, "height": 700, "deviceScaleFactor": 1, "mobile": False}
    pipe.call("Emulation.setDeviceMetricsOverride", size, session, deadline)
    return session


@pytest.mark.parametrize("page", list(PAGES))
def test_every_control_of_a_page_has_a_label(served: Served, media: tuple[str, dict[str, str]], page: str) -> None:
    with devtools() as pipe:
        session = open_page(pipe, page_url(served, media, page))
        controls = json.loads(_js(pipe, session, CONTROLS))
    assert controls, page  # every page has at least the site's search and resolve boxes
    unlabelled = [key for key, label in controls if not label]
    assert unlabelled == [], f"{page}: controls without a label: {unlabelled}"
    # each copy button says what it copies
    copies = [label for key, label in controls if key.startswith("copy-")]
    assert len(set(copies)) == len(copies) and all(label.startswith("Copy the ") for label in copies), copies


def test_the_search_box_is_reached_by_tab_its_focus_shown_and_enter_searches(served: Served) -> None:
    with devtools() as pipe:
        session = _keyboard_tab(pipe, served.url + "/")
        visited = _tab_to(pipe, session, "site-q")
        # the way past the header first (test_server_skip_link.py), then the site's links in the order they are
        # read: home, series, then the search box
        assert [v[:2] for v in visited] == [["a", ""], ["a", ""], ["a", ""], ["input", "site-q"]]
        assert [v[2] for v in visited[:3]] == ["Skip to the content", "pdi", "Series"]
        assert all(v[3] and v[4] for v in visited), visited  # each focused control drawn with its focus ring
        pipe.call("Input.insertText", {"text": "world"}, session, time.monotonic() + 30)
        _key(pipe, session, "Enter", 13, "\r")
        deadline = time.monotonic() + 30
        while _js(pipe, session, "location.pathname + location.search") != "/search?q=world":
            assert time.monotonic() < deadline, "Enter did not search"
            time.sleep(0.05)
        _js(pipe, session, "new Promise((r) => document.readyState === 'complete' ? r() : addEventListener('load', r))")
        # the first hit is reached by Tab, and Enter opens its passage
        hit = _js(pipe, session, "document.querySelector('ol.hits a').getAttribute('href')")
        _js(pipe, session, "document.querySelector('ol.hits a').id = 'first-hit'")
        _tab_to(pipe, session, "first-hit")
        _key(pipe, session, "Enter", 13, "\r")
        while _js(pipe, session, "location.pathname + location.search + location.hash") != hit:
            assert time.monotonic() < deadline, "Enter did not open the hit"
            time.sleep(0.05)


def test_a_selections_name_is_copied_from_the_keyboard(served: Served) -> None:
    # "world" of "Hello, world.": PDI characters 7 to 12; the selection is made, the rest done by keys alone
    with devtools() as pipe:
        session = _keyboard_tab(pipe, f"{served.url}/view?pdi={urllib.parse.quote(served.text, safe='')}")
        pipe.call("Browser.grantPermissions", {"origin": served.url, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
                  None, time.monotonic() + 30)
        _js(pipe, session, """(() => { const t = document.getElementById("text").firstChild;
            const r = document.createRange(); const at = t.data.indexOf("world"); r.setStart(t, at); r.setEnd(t, at + 5);
            document.getSelection().removeAllRanges(); document.getSelection().addRange(r); })()""")
        deadline = time.monotonic() + 20
        while _js(pipe, session, "document.getElementById('name').dataset.state") != "verified":
            assert time.monotonic() < deadline, "the selection was not named"
            time.sleep(0.05)
        visited = _tab_to(pipe, session, "copy-name")
        assert visited[-1][3] and visited[-1][4]  # the copy button's focus is drawn
        _key(pipe, session, "Enter", 13, "\r")
        assert clipboard_text(pipe, session) == served.text + "#char=7,12"  # empty until the copy lands
        # the next stop is the link that opens it; Enter follows it
        _key(pipe, session, "Tab", 9)
        assert json.loads(_js(pipe, session, FOCUSED))[1] == "open-name"
        _key(pipe, session, "Enter", 13, "\r")
        while _js(pipe, session, "location.search") != "?pdi=" + urllib.parse.quote(served.text + "#char=7,12", safe=""):
            assert time.monotonic() < deadline, "Enter did not open the name"
            time.sleep(0.05)


#: The focused element's outline colour and the colour it is drawn on (the first ancestor's opaque background).
RING = """JSON.stringify((() => { const e = document.activeElement; let bg = 'rgb(255, 255, 255)';
  for (let p = e.parentElement; p; p = p.parentElement) {
    const c = getComputedStyle(p).backgroundColor; if (!/rgba\\(.*, 0\\)$/.test(c) && c !== 'transparent') { bg = c; break; } }
  return [e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' ' + (e.textContent || '').trim().slice(0, 20),
          getComputedStyle(e).outlineColor, bg]; })())"""


def _luminance(css: str) -> float:
    """WCAG 2.2's relative luminance of an ``rgb(r, g, b)`` colour (its definition in the glossary)."""
    channels = [int(c) / 255 for c in css[css.index("(") + 1:css.index(")")].split(",")[:3]]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(one: str, other: str) -> float:
    high, low = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_contrast_helper_is_wcags() -> None:
    assert round(_contrast("rgb(0, 0, 0)", "rgb(255, 255, 255)"), 2) == 21.0
    assert round(_contrast("rgb(118, 118, 118)", "rgb(255, 255, 255)"), 2) == 4.54  # #767676: WCAG's well-known 4.5:1 grey


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("page", ["home", "text", "error"])
def test_a_focus_ring_stands_out_from_what_it_is_drawn_on(
    served: Served, media: tuple[str, dict[str, str]], page: str, scheme: str
) -> None:
    # WCAG 2.2 §1.4.11: a focus indicator needs 3:1 against what is next to it, in the dark header and on the
    # white page alike, and on the page a system preferring a dark colour scheme gets; every stop Tab makes on the
    # page is checked
    with devtools() as pipe:
        session = _keyboard_tab(pipe, page_url(served, media, page))
        if scheme == "dark":
            dark(pipe, session, time.monotonic() + 30)
        rings = []
        for _ in range(18):
            _key(pipe, session, "Tab", 9)
            rings.append(json.loads(_js(pipe, session, RING)))
    # the body has the focus between the last stop and the first: no control is focused, no ring drawn
    faint = [(what, color, bg, round(_contrast(color, bg), 2)) for what, color, bg in rings
             if _contrast(color, bg) < 3 and not what.startswith("body ")]
    assert faint == [], faint


#: Where the focus is, for a walk through a table: [the index of its row in #documents' body (-1: outside the
#: table), its tag, its href, whether its focus is drawn, whether it is in view (its box within the window and,
#: on a phone, within the table's box, its cards)].
IN_TABLE = """JSON.stringify((() => { const e = document.activeElement, rows = [...document.querySelectorAll('#documents tbody tr')];
  const r = e.getBoundingClientRect(), box = document.getElementById('documents').getBoundingClientRect();
  const shown = r.top >= 0 && r.bottom <= innerHeight && r.left >= box.left - 1 && r.right <= box.right + 1;
  return [rows.indexOf(e.closest('tr')), e.tagName.toLowerCase(), e.getAttribute('href'),
          e.matches(':focus-visible') && getComputedStyle(e).outlineStyle !== 'none', shown]; })())"""


@pytest.mark.parametrize("width", [1100, 375])
def test_each_row_of_a_days_table_is_reached_by_tab_and_enter_opens_its_document(served: Served, width: int) -> None:
    # WAI-ARIA APG (tables): a table whose rows lead somewhere is read by Tab from link to link, in reading order,
    # each link's focus drawn (on a phone too, where the table is cards and a link is scrolled to)
    with devtools() as pipe:
        session = _keyboard_tab(pipe, page_url(served, ("", {}), "series-day"))
        size = {"width": width, "height": 700, "deviceScaleFactor": 1, "mobile": width < 600}
        pipe.call("Emulation.setDeviceMetricsOverride", size, session, time.monotonic() + 30)
        rows = _js(pipe, session, "document.querySelectorAll('#documents tbody tr').length")
        stops = []
        for _ in range(40):
            _key(pipe, session, "Tab", 9)
            stop = json.loads(_js(pipe, session, IN_TABLE))
            if stop[0] == -1 and stops:
                break
            if stop[0] >= 0:
                stops.append(stop)
        first = _js(pipe, session, "document.querySelector('#documents tbody tr a').getAttribute('href')")
        _js(pipe, session, "document.querySelector('#documents tbody tr a').focus()")
        _key(pipe, session, "Enter", 13, "\r")
        deadline = time.monotonic() + 30
        while _js(pipe, session, "location.pathname + location.search") != first:
            assert time.monotonic() < deadline, "Enter did not open the row's document"
            time.sleep(0.05)
    assert rows >= 2
    assert sorted({s[0] for s in stops}) == list(range(rows)), stops  # every row reached
    assert [s[0] for s in stops] == sorted(s[0] for s in stops), stops  # in reading order
    assert all(s[1] == "a" and s[2].startswith("/view?pdi=") for s in stops), stops
    assert all(s[3] and s[4] for s in stops), stops  # each focus drawn, and scrolled into view


#: The replay frame, when the focus is in it: whether the top page's focus is the frame, how the frame's outline is
#: drawn, and the colour it is drawn on (the first ancestor's opaque background, as :data:`RING` finds it).
FRAME_RING = """JSON.stringify((() => { const f = document.querySelector('iframe.replay'); const s = getComputedStyle(f);
  let bg = 'rgb(255, 255, 255)';
  for (let p = f.parentElement; p; p = p.parentElement) {
    const c = getComputedStyle(p).backgroundColor; if (!/rgba\\(.*, 0\\)$/.test(c) && c !== 'transparent') { bg = c; break; } }
  return [document.activeElement === f, s.outlineStyle, parseFloat(s.outlineWidth), s.outlineColor, bg]; })())"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_replay_frame_shows_the_focus_is_in_it(served: Served, scheme: str) -> None:
    # WCAG 2.2 §2.4.7 and §1.4.11: when Tab takes the focus into the archived page, the frame it is in is drawn
    # with a ring of 3:1 against the page around it, whatever the archived page draws (or does not) for its own
    # focus; with the focus back out of the frame the ring is gone
    with devtools() as pipe:
        session = _keyboard_tab(pipe, page_url(served, ("", {}), "replay-capture"))
        if scheme == "dark":
            dark(pipe, session, time.monotonic() + 30)
        seen = []
        for _ in range(30):
            _key(pipe, session, "Tab", 9)
            seen.append(json.loads(_js(pipe, session, FRAME_RING)))
            if seen[-1][0]:
                break
        inside = seen[-1]
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)
        SHOTS.mkdir(parents=True, exist_ok=True)  # for a person to look at: the ring around the archived page
        (SHOTS / f"replay-capture-frame-focused{'-dark' if scheme == 'dark' else ''}.png").write_bytes(
            base64.b64decode(shot["data"]))
        assert inside[0], f"Tab never took the focus into the replay frame: {seen}"
        assert inside[1] != "none" and inside[2] >= 2, inside
        assert _contrast(inside[3], inside[4]) >= 3, inside
        _js(pipe, session, "document.querySelector('header.site a').focus()")
        outside = json.loads(_js(pipe, session, FRAME_RING))
    assert not outside[0] and (outside[1] == "none" or outside[2] == 0), outside
