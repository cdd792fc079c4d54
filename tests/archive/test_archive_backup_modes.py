"""Who can read a backup (docs/reference/backup.md, "Who can read a backup"): a backup holds every private and
embargoed document, the catalog's metadata and the archive's keys, so it is its owner's alone whatever the umask:
the folders pdi makes for it 0700, its files 0600, a key file 0600 always. Only an archive deliberately shared
with its group (its folder group-readable and closed to others, 0750) gives that group read access to its backup
too: folders 0750, files 0640, keys still 0600. Under the common umask 022, a backup was 0755 with a catalog of
0644: readable by every local user. A restore makes the restored archive's key files 0600 likewise.

Each ``pdi`` runs in a child process whose umask is set to 022 (``subprocess.run(umask=…)``), and the modes
expected are those the rule above gives, not what the code prints."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pdi.archive import Archive, Content
from support.modes import KEYS, expected, mode
from support.modes import found as modes_found
from support.pgcluster import TemporaryCluster

S = "backup.example.us"


def _pdi(*args: str) -> subprocess.CompletedProcess[str]:
    """``pdi`` in a child whose umask is the common 022 (a file it makes without saying a mode is 0644)."""
    done = subprocess.run([sys.executable, "-m", "pdi", *args], capture_output=True, text=True, timeout=300,
                          check=False, umask=0o022,
                          env={**os.environ, "PDI_SIGNING_KEY": "", "PDI_WACZ_KEY": "", "PDI_SGML_CATALOG": ""})
    assert done.returncode == 0, done.stdout + done.stderr
    return done



def _archive(root: Path) -> str:
    """A directory archive made under umask 022 (its folder 0700, tests/archive/test_archive_modes.py), with a blob file, a row, both keys, a registry
    and an SGML folder: everything a backup copies. The SHA-256 of its blob file."""
    octets = os.urandom(120_000)  # more than 64 KiB: a blob file, not a row of the catalog
    subprocess.run([sys.executable, "-c", f"import os; os.umask(0o022); from pdi.archive import Archive;"
                    f" Archive.init({str(root)!r}).close()"], check=True, timeout=300)
    with Archive.open(str(root)) as archive:
        archive.add_series(S)
        archive.deposit(S, [Content(octets, "octet-stream")])
        archive.deposit(S, [Content(b"a row of the catalog\n", "octet-stream")])
    _pdi("keys", "init", "--archive", str(root))
    _pdi("keys", "init", "--wacz", "--archive", str(root))
    (root / "registry.json").write_text('{"series": {}}\n')
    (root / "sgml").mkdir()
    (root / "sgml" / "catalog").write_text('PUBLIC "-//Example//DTD Filing//EN" "filing.dtd"\n')
    (root / "sgml" / "filing.dtd").write_text("<!ELEMENT filing - - (#PCDATA)>\n")
    return hashlib.sha256(octets).hexdigest()




@pytest.mark.parametrize("copy", [False, True], ids=["linked", "copied"])
def test_a_backup_under_umask_022_is_its_owners_alone(tmp_path: Path, copy: bool) -> None:
    root, dest = tmp_path / "archive", tmp_path / "new" / "backup"
    digest = _archive(root)
    root.chmod(0o755)  # as a pdi before 0.3 made it under umask 022: open to all, which says no one chose to share it
    _pdi("backup", str(dest), "--archive", str(root), *(["--copy"] if copy else []))
    assert mode(dest) == 0o700
    found = modes_found(dest)
    assert f"blobs/{digest[:2]}/{digest}" in found and "catalog.sqlite" in found and "sgml/filing.dtd" in found
    assert found == expected(dest, 0o700, 0o600)
    assert mode(tmp_path / "new") == 0o755  # a folder above DEST is no backup's: the umask's, as mkdir -p makes it


def test_a_backup_of_an_archive_shared_with_its_group_is_readable_by_that_group(tmp_path: Path) -> None:
    root, dest = tmp_path / "archive", tmp_path / "backup"
    _archive(root)
    root.chmod(0o750)  # deliberately shared with its group, closed to others (StateDirectoryMode=0750)
    _pdi("backup", str(dest), "--archive", str(root))
    assert mode(dest) == 0o750  # not the umask's 0755, and not 0700 either
    assert modes_found(dest) == expected(dest, 0o750, 0o640)
    assert mode(dest / "signing-key.pem") == 0o600  # a key is its owner's alone, shared or not


def test_a_backup_into_an_earlier_backup_closes_its_folders_and_keeps_dests_own_mode(tmp_path: Path) -> None:
    """A DEST an older pdi backed up into under umask 022 (0755 folders, a 0644 catalog and marker): the next
    backup writes its files 0600 and closes its folders; DEST itself keeps the mode whoever made it gave it."""
    root, dest = tmp_path / "archive", tmp_path / "backup"
    _archive(root)
    _pdi("backup", str(dest), "--archive", str(root))
    for path in [dest, *dest.rglob("*")]:  # as an older pdi left it
        if path.is_dir():
            path.chmod(0o755)
        elif path.name in ("catalog.sqlite", "pdi-backup.json", "registry.json") or path.parent.name == "sgml":
            path.chmod(0o644)
    old = {path.name for path in (dest / "blobs").iterdir()}
    new = os.urandom(100_000)
    while hashlib.sha256(new).hexdigest()[:2] in old:  # a new blob file in a folder of blobs/ not there yet
        new = os.urandom(100_000)
    with Archive.open(str(root)) as archive:
        archive.deposit(S, [Content(new, "octet-stream")])
    _pdi("backup", str(dest), "--archive", str(root))
    assert mode(dest) == 0o755
    for name in ("blobs", "sgml", "catalog.sqlite", "pdi-backup.json", "registry.json"):
        assert mode(dest / name) == (0o700 if (dest / name).is_dir() else 0o600), name
    assert mode(dest / "blobs" / hashlib.sha256(new).hexdigest()[:2]) == 0o700


def test_a_restore_under_umask_022_makes_the_keys_0600(tmp_path: Path) -> None:
    root, dest, again = tmp_path / "archive", tmp_path / "backup", tmp_path / "restored"
    _archive(root)
    _pdi("backup", str(dest), "--archive", str(root))
    _pdi("restore", str(dest), "--to", str(again))
    for name in KEYS:
        assert (again / name).read_bytes() == (root / name).read_bytes()
        assert mode(again / name) == 0o600
    _pdi("verify", "--archive", str(again))


def test_a_postgresql_backup_under_umask_022_is_its_owners_alone(pg_cluster: TemporaryCluster,
                                                                 tmp_path: Path) -> None:
    location = pg_cluster.create_schema("pdi_backup_modes")
    with Archive.init(location) as archive:
        archive.add_series(S)
        archive.deposit(S, [Content(b"a private document\n", "octet-stream")])
    dest = tmp_path / "backup"
    _pdi("backup", str(dest), "--archive", location)
    assert modes_found(dest) == {"catalog.dump": 0o600, "pdi-backup.json": 0o600}
    assert mode(dest) == 0o700
