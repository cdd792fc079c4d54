"""A name not here, asked for by an anonymous reader: the 404 reads as if the embargoed documents did not exist.

Two archives are built alike, one with documents under an embargo in force
(one minted alone on a day, one beside visible documents, one the only
document of its series) and one without them. Whatever day and id an
anonymous reader asks for, ``/api/resolve``, ``/uri-res/N2R`` and ``/view``
answer each the same text in both: neither the nearest days, nor "holds no
documents", nor the ids offered tell the embargoed documents' days
(:mod:`pdi.archive.nearest`). The owner is still told of them.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path

import html5lib
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app

S = "library.example.us"
LONE = "lone.example.us"
SEALED = "2099-01-01"


def _build(location: Path, embargoed: bool) -> Archive:
    now = [datetime.datetime(2026, 11, 20, 12, 0, tzinfo=datetime.UTC)]
    archive = Archive.init(location, clock=lambda: now[0])
    archive.add_series(S)
    archive.add_series(LONE)

    def on(day: int) -> None:
        now[0] = datetime.datetime(2026, 11, day, 12, 0, tzinfo=datetime.UTC)

    archive.add(S, b"first\n", format="text")
    archive.add(S, b"report\n", format="text", foreign_id="Report_2026")
    if embargoed:  # beside visible documents of its day: its id is not offered
        archive.add(S, b"sealed report\n", format="text", foreign_id="Report_2027", embargo_until=SEALED)
        on(24)  # the only document of its day: the day is not named
        archive.add(S, b"sealed\n", format="text", foreign_id="Minutes-7", embargo_until=SEALED)
        archive.add(S, b"sealed too\n", format="text", embargo_until=SEALED)
        on(26)  # the only document of its series: the series "holds no documents" on every day
        archive.add(LONE, b"sealed alone\n", format="text", embargo_until=SEALED)
    on(28)
    archive.add(S, b"later\n", format="text")
    now[0] = datetime.datetime(2026, 12, 2, 12, 0, tzinfo=datetime.UTC)
    return archive


@pytest.fixture(scope="module")
def clients(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, TestClient]]:
    base = tmp_path_factory.mktemp("nearest-embargo")
    with _build(base / "with", True) as held, _build(base / "without", False) as bare:
        yield (TestClient(create_app(held.location, archive=held)),
               TestClient(create_app(bare.location, archive=bare)))


def _answers(client: TestClient, name: str) -> tuple[int, str, int, str, int, str]:
    resolved = client.get("/api/resolve", params={"pdi": name})
    n2r = client.get(f"/uri-res/N2R?{name}")
    view = client.get("/view", params={"pdi": name}, headers={"Accept": "text/html"})
    main = html5lib.parse(view.text, namespaceHTMLElements=False).find(".//main")
    page = " ".join("".join(main.itertext()).split()) if main is not None else view.text
    return resolved.status_code, _detail(resolved), n2r.status_code, _detail(n2r), view.status_code, page


def _detail(answer: httpx.Response) -> str:
    """A problem's detail (RFC 9457), else the body."""
    if answer.headers.get("content-type") == "application/problem+json":
        return str(answer.json()["detail"])
    return answer.text


#: The embargoed documents' own names (series, day of November 2026, id): those are refused (403), not "not here",
#: and are not asked for.
_SEALED = {(S, 20, "Report_2027"), (S, 24, "Minutes-7"), (S, 24, "1"), (LONE, 26, "1")}

ids = st.one_of(
    st.sampled_from(["1", "2", "3", "x", "Report_2026", "report_2027", "Reprot_2027", "Report_2027", "Minutes-7",
                     "minutes-7", "Minutes-8", "Minutes-77"]),
    st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,10}", fullmatch=True),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(day=st.integers(min_value=10, max_value=40), unique_id=ids, series=st.sampled_from([S, LONE]),
       formatted=st.booleans())
def test_an_anonymous_readers_404_reads_as_if_the_embargoed_documents_did_not_exist(
    clients: tuple[TestClient, TestClient], day: int, unique_id: str, series: str, formatted: bool,
) -> None:
    asked = datetime.date(2026, 11, 1) + datetime.timedelta(days=day - 1)
    if (series, asked.day, unique_id) in _SEALED:
        return
    name = f"urn:pdi://{series}/{asked:%Y/%m/%d}/{unique_id}" + (".text.1" if formatted else "")
    held, bare = clients
    with_embargoed, without = _answers(held, name), _answers(bare, name)
    if without[0] == 200:  # a visible document, the same in both: its page is not a 404
        return
    assert with_embargoed == without


def test_the_owner_is_still_told_of_the_embargoed_days(tmp_path: Path) -> None:
    with _build(tmp_path / "archive", True) as archive:
        said = archive.nearest(f"urn:pdi://{S}/2026/11/25/9").sentence
        alone = archive.nearest(f"urn:pdi://{LONE}/2026/11/25/9").sentence
    assert said.endswith("the nearest days with documents are 2026-11-24 (1 day before) and 2026-11-28 (3 days after)")
    assert alone.endswith("the nearest days with documents are 2026-11-26 (1 day after)")
