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


def test_each_part_of_the_catalog_imports_no_other_part() -> None:
    """The catalog's parts are mixins over its base alone (pdi.archive.catalog's docstring): no part imports another."""
    import ast

    import pdi.archive.catalog as catalog

    # the base, the rows, and each schema version's statements (no part: statements alone, importing nothing)
    shared = {"pdi.archive.catalog.base", "pdi.archive.catalog.rows", "pdi.archive.catalog.schema_steps"}
    folder = Path(catalog.__file__).parent
    found: dict[str, set[str]] = {}
    for path in sorted(folder.glob("*.py")):
        if path.stem in ("__init__", "opening"):
            continue  # the whole, and what composes a catalog with a blob store
        imported = {
            node.module
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pdi.archive.catalog")
        }
        found[path.stem] = imported - shared - {f"pdi.archive.catalog.{path.stem}"}
    assert len(found) >= 10
    steps = ast.parse((folder / "schema_steps.py").read_text(encoding="utf-8"))
    assert not [node for node in ast.walk(steps) if isinstance(node, ast.ImportFrom) and (node.module or "")
                .startswith("pdi")], "schema_steps imports nothing of pdi"
    assert {part: parts for part, parts in found.items() if parts} == {}
