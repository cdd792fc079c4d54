"""The files kept beside a directory archive's catalog that are no rows of it — the signing key (``pdi keys
init``), the WACZ key (``pdi keys init --wacz``) and the registry — are backed up with it and restored with it
(docs/reference/backup.md): an archive restored after an ``rm -rf`` signs with the same key, which cannot be made
again, and which the mirrors that hold its public key check its manifests against."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pdi.archive import Archive
from pdi.errors import StoreError

S = "archives.gov.us"


def _pdi(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *args], capture_output=True, text=True, timeout=300,
                          check=False, env={**os.environ, "PDI_SIGNING_KEY": "", "PDI_WACZ_KEY": ""})


def _public_key(archive: Path) -> str:
    shown = _pdi("keys", "show", "--archive", str(archive))
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def test_a_restored_archive_has_its_keys_back_and_signs_as_before(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    with Archive.init(str(archive)) as made:
        made.add_series(S)
        made.add(S, b"Hello, operator.\n", format="text")
    plain = _pdi("backup", str(tmp_path / "before-keys"), "--archive", str(archive))
    assert plain.returncode == 0 and plain.stderr == "", plain.stderr
    assert "beside the catalog" not in plain.stdout  # nothing beside the catalog: none held
    assert {p.name for p in (tmp_path / "before-keys").iterdir()} == {"catalog.sqlite", "pdi-backup.json"}  # blobs: rows
    for args in (["keys", "init"], ["keys", "init", "--wacz"]):
        made_key = _pdi(*args, "--archive", str(archive))
        assert made_key.returncode == 0, made_key.stderr
    public = _public_key(archive)
    key_bytes = {name: (archive / name).read_bytes() for name in ("signing-key.pem", "wacz-key.pem")}

    done = _pdi("backup", str(tmp_path / "backup"), "--archive", str(archive))
    assert done.returncode == 0, done.stderr
    assert "with signing-key.pem, wacz-key.pem from beside the catalog" in done.stdout, done.stdout
    for name, data in key_bytes.items():
        held = tmp_path / "backup" / name
        assert held.read_bytes() == data
        assert stat.S_IMODE(held.stat().st_mode) == 0o600  # a private key, readable by its owner alone

    shutil.rmtree(archive)  # the mistake a backup is for
    restored = _pdi("restore", str(tmp_path / "backup"))
    assert restored.returncode == 0, restored.stderr
    assert "signing-key.pem, wacz-key.pem put back beside the catalog" in restored.stdout, restored.stdout
    for name, data in key_bytes.items():
        assert (archive / name).read_bytes() == data
        assert stat.S_IMODE((archive / name).stat().st_mode) == 0o600
    assert _public_key(archive) == public  # the same key signs: what mirrors hold still verifies
    verified = _pdi("verify", "--archive", str(archive))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_registry_removed_from_the_archive_is_removed_from_the_backup_at_the_next_run(tmp_path: Path) -> None:
    from pdi.archive.backup import backup

    archive = tmp_path / "archive"
    with Archive.init(str(archive)) as made:
        made.add_series(S)
    registry = archive / "registry.json"
    registry.write_text(json.dumps({"series": {}}))
    first = backup(str(archive), str(tmp_path / "backup"))
    assert first.beside == ("registry.json",)
    assert (tmp_path / "backup" / "registry.json").read_bytes() == registry.read_bytes()
    # no secret, but a file of the backup, its owner's (tests/archive/test_archive_backup_modes.py): 0640 where
    # the archive is shared with its group (its folder 0750, made under this process's umask), else 0600
    shared = stat.S_IMODE(archive.stat().st_mode) & 0o047 == 0o040
    assert stat.S_IMODE((tmp_path / "backup" / "registry.json").stat().st_mode) == (0o640 if shared else 0o600)
    registry.unlink()
    again = backup(str(archive), str(tmp_path / "backup"))
    assert again.beside == ()
    assert not (tmp_path / "backup" / "registry.json").exists()


def test_a_key_the_archive_no_longer_has_is_kept_in_the_backup_and_said(tmp_path: Path) -> None:
    """Found 2026-11-30: after ``rm signing-key.pem`` (by mistake), the next ``pdi backup`` into the same DEST
    removed the backup's copy, saying nothing, though a lost key cannot be made again. It is kept, and a warning
    names it and says what to do; a key the archive still has is backed up as before, quietly."""
    archive, backup = tmp_path / "archive", tmp_path / "backup"
    with Archive.init(str(archive)) as made:
        made.add_series(S)
    assert _pdi("keys", "init", "--archive", str(archive)).returncode == 0
    key = (archive / "signing-key.pem").read_bytes()
    for _ in range(2):  # a first backup, and one into the same DEST again
        done = _pdi("backup", str(backup), "--archive", str(archive))
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert "with signing-key.pem from beside the catalog" in done.stdout, done.stdout
        assert (backup / "signing-key.pem").read_bytes() == key

    (archive / "signing-key.pem").unlink()  # the mistake
    done = _pdi("backup", str(backup), "--archive", str(archive))
    assert done.returncode == 0, done.stderr
    assert "signing-key.pem" not in done.stdout, done.stdout  # not copied: the archive has none
    assert done.stderr == (
        f"pdi: warning: kept {backup / 'signing-key.pem'} in the backup, though the archive {archive} has no"
        " signing-key.pem (nor does $PDI_SIGNING_KEY name one): a lost key cannot be made again, and this may be its"
        f" last copy. If it was lost, put it back: copy it to {archive / 'signing-key.pem'} (mode 0600), or restore"
        f" the backup (pdi restore); if the key was retired on purpose, remove {backup / 'signing-key.pem'} by"
        " hand\n"), done.stderr
    assert (backup / "signing-key.pem").read_bytes() == key
    assert stat.S_IMODE((backup / "signing-key.pem").stat().st_mode) == 0o600

    shutil.copy2(backup / "signing-key.pem", archive / "signing-key.pem")  # put back, as the warning says
    done = _pdi("backup", str(backup), "--archive", str(archive))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "with signing-key.pem from beside the catalog" in done.stdout, done.stdout
    assert _pdi("manifest", "--series", S, "--archive", str(archive)).returncode == 0  # it signs again


@pytest.mark.parametrize(("name", "env"), [("signing-key.pem", "PDI_SIGNING_KEY"), ("wacz-key.pem", "PDI_WACZ_KEY")])
def test_a_key_kept_in_the_backup_is_said_unless_the_archive_keeps_the_same_one_where_its_variable_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, env: str) -> None:
    """The archive's key may be kept elsewhere, in the file ``$PDI_SIGNING_KEY`` (``$PDI_WACZ_KEY``) names, which a
    backup does not copy: the backup's copy of that same key is kept quietly; of another, or when the variable names
    no file, it is kept and said. A registry the archive no longer has is removed, as before."""
    from pdi.archive.backup import backup

    archive, dest = tmp_path / "archive", tmp_path / "backup"
    with Archive.init(str(archive)) as made:
        made.add_series(S)
    monkeypatch.delenv(env, raising=False)
    (archive / name).write_text("the archive's key\n")
    (archive / "registry.json").write_text(json.dumps({"series": {}}))
    assert backup(str(archive), str(dest)).beside == (name, "registry.json")
    (archive / name).rename(tmp_path / "moved.pem")
    (archive / "registry.json").unlink()
    monkeypatch.setenv(env, str(tmp_path / "moved.pem"))
    done = backup(str(archive), str(dest))
    assert (done.beside, done.warnings) == ((), ())  # the same key, kept where the variable names it
    assert (dest / name).read_text() == "the archive's key\n" and not (dest / "registry.json").exists()
    (tmp_path / "moved.pem").write_text("another key\n")
    done = backup(str(archive), str(dest))
    assert len(done.warnings) == 1 and done.warnings[0].startswith(
        f"kept {dest / name} in the backup, though the archive {archive} has no {name} and ${env} names"
        f" {tmp_path / 'moved.pem'}, another key (which a backup does not copy): a lost key"), done.warnings
    monkeypatch.setenv(env, str(tmp_path / "nothing.pem"))
    done = backup(str(archive), str(dest))
    assert len(done.warnings) == 1 and f"${env} names {tmp_path / 'nothing.pem'}, which holds none:" in \
        done.warnings[0], done.warnings
    assert (dest / name).read_text() == "the archive's key\n"


def test_a_new_key_of_the_archive_replaces_the_backups_and_says_so(tmp_path: Path) -> None:
    """A new key (``pdi keys init`` once the old one was moved away: it never writes over one) replaces the
    backup's, as a backup is the archive as it is now; not silently."""
    from pdi.archive.backup import backup

    archive, dest = tmp_path / "archive", tmp_path / "backup"
    with Archive.init(str(archive)) as made:
        made.add_series(S)
    (archive / "signing-key.pem").write_text("the old key\n")
    assert backup(str(archive), str(dest)).warnings == ()
    assert backup(str(archive), str(dest)).warnings == ()  # the same key again: nothing to say
    (archive / "signing-key.pem").write_text("a new key\n")
    done = backup(str(archive), str(dest))
    assert done.beside == ("signing-key.pem",) and (dest / "signing-key.pem").read_text() == "a new key\n"
    assert done.warnings == (f"replaced {dest / 'signing-key.pem'} in the backup with {archive / 'signing-key.pem'},"
                             " another key (made once the old one was moved away: a backup is the archive as it is"
                             " now): the old key is in this backup no more; keep the copy that was moved away",)


