"""The count of changes of its access rules a mirror records of its origin (``mirrors.rules_seen``, schema step 25)
never goes down, whatever runs at once: on PostgreSQL as on SQLite.

Two syncs of one series at once each record the count their page signs; the larger must stay, or a page older than
it (of the smaller count) would be followed afterwards, lifting a rule the origin set since
(tests/server/test_server_mirror_rules_replay.py replays such a page through real ``pdi serve`` processes). Here
the first sync's transaction is held open after it recorded its count while the second records a smaller one: the
order two syncs' transactions can take on PostgreSQL, where writers are not serialized as on SQLite.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import bagit
import pytest
from click.testing import CliRunner

from pdi.archive import Archive
from pdi.cli import cli as main
from pdi.errors import IntegrityError
from pdi.signing import SigningKey, jwk_set_text
from support.pgcluster import TemporaryCluster

SERIES = "court.example.fr"
ORIGIN = "https://origin.example.fr"


def pdi(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_a_smaller_count_recorded_while_a_larger_one_is_being_committed_is_refused(location: str) -> None:
    jwk = jwk_set_text([SigningKey.generate().public])
    with Archive.init(location) as archive:
        record = archive.add_mirror(SERIES, ORIGIN, "origin", jwk)
        archive.follow_origin_rules_count(record, 5)
        recorded = threading.Event()
        outcome: list[BaseException | None] = []

        def first() -> None:  # a sync whose page says 7: recorded, its transaction not yet committed
            with archive.store._write():
                archive.follow_origin_rules_count(record, 7)
                recorded.set()
                time.sleep(1.0)  # the second sync reads and writes meanwhile

        def second() -> None:  # a sync at once whose page says 6 (signed before the origin's seventh change)
            recorded.wait(10)
            try:
                archive.follow_origin_rules_count(record, 6)
                outcome.append(None)
            except IntegrityError as exc:
                outcome.append(exc)

        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert len(outcome) == 1 and isinstance(outcome[0], IntegrityError), outcome
        assert "had changed 6 times" in str(outcome[0]) and "said 7 before" in str(outcome[0])
        with pytest.raises(IntegrityError, match="said 7 before"):  # 7 stays: a page of 6 is refused from now on
            archive.follow_origin_rules_count(record, 6)
        archive.follow_origin_rules_count(record, 7)


def _export(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    """An origin whose series' rules changed (one 5 times, its subseries 2 times more, another never), exported:
    the bag, and the count each series' pages signed."""
    with Archive.init(tmp_path / "origin") as archive:
        for series in (SERIES, f"minutes.{SERIES}", "other.example.fr"):
            archive.add_series(series)
        document = str(archive.add(SERIES, b"the judgment\n", format="text")).rsplit(".", 2)[0]
        for until in ("2031-01-01", None, "2032-01-01"):  # embargoed, lifted, embargoed again: 3 changes
            archive.embargo(document, until)
        archive.set_series_access(SERIES, "private")
        archive.set_series_access(SERIES, "public")  # 2 more: 5
        archive.set_series_access(f"minutes.{SERIES}", "hidden")
        archive.set_series_access(f"minutes.{SERIES}", "public")  # its own 2, and its parent's 5 above it
        archive.add("other.example.fr", b"nothing changed\n", format="text")
        signed = {s: archive.manifest_page(s).rules or 0 for s in (SERIES, f"minutes.{SERIES}", "other.example.fr")}
    assert signed == {SERIES: 5, f"minutes.{SERIES}": 7, "other.example.fr": 0}  # counted as the origin changed them
    code, out = pdi("export", str(tmp_path / "bag"), "--archive", str(tmp_path / "origin"))
    assert code == 0, out
    return tmp_path / "bag", signed


