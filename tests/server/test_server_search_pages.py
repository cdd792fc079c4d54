"""The search page's pages of hits in Chromium: each page's "Next results" link leads on by the count of hits
shown before it (``after=``), never a catalog number or a score; the last page has no link; a later page links
the first ("« First results"), as the catalogue's pages do.

Three public texts hold "otter", one, two and three times in texts of equal length (so any ranking puts the
one with three first), and a hidden series holds more; a stranger walks the pages a hit at a time by
clicking the link, and each page is saved as a screenshot.
"""

from __future__ import annotations

import base64
import datetime
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from server_helpers import Clock, S, with_replay
from test_server_pages_screenshots import SHOTS

from chromium_helpers import navigate_and_wait_for_load, open_page
from pdi.archive import Archive
from pdi.capture.browser import Pipe, devtools


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    root = tmp_path_factory.mktemp("search-pages")
    with Archive.init(root / "archive", clock=Clock(datetime.datetime(2026, 11, 20, 9, tzinfo=datetime.UTC))) as archive:
        archive.add_series(S)
        archive.add_series("sealed.example.us")
        archive.set_series_access("sealed.example.us", "hidden")
        names = []
        for i in (1, 2, 3):
            archive.add("sealed.example.us", f"sealed otter otter {i}".encode(), format="text")
            names.append(str(archive.add(S, f"{'otter ' * i}{'river ' * (4 - i)}bank".encode(), format="text")))
    with with_replay(str(root / "archive")) as (url, _):
        yield url, names


def _js(pipe: Pipe, session: str, expression: str) -> Any:
    answer = pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session,
                       time.monotonic() + 30)
    assert "exceptionDetails" not in answer, answer
    return answer["result"].get("value")


def _shot(pipe: Pipe, session: str, name: str) -> None:
    png = base64.b64decode(pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)["data"])
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"{name}.png").write_bytes(png)


def _open_wide(pipe: Pipe, url: str) -> str:
    """``url`` open in a new tab 1100 by 700 pixels: its session."""
    session = open_page(pipe, url)
    pipe.call("Emulation.setDeviceMetricsOverride",
              {"width": 1100, "height": 700, "deviceScaleFactor": 1, "mobile": False}, session, time.monotonic() + 30)
    return session


def test_next_results_walk_the_hits_by_their_count(site: tuple[str, list[str]]) -> None:
    base, names = site
    with devtools() as pipe:
        session = _open_wide(pipe, f"{base}/search?q=otter&limit=1")
        seen = []
        for page in (1, 2, 3):
            _shot(pipe, session, f"search-page-{page}")
            seen.append(_js(pipe, session, "document.querySelector('ol.hits a').getAttribute('href')"))
            assert _js(pipe, session, "document.querySelector('ol.hits').start") == page  # numbered on across pages
            following = _js(pipe, session, "document.querySelector('a[rel=next]') && document.querySelector('a[rel=next]').href")
            if page == 3:
                assert following is None  # the last page: no link on
                break
            assert urllib.parse.parse_qs(urllib.parse.urlsplit(following).query)["after"] == [str(page)]
            navigate_and_wait_for_load(pipe, session, following, time.monotonic() + 30)
    # every public text once, the one with "otter" most often first; nothing of the hidden series
    assert [urllib.parse.unquote(h).split("pdi=")[1].split("#")[0] for h in seen] == names[::-1]


def test_a_later_page_of_hits_leads_back_to_the_first(site: tuple[str, list[str]]) -> None:
    # the catalogue's later pages link their first ("« First page"); a reader deep in the hits had only Back
    base, names = site
    with devtools() as pipe:
        session = _open_wide(pipe, f"{base}/search?q=otter&limit=1")
        first = "document.querySelector('nav.pages a[rel=first]')"
        assert _js(pipe, session, first) is None  # the first page: nothing to go back to
        navigate_and_wait_for_load(pipe, session, f"{base}/search?q=otter&limit=1&after=2", time.monotonic() + 30)
        _shot(pipe, session, "search-page-last")
        assert _js(pipe, session, "document.querySelector('a[rel=next]')") is None
        back = _js(pipe, session, f"[{first}.textContent, {first}.href]")
        assert back[0] == "« First results"
        navigate_and_wait_for_load(pipe, session, back[1], time.monotonic() + 30)
        hit = _js(pipe, session, "document.querySelector('ol.hits a').getAttribute('href')")
        start = _js(pipe, session, "document.querySelector('ol.hits').start")
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(back[1]).query) == {"q": ["otter"], "limit": ["1"]}
    # the first page again: numbered from 1, the text holding "otter" most often first
    assert start == 1 and urllib.parse.unquote(hit).split("pdi=")[1].split("#")[0] == names[2]


def test_the_two_search_landmarks_are_named_apart(site: tuple[str, list[str]]) -> None:
    # The header's search form and the search page's own are both landmarks of role "search": a screen reader's
    # list of landmarks names each (Chromium's accessibility tree, as a screen reader is given it).
    base, _ = site
    with devtools() as pipe:
        session = open_page(pipe, f"{base}/search?q=otter")
        pipe.call("Accessibility.enable", None, session, time.monotonic() + 30)
        nodes = pipe.call("Accessibility.getFullAXTree", None, session, time.monotonic() + 30)["nodes"]
        names = [n.get("name", {}).get("value", "") for n in nodes if n.get("role", {}).get("value") == "search"]
    assert len(names) == 2 and all(names) and len(set(names)) == 2, names


#: The search form's parts: [[each label's first line's top], [[top, bottom] of the words' box, the series' list
#: and the Search button]], in CSS px.
FORM_ROWS = """(() => { const form = document.querySelector('main form.search');
  const tops = [...form.querySelectorAll('label')].map((l) => { const r = document.createRange();
    r.selectNodeContents(l.firstChild); return r.getBoundingClientRect().top; });
  const controls = [...form.querySelectorAll('input:not([type=hidden]), select, button')]
    .map((c) => [c.getBoundingClientRect().top, c.getBoundingClientRect().bottom]);
  return [tops, controls]; })()"""


def test_the_search_forms_labels_and_controls_stand_in_line(site: tuple[str, list[str]]) -> None:
    # 1100 px: "Words" and "Series" on one line, and the words' box, the series' list and the Search button
    # one height on one line (the list was 6 px shorter than the box, its label 5 px lower, the button lower still)
    base, _ = site
    with devtools() as pipe:
        session = _open_wide(pipe, f"{base}/search?q=otter")
        tops, controls = _js(pipe, session, FORM_ROWS)
        _shot(pipe, session, "search-form-in-line")
    assert len(tops) == 2 and len(controls) == 3, (tops, controls)
    assert abs(tops[0] - tops[1]) <= 1, tops
    assert all(abs(c[0] - controls[0][0]) <= 1 and abs(c[1] - controls[0][1]) <= 1 for c in controls), controls
