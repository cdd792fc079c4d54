"""The embedded store: a SQLite catalog (WAL) plus content-addressed blob files.

Layout of an archive directory::

    catalog.sqlite        the catalog (series, documents, versions, representations, assertions)
    blobs/ab/abcdef…      the bytes of each representation, named by their SHA-256
    tmp/                  blobs being written

A blob is written to a temporary file in ``tmp/``, fsynced, renamed to its
name and the directory fsynced, all *before* the catalog transaction that
refers to it commits. A process killed at any point therefore leaves either a
committed deposit whose blobs are all durable, or no deposit (at worst an
unreferenced blob, which verification reports but does not count as damage).
Writers take SQLite's write lock up front (``BEGIN IMMEDIATE``), which
serializes deposits across processes.

Removing unreferenced blobs (:meth:`SQLiteStore.remove_unreferenced`) runs
beside deposits without ever taking a blob a deposit is about to name: a
deposit holds an ``flock`` on each file it stages (exclusive on its temporary
file while writing, then shared on the placed blob) until its catalog
transaction has ended, and the remover deletes only files it can lock
exclusively, inside its own catalog write transaction. Inside the deposit's
transaction, where no remover can act, the deposit checks that each blob is
still the file at its name and puts it back from the open file if not. The
locks are the kernel's, so a killed deposit releases them. An import (which
may bring more blobs than a process may open files) holds none open: inside
its catalog transaction it checks each blob is at its name, and fails,
importing nothing, if a remover with no grace period took one meanwhile.
"""

from __future__ import annotations

import fcntl
import hashlib
import heapq
import math
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pdi.archive.blobs import BlobInfo, ChunkedReader, Digests, Octets, file_reader, pieces
from pdi.archive.sql import (
    REP_COLUMNS,
    SearchAccess,
    SQLStore,
    _discard,
    check_imported_blob,
    search_page,
)
from pdi.archive.store import BlobObserver, BlobSource, SearchKey, StagedBlob, blob_octets
from pdi.errors import NotFoundError, PDIError, StoreError
from pdi.passages.fulltext import MARK_END, MARK_START, fts5_expression

CATALOG = "catalog.sqlite"


