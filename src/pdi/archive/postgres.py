"""The team catalog: PostgreSQL, through psycopg 3.

Selected by a ``postgresql://`` (or ``postgres://``) URL. The database must
exist; ``pdi init URL`` creates the tables in it. It holds a blob store: by
default the blobs in its own database (:mod:`pdi.archive.blobs.large_objects`),
or an S3-compatible store recorded at ``pdi init``. Daily
serials come from a counter row updated inside the deposit's transaction
(``INSERT … ON CONFLICT DO UPDATE … RETURNING``): concurrent minters queue on
that row, and a rolled-back deposit gives its serial back.
"""

from __future__ import annotations

import datetime
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from pdi._extras import missing_extra

try:
    import psycopg
    import psycopg.conninfo
    import psycopg.errors
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # pdi installed without its postgres extra
    missing_extra("postgres", exc)

from pdi.archive.blobs.large_objects import LargeObjects
from pdi.archive.blobs.large_objects import oneline as _oneline
from pdi.archive.blobs.seam import BlobStore
from pdi.archive.catalog import SearchAccess, SQLStore, search_page
from pdi.archive.catalog.base import timestamp
from pdi.archive.catalog.documents import COUNT_A_DAY, minted_already
from pdi.archive.catalog.opening import DEFAULT_CONNECTIONS
from pdi.archive.catalog.search_index import NEW_SOURCE
from pdi.archive.store import SCHEMA_VERSION, DocumentKey, SearchKey
from pdi.errors import ImmutabilityError, LimitError, NotFoundError, PDIError, StoreError
from pdi.passages.fulltext import MARK_END, MARK_START

# Any fixed number: the advisory lock that serializes schema migrations.
_MIGRATION_LOCK = 0x0A5C1E
#: How long a transaction waits for a free connection before it is refused (StoreError, 503).
POOL_WAIT_SECONDS = 30.0

#: A source of at most this many passages is written with them in one statement (:meth:`PostgresStore._index_source`).
_PASSAGES_AT_ONCE = 256

# The removal lock: an advisory lock between what deletes blobs (exclusive) and deposits naming them (shared).
_REMOVAL_LOCK = 0x0B10B6

#: A transaction's first and last statements, sent with others (:meth:`PostgresStore._transaction`).
_BEGIN: tuple[str, tuple[Any, ...]] = ("BEGIN", ())
_COMMIT: tuple[str, tuple[Any, ...]] = ("COMMIT", ())
#: A ``%b`` placeholder (not the ``b`` after an escaped ``%%``).
_BINARY_PLACEHOLDER = re.compile(r"(?<!%)%b")


def _connect_once(url: str, wait: float) -> None:
    """One connection, made and closed: a server that refuses, a database that does not exist or a refused
    password is said at once (psycopg.Error), not after the pool has tried again for ``wait`` seconds.

    A server that does not answer at all is given ``wait`` seconds (libpq's ``connect_timeout``, unless
    the URL sets its own).
    """
    if "connect_timeout" not in psycopg.conninfo.conninfo_to_dict(url):
        url = psycopg.conninfo.make_conninfo(url, connect_timeout=max(1, round(wait)))
    psycopg.connect(url, autocommit=True).close()


