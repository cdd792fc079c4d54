"""`pdi backup` and `pdi restore` (pdi.archive.backup, pdi.archive.restore): a consistent backup of a live archive, restored.

The drill: eight writers deposit, a backup is taken in the middle, the archive
is destroyed (``rm -rf``, ``DROP DATABASE``) and restored; ``pdi verify`` is
clean and every deposit acknowledged before the backup began is there with
its octets (their SHA-256 compared with what was deposited).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from pdi.archive import Archive, Content
from pdi.archive.backup import backup
from pdi.archive.backup_files import MARKER
from pdi.archive.restore import restore
from pdi.errors import ImmutabilityError, NotFoundError, StoreError, UnsupportedError
from peak_memory import run_with_peak
from support.backups import reseal
from support.pgcluster import TemporaryCluster
from support.stored_blobs import catalog_number

S = "backup.example.us"
WRITERS = 8
_databases = itertools.count(1)


def _damaged(octets: bytes) -> bytes:
    """``octets`` with their first one changed (writing ``x`` there changed nothing in a blob that began with
    ``x``: one random blob in 256, and the test failed)."""
    return bytes([octets[0] ^ 0xFF]) + octets[1:]

def _pdi(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *args], capture_output=True, text=True, timeout=600, check=False)


def _writer(location: str, seed: int, stop: threading.Event, acknowledged: list[tuple[float, str, str]],
            failures: list[BaseException]) -> None:
    """Deposit octets (small ones kept as catalog rows, larger ones as blob files) until ``stop``."""
    rng = random.Random(seed)
    try:
        with Archive.open(location) as archive:
            while not stop.is_set():
                size = rng.choice((100, 5000, 70_000, 300_000))
                octets = rng.randbytes(size)
                (name,) = archive.deposit(S, [Content(octets, "octet-stream")])
                # appended only once the deposit has returned: acknowledged
                acknowledged.append((time.monotonic(), str(name), hashlib.sha256(octets).hexdigest()))
    except BaseException as exc:
        failures.append(exc)


def _http_writer(base: str, token: str, seed: int, stop: threading.Event,
                 acknowledged: list[tuple[float, str, str]], failures: list[BaseException]) -> None:
    """Deposit octets over HTTP (``POST /api/deposit`` of a running ``pdi serve``) until ``stop``."""
    import httpx

    rng = random.Random(seed)
    try:
        with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
            while not stop.is_set():
                octets = rng.randbytes(rng.choice((100, 5000, 70_000, 300_000)))
                answer = client.post(f"{base}/api/deposit?series={S}&format=octet-stream", content=octets)
                assert answer.status_code == 201, answer.text
                # a 201 received: acknowledged
                acknowledged.append((time.monotonic(), answer.json()["pdi"], hashlib.sha256(octets).hexdigest()))
    except BaseException as exc:
        failures.append(exc)


def _drill(location: str, dest: Path, destroy: Callable[[], object], restore_to: str | None,
           over_http: bool = False) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        _, token = archive.add_token("drill", role="deposit", series=[S])
    stop = threading.Event()
    acknowledged: list[tuple[float, str, str]] = []
    failures: list[BaseException] = []
    server = None
    if over_http:  # the writers are strangers' clients of pdi serve (two workers), the backup the command
        from server.server_helpers import start_serve, wait_answering
        from server.server_helpers import stop as stop_server

        server, port, _ = start_serve(location, "--workers", "2", "--replay-port", "0", drain=True,
                                      start_new_session=True)
        wait_answering(server, f"http://127.0.0.1:{port}/healthz")
        threads = [threading.Thread(target=_http_writer, args=(f"http://127.0.0.1:{port}", token, seed, stop,
                                                               acknowledged, failures)) for seed in range(WRITERS)]
    else:
        threads = [threading.Thread(target=_writer, args=(location, seed, stop, acknowledged, failures))
                   for seed in range(WRITERS)]
    for thread in threads:
        thread.start()
    try:
        while len(acknowledged) < 40 and not failures:
            time.sleep(0.05)
        began = time.monotonic()
        if over_http:
            made = _pdi("backup", str(dest), "--archive", location)
            assert made.returncode == 0, made.stderr
        else:
            backup(location, dest)
        after = len(acknowledged)
        while len(acknowledged) < after + 16 and not failures:  # deposits go on after the backup, too
            time.sleep(0.05)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        if server is not None:
            stop_server(server)
    assert not failures, failures
    before = [(name, digest) for when, name, digest in acknowledged if when < began]
    assert len(before) >= 40
    destroy()
    restore(dest, restore_to)
    where = restore_to or location
    checked = _pdi("verify", "--archive", where)
    assert checked.returncode == 0, checked.stderr
    assert "0 problems" in checked.stdout
    with Archive.open(where) as archive:
        for name, digest in before:
            with archive.open_octets(name) as opened:
                assert hashlib.sha256(b"".join(opened.reader.chunks())).hexdigest() == digest, name


@pytest.mark.parametrize("over_http", [False, True], ids=["archive", "http"])
def test_drill_sqlite(tmp_path: Path, over_http: bool) -> None:
    location = str(tmp_path / "archive")
    _drill(location, tmp_path / "backup", lambda: shutil.rmtree(location), None, over_http)
    assert not (tmp_path / "backup" / "tmp").exists() or not any((tmp_path / "backup" / "tmp").iterdir())


@pytest.mark.parametrize("over_http", [False, True], ids=["archive", "http"])
def test_drill_postgres(pg_cluster: TemporaryCluster, tmp_path: Path, over_http: bool) -> None:
    name = f"pdi_backup_{next(_databases)}"
    location = pg_cluster.create_database(name)

    def destroy() -> None:
        with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        pg_cluster.create_database(name)  # empty: what restore --to needs

    _drill(location, tmp_path / "backup", destroy, location, over_http)


def _small_archive(root: Path) -> list[tuple[str, bytes]]:
    with Archive.init(root) as archive:
        archive.add_series(S)
        return [(str(archive.deposit(S, [Content(octets, "octet-stream")])[0]), octets)
                for octets in (b"row\n", os.urandom(200_000), os.urandom(100_000))]


def test_incremental_backup_copies_only_new_blobs(tmp_path: Path) -> None:
    root = tmp_path / "archive"
    _small_archive(root)
    first = backup(str(root), tmp_path / "b", copy=True)
    assert (first.blobs_copied, first.blobs_present) == (2, 0)
    with Archive.open(root) as archive:
        archive.deposit(S, [Content(os.urandom(90_000), "octet-stream")])
    second = backup(str(root), tmp_path / "b", copy=True)
    assert (second.blobs_copied, second.blobs_present) == (1, 2)
    assert second.octets_copied == 90_000
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["blobs", "catalog.sqlite", MARKER]  # no scratch
    third = backup(str(root), tmp_path / "b")
    assert (third.blobs_copied, third.blobs_linked, third.blobs_present) == (0, 0, 3)


def test_backup_hard_links_on_one_file_system(tmp_path: Path) -> None:
    root = tmp_path / "archive"
    _small_archive(root)
    done = backup(str(root), tmp_path / "b")
    assert (done.blobs_linked, done.blobs_copied) == (2, 0)
    for blob in (tmp_path / "b" / "blobs").glob("*/*"):
        assert blob.stat().st_nlink == 2


def test_a_damaged_blob_is_not_backed_up(tmp_path: Path) -> None:
    from pdi.errors import IntegrityError

    root = tmp_path / "archive"
    _small_archive(root)
    victim = next((root / "blobs").glob("*/*"))
    victim.chmod(0o644)
    victim.write_bytes(_damaged(victim.read_bytes()))
    for copy in (True, False):
        with pytest.raises(IntegrityError, match=f"{victim.name}.*run pdi verify on the archive"):
            backup(str(root), tmp_path / "b", copy=copy)
        assert not (tmp_path / "b" / "catalog.sqlite").exists()
        assert not list((tmp_path / "b" / "tmp").iterdir())
        assert not (tmp_path / "b" / "blobs" / victim.name[:2] / victim.name).exists()


def test_a_damaged_backup_is_said_to_be_one_at_restore(tmp_path: Path) -> None:
    """A backup hard-linked to its archive shares its disk blocks: damage to the one is damage to the other. The
    restore says the backup is damaged and to restore another, not to run pdi verify (of what?)."""
    from pdi.errors import IntegrityError

    root = tmp_path / "archive"
    _small_archive(root)
    backup(str(root), tmp_path / "b")
    victim = next((tmp_path / "b" / "blobs").glob("*/*"))
    victim.chmod(0o644)
    victim.write_bytes(_damaged(victim.read_bytes()))
    with pytest.raises(IntegrityError, match=f"{victim.name}.*this backup is damaged.*restore another one"):
        restore(tmp_path / "b", str(tmp_path / "restored"))
    assert not (tmp_path / "restored" / "catalog.sqlite").exists()


def test_destination_must_be_empty_or_a_backup(tmp_path: Path) -> None:
    root = tmp_path / "archive"
    _small_archive(root)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine\n")
    with pytest.raises(ImmutabilityError, match="not empty and is not a pdi backup"):
        backup(str(root), tmp_path / "full")
    assert (tmp_path / "full" / "notes.txt").read_text() == "mine\n"
    result = _pdi("backup", str(tmp_path / "full"), "--archive", str(root))
    assert result.returncode == ImmutabilityError.exit_code
    assert "not a pdi backup" in result.stderr
    with pytest.raises(NotFoundError, match="not a pdi backup"):
        restore(tmp_path / "full", str(tmp_path / "new"))
    # a folder that is not there, or a file, is said to be so, not "no pdi-backup.json"
    with pytest.raises(NotFoundError, match="no such folder"):
        restore(tmp_path / "absent", str(tmp_path / "new"))
    with pytest.raises(NotFoundError, match=r"notes\.txt is not a folder"):
        restore(tmp_path / "full" / "notes.txt", str(tmp_path / "new"))
    result = _pdi("backup", str(tmp_path / "b"), "--archive", str(tmp_path / "none"))
    assert result.returncode == NotFoundError.exit_code, result.stderr
    assert not (tmp_path / "b").exists()


def test_another_archives_backup_is_not_taken_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two cron lines copied from one another: backing archive B up into A's backup would lose A's."""
    first, second = tmp_path / "first", tmp_path / "second"
    _small_archive(first)
    _small_archive(second)
    dest = tmp_path / "backup"
    backup(str(first), dest)
    marker = (dest / MARKER).read_bytes()
    catalog = (dest / "catalog.sqlite").read_bytes()
    with pytest.raises(ImmutabilityError, match=r"holds the backup of another archive .*first.*, not of .*second"):
        backup(str(second), dest)
    assert (dest / MARKER).read_bytes() == marker and (dest / "catalog.sqlite").read_bytes() == catalog
    # an archive of release 0.1.0, whose upgrade backs it up first
    with tarfile.open(Path(__file__).resolve().parents[1] / "data" / "releases" / "0.1.0" / "sqlite-archive.tar.gz") as tar:
        tar.extractall(tmp_path / "older", filter="data")
    older = tmp_path / "older" / "archive"
    result = _pdi("init", "--archive", str(older), "--backup", str(dest))
    assert result.returncode == ImmutabilityError.exit_code and "another archive" in result.stderr, result.stderr
    assert (dest / MARKER).read_bytes() == marker
    monkeypatch.chdir(tmp_path)  # the same archive named by another path is the same archive: backed up again
    again = backup("first", dest)
    assert again.blobs_present == 2 and again.blobs_copied == again.blobs_linked == 0  # its blob files there already
    assert json.loads((dest / MARKER).read_bytes())["source"] == str(first.resolve())


