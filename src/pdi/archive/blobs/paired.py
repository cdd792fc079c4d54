"""A catalog store (SQLite or PostgreSQL) paired with an S3-compatible blob store.

The catalog names blobs; the object store (:mod:`pdi.archive.blobs.s3`)
holds them. The rules the files and the PostgreSQL rows keep hold here too:

*A failed deposit leaves the archive exactly as it was.* A blob is streamed
to its own staging object and copied to its content-addressed key only when
the whole of it has been hashed and checked; a failure before that removes
the staging object, and a failure after it (a refused deposit) removes the
key again if staging created it and nothing else holds it.

*A committed name never lacks its bytes.* Every staging is recorded in the
catalog (``blob_stagings``: an id and, once known, the SHA-256) in a
transaction of its own before the first octet is sent, and removed only
after the deposit's catalog transaction has ended. The remover
(:meth:`PairedBlobs.remove_unreferenced`) deletes objects only inside a
catalog write transaction holding the *removal lock* exclusively, and spares
every object a staging row names; a deposit, inside its catalog transaction,
takes the same lock shared and checks that each of its blobs is at its key
with its size. Either the remover went first (the deposit then finds its
blob gone and fails cleanly, nothing committed) or the deposit did (the
remover then sees the name it committed). The removal lock is SQLite's one
writer lock, and a PostgreSQL advisory lock. A staging row older than
:data:`STAGING_LIFETIME` (and than the remover's grace period) is taken for
the leftover of a killed process.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence

from pdi.archive.blobs import BlobInfo, ChunkedReader, Octets
from pdi.archive.blobs.s3 import S3Blobs, utc_timestamp
from pdi.archive.postgres import DEFAULT_CONNECTIONS, PostgresStore, _redact
from pdi.archive.sql import SQLStore, _now
from pdi.archive.sqlite import SQLiteStore
from pdi.archive.store import BlobObserver, BlobSource, StagedBlob
from pdi.errors import StoreError

#: A staging row older than this (a day) belongs to a killed process, whatever grace the remover gives.
STAGING_LIFETIME = 24 * 3600.0

# Any fixed number: the PostgreSQL advisory lock between the remover and deposits.
_REMOVAL_LOCK = 0x0B10B5

#: How many names one catalog query checks at a time.
_BATCH = 500


class PairedBlobs(SQLStore):
    """The blob half of a catalog store whose blobs live in an S3-compatible store (a mixin)."""

    s3: S3Blobs

    def _removal_lock(self, *, shared: bool) -> None:
        """Inside a catalog write transaction: the lock between deposits (shared) and the remover."""

    # --- staging ---------------------------------------------------------------------
    def stage_blob(self, source: Octets, observe: BlobObserver | None = None) -> StagedBlob:
        ident = uuid.uuid4().hex
        with self._write():
            self._query("INSERT INTO blob_stagings (id, sha256, started_at) VALUES (?, NULL, ?)", (ident, _now()))
        try:
            info = self.s3.upload(ident, source, observe)
            with self._write():
                self._query("UPDATE blob_stagings SET sha256 = ? WHERE id = ?", (info.sha256, ident))
            created = self.s3.place(ident, info)
        except BaseException:
            self._unpin(ident)
            raise
        return _StagedObject(self, ident, info, created)

    def _stage_import(self, blobs: Iterable[tuple[str, BlobSource]]) -> list[StagedBlob]:
        return SQLStore._stage_import(self, blobs)

    def _store_blobs(self, blobs: Sequence[StagedBlob]) -> None:
        # one at a time, each checked in the object store (not the catalog store's batch of its own uploads)
        for blob in blobs:
            self._store_blob(blob)

    def _unpin(self, ident: str) -> None:
        with self._write():
            self._query("DELETE FROM blob_stagings WHERE id = ?", (ident,))

    def _store_blob(self, blob: StagedBlob) -> None:
        SQLStore._store_blob(self, blob)
        self._removal_lock(shared=True)
        size = self.s3.size(blob.info.sha256)
        if size != blob.info.size:
            raise StoreError(
                f"{self.s3.where}{blob.info.sha256}: the blob was removed before its deposit committed"
                + ("" if size is None else f" (an object of {size} octets is there, not {blob.info.size})")
            )

    def _remove_if_free(self, sha256: str) -> None:
        """After a failed deposit: delete the blob's object if no name and no other deposit holds it."""
        with self._write():
            self._removal_lock(shared=False)
            if not self._held({sha256}):
                self.s3.delete(self.s3.key(sha256))

    def _held(self, names: set[str]) -> set[str]:
        """Which of ``names`` a representation keeping its octets or a staging row names (inside the removal lock)."""
        held: set[str] = set()
        ordered = sorted(names)
        for start in range(0, len(ordered), _BATCH):
            batch = ordered[start : start + _BATCH]
            marks = ", ".join("?" * len(batch))
            for table, kept in (("representations", " AND purged IS NULL"), ("blob_stagings", "")):
                rows = self._query(f"SELECT DISTINCT sha256 FROM {table} WHERE sha256 IN ({marks}){kept}", batch)
                held |= {str(r[0]) for r in rows}
        return held

    def _purge_lock(self) -> None:
        self._removal_lock(shared=False)

    def _delete_blob(self, sha256: str) -> bool:
        if self._held({sha256}):  # a deposit in progress is staging these octets
            return False
        self.s3.delete(self.s3.key(sha256))
        return True

    # --- reading ---------------------------------------------------------------------
    def open_blob(self, sha256: str, *, name: str) -> ChunkedReader | None:
        size = self.s3.size(sha256)
        if size is None:
            return None
        info = self.blob_info(sha256) or BlobInfo(sha256, size)
        return ChunkedReader(info, self.s3.range_reader(sha256), name=name)

    def blob_names(self) -> set[str]:
        return set(self.iter_blob_names())

    def iter_blob_names(self) -> Iterator[str]:
        start = len(self.s3.where.prefix)
        for item in self.s3.blobs():
            yield item.key[start:]

    # --- removing --------------------------------------------------------------------
    def remove_unreferenced(self, older_than: float) -> list[str]:
        """Delete blob objects no name holds and staging left by killed deposits, older than ``older_than`` seconds.

        An object a deposit in progress is staging or about to name is kept
        whatever ``older_than`` is (see the module docstring). Returns the
        SHA-256 names and the ``staging/`` keys removed.
        """
        cutoff_epoch = time.time() - older_than
        start = len(self.s3.where.prefix)
        old = {item.key[start:] for item in self.s3.blobs() if item.modified < cutoff_epoch}
        staging = [item for item in self.s3.staging() if item.modified < cutoff_epoch]
        removed: list[str] = []
        with self._write():
            self._removal_lock(shared=False)
            self._query(
                "DELETE FROM blob_stagings WHERE started_at < ?",
                (utc_timestamp(max(older_than, STAGING_LIFETIME)),),
            )
            for name in sorted(old - self._held(old)):
                self.s3.delete(self.s3.key(name))
                removed.append(name)
            live = {str(r[0]) for r in self._query("SELECT id FROM blob_stagings")}
            for item in staging:
                if self.s3.ident_of(item.key) in live:
                    continue
                if item.upload_id is None:
                    self.s3.delete(item.key)
                else:
                    self.s3.abort(item.key, item.upload_id)
                removed.append(item.key[start:])
        return removed


