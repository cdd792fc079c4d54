"""The pages of the archive's own faults (5xx), headed in a reader's words, opened in Chromium at 1100 and 390 px.

A refusal's page (4xx) was headed in plain words (*Cannot show this: too large to show here*); a fault's still said
its problem's title: *Cannot show this: stored octets damaged*, *storage error*, *remote error*, *internal server
error*, *not implemented*. Each is headed in plain words too, and so is its tab; the RFC 9457 answers keep their
titles (``stored octets damaged``, ``Not Implemented``), which programs tell the errors apart by.

Provoked for real where a reader meets them on a served archive: octets damaged as bit rot damages them (one bit
of the stored blob flipped, with plain file and SQLite operations: ``support.stored_blobs``), an RFC 2169 service
the resolver does not offer (``N2Rs``, RFC 2169 §3: ``501``). A catalog gone under the resolver is
``test_server_store_error_places.py``'s (a PostgreSQL cluster halted). The rest (a registry that cannot be read, a
bug, the resolver too busy, another server answering wrongly), which no request of a reader's brings about at will,
are the pages the resolver renders for them, opened in Chromium as served (a ``data:`` URL of the same octets).
"""

from __future__ import annotations

import base64
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
from pdi.archive import Archive
from pdi.capture.browser import devtools
from pdi.server.pages import problem_pages
from support.stored_blobs import flip_octet

S = "records.example.us"
DAY = datetime.datetime(2026, 11, 30, 9, 0, tzinfo=datetime.UTC)
RULING = b"The appeal is dismissed.\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    root: Path = tmp_path_factory.mktemp("fault-pages")
    with Archive.init(root / "archive", clock=lambda: DAY) as archive:
        archive.add_series(S)
        name = str(archive.add(S, RULING, format="text"))
        sha = archive.get(name).record.sha256
    flip_octet(root / "archive", sha, 4)  # "The appeal" read "The!appeal": its SHA-256 no longer the one recorded
    with serving(root / "archive") as (_, port):
        yield port, name


#: A problem page's heading, the line under it, its alert, and the tab's title.
PROBLEM = ("{h1: document.querySelector('.problem h1').innerText,"
           " status: document.querySelector('.problem p.status').innerText,"
           " alert: document.querySelector('.problem [role=alert]').innerText, tab: document.title}")


@pytest.mark.parametrize("width", [1100, 390])
def test_damaged_octets_are_headed_in_plain_words_their_problem_keeping_its_title(
    served: tuple[int, str], width: int
) -> None:
    port, name = served
    view = f"http://127.0.0.1:{port}/view?pdi={urllib.parse.quote(name, safe='')}"
    with devtools() as pipe:
        seen = json.loads(_shown(pipe, view, width, f"fault-damaged-{width}.png", check=PROBLEM))
    assert (seen["h1"], seen["status"], seen["tab"]) == (
        "Cannot show this: the archive's copy of it is damaged", "A fault of the archive's — HTTP 500",
        f"The archive's copy of it is damaged: {name}"), seen
    answer = httpx.get(f"http://127.0.0.1:{port}/api/resolve", params={"pdi": name})  # a program's: as before
    assert answer.status_code == 500 and answer.headers["content-type"] == "application/problem+json", answer.text
    assert (answer.json()["title"], answer.json()["type"]) == ("stored octets damaged",
                                                               "/api#problem-stored-octets-damaged")


@pytest.mark.parametrize("width", [1100, 390])
def test_damaged_octets_cited_by_n2r_are_headed_so_too(served: tuple[int, str], width: int) -> None:
    port, name = served
    with devtools() as pipe:  # a browser follows a citation's N2R address: the page, not the problem
        seen = json.loads(_shown(pipe, f"http://127.0.0.1:{port}/uri-res/N2R?{name}", width,
                                 f"fault-damaged-n2r-{width}.png", check=PROBLEM))
    assert seen["h1"] == "Cannot show this: the archive's copy of it is damaged", seen


