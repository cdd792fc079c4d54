"""The viewer in Chromium: a reader selects a passage and the page names it (``…#char=a,b``).

The selection is made with the DOM Selection API, as a mouse would leave it,
and the name the page shows is checked against positions counted by hand
over the CRLF-canonical text, then resolved to see that it names the text
that was selected.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
import struct
import time
import urllib.parse
import wave
from pathlib import Path
from typing import Any

import httpx
from PIL import Image
from server_helpers import ELSEWHERE, LONG_LINES, TEXT, VERSION_TIMES, S, Served, long_line

from chromium_helpers import clipboard_text, open_page
from pdi.capture.browser import Pipe, devtools

SELECT = """
(async () => {
  const text = document.getElementById("text");
  const before = document.getElementById("name").dataset.candidate;  // an earlier selection's name, not this one's
  function point(offset) {  // a DOM point at this many UTF-16 units into the <pre>'s text
    const walker = document.createTreeWalker(text, NodeFilter.SHOW_TEXT);
    let node;
    while ((node = walker.nextNode())) {
      if (offset <= node.length) return [node, offset];
      offset -= node.length;
    }
  }
  const wanted = WANTED;
  const start = text.textContent.indexOf(wanted);
  if (start < 0) return "not in the page: " + wanted;
  const [n1, o1] = point(start), [n2, o2] = point(start + wanted.length);
  const range = document.createRange();
  range.setStart(n1, o1);
  range.setEnd(n2, o2);
  const selection = document.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  return await OFFERED;
})()
"""



#: The name the page offers once it has checked it (its state "verified"), or the error it shows instead (20 s at
#: most). A selection is named once it stops changing (120 ms), later on a loaded machine: until the name offered is
#: another than BEFORE's (an earlier selection's), the state read would be that one's.
OFFERED = """
(async () => {
  const input = document.getElementById("name");
  const until = performance.now() + 20000;
  await new Promise((resolve) => setTimeout(resolve, 300));
  while ((input.dataset.candidate === BEFORE || (input.dataset.state !== "verified" && input.dataset.state !== "error"))
         && performance.now() < until)
    await new Promise((resolve) => setTimeout(resolve, 25));
  return input.dataset.state === "verified" ? input.value : "error: " + input.dataset.error;
})()
"""


def _select(pipe: Pipe, session: str, wanted: str) -> Any:
    expression = SELECT.replace("WANTED", json.dumps(wanted)).replace("OFFERED", OFFERED.strip().replace("BEFORE", "before"))
    result = pipe.call(
        "Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True},
        session, time.monotonic() + 30,
    )
    return result["result"].get("value")


def test_selecting_a_passage_gives_its_citable_name(served: Served) -> None:
    view = f"{served.url}/view?pdi={urllib.parse.quote(served.text + '#char=7,12', safe='')}"
    # "Hello, world.\r\nSecond 𝕚 line.\r\n": the 𝕚 is one character (two UTF-16 units)
    expected = {
        "world": "#char=7,12",  # inside the marked passage
        "world.\nSecond": "#char=7,21",  # across a line break: CR and LF, two characters
        "Second 𝕚 line": "#char=15,28",
        "line.": "#char=24,29",  # after the 𝕚
    }
    with devtools() as pipe:
        session = open_page(pipe, view)
        for wanted, fragment in expected.items():
            assert _select(pipe, session, wanted) == served.text + fragment, wanted
    for wanted, fragment in expected.items():
        name = served.text + fragment
        got = httpx.get(f"{served.url}/uri-res/N2R?{name.replace('#', '%23')}").content
        assert got == wanted.replace("\n", "\r\n").encode(), name


def test_a_long_text_shows_a_window_and_names_a_selection_by_its_place_in_the_whole(served: Served) -> None:
    # Every line of the long text has the same length; with CR LF for its LF it is one more:
    # line k starts at character k * width. The page shows a window, never the 2 MB text.
    k = 120_000
    width = len(long_line(0)) + 1
    assert width == 29
    view = f"{served.url}/view?pdi={urllib.parse.quote(served.long + f'#line={k},{k + 1}', safe='')}"
    page = httpx.get(view)
    assert page.status_code == 200 and len(page.content) < 200_000
    wanted = long_line(k + 3)[:7]  # the number at the start of line k + 3
    # RFC 5147 counts the LF one character (a line is 28) and its checks are of the whole 2 MB entity
    entity = "".join(long_line(i) for i in range(LONG_LINES)).encode()
    checks = f";length={28 * LONG_LINES},UTF-8;md5={hashlib.md5(entity).hexdigest()},UTF-8"
    with devtools() as pipe:
        session = open_page(pipe, view)
        assert _select(pipe, session, wanted) == served.long + f"#char={width * (k + 3)},{width * (k + 3) + 7}"
        rfc = f"{served.url}/uri-res/N2R?{served.long}#char={28 * (k + 3)},{28 * (k + 3) + 7}{checks}"
        assert _offered(pipe, session, "rfc5147") == rfc
    name = served.long + f"#char={width * (k + 3)},{width * (k + 3) + 7}"
    assert httpx.get(f"{served.url}/uri-res/N2R?{name.replace('#', '%23')}").content == wanted.encode()


VERSIONS = """
Array.from(document.querySelectorAll("#versions tbody tr")).map((row) => ({
  number: row.cells[0].textContent,
  deposited: row.cells[1].querySelector("time").getAttribute("datetime"),
  shown: row.cells[1].innerText,
  formats: Array.from(row.cells[2].querySelectorAll("li")).map((item) => [
    item.querySelector("a").innerText, item.querySelector("a").getAttribute("href"), item.querySelector(".name").innerText,
  ]),
}))
"""


def test_a_generic_name_shows_every_version_with_its_formats_and_date(served: Served, tmp_path: Path) -> None:
    generic = served.versioned
    view = f"{served.url}/view?pdi={urllib.parse.quote(generic, safe='')}"

    def link(tail: str) -> list[str]:
        """The media type the format token names (a link to the viewer of that name; PDI-GRAMMAR.md, decision 6),
        then the whole versioned name."""
        name = f"{generic}.{tail}"
        media = {"html": "text/html", "text": "text/plain"}[tail.split(".")[0]]
        return [media, f"/view?pdi={urllib.parse.quote(name, safe='')}", name]

    with devtools() as pipe:
        session = open_page(pipe, view)
        deadline = time.monotonic() + 30
        rows = pipe.call("Runtime.evaluate", {"expression": VERSIONS, "returnByValue": True}, session, deadline)
        size = {"width": 1100, "height": 560, "deviceScaleFactor": 1, "mobile": False}  # a desktop window
        pipe.call("Emulation.setDeviceMetricsOverride", size, session, deadline)
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)
    def shown(stamp: str) -> str:  # as every table writes a time: 2026-11-21 10:00:00 UTC
        return stamp.split(".")[0].replace("T", " ") + " UTC"

    assert rows["result"]["value"] == [
        {"number": "1", "deposited": VERSION_TIMES[0], "shown": shown(VERSION_TIMES[0]),
         "formats": [link("html.1"), link("text.1")]},
        {"number": "2", "deposited": VERSION_TIMES[1], "shown": shown(VERSION_TIMES[1]), "formats": [link("text.2")]},
    ]
    png = base64.b64decode(shot["data"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "generic-view.png").write_bytes(png)  # for a person to look at


# --- select → cite with real mouse events -----------------------------------------------------------------

SHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"


def _js(pipe: Pipe, session: str, expression: str) -> Any:
    answer = pipe.call(
        "Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True, "userGesture": True},
        session, time.monotonic() + 30,
    )
    assert "exceptionDetails" not in answer, answer
    return answer["result"].get("value")


def _mouse(pipe: Pipe, session: str, kind: str, x: float, y: float, buttons: int) -> None:
    params = {"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1}
    pipe.call("Input.dispatchMouseEvent", params, session, time.monotonic() + 30)


def _drag(pipe: Pipe, session: str, start: tuple[float, float], end: tuple[float, float], steps: int = 8) -> None:
    """Press the left button at ``start``, move to ``end`` in ``steps``, release: as a hand would."""
    _mouse(pipe, session, "mouseMoved", *start, 0)
    _mouse(pipe, session, "mousePressed", *start, 1)
    for i in range(1, steps + 1):
        _mouse(pipe, session, "mouseMoved", start[0] + (end[0] - start[0]) * i / steps,
               start[1] + (end[1] - start[1]) * i / steps, 1)
    _mouse(pipe, session, "mouseReleased", *end, 0)


def _desktop(pipe: Pipe, session: str) -> None:
    size = {"width": 1100, "height": 900, "deviceScaleFactor": 1, "mobile": False}  # the drags stay clear of its edges
    pipe.call("Emulation.setDeviceMetricsOverride", size, session, time.monotonic() + 30)


def _offered(pipe: Pipe, session: str, key: str = "name") -> str:
    """The name in input ``key`` once the page has checked it (or the error it shows instead)."""
    return str(_js(pipe, session, OFFERED.replace('"name"', json.dumps(key)).replace("BEFORE", "undefined")))


def _shoot(pipe: Pipe, session: str, name: str) -> None:
    shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)
    png = base64.b64decode(shot["data"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / name).write_bytes(png)


def _copied(pipe: Pipe, session: str, origin: str, key: str = "name") -> str:
    """Click the copy button of offer ``key`` with the mouse and read the clipboard back."""
    deadline = time.monotonic() + 30
    pipe.call("Browser.grantPermissions", {"origin": origin, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
              None, deadline)
    pipe.call("Emulation.setFocusEmulationEnabled", {"enabled": True}, session, deadline)
    button = _js(pipe, session, f"(() => {{ const b = document.getElementById('copy-{key}').getBoundingClientRect();"
                                " return [b.left + b.width / 2, b.top + b.height / 2]; })()")
    before = clipboard_text(pipe, session, seconds=0)
    _mouse(pipe, session, "mousePressed", *button, 1)
    _mouse(pipe, session, "mouseReleased", *button, 0)
    return clipboard_text(pipe, session, other_than=before)


#: The viewport rectangle of the characters [a, b) of the <pre>'s text (UTF-16 units): JSON of left, top, right, bottom.
CHARS = """
(() => {
  const text = document.getElementById("text");
  function point(offset) {
    const walker = document.createTreeWalker(text, NodeFilter.SHOW_TEXT);
    let node;
    while ((node = walker.nextNode())) {
      if (offset < node.length) return [node, offset];
      offset -= node.length;
    }
  }
  const where = (i) => { const [n, o] = point(i); const r = document.createRange(); r.setStart(n, o); r.setEnd(n, o + 1);
                         const b = r.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const at = text.textContent.indexOf(WANTED);
  return [where(at), where(at + WANTED.length - 1), text.getBoundingClientRect().top];
})()
"""


def test_a_mouse_drag_on_a_fresh_text_page_names_the_passage_copies_it_and_opens_it_marked(served: Served) -> None:
    # "Hello, world.\nSecond 𝕚 line.\n…", stored with LF. Selected: "world.\nSecond" (from "w" to "d").
    # PDI char (CRLF-canonical, a line break two characters): "Hello, " is 7, "world." 6, CR LF 2, "Second" 6 -> 7,21.
    # RFC 5147 (a line ending one character) -> 7,20; its checks are over the whole stored entity.
    wanted = "world.\nSecond"
    entity = TEXT.decode("utf-8")
    assert len(entity) == 55  # code points, every line ending (LF here) one character
    checks = f";length={len(entity)},UTF-8;md5={hashlib.md5(TEXT).hexdigest()},UTF-8"
    view = f"{served.url}/view?pdi={urllib.parse.quote(served.text, safe='')}"
    with devtools() as pipe:
        session = open_page(pipe, view)
        _desktop(pipe, session)
        deadline = time.monotonic() + 30
        pipe.call("Browser.grantPermissions", {"origin": served.url, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
                  None, deadline)
        pipe.call("Emulation.setFocusEmulationEnabled", {"enabled": True}, session, deadline)
        first, last, top = _js(pipe, session, CHARS.replace("WANTED", json.dumps(wanted)))
        # from inside the left half of "w" to inside the right half of "d": the first drag, on a page just opened
        _drag(pipe, session, (first[0] + 1, (first[1] + first[3]) / 2), (last[2] - 1, (last[1] + last[3]) / 2))
        assert _js(pipe, session, "document.getSelection().toString()") == wanted
        name = served.text + "#char=7,21"
        assert _offered(pipe, session) == name
        assert _offered(pipe, session, "rfc5147") == f"{served.url}/uri-res/N2R?{served.text}#char=7,20{checks}"
        # nothing moved while the name appeared: the text is where it was when the drag began
        assert _js(pipe, session, "document.getElementById('text').getBoundingClientRect().top") == top
        _shoot(pipe, session, "text-selected.png")
        # the copy button, clicked with the mouse, puts the name on the clipboard
        button = _js(pipe, session, "(() => { const b = document.getElementById('copy-name').getBoundingClientRect();"
                                    " return [b.left + b.width / 2, b.top + b.height / 2]; })()")
        _mouse(pipe, session, "mousePressed", *button, 1)
        _mouse(pipe, session, "mouseReleased", *button, 0)
        assert clipboard_text(pipe, session) == name  # a fresh browser's clipboard is empty until the copy lands
        href = _js(pipe, session, "document.getElementById('open-name').href")
        assert href == f"{served.url}/view?pdi={urllib.parse.quote(name, safe='')}"
        # open what was copied: the same passage is marked, and in view
        opened = open_page(pipe, href)
        _desktop(pipe, opened)
        marked = _js(pipe, opened, "(() => { const m = document.getElementById('passage'); const r = m.getBoundingClientRect();"
                                   " return [m.textContent, r.top >= 0 && r.bottom <= innerHeight]; })()")
        assert marked == [wanted, True]
    got = httpx.get(f"{served.url}/uri-res/N2R?{name.replace('#', '%23')}").content
    assert got == b"world.\r\nSecond"


def test_a_selection_the_page_cannot_verify_is_not_offered(served: Served) -> None:
    # The page checks a name by resolving it; if the resolver answers other text the name is not shown.
    view = f"{served.url}/view?pdi={urllib.parse.quote(served.text, safe='')}"
    with devtools() as pipe:
        session = open_page(pipe, view)
        # the page's text altered after it was served: "world" now reads "WORLD", the archive still says "world"
        _js(pipe, session, "(() => { const t = document.getElementById('text'); t.firstChild.textContent ="
                           " t.firstChild.textContent.replace('world', 'WORLD'); })()")
        got = _select(pipe, session, "WORLD")
    assert got.startswith("error: ") and "does not resolve as selected" in got and '"world"' in got


def _box(pipe: Pipe, session: str, key: str) -> list[float]:
    return list(_js(pipe, session, f"(() => {{ const r = document.getElementById({json.dumps(key)}).getBoundingClientRect();"
                                   " return [r.left, r.top, r.width, r.height]; })()"))


def test_dragging_a_box_on_an_image_names_its_pixels_and_opens_outlined(served: Served) -> None:
    # The picture is 40×30 pixels, shown larger; a drag's ends are taken to the nearest pixel boundary
    # of the image itself: x = round(CSS offset × natural width / CSS width).
    view = f"{served.url}/view?pdi={urllib.parse.quote(served.picture, safe='')}"
    with devtools() as pipe:
        session = open_page(pipe, view)
        _desktop(pipe, session)
        _js(pipe, session, "document.getElementById('image').scrollIntoView({block: 'center'})")
        left, top, width, height = _box(pipe, session, "image")
        assert width > 40 and _js(pipe, session, "document.getElementById('image').naturalWidth") == 40
        start, end = (0.113, 0.207), (0.644, 0.781)  # fractions of the shown image; no end falls half-way between pixels
        _drag(pipe, session, (left + start[0] * width, top + start[1] * height), (left + end[0] * width, top + end[1] * height))
        x1, y1 = round(start[0] * 40), round(start[1] * 30)
        x2, y2 = round(end[0] * 40), round(end[1] * 30)
        assert (x1, y1, x2, y2) == (5, 6, 26, 23)
        name = served.picture + f"#rect=({x1},{y1}),({x2},{y2})"
        assert _offered(pipe, session) == name
        assert [_js(pipe, session, f"document.getElementById('{k}').value") for k in ("x1", "y1", "x2", "y2")] == ["5", "6", "26", "23"]
        _shoot(pipe, session, "image-selected.png")
        # copy it, and open what the clipboard holds: the same box is outlined
        copied = _copied(pipe, session, served.url)
        assert copied == name
        opened = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(copied, safe='')}")
        _desktop(pipe, opened)
        left, top, width, height = _box(pipe, opened, "image")
        box = _box(pipe, opened, "cited")
        # the corners of the name opened are in the boxes, to be adjusted
        assert [_js(pipe, opened, f"document.getElementById('{k}').value") for k in ("x1", "y1", "x2", "y2")] == ["5", "6", "26", "23"]
    expected = [left + width * x1 / 40, top + height * y1 / 30, width * (x2 - x1) / 40, height * (y2 - y1) / 30]
    assert all(abs(a - b) < 1 for a, b in zip(box, expected, strict=True)), (box, expected)
    region = httpx.get(f"{served.url}/api/resolve", params={"pdi": name}).json()["fragment"]["region"]
    assert (region["x1"], region["y1"], region["x2"], region["y2"]) == (x1, y1, x2, y2)


def test_the_corners_of_a_box_can_be_typed(served: Served) -> None:
    view = f"{served.url}/view?pdi={urllib.parse.quote(served.picture, safe='')}"
    with devtools() as pipe:
        session = open_page(pipe, view)
        for key, value in (("x1", 2), ("y1", 3), ("x2", 40), ("y2", 9)):
            _js(pipe, session, f"(() => {{ const i = document.getElementById('{key}'); i.focus(); i.value = '{value}';"
                               " i.dispatchEvent(new Event('change')); })()")
        assert _offered(pipe, session) == served.picture + "#rect=(2,3),(40,9)"


def _recording(seconds: int, rate: int) -> bytes:
    """A mono 16-bit PCM WAV of ``seconds`` seconds at ``rate`` Hz: a 440 Hz tone at half scale."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setparams((1, 2, rate, 0, "NONE", "not compressed"))
        w.writeframes(b"".join(struct.pack("<h", round(16383 * math.sin(2 * math.pi * 440 * k / rate))) for k in range(seconds * rate)))
    return out.getvalue()


def test_dragging_on_the_waveform_names_a_stretch_of_the_recording_and_plays_it(served: Served) -> None:
    # 3 seconds at 8000 Hz (a rate Chromium plays). A drag's ends are times in proportion to the waveform's
    # width; a pixel spans far less than a second, so the name is in milliseconds.
    rate, duration = 8000, 3
    sound = str(served.archive.add(S, _recording(duration, rate), format="wav"))
    view = f"{served.url}/view?pdi={urllib.parse.quote(sound, safe='')}"
    with devtools() as pipe:
        session = open_page(pipe, view)
        _desktop(pipe, session)
        _js(pipe, session, "document.getElementById('wave').scrollIntoView({block: 'center'})")
        left, top, width, height = _box(pipe, session, "wave")
        start, end = 0.2137, 0.6619
        _drag(pipe, session, (left + end * width, top + height / 2), (left + start * width, top + height / 3))  # leftwards
        ma, mb = round(start * duration * 1000), round(end * duration * 1000)
        assert (ma, mb) == (641, 1986)
        name = sound + f"#msec={ma},{mb}"
        assert _offered(pipe, session) == name
        assert _js(pipe, session, "[document.getElementById('start').value, document.getElementById('end').value]") == ["0.641", "1.986"]
        drawn = _js(pipe, session, "(() => { const c = document.getElementById('wave-canvas');"
                                   " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
                                   " let n = 0; for (let i = 3; i < d.length; i += 4) n += d[i] > 0; return n; })()")
        assert drawn > 0.2 * width * height  # the tone fills the waveform's height
        _shoot(pipe, session, "sound-selected.png")
        # play the selection: the player starts at its start and stops at its end
        # where it is when it starts playing, read as it starts: read a fixed time after the click, a loaded
        # machine could find it not started yet, or already stopped
        _js(pipe, session, "(() => { const p = document.getElementById('player'); p.muted = true; window.testStarted ="
                           " new Promise((r) => p.addEventListener('playing', () => r([p.paused, p.currentTime]), {once: true})); })()")
        _js(pipe, session, "document.getElementById('play').click()")
        playing = _js(pipe, session, "Promise.race([window.testStarted,"
                                     " new Promise((r) => setTimeout(() => r('did not start playing in 20 s'), 20000))])")
        assert playing[0] is False and ma / 1000 <= playing[1] < mb / 1000, playing
        # Wait for it to stop rather than for a fixed time: on a loaded machine the player
        # falls behind the wall clock (it was at 1.88 s after 2.2 s). Past the recording's end
        # (3 s) it would stop too, and fail the assertion below.
        deadline = time.monotonic() + 20
        while True:
            played = _js(pipe, session, "(() => { const p = document.getElementById('player'); return [p.paused, p.currentTime]; })()")
            if played[0] is True or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert played[0] is True and mb / 1000 <= played[1] < mb / 1000 + 0.5, played
        # copy it, and open what the clipboard holds: the same stretch is marked
        copied = _copied(pipe, session, served.url)
        assert copied == name
        opened = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(copied, safe='')}")
        _desktop(pipe, opened)
        wave_box, cited = _box(pipe, opened, "wave"), _box(pipe, opened, "cited")
        # the stretch opened is in the boxes: frames 5128 and 15888 at 8000 Hz
        assert _js(pipe, opened, "[document.getElementById('start').value, document.getElementById('end').value]") == ["0.641", "1.986"]
    expected = [wave_box[0] + wave_box[2] * ma / 1000 / duration, wave_box[2] * (mb - ma) / 1000 / duration]
    assert abs(cited[0] - expected[0]) < 1 and abs(cited[2] - expected[1]) < 1, (cited, expected)
    interval = httpx.get(f"{served.url}/api/resolve", params={"pdi": name}).json()["fragment"]["interval"]
    # frames k with a <= k / rate < b: ceil(a × rate) up to ceil(b × rate)
    assert (interval["start"], interval["end"]) == (math.ceil(ma * rate / 1000), math.ceil(mb * rate / 1000)) == (5128, 15888)