def test_an_archive_moved_by_export_and_import_signs_no_fewer_rule_changes_than_before(
    tmp_path: Path, location: str,
) -> None:
    bag, signed = _export(tmp_path)
    assert pdi("init", location)[0] == 0
    code, out = pdi("import", str(bag), "--archive", location)
    assert code == 0, out
    with Archive.open(location) as archive:
        moved = {s: archive.manifest_page(s).rules or 0 for s in signed}
        # as many as before, and the one change the import itself made of the series whose embargo it brought
        assert moved == {SERIES: 6, f"minutes.{SERIES}": 8, "other.example.fr": 0}, moved
        record = archive.add_mirror(SERIES, ORIGIN, "origin", jwk_set_text([SigningKey.generate().public]))
    code, out = pdi("import", str(bag), "--archive", location)  # the same bag again: no rule changed, no fewer
    assert code == 0, out
    with Archive.open(location) as archive:
        again = {s: archive.manifest_page(s).rules or 0 for s in signed}
        assert again == moved, again
        archive.follow_origin_rules_count(record, again[SERIES])


@pytest.mark.parametrize(("said", "refused"), [
    # the subseries' own 2 with them: one past the bound
    ([999_999_999_999], "1,000,000,000,001 times in all"),
    ([600_000_000_000, 399_999_999_999], "1,000,000,000,001 times in all"), ([-1], "must be a count"),
    (["5"], "rules must be int"), ([True], "rules must be int"),
])
def test_a_bag_saying_more_rule_changes_than_an_import_brings_or_no_count_is_refused_and_nothing_imported(
    tmp_path: Path, said: list[object], refused: str,
) -> None:
    bag, _ = _export(tmp_path)
    catalog = bag / "data" / "catalog.json"
    text = catalog.read_text()
    for series, count in zip((SERIES, "other.example.fr"), said, strict=False):
        before = f'"name": "{series}",'
        head, _, tail = text.partition(before)
        line, _, rest = tail.partition("\n")
        text = head + before + re.sub(r'"rules": [0-9]+', f'"rules": {json.dumps(count)}', line) + "\n" + rest
    catalog.write_text(text)
    _manifest_again(bag)
    assert pdi("init", str(tmp_path / "into"))[0] == 0
    code, out = pdi("import", str(bag), "--archive", str(tmp_path / "into"))
    assert code == (7 if "in all" in refused else 1) and refused in out, out
    with Archive.open(tmp_path / "into") as archive:
        assert archive.series() == []


def _manifest_again(bag: Path) -> None:
    """The bag's SHA-256 manifests written again for its files as they are now (bagit-python's own lines)."""
    bagit.Bag(str(bag)).save(manifests=True)


def test_a_series_given_the_access_it_has_keeps_its_manifest_page_the_same_octets(tmp_path: Path) -> None:
    location = str(tmp_path / "origin")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
        archive.add(SERIES, b"the judgment\n", format="text")
    assert pdi("keys", "init", "--archive", location)[0] == 0

    def page(out: str) -> bytes:
        code, said = pdi("manifest", "--series", SERIES, "--archive", location, "--output", str(tmp_path / out))
        assert code == 0, said
        return (tmp_path / out).read_bytes()

    first = page("first.jws")
    assert pdi("series", "access", SERIES, "public", "--archive", location)[0] == 0  # as it is: no rule changed
    assert page("again.jws") == first  # the same names and rules: the same octets (and a timestamp of them holds)
    assert pdi("series", "access", SERIES, "private", "--archive", location)[0] == 0
    assert pdi("series", "access", SERIES, "public", "--archive", location)[0] == 0
    after = page("after.jws")
    assert after != first
    with Archive.open(location) as archive:
        assert archive.manifest_page(SERIES).rules == 2  # made private, made public: two changes, not three
        said = [(e.action, e.detail) for e in archive.audit() if e.action == "series-access"]
        assert said == [("series-access", "public"), ("series-access", "private"), ("series-access", "public")]


