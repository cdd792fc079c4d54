"""A WARC import's batch makes its blob files durable together, before its catalog transaction (issue 24).

Each blob file of a batch (:meth:`pdi.archive.Archive.deposit_dated`) is
written and renamed to its name without a sync of its own, marked as not
yet durable (its owner's write bit); one ``syncfs(2)`` then makes the
batch's octets and directory entries durable, before the transaction that
names them (:mod:`pdi.archive.blobs.files`). What must hold: no name is
committed before its blob is durable, and a process killed between a
batch's writes and its commit loses nothing acknowledged and leaves no name
without its blob.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from warc_builder import WarcBuilder, parts_of

from pdi._workdirs import GRACE, LOCK
from pdi.archive import Archive
from pdi.archive.blobs import files
from pdi.archive.blobs.inline import INLINE_LIMIT
from pdi.interop.warc import import_warc, pages
from support.fsyncs import fsynced

S = "web.example.us"


def _image(n: int) -> bytes:
    """A PNG-looking image of 80,000 octets, its own for each page: a page's MHTML is then past INLINE_LIMIT
    (64 KiB), so it is a blob file, not a catalog row."""
    body = bytes((n * 7 + i * 13) % 251 for i in range(251)) * 320
    return b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + body[: 80_000 - 16]


def _warc(path: Path, count: int) -> Path:
    b = WarcBuilder()
    for n in range(count):
        base = f"http://example.org/p{n}/"
        date = f"2024-05-{1 + n % 3:02d}T10:00:00Z"
        b.response(base, f'<html><body><img src="i.png"><p>page {n}</p></body></html>'.encode(),
                   "text/html; charset=utf-8", date)
        b.response(base + "i.png", _image(n), "image/png", date)
    return b.save(path)


def _archive(path: Path) -> Archive:
    opened = Archive.init(path)
    opened.add_series(S)
    return opened


def _blob_files(root: Path) -> dict[str, bool]:
    """Each blob file under ``root/blobs`` by name: whether it is marked as not yet durable (its owner's write bit)."""
    return {p.name: bool(p.stat().st_mode & stat.S_IWUSR) for p in (root / "blobs").glob("*/*")}


def _file_sha256s(entries: object) -> set[str]:
    """The SHA-256 of each blob a batch (``mint_batch``'s entries) names that is a file, not a row."""
    return {rep.blob.info.sha256 for _, reps in entries for rep in reps  # type: ignore[attr-defined]
            if rep.blob.info.size > INLINE_LIMIT}


def _watch_commits(archive: Archive, monkeypatch: pytest.MonkeyPatch) -> list[set[str]]:
    """The blob files each batch names, recorded as its ``mint_batch`` (its catalog transaction) begins."""
    batches: list[set[str]] = []
    real = archive.store.mint_batch

    def mint_batch(series: str, day: object, entries: object, *args: object, **kwargs: object) -> object:
        batches.append(_file_sha256s(entries))
        return real(series, day, entries, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(archive.store, "mint_batch", mint_batch)
    return batches


def test_each_batch_is_made_durable_by_one_syncfs_before_its_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "archive"
    archive = _archive(root)
    monkeypatch.setattr(pages, "BATCH_ITEMS", 3)
    real = files._syncfs()
    assert real is not None  # Linux 5.8 or later: the kernel reports write-back errors through syncfs
    synced: list[dict[str, bool]] = []  # the blob files there at each syncfs, marked or not

    def syncfs(fd: int) -> None:
        real(fd)
        synced.append(_blob_files(root))

    monkeypatch.setattr(files, "_SYNCFS", [syncfs])
    batches = _watch_commits(archive, monkeypatch)
    done = import_warc(archive, _warc(tmp_path / "a.warc.gz", 8), S)[0]
    assert len(done) == 8 and all(d.page for d in done)
    assert [len(b) for b in batches] == [3, 3, 2]  # each page a file of its own
    assert len(synced) == 3  # one sync a batch, not one a file and a folder
    for batch, state in zip(batches, synced, strict=True):
        assert batch <= set(state)  # every file the batch names was at its name when the file system was synced
    after = _blob_files(root)
    assert set(after) == set().union(*batches) and not any(after.values())  # all marked durable once synced
    report = archive.verify()
    assert report.ok and not report.unreferenced
    archive.close()


def test_without_syncfs_each_blob_is_staged_durably_as_one_deposits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "archive"
    archive = _archive(root)
    monkeypatch.setattr(files, "_SYNCFS", [None])  # an older kernel
    marked_at_commit: list[bool] = []
    real = archive.store.mint_batch

    def mint_batch(*args: object, **kwargs: object) -> object:
        marked_at_commit.extend(_blob_files(root).values())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(archive.store, "mint_batch", mint_batch)
    done = import_warc(archive, _warc(tmp_path / "a.warc.gz", 4), S)[0]
    assert len(done) == 4 and marked_at_commit and not any(marked_at_commit)
    assert archive.verify().ok
    archive.close()


def test_a_marked_file_found_by_a_single_deposit_is_synced_before_it_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "archive"
    archive = _archive(root)
    octets = _image(1)
    # what a batch killed before its sync leaves: a file at its blob's name, never synced, marked so
    staged = archive.store.stage_blob(iter([octets]), durable=False)
    staged.close()
    path = root / "blobs" / staged.info.sha256[:2] / staged.info.sha256
    assert _blob_files(root) == {staged.info.sha256: True}
    inodes = fsynced(monkeypatch)
    name = archive.add(S, octets, format="png")
    assert archive.get(name).data == octets
    assert _blob_files(root) == {staged.info.sha256: False}
    assert {path.stat().st_ino, path.parent.stat().st_ino, (root / "blobs").stat().st_ino} <= set(inodes)
    archive.close()


def test_a_pin_left_out_of_its_batchs_sync_is_synced_by_its_secure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "archive"
    archive = _archive(root)
    staged = archive.store.stage_blob(iter([_image(2)]), durable=False)
    path = root / "blobs" / staged.info.sha256[:2] / staged.info.sha256
    inodes = fsynced(monkeypatch)
    staged.secure()  # what a deposit's catalog transaction calls before it commits
    assert {path.stat().st_ino, path.parent.stat().st_ino} <= set(inodes)
    assert _blob_files(root) == {staged.info.sha256: False}
    staged.discard()
    assert _blob_files(root) == {}  # no name refers to it: the discard removed it
    archive.close()


IMPORTER = """
import os, signal, sys
from pdi.archive import Archive
from pdi.archive.catalog.blobs import BlobRules
from pdi.interop.warc import import_warc, pages
pages.BATCH_ITEMS = 2
where = sys.argv[4]
real = BlobRules.make_durable
calls = 0
def make_durable(self, blobs):
    global calls
    calls += 1
    if calls == 3 and where == "after the sync":
        real(self, blobs)
    if calls == 3:  # the third batch: its files written and at their names, its transaction not begun
        print("killing", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    real(self, blobs)
BlobRules.make_durable = make_durable
archive = Archive.open(sys.argv[1])
import_warc(archive, sys.argv[2], sys.argv[3], deposited=lambda item: print(item.name, flush=True))
print("finished", flush=True)
"""


@pytest.mark.parametrize("where", ["before the sync", "after the sync"])
def test_sigkill_between_a_batchs_writes_and_its_commit_loses_nothing_acknowledged(
    tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "archive"
    warc = _warc(tmp_path / "a.warc.gz", 8)
    _archive(root).close()
    child = subprocess.run(  # PYTHONPATH: the pdi under test (tests/conftest.py); TMPDIR: see below
        [sys.executable, "-c", IMPORTER, str(root), str(warc), S, where],
        capture_output=True, text=True, env=dict(os.environ, TMPDIR=str(tmp_path)), timeout=300,
    )
    # the killed import's work folder (pdi-warc-…) is left where it was made, here, not in the machine's /tmp
    (work,) = tmp_path.glob("pdi-warc-*")
    assert (work / LOCK).exists()  # and the next import in this TMPDIR, its lock free, removes it (below)
    assert child.returncode == -signal.SIGKILL, child.stderr
    lines = child.stdout.splitlines()
    assert lines[-1] == "killing" and "finished" not in lines
    acknowledged = [line for line in lines if line.startswith("urn:pdi:")]
    assert len(acknowledged) == 4  # two whole batches of two
    left = _blob_files(root)
    assert len(left) == 6  # the killed batch's two files are at their names too
    assert sum(left.values()) == (2 if where == "before the sync" else 0)
    with Archive.open(root) as archive:
        there = {str(p) for p in archive.ls(series=S)}
        assert there == set(acknowledged)  # nothing acknowledged lost, nothing of the killed batch named
        for name in there:  # each name's blob is there, whole: read back against its digests, its image in it
            _holds_its_image(archive.get(name).data)
        report = archive.verify()
        assert report.ok and len(report.unreferenced) == 2  # the killed batch's files: no name holds them
        then = time.time() - GRACE - 1  # a minute on: the lock file as old as that
        os.utime(work / LOCK, (then, then))
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the import's TMPDIR: the killed one's
        done, _ = import_warc(archive, warc, S)
        assert not list(tmp_path.glob("pdi-warc-*"))  # the killed import's folder gone, and this import's
        assert len(done) == 8 and sum(not d.unchanged for d in done) == 4
        assert not any(_blob_files(root).values())  # the files found marked were synced before being named
        report = archive.verify()
        assert report.ok and not report.unreferenced
        for d in done:
            _holds_its_image(archive.get(d.name).data)


def _holds_its_image(mhtml: bytes) -> None:
    """The page's MHTML holds its image, octet for octet (read by ``email``: the image is base64 in it)."""
    images = {url: data for url, (_, data) in parts_of(mhtml).items() if url.endswith("/i.png")}
    assert len(images) == 1
    for url, data in images.items():
        assert data == _image(int(url.split("/p")[1].split("/")[0]))
