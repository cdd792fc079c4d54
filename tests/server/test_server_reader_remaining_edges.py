"""The reader's pages' remaining rough edges, opened in Chromium and shot at 1100 and 390 px.

* A document's Versions list and a tombstone show each format as the media type its token names
  (``image/svg+xml``), not as a name spells the token (``svg%2Bxml``), as a day's table does; the name itself is
  shown exactly as it is.
* A refusal (4xx) other than a syntax error is headed in plain words too (*Cannot show this: too large to show
  here*), not by its problem's title (*limit exceeded*), which the problem+json answers keep for programs.
* A private (or hidden) series' pages — the series, a year, a month, a day — say *Not open to everyone* to a
  signed-in reader who may read them, as a document's page does; a reader without a token is refused them as
  before (403; a hidden series' answered as a series never registered, 404) and learns nothing of their documents.

Expected values are worked out here: the media types from PDI-GRAMMAR.md's decision 6 (``text`` is text/plain,
``svg%2Bxml`` the media type image/svg+xml, ``utf-16`` text/plain in UTF-16), the names as deposited.
"""

from __future__ import annotations

import datetime
import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import html5lib
import httpx
import pytest
from server_helpers import serving
from test_server_reader_walk_browser import _shown

from pdi import errors
from pdi.archive import Archive, Content
from pdi.capture.browser import devtools
from pdi.server.pages import problem_pages
from support.tiff import tiff_chain

S = "records.example.us"
CLOSED = "closed.example.us"
SECRET = "secret.example.us"
DAY = datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.UTC)
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str, dict[str, str]]]:
    root: Path = tmp_path_factory.mktemp("remaining-edges")
    with Archive.init(root / "archive", clock=lambda: DAY) as archive:
        for series in (S, CLOSED, SECRET):
            archive.add_series(series)
        archive.set_series_access(CLOSED, "private")
        archive.set_series_access(SECRET, "hidden")
        drawing = archive.add(S, SVG, format="svg%2Bxml", force=True)
        generic = str(drawing).rsplit(".", 2)[0]
        second = archive.add_version(generic, [Content(SVG, "svg%2Bxml"), Content("A drawing.\n".encode("utf-16"),
                                                                                  "utf-16")], force=True)
        names = {
            "drawing": generic, "v1": str(drawing), "v2": str(second[0]), "v2-text": str(second[1]),
            "gone": str(archive.add(S, SVG, format="svg%2Bxml", force=True)),
            "pages": str(archive.add(S, tiff_chain(5_010), format="tiff")),
            "text": str(archive.add(S, b"Plain words.\n", format="text")),
            "closed": str(archive.add(CLOSED, b"A sealed court minute.\n", format="text")),
            "closed-sealed": str(archive.add(CLOSED, b"Sealed twice over.\n", format="text")),
            "secret": str(archive.add(SECRET, b"Not even its series is told.\n", format="text")),
        }
        archive.withdraw(names["gone"], "Deposited in error.")
        archive.embargo(names["closed-sealed"].rsplit(".", 2)[0], "2099-01-01")
        _, token = archive.add_token("reader", role="read")
    with serving(root / "archive") as (_, port):
        yield port, token, names


def _view(port: int, name: str) -> str:
    return f"http://127.0.0.1:{port}/view?pdi={urllib.parse.quote(name, safe='')}"


# --- 1. formats as media types -----------------------------------------------------------------------------------

#: Each row of the Versions list: its number, and each format's link text, tooltip and the name beside it.
VERSIONS = ("[...document.querySelectorAll('#versions tbody tr')].map((r) => [r.cells[0].innerText,"
            " [...r.cells[2].querySelectorAll('li')].map((li) => [li.querySelector('a').innerText,"
            " li.querySelector('a').title, li.querySelector('code.name').innerText])])")


@pytest.mark.parametrize("width", [1100, 390])
def test_a_documents_versions_list_shows_formats_as_media_types(
    served: tuple[int, str, dict[str, str]], width: int
) -> None:
    port, _, names = served
    with devtools() as pipe:
        rows = json.loads(_shown(pipe, _view(port, names["drawing"]), width, f"remaining-versions-{width}.png",
                                 check=VERSIONS))
    assert rows == [
        ["1", [["image/svg+xml", f"format svg%2Bxml: {names['v1']}", names["v1"]]]],
        ["2", [["image/svg+xml", f"format svg%2Bxml: {names['v2']}", names["v2"]],
               ["text/plain utf-16", f"format utf-16: {names['v2-text']}", names["v2-text"]]]],
    ], rows
    assert names["v1"].endswith(".svg%2Bxml.1")  # the name as deposited, shown whole beside its media type


#: The tombstone's table: each row's format cell, its tooltip; and the name as the tombstone states it.
TOMBSTONE = ("{rows: [...document.querySelectorAll('#withdrawn tbody tr')].map((r) => [r.cells[1].innerText,"
             " r.cells[1].title]), named: document.querySelector('dl.tombstone dd code').innerText}")


