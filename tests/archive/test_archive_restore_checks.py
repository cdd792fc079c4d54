"""A restore reads a backup as a stranger's may be (docs/reference/backup.md, "Restore"): what does not verify is
refused, naming what and where, before a restored archive that looks whole is left behind.

Each damage here was found by an attack on ``pdi restore`` (2026-11-27); each was restored, answered "restored
… now run: pdi verify", and left an archive that failed when it was opened or read.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from pdi.archive import Archive, Content
from pdi.archive.backup import backup
from pdi.errors import IntegrityError, StoreError
from support.backups import reseal

S = "ex.example.us"


def _damaged(octets: bytes) -> bytes:
    """``octets`` with their first one changed (writing ``x`` there changed nothing in a blob that began with
    ``x``: one random blob in 256, and the test failed)."""
    return bytes([octets[0] ^ 0xFF]) + octets[1:]

def _pdi(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *args], capture_output=True, text=True, timeout=300,
                          check=False)


def _backup(tmp_path: Path) -> Path:
    """A copied backup of a small archive: one blob a row of its catalog, two blob files."""
    root = tmp_path / "archive"
    with Archive.init(root) as archive:
        archive.add_series(S)
        for octets in (b"row\n", os.urandom(200_000), os.urandom(100_000)):
            archive.deposit(S, [Content(octets, "octet-stream")])
    backup(str(root), tmp_path / "b", copy=True)
    return tmp_path / "b"


def test_a_backups_catalog_with_a_damaged_page_is_refused_before_anything_is_restored(tmp_path: Path) -> None:
    """A page of the catalog no restore step reads (the audit log's) overwritten: SQLite's own integrity check
    says so; the restore said "restored", and every command on the archive then failed ("database disk image
    is malformed")."""
    made = _backup(tmp_path)
    catalog = made / "catalog.sqlite"
    with sqlite3.connect(catalog) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root_page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'audit_log'").fetchone()[0]
    conn.close()
    with catalog.open("r+b") as f:
        f.seek((root_page - 1) * page_size)
        f.write(b"\xde\xad\xbe\xef" * (page_size // 4))
    reseal(made)  # the marker's digest of the catalog made to fit: SQLite's own check is what meets it
    check = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)  # the oracle: SQLite's own check
    try:
        said = check.execute("PRAGMA integrity_check").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        said = str(exc)
    finally:
        check.close()
    assert said != "ok"
    result = _pdi("restore", str(made), "--to", str(tmp_path / "r"))
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    assert f"{catalog} is damaged (SQLite's integrity check:" in result.stderr
    assert "nothing was restored" in result.stderr
    assert not (tmp_path / "r").exists()


def _change(made: Path, *statements: str) -> None:
    conn = sqlite3.connect(made / "catalog.sqlite")
    try:
        for sql in statements:
            conn.execute(sql)
        conn.commit()
    finally:
        conn.close()
    reseal(made)


def test_a_blob_kept_in_the_backups_catalog_that_is_not_its_sha256_is_refused(tmp_path: Path) -> None:
    """A blob of at most 64 KiB is a row of the catalog; its octets changed, the restore said "restored" and
    ``pdi verify`` of the restored archive found it altered (exit 3). Blob files were checked; rows were not."""
    made = _backup(tmp_path)
    digest = hashlib.sha256(b"row\n").hexdigest()
    _change(made, "UPDATE blobs SET data = CAST('ROW' || char(10) AS BLOB)")
    result = _pdi("restore", str(made), "--to", str(tmp_path / "r"))
    assert result.returncode == IntegrityError.exit_code, result.stdout + result.stderr
    assert (f"blob {digest} in {made / 'catalog.sqlite'} does not match its SHA-256 (it is"
            f" {hashlib.sha256(b'ROW' + bytes([10])).hexdigest()})") in result.stderr
    assert not (tmp_path / "r").exists()


def test_a_size_the_backups_catalog_gives_a_blob_that_is_not_its_size_is_refused(tmp_path: Path) -> None:
    """A representation's size changed (of a blob file, and of a blob kept as a row): the restore said "restored",
    and ``pdi verify`` then found "size 200000 differs from the catalog" (exit 3)."""
    for old, new in ((200_000, 5), (4, 9)):
        made = _backup(tmp_path / str(old))
        (digest,) = sqlite3.connect(made / "catalog.sqlite").execute(
            "SELECT sha256 FROM representations WHERE size = ?", (old,)).fetchone()
        _change(made, f"UPDATE representations SET size = {new} WHERE size = {old}")
        result = _pdi("restore", str(made), "--to", str(tmp_path / str(old) / "r"))
        assert result.returncode == IntegrityError.exit_code, result.stdout + result.stderr
        assert f"blob {digest} is {old} octets, not the {new} its catalog gives" in result.stderr
        assert not (tmp_path / str(old) / "r").exists()


def test_a_damaged_blob_left_where_a_restore_goes_is_replaced_by_the_backups(tmp_path: Path) -> None:
    """A restore goes into a folder holding only ``blobs/`` and ``tmp/`` (a restore that did not finish; or an
    archive whose damaged catalog was removed so that its backup could be put back). A blob file there of the
    right size but other octets was taken as restored ("0 blobs copied"), and ``pdi verify`` then found it
    altered (exit 3). A blob there is re-hashed, and one that is not its SHA-256 copied again from the backup."""
    made = _backup(tmp_path)
    first = _pdi("restore", str(made), "--to", str(tmp_path / "r"), "--copy")
    assert first.returncode == 0, first.stderr
    victim = max((tmp_path / "r" / "blobs").glob("*/*"), key=lambda p: p.stat().st_size)
    good = victim.read_bytes()
    victim.chmod(0o644)
    victim.write_bytes(_damaged(good))
    for leftover in (tmp_path / "r").glob("catalog.sqlite*"):
        leftover.unlink()
    again = _pdi("restore", str(made), "--to", str(tmp_path / "r"), "--copy")
    assert again.returncode == 0, again.stderr
    assert "1 blob copied" in again.stdout
    assert hashlib.sha256(victim.read_bytes()).hexdigest() == victim.name
    verified = _pdi("verify", "--archive", str(tmp_path / "r"))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_marker_whose_schema_version_is_not_its_catalogs_is_refused(tmp_path: Path) -> None:
    """``pdi-backup.json`` says the catalog's schema version; a SQLite backup's catalog says it too
    (``schema_migrations``). A marker saying 3 of a catalog at this pdi's version was restored with the advice
    to check it with an old release; one whose catalog a newer pdi wrote, its marker saying this pdi's version,
    was restored, and every command on it then refused it as newer than this pdi (exit 8)."""
    import json

    from pdi.archive.store import SCHEMA_VERSION

    made = _backup(tmp_path)
    marker = json.loads((made / "pdi-backup.json").read_text())
    assert marker["schema_version"] == SCHEMA_VERSION
    (made / "pdi-backup.json").write_text(json.dumps({**marker, "schema_version": 3}))
    result = _pdi("restore", str(made), "--to", str(tmp_path / "r"))
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    assert (f"{made / 'pdi-backup.json'} says the catalog is at schema version 3, but {made / 'catalog.sqlite'}"
            f" is at {SCHEMA_VERSION}") in result.stderr
    assert not (tmp_path / "r").exists()
    (made / "pdi-backup.json").write_text(json.dumps(marker))
    _change(made, f"INSERT INTO schema_migrations VALUES ({SCHEMA_VERSION + 1}, '2030-01-01T00:00:00Z')")
    result = _pdi("restore", str(made), "--to", str(tmp_path / "r"))
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    assert f"is at {SCHEMA_VERSION + 1}" in result.stderr
    assert not (tmp_path / "r").exists()


def test_a_blob_file_of_a_backup_that_is_a_symbolic_link_out_of_it_is_refused(tmp_path: Path) -> None:
    """Found by an attack (2026-11-27): a backup's catalog naming the SHA-256 of a file outside the backup, and a
    blob file there that is a symbolic link to it, was restored ("2 hard-linked"): the restored archive's blob
    file was that very file (one inode), read and served as the archive's. pdi makes no link in a backup."""
    made = _backup(tmp_path)
    secret = tmp_path / "secret.bin"
    secret.write_bytes(os.urandom(150_000))
    digest = hashlib.sha256(secret.read_bytes()).hexdigest()
    conn = sqlite3.connect(made / "catalog.sqlite")
    try:
        conn.execute("UPDATE representations SET sha256 = ?, size = 150000 WHERE size = 100000", (digest,))
        conn.commit()
    finally:
        conn.close()
    reseal(made)
    link = made / "blobs" / digest[:2] / digest
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(secret)
    result = _pdi("restore", str(made), "--to", str(tmp_path / "r"))
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    assert f"{link} is a symbolic link" in result.stderr
    assert not (tmp_path / "r" / "catalog.sqlite").exists()
    assert not (tmp_path / "r" / "blobs" / digest[:2] / digest).exists()
    assert secret.stat().st_nlink == 1


def test_a_backups_catalog_that_is_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    """A backup's catalog that is a link to another archive's catalog (outside the backup) was read and restored."""
    made = _backup(tmp_path)
    (made / "catalog.sqlite").unlink()
    (made / "catalog.sqlite").symlink_to(tmp_path / "archive" / "catalog.sqlite")
    result = _pdi("restore", str(made), "--to", str(tmp_path / "r"))
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    assert f"{made / 'catalog.sqlite'} is a symbolic link" in result.stderr
    assert not (tmp_path / "r").exists()


def test_a_backups_catalog_with_a_trigger_pdi_does_not_make_is_refused(tmp_path: Path) -> None:
    """Found by an attack (2026-11-27): a trigger a stranger added to a backup's catalog was restored with it and ran
    later, in the restored archive's own commands: one that, on a withdrawal, named ``../victim.txt`` as the
    withdrawn version's blob made ``pdi withdraw --purge`` unlink that file, outside the archive. The only
    triggers of a pdi catalog are those its migrations make (``serial_names``')."""
    made = _backup(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    _change(made, "CREATE TRIGGER kept_tidy AFTER INSERT ON withdrawals BEGIN"
                  " UPDATE representations SET sha256 = '../victim.txt' WHERE size = 200000; END")
    result = _pdi("restore", str(made), "--to", str(tmp_path / "r"))
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    assert f"{made / 'catalog.sqlite'} holds triggers pdi does not make (kept_tidy)" in result.stderr
    assert not (tmp_path / "r").exists()
    assert victim.read_bytes() == b"precious\n"


def test_a_backups_catalog_whose_own_trigger_was_rewritten_is_refused(tmp_path: Path) -> None:
    """A trigger of pdi's name whose statement is not pdi's is as foreign as one of another name."""
    made = _backup(tmp_path)
    _change(made, "DROP TRIGGER serial_names_withdrawn",
            "CREATE TRIGGER serial_names_withdrawn AFTER INSERT ON withdrawals BEGIN DELETE FROM audit_log; END")
    result = _pdi("restore", str(made), "--to", str(tmp_path / "r"))
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    assert "holds triggers pdi does not make (serial_names_withdrawn)" in result.stderr
    assert not (tmp_path / "r").exists()


def test_the_triggers_of_a_catalog_migrated_from_its_first_version_are_pdis_own(tmp_path: Path) -> None:
    """Step 16 drops each trigger and makes it again from its own text: a catalog made at schema version 1 and
    migrated since holds the very triggers a new one does, and its backup is restored."""
    from pdi.archive.sqlite import SQLiteStore

    old = SQLiteStore(str(tmp_path / "archive"), create=True)
    try:
        assert old.migrate(1) == 1
    finally:
        old.close()
    with Archive.init(str(tmp_path / "archive")) as archive:  # pdi init migrates it
        archive.add_series(S)
        archive.deposit(S, [Content(os.urandom(100_000), "octet-stream")])
    backup(str(tmp_path / "archive"), tmp_path / "b")
    result = _pdi("restore", str(tmp_path / "b"), "--to", str(tmp_path / "r"))
    assert result.returncode == 0, result.stdout + result.stderr
    verified = _pdi("verify", "--archive", str(tmp_path / "r"))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_backup_missing_a_blob_file_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    """A backup missing the second of its blob files: the restore made the folder, hard-linked (or copied: hours
    for a large archive) the blobs before it, and only then said the backup was incomplete, leaving a folder of
    blobs without a catalog. Each blob file is looked for before anything is made."""
    made = _backup(tmp_path)
    lost = max((made / "blobs").glob("*/*"))
    lost.unlink()
    result = _pdi("restore", str(made), "--to", str(tmp_path / "r"))
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    assert f"blob {lost.name} the backup's catalog names is missing from the backup" in result.stderr
    assert not (tmp_path / "r").exists()


def test_a_restore_that_fails_as_it_copies_leaves_no_folder_it_made(tmp_path: Path) -> None:
    """A blob file of the backup whose octets are not its name is found as it is copied (it is read then, once):
    the folder the restore made, with the blobs placed before it, was left behind."""
    made = _backup(tmp_path)
    damaged = max((made / "blobs").glob("*/*"))
    octets = damaged.read_bytes()
    damaged.chmod(0o644)
    damaged.write_bytes(bytes([octets[0] ^ 1]) + octets[1:])
    result = _pdi("restore", str(made), "--to", str(tmp_path / "new" / "r"), "--copy")
    assert result.returncode == IntegrityError.exit_code, result.stdout + result.stderr
    assert f"blob {damaged.name} at {damaged} does not match its SHA-256" in result.stderr
    assert not (tmp_path / "new" / "r").exists()


def test_a_restore_that_fails_in_a_folder_of_leftovers_leaves_them_as_they_were(tmp_path: Path) -> None:
    """A folder holding what an unfinished restore left (``blobs/``, ``tmp/``) is not the restore's to remove: a
    failed restore into it leaves it as it was, but for the blobs it placed there, each checked."""
    made = _backup(tmp_path)
    (tmp_path / "r" / "blobs").mkdir(parents=True)
    (tmp_path / "r" / "tmp").mkdir()
    damaged = max((made / "blobs").glob("*/*"))
    damaged.chmod(0o644)
    damaged.write_bytes(_damaged(damaged.read_bytes()))
    result = _pdi("restore", str(made), "--to", str(tmp_path / "r"), "--copy")
    assert result.returncode == IntegrityError.exit_code, result.stdout + result.stderr
    assert not (tmp_path / "r" / "catalog.sqlite").exists() and (tmp_path / "r" / "tmp").is_dir()
    assert not list((tmp_path / "r" / "tmp").iterdir())
    for blob in (tmp_path / "r" / "blobs").glob("*/*"):
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == blob.name
