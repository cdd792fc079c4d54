"""Import: `pdi import` of an exported bag into PostgreSQL, beside the same bag into SQLite.

Makes an archive of N names cheaply (default 50,000): ``--objects`` real
deposits on one GMT day (default 3), then the bulk names by SQL,
``PER_DAY`` serial names on each of as many following days as it takes,
each pointing at one of the deposited blobs, and a statement about every
``STATEMENT_EVERY``-th name; ``pdi export`` writes it as a bag. Then, in
turn (``--rounds`` times, each figure's best kept: the machine is shared),
``pdi init`` and ``pdi import`` of that bag into a fresh catalog of each
kind: a PostgreSQL database on a cluster this benchmark starts itself
(:class:`support.pgcluster.TemporaryCluster`, a unix socket, fsync
off), and a SQLite archive directory. Each import runs as the command, in
a child process whose peak resident memory the kernel reports.

Prints the names a second of each, and PostgreSQL's time over SQLite's.
Run: ``python3 bench/bench_import.py [--names N] [--objects K] [--rounds R] [--small] [--markdown FILE]``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# the throw-away cluster is a test tool (tests/support/), not part of the package
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import readme
from pdi.archive import Archive
from support.pgcluster import TemporaryCluster

S = "import.example.us"
#: Serial names on each bulk day.
PER_DAY = 1_000
#: A statement about every this many names (about their documents, an hour after their deposit).
STATEMENT_EVERY = 10
#: The day of the real deposits; the bulk names start on the day after.
FIRST = datetime.date(2000, 1, 1)

# Runs a command and reports its exit status and peak resident memory (KiB) on the last line of stderr.
_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:])
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, file=sys.stderr)
"""


@dataclass
class Ran:
    """One import: seconds, peak resident MiB."""

    seconds: float
    peak_mib: float


