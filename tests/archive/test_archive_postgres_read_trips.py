"""A read of a PostgreSQL catalog: one round trip a statement, with what a transaction promised kept.

A read transaction (READ COMMITTED) sees, statement by statement, the latest commit: each statement sent on its
own (an implicit transaction around what one round trip carries) sees exactly what it would inside a ``BEGIN``
… ``COMMIT``, and spares the ``BEGIN`` and the ``COMMIT``'s round trip of its own. What a read promised is kept:
its deadline (``statement_timeout``) holds for each of its statements, a write inside it is one transaction, a
statement that fails leaves the connection usable and says what failed, and a snapshot (REPEATABLE READ) still
sees one view of the catalog from its first statement to its last. Round trips are counted by a relay that reads
the protocol's messages (``support.pgcount``): each ``ReadyForQuery`` ends one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from pdi.archive import Archive
from pdi.archive.results import Resolved
from pdi.errors import StoreError
from pdi.server.process.cache import Entity
from pdi.server.process.limits import WorkLimits
from pdi.server.protocol.resolver import Resolver
from support.pgcluster import TemporaryCluster
from support.pgcount import Counted, CountingRelay

S = "trips.example.us"
BASE = "http://resolver.example/"
KB = bytes(range(32, 127)) * 10 + b"\n" * 74  # 1,024 octets of text


@pytest.fixture
def relay(pg_cluster: TemporaryCluster) -> Iterator[CountingRelay]:
    counting = CountingRelay(pg_cluster.directory)
    try:
        yield counting
    finally:
        counting.close()


def _archive(pg_cluster: TemporaryCluster, relay: CountingRelay, name: str) -> tuple[str, str, str]:
    """A new archive holding one 1 KB text: its URL, the same through the relay, and the text's name."""
    url = pg_cluster.create_database(name)
    with Archive.init(url) as archive:
        archive.add_series(S)
        record = archive.add(S, KB, format="text")
    return url, relay.url(url, pg_cluster.directory), str(record)


def _statements(counted: Counted) -> int:
    """The statements the client sent, each a round trip of its own if none shared one."""
    return sum(len([s for s in query.split("; ") if s.strip()]) for query in counted.queries) + len(counted.parsed)


def test_a_1kb_read_outside_a_snapshot_is_one_round_trip_a_statement_and_no_begin_or_commit(
    pg_cluster: TemporaryCluster, relay: CountingRelay,
) -> None:
    _, counted_url, name = _archive(pg_cluster, relay, "pdi_test_trips_get")
    with Archive.open(counted_url) as archive:
        relay.reset()
        resolved = archive.resolve(name)
        assert isinstance(resolved, Resolved) and resolved.data == KB
        counted = relay.reset()
    # the name's row, its withdrawals, its blob's digests, and the blob's row with its octets (a small blob's, in
    # hand at once): four statements
    assert not any(word in query.upper() for query in counted.queries for word in ("BEGIN", "COMMIT")), counted.queries
    assert len(counted.queries) + len(counted.parsed) == 4, (counted.queries, counted.parsed)
    assert counted.ready == 4, (counted.queries, counted.parsed)


def test_an_n2r_through_the_resolvers_read_path_is_its_statements_and_its_snapshots_commit(
    pg_cluster: TemporaryCluster, relay: CountingRelay,
) -> None:
    _, counted_url, name = _archive(pg_cluster, relay, "pdi_test_trips_n2r")
    with Archive.open(counted_url) as archive:
        resolver = Resolver(archive, WorkLimits())
        relay.reset()
        answer = resolver.representation(name, BASE)
        counted = relay.reset()
    assert isinstance(answer, Entity) and answer.body == KB
    begins = [query for query in counted.queries if "BEGIN" in query.upper()]
    # one snapshot for the look-ups of one answer (REPEATABLE READ): its BEGIN goes with its first statement,
    # its COMMIT alone; every other statement is a round trip of its own, with no BEGIN or COMMIT
    assert len(begins) == 1 and begins[0].startswith("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; "), begins
    assert [query for query in counted.queries if "COMMIT" in query.upper()] == ["COMMIT"], counted.queries
    statements = _statements(counted) - 2  # not the BEGIN, nor the COMMIT
    assert counted.ready == statements + 1, (counted.queries, counted.parsed)
    assert counted.ready <= 6, (counted.queries, counted.parsed)


