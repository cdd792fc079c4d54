"""A :class:`~support.pgcluster.TemporaryCluster` dies with the process that started it, however that process dies.

A fixture's teardown does not run when pytest is killed (``SIGKILL``, a CI
deadline): its cluster's server went on running, holding its shared memory,
its socket and its directory under ``/tmp``, and each killed run left one
more. Two things end such a cluster now:

- a guard: a small process started beside each cluster (:func:`start_guard`),
  in a session of its own (a Ctrl-C or a signal to pytest's process group
  does not reach it), whose standard input is the read end of a pipe whose
  write end only the starting process holds (not inherited by what it runs:
  Python's descriptors are close-on-exec). When that process ends, in any
  way, the kernel closes the write end and the guard's read returns end of
  file: it stops the server (``pg_ctl stop -m immediate``) and any pgbouncer
  in front of it (by its pid file there), and deletes the directory. The
  cluster's :meth:`~support.pgcluster.TemporaryCluster.stop` writes one octet
  first, and the guard leaves without doing anything. Each
  process (each pytest-xdist worker) has its own guard for each of its
  clusters: nothing waits on another process.
- an owner record: each cluster's directory holds ``owner``, the process that
  made it (its pid, its start time, its pid namespace). :func:`sweep` (run
  before each new cluster is made) ends the clusters under ``/tmp/pdi-pg-*``
  whose owner is gone, for those whose guard was killed too; a cluster whose
  owner still runs, or with no record (made before this, or by another
  user), or whose owner lives in another pid namespace, is left alone.

A server is signalled only if it is still the one of that directory: the pid
in ``postmaster.pid`` is alive and its working directory is the data
directory (a postmaster's is), never a process that was given the pid after
the server ended.

Only the standard library: the guard runs as ``python -I`` of this file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: The owner record in a cluster's directory.
OWNER = "owner"
#: The pid file of each pgbouncer in front of the cluster (``bouncer-DATABASE/``, :class:`~support.pgcluster.TemporaryBouncer`).
BOUNCER_PID = "pgbouncer.pid"
#: What :meth:`~support.pgcluster.TemporaryCluster.stop` writes to the guard: done, leave everything as it is.
DISMISS = b"x"


def _start_time(pid: int) -> int | None:
    """When the process began, in clock ticks since boot (``/proc/PID/stat``'s 22nd field); None without ``/proc``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (2nd field) is in parentheses and may hold spaces or parentheses: read after the last ")"
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[19])  # fields[0] is the 3rd field, the state


