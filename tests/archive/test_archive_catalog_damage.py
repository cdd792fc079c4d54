"""Damage to the catalog itself is found by ``verify``: the database's own check and pdi's invariants.

Issue 12: of 200 single-bit flips in ``catalog.sqlite``, SQLite's integrity
check caught 12 and ``pdi verify`` 5, and one flip renumbered serial 12 to 13
while ``verify`` passed. Here each damage is one bit of one field flipped in
place (what a bad sector or a cosmic ray does): written straight into the
catalog's tables with the archive closed, then ``verify`` must report it.
Then 200 random bit flips in the SQLite file: whatever they change in the
fields a name is made of, ``verify`` says so, and it never fails with anything
but a pdi error.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pdi.archive import Archive, Content
from pdi.cli import cli
from pdi.errors import PDIError
from support.pgcluster import TemporaryCluster

S = "oma.eop.gov.us"


def _populate(archive: Archive) -> None:
    """Fourteen serial documents today, a foreign id, a second version and statements."""
    archive.add_series(S)
    for i in range(1, 15):
        archive.add(S, f"document {i}\n".encode(), format="text")
    archive.add(S, b"<p>page</p>\n", format="html", foreign_id="http://example.org/")
    first = archive.ls(series=S)[0]
    archive.add_version(first, [Content(b"document 1, revised\n", "text")])
    archive.annotate(first, "title", "The first")


def _flip_bit(value: Any, bit: int = 0) -> Any:
    """``value`` with one bit flipped: of an integer, or of the last character of a text."""
    if isinstance(value, int):
        return value ^ (1 << bit)
    text = str(value)
    return text[:-1] + chr(ord(text[-1]) ^ (1 << bit))


# (table, column, the row: a WHERE clause on columns no flip touches, bit)
FLIPS: list[tuple[str, str, str, int]] = [
    ("documents", "serial", "unique_id = '12'", 0),           # serial 12 -> 13 (the case)
    ("documents", "unique_id", "serial = 7", 4),              # '7' -> "'"
    ("documents", "day", "serial = 3", 0),                    # …-22 -> …-23 (or 23 -> 22)
    ("documents", "dom", "serial = 5", 0),
    ("documents", "year", "serial = 9", 0),
    ("documents", "created_at", "serial = 2", 0),             # the minting date's last digit
    ("daily_serials", "last", "1 = 1", 1),
    ("representations", "media_type", "format = 'html'", 0),
    ("representations", "size", "format = 'html'", 3),
    ("assertions", "subject", "key = 'title'", 0),
]


def _field(conn: Any, table: str, column: str, where: str) -> Any:
    return conn.execute(f"SELECT {column} FROM {table} WHERE {where}").fetchone()[0]


@pytest.mark.parametrize(("table", "column", "where", "bit"), FLIPS, ids=[f"{t}.{c}" for t, c, _, _ in FLIPS])
def test_one_flipped_bit_in_the_catalog_is_reported_sqlite(
    tmp_path: Path, table: str, column: str, where: str, bit: int
) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        _populate(archive)
        assert archive.verify().ok
    conn = sqlite3.connect(Path(location) / "catalog.sqlite")
    with conn:
        before = _field(conn, table, column, where)
        if column == "created_at":
            # the day's last digit of the minting time, so the date disagrees
            after = before[:9] + chr(ord(before[9]) ^ 1) + before[10:]
        else:
            after = _flip_bit(before, bit)
        conn.execute(f"UPDATE {table} SET {column} = ? WHERE {where}", (after,))
    conn.close()
    with Archive.open(location) as archive:
        report = archive.verify()
    assert not report.ok, f"{table}.{column}: {before!r} -> {after!r} went unseen"
    # a size that disagrees with the blob is the fixity audit's "size" problem
    expected = "size" if column == "size" else "catalog-"
    assert any(p.kind.startswith(expected) for p in report.problems), report.problems


def test_a_renumbered_version_is_reported_sqlite(tmp_path: Path) -> None:
    # A flipped version number leaves its formats filed under a version that is not
    # there (the foreign keys are not checked when bytes change on disk).
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        _populate(archive)
    conn = sqlite3.connect(Path(location) / "catalog.sqlite")
    with conn:
        conn.execute("UPDATE versions SET version = 3 WHERE version = 2")
    conn.close()
    with Archive.open(location) as archive:
        kinds = {p.kind for p in archive.verify().problems}
    assert {"catalog-database", "catalog-versions"} <= kinds


def test_a_lone_version_renumbered_is_one_version_numbered_2_to_2(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(S)
        archive.add(S, b"the only version\n", format="text")
    conn = sqlite3.connect(Path(location) / "catalog.sqlite")
    with conn:
        conn.execute("UPDATE versions SET version = 2")
    conn.close()
    with Archive.open(location) as archive:
        details = [p.detail for p in archive.verify().problems if p.kind == "catalog-versions"]
    assert "1 version numbered 2 to 2" in details


def test_the_same_flips_are_reported_on_postgres(pg_cluster: TemporaryCluster) -> None:
    import psycopg

    for n, (table, column, where, bit) in enumerate(FLIPS):
        if table == "representations":
            continue  # PostgreSQL keeps blobs in the catalog; this flip is a size problem there too
        location = pg_cluster.create_schema(f"pdi_damage_{n}")
        with Archive.init(location) as archive:
            _populate(archive)
            assert archive.verify().ok
        with psycopg.connect(location) as conn:  # the URL sets the test's schema as search_path
            before = conn.execute(f"SELECT {column} FROM {table} WHERE {where}").fetchone()[0]  # type: ignore[index]
            if column == "created_at":
                after = before[:9] + chr(ord(before[9]) ^ 1) + before[10:]
            else:
                after = _flip_bit(before, bit)
            conn.execute(f"UPDATE {table} SET {column} = %s WHERE {where}", (after,))  # type: ignore[arg-type]
        with Archive.open(location) as archive:
            report = archive.verify()
        assert any(p.kind.startswith("catalog-") for p in report.problems), (table, column, report.problems)


def test_pdi_verify_prints_catalog_damage_and_exits_3(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        _populate(archive)
    conn = sqlite3.connect(Path(location) / "catalog.sqlite")
    with conn:
        conn.execute("UPDATE documents SET serial = 13 WHERE unique_id = '12'")
    conn.close()
    result = CliRunner().invoke(cli, ["verify", "--archive", location])
    assert result.exit_code == 3
    assert "catalog-document" in result.output and "serial 13 disagrees with its unique id '12'" in result.output
    assert "catalog-serials" in result.output


def test_a_value_of_the_wrong_type_is_one_problem_and_the_other_rows_are_checked_still(tmp_path: Path) -> None:
    """A serial that reads as text (what a flipped type octet makes) is reported for its row, and the rows after
    it are checked as ever (a serial that disagrees further on is found too); nothing stops on a traceback."""
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        _populate(archive)
    with sqlite3.connect(Path(location) / "catalog.sqlite") as conn:
        conn.execute("UPDATE documents SET serial = 'x3' WHERE unique_id = '3'")
        conn.execute("UPDATE documents SET serial = 13 WHERE unique_id = '12'")
    conn.close()
    result = CliRunner().invoke(cli, ["verify", "--archive", location])
    assert result.exit_code == 3, result.output
    assert "its serial 'x3' is not a number" in result.output
    assert "serial 13 disagrees with its unique id '12'" in result.output


# --- random flips in the file ----------------------------------------------------------

NAME_FIELDS = {
    "series": "name, parent",
    "documents": "id, series, day, year, month, dom, unique_id, serial",
    "daily_serials": "series, day, last",
    "versions": "document, version",
    "representations": "document, version, format, media_type, charset, line_ending, sha256, size",
    "assertions": "document, subject",
}


def _name_fields(path: Path) -> dict[str, list[tuple[Any, ...]]] | None:
    """What names are made of, read straight from the file; None when SQLite cannot read it."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        conn.text_factory = bytes  # a flip may leave a text that is not UTF-8: still a value to compare
        try:
            return {
                table: sorted(conn.execute(f"SELECT {cols} FROM {table}").fetchall(), key=repr)
                for table, cols in NAME_FIELDS.items()
            }
        finally:
            conn.close()
    except (sqlite3.Error, UnicodeDecodeError):  # the latter: SQLite's own message quotes a damaged schema
        return None


