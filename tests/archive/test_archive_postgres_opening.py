"""Opening a PostgreSQL archive: what it asks the server, and the checks it keeps.

Every ``pdi`` command and every ``pdi serve`` worker opens the archive. At this
pdi's schema the opening is one statement in one round trip (the schema's
version, the blob store the catalog records, whether messages wait for the
thread index), outside any transaction: one statement sees one snapshot. What
the client and the server exchanged is counted by a relay that reads the
protocol's messages (``support.pgcount``): each ``ReadyForQuery`` ends one
round trip, the connection's startup included. What protects the data is kept:
a database without pdi's tables is refused, naming it; a catalog newer than
this pdi refused, changing nothing; an older one migrated (or, not migrating,
left as it is).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NoReturn

import psycopg
import psycopg.conninfo
import pytest
from archive_helpers import Clock

from pdi.archive import Archive, Content
from pdi.archive.catalog import opening
from pdi.archive.catalog.opening import open_store
from pdi.archive.postgres import CONNECT_SECONDS, POOL_WAIT_SECONDS
from pdi.archive.store import SCHEMA_VERSION
from pdi.errors import NotFoundError, OlderSchemaError, StoreError
from support.pgcluster import TemporaryCluster
from support.pgcount import CountingRelay

S = "open.example.us"
MESSAGE = (b"From: a@example.us\r\nTo: b@example.us\r\nSubject: opening\r\n"
           b"Message-ID: <opening-1@example.us>\r\n\r\nbody\r\n")


@pytest.fixture
def relay(pg_cluster: TemporaryCluster) -> Iterator[CountingRelay]:
    counting = CountingRelay(pg_cluster.directory)
    try:
        yield counting
    finally:
        counting.close()


def _database(pg_cluster: TemporaryCluster, relay: CountingRelay, name: str) -> tuple[str, str]:
    """A new database's URL, and the same through the relay."""
    url = pg_cluster.create_database(name)
    return url, relay.url(url, pg_cluster.directory)


def test_opening_an_archive_at_this_schema_is_one_statement_in_one_round_trip(
    pg_cluster: TemporaryCluster, relay: CountingRelay,
) -> None:
    url, counted_url = _database(pg_cluster, relay, "pdi_test_opening_once")
    with Archive.init(url) as archive:
        archive.add_series(S)
        archive.add(S, b"one\n", format="text")
    relay.reset()
    with Archive.open(counted_url) as archive:
        opened = relay.reset()
        assert archive.schema_version() == SCHEMA_VERSION
    assert opened.connections == 1
    assert opened.ready == 2, opened.queries  # the startup's, and the opening's statement
    (statement,) = opened.queries
    assert ";" not in statement and "BEGIN" not in statement.upper(), statement  # no transaction for one statement


def test_a_listing_of_an_empty_day_asks_no_more_than_its_own_statements(
    pg_cluster: TemporaryCluster, relay: CountingRelay,
) -> None:
    url, counted_url = _database(pg_cluster, relay, "pdi_test_opening_listing")
    with Archive.init(url) as archive:
        archive.add_series(S)
    relay.reset()
    with Archive.open(counted_url) as archive:
        assert "".join(archive.iter_name_text(series=S, year=2020, month=1, day=1)) == ""
    listed = relay.reset()
    # the startup, the opening, and the listing's own: the series looked up and the day found empty
    assert listed.ready <= 1 + 1 + 4, listed.queries
    assert sum("schema_migrations" in query for query in listed.queries) == 1, listed.queries


def test_a_database_without_pdi_tables_is_refused_naming_it(pg_cluster: TemporaryCluster) -> None:
    url = pg_cluster.create_database("pdi_test_opening_empty")
    with pytest.raises(NotFoundError, match=r"no archive in postgresql://\S*/pdi_test_opening_empty\?host=\S+ \(no pdi tables\)"):
        Archive.open(url)
    assert pg_cluster.sql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
                          "pdi_test_opening_empty") == [(0,)]


def test_a_newer_catalog_is_refused_at_opening_and_left_as_it_is(pg_cluster: TemporaryCluster) -> None:
    url = pg_cluster.create_database("pdi_test_opening_newer")
    Archive.init(url).close()
    pg_cluster.sql(f"INSERT INTO schema_migrations (version, applied_at) VALUES ({SCHEMA_VERSION + 1}, 'later')",
                   "pdi_test_opening_newer")
    for older in ("migrate", "refuse", "keep"):
        with pytest.raises(StoreError, match=f"has schema version {SCHEMA_VERSION + 1}, newer than this pdi"):
            open_store(url, create=False, older=older)
    assert pg_cluster.sql("SELECT max(version) FROM schema_migrations", "pdi_test_opening_newer") == [
        (SCHEMA_VERSION + 1,)]