@pytest.mark.parametrize("width", [1100, 390])
def test_a_tombstone_shows_its_format_as_a_media_type(served: tuple[int, str, dict[str, str]], width: int) -> None:
    port, _, names = served
    with devtools() as pipe:
        seen = json.loads(_shown(pipe, _view(port, names["gone"]), width, f"remaining-tombstone-{width}.png",
                                 check=TOMBSTONE))
    assert seen == {"rows": [["image/svg+xml", "format svg%2Bxml"]], "named": names["gone"]}, seen


# --- 2. a refusal's heading in plain words -----------------------------------------------------------------------

#: A problem page's heading, the line under it, and the tab's title.
PROBLEM = ("{h1: document.querySelector('.problem h1').innerText,"
           " status: document.querySelector('.problem p.status').innerText, tab: document.title}")


@pytest.mark.parametrize("width", [1100, 390])
def test_a_limits_page_is_headed_in_plain_words_its_problem_keeping_its_title(
    served: tuple[int, str, dict[str, str]], width: int
) -> None:
    port, _, names = served
    with devtools() as pipe:
        seen = json.loads(_shown(pipe, _view(port, names["pages"]), width, f"remaining-limit-{width}.png",
                                 check=PROBLEM))
    assert seen == {"h1": "Cannot show this: too large to show here",
                    "status": "This cannot be answered as asked — HTTP 400",
                    "tab": f"Too large to show here: {names['pages']}"}, seen


@pytest.mark.parametrize("width", [1100, 390])
def test_an_unsupported_fragments_page_is_headed_in_plain_words(
    served: tuple[int, str, dict[str, str]], width: int
) -> None:
    port, _, names = served
    asked = names["text"] + "#frobnicate=1"  # a scheme no evaluator of text/plain reads
    with devtools() as pipe:
        seen = json.loads(_shown(pipe, _view(port, asked), width, f"remaining-unsupported-{width}.png", check=PROBLEM))
    assert seen["h1"] == "Cannot show this: not something this archive can do", seen
    assert seen["tab"] == f"Not something this archive can do: {asked}", seen
    # a program's problem keeps its title, and its type
    answer = httpx.get(f"http://127.0.0.1:{port}/api/resolve", params={"pdi": asked})
    assert answer.status_code == 400 and answer.headers["content-type"] == "application/problem+json", answer.text
    assert (answer.json()["title"], answer.json()["type"]) == ("unsupported", "/api#problem-unsupported")


@pytest.mark.parametrize("width", [1100, 390])
def test_a_passage_past_the_end_by_n2r_is_headed_in_plain_words(
    served: tuple[int, str, dict[str, str]], width: int
) -> None:
    port, _, names = served
    # "Plain words.\n" is 13 octets, 14 characters stored CRLF: characters 100 to 200 are wholly past its end
    n2r = f"http://127.0.0.1:{port}/uri-res/N2R?{names['text']}%23char=100,200"
    with devtools() as pipe:
        seen = json.loads(_shown(pipe, n2r, width, f"remaining-past-end-{width}.png", check=PROBLEM))
    assert seen == {"h1": "Cannot show this: the passage is past the document's end",
                    "status": "Past the end of the document — HTTP 416",
                    "tab": f"The passage is past the document's end: {names['text']}#char=100,200"}, seen
    answer = httpx.get(n2r)  # curl's */*: the problem, titled with HTTP's phrase (RFC 9457 §4.2.1, about:blank)
    assert answer.status_code == 416 and answer.json()["title"] == "Range Not Satisfiable", answer.text


def _error_classes() -> list[type[errors.PDIError]]:
    found, todo = [], [errors.PDIError]
    while todo:
        kind = todo.pop()
        found.append(kind)
        todo += kind.__subclasses__()
    return [kind for kind in found if kind.__module__ == "pdi.errors"]


@pytest.mark.parametrize("kind", _error_classes(), ids=lambda kind: kind.__name__)
def test_every_refusals_heading_is_in_plain_words_not_its_problems_title(kind: type[errors.PDIError]) -> None:
    # a refusal's (4xx), and the archive's own fault's (5xx) too: test_server_fault_pages.py
    error = kind.__new__(kind)
    errors.PDIError.__init__(error, "what went wrong")
    words = problem_pages.heading_words(error)
    assert words and words != kind.title and words == words.strip(), (kind, words)
    assert words[0].islower() and not words.endswith("."), words  # after "Cannot show this: ", as one sentence


def test_the_generic_error_page_is_headed_by_its_words_and_the_problem_by_its_title() -> None:
    page = html5lib.parse(problem_pages.render_problem(None, errors.LimitError("past a limit")),  # type: ignore[arg-type]
                          namespaceHTMLElements=False)
    heading = page.find(".//h1")
    assert heading is not None and heading.text == "Cannot show this: too large to show here"
    assert errors.LimitError.title == "limit exceeded"  # what the problem+json answers say, as before


