"""The team store: catalog and blobs in PostgreSQL, through psycopg 3.

Selected by a ``postgresql://`` (or ``postgres://``) URL. The database must
exist; ``pdi init URL`` creates the tables in it. A blob is uploaded in rows
of 1 MiB (``blob_parts``, one per chunk digest), in its own transaction on a
second connection *before* the deposit's short catalog transaction, which
then names the upload in ``blobs`` (by SHA-256): no size limit, no deposit
waiting behind another's upload, and no file system involved. (Blobs of
archives made before schema 4 stay as one ``bytea`` in ``blobs.data``.) Daily
serials come from a counter row updated inside the deposit's transaction
(``INSERT … ON CONFLICT DO UPDATE … RETURNING``): concurrent minters queue on
that row, and a rolled-back deposit gives its serial back.
"""

from __future__ import annotations

import datetime
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
import psycopg.errors
from psycopg_pool import ConnectionPool, PoolTimeout

from pdi.archive.blobs import CHUNK_SIZE, BlobInfo, ChunkedReader, Digests, Octets, pieces
from pdi.archive.sql import REP_COLUMNS, SearchAccess, SQLStore, _now, search_page
from pdi.archive.store import SCHEMA_VERSION, BlobObserver, SearchKey, StagedBlob
from pdi.errors import ImmutabilityError, LimitError, NotFoundError, PDIError, StoreError
from pdi.passages.fulltext import MARK_END, MARK_START

# Any fixed number: the advisory lock that serializes schema migrations.
_MIGRATION_LOCK = 0x0A5C1E
#: Catalog connections a store keeps at most (pdi serve --db-connections): a command needs one;
#: a resolver worker's threads each hold one for a transaction, and wait for one when all are taken.
DEFAULT_CONNECTIONS = 4
#: How long a transaction waits for a free connection before it is refused (StoreError, 503).
POOL_WAIT_SECONDS = 30.0

# The advisory lock between a purge deleting blobs (exclusive) and deposits naming them (shared).
_PURGE_LOCK = 0x0B10B6


def is_postgres_url(location: str) -> bool:
    """Whether a location names a PostgreSQL database rather than a directory."""
    return location.startswith(("postgresql://", "postgres://"))


def _oneline(exc: BaseException) -> str:
    # psycopg's messages span lines (a hint on the next one); the CLI prints one line.
    return " ".join(str(exc).split())


def _redact(url: str) -> str:
    # Never print a password written into the URL: in its userinfo, or as
    # libpq's password= query parameter.
    url = _PASSWORD_PARAMETER.sub(r"\1***", url)
    head, sep, tail = url.partition("@")
    if not sep or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, user = head.partition("//")
    return f"{scheme}//{user.split(':', 1)[0]}:***@{tail}"


_PASSWORD_PARAMETER = re.compile(r"([?&]password=)[^&]*", re.IGNORECASE)


