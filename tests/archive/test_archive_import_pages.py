"""An import writes a page of records at a time, and is still all or nothing, naming the bad record.

The store checks and writes a bag's records :data:`pdi.archive.catalog.base.IMPORT_PAGE`
at a time (a few statements a page, not a few a record: a PostgreSQL import of
50,000 names took minutes). Here a bag of two and a half pages (made by SQL,
:mod:`big_catalog`, and exported) is edited so that one record in the middle
of its second page is bad; the import must refuse it naming that record, on
either store, and leave the target's catalog as it was (names, blobs, counters,
audit log). The rules of numbering are asked across pages and of what the
target holds already: serials run on from the target's, the next mint follows
the last imported serial, and a gap is refused.
"""

from __future__ import annotations

import copy
import datetime
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from archive_helpers import Clock, reseal, snapshot
from big_catalog import FIRST, SERIES, fill

from pdi.archive import Archive
from pdi.archive.catalog.base import IMPORT_PAGE
from pdi.archive.catalog.imports import NUMBERING_DAYS
from pdi.errors import ImmutabilityError, NotFoundError, ParseError, StoreError
from support.pgcluster import TemporaryCluster

#: Serial names in the bag: two pages and a half, after the three real deposits.
NAMES = IMPORT_PAGE * 5 // 2
DAY = FIRST + datetime.timedelta(days=1)
#: The bulk names were deposited at noon of DAY; the target's clock is an hour later.
LATER = Clock(datetime.datetime(DAY.year, DAY.month, DAY.day, 13, tzinfo=datetime.UTC))
#: A serial in the middle of the second page (the bag starts with the three real deposits of FIRST).
MIDDLE = IMPORT_PAGE + IMPORT_PAGE // 2


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """An export of NAMES serial names on DAY (and three real deposits), and its catalog.json."""
    root = tmp_path_factory.mktemp("source")
    fill(str(root / "archive"), days=1, per_day=NAMES, foreign_per_day=0)
    with Archive.open(root / "archive") as source:
        assert source.export_bag(root / "bag") == NAMES + 3
    return root / "bag", json.loads((root / "bag" / "data" / "catalog.json").read_text(encoding="utf-8"))


def _bag(tmp_path: Path, exported: tuple[Path, dict[str, Any]], name: str,
         catalog: dict[str, Any] | None = None) -> Path:
    """A copy of the exported bag at ``tmp_path/name``, holding ``catalog`` (default: the export's) and resealed."""
    bag = tmp_path / name
    shutil.copytree(exported[0], bag)
    if catalog is not None:
        (bag / "data" / "catalog.json").write_text(json.dumps(catalog, indent=0), encoding="utf-8")
        reseal(bag)
    return bag


def _catalog(exported: tuple[Path, dict[str, Any]]) -> dict[str, Any]:
    return copy.deepcopy(exported[1])


def _serial(catalog: dict[str, Any], serial: int) -> dict[str, Any]:
    return next(r for r in catalog["representations"] if r["day"] == DAY.isoformat() and r["serial"] == serial)


def _binary_near(catalog: dict[str, Any], serial: int) -> dict[str, Any]:
    """The first representation from ``serial`` on whose object is not text (no charset to decode)."""
    return next(rep for s in range(serial, NAMES) if (rep := _serial(catalog, s))["charset"] is None)


def _other_object(catalog: dict[str, Any], rep: dict[str, Any]) -> dict[str, Any]:
    """Another object of the bag that is not text: its SHA-256 and size."""
    return next(r for r in catalog["representations"] if r["charset"] is None and r["sha256"] != rep["sha256"])


def _state(archive: Archive) -> object:
    """Everything a refused import must leave as it was, the counters and the audit log too."""
    rows = archive.store._query  # type: ignore[attr-defined]
    return (
        snapshot(archive),
        rows("SELECT series, day, last FROM daily_serials ORDER BY series, day"),
        rows("SELECT series, day, documents, last_deposit FROM document_days ORDER BY series, day"),
        rows("SELECT COUNT(*) FROM documents"),
        rows("SELECT COUNT(*) FROM versions"),
        archive.audit(),
    )


@pytest.fixture
def target(location: str) -> Iterator[Archive]:
    """The archive imported into: a name of its own already there, for the import to keep."""
    with Archive.init(location, clock=LATER) as archive:
        archive.add_series("elsewhere.example.us")
        archive.add("elsewhere.example.us", b"already here\n", format="text")
        yield archive


def _refused(target: Archive, bag: Path, error: type[Exception], message: str) -> None:
    before = _state(target)
    with pytest.raises(error) as refused:
        target.import_bag(bag)
    assert str(refused.value) == message
    assert _state(target) == before


