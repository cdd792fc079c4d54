"""The team catalog: PostgreSQL, through psycopg 3.

Selected by a ``postgresql://`` (or ``postgres://``) URL. The database must
exist; ``pdi init URL`` creates the tables in it. It holds a blob store: by
default the blobs in its own database (:mod:`pdi.archive.blobs.large_objects`),
or an S3-compatible store recorded at ``pdi init``. Daily
serials come from a counter row updated inside the deposit's transaction
(``INSERT … ON CONFLICT DO UPDATE … RETURNING``): concurrent minters queue on
that row, and a rolled-back deposit gives its serial back. A deposit with a
new serial whose blobs are in hand (at most 64 KiB each) and whose passages
are few is one round trip: one statement sent outside any transaction, which
PostgreSQL commits before it answers (:meth:`PostgresStore.mint`; one format
by the function of schema 14, :data:`DEPOSIT_ONE`, whose plans the server
keeps; more by data-modifying ``WITH`` queries, :func:`_at_once`).

Beyond one server (``pdi serve --read-url``): reads may go to a streaming
replica while everything that writes goes to the primary the archive's URL
names (:class:`_Servers`: one pool each). What goes where is decided here,
not by the callers: a write transaction and any statement outside a
transaction go to the primary; a read transaction (``_read``, ``reading``,
an archive's snapshot) and a blob's parts read (:meth:`PostgresStore.fetch`)
go to the replica, but

* to the primary while the replica has not replayed this process's last
  commit (its LSN, asked with the ``COMMIT``, against the replica's
  ``pg_last_wal_replay_lsn()``): what a process wrote it reads back at once;
* to the primary for the rest of a read that found no document on the
  replica (:meth:`PostgresStore._ask_primary`): a name another resolver has
  just minted is found there, not answered 404; and if the primary has it,
  this process's reads stay there until the replica has replayed as far as
  the primary was then;
* to the primary while the replica does not answer.

A server that stops answering (a broken connection) is asked again at most
once a second; until it answers, transactions on it are refused at once
(:class:`~pdi.errors.StoreError`, 503) rather than waiting for the pool; when
it answers, a fresh pool is made. With a URL naming several hosts
(``host=a,b&target_session_attrs=read-write``) that is how the resolvers
follow a failover. docs/how-to/postgresql.md says which settings keep every
acknowledged deposit (``synchronous_commit``, ``synchronous_standby_names``).
"""

from __future__ import annotations

import datetime
import math
import re
import threading
import time
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from functools import lru_cache
from typing import Any, cast

from pdi._extras import missing_extra

try:
    import psycopg
    import psycopg.conninfo
    import psycopg.errors
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # pdi installed without its postgres extra
    missing_extra("postgres", exc)

from pdi.archive.blobs.inline import Inline
from pdi.archive.blobs.large_objects import LargeObjects
from pdi.archive.blobs.large_objects import oneline as _oneline
from pdi.archive.blobs.seam import BlobStore
from pdi.archive.catalog import SearchAccess, SQLStore, search_page
from pdi.archive.catalog.base import DEFAULT_CONNECTIONS, timestamp
from pdi.archive.catalog.documents import COUNT_A_DAY, minted_already
from pdi.archive.catalog.search_index import NEW_SOURCE
from pdi.archive.postgres_text import APART_BODY, INDEXED_BODY, restored
from pdi.archive.store import (
    SCHEMA_VERSION,
    STORED_EXACT,
    DepositResult,
    DocumentKey,
    NewRepresentation,
    WriteNote,
)
from pdi.errors import ImmutabilityError, LimitError, NotFoundError, PDIError, StoreError
from pdi.passages.fulltext import MARK_END, MARK_START, spaced

# Any fixed number: the advisory lock that serializes schema migrations.
_MIGRATION_LOCK = 0x0A5C1E
#: How long a transaction waits for a free connection before it is refused (StoreError, 503).
POOL_WAIT_SECONDS = 30.0

#: A source of at most this many passages is written with them in one statement (:meth:`PostgresStore._index_source`).
_PASSAGES_AT_ONCE = 256

# The removal lock: an advisory lock between what deletes blobs (exclusive) and deposits naming them (shared).
_REMOVAL_LOCK = 0x0B10B6

#: Schema step 14: a deposit of one format whose blob is in hand and which has at most one full-text passage,
#: made by the server in one call (:meth:`PostgresStore._mint_at_once`): the statements of
#: :meth:`DocumentsPart.mint <pdi.archive.catalog.documents.DocumentsPart.mint>`, in its order, planned once a
#: connection (PL/pgSQL keeps its plans) rather than parsed and planned at every deposit. The new serial, or
#: ``NULL`` for a series mirrored here (nothing written: only its origin mints in it). A serial a foreign id
#: holds already raises (``PDI01``), so that the increment is not kept. ``p_passages`` ``NULL``: no full-text
#: source; else the source's passages (0 or 1, that one given). The removal lock is :data:`_REMOVAL_LOCK`.

