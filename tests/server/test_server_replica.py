"""PostgreSQL beyond one server: resolvers reading from a streaming replica, and a failover (issue 28, item 6).

Real servers from Debian's PostgreSQL (:mod:`support.pgreplica`): a primary
and a hot standby made by ``pg_basebackup -R``, synchronous
(``synchronous_standby_names``, ``synchronous_commit=on``). Real ``pdi
serve`` processes with ``--read-url`` the standby. That reads hit the replica
is read from the replica's own statistics; that a name just deposited is
read back at once is tried with the replica's replay *paused*, so that it
cannot have the name; the failover kills the primary while writers deposit
over HTTP, promotes the standby, and checks that every acknowledged deposit
is there with its bytes and each day's serials have no gap.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from server_helpers import serving

from pdi.archive import Archive
from pdi.archive.blobs.inline import INLINE_LIMIT
from pdi.archive.content import Content
from pdi.errors import NotFoundError, ReplicaBehindError, StoreError
from pdi.identifier import PDI
from support.pgcluster import TemporaryCluster
from support.pgreplica import ReplicatedClusters

# one module: scripts/test hands a module to one worker (--dist loadfile), so these servers start once
pytestmark = pytest.mark.postgres

S = "replica.example.us"
#: Octets over which a deposit's blob is uploaded first, on a connection of the blob store's own.
LARGE = INLINE_LIMIT
_databases = itertools.count(1)


@pytest.fixture(scope="module")
def clusters() -> Iterator[ReplicatedClusters]:
    with ReplicatedClusters() as pair:
        yield pair


@dataclass
class Served:
    primary: str
    replica: str
    database: str
    token: str


def _archive(pair: ReplicatedClusters, primary: str, database: str) -> str:
    """An archive with the series ``S`` in a new database (made on the primary, waited for on the standby); a
    deposit token of it."""
    with Archive.init(primary) as archive:
        archive.add_series(S)
        _, token = archive.add_token("writer", role="deposit", series=[S])
    pair.wait_replayed()
    return token


@pytest.fixture
def served(clusters: ReplicatedClusters) -> Served:
    database = f"pdi_replica_{next(_databases)}"
    clusters.primary.create_database(database)
    primary, replica = clusters.primary.url(database), clusters.replica.url(database)
    return Served(primary, replica, database, _archive(clusters, primary, database))


def _deposit(port: int, token: str, body: bytes, timeout: float = 60) -> httpx.Response:
    return httpx.post(f"http://127.0.0.1:{port}/api/deposit?series={S}&format=text", content=body,
                      headers={"Authorization": f"Bearer {token}", "Content-Type": "text/plain"}, timeout=timeout)


def _scans(pair: ReplicatedClusters, database: str, *, on_replica: bool) -> int:
    """Index and sequential scans of the documents and versions tables, as that server's statistics count them."""
    server = pair.replica if on_replica else pair.primary
    rows = server.sql("SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0) FROM pg_stat_user_tables"
                      " WHERE relname IN ('documents', 'versions')", database)
    return int(rows[0][0])


def _wait_scans(pair: ReplicatedClusters, database: str, at_least: int) -> int:
    """The replica's count once it reaches ``at_least`` (a backend sends its counts a moment after its
    transaction; an idle one within 10 s), or what it is after 30 s."""
    deadline = time.monotonic() + 30
    while (now := _scans(pair, database, on_replica=True)) < at_least and time.monotonic() < deadline:
        time.sleep(0.2)
    return now


