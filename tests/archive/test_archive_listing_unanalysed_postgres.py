"""A day's listing on PostgreSQL right after a bulk load, before any ``ANALYZE``: no statement walks the day to find it.

``pdi import`` (and ``bench_archive.py``'s listing) read a catalog whose tables
were never analysed: PostgreSQL then knows nothing of how many rows a day holds
and, for two of the listing's statements, chose the unique index
``(series, day, unique_id)`` and walked every document of the day. Looking up
the first day with a document (``MIN(d.day)`` over a day's range) read all its
documents to take the least of equal values; the day's documents with a foreign
id (``serial IS NULL``) were found by reading every serial one and removing it
by a filter; the page's bounds, which ask too whether the day holds a foreign id
(so that a day named whole is not looked up first, nor its foreign ids' run read
when it holds none), must find that by one entry of an index as well. Here one
day of serial names and two with a foreign id are loaded
into a schema whose tables autovacuum may not analyse, the day and its month are listed as
``pdi ls`` lists them, and each statement that reads ``documents`` (but the page
of names, which reads the day's serial documents because it lists them) is run
again under ``EXPLAIN ANALYZE``: its scans of ``documents`` may read a handful
of rows, not the day. The listing is the same, byte for byte, as SQLite's of
the same records, and its serial names are those the grammar spells.
"""

from __future__ import annotations

import datetime
import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pdi.archive import Archive
from pdi.archive.postgres import store as postgres_store
from pdi.archive.store import RepresentationRecord, SeriesRecord
from support.pgcluster import TemporaryCluster

S = "unanalysed.example.us"
DAY = datetime.date(2026, 11, 22)
SERIALS = 3000
FOREIGN = ("report-a", "report-b")
#: At most this many rows of ``documents`` read (returned or filtered out) by a statement that looks for one day or
#: for the day's few documents with a foreign id: a handful, where the day holds ``SERIALS``.
FEW = 10


def _records() -> list[tuple[RepresentationRecord, bytes]]:
    content = b"x"
    sha = hashlib.sha256(content).hexdigest()
    made = "2026-11-22T12:00:00.000000Z"
    serial = [RepresentationRecord(S, DAY, str(n), n, 1, "png", "image/png", None, None, sha, 1, made)
              for n in range(1, SERIALS + 1)]
    foreign = [RepresentationRecord(S, DAY, uid, None, 1, "png", "image/png", None, None, sha, 1, made)
               for uid in FOREIGN]
    return [(record, content) for record in serial + foreign]


def _load(location: str) -> None:
    with Archive.init(location) as archive:
        if location.startswith("postgresql:"):  # no analysis while the test runs: the catalog as a bulk load leaves it
            for table in ("documents", "representations"):
                archive.store.query(f"ALTER TABLE {table} SET (autovacuum_enabled = off)")
        archive.store.import_all([SeriesRecord(S, None, "", "2026-11-22T12:00:00Z")], _records(), [])


@pytest.fixture(scope="module")
def loaded(pg_cluster: TemporaryCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The same records loaded into a fresh PostgreSQL schema and a fresh SQLite archive: their locations."""
    url = pg_cluster.create_schema("pdi_test_listing_unanalysed")
    sqlite = str(Path(tmp_path_factory.mktemp("unanalysed")) / "archive")
    _load(url)
    _load(sqlite)
    yield url, sqlite


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def test_a_days_listing_finds_the_day_and_its_foreign_ids_without_walking_it(
    loaded: tuple[str, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, sqlite = loaded
    pattern = f"urn:pdi://{S}/{DAY:%Y/%m/%d}/*"
    with Archive.open(url) as archive:
        store: Any = archive.store
        ((pages,),) = store.query("SELECT reltuples FROM pg_class WHERE oid = 'documents'::regclass")
        assert pages == -1  # never analysed nor vacuumed: what the planner knows after a bulk load
        sent: list[tuple[str, list[Any]]] = []
        real_query = store._query

        def query_(sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
            if "FROM documents d" in sql:
                sent.append((sql, list(params)))
            return real_query(sql, params)  # type: ignore[no-any-return]

        # the page's bounds, which ask too whether the day holds a document with a foreign id
        bounds: list[tuple[str, list[Any]]] = []
        real_batch = postgres_store._batch

        def batch_(conn: Any, statements: Any) -> Any:
            if "(SELECT TRUE FROM documents d WHERE" in statements[-1][0]:
                bounds.append((statements[-1][0], list(statements[-1][1])))
            return real_batch(conn, statements)

        monkeypatch.setattr(postgres_store, "_batch", batch_)
        store._query = query_
        listed = "".join(archive.iter_name_text(pattern))
        # the foreign ids' run alone: a day named whole is not looked up (its page's bounds say what it holds),
        # and no day after it is
        assert len(sent) == 1, sent
        assert len(bounds) == 1, bounds
        for sql, params in bounds:  # whether the day has a foreign id: a probe, not a walk of the day
            probe = re.search(r"COALESCE\(\((SELECT TRUE FROM documents d WHERE .*? LIMIT 1)\), FALSE\)", sql)
            assert probe is not None, sql
            asked = probe.group(1).count("%s")
            sent.append((probe.group(1).replace("%s", "?"), params[:asked]))
        # the month's: the look-up of its first day, the foreign ids' run and the look-up of the next day (none)
        assert "".join(archive.iter_name_text(series=S, year=DAY.year, month=DAY.month)) == listed
        store._query = real_query
        assert len(sent) >= 5, sent
        for sql, params in sent:
            ((plan,),) = store.query(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params)
            read = sum(int(node.get("Actual Rows", 0)) + int(node.get("Rows Removed by Filter", 0))
                       for node in _nodes(plan[0]["Plan"]) if node.get("Relation Name") == "documents")
            assert read <= FEW, (sql, params, read)
    serial = "".join(f"urn:pdi://{S}/{DAY:%Y/%m/%d}/{n}.png.1\n" for n in range(1, SERIALS + 1))
    foreign = "".join(f"urn:pdi://{S}/{DAY:%Y/%m/%d}/{uid}.png.1\n" for uid in FOREIGN)
    assert listed == serial + foreign
    with Archive.open(sqlite) as archive:
        assert "".join(archive.iter_name_text(pattern)) == listed
