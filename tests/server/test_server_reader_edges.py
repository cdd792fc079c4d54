"""Rough edges a reader meets, found going through every page in Chromium at 360 px and 1100 px with the keyboard.

Each test opens the page as a reader does, asserts what the page is (its DOM,
its computed style) and saves a screenshot (``reader-edges-….png``).
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Iterator

import pytest
from server_helpers import Served, serving
from test_server_keyboard import _contrast, _js, _key, _keyboard_tab
from test_server_pages_screenshots import dark
from test_server_pdf_viewer import _shoot

from pdi.archive import Archive
from pdi.capture.browser import devtools

#: The series of :func:`bare`'s archive, registered and holding nothing.
BARE = "empty.example.us"


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``pdi serve`` of a new archive with the one series :data:`BARE` and no document: its URL."""
    root = tmp_path_factory.mktemp("bare")
    with Archive.init(root / "archive") as archive:
        archive.add_series(BARE)
    with serving(root / "archive") as (_, port):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def empty(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``pdi serve`` of a new archive with no series at all: its URL."""
    root = tmp_path_factory.mktemp("empty")
    Archive.init(root / "archive").close()
    with serving(root / "archive") as (_, port):
        yield f"http://127.0.0.1:{port}"


#: The series of :func:`shelf`'s archive, and one under it whose first label (44 characters, kept whole) makes the
#: table of series wider than a desktop's window, so that it scrolls in its own box.
SHELF = "records.example.us"
WIDE = "court-of-appeal-and-administrative-tribunals." + SHELF


@pytest.fixture(scope="module")
def shelf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """``pdi serve`` of an archive with a series too long for a table of series, a document with a statement about
    a passage of it and a withdrawn one: its URL, and the pages' paths (``series-list``, ``document``, ``tombstone``)."""
    root = tmp_path_factory.mktemp("shelf")
    with Archive.init(root / "archive") as archive:
        archive.add_series(SHELF)
        archive.add_series(WIDE, parent=SHELF)
        ruling = archive.add(WIDE, b"The appeal is dismissed.\n", format="text")
        archive.annotate(f"{ruling}#char=4,10", "note", "Read into the record at the hearing.")
        gone = archive.add(SHELF, b"a duplicate\n", format="text")
        archive.withdraw(gone, "Deposited in error.")
    with serving(root / "archive") as (_, port):
        yield f"http://127.0.0.1:{port}", {
            "home": "/", "series-list": "/series",
            "document": "/view?pdi=" + urllib.parse.quote(str(ruling).rsplit(".", 2)[0], safe=""),
            "tombstone": "/view?pdi=" + urllib.parse.quote(str(gone), safe="")}


#: What a page's main says, its links' [text, href], and its [scrollWidth, innerWidth].
SAYS = """({text: document.querySelector('main').innerText,
  links: [...document.querySelectorAll('main a')].map((a) => [a.textContent, a.getAttribute('href')]),
  widths: [document.scrollingElement.scrollWidth, innerWidth]})"""


def _says(url: str, width: int, shot: str) -> dict[str, object]:
    """:data:`SAYS` of the page at ``url`` in a window ``width`` CSS px wide (a phone's below 600 px), shot after."""
    with devtools() as pipe:
        session = _keyboard_tab(pipe, url)
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 740, "deviceScaleFactor": 1,
                                                          "mobile": width < 600}, session, deadline)
        said: dict[str, object] = pipe.call("Runtime.evaluate", {"expression": SAYS, "returnByValue": True},
                                            session, deadline)["result"]["value"]
        _shoot(pipe, session, shot)
    return said

#: The focused element: [what it is, whether it matches the selector asked for, its outline's style, width (CSS px)
#: and colour, and the colour it is drawn on (the first ancestor's opaque background)].
FOCUS_RING = """JSON.stringify((() => { const e = document.activeElement, s = getComputedStyle(e);
  let bg = 'rgb(255, 255, 255)';
  for (let p = e.parentElement; p; p = p.parentElement) {
    const c = getComputedStyle(p).backgroundColor; if (!/rgba\\(.*, 0\\)$/.test(c) && c !== 'transparent') { bg = c; break; } }
  return [e.tagName.toLowerCase() + (e.id ? '#' + e.id : ''), e.matches(SELECTOR) && e.matches(':focus-visible'),
          s.outlineStyle, parseFloat(s.outlineWidth), s.outlineColor, bg]; })())"""


