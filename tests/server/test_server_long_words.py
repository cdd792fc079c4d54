"""A long word a depositor wrote (3,000 characters without a space) breaks inside its own box, at every width.

A title, a creator statement, a mail's subject and a captured URL, each one
word of 3,000 characters, made the pages that show them tens of thousands of
pixels wide (the catalogue's tables let a word break only on a phone's
screen). Chromium opens each page at 1280 and at 390 CSS pixels: none
scrolls sideways, and the word stands within the window. Each page is saved
as a screenshot at 1280.
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
from pdi.capture.browser import devtools

TITLE = "T" + "itle" * 750
CREATOR = "C" + "reator" * 500
SUBJECT = "S" + "ubject" * 500
URL = "http://long.example/" + "u" * 3000


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """A resolver over an archive of a text titled and credited with long words, a mail whose subject is one, and a
    capture of a long URL: its URL and the pages to open (what each is -> its path and the element holding the word)."""
    root = tmp_path_factory.mktemp("long-words")
    clock = Clock(datetime.datetime(2026, 11, 20, 9, 0, tzinfo=datetime.UTC))
    with Archive.init(root / "archive", clock=clock) as archive:
        archive.add_series(S)
        text = str(archive.add(S, b"The minutes of the board.\n", format="text"))
        generic = text.rsplit(".", 2)[0]
        archive.add_version(generic, [Content(b"The minutes of the board, corrected.\n", "text")])
        archive.annotate(generic, "title", TITLE)
        archive.annotate(generic, "creator", CREATOR)
        mail = str(archive.add(S, f"From: ann@example.org\r\nSubject: {SUBJECT}\r\nDate: Fri, 20 Nov 2026 09:00:00"
                                  " +0000\r\nMessage-ID: <m1@example.org>\r\n\r\nThe minutes.\r\n".encode(), format="rfc822"))
        capture = str(archive.add(S, b"<!DOCTYPE html><p>minutes</p>", format="html", foreign_id=URL))
    pages = {
        "long-words-document": (f"/view?pdi={_q(generic)}", "h1"),
        "long-words-statements": (f"/view?pdi={_q(generic)}", "#statements td.value"),
        "long-words-series-day": (f"/series/{S}/2026/11/20", "#documents tbody td:nth-child(2)"),
        "long-words-version": (f"/view?pdi={_q(text)}", "p.doc-title cite"),
        "long-words-search": ("/search?q=minutes", "ol.hits cite"),
        "long-words-thread": (f"/thread?pdi={_q(mail)}", "ol.thread .this-message"),
        "long-words-mail": (f"/view?pdi={_q(mail)}", "dl.message"),
        "long-words-capture-day": (f"/series/{S}/2026/11/20", "#documents tbody td:first-child code"),
        "long-words-capture": (f"/view?pdi={_q(capture.rsplit('.', 2)[0])}", "main h1"),
    }
    with with_replay(str(root / "archive")) as (url, _):
        yield url, {what: json.dumps(where) for what, where in pages.items()}


@pytest.mark.parametrize("width", [1280, 390])
def test_a_long_word_breaks_inside_its_box_and_no_page_scrolls_sideways(site: tuple[str, dict[str, str]],
                                                                        width: int) -> None:
    base, pages = site
    wide = {}
    with devtools() as pipe:
        for shot, where in pages.items():
            path, selector = json.loads(where)
            session = open_page(pipe, base + path)
            deadline = time.monotonic() + 30
            size = {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": width < 600}
            pipe.call("Emulation.setDeviceMetricsOverride", size, session, deadline)
            measured = pipe.call("Runtime.evaluate", {"returnByValue": True, "expression": (
                "JSON.stringify({page: document.documentElement.scrollWidth, window: document.documentElement.clientWidth,"
                f" box: [...document.querySelectorAll({json.dumps(selector)})].map((e) => {{"
                " const text = document.createRange(); text.selectNodeContents(e); return text.getBoundingClientRect(); })"
                ".reduce((far, box) => Math.max(far, box.right), 0),"
                f" words: [...document.querySelectorAll({json.dumps(selector)})].map((e) => e.textContent)"
                ".join(' ').split(/\\s+/).reduce((most, w) => Math.max(most, w.length), 0)})")}, session, deadline)
            if width == 1280:  # the word's box in view (the last of several: a table's last row)
                pipe.call("Runtime.evaluate", {"expression": f"[...document.querySelectorAll({json.dumps(selector)})]"
                                                             ".pop().scrollIntoView({block: 'center'})"}, session, deadline)
                png = pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)["data"]
                SHOTS.mkdir(parents=True, exist_ok=True)
                (SHOTS / f"{shot}.png").write_bytes(base64.b64decode(png))
            found = json.loads(measured["result"]["value"])
            assert found["words"] >= 3000, (shot, found)  # the word is on the page, whole
            if found["page"] > found["window"] or found["box"] > found["window"]:
                wide[shot] = found
    assert wide == {}, f"at {width} px: {wide}"