class _StagedObject:
    """A blob at its key in the object store, held from the remover by its staging row until closed."""

    def __init__(self, store: PairedBlobs, ident: str, info: BlobInfo, created: bool) -> None:
        self.store = store
        self.ident = ident
        self.info = info
        self.created = created
        self._done = False

    def secure(self) -> None:
        return None  # _store_blob checks the object under the removal lock

    def close(self) -> None:
        if not self._done:
            self._done = True
            self.store._unpin(self.ident)

    def discard(self) -> None:
        if self._done:
            return
        self.close()
        if self.created:
            self.store._remove_if_free(self.info.sha256)


# The blob methods of PairedBlobs replace the catalog store's own, whose pins
# are of other types (mypy sees the two bases disagree; that is the point).
class S3SQLiteStore(PairedBlobs, SQLiteStore):  # type: ignore[misc]
    """A SQLite catalog with its blobs in an S3-compatible store (writers already serialize: no other lock)."""

    def __init__(self, directory: str | os.PathLike[str], s3: S3Blobs) -> None:
        SQLiteStore.__init__(self, directory)
        self.s3 = s3
        self.location = f"{self.location} (blobs in {s3.where})"


class S3PostgresStore(PairedBlobs, PostgresStore):  # type: ignore[misc]
    """A PostgreSQL catalog with its blobs in an S3-compatible store."""

    def __init__(self, url: str, s3: S3Blobs, *, connections: int = DEFAULT_CONNECTIONS) -> None:
        PostgresStore.__init__(self, url, connections=connections)
        self.s3 = s3
        self.location = f"{_redact(url)} (blobs in {s3.where})"

    def _removal_lock(self, *, shared: bool) -> None:
        function = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
        self._query(f"SELECT {function}(?)", (_REMOVAL_LOCK,))


def open_paired(location: str, url: str, *, postgres: bool, connections: int = 0) -> SQLStore:
    """The catalog at ``location`` (already migrated) with its blobs in the store ``url`` records."""
    s3 = S3Blobs.open(url)
    if postgres:
        return S3PostgresStore(location, s3, connections=connections or DEFAULT_CONNECTIONS)
    return S3SQLiteStore(location, s3)
