"""Rough edges of the reader's web app seen in its screenshots, each measured in Chromium.

- a viewer's page showed two boxes to resolve a name: the header's (empty) and the page's own (holding the name);
- an error page (404, 403, 410, 400, 503) showed two boxes to resolve a name, the header's and the page's own;
- the home page showed two boxes to resolve a name: the header's and its own, larger, explained one;
- a size was printed as a run of digits (``4320000 bytes``), unlike the catalogue's grouped counts;
- a replayed page's banner said "capture 1 of 1" of the only capture of its URL;
- a day's table of documents left the Title cell of a document without a title blank;
- a series' name in a table of series wrapped at 1100 px though the table had room for it on one line;
- a statement's subject in the column About (``3.text.1``) broke inside the name, ``3.te`` and ``xt.1``;
- a name in a search hit, a version's list of formats or a heading broke inside its last part (``1.te`` above
  ``xt.1``; ``…/22/versions`` above ``.text.1``);
- a day's table broke a document's id that is a URL inside a label at 390 px (``https://www.example.or`` above
  ``g/news``);
- an error page's message broke the name it is about inside its last part on a phone (``…/22/1.t`` above ``ext.1``);
- a citation's banner broke the name it quotes inside its day (``…/2026/1`` above ``1/29/1.text.1``).

Screenshots: ``app-edges-….png`` (and ``…-dark.png``).
"""

from __future__ import annotations

import datetime
import json
import re
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from server_helpers import LONG_LINES, TEXT, Clock, Served, long_line, with_replay
from test_server_keyboard import _contrast, _js
from test_server_page_polish import _sized
from test_server_pages_screenshots import dark, page_url
from test_server_pdf_viewer import _shoot, _until

from pdi._wording import binary_size
from pdi.archive import Archive
from pdi.capture.browser import Pipe, devtools

# --- one box to resolve a name --------------------------------------------------------------------------------------

#: The boxes of a page that resolve a name (a form sent to /view), the name the header's holds, and whether the
#: header's box and its button sit within the window (nothing of the header pushed out of sight).
BOXES = """(() => { const box = document.getElementById('site-pdi'), go = box.form.querySelector('button');
  return [document.querySelectorAll('form[action="/view"]').length, box.value,
          [box, go].every((e) => { const r = e.getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth; }),
          document.documentElement.scrollWidth - document.documentElement.clientWidth]; })()"""

#: Whether pdf.js has drawn every page of a PDF's page that is in the window: its canvas (``data-drawn``) and, when
#: the PDF has a text layer, its text laid over it (``data-laid``), the viewer's own marks of each
#: (:mod:`pdi.server.pages.viewer_script`).
PDF_DRAWN = """(() => { const view = document.querySelector('[data-ready]'), layer = view && view.dataset.layer === '1';
  return !!view && [...document.querySelectorAll('.pdf-page')].filter((p) => {
    const r = p.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; })
    .every((p) => p.dataset.drawn && (!layer || p.dataset.laid)); })()"""


