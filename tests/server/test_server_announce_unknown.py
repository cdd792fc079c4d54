"""``pdi mirror sync --announce`` whose announcement's PostgreSQL commit had an unknown outcome: sent again once.

``POST /api/mirrors`` reads no Idempotency-Key: an announcement is recorded once however often it is sent (the
same series, address and keys again answer ``200``, and write no second row nor audit line), so the client
that sent it, told ``503`` (``/api#problem-commit-unknown``, ``Retry-After``), sends it again after the time
said, and is answered either way: ``200`` if the first landed (the commit made and its answer lost by a relay,
support.pglost), ``201`` if it did not (the backend ended inside the commit by a deferred trigger). Each against
a real resolver (uvicorn, in a thread) on a real PostgreSQL catalog.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from server_helpers import in_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.archive.catalog.mirrors import MirrorRecord
from pdi.archive.postgres import servers
from pdi.errors import RemoteError
from pdi.network import peers
from pdi.network.peers import key_text
from pdi.server import create_app
from pdi.server.http import problems
from pdi.server.http.loglines import RefusalLog
from pdi.signing import SigningKey
from support.pgcluster import TemporaryCluster
from support.pglost import LostAnswer

S = "mirrored.example.us"
B = "https://b.example.org"
_schemas = itertools.count(1)


@pytest.fixture
def url(pg_cluster: TemporaryCluster, monkeypatch: pytest.MonkeyPatch) -> str:
    # the pool asks a server it lost again at once, not a second later
    monkeypatch.setattr(servers, "PROBE_EVERY_SECONDS", 0.0)
    made = pg_cluster.create_schema(f"pdi_announce_unknown_{next(_schemas)}")
    with Archive.init(made) as archive:
        archive.add_series(S)
    return made


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits the client makes before sending again (recorded, not waited)."""
    waited: list[float] = []
    monkeypatch.setattr(peers, "_pause", waited.append)
    return waited


@contextmanager
def _serve(location: str, archive: Archive) -> Iterator[str]:
    with in_thread(create_app(location, archive=archive), host="127.0.0.1", port=0, log_level="warning") as server:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"


def _rows(url: str) -> tuple[int, int]:
    """The mirrors recorded and the audit lines of announcements."""
    with psycopg.connect(url) as conn:
        mirrors = conn.execute("SELECT COUNT(*) FROM mirrors").fetchone()
        audit = conn.execute("SELECT COUNT(*) FROM audit_log WHERE action = 'mirror-peer'").fetchone()
    assert mirrors is not None and audit is not None
    return int(mirrors[0]), int(audit[0])


def _origin(base: str) -> MirrorRecord:
    return MirrorRecord(S, base, "origin", "{}", "")


def test_an_announcement_whose_commit_landed_unheard_is_sent_again_and_recorded_once(
        url: str, lost_answer: LostAnswer, pg_cluster: TemporaryCluster, pauses: list[float]) -> None:
    with Archive.open(lost_answer.url(url, pg_cluster.directory)) as archive:
        _, token = archive.add_token("mirror-b", role="mirror", series=[S])
        with _serve(url, archive) as base:
            lost_answer.arm(b"INSERT INTO mirrors")
            new = peers.announce(_origin(base), B, [SigningKey.generate().public], token)
            assert lost_answer.cut.is_set()  # the first was committed, and its answer lost
            assert pauses == [5.0]  # sent again after the Retry-After the 503 said
            assert new is False  # the second is answered 200: recorded already (by the first)
            assert _rows(url) == (1, 1)


def test_an_announcement_whose_commit_did_not_land_is_sent_again_and_recorded_then(
        url: str, pauses: list[float]) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        # the first commit only: a sequence is not rolled back with the transaction the backend's end undoes
        conn.execute("CREATE SEQUENCE pdi_test_once")
        conn.execute("CREATE FUNCTION pdi_test_at_commit() RETURNS trigger LANGUAGE plpgsql AS"
                     " $$ BEGIN IF nextval('pdi_test_once') = 1 THEN PERFORM pg_terminate_backend(pg_backend_pid());"
                     " END IF; RETURN NULL; END $$")
        conn.execute("CREATE CONSTRAINT TRIGGER pdi_test_at_commit AFTER INSERT ON mirrors"
                     " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pdi_test_at_commit()")
    with Archive.open(url) as archive:
        _, token = archive.add_token("mirror-b", role="mirror", series=[S])
        with _serve(url, archive) as base:
            new = peers.announce(_origin(base), B, [SigningKey.generate().public], token)
            assert pauses == [5.0]
            assert new is True  # nothing landed the first time: recorded by the second
            assert _rows(url) == (1, 1)


def test_a_second_503_is_told_with_what_to_run_again(pauses: list[float]) -> None:
    """Sent again once only: a second ``503`` is a :class:`RemoteError` saying the announcement may have been
    recorded, and that announcing again (pdi mirror sync --announce) is safe; a ``Retry-After`` past
    :data:`peers.MAX_ANNOUNCE_WAIT` is waited that long only."""
    asked: list[bytes] = []

    async def unavailable(request: Request) -> Response:
        asked.append(await request.body())
        return JSONResponse({"type": "/api#problem-commit-unknown", "title": "storage error",
                             "detail": "whether it was applied is unknown"}, status_code=503,
                            headers={"Retry-After": "120"}, media_type="application/problem+json")

    app = Starlette(routes=[Route("/api/mirrors", unavailable, methods=["POST"])])
    with in_thread(app, host="127.0.0.1", port=0, log_level="warning") as server:
        base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        with pytest.raises(RemoteError) as caught:
            peers.announce(_origin(base), B, [SigningKey.generate().public], "pdi_token")
    assert len(asked) == 2 and asked[0] == asked[1]  # the same announcement, twice
    assert pauses == [peers.MAX_ANNOUNCE_WAIT]
    said = str(caught.value)
    assert "HTTP 503" in said and "whether it was applied is unknown" in said, said
    assert f"pdi mirror sync --announce {B}" in said and "recorded once" in said, said