def test_restore_refuses_an_existing_archive(tmp_path: Path) -> None:
    root = tmp_path / "archive"
    _small_archive(root)
    backup(str(root), tmp_path / "b")
    with pytest.raises(ImmutabilityError, match="holds an archive already"):
        restore(tmp_path / "b")
    result = _pdi("restore", str(tmp_path / "b"), "--to", str(tmp_path / "copy"))
    assert result.returncode == 0, result.stderr
    assert _pdi("verify", "--archive", str(tmp_path / "copy")).returncode == 0


def test_a_restore_drill_shares_no_blob_file_with_its_backup(tmp_path: Path) -> None:
    """docs/how-to/backup.md's drill, ``pdi restore BACKUP --to DRILL``, on the backup's own file system: a blob
    changed in the drill (after a ``chmod``, as the trial that found it did) leaves the backup's as it was, and the
    backup restores again, ``pdi verify`` clean. (Hard-linked by default, the change was the backup's too.)"""
    root, dest, drill = tmp_path / "archive", tmp_path / "b", tmp_path / "drill"
    _small_archive(root)
    backup(str(root), dest, copy=True)
    before = {path.name: path.read_bytes() for path in (dest / "blobs").glob("*/*")}
    assert len(before) == 2 and all(hashlib.sha256(data).hexdigest() == name for name, data in before.items())
    result = _pdi("restore", str(dest), "--to", str(drill))
    assert result.returncode == 0, result.stderr
    assert ": 2 blobs copied, 0 hard-linked;" in result.stdout
    for blob in (drill / "blobs").glob("*/*"):
        assert blob.stat().st_nlink == 1 and not os.path.samestat(blob.stat(), (dest / "blobs" / blob.parent.name /
                                                                                 blob.name).stat())
        blob.chmod(0o644)
        blob.write_bytes(_damaged(blob.read_bytes()))
    assert _pdi("verify", "--archive", str(drill)).returncode == 3  # the drill is damaged, as it was made to be
    assert {path.name: path.read_bytes() for path in (dest / "blobs").glob("*/*")} == before
    again = _pdi("restore", str(dest), "--to", str(tmp_path / "again"))
    assert again.returncode == 0, again.stderr
    verified = _pdi("verify", "--archive", str(tmp_path / "again"))
    assert verified.returncode == 0 and " 0 problems" in verified.stdout, verified.stdout + verified.stderr


