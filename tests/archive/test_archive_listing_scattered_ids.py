"""A listing's order does not follow the order documents were stored in.

A catalog's documents are numbered as they are stored, and a listing reads a
day's representations by the range of its documents' numbers (PostgreSQL) and
joins its names into one string (both stores): neither may lend the listing the
order of storage. Here the documents of two series on two days (serial and
foreign ids, several versions and formats) are imported in an order shuffled
from a seed, so that numbers and serials disagree and the series interleave on
a day; PostgreSQL's tables are then analysed (its planner then hashes the day's
documents). Every listing, whole, of a series, of a day, of a format, in
pages cut small, is compared with the order worked out here from the records:
days, then each day's serial names by serial, series, version and format, then
its foreign ids by id, series, version and format (the order the grammar's
listing gives, as :mod:`test_archive_list_names` checks on deposits).
"""

from __future__ import annotations

import datetime
import hashlib
import random
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from pdi.archive import Archive
from pdi.archive.store import ListQuery, RepresentationRecord, SeriesRecord
from pdi.identifier import PDI
from support.pgcluster import TemporaryBouncer, TemporaryCluster

SERIES = ("a.example.us", "b.example.us")
DAYS = (datetime.date(2026, 11, 21), datetime.date(2026, 11, 22))
FORMATS = ("gif", "png", "text")
CONTENT = b"x"
SHA = hashlib.sha256(CONTENT).hexdigest()


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def _documents(seed: int) -> list[list[RepresentationRecord]]:
    """Each document's records (every version, each in one to three formats), in an order shuffled by ``seed``."""
    rng = random.Random(seed)
    documents = []
    for series in SERIES:
        for day in DAYS:
            made = f"{day.isoformat()}T12:00:00.000000Z"
            ids: list[tuple[str, int | None]] = [(str(n), n) for n in range(1, 26)]
            ids += [(f"f{n}", None) for n in rng.sample(range(100), 4)]
            for unique_id, serial in ids:
                documents.append([
                    RepresentationRecord(series, day, unique_id, serial, version, token, "image/png", None, None,
                                         SHA, len(CONTENT), made)
                    for version in range(1, rng.randint(1, 3) + 1)
                    for token in sorted(rng.sample(FORMATS, rng.randint(1, 3)))
                ])
    rng.shuffle(documents)
    return documents


def _expected(records: list[RepresentationRecord]) -> list[tuple[RepresentationRecord, str]]:
    def key(r: RepresentationRecord) -> tuple[object, ...]:
        if r.serial is not None:
            return (r.day, 0, r.serial, r.unique_id, r.series, r.version, r.format)
        return (r.day, 1, 0, r.unique_id, r.series, r.version, r.format)

    def name(r: RepresentationRecord) -> str:
        if r.serial is not None:
            return f"urn:pdi://{r.series}/{r.day:%Y/%m/%d}/{r.serial}.{r.format}.{r.version}"
        return f"urn:pdi://{r.series}/{r.day:%Y/%m/%d}/{r.unique_id}.{r.format}.{r.version}"

    return [(r, name(r)) for r in sorted(records, key=key)]


