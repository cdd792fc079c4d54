"""A deposit into a series that is not registered: the client of the write API is told what it can do.

Only the archive's keeper registers a series (``pdi series add``, on the archive's own machine); a token holder
who deposits over HTTP into one that is not registered (a subseries its token covers, say) cannot run that
command. So the ``404`` of ``POST /api/deposit`` and ``POST /api/batch`` is of a problem type of its own,
described on the ``/api`` page and in the OpenAPI document, and its ``detail`` names the request that lists the
registered series and the keeper, not the command; the command line still names the command. What the detail
points to is checked too: ``GET /api/series`` lists the registered series, and not the one refused.
"""

from __future__ import annotations

from pathlib import Path

import html5lib
from click.testing import CliRunner
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.cli import cli
from pdi.server import create_app

S = "library.example.us"
UNREGISTERED = f"maps.{S}"  # a subseries the token covers, never registered
TYPE = "/api#problem-series-not-registered"


def _refused(answer: object) -> str:
    """The detail of the refusal of a deposit into :data:`UNREGISTERED`, checked for what a client can act on."""
    assert answer.status_code == 404, answer.text  # type: ignore[attr-defined]
    problem = answer.json()  # type: ignore[attr-defined]
    assert problem["type"] == TYPE, problem
    detail = str(problem["detail"])
    assert f"series {UNREGISTERED} is not registered" in detail, detail
    assert "pdi " not in detail, detail  # no command: the client runs none on the archive's machine
    assert "GET /api/series" in detail and "keeper" in detail, detail  # what it can do, and who can register it
    return detail


def test_a_deposit_over_http_into_an_unregistered_series_says_what_a_client_can_do(archive: Archive, tmp_path: Path) -> None:
    _, token = archive.add_token("intake", role="deposit", series=[S])
    client = TestClient(create_app(str(tmp_path / "archive"), archive=archive))
    bearer = {"Authorization": f"Bearer {token}"}
    _refused(client.post(f"/api/deposit?series={UNREGISTERED}", content=b"a map\n",
                         headers={**bearer, "Content-Type": "text/plain"}))
    _refused(client.post(f"/api/batch?series={UNREGISTERED}", files={"item": ("a.txt", b"a map\n", "text/plain")},
                         headers=bearer))
    assert archive.ls() == []  # nothing minted
    # what the detail points to: the registered series, the refused one not among them
    listed = client.get("/api/series", headers=bearer)
    assert listed.status_code == 200, listed.text
    assert S in listed.text and UNREGISTERED not in listed.text, listed.text


def test_the_api_documents_say_what_a_deposit_into_an_unregistered_series_answers(archive: Archive, tmp_path: Path) -> None:
    client = TestClient(create_app(str(tmp_path / "archive"), archive=archive))
    document = client.get("/openapi.json").json()
    for path in ("/api/deposit", "/api/batch"):
        said = document["paths"][path]["post"]["responses"]["404"]["description"]
        assert "series-not-registered" in said and "GET /api/series" in said, (path, said)
    page = html5lib.parse(client.get("/api").text, namespaceHTMLElements=False)
    section = page.find(".//section[@id='problem-series-not-registered']")
    assert section is not None  # the problem type's own section, where the type's fragment points
    text = "".join(section.itertext())
    assert "404" in text and "GET /api/series" in text, text


def test_the_command_line_still_names_the_keepers_command(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", S, "--archive", location]).exit_code == 0
    document = tmp_path / "map.txt"
    document.write_bytes(b"a map\n")
    result = runner.invoke(cli, ["add", str(document), "--series", UNREGISTERED, "--archive", location])
    assert result.exit_code == 4, result.output  # not found (docs/reference/exit-codes.md)
    assert f"pdi series add {UNREGISTERED}" in result.stderr, result.stderr
    assert "GET /api/series" not in result.stderr, result.stderr