def test_resolvers_with_a_read_url_serve_names_read_on_the_replica(clusters: ReplicatedClusters, served: Served) -> None:
    bodies = [f"document {i} read back from the replica\n".encode() * (i + 1) for i in range(6)]
    with serving(served.primary, "--workers", "1", "--read-url", served.replica) as (_, a), \
            serving(served.primary, "--workers", "1", "--read-url", served.replica) as (_, b):
        names = []
        for i, body in enumerate(bodies):
            answer = _deposit((a, b)[i % 2], served.token, body)
            assert answer.status_code == 201, answer.text
            names.append(answer.json()["pdi"])
        clusters.wait_replayed()
        # the deposits were written on the primary (the replica takes no writes: it has them by replication)
        assert clusters.primary.sql("SELECT count(*) FROM documents", served.database) == [(len(bodies),)]
        before = _scans(clusters, served.database, on_replica=True)
        with httpx.Client(timeout=60) as client:
            for port in (a, b):
                for name, body in zip(names, bodies, strict=True):
                    got = client.get(f"http://127.0.0.1:{port}/uri-res/N2R?{name}")
                    assert got.status_code == 200 and got.content == body
                listed = client.get(f"http://127.0.0.1:{port}/api/series/{S}").json()
                assert listed
        # every one of those 24 look-ups read the documents and versions tables on the replica
        assert _wait_scans(clusters, served.database, before + 2 * len(bodies)) >= before + 2 * len(bodies)
        # and the resolvers hold connections to it, as pg_stat_activity there shows
        assert _client_backends(clusters.replica, served.database) >= 2


def test_a_name_just_deposited_is_read_at_once_though_the_replica_has_not_replayed_it(
    clusters: ReplicatedClusters, served: Served,
) -> None:
    with serving(served.primary, "--workers", "1", "--read-url", served.replica) as (_, a), \
            serving(served.primary, "--workers", "1", "--read-url", served.replica) as (_, b):
        clusters.replica.sql("SELECT pg_wal_replay_pause()")
        try:
            body = b"deposited on one resolver, read at once from both\n"
            answer = _deposit(a, served.token, body)  # acknowledged: flushed on the standby, not replayed there
            assert answer.status_code == 201, answer.text
            name = answer.json()["pdi"]
            key = PDI.parse(name)
            # the replica cannot have it: its replay is paused
            assert clusters.replica.sql(
                f"SELECT count(*) FROM documents WHERE serial = {int(key.unique_id or 0)}", served.database
            ) == [(0,)]
            with httpx.Client(timeout=60) as client:
                # the resolver that wrote it reads it back (the replica is behind its commit: the primary answers)
                mine = client.get(f"http://127.0.0.1:{a}/uri-res/N2R?{name}")
                assert mine.status_code == 200 and mine.content == body
                # another resolver, which knows nothing of the deposit, finds no such name on the replica and
                # asks the primary
                other = client.get(f"http://127.0.0.1:{b}/uri-res/N2R?{name}")
                assert other.status_code == 200 and other.content == body
                described = client.get(f"http://127.0.0.1:{b}/uri-res/N2C?{name}").json()
                assert "stored" in described, described
                assert described["stored"]["sha256"] == hashlib.sha256(body).hexdigest()
                # a name minted nowhere is still not found
                missing = name.replace(f"/{key.unique_id}.", f"/{int(key.unique_id or 0) + 50}.")
                assert client.get(f"http://127.0.0.1:{b}/uri-res/N2R?{missing}").status_code == 404
        finally:
            clusters.replica.sql("SELECT pg_wal_replay_resume()")
        clusters.wait_replayed()
        with httpx.Client(timeout=60) as client:
            assert client.get(f"http://127.0.0.1:{b}/uri-res/N2R?{name}").content == body


def _client_backends(server: TemporaryCluster, database: str) -> int:
    """Connections of clients to ``database`` on ``server``, besides the one asking."""
    rows = server.sql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                      " AND pid <> pg_backend_pid() AND backend_type = 'client backend'", database)
    return int(rows[0][0])


