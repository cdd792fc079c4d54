"""``POST /api/octets`` under pdi serve's own protocol: parts of remembered blob files go with sendfile, in a chunked
answer, and arrive exactly; damage is still refused (issue 27's sync, issue 13's fixity).

The answer is read by the standard library's MIME parser (:mod:`email`), not
by the mirror's reader, and each part compared with the octets this test
deposited. A byte flipped after a blob was remembered changes its file's
identity (``ctime``): the next answer reads the blob's chunks again and is cut
short before the damaged part ends.
"""

from __future__ import annotations

import email.parser
import email.policy
import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client import REGISTRY
from server_helpers import on_own_protocol

from pdi.archive import Archive
from pdi.archive.blobs import CHUNK_SIZE
from pdi.archive.blobs.inline import INLINE_LIMIT
from pdi.archive.blobs.memo import FixityMemo
from pdi.server import create_app
from pdi.server.process import zerocopy

S = "octets.example.us"
#: Octets of a blob file of two chunks and a bit, one of one chunk, and a small blob kept in its catalog row.
LARGE = bytes(range(256)) * ((2 * CHUNK_SIZE + 777) // 256)
MIDDLE = os.urandom(INLINE_LIMIT + 4321)
SMALL = b"a small blob, kept in the catalog's row\n"
ABSENT = f"urn:pdi://{S}/2026/01/01/999.octet-stream.1"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, dict[str, bytes], dict[str, Path], Archive]]:
    """The resolver on pdi serve's own protocol, in a thread: its URL, the names deposited with their octets, the
    blob files of the two large ones, the archive."""
    root = tmp_path / "archive"
    with Archive.init(root) as archive:
        archive.add_series(S)
        octets = {str(archive.add(S, data, format="octet-stream")): data for data in (LARGE, SMALL, MIDDLE)}
        files = {name: Path(archive.store.blobs.blob_path(archive.locate(name).sha256))  # type: ignore[attr-defined]
                 for name, data in octets.items() if len(data) > INLINE_LIMIT}
    app = create_app(str(root))
    opened: Archive = app.state.archive
    opened.fixity_memo = FixityMemo(600, racy_seconds=0.1)  # not the system's window (45 s): no one maps them writable
    time.sleep(0.2)
    try:
        with on_own_protocol(app) as base:
            yield base, octets, files, opened
    finally:
        opened.close()


def parts(answer: httpx.Response) -> list[tuple[str, str, bytes]]:
    """Each part's Content-Location, Content-Type and octets, as the standard library's MIME parser reads them."""
    assert answer.headers.get("content-length") is None and answer.headers["transfer-encoding"] == "chunked"
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + answer.headers["content-type"].encode() + b"\r\n\r\n" + answer.content)
    assert message.is_multipart() and not message.defects
    found = []
    for part in message.iter_parts():
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        assert part["content-length"] == str(len(payload))
        found.append((str(part["content-location"]), str(part["content-type"]), payload))
    return found


