"""``/openapi.json`` is a valid OpenAPI 3.1 document of every machine route the app has, and ``/api`` shows it.

Validity is judged by ``openapi-spec-validator`` (an independent
implementation of the OpenAPI 3.1 schema), not by our own reading.
"""

from __future__ import annotations

from pathlib import Path

from openapi_spec_validator import validate
from starlette.routing import Route
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.openapi import OPERATIONS, openapi_path


def _app(tmp_path: Path) -> tuple[TestClient, list[tuple[str, str]]]:
    location = tmp_path / "archive"
    Archive.init(location).close()
    app = create_app(str(location))
    machine = [
        (method, openapi_path(route.path))
        for route in app.routes
        if isinstance(route, Route) and route.path.startswith(("/api/", "/uri-res/", "/timegate/", "/timemap/", "/oai"))
        for method in route.methods or ()
        if method != "HEAD"
    ]
    return TestClient(app), machine


def test_the_description_is_valid_openapi_3_1_and_names_every_machine_route(tmp_path: Path) -> None:
    client, machine = _app(tmp_path)
    answer = client.get("/openapi.json")
    assert answer.status_code == 200
    document = answer.json()
    validate(document)  # raises on anything OpenAPI 3.1 does not allow
    assert document["openapi"] == "3.1.0"
    described = {(m.upper(), p) for p, methods in document["paths"].items() for m in methods}
    assert described == set(machine)
    # each route is declared, not only guessed from its docstring
    assert set(machine) <= set(OPERATIONS), sorted(set(machine) - set(OPERATIONS))
    assert set(OPERATIONS) <= set(machine), sorted(set(OPERATIONS) - set(machine))
    deposit = document["paths"]["/api/deposit"]["post"]
    assert deposit["security"] == [{"bearer": []}] and deposit["x-pdi-role"] == "deposit"
    assert {"401", "403", "201"} <= set(deposit["responses"])
    assert {p["name"] for p in deposit["parameters"] if p["required"]} == {"series"}
    assert "security" not in document["paths"]["/api/resolve"]["get"]


def test_the_docs_page_lists_each_operation(tmp_path: Path) -> None:
    client, machine = _app(tmp_path)
    page = client.get("/api")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for method, path in machine:
        assert f"<code>{method} {path}</code>" in page.text
    assert "Needs a bearer token with the role <b>curate</b>" in page.text


def test_the_description_gives_the_statuses_of_refused_requests(tmp_path: Path) -> None:
    client, _ = _app(tmp_path)
    document = client.get("/openapi.json").json()
    for path, methods in document["paths"].items():
        for method, op in methods.items():
            said = op["responses"]
            assert "given more than once" in said["400"]["description"], (method, path)
            # every operation that reads a body says what a body too slow gets (pdi.server.limits.BodyDeadline)
            assert ("408" in said) == ("requestBody" in op), (method, path)
    batch = document["paths"]["/api/batch"]["post"]["responses"]
    assert "cut short before its closing boundary" in batch["400"]["description"]
    assert "Content-Length" in batch["400"]["description"]
    assert "OPTIONS" in document["info"]["description"] and "Allow" in document["info"]["description"]