@pytest.mark.parametrize("kind", ["link", "folder", "large"])
def test_a_file_beside_the_catalog_that_is_no_plain_file_or_too_large_is_refused_and_nothing_is_replaced(
        tmp_path: Path, kind: str) -> None:
    from pdi.archive.backup import backup
    from pdi.archive.backup_files import MAX_BESIDE

    archive = tmp_path / "archive"
    with Archive.init(str(archive)) as made:
        made.add_series(S)
    before = backup(str(archive), str(tmp_path / "backup"))
    assert before.beside == ()
    marker = (tmp_path / "backup" / "pdi-backup.json").read_bytes()
    key = archive / "signing-key.pem"
    if kind == "link":
        (tmp_path / "elsewhere").write_text("not the archive's")
        key.symlink_to(tmp_path / "elsewhere")
    elif kind == "folder":
        key.mkdir()
    else:
        key.write_bytes(b"-" * (MAX_BESIDE + 1))
    with pytest.raises(StoreError, match=r"signing-key\.pem"):
        backup(str(archive), str(tmp_path / "backup"))
    assert not (tmp_path / "backup" / "signing-key.pem").exists()
    assert not (tmp_path / "backup" / "signing-key.pem.partial").exists()
    assert (tmp_path / "backup" / "pdi-backup.json").read_bytes() == marker  # the last backup stands