def _pid_namespace() -> str | None:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def _running(pid: int) -> bool:
    """The process exists and has not ended (a zombie, ended but not yet reaped, holds nothing: not running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2:].split()[0] not in ("Z", "X")


def write_owner(directory: Path) -> None:
    """Record in ``directory`` that this process made it (written whole, then renamed into place)."""
    record = {"pid": os.getpid(), "started": _start_time(os.getpid()), "pid_namespace": _pid_namespace()}
    part = directory / f".{OWNER}.part"
    part.write_text(json.dumps(record))
    part.replace(directory / OWNER)


def owner_gone(directory: Path) -> bool:
    """The process that made ``directory`` is known to have ended. False when that cannot be known: no record,
    an unreadable one, or an owner in another pid namespace (its pid means another process here)."""
    try:
        record = json.loads((directory / OWNER).read_text())
        pid = int(record["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if record.get("pid_namespace") != _pid_namespace():
        return False
    if not _running(pid):
        return True
    started = record.get("started")
    # the pid runs, but if it began at another time it is another process that was given the pid since
    return started is not None and _start_time(pid) not in (None, started)


def _server_pid(data: Path) -> int | None:
    """The pid of the server of ``data`` if it still runs: the one its ``postmaster.pid`` names, alive and working in
    ``data`` (a postmaster's working directory is its data directory); None otherwise."""
    try:
        pid = int((data / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None
    if pid <= 0 or not _running(pid):
        return None
    try:
        here = os.readlink(f"/proc/{pid}/cwd")
    except FileNotFoundError:
        return None  # ended meanwhile
    except OSError:
        return pid  # no /proc, or not ours to read: trust the pid file, as pg_ctl does
    return pid if os.path.realpath(here) == os.path.realpath(data) else None


def _end_bouncers(directory: Path) -> None:
    """Kill each pgbouncer whose pid file is in the cluster's directory, if that pid is still that pgbouncer (its
    command line names its configuration file, beside the pid file), and wait for it to end."""
    ended = []
    for pidfile in directory.glob(f"bouncer-*/{BOUNCER_PID}"):
        try:
            pid = int(pidfile.read_text().strip())
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if os.fsencode(pidfile.parent / "pgbouncer.ini") in command:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                ended.append(pid)
    deadline = time.monotonic() + 30
    while any(_running(pid) for pid in ended) and time.monotonic() < deadline:
        time.sleep(0.05)


def dispose(directory: Path, bindir: Path, user: dict[str, Any] | None = None) -> None:
    """Stop the server of the cluster in ``directory`` at once (``pg_ctl stop -m immediate``, as ``user``:
    ``{"user": uid, "group": gid}``, when root runs it), if it still runs, and any pgbouncer in front of it, and
    delete the directory."""
    _end_bouncers(directory)
    data = directory / "data"
    if _server_pid(data) is not None:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "-t", "60", "stop"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                cwd="/", timeout=90, check=False, **(user or {}),
            )
    shutil.rmtree(directory, ignore_errors=True)


def sweep(base: Path, bindir: Path, user: dict[str, Any] | None = None) -> list[Path]:
    """Dispose of the clusters under ``base`` (``pdi-pg-*``) whose owner has ended; the directories disposed of."""
    disposed = []
    for directory in sorted(base.glob("pdi-pg-*")):
        if directory.is_dir() and owner_gone(directory):
            dispose(directory, bindir, user)
            disposed.append(directory)
    return disposed


def start_guard(directory: Path, bindir: Path, user: dict[str, Any] | None = None) -> tuple[subprocess.Popen[bytes], int]:
    """Start the guard of the cluster in ``directory``: the process and the pipe's write end, which the caller
    keeps open while the cluster lives (and writes :data:`DISMISS` to, then closes, when it stopped it itself)."""
    read_end, write_end = os.pipe()  # both close-on-exec: only the guard gets the read end, as its stdin
    command = [sys.executable, "-I", str(Path(__file__).resolve()), str(directory), str(bindir)]
    if user:
        command += [str(user["user"]), str(user["group"])]
    try:
        guard = subprocess.Popen(
            command, stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
            start_new_session=True,
        )
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    return guard, write_end


def dismiss(guard: subprocess.Popen[bytes], write_end: int) -> None:
    """Tell the guard the cluster was stopped and deleted already, and wait for it to leave."""
    with contextlib.suppress(OSError):
        os.write(write_end, DISMISS)
    with contextlib.suppress(OSError):
        os.close(write_end)
    try:
        guard.wait(timeout=30)
    except subprocess.TimeoutExpired:
        guard.kill()
        guard.wait()


def _guard(arguments: list[str]) -> None:
    directory, bindir = Path(arguments[0]), Path(arguments[1])
    user: dict[str, Any] | None = None
    if len(arguments) == 4:
        user = {"user": int(arguments[2]), "group": int(arguments[3]), "extra_groups": []}
    for name in ("SIGINT", "SIGHUP", "SIGPIPE"):  # only the end of the pipe ends it (or SIGTERM, SIGKILL)
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    if os.read(0, 1) == DISMISS:
        return
    dispose(directory, bindir, user)  # end of file: the process that started the cluster has ended


if __name__ == "__main__":
    _guard(sys.argv[1:])
