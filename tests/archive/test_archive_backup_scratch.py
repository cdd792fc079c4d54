"""A backup holds only what a restore needs: no scratch folder, no folder with nothing in it.

``pdi backup`` copies each blob through a temporary file in ``DEST/tmp`` (hashed as it streams, then renamed
into ``DEST/blobs``): that folder is the backup's scratch, and was left in every backup, empty (or holding what a
killed backup was copying). ``DEST/blobs`` is what a restore reads the blobs from, and nothing where the backup
holds none (a SQLite archive whose blobs are all rows of its catalog, a PostgreSQL archive whose blobs are in
its database). What a restore needs is the marker, the catalog (``catalog.sqlite`` or ``catalog.dump``) and the
blobs; the restored archive makes its own ``blobs/`` and ``tmp/`` (pdi.archive.restore), so that it takes
deposits as before.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pdi.archive import Archive, Content
from pdi.archive import backup as backup_module
from pdi.archive.backup import backup
from pdi.archive.backup_files import MARKER, BackupDone, BlobCopier
from pdi.archive.restore import restore
from pdi.errors import StoreError
from support.pgcluster import TemporaryCluster

S = "backup.example.us"
_databases = itertools.count(1)


def _held(dest: Path) -> list[str]:
    """Every path under ``dest``, folders ending in ``/``, sorted."""
    return sorted(str(p.relative_to(dest)) + ("/" if p.is_dir() else "") for p in dest.rglob("*"))


def _deposits_again(location: str) -> None:
    """The restored archive takes a deposit kept as a row and one kept as a blob, reads both back, and is whole."""
    with Archive.open(location) as archive:
        for octets in (b"a small one\n", os.urandom(150_000)):
            (name,) = archive.deposit(S, [Content(octets, "octet-stream")])
            assert archive.get(name).data == octets
        report = archive.verify()
        assert report.ok, report


def test_a_backup_of_blob_files_holds_no_scratch_and_the_restore_makes_what_the_archive_needs(
        tmp_path: Path) -> None:
    root, dest = tmp_path / "archive", tmp_path / "b"
    large = os.urandom(120_000)
    digest = hashlib.sha256(large).hexdigest()
    with Archive.init(str(root)) as archive:
        archive.add_series(S)
        archive.deposit(S, [Content(b"row\n", "octet-stream")])
        archive.deposit(S, [Content(large, "octet-stream")])
    expected = ["blobs/", f"blobs/{digest[:2]}/", f"blobs/{digest[:2]}/{digest}", "catalog.sqlite", MARKER]
    for copy in (True, False):  # copied, then (again, into the same DEST) found there
        backup(str(root), dest, copy=copy)
        assert _held(dest) == expected
    # a backup killed while it copied a blob left its temporary file: the next one takes it away
    (dest / "tmp").mkdir()
    (dest / "tmp" / f"{digest}.4242").write_bytes(large[:1000])
    backup(str(root), dest)
    assert _held(dest) == expected
    shutil.rmtree(root)
    restore(dest)
    assert (root / "blobs").is_dir() and (root / "tmp").is_dir()
    _deposits_again(str(root))


def test_a_backup_of_an_archive_whose_blobs_are_all_rows_holds_its_catalog_and_marker_alone(tmp_path: Path) -> None:
    root, dest = tmp_path / "archive", tmp_path / "b"
    with Archive.init(str(root)) as archive:
        archive.add_series(S)
        archive.deposit(S, [Content(b"a row of the catalog\n", "octet-stream")])
    backup(str(root), dest)
    assert _held(dest) == ["catalog.sqlite", MARKER]
    restore(dest, str(tmp_path / "restored"))
    assert (tmp_path / "restored" / "blobs").is_dir() and (tmp_path / "restored" / "tmp").is_dir()
    _deposits_again(str(tmp_path / "restored"))


def test_a_backup_of_a_postgresql_archive_holds_its_dump_and_marker_alone(
        pg_cluster: TemporaryCluster, tmp_path: Path) -> None:
    name = f"pdi_backup_scratch_{next(_databases)}"
    location = pg_cluster.create_database(name)
    with Archive.init(location) as archive:
        archive.add_series(S)
        archive.deposit(S, [Content(os.urandom(150_000), "octet-stream")])  # a large object, in the database
    dest = tmp_path / "b"
    backup(location, dest)
    assert _held(dest) == ["catalog.dump", MARKER]
    with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    pg_cluster.create_database(name)
    restore(dest, location)
    _deposits_again(location)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_backup_of_s3_blobs_holds_them_and_no_scratch(kind: str, s3_blobs: str, tmp_path: Path,
                                                        request: pytest.FixtureRequest) -> None:
    if kind == "sqlite":
        location = str(tmp_path / "archive")
    else:
        cluster: TemporaryCluster = request.getfixturevalue("pg_cluster")
        location = cluster.create_schema(f"pdi_backup_scratch_s3_{next(_databases)}")
    octets = os.urandom(90_000)
    digest = hashlib.sha256(octets).hexdigest()
    with Archive.init(location, blobs=s3_blobs) as archive:
        archive.add_series(S)
        archive.deposit(S, [Content(octets, "octet-stream")])
    dest = tmp_path / "b"
    backup(location, dest)
    catalog = "catalog.sqlite" if kind == "sqlite" else "catalog.dump"
    assert _held(dest) == ["blobs/", f"blobs/{digest[:2]}/", f"blobs/{digest[:2]}/{digest}", catalog, MARKER]


def test_a_second_backup_into_a_dest_a_backup_is_copying_into_is_refused_and_the_first_finishes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two backups into one DEST at once (an overlapping cron job): the second would find the first's scratch and
    catalog copy and take them away (DEST/tmp between two of its blobs, catalog.sqlite.partial), and the first then
    failed on its next blob; the second is refused at once, saying why, and the first finishes whole."""
    root, dest = tmp_path / "archive", tmp_path / "b"
    large = [os.urandom(120_000) for _ in range(3)]
    with Archive.init(str(root)) as archive:
        archive.add_series(S)
        for octets in large:
            archive.deposit(S, [Content(octets, "octet-stream")])
    placed, go_on = threading.Event(), threading.Event()
    real = BlobCopier.from_file

    def pausing(self: BlobCopier, sha256: str, source: Path) -> None:  # the first backup stops after one blob
        real(self, sha256, source)
        if threading.current_thread().name == "first" and not placed.is_set():
            placed.set()
            go_on.wait(60)

    monkeypatch.setattr(BlobCopier, "from_file", pausing)
    done: list[object] = []

    def first() -> None:
        try:
            done.append(backup(str(root), dest, copy=True))
        except BaseException as exc:  # said by the assertion below
            done.append(exc)

    thread = threading.Thread(target=first, name="first")
    thread.start()
    try:
        assert placed.wait(60)
        with pytest.raises(StoreError, match=f"another pdi backup into {dest} is running"):
            backup(str(root), dest, copy=True)
    finally:
        go_on.set()
        thread.join(60)
    assert len(done) == 1 and isinstance(done[0], BackupDone), done
    digests = sorted(hashlib.sha256(octets).hexdigest() for octets in large)
    assert _held(dest) == sorted(["catalog.sqlite", MARKER, "blobs/", *{f"blobs/{d[:2]}/" for d in digests},
                                  *(f"blobs/{d[:2]}/{d}" for d in digests)])
    backup(str(root), dest)  # and once it is done, the next one runs
    shutil.rmtree(root)
    restore(dest)
    _deposits_again(str(root))


