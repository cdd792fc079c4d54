"""What the browser tests share: a new tab in Debian's Chromium (over :func:`pdi.capture.browser.devtools`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from pdi.capture.browser import Pipe


def new_tab(pipe: Pipe, *domains: str, deadline: float | None = None) -> str:
    """A new blank tab attached in flat mode, with ``domains`` (``"Page"``, ``"Network"`` …) enabled: its session id."""
    deadline = deadline if deadline is not None else time.monotonic() + 60
    target = pipe.call("Target.createTarget", {"url": "about:blank"}, None, deadline)["targetId"]
    session: str = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True}, None, deadline)["sessionId"]
    for domain in domains:
        pipe.call(f"{domain}.enable", None, session, deadline)
    return session


def navigate_and_wait_for_load(
    pipe: Pipe, session: str, url: str, deadline: float, seen: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Navigate the tab of ``session`` to ``url`` and wait for *that* document's load event.

    The tab's first document (about:blank) can still be finishing its own
    load when the Page domain is enabled (on a loaded machine its events
    arrive after ``Page.enable``), and another tab's events share the pipe: a
    load event counts only once the main frame has committed the navigation
    asked for (``Page.frameNavigated`` of its ``loaderId``), and only this
    tab's. ``seen`` is given every message of the pipe read meanwhile.
    """
    loader = pipe.call("Page.navigate", {"url": url}, session, deadline).get("loaderId")
    committed = loader is None  # no loader: a navigation within the document
    while True:
        message = pipe.events.pop(0) if pipe.events else pipe.receive(deadline)
        assert message is not None, f"{url} did not load"
        if seen is not None:
            seen(message)
        if message.get("sessionId") != session:
            continue
        method, params = message.get("method"), message.get("params", {})
        if method == "Page.frameNavigated" and "parentId" not in params.get("frame", {}):
            committed = committed or params["frame"].get("loaderId") == loader
        elif method == "Page.loadEventFired" and committed:
            return


def open_page(pipe: Pipe, url: str, timeout: float = 60) -> str:
    """Open ``url`` in a new tab and wait for its load event: the tab's session id."""
    deadline = time.monotonic() + timeout
    session = new_tab(pipe, "Page", deadline=deadline)
    navigate_and_wait_for_load(pipe, session, url, deadline)
    return session


def clipboard_text(pipe: Pipe, session: str, other_than: str = "", seconds: float = 20) -> str:
    """The clipboard's text once it is other than ``other_than`` (``seconds`` at most; then what it holds).

    A copy button writes with ``navigator.clipboard.writeText``, a promise
    that settles after the click's input event has been answered: read at
    once, the clipboard can still hold what it held before.
    """
    deadline = time.monotonic() + seconds
    while True:
        answer = pipe.call("Runtime.evaluate", {"expression": "navigator.clipboard.readText()", "awaitPromise": True,
                                                "returnByValue": True, "userGesture": True}, session, deadline + 30)
        assert "exceptionDetails" not in answer, answer
        text = str(answer["result"].get("value"))
        if text != other_than or time.monotonic() > deadline:
            return text
        time.sleep(0.05)


#: The characters of an element but white space in the order the browser lays them out: its lines top to bottom
#: (boxes that overlap in height stand on one line), each left to right; each character's box from a Range over it.
LAID_OUT = """(function (element) {
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT), boxes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    let at = 0;
    for (const ch of node.data) {  // by code point: a character beyond the BMP is one box
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + ch.length);
      at += ch.length;
      const box = range.getBoundingClientRect();
      if (box.width > 0 && ch.trim()) boxes.push({left: box.left, top: box.top, bottom: box.bottom, ch: ch});
    }
  }
  boxes.sort((a, b) => (a.top + a.bottom) - (b.top + b.bottom));
  const lines = [];
  for (const box of boxes) {
    const line = lines[lines.length - 1];
    if (line && box.top < line.bottom - 1) { line.boxes.push(box); line.bottom = Math.max(line.bottom, box.bottom); }
    else lines.push({bottom: box.bottom, boxes: [box]});
  }
  return lines.map((line) => line.boxes.sort((a, b) => a.left - b.left).map((b) => b.ch).join("")).join("");
})"""


def evaluate(pipe: Pipe, session: str, expression: str, seconds: float = 30) -> Any:
    """The value of the JavaScript ``expression`` in the page of ``session`` (returned by value); an exception it
    throws fails the test."""
    answer = pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session,
                       time.monotonic() + seconds)
    assert "exceptionDetails" not in answer, answer
    return answer["result"].get("value")


def laid_out(pipe: Pipe, session: str, selector: str) -> str:
    """The text but white space of the first element ``selector`` finds, as the browser lays it out
    (:data:`LAID_OUT`)."""
    return str(evaluate(pipe, session, f"{LAID_OUT}(document.querySelector({json.dumps(selector)}))"))
