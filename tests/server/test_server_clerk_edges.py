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
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from server_helpers import Clock, with_replay
from test_server_keyboard import _js
from test_server_page_polish import _sized
from test_server_pdf_viewer import _shoot

from pdi.archive import Archive
from pdi.capture.browser import devtools

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
