"""Every page of the reader's app at every width from a phone's to a desktop's, opened in Chromium: none scrolls sideways.

Between 640 and about 1000 px (a tablet, a narrow window) a document's page scrolled sideways (805 px wide at a
700 px window for a capture's, 914 px for a plain document's): its tables were cards up to 40 rem only, and its
Formats table, seven columns, is wider than the page until about 63 rem (a media type of 24 characters whole in
it); a series' table of years (fourteen columns) until about 50 rem. Every table of the reader's is cards up to
64 rem (1,024 px) now. A tombstone's citation ended in its link, a URL with no place to break (702 px at 700);
it wraps after a ``/`` and before a ``.`` as a name does. Each page is opened at a sweep of widths and measured: the window as wide as asked, the page not scrolling
sideways, no table wider than its box but a table of series on a desktop, a box meant to scroll (overflow-x auto)
that the keyboard reaches (tabindex 0). A screenshot of each page at 768 px is saved (``tablet-PAGE-768.png``).

* At 1100 px the Formats table cut ``text/html`` into ``text/`` over ``html``: a media type short enough to stand
  whole (24 characters, ``application/octet-stream``) does, as the viewer's facts and a search's hits write it.
* At 320 px a problem type's heading on ``/api`` broke at its own hyphens (``/api#problem-passage-`` over
  ``orphaned``, a word hyphenated to a reader, who copies the type to match it); it breaks only before a hyphen,
  so that no line ends in one, and copies as written.
* A statement's value naming a capture (``relation``, ``…/https:%2F%2Fwww%2Ecourts…``) broke anywhere, ``…%2`` above
  ``Eexample``; it breaks only where a name may (after a ``/`` or ``%2F``, before a ``.`` or ``%2E``), copying whole.
* From 1025 to about 1070 px a document's Formats, a table there, was wider than its box beside a gigabyte's count
  (``1,073,741,824``); the count wraps after a thousands separator where it must, copying whole.

Expected values are worked out here, not read from the pages: the media types the formats stand for (RFC 6838's
registry, as ``formats`` maps them), the problem types the API's answers are typed with, the tombstone's link as a
browser would write it (``/view?pdi=`` and the name percent-encoded).
"""

from __future__ import annotations

import base64
import datetime
import json
import sqlite3
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import serving
from test_server_pages_screenshots import SHOTS
from test_server_reader_walk_browser import _shown

from chromium_helpers import navigate_and_wait_for_load, new_tab
from pdi import formats
from pdi.archive import Archive, Content
from pdi.capture.browser import devtools
from pdi.server.pages.api_docs import problem_types
from support.drawn_lines import drawn_lines
from support.stored_blobs import flip_octet

S = "records.example.us"
#: A series whose first label (44 characters) is longer than a card's line on a phone.
CHILD = "court-of-appeal-and-administrative-tribunals." + S
#: A capture's URL, the id of the document deposited under it.
URL = "https://www.courts.example.us/rulings/2026/appeal-4211.html"
#: A word processor's media type (71 characters) and the longest one a table's cell keeps whole (24).
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
OCTETS = "application/octet-stream"
NOTE = ("Read into the record at the hearing of 30 November 2026 by counsel for the appellant, who asked that it"
        " be cited as it stands.")
