"""The SQL both stores share: schema, migrations and every catalog operation.

A backend supplies the dialect (a few type names), a way to run statements,
a transaction that serializes writers, and where blob bytes live. Statements
are written with ``?`` placeholders; the PostgreSQL backend rewrites them.

Gap-free daily serials: the counter row ``daily_serials(series, day)`` is
incremented inside the deposit's own transaction. A second writer waits for
the row (PostgreSQL) or the database write lock (SQLite), so two deposits can
never take the same serial, and a deposit that fails or is killed rolls its
increment back with everything else, so no serial is ever skipped.

An import (:meth:`SQLStore.import_all`) is checked and written a page of
records at a time: a page's rows are a relation ``k`` (:meth:`SQLStore._rows`:
a ``VALUES`` list here, an array a column on PostgreSQL) that one statement
looks up or inserts, so a page costs a few round trips, not a few a record.
"""

from __future__ import annotations

import contextlib
import datetime
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pdi._wording import plural
from pdi.archive.blobs import BlobInfo, ChunkedReader, Octets
from pdi.archive.sql_browse import BrowseQueries
from pdi.archive.store import (
    SCHEMA_VERSION,
    STORED_EXACT,
    AnnotationRecord,
    AssertionRecord,
    AuditRecord,
    BlobObserver,
    BlobPin,
    BlobSource,
    BlobUse,
    CatalogProblem,
    DepositResult,
    DocumentKey,
    ListKey,
    ListQuery,
    NewRepresentation,
    RepresentationRecord,
    SearchKey,
    SearchRow,
    SeriesRecord,
    StagedBlob,
    TokenRecord,
    WithdrawalRecord,
    WriteNote,
    blob_octets,
)
from pdi.errors import ImmutabilityError, IntegrityError, NotFoundError, ParseError, StoreError
from pdi.identifier import spells_serial

if TYPE_CHECKING:
    from pdi.passages.fulltext import Passage


def migrations(
    id_pk: str, blob_type: str, with_blob_table: bool, search: Sequence[str] = ()
) -> dict[int, list[str]]:
    """Schema migrations by version; version *n* takes a catalog from *n-1* to *n*.

    ``search`` are the statements of the full-text index that differ by
    database (SQLite's FTS5 table, PostgreSQL's tsvector and GIN index).
    """
    first = [
        """CREATE TABLE series (
            name TEXT PRIMARY KEY,
            parent TEXT REFERENCES series(name),
            authority TEXT NOT NULL,
            created_at TEXT NOT NULL)""",
        f"""CREATE TABLE documents (
            id {id_pk},
            series TEXT NOT NULL REFERENCES series(name),
            day TEXT NOT NULL,
            year INTEGER NOT NULL,
            month INTEGER NOT NULL,
            dom INTEGER NOT NULL,
            unique_id TEXT NOT NULL,
            serial INTEGER,
            created_at TEXT NOT NULL,
            UNIQUE (series, day, unique_id))""",
        """CREATE TABLE daily_serials (
            series TEXT NOT NULL REFERENCES series(name),
            day TEXT NOT NULL,
            last INTEGER NOT NULL,
            PRIMARY KEY (series, day))""",
        """CREATE TABLE versions (
            document INTEGER NOT NULL REFERENCES documents(id),
            version INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (document, version))""",
        """CREATE TABLE representations (
            document INTEGER NOT NULL,
            version INTEGER NOT NULL,
            format TEXT NOT NULL,
            media_type TEXT NOT NULL,
            charset TEXT,
            line_ending TEXT,
            sha256 TEXT NOT NULL,
            size BIGINT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (document, version, format),
            FOREIGN KEY (document, version) REFERENCES versions(document, version))""",
        f"""CREATE TABLE assertions (
            id {id_pk},
            document INTEGER NOT NULL REFERENCES documents(id),
            subject TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            who TEXT NOT NULL,
            at TEXT NOT NULL)""",
    ]
    if with_blob_table:
        first.append(f"CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, data {blob_type} NOT NULL)")
    second = [
        "CREATE INDEX documents_by_day ON documents (day, serial, unique_id)",
        "CREATE INDEX assertions_by_subject ON assertions (subject, id)",
        "CREATE INDEX representations_by_sha ON representations (sha256)",
    ]
    third = [
        # Every write, appended: who (a user, or a token's name), when, what, about
        # which name, from which address. Imports record themselves here today.
        f"""CREATE TABLE audit_log (
            id {id_pk},
            at TEXT NOT NULL,
            who TEXT NOT NULL,
            action TEXT NOT NULL,
            subject TEXT NOT NULL,
            detail TEXT NOT NULL,
            address TEXT)""",
    ]
    fourth = [
        # The deposited octets are kept exactly from now on; a text stored before
        # (its line-ending convention recorded) was kept only CRLF-canonical.
        "ALTER TABLE representations ADD COLUMN stored TEXT NOT NULL DEFAULT 'exact'",
        "UPDATE representations SET stored = 'canonical' WHERE line_ending IS NOT NULL",
        # One SHA-256 per chunk of each blob, so a range read verifies only what it touches.
        f"""CREATE TABLE blob_fixity (
            sha256 TEXT PRIMARY KEY,
            size BIGINT NOT NULL,
            chunk_size INTEGER NOT NULL,
            chunks {blob_type} NOT NULL,
            created_at TEXT NOT NULL)""",
        # What a fragment query reads instead of the whole text (pdi.fragments.build_index),
        # made once at deposit, for the octets of one blob read as one media type and charset.
        f"""CREATE TABLE fragment_indexes (
            sha256 TEXT NOT NULL,
            media_type TEXT NOT NULL,
            charset TEXT NOT NULL,
            data {blob_type} NOT NULL,
            PRIMARY KEY (sha256, media_type, charset))""",
    ]
    if with_blob_table:
        # Blobs uploaded in chunk-sized rows before (not inside) the catalog
        # transaction that names them; an old blob keeps its bytea.
        fourth += [
            f"""CREATE TABLE blob_uploads (
                id {id_pk},
                started_at TEXT NOT NULL,
                sha256 TEXT)""",
            """CREATE TABLE blob_parts (
                upload BIGINT NOT NULL REFERENCES blob_uploads(id) ON DELETE CASCADE,
                n INTEGER NOT NULL,
                data BYTEA NOT NULL,
                PRIMARY KEY (upload, n))""",
            # 1 MiB of already-compressed or random octets gains nothing from pglz
            "ALTER TABLE blob_parts ALTER COLUMN data SET STORAGE EXTERNAL",
            "ALTER TABLE blobs ALTER COLUMN data DROP NOT NULL",
            "ALTER TABLE blobs ADD COLUMN upload BIGINT REFERENCES blob_uploads(id)",
        ]
    fifth = [
        # Bearer tokens of the write API: only a SHA-256 of each is kept (pdi.archive.tokens).
        f"""CREATE TABLE tokens (
            id {id_pk},
            name TEXT NOT NULL UNIQUE,
            digest TEXT NOT NULL UNIQUE,
            role TEXT NOT NULL,
            series TEXT NOT NULL,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            revoked_at TEXT)""",
        # The first answer to each Idempotency-Key of a token, written in the
        # transaction of the write it answers, so a retry can never mint twice.
        """CREATE TABLE idempotency_keys (
            token INTEGER NOT NULL REFERENCES tokens(id),
            key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            series TEXT NOT NULL,
            day TEXT NOT NULL,
            unique_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            unchanged INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            item INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (token, key, item))""",
        # Tombstones: a version (or, version NULL, a whole document) withdrawn, and why.
        f"""CREATE TABLE withdrawals (
            id {id_pk},
            document INTEGER NOT NULL REFERENCES documents(id),
            version INTEGER,
            reason TEXT NOT NULL,
            who TEXT NOT NULL,
            at TEXT NOT NULL)""",
        "CREATE INDEX withdrawals_by_document ON withdrawals (document, version)",
        # The reader's pages: the captures of one URL (documents whose encapsulated
        # id is that URL) over every day and series, and a document's statements.
        "CREATE INDEX documents_by_unique_id ON documents (unique_id, day, series)",
        "CREATE INDEX assertions_by_document ON assertions (document, id)",
        # How many documents each series has on each GMT day, and when any of them
        # last had a deposit, kept by the deposit's transaction (as daily_serials is),
        # so counts by year, month and day read a row a day rather than every document.
        """CREATE TABLE document_days (
            series TEXT NOT NULL REFERENCES series(name),
            day TEXT NOT NULL,
            documents BIGINT NOT NULL,
            last_deposit TEXT,
            PRIMARY KEY (series, day))""",
        "INSERT INTO document_days (series, day, documents, last_deposit)"
        " SELECT d.series, d.day, COUNT(DISTINCT d.id), MAX(r.created_at) FROM documents d"
        " LEFT JOIN representations r ON r.document = d.id GROUP BY d.series, d.day",
        # Each fixity check of a blob (pdi verify): when, and whether its bytes
        # still had their SHA-256 and size (problem: what was found when not).
        """CREATE TABLE fixity_checks (
            sha256 TEXT NOT NULL,
            checked_at TEXT NOT NULL,
            ok INTEGER NOT NULL,
            problem TEXT,
            PRIMARY KEY (sha256, checked_at))""",
        # The full-text index (pdi.fulltext), made at deposit for the octets of one blob
        # read as one media type and charset: which were indexed (passages: how many;
        # note: why none, when the text could not be read), and their passages.
        """CREATE TABLE search_sources (
            sha256 TEXT NOT NULL,
            media_type TEXT NOT NULL,
            charset TEXT NOT NULL,
            passages INTEGER NOT NULL,
            note TEXT,
            indexed_at TEXT NOT NULL,
            PRIMARY KEY (sha256, media_type, charset))""",
        f"""CREATE TABLE search_passages (
            id {id_pk},
            sha256 TEXT NOT NULL,
            media_type TEXT NOT NULL,
            charset TEXT NOT NULL,
            start BIGINT NOT NULL,
            body TEXT NOT NULL,
            runs {blob_type} NOT NULL)""",
        "CREATE INDEX search_passages_by_source ON search_passages (sha256, media_type, charset, start)",
        *search,
        # Where the blobs live when not in the catalog's own store: one row,
        # e.g. s3://bucket/prefix (never a credential). No row: files or PostgreSQL.
        """CREATE TABLE blob_store (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            url TEXT NOT NULL,
            created_at TEXT NOT NULL)""",
        # Blobs being staged in an external blob store by a deposit in progress:
        # the remover keeps their objects (pdi.archive.blobs.paired).
        """CREATE TABLE blob_stagings (
            id TEXT PRIMARY KEY,
            sha256 TEXT,
            started_at TEXT NOT NULL)""",
    ]
    sixth = [
        # Purge (a legal takedown of a withdrawn name): when a representation's
        # octets were deleted (NULL: kept), and whether a withdrawal purged them.
        "ALTER TABLE representations ADD COLUMN purged TEXT",
        "ALTER TABLE withdrawals ADD COLUMN purged INTEGER NOT NULL DEFAULT 0",
        # Private series (pdi.archive.access): public, private (403) or hidden (404).
        "ALTER TABLE series ADD COLUMN access TEXT NOT NULL DEFAULT 'public'",
        # Embargoes: a whole document or one version unreadable until then (a catalog timestamp).
        "ALTER TABLE documents ADD COLUMN embargo_until TEXT",
        "ALTER TABLE versions ADD COLUMN embargo_until TEXT",
        # One row per change of who may read what, so every resolver's cache can
        # tell that an answer it keeps may no longer be public (pdi.server.cache).
        f"""CREATE TABLE access_changes (
            id {id_pk},
            at TEXT NOT NULL)""",
    ]
    seventh = [
        # The annotation server (pdi.archive.kept_annotations, W3C Web Annotation Protocol): each annotation's
        # JSON without its id (slug: its name in the container, never used again once deleted), and
        # the archived documents it targets, whose readers alone may read it.
        f"""CREATE TABLE annotations (
            id {id_pk},
            slug TEXT NOT NULL UNIQUE,
            data TEXT NOT NULL,
            revision INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            modified_at TEXT,
            deleted_at TEXT)""",
        """CREATE TABLE annotation_targets (
            annotation BIGINT NOT NULL REFERENCES annotations(id),
            document BIGINT NOT NULL REFERENCES documents(id),
            version INTEGER)""",
        "CREATE INDEX annotation_targets_by_annotation ON annotation_targets (annotation)",
        "CREATE INDEX annotation_targets_by_document ON annotation_targets (document)",
        # The embargoes not yet over, found by index (few rows), so that every list a reader
        # without a token is shown leaves them out at the cost of the embargoes alone (issue 22).
        "CREATE INDEX documents_embargoed ON documents (embargo_until) WHERE embargo_until IS NOT NULL",
        "CREATE INDEX versions_embargoed ON versions (embargo_until) WHERE embargo_until IS NOT NULL",
    ]
    return {1: first, 2: second, 3: third, 4: fourth, 5: fifth, 6: sixth, 7: seventh}


_REP_COLUMNS = (
    "d.series, d.day, d.unique_id, d.serial, r.version, r.format, r.media_type,"
    " r.charset, r.line_ending, r.sha256, r.size, r.created_at, r.stored, r.purged"
)
#: The columns of a representation's record (:func:`_rep`), for a store's own queries.
REP_COLUMNS = _REP_COLUMNS
_ORDER = " ORDER BY d.day, d.serial IS NULL, d.serial, d.unique_id, d.series, r.version, r.format"

