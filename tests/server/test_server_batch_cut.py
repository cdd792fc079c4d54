"""``POST /api/batch`` with a body that is not whole: a 400 saying what was wrong, and nothing deposited.

The bodies are encoded by httpx (an independent multipart/form-data writer);
where one is whole is RFC 2046 §5.1.1's rule: after its close-delimiter
(``--boundary--``). Every cut before that is refused, through Starlette's
test client (hypothesis over the offsets) and over a real socket to uvicorn
(a body cut at its Content-Length, and a client that promises more octets
than it sends and goes away).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from server_helpers import in_thread
from starlette.testclient import TestClient
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pdi.archive import Archive
from pdi.server import create_app

S = "library.example.us"


def _encoded(manifest: bool = True) -> tuple[bytes, str]:
    """A batch of three items (and a manifest) as httpx encodes it: the body and its Content-Type."""
    request = httpx.Request(
        "POST", "http://x/api/batch", data={"manifest": json.dumps([{}, {"id": "second"}, {}])} if manifest else {},
        files=[("item", ("a.txt", b"first item\r\n" * 40, "text/plain")),
               ("item", ("b.html", b"<!DOCTYPE html><title>b</title><p>second item", "text/html")),
               ("item", ("c.txt", b"third item\n", "text/plain"))],
    )
    return request.read(), request.headers["content-type"]


BODY, KIND = _encoded()
BOUNDARY = KIND.split("boundary=", 1)[1].encode()
#: Where the body is whole: just after its close-delimiter (RFC 2046 §5.1.1).
WHOLE = BODY.index(b"--" + BOUNDARY + b"--") + len(BOUNDARY) + 4


def snapshot(archive: Archive) -> object:
    store = archive.store
    return (list(store.iter_representations()), sorted(store.blob_names()),
            [(e.action, e.subject) for e in store.audit_log()])


class Recorded:
    """The resolver's app, noting the status of each answer it gives (even to a client that has gone)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.statuses: list[int] = []
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.statuses.append(message["status"])
            elif message["type"] == "http.response.body" and scope["path"] == "/api/batch":
                self.bodies.append(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, noting)


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Archive, str, TestClient]]:
    location = tmp_path_factory.mktemp("batch") / "archive"
    archive = Archive.init(location)
    archive.add_series(S)
    _, token = archive.add_token("depositor", role="deposit", series=[S])
    try:
        yield archive, token, TestClient(create_app(str(location), archive=archive))
    finally:
        archive.close()


def _post(client: TestClient, token: str, body: bytes) -> httpx.Response:
    return client.post(f"/api/batch?series={S}", content=body,
                       headers={"Authorization": f"Bearer {token}", "Content-Type": KIND})


#: The same items without a manifest: a body cut short in its last part had been taken for a batch of two.
PLAIN, PLAIN_KIND = _encoded(manifest=False)
PLAIN_WHOLE = PLAIN.index(b"--" + PLAIN_KIND.split("boundary=", 1)[1].encode() + b"--") \
    + len(PLAIN_KIND.split("boundary=", 1)[1]) + 4


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, PLAIN_WHOLE - 1))
@example(PLAIN.index(b"third item") + 3)  # in the last part's data: parts 1 and 2 are whole
def test_without_a_manifest_too_a_cut_body_is_a_400_not_a_batch_of_fewer_items(
    batch: tuple[Archive, str, TestClient], cut: int,
) -> None:
    archive, token, client = batch
    before = snapshot(archive)
    answer = client.post(f"/api/batch?series={S}", content=PLAIN[:cut],
                         headers={"Authorization": f"Bearer {token}", "Content-Type": PLAIN_KIND})
    assert answer.status_code == 400, (cut, answer.status_code, answer.text)
    assert "multipart" in answer.json()["detail"] and "nothing was deposited" in answer.json()["detail"]
    assert snapshot(archive) == before


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, WHOLE - 1))
@example(WHOLE - 1)  # the last "-" of the close-delimiter
@example(WHOLE - 2)  # "--boundary-": one "-" short
@example(WHOLE - 4 - len(BOUNDARY))  # all the parts, then nothing: the closing boundary missing
@example(BODY.index(b"third item"))  # in the last part's data
@example(BODY.rindex(b"Content-Type: text/plain"))  # in the last part's headers
@example(0)
def test_a_body_cut_anywhere_before_its_closing_boundary_is_a_400_and_deposits_nothing(
    batch: tuple[Archive, str, TestClient], cut: int,
) -> None:
    archive, token, client = batch
    before = snapshot(archive)
    answer = _post(client, token, BODY[:cut])
    assert answer.status_code == 400, (cut, answer.status_code, answer.text)
    problem = answer.json()
    assert answer.headers["content-type"] == "application/problem+json"
    assert "multipart" in problem["detail"] and "nothing was deposited" in problem["detail"], problem
    assert snapshot(archive) == before


def test_what_is_cut_is_named(batch: tuple[Archive, str, TestClient]) -> None:
    _, token, client = batch
    for cut, said in [
        # the CRLF before a boundary is the delimiter's (RFC 2046 §5.1.1): until "--" ends it, a part goes on
        (WHOLE - 4 - len(BOUNDARY), "ends in the data of part 4"),
        (WHOLE - 1, "ends in the data of part 4"),
        (BODY.index(b"third item"), "ends in the data of part 4"),
        (BODY.rindex(b"Content-Type: text/plain"), "ends in the headers of part 4"),
        (0, "ends before its first boundary"),
    ]:
        detail = _post(client, token, BODY[:cut]).json()["detail"]
        assert said in detail and f"after {cut} octet" in detail and "without its closing boundary" in detail, detail