REASON = "Deposited in error: a duplicate of the court's own copy."
#: A gigabyte (1 GiB) in bytes: 2 ** 30, written by hand as a reader sees it, grouped by thousands.
GIB = 1_073_741_824
#: Documents a month of a busy year of ``S`` (2023) holds: five digits a month, 148,140 in the year.
BUSY = 12_345
#: The widest window (px) in which a page's table of series or of years is cards, by page: 52 rem of 16 px for the
#: home page's table of series (four columns) and a series' years (fourteen), which fit as tables from about 740
#: and 800 px; 60 rem for /series's table of series (seven columns), which fits from about 940 px. A table of series
#: whose names are wider than its window (CHILD's first label, 44 characters) scrolls in its own box above it.
TABLET_CARDS = {"home": 52 * 16, "series": 52 * 16, "series-list": 60 * 16}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, dict[str, str]]]:
    root: Path = tmp_path_factory.mktemp("tablet-widths")
    now = [datetime.datetime(2024, 3, 5, 9, 0, tzinfo=datetime.UTC)]
    with Archive.init(root / "archive", clock=lambda: now[0]) as archive:
        archive.add_series(S)
        archive.add_series(CHILD, parent=S)
        archive.add(S, b"The first ruling.\n", format="text")  # 2024-03
        now[0] = datetime.datetime(2025, 7, 14, 9, 0, tzinfo=datetime.UTC)
        archive.add(CHILD, b"A tribunal's ruling.\n", format="text")  # 2025-07, in the child
        now[0] = datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.UTC)
        ruling = archive.add(S, b"The appeal is dismissed.\n", format="text")
        generic = str(ruling).rsplit(".", 2)[0]
        archive.add_version(generic, [Content(b"The appeal is dismissed, with costs.\n", "text"),
                                      Content(b"PK\x03\x04 a word processor's file", formats.token_for(DOCX)),
                                      Content(b"\x00\x01 the court's own octets", formats.token_for(OCTETS))],
                            force=True)
        archive.annotate(generic, "title", "A ruling of the court of appeal")
        archive.annotate(generic, "x.court_reference_number", "CV-2026-004211")
        archive.annotate(f"{ruling}#char=4,10", "dcterms:description", NOTE)
        captured = archive.add(S, b"<p>The ruling as published.</p>", format="html", foreign_id=URL)
        archive.annotate(f"{captured}#char=3,10", "note", NOTE)
        archive.annotate(generic, "relation", str(captured))
        gone = archive.add(S, b"A duplicate of the appeal's ruling.\n", format="text")
        archive.withdraw(str(gone), REASON)
        damaged = archive.add(S, b"A ruling the disk damaged.\n", format="text")
        sha = archive.get(str(damaged)).record.sha256
        big = archive.add(S, b"\x00\x01 the recording of the hearing", format=formats.token_for(OCTETS))
        big_sha = archive.get(str(big)).record.sha256
        archive.verify()
    flip_octet(root / "archive", sha, 4)  # one bit flipped as bit rot flips it: its SHA-256 no longer the one kept
    # a gigabyte's size, as the catalog keeps it for a file of 1 GiB (the page shows the catalog's count and reads
    # no octet of it): depositing a real one would hash and write a gigabyte on a shared test machine
    with sqlite3.connect(root / "archive" / "catalog.sqlite") as catalog:
        assert catalog.execute("UPDATE representations SET size = ? WHERE sha256 = ?", (GIB, big_sha)).rowcount == 1
        # a busy year, as the catalog counts a series' documents by day (its document_days): BUSY documents on the
        # first of each month of 2023, a year whose row in the series' table of years is the widest
        catalog.executemany("INSERT INTO document_days (series, day, documents, last_deposit) VALUES (?, ?, ?, ?)",
                            [(S, f"2023-{m:02d}-01", BUSY, f"2023-{m:02d}-01T09:00:00.000000Z") for m in range(1, 13)])
    catalog.close()
    with serving(root / "archive") as (_, port):
        yield port, {"ruling": generic, "captured": str(captured).rsplit(".", 2)[0], "gone": str(gone),
                     "damaged": str(damaged), "big": str(big).rsplit(".", 2)[0], "relation": str(captured)}


def _view(name: str) -> str:
    return "/view?pdi=" + urllib.parse.quote(name, safe="")


