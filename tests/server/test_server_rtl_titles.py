"""A title written right to left (Arabic, Hebrew) is aligned to the right of its box when the box holds it alone.

A depositor's title is isolated in a ``<bdi>`` (its direction its own:
``pdi.server.pages.layout.isolated``), but the box around it, a table's cell,
a fact's ``<dd>``, a document's ``<h1>``, is left to right like the page: a title
of several lines was drawn flush left, its lines' beginnings (on the right)
ragged. Chromium opens the pages; each line of the title, as the browser lays
it out, must end at its box's right edge (content box, 1 px of rounding),
while a left-to-right title in the same table stays flush left.
"""

from __future__ import annotations

import base64
import datetime
import json
import time
import urllib.parse
from collections.abc import Iterator

import pytest
from server_helpers import serving
from test_server_pages_screenshots import SHOTS

from chromium_helpers import open_page
from pdi.archive import Archive
from pdi.capture.browser import devtools

S = "library.example.us"
#: "A letter from the Supreme Court's archive on keeping digital records for the generations of readers to come",
#: long enough to wrap in a table's cell and in a heading.
ARABIC = "رسالة من أرشيف المحكمة العليا بشأن حفظ الوثائق الرقمية على المدى الطويل للأجيال القادمة من القراء والباحثين"
#: "Minutes of the board" in Hebrew: one short line.
HEBREW = "פרוטוקול ישיבת הוועד"
ENGLISH = "Minutes of the board of the library, as read and approved at its meeting of November"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    root = tmp_path_factory.mktemp("rtl")
    clock = lambda: datetime.datetime(2026, 11, 25, 10, 0, tzinfo=datetime.UTC)  # noqa: E731
    with Archive.init(root / "archive", clock=clock) as archive:
        archive.add_series(S)
        names = {}
        for key, title in (("arabic", ARABIC * 2), ("hebrew", HEBREW), ("english", ENGLISH)):
            name = str(archive.add(S, f"{key}\n".encode(), format="text"))
            archive.annotate(name, "title", title)
            names[key] = name
    with serving(root / "archive") as (_, port):
        yield f"http://127.0.0.1:{port}", names


#: For each title on the page ([selector of its box, the text it starts with]): [its box's tag, the left and right
#: edges of its content box, and the left and right edges of each of the title's lines].
LINES = """JSON.stringify(%s.map(([selector, start]) => {
  const bdi = [...document.querySelectorAll(selector + ' > bdi')].find((b) => b.textContent.startsWith(start));
  const box = bdi.parentElement, r = box.getBoundingClientRect(), s = getComputedStyle(box);
  const left = r.left + parseFloat(s.paddingLeft) + parseFloat(s.borderLeftWidth);
  const right = r.right - parseFloat(s.paddingRight) - parseFloat(s.borderRightWidth);
  const range = document.createRange(); range.selectNodeContents(bdi);
  const lines = [...range.getClientRects()].map((l) => [l.left, l.right]);
  return [box.tagName.toLowerCase(), left, right, lines]; }))"""


def _lines(base: str, path: str, boxes: list[tuple[str, str]], width: int, shot: str) -> list[list[object]]:
    with devtools() as pipe:
        session = open_page(pipe, base + path)
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1,
                                                          "mobile": width < 600}, session, deadline)
        answer = pipe.call("Runtime.evaluate", {"expression": LINES % json.dumps(boxes), "returnByValue": True},
                           session, deadline)
        picture = pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / shot).write_bytes(base64.b64decode(picture["data"]))
    assert "exceptionDetails" not in answer, answer
    found: list[list[object]] = json.loads(answer["result"]["value"])
    return found


def _flush(found: list[object], side: str) -> None:
    tag, left, right, lines = found
    assert isinstance(lines, list) and lines, found
    edges = [line[1] if side == "right" else line[0] for line in lines]
    edge = right if side == "right" else left
    assert isinstance(edge, float | int)
    assert all(abs(e - edge) <= 1 for e in edges), f"a {tag}'s title is not flush {side} ({edge}): {lines}"


@pytest.mark.parametrize("width", [1100, 375])
def test_a_right_to_left_title_in_a_days_table_is_flush_right(site: tuple[str, dict[str, str]], width: int) -> None:
    base, _ = site
    arabic, hebrew, english = _lines(base, "/series/library.example.us/2026/11/25",
                                     [("#documents td", ARABIC[:10]), ("#documents td", HEBREW[:5]),
                                      ("#documents td", ENGLISH[:10])], width, f"rtl-titles-day-{width}.png")
    assert len(arabic[3]) > 1  # type: ignore[arg-type]  # it wraps: the alignment of each line shows
    _flush(arabic, "right")
    _flush(hebrew, "right")
    _flush(english, "left")


@pytest.mark.parametrize("width", [1100, 375])
def test_a_right_to_left_title_heads_its_document_and_its_facts_flush_right(
    site: tuple[str, dict[str, str]], width: int
) -> None:
    base, names = site
    document = names["arabic"].rsplit(".", 2)[0]
    heading, = _lines(base, "/view?pdi=" + urllib.parse.quote(document, safe=""), [("h1", ARABIC[:10])], width,
                      f"rtl-titles-document-{width}.png")
    _flush(heading, "right")
    fact, = _lines(base, "/view?pdi=" + urllib.parse.quote(names["arabic"], safe=""), [("dd", ARABIC[:10])], width,
                   f"rtl-titles-facts-{width}.png")
    _flush(fact, "right")