#: Records of a bag an import checks and writes at a time (a few statements a page), and so holds at once.
IMPORT_PAGE = 1000
#: Values one statement binds at most: within SQLite's 32,766 variables and PostgreSQL's 65,535 parameters.
MAX_PARAMETERS = 30_000
#: Days whose numbering an import's check asks of the catalog in one statement.
NUMBERING_DAYS = 500
#: Rows one page of a keyset walk reads: a few MB of records.
PAGE_ROWS = 5000
#: Documents one query of :meth:`SQLStore.withdrawals_of` looks up (3 parameters each, within SQLite's limit).
_KEYS_A_QUERY = MAX_PARAMETERS // 3
#: The keys of a day's two runs in listing order (:class:`~pdi.archive.store.ListKey`):
#: serial documents, then those with a foreign id. Each begins with the columns
#: of the index ``documents_by_day (day, serial, unique_id)`` after the day, so a
#: page is a range of it; series, version and format order rows that tie there.
_SERIAL_RUN = ("d.serial", "d.unique_id", "d.series", "r.version", "r.format")
_FOREIGN_RUN = ("d.unique_id", "d.series", "r.version", "r.format")


def _day_range(filters: dict[str, Any]) -> tuple[str, str] | None:
    """``[first, after last)`` of the GMT days (ISO dates, which sort as dates) a year, month and day filter allow.

    ``None`` when they allow no one range: no year, a day without its month,
    or a date that does not exist (the equality filters then select nothing).
    """
    year, month, day = filters.get("d.year"), filters.get("d.month"), filters.get("d.dom")
    if year is None or (day is not None and month is None):
        return None
    try:
        if month is None:
            first, last = datetime.date(year, 1, 1), datetime.date(year + 1, 1, 1)
        elif day is None:
            first = datetime.date(year, month, 1)
            last = datetime.date(year + month // 12, month % 12 + 1, 1)
        else:
            first = datetime.date(year, month, day)
            last = first + datetime.timedelta(days=1)
    except (ValueError, OverflowError):
        return None
    return first.isoformat(), last.isoformat()


def _run_key(key: ListKey, serials: bool) -> tuple[Any, ...]:
    """The values of ``key`` for the columns of its run (:data:`_SERIAL_RUN` or :data:`_FOREIGN_RUN`)."""
    head: tuple[Any, ...] = (key.serial, key.unique_id) if serials else (key.unique_id,)
    return (*head, key.series, key.version, key.format)


def _blob_scope(series: Sequence[str] | None) -> tuple[str, list[Any]]:
    """``FROM … WHERE …`` of the representations whose blobs a walk takes: all, or those of ``series``."""
    if series is None:
        return "FROM representations r WHERE 1 = 1", []
    marks = ", ".join("?" * len(series)) or "NULL"
    return (
        f"FROM representations r JOIN documents d ON d.id = r.document WHERE d.series IN ({marks})",
        list(series),
    )


@dataclass(frozen=True)
class SearchAccess:
    """What a reader's search leaves out (pdi.archive.access): series it may not read, and what is embargoed
    at ``now`` outside the series it may read (``readable``)."""

    excluded: tuple[str, ...]
    readable: tuple[str, ...]
    now: str


def search_scope(access: SearchAccess | None) -> tuple[str, list[Any]]:
    """The ``AND …`` that keeps a search to what may be shown: names keeping their octets, and what ``access`` allows."""
    sql = " AND r.purged IS NULL"
    params: list[Any] = []
    if access is None:
        return sql, params
    if access.excluded:
        sql += f" AND d.series NOT IN ({', '.join('?' * len(access.excluded))})"
        params += access.excluded
    exempt = f"d.series IN ({', '.join('?' * len(access.readable))}) OR " if access.readable else ""
    sql += (
        f" AND ({exempt}((d.embargo_until IS NULL OR d.embargo_until <= ?) AND NOT EXISTS"
        " (SELECT 1 FROM versions v WHERE v.document = d.id AND v.version = r.version AND v.embargo_until > ?)))"
    )
    params += [*access.readable, access.now, access.now]
    return sql, params


def search_page(
    sql: str, params: list[Any], series: str | None, access: SearchAccess | None, after: Any, limit: int
) -> tuple[str, list[Any]]:
    """A search's ``sql`` (either store's match of the passages) with what both stores add after it.

    The series asked for, :func:`search_scope`, the keyset page after
    ``after`` (a :class:`~pdi.archive.search.SearchKey`: score, then passage,
    document, version and format) and its order and ``limit``.
    """
    params = list(params)
    if series is not None:
        sql += " AND d.series = ?"
        params.append(series)
    scope, bound = search_scope(access)
    sql += scope
    params += bound
    if after is not None:
        sql += " AND (s.score > ? OR (s.score = ? AND (p.id, d.id, r.version, r.format) > (?, ?, ?, ?)))"
        params += [after.score, after.score, after.passage, after.document, after.version, after.format]
    sql += " ORDER BY s.score, p.id, d.id, r.version, r.format LIMIT ?"
    return sql, [*params, limit]


def _blob_use(sha256: str, rows: list[tuple[Any, ...]]) -> BlobUse:
    """A :class:`BlobUse` from the grouped rows of one blob (sha256, format, media type, charset, line ending, count, min, max)."""
    return BlobUse(
        sha256,
        sum(int(r[5]) for r in rows),
        (min(int(r[6]) for r in rows), max(int(r[7]) for r in rows)),
        tuple(
            (str(r[1]), str(r[2]), None if r[3] is None else str(r[3]), None if r[4] is None else str(r[4]))
            for r in rows
        ),
        sum(int(r[8]) for r in rows),
    )


def _rep(row: Sequence[Any]) -> RepresentationRecord:
    return RepresentationRecord(
        series=str(row[0]),
        day=datetime.date.fromisoformat(str(row[1])),
        unique_id=str(row[2]),
        serial=None if row[3] is None else int(row[3]),
        version=int(row[4]),
        format=str(row[5]),
        media_type=str(row[6]),
        charset=None if row[7] is None else str(row[7]),
        line_ending=None if row[8] is None else str(row[8]),
        sha256=str(row[9]),
        size=int(row[10]),
        created_at=str(row[11]),
        stored=str(row[12]),
        purged=None if row[13] is None else str(row[13]),
    )


def _assertion(row: Sequence[Any]) -> AssertionRecord:
    return AssertionRecord(
        id=int(row[0]),
        subject=str(row[1]),
        key=str(row[2]),
        value=str(row[3]),
        who=str(row[4]),
        at=str(row[5]),
    )


class SQLStore(BrowseQueries, ABC):
    """Catalog operations over a SQL database; subclasses supply the dialect and blobs."""

    location: str
    id_pk: str = "INTEGER PRIMARY KEY"
    blob_type: str = "BLOB"
    blob_table: bool = False
    #: Appended to a SELECT that must lock the document row until commit.
    for_update: str = ""
    #: The statements of the full-text index that differ by database (schema step 5).
    search_schema: tuple[str, ...] = ()

    # --- what a backend supplies -------------------------------------------
    @abstractmethod
    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement and return its rows (empty for statements without rows)."""

    @abstractmethod
    def _outermost(self, write: bool) -> AbstractContextManager[None]:
        """A database transaction (serializing writers when ``write``), rolled back on any exception."""

    # By default a store has one connection, guarded by ``_lock`` (SQLite); a
    # transaction opened inside another joins it. PostgreSQL overrides
    # ``_transaction`` with a pool: a connection per thread's transaction.
    _conn: Any
    _lock: threading.RLock
    _depth: int = 0

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
        """A read transaction (a consistent snapshot)."""
        return self._transaction(False)

    @abstractmethod
    def stage_blob(self, source: Octets, observe: BlobObserver | None = None) -> StagedBlob:
        """Write a blob from a stream, hashing it, before the catalog transaction that will name it.

        The returned pin keeps :meth:`remove_unreferenced` off the blob until
        it is closed (after the catalog transaction that names it has ended).
        ``observe`` sees every piece and its ``finish`` runs before the blob is
        placed: an exception from it leaves nothing behind.
        """

    def _stage_import(self, blobs: Iterable[tuple[str, BlobSource]]) -> list[StagedBlob]:
        """Stage the blobs of an import, each checked against the SHA-256 its record names.

        This default stages one blob after the other; a store may do better
        (SQLite places none until all are read).
        """
        staged: list[StagedBlob] = []
        seen: set[str] = set()
        try:
            for sha256, content in blobs:
                if sha256 in seen:
                    continue
                seen.add(sha256)
                blob = self.stage_blob(blob_octets(content))
                staged.append(blob)
                check_imported_blob(sha256, blob.info.sha256)
        except BaseException:
            _discard(staged)
            raise
        return staged

    @contextmanager
    def _staged(self, blobs: Sequence[StagedBlob]) -> Iterator[Sequence[StagedBlob]]:
        """The staged blobs of a deposit, for :meth:`_secure` inside its catalog transaction.

        Whoever staged them (:class:`pdi.archive.Archive`) releases them after
        the deposit, or discards them when it failed.
        """
        yield blobs

    def _secure(self, pins: Sequence[BlobPin]) -> None:
        """Inside the catalog write transaction: make sure every staged blob is still in place.

        Nothing removes a blob while a writer holds the catalog, so a blob in
        place now stays until the deposit that names it has committed. The
        default has nothing outside the catalog to check.
        """
        for pin in pins:
            pin.secure()

    def _store_blob(self, blob: StagedBlob) -> None:
        """Inside the catalog transaction: record a staged blob's chunk digests (and where a store keeps it)."""
        info = blob.info
        self._query(
            "INSERT INTO blob_fixity (sha256, size, chunk_size, chunks, created_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
            (info.sha256, info.size, info.chunk_size, info.chunks, _now()),
        )

    def _store_blobs(self, blobs: Sequence[StagedBlob]) -> None:
        """Inside an import's transaction: :meth:`_store_blob` for each of a page's new blobs (a store may batch them)."""
        for blob in blobs:
            self._store_blob(blob)

    def blob_info(self, sha256: str) -> BlobInfo | None:
        """What the catalog knows of a blob: its chunk digests, or (stored before them) its size alone."""
        with self._read():
            rows = self._query(
                "SELECT size, chunk_size, chunks FROM blob_fixity WHERE sha256 = ?", (sha256,)
            )
            if rows:
                size, chunk_size, chunks = rows[0]
                return BlobInfo(sha256, int(size), int(chunk_size), bytes(chunks))
            rows = self._query("SELECT size FROM representations WHERE sha256 = ? LIMIT 1", (sha256,))
        return BlobInfo(sha256, int(rows[0][0])) if rows else None

    def fragment_index(self, sha256: str, media_type: str, charset: str | None) -> bytes | None:
        """The index made at deposit for these octets read as ``media_type`` in ``charset``, if any."""
        with self._read():
            rows = self._query(
                "SELECT data FROM fragment_indexes WHERE sha256 = ? AND media_type = ? AND charset = ?",
                (sha256, media_type, charset or ""),
            )
        return bytes(rows[0][0]) if rows else None

    @abstractmethod
    def open_blob(self, sha256: str, *, name: str) -> ChunkedReader | None:
        """A reader of the stored blob by verified chunks, or ``None`` if it is missing."""

    def read_blob(self, sha256: str) -> bytes | None:
        """The stored bytes named by ``sha256``, verified, or ``None`` if missing (hold only what you can hold)."""
        reader = self.open_blob(sha256, name=sha256)
        if reader is None:
            return None
        with reader:
            return reader.read()

    @abstractmethod
    def blob_names(self) -> set[str]:
        """The SHA-256 names of every stored blob."""

    @abstractmethod
    def iter_blob_names(self) -> Iterator[str]:
        """The names of every stored blob in ascending order (that of the catalog's ``ORDER BY sha256``), without holding them all."""

    def remove_unreferenced(self, older_than: float) -> list[str]:
        """Delete stored blobs that no name holds, older than ``older_than`` seconds; their names.

        Only a store that writes blobs before its catalog transaction can have
        any (SQLite's files); this default has none to remove.
        """
        return []

    def close(self) -> None:
        """Release the connection."""
        with self._lock:
            self._conn.close()

    # --- which blob store --------------------------------------------------------
    def blob_store_url(self) -> str | None:
        """The external blob store recorded at ``pdi init`` (``s3://…``), or ``None`` for the store's own."""
        with self._read():
            rows = self._query("SELECT url FROM blob_store WHERE id = 1")
        return str(rows[0][0]) if rows else None

    def record_blob_store(self, url: str) -> None:
        """Record the external blob store of a new archive (one that names no blob yet)."""
        with self._write():
            if self._query("SELECT 1 FROM representations LIMIT 1"):
                raise StoreError(
                    f"the archive at {self.location} already holds documents in its own blob store;"
                    " a blob store is chosen when an archive is created"
                )
            self._query("INSERT INTO blob_store (id, url, created_at) VALUES (1, ?, ?)", (url, _now()))

    # --- schema --------------------------------------------------------------
    def schema_version(self) -> int:
        with self._read():
            if not self._has_table("schema_migrations"):
                return 0
            rows = self._query("SELECT MAX(version) FROM schema_migrations")
        return int(rows[0][0] or 0)

    @abstractmethod
    def _has_table(self, name: str) -> bool:
        """Whether a table of that name exists."""

    def migrate(self, target: int = SCHEMA_VERSION) -> int:
        """Apply missing migrations up to ``target``; returns the schema version now."""
        steps = migrations(self.id_pk, self.blob_type, self.blob_table, self.search_schema)
        with self._write():
            if not self._has_table("schema_migrations"):
                self._query(
                    "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
                )
            rows = self._query("SELECT MAX(version) FROM schema_migrations")
            current = int(rows[0][0] or 0)
            if current > SCHEMA_VERSION:
                raise StoreError(
                    f"the archive at {self.location} has schema version {current}, newer than "
                    f"this pdi understands ({SCHEMA_VERSION}); upgrade pdi"
                )
            for version in range(current + 1, target + 1):
                for statement in steps[version]:
                    self._query(statement)
                self._query(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                    (version, _now()),
                )
                current = version
        return current

    # --- series ----------------------------------------------------------------
    def add_series(self, record: SeriesRecord) -> None:
        with self._write():
            self._insert_series(record)

    def _insert_series(self, record: SeriesRecord) -> None:
        if self._query("SELECT 1 FROM series WHERE name = ?", (record.name,)):
            raise ImmutabilityError(f"series {record.name} is already registered")
        if record.parent is not None and not self._query(
            "SELECT 1 FROM series WHERE name = ?", (record.parent,)
        ):
            raise NotFoundError(f"parent series {record.parent} is not registered")
        self._query(
            "INSERT INTO series (name, parent, authority, created_at, access) VALUES (?, ?, ?, ?, ?)",
            (record.name, record.parent, record.authority, record.created_at, record.access),
        )

    def get_series(self, name: str) -> SeriesRecord | None:
        with self._read():
            rows = self._query(
                "SELECT name, parent, authority, created_at, access FROM series WHERE name = ?", (name,)
            )
        if not rows:
            return None
        r = rows[0]
        return SeriesRecord(str(r[0]), None if r[1] is None else str(r[1]), str(r[2]), str(r[3]), str(r[4]))

    def list_series(self) -> list[SeriesRecord]:
        with self._read():
            rows = self._query(
                "SELECT name, parent, authority, created_at, access FROM series ORDER BY name"
            )
        return [
            SeriesRecord(str(r[0]), None if r[1] is None else str(r[1]), str(r[2]), str(r[3]), str(r[4]))
            for r in rows
        ]

    # --- private series and embargoes (pdi.archive.access) ---------------------------------
    def set_series_access(self, name: str, access: str, who: str, at: str, *, address: str | None = None) -> None:
        """Make a series public, private or hidden; audited, and counted as an access change."""
        with self._write():
            if not self._query("UPDATE series SET access = ? WHERE name = ? RETURNING name", (access, name)):
                raise NotFoundError(f"series {name} is not registered")
            self._query("INSERT INTO access_changes (at) VALUES (?)", (at,))
            self._insert_audit(AuditRecord(at, who, "series-access", name, access, address))

    def set_embargo(
        self, key: DocumentKey, version: int | None, until: str | None, who: str, at: str,
        *, subject: str, address: str | None = None,
    ) -> None:
        """Embargo a document (``version`` None) or a version until ``until`` (None: lift it); audited."""
        with self._write():
            doc = self._check_document(key, lock=True)
            if version is None:
                self._query("UPDATE documents SET embargo_until = ? WHERE id = ?", (until, doc))
            elif not self._query(
                "UPDATE versions SET embargo_until = ? WHERE document = ? AND version = ? RETURNING version",
                (until, doc, version),
            ):
                raise NotFoundError(f"no version {version} of {_describe(key)} in the archive")
            self._query("INSERT INTO access_changes (at) VALUES (?)", (at,))
            what = "the document" if version is None else f"version {version}"
            self._insert_audit(AuditRecord(
                at, who, "embargo", subject, f"{what} until {until}" if until else f"{what}: lifted", address,
            ))

    def embargo(self, key: DocumentKey, version: int | None) -> str | None:
        """Until when the document (and ``version`` of it, if given) is embargoed: the later of the two, or None."""
        with self._read():
            rows = self._query(
                "SELECT d.embargo_until, v.embargo_until FROM documents d"
                " LEFT JOIN versions v ON v.document = d.id AND v.version = ?"
                " WHERE d.series = ? AND d.day = ? AND d.unique_id = ?",
                (version if version is not None else -1, key.series, key.day.isoformat(), key.unique_id),
            )
        if not rows:
            return None
        found = [str(v) for v in rows[0] if v is not None]
        return max(found) if found else None

    def embargoed_now(self, key: DocumentKey, now: str) -> bool:
        """Whether the document, or any version of it, is under an embargo that has not ended at ``now``."""
        with self._read():
            rows = self._query(
                "SELECT 1 FROM documents d WHERE d.series = ? AND d.day = ? AND d.unique_id = ?"
                " AND (d.embargo_until > ? OR EXISTS"
                " (SELECT 1 FROM versions v WHERE v.document = d.id AND v.embargo_until > ?))",
                (key.series, key.day.isoformat(), key.unique_id, now, now),
            )
        return bool(rows)

    def embargoes_in_force(self, now: str) -> dict[DocumentKey, frozenset[int] | None]:
        """The documents under an embargo not over at ``now``: the versions embargoed, ``None`` the whole document
        (embargoed itself, or every one of its versions).

        Read by the partial indexes ``documents_embargoed`` and ``versions_embargoed``: costs the embargoes.
        """
        with self._read():
            rows = self._query(
                "SELECT d.series, d.day, d.unique_id, NULL, 1 FROM documents d WHERE d.embargo_until > ?"
                " UNION ALL SELECT d.series, d.day, d.unique_id, v.version, CASE WHEN EXISTS (SELECT 1 FROM versions w"
                " WHERE w.document = v.document AND (w.embargo_until IS NULL OR w.embargo_until <= ?)) THEN 0 ELSE 1 END"
                " FROM versions v"
                " JOIN documents d ON d.id = v.document WHERE v.embargo_until > ?",
                (now, now, now),
            )
        found: dict[DocumentKey, frozenset[int] | None] = {}
        for series, day, unique_id, version, whole in rows:
            key = DocumentKey(str(series), datetime.date.fromisoformat(str(day)), str(unique_id))
            if version is None or whole:  # the document, or every version of it
                found[key] = None
            elif key not in found or found[key] is not None:
                found[key] = (found.get(key) or frozenset()) | {int(version)}
        return found

    def iter_embargoes(self) -> Iterator[tuple[DocumentKey, int | None, str]]:
        """Every embargo set (lifted or not): the document, the version (None: all of it), until when."""
        with self._read():
            rows = self._query(
                "SELECT d.series, d.day, d.unique_id, NULL, d.embargo_until FROM documents d"
                " WHERE d.embargo_until IS NOT NULL"
                " UNION ALL SELECT d.series, d.day, d.unique_id, v.version, v.embargo_until FROM versions v"
                " JOIN documents d ON d.id = v.document WHERE v.embargo_until IS NOT NULL ORDER BY 1, 2, 3, 4"
            )
        for series, day, unique_id, version, until in rows:
            key = DocumentKey(str(series), datetime.date.fromisoformat(str(day)), str(unique_id))
            yield key, None if version is None else int(version), str(until)

    # --- deposits ----------------------------------------------------------------
    def _stage(
        self, representations: Sequence[NewRepresentation]
    ) -> AbstractContextManager[Sequence[StagedBlob]]:
        formats = [r.format for r in representations]
        if len(set(formats)) != len(formats):
            raise ImmutabilityError(f"a deposit names a format twice: {', '.join(formats)}")
        return self._staged([rep.blob for rep in representations])

    def _document_id(self, key: DocumentKey, *, lock: bool = False) -> int | None:
        rows = self._query(
            "SELECT id FROM documents WHERE series = ? AND day = ? AND unique_id = ?"
            + (self.for_update if lock else ""),
            (key.series, key.day.isoformat(), key.unique_id),
        )
        return int(rows[0][0]) if rows else None

    def _insert_reps(
        self, doc: int, version: int, representations: Sequence[NewRepresentation], at: str
    ) -> None:
        for rep in representations:
            self._store_blob(rep.blob)
            if rep.index is not None:
                self._query(
                    "INSERT INTO fragment_indexes (sha256, media_type, charset, data) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (sha256, media_type, charset) DO NOTHING",
                    (rep.sha256, rep.media_type, rep.charset or "", rep.index),
                )
            if rep.passages is not None:
                self._index_source(rep.sha256, rep.media_type, rep.charset, rep.passages)
            self._insert_rep(
                doc, version, rep.format, rep.media_type, rep.charset, rep.line_ending,
                rep.sha256, rep.size, at, STORED_EXACT,
            )

    def _insert_rep(self, doc: int, version: int, *columns: Any) -> None:
        """One representations row: format, media type, charset, line ending, sha256, size, at, stored."""
        self._query(
            "INSERT INTO representations (document, version, format, media_type, charset,"
            " line_ending, sha256, size, created_at, stored) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (doc, version, *columns),
        )
        at = columns[6]
        self._query(
            "UPDATE document_days SET last_deposit = ? WHERE (last_deposit IS NULL OR last_deposit < ?)"
            " AND series = (SELECT series FROM documents WHERE id = ?) AND day = (SELECT day FROM documents WHERE id = ?)",
            (at, at, doc, doc),
        )

    def _stored_sha(self, doc: int, version: int, format: str) -> str | None:
        """The SHA-256 of the bytes stored for a format of a version, if any."""
        rows = self._query(
            "SELECT sha256 FROM representations WHERE document = ? AND version = ?"
            " AND format = ?",
            (doc, version, format),
        )
        return str(rows[0][0]) if rows else None

    def _next_serial(self, series: str, day: str) -> int:
        rows = self._query(
            "INSERT INTO daily_serials (series, day, last) VALUES (?, ?, 1)"
            " ON CONFLICT (series, day) DO UPDATE SET last = daily_serials.last + 1"
            " RETURNING last",
            (series, day),
        )
        return int(rows[0][0])

    def _insert_document(
        self, series: str, day: datetime.date, unique_id: str, serial: int | None, at: str
    ) -> int:
        rows = self._query(
            "INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (series, day.isoformat(), day.year, day.month, day.day, unique_id, serial, at),
        )
        self._query(
            "INSERT INTO document_days (series, day, documents) VALUES (?, ?, 1)"
            " ON CONFLICT (series, day) DO UPDATE SET documents = document_days.documents + 1",
            (series, day.isoformat()),
        )
        return int(rows[0][0])

    # Each deposit checks its preconditions twice: before any blob is staged
    # (so refused input leaves no trace, not even an unreferenced blob file),
    # and again inside the write transaction, which is what makes it safe
    # against a concurrent writer.
    def _check_mint(
        self,
        series: str,
        key: DocumentKey | None,
        same: Sequence[NewRepresentation] | None = None,
    ) -> DepositResult | None:
        """``None`` when a document may be minted; its latest version when it holds ``same``."""
        if not self._query("SELECT 1 FROM series WHERE name = ?", (series,)):
            raise NotFoundError(f"series {series} is not registered (pdi series add {series})")
        doc = None if key is None else self._document_id(key)
        if key is None or doc is None:
            return None
        if same is not None:
            latest = self._latest_if_identical(doc, same)
            if latest is not None:
                return DepositResult(key, latest, unchanged=True)
        raise ImmutabilityError(
            f"{_describe(key)} is already minted; deposit a new version of it instead"
        )

    def _latest_if_identical(
        self, doc: int, representations: Sequence[NewRepresentation]
    ) -> int | None:
        """The latest version of ``doc`` if it holds exactly ``representations`` (format, SHA-256, charset)."""
        rows = self._query("SELECT MAX(version) FROM versions WHERE document = ?", (doc,))
        if not rows or rows[0][0] is None:
            return None
        latest = int(rows[0][0])
        stored = self._query(
            "SELECT format, sha256, charset FROM representations WHERE document = ? AND version = ?",
            (doc, latest),
        )
        held = {(str(r[0]), str(r[1]), None if r[2] is None else str(r[2])) for r in stored}
        given = {(r.format, r.sha256, r.charset) for r in representations}
        return latest if held == given and len(stored) == len(representations) else None

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
    ) -> DepositResult:
        if not representations:
            raise StoreError("a deposit needs at least one format")
        given = None if unique_id is None else DocumentKey(series, day, unique_id)
        same = representations if skip_identical else None
        with self._read():
            found = self._answered(note) or self._check_mint(series, given, same)
        if found is not None:
            return found
        with self._stage(representations) as pins, self._write():
            self._secure(pins)
            if (found := self._answered(note, lock=True)) is not None:
                return found
            found = self._check_mint(series, given, same)
            if found is not None:
                return self._noted(note, found, at)
            serial: int | None = None
            if unique_id is None:
                serial = self._next_serial(series, day.isoformat())
                unique_id = str(serial)
                self._check_mint(series, DocumentKey(series, day, unique_id))
            key = DocumentKey(series, day, unique_id)
            doc = self._insert_document(series, day, unique_id, serial, at)
            self._query(
                "INSERT INTO versions (document, version, created_at, embargo_until) VALUES (?, 1, ?, ?)",
                (doc, at, note.embargo_until if note else None),
            )
            self._insert_reps(doc, 1, representations, at)
            return self._noted(note, DepositResult(key, 1), at)

    def _check_document(self, key: DocumentKey, *, lock: bool = False) -> int:
        doc = self._document_id(key, lock=lock)
        if doc is None:
            raise NotFoundError(f"no document {_describe(key)} in the archive")
        return doc

    def new_version(
        self,
        key: DocumentKey,
        representations: Sequence[NewRepresentation],
        at: str,
        *,
        skip_identical: bool = False,
        note: WriteNote | None = None,
    ) -> DepositResult:
        if not representations:
            raise StoreError("a version needs at least one format")
        with self._read():
            if (found := self._answered(note)) is not None:
                return found
            doc = self._check_document(key)
            latest = self._latest_if_identical(doc, representations) if skip_identical else None
        if latest is not None:
            return DepositResult(key, latest, unchanged=True)
        with self._stage(representations) as pins, self._write():
            self._secure(pins)
            if (found := self._answered(note, lock=True)) is not None:
                return found
            doc = self._check_document(key, lock=True)
            if skip_identical:
                latest = self._latest_if_identical(doc, representations)
                if latest is not None:
                    return self._noted(note, DepositResult(key, latest, unchanged=True), at)
            rows = self._query("SELECT MAX(version) FROM versions WHERE document = ?", (doc,))
            version = int(rows[0][0]) + 1
            self._query(
                "INSERT INTO versions (document, version, created_at, embargo_until) VALUES (?, ?, ?, ?)",
                (doc, version, at, note.embargo_until if note else None),
            )
            self._insert_reps(doc, version, representations, at)
            return self._noted(note, DepositResult(key, version), at)

    def _check_formats(
        self,
        key: DocumentKey,
        version: int,
        representations: Sequence[NewRepresentation],
        *,
        lock: bool = False,
    ) -> tuple[int, list[NewRepresentation]]:
        doc = self._check_document(key, lock=lock)
        if not self._query(
            "SELECT 1 FROM versions WHERE document = ? AND version = ?", (doc, version)
        ):
            raise NotFoundError(f"no version {version} of {_describe(key)} in the archive")
        new: list[NewRepresentation] = []
        for rep in representations:
            stored = self._stored_sha(doc, version, rep.format)
            if stored is None:
                new.append(rep)
            elif stored != rep.sha256:
                raise ImmutabilityError(
                    f"format {rep.format} of version {version} of {_describe(key)} is already"
                    " deposited with other bytes; deposited bytes never change (deposit a"
                    " new version instead)"
                )
        return doc, new

    def add_formats(
        self,
        key: DocumentKey,
        version: int,
        representations: Sequence[NewRepresentation],
        at: str,
        *,
        note: WriteNote | None = None,
    ) -> DepositResult:
        with self._read():
            if (found := self._answered(note)) is not None:
                return found
            _, new = self._check_formats(key, version, representations)
        with self._stage(new) as pins, self._write():
            self._secure(pins)
            if (found := self._answered(note, lock=True)) is not None:
                return found
            doc, new = self._check_formats(key, version, representations, lock=True)
            self._insert_reps(doc, version, new, at)
            return self._noted(note, DepositResult(key, version), at)

    # --- what a write through the API records: its audit entry and idempotency key ---
    def _lock_idempotency(self, token: int, key: str) -> None:
        """Inside a write transaction: hold off other writers with the same key (SQLite has one writer)."""
        return None

    def _answered(self, note: WriteNote | None, *, lock: bool = False) -> DepositResult | None:
        """The first answer to this write's Idempotency-Key, if there was one; a different request under it is refused."""
        found = self._answered_all(note, lock=lock)
        return None if found is None else found[0]

    def _answered_all(self, note: WriteNote | None, *, lock: bool = False) -> list[DepositResult] | None:
        """Every item of the first answer to this write's Idempotency-Key (one, but for a batch), or ``None``."""
        if note is None or note.idempotency is None:
            return None
        idem = note.idempotency
        if lock:
            self._lock_idempotency(idem.token, idem.key)
        rows = self._query(
            "SELECT fingerprint, series, day, unique_id, version, unchanged FROM idempotency_keys"
            " WHERE token = ? AND key = ? ORDER BY item",
            (idem.token, idem.key),
        )
        if not rows:
            return None
        if rows[0][0] != idem.fingerprint:
            raise IntegrityError(
                f"Idempotency-Key {idem.key!r} was used for a different request"
                " (another target, parameters or body); use a new key for a new request"
            )
        return [
            DepositResult(DocumentKey(str(series), datetime.date.fromisoformat(str(day)), str(unique_id)),
                          int(version), unchanged=bool(unchanged), replayed=True)
            for _, series, day, unique_id, version, unchanged in rows
        ]

    def _noted(self, note: WriteNote | None, result: DepositResult, at: str) -> DepositResult:
        """Inside the write's transaction: append its audit entry and keep its answer under its Idempotency-Key."""
        return self._noted_all(note, [result], at)[0]

    def _noted_all(self, note: WriteNote | None, results: list[DepositResult], at: str) -> list[DepositResult]:
        """:meth:`_noted` for every item of a write (an audit entry each; the answer kept item by item)."""
        if note is None:
            return results
        for item, result in enumerate(results):
            self._insert_audit(AuditRecord(
                at, note.who, note.action, note.subject(result.key),
                note.detail or f"version {result.version}" + (" (unchanged)" if result.unchanged else ""),
                note.address,
            ))
            if note.idempotency is not None:
                idem = note.idempotency
                self._query(
                    "INSERT INTO idempotency_keys (token, key, fingerprint, series, day, unique_id, version,"
                    " unchanged, created_at, item) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (idem.token, idem.key, idem.fingerprint, result.key.series, result.key.day.isoformat(),
                     result.key.unique_id, result.version, int(result.unchanged), at, item),
                )
        return results

    def mint_batch(
        self,
        series: str,
        day: datetime.date,
        entries: Sequence[tuple[str | None, Sequence[NewRepresentation]]],
        at: str,
        *,
        note: WriteNote | None = None,
    ) -> list[DepositResult]:
        """Mint a document for each entry (a foreign id or ``None`` for a serial, and its formats): all in one transaction.

        An id already minted, or named twice, refuses the whole batch
        (:class:`ImmutabilityError` naming the item); nothing is minted.
        """
        if not entries or any(not reps for _, reps in entries):
            raise StoreError("a batch needs at least one item, and each item a format")
        ids = [uid for uid, _ in entries if uid is not None]
        if len(set(ids)) != len(ids):
            raise ImmutabilityError("a batch names one foreign id twice: " + ", ".join(sorted(
                {uid for uid in ids if ids.count(uid) > 1})))

        def check() -> None:
            for item, (uid, _) in enumerate(entries):
                try:
                    self._check_mint(series, None if uid is None else DocumentKey(series, day, uid))
                except ImmutabilityError as exc:
                    raise ImmutabilityError(f"item {item}: {exc}") from None

        with self._read():
            found = self._answered_all(note)
            if found is not None:
                return found
            check()
        staged = [self._stage(reps) for _, reps in entries]  # each item's formats distinct
        with contextlib.ExitStack() as stack:
            pins = [pin for one in staged for pin in stack.enter_context(one)]
            with self._write():
                self._secure(pins)
                if (found := self._answered_all(note, lock=True)) is not None:
                    return found
                check()
                results = []
                for uid, reps in entries:
                    unique_id, serial = uid, None
                    if unique_id is None:
                        serial = self._next_serial(series, day.isoformat())
                        unique_id = str(serial)
                        self._check_mint(series, DocumentKey(series, day, unique_id))
                    doc = self._insert_document(series, day, unique_id, serial, at)
                    self._query(
                        "INSERT INTO versions (document, version, created_at, embargo_until) VALUES (?, 1, ?, ?)",
                        (doc, at, note.embargo_until if note else None),
                    )
                    self._insert_reps(doc, 1, reps, at)
                    results.append(DepositResult(DocumentKey(series, day, unique_id), 1))
                return self._noted_all(note, results, at)

    # --- tokens of the write API ---
    def add_token(self, name: str, digest: str, role: str, series: Sequence[str], at: str, by: str) -> TokenRecord:
        with self._write():
            if self._query("SELECT 1 FROM tokens WHERE name = ?", (name,)):
                raise ImmutabilityError(f"a token named {name!r} exists already (names are never reused)")
            self._query(
                "INSERT INTO tokens (name, digest, role, series, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?)",
                (name, digest, role, " ".join(series), at, by),
            )
            self._insert_audit(AuditRecord(
                at, by, "token-add", f"token:{name}", f"role {role}, series {' '.join(series) or '(all)'}"
            ))
            found = self._tokens("WHERE name = ?", (name,))
        return found[0]

    def _tokens(self, where: str, params: tuple[object, ...] = ()) -> list[TokenRecord]:
        rows = self._query(
            f"SELECT id, name, role, series, created_at, created_by, revoked_at FROM tokens {where} ORDER BY id",
            params,
        )
        return [
            TokenRecord(int(r[0]), str(r[1]), str(r[2]), tuple(str(r[3]).split()), str(r[4]), str(r[5]),
                        None if r[6] is None else str(r[6]))
            for r in rows
        ]

    def list_tokens(self) -> list[TokenRecord]:
        with self._read():
            return self._tokens("")

    def token_by_digest(self, digest: str) -> TokenRecord | None:
        with self._read():
            found = self._tokens("WHERE digest = ?", (digest,))
        return found[0] if found else None

    def revoke_token(self, name: str, at: str, by: str) -> TokenRecord:
        with self._write():
            found = self._tokens("WHERE name = ?", (name,))
            if not found:
                raise NotFoundError(f"no token named {name!r}")
            if found[0].revoked_at is None:
                self._query("UPDATE tokens SET revoked_at = ? WHERE name = ?", (at, name))
                self._insert_audit(AuditRecord(at, by, "token-revoke", f"token:{name}", ""))
                found = self._tokens("WHERE name = ?", (name,))
        return found[0]

    def import_all(
        self,
        series: Sequence[SeriesRecord],
        representations: Iterable[tuple[RepresentationRecord, BlobSource]],
        assertions: Iterable[tuple[DocumentKey, AssertionRecord]],
        audit: Iterable[AuditRecord] = (),
        withdrawals: Iterable[WithdrawalRecord] = (),
        embargoes: Sequence[tuple[DocumentKey, int | None, str]] = (),
        *,
        new_document: Callable[[RepresentationRecord], AuditRecord] | None = None,
    ) -> int:
        """Bring records from another archive in, exactly as named; one transaction.

        Identical records already present are kept; a record that would change
        what is stored under an existing name raises :class:`ImmutabilityError`
        and nothing is imported. Returns the number of new representations.
        Each blob may come as a function that reads it (:data:`BlobSource`),
        called when the store writes that blob. ``audit`` entries are appended
        to the audit log in the same transaction, and ``new_document(record)``
        for each document the import brings in (its first representation).

        ``representations`` is iterated three times, never held: to check
        each record against the catalog, to stage the blobs, and to write the
        rows; an exception from any pass (a bag changed meanwhile) leaves the
        archive as it was. ``assertions`` and ``withdrawals`` are iterated
        once, inside the transaction. Records are checked and written a page
        (:data:`IMPORT_PAGE`) at a time, a few statements a page whatever its
        size, and the first bad record of a page is the one named. Memory
        grows with the distinct blobs and the days touched, not with the names.
        """
        with self._read():  # refuse bad imports before staging any blob
            known = {str(r[0]) for r in self._query("SELECT name FROM series")}
            known |= {s.name for s in series}
            for s in series:
                if s.parent is not None and s.parent not in known:
                    raise NotFoundError(f"parent series {s.parent} of {s.name} is not in the import")
            for page in _pages(rec for rec, _ in representations):
                self._check_import(page, known)
        added = 0
        staged = self._stage_import(
            (rec.sha256, content) for rec, content in representations if rec.purged is None
        )
        try:
            added = self._import_staged(series, representations, assertions, audit, staged, withdrawals,
                                        embargoes, new_document)
        except BaseException:
            _discard(staged)
            raise
        _release(staged)
        return added

    def _import_staged(
        self,
        series: Sequence[SeriesRecord],
        representations: Iterable[tuple[RepresentationRecord, BlobSource]],
        assertions: Iterable[tuple[DocumentKey, AssertionRecord]],
        audit: Iterable[AuditRecord],
        staged: Sequence[StagedBlob],
        withdrawals: Iterable[WithdrawalRecord] = (),
        embargoes: Sequence[tuple[DocumentKey, int | None, str]] = (),
        new_document: Callable[[RepresentationRecord], AuditRecord] | None = None,
    ) -> int:
        added = 0
        written = _ImportWritten({blob.info.sha256: blob for blob in staged})
        with self._write():
            self._secure(staged)
            for s in sorted(series, key=lambda s: (s.name.count("."), s.name)):
                existing = self._query("SELECT parent FROM series WHERE name = ?", (s.name,))
                if not existing:
                    self._insert_series(s)
            known = {str(r[0]) for r in self._query("SELECT name FROM series")}
            for page in _pages(rec for rec, _ in representations):
                added += self._import_page(page, known, written, new_document)
            self._check_numbering(written.days)
            for entry in audit:
                self._insert_audit(entry)
            for statements in _pages(assertions):
                self._import_statements(statements)
            for tombstones in _pages(withdrawals):
                self._import_withdrawals(tombstones)
            for key, version, until in embargoes:
                target = self._document_id(key)
                if target is None:
                    raise NotFoundError(f"embargo of {_describe(key)}: no such document")
                if version is None:
                    self._query("UPDATE documents SET embargo_until = ? WHERE id = ?", (until, target))
                else:
                    self._query("UPDATE versions SET embargo_until = ? WHERE document = ? AND version = ?",
                                (until, target, version))
            if embargoes or any(s.access != "public" for s in series):
                self._query("INSERT INTO access_changes (at) VALUES (?)", (_now(),))
        return added

    # --- an import, a page at a time ------------------------------------------------------
    # Each page of records is looked up in one statement (a correlated look-up of
    # each key, so each reads the unique index however large the catalog), decided
    # in Python in the bag's order (so the first bad record is the one named, as
    # when records were written one by one), and written in a multi-row INSERT a
    # table: a few round trips a page, where one a record made a PostgreSQL import
    # of 50,000 names take minutes.

    def _rows(self, types: Sequence[str], rows: Sequence[Sequence[Any]]) -> tuple[str, list[Any]]:
        """``rows`` as a relation ``k`` (columns ``column1`` …, of SQL ``types``): its SQL and parameters.

        Here a ``VALUES`` list; PostgreSQL binds a column an array instead.
        """
        mark = "(" + ", ".join("?" * len(types)) + ")"
        return f"(VALUES {', '.join([mark] * len(rows))}) k", [value for row in rows for value in row]

    def _insert_rows(
        self, head: str, types: Sequence[str], rows: Sequence[Sequence[Any]], tail: str = ""
    ) -> list[tuple[Any, ...]]:
        """``head`` (an ``INSERT INTO t (…)``) of every row, in as few statements as the databases' limits allow."""
        found: list[tuple[Any, ...]] = []
        for chunk in _pages(rows, MAX_PARAMETERS // len(types)):
            relation, params = self._rows(types, chunk)
            # WHERE true: SQLite reads ON CONFLICT after a bare FROM as a join's
            found += self._query(f"{head} SELECT * FROM {relation} WHERE true{tail}", params)
        return found

    def _document_ids(self, keys: Sequence[DocumentKey]) -> dict[DocumentKey, int]:
        """The catalog's id of each of ``keys`` that is a document in it."""
        found: dict[DocumentKey, int] = {}
        for chunk in _pages(keys, MAX_PARAMETERS // 4):
            relation, params = self._rows(
                ("int", "text", "text", "text"),
                [(i, key.series, key.day.isoformat(), key.unique_id) for i, key in enumerate(chunk)],
            )
            rows = self._query(
                "SELECT k.column1, (SELECT d.id FROM documents d WHERE d.series = k.column2"
                f" AND d.day = k.column3 AND d.unique_id = k.column4) FROM {relation}",
                params,
            )
            found.update({chunk[int(i)]: int(doc) for i, doc in rows if doc is not None})
        return found

    def _stored_of(
        self, documents: Iterable[int], *, versions_too: bool = True
    ) -> tuple[dict[tuple[int, int, str], str], set[tuple[int, int]]]:
        """The representations (their SHA-256) and (``versions_too``) the versions the catalog holds of ``documents``."""
        ids = sorted(set(documents))
        reps: dict[tuple[int, int, str], str] = {}
        versions: set[tuple[int, int]] = set()
        for chunk in _pages(ids, MAX_PARAMETERS):
            relation, params = self._rows(("bigint",), [(doc,) for doc in chunk])
            for doc, version, format, sha256 in self._query(
                "SELECT document, version, format, sha256 FROM representations"
                f" WHERE document IN (SELECT column1 FROM {relation})", params,
            ):
                reps[(int(doc), int(version), str(format))] = str(sha256)
            if versions_too:
                versions |= {(int(d), int(v)) for d, v in self._query(
                    f"SELECT document, version FROM versions WHERE document IN (SELECT column1 FROM {relation})", params,
                )}
        return reps, versions

    def _check_import(self, page: Sequence[RepresentationRecord], known: set[str]) -> None:
        """Before anything is staged: each record's series is known and its name holds no other bytes here."""
        ids = self._document_ids(list(dict.fromkeys(_key(rec) for rec in page)))
        stored, _ = self._stored_of(ids.values(), versions_too=False)
        for rec in page:
            if rec.series not in known:
                raise NotFoundError(f"series {rec.series} is not in the import")
            doc = ids.get(_key(rec))
            sha256 = None if doc is None else stored.get((doc, rec.version, rec.format))
            if sha256 is not None and sha256 != rec.sha256:
                raise _import_conflict(rec)

    def _import_page(
        self,
        page: Sequence[RepresentationRecord],
        known: set[str],
        written: _ImportWritten,
        new_document: Callable[[RepresentationRecord], AuditRecord] | None,
    ) -> int:
        """Inside the import's transaction: write one page of representations; how many are new."""
        ids = self._document_ids(list(dict.fromkeys(_key(rec) for rec in page)))
        stored, versions = self._stored_of(ids.values())
        documents: dict[DocumentKey, RepresentationRecord] = {}  # new, each with its first record
        new_versions: dict[tuple[DocumentKey, int], str] = {}
        in_page: dict[tuple[DocumentKey, int, str], str] = {}
        new: list[RepresentationRecord] = []
        for rec in page:
            if rec.series not in known:
                raise NotFoundError(f"series {rec.series} is not in the import")
            key = _key(rec)
            written.days.add((rec.series, rec.day.isoformat()))
            doc = ids.get(key)
            if doc is None:
                documents.setdefault(key, rec)
            if (doc is None or (doc, rec.version) not in versions) and (key, rec.version) not in new_versions:
                new_versions[(key, rec.version)] = rec.created_at
            name = (key, rec.version, rec.format)
            sha256 = in_page.get(name) or (None if doc is None else stored.get((doc, rec.version, rec.format)))
            if sha256 is not None:
                if sha256 != rec.sha256:
                    raise _import_conflict(rec)
                continue
            in_page[name] = rec.sha256
            new.append(rec)
        if documents:
            self._insert_documents(list(documents.values()), ids, new_document)
        self._insert_rows(
            "INSERT INTO versions (document, version, created_at)", ("bigint", "int", "text"),
            [(ids[key], version, at) for (key, version), at in new_versions.items()],
        )
        blobs = list(dict.fromkeys(rec.sha256 for rec in new if rec.purged is None and rec.sha256 not in written.blobs))
        self._store_blobs([written.staged[sha256] for sha256 in blobs])
        written.blobs.update(blobs)
        self._insert_rows(
            "INSERT INTO representations (document, version, format, media_type, charset, line_ending,"
            " sha256, size, created_at, stored, purged)",
            ("bigint", "int", "text", "text", "text", "text", "text", "bigint", "text", "text", "text"),
            [(ids[_key(rec)], rec.version, rec.format, rec.media_type, rec.charset, rec.line_ending,
              rec.sha256, rec.size, rec.created_at, rec.stored, rec.purged) for rec in new],
        )
        latest: dict[tuple[str, str], str] = {}
        for rec in new:
            day = (rec.series, rec.day.isoformat())
            latest[day] = max(latest.get(day, rec.created_at), rec.created_at)
        if latest:
            self._executemany(
                "UPDATE document_days SET last_deposit = ? WHERE (last_deposit IS NULL OR last_deposit < ?)"
                " AND series = ? AND day = ?",
                [(at, at, series, day) for (series, day), at in latest.items()],
            )
        for rec in new:
            source = (rec.sha256, rec.media_type, rec.charset)
            if rec.purged is None and source not in written.indexed:
                self._index_stored(*source)
                written.indexed.add(source)
        return len(new)

    def _insert_documents(
        self,
        firsts: Sequence[RepresentationRecord],
        ids: dict[DocumentKey, int],
        new_document: Callable[[RepresentationRecord], AuditRecord] | None,
    ) -> None:
        """New documents (each from its first record), their days' counts and serial counters, and their audit entries."""
        rows = self._insert_rows(
            "INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)",
            ("text", "text", "int", "int", "int", "text", "int", "text"),
            [(r.series, r.day.isoformat(), r.day.year, r.day.month, r.day.day, r.unique_id, r.serial, r.created_at)
             for r in firsts],
            " RETURNING id, series, day, unique_id",
        )
        ids.update({DocumentKey(str(s), datetime.date.fromisoformat(str(d)), str(u)): int(i) for i, s, d, u in rows})
        counts: dict[tuple[str, str], int] = {}
        serials: dict[tuple[str, str], int] = {}
        for r in firsts:
            day = (r.series, r.day.isoformat())
            counts[day] = counts.get(day, 0) + 1
            if r.serial is not None:
                serials[day] = max(serials.get(day, 0), r.serial)
        self._insert_rows(
            "INSERT INTO document_days (series, day, documents)", ("text", "text", "bigint"),
            [(series, day, n) for (series, day), n in counts.items()],
            " ON CONFLICT (series, day) DO UPDATE SET documents = document_days.documents + excluded.documents",
        )
        self._insert_rows(
            "INSERT INTO daily_serials (series, day, last)", ("text", "text", "int"),
            [(series, day, last) for (series, day), last in serials.items()],
            " ON CONFLICT (series, day) DO UPDATE SET last = CASE WHEN daily_serials.last > excluded.last"
            " THEN daily_serials.last ELSE excluded.last END",
        )
        if new_document is not None:
            self._insert_rows(
                "INSERT INTO audit_log (at, who, action, subject, detail, address)", ("text",) * 6,
                [(e.at, e.who, e.action, e.subject, e.detail, e.address) for e in map(new_document, firsts)],
            )

    def _import_statements(self, page: Sequence[tuple[DocumentKey, AssertionRecord]]) -> None:
        """Inside the import's transaction: one page of statements, each unless the catalog holds it already."""
        subjects = sorted({a.subject for _, a in page})
        held: set[tuple[str, str, str, str, str]] = set()
        for chunk in _pages(subjects, MAX_PARAMETERS):
            relation, params = self._rows(("text",), [(subject,) for subject in chunk])
            held |= {(str(s), str(k), str(v), str(w), str(t)) for s, k, v, w, t in self._query(
                f"SELECT subject, key, value, who, at FROM assertions WHERE subject IN (SELECT column1 FROM {relation})",
                params,
            )}
        ids = self._document_ids(list(dict.fromkeys(about for about, _ in page)))
        rows: list[tuple[Any, ...]] = []
        for about, a in page:
            statement = (a.subject, a.key, a.value, a.who, a.at)
            if statement in held:
                continue
            target = ids.get(about)
            if target is None:
                raise NotFoundError(f"assertion about {a.subject}: no such document")
            held.add(statement)
            rows.append((target, *statement))
        self._insert_rows("INSERT INTO assertions (document, subject, key, value, who, at)",
                          ("bigint", "text", "text", "text", "text", "text"), rows)

    def _import_withdrawals(self, page: Sequence[WithdrawalRecord]) -> None:
        """Inside the import's transaction: one page of tombstones, each unless the catalog holds it already."""
        ids = self._document_ids(list(dict.fromkeys(w.key for w in page)))
        held: set[tuple[int, int | None, str]] = set()
        for chunk in _pages(sorted(set(ids.values())), MAX_PARAMETERS):
            relation, params = self._rows(("bigint",), [(doc,) for doc in chunk])
            held |= {(int(d), None if v is None else int(v), str(at)) for d, v, at in self._query(
                f"SELECT document, version, at FROM withdrawals WHERE document IN (SELECT column1 FROM {relation})",
                params,
            )}
        rows: list[tuple[Any, ...]] = []
        for w in page:
            target = ids.get(w.key)
            if target is None:
                raise NotFoundError(f"withdrawal of {_describe(w.key)}: no such document")
            if (target, w.version, w.at) in held:
                continue
            held.add((target, w.version, w.at))
            rows.append((target, w.version, w.reason, w.who, w.at, 1 if w.purged else 0))
        self._insert_rows("INSERT INTO withdrawals (document, version, reason, who, at, purged)",
                          ("bigint", "int", "text", "text", "text", "int"), rows)

    # --- withdrawal (tombstones) ----------------------------------------------------------
    def withdraw(
        self, key: DocumentKey, version: int | None, reason: str, who: str, at: str,
        *, subject: str, address: str | None = None, purge: bool = False,
    ) -> tuple[WithdrawalRecord, list[str]]:
        """Record a tombstone (and with ``purge`` mark its representations' octets purged), audited; one transaction.

        Returns the tombstone and the SHA-256 names of the blobs whose
        representations this purge marked, for :meth:`delete_purged_blobs`
        to delete after the commit (so a failed commit never loses bytes a
        name still holds).
        """
        with self._write():
            doc = self._check_document(key, lock=True)
            if version is not None and not self._query(
                "SELECT 1 FROM versions WHERE document = ? AND version = ?", (doc, version)
            ):
                raise NotFoundError(f"no version {version} of {_describe(key)} in the archive")
            rows = self._query(
                "INSERT INTO withdrawals (document, version, reason, who, at, purged) VALUES (?, ?, ?, ?, ?, ?)"
                " RETURNING id",
                (doc, version, reason, who, at, 1 if purge else 0),
            )
            purged: list[str] = []
            if purge:
                scope = "document = ?" + ("" if version is None else " AND version = ?")
                params: list[Any] = [doc] if version is None else [doc, version]
                purged = sorted({str(r[0]) for r in self._query(
                    f"SELECT sha256 FROM representations WHERE {scope}", params
                )})
                self._query(f"UPDATE representations SET purged = ? WHERE {scope} AND purged IS NULL", [at, *params])
            what = "the document" if version is None else f"version {version}"
            self._insert_audit(AuditRecord(
                at, who, "purge" if purge else "withdraw", subject,
                f"{what}{', its octets purged' if purge else ''}: {reason}", address,
            ))
        return WithdrawalRecord(key, version, reason, who, at, int(rows[0][0]), purge), purged

    def delete_purged_blobs(self, sha256s: Sequence[str]) -> tuple[list[str], list[str]]:
        """Delete each blob of ``sha256s`` that no representation still keeping its octets names.

        A blob another name holds (withdrawn or not, unless purged too) is
        kept, and so is one a deposit in progress has staged; each deleted
        blob's full-text passages and fragment index go with it. One write
        transaction holding the removal lock, so no deposit naming the same
        octets commits meanwhile. Returns the names deleted (or found
        already gone) and those kept.
        """
        deleted: list[str] = []
        kept: list[str] = []
        with self._write():
            self._purge_lock()
            for sha256 in sorted(set(sha256s)):
                if self._query(
                    "SELECT 1 FROM representations WHERE sha256 = ? AND purged IS NULL LIMIT 1", (sha256,)
                ) or not self._delete_blob(sha256):
                    kept.append(sha256)
                    continue
                sources = [
                    (str(r[0]), str(r[1]), str(r[2]))
                    for r in self._query(
                        "SELECT sha256, media_type, charset FROM search_sources WHERE sha256 = ?", (sha256,)
                    )
                ]
                if sources:
                    self._delete_passages(sources)
                self._query("DELETE FROM search_sources WHERE sha256 = ?", (sha256,))
                self._query("DELETE FROM fragment_indexes WHERE sha256 = ?", (sha256,))
                deleted.append(sha256)
        return deleted, kept

    def _purge_lock(self) -> None:
        """Inside a write transaction: exclude deposits that may name a blob about to be deleted (SQLite's writer lock does)."""

    @abstractmethod
    def _delete_blob(self, sha256: str) -> bool:
        """Inside :meth:`delete_purged_blobs`: delete the blob's octets; ``False`` when a deposit in progress holds them."""

    def withdrawal(self, key: DocumentKey, version: int) -> WithdrawalRecord | None:
        """The first tombstone over ``version`` of ``key``: its own, or the whole document's (``purged``: any purged it)."""
        with self._read():
            rows = self._query(
                "SELECT w.id, w.version, w.reason, w.who, w.at, w.purged FROM withdrawals w"
                " JOIN documents d ON d.id = w.document"
                " WHERE d.series = ? AND d.day = ? AND d.unique_id = ? AND (w.version IS NULL OR w.version = ?)"
                " ORDER BY w.id",
                (key.series, key.day.isoformat(), key.unique_id, version),
            )
        if not rows:
            return None
        wid, wversion, reason, who, at, _ = rows[0]
        return WithdrawalRecord(key, None if wversion is None else int(wversion), str(reason), str(who), str(at),
                                int(wid), any(int(r[5]) for r in rows))

    def iter_withdrawals(self) -> Iterator[WithdrawalRecord]:
        with self._read():
            rows = self._query(
                "SELECT w.id, d.series, d.day, d.unique_id, w.version, w.reason, w.who, w.at, w.purged"
                " FROM withdrawals w JOIN documents d ON d.id = w.document ORDER BY w.id"
            )
        for wid, series, day, unique_id, version, reason, who, at, purged in rows:
            key = DocumentKey(str(series), datetime.date.fromisoformat(str(day)), str(unique_id))
            yield WithdrawalRecord(key, None if version is None else int(version), str(reason), str(who), str(at),
                                   int(wid), bool(purged))

    def withdrawals_of(self, keys: Sequence[DocumentKey]) -> list[WithdrawalRecord]:
        """The tombstones of these documents, oldest first: each document found by its key's index, never a scan.

        What a resolver asks for the one document (or the page of a URL's
        captures) it answers about: the time it takes grows with ``keys``,
        not with the catalog or with every withdrawal ever made.
        """
        found: list[WithdrawalRecord] = []
        wanted = list(dict.fromkeys(keys))
        with self._read():
            # the keys as a relation joined to the documents' unique index (a VALUES list here, arrays
            # on PostgreSQL): 1,000 keys of a catalog of a million documents in 5 ms, where the same
            # keys as ORs of conditions, 100 a statement, took 41 ms on PostgreSQL
            for batch in _pages(wanted, _KEYS_A_QUERY):
                relation, params = self._rows(
                    ("text", "text", "text"), [(key.series, key.day.isoformat(), key.unique_id) for key in batch]
                )
                rows = self._query(
                    "SELECT w.id, d.series, d.day, d.unique_id, w.version, w.reason, w.who, w.at, w.purged"
                    f" FROM {relation} JOIN documents d ON d.series = k.column1 AND d.day = k.column2"
                    " AND d.unique_id = k.column3 JOIN withdrawals w ON w.document = d.id",
                    params,
                )
                for wid, series, day, unique_id, version, reason, who, at, purged in rows:
                    key = DocumentKey(str(series), datetime.date.fromisoformat(str(day)), str(unique_id))
                    found.append(WithdrawalRecord(key, None if version is None else int(version), str(reason),
                                                  str(who), str(at), int(wid), bool(purged)))
        return sorted(found, key=lambda w: w.id)

    def withdrawals_generation(self) -> int:
        """A number that grows with each withdrawal and each change of who may read what (a series
        made private, an embargo set): a resolver's cache compares it to know when to forget."""
        with self._read():
            rows = self._query(
                "SELECT (SELECT COALESCE(MAX(id), 0) FROM withdrawals) + (SELECT COALESCE(MAX(id), 0) FROM access_changes)"
            )
        return int(rows[0][0])

    def _check_numbering(self, days: Iterable[tuple[str, str]]) -> None:
        """Inside an import's transaction: serials still run 1..n on every ``(series, day)`` it touched, and versions 1..n.

        A bag may not bring serial 999 to a day with 3 (2..998 would never
        exist and the next mint would be 1000), nor version 5 of a document
        with 2: minting never leaves gaps, and neither may an import. Asked
        of the catalog with the import's rows in it, :data:`NUMBERING_DAYS`
        days a statement (a row a day comes back, and the days with a gap in
        some document's versions), so the check holds no more than that
        whatever the import's size; the first day in order with a gap is the
        one named, its serials before its versions.
        """
        ordered = sorted(days)
        for batch in _pages(ordered, NUMBERING_DAYS):
            values, params = self._rows(("text", "text"), batch)
            serials = {
                (str(series), str(day)): (int(count), low, high)
                for series, day, count, low, high in self._query(
                    "SELECT d.series, d.day, COUNT(DISTINCT d.serial), MIN(d.serial), MAX(d.serial)"
                    f" FROM {values} JOIN documents d ON d.series = k.column1 AND d.day = k.column2"
                    " WHERE d.serial IS NOT NULL GROUP BY d.series, d.day",
                    params,
                )
            }
            gaps = {(str(series), str(day)) for series, day in self._query(
                "SELECT DISTINCT g.series, g.day FROM (SELECT d.series, d.day"
                f" FROM {values} JOIN documents d ON d.series = k.column1 AND d.day = k.column2"
                " JOIN versions v ON v.document = d.id GROUP BY d.id, d.series, d.day"
                " HAVING MIN(v.version) <> 1 OR MAX(v.version) <> COUNT(DISTINCT v.version)) g",
                params,
            )}
            for series, day in batch:
                count, low, high = serials.get((series, day), (0, None, None))
                if count and (low != 1 or high != count):
                    raise ParseError(
                        f"the import would leave gaps in the serials of {series} on {day}:"
                        f" {count} serials numbered {low} to {high}"
                        " (serials run 1..n without gaps)",
                        rule="catalog",
                    )
                if (series, day) in gaps:
                    self._version_gap(series, day)

    def _version_gap(self, series: str, day: str) -> None:
        """Raise the gap in the versions of the first document of ``series`` on ``day`` that has one."""
        gaps = self._query(
            "SELECT d.unique_id, COUNT(DISTINCT v.version), MIN(v.version), MAX(v.version)"
            " FROM documents d JOIN versions v ON v.document = d.id"
            " WHERE d.series = ? AND d.day = ?"
            " GROUP BY d.id, d.unique_id"
            " HAVING MIN(v.version) <> 1 OR MAX(v.version) <> COUNT(DISTINCT v.version)"
            " ORDER BY d.unique_id LIMIT 1",
            (series, day),
        )
        if gaps:
            unique_id, count, low, high = gaps[0]
            key = DocumentKey(series, datetime.date.fromisoformat(day), str(unique_id))
            raise ParseError(
                f"the import would leave gaps in the versions of {_describe(key)}:"
                f" {plural(count, 'version')} numbered {low} to {high}",
                rule="catalog",
            )

    # --- reading ---------------------------------------------------------------------
    def document_exists(self, key: DocumentKey) -> bool:
        with self._read():
            return self._document_id(key) is not None

    def versions(self, key: DocumentKey) -> list[int]:
        with self._read():
            rows = self._query(
                "SELECT v.version FROM versions v JOIN documents d ON d.id = v.document"
                " WHERE d.series = ? AND d.day = ? AND d.unique_id = ? ORDER BY v.version",
                (key.series, key.day.isoformat(), key.unique_id),
            )
        return [int(r[0]) for r in rows]

    def representations(
        self, key: DocumentKey, version: int | None = None
    ) -> list[RepresentationRecord]:
        sql = (
            f"SELECT {_REP_COLUMNS} FROM representations r JOIN documents d ON d.id = r.document"
            " WHERE d.series = ? AND d.day = ? AND d.unique_id = ?"
        )
        params: list[Any] = [key.series, key.day.isoformat(), key.unique_id]
        if version is not None:
            sql += " AND r.version = ?"
            params.append(version)
        with self._read():
            rows = self._query(sql + _ORDER, params)
        return [_rep(r) for r in rows]

    def list_representations(self, query: ListQuery) -> list[RepresentationRecord]:
        """The representations ``query`` selects, in listing order (:meth:`iter_representations`)."""
        return list(self.iter_representations(query))

    def iter_representations(
        self, query: ListQuery | None = None, *, page: int = PAGE_ROWS
    ) -> Iterator[RepresentationRecord]:
        """The representations ``query`` selects in listing order (:class:`ListKey`), a page at a time.

        Each page is one range read from the index ``documents_by_day (day,
        serial, unique_id)``, starting after the last row of the page before
        (a keyset, never ``OFFSET``): a day's serial documents, then its
        documents with a foreign id (whose serial is NULL), then the next
        day. Memory is one page however many names there are, and each page
        costs the same however deep it is. Each page is its own read
        transaction, so a long walk holds no lock between pages (inside
        :meth:`snapshot` they all share one); a name deposited meanwhile
        is listed if it sorts after the current position.
        """
        query = query or ListQuery()
        skip, left = query.offset, query.limit
        if left is not None:
            if left <= 0:
                return
            page = max(1, min(page, skip + left))
        for row in self._walk(query, page):
            if skip:
                skip -= 1
                continue
            yield _rep(row)
            if left is not None:
                left -= 1
                if not left:
                    return

    def _walk(self, query: ListQuery, page: int) -> Iterator[tuple[Any, ...]]:
        """The rows of :meth:`iter_representations`: day by day, each day's two runs page by page."""
        documents: list[tuple[str, Any]] = [
            (column, value)
            for column, value in (
                ("d.series", query.series), ("d.year", query.year), ("d.month", query.month),
                ("d.dom", query.day), ("d.unique_id", query.unique_id),
            )
            if value is not None
        ]
        formats = [
            (column, value)
            for column, value in (("r.format", query.format), ("r.version", query.version))
            if value is not None
        ]
        after = query.after
        if after is None:
            day, serials, key = self._next_day(None, documents), True, None
        else:
            day, serials = after.day.isoformat(), after.serial is not None
            key = _run_key(after, serials)
        while day is not None:
            if serials:
                yield from self._run(day, True, key, documents + formats, page)
                key = None
            yield from self._run(day, False, key, documents + formats, page)
            key, serials = None, True
            day = self._next_day(day, documents)

    def _next_day(self, after: str | None, documents: list[tuple[str, Any]]) -> str | None:
        """The first day after ``after`` (or the first day) with a document the filters select.

        A year, a month of it or a day of that becomes a range of ``d.day`` too,
        so the look-up is a range of the index ``documents_by_day`` rather than
        a walk over every document after ``after`` (a day of a catalog of a
        million names was listed 11 times slower than one of 10,000).
        """
        sql = "SELECT MIN(d.day) FROM documents d WHERE 1 = 1"
        params: list[Any] = []
        if after is not None:
            sql += " AND d.day > ?"
            params.append(after)
        bounds = _day_range(dict(documents))
        if bounds is not None:
            sql += " AND d.day >= ? AND d.day < ?"
            params += bounds
        for column, value in documents:
            sql += f" AND {column} = ?"
            params.append(value)
        with self._read():
            rows = self._query(sql, params)
        return None if not rows or rows[0][0] is None else str(rows[0][0])

    def _run(
        self, day: str, serials: bool, key: tuple[Any, ...] | None,
        filters: list[tuple[str, Any]], page: int,
    ) -> Iterator[tuple[Any, ...]]:
        """One day's serial documents (or those with a foreign id) after ``key``, page by page."""
        columns = _SERIAL_RUN if serials else _FOREIGN_RUN
        sql = (
            f"SELECT {_REP_COLUMNS} FROM documents d JOIN representations r ON r.document = d.id"
            f" WHERE d.day = ? AND d.serial IS {'NOT NULL' if serials else 'NULL'}"
            + "".join(f" AND {column} = ?" for column, _ in filters)
        )
        params: list[Any] = [day, *(value for _, value in filters)]
        order = f" ORDER BY {', '.join(columns)} LIMIT ?"
        # The whole key after the last row; and, said again of the index's own columns
        # alone, where in the index to start (PostgreSQL starts a range only from that).
        lead = 2 if serials else 1
        after = (
            f" AND ({', '.join(columns[:lead])}) >= ({', '.join('?' * lead)})"
            f" AND ({', '.join(columns)}) > ({', '.join('?' * len(columns))})"
        )
        while True:
            with self._read():
                if key is None:
                    rows = self._query(sql + order, [*params, page])
                else:
                    rows = self._query(sql + after + order, [*params, *key[:lead], *key, page])
            yield from rows
            if len(rows) < page:
                return
            last = rows[-1]  # series, day, unique_id, serial, version, format, …
            following = (last[3], last[2], last[0], last[4], last[5]) if serials else (last[2], last[0], last[4], last[5])
            if following == key:  # pragma: no cover - a database whose order and comparison disagree
                raise StoreError(f"{self.location}: listing the catalog does not advance past {key}")
            key = following

    def snapshot(self) -> AbstractContextManager[None]:
        """One read transaction for several walks (an export): every page inside sees the same catalog."""
        return self._read()

    def count_blobs_used(self, series: Sequence[str] | None = None) -> int:
        """How many distinct blobs the catalog names (only by names in ``series``, if given)."""
        scope, params = _blob_scope(series)
        with self._read():
            rows = self._query(f"SELECT COUNT(DISTINCT r.sha256) {scope}", params)
        return int(rows[0][0])

    def iter_blob_uses(self, series: Sequence[str] | None = None, *, page: int = 1000) -> Iterator[BlobUse]:
        """Each blob the catalog names (by names in ``series``, if given), by SHA-256, a page at a time.

        A page takes the next ``page`` SHA-256 names from the index
        ``representations_by_sha`` and then sums up their rows, so a blob
        that a million names share costs one group, not a million records.
        """
        scope, params = _blob_scope(series)
        after: str | None = None
        while True:
            bound = "" if after is None else " AND r.sha256 > ?"
            lower: list[Any] = [*params] if after is None else [*params, after]
            with self._read():
                names = self._query(
                    f"SELECT DISTINCT r.sha256 {scope}{bound} ORDER BY r.sha256 LIMIT ?", [*lower, page]
                )
                if not names:
                    return
                last = str(names[-1][0])
                rows = self._query(
                    "SELECT r.sha256, r.format, r.media_type, r.charset, r.line_ending, COUNT(*),"
                    " MIN(r.size), MAX(r.size), SUM(CASE WHEN r.purged IS NULL THEN 0 ELSE 1 END)"
                    f" {scope}{bound} AND r.sha256 <= ?"
                    " GROUP BY r.sha256, r.format, r.media_type, r.charset, r.line_ending"
                    " ORDER BY r.sha256, r.format, r.media_type, r.charset, r.line_ending",
                    [*lower, last],
                )
            grouped: dict[str, list[tuple[Any, ...]]] = {}
            for row in rows:
                grouped.setdefault(str(row[0]), []).append(row)
            for (sha256,) in names:
                yield _blob_use(str(sha256), grouped.get(str(sha256), []))
            if len(names) < page:
                return
            after = last

    def blob_representations(self, sha256: str) -> list[RepresentationRecord]:
        """Every representation that names the blob ``sha256``, in listing order."""
        with self._read():
            rows = self._query(
                f"SELECT {_REP_COLUMNS} FROM representations r JOIN documents d ON d.id = r.document"
                f" WHERE r.sha256 = ?{_ORDER}",
                (sha256,),
            )
        return [_rep(r) for r in rows]

    # --- the full-text index (pdi.fulltext, pdi.archive.search) ------------------------
    def _index_source(self, sha256: str, media_type: str, charset: str | None, passages: Any) -> None:
        """Inside a write transaction: the passages of one blob read as ``media_type`` in ``charset``, once.

        ``passages`` is a :class:`pdi.archive.search.Passages` (read one at a
        time); a blob already indexed so is left as it is.
        """
        new = self._query(
            "INSERT INTO search_sources (sha256, media_type, charset, passages, note, indexed_at)"
            " VALUES (?, ?, ?, 0, ?, ?) ON CONFLICT (sha256, media_type, charset) DO NOTHING RETURNING sha256",
            (sha256, media_type, charset or "", passages.note, _now()),
        )
        if not new:
            return
        count = self._insert_passages(sha256, media_type, charset or "", passages)
        self._query(
            "UPDATE search_sources SET passages = ? WHERE sha256 = ? AND media_type = ? AND charset = ?",
            (count, sha256, media_type, charset or ""),
        )

    def _index_stored(self, sha256: str, media_type: str, charset: str | None) -> None:
        """Inside a write transaction: index a stored blob (read again from the store) if it has text."""
        from pdi.archive.search import index_blob, search_kind

        if search_kind(media_type) is None or self._query(
            "SELECT 1 FROM search_sources WHERE sha256 = ? AND media_type = ? AND charset = ?",
            (sha256, media_type, charset or ""),
        ):
            return
        with index_blob(self, sha256, media_type, charset) as passages:
            self._index_source(sha256, media_type, charset, passages)

    def _insert_passages(self, sha256: str, media_type: str, charset: str, passages: Iterable[Passage]) -> int:
        """The passages of one source into the full-text index (inside a write transaction), 256 rows a statement; how many."""
        count = 0
        batch: list[tuple[Any, ...]] = []
        insert = ("INSERT INTO search_passages (sha256, media_type, charset, start, body, runs)"
                  " VALUES (?, ?, ?, ?, ?, ?)")
        for passage in passages:
            batch.append((sha256, media_type, charset, passage.start, passage.text, passage.encoded_runs()))
            count += 1
            if len(batch) >= 256:
                self._executemany(insert, batch)
                batch.clear()
        if batch:
            self._executemany(insert, batch)
        self._passages_inserted(sha256, media_type, charset)
        return count

    @abstractmethod
    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """One statement (``?`` placeholders) run for each of ``rows``."""

    def _passages_inserted(self, sha256: str, media_type: str, charset: str) -> None:
        """After a source's passages are in: what the store's own index needs (SQLite's FTS5 table)."""
        return None

    @abstractmethod
    def _delete_passages(self, sources: Sequence[tuple[str, str, str]] | None) -> None:
        """Take the passages of ``sources`` (all, for ``None``) out of the full-text index."""

    @abstractmethod
    def _search_page(
        self, phrases: Sequence[Sequence[str]], series: str | None, limit: int, after: SearchKey | None,
        access: SearchAccess | None = None,
    ) -> list[tuple[Any, ...]]:
        """Rows of one page of hits, best first: the representation's columns, then
        document id, passage id, start, runs and score."""

    @abstractmethod
    def _highlight(self, passage: int, phrases: Sequence[Sequence[str]]) -> str | None:
        """The passage's text with every match of ``phrases`` (all must match) between the marks; ``None`` if they do not."""

    def search(
        self, phrases: Sequence[Sequence[str]], *, series: str | None = None, limit: int = 20,
        after: SearchKey | None = None, access: SearchAccess | None = None,
    ) -> list[SearchRow]:
        """One page of the passages matching every phrase, best first (then by passage, name).

        Each row carries the passage's text marked for all the phrases, and
        for each phrase alone (to find the stretch that holds them all).
        """
        from pdi.passages.fulltext import Passage

        rows: list[SearchRow] = []
        with self._read():
            for row in self._search_page(phrases, series, limit, after, access):
                record = _rep(row)
                doc, pid, start, runs, score = row[14:19]
                whole = self._highlight(int(pid), phrases)
                if whole is None:  # pragma: no cover - the engine's match and its highlight disagree
                    continue
                each = (
                    tuple(self._highlight(int(pid), [phrase]) or "" for phrase in phrases)
                    if len(phrases) > 1 else (whole,)
                )
                key = SearchKey(float(score), int(pid), int(doc), record.version, record.format)
                rows.append(SearchRow(record, Passage.decode(int(start), "", bytes(runs)), whole, each, key))
        return rows

    def search_sources(self, series: str | None = None, *, page: int = 500) -> Iterator[tuple[str, str, str]]:
        """Every (sha256, media type, charset) the catalog names (by names in ``series``), in order, a page at a time."""
        scope = "FROM representations r"
        params: list[Any] = []
        if series is not None:
            scope += " JOIN documents d ON d.id = r.document WHERE d.series = ? AND r.purged IS NULL"
            params.append(series)
        else:
            scope += " WHERE r.purged IS NULL"  # a purged name's octets are gone, and stay unindexed
        after: tuple[str, str, str] | None = None
        while True:
            bound = "" if after is None else " AND (r.sha256, r.media_type, COALESCE(r.charset, '')) > (?, ?, ?)"
            with self._read():
                rows = self._query(
                    f"SELECT DISTINCT r.sha256, r.media_type, COALESCE(r.charset, '') {scope}{bound}"
                    " ORDER BY 1, 2, 3 LIMIT ?",
                    [*params, *(after or ()), page],
                )
            for row in rows:
                yield (str(row[0]), str(row[1]), str(row[2]))
            if len(rows) < page:
                return
            after = (str(rows[-1][0]), str(rows[-1][1]), str(rows[-1][2]))

    def _count_sources(self, series: str | None) -> int:
        scope = "FROM representations r"
        params: list[Any] = []
        if series is not None:
            scope += " JOIN documents d ON d.id = r.document WHERE d.series = ?"
            params.append(series)
        rows = self._query(
            f"SELECT COUNT(*) FROM (SELECT DISTINCT r.sha256, r.media_type, COALESCE(r.charset, '') {scope}) s", params
        )
        return int(rows[0][0])

    def rebuild_search_index(
        self, series: str | None = None, progress: Callable[[int, int], None] | None = None
    ) -> tuple[int, int, list[tuple[str, str]]]:
        """Make the full-text index again, in one write transaction: a failure leaves the old one.

        With ``series``, only the blobs its names hold. Returns how many
        sources were read, how many passages made, and the sources that
        could not be read as text, each with why (``sha256``, note).
        """
        from pdi.archive.search import index_blob, search_kind

        with self._write():
            total = self._count_sources(series) if progress is not None else 0
            sources = 0
            passages = 0
            notes: list[tuple[str, str]] = []
            if series is None:
                self._delete_passages(None)
                self._query("DELETE FROM search_sources")
            batch: list[tuple[str, str, str]] = []

            def flush() -> None:
                nonlocal sources, passages
                if series is not None and batch:
                    self._delete_passages(batch)
                    for source in batch:
                        self._query(
                            "DELETE FROM search_sources WHERE sha256 = ? AND media_type = ? AND charset = ?", source
                        )
                for sha256, media_type, charset in batch:
                    if search_kind(media_type) is not None:
                        with index_blob(self, sha256, media_type, charset or None) as found:
                            self._index_source(sha256, media_type, charset or None, found)
                            if found.note is not None:
                                notes.append((sha256, found.note))
                            passages += found.count
                    sources += 1
                    if progress is not None:
                        progress(sources, max(total, sources))
                batch.clear()

            for source in self.search_sources(series):
                batch.append(source)
                if len(batch) >= 100:
                    flush()
            flush()
        return sources, passages, notes

    # --- the audit log -------------------------------------------------------------
    def _insert_audit(self, entry: AuditRecord) -> None:
        self._query(
            "INSERT INTO audit_log (at, who, action, subject, detail, address) VALUES (?, ?, ?, ?, ?, ?)",
            (entry.at, entry.who, entry.action, entry.subject, entry.detail, entry.address),
        )

    def audit_log(self, after: int = 0, limit: int = 1000) -> list[AuditRecord]:
        """Audit entries with ids above ``after``, oldest first (a keyset page of at most ``limit``)."""
        with self._read():
            rows = self._query(
                "SELECT id, at, who, action, subject, detail, address FROM audit_log"
                " WHERE id > ? ORDER BY id LIMIT ?",
                (after, limit),
            )
        return [
            AuditRecord(str(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5]),
                        None if r[6] is None else str(r[6]), int(r[0]))
            for r in rows
        ]

    # --- the catalog's own invariants ------------------------------------------------------
    def _database_problems(self) -> list[str]:
        """What the database's own consistency check finds (none where it has none to run)."""
        return []

    def catalog_problems(self, limit: int = 1000) -> list[CatalogProblem]:
        """Damage to the catalog: the database's own check, then the invariants pdi keeps.

        Each document's serial and unique id agree (a serial is written as its
        digits) and its day agrees with its year, month and day of month and
        with the GMT date it was minted on; serials are gap-free per series and
        day and match the day's counter; each day's count of documents
        (``document_days``) is the number it has; versions run 1..n with at
        least one format each; a representation's SHA-256 is 64 hex digits and
        its size is not negative; a statement's subject names its own document. At most
        ``limit`` problems are returned; the checks read the catalog in pages.
        """
        found: list[CatalogProblem] = []

        def add(kind: str, subject: str, detail: str) -> bool:
            found.append(CatalogProblem(kind, subject, detail))
            return len(found) >= limit

        with self._read():
            for message in self._database_problems():
                if add("database", self.location, message):
                    return found
            after = -1
            while True:
                rows = self._query(
                    "SELECT id, series, day, year, month, dom, unique_id, serial, created_at"
                    " FROM documents WHERE id > ? ORDER BY id LIMIT 10000",
                    (after,),
                )
                if not rows:
                    break
                for row in rows:
                    after = int(row[0])
                    problem = _document_problem(row)
                    if problem is not None and add("document", _row_name(row), problem):
                        return found
            counters = {
                (str(r[0]), str(r[1])): int(r[2])
                for r in self._query("SELECT series, day, last FROM daily_serials")
            }
            for series, day, count, low, high in self._query(
                "SELECT series, day, COUNT(DISTINCT serial), MIN(serial), MAX(serial) FROM documents"
                " WHERE serial IS NOT NULL GROUP BY series, day"
            ):
                last = counters.pop((str(series), str(day)), None)
                if (int(count), int(low), int(high)) != (int(high), 1, int(high)) or last != int(high):
                    counted = "no counter" if last is None else f"the day's counter says {last}"
                    if add("serials", f"{series} {day}",
                           f"{count} serial documents numbered {low} to {high}; {counted}"
                           " (serials are 1..n without gaps)"):
                        return found
            for (series, day), last in sorted(counters.items()):
                if add("serials", f"{series} {day}", f"the day's counter says {last}, but no document has a serial"):
                    return found
            for series, day, kept, held in self._day_count_problems():
                if add("counts", f"{series} {day}",
                       f"the day's count of documents says {kept}, but it has {held}"):
                    return found
            for doc, count, low, high in self._query(
                "SELECT document, COUNT(*), MIN(version), MAX(version) FROM versions"
                " GROUP BY document HAVING COUNT(*) <> MAX(version) OR MIN(version) <> 1"
            ):
                if add("versions", self._describe_id(int(doc)), f"{plural(int(count), 'version')} numbered {low} to {high}"):
                    return found
            for (doc,) in self._query(
                "SELECT d.id FROM documents d WHERE NOT EXISTS"
                " (SELECT 1 FROM versions v WHERE v.document = d.id)"
            ):
                if add("versions", self._describe_id(int(doc)), "a document without versions"):
                    return found
            for doc, version in self._query(
                "SELECT v.document, v.version FROM versions v WHERE NOT EXISTS (SELECT 1 FROM"
                " representations r WHERE r.document = v.document AND r.version = v.version)"
            ):
                if add("versions", self._describe_id(int(doc)), f"version {version} has no format"):
                    return found
            for doc, version, fmt, sha, size in self._query(
                "SELECT document, version, format, sha256, size FROM representations"
                " WHERE LENGTH(sha256) <> 64 OR size < 0"
            ):
                if add("representation", self._describe_id(int(doc)),
                       f"version {version} format {fmt}: SHA-256 {sha!r}, size {size}"):
                    return found
            after = -1
            while True:
                rows = self._query(
                    "SELECT a.id, a.subject, d.series, d.day, d.unique_id FROM assertions a"
                    " LEFT JOIN documents d ON d.id = a.document WHERE a.id > ? ORDER BY a.id LIMIT 10000",
                    (after,),
                )
                if not rows:
                    break
                for aid, subject, series, day, unique_id in rows:
                    after = int(aid)
                    filed_right = series is not None and _subject_names(
                        str(subject), str(series), str(day), str(unique_id)
                    )
                    if not filed_right and add(
                        "statement", str(subject), "its subject does not name the document it is filed under"
                    ):
                        return found
        return found

    def _describe_id(self, doc: int) -> str:
        rows = self._query("SELECT series, day, unique_id FROM documents WHERE id = ?", (doc,))
        if not rows:
            return f"document #{doc}"
        return f"{rows[0][0]} {rows[0][1]} {rows[0][2]}"

    # --- web annotations (pdi.archive.kept_annotations) -----------------------------------------------
    def add_annotation(
        self, slug: str | None, fallback: str, data: str, targets: Sequence[tuple[DocumentKey, int | None]],
        who: str, at: str, *, address: str | None = None,
    ) -> AnnotationRecord:
        """Keep a new annotation as ``slug`` (``None``, or a slug taken, deleted or not: as ``fallback``), audited.

        The slug is claimed by the insert itself (``ON CONFLICT DO NOTHING``), so two writers asking for
        one slug at once never both get it, on either database.
        """
        with self._write():
            documents = self._annotation_documents(targets)
            chosen = None
            for name in ([slug] if slug is not None else []) + [fallback]:
                rows = self._query(
                    "INSERT INTO annotations (slug, data, revision, created_at, created_by) VALUES (?, ?, 1, ?, ?)"
                    " ON CONFLICT (slug) DO NOTHING RETURNING id",
                    (name, data, at, who),
                )
                if rows:
                    chosen = (name, int(rows[0][0]))
                    break
            if chosen is None:
                raise ImmutabilityError(f"the annotation name {fallback!r} is taken")
            self._insert_annotation_targets(chosen[1], documents)
            self._insert_audit(AuditRecord(at, who, "annotation-create", f"annotation:{chosen[0]}", "", address))
            found = self._annotation(chosen[0])
        assert found is not None
        return found

    def _annotation_documents(self, targets: Sequence[tuple[DocumentKey, int | None]]) -> list[tuple[int, int | None]]:
        """The catalog ids of the documents ``targets`` name, each with its version; each must exist."""
        found = []
        for key, version in dict.fromkeys(targets):
            doc = self._document_id(key)
            if doc is None:
                raise NotFoundError(f"no document {_describe(key)} in the archive")
            found.append((doc, version))
        return found

    def _insert_annotation_targets(self, annotation: int, documents: Sequence[tuple[int, int | None]]) -> None:
        for doc, version in documents:
            self._query("INSERT INTO annotation_targets (annotation, document, version) VALUES (?, ?, ?)",
                        (annotation, doc, version))

    def _annotation(self, slug: str) -> AnnotationRecord | None:
        rows = self._query(
            "SELECT id, slug, data, revision, created_at, created_by, modified_at, deleted_at FROM annotations"
            " WHERE slug = ?", (slug,),
        )
        if not rows:
            return None
        return self._annotation_records(rows)[0]

    def _annotation_records(self, rows: Sequence[Sequence[Any]]) -> list[AnnotationRecord]:
        """Records of ``annotations`` rows (id first), with their targets (one statement for all of them)."""
        targets: dict[int, list[tuple[DocumentKey, int | None]]] = {}
        if rows:
            ids = [int(r[0]) for r in rows]
            found = self._query(
                "SELECT t.annotation, d.series, d.day, d.unique_id, t.version FROM annotation_targets t"
                f" JOIN documents d ON d.id = t.document WHERE t.annotation IN ({', '.join('?' * len(ids))})"
                " ORDER BY t.annotation, d.id, t.version",
                ids,
            )
            for a, series, day, unique_id, version in found:
                targets.setdefault(int(a), []).append(
                    (DocumentKey(str(series), datetime.date.fromisoformat(str(day)), str(unique_id)),
                     None if version is None else int(version)))
        return [
            AnnotationRecord(str(r[1]), str(r[2]), int(r[3]), str(r[4]), str(r[5]),
                             None if r[6] is None else str(r[6]), None if r[7] is None else str(r[7]),
                             tuple(targets.get(int(r[0]), ())))
            for r in rows
        ]

    def annotation(self, slug: str) -> AnnotationRecord | None:
        """The annotation kept as ``slug`` (a deleted one too, with when), or ``None``."""
        with self._read():
            return self._annotation(slug)

    def replace_annotation(
        self, slug: str, revision: int, data: str, targets: Sequence[tuple[DocumentKey, int | None]],
        who: str, at: str, *, address: str | None = None,
    ) -> AnnotationRecord | None:
        """Replace the state of ``slug`` if it is still at ``revision`` (``None``: it is not), audited."""
        with self._write():
            documents = self._annotation_documents(targets)
            rows = self._query(
                "UPDATE annotations SET data = ?, revision = revision + 1, modified_at = ?"
                " WHERE slug = ? AND revision = ? AND deleted_at IS NULL RETURNING id",
                (data, at, slug, revision),
            )
            if not rows:
                return None
            self._query("DELETE FROM annotation_targets WHERE annotation = ?", (rows[0][0],))
            self._insert_annotation_targets(int(rows[0][0]), documents)
            self._insert_audit(AuditRecord(at, who, "annotation-update", f"annotation:{slug}", "", address))
            return self._annotation(slug)

    def delete_annotation(self, slug: str, revision: int, who: str, at: str, *, address: str | None = None) -> bool:
        """Delete ``slug`` if it is still at ``revision`` (its row, name and targets are kept, marked deleted), audited."""
        with self._write():
            rows = self._query(
                "UPDATE annotations SET deleted_at = ? WHERE slug = ? AND revision = ? AND deleted_at IS NULL"
                " RETURNING id",
                (at, slug, revision),
            )
            if not rows:
                return False
            # its targets stay: who may not read them is not told even that it was deleted
            self._insert_audit(AuditRecord(at, who, "annotation-delete", f"annotation:{slug}", "", address))
        return True

    def annotation_page(
        self, access: SearchAccess | None, offset: int, limit: int
    ) -> tuple[int, list[AnnotationRecord]]:
        """How many annotations ``access`` lets a reader see, and ``limit`` of them from ``offset``, oldest first.

        An annotation is left out when any document it targets is one the
        reader may not read: of a series it may not read, or embargoed (the
        document or the version targeted) outside the series it may read.
        """
        where = "a.deleted_at IS NULL"
        params: list[Any] = []
        if access is not None:
            refused = []
            if access.excluded:
                refused.append(f"d.series IN ({', '.join('?' * len(access.excluded))})")
                params += access.excluded
            exempt = f"d.series NOT IN ({', '.join('?' * len(access.readable))}) AND " if access.readable else ""
            refused.append(f"({exempt}(d.embargo_until > ? OR v.embargo_until > ?))")
            params += [*access.readable, access.now, access.now]
            where += (
                " AND NOT EXISTS (SELECT 1 FROM annotation_targets t JOIN documents d ON d.id = t.document"
                " LEFT JOIN versions v ON v.document = t.document AND v.version = t.version"
                f" WHERE t.annotation = a.id AND ({' OR '.join(refused)}))"
            )
        with self._read():
            total = int(self._query(f"SELECT COUNT(*) FROM annotations a WHERE {where}", params)[0][0])
            rows = self._query(
                "SELECT a.id, a.slug, a.data, a.revision, a.created_at, a.created_by, a.modified_at, a.deleted_at"
                f" FROM annotations a WHERE {where} ORDER BY a.id LIMIT ? OFFSET ?",
                [*params, limit, offset],
            )
            return total, self._annotation_records(rows)

    # --- assertions ---------------------------------------------------------------------
    def add_assertion(
        self, key: DocumentKey, subject: str, name: str, value: str, who: str, at: str,
        *, address: str | None = None, audited: bool = False,
    ) -> AssertionRecord:
        with self._write():
            doc = self._document_id(key)
            if doc is None:
                raise NotFoundError(f"no document {_describe(key)} in the archive")
            rows = self._query(
                "INSERT INTO assertions (document, subject, key, value, who, at)"
                " VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (doc, subject, name, value, who, at),
            )
            if audited:
                self._insert_audit(AuditRecord(at, who, "statement", subject, name, address))
        return AssertionRecord(int(rows[0][0]), subject, name, value, who, at)

    def iter_assertions(self, *, page: int = PAGE_ROWS) -> Iterator[AssertionRecord]:
        """Every statement, oldest first, read a page at a time (keyset on the id)."""
        after = -1
        while True:
            with self._read():
                rows = self._query(
                    "SELECT id, subject, key, value, who, at FROM assertions WHERE id > ?"
                    " ORDER BY id LIMIT ?",
                    (after, page),
                )
            for row in rows:
                yield _assertion(row)
            if len(rows) < page:
                return
            after = int(rows[-1][0])

    def assertions(self, subject: str | None = None) -> list[AssertionRecord]:
        sql = "SELECT id, subject, key, value, who, at FROM assertions"
        params: list[Any] = []
        if subject is not None:
            sql += " WHERE subject = ?"
            params.append(subject)
        with self._read():
            rows = self._query(sql + " ORDER BY id", params)
        return [_assertion(r) for r in rows]


def _row_name(row: Sequence[Any]) -> str:
    return f"{row[1]} {row[2]} {row[6]}"


def _document_problem(row: Sequence[Any]) -> str | None:
    """What is inconsistent in one documents row (id, series, day, year, month, dom, unique_id, serial, created_at)."""
    _, _, day, year, month, dom, unique_id, serial, created_at = row
    try:
        date = datetime.date.fromisoformat(str(day))
    except ValueError:
        return f"its day {day!r} is not a date"
    if str(day) != date.isoformat():
        return f"its day {day!r} is not written YYYY-MM-DD"
    if (year, month, dom) != (date.year, date.month, date.day):
        return f"its day {day} disagrees with its year, month and day {year}-{month}-{dom}"
    # A serial is minted on its day; a foreign id may be dated by its source, earlier
    # (a web archive's capture date: Archive.deposit(day=)), never later.
    dated_by_source = serial is None and str(created_at)[:10] > str(day)
    if not dated_by_source and not str(created_at).startswith(str(day)):
        return f"it was minted at {created_at}, not on its day {day} (GMT)"
    uid = str(unique_id)
    if serial is None:
        if spells_serial(uid):
            return f"its unique id {uid!r} is written as a serial, but it has none"
    elif not spells_serial(uid) or int(uid) != int(serial):
        return f"its serial {serial} disagrees with its unique id {uid!r}"
    return None


def _subject_names(subject: str, series: str, day: str, unique_id: str) -> bool:
    """Whether a statement's subject (a canonical PDI) names the document (series, day, unique id)."""
    from pdi.identifier import PDI

    try:
        parsed = PDI.parse(subject)
    except ValueError:
        return False
    return (
        parsed.series_name.lower() == series
        and parsed.date is not None
        and parsed.date.isoformat() == day
        and parsed.unique_id == unique_id
    )


T = TypeVar("T")


def check_imported_blob(expected: str, found: str) -> None:
    """An import's object must still have the SHA-256 its record names."""
    if found != expected:
        raise IntegrityError(
            f"the object for {expected} in the import has the SHA-256 {found}:"
            " it changed or is damaged; nothing was imported"
        )


def _each(items: Sequence[T], action: Callable[[T], None]) -> None:
    """``action`` on every item, even when it fails on one; then the first failure is raised."""
    errors: list[BaseException] = []
    for item in items:
        try:
            action(item)
        except BaseException as exc:  # act on the rest, then report the first
            errors.append(exc)
    if errors:
        raise errors[0]


def _discard(blobs: Sequence[StagedBlob]) -> None:
    """After a failed deposit: take back what staging added, when nothing else holds it."""
    _each(blobs, lambda blob: blob.discard())


def _release(pins: Sequence[BlobPin]) -> None:
    """Close every pin, even when closing one fails."""
    _each(pins, lambda pin: pin.close())


def _import_conflict(rec: RepresentationRecord) -> ImmutabilityError:
    return ImmutabilityError(
        f"format {rec.format} of version {rec.version} of {_describe(_key(rec))}"
        " is already in this archive with other bytes; nothing was imported"
    )


def _key(rec: RepresentationRecord) -> DocumentKey:
    return DocumentKey(rec.series, rec.day, rec.unique_id)


def _pages(items: Iterable[T], size: int = IMPORT_PAGE) -> Iterator[list[T]]:
    """``items`` a list of ``size`` at a time (the last one shorter), never all of them."""
    page: list[T] = []
    for item in items:
        page.append(item)
        if len(page) >= size:
            yield page
            page = []
    if page:
        yield page


@dataclass
class _ImportWritten:
    """What an import's transaction has written so far, beyond its rows: each grows with the blobs or the days, not the names."""

    staged: dict[str, StagedBlob]
    blobs: set[str] = field(default_factory=set)  # recorded (_store_blob) once each
    indexed: set[tuple[str, str, str | None]] = field(default_factory=set)  # full-text sources looked at once each
    days: set[tuple[str, str]] = field(default_factory=set)  # (series, day) for the numbering check


def _describe(key: DocumentKey) -> str:
    return f"{key.series} {key.day.isoformat()} {key.unique_id}"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
