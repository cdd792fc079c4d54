"""A backup's marker records the SHA-256 of each file it holds but its blobs (the catalog or its dump, the keys, the
archive's SGML DTDs), and a restore checks each before it writes anything (docs/reference/backup.md, Restore).

Found trying restores as an operator would (2026-11-30): one octet flipped in a backup's signing key, in a DTD of
its ``sgml/`` folder, in a text of a row of its SQLite catalog (which SQLite's integrity check does not read) or in
the compressed data of a PostgreSQL dump was restored, said "restored", and the archive then signed with another
key, read its SGML with another DTD, or named other things than it had. Each is now refused, naming the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pdi.errors import IntegrityError, StoreError
from support.pgcluster import TemporaryCluster

S = "archives.gov.us"
TITLE = "The minutes of the board, kept for fifty years"


def _pdi(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *args], capture_output=True, text=True, timeout=300,
                          check=False, env={**os.environ, "PDI_SIGNING_KEY": "", "PDI_WACZ_KEY": ""})


def _ok(*args: str) -> str:
    done = _pdi(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _archive(location: str, tmp_path: Path) -> None:
    """An archive at ``location`` with a text, a statement with a title and (a directory's) a signing key and a DTD."""
    _ok("init", "--archive", location)
    _ok("series", "add", S, "--archive", location)
    text = tmp_path / "minutes.txt"
    text.write_bytes(b"Minutes.\n")
    name = _ok("add", str(text), "--series", S, "--archive", location).strip()
    _ok("meta", name, f"title={TITLE}", "--archive", location)
    if not location.startswith("postgresql://"):
        _ok("keys", "init", "--archive", location)
        dtd = tmp_path / "memo.dtd"
        dtd.write_bytes(b"<!ELEMENT memo - - (#PCDATA)>\n")
        _ok("sgml", "add", str(dtd), "--archive", location)


def _flip(path: Path, at: int) -> None:
    """One octet of ``path`` changed (its lowest bit), the file's mode kept."""
    mode = path.stat().st_mode
    path.chmod(0o600)
    data = bytearray(path.read_bytes())
    data[at] ^= 1
    path.write_bytes(bytes(data))
    path.chmod(mode)


def _marker(backup: Path) -> dict[str, object]:
    return json.loads((backup / "pdi-backup.json").read_text("utf-8"))  # type: ignore[no-any-return]


def test_the_marker_records_the_sha256_of_each_file_but_the_blobs(tmp_path: Path) -> None:
    _archive(str(tmp_path / "archive"), tmp_path)
    _ok("backup", str(tmp_path / "b"), "--archive", str(tmp_path / "archive"))
    held = {str(p.relative_to(tmp_path / "b")) for p in (tmp_path / "b").rglob("*")
            if p.is_file() and p.parts[-3:-2] != ("blobs",) and p.name != "pdi-backup.json"}
    assert held == {"catalog.sqlite", "signing-key.pem", "sgml/memo.dtd"}
    assert _marker(tmp_path / "b")["files"] == {
        name: hashlib.sha256((tmp_path / "b" / name).read_bytes()).hexdigest() for name in held}


def _title_offset(catalog: Path) -> int:
    """Where the statement's title is in the catalog's file, once: a text of a row, which no check of SQLite's
    reads (the oracle below says the flipped file is whole to SQLite)."""
    data = catalog.read_bytes()
    assert data.count(TITLE.encode()) == 1
    return data.index(TITLE.encode()) + 4


@pytest.mark.parametrize("which", ["catalog.sqlite", "signing-key.pem", "sgml/memo.dtd"])
def test_a_sqlite_backup_with_one_octet_flipped_is_refused_naming_the_file(tmp_path: Path, which: str) -> None:
    _archive(str(tmp_path / "archive"), tmp_path)
    _ok("backup", str(tmp_path / "b"), "--archive", str(tmp_path / "archive"))
    damaged = tmp_path / "b" / which
    before = hashlib.sha256(damaged.read_bytes()).hexdigest()
    _flip(damaged, _title_offset(damaged) if which == "catalog.sqlite" else 40 if which.endswith(".pem") else 3)
    if which == "catalog.sqlite":
        check = sqlite3.connect(f"file:{damaged}?mode=ro", uri=True)
        try:
            assert check.execute("PRAGMA integrity_check").fetchall() == [("ok",)]  # SQLite finds nothing amiss
        finally:
            check.close()
    result = _pdi("restore", str(tmp_path / "b"), "--to", str(tmp_path / "r"))
    assert result.returncode == IntegrityError.exit_code, result.stdout + result.stderr
    now = hashlib.sha256(damaged.read_bytes()).hexdigest()
    assert (f"{damaged} does not match the SHA-256 pdi-backup.json records for it (it is {now}, not {before}):"
            " this backup is damaged, restore another one; nothing was restored") in result.stderr
    assert not (tmp_path / "r").exists()


def test_a_file_put_into_a_backup_or_gone_from_it_is_refused(tmp_path: Path) -> None:
    _archive(str(tmp_path / "archive"), tmp_path)
    _ok("backup", str(tmp_path / "b"), "--archive", str(tmp_path / "archive"))
    stranger = tmp_path / "b" / "sgml" / "other.dtd"
    stranger.write_bytes(b"<!ELEMENT other - - (#PCDATA)>\n")
    result = _pdi("restore", str(tmp_path / "b"), "--to", str(tmp_path / "r"))
    assert result.returncode == IntegrityError.exit_code, result.stdout + result.stderr
    assert f"{stranger} is not one of the files pdi-backup.json records" in result.stderr
    stranger.unlink()
    key = tmp_path / "b" / "signing-key.pem"
    key.unlink()
    result = _pdi("restore", str(tmp_path / "b"), "--to", str(tmp_path / "r"))
    assert result.returncode == IntegrityError.exit_code, result.stdout + result.stderr
    assert f"{key} is missing from the backup, whose pdi-backup.json records it" in result.stderr
    assert not (tmp_path / "r").exists()


def test_a_marker_whose_record_of_its_files_was_flipped_is_refused(tmp_path: Path) -> None:
    """``files`` flipped to ``filer`` would read as the marker of a backup an earlier pdi made, whose files a
    restore cannot check: a key no marker has, in a marker without ``files``, is damage."""
    _archive(str(tmp_path / "archive"), tmp_path)
    _ok("backup", str(tmp_path / "b"), "--archive", str(tmp_path / "archive"))
    marker = tmp_path / "b" / "pdi-backup.json"
    text = marker.read_text("utf-8")
    assert text.count('"files"') == 1
    marker.write_text(text.replace('"files"', '"filer"'), "utf-8")
    result = _pdi("restore", str(tmp_path / "b"), "--to", str(tmp_path / "r"))
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    assert f"{marker} holds 'filer', which no pdi-backup/1 marker holds: it is damaged" in result.stderr
    assert not (tmp_path / "r").exists()


def test_a_backup_an_earlier_pdi_made_restores_as_before(tmp_path: Path) -> None:
    """Its marker records no files (pdi before 0.3.0): restored, each file checked only as it is read."""
    _archive(str(tmp_path / "archive"), tmp_path)
    _ok("backup", str(tmp_path / "b"), "--archive", str(tmp_path / "archive"))
    marker = _marker(tmp_path / "b")
    del marker["files"]
    (tmp_path / "b" / "pdi-backup.json").write_text(json.dumps(marker, indent=1) + "\n", "utf-8")
    _ok("restore", str(tmp_path / "b"), "--to", str(tmp_path / "r"))
    assert "0 problems" in _ok("verify", "--archive", str(tmp_path / "r"))
    assert (tmp_path / "r" / "signing-key.pem").read_bytes() == (tmp_path / "archive" / "signing-key.pem").read_bytes()


def test_a_backup_taken_again_records_its_files_as_they_are_then(tmp_path: Path) -> None:
    _archive(str(tmp_path / "archive"), tmp_path)
    _ok("backup", str(tmp_path / "b"), "--archive", str(tmp_path / "archive"))
    dtd = tmp_path / "later.dtd"
    dtd.write_bytes(b"<!ELEMENT later - - (#PCDATA)>\n")
    _ok("sgml", "add", str(dtd), "--archive", str(tmp_path / "archive"))
    _ok("backup", str(tmp_path / "b"), "--archive", str(tmp_path / "archive"))
    files = _marker(tmp_path / "b")["files"]
    assert isinstance(files, dict) and set(files) == {"catalog.sqlite", "signing-key.pem", "sgml/memo.dtd",
                                                      "sgml/later.dtd"}
    _ok("restore", str(tmp_path / "b"), "--to", str(tmp_path / "r"))
    assert (tmp_path / "r" / "sgml" / "later.dtd").read_bytes() == dtd.read_bytes()


def test_a_postgresql_backups_dump_with_one_octet_flipped_is_refused(pg_cluster: TemporaryCluster,
                                                                     tmp_path: Path) -> None:
    """An octet of a dump's compressed data flipped may still uncompress (the operator's try: restored, said
    "restored"); any octet flipped is now refused before ``pg_restore`` runs, the database left empty."""
    source = pg_cluster.create_database("digests_source")
    _archive(source, tmp_path)
    _ok("backup", str(tmp_path / "b"), "--archive", source)
    dump = tmp_path / "b" / "catalog.dump"
    assert _marker(tmp_path / "b")["files"] == {"catalog.dump": hashlib.sha256(dump.read_bytes()).hexdigest()}
    _flip(dump, dump.stat().st_size * 3 // 10)
    target = pg_cluster.create_database("digests_target")
    result = _pdi("restore", str(tmp_path / "b"), "--to", target)
    assert result.returncode == IntegrityError.exit_code, result.stdout + result.stderr
    assert f"{dump} does not match the SHA-256 pdi-backup.json records for it" in result.stderr
    assert pg_cluster.sql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", "digests_target") == [(0,)]
