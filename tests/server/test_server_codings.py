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
from server_helpers import Served, read_response
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