def test_an_older_catalog_is_refused_at_opening_kept_for_a_backup_and_migrated_by_init(
        pg_cluster: TemporaryCluster) -> None:
    url = pg_cluster.create_database("pdi_test_opening_older")
    Archive.init(url).close()
    # as step 20 found it: its index read punctuation as letters (step 20 makes it again)
    pg_cluster.sql(f"DELETE FROM schema_migrations WHERE version = {SCHEMA_VERSION}", "pdi_test_opening_older")
    kept = open_store(url, create=False, older="keep")
    try:
        assert kept.schema_version() == SCHEMA_VERSION - 1
    finally:
        kept.close()
    for opened in (lambda: Archive.open(url), lambda: Archive.init(url, migrate=False)):
        with pytest.raises(OlderSchemaError, match=f"has schema version {SCHEMA_VERSION - 1}, older than this pdi's"
                                                   rf" \({SCHEMA_VERSION}\), and only pdi init migrates"):
            opened()
    assert pg_cluster.sql("SELECT max(version) FROM schema_migrations", "pdi_test_opening_older") == [
        (SCHEMA_VERSION - 1,)]
    with Archive.init(url) as archive:
        assert archive.schema_version() == SCHEMA_VERSION
    with Archive.open(url) as archive:
        assert archive.schema_version() == SCHEMA_VERSION


def test_messages_waiting_for_the_thread_index_are_indexed_at_the_next_opening(location: str, clock: Clock) -> None:
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        archive.deposit(S, [Content(MESSAGE, "rfc822")])
        store = archive.store
        with store._write():  # type: ignore[attr-defined]
            # as a message whose blob could not be read at an opening is left: listed, not indexed
            store._query("DELETE FROM message_heads")  # type: ignore[attr-defined]
            store._query("INSERT INTO message_heads_pending (sha256) SELECT sha256 FROM representations")  # type: ignore[attr-defined]
        assert store.messages_pending() == 1
        assert archive.messages_by_id(["<opening-1@example.us>"]) == []
    with Archive.open(location, clock=clock) as archive:
        assert archive.store.messages_pending() == 0
        [(_, document)] = archive.messages_by_id(["<opening-1@example.us>"])
        assert str(document.pdi).startswith(f"urn:pdi://{S}/")


def test_the_blob_store_a_catalog_records_is_the_one_opened(
    pg_cluster: TemporaryCluster, monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = pg_cluster.create_database("pdi_test_opening_blobs")
    Archive.init(url).close()
    recorded = "s3://pdi-opening-bucket/prefix"
    pg_cluster.sql(f"INSERT INTO blob_store (id, url, created_at) VALUES (1, '{recorded}', 'now')",
                   "pdi_test_opening_blobs")
    asked: list[str] = []

    def blob_store(at: str) -> NoReturn:  # the S3 store is not contacted: what the opening asks for is enough
        asked.append(at)
        raise StoreError(f"no object store here: {at}")

    monkeypatch.setattr(opening, "_blob_store", blob_store)
    for older in ("migrate", "refuse", "keep"):
        with pytest.raises(StoreError, match="no object store here"):
            open_store(url, create=False, older=older)
    assert asked == [recorded, recorded, recorded]


def _connect_timeouts(url: str) -> set[str]:
    """The ``connect_timeout`` each connection an opened archive's pool holds was made with."""
    with Archive.open(url, connections=2) as archive:
        store = archive.store
        with store._connection() as first, store._pool.connection() as second:  # type: ignore[attr-defined]
            return {conn.info.get_parameters().get("connect_timeout", "") for conn in (first, second)}


def test_a_url_without_connect_timeout_gets_pdis_and_one_with_it_keeps_its_own(pg_cluster: TemporaryCluster) -> None:
    url = pg_cluster.create_database("pdi_test_opening_timeouts")
    Archive.init(url).close()
    # the first connection (which asks at once) is given the pool's wait; those the pool makes, CONNECT_SECONDS
    assert _connect_timeouts(url) == {str(round(POOL_WAIT_SECONDS)), str(CONNECT_SECONDS)}
    assert _connect_timeouts(f"{url}&connect_timeout=17") == {"17"}
    assert _connect_timeouts(f"{url}&connect%5Ftimeout=18") == {"18"}  # the key %-escaped, as libpq reads it


def test_opening_parses_its_url_no_more_often_than_psycopgs_connect_does(
    pg_cluster: TemporaryCluster, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # each parse of a connection string by libpq (PQconninfoParse) is some 70 µs of a command's opening
    url = pg_cluster.create_database("pdi_test_opening_parses")
    Archive.init(url).close()
    parsed: list[str] = []
    real = psycopg.conninfo._parse_conninfo

    def counting(conninfo: str) -> Any:
        parsed.append(conninfo)
        return real(conninfo)

    monkeypatch.setattr(psycopg.conninfo, "_parse_conninfo", counting)
    psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_SECONDS).close()
    alone = len(parsed)
    parsed.clear()
    Archive.open(url).close()
    assert alone >= 1
    assert len(parsed) == alone, parsed
