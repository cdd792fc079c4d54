"""A replayed web page opened at a passage's name, in select-to-cite mode, shows that name in its Cite panel at once.

``/view?pdi=NAME%23FRAGMENT&select=1`` of a captured page (its "select to cite" link) replays it for selection with
the passage marked and in view, and its panel's PDI box holds NAME#FRAGMENT as the page resolved it (a browser's
``#:~:text=`` read as the native name it equals), with its Copy button and its *open it* link; its other forms (the
element that holds it, a browser's text fragment of its words) are offered as a selection's would be, until the
reader selects something else. A fragment wholly past the end leaves the panel waiting, a note saying why.

Every expected value is the name in the URL opened, or worked out here from the page's octets: ``char`` positions
count code points of the CRLF-canonical source (PDI-GRAMMAR.md §3, each bare LF two), ``elt`` numbers start tags
in the order they stand (html 0, body 1 …). Each page is saved as a screenshot
(``tests/artifacts/screenshots/replay-opened-*.png``).
"""

from __future__ import annotations

import base64
import json
import time
import urllib.parse
from pathlib import Path
from typing import Any

from server_helpers import CAPTURED_PAGE, CAPTURED_URL, captured_aggregate, with_replay
from test_server_keyboard import _key
from test_server_replay_browser import (
    SELECTABLE,
    SERIES,
    SHOTS,
    _crlf_position,
    _in_frame,
    _in_frame_when,
    _named,
    _open,
    _png,
    _top,
    _view,
)

from chromium_helpers import clipboard_text
from pdi.archive import Archive
from pdi.capture.browser import Pipe, devtools

#: What the status says while the name the page was opened at is shown (as every viewer's says it).
OPENED = "Shown: the name this page was opened at. Select something else to name that instead."

#: The panel's boxes as the page shows them: the PDI's value, placeholder, Copy disabled, link; the status; the
#: element's and the text fragment's values.
PANEL = """JSON.stringify((() => { const i = document.getElementById('char-name');
  const open = document.getElementById('open-char-name');
  return [i.value, i.placeholder, document.getElementById('copy-char-name').disabled,
          open.hasAttribute('href') ? open.href : null, document.getElementById('select-status').textContent,
          document.getElementById('elt-name').value, document.getElementById('textfrag-name').value]; })())"""

#: The marked passage in the frame: the marked text, and whether it is whole in view.
MARKED = """JSON.stringify((() => {
  const marks = [...document.querySelectorAll("pdi-mark")], target = document.getElementById("pdi-passage");
  const box = target && target.getBoundingClientRect();
  return [marks.map((m) => m.textContent).join(""), !!box && box.top >= 0 && box.bottom <= innerHeight];
})())"""


def _archive(tmp_path: Path, captured: bool = False) -> tuple[str, str]:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
        if captured:
            page = archive.add(SERIES, captured_aggregate(_png()), format="related", foreign_id=CAPTURED_URL)
        else:
            page = archive.add(SERIES, SELECTABLE, format="html")
    return location, str(page)


def _panel(pipe: Pipe, session: str, settled: bool = True) -> list[Any]:
    """The panel; ``settled``: once the element's name is offered and the text fragment is offered or said to be
    none (20 s at most: the page asks for both at once, and either answer may come first)."""
    deadline = time.monotonic() + 20
    while True:
        panel = list(json.loads(_top(pipe, session, PANEL)))
        placeholder = _top(pipe, session, "document.getElementById('textfrag-name').placeholder")
        if not settled or (panel[5] and (panel[6] or placeholder.startswith("none"))) or time.monotonic() > deadline:
            return panel
        time.sleep(0.1)


def _shot(pipe: Pipe, session: str, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)
    (SHOTS / name).write_bytes(base64.b64decode(shot["data"]))


def _copy(pipe: Pipe, session: str, resolver: str) -> str:
    """What the PDI's Copy button, clicked with the mouse, puts on the clipboard."""
    deadline = time.monotonic() + 30
    pipe.call("Browser.grantPermissions", {"origin": resolver, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
              None, deadline)
    pipe.call("Emulation.setFocusEmulationEnabled", {"enabled": True}, session, deadline)
    x, y = _top(pipe, session, "(() => { const b = document.getElementById('copy-char-name').getBoundingClientRect();"
                               " return [b.left + b.width / 2, b.top + b.height / 2]; })()")
    for kind, buttons in (("mousePressed", 1), ("mouseReleased", 0)):
        pipe.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons,
                                               "clickCount": 1}, session, deadline)
    return clipboard_text(pipe, session)


