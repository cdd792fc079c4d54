"""Documents and minting: series, deposits (mint, new version, more formats, batches), idempotency.

Gap-free daily serials: the counter row ``daily_serials(series, day)`` is
incremented inside the deposit's own transaction. A second writer waits for
the row (PostgreSQL) or the database write lock (SQLite), so two deposits can
never take the same serial, and a deposit that fails or is killed rolls its
increment back with everything else, so no serial is ever skipped.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar, cast

from pdi.archive.blobs.seam import StagedBlob
from pdi.archive.catalog.base import (
    MAX_PARAMETERS,
    CatalogBase,
    describe_key,
    mirrored_series,
    pages,
    withdrawn_holding,
    withdrawn_version,
    withdrawn_whole,
)
from pdi.archive.naming import generic_name, versioned_name
from pdi.archive.store import (
    STORED_EXACT,
    AuditRecord,
    DepositResult,
    DocumentKey,
    NewRepresentation,
    SeriesRecord,
    WriteNote,
)
from pdi.errors import (
    AccessError,
    ImmutabilityError,
    IntegrityError,
    NotFoundError,
    SeriesNotRegisteredError,
    StoreError,
)

_C = TypeVar("_C")  # what a deposit's check hands on to the write that follows it

#: A new document's day: one more document, and ``at`` its latest deposit unless a later one is recorded.
COUNT_A_DAY = (
    " ON CONFLICT (series, day) DO UPDATE SET documents = document_days.documents + 1,"
    " last_deposit = CASE WHEN document_days.last_deposit IS NULL OR document_days.last_deposit < excluded.last_deposit"
    " THEN excluded.last_deposit ELSE document_days.last_deposit END"
)


def minted_already(key: DocumentKey) -> ImmutabilityError:
    """The refusal of a name minted already, naming it as it is cited (its generic ``urn:pdi:`` name)."""
    name = generic_name(key)
    refusal = ImmutabilityError(f"{name} is already minted; deposit a new version of it instead")
    refusal.minted = name
    return refusal


def _keyed(note: WriteNote | None) -> bool:
    """Whether a write's answer is to be kept under an Idempotency-Key (then even an ``unchanged`` one is)."""
    return note is not None and note.idempotency is not None


