"""Checks: the catalog's own invariants (pdi verify, pdi audit of the catalog), beside the database's own check."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pdi._wording import plural
from pdi.archive.catalog.base import (
    CatalogBase,
)
from pdi.archive.naming import minting_problem
from pdi.archive.store import (
    CatalogProblem,
)
from pdi.identifier import spells_serial


class ChecksPart(CatalogBase):
    """What is inconsistent in the catalog itself (not in the blobs)."""

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
        its size is not negative, its media type is the one its format names
        and its charset is written as a deposit writes it; every e-mail message is in
        the thread index; a statement's subject names its own document; a table kept
        from the others for speed (SQLite's ``serial_names``) says what they say. At most
        ``limit`` problems are returned; the checks read the catalog in pages.
        """
        found: list[CatalogProblem] = []
        checks: tuple[Callable[[], Iterator[CatalogProblem]], ...] = (
            self._document_problems, self._numbering_problems, self._statement_problems,
            self._thread_index_problems, lambda: self._derived_problems(limit),
        )
        with self._read():
            for check in checks:
                try:
                    for problem in check():
                        found.append(problem)
                        if len(found) >= limit:
                            return found
                except (TypeError, ValueError) as exc:  # a damaged file's value read as another type
                    found.append(CatalogProblem(
                        "database", self.location, f"a row holds what its column cannot ({exc}): the file is damaged"))
                    if len(found) >= limit:
                        return found
        return found

    def _derived_problems(self, limit: int) -> Iterator[CatalogProblem]:
        """What a table kept from the others for speed says that they do not (SQLite's ``serial_names``; none
        elsewhere)."""
        return iter(())

    def repair_derived(self) -> int:
        """Make the tables kept from the others for speed again from them (``pdi verify --repair``); how many rows
        they hold now (0 where there are none)."""
        return 0

    def _document_problems(self) -> Iterator[CatalogProblem]:
        """The database's own check, then each document's row, a page at a time."""
        for message in self._database_problems():
            yield CatalogProblem("database", self.location, message)
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
                if problem is not None:
                    yield CatalogProblem("document", _row_name(row), problem)

    def _numbering_problems(self) -> Iterator[CatalogProblem]:
        """Serials against their counters, days' counts, versions 1..n each with a format, representations' digests.

        A mirrored series (:mod:`.mirrors`) may have gaps in its serials and versions: a mirror holds only what
        its origin lets it read, and never mints in it."""
        mirrored = {str(r[0]) for r in self._query("SELECT series FROM mirrors WHERE role = 'origin'")}
        counters = {
            (str(r[0]), str(r[1])): int(r[2])
            for r in self._query("SELECT series, day, last FROM daily_serials")
        }
        for series, day, count, low, high in self._query(
            "SELECT series, day, COUNT(DISTINCT serial), MIN(serial), MAX(serial) FROM documents"
            " WHERE serial IS NOT NULL GROUP BY series, day"
        ):
            last = counters.pop((str(series), str(day)), None)
            if str(series) in mirrored:
                continue
            if (int(count), int(low), int(high)) != (int(high), 1, int(high)) or last != int(high):
                counted = "no counter" if last is None else f"the day's counter says {last}"
                yield CatalogProblem("serials", f"{series} {day}",
                                     f"{count} serial documents numbered {low} to {high}; {counted}"
                                     " (serials are 1..n without gaps)")
        for (series, day), last in sorted(counters.items()):
            yield CatalogProblem("serials", f"{series} {day}", f"the day's counter says {last}, but no document has a serial")
        for series, day, kept, held in self._day_count_problems():
            yield CatalogProblem("counts", f"{series} {day}", f"the day's count of documents says {kept}, but it has {held}")
        for doc, count, low, high in self._query(
            "SELECT document, COUNT(*), MIN(version), MAX(version) FROM versions"
            " WHERE document NOT IN (SELECT d.id FROM documents d JOIN mirrors m ON m.series = d.series"
            " AND m.role = 'origin')"
            " GROUP BY document HAVING COUNT(*) <> MAX(version) OR MIN(version) <> 1"
        ):
            yield CatalogProblem("versions", self._describe_id(int(doc)), f"{plural(int(count), 'version')} numbered {low} to {high}")
        for (doc,) in self._query(
            "SELECT d.id FROM documents d WHERE NOT EXISTS"
            " (SELECT 1 FROM versions v WHERE v.document = d.id)"
        ):
            yield CatalogProblem("versions", self._describe_id(int(doc)), "a document without versions")
        for doc, version in self._query(
            "SELECT v.document, v.version FROM versions v WHERE NOT EXISTS (SELECT 1 FROM"
            " representations r WHERE r.document = v.document AND r.version = v.version)"
        ):
            yield CatalogProblem("versions", self._describe_id(int(doc)), f"version {version} has no format")
        for doc, version, fmt, sha, size in self._query(
            "SELECT document, version, format, sha256, size FROM representations"
            " WHERE LENGTH(sha256) <> 64 OR size < 0"
        ):
            yield CatalogProblem("representation", self._describe_id(int(doc)),
                                 f"version {version} format {fmt}: SHA-256 {sha!r}, size {size}")
        for fmt, media_type, charset in self._query("SELECT DISTINCT format, media_type, charset FROM representations"):
            wrong = _type_problem(str(fmt), str(media_type), None if charset is None else str(charset))
            if wrong is None:
                continue
            for doc, version in self._query(
                "SELECT document, version FROM representations WHERE format = ? AND media_type = ?"
                " AND COALESCE(charset, '') = ? ORDER BY document, version LIMIT 100",
                (fmt, media_type, charset or ""),
            ):
                yield CatalogProblem("representation", self._describe_id(int(doc)), f"version {version} format {fmt}: {wrong}")

    def _thread_index_problems(self) -> Iterator[CatalogProblem]:
        """E-mail messages (not purged) the thread index (schema 10) lacks: their threads would miss them."""
        rows = self._query(
            "SELECT COUNT(DISTINCT r.sha256) FROM representations r WHERE r.media_type = 'message/rfc822'"
            " AND r.purged IS NULL AND NOT EXISTS (SELECT 1 FROM message_heads h WHERE h.sha256 = r.sha256)"
        )
        missing = int(rows[0][0])
        if missing:
            yield CatalogProblem("messages", self.location,
                                 f"{plural(missing, 'message')} not in the thread index: their threads miss them"
                                 " (pdi reindex reads them again)")

    def _statement_problems(self) -> Iterator[CatalogProblem]:
        """Each statement's subject against the document it is filed under, a page at a time."""
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
                filed_right = series is not None and _subject_names(str(subject), str(series), str(day), str(unique_id))
                if not filed_right:
                    yield CatalogProblem("statement", str(subject), "its subject does not name the document it is filed under")

    def _day_count_problems(self) -> list[tuple[str, str, int, int]]:
        """Each (series, day) whose kept count of documents is not the number it has: (series, day, kept, counted)."""
        counted = {
            (str(r[0]), str(r[1])): int(r[2])
            for r in self._query("SELECT series, day, COUNT(*) FROM documents GROUP BY series, day")
        }
        kept = {
            (str(r[0]), str(r[1])): int(r[2]) for r in self._query("SELECT series, day, documents FROM document_days")
        }
        return [
            (series, day, kept.get((series, day), 0), counted.get((series, day), 0))
            for series, day in sorted(counted.keys() | kept.keys())
            if kept.get((series, day), 0) != counted.get((series, day), 0)
        ]

    # --- pages of documents ---------------------------------------------------------------
    def _describe_id(self, doc: int) -> str:
        rows = self._query("SELECT series, day, unique_id FROM documents WHERE id = ?", (doc,))
        if not rows:
            return f"document #{doc}"
        return f"{rows[0][0]} {rows[0][1]} {rows[0][2]}"


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
    minted = minting_problem(str(day), serial, str(created_at))
    if minted is not None:
        return minted
    uid = str(unique_id)
    if serial is None:
        if spells_serial(uid):
            return f"its unique id {uid!r} is written as a serial, but it has none"
    elif not isinstance(serial, int):  # a damaged file's value: the other rows are checked still
        return f"its serial {serial!r} is not a number"
    elif not spells_serial(uid) or int(uid) != serial:
        return f"its serial {serial} disagrees with its unique id {uid!r}"
    return None


def _type_problem(token: str, media_type: str, charset: str | None) -> str | None:
    """What is wrong with a representation's format, media type and charset as a deposit writes them (the media type
    its format names, a charset under the name pdi stores it by), or ``None``."""
    from pdi import formats
    from pdi.errors import PDIError

    try:
        named = formats.media_type_for(token)
    except PDIError:
        return f"its format {token!r} is no format token pdi knows"
    if named != media_type:
        return f"its media type {media_type!r} is not the one its format names ({named})"
    if charset is None:
        return None
    try:
        stored = formats.registered_charset(charset)
    except PDIError:
        return f"its charset {charset!r} is no charset pdi knows"
    return None if stored == charset else f"its charset {charset!r} is not written as pdi stores it ({stored})"


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
