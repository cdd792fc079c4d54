"""Blobs in an S3-compatible store: against a real one, OpenStack Swift's s3api (conftest's ``swift_node``).

Each test gets a fresh bucket (``s3_blobs``) and runs with both catalogs
(``location``: SQLite, PostgreSQL). Expected keys, sizes and ranges are
worked out here from the design (key = prefix + SHA-256 computed by
hashlib; chunks of 1 MiB), not read back from the code under test.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import botocore.exceptions
import pytest
from archive_helpers import snapshot
from click.testing import CliRunner

from pdi.archive import Archive
from pdi.archive.blobs.s3 import S3Location, S3Store
from pdi.archive.catalog import SQLStore
from pdi.cli import cli
from pdi.errors import ImmutabilityError, IntegrityError, PDIError, StoreError

S = "oma.eop.gov.us"
MIB = 1 << 20


def _octets(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


def _bucket(url: str) -> tuple[Any, str, str]:
    where = S3Location.parse(url)
    return boto3.client("s3"), where.bucket, where.prefix


def _keys(url: str) -> dict[str, int]:
    """Every object under the archive's prefix (key: size), straight from the store."""
    client, bucket, prefix = _bucket(url)
    found: dict[str, int] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            found[item["Key"]] = item["Size"]
    return found


def _uploads(url: str) -> list[str]:
    """Unfinished multipart uploads in the bucket."""
    client, bucket, _ = _bucket(url)
    return [u["Key"] for u in client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])]


def _ranges(archive: Archive) -> list[str]:
    """The ``Range`` header of every GET the archive's S3 client sends from now on."""
    sent: list[str] = []

    def record(request: Any, **_: Any) -> None:
        value = request.headers["Range"]  # botocore keeps it as the octets it sends
        sent.append(value.decode("ascii") if isinstance(value, bytes) else value)

    assert isinstance(archive.store.blobs, S3Store)
    archive.store.blobs.s3.client.meta.events.register("before-send.s3.GetObject", record)
    return sent


def test_a_deposit_is_stored_under_its_sha256_and_read_back_byte_identical(
    s3_archive: Archive, location: str, s3_blobs: str
) -> None:
    big = _octets(20 * MIB + 12345, 1)  # three parts of a multipart upload (8, 8 and 4 MiB)
    small = b"first line\nsecond line\n"
    big_name = s3_archive.add(S, big, format="octet-stream")
    small_name = s3_archive.add(S, small, format="text")
    prefix = S3Location.parse(s3_blobs).prefix
    assert _keys(s3_blobs) == {
        prefix + hashlib.sha256(big).hexdigest(): len(big),
        prefix + hashlib.sha256(small).hexdigest(): len(small),
    }
    assert _uploads(s3_blobs) == []
    assert s3_archive.get(big_name).data == big
    assert s3_archive.get(small_name).data == small
    s3_archive.close()
    # the catalog recorded where its blobs are: opening it finds them again
    with Archive.open(location) as again:
        assert again.get(big_name).data == big
        assert f"blobs in {s3_blobs}" in again.location
        assert again.verify().ok
        assert sorted(again.store.blob_names()) == sorted(
            [hashlib.sha256(big).hexdigest(), hashlib.sha256(small).hexdigest()]
        )


def test_the_same_octets_twice_are_one_object(s3_archive: Archive, s3_blobs: str) -> None:
    data = _octets(3 * MIB, 2)
    first = s3_archive.add(S, data, format="octet-stream")
    second = s3_archive.add(S, data, format="octet-stream")
    assert first != second
    assert list(_keys(s3_blobs).values()) == [len(data)]
    assert s3_archive.get(second).data == data


