"""An import's blob files (a bag's, a mirror sync's) are marked not yet durable until their folders are synced (issue 24).

:meth:`pdi.archive.blobs.files.FileBlobs.stage_import` writes every new blob
to ``tmp/``, renames them to their names and then makes the files and their
folders durable with one sync (``syncfs(2)``, else an ``fsync`` of each file
and folder). Between the renames and that sync a file is at its name but
neither its octets nor its directory entry are durable: another deposit
(``pdi add``, the write API, another import) may find it there meanwhile and
commit a name for it.
What must hold (the rule of :mod:`pdi.archive.blobs.files`): such a file
carries the mark of a file not yet durable (its owner's write bit), so that a
deposit finding it syncs it (file, then its folders) before relying on it; and
once the import has synced its folders the mark is gone, as on every durable
blob file, so that later deposits do not sync it again. The point between
renames and folder sync is reached deterministically: the folder sync is
wrapped to run the other deposit first (a wrapper that only injects the
timing, the real sync still runs).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from pdi.archive import Archive
from pdi.archive.blobs import files
from pdi.archive.blobs.inline import INLINE_LIMIT
from pdi.errors import StoreError
from support.fsyncs import fsynced

S = "oma.eop.gov.us"
T = "wh.eop.gov.us"  # where the other deposits mint: not in the bag's series, whose serials it brings
SRC = Path(__file__).resolve().parents[2] / "src"


def _octets(n: int) -> bytes:
    """Octets of their own for each ``n``, past INLINE_LIMIT: a deposit of them is a file, not a row."""
    return (f"document {n}\n".encode() + bytes(range(256))) * (INLINE_LIMIT // 256 + 10)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _marked(root: Path) -> dict[str, bool]:
    """Each blob file under ``root/blobs`` by name: whether its owner's write bit (the mark) is set."""
    return {p.name: bool(p.stat().st_mode & stat.S_IWUSR) for p in (root / "blobs").glob("*/*")}


def _bag(tmp_path: Path, count: int) -> tuple[Path, dict[str, bytes]]:
    """A bag exported from an archive of ``count`` documents; their names and octets."""
    made = {}
    with Archive.init(tmp_path / "origin") as origin:
        origin.add_series(S)
        for n in range(count):
            made[str(origin.add(S, _octets(n), format="octet-stream"))] = _octets(n)
        origin.export_bag(tmp_path / "bag")
    return tmp_path / "bag", made


def _at_folder_sync(monkeypatch: pytest.MonkeyPatch, hook: Callable[[], None]) -> None:
    """Run ``hook`` when an import has renamed its files and is about to sync them and their folders."""
    real = files.FileBlobs._sync_all

    def sync_all(self: files.FileBlobs, paths: Sequence[str | Path], since: int) -> None:
        if paths and os.path.isdir(paths[0]):  # the folders (then the files): after the renames
            hook()
        real(self, paths, since)

    monkeypatch.setattr(files.FileBlobs, "_sync_all", sync_all)


def _at_commit(monkeypatch: pytest.MonkeyPatch, archive: Archive, hook: Callable[[], None]) -> None:
    """Run ``hook`` at an import's last step before its catalog commits, once it has waited for its blobs' sync."""
    real_import = archive.store._import_staged  # type: ignore[attr-defined]

    def import_staged(*args: object, before_commit: Callable[[], None], **kwargs: object) -> object:
        def committing() -> None:
            before_commit()
            hook()

        return real_import(*args, before_commit=committing, **kwargs)

    monkeypatch.setattr(archive.store, "_import_staged", import_staged)