#: The focused element's box: [scrollWidth, clientWidth], the same after Tab's arrow key (ArrowRight) scrolled it.
SCROLLS = "[document.activeElement.scrollWidth, document.activeElement.clientWidth, document.activeElement.scrollLeft]"


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize(("page", "selector"), [
    ("search", "#search-series"),  # a list to choose from (the search's series)
    ("api", "summary"),  # a summary that opens its details (an operation's answers)
    ("series-list", "#series"),  # a table that scrolls in its own box (tabindex=0), so the keyboard can scroll it
])
def test_every_kind_of_stop_tab_makes_draws_the_apps_focus_ring(served: Served, shelf: tuple[str, dict[str, str]],
                                                                  page: str, selector: str, scheme: str) -> None:
    # WCAG 2.2 §2.4.7 and §2.4.13: the focus indicator at least 2 CSS px thick, in a colour of 3:1 against what
    # it is drawn on; links, buttons and boxes had the app's ring (3 px), a select, a summary and a scrolling
    # table the browser's thin one (outline-style auto, 1 px), which the dark scheme did not recolour
    url = {"search": served.url + "/search?q=world", "api": served.url + "/api",
           "series-list": shelf[0] + shelf[1]["series-list"]}[page]
    with devtools() as pipe:
        session = _keyboard_tab(pipe, url)
        if scheme == "dark":
            dark(pipe, session, time.monotonic() + 30)
        ring = None
        for _ in range(40):
            _key(pipe, session, "Tab", 9)
            now = json.loads(_js(pipe, session, FOCUS_RING.replace("SELECTOR", json.dumps(selector))))
            if now[1]:
                ring = now
                break
        scrolled = None
        if ring is not None and page == "series-list":
            _key(pipe, session, "ArrowRight", 39)
            _js(pipe, session, "new Promise((done) => setTimeout(done, 300))")  # a smooth scroll's end
            scrolled = _js(pipe, session, SCROLLS)
        _shoot(pipe, session, f"reader-edges-ring-{page}-{scheme}.png")
    assert ring is not None, f"Tab never reached {selector} on {url}"
    _, _, style, width, colour, background = ring
    assert style == "solid" and width >= 2, ring
    assert _contrast(colour, background) >= 3, ring
    if scrolled is not None:  # the box Tab stopped at has something to scroll, and the keyboard scrolls it
        wide, shown, left = scrolled
        assert wide > shown and left > 0, scrolled


#: Every element of the page that Tab stops at though no control (a tabindex on a table, a pre): its tag and id,
#: its computed overflow-x and whether it has more to scroll to than it shows; and the tabIndex of each table
#: of the reader's (a table is no stop unless given one: -1).
STOPS = """({stops: [...document.querySelectorAll('[tabindex]')]
    .filter((e) => e.tabIndex >= 0 && !e.matches('a[href],button,input,select,textarea,summary,video,audio,iframe'))
    .map((e) => [e.tagName.toLowerCase() + (e.id ? '#' + e.id : ''), getComputedStyle(e).overflowX,
                 e.scrollWidth > e.clientWidth]),
  tables: Object.fromEntries([...document.querySelectorAll('main table[id]')].map((t) => [t.id, t.tabIndex]))})"""


@pytest.mark.parametrize("page", ["home", "series-list", "document", "tombstone"])
def test_tab_stops_only_at_a_box_that_scrolls(shelf: tuple[str, dict[str, str]], page: str) -> None:
    # WCAG 2.2 §2.4.3: tabindex=0 made tables focusable so that the keyboard could scroll them in their box; the
    # Statements table and a tombstone's no longer scroll at any width (a table as wide as the page on a desktop,
    # cards on a phone), so Tab stopped on each with nothing to do there. A stop that is no control is a box that
    # scrolls at some width (overflow-x auto: a table of series wider than 40 rem); the other tables are no stops
    base, paths = shelf
    seen: dict[str, list[tuple[str, bool]]] = {}
    tables: dict[int, dict[str, int]] = {}
    with devtools() as pipe:
        for width in (1100, 700, 390, 320):
            session = _keyboard_tab(pipe, base + paths[page])
            pipe.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 740, "deviceScaleFactor": 1,
                                                              "mobile": width < 600}, session, time.monotonic() + 30)
            found = _js(pipe, session, STOPS)
            for stop, overflow, more in found["stops"]:
                seen.setdefault(stop, []).append((overflow, more))
            tables[width] = found["tables"]
            _shoot(pipe, session, f"reader-edges-stops-{page}-{width}.png")
    for stop, states in seen.items():
        assert any(overflow in ("auto", "scroll") for overflow, _ in states), (stop, states)
    table = {"home": "series", "series-list": "series", "document": "statements", "tombstone": "withdrawn"}[page]
    assert all(table in found for found in tables.values()), tables  # the page holds the table asked about
    if table == "series":  # a box that scrolls, on a desktop (its names wider than the window on /series)
        assert all(found["series"] == 0 for found in tables.values()), tables
        assert f"table#{table}" in seen, seen
        if page == "series-list":
            assert any(more for _, more in seen["table#series"]), seen
    else:
        assert all(found[table] == -1 for found in tables.values()), tables


