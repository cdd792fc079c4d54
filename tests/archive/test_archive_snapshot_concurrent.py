"""A snapshot of the catalog sees one catalog, however long it lasts and whatever is deposited meanwhile.

An export (a bag, a WACZ, a manifest) reads the catalog in many statements, a
page at a time, inside one :meth:`~pdi.archive.catalog.listing.ListingPart.snapshot`
(or :meth:`~pdi.archive.Archive.snapshot`, which reads through
:meth:`~pdi.archive.catalog.base.CatalogBase.reading`). Here a second archive
opened on the same catalog (its own connection: a real writer, in another
transaction) deposits and commits between two of those statements, and the
reads after it must not see its names: on SQLite a deferred ``BEGIN`` in WAL
mode holds the snapshot of its first read; on PostgreSQL a READ COMMITTED
transaction would take a new snapshot for each statement, so the snapshot is a
REPEATABLE READ one. What is expected is what was deposited before the
snapshot began, spelled from the names the deposits returned.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from archive_helpers import GIF, Clock

from pdi.archive import Archive, Content
from pdi.archive.naming import key_of
from pdi.archive.store import ListQuery
from pdi.errors import StoreError
from pdi.identifier import PDI
from support.pgcluster import TemporaryCluster

S = "oma.eop.gov.us"
DAY = datetime.datetime(2026, 11, 22, 9, tzinfo=datetime.UTC)
BEFORE = 6


@pytest.fixture
def two(location: str) -> Iterator[tuple[Archive, Archive, list[PDI]]]:
    """An archive of ``BEFORE`` names deposited, open twice: a reader and a writer on their own connections."""
    with _opened_twice(location) as opened:
        yield opened


@contextmanager
def _opened_twice(location: str) -> Iterator[tuple[Archive, Archive, list[PDI]]]:
    clock = Clock(DAY)
    reader = Archive.init(location, clock=clock)
    try:
        reader.add_series(S)
        names = [reader.add(S, GIF + b"before %d" % i, format="gif") for i in range(BEFORE)]
        writer = Archive.open(location, clock=clock)
        try:
            yield reader, writer, names
        finally:
            writer.close()
    finally:
        reader.close()


def _deposit(writer: Archive, tag: bytes) -> PDI:
    """A name of a new document deposited and committed by ``writer`` (it sorts after every name before it)."""
    return writer.add(S, GIF + b"meanwhile " + tag, format="gif")


def test_pages_of_a_listing_in_a_snapshot_see_the_catalog_of_its_first_read(
    two: tuple[Archive, Archive, list[PDI]],
) -> None:
    reader, writer, names = two
    store: Any = reader.store
    listed: list[str] = []
    added: list[PDI] = []
    with store.snapshot():
        blobs = store.count_blobs_used()
        for record in store.iter_representations(ListQuery(), page=2):
            listed.append(f"urn:pdi://{record.series}/{record.day:%Y/%m/%d}/{record.serial}.{record.format}."
                          f"{record.version}")
            if len(listed) % 2 == 0:  # a page read: a name committed before the next
                added.append(_deposit(writer, b"%d" % len(listed)))
        again = store.count_blobs_used()
        uses = list(store.iter_blob_uses(page=2))
    assert len(added) == BEFORE // 2
    assert listed == [str(n) for n in names]
    assert blobs == again == len(uses) == BEFORE  # counts that agree with the rows listed
    assert {u.sha256 for u in uses} == {hashlib.sha256(GIF + b"before %d" % i).hexdigest() for i in range(BEFORE)}
    # outside the snapshot, the names deposited meanwhile are there
    assert [str(r.serial) for r in store.iter_representations(ListQuery())] == [
        str(n.serial) for n in [*names, *added]]


def test_names_as_text_in_a_snapshot_see_the_catalog_of_its_first_read(
    two: tuple[Archive, Archive, list[PDI]],
) -> None:
    reader, writer, names = two
    store: Any = reader.store
    parts: list[str] = []
    with store.snapshot():
        for part in store.iter_name_text(ListQuery(), page=2):  # pages of two names, as text
            assert isinstance(part, str)
            parts.append(part)
            _deposit(writer, b"%d" % len(parts))
    assert "".join(parts) == "".join(f"{n}\n" for n in names)


@pytest.mark.parametrize("named_day", [False, True])
def test_names_as_text_outside_a_snapshot_list_a_foreign_id_deposited_among_the_days_pages(
    two: tuple[Archive, Archive, list[PDI]], named_day: bool,
) -> None:
    """Outside a snapshot each page is read on its own, and a name deposited meanwhile is listed if it sorts after
    the listing's position: a name with a foreign id on the day sorts after every serial name of it, so one
    deposited while the day's serial names are read a page at a time is listed after them, on both stores (a day
    found without a foreign id when its first page was read is asked again after its last)."""
    reader, writer, names = two
    store: Any = reader.store
    query = ListQuery(series=S, year=DAY.year, month=DAY.month, day=DAY.day) if named_day else ListQuery(series=S)
    parts: list[Any] = []
    late: PDI | None = None
    for part in store.iter_name_text(query, page=2):  # pages of two of the day's BEFORE serial names
        parts.append(part)
        if late is None:  # the first page read: a foreign id committed before the next
            late = writer.add(S, GIF + b"late", format="gif", foreign_id="late")
    assert late is not None and late.serial is None
    serial_text = [p for p in parts if isinstance(p, str)]
    foreign_rows = [row for p in parts if not isinstance(p, str) for row in p[2]]
    assert "".join(serial_text) == "".join(f"{n}\n" for n in names)
    assert foreign_rows == [(late.unique_id, S, late.version, late.format)]


def test_an_archive_snapshot_reads_one_catalog(two: tuple[Archive, Archive, list[PDI]]) -> None:
    """:meth:`Archive.snapshot` (a resolver's answer, a manifest page, a WACZ's batch of names): reads through
    the store's ``reading``."""
    reader, writer, names = two
    generic = str(names[0]).rsplit(".", 2)[0]
    with reader.snapshot():
        first = reader.store.versions(key_of(names[0]))
        writer.add_version(generic, [Content(GIF + b"version 2", "gif")])
        _deposit(writer, b"x")
        second = reader.store.versions(key_of(names[0]))
        page = reader.manifest_page(S)
    assert first == second == [1]
    assert [e["name"] for e in page.entries] == [str(n) for n in names]


