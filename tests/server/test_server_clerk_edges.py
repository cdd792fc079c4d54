"""Rough edges a court clerk met in the reader's app on a first walk through it (docs/how-to/court-record.md), each
measured in Chromium or read from the page:

- a document's statements table broke its Key column inside a word ("sourc" and "e" beside a long ``source``
  value), at 1100 px and at 375 px, and its Formats table "text/pla" and "in";
- every error page said "HTTP 410" (or its status) under its heading, which a reader does not follow;
- the e-mail page of ``#part=N`` marked a text attachment in the list but did not show its words;
- the PDF's and the e-mail's Cite panels said "line breaks CR and LF, an FF between pages".

Screenshots: ``clerk-edges-….png``.
"""

from __future__ import annotations

import datetime
import re
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import html5lib
import pytest
from server_helpers import Clock, with_replay
from test_server_keyboard import _contrast, _js
from test_server_page_polish import _sized
from test_server_pages_screenshots import dark
from test_server_pdf_viewer import _shoot

from pdi.archive import Archive
from pdi.capture.browser import devtools
from pdi.server.pages.problem_pages import render_refused, render_unavailable

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
S = "court.example.fr"

#: The how-to's title of the attachment deposited alone (step 5): a long value beside the key ``title``.
TITLE = "Delivery schedule, attachment of exhibit A"

#: A message with text attachments of three kinds, a picture, and one text attachment of 70,000 octets (past the
#: 64 KiB the page shows): ``<b>`` in the CSV to be shown as written, not as markup.
CSV = "item,count\r\nchairs,400\r\n<b>tables</b>,40\r\n"
NOTES = "# Notes\n\nThe *chairs* arrive on **Monday**; the tables — élan — later.\n"
LONG = "".join(f"{n:06d} one line of an annex\n" for n in range(2_500))  # 2,500 lines of 28 octets: 70,000
MESSAGE = (
    "From: Clerk <clerk@court.example.fr>\r\nTo: registry@court.example.fr\r\nSubject: Exhibit B\r\n"
    "Message-ID: <exhibit-b@court.example.fr>\r\nDate: Sun, 29 Nov 2026 10:00:00 +0100\r\nMIME-Version: 1.0\r\n"
    'Content-Type: multipart/mixed; boundary="BB"\r\n\r\n'
    "--BB\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe annexes are attached.\r\n"
    '--BB\r\nContent-Type: text/csv; charset=utf-8\r\nContent-Disposition: attachment; filename="items.csv"\r\n\r\n'
    f"{CSV}\r\n"
    '--BB\r\nContent-Type: text/markdown; charset=utf-8\r\nContent-Disposition: attachment; filename="notes.md"\r\n'
    f"Content-Transfer-Encoding: 8bit\r\n\r\n{NOTES}\r\n"
    '--BB\r\nContent-Type: image/png\r\nContent-Disposition: attachment; filename="seal.png"\r\n'
    "Content-Transfer-Encoding: base64\r\n\r\niVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==\r\n"
    '--BB\r\nContent-Type: text/plain; charset=us-ascii\r\nContent-Disposition: attachment; filename="annex.txt"\r\n\r\n'
    f"{LONG}\r\n--BB--\r\n"
).encode()


class Clerks(NamedTuple):
    url: str
    exhibit: str  # examples/exhibit-a.eml
    attachment: str  # its schedule deposited alone, with its title and source
    message: str  # MESSAGE
    judgement: str  # examples/judgement.pdf


@pytest.fixture(scope="module")
def clerks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clerks]:
    root: Path = tmp_path_factory.mktemp("clerk")
    clock = Clock(datetime.datetime(2026, 11, 29, 10, 0, tzinfo=datetime.UTC))
    with Archive.init(root / "archive", clock=clock) as archive:
        archive.add_series(S)
        judgement = str(archive.add(S, (EXAMPLES / "judgement.pdf").read_bytes(), format="pdf"))
        exhibit = str(archive.add(S, (EXAMPLES / "exhibit-a.eml").read_bytes(), format="rfc822"))
        attachment = str(archive.add(S, b"Item 1: 400 chairs, delivered Monday\nItem 2: 40 tables\n", format="text"))
        archive.annotate(attachment, "title", TITLE)
        archive.annotate(attachment, "source", exhibit + "#part=1")
        message = str(archive.add(S, MESSAGE, format="rfc822"))
    with with_replay(str(root / "archive")) as (url, _):
        yield Clerks(url, exhibit, attachment, message, judgement)


