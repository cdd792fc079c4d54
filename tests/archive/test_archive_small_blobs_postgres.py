"""Small blobs in a PostgreSQL catalog: written in the deposit's own transaction, read and checked as any other.

A blob of at most ``INLINE_LIMIT`` octets is one ``bytea`` in ``blobs.data``,
written by the catalog transaction that names it (no upload, nothing to clean
up afterwards); a larger one is uploaded in chunk rows before it. Either way
every read is checked against the chunk digests, and a refused deposit leaves
no row behind.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from pdi.archive import Archive, Content
from pdi.archive.blobs.inline import INLINE_LIMIT
from pdi.archive.postgres import PostgresStore
from pdi.errors import ImmutabilityError, IntegrityError
from support.pgcluster import TemporaryCluster

S = "oma.eop.gov.us"
_schemas = iter(range(1, 1 << 20))


@pytest.fixture
def pg(pg_cluster: TemporaryCluster) -> Iterator[Archive]:
    archive = Archive.init(pg_cluster.create_schema(f"pdi_small_blobs_{next(_schemas)}"))
    archive.add_series(S)
    try:
        yield archive
    finally:
        archive.close()


def _rows(archive: Archive, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    store = archive.store
    assert isinstance(store, PostgresStore)
    return store._query(sql, params)


def test_a_small_blob_is_written_with_its_deposit_and_no_upload(pg: Archive) -> None:
    data = b"a small text\n" * 10
    name = pg.add(S, data, format="text")
    sha = hashlib.sha256(data).hexdigest()
    assert _rows(pg, "SELECT upload, data FROM blobs WHERE sha256 = ?", (sha,)) == [(None, data)]
    assert _rows(pg, "SELECT count(*) FROM blob_uploads") == [(0,)]
    assert pg.get(str(name)).data == data
    assert pg.verify().ok


def test_the_limit_is_inclusive_and_a_larger_blob_is_uploaded(pg: Archive) -> None:
    at_limit = b"x" * INLINE_LIMIT
    over = b"y" * (INLINE_LIMIT + 1)
    pg.add(S, at_limit, format="octet-stream")
    name = pg.add(S, over, format="octet-stream")
    inline = {str(r[0]): r[1] for r in _rows(pg, "SELECT sha256, upload FROM blobs")}
    assert inline[hashlib.sha256(at_limit).hexdigest()] is None
    assert inline[hashlib.sha256(over).hexdigest()] is not None
    assert pg.get(str(name)).data == over


def test_a_flipped_octet_of_a_small_blob_is_refused_and_found_by_verify(pg: Archive) -> None:
    data = b"0123456789abcdef\n" * 40
    name = pg.add(S, data, format="text")
    sha = hashlib.sha256(data).hexdigest()
    _rows(pg, "UPDATE blobs SET data = set_byte(data, 100, get_byte(data, 100) # 1) WHERE sha256 = ?", (sha,))
    with pytest.raises(IntegrityError):
        pg.get(str(name))
    report = pg.verify()
    assert not report.ok
    assert any(sha in str(problem) for problem in report.problems)


def test_a_refused_deposit_leaves_no_small_blob(pg: Archive) -> None:
    pg.deposit(S, [Content(b"first\n", "text")], foreign_id="one")
    other = b"other bytes under the same id\n"
    with pytest.raises(ImmutabilityError):
        pg.deposit(S, [Content(other, "text")], foreign_id="one", force=True)
    assert _rows(pg, "SELECT count(*) FROM blobs WHERE sha256 = ?", (hashlib.sha256(other).hexdigest(),)) == [(0,)]
    assert _rows(pg, "SELECT count(*) FROM blob_uploads") == [(0,)]


def test_small_blobs_move_through_a_bag_and_are_removed_when_unreferenced(
    pg: Archive, pg_cluster: TemporaryCluster, tmp_path: Path
) -> None:
    data = b"kept through a bag\n"
    name = pg.add(S, data, format="text")
    pg.export_bag(tmp_path / "bag")
    with Archive.init(pg_cluster.create_schema(f"pdi_small_blobs_{next(_schemas)}")) as copy:
        assert copy.import_bag(tmp_path / "bag") == 1
        assert copy.get(str(name)).data == data
        sha = hashlib.sha256(data).hexdigest()
        # an import uploads every blob, however small (a page of a bag may bring thousands: none held in hand)
        assert _rows(copy, "SELECT upload IS NOT NULL, data IS NULL FROM blobs WHERE sha256 = ?", (sha,)) == [
            (True, True)]
        # a small blob no name holds (left by hand here) goes with the remover, as any other
        stray = b"no name holds this\n"
        stray_sha = hashlib.sha256(stray).hexdigest()
        _rows(copy, "INSERT INTO blobs (sha256, data) VALUES (?, ?)", (stray_sha, stray))
        assert copy.verify().unreferenced == [stray_sha]
        copy.remove_unreferenced(0)
        assert _rows(copy, "SELECT count(*) FROM blobs WHERE sha256 = ?", (stray_sha,)) == [(0,)]
        assert copy.get(str(name)).data == data
