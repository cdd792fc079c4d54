"""``/openapi.json`` is a valid OpenAPI 3.1 document of every machine route the app has, and ``/api`` shows it.

Validity is judged by ``openapi-spec-validator`` (an independent
implementation of the OpenAPI 3.1 schema), not by our own reading.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from openapi_spec_validator import validate
from starlette.routing import Route
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.pages.api_docs import OPERATIONS, openapi_path


def _app(tmp_path: Path) -> tuple[TestClient, list[tuple[str, str]]]:
    location = tmp_path / "archive"
    Archive.init(location).close()
    app = create_app(str(location))
    machine = [
        (method, openapi_path(route.path))
        for route in app.routes
        if isinstance(route, Route) and route.path.startswith(
            ("/api/", "/uri-res/", "/timegate/", "/timemap/", "/oai", "/healthz", "/readyz", "/metrics"))
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
    # each operation's heading, as its text reads (its path in pieces between <wbr>s, each a span: it breaks after a /)
    headings = {html.unescape(re.sub(r"<[^>]*>", "", code))
                for code in re.findall(r"<h2><code[^>]*>(.*?)</code></h2>", page.text)}
    for method, path in machine:
        assert f"{method} {path}" in headings, (method, path)
    assert "Needs a bearer token with the role <b>curate</b>" in page.text


def test_the_description_gives_the_statuses_of_refused_requests(tmp_path: Path) -> None:
    client, _ = _app(tmp_path)
    document = client.get("/openapi.json").json()
    for path, methods in document["paths"].items():
        for method, op in methods.items():
            said = op["responses"]
            if any(p["in"] == "query" for p in op["parameters"]) and path != "/oai":  # OAI-PMH: 200, badArgument
                assert "given more than once" in said["400"]["description"], (method, path)
            # every operation that reads a body says what a body too slow gets (pdi.server.process.limits.BodyDeadline)
            assert ("408" in said) == ("requestBody" in op), (method, path)
    batch = document["paths"]["/api/batch"]["post"]["responses"]
    assert "cut short before its closing boundary" in batch["400"]["description"]
    assert "Content-Length" in batch["400"]["description"]
    assert "OPTIONS" in document["info"]["description"] and "Allow" in document["info"]["description"]


def test_every_answer_has_its_media_type_and_every_error_is_a_problem(tmp_path: Path) -> None:
    client, _ = _app(tmp_path)
    document = client.get("/openapi.json").json()
    problem = document["components"]["schemas"]["Problem"]
    assert set(problem["required"]) == {"type", "title", "status", "detail"}  # RFC 9457 §3.1, as problems.py writes
    for path, methods in document["paths"].items():
        for method, op in methods.items():
            where = f"{method.upper()} {path}"
            assert "405" in op["responses"], where  # every route answers a method it has not
            assert op["responses"]["405"]["headers"]["Allow"]["required"] is True, where  # RFC 9110 §15.5.6
            for status, answer in op["responses"].items():
                if status == "416":  # RFC 9110 §15.5.17: of a Range, Content-Range says the length, a problem;
                    # of a fragment wholly past the end, a problem saying so (pdi get's exit 9)
                    assert answer["content"] == {"application/problem+json": {
                        "schema": {"$ref": "#/components/schemas/Problem"}}}, where
                    assert "Content-Range" in answer["description"] and "past the end" in answer["description"], where
                elif int(status) >= 400:
                    assert answer["content"]["application/problem+json"] == {
                        "schema": {"$ref": "#/components/schemas/Problem"}}, where
                    # past the connection limit uvicorn answers 503 itself, as text
                    assert set(answer["content"]) == (
                        {"application/problem+json", "text/plain"} if status == "503" else {"application/problem+json"}
                    ), where
                elif status not in ("204", "302", "304") and method != "options":
                    # a redirect, No Content, Not Modified and OPTIONS's answer have no body either
                    assert len(answer["content"]) == 1, where
            if op.get("security"):
                assert {"401", "403"} <= set(op["responses"]), where
                # RFC 6750 §3: a 401 carries the challenge
                assert op["responses"]["401"]["headers"]["WWW-Authenticate"]["required"] is True, where
    assert document["paths"]["/api/deposit"]["post"]["responses"]["201"]["headers"]["Location"]["required"] is True
    gate = document["paths"]["/timegate/{target}"]["get"]["responses"]["302"]["headers"]
    assert {name for name, field in gate.items() if field["required"]} == {"Location", "Vary", "Link"}  # RFC 7089 §4.1.1


def test_oai_pmh_takes_any_query_and_answers_200_xml(tmp_path: Path) -> None:
    # OAI-PMH §3.6: a wrong request is answered 200 with an <error> element, so no query is refused
    client, _ = _app(tmp_path)
    document = client.get("/openapi.json").json()
    for method in ("get", "post"):
        op = document["paths"]["/oai"][method]
        assert not [p for p in op["parameters"] if p["required"]]
        (free,) = op["parameters"]
        assert free["in"] == "query" and free["style"] == "form" and free["explode"] is True
        assert free["schema"] == {"type": "object"}
        assert set(op["responses"]["200"]["content"]) == {"text/xml"}
        assert not {"404", "422"} & set(op["responses"])  # OAI-PMH's own errors are 200 XML
        assert "Authorization: Bearer without a token" in op["responses"]["400"]["description"]
    answer = client.get("/oai", params={"verb": "NoSuchVerb", "odd": "x"})
    assert answer.status_code == 200 and "badVerb" in answer.text


def test_the_limits_the_server_enforces_are_described(tmp_path: Path) -> None:
    from pdi.archive import MAX_SEARCH_LIMIT
    from pdi.server.protocol.resolver import MAX_LIST

    client, _ = _app(tmp_path)
    paths = client.get("/openapi.json").json()["paths"]

    def schema(path: str, method: str, name: str) -> dict[str, object]:
        (found,) = [p["schema"] for p in paths[path][method]["parameters"] if p["name"] == name]
        return found

    def number(path: str, method: str, name: str) -> dict[str, object]:
        # empty is absent (the default), else an integer within the limits
        empty, given = schema(path, method, name)["anyOf"]  # type: ignore[misc]
        assert empty == {"type": "string", "maxLength": 0}
        return given  # type: ignore[no-any-return]

    assert number("/api/ls", "get", "limit") == {"type": "integer", "minimum": 1, "maximum": MAX_LIST}
    assert number("/api/search", "get", "limit") == {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT}
    assert number("/api/audit", "get", "limit") == {"type": "integer", "minimum": 1, "maximum": 10_000}
    assert client.get("/api/search", params={"q": "x", "limit": ""}).status_code == 200
    # a required name may not be empty; an optional one empty is absent
    assert schema("/api/resolve", "get", "pdi")["minLength"] == 1
    assert {"type": "string", "maxLength": 0} in schema("/api/ls", "get", "series")["anyOf"]  # type: ignore[operator]
    over = client.get("/api/ls", params={"limit": str(MAX_LIST + 1)})
    # a number out of its range is the client's choice, not content too large (RFC 9110 §15.5.14): 400
    assert over.status_code == 400 and over.headers["content-type"] == "application/problem+json"


def test_the_description_says_which_routes_a_script_of_another_origin_reads(tmp_path: Path) -> None:
    """``x-pdi-cors`` marks exactly the operations a browser lets another origin's script call (a preflight asking
    its method passes, judged by ``fetch_cors``, written from the Fetch standard), each answer of those names the
    CORS fields, and the description says what they are; with ``--cors-origin none`` no operation is marked."""
    from fetch_cors import Answer as Fetched
    from fetch_cors import preflight_passes, preflight_request

    from pdi.server.http.cors import CrossOrigin

    client, _ = _app(tmp_path)
    document = client.get("/openapi.json").json()
    validate(document)
    origin = "https://reader.example.org"
    marked, passed = set(), set()
    for path, methods in document["paths"].items():
        url = re.sub(r"\{service\}", "N2R", re.sub(r"\{(\w+)\}", "x", path))
        for method, op in methods.items():
            if op.get("x-pdi-cors"):
                marked.add((method, path))
                for status, answer in op["responses"].items():
                    said = answer.get("headers", {})
                    assert {"Access-Control-Allow-Origin", "Access-Control-Expose-Headers"} <= set(said), (path, status)
            fields = [("Accept-Datetime", "Thu, 01 Jan 2099 00:00:00 GMT")]
            pre = client.options(url, headers=dict(preflight_request(origin, method.upper(), fields)))
            if preflight_passes(origin, "same-origin", method.upper(), fields,
                                Fetched(pre.status_code, pre.headers.multi_items())):
                passed.add((method, path))
    assert marked == passed and ("get", "/api/resolve") in marked and ("post", "/api/deposit") not in marked
    assert "x-pdi-cors" in document["info"]["description"]
    assert "Access-Control-Allow-Origin" in document["info"]["description"]
    location = tmp_path / "archive"
    closed = TestClient(create_app(str(location), cors=CrossOrigin.parse(["none"]))).get("/openapi.json").json()
    assert not [op for methods in closed["paths"].values() for op in methods.values() if "x-pdi-cors" in op]
    assert "no CORS fields" in closed["info"]["description"]