@pytest.mark.parametrize("width", [1100, 390])
def test_a_service_not_offered_is_headed_in_plain_words(served: tuple[int, str], width: int) -> None:
    port, name = served
    # RFC 2169 §3's N2Rs (a list of the name's resources): a service this resolver does not offer
    n2rs = f"http://127.0.0.1:{port}/uri-res/N2Rs?{name}"
    with devtools() as pipe:
        seen = json.loads(_shown(pipe, n2rs, width, f"fault-not-offered-{width}.png", check=PROBLEM))
    assert (seen["h1"], seen["status"], seen["tab"]) == (
        "Cannot show this: not a service this archive offers", "Not offered here — HTTP 501",
        f"Not a service this archive offers: {name}"), seen
    assert seen["alert"] == "This resolver does not offer the RFC 2169 service N2Rs.", seen
    answer = httpx.get(n2rs)  # curl's */*: the problem, titled with HTTP's phrase (RFC 9457 §4.2.1, about:blank)
    assert answer.status_code == 501 and answer.json()["title"] == "Not Implemented", answer.text


#: Pages no reader's request brings about at will: (file, status, the page as the resolver renders it, its heading
#: after "Cannot show this: ", the line under it).
NAME = f"urn:pdi://{S}/2026/11/30/1.text.1"
RENDERED = {
    "storage": (lambda: problem_pages.render_problem(None, errors.StoreError("the catalog's socket: refused"), NAME),  # type: ignore[arg-type]
                "the archive cannot read it just now", "Unavailable for now — HTTP 503"),
    "remote": (lambda: problem_pages.render_problem(None, errors.RemoteError("the peer answered 500"), NAME),  # type: ignore[arg-type]
               "another server did not answer as it should", "Another archive answered wrongly — HTTP 502"),
    "bug": (lambda: problem_pages.render_refused(None, 500, "Internal Server Error",
                                                 "the resolver failed on this request (KeyError)", NAME),
            "something went wrong in the archive", "A fault of the archive's — HTTP 500"),
    "busy": (lambda: problem_pages.render_refused(None, 503, "Service Unavailable", "the resolver is busy: no place"
                                                  " for this request came free within 5 s", NAME),
             "not available just now", "Unavailable for now — HTTP 503"),
    "timeout": (lambda: problem_pages.render_refused(None, 504, "Gateway Timeout", "the peer took too long", NAME),
                "another archive took too long", "Another archive took too long — HTTP 504"),
}


@pytest.mark.parametrize("width", [1100, 390])
@pytest.mark.parametrize("page", list(RENDERED))
def test_a_faults_page_is_headed_in_plain_words(page: str, width: int) -> None:
    render, words, status = RENDERED[page]
    octets = render().encode()
    with devtools() as pipe:
        seen = json.loads(_shown(pipe, "data:text/html;base64," + base64.b64encode(octets).decode(), width,
                                 f"fault-{page}-{width}.png", check=PROBLEM))
    assert (seen["h1"], seen["status"], seen["tab"]) == (
        f"Cannot show this: {words}", status, f"{words[0].upper()}{words[1:]}: {NAME}"), seen
    # a storage error's page never says where the archive keeps its parts (its message is the server's log's)
    assert "socket" not in octets.decode() and "refused" not in seen["alert"], seen


@pytest.mark.parametrize("kind", [errors.DamagedError, errors.StoreError, errors.CommitUnknownError,
                                  errors.ReplicaBehindError, errors.RemoteError], ids=lambda kind: kind.__name__)
def test_no_faults_page_is_headed_by_its_problems_title(kind: type[errors.PDIError]) -> None:
    error = kind.__new__(kind)
    errors.PDIError.__init__(error, "what went wrong")
    page = html5lib.parse(problem_pages.render_problem(None, error, NAME), namespaceHTMLElements=False)  # type: ignore[arg-type]
    heading = page.find(".//h1")
    assert heading is not None and heading.text is not None and heading.text.startswith("Cannot show this: ")
    words = heading.text.removeprefix("Cannot show this: ")
    assert words.lower() != kind.title.lower() and words[0].islower(), (kind, words)
    assert kind.http_status >= 500


@pytest.mark.parametrize("status", [500, 501, 502, 503, 504, 507, 508])
def test_every_5xx_refusal_is_said_in_words_not_in_https_phrase(status: int) -> None:
    # the phrases RFC 9110 §15.6 gives these statuses, as an about:blank problem is titled
    phrase = {500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
              504: "Gateway Timeout", 507: "Insufficient Storage", 508: "Loop Detected"}[status]
    words = problem_pages.refusal_words(status, phrase)
    assert words and words != phrase.lower() and words[0].islower() and not words.endswith("."), words
