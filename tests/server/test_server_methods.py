"""``OPTIONS`` and every ``405`` list exactly the methods a path answers (RFC 9110 §9.3.7, §10.2.1, §15.5.6).

No method list is written here: each route of the app is tried with every
method of RFC 9110 §9, and the methods that do not answer ``405`` are the ones
``Allow`` must list, whichever route of several serves them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient
from starlette.types import ASGIApp

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.replay.origin import create_replay_app

#: RFC 9110 §9.3's methods but CONNECT (which names a host, not a path), and one no route takes.
METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "TRACE", "PATCH")


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ASGIApp]]:
    location = tmp_path_factory.mktemp("methods") / "archive"
    archive = Archive.init(location)
    archive.add_series("library.example.us")
    try:
        yield {"resolver": create_app(str(location), archive=archive),
               "replay": create_replay_app(str(location), archive=archive)}
    finally:
        archive.close()


def _concrete(path: str) -> str:
    return re.sub(r"\{(\w+)(:\w+)?\}", "x", path)


def _walk(app: ASGIApp) -> list[tuple[str, dict[str, tuple[int, str | None]]]]:
    client = TestClient(app, raise_server_exceptions=False)
    found = []
    inner = app if isinstance(app, Starlette) else app.app  # type: ignore[attr-defined]  # replay's guard
    for path in dict.fromkeys(_concrete(r.path) for r in inner.routes if isinstance(r, Route)):
        answers = {}
        for method in METHODS:
            answer = client.request(method, path, content=b"")
            answers[method] = (answer.status_code, answer.headers.get("allow"))
        found.append((path, answers))
    return found


@pytest.mark.parametrize("which", ["resolver", "replay"])
def test_options_and_405_list_every_method_that_answers_on_every_route(apps: dict[str, ASGIApp], which: str) -> None:
    walked = _walk(apps[which])
    assert len(walked) >= (20 if which == "resolver" else 2)
    for path, answers in walked:
        answering = {m for m, (status, _) in answers.items() if status != 405}
        assert {"GET", "HEAD"} <= answering or "POST" in answering, (path, answers)
        status, allow = answers["OPTIONS"]
        # RFC 9110 §9.3.7: a successful OPTIONS (204 from the middleware; 200 from the annotation server,
        # which answers it itself with its Link types and CORS) lists the methods in Allow
        assert status in (200, 204) and allow is not None, (path, answers["OPTIONS"])
        listed = allow.split(", ")
        assert set(listed) == answering and len(listed) == len(answering), (path, allow, answering)
        for method, (status, allow) in answers.items():
            if status == 405:
                assert allow is not None and set(allow.split(", ")) == answering, (path, method, allow, answering)


def test_a_path_two_routes_serve_lists_both_routes_methods(apps: dict[str, ASGIApp]) -> None:
    client = TestClient(apps["resolver"])
    for path in ("/api/annotation", "/signin"):
        refused = client.request("DELETE", path)
        assert refused.status_code == 405
        assert refused.headers["allow"] == "GET, HEAD, POST, OPTIONS"
        assert refused.json()["detail"] == "DELETE is not allowed here: use GET, HEAD, POST, OPTIONS"
        assert client.options(path).headers["allow"] == "GET, HEAD, POST, OPTIONS"
    # a path no route serves is not found, whatever the method
    assert client.options("/no/such/page").status_code == 404


def test_options_answers_without_a_body(tmp_path: Path) -> None:
    Archive.init(tmp_path / "a").close()
    answer = TestClient(create_app(str(tmp_path / "a"))).options("/api/deposit")
    assert answer.status_code == 204 and answer.content == b"" and answer.headers["allow"] == "POST, OPTIONS"


def test_options_asterisk_lists_the_methods_of_the_whole_server(tmp_path: Path) -> None:
    """RFC 9110 §9.3.7: ``OPTIONS *`` asks about the server, not a resource: every method some route answers."""
    import socket

    from server_helpers import in_thread

    Archive.init(str(tmp_path / "a")).close()
    app = create_app(str(tmp_path / "a"))
    with in_thread(app, host="127.0.0.1", port=0, log_level="warning") as server:
        port = server.servers[0].sockets[0].getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(b"OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = b""
            while piece := conn.recv(65536):
                answer += piece
    head = answer.decode("latin-1").split("\r\n")
    assert head[0] == "HTTP/1.1 204 No Content"
    allowed = next(line.split(":", 1)[1].strip() for line in head if line.lower().startswith("allow:"))
    client = TestClient(app)
    answering = {m for m in METHODS if m != "OPTIONS" and any(
        client.request(m, path).status_code != 405 for path in ("/api/deposit", "/api/annotations/x", "/"))}
    assert set(allowed.split(", ")) == answering | {"OPTIONS"}


@pytest.mark.parametrize("which", ["resolver", "replay"])
def test_rfc9110_8_6_a_head_says_the_content_length_its_get_would_send_on_every_route(
    apps: dict[str, ASGIApp], which: str,
) -> None:
    """RFC 9110 §8.6: a ``Content-Length`` in an answer to ``HEAD`` MUST equal the octets the same request's ``GET``
    would send; and §9.3.2, the same fields: so a ``405`` to both (a route that takes only ``POST``) too."""
    client = TestClient(apps[which], raise_server_exceptions=False)
    inner = apps[which] if isinstance(apps[which], Starlette) else apps[which].app  # type: ignore[attr-defined]
    for path in dict.fromkeys(_concrete(r.path) for r in inner.routes if isinstance(r, Route)):
        got, head = client.get(path), client.head(path)
        assert head.status_code == got.status_code, (path, got.status_code, head.status_code)
        if "content-length" in head.headers:
            assert int(head.headers["content-length"]) == len(got.content), (path, got.status_code, got.text)
