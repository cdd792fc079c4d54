"""A :class:`TemporaryCluster` ends with the process that made it, even one killed before its teardown ran.

Each test starts its clusters in child Python processes through the same support code the fixtures use,
kills a child with ``SIGKILL`` (nothing of it runs after that: no ``finally``, no ``atexit``), and then looks
from outside: the pid in the cluster's ``postmaster.pid`` no longer runs, libpq's connection to the cluster's
socket is refused, and its directory is gone. Whatever a test leaves running when it fails is stopped in its
``finally``, with ``pg_ctl`` directly, not with the code under test.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pdi.errors import StoreError
from support import pgguard
from support.pgcluster import TemporaryCluster, find_bindir

TESTS = Path(__file__).resolve().parents[1]

#: A child that makes and starts a cluster, says where, waits for its stdin to close, then stops it as a fixture does.
#: With the argument ``bouncer``, pgbouncer in front of it too.
CHILD = """
import json, sys
from support.pgcluster import TemporaryBouncer, TemporaryCluster
cluster = TemporaryCluster().start()
bouncer = TemporaryBouncer(cluster, "postgres").start() if sys.argv[1:] == ["bouncer"] else None
guard = getattr(cluster, "_guard", None)
print(json.dumps({"directory": str(cluster.directory), "guard": guard.pid if guard else None,
                  "bouncer": bouncer._process.pid if bouncer and bouncer._process else None}), flush=True)
sys.stdin.read()
if bouncer:
    bouncer.stop()
cluster.stop()
print(json.dumps({"guard_exit": guard.returncode if guard else None}), flush=True)
"""

#: How long a cluster may take to go once its maker is killed.
BOUND = 60.0


@dataclass
class Child:
    process: subprocess.Popen[str]
    directory: Path
    guard: int | None
    postmaster: int
    bouncer: int | None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@/postgres?host={self.directory}"


def running(pid: int) -> bool:
    """The process exists and has not ended (``/proc``'s state: a zombie, ended and not yet reaped by a parent
    that never reaps, as the postmaster's ``init`` here may be, runs no more)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] not in ("Z", "X")


def refused(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=5):
            return False
    except psycopg.OperationalError:
        return True


def readline(process: subprocess.Popen[str], seconds: float = 240) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], seconds)
    assert ready, f"the child said nothing within {seconds:g} s"
    line = process.stdout.readline()
    assert line, f"the child ended ({process.wait()}): {process.stderr.read() if process.stderr else ''}"
    return line


