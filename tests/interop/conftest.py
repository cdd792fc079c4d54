"""An archive for the interop tests (SQLite: what they test is above the catalog, which the archive tests cover)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path

import pytest

from pdi.archive import Archive

S = "library.example.us"


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    opened = Archive.init(tmp_path / "archive", clock=lambda: datetime.datetime(2026, 11, 23, 9, 0, tzinfo=datetime.UTC))
    opened.add_series(S)
    try:
        yield opened
    finally:
        opened.close()
