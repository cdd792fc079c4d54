"""Who can read an export (docs/reference/backup.md, "Who can read an export"): a bag or a WACZ may hold a private
series' documents, so ``pdi export`` makes it its owner's alone whatever the umask, folders 0700 and files 0600, as
``pdi backup`` makes a backup. Under the common umask 022 a bag was 0755 with files of 0644 and a WACZ 0644:
readable by every local user.

Each ``pdi export`` runs in a child process whose umask is 022 (``subprocess.run(umask=…)``); what is checked is
the permission bits ``os.lstat`` finds, no group or other bit set, not what pdi prints."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pdi.archive import Archive, Content
from pdi.errors import StoreError
from pdi.interop.warc import import_warc
from support.sgml_filing import FILING, add_dtd

S = "court.example.us"
SITE = Path(__file__).resolve().parents[1] / "data" / "warc" / "site.warc.gz"
ENV = {**os.environ, "PDI_SIGNING_KEY": "", "PDI_WACZ_KEY": "", "PDI_SGML_CATALOG": ""}


def _export(*args: str, code: int = 0) -> str:
    """``pdi export`` in a child whose umask is the common 022 (a file made without saying a mode is 0644): what it
    said on standard error, its exit status being ``code``."""
    done = subprocess.run([sys.executable, "-m", "pdi", "export", *args], capture_output=True, text=True,
                          timeout=300, check=False, umask=0o022, env=ENV)
    assert done.returncode == code, done.stdout + done.stderr
    return done.stderr


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


# Found in review, 2026-12-02: the partial file (``.OUT.pdi-partial``) was opened without O_EXCL or O_NOFOLLOW, a
# failed fchmod ignored, and the bag's staging folder (``.DIR.partial-PID``) kept if there: another local user who
# could write to the output's folder made the name first (a file of theirs, or a link) and read the export.

#: A user who is not the one exporting (nobody), to own what another local user made first.
OTHER = 65534


def test_a_link_named_as_the_partial_file_is_not_written_through(tmp_path: Path) -> None:
    root = _private_archive(tmp_path)
    out = tmp_path / "pages.wacz"
    theirs = tmp_path / "theirs"
    theirs.write_bytes(b"")
    theirs.chmod(0o666)
    (tmp_path / ".pages.wacz.pdi-partial").symlink_to(theirs)
    said = _export("--wacz", str(out), "--archive", str(root), code=8)  # StoreError's exit status
    assert ".pages.wacz.pdi-partial is there and is a link" in said
    assert theirs.read_bytes() == b""  # nothing written through the link
    assert not out.exists()
    assert (tmp_path / ".pages.wacz.pdi-partial").is_symlink()  # not removed: not the exporter's to remove


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file of another user needs root")
def test_another_users_partial_file_is_refused_not_written(tmp_path: Path) -> None:
    root = _private_archive(tmp_path)
    out = tmp_path / "pages.wacz"
    theirs = tmp_path / ".pages.wacz.pdi-partial"
    theirs.write_bytes(b"")
    theirs.chmod(0o666)
    os.chown(theirs, OTHER, OTHER)
    said = _export("--wacz", str(out), "--archive", str(root), code=8)
    assert f"is there and is another user's file (uid {OTHER})" in said
    assert theirs.read_bytes() == b"" and stat.S_IMODE(theirs.stat().st_mode) == 0o666
    assert not out.exists()
    shutil.rmtree(root)  # as the other user removes theirs: the export then made whole, and its owner's alone
    theirs.unlink()
    root = _private_archive(tmp_path)
    _export("--wacz", str(out), "--archive", str(root))
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and out.stat().st_uid == os.geteuid()
    with zipfile.ZipFile(out) as wacz:
        assert wacz.testzip() is None and "datapackage.json" in wacz.namelist()


def _staging(bag: Path) -> Path:
    """The staging folder an export in this process makes beside ``bag`` (``.NAME.partial-PID``)."""
    return bag.with_name(f".{bag.name}.partial-{os.getpid()}")


def test_a_link_named_as_the_bags_staging_folder_is_refused(tmp_path: Path) -> None:
    root = _private_archive(tmp_path)
    bag = tmp_path / "bag"
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o777)
    _staging(bag).symlink_to(theirs)
    with Archive.open(root) as archive, pytest.raises(StoreError, match=r"partial-\d+ is there and is a link"):
        archive.export_bag(bag)
    assert list(theirs.iterdir()) == []  # nothing written into it
    assert _staging(bag).is_symlink() and not bag.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder of another user needs root")
def test_another_users_staging_folder_is_refused(tmp_path: Path) -> None:
    root = _private_archive(tmp_path)
    bag = tmp_path / "bag"
    _staging(bag).mkdir(mode=0o777)
    os.chown(_staging(bag), OTHER, OTHER)
    with Archive.open(root) as archive, pytest.raises(StoreError, match=f"another user's folder \\(uid {OTHER}\\)"):
        archive.export_bag(bag)
    assert list(_staging(bag).iterdir()) == [] and not bag.exists()


def test_a_staging_folder_a_killed_export_left_is_replaced_by_one_of_the_owners_alone(tmp_path: Path) -> None:
    root = _private_archive(tmp_path)
    bag = tmp_path / "bag"
    _staging(bag).mkdir(mode=0o777)
    _staging(bag).chmod(0o777)
    (_staging(bag) / "half a bag").write_bytes(b"")
    with Archive.open(root) as archive:
        archive.export_bag(bag)
    assert not _staging(bag).exists()
    assert not (bag / "half a bag").exists() and (bag / "tagmanifest-sha256.txt").is_file()
    assert stat.S_IMODE(bag.stat().st_mode) == 0o700 and _open_to_others(bag) == {}
