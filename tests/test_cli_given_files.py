"""A command given a file that is not what it reads: a directory, a pipe. It says so, naming the file, with the exit
status of its kind, and never answers with a traceback nor as if the file were empty."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pdi.errors import NotFoundError, StoreError

SRC = Path(__file__).resolve().parents[1] / "src"


def pdi(*args: str, archive: Path) -> subprocess.CompletedProcess[str]:
    """``pdi ARGS`` on ``archive`` in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "pdi", *args], capture_output=True, text=True, check=False, timeout=120,
        env={**os.environ, "PYTHONPATH": str(SRC), "PDI_ARCHIVE": str(archive)},
    )


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    """An empty archive with its signing key."""
    location = tmp_path / "archive"
    assert pdi("init", str(location), archive=location).returncode == 0
    assert pdi("keys", "init", archive=location).returncode == 0
    return location


def test_verify_signatures_of_a_directory_says_it_cannot_read_it(archive: Path, tmp_path: Path) -> None:
    folder = tmp_path / "manifests"
    folder.mkdir()
    checked = pdi("verify", "--signatures", str(folder), archive=archive)
    assert "Traceback" not in checked.stderr
    assert checked.returncode == StoreError.exit_code, checked.stderr
    assert checked.stderr == f"pdi: storage error: cannot read the manifest file {folder}: Is a directory\n"


def test_mhtml_pack_of_a_directory_or_a_fifo_says_what_it_is(archive: Path, tmp_path: Path) -> None:
    """INDEX.html that is there but no regular file is not said to be missing: what it is is said."""
    folder = tmp_path / "site"
    folder.mkdir()
    fifo = tmp_path / "index.html"
    os.mkfifo(fifo)
    for given, what in ((folder, "a directory"), (fifo, "not a regular file")):
        packed = pdi("mhtml", "pack", str(given), "-o", str(tmp_path / "out.mht"), archive=archive)
        assert packed.returncode == NotFoundError.exit_code, packed.stderr
        assert packed.stderr == f"pdi: not found: {given} is {what}, not an HTML file to pack\n"
    missing = pdi("mhtml", "pack", str(tmp_path / "nope.html"), "-o", str(tmp_path / "out.mht"), archive=archive)
    assert missing.stderr == f"pdi: not found: no such file: {tmp_path / 'nope.html'}\n"
    assert not (tmp_path / "out.mht").exists()


def test_annotate_import_of_a_missing_file_is_not_found_as_every_other_file_is(archive: Path, tmp_path: Path) -> None:
    """Exit status 4 is a file that does not exist (docs: exit codes), for --import as for pdi add or pdi text."""
    missing = tmp_path / "nope.json"
    given = pdi("annotate", "--import", str(missing), archive=archive)
    assert given.returncode == NotFoundError.exit_code, given.stderr
    assert given.stderr == f"pdi: not found: no such file: {missing}\n"
    folder = tmp_path / "annotations"
    folder.mkdir()
    given = pdi("annotate", "--import", str(folder), archive=archive)
    assert given.returncode == 2, given.stderr  # a usage mistake, as pdi add DIR is
    assert f"{folder} is a directory" in given.stderr and "Traceback" not in given.stderr
