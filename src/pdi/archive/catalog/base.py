"""The part every catalog part stands on: the connection and its transactions, and the shared helpers.

A dialect (:class:`pdi.archive.sqlite.SQLiteStore`,
:class:`pdi.archive.postgres.PostgresStore`: the SQLite and PostgreSQL
differences, each in its one module) supplies the abstract methods here: a
way to run statements (written with ``?`` placeholders; PostgreSQL rewrites
them), a transaction that serializes writers, and the few statements that
differ. Each other part of the catalog (:mod:`pdi.archive.catalog`) is a
mixin over :class:`CatalogBase` alone, in a module of its own that imports
no other part: the parts share one connection and its transaction state,
which a mixin's ``self`` gives without a second object to thread through
every statement. The few methods one part calls on another are declared
here, abstract, so that no part imports another.
"""

from __future__ import annotations

import datetime
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, TypeVar

from pdi.archive.blobs import ChunkedReader
from pdi.archive.blobs.seam import BlobPin, BlobSource, BlobStore, ImportDurability, StagedBlob
from pdi.archive.store import (
    AssertionRecord,
    AuditRecord,
    DocumentKey,
    PublicVersion,
    RepresentationRecord,
    SeriesRecord,
    SmallPublic,
)
from pdi.errors import ImmutabilityError, NotFoundError, ReadOnlyArchiveError, WithdrawnError


def mirrored_series(series: str, origin: str) -> ImmutabilityError:
    """The refusal (by the documents' part and the deposits) of a name minted or versioned in a series this archive mirrors from ``origin``."""
    return ImmutabilityError(f"series {series} is mirrored from {origin}: only its origin mints or versions names in"
                             " it (pdi mirror sync copies them here)")


def withdrawn_whole(key: DocumentKey, at: str, reason: str, who: str, purged: bool, *,
                    added: str = "a new one", done: str = "deposited") -> WithdrawnError:
    """The refusal (by the documents' part, the deposits and an import, ``done``: ``imported``) of a new version of
    the document ``key`` (``added``: what else is refused, ``a format added to one``), withdrawn whole (``at``, for
    ``reason``, by ``who``): its tombstone covers every version, one deposited after it too."""
    from pdi.archive.naming import generic_name

    return WithdrawnError(
        f"{generic_name(key)} was withdrawn whole at {at}{' (its octets purged)' if purged else ''}, reason: {reason};"
        f" every version of it, {added} too, answers with its tombstone, so nothing was {done}",
        reason=reason, at=at, who=who, purged=purged,
    )


def withdrawn_version(names: str, at: str, reason: str, who: str, purged: bool, *,
                      added: str = "added", done: str = "deposited") -> WithdrawnError:
    """The refusal (by the documents' part, the deposits and an import: ``added`` and ``done``, ``imported``) of a
    format added to a version withdrawn alone (``names``, its formats' names; ``at``, for ``reason``, by ``who``):
    its tombstone covers every format of it, one added after it too."""
    return WithdrawnError(
        f"{names} was withdrawn at {at}{' (its octets purged)' if purged else ''}, reason: {reason}; every format of"
        f" the version, one {added} now too, answers with its tombstone, so nothing was {done}",
        reason=reason, at=at, who=who, purged=purged,
    )


