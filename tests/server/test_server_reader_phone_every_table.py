"""Every other table of the reader's on a phone, opened in Chromium at 390 and 320 px: none scrolls sideways.

The tables of series (the home page's and ``/series``), a series' table of years, a month's table of days, a
document's Formats and Statements and the API reference's tables of parameters scrolled sideways in their box
(or, at 320 px, widened the page: the API's) as a document's Versions table did before it was made cards
(``test_server_reader_phone_tables.py``). Each is cards now, as that one is: each row a card, each cell a line
after (a series' name and a month's count: under) its column's heading. On each page, at each width, the window
is as wide as asked (a phone's browser widens the page it lays out to hold what is wider than the window), the
page does not scroll sideways, no table scrolls in its box and nothing of a table's rows is past the window's
edges; a screenshot of each is saved (``phone-every-PAGE-WIDTH.png``). At 1100 px they are tables as before.

Expected values are worked out here, not read from the pages: the names as registered and deposited
(PDI-GRAMMAR.md), the months a deposit's clock puts documents in, the columns' headings each page writes.
"""

from __future__ import annotations

import datetime
import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import serving
from test_server_reader_phone_tables import LABELS
from test_server_reader_walk_browser import _shown

from pdi import formats
from pdi.archive import Archive, Content
from pdi.capture.browser import devtools
from support.drawn_lines import drawn_lines

S = "records.example.us"
#: A series under ``S`` whose first label (44 characters) is longer than a card's line on a phone.
CHILD = "court-of-appeal-and-administrative-tribunals." + S
#: A document of ``S`` deposited under a URL as its id: a statement about a passage of it names it by that id,
#: percent-encoded (PDI-GRAMMAR.md §2.4), 52 characters with no place to break.
URL = "https://www.courts.example.us/rulings/2026/appeal-4211.html"
#: A media type of 71 characters (a word processor's), as the Formats table writes it.
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
NOTE = ("Read into the record at the hearing of 30 November 2026 by counsel for the appellant, who asked that it"
        " be cited as it stands.")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, dict[str, str]]]:
    root: Path = tmp_path_factory.mktemp("phone-every-table")
    now = [datetime.datetime(2024, 3, 5, 9, 0, tzinfo=datetime.UTC)]
    with Archive.init(root / "archive", clock=lambda: now[0]) as archive:
        archive.add_series(S)
        archive.add_series(CHILD, parent=S)
        archive.add(S, b"The first ruling.\n", format="text")  # 2024-03
        now[0] = datetime.datetime(2025, 7, 14, 9, 0, tzinfo=datetime.UTC)
        archive.add(CHILD, b"A tribunal's ruling.\n", format="text")  # 2025-07, in the child
        now[0] = datetime.datetime(2026, 11, 29, 9, 0, tzinfo=datetime.UTC)
        archive.add(S, b"The day before.\n", format="text")  # 2026-11-29
        now[0] = datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.UTC)
        ruling = archive.add(S, b"The appeal is dismissed.\n", format="text")  # 2026-11-30
        generic = str(ruling).rsplit(".", 2)[0]
        archive.add_version(generic, [Content(b"The appeal is dismissed, with costs.\n", "text"),
                                      Content(b"PK\x03\x04 a word processor's file", formats.token_for(DOCX))],
                            force=True)
        archive.annotate(generic, "title", "A ruling of the court of appeal")
        archive.annotate(generic, "title", "The ruling on the appeal, retitled")
        archive.annotate(generic, "x.court_reference_number", "CV-2026-004211")
        archive.annotate(f"{ruling}#char=4,10", "dcterms:description", NOTE)
        captured = archive.add(S, b"<p>The ruling as published.</p>", format="html", foreign_id=URL)
        archive.annotate(f"{captured}#char=3,10", "note", NOTE)
        archive.annotate(generic, "relation", str(captured))
        archive.verify()
    with serving(root / "archive") as (_, port):
        yield port, {"ruling": generic, "captured": str(captured).rsplit(".", 2)[0]}


