"""The pool of catalog connections (issue 15: stateless resolvers): N concurrent requests over M < N connections.

``pdi serve --db-connections M`` keeps at most M catalog connections per
worker (psycopg_pool), plus the one blob uploads use; every request gets
one for its transaction, waiting while all are taken, so more requests at
once than connections all succeed. Checked straight on PostgreSQL and
through pgbouncer in transaction pooling mode (the site set-up docs/reference/postgresql.md
describes), counting the server's own connections in ``pg_stat_activity``
rather than trusting pdi's.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Iterator

import httpx
import psycopg
import pytest
from server_helpers import serving

from pdi.archive import Archive
from pdi.archive.postgres import PostgresStore
from pdi.errors import StoreError
from support.pgcluster import TemporaryBouncer, TemporaryCluster

S = "pool.example.us"
POOL = 2
REQUESTS = 40


@pytest.fixture(params=["direct", "pgbouncer"])
def database(request: pytest.FixtureRequest, pg_cluster: TemporaryCluster) -> Iterator[tuple[str, str]]:
    """(the URL pdi uses, a direct URL to count connections with) of a fresh database."""
    name = f"pdi_pool_{request.param}"
    direct = pg_cluster.create_database(name)
    if request.param == "direct":
        yield direct, direct
        return
    bouncer = TemporaryBouncer(pg_cluster, name, pool_size=2).start()
    try:
        yield bouncer.url(), direct
    finally:
        bouncer.stop()


def _backends(direct: str, database: str) -> int:
    """Client connections PostgreSQL holds to ``database`` now (the counting one aside)."""
    with psycopg.connect(direct, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND backend_type = 'client backend'"
            " AND pid <> pg_backend_pid()", (database,)
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_more_concurrent_requests_than_pooled_connections_all_succeed(database: tuple[str, str]) -> None:
    url, direct = database
    name = direct.split("/")[-1].split("?")[0]
    with Archive.init(url) as archive:
        archive.add_series(S)
        _, token = archive.add_token("loader", role="deposit", series=[S])
        first = str(archive.add(S, b"read by everyone at once\n", format="text"))
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "text/plain"}
    peak = 0
    done = threading.Event()
    with serving(url, "--workers", "1", "--db-connections", str(POOL), "--evaluations", "8") as (_, port):
        base = f"http://127.0.0.1:{port}"

        def watch() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, _backends(direct, name))
                done.wait(0.02)

        def one(i: int) -> httpx.Response:
            if i % 4 == 0:
                return httpx.post(f"{base}/api/deposit?series={S}&format=text",
                                  content=f"deposit {i}\n".encode(), headers=headers, timeout=120)
            path = (f"/uri-res/N2C?{first}", f"/api/ls?series={S}", f"/uri-res/N2R?{first}%23char=0,4")[i % 3]
            return httpx.get(base + path, timeout=120)

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            with concurrent.futures.ThreadPoolExecutor(REQUESTS) as pool:
                answers = list(pool.map(one, range(REQUESTS)))
        finally:
            done.set()
            watcher.join()
    failed = [(i, r.status_code, r.text[:200]) for i, r in enumerate(answers) if r.status_code not in (200, 201)]
    assert not failed, failed[:3]
    with Archive.open(url) as archive:
        assert len(archive.ls(series=S)) == 1 + REQUESTS // 4  # every deposit made it, each once
    if url == direct:  # through pgbouncer the server sees its two pooled connections, whatever pdi holds
        assert peak <= POOL + 1, f"{peak} connections for a pool of {POOL} (and one for blob uploads)"
    else:
        assert peak <= 2


def test_a_pool_that_stays_taken_is_a_clear_error(pg_cluster: TemporaryCluster) -> None:
    url = pg_cluster.create_database("pdi_pool_taken")
    Archive.init(url).close()
    store = PostgresStore(url, connections=1, wait=0.5)
    try:
        entered = threading.Event()
        release = threading.Event()

        def hold() -> None:
            with store._read():  # the one connection, held
                entered.set()
                release.wait(10)

        holder = threading.Thread(target=hold)
        holder.start()
        entered.wait(10)
        try:
            with pytest.raises(StoreError, match=r"no catalog connection free within 0\.5 s \(1 in the pool\)"):
                store.list_series()
        finally:
            release.set()
            holder.join()
        assert store.list_series() == []  # free again
    finally:
        store.close()