#: Each page of the reader's: its path (given the names deposited) and the status it answers with.
PAGES = {
    "home": (lambda n: "/", 200), "series-list": (lambda n: "/series", 200),
    "series": (lambda n: f"/series/{S}", 200), "year": (lambda n: f"/series/{S}/2026", 200),
    "month": (lambda n: f"/series/{S}/2026/11", 200), "day": (lambda n: f"/series/{S}/2026/11/30", 200),
    "document": (lambda n: _view(n["ruling"]), 200), "big": (lambda n: _view(n["big"]), 200), "captured": (lambda n: _view(n["captured"]), 200),
    "tombstone": (lambda n: _view(n["gone"]), 410), "search": (lambda n: "/search?q=appeal", 200),
    "captures": (lambda n: "/captures?url=" + urllib.parse.quote(URL, safe=""), 200), "api": (lambda n: "/api", 200),
    "400": (lambda n: "/view?pdi=urn:pdi://records", 400),
    "404": (lambda n: _view(f"urn:pdi://{S}/2026/11/30/999.text.1"), 404),
    "500": (lambda n: _view(n["damaged"]), 500), "501": (lambda n: "/uri-res/N2Rs?urn:pdi://x", 501),
}
#: From a phone's to a desktop's, and either side of each breakpoint (40 rem: 640 px; 52 rem: 832 px; 60 rem:
#: 960 px; 64 rem: 1024 px).
#: 1030 to 1070 px: a document's Formats just wider than 64 rem, a table there, was wider than its box beside a
#: gigabyte's count (``1,073,741,824``) until about 1070 px.
WIDTHS = [320, 390, 480, 640, 660, 700, 768, 800, 832, 840, 900, 960, 970, 1000, 1024, 1030, 1040, 1050, 1070,
          1100, 1280]

#: The window's width; the page's [scrollWidth, clientWidth]; each table: its id (or class), [scrollWidth,
#: clientWidth], its overflow-x and its tabIndex.
MEASURED = """(() => { const page = document.scrollingElement;
  return {width: innerWidth, page: [page.scrollWidth, document.documentElement.clientWidth],
          tables: [...document.querySelectorAll('table')].map((t) => [t.id || t.className, t.scrollWidth,
            t.clientWidth, getComputedStyle(t).overflowX, t.tabIndex])}; })()"""


@pytest.mark.parametrize("page", list(PAGES))
def test_no_page_scrolls_sideways_at_any_width(served: tuple[int, dict[str, str]], page: str) -> None:
    port, names = served
    path, status = PAGES[page]
    url = f"http://127.0.0.1:{port}{path(names)}"
    assert httpx.get(url, headers={"Accept": "text/html"}).status_code == status  # the page it is said to be
    wide: list[int] = []
    with devtools() as pipe:
        deadline = time.monotonic() + 240
        session = new_tab(pipe, "Page", "Network", deadline=deadline)
        for width in WIDTHS:
            pipe.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1,
                                                              "mobile": width < 600}, session, deadline)
            navigate_and_wait_for_load(pipe, session, url, deadline)
            seen = json.loads(pipe.call("Runtime.evaluate", {"expression": f"JSON.stringify({MEASURED})",
                                                             "returnByValue": True}, session, deadline)["result"]["value"])
            if width == 768:
                SHOTS.mkdir(parents=True, exist_ok=True)
                shot = pipe.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                                 session, deadline)["data"]
                (SHOTS / f"tablet-{page}-{width}.png").write_bytes(base64.b64decode(shot))
            assert seen["width"] == width, (width, seen)  # laid out at the window's width, not widened
            assert seen["page"][0] <= seen["page"][1], (width, seen)  # the page does not scroll sideways
            for name, scroll, client, overflow, tab in seen["tables"]:
                if scroll > client:  # wider than its box: only a table of series, a table there, a box to scroll
                    assert (name, overflow, tab) == ("series", "auto", 0) and width > TABLET_CARDS[page], (width, seen)
                    wide.append(width)
    if page == "series-list":  # its child's name is wider than the window: it does scroll in its box there
        assert wide and min(wide) > TABLET_CARDS[page], wide


#: The Formats table's Media type cells: each one's text, class and how many lines it takes; how far the page
#: scrolls sideways.
MEDIA = """[[...document.querySelectorAll('#formats code.media')].map((code) => { const range = document.createRange();
  range.selectNodeContents(code);
  return [code.textContent, code.className, new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size];
  }), document.scrollingElement.scrollWidth - document.documentElement.clientWidth]"""


@pytest.mark.parametrize("width", [1100, 1280, 1040, 700])
@pytest.mark.parametrize("page", ["document", "captured"])
def test_a_short_media_type_in_formats_stands_whole(served: tuple[int, dict[str, str]], page: str, width: int) -> None:
    # 1100 px: text/html, in the Formats table beside a SHA-256, was cut text/ above html; one of at most 24
    # characters stands whole, a longer one (the word processor's) wraps after its / and before a dot
    port, names = served
    with devtools() as pipe:
        media, sideways = json.loads(_shown(pipe, f"http://127.0.0.1:{port}{_view(names[page.replace('document', 'ruling')])}",
                                            width, f"tablet-formats-{page}-{width}.png", check=MEDIA))
    expected = (["text/plain", "text/plain", DOCX, OCTETS] if page == "document" else ["text/html"])
    assert sorted(text for text, _, _ in media) == sorted(expected), media  # a version's formats in the table's order
    for text, kind, lines in media:
        if len(text) <= 24:
            assert (kind, lines) == ("media whole", 1), media
    assert sideways <= 0, sideways


