"""The modes the archive's rule gives what ``pdi init`` and ``pdi backup`` make (docs/reference/backup.md, "Who can
read an archive" and "Who can read a backup"), and the modes found: shared by the archive's and the backup's tests."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

#: The key files: 0600 whatever else the rule says.
KEYS = ("signing-key.pem", "wacz-key.pem")


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def expected(root: Path, folder: int, file: int) -> dict[str, int]:
    """What the rule gives each path under ``root``: a folder ``folder``; a key 0600; a blob file read-only to
    everyone, 0444 (the archive's own file when a backup hard-links it: its folder keeps it); a DTD ``file``
    read-only; every other file ``file``."""
    wanted = {}
    for path in root.rglob("*"):
        name = str(path.relative_to(root))
        if path.is_dir():
            wanted[name] = folder
        elif path.name in KEYS:
            wanted[name] = 0o600
        elif name.startswith("blobs/"):
            wanted[name] = 0o444
        elif name.endswith(".dtd"):
            wanted[name] = file & ~0o222
        else:
            wanted[name] = file
    return wanted


def found(root: Path) -> dict[str, int]:
    return {str(path.relative_to(root)): mode(path) for path in root.rglob("*")}


@contextmanager
def open_place(prefix: str) -> Iterator[Path]:
    """A folder under /tmp every local user may enter (pytest's own are 0700, which would hide any archive in
    them), removed at the end; for tests that run pdi or a tool as the user ``nobody``, which only root may do. CI
    runs as root (.ci/run), so there these always run; a developer's own account skips them, and the modes the
    other tests check by ``os.stat`` say the same rule."""
    if os.geteuid() != 0:
        assert not os.environ.get("CI") and not os.environ.get("PDI_TEST_INSTALLED"), \
            "CI must run as root: these tests run commands as the user nobody"
        pytest.skip("only root may run a command as another user: the modes the other tests check say it")
    place = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    place.chmod(0o755)
    try:
        yield place
    finally:
        shutil.rmtree(place)
