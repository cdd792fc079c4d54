"""The viewer in Chromium: a reader selects a passage and the page names it (``…#char=a,b``).

The selection is made with the DOM Selection API, as a mouse would leave it,
and the name the page shows is checked against positions counted by hand
over the CRLF-canonical text, then resolved to see that it names the text
that was selected.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.parse
from pathlib import Path
from typing import Any

import httpx
from server_helpers import VERSION_TIMES, Served, long_line

from chromium_helpers import open_page
from pdi.capture.browser import Pipe, devtools

SELECT = """
(async () => {
  const text = document.getElementById("text");
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
  await new Promise((resolve) => setTimeout(resolve, 200));  // selectionchange is dispatched later
  return document.getElementById("name").value;
})()
"""



def _select(pipe: Pipe, session: str, wanted: str) -> Any:
    expression = SELECT.replace("WANTED", json.dumps(wanted))
    result = pipe.call(
        "Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True},
        session, time.monotonic() + 30,
    )
    return result["result"].get("value")


def test_selecting_a_passage_gives_its_citable_name(served: Served) -> None:
    view = f"{served.url}/view?pdi={urllib.parse.quote(served.text + '#char=7,12', safe='')}"
    # "Hello, world.\r\nSecond 𝄞 line.\r\n": the clef is one character (two UTF-16 units)
    expected = {
        "world": "#char=7,12",  # inside the marked passage
        "world.\nSecond": "#char=7,21",  # across a line break: CR and LF, two characters
        "Second 𝄞 line": "#char=15,28",
        "line.": "#char=24,29",  # after the clef
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
    with devtools() as pipe:
        session = open_page(pipe, view)
        assert _select(pipe, session, wanted) == served.long + f"#char={width * (k + 3)},{width * (k + 3) + 7}"
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
        """The format token (a link to the viewer of that name), then the whole versioned name."""
        name = f"{generic}.{tail}"
        return [tail.split(".")[0], f"/view?pdi={urllib.parse.quote(name, safe='')}", name]

    with devtools() as pipe:
        session = open_page(pipe, view)
        deadline = time.monotonic() + 30
        rows = pipe.call("Runtime.evaluate", {"expression": VERSIONS, "returnByValue": True}, session, deadline)
        size = {"width": 1100, "height": 560, "deviceScaleFactor": 1, "mobile": False}  # a desktop window
        pipe.call("Emulation.setDeviceMetricsOverride", size, session, deadline)
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)
    assert rows["result"]["value"] == [
        {"number": "1", "deposited": VERSION_TIMES[0], "shown": VERSION_TIMES[0],
         "formats": [link("html.1"), link("text.1")]},
        {"number": "2", "deposited": VERSION_TIMES[1], "shown": VERSION_TIMES[1], "formats": [link("text.2")]},
    ]
    png = base64.b64decode(shot["data"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "generic-view.png").write_bytes(png)  # for a person to look at