def _url(port: int, names: dict[str, str], page: str) -> str:
    path = {"home": "/", "series-list": "/series", "series": f"/series/{S}", "month": f"/series/{S}/2026/11",
            "document": "/view?pdi=" + urllib.parse.quote(names["ruling"], safe=""),
            "captured": "/view?pdi=" + urllib.parse.quote(names["captured"], safe=""), "api": "/api"}[page]
    return f"http://127.0.0.1:{port}{path}"


#: The page's: the window's width; the page's [scrollWidth, clientWidth]; each table in ``<main>``: its id (or
#: class), [scrollWidth, clientWidth], its box's left and right edges and the left and right edges furthest out of
#: anything in its rows; the table asked for scrolled into view (for the screenshot).
MEASURED = """((table) => {
  const tables = [...document.querySelectorAll('main table')].map((t) => {
    const boxes = [...t.querySelectorAll('tbody *, tbody td, caption')].map((e) => e.getBoundingClientRect())
      .filter((r) => r.width > 0);
    const own = t.getBoundingClientRect();
    return [t.id || t.className, t.scrollWidth, t.clientWidth, own.left, own.right,
            Math.min(...boxes.map((r) => r.left)), Math.max(...boxes.map((r) => r.right))]; });
  document.querySelector(table).scrollIntoView({block: 'start'});
  const page = document.scrollingElement;
  return {width: innerWidth, page: [page.scrollWidth, page.clientWidth], tables}; })"""


def _name(table: str) -> str:
    return table.strip("#").split()[0].removeprefix("get_api_")


PAGES = [("home", "#series"), ("series-list", "#series"), ("series", "#years"), ("month", "#days"),
         ("document", "#formats"), ("document", "#statements"), ("captured", "#statements"),
         ("api", "#get_api_search table")]


@pytest.mark.parametrize("width", [390, 320])
@pytest.mark.parametrize(("page", "table"), PAGES, ids=[f"{p}-{_name(t)}" for p, t in PAGES])
def test_no_table_of_the_readers_scrolls_sideways_on_a_phone(
    served: tuple[int, dict[str, str]], page: str, table: str, width: int
) -> None:
    port, names = served
    shot = f"phone-every-{page}-{_name(table)}-{width}.png"
    with devtools() as pipe:
        seen = json.loads(_shown(pipe, _url(port, names, page), width, shot, check=f"{MEASURED}({json.dumps(table)})"))
    assert seen["width"] == width, seen  # the page laid out at the window's width, not widened to hold a table
    assert seen["page"][0] <= seen["page"][1] == width, seen  # the page does not scroll sideways
    assert seen["tables"], seen
    for name, scroll, client, edge, end, left, right in seen["tables"]:
        assert scroll <= client, (name, seen)  # nor does a table in its box
        assert edge >= 0 and end <= width, (name, seen)  # the table within the window
        assert edge <= left and right <= end, (name, seen)  # and nothing of its rows past its edges


#: Each table's headings, as its page writes them (the API's in lower case); a month's abbreviated, as the
#: ``abbr`` of its heading is.
HEADINGS = {
    ("home", "#series"): ["Series", "Documents", "Latest day", "Latest deposit"],
    ("series-list", "#series"): ["Series", "Under", "Documents", "First day", "Latest day", "Latest deposit",
                                 "Registered"],
    ("series", "#years"): ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec", "Total"],
    ("month", "#days"): ["Day", "Weekday", "Documents"],
    ("document", "#formats"): ["Version", "Format", "Media type", "Bytes", "SHA-256", "Deposited", "Fixity"],
    ("document", "#statements"): ["About", "Key", "Value", "Stated by", "When", "Status"],
    ("captured", "#statements"): ["About", "Key", "Value", "Stated by", "When", "Status"],
    ("api", "#get_api_search table"): ["parameter", "in", "required", "what"],
}