def test_a_deposit_that_finds_an_imported_file_before_its_folder_is_synced_syncs_it_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bag, made = _bag(tmp_path, 3)
    root = tmp_path / "copy"
    Archive.init(root).close()
    shared = _octets(1)
    path = root / "blobs" / _sha(shared)[:2] / _sha(shared)
    seen: dict[str, object] = {}

    other = Archive.open(root)
    other.add_series(T)
    inodes = fsynced(monkeypatch)
    staged = threading.Event()  # the other deposit has found the file and synced it (it then waits for the lock
    real_pin = files.FileBlobs._pin_existing  # the import holds until its sync is done and it commits)

    def pin_existing(self: files.FileBlobs, sha256: str, deferred: bool = False) -> object:
        try:
            return real_pin(self, sha256, deferred=deferred)
        finally:
            if threading.current_thread() is deposit:
                staged.set()

    monkeypatch.setattr(files.FileBlobs, "_pin_existing", pin_existing)

    def add() -> None:  # pdi add of the same octets, by another handle on the archive
        seen["name"] = str(other.add(T, shared, format="octet-stream"))
        seen["fsynced"] = set(inodes)  # what it synced, all before it committed

    deposit = threading.Thread(target=add)

    def another_deposit() -> None:  # the deposit, begun once the import's files are at their names
        seen["marked"] = _marked(root)
        deposit.start()
        assert staged.wait(60)

    _at_folder_sync(monkeypatch, another_deposit)
    with Archive.open(root) as copy:
        assert copy.import_bag(bag) == 3
    deposit.join(60)
    other.close()
    marked = seen["marked"]
    assert isinstance(marked, dict) and set(marked) == {_sha(d) for d in made.values()}
    assert all(marked.values())  # at their names, their entries not yet durable: marked
    # the other deposit synced the file and both folders it may have been renamed into before it committed
    assert {path.stat().st_ino, path.parent.stat().st_ino, (root / "blobs").stat().st_ino} <= set(
        seen["fsynced"])  # type: ignore[call-overload]
    assert not any(_marked(root).values())
    with Archive.open(root) as copy:
        assert copy.get(str(seen["name"])).data == shared
        for name, data in made.items():
            assert copy.get(name).data == data
        assert copy.verify().ok


def test_an_import_is_made_durable_by_one_syncfs_after_its_renames_and_before_its_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One flush of the disk for an import's files and their folders' entries, not one for each: the files are at
    their names (marked) when the file system is synced, and the catalog names them only after."""
    bag, made = _bag(tmp_path, 3)
    root = tmp_path / "copy"
    Archive.init(root).close()
    real = files._syncfs()
    assert real is not None  # Linux 5.8 or later: the kernel reports write-back errors through syncfs
    synced: list[dict[str, bool]] = []  # the blob files at their names at each syncfs, marked or not

    def syncfs(fd: int) -> None:
        real(fd)
        synced.append(_marked(root))

    monkeypatch.setattr(files, "_SYNCFS", [syncfs])
    with Archive.open(root) as copy:
        names_at_commit: list[int] = []
        _at_commit(monkeypatch, copy, lambda: names_at_commit.append(len(synced)))
        assert copy.import_bag(bag) == 3
    assert len(synced) == 1 and names_at_commit == [1]  # one sync, done before the catalog's transaction commits
    assert synced[0] == {_sha(d): True for d in made.values()}  # every file at its name then, still marked
    assert not any(_marked(root).values())


def test_without_syncfs_an_imports_files_and_folders_are_each_fsynced_before_its_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bag, made = _bag(tmp_path, 3)
    root = tmp_path / "copy"
    Archive.init(root).close()
    monkeypatch.setattr(files, "_SYNCFS", [None])  # an older kernel: an fsync each
    with Archive.open(root) as copy:
        inodes = fsynced(monkeypatch)
        at_commit: list[set[int]] = []
        _at_commit(monkeypatch, copy, lambda: at_commit.append(set(inodes)))
        assert copy.import_bag(bag) == 3
    paths = [root / "blobs" / _sha(d)[:2] / _sha(d) for d in made.values()]
    wanted = {p.stat().st_ino for p in paths} | {p.parent.stat().st_ino for p in paths}
    wanted.add((root / "blobs").stat().st_ino)  # the folders made for the import's first blobs
    assert len(at_commit) == 1 and wanted <= at_commit[0]
    assert not any(_marked(root).values())


def test_an_imported_file_is_left_unmarked_once_its_folder_is_synced(tmp_path: Path) -> None:
    bag, made = _bag(tmp_path, 3)
    root = tmp_path / "copy"
    with Archive.init(root) as copy:
        assert copy.import_bag(bag) == 3
    assert _marked(root) == {_sha(d): False for d in made.values()}


def test_a_blob_written_ahead_is_left_unmarked_once_its_import_synced_its_folder(tmp_path: Path) -> None:
    """The mirror sync's way: blobs written ahead into ``tmp/`` (:meth:`~pdi.archive.Archive.write_ahead`)."""
    root = tmp_path / "archive"
    with Archive.init(root) as archive:
        blobs = archive.store.blobs
        assert isinstance(blobs, files.FileBlobs)
        ahead = [blobs.write_ahead(iter([_octets(n)])) for n in range(3)]
        staged = blobs.stage_import([(_sha(_octets(n)), a) for n, a in enumerate(ahead)])
        assert len(staged) == 3
        for blob in staged:
            blob.close()
    assert _marked(root) == {_sha(_octets(n)): False for n in range(3)}
    assert list((root / "tmp").iterdir()) == []