def fill(location: Path, names: int, objects: int) -> int:
    """Make ``names`` names at ``location`` (``objects`` deposited, the rest by SQL); how many statements."""

    def clock() -> datetime.datetime:
        return datetime.datetime(FIRST.year, FIRST.month, FIRST.day, 12, tzinfo=datetime.UTC)

    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        for i in range(objects):
            archive.add(S, f"document {i} of the import benchmark\n".encode() * 20, format="text")
        store = archive.store
        q = store._query  # type: ignore[attr-defined]
        bulk = names - objects
        days = -(-bulk // PER_DAY)
        with store._write():  # type: ignore[attr-defined]
            for offset in range(1, days + 1):
                day = FIRST + datetime.timedelta(days=offset)
                at = f"{day.isoformat()}T12:00:00.000000Z"
                count = min(PER_DAY, bulk - (offset - 1) * PER_DAY)
                q(
                    "INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)"
                    " WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
                    " SELECT ?, ?, ?, ?, ?, CAST(i AS TEXT), i, ? FROM n",
                    (count, S, day.isoformat(), day.year, day.month, day.day, at),
                )
                q("INSERT INTO daily_serials (series, day, last) VALUES (?, ?, ?)", (S, day.isoformat(), count))
                q(
                    "INSERT INTO document_days (series, day, documents, last_deposit) VALUES (?, ?, ?, ?)",
                    (S, day.isoformat(), count, at),
                )
            first_bulk = (FIRST + datetime.timedelta(days=1)).isoformat()
            q("INSERT INTO versions (document, version, created_at) SELECT id, 1, created_at FROM documents"
              " WHERE day >= ?", (first_bulk,))
            blobs = q("SELECT media_type, charset, line_ending, sha256, size, stored FROM representations"
                      " ORDER BY sha256")
            for index, (media_type, charset, ending, sha, size, stored) in enumerate(blobs):
                q(
                    "INSERT INTO representations (document, version, format, media_type, charset, line_ending,"
                    " sha256, size, stored, created_at) SELECT id, 1, 'text', ?, ?, ?, ?, ?, ?, created_at"
                    " FROM documents WHERE day >= ? AND serial % ? = ?",
                    (media_type, charset, ending, sha, size, stored, first_bulk, len(blobs), index),
                )
            q(
                "INSERT INTO assertions (document, subject, key, value, who, at)"
                " SELECT id, 'urn:pdi://' || series || '/' || year || '/' || substr(day, 6, 2) || '/'"
                " || substr(day, 9, 2) || '/' || unique_id, 'title', 'Document ' || unique_id || ' of ' || day,"
                " 'benchmark', substr(created_at, 1, 11) || '13:00:00.000000Z' FROM documents"
                " WHERE day >= ? AND serial % ? = 0",
                (first_bulk, STATEMENT_EVERY),
            )
            statements = int(q("SELECT COUNT(*) FROM assertions")[0][0])
    return statements


def pdi(location: str, *argv: str) -> Ran:
    """Run ``pdi ARGV --archive LOCATION``; its time and peak memory (an error if it fails)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, sys.executable, "-m", "pdi", *argv, "--archive", location],
        capture_output=True, text=True, check=False,
    )
    seconds = time.perf_counter() - started
    *rest, last = done.stderr.strip().splitlines() or ["1 0"]
    code, peak = last.split()
    if done.returncode != 0 or code != "0":
        raise SystemExit(f"pdi {' '.join(argv)} --archive {location} failed ({code}):\n" + "\n".join(rest))
    return Ran(seconds, int(peak) / 1024)


def count_names(location: str) -> int:
    with Archive.open(location) as archive:
        return int(archive.store._query("SELECT COUNT(*) FROM representations")[0][0])  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", type=int, default=50_000, help="Names in the bag (default 50,000).")
    parser.add_argument("--objects", type=int, default=3, help="Distinct objects the names share (default 3).")
    parser.add_argument("--rounds", type=int, default=2, help="Imports of each kind, in turn (best kept; default 2).")
    readme.arguments(parser, markdown=True)  # --small: 2,000 names, 1 round
    args = parser.parse_args(argv)
    if args.small:
        args.names, args.rounds = 2_000, 1
    if not 1 <= args.objects < args.names:
        parser.error("--objects must be at least 1 and fewer than --names")
    with tempfile.TemporaryDirectory(prefix="pdi-bench-import-") as scratch, TemporaryCluster() as cluster:
        root = Path(scratch)
        started = time.perf_counter()
        statements = fill(root / "source", args.names, args.objects)
        print(f"{args.names:,} names and {statements:,} statements made in {time.perf_counter() - started:.1f} s",
              file=sys.stderr, flush=True)
        exported = pdi(str(root / "source"), "export", str(root / "bag"))
        print(f"exported in {exported.seconds:.1f} s", file=sys.stderr, flush=True)
        runs: dict[str, list[Ran]] = {"PostgreSQL": [], "SQLite": []}
        for round_ in range(args.rounds):
            for kind in runs:
                location = (cluster.create_database(f"import_{round_}") if kind == "PostgreSQL"
                            else str(root / f"sqlite-{round_}"))
                pdi(location, "init")
                ran = pdi(location, "import", str(root / "bag"))
                found = count_names(location)
                if found != args.names:
                    raise SystemExit(f"{kind}: {found} names imported, not {args.names}")
                print(f"{kind}: {ran.seconds:.1f} s, {ran.peak_mib:.0f} MiB", file=sys.stderr, flush=True)
                runs[kind].append(ran)
                if kind == "SQLite":
                    subprocess.run(["rm", "-rf", location], check=True)
    best = {kind: min(r.seconds for r in rs) for kind, rs in runs.items()}
    peak = {kind: max(r.peak_mib for r in rs) for kind, rs in runs.items()}
    print(f"load average {os.getloadavg()[0]:.2f} (2 cores shared: compare ratios, not times)")
    print(f"pdi import of {args.names:,} names ({args.objects} objects, {statements:,} statements),"
          f" best of {args.rounds}:")
    for kind in runs:
        print(f"  {kind:<10} {best[kind]:8.1f} s {args.names / best[kind]:10,.0f} names/s  peak {peak[kind]:.0f} MiB")
    print(f"  PostgreSQL / SQLite: {best['PostgreSQL'] / best['SQLite']:.2f}")
    readme.write(args.markdown, (
        f"`pdi import` (into a catalog `pdi init` made) of a bag of {args.names:,} names ({args.objects} objects,"
        f" {statements:,} statements), as the command, best of {args.rounds} rounds taken in turn; PostgreSQL on a"
        " throw-away cluster over a unix socket, fsync off.\n\n"
    ) + readme.table(
        ["catalog", "time", "names a second", "peak memory"],
        [[kind, f"{best[kind]:.1f} s", f"{args.names / best[kind]:,.0f}", f"{peak[kind]:.0f} MiB"] for kind in runs]
        + [["**PostgreSQL / SQLite**", f"**{best['PostgreSQL'] / best['SQLite']:.2f}×**", "", ""]]))
    return 0


if __name__ == "__main__":
    # stopped by a signal: the cluster and the scratch directory are still cleaned up
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
