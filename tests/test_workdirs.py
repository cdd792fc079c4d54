"""Work folders a killed process leaves are removed by the next command that makes one (pdi._workdirs)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pdi import _workdirs
from pdi._workdirs import GRACE, LOCK, WorkFolder, sweep

#: A process that makes a work folder in argv[1], says where, and waits (to be killed or to end).
HOLDER = """
import sys, time
from pdi._workdirs import WorkFolder
folder = WorkFolder("pdi-test-", sys.argv[1])
print(folder.name, flush=True)
time.sleep(600)
"""


def _holder(parent: Path) -> tuple[subprocess.Popen[str], Path]:
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(parent)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    with child.stdout:
        return child, Path(child.stdout.readline().strip())


def _age(folder: Path, seconds: float) -> None:
    """The folder's lock file made ``seconds`` ago (as though that much time had passed since)."""
    then = time.time() - seconds
    os.utime(folder / LOCK, (then, then))


def test_a_folder_left_by_a_killed_process_goes_with_the_next_one_made(tmp_path: Path) -> None:
    child, left = _holder(tmp_path)
    (left / "spooled.warc").write_bytes(b"x" * 100_000)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert left.is_dir()  # nothing of the killed process removed it
    _age(left, GRACE + 5)
    with WorkFolder("pdi-test-", str(tmp_path)) as made:
        assert not left.exists()
        assert Path(made).is_dir() and Path(made).name.startswith("pdi-test-")
        assert (Path(made) / LOCK).exists()
    assert list(tmp_path.iterdir()) == []  # its own, removed as it ends


def test_a_folder_in_use_is_left_however_old(tmp_path: Path) -> None:
    child, used = _holder(tmp_path)
    try:
        _age(used, 3600)
        with WorkFolder("pdi-test-", str(tmp_path)):
            assert used.is_dir()
        assert sweep(str(tmp_path), "pdi-test-", grace=0) == []
        assert used.is_dir()
    finally:
        child.kill()
        child.wait()
    assert sweep(str(tmp_path), "pdi-test-", grace=0) == [used.name]  # its process gone: swept
    assert not used.exists()


def test_a_folder_unlocked_within_the_grace_is_left(tmp_path: Path) -> None:
    # between making a folder and locking its file another sweep sees it unlocked: the grace covers that moment
    child, fresh = _holder(tmp_path)
    child.kill()
    child.wait()
    _age(fresh, GRACE - 10)
    assert sweep(str(tmp_path), "pdi-test-") == []
    assert fresh.is_dir()


def test_only_the_folders_this_mechanism_made_are_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = time.time() - 3600
    no_lock = tmp_path / "pdi-test-nolock"  # another program's, or an earlier pdi's: no lock file
    no_lock.mkdir()
    (no_lock / "data").write_bytes(b"kept")
    other_prefix = tmp_path / "other-abc"
    other_prefix.mkdir()
    (other_prefix / LOCK).touch()
    os.utime(other_prefix / LOCK, (old, old))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / LOCK).touch()
    os.utime(elsewhere / LOCK, (old, old))
    (tmp_path / "pdi-test-link").symlink_to(elsewhere)  # a link is never followed to be removed
    (tmp_path / "pdi-test-file").write_bytes(b"a file")
    link_lock = tmp_path / "pdi-test-linklock"  # its lock file a link to a lock elsewhere: not opened
    link_lock.mkdir()
    (link_lock / LOCK).symlink_to(elsewhere / LOCK)
    assert sweep(str(tmp_path), "pdi-test-", grace=0) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "elsewhere", "other-abc", "pdi-test-file", "pdi-test-link", "pdi-test-linklock", "pdi-test-nolock"]
    assert (no_lock / "data").read_bytes() == b"kept" and (elsewhere / LOCK).exists()
    # a lock file of another user (as this process sees it): left, even when this user could remove it
    child, theirs = _holder(tmp_path)
    child.kill()
    child.wait()
    _age(theirs, 3600)
    monkeypatch.setattr(_workdirs.os, "geteuid", lambda: os.getuid() + 1)
    assert sweep(str(tmp_path), "pdi-test-", grace=0) == []
    monkeypatch.undo()
    assert sweep(str(tmp_path), "pdi-test-", grace=0) == [theirs.name]


def test_a_parent_that_cannot_be_read_stops_no_command(tmp_path: Path) -> None:
    assert sweep(str(tmp_path / "missing"), "pdi-test-") == []
    with pytest.raises(FileNotFoundError):  # making the folder there fails as mkdtemp does, nothing left
        WorkFolder("pdi-test-", str(tmp_path / "missing"))


def test_cleanup_is_idempotent_and_lets_the_lock_go(tmp_path: Path) -> None:
    folder = WorkFolder("pdi-test-", str(tmp_path))
    (Path(folder.name) / "sub").mkdir()
    (Path(folder.name) / "sub" / "f").write_bytes(b"1")
    folder.cleanup()
    folder.cleanup()
    assert list(tmp_path.iterdir()) == []
