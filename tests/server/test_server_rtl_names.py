"""A name, an id or a URL holding Hebrew or Arabic reads left to right as written; a Hebrew text keeps its direction.

A PDI's foreign id may be any text, %-escaped as UTF-8 in the name (PDI-GRAMMAR §1, ``unique-id-char``):
``https://he.example.org/מסמך/2024`` is ``https:%2F%2Fhe%2Eexample%2Eorg%2F%D7%9E%D7%A1%D7%9E%D7%9A%2F2024``,
and the pages show it decoded. Unicode's bidi algorithm, even in a left-to-right embedding (RFC 3987 §4.1),
draws it ``https://he.example.org/2024/מסמך``: the number after the Hebrew word is drawn before it. Chromium
opens each page the id is on (the document's heading, breadcrumbs, facts and link to its captures; the day's
table; a search's hit) and reads it back in the order the browser lays it out (each character's place, lines
top to bottom, each left to right): its parts stand left to right as written, the Hebrew word's letters right
to left inside its own part. A search's snippet of a Hebrew text is drawn right to left, flush right, and an
English one left to right. At 1100 px and at 390 px (a phone, where the page scrolls not sideways); each page is
saved as a screenshot.
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

from chromium_helpers import evaluate, laid_out, open_page
from pdi.archive import Archive
from pdi.capture.browser import Pipe, devtools

S = "library.example.us"
#: "Document" in Hebrew, between a host and a year: the URL a page was captured from.
HEBREW_WORD = "מסמך"
URL = f"https://he.example.org/{HEBREW_WORD}/2024"
#: The URL as it must be drawn, left to right: its parts in the order written, the Hebrew word's letters (read
#: right to left) drawn from its last on the left to its first on the right.
URL_DRAWN = f"https://he.example.org/{HEBREW_WORD[::-1]}/2024"
#: "Report" in Arabic, then "/7": an Arabic foreign id that is no URL.
ARABIC_WORD = "تقرير"
ARABIC_ID = f"{ARABIC_WORD}/7"
ARABIC_DRAWN = f"{ARABIC_WORD[::-1]}/7"
#: "Hello world, a zebra": a Hebrew text, and an English one, found by the one word they share.
HEBREW_TEXT = "שלום עולם, זברה ירוקה במרכז הגן."
ENGLISH_TEXT = "A zebra in the middle of the garden."


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    root = tmp_path_factory.mktemp("rtl-names")
    clock = lambda: datetime.datetime(2026, 11, 25, 10, 0, tzinfo=datetime.UTC)  # noqa: E731
    with Archive.init(root / "archive", clock=clock) as archive:
        archive.add_series(S)
        names = {
            "url": str(archive.add(S, b"<!DOCTYPE html><title>Doc</title><p>zebra</p>", format="html", foreign_id=URL)),
            "arabic": str(archive.add(S, ENGLISH_TEXT.encode() + b"\n", format="text", foreign_id=ARABIC_ID)),
            "hebrew": str(archive.add(S, HEBREW_TEXT.encode() + b"\n", format="text")),
        }
    with serving(root / "archive") as (_, port):
        yield f"http://127.0.0.1:{port}", names


def test_the_ids_are_named_as_the_grammar_escapes_them(site: tuple[str, dict[str, str]]) -> None:
    """The names hold the ids %-escaped as UTF-8 (worked out by hand from the code points), the pages decode them."""
    _, names = site
    assert names["url"] == (f"urn:pdi://{S}/2026/11/25/https:%2F%2Fhe%2Eexample%2Eorg%2F"
                            "%D7%9E%D7%A1%D7%9E%D7%9A%2F2024.html.1")
    assert names["arabic"] == f"urn:pdi://{S}/2026/11/25/%D8%AA%D9%82%D8%B1%D9%8A%D8%B1%2F7.text.1"


#: The boxes of the first and the last character of an element's text: [left, top] of each.
_ENDS = """(function (element) {
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT), nodes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) if (node.data.trim()) nodes.push(node);
  const first = nodes[0], last = nodes[nodes.length - 1], range = document.createRange();
  range.setStart(first, 0); range.setEnd(first, 1);
  const a = range.getBoundingClientRect();
  range.setStart(last, last.data.length - 1); range.setEnd(last, last.data.length);
  const b = range.getBoundingClientRect();
  return [[a.left, a.top], [b.left, b.top]];
})"""


def _opened(pipe: Pipe, url: str, width: int, shot: str) -> str:
    """``url`` opened ``width`` px wide and saved as the screenshot ``shot``; the page scrolls not sideways."""
    session = open_page(pipe, url)
    size = {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600}
    pipe.call("Emulation.setDeviceMetricsOverride", size, session, time.monotonic() + 30)
    png = base64.b64decode(pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)["data"])
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"{shot}-{width}.png").write_bytes(png)
    assert evaluate(pipe, session, "document.documentElement.scrollWidth <= innerWidth"), f"{shot} scrolls sideways"
    # every code on the page (a name, an id, a URL, a fragment) is left to right and isolated, whatever holds it
    assert evaluate(pipe, session, "[...document.querySelectorAll('code')].every((c) => getComputedStyle(c).direction"
                              " === 'ltr' && getComputedStyle(c).unicodeBidi === 'isolate')")
    return session


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


@pytest.mark.parametrize("width", [1100, 390])
def test_a_hebrew_url_id_reads_left_to_right_on_its_documents_page(site: tuple[str, dict[str, str]], width: int) -> None:
    base, names = site
    with devtools() as pipe:
        session = _opened(pipe, f"{base}/view?pdi={_q(names['url'].rsplit('.', 2)[0])}", width, "rtl-names-document")
        for selector in ("main h1 .url", "nav.crumbs li[aria-current=page]", "dl.facts dd:nth-of-type(4) code",
                         "main p a[href^='/captures?'] code"):
            assert laid_out(pipe, session, selector) == URL_DRAWN, selector
        # the first character of the heading's URL, its h, before its last, the 4 of 2024: left of it on its line,
        # or on a line above it
        (first_left, first_top), (last_left, last_top) = evaluate(pipe, session,
                                                             f"{_ENDS}(document.querySelector('main h1 .url'))")
        assert first_top < last_top - 1 or (abs(first_top - last_top) <= 1 and first_left < last_left)
        # the version's page heads it the same way (the replayed page's banner)
        session = _opened(pipe, f"{base}/view?pdi={_q(names['url'])}", width, "rtl-names-version")
        assert laid_out(pipe, session, ".replay-banner h1 .url") == URL_DRAWN


@pytest.mark.parametrize("width", [1100, 390])
def test_hebrew_and_arabic_ids_read_left_to_right_in_the_days_table(site: tuple[str, dict[str, str]], width: int) -> None:
    base, names = site
    with devtools() as pipe:
        session = _opened(pipe, f"{base}/series/{S}/2026/11/25", width, "rtl-names-day")
        cells = evaluate(pipe, session, "[...document.querySelectorAll('#documents td.id a')].map((a) => a.title)")
        generic = {key: name.rsplit(".", 2)[0] for key, name in names.items()}  # each row links its document
        assert sorted(cells) == sorted(generic.values())
        drawn = {name: laid_out(pipe, session, f"#documents td.id a[title={json.dumps(name)}] code") for name in cells}
        assert drawn[generic["url"]] == URL_DRAWN
        assert drawn[generic["arabic"]] == ARABIC_DRAWN
        # the Arabic id's page: its heading is its name (ASCII, %-escaped), its id fact the id decoded
        session = _opened(pipe, f"{base}/view?pdi={_q(names['arabic'].rsplit('.', 2)[0])}", width, "rtl-names-arabic")
        assert laid_out(pipe, session, "dl.facts dd:nth-of-type(4) code") == ARABIC_DRAWN
        assert laid_out(pipe, session, "nav.crumbs li[aria-current=page]") == ARABIC_DRAWN


@pytest.mark.parametrize("width", [1100, 390])
def test_a_search_hit_shows_its_url_in_order_and_a_hebrew_snippet_right_to_left(
    site: tuple[str, dict[str, str]], width: int
) -> None:
    base, names = site
    with devtools() as pipe:
        session = _opened(pipe, f"{base}/search?q={_q('זברה')}", width, "rtl-names-search-hebrew")
        snippet = evaluate(pipe, session, """(() => {
          const p = document.querySelector('ol.hits .snippet'), s = getComputedStyle(p), r = p.getBoundingClientRect();
          const range = document.createRange(); range.selectNodeContents(p);
          const lines = [...range.getClientRects()];
          return [s.direction, r.right - parseFloat(s.paddingRight), Math.max(...lines.map((l) => l.right)),
                  r.left + parseFloat(s.paddingLeft), Math.min(...lines.map((l) => l.left))]; })()""")
        assert evaluate(pipe, session, "document.querySelector('ol.hits code.name').textContent").startswith(
            names["hebrew"] + "#char=")  # the Hebrew text's passage, and no other
        direction, right, text_right, left, text_left = snippet
        assert direction == "rtl"
        assert abs(right - text_right) <= 1 and text_left > left + 1, snippet  # flush right, not left
        session = _opened(pipe, f"{base}/search?q=zebra", width, "rtl-names-search")
        hits = evaluate(pipe, session, "[...document.querySelectorAll('ol.hits > li')].map((li) => [li.querySelector("
                                  "'.capture-title .url') !== null, getComputedStyle(li.querySelector('.snippet'))"
                                  ".direction])")
        assert sorted(hits) == [[False, "ltr"], [True, "ltr"]], hits  # the English text, the capture
        assert laid_out(pipe, session, "ol.hits .capture-title .url") == URL_DRAWN