def test_ranges_and_byte_fragments_read_only_the_chunks_they_touch(s3_archive: Archive) -> None:
    data = _octets(6 * MIB + 100, 3)
    name = s3_archive.add(S, data, format="octet-stream")
    sent = _ranges(s3_archive)
    with s3_archive.open_octets(name) as opened:
        # octets 5 MiB + 10 .. 5 MiB + 20 lie in chunk 5 (octets 5 MiB to 6 MiB - 1)
        assert b"".join(opened.reader.chunks(5 * MIB + 10, 5 * MIB + 20)) == data[5 * MIB + 10 : 5 * MIB + 20]
        assert sent == [f"bytes={5 * MIB}-{6 * MIB - 1}"]
        sent.clear()
        # across the border of chunks 1 and 2: those two, nothing else
        assert opened.reader.read(2 * MIB - 3, 2 * MIB + 3) == data[2 * MIB - 3 : 2 * MIB + 3]
        assert sent == [f"bytes={MIB}-{2 * MIB - 1}", f"bytes={2 * MIB}-{3 * MIB - 1}"]
        sent.clear()
        # the short last chunk
        assert opened.reader.read(6 * MIB + 90) == data[6 * MIB + 90 :]
        assert sent == [f"bytes={6 * MIB}-{6 * MIB + 99}"]
    sent.clear()
    # a byte fragment reads the same way, not the whole blob
    assert s3_archive.get(f"{name}#byte={3 * MIB + 1},{3 * MIB + 9}").data == data[3 * MIB + 1 : 3 * MIB + 9]
    assert sent == [f"bytes={3 * MIB}-{4 * MIB - 1}"]
    sent.clear()
    clamped = s3_archive.get(f"{name}#byte={6 * MIB},{7 * MIB}")
    assert clamped.data == data[6 * MIB :]
    assert sent == [f"bytes={6 * MIB}-{6 * MIB + 99}"]


def test_verify_finds_a_flipped_octet_and_reads_refuse_its_chunk(
    s3_archive: Archive, s3_blobs: str
) -> None:
    data = _octets(3 * MIB + 5, 4)
    name = s3_archive.add(S, data, format="octet-stream")
    sha = hashlib.sha256(data).hexdigest()
    client, bucket, prefix = _bucket(s3_blobs)
    damaged = bytearray(data)
    damaged[2 * MIB + 7] ^= 0x01
    client.put_object(Bucket=bucket, Key=prefix + sha, Body=bytes(damaged))  # bit rot, behind pdi's back
    with s3_archive.open_octets(name) as opened:
        assert opened.reader.read(10, 20) == data[10:20]  # chunk 0 is intact
        with pytest.raises(IntegrityError, match=rf"chunk 2 \(octets {2 * MIB} to {3 * MIB - 1}\)"):
            opened.reader.read(2 * MIB, 2 * MIB + 10)
    report = s3_archive.verify()
    assert [(p.kind, p.names) for p in report.problems] == [("altered", (str(name),))]


def test_a_blob_altered_in_place_in_s3_is_repaired_over_its_object(s3_archive: Archive, s3_blobs: str) -> None:
    """``pdi verify --repair``'s write (:meth:`Archive.replace_blob`): the object altered in place has the size of
    the good one, and is copied over all the same (not kept as "the same bytes stored before")."""
    data = _octets(2 * MIB + 3, 5)
    name = s3_archive.add(S, data, format="octet-stream")
    sha = hashlib.sha256(data).hexdigest()
    client, bucket, prefix = _bucket(s3_blobs)
    damaged = bytearray(data)
    damaged[MIB + 9] ^= 0x01
    client.put_object(Bucket=bucket, Key=prefix + sha, Body=bytes(damaged))
    assert [(p.kind, p.names) for p in s3_archive.verify().problems] == [("altered", (str(name),))]
    with pytest.raises(IntegrityError, match="hash to"):  # octets that are not the blob's: refused, nothing written
        s3_archive.replace_blob(sha, bytes(damaged), "from a peer that holds the damaged copy")
    s3_archive.replace_blob(sha, data, "from the origin (its signed manifest lists this sha256)")
    stored = client.get_object(Bucket=bucket, Key=prefix + sha)["Body"].read()
    assert hashlib.sha256(stored).hexdigest() == sha
    assert s3_archive.verify().problems == []
    assert s3_archive.get(name).data == data
    assert [e.detail for e in s3_archive.audit() if e.action == "repair"] == [
        "from the origin (its signed manifest lists this sha256)"]
    assert not [key for key in _keys(s3_blobs) if key != prefix + sha]  # no staging object left behind