def test_a_recording_the_browser_cannot_play_still_has_its_waveform_and_names(served: Served) -> None:
    # served.sound is 250 frames at 100 Hz (2.5 s): too low a rate for Chromium to play, not to name.
    view = f"{served.url}/view?pdi={urllib.parse.quote(served.sound, safe='')}"
    with devtools() as pipe:
        session = open_page(pipe, view)
        for key, value in (("start", "0.5"), ("end", "2")):
            _js(pipe, session, f"(() => {{ const i = document.getElementById('{key}'); i.value = '{value}';"
                               " i.dispatchEvent(new Event('change')); })()")
        assert _offered(pipe, session) == served.sound + "#msec=500,2000"
        # the browser finds it cannot play it while it loads, after the page's load event on a loaded machine:
        # a click before that is refused by play() instead ("Cannot play: …"); the click waits for it (20 s at most)
        _js(pipe, session, "new Promise((r) => { const p = document.getElementById('player'); if (p.error) r(); else {"
                           " p.addEventListener('error', r, {once: true}); setTimeout(r, 20000); } })")
        # said at once beside the player, before any click on Play
        note = _js(pipe, session, "(() => { const n = document.getElementById('player-note');"
                                  " return [n.hidden, n.getBoundingClientRect().height, n.textContent]; })()")
        _desktop(pipe, session)
        _shoot(pipe, session, "sound-unplayable.png")
        _js(pipe, session, "document.getElementById('play').click()")
        said = _js(pipe, session, "document.getElementById('cite-status').textContent")
    assert note[0] is False and note[1] > 0, note
    # the player's error is MEDIA_ERR_SRC_NOT_SUPPORTED (4): no stream Chromium's demuxer plays
    assert note[2].startswith("This browser cannot play this recording: its format or encoding is not one this"
                              " browser plays") and "drag on the waveform" in note[2], note
    assert said.startswith("This browser cannot play this recording")