DEPOSIT_ONE = f"""CREATE FUNCTION pdi_deposit_one(
    p_series text, p_day text, p_year integer, p_month integer, p_dom integer, p_at text,
    p_format text, p_media_type text, p_charset text, p_line_ending text,
    p_sha256 text, p_size bigint, p_chunk_size integer, p_chunks bytea, p_data bytea, p_index bytea,
    p_passages integer, p_note text, p_start bigint, p_body text, p_runs bytea
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v_serial integer;
    v_doc bigint;
BEGIN
    IF EXISTS (SELECT 1 FROM mirrors WHERE series = p_series AND role = 'origin') THEN
        RETURN NULL;
    END IF;
    INSERT INTO daily_serials (series, day, last) VALUES (p_series, p_day, 1)
        ON CONFLICT (series, day) DO UPDATE SET last = daily_serials.last + 1 RETURNING last INTO v_serial;
    INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)
        VALUES (p_series, p_day, p_year, p_month, p_dom, v_serial::text, v_serial, p_at)
        ON CONFLICT (series, day, unique_id) DO NOTHING RETURNING id INTO v_doc;
    IF v_doc IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'PDI01',
            MESSAGE = 'serial ' || v_serial || ' of ' || p_series || ' on ' || p_day || ' is taken';
    END IF;
    INSERT INTO document_days (series, day, documents, last_deposit) VALUES (p_series, p_day, 1, p_at){COUNT_A_DAY};
    INSERT INTO versions (document, version, created_at) VALUES (v_doc, 1, p_at);
    INSERT INTO blob_fixity (sha256, size, chunk_size, chunks, created_at)
        VALUES (p_sha256, p_size, p_chunk_size, p_chunks, p_at) ON CONFLICT (sha256) DO NOTHING;
    PERFORM pg_advisory_xact_lock_shared({_REMOVAL_LOCK});
    INSERT INTO blobs (sha256, data) VALUES (p_sha256, p_data) ON CONFLICT (sha256) DO NOTHING;
    IF p_index IS NOT NULL THEN
        INSERT INTO fragment_indexes (sha256, media_type, charset, data)
            VALUES (p_sha256, p_media_type, coalesce(p_charset, ''), p_index)
            ON CONFLICT (sha256, media_type, charset) DO NOTHING;
    END IF;
    IF p_passages IS NOT NULL THEN
        INSERT INTO search_sources (sha256, media_type, charset, passages, note, indexed_at)
            VALUES (p_sha256, p_media_type, coalesce(p_charset, ''), p_passages, p_note, p_at)
            ON CONFLICT (sha256, media_type, charset) DO NOTHING;
        IF FOUND AND p_passages > 0 THEN
            INSERT INTO search_passages (sha256, media_type, charset, start, body, runs)
                VALUES (p_sha256, p_media_type, coalesce(p_charset, ''), p_start, p_body, p_runs);
        END IF;
    END IF;
    INSERT INTO representations (document, version, format, media_type, charset, line_ending, sha256, size,
        created_at, stored)
        VALUES (v_doc, 1, p_format, p_media_type, p_charset, p_line_ending, p_sha256, p_size, p_at, '{STORED_EXACT}');
    RETURN v_serial::text;
END
$$"""
#: The call of :data:`DEPOSIT_ONE`, its arguments by name.
_DEPOSIT_ONE_CALL = (
    "SELECT pdi_deposit_one(%(series)s, %(day)s, %(year)s, %(month)s, %(dom)s, %(at)s, %(format0)s, %(media0)s,"
    " %(charset0)s, %(ending0)s, %(sha0)s, %(size0)s, %(chunk0)s, %(chunks0)s, %(data0)s, %(index0)s,"
    " %(count0)s, %(note0)s, %(start0)s, %(body0)s, %(runs0)s)"
)
#: The SQLSTATE :data:`DEPOSIT_ONE` raises for a serial a foreign id holds.
_SERIAL_TAKEN = "PDI01"

#: A transaction's first and last statements, sent with others (:meth:`PostgresStore._transaction`).
_BEGIN: tuple[str, tuple[Any, ...]] = ("BEGIN", ())
_COMMIT: tuple[str, tuple[Any, ...]] = ("COMMIT", ())
#: Sent after a write transaction's ``COMMIT`` when reads go to a replica: where the primary's WAL is (past the commit).
_WAL_LOCATION: tuple[str, tuple[Any, ...]] = ("SELECT pg_current_wal_lsn()::text", ())
#: A ``%b`` placeholder (not the ``b`` after an escaped ``%%``).
_BINARY_PLACEHOLDER = re.compile(r"(?<!%)%b")


#: How often a server found not answering is asked again (meanwhile its transactions are refused at once).
PROBE_EVERY_SECONDS = 1.0
#: How long such a question, or any new connection of a URL that sets no ``connect_timeout``, may take.
CONNECT_SECONDS = 5


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


