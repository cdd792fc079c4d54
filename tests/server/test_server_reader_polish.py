"""Rough edges of the reader's pages, each measured in Chromium as a reader sees it.

* a replayed capture's URL of 500 characters and more, on a phone: the banner
  showed it whole, in bold, some 330 of 800 pixels above the archived page; it
  is drawn in two lines at most, and is still whole in the page (a screen reader
  reads it, a selection copies it, the pointer's tooltip shows it);
* a version's title: the line "Title: …" under the name repeated the title the
  facts list as this name's statement; a title is shown once;
* a title in Chinese, Japanese or Korean in ``<cite>``: drawn in italics, which
  these scripts do not have (the browser slants each glyph); it stands upright.
"""

from __future__ import annotations

import base64
import datetime
import json
import time
import urllib.parse
from collections.abc import Iterator

import pytest
from server_helpers import Clock, S, with_replay
from test_server_pages_screenshots import SHOTS

from chromium_helpers import open_page
from pdi.archive import Archive, Content
from pdi.capture.browser import Pipe, devtools

#: A catalogue's search address, as a library's OPAC gives one: 40 fields, over 700 characters.
LONG_URL = "https://catalogue.example.org/record?" + "&".join(f"field{i}=value-of-field-{i}" for i in range(40))
LETTER = "A letter of thanks"
JAPANESE = "東京大学図書館の議事録"
CHINESE = "北京图书馆会议记录"
KOREAN = "대법원 도서관 회의록"


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    root = tmp_path_factory.mktemp("polish")
    clock = Clock(datetime.datetime(2026, 11, 20, 9, 0, tzinfo=datetime.UTC))
    with Archive.init(root / "archive", clock=clock) as archive:
        archive.add_series(S)
        names: dict[str, str] = {}
        # a title stated about this version alone (the served archive's "A letter" is)
        names["letter"] = str(archive.add(S, b"The minutes of the library, a letter.\n", format="text"))
        archive.annotate(names["letter"], "title", LETTER)
        # a document's title, and a version's own that differs from it: both said, each once
        names["minutes"] = str(archive.add(S, b"The minutes of the library, a draft.\n", format="text"))
        archive.annotate(names["minutes"].rsplit(".", 2)[0], "title", "Minutes of the board")
        archive.annotate(names["minutes"], "title", "Minutes of the board, first draft")
        for key, title in (("japanese", JAPANESE), ("chinese", CHINESE), ("korean", KOREAN)):
            names[key] = str(archive.add(S, f"The minutes of the library ({key}).\n".encode(), format="text"))
            archive.annotate(names[key].rsplit(".", 2)[0], "title", title)
        withdrawn = str(archive.add(S, b"A draft deposited by mistake.\n", format="text"))
        archive.annotate(withdrawn.rsplit(".", 2)[0], "title", JAPANESE)
        archive.withdraw(withdrawn.rsplit(".", 2)[0], "deposited by mistake")
        names["withdrawn"] = withdrawn
        names["capture"] = str(archive.deposit(S, [Content(b"<!DOCTYPE html><title>Record</title><p>A record.</p>",
                                                           "html")], foreign_id=LONG_URL)[0])
    with with_replay(str(root / "archive")) as (url, _):
        yield url, names


def _js(pipe: Pipe, session: str, expression: str) -> object:
    answer = pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session,
                       time.monotonic() + 30)
    assert "exceptionDetails" not in answer, answer
    return answer["result"].get("value")


def _open(pipe: Pipe, url: str, width: int, shot: str, height: int = 800) -> str:
    session = open_page(pipe, url)
    size = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}
    pipe.call("Emulation.setDeviceMetricsOverride", size, session, time.monotonic() + 30)
    picture = pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / shot).write_bytes(base64.b64decode(picture["data"]))
    return session


#: The banner's URL: [its text, its tooltip, its height in lines of its font, the top of the archived page's frame,
#: what a selection of the heading copies].
BANNER = """JSON.stringify((() => { const url = document.querySelector('.replay-banner h1 .url');
  const s = getComputedStyle(url), line = parseFloat(s.lineHeight) || parseFloat(s.fontSize) * 1.2;
  const range = document.createRange(); range.selectNodeContents(url.closest('h1'));
  getSelection().removeAllRanges(); getSelection().addRange(range);
  return [url.textContent, url.title, url.getBoundingClientRect().height / line,
          document.querySelector('iframe.replay').getBoundingClientRect().top, getSelection().toString()]; })())"""