def test_a_frame_of_a_multi_frame_image_is_chosen_and_named(served: Served) -> None:
    frames = [Image.new("RGB", (20, 10), colour) for colour in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:])
    gif = str(served.archive.add(S, out.getvalue(), format="gif"))
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(gif, safe='')}")
        _desktop(pipe, session)
        _js(pipe, session, "(() => { const f = document.getElementById('frame'); f.value = '2'; f.dispatchEvent(new Event('change')); })()")
        # the chosen frame is what is shown: blue, the third frame
        colour = _js(pipe, session, """new Promise((resolve) => { const i = document.getElementById('image');
            const read = () => { const c = document.createElement('canvas'); c.width = 20; c.height = 10;
              const g = c.getContext('2d'); g.drawImage(i, 0, 0); resolve(Array.from(g.getImageData(10, 5, 1, 1).data)); };
            if (i.complete && i.src.includes('crop=(0,0),(20,10),2')) read(); else i.onload = read; })""")
        assert colour == [0, 0, 255, 255]
        _js(pipe, session, "document.getElementById('image').scrollIntoView({block: 'center'})")
        left, top, width, height = _box(pipe, session, "image")
        _drag(pipe, session, (left + 0.26 * width, top + 0.12 * height), (left + 0.71 * width, top + 0.88 * height))
        x1, y1, x2, y2 = round(0.26 * 20), round(0.12 * 10), round(0.71 * 20), round(0.88 * 10)
        assert _offered(pipe, session) == gif + f"#rect=({x1},{y1}),({x2},{y2}),2" == gif + "#rect=(5,1),(14,9),2"


