"""The write API's ``Content-Length`` (and that of every body read whole) read as ASCII digits (RFC 9110 §8.6,
``1*DIGIT``). Found by an attack
(2026-11-27): it was taken for a number when ``str.isdigit`` said so, true of ``²`` (Starlette reads a field's
octets as Latin-1: B2 is ``²``), which ``int()`` refuses, as it refuses more than 4,300 ASCII digits: a
``ValueError``, a 500.

Whether it was reachable: ``pdi serve``'s HTTP parser (httptools) answers such a request ``400`` before the
application sees it (shown here over a socket); the application served by another ASGI server, which passes a
header's octets on as they came (called as one here), reached it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from server_helpers import serving
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app

S = "library.example.us"


@pytest.fixture
def deposit(tmp_path: Path) -> tuple[Path, str]:
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        _, token = archive.add_token("depositor", role="deposit", series=[S])
    return location, token


LENGTHS = [b"\xb2", b"9" * 5000]


def test_pdi_serve_answers_such_a_length_400_before_the_application(deposit: tuple[Path, str]) -> None:
    location, token = deposit
    with serving(location, "--max-upload-mib", "1") as (_, port):
        for length in LENGTHS:
            with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
                conn.sendall(b"POST /api/deposit?series=" + S.encode() + b"&format=octet-stream HTTP/1.1\r\n"
                             b"Host: 127.0.0.1\r\nAuthorization: Bearer " + token.encode() + b"\r\n"
                             b"Content-Length: " + length + b"\r\n\r\nabc")
                answer = b""
                while chunk := conn.recv(65536):
                    answer += chunk
            assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]


async def _asgi_post(app: object, path: str, query: str, headers: list[tuple[bytes, bytes]], body: bytes
                     ) -> tuple[int, bytes]:
    """A POST sent to ``app`` as an ASGI server would pass it, each header's octets as they are."""
    sent: list[dict[str, object]] = []
    given = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, object]:
        return given.pop(0) if given else {"type": "http.disconnect"}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": query.encode(), "root_path": "",
             "headers": headers, "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000)}
    await app(scope, receive, send)  # type: ignore[operator]
    status = next(int(m["status"]) for m in sent if m["type"] == "http.response.start")  # type: ignore[call-overload]
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")  # type: ignore[misc]


@pytest.mark.parametrize(("length", "status", "detail"), [
    (b"\xb2", 400, "the Content-Length '²' is not a number of octets (RFC 9110 §8.6: ASCII digits) (rule"
                   " Content-Length)"),
    (b"9" * 5000, 413, "the body of a 5,000-digit number of octets is more than this server takes, 1,048,576 octets"
                       " (pdi serve --max-upload-mib 1)"),
])
def test_an_asgi_call_with_such_a_length_is_refused_saying_why(
        deposit: tuple[Path, str], length: bytes, status: int, detail: str) -> None:
    import json

    location, token = deposit
    app = create_app(str(location), archive=Archive.open(location), max_upload=1 << 20)
    with TestClient(app, raise_server_exceptions=False) as client:  # its lifespan started, then called as ASGI
        for path, query in (("/api/deposit", f"series={S}&format=octet-stream"), ("/api/batch", f"series={S}")):
            headers = [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {token}".encode()),
                       (b"content-length", length), (b"content-type", b"multipart/form-data; boundary=x")]
            told, body = client.portal.call(_asgi_post, app, path, query, headers, b"abc")  # type: ignore[union-attr]
            assert told == status, body
            assert json.loads(body)["detail"] == detail
    with Archive.open(location) as archive:
        assert list(archive.store.iter_representations()) == []


@pytest.mark.parametrize(("path", "kind"), [("/oai", b"application/x-www-form-urlencoded"),
                                            ("/api/octets", b"application/json"),
                                            ("/api/annotation", b"application/json")])
def test_a_small_body_of_many_digits_length_is_413_too(deposit: tuple[Path, str], path: str, kind: bytes) -> None:
    # the bodies read whole (pdi.server.http.bodies), not only the write API's: 5,000 digits are more than any bound
    import json

    location, _ = deposit
    app = create_app(str(location), archive=Archive.open(location))
    with TestClient(app, raise_server_exceptions=False) as client:
        for length, status in ((b"9" * 5000, 413), (b"0" * 5000 + b"3", 200)):
            headers = [(b"host", b"127.0.0.1"), (b"content-length", length), (b"content-type", kind)]
            told, body = client.portal.call(_asgi_post, app, path, "", headers, b"abc")  # type: ignore[union-attr]
            if status == 413:
                assert told == 413 and json.loads(body)["status"] == 413, body
            else:  # leading zeros: 3 octets, within the bound; read, and answered as that body deserves (not 413, 500)
                assert told not in (413, 500), body