def _store_text(archive: Archive, query: ListQuery, page: int) -> str:
    text = []
    for made in archive.store.iter_name_text(query, page=page):
        if isinstance(made, str):
            text.append(made)
        else:
            day, _, rows = made
            text += [f"{PDI.build(series=s, date=datetime.date.fromisoformat(day), foreign_id=u, format=t, version=v)}\n"
                     for u, s, v, t in rows]
    return "".join(text)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_listings_follow_the_names_not_the_order_stored(location: str, seed: int) -> None:
    documents = _documents(seed)
    records = [r for document in documents for r in document]
    with Archive.init(location) as archive:
        archive.store.import_all([SeriesRecord(s, None, "", "2026-11-20T12:00:00Z") for s in SERIES],
                                 [(r, CONTENT) for r in records], [])
        if location.startswith("postgresql:"):
            archive.store.query("ANALYZE documents")
            archive.store.query("ANALYZE representations")
        ordered = _expected(records)
        # the shuffle did what it is for: numbers disagree with serials, and series interleave on a day
        ((disagree,),) = archive.store.query(
            "SELECT COUNT(*) FROM documents a JOIN documents b ON a.series = b.series AND a.day = b.day"
            " WHERE a.serial < b.serial AND a.id > b.id")
        assert disagree > 0

        def lines(selected: list[tuple[RepresentationRecord, str]]) -> str:
            return "".join(f"{n}\n" for _, n in selected)

        cases: list[tuple[str | None, dict[str, object], list[tuple[RepresentationRecord, str]]]] = [
            (None, {}, ordered),
            (None, {"series": SERIES[1]}, [(r, n) for r, n in ordered if r.series == SERIES[1]]),
        ]
        for series in SERIES:
            for day in DAYS:
                cases.append((f"urn:pdi://{series}/{day:%Y/%m/%d}/*", {},
                              [(r, n) for r, n in ordered if r.series == series and r.day == day]))
        for pattern, filters, wanted in cases:
            assert wanted, pattern
            assert "".join(archive.iter_name_text(pattern, **filters)) == lines(wanted), pattern  # type: ignore[arg-type]
            assert list(archive.iter_names(pattern, **filters)) == [n for _, n in wanted], pattern  # type: ignore[arg-type]
            assert [str(p) for p in archive.ls(pattern, **filters)] == [n for _, n in wanted], pattern  # type: ignore[arg-type]
        for query, wanted in (
            (ListQuery(), ordered),
            (ListQuery(series=SERIES[0], year=2026, month=11, day=22),
             [(r, n) for r, n in ordered if r.series == SERIES[0] and r.day == DAYS[1]]),
            (ListQuery(series=SERIES[1], format="png"), [(r, n) for r, n in ordered if r.series == SERIES[1] and r.format == "png"]),
        ):
            for page in (1, 4, 7):  # each run paged by its key, a page ending in the middle of a document's names
                assert _store_text(archive, query, page) == lines(wanted), (query, page)


def _import(location: str, records: list[RepresentationRecord]) -> Archive:
    archive = Archive.init(location)
    archive.store.import_all([SeriesRecord(s, None, "", "2026-11-20T12:00:00Z") for s in SERIES],
                             [(r, CONTENT) for r in records], [])
    if location.startswith("postgresql:"):
        archive.store.query("ANALYZE documents")
        archive.store.query("ANALYZE representations")
    return archive


def _record(series: str, unique_id: str, serial: int | None) -> RepresentationRecord:
    return RepresentationRecord(series, DAYS[0], unique_id, serial, 1, "png", "image/png", None, None, SHA,
                                len(CONTENT), f"{DAYS[0].isoformat()}T12:00:00.000000Z")


