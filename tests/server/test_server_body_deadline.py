"""A request's body has a deadline, whoever sends it (pdi.server.process.limits.BodyDeadline), over a real socket.

``pdi serve --body-timeout 1``: a body may take one second, and one more for
every 500 octets that arrive. A token holder trickling a deposit's body, or
stopping half-way, is answered ``408`` (RFC 9110 §15.5.9) with
``Connection: close`` once that time has passed, not before, and nothing is
deposited.
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import serving

from pdi.archive import Archive

S = "library.example.us"
#: --body-timeout of the server under test (seconds).
DEADLINE = 1.0
#: Octets that earn one second more (pdi.server.process.limits.DEFAULT_BODY_RATE, mod_reqtimeout's MinRate).
RATE = 500


def snapshot(archive: Archive) -> object:
    store = archive.store
    return (list(store.iter_representations()), sorted(store.blob_names()),
            [(e.action, e.subject) for e in store.audit_log()])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[Path, str, int, object]]:
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        _, token = archive.add_token("depositor", role="deposit", series=[S])
        before = snapshot(archive)
    with serving(location, "--workers", "1", "--body-timeout", str(DEADLINE)) as (_, port):
        yield location, token, port, before


def _answer_while_sending(sock: socket.socket, pieces: Iterator[bytes], every: float) -> tuple[bytes, float]:
    """Send ``pieces`` one each ``every`` seconds until the server answers and closes: the answer, and when
    (``time.monotonic()``) its first octets came."""
    received = b""
    first = 0.0
    sending = True
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        readable, _, _ = select.select([sock], [], [], every)
        if readable:
            chunk = sock.recv(65536)
            if not chunk:
                return received, first
            first = first or time.monotonic()
            received += chunk
            continue
        if sending:
            piece = next(pieces, None)
            if piece is None:
                sending = False  # a stalled client: it sends nothing more, and keeps the connection open
                continue
            try:
                sock.sendall(piece)
            except OSError:  # the server closed the connection
                sending = False
    raise AssertionError(f"the server did not answer and close in 30 s: {received[:200]!r}")


def _head(path: str, token: str | None, length: int) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Content-Type: text/plain\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def _check_408(answer: bytes, began: float, came: float, octets: int) -> None:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), answer[:300]
    assert b"connection: close" in head.lower()
    assert b"application/problem+json" in head and b"did not arrive in time" in body
    allowed = DEADLINE + octets / RATE
    assert came - began >= allowed - 0.05, (came - began, allowed)  # not before its time
    assert came - began <= allowed + 3.0, (came - began, allowed)  # and within it (a loaded machine's slack)


def _nothing_kept(location: Path, before: object) -> None:
    deadline = time.monotonic() + 20
    while [p for p in (location / "tmp").iterdir()] if (location / "tmp").exists() else []:
        assert time.monotonic() < deadline, "the staged body was not removed"
        time.sleep(0.1)
    with Archive.open(location) as archive:
        assert snapshot(archive) == before


def test_a_token_holders_trickled_upload_is_cut_off_with_408_and_nothing_is_deposited(
    server: tuple[Path, str, int, object],
) -> None:
    location, token, port, before = server
    trickle = (b"x" * 10 for _ in range(10_000))  # 10 octets every 0.25 s: 40 octets/s, under 500
    with socket.create_connection(("127.0.0.1", port)) as sock:
        began = time.monotonic()
        sock.sendall(_head(f"/api/deposit?series={S}", token, 100_000))
        answer, came = _answer_while_sending(sock, trickle, 0.25)
    sent = int((came - began) / 0.25) * 10
    _check_408(answer, began, came, sent)
    _nothing_kept(location, before)
    assert httpx.get(f"http://127.0.0.1:{port}/api/series", timeout=10).status_code == 200


def test_a_token_holders_stalled_upload_is_cut_off_too(server: tuple[Path, str, int, object]) -> None:
    location, token, port, before = server
    half = iter([b"y" * 1000])  # 1000 octets, then nothing, the connection kept open
    with socket.create_connection(("127.0.0.1", port)) as sock:
        began = time.monotonic()
        sock.sendall(_head(f"/api/deposit?series={S}", token, 5000))
        answer, came = _answer_while_sending(sock, half, 0.05)
    _check_408(answer, began, came, 1000)
    assert b"1000 octets" in answer
    _nothing_kept(location, before)


def test_a_body_that_keeps_the_rate_is_taken(server: tuple[Path, str, int, object]) -> None:
    # 2,000 octets every 0.25 s (8,000 a second, over 500): 24,000 octets in 3 s, three times the deadline
    location, token, port, _ = server
    pieces = iter([b"z" * 2000] * 12)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(_head(f"/api/deposit?series={S}", token, 24_000))
        for piece in pieces:
            sock.sendall(piece)
            time.sleep(0.25)
        sock.settimeout(30)
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 201 "), answer[:300]
    with Archive.open(location) as archive:
        assert len(archive.ls(series=S)) == 1
