"""RFC 2169's refusals to a browser: a page of the app, as the viewer's errors are; to every other client, the problem.

A citation printed as ``http://HOST/uri-res/N2R?urn:pdi://…`` is followed in
a browser, whose ``Accept`` prefers ``text/html`` (Chromium's navigation:
``text/html,…,*/*;q=0.8``): a refusal of it (a name not held, withdrawn, a
name that does not parse, a fragment wholly past the end, a service not
offered) is the app's error page (:mod:`pdi.server.pages.problem_pages`),
with the status the problem has. ``curl``'s ``*/*``, no ``Accept``, a client
asking for JSON (or weighing it as high as HTML) get the RFC 9457 problem as
before; a ``HEAD`` gets the header fields its ``GET`` would (RFC 9110 §9.3.2). Either form names ``Accept`` in its ``Vary`` (RFC
9110 §12.5.5), beside ``Authorization, Cookie``, so that no cache gives one
reader's form to another. Pages are parsed with html5lib; what is checked on
them is the deposited name, the catalog's record of a withdrawal and the
text's own length.
"""

from __future__ import annotations

import datetime
import http.client
import json
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import html5lib
import pytest
from hypothesis import given
from hypothesis import strategies as st
from server_helpers import on_own_protocol
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app

S = "library.example.us"
CLOSED = "closed.example.us"
NOW = datetime.datetime(2026, 11, 25, 10, 0, tzinfo=datetime.UTC)
#: What Chromium sends when it follows a link.
CHROMIUM = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
HTML = {"Accept": CHROMIUM}
MISSING = f"urn:pdi://{S}/2026/11/25/99.text.1"
TEXT = b"Thirteen char"  # 13 characters


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    opened = Archive.init(tmp_path / "archive", clock=lambda: NOW)
    opened.add_series(S)
    opened.add_series(CLOSED)
    opened.set_series_access(CLOSED, "private")
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def client(archive: Archive) -> TestClient:
    return TestClient(create_app(archive.location, archive=archive))


def _varies(answer: object) -> set[str]:
    """The field names an answer's ``Vary`` lists, lower-cased (RFC 9110 §12.5.5: a comma-separated list)."""
    fields = answer.headers.get_list("vary")  # type: ignore[attr-defined]
    return {f.strip().lower() for value in fields for f in value.split(",") if f.strip()}


def _page(client: TestClient, url: str, status: int) -> ET.Element:
    answer = client.get(url, headers=HTML)
    assert answer.status_code == status, answer.text[:500]
    assert answer.headers["content-type"] == "text/html; charset=utf-8", url
    assert {"accept", "authorization", "cookie"} <= _varies(answer), answer.headers
    page = html5lib.parse(answer.text, namespaceHTMLElements=False)
    assert len(page.findall(".//h1")) == 1, url
    assert "/" in _links(page), url  # a way back: the archive's home
    return page


def _text(element: ET.Element | None) -> str:
    assert element is not None
    return " ".join("".join(element.itertext()).split())


def _links(page: ET.Element) -> list[str]:
    return [a.get("href", "") for a in page.iter("a")]


def _view(name: str) -> str:
    return "/view?pdi=" + urllib.parse.quote(name, safe="")


@pytest.mark.parametrize("service", ["N2R", "I2R", "N2L", "N2Ls", "N2C", "N2Ns"])
def test_a_browser_following_a_missing_names_address_sees_the_apps_404_page(client: TestClient, service: str) -> None:
    page = _page(client, f"/uri-res/{service}?{MISSING}", 404)
    assert _text(page.find(".//h1")) == "Not in this archive"
    assert f"{MISSING} is not in this archive" in _text(page.find(".//p[@class='error']"))
    box = page.find(".//input[@id='site-pdi']")  # the name, in the box to correct it
    assert box is not None and box.get("value") == MISSING
    assert _text(page.find(".//title")) == f"Not found: {MISSING}"


@pytest.mark.parametrize("accept", [None, "*/*", "application/json", "application/problem+json",
                                    "text/html;q=0.5, application/json", "text/html, application/json",
                                    "text/html;q=0.8, application/problem+json;q=0.9"])