class DocumentsPart(CatalogBase):
    """Series and deposits, each deposit one transaction, with its audit entry and Idempotency-Key."""

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

    def _stage(
        self, representations: Sequence[NewRepresentation]
    ) -> AbstractContextManager[Sequence[StagedBlob]]:
        formats = [r.format for r in representations]
        if len(set(formats)) != len(formats):
            raise ImmutabilityError(f"a deposit names a format twice: {', '.join(formats)}")
        return self._staged([rep.blob for rep in representations])

    def _insert_reps(
        self, doc: int, version: int, representations: Sequence[NewRepresentation], at: str, *, dated: bool = False
    ) -> None:
        """The rows of new formats (``dated``: of a document just inserted, whose day has ``at`` as its latest deposit)."""
        self._store_blobs([rep.blob for rep in representations])
        for rep in representations:
            if rep.index is not None:
                self._execute(
                    "INSERT INTO fragment_indexes (sha256, media_type, charset, data) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (sha256, media_type, charset) DO NOTHING",
                    (rep.sha256, rep.media_type, rep.charset or "", rep.index),
                )
            if rep.passages is not None:
                if rep.passages.queued:  # too large to index in the deposit's pass: the indexer's (pdi.archive.search)
                    self._queue_index(rep.sha256, rep.media_type, rep.charset, rep.size, at)
                else:
                    self._index_source(rep.sha256, rep.media_type, rep.charset, rep.passages)
            if rep.media_type == "message/rfc822":
                self._insert_thread(rep.sha256, rep.thread)
            self._insert_rep(
                doc, version, rep.format, rep.media_type, rep.charset, rep.line_ending,
                rep.sha256, rep.size, at, STORED_EXACT, dated=dated,
            )

    def _insert_rep(self, doc: int, version: int, *columns: Any, dated: bool = False) -> None:
        """One representations row: format, media type, charset, line ending, sha256, size, at, stored
        (and its day's latest deposit, unless ``dated``: already ``at``)."""
        self._execute(
            "INSERT INTO representations (document, version, format, media_type, charset,"
            " line_ending, sha256, size, created_at, stored) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (doc, version, *columns),
        )
        if dated:
            return
        at = columns[6]
        self._execute(
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
        """The new document's id; its day's count and latest deposit (``at``) kept in the same statement as ever."""
        rows = self._query(
            "INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (series, day, unique_id) DO NOTHING RETURNING id",
            (series, day.isoformat(), day.year, day.month, day.day, unique_id, serial, at),
        )
        if not rows:  # another writer minted it since this transaction's check: named as that check names it
            key = DocumentKey(series, day, unique_id)
            raise self._minted_already(self._document_id(key), key)
        self._query(
            "INSERT INTO document_days (series, day, documents, last_deposit) VALUES (?, ?, 1, ?)" + COUNT_A_DAY,
            (series, day.isoformat(), at),
        )
        return int(rows[0][0])

    def _minted_of(self, keys: Sequence[DocumentKey]) -> set[DocumentKey]:
        """Which of ``keys`` are documents already, asked as :meth:`_document_id` asks (on a replica that found
        none, the primary too), in one statement a page of keys."""
        found: set[DocumentKey] = set()
        for chunk in pages(keys, MAX_PARAMETERS // 4):
            relation, params = self._rows(
                ("int", "text", "text", "text"),
                [(i, key.series, key.day.isoformat(), key.unique_id) for i, key in enumerate(chunk)],
            )
            sql = (f"SELECT k.column1 FROM {relation} WHERE EXISTS (SELECT 1 FROM documents d WHERE d.series = k.column2"
                   " AND d.day = k.column3 AND d.unique_id = k.column4)")
            rows = self._query(sql, params) or self._ask_primary(sql, params)  # minted, perhaps, not yet replicated
            found.update(chunk[int(row[0])] for row in rows)
        return found

    def documents_of(self, keys: Sequence[DocumentKey]) -> set[DocumentKey]:
        """Which of ``keys`` are documents already, in one read and one statement a page of keys (an import asked
        each of its pages' names alone, a read transaction each: issue 24)."""
        with self._read():
            return self._minted_of(keys)

    # Each deposit checks its preconditions twice: before any blob is staged
    # (so refused input leaves no trace, not even an unreferenced blob file),
    # and again inside the write transaction, which is what makes it safe
    # against a concurrent writer.
    def _check_mint(
        self,
        series: str,
        key: DocumentKey | None,
        same: Sequence[NewRepresentation] | None = None,
        *,
        registered: bool = False,
    ) -> DepositResult | None:
        """``None`` when a document may be minted; its latest version when it holds ``same``.

        ``registered``: the caller found ``series`` registered already (a series is never
        removed), so it is not asked again.
        """
        # whether the series is mirrored here is asked inside the write itself: a `pdi mirror add` committed a
        # moment ago stops the next mint at once, whatever a process remembers of the series
        origin = "(SELECT base_url FROM mirrors WHERE series = ? AND role = 'origin')"
        if registered:
            (found,) = self._query(f"SELECT 1, {origin}", (series,))
        else:
            (found,) = self._query(f"SELECT (SELECT 1 FROM series WHERE name = ?), {origin}", (series, series))
            if found[0] is None:
                raise SeriesNotRegisteredError(series)
        if found[1] is not None:
            raise mirrored_series(series, str(found[1]))
        doc = None if key is None else self._document_id(key)
        if key is None or doc is None:
            return None
        if same is not None:
            latest = self._latest_if_identical(doc, same, key)
            if latest is not None:
                return DepositResult(key, latest, unchanged=True)
        raise self._minted_already(doc, key)

    def _minted_already(self, doc: int | None, key: DocumentKey) -> ImmutabilityError:
        """The refusal of the name of ``doc`` (``key``), minted already: a new version of it is the way, unless the
        document was withdrawn whole, which takes none (:meth:`_not_withdrawn_whole`): then its withdrawal is named."""
        gone = None if doc is None else self._withdrawal(doc)
        if gone is None:
            return minted_already(key)
        at, reason, _, purged, _ = gone
        return ImmutabilityError(
            f"{describe_key(key)} is already minted, and was withdrawn whole at {at}"
            f"{' (its octets purged)' if purged else ''}, reason: {reason}; it takes no version, so nothing was deposited"
        )

    def _latest_if_identical(
        self, doc: int, representations: Sequence[NewRepresentation], key: DocumentKey
    ) -> int | None:
        """The latest version of ``doc`` (``key``) if it holds exactly ``representations`` (format, SHA-256, charset).

        A latest version that holds them but was withdrawn (by its own name or its document's) holds them for no
        one: it resolves to its tombstone. The deposit is refused (:class:`ImmutabilityError`) naming it and its
        withdrawal, rather than answered ``unchanged`` with a name that will not serve them. When that version alone
        was withdrawn, a forced new version holds them: the refusal is :attr:`~ImmutabilityError.forceable`, and
        each front end that can force one says how; a document withdrawn whole takes nothing.
        """
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
        if held != given or len(stored) != len(representations):
            return None
        gone = self._withdrawal(doc, latest)
        if gone is not None:
            at, reason, _, purged, version = gone
            names = ", ".join(versioned_name(key, f, latest) for f, _, _ in sorted(held))
            # withdrawn whole, nothing can be deposited; else a forced new version holds them: each front end says
            # how (forced_by)
            raise withdrawn_holding(names, at, reason, purged, whole=None if version is not None else generic_name(key))
        return latest

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
        """Mint a document of ``series`` (``registered``: the caller found the series registered, and a
        series is never removed, so the write does not ask again)."""
        if not representations:
            raise StoreError("a deposit needs at least one format")
        given = None if unique_id is None else DocumentKey(series, day, unique_id)
        same = representations if skip_identical else None
        # A new serial with no Idempotency-Key: the first pass could find nothing but a series not registered,
        # which the write's own check finds as well (on PostgreSQL, three round trips fewer).
        return self._two_passes(
            note, at, representations,
            lambda lock: (self._check_mint(series, given, same, registered=registered), None),
            lambda _: DepositResult(self._new_document(series, day, unique_id, representations, at, note), 1),
            first_pass=unique_id is not None or (note is not None and note.idempotency is not None),
        )

    def _new_document(
        self, series: str, day: datetime.date, unique_id: str | None,
        representations: Sequence[NewRepresentation], at: str, note: WriteNote | None,
    ) -> DocumentKey:
        """Inside the write transaction, its checks made: a new document (the day's next serial for ``None``), version 1."""
        return self._new_document_row(series, day, unique_id, representations, at, note)[1]

    def _new_document_row(
        self, series: str, day: datetime.date, unique_id: str | None,
        representations: Sequence[NewRepresentation], at: str, note: WriteNote | None,
    ) -> tuple[int, DocumentKey]:
        """:meth:`_new_document`, and the new document's row id."""
        doc, unique_id = self._insert_version_one(series, day, unique_id, at, note.embargo_until if note else None)
        self._insert_reps(doc, 1, representations, at, dated=True)
        return doc, DocumentKey(series, day, unique_id)

    def _insert_version_one(
        self, series: str, day: datetime.date, unique_id: str | None, at: str, embargo_until: str | None
    ) -> tuple[int, str]:
        """The rows of a new document and its version 1 (the day's next serial for ``None``): its id and unique id.

        The series was checked in this transaction already; a serial a foreign
        id has taken is refused by the insert. (PostgreSQL does it all in one
        statement: :mod:`pdi.archive.postgres`.)
        """
        serial: int | None = None
        if unique_id is None:
            serial = self._next_serial(series, day.isoformat())
            unique_id = str(serial)
        doc = self._insert_document(series, day, unique_id, serial, at)
        self._execute(
            "INSERT INTO versions (document, version, created_at, embargo_until) VALUES (?, 1, ?, ?)",
            (doc, at, embargo_until),
        )
        return doc, unique_id

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

        def check(lock: bool) -> tuple[DepositResult | None, int]:
            doc = self._check_document(key, lock=lock)
            # asked again in the write transaction, the document's row locked as a withdrawal locks it: a
            # withdrawal committed while the octets were staged refuses the version too
            self._not_withdrawn_whole(doc, key)
            latest = self._latest_if_identical(doc, representations, key) if skip_identical else None
            if skip_identical and latest is None:
                self._not_held_withdrawn(doc, representations, key)
            return (None if latest is None else DepositResult(key, latest, unchanged=True)), doc

        def make(doc: int) -> DepositResult:
            rows = self._query("SELECT MAX(version) FROM versions WHERE document = ?", (doc,))
            version = int(rows[0][0]) + 1
            self._execute(
                "INSERT INTO versions (document, version, created_at, embargo_until) VALUES (?, ?, ?, ?)",
                (doc, version, at, note.embargo_until if note else None),
            )
            self._insert_reps(doc, version, representations, at)
            return DepositResult(key, version)

        return self._two_passes(note, at, representations, check, make)

    def _not_held_withdrawn(self, doc: int, representations: Sequence[NewRepresentation], key: DocumentKey) -> None:
        """Refuse (:func:`withdrawn_holding`, forceable) a new version of ``doc`` (``key``) any of whose formats holds
        the octets (by SHA-256) of a version of it withdrawn alone, the latest or an earlier one, purged or not (the
        catalog keeps each representation's SHA-256): it would serve them again under a new name. The newest such
        version is named, with the formats that hold them. One statement, by the document's withdrawals and the
        representations' SHA-256 index: it reads no more rows for a long history of versions in service.
        """
        shas = sorted({r.sha256 for r in representations})
        # the document's withdrawals first (a few rows), each version's formats then found by their SHA-256's index:
        # CROSS JOIN keeps SQLite to that order (it walked every representation of the document by its primary key
        # otherwise); PostgreSQL plans a two-table join as it sees fit either way
        rows = self._query(
            "SELECT r.version, r.format, r.purged, w.at, w.reason, w.purged FROM withdrawals w"
            " CROSS JOIN representations r WHERE w.document = ? AND r.document = w.document AND r.version = w.version"
            f" AND r.sha256 IN ({', '.join('?' * len(shas))}) ORDER BY r.version DESC, w.id, r.format",
            (doc, *shas),
        )
        if not rows:
            return
        newest = int(rows[0][0])
        held = [row for row in rows if int(row[0]) == newest]
        _, _, _, at, reason, _ = held[0]  # the version's first tombstone, as a reader is shown it
        names = ", ".join(sorted({versioned_name(key, str(row[1]), newest) for row in held}))
        purged = any(row[2] is not None or bool(row[5]) for row in held)
        raise withdrawn_holding(names, str(at), str(reason), purged)

    def _not_withdrawn_whole(self, doc: int, key: DocumentKey) -> None:
        """Refuse (:class:`WithdrawnError`) a new version of ``doc`` (``key``) when the document was withdrawn whole:
        its tombstone covers every version, one deposited after it too, which would be withdrawn from its start."""
        gone = self._withdrawal(doc)
        if gone is None:
            return
        at, reason, who, purged, _ = gone
        raise withdrawn_whole(key, at, reason, who, purged)

    def _withdrawal(self, doc: int, version: int | None = None) -> tuple[str, str, str, bool, int | None] | None:
        """The withdrawal that covers ``doc`` (withdrawn whole) or, given, its ``version``: at, reason, who, purged
        and the version withdrawn (``None``: the whole document, which covers every version and so comes first);
        ``None`` when neither was withdrawn."""
        rows = self._query(
            "SELECT at, reason, who, purged, version FROM withdrawals WHERE document = ?"
            " AND (version IS NULL OR version = ?) ORDER BY version IS NOT NULL, id LIMIT 1",
            (doc, -1 if version is None else version),  # versions count from 1: -1 asks for the whole's alone
        )
        if not rows:
            return None
        at, reason, who, purged, withdrawn = rows[0]
        return str(at), str(reason), str(who), bool(purged), None if withdrawn is None else int(withdrawn)

    def _version_not_withdrawn(self, doc: int, key: DocumentKey, version: int) -> None:
        """Refuse (:class:`WithdrawnError`) a format added to ``version`` of ``doc`` (``key``) when that version, or
        the whole document, was withdrawn: its tombstone covers every format of it, one added after it too."""
        gone = self._withdrawal(doc, version)
        if gone is None:
            return
        at, reason, who, purged, withdrawn = gone
        if withdrawn is None:
            raise withdrawn_whole(key, at, reason, who, purged, added="a format added to one")
        held = self._query("SELECT format FROM representations WHERE document = ? AND version = ? ORDER BY format",
                           (doc, version))
        names = ", ".join(versioned_name(key, str(f), version) for (f,) in held)
        raise withdrawn_version(names, at, reason, who, purged)

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
            raise NotFoundError(f"no version {version} of {describe_key(key)} in the archive")
        new: list[NewRepresentation] = []
        for rep in representations:
            stored = self._stored_sha(doc, version, rep.format)
            if stored is None:
                new.append(rep)
            elif stored != rep.sha256:
                raise ImmutabilityError(
                    f"format {rep.format} of version {version} of {describe_key(key)} is already"
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
        def check(lock: bool) -> tuple[DepositResult | None, tuple[int, list[NewRepresentation]]]:
            doc, new = self._check_formats(key, version, representations, lock=lock)
            # asked again in the write transaction, the document's row locked as a withdrawal locks it; before the
            # answer "unchanged", which would name a format that serves only the tombstone
            self._version_not_withdrawn(doc, key, version)
            # every format there already with these bytes: nothing is made, as a version with the same bytes
            return (None if new else DepositResult(key, version, unchanged=True)), (doc, new)

        def make(checked: tuple[int, list[NewRepresentation]]) -> DepositResult:
            self._insert_reps(checked[0], version, checked[1], at)
            return DepositResult(key, version)

        return self._two_passes(note, at, lambda checked: checked[1], check, make)

    def _two_passes(
        self,
        note: WriteNote | None,
        at: str,
        staged: Sequence[NewRepresentation] | Callable[[_C], Sequence[NewRepresentation]],
        check: Callable[[bool], tuple[DepositResult | None, _C]],
        make: Callable[[_C], DepositResult],
        *,
        first_pass: bool = True,
    ) -> DepositResult:
        """One deposit, checked twice: first in a read transaction, then again with the catalog held for writing.

        An earlier answer to the write's Idempotency-Key, or one that ``check``
        finds (``check(lock)``: an answer, or ``None`` and what ``make``
        needs), is the answer, and nothing is staged (an answer ``check`` finds
        to a write with an Idempotency-Key is found again by the write's check,
        and kept under the key as a made one is: the key is used, whatever it
        answered, draft-ietf-httpapi-idempotency-key-header §2.6). Otherwise the blobs
        (``staged``: the formats, or what picks them from the first check) are
        staged outside any transaction, and ``make`` writes the rows only if
        the second check, under the write lock, still finds nothing; the
        answer is recorded under the Idempotency-Key in the same transaction.
        Without ``first_pass`` (when the read could answer nothing the write does not; ``staged`` then a
        sequence), only the write's check is made.
        """
        blobs = staged if not callable(staged) else None
        if first_pass or blobs is None:
            with self._read():
                if (found := self._answered(note)) is not None:
                    return found
                found, checked = check(False)
            if found is not None and not _keyed(note):
                return found
            if blobs is None:
                blobs = cast(Callable[[_C], Sequence[NewRepresentation]], staged)(checked)
        with self._stage(blobs) as pins, self._write():
            self._secure(pins)
            if (found := self._answered(note, lock=True)) is not None:
                return found
            found, checked = check(True)
            return self._noted(note, found if found is not None else make(checked), at)

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
        if note.token is not None:  # revoked while its body came (pdi token revoke: "at once"): nothing is written
            row = self._query("SELECT name, revoked_at FROM tokens WHERE id = ?", (note.token,))
            if row and row[0][1] is not None:
                raise AccessError(f"token {row[0][0]!r} was revoked at {row[0][1]}, while this request was under way;"
                                  " nothing was written")
        for item, result in enumerate(results):
            # what it embargoed is said with it (an unchanged write made no version, so embargoed nothing)
            embargoed = f"; embargoed until {note.embargo_until}" if note.embargo_until and not result.unchanged else ""
            self._insert_audit(AuditRecord(
                at, note.who, note.action, note.subject(result.key),
                (note.names(item, result.key, result.version) if note.names is not None
                 else note.detail or f"version {result.version}")
                + (" (unchanged)" if result.unchanged else embargoed),
                note.address,
            ))
            if note.idempotency is not None:
                idem = note.idempotency
                self._execute(
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
        days: Sequence[datetime.date | None] | None = None,
        statements: Sequence[tuple[str, Sequence[tuple[str, str]]] | None] | None = None,
        who: str = "",
        skip_identical: bool = False,
    ) -> list[DepositResult]:
        """Mint a document for each entry (a foreign id or ``None`` for a serial, and its formats): all in one transaction.

        An id already minted, or named twice, refuses the whole batch
        (:class:`ImmutabilityError` naming the item); nothing is minted.
        With ``skip_identical``, an id already minted whose latest version
        holds exactly the entry's formats is that version, ``unchanged``, as
        :meth:`mint` answers it (nothing is made for it, its statements not
        made); the others are minted.
        ``days`` dates an item with a foreign id on another day than ``day``
        (``None``: ``day``); ``statements`` gives an item its statements
        (the subject, the canonical name of one of its formats, and the
        ``(key, value)`` pairs, made by ``who``), written in the same transaction.
        """
        if not entries or any(not reps for _, reps in entries):
            raise StoreError("a batch needs at least one item, and each item a format")
        dated = [day if d is None else d for d in (days or [None] * len(entries))]
        if len(dated) != len(entries) or (statements is not None and len(statements) != len(entries)):
            raise StoreError("a batch's days and statements are one for each item")
        if any(d != day and uid is None for d, (uid, _) in zip(dated, entries, strict=True)):
            raise StoreError("a name is dated on another day than today only with a foreign id")
        ids = [(d, uid) for d, (uid, _) in zip(dated, entries, strict=True) if uid is not None]
        if len(set(ids)) != len(ids):
            raise ImmutabilityError("a batch names one foreign id twice: " + ", ".join(sorted(
                {uid for d, uid in ids if ids.count((d, uid)) > 1})))

        named = [(item, DocumentKey(series, on, uid))
                 for item, ((uid, _), on) in enumerate(zip(entries, dated, strict=True)) if uid is not None]

        def check() -> dict[int, DepositResult]:
            # what _check_mint asks of each item, asked once for the batch: the series (registered, not mirrored
            # here), then which of its names are minted already, in one statement (two a page were a fifth of an
            # import's statements, issue 24); the first such item, in the batch's order, is the one refused,
            # unless (skip_identical) its latest version holds its formats, by _check_mint's own rule
            self._check_mint(series, None)
            minted = self._minted_of([key for _, key in named])
            held: dict[int, DepositResult] = {}
            for item, key in named:
                if key in minted:
                    doc = self._document_id(key) if skip_identical else None
                    try:
                        latest = None if doc is None else self._latest_if_identical(doc, entries[item][1], key)
                    except ImmutabilityError as withdrawn:
                        raise withdrawn.of_item(item) from None
                    if latest is None:
                        raise self._minted_already(doc or self._document_id(key), key).of_item(item)
                    held[item] = DepositResult(key, latest, unchanged=True)
            return held

        with self._read():
            found = self._answered_all(note)
            if found is not None:
                return found
            held = check()
            if len(held) == len(entries) and not _keyed(note):  # nothing to make: answered as mint answers from its read
                return [held[item] for item in range(len(entries))]
        staged = [self._stage(reps) for _, reps in entries]  # each item's formats distinct
        with contextlib.ExitStack() as stack:
            pins = [pin for one in staged for pin in stack.enter_context(one)]
            with self._write():
                self._secure(pins)
                if (found := self._answered_all(note, lock=True)) is not None:
                    return found
                held = check()
                results = []
                rows: list[tuple[int, str, str, str, str, str]] = []  # the statements, inserted together
                for item, ((uid, reps), on) in enumerate(zip(entries, dated, strict=True)):
                    if item in held:
                        results.append(held[item])
                        continue
                    try:
                        doc, key = self._new_document_row(series, on, uid, reps, at, note)
                    except ImmutabilityError as taken:  # its id minted by another writer since the check
                        raise taken.of_item(item) from None
                    results.append(DepositResult(key, 1))
                    stated = None if statements is None else statements[item]
                    if stated:
                        rows += [(doc, stated[0], name, value, who, at) for name, value in stated[1]]
                if rows:
                    self._insert_rows("INSERT INTO assertions (document, subject, key, value, who, at)",
                                      ("bigint", "text", "text", "text", "text", "text"), rows, wanted=False)
                return self._noted_all(note, results, at)
