"""``POST /api/octets``, before and after: the CPU an origin's worker threads spend a name making the answer's
parts (looking each name up in the catalog, opening its blob file, its part's head: what
:class:`pdi.server.protocol.octets.OctetsAPI` does off the event loop), by two checkouts of pdi in turn, for paired
figures.

Reads the names of an origin ``bench/mirror_pairs.py`` made (``--origin``, default the 2,000-name one in
``TMPDIR``); then, ``--rounds`` times, for each ``NAME=SRC`` in turn, a process with ``PYTHONPATH=SRC`` makes every
part of the answers to requests of 250 names (as ``pdi mirror sync`` asks), with a fixity memo as ``pdi serve``
keeps one, filled by a first pass (so that each blob goes by ``sendfile``, as in a sync's later rounds: its octets
neither read nor hashed here), and prints the median CPU (its thread's) a name of five passes.
Run: ``python3 bench/octets_pairs.py [--origin DIR] [--rounds R] before=/path/to/old/src after=src``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import _pairs
from bench_mirror import S

#: Run in each checkout: every part of the answers for the origin's names, five times; the CPU a name in µs.
PARTS = """
import statistics, sys, time
from pdi.archive import Archive
from pdi.archive.blobs.memo import FixityMemo
from pdi.server.protocol.octets import OctetsAPI
with Archive.open(sys.argv[1]) as archive:
    names, after = [], None
    while True:
        page = archive.manifest_page(sys.argv[2], after=after, limit=10_000)
        names += [str(entry["name"]) for entry in page.entries]
        if (after := page.next) is None:
            break
    archive.fixity_memo = FixityMemo(600)
    api = OctetsAPI(archive, None)

    def answer(stretches):
        for start in range(0, len(names), 250):
            for _ in api._batches(names[start:start + 250], "b" * 64, stretches=stretches):
                pass

    answer(False)  # every chunk read and verified once: remembered
    took = []
    for _ in range(5):
        started = time.thread_time()
        answer(True)
        took.append(time.thread_time() - started)
print(f"{statistics.median(took) / len(names) * 1e6:.1f}")
"""


def main() -> int:
    parser = _pairs.parser(__doc__, rounds=5)
    parser.add_argument("--origin", type=Path,
                        default=Path(tempfile.gettempdir()) / "pdi-bench-mirror-pairs-2000-200" / "origin")
    args = parser.parse_args()
    variants = _pairs.variants(parser, args)
    figures: dict[str, list[float]] = {name: [] for name in variants}
    for round_ in range(args.rounds):
        for name, src in variants.items():
            done = subprocess.run([sys.executable, "-c", PARTS, str(args.origin), S],
                                  env=dict(os.environ, PYTHONPATH=src), capture_output=True,
                                  text=True, check=True)
            figures[name].append(float(done.stdout))
            print(f"round {round_ + 1} {name}: {figures[name][-1]:.1f} µs a name, load {os.getloadavg()[0]:.2f}",
                  flush=True)
    for name, each in figures.items():
        print(f"{name}: {_pairs.spread(each, 1)} µs of CPU a name")
    return 0


if __name__ == "__main__":
    sys.exit(main())
