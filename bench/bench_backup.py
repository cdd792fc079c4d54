"""Backup and restore: `pdi backup` / `pdi restore` beside the stores' own tools, on SQLite and PostgreSQL.

Makes one archive of each kind holding the same deposits (``--blobs`` blobs
of ``--mib`` MiB, and as many small texts kept as catalog rows), then, in
turn (``--rounds`` times; medians kept: the machine is shared), each
command and its floor, interleaved:

- SQLite backup: ``pdi backup --copy DEST`` against the manual procedure
  (``sqlite3 catalog.sqlite ".backup DEST/catalog.sqlite"`` then ``cp -a
  blobs DEST/``), which checks no digest, without and with a ``sync -f`` to
  make it durable (pdi fsyncs each blob); and ``pdi backup`` (hard links);
- SQLite restore: ``pdi restore --copy`` against ``cp -a`` of the backup
  (and ``sync -f``);
- PostgreSQL backup: ``pdi backup`` against ``pg_dump -Fc``;
- PostgreSQL restore: ``pdi restore --to`` an empty database against
  ``pg_restore`` into one.

The restore times are the recovery time of an archive of this size on this
machine (docs/reference/backup.md quotes them). Prints each median and pdi's
time over its floor's.
Run: ``python3 bench/bench_backup.py [--blobs N] [--mib M] [--rounds R] [--small] [--markdown FILE]``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import readme
from pdi.archive import Archive, Content
from support.pgcluster import TemporaryCluster, find_bindir

S = "backup.example.us"
_names = itertools.count(1)


def fill(location: str, blobs: int, mib: float) -> int:
    """Deposit ``blobs`` random blobs of ``mib`` MiB and as many small texts; the octets deposited."""
    total = 0
    with Archive.init(location) as archive:
        archive.add_series(S)
        for i in range(blobs):
            with tempfile.TemporaryFile() as f:
                size = int(mib * (1 << 20))
                while f.tell() < size:
                    f.write(os.urandom(min(1 << 20, size - f.tell())))
                f.seek(0)
                archive.deposit(S, [Content(f, "octet-stream")])
            archive.deposit(S, [Content(f"note {i} of the backup benchmark\n".encode(), "text")])
            total += size
    return total


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return time.perf_counter() - started


def pdi(*argv: str) -> list[str]:
    return [sys.executable, "-m", "pdi", *argv]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blobs", type=int, default=32, help="Large blobs (default 32).")
    parser.add_argument("--mib", type=float, default=8.0, help="MiB a large blob (default 8).")
    parser.add_argument("--rounds", type=int, default=3, help="Rounds, each command in turn (median kept; default 3).")
    readme.arguments(parser, markdown=True)  # --small: 4 blobs of 0.25 MiB, 1 round
    args = parser.parse_args(argv)
    if args.small:
        args.blobs, args.mib, args.rounds = 4, 0.25, 1
    sqlite3_cli = shutil.which("sqlite3")
    if sqlite3_cli is None:  # the SQLite floor is sqlite3's own .backup: without it there is no floor to time
        parser.error("sqlite3 (the command) not found: run scripts/bootstrap, which installs Debian's sqlite3")
    bindir = find_bindir()
    pg_dump, pg_restore = shutil.which("pg_dump") or str(bindir / "pg_dump"), shutil.which("pg_restore") or str(
        bindir / "pg_restore")
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="pdi-bench-backup-") as scratch, TemporaryCluster() as cluster:
        root = Path(scratch)
        source = str(root / "archive")
        database = cluster.create_database("backup_source")
        octets = fill(source, args.blobs, args.mib)
        fill(database, args.blobs, args.mib)
        print(f"two archives of {octets / (1 << 20):.0f} MiB each made", file=sys.stderr, flush=True)
        times: dict[str, list[float]] = {}

        def run(label: str, argv: list[str], before: Callable[[], object] | None = None) -> None:
            if before is not None:
                before()
            times.setdefault(label, []).append(timed(argv))

        for _ in range(args.rounds):
            n = next(_names)
            run("sqlite backup: pdi --copy", pdi("backup", "--copy", str(root / f"pb{n}"), "--archive", source))
            floor = root / f"fb{n}"
            manual = (f'mkdir -p "{floor}" && "{sqlite3_cli}" "{source}/catalog.sqlite"'
                      f' ".backup \'{floor}/catalog.sqlite\'" && cp -a "{source}/blobs" "{floor}/"')
            run("sqlite backup: floor", ["sh", "-c", manual])
            shutil.rmtree(floor)
            run("sqlite backup: floor + sync", ["sh", "-c", f'{manual} && sync -f "{floor}"'])
            run("sqlite backup: pdi (links)", pdi("backup", str(root / f"lb{n}"), "--archive", source))
            run("sqlite restore: pdi --copy", pdi("restore", "--copy", str(root / f"pb{n}"), "--to", str(root / f"pr{n}")))
            run("sqlite restore: floor (cp -a)", ["cp", "-a", str(root / f"pb{n}"), str(root / f"fr{n}")])
            shutil.rmtree(root / f"fr{n}")
            run("sqlite restore: floor (cp -a + sync)", ["sh", "-c", f'cp -a "{root}/pb{n}" "{root}/fr{n}"'
                                                                     f' && sync -f "{root}/fr{n}"'])
            for done in (f"pb{n}", f"fb{n}", f"lb{n}", f"pr{n}", f"fr{n}"):
                shutil.rmtree(root / done, ignore_errors=True)
            run("postgres backup: pdi", pdi("backup", str(root / f"gb{n}"), "--archive", database))
            run("postgres backup: floor (pg_dump -Fc)", [pg_dump, "-Fc", "--no-owner", f"--file={root}/gf{n}.dump",
                                                         f"--dbname={database}"])
            target = cluster.create_database(f"backup_restore_{n}")
            run("postgres restore: pdi", pdi("restore", str(root / f"gb{n}"), "--to", target))
            other = cluster.create_database(f"backup_floor_{n}")
            run("postgres restore: floor (pg_restore)", [pg_restore, "--no-owner", "--exit-on-error",
                                                         "--single-transaction", f"--dbname={other}",
                                                         f"{root}/gf{n}.dump"])
            shutil.rmtree(root / f"gb{n}", ignore_errors=True)
    load_after = os.getloadavg()[0]
    median = {label: statistics.median(t) for label, t in times.items()}
    pairs = [("sqlite backup: pdi --copy", "sqlite backup: floor"),
             ("sqlite backup: pdi --copy", "sqlite backup: floor + sync"),
             ("sqlite restore: pdi --copy", "sqlite restore: floor (cp -a)"),
             ("sqlite restore: pdi --copy", "sqlite restore: floor (cp -a + sync)"),
             ("postgres backup: pdi", "postgres backup: floor (pg_dump -Fc)"),
             ("postgres restore: pdi", "postgres restore: floor (pg_restore)")]
    print(f"load average {load_before:.2f} before, {load_after:.2f} after (2 cores shared: compare ratios)")
    print(f"archive of {args.blobs} blobs of {args.mib} MiB and {args.blobs} small texts, median of {args.rounds}:")
    for label, value in median.items():
        print(f"  {label:<40} {value:7.2f} s")
    for ours, floor in pairs:
        if floor in median:
            print(f"  {ours} / {floor}: {median[ours] / median[floor]:.2f}")
    rows = [[label, f"{value:.2f} s", ""] for label, value in median.items()]
    rows += [[f"**{ours} / {floor}**", "", f"**{median[ours] / median[floor]:.2f}×**"] for ours, floor in pairs
             if floor in median]
    readme.write(args.markdown, (
        f"`pdi backup` and `pdi restore` of an archive of {args.blobs} blobs of {args.mib} MiB and {args.blobs}"
        f" small texts, as the command, median of {args.rounds} rounds taken in turn, beside the stores' own tools"
        " (the floor copies and checks no digest); PostgreSQL on a throw-away cluster over a unix socket, fsync"
        " off.\n\n") + readme.table(["command", "median", "pdi / floor"], rows) + "\n" + readme.stamp(
        load_before, load_after))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
