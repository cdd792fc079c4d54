"""PostgreSQL's plan for a day's listing does not grow with the catalog once the catalog is analysed.

Autovacuum analyses a large catalog within a minute of its load. With its
statistics, PostgreSQL priced the day's documents joined to their
representations as a hash of the day's documents and a scan of every
representation (measured: a day of 10,000 names of 200,000 in 92 ms, where
looking each document's representations up by index took 36 ms). Here a
catalog of 100,000 names is analysed, every statement a day's listing sends
(names as text, pages of names, records; the first page and a later one) is
explained, and no plan may read ``representations`` but by its primary key,
per document. A control explains the plain join on the same catalog, to show
that it is big enough to be planned as a scan of every representation. What
is listed is compared with the names :func:`big_catalog.expected_names`
spells from the grammar.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import pytest
from big_catalog import FIRST, SERIES, BigCatalog, expected_names, fill

from pdi.archive import Archive
from pdi.archive.catalog.listing import ListingPart
from pdi.archive.store import ListQuery
from support.pgcluster import TemporaryCluster

DAYS, PER_DAY = 10, 10_000
#: The day listed: one in the middle of the bulk days.
LISTED = FIRST + datetime.timedelta(days=DAYS // 2)


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def _reads_of_representations(store: Any, sql: str, params: list[Any]) -> list[tuple[str, str | None]]:
    """How the plan of ``sql`` reads ``representations``: (node type, index) of each node over it; and every
    join's node type, as ("join", type)."""
    ((plan,),) = store.query(f"EXPLAIN (FORMAT JSON) {sql}", params)
    found: list[tuple[str, str | None]] = []
    for node in _nodes(plan[0]["Plan"]):
        if node.get("Relation Name") == "representations":
            found.append((str(node["Node Type"]), node.get("Index Name")))
        elif node["Node Type"] in ("Hash Join", "Merge Join"):
            found.append(("join", str(node["Node Type"])))
    return found


@pytest.fixture(scope="module")
def analysed(pg_cluster: TemporaryCluster) -> tuple[str, BigCatalog]:
    """An archive of ``DAYS * (PER_DAY + 2)`` bulk names on PostgreSQL, its tables analysed."""
    url = pg_cluster.create_schema("pdi_test_listing_plan")
    big = fill(url, days=DAYS, per_day=PER_DAY, foreign_per_day=2)
    with Archive.open(url) as archive:
        archive.store.query("ANALYZE documents")
        archive.store.query("ANALYZE representations")
        ((documents, representations),) = archive.store.query(
            "SELECT (SELECT reltuples FROM pg_class WHERE oid = 'documents'::regclass),"
            " (SELECT reltuples FROM pg_class WHERE oid = 'representations'::regclass)")
    assert documents >= 100_000 and representations >= 100_000  # the statistics know the catalog's size
    return url, big


def test_a_days_listing_reads_each_documents_representations_by_index_in_an_analysed_catalog(
    analysed: tuple[str, BigCatalog],
) -> None:
    url, big = analysed
    prefix = f"urn:pdi://{SERIES}/{LISTED:%Y/%m/%d}/"
    wanted = "".join(f"{n}\n" for n in expected_names(big) if n.startswith(prefix))
    with Archive.open(url) as archive:
        store: Any = archive.store
        sent: list[tuple[str, list[Any]]] = []  # every statement of the listing, with its parameters, as sent
        real_query, real_text = store._query, store._serial_text

        def query_(sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
            if "FROM documents d" in sql and "LIMIT" in sql:
                sent.append((sql, list(params)))
            return real_query(sql, params)  # type: ignore[no-any-return]

        def serial_text(names: tuple[str, list[Any]], last: tuple[str, list[Any]], page: int) -> Any:
            sent.extend([names, last])
            return real_text(names, last, page)

        store._query, store._serial_text = query_, serial_text
        query = ListQuery(series=SERIES, year=LISTED.year, month=LISTED.month, day=LISTED.day)
        # pages of 4,000: the first page of a run, and later ones that start after a key
        text = "".join(
            part if isinstance(part, str) else "".join(f"{prefix}{uid}.{fmt}.{version}\n"
                                                       for uid, _, version, fmt in part[2])
            for part in store.iter_name_text(query, page=4000))
        assert text == wanted  # byte for byte, as the grammar spells the names
        pages = [row for _, _, rows in store.iter_name_pages(query, page=4000) for row in rows]
        records = [f"{prefix}{r.unique_id}.{r.format}.{r.version}" for r in store.iter_representations(query, page=4000)]
        assert len(pages) == PER_DAY + 2 and "".join(f"{n}\n" for n in records) == wanted
        store._query, store._serial_text = real_query, real_text
        assert len(sent) >= 3 * 4 and any("> (" in sql for sql, _ in sent)
        for sql, params in sent:
            reads = _reads_of_representations(store, sql, params)
            # one look-up by the primary key a document; never a scan of the whole table, nor a hash of it
            assert reads and all(t in ("Index Scan", "Index Only Scan") and i == "representations_pkey"
                                 for t, i in reads), (sql, reads)
        # the control: the plain join (SQLite's statement) is planned, on this catalog, as a scan of every one
        sql, params = sent[0]
        joined = sql.replace(type(store).run_representations, ListingPart.run_representations)
        assert joined != sql
        scans = {t for t, _ in _reads_of_representations(store, joined, params)}
        assert scans & {"Seq Scan", "Parallel Seq Scan"}, scans