class PostgresStore(SQLStore):
    """A PostgreSQL database holding the catalog and the blobs."""

    id_pk = "BIGSERIAL PRIMARY KEY"
    blob_type = "BYTEA"
    blob_table = True
    for_update = " FOR UPDATE"

    # The full-text index (schema step 5): each passage's tsvector in the English
    # configuration (lower case, stop words left out, Snowball stems), kept by
    # PostgreSQL itself beside the text and found through a GIN index.
    search_schema = (
        "ALTER TABLE search_passages ADD COLUMN tsv tsvector"
        " GENERATED ALWAYS AS (to_tsvector('english'::regconfig, body)) STORED",
        "CREATE INDEX search_passages_tsv ON search_passages USING GIN (tsv)",
    )

    def __init__(self, url: str, *, connections: int = DEFAULT_CONNECTIONS, wait: float = POOL_WAIT_SECONDS) -> None:
        if connections < 1:
            raise LimitError("a pool needs at least one connection")
        self.location = _redact(url)
        self._url = url
        self.connections = connections
        # No server-side prepared statements (psycopg prepares a query run 5 times):
        # through pgbouncer in transaction mode the next transaction may run on
        # another server connection, where the statement does not exist. Nor any
        # session state: each transaction may run on another pooled connection.
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url, min_size=1, max_size=connections, timeout=wait, open=False,
            kwargs={"autocommit": True, "prepare_threshold": None}, name="pdi-catalog",
        )
        try:
            self._pool.open(wait=True, timeout=wait)
        except (psycopg.Error, PoolTimeout) as exc:
            self._pool.close()
            raise StoreError(f"cannot connect to {self.location}: {_oneline(exc)}") from exc
        self._local = threading.local()  # the connection of this thread's transaction, and its depth
        self._uploads: psycopg.Connection[Any] | None = None
        self._upload_lock = threading.Lock()

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """This thread's transaction's connection, or one from the pool for one statement."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        try:
            with self._pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise StoreError(
                f"{self.location}: no catalog connection free within {self._pool.timeout:g} s"
                f" ({self.connections} in the pool)"
            ) from exc

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            with self._connection() as conn:
                cursor = conn.execute(sql.replace("?", "%s"), tuple(params))
                if cursor.description is None:
                    return []
                return list(cursor.fetchall())
        except psycopg.errors.UniqueViolation as exc:
            raise ImmutabilityError(f"already in the archive: {exc.diag.message_detail}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: {_oneline(exc)}") from exc

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[None]:
        # Each thread's transaction on a connection of its own from the pool (not one
        # connection for all behind a lock): readers never wait for each other, and
        # writers queue in the database, on the rows they update (the serial counter,
        # FOR UPDATE) and on advisory locks. A transaction opened inside another joins it.
        local = self._local
        if getattr(local, "conn", None) is not None:
            local.depth += 1
            try:
                yield
            finally:
                local.depth -= 1
            return
        with self._connection() as conn:
            local.conn, local.depth = conn, 1
            try:
                with conn.transaction():
                    yield
            except psycopg.Error as exc:
                raise StoreError(f"{self.location}: {_oneline(exc)}") from exc
            finally:
                local.conn, local.depth = None, 0

    @contextmanager
    def _outermost(self, write: bool) -> Iterator[None]:  # pragma: no cover - _transaction does it all
        with self._transaction(write):
            yield

    def _lock_idempotency(self, token: int, key: str) -> None:
        # writers are not serialized as SQLite's are: two retries with one key queue here
        self._query("SELECT pg_advisory_xact_lock(?::int, hashtext(?))", (token, key))

    def _has_table(self, name: str) -> bool:
        rows = self._query("SELECT to_regclass(?)", (name,))
        return rows[0][0] is not None

    def migrate(self, target: int = SCHEMA_VERSION) -> int:
        with self._write():
            self._query("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
            return super().migrate(target)

    def _rows(self, types: Sequence[str], rows: Sequence[Sequence[Any]]) -> tuple[str, list[Any]]:
        # An array a column, whatever the number of rows: a statement of a few parameters
        # for psycopg to bind, not thousands to find in its text; bound in binary (%b),
        # so no element is quoted and escaped as text.
        columns = ", ".join(f"column{n}" for n in range(1, len(types) + 1))
        arrays = ", ".join(f"%b::{kind}[]" for kind in types)
        return f"unnest({arrays}) AS k({columns})", [list(column) for column in zip(*rows, strict=True)]

    # --- the full-text index ---------------------------------------------------------
    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        try:
            with self._connection() as conn, conn.cursor() as cursor:
                cursor.executemany(sql.replace("?", "%s"), rows)
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: {_oneline(exc)}") from exc

    def _delete_passages(self, sources: Sequence[tuple[str, str, str]] | None) -> None:
        if sources is None:
            self._query("DELETE FROM search_passages")
            return
        for source in sources:
            self._query(
                "DELETE FROM search_passages WHERE sha256 = ? AND media_type = ? AND charset = ?", source
            )

    @staticmethod
    def _tsquery(phrases: Sequence[Sequence[str]]) -> tuple[str, list[Any]]:
        """A tsquery matching every phrase, each one a parameter of ``phraseto_tsquery`` (never query syntax)."""
        return (
            " && ".join("phraseto_tsquery('english'::regconfig, ?)" for _ in phrases),
            [" ".join(phrase) for phrase in phrases],
        )

    def _search_page(
        self, phrases: Sequence[Sequence[str]], series: str | None, limit: int, after: SearchKey | None,
        access: SearchAccess | None = None,
    ) -> list[tuple[Any, ...]]:
        query, params = self._tsquery(phrases)
        sql = (
            f"SELECT {REP_COLUMNS}, d.id, p.id, p.start, p.runs, s.score FROM"
            " (SELECT p.id AS pid, (-ts_rank(p.tsv, q.q))::float8 AS score"
            f" FROM search_passages p, (SELECT {query} AS q) q WHERE p.tsv @@ q.q) s"
            " JOIN search_passages p ON p.id = s.pid"
            " JOIN representations r ON r.sha256 = p.sha256 AND r.media_type = p.media_type"
            " AND COALESCE(r.charset, '') = p.charset"
            " JOIN documents d ON d.id = r.document"
            # a withdrawn name is out of service: its text is not found (the same bytes under another name still are)
            " WHERE NOT EXISTS (SELECT 1 FROM withdrawals w WHERE w.document = d.id"
            " AND (w.version IS NULL OR w.version = r.version))"
        )
        return self._query(*search_page(sql, params, series, access, after, limit))

    def _highlight(self, passage: int, phrases: Sequence[Sequence[str]]) -> str | None:
        query, params = self._tsquery(phrases)
        rows = self._query(
            "SELECT ts_headline('english'::regconfig, p.body, q.q, ?)"
            f" FROM search_passages p, (SELECT {query} AS q) q WHERE p.id = ? AND p.tsv @@ q.q",
            [f"StartSel={MARK_START}, StopSel={MARK_END}, HighlightAll=true", *params, passage],
        )
        return str(rows[0][0]) if rows else None

    # --- blobs -------------------------------------------------------------------
    # A blob is uploaded in rows of one chunk each (blob_parts), in its own
    # transaction on a second connection, before the short catalog transaction
    # that takes the serial: a small deposit never waits behind a large one, and
    # there is no size limit (bytea holds under 1 GiB; a row here holds 1 MiB).
    # The catalog transaction then names the upload in ``blobs``; an upload no
    # blob names (a failed deposit, or the same bytes stored already) is deleted.

    def _blob_connection(self) -> psycopg.Connection[Any]:
        if self._uploads is None:
            try:
                self._uploads = psycopg.connect(self._url, autocommit=True, prepare_threshold=None)
            except psycopg.Error as exc:
                raise StoreError(f"cannot connect to {self.location}: {_oneline(exc)}") from exc
        return self._uploads

    def stage_blob(self, source: Octets, observe: BlobObserver | None = None) -> _Upload:
        with self._upload_lock:
            conn = self._blob_connection()
            digests = Digests()
            try:
                with conn.transaction():
                    upload = int(conn.execute(
                        "INSERT INTO blob_uploads (started_at) VALUES (%s) RETURNING id", (_now(),)
                    ).fetchone()[0])  # type: ignore[index]
                    n = 0
                    pending = bytearray()
                    for piece in pieces(source):
                        digests.update(piece)
                        if observe is not None:
                            observe.update(piece)
                        pending += piece
                        while len(pending) >= CHUNK_SIZE:
                            self._put_part(conn, upload, n, bytes(pending[:CHUNK_SIZE]))
                            del pending[:CHUNK_SIZE]
                            n += 1
                    if pending:
                        self._put_part(conn, upload, n, bytes(pending))
                    info = digests.finish()
                    if observe is not None:
                        observe.finish(info)
                    conn.execute(
                        "UPDATE blob_uploads SET sha256 = %s WHERE id = %s", (info.sha256, upload)
                    )
            except psycopg.Error as exc:
                raise StoreError(f"{self.location}: cannot store a blob: {_oneline(exc)}") from exc
        return _Upload(self, upload, info)

    @staticmethod
    def _put_part(conn: psycopg.Connection[Any], upload: int, n: int, data: bytes) -> None:
        conn.execute(
            "INSERT INTO blob_parts (upload, n, data) VALUES (%s, %s, %s)",
            (upload, n, psycopg.Binary(data)),
        )

    def _store_blob(self, blob: StagedBlob) -> None:
        super()._store_blob(blob)
        if not isinstance(blob, _Upload):  # pragma: no cover - a store bug
            raise StoreError("a PostgreSQL deposit staged its blob elsewhere")
        # A purge deleting these octets (delete_purged_blobs) either committed before
        # (the row is inserted again, from this upload) or waits for this commit.
        self._query("SELECT pg_advisory_xact_lock_shared(?)", (_PURGE_LOCK,))
        # The upload must still be there (a remover may not take it while we hold it).
        if not self._query("SELECT 1 FROM blob_uploads WHERE id = ? FOR SHARE", (blob.upload,)):
            raise StoreError(f"{self.location}: the upload of blob {blob.info.sha256} was removed before its deposit")
        self._query(
            "INSERT INTO blobs (sha256, upload) VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING",
            (blob.info.sha256, blob.upload),
        )

    def _store_blobs(self, blobs: Sequence[StagedBlob]) -> None:
        # _store_blob for a page of an import's blobs in four statements, not four a blob.
        if not blobs:
            return
        uploads: list[_Upload] = []
        for blob in blobs:
            if not isinstance(blob, _Upload):  # pragma: no cover - a store bug
                raise StoreError("a PostgreSQL import staged its blobs elsewhere")
            uploads.append(blob)
        self._insert_rows(
            "INSERT INTO blob_fixity (sha256, size, chunk_size, chunks, created_at)",
            ("text", "bigint", "int", "bytea", "text"),
            [(u.info.sha256, u.info.size, u.info.chunk_size, u.info.chunks, _now()) for u in uploads],
            " ON CONFLICT (sha256) DO NOTHING",
        )
        self._query("SELECT pg_advisory_xact_lock_shared(?)", (_PURGE_LOCK,))
        held = {int(r[0]) for r in self._query(
            "SELECT id FROM blob_uploads WHERE id = ANY(?) FOR SHARE", ([u.upload for u in uploads],)
        )}
        for u in uploads:
            if u.upload not in held:
                raise StoreError(f"{self.location}: the upload of blob {u.info.sha256} was removed before its deposit")
        self._insert_rows(
            "INSERT INTO blobs (sha256, upload)", ("text", "bigint"),
            [(u.info.sha256, u.upload) for u in uploads], " ON CONFLICT (sha256) DO NOTHING",
        )

    def _purge_lock(self) -> None:
        self._query("SELECT pg_advisory_xact_lock(?)", (_PURGE_LOCK,))

    def _delete_blob(self, sha256: str) -> bool:
        for (upload,) in self._query("DELETE FROM blobs WHERE sha256 = ? RETURNING upload", (sha256,)):
            if upload is not None:  # its parts go with it
                self._query("DELETE FROM blob_uploads WHERE id = ?", (upload,))
        return True

    def _drop_upload(self, upload: int) -> None:
        """Delete an upload no blob names (its parts go with it)."""
        with self._upload_lock:
            conn = self._blob_connection()
            try:
                conn.execute(
                    "DELETE FROM blob_uploads u WHERE id = %s"
                    " AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.upload = u.id)",
                    (upload,),
                )
            except psycopg.Error as exc:
                raise StoreError(f"{self.location}: {_oneline(exc)}") from exc

    def open_blob(self, sha256: str, *, name: str) -> ChunkedReader | None:
        info = self.blob_info(sha256)
        with self._read():
            rows = self._query(
                "SELECT upload, data IS NOT NULL, octet_length(data) FROM blobs WHERE sha256 = ?",
                (sha256,),
            )
        if not rows:
            return None
        upload, legacy, legacy_size = rows[0]
        if info is None:
            info = BlobInfo(sha256, int(legacy_size or 0))
        if legacy:
            return ChunkedReader(info, self._legacy_reader(sha256), name=name)
        return ChunkedReader(info, self._part_reader(int(upload), info.chunk_size), name=name)

    def _fetch(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        # Binary results: a bytea in text format would arrive hex-encoded, twice the size.
        try:
            with self._connection() as conn:
                cursor = conn.cursor(binary=True)
                cursor.execute(sql, params)
                return list(cursor.fetchall())
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: {_oneline(exc)}") from exc

    def _legacy_reader(self, sha256: str) -> Callable[[int, int], bytes]:
        def read_raw(offset: int, length: int) -> bytes:
            rows = self._fetch(
                "SELECT substring(data FROM %s FOR %s) FROM blobs WHERE sha256 = %s",
                (offset + 1, length, sha256),
            )
            return bytes(rows[0][0]) if rows else b""

        return read_raw

    def _part_reader(self, upload: int, size: int) -> Callable[[int, int], bytes]:
        def read_raw(offset: int, length: int) -> bytes:
            if length <= 0:
                return b""
            first, last = offset // size, (offset + length - 1) // size
            rows = self._fetch(
                "SELECT n, data FROM blob_parts WHERE upload = %s AND n BETWEEN %s AND %s ORDER BY n",
                (upload, first, last),
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

    def blob_names(self) -> set[str]:
        with self._read():
            return {str(r[0]) for r in self._query("SELECT sha256 FROM blobs")}

    def iter_blob_names(self, *, page: int = 5000) -> Iterator[str]:
        """Every blob's name in ascending order, a page at a time (keyset on the primary key)."""
        after: str | None = None
        while True:
            with self._read():
                if after is None:
                    rows = self._query("SELECT sha256 FROM blobs ORDER BY sha256 LIMIT ?", (page,))
                else:
                    rows = self._query(
                        "SELECT sha256 FROM blobs WHERE sha256 > ? ORDER BY sha256 LIMIT ?", (after, page)
                    )
            for (name,) in rows:
                yield str(name)
            if len(rows) < page:
                return
            after = str(rows[-1][0])

    def remove_unreferenced(self, older_than: float) -> list[str]:
        """Delete blobs no name holds and uploads no blob names, older than ``older_than`` seconds.

        An upload a deposit in progress is about to name is locked by it
        (``FOR SHARE`` in its catalog transaction) once it commits to it; one
        removed before that makes the deposit fail cleanly, never lose bytes.
        """
        cutoff = (
            datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=older_than)
        ).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        with self._write():
            blobs = self._query(
                "DELETE FROM blobs b WHERE NOT EXISTS"
                " (SELECT 1 FROM representations r WHERE r.sha256 = b.sha256 AND r.purged IS NULL)"
                " AND (b.upload IS NULL OR b.upload IN (SELECT id FROM blob_uploads WHERE started_at < ?))"
                " RETURNING sha256",
                (cutoff,),
            )
            uploads = self._query(
                "DELETE FROM blob_uploads u WHERE started_at < ?"
                " AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.upload = u.id) RETURNING id",
                (cutoff,),
            )
        return sorted(str(r[0]) for r in blobs) + [f"upload/{r[0]}" for r in uploads]

    def close(self) -> None:
        with self._upload_lock:
            if self._uploads is not None:
                self._uploads.close()
                self._uploads = None
        self._pool.close()


class _Upload:
    """A blob uploaded to ``blob_uploads``/``blob_parts``, not yet (or not newly) named in ``blobs``."""

    def __init__(self, store: PostgresStore, upload: int, info: BlobInfo) -> None:
        self.store = store
        self.upload = upload
        self.info = info
        self._done = False

    def secure(self) -> None:
        return None  # _store_blob locks the upload inside the catalog transaction

    def close(self) -> None:
        # named by the deposit: kept; the same bytes stored already: this copy goes
        if not self._done:
            self._done = True
            self.store._drop_upload(self.upload)

    def discard(self) -> None:
        self.close()


def open_postgres(url: str, *, create: bool, connections: int = 0) -> PostgresStore:
    """Connect to an archive database (with ``create``, make its tables) and migrate forward.

    ``connections`` sizes the pool of catalog connections (0: :data:`DEFAULT_CONNECTIONS`).
    """
    store = PostgresStore(url, connections=connections or DEFAULT_CONNECTIONS)
    try:
        if not create and store.schema_version() == 0:
            raise NotFoundError(
                f"no archive in {store.location} (no pdi tables); create one with pdi init"
            )
        store.migrate()
    except PDIError:
        store.close()
        raise
    return store