def test_random_bit_flips_in_the_catalog_file_never_go_unseen(tmp_path: Path) -> None:
    pristine = tmp_path / "pristine"
    with Archive.init(str(pristine)) as archive:
        _populate(archive)
    with sqlite3.connect(pristine / "catalog.sqlite") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        marks = ", ".join("?" * len(NAME_FIELDS))
        # each of these small tables fits its root page (SQLite file format §1.6): half the
        # flips land there, so that a change to the file's size cannot leave them all elsewhere
        roots = [r[0] for r in conn.execute(
            f"SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name IN ({marks})", list(NAME_FIELDS)
        )]
    conn.close()
    catalog = (pristine / "catalog.sqlite").read_bytes()
    fields = _name_fields(pristine / "catalog.sqlite")
    rng = random.Random(200)
    changed = seen = 0
    for n in range(200):
        damaged = tmp_path / f"d{n}"
        shutil.copytree(pristine, damaged)
        data = bytearray(catalog)
        if n % 2:
            bit = ((rng.choice(roots) - 1) * page_size + rng.randrange(page_size)) * 8 + rng.randrange(8)
        else:
            bit = rng.randrange(len(data) * 8)
        data[bit // 8] ^= 1 << (bit % 8)
        (damaged / "catalog.sqlite").write_bytes(bytes(data))
        detected = _verify_detects(str(damaged))
        now = _name_fields(damaged / "catalog.sqlite")
        if now != fields:
            changed += 1
            assert detected, f"flip of bit {bit} changed what names are made of, and verify passed"
        seen += detected
        shutil.rmtree(damaged)
    print(f"{changed} of 200 flips changed name fields; verify saw {seen}")
    assert changed > 0 and seen >= changed


def _verify_detects(location: str) -> bool:
    try:
        with Archive.open(location) as archive:
            return not archive.verify().ok
    except PDIError:
        return True



def test_a_chunk_digest_the_catalog_holds_wrong_is_reported(tmp_path: Path) -> None:
    """Found by an attack on pdi restore (2026-11-27): a backup whose catalog held a blob's chunk digest zeroed
    (``blob_fixity``) was restored, ``pdi verify`` said "0 problems" (the blob is its SHA-256), and every read of
    the document was refused ("stored octets damaged: chunk 0 … does not match its SHA-256"). verify names it."""
    import hashlib
    import os

    location = str(tmp_path / "archive")
    octets = os.urandom(300_000)  # a blob file, one chunk of 1 MiB
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = archive.add(S, octets, format="octet-stream")
        assert archive.verify().ok
    digest = hashlib.sha256(octets).hexdigest()
    conn = sqlite3.connect(Path(location) / "catalog.sqlite")
    with conn:
        chunks = _field(conn, "blob_fixity", "chunks", f"sha256 = '{digest}'")
        assert chunks == hashlib.sha256(octets).digest()  # one chunk: its digest is the blob's
        conn.execute("UPDATE blob_fixity SET chunks = zeroblob(32) WHERE sha256 = ?", (digest,))
    conn.close()
    with Archive.open(location) as archive:
        with pytest.raises(PDIError, match="chunk 0"):
            archive.get(name)  # what a reader meets
        report = archive.verify()
    assert [(p.kind, p.sha256) for p in report.problems] == [("catalog-chunks", digest)], report.problems
    assert "chunk 0 (octets 0 to 299999)" in report.problems[0].detail
    result = CliRunner().invoke(cli, ["verify", "--archive", location])
    assert result.exit_code == 3 and "catalog-chunks" in result.output, result.output
