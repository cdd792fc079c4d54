"""Blob files: the content-addressed files beside a SQLite catalog.

Layout of an archive directory::

    catalog.sqlite        the catalog (:mod:`pdi.archive.sqlite`)
    blobs/ab/abcdef…      the bytes of each representation, named by their SHA-256
    tmp/                  blobs being written

Each folder of its owner's alone (0700) whatever the umask, or readable by its group
where the archive's folder is shared with it (:mod:`pdi.archive.modes`); each blob file
read-only to everyone (:data:`BLOB_MODE`), its folder keeping it.

A blob of at most 64 KiB (:data:`~.inline.INLINE_LIMIT`) a deposit brings is
not a file: it is a row of the catalog's ``blobs`` table, written by the
deposit's own transaction and made durable by its commit alone (:mod:`.inline`,
as beside a PostgreSQL catalog), read back by chunks verified against the same
digests, listed, verified and removed with the files. A larger one, and every
blob an import brings, is a file.

A blob file is written to a temporary file in ``tmp/``, fsynced, renamed to its
name and the directory fsynced, all *before* the catalog transaction that
refers to it commits. An import's blobs (a bag's, a mirror's batch) are made
durable together: every file written first, then all renamed to their names,
then the files and their directories synced at once (one ``syncfs(2)`` of
the archive's file system where the kernel reports write-back errors through
it, Linux 5.8 and later; else an ``fsync`` of each file and folder): one flush
of the disk's cache an import, not one a blob, run on a thread of its own while
the import's catalog statements run (:class:`ImportSync`), the commit waiting
for it. Each is marked as not yet
durable (below) from its creation in ``tmp/`` until that sync, so that a
deposit finding it at its name meanwhile syncs it first (and one that finds
its octets not the blob's, after a crash, writes it again); then the import
clears the mark of each file still its own at the name. A mirror sync's blobs are written ahead
(:meth:`FileBlobs.write_ahead`) and, once checked against their signed digests, put at their names marked by
the threads that fetched them (:meth:`FileBlobs.place_ahead`), so that their batch's import only syncs and names
them. A process killed at any point therefore leaves either a
committed deposit whose blobs are all durable, or no deposit (at worst an
unreferenced blob, which verification reports but does not count as damage).

A batch of deposits (:meth:`pdi.archive.Archive.deposit_dated`, an import's
pages; :meth:`~pdi.archive.Archive.deposit_batch`) stages its blob files
without a sync each (:meth:`FileBlobs.stage_deferred`): each is written,
marked as not yet durable (its owner's write bit, which no durable blob file
has; where the file system does not keep the bit, synced as one deposit's), and renamed to its name; before the batch's catalog transaction
begins, :meth:`FileBlobs.make_durable` makes them all durable, octets and
directory entries, with one ``syncfs`` (where it reports write-back errors:
else each blob is staged durably, as one deposit's), and clears the marks.
A pin not made durable so is made so by its ``secure`` (an ``fsync`` of its
file, then of its folders), inside the transaction, before the commit: no
name is committed before its blob's octets and directory entry are durable. A deposit that finds a marked file at its blob's name
(another batch's, not yet synced, or one a killed process left) syncs it
before relying on it (:meth:`FileBlobs._pin_existing`); a batch adds it to
its own sync.

Removing unreferenced blobs (:meth:`FileBlobs.remove_unreferenced`) runs
beside deposits without ever taking a blob a deposit is about to name: a
deposit holds an ``flock`` on each file it stages (exclusive on its temporary
file while writing, then shared on the placed blob) until its catalog
transaction has ended, and the remover deletes only files it can lock
exclusively, inside the catalog's removal lock
(:meth:`pdi.archive.blobs.seam.BlobCatalog.removing`). Inside the deposit's
transaction, where no remover can act, the deposit checks that each blob is
still the file at its name and puts it back from the open file if not. The
locks are the kernel's, so a killed deposit releases them. An import (which
may bring more blobs than a process may open files) holds none open: inside
its catalog transaction it checks each blob is at its name, and fails,
importing nothing, if a remover with no grace period took one meanwhile.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import heapq
import math
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from pdi.archive.blobs import (
    SHA256_HEX,
    BlobInfo,
    ChunkedReader,
    Digests,
    Octets,
    file_reader,
    pieces,
    views,
)
from pdi.archive.blobs.import_sync import ImportSync
from pdi.archive.blobs.inline import (
    INLINE_LIMIT,
    CatalogRows,
    Inline,
    inline_names,
    octets_reader,
    read_inline,
    record_inline,
    stage_small,
)
from pdi.archive.blobs.seam import (
    Attached,
    BlobCatalog,
    BlobObserver,
    BlobSource,
    Spooled,
    StagedBlob,
    blob_octets,
    check_imported_blob,
    discard_all,
)
from pdi.archive.modes import Modes, make_folder, modes_in
from pdi.errors import IntegrityError, StoreError

#: A blob file's mode, whatever the umask: read-only to everyone, as it is never changed; its folder keeps it
#: (``blobs/`` and each folder in it of the archive's rule, :mod:`pdi.archive.modes`).
BLOB_MODE = 0o444
#: A file's device and inode: the file itself, whatever name it has.
_Identity = tuple[int, int]


class FileBlobs(Attached):
    """Blob files under ``root/blobs`` (staged in ``root/tmp``), pinned by ``flock`` (see the module docstring)."""

    #: The blobs live beside the catalog.
    elsewhere: str | None = None
    #: :meth:`stage` touches no catalog (only files, and their locks): several threads may
    #: stage at once (:meth:`pdi.archive.Archive.deposit_dated`). A store that stages through
    #: the catalog (S3's staging rows, PostgreSQL's large objects) has no such attribute.
    parallel_staging = True

    def __init__(self, root: str | os.PathLike[str], *, create: bool = True, folders: bool = True) -> None:
        """The blob files of the archive at ``root``. ``create=False`` (an archive that already has a catalog)
        refuses a missing ``blobs/`` folder rather than making an empty one: every file blob would read as
        damaged, and a folder moved back would land inside the new one. ``tmp/`` holds only what is being
        written, so it is made again when missing. ``folders=False``: a stand-in, held by the catalog of an
        archive whose blobs are elsewhere (``pdi init DIR --blobs s3://…``) only until that store takes its place
        (:func:`pdi.archive.catalog.opening.open_store`): it makes no folder, and checks none."""
        self.root = Path(root)
        self._folder = os.path.join(self.root, "blobs", "")  # what blob_file's names begin with
        self._sync_fd: int | None = None  # opened before an import's first write: syncfs reports errors since
        self._sync_lock = threading.Lock()
        #: Write-back errors ``syncfs`` reported through :attr:`_sync_fd`: the kernel tells each once, to whichever
        #: sync comes first, so a sync of blobs written before one told to another is refused too (:meth:`_syncfs`).
        self._sync_failures = 0
        self._syncfs_lock = threading.Lock()
        #: The mode of each folder made here (``blobs/``, ``tmp/``, ``blobs/ab/``), whatever the umask: the
        #: archive's rule (:func:`pdi.archive.modes.modes_in`, read of its folder when opened).
        self._folder_mode = Modes().folder
        if not folders:
            return
        self._folder_mode = modes_in(self.root).folder
        if not create and not (self.root / "blobs").is_dir():
            raise StoreError(
                f"the blob folder {self.root / 'blobs'} of the archive at {self.root} is missing: put it back (or"
                " restore the archive from a backup); pdi makes it only for a new archive")
        try:
            make_folder(self.root / "blobs", self._folder_mode)
            make_folder(self.root / "tmp", self._folder_mode)
        except OSError as exc:
            raise StoreError(f"cannot open the blob files of {self.root}: {exc}") from exc

    def attach(self, catalog: BlobCatalog) -> None:
        if not isinstance(catalog, CatalogRows):  # pragma: no cover - every catalog runs statements
            raise StoreError(f"the catalog at {catalog.location} cannot keep small blobs in its rows")
        super().attach(catalog)
        self._rows: CatalogRows = catalog

    def close(self) -> None:
        """Nothing is held open between calls but the descriptor :meth:`_sync_all` syncs the file system by."""
        with self._sync_lock:
            if self._sync_fd is not None:
                os.close(self._sync_fd)
                self._sync_fd = None

    def _syncer(self) -> int | None:
        """The descriptor ``syncfs`` is called on, opened (once) before the first blob it is to make durable is
        written: write-back errors since are reported through it. ``None`` where ``syncfs`` does not report them."""
        if _syncfs() is None:
            return None
        with self._sync_lock:
            if self._sync_fd is None:
                try:
                    self._sync_fd = os.open(self.root / "tmp", os.O_RDONLY)
                except OSError as exc:
                    raise StoreError(f"cannot open {self.root / 'tmp'}: {exc}") from exc
            return self._sync_fd

    def _syncfs(self, syncfs: Callable[[int], None], fd: int, since: int) -> None:
        """``syncfs`` of the archive's file system through the shared descriptor ``fd``, for blobs whose first
        octet was written when :attr:`_sync_failures` was ``since``: refused (``EIO``) when it reports a write-back
        error, or when one was reported since to another sync (the kernel tells each error once a descriptor, and
        it may be of these blobs' octets). One at a time, so that an error is counted before another sync asks."""
        with self._syncfs_lock:
            try:
                syncfs(fd)
            except OSError:
                self._sync_failures += 1
                raise
            if self._sync_failures != since:
                raise OSError(errno.EIO, "a write-back error was reported to another sync since these were written")

    def _sync_all(self, paths: Sequence[str | Path], since: int) -> None:
        """Make written files (or directories) durable: one ``syncfs`` for several, else an ``fsync`` each
        (``since``: :meth:`_syncfs`)."""
        syncfs = _syncfs()
        fd = self._syncer() if len(paths) > 1 else None
        try:
            if syncfs is not None and fd is not None:
                self._syncfs(syncfs, fd, since)
                return
            for path in paths:
                each = os.open(path, os.O_RDONLY)
                try:
                    os.fsync(each)
                finally:
                    os.close(each)
        except OSError as exc:
            raise StoreError(f"cannot make the blobs written in {self.root} durable: {exc}") from exc

    def record(self, blobs: Sequence[StagedBlob]) -> None:
        """Inside the catalog transaction: each small blob kept in hand is written in its row; each file was
        checked at its name by its pin's ``secure``."""
        record_inline(self._rows, blobs)

    def blob_path(self, sha256: str) -> Path:
        """Where the blob named ``sha256`` lives."""
        return self.root / "blobs" / sha256[:2] / sha256

    def blob_file(self, sha256: str) -> str:
        """:meth:`blob_path` as text, made without :mod:`pathlib` (a resolver's look-up makes one per answer)."""
        return f"{self._folder}{sha256[:2]}/{sha256}"

    def _pin_existing(self, sha256: str, *, deferred: bool = False) -> _FilePin | None:
        """Pin the blob file already at its name, if it is there with the right bytes.

        ``None`` when there is none, or it is damaged (then it is written
        again), or a remover took it while we waited for the lock. A blob
        found is touched, so that the grace period of
        :meth:`remove_unreferenced` starts again. A file marked as not yet
        durable (a batch's, module docstring) is synced now, or, ``deferred``,
        left to the batch's :meth:`make_durable`.
        """
        path = self.blob_file(sha256)  # not a Path: asked of each blob an import or a sync brings
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read blob {path}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            found = os.fstat(fd)
            if found.st_nlink == 0 or _digest(fd) != sha256:
                os.close(fd)
                return None
            os.utime(path)
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot read blob {path}: {exc}") from exc
        pin = _FilePin(self, sha256, fd, BlobInfo(sha256, found.st_size))
        if found.st_mode & stat.S_IWUSR:  # placed by a batch not yet synced (or killed before it was)
            pin.pending = (path[:path.rindex("/")], self._folder)  # its folder may be new too
            if not deferred:
                try:
                    self.make_durable([pin])
                except BaseException:
                    pin.close()
                    raise
        return pin

    def delete(self, sha256: str) -> bool:
        if not SHA256_HEX.fullmatch(sha256):  # a name made into a path to unlink: ``../victim.txt`` was one
            raise IntegrityError(f"the catalog names a blob {sha256[:80]!r}, which is no SHA-256: nothing was"
                                 " deleted (damage to the catalog, or one made by someone else: run pdi verify)")
        self._rows.execute("DELETE FROM blobs WHERE sha256 = ?", (sha256,))
        path = self.blob_path(sha256)
        try:
            if _unlink_if_free(path, math.inf):
                fsync_dir(path.parent)
        except OSError as exc:
            raise StoreError(f"cannot delete blob {path}: {exc}") from exc
        return not path.exists()  # still there: a deposit in progress holds it

    def remove_unreferenced(self, older_than: float) -> list[str]:
        """Delete blobs no name holds (rows, and files untouched for ``older_than`` seconds) and temporary files.

        Files are what a killed deposit leaves. The files are listed and
        removed inside the catalog's removal lock, so no deposit commits meanwhile; a file a deposit in
        progress has staged is locked by it and spared, whatever
        ``older_than`` is (see the module docstring). A row is written by the
        transaction that names it, so one no name holds is no deposit's in
        progress, whatever its age. Returns the SHA-256 names (and ``tmp/``
        file names) removed.
        """
        cutoff = time.time() - older_than
        with self.catalog.removing(older_than):
            rows = set(inline_names(self._rows))
            files = set(self._file_names())
            held = self.catalog.held(rows | files)
            for name in sorted(rows - held):
                self._rows.execute("DELETE FROM blobs WHERE sha256 = ?", (name,))
            try:
                unlinked = [name for name in sorted(files - held) if _unlink_if_free(self.blob_path(name), cutoff)]
                stale = [f"tmp/{path.name}" for path in sorted((self.root / "tmp").iterdir())
                         if _unlink_if_free(path, cutoff)]
                for sub in {self.blob_path(name).parent for name in unlinked}:
                    fsync_dir(sub)
            except OSError as exc:
                raise StoreError(f"cannot remove unreferenced blobs in {self.root}: {exc}") from exc
        return sorted((rows - held).union(unlinked)) + stale

    def _new_temporary(self, *, unsynced: bool = False) -> tuple[Path, int]:
        """A new temporary file in ``tmp/``, open and exclusively ``flock``-ed (so no remover takes it); ``unsynced``:
        marked as not yet durable (its owner's write bit, module docstring) before it is ever at a blob's name."""
        name = f"blob.{os.getpid()}.{threading.get_ident()}.{time.monotonic_ns()}"
        tmp = self.root / "tmp" / name
        try:
            while True:
                fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, BLOB_MODE)
                fcntl.flock(fd, fcntl.LOCK_EX)
                with contextlib.suppress(OSError):  # whatever the umask (a file system may keep no modes: _mark)
                    os.fchmod(fd, BLOB_MODE)
                made = os.fstat(fd)
                if made.st_nlink:
                    if unsynced:
                        _mark(fd, made)
                    return tmp, fd
                os.close(fd)  # a remover took the new file before we locked it: make another
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StoreError(f"cannot write a blob in {self.root / 'tmp'}: {exc}") from exc

    def _write_temporary(
        self, source: Octets, observe: BlobObserver | None = None, *, sync: bool = True, mark: bool = False
    ) -> tuple[Path, int, BlobInfo]:
        """Write ``source`` to a new temporary file while hashing it; fsynced (unless not ``sync``), still locked;
        ``mark``: marked as not yet durable (a batch's, renamed to its name unsynced), or synced where its file
        system keeps no such mark (:func:`_mark`). An import's files are marked too (each is synced before it is
        at its name, but its directory entry only after), and the import clears their marks once its folders are
        synced (:meth:`stage_import`).

        Returns its path, its open descriptor (holding the exclusive lock) and
        what was written. Any failure (of the source, of ``observe``, of the
        disk) removes the file.
        """
        tmp, fd = self._new_temporary(unsynced=mark)
        digests = Digests()
        try:
            if observe is None:  # each piece hashed and written before the next is read: not copied
                for view in views(source):
                    digests.update(view)
                    _write_all(fd, view)
            else:  # an observer may keep what it is given (an index builder): pieces of their own
                for piece in pieces(source):
                    digests.update(piece)
                    observe.update(piece)
                    _write_all(fd, piece)
            info = digests.finish()
            if observe is not None:
                observe.finish(info)
            if sync or (mark and not os.fstat(fd).st_mode & stat.S_IWUSR):  # the mark not kept: synced now
                os.fsync(fd)
        except BaseException as exc:
            tmp.unlink(missing_ok=True)
            os.close(fd)
            if isinstance(exc, OSError):
                raise StoreError(f"cannot write a blob in {self.root / 'tmp'}: {exc}") from exc
            raise
        return tmp, fd, info

    def _place(self, tmp: Path, sha256: str, folders: set[str] | None = None) -> None:
        """Rename a written temporary file to the blob's name, durably (or, given ``folders``, add the directories
        to sync to it: the caller syncs them)."""
        path = self.blob_file(sha256)  # text, not a Path: asked of each blob an import or a sync brings
        sub = path[:path.rindex("/")]
        try:
            try:
                os.replace(tmp, path)  # into its subdirectory, there already but for the first blobs of a store
            except FileNotFoundError:
                if not os.path.exists(tmp):
                    raise _TemporaryGone(tmp) from None
                make_folder(sub, self._folder_mode)
                if folders is None:
                    fsync_dir(Path(self._folder))  # the new subdirectory's entry is durable too
                else:
                    folders.add(self._folder)
                os.replace(tmp, path)
            if folders is None:
                fsync_dir(Path(sub))
            else:
                folders.add(sub)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StoreError(f"cannot write blob {path}: {exc}") from exc

    def _settle(self, tmp: Path, fd: int, info: BlobInfo, *, deferred: bool = False) -> _FilePin:
        """A written temporary file becomes the blob: the file already there is pinned instead, if sound.
        ``deferred``: the file was not synced, nor is its rename; the pin says what :meth:`make_durable` syncs."""
        try:
            existing = self._pin_existing(info.sha256, deferred=deferred)
        except BaseException:
            tmp.unlink(missing_ok=True)
            os.close(fd)
            raise
        if existing is not None:
            tmp.unlink(missing_ok=True)
            os.close(fd)
            existing.info = info
            return existing
        folders: set[str] | None = set() if deferred else None
        try:
            self._place(tmp, info.sha256, folders)
            fcntl.flock(fd, fcntl.LOCK_SH)  # placed: other deposits may pin it too
        except BaseException:
            os.close(fd)
            raise
        pin = _FilePin(self, info.sha256, fd, info, created=True)
        if folders is not None:
            pin.pending = tuple(folders)
        return pin

    def stage(self, source: Octets, observe: BlobObserver | None = None, *, replace: bool = False) -> StagedBlob:
        """A blob of at most :data:`~.inline.INLINE_LIMIT` octets kept in hand (written by :meth:`record`), a
        larger one written to its file (a file found at the name is kept only if its octets hash to it). With
        ``replace`` (a repair), a small blob whose file is there (an import, a mirror's sync, wrote it so) is
        written over that file too: a damaged file is not left beside a row that would be read instead."""
        staged = stage_small(source, observe, self._stage_file)
        if replace and isinstance(staged, Inline) and os.path.exists(self.blob_file(staged.info.sha256)):
            return self._stage_file(iter((staged.data,)))  # observe has seen these octets already
        return staged

    def _stage_file(self, source: Octets, observe: BlobObserver | None = None) -> _FilePin:
        tmp, fd, info = self._write_temporary(source, observe)
        return self._settle(tmp, fd, info)

    def stage_deferred(self, source: Octets, observe: BlobObserver | None = None) -> StagedBlob:
        """:meth:`stage`, a batch's: a blob file written and renamed to its name without a sync, marked as not yet
        durable; :meth:`make_durable` syncs the batch's files together before its catalog transaction (module
        docstring), else each pin's ``secure`` does, inside it. Where ``syncfs`` cannot do that in one call, as
        :meth:`stage`: an ``fsync`` a file and a folder one after the other took longer than the staging threads'
        own, overlapped (docs/benchmarks.md, "WARC and WACZ")."""
        if self._syncer() is None:  # opened before the first octet: a write-back error from here on is reported
            return self.stage(source, observe)
        return stage_small(source, observe, self._stage_file_deferred)

    def _stage_file_deferred(self, source: Octets, observe: BlobObserver | None = None) -> _FilePin:
        since = self._sync_failures  # before the first octet (:meth:`_syncfs`)
        tmp, fd, info = self._write_temporary(source, observe, sync=False, mark=True)
        # deferred only if marked: a file system that keeps no modes (or refuses the change) shows no mark, so
        # another deposit finding the file at its name would rely on it unsynced; it is then staged as :meth:`stage`
        pin = self._settle(tmp, fd, info, deferred=bool(os.fstat(fd).st_mode & stat.S_IWUSR))
        pin.since = min(pin.since, since)
        return pin

    def make_durable(self, blobs: Sequence[StagedBlob]) -> None:
        """Make the files and directory entries of the blobs :meth:`stage_deferred` staged durable, then clear
        their marks: one ``syncfs`` of the archive's file system for them all (it waits for whatever else is being
        written there too), or for one blob (or where ``syncfs`` does not report write-back errors) an ``fsync``
        of its file and then of each directory it was renamed into. Blobs already durable (kept in hand, found
        synced, staged by :meth:`stage`) are passed over."""
        pending = [blob for blob in blobs if isinstance(blob, _FilePin) and blob.pending]
        if not pending:
            return
        folders = sorted({folder for pin in pending for folder in pin.pending})
        syncfs = _syncfs() if len(pending) > 1 else None
        fd = self._syncer() if syncfs is not None else None
        try:
            if syncfs is not None and fd is not None:
                self._syncfs(syncfs, fd, min(pin.since for pin in pending))
            else:
                for pin in pending:
                    os.fsync(pin.fd)
                for folder in folders:
                    fsync_dir(Path(folder))
        except OSError as exc:
            raise StoreError(f"cannot make the blobs written in {self.root} durable: {exc}") from exc
        for pin in pending:
            pin.pending = ()
            with contextlib.suppress(OSError):  # not ours to change (a shared archive): it is synced again when found
                os.fchmod(pin.fd, stat.S_IMODE(os.fstat(pin.fd).st_mode) & ~stat.S_IWUSR)

    def write_ahead(self, source: Octets) -> Spooled:
        """``source`` written to a temporary file in ``tmp/`` and hashed, not yet durable, for an import to take
        as it is (:meth:`stage_import` renames it into place, no copy, no hashing again). Its ``discard`` after the
        import removes it if the import did not take it."""
        self._syncer()  # before the first octet: a write-back error from here on is reported by the sync
        since = self._sync_failures
        tmp, fd, info = self._write_temporary(source, sync=False, mark=True)
        # its write-back is left to the import's sync (the kernel's flusher writes a batch's files together
        # while the next blobs arrive); started here, a blob at a time on the fetching thread, it made a sync
        # slower (docs/benchmarks.md, "Mirrors")
        identity = self._identify(tmp, fd)  # what its import knows it by at its name
        return _Ahead(self, tmp, info, since, identity)

    def place_ahead(self, ahead: _Ahead) -> None:
        """A blob written ahead, its octets checked, put at its name before its import (on the thread that fetched
        it, not the import's): renamed there still marked as not yet durable (module docstring), unless a sound
        file is there already (the written one removed). Its import then makes it durable with the batch's one
        sync, or its discard removes it from its name, unless a deposit holds it or a name refers to it."""
        if ahead.placed or ahead.taken:
            return
        pin = self._pin_existing(ahead.info.sha256)
        if pin is not None:
            pin.close()
            ahead.path.unlink(missing_ok=True)
            ahead.found = True
        else:
            try:
                self._place(ahead.path, ahead.info.sha256, ahead.folders)
            except _TemporaryGone:
                raise StoreError(f"the staged file {ahead.path} of blob {ahead.info.sha256} was removed before it"
                                 " was put at its name (by pdi verify --remove-unreferenced?)") from None
            ahead.path = Path(self.blob_file(ahead.info.sha256))
        ahead.placed = True

    def stage_import(self, blobs: Iterable[tuple[str, BlobSource]]) -> list[StagedBlob]:
        """:meth:`stage_import_begun`, its sync waited for: the blobs durable and unmarked when it returns."""
        staged, sync = self.stage_import_begun(blobs)
        try:
            sync.wait()
        except BaseException:
            discard_all(staged)
            raise
        return staged

    def stage_import_begun(self, blobs: Iterable[tuple[str, BlobSource]]) -> tuple[list[StagedBlob], ImportSync]:
        """Write every new blob of an import to a temporary file first; place them only when all are read.

        A bag object that cannot be read (or no longer has its hash) stops
        the import before any blob file is put in place: the temporary files
        are removed and the archive is as it was. The files are renamed into
        place, then made durable with their directories' entries in one sync
        (:meth:`_sync_all`, module docstring), begun here on a thread of its own
        (:class:`ImportSync`: the import's catalog statements run meanwhile, and
        wait for it before they commit), and only then unmarked (marked as
        not yet durable from their creation: a deposit finding one at its name
        before syncs it first). A blob written ahead by
        :meth:`write_ahead` is taken as it is. Unlike a deposit's, an
        import's blobs are not held open (an import may bring more blobs than
        a process may open files): inside the catalog transaction each is
        checked to be at its name (:class:`_ImportedFile`), and if a remover
        took one meanwhile, nothing is imported.
        """
        seen: set[str] = set()
        staged: list[StagedBlob] = []
        pending: list[tuple[Path, BlobInfo, _Identity]] = []  # each file marked, from its creation on
        taken: list[_Ahead] = []  # written ahead, their files renamed (or removed) here: nothing left to discard
        folders: set[str] = set()  # each folder a file was renamed into (or made for it)
        placed: list[str] = []  # each file put at its name, marked: its octets synced with its folder's entry
        self._syncer()
        since = self._sync_failures  # lowered to a blob's written ahead (:meth:`_syncfs`)
        try:
            for sha256, content in blobs:
                if sha256 in seen:
                    continue
                seen.add(sha256)
                ahead = isinstance(content, _Ahead) and content.store is self
                if isinstance(content, _Ahead) and ahead and content.placed:  # at its name (place_ahead), or found
                    check_imported_blob(sha256, content.info.sha256)
                    since = min(since, content.since)
                    taken.append(content)
                    if content.found:
                        staged.append(_ImportedFile(self, content.info, created=False))
                    else:
                        staged.append(_ImportedFile(self, content.info, created=True, identity=content.identity))
                        placed.append(str(content.path))
                        folders |= content.folders
                    continue
                # a blob written ahead is already on disk: whether one is at its name is asked once, before its rename
                pin = None if ahead else self._pin_existing(sha256)
                if pin is not None:
                    info = self.catalog.blob_info(sha256) or BlobInfo(sha256, os.fstat(pin.fd).st_size)
                    pin.close()
                    staged.append(_ImportedFile(self, info, created=False))
                    continue
                if ahead:
                    assert isinstance(content, _Ahead)
                    tmp, info, identity = content.path, content.info, content.identity
                    since = min(since, content.since)
                    taken.append(content)
                else:
                    tmp, fd, info = self._write_temporary(blob_octets(content), sync=False, mark=True)
                    identity = self._identify(tmp, fd)
                pending.append((tmp, info, identity))
                check_imported_blob(sha256, info.sha256)
            while pending:
                tmp, info, identity = pending.pop()
                imported = self._place_imported(tmp, info, folders, identity)
                staged.append(imported)
                if imported.created:
                    placed.append(self.blob_file(info.sha256))
        except BaseException:
            for tmp, _, _ in pending:
                tmp.unlink(missing_ok=True)
            discard_all(staged)
            raise
        finally:
            for spooled in taken:
                spooled.taken = True
        paths = [*sorted(folders), *placed]

        def unmark() -> None:  # durable now, names and octets: the marks go (module docstring)
            for blob in staged:
                if isinstance(blob, _ImportedFile):
                    blob.unmark()

        return staged, ImportSync(lambda: self._sync_all(paths, since) if paths else None, unmark)

    def _identify(self, tmp: Path, fd: int) -> _Identity:
        """The device and inode of a written temporary file (by which its import knows it at its name, to clear its
        mark: :class:`_ImportedFile`), and its descriptor closed; the file removed on failure."""
        try:
            found = os.fstat(fd)
        except OSError as exc:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise StoreError(f"cannot write a blob in {self.root / 'tmp'}: {exc}") from exc
        os.close(fd)
        return found.st_dev, found.st_ino

    def _place_imported(self, tmp: Path, info: BlobInfo, folders: set[str], identity: _Identity) -> _ImportedFile:
        """A written temporary file of an import becomes the blob, unless a sound one is there already (the
        directories to sync added to ``folders``); ``identity``: the temporary file's, to know it by at its name."""
        pin = self._pin_existing(info.sha256)
        if pin is not None:
            pin.close()
            tmp.unlink(missing_ok=True)
            return _ImportedFile(self, info, created=False)
        try:
            self._place(tmp, info.sha256, folders)
        except _TemporaryGone:
            raise StoreError(
                f"the staged file {tmp} of blob {info.sha256} was removed while the import ran"
                " (by pdi verify --remove-unreferenced?); nothing was imported"
            ) from None
        return _ImportedFile(self, info, created=True, identity=identity)

    def open(self, sha256: str, info: BlobInfo | None, *, name: str) -> ChunkedReader | None:
        small = info is not None and info.size <= INLINE_LIMIT
        if small and (data := read_inline(self._rows, sha256)) is not None:
            return octets_reader(info or BlobInfo(sha256, len(data)), data, name=name)
        path = self.blob_path(sha256)
        try:
            # a file the catalog does not know is read whole, checked by its name
            return file_reader(info or BlobInfo(sha256, path.stat().st_size), str(path), name=name)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StoreError(f"cannot read blob {path}: {exc}") from exc
        if not small and (data := read_inline(self._rows, sha256)) is not None:
            return octets_reader(info or BlobInfo(sha256, len(data)), data, name=name)
        return None

    def _discard_created(self, pin: _FilePin) -> None:
        """Remove a blob file a failed deposit placed, if no deposit holds it and no name refers to it."""
        try:
            fcntl.flock(pin.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another deposit pinned it: it decides
        except OSError as exc:
            raise StoreError(f"cannot remove blob {self.blob_path(pin.sha256)}: {exc}") from exc
        with self.catalog.removing():
            if self.catalog.held({pin.sha256}):
                return
            path = self.blob_path(pin.sha256)
            try:
                mine = os.fstat(pin.fd)
                there = os.stat(path)
                if (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino):
                    path.unlink()
                    fsync_dir(path.parent)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise StoreError(f"cannot remove blob {path}: {exc}") from exc

    def names(self) -> Iterator[str]:
        """Every blob's name in ascending order, its rows' and its files' merged (a name in both, once)."""
        last = None
        for name in heapq.merge(inline_names(self._rows), self._file_names()):
            if name != last:
                yield name
                last = name

    def _file_names(self) -> Iterator[str]:
        """Every blob file's name in ascending order, one subdirectory in memory at a time.

        A blob lives in the subdirectory named by its first two hex digits,
        so walking those in order and sorting each lists all in order. Names
        that break that rule (stray files, a subdirectory of another name)
        are gathered first and merged in where they sort.
        """
        blobs = self.root / "blobs"
        try:
            subdirectories = sorted(p.name for p in blobs.iterdir() if p.is_dir())
            stray: list[str] = []
            for sub in subdirectories:
                names = os.listdir(blobs / sub)
                if _HEX_PAIR.fullmatch(sub):
                    stray.extend(n for n in names if not n.startswith(sub))
                else:
                    stray.extend(names)
        except OSError as exc:
            raise StoreError(f"cannot list blobs in {self.root}: {exc}") from exc
        yield from heapq.merge(self._names_in_place(blobs, subdirectories), sorted(stray))

    def _names_in_place(self, blobs: Path, subdirectories: list[str]) -> Iterator[str]:
        for sub in subdirectories:
            if _HEX_PAIR.fullmatch(sub):
                try:
                    names = sorted(n for n in os.listdir(blobs / sub) if n.startswith(sub))
                except FileNotFoundError:
                    continue  # removed since it was listed
                except OSError as exc:
                    raise StoreError(f"cannot list blobs in {blobs / sub}: {exc}") from exc
                yield from names


class _Ahead(Spooled):
    """A blob written ahead into ``tmp/`` by :meth:`FileBlobs.write_ahead` (its import renames it into place)."""

    def __init__(self, store: FileBlobs, path: Path, info: BlobInfo, since: int, identity: _Identity) -> None:
        super().__init__(path, info)
        self.store = store
        #: The store's write-back errors counted before its first octet was written (:meth:`FileBlobs._syncfs`).
        self.since = since
        #: Its file's device and inode (:meth:`FileBlobs._identify`).
        self.identity = identity
        #: Its file was renamed into place, or removed, by :meth:`FileBlobs.stage_import` (none to remove).
        self.taken = False
        #: Put at its name by :meth:`FileBlobs.place_ahead` (:attr:`path` is its name then), or a sound file found
        #: there (:attr:`found`, the written one removed).
        self.placed = False
        self.found = False
        #: The folders its rename went into (or made), for the import's sync where ``syncfs`` is not used.
        self.folders: set[str] = set()

    def place(self) -> None:
        self.store.place_ahead(self)

    def discard(self) -> None:
        """Remove the file, unless an import took it (no ``unlink`` of a name no longer there: it would wait for
        the lock of ``tmp/``, which the blobs being written ahead meanwhile hold in turn); one put at its name
        ahead of its import is removed from there unless a deposit holds it or a name refers to it."""
        if self.taken or self.found:
            return
        if self.placed:
            self.taken = True  # once
            _ImportedFile(self.store, self.info, created=True, identity=self.identity).discard()
            return
        super().discard()


_SYNCFS: list[Callable[[int], None] | None] = []



def _syncfs() -> Callable[[int], None] | None:
    """``syncfs(2)`` from the C library, where it reports write-back errors (Linux 5.8 and later); else ``None``.
    Looked up once, when an import first needs it (ctypes is not loaded by every command)."""
    if not _SYNCFS:
        _SYNCFS.append(_load_syncfs())
    return _SYNCFS[0]


def _load_syncfs() -> Callable[[int], None] | None:
    import platform
    import sys

    release = re.match(r"(\d+)\.(\d+)", platform.release())
    if sys.platform != "linux" or release is None or (int(release[1]), int(release[2])) < (5, 8):
        return None
    import ctypes

    try:
        function = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int]
    function.restype = ctypes.c_int

    def syncfs(fd: int) -> None:
        if function(fd) != 0:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number))

    return syncfs