def _view(clerks: Clerks, name: str) -> str:
    return f"{clerks.url}/view?pdi={urllib.parse.quote(name, safe='')}"


# --- a statement's key stands on one line -----------------------------------------------------------------------------

#: Each key of the statements table: its text and how many lines its text takes (the tops of a Range over it); the
#: media types and charsets of the Formats table, each with the words a line break cuts; and how far the page
#: scrolls sideways.
KEYS = """(() => { const lines = (cell) => { const range = document.createRange(); range.selectNodeContents(cell);
    return new Set([...range.getClientRects()].map((b) => Math.round(b.top))).size; };
  return [[...document.querySelectorAll('#statements tbody tr')].map((r) => [r.children[1].textContent, lines(r.children[1])]),
          [...document.querySelectorAll('#formats code.media, #formats span.charset')].map((c) => {
            const cut = [], text = c.textContent, walk = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
            for (let node = walk.nextNode(); node; node = walk.nextNode()) for (const m of node.data.matchAll(/[a-z0-9]+/gi)) {
              const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
              if (new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size > 1) cut.push(m[0]); }
            return [text, cut]; }),
          document.documentElement.scrollWidth - document.documentElement.clientWidth]; })()"""


@pytest.mark.parametrize("width", [1100, 375])
def test_a_statements_key_never_breaks_inside_a_word(clerks: Clerks, width: int) -> None:
    with devtools() as pipe:
        session = _sized(pipe, _view(clerks, clerks.attachment.rsplit(".", 2)[0]), width, 900)
        _js(pipe, session, "document.getElementById('statements').scrollIntoView()")
        keys, media, sideways = _js(pipe, session, KEYS)
        _shoot(pipe, session, f"clerk-edges-statements-{width}.png")
    assert keys == [["title", 1], ["source", 1]], keys
    # the Formats table beside it broke "text/pla|in" and "utf-|8" alike
    assert media == [["text/plain", []], ["utf-8", []]], media  # no word of them cut (text/ | plain is no cut)
    assert sideways <= 0, sideways


# --- an error page's status, in words -----------------------------------------------------------------------------------

#: The line under an error page's heading, by status: a reader's words, then the code for the technical reader.
SAID = {404: "Not found", 410: "Withdrawn", 403: "Not open to you", 400: "This cannot be answered as asked",
        416: "Past the end of the document", 405: "Not a way this address is read", 500: "A fault of the archive's",
        503: "Unavailable for now", 508: "Sent round in a loop"}


def _status(page: str) -> tuple[str, str]:
    """The words of an error page's status line and its code's."""
    tree = html5lib.parse(page, namespaceHTMLElements=False)
    line = tree.find(".//div[@class='problem']/p[@class='status']")
    assert line is not None, page
    code = line.find("span[@class='code']")
    assert code is not None, page
    return (line.text or "").strip(), "".join(code.itertext())


@pytest.mark.parametrize("status", [503, 508])
def test_a_federations_error_page_says_its_status_in_words(status: int) -> None:
    said, code = _status(render_unavailable("every resolver of it is down", "urn:pdi://x.example.us/2026/11/29/1.text.1",
                                            status))
    assert (said, code) == (SAID[status], f"— HTTP {status}")


@pytest.mark.parametrize("status", [416, 405, 500, 400])
def test_a_refusals_page_says_its_status_in_words(status: int) -> None:
    said, code = _status(render_refused(None, status, "refused", "it was refused", ""))
    assert (said, code) == (SAID[status], f"— HTTP {status}")


def test_a_status_without_words_of_its_own_says_https_phrase() -> None:
    assert _status(render_refused(None, 418, "teapot", "a teapot", "")) == ("I'm a Teapot", "— HTTP 418")