class SQLiteStore(SQLStore):
    """A directory holding ``catalog.sqlite`` and ``blobs/``."""

    def __init__(self, directory: str | os.PathLike[str], *, create: bool = False) -> None:
        self.root = Path(directory)
        self.location = str(self.root)
        catalog = self.root / CATALOG
        if not catalog.exists():
            if not create:
                raise NotFoundError(
                    f"no archive at {self.root} (no {CATALOG}); create one with pdi init"
                )
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create archive directory {self.root}: {exc}") from exc
        try:
            (self.root / "blobs").mkdir(exist_ok=True)
            (self.root / "tmp").mkdir(exist_ok=True)
            self._conn = sqlite3.connect(
                str(catalog), isolation_level=None, timeout=120.0, check_same_thread=False
            )
            self._conn.execute("PRAGMA busy_timeout = 120000")
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = FULL")
            self._conn.execute("PRAGMA foreign_keys = ON")
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open archive catalog {catalog}: {exc}") from exc
        self._lock = threading.RLock()

    # The full-text index (schema step 5): FTS5 over the passages' text, which
    # stays in search_passages (an external-content table); words are folded
    # to lower case without diacritics and reduced by the Porter stemmer.
    search_schema = (
        "CREATE VIRTUAL TABLE search_fts USING fts5(body, content='search_passages', content_rowid='id',"
        " tokenize='porter unicode61 remove_diacritics 2')",
    )

    # --- SQL ---------------------------------------------------------------------
    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return list(self._conn.execute(sql, tuple(params)).fetchall())
        except sqlite3.Error as exc:
            raise StoreError(f"catalog {self.root / CATALOG}: {exc}") from exc

    @contextmanager
    def _outermost(self, write: bool) -> Iterator[None]:
        # A writer takes the write lock up front, so deposits queue across processes.
        try:
            self._conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        except sqlite3.Error as exc:
            raise StoreError(f"catalog {self.root / CATALOG}: {exc}") from exc
        try:
            yield
        except BaseException:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error as exc:
                raise StoreError(f"rollback failed: {exc}") from exc
            raise
        try:
            self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise StoreError(f"commit failed: {exc}") from exc

    # --- the full-text index ---------------------------------------------------------
    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        try:
            self._conn.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise StoreError(f"catalog {self.root / CATALOG}: {exc}") from exc

    def _passages_inserted(self, sha256: str, media_type: str, charset: str) -> None:
        # one statement gives FTS5 the text of every passage of the source
        self._query(
            "INSERT INTO search_fts (rowid, body) SELECT id, body FROM search_passages"
            " WHERE sha256 = ? AND media_type = ? AND charset = ?",
            (sha256, media_type, charset),
        )

    def _delete_passages(self, sources: Sequence[tuple[str, str, str]] | None) -> None:
        if sources is None:
            self._query("INSERT INTO search_fts (search_fts) VALUES ('delete-all')")
            self._query("DELETE FROM search_passages")
            return
        for source in sources:
            where = " WHERE sha256 = ? AND media_type = ? AND charset = ?"
            self._query(
                "INSERT INTO search_fts (search_fts, rowid, body) SELECT 'delete', id, body FROM search_passages"
                + where, source,
            )
            self._query("DELETE FROM search_passages" + where, source)

    def _search_page(
        self, phrases: Sequence[Sequence[str]], series: str | None, limit: int, after: SearchKey | None,
        access: SearchAccess | None = None,
    ) -> list[tuple[Any, ...]]:
        sql = (
            f"SELECT {REP_COLUMNS}, d.id, p.id, p.start, p.runs, s.score FROM"
            " (SELECT rowid AS pid, bm25(search_fts) AS score FROM search_fts WHERE search_fts MATCH ?) s"
            " JOIN search_passages p ON p.id = s.pid"
            " JOIN representations r ON r.sha256 = p.sha256 AND r.media_type = p.media_type"
            " AND COALESCE(r.charset, '') = p.charset"
            " JOIN documents d ON d.id = r.document"
            # a withdrawn name is out of service: its text is not found (the same bytes under another name still are)
            " WHERE NOT EXISTS (SELECT 1 FROM withdrawals w WHERE w.document = d.id"
            " AND (w.version IS NULL OR w.version = r.version))"
        )
        params: list[Any] = [fts5_expression(phrases)]
        return self._query(*search_page(sql, params, series, access, after, limit))

    def _highlight(self, passage: int, phrases: Sequence[Sequence[str]]) -> str | None:
        rows = self._query(
            "SELECT highlight(search_fts, 0, ?, ?) FROM search_fts WHERE search_fts MATCH ? AND rowid = ?",
            (MARK_START, MARK_END, fts5_expression(phrases), passage),
        )
        return str(rows[0][0]) if rows else None

    def _database_problems(self) -> list[str]:
        """SQLite's ``integrity_check`` (pages, records, indexes agree) and ``foreign_key_check``."""
        found = [str(r[0]) for r in self._query("PRAGMA integrity_check(100)") if str(r[0]) != "ok"]
        found += [
            f"{r[0]} row {r[1]} refers to a missing row of {r[2]}"
            for r in self._query("PRAGMA foreign_key_check")
        ]
        return found

    def _has_table(self, name: str) -> bool:
        return bool(
            self._query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        )

    # --- blobs ---------------------------------------------------------------------
    def blob_path(self, sha256: str) -> Path:
        """Where the blob named ``sha256`` lives."""
        return self.root / "blobs" / sha256[:2] / sha256

    def _pin_existing(self, sha256: str) -> _FilePin | None:
        """Pin the blob file already at its name, if it is there with the right bytes.

        ``None`` when there is none, or it is damaged (then it is written
        again), or a remover took it while we waited for the lock. A blob
        found is touched, so that the grace period of
        :meth:`remove_unreferenced` starts again.
        """
        path = self.blob_path(sha256)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read blob {path}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            if os.fstat(fd).st_nlink == 0 or _digest(fd) != sha256:
                os.close(fd)
                return None
            os.utime(path)
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot read blob {path}: {exc}") from exc
        return _FilePin(self, sha256, fd)

    def _delete_blob(self, sha256: str) -> bool:
        path = self.blob_path(sha256)
        try:
            if _unlink_if_free(path, math.inf):
                _fsync_dir(path.parent)
        except OSError as exc:
            raise StoreError(f"cannot delete blob {path}: {exc}") from exc
        return not path.exists()  # still there: a deposit in progress holds it

    def remove_unreferenced(self, older_than: float) -> list[str]:
        """Delete blob files no name holds and temporary files, untouched for ``older_than`` seconds.

        They are what a killed deposit leaves. The catalog is read and the files
        removed inside one write transaction, so no deposit commits meanwhile;
        a file a deposit in progress has staged is locked by it and spared,
        whatever ``older_than`` is (see the module docstring).
        Returns the SHA-256 names (and ``tmp/`` file names) removed.
        """
        cutoff = time.time() - older_than
        removed: list[str] = []
        with self._write():
            referenced = {
                str(r[0]) for r in self._query("SELECT DISTINCT sha256 FROM representations WHERE purged IS NULL")
            }
            try:
                for name in sorted(self.blob_names() - referenced):
                    if _unlink_if_free(self.blob_path(name), cutoff):
                        removed.append(name)
                for stale in sorted((self.root / "tmp").iterdir()):
                    if _unlink_if_free(stale, cutoff):
                        removed.append(f"tmp/{stale.name}")
                for sub in {self.blob_path(name).parent for name in removed if "/" not in name}:
                    _fsync_dir(sub)
            except OSError as exc:
                raise StoreError(f"cannot remove unreferenced blobs in {self.root}: {exc}") from exc
        return removed

    def _new_temporary(self) -> tuple[Path, int]:
        """A new temporary file in ``tmp/``, open and exclusively ``flock``-ed (so no remover takes it)."""
        name = f"blob.{os.getpid()}.{threading.get_ident()}.{time.monotonic_ns()}"
        tmp = self.root / "tmp" / name
        try:
            while True:
                fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o444)
                fcntl.flock(fd, fcntl.LOCK_EX)
                if os.fstat(fd).st_nlink:
                    return tmp, fd
                os.close(fd)  # a remover took the new file before we locked it: make another
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StoreError(f"cannot write a blob in {self.root / 'tmp'}: {exc}") from exc

    def _write_temporary(
        self, source: Octets, observe: BlobObserver | None = None
    ) -> tuple[Path, int, BlobInfo]:
        """Write ``source`` to a new temporary file while hashing it; fsynced, still locked.

        Returns its path, its open descriptor (holding the exclusive lock) and
        what was written. Any failure (of the source, of ``observe``, of the
        disk) removes the file.
        """
        tmp, fd = self._new_temporary()
        digests = Digests()
        try:
            for piece in pieces(source):
                digests.update(piece)
                if observe is not None:
                    observe.update(piece)
                _write_all(fd, piece)
            info = digests.finish()
            if observe is not None:
                observe.finish(info)
            os.fsync(fd)
        except BaseException as exc:
            tmp.unlink(missing_ok=True)
            os.close(fd)
            if isinstance(exc, OSError):
                raise StoreError(f"cannot write a blob in {self.root / 'tmp'}: {exc}") from exc
            raise
        return tmp, fd, info

    def _place(self, tmp: Path, sha256: str) -> None:
        """Rename a written temporary file to the blob's name, durably."""
        path = self.blob_path(sha256)
        try:
            if not path.parent.is_dir():
                path.parent.mkdir(exist_ok=True)
                _fsync_dir(path.parent.parent)  # the new subdirectory's entry is durable too
            os.replace(tmp, path)
            _fsync_dir(path.parent)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StoreError(f"cannot write blob {path}: {exc}") from exc

    def _settle(self, tmp: Path, fd: int, info: BlobInfo) -> _FilePin:
        """A written temporary file becomes the blob: the file already there is pinned instead, if sound."""
        try:
            existing = self._pin_existing(info.sha256)
        except BaseException:
            tmp.unlink(missing_ok=True)
            os.close(fd)
            raise
        if existing is not None:
            tmp.unlink(missing_ok=True)
            os.close(fd)
            existing.info = info
            return existing
        try:
            self._place(tmp, info.sha256)
            fcntl.flock(fd, fcntl.LOCK_SH)  # placed: other deposits may pin it too
        except BaseException:
            os.close(fd)
            raise
        return _FilePin(self, info.sha256, fd, info, created=True)

    def stage_blob(self, source: Octets, observe: BlobObserver | None = None) -> _FilePin:
        tmp, fd, info = self._write_temporary(source, observe)
        return self._settle(tmp, fd, info)

    def _stage_import(self, blobs: Iterable[tuple[str, BlobSource]]) -> list[StagedBlob]:
        """Write every new blob of an import to a temporary file first; place them only when all are read.

        A bag object that cannot be read (or no longer has its hash) stops
        the import before any blob file is put in place: the temporary files
        are removed and the archive is as it was. Unlike a deposit's, an
        import's blobs are not held open (an import may bring more blobs than
        a process may open files): inside the catalog transaction each is
        checked to be at its name (:class:`_ImportedFile`), and if a remover
        took one meanwhile, nothing is imported.
        """
        seen: set[str] = set()
        staged: list[StagedBlob] = []
        pending: list[tuple[Path, BlobInfo]] = []
        try:
            for sha256, content in blobs:
                if sha256 in seen:
                    continue
                seen.add(sha256)
                pin = self._pin_existing(sha256)
                if pin is not None:
                    info = self.blob_info(sha256) or BlobInfo(sha256, os.fstat(pin.fd).st_size)
                    pin.close()
                    staged.append(_ImportedFile(self, info, created=False))
                    continue
                tmp, fd, info = self._write_temporary(blob_octets(content))
                os.close(fd)
                pending.append((tmp, info))
                check_imported_blob(sha256, info.sha256)
            while pending:
                tmp, info = pending.pop()
                staged.append(self._place_imported(tmp, info))
        except BaseException:
            for tmp, _ in pending:
                tmp.unlink(missing_ok=True)
            _discard(staged)
            raise
        return staged

    def _place_imported(self, tmp: Path, info: BlobInfo) -> _ImportedFile:
        """A written temporary file of an import becomes the blob, unless a sound one is there already."""
        pin = self._pin_existing(info.sha256)
        if pin is not None:
            pin.close()
            tmp.unlink(missing_ok=True)
            return _ImportedFile(self, info, created=False)
        if not tmp.exists():
            raise StoreError(
                f"the staged file {tmp} of blob {info.sha256} was removed while the import ran"
                " (by pdi verify --remove-unreferenced?); nothing was imported"
            )
        self._place(tmp, info.sha256)
        return _ImportedFile(self, info, created=True)

    def open_blob(self, sha256: str, *, name: str) -> ChunkedReader | None:
        path = self.blob_path(sha256)
        try:
            # a file the catalog does not know is read whole, checked by its name
            info = self.blob_info(sha256) or BlobInfo(sha256, path.stat().st_size)
            return file_reader(info, str(path), name=name)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read blob {path}: {exc}") from exc

    def _discard_created(self, pin: _FilePin) -> None:
        """Remove a blob file a failed deposit placed, if no deposit holds it and no name refers to it."""
        try:
            fcntl.flock(pin.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another deposit pinned it: it decides
        except OSError as exc:
            raise StoreError(f"cannot remove blob {self.blob_path(pin.sha256)}: {exc}") from exc
        with self._write():
            if self._query("SELECT 1 FROM representations WHERE sha256 = ? LIMIT 1", (pin.sha256,)):
                return
            path = self.blob_path(pin.sha256)
            try:
                mine = os.fstat(pin.fd)
                there = os.stat(path)
                if (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino):
                    path.unlink()
                    _fsync_dir(path.parent)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise StoreError(f"cannot remove blob {path}: {exc}") from exc

    def blob_names(self) -> set[str]:
        names: set[str] = set()
        try:
            for sub in (self.root / "blobs").iterdir():
                if sub.is_dir():
                    names.update(p.name for p in sub.iterdir())
        except OSError as exc:
            raise StoreError(f"cannot list blobs in {self.root}: {exc}") from exc
        return names

    def iter_blob_names(self) -> Iterator[str]:
        """Every name :meth:`blob_names` holds, in ascending order, one subdirectory in memory at a time.

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


#: The name of a subdirectory of ``blobs/``: the first two hex digits of its blobs' names.
_HEX_PAIR = re.compile(r"[0-9a-f]{2}")


class _FilePin:
    """An open descriptor of a staged blob file with a shared ``flock`` on it (see the module docstring)."""

    def __init__(
        self, store: SQLiteStore, sha256: str, fd: int, info: BlobInfo | None = None,
        *, created: bool = False,
    ) -> None:
        self.store = store
        self.sha256 = sha256
        self.fd = fd
        self.info = info if info is not None else BlobInfo(sha256, os.fstat(fd).st_size)
        self.created = created
        self._closed = False

    def secure(self) -> None:
        """Inside the catalog transaction: if the file at the blob's name is not ours, put ours back."""
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
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o444)
            try:
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


class _ImportedFile:
    """A blob an import placed (or found in place), not held open: checked at its name inside the catalog transaction."""

    def __init__(self, store: SQLiteStore, info: BlobInfo, *, created: bool) -> None:
        self.store = store
        self.info = info
        self.created = created

    def secure(self) -> None:
        """Inside the catalog transaction, where no remover acts: the blob must still be at its name."""
        path = self.store.blob_path(self.info.sha256)
        try:
            size = path.stat().st_size
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


def _digest(fd: int) -> str:
    """The SHA-256 of the whole file open at ``fd``."""
    h = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, 1 << 20):
        h.update(chunk)
    return h.hexdigest()


def _write_all(fd: int, data: bytes) -> None:
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


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def open_sqlite(directory: str | os.PathLike[str], *, create: bool) -> SQLiteStore:
    """Open (or with ``create`` make) an archive directory and migrate its schema forward."""
    store = SQLiteStore(directory, create=create)
    try:
        store.migrate()
    except PDIError:
        store.close()
        raise
    return store