@pytest.mark.parametrize(("page", "table"), PAGES, ids=[f"{p}-{_name(t)}" for p, t in PAGES])
def test_each_line_of_a_card_says_its_columns_heading_and_a_desktop_keeps_its_table(
    served: tuple[int, dict[str, str]], page: str, table: str
) -> None:
    port, names = served
    url = _url(port, names, page)
    with devtools() as pipe:
        phone = json.loads(_shown(pipe, url, 390, f"phone-every-labels-{page}-{_name(table)}-390.png",
                                  check=f"{LABELS}({json.dumps(table)})"))
        desk = json.loads(_shown(pipe, url, 1100, f"phone-every-labels-{page}-{_name(table)}-1100.png",
                                 check=f"{LABELS}({json.dumps(table)})"))
    assert [label for label, *_ in phone] == HEADINGS[page, table], phone  # the line's label, the cell's data-label
    assert [heading for _, heading, *_ in phone] == HEADINGS[page, table], phone  # the column's own heading
    assert {shown for *_, shown in phone} == {"flow-root"}, phone  # a card's line
    assert {(floated, shown) for *_, floated, shown in desk} == {("none", "table-cell")}, desk  # a table as ever


#: The Formats table's Media type cells: each one's text and how many lines it takes; and how far the page scrolls
#: sideways.
MEDIA = """[[...document.querySelectorAll('#formats code.media')].map((code) => { const range = document.createRange();
  range.selectNodeContents(code);
  return [code.textContent, new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size]; }),
  document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth]"""


def test_a_long_media_type_in_the_formats_table_fits_a_desktop(served: tuple[int, dict[str, str]]) -> None:
    # 1100 px: the word processor's media type, officedocument.wordprocessingml.document unbroken, made the Formats
    # table wider than the page, which scrolled sideways; it wraps before a dot, as a long one does elsewhere, the
    # short ones whole
    port, names = served
    with devtools() as pipe:
        media, sideways = json.loads(_shown(pipe, _url(port, names, "document"), 1100, "phone-every-formats-1100.png",
                                            check=MEDIA))
    assert [text for text, _ in media] == ["text/plain", "text/plain", DOCX], media
    assert [lines for _, lines in media][:2] == [1, 1], media
    assert sideways <= 0, sideways


#: Each series' name in a table of series, as a reader's selection of it reads (what a copy takes) and as its text is.
COPIED = """[...document.querySelectorAll('#series td code.series')].map((code) => {
  const range = document.createRange(); range.selectNodeContents(code);
  const picked = getSelection(); picked.removeAllRanges(); picked.addRange(range);
  return [picked.toString(), code.textContent]; })"""


@pytest.mark.parametrize("page", ["home", "series-list"])
def test_a_series_name_in_a_card_copies_as_it_is(served: tuple[int, dict[str, str]], page: str) -> None:
    # 320 px: the child's first label, longer than a card's line, wraps in itself; each name, its parent's under
    # it on /series among them, still reads back as registered, nothing put into it to wrap it
    port, names = served
    with devtools() as pipe:
        copied = json.loads(_shown(pipe, _url(port, names, page), 320, f"phone-every-copied-{page}-320.png",
                                   check=COPIED))
    registered = [CHILD, S] + ([S] if page == "series-list" else [])  # the child's parent, S, in its row's Under
    assert sorted(copied) == sorted([name, name] for name in registered), copied


#: PDI-GRAMMAR.md §1: the reserved characters, %-escaped in a unique id (``:`` and ``-`` are not reserved).
RESERVED = "%.,/#*@=?+"


def _escaped(unique_id: str) -> str:
    """``unique_id`` as a name holds it: each reserved character %-escaped, in upper-case hex (§2.2)."""
    return "".join(f"%{ord(c):02X}" if c in RESERVED else c for c in unique_id)