def test_reads_go_on_from_the_primary_while_the_replica_is_down_and_return_to_it(
    clusters: ReplicatedClusters, served: Served,
) -> None:
    body = b"read while the replica is down\n"
    with Archive.open(served.primary, read_url=served.replica) as archive:
        name = str(archive.deposit(S, [Content(body, "text")])[0])
        clusters.wait_replayed()
        assert archive.get(name).data == body
        assert _client_backends(clusters.replica, served.database) >= 1
        clusters.replica.kill()
        try:
            # a read in flight on a connection the replica dropped is refused (503, to be asked again); the
            # replica is then asked at most once a second, and meanwhile the primary answers every read
            with pytest.raises(StoreError):
                archive.get(name)
            assert all(archive.get(name).data == body for _ in range(5))
        finally:
            clusters.replica.resume()
        clusters.wait_synchronous()
        clusters.wait_replayed()
        # when it answers again, a fresh pool of connections to it is made and the reads are its own again
        deadline = time.monotonic() + 60
        while _client_backends(clusters.replica, served.database) < 1:
            assert time.monotonic() < deadline, "the resolver never went back to the replica"
            assert archive.get(name).data == body
            time.sleep(0.1)


def test_a_snapshot_begun_on_a_lagging_replica_is_one_view_or_refused(clusters: ReplicatedClusters, served: Served) -> None:
    # The replica's replay paused: a name deposited through another process is on the primary alone. A snapshot
    # begun on the replica that then asks for it must not go on on the primary (a listing read before and after
    # would differ): it is refused, clearly, and the next snapshot is the primary's, whole.
    with Archive.open(served.primary) as writer, Archive.open(served.primary, read_url=served.replica) as reader:
        first = str(writer.deposit(S, [Content(b"replayed on the replica\n", "text")])[0])
        clusters.wait_replayed()
        clusters.replica.sql("SELECT pg_wal_replay_pause()")
        try:
            second = str(writer.deposit(S, [Content(b"on the primary alone\n", "text")])[0])
            with reader.snapshot():
                assert _listed(reader) == [first]  # the replica's view
                with pytest.raises(ReplicaBehindError, match=r"replica .* ask again") as refused:
                    reader.get(second)
            assert isinstance(refused.value, StoreError)  # a 503 to a client: to be asked again
            # asked again, the whole snapshot is read on the primary: one view, with the new name
            with reader.snapshot():
                assert reader.get(second).data == b"on the primary alone\n"
                assert _listed(reader) == sorted([first, second])
            # a name neither server holds is not found (asked of the primary, where reads stay while the replica lags)
            missing = second.replace(f"/{PDI.parse(second).unique_id}.", "/999.")
            with reader.snapshot():
                assert _listed(reader) == sorted([first, second])  # read on the primary still: it lags
                with pytest.raises(NotFoundError):
                    reader.get(missing)
            # Archive.in_one_view asks again by itself: the answer of one view, whichever server gave it
            clusters.replica.sql("SELECT pg_wal_replay_resume()")
            clusters.wait_replayed()
            with reader.snapshot():
                assert _listed(reader) == sorted([first, second])
            clusters.replica.sql("SELECT pg_wal_replay_pause()")
            third = str(writer.deposit(S, [Content(b"third\n", "text")])[0])

            def both() -> tuple[list[str], bytes]:
                return _listed(reader), reader.get(third).data

            listed_then, data = reader.in_one_view(both)
            assert third in listed_then and data == b"third\n"
        finally:
            clusters.replica.sql("SELECT pg_wal_replay_resume()")
        clusters.wait_replayed()


def _listed(archive: Archive) -> list[str]:
    return sorted(f"urn:pdi://{S}/{r.day:%Y/%m/%d}/{r.unique_id}.text.{r.version}" for r in archive.iter_records(S))


def test_a_read_url_needs_a_postgresql_archive(tmp_path: object) -> None:
    from pdi.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match=r"--read-url postgresql://u:\*\*\*@h/d\) needs a PostgreSQL archive"):
        Archive.open(str(tmp_path), read_url="postgresql://u:secret@h/d")


# --- failover ---------------------------------------------------------------------------

@dataclass
class Answer:
    status: int
    body: bytes
    name: str | None
    retry_after: str | None
    kind: str
    after_promotion: bool