def test_each_writer_of_a_rule_counts_one_change_and_a_withdrawal_or_purge_takes_none_back(location: str) -> None:
    """On SQLite and PostgreSQL alike: the write API's ``POST /api/embargo`` (a curator's token), the command line's
    series access, and a withdrawal and a purge, which change no rule and remove no change counted."""
    from starlette.testclient import TestClient

    from pdi.server import create_app

    with Archive.init(location) as archive:
        archive.add_series(SERIES)
        one = str(archive.add(SERIES, b"the judgment\n", format="text"))
        two = str(archive.add(SERIES, b"the appeal\n", format="text"))
        _, curator = archive.add_token("clerk", role="curate", series=[SERIES])

        def rules() -> int | None:
            return archive.manifest_page(SERIES).rules

        client = TestClient(create_app(location, archive=archive))
        assert rules() == 0
        token = {"Authorization": f"Bearer {curator}"}
        assert client.post(f"/api/embargo?pdi={one}&until=2099-01-01", headers=token).status_code == 200
        assert client.post(f"/api/embargo?pdi={two}&until=2099-01-01", headers=token).status_code == 200
        assert rules() == 2  # each version's embargo: one change each
        assert client.post(f"/api/embargo?pdi={two}&until=2099-01-01", headers=token).status_code == 200
        assert rules() == 2  # the same again: none
        assert pdi("series", "access", SERIES, "hidden", "--archive", location)[0] == 0
        assert rules() == 3
        archive.withdraw(one.rsplit(".", 2)[0], "a mistake")
        archive.withdraw(two, "a court's order", who="registrar", purge=True)
        assert rules() == 3  # a withdrawal and a purge change no rule, and take no change back


def test_a_bag_saying_many_rule_changes_is_imported_as_a_count_not_a_row_a_change(
    tmp_path: Path, location: str,
) -> None:
    """Each series' count is one integer of its row (schema step 27): a bag saying 900 billion changes of a series'
    rules is imported, its pages sign that many (and the subseries' own 2, and the import's one embargo change, on
    top), and the catalog gains no row a change (before step 27 each was a row of ``access_changes``)."""
    bag, _ = _export(tmp_path)
    catalog = bag / "data" / "catalog.json"
    text = catalog.read_text()
    before = f'"name": "{SERIES}",'
    head, _, tail = text.partition(before)
    line, _, rest = tail.partition("\n")
    catalog.write_text(head + before + re.sub(r'"rules": 5\b', '"rules": 900000000000', line) + "\n" + rest)
    _manifest_again(bag)
    assert pdi("init", location)[0] == 0
    code, out = pdi("import", str(bag), "--archive", location)
    assert code == 0, out
    with Archive.open(location) as archive:
        signed = {s: archive.manifest_page(s).rules for s in (SERIES, f"minutes.{SERIES}", "other.example.fr")}
        assert signed == {SERIES: 900_000_000_001, f"minutes.{SERIES}": 900_000_000_003, "other.example.fr": 0}
        with archive.store._write():
            rows = archive.store._query("SELECT COUNT(*) FROM access_changes")[0][0]
        assert rows == 1, rows  # the import's own change of an embargo, dated
        archive.set_series_access(SERIES, "private")  # and one change more counts on from there
        assert archive.manifest_page(SERIES).rules == 900_000_000_002


