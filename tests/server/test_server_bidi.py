"""A depositor's bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and the rest) cannot reorder the pages.

An archive holds a capture of ``http://evil.example/<RLO>lmth.exe/`` (which a
page printing it as it is shows as ``http://evil.example//exe.html``), a text
titled and credited with an override inside, and an e-mail whose Subject and
From hold one. Chromium opens each page, and the text is read back in the
order the browser lays it out (each character's place on the line): a URL
reads as written, its controls percent-encoded; what follows a title, a
creator or a subject reads in its own order; the ``<title>`` holds no control.
Each page is saved as a screenshot.
"""

from __future__ import annotations

import base64
import datetime
import email.header
import time
import urllib.parse
from collections.abc import Iterator

import httpx
import pytest
from server_helpers import Clock, S, with_replay
from test_server_pages_screenshots import SHOTS

from chromium_helpers import evaluate, laid_out, open_page
from pdi.archive import Archive, Content
from pdi.capture.browser import Pipe, devtools

RLO = "\u202e"
EVIL = f"http://evil.example/{RLO}lmth.exe/"
#: The URL as a browser's address bar shows it: the override percent-encoded (UTF-8), the rest as written.
EVIL_SHOWN = "http://evil.example/%E2%80%AElmth.exe/"
TITLE = f"Minutes {RLO}of the board"
CREATOR = f"Clerk {RLO}of the court"
SUBJECT = f"Re: {RLO}minutes of the board"
SENDER = f"Ann {RLO}Example <ann@example.org>"


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def _message(subject: str, sender: str) -> bytes:
    return (
        f"From: {email.header.Header(sender.split(' <')[0], 'utf-8').encode()} <ann@example.org>\r\n"
        f"To: board@example.org\r\nSubject: {email.header.Header(subject, 'utf-8').encode()}\r\n"
        "Date: Fri, 20 Nov 2026 09:00:00 +0000\r\nMessage-ID: <m1@example.org>\r\n\r\nThe minutes.\r\n"
    ).encode("ascii")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """A resolver (and its replay origin) over the archive of the module's docstring: its URL and the names."""
    root = tmp_path_factory.mktemp("bidi")
    clock = Clock(datetime.datetime(2026, 11, 20, 9, 0, tzinfo=datetime.UTC))
    with Archive.init(root / "archive", clock=clock) as archive:
        archive.add_series(S)
        capture = str(archive.add(S, b"<!DOCTYPE html><title>Exe</title><p>zebra crossing</p>", format="html",
                                  foreign_id=EVIL))
        text = str(archive.add(S, b"The minutes of the board.\n", format="text"))
        generic = text.rsplit(".", 2)[0]
        archive.add_version(generic, [Content(b"The minutes of the board, corrected.\n", "text")])
        archive.annotate(generic, "title", TITLE)
        archive.annotate(generic, "creator", CREATOR)
        draft = str(archive.add(S, b"A draft.\n", format="text")).rsplit(".", 2)[0]
        archive.annotate(draft, "title", f"Draft {RLO}of the minutes")
        archive.add_version(draft, [Content(b"A second draft.\n", "text")])
        archive.withdraw(f"{draft}.text.2", "deposited by mistake")
        mail = str(archive.add(S, _message(SUBJECT, SENDER), format="rfc822"))
    names = {"capture": capture, "capture-document": capture.rsplit(".", 2)[0], "text": text, "document": generic,
             "mail": mail}
    with with_replay(str(root / "archive")) as (url, _):
        yield url, names


def _bare(text: str) -> str:
    """``text`` without its white space, as :func:`chromium_helpers.laid_out` reads a page."""
    return "".join(text.split())


def _opened(pipe: Pipe, url: str, shot: str) -> str:
    """``url`` opened at 1280 × 800 and saved as the screenshot ``shot``: the tab's session."""
    session = open_page(pipe, url)
    size = {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False}
    pipe.call("Emulation.setDeviceMetricsOverride", size, session, time.monotonic() + 30)
    png = base64.b64decode(pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)["data"])
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"{shot}.png").write_bytes(png)
    return session


def test_a_captures_url_reads_as_written_its_controls_percent_encoded(site: tuple[str, dict[str, str]]) -> None:
    base, names = site
    with devtools() as pipe:
        # the replayed page's banner: the URL, then when it was captured, both in the order written
        session = _opened(pipe, f"{base}/view?pdi={_q(names['capture'])}", "bidi-capture-banner")
        assert laid_out(pipe, session, ".replay-banner h1 .url") == EVIL_SHOWN
        assert laid_out(pipe, session, ".replay-banner h1").startswith(_bare(f"{EVIL_SHOWN} captured 2026-11-20 09:00:00 UTC"))
        # and the page itself in its frame, from the replay origin (labelled with its URL as a URI: no 500)
        frame = evaluate(pipe, session, "document.querySelector('iframe').src")
        replayed = httpx.get(frame, timeout=30)
        assert replayed.status_code == 200 and b"zebra crossing" in replayed.content, replayed.text[:300]
        # its source in the viewer, headed the same way
        session = _opened(pipe, f"{base}/view?pdi={_q(names['capture'])}&view=source", "bidi-capture-source")
        assert laid_out(pipe, session, "main h1").startswith(_bare(f"{EVIL_SHOWN} captured 2026-11-20 09:00:00 UTC"))
        # the document's page: its heading, its id, the link to every capture of it
        session = _opened(pipe, f"{base}/view?pdi={_q(names['capture-document'])}", "bidi-capture-document")
        assert laid_out(pipe, session, "main h1") == EVIL_SHOWN
        assert laid_out(pipe, session, "nav.crumbs li[aria-current=page]") == EVIL_SHOWN
        assert laid_out(pipe, session, "main p a[href^='/captures?'] code") == EVIL_SHOWN
        # the captures of the URL, and a search's hit in it
        session = _opened(pipe, f"{base}/captures?url={_q(EVIL)}", "bidi-captures")
        assert laid_out(pipe, session, "main h1") == _bare(f"Captures of {EVIL_SHOWN}")
        session = _opened(pipe, f"{base}/search?q=zebra", "bidi-search")
        assert laid_out(pipe, session, "ol.hits a .capture-title").startswith(_bare(f"{EVIL_SHOWN} captured 2026-11-20"))