def test_the_files_a_backup_holds_are_those_the_keys_and_the_registry_are_kept_in() -> None:
    from pdi.archive.backup_files import BESIDE, KEYS
    from pdi.archive.signing_key import KEY_ENV, KEY_FILE, WACZ_KEY_ENV, WACZ_KEY_FILE
    from pdi.federation.registry import REGISTRY_FILE

    assert set(BESIDE) == {KEY_FILE, WACZ_KEY_FILE, REGISTRY_FILE}
    assert KEYS == {KEY_FILE: KEY_ENV, WACZ_KEY_FILE: WACZ_KEY_ENV}


def test_a_folder_holding_only_a_key_is_no_unfinished_backup_and_its_key_is_left_alone(tmp_path: Path) -> None:
    from pdi.archive.backup import backup
    from pdi.errors import ImmutabilityError

    archive = tmp_path / "archive"
    with Archive.init(str(archive)) as made:
        made.add_series(S)
    (archive / "signing-key.pem").write_text("the archive's key\n")
    someone = tmp_path / "someone"
    someone.mkdir()
    (someone / "signing-key.pem").write_text("someone else's key\n")
    with pytest.raises(ImmutabilityError, match="not a pdi backup"):
        backup(str(archive), str(someone))
    assert (someone / "signing-key.pem").read_text() == "someone else's key\n"
    assert {p.name for p in someone.iterdir()} == {"signing-key.pem"}
    # a first backup cut short after its catalog's copy and the key were written is taken up again
    left = tmp_path / "left"
    left.mkdir()
    (left / "catalog.sqlite.partial").write_bytes(b"cut short")
    (left / "signing-key.pem").write_text("an older copy\n")
    done = backup(str(archive), str(left))
    assert done.beside == ("signing-key.pem",)
    assert (left / "signing-key.pem").read_text() == "the archive's key\n"
    assert (left / "catalog.sqlite").is_file() and not (left / "catalog.sqlite.partial").exists()


def test_a_restore_into_a_folder_holding_a_key_is_refused_and_the_key_is_left_alone(tmp_path: Path) -> None:
    from pdi.archive.backup import backup
    from pdi.archive.restore import restore
    from pdi.errors import ImmutabilityError

    archive = tmp_path / "archive"
    with Archive.init(str(archive)) as made:
        made.add_series(S)
    (archive / "signing-key.pem").write_text("the archive's key\n")
    backup(str(archive), str(tmp_path / "backup"))
    place = tmp_path / "place"
    place.mkdir()
    (place / "signing-key.pem").write_text("another key\n")
    with pytest.raises(ImmutabilityError, match="not empty"):
        restore(tmp_path / "backup", str(place))
    assert {p.name for p in place.iterdir()} == {"signing-key.pem"}
    assert (place / "signing-key.pem").read_text() == "another key\n"
