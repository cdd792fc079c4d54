"""The RFC 2169 services' ``404`` of a name this archive does not hold, when no other resolver is known for it either
(:mod:`pdi.server.protocol.elsewhere` found none): its problem's detail says what the archive holds near the name,
as ``pdi get`` and ``/api/resolve`` say it (:meth:`pdi.archive.Archive.not_found`).

The archive holds one document of ``a.example.us``, minted on 2026-11-20 (serial 1, the day's first: PDI-GRAMMAR.md
§2.5). A name carries the GMT day it was minted (§2.4), so the same id copied with another day, 2026-11-17, is not
here; the series' nearest day holding it is 2026-11-20, three days after."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest
from server_helpers import Clock
from starlette.testclient import TestClient

from pdi.archive import Archive, Content

SERIES = "a.example.us"
HELD = f"urn:pdi://{SERIES}/2026/11/20/1.text.1"
WRONG_DAY = f"urn:pdi://{SERIES}/2026/11/17/1.text.1"
#: what pdi get says of the same name (tests/test_cli_fast_get.py), after "... is not in this archive"
HINT = (f"; a name carries the GMT day it was minted, and {SERIES} has nothing minted on 2026-11-17, so no"
        " document '1'; the nearest days with documents are 2026-11-20 (3 days after)")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    from pdi.server import create_app

    location = tmp_path_factory.mktemp("nearest") / "a"
    clock = Clock(datetime.datetime(2026, 11, 20, 9, tzinfo=datetime.UTC))
    with Archive.init(str(location), clock=clock) as archive:
        archive.add_series(SERIES)
        assert str(archive.deposit(SERIES, [Content(b"the minutes of A\n", "text")])[0]) == HELD
    with TestClient(create_app(str(location))) as served:
        yield served


@pytest.mark.parametrize("service", ["N2R", "I2R", "N2L", "N2C"])
def test_a_name_of_a_held_series_not_here_says_what_is_near_it(client: TestClient, service: str) -> None:
    answer = client.get(f"/uri-res/{service}?{WRONG_DAY}", follow_redirects=False)
    assert answer.status_code == 404 and answer.headers["content-type"] == "application/problem+json"
    detail = answer.json()["detail"]
    assert detail.startswith(WRONG_DAY) and detail.endswith(f" is not in this archive{HINT}"), detail


def test_a_name_here_is_answered_as_it_was(client: TestClient) -> None:
    assert client.get(f"/uri-res/N2R?{HELD}").content == b"the minutes of A\n"
    located = client.get(f"/uri-res/N2L?{HELD}", follow_redirects=False)
    assert located.status_code == 302


def test_a_series_not_held_and_known_nowhere_says_so(client: TestClient) -> None:
    name = "urn:pdi://nobody.example.us/2026/11/17/1.text.1"
    answer = client.get(f"/uri-res/N2R?{name}")
    assert answer.status_code == 404
    assert answer.json()["detail"].endswith("; this archive holds no series nobody.example.us"), answer.json()


def test_an_unknown_service_gets_no_hint(client: TestClient) -> None:
    answer = client.get(f"/uri-res/N2X?{WRONG_DAY}")
    assert answer.status_code == 404 and "nearest" not in answer.json()["detail"]


def test_the_hint_is_what_api_resolve_says(client: TestClient) -> None:
    api = client.get("/api/resolve", params={"pdi": WRONG_DAY})
    n2r = client.get(f"/uri-res/N2R?{WRONG_DAY}")
    assert api.status_code == n2r.status_code == 404
    assert api.json()["detail"] == n2r.json()["detail"]


@pytest.mark.parametrize("inflection", ["?info", "?", "??"])
@pytest.mark.parametrize("service", ["N2R", "I2R"])
def test_a_description_asked_of_a_name_not_here_says_what_is_near_it(client: TestClient, service: str,
                                                                    inflection: str) -> None:
    # ?info (and the ARK-style ? and ??) asks for N2C's description: of a name not here, the same 404 as N2C's
    answer = client.get(f"/uri-res/{service}?{WRONG_DAY}{inflection}", follow_redirects=False)
    n2c = client.get(f"/uri-res/N2C?{WRONG_DAY}", follow_redirects=False)
    assert answer.status_code == n2c.status_code == 404
    detail = answer.json()["detail"]
    assert detail.endswith(f" is not in this archive{HINT}"), detail