def test_a_catalog_before_step_27_counts_each_series_changes_on_its_row_once_migrated(
    tmp_path: Path, location: str,
) -> None:
    """A catalog whose changes of rules were rows of ``access_changes`` naming their series (step 25; step 27 not
    run): ``pdi init`` counts each series' rows onto its row, and its pages sign what they signed before."""
    with Archive.init(location) as archive:
        for series in (SERIES, f"minutes.{SERIES}", "other.example.fr"):
            archive.add_series(series)
        document = str(archive.add(SERIES, b"the judgment\n", format="text")).rsplit(".", 2)[0]
        for until in ("2031-01-01", None, "2032-01-01"):
            archive.embargo(document, until)
        archive.set_series_access(f"minutes.{SERIES}", "private")
        with archive.store._write():
            for statement in ("ALTER TABLE series DROP COLUMN rules_changes",
                              "CREATE INDEX access_changes_by_series ON access_changes (series)",
                              "DELETE FROM schema_migrations WHERE version = 27"):
                archive.store._query(statement)
    code, out = pdi("init", location)
    assert code == 0 and "schema version 27" in out, out
    with Archive.open(location) as archive:
        signed = {s: archive.manifest_page(s).rules for s in (SERIES, f"minutes.{SERIES}", "other.example.fr")}
        assert signed == {SERIES: 3, f"minutes.{SERIES}": 4, "other.example.fr": 0}
        with archive.store._write():
            counted = {str(r[0]): int(r[1]) for r in archive.store._query("SELECT name, rules_changes FROM series")}
        assert counted == {SERIES: 3, f"minutes.{SERIES}": 1, "other.example.fr": 0}


def _until_one_waits(location: str, done: threading.Event) -> None:
    """Until a connection to ``location``'s database waits for a lock another holds (or ``done`` is set)."""
    with Archive.open(location) as watcher:
        for _ in range(600):
            if done.is_set() or watcher.store.query("SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type ="
                                                    " 'Lock' AND datname = current_database()")[0][0]:
                return
            time.sleep(0.05)