def test_an_empty_days_listing_is_the_startup_the_opening_and_its_three_round_trips(
    pg_cluster: TemporaryCluster, relay: CountingRelay,
) -> None:
    url = pg_cluster.create_database("pdi_test_trips_listing")
    with Archive.init(url) as archive:
        archive.add_series(S)
    relay.reset()
    with Archive.open(relay.url(url, pg_cluster.directory)) as archive:
        assert "".join(archive.iter_name_text(series=S, year=2020, month=1, day=1)) == ""
    counted = relay.reset()
    # the series looked up; the day's page bounds, found empty, in its snapshot (begun with them); its COMMIT. A
    # day named whole is not looked up first (its page's bounds tell whether it holds names), and no page is read
    # where the bounds found no document
    assert counted.ready == 1 + 1 + 3, counted.queries
    assert counted.queries[-1] == "COMMIT" and counted.queries[-2].startswith("BEGIN"), counted.queries


def _store(archive: Archive) -> Any:
    return archive.store


def test_a_reads_deadline_stops_each_of_its_statements_and_not_those_after_it(pg_cluster: TemporaryCluster) -> None:
    url = pg_cluster.create_database("pdi_test_trips_deadline")
    Archive.init(url).close()
    with Archive.open(url) as archive:
        store = _store(archive)
        started = time.monotonic()
        with (pytest.raises(TimeoutError, match="stopped at its deadline"), store._read(),
              store._within(time.monotonic() + 0.3)):
            assert store._query("SELECT 1") == [(1,)]  # the first statement, within its time
            store._query("SELECT pg_sleep(5)")  # the second, a round trip of its own, stopped by the server
        assert time.monotonic() - started < 3
        with store._read():
            with store._within(time.monotonic() + 5):
                assert store._query("SELECT 1") == [(1,)]
            assert store._query("SELECT pg_sleep(0.4), 2") == [("", 2)]  # past the deadline, none is in force
        with pytest.raises(TimeoutError), store._read(), store._within(time.monotonic() + 0.3):
            store.fetch("SELECT pg_sleep(5)", ())  # a binary fetch inside it too
        assert store._query("SHOW statement_timeout") == [("0",)]  # and the connections are left as they were


def test_a_failed_statement_in_a_read_names_what_failed_and_the_connection_reads_on(pg_cluster: TemporaryCluster) -> None:
    url = pg_cluster.create_database("pdi_test_trips_error")
    Archive.init(url).close()
    with Archive.open(url, connections=1) as archive:
        store = _store(archive)
        with pytest.raises(StoreError, match=r"pdi_test_trips_error.*no_such_table"), store._read():
            store._query("SELECT * FROM no_such_table")
        with store._read():
            assert store._query("SELECT 3") == [(3,)]  # the one connection, not left in a failed transaction


def test_a_write_inside_a_read_that_has_read_is_one_transaction(pg_cluster: TemporaryCluster) -> None:
    url = pg_cluster.create_database("pdi_test_trips_write")
    Archive.init(url).close()
    pg_cluster.sql("CREATE TABLE t (n int)", "pdi_test_trips_write")
    with Archive.open(url) as archive:
        store = _store(archive)
        with pytest.raises(RuntimeError), store._read():
            assert store._query("SELECT count(*) FROM t") == [(0,)]
            with store._write():
                store._execute("INSERT INTO t VALUES (1)")
                store._query("INSERT INTO t VALUES (2)")
                raise RuntimeError("after the writes, before the end of the read")
        assert pg_cluster.sql("SELECT count(*) FROM t", "pdi_test_trips_write") == [(0,)]
        with store._read():
            store._query("SELECT count(*) FROM t")
            with store._write():
                store._execute("INSERT INTO t VALUES (3)")
            store._query("SELECT 1")
    assert pg_cluster.sql("SELECT n FROM t", "pdi_test_trips_write") == [(3,)]


def test_a_snapshot_sees_one_view_while_another_connection_commits(pg_cluster: TemporaryCluster) -> None:
    url = pg_cluster.create_database("pdi_test_trips_snapshot")
    Archive.init(url).close()
    pg_cluster.sql("CREATE TABLE t (n int)", "pdi_test_trips_snapshot")
    with Archive.open(url) as archive:
        store = _store(archive)

        def commit_one() -> None:
            with psycopg.connect(url, autocommit=True) as other:
                other.execute("INSERT INTO t VALUES (1)")

        with store._read(), store._snapshot():  # a read that has sent nothing yet: the snapshot begins it
            assert store._query("SELECT count(*) FROM t") == [(0,)]
            worker = threading.Thread(target=commit_one)
            worker.start()
            worker.join()
            assert store._query("SELECT count(*) FROM t") == [(0,)]  # the snapshot's view
        with store._read():  # a read committed: each statement sees the latest commit
            assert store._query("SELECT count(*) FROM t") == [(1,)]
            with psycopg.connect(url, autocommit=True) as other:
                other.execute("INSERT INTO t VALUES (2)")
            assert store._query("SELECT count(*) FROM t") == [(2,)]
