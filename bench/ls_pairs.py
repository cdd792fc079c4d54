"""``bench_archive.py``'s listing (a day of names, ``pdi ls`` in process) by two checkouts of pdi in turn, on one
PostgreSQL catalog, for paired figures of the client's and the server's CPU.

One throw-away PostgreSQL cluster (a unix socket; ``fsync``, ``synchronous_commit``
and ``full_page_writes`` on, as ``bench_archive.py`` runs it) holds the catalog
``bench_archive.fill_day`` makes: a day of ``--names`` serial names, loaded by
``import_all``. As there, it is listed before any ``ANALYZE`` (autovacuum is
switched off on its tables, so that it stays so for every round);
``--analysed`` analyses it first instead. Each round, for each ``NAME=SRC`` in
turn (the order alternating from round to round), a child process with
``PYTHONPATH=SRC`` lists the day ``--listings`` times as ``pdi ls`` in process
(after one listing not counted), each beside a read of a file of the same names
(the floor, as ``bench_archive.bench_list``), and prints the medians of its wall
time, the floor's and its own CPU a listing; the server's CPU a listing is the
cluster's processes' (the postmaster's, with the backends it has reaped, and its
children's) over the child's run, divided by its listings. Run:
``python3 bench/ls_pairs.py [--names N] [--listings L] [--rounds R] [--analysed] before=/old/src after=src``;
``--sqlite`` lists a SQLite archive of the same day instead (no server).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import _pairs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

CHILD = r"""
import contextlib, io, json, statistics, sys, time
from pdi.cli import main as pdi_main
url, pattern, names, listings = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def ls():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            pdi_main(["ls", pattern, "--archive", url])
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise
    return out.getvalue()

expected = open(names).read()
assert ls() == expected, "the listing differs from the names file"
walls, floors, cpus = [], [], []
for _ in range(listings):
    cpu, start = time.process_time(), time.perf_counter()
    ls()
    middle = time.perf_counter()
    cpus.append(time.process_time() - cpu)
    open(names).read().splitlines()
    walls.append(middle - start)
    floors.append(time.perf_counter() - middle)
print(json.dumps({"wall": statistics.median(walls), "floor": statistics.median(floors),
                  "cpu": statistics.median(cpus)}))
"""


def _cluster_cpu(postmaster: int) -> float:
    """CPU seconds of the postmaster (with its reaped children's) and of its living children."""
    tick = os.sysconf("SC_CLK_TCK")

    def stat(pid: int) -> list[str]:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()

    fields = stat(postmaster)
    total = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    for child in Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split():
        try:
            total += sum(int(f) for f in stat(int(child))[11:13])
        except FileNotFoundError:  # ended meanwhile: its time is in the postmaster's cutime now
            pass
    return total / tick


def main() -> int:
    made = _pairs.parser(__doc__, 5)
    made.add_argument("--names", type=int, default=10_000, help="serial names in the day (10,000)")
    made.add_argument("--listings", type=int, default=15, help="listings a round and checkout (15)")
    made.add_argument("--analysed", action="store_true", help="ANALYZE the tables before the rounds")
    made.add_argument("--sqlite", action="store_true", help="a SQLite archive instead of PostgreSQL")
    args = made.parse_args()
    chosen = _pairs.variants(made, args)


    import bench_archive
    from pdi.archive import Archive
    from support.pgcluster import TemporaryCluster

    bench_archive.NAMES = args.names
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="pdi-ls-pairs-"))
        if args.sqlite:
            url, postmaster = str(Path(tmp) / "archive"), None
        else:
            cluster = stack.enter_context(TemporaryCluster(durable=True))
            url = cluster.create_database("listing")
        with Archive.init(url, clock=bench_archive._clock) as archive:
            if not args.sqlite:
                for table in ("documents", "representations"):
                    archive.store.query(f"ALTER TABLE {table} SET (autovacuum_enabled = off)")
            bench_archive.fill_day(archive)
            if args.analysed:
                archive.store.query("ANALYZE")
        names = Path(tmp) / "names.txt"
        names.write_text(bench_archive.pdi_ls(url))
        pattern = f"urn:pdi://{bench_archive.S}/{bench_archive.DAY:%Y/%m/%d}/*"
        if not args.sqlite:
            postmaster = int((cluster.data / "postmaster.pid").read_text().split()[0])
        figures: dict[str, dict[str, list[float]]] = {name: {} for name in chosen}
        for round_ in range(args.rounds):
            order = list(chosen) if round_ % 2 == 0 else list(reversed(chosen))
            for name in order:
                env = {**os.environ, "PYTHONPATH": chosen[name]}
                before = _cluster_cpu(postmaster) if postmaster else 0.0
                done = subprocess.run([sys.executable, "-c", CHILD, url, pattern, str(names), str(args.listings)],
                                      env=env, check=True, capture_output=True, text=True)
                server = ((_cluster_cpu(postmaster) if postmaster else 0.0) - before) / (args.listings + 1)
                got = json.loads(done.stdout)
                got["server"] = server
                got["ratio"] = got["wall"] / got["floor"]
                for key, value in got.items():
                    figures[name].setdefault(key, []).append(value)
                print(name, json.dumps(got), flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    for name, got in figures.items():
        print(f"{name}: pdi ls wall {_pairs.spread([w * 1000 for w in got['wall']])} ms,"
              f" client CPU {_pairs.spread([c * 1000 for c in got['cpu']])} ms,"
              f" server CPU {_pairs.spread([s * 1000 for s in got['server']])} ms,"
              f" floor {_pairs.spread([f * 1000 for f in got['floor']])} ms, ratio {_pairs.spread(got['ratio'], 1)}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