def test_every_other_client_keeps_the_problem_json(client: TestClient, accept: str | None) -> None:
    answer = client.get(f"/uri-res/N2R?{MISSING}", headers={} if accept is None else {"Accept": accept})
    assert answer.status_code == 404 and answer.headers["content-type"] == "application/problem+json"
    problem = answer.json()
    assert (problem["type"], problem["title"], problem["status"]) == ("/api#problem-not-found", "not found", 404)
    assert problem["detail"].startswith(f"{MISSING} is not in this archive")
    assert {"accept", "authorization", "cookie"} <= _varies(answer)


def test_a_head_gets_the_header_fields_its_get_gets_and_no_content(client: TestClient, archive: Archive) -> None:
    """RFC 9110 §9.3.2: the server SHOULD send the same header fields in answer to a HEAD as to the GET (a
    browser's HEAD the page's, a program's the problem's), and no content."""
    for service in ("N2R", "N2C", "N2Ls"):
        for accept, kind in ((HTML, "text/html; charset=utf-8"), ({"Accept": "*/*"}, "application/problem+json")):
            head = client.head(f"/uri-res/{service}?{MISSING}", headers=accept)
            get = client.get(f"/uri-res/{service}?{MISSING}", headers=accept)
            assert head.status_code == get.status_code == 404
            assert head.headers["content-type"] == get.headers["content-type"] == kind
            assert "accept" in _varies(head) and head.content == b""
    with on_own_protocol(create_app(archive.location), public=True) as url:
        host, port = urllib.parse.urlsplit(url).netloc.split(":")
        answers = []
        for method in ("GET", "HEAD"):
            connection = http.client.HTTPConnection(host, int(port), timeout=30)
            connection.request(method, f"/uri-res/N2R?{MISSING}", headers=HTML)
            answer = connection.getresponse()
            answers.append((answer.status, answer.getheader("content-type"), answer.getheader("content-length"),
                            answer.read()))
            connection.close()
        (got, got_kind, got_length, page), (head_status, head_kind, head_length, nothing) = answers
        assert got == head_status == 404 and got_kind == head_kind == "text/html; charset=utf-8"
        assert got_length == head_length == str(len(page)) and nothing == b"" and b"<h1" in page


def test_a_withdrawn_name_is_its_tombstone(client: TestClient, archive: Archive) -> None:
    name = str(archive.add(S, TEXT, format="text"))
    archive.withdraw(name, "deposited by mistake")
    page = _page(client, f"/uri-res/N2R?{name}", 410)
    assert _text(page.find(".//h1")) == "This name was withdrawn"
    assert "deposited by mistake" in _text(page.find(".//dl[@class='tombstone']"))
    assert client.get(f"/uri-res/N2R?{name}").json()["status"] == 410  # a program: the problem


def test_a_name_whose_hash_is_escaped_twice_links_the_name_meant(client: TestClient, archive: Archive) -> None:
    name = str(archive.add(S, TEXT, format="text"))
    page = _page(client, f"/uri-res/N2R?{name}%2523char=0,5", 400)  # %25 is a %: the name holds %23, no '#'
    assert _view(f"{name}#char=0,5") in _links(page)
    assert "did you mean" not in _text(page.find(".//main"))  # the page says it its own way (Perhaps you meant)
    assert "Perhaps you meant" in _text(page.find(".//main"))


def test_a_fragment_wholly_past_the_end_is_a_416_page_that_links_the_document(
    client: TestClient, archive: Archive,
) -> None:
    name = str(archive.add(S, TEXT, format="text"))
    page = _page(client, f"/uri-res/N2R?{name}%23char=999,1200", 416)
    said = _text(page.find(".//p[@class='error']"))
    assert "#char=999,1200 lies wholly past the end (the text has 13 characters)" in said
    assert _view(name) in _links(page)
    assert client.get(f"/uri-res/N2R?{name}%23char=999,1200").json()["status"] == 416


def test_a_fragment_naming_nothing_in_the_document_is_a_404_page_that_links_it(
    client: TestClient, archive: Archive,
) -> None:
    name = str(archive.add(S, b"<p id='a'>one</p>", format="html"))
    page = _page(client, f"/uri-res/N2R?{name}%23name=nowhere,nowhere", 404)
    assert _text(page.find(".//h1")) == "Not in this document"
    assert _view(name) in _links(page)


