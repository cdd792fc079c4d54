"""Who can read an export (docs/reference/backup.md, "Who can read an export"): a bag or a WACZ may hold a private
series' documents, so ``pdi export`` makes it its owner's alone whatever the umask, folders 0700 and files 0600, as
``pdi backup`` makes a backup. Under the common umask 022 a bag was 0755 with files of 0644 and a WACZ 0644:
readable by every local user.

Each ``pdi export`` runs in a child process whose umask is 022 (``subprocess.run(umask=…)``); what is checked is
the permission bits ``os.lstat`` finds, no group or other bit set, not what pdi prints."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

from pdi.archive import Archive, Content
from pdi.interop.warc import import_warc
from support.sgml_filing import FILING, add_dtd

S = "court.example.us"
SITE = Path(__file__).resolve().parents[1] / "data" / "warc" / "site.warc.gz"
ENV = {**os.environ, "PDI_SIGNING_KEY": "", "PDI_WACZ_KEY": "", "PDI_SGML_CATALOG": ""}


def _export(*args: str) -> None:
    """``pdi export`` in a child whose umask is the common 022 (a file made without saying a mode is 0644)."""
    done = subprocess.run([sys.executable, "-m", "pdi", "export", *args], capture_output=True, text=True,
                          timeout=300, check=False, umask=0o022, env=ENV)
    assert done.returncode == 0, done.stdout + done.stderr


def _private_archive(tmp_path: Path) -> Path:
    """An archive whose one series is private, holding a motion (a row of the catalog), a blob file of more than
    64 KiB, an SGML filing parsed with its DTD (so the bag has ``data/element-indexes/``) and a recorded site."""
    root = tmp_path / "archive"
    with Archive.init(root) as archive:
        archive.add_series(S)
    add_dtd(tmp_path, str(root))
    with Archive.open(root) as archive:
        archive.deposit(S, [Content(b"The motion is granted.\n", "text")])
        archive.deposit(S, [Content(os.urandom(100_000), "octet-stream")])
        archive.deposit(S, [Content(FILING.encode(), "sgml")])
        import_warc(archive, SITE, S)
        archive.set_series_access(S, "private")
    return root


def _open_to_others(root: Path) -> dict[str, str]:
    """Each path at or under ``root`` whose group or others have any permission, with its mode."""
    return {str(path): oct(stat.S_IMODE(os.lstat(path).st_mode))
            for path in (root, *root.rglob("*")) if os.lstat(path).st_mode & 0o077}


def test_a_bag_exported_under_umask_022_is_its_owners_alone(tmp_path: Path) -> None:
    root = _private_archive(tmp_path)
    bag = tmp_path / "new" / "bag"
    _export(str(bag), "--archive", str(root))
    objects = list((bag / "data" / "objects").iterdir())
    assert b"The motion is granted.\n" in [path.read_bytes() for path in objects]  # the private document is in it
    assert len(list((bag / "data" / "element-indexes").iterdir())) == 1
    assert (bag / "bagit.txt").is_file() and (bag / "tagmanifest-sha256.txt").is_file()
    assert _open_to_others(bag) == {}
    assert stat.S_IMODE(bag.stat().st_mode) == 0o700
    assert {stat.S_IMODE(path.stat().st_mode) for path in bag.rglob("*") if path.is_file()} == {0o600}
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o755  # above the bag: the umask's, as mkdir -p


def test_a_bag_into_an_empty_folder_there_already_is_its_owners_alone(tmp_path: Path) -> None:
    root = _private_archive(tmp_path)
    bag = tmp_path / "bag"
    bag.mkdir(mode=0o755)
    bag.chmod(0o755)
    _export(str(bag), "--series", S, "--archive", str(root))
    assert (bag / "data" / "catalog.json").is_file()
    assert _open_to_others(bag) == {}


def test_a_wacz_exported_under_umask_022_is_its_owners_alone(tmp_path: Path) -> None:
    root = _private_archive(tmp_path)
    out = tmp_path / "pages.wacz"
    _export("--wacz", str(out), "--archive", str(root))
    with zipfile.ZipFile(out) as wacz:
        assert "datapackage.json" in wacz.namelist()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".")] == []  # no work folder left


def test_a_wacz_written_over_a_partial_file_a_killed_export_left_is_its_owners_alone(tmp_path: Path) -> None:
    root = _private_archive(tmp_path)
    out = tmp_path / "pages.wacz"
    left = tmp_path / ".pages.wacz.pdi-partial"  # the name pdi.files.written_whole writes beside OUT
    left.write_bytes(b"half a WACZ")
    left.chmod(0o644)
    _export("--wacz", str(out), "--archive", str(root))
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert zipfile.is_zipfile(out)