def test_a_bag_exported_while_deposits_go_on_names_the_objects_it_holds(
    two: tuple[Archive, Archive, list[PDI]], tmp_path: Path,
) -> None:
    """The bag's catalog.json is written from one walk, its objects from another: a name committed between them
    must be in both or neither."""
    reader, writer, names = two
    store: Any = reader.store
    real = store.count_blobs_used

    def count_after_a_deposit(*args: Any, **kwargs: Any) -> int:
        _deposit(writer, b"between the walks")
        return real(*args, **kwargs)  # type: ignore[no-any-return]

    store.count_blobs_used = count_after_a_deposit
    bag = tmp_path / "bag"
    reader.export_bag(bag)
    catalog = json.loads((bag / "data" / "catalog.json").read_text(encoding="utf-8"))
    named = {r["sha256"] for r in catalog["representations"]}
    held = {p.name for p in (bag / "data" / "objects").iterdir()}
    assert named == held == {hashlib.sha256(GIF + b"before %d" % i).hexdigest() for i in range(BEFORE)}
    assert [r["pdi"] for r in catalog["representations"]] == [str(n) for n in names]



def test_a_snapshot_reads_on_one_pooled_connection(location: str) -> None:
    """Every read inside a snapshot (pages of records, pages of names as text, counts) is on the snapshot's own
    connection: a pool of one is enough, where a read taking a second would wait for it."""
    clock = Clock(DAY)
    with Archive.init(location, clock=clock) as made:
        made.add_series(S)
        names = [made.add(S, GIF + b"pooled %d" % i, format="gif") for i in range(5)]
    with Archive.open(location, clock=clock, connections=1) as reader:
        store: Any = reader.store
        with reader.snapshot(), store.snapshot():  # nested: one transaction
            text = "".join(p for p in store.iter_name_text(ListQuery(), page=2) if isinstance(p, str))
            records = list(store.iter_representations(ListQuery(), page=2))
            blobs = store.count_blobs_used()
    assert text == "".join(f"{n}\n" for n in names)
    assert len(records) == blobs == 5