@contextlib.contextmanager
def _another_writer_waiting(archive: Archive, location: str, work: Callable[[Archive], object], statement: str,
                            monkeypatch: pytest.MonkeyPatch, *, after: bool) -> Iterator[None]:
    """Within: another process's writes (``work`` of the archive at ``location``, opened anew) begun when
    ``archive``'s store first runs a statement beginning with ``statement`` (``after`` it ran, or before), which
    goes on only once those writes are done or wait on a lock (:func:`_until_one_waits`); then they must have been
    made."""
    reached, waiting = threading.Event(), threading.Event()
    failed: list[BaseException] = []

    def writes() -> None:
        try:
            assert reached.wait(60), f"{statement!r} was never run"
            with Archive.open(location) as other:
                work(other)
        except BaseException as exc:
            failed.append(exc)
        finally:
            waiting.set()

    writer = threading.Thread(target=writes)
    writer.start()
    real = archive.store._query

    def held(sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        rows = real(sql, params) if after else []
        if sql.startswith(statement) and not reached.is_set():
            reached.set()
            _until_one_waits(location, waiting)
        return rows if after else real(sql, params)

    monkeypatch.setattr(archive.store, "_query", held)
    try:
        yield
    finally:
        monkeypatch.undo()
        writer.join(60)
    assert not failed, failed


def test_a_count_an_import_raises_is_not_lowered_when_another_writer_raised_it_further_meanwhile(
    tmp_path: Path, pg_cluster: TemporaryCluster, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On PostgreSQL, whose writers are not serialized as SQLite's are: an import bringing a series' count of 5 read
    it as 3 here, then set 5, while an embargo of a document held here was set and lifted twice meanwhile (four
    changes, made 7, committed between the read and the write): the count went down to 5 (and 6 with the import's
    own change), below the 7 a page had signed, so the origin's mirrors refused every page of it as an older one
    replayed. Here the four changes are made while the import is held just before it writes its count: they wait
    for it (it holds the series' row) or it finds them; the count is one of an order of the two, never less."""
    bag, _ = _export(tmp_path)
    location = pg_cluster.create_schema("pdi_rules_raised_meanwhile")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
        for access in ("private", "public", "private"):
            archive.set_series_access(SERIES, access)
        assert archive.manifest_page(SERIES).rules == 3
        order = str(archive.add(SERIES, b"a local order\n", format="text", foreign_id="order-1")).rsplit(".", 2)[0]

    def meanwhile(other: Archive) -> None:  # another process's embargo of a document held here, set and lifted twice
        for until in ("2033-01-01", None, "2034-01-01", None):
            other.embargo(order, until)

    with Archive.open(location) as archive:
        # the four changes made, or waiting for the import, as it comes to write its count
        with _another_writer_waiting(archive, location, meanwhile, "UPDATE series SET rules_changes = ?",
                                     monkeypatch, after=False):
            archive.import_bag(bag)
        # the import first: 5 from the bag over 3, its embargo one more, then the four (10); the four first: 7, 5
        # from the bag fewer, its embargo one more (8)
        rules = archive.manifest_page(SERIES).rules
        assert rules in (8, 10), rules
        assert archive.manifest_page(f"minutes.{SERIES}").rules == rules + 2


def test_an_embargo_set_while_its_series_access_changes_waits_for_it_on_postgresql(
    pg_cluster: TemporaryCluster, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``pdi series access`` locks the series' row, then dates its documents; an embargo locked its document, then
    counted its change on the series' row (step 27; the row's key checked before, by the reference of a row it
    writes): at once on PostgreSQL each waited for the other, and PostgreSQL refused one ("deadlock detected"),
    a write lost. Here the series' access holds its row while the embargo begins: the embargo must wait for it
    and both be made, two changes counted."""
    location = pg_cluster.create_schema("pdi_rules_embargo_and_access")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
        document = str(archive.add(SERIES, b"the judgment\n", format="text")).rsplit(".", 2)[0]
    with Archive.open(location) as archive:
        # the series' row held until the commit once read: the embargo begins then, and waits
        with _another_writer_waiting(archive, location, lambda other: other.embargo(document, "2040-01-01"),
                                     "SELECT access FROM series", monkeypatch, after=True):
            archive.set_series_access(SERIES, "private")
        assert archive.manifest_page(SERIES).rules == 2
        made = sorted((e.action, e.detail) for e in archive.audit() if e.action in ("embargo", "series-access"))
        assert [action for action, _ in made] == ["embargo", "series-access"], made
        assert made[0][1].startswith("the document until 2040-01-01T00:00:00") and made[1][1] == "private", made


def test_an_embargo_set_while_an_import_adds_a_version_of_its_document_waits_for_it_on_postgresql(
    tmp_path: Path, pg_cluster: TemporaryCluster, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An import that adds a version to a document held here holds the document (its new version refers to it),
    then counts the changes of its series' rules on the series' row; an embargo of that document, holding the
    series' row first, would wait for the document while the import waited for the row ("deadlock detected"). The
    import holds the rows of its series first: the embargo waits for it, and both are made."""
    from pdi.archive.content import Content

    with Archive.init(tmp_path / "origin") as origin:
        origin.add_series(SERIES)
        document = str(origin.add(SERIES, b"the judgment\n", format="text")).rsplit(".", 2)[0]
        origin.export_bag(tmp_path / "first")
        origin.add_version(document, [Content(b"the judgment, corrected\n", "text")])
        for access in ("private", "public"):  # two changes of its rules at the origin: the second bag says 2
            origin.set_series_access(SERIES, access)
        origin.export_bag(tmp_path / "second")
    location = pg_cluster.create_schema("pdi_rules_import_and_embargo")
    with Archive.init(location) as archive:
        archive.import_bag(tmp_path / "first")
        assert archive.manifest_page(SERIES).rules == 0
    with Archive.open(location) as archive:
        # the embargo begins as the import comes to write its count, and waits
        with _another_writer_waiting(archive, location, lambda other: other.embargo(document, "2040-01-01"),
                                     "UPDATE series SET rules_changes = ?", monkeypatch, after=False):
            archive.import_bag(tmp_path / "second")
        assert archive.manifest_page(SERIES).rules == 3  # the origin's 2, then the embargo set here
        assert archive.versions(document) == [1, 2]