def test_a_page_opened_at_characters_for_selection_marks_them_and_shows_their_name(tmp_path: Path) -> None:
    # "Some <b>bold</b> text &amp; more." from the "b" of "bold" to the end of "text": the selection
    # test_server_replay_browser.py makes by hand, here in the URL
    location, page = _archive(tmp_path)
    start, end = SELECTABLE.index(b"bold"), SELECTABLE.index(b" &amp;")
    name = f"{page}#char={_crlf_position(SELECTABLE, start)},{_crlf_position(SELECTABLE, end)}"
    with with_replay(location) as (resolver, _), devtools() as pipe:
        session, _ = _open(pipe, _view(resolver, name) + "&select=1")
        marked = json.loads(_in_frame_when(pipe, session, MARKED, lambda v: json.loads(v)[1]))
        assert marked == ["bold text", True]
        value, placeholder, disabled, href, status, element, fragment = _panel(pipe, session)
        assert [value, placeholder, disabled, status] == [name, "(not yet)", False, OPENED]
        assert href == _view(resolver, name)
        # its other forms, as a selection of "bold text" gets them: the <p> holds it (html 0, body 1, h1 2, p 3),
        # and a browser's text fragment of its words, which pdi reads back as the same characters
        assert element == f"{page}#elt=3,3"
        assert fragment == f"{page}#:~:text=bold%20text"
        _shot(pipe, session, "replay-opened-char.png")
        # the first Tab still goes to the skip link, not into the frame at its passage
        _key(pipe, session, "Tab", 9)
        first = _top(pipe, session, "[document.activeElement.getAttribute('href'), document.activeElement.textContent.trim()]")
        assert first == ["#main", "Skip to the content"]
        assert _copy(pipe, session, resolver) == name
        # until the reader selects something else: "bold text &" (the reference taken whole) is named instead; its
        # pieces are "Some ", "bold", " text", " " (cut where the mark ends), "&amp;", " more."
        after = SELECTABLE.index(b" more.")
        assert _named(pipe, session, 4, 1) == (
            "bold text &", f"{page}#char={_crlf_position(SELECTABLE, start)},{_crlf_position(SELECTABLE, after)}",
            f"{page}#elt=3,3")
        assert _panel(pipe, session, settled=False)[4] == "resolved: the name gives back the selected text"


def test_on_a_phone_the_box_shows_the_end_of_the_name_opened_at_or_selected(tmp_path: Path) -> None:
    # found following the reader's pages on a phone (2026-12-01): the PDI box of a page replayed for selection
    # showed a name's start ("urn:pdi://web.example.us/2026/12"), its fragment, which says which passage, out of
    # sight, both for the name the page was opened at and for a selection's (the viewer's shows its end); and the
    # status line under the banner was cut off by an ellipsis
    location, page = _archive(tmp_path)
    start, end = SELECTABLE.index(b"bold"), SELECTABLE.index(b" &amp;")
    name = f"{page}#char={_crlf_position(SELECTABLE, start)},{_crlf_position(SELECTABLE, end)}"
    shown = """JSON.stringify((() => { const i = document.getElementById('char-name');
      return [i.value, i.scrollWidth > i.clientWidth, i.scrollLeft + i.clientWidth >= i.scrollWidth - 1]; })())"""
    # the status line: its words, whether they are all drawn (not cut off by an ellipsis), and the panel's height
    said = """JSON.stringify((() => { const s = document.getElementById('select-status');
      return [s.textContent, s.scrollWidth <= s.clientWidth && s.scrollHeight <= s.clientHeight,
              document.querySelector('.select-tools').getBoundingClientRect().height]; })())"""

    def phone(session: str, deadline: float) -> None:
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2,
                                                         "mobile": True}, session, deadline)

    with with_replay(location) as (resolver, _), devtools() as pipe:
        session, _ = _open(pipe, _view(resolver, name) + "&select=1", setup=phone)
        _in_frame_when(pipe, session, MARKED, lambda v: json.loads(v)[1])
        opened = json.loads(_top(pipe, session, shown))
        status = json.loads(_top(pipe, session, said))
        _shot(pipe, session, "replay-opened-phone.png")
        # a selection's name: "bold text &" (test_a_page_opened_at_characters_for_selection_…)
        after = SELECTABLE.index(b" more.")
        selected = f"{page}#char={_crlf_position(SELECTABLE, start)},{_crlf_position(SELECTABLE, after)}"
        assert _named(pipe, session, 4, 1)[1] == selected
        chosen = json.loads(_top(pipe, session, shown))
        checked = json.loads(_top(pipe, session, said))
        # the window made wide (the name whole in its box) and narrow again, as a phone turned twice: its end still
        for width in (1100, 390):
            pipe.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 844, "deviceScaleFactor": 2,
                                                             "mobile": width < 600}, session, time.monotonic() + 30)
            pipe.call("Runtime.evaluate", {"expression": "new Promise((done) => requestAnimationFrame(() =>"
                                           " requestAnimationFrame(done)))", "awaitPromise": True}, session,
                      time.monotonic() + 30)
        turned = json.loads(_top(pipe, session, shown))
    assert opened == [name, True, True], opened
    assert chosen == [selected, True, True], chosen
    assert turned == [selected, True, True], turned
    # what the status says is read whole (it was cut to "Shown: the name this page was opened at. Sel…"), and the
    # panel keeps its height when it says something shorter: the page does not move under the reader's drag
    assert status[:2] == [OPENED, True], status
    assert checked[:2] == ["resolved: the name gives back the selected text", True], checked
    assert checked[2] == status[2], (status, checked)


