"""An embargoed document named inexactly (a format its version does not have, a version it does not have) tells an
anonymous reader what its exact name tells (403: it exists, under embargo), never which formats or versions it has
(docs/reference/write-api.md, "What a reader may learn"; found by a probe of `pdi serve`, 2026-11-30: `…/6.html.1`
answered 404 "version 1 has no format html (formats: text)")."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.server import create_app
from pdi.server.protocol.rfc2169 import rfc2169_query

S = "courts.example.us"
ROUTES = ["/uri-res/N2R?{q}", "/uri-res/N2C?{q}", "/uri-res/N2L?{q}", "/uri-res/N2Ns?{q}", "/api/meta?pdi={p}",
          "/api/resolve?pdi={p}", "/view?pdi={p}"]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str], str]]:
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        names = {
            "whole": str(archive.add(S, b"sealed whole\n", format="text", embargo_until="2099-01-01")),
            "open": str(archive.add(S, b"open first version\n", format="text")),
        }
        generic = names["open"].rsplit(".", 2)[0]
        archive.add_version(generic, [Content(b"sealed second version\n", "text"), Content(b"<p>sealed</p>", "html")],
                            embargo_until="2099-01-01")
        archive.embargo(generic + ".text.2", "2099-01-01")
        _, token = archive.add_token("clerk", role="read", series=[S])
    with Archive.open(location) as archive, TestClient(create_app(str(location), archive=archive)) as client:
        yield client, names, token


def _asked(route: str, name: str) -> str:
    return route.format(q=rfc2169_query(name), p=urllib.parse.quote(name, safe=""))


@pytest.mark.parametrize("route", ROUTES)
def test_an_inexact_name_of_an_embargoed_document_says_no_more_than_its_exact_name(
        served: tuple[TestClient, dict[str, str], str], route: str) -> None:
    client, names, token = served
    whole = names["whole"]
    exact = client.get(_asked(route, whole), follow_redirects=False)
    assert exact.status_code == 403
    for inexact in (whole.replace(".text.1", ".html.1"), whole.replace(".text.1", ".text.2"),
                    whole.replace(".text.1", ".pdf.7")):
        answer = client.get(_asked(route, inexact), follow_redirects=False)
        assert answer.status_code == 403, (inexact, answer.text[:300])
        assert "formats:" not in answer.text and "versions:" not in answer.text, answer.text[:500]
        # a reader of the series learns all: the refusal that names what the document has
        told = client.get(_asked(route, inexact), headers={"Authorization": f"Bearer {token}"},
                          follow_redirects=False)
        assert told.status_code == 404, told.text[:300]
        assert ("formats: text" in told.text or "versions: 1" in told.text), told.text[:500]


@pytest.mark.parametrize("route", ROUTES)
def test_an_embargoed_version_named_in_a_format_it_lacks_does_not_list_its_formats(
        served: tuple[TestClient, dict[str, str], str], route: str) -> None:
    client, names, token = served
    sealed = names["open"].replace(".text.1", ".pdf.2")  # version 2 (embargoed) has text and html, not pdf
    answer = client.get(_asked(route, sealed), follow_redirects=False)
    assert answer.status_code == 403, answer.text[:300]
    assert "formats:" not in answer.text and "html, text" not in answer.text, answer.text[:500]
    told = client.get(_asked(route, sealed), headers={"Authorization": f"Bearer {token}"}, follow_redirects=False)
    assert told.status_code == 404 and "formats: html, text" in told.text, told.text[:500]  # as the catalog orders them
    # the version a stranger may read still answers all: a format it lacks is named with those it has
    open_wrong = names["open"].replace(".text.1", ".pdf.1")
    plain = client.get(_asked(route, open_wrong), follow_redirects=False)
    assert plain.status_code == 404 and "formats: text" in plain.text, plain.text[:500]
    # and a version that does not exist, with the versions the stranger may know of (not the embargoed 2)
    missing = client.get(_asked(route, names["open"].replace(".text.1", ".text.3")), follow_redirects=False)
    assert missing.status_code == 404 and "(versions: 1)" in missing.text, missing.text[:500]