def test_a_frame_of_an_image_of_many_frames_is_chosen_by_number_and_named(served: Served) -> None:
    from pdi.server.pages.media_view import MAX_FRAME_OPTIONS

    many = MAX_FRAME_OPTIONS + 1  # more than the chooser lists: a number is typed
    frames = [Image.new("RGB", (20, 10), (k % 256, k // 256, 9)) for k in range(many)]  # each its own colour
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:])
    gif = str(served.archive.add(S, out.getvalue(), format="gif"))
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(gif, safe='')}")
        _desktop(pipe, session)
        # a number past the last frame is the last frame
        _js(pipe, session, "(() => { const f = document.getElementById('frame'); f.value = '9999';"
                           " f.dispatchEvent(new Event('change')); })()")
        assert _js(pipe, session, "document.getElementById('frame').value") == str(many - 1)
        colour = _js(pipe, session, """new Promise((resolve) => { const i = document.getElementById('image');
            const read = () => { const c = document.createElement('canvas'); c.width = 20; c.height = 10;
              const g = c.getContext('2d'); g.drawImage(i, 0, 0); resolve(Array.from(g.getImageData(10, 5, 1, 1).data)); };
            if (i.complete && i.src.endsWith('crop=(0,0),(20,10),%s')) read(); else i.onload = read; })""" % (many - 1))
        assert colour == [(many - 1) % 256, (many - 1) // 256, 9, 255]
        _js(pipe, session, "document.getElementById('image').scrollIntoView({block: 'center'})")
        left, top, width, height = _box(pipe, session, "image")
        _drag(pipe, session, (left + 0.26 * width, top + 0.12 * height), (left + 0.71 * width, top + 0.88 * height))
        assert _offered(pipe, session) == gif + f"#rect=(5,1),(14,9),{many - 1}"
        _shoot(pipe, session, "image-frame-by-number.png")


def test_a_cited_passage_far_down_a_whole_text_is_scrolled_into_view(served: Served) -> None:
    # A text under the window size (about 60 KB, shown whole): line 1,500 of 2,000 is far below the first screen.
    lines = "".join(f"line {i:05d} of a text shown whole\n" for i in range(2000)).encode()
    name = str(served.archive.add(S, lines, format="text"))
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(name + '#line=1500,1501', safe='')}")
        _desktop(pipe, session)
        shown = _js(pipe, session, "(() => { const m = document.getElementById('passage'); const r = m.getBoundingClientRect();"
                                   " return [m.textContent, r.top >= 0 && r.bottom <= innerHeight, scrollY > 10000]; })()")
    assert shown == ["line 01500 of a text shown whole\n", True, True]


