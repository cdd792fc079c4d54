"""The PostgreSQL catalog's batches: several statements, one round trip, no pipeline.

A transaction's ``BEGIN`` and the statements kept before the next one waited
for are sent together (``pdi.archive.postgres.transactions._batch``) as one simple-protocol
query with client-bound parameters: through pgbouncer 1.18 (Debian 12's) in
transaction mode, an extended-protocol pipeline now and then lost its answer
and a resolver's request waited for ever (tests/server/test_server_many_resolvers.py
caught it about one run in three under load). Here, against a real server and
a real pgbouncer: the statements run in order, in one transaction, the last
one's rows are returned, parameters of every kind arrive intact (quotes,
backslashes, NUL-free bytes of every value, arrays, ``%b`` placeholders), and
a failing statement leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.archive.postgres.transactions import _batch
from support.pgcluster import TemporaryBouncer, TemporaryCluster


@pytest.fixture(scope="module", params=["direct", "pgbouncer"])
def url(request: pytest.FixtureRequest, pg_cluster: TemporaryCluster) -> Iterator[str]:
    name = f"pdi_batch_{request.param}"
    pg_cluster.create_database(name)
    if request.param == "direct":
        yield pg_cluster.url(name)
        return
    bouncer = TemporaryBouncer(pg_cluster, name, pool_size=1).start()
    try:
        yield bouncer.url()
    finally:
        bouncer.stop()


@pytest.fixture
def conn(url: str) -> Iterator[psycopg.Connection[object]]:
    with psycopg.connect(url, autocommit=True, prepare_threshold=None) as c:
        c.execute("CREATE TABLE IF NOT EXISTS t (n bigint, b bytea, s text)")
        c.execute("TRUNCATE t")
        yield c


def test_statements_run_in_order_in_one_transaction_and_the_last_ones_rows_come_back(conn: psycopg.Connection[object]) -> None:
    cursor = _batch(conn, [
        ("BEGIN", ()),
        ("INSERT INTO t VALUES (%s, %s, %s)", (1, b"\x00'\\\xff", "it's \\ 100%")),
        ("INSERT INTO t SELECT * FROM unnest(%b::bigint[], %b::bytea[], %s::text[])",
         ([2, 3], [b"\n", b""], ['a"b', "{c,d}"])),
        ("SELECT count(*), max(n) FROM t WHERE s LIKE '%%' || %s", ("}",)),
    ])
    assert cursor.fetchall() == [(1, 3)]
    assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS  # BEGIN held, not yet committed
    _batch(conn, [("UPDATE t SET n = n + 10 WHERE n = %s", (1,)), ("COMMIT", ())])
    assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    assert conn.execute("SELECT n, b, s FROM t ORDER BY n").fetchall() == [
        (2, b"\n", 'a"b'), (3, b"", "{c,d}"), (11, b"\x00'\\\xff", "it's \\ 100%"),
    ]


def test_a_failing_statement_stops_the_batch_and_a_rollback_leaves_nothing(conn: psycopg.Connection[object]) -> None:
    with pytest.raises(psycopg.errors.DivisionByZero):
        _batch(conn, [("BEGIN", ()), ("INSERT INTO t VALUES (1, NULL, 'x')", ()), ("SELECT 1 / %s", (0,)),
                      ("INSERT INTO t VALUES (2, NULL, 'y')", ())])
    conn.execute("ROLLBACK")
    assert conn.execute("SELECT count(*) FROM t").fetchall() == [(0,)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")), max_size=4),
       octets=st.binary(max_size=64))
def test_any_text_and_octets_arrive_as_sent(conn: psycopg.Connection[object], texts: list[str], octets: bytes) -> None:
    statements: list[tuple[str, tuple[object, ...]]] = [("BEGIN", ()), ("DELETE FROM t", ())]
    statements += [("INSERT INTO t VALUES (%s, %s, %s)", (i, octets, text)) for i, text in enumerate(texts)]
    statements.append(("SELECT n, b, s FROM t ORDER BY n", ()))
    rows = _batch(conn, statements).fetchall()
    _batch(conn, [("ROLLBACK", ())])
    assert rows == [(i, octets, text) for i, text in enumerate(texts)]
