"""The modes the archive's rule gives what ``pdi init`` and ``pdi backup`` make (docs/reference/backup.md, "Who can
read an archive" and "Who can read a backup"), and the modes found: shared by the archive's and the backup's tests."""

from __future__ import annotations

import os
import stat
from pathlib import Path

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