def _as_it_is(dest: Path) -> list[tuple[str, int, bytes]]:
    """Every path under ``dest`` and ``dest`` itself: its last change (a folder's changes when an entry is made in
    it or taken away) and a file's octets."""
    return [(str(p.relative_to(dest)), p.stat().st_mtime_ns, b"" if p.is_dir() else p.read_bytes())
            for p in sorted([dest, *dest.rglob("*")])]


@pytest.mark.parametrize("again", [False, True], ids=["first-backup", "next-backup"])
def test_a_backup_refused_since_another_runs_into_dest_leaves_dest_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, again: bool) -> None:
    """The refused backup made DEST/blobs and DEST/tmp before it took the lock, and left them: the first, past its
    clean-up of the scratch, then wrote its marker beside an empty tmp/ and blobs/, which a backup never holds.
    Into a DEST whose first backup was not done yet, it was refused as "not a pdi backup" (exit 5), not told
    that another backup ran (exit 8): it read DEST before taking the lock."""
    root, dest = tmp_path / "archive", tmp_path / "b"
    with Archive.init(str(root)) as archive:
        archive.add_series(S)
        archive.deposit(S, [Content(b"a row of the catalog\n", "octet-stream")])
    if again:
        backup(str(root), dest)
    cleared, go_on = threading.Event(), threading.Event()
    real = backup_module._write_marker

    def pausing(*args: Any, **kwargs: Any) -> None:  # the first backup stops once its scratch is taken away
        if threading.current_thread().name == "first":
            cleared.set()
            go_on.wait(60)
        real(*args, **kwargs)

    monkeypatch.setattr(backup_module, "_write_marker", pausing)
    done: list[object] = []

    def first() -> None:
        try:
            done.append(backup(str(root), dest))
        except BaseException as exc:  # said by the assertion below
            done.append(exc)

    thread = threading.Thread(target=first, name="first")
    thread.start()
    try:
        assert cleared.wait(60)
        before = _as_it_is(dest)
        assert [path for path, _, _ in before] == [".", "catalog.sqlite", *([MARKER] if again else [])]
        with pytest.raises(StoreError, match=f"another pdi backup into {dest} is running"):
            backup(str(root), dest)
        assert _as_it_is(dest) == before
    finally:
        go_on.set()
        thread.join(60)
    assert len(done) == 1 and isinstance(done[0], BackupDone), done
    assert _held(dest) == ["catalog.sqlite", MARKER]