def test_selecting_in_the_source_of_an_html_page_names_it_by_its_source_characters(served: Served) -> None:
    # served.page is "<p id=a>one<p>two</p>": "one" is characters 8 to 11 of the source; no RFC 5147 name for HTML
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(served.page, safe='')}&view=source")
        assert _select(pipe, session, "one<p>two") == served.page + "#char=8,17"
        assert _js(pipe, session, "document.getElementById('rfc5147')") is None


def test_a_box_past_the_image_is_not_offered(served: Served) -> None:
    # The picture is 40 pixels wide: a box to x2 = 300 resolves to a region cut at 40, not the box given.
    view = f"{served.url}/view?pdi={urllib.parse.quote(served.picture, safe='')}"
    with devtools() as pipe:
        session = open_page(pipe, view)
        for key, value in (("x1", 2), ("y1", 3), ("x2", 300), ("y2", 9)):
            _js(pipe, session, f"(() => {{ const i = document.getElementById('{key}'); i.value = '{value}';"
                               " i.dispatchEvent(new Event('change')); })()")
        got = _offered(pipe, session)
        copy = _js(pipe, session, "document.getElementById('copy-name').disabled")
    assert got.startswith("error: ") and "does not resolve as selected" in got, got
    assert copy is True


#: Lines of two directions: a right-to-left line is laid out from the right (Unicode Bidirectional Algorithm, UAX #9,
#: rules P2-P3: a paragraph's direction is that of its first strong character; Arabic letters are strong R/AL).
BIDI = "Minutes of the meeting.\nمحضر الاجتماع.\n"