def test_a_blob_placed_ahead_is_at_its_name_marked_until_its_import_makes_it_durable(tmp_path: Path) -> None:
    """A mirror sync's fetching threads put each checked blob at its name (:meth:`~pdi.archive.blobs.seam.Spooled.place`),
    marked, before the batch's import: the import renames nothing more, syncs once and clears the marks."""
    root = tmp_path / "archive"
    with Archive.init(root) as archive:
        blobs = archive.store.blobs
        assert isinstance(blobs, files.FileBlobs)
        ahead = [blobs.write_ahead(iter([_octets(n)])) for n in range(3)]
        for one in ahead:
            one.place()
        assert _marked(root) == {_sha(_octets(n)): True for n in range(3)}  # at their names, not yet durable
        assert list((root / "tmp").iterdir()) == []
        inodes = {_sha(_octets(n)): (root / "blobs" / _sha(_octets(n))[:2] / _sha(_octets(n))).stat().st_ino
                  for n in range(3)}
        staged = blobs.stage_import([(_sha(_octets(n)), a) for n, a in enumerate(ahead)])
        assert len(staged) == 3
        for blob in staged:
            blob.close()
        for one in ahead:
            one.discard()  # taken by the import: nothing to remove
    assert _marked(root) == {_sha(_octets(n)): False for n in range(3)}
    assert {name: (root / "blobs" / name[:2] / name).stat().st_ino for name in inodes} == inodes  # the files placed


def test_a_blob_placed_ahead_and_not_imported_is_removed_from_its_name(tmp_path: Path) -> None:
    """A sync that does not keep a blob it placed (refused, stopped) leaves nothing behind: not at its name, not in
    ``tmp/``."""
    root = tmp_path / "archive"
    with Archive.init(root) as archive:
        blobs = archive.store.blobs
        assert isinstance(blobs, files.FileBlobs)
        one = blobs.write_ahead(iter([_octets(0)]))
        one.place()
        assert _marked(root) == {_sha(_octets(0)): True}
        one.discard()
        one.discard()  # once is enough: a second does nothing
        assert _marked(root) == {}
        assert list((root / "tmp").iterdir()) == []
        report = archive.verify()
        assert report.ok and not report.unreferenced


def test_a_blob_placed_ahead_that_a_deposit_holds_is_left_at_its_name(tmp_path: Path) -> None:
    """A deposit that found the placed file and holds it (its shared lock until its transaction ends) keeps it:
    the sync's discard leaves it to that deposit."""
    root = tmp_path / "archive"
    with Archive.init(root) as archive:
        blobs = archive.store.blobs
        assert isinstance(blobs, files.FileBlobs)
        one = blobs.write_ahead(iter([_octets(0)]))
        one.place()
        path = root / "blobs" / _sha(_octets(0))[:2] / _sha(_octets(0))
        held = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(held, fcntl.LOCK_SH)  # as a deposit's pin holds it
            one.discard()
            assert path.read_bytes() == _octets(0)
        finally:
            os.close(held)


def test_placing_ahead_over_a_sound_blob_keeps_the_one_there(tmp_path: Path) -> None:
    """The same octets already at their name (another name's, or a stopped sync's): the written file goes, the
    file there stays, and the import names it without creating one."""
    root = tmp_path / "archive"
    with Archive.init(root) as archive:
        archive.add_series(T)
        name = archive.add(T, _octets(0), format="octet-stream")
        path = root / "blobs" / _sha(_octets(0))[:2] / _sha(_octets(0))
        before = path.stat().st_ino
        blobs = archive.store.blobs
        assert isinstance(blobs, files.FileBlobs)
        one = blobs.write_ahead(iter([_octets(0)]))
        one.place()
        assert list((root / "tmp").iterdir()) == [] and path.stat().st_ino == before
        staged = blobs.stage_import([(_sha(_octets(0)), one)])
        for blob in staged:
            blob.discard()  # an import that failed after: the file it did not make stays
        one.discard()
        assert path.stat().st_ino == before and archive.get(str(name)).data == _octets(0)