def test_the_status_code_is_quieter_than_its_words_light_and_dark(clerks: Clerks) -> None:
    shown = """(() => { const line = document.querySelector('.problem .status'), code = line.querySelector('.code');
      return [line.firstChild.textContent.trim(), code.textContent, getComputedStyle(line).color,
              getComputedStyle(code).color, getComputedStyle(document.body).backgroundColor.replace('rgba(0, 0, 0, 0)',
                'rgb(255, 255, 255)'),  // nothing painted: the light scheme's white canvas
              parseFloat(getComputedStyle(line).fontSize), parseFloat(getComputedStyle(code).fontSize)]; })()"""
    with devtools() as pipe:
        session = _sized(pipe, f"{clerks.url}/view?pdi={urllib.parse.quote('urn:pdi://' + S + '/2026/11/29/99.text.1')}",
                         1100, 600)
        light = _js(pipe, session, shown)
        _shoot(pipe, session, "clerk-edges-not-found.png")
        dark(pipe, session, time.monotonic() + 30)
        shaded = _js(pipe, session, shown)
        _shoot(pipe, session, "clerk-edges-not-found-dark.png")
    for said, code, colour, quiet, background, size, small in (light, shaded):
        assert (said, code) == ("Not found", "— HTTP 404"), (said, code)
        assert small < size, (small, size)  # quieter: smaller
        assert 4.5 <= _contrast(quiet, background) < _contrast(colour, background), (quiet, colour, background)


# --- a text part's words ------------------------------------------------------------------------------------------------

#: The part's text shown (the ``<pre>``'s), its heading, the note past the bound and its link's address.
PART = """(() => { const pre = document.getElementById('part-text'), cut = document.getElementById('part-cut');
  return [pre && pre.textContent, pre && document.getElementById('part-text-h').textContent,
          cut && cut.textContent, cut && cut.querySelector('a').getAttribute('href'),
          document.documentElement.scrollWidth - document.documentElement.clientWidth]; })()"""


@pytest.mark.parametrize(("part", "kind", "words"), [
    (1, "text/csv", CSV), (2, "text/markdown", NOTES),
])
def test_the_page_of_a_text_part_shows_its_words(clerks: Clerks, part: int, kind: str, words: str) -> None:
    with devtools() as pipe:
        session = _sized(pipe, _view(clerks, f"{clerks.message}#part={part}"), 1100, 900)
        _js(pipe, session, "document.getElementById('part-text').scrollIntoView()")
        shown, heading, cut, _, sideways = _js(pipe, session, PART)
        _shoot(pipe, session, f"clerk-edges-part-{part}.png")
    assert shown == words.replace("\r\n", "\n"), shown  # as written: "<b>" is text (a CR LF is one line end in HTML)
    assert heading == f"The text of part {part} ({kind})" and cut is None and sideways <= 0, (heading, cut)


def test_the_page_of_the_exhibits_attachment_shows_its_words_at_375(clerks: Clerks) -> None:
    schedule = (EXAMPLES / "exhibit-a.eml").read_bytes().split(b'filename="schedule.txt"')[1].split(b"\n\n", 1)[1]
    with devtools() as pipe:
        session = _sized(pipe, _view(clerks, f"{clerks.exhibit}#part=1"), 375, 900)
        shown, _, cut, _, sideways = _js(pipe, session, PART)
        _js(pipe, session, "document.getElementById('part-text').scrollIntoView()")
        _shoot(pipe, session, "clerk-edges-part-exhibit-375.png")
    assert shown is not None and schedule.decode().startswith(shown.replace("\r\n", "\n").rstrip("\n")), shown
    assert "400 chairs" in shown and cut is None and sideways <= 0, (shown, cut, sideways)


def test_a_long_text_part_shows_its_first_64_kib_and_links_to_it_whole(clerks: Clerks) -> None:
    with devtools() as pipe:
        session = _sized(pipe, _view(clerks, f"{clerks.message}#part=4"), 1100, 900)
        shown, _, cut, href, _ = _js(pipe, session, PART)
        whole = _js(pipe, session, f"fetch({href!r}).then((r) => r.text())")
        _js(pipe, session, "document.getElementById('part-cut').scrollIntoView()")
        _shoot(pipe, session, "clerk-edges-part-long.png")
    assert len(LONG) == 70_000
    assert shown == LONG[:65_536], len(shown)
    assert cut == "The first 64 KiB of its 70,000 bytes (68.4 KiB) are shown: fetch it whole.", cut
    assert whole == LONG, len(whole)  # the link fetches the part whole (RFC 2169 N2R of NAME#part=4)


