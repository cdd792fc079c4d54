"""Which server a PostgreSQL catalog's statement goes to, and this thread's transaction on it.

Beyond one server (``pdi serve --read-url``): reads may go to a streaming
replica while everything that writes goes to the primary the archive's URL
names (:class:`~pdi.archive.postgres.servers._Servers`: one pool each). What
goes where is decided here, not by the callers: a write transaction and any
statement outside a transaction go to the primary; a read transaction
(``_read``, ``reading``, an archive's snapshot) and a blob's parts read
(:meth:`PostgresTransactions.fetch`) go to the replica, but

* to the primary while the replica has not replayed this process's last
  commit (its LSN, asked with the ``COMMIT``, against the replica's
  ``pg_last_wal_replay_lsn()``): what a process wrote it reads back at once;
* to the primary for the rest of a read that found no document on the
  replica (:meth:`PostgresTransactions._ask_primary`): a name another resolver has
  just minted is found there, not answered 404; and if the primary has it,
  this process's reads stay there until the replica has replayed as far as
  the primary was then;
* to the primary while the replica does not answer (:mod:`pdi.archive.postgres.servers`).

A snapshot (REPEATABLE READ, below) that has read on the replica never moves: its reads are the replica's view,
and the primary's is another (a listing read in it before and after would differ). A read in it that finds
nothing on the replica is asked of the primary on a connection of its own: found there, the snapshot is refused
(:class:`~pdi.errors.ReplicaBehindError`, after which this process reads from the primary until the replica has
replayed as far); not found there either, the snapshot's answer (nothing) stands.

A transaction's ``BEGIN`` is sent with its first statement waited for, and
its ``COMMIT`` with the statements kept after the last one: one round trip
for several (:func:`_batch`). A snapshot (``_snapshot``, ``reading``, a
store's ``snapshot``, an archive's) is REPEATABLE READ, READ ONLY: every
statement of it sees the catalog as its first did, however long it lasts.
A read transaction (``_read``) is READ COMMITTED, each statement seeing the
latest commit, and sends neither ``BEGIN`` nor ``COMMIT``: each round trip of
it is a transaction of its own (PostgreSQL's implicit one around a simple
query's statements), which sees exactly what that statement would see inside
a ``BEGIN`` … ``COMMIT`` and spares the ``COMMIT``'s round trip. Its deadline
(:meth:`PostgresTransactions._within`) goes with each of its round trips; a
write inside it, or what cannot go in one round trip with its statement (a
binary read under a deadline, many rows), begins a transaction there, for the
rest of it (:meth:`PostgresTransactions._begin_here`). Reads never write (a
replica would refuse them).
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any

import psycopg
import psycopg.errors

from pdi.archive.blobs.large_objects import oneline as _oneline
from pdi.archive.catalog import SQLStore
from pdi.archive.catalog.base import DEFAULT_CONNECTIONS
from pdi.archive.postgres.servers import _Servers, lsn, redact_url
from pdi.errors import (
    CommitUnknownError,
    ImmutabilityError,
    LimitError,
    ReplicaBehindError,
    StoreError,
)

#: How long a transaction waits for a free connection before it is refused (StoreError, 503).
POOL_WAIT_SECONDS = 30.0

#: A transaction's first and last statements, sent with others (:meth:`PostgresTransactions._transaction`).
_BEGIN: tuple[str, tuple[Any, ...]] = ("BEGIN", ())
#: A snapshot's first statement (:meth:`PostgresTransactions._snapshot`): every statement of a REPEATABLE READ
#: transaction sees the catalog as its first did (READ COMMITTED, the default, takes a new snapshot a statement);
#: READ ONLY, so it never waits, nor fails for a serialization, nor writes by mistake.
BEGIN_SNAPSHOT: tuple[str, tuple[Any, ...]] = ("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", ())
_COMMIT: tuple[str, tuple[Any, ...]] = ("COMMIT", ())
#: Sent after a write transaction's ``COMMIT`` when reads go to a replica: where the primary's WAL is (past the commit).
_WAL_LOCATION: tuple[str, tuple[Any, ...]] = ("SELECT pg_current_wal_lsn()::text", ())
#: A ``%b`` placeholder (not the ``b`` after an escaped ``%%``).
_BINARY_PLACEHOLDER = re.compile(r"(?<!%)%b")


class _FromPrimary(Exception):
    """Raised by :meth:`PostgresTransactions._read_connection` for a read asked of the primary inside a snapshot on
    the replica, which does not move (:meth:`PostgresTransactions._primary_has` answers it)."""


class PostgresTransactions(SQLStore):
    """The catalog's connections (the primary's pool, and a replica's) and this thread's transaction on one."""

    def __init__(
        self, url: str, *, connections: int = DEFAULT_CONNECTIONS, wait: float = POOL_WAIT_SECONDS,
        read_url: str | None = None,
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
                if self._snapshot_on_replica():
                    raise _FromPrimary
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
        # the reads after this one, which may be transactions of their own, see what this one saw. A snapshot
        # begun on the replica does not move (:meth:`_snapshot_on_replica`).
        local = self._local
        if getattr(local, "conn", None) is None or not getattr(local, "replica", False):
            return []  # no replica, or not in a transaction on it
        if self._snapshot_on_replica():
            return self._primary_has(sql, params, binary=False)
        self._move_to_primary()
        rows = self._query(sql, params)
        if rows:
            (where,) = self._query("SELECT pg_current_wal_lsn()::text")[0]
            self._must_replay(lsn(where))
        return rows

    def _snapshot_on_replica(self) -> bool:
        """Whether this thread's transaction is a snapshot that has read on the replica: its view is the replica's,
        as it was at its first read; going on on the primary would show the rest of it another (a listing read
        twice in it would differ). One not begun yet moves whole: its first read is the primary's."""
        local = self._local
        return bool(getattr(local, "replica", False) and local.begin is BEGIN_SNAPSHOT and local.begun)

    def _primary_has(self, sql: str, params: Sequence[Any], *, binary: bool) -> list[tuple[Any, ...]]:
        """In a snapshot on the replica (:meth:`_snapshot_on_replica`), a read that found nothing there asked of
        the primary on a connection of its own: nothing there either, and the snapshot's answer stands (no rows, as
        the replica's view has it); found there, the snapshot is refused (:class:`ReplicaBehindError`) and this
        process's next reads go to the primary until the replica has replayed as far as the primary was then."""
        try:
            with self._pool.connection() as conn:
                cursor = conn.cursor(binary=True) if binary else conn.cursor()
                cursor.execute(sql if binary else sql.replace("?", "%s"), tuple(params))
                found = cursor.description is not None and cursor.fetchone() is not None
                where = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone() if found else None
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: {_oneline(exc)}") from exc
        if where is None:
            return []
        self._must_replay(lsn(where[0]))
        raise ReplicaBehindError(
            f"{self.read_location}: a snapshot of the catalog begun on the replica asked for what the primary has"
            " and the replica has not replayed yet; its reads are the replica's view, and the primary's would be"
            " another, so it stops here: ask again (the next snapshot is read on the primary)"
        )

    def _must_replay(self, where: int) -> None:
        """Reads go to the primary until the replica has replayed the WAL up to ``where``."""
        with self._seen:
            self._committed = max(self._committed, where)

    def _move_to_primary(self) -> None:
        """This thread's transaction on the replica, from now on on the primary: what it read stays read (it
        was true when read, and each statement sees the latest state anyway, in READ COMMITTED; a snapshot's
        reads see the primary's from here on, as it is now); what it keeps to send goes with it."""
        local = self._local
        kept = [statement for statement in local.deferred if statement is not local.begin]
        local.deferred = []
        self._roll_back(local.conn)
        local.held.close()  # the replica's connection back to its pool
        local.held = ExitStack()
        local.conn = local.held.enter_context(self._pool.connection())
        local.deferred = kept if local.unbegun else [local.begin, *kept]
        local.begun, local.replica = False, False

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
        if getattr(local, "conn", None) is None:
            return []
        deferred: list[tuple[str, tuple[Any, ...]]] = local.deferred
        local.deferred, local.begun = [], True
        if local.unbegun and local.deadline is not None:  # a read's deadline, with each of its round trips
            deferred = [self._timeout(local.deadline), *deferred]
        return deferred

    def _timeout(self, deadline: float) -> tuple[str, tuple[Any, ...]]:
        """The statement that has the server stop those after it in its transaction at ``deadline``."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the deadline has passed")
        return "SELECT set_config('statement_timeout', %s, true)", (f"{max(1, math.ceil(left * 1000))}ms",)

    def _begin_here(self) -> None:
        """This thread's read transaction, sent so far a statement at a time (no ``BEGIN``), a transaction from here
        on: its ``BEGIN`` (and the deadline it reads within, for the rest of it) sent with its next statement."""
        local = self._local
        if not local.unbegun:
            return
        timeout = [self._timeout(local.deadline)] if local.deadline is not None else []
        local.deferred = [local.begin, *timeout, *local.deferred]
        local.unbegun, local.begun = False, False

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

    def _snapshot(self) -> AbstractContextManager[None]:
        # a transaction begun by BEGIN_SNAPSHOT; a snapshot inside a read not yet begun makes it one
        return self._transaction(False, snapshot=True)

    @contextmanager
    def _transaction(self, write: bool, *, snapshot: bool = False) -> Iterator[None]:
        # Each thread's transaction on a connection of its own from the pool (not one
        # connection for all behind a lock): readers never wait for each other, and
        # writers queue in the database, on the rows they update (the serial counter,
        # FOR UPDATE) and on advisory locks. A transaction opened inside another joins it.
        # Its BEGIN is sent with its first statement waited for, and its COMMIT with the
        # statements kept after the last one (a small deposit made at once needs none: mint).
        local = self._local
        if getattr(local, "conn", None) is not None:
            if write and not local.write:  # a write inside a read: the whole on the primary, and its commit waited for
                if local.begin is BEGIN_SNAPSHOT:
                    if local.begun:  # its reads were of a snapshot, read only: what they read cannot be written on
                        raise StoreError(f"{self.location}: a write inside a snapshot of the catalog, which is read"
                                         " only (write before the snapshot's first read, or after it)")
                    local.begin = local.deferred[0] = _BEGIN  # nothing read yet: a plain write transaction
                self._begin_here()  # a read sent a statement at a time: the write and what follows, one transaction
                if local.replica:
                    self._move_to_primary()
                local.write = True
            elif snapshot and not local.write and not local.begun and local.begin is _BEGIN:
                local.begin = BEGIN_SNAPSHOT  # a read that has sent nothing yet: the snapshot begins it
                self._begin_here()
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
            local.begin = BEGIN_SNAPSHOT if snapshot and not write else _BEGIN
            # a read (READ COMMITTED) sends no BEGIN: each of its round trips a transaction of its own
            local.unbegun, local.deadline = not write and not snapshot, None
            local.depth, local.deferred, local.begun, local.write = 1, [] if local.unbegun else [local.begin], False, write
            committing = False
            try:
                try:
                    yield
                    if local.unbegun:
                        if local.deferred:  # kept and not sent yet: sent now, with nothing to commit
                            self._flush(local.conn)
                    elif local.begun or local.deferred != [local.begin]:  # something was (or is to be) sent
                        committing = True
                        self._commit(local.conn)
                except BaseException as exc:
                    self._roll_back(local.conn)
                    lost = commit_unknown(self.location, local.conn, exc) if committing else None
                    if lost is not None:
                        raise lost from exc
                    raise
            except psycopg.Error as exc:
                raise StoreError(f"{self.location}: {_oneline(exc)}") from exc
        finally:
            local.conn, local.depth, local.deferred, local.begun, local.write = None, 0, [], False, True
            local.begin = _BEGIN
            local.replica = local.unbegun = False
            local.deadline = None
            local.held.close()

    def _roll_back(self, conn: psycopg.Connection[Any]) -> None:
        """End this thread's transaction without its changes, if its BEGIN was sent (nothing kept is sent)."""
        local = self._local
        local.deferred = []
        if not local.begun or local.unbegun or conn.closed:  # nothing sent, or nothing open (each sent on its own)
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
                local = self._local
                if getattr(local, "unbegun", False) and (local.deferred or local.deadline is not None):
                    self._begin_here()  # what it keeps, or its deadline, cannot go with a binary read
                self._flush(conn)
                cursor = conn.cursor(binary=True)
                cursor.execute(sql, params)
                return list(cursor.fetchall())
        except _FromPrimary:  # asked of the primary in a snapshot on the replica: see _primary_has
            return self._primary_has(sql, params, binary=True)
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: {_oneline(exc)}") from exc

    @contextmanager
    def _outermost(self, write: bool) -> Iterator[None]:  # pragma: no cover - _transaction does it all
        with self._transaction(write):
            yield

    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if len(rows) == 1:  # one statement, not a pipeline for one row (a small text's one passage)
            self._execute(sql, rows[0])
            return
        if getattr(self._local, "unbegun", False):
            self._begin_here()  # many rows, which need not go one round trip each, in one transaction
        try:
            with self._connection() as conn, conn.cursor() as cursor:
                self._flush(conn)
                cursor.executemany(sql.replace("?", "%s"), rows)
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: {_oneline(exc)}") from exc

    @contextmanager
    def _within(self, deadline: float | None) -> Iterator[None]:
        # the server stops a statement past the time left (statement_timeout, for the rest of this transaction:
        # sent with its next statement), and the default holds again after
        if deadline is None:
            yield
            return
        local = self._local
        unbegun = getattr(local, "conn", None) is not None and local.unbegun
        if unbegun:  # a read that sends no BEGIN: the deadline goes with each of its round trips (_deferred)
            self._timeout(deadline)
            outer, local.deadline = local.deadline, deadline
        else:
            self._execute(*self._timeout(deadline))
        try:
            yield
        except StoreError as exc:
            if isinstance(exc.__cause__, psycopg.errors.QueryCanceled):
                raise TimeoutError("the catalog's statement was stopped at its deadline") from exc
            raise
        finally:
            if unbegun:
                local.deadline = outer
        if not (unbegun and local.unbegun):  # (a read begun within: its timeout was set for the rest of it)
            self._execute("SET LOCAL statement_timeout TO DEFAULT")

    @property
    def replicated(self) -> bool:
        return self._replica is not None

    def close_pools(self) -> None:
        """Close the pools of connections (the primary's, and the replica's)."""
        self._pool.close()
        if self._replica is not None:
            self._replica.close()


def commit_unknown(location: str, conn: psycopg.Connection[Any], exc: BaseException) -> CommitUnknownError | None:
    """What to say of ``exc``, raised as ``conn`` sent a ``COMMIT`` (or a statement committed on its own), when it
    lost the connection (an ``OperationalError``, and ``conn`` broken): the server may have committed before it
    went, and no one can say here whether it did (a :class:`~pdi.errors.CommitUnknownError`). ``None`` when the
    server answered with an error (a constraint checked at the commit, a serialization failure) and the connection
    is still there: then it rolled the transaction back, and nothing of it was applied."""
    if not isinstance(exc, psycopg.OperationalError) or not (conn.broken or conn.closed):
        return None
    return CommitUnknownError(
        f"{location}: the connection to the database server was lost as the transaction was committed"
        f" ({_oneline(exc)}), so whether it was applied is unknown (the server may have committed it before it"
        " went)"
    )


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