def test_a_write_inside_a_snapshot_before_its_first_read_is_a_write_transaction(
    two: tuple[Archive, Archive, list[PDI]],
) -> None:
    reader, _, names = two
    store: Any = reader.store
    with store.snapshot():
        added = reader.add(S, GIF + b"written first", format="gif")
        listed = [r.serial for r in store.iter_representations(ListQuery())]
    assert listed == [n.serial for n in [*names, added]]


def test_a_write_inside_a_snapshot_after_its_first_read_is_refused_on_postgresql(pg_cluster: TemporaryCluster) -> None:
    """PostgreSQL's snapshot is READ ONLY: a write after its reads is refused at once, saying why, and nothing of
    it is kept. (SQLite's deferred transaction takes the write lock then, as it always did.)"""
    with _opened_twice(pg_cluster.create_schema("pdi_test_write_in_snapshot")) as (reader, _, names):
        store: Any = reader.store
        with pytest.raises(StoreError, match="a write inside a snapshot of the catalog"), store.snapshot():
            store.count_blobs_used()
            reader.add(S, GIF + b"written after a read", format="gif")
        assert [r.serial for r in store.iter_representations(ListQuery())] == [n.serial for n in names]


def test_a_bag_exported_while_a_name_is_purged_is_whole_or_refused(location: str, tmp_path: Path) -> None:
    """A takedown (a withdrawal with ``purge``) committed by a second archive between the bag's listing and the
    copy of the purged octets. On PostgreSQL the blob's parts are rows of the catalog's database, read inside the
    export's snapshot, which still sees them: the bag is the archive as the export began (its catalog.json names
    the name unpurged, and holds its object). The blob files beside SQLite are outside any snapshot, deleted at
    once: the export fails saying so, and leaves nothing. Octets past 64 KiB (smaller ones are catalog rows
    everywhere); the purge does not wait on the export."""
    big = [GIF + hashlib.sha256(b"%d" % i).digest() * 3000 for i in range(4)]  # 96 KiB each
    clock = Clock(DAY)
    with Archive.init(location, clock=clock) as reader, Archive.open(location, clock=clock) as writer:
        reader.add_series(S)
        names = [reader.add(S, octets, format="gif") for octets in big]
        last = max(range(4), key=lambda i: hashlib.sha256(big[i]).hexdigest())  # its object copied last
        took: list[float] = []

        def purge_after_the_first(done: int, total: int) -> None:
            if done == 1:
                started = time.monotonic()
                writer.withdraw(names[last], "a takedown while the export ran", purge=True)
                took.append(time.monotonic() - started)

        bag = tmp_path / "bag"
        if location.startswith("postgres"):
            reader.export_bag(bag, progress=purge_after_the_first)
            catalog = json.loads((bag / "data" / "catalog.json").read_text(encoding="utf-8"))
            assert [(r["pdi"], r["purged"]) for r in catalog["representations"]] == [(str(n), None) for n in names]
            held = {p.name: p.read_bytes() for p in (bag / "data" / "objects").iterdir()}
            assert held == {hashlib.sha256(octets).hexdigest(): octets for octets in big}
        else:
            sha = hashlib.sha256(big[last]).hexdigest()
            with pytest.raises(StoreError, match=f"^blob {sha} was purged while the export ran .* export again$"):
                reader.export_bag(bag, progress=purge_after_the_first)
            assert [p.name for p in tmp_path.iterdir() if "bag" in p.name] == []
        assert took and took[0] < 10
        assert reader.store.open_blob(hashlib.sha256(big[last]).hexdigest(), name="purged") is None  # gone, rows too
        # the export made after it leaves the purged octets out
        after = tmp_path / "after"
        reader.export_bag(after)
        assert {p.name for p in (after / "data" / "objects").iterdir()} == {
            hashlib.sha256(octets).hexdigest() for i, octets in enumerate(big) if i != last}
