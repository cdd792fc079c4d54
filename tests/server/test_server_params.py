"""Query parameters: a single-valued one given twice is a 400 naming it; a number out of range is a 400
naming the parameter and the range (never 413, which RFC 9110 §15.5.14 keeps for content too large).

The routes and their parameters are not listed here: they are read from the
resolver's own ``/openapi.json``, so a route or a parameter added later is
tried too.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app

S = "library.example.us"


@pytest.fixture(scope="module")
def resolver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Archive, str, str]]:
    location = tmp_path_factory.mktemp("params") / "archive"
    archive = Archive.init(location)
    archive.add_series(S)
    name = str(archive.add(S, b"one line\n", format="text"))
    _, admin = archive.add_token("admin", role="admin")
    try:
        yield TestClient(create_app(str(location), archive=archive)), archive, name, admin
    finally:
        archive.close()


def _concrete(path: str) -> str:
    """An OpenAPI path template with a value in each of its path parameters."""
    return re.sub(r"\{(\w+)\}", lambda m: {"service": "N2C"}.get(m[1], "x"), path)


def test_every_documented_query_parameter_given_twice_is_a_400_naming_it(
    resolver: tuple[TestClient, Archive, str, str],
) -> None:
    client, archive, name, admin = resolver
    document = client.get("/openapi.json").json()
    tried = 0
    before = list(archive.store.iter_representations())
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            headers = {"Authorization": f"Bearer {admin}"} if "security" in operation else {}
            for param in operation["parameters"]:
                if param["in"] != "query":
                    continue
                key = param["name"]
                # two values that would each be taken alone (a real name, a number for a number); an optional
                # parameter's schema is "empty, or the value" (anyOf)
                schema = param["schema"]["anyOf"][-1] if "anyOf" in param["schema"] else param["schema"]
                value = "1" if schema.get("type") == "integer" else "true" if "enum" in schema else name
                if schema.get("type") == "object":  # OAI-PMH's free-form query: its verb, twice
                    key, value = "verb", "Identify"
                query = [(key, value), (key, value)]
                if path == "/oai" and method == "post":  # its arguments are a form (OAI-PMH §3.1.1.2)
                    answer = client.post(path, content=urllib.parse.urlencode(query),
                                         headers={"Content-Type": "application/x-www-form-urlencoded"})
                else:
                    answer = client.request(method.upper(), _concrete(path), params=query, headers=headers,
                                            content=b"x" if "requestBody" in operation else None)
                tried += 1
                if path == "/oai":  # OAI-PMH answers its own error (§3.6): badVerb or badArgument, naming it
                    assert answer.status_code == 200, (method, path, key, answer.text)
                    assert re.search(r'code="bad(Verb|Argument)"', answer.text), (method, path, key, answer.text)
                    continue
                assert answer.status_code == 400, (method, path, key, answer.status_code, answer.text)
                assert answer.headers["content-type"] == "application/problem+json", (method, path, key)
                detail = answer.json()["detail"]
                assert f"the query parameter {key}= is given 2 times" in detail, (method, path, key, detail)
    assert tried >= 30  # the description lists the write API's parameters too
    # nothing was written by any of them
    assert list(archive.store.iter_representations()) == before


@pytest.mark.parametrize("page", [
    "/view?pdi={name}&pdi={name}", "/search?q=line&q=one", "/signin?next=/&next=/api",
    "/series/" + S + "/2026/11/22?limit=1&limit=2", "/captures?url=http://a.example/&url=http://b.example/",
])
def test_the_reader_pages_refuse_a_parameter_given_twice_too(
    resolver: tuple[TestClient, Archive, str, str], page: str,
) -> None:
    client, _, name, _ = resolver
    answer = client.get(page.format(name=name))
    key = page.split("?", 1)[1].split("=", 1)[0]
    assert answer.status_code == 400, (page, answer.text)
    assert answer.headers["content-type"].startswith("text/html")
    # a page's detail line begins with a capital where it begins the line (problem_pages.sentence)
    assert re.search(rf"[Tt]he query parameter {re.escape(key)}= is given 2 times", answer.text), answer.text


@pytest.mark.parametrize(("path", "key", "least", "most"), [
    ("/api/ls?limit={v}", "limit", 1, 10000),
    ("/api/ls?offset={v}", "offset", 0, 999999999999),
    ("/api/search?q=line&limit={v}", "limit", 1, None),
    ("/api/audit?limit={v}", "limit", 1, 10000),
    ("/api/audit?after={v}", "after", 0, 999999999999),
])
def test_a_number_out_of_its_range_is_a_400_naming_the_parameter_and_the_range(
    resolver: tuple[TestClient, Archive, str, str], path: str, key: str, least: int, most: int | None,
) -> None:
    from pdi.archive import MAX_SEARCH_LIMIT

    client, _, _, admin = resolver
    top = most if most is not None else MAX_SEARCH_LIMIT
    headers = {"Authorization": f"Bearer {admin}"}
    outside = [str(top + 1), "9" * 30] + ([str(least - 1)] if least > 0 else [])
    for value in outside:
        answer = client.get(path.format(v=value), headers=headers)
        assert answer.status_code == 400, (path, value, answer.status_code, answer.text)  # RFC 9110 §15.5.1
        detail = answer.json()["detail"]
        assert f"{key}=" in detail and f"give {least} to {top}" in detail, (path, value, detail)
    assert client.get(path.format(v=least), headers=headers).status_code == 200
    assert client.get(path.format(v=top), headers=headers).status_code == 200


def test_limit_0_is_a_bad_request_not_content_too_large(resolver: tuple[TestClient, Archive, str, str]) -> None:
    client, _, _, admin = resolver
    for path in ("/api/ls?limit=0", "/api/search?q=line&limit=0", "/api/audit?limit=0"):
        answer = client.get(path, headers={"Authorization": f"Bearer {admin}"})
        assert answer.status_code == 400, (path, answer.text)
        assert answer.json()["title"] == "syntax error" and "limit=0 is out of range" in answer.json()["detail"]


def test_the_description_gives_the_ranges_the_server_checks(tmp_path: Path) -> None:
    Archive.init(tmp_path / "a").close()
    document = TestClient(create_app(str(tmp_path / "a"))).get("/openapi.json").json()
    limits = {  # an optional parameter's schema is "empty (absent), or the number"
        path: next(p["schema"]["anyOf"][-1] for p in methods["get"]["parameters"] if p["name"] == "limit")
        for path, methods in document["paths"].items() if "get" in methods
        and any(p["name"] == "limit" for p in methods["get"]["parameters"])
    }
    assert limits["/api/ls"] == {"type": "integer", "minimum": 1, "maximum": 10000}
    assert limits["/api/audit"] == {"type": "integer", "minimum": 1, "maximum": 10000}
    assert limits["/api/search"]["minimum"] == 1


def test_a_value_whose_escapes_are_not_utf8_is_a_400_and_nothing_is_minted(
    resolver: tuple[TestClient, Archive, str, str],
) -> None:
    """``%ED%A0%80`` (a surrogate's UTF-8 form, which UTF-8 forbids) read as U+FFFD three times minted an ``id=`` the
    client never sent, and ``%ED%A0%81`` then collided with it."""
    client, archive, _, admin = resolver
    before = [str(n) for n in archive.ls()]
    headers = {"Authorization": f"Bearer {admin}", "Content-Type": "text/plain"}
    for id_ in ("%ED%A0%80", "%FF", "a%C3"):
        answer = client.post(f"/api/deposit?series={S}&format=text&id={id_}", content=b"a note\n", headers=headers)
        assert answer.status_code == 400, answer.text
        assert "id=" in answer.json()["detail"] and "not UTF-8" in answer.json()["detail"]
    assert client.get("/api/ls?pattern=%FF").status_code == 400
    assert [str(n) for n in archive.ls()] == before
    euro = client.post(f"/api/deposit?series={S}&format=text&id=price-%E2%82%AC", content=b"a note\n", headers=headers)
    assert euro.status_code == 201 and euro.json()["pdi"].endswith(urllib.parse.quote("price-€", safe="") + ".text.1")


@given(st.lists(st.tuples(st.text(max_size=6), st.binary(max_size=6)), max_size=4))
def test_a_query_is_read_as_starlette_reads_it_or_refused_where_it_is_not_utf8(
    pairs: list[tuple[str, bytes]],
) -> None:
    from starlette.datastructures import QueryParams

    from pdi.errors import ParseError
    from pdi.server.http.params import _pairs

    query = "&".join(urllib.parse.quote(k) + "=" + urllib.parse.quote_from_bytes(v) for k, v in pairs)
    utf8 = True
    for _, value in pairs:
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            utf8 = False
    if utf8:
        assert _pairs(query.encode("latin-1")) == [
            (k, v) for k, v in QueryParams(query).multi_items()]
    else:
        with pytest.raises(ParseError, match="not UTF-8"):
            _pairs(query.encode("latin-1"))
