"""A large N2R whose chunks a worker has verified is sent with sendfile, and damage is still refused (issue 13).

The expected octets are the ones each test deposits, never the server's own
output. A byte is flipped with ``os.pwrite`` and the modification time put
back (``ctime`` moves on all the same): the next read hashes again and
refuses it, with a problem when the damage is in the first chunk, by
cutting the answer short when it is further on.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import on_own_protocol, serving

from pdi.archive import Archive
from pdi.archive.blobs import CHUNK_SIZE
from pdi.archive.blobs.memo import FixityMemo, identity
from pdi.server import create_app
from pdi.server.process import zerocopy
from pdi.server.protocol.resolver import STREAM_FROM

S = "memo.example.us"
#: A text over STREAM_FROM (so N2R streams it), one line per 32 octets.
LINES = (STREAM_FROM + 3 * CHUNK_SIZE) // 32
TEXT = b"".join(b"%09d line of a text, streamed\n" % i for i in range(LINES))
assert len(TEXT) > STREAM_FROM and len(TEXT) % CHUNK_SIZE


def deposit(root: Path) -> tuple[str, Path]:
    """A fresh archive at ``root`` holding TEXT: its name and its blob file."""
    with Archive.init(root) as archive:
        archive.add_series(S)
        name = str(archive.add(S, TEXT, format="text"))
        path = Path(archive.store.blobs.blob_path(archive.locate(name).sha256))  # type: ignore[attr-defined]
    return name, path


def age(path: Path, seconds: float) -> None:
    """Wait until the file's last change is ``seconds`` old (ctime can only be waited for)."""
    while time.time_ns() - os.stat(path).st_ctime_ns < seconds * 1e9:
        time.sleep(0.05)


def flip(path: Path, where: int, *, mend: bool = False) -> None:
    """Flip one bit of octet ``where`` with ``os.pwrite`` (``mend``: write the deposited octet), the mtime put back."""
    before = os.stat(path)
    os.chmod(path, 0o600)
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, bytes([TEXT[where] ^ (0 if mend else 0x20)]), where)
    finally:
        os.close(fd)
    os.chmod(path, before.st_mode)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert after.st_mtime_ns == before.st_mtime_ns and after.st_ctime_ns != before.st_ctime_ns


def n2r(base: str, name: str) -> str:
    return f"{base}/uri-res/N2R?{name}"


def test_pdi_serve_sends_a_verified_text_again_exactly_and_refuses_it_once_damaged(tmp_path: Path) -> None:
    # pdi serve's memo has the system's racy window (45 s by default: pdi.archive.blobs.memo.racy_window), so a
    # file this fresh is hashed at every read; the tests below, in one process, give theirs a shorter one
    name, path = deposit(tmp_path / "archive")
    with serving(tmp_path / "archive", "--workers", "1") as (_, port):
        url = n2r(f"http://127.0.0.1:{port}", name)
        with httpx.Client(timeout=60) as client:
            for _ in range(3):
                whole = client.get(url)
                assert whole.status_code == 200 and whole.content == TEXT
                assert whole.headers["content-length"] == str(len(TEXT))
            edge = client.get(url, headers={"Range": f"bytes={CHUNK_SIZE - 3}-{2 * CHUNK_SIZE + 2}"})
            assert edge.status_code == 206 and edge.content == TEXT[CHUNK_SIZE - 3 : 2 * CHUNK_SIZE + 3]
            assert edge.headers["content-range"] == f"bytes {CHUNK_SIZE - 3}-{2 * CHUNK_SIZE + 2}/{len(TEXT)}"
            flip(path, 2 * CHUNK_SIZE + 100)
            # the damaged chunk is past the first: the answer starts, and is cut short before it
            with pytest.raises(httpx.RemoteProtocolError):
                client.get(url)
            flip(path, 2 * CHUNK_SIZE + 100, mend=True)  # mended: the same octets, a new ctime
            assert client.get(url).content == TEXT
            assert client.get(url).content == TEXT
            flip(path, 10)
            damaged = client.get(url)
            assert damaged.status_code == 500
            assert damaged.headers["content-type"] == "application/problem+json"
            assert "chunk 0" in damaged.json()["detail"]
            ranged = client.get(url, headers={"Range": "bytes=0-99"})
            assert ranged.status_code == 500


@pytest.fixture
def in_process(tmp_path: Path) -> Iterator[tuple[str, str, Path, Archive]]:
    """The resolver on pdi serve's own HTTP protocol, in a thread: its URL, the text's name, its file, the archive."""
    name, path = deposit(tmp_path / "archive")
    app = create_app(str(tmp_path / "archive"))
    opened: Archive = app.state.archive
    opened.fixity_memo = FixityMemo(600, racy_seconds=0.1)  # not the system's window (45 s): no one maps it writable
    age(path, 0.2)
    try:
        with on_own_protocol(app) as base:
            yield base, name, path, opened
    finally:
        opened.close()


