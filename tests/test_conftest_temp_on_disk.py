"""The tests' temporary folders are on a file system that writes its pages back, whatever ``/tmp`` is.

``pdi serve``'s fixity memo remembers nothing of a blob file on tmpfs (:mod:`pdi.archive.blobs.memo`), and Debian
13 mounts ``/tmp`` as a tmpfs: there, the memo's own tests would find it holding nothing. tests/conftest.py puts
the run's folders in ``/var/tmp`` then. Run here with ``TMPDIR`` on a tmpfs (``/dev/shm``), a memo test passes, its
``tmp_path`` on disk, and the folder is removed after the run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from pdi.archive.blobs.memo import written_back

SHM = Path("/dev/shm")
ON_DISK_TEMP = Path("/var/tmp")  # tests/conftest.py's
TESTS = Path(__file__).resolve().parent


def _written_back(folder: Path) -> bool:
    fd = os.open(folder, os.O_RDONLY)
    try:
        return written_back(fd)
    finally:
        os.close(fd)


def test_a_run_whose_tmpdir_is_a_tmpfs_keeps_its_folders_on_disk_and_its_memo_tests_pass() -> None:
    assert SHM.is_dir() and not _written_back(SHM), "this test needs /dev/shm to be a tmpfs, as Linux mounts it"
    assert _written_back(ON_DISK_TEMP)
    before = set(ON_DISK_TEMP.glob("pdi-tests-*"))
    with tempfile.TemporaryDirectory(dir=SHM) as shm:
        probe = Path(shm) / "where.txt"
        env = {**os.environ, "TMPDIR": shm, "TEMP_ON_DISK_PROBE": str(probe)}
        env.pop("PYTEST_XDIST_WORKER", None)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
             str(TESTS / "archive" / "test_archive_fixity_memo.py")
             + "::test_a_read_remembers_the_chunks_it_verified_and_a_later_read_trusts_them",
             str(TESTS / "test_conftest_temp_on_disk.py") + "::test_probe_where_tmp_path_is"],
            cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=300,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        where = Path(probe.read_text())
    assert where.is_relative_to(ON_DISK_TEMP), where
    assert not where.exists()  # the run passed: its folder removed
    assert set(ON_DISK_TEMP.glob("pdi-tests-*")) <= before


def test_probe_where_tmp_path_is(tmp_path: Path) -> None:
    """Run by the test above in a child pytest: writes where its ``tmp_path`` is (here, anything)."""
    probe = os.environ.get("TEMP_ON_DISK_PROBE")
    assert _written_back(tmp_path) or probe is None
    if probe:
        Path(probe).write_text(str(tmp_path))
