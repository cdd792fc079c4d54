"""Fixtures for the archive tests: every store-level test runs against both stores.

``location`` (an empty archive of each kind) and the PostgreSQL cluster
behind it are in ``tests/conftest.py``, so that the server's tests share them.
"""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Iterator

import pytest
from archive_helpers import Clock

from pdi.archive import Archive
from support.swiftnode import TemporarySwift

_buckets = itertools.count(1)


@pytest.fixture(scope="session")
def swift_node() -> Iterator[TemporarySwift]:
    """A one-node OpenStack Swift speaking S3 (its s3api), for the whole session."""
    node = TemporarySwift()
    try:
        node.start()
        yield node
    finally:
        node.stop()


@pytest.fixture
def s3_blobs(swift_node: TemporarySwift, monkeypatch: pytest.MonkeyPatch) -> str:
    """``s3://BUCKET/archive/`` of a fresh, empty bucket on the Swift node, its endpoint and keys in the environment."""
    import boto3
    from botocore.config import Config

    for variable, value in swift_node.environment().items():
        monkeypatch.setenv(variable, value)
    bucket = f"pdi-test-{next(_buckets)}"
    # Swift's account server answers 503 SlowDown while its database is busy (a loaded machine): retried, as pdi's own client does
    client = boto3.client("s3", endpoint_url=swift_node.endpoint, config=Config(retries={"mode": "standard", "max_attempts": 10}))
    client.create_bucket(Bucket=bucket)
    return f"s3://{bucket}/archive/"




@pytest.fixture
def s3_archive(location: str, s3_blobs: str, request: pytest.FixtureRequest) -> Iterator[Archive]:
    """A new archive at ``location`` whose blobs are in ``s3_blobs``, with the test module's series ``S``."""
    opened = Archive.init(location, blobs=s3_blobs)
    opened.add_series(request.module.S)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC))


@pytest.fixture
def archive(location: str, clock: Clock) -> Iterator[Archive]:
    """An initialized archive at ``location`` with the series ``oma.eop.gov.us`` registered."""
    opened = Archive.init(location, clock=clock)
    opened.add_series("oma.eop.gov.us")
    try:
        yield opened
    finally:
        opened.close()