#: Each problem type's heading on /api, its copy and its drawn lines; the heading of ``problem-passage-orphaned``
#: shown.
PROBLEM_HEADINGS = drawn_lines("main section > h3 code", "-passage-orphaned", "center")


@pytest.mark.parametrize("width", [320, 390])
def test_a_problem_types_heading_breaks_only_before_a_hyphen(served: tuple[int, dict[str, str]], width: int) -> None:
    # 320 px: /api#problem-passage-orphaned broke after its second hyphen, "/api#problem-passage-" above "orphaned",
    # which reads as a word hyphenated; it breaks only before a hyphen, each piece whole, and copies as written
    port, _ = served
    with devtools() as pipe:
        shown, sideways = json.loads(_shown(pipe, f"http://127.0.0.1:{port}/api", width,
                                            f"tablet-api-problems-{width}.png", check=PROBLEM_HEADINGS))
    expected = {f"/api#{key}" for key in problem_types()}
    assert "/api#problem-passage-orphaned" in expected
    assert {text for _, text, _ in shown} == expected, shown
    for copied, text, lines in shown:
        assert copied == text, (copied, text)  # nothing put into it
        assert "".join(lines) == text, lines
        assert not any(line.endswith("-") for line in lines), lines  # no line ends in a hyphen
        assert all(line.startswith("-") for line in lines[1:]), lines  # a line breaks before one, nowhere else
    if width == 320:  # it does wrap there, before a hyphen
        assert ["/api#problem-passage", "-orphaned"] in [lines for _, text, lines in shown
                                                         if text == "/api#problem-passage-orphaned"], shown
    assert sideways <= 0, sideways


#: The tombstone's citation's link: as a selection of it reads and as it is; how far the page scrolls sideways.
LINK = """(() => { const link = document.querySelector('blockquote.citation > span:last-child');
  const range = document.createRange(); range.selectNodeContents(link);
  const picked = getSelection(); picked.removeAllRanges(); picked.addRange(range); const copied = picked.toString();
  picked.removeAllRanges(); link.scrollIntoView({block: 'center'});
  return [copied, link.textContent, link.getClientRects().length,
          document.scrollingElement.scrollWidth - document.documentElement.clientWidth]; })()"""


@pytest.mark.parametrize("width", [660, 700])
def test_a_tombstones_link_wraps_and_copies_whole(served: tuple[int, dict[str, str]], width: int) -> None:
    # 700 px: the link that ends a tombstone's citation, a URL with no place to break, made the page 702 px wide;
    # it wraps after a / or before a . (nothing put into it), and a copy of it is the link as written
    port, names = served
    with devtools() as pipe:
        copied, text, _, sideways = json.loads(_shown(pipe, f"http://127.0.0.1:{port}{_view(names['gone'])}", width,
                                                      f"tablet-tombstone-link-{width}.png", check=LINK))
    link = f"http://127.0.0.1:{port}/view?pdi=" + urllib.parse.quote(names["gone"], safe="")
    assert text == link and copied == link, (copied, text)
    assert sideways <= 0, sideways


#: The Formats table of a document of a gigabyte: its Bytes cell's count as a selection of it reads and as it is,
#: its lines; the table's [scrollWidth, clientWidth]; how far the page scrolls sideways.
BYTES = """(() => { const cell = document.querySelector('#formats td[data-label="Bytes"]'), table = cell.closest('table');
  const small = cell.querySelector('small'), range = document.createRange(); range.setStart(cell, 0);
  range.setEnd(cell, small ? [...cell.childNodes].indexOf(small) : cell.childNodes.length);
  const picked = getSelection(); picked.removeAllRanges(); picked.addRange(range); const copied = picked.toString();
  picked.removeAllRanges(); table.scrollIntoView({block: 'center'});
  return [copied, [table.scrollWidth, table.clientWidth], [...range.getClientRects()].length,
          document.scrollingElement.scrollWidth - document.documentElement.clientWidth]; })()"""