def spy_on_sendfile(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The octets each ``os.sendfile`` of the server sent (it sends them all the same)."""
    calls: list[int] = []
    real = os.sendfile

    def counted(out: int, fd: int, offset: int | None, count: int) -> int:
        sent = real(out, fd, offset, count)
        calls.append(sent)
        return sent

    monkeypatch.setattr(zerocopy.os, "sendfile", counted)
    return calls


def test_remembered_blob_files_go_with_sendfile_and_every_part_arrives_exactly(
    served: tuple[str, dict[str, bytes], dict[str, Path], Archive], monkeypatch: pytest.MonkeyPatch,
) -> None:
    base, octets, files, _ = served
    calls = spy_on_sendfile(monkeypatch)
    asked = [*octets, ABSENT, *reversed(octets)]
    with httpx.Client(timeout=60) as client:
        first = client.post(f"{base}/api/octets", json={"names": asked})
        assert first.status_code == 200
        got = parts(first)
        assert [location for location, _, _ in got] == asked
        for location, media_type, payload in got:
            if location == ABSENT:
                assert media_type == "application/problem+json" and b'"status": 404' in payload
            else:
                assert media_type == "application/octet-stream" and payload == octets[location]
        # the first read of each blob hashed its chunks (and the second, in the same answer, was remembered)
        deadline = time.monotonic() + 10
        remembered = sum(len(octets[name]) for name in files)  # each large blob's second part
        while sum(calls) < remembered and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sum(calls) == remembered
        calls.clear()
        counted = body_octets()
        again = client.post(f"{base}/api/octets", json={"names": asked})
        assert parts(again) == got
        deadline = time.monotonic() + 10
        while sum(calls) < 2 * remembered and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sum(calls) == 2 * remembered, "every part of a blob file, now remembered, went with sendfile"
        # the metrics count the body's octets (as of a body sent through ASGI: not the chunks' framing), those
        # that went with sendfile with them
        while body_octets() == counted and time.monotonic() < deadline:
            time.sleep(0.01)
        assert body_octets() - counted == len(again.content)


def body_octets() -> float:
    """What ``pdi_http_response_body_bytes_total`` says of ``/api/octets`` (this process's registry)."""
    return REGISTRY.get_sample_value("pdi_http_response_body_bytes_total", {"route": "/api/octets"}) or 0.0



def test_a_blob_damaged_after_it_was_remembered_cuts_the_answer_short(
    served: tuple[str, dict[str, bytes], dict[str, Path], Archive],
) -> None:
    base, octets, files, _ = served
    large = next(name for name, data in octets.items() if data == LARGE)
    asked = list(octets)
    with httpx.Client(timeout=60) as client:
        assert [payload for _, _, payload in parts(client.post(f"{base}/api/octets", json={"names": asked}))] == [
            octets[name] for name in asked]
        path = files[large]
        before = os.stat(path)
        os.chmod(path, 0o600)
        with open(path, "r+b") as f:
            f.seek(CHUNK_SIZE + 5)
            f.write(bytes([LARGE[CHUNK_SIZE + 5] ^ 1]))
        os.chmod(path, before.st_mode)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the modification time put back
        with pytest.raises(httpx.RemoteProtocolError):
            client.post(f"{base}/api/octets", json={"names": asked})
        assert parts(client.post(f"{base}/api/octets", json={"names": [n for n in asked if n != large]})) == [
            (name, "application/octet-stream", octets[name]) for name in asked if name != large]


def test_a_reader_that_goes_away_mid_answer_leaves_the_worker_serving(
    served: tuple[str, dict[str, bytes], dict[str, Path], Archive],
) -> None:
    base, octets, _, _ = served
    asked = list(octets) * 20  # several MB
    with httpx.Client(timeout=60) as client:
        assert len(parts(client.post(f"{base}/api/octets", json={"names": asked}))) == len(asked)
    for _ in range(3):
        with httpx.stream("POST", f"{base}/api/octets", json={"names": asked}, timeout=60) as response:
            assert response.status_code == 200
            next(response.iter_raw(1 << 16))
        # closed after 64 KiB of several MB
    with httpx.Client(timeout=60) as client:
        assert [payload for _, _, payload in parts(client.post(f"{base}/api/octets", json={"names": asked}))] == [
            octets[name] for name in asked]


def test_on_another_server_a_reader_gone_stops_the_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without pdi serve's sendfile (here uvicorn's own protocol), the octets go as body messages, whose send says
    nothing of a reader gone: the answer listens for the disconnect and stops reading blobs for nobody."""
    from server_helpers import in_thread

    from pdi.server.protocol import octets as octets_api

    root = tmp_path / "archive"
    with Archive.init(root) as archive:
        archive.add_series(S)
        name = str(archive.add(S, LARGE, format="octet-stream"))
    made: list[str] = []
    real = octets_api._frames

    def counted(name: str, *args: object, **kwargs: object) -> object:
        made.append(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(octets_api, "_frames", counted)
    app = create_app(str(root))
    asked = [name] * 200  # about 400 MB: far more than is read before the reader goes
    with in_thread(app, host="127.0.0.1", port=0, log_level="critical") as server:
        port = server.servers[0].sockets[0].getsockname()[1]
        with httpx.stream("POST", f"http://127.0.0.1:{port}/api/octets", json={"names": asked}, timeout=60) as answer:
            assert answer.status_code == 200
            pieces = answer.iter_raw(1 << 16)
            assert LARGE[:1000] in next(pieces) + next(pieces)
        time.sleep(2)  # ample time to read every part, were it still being read
        assert len(made) < len(asked) // 4
        with httpx.Client(timeout=60) as client:  # and the server answers the next
            assert parts(client.post(f"http://127.0.0.1:{port}/api/octets", json={"names": [name]})) == [
                (name, "application/octet-stream", LARGE)]
    app.state.archive.close()
