"""A WARC import before and after, step by step: two checkouts of pdi in turn, for paired figures of CPU time.

Makes ``bench/bench_warc.py``'s WARC once (``--pages`` pages of five records each; kept in ``TMPDIR`` for the next
run). Then each round, for each ``NAME=SRC`` given in turn, a child process with ``PYTHONPATH=SRC`` imports it
``--imports`` times (:func:`pdi.interop.warc.import_warc`, each into a fresh SQLite archive under ``TMPDIR``) and
reports, for each import but the first (its modules loaded, its caches warm), the process's CPU
(``time.process_time``: every thread's) and the CPU of each step (``time.thread_time`` of the thread running it,
summed over the staging threads): pass 1 (``read_index``), pass 2 (``plan_import``), the deposits' importing
thread (``_deposit_all``; its catalog batches, ``mint_batch``, also apart) and their staging threads
(``prepare``: packing each page as MHTML, the content checks, hashing and writing the blobs), of which packing
(``pack_crawl``) and the MHTML check apart. A step a checkout does not have is left out. The round's figure is
the median of the process's imports; the summary is each figure's median (range) over the rounds. CPU, not the
clock: on a shared machine the load moves an import's wall clock more than the code does (docs/benchmarks.md,
"WARC and WACZ").
Run: ``python3 bench/warc_import_pairs.py [--pages N] [--imports N] [--rounds R] before=/path/to/old/src after=src``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import _pairs

BENCH = os.path.dirname(os.path.abspath(__file__))

MAKE = r"""
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import bench_warc
bench_warc.PAGES = int(sys.argv[2])
bench_warc._make_warc(Path(sys.argv[3]))
"""

#: What a step is called, and the function (``module:attribute.path``) whose thread CPU it is.
STEPS = {
    "pass 1 (read, check, index)": "pdi.interop.warc.pages:read_index",
    "pass 2 (crawl each page)": "pdi.interop.warc.pages:plan_import",
    "deposits: the importing thread": "pdi.interop.warc.pages:_deposit_all",
    "  of which the catalog's batches": "pdi.archive.catalog.documents:DocumentsPart.mint_batch",
    "deposits: staging threads (packing, checks, blobs)": "pdi.archive.content:prepare",
    "staging: packing MHTML": "pdi.interop.warc.pages:pack_crawl",
    "staging: the MHTML check": "pdi.archive.readable:MhtmlCheck.finish",
}

CHILD = r"""
import functools, importlib, json, statistics, sys, tempfile, threading, time
from pathlib import Path
warc, imports, steps = Path(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
spent, lock = {}, threading.Lock()

def timed(label, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            took = time.thread_time() - start
            with lock:
                spent[label] = spent.get(label, 0.0) + took
    return wrapper

for label, where in steps.items():
    module, _, path = where.partition(":")
    try:
        owner = importlib.import_module(module)
        *outer, name = path.split(".")
        for part in outer:
            owner = getattr(owner, part)
        setattr(owner, name, timed(label, getattr(owner, name)))
    except (ImportError, AttributeError):
        pass  # a step this checkout does not have
from pdi.archive import Archive
from pdi.interop.warc import import_warc
process, each = [], {}
with tempfile.TemporaryDirectory(prefix="pdi-warc-pairs-") as work:
    for number in range(imports):
        archive = Archive.init(Path(work) / f"a{number}")
        archive.add_series("bench.example.us")
        spent.clear()
        start = time.process_time()
        import_warc(archive, warc, "bench.example.us")
        used = time.process_time() - start
        archive.close()
        if number:
            process.append(used)
            for label, took in spent.items():
                each.setdefault(label, []).append(took)
print(json.dumps({"process": statistics.median(process),
                  "steps": {label: statistics.median(took) for label, took in each.items()}}))
"""


def main() -> int:
    parser = _pairs.parser(__doc__, rounds=6)
    parser.add_argument("--pages", type=int, default=150, help="pages of the WARC, five records each (150)")
    parser.add_argument("--imports", type=int, default=6, help="imports a process, the first not counted (6)")
    args = parser.parse_args()
    variants = _pairs.variants(parser, args)
    if args.imports < 2:
        parser.error("--imports must be at least 2: the first import of a process is not counted")
    warc = Path(tempfile.gettempdir()) / f"pdi-bench-warc-pairs-{args.pages}.warc.gz"
    if not warc.exists():
        made = warc.with_suffix(".part")
        env = dict(os.environ, PYTHONPATH=next(iter(variants.values())))
        subprocess.run([sys.executable, "-c", MAKE, BENCH, str(args.pages), str(made)], env=env, check=True)
        made.replace(warc)
    figures: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    for round_ in range(args.rounds):
        for name, src in variants.items():
            env = dict(os.environ, PYTHONPATH=src)
            done = subprocess.run([sys.executable, "-c", CHILD, str(warc), str(args.imports), json.dumps(STEPS)],
                                  env=env, check=True, capture_output=True, text=True)
            figures[name].append(json.loads(done.stdout))
            print(f"round {round_ + 1} {name}: process CPU {figures[name][-1]['process'] * 1e3:.1f} ms"
                  f" an import, load {os.getloadavg()[0]:.2f}", flush=True)
    for name, rounds in figures.items():
        print(f"{name}: process CPU an import {_pairs.spread([r['process'] * 1e3 for r in rounds], 1)} ms")
        for label in STEPS:
            took = [r["steps"][label] * 1e3 for r in rounds if label in r["steps"]]
            if took:
                print(f"  {label.strip()} {_pairs.spread(took, 1)} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
