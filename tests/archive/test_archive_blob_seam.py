"""The blob seam: a catalog holds a blob store, and refuses one it cannot hold (pdi.archive.blobs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pdi.archive.blobs.files import FileBlobs
from pdi.archive.blobs.large_objects import LargeObjects
from pdi.archive.sqlite import CATALOG, SQLiteStore
from pdi.errors import UnsupportedError


def test_a_sqlite_catalog_refuses_blobs_kept_in_postgresql(tmp_path: Path) -> None:
    # the blobs' tables are a PostgreSQL catalog's own: no connection is even tried
    with pytest.raises(UnsupportedError, match="cannot hold PostgreSQL blobs"):
        SQLiteStore(tmp_path / "archive", create=True, blobs=LargeObjects("postgresql://nowhere.invalid/none"))


def test_a_sqlite_catalog_holds_its_files_by_default(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "archive", create=True)
    try:
        assert isinstance(store.blobs, FileBlobs)
        assert store.location == str(tmp_path / "archive")
        assert (tmp_path / "archive" / CATALOG).exists() and (tmp_path / "archive" / "blobs").is_dir()
    finally:
        store.close()
