"""``pdi verify --repair-from DIR``: damaged or missing blobs put right from a backup restored beside the archive.

Found running an archive as an operator would (2026-12-02): ``pdi verify`` found a blob file altered, ``pdi backup``
then refused to back the archive up until it was mended, and the only mending was ``pdi verify --repair``, which
asks mirrors; an archive with no mirror but a backup had to be restored whole, losing every deposit made since.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from pdi.archive import Archive
from support.pgcluster import TemporaryCluster

S = "archives.gov.us"


def _pdi(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *args], capture_output=True, text=True, timeout=300,
                          check=False)


def _ok(*args: str) -> str:
    done = _pdi(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _blob(archive: Path, octets: bytes) -> Path:
    """The file holding ``octets`` in a directory archive's blob store (named by their SHA-256)."""
    digest = hashlib.sha256(octets).hexdigest()
    (found,) = [p for p in (archive / "blobs").rglob(digest) if p.is_file()]
    return found


def test_altered_and_missing_blobs_are_put_right_from_a_restored_backup_and_a_later_one_is_not(
    tmp_path: Path,
) -> None:
    archive, drill = tmp_path / "archive", tmp_path / "drill"
    _ok("init", str(archive))
    _ok("series", "add", S, "--archive", str(archive))
    scan, photo, later = os.urandom(100_000), os.urandom(90_000), os.urandom(80_000)  # blob files, not catalog rows
    files = []
    for stem, octets in (("scan", scan), ("photo", photo)):
        path = tmp_path / f"{stem}.bin"
        path.write_bytes(octets)
        files.append(str(path))
    scan_name, photo_name = _ok("add", *files, "-s", S, "--archive", str(archive)).split()
    _ok("backup", str(tmp_path / "backup"), "--archive", str(archive))
    (tmp_path / "later.bin").write_bytes(later)
    later_name = _ok("add", str(tmp_path / "later.bin"), "-s", S, "--archive", str(archive)).strip()
    _ok("restore", str(tmp_path / "backup"), "--to", str(drill))

    # pdi backup refuses an archive with a blob altered (exit 3) or missing (exit 8), saying how to mend it
    altered = _blob(archive, scan)
    altered.chmod(0o600)
    altered.write_bytes(b"\x00" + scan[1:])
    refused = _pdi("backup", str(tmp_path / "backup-2"), "--archive", str(archive))
    assert refused.returncode == 3
    assert "--repair-from DIR copies it from an earlier backup restored to DIR" in refused.stderr
    _blob(archive, photo).unlink()
    _blob(archive, later).unlink()
    _blob(archive, scan).write_bytes(scan)
    refused = _pdi("backup", str(tmp_path / "backup-3"), "--archive", str(archive))
    assert refused.returncode == 8
    assert "is missing from the archive" in refused.stderr
    assert "--repair-from DIR copies it from an earlier backup restored to DIR" in refused.stderr
    altered.write_bytes(b"\x00" + scan[1:])

    done = _pdi("verify", "--repair-from", str(drill), "--archive", str(archive))
    assert done.returncode == 3, done.stdout + done.stderr
    lines = [line.split("\t") for line in done.stdout.splitlines()]
    assert ["repaired", scan_name, f"from {drill}, its SHA-256 checked"] in lines
    assert ["repaired", photo_name, f"from {drill}, its SHA-256 checked"] in lines
    (unrepaired,) = [line for line in lines if line[0] == "unrepaired"]
    assert unrepaired[1] == later_name and str(drill) in unrepaired[2]  # deposited after the backup: not in it
    assert "1 problem" in done.stdout.splitlines()[-1]
    # what /metrics says of fixity: the two repaired are whole again, the one left damaged is counted so
    with Archive.open(str(archive)) as opened:
        blobs, summary = opened.fixity_summary()
    assert (blobs, summary.whole, summary.damaged) == (3, 2, 1)

    assert _blob(archive, scan).read_bytes() == scan
    assert _blob(archive, photo).read_bytes() == photo
    for name, octets in ((scan_name, scan), (photo_name, photo)):
        got = subprocess.run([sys.executable, "-m", "pdi", "get", name, "--archive", str(archive)],
                             capture_output=True, timeout=300, check=False)
        assert (got.returncode, got.stdout) == (0, octets)
    again = _pdi("verify", "--archive", str(archive))
    assert again.returncode == 3
    assert [line.split("\t")[:2] for line in again.stdout.splitlines()[:-1]] == [["missing", later_name]]
    assert _ok("audit", "--archive", str(archive)).count("\trepair\t") == 2


