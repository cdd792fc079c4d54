"""Several resolver processes on one PostgreSQL catalog, through pgbouncer in transaction mode.

Issue 15: resolvers are stateless, so a site runs several (on several
machines) on one catalog; and through pgbouncer's transaction pooling, 27 of
160 requests failed on psycopg's automatically prepared statements. Here
three ``pdi serve`` processes share one database through a real pgbouncer
(Debian's, started by the test) that has fewer server connections than
there are resolvers; deposits go through all three at once, and every
serial of the day must be taken exactly once, with no gap, and every name
read back the same from each resolver.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
from collections.abc import Iterator

import httpx
import pytest
from server_helpers import serving

from pdi.archive import Archive
from pdi.identifier import PDI
from support.pgcluster import TemporaryBouncer, TemporaryCluster

S = "many.example.us"
DEPOSITS = 90


@pytest.fixture
def bounced(pg_cluster: TemporaryCluster) -> Iterator[str]:
    pg_cluster.create_database("pdi_many")
    bouncer = TemporaryBouncer(pg_cluster, "pdi_many", pool_size=2).start()
    try:
        yield bouncer.url()
    finally:
        bouncer.stop()


def test_three_resolvers_through_pgbouncer_mint_gap_free_serials_and_read_alike(bounced: str) -> None:
    with Archive.init(bounced) as archive:
        archive.add_series(S)
        _, token = archive.add_token("loader", role="deposit", series=[S])
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "text/plain"}
    bodies = [f"deposit {i} through one of three resolvers\n".encode() * (1 + i % 7) for i in range(DEPOSITS)]
    with serving(bounced, "--workers", "1") as (_, a), serving(bounced, "--workers", "1") as (_, b), \
            serving(bounced, "--workers", "1") as (_, c):
        ports = [a, b, c]

        def deposit(i: int) -> tuple[int, httpx.Response]:
            url = f"http://127.0.0.1:{ports[i % 3]}/api/deposit?series={S}&format=text"
            return i, httpx.post(url, content=bodies[i], headers=headers, timeout=120)

        with concurrent.futures.ThreadPoolExecutor(12) as pool:
            answers = list(pool.map(deposit, range(DEPOSITS)))
        failed = [(i, r.status_code, r.text) for i, r in answers if r.status_code != 201]
        assert not failed, failed[:3]
        names = {i: r.json()["pdi"] for i, r in answers}
        # gap-free from 1 on each GMT day the deposits were minted on (one day, or two across midnight)
        by_day: dict[object, list[int]] = {}
        for name in names.values():
            parsed = PDI.parse(name)
            assert parsed.unique_id is not None
            by_day.setdefault(parsed.date, []).append(int(parsed.unique_id))
        assert sum(map(len, by_day.values())) == DEPOSITS and len(by_day) <= 2
        for serials in by_day.values():
            assert sorted(serials) == list(range(1, len(serials) + 1))
        # and each resolver reads every name back as deposited (N2R and N2C from all three)
        with httpx.Client(timeout=60) as client:
            for i, name in names.items():
                expected = hashlib.sha256(bodies[i]).hexdigest()
                for port in ports:
                    got = client.get(f"http://127.0.0.1:{port}/uri-res/N2R?{name}")
                    assert got.status_code == 200 and hashlib.sha256(got.content).hexdigest() == expected
                    assert client.get(f"http://127.0.0.1:{port}/uri-res/N2C?{name}").json()["stored"]["sha256"] == expected
