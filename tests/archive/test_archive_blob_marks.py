"""The mark a batch's blob file carries while it is not yet durable (its owner's write bit), and the one ``syncfs``
that makes a batch durable (:mod:`pdi.archive.blobs.files`, module docstring): what the mark must mean wherever a
blob file is found at its name, and what a write-back error reported by ``syncfs`` must refuse.

What must hold: a file at a blob's name is either marked or durable (a deposit that finds it unmarked relies on it
without a sync), and no batch commits after a write-back error the kernel reported once, to another batch.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

import pytest

from pdi.archive import Archive
from pdi.archive.blobs import files
from pdi.errors import StoreError
from support.fsyncs import fsynced


def _octets(n: int) -> bytes:
    """100,000 octets of their own for each ``n``: past the 64 KiB a catalog row holds, so a blob file."""
    return hashlib.sha256(str(n).encode()).digest() * 3125


def _marked(root: Path, octets: bytes) -> bool:
    sha256 = hashlib.sha256(octets).hexdigest()
    return bool((root / "blobs" / sha256[:2] / sha256).stat().st_mode & stat.S_IWUSR)


def test_an_imports_blob_files_are_not_left_marked_once_durable(tmp_path: Path) -> None:
    archive = Archive.init(tmp_path / "a")
    blobs = archive.store.blobs
    given, ahead = _octets(1), _octets(2)
    spooled = blobs.write_ahead(ahead)  # as a WARC import writes a record's payload before its batch
    staged = blobs.stage_import([(hashlib.sha256(given).hexdigest(), given), (spooled.info.sha256, spooled)])
    for blob in staged:
        blob.close()
    # synced before their renames and their folders after: durable, so unmarked (a mark makes every later
    # deposit that finds the file sync it again, a file and two folders)
    assert not _marked(tmp_path / "a", given)
    assert not _marked(tmp_path / "a", ahead)
    archive.close()


def _ignored(fd: int, mode: int) -> None:
    """``fchmod`` on a file system that keeps no modes of its own (SMB without its Unix extensions, a FUSE
    mount with fixed modes): it succeeds and changes nothing."""


def _refused(fd: int, mode: int) -> None:
    """``fchmod`` on a file system that refuses the change (FAT without ``quiet``)."""
    raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))


@pytest.mark.parametrize("fchmod", [_ignored, _refused], ids=["ignored", "refused"])
def test_where_the_mark_cannot_be_kept_a_batchs_blob_is_durable_before_it_is_at_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fchmod: object
) -> None:
    root = tmp_path / "a"
    archive = Archive.init(root)
    monkeypatch.setattr(os, "fchmod", fchmod)
    inodes = fsynced(monkeypatch)
    octets = _octets(3)
    staged = archive.store.stage_blob(iter([octets]), durable=False)  # a batch's, its make_durable not yet called
    path = root / "blobs" / staged.info.sha256[:2] / staged.info.sha256
    assert path.read_bytes() == octets
    # another process finding it now sees no mark: it must be durable already, octets and directory entry
    assert not _marked(root, octets)
    assert {path.stat().st_ino, path.parent.stat().st_ino} <= set(inodes)
    staged.close()
    archive.close()


def test_a_write_back_error_syncfs_reports_to_one_batch_refuses_every_batch_written_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "a"
    archive = Archive.init(root)
    real = files._syncfs()
    assert real is not None  # Linux 5.8 or later: the kernel reports write-back errors through syncfs
    told: list[int] = []

    def syncfs(fd: int) -> None:
        # a write-back error happened before either batch synced: syncfs(2) reports it once to each open file
        # description (the kernel's errseq), and the store syncs every batch through its one descriptor
        real(fd)
        if fd not in told:
            told.append(fd)
            raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(files, "_SYNCFS", [syncfs])
    first = [archive.store.stage_blob(iter([_octets(n)]), durable=False) for n in (4, 5)]
    second = [archive.store.stage_blob(iter([_octets(n)]), durable=False) for n in (6, 7)]
    with pytest.raises(StoreError, match="durable"):
        archive.store.make_durable(second)
    # the error may be of the first batch's octets: it is told too, not let commit
    with pytest.raises(StoreError, match="durable"):
        archive.store.make_durable(first)
    for blob in first + second:
        blob.discard()
    archive.close()
