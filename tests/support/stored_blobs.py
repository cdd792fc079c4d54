"""Where an archive keeps a blob's octets, for the tests that damage, delete or look for them there.

A blob of at most 64 KiB that a deposit brings is a row of the catalog's
``blobs`` table (``pdi.archive.blobs.inline``), in a SQLite catalog as in a
PostgreSQL one; a larger blob, or one an import brought, is a file under
``blobs/`` beside a SQLite catalog (``blobs/<first two hex digits>/<sha256>``)
or chunk rows in PostgreSQL. These helpers reach the octets wherever they are
with plain ``sqlite3`` and file operations on a SQLite archive's directory (not
pdi's own reading code), and with the catalog's own statements on PostgreSQL,
so that a test that damages a blob sees ``pdi verify`` and a read catch it,
wherever it lives.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from pdi.archive import Archive
from pdi.archive.postgres import PostgresStore
from pdi.archive.sqlite import SQLiteStore

CATALOG = "catalog.sqlite"


@contextlib.contextmanager
def _catalog(location: str | os.PathLike[str]) -> Iterator[sqlite3.Connection]:
    """A connection of its own to a SQLite archive's catalog (each statement committed), closed after."""
    conn = sqlite3.connect(Path(location) / CATALOG, isolation_level=None, timeout=30)
    try:
        yield conn
    finally:
        conn.close()


def catalog_number(location: str | os.PathLike[str], sql: str) -> int:
    """The one number ``sql`` reads from a SQLite archive's catalog, opened read-only (``mode=ro``: nothing is
    migrated or written, whatever schema it is at)."""
    conn = sqlite3.connect(f"file:{Path(location) / CATALOG}?mode=ro", uri=True)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def blob_file(location: str | os.PathLike[str], sha256: str) -> Path:
    """Where a SQLite archive's blob file of that name is (or would be)."""
    return Path(location) / "blobs" / sha256[:2] / sha256


def blob_row(location: str | os.PathLike[str], sha256: str) -> bytes | None:
    """The octets of a SQLite archive's small blob row of that name, or ``None``."""
    with _catalog(location) as conn:
        row = conn.execute("SELECT data FROM blobs WHERE sha256 = ?", (sha256,)).fetchone()
    return None if row is None else bytes(row[0])


def blob_is_stored(location: str | os.PathLike[str], sha256: str) -> bool:
    """Whether a SQLite archive keeps the blob's octets, as a row or as a file."""
    return blob_row(location, sha256) is not None or blob_file(location, sha256).exists()


def stored_blob_names(location: str | os.PathLike[str]) -> set[str]:
    """Every blob a SQLite archive keeps, rows and files."""
    with _catalog(location) as conn:
        rows = {str(r[0]) for r in conn.execute("SELECT sha256 FROM blobs")}
    files = {p.name for p in (Path(location) / "blobs").rglob("*") if p.is_file()}
    return rows | files


def rewrite_blob(location: str | os.PathLike[str], sha256: str, data: bytes) -> None:
    """Put ``data`` where a SQLite archive keeps the blob (its row, or its file): what bit rot would do."""
    found = False
    with _catalog(location) as conn:
        found = conn.execute("UPDATE blobs SET data = ? WHERE sha256 = ?", (data, sha256)).rowcount > 0
    path = blob_file(location, sha256)
    if path.exists():
        os.chmod(path, 0o644)
        path.write_bytes(data)
        found = True
    assert found, f"no blob {sha256} in {location}"


def flip_octet(location: str | os.PathLike[str], sha256: str, offset: int) -> None:
    """Flip the low bit of one octet of a blob where a SQLite archive keeps it."""
    row = blob_row(location, sha256)
    path = blob_file(location, sha256)
    data = row if row is not None else path.read_bytes()
    rewrite_blob(location, sha256, data[:offset] + bytes([data[offset] ^ 1]) + data[offset + 1 :])


def rewrite_every_blob(location: str | os.PathLike[str], data: bytes) -> int:
    """Put ``data`` in place of every blob a SQLite archive keeps; how many there were."""
    names = stored_blob_names(location)
    for name in names:
        rewrite_blob(location, name, data)
    return len(names)


def delete_blob(location: str | os.PathLike[str], sha256: str) -> None:
    """Take a blob's octets away from a SQLite archive, wherever they are (as a lost disk block would)."""
    with _catalog(location) as conn:
        found = conn.execute("DELETE FROM blobs WHERE sha256 = ?", (sha256,)).rowcount > 0
    path = blob_file(location, sha256)
    if path.exists():
        path.unlink()
        found = True
    assert found, f"no blob {sha256} in {location}"


def damage(archive: Archive, sha256: str, how: str) -> None:
    """``delete`` a blob's octets, or ``alter`` them (to ``tampered``), in a SQLite or PostgreSQL archive."""
    store = archive.store
    if isinstance(store, SQLiteStore):
        if how == "delete":
            delete_blob(store.root, sha256)
        else:
            rewrite_blob(store.root, sha256, b"tampered")
        return
    assert isinstance(store, PostgresStore)
    if how == "delete":
        store._query("DELETE FROM blobs WHERE sha256 = ?", (sha256,))
    else:
        store._query("UPDATE blobs SET data = ? WHERE sha256 = ?", (b"tampered", sha256))


def delete_every_blob(location: str | os.PathLike[str]) -> int:
    """Take away every blob a SQLite archive keeps, rows and files; how many there were."""
    names = stored_blob_names(location)
    for name in names:
        delete_blob(location, name)
    return len(names)
