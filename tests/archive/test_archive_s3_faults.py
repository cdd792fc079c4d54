"""Blobs in an S3-compatible store when the store fails: gone, refusing, silent, or answering wrong.

Against the real Swift node of conftest's ``swift_node`` where Swift can be
made to fail (its bucket deleted, its proxy stopped), and against the small
stand-ins of ``support.faultystore`` for what it cannot be made to do on
demand (never answer, ignore ``Range``). The catalog is SQLite: what is
tested is the blob store's side, the same under either catalog. Each test
ends with the store well again and the operation retried.
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
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.archive.blobs import s3
from pdi.archive.blobs.s3 import S3Location, S3Store
from pdi.archive.catalog import SQLStore
from pdi.cli import cli
from pdi.errors import StoreError
from pdi.server import create_app
from pdi.server.protocol.rfc2169 import rfc2169_query
from support.faultystore import RangeIgnoringStore, StalledStore
from support.swiftnode import TemporarySwift

S = "oma.eop.gov.us"
MIB = 1 << 20


def _octets(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


@pytest.fixture
def location(tmp_path: Path) -> str:
    return str(tmp_path / "archive")


def _get(location: str, name: str) -> Any:
    return CliRunner().invoke(cli, ["get", name, "--archive", location])


def _resolve(location: str, name: str) -> Any:
    with Archive.open(location) as opened:
        return TestClient(create_app(location, archive=opened, cache_bytes=0)).get(f"/uri-res/N2R?{rfc2169_query(name)}")


def test_a_store_that_never_answers_is_a_storage_error_naming_its_timeout(
    s3_archive: Archive, location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"kept in the store\n"
    name = str(s3_archive.add(S, data, format="text"))
    # short timeouts and few tries, so that the test is quick: what is tested is that there are some
    with monkeypatch.context() as patched, StalledStore() as stalled:
        patched.setattr(s3, "CONNECT_SECONDS", 1.0)
        patched.setattr(s3, "READ_SECONDS", 1.0)
        patched.setattr(s3, "ATTEMPTS", 2)
        patched.setenv("AWS_ENDPOINT_URL", stalled.endpoint)
        said = rf"s3://.*: cannot look up blob {hashlib.sha256(data).hexdigest()}: .*\(no answer within 1 s, tried 2 times\)"
        with Archive.open(location) as other, pytest.raises(StoreError, match=said):
            other.get(name)
        result = _get(location, name)
        assert result.exit_code == 8, result.output
        assert "no answer within 1 s" in result.stderr
        answer = _resolve(location, name)
        assert answer.status_code == 503  # what failed is the server log's: the answer names no store's address
        assert answer.json()["detail"] == StoreError.OVER_HTTP and stalled.endpoint not in answer.text
    # the store answers again (the Swift node's endpoint back): so does the archive
    assert _get(location, name).stdout_bytes == data


def test_a_deleted_bucket_is_a_storage_error_not_a_missing_blob(
    s3_archive: Archive, location: str, s3_blobs: str
) -> None:
    data = _octets(2 * MIB + 7, 1)
    name = str(s3_archive.add(S, data, format="octet-stream"))
    where = S3Location.parse(s3_blobs)
    client = boto3.client("s3")
    for item in client.list_objects_v2(Bucket=where.bucket)["Contents"]:
        client.delete_object(Bucket=where.bucket, Key=item["Key"])
    client.delete_bucket(Bucket=where.bucket)
    gone = f"the bucket '{where.bucket}' is gone from {client.meta.endpoint_url}"
    with pytest.raises(StoreError, match=gone):
        s3_archive.get(name)
    with pytest.raises(StoreError, match="NoSuchBucket"):
        s3_archive.verify()
    result = _get(location, name)
    assert result.exit_code == 8, result.output
    assert gone in result.stderr
    answer = _resolve(location, name)
    assert answer.status_code == 503  # the bucket and the store's address are the server log's, not the answer's
    assert answer.json()["detail"] == StoreError.OVER_HTTP and where.bucket not in answer.text
    # the bucket made again, empty: now the blob is missing from it, which verify reports and a read says
    client.create_bucket(Bucket=where.bucket)
    assert [(p.kind, p.names) for p in s3_archive.verify().problems] == [("missing", (name,))]
    assert _get(location, name).exit_code == 3


def test_a_store_that_ignores_range_is_read_no_further_than_asked(
    s3_archive: Archive, location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _octets(3 * MIB + 11, 2)
    name = str(s3_archive.add(S, data, format="octet-stream"))
    with monkeypatch.context() as patched, RangeIgnoringStore(boto3.client("s3")) as whole:
        patched.setenv("AWS_ENDPOINT_URL", whole.endpoint)
        with Archive.open(location) as other:
            # chunk 0 asked for (octets 0 to 1 MiB - 1), the whole object answered: its first MiB is chunk 0
            assert other.get(f"{name}#byte=1,9").data == data[1:9]
            assert whole.ranges == [f"bytes=0-{MIB - 1}"]
            # chunk 2 asked for: what came is not it, and is said so (not "damaged": the store answered wrong)
            said = (rf"cannot read archive/{hashlib.sha256(data).hexdigest()}: asked for octets {2 * MIB} to"
                    rf" {3 * MIB - 1}, the store answered the whole object \(200, no Content-Range\)")
            with pytest.raises(StoreError, match=said):
                other.get(f"{name}#byte={2 * MIB + 1},{2 * MIB + 9}")
        result = _get(location, f"{name}#byte={2 * MIB + 1},{2 * MIB + 9}")
        assert result.exit_code == 8, result.output
    assert _get(location, f"{name}#byte={2 * MIB + 1},{2 * MIB + 9}").stdout_bytes == data[2 * MIB + 1 : 2 * MIB + 9]


def _keys(url: str) -> dict[str, int]:
    """Every object under the archive's prefix (key: size), and every unfinished multipart upload, from the store."""
    where = S3Location.parse(url)
    client = boto3.client("s3")
    found = {item["Key"]: item["Size"]
             for item in client.list_objects_v2(Bucket=where.bucket, Prefix=where.prefix).get("Contents", [])}
    for upload in client.list_multipart_uploads(Bucket=where.bucket).get("Uploads", []):
        found[f"upload of {upload['Key']}"] = -1
    return found


