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
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pdi.archive.sql import SQLStore
from pdi.archive.store import BlobSource, blob_bytes
from pdi.errors import NotFoundError, PDIError, StoreError

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

    def _has_table(self, name: str) -> bool:
        return bool(
            self._query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        )

    # --- blobs ---------------------------------------------------------------------
    def blob_path(self, sha256: str) -> Path:
        """Where the blob named ``sha256`` lives."""
        return self.root / "blobs" / sha256[:2] / sha256

    def _has_blob(self, sha256: str) -> bool:
        """Whether the blob file is there with the right bytes (a damaged one is written again).

        A blob found is touched: a deposit about to name a blob that no name
        holds yet must not lose it to :meth:`remove_unreferenced`, which
        spares files changed within its grace period.
        """
        existing = self.read_blob(sha256)
        if existing is None or hashlib.sha256(existing).hexdigest() != sha256:
            return False
        try:
            os.utime(self.blob_path(sha256))
        except OSError as exc:
            raise StoreError(f"cannot touch blob {self.blob_path(sha256)}: {exc}") from exc
        return True

    def remove_unreferenced(self, older_than: float) -> list[str]:
        """Delete blob files no name holds and temporary files, untouched for ``older_than`` seconds.

        They are what a killed deposit leaves. The catalog is read and the files
        removed inside one write transaction, so no deposit commits meanwhile;
        a deposit that staged its blob before that still has it, because
        staging writes or touches the file and the grace period spares it.
        Returns the SHA-256 names (and ``tmp/`` file names) removed.
        """
        cutoff = time.time() - older_than
        removed: list[str] = []
        with self._write():
            referenced = {str(r[0]) for r in self._query("SELECT DISTINCT sha256 FROM representations")}
            try:
                for name in sorted(self.blob_names() - referenced):
                    path = self.blob_path(name)
                    if path.stat().st_mtime < cutoff:
                        path.unlink()
                        removed.append(name)
                for stale in sorted((self.root / "tmp").iterdir()):
                    if stale.stat().st_mtime < cutoff:
                        stale.unlink()
                        removed.append(f"tmp/{stale.name}")
                for sub in {self.blob_path(name).parent for name in removed if "/" not in name}:
                    _fsync_dir(sub)
            except OSError as exc:
                raise StoreError(f"cannot remove unreferenced blobs in {self.root}: {exc}") from exc
        return removed

    def _write_temporary(self, sha256: str, content: bytes) -> Path:
        """Write ``content`` to a new temporary file of this process and thread and fsync it."""
        tmp = self.root / "tmp" / f"{sha256}.{os.getpid()}.{threading.get_ident()}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o444)
            try:
                view = memoryview(content)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StoreError(f"cannot write blob {self.blob_path(sha256)}: {exc}") from exc
        return tmp

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

    def _stage_blob(self, sha256: str, content: BlobSource) -> None:
        if not self._has_blob(sha256):
            self._place(self._write_temporary(sha256, blob_bytes(content)), sha256)

    def _stage_import(self, blobs: Sequence[tuple[str, BlobSource]]) -> None:
        """Write every new blob of an import to a temporary file first; rename them only when all are read.

        A bag object that cannot be read (or no longer has its hash) stops
        the import before any blob file is put in place: the temporary files
        are removed and the archive is as it was.
        """
        pending: dict[str, Path] = {}
        try:
            for sha256, content in blobs:
                if sha256 not in pending and not self._has_blob(sha256):
                    pending[sha256] = self._write_temporary(sha256, blob_bytes(content))
        except BaseException:
            for tmp in pending.values():
                tmp.unlink(missing_ok=True)
            raise
        for sha256, tmp in pending.items():
            self._place(tmp, sha256)

    def _store_blob(self, sha256: str, content: BlobSource) -> None:
        # The file was made durable by _stage_blob before the transaction began.
        return None

    def read_blob(self, sha256: str) -> bytes | None:
        try:
            return self.blob_path(sha256).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read blob {self.blob_path(sha256)}: {exc}") from exc

    def blob_names(self) -> set[str]:
        names: set[str] = set()
        try:
            for sub in (self.root / "blobs").iterdir():
                if sub.is_dir():
                    names.update(p.name for p in sub.iterdir())
        except OSError as exc:
            raise StoreError(f"cannot list blobs in {self.root}: {exc}") from exc
        return names


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