_EDGES = """(() => {
  const pre = document.getElementById('text'), text = pre.textContent;
  const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  const nodes = []; let at = 0;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) { nodes.push([node, at]); at += node.length; }
  const box = (index) => {  // the rectangle of the character at index of the pre's text
    const [node, start] = nodes.filter(([n, s]) => s <= index && index < s + n.length)[0];
    const range = document.createRange(); range.setStart(node, index - start); range.setEnd(node, index - start + 1);
    return range.getBoundingClientRect();
  };
  const content = pre.getBoundingClientRect(), style = getComputedStyle(pre);
  const left = content.left + parseFloat(style.paddingLeft), right = content.right - parseFloat(style.paddingRight);
  const ltr = text.indexOf('Minutes'), rtl = text.indexOf('\u0645\u062d'), stop = text.indexOf('.', rtl);
  return {left, right, ltrStart: box(ltr).left, rtlStart: box(rtl).right, rtlStop: box(stop).left};
})()"""


def test_a_right_to_left_line_is_laid_out_from_the_right(served: Served) -> None:
    """Found by a reader: Arabic and Hebrew texts were shown left to right, the full stop at the wrong end."""
    name = str(served.archive.add(ELSEWHERE, BIDI.encode(), format="text"))
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(name, safe='')}")
        edges = _js(pipe, session, _EDGES)
        _shoot(pipe, session, "viewer-bidi.png")
    assert abs(edges["ltrStart"] - edges["left"]) < 2, edges  # the English line starts at the left
    assert abs(edges["rtlStart"] - edges["right"]) < 2, edges  # the Arabic line starts at the right
    assert edges["rtlStop"] < edges["rtlStart"] - 50, edges  # and ends, with its full stop, to the left of it
