"""A client that goes away before its body is whole is refused (400), on every route that reads a body, not an error
of the server (500 with a traceback in the log) nor of its storage (503, counted as a store error); nothing is
changed (found by a probe of `pdi serve`, 2026-11-30: `POST /oai` and `POST /api/annotation` answered 500)."""

from __future__ import annotations

import json
import signal
import socket
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from server_helpers import start_serve, stop, wait_answering
from starlette.types import Message

from pdi.archive import Archive
from pdi.server import create_app

S = "cut.example.us"

#: Route, query, content type and the first octets of a body whose Content-Length promises 100; a token needed.
ROUTES = [
    ("/oai", "", "application/x-www-form-urlencoded", b"verb=", False),
    ("/api/annotation", "", "application/json", b'{"type": "Annot', False),
    ("/api/statements", "pdi=NAME&key=dc:title", "text/plain; charset=utf-8", b"A tit", True),
    ("/api/withdraw", "pdi=NAME", "text/plain; charset=utf-8", b"a reas", True),
    ("/api/deposit", f"series={S}&format=text", "text/plain; charset=utf-8", b"half a te", True),
    ("/api/octets", "", "application/json", b'{"names": [', False),
]


@pytest.fixture
def filled(tmp_path: Path) -> tuple[Path, str, str]:
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"Kept as it is.\n", format="text"))
        _, token = archive.add_token("writer", role="deposit", series=[S])
    return location, name, token


def _state(location: Path, name: str) -> object:
    """What a refused request must leave as it was: names, blobs, the audit log, the name's statements, annotations."""
    with Archive.open(location) as archive:
        store = archive.store
        return (list(store.iter_representations()), sorted(store.blob_names()),
                [(e.action, e.subject) for e in store.audit_log()], archive.history(name), archive.annotations())


def _head(kind: str, token: str | None) -> list[tuple[bytes, bytes]]:
    fields = [(b"host", b"x"), (b"content-type", kind.encode()), (b"content-length", b"100")]
    if token is not None:
        fields.append((b"authorization", f"Bearer {token}".encode()))
    return fields


@pytest.mark.parametrize(("path", "query", "kind", "first", "needs_token"), ROUTES)
def test_a_body_cut_short_is_refused_and_changes_nothing(filled: tuple[Path, str, str], path: str, query: str,
                                                         kind: str, first: bytes, needs_token: bool) -> None:
    location, name, token = filled
    before = _state(location, name)
    query = query.replace("NAME", name)
    pieces: list[Message] = [{"type": "http.request", "body": first, "more_body": True}, {"type": "http.disconnect"}]
    sent: list[Message] = []

    async def receive() -> Message:
        return pieces.pop(0) if pieces else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    scope: dict[str, Any] = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": query.encode(), "root_path": "",
        "headers": _head(kind, token if needs_token else None),
        "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
    }
    with Archive.open(location) as archive:
        anyio.run(create_app(str(location), archive=archive), scope, receive, send)
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 400, sent
    detail = json.loads(b"".join(m.get("body", b"") for m in sent[1:]))["detail"]
    assert (f"the body ended after {len(first)} octets of the 100 its Content-Length promised: the client went away"
            in detail), detail
    assert _state(location, name) == before


def test_a_served_route_logs_no_traceback_for_a_client_gone(filled: tuple[Path, str, str]) -> None:
    location, name, token = filled
    process, port, _ = start_serve(location, "--workers", "1", "--replay-port", "0", start_new_session=True)
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        for path, query, kind, first, needs_token in ROUTES:
            target = path + ("?" + query.replace("NAME", name) if query else "")
            head = (f"POST {target} HTTP/1.1\r\nHost: x\r\nContent-Type: {kind}\r\nContent-Length: 100\r\n"
                    + (f"Authorization: Bearer {token}\r\n" if needs_token else "") + "\r\n")
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(head.encode() + first)
                sock.shutdown(socket.SHUT_WR)
                while sock.recv(65536):  # whatever it answers, to the end (the server closes)
                    pass
        time.sleep(0.5)  # the worker's log lines of those requests written
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        assert process.stderr is not None
        log = process.stderr.read()
        stop(process)
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log[-3000:]
    assert "storage error" not in log, log[-3000:]
