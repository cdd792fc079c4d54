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
deletes at the end; if the session is killed first, the cluster's guard
stops and deletes it (``tests/support/pgguard.py``). When the server binaries are missing the fixture fails
with a message saying to run ``scripts/bootstrap``: these tests are never
skipped.

Subprocesses: every ``python -m pdi`` or ``python -c`` a test starts runs the
checkout under test, not whatever copy of pdi is installed: this tree's
``src`` goes first on ``PYTHONPATH`` for the whole session. In CI
(``scripts/test`` with ``PDI_TEST_INSTALLED=1``) the pdi under test is the
installed wheel, and ``src`` stays off the path (:mod:`support.checkout`).

Parallel runs (``scripts/test`` runs pytest-xdist workers, ``-n``): every
session fixture is per worker. Each worker starts its own PostgreSQL cluster
(its own directory under ``/tmp`` and a unix socket in it), its own Swift
node (on free ports, ``pdi._ports.free_port``) and its own Chromium (over a
pipe, with its own profile directory); ``tmp_path`` and
``tmp_path_factory`` are per worker too. Nothing listens on a fixed port or
writes to a fixed path.

Markers, set here from what a test uses and where it lives (registered in
``pyproject.toml``), so they need no list kept by hand:

- ``postgres``: it uses the throw-away PostgreSQL cluster (``pg_cluster``,
  directly or through a fixture, or a ``postgres`` parameter of
  ``location``);
- ``swift``: it uses the Swift node (``swift_node``);
- ``browser``: its module drives Chromium (it holds
  ``pdi.capture.browser``'s ``devtools`` or ``Pipe``);
- ``quick``: ``scripts/test --quick``'s subset (``-m quick``): the pure cores
  (the modules directly in ``tests/``) and the archive (``tests/archive/``),
  without any test marked ``postgres``, ``swift``, ``browser``, ``fuzz`` or
  ``slow``. The server, capture, interop, fuzz and support tests are not in
  it. ``slow`` is set by hand on a test that takes tens of seconds (a
  hundred thousand names, a gigabyte, a minute of Chromium): it is not in
  the quick subset, and its module is handed out first in a parallel run.
"""

from __future__ import annotations

import datetime
import itertools
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from pdi.archive import Archive
from pdi.capture.browser import Pipe, devtools
from support.checkout import INSTALLED, SRC
from support.pgcluster import TemporaryCluster
from support.pglost import LostAnswer

settings.register_profile("pdi", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "pdi-ci",
    parent=settings.get_profile("pdi"),
    derandomize=True,
    print_blob=True,
)
settings.load_profile("pdi-ci" if os.environ.get("CI") == "true" else "pdi")

if not INSTALLED:
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(SRC), *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(SRC))]
    )


_databases = itertools.count(1)

TESTS = Path(__file__).resolve().parent
#: The folders of ``scripts/test --quick``: the pure cores (the modules directly in tests/) and the archive.
QUICK_FOLDERS = (TESTS, TESTS / "archive")
#: Markers that keep a test out of the quick subset.
NOT_QUICK = ("postgres", "swift", "browser", "fuzz", "slow")


def _drives_chromium(module: object) -> bool:
    return any(value is devtools or value is Pipe for value in vars(module).values())


#: Where the tests' temporary folders go when the system's temporary folder is on a file system that never writes
#: a page back (tmpfs: Debian 13 mounts /tmp so): a folder on disk the FHS keeps for temporary files.
ON_DISK_TEMP = Path("/var/tmp")


def _written_back(folder: str | Path) -> bool:
    from pdi.archive.blobs.memo import written_back

    fd = os.open(folder, os.O_RDONLY)
    try:
        return written_back(fd)
    finally:
        os.close(fd)


def pytest_configure(config: pytest.Config) -> None:
    """The tests' temporary folders (``tmp_path``) on a file system that writes its pages back, as an archive's are:
    ``pdi serve``'s fixity memo remembers nothing of a blob file on tmpfs (:mod:`pdi.archive.blobs.memo`), so its
    tests need files on disk. Where the system's temporary folder is a tmpfs (and no ``--basetemp`` is given), the
    run's are made in :data:`ON_DISK_TEMP` instead, and removed at the end of a run that passed. (pytest-xdist's
    workers are given their folders under the one chosen here.)"""
    import tempfile

    if config.option.basetemp is not None or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if _written_back(tempfile.gettempdir()) or not ON_DISK_TEMP.is_dir() or not _written_back(ON_DISK_TEMP):
        return
    config.option.basetemp = tempfile.mkdtemp(prefix="pdi-tests-", dir=ON_DISK_TEMP)
    config.stash[_ON_DISK] = config.option.basetemp


_ON_DISK = pytest.StashKey[str]()


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_ON_DISK, None)
    if folder is not None and getattr(config, "_pdi_passed", False):
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config._pdi_passed = exitstatus == 0  # type: ignore[attr-defined]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m quick``, the folders that hold no quick test are not even imported (seconds off the start)."""
    if config.getoption("markexpr") != "quick" or not collection_path.is_dir():
        return None
    if collection_path in QUICK_FOLDERS or TESTS not in collection_path.parents:
        return None
    return True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test ``postgres``, ``swift``, ``browser`` by what it uses, and ``quick`` by where it lives (see above).

    Then the modules that hold a ``slow`` test go first, each still whole and in its own order: under
    pytest-xdist (``--dist loadfile``, modules handed out in collection order) they start at once, beside
    each other, rather than last, alone, while the other workers have finished.
    """
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        callspec = getattr(item, "callspec", None)
        parameters = callspec.params.values() if callspec is not None else ()
        if "pg_cluster" in fixtures or any(isinstance(v, str) and v == "postgres" for v in parameters):
            item.add_marker("postgres")
        if "swift_node" in fixtures:
            item.add_marker("swift")
        module = getattr(item, "module", None)
        if module is not None and _drives_chromium(module):
            item.add_marker("browser")
        if item.path.parent in QUICK_FOLDERS and not any(item.get_closest_marker(m) for m in NOT_QUICK):
            item.add_marker("quick")
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)  # stable: every module keeps its order


@pytest.fixture(autouse=True)
def _no_metrics_folder_left() -> Iterator[None]:
    """``pdi serve`` run in this process (``main(["serve", …])`` in a test) names its metrics folder in
    ``PROMETHEUS_MULTIPROC_DIR`` for its workers, and removes the folder when it stops; the variable would stay, and a
    later test's child process (on the same xdist worker) opened counters in the removed folder
    (``FileNotFoundError``, found in CI 2026-12-01 by tests/server/test_server_warm.py). Each test ends with the
    variable as it began."""
    before = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    yield
    if before is None:
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
    else:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = before


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[TemporaryCluster]:
    cluster = TemporaryCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def lost_answer(pg_cluster: TemporaryCluster) -> Iterator[LostAnswer]:
    """A relay to the cluster's socket that drops the server's answer to a COMMIT it made (tests/support/pglost.py):
    a write whose outcome the client cannot know, though it landed."""
    relay = LostAnswer(pg_cluster.directory)
    try:
        yield relay
    finally:
        relay.close()


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


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs mounted for the test (the tests run as root), unmounted after: a disk that fills on demand."""
    point = tmp_path / "small"
    point.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(point)], check=True, timeout=30)
    try:
        yield point
    finally:
        subprocess.run(["umount", str(point)], check=True, timeout=30)