@pytest.mark.parametrize("width", [1030, 1050, 1070])
def test_a_gigabytes_formats_is_no_wider_than_its_page(served: tuple[int, dict[str, str]], width: int) -> None:
    # 1030 to 1070 px: just above 64 rem Formats is a table, not cards, and a whole application/octet-stream beside
    # 1,073,741,824 bytes made it wider than its box (about 1070 px needed); the count wraps after a thousands
    # separator where it must, and copies as written
    port, names = served
    with devtools() as pipe:
        copied, (scroll, client), _, sideways = json.loads(_shown(pipe, f"http://127.0.0.1:{port}{_view(names['big'])}",
                                                                  width, f"tablet-formats-gigabyte-{width}.png",
                                                                  check=BYTES))
    assert copied == "1,073,741,824", copied  # nothing put into it, nothing left out
    assert scroll <= client, (scroll, client)
    assert sideways <= 0, sideways


#: Each statement's value that is a name (a link): its copy, its text and its drawn lines; the capture's shown.
VALUES = drawn_lines("#statements td.value a bdi", ".html.1", "center")


def _allowed_breaks(name: str) -> set[int]:
    """Where a name may be broken between two lines, worked out from PDI-GRAMMAR §2.4 and RFC 3986 §2.1 apart from
    the page's code: after a ``/`` or an escaped ``/`` (``%2F``), before a ``.``, an escaped ``.`` (``%2E``) or the
    fragment's ``#`` — never inside a ``%XX`` escape."""
    upper = name.upper()
    return {k for k in range(1, len(name)) if name[k - 1] == "/" or upper[k - 3:k] == "%2F" or name[k] in ".#"
            or upper[k:k + 3] == "%2E"} - {k for k in range(1, len(name)) if "%" in name[max(0, k - 2):k]}


@pytest.mark.parametrize("width", [320, 390, 768, 1100])
def test_a_statements_value_naming_a_capture_never_wraps_inside_an_escape(served: tuple[int, dict[str, str]],
                                                                         width: int) -> None:
    # a relation naming a capture (…/https:%2F%2Fwww%2Ecourts…) broke anywhere, …%2 above Eexample; it breaks where a
    # name in About does, after a %2F or before a %2E (or after a / or before a . of its series), and copies whole
    port, names = served
    with devtools() as pipe:
        shown, sideways = json.loads(_shown(pipe, f"http://127.0.0.1:{port}{_view(names['ruling'])}", width,
                                            f"tablet-statement-value-{width}.png", check=VALUES))
    value = names["relation"]
    assert "%2F%2Fwww%2Ecourts%2Eexample%2Eus%2F" in value  # the capture's URL, escaped as PDI-GRAMMAR §2.4 says
    lines = next(lines for copied, text, lines in shown if text == value)
    assert [(copied, text) for copied, text, _ in shown if text == value] == [(value, value)]  # copies as written
    assert "".join(lines) == value, lines
    ends = {sum(len(line) for line in lines[:i]) for i in range(1, len(lines))}
    assert ends <= _allowed_breaks(value), (sorted(ends - _allowed_breaks(value)), lines)
    if width <= 390:  # a phone: it does wrap, and not inside an escape
        assert len(lines) > 1, lines
    assert sideways <= 0, sideways


def _token_breaks(token: str) -> set[int]:
    """Where a format token may be broken between two lines, worked out from PDI-GRAMMAR §2.6 and RFC 3986 §2.1 apart
    from the page's code, as a name's last part is (:func:`_allowed_breaks`): after an escaped ``/`` (``%2F``),
    before an escaped ``.`` (``%2E``), and after a hyphen (a word's own break) — never inside a ``%XX`` escape."""
    upper = token.upper()
    return {k for k in range(1, len(token)) if upper[k - 3:k] == "%2F" or upper[k:k + 3] == "%2E"
            or token[k - 1] == "-"} - {k for k in range(1, len(token)) if "%" in token[max(0, k - 2):k]}


