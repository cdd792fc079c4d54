"""A long e-mail body in the reader's page, shown a page at a time (``pdi.server.pages.body_pages``).

The messages are made here, each line of the long one saying its own number, so what a page must show is worked
out from the message as written (line *i* is ``line 0000i of the long report``, 31 characters with its CR LF)
and from the page's bounds as ``docs/email.md`` §4 states them (2,000 lines, 262,144 characters), not read from
the pages' code.
"""

from __future__ import annotations

import html
import json
import re
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from server_helpers import serving
from test_server_pdf_viewer import _shoot
from test_server_viewer_browser import _select

from chromium_helpers import open_page
from pdi.archive import Archive
from pdi.capture.browser import devtools
from pdi.server.pages.body_pages import page_holding, page_table

S = "mail.example.us"
LINES = 50_000
HEAD = (b"From: Ann <ann@example.org>\r\nTo: Bob <bob@example.org>\r\nSubject: The long report\r\n"
        b"Message-ID: <long@example.org>\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n")


def line(i: int) -> str:
    """Line ``i`` (from 1) of the long message's body, without its line break."""
    return f"line {i:05d} of the long report"


WIDTH = len(line(1)) + 2  # each line and its CR LF: line i starts at character (i - 1) * WIDTH of the body's text
#: 50,000 lines: 25 pages of 2,000 (62,000 characters each, under the 262,144 of a page).
LONG = HEAD + "".join(line(i) + "\r\n" for i in range(1, LINES + 1)).encode()
#: 600 lines of 1,000 characters: a page holds as many whole lines as fit in 262,144 characters, 261 (1,002 each).
WIDE = HEAD.replace(b"<long@", b"<wide@") + b"".join(f"{i:04d}".encode() + b"w" * 996 + b"\r\n" for i in range(1, 601))
#: One line of 600,000 characters: cut at 262,144 and 524,288, three pages.
ONE_LINE = HEAD.replace(b"<long@", b"<one@") + b"x" * 600_000 + b"\r\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    root: Path = tmp_path_factory.mktemp("email-pages")
    with Archive.init(root / "archive") as archive:
        archive.add_series(S)
        names = {
            "long": str(archive.add(S, LONG, format="rfc822")),
            "wide": str(archive.add(S, WIDE, format="rfc822")),
            "one": str(archive.add(S, ONE_LINE, format="rfc822")),
            "short": str(archive.add(S, HEAD.replace(b"<long@", b"<short@") + b"Just one line.\r\n", format="rfc822")),
            "text": str(archive.add(S, b"A plain text.\n", format="text")),
        }
    with serving(root / "archive") as (_, port):
        yield f"http://127.0.0.1:{port}", names


def _view(base: str, name: str, page: str | None = None) -> str:
    return f"{base}/view?pdi={urllib.parse.quote(name, safe='')}" + (f"&page={page}" if page is not None else "")


def _pre(page: str) -> tuple[int, str]:
    """The ``<pre>``'s ``data-offset`` and its text as a browser reads it (marks taken out, escapes undone)."""
    found = re.search(r'<pre id="text"[^>]*data-offset="(\d+)"[^>]*>\n(.*?)</pre>', page, re.S)
    assert found is not None, page[:2000]
    return int(found[1]), html.unescape(re.sub(r"<[^>]+>", "", found[2]))