@pytest.mark.parametrize("width", [360, 1100])
def test_a_series_with_no_names_says_what_to_do_next(bare: str, width: int) -> None:
    # a series registered, nothing in it: the page said "0 documents." and nothing more; it says how a document
    # gets there (the command that deposits one into this series), and where a reader can go meanwhile
    said = _says(f"{bare}/series/{BARE}", width, f"reader-edges-empty-series-{width}.png")
    text = str(said["text"])
    assert f"pdi add FILE --series {BARE}" in text, text
    assert ["every series", "/series"] in said["links"] and ["search the archive", "/search"] in said["links"], said
    assert said["widths"] == [width, width], said  # the command wraps on a phone, the page no wider than the window


@pytest.mark.parametrize("width", [360, 1100])
def test_a_search_with_no_hits_says_what_to_try_next(served: Served, width: int) -> None:
    # a phrase in one series that no passage holds: the page said "No passage holds all these words." and no more;
    # it offers the same words without quotes (the served text holds "Hello, world.": both words, not in that
    # order), every series rather than the one chosen, and the catalogue to browse; the first of these finds a hit
    query = {"q": '"world hello"', "series": "library.example.us"}
    said = _says(f"{served.url}/search?{urllib.parse.urlencode(query)}", width, f"reader-edges-no-hits-{width}.png")
    links = dict(said["links"])  # type: ignore[call-overload]
    # the served archive holds a text over 1 MiB the indexer has not read: the words may be there, and the page
    # says so rather than that no passage holds them
    assert "Index pending" in str(said["text"]), said
    assert "No passage searched so far holds all these words; the text not searched yet may." in str(said["text"]), said
    assert links.get("the same words without quotes") == "/search?q=world+hello&series=library.example.us", links
    assert links.get("every series") == "/search?q=%22world+hello%22", links
    assert links.get("series by series") == "/series", links
    assert said["widths"] == [width, width], said
    hits = _says(served.url + links["the same words without quotes"], width, f"reader-edges-no-hits-then-{width}.png")
    assert "No passage holds" not in str(hits["text"]) and "Hello, world." in str(hits["text"]), hits


#: A page's <title>, its h1s' text, and the links of its main that lead back into the app (home, series, search).
TITLED = """({title: document.title, h1: [...document.querySelectorAll('h1')].map((h) => h.textContent),
  back: [...document.querySelectorAll('main a')].map((a) => a.getAttribute('href')).filter((h) => ['/', '/series', '/search'].includes(h)),
  widths: [document.scrollingElement.scrollWidth, innerWidth]})"""


@pytest.mark.parametrize("case", ["not-found", "bad-fragment", "not-a-name", "long"])
def test_an_error_pages_title_names_the_name_it_is_about(served: Served, case: str) -> None:
    # each failed name's tab, history entry and bookmark said only "Not found" or "Syntax error", whatever the
    # name: the title names it, as the page's heading and box do; a stranger's long name is clipped in it
    typed = {"not-found": "urn:pdi://nowhere.example.us/2026/11/22/1.text.1",
             "bad-fragment": served.text + "#char=9,2",  # its end before its start (PDI-GRAMMAR: start <= end)
             "not-a-name": "urn:pdi://x",
             "long": "urn:pdi://nowhere.example.us/2026/11/22/" + "a" * 5000 + ".text.1"}[case]
    # a syntax error's tab in a reader's words, as its heading (the problem's title, "syntax error", a program's)
    kind = {"not-found": "Not found", "bad-fragment": "Not written right", "not-a-name": "Not written right",
            "long": "Not found"}[case]
    with devtools() as pipe:
        session = _keyboard_tab(pipe, f"{served.url}/view?pdi={urllib.parse.quote(typed, safe='')}")
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": 360, "height": 740, "deviceScaleFactor": 1,
                                                          "mobile": True}, session, deadline)
        said = pipe.call("Runtime.evaluate", {"expression": TITLED, "returnByValue": True}, session, deadline)["result"]["value"]
        _shoot(pipe, session, f"reader-edges-error-title-{case}-360.png")
    if case == "long":
        assert said["title"].startswith(kind + ": urn:pdi://nowhere.example.us/2026/11/22/aaa"), said["title"]
        assert said["title"].endswith("aaa.text.1") and "characters left out" in said["title"], said["title"]
        assert len(said["title"]) < 300, len(said["title"])
    else:
        assert said["title"] == f"{kind}: {typed}", said["title"]
    assert len(said["h1"]) == 1 and sorted(said["back"]) == ["/", "/search", "/series"], said  # an app page, a way back
    assert said["widths"] == [360, 360], said