#: Each Format link's token in a document's Formats: its copy, its text and its drawn lines; the word processor's shown.
TOKENS = drawn_lines('#formats td[data-label="Format"] a code', "%2Edocument", "center")


@pytest.mark.parametrize("width", [1100, 1040, 768, 390])
def test_a_formats_escaped_token_never_wraps_inside_an_escape(served: tuple[int, dict[str, str]], width: int) -> None:
    # about 1100 px: the word processor's token in the Format column (vnd%2Eopenxmlformats-officedocument…) broke
    # anywhere, inside an escape (…%2 above Edocument); it breaks where a name's last part does (after a %2F, before a
    # %2E, at a hyphen), never inside a %XX, and copies as written
    port, names = served
    with devtools() as pipe:
        shown, sideways = json.loads(_shown(pipe, f"http://127.0.0.1:{port}{_view(names['ruling'])}", width,
                                            f"tablet-format-token-{width}.png", check=TOKENS))
    token = "vnd%2Eopenxmlformats-officedocument%2Ewordprocessingml%2Edocument"  # RFC 3986 §2.1: "." is %2E
    assert token == formats.token_for(DOCX)  # PDI-GRAMMAR §2.6: a media type's minor type, its dots escaped
    assert sorted(text for _, text, _ in shown) == sorted(["text", "text", token, "octet-stream"]), shown
    for copied, text, lines in shown:
        assert copied == text, (copied, text)  # nothing put into it
        assert "".join(lines) == text, lines
        ends = {sum(len(line) for line in lines[:i]) for i in range(1, len(lines))}
        assert ends <= _token_breaks(text), (sorted(ends - _token_breaks(text)), lines)
    if width <= 390:  # a phone's card: it does wrap there
        assert len(next(lines for _, text, lines in shown if text == token)) > 1, shown
    assert sideways <= 0, sideways


#: The page's one table (a table of series, a series' years): whether it is drawn as a table (its rows table rows,
#: not cards), its [scrollWidth, clientWidth], each number cell's copy and text (a series' years: its months' and
#: totals' counts); how far the page scrolls sideways.
TABLE = """(() => { const table = document.querySelector('main table'), row = table.querySelector('tbody tr');
  const counts = [...table.querySelectorAll('tbody td.number')].map((cell) => { const range = document.createRange();
    range.selectNodeContents(cell); const picked = getSelection(); picked.removeAllRanges(); picked.addRange(range);
    const copied = picked.toString(); picked.removeAllRanges(); return [copied, cell.textContent]; });
  table.scrollIntoView({block: 'start'});
  return [getComputedStyle(row).display, [table.scrollWidth, table.clientWidth], counts,
          document.scrollingElement.scrollWidth - document.documentElement.clientWidth]; })()"""


@pytest.mark.parametrize("width", [800, 832, 840, 900, 960, 970, 1024])
@pytest.mark.parametrize("page", ["home", "series-list", "series"])
def test_a_table_of_series_and_a_series_years_are_tables_from_a_tablets_width(
    served: tuple[int, dict[str, str]], page: str, width: int
) -> None:
    # one breakpoint (64 rem) made every table cards up to 1,024 px, though a table of series and a series' years
    # fit as tables from about 740 to 940 px (a document's Formats does not): each is a table above its own
    # breakpoint (52 or 60 rem), a busy year's five-digit counts breaking after a thousands separator where they
    # must, copying whole
    port, names = served
    with devtools() as pipe:
        drawn, (scroll, client), counts, sideways = json.loads(_shown(
            pipe, f"http://127.0.0.1:{port}{PAGES[page][0](names)}", width, f"tablet-table-{page}-{width}.png",
            check=TABLE))
    assert (drawn == "table-row") == (width > TABLET_CARDS[page]), drawn  # a table, or cards (a block; a year's a grid)
    assert all(copied == text for copied, text in counts), counts  # nothing put into a count
    if page == "series":  # 2023: twelve months of 12,345 and their total, grouped as a reader writes them
        assert [text for _, text in counts[-13:]] == ["12,345"] * 12 + ["148,140"], counts  # its last row
    if page != "series-list":  # (its child's first label, 44 characters, is wider than its box: it scrolls there)
        assert scroll <= client, (scroll, client)
    assert sideways <= 0, sideways