def withdrawn_holding(names: str, at: str, reason: str, purged: bool, *, held: str = "these octets",
                      them: str = "these octets", whole: str | None = None, done: str = "deposited",
                      ) -> ImmutabilityError:
    """The refusal of ``held`` (``them`` when named again), which a version of a document (``names``, its formats'
    names) holds, when that version alone was withdrawn (``at``, for ``reason``): it answers with its tombstone,
    never with them. :attr:`~ImmutabilityError.forceable`: a forced new version holds them, and each front end that
    can force one says how. With ``whole`` (the document's generic name), the document was withdrawn whole: every
    version answers with its tombstone, so none can hold them, and the refusal is not forceable. The one wording of
    the refusal: the catalog's of the very octets; :meth:`pdi.archive.Archive.withdrawn_alike`'s of octets a front
    end finds alike (a capture of the same page: ``held`` says so); :meth:`pdi.archive.Archive.withdrawn_holder`'s of
    octets a front end found held already (a WARC import's record); a bag's import's (``done``: ``imported``)."""
    gone = f"at {at}{' (its octets purged)' if purged else ''}, reason: {reason}"
    if whole is not None:  # nothing can be deposited: no hint of a forced version (pdi.archive.deposits)
        return ImmutabilityError(f"{names} holds {held} but its document {whole} was withdrawn whole {gone}; every"
                                 f" version of it answers with its tombstone, so nothing was {done}")
    refused = ImmutabilityError(
        f"{names} holds {held} but was withdrawn {gone}; it answers with its tombstone, not {them}, so nothing was"
        f" {done}"
    )
    refused.forceable = True
    return refused


#: Catalog connections a PostgreSQL store keeps at most (pdi serve --db-connections): a command needs one;
#: a resolver worker's threads each hold one for a transaction, and wait for one when all are taken.
#: Here, not in :mod:`pdi.archive.postgres` (which imports psycopg): ``pdi serve`` on SQLite needs no psycopg.
DEFAULT_CONNECTIONS = 4


if TYPE_CHECKING:
    from dataclasses import dataclass

    from pdi.mail.message import ThreadIds
else:
    from pdi._later import dataclass

#: Records of a bag an import checks and writes at a time (a few statements a page), and so holds at once.
IMPORT_PAGE = 1000


#: Values one statement binds at most: within SQLite's 32,766 variables and PostgreSQL's 65,535 parameters.
MAX_PARAMETERS = 30_000


#: Rows one page of a keyset walk reads: a few MB of records.
PAGE_ROWS = 5000

#: One more change of who may read what counted for a series (schema step 27), by each writer of a rule.
RULE_CHANGED = "UPDATE series SET rules_changes = rules_changes + 1 WHERE name = ?"


T = TypeVar("T")


@dataclass(frozen=True)
class SearchAccess:
    """What a reader's search leaves out (pdi.archive.access): series it may not read, and what is embargoed
    at ``now`` outside the series it may read (``readable``)."""

    excluded: tuple[str, ...]
    readable: tuple[str, ...]
    now: str