def _stagings(archive: Archive) -> list[tuple[Any, ...]]:
    assert isinstance(archive.store, SQLStore)
    with archive.store._read():
        return archive.store._query("SELECT id, sha256 FROM blob_stagings")


def test_a_deposit_the_store_fails_after_its_copy_leaves_the_bucket_as_it_was(
    s3_archive: Archive, s3_blobs: str, swift_node: TemporarySwift, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = s3_archive.add(S, b"kept\n", format="text")
    before = snapshot(s3_archive)
    objects = _keys(s3_blobs)
    assert isinstance(s3_archive.store.blobs, S3Store)
    client = s3_archive.store.blobs.s3.client
    data = _octets(9 * MIB + 5, 3)  # two parts: staged by a multipart upload, then copied to its key
    key = S3Location.parse(s3_blobs).prefix + hashlib.sha256(data).hexdigest()
    # the blob copied to its key, then the store refuses the deletion of its staging object (once: it is back at once)
    real_delete = client.delete_object
    refused: list[str] = []

    def delete_object(**kwargs: Any) -> Any:
        if not refused:
            refused.append(kwargs["Key"])
            raise botocore.exceptions.ClientError(
                {"Error": {"Code": "ServiceUnavailable", "Message": "injected"}}, "DeleteObject")
        return real_delete(**kwargs)

    with monkeypatch.context() as patched, pytest.raises(StoreError, match="ServiceUnavailable: injected"):
        patched.setattr(client, "delete_object", delete_object)
        s3_archive.add(S, data, format="octet-stream")
    assert refused and "/staging/" in refused[0]
    assert _keys(s3_blobs) == objects
    assert _stagings(s3_archive) == []
    assert snapshot(s3_archive) == before
    # the proxy stops right after the copy: nothing can be deleted, which the error says, and the remover does later
    real_copy = client.copy

    def copy(*args: Any, **kwargs: Any) -> Any:
        done = real_copy(*args, **kwargs)
        swift_node.stop_server("proxy")
        return done

    try:
        with monkeypatch.context() as patched, pytest.raises(StoreError, match="Could not connect") as failed:
            patched.setattr(client, "copy", copy)
            s3_archive.add(S, data, format="octet-stream")
    finally:
        swift_node.start_server("proxy")
    assert "pdi verify --remove-unreferenced will" in " ".join(failed.value.__notes__)
    assert key in " ".join(failed.value.__notes__)
    assert _stagings(s3_archive) == []
    left = set(_keys(s3_blobs)) - set(objects)
    assert key in left and len(left) == 2  # the blob at its key and its staging object
    time.sleep(1.1)  # S3 dates objects to the second (Swift rounds up): let "older than 0 s" be true
    removed = s3_archive.remove_unreferenced(0)
    assert hashlib.sha256(data).hexdigest() in removed and len(removed) == 2
    assert _keys(s3_blobs) == objects
    assert snapshot(s3_archive) == before
    # and deposited again, with the store well, it is stored
    name = s3_archive.add(S, data, format="octet-stream")
    assert s3_archive.get(name).data == data
    assert s3_archive.get(kept).data == b"kept\n"


def _stop_after(reads: int, swift_node: TemporarySwift, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, the Swift proxy stops after the first ``reads`` ranged GETs of any archive's blobs."""
    done: list[int] = []
    real = s3.S3Blobs.range_reader

    def range_reader(self: s3.S3Blobs, sha256: str) -> Any:
        read_raw = real(self, sha256)

        def stopping(offset: int, length: int) -> bytes:
            if len(done) == reads:
                swift_node.stop_server("proxy")
            done.append(offset)
            return read_raw(offset, length)

        return stopping

    monkeypatch.setattr(s3.S3Blobs, "range_reader", range_reader)
    return done


def test_the_store_stopping_mid_read_mid_verify_and_mid_backup_fails_them_and_a_retry_succeeds(
    s3_archive: Archive, location: str, swift_node: TemporarySwift, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    data = _octets(4 * MIB + 3, 4)
    other = _octets(2 * MIB, 5)
    name = str(s3_archive.add(S, data, format="octet-stream"))
    s3_archive.add(S, other, format="octet-stream")
    sha = hashlib.sha256(data).hexdigest()
    cannot = rf"s3://.*: cannot read archive/{sha}: Could not connect"
    # mid-read: chunk 0 read, then the store is gone; nothing but verified octets came before the error
    with monkeypatch.context() as patched:
        _stop_after(1, swift_node, patched)
        got: list[bytes] = []
        try:
            with s3_archive.open_octets(name) as opened, pytest.raises(StoreError, match=cannot):
                got.extend(opened.reader.chunks())
        finally:
            swift_node.start_server("proxy")
    assert got == [data[:MIB]]
    assert s3_archive.get(name).data == data
    # mid-verify: a storage error, not a damaged blob; with the store back, nothing is wrong
    with monkeypatch.context() as patched:
        _stop_after(3, swift_node, patched)
        try:
            with pytest.raises(StoreError, match="Could not connect"):
                s3_archive.verify()
        finally:
            swift_node.start_server("proxy")
    report = s3_archive.verify()
    assert (report.problems, report.checked_blobs) == ([], 2)
    # mid-backup: the backup fails, leaving no backup (and no half-written blob file); taken again, it is whole
    from pdi.archive.backup import backup

    dest = tmp_path / "backup"
    with monkeypatch.context() as patched:
        _stop_after(2, swift_node, patched)
        try:
            with pytest.raises(StoreError, match="Could not connect"):
                backup(location, dest)
        finally:
            swift_node.start_server("proxy")
    assert not (dest / "pdi-backup.json").exists()
    assert [p.name for p in dest.rglob("*") if p.is_file() and len(p.name) >= 64] == []
    done = backup(location, dest)
    assert done.blobs_copied == 2
    for octets in (data, other):
        digest = hashlib.sha256(octets).hexdigest()
        assert (dest / "blobs" / digest[:2] / digest).read_bytes() == octets


@pytest.mark.parametrize("server", ["proxy", "object"])
def test_the_store_stopping_mid_deposit_leaves_the_archive_as_it_was_and_a_retry_succeeds(
    s3_archive: Archive, s3_blobs: str, swift_node: TemporarySwift, server: str
) -> None:
    kept = s3_archive.add(S, b"kept\n", format="text")
    before = snapshot(s3_archive)
    objects = _keys(s3_blobs)
    data = _octets(20 * MIB, 6)
    sent: list[int] = []

    def source() -> Iterator[bytes]:
        for start in range(0, len(data), MIB):
            if start == 10 * MIB:  # the first 8 MiB part sent, the upload under way
                swift_node.stop_server(server)
            sent.append(start)
            yield data[start : start + MIB]

    try:
        with pytest.raises(StoreError, match=r"s3://.*: cannot upload archive/staging/\w+: ") as failed:
            s3_archive.add(S, source(), format="octet-stream")
    finally:
        swift_node.start_server(server)
    assert sent[-1] >= 16 * MIB - MIB  # it failed at the second part, not before
    assert _stagings(s3_archive) == []
    assert snapshot(s3_archive) == before
    left = set(_keys(s3_blobs)) - set(objects)
    # nothing at a content-addressed key; an unfinished upload the failure could not abort, its error says so
    assert all(key.startswith("upload of archive/staging/") for key in left), left
    if left:
        assert "pdi verify --remove-unreferenced will" in " ".join(getattr(failed.value, "__notes__", []))
    time.sleep(1.1)  # S3 dates uploads to the second: let "older than 0 s" be true
    s3_archive.remove_unreferenced(0)
    assert _keys(s3_blobs) == objects
    name = s3_archive.add(S, data, format="octet-stream")
    assert s3_archive.get(name).data == data
    assert s3_archive.get(kept).data == b"kept\n"


@pytest.mark.parametrize("size", [1000, 9 * MIB + 1])  # one PUT; a multipart upload of two parts
def test_an_object_altered_behind_the_archives_back_is_not_taken_for_the_octets_deposited_again(
    s3_archive: Archive, s3_blobs: str, size: int
) -> None:
    data = _octets(size, 7)
    first = str(s3_archive.add(S, data, format="octet-stream"))
    where = S3Location.parse(s3_blobs)
    client = boto3.client("s3")
    key = where.prefix + hashlib.sha256(data).hexdigest()
    damaged = bytearray(data)
    damaged[size // 2] ^= 0x20
    client.put_object(Bucket=where.bucket, Key=key, Body=bytes(damaged))  # the same size, other octets
    second = str(s3_archive.add(S, data, format="octet-stream"))
    # the octets deposited again, hashed on their way, are what the key holds now: both names read them
    assert hashlib.sha256(client.get_object(Bucket=where.bucket, Key=key)["Body"].read()).hexdigest() == key[-64:]
    assert s3_archive.get(second).data == data
    assert s3_archive.get(first).data == data
    assert s3_archive.verify().problems == []
    assert _keys(s3_blobs) == {key: size}


def test_readyz_asked_again_while_a_stalled_stores_probe_runs_begins_no_other_probe(
    s3_archive: Archive, location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A prober (Kubernetes, a load balancer) asks /readyz every few seconds; a stalled store's client waits for it up
    # to its timeouts. Each request began a probe thread of its own: they piled up in the event loop's few executor
    # threads. One probe at a time: later requests wait for it within their own deadline and say how long it has run.
    s3_archive.add(S, b"kept\n", format="text")
    with monkeypatch.context() as patched, StalledStore() as stalled:
        patched.setattr(s3, "CONNECT_SECONDS", 30.0)
        patched.setattr(s3, "READ_SECONDS", 30.0)
        patched.setattr(s3, "ATTEMPTS", 1)
        patched.setenv("AWS_ENDPOINT_URL", stalled.endpoint)
        with Archive.open(location) as other:
            probes: list[float] = []
            listing = other.probe_blobs

            def counted() -> None:
                probes.append(time.monotonic())
                listing()

            patched.setattr(other, "probe_blobs", counted)
            # asked from the server's own machine, which may read why a part failed (pdi.server.process.health)
            with TestClient(create_app(location, archive=other, cache_bytes=0), client=("127.0.0.1", 50000)) as client:
                answers = [client.get("/readyz") for _ in range(4)]
    assert [answer.status_code for answer in answers] == [503] * 4
    assert len(probes) == 1, probes
    details = [answer.json()["detail"] for answer in answers]
    assert details[0] == "blobs: no answer within 2 s", details
    assert all(answer.json()["failed"] == ["blobs"] for answer in answers)
    assert details[-1].startswith("blobs: no answer: its probe, begun ") and details[-1].endswith(
        " s ago, has not returned"), details


def test_keys_the_store_refuses_are_named_as_refused_when_a_head_answers_403(
    s3_archive: Archive, location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"kept in the store\n"
    name = str(s3_archive.add(S, data, format="text"))
    with monkeypatch.context() as patched:
        # the same access key with another secret: the store refuses the signature (a HEAD's 403 has no body)
        patched.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
        refused = r"cannot look up blob [0-9a-f]{64}: 403.*the store refused the keys: AWS_ACCESS_KEY_ID"
        with Archive.open(location) as other, pytest.raises(StoreError, match=refused):
            other.get(name)
        result = _get(location, name)
        assert result.exit_code == 8, result.output
        assert "the store refused the keys" in result.stderr
    assert _get(location, name).stdout_bytes == data  # the right keys again: the octets
