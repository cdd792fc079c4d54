"""PostgreSQL's plan for a day's listing (and for the reader's pages of documents) does not grow with the catalog once
the catalog is analysed.

Autovacuum analyses a large catalog within a minute of its load. With its
statistics, PostgreSQL priced the day's documents joined to their
representations as a hash of the day's documents and a scan of every
representation (measured: a day of 10,000 names of 200,000 in 92 ms, where
looking each document's representations up by index took 36 ms). Here a
catalog of 100,000 names is analysed, every statement a day's listing sends
(names as text, pages of names, records; the first page and a later one) is
explained, and no plan may read ``representations`` but by its primary key,
nor read more of its rows than the day has (a listing looks up the range of the day's documents' ids). A control explains the plain join on the same catalog, to show
that it is big enough to be planned as a scan of every representation. What
is listed is compared with the names :func:`big_catalog.expected_names`
spells from the grammar. The reader's page of a day's documents (up to 1,000 and one) and the documents holding
messages (up to 501) are read by the same look-up: a page of 1,001 by the plain join was a hash join over a scan
of every representation here too.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator
from typing import Any

import pytest
from big_catalog import FIRST, SERIES, BigCatalog, expected_names, fill

from pdi.archive import Archive
from pdi.archive.catalog.listing import ListingPart
from pdi.archive.postgres import store as postgres_store
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


def _rows_read_of_representations(store: Any, sql: str, params: list[Any]) -> int:
    """How many rows of ``representations`` running ``sql`` read (returned or filtered out), by ``EXPLAIN ANALYZE``."""
    ((plan,),) = store.query(f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {sql}", params)
    return sum((int(node["Actual Rows"]) + int(node.get("Rows Removed by Filter", 0))
                + int(node.get("Rows Removed by Index Recheck", 0))) * int(node["Actual Loops"])
               for node in _nodes(plan[0]["Plan"]) if node.get("Relation Name") == "representations")


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
            if "FROM documents d" in sql and "representations" in sql:  # a page's rows (not the look-up of a day)
                sent.append((sql, list(params)))
            return real_query(sql, params)  # type: ignore[no-any-return]

        def serial_text(names: tuple[str, list[Any]], last: tuple[str, list[Any]], page: int,
                        ranged: Any, made: Any) -> Any:
            assert ranged is not None  # PostgreSQL reads a page's bounds first, and then maybe the page by them
            bounds, within = ranged

            def recorded(least: int, greatest: int) -> tuple[str, list[Any]]:
                sent.append(within(least, greatest))
                return sent[-1]

            sent.extend([names, last])
            return real_text(names, last, page, (bounds, recorded), made)

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
            # by an index (one range of the primary key, for the day's documents), never a scan of the whole table
            assert reads and all(t in ("Index Scan", "Index Only Scan", "Bitmap Heap Scan")
                                 for t, _ in reads if t != "join"), (sql, reads)
            # and only the day's: no more rows of it read than the day has representations (of 100,000 and more)
            assert _rows_read_of_representations(store, sql, params) <= PER_DAY + 2, sql
        # the control: the plain join (SQLite's statement) is planned, on this catalog, as a scan of every one
        store._run_join = lambda ranged: (f"documents d {ListingPart.run_representations}", "", [])  # SQLite's join
        joined, params = store._run_statement(LISTED.isoformat(), True, None, [("d.series", SERIES)], "d.serial")
        del store._run_join
        assert "JOIN representations r ON r.document = d.id" in joined
        scans = {t for t, _ in _reads_of_representations(store, joined, params)}
        assert scans & {"Seq Scan", "Parallel Seq Scan"}, scans


@pytest.mark.parametrize("limit", [101, 1001])  # a day's page of the reader's pages (DAY_PAGE + 1, MAX_PAGE + 1)
def test_a_page_of_a_days_documents_reads_their_representations_by_index_in_an_analysed_catalog(
    analysed: tuple[str, BigCatalog], limit: int,
) -> None:
    """The reader's day page (``day_documents``, and ``unique_id_documents`` by the same statement): each
    document's representations looked up by ``representations_pkey``, not a scan of every representation."""
    url, big = analysed
    prefix = f"urn:pdi://{SERIES}/{LISTED:%Y/%m/%d}/"
    with Archive.open(url) as archive:
        store: Any = archive.store
        sent: list[tuple[str, list[Any]]] = []
        real_query = store._query

        def query_(sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
            if "representations" in sql:
                sent.append((sql, list(params)))
            return real_query(sql, params)  # type: ignore[no-any-return]

        store._query = query_
        records = store.day_documents(SERIES, LISTED, None, limit)
        store._query = real_query
        wanted = [n for n in expected_names(big) if n.startswith(prefix)][:limit]
        assert [f"{prefix}{r.unique_id}.{r.format}.{r.version}" for r in records] == wanted
        (sql, params), = sent
        reads = _reads_of_representations(store, sql, params)
        assert reads and all(t in ("Index Scan", "Index Only Scan") and i == "representations_pkey"
                             for t, i in reads), (sql, reads)
        if limit > 1000:  # the control: the plain join of a full page is planned as a scan of every representation
            joined = sql.replace(type(store).run_representations, ListingPart.run_representations)
            assert joined != sql
            assert {t for t, _ in _reads_of_representations(store, joined, params)} & {"Seq Scan", "Parallel Seq Scan"}


def test_the_representations_of_messages_holders_are_read_by_index_in_an_analysed_catalog(
    analysed: tuple[str, BigCatalog],
) -> None:
    """The documents holding messages that name one (``message_referrers``, at most ``MAX_SCANNED + 1``): their
    representations read by ``representations_pkey``. The catalog holds no message: the holders' look-up is
    answered with 501 of the listed day's documents, so that the second statement is the one of a full page."""
    url, _ = analysed
    with Archive.open(url) as archive:
        store: Any = archive.store
        documents = [int(r[0]) for r in store.query(
            "SELECT id FROM documents WHERE day = ? ORDER BY serial LIMIT 501", [LISTED.isoformat()])]
        assert len(documents) == 501
        sent: list[tuple[str, list[Any]]] = []
        real_query = store._query

        def query_(sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
            if "message_references" in sql:  # the holders: 501 documents, each naming <m@x>
                return [("<m@x>", doc) for doc in documents]
            sent.append((sql, list(params)))
            return real_query(sql, params)  # type: ignore[no-any-return]

        store._query = query_
        found = store.message_referrers(["<m@x>"], 501)
        store._query = real_query
        assert len(found) == 501 and all(len(records) == 1 for _, records in found)
        (sql, params), = sent
        reads = _reads_of_representations(store, sql, params)
        assert reads and all(t in ("Index Scan", "Index Only Scan") and i == "representations_pkey"
                             for t, i in reads), (sql, reads)


def test_a_pages_bounds_find_whether_the_day_has_foreign_ids_by_a_few_entries_of_an_index(
    analysed: tuple[str, BigCatalog], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The page's bounds ask whether the day holds a document with a foreign id (so that its foreign ids' run is
    not read when it holds none): in the analysed catalog too, a probe of ``documents_by_day`` that reads a
    handful of the day's documents, not its 10,000 serial ones."""
    url, _ = analysed
    asked: list[tuple[str, list[Any]]] = []
    real_batch = postgres_store._batch

    def batch_(conn: Any, statements: Any) -> Any:
        sql, params = statements[-1]
        probe = re.search(r"COALESCE\(\((SELECT TRUE FROM documents d WHERE .*? LIMIT 1)\), FALSE\)", sql)
        if probe is not None:
            asked.append((probe.group(1).replace("%s", "?"), list(params)[:probe.group(1).count("%s")]))
        return real_batch(conn, statements)

    monkeypatch.setattr(postgres_store, "_batch", batch_)
    with Archive.open(url) as archive:
        listed = "".join(archive.iter_name_text(f"urn:pdi://{SERIES}/{LISTED:%Y/%m/%d}/*"))
        assert listed.count("\n") == PER_DAY + 2  # the day's foreign ids listed: the probe found them
        assert asked
        for sql, params in asked:
            ((plan,),) = archive.store.query(f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {sql}", params)
            read = sum(int(node.get("Actual Rows", 0)) + int(node.get("Rows Removed by Filter", 0))
                       for node in _nodes(plan[0]["Plan"]) if node.get("Relation Name") == "documents")
            assert read <= 10, (sql, params, read)