def _at_the_top(pipe: Pipe, session: str, page: str) -> bool:
    """Scroll the page of ``session`` to its top, once a PDF's viewer has done its own scrolling (to the passage
    cited, once its page's text is laid) and then drawn the pages in the window; whether they are drawn."""
    if page == "pdf":
        assert _until(pipe, session, "document.getElementById('passage')"), "pdf.js marked no passage"
    _js(pipe, session, "scrollTo(0, 0)")
    drawn = page != "pdf" or bool(_until(pipe, session, PDF_DRAWN))
    _js(pipe, session, "new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    return drawn


VIEWERS = ["text", "image", "sound", "long-text", "html-source", "capture-source", "old-version", "citation",
           "pdf", "sgml-elt", "video", "email", "document"]


@pytest.mark.parametrize("width", [1100, 375])
@pytest.mark.parametrize("page", VIEWERS)
def test_a_viewer_has_one_box_to_resolve_a_name_the_headers_holding_the_name_shown(
    served: Served, media: tuple[str, dict[str, str]], page: str, width: int
) -> None:
    with devtools() as pipe:
        session = _sized(pipe, page_url(served, media, page), width, 740)
        shown = _js(pipe, session, "new URLSearchParams(location.search).get('pdi')")
        boxes, held, in_window, sideways = _js(pipe, session, BOXES)
        drawn = _at_the_top(pipe, session, page)
        _shoot(pipe, session, f"app-edges-one-box-{page}-{width}.png")
        shot_at = _js(pipe, session, f"[scrollY, {PDF_DRAWN if page == 'pdf' else 'true'}]")
        if width == 1100 and page in ("text", "document"):
            dark(pipe, session, time.monotonic() + 30)
            _shoot(pipe, session, f"app-edges-one-box-{page}-{width}-dark.png")
    assert boxes == 1, f"{page}: {boxes} boxes to resolve a name"
    assert held == shown, (held, shown)  # the name the page shows, to correct or to add a fragment to
    assert in_window and sideways <= 0, (in_window, sideways)
    assert drawn and shot_at == [0, True], (drawn, shot_at)  # shot at the top, every page in the window drawn


#: The error pages (pdi.server.pages.problem_pages) a reader meets, by the name their screenshots carry, with their
#: status: a name of no series here, a withdrawn one (``media``'s), a private one (``media``'s), the served text's
#: name cited with its sentence's full stop, and a path of no page (no name typed).
ERRORS = {"not-found": 404, "tombstone": 410, "forbidden": 403, "bad-name": 400, "unknown-path": 404}
#: What each status says to a reader, on the line under the heading (``test_server_clerk_edges.py``).
WORDS = {404: "Not found", 410: "Withdrawn", 403: "Not open to you", 400: "This cannot be answered as asked"}


def _error_url(served: Served, media: tuple[str, dict[str, str]], page: str) -> tuple[str, str]:
    """The URL of the error page ``page`` of :data:`ERRORS`, and the name the reader typed (its Resolve box's)."""
    base, held = media
    typed = {"not-found": "urn:pdi://nowhere.example.us/2026/11/22/1.text.1",
             "tombstone": urllib.parse.unquote(held["withdrawn"]), "forbidden": urllib.parse.unquote(held["private"]),
             "bad-name": served.text + ".", "unknown-path": ""}[page]
    if page == "unknown-path":
        return f"{served.url}/no/such/page", typed
    return f"{base if page in ('tombstone', 'forbidden') else served.url}/view?pdi={urllib.parse.quote(typed, safe='')}", typed


@pytest.mark.parametrize("width", [1100, 375])
@pytest.mark.parametrize("page", list(ERRORS))
def test_an_error_page_has_one_box_to_resolve_a_name_holding_the_name_typed(
    served: Served, media: tuple[str, dict[str, str]], page: str, width: int
) -> None:
    url, typed = _error_url(served, media, page)
    with devtools() as pipe:
        session = _sized(pipe, url, width, 740)
        status = _js(pipe, session, "document.querySelector('.problem .status').textContent")
        boxes, held, in_window, sideways = _js(pipe, session, BOXES)
        _shoot(pipe, session, f"app-edges-one-box-error-{page}-{width}.png")
        dark(pipe, session, time.monotonic() + 30)
        _shoot(pipe, session, f"app-edges-one-box-error-{page}-{width}-dark.png")
    # the error's page, not another: its status in a reader's words, the code after them for the technical reader
    assert status == f"{WORDS[ERRORS[page]]} — HTTP {ERRORS[page]}", status
    assert boxes == 1, f"{page}: {boxes} boxes to resolve a name"
    assert held == typed, (held, typed)  # what the reader typed, to correct it there
    assert in_window and sideways <= 0, (in_window, sideways)


#: The home page's boxes that resolve a name: how many, the id of each, its label's words, and whether each and its
#: button sit within the window; the page's sideways overflow; and whether the header still holds the search box.
HOME_BOXES = """(() => { const boxes = [...document.querySelectorAll('form[action="/view"] input[name="pdi"]')];
  return [boxes.map((b) => [b.id, b.labels[0] && b.labels[0].textContent,
          [b, b.form.querySelector('button')].every((e) => { const r = e.getBoundingClientRect();
            return r.width > 0 && r.left >= 0 && r.right <= innerWidth; })]),
          document.documentElement.scrollWidth - document.documentElement.clientWidth,
          !!document.querySelector('header.site #site-q')]; })()"""


@pytest.mark.parametrize("width", [1100, 375])
def test_the_home_page_has_one_box_to_resolve_a_name_its_own(served: Served, width: int) -> None:
    """A first-time reader meets the home page's own box, labelled "Resolve a name" and explained below it ("this
    page's box"), not a second, bare one in the header above it; every other page keeps the header's."""
    with devtools() as pipe:
        session = _sized(pipe, served.url + "/", width, 740)
        light = _js(pipe, session, HOME_BOXES)
        _shoot(pipe, session, f"app-edges-one-box-home-{width}.png")
        dark(pipe, session, time.monotonic() + 30)
        shaded = _js(pipe, session, HOME_BOXES)
        _shoot(pipe, session, f"app-edges-one-box-home-{width}-dark.png")
    for boxes, sideways, searched in (light, shaded):
        assert boxes == [["home-pdi", "Resolve a name", True]], boxes
        assert sideways <= 0 and searched, (sideways, searched)


# --- sizes, grouped ---------------------------------------------------------------------------------------------------

#: 160,000 lines of 28 bytes ("0000000 line of a long text" and LF): 4,480,000 bytes, 4,480,000 / 2^20 = 4.27 MiB.
LONG_SIZE = "4,480,000 bytes (4.3 MiB)"

#: The page's size fact (the ``dd`` after ``dt`` "size"), and every run of four digits or more before "bytes" or
#: "octets" in the page's text (a size printed ungrouped).
SIZES = r"""(() => { const dt = [...document.querySelectorAll('main dt')].find((d) => d.textContent === 'size');
  return [dt ? dt.nextElementSibling.innerText : null,
          [...document.body.innerText.matchAll(/\b\d{4,} (?:bytes|octets)\b/g)].map((m) => m[0]),
          [...document.querySelectorAll('table.catalogue')].flatMap((t) => {
            const at = [...t.querySelectorAll('thead th')].findIndex((th) => th.textContent === 'Bytes');
            return at < 0 ? [] : [...t.querySelectorAll('tbody tr')].map((r) => r.children[at].innerText); })]; })()"""


@pytest.mark.parametrize(("page", "size"), [
    ("text", f"{len(TEXT)} bytes"),  # under a KiB: the count alone
    ("long-text-head", LONG_SIZE), ("long-text", LONG_SIZE),
    ("document", None), ("tombstone", None), ("image", None), ("pdf", None), ("long-document", None),
])
def test_a_size_is_grouped_by_thousands_with_its_binary_size_beside_it(
    served: Served, media: tuple[str, dict[str, str]], page: str, size: str | None
) -> None:
    assert LONG_LINES * len(long_line(0)) == 4_480_000
    with devtools() as pipe:
        url = (f"{served.url}/view?pdi={urllib.parse.quote(served.long.rsplit('.', 2)[0], safe='')}"
               if page == "long-document" else page_url(served, media, page))
        session = _sized(pipe, url, 1100, 740)
        fact, ungrouped, cells = _js(pipe, session, SIZES)
        note = _js(pipe, session, "[...document.querySelectorAll('main p.note')].map((p) => p.innerText).join(' ')")
        _js(pipe, session, "scrollTo(0, 0)")
        _shoot(pipe, session, f"app-edges-sizes-{page}.png")
    if size is not None:
        assert fact == size, fact
    if page == "long-text":
        assert "A long text (4,480,000 bytes, 4.3 MiB)" in note, note
    assert ungrouped == [], ungrouped
    for cell in cells:  # the exact count, grouped; from a KiB on, its binary size under it
        count, *approximately = cell.split("\n")
        assert re.fullmatch(r"\d{1,3}(,\d{3})*", count), cells
        assert approximately == ([binary_size(int(count.replace(",", "")))] if int(count.replace(",", "")) >= 1024
                                 else []), cells
    if page in ("document", "tombstone"):
        assert cells, f"{page}: no Bytes column"
    if page == "long-document":
        assert cells == ["4,480,000\n4.3 MiB"], cells


@given(st.integers(0, 2**70))
@example(1792)  # 1.75 KiB: half a tenth from both 1.7 and 1.8 (found by hypothesis)
def test_a_binary_size_is_the_count_in_the_largest_unit_it_fills_to_a_tenth(count: int) -> None:
    shown = binary_size(count)
    if count < 1024:
        assert shown == ""
        return
    number, unit = shown.split(" ")
    scale = 1024 ** ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"].index(unit) * 1024
    assert re.fullmatch(r"\d+\.\d", number), shown
    assert 1 <= float(number) < 1024 or unit == "ZiB", shown  # no "1024.0 KiB": that is 1.0 MiB
    # in exact tenths (a float's 1.8 * 1024 - 1792 is 51.200000000000045, past 0.05 * 1024 by its rounding alone)
    tenths = int(number.replace(".", ""))
    assert abs(tenths * scale - 10 * count) <= scale // 2, shown


def test_a_binary_size_of_known_counts() -> None:
    # IEC 80000-13 prefixes: a KiB is 1,024 bytes, a MiB 1,048,576
    assert binary_size(1023) == ""
    assert binary_size(1024) == "1.0 KiB"
    assert binary_size(1536) == "1.5 KiB"
    assert binary_size(1_048_575) == "1.0 MiB"  # 1023.999 KiB rounds to a whole MiB, said in MiB
    assert binary_size(1_048_576) == "1.0 MiB"
    assert binary_size(5 * 2**30 + 2**29) == "5.5 GiB"


# --- the only capture of a URL ------------------------------------------------------------------------------------------

BANNER = "[document.querySelector('.replay-banner dl').innerText, !!document.querySelector('.replay-banner a[href^=\"/captures?url=\"]')]"


def test_the_only_capture_of_a_url_is_said_so_not_1_of_1(served: Served) -> None:
    with devtools() as pipe:
        session = _sized(pipe, f"{served.url}/view?pdi={urllib.parse.quote(served.capture, safe='')}", 1100, 700)
        said, linked = _js(pipe, session, BANNER)
        _shoot(pipe, session, "app-edges-only-capture.png")
        session = _sized(pipe, f"{served.url}/view?pdi={urllib.parse.quote(served.capture, safe='')}", 375, 740)
        _shoot(pipe, session, "app-edges-only-capture-375.png")
    assert "the only capture of this URL" in said, said
    assert "1 of 1" not in said and "other captures" not in said, said
    assert linked  # its list of captures, where a later one will stand, one click away


def test_one_of_several_captures_says_where_it_stands(served: Served) -> None:
    # the captures of CAPTURES_URL: 2025-06-01, 2026-11-21 (two versions), 2026-11-22; the first is 1 of 4
    with devtools() as pipe:
        session = _sized(pipe, f"{served.url}/captures?url={urllib.parse.quote(served.captured, safe='')}", 1100, 700)
        first = _js(pipe, session, "document.querySelector('ol.timeline a').getAttribute('href')")
        session = _sized(pipe, served.url + first, 1100, 700)
        said, linked = _js(pipe, session, BANNER)
        _shoot(pipe, session, "app-edges-first-of-four.png")
    assert "1 of 4" in said and "later »" in said and "other captures" in said, said
    assert "only" not in said and linked, said


# --- a document without a title ------------------------------------------------------------------------------------------

#: Each Title cell of the day's table: its text, its colour and the background it is drawn on.
TITLES = """[...document.querySelectorAll('#documents tbody tr')].map((r) => { const c = r.children[1];
  let e = c, bg = 'rgba(0, 0, 0, 0)';
  while (e && (bg = getComputedStyle(e).backgroundColor) === 'rgba(0, 0, 0, 0)') e = e.parentElement;
  if (bg === 'rgba(0, 0, 0, 0)') bg = 'rgb(255, 255, 255)';  // nothing painted: the light scheme's white canvas
  const text = c.querySelector('.untitled') || c;
  return [r.children[0].innerText, c.innerText, getComputedStyle(text).color, bg]; })"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_document_without_a_title_says_untitled_in_its_title_cell(served: Served, scheme: str) -> None:
    with devtools() as pipe:
        session = _sized(pipe, f"{served.url}/series/library.example.us/2026/11/22", 1100, 700)
        if scheme == "dark":
            dark(pipe, session, time.monotonic() + 30)
        rows = _js(pipe, session, TITLES)
        _shoot(pipe, session, f"app-edges-untitled-{scheme}.png")
    cells = {uid: title for uid, title, _, _ in rows}
    assert cells == {"https://www.example.org/news": "untitled", "versions": "Two versions, retitled"}, cells
    for _, _, colour, background in rows:
        assert _contrast(colour, background) >= 4.5, (colour, background)  # muted, yet WCAG 2.2 §1.4.3


# --- a series' name in a table -------------------------------------------------------------------------------------------

#: A parent series and a subseries under it, each a long name: 41 and 64 characters.
PARENT = "national-archives-and-records.example.us"
CHILD = "presidential-libraries." + PARENT


@pytest.fixture(scope="module")
def long_series(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A resolver over an archive of the two long-named series, a text deposited in each."""
    root: Path = tmp_path_factory.mktemp("long-series")
    clock = Clock(datetime.datetime(2026, 11, 20, 9, 0, tzinfo=datetime.UTC))
    with Archive.init(root / "archive", clock=clock) as archive:
        archive.add_series(PARENT)
        archive.add_series(CHILD, parent=PARENT)
        for series in (PARENT, CHILD):
            archive.add(series, b"The minutes.\n", format="text")
    with with_replay(str(root / "archive")) as (url, _):
        yield url


#: The series' names in the page's table (``#series``): each name, the labels (between dots) a line break cuts in
#: two, and how many lines it takes; and how far the page scrolls sideways.
NAMES = """(() => { const names = [];
  for (const code of document.querySelectorAll('#series td code')) {
    const cut = [], walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) for (const m of node.data.matchAll(/[^.]+/g)) {
      const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      if (new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size > 1) cut.push(m[0]);
    }
    const whole = document.createRange(); whole.selectNodeContents(code);
    names.push([code.textContent, cut, new Set([...whole.getClientRects()].map((b) => Math.round(b.top))).size]);
  }
  return [names, document.documentElement.scrollWidth - document.documentElement.clientWidth]; })()"""


#: The pages with a table of series, by path: the name their screenshots carry.
_PAGE = {"/": "home", "/series": "series"}


#: How the page's table of series is drawn: its first row's display (``table-row`` in a table, ``block`` as a card)
#: and its [scrollWidth, clientWidth].
SERIES_TABLE = """(() => { const table = document.getElementById('series');
  return [getComputedStyle(table.querySelector('tbody tr')).display, [table.scrollWidth, table.clientWidth]]; })()"""


# wide: above 52 rem (832 px) for the home page's table of series (four columns), above 60 rem (960 px) for /series's
# (seven), where each is a table and fits (it was cards up to 1,024 px, where every table of the reader's was); at
# those widths and below it is cards, each name under its label (tests/server/test_server_reader_tablet_widths.py)
@pytest.mark.parametrize(("path", "width"), [(path, width) for width in (1100, 1040, 1024, 970, 840)
                                             for path in ("/", "/series") if width > (52 if path == "/" else 60) * 16])
def test_a_short_series_name_stands_on_one_line_on_a_wide_screen(served: Served, path: str, width: int) -> None:
    with devtools() as pipe:
        session = _sized(pipe, served.url + path, width, 700)
        names, sideways = _js(pipe, session, NAMES)
        drawn, (scroll, client) = _js(pipe, session, SERIES_TABLE)
        _shoot(pipe, session, f"app-edges-series-names-{_PAGE[path]}-{width}.png")
    assert {name for name, _, _ in names} == {"library.example.us", "elsewhere.example.us"}, names
    assert all(lines == 1 for _, _, lines in names), names
    assert drawn == "table-row", drawn  # a table, not cards
    assert scroll <= client, (scroll, client)  # that fits in its box: nothing to scroll to
    assert sideways <= 0, sideways


@pytest.mark.parametrize("width", [1100, 800, 640, 390])
@pytest.mark.parametrize("path", ["/", "/series"])
def test_a_long_series_name_wraps_only_between_its_labels(long_series: str, path: str, width: int) -> None:
    with devtools() as pipe:
        session = _sized(pipe, long_series + path, width, 700)
        names, sideways = _js(pipe, session, NAMES)
        _shoot(pipe, session, f"app-edges-long-series-{_PAGE[path]}-{width}.png")
    assert {name for name, _, _ in names} >= {PARENT, CHILD}, names
    assert [cut for _, cut, _ in names if cut] == [], names
    assert sideways <= 0, sideways


# --- a passage's name in the column About ----------------------------------------------------------------------------

#: A document of a day whose statements are about its versions and passages, each beside a long value (a court's
#: note, which takes the room a table has and leaves the column About narrow).
ABOUT_SERIES = "court.example.us"
NOTE = ("Read into the record at the hearing of 20 November 2026 by counsel for the claimant, who asked that the"
        " passage be cited in the judgement as it stands in the transcript, word for word.")


@pytest.fixture(scope="module")
def stated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A resolver over a document (serial 3) stated about by its version's name and a passage of it; its URL and
    the document's generic name."""
    root: Path = tmp_path_factory.mktemp("about")
    clock = Clock(datetime.datetime(2026, 11, 20, 9, 0, tzinfo=datetime.UTC))
    with Archive.init(root / "archive", clock=clock) as archive:
        archive.add_series(ABOUT_SERIES)
        for n in range(3):
            name = archive.add(ABOUT_SERIES, f"The transcript, part {n + 1}.\n".encode(), format="text")
        archive.annotate(name, "note", NOTE)
        archive.annotate(f"{name}#char=4,14", "dcterms:description", NOTE)
        archive.annotate(f"{name}#line=0,1", "x.court_ref", "2026/1234")
    with with_replay(str(root / "archive")) as (url, _):
        yield url, str(name).rsplit(".", 2)[0]


#: Each name in the column About: its text, the parts (cut before each ``#``) a line break cuts in two, and how far
#: the page scrolls sideways and how far the table's own box is scrolled past its width.
ABOUT = """(() => { const names = [];
  for (const code of document.querySelectorAll('#statements tbody td:first-child code')) {
    const cut = [], text = code.textContent, walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    let at = 0; const nodes = [];
    for (let node = walk.nextNode(); node; node = walk.nextNode()) { nodes.push([node, at]); at += node.data.length; }
    const place = (i) => { for (const [node, start] of nodes) if (i <= start + node.data.length) return [node, i - start]; };
    for (const m of text.matchAll(/[^#]+|#[^#]+/g)) {
      const r = document.createRange(), [n1, o1] = place(m.index), [n2, o2] = place(m.index + m[0].length);
      r.setStart(n1, o1); r.setEnd(n2, o2);
      if (new Set([...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top))).size > 1) cut.push(m[0]);
    }
    names.push([text, cut]);
  }
  return [names, document.documentElement.scrollWidth - document.documentElement.clientWidth]; })()"""


@pytest.mark.parametrize(("width", "height"), [(1100, 700), (800, 700), (390, 844)])
def test_a_name_in_the_column_about_breaks_only_before_its_fragment(
    stated: tuple[str, str], width: int, height: int
) -> None:
    url, generic = stated
    with devtools() as pipe:
        session = _sized(pipe, f"{url}/view?pdi={urllib.parse.quote(generic, safe='')}", width, height)
        names, sideways = _js(pipe, session, ABOUT)
        _js(pipe, session, "document.getElementById('statements').scrollIntoView()")
        _shoot(pipe, session, f"app-edges-about-{width}.png")
    assert [text for text, _ in names] == ["3.text.1", "3.text.1#char=4,14", "3.text.1#line=0,1"], names
    assert [cut for _, cut in names if cut] == [], names  # 3.text.1 whole; #char=4,14 whole
    assert sideways <= 0, sideways


#: PDI-GRAMMAR.md §1: the reserved characters, %-escaped in a unique id.
_RESERVED = "%.,/#*@=?+"


@given(st.text(st.characters(codec="ascii", categories=["L", "N", "P", "S"]), min_size=1, max_size=120),
       st.sampled_from(["", "#char=3,10", "#line=5,6;length=9", "#" + "n" * 50]))
@example("https://www.courts.example.us/rulings/2026/appeal-4211.html", "#char=3,10")
def test_a_url_as_a_names_id_in_about_breaks_only_between_its_pieces(url: str, fragment: str) -> None:
    # a capture's name in About (its id a URL, each reserved character %-escaped): its markup reads back as the
    # name, every character as it was; it breaks only after an escaped / (not between two), before an escaped .
    # or before the fragment's #; a piece longer than LONG_PIECE breaks anywhere in its span, a shorter one not
    import html

    from pdi.server.pages.layout import LONG_PIECE, name_in_pieces

    shown = "".join(f"%{ord(c):02X}" if c in _RESERVED else c for c in url) + ".html.1" + fragment
    made = name_in_pieces(shown)
    parts = made.split("<wbr>")
    tag = re.compile(r'^<span class="(piece|anywhere)">([^<]*)</span>$')
    pieces = [html.unescape(tag.sub(r"\2", part)) for part in parts]
    assert "".join(pieces) == shown
    assert all((len(piece) > LONG_PIECE) == part.startswith('<span class="anywhere">')
               for piece, part in zip(pieces, parts, strict=True)), parts
    at = 0
    for piece in pieces[:-1]:
        at += len(piece)
        before, after = shown[:at], shown[at:]
        assert (before.endswith("%2F") and not after.startswith("%2F")) or after.startswith(("%2E", "#")), (at, parts)
    assert ".html.1" in pieces[-2 if fragment else -1], parts  # the format and version whole, with the id's end


# --- a name's last part whole, wherever a name is shown ----------------------------------------------------------------

#: Each name shown on the page (a ``code.name``: a search hit's, a version's format; a viewer's heading): its text,
#: and which of its unique id with its format and version (``1.text.1``, after the last ``/``) and its fragment
#: (``#char=7,12``) a line break cuts in two; and how far the page scrolls sideways.
WHOLE = """(() => { const names = [];
  for (const code of document.querySelectorAll('main code.name, main h1 code')) {
    const text = code.textContent; if (!/^(urn:)?pdi:/i.test(text)) continue;
    const nodes = [], walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT); let at = 0;
    for (let node = walk.nextNode(); node; node = walk.nextNode()) { nodes.push([node, at]); at += node.data.length; }
    const place = (i) => { for (const [node, start] of nodes) if (i <= start + node.data.length) return [node, i - start]; };
    const hash = text.includes('#') ? text.indexOf('#') : text.length, last = text.lastIndexOf('/', hash) + 1, cut = [];
    for (const [from, to] of [[last, hash], [hash, text.length]]) {
      if (to <= from) continue;
      const r = document.createRange(), [n1, o1] = place(from), [n2, o2] = place(to); r.setStart(n1, o1); r.setEnd(n2, o2);
      if (new Set([...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top))).size > 1) cut.push(text.slice(from, to));
    }
    names.push([text, cut]);
  }
  return [names, document.documentElement.scrollWidth - document.documentElement.clientWidth]; })()"""


@pytest.mark.parametrize("width", [1100, 390, 320])
@pytest.mark.parametrize("page", ["search", "document", "text", "old-version"])
def test_a_names_id_format_and_version_and_its_fragment_stand_whole(
    served: Served, media: tuple[str, dict[str, str]], page: str, width: int
) -> None:
    with devtools() as pipe:
        session = _sized(pipe, page_url(served, media, page), width, 844)
        names, sideways = _js(pipe, session, WHOLE)
        _shoot(pipe, session, f"app-edges-whole-{page}-{width}.png")
    assert names, f"{page}: no name shown"
    assert [cut for _, cut in names if cut] == [], names  # never 1.te|xt.1, nor #char=7,|12
    assert sideways <= 0, sideways


# --- a document's id in a day's table ----------------------------------------------------------------------------------

#: The ids in a day's table (``#documents``, its first column): each id, and the pieces of it (between ``/`` and
#: ``.``: ``www``, ``example``, ``org``, ``news``) a line break cuts in two; and how far the page scrolls sideways.
IDS = """(() => { const ids = [];
  for (const code of document.querySelectorAll('#documents tbody td:first-child code')) {
    const cut = [], nodes = [], walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT); let at = 0;
    for (let node = walk.nextNode(); node; node = walk.nextNode()) { nodes.push([node, at]); at += node.data.length; }
    const place = (i) => { for (const [node, start] of nodes) if (i <= start + node.data.length) return [node, i - start]; };
    for (const m of code.textContent.matchAll(/[^./:]+/g)) {
      const r = document.createRange(), [n1, o1] = place(m.index), [n2, o2] = place(m.index + m[0].length);
      r.setStart(n1, o1); r.setEnd(n2, o2);
      if (new Set([...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top))).size > 1) cut.push(m[0]);
    }
    ids.push([code.textContent, cut]);
  }
  return [ids, document.documentElement.scrollWidth - document.documentElement.clientWidth]; })()"""


@pytest.mark.parametrize("width", [1100, 390, 320])
def test_a_days_id_that_is_a_url_wraps_between_its_parts(served: Served, width: int) -> None:
    with devtools() as pipe:
        session = _sized(pipe, f"{served.url}/series/library.example.us/2026/11/22", width, 844)
        ids, sideways = _js(pipe, session, IDS)
        _shoot(pipe, session, f"app-edges-day-ids-{width}.png")
    assert {text for text, _ in ids} == {"https://www.example.org/news", "versions"}, ids
    assert [cut for _, cut in ids if cut] == [], ids  # never "example.or" above "g/news"
    assert sideways <= 0, sideways


# --- a name in an error page's message ---------------------------------------------------------------------------------

#: The pieces of the name ``NAME`` in the error's message (``p.error``) between ``/`` and ``.`` (its series' labels,
#: its day's numbers) and its last part, ``1.text.1``, that a line break cuts in two.
ERROR_CUT = """((name, where = '.problem p.error') => { const p = document.querySelector(where), text = p.textContent,
  at = text.indexOf(name);
  if (at < 0) return null;
  const nodes = [], walk = document.createTreeWalker(p, NodeFilter.SHOW_TEXT); let seen = 0;
  for (let node = walk.nextNode(); node; node = walk.nextNode()) { nodes.push([node, seen]); seen += node.data.length; }
  const place = (i) => { for (const [node, start] of nodes) if (i <= start + node.data.length) return [node, i - start]; };
  const last = name.lastIndexOf('/') + 1, spans = [...name.slice(0, last).matchAll(/[^./:]+/g)].map((m) => [m.index, m.index + m[0].length]);
  spans.push([last, name.length]);
  return spans.filter(([from, to]) => { const r = document.createRange(), [n1, o1] = place(at + from), [n2, o2] = place(at + to);
    r.setStart(n1, o1); r.setEnd(n2, o2);
    return new Set([...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top))).size > 1; })
    .map(([from, to]) => name.slice(from, to)); })"""


@pytest.mark.parametrize("width", [1100, 390, 320])
@pytest.mark.parametrize("name", ["urn:pdi://nowhere.example.us/2026/11/22/1.text.1",
                                  "urn:pdi://library.example.us/2026/11/22/999.text.1"])
def test_a_name_in_an_error_message_wraps_between_its_parts(served: Served, name: str, width: int) -> None:
    with devtools() as pipe:
        session = _sized(pipe, f"{served.url}/view?pdi={urllib.parse.quote(name, safe='')}", width, 844)
        cut = _js(pipe, session, f"({ERROR_CUT})({json.dumps(name)})")
        sideways = _js(pipe, session, "document.documentElement.scrollWidth - document.documentElement.clientWidth")
        _shoot(pipe, session, f"app-edges-error-name-{name.split('/')[2].split('.')[0]}-{width}.png")
    assert cut == [], cut  # the message holds the name, never "…/1.t" above "ext.1"
    assert sideways <= 0, sideways


@pytest.mark.parametrize("width", [1100, 390, 320])
def test_the_name_a_citation_quotes_wraps_between_its_parts(
    served: Served, media: tuple[str, dict[str, str]], width: int
) -> None:
    with devtools() as pipe:
        session = _sized(pipe, page_url(served, media, "citation"), width, 844)
        cut = _js(pipe, session, f"({ERROR_CUT})({json.dumps(served.text)}, '#citation')")
        sideways = _js(pipe, session, "document.documentElement.scrollWidth - document.documentElement.clientWidth")
        _shoot(pipe, session, f"app-edges-citation-name-{width}.png")
    assert cut == [], cut  # never "…/2026/1" above "1/29/1.text.1"
    assert sideways <= 0, sideways