#: The name of a subdirectory of ``blobs/``: the first two hex digits of its blobs' names.
_HEX_PAIR = re.compile(r"[0-9a-f]{2}")


class _FilePin:
    """An open descriptor of a staged blob file with a shared ``flock`` on it (see the module docstring)."""

    def __init__(
        self, store: FileBlobs, sha256: str, fd: int, info: BlobInfo | None = None,
        *, created: bool = False,
    ) -> None:
        self.store = store
        self.sha256 = sha256
        self.fd = fd
        self.info = info if info is not None else BlobInfo(sha256, os.fstat(fd).st_size)
        self.created = created
        #: The folders whose entries are not yet known durable, if its file is not (a batch's:
        #: :meth:`FileBlobs.stage_deferred`); ``()`` when it is durable.
        self.pending: tuple[str, ...] = ()
        #: The store's write-back errors counted before its octets were written, or it was found
        #: (:meth:`FileBlobs._syncfs`).
        self.since = store._sync_failures
        self._closed = False

    def secure(self) -> None:
        """Inside the catalog transaction: if the file at the blob's name is not ours, put ours back; ours not yet
        durable (its batch's :meth:`FileBlobs.make_durable` not called) is made so, before the commit."""
        if self.pending:
            self.store.make_durable([self])
        path = self.store.blob_path(self.sha256)
        try:
            mine = os.fstat(self.fd)
            try:
                there = os.stat(path)
                if (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino):
                    return
            except FileNotFoundError:
                pass
            if _digest(self.fd) != self.sha256:
                raise StoreError(f"the staged blob {path} changed before its deposit committed")
            tmp = self.store.root / "tmp" / f"{self.sha256}.{os.getpid()}.{threading.get_ident()}.again"
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, BLOB_MODE)
            try:
                with contextlib.suppress(OSError):
                    os.fchmod(out, BLOB_MODE)
                os.lseek(self.fd, 0, os.SEEK_SET)
                while chunk := os.read(self.fd, 1 << 20):
                    _write_all(out, chunk)
                os.fsync(out)
            finally:
                os.close(out)
        except OSError as exc:
            raise StoreError(f"cannot restore blob {path}: {exc}") from exc
        self.store._place(tmp, self.sha256)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self.fd)

    def discard(self) -> None:
        if self._closed:
            return
        try:
            if self.created:
                self.store._discard_created(self)
        finally:
            self.close()