@pytest.mark.parametrize("width", [375, 1100])
def test_a_long_url_heads_a_replayed_capture_in_two_lines_and_is_still_whole(
    site: tuple[str, dict[str, str]], width: int
) -> None:
    base, names = site
    with devtools() as pipe:
        session = _open(pipe, f"{base}/view?pdi={_q(names['capture'])}", width, f"polish-long-url-{width}.png")
        text, tooltip, lines, frame, copied = json.loads(str(_js(pipe, session, BANNER)))
        tree = pipe.call("Accessibility.getFullAXTree", {}, session, time.monotonic() + 30)["nodes"]
    assert len(LONG_URL) > 500
    assert lines <= 2, f"at {width} px the URL takes {lines:.1f} lines"
    assert frame <= 300, f"at {width} px the archived page starts {frame} px down"
    assert text == LONG_URL and tooltip == LONG_URL
    assert LONG_URL in copied.replace("\n", ""), copied
    # what a screen reader is given: the heading's name, the URL whole (the lines out of sight are not hidden from
    # it; Chromium names it with a space at each of its line-break opportunities, <wbr>, clamped or not)
    headings = [n.get("name", {}).get("value", "") for n in tree
                if not n.get("ignored") and n.get("role", {}).get("value") == "heading"]
    assert len(headings) == 1 and headings[0].replace(" ", "").startswith(LONG_URL), headings


def _occurrences(pipe: Pipe, session: str, words: str) -> int:
    shown = str(_js(pipe, session, "document.querySelector('main').innerText"))
    return shown.count(words)


def test_a_title_is_shown_once(site: tuple[str, dict[str, str]]) -> None:
    base, names = site
    with devtools() as pipe:
        # stated about this version: among its facts, not again under its name
        session = _open(pipe, f"{base}/view?pdi={_q(names['letter'])}", 1100, "polish-title-version.png")
        assert _occurrences(pipe, session, LETTER) == 1
        # the document's title, and this version's own that differs: each once
        session = _open(pipe, f"{base}/view?pdi={_q(names['minutes'])}", 1100, "polish-title-both.png")
        shown = str(_js(pipe, session, "document.querySelector('main').innerText"))
        assert shown.count("Minutes of the board, first draft") == 1
        assert shown.replace("Minutes of the board, first draft", "").count("Minutes of the board") == 1
        # the document's title alone: the line under the name says it
        session = _open(pipe, f"{base}/view?pdi={_q(names['japanese'])}", 1100, "polish-title-document.png")
        assert _occurrences(pipe, session, JAPANESE) == 1
        assert _js(pipe, session, "document.querySelector('p.doc-title cite').textContent") == JAPANESE


#: Each <cite> of the page: [its text, its computed font-style].
CITES = """JSON.stringify([...document.querySelectorAll('main cite')].map((c) => [c.textContent.trim(),
  getComputedStyle(c).fontStyle]))"""


def test_a_title_in_chinese_japanese_or_korean_is_not_slanted(site: tuple[str, dict[str, str]]) -> None:
    # these scripts have no italic: a browser asked for one slants each glyph (a synthetic oblique); a Latin title
    # is italic as a cited title is (but in the search's hits, which are all upright and bold)
    base, names = site
    with devtools() as pipe:
        cites: list[list[str]] = []
        for key in ("japanese", "chinese", "korean"):
            session = _open(pipe, f"{base}/view?pdi={_q(names[key])}", 1100, f"polish-cite-{key}.png")
            cites += json.loads(str(_js(pipe, session, CITES)))
        session = _open(pipe, f"{base}/search?q=minutes", 1100, "polish-cite-search.png")
        hits = json.loads(str(_js(pipe, session, CITES)))
        session = _open(pipe, f"{base}/view?pdi={_q(names['withdrawn'])}", 1100, "polish-cite-tombstone.png")
        tombstone = json.loads(str(_js(pipe, session, CITES)))
        session = _open(pipe, f"{base}/view?pdi={_q(names['minutes'])}", 1100, "polish-cite-latin.png")
        latin = json.loads(str(_js(pipe, session, CITES)))
    assert sorted(c[0] for c in cites) == sorted([JAPANESE, CHINESE, KOREAN])
    assert {c[0] for c in hits} >= {JAPANESE, CHINESE, KOREAN, "Minutes of the board"}, hits
    assert [c[0] for c in tombstone] == [JAPANESE]
    for text, style in cites + hits + tombstone:  # the search's hits are upright, a Latin title's too
        assert style == "normal", (text, style)
    assert latin == [["Minutes of the board", "italic"]]