def test_restore_link_hard_links_blob_files_and_copy_is_the_defaults_name(tmp_path: Path) -> None:
    root, dest = tmp_path / "archive", tmp_path / "b"
    _small_archive(root)
    backup(str(root), dest, copy=True)
    linked = _pdi("restore", str(dest), "--to", str(tmp_path / "linked"), "--link")
    assert linked.returncode == 0 and ": 0 blobs copied, 2 hard-linked;" in linked.stdout, linked.stderr
    for blob in (tmp_path / "linked" / "blobs").glob("*/*"):
        assert os.path.samestat(blob.stat(), (dest / "blobs" / blob.parent.name / blob.name).stat())
    copied = _pdi("restore", str(dest), "--to", str(tmp_path / "copied"), "--copy")
    assert copied.returncode == 0 and ": 2 blobs copied, 0 hard-linked;" in copied.stdout, copied.stderr
    assert [blob.stat().st_nlink for blob in (tmp_path / "copied" / "blobs").glob("*/*")] == [1, 1]


def test_a_restore_from_a_backup_missing_a_blob_says_the_backup_is_incomplete(tmp_path: Path) -> None:
    """Not "run the backup again" (what a backup meeting a blob purged meanwhile says): after the loss a restore is
    for, the backup cannot be made again."""
    root = tmp_path / "archive"
    kept = _small_archive(root)
    backup(str(root), tmp_path / "b", copy=True)
    lost = hashlib.sha256(kept[1][1]).hexdigest()
    (tmp_path / "b" / "blobs" / lost[:2] / lost).unlink()
    with pytest.raises(StoreError, match=f"blob {lost} the backup's catalog names is missing from the backup .*:"
                                         " this backup is incomplete or damaged; restore another one"):
        restore(tmp_path / "b", str(tmp_path / "new"))


