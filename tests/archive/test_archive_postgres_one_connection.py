"""Opening a PostgreSQL catalog costs the server one connection, not two.

Opening asks the server at once (so that a refused password or a missing
database is said at once, not after the pool has tried for its timeout); that
connection is then the pool's first, where it was made, closed, and a second
made by the pool (each a backend the server starts and ends: 4 to 5 ms of a
``pdi ls``). Counted by the server: ``pg_stat_database.sessions`` of a database
of the test's own, read from another database once its backends have ended.
"""

from __future__ import annotations

import time

import pytest

from pdi.archive import Archive
from pdi.errors import StoreError
from support.pgcluster import TemporaryCluster

S = "one.example.us"


def _sessions(cluster: TemporaryCluster, database: str) -> int:
    """The sessions ever begun in ``database``, once none is open (each one's count is kept when it ends)."""
    deadline = time.monotonic() + 30
    while True:
        ((sessions, open_now),) = cluster.sql(
            f"SELECT sessions, numbackends FROM pg_stat_database WHERE datname = '{database}'")
        if open_now == 0:
            return int(sessions)
        assert time.monotonic() < deadline, f"{open_now} sessions of {database} still open"
        time.sleep(0.05)


def test_opening_and_listing_makes_one_connection(pg_cluster: TemporaryCluster) -> None:
    url = pg_cluster.create_database("pdi_test_one_connection")
    with Archive.init(url) as archive:
        archive.add_series(S)
        archive.add(S, b"one\n", format="text")
    before = _sessions(pg_cluster, "pdi_test_one_connection")
    with Archive.open(url) as archive:
        listed = list(archive.iter_name_text(series=S))
    assert len("".join(listed).splitlines()) == 1
    assert _sessions(pg_cluster, "pdi_test_one_connection") - before == 1


def test_a_database_that_does_not_exist_is_said_at_once(pg_cluster: TemporaryCluster) -> None:
    started = time.monotonic()
    with pytest.raises(StoreError, match=r"cannot connect to .*pdi_test_no_such_database"):
        Archive.open(pg_cluster.url("pdi_test_no_such_database"))
    assert time.monotonic() - started < 5  # not the pool's timeout
