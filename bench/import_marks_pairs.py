"""A bag import, and deposits of octets it brought, before and after: two checkouts of pdi in turn, for paired figures.

Makes a bag once (``--blobs`` documents of ``--size`` random octets each,
past the 64 KiB a catalog row holds, exported with ``pdi export``; kept in
``TMPDIR`` for the next run). Then each round, for each ``NAME=SRC`` given
in turn, with ``PYTHONPATH=SRC``: a fresh archive, ``sync(2)``, ``pdi import``
of the bag timed whole (the import's blob files are written to ``tmp/``,
synced together, renamed, their folders synced together: since ``40f38ee``
each is then unmarked, an ``open``, ``fstat`` and ``fchmod`` a file), then a
child process that deposits ``--again`` of the same octets anew
(:meth:`pdi.archive.Archive.add`, each finding its blob file at its name),
timed around its loop: a file still marked as not yet durable is synced
(its file and two folders) by the first deposit to find it.
Run: ``python3 bench/import_marks_pairs.py [--blobs N] [--size N] [--again N] [--rounds R]
before=/path/to/old/src after=src``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _pairs

S = "bench.example.us"

MAKE = r"""
import os, sys
from pdi.archive import Archive
root, blobs, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with Archive.init(root + "/origin") as origin:
    origin.add_series(sys.argv[4])
    for n in range(blobs):
        origin.add(sys.argv[4], os.urandom(size), format="octet-stream")
    origin.export_bag(root + "/bag")
"""

AGAIN = r"""
import sys, time
from pathlib import Path
from pdi.archive import Archive
bag, again = Path(sys.argv[2]), int(sys.argv[3])
with Archive.open(sys.argv[1]) as archive:
    archive.add_series("again." + sys.argv[4])
    objects = sorted((bag / "data" / "objects").iterdir())[:again]
    octets = [p.read_bytes() for p in objects]
    started = time.perf_counter()
    for data in octets:
        archive.add("again." + sys.argv[4], data, format="octet-stream")
    print(time.perf_counter() - started)
"""


def main() -> int:
    parser = _pairs.parser(__doc__, rounds=5)
    parser.add_argument("--blobs", type=int, default=2000)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--again", type=int, default=200)
    args = parser.parse_args()
    variants = _pairs.variants(parser, args)
    root = Path(tempfile.gettempdir()) / f"pdi-bench-import-marks-{args.blobs}-{args.size}"
    if not (root / "bag" / "bagit.txt").exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        env = dict(os.environ, PYTHONPATH=next(iter(variants.values())))
        subprocess.run([sys.executable, "-c", MAKE, str(root), str(args.blobs), str(args.size), S], env=env,
                       check=True)
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for round_ in range(args.rounds):
        for name, src in variants.items():
            env = dict(os.environ, PYTHONPATH=src)
            copy = root / f"copy-{name}"
            shutil.rmtree(copy, ignore_errors=True)
            pdi = [sys.executable, "-m", "pdi"]
            subprocess.run([*pdi, "init", "--archive", str(copy)], env=env, check=True, capture_output=True)
            os.sync()
            started = time.perf_counter()
            subprocess.run([*pdi, "import", str(root / "bag"), "--archive", str(copy)], env=env, check=True,
                           capture_output=True)
            wall = time.perf_counter() - started
            again = subprocess.run([sys.executable, "-c", AGAIN, str(copy), str(root / "bag"), str(args.again), S],
                                   env=env, check=True, capture_output=True, text=True)
            figures[name].append((wall, float(again.stdout.strip())))
            print(f"round {round_ + 1} {name}: import {wall:.2f} s, {args.again} deposits again"
                  f" {figures[name][-1][1]:.2f} s, load {os.getloadavg()[0]:.2f}", flush=True)
            shutil.rmtree(copy)
    for name, each in figures.items():
        imports, agains = [one[0] for one in each], [one[1] for one in each]
        print(f"{name}: import {_pairs.spread(imports)} s, deposits again {_pairs.spread(agains)} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