def test_a_failover_loses_no_acknowledged_deposit_and_leaves_no_gap_in_the_serials() -> None:
    with ReplicatedClusters() as pair:
        database = "pdi_failover"
        pair.primary.create_database(database)
        write, read = pair.write_url(database), pair.read_url(database)
        token = _archive(pair, write, database)
        answers: list[Answer] = []
        stop = threading.Event()
        promoted = threading.Event()
        with serving(write, "--workers", "1", "--read-url", read) as (_, a), \
                serving(write, "--workers", "1", "--read-url", read) as (_, b):

            def writer(number: int) -> None:
                for i in itertools.count():
                    if stop.is_set():
                        return
                    body = f"writer {number}, deposit {i}\n".encode()
                    if number == 0 and i % 5 == 0:  # uploaded on a connection of its own, before the deposit
                        body *= LARGE // len(body) + 1
                    after = promoted.is_set()
                    try:
                        got = _deposit((a, b)[(number + i) % 2], token, body, timeout=60)
                    except httpx.HTTPError as exc:  # no answer at all would be a failure: kept to be shown
                        answers.append(Answer(0, body, None, None, type(exc).__name__, after))
                        continue
                    name = got.json().get("pdi") if got.status_code == 201 else None
                    answers.append(Answer(got.status_code, body, name, got.headers.get("retry-after"),
                                          got.headers.get("content-type", ""), after))
                    if got.status_code != 201:
                        time.sleep(0.05)

            threads = [threading.Thread(target=writer, args=(n,), daemon=True) for n in range(4)]
            for thread in threads:
                thread.start()
            try:
                _wait_for(lambda: sum(x.status == 201 for x in answers) >= 20, "20 deposits before the failover")
                pair.primary.kill()  # as a crash: no checkpoint, its clients cut off
                _wait_for(lambda: sum(x.status == 503 for x in answers) >= 4, "deposits refused in the outage")
                pair.replica.promote()
                promoted.set()
                _wait_for(lambda: sum(x.status == 201 and x.after_promotion for x in answers) >= 20
                          and any(x.status == 201 and x.after_promotion and len(x.body) > LARGE for x in answers),
                          "20 deposits after the promotion, an uploaded one among them")
            finally:
                stop.set()
                for thread in threads:
                    thread.join(timeout=120)
            assert not any(thread.is_alive() for thread in threads)
            # every deposit was answered: acknowledged, or refused with a 503 that says when to ask again
            assert {x.status for x in answers} <= {201, 503}, [x for x in answers if x.status not in (201, 503)][:3]
            refused = [x for x in answers if x.status == 503]
            assert refused and all(x.retry_after == "5" and x.kind == "application/problem+json" for x in refused)
            acknowledged = [x for x in answers if x.status == 201]
            # every acknowledged deposit is on the promoted server, with its bytes, read through both resolvers
            with httpx.Client(timeout=60) as client:
                for x in acknowledged:
                    for port in (a, b):
                        got = client.get(f"http://127.0.0.1:{port}/uri-res/N2R?{x.name}")
                        assert got.status_code == 200 and got.content == x.body, (x.name, got.status_code)
        # and each day's serials run from 1 with no gap: those acknowledged and any whose answer was lost
        rows = pair.replica.sql("SELECT day, serial FROM documents WHERE series = 'replica.example.us'", database)
        by_day: dict[str, list[int]] = {}
        for day, serial in rows:
            by_day.setdefault(str(day), []).append(int(serial))
        for serials in by_day.values():
            assert sorted(serials) == list(range(1, len(serials) + 1))
        assert {x.name for x in acknowledged} <= {
            f"urn:pdi://{S}/{day.replace('-', '/')}/{serial}.text.1" for day, serial in rows
        }


def _wait_for(condition: object, what: str, seconds: float = 120) -> None:
    assert callable(condition)
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds:g} s: {what}")
        time.sleep(0.05)
