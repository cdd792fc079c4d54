"""Blobs in the PostgreSQL catalog's own database: uploaded in rows of one chunk each.

The store of a PostgreSQL catalog unless another is recorded at ``pdi init``.
A blob is uploaded in rows of 1 MiB (``blob_parts``, one per chunk digest,
under one ``blob_uploads`` row), in its own transaction on a connection of
its own, *before* the deposit's short catalog transaction, which then names
the upload in ``blobs`` (by SHA-256): no size limit (``bytea`` holds under
1 GiB; a row here holds 1 MiB), no deposit waiting behind another's upload,
and no file system involved. (Blobs of archives made before schema 4 stay as
one ``bytea`` in ``blobs.data``.) An upload no blob names (a failed deposit,
or the same bytes stored already) is deleted when its pin is closed.

A blob of at most :data:`~.inline.INLINE_LIMIT` octets is not uploaded: it is kept in
hand while hashed and written as one ``bytea`` in ``blobs.data`` (as blobs
were before schema 4, and are read the same way) by the deposit's own catalog
transaction (:mod:`.inline`, shared with the blob files beside a SQLite
catalog), so it commits, or not, with the names that hold it: a small
deposit takes no upload transaction and leaves nothing to clean up. (An
import uploads every blob, as before: a page of a bag may bring thousands.)

The tables are the catalog's (its schema makes them), so only a PostgreSQL
catalog can hold this store: :meth:`LargeObjects.attach` refuses any other.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from pdi._extras import missing_extra

try:
    import psycopg
except ImportError as exc:  # pdi installed without its postgres extra
    missing_extra("postgres", exc)

from pdi.archive.blobs import CHUNK_SIZE, BlobInfo, ChunkedReader, Digests, Octets, pieces
from pdi.archive.blobs.inline import (
    INLINE_LIMIT,
    CatalogRows,
    inline_names,
    octets_reader,
    record_inline,
    stage_small,
)
from pdi.archive.blobs.seam import BlobCatalog, BlobObserver, BlobSource, StagedBlob, stage_each
from pdi.errors import StoreError, UnsupportedError


@runtime_checkable
class PostgresRows(CatalogRows, Protocol):
    """What this store needs of its catalog beyond :class:`~.inline.CatalogRows`: binary results, in its database."""

    def fetch(self, sql: str, params: tuple[Any, ...], *, primary: bool = False) -> list[tuple[Any, ...]]:
        """One statement that writes nothing (``%s`` placeholders) with binary results; outside a transaction on a
        replica, if the catalog reads from one, unless ``primary``."""
        ...

    @property
    def replicated(self) -> bool:
        """Whether reads go to a replica, which may lag behind the primary the writes go to."""
        ...


def oneline(exc: BaseException) -> str:
    """psycopg's message on one line (its messages span lines: a hint on the next one; the CLI prints one)."""
    return " ".join(str(exc).split())


