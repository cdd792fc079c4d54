"""Request content in a content coding (``Content-Encoding: gzip``, ``br`` …) is refused, never stored coded.

RFC 9110 §8.4: the representation is the data with its codings undone; §15.5.16 and §12.5.3: a server that
refuses a request for its coding answers ``415`` with ``Accept-Encoding``. The archive is compared before and
after: nothing was minted.
"""

from __future__ import annotations

import gzip
import socket
from pathlib import Path

import pytest
from server_helpers import ELSEWHERE, Served, on_own_protocol, read_response
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app

S = "library.example.us"


@pytest.fixture
def client(tmp_path: Path) -> tuple[TestClient, Archive, str]:
    archive = Archive.init(str(tmp_path / "archive"))
    archive.add_series(S)
    _, token = archive.add_token("depositor", role="deposit", series=[S])
    return TestClient(create_app(str(tmp_path / "archive"), archive=archive)), archive, token


@pytest.mark.parametrize("coding", ["gzip", "br", "deflate, gzip", "identity, gzip", "x-unknown"])
def test_a_deposit_in_a_content_coding_is_415_and_mints_nothing(
    client: tuple[TestClient, Archive, str], coding: str,
) -> None:
    http, archive, token = client
    body = gzip.compress(b"the declaration\n")
    answer = http.post(f"/api/deposit?series={S}&format=text", content=body, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "text/plain", "Content-Encoding": coding})
    assert answer.status_code == 415, answer.text
    assert answer.headers["accept-encoding"] == "identity"
    assert answer.headers["content-type"] == "application/problem+json"
    said = answer.json()
    assert said["status"] == 415 and "content coding" in said["detail"]
    assert coding.split(",")[-1].strip() in said["detail"]
    assert archive.ls() == []


def test_identity_or_no_coding_is_kept_as_sent(client: tuple[TestClient, Archive, str]) -> None:
    http, archive, token = client
    for coding in ({"Content-Encoding": "identity"}, {}):
        answer = http.post(f"/api/deposit?series={S}&format=text", content=b"plain words\n", headers={
            "Authorization": f"Bearer {token}", "Content-Type": "text/plain", **coding})
        assert answer.status_code == 201, answer.text
    names = archive.ls()
    assert len(names) == 2 and all(archive.get(str(n)).data == b"plain words\n" for n in names)