class _TemporaryGone(StoreError):
    """A temporary file was gone when it was to be renamed to its blob's name."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(f"the temporary file {tmp} was removed before it became a blob")


class _ImportedFile:
    """A blob an import placed (or found in place), not held open: checked at its name inside the catalog transaction."""

    def __init__(self, store: FileBlobs, info: BlobInfo, *, created: bool, identity: _Identity | None = None) -> None:
        self.store = store
        self.info = info
        self.created = created
        #: The device and inode of the file the import put at the name (``None``: one found there).
        self.identity = identity

    def unmark(self) -> None:
        """Once the import has synced its folders: clear the mark of not yet durable (module docstring) from the
        file it put at the name, if that is still the one there (not another batch's, put there since a remover
        took the import's, whose mark stays until that batch syncs it). A mark left (a file not ours to change,
        a remover's) is harmless: the file is synced again when a deposit finds it."""
        if self.identity is None:
            return
        with contextlib.suppress(OSError):
            fd = os.open(self.store.blob_file(self.info.sha256), os.O_RDONLY)
            try:
                found = os.fstat(fd)
                if (found.st_dev, found.st_ino) == self.identity and found.st_mode & stat.S_IWUSR:
                    os.fchmod(fd, stat.S_IMODE(found.st_mode) & ~stat.S_IWUSR)
            finally:
                os.close(fd)

    def secure(self) -> None:
        """Inside the catalog transaction, where no remover acts: the blob must still be at its name."""
        path = self.store.blob_file(self.info.sha256)
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            raise StoreError(
                f"blob {path} of the import was removed while the import ran"
                " (by pdi verify --remove-unreferenced?); nothing was imported"
            ) from None
        except OSError as exc:
            raise StoreError(f"cannot read blob {path}: {exc}") from exc
        if size != self.info.size:
            raise StoreError(f"blob {path} changed while the import ran; nothing was imported")

    def close(self) -> None:
        """Nothing is held open."""

    def discard(self) -> None:
        """After a failed import: remove the file it placed, unless a deposit holds it or a name refers to it."""
        if not self.created:
            return
        try:
            fd = os.open(self.store.blob_path(self.info.sha256), os.O_RDONLY)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"cannot remove blob {self.store.blob_path(self.info.sha256)}: {exc}") from exc
        _FilePin(self.store, self.info.sha256, fd, self.info, created=True).discard()


