"""Reader pages at the widths between a phone's and a desktop's, opened in Chromium.

* At 1100 px the Formats table cut ``text/html`` into ``text/`` over ``html``: a media type short enough to stand
  whole (24 characters, ``application/octet-stream``) does, as the viewer's facts and a search's hits write it.
* At 320 px a problem type's heading on ``/api`` broke at its own hyphens (``/api#problem-passage-`` over
  ``orphaned``, a word hyphenated to a reader, who copies the type to match it); it breaks only before a hyphen,
  so that no line ends in one, and copies as written.

Expected values are worked out here, not read from the pages: the media types the formats stand for (RFC 6838's
registry, as ``formats`` maps them), the problem types the API's answers are typed with.
"""


import datetime
import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from pdi.archive import Archive, Content
from pdi.capture.browser import devtools
from server_helpers import serving
from support.stored_blobs import flip_octet
from test_server_reader_walk_browser import _shown

from pdi import formats
from pdi.server.pages.api_docs import problem_types

S = "records.example.us"
#: A series whose first label (44 characters) is longer than a card's line on a phone.
CHILD = "court-of-appeal-and-administrative-tribunals." + S
#: A capture's URL, the id of the document deposited under it.
URL = "https://www.courts.example.us/rulings/2026/appeal-4211.html"
#: A word processor's media type (71 characters) and the longest one a table's cell keeps whole (24).
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
OCTETS = "application/octet-stream"
NOTE = ("Read into the record at the hearing of 30 November 2026 by counsel for the appellant, who asked that it"
        " be cited as it stands.")
REASON = "Deposited in error: a duplicate of the court's own copy."


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, dict[str, str]]]:
    root: Path = tmp_path_factory.mktemp("tablet-widths")
    now = [datetime.datetime(2024, 3, 5, 9, 0, tzinfo=datetime.UTC)]
    with Archive.init(root / "archive", clock=lambda: now[0]) as archive:
        archive.add_series(S)
        archive.add_series(CHILD, parent=S)
        archive.add(S, b"The first ruling.\n", format="text")  # 2024-03
        now[0] = datetime.datetime(2025, 7, 14, 9, 0, tzinfo=datetime.UTC)
        archive.add(CHILD, b"A tribunal's ruling.\n", format="text")  # 2025-07, in the child
        now[0] = datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.UTC)
        ruling = archive.add(S, b"The appeal is dismissed.\n", format="text")
        generic = str(ruling).rsplit(".", 2)[0]
        archive.add_version(generic, [Content(b"The appeal is dismissed, with costs.\n", "text"),
                                      Content(b"PK\x03\x04 a word processor's file", formats.token_for(DOCX)),
                                      Content(b"\x00\x01 the court's own octets", formats.token_for(OCTETS))],
                            force=True)
        archive.annotate(generic, "title", "A ruling of the court of appeal")
        archive.annotate(generic, "x.court_reference_number", "CV-2026-004211")
        archive.annotate(f"{ruling}#char=4,10", "dcterms:description", NOTE)
        captured = archive.add(S, b"<p>The ruling as published.</p>", format="html", foreign_id=URL)
        archive.annotate(f"{captured}#char=3,10", "note", NOTE)
        archive.annotate(generic, "relation", str(captured))
        gone = archive.add(S, b"A duplicate of the appeal's ruling.\n", format="text")
        archive.withdraw(str(gone), REASON)
        damaged = archive.add(S, b"A ruling the disk damaged.\n", format="text")
        sha = archive.get(str(damaged)).record.sha256
        archive.verify()
    flip_octet(root / "archive", sha, 4)  # one bit flipped as bit rot flips it: its SHA-256 no longer the one kept
    with serving(root / "archive") as (_, port):
        yield port, {"ruling": generic, "captured": str(captured).rsplit(".", 2)[0], "gone": str(gone),
                     "damaged": str(damaged)}


def _view(name: str) -> str:
    return "/view?pdi=" + urllib.parse.quote(name, safe="")