@pytest.mark.parametrize("width", [360, 1100])
def test_a_day_with_no_names_leads_to_the_days_that_have_some(served: Served, width: int) -> None:
    # a day of the series with nothing minted: the page said "0 documents minted on this day (GMT)." and then
    # "No documents on this page.", saying it twice and leading nowhere; it leads to the month's calendar (which
    # links the days that have documents) and to the series' years and months
    said = _says(f"{served.url}/series/library.example.us/2026/01/01", width, f"reader-edges-empty-day-{width}.png")
    text = str(said["text"])
    assert "0 documents minted on this day (GMT)." in text and "No documents on this page." not in text, text
    main_links = [href for _, href in said["links"]]  # type: ignore[attr-defined]
    # the crumbs link the month and the series too: the sentence adds them where the reader is told there is nothing
    assert main_links.count("/series/library.example.us/2026/01") == 2, said["links"]
    assert main_links.count("/series/library.example.us") == 2, said["links"]
    assert said["widths"] == [width, width], said


@pytest.mark.parametrize("path", ["/", "/series"])
def test_an_empty_archive_says_how_a_series_is_registered_and_how_to_sign_in(empty: str, path: str) -> None:
    # an archive with no series: "/series" said only that there was none to show, the home page named the command
    # but not how a reader with a token sees the series closed to others; both say both, the sign-in coming back
    said = _says(empty + path, 360, f"reader-edges-empty-archive{path.replace('/', '-')}-360.png")
    text = str(said["text"])
    assert "pdi series add NAME" in text and "pdi add FILE --series NAME" in text, text
    back = "/signin" if path == "/" else "/signin?next=%2Fseries"
    assert ["signs in", back] in said["links"], said["links"]  # type: ignore[operator]
    assert said["widths"] == [360, 360], said


#: The box-mode button of the page: [its id, aria-pressed, whether it has the focus, the player's controls shown].
BOX_MODE = """JSON.stringify((() => { const b = document.querySelector('#video-box-mode, #pdf-box-mode'),
  v = document.getElementById('player'); return [b.id, b.getAttribute('aria-pressed'), document.activeElement === b,
  v ? v.controls : null]; })())"""


@pytest.mark.parametrize("kind", ["video", "pdf"])
def test_escape_leaves_the_box_mode_a_button_entered(media: tuple[str, dict[str, str]], kind: str) -> None:
    # the button "Box on the frame" (a video) or "Draw a box" (a PDF) enters a mode (a video's controls hidden so
    # a drag draws a box); from the keyboard, Enter entered it and only the button itself left it: Escape leaves it
    # too (WAI-ARIA APG: Escape closes what a control opened), the focus staying on the button
    base, names = media
    with devtools() as pipe:
        session = _keyboard_tab(pipe, f"{base}/view?pdi={names[kind]}")
        wanted = f"{kind}-box-mode"
        for _ in range(60):
            _key(pipe, session, "Tab", 9)
            if _js(pipe, session, "document.activeElement.id") == wanted:
                break
        _key(pipe, session, "Enter", 13, "\r")
        entered = json.loads(_js(pipe, session, BOX_MODE))
        _key(pipe, session, "Escape", 27)
        left = json.loads(_js(pipe, session, BOX_MODE))
        _shoot(pipe, session, f"reader-edges-escape-{kind}.png")
    assert entered == [wanted, "true", True, False if kind == "video" else None], entered
    assert left == [wanted, "false", True, True if kind == "video" else None], left


@pytest.mark.parametrize("case", ["too-long", "twice"])
def test_a_refused_searchs_title_says_what_was_refused(served: Served, case: str) -> None:
    # a search refused (past the 128 words the index reads; q given twice) was titled "Search: error", the same
    # for every query: the title says the search was refused and names the words (clipped: they may be long)
    path = {"too-long": "/search?q=" + urllib.parse.quote("北京" * 65), "twice": "/search?q=a&q=b"}[case]
    with devtools() as pipe:
        session = _keyboard_tab(pipe, served.url + path)
        said = pipe.call("Runtime.evaluate", {"expression": TITLED, "returnByValue": True}, session,
                         time.monotonic() + 30)["result"]["value"]
        _shoot(pipe, session, f"reader-edges-search-refused-{case}.png")
    if case == "too-long":
        assert said["title"].startswith("Search refused: 北京北京"), said["title"]
        assert "characters left out" in said["title"] and len(said["title"]) < 130, said["title"]
    else:
        assert said["title"] == "Search refused", said["title"]
    assert len(said["h1"]) == 1, said