def _mark(fd: int, made: os.stat_result) -> None:
    """Mark a new file as not yet durable (its owner's write bit), where its file system keeps it: one that keeps
    no modes of its own (SMB without its Unix extensions) ignores the change, one may refuse it (FAT); the caller
    asks the file's mode whether it is marked, and else syncs it before it is at its name."""
    with contextlib.suppress(OSError):
        os.fchmod(fd, stat.S_IMODE(made.st_mode) | stat.S_IWUSR)


def _digest(fd: int) -> str:
    """The SHA-256 of the whole file open at ``fd``."""
    h = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, 1 << 20):
        h.update(chunk)
    return h.hexdigest()


def _write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _unlink_if_free(path: Path, cutoff: float) -> bool:
    """Delete ``path`` if no deposit holds a lock on it and it is untouched since ``cutoff``."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a deposit in progress holds it
        mine = os.fstat(fd)
        there = os.stat(path)
        if (there.st_dev, there.st_ino) != (mine.st_dev, mine.st_ino) or mine.st_mtime >= cutoff:
            return False
        path.unlink()
        return True
    finally:
        os.close(fd)


def write_new(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to a file made at ``path`` (none may be there), of permissions ``mode`` whatever the umask,
    and make its octets durable (``fsync``); the caller renames or links it into place and syncs the folder."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """Make the names in the directory ``path`` durable (a file placed, renamed or removed there)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


