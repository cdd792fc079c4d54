"""The team catalog on PostgreSQL: :class:`PostgresStore`, its parts together, and :func:`open_postgres`.

It holds a blob store: by default the blobs in its own database
(:mod:`pdi.archive.blobs.large_objects`), or an S3-compatible store recorded
at ``pdi init``. Here: what differs on PostgreSQL of the schema and its
migration, and the advisory locks that stand for SQLite's one writer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
import psycopg.errors
from psycopg.pq import TransactionStatus

from pdi.archive.blobs.large_objects import LargeObjects
from pdi.archive.blobs.large_objects import oneline as _oneline
from pdi.archive.blobs.seam import BlobStore
from pdi.archive.catalog.base import DEFAULT_CONNECTIONS
from pdi.archive.catalog.listing import (
    NAME_PARTS,
    NameMade,
    RangedPage,
    headed,
    last_name_key,
    page_near,
)
from pdi.archive.postgres.deposits import _REMOVAL_LOCK, PostgresDeposits
from pdi.archive.postgres.search import PostgresSearch
from pdi.archive.postgres.transactions import BEGIN_SNAPSHOT, POOL_WAIT_SECONDS, _batch
from pdi.archive.store import SCHEMA_VERSION, OlderSchema
from pdi.errors import NotFoundError, PDIError, StoreError

#: Opening a catalog at this pdi's schema, in one statement: its version, the blob store it records, and whether
#: messages wait for the thread index. Sent alone, outside any transaction (one statement sees one snapshot): one
#: round trip, where asking each (the version twice) in a transaction of its own took ten. A database without
#: these tables (none of pdi's, or a catalog older than schema 10) answers ``UndefinedTable``, and the opening
#: asks step by step (:func:`open_postgres`).
_OPENING = ("SELECT (SELECT MAX(version) FROM schema_migrations), (SELECT url FROM blob_store WHERE id = 1),"
            " EXISTS (SELECT FROM message_heads_pending)")

#: A page of serial names read by the range of its documents' ids, in a transaction of its own: joined by a hash
#: (or a merge), never by a nested loop. Before the tables are first analysed (right after a bulk load) PostgreSQL
#: takes the day's documents for one row and looks each one's representations up in the range (a day of 10,000
#: names: 19.8 ms executing, where the hash of the same statement took 10.5). And no JIT: a plan priced above
#: ``jit_above_cost`` (a disabled node's cost does that) was compiled for 892 ms where it ran in 23.
_HASHED: tuple[tuple[str, tuple[Any, ...]], ...] = (("SET LOCAL enable_nestloop = off", ()), ("SET LOCAL jit = off", ()))
#: And back, for a statement of the same transaction that reads a page by the look-ups (nested loops of a
#: ``LATERAL`` subquery), which the setting above made a walk of the day (two names: 102 ms, where 1.5).
_LOOKED_UP: tuple[str, tuple[Any, ...]] = ("SET LOCAL enable_nestloop = on", ())

# Any fixed number: the advisory lock that serializes schema migrations.
_MIGRATION_LOCK = 0x0A5C1E


class PostgresStore(PostgresSearch, PostgresDeposits):
    """A PostgreSQL database holding the catalog (and, by default, the blobs: :mod:`pdi.archive.blobs.large_objects`)."""

    dialect = "postgresql"
    id_pk = "BIGSERIAL PRIMARY KEY"
    blob_type = "BYTEA"
    blob_table = True
    for_update = " FOR UPDATE"
    for_no_key_update = " FOR NO KEY UPDATE"

    def __init__(
        self, url: str, *, connections: int = DEFAULT_CONNECTIONS, wait: float = POOL_WAIT_SECONDS,
        blobs: BlobStore | None = None, read_url: str | None = None,
    ) -> None:
        super().__init__(url, connections=connections, wait=wait, read_url=read_url)
        #: What :meth:`open_at_this_schema` read beside the schema's version, until :meth:`opening_reads` takes it.
        self._opened: tuple[str | None, bool] | None = None
        try:
            self.hold(blobs if blobs is not None else LargeObjects(url))
        except BaseException:
            self.close_pools()
            raise

    #: Each document's representations looked up by ``representations_pkey`` (document, version, format), however
    #: large the catalog: a LATERAL subquery the planner does not flatten into a join (``OFFSET 0``), which, once
    #: the catalog is analysed, it would make a hash of the day's documents and a scan of every representation
    #: (a day's listing; the reader's page of 1,000 of a day's documents in a catalog of 100,000 names).
    run_representations = "CROSS JOIN LATERAL (SELECT * FROM representations WHERE document = d.id OFFSET 0) r"

    #: A page of a day's serial names reads its representations by one range of representations_pkey, from the
    #: least to the greatest id of the page's documents (a day's documents are deposited, or imported, together,
    #: so their ids lie close), hashed and joined to them, rather than looked up one document at a time (a day of
    #: 10,000 names: 10,000 look-ups, 30,000 index pages, 18.6 ms of the statement's 18.9; the range and the
    #: join: about 10 ms). The bounds are read first, from at most a page and one of the run's documents, and
    #: given to the page's statement as values, not subqueries: PostgreSQL then plans it knowing how many rows the range holds (with
    #: the bounds as parameters it took them for 50 of 10,000 and looked each document up by its key, 19 ms).
    #: Only where the range holds about the page's rows (:func:`~pdi.archive.catalog.listing.page_near`); the
    #: look-ups otherwise. Measured without that guard: a day of 100,000 names, the rest of the day hashed for
    #: each of its pages, 725 ms to list, by the look-ups 248; two names of a series with 100,000 of another
    #: stored between them, 28 ms, by the look-ups 1.3.
    ranges_pages = True

    #: A serial name made of a page's row ``p`` (:data:`~pdi.archive.catalog.listing.NAME_PARTS` and the
    #: series), the day's ``/Y/M/D/`` its one parameter, as ``str`` of it prints it: ``text || bigint`` writes the
    #: serial's and the version's decimals.
    page_name_sql = "'urn:pdi://' || p.series || ? || p.serial || '.' || p.format || '.' || p.version"
    #: A name's tail from its serial on, made of a page's row ``p``: a listing of one series.
    page_tail_sql = "p.serial || '.' || p.format || '.' || p.version"

    def _page_names(self, series: str | None, path: str) -> tuple[str, list[Any], NameMade]:
        """A page's rows carry the parts of their names, and the aggregate around them puts each name together
        once its row is sorted and kept, not carried through the sort (the page sorted the names, 73 octets a
        row: a day of 10,000 names, 1 ms of the statement's 9.6). For a listing of one series the catalog makes
        only each name's tail from its serial on, and the head (``urn:pdi://``, the series, the day's path), the
        same for every name, is put before each line in Python (one ``str.replace``, 0.6 ms): the page is a
        quarter of the octets (100 kB in place of 440 kB), about 2 ms less of the statement's 11 to send and
        read."""
        if series is None:
            return f"{NAME_PARTS}, d.series", [], (self.page_name_sql, [path], "")
        return NAME_PARTS, [], (self.page_tail_sql, [], f"urn:pdi://{series}{path}")

    def _serial_text(
        self, names: tuple[str, list[Any]], last: tuple[str, list[Any]], page: int,
        ranged: RangedPage | None, made: NameMade,
    ) -> tuple[str, tuple[Any, ...] | None, bool | None]:
        # One value for the page: string_agg of the names in the order the subquery sorted and limited them, so no
        # row is made in Python. The aggregate is given no ORDER BY of its own, which sorted the page a second time
        # (2 ms of 11 for 10,000 names, on PostgreSQL 15): PostgreSQL's manual (9.21, Aggregate Functions) says a
        # sorted subquery "will usually work" to order an aggregate's input, and that it can fail where the outer
        # query does more than aggregate (a join), which this one does not; its executor reads the limited,
        # sorted subquery in order. The page's last line gives the next page's key (``last_name_key``), so a
        # page out of order would skip or repeat names: tests/archive/test_archive_listing_scattered_ids.py pages
        # documents stored out of order on both stores (SQLite's group_concat relies on the same reading). The
        # page and the key of its last row are read in one snapshot: a REPEATABLE READ transaction of their own,
        # begun in the page's round trip (a version deposited between two statements would otherwise move the
        # page's last row, and a name would be listed twice). With ``ranged`` (:attr:`ranges_pages`), the page's
        # bounds are read first in the same snapshot, and the page by their range where it is near.
        def text_of(statement: tuple[str, list[Any]]) -> tuple[str, tuple[Any, ...]]:
            return (f"SELECT string_agg({made[0]}, E'\\n'), count(*) FROM ({statement[0]}) AS p".replace("?", "%s"),
                    (*made[1], *statement[1]))

        try:
            with self._read_connection() as conn:
                own = getattr(self._local, "conn", None) is None
                begin = [BEGIN_SNAPSHOT] if own else self._deferred()
                try:
                    statement = names
                    looked_up: list[tuple[str, tuple[Any, ...]]] = []  # what the look-ups' statements follow
                    foreign: bool | None = None
                    if ranged is not None:  # the bounds first, in the same snapshot
                        bounds, within = ranged
                        if own:  # the range's rows hashed (or merged), never looked up a row at a time
                            begin, looked_up = [*begin, *_HASHED], [_LOOKED_UP]
                        found = _batch(conn, [*begin, (bounds[0].replace("?", "%s"), tuple(bounds[1]))]).fetchone()
                        least, greatest, documents, foreign = found if found is not None else (None, None, 0, None)
                        if not documents:  # no document after the key: no page to read
                            return "", None, foreign
                        begin = [] if own else self._deferred()
                        if least is not None and greatest is not None and page_near(least, greatest, documents, page):
                            statement = within(least, greatest)
                        else:  # the page by the look-ups: nested loops again
                            begin, looked_up = [*begin, *looked_up], []
                    if begin:
                        row = _batch(conn, [*begin, text_of(statement)]).fetchone()
                    else:  # one statement: its text in binary, which psycopg reads as it is (a page of 440 kB: 0.4 ms less)
                        with conn.execute(*text_of(statement), binary=True) as cursor:
                            row = cursor.fetchone()
                    text, count = row if row is not None else (None, 0)
                    text = headed(str(text), made[2]) if count else text
                    key = None
                    if count >= page:  # the key of the last row, in the same snapshot
                        kept = [] if own else self._deferred()  # (a read's deadline, with each round trip)
                        named = last_name_key(str(text))
                        if named is not None:
                            ids = _batch(conn, [*kept, (named[0].replace("?", "%s"), tuple(named[1]))]).fetchall()
                            if len(ids) == 1:
                                key = named[2](ids[0][0])
                            elif not own:
                                kept = self._deferred()
                        if key is None:  # the page walked again to its row ``page``, by the look-ups
                            found = _batch(conn, [*kept, *looked_up, (last[0].replace("?", "%s"), tuple(last[1]))]).fetchone()
                            if found is None:  # pragma: no cover - the snapshot held between the two statements
                                raise StoreError(f"{self.location}: the listing's page of {page} names has no last row")
                            key = tuple(found)
                finally:
                    if own and not conn.closed:
                        conn.execute("COMMIT" if conn.info.transaction_status == TransactionStatus.INTRANS
                                     else "ROLLBACK")  # read only: nothing to keep or lose
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: {_oneline(exc)}") from exc
        return (f"{text}\n" if count else ""), key, foreign

    def _removal_lock(self, *, shared: bool, wait: bool = True) -> None:
        # writers are not serialized as SQLite's are: deposits (shared) and removers queue on an advisory lock
        function = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
        # waited for when the blob store checks its blobs under it, perhaps elsewhere (S3); otherwise sent with
        # what follows it (statements run in order: it is held before them, till the commit)
        (self._query if wait else self._execute)(f"SELECT {function}(?)", (_REMOVAL_LOCK,))

    def _lock_idempotency(self, token: int, key: str) -> None:
        # writers are not serialized as SQLite's are: two retries with one key queue here
        self._query("SELECT pg_advisory_xact_lock(?::int, hashtext(?))", (token, key))

    def _lock_annotation_creates(self) -> None:
        # one advisory lock (a single 64-bit key: apart from _lock_idempotency's pairs) for conditional creates
        self._query("SELECT pg_advisory_xact_lock(hashtext('pdi: annotation container'))", ())

    def _has_table(self, name: str) -> bool:
        rows = self._query("SELECT to_regclass(?)", (name,))
        return rows[0][0] is not None

    def _has_column(self, table: str, column: str) -> bool:
        return bool(self._query("SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(?) AND attname = ?"
                                " AND NOT attisdropped", (table, column)))

    def _rows(self, types: Sequence[str], rows: Sequence[Sequence[Any]]) -> tuple[str, list[Any]]:
        # An array a column, whatever the number of rows: a statement of a few parameters
        # for psycopg to bind, not thousands to find in its text; bound in binary (%b),
        # so no element is quoted and escaped as text.
        columns = ", ".join(f"column{n}" for n in range(1, len(types) + 1))
        arrays = ", ".join(f"%b::{kind}[]" for kind in types)
        return f"unnest({arrays}) AS k({columns})", [list(column) for column in zip(*rows, strict=True)]

    def migrate(self, target: int = SCHEMA_VERSION) -> int:
        reached = super().migrate(target)
        self._deposit_one = reached >= 14
        return reached

    def _migrating(self) -> None:
        # one process migrates at a time: the others wait here, then find the schema migrated
        self._query("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))

    def refuse_newer_schema(self) -> int:
        current = super().refuse_newer_schema()
        self._deposit_one = current >= 14
        return current

    def open_at_this_schema(self) -> bool:
        """Whether the catalog is at this pdi's schema, read with what the opening reads next (handed over by
        :meth:`opening_reads`), in one statement (:data:`_OPENING`) on the primary. ``False`` (nothing kept) for any
        other version, or a database without the tables it reads: the opening then asks step by step, and says
        which it is (no pdi tables, a schema newer than this pdi, an older one migrated)."""
        try:
            with self._connection() as conn:
                row = conn.execute(_OPENING).fetchone()
        except psycopg.errors.UndefinedTable:
            return False
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: {_oneline(exc)}") from exc
        if row is None or row[0] != SCHEMA_VERSION:
            return False
        self._deposit_one = True  # schema 14's deposit function is there
        self._opened = (None if row[1] is None else str(row[1]), bool(row[2]))
        return True

    def opening_reads(self) -> tuple[str | None, bool]:
        opened, self._opened = self._opened, None
        return opened if opened is not None else super().opening_reads()

    def close(self) -> None:
        self.blobs.close()
        self.close_pools()


def open_postgres(
    url: str, *, create: bool, connections: int = 0, blobs: BlobStore | None = None, older: OlderSchema = "refuse",
    read_url: str | None = None,
) -> PostgresStore:
    """Connect to an archive database (with ``create``, make its tables), its schema as ``older`` says
    (:data:`~pdi.archive.store.OlderSchema`: an older one refused unless it says to migrate or keep it; a newer
    one refused).

    ``connections`` sizes the pool of catalog connections (0: :data:`DEFAULT_CONNECTIONS`).
    ``read_url`` names a streaming replica of it that reads go to (see the module's docstring).
    """
    store = PostgresStore(url, connections=connections or DEFAULT_CONNECTIONS, blobs=blobs, read_url=read_url)
    try:
        if store.open_at_this_schema():
            return store
        if not create and store.schema_version() == 0:
            raise NotFoundError(
                f"no archive in {store.location} (no pdi tables): name the archive (--archive, or PDI_ARCHIVE), or make"
                " one there with pdi init"
            )
        store.open_schema(older, create=create)
    except PDIError:
        store.close()
        raise
    return store