class LargeObjects:
    """The ``blob_uploads``, ``blob_parts`` and ``blobs`` tables of a PostgreSQL catalog's database."""

    #: The blobs live beside the catalog, in its database.
    elsewhere: str | None = None

    def __init__(self, url: str) -> None:
        self._url = url
        self._uploads: psycopg.Connection[Any] | None = None
        self._upload_lock = threading.Lock()
        self._catalog: PostgresRows | None = None

    def attach(self, catalog: BlobCatalog) -> None:
        if not isinstance(catalog, PostgresRows) or catalog.dialect != "postgresql":
            raise UnsupportedError(
                f"the catalog at {catalog.location} cannot hold PostgreSQL blobs: they live in the tables of"
                " a PostgreSQL catalog's own database (a SQLite catalog keeps its blobs in files, or in S3)"
            )
        self._catalog = catalog

    @property
    def catalog(self) -> PostgresRows:
        if self._catalog is None:  # pragma: no cover - a store used before a catalog holds it
            raise StoreError("the PostgreSQL blob store is not attached to a catalog")
        return self._catalog

    @property
    def location(self) -> str:
        return self.catalog.location

    # --- writing -------------------------------------------------------------------
    def _connection(self) -> psycopg.Connection[Any]:
        if self._uploads is None:
            try:
                self._uploads = psycopg.connect(self._url, autocommit=True, prepare_threshold=None)
            except psycopg.Error as exc:
                raise StoreError(f"cannot connect to {self.location}: {oneline(exc)}") from exc
        return self._uploads

    def stage(self, source: Octets, observe: BlobObserver | None = None, *, replace: bool = False) -> StagedBlob:
        """A blob of at most :data:`~.inline.INLINE_LIMIT` octets kept in hand (written by :meth:`record`), a larger one
        uploaded (always a new upload: ``replace`` changes nothing)."""
        return stage_small(source, observe, self._upload)

    def _upload(self, stream: Iterable[bytes], observe: BlobObserver | None) -> Upload:
        with self._upload_lock:
            conn = self._connection()
            digests = Digests()
            try:
                with conn.transaction():
                    row = conn.execute(
                        "INSERT INTO blob_uploads (started_at) VALUES (%s) RETURNING id", (_now(),)
                    ).fetchone()
                    if row is None:  # pragma: no cover - RETURNING gives the row inserted
                        raise StoreError(f"{self.location}: an upload was not recorded")
                    upload = int(row[0])
                    n = 0
                    pending = bytearray()
                    for piece in stream:
                        digests.update(piece)
                        if observe is not None:
                            observe.update(piece)
                        pending += piece
                        while len(pending) >= CHUNK_SIZE:
                            _put_part(conn, upload, n, bytes(pending[:CHUNK_SIZE]))
                            del pending[:CHUNK_SIZE]
                            n += 1
                    if pending:
                        _put_part(conn, upload, n, bytes(pending))
                    info = digests.finish()
                    if observe is not None:
                        observe.finish(info)
                    conn.execute("UPDATE blob_uploads SET sha256 = %s WHERE id = %s", (info.sha256, upload))
            except psycopg.Error as exc:
                self._forget_broken(conn)
                raise StoreError(f"{self.location}: cannot store a blob: {oneline(exc)}") from exc
        return Upload(self, upload, info)

    def _forget_broken(self, conn: psycopg.Connection[Any]) -> None:
        """After an error: a connection the server went away from is closed, and the next upload connects again
        (to the primary the URL names then, after a failover)."""
        if conn.broken or conn.closed:
            conn.close()
            self._uploads = None

    def stage_import(self, blobs: Iterable[tuple[str, BlobSource]]) -> list[StagedBlob]:
        # every blob uploaded, however small: an import's page may bring thousands, never all held in hand
        return stage_each(self, blobs, stage=lambda source: self._upload(pieces(source), None))

    def record(self, blobs: Sequence[StagedBlob]) -> None:
        """Inside the catalog transaction: each small blob kept in hand is written (:func:`~.inline.record_inline`);
        each upload must still be there (locked ``FOR SHARE`` till commit), and is named."""
        uploads: list[Upload] = []
        for blob in record_inline(self.catalog, blobs):
            if not isinstance(blob, Upload):  # pragma: no cover - a store bug
                raise StoreError("a PostgreSQL deposit staged its blob elsewhere")
            uploads.append(blob)
        if not uploads:
            return
        held = {int(r[0]) for r in self.catalog.query(
            "SELECT id FROM blob_uploads WHERE id = ANY(?) FOR SHARE", ([u.upload for u in uploads],)
        )}
        for u in uploads:
            if u.upload not in held:
                raise StoreError(f"{self.location}: the upload of blob {u.info.sha256} was removed before its deposit")
        self.catalog.query(
            "INSERT INTO blobs (sha256, upload) SELECT * FROM unnest(?::text[], ?::bigint[])"
            " ON CONFLICT (sha256) DO NOTHING",
            ([u.info.sha256 for u in uploads], [u.upload for u in uploads]),
        )

    def _drop_upload(self, upload: int) -> None:
        """Delete an upload no blob names (its parts go with it)."""
        with self._upload_lock:
            conn = self._connection()
            try:
                conn.execute(
                    "DELETE FROM blob_uploads u WHERE id = %s"
                    " AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.upload = u.id)",
                    (upload,),
                )
            except psycopg.Error as exc:
                self._forget_broken(conn)
                raise StoreError(f"{self.location}: {oneline(exc)}") from exc

    # --- reading -------------------------------------------------------------------
    # Reads go where the catalog reads (a replica, if it has one). A blob's rows are written once, before the
    # names that hold them: one not found on a replica is looked for on the primary, and its parts read there.
    def open(self, sha256: str, info: BlobInfo | None, *, name: str) -> ChunkedReader | None:
        # a small blob's octets (a row's, at most INLINE_LIMIT) come with its row: one round trip, not two; they are
        # checked against the blob's chunk digests as they are read, as any blob's
        sql = ("SELECT upload, data IS NOT NULL, octet_length(data), CASE WHEN octet_length(data) <= %s THEN data END"
               " FROM blobs WHERE sha256 = %s")
        rows = self.catalog.fetch(sql, (INLINE_LIMIT, sha256))
        primary = not rows and self.catalog.replicated
        if primary:
            rows = self.catalog.fetch(sql, (INLINE_LIMIT, sha256), primary=True)
        if not rows:
            return None
        upload, legacy, legacy_size, small = rows[0]
        if info is None:
            info = BlobInfo(sha256, int(legacy_size or 0))
        if small is not None:
            return octets_reader(info, bytes(small), name=name)
        if legacy:
            return ChunkedReader(info, self._legacy_reader(sha256, primary), name=name)
        return ChunkedReader(info, self._part_reader(int(upload), info.chunk_size, primary), name=name)

    def _legacy_reader(self, sha256: str, primary: bool) -> Callable[[int, int], bytes]:
        def read_raw(offset: int, length: int) -> bytes:
            rows = self.catalog.fetch(
                "SELECT substring(data FROM %s FOR %s) FROM blobs WHERE sha256 = %s", (offset + 1, length, sha256),
                primary=primary,
            )
            return bytes(rows[0][0]) if rows else b""

        return read_raw

    def _part_reader(self, upload: int, size: int, primary: bool) -> Callable[[int, int], bytes]:
        def read_raw(offset: int, length: int) -> bytes:
            if length <= 0:
                return b""
            first, last = offset // size, (offset + length - 1) // size
            rows = self.catalog.fetch(
                "SELECT n, data FROM blob_parts WHERE upload = %s AND n BETWEEN %s AND %s ORDER BY n",
                (upload, first, last), primary=primary,
            )
            joined = bytearray()
            expected = first
            for n, data in rows:
                if int(n) != expected:
                    break  # a missing part: the read comes back short
                joined += data
                expected += 1
            start = offset - first * size
            return bytes(joined[start : start + length])

        return read_raw

    def names(self) -> Iterator[str]:
        """Every blob's name in ascending order, a page at a time (every blob here is a row of ``blobs``)."""
        return inline_names(self.catalog)

    # --- removing ------------------------------------------------------------------
    def delete(self, sha256: str) -> bool:
        for (upload,) in self.catalog.query("DELETE FROM blobs WHERE sha256 = ? RETURNING upload", (sha256,)):
            if upload is not None:  # its parts go with it
                self.catalog.query("DELETE FROM blob_uploads WHERE id = ?", (upload,))
        return True

    def remove_unreferenced(self, older_than: float) -> list[str]:
        """Delete blobs no name holds and uploads no blob names, older than ``older_than`` seconds.

        An upload a deposit in progress is about to name is locked by it
        (``FOR SHARE`` in its catalog transaction) once it commits to it; one
        removed before that makes the deposit fail cleanly, never lose bytes.
        """
        cutoff = (datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=older_than)).strftime(
            "%Y-%m-%dT%H:%M:%S.%fZ"
        )
        with self.catalog.removing(older_than):
            old = {str(r[0]) for r in self.catalog.query(
                "SELECT sha256 FROM blobs WHERE upload IS NULL OR upload IN (SELECT id FROM blob_uploads WHERE started_at < ?)",
                (cutoff,),
            )}
            free = sorted(old - self.catalog.held(old))
            for sha256 in free:
                self.delete(sha256)
            uploads = self.catalog.query(
                "DELETE FROM blob_uploads u WHERE started_at < ?"
                " AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.upload = u.id) RETURNING id",
                (cutoff,),
            )
        return free + [f"upload/{r[0]}" for r in uploads]

    def close(self) -> None:
        with self._upload_lock:
            if self._uploads is not None:
                self._uploads.close()
                self._uploads = None


def _put_part(conn: psycopg.Connection[Any], upload: int, n: int, data: bytes) -> None:
    conn.execute("INSERT INTO blob_parts (upload, n, data) VALUES (%s, %s, %s)", (upload, n, psycopg.Binary(data)))


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Upload:
    """A blob uploaded to ``blob_uploads``/``blob_parts``, not yet (or not newly) named in ``blobs``."""

    def __init__(self, store: LargeObjects, upload: int, info: BlobInfo) -> None:
        self.store = store
        self.upload = upload
        self.info = info
        self._done = False

    def secure(self) -> None:
        return None  # record() locks the upload inside the catalog transaction

    def close(self) -> None:
        # named by the deposit: kept; the same bytes stored already: this copy goes
        if not self._done:
            self._done = True
            self.store._drop_upload(self.upload)

    def discard(self) -> None:
        self.close()