def test_a_private_name_says_how_to_sign_in_and_comes_back_to_the_address(
    client: TestClient, archive: Archive,
) -> None:
    name = str(archive.add(CLOSED, b"closed minutes\n", format="text"))
    page = _page(client, f"/uri-res/N2R?{name}", 403)
    signin = [h for h in _links(page) if h.startswith("/signin?")]
    assert signin and urllib.parse.parse_qs(urllib.parse.urlsplit(signin[0]).query)["next"] == [f"/uri-res/N2R?{name}"]


def test_a_service_not_offered_and_a_path_of_no_service_are_pages(client: TestClient, archive: Archive) -> None:
    name = str(archive.add(S, TEXT, format="text"))
    page = _page(client, f"/uri-res/N2Rs?{name}", 501)
    assert "does not offer the RFC 2169 service N2Rs" in _text(page.find(".//p[@class='error']"))
    _page(client, "/uri-res/N2R/more", 404)
    _page(client, f"/uri-res/FOO?{name}", 404)
    _page(client, "/uri-res/N2R", 400)  # no name at all
    answer = client.post(f"/uri-res/N2R?{name}", headers=HTML)  # not a read: the 405 problem, its Allow kept
    assert answer.status_code == 405 and answer.headers["content-type"] == "application/problem+json"
    assert "GET" in answer.headers["allow"]


def test_the_answer_cache_gives_neither_form_to_the_other(archive: Archive) -> None:
    """On ``pdi serve``'s own protocol, its cache filled with the name's bytes: a refusal is never kept there, so
    a browser and a program asking the same address each get their own form, in either order."""
    name = str(archive.add(S, TEXT, format="text"))
    with on_own_protocol(create_app(archive.location), public=True) as url:
        assert _fetch(url + f"/uri-res/N2R?{name}", CHROMIUM)[:2] == (200, "text/plain; charset=utf-8")
        for target in (f"/uri-res/N2R?{MISSING}", f"/uri-res/N2R?{name}%23char=999,1200"):
            for accept in (CHROMIUM, "*/*", CHROMIUM, "application/problem+json"):
                status, kind, vary = _fetch(url + target, accept)
                assert kind == ("text/html; charset=utf-8" if accept == CHROMIUM else "application/problem+json")
                assert status in (404, 416) and "accept" in vary, (target, accept)


def _fetch(url: str, accept: str) -> tuple[int, str, set[str]]:
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            headers, status = answer.headers, answer.status
            answer.read()
    except urllib.error.HTTPError as refused:
        headers, status = refused.headers, refused.code
        body = refused.read()
        if headers["content-type"] == "application/problem+json":
            assert json.loads(body)["status"] == status
    vary = {f.strip().lower() for v in headers.get_all("vary") or [] for f in v.split(",")}
    return status, headers["content-type"], vary


_WEIGHTS = st.sampled_from([None, "0", "0.1", "0.5", "0.8", "0.9", "1"])


@given(html=_WEIGHTS, json_=_WEIGHTS, problem=_WEIGHTS, star=_WEIGHTS)
def test_a_page_only_when_accept_weighs_html_above_both_jsons(
    html: str | None, json_: str | None, problem: str | None, star: str | None,
) -> None:
    """RFC 9110 §12.5.1: each type's weight is that of the most specific range naming it, else ``*/*``'s, else 0;
    a page only when HTML's is above 0 and above both JSON types' (a tie is the problem's)."""
    from starlette.requests import Request

    from pdi.server.pages.problem_pages import prefers_page

    ranges = [(t, q) for t, q in (("text/html", html), ("application/json", json_),
                                  ("application/problem+json", problem), ("*/*", star)) if q is not None]
    accept = ", ".join(f"{t};q={q}" for t, q in ranges)

    def weight(kind: str) -> float:
        named = dict(ranges)
        return float(named[kind]) if kind in named else float(named.get("*/*", "0" if ranges else "1"))

    expected = weight("text/html") > 0 and weight("text/html") > max(weight("application/json"),
                                                                     weight("application/problem+json"))
    for method, page in (("GET", expected), ("HEAD", expected), ("POST", False)):
        scope = {"type": "http", "method": method, "path": "/uri-res/N2R", "query_string": b"",
                 "headers": [(b"accept", accept.encode())] if accept else []}
        assert prefers_page(Request(scope)) is page, (method, accept)
