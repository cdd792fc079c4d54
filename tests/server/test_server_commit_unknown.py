"""A write API request whose PostgreSQL commit had an unknown outcome: the 503 says how to find out and retry.

The connection lost as the deposit's ``COMMIT`` went, the server may have applied it or not
(tests/archive/test_archive_postgres_commit_lost.py). A client that sends the request again without an
Idempotency-Key may have it stored twice; with the same key, the write API answers its first answer if the
first write landed (its answer is kept in the write's own transaction, docs/reference/write-api.md) and makes it
if it did not. So the ``503`` (problem type ``/api#problem-commit-unknown``, ``Retry-After``) says so, in the
words of a request that sent a key or of one that sent none; and the retry with the key is tried against both
real outcomes: the server's answer to a commit it made cut by a relay (support.pglost), and the backend ended
inside the commit (a deferred trigger), so that nothing was committed.
"""

from __future__ import annotations

import itertools

import psycopg
import pytest
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.archive.postgres import servers
from pdi.server import create_app
from support.pgcluster import TemporaryCluster
from support.pglost import LostAnswer

S = "courts.gov.us"
BODY = b"the ruling of the day\n"
_schemas = itertools.count(1)


@pytest.fixture
def url(pg_cluster: TemporaryCluster, monkeypatch: pytest.MonkeyPatch) -> str:
    # the pool asks a server it lost again at once, not a second later (as a client honouring Retry-After waits)
    monkeypatch.setattr(servers, "PROBE_EVERY_SECONDS", 0.0)
    made = pg_cluster.create_schema(f"pdi_server_commit_{next(_schemas)}")
    with Archive.init(made) as archive:
        archive.add_series(S)
    return made


def _versions(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT COUNT(*) FROM versions").fetchone()
    assert row is not None
    return int(row[0])


def _deposit(client: TestClient, token: str, key: str | None) -> object:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "text/plain"}
    if key is not None:
        headers["Idempotency-Key"] = key
    return client.post(f"/api/deposit?series={S}", content=BODY, headers=headers)


def _unknown(answer: object) -> str:
    """The detail of a 503 saying that the write's outcome is unknown (and to ask again in a few seconds)."""
    assert answer.status_code == 503, answer.text  # type: ignore[attr-defined]
    assert answer.headers["Retry-After"] == "5"  # type: ignore[attr-defined]
    problem = answer.json()  # type: ignore[attr-defined]
    assert (problem["type"], problem["title"]) == ("/api#problem-commit-unknown", "storage error"), problem
    assert "whether it was applied is unknown" in problem["detail"], problem
    assert "pdi " not in problem["detail"], problem  # the command line's advice is not the client's
    return str(problem["detail"])


def test_a_retry_with_the_same_key_after_a_commit_that_landed_replays_the_first_answer(
        url: str, lost_answer: LostAnswer, pg_cluster: TemporaryCluster) -> None:
    with Archive.open(lost_answer.url(url, pg_cluster.directory)) as archive:
        _, token = archive.add_token("intake", role="deposit", series=[S])
        client = TestClient(create_app(url, archive=archive))
        lost_answer.arm()
        lost = _deposit(client, token, "ruling-1")
        assert lost_answer.cut.is_set()
        said = _unknown(lost)
        assert "send the same request again with the same Idempotency-Key" in said, said
        assert _versions(url) == 1  # it landed: the client did not hear it
        again = _deposit(client, token, "ruling-1")
        assert again.status_code == 201, again.text  # type: ignore[attr-defined]
        assert again.headers["Idempotent-Replayed"] == "true"  # type: ignore[attr-defined]
        assert _versions(url) == 1  # nothing minted twice
        (name,) = [str(n) for n in archive.ls(series=S)]
        assert again.json()["pdi"] == name  # type: ignore[attr-defined]
        assert archive.get(name).data == BODY


def test_a_request_without_a_key_is_told_to_look_before_sending_it_again(
        url: str, lost_answer: LostAnswer, pg_cluster: TemporaryCluster) -> None:
    with Archive.open(lost_answer.url(url, pg_cluster.directory)) as archive:
        _, token = archive.add_token("intake", role="deposit", series=[S])
        client = TestClient(create_app(url, archive=archive))
        lost_answer.arm()
        said = _unknown(_deposit(client, token, None))
        assert lost_answer.cut.is_set()
        assert "this request had no Idempotency-Key, so sending it again may store it twice" in said, said
        assert "GET /api/ls?series=SERIES" in said, said
        # as it says: the listing shows the deposit there
        listed = client.get(f"/api/ls?series={S}")
        assert listed.status_code == 200, listed.text
        assert len(listed.json()["names"]) == 1
        assert _versions(url) == 1


def test_a_retry_with_the_same_key_after_a_commit_that_did_not_land_makes_the_write(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE FUNCTION pdi_test_at_commit() RETURNS trigger LANGUAGE plpgsql AS"
                     " $$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$")
        conn.execute("CREATE CONSTRAINT TRIGGER pdi_test_at_commit AFTER INSERT ON versions"
                     " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pdi_test_at_commit()")
    with Archive.open(url) as archive:
        _, token = archive.add_token("intake", role="deposit", series=[S])
        client = TestClient(create_app(url, archive=archive))
        _unknown(_deposit(client, token, "ruling-2"))
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP TRIGGER pdi_test_at_commit ON versions")
        assert _versions(url) == 0
        again = _deposit(client, token, "ruling-2")
        assert again.status_code == 201, again.text  # type: ignore[attr-defined]
        assert "Idempotent-Replayed" not in again.headers  # type: ignore[attr-defined]
        assert _versions(url) == 1
        assert archive.get(again.json()["pdi"]).data == BODY  # type: ignore[attr-defined]


def test_a_write_no_key_replays_is_not_told_that_its_key_would(url: str) -> None:
    """A withdrawal whose commit had an unknown outcome: ``/api/withdraw`` reads no Idempotency-Key (withdrawing
    again answers the tombstone, ``200``, not the first answer replayed), so its ``503`` says neither that the key it
    sent replays the first answer, nor that a retry may store it twice: look whether it was applied, then send it
    again."""
    with Archive.open(url) as archive:
        name = str(archive.add(S, BODY, format="text"))
        _, token = archive.add_token("curator", role="curate", series=[S])
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE FUNCTION pdi_test_at_commit() RETURNS trigger LANGUAGE plpgsql AS"
                     " $$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$")
        conn.execute("CREATE CONSTRAINT TRIGGER pdi_test_at_commit AFTER INSERT ON withdrawals"
                     " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pdi_test_at_commit()")
    with Archive.open(url) as archive:
        client = TestClient(create_app(url, archive=archive))
        for key in ("withdrawal-1", None):
            headers = {"Authorization": f"Bearer {token}"} | ({} if key is None else {"Idempotency-Key": key})
            said = _unknown(client.post("/api/withdraw", params={"pdi": name, "reason": "a test"}, headers=headers))
            assert "Idempotency-Key" not in said and "twice" not in said, said
            assert "look whether it was applied before sending it again" in said, said
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP TRIGGER pdi_test_at_commit ON withdrawals")
        again = client.post("/api/withdraw", params={"pdi": name, "reason": "a test"},
                            headers={"Authorization": f"Bearer {token}"})
        assert again.status_code == 201, again.text  # nothing landed: withdrawn now