class Boom(Exception):
    """A source that fails mid-stream."""


def _failing(size: int, fail_after: int) -> Iterator[bytes]:
    sent = 0
    while sent < size:
        if sent >= fail_after:
            raise Boom("the source broke")
        yield b"x" * MIB
        sent += MIB


def _stagings(archive: Archive) -> list[tuple[Any, ...]]:
    assert isinstance(archive.store, SQLStore)
    with archive.store._read():
        return archive.store._query("SELECT id, sha256 FROM blob_stagings")


def test_a_failed_upload_leaves_nothing_and_the_archive_as_it_was(
    s3_archive: Archive, s3_blobs: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = s3_archive.add(S, b"kept\n", format="text")
    before = snapshot(s3_archive)
    objects = _keys(s3_blobs)
    # the octets contradict their declared charset: refused by the check riding on the upload
    with pytest.raises(PDIError, match="not valid utf-8"):
        s3_archive.add(S, b"caf\xe9\n" * 100, format="text", charset="utf-8")
    # the source breaks after two parts were sent
    with pytest.raises(Boom):
        s3_archive.add(S, _failing(40 * MIB, 17 * MIB), format="octet-stream")
    # the store breaks: the second part of an upload is refused
    assert isinstance(s3_archive.store.blobs, S3Store)
    client = s3_archive.store.blobs.s3.client
    real = client.upload_part
    calls = []

    def upload_part(**kwargs: Any) -> Any:
        calls.append(kwargs["PartNumber"])
        if kwargs["PartNumber"] == 2:
            raise botocore.exceptions.ClientError(
                {"Error": {"Code": "InternalError", "Message": "injected"}}, "UploadPart"
            )
        return real(**kwargs)

    with monkeypatch.context() as patched, pytest.raises(StoreError, match="InternalError: injected"):
        patched.setattr(client, "upload_part", upload_part)
        s3_archive.add(S, _octets(20 * MIB, 5), format="octet-stream")
    assert calls == [1, 2]
    # the catalog transaction fails after the blob was placed at its key
    real_store = S3Store.record

    def store_blob(self: S3Store, blob: Any) -> None:
        real_store(self, blob)
        raise StoreError("injected: the catalog transaction fails")

    with monkeypatch.context() as patched, pytest.raises(StoreError, match="injected"):
        patched.setattr(S3Store, "record", store_blob)
        s3_archive.add(S, _octets(2 * MIB, 6), format="octet-stream")
    assert _keys(s3_blobs) == objects
    assert _uploads(s3_blobs) == []
    assert _stagings(s3_archive) == []
    assert snapshot(s3_archive) == before
    assert s3_archive.get(kept).data == b"kept\n"


def test_the_remover_keeps_what_a_deposit_in_progress_staged(
    s3_archive: Archive, location: str, s3_blobs: str
) -> None:
    client, bucket, prefix = _bucket(s3_blobs)
    # what killed deposits left: a blob no name holds, a staging object of no staging row
    orphan = _octets(1000, 7)
    client.put_object(Bucket=bucket, Key=prefix + hashlib.sha256(orphan).hexdigest(), Body=orphan)
    client.put_object(Bucket=bucket, Key=prefix + "staging/0123abcd", Body=b"partial")
    time.sleep(1.1)  # S3 dates objects to the second (Swift rounds up): let "older than 0 s" be true
    removed_midway: list[list[str]] = []
    data = _octets(12 * MIB, 8)

    def source() -> Iterator[bytes]:
        for start in range(0, len(data), MIB):
            if start == 10 * MIB:  # one 8 MiB part sent, the multipart upload in progress
                with Archive.open(location) as other:
                    removed_midway.append(other.remove_unreferenced(0))
            yield data[start : start + MIB]

    name = s3_archive.add(S, source(), format="octet-stream")
    assert removed_midway == [[hashlib.sha256(orphan).hexdigest(), "staging/0123abcd"]]
    assert s3_archive.get(name).data == data
    # a blob staged (at its key, its catalog transaction not yet run) is kept too, whatever the grace
    store = s3_archive.store
    assert isinstance(store, SQLStore)
    pending = _octets(2 * MIB, 9)
    staged = store.stage_blob(pending)
    with Archive.open(location) as other:
        assert other.remove_unreferenced(0) == []
    assert _keys(s3_blobs)[prefix + hashlib.sha256(pending).hexdigest()] == len(pending)
    staged.close()  # its deposit never came: once released, it is anybody's to remove
    time.sleep(1.1)
    with Archive.open(location) as other:
        assert other.remove_unreferenced(3600) == []  # younger than the grace period
        assert other.remove_unreferenced(0) == [hashlib.sha256(pending).hexdigest()]
    assert _keys(s3_blobs) == {prefix + hashlib.sha256(data).hexdigest(): len(data)}
    # a staging row of a process killed two days ago protects nothing, whatever the grace period
    with store._write():
        store._query(
            "INSERT INTO blob_stagings (id, sha256, started_at) VALUES (?, NULL, ?)",
            ("killed", "2026-11-20T10:00:00.000000Z"),
        )
    client.put_object(Bucket=bucket, Key=prefix + "staging/killed", Body=b"partial")
    time.sleep(1.1)  # S3 dates objects to the second (Swift rounds up): let "older than 0 s" be true
    assert s3_archive.remove_unreferenced(0) == ["staging/killed"]
    assert _stagings(s3_archive) == []


def test_a_blob_store_is_chosen_when_the_archive_is_made(
    location: str, s3_blobs: str, request: pytest.FixtureRequest
) -> None:
    with Archive.init(location) as plain:
        plain.add_series(S)
        plain.add(S, b"here\n", format="text")
    # refused as the exit table's immutability conflict (5), not a storage error (8), naming both stores and what
    # to do, before the store asked for is contacted (a bucket that is not there is not what is wrong)
    own = "in its PostgreSQL database" if "://" in location else f"in files beside its catalog ({location}/blobs)"
    for asked in (s3_blobs, "s3://no-such-bucket/x/"):
        with pytest.raises(ImmutabilityError) as refused:
            Archive.init(location, blobs=asked)
        said = str(refused.value)
        assert f"keeps its blobs {own}, not in {asked} as --blobs asks" in said
        assert "pdi init without --blobs" in said and "pdi export" in said and "pdi import" in said
    with Archive.open(location) as still:  # as it was: the same store, the document there
        assert "blobs in" not in still.location and still.store.blob_store_url() is None
    other = s3_blobs.replace("archive/", "elsewhere/")
    if "://" in location:
        fresh = request.getfixturevalue("pg_cluster").create_schema("pdi_s3_chosen")
    else:
        fresh = location + "-s3"
    Archive.init(fresh, blobs=s3_blobs).close()
    with pytest.raises(ImmutabilityError) as refused:
        Archive.init(fresh, blobs=other)
    said = str(refused.value)
    assert f"keeps its blobs in {s3_blobs}, not in {other} as --blobs asks" in said
    assert "pdi init without --blobs" in said and f"pdi restore DEST --to NEW --blobs {other}" in said
    with Archive.init(fresh, blobs=s3_blobs) as again:  # the same store again: only a migration
        assert f"blobs in {s3_blobs}" in again.location


def test_cli_init_with_blobs_then_add_and_get(
    location: str, s3_blobs: str, tmp_path: Path
) -> None:
    def run(*argv: str) -> bytes:
        result = CliRunner().invoke(cli, [*argv, "--archive", location])
        assert result.exit_code == 0, (argv, result.output, result.exception)
        return result.stdout_bytes

    doc = tmp_path / "doc.txt"
    doc.write_bytes(b"first line\nsecond line\n")
    assert f"blobs in {s3_blobs}" in CliRunner().invoke(cli, ["init", location, "--blobs", s3_blobs]).stdout
    run("series", "add", S)
    name = run("add", str(doc), "--series", S).decode().strip()
    assert run("get", name) == doc.read_bytes()
    assert run("get", f"{name}#line=1,2") == b"second line\r\n"
    assert S3Location.parse(s3_blobs).prefix + hashlib.sha256(doc.read_bytes()).hexdigest() in _keys(s3_blobs)
    assert b"0 problems" in run("verify")


def test_cli_init_again_with_other_blobs_is_refused_with_what_to_do(location: str, s3_blobs: str) -> None:
    other = s3_blobs.replace("archive/", "elsewhere/")
    assert CliRunner().invoke(cli, ["init", location, "--blobs", s3_blobs]).exit_code == 0
    result = CliRunner().invoke(cli, ["init", location, "--blobs", other])
    assert result.exit_code == 5, result.output  # docs/reference/exit-codes.md: immutability conflict
    line = result.stderr.strip()
    assert "\n" not in line and line.startswith("pdi: immutability conflict: the archive at ")
    assert f"keeps its blobs in {s3_blobs}, not in {other} as --blobs asks" in line
    again = CliRunner().invoke(cli, ["init", location])  # what the message says to do: migrates, keeps the store
    assert again.exit_code == 0 and f"blobs in {s3_blobs}" in again.stdout


def test_init_refuses_a_bucket_that_does_not_exist(location: str, s3_blobs: str) -> None:
    from pdi.errors import NotFoundError

    with pytest.raises(NotFoundError, match="no bucket 'no-such-bucket'"):
        Archive.init(location, blobs="s3://no-such-bucket/x")


def test_an_http_range_request_reads_only_the_chunks_it_touches(s3_archive: Archive, location: str) -> None:
    import threading

    import httpx
    import uvicorn

    from pdi.server import create_app
    from pdi.server.protocol.rfc2169 import rfc2169_query

    data = _octets(4 * MIB + 10, 10)
    name = s3_archive.add(S, data, format="octet-stream")
    sent = _ranges(s3_archive)
    app = create_app(location, archive=s3_archive, cache_bytes=0)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        answer = httpx.get(
            f"http://127.0.0.1:{port}/uri-res/N2R?{rfc2169_query(str(name))}",
            headers={"Range": f"bytes={MIB - 2}-{MIB + 1}"}, timeout=30,
        )
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    assert answer.status_code == 206
    assert answer.content == data[MIB - 2 : MIB + 2]
    assert answer.headers["content-range"] == f"bytes {MIB - 2}-{MIB + 1}/{len(data)}"
    assert sent == [f"bytes=0-{MIB - 1}", f"bytes={MIB}-{2 * MIB - 1}"]


def test_a_bag_imports_into_an_archive_with_s3_blobs(
    s3_archive: Archive, s3_blobs: str, tmp_path: Path
) -> None:
    texts = {b"one\n", b"two\n"}
    with Archive.init(tmp_path / "plain") as plain:
        plain.add_series(S)
        names = {str(plain.add(S, text, format="text")): text for text in texts}
        plain.export_bag(tmp_path / "bag")
    assert s3_archive.import_bag(tmp_path / "bag") == 2
    for name, text in names.items():
        assert s3_archive.get(name).data == text
    prefix = S3Location.parse(s3_blobs).prefix
    assert _keys(s3_blobs) == {prefix + hashlib.sha256(t).hexdigest(): len(t) for t in texts}
    assert _stagings(s3_archive) == []


def test_deposits_racing_a_remover_all_keep_their_bytes(s3_archive: Archive, location: str) -> None:
    import threading

    contents = [_octets(300_000 + i, 100 + i) for i in range(8)]
    contents += contents[:3]  # the same octets again: found stored, while the remover runs
    stop = threading.Event()
    removed: list[str] = []
    failures: list[BaseException] = []

    def remover() -> None:
        try:
            with Archive.open(location) as other:
                while not stop.is_set():
                    # a grace period reaching 5 s into the future: S3 dates an object to the
                    # second (Swift rounds up), and a blob just placed must count as old too,
                    # so only the staging rows keep it
                    removed.extend(other.store.remove_unreferenced(-5))
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=remover)
    thread.start()
    try:
        names = [s3_archive.add(S, data, format="octet-stream") for data in contents]
    finally:
        stop.set()
        thread.join(timeout=120)
    assert failures == []
    for name, data in zip(names, contents, strict=True):
        assert s3_archive.get(name).data == data
    assert s3_archive.verify().ok
    assert not set(removed) & {hashlib.sha256(data).hexdigest() for data in contents}


