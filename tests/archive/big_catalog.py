"""A catalog of a million names, made in seconds by SQL rather than by a million deposits.

:func:`fill` deposits a few real blobs through the archive (so their rows and
bytes are exactly what a deposit writes), then inserts documents, versions and
representations directly with ``INSERT … SELECT`` over a recursive counter,
all pointing at those blobs: ``per_day`` serial documents on each of ``days``
consecutive GMT days, and ``foreign_per_day`` documents with foreign ids
(``f0``, ``f1`` …) on each, with the daily serial counters and counts of
documents a deposit would have left. Every invariant ``pdi verify`` checks holds, so a sound archive
verifies clean. :func:`expected_names` spells the names in the order
``pdi ls`` must list them (date, then serial, then foreign id), worked out
from the grammar rather than read back from the archive.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from dataclasses import dataclass

from archive_helpers import GIF, PNG

from pdi.archive import Archive

SERIES = "big.example.us"
#: The day the real blobs are deposited on; the bulk names start on the day after.
FIRST = datetime.date(2026, 1, 1)


@dataclass(frozen=True)
class Blob:
    """One real blob the bulk names point at."""

    format: str
    media_type: str
    charset: str | None
    line_ending: str | None
    sha256: str
    size: int
    stored: str


@dataclass(frozen=True)
class BigCatalog:
    """What :func:`fill` made: the real deposits, then the shape of the bulk names."""

    deposited: tuple[str, ...]
    blobs: tuple[Blob, ...]
    days: int
    per_day: int
    foreign_per_day: int

    @property
    def representations(self) -> int:
        """Every representation in the archive, the real deposits included."""
        return len(self.deposited) + self.days * (self.per_day + self.foreign_per_day)


def _foreign(j: int) -> str:
    return f"f{j}"


def fill(location: str, *, days: int, per_day: int, foreign_per_day: int = 2) -> BigCatalog:
    """Make an archive at ``location`` with ``days * (per_day + foreign_per_day)`` bulk names."""

    def clock() -> datetime.datetime:
        return datetime.datetime(FIRST.year, FIRST.month, FIRST.day, 12, tzinfo=datetime.UTC)

    with Archive.init(location, clock=clock) as archive:
        archive.add_series(SERIES)
        deposited = (
            archive.add(SERIES, GIF + b"one", format="gif"),
            archive.add(SERIES, PNG + b"two", format="png"),
            archive.add(SERIES, b"three\nlines\nof text\n", format="text"),
        )
        store = archive.store
        rows = store._query(  # type: ignore[attr-defined]
            "SELECT format, media_type, charset, line_ending, sha256, size, stored FROM representations"
            " ORDER BY sha256"
        )
        blobs = tuple(Blob(str(r[0]), str(r[1]), r[2], r[3], str(r[4]), int(r[5]), str(r[6])) for r in rows)
        with store._write():  # type: ignore[attr-defined]
            for offset in range(1, days + 1):
                day = FIRST + datetime.timedelta(days=offset)
                at = f"{day.isoformat()}T12:00:00.000000Z"
                store._query(  # type: ignore[attr-defined]
                    "INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)"
                    " WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
                    " SELECT ?, ?, ?, ?, ?, CAST(i AS TEXT), i, ? FROM n",
                    (per_day, SERIES, day.isoformat(), day.year, day.month, day.day, at),
                )
                if foreign_per_day:
                    store._query(  # type: ignore[attr-defined]
                        "INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)"
                        " WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
                        " SELECT ?, ?, ?, ?, ?, 'f' || CAST(i AS TEXT), NULL, ? FROM n",
                        (foreign_per_day - 1, SERIES, day.isoformat(), day.year, day.month, day.day, at),
                    )
                store._query(  # type: ignore[attr-defined]
                    "INSERT INTO daily_serials (series, day, last) VALUES (?, ?, ?)",
                    (SERIES, day.isoformat(), per_day),
                )
                store._query(  # type: ignore[attr-defined]
                    "INSERT INTO document_days (series, day, documents, last_deposit) VALUES (?, ?, ?, ?)",
                    (SERIES, day.isoformat(), per_day + foreign_per_day, at),
                )
            first_bulk = (FIRST + datetime.timedelta(days=1)).isoformat()
            store._query(  # type: ignore[attr-defined]
                "INSERT INTO versions (document, version, created_at)"
                " SELECT id, 1, created_at FROM documents WHERE day >= ?",
                (first_bulk,),
            )
            # A serial document holds the blob its serial picks; a foreign one the first.
            for index, blob in enumerate(blobs):
                store._query(  # type: ignore[attr-defined]
                    "INSERT INTO representations (document, version, format, media_type, charset,"
                    " line_ending, sha256, size, stored, created_at)"
                    " SELECT id, 1, ?, ?, ?, ?, ?, ?, ?, created_at FROM documents"
                    # serial modulo the number of blobs, spelled so both databases take it
                    " WHERE day >= ? AND CASE WHEN serial IS NULL THEN 0 ELSE serial - serial / ? * ? END = ?",
                    (blob.format, blob.media_type, blob.charset, blob.line_ending, blob.sha256,
                     blob.size, blob.stored, first_bulk, len(blobs), len(blobs), index),
                )
    return BigCatalog(tuple(str(n) for n in deposited), blobs, days, per_day, foreign_per_day)


def expected_names(big: BigCatalog) -> Iterator[str]:
    """Every name of the archive in ``pdi ls`` order: by day, serials in order, then foreign ids by id.

    The format of a bulk name is that of its blob, which :func:`fill` chose
    by serial (a foreign id: the first blob).
    """
    yield from big.deposited
    tokens = [b.format for b in big.blobs]
    for offset in range(1, big.days + 1):
        day = FIRST + datetime.timedelta(days=offset)
        prefix = f"urn:pdi://{SERIES}/{day.year:04d}/{day.month:02d}/{day.day:02d}/"
        for serial in range(1, big.per_day + 1):
            yield f"{prefix}{serial}.{tokens[serial % len(tokens)]}.1"
        # foreign ids in code point order (f0, f1, f10, f11 … f2)
        for uid in sorted(_foreign(j) for j in range(big.foreign_per_day)):
            yield f"{prefix}{uid}.{tokens[0]}.1"
