"""The blobs of a deposit whose PostgreSQL commit had an unknown outcome: kept if its rows landed, swept if not.

A deposit stages its blob (a large object's upload in the database, an object in S3) before the catalog
transaction that names it. When that transaction's ``COMMIT`` loses its connection, the rows may have landed
or not. Either way the deposit says the outcome is unknown (``CommitUnknownError``), not the pool's refusal of
the clean-up that follows (a server found gone is not asked again for a second, pdi.archive.postgres.servers:
the discard of the staged blob is refused, and its refusal said "try again shortly", which invites a retry that
mints a second name). If the rows landed, the blob is the deposit's and neither the failed deposit's clean-up
nor ``pdi verify --remove-unreferenced`` takes it; if not, it is an orphan, and the remover takes it (once its
staging row is older than a killed deposit's, :data:`pdi.archive.catalog.blobs.STAGING_LIFETIME`).

Two real faults: the backend ended inside the commit (a deferred trigger, as in
test_archive_postgres_commit_lost.py: not committed), and the server's answer to a commit it made cut by a relay
(support.pglost: committed). Real stores: PostgreSQL's large objects, and the Swift node's S3.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import time

import boto3
import psycopg
import pytest

from pdi.archive import Archive, Content
from pdi.archive.blobs.s3 import S3Location
from pdi.errors import CommitUnknownError
from support.pgcluster import TemporaryCluster
from support.pglost import LostAnswer

S = "courts.gov.us"
SIZE = 200_000  # larger than a blob kept in the catalog's rows: an upload, or an object
_schemas = itertools.count(1)

LOSE = ("CREATE FUNCTION pdi_test_at_commit() RETURNS trigger LANGUAGE plpgsql AS"
        " $$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$")


def _count(url: str, sql: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(sql).fetchone()
    assert row is not None
    return int(row[0])


def _objects(s3: str) -> set[str]:
    where = S3Location.parse(s3)
    client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    found: set[str] = set()
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=where.bucket, Prefix=where.prefix):
        found |= {item["Key"][len(where.prefix):] for item in page.get("Contents", [])}
    return found


@pytest.fixture
def url(pg_cluster: TemporaryCluster) -> str:
    return pg_cluster.create_schema(f"pdi_commit_blobs_{next(_schemas)}")


def _stored(url: str, s3: str | None) -> set[str]:
    """The SHA-256 of every blob the store holds (named or not), straight from it: the bucket's objects, or the
    catalog's ``blobs`` rows and the uploads no such row names yet."""
    if s3 is not None:
        return {key for key in _objects(s3) if "/" not in key}
    with psycopg.connect(url) as conn:
        named = {str(r[0]) for r in conn.execute("SELECT sha256 FROM blobs")}
        uploads = int(conn.execute("SELECT COUNT(*) FROM blob_uploads u WHERE NOT EXISTS"
                                   " (SELECT 1 FROM blobs b WHERE b.upload = u.id)").fetchone()[0])  # type: ignore[index]
    return named | {f"upload-{n}" for n in range(uploads)}


def _a_day_later(url: str) -> None:
    """As the remover finds the staging rows of a deposit that could not drop its own: older than a killed one's."""
    with psycopg.connect(url) as conn:
        conn.execute("UPDATE blob_stagings SET started_at = '2000-01-01T00:00:00.000000Z'")


@pytest.mark.parametrize("store", ["large-objects", "s3"])
@pytest.mark.parametrize("landed", [False, True], ids=["not-committed", "committed"])
def test_a_deposit_of_unknown_outcome_keeps_its_blob_if_it_landed_and_the_remover_takes_it_if_not(
        url: str, lost_answer: LostAnswer, pg_cluster: TemporaryCluster, store: str, landed: bool,
        request: pytest.FixtureRequest) -> None:
    s3 = request.getfixturevalue("s3_blobs") if store == "s3" else None
    octets = os.urandom(SIZE)
    digest = hashlib.sha256(octets).hexdigest()
    with Archive.init(url, blobs=s3) as made:
        made.add_series(S)
    before = _stored(url, s3)
    # the deposit's archive goes through the relay (committed) or straight to the server (its backend ended)
    through = lost_answer.url(url, pg_cluster.directory) if landed else url
    if landed:
        lost_answer.arm()
    else:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(LOSE)
            conn.execute("CREATE CONSTRAINT TRIGGER pdi_test_at_commit AFTER INSERT ON versions"
                         " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pdi_test_at_commit()")
    with Archive.open(through) as archive, pytest.raises(CommitUnknownError) as caught:
        archive.deposit(S, [Content(octets, "octet-stream")])
    assert "whether it was applied is unknown" in caught.value.message, caught.value.message
    assert "try again shortly" not in caught.value.message, caught.value.message
    assert lost_answer.cut.is_set() is landed
    if not landed:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP TRIGGER pdi_test_at_commit ON versions")
            conn.execute("DROP FUNCTION pdi_test_at_commit()")
    assert _count(url, "SELECT COUNT(*) FROM versions") == int(landed)
    _a_day_later(url)
    if s3 is not None:
        time.sleep(1.1)  # S3 dates objects to the second (Swift rounds up): let "older than 0 s" be true
    with Archive.open(url) as archive:
        removed = archive.remove_unreferenced(older_than=0)
        if landed:
            assert digest not in removed, removed
        report = archive.verify()
        assert report.ok, report
        if landed:  # the deposit's name holds its octets, whole
            (name,) = [str(n) for n in archive.ls(series=S)]
            assert archive.get(name).data == octets
            assert _stored(url, s3) == before | {digest}
        else:
            assert _stored(url, s3) == before
            again = archive.deposit(S, [Content(octets, "octet-stream")])  # and it deposits as ever
            assert archive.get(again[0]).data == octets