# --- 3. a private series' pages, to a signed-in reader ---------------------------------------------------------------

NOTE = "document.querySelector('#access')?.innerText ?? null"

#: The note on a private series' pages (innerText leaves out the quotation marks <q> draws); its day's, which
#: marks a document under embargo as well.
PRIVATE = (f"Not open to everyone: this series, {CLOSED}, is private. You read its pages and documents with your"
           " token; a reader without one is refused them (Not open to you), so a link to one opens only for those"
           " who may read it.")
PRIVATE_DAY = PRIVATE.replace("is private.", "is private, and 1 document of this page is under embargo as well"
                              " (marked below).")


@pytest.mark.parametrize("width", [1100, 390])
@pytest.mark.parametrize(("page", "said"), [
    (f"/series/{CLOSED}/2026/11/30", PRIVATE_DAY),
    (f"/series/{CLOSED}", PRIVATE),
    (f"/series/{CLOSED}/2026", PRIVATE),
    (f"/series/{CLOSED}/2026/11", PRIVATE),
], ids=["day", "series", "year", "month"])
def test_a_private_series_pages_say_not_open_to_everyone_to_a_signed_in_reader(
    served: tuple[int, str, dict[str, str]], page: str, said: str, width: int
) -> None:
    port, token, _ = served
    which = page.count("/") - 2
    with devtools() as pipe:
        note = json.loads(_shown(pipe, f"http://127.0.0.1:{port}{page}", width,
                                 f"remaining-private-{['series', 'year', 'month', 'day'][which]}-{width}.png", token,
                                 check=NOTE))
    assert note == said, note


@pytest.mark.parametrize("width", [1100, 390])
def test_a_hidden_series_day_says_what_a_reader_without_a_token_is_answered(
    served: tuple[int, str, dict[str, str]], width: int
) -> None:
    port, token, _ = served
    with devtools() as pipe:
        note = json.loads(_shown(pipe, f"http://127.0.0.1:{port}/series/{SECRET}/2026/11/30", width,
                                 f"remaining-hidden-day-{width}.png", token, check=NOTE))
    assert note == (f"Not open to everyone: this series, {SECRET}, is hidden. You read its pages and documents with"
                    " your token; a reader without one is answered that they are not in this archive, so a link to"
                    " one opens only for those who may read it."), note


def test_a_public_series_pages_say_nothing_of_access(served: tuple[int, str, dict[str, str]]) -> None:
    port, token, _ = served
    for page in (f"/series/{S}", f"/series/{S}/2026", f"/series/{S}/2026/11", f"/series/{S}/2026/11/30"):
        answer = httpx.get(f"http://127.0.0.1:{port}{page}", cookies={"pdi-token": token})
        assert answer.status_code == 200 and 'id="access"' not in answer.text, page


@pytest.mark.parametrize("width", [1100, 390])
def test_a_reader_without_a_token_learns_nothing_of_a_private_series_documents(
    served: tuple[int, str, dict[str, str]], width: int
) -> None:
    port, _, names = served
    serials = [names[k].rsplit("/", 1)[1].split(".")[0] for k in ("closed", "closed-sealed")]
    for page in (f"/series/{CLOSED}", f"/series/{CLOSED}/2026", f"/series/{CLOSED}/2026/11",
                 f"/series/{CLOSED}/2026/11/30"):
        answer = httpx.get(f"http://127.0.0.1:{port}{page}", headers={"accept": "text/html"})
        main = answer.text.split("<main", 1)[1]
        assert answer.status_code == 403, (page, answer.status_code)
        assert 'id="access"' not in main and "/view?pdi=" not in main and "embargo" not in main, page
        assert not any(f"/{serial}." in main for serial in serials), page
    with devtools() as pipe:  # what the reader sees: how to sign in
        text = _shown(pipe, f"http://127.0.0.1:{port}/series/{CLOSED}/2026/11/30", width,
                      f"remaining-private-anonymous-{width}.png")
    assert text.startswith("A token is needed to read this"), text


def test_a_reader_without_a_token_is_answered_of_a_hidden_series_as_of_one_never_registered(
    served: tuple[int, str, dict[str, str]],
) -> None:
    port, _, _ = served
    never = "never.example.us"
    for tail in ("", "/2026", "/2026/11", "/2026/11/30"):
        hidden = httpx.get(f"http://127.0.0.1:{port}/series/{SECRET}{tail}", headers={"accept": "text/html"})
        unknown = httpx.get(f"http://127.0.0.1:{port}/series/{never}{tail}", headers={"accept": "text/html"})
        assert hidden.status_code == unknown.status_code == 404, tail
        assert hidden.text.replace(SECRET, never) == unknown.text, tail