#: The Formats table's Media type cells: each one's text, class and how many lines it takes; how far the page
#: scrolls sideways.
MEDIA = """[[...document.querySelectorAll('#formats code.media')].map((code) => { const range = document.createRange();
  range.selectNodeContents(code);
  return [code.textContent, code.className, new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size];
  }), document.scrollingElement.scrollWidth - document.documentElement.clientWidth]"""


@pytest.mark.parametrize("width", [1100, 1280])
@pytest.mark.parametrize("page", ["document", "captured"])
def test_a_short_media_type_in_formats_stands_whole(served: tuple[int, dict[str, str]], page: str, width: int) -> None:
    # 1100 px: text/html, in the Formats table beside a SHA-256, was cut text/ above html; one of at most 24
    # characters stands whole, a longer one (the word processor's) wraps after its / and before a dot
    port, names = served
    with devtools() as pipe:
        media, sideways = json.loads(_shown(pipe, f"http://127.0.0.1:{port}{_view(names[page.replace('document', 'ruling')])}",
                                            width, f"tablet-formats-{page}-{width}.png", check=MEDIA))
    expected = (["text/plain", "text/plain", DOCX, OCTETS] if page == "document" else ["text/html"])
    assert sorted(text for text, _, _ in media) == sorted(expected), media  # a version's formats in the table's order
    for text, kind, lines in media:
        if len(text) <= 24:
            assert (kind, lines) == ("media whole", 1), media
    assert sideways <= 0, sideways


#: Each problem type's heading on /api: its text as a selection of it reads (what a copy takes) and as it is, and
#: its lines (the text of each, by where its characters are drawn); how far the page scrolls sideways. The heading
#: of ``problem-passage-orphaned`` scrolled into view (for the screenshot).
PROBLEM_HEADINGS = """[[...document.querySelectorAll('main section > h3 code')].map((code) => {
  const range = document.createRange(); range.selectNodeContents(code);
  const picked = getSelection(); picked.removeAllRanges(); picked.addRange(range); const copied = picked.toString();
  picked.removeAllRanges();
  const walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT), lines = [];
  let top = null;
  for (let node = walk.nextNode(); node; node = walk.nextNode())
    for (let i = 0; i < node.data.length; i++) {
      const one = document.createRange(); one.setStart(node, i); one.setEnd(node, i + 1);
      const box = [...one.getClientRects()].find((r) => r.width > 0), at = box ? Math.round(box.top) : top;
      if (at !== top || !lines.length) { lines.push(''); top = at; }
      lines[lines.length - 1] += node.data[i]; }
  if (code.textContent.endsWith('-passage-orphaned')) code.scrollIntoView({block: 'center'});  // for the screenshot
  return [copied, code.textContent, lines]; }),
  document.scrollingElement.scrollWidth - document.documentElement.clientWidth]"""


@pytest.mark.parametrize("width", [320, 390])
def test_a_problem_types_heading_breaks_only_before_a_hyphen(served: tuple[int, dict[str, str]], width: int) -> None:
    # 320 px: /api#problem-passage-orphaned broke after its second hyphen, "/api#problem-passage-" above "orphaned",
    # which reads as a word hyphenated; it breaks only before a hyphen, each piece whole, and copies as written
    port, _ = served
    with devtools() as pipe:
        shown, sideways = json.loads(_shown(pipe, f"http://127.0.0.1:{port}/api", width,
                                            f"tablet-api-problems-{width}.png", check=PROBLEM_HEADINGS))
    expected = {f"/api#{key}" for key in problem_types()}
    assert "/api#problem-passage-orphaned" in expected
    assert {text for _, text, _ in shown} == expected, shown
    for copied, text, lines in shown:
        assert copied == text, (copied, text)  # nothing put into it
        assert "".join(lines) == text, lines
        assert not any(line.endswith("-") for line in lines), lines  # no line ends in a hyphen
        assert all(line.startswith("-") for line in lines[1:]), lines  # a line breaks before one, nowhere else
    if width == 320:  # it does wrap there, before a hyphen
        assert ["/api#problem-passage", "-orphaned"] in [lines for _, text, lines in shown
                                                         if text == "/api#problem-passage-orphaned"], shown
    assert sideways <= 0, sideways
