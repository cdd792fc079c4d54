"""Row mapping: the catalog's rows as the records of :mod:`pdi.archive.store`."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from pdi.archive.store import AssertionRecord, BlobUse, RepresentationRecord
from pdi.errors import StoreError

REP_COLUMNS = (
    "d.series, d.day, d.unique_id, d.serial, r.version, r.format, r.media_type,"
    " r.charset, r.line_ending, r.sha256, r.size, r.created_at, r.stored, r.purged"
)
#: The listing order of representations (:class:`~pdi.archive.store.ListKey`).
LISTING_ORDER = " ORDER BY d.day, d.serial IS NULL, d.serial, d.unique_id, d.series, r.version, r.format"


def blob_use(sha256: str, rows: list[tuple[Any, ...]]) -> BlobUse:
    """A :class:`BlobUse` from the grouped rows of one blob (sha256, format, media type, charset, line ending, count, min, max);
    a :class:`StoreError` when a row's numbers are not numbers (a damaged catalog file)."""
    try:
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
    except (TypeError, ValueError) as exc:
        raise StoreError(f"the catalog's rows of blob {sha256} are damaged ({exc}): restore it from a backup") from exc


def rep_record(row: Sequence[Any]) -> RepresentationRecord:
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


def assertion_record(row: Sequence[Any]) -> AssertionRecord:
    return AssertionRecord(
        id=int(row[0]),
        subject=str(row[1]),
        key=str(row[2]),
        value=str(row[3]),
        who=str(row[4]),
        at=str(row[5]),
    )
