"""Schema step 16 on SQLite (:mod:`pdi.archive.catalog.keyed_tables`): the tables a deposit writes kept by their keys.

What SQLite itself says of the catalog (``pragma_table_list``'s ``wr``, its
integrity and foreign-key checks), read past pdi with the ``sqlite3`` module,
on a new catalog and on the newest release's archive (``tests/data/releases``,
written by that release's own code at an older step): every row and trigger
kept, the keys checked, and a catalog whose keys do not hold refused with
nothing changed.
"""

from __future__ import annotations

import sqlite3
import tarfile
from pathlib import Path

import pytest

from pdi.archive import Archive, Content
from pdi.archive.catalog.keyed_tables import KEYED_STEP, KEYED_TABLES
from pdi.archive.catalog.schema_steps import (
    ACCESS_DATED_STEP,
    ASCII_APART_STEP,
    MARKS_IN_WORDS_STEP,
    OPTIONAL_STEP,
    PARSE_REFUSALS_STEP,
    REGISTRIES_SEEN_STEP,
    RESPACED_STEP,
    RULES_COUNTED_STEP,
    RULES_MARKED_STEP,
    SELECTORS_STEP,
    SPACED_STEP,
    migrations,
)
from pdi.archive.sqlite import open_sqlite
from pdi.archive.store import SCHEMA_VERSION
from pdi.errors import StoreError

RELEASES = Path(__file__).resolve().parents[1] / "data" / "releases"
S = "keyed.example.us"


def _newest_release(tmp_path: Path) -> Path:
    newest = max((p for p in RELEASES.iterdir() if p.is_dir()), key=lambda p: tuple(int(n) for n in p.name.split(".")))
    with tarfile.open(newest / "sqlite-archive.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / "archive"


def _sqlite(location: Path) -> sqlite3.Connection:
    return sqlite3.connect(location / "catalog.sqlite")


def _without_rowid(db: sqlite3.Connection) -> set[str]:
    return {str(name) for name, in db.execute("SELECT name FROM pragma_table_list WHERE wr = 1 AND schema = 'main'")}


def _step(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0])


def _contents(db: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    return {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in (*KEYED_TABLES, "serial_names")}


def _forms(db: sqlite3.Connection) -> dict[str, tuple[object, ...]]:
    """Each table's columns (name, type, not null, default, key), foreign keys and indexes, as SQLite says them; a
    key's columns are not null (as a WITHOUT ROWID table's always are, and as every row pdi writes has them)."""
    return {t: (db.execute("SELECT name, type, \"notnull\" OR pk > 0, dflt_value, pk FROM pragma_table_info(?)",
                           (t,)).fetchall(),
                db.execute("SELECT \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?)", (t,)).fetchall(),
                sorted(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?"
                                  " AND sql IS NOT NULL", (t,)).fetchall()))
            for t in KEYED_TABLES}


def _triggers(db: sqlite3.Connection) -> dict[str, tuple[str, str]]:
    return {str(n): (str(t), str(q)) for n, t, q in db.execute(
        "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'")}


def test_step_16_is_followed_only_by_steps_that_write_passages_again() -> None:
    # step 17 writes the full-text passages of Chinese and Japanese text again (test_archive_search_cjk.py), step 18
    # those of Thai, Lao, Myanmar and Khmer (test_archive_search_scripts.py), step 19 those holding Arabic's
    # harakat or Hebrew's points without them (test_archive_search_optional_marks.py), step 20 PostgreSQL's index of
    # them read again (test_archive_search_ascii_punctuation.py), step 21 a column of documents, step 22 a table of
    # its own (test_server_mirror_sgml_parses.py), step 23 SQLite's index made again and step 24 the passages holding
    # variation selectors written again (test_archive_search_scripts.py), step 25 columns of access_changes and
    # mirrors (test_server_mirror_rules_replay.py), step 26 a table of its own (test_server_registry_replay.py),
    # step 27 a column of series (test_archive_mirror_rules_count.py), no table step 16
    # keeps by its key (test_archive_changes.py): no table step 16 made changes after it
    assert KEYED_STEP == 16 and SPACED_STEP == 17 and RESPACED_STEP == 18 and OPTIONAL_STEP == 19
    assert ASCII_APART_STEP == 20 and ACCESS_DATED_STEP == 21 and PARSE_REFUSALS_STEP == 22
    assert MARKS_IN_WORDS_STEP == 23 and SELECTORS_STEP == 24 and RULES_MARKED_STEP == 25
    assert REGISTRIES_SEEN_STEP == 26 and SCHEMA_VERSION == RULES_COUNTED_STEP == 27
    assert migrations("INTEGER PRIMARY KEY", "BLOB", True)[SELECTORS_STEP] == []  # no statement: passages written
    added = migrations("INTEGER PRIMARY KEY", "BLOB", True)[ACCESS_DATED_STEP]
    assert added == ["ALTER TABLE documents ADD COLUMN access_changed_at TEXT"] and "documents" not in KEYED_TABLES
    refusals = migrations("INTEGER PRIMARY KEY", "BLOB", True)[PARSE_REFUSALS_STEP]  # step 22: a new table of its own
    assert len(refusals) == 1 and refusals[0].startswith("CREATE TABLE parse_refusals")
    assert "parse_refusals" not in KEYED_TABLES
    marked = migrations("INTEGER PRIMARY KEY", "BLOB", True)[RULES_MARKED_STEP]  # step 25: columns and an index
    assert not {"access_changes", "mirrors"} & set(KEYED_TABLES) and len(marked) == 3
    seen = migrations("INTEGER PRIMARY KEY", "BLOB", True)[REGISTRIES_SEEN_STEP]  # step 26: a new table of its own
    assert len(seen) == 1 and seen[0].startswith("CREATE TABLE registries_seen")
    assert "registries_seen" not in KEYED_TABLES
    counted = migrations("INTEGER PRIMARY KEY", "BLOB", True)[RULES_COUNTED_STEP]  # step 27: a column of series
    assert "series" not in KEYED_TABLES and counted[0].startswith("ALTER TABLE series ADD COLUMN rules_changes")