def _nav(page: str) -> dict[str, str]:
    """The links of the first paging bar by their words (First, Previous, Next, Last), their addresses unescaped."""
    bar = re.search(r'<nav class="body-pages" id="body-pages-top".*?</nav>', page, re.S)
    assert bar is not None, page[:2000]
    return {next(word for word in words.split() if word.isalpha()): html.unescape(href) for href, words in re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>', bar[0])}


def _said(page: str) -> str:
    bar = re.search(r'<nav class="body-pages" id="body-pages-top"[^>]*><p>(.*?)</p>', page, re.S)
    assert bar is not None
    return html.unescape(bar[1])


def _lines(first: int, last: int) -> str:
    """Lines ``first`` to ``last`` of the long message's body as a ``<pre>`` shows them (LF line breaks)."""
    return "".join(line(i) + "\n" for i in range(first, last + 1))


def test_the_first_and_a_later_page_show_their_lines_and_link_where_they_say(served: tuple[str, dict[str, str]]) -> None:
    base, names = served
    first = httpx.get(_view(base, names["long"]))
    assert first.status_code == 200
    assert len(first.content) < 200_000  # 2,000 lines, not 50,000: the page is not the body
    assert _pre(first.text) == (0, _lines(1, 2_000))
    assert _said(first.text) == "Page 1 of 25 of the body's text: lines 1\u20132,000 of 50,000."
    links = _nav(first.text)
    assert set(links) == {"Next", "Last"}  # on the first page, First and Previous are no links
    later = httpx.get(base + links["Next"])
    assert _pre(later.text) == (2_000 * WIDTH, _lines(2_001, 4_000))
    thirteenth = httpx.get(_view(base, names["long"], "13"))
    assert _pre(thirteenth.text) == (24_000 * WIDTH, _lines(24_001, 26_000))
    assert _said(thirteenth.text) == "Page 13 of 25 of the body's text: lines 24,001\u201326,000 of 50,000."
    # each link goes to the page it says: first, previous (12), next (14), last (25)
    went = {words: _pre(httpx.get(base + href).text)[1].split("\n", 1)[0] for words, href in _nav(thirteenth.text).items()}
    assert went == {"First": line(1), "Previous": line(22_001), "Next": line(26_001), "Last": line(48_001)}
    last = httpx.get(base + _nav(thirteenth.text)["Last"])
    assert _pre(last.text)[1] == _lines(48_001, 50_000) and set(_nav(last.text)) == {"First", "Previous"}
    # the bar is said again under the text, with the same links
    assert last.text.count('class="body-pages"') == 2


def test_a_passage_on_line_30000_opens_the_page_that_holds_it_marked(served: tuple[str, dict[str, str]]) -> None:
    base, names = served
    # RFC 5147 counts lines from 0: line=29999,30000 is the 30,000th line, its line break with it, on page 15
    # (lines 28,001 to 30,000)
    page = httpx.get(_view(base, names["long"] + "#line=29999,30000")).text
    assert _said(page) == "Page 15 of 25 of the body's text: lines 28,001\u201330,000 of 50,000."
    marked = re.search(r'<mark id="passage">(.*?)</mark>', page, re.S)
    assert marked is not None and marked[1] == line(30_000) + "\n"
    assert 'href="#passage"' in page  # the link to it, for a reader without scripts
    # the same by characters, across two pages: marked where each page holds it, the first saying it goes on
    start, end = (2_000 - 1) * WIDTH + 5, 2_000 * WIDTH + 10  # "00001" … of line 2,000 through "line 2001 "
    across = httpx.get(_view(base, names["long"] + f"#char={start},{end}")).text
    assert _pre(across)[0] == 0
    assert re.search(r'<mark id="passage">(.*?)</mark>', across, re.S)[1] == line(2_000)[5:] + "\n"  # type: ignore[index]
    goes_on = re.search(r'id="passage-goes-on">.*?<a href="([^"]+)"', across, re.S)
    assert goes_on is not None
    following = httpx.get(base + html.unescape(goes_on[1])).text
    assert re.search(r'<mark id="passage">(.*?)</mark>', following, re.S)[1] == line(2_001)[:10]  # type: ignore[index]
    # another page asked for: the passage is not on it, a link goes to the page that holds it
    elsewhere = httpx.get(_view(base, names["long"] + "#line=29999,30000", "2")).text
    assert "<mark" not in elsewhere and "The passage named is on page 15:" in elsewhere


def test_a_page_of_long_lines_holds_what_fits_in_its_characters(served: tuple[str, dict[str, str]]) -> None:
    base, names = served
    wide = httpx.get(_view(base, names["wide"])).text
    per_page = (256 << 10) // 1_002  # 261 whole lines of 1,000 characters and a CR LF
    assert _said(wide) == f"Page 1 of 3 of the body's text: lines 1\u2013{per_page} of 600."
    assert _pre(wide)[1].split("\n")[-2].startswith(f"{per_page:04d}w")
    one = httpx.get(_view(base, names["one"], "2")).text
    assert _pre(one) == (256 << 10, "x" * (256 << 10))  # the one line, cut where a page's characters end
    assert "Page 2 of 3 of the body's text: lines 1\u20131 of 1 (a line longer than a page" in _said(one)
    # a body of one page has no paging bar
    assert 'class="body-pages"' not in httpx.get(_view(base, names["short"])).text


def test_a_page_that_is_no_page_number_is_a_400_and_one_past_the_last_shows_the_last(
    served: tuple[str, dict[str, str]]
) -> None:
    base, names = served
    for asked in ("abc", "0", "-3", "1.5", "\u0662"):
        refused = httpx.get(_view(base, names["long"], urllib.parse.quote(asked)), headers={"Accept": "text/html"})
        assert refused.status_code == 400, asked
        assert "page=" in refused.text and "give 1 to" in refused.text, refused.text[:3000]
    past = httpx.get(_view(base, names["long"], "900"))
    assert past.status_code == 200
    assert _said(past.text).endswith("lines 48,001\u201350,000 of 50,000. There is no page 900: the last is shown.")
    # a page number is at most 999,999,999,999 (no 5,000-digit int() is made of what a stranger sends)
    long_number = httpx.get(_view(base, names["long"], "9" * 5_000), headers={"Accept": "text/html"})
    assert long_number.status_code == 400 and "out of range: give 1 to 999999999999" in long_number.text
    # only a message's body has pages: page= of a text is refused, naming what it is
    text = httpx.get(_view(base, names["text"], "2"), headers={"Accept": "text/html"})
    assert text.status_code == 400 and "pages the body of an e-mail message" in text.text
    assert "text/plain" in text.text


def test_a_paged_long_message_in_chromium_lands_on_the_cited_line_and_names_a_selection_in_the_whole(
    served: tuple[str, dict[str, str]]
) -> None:
    base, names = served
    name = names["long"]
    with devtools() as pipe:
        started = time.monotonic()
        session = open_page(pipe, _view(base, name + "#line=29999,30000"))
        opened = time.monotonic() - started
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": 1100, "height": 800, "deviceScaleFactor": 1,
                                                          "mobile": False}, session, time.monotonic() + 30)
        facts = json.loads(pipe.call("Runtime.evaluate", {"expression": """JSON.stringify((() => {
            const mark = document.getElementById('passage'), box = mark.getBoundingClientRect();
            return [mark.textContent, box.top >= 0 && box.bottom <= innerHeight,
                    document.getElementById('body-pages-top').innerText];
        })())""", "returnByValue": True}, session, time.monotonic() + 30)["result"]["value"])
        _shoot(pipe, session, "email-body-paged-1100.png")
        # a selection on page 15 is named by its place in the whole body: line 28,500 starts at 28,499 lines' width
        wanted = line(28_500)
        named = _select(pipe, session, wanted)
        # a phone: page 13 from its top, the paging bar above the text, nothing wider than the screen
        session = open_page(pipe, _view(base, name, "13"))
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1,
                                                          "mobile": True}, session, time.monotonic() + 30)
        bar = pipe.call("Runtime.evaluate", {"expression": """JSON.stringify((() => {
            const bar = document.getElementById('body-pages-top').getBoundingClientRect();
            document.getElementById('body-pages-top').scrollIntoView();
            return [bar.right <= innerWidth, document.documentElement.scrollWidth <= innerWidth];
        })())""", "returnByValue": True}, session, time.monotonic() + 30)["result"]["value"]
        _shoot(pipe, session, "email-body-paged-390.png")
    assert facts[0] == line(30_000) + "\n" and facts[1], facts
    assert "lines 28,001\u201330,000 of 50,000" in facts[2], facts
    at = 28_499 * WIDTH
    assert named == f"{name}#char={at},{at + len(wanted)}", named
    assert opened < 30, opened  # a bound on a hang, not a measure: a page of 2,000 lines
    assert json.loads(bar) == [True, True], bar


