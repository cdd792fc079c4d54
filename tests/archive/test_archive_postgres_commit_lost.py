"""A PostgreSQL catalog's connection lost as a transaction is committed: the outcome is unknown, and pdi says so.

When the ``COMMIT`` (or a statement PostgreSQL commits on its own, a small
deposit's) gets no answer because the connection went, the server may have
committed before it went or not: no client can tell which from the failure
alone. pdi must then never say that nothing was applied (an operator who
believes it deposits or migrates again by hand); it says that the outcome is
unknown and how to find out. A failure the server answers (an error raised
at the commit, the connection still there) is a rollback, said as before.

The fault is real: a deferred constraint trigger, which PostgreSQL runs as
it commits, ends its own backend with ``pg_terminate_backend`` (as an
administrator, or a failover, would), so the client's ``COMMIT`` fails with
the connection gone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import click
import psycopg
import pytest
from click.testing import CliRunner

from pdi.archive import Archive, Content
from pdi.archive.postgres import open_postgres, servers
from pdi.archive.store import SCHEMA_VERSION
from pdi.cli import cli
from pdi.errors import CommitUnknownError, StoreError
from support.pgcluster import TemporaryCluster

S = "courts.gov.us"
_schemas = iter(range(1, 1 << 20))

#: Ends the backend that runs it, as its transaction commits (a deferred trigger runs at the COMMIT).
LOSE = ("CREATE FUNCTION pdi_test_at_commit() RETURNS trigger LANGUAGE plpgsql AS"
        " $$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$")
#: Refuses the transaction as it commits, the connection left as it was.
REFUSE = ("CREATE FUNCTION pdi_test_at_commit() RETURNS trigger LANGUAGE plpgsql AS"
          " $$ BEGIN RAISE EXCEPTION 'refused at the commit'; END $$")


def _at_commit(url: str, table: str, function: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(function)
        conn.execute(f"CREATE CONSTRAINT TRIGGER pdi_test_at_commit AFTER INSERT ON {table}"
                     " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pdi_test_at_commit()")


def _no_longer(url: str, table: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP TRIGGER pdi_test_at_commit ON {table}")
        conn.execute("DROP FUNCTION pdi_test_at_commit()")


def _count(url: str, sql: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(sql).fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture
def url(pg_cluster: TemporaryCluster) -> str:
    return pg_cluster.create_schema(f"pdi_commit_lost_{next(_schemas)}")


@pytest.fixture
def archive(url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Archive]:
    # a lost connection makes the pool ask the server again before the next transaction, here at once (not a
    # second later: until then a transaction is refused, pdi.archive.postgres.servers)
    monkeypatch.setattr(servers, "PROBE_EVERY_SECONDS", 0.0)
    opened = Archive.init(url)
    opened.add_series(S)
    try:
        yield opened
    finally:
        opened.close()


def _says_unknown(message: str) -> None:
    assert "whether it was applied is unknown" in message, message
    assert "nothing" not in message, message
    assert "pdi verify" in message, message  # how to find out
    assert "pdi ls --series SERIES" in message, message  # whether its name is there
    # how to do it again without a second name: the same --id, the same Idempotency-Key
    assert "same --id" in message and "same Idempotency-Key" in message, message
    named = set(re.findall(r"\bpdi ([a-z]+)", message))
    commands = set(cli.list_commands(click.Context(cli)))
    assert named and named <= commands, named - commands  # each a command there is ("pdi list" was none)


@pytest.mark.parametrize("size", [100, 200_000], ids=["committed-on-its-own", "the-long-way"])
def test_a_deposit_whose_commit_loses_the_connection_says_its_outcome_is_unknown(
        archive: Archive, url: str, size: int) -> None:
    # 100 octets: minted by one statement PostgreSQL commits on its own; 200,000 (not inline): in a transaction
    _at_commit(url, "versions", LOSE)
    with pytest.raises(CommitUnknownError) as caught:
        archive.deposit(S, [Content(b"x" * size, "text", "utf-8")])
    _says_unknown(caught.value.message)
    assert "terminating connection due to administrator command" in caught.value.message  # what the server said
    _no_longer(url, "versions")
    # here the server ended the transaction before it committed: looked at, the archive holds nothing of it
    assert _count(url, "SELECT COUNT(*) FROM versions") == 0
    assert archive.verify().ok
    again = archive.deposit(S, [Content(b"x" * size, "text", "utf-8")])  # and the pool has a live connection
    assert archive.get(again[0]).data == b"x" * size


def test_a_deposit_refused_at_its_commit_is_a_rollback_said_as_one(archive: Archive, url: str) -> None:
    _at_commit(url, "versions", REFUSE)
    with pytest.raises(StoreError) as caught:
        archive.deposit(S, [Content(b"y" * 200_000, "text", "utf-8")])
    assert not isinstance(caught.value, CommitUnknownError)
    assert "refused at the commit" in caught.value.message
    assert "unknown" not in caught.value.message
    _no_longer(url, "versions")
    assert _count(url, "SELECT COUNT(*) FROM versions") == 0


def test_pdi_add_whose_commit_loses_the_connection_exits_8_saying_the_outcome_is_unknown(
        archive: Archive, url: str) -> None:
    _at_commit(url, "versions", LOSE)
    result = CliRunner().invoke(cli, ["add", "-", "--format", "text", "--series", S, "--archive", url],
                                input=b"a line\n")
    assert result.exit_code == 8, (result.output, result.exception)
    assert result.stderr.startswith("pdi: storage error: "), result.stderr
    _says_unknown(result.stderr)


def _half_migrated(url: str) -> None:
    store = open_postgres(url, create=True, older="keep")
    try:
        store.migrate(SCHEMA_VERSION - 1)
    finally:
        store.close()


def test_a_migration_whose_commit_loses_the_connection_says_its_outcome_is_unknown(url: str) -> None:
    _half_migrated(url)
    _at_commit(url, "schema_migrations", LOSE)
    store = open_postgres(url, create=False, older="keep")
    try:
        with pytest.raises(CommitUnknownError) as caught:
            store.migrate()
    finally:
        store.close()
    said = caught.value.message
    assert said.startswith(f"migrating the archive at {store.location} from schema version {SCHEMA_VERSION - 1}"
                           f" to {SCHEMA_VERSION}: "), said
    assert "whether it was applied is unknown" in said, said
    assert f"at schema version {SCHEMA_VERSION - 1} or {SCHEMA_VERSION}" in said, said
    assert "nothing" not in said, said
    assert "terminating connection due to administrator command" in said, said
    _no_longer(url, "schema_migrations")
    # as the message says: pdi init again migrates it if it was not (here the server had not committed)
    assert "run pdi init --archive again, which says its version and migrates it" in said, said
    assert _count(url, "SELECT MAX(version) FROM schema_migrations") == SCHEMA_VERSION - 1
    reopened = Archive.init(url)
    try:
        assert reopened.store.schema_version() == SCHEMA_VERSION
    finally:
        reopened.close()


def test_a_migration_refused_at_its_commit_says_nothing_of_it_was_applied(url: str) -> None:
    _half_migrated(url)
    _at_commit(url, "schema_migrations", REFUSE)
    store = open_postgres(url, create=False, older="keep")
    try:
        with pytest.raises(StoreError) as caught:
            store.migrate()
    finally:
        store.close()
    assert not isinstance(caught.value, CommitUnknownError)
    assert (f"failed, and nothing of it was applied (it is still at schema version {SCHEMA_VERSION - 1})"
            in caught.value.message), caught.value.message
    assert "refused at the commit" in caught.value.message
    assert _count(url, "SELECT MAX(version) FROM schema_migrations") == SCHEMA_VERSION - 1
