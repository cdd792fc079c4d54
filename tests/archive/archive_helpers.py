"""Helpers shared by the archive tests (a module with a unique name, not conftest)."""

from __future__ import annotations

import datetime
import hashlib
from pathlib import Path

from pdi.archive import Archive

SRC = Path(__file__).resolve().parents[2] / "src"

#: The GIF signature and version (GIF89a specification, "Header"): enough for
#: libmagic to call the bytes a GIF; tests of naming add a tag to tell deposits apart.
GIF = b"GIF89a"

#: The PNG signature and the start of the IHDR chunk every PNG begins with
#: (PNG specification §5.2, §11.2.2): enough for libmagic to call the bytes a PNG.
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


class Clock:
    """A settable clock, so minting dates are known to the test."""

    def __init__(self, now: datetime.datetime) -> None:
        self.now = now

    def __call__(self) -> datetime.datetime:
        return self.now


def snapshot(archive: Archive) -> object:
    """Everything observable in an archive: series, representations, assertions, blobs."""
    store = archive.store
    return (
        store.list_series(),
        list(store.iter_representations()),
        store.assertions(),
        {name: store.read_blob(name) for name in sorted(store.blob_names())},
        store.schema_version(),
    )


def reseal(bag: Path) -> None:
    """Recompute a bag's manifests and Payload-Oxum, as a careless tool editing a bag would."""
    files = sorted(p for p in (bag / "data").rglob("*") if p.is_file())
    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(bag).as_posix()}\n"
             for p in files]
    (bag / "manifest-sha256.txt").write_text("".join(lines))
    octets = sum(p.stat().st_size for p in files)
    (bag / "bag-info.txt").write_text(f"Payload-Oxum: {octets}.{len(files)}\n")
    (bag / "tagmanifest-sha256.txt").unlink()


def before_serial_names(archive: Archive) -> list[str]:
    """The statements that take a catalog back from schema step 27 to 14 (step 27's column (its index was step 25's);
    step 26's table; step 25's columns and index (if step 27 left it); step 23 makes
    the index again, nothing to take back; step 22's table, step 21's column of ``documents``; SQLite's ``serial_names`` and its triggers; PostgreSQL's steps 15 and 16 add nothing), to run in a write
    transaction of ``archive``'s store.
    Step 16's tables stay ``WITHOUT ROWID``: the step makes them again alike when it runs again; the passages of
    steps 17 to 19 and 24 stay as they wrote them, which they leave alone when they run again (and PostgreSQL's
    index of steps 19 and 20, which they make again)."""
    store = archive.store
    names: list[str] = []
    if store.dialect == "sqlite":
        triggers = store._query(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN"
            " ('representations', 'versions', 'documents', 'withdrawals')")
        names = [f"DROP TRIGGER {name}" for name, in triggers] + ["DROP TABLE serial_names"]
    return ["ALTER TABLE series DROP COLUMN rules_changes", "DROP TABLE registries_seen",
            "DROP INDEX IF EXISTS access_changes_by_series", "ALTER TABLE access_changes DROP COLUMN series",
            "ALTER TABLE mirrors DROP COLUMN rules_seen",
            "DROP TABLE parse_refusals", "ALTER TABLE documents DROP COLUMN access_changed_at", *names,
            "DELETE FROM schema_migrations WHERE version IN (15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27)"]


def as_an_earlier_step_wrote(archive: Archive, body: str, length: int, step: int) -> None:
    """Put the catalog back as a schema step before ``step`` left it: every passage (of a one-passage text) holding
    ``body``, standing for the document's first ``length`` characters one for one, the index (SQLite's FTS5 table)
    kept in step, and the steps from ``step`` on not yet run (so that ``pdi init`` runs them again)."""
    import struct

    store = archive.store
    sqlite = hasattr(store, "_conn")
    runs = struct.pack("<iii", 0, 0, length)
    with store._write():
        for pid, was in store._query("SELECT id, body FROM search_passages"):
            if sqlite:
                store._query("INSERT INTO search_fts (search_fts, rowid, body) VALUES ('delete', ?, ?)",
                             (pid, was))
            store._query("UPDATE search_passages SET start = 0, body = ?, runs = ? WHERE id = ?",
                         (body, runs, pid))
            if sqlite:
                store._query("INSERT INTO search_fts (rowid, body) VALUES (?, ?)", (pid, body))
        store._query("DELETE FROM schema_migrations WHERE version >= ?", (step,))