def test_the_page_of_a_part_that_is_no_text_shows_no_text(clerks: Clerks) -> None:
    with devtools() as pipe:
        session = _sized(pipe, _view(clerks, f"{clerks.message}#part=3"), 1100, 700)
        shown, *_ = _js(pipe, session, PART)
        marked = _js(pipe, session, "document.querySelector('ul.parts li.chosen').textContent")
    assert shown is None and "image/png" in marked, (shown, marked)


@pytest.mark.parametrize("streamed", [False, True])
def test_a_text_parts_words_are_the_same_read_whole_or_by_the_messages_structure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: bool
) -> None:
    """A message past :data:`pdi.mail.large.STREAMED_FROM` is read by its structure: its text part's first 64 KiB
    are decoded from its verified chunks (``Archive.locate_message_part``), and shown as a small message's are."""
    from starlette.testclient import TestClient

    from pdi.server import create_app

    with Archive.init(tmp_path / "a", clock=lambda: datetime.datetime(2026, 11, 29, tzinfo=datetime.UTC)) as archive:
        archive.add_series(S)
        name = str(archive.add(S, MESSAGE, format="rfc822"))
        if streamed:
            monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
        with TestClient(create_app(archive.location, archive=archive)) as client:
            shown = {}
            for part in (1, 2, 4):
                answer = client.get("/view", params={"pdi": f"{name}#part={part}"}, headers={"Accept": "text/html"})
                assert answer.status_code == 200, answer.text
                tree = html5lib.parse(answer.text, namespaceHTMLElements=False)
                pre, cut = tree.find(".//pre[@id='part-text']"), tree.find(".//p[@id='part-cut']")
                assert pre is not None, answer.text
                shown[part] = ("".join(pre.itertext()), cut is not None)
            if streamed:  # the page was made from the message's structure (its parts' sizes as written listed)
                assert "as written" in answer.text
    # the parser drops a <pre>'s first line end, the page writes one for it; a CR LF is one line end in HTML
    assert shown == {1: (CSV.replace("\r\n", "\n"), False), 2: (NOTES, False), 4: (LONG[:65_536], True)}, shown


# --- the Cite panels' words ---------------------------------------------------------------------------------------------

#: The Cite panel's hint, as read, and where its "how" link leads.
HINT = """(() => { const hint = document.querySelector('.cite .hint'), how = hint.querySelector('a[href^="/api#"]');
  return [hint.innerText, how && how.getAttribute('href')]; })()"""


@pytest.mark.parametrize("page", ["pdf", "email", "text"])
def test_a_cite_panel_says_what_is_counted_in_plain_words_and_links_the_rule(clerks: Clerks, page: str) -> None:
    name = {"pdf": clerks.judgement, "email": clerks.exhibit, "text": clerks.attachment}[page]
    with devtools() as pipe:
        session = _sized(pipe, _view(clerks, name), 1100, 800)
        if page == "pdf":
            from test_server_pdf_viewer import _until

            assert _until(pipe, session, "document.querySelector('[data-ready]')"), "pdf.js did not start"
        hint, how = _js(pipe, session, HINT)
        _js(pipe, session, "document.querySelector('.cite').scrollIntoView()")
        _shoot(pipe, session, f"clerk-edges-cite-{page}.png")
        session = _sized(pipe, clerks.url + how, 1100, 800)
        rule = _js(pipe, session, "document.getElementById('counting').innerText")
        _shoot(pipe, session, "clerk-edges-counting.png")
    assert not re.search(r"\b(CR|LF|FF|CRLF)\b", hint), hint  # no control characters' names in a reader's words
    assert "line ends" in hint and "characters" in hint, hint
    if page == "pdf":
        assert "page turns" in hint and "from page 1" in hint, hint
    if page == "email":
        assert "body text" in hint, hint
    assert how == "/api#counting", how
    # the precise rule stays, one link away
    assert "CR LF" in rule and "form feed" in rule and "half-open" in rule, rule