def test_the_503_of_an_announcement_of_unknown_outcome_says_that_sending_it_again_is_safe(url: str) -> None:
    """Not "look whether it was applied" (where?): the same announcement again is answered either way."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE FUNCTION pdi_test_at_commit() RETURNS trigger LANGUAGE plpgsql AS"
                     " $$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$")
        conn.execute("CREATE CONSTRAINT TRIGGER pdi_test_at_commit AFTER INSERT ON mirrors"
                     " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pdi_test_at_commit()")
    with Archive.open(url) as archive:
        _, token = archive.add_token("mirror-b", role="mirror", series=[S])
        body = {"series": S, "base_url": B, "keys": json.loads(key_text([SigningKey.generate().public]))}
        answer = TestClient(create_app(url, archive=archive)).post(
            "/api/mirrors", json=body, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 503 and answer.headers["Retry-After"] == "5", answer.text
    problem = answer.json()
    assert problem["type"] == "/api#problem-commit-unknown", problem
    assert problem["detail"] == (
        "the connection to the catalog's database was lost as this write was committed, so whether it was applied"
        " is unknown: send the same request again: an announcement recorded already is answered 200 and is not"
        " recorded twice; one that was not is recorded now (201)"), problem


def _logged(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.name == "pdi.server")


def test_the_log_of_an_announcement_of_unknown_outcome_gives_its_routes_advice_not_a_deposits(
        url: str, lost_answer: LostAnswer, pg_cluster: TemporaryCluster, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's log line says what was lost where (the catalog's place, which the answer does not) and what
    the client is told to do, as the ``503`` does: not a deposit's ``pdi add again … --id``."""
    monkeypatch.setattr(problems, "_STORE_ERRORS", RefusalLog(done="storage errors"))  # a line a second: this one
    with Archive.open(lost_answer.url(url, pg_cluster.directory)) as archive:
        _, token = archive.add_token("mirror-b", role="mirror", series=[S])
        body = {"series": S, "base_url": B, "keys": json.loads(key_text([SigningKey.generate().public]))}
        client = TestClient(create_app(url, archive=archive))
        lost_answer.arm(b"INSERT INTO mirrors")
        with caplog.at_level(logging.WARNING, logger="pdi.server"):
            answer = client.post("/api/mirrors", json=body, headers={"Authorization": f"Bearer {token}"})
        assert lost_answer.cut.is_set() and answer.status_code == 503, answer.text
    logged = _logged(caplog)
    assert "(POST /api/mirrors)" in logged and str(lost_answer.directory) in logged, logged  # where it was lost
    assert "send the same request again" in logged and "answered 200" in logged, logged
    assert "pdi add" not in logged and "--id" not in logged, logged


def test_a_withdrawal_of_an_announcement_of_unknown_outcome_says_that_sending_it_again_is_safe(
        url: str, lost_answer: LostAnswer, pg_cluster: TemporaryCluster, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``DELETE /api/mirrors`` forgets a peer once: sent again, ``404`` says the first landed, ``204`` that it did
    not and is made now. So its ``503`` says to send it again (not "look whether it was applied": where?), and so
    does the log."""
    monkeypatch.setattr(problems, "_STORE_ERRORS", RefusalLog(done="storage errors"))
    with Archive.open(lost_answer.url(url, pg_cluster.directory)) as archive:
        _, token = archive.add_token("mirror-b", role="mirror", series=[S])
        body = {"series": S, "base_url": B, "keys": json.loads(key_text([SigningKey.generate().public]))}
        client = TestClient(create_app(url, archive=archive))
        told = {"Authorization": f"Bearer {token}"}
        assert client.post("/api/mirrors", json=body, headers=told).status_code == 201
        lost_answer.arm(b"DELETE FROM mirrors")
        with caplog.at_level(logging.WARNING, logger="pdi.server"):
            answer = client.delete("/api/mirrors", params={"series": S, "base_url": B}, headers=told)
        assert lost_answer.cut.is_set()
        assert answer.status_code == 503 and answer.headers["Retry-After"] == "5", answer.text
        problem = answer.json()
        assert problem["type"] == "/api#problem-commit-unknown", problem
        assert problem["detail"] == (
            "the connection to the catalog's database was lost as this write was committed, so whether it was"
            " applied is unknown: send the same request again: 404 then says the peer was forgotten already (by the"
            " first), 204 that it is forgotten now"), problem
        again = client.delete("/api/mirrors", params={"series": S, "base_url": B}, headers=told)
        assert again.status_code == 404, again.text  # as it says: the first landed, unheard
        assert _rows(url)[0] == 0
    logged = _logged(caplog)
    assert "(DELETE /api/mirrors)" in logged and "send the same request again: 404" in logged, logged
    assert "pdi add" not in logged and "--id" not in logged, logged