class CatalogBase(ABC):
    """The connection, its transactions, and what one part of the catalog asks of another."""

    location: str
    id_pk: str = "INTEGER PRIMARY KEY"
    blob_type: str = "BLOB"
    blob_table: bool = False
    #: Appended to a SELECT that must lock the document row until commit.
    for_update: str = ""
    #: Appended to a SELECT that must hold a row until commit as an update of a column other than its key does (a row
    #: a writer of it waits for, a row referring to it does not).
    for_no_key_update: str = ""
    #: The statements of the full-text index that differ by database (schema step 5).
    search_schema: tuple[str, ...] = ()
    #: The statements of schema step 14 (PostgreSQL's deposit function; none on SQLite).
    deposit_schema: tuple[str, ...] = ()
    #: The statements of schema step 15 (SQLite's table of serial names and its triggers; none on PostgreSQL).
    names_schema: tuple[str, ...] = ()
    #: The statements of schema step 19 (PostgreSQL's index read again with each separator apart; none on SQLite).
    apart_schema: tuple[str, ...] = ()
    #: The statements of schema step 20 (PostgreSQL's index read again with ASCII punctuation as spaces; none on SQLite).
    ascii_apart_schema: tuple[str, ...] = ()
    #: The statements of schema step 23 (SQLite's index made again keeping combining marks in words; none on
    #: PostgreSQL, whose parser reads them so).
    marks_schema: tuple[str, ...] = ()
    #: ``sqlite`` or ``postgresql``: the database the catalog is in.
    dialect: str = "sqlite"
    #: Whether this process may only read the catalog (a member of the group of a SQLite archive shared with it):
    #: each write is refused with a :class:`~pdi.errors.ReadOnlyArchiveError`, and nothing is written on a read.
    read_only: bool = False
    #: The blob store the catalog holds (:mod:`pdi.archive.catalog.blobs`).
    blobs: BlobStore
    #: How a statement joins each of its documents ``d`` (a day's run of a listing, a page of the reader's) to its
    #: representations ``r``: a join, which SQLite plans as a look-up a document; PostgreSQL's differs.
    run_representations = "JOIN representations r ON r.document = d.id"

    # --- what a dialect supplies -------------------------------------------
    @abstractmethod
    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement and return its rows (empty for statements without rows)."""

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        """One statement whose rows are not wanted, in this thread's transaction.

        Its errors are those of :meth:`_query`, raised by the time the
        transaction commits: PostgreSQL sends it with the next statement that
        is waited for (one round trip for several). Nothing may catch an error
        of it in particular.
        """
        self._query(sql, params)

    @abstractmethod
    def _outermost(self, write: bool) -> AbstractContextManager[None]:
        """A database transaction (serializing writers when ``write``), rolled back on any exception."""

    @abstractmethod
    def _has_table(self, name: str) -> bool:
        """Whether a table of that name exists."""

    @abstractmethod
    def _has_column(self, table: str, column: str) -> bool:
        """Whether the table ``table`` has a column of that name."""

    @abstractmethod
    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """One statement (``?`` placeholders) run for each of ``rows``."""

    @abstractmethod
    def _delete_passages(self, sources: Sequence[tuple[str, str, str]] | None) -> None:
        """Take the passages of ``sources`` (all, for ``None``) out of the full-text index."""

    def _within(self, deadline: float | None) -> AbstractContextManager[None]:
        """Inside a transaction: the statements run within are cut off at ``deadline`` (a ``time.monotonic()``;
        ``None``: no bound), a :class:`TimeoutError` then, the transaction to be rolled back. The engine stops
        its own work (SQLite's progress handler, PostgreSQL's ``statement_timeout``): a statement that reads the
        whole catalog is not waited for to the end. Here: no engine to stop, no bound."""
        return nullcontext()

    def _ask_primary(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """A read that found nothing (or not what was wanted), asked again where it cannot lag: on a replica
        that may lag behind its primary, the rest of this thread's read transaction moves to the primary, which
        answers this statement (:mod:`pdi.archive.postgres`); here, one database, there is nowhere else: no rows."""
        return []

    def _lock_idempotency(self, token: int, key: str) -> None:
        """Inside a write transaction: hold off other writers with the same key (SQLite has one writer)."""
        return None

    def _lock_annotation_creates(self) -> None:
        """Inside a write transaction: hold off other annotation creates made on a condition of the container
        (SQLite has one writer: its write lock, taken at ``BEGIN IMMEDIATE``, is this lock)."""
        return None

    def _removal_lock(self, *, shared: bool, wait: bool = True) -> None:
        """Inside a write transaction: the lock between deposits (shared) and what deletes blobs (not ``wait``:
        taken before the statements after it, which need not wait for it: :meth:`_execute`).

        SQLite has one writer at a time: its write lock is the removal lock.
        """
        return None

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[None]:
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._depth = 1
            try:
                with self._outermost(write):
                    yield
            finally:
                self._depth = 0

    def _write(self) -> AbstractContextManager[None]:
        """A transaction that serializes writers and rolls back on any exception."""
        return self._transaction(True)

    def _read(self) -> AbstractContextManager[None]:
        """A read transaction. Each statement in it sees the catalog as one commit left it, but two statements may
        see two (PostgreSQL's READ COMMITTED): reads that must agree with each other take :meth:`_snapshot`."""
        return self._transaction(False)

    def _snapshot(self) -> AbstractContextManager[None]:
        """A read transaction whose every statement sees the catalog as it was at its first: nothing committed
        meanwhile (by another connection, another process) is seen inside it. Here SQLite's deferred ``BEGIN``,
        which in WAL mode holds the snapshot of its first read to its end; PostgreSQL begins a REPEATABLE READ,
        READ ONLY transaction (:meth:`pdi.archive.postgres.transactions.PostgresTransactions._snapshot`). Inside
        a transaction already begun, it joins it."""
        return self._read()

    def reading(self) -> AbstractContextManager[None]:
        """A read transaction that every read made within joins: several reads for one answer, one consistent view
        of the catalog (:meth:`_snapshot`), one ``BEGIN`` and ``COMMIT`` (here a read holds the one connection
        meanwhile)."""
        return self._snapshot()

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One statement (``?`` placeholders) in this thread's transaction, if any: its rows."""
        return self._query(sql, params)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        """One statement whose rows are not wanted (``?`` placeholders), perhaps sent with the next (:meth:`_execute`)."""
        self._execute(sql, params)

    def pool_waits(self) -> tuple[int, float]:
        """Requests that waited for a pooled catalog connection since this was last asked, and the seconds they
        waited: none here (one connection, no pool); PostgreSQL's pool counts them."""
        return 0, 0.0

    def refuse_if_read_only(self) -> None:
        """A :class:`~pdi.errors.ReadOnlyArchiveError` when this process may only read the catalog
        (:attr:`read_only`): said before a write begins (a blob staged, a transaction), not at its first refusal."""
        if self.read_only:
            raise ReadOnlyArchiveError(self.read_only_said())

    def read_only_said(self) -> str:
        """Why this process may not write the archive (:attr:`read_only`); a catalog says whose it is to write."""
        return f"cannot write the archive at {self.location}: this process may only read it"

    def close(self) -> None:
        """Release the connection, and the blob store's."""
        with self._lock:
            self.blobs.close()
            self._conn.close()

    def check_in_place(self) -> None:
        """A :class:`~pdi.errors.StoreError` when the catalog this store opened is no longer at its place (a file
        catalog moved aside and another restored there); here, a database, it always is."""
        return None

    def public_version(
        self, key: DocumentKey, version: int, token: str, now: Callable[[], str], octets: bool = True,
    ) -> PublicVersion | None:
        """Format ``token`` of ``version`` of ``key`` if anyone may read it now (``now()``, the moment as the catalog
        keeps one, asked only when an embargo is to be compared) and its octets are a local
        file with chunk digests, told by one statement read without the catalog's lock, in the calling thread;
        ``None`` for anything else (not there, private, embargoed, withdrawn, purged; a catalog or blob store that
        cannot tell so: then the usual reads, with the reader's guards, say what it is). Without ``octets``,
        ``data`` is ``None`` even for a small blob whose catalog row holds its octets (a caller that reads none).

        For a resolver's event loop, which must not wait for the connection a worker thread holds: see
        :meth:`pdi.archive.Archive.read_public`.
        """
        return None

    def public_serial_version(
        self, key: DocumentKey, version: int, token: str, now: Callable[[], str], name: str | None = None,
    ) -> PublicVersion | None:
        """:meth:`public_version` of a serial name (``key.unique_id``, the serial as ``pdi add`` spells it), as a
        catalog reads it fastest (SQLite: one row of its own, :mod:`pdi.archive.catalog.serial_names`); ``name``:
        the name these fields spell as ``pdi add`` prints it, when the caller holds it already."""
        return self.public_version(key, version, token, now)

    def public_serial_versions(
        self, asked: Sequence[tuple[DocumentKey, int, str, str]], now: Callable[[], str],
    ) -> list[PublicVersion | None]:
        """:meth:`public_serial_version` of each of ``asked`` (key, version, token, and the name as ``pdi add``
        spells it), as a catalog reads many fastest (SQLite: one statement for them all); here, one by one."""
        return [self.public_serial_version(key, version, token, now, name) for key, version, token, name in asked]

    def public_serial_named(
        self, name: str, series: str, now: Callable[[], str],
    ) -> SmallPublic | PublicVersion | None:
        """What :meth:`public_serial_version` tells of the serial name ``name`` (of ``series``), spelled as ``pdi
        add`` prints it (the caller checked the spelling), read by that name alone: for a version of one format
        whose octets are a small blob kept in the catalog's row, not embargoed, the :data:`SmallPublic` tuple of
        what its answer needs (no record made; the octets not checked: the caller hashes them against the digest),
        else the :class:`PublicVersion`, or ``None`` (not there for anyone now, or a catalog that cannot tell so
        in one step: here, and on PostgreSQL)."""
        return None

    def public_digest(self, name: str, series: str, now: Callable[[], str]) -> str | None:
        """The SHA-256 of what the versioned name ``name`` (of ``series``), spelled as ``pdi add`` prints it, names if
        anyone may read it now, read without the catalog's lock in the calling thread; ``None`` for anything else,
        or where the catalog cannot tell so in one step (here, and on PostgreSQL: the usual reads, by the
        resolver's endpoint, say what it is)."""
        return None

    def generation_at_once(self) -> int | None:
        """:meth:`withdrawals_generation`, read as :meth:`public_version` reads (in the calling thread, without the
        catalog's lock); ``None`` where it cannot be (then ask :meth:`withdrawals_generation` off the event loop)."""
        return None

    # By default a catalog has one connection, guarded by ``_lock`` (SQLite); a
    # transaction opened inside another joins it. PostgreSQL overrides
    # ``_transaction`` with a pool: a connection per thread's transaction.
    _conn: Any
    _lock: threading.RLock
    _depth: int = 0

    # --- relations of many rows (imports, look-ups by many keys) -------------------
    def _rows(self, types: Sequence[str], rows: Sequence[Sequence[Any]]) -> tuple[str, list[Any]]:
        """``rows`` as a relation ``k`` (columns ``column1`` …, of SQL ``types``): its SQL and parameters.

        Here a ``VALUES`` list; PostgreSQL binds a column an array instead.
        """
        mark = "(" + ", ".join("?" * len(types)) + ")"
        return f"(VALUES {', '.join([mark] * len(rows))}) k", [value for row in rows for value in row]

    def _insert_rows(
        self, head: str, types: Sequence[str], rows: Sequence[Sequence[Any]], tail: str = "", *, wanted: bool = True
    ) -> list[tuple[Any, ...]]:
        """``head`` (an ``INSERT INTO t (…)``) of every row, in as few statements as the databases' limits allow
        (its rows, unless not ``wanted``: then sent as :meth:`_execute`)."""
        found: list[tuple[Any, ...]] = []
        for chunk in pages(rows, MAX_PARAMETERS // len(types)):
            relation, params = self._rows(types, chunk)
            # WHERE true: SQLite reads ON CONFLICT after a bare FROM as a join's
            sql = f"{head} SELECT * FROM {relation} WHERE true{tail}"
            if wanted:
                found += self._query(sql, params)
            else:
                self._execute(sql, params)
        return found

    # --- used by several parts --------------------------------------------------
    def _insert_audit(self, entry: AuditRecord) -> None:
        self._execute(
            "INSERT INTO audit_log (at, who, action, subject, detail, address) VALUES (?, ?, ?, ?, ?, ?)",
            (entry.at, entry.who, entry.action, entry.subject, entry.detail, entry.address),
        )

    def _document_id(self, key: DocumentKey, *, lock: bool = False) -> int | None:
        sql = "SELECT id FROM documents WHERE series = ? AND day = ? AND unique_id = ?" + (self.for_update if lock else "")
        params = (key.series, key.day.isoformat(), key.unique_id)
        rows = self._query(sql, params) or self._ask_primary(sql, params)  # minted, perhaps, not yet replicated
        return int(rows[0][0]) if rows else None

    def _check_document(self, key: DocumentKey, *, lock: bool = False) -> int:
        doc = self._document_id(key, lock=lock)
        if doc is None:
            raise NotFoundError(f"no document {describe_key(key)} in the archive")
        return doc

    # --- what one part asks of another (each defined in the part named) ---------------
    @abstractmethod
    def _secure(self, pins: Sequence[BlobPin]) -> None:
        """Inside the catalog write transaction: every staged blob is still in place (:mod:`.blobs`)."""

    @abstractmethod
    def _staged(self, blobs: Sequence[StagedBlob]) -> AbstractContextManager[Sequence[StagedBlob]]:
        """The staged blobs of a deposit (:mod:`.blobs`)."""

    @abstractmethod
    def _store_blobs(self, blobs: Sequence[StagedBlob]) -> None:
        """Inside the catalog transaction: record staged blobs (:mod:`.blobs`)."""

    @abstractmethod
    def _stage_import(self, blobs: Iterable[tuple[str, BlobSource]]) -> tuple[list[StagedBlob], ImportDurability]:
        """Stage the blobs of an import, and what makes them durable, begun (:mod:`.blobs`)."""

    @abstractmethod
    def open_blob(self, sha256: str, *, name: str) -> ChunkedReader | None:
        """A reader of the stored blob by verified chunks, or ``None`` if it is missing (:mod:`.blobs`)."""

    @abstractmethod
    def fragment_index(self, sha256: str, media_type: str, charset: str | None) -> bytes | None:
        """The index made at deposit for these octets read as ``media_type`` in ``charset``, if any (:mod:`.blobs`)."""

    @abstractmethod
    def _index_source(self, sha256: str, media_type: str, charset: str | None, passages: Any) -> None:
        """Inside a write transaction: the passages of one blob into the full-text index (:mod:`.search_index`)."""

    @abstractmethod
    def _queue_index(self, sha256: str, media_type: str, charset: str | None, size: int, at: str) -> None:
        """Inside a write transaction: leave a blob's passages to the indexer's queue (:mod:`.search_index`)."""

    @abstractmethod
    def _index_stored(
        self, sha256: str, media_type: str, charset: str | None, *, size: int = 0, at: str = ""
    ) -> None:
        """Inside a write transaction: index a stored blob if it has text, or queue it if large (:mod:`.search_index`)."""

    @abstractmethod
    def _insert_thread(self, sha256: str, thread: ThreadIds | None) -> None:
        """Inside a write transaction: a message's ids into the thread index, once (:mod:`.messages`)."""

    @abstractmethod
    def _thread_stored(self, sha256: str) -> None:
        """Inside a write transaction: index a stored message, read again from the blob store (:mod:`.messages`)."""

    @abstractmethod
    def _insert_series(self, record: SeriesRecord) -> None:
        """Inside a write transaction: register a series (:mod:`.documents`)."""

    @abstractmethod
    def _insert_assertions(
        self, key: DocumentKey, subject: str, pairs: Sequence[tuple[str, str]], who: str, at: str,
    ) -> list[AssertionRecord]:
        """Inside a write transaction: statements about one subject of the document ``key`` (:mod:`.statements`)."""


def pages(items: Iterable[T], size: int = IMPORT_PAGE) -> Iterator[list[T]]:
    """``items`` a list of ``size`` at a time (the last one shorter), never all of them."""
    page: list[T] = []
    for item in items:
        page.append(item)
        if len(page) >= size:
            yield page
            page = []
    if page:
        yield page


def describe_key(key: DocumentKey) -> str:
    """How a refusal names the document ``key``: its generic name, which a reader can give to ``pdi get`` (it said
    ``oma.eop.gov.us 2026-11-22 1``, which no command reads)."""
    from pdi.archive.naming import generic_name

    return generic_name(key)


def key_of(rec: RepresentationRecord) -> DocumentKey:
    return DocumentKey(rec.series, rec.day, rec.unique_id)


def timestamp() -> str:
    return timestamp_ago(0)


def timestamp_ago(seconds: float) -> str:
    """The catalog's timestamp of the moment ``seconds`` before now."""
    moment = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
