"""Strangers' input to the Memento and OAI-PMH routes and to N2R's negotiation: never a 500, never a traceback."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_helpers import Clock
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.server import create_app
from pdi.server.protocol.rfc2169 import rfc2169_query

S = "hostile.example.us"
URL = "http://127.0.0.1:9/x?y=1"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str]]:
    location: Path = tmp_path_factory.mktemp("interop-hostile") / "archive"
    clock = Clock(datetime.datetime(2020, 5, 5, tzinfo=datetime.UTC))
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        name = str(archive.deposit(S, [Content(b"<p>x</p>", "html")], foreign_id=URL)[0])
        archive.annotate(name.rsplit(".", 2)[0], "title", "x")
    with TestClient(create_app(str(location)), raise_server_exceptions=False) as local:
        yield local, name


text = st.text(st.characters(codec="latin-1", exclude_categories=("Cs",)), max_size=60)
printable = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=60)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.sampled_from(["/timegate/", "/timemap/link/"]),
       st.one_of(st.sampled_from([URL, "urn:pdi://hostile.example.us/2020/05/05/x", "urn:pdi:x"]), printable),
       st.one_of(st.none(), st.just("Tue, 05 May 2020 00:00:00 GMT"),
                 text.map(lambda t: t.replace("\r", "").replace("\n", ""))))
def test_memento_routes_answer_every_request(client: tuple[TestClient, str], route: str, target: str,
                                              accept_datetime: str | None) -> None:
    local, _ = client
    headers = {} if accept_datetime is None else {"Accept-Datetime": accept_datetime.encode("latin-1")}
    answer = local.get(route + quote(target, safe=":/?=&%"), headers=headers)
    assert answer.status_code in (200, 302, 400, 404, 410), answer.text
    if answer.status_code >= 400:
        assert answer.headers["content-type"] == "application/problem+json"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["verb", "metadataPrefix", "identifier", "set", "from", "until",
                                           "resumptionToken", "other"]),
                          st.one_of(st.sampled_from(["ListRecords", "GetRecord", "oai_dc", "2020-05-05",
                                                     "urn:pdi://hostile.example.us/2020/05/05/1", S]), text)),
                max_size=5))
def test_oai_answers_every_request_with_xml(client: tuple[TestClient, str], pairs: list[tuple[str, str]]) -> None:
    local, _ = client
    answer = local.get("/oai", params=pairs)
    assert answer.status_code == 200 and answer.headers["content-type"] == "text/xml; charset=utf-8"
    assert b"<OAI-PMH" in answer.content


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text.map(lambda t: t.replace("\r", "").replace("\n", "")), st.sampled_from(["", "?", "?info", "?x", "??"]))
def test_n2r_negotiation_answers_every_accept(client: tuple[TestClient, str], accept: str, suffix: str) -> None:
    local, name = client
    for each in (name, name.rsplit(".", 2)[0]):
        answer = local.get(f"/uri-res/N2R?{rfc2169_query(each)}{suffix}", headers={"Accept": accept.encode("latin-1")},
                           follow_redirects=False)
        assert answer.status_code in (200, 300, 302, 400), answer.text