def redact_url(url: str) -> str:
    """``url`` with any password in it written ``***``."""
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
    """A PostgreSQL database holding the catalog (and, by default, the blobs: :mod:`pdi.archive.blobs.large_objects`)."""

    dialect = "postgresql"
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

    def __init__(
        self, url: str, *, connections: int = DEFAULT_CONNECTIONS, wait: float = POOL_WAIT_SECONDS,
        blobs: BlobStore | None = None,
    ) -> None:
        if connections < 1:
            raise LimitError("a pool needs at least one connection")
        self.location = redact_url(url)
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
            _connect_once(url, wait)
            self._pool.open(wait=True, timeout=wait)
        except (psycopg.Error, PoolTimeout) as exc:
            self._pool.close()
            raise StoreError(f"cannot connect to {self.location}: {_oneline(exc)}") from exc
        self._local = threading.local()  # the connection of this thread's transaction, and its depth
        try:
            self.hold(blobs if blobs is not None else LargeObjects(url))
        except BaseException:
            self._pool.close()
            raise

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

    def pool_waits(self) -> tuple[int, float]:
        # psycopg_pool's counters since they were last popped: requests queued for want of a free connection
        stats = self._pool.pop_stats()
        return int(stats.get("requests_queued", 0)), stats.get("requests_wait_ms", 0) / 1000

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            with self._connection() as conn:
                deferred = self._deferred()
                cursor: psycopg.Cursor[Any]
                if deferred:  # sent with the statements deferred before it: one round trip for all
                    cursor = _batch(conn, [*deferred, (sql.replace("?", "%s"), tuple(params))])
                else:
                    cursor = conn.execute(sql.replace("?", "%s"), tuple(params))
                if cursor.description is None:
                    return []
                return list(cursor.fetchall())
        except psycopg.errors.UniqueViolation as exc:
            raise ImmutabilityError(f"already in the archive: {exc.diag.message_detail}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: {_oneline(exc)}") from exc

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        # inside a transaction, kept until the next statement waited for (or the commit) and sent with it
        local = self._local
        if getattr(local, "conn", None) is None:
            self._query(sql, params)
            return
        local.deferred.append((sql.replace("?", "%s"), tuple(params)))

    def _deferred(self) -> list[tuple[str, tuple[Any, ...]]]:
        """The statements :meth:`_execute` kept in this thread's transaction (its ``BEGIN`` first, until sent),
        taken (to be sent now)."""
        local = self._local
        deferred: list[tuple[str, tuple[Any, ...]]] = getattr(local, "deferred", None) or []
        if deferred:
            local.deferred = []
            local.begun = True
        return deferred

    def _flush(self, conn: psycopg.Connection[Any], *then: tuple[str, tuple[Any, ...]]) -> None:
        """Send what :meth:`_execute` kept, and ``then`` (in one round trip), its errors as :meth:`_query`'s."""
        statements = [*self._deferred(), *then]
        if not statements:
            return
        try:
            _batch(conn, statements)
        except psycopg.errors.UniqueViolation as exc:
            raise ImmutabilityError(f"already in the archive: {exc.diag.message_detail}") from exc

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[None]:
        # Each thread's transaction on a connection of its own from the pool (not one
        # connection for all behind a lock): readers never wait for each other, and
        # writers queue in the database, on the rows they update (the serial counter,
        # FOR UPDATE) and on advisory locks. A transaction opened inside another joins it.
        # Its BEGIN is sent with its first statement waited for, and its COMMIT with the
        # statements kept after the last one: a deposit of a small blob is two round trips.
        local = self._local
        if getattr(local, "conn", None) is not None:
            local.depth += 1
            try:
                yield
            finally:
                local.depth -= 1
            return
        with self._connection() as conn:
            local.conn, local.depth, local.deferred, local.begun = conn, 1, [_BEGIN], False
            try:
                try:
                    yield
                    if local.begun or local.deferred != [_BEGIN]:  # something was (or is to be) sent
                        self._flush(conn, _COMMIT)
                except BaseException:
                    self._roll_back(conn)
                    raise
            except psycopg.Error as exc:
                raise StoreError(f"{self.location}: {_oneline(exc)}") from exc
            finally:
                local.conn, local.depth, local.deferred, local.begun = None, 0, [], False

    def _roll_back(self, conn: psycopg.Connection[Any]) -> None:
        """End this thread's transaction without its changes, if its BEGIN was sent (nothing kept is sent)."""
        local = self._local
        local.deferred = []
        if not local.begun or conn.closed:
            return
        try:
            conn.execute("ROLLBACK")  # after a COMMIT that failed, none is open: PostgreSQL only warns
        except psycopg.Error:  # the connection is broken: the pool discards it, and the server rolls back
            pass

    def fetch(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """One statement (``%s`` placeholders) with binary results: a bytea in text would arrive hex-encoded, twice the size."""
        try:
            with self._connection() as conn:
                self._flush(conn)
                cursor = conn.cursor(binary=True)
                cursor.execute(sql, params)
                return list(cursor.fetchall())
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: {_oneline(exc)}") from exc

    def _removal_lock(self, *, shared: bool, wait: bool = True) -> None:
        # writers are not serialized as SQLite's are: deposits (shared) and removers queue on an advisory lock
        function = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
        # waited for when the blob store checks its blobs under it, perhaps elsewhere (S3); otherwise sent with
        # what follows it (statements run in order: it is held before them, till the commit)
        (self._query if wait else self._execute)(f"SELECT {function}(?)", (_REMOVAL_LOCK,))

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

    def _insert_version_one(
        self, series: str, day: datetime.date, unique_id: str | None, at: str, embargo_until: str | None
    ) -> tuple[int, str]:
        # one round trip: the serial (or the foreign id), the document, its day's count and its version 1
        if unique_id is None:
            taken = ("INSERT INTO daily_serials (series, day, last) VALUES (?, ?, 1) ON CONFLICT (series, day)"
                     " DO UPDATE SET last = daily_serials.last + 1 RETURNING last::text AS uid, last AS serial")
            params: list[Any] = [series, day.isoformat()]
        else:
            taken, params = "SELECT ?::text AS uid, NULL::integer AS serial", [unique_id]
        rows = self._query(
            f"WITH s AS ({taken}),"
            " d AS (INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)"
            " SELECT ?, ?, ?, ?, ?, s.uid, s.serial, ? FROM s"
            " ON CONFLICT (series, day, unique_id) DO NOTHING RETURNING id),"
            " n AS (INSERT INTO document_days (series, day, documents, last_deposit) SELECT ?, ?, 1, ? FROM d"
            f"{COUNT_A_DAY}),"
            " v AS (INSERT INTO versions (document, version, created_at, embargo_until) SELECT id, 1, ?, ? FROM d)"
            " SELECT (SELECT id FROM d), (SELECT uid FROM s)",
            [*params, series, day.isoformat(), day.year, day.month, day.day, at,
             series, day.isoformat(), at, at, embargo_until],
        )
        doc, uid = rows[0]
        if doc is None:
            raise minted_already(DocumentKey(series, day, str(uid)))
        return int(doc), str(uid)

    # --- the full-text index ---------------------------------------------------------
    def _index_source(self, sha256: str, media_type: str, charset: str | None, passages: Any) -> None:
        # a small text's few passages: the source and its passages in one statement sent with the next one
        # waited for (not a round trip of its own to learn whether the source is new)
        if passages.count > _PASSAGES_AT_ONCE:
            super()._index_source(sha256, media_type, charset, passages)
            return
        rows = [(p.start, p.text, p.encoded_runs()) for p in passages]
        source = (sha256, media_type, charset or "")
        self._execute(
            f"WITH s AS ({NEW_SOURCE} RETURNING 1)"
            " INSERT INTO search_passages (sha256, media_type, charset, start, body, runs)"
            " SELECT ?, ?, ?, k.start, k.body, k.runs FROM unnest(?::bigint[], ?::text[], ?::bytea[]) AS k(start, body, runs)"
            " WHERE EXISTS (SELECT 1 FROM s)",
            (*source, passages.count, passages.note, timestamp(), *source,
             [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]),
        )

    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if len(rows) == 1:  # one statement, not a pipeline for one row (a small text's one passage)
            self._execute(sql, rows[0])
            return
        try:
            with self._connection() as conn, conn.cursor() as cursor:
                self._flush(conn)
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
        match = (
            "SELECT p.id AS pid, (-ts_rank(p.tsv, q.q))::float8 AS score"
            f" FROM search_passages p, (SELECT {query} AS q) q WHERE p.tsv @@ q.q"
        )
        return self._query(*search_page(match, params, series, access, after, limit))

    def _highlight(self, passage: int, phrases: Sequence[Sequence[str]]) -> str | None:
        query, params = self._tsquery(phrases)
        rows = self._query(
            "SELECT ts_headline('english'::regconfig, p.body, q.q, ?)"
            f" FROM search_passages p, (SELECT {query} AS q) q WHERE p.id = ? AND p.tsv @@ q.q",
            [f"StartSel={MARK_START}, StopSel={MARK_END}, HighlightAll=true", *params, passage],
        )
        return str(rows[0][0]) if rows else None

    def close(self) -> None:
        self.blobs.close()
        self._pool.close()


def open_postgres(url: str, *, create: bool, connections: int = 0, blobs: BlobStore | None = None,
                  migrate: bool = True) -> PostgresStore:
    """Connect to an archive database (with ``create``, make its tables) and migrate forward.

    ``connections`` sizes the pool of catalog connections (0: :data:`DEFAULT_CONNECTIONS`).
    ``migrate=False``: leave an older schema as it is, but still refuse one newer than this pdi knows.
    """
    store = PostgresStore(url, connections=connections or DEFAULT_CONNECTIONS, blobs=blobs)
    try:
        if not create and store.schema_version() == 0:
            raise NotFoundError(
                f"no archive in {store.location} (no pdi tables); create one with pdi init"
            )
        if migrate:
            store.migrate()
        else:
            store.refuse_newer_schema()
    except PDIError:
        store.close()
        raise
    return store


def _batch(conn: psycopg.Connection[Any], statements: Sequence[tuple[str, tuple[Any, ...]]]) -> psycopg.Cursor[Any]:
    """Run ``statements`` (``%s`` placeholders) in one round trip; a cursor on the last one's result.

    They are sent as one simple-protocol query, their parameters bound by
    psycopg on the client (``ClientCursor``): the server runs them in order
    and answers once. Not as a pipeline of extended-protocol messages: through
    a pooler in transaction mode (pgbouncer before 1.21, as Debian 12 ships)
    a pipeline can lose its answer, and the request waits for ever. A
    statement's binary parameters (``%b``) are bound as text here.
    """
    if len(statements) == 1:
        return conn.execute(*statements[0])
    cursor = psycopg.ClientCursor(conn)
    cursor.execute(
        "; ".join(_BINARY_PLACEHOLDER.sub("%s", sql) for sql, _ in statements),
        [value for _, params in statements for value in params],
    )
    while cursor.nextset():  # the last statement's rows, if any
        pass
    return cursor