def test_repair_from_goes_with_a_verify_of_the_blobs_not_with_signatures(tmp_path: Path) -> None:
    done = _pdi("verify", "--signatures", "m.jws", "--repair-from", str(tmp_path), "--archive", str(tmp_path / "a"))
    assert done.returncode == 2
    assert "--repair-from go with a verify of the stored blobs" in done.stderr


def test_a_postgresql_blob_is_put_right_from_a_restored_database_and_its_urls_password_is_shown_nowhere(
    pg_cluster: TemporaryCluster, tmp_path: Path,
) -> None:
    url, drill = pg_cluster.create_database("repair_live"), pg_cluster.create_database("repair_drill")
    _ok("init", url)
    _ok("series", "add", S, "--archive", url)
    octets = os.urandom(100_000)
    (tmp_path / "scan.bin").write_bytes(octets)
    name = _ok("add", str(tmp_path / "scan.bin"), "-s", S, "--archive", url).strip()
    _ok("backup", str(tmp_path / "backup"), "--archive", url)
    _ok("restore", str(tmp_path / "backup"), "--to", drill)
    database = url.split("/")[3].split("?")[0]
    pg_cluster.sql("UPDATE blob_parts SET data = overlay(data placing '\\x00'::bytea from 5 for 1) WHERE n = 0",
                   database)
    assert _pdi("verify", "--archive", url).returncode == 3
    secret = drill.replace("postgresql://postgres@", "postgresql://postgres:hush-hush@")  # trust: not asked for
    done = _pdi("verify", "--repair-from", secret, "--archive", url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ["repaired", name, f"from {drill.replace('postgres@', 'postgres:***@')}, its SHA-256 checked"] in [
        line.split("\t") for line in done.stdout.splitlines()]
    assert "hush-hush" not in done.stdout + done.stderr + _ok("audit", "--archive", url)
    with Archive.open(url) as opened:
        assert opened.fixity_summary()[1].damaged == 0  # its latest check: the repair's, whole
    got = subprocess.run([sys.executable, "-m", "pdi", "get", name, "--archive", url], capture_output=True,
                         timeout=300, check=False)
    assert (got.returncode, got.stdout) == (0, octets)


def test_a_copy_that_is_no_archive_is_refused_before_the_check_saying_what_to_name(tmp_path: Path) -> None:
    # found trying it: a backup folder, or a folder not made yet, was said only after every blob was re-hashed, and
    # the second as if --archive were wrong
    archive = tmp_path / "archive"
    _ok("init", str(archive))
    _ok("series", "add", S, "--archive", str(archive))
    octets = os.urandom(70_000)
    (tmp_path / "scan.bin").write_bytes(octets)
    _ok("add", str(tmp_path / "scan.bin"), "-s", S, "--archive", str(archive))
    _ok("backup", str(tmp_path / "backup"), "--archive", str(archive))
    _blob(archive, octets).unlink()
    missing = _pdi("verify", "--repair-from", str(tmp_path / "drill"), "--archive", str(archive))
    assert (missing.returncode, missing.stdout) == (4, "")
    assert f"--repair-from {tmp_path / 'drill'}: no archive there" in missing.stderr
    assert f"pdi restore BACKUP --to {tmp_path / 'drill'}" in missing.stderr
    backup = _pdi("verify", "--repair-from", str(tmp_path / "backup"), "--archive", str(archive))
    assert (backup.returncode, backup.stdout) == (4, "")
    assert f"pdi restore {tmp_path / 'backup'} --to DIR" in backup.stderr