def test_not_enough_space_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "archive"
    _small_archive(root)
    monkeypatch.setattr(shutil, "disk_usage", lambda _: shutil._ntuple_diskusage(1 << 30, 1 << 30, 1 << 20))  # type: ignore[attr-defined]
    with pytest.raises(StoreError, match="not enough space"):
        backup(str(root), tmp_path / "b")


def test_postgres_backup_checks_the_space_before_pg_dump_and_keeps_the_last_backup(
    pg_cluster: TemporaryCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    location = pg_cluster.create_database(f"pdi_backup_{next(_databases)}")
    noise = random.Random(7)
    with Archive.init(location) as archive:  # blobs in the database: large objects, incompressible
        archive.add_series(S)
        for _ in range(3):
            archive.deposit(S, [Content(noise.randbytes(1 << 20), "octet-stream")])
    dest = tmp_path / "b"
    backup(location, dest)
    dump = dest / "catalog.dump"
    kept = dump.read_bytes()
    from pdi.archive.backup import _dump_estimate

    assert _dump_estimate(location, True) >= len(kept) >= 3 << 20  # the estimate is what the dump took at least
    ran = tmp_path / "ran"
    tools = tmp_path / "bin"
    tools.mkdir()
    real = shutil.which("pg_dump")
    assert real is not None
    (tools / "pg_dump").write_text(f'#!/bin/sh\necho "$@" >> {ran}\nexec {real} "$@"\n')  # says how it ran
    (tools / "pg_dump").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    free = len(kept)  # as much free as the last dump took: not enough with the spare
    monkeypatch.setattr(shutil, "disk_usage", lambda _: shutil._ntuple_diskusage(1 << 40, 1 << 40, free))  # type: ignore[attr-defined]
    with pytest.raises(StoreError, match=r"not enough space at .*MiB needed"):
        backup(location, dest)
    asked = ran.read_text().splitlines() if ran.exists() else []
    assert all(line == "--version" for line in asked), asked  # asked its version at most, never to dump
    assert dump.read_bytes() == kept and not (dest / "catalog.dump.partial").exists()


def test_pg_dump_missing_or_too_old_is_said(pg_cluster: TemporaryCluster, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    location = pg_cluster.create_database(f"pdi_backup_{next(_databases)}")
    with Archive.init(location) as archive:
        archive.add_series(S)
    old = tmp_path / "bin"
    old.mkdir()
    (old / "pg_dump").write_text("#!/bin/sh\necho 'pg_dump (PostgreSQL) 9.6.24'\n")
    (old / "pg_dump").chmod(0o755)
    monkeypatch.setenv("PATH", str(old))
    with pytest.raises(StoreError, match=r"PostgreSQL 9, older than the server \(\d+\).*postgresql-client-"):
        backup(location, tmp_path / "b")
    (old / "pg_dump").unlink()
    with pytest.raises(StoreError, match=r"pg_dump not found.*postgresql-client-"):
        backup(location, tmp_path / "b")


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_backup_and_restore_stream(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A backup and a restore of a 96 MiB blob (copied, not linked) grow the process far less than the blob.

    The peak is the whole process tree's (``wait4`` counts the reaped children: pg_dump and pg_restore too).
    """
    cluster: TemporaryCluster | None = request.getfixturevalue("pg_cluster") if kind == "postgres" else None

    def place(name: str) -> str:
        if cluster is None:
            return str(tmp_path / name)
        return cluster.create_database(f"pdi_backup_{name}_{next(_databases)}")

    peaks = {}
    for name, size in (("small", 100_000), ("big", 96 << 20)):
        location = place(name)
        with Archive.init(location) as archive:
            archive.add_series(S)
            with tempfile.TemporaryFile() as f:
                for _ in range(max(size >> 16, 1)):
                    f.write(os.urandom(min(size, 1 << 16)))
                f.seek(0)
                archive.deposit(S, [Content(f, "octet-stream")])
        code, peak, _ = run_with_peak([sys.executable, "-m", "pdi", "backup", "--copy", str(tmp_path / f"b-{name}"),
                                       "--archive", location], stdout=subprocess.DEVNULL)
        assert code == 0
        target = place(f"r{name}")
        code, again, _ = run_with_peak([sys.executable, "-m", "pdi", "restore", "--copy", str(tmp_path / f"b-{name}"),
                                        "--to", target], stdout=subprocess.DEVNULL)
        assert code == 0
        with Archive.open(target) as restored:
            assert restored.verify().problems == []
        peaks[name] = max(peak, again)
    grown_mib = (peaks["big"] - peaks["small"]) / 1024
    assert grown_mib < 30, f"backup and restore grew by {grown_mib:.0f} MiB for a 96 MiB blob"


def test_s3_blobs_are_copied_and_put_back(location: str, s3_blobs: str, tmp_path: Path,
                                         request: pytest.FixtureRequest) -> None:
    """Blobs in an S3-compatible store (the Swift node): copied into the backup; restored into a bucket that lost them."""
    import boto3

    from pdi.archive.blobs.s3 import S3Location

    with Archive.init(location, blobs=s3_blobs) as archive:
        archive.add_series(S)
        octets = os.urandom(300_000)
        (name,) = archive.deposit(S, [Content(octets, "octet-stream")])
        (small,) = archive.deposit(S, [Content(b"a small one\n", "text")])
    digest = hashlib.sha256(octets).hexdigest()
    done = backup(location, tmp_path / "b")
    assert done.blobs_copied == 2  # beside S3, a small blob is an object too
    assert hashlib.sha256((tmp_path / "b" / "blobs" / digest[:2] / digest).read_bytes()).hexdigest() == digest
    again = backup(location, tmp_path / "b")
    assert (again.blobs_copied, again.blobs_present) == (0, 2)
    # the archive and the bucket's object are lost
    where = S3Location.parse(s3_blobs)
    client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    client.delete_object(Bucket=where.bucket, Key=f"{where.prefix}{digest}")
    if location.startswith("postgresql:"):
        schema = location.rsplit("%3D", 1)[1]
        cluster: TemporaryCluster = request.getfixturevalue("pg_cluster")
        with psycopg.connect(cluster.url(), autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
    else:
        shutil.rmtree(location)
    _, restored = restore(tmp_path / "b")
    assert restored.blobs_copied == 1
    # the bucket the backup's archive recorded: shared with it, were it still in use (the command says so)
    assert (restored.blob_store, restored.shares_blob_store) == (str(where), True)
    checked = _pdi("verify", "--archive", location)
    assert checked.returncode == 0, checked.stderr + checked.stdout
    assert "unreferenced" not in checked.stdout
    with Archive.open(location) as archive:
        with archive.open_octets(str(name)) as opened:
            assert hashlib.sha256(b"".join(opened.reader.chunks())).hexdigest() == digest
        with archive.open_octets(str(small)) as opened:
            assert b"".join(opened.reader.chunks()) == b"a small one\n"


def test_s3_blobs_are_restored_into_another_bucket_leaving_the_recorded_one_alone(
        location: str, s3_blobs: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """``pdi restore --blobs s3://OTHER/…``: the restored archive records the other bucket, which holds every blob
    (uploaded from the backup), and the bucket the archive recorded is neither read for them nor written: a
    drill beside the live archive shares nothing with it, so neither's ``--remove-unreferenced`` takes the other's."""
    import boto3

    from pdi.archive.blobs.s3 import S3Location

    with Archive.init(location, blobs=s3_blobs) as archive:
        archive.add_series(S)
        octets = os.urandom(300_000)
        (name,) = archive.deposit(S, [Content(octets, "octet-stream")])
        (small,) = archive.deposit(S, [Content(b"a small one\n", "text")])
    digests = {hashlib.sha256(octets).hexdigest(), hashlib.sha256(b"a small one\n").hexdigest()}
    assert _pdi("backup", str(tmp_path / "b"), "--archive", location).returncode == 0
    client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    first = S3Location.parse(s3_blobs)

    def keys(bucket: str) -> dict[str, str]:  # key → ETag
        listed = client.list_objects_v2(Bucket=bucket).get("Contents", [])
        return {str(o["Key"]): str(o["ETag"]) for o in listed}

    before = keys(first.bucket)
    assert {f"{first.prefix}{d}" for d in digests} <= set(before)
    # a bucket that is not there is said before anything is written
    target = str(tmp_path / "drill") if not location.startswith("postgresql:") else location
    if location.startswith("postgresql:"):
        schema = location.rsplit("%3D", 1)[1]
        cluster: TemporaryCluster = request.getfixturevalue("pg_cluster")
        with psycopg.connect(cluster.url(), autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
    missing = _pdi("restore", str(tmp_path / "b"), "--to", target, "--blobs", "s3://pdi-no-such-bucket/x/")
    assert missing.returncode == 4 and "no bucket 'pdi-no-such-bucket'" in missing.stderr, missing.stderr
    if not location.startswith("postgresql:"):
        assert not Path(target).exists()
    other = f"pdi-drill-{os.getpid()}-{len(location)}"
    client.create_bucket(Bucket=other)
    done = _pdi("restore", str(tmp_path / "b"), "--to", target, "--blobs", f"s3://{other}/kept/")
    assert done.returncode == 0, done.stderr
    assert "2 blobs copied" in done.stdout and "remove-unreferenced" not in done.stdout  # a bucket of its own
    assert set(keys(other)) == {f"kept/{d}" for d in digests}
    for d in digests:  # each object is the blob its key names, read back from the other bucket
        body = client.get_object(Bucket=other, Key=f"kept/{d}")["Body"].read()
        assert hashlib.sha256(body).hexdigest() == d
    with Archive.open(target) as restored:
        assert restored.store.blob_store_url() == f"s3://{other}/kept/"
        with restored.open_octets(str(name)) as opened:
            assert b"".join(opened.reader.chunks()) == octets
        with restored.open_octets(str(small)) as opened:
            assert b"".join(opened.reader.chunks()) == b"a small one\n"
        restored.deposit(S, [Content(b"made in the drill\n", "text")])
    checked = _pdi("verify", "--archive", target, "--remove-unreferenced", "--older-than", "0")
    assert checked.returncode == 0, checked.stderr + checked.stdout
    assert keys(first.bucket) == before  # the recorded bucket: not a key added, removed or rewritten


def test_blobs_of_another_bucket_are_refused_for_a_backup_whose_blobs_are_not_in_s3(
        location: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        archive.deposit(S, [Content(b"kept in the archive's own store\n", "text")])
    assert _pdi("backup", str(tmp_path / "b"), "--archive", location).returncode == 0
    target = str(tmp_path / "r")
    if location.startswith("postgresql:"):
        target = location
        schema = location.rsplit("%3D", 1)[1]
        cluster: TemporaryCluster = request.getfixturevalue("pg_cluster")
        with psycopg.connect(cluster.url(), autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
    refused = _pdi("restore", str(tmp_path / "b"), "--to", target, "--blobs", "s3://anywhere/x/")
    assert refused.returncode == 8, refused.stderr
    assert "not in S3" in refused.stderr and "nothing was restored" in refused.stderr
    if location.startswith("postgresql:"):
        cluster = request.getfixturevalue("pg_cluster")
        with psycopg.connect(cluster.url(), autocommit=True) as conn:
            assert conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone() is None
    else:
        assert not Path(target).exists()


def test_postgres_schema_archive_is_restored_into_its_schema(pg_cluster: TemporaryCluster, tmp_path: Path) -> None:
    """An archive in a schema of a shared database (search_path in its URL): dumped alone, restored by name."""
    schema = f"pdi_backup_schema_{next(_databases)}"
    location = pg_cluster.create_schema(schema)
    with Archive.init(location) as archive:
        archive.add_series(S)
        octets = os.urandom(150_000)
        (name,) = archive.deposit(S, [Content(octets, "octet-stream")])
    result = _pdi("backup", str(tmp_path / "b"), "--archive", location)
    assert result.returncode == 0, result.stderr
    _small_archive(tmp_path / "sqlite")
    backup(str(tmp_path / "sqlite"), tmp_path / "sqlite-backup")
    with pytest.raises(ImmutabilityError, match="holds a backup of a sqlite archive, not of this postgres one: back this one"
                                                  " up into an empty or new directory"):
        backup(location, tmp_path / "sqlite-backup")
    with pytest.raises(UnsupportedError, match="backup of a SQLite archive: restore it to a directory"):
        restore(tmp_path / "sqlite-backup", location)
    with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
        conn.execute(f'CREATE SCHEMA "{schema}"')  # empty, as an operator might make it first
    elsewhere = pg_cluster.create_schema(f"{schema}_other")
    with pytest.raises(UnsupportedError, match=f"holds the schema '{schema}'"):
        restore(tmp_path / "b", elsewhere)
    result = _pdi("restore", str(tmp_path / "b"), "--to", location)
    assert result.returncode == 0, result.stderr
    # the command it says to run next is one a shell can be given as printed: the URL's & and ? quoted
    printed = result.stdout.rpartition("; now run: ")[2].strip()
    shell = subprocess.run(["sh", "-c", 'pdi() { printf "%s\\n" "$@"; }; ' + printed + "; wait"],
                           capture_output=True, text=True, check=True, cwd=tmp_path)
    told = ["pdi", *shell.stdout.splitlines()]
    assert told == ["pdi", "verify", "--archive", location], result.stdout
    assert _pdi(*told[1:]).returncode == 0
    with Archive.open(location) as archive, archive.open_octets(str(name)) as opened:
        assert b"".join(opened.reader.chunks()) == octets
    result = _pdi("restore", str(tmp_path / "b"), "--to", location)
    assert result.returncode == ImmutabilityError.exit_code
    assert "holds an archive already" in result.stderr


def test_a_rollbacks_backup_is_neither_migrated_nor_opened_as_an_archive(tmp_path: Path) -> None:
    """The backup ``pdi init --backup`` made before an upgrade is the way back: restoring it says its schema is an
    older release's instead of inviting a pdi verify, which refuses it (as every command but pdi init does), and the
    backup's own directory given as an archive is refused, not migrated."""
    from pdi.archive.store import SCHEMA_VERSION

    with tarfile.open(Path(__file__).resolve().parents[1] / "data" / "releases" / "0.1.0" / "sqlite-archive.tar.gz") as tar:
        tar.extractall(tmp_path / "old", filter="data")
    old, before = tmp_path / "old" / "archive", tmp_path / "pre-upgrade"

    def schema(root: Path) -> int:
        return catalog_number(root, "SELECT MAX(version) FROM schema_migrations")

    release = schema(old)
    assert release < SCHEMA_VERSION
    assert _pdi("init", "--archive", str(old), "--backup", str(before)).returncode == 0
    assert schema(old) == SCHEMA_VERSION and schema(before) == release
    assert json.loads((before / MARKER).read_bytes())["schema_version"] == release  # what release opens it, said
    result = _pdi("verify", "--archive", str(before))
    assert result.returncode == NotFoundError.exit_code and "is a backup made by pdi backup" in result.stderr
    assert schema(before) == release  # not migrated
    restored = _pdi("restore", str(before), "--to", str(tmp_path / "rollback"))
    assert restored.returncode == 0, restored.stderr
    assert f"schema version {release}, older than this pdi's {SCHEMA_VERSION}" in restored.stdout
    assert "now run: pdi verify" not in restored.stdout
    assert "every command of this pdi but pdi init refuses it, exit 8" in restored.stdout
    assert schema(tmp_path / "rollback") == release
    # as it says: a look at the rollback with this pdi is refused, and leaves it as the release wrote it
    looked = _pdi("verify", "--archive", str(tmp_path / "rollback"))
    assert looked.returncode == StoreError.exit_code, looked.stderr
    assert f"has schema version {release}, older than this pdi's ({SCHEMA_VERSION})" in looked.stderr
    assert schema(tmp_path / "rollback") == release


def test_a_backup_inside_its_archive_or_a_restore_inside_its_backup_is_refused(tmp_path: Path) -> None:
    """A backup inside the archive goes with it (``rm -rf``) and is taken for its files (``tmp/`` is the archive's
    staging folder); a restore inside the backup mixes the two. Both are refused before anything is written."""
    root = tmp_path / "archive"
    _small_archive(root)
    for inside in (root / "bk", root / "tmp", root / "blobs" / "x" / ".." / "y"):
        with pytest.raises(ImmutabilityError, match="inside the archive it would back up"):
            backup(str(root), inside)
        assert not (root / "bk").exists() and not (root / "blobs" / "y").exists()
    backup(str(root), tmp_path / "backup")
    held = sorted((tmp_path / "backup").rglob("*"))
    with pytest.raises(ImmutabilityError, match="inside the backup"):
        restore(tmp_path / "backup", str(tmp_path / "backup" / "tmp"))
    assert sorted((tmp_path / "backup").rglob("*")) == held  # nothing made in it


def test_a_blob_missing_from_the_archive_is_said_so_not_blamed_on_a_purge(tmp_path: Path) -> None:
    """A blob file already gone before the backup (a disk's loss, a hand's ``rm``) fails every backup until it is
    repaired: the message sends the operator to ``pdi verify``, not to run the same backup again."""
    root = tmp_path / "archive"
    _small_archive(root)
    victim = next(p for p in (root / "blobs").rglob("*") if p.is_file())
    victim.chmod(0o644)
    victim.unlink()
    with pytest.raises(StoreError, match=f"blob {victim.name} the catalog names is missing from the archive"
                                         r".*run pdi verify on the archive"):
        backup(str(root), tmp_path / "backup")


def test_a_backup_newer_than_this_pdi_is_refused_before_anything_is_restored(tmp_path: Path) -> None:
    """A newer release's backup: restored, this pdi could not open it. Its schema version (the marker's, or for a
    marker written before pdi kept one, its catalog's) is read first, and nothing is written."""
    from pdi.archive.store import SCHEMA_VERSION

    root = tmp_path / "archive"
    _small_archive(root)
    backup(str(root), tmp_path / "b", copy=True)
    marker = json.loads((tmp_path / "b" / MARKER).read_bytes())
    marker["schema_version"] = SCHEMA_VERSION + 1  # as a newer release writes it: its marker and its catalog
    (tmp_path / "b" / MARKER).write_text(json.dumps(marker))
    with sqlite3.connect(tmp_path / "b" / "catalog.sqlite") as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (?, '2030-01-01T00:00:00Z')", (SCHEMA_VERSION + 1,))
    conn.close()
    reseal(tmp_path / "b")  # the newer release records its catalog's SHA-256
    marker = json.loads((tmp_path / "b" / MARKER).read_bytes())
    for older_marker in (False, True):
        if older_marker:
            del marker["schema_version"]  # an older marker: the catalog's own version is read
            (tmp_path / "b" / MARKER).write_text(json.dumps(marker))
        result = _pdi("restore", str(tmp_path / "b"), "--to", str(tmp_path / "r"))
        assert result.returncode == StoreError.exit_code, result.stderr
        assert f"schema version {SCHEMA_VERSION + 1}, newer than this pdi understands" in result.stderr
        assert not (tmp_path / "r").exists()
    with sqlite3.connect(tmp_path / "b" / "catalog.sqlite") as conn:
        conn.execute("DELETE FROM schema_migrations WHERE version = ?", (SCHEMA_VERSION + 1,))
    conn.close()
    reseal(tmp_path / "b")
    assert _pdi("restore", str(tmp_path / "b"), "--to", str(tmp_path / "r")).returncode == 0


@pytest.mark.parametrize(("again", "same"), [
    ("postgresql://pdi@db/pdi?options=-csearch_path%3Dlib", True),  # the password moved to .pgpass
    ("postgres://pdi:other@db:5432/pdi?sslmode=verify-full&options=-csearch_path%3Dlib", True),
    ("postgresql://pdi@db/pdi", False),  # the database's own schema: another archive
    ("postgresql://pdi@db/other?options=-csearch_path%3Dlib", False),
    ("postgresql://pdi@elsewhere/pdi?options=-csearch_path%3Dlib", False),
])
def test_a_postgresql_archive_is_the_same_however_its_url_is_spelled(again: str, same: bool) -> None:
    """A nightly backup job keeps backing up into its directory when the URL is spelled otherwise (a password moved
    out of it, options reordered, the default port written out), and only then."""
    from pdi.archive.backup import _same_archive
    from pdi.archive.postgres import redact_url

    recorded = redact_url("postgresql://pdi:secret@db/pdi?options=-csearch_path%3Dlib&connect_timeout=5")
    assert _same_archive(recorded, redact_url(again), "postgres") is same


def _hostile_backup(tmp_path: Path, change: Callable[[sqlite3.Connection], object]) -> Path:
    """A backup of a small archive whose catalog a stranger changed with ``change``."""
    root = tmp_path / "archive"
    _small_archive(root)
    backup(str(root), tmp_path / "b", copy=True)
    catalog = tmp_path / "b" / "catalog.sqlite"
    conn = sqlite3.connect(catalog)
    try:
        change(conn)
        conn.commit()
    finally:
        conn.close()
    reseal(tmp_path / "b")  # as the stranger can: the restore's checks of the catalog itself are what meet it
    return tmp_path / "b"


def test_a_backups_catalog_naming_a_path_for_a_blob_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    """Found by an attack (2026-11-27): a name of the backup's catalog is made into paths of the backup and of the
    restored archive; a row naming ``/abs/path/secret.txt`` (of that file's size) passed as a blob present, and a
    later ``pdi withdraw --purge`` in the restored archive unlinked that file."""
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"not the archive's\n")
    made = _hostile_backup(tmp_path, lambda c: c.execute(
        "UPDATE representations SET sha256 = ?, size = ? WHERE size = 200000", (str(secret), secret.stat().st_size)))
    result = _pdi("restore", str(made), "--to", str(tmp_path / "r"))
    assert result.returncode == StoreError.exit_code, result.stderr
    assert f"names a blob {str(secret)[:80]!r} of size 18, which is no SHA-256" in result.stderr
    assert not (tmp_path / "r").exists() and secret.read_bytes() == b"not the archive's\n"


def test_a_backups_catalog_with_a_view_is_refused_at_once(tmp_path: Path) -> None:
    """Found by an attack (2026-11-27): ``representations`` made an endless ``WITH RECURSIVE`` view; reading it
    filled the disk with SQLite's sort (3 GB in 25 s) and never ended. A pdi catalog has no views."""
    def endless(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE representations RENAME TO kept")
        conn.execute("CREATE VIEW representations AS WITH RECURSIVE n(sha256, size, purged) AS"
                     " (SELECT 'a', 1, NULL UNION ALL SELECT sha256 || 'a', size + 1, NULL FROM n)"
                     " SELECT * FROM n")

    made = _hostile_backup(tmp_path, endless)
    started = time.monotonic()
    result = _pdi("restore", str(made), "--to", str(tmp_path / "r"))
    assert time.monotonic() - started < 30
    assert result.returncode == StoreError.exit_code, result.stderr
    assert "holds views (representations), which no pdi catalog has" in result.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("which", ["pdi-backup.json", "catalog.sqlite", "blob"])
def test_a_named_pipe_in_a_backup_is_refused_not_waited_on(tmp_path: Path, which: str) -> None:
    """Found by an attack (2026-11-27): a backup's marker, catalog or blob file that is a named pipe (tar keeps
    them) held ``pdi restore`` in ``open`` for ever."""
    root = tmp_path / "archive"
    _small_archive(root)
    backup(str(root), tmp_path / "b", copy=True)
    if which == "blob":
        target = next(p for p in (tmp_path / "b" / "blobs").rglob("*") if p.is_file())
    else:
        target = tmp_path / "b" / which
    target.unlink()
    os.mkfifo(target)
    result = _pdi("restore", str(tmp_path / "b"), "--to", str(tmp_path / "r"))
    assert result.returncode == StoreError.exit_code, result.stderr
    assert f"{target} is not a file (a pipe, a device or a folder): not a pdi backup" in result.stderr


def test_a_markers_place_must_be_text(tmp_path: Path) -> None:
    """Found by an attack (2026-11-27): a marker whose source was a JSON list restored into a folder named
    ``['a']``."""
    root = tmp_path / "archive"
    _small_archive(root)
    backup(str(root), tmp_path / "b")
    marker = json.loads((tmp_path / "b" / MARKER).read_bytes())
    marker["source"] = ["a"]
    (tmp_path / "b" / MARKER).write_text(json.dumps(marker))
    result = subprocess.run([sys.executable, "-m", "pdi", "restore", str(tmp_path / "b")], capture_output=True,
                            text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == StoreError.exit_code, result.stderr
    assert "names no place it was taken from: give --to" in result.stderr
    assert not (tmp_path / "['a']").exists()


def test_a_backups_catalog_is_looked_at_before_its_schema_version_is_read(tmp_path: Path) -> None:
    """Found in review (2026-11-27): a marker without its schema version (one an older pdi wrote) has the catalog's
    read from the catalog itself, which was opened before it was checked: a named pipe there still held the
    restore for ever; a backup without its catalog was an sqlite3 traceback."""
    root = tmp_path / "archive"
    _small_archive(root)
    backup(str(root), tmp_path / "b", copy=True)
    marker = json.loads((tmp_path / "b" / MARKER).read_bytes())
    del marker["schema_version"]
    (tmp_path / "b" / MARKER).write_text(json.dumps(marker))
    catalog = tmp_path / "b" / "catalog.sqlite"
    catalog.unlink()
    result = _pdi("restore", str(tmp_path / "b"), "--to", str(tmp_path / "r"))
    assert result.returncode == NotFoundError.exit_code, result.stderr
    assert "is not a whole pdi backup: it has no catalog.sqlite" in result.stderr and "Traceback" not in result.stderr
    os.mkfifo(catalog)
    result = _pdi("restore", str(tmp_path / "b"), "--to", str(tmp_path / "r"))
    assert result.returncode == StoreError.exit_code, result.stderr
    assert f"{catalog} is not a file (a pipe, a device or a folder)" in result.stderr
    assert not (tmp_path / "r").exists()