@pytest.mark.parametrize("end", [WHOLE, WHOLE + 1, len(BODY)])
def test_a_body_whole_up_to_its_closing_boundary_deposits_every_item(tmp_path: Path, end: int) -> None:
    # what follows the close-delimiter (a CRLF, an epilogue) may be missing: it is not part of any item
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        _, token = archive.add_token("depositor", role="deposit", series=[S])
        answer = _post(TestClient(create_app(str(tmp_path / "archive"), archive=archive)), token, BODY[:end])
        assert answer.status_code == 201, answer.text
        assert len(answer.json()["items"]) == 3


def test_a_malformed_body_is_a_400_naming_it(batch: tuple[Archive, str, TestClient]) -> None:
    archive, token, client = batch
    before = snapshot(archive)
    header_end = BODY.index(b"\r\n\r\n")
    broken = BODY[:header_end] + b"\r\nno colon in this header line" + BODY[header_end:]
    answer = _post(client, token, broken)
    assert answer.status_code == 400 and "malformed" in answer.json()["detail"], answer.text
    assert snapshot(archive) == before


@pytest.mark.parametrize(("broken", "where"), [
    # the third part's headers (httpx writes the manifest field first): a header line with no colon (RFC 5322 §2.2)
    (lambda body: body.replace(b'filename="b.html"\r\n', b'filename="b.html"\r\nno colon here\r\n'),
     "in the headers of part 3"),
    # a boundary that is not the one the Content-Type names: the body never begins
    (lambda body: body.replace(BOUNDARY, BOUNDARY[:-1] + b"X"), "before its first boundary"),
])
def test_a_malformed_body_is_named_with_the_part_where_it_broke(batch: tuple[Archive, str, TestClient],
                                                                broken: Any, where: str) -> None:
    archive, token, client = batch
    before = snapshot(archive)
    answer = _post(client, token, broken(BODY))
    assert answer.status_code == 400 and where in answer.json()["detail"], answer.text
    assert snapshot(archive) == before


def test_a_client_that_goes_away_before_its_content_length_deposits_nothing(
    batch: tuple[Archive, str, TestClient],
) -> None:
    # the ASGI server says the client went away (http.disconnect) after half the body
    archive, token, client = batch
    app = client.app
    before = snapshot(archive)
    sent: list[Message] = []
    pieces: list[Message] = [{"type": "http.request", "body": BODY[: len(BODY) // 2], "more_body": True},
                             {"type": "http.disconnect"}]

    async def receive() -> Message:
        return pieces.pop(0) if pieces else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    scope: dict[str, Any] = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": "/api/batch", "raw_path": b"/api/batch", "query_string": f"series={S}".encode(), "root_path": "",
        "headers": [(b"host", b"x"), (b"authorization", f"Bearer {token}".encode()),
                    (b"content-type", KIND.encode()), (b"content-length", str(len(BODY)).encode())],
        "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
    }
    import anyio

    anyio.run(app, scope, receive, send)
    assert sent[0]["status"] == 400
    detail = json.loads(sent[1]["body"])["detail"]
    assert f"the body ended after {len(BODY) // 2} octets of the {len(BODY)} its Content-Length promised" in detail
    assert snapshot(archive) == before


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[Archive, str, int, Recorded]]:
    location = tmp_path / "archive"
    archive = Archive.init(location)
    archive.add_series(S)
    _, token = archive.add_token("depositor", role="deposit", series=[S])
    app = Recorded(create_app(str(location), archive=archive))
    try:
        with in_thread(app, host="127.0.0.1", port=0, log_level="warning") as server:
            yield archive, token, server.servers[0].sockets[0].getsockname()[1], app
    finally:
        archive.close()


def _head(token: str, length: int) -> bytes:
    return (f"POST /api/batch?series={S} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: {KIND}\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n").encode()


def _read_all(sock: socket.socket) -> bytes:
    sock.settimeout(30)
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize("cut", [WHOLE - 4 - len(BOUNDARY), BODY.index(b"third item"), WHOLE - 1])
def test_over_a_socket_a_body_cut_at_its_content_length_is_a_400(
    live: tuple[Archive, str, int, Recorded], cut: int,
) -> None:
    archive, token, port, _ = live
    before = snapshot(archive)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(_head(token, cut) + BODY[:cut])
        answer = _read_all(sock)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert b"application/problem+json" in answer and b"without its closing boundary" in answer
    assert snapshot(archive) == before
    with socket.create_connection(("127.0.0.1", port)) as sock:  # and the whole body, the same way, is taken
        sock.sendall(_head(token, len(BODY)) + BODY)
        assert _read_all(sock).startswith(b"HTTP/1.1 201 ")


def test_over_a_socket_a_client_that_promises_more_and_closes_deposits_nothing(
    live: tuple[Archive, str, int, Recorded],
) -> None:
    archive, token, port, app = live
    before = snapshot(archive)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(_head(token, len(BODY) + 1000) + BODY)  # every part and the closing boundary, 1000 short
        time.sleep(0.3)
    # the connection is closed: the server's answer (to nobody) says why, and nothing was kept
    deadline = time.monotonic() + 20
    while not app.statuses:
        assert time.monotonic() < deadline, "the server did not finish the request"
        time.sleep(0.05)
    assert app.statuses == [400]
    assert b"its Content-Length promised" in b"".join(app.bodies)
    assert snapshot(archive) == before
    assert httpx.get(f"http://127.0.0.1:{port}/api/series").status_code == 200