_CRLF_TEXT = st.lists(st.text(st.characters(exclude_characters="\r\n\x85"), max_size=12), max_size=60).map(
    "\r\n".join)


@given(_CRLF_TEXT, st.integers(1, 6), st.integers(2, 40))
def test_pages_cover_the_text_in_order_each_as_full_as_its_bounds_allow(text: str, lines: int, characters: int) -> None:
    table = page_table(text, lines, characters)
    ends = [*table.starts[1:], len(text)]
    pages = [text[a:b] for a, b in zip(table.starts, ends, strict=True)]
    assert "".join(pages) == text and (all(pages) or pages == [""])
    assert table.lines == text.count("\r\n") + (1 if text and not text.endswith("\r\n") else 0)
    for number, (start, page) in enumerate(zip(table.starts, pages, strict=True), 1):
        assert table.breaks[number - 1] == text.count("\r\n", 0, start)
        assert len(page) <= characters and page.count("\n") <= lines
        assert not (page.endswith("\r") and text[start + len(page):].startswith("\n"))  # never inside a CR LF
        assert page_holding(table, start) == number and page_holding(table, start + len(page) - 1) == number
        if number == len(pages):
            continue
        rest = text[start + len(page):]
        following = rest[: rest.find("\r\n") + 2] if "\r\n" in rest else rest
        if page.endswith("\r\n"):  # full: its lines, or the next line would not fit
            assert page.count("\r\n") == lines or len(page) + len(following) > characters
        else:  # a line longer than a page, cut where its characters end (before a CR whose LF would not fit)
            assert "\r\n" not in page and len(page) >= characters - 1
