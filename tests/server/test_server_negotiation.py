"""N2R's inflections and negotiation: ``Accept: application/json`` and ``?info`` answer N2C; a generic name by ``Accept``.

Checked against ``pdi serve`` (whose HTTP/1.1 protocol answers cached names
before any routing) and an in-process app (whose middleware does), so that
neither cache gives the bytes to a request that negotiated the description.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from server_helpers import Clock, serving
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.server import create_app
from pdi.server.protocol.resolver import INFLECTIONS, split_inflection
from pdi.server.protocol.rfc2169 import rfc2169_query

S = "negotiation.example.us"


@dataclass(frozen=True)
class Names:
    base: str
    location: str
    text: str  # version 1, text
    html: str  # version 1, html
    newest: str  # version 2, text
    generic: str


@pytest.fixture(scope="module")
def names(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Names]:
    location = tmp_path_factory.mktemp("negotiation") / "archive"
    clock = Clock(datetime.datetime(2026, 3, 1, 9, 0, tzinfo=datetime.UTC))
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        first = archive.deposit(S, [Content(b"<p>one</p>", "html"), Content(b"one\n", "text")])
        html, text = (str(n) for n in first)
        generic = text.rsplit(".", 2)[0]
        clock.now = datetime.datetime(2026, 3, 2, 9, 0, tzinfo=datetime.UTC)
        newest = str(archive.add_version(generic, [Content(b"two\n", "text")])[0])
    with serving(location) as (_, port):
        yield Names(f"http://127.0.0.1:{port}", str(location), text, html, newest, generic)


def n2r(name: str, suffix: str = "") -> str:
    return f"/uri-res/N2R?{rfc2169_query(name)}{suffix}"


def n2c(client: httpx.Client | TestClient, name: str) -> object:
    answer = client.get(f"/uri-res/N2C?{rfc2169_query(name)}")
    assert answer.status_code == 200
    return answer.json()


@pytest.fixture(params=["pdi serve", "in-process"])
def client(request: pytest.FixtureRequest, names: Names) -> Iterator[httpx.Client | TestClient]:
    if request.param == "pdi serve":
        with httpx.Client(base_url=names.base) as live:
            yield live
    else:
        with TestClient(create_app(names.location)) as local:
            yield local


@pytest.mark.parametrize("accept", [
    "application/json",
    "text/plain;q=0.5, application/json;q=0.9",
    "application/*",
    "text/html, application/json",  # a text/plain resource: JSON is named, text/plain only by neither
])
def test_accept_json_answers_n2c_even_when_the_bytes_are_cached(
    client: httpx.Client | TestClient, names: Names, accept: str
) -> None:
    description = n2c(client, names.text)
    for _ in range(2):  # the second from the cache
        plain = client.get(n2r(names.text))
        assert plain.status_code == 200 and plain.content == b"one\n" and plain.headers["vary"] == "Accept"
    negotiated = client.get(n2r(names.text), headers={"Accept": accept})
    assert negotiated.status_code == 200
    assert negotiated.headers["content-type"] == "application/json"
    # the description (its statements, its name's neighbours) is the reader's: not immutable, so it varies
    # by who reads too, where the bytes are the same for everyone
    assert negotiated.headers["vary"] == "Accept, Authorization, Cookie"
    assert negotiated.json() == description
    # and the bytes again after it; a 304 says what it varies by, as the 200 did (RFC 9110 §15.4.5)
    again = client.get(n2r(names.text))
    assert again.content == b"one\n"
    unchanged = client.get(n2r(names.text), headers={"If-None-Match": again.headers["etag"]})
    assert unchanged.status_code == 304 and unchanged.headers["vary"] == "Accept"


@pytest.mark.parametrize("accept", [
    "*/*", "text/plain", "application/json;q=0.1, text/plain", "text/*, application/json;q=0.5",
    "application/json;q=0", "text/plain, application/json",  # equal weights: the resource's own type
])
def test_accept_that_prefers_the_format_answers_the_bytes(client: httpx.Client | TestClient, names: Names,
                                                          accept: str) -> None:
    answer = client.get(n2r(names.text), headers={"Accept": accept})
    assert answer.status_code == 200 and answer.content == b"one\n"


@pytest.mark.parametrize("suffix", ["?info", "?", "??", "%3Finfo"])
def test_info_inflection_answers_n2c(client: httpx.Client | TestClient, names: Names, suffix: str) -> None:
    answer = client.get(n2r(names.text, suffix) if not suffix.startswith("%") else n2r(names.text) + "?info")
    assert answer.status_code == 200 and answer.json() == n2c(client, names.text)
    generic = client.get(n2r(names.generic, "?info"))
    assert generic.status_code == 200 and generic.json() == n2c(client, names.generic)


def test_a_question_mark_in_a_text_directive_is_its_text_not_an_inflection(
    client: httpx.Client | TestClient, names: Names
) -> None:
    # WICG Text Fragments: a fragment directive holds '?' as any URL fragment may. "#:~:text=one?" quotes
    # "one?" (not in "one\n": 404), where the first '?' was read as an inflection and answered one's N2C
    asked = client.get(n2r(names.text + "#:~:text=one?"), follow_redirects=False)
    assert asked.status_code == 404 and '"one?"' in asked.json()["detail"]
    other = client.get(n2r(names.text + "#:~:text=one?info"), follow_redirects=False)
    assert other.status_code == 404 and '"one?info"' in other.json()["detail"]
    found = client.get(n2r(names.text + "#:~:text=one"), follow_redirects=False)
    assert found.status_code == 302 and found.headers["location"].startswith("/uri-res/N2R?")


@given(st.text(alphabet="!$&'()*+,-./0123456789:;=?@AZaz_~%", max_size=20))
def test_split_inflection_leaves_a_fragment_directive_whole(value: str) -> None:
    name = f"urn:pdi://{S}/2026/03/01/1.text.1#:~:text={value}"
    assert split_inflection(name) == (name, None)
    native = f"urn:pdi://{S}/2026/03/01/1.text.1#char=1,2"
    for inflection in sorted(INFLECTIONS):
        assert split_inflection(f"{native}?{inflection}") == (native, inflection)


def test_an_unknown_inflection_is_a_400_problem(client: httpx.Client | TestClient, names: Names) -> None:
    answer = client.get(n2r(names.text, "?meta"))
    assert answer.status_code == 400 and answer.headers["content-type"] == "application/problem+json"
    assert "?meta" in answer.json()["detail"] and "inflection" in answer.json()["detail"]
    other = client.get(f"/uri-res/N2L?{rfc2169_query(names.text)}?info")
    assert other.status_code == 400 and "N2R only" in other.json()["detail"]


@pytest.mark.parametrize(("accept", "chosen"), [
    ("text/plain", "newest"),
    ("text/*", "newest"),
    ("text/html;q=0.9, text/plain;q=0.2", "newest"),  # the newest version has no html: text/plain fits
])
def test_a_generic_name_negotiates_among_the_newest_versions_formats(
    client: httpx.Client | TestClient, names: Names, accept: str, chosen: str
) -> None:
    answer = client.get(n2r(names.generic), headers={"Accept": accept}, follow_redirects=False)
    assert answer.status_code == 302
    assert answer.headers["location"] == n2r(getattr(names, chosen))
    assert answer.headers["vary"] == "Accept, Authorization, Cookie"  # the versions listed are the reader's
    followed = client.get(n2r(names.generic), headers={"Accept": accept}, follow_redirects=True)
    assert followed.status_code == 200 and followed.content == b"two\n"


@pytest.mark.parametrize("accept", ["image/png", "*/*", None, "text/html", "image/*;q=1, text/plain;q=0"])
def test_a_generic_name_answers_300_when_no_format_fits(client: httpx.Client | TestClient, names: Names,
                                                         accept: str | None) -> None:
    headers = {"Accept": accept} if accept is not None else {}
    if accept is None and isinstance(client, httpx.Client):
        answer = httpx.get(names.base + n2r(names.generic), headers={"Accept": ""})
    else:
        answer = client.get(n2r(names.generic), headers=headers, follow_redirects=False)
    assert answer.status_code == 300 and answer.headers["content-type"].startswith("text/uri-list")
    assert answer.headers["vary"] == "Accept, Authorization, Cookie"  # the versions listed are the reader's
    listed = [line for line in answer.text.split("\r\n") if line and not line.startswith("#")]
    assert [line.split("/uri-res/N2R?", 1)[1] for line in listed] == [
        rfc2169_query(n) for n in (names.html, names.text, names.newest)]


def test_a_generic_name_with_accept_json_answers_its_description(client: httpx.Client | TestClient,
                                                                  names: Names) -> None:
    answer = client.get(n2r(names.generic), headers={"Accept": "application/json"})
    assert answer.status_code == 200 and answer.json() == n2c(client, names.generic)
    assert [v["version"] for v in answer.json()["versions"]] == [1, 2]