def test_a_days_page_after_a_capture_names_its_url_as_the_table_does(site: tuple[str, dict[str, str]]) -> None:
    """The day's next page says which id the page before ended with (its ``after``, the unique id the table's
    "Next page" link carries): the capture's URL, its control percent-encoded as the table's row shows it."""
    base, _ = site
    with devtools() as pipe:
        session = _opened(pipe, f"{base}/series/{S}/2026/11/20?after={_q(EVIL)}&limit=1", "bidi-series-day-after")
        assert laid_out(pipe, session, "main h1 + p code") == EVIL_SHOWN


def test_a_browsers_fragment_after_a_resolvers_address_reads_as_typed(site: tuple[str, dict[str, str]]) -> None:
    """A resolver's address pasted back with a browser's ``#…`` after it: the page names that fragment as left out,
    its override percent-encoded as an address bar shows it, so it reads in the order typed."""
    base, names = site
    address = f"{base}/uri-res/N2R?{names['text']}#char={RLO}7,12"
    with devtools() as pipe:
        session = _opened(pipe, f"{base}/view?pdi={_q(address)}", "bidi-browsers-fragment")
        assert laid_out(pipe, session, "main p.grammar + p > code") == "#char=%E2%80%AE7,12"  # the hint


def test_a_title_and_a_subject_cannot_reorder_what_follows(site: tuple[str, dict[str, str]]) -> None:
    base, names = site
    with devtools() as pipe:
        # the series' day: the title of the draft, then that its latest version was withdrawn, in that order
        session = _opened(pipe, f"{base}/series/{S}/2026/11/20", "bidi-series-day")
        cells = evaluate(pipe, session, "[...document.querySelectorAll('#documents tbody td:nth-child(2)')]"
                                   ".map((td, i) => td.querySelector('.withdrawn') ? i : -1).filter((i) => i >= 0)")
        assert len(cells) == 1
        cell = laid_out(pipe, session, f"#documents tbody tr:nth-child({cells[0] + 1}) td:nth-child(2)")
        assert cell.startswith("Draft") and cell.endswith(_bare("latest version withdrawn")), cell
        # the mail's thread: its subject, then its sender, date and id, in that order
        session = _opened(pipe, f"{base}/thread?pdi={_q(names['mail'])}", "bidi-thread")
        line = laid_out(pipe, session, "ol.thread li.this .this-message")
        assert line.startswith("Re:") and "—Ann" in line, line
        assert line.endswith(_bare(", Fri, 20 Nov 2026 09:00:00 +0000 <m1@example.org> (this message)")), line
        # a title's page: the title as the depositor wrote it (isolated), then the banner of an old version
        session = _opened(pipe, f"{base}/view?pdi={_q(names['text'])}", "bidi-old-version")
        assert laid_out(pipe, session, "p.doc-title").startswith(_bare("Title: Minutes"))
        _opened(pipe, f"{base}/view?pdi={_q(names['document'])}", "bidi-document")
        _opened(pipe, f"{base}/view?pdi={_q(names['mail'])}", "bidi-mail")


def test_a_pages_title_holds_no_bidi_control(site: tuple[str, dict[str, str]]) -> None:
    base, names = site
    titles = {  # what a tab, the history and a bookmark show: the text in its order, the controls left out
        f"/view?pdi={_q(names['text'])}": f"Minutes of the board — {names['text']}",
        f"/view?pdi={_q(names['document'])}": "Minutes of the board",
        f"/captures?url={_q(EVIL)}": f"Captures of {EVIL_SHOWN}",
    }
    with devtools() as pipe:
        for path, title in titles.items():
            assert evaluate(pipe, open_page(pipe, base + path), "document.title") == title
        for path in (f"/view?pdi={_q(names['capture'])}", f"/thread?pdi={_q(names['mail'])}",
                     f"/view?pdi={_q(names['mail'])}"):
            assert RLO not in evaluate(pipe, open_page(pipe, base + path), "document.title"), path


def test_shown_url_encodes_each_bidi_control_and_nothing_else() -> None:
    from pdi.server.pages.layout import BIDI_CONTROLS, shown_url

    controls = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    assert "".join(ch for ch in map(chr, range(0x110000)) if BIDI_CONTROLS.fullmatch(ch)) == controls
    for ch in controls:  # as the browser percent-encodes the same character in a URL's path
        assert shown_url(f"http://x/{ch}") == "http://x/" + urllib.parse.quote(ch.encode("utf-8"))
    assert shown_url("http://例え.jp/ä?q=שלום") == "http://例え.jp/ä?q=שלום"
