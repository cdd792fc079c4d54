"""Fixtures for the archive tests: every store-level test runs against both stores.

The PostgreSQL store runs on a throw-away cluster this session creates in a
temporary directory (``pdi.archive.pgcluster``) and deletes at the end; each
test gets a fresh schema in it. When the server binaries are missing the
fixture fails with a message saying to run ``scripts/bootstrap``: these tests
are never skipped.
"""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from archive_helpers import Clock

from pdi.archive import Archive
from pdi.archive.pgcluster import TemporaryCluster

_databases = itertools.count(1)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[TemporaryCluster]:
    cluster = TemporaryCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty archive location of each kind: a directory, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "archive")
    cluster: TemporaryCluster = request.getfixturevalue("pg_cluster")
    return cluster.create_schema(f"pdi_test_{next(_databases)}")


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC))


@pytest.fixture
def archive(location: str, clock: Clock) -> Iterator[Archive]:
    """An initialized archive at ``location`` with the series ``oma.eop.gov.us`` registered."""
    opened = Archive.init(location, clock=clock)
    opened.add_series("oma.eop.gov.us")
    try:
        yield opened
    finally:
        opened.close()
