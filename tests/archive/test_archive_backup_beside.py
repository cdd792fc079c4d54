"""What ``pdi backup`` of a directory archive leaves out, said at each backup: the files kept beside its catalog
that are no rows of it — the signing key (``pdi keys init``), the WACZ key (``pdi keys init --wacz``) and the
registry (``pdi registry``). docs/how-to/backup.md: a restore does not bring them back, so the operator keeps
copies of them; a backup that said nothing would lose the archive's key at the first ``rm -rf``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pdi.archive import Archive

S = "archives.gov.us"


def _pdi(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *args], capture_output=True, text=True, timeout=300,
                          check=False)


def test_a_backup_names_the_keys_it_does_not_hold(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    with Archive.init(str(archive)) as made:
        made.add_series(S)
        made.add(S, b"Hello, operator.\n", format="text")
    plain = _pdi("backup", str(tmp_path / "before-keys"), "--archive", str(archive))
    assert plain.returncode == 0 and plain.stderr == "", plain.stderr  # nothing beside the catalog: nothing said
    for args in (["keys", "init"], ["keys", "init", "--wacz"]):
        made_key = _pdi(*args, "--archive", str(archive))
        assert made_key.returncode == 0, made_key.stderr
    assert (archive / "signing-key.pem").is_file() and (archive / "wacz-key.pem").is_file()

    done = _pdi("backup", str(tmp_path / "backup"), "--archive", str(archive))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("backed up the sqlite archive to "), done.stdout
    said = done.stderr
    assert "signing-key.pem" in said and "wacz-key.pem" in said and "registry.json" not in said, said
    assert "not in the backup" in said, said
    # as said: the backup does not hold them, and a restore does not make them
    assert not (tmp_path / "backup" / "signing-key.pem").exists()
    restored = _pdi("restore", str(tmp_path / "backup"), "--to", str(tmp_path / "restored"))
    assert restored.returncode == 0, restored.stderr
    assert not (tmp_path / "restored" / "signing-key.pem").exists()


def test_the_files_a_backup_names_are_those_the_keys_and_the_registry_are_kept_in() -> None:
    from pdi.archive.backup_files import BESIDE
    from pdi.archive.signing_key import KEY_FILE, WACZ_KEY_FILE
    from pdi.federation.registry import REGISTRY_FILE

    assert set(BESIDE) == {KEY_FILE, WACZ_KEY_FILE, REGISTRY_FILE}