def test_a_get_naming_a_coding_sends_no_content_and_is_answered(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", int(served.url.rsplit(":", 1)[1]))) as conn:
        conn.sendall(b"GET /api/series HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\n\r\n")
        head = read_response(conn, bytearray())
    assert head.startswith(b"HTTP/1.1 200 "), head[:200]


def test_the_connection_closes_after_the_refusal_whose_body_was_not_read(served: Served) -> None:
    body = gzip.compress(b"x" * 1000)
    request = (f"POST /api/deposit?series={S} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
               f"Content-Encoding: gzip\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
    with socket.create_connection(("127.0.0.1", int(served.url.rsplit(":", 1)[1]))) as conn:
        conn.sendall(request)
        head = read_response(conn, bytearray())
        assert head.startswith(b"HTTP/1.1 415 "), head[:200]
        assert b"\r\naccept-encoding: identity\r\n" in head.lower()
        conn.settimeout(10)
        assert conn.recv(1) == b""  # closed by the server


@pytest.mark.parametrize("coding", ["gzip, chunked", "deflate,chunked", "x-unknown ; q=1, chunked"])
def test_a_deposit_in_a_transfer_coding_other_than_chunked_is_501_and_mints_nothing(
    served: Served, coding: str,
) -> None:
    # RFC 9112 §6.1: a transfer coding the server does not understand is answered 501; the HTTP parser undoes
    # chunked alone, so the octets would be kept still coded, under a name that never changes
    _, token = served.archive.add_token(f"coded-{len(coding)}", role="deposit", series=[ELSEWHERE])
    before = served.archive.ls(series=ELSEWHERE)
    body = gzip.compress(b"the declaration\n")
    request = (f"POST /api/deposit?series={ELSEWHERE}&format=text HTTP/1.1\r\nHost: x\r\n"
               f"Authorization: Bearer {token}\r\nContent-Type: text/plain\r\nTransfer-Encoding: {coding}\r\n\r\n"
               ).encode() + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    with socket.create_connection(("127.0.0.1", int(served.url.rsplit(":", 1)[1]))) as conn:
        conn.sendall(request)
        head = read_response(conn, bytearray())
        conn.settimeout(10)
        assert conn.recv(1) == b""  # closed by the server: the body was not read
    assert head.startswith(b"HTTP/1.1 501 "), head[:300]
    assert b"transfer coding '" + coding.split(",")[0].split(";")[0].strip().encode() + b"'" in head  # quoted
    assert served.archive.ls(series=ELSEWHERE) == before


_UNFRAMED = b"not chunked, so where its content ends cannot be told (RFC 9112 \xc2\xa76.3)"


#: What the HTTP parser (llhttp) says of such a head when it refuses it itself, before the app's check: for a
#: request whose content it reads on, the refusal is answered at once in its words (its octets are not read on).
_PARSER = b"invalid `transfer-encoding`"


@pytest.mark.parametrize(("coding", "said"), [
    ("gzip", _UNFRAMED), ("xchunked", _UNFRAMED), ("chunked, gzip", _PARSER),
])
def test_a_deposit_whose_last_transfer_coding_is_not_chunked_is_400_and_mints_nothing(
    served: Served, coding: str, said: bytes,
) -> None:
    """RFC 9112 §6.3 (4): "If a Transfer-Encoding header field is present in a request and the chunked transfer
    coding is not the final encoding, the message body length cannot be determined reliably; the server MUST
    respond with the 400 (Bad Request) status code and then close the connection" (found in review, 2026-11-27:
    it was 501)."""
    _, token = served.archive.add_token(f"unframed-{len(coding)}", role="deposit", series=[ELSEWHERE])
    before = served.archive.ls(series=ELSEWHERE)
    request = (f"POST /api/deposit?series={ELSEWHERE}&format=text HTTP/1.1\r\nHost: x\r\n"
               f"Authorization: Bearer {token}\r\nContent-Type: text/plain\r\nTransfer-Encoding: {coding}\r\n\r\n"
               ).encode() + gzip.compress(b"the declaration\n")
    # pdi serve's own protocol (uvicorn's refuses such a head itself, in plain text). httptools' llhttp refuses a
    # request's Transfer-Encoding that does not end in chunked as it reads the head, and the refusal is answered at
    # once in its words; pdi's own check (ContentCodings) answers in the app's, for a parser that lets it through
    with on_own_protocol(create_app(served.archive.location)) as url, \
            socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1]))) as conn:
        conn.sendall(request)
        head = read_response(conn, bytearray())
        conn.settimeout(10)
        assert conn.recv(1) == b""  # closed by the server
    assert head.startswith(b"HTTP/1.1 400 "), head[:300]
    assert b"application/problem+json" in head, head
    assert said in head or _PARSER in head.lower(), head
    assert served.archive.ls(series=ELSEWHERE) == before


def test_a_chunked_deposit_is_kept_as_sent(served: Served) -> None:
    _, token = served.archive.add_token("chunked-depositor", role="deposit", series=[ELSEWHERE])
    before = {str(n) for n in served.archive.ls(series=ELSEWHERE)}
    body = b"sent in chunks\n"
    request = (f"POST /api/deposit?series={ELSEWHERE}&format=text HTTP/1.1\r\nHost: x\r\n"
               f"Authorization: Bearer {token}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
               "Connection: close\r\n\r\n").encode() + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    with socket.create_connection(("127.0.0.1", int(served.url.rsplit(":", 1)[1]))) as conn:
        conn.sendall(request)
        head = read_response(conn, bytearray())
    assert head.startswith(b"HTTP/1.1 201 "), head[:300]
    minted = [str(n) for n in served.archive.ls(series=ELSEWHERE) if str(n) not in before]
    assert len(minted) == 1 and served.archive.get(minted[0]).data == body


@pytest.mark.parametrize(("coding", "status", "said"), [
    (b"gzip", 400, "ends in 'gzip', not chunked"),
    (b"chunked, gzip", 400, "ends in 'gzip', not chunked"),
    (b"gzip, chunked", 501, "in the transfer coding 'gzip'"),
])
def test_the_apps_own_check_of_transfer_codings(coding: bytes, status: int, said: str) -> None:
    """ContentCodings, as the app meets a request a parser let through (pdi serve's refuses the first two in the
    head): RFC 9112 §6.3 (4) a 400 where chunked is not the last coding, §6.1 a 501 for one it does not undo."""
    import asyncio
    import json as jsonlib

    from pdi.server.http.codings import ContentCodings

    called: list[object] = []

    async def inner(scope: object, receive: object, send: object) -> None:
        called.append(scope)

    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/api/deposit", "headers": [
        (b"host", b"x"), (b"transfer-encoding", coding)], "query_string": b"", "http_version": "1.1"}
    asyncio.run(ContentCodings(inner)(scope, receive, send))  # type: ignore[arg-type]
    assert not called
    assert sent[0]["status"] == status
    assert (b"connection", b"close") in sent[0]["headers"]  # type: ignore[operator]
    assert said in jsonlib.loads(sent[1]["body"])["detail"]  # type: ignore[arg-type]