#: The capture's statement's About name: its text as a selection of it reads (what a copy takes) and as it is,
#: where each of its lines ends (the text before each line's end), the page's [scrollWidth, clientWidth,
#: innerWidth] and the Statements table's [scrollWidth, clientWidth].
ABOUT = """(() => { const code = document.querySelector('#statements td.about code');
  const range = document.createRange(); range.selectNodeContents(code);
  const picked = getSelection(); picked.removeAllRanges(); picked.addRange(range); const copied = picked.toString();
  picked.removeAllRanges();
  const walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT), tops = [];
  for (let node = walk.nextNode(); node; node = walk.nextNode())
    for (let i = 0; i < node.data.length; i++) {
      const one = document.createRange(); one.setStart(node, i); one.setEnd(node, i + 1);
      const box = [...one.getClientRects()].find((r) => r.width > 0); tops.push(box ? Math.round(box.top) : null); }
  const text = code.textContent, ends = [];
  for (let i = 1; i < tops.length; i++) if (tops[i] !== tops[i - 1]) ends.push(text.slice(0, i));
  const table = document.querySelector('#statements'), page = document.scrollingElement;
  table.scrollIntoView({block: 'start'});
  return {copied, text, ends, page: [page.scrollWidth, page.clientWidth, innerWidth],
          table: [table.scrollWidth, table.clientWidth]}; })()"""


@pytest.mark.parametrize("width", [1100, 390, 320])
def test_a_captures_name_in_about_fits_the_page_and_copies_whole(
    served: tuple[int, dict[str, str]], width: int
) -> None:
    # 1100 px: the capture's name in About, its id the URL escaped (84 characters, no place to break), made the
    # Statements table 5 px wider than the page, which scrolled sideways; it wraps after the URL's escaped slashes
    # (<wbr>), so that a copy of it is still the name as written, nothing of the page or the table past its edge
    port, names = served
    name = _escaped(URL) + ".html.1#char=3,10"  # its last part, as About shows another name of the document
    with devtools() as pipe:
        seen = json.loads(_shown(pipe, _url(port, names, "captured"), width, f"phone-every-about-{width}.png",
                                 check=ABOUT))
    assert seen["text"] == name, seen
    assert seen["copied"] == name, seen  # a copy of it: the name, no space nor line end put into it
    page_scroll, page_client, window = seen["page"]
    assert page_scroll <= page_client <= window == width, seen  # the page does not scroll sideways
    assert seen["table"][0] <= seen["table"][1], seen  # nor does the table in its box
    # each line ends after an escaped slash (not between the two of https:%2F%2F), before an escaped dot or before
    # the fragment's #: never inside a piece (example%2|Eus, appeal-|4211)
    assert seen["ends"], seen  # it does wrap
    assert all((end.endswith("%2F") and not name[len(end):].startswith("%2F"))
               or name[len(end):].startswith(("%2E", "#")) for end in seen["ends"]), seen


#: Each operation's heading on /api, its copy and its drawn lines; the heading of ``/uri-res/{service}`` shown.
HEADINGS_SHOWN = drawn_lines("main section > h2 code", "/uri-res/{service}", "start")


@pytest.mark.parametrize("width", [320, 390])
def test_an_operations_path_in_its_heading_breaks_only_after_a_slash(
    served: tuple[int, dict[str, str]], width: int
) -> None:
    # 320 px: "GET /uri-res/{service}" broke at its own hyphen, /uri- above res/, which reads as a word hyphenated
    # (or copies as two); a path breaks only after a /, its pieces whole, and copies as written
    port, names = served
    described = httpx.get(f"http://127.0.0.1:{port}/openapi.json").json()["paths"]
    expected = {f"{method.upper()} {path}" for path, methods in described.items() for method in methods}
    with devtools() as pipe:
        shown, sideways = json.loads(_shown(pipe, _url(port, names, "api"), width, f"phone-every-api-headings-{width}.png",
                                            check=HEADINGS_SHOWN))
    assert {text for _, text, _ in shown} == expected, shown
    assert "GET /uri-res/{service}" in expected
    for copied, text, lines in shown:
        assert copied == text, (copied, text)  # nothing put into it
        assert "".join(lines) == text, lines
        # a line ends after a / or at the space after the method, never at a hyphen (nor anywhere else)
        assert all(line.endswith(("/", " ")) for line in lines[:-1]), lines
    if width == 320:  # it does wrap there, after a slash
        assert [lines for _, text, lines in shown if text == "GET /uri-res/{service}"] == [["GET /uri-res/", "{service}"]]
    assert sideways <= 0, sideways