def _folders(root: Path) -> set[str]:
    return {entry.name for entry in root.iterdir() if entry.is_dir()}


def test_a_directory_archive_whose_blobs_are_in_s3_has_no_blobs_folder(s3_blobs: str, tmp_path: Path) -> None:
    """``pdi init DIR --blobs s3://…`` keeps the catalog in DIR and every blob in the bucket: no ``blobs/`` (nor
    ``tmp/``) is made there, not at init, not when it is opened, verified, backed up or restored."""
    from pdi.archive.backup import backup
    from pdi.archive.restore import restore

    root = tmp_path / "archive"

    def run(*argv: str, at: Path = root) -> str:
        result = CliRunner().invoke(cli, [*argv, "--archive", str(at)])
        assert result.exit_code == 0, (argv, result.output, result.exception)
        return result.stdout

    made = CliRunner().invoke(cli, ["init", str(root), "--blobs", s3_blobs])
    assert made.exit_code == 0, made.output
    assert _folders(root) == set()
    run("series", "add", S)
    doc = tmp_path / "doc.txt"
    doc.write_bytes(_octets(200_000, 7))  # a blob beside the catalog's rows, were it not in S3
    name = run("add", str(doc), "--series", S, "--format", "octet-stream").strip()
    with Archive.open(root) as opened:
        assert opened.get(name).data == doc.read_bytes()
    assert "0 problems" in run("verify")
    assert _folders(root) == set()
    backup(str(root), tmp_path / "b")
    assert _folders(root) == set()
    where, _ = restore(tmp_path / "b", str(tmp_path / "restored"))
    assert _folders(Path(where)) == set()
    assert "0 problems" in run("verify", at=Path(where))
    with Archive.open(where) as opened:
        assert opened.get(name).data == doc.read_bytes()
    assert _folders(Path(where)) == set()


def test_init_with_a_bucket_that_does_not_answer_makes_no_directory_archive(s3_blobs: str, tmp_path: Path) -> None:
    """The bucket is asked before the catalog is made: a refused one leaves nothing (not a catalog that records no
    blob store and has no blobs/ folder), and the same directory is made an archive afterwards."""
    from pdi.errors import NotFoundError

    with pytest.raises(NotFoundError, match="no bucket 'no-such-bucket'"):
        Archive.init(tmp_path / "archive", blobs="s3://no-such-bucket/x")
    assert not (tmp_path / "archive").exists()
    with Archive.init(tmp_path / "archive", blobs=s3_blobs) as made:
        assert f"blobs in {s3_blobs}" in made.location
    assert _folders(tmp_path / "archive") == set()