def lsn(text: str | None) -> int:
    """A WAL location as PostgreSQL writes it (``16/B374D848``) as a number (0 for none)."""
    if not text:
        return 0
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) + int(low, 16)


class _Servers:
    """A pool of connections to the server a URL names (the first that answers, of several), refused at once
    while it does not answer, made afresh when it answers again."""

    def __init__(self, url: str, *, size: int, wait: float, name: str) -> None:
        self.url = url
        self.location = redact_url(url)
        self.size, self.wait, self.name = size, wait, name
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._asked = 0.0
        self.pool = self._open(wait)

    def _open(self, wait: float) -> ConnectionPool[psycopg.Connection[Any]]:
        # No server-side prepared statements (psycopg prepares a query run 5 times):
        # through pgbouncer in transaction mode the next transaction may run on
        # another server connection, where the statement does not exist. Nor any
        # session state: each transaction may run on another pooled connection.
        kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": None}
        if "connect_timeout" not in psycopg.conninfo.conninfo_to_dict(self.url):
            kwargs["connect_timeout"] = CONNECT_SECONDS
        pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            self.url, min_size=1, max_size=self.size, timeout=self.wait, open=False, kwargs=kwargs, name=self.name,
        )
        try:
            _connect_once(self.url, wait)
            pool.open(wait=True, timeout=wait)
        except (psycopg.Error, PoolTimeout) as exc:
            pool.close()
            raise StoreError(f"cannot connect to {self.location}: {_oneline(exc)}") from exc
        return pool

    def _recover(self) -> None:
        """While the server is down: ask it again (at most once a second); a fresh pool if it answers, else
        :class:`StoreError` at once."""
        with self._lock:  # one thread asks; the others, meanwhile, are refused at once
            if self._down_since is None:
                return
            now = time.monotonic()
            since = now - self._down_since
            if now - self._asked < PROBE_EVERY_SECONDS:
                raise StoreError(f"{self.location}: the database server is not answering (for {since:.0f} s);"
                                 " try again shortly")
            self._asked = now
        try:
            fresh = self._open(CONNECT_SECONDS)
        except StoreError as exc:
            raise StoreError(f"{exc} (not answering for {since:.0f} s); try again shortly") from exc
        with self._lock:
            old, self.pool, self._down_since = self.pool, fresh, None
        # its connections are broken; those in use are closed when given back
        threading.Thread(target=old.close, kwargs={"timeout": 5.0}, daemon=True, name=f"{self.name}-close").start()

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection of the pool for as long as the block runs (:class:`StoreError` if none comes in time)."""
        if self._down_since is not None:
            self._recover()
        pool = self.pool
        try:
            with pool.connection() as conn:
                try:
                    yield conn
                finally:
                    if conn.broken:  # the server went away (or the network): ask it again before the next use
                        with self._lock:
                            if self.pool is pool and self._down_since is None:
                                self._down_since = self._asked = time.monotonic()
        except PoolTimeout as exc:
            raise StoreError(
                f"{self.location}: no catalog connection free within {pool.timeout:g} s ({self.size} in the pool)"
            ) from exc

    def pop_stats(self) -> dict[str, int]:
        return self.pool.pop_stats()

    def close(self) -> None:
        self.pool.close()


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
    #: Schema step 14: the function a small deposit is made by (:data:`DEPOSIT_ONE`).
    deposit_schema = (DEPOSIT_ONE,)
    #: Whether the catalog has it (schema 14 or later, as migrated or found when opened).
    _deposit_one = False

    unspaced_filter = "body ~ ('[' || ? || ']')"

    search_schema = (
        "ALTER TABLE search_passages ADD COLUMN tsv tsvector"
        " GENERATED ALWAYS AS (to_tsvector('english'::regconfig, body)) STORED",
        "CREATE INDEX search_passages_tsv ON search_passages USING GIN (tsv)",
    )
    #: Schema step 19: the index made again from :data:`APART_BODY`.
    apart_schema = (
        "ALTER TABLE search_passages DROP COLUMN tsv",
        "ALTER TABLE search_passages ADD COLUMN tsv tsvector"
        f" GENERATED ALWAYS AS (to_tsvector('english'::regconfig, {APART_BODY})) STORED",
        "CREATE INDEX search_passages_tsv ON search_passages USING GIN (tsv)",
    )
    #: Schema step 20: the index made again from :data:`INDEXED_BODY` (ASCII punctuation read as a space); after step
    #: 19 in the same migration there is none to drop (:meth:`SchemaPart._step`).
    ascii_apart_schema = (
        "ALTER TABLE search_passages DROP COLUMN IF EXISTS tsv",
        "ALTER TABLE search_passages ADD COLUMN tsv tsvector"
        f" GENERATED ALWAYS AS (to_tsvector('english'::regconfig, {INDEXED_BODY})) STORED",
        "CREATE INDEX search_passages_tsv ON search_passages USING GIN (tsv)",
    )

    def __init__(
        self, url: str, *, connections: int = DEFAULT_CONNECTIONS, wait: float = POOL_WAIT_SECONDS,
        blobs: BlobStore | None = None, read_url: str | None = None,
    ) -> None:
        if connections < 1:
            raise LimitError("a pool needs at least one connection")
        self.location = redact_url(url)
        self._url = url
        self.connections = connections
        self._pool = _Servers(url, size=connections, wait=wait, name="pdi-catalog")
        #: The streaming replica reads go to (``--read-url``), if any: see the module's docstring.
        self._replica: _Servers | None = None
        #: Where the replica must have replayed to before reads go to it (an LSN: this process's last commit on the
        #: primary, or where the primary was when it answered a read the replica could not), and where it was seen.
        self._committed = self._replayed = 0
        self._seen = threading.Lock()  # over those two
        self._local = threading.local()  # the connection of this thread's transaction, and its depth
        try:
            if read_url is not None:
                self._replica = _Servers(read_url, size=connections, wait=wait, name="pdi-catalog-reads")
            self.hold(blobs if blobs is not None else LargeObjects(url))
        except BaseException:
            self.close_pools()
            raise

    @property
    def read_location(self) -> str | None:
        """The replica reads go to (its URL without a password), if any."""
        return self._replica.location if self._replica is not None else None

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """This thread's transaction's connection, or one of the primary's for one statement."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        with self._pool.connection() as conn:
            yield conn

    @contextmanager
    def _read_connection(self, primary: bool = False) -> Iterator[psycopg.Connection[Any]]:
        """This thread's transaction's connection, or one for reading: the replica's unless it lags behind what
        this process wrote, does not answer, or ``primary`` (then the primary's)."""
        local = self._local
        if getattr(local, "conn", None) is not None:
            if primary and local.replica:
                self._move_to_primary()
            yield local.conn
            return
        with ExitStack() as stack:
            yield self._reader(stack, primary)

    def _reader(self, stack: ExitStack, primary: bool = False) -> psycopg.Connection[Any]:
        """A connection to read from, held till ``stack`` closes: see :meth:`_read_connection`."""
        replica = self._replica
        if replica is not None and not primary:  # down: refused at once, or asked again (once a second)
            held = ExitStack()
            try:
                conn = held.enter_context(replica.connection())
                if self._caught_up(conn):
                    stack.enter_context(held)
                    self._local.replica = True
                    return conn
            except (StoreError, psycopg.Error):  # the replica does not answer: the primary does it all
                pass
            held.close()
        conn = stack.enter_context(self._pool.connection())
        self._local.replica = False
        return conn

    def _caught_up(self, conn: psycopg.Connection[Any]) -> bool:
        """Whether the replica ``conn`` is on has replayed this process's last commit (asked only when it
        may not have: one round trip after each write, none while nothing is written)."""
        committed = self._committed
        if committed <= self._replayed:
            return True
        row = conn.execute(
            "SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END::text"
        ).fetchone()
        replayed = lsn(row[0] if row else None)
        with self._seen:
            self._replayed = max(self._replayed, replayed)
        return replayed >= committed

    def _ask_primary(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        # A read on the replica that found nothing: the rest of this thread's read transaction moves to the
        # primary, which answers it. If the primary has what the replica did not (a name another resolver has just
        # minted), this process reads from the primary until the replica has replayed what the primary had then:
        # the reads after this one, which may be transactions of their own, see what this one saw.
        local = self._local
        if getattr(local, "conn", None) is None or not getattr(local, "replica", False):
            return []  # no replica, or not in a transaction on it
        self._move_to_primary()
        rows = self._query(sql, params)
        if rows:
            (where,) = self._query("SELECT pg_current_wal_lsn()::text")[0]
            self._must_replay(lsn(where))
        return rows

    def _must_replay(self, where: int) -> None:
        """Reads go to the primary until the replica has replayed the WAL up to ``where``."""
        with self._seen:
            self._committed = max(self._committed, where)

    def _move_to_primary(self) -> None:
        """This thread's transaction on the replica, from now on on the primary: what it read stays read (it
        was true when read, and each statement sees the latest state anyway, in READ COMMITTED); what it keeps
        to send goes with it."""
        local = self._local
        kept = [statement for statement in local.deferred if statement is not _BEGIN]
        local.deferred = []
        self._roll_back(local.conn)
        local.held.close()  # the replica's connection back to its pool
        local.held = ExitStack()
        local.conn = local.held.enter_context(self._pool.connection())
        local.deferred, local.begun, local.replica = [_BEGIN, *kept], False, False

    def pool_waits(self) -> tuple[int, float]:
        # psycopg_pool's counters since they were last popped: requests queued for want of a free connection
        queued, waited = 0, 0.0
        for servers in (self._pool, self._replica):
            if servers is not None:
                stats = servers.pop_stats()
                queued += int(stats.get("requests_queued", 0))
                waited += stats.get("requests_wait_ms", 0) / 1000
        return queued, waited

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

    def _flush(
        self, conn: psycopg.Connection[Any], *then: tuple[str, tuple[Any, ...]]
    ) -> psycopg.Cursor[Any] | None:
        """Send what :meth:`_execute` kept, and ``then`` (in one round trip), its errors as :meth:`_query`'s;
        a cursor on the last statement's result."""
        statements = [*self._deferred(), *then]
        if not statements:
            return None
        try:
            return _batch(conn, statements)
        except psycopg.errors.UniqueViolation as exc:
            raise ImmutabilityError(f"already in the archive: {exc.diag.message_detail}") from exc

    def _commit(self, conn: psycopg.Connection[Any]) -> None:
        """Send the ``COMMIT`` (with what is kept); with a replica, learn the commit's LSN in the same round trip
        (a statement after the ``COMMIT``, in a transaction of its own): reads wait for the replica to reach it."""
        if self._replica is None or not self._local.write:
            self._flush(conn, _COMMIT)
            return
        cursor = self._flush(conn, _COMMIT, _WAL_LOCATION)
        row = cursor.fetchone() if cursor is not None else None
        self._must_replay(lsn(row[0] if row else None))

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[None]:
        # Each thread's transaction on a connection of its own from the pool (not one
        # connection for all behind a lock): readers never wait for each other, and
        # writers queue in the database, on the rows they update (the serial counter,
        # FOR UPDATE) and on advisory locks. A transaction opened inside another joins it.
        # Its BEGIN is sent with its first statement waited for, and its COMMIT with the
        # statements kept after the last one (a small deposit made at once needs none: mint).
        local = self._local
        if getattr(local, "conn", None) is not None:
            if write and not local.write:  # a write inside a read: the whole on the primary, and its commit waited for
                if local.replica:
                    self._move_to_primary()
                local.write = True
            local.depth += 1
            try:
                yield
            finally:
                local.depth -= 1
            return
        # A read is served by the replica, when there is one (see the module's docstring); the held
        # connection is given back when the transaction ends (or sooner, by _ask_primary).
        local.held = ExitStack()
        try:
            if write or self._replica is None:
                local.conn, local.replica = local.held.enter_context(self._pool.connection()), False
            else:
                local.conn = self._reader(local.held)
            local.depth, local.deferred, local.begun, local.write = 1, [_BEGIN], False, write
            try:
                try:
                    yield
                    if local.begun or local.deferred != [_BEGIN]:  # something was (or is to be) sent
                        self._commit(local.conn)
                except BaseException:
                    self._roll_back(local.conn)
                    raise
            except psycopg.Error as exc:
                raise StoreError(f"{self.location}: {_oneline(exc)}") from exc
        finally:
            local.conn, local.depth, local.deferred, local.begun, local.write = None, 0, [], False, True
            local.replica = False
            local.held.close()

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

    def fetch(self, sql: str, params: tuple[Any, ...], *, primary: bool = False) -> list[tuple[Any, ...]]:
        """One statement that writes nothing (``%s`` placeholders) with binary results: a bytea in text would arrive
        hex-encoded, twice the size. Outside a transaction it reads the replica, if any, unless ``primary``."""
        try:
            with self._read_connection(primary) as conn:
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

    def _lock_annotation_creates(self) -> None:
        # one advisory lock (a single 64-bit key: apart from _lock_idempotency's pairs) for conditional creates
        self._query("SELECT pg_advisory_xact_lock(hashtext('pdi: annotation container'))", ())

    def _has_table(self, name: str) -> bool:
        rows = self._query("SELECT to_regclass(?)", (name,))
        return rows[0][0] is not None

    def _rows(self, types: Sequence[str], rows: Sequence[Sequence[Any]]) -> tuple[str, list[Any]]:
        # An array a column, whatever the number of rows: a statement of a few parameters
        # for psycopg to bind, not thousands to find in its text; bound in binary (%b),
        # so no element is quoted and escaped as text.
        columns = ", ".join(f"column{n}" for n in range(1, len(types) + 1))
        arrays = ", ".join(f"%b::{kind}[]" for kind in types)
        return f"unnest({arrays}) AS k({columns})", [list(column) for column in zip(*rows, strict=True)]

    def mint(
        self,
        series: str,
        day: datetime.date,
        unique_id: str | None,
        representations: Sequence[NewRepresentation],
        at: str,
        *,
        skip_identical: bool = False,
        note: WriteNote | None = None,
        registered: bool = False,
    ) -> DepositResult:
        # A new serial whose formats are all in hand: one statement, one round trip (:meth:`_mint_at_once`).
        # Not with a replica (the commit's WAL location comes with the COMMIT of the long way), nor inside
        # a transaction, nor with an audit entry or an Idempotency-Key to keep (the API's, the long way).
        if (unique_id is None and registered and note is None and self._replica is None
                and getattr(self._local, "conn", None) is None):
            shape = _at_once_shape(representations)
            if shape is not None:
                made = self._mint_at_once(shape, series, day, representations, at)
                if made is not None:
                    return DepositResult(DocumentKey(series, day, made), 1)
        return super().mint(series, day, unique_id, representations, at, skip_identical=skip_identical, note=note,
                            registered=registered)

    def _mint_at_once(
        self, shape: tuple[tuple[bool, int], ...], series: str, day: datetime.date,
        representations: Sequence[NewRepresentation], at: str,
    ) -> str | None:
        """The new document's serial, minted with every row of its deposit in one round trip, committed on its
        own: one format with at most one passage by the function of schema 14 (:data:`DEPOSIT_ONE`), any other
        by one statement (:func:`_at_once`). ``None`` when it was refused as a whole (a mirrored series, a
        serial a foreign id has taken), which the deposit made the long way then says why."""
        params: dict[str, Any] = {"series": series, "day": day.isoformat(), "year": day.year, "month": day.month,
                                  "dom": day.day, "at": at}
        one = self._deposit_one and len(shape) == 1 and shape[0][1] <= 1
        for n, rep in enumerate(representations):
            info = rep.blob.info
            params.update({
                f"sha{n}": info.sha256, f"size{n}": info.size, f"chunk{n}": info.chunk_size,
                f"chunks{n}": info.chunks, f"data{n}": cast(Inline, rep.blob).data,
                f"format{n}": rep.format, f"media{n}": rep.media_type, f"charset{n}": rep.charset,
                f"charset_key{n}": rep.charset or "", f"ending{n}": rep.line_ending, f"index{n}": rep.index,
            })
            passages = rep.passages
            if passages is None:
                params[f"count{n}"] = params[f"note{n}"] = None
                held: list[Any] = []
            else:
                params[f"count{n}"], params[f"note{n}"] = passages.count, passages.note
                held = list(passages)
            if len(held) == 1 or one:
                first = held[0] if held else None
                params[f"start{n}"] = None if first is None else first.start
                params[f"body{n}"] = None if first is None else first.indexed
                params[f"runs{n}"] = None if first is None else first.encoded_runs()
            elif held:
                params[f"start{n}"] = [p.start for p in held]
                params[f"body{n}"] = [p.indexed for p in held]
                params[f"runs{n}"] = [p.encoded_runs() for p in held]
        try:
            with self._pool.connection() as conn:
                row = conn.execute(_DEPOSIT_ONE_CALL if one else _at_once(shape), params).fetchone()
        except psycopg.errors.NotNullViolation:  # no document was made (_at_once): nothing was
            return None
        except psycopg.errors.UniqueViolation as exc:
            raise ImmutabilityError(f"already in the archive: {exc.diag.message_detail}") from exc
        except psycopg.Error as exc:
            if exc.sqlstate == _SERIAL_TAKEN:  # nothing was written (DEPOSIT_ONE)
                return None
            raise StoreError(f"{self.location}: {_oneline(exc)}") from exc
        return None if row is None or row[0] is None else str(row[0])

    def migrate(self, target: int = SCHEMA_VERSION) -> int:
        with self._write():
            self._query("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
            reached = super().migrate(target)
        self._deposit_one = reached >= 14
        return reached

    def refuse_newer_schema(self) -> int:
        current = super().refuse_newer_schema()
        self._deposit_one = current >= 14
        return current

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
        rows = [(p.start, p.indexed, p.encoded_runs()) for p in passages]
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
        """A tsquery matching every phrase, each one a parameter of ``phraseto_tsquery`` (never query syntax).

        PostgreSQL's parser compares a word's code points as they are written, where SQLite's tokenizer folds
        accents away: a phrase written with a composed character (``é``) or a decomposed one (``e`` and U+0301)
        is asked in both forms (Unicode's NFC and NFD), so that it finds a text written in either."""
        query: list[str] = []
        params: list[Any] = []
        for phrase in phrases:
            text = " ".join(spaced(w) for w in phrase)
            forms = dict.fromkeys(unicodedata.normalize(form, text) for form in ("NFC", "NFD"))
            query.append("(" + " || ".join("phraseto_tsquery('english'::regconfig, ?)" for _ in forms) + ")")
            params += forms
        return " && ".join(query), params

    def unsearchable(self, phrases: Sequence[Sequence[str]]) -> list[int]:
        # a phrase of stop words alone is an empty tsquery, which the engine passes over (and which matches nothing)
        with self._read():
            rows = self._query(
                "SELECT numnode(phraseto_tsquery('english'::regconfig, u.t)) FROM unnest(?::text[])"
                " WITH ORDINALITY AS u(t, n) ORDER BY u.n",
                ([" ".join(spaced(w) for w in phrase) for phrase in phrases],),
            )
        return [i for i, (nodes,) in enumerate(rows) if int(nodes) == 0]

    def _search_page(
        self, phrases: Sequence[Sequence[str]], series: str | None, limit: int, skip: int,
        access: SearchAccess | None = None,
    ) -> list[tuple[Any, ...]]:
        query, params = self._tsquery(phrases)
        match = (
            "SELECT p.id AS pid, (-ts_rank(p.tsv, q.q))::float8 AS score"
            f" FROM search_passages p, (SELECT {query} AS q) q WHERE p.tsv @@ q.q"
        )
        return self._query(*search_page(match, params, series, access, skip, limit))

    @contextmanager
    def _within(self, deadline: float | None) -> Iterator[None]:
        # the server stops a statement past the time left (statement_timeout, for the rest of this transaction:
        # sent with its next statement), and the default holds again after
        if deadline is None:
            yield
            return
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the deadline has passed")
        self._execute("SELECT set_config('statement_timeout', ?, true)", (f"{max(1, math.ceil(left * 1000))}ms",))
        try:
            yield
        except StoreError as exc:
            if isinstance(exc.__cause__, psycopg.errors.QueryCanceled):
                raise TimeoutError("the catalog's statement was stopped at its deadline") from exc
            raise
        self._execute("SET LOCAL statement_timeout TO DEFAULT")

    def _highlight(self, passage: int, phrases: Sequence[Sequence[str]]) -> str | None:
        query, params = self._tsquery(phrases)
        rows = self._query(
            f"SELECT ts_headline('english'::regconfig, {INDEXED_BODY}, q.q, ?), p.body"
            f" FROM search_passages p, (SELECT {query} AS q) q WHERE p.id = ? AND p.tsv @@ q.q",
            [f"StartSel={MARK_START}, StopSel={MARK_END}, HighlightAll=true", *params, passage],
        )
        return restored(str(rows[0][0]), str(rows[0][1])) if rows else None

    @property
    def replicated(self) -> bool:
        return self._replica is not None

    def close_pools(self) -> None:
        """Close the pools of connections (the primary's, and the replica's)."""
        self._pool.close()
        if self._replica is not None:
            self._replica.close()

    def close(self) -> None:
        self.blobs.close()
        self.close_pools()


def open_postgres(
    url: str, *, create: bool, connections: int = 0, blobs: BlobStore | None = None, migrate: bool = True,
    read_url: str | None = None,
) -> PostgresStore:
    """Connect to an archive database (with ``create``, make its tables) and migrate forward.

    ``connections`` sizes the pool of catalog connections (0: :data:`DEFAULT_CONNECTIONS`).
    ``migrate=False``: leave an older schema as it is, but still refuse one newer than this pdi knows.
    ``read_url`` names a streaming replica of it that reads go to (see the module's docstring).
    """
    store = PostgresStore(url, connections=connections or DEFAULT_CONNECTIONS, blobs=blobs, read_url=read_url)
    try:
        if not create and store.schema_version() == 0:
            raise NotFoundError(
                f"no archive in {store.location} (no pdi tables): name the archive (--archive, or PDI_ARCHIVE), or make"
                " one there with pdi init"
            )
        if migrate:
            store.migrate()
        else:
            store.refuse_newer_schema()
    except PDIError:
        store.close()
        raise
    return store


def _at_once_shape(representations: Sequence[NewRepresentation]) -> tuple[tuple[bool, int], ...] | None:
    """What :func:`_at_once` needs to know of a deposit's formats, or ``None`` when it is made the long way.

    Each format: whether it has a fragment index, and its full-text passages
    (-1: none; else how many, at most :data:`_PASSAGES_AT_ONCE`, 2 standing for
    any number past 1). Made at once: blobs in hand (:class:`Inline`), passages
    known now (not queued), no message of the thread index, formats and sources distinct.
    """
    shape: list[tuple[bool, int]] = []
    sources: set[tuple[str, str, str | None]] = set()
    formats: set[str] = set()
    for rep in representations:
        passages = rep.passages
        if not isinstance(rep.blob, Inline) or rep.media_type == "message/rfc822" or rep.format in formats:
            return None
        formats.add(rep.format)
        if passages is None:
            shape.append((rep.index is not None, -1))
            continue
        source = (rep.sha256, rep.media_type, rep.charset)
        if passages.queued or passages.count > _PASSAGES_AT_ONCE or source in sources:
            return None
        sources.add(source)
        shape.append((rep.index is not None, min(passages.count, 2)))
    return tuple(shape)


@lru_cache(maxsize=64)
def _at_once(shape: tuple[tuple[bool, int], ...]) -> str:
    """One statement that mints the day's next serial and writes every row of its deposit (data-modifying
    ``WITH`` queries chained by ``RETURNING``); sent alone, outside a transaction, it is committed on its own
    before its answer, the serial, comes back.

    What the long way (:meth:`DocumentsPart.mint`) does in a transaction, in its order, each query made to
    wait for the one before by reading what it returned (PostgreSQL runs the queries of a ``WITH`` in an order
    of its own otherwise, and two deposits of the same octets would meet on their unique keys in different
    orders: a deadlock): the serial counter's row first (concurrent minters queue on it, and a failed
    statement takes its increment back), the document, its day's count and version 1, then the blobs' chunk
    digests, the removal lock (shared), the blobs, each format's fragment index and full-text source and
    passages, and the representations. A document not made (a mirrored series: no serial is taken; a serial
    a foreign id holds: the insert does nothing) leaves the representations without one, refused as ``NULL``
    (``NotNullViolation``), so nothing of the statement stays.
    """
    blobs = range(len(shape))
    parts = [
        "s AS (INSERT INTO daily_serials (series, day, last) SELECT %(series)s, %(day)s, 1"
        " WHERE NOT EXISTS (SELECT 1 FROM mirrors WHERE series = %(series)s AND role = 'origin')"
        " ON CONFLICT (series, day) DO UPDATE SET last = daily_serials.last + 1 RETURNING last)",
        "d AS (INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)"
        " SELECT %(series)s, %(day)s, %(year)s, %(month)s, %(dom)s, last::text, last, %(at)s FROM s"
        " ON CONFLICT (series, day, unique_id) DO NOTHING RETURNING id, unique_id)",
        "n AS (INSERT INTO document_days (series, day, documents, last_deposit) SELECT %(series)s, %(day)s, 1, %(at)s"
        f" FROM d{COUNT_A_DAY} RETURNING 1)",
        "v AS (INSERT INTO versions (document, version, created_at) SELECT id, 1, %(at)s FROM d RETURNING 1)",
        "f AS (INSERT INTO blob_fixity (sha256, size, chunk_size, chunks, created_at) SELECT k.*, %(at)s"
        " FROM d, (SELECT count(*) FROM n) AS n, (SELECT count(*) FROM v) AS v, (VALUES "
        + ", ".join(f"(%(sha{n})s::text, %(size{n})s::bigint, %(chunk{n})s::int, %(chunks{n})s::bytea)" for n in blobs)
        + ") AS k ON CONFLICT (sha256) DO NOTHING RETURNING 1)",
        f"l AS (SELECT pg_advisory_xact_lock_shared({_REMOVAL_LOCK}) FROM d, (SELECT count(*) FROM f) AS f)",
        "b AS (INSERT INTO blobs (sha256, data) SELECT k.* FROM l, (VALUES "
        + ", ".join(f"(%(sha{n})s::text, %(data{n})s::bytea)" for n in blobs)
        + ") AS k ON CONFLICT (sha256) DO NOTHING RETURNING 1)",
    ]
    before = "b"  # the query each one waits for
    source = "%(sha{n})s, %(media{n})s, %(charset_key{n})s"
    for n, (indexed, passages) in enumerate(shape):
        key = source.format(n=n)
        after = f"FROM d, (SELECT count(*) FROM {before}) AS w"
        if indexed:
            parts.append(f"x{n} AS (INSERT INTO fragment_indexes (sha256, media_type, charset, data)"
                         f" SELECT {key}, %(index{n})s {after}"
                         " ON CONFLICT (sha256, media_type, charset) DO NOTHING RETURNING 1)")
            before, after = f"x{n}", f"FROM d, (SELECT count(*) FROM x{n}) AS w"
        if passages < 0:
            continue
        parts.append(f"t{n} AS (INSERT INTO search_sources (sha256, media_type, charset, passages, note, indexed_at)"
                     f" SELECT {key}, %(count{n})s, %(note{n})s, %(at)s {after}"
                     " ON CONFLICT (sha256, media_type, charset) DO NOTHING RETURNING 1)")
        columns = "INSERT INTO search_passages (sha256, media_type, charset, start, body, runs)"
        if passages <= 0:
            before = f"t{n}"
            continue
        if passages == 1:
            parts.append(f"p{n} AS ({columns} SELECT {key}, %(start{n})s, %(body{n})s, %(runs{n})s FROM t{n}"
                         " RETURNING 1)")
        else:
            parts.append(f"p{n} AS ({columns} SELECT {key}, k.* FROM t{n},"
                         f" unnest(%(start{n})s::bigint[], %(body{n})s::text[], %(runs{n})s::bytea[]) AS k RETURNING 1)")
        before = f"p{n}"
    parts.append(
        "r AS (INSERT INTO representations (document, version, format, media_type, charset, line_ending, sha256,"
        f" size, created_at, stored) SELECT (SELECT id FROM d), 1, k.*, %(at)s, '{STORED_EXACT}'"
        f" FROM (SELECT count(*) FROM {before}) AS w, (VALUES "
        + ", ".join(f"(%(format{n})s::text, %(media{n})s::text, %(charset{n})s::text, %(ending{n})s::text,"
                    f" %(sha{n})s::text, %(size{n})s::bigint)" for n in blobs)
        + ") AS k)"
    )
    return "WITH " + ", ".join(parts) + " SELECT unique_id FROM d"


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
