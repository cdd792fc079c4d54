"""The catalog queries behind the reader's pages (both stores): counts by date, a day's documents, captures, fixity checks.

Each is written to read an index, never the whole catalog:

* counts by series and day read ``document_days`` (schema 5): a row for each
  series and GMT day, its count (and the time of its latest deposit) kept by
  the transaction that deposits, so a year or a month is a range of its key (the day's text
  ``YYYY-MM-DD`` sorts as the date) however many documents there are;
* a day's documents are a keyset page of ``documents_by_day (day, serial,
  unique_id)``: its serial documents by serial, then those with a foreign id
  by id, after the last one shown, as cheap on the thousandth page as on the first;
* the captures of a URL read ``documents_by_unique_id (unique_id, day,
  series)`` (schema 5), a keyset page too;
* a document's statements read ``assertions_by_document (document, id)`` (schema 5);
* fixity checks are appended to ``fixity_checks`` (schema 5) a page of
  blobs to a transaction, and the last of a blob read from its primary key
  ``(sha256, checked_at)``.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from pdi.archive.catalog.base import CatalogBase
from pdi.archive.catalog.rows import LISTING_ORDER, REP_COLUMNS, assertion_record, rep_record
from pdi.archive.store import (
    AssertionRecord,
    DayCount,
    DocumentKey,
    DocumentStamp,
    FixityCheck,
    FixitySummary,
    RepresentationRecord,
    SeriesCount,
)
from pdi.identifier import spells_serial

#: Rows of one multi-row INSERT of fixity checks (4 values each: within SQLite's 32,766 variables).
_CHECK_ROWS = 500


#: A document and the times it changed: its deposits, statements and withdrawals (each read from an index),
#: the end of its own and its versions' embargoes that are over by the time given twice first (``now``): an
#: embargo over shows a reader what it hid, a change an incremental harvest must see (OAI-PMH §2.7.2); and the
#: last change of access that changed what a reader without access is shown of it (schema 21: an embargo lifted
#: early, a series made public, or either the other way).
_STAMPS = (
    "SELECT d.id, d.series, d.day, d.unique_id,"
    " (SELECT MAX(r.created_at) FROM representations r WHERE r.document = d.id),"
    " (SELECT MAX(a.at) FROM assertions a WHERE a.document = d.id),"
    " (SELECT MAX(w.at) FROM withdrawals w WHERE w.document = d.id),"
    " (SELECT MIN(w.at) FROM withdrawals w WHERE w.document = d.id AND w.version IS NULL),"
    " CASE WHEN d.embargo_until <= ? THEN d.embargo_until END,"
    " (SELECT MAX(v.embargo_until) FROM versions v WHERE v.document = d.id AND v.embargo_until <= ?),"
    " d.access_changed_at"
    " FROM documents d"
)


def _stamp(row: Sequence[Any]) -> DocumentStamp:
    ended = [str(t) for t in row[8:10] if t is not None]
    access = None if row[10] is None else str(row[10])
    return DocumentStamp(
        int(row[0]), DocumentKey(str(row[1]), datetime.date.fromisoformat(str(row[2])), str(row[3])),
        max([str(t) for t in row[4:7] if t is not None] + ended + ([] if access is None else [access])),
        None if row[7] is None else str(row[7]), max(ended) if ended else None, access,
    )


def _date(value: Any) -> datetime.date | None:
    return None if value is None else datetime.date.fromisoformat(str(value))


class BrowsePart(CatalogBase):
    """The reader's catalog queries, over the connection and transactions of :class:`CatalogBase`."""

    # --- counts ------------------------------------------------------------------------
    def series_counts(self) -> list[SeriesCount]:
        """Every registered series with its number of documents and its first and last day, by name."""
        with self._read():
            rows = self._query(
                "SELECT s.name, SUM(c.documents), MIN(c.day), MAX(c.day), MAX(c.last_deposit) FROM series s"
                " LEFT JOIN document_days c ON c.series = s.name GROUP BY s.name ORDER BY s.name"
            )
        return [
            SeriesCount(str(r[0]), int(r[1] or 0), _date(r[2]), _date(r[3]), None if r[4] is None else str(r[4]))
            for r in rows
        ]

    def first_access_change(self) -> str | None:
        """The earliest change of access recorded on any document (``documents.access_changed_at``, schema 21), or
        ``None``: the earliest datestamp a record withheld by one can have."""
        with self._read():
            rows = self._query("SELECT MIN(access_changed_at) FROM documents")
        return None if not rows or rows[0][0] is None else str(rows[0][0])

    def day_last_deposits(self, series: str) -> dict[datetime.date, str]:
        """When the latest deposit into a document of each day of ``series`` was made (days with one)."""
        with self._read():
            rows = self._query("SELECT day, last_deposit FROM document_days WHERE series = ?"
                               " AND last_deposit IS NOT NULL", (series,))
        return {datetime.date.fromisoformat(str(r[0])): str(r[1]) for r in rows}

    def day_counts(
        self, series: str, first: datetime.date | None = None, last: datetime.date | None = None
    ) -> list[DayCount]:
        """The days of ``series`` with documents minted on them, from ``first`` to ``last`` (inclusive), by day."""
        sql = "SELECT day, documents FROM document_days WHERE series = ? AND documents > 0"
        params: list[Any] = [series]
        if first is not None:
            sql += " AND day >= ?"
            params.append(first.isoformat())
        if last is not None:
            sql += " AND day <= ?"
            params.append(last.isoformat())
        with self._read():
            rows = self._query(sql + " ORDER BY day", params)
        return [DayCount(datetime.date.fromisoformat(str(r[0])), int(r[1])) for r in rows]

    def nearest_days(self, series: str, day: datetime.date) -> tuple[datetime.date | None, datetime.date | None]:
        """The last day of ``series`` with documents minted on it up to ``day`` (``day`` itself if it has some), and
        the first after ``day``: one statement, two seeks of ``document_days``' key ``(series, day)``, never a scan."""
        with self._read():
            rows = self._query(
                "SELECT (SELECT MAX(day) FROM document_days WHERE series = ? AND day <= ? AND documents > 0),"
                " (SELECT MIN(day) FROM document_days WHERE series = ? AND day > ? AND documents > 0)",
                [series, day.isoformat(), series, day.isoformat()],
            )
        return (_date(rows[0][0]), _date(rows[0][1])) if rows else (None, None)

    def day_documents(
        self, series: str, day: datetime.date, after: str | None, limit: int
    ) -> list[RepresentationRecord]:
        """Every representation of the next ``limit`` documents of ``series`` minted on ``day``, in listing order.

        Documents go by serial, then by foreign id (:class:`~pdi.archive.store.ListKey`),
        starting after the document whose unique id is ``after`` (a keyset cursor).
        """
        serial_after = after is not None and spells_serial(after)
        head = "SELECT d.id FROM documents d WHERE d.day = ? AND d.series = ?"
        params: list[Any] = [day.isoformat(), series]
        with self._read():
            ids: list[int] = []
            if after is None or serial_after:
                bound = "" if after is None else " AND d.serial > ?"
                rows = self._query(
                    head + " AND d.serial IS NOT NULL" + bound + " ORDER BY d.serial, d.unique_id LIMIT ?",
                    [*params, *([] if after is None else [int(after)]), limit],
                )
                ids += [int(r[0]) for r in rows]
            if len(ids) < limit:
                bound = "" if after is None or serial_after else " AND d.unique_id > ?"
                rows = self._query(
                    head + " AND d.serial IS NULL" + bound + " ORDER BY d.unique_id LIMIT ?",
                    [*params, *([] if not bound else [after]), limit - len(ids)],
                )
                ids += [int(r[0]) for r in rows]
            return self._representations_of(ids)

    def unique_id_documents(
        self, unique_id: str, after: tuple[datetime.date, str] | None, limit: int,
        *, before: tuple[datetime.date, str] | None = None,
    ) -> list[RepresentationRecord]:
        """Every representation of the next ``limit`` documents whose unique id is ``unique_id``, in any series.

        Documents go by day, then series, after ``(day, series)`` (a keyset cursor); with ``before``, the
        ``limit`` documents just before ``(day, series)`` (still given in that order).
        """
        sql = "SELECT d.id FROM documents d WHERE d.unique_id = ?"
        params: list[Any] = [unique_id]
        if after is not None:
            sql += " AND (d.day, d.series) > (?, ?)"
            params += [after[0].isoformat(), after[1]]
        if before is not None:
            sql += " AND (d.day, d.series) < (?, ?)"
            params += [before[0].isoformat(), before[1]]
        order = " ORDER BY d.day DESC, d.series DESC" if before is not None else " ORDER BY d.day, d.series"
        with self._read():
            rows = self._query(sql + order + " LIMIT ?", [*params, limit])
            return self._representations_of([int(r[0]) for r in rows])

    def _representations_of(self, ids: Sequence[int]) -> list[RepresentationRecord]:
        """Every representation of the documents ``ids`` (a page of them), in listing order."""
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        rows = self._query(
            f"SELECT {REP_COLUMNS} FROM documents d {self.run_representations}"
            f" WHERE d.id IN ({marks}){LISTING_ORDER}",
            list(ids),
        )
        return [rep_record(r) for r in rows]

    # --- statements ------------------------------------------------------------------------
    def document_assertions(self, key: DocumentKey) -> list[AssertionRecord]:
        """Every statement filed under the document ``key`` (about it, a version, a format or a fragment), oldest first."""
        with self._read():
            rows = self._query(
                "SELECT a.id, a.subject, a.key, a.value, a.who, a.at FROM documents d"
                " JOIN assertions a ON a.document = d.id"
                " WHERE d.series = ? AND d.day = ? AND d.unique_id = ? ORDER BY a.id",
                (key.series, key.day.isoformat(), key.unique_id),
            )
        return [assertion_record(r) for r in rows]

    def document_stamps(self, after: int, series: str | None, limit: int, now: str) -> list[DocumentStamp]:
        """The next ``limit`` documents after the cursor ``after`` (of ``series`` only, if given), in catalog order.

        Each with when it last changed, read from the primary key of
        ``representations`` and the indexes ``assertions_by_document`` and
        ``withdrawals_by_document``: a page costs its own documents. An
        embargo over by ``now`` (the catalog's ISO 8601 UTC time) changed it
        when it ended; a change of access, when it was made.
        """
        sql = _STAMPS + " WHERE d.id > ?"
        params: list[Any] = [now, now, after]
        if series is not None:
            sql += " AND d.series = ?"
            params.append(series)
        with self._read():
            rows = self._query(sql + " ORDER BY d.id LIMIT ?", [*params, limit])
        return [_stamp(r) for r in rows]

    def document_stamp(self, key: DocumentKey, now: str) -> DocumentStamp | None:
        """The stamp of one document (:meth:`document_stamps`), ``None`` if the catalog has no such document."""
        with self._read():
            rows = self._query(_STAMPS + " WHERE d.series = ? AND d.day = ? AND d.unique_id = ?",
                               (now, now, key.series, key.day.isoformat(), key.unique_id))
        return _stamp(rows[0]) if rows else None

    def statements_about(self, subjects: Sequence[str], key: str) -> list[AssertionRecord]:
        """The statements of ``key`` about any of ``subjects`` (canonical names), oldest first."""
        if not subjects:
            return []
        marks = ", ".join("?" * len(subjects))
        with self._read():
            rows = self._query(
                "SELECT id, subject, key, value, who, at FROM assertions"
                f" WHERE subject IN ({marks}) AND key = ? ORDER BY id",
                [*subjects, key],
            )
        return [assertion_record(r) for r in rows]

    # --- fixity checks ---------------------------------------------------------------------
    def record_fixity_checks(self, checks: Sequence[FixityCheck]) -> None:
        """Append fixity checks, all in one transaction (a blob checked twice at one instant is kept once)."""
        with self._write():
            for start in range(0, len(checks), _CHECK_ROWS):
                part = checks[start : start + _CHECK_ROWS]
                values: list[Any] = []
                for check in part:
                    values += [check.sha256, check.checked_at, int(check.ok), check.problem]
                self._query(
                    "INSERT INTO fixity_checks (sha256, checked_at, ok, problem) VALUES "
                    + ", ".join(["(?, ?, ?, ?)"] * len(part))
                    + " ON CONFLICT (sha256, checked_at) DO NOTHING",
                    values,
                )

    def last_fixity_checks(self, sha256s: Sequence[str]) -> dict[str, FixityCheck]:
        """The latest fixity check of each blob in ``sha256s`` that was ever checked."""
        found: dict[str, FixityCheck] = {}
        with self._read():
            for sha256 in dict.fromkeys(sha256s):
                rows = self._query(
                    "SELECT checked_at, ok, problem FROM fixity_checks WHERE sha256 = ?"
                    " ORDER BY checked_at DESC LIMIT 1",
                    (sha256,),
                )
                if rows:
                    at, ok, problem = rows[0]
                    found[sha256] = FixityCheck(sha256, str(at), bool(ok), None if problem is None else str(problem))
        return found

    def fixity_summary(self) -> FixitySummary:
        """What each blob's latest fixity check found, counted over the catalog (``/metrics``)."""
        with self._read():
            rows = self._query(
                "SELECT COALESCE(SUM(CASE WHEN f.ok <> 0 THEN 1 ELSE 0 END), 0),"
                " COALESCE(SUM(CASE WHEN f.ok = 0 THEN 1 ELSE 0 END), 0), MAX(f.checked_at), MIN(f.checked_at)"
                " FROM fixity_checks f JOIN (SELECT sha256, MAX(checked_at) AS latest FROM fixity_checks"
                " GROUP BY sha256) l ON f.sha256 = l.sha256 AND f.checked_at = l.latest",
                (),
            )
        whole, damaged, newest, oldest = rows[0]
        return FixitySummary(int(whole), int(damaged), None if newest is None else str(newest),
                             None if oldest is None else str(oldest))
