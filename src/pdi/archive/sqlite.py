"""The embedded catalog: SQLite in WAL mode, in ``catalog.sqlite`` of an archive directory.

It holds a blob store (:mod:`pdi.archive.blobs`): by default the blob files
beside it (:mod:`pdi.archive.blobs.files`), or an S3-compatible store
recorded at ``pdi init``. Writers take SQLite's write lock up front (``BEGIN
IMMEDIATE``), which serializes deposits across processes, and is the removal
lock between deposits and the remover as well: no other lock is needed.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pdi import formats
from pdi._files import free_room
from pdi._later import filled
from pdi.archive.access import PUBLIC
from pdi.archive.blobs import CHUNK_SIZE, SHA256_HEX
from pdi.archive.blobs.files import FileBlobs
from pdi.archive.blobs.seam import BlobStore
from pdi.archive.catalog import SearchAccess, SQLStore, search_page
from pdi.archive.catalog.access import GENERATION
from pdi.archive.catalog.keyed_tables import KEYED_STEP, KEYED_TABLES, keyed
from pdi.archive.catalog.rows import REP_COLUMNS, rep_record
from pdi.archive.catalog.serial_names import (
    PROBLEM_KIND,
    SERIAL_NAMES,
    SERIAL_NAMES_AGAIN,
    SERIAL_NAMES_DIFFERING,
)
from pdi.archive.modes import NEW_ARCHIVE, make_folder, make_private, modes_in
from pdi.archive.naming import key_of, parse_pdi
from pdi.archive.sqlite_opening import (
    BUSY_TIMEOUT_MS,
    at_rest_on_read_only_media,
    leave_log_for_group,
    may_write,
    read_only_catalog,
    read_only_said,
    read_only_uri,
    refused_as_read_only,
)
from pdi.archive.sqlite_opening import (
    CATALOG as CATALOG,
)
from pdi.archive.store import (
    SCHEMA_VERSION,
    CatalogProblem,
    DocumentKey,
    OlderSchema,
    PublicVersion,
    RepresentationRecord,
    SmallPublic,
)
from pdi.errors import LimitError, NotFoundError, PDIError, ReadOnlyArchiveError, StoreError

if TYPE_CHECKING:
    from pdi.passages.fulltext import Passage

#: What marks a directory as a backup ``pdi backup`` made (:mod:`pdi.archive.backup`), which is not an archive.
BACKUP_MARKER = "pdi-backup.json"
#: How long a purge's checkpoint of the write-ahead log waits for readers to move on before it leaves the rest
#: to the next one (:meth:`SQLiteStore.delete_purged_blobs`): seconds.
PURGE_CHECKPOINT_WAIT = 2.0
#: 2**63: SQLite's integers are those from -2**63 to 2**63 - 1 (:meth:`SQLiteStore._beyond_integers`).
_INTEGERS = 2**63
#: The full-text index's tokenizer: FTS5's ``unicode61`` (Unicode 6.1's tables), folding case and diacritics
#: (``remove_diacritics 2``), after Porter's stemmer; its word characters are letters, numbers, private-use
#: characters and combining marks (``categories``: a Devanagari vowel sign, a Thai tone mark are letters of their
#: word, as PostgreSQL's parser reads them, not separators, which had ``काल`` found in ``कील``), but the variation
#: selectors, which pick a glyph of the same character (``葛󠄀``) and are separators still (since schema step 24 no
#: passage nor query holds one: :data:`pdi.passages.fulltext.SELECTOR_RANGES`).
FTS5_TOKENIZER: Final = ("porter unicode61 remove_diacritics 2 categories 'L* N* Co M*' separators '"
                         + "".join(map(chr, [*range(0x180B, 0x180E), 0x180F, *range(0xFE00, 0xFE10),
                                             *range(0xE0100, 0xE01F0)])) + "'")


def _fts5_reads(words: Sequence[str]) -> list[str]:
    """What :data:`FTS5_TOKENIZER` reads of each of ``words``: its terms, in order, one space between (``cat`` for
    ``Cats``), asked of an FTS5 table and its ``fts5vocab`` in a database of its own, in memory."""
    db = sqlite3.connect(":memory:")
    try:
        db.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS5_TOKENIZER.replace(chr(39), chr(39) * 2)}')")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        db.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", enumerate(words, 1))
        terms: dict[int, list[str]] = {}
        for doc, term in db.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
            terms.setdefault(int(doc), []).append(str(term))
        return [" ".join(terms.get(i, ())) for i in range(1, len(words) + 1)]
    finally:
        db.close()


class _ThreadsOwn:
    """Held in a thread's own data beside its connection: when the thread ends it goes, and the connection is
    closed (:func:`_close_owned`)."""


def _close_owned(conn: sqlite3.Connection, owned: list[sqlite3.Connection], lock: threading.RLock) -> None:
    with lock:
        if conn in owned:
            owned.remove(conn)
    conn.close()


def sqlite_temporary_folder() -> str:
    """Where SQLite writes its temporary files on Unix (``unixTempFileDir``): ``SQLITE_TMPDIR``, ``TMPDIR``,
    ``/var/tmp``, ``/usr/tmp``, ``/tmp``, the first that is a folder it may write, else the current folder.
    SQLite reads the two variables once a process, at its first temporary file: a process that changes them after
    that is told the folder they name now."""
    for folder in (os.environ.get("SQLITE_TMPDIR"), os.environ.get("TMPDIR"), "/var/tmp", "/usr/tmp", "/tmp"):
        if folder and os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK):
            return folder
    return "."


class SQLiteStore(SQLStore):
    """A directory holding ``catalog.sqlite`` and ``blobs/`` (no ``blobs/`` when the blobs are in an object store)."""

    def __init__(
        self, directory: str | os.PathLike[str], *, create: bool = False, blobs: BlobStore | None = None,
        elsewhere: bool = False,
    ) -> None:
        """The archive in ``directory`` (with ``create``, made there if it is not). Its blob files beside the
        catalog, in ``blobs/``, unless ``blobs`` is given or the blobs are ``elsewhere`` (an object store the
        caller holds next, ``pdi init DIR --blobs s3://…``) or the catalog records that they are: then no
        ``blobs/`` (nor ``tmp/``) is made or looked for."""
        self.root = Path(directory)
        self.location = str(self.root)
        #: The catalog's path made absolute: a process that changes its directory later still finds it.
        self._catalog_path = os.path.abspath(self.root / CATALOG)
        catalog = self.root / CATALOG
        fresh = not catalog.exists()
        if fresh:
            if not create:
                raise NotFoundError(
                    f"no archive at {self.root} (no {CATALOG}): name the archive (--archive, or PDI_ARCHIVE; pdi-archive"
                    " in the current directory when neither is given), or make one there with pdi init"
                )
            try:
                # its owner's alone whatever the umask, as initdb makes a data directory; a folder there already
                # (a systemd StateDirectory=) keeps its mode, and what is made in it follows (pdi.archive.modes)
                make_folder(self.root, NEW_ARCHIVE, parents=True)
                modes = modes_in(self.root)
                if blobs is None and not elsewhere:  # before the catalog: an init stopped between them leaves none
                    make_folder(self.root / "blobs", modes.folder)  # without it
            except OSError as exc:
                # a file where the folder (or one above it) would be: said as that, not as errno's "File exists"
                blocking = next((p for p in (self.root, *self.root.parents) if p.exists() and not p.is_dir()), None)
                if blocking is not None:
                    raise StoreError(f"cannot create archive directory {self.root}: {blocking} is a file, not a"
                                     " folder (give the archive another place: pdi init DIR)") from exc
                raise StoreError(f"cannot create archive directory {self.root}: {exc}") from exc
            # the catalog made of its mode before SQLite writes a page into it; SQLite makes its -wal and -shm of
            # the catalog's mode whatever the umask (os_unix.c: findCreateFileMode, unixOpenSharedMemory; tested)
            make_private(catalog, modes.file, exist_ok=True)
        #: Whether this process may only read the catalog: a member of the group of an archive shared with it
        #: (its catalog 0640, pdi.archive.modes), or a catalog on a read-only mount. Any write is refused with a
        #: :class:`ReadOnlyArchiveError` naming the archive and the permission.
        self.read_only = not fresh and not may_write(catalog)
        try:
            #: Whether the catalog is read as ``immutable``: at rest on read-only media (no lock, no ``-shm``).
            self._immutable = self.read_only and at_rest_on_read_only_media(catalog)
            if self.read_only:
                self._conn = read_only_catalog(catalog, self._immutable)
            else:
                self._conn = sqlite3.connect(
                    str(catalog), isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
                )
                self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute("PRAGMA synchronous = FULL")
                self._conn.execute("PRAGMA foreign_keys = ON")
                # what a purge deletes (a small blob's row, its passages) is overwritten with zeros in the
                # catalog's file, not only unlinked from its tree (see delete_purged_blobs for the write-ahead log)
                self._conn.execute("PRAGMA secure_delete = ON")
        except (OSError, sqlite3.Error, UnicodeDecodeError) as exc:  # the last: SQLite's message quotes a damaged schema
            if hasattr(self, "_conn"):
                self._conn.close()
            raise StoreError(f"cannot open archive catalog {catalog}: {exc}") from exc
        try:
            opened = os.stat(catalog)
        except OSError as exc:
            self._conn.close()
            raise StoreError(f"cannot open archive catalog {catalog}: {exc}") from exc
        #: The catalog file this store opened (device, inode): :meth:`check_in_place` tells another there now.
        self._opened = (opened.st_dev, opened.st_ino)
        self._lock = threading.RLock()
        #: Each thread's read-only connection of :meth:`public_version`, and all of them (closed with the store).
        self._own = threading.local()
        self._owned: list[sqlite3.Connection] = []
        try:
            # a missing blobs/ is refused only where the blobs are kept: not in an archive whose catalog records an
            # external store (pdi init DIR --blobs s3://…), which open_store holds in this one's place
            if blobs is None and (elsewhere or (not fresh and self._records_blob_store())):
                blobs = FileBlobs(self.root, folders=False)  # a stand-in: open_store holds the recorded store
            self.hold(blobs if blobs is not None else FileBlobs(self.root, create=fresh))
        except BaseException:
            self._conn.close()
            raise

    def read_only_said(self) -> str:
        return read_only_said(self.location, self._catalog_path)

    def _records_blob_store(self) -> bool:
        """Whether the catalog records an external blob store (its ``blob_store`` row), read before the
        store is whole; a catalog that cannot be read so is taken to record none (its opening says what is wrong)."""
        try:
            if self._conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'blob_store'").fetchone():
                return self._conn.execute("SELECT 1 FROM blob_store WHERE id = 1").fetchone() is not None
        except sqlite3.Error:
            pass
        return False

    def delete_purged_blobs(self, sha256s: Sequence[str]) -> tuple[list[str], list[str]]:
        """As every catalog does; then the write-ahead log is checkpointed and cut to nothing, so the pages a
        purge changed no longer hold the purged octets anywhere in the catalog's files (``secure_delete``
        zeroed them in the pages themselves). A checkpoint that readers hold back is tried again at the next.

        The checkpoint waits :data:`PURGE_CHECKPOINT_WAIT` for readers (a resolver's read lasts milliseconds), not
        the catalog's two minutes: an export's read transaction lasts the whole export, and a purge committed
        meanwhile would wait all of those two minutes (an export in the same process, for nothing: it waits on
        the purge's return)."""
        done = super().delete_purged_blobs(sha256s)
        with self._lock:
            try:
                self._conn.execute(f"PRAGMA busy_timeout = {int(PURGE_CHECKPOINT_WAIT * 1000)}")
                try:
                    self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                finally:
                    self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            except sqlite3.Error:
                pass  # busy: the next checkpoint writes the zeroed pages over the old ones
        return done

    def _own_connection(self) -> sqlite3.Connection:
        """The calling thread's read-only connection to the catalog (made at its first use; closed when the thread
        ends, or with the store): a worker thread that comes and goes leaves none behind."""
        conn: sqlite3.Connection | None = getattr(self._own, "conn", None)
        if conn is None:
            conn = sqlite3.connect(read_only_uri(self._catalog_path, self._immutable), uri=True,
                                   isolation_level=None,
                                   timeout=0, check_same_thread=False)
            conn.execute("PRAGMA mmap_size = 268435456")  # pages read where they are, not copied in: a fifth faster
            with self._lock:
                self._owned.append(conn)
            # the thread's own data goes when the thread ends: the connection is closed with it
            self._own.holder = holder = _ThreadsOwn()
            weakref.finalize(holder, _close_owned, conn, self._owned, self._lock)
            self._own.conn = conn
            # the one cursor of public_serial_named and public_digest: a cursor made and freed a statement cost a
            # first-asking N2R some 1,300 instructions (each of their statements reads one row by its key and is
            # stepped to its end, which ends its read transaction: the cursor holds no snapshot between them)
            self._own.cursor = conn.cursor()
            self._own.seen = None  # the _SERIES_STATE its series were read at (None: not yet)
            self._own.readable = frozenset()
        return conn

    def _readable_series(self, conn: sqlite3.Connection, seen: tuple[Any, ...]) -> frozenset[str]:
        """The series anyone may read (each, and every series above it, public), as this thread's connection last
        read them; read again when ``seen`` (the :data:`_SERIES_STATE` of the statement just run) differs from when
        they were: an access changed, or a series was registered, since."""
        own = self._own
        if own.seen == seen:
            readable: frozenset[str] = own.readable
            return readable
        rows = conn.execute("SELECT name, parent, access FROM series").fetchall()
        above = {str(name): (None if parent is None else str(parent), str(access)) for name, parent, access in rows}
        found = set()
        for name in above:
            chain: set[str] = set()
            at: str | None = name
            while at is not None and at not in chain:  # a loop of parents (never made) reads as not public
                chain.add(at)
                parent, access = above.get(at, (None, ""))
                if access != PUBLIC:
                    break
                at = parent
            else:
                if at is None:
                    found.add(name)
        own.readable = readable = frozenset(found)
        own.seen = seen
        return readable

    def public_version(
        self, key: DocumentKey, version: int, token: str, now: Callable[[], str], octets: bool = True,
    ) -> PublicVersion | None:
        # a connection of the calling thread's own, read-only: the catalog's one connection may be held for a
        # whole transaction by another thread; in WAL mode a reader waits for no writer
        if not isinstance(self.blobs, FileBlobs):
            return None
        try:
            conn = self._own_connection()
            rows = conn.execute(
                _PUBLIC_VERSION if octets else _PUBLIC_NAME, (key.series, key.day.isoformat(), key.unique_id, version, token)).fetchall()
            if not rows or key.series not in self._readable_series(conn, rows[0][-2:]):
                return None  # not there, or of a series not public (or one above it): the usual reads say
        except (sqlite3.Error, OverflowError):
            return None  # busy (a checkpoint), a version past 64 bits, or anything else: the usual reads say
        if len(rows) == 1:  # one format (most versions)
            row = rows[0]
            if row[17] is None:
                return None
        else:
            wanted = [r for r in rows if r[17] is not None]  # the format named, with its chunk digests
            if len(wanted) != 1:
                return None
            row = wanted[0]
        if row[13] is not None or row[14]:
            return None  # purged, withdrawn
        if _embargoed(row[15], row[16], now):
            return None
        if len(rows) == 1:
            record = rep_record(row)
            records: tuple[RepresentationRecord, ...] = (record,)
        else:
            records = tuple(rep_record(r) for r in rows)
            record = records[rows.index(row)]
        sha256 = record.sha256
        return PublicVersion(records, record, self.blobs.blob_file(sha256), int(row[17]), int(row[18]),
                             bytes(row[19]), None if row[20] is None else bytes(row[20]))

    def public_serial_version(
        self, key: DocumentKey, version: int, token: str, now: Callable[[], str], name: str | None = None,
    ) -> PublicVersion | None:
        """:meth:`public_version` of a serial name (``key.unique_id``, the serial as ``pdi add`` spells it): its row
        of ``serial_names`` (schema step 15) with a small blob's octets, read without the catalog's lock in the
        calling thread (a blob file's chunk digests by a second statement); a version of several formats is read
        by :meth:`public_version` (the records of all of them)."""
        if not isinstance(self.blobs, FileBlobs):
            return None
        day = key.day
        if name is None:
            name = f"urn:pdi://{key.series}/{day.year:04d}/{day.month:02d}/{day.day:02d}/{key.unique_id}.{token}.{version}"
        try:
            conn = self._own_connection()
            row = conn.execute(_SERIAL_NAMED, (name,)).fetchone()
            if row is None or key.series not in self._readable_series(conn, row[-2:]):
                return None  # not there (or not a serial name spelled so), or of a series not public
        except sqlite3.Error:
            return None  # busy (a checkpoint), or anything else: the usual reads say
        return self._serial_found(conn, key, version, token, now, row, None)

    def public_serial_named(
        self, name: str, series: str, now: Callable[[], str],
    ) -> SmallPublic | PublicVersion | None:
        """As every catalog does (:meth:`SQLStore.public_serial_named`): for the common case (one format, a small
        blob's octets in the row, no embargo) the five columns of :data:`_SERIAL_SMALL`, the row's own tuple cut
        (the case told by the statement: no record, no column it does not need); anything else by the one
        statement of :meth:`public_serial_version` after it, without the records :meth:`_serial_found` makes."""
        if not isinstance(self.blobs, FileBlobs):
            return None
        try:
            conn = self._own_connection()
            cursor = self._own.cursor
            row = cursor.execute(_SERIAL_SMALL, (name,)).fetchone()
            if row is None or series not in self._readable_series(conn, row[5:]):
                return None  # not there (or not a serial name spelled so), or of a series not public
            if row[4] is not None:  # one format, not withdrawn nor embargoed, its octets the row's: all it needs
                small: SmallPublic = row[:5]
                return small
            row = cursor.execute(_SERIAL_NAMED, (name,)).fetchone()  # anything else, read as public_serial reads it
            if row is None or series not in self._readable_series(conn, row[-2:]):
                return None
        except sqlite3.Error:
            return None  # busy (a checkpoint), or anything else: the usual reads say
        fields = _serial_key(name)
        if fields is None:
            return None
        return self._serial_found(conn, *fields, now, row, None)

    def public_serial_versions(
        self, asked: Sequence[tuple[DocumentKey, int, str, str]], now: Callable[[], str],
    ) -> list[PublicVersion | None]:
        """:meth:`public_serial_version` of each of ``asked`` (key, version, token, and the name as ``pdi add`` spells
        it), read by one statement for them all (their rows with their chunk digests), in one snapshot of the
        catalog; a version of several formats by :meth:`public_version`, as there."""
        if not isinstance(self.blobs, FileBlobs):
            return [None] * len(asked)
        found: list[PublicVersion | None] = []
        for start in range(0, len(asked), _SERIALS_AT_ONCE):
            some = asked[start:start + _SERIALS_AT_ONCE]
            try:
                conn = self._own_connection()
                rows = conn.execute(_SERIALS_NAMED % ", ".join("?" * len(some)), [n for *_, n in some]).fetchall()
                readable = self._readable_series(conn, rows[0][-2:]) if rows else frozenset()
            except sqlite3.Error:
                found += [None] * len(some)  # busy (a checkpoint), or anything else: the usual reads say
                continue
            by_name = {str(row[0]): row for row in rows}
            for key, version, token, name in some:
                row = by_name.get(name)
                if row is None or key.series not in readable:
                    found.append(None)
                    continue
                named = row[1:13] + row[-2:]  # as _SERIAL_NAMED reads it
                found.append(self._serial_found(conn, key, version, token, now, named, row[13:16]))
        return found

    def _serial_found(self, conn: sqlite3.Connection, key: DocumentKey, version: int, token: str,
                      now: Callable[[], str], row: Sequence[Any], fixity: Sequence[Any] | None) -> PublicVersion | None:
        """What a row of ``serial_names`` (as :data:`_SERIAL_NAMED` reads it) tells anyone of its name now; a blob
        file's chunk digests from ``fixity`` (its ``blob_fixity`` row's size, chunk size and digests, read with it),
        else by a second statement."""
        assert isinstance(self.blobs, FileBlobs)
        day = key.day
        if row[9]:
            return None  # withdrawn, purged
        if _embargoed(row[7], row[8], now):
            return None
        if row[10] != 1:  # several formats: their records date and name the version's memento
            return self.public_version(key, version, token, now)
        # RepresentationRecord(...) of the row, made without its frozen __init__ (pdi._later.filled): the same value
        record = filled(RepresentationRecord, {
            "series": key.series, "day": day, "unique_id": key.unique_id, "serial": int(key.unique_id),
            "version": version, "format": token, "media_type": str(row[0]),
            "charset": None if row[1] is None else str(row[1]), "line_ending": None if row[2] is None else str(row[2]),
            "sha256": str(row[3]), "size": int(row[4]), "created_at": str(row[5]), "stored": str(row[6]),
            "purged": None})
        data = row[11]
        if data is not None and len(data) <= CHUNK_SIZE:  # one chunk (or none): its digest is the name's SHA-256
            sha256 = record.sha256
            digest = _digest_of(sha256)
            if digest is None or (not data and digest != _EMPTY_SHA256):
                return None  # no digest as pdi writes one, or no octets where some were kept: the usual reads say
            return filled(PublicVersion, {  # PublicVersion(...), as the record
                "records": (record,), "record": record, "path": self.blobs.blob_file(sha256), "size": len(data),
                "chunk_size": CHUNK_SIZE, "chunks": digest if data else b"", "data": bytes(data)})
        if fixity is None:
            try:
                fixity = conn.execute(_FIXITY, (record.sha256,)).fetchone()
            except sqlite3.Error:
                return None
        if fixity is None or fixity[0] is None:
            return None  # no chunk digests: the usual reads say
        return PublicVersion((record,), record, self.blobs.blob_file(record.sha256), int(fixity[0]), int(fixity[1]),
                             bytes(fixity[2]), None if data is None else bytes(data))

    def public_digest(self, name: str, series: str, now: Callable[[], str]) -> str | None:
        """The SHA-256 of what ``name`` (of ``series``) names if anyone may read it now, told by its one row of
        ``serial_names``, read as :meth:`public_serial_version` reads it; ``None`` for anything else (not there,
        private, embargoed, withdrawn; not spelled as ``pdi add`` prints it)."""
        if not isinstance(self.blobs, FileBlobs):
            return None
        try:
            conn = self._own_connection()
            row = self._own.cursor.execute(_SERIAL_DIGEST, (name,)).fetchone()
            if row is None or row[3] or series not in self._readable_series(conn, row[-2:]):
                return None  # not there, withdrawn or purged, or of a series not public
        except sqlite3.Error:
            return None
        return None if _embargoed(row[1], row[2], now) else str(row[0])

    def _derived_problems(self, limit: int) -> Iterator[CatalogProblem]:
        if not self._has_table("serial_names"):
            return  # a catalog not migrated to step 15 (opened as it was, for a backup)
        for (name,) in self._query(SERIAL_NAMES_DIFFERING, (limit,)):
            yield CatalogProblem(PROBLEM_KIND, str(name), "its row of serial_names is not what the catalog's"
                                 " tables say (pdi verify --repair makes the table again from them)")

    def repair_derived(self) -> int:
        with self._write():
            for statement in SERIAL_NAMES_AGAIN:
                self._query(statement)
            return int(self._query("SELECT COUNT(*) FROM serial_names")[0][0])

    def generation_at_once(self) -> int | None:
        try:
            return int(self._own_connection().execute(GENERATION).fetchone()[0])
        except sqlite3.Error:
            return None

    def close(self) -> None:
        with self._lock:
            for conn in self._owned:
                conn.close()
            self._owned.clear()
        super().close()
        if not self.read_only:
            leave_log_for_group(self.root)

    names_schema = SERIAL_NAMES
    #: FTS5's ``highlight`` marks a phrase's instance whole: its marks are the matches as they are.
    marks_phrases_whole = True

    def migrate(self, target: int = SCHEMA_VERSION) -> int:
        """:meth:`SchemaPart.migrate` with the connection's foreign keys off: step 16 drops and makes again tables
        that others refer to, which SQLite does so (https://sqlite.org/lang_altertable.html#otheralter), the keys
        checked before the commit (:meth:`_migrated`). A connection's foreign keys can change only outside a
        transaction: the connection is the store's own, held by its lock, and none may be open."""
        with self._lock:
            if self._conn.in_transaction:
                raise StoreError(f"catalog {self.root / CATALOG}: a migration runs in no other transaction")
            with self._one_migration(target):
                self._conn.execute("PRAGMA foreign_keys = OFF")
                self._keys_broken: dict[str, int] = {}
                try:
                    return super().migrate(target)
                finally:
                    self._conn.execute("PRAGMA foreign_keys = ON")

    @contextmanager
    def _one_migration(self, target: int) -> Iterator[None]:
        """While this process migrates the catalog to ``target``: an exclusive ``flock`` on the archive's
        directory, waited for as long as another process's migration runs (as PostgreSQL's advisory lock is,
        :meth:`pdi.archive.postgres.store.PostgresStore._migrating`), which then finds the catalog migrated. A
        second ``pdi`` opening an archive another was migrating waited for SQLite's write lock only
        :data:`BUSY_TIMEOUT_MS` and failed ("database is locked", found 2026-11-30: a migration of 800,000
        passages takes minutes). A catalog at ``target`` already takes no lock (it is only read)."""
        if self.schema_version() >= target:
            yield
            return
        try:
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as exc:
            raise StoreError(f"cannot open the archive directory {self.root}: {exc.strerror or exc}") from exc
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # let go when this process ends, however it ends
            except OSError as exc:
                raise StoreError(f"cannot lock the archive directory {self.root} to migrate it: {exc}") from exc
            yield
        finally:
            os.close(fd)

    def _step(self, version: int, statements: list[str], target: int) -> Sequence[str]:
        if version != KEYED_STEP:
            return super()._step(version, statements, target)
        # rows of these tables that refer to nothing already (damage pdi verify reports): not the step's doing
        self._keys_broken = {t: len(self._query(f"PRAGMA foreign_key_check({t})")) for t in KEYED_TABLES}
        return keyed(self._query)

    def _migrated(self, before: int, now: int) -> None:
        if before < KEYED_STEP <= now:
            for table in KEYED_TABLES:
                broken = self._query(f"PRAGMA foreign_key_check({table})")
                if len(broken) > self._keys_broken.get(table, 0):
                    raise StoreError(
                        f"catalog {self.root / CATALOG}: schema step {KEYED_STEP} would leave {len(broken)} row(s) of"
                        f" {table} referring to no row of {broken[0][2]}, more than before it; nothing was changed")

    def _respace(self, passage: int, before: str, now: str) -> None:
        # an external-content FTS5 table forgets a row by being told its text as indexed, then learns the new one
        self._query("INSERT INTO search_fts (search_fts, rowid, body) VALUES ('delete', ?, ?)", (passage, before))
        super()._respace(passage, before, now)
        self._query("INSERT INTO search_fts (rowid, body) VALUES (?, ?)", (passage, now))

    def _rewrite(self, passage: int, before: str, now: Passage | None) -> None:
        self._query("INSERT INTO search_fts (search_fts, rowid, body) VALUES ('delete', ?, ?)", (passage, before))
        super()._rewrite(passage, before, now)
        if now is not None:
            self._query("INSERT INTO search_fts (rowid, body) VALUES (?, ?)", (passage, now.indexed))

    # The full-text index (schema step 5, made again by step 23): FTS5 over the passages' text, which stays in
    # search_passages (an external-content table); words are folded to lower case without diacritics and reduced
    # by the Porter stemmer, each combining mark read in its word (FTS5_TOKENIZER).
    search_schema = (
        "CREATE VIRTUAL TABLE search_fts USING fts5(body, content='search_passages', content_rowid='id',"
        f" tokenize='{FTS5_TOKENIZER.replace(chr(39), chr(39) * 2)}')",
    )
    #: Schema step 23: the index made again with :data:`FTS5_TOKENIZER` (from the passages, which stay as they are).
    marks_schema = (
        "DROP TABLE search_fts",
        *search_schema,
        "INSERT INTO search_fts (search_fts) VALUES ('rebuild')",
    )

    # --- SQL ---------------------------------------------------------------------
    def _catalog_error(self, exc: sqlite3.Error, what: str = "") -> StoreError:
        """The :class:`StoreError` of a statement on the catalog that failed (``what``: of which step); a full disk
        (``SQLITE_FULL``) said with the room where SQLite writes: the catalog's folder, and its temporary files'
        (a large sort, an index made, a statement's journal), which ``SQLITE_TMPDIR`` or ``TMPDIR`` name."""
        if self.read_only and refused_as_read_only(exc):
            return ReadOnlyArchiveError(self.read_only_said())
        said = f"catalog {self.root / CATALOG}: {what}{exc}"
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
            scratch = sqlite_temporary_folder()
            said += (f" ({free_room(self.root)} where the catalog is, {free_room(scratch)} in {scratch}, where"
                     " SQLite writes its temporary files: free some, or set TMPDIR (or SQLITE_TMPDIR) to a folder on"
                     " a disk with room)")
        return StoreError(said)

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return list(self._conn.execute(sql, tuple(params)).fetchall())
        except sqlite3.Error as exc:
            raise self._catalog_error(exc) from exc
        except OverflowError:  # a number past SQLite's 64-bit integers: a stranger's version 9223372036854775808
            return self._beyond_integers(sql, params)
        except UnicodeDecodeError as exc:  # a text of a row, or SQLite's message quoting the schema, not UTF-8
            raise StoreError(f"catalog {self.root / CATALOG}: a text that is not UTF-8 ({exc}): the file is damaged") from exc

    def _beyond_integers(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """A read with a number past 64-bit integers compares it as a number, as PostgreSQL does (``version = 2**63``
        holds for no row): such numbers are bound as reals, which compare with the integers stored by value. A
        write of one is refused: no catalog row holds it."""
        if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
            raise LimitError(f"a number past {_INTEGERS - 1}, the largest the catalog holds, cannot be stored")
        bound = tuple(float(p) if isinstance(p, int) and not -_INTEGERS <= p < _INTEGERS else p for p in params)
        try:
            return list(self._conn.execute(sql, bound).fetchall())
        except sqlite3.Error as exc:
            raise self._catalog_error(exc) from exc

    def check_in_place(self) -> None:
        """A :class:`StoreError` when the file at the catalog's path is no longer the one this store opened: the
        archive moved aside, and another (restored, copied) put in its place, or none. A long-running process
        (``pdi serve``) would go on reading and writing the file it opened; every write asks first, and so
        does ``/readyz``."""
        catalog = self._catalog_path
        try:
            now = os.stat(catalog)
        except OSError:
            raise StoreError(f"the catalog {catalog} this process opened is no longer there (moved or removed):"
                             " restart it on the archive there now") from None
        if (now.st_dev, now.st_ino) != self._opened:
            raise StoreError(f"the catalog at {catalog} is another file than the one this process opened (replaced"
                             " or restored since): restart it, so that it reads and writes the archive there now")

    @contextmanager
    def _outermost(self, write: bool) -> Iterator[None]:
        # A writer takes the write lock up front, so deposits queue across processes; none into a catalog moved away.
        if write:  # said before SQLite's "attempt to write a readonly database" at its first write
            self.refuse_if_read_only()
        try:
            self._conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        except sqlite3.Error as exc:
            raise self._catalog_error(exc) from exc
        if write:  # asked with the lock held: no restore slips in between
            try:
                self.check_in_place()
            except StoreError:
                self._conn.execute("ROLLBACK")
                raise
        try:
            yield
        except BaseException as failing:
            if self._conn.in_transaction:  # SQLite ends it by itself after some errors (a full disk): not again
                try:
                    self._conn.execute("ROLLBACK")
                except sqlite3.Error as exc:  # said with what failed first, which is what a reader needs
                    first = str(failing) or type(failing).__name__  # (an interrupt says nothing of itself)
                    raise self._catalog_error(exc, f"rollback failed after {first}: ") from failing
            raise
        try:
            self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise self._catalog_error(exc, "commit failed: ") from exc

    # --- the full-text index ---------------------------------------------------------
    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        try:
            self._conn.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise self._catalog_error(exc) from exc

    def _passages_inserted(self, sha256: str, media_type: str, charset: str, after: int | None = None) -> None:
        # one statement gives FTS5 the text of every passage of the source (or of the batch after the id)
        if after is not None:
            self._query("INSERT INTO search_fts (rowid, body) SELECT id, body FROM search_passages WHERE id > ?",
                        (after,))
            return
        self._query(
            "INSERT INTO search_fts (rowid, body) SELECT id, body FROM search_passages"
            " WHERE sha256 = ? AND media_type = ? AND charset = ?",
            (sha256, media_type, charset),
        )

    def _delete_passages(self, sources: Sequence[tuple[str, str, str]] | None) -> None:
        if sources is None:
            self._query("INSERT INTO search_fts (search_fts) VALUES ('delete-all')")
            self._query("DELETE FROM search_passages")
            return
        for source in sources:
            where = " WHERE sha256 = ? AND media_type = ? AND charset = ?"
            self._query(
                "INSERT INTO search_fts (search_fts, rowid, body) SELECT 'delete', id, body FROM search_passages"
                + where, source,
            )
            self._query("DELETE FROM search_passages" + where, source)

    def _search_page(
        self, phrases: Sequence[Sequence[str]], series: str | None, limit: int, skip: int,
        access: SearchAccess | None = None,
    ) -> list[tuple[Any, ...]]:
        # searching only: reading a name never loads it
        from pdi.passages.fulltext import fts5_expression

        match = "SELECT rowid AS pid, bm25(search_fts) AS score FROM search_fts WHERE search_fts MATCH ?"
        return self._query(*search_page(match, [fts5_expression(phrases)], series, access, skip, limit))

    @contextmanager
    def _within(self, deadline: float | None) -> Iterator[None]:
        # SQLite calls the handler every thousand steps of its machine (a few microseconds): past the deadline it
        # stops the statement ("interrupted"); the connection is this thread's while its transaction holds it
        if deadline is None:
            yield
            return
        monotonic = time.monotonic
        if monotonic() >= deadline:
            raise TimeoutError("the deadline has passed")
        self._conn.set_progress_handler(lambda: monotonic() > deadline, 1000)
        try:
            yield
        except StoreError as exc:
            if isinstance(exc.__cause__, sqlite3.OperationalError) and monotonic() > deadline:
                raise TimeoutError("the catalog's statement was stopped at its deadline") from exc
            raise
        finally:
            self._conn.set_progress_handler(None, 0)

    def _stems(self, marked: str, phrases: Sequence[Sequence[str]]) -> tuple[tuple[str, str], ...]:
        """What FTS5's tokenizer (:data:`FTS5_TOKENIZER`: Porter's stems of words folded to lower case without
        diacritics) reads of each word of a mark holding more words than the longest phrase and of each word of
        the query's phrases, keyed by :func:`pdi.passages.hits.stem_key`: such a mark is overlapping matches made
        one (``cats cat cat`` for ``"cat cat"``), and only the words' stems tell where each match starts. Read by a
        table of the tokenizer's own in a database in memory (the catalog is not written, and may be read-only)."""
        from pdi.passages.hits import index_words, stem_key, word_spans
        from pdi.passages.hits import marked as marks_of

        longest = max((len(index_words(phrase)) for phrase in phrases), default=0)
        text, marks = marks_of(marked, phrases=False)
        wide = [spans for a, b in marks if len(spans := word_spans(text, a, b)) > longest]
        if not wide:
            return ()
        asked = sorted({stem_key(text[s:e]) for spans in wide for s, e in spans}
                       | {stem_key(w) for p in phrases for w in index_words(p)})
        return tuple(zip(asked, _fts5_reads(asked), strict=True))

    def _highlight(self, passage: int, phrases: Sequence[Sequence[str]]) -> str | None:
        from pdi.passages.fulltext import MARK_END, MARK_START, fts5_expression

        rows = self._query(
            "SELECT highlight(search_fts, 0, ?, ?) FROM search_fts WHERE search_fts MATCH ? AND rowid = ?",
            (MARK_START, MARK_END, fts5_expression(phrases), passage),
        )
        return str(rows[0][0]) if rows else None

    def _database_problems(self) -> list[str]:
        """SQLite's ``integrity_check`` (pages, records, indexes agree) and ``foreign_key_check``."""
        found = [str(r[0]) for r in self._query("PRAGMA integrity_check(100)") if str(r[0]) != "ok"]
        found += [  # a table kept by its key (schema step 16) has no row id to name the row by
            f"{r[0]} row {r[1]} refers to a missing row of {r[2]}" if r[1] is not None
            else f"a row of {r[0]} refers to a missing row of {r[2]}"
            for r in self._query("PRAGMA foreign_key_check")
        ]
        return found

    def _has_table(self, name: str) -> bool:
        return bool(
            self._query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        )

    def _has_column(self, table: str, column: str) -> bool:
        return bool(self._query("SELECT 1 FROM pragma_table_info(?) WHERE name = ?", (table, column)))


#: What tells, in the snapshot of the statement it ends, whether the series anyone may read must be read again
#: (:meth:`SQLiteStore._readable_series`, kept by each connection: a series and those above it change rarely): the
#: last access change's id (every change of a series' access adds one in its transaction,
#: :meth:`~pdi.archive.catalog.access.AccessPart.set_series_access`, as an import of series or embargoes does) and
#: the last series' row id (a series registered, public or not, is a row with a larger one; none is ever deleted).
#: Two B-tree seeks to a last row, each read as a row's id, not as ``MAX`` (the same value: the largest id, ``0`` for
#: none; an aggregate's context and steps cost a first-asking N2R's statement some 1,000 instructions more). SQLite's ``pragma_data_version``, which told it before (any commit since), had
#: SQLite prepare ``PRAGMA data_version`` again inside every statement: some 3 µs of CPU a statement in a loop of
#: its own, and 6-7 µs of a first-asking ``N2L`` in the event loop (issue 24).
_SERIES_STATE: Final = ("COALESCE((SELECT id FROM access_changes ORDER BY id DESC LIMIT 1), 0),"
                         " COALESCE((SELECT rowid FROM series ORDER BY rowid DESC LIMIT 1), 0)")

#: :meth:`SQLiteStore.public_version`'s one statement, all by primary keys: the version's representations (their
#: records, then whether withdrawn, the embargoes of the document and the version, and for the format named the
#: blob's size, chunk size and chunk digests, and its octets if a small blob's row holds them), and
#: :data:`_SERIES_STATE`.
_PUBLIC_VERSION = (
    f"SELECT {REP_COLUMNS},"
    " EXISTS (SELECT 1 FROM withdrawals w WHERE w.document = d.id AND (w.version IS NULL OR w.version = r.version)),"
    " d.embargo_until, v.embargo_until, f.size, f.chunk_size, f.chunks, b.data,"
    f" {_SERIES_STATE}"
    " FROM documents d JOIN versions v ON v.document = d.id"
    " JOIN representations r ON r.document = d.id AND r.version = v.version"
    " LEFT JOIN blob_fixity f ON f.sha256 = r.sha256 AND r.format = ?5"
    " LEFT JOIN blobs b ON b.sha256 = f.sha256"
    " WHERE d.series = ?1 AND d.day = ?2 AND d.unique_id = ?3 AND v.version = ?4 ORDER BY r.format"
)
#: The same without a small blob's octets (``NULL`` in their place): for a caller that reads none (``octets=False``).
_PUBLIC_NAME = _PUBLIC_VERSION.replace(", b.data,", ", NULL,").replace(" LEFT JOIN blobs b ON b.sha256 = f.sha256", "")


#: :meth:`SQLiteStore.public_serial_version`'s statement: a serial name's row, a small blob's octets, and
#: :data:`_SERIES_STATE` (as :data:`_PUBLIC_VERSION`). A small blob (at most
#: :data:`~pdi.archive.blobs.inline.INLINE_LIMIT` octets, less than a chunk) is one chunk, whose digest is the
#: SHA-256 the row holds: its chunk digests are not read; a blob file's are, by :data:`_FIXITY`.
_SERIAL_NAMED = (
    "SELECT n.media_type, n.charset, n.line_ending, n.sha256, n.size, n.created_at, n.stored, n.document_embargo,"
    f" n.version_embargo, n.withdrawn, n.formats, b.data, {_SERIES_STATE}"
    " FROM serial_names n LEFT JOIN blobs b ON b.sha256 = n.sha256 WHERE n.name = ?"
)
#: :meth:`SQLiteStore.public_serial_named`'s first statement: of a name whose version has one format, not withdrawn
#: nor embargoed, its octets a small blob of one chunk kept in the catalog's row (their size the row's), the media
#: type, charset, SHA-256, deposit time and octets; of any other, the same with ``NULL`` octets (then read by
#: :data:`_SERIAL_NAMED`); and :data:`_SERIES_STATE`. Seven columns, not fourteen: each column read costs the
#: statement's module its description, its value made and SQLite's mutex entered (issue 24's first-asking N2R).
_SERIAL_SMALL = (
    "SELECT n.media_type, n.charset, n.sha256, n.created_at,"
    " CASE WHEN n.formats = 1 AND NOT n.withdrawn AND n.document_embargo IS NULL AND n.version_embargo IS NULL"
    f" AND n.size > 0 AND n.size <= {CHUNK_SIZE} AND length(b.data) = n.size THEN b.data END, {_SERIES_STATE}"
    " FROM serial_names n LEFT JOIN blobs b ON b.sha256 = n.sha256 WHERE n.name = ?"
)
#: A blob's size, chunk size and chunk digests.
_FIXITY = "SELECT size, chunk_size, chunks FROM blob_fixity WHERE sha256 = ?"
#: :meth:`SQLiteStore.public_serial_versions`' statement (``%s``: a ``?`` a name): each name with the columns of
#: :data:`_SERIAL_NAMED` and its blob's chunk digests (as :data:`_FIXITY` reads them; one row at most each, both
#: joined by their primary keys).
_SERIALS_NAMED = (
    "SELECT n.name, n.media_type, n.charset, n.line_ending, n.sha256, n.size, n.created_at, n.stored,"
    f" n.document_embargo, n.version_embargo, n.withdrawn, n.formats, b.data, f.size, f.chunk_size, f.chunks,"
    f" {_SERIES_STATE}"
    " FROM serial_names n LEFT JOIN blobs b ON b.sha256 = n.sha256 LEFT JOIN blob_fixity f ON f.sha256 = n.sha256"
    " WHERE n.name IN (%s)"
)
#: Names :meth:`SQLiteStore.public_serial_versions` asks for in one statement, at most.
_SERIALS_AT_ONCE = 500
#: :meth:`SQLiteStore.public_digest`'s statement.
_SERIAL_DIGEST = (
    f"SELECT sha256, document_embargo, version_embargo, withdrawn, {_SERIES_STATE}"
    " FROM serial_names WHERE name = ?"
)


#: The SHA-256 of no octets: an empty blob's, which has no chunk to check.
_EMPTY_SHA256 = hashlib.sha256(b"").digest()


def _serial_key(name: str) -> tuple[DocumentKey, int, str] | None:
    """The key, version and format token of the serial name ``name`` as :meth:`SQLiteStore.public_serial_version`
    is asked them, read by the grammar (:func:`~pdi.archive.naming.parse_pdi`, :func:`~pdi.archive.naming.key_of`),
    as every read of a name is; ``None`` for a name that is no versioned name of a day."""
    try:
        parsed = parse_pdi(name)
        if parsed.version is None or parsed.format is None:
            return None
        return key_of(parsed), parsed.version, formats.canonical_token(parsed.format)
    except PDIError:
        return None


def _digest_of(sha256: str) -> bytes | None:
    """The 32 octets a SHA-256 spells as pdi writes it (:data:`~pdi.archive.blobs.SHA256_HEX`), else ``None``."""
    return bytes.fromhex(sha256) if SHA256_HEX.fullmatch(sha256) else None


def _embargoed(document: object, version: object, now: Callable[[], str]) -> bool:
    """Whether a document's or a version's embargo (as the catalog keeps them; ``None``: none) is not over yet;
    ``now()``, the moment as the catalog keeps one, is asked only when there is one."""
    return (document is not None or version is not None) and max(str(document or ""), str(version or "")) > now()


def open_sqlite(
    directory: str | os.PathLike[str], *, create: bool, blobs: BlobStore | None = None,
    older: OlderSchema = "refuse", elsewhere: bool = False,
) -> SQLiteStore:
    """Open (or with ``create`` make) an archive directory, its schema as ``older`` says
    (:data:`~pdi.archive.store.OlderSchema`: an older one refused unless it says to migrate or keep it; a newer
    one refused). A backup's directory (:data:`BACKUP_MARKER`) is no archive: opened as one it would be migrated
    or written to, and a rollback's backup would no longer be one.
    """
    if os.path.exists(os.path.join(directory, BACKUP_MARKER)):
        raise NotFoundError(
            f"{directory} is a backup made by pdi backup ({BACKUP_MARKER}), not an archive: pdi restore {directory}"
            " --to DIR (a PostgreSQL archive's backup: --to URL) makes an archive of it (opened as an archive, a"
            " backup would be migrated or changed)")
    store = SQLiteStore(directory, create=create, blobs=blobs, elsewhere=elsewhere)
    try:
        store.open_schema(older, create=create)
    except PDIError:
        store.close()
        raise
    return store