def start_child(*arguments: str) -> Child:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))])
    process = subprocess.Popen([sys.executable, "-c", CHILD, *arguments], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    said = json.loads(readline(process))
    directory = Path(said["directory"])
    postmaster = int((directory / "data" / "postmaster.pid").read_text().split("\n", 1)[0])
    return Child(process, directory, said["guard"], postmaster, said["bouncer"])


def wait_until(condition: object, seconds: float = BOUND) -> bool:
    assert callable(condition)
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def clean_up(child: Child) -> None:
    """Whatever a failed test left: the child, its guard, its server (``pg_ctl``, as the server's user), its directory."""
    if child.process.poll() is None:
        child.process.kill()
    child.process.wait()
    for stream in (child.process.stdin, child.process.stdout, child.process.stderr):
        if stream is not None:
            stream.close()
    if child.guard is not None and running(child.guard):
        os.kill(child.guard, signal.SIGKILL)
    if child.bouncer is not None and running(child.bouncer):
        os.kill(child.bouncer, signal.SIGKILL)
    if running(child.postmaster):
        owner = child.directory.stat()
        user: dict[str, Any] = {"user": owner.st_uid, "group": owner.st_gid, "extra_groups": []} if os.geteuid() == 0 else {}
        subprocess.run([str(find_bindir() / "pg_ctl"), "-D", str(child.directory / "data"), "-m", "immediate",
                        "-w", "stop"], capture_output=True, check=False, timeout=90, cwd="/", **user)
    shutil.rmtree(child.directory, ignore_errors=True)


@pytest.fixture
def children() -> Iterator[list[Child]]:
    made: list[Child] = []
    try:
        yield made
    finally:
        for child in made:
            clean_up(child)


def test_a_killed_process_s_cluster_stops_and_goes_and_another_process_s_cluster_stays(children: list[Child]) -> None:
    killed = start_child()
    children.append(killed)
    other = start_child()
    children.append(other)
    for child in (killed, other):
        assert running(child.postmaster) and not refused(child.url)

    killed.process.send_signal(signal.SIGKILL)
    killed.process.wait()

    assert wait_until(lambda: not running(killed.postmaster)), f"the postmaster {killed.postmaster} still runs"
    assert refused(killed.url)
    assert wait_until(lambda: not killed.directory.exists()), f"{killed.directory} is still there"
    # the other process lives: its cluster (its own guard, waiting on that process alone) is untouched
    assert running(other.postmaster) and not refused(other.url) and other.directory.is_dir()

    # and its teardown, as before: the server stopped, the directory deleted, the guard dismissed and gone
    assert other.process.stdin is not None
    other.process.stdin.close()
    assert json.loads(readline(other.process)) == {"guard_exit": 0}
    assert other.process.wait(timeout=BOUND) == 0
    assert not running(other.postmaster) and refused(other.url) and not other.directory.exists()
    assert other.guard is not None and not running(other.guard)


def test_a_killed_process_s_pgbouncer_ends_with_its_cluster(children: list[Child]) -> None:
    killed = start_child("bouncer")
    children.append(killed)
    assert killed.bouncer is not None and running(killed.bouncer)
    through = f"postgresql://postgres@/postgres?host={killed.directory / 'bouncer-postgres'}&port=6432"
    assert not refused(through)

    killed.process.send_signal(signal.SIGKILL)
    killed.process.wait()

    assert wait_until(lambda: not running(killed.bouncer or 0)), f"pgbouncer {killed.bouncer} still runs"
    assert wait_until(lambda: not running(killed.postmaster)) and refused(killed.url)
    assert wait_until(lambda: not killed.directory.exists())


def test_a_cluster_whose_guard_was_killed_too_is_swept_by_the_next_cluster_once_its_owner_is_gone(
        children: list[Child]) -> None:
    orphan = start_child()
    children.append(orphan)
    assert orphan.guard is not None
    os.kill(orphan.guard, signal.SIGKILL)  # as a kill of every process of the run could
    assert wait_until(lambda: not running(orphan.guard or 0))
    without_record = Path(tempfile.mkdtemp(prefix="pdi-pg-", dir=orphan.directory.parent))  # as one made before
    try:
        # its owner still runs: the next cluster made leaves it alone
        TemporaryCluster().stop()
        assert running(orphan.postmaster) and not refused(orphan.url)

        orphan.process.send_signal(signal.SIGKILL)
        orphan.process.wait()
        time.sleep(1)
        assert running(orphan.postmaster), "nothing but the sweep should have ended it (its guard is dead)"

        TemporaryCluster().stop()  # what the pg_cluster fixture does first: its owner is gone, so it goes
        assert not running(orphan.postmaster)
        assert refused(orphan.url)
        assert not orphan.directory.exists()
        assert without_record.is_dir()  # no owner recorded: not known to be anyone's leftover
    finally:
        shutil.rmtree(without_record, ignore_errors=True)


def record(directory: Path, **changes: object) -> Path:
    pgguard.write_owner(directory)
    written = json.loads((directory / pgguard.OWNER).read_text())
    (directory / pgguard.OWNER).write_text(json.dumps({**written, **changes}))
    return directory


def a_pid_that_ended() -> int:
    process = subprocess.Popen(["true"])
    process.wait()  # reaped: the pid is free (and, with 32,768 of them, not given again within the test)
    return process.pid


def own_start_time() -> int:
    # /proc/self/stat's 22nd field; the command name (2nd) is in parentheses
    stat = Path("/proc/self/stat").read_text()
    return int(stat[stat.rindex(")") + 2:].split()[19])


def test_an_owner_is_gone_only_when_known_to_be(tmp_path: Path) -> None:
    cases: dict[str, tuple[dict[str, Any], bool]] = {
        "this process": ({}, False),
        "an ended process": ({"pid": a_pid_that_ended()}, True),
        "this pid, begun at another time (given again since)": ({"started": own_start_time() - 1}, True),
        "this pid, begun at its time": ({"started": own_start_time()}, False),
        "a pid of another pid namespace": ({"pid": a_pid_that_ended(), "pid_namespace": "pid:[1]"}, False),
    }
    for name, (changes, gone) in cases.items():
        directory = tmp_path / name.replace(" ", "-")
        directory.mkdir()
        assert pgguard.owner_gone(record(directory, **changes)) is gone, name
    no_record = tmp_path / "no-record"
    no_record.mkdir()
    assert not pgguard.owner_gone(no_record)
    (no_record / pgguard.OWNER).write_text('{"pid": ')  # half written
    assert not pgguard.owner_gone(no_record)


def test_a_cluster_whose_server_does_not_start_is_deleted_at_once() -> None:
    cluster = TemporaryCluster(settings={"no_such_setting": "1"})  # the server refuses a name it does not know
    with pytest.raises(StoreError, match="pg_ctl failed"), cluster:
        pass
    assert not cluster.directory.exists()
    assert cluster._guard.returncode == 0  # dismissed: it had nothing left to do
