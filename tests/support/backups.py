"""What a stranger who changed a backup's files does next, for the tests of a restore's deeper checks."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def reseal(backup: Path) -> None:
    """Write the SHA-256 of each file ``backup``'s marker (``pdi-backup.json``) records, as the files are now, into
    the marker: a stranger who rewrote a backup's catalog or dump can do as much, so that a restore's checks of what
    the catalog holds (its triggers, views, blobs, a dump's entries), not the marker's digests, are what meet it."""
    path = backup / "pdi-backup.json"
    marker = json.loads(path.read_text("utf-8"))
    marker["files"] = {name: hashlib.sha256((backup / name).read_bytes()).hexdigest() for name in marker["files"]}
    path.write_text(json.dumps(marker, indent=1) + "\n", "utf-8")