def test_a_capture_opened_at_a_browsers_text_fragment_shows_the_native_name_it_is(tmp_path: Path) -> None:
    # the captured page's "First story: <b>rain</b> expected.": "rain" is the text of the <b> (start tags html 0,
    # head 1, title 2, link 3, body 4, h1 5, p 6, b 7)
    location, page = _archive(tmp_path, captured=True)
    at = CAPTURED_PAGE.index(b"rain")
    native = f"{page}#char={_crlf_position(CAPTURED_PAGE, at)},{_crlf_position(CAPTURED_PAGE, at + 4)}"
    with with_replay(location) as (resolver, _), devtools() as pipe:
        session, _ = _open(pipe, _view(resolver, page + "#:~:text=rain") + "&select=1")
        assert json.loads(_in_frame_when(pipe, session, MARKED, lambda v: json.loads(v)[1])) == ["rain", True]
        value, _, disabled, href, status, element, fragment = _panel(pipe, session)
        assert [value, disabled, status] == [native, False, OPENED]
        assert href == _view(resolver, native)
        assert element == f"{page}#elt=7,7"
        assert fragment == f"{page}#:~:text=rain"
        _shot(pipe, session, "replay-opened-capture.png")
        # its links keep the passage: the page replayed without selection, and its source
        links = _top(pipe, session, "[...document.querySelectorAll('.replay-banner > a')].map((a) => a.getAttribute('href'))")
    assert links[:2] == [f"/view?pdi={urllib.parse.quote(native, safe='')}&view=source",
                         f"/view?pdi={urllib.parse.quote(native, safe='')}"]


def test_a_page_opened_at_an_element_shows_its_name_and_no_text_fragment(tmp_path: Path) -> None:
    # elt=3,3 is the <p> whole, its tags with it: no text fragment names those characters
    location, page = _archive(tmp_path)
    name = page + "#elt=3,3"
    with with_replay(location) as (resolver, _), devtools() as pipe:
        session, _ = _open(pipe, _view(resolver, name) + "&select=1")
        marked = json.loads(_in_frame_when(pipe, session, MARKED, lambda v: json.loads(v)[1]))
        outlined = _in_frame(pipe, session, "document.querySelector('p').hasAttribute('data-pdi-passage')")
        value, _, disabled, _, status, element, fragment = _panel(pipe, session)
        placeholder = _top(pipe, session, "document.getElementById('textfrag-name').placeholder")
        _shot(pipe, session, "replay-opened-element.png")
    assert marked == ["Some bold text &amp; more.".replace("&amp;", "&"), True] and outlined
    assert [value, disabled, status, element, fragment] == [name, False, OPENED, name, ""]
    assert placeholder.startswith("none")


def test_a_fragment_past_the_end_leaves_the_panel_waiting_and_a_note_says_why(tmp_path: Path) -> None:
    location, page = _archive(tmp_path)
    canonical = len(SELECTABLE) + SELECTABLE.count(b"\n") - SELECTABLE.count(b"\r\n")  # each bare LF two
    with with_replay(location) as (resolver, _), devtools() as pipe:
        session, _ = _open(pipe, _view(resolver, page + "#char=500,600") + "&select=1")
        panel = _panel(pipe, session, settled=False)
        note = _top(pipe, session, "document.getElementById('past-end').textContent")
        _shot(pipe, session, "replay-opened-past-end.png")
    assert panel == ["", "(not yet)", True, None, "Select text in the page to get its name.", "", ""]
    assert "500" in note and f"{canonical} characters" in note, note
