"""Test-wide settings.

Hypothesis: no per-example deadline and no "too slow" health check anywhere,
because the suite runs on a shared 2-core machine where a slow example says
nothing about the code (speed is measured in ``bench/``, never in tests).
Under CI (``CI=true``) the examples are derived from each test's name
(``derandomize``), so CI runs the same cases every time and a submission
cannot fail on a case no developer run ever saw; developers' runs stay
random and keep exploring.

PostgreSQL: ``location`` gives every test that asks for it an empty archive
of each kind, a directory and a fresh schema in a throw-away cluster this
session creates in a temporary directory (``tests/support/pgcluster.py``) and
deletes at the end. When the server binaries are missing the fixture fails
with a message saying to run ``scripts/bootstrap``: these tests are never
skipped.

Subprocesses: every ``python -m pdi`` or ``python -c`` a test starts runs the
checkout under test, not whatever copy of pdi is installed: this tree's
``src`` goes first on ``PYTHONPATH`` for the whole session.
"""

from __future__ import annotations

import datetime
import itertools
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from pdi.archive import Archive
from support.pgcluster import TemporaryCluster

settings.register_profile("pdi", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "pdi-ci",
    parent=settings.get_profile("pdi"),
    derandomize=True,
    print_blob=True,
)
settings.load_profile("pdi-ci" if os.environ.get("CI") == "true" else "pdi")

SRC = Path(__file__).resolve().parent.parent / "src"
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(SRC), *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(SRC))]
)


_databases = itertools.count(1)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[TemporaryCluster]:
    cluster = TemporaryCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty archive location of each kind: a directory, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "archive")
    cluster: TemporaryCluster = request.getfixturevalue("pg_cluster")
    return cluster.create_schema(f"pdi_test_{next(_databases)}")


@pytest.fixture
def one_gmt_day(monkeypatch: pytest.MonkeyPatch) -> datetime.datetime:
    """Every archive this process opens or makes (the ``pdi`` command under ``CliRunner`` too) runs on a clock
    that starts at noon GMT of today's date and runs on from there: returned, its start.

    For a test whose commands must fall on one GMT day (a second capture or
    ``--id`` deposit that must find the first): with the wall clock, midnight
    could fall between two of them (scripts/midnight makes it fall).
    """
    start = datetime.datetime.now(datetime.UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    began = time.monotonic()

    def clock() -> datetime.datetime:
        return start + datetime.timedelta(seconds=time.monotonic() - began)

    for name in ("open", "init"):
        real: Callable[..., Archive] = getattr(Archive, name).__func__

        def opened(cls: type[Archive], *args: object, _real: Callable[..., Archive] = real, **kwargs: object) -> Archive:
            kwargs.setdefault("clock", clock)
            return _real(cls, *args, **kwargs)

        monkeypatch.setattr(Archive, name, classmethod(opened))
    return start