def test_a_new_catalog_keeps_the_deposit_tables_by_their_keys(tmp_path: Path) -> None:
    with Archive.init(str(tmp_path / "a")) as archive:
        archive.add_series(S)
        archive.deposit(S, [Content(b"a line\n", "text")])
        # the store's connection has its foreign keys on again after the migration turned them off
        assert archive.store._conn.execute("PRAGMA foreign_keys").fetchone() == (1,)  # type: ignore[attr-defined]
    with _sqlite(tmp_path / "a") as db:
        assert set(KEYED_TABLES) <= _without_rowid(db)
        indexes = {str(t) for t, in db.execute("SELECT tbl_name FROM sqlite_master WHERE name LIKE 'sqlite_autoindex_%'")}
        assert not indexes & set(KEYED_TABLES)  # the key is the table: no second B-tree beside it
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_an_older_catalog_keeps_every_row_and_trigger(tmp_path: Path) -> None:
    location = _newest_release(tmp_path / "old")
    with _sqlite(location) as db:
        assert _step(db) < KEYED_STEP - 1 and not _without_rowid(db) & set(KEYED_TABLES)
    store = open_sqlite(location, create=False, older="keep")
    try:
        store.migrate(KEYED_STEP - 1)  # the steps before 16, as the release's catalog takes them
    finally:
        store.close()
    with _sqlite(location) as db:
        assert _step(db) == KEYED_STEP - 1 and not _without_rowid(db) & set(KEYED_TABLES)
        before = _contents(db)
        forms = _forms(db)
        assert before["representations"] and before["serial_names"]
    with Archive.init(str(location)) as archive:  # pdi init migrates it
        assert archive.store.schema_version() == SCHEMA_VERSION
    with Archive.init(str(tmp_path / "new")):
        pass
    with _sqlite(tmp_path / "new") as fresh:
        triggers = _triggers(fresh)
    with _sqlite(location) as db:
        assert set(KEYED_TABLES) <= _without_rowid(db)
        assert _contents(db) == before and _forms(db) == forms
        assert _triggers(db) == triggers and triggers  # the same triggers, word for word, as a new catalog's
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    # the triggers made again still keep serial_names: a deposit gets its row
    with Archive.open(str(location)) as archive:
        archive.add_series(S)
        done = archive.deposit(S, [Content(b"after step 16\n", "text")])
        name = str(done.names[0])
    with _sqlite(location) as db:
        assert db.execute("SELECT sha256 FROM serial_names WHERE name = ?", (name,)).fetchone() == (done.sha256s[0],)


def test_an_older_catalog_whose_keys_did_not_hold_is_migrated_and_verify_reports_them(tmp_path: Path) -> None:
    """Rows that referred to nothing before step 16 (damage, not the step's doing) do not lock the catalog: it is
    migrated, and pdi verify still reports them."""
    location = _newest_release(tmp_path)
    with _sqlite(location) as db:
        db.execute("PRAGMA foreign_keys = OFF")
        # a format of a version that is not there (what no pdi writes: its foreign keys are on)
        db.execute("INSERT INTO representations (document, version, format, media_type, sha256, size, created_at)"
                   " VALUES (9999, 1, 'text', 'text/plain', ?, 1, '2026-01-01T00:00:00.000000Z')", ("0" * 64,))
        db.commit()
    with Archive.init(str(location)) as archive:  # pdi init migrates it
        assert archive.store.schema_version() == SCHEMA_VERSION
        report = archive.verify()
    assert not report.ok
    assert ("catalog-database", "a row of representations refers to a missing row of versions") in {
        (p.kind, p.detail) for p in report.problems}
    with _sqlite(location) as db:
        assert set(KEYED_TABLES) <= _without_rowid(db)
        [(table, _, parent, _)] = db.execute("PRAGMA foreign_key_check(representations)").fetchall()
        assert (table, parent) == ("representations", "versions")


def test_a_step_that_would_break_keys_is_refused_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fault the step's own statements cannot make (they copy every row), injected: one version more removed.
    The migration is refused naming the table, the catalog is as it was, and the store's connection has its
    foreign keys on again and no transaction open."""
    import pdi.archive.sqlite as sqlite_store

    real = sqlite_store.keyed
    monkeypatch.setattr(sqlite_store, "keyed", lambda query: [
        *real(query), "DELETE FROM versions WHERE (document, version) IN (SELECT document, version FROM versions LIMIT 1)"])
    location = _newest_release(tmp_path)
    with _sqlite(location) as db:
        step = _step(db)
        contents = {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in KEYED_TABLES}
    store = open_sqlite(location, create=False, older="keep")
    try:
        with pytest.raises(StoreError, match=r"schema step 16 would leave 1 row\(s\) of representations referring to"
                                             r" no row of versions, more than before it; nothing was changed"):
            store.migrate()
        assert store._conn.execute("PRAGMA foreign_keys").fetchone() == (1,)  # type: ignore[attr-defined]
        assert not store._conn.in_transaction  # type: ignore[attr-defined]
    finally:
        store.close()
    with _sqlite(location) as db:
        assert _step(db) == step
        assert not _without_rowid(db) & set(KEYED_TABLES)
        assert {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in KEYED_TABLES} == contents