def test_a_run_whose_documents_lie_far_apart_or_outnumber_a_page_is_listed_whole(location: str) -> None:
    """Two names of one series with 1,200 of another stored between them, and a day of 1,200 listed in pages of
    500: on PostgreSQL a page is read by the range of its documents' ids only where they are close and no more
    than a page (b's last page), and every name is listed, in order."""
    a, b = SERIES
    records = [_record(a, "1", 1), *(_record(b, str(n), n) for n in range(1, 1201)), _record(a, "2", 2)]
    prefix = f"{DAYS[0]:%Y/%m/%d}"
    with _import(location, records) as archive:
        store = archive.store
        ranged_reads: list[int] = []
        if location.startswith("postgresql:"):
            real = store._serial_text  # type: ignore[attr-defined]

            def serial_text(names: Any, last: Any, page: int, ranged: Any, made: Any) -> Any:
                bounds, within = ranged
                ranged_reads.append(0)

                def recorded(least: int, greatest: int) -> tuple[str, list[Any]]:
                    sql, params = within(least, greatest)
                    ((plan,),) = store.query(f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {sql}", params)
                    ranged_reads[-1] = sum(int(n["Actual Rows"]) * int(n["Actual Loops"]) for n in _nodes(plan[0]["Plan"])
                                           if n.get("Relation Name") == "representations")
                    return sql, params

                return real(names, last, page, (bounds, recorded), made)

            store._serial_text = serial_text  # type: ignore[attr-defined]
        assert "".join(archive.iter_name_text(f"urn:pdi://{a}/{prefix}/*")) == \
            f"urn:pdi://{a}/{prefix}/1.png.1\nurn:pdi://{a}/{prefix}/2.png.1\n"
        wanted = "".join(f"urn:pdi://{b}/{prefix}/{n}.png.1\n" for n in range(1, 1201))
        assert _store_text(archive, ListQuery(series=b, year=2026, month=11, day=21), 500) == wanted
        if location.startswith("postgresql:"):
            # a's two names (far apart), b's first two pages of 500 (more than a page left): not read by the
            # range; b's last page (200 left, close together) by the range: the representations of its 200
            # documents and of the one its key names (the range starts there)
            assert ranged_reads == [0, 0, 0, 201], ranged_reads


def test_a_serial_held_by_two_documents_of_a_day_is_paged_past_whole(location: str) -> None:
    """A catalog imported with two documents of one serial on one day (unique ids ``7`` and ``07``): a page that
    ends on that serial finds its key by walking the page again, and no name is listed twice or left out."""
    a = SERIES[0]
    records = [_record(a, str(n), n) for n in range(1, 7)] + [_record(a, "07", 7), _record(a, "7", 7)]
    records += [_record(a, str(n), n) for n in range(8, 11)]
    with _import(location, records) as archive:
        query = ListQuery(series=a, year=2026, month=11, day=21)
        whole = _store_text(archive, query, 1000)
        assert whole.count("/7.png.1\n") == 2 and len(whole.splitlines()) == 11
        for page in range(1, 12):
            assert _store_text(archive, query, page) == whole, page


def test_a_listing_through_pgbouncer_in_transaction_pooling_is_the_same(pg_cluster: TemporaryCluster) -> None:
    """A page's bounds, its settings and its names by the range (one transaction of several round trips, the names
    bound on the server) through pgbouncer in transaction pooling, two server connections for several clients:
    the same listing as the records give, whole and in pages, while other clients list beside it."""
    database = "pdi_test_listing_bouncer"
    pg_cluster.create_database(database)
    bouncer = TemporaryBouncer(pg_cluster, database, pool_size=2).start()
    try:
        records = [r for document in _documents(4) for r in document]
        with _import(bouncer.url(), records) as archive:
            wanted = "".join(f"{n}\n" for _, n in _expected(records))
            results: list[str] = []

            def listing() -> None:
                for _ in range(3):
                    results.append("".join(archive.iter_name_text()))

            threads = [threading.Thread(target=listing) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=120)
            assert len(results) == 12 and all(r == wanted for r in results)
            for page in (3, 50):
                assert _store_text(archive, ListQuery(), page) == wanted, page
            ((setting,),) = archive.store.query("SHOW enable_nestloop")
            assert setting == "on"  # nothing a listing set is left on a connection another client is given
    finally:
        bouncer.stop()


def test_a_key_of_a_day_the_query_does_not_select_lists_only_the_days_it_selects(location: str) -> None:
    """``after=`` a name of another day than those the pattern or filters select: the listing holds the selected
    days' names after it, never the rest of the key's own day (a keyset cursor names a position, not a day)."""
    records = [r for document in _documents(1) for r in document]
    with _import(location, records) as archive:
        ordered = _expected(records)
        first, second = DAYS
        a = SERIES[0]
        on = {day: [n for r, n in ordered if r.series == a and r.day == day] for day in DAYS}
        assert on[first] and on[second]
        middle = on[first][len(on[first]) // 2]  # a name of the first day, half of its day after it
        cases: list[tuple[str | None, dict[str, Any], list[str]]] = [
            (f"urn:pdi://{a}/{second:%Y/%m/%d}/*", {"after": middle}, on[second]),  # a key before the day: all of it
            (f"urn:pdi://{a}/{first:%Y/%m/%d}/*", {"after": on[second][0]}, []),  # a key after the day: nothing
            (f"urn:pdi://{a}/{first:%Y/%m/%d}/*", {"after": middle}, on[first][len(on[first]) // 2 + 1:]),  # its own
            # a month (the key's day of October, a name no document holds) and a month after the key's
            (None, {"series": a, "year": 2026, "month": 11, "after": f"urn:pdi://{a}/2026/10/05/3.png.1"},
             on[first] + on[second]),
            (None, {"series": a, "year": 2026, "month": 12, "after": middle}, []),
            # a year and a day of the month alone (no one range of days): the key's day does not match the day
            (None, {"series": a, "year": 2026, "day": second.day, "after": middle}, on[second]),
        ]
        for pattern, filters, wanted in cases:
            assert list(archive.iter_names(pattern, **filters)) == wanted, (pattern, filters)
            assert "".join(archive.iter_name_text(pattern, **filters)) == "".join(f"{n}\n" for n in wanted), \
                (pattern, filters)
            assert [str(p) for p in archive.ls(pattern, **filters)] == wanted, (pattern, filters)
