"""``pdi capture --browser`` run as root with ``TMPDIR`` a folder only root may write in.

As root, Chromium runs sandboxed as an unprivileged user (``setpriv``), with its profile in a folder of
``$TMPDIR`` made for the capture and given to that user. Chromium also writes temporary files of its own in
``$TMPDIR``; where that was a folder only root may write in (mode 0755, as a service's own ``TMPDIR`` often is),
it died at start and the capture said only "Chromium closed the DevTools pipe (did it crash?)" (exit 4). Its
temporary files now go in its profile folder: run as a user runs it (a child process), the capture deposits the
page, and nothing of Chromium's is left in ``TMPDIR`` after it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from one_page import Handler  # noqa: F401 - the page the server fixture serves

from pdi.archive import Archive

S = "web.example.us"


@pytest.fixture
def roots_own_folder() -> Iterator[Path]:
    """A folder root owns with mode 0755 (others may pass through, not write), in /tmp: pytest's own folders are
    0700, which the sandboxed Chromium could not even pass through to reach its profile."""
    assert os.geteuid() == 0, "the tests run as root (scripts/test), as a service's capture may"
    folder = Path(tempfile.mkdtemp(prefix="pdi-test-roots-tmpdir-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_capture_as_root_with_tmpdir_only_root_may_write_in_deposits_the_page(
    server: str, tmp_path: Path, roots_own_folder: Path
) -> None:
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
    env = dict(os.environ, PDI_ARCHIVE=str(location), TMPDIR=str(roots_own_folder))  # PYTHONPATH: the pdi under test
    done = subprocess.run([sys.executable, "-m", "pdi", "capture", f"{server}/page.html", "-s", S, "--browser",
                           "--allow-private"], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"urn:pdi://{S}/") and "127%2E0%2E0%2E1" in done.stdout, done.stdout
    with Archive.open(location) as archive:
        assert len(list(archive.iter_names())) == 1
    assert list(roots_own_folder.iterdir()) == []  # the profile, with Chromium's temporary files, removed