def test_a_mark_on_another_file_put_at_the_name_meanwhile_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the import's own file is unmarked: one another batch put at the name since (a remover took the
    import's) is not yet durable, and keeps its mark until that batch syncs it."""
    bag, made = _bag(tmp_path, 2)
    root = tmp_path / "copy"
    Archive.init(root).close()
    data = _octets(0)
    path = root / "blobs" / _sha(data)[:2] / _sha(data)

    def another_file_at_the_name() -> None:
        other = root / "tmp" / "another"
        other.write_bytes(data)
        os.chmod(other, 0o644)  # marked, as a batch's file not yet synced
        os.replace(other, path)

    _at_folder_sync(monkeypatch, another_file_at_the_name)
    with Archive.open(root) as copy:
        assert copy.import_bag(bag) == 2
    assert _marked(root) == {_sha(data): True, _sha(_octets(1)): False}
    with Archive.open(root) as copy:
        for name, octets in made.items():
            assert copy.get(name).data == octets


IMPORTER = """
import os, signal, sys
from pdi.archive import Archive
from pdi.archive.blobs import files
where = sys.argv[3]
real = files.FileBlobs._sync_all
def sync_all(self, paths, since):
    if paths and os.path.isdir(paths[0]):  # the folders and files of the renames
        if where == "after the folder sync":
            real(self, paths, since)
        print("killing", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    real(self, paths, since)
files.FileBlobs._sync_all = sync_all
archive = Archive.open(sys.argv[1])
print(archive.import_bag(sys.argv[2]), flush=True)
"""


@pytest.mark.parametrize("where", ["before the folder sync", "after the folder sync"])
def test_sigkill_between_an_imports_renames_and_its_commit_leaves_no_name_and_nothing_unsynced_relied_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    bag, made = _bag(tmp_path, 3)
    root = tmp_path / "copy"
    Archive.init(root).close()
    child = subprocess.run(
        [sys.executable, "-c", IMPORTER, str(root), str(bag), where], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)}, timeout=300,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert child.stdout.splitlines() == ["killing"]  # the import was never acknowledged
    left = _marked(root)
    assert set(left) == {_sha(d) for d in made.values()}  # each file at its name, no name holding it
    # killed before the folder sync: still marked; after it, the import had not yet cleared the marks
    assert all(left.values())
    with Archive.open(root) as copy:
        assert list(copy.ls()) == []
        report = copy.verify()
        assert report.ok and len(report.unreferenced) == 3
        shared = _octets(2)
        path = root / "blobs" / _sha(shared)[:2] / _sha(shared)
        inodes = fsynced(monkeypatch)
        copy.add_series(T)
        name = copy.add(T, shared, format="octet-stream")  # finds the marked file: syncs it before naming it
        assert {path.stat().st_ino, path.parent.stat().st_ino, (root / "blobs").stat().st_ino} <= set(inodes)
        assert copy.get(str(name)).data == shared
        monkeypatch.undo()
        assert copy.import_bag(bag) == 3
        for each, data in made.items():
            assert copy.get(each).data == data
        report = copy.verify()
        assert report.ok and not report.unreferenced
    assert not any(_marked(root).values())


def test_an_import_whose_sync_fails_commits_nothing_and_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sync runs beside the import's statements (its own thread); when the disk reports a write-back error
    (``EIO`` from ``syncfs``), the transaction does not commit and the files the import placed are removed."""
    bag, _made = _bag(tmp_path, 3)
    root = tmp_path / "copy"
    Archive.init(root).close()

    def syncfs(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(files, "_SYNCFS", [syncfs])
    with Archive.open(root) as copy:
        with pytest.raises(StoreError, match="durable"):
            copy.import_bag(bag)
        assert list(copy.ls()) == []
    assert _marked(root) == {} and list((root / "tmp").iterdir()) == []
