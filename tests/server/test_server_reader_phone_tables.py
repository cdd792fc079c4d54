"""The reader's tables on a phone, and the tombstone's columns on a desktop, opened in Chromium.

* On a phone (390 and 320 px) a document's Versions table, a tombstone's table and a day's table are cards, one a
  row, each cell a line under its column's heading: nothing of them, the name to cite least of all, is past the
  window's edge or in a box scrolled sideways (they scrolled in their box, the names cut off at its right edge).
  The name shown wraps between its parts and reads back, selected as a reader copies it, exactly as it is: no
  character is put into it to wrap it.
* On a desktop (1100 px) a tombstone's Format column holds ``image/svg+xml`` on one line (it was cut ``image/``
  above ``svg+xml``, the SHA-256 beside it taking most of the width), its SHA-256 still whole.

Expected values are worked out here from the names as deposited (PDI-GRAMMAR.md: series, day, the day's serial
or the id given, the format token, the version), and the media type of the token ``svg%2Bxml`` from decision 6.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_helpers import serving
from test_server_reader_walk_browser import _shown

from chromium_helpers import open_page
from pdi.archive import Archive, Content
from pdi.capture.browser import devtools

S = "records.example.us"
DAY = datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.UTC)
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'
#: An id a court gives its own records: a name of 76 characters, its last part (the id, format and version) 35.
COURT_ID = "ruling-2026-CV-004211-appeal"
#: The octets of the version withdrawn.
GONE = SVG + b"\n\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, dict[str, str]]]:
    root: Path = tmp_path_factory.mktemp("phone-tables")
    with Archive.init(root / "archive", clock=lambda: DAY) as archive:
        archive.add_series(S)
        drawing = archive.add(S, SVG, format="svg%2Bxml", force=True)
        generic = str(drawing).rsplit(".", 2)[0]
        second = archive.add_version(generic, [Content(SVG + b"\n", "svg%2Bxml"), Content(b"A drawing.\n", "text")],
                                     force=True)
        ruling = archive.add(S, b"The appeal is dismissed.\n", format="text", foreign_id=COURT_ID)
        gone = archive.add(S, GONE, format="svg%2Bxml", force=True)
        archive.withdraw(str(gone), "Deposited in error.")
        names = {"drawing": generic, "v1": str(drawing), "v2": str(second[0]), "v2-text": str(second[1]),
                 "ruling": str(ruling), "ruling-generic": str(ruling).rsplit(".", 2)[0], "gone": str(gone)}
    with serving(root / "archive") as (_, port):
        yield port, names


def _view(port: int, name: str) -> str:
    return f"http://127.0.0.1:{port}/view?pdi={urllib.parse.quote(name, safe='')}"


#: For a table: the page's and the table's [scrollWidth, clientWidth], the window's width, the right edge of the
#: furthest right of the table's cells' contents, the left edge of the furthest left, and each name shown in it
#: (``code.name``; a day's ids) as a reader's selection of it reads (what a copy takes) and as its text is.
MEASURED = """((table) => {
  const t = document.querySelector(table), names = [];
  const boxes = [...t.querySelectorAll('td *, td')].map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0);
  for (const code of t.querySelectorAll('code.name, td.id code')) {
    const range = document.createRange(); range.selectNodeContents(code);
    const picked = getSelection(); picked.removeAllRanges(); picked.addRange(range);
    names.push([picked.toString(), code.textContent]);
  }
  getSelection().removeAllRanges();
  t.scrollIntoView({block: 'start'});  // in the screenshot
  return {page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
          table: [t.scrollWidth, t.clientWidth], width: innerWidth,
          right: Math.max(...boxes.map((r) => r.right)), left: Math.min(...boxes.map((r) => r.left)), names};
})"""


def _measured(port: int, url: str, table: str, width: int, file: str) -> dict[str, object]:
    with devtools() as pipe:
        seen: dict[str, object] = json.loads(_shown(pipe, url, width, file, check=f"{MEASURED}({json.dumps(table)})"))
    return seen


def _within_the_window(seen: dict[str, object], width: int) -> None:
    assert seen["page"] == [width, width], seen  # the page does not scroll sideways
    table = seen["table"]
    assert isinstance(table, list) and table[0] <= table[1], seen  # nor does the table in its box
    left, right = seen["left"], seen["right"]
    assert isinstance(left, int | float) and isinstance(right, int | float), seen
    assert left >= 0 and right <= width, seen  # every cell's content within the window


@pytest.mark.parametrize("width", [390, 320])
def test_a_documents_versions_are_read_on_a_phone_whole(served: tuple[int, dict[str, str]], width: int) -> None:
    port, names = served
    seen = _measured(port, _view(port, names["drawing"]), "#versions", width, f"phone-versions-{width}.png")
    _within_the_window(seen, width)
    # each format's name as deposited, copied whole: version 1's, then version 2's two
    assert seen["names"] == [[names[k], names[k]] for k in ("v1", "v2", "v2-text")], seen
    assert names["v1"] == f"urn:pdi://{S}/2026/11/30/1.svg%2Bxml.1"


@pytest.mark.parametrize("width", [390, 320])
def test_a_long_name_in_the_versions_list_wraps_within_a_phone(served: tuple[int, dict[str, str]], width: int) -> None:
    port, names = served
    seen = _measured(port, _view(port, names["ruling-generic"]), "#versions", width, f"phone-versions-long-{width}.png")
    _within_the_window(seen, width)
    assert seen["names"] == [[names["ruling"]] * 2], seen
    assert names["ruling"] == f"urn:pdi://{S}/2026/11/30/{COURT_ID}.text.1"


@pytest.mark.parametrize("width", [390, 320])
def test_a_tombstones_table_is_read_on_a_phone_whole(served: tuple[int, dict[str, str]], width: int) -> None:
    port, names = served
    seen = _measured(port, _view(port, names["gone"]), "#withdrawn", width, f"phone-tombstone-{width}.png")
    _within_the_window(seen, width)


@pytest.mark.parametrize("width", [390, 320])
def test_a_days_table_is_read_on_a_phone_whole(served: tuple[int, dict[str, str]], width: int) -> None:
    port, _ = served
    seen = _measured(port, f"http://127.0.0.1:{port}/series/{S}/2026/11/30", "#documents", width,
                     f"phone-day-{width}.png")
    _within_the_window(seen, width)
    # each document's id as its name holds it: the day's serials (the drawing 1, the one withdrawn 2), the court's id
    assert seen["names"] == [["1", "1"], ["2", "2"], [COURT_ID, COURT_ID]], seen


#: Each cell of the table's first row: its column's heading as the card shows it beside the cell (the style's
#: generated text), the heading the table itself gives it, and whether the cell starts to the right of that heading.
LABELS = """((table) => { const t = document.querySelector(table); t.scrollIntoView({block: 'start'});
  return [...t.querySelectorAll('tbody tr:first-child td')].map((td) => [td.dataset.label,
    t.querySelectorAll('thead th')[td.cellIndex].textContent, getComputedStyle(td, '::before').float,
    getComputedStyle(td).display]); })"""


@pytest.mark.parametrize(("page", "table", "headings"), [
    ("drawing", "#versions", [("Version", "Version"), ("Deposited", "Deposited"), ("Formats", "Formats")]),
    ("gone", "#withdrawn", [("Version", "Version"), ("Format", "Format"), ("Bytes", "Bytes"), ("SHA-256", "SHA-256"),
                            ("Deposited", "Deposited")]),
    ("day", "#documents", [("Id", "Id"), ("Title", "Title"), ("Latest formats", "Formats (latest version)"),
                           ("Versions", "Versions"), ("Latest deposit", "Latest version deposited")]),
], ids=["versions", "tombstone", "day"])
def test_each_line_of_a_card_says_its_columns_heading(
    served: tuple[int, dict[str, str]], page: str, table: str, headings: list[tuple[str, str]]
) -> None:
    port, names = served
    url = f"http://127.0.0.1:{port}/series/{S}/2026/11/30" if page == "day" else _view(port, names[page])
    with devtools() as pipe:
        phone = json.loads(_shown(pipe, url, 390, f"phone-labels-{page}-390.png", check=f"{LABELS}('{table}')"))
        desk = json.loads(_shown(pipe, url, 1100, f"phone-labels-{page}-1100.png", check=f"{LABELS}('{table}')"))
    assert [(label, heading) for label, heading, *_ in phone] == headings, phone
    assert {(floated, shown) for *_, floated, shown in phone} == {("left", "flow-root")}, phone
    assert {(floated, shown) for *_, floated, shown in desk} == {("none", "table-cell")}, desk  # a table as ever


#: The lines (their tops) the tombstone's Format cell's text is drawn on, and its SHA-256's.
TOMBSTONE_LINES = """[...document.querySelectorAll('#withdrawn tbody td:nth-child(2), #withdrawn code.sha')].map((cell) => {
  const range = document.createRange(); range.selectNodeContents(cell);
  return [cell.textContent, new Set([...range.getClientRects()].filter((r) => r.width > 0)
    .map((r) => Math.round(r.top))).size]; })"""


def test_a_tombstones_format_stands_on_one_line_on_a_desktop(served: tuple[int, dict[str, str]]) -> None:
    port, names = served
    with devtools() as pipe:
        seen = json.loads(_shown(pipe, _view(port, names["gone"]), 1100, "phone-tombstone-1100.png",
                                 check=TOMBSTONE_LINES))
    assert seen == [["image/svg+xml", 1], [hashlib.sha256(GONE).hexdigest(), 1]], seen


def test_a_table_of_cards_is_still_a_table_to_a_screen_reader(served: tuple[int, dict[str, str]]) -> None:
    # 390 px: the day's three documents, each a card, are read as a table's rows of five cells under its five column
    # headings (Chromium's accessibility tree: a table drawn as blocks keeps its roles), not as loose text
    port, _ = served
    with devtools() as pipe:
        session = open_page(pipe, f"http://127.0.0.1:{port}/series/{S}/2026/11/30")
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1,
                                                          "mobile": True}, session, deadline)
        pipe.call("Accessibility.enable", None, session, deadline)
        nodes = pipe.call("Accessibility.getFullAXTree", {}, session, deadline)["nodes"]
        drawn = pipe.call("Runtime.evaluate", {"expression": "getComputedStyle(document.querySelector('#documents tr'))"
                                               ".display", "returnByValue": True}, session, deadline)["result"]["value"]
    roles = Counter(node.get("role", {}).get("value") for node in nodes)
    assert drawn == "block"  # a card
    assert (roles["table"], roles["row"], roles["columnheader"], roles["cell"]) == (1, 1 + 3, 5, 3 * 5), roles
