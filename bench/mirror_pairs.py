"""Mirror, before and after: `pdi mirror sync` of one origin by two checkouts of pdi in turn, for paired figures.

Makes an origin as ``bench_mirror.py`` does (``--names`` names of random
octets, ``--mb`` MB in all, in ``TMPDIR``, kept there for the next run) and
serves it with ``pdi serve`` on 127.0.0.1 (each checkout its own); then, each
round, for each ``NAME=SRC`` given in turn: a fresh mirror archive, ``pdi
mirror add``, ``sync(2)``, and ``pdi mirror sync`` run with
``PYTHONPATH=SRC``, timed whole, with the process's user and system CPU and the CPU its origin used meanwhile
(each checkout serves the origin from its own ``pdi serve``). On
a shared machine the wall times move with others' load more than with the
code; the CPU of the sync's own process moves less: compare both, pair by
pair. With ``--syncfs``, each sync runs under ``strace -f -T -e trace=syncfs``
(seccomp-filtered: only those calls stop it) and the seconds its threads spent
waiting in ``syncfs(2)``, and how many calls, are reported beside its time.
With ``--fresh-origin``, each checkout's ``pdi serve`` is started afresh each
round and one sync made untimed first: the timed sync then meets workers that
have each verified the blobs the first sync asked of them, and no others (an
origin's second reader within its fixity memo's time), however many rounds
ran before; without it, the origin's workers verify more of the blobs round
after round. Run: ``python3 bench/mirror_pairs.py [--names N] [--mb M]
[--rounds R] [--syncfs] [--fresh-origin] before=/path/to/old/src after=src``.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _pairs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "server"))

from server_helpers import start_serve, stop, wait_answering

from bench_mirror import S, make_origin, past_racy_window
from pdi.archive import Archive


def held(mirror: Path) -> int:
    count, after = 0, None
    with Archive.open(mirror) as archive:
        while True:
            page = archive.manifest_page(S, after=after, limit=10_000)
            count += len(page.entries)
            if (after := page.next) is None:
                return count


def group_cpu(leader: int) -> float:
    """User and system CPU seconds, so far, of the live processes in ``leader``'s process group (a ``pdi serve``
    started in its own session: the server and its workers)."""
    total = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[2]) == leader:  # pgrp
                total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def syncfs_waits(trace: Path) -> tuple[float, int, float]:
    """Seconds spent in ``syncfs`` calls, how many, and the seconds of the last two (the last batch's, before and
    after its renames: what the sync waits for after its last blob has come), by an ``strace -f -T`` log (a call
    another thread cut in on is logged as ``<unfinished ...>`` and its end as ``resumed>``, which carries the
    time)."""
    times = [float(timed[1]) for line in trace.read_text().splitlines()
             if "syncfs" in line and (timed := re.search(r"<(\d+\.\d+)>$", line))]
    return sum(times), len(times), sum(times[-2:])


def main() -> int:
    parser = _pairs.parser(__doc__, rounds=4)
    parser.add_argument("--names", type=int, default=10_000)
    parser.add_argument("--mb", type=float, default=1000.0)
    parser.add_argument("--syncfs", action="store_true", help="time the sync's syncfs calls (strace)")
    parser.add_argument("--fresh-origin", action="store_true",
                        help="start each origin afresh each round and sync once untimed before the timed sync")
    args = parser.parse_args()
    variants = _pairs.variants(parser, args)
    root = Path(tempfile.gettempdir()) / f"pdi-bench-mirror-pairs-{args.names}-{args.mb:g}"
    if not (root / "origin" / "catalog.sqlite").exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        make_origin(root / "origin", args.names, int(args.mb * 1_000_000))
        past_racy_window(time.time())  # what the origin's workers verify is remembered, as an archive's older files
    servers: dict[str, tuple[subprocess.Popen[str], str]] = {}
    figures: dict[str, list[tuple[float, float, float, float]]] = {name: [] for name in variants}
    waits: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    pdi = [sys.executable, "-m", "pdi"]

    def start(name: str, src: str) -> None:
        """The checkout's own origin server, on the one origin archive."""
        server, port, _ = start_serve(root / "origin", "--replay-port", "0", drain=True, start_new_session=True,
                                      env=dict(os.environ, PYTHONPATH=src))
        servers[name] = server, f"http://127.0.0.1:{port}"
        wait_answering(server, f"{servers[name][1]}/api/series")

    def fresh_mirror(mirror: Path, url: str, env: dict[str, str]) -> None:
        shutil.rmtree(mirror, ignore_errors=True)
        subprocess.run([*pdi, "init", "--archive", str(mirror)], env=env, check=True, capture_output=True)
        subprocess.run([*pdi, "mirror", "add", url, "--series", S, "--archive", str(mirror)], env=env,
                       check=True, capture_output=True)

    try:
        if not args.fresh_origin:
            for name, src in variants.items():
                start(name, src)
        for round_ in range(args.rounds):
            for name, src in variants.items():
                env = dict(os.environ, PYTHONPATH=src)
                mirror = root / f"mirror-{name}"
                if args.fresh_origin:
                    start(name, src)
                    fresh_mirror(mirror, servers[name][1], env)  # the untimed first sync
                    subprocess.run([*pdi, "mirror", "sync", "--archive", str(mirror)], env=env, check=True,
                                   capture_output=True)
                server, url = servers[name]
                fresh_mirror(mirror, url, env)
                os.sync()
                origin_before = group_cpu(server.pid)
                before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
                trace = root / f"syncfs-{name}.strace"
                traced = ["strace", "-f", "-T", "--seccomp-bpf", "-e", "trace=syncfs", "-o", str(trace)]
                done = subprocess.run([*(traced if args.syncfs else []), *pdi, "mirror", "sync", "--archive",
                                       str(mirror)], env=env, capture_output=True, text=True, check=False)
                wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
                origin = group_cpu(server.pid) - origin_before
                if done.returncode != 0 or held(mirror) != args.names:
                    raise SystemExit(f"{name}: the sync failed ({done.returncode}):\n{done.stdout}{done.stderr}")
                figures[name].append((wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime,
                                      origin))
                told = ""
                if args.syncfs:
                    seconds, calls, last = syncfs_waits(trace)
                    waits[name].append((seconds, last))
                    told = f", syncfs {seconds:.2f} s in {calls} calls (the last two {last:.2f} s)"
                print(f"round {round_ + 1} {name}: {wall:.2f} s, user {figures[name][-1][1]:.2f} s,"
                      f" system {figures[name][-1][2]:.2f} s, origin {origin:.2f} s{told},"
                      f" load {os.getloadavg()[0]:.2f}", flush=True)
                shutil.rmtree(mirror)
                if args.fresh_origin:
                    stop(servers.pop(name)[0])
    finally:
        for server, _ in servers.values():
            stop(server)
    for name, each in figures.items():
        walls, users, systems, origins = ([one[i] for one in each] for i in range(4))
        print(f"{name}: {_pairs.spread(walls)} s, user {_pairs.spread(users)} s, system {_pairs.spread(systems)} s,"
              f" origin {_pairs.spread(origins)} s"
              + ("".join(f", syncfs {what} {_pairs.spread(those)} s"
                         for what, those in (("all", [w[0] for w in waits[name]]),
                                             ("last two", [w[1] for w in waits[name]])))
                 if waits[name] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