class SendfileSpy:
    """The zero-copy sender's ``os.sendfile``, each call's octets counted in :attr:`calls` (it sends all the same)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[int] = []
        real = os.sendfile

        def counted(out: int, fd: int, offset: int | None, count: int) -> int:
            sent = real(out, fd, offset, count)
            self.calls.append(sent)
            return sent

        monkeypatch.setattr(zerocopy.os, "sendfile", counted)

    def sent(self, arrived: int) -> int:
        """The octets sent by ``sendfile``: the client can have every octet before the server's thread is back from
        the call and has counted it, so the count is awaited (10 s at most) up to what ``arrived``, never past it."""
        deadline = time.monotonic() + 10
        while sum(self.calls) < arrived and time.monotonic() < deadline:
            time.sleep(0.01)
        return sum(self.calls)


def test_only_a_remembered_blob_is_sent_with_sendfile(
    in_process: tuple[str, str, Path, Archive], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, name, _, archive = in_process
    spy = SendfileSpy(monkeypatch)
    calls, sent_by_sendfile = spy.calls, spy.sent
    url = n2r(base, name)
    with httpx.Client(timeout=60) as client:
        assert client.get(url, headers={"Range": "bytes=0-9"}).content == TEXT[:10]
        assert not calls, "a first read hashes the chunks it sends"
        assert client.get(url).content == TEXT
        assert not calls
        assert client.get(url).content == TEXT
        assert sent_by_sendfile(len(TEXT)) == len(TEXT)
        calls.clear()
        last = client.get(url, headers={"Range": f"bytes={len(TEXT) - 5}-"})
        assert last.status_code == 206 and last.content == TEXT[-5:]
        assert sent_by_sendfile(5) == 5
        calls.clear()
        head = client.head(url)
        assert head.status_code == 200 and head.headers["content-length"] == str(len(TEXT)) and not calls
    assert archive.fixity_memo is not None
    archive.fixity_memo = None  # 0 seconds: every read hashes again
    with httpx.Client(timeout=60) as client:
        assert client.get(url).content == TEXT
    assert not calls


def test_a_client_that_goes_away_mid_sendfile_leaves_the_worker_serving(
    in_process: tuple[str, str, Path, Archive],
) -> None:
    base, name, _, _ = in_process
    url = n2r(base, name)
    with httpx.Client(timeout=60) as client:
        assert client.get(url).content == TEXT  # remembered
    for _ in range(3):
        with httpx.stream("GET", url, timeout=60) as response:
            first = next(response.iter_raw(1 << 16))
            assert TEXT.startswith(first)
        # closed after 64 KiB of several MiB
    with httpx.Client(timeout=60) as client:
        assert client.get(url).content == TEXT


def test_head_of_a_streamed_text_answers_from_the_catalog_without_reading_a_chunk(
    in_process: tuple[str, str, Path, Archive],
) -> None:
    base, name, path, _ = in_process
    url = n2r(base, name)
    digest = hashlib.sha256(TEXT).hexdigest()
    fields = ("content-length", "content-type", "etag", "cache-control", "accept-ranges", "link", "x-pdi-sha256")
    with httpx.Client(timeout=60) as client:
        got = client.get(url)
        head = client.head(url)
        assert head.status_code == 200 and head.content == b""
        assert {f: head.headers.get(f) for f in fields} == {f: got.headers.get(f) for f in fields}
        assert head.headers["content-length"] == str(len(TEXT)) and head.headers["x-pdi-sha256"] == digest
        # RFC 9110 §14.2: Range is a GET's alone; a HEAD with it is answered as without it
        for ranged in ("bytes=10-19", f"bytes={len(TEXT)}-"):
            part = client.head(url, headers={"Range": ranged})
            assert part.status_code == 200 and "content-range" not in part.headers
            assert part.headers["content-length"] == str(len(TEXT))
        flip(path, 10)  # the first chunk damaged: a GET reads it and refuses, a HEAD does not read it
        assert client.get(url).status_code == 500
        again = client.head(url)
        assert again.status_code == 200 and again.headers["content-length"] == str(len(TEXT))
        assert again.headers["etag"] == got.headers["etag"]


def test_without_sendfile_a_remembered_blob_is_read_from_its_file_all_the_same(tmp_path: Path) -> None:
    """Another ASGI server (here Starlette's test client) offers no sendfile: the octets are read and sent."""
    from starlette.testclient import TestClient

    name, path = deposit(tmp_path / "archive")
    app = create_app(str(tmp_path / "archive"))
    memo = app.state.archive.fixity_memo = FixityMemo(600, racy_seconds=0.1)
    age(path, 0.2)
    with TestClient(app) as client:
        url = f"/uri-res/N2R?{name}"
        assert client.get(url).content == TEXT  # hashed, remembered
        sha = hashlib.sha256(TEXT).hexdigest()
        with open(path, "rb") as f:
            assert memo.holds(sha, identity(f.fileno()), 0, len(TEXT) // CHUNK_SIZE)
        assert client.get(url).content == TEXT
        part = client.get(url, headers={"Range": f"bytes={CHUNK_SIZE - 2}-{CHUNK_SIZE + 1}"})
        assert part.status_code == 206 and part.content == TEXT[CHUNK_SIZE - 2 : CHUNK_SIZE + 2]
        flip(path, CHUNK_SIZE + 1)  # inside the range: the file's identity moved on, the chunk is hashed again
        assert client.get(url, headers={"Range": f"bytes={CHUNK_SIZE}-{CHUNK_SIZE + 9}"}).status_code == 500
    app.state.archive.close()