def _described(rep: dict[str, Any]) -> str:
    return f"urn:pdi://{SERIES}/{DAY:%Y/%m/%d}/{rep['unique_id']}"  # its generic name


@pytest.mark.parametrize("where", ["beside it", "on a later page"])
def test_a_name_twice_with_other_bytes_refuses_the_whole_import_naming_it(
    target: Archive, exported: tuple[Path, dict[str, Any]], tmp_path: Path, where: str
) -> None:
    """The second record of a name, with other bytes, in the same page as the first or a later one."""
    catalog = _catalog(exported)
    rep = _binary_near(catalog, MIDDLE)
    other = _other_object(catalog, rep)
    twin = dict(rep, sha256=other["sha256"], size=other["size"])
    reps = catalog["representations"]
    reps.insert(reps.index(rep) + 1 if where == "beside it" else len(reps), twin)
    _refused(target, _bag(tmp_path, exported, "bag", catalog), ImmutabilityError,
             f"format {rep['format']} of version 1 of {_described(rep)}"
             " is already in this archive with other bytes; nothing was imported")


def test_a_name_the_target_holds_with_other_bytes_refuses_the_whole_import_naming_it(
    target: Archive, exported: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    # The target holds the bag's names already, one of them (in the middle of the
    # second page) with other bytes: importing the bag as exported must change nothing.
    altered = _catalog(exported)
    rep = _binary_near(altered, MIDDLE)
    other = _other_object(altered, rep)
    rep.update(sha256=other["sha256"], size=other["size"])
    assert target.import_bag(_bag(tmp_path, exported, "altered", altered)) == NAMES + 3
    _refused(target, _bag(tmp_path, exported, "bag"), ImmutabilityError,
             f"format {rep['format']} of version 1 of {_described(rep)}"
             " is already in this archive with other bytes; nothing was imported")


def test_a_missing_serial_in_the_middle_of_a_page_refuses_the_whole_import(
    target: Archive, exported: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    catalog = _catalog(exported)
    catalog["representations"].remove(_serial(catalog, MIDDLE))
    _refused(target, _bag(tmp_path, exported, "bag", catalog), ParseError,
             f"the import would leave gaps in the serials of {SERIES} on {DAY.isoformat()}:"
             f" {NAMES - 1} serials numbered 1 to {NAMES} (serials run 1..n without gaps) (rule catalog)")


def test_a_version_gap_in_the_middle_of_a_page_refuses_the_whole_import(
    target: Archive, exported: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    catalog = _catalog(exported)
    rep = _serial(catalog, MIDDLE)
    third = dict(rep, version=3, pdi=rep["pdi"][: -len(".1")] + ".3")
    catalog["representations"].insert(catalog["representations"].index(rep) + 1, third)
    _refused(target, _bag(tmp_path, exported, "bag", catalog), ParseError,
             f"the import would leave gaps in the versions of {_described(rep)}:"
             " 2 versions numbered 1 to 3 (rule catalog)")


def _statements(catalog: dict[str, Any]) -> list[dict[str, Any]]:
    """A statement about each serial name of the bag's DAY, an hour after its deposit."""
    return [
        {"series": SERIES, "day": DAY.isoformat(), "unique_id": r["unique_id"],
         "subject": r["pdi"].rsplit("/", 1)[0] + "/" + r["unique_id"], "key": "title",
         "value": f"Document {r['unique_id']}", "who": "importer", "at": f"{DAY.isoformat()}T13:00:00.000000Z"}
        for r in catalog["representations"] if r["day"] == DAY.isoformat()
    ]


def test_statements_come_a_page_at_a_time_and_one_about_no_document_refuses_them_all(
    target: Archive, exported: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    catalog = _catalog(exported)
    catalog["assertions"] = _statements(catalog)
    stray = catalog["assertions"][MIDDLE]
    stray["unique_id"] = str(NAMES + 1)
    stray["subject"] = stray["subject"].rsplit("/", 1)[0] + f"/{NAMES + 1}"
    _refused(target, _bag(tmp_path, exported, "bad", catalog), NotFoundError,
             f"assertion about {stray['subject']}: no such document")
    # Without it, every statement comes in, once however often the bag is imported.
    catalog["assertions"] = _statements(catalog)
    bag = _bag(tmp_path, exported, "good", catalog)
    assert target.import_bag(bag) == NAMES + 3
    statements = target.store.assertions()
    assert len(statements) == NAMES
    name = f"urn:pdi://{SERIES}/{DAY.year:04d}/{DAY.month:02d}/{DAY.day:02d}/{MIDDLE}"
    assert [(a.subject, a.value) for a in target.store.assertions(name)] == [(name, f"Document {MIDDLE}")]
    assert target.import_bag(bag) == 0
    assert target.store.assertions() == statements


def test_serials_run_on_from_those_the_target_holds_across_pages(
    target: Archive, exported: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """Two bags cut from one: the later serials alone leave a gap; after the earlier ones they run on."""
    catalog = _catalog(exported)
    reps = catalog["representations"]
    first = [r for r in reps if r["day"] != DAY.isoformat() or r["serial"] <= MIDDLE]
    rest = [r for r in reps if r["day"] == DAY.isoformat() and r["serial"] > MIDDLE]
    later = _bag(tmp_path, exported, "later", dict(catalog, representations=rest))
    _refused(target, later, ParseError,
             f"the import would leave gaps in the serials of {SERIES} on {DAY.isoformat()}:"
             f" {NAMES - MIDDLE} serials numbered {MIDDLE + 1} to {NAMES} (serials run 1..n without gaps)"
             " (rule catalog)")
    assert target.import_bag(_bag(tmp_path, exported, "earlier", dict(catalog, representations=first))) == MIDDLE + 3
    assert target.import_bag(later) == NAMES - MIDDLE
    # The day's counters are what NAMES deposits would have left: the next mint is serial NAMES + 1.
    assert target.store._query(  # type: ignore[attr-defined]
        "SELECT documents, last_deposit FROM document_days WHERE series = ? AND day = ?", (SERIES, DAY.isoformat())
    ) == [(NAMES, f"{DAY.isoformat()}T12:00:00.000000Z")]
    assert target.add(SERIES, b"the next one\n", format="text").serial == NAMES + 1
    assert len(target.ls(series=SERIES, year=DAY.year, month=DAY.month, day=DAY.day)) == NAMES + 1


def test_a_remover_taking_the_imports_uploads_fails_a_postgresql_import_and_changes_nothing(
    pg_cluster: TemporaryCluster, exported: tuple[Path, dict[str, Any]], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The page's blobs are named in one statement, each upload locked first: one a remover took fails it all."""
    location = pg_cluster.create_schema("pdi_import_pages_remover")
    bag = _bag(tmp_path, exported, "bag")
    with Archive.init(location, clock=LATER) as target:
        target.add_series("elsewhere.example.us")
        target.add("elsewhere.example.us", b"already here\n", format="text")
        before = _state(target)
        store = target.store
        real = store._import_staged  # type: ignore[attr-defined]

        def remover_first(*args: object, **kwargs: object) -> int:
            # between the uploads and the catalog transaction, a remover with no grace period
            with Archive.open(location) as remover:
                assert len(remover.remove_unreferenced(older_than=0)) == 3
            return int(real(*args, **kwargs))

        monkeypatch.setattr(store, "_import_staged", remover_first)
        with pytest.raises(StoreError, match=r"the upload of blob [0-9a-f]{64} was removed before its deposit"):
            target.import_bag(bag)
        assert _state(target) == before
        monkeypatch.undo()
        assert target.import_bag(bag) == NAMES + 3
        assert target.verify().ok


def test_the_numbering_of_more_days_than_one_statement_asks_is_checked_on_every_day(
    location: str, tmp_path: Path
) -> None:
    """A bag over NUMBERING_DAYS + 100 days imports whole; one missing serial on a day of the second batch is found."""
    days = NUMBERING_DAYS + 100
    fill(str(tmp_path / "source"), days=days, per_day=2, foreign_per_day=0)
    with Archive.open(tmp_path / "source") as source:
        assert source.export_bag(tmp_path / "bag") == 2 * days + 3
    catalog = json.loads((tmp_path / "bag" / "data" / "catalog.json").read_text(encoding="utf-8"))
    late = (FIRST + datetime.timedelta(days=days - 50)).isoformat()
    catalog["representations"] = [r for r in catalog["representations"] if not (r["day"] == late and r["serial"] == 1)]
    shutil.copytree(tmp_path / "bag", tmp_path / "gap")
    (tmp_path / "gap" / "data" / "catalog.json").write_text(json.dumps(catalog, indent=0), encoding="utf-8")
    reseal(tmp_path / "gap")
    end = FIRST + datetime.timedelta(days=days + 1)
    with Archive.init(location, clock=Clock(datetime.datetime(end.year, end.month, end.day, tzinfo=datetime.UTC))) as target:
        _refused(target, tmp_path / "gap", ParseError,
                 f"the import would leave gaps in the serials of {SERIES} on {late}:"
                 " 1 serials numbered 2 to 2 (serials run 1..n without gaps) (rule catalog)")
        assert target.import_bag(tmp_path / "bag") == 2 * days + 3
