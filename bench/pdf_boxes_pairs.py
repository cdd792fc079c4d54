"""A second ``#rect`` on a page of a PDF, before and after page boxes were held: two checkouts of pdi in turn.

Each round, for each ``NAME=SRC`` given in turn, a child process run with
``PYTHONPATH=SRC`` builds the text layer index of ``tests/data/pdf/tracemonkey.pdf``
(14 pages, 1 MB), then on each of its first ``--pages`` pages evaluates a first
``rect`` (the top half of the page) and times a second (the bottom half)
with :func:`pdi.fragments.evaluate`, as a resolver does for two regions of
a page; it reports the median of those second rects. With ``--get URN`` (a
name of that PDF deposited in ``$PDI_ARCHIVE``) each round also times one
``pdi get URN#rect=…`` (a new process: one rect, one page read, either way).
Run: ``python3 bench/pdf_boxes_pairs.py [--rounds R] [--pages N] [--get URN] before=/path/to/old/src after=src``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import _pairs

PDF = Path(__file__).resolve().parent.parent / "tests" / "data" / "pdf" / "tracemonkey.pdf"

CHILD = r"""
import statistics, sys, time
from pdi.fragments import evaluate
from pdi.fragments.pdf import build_layer_index
data = open(sys.argv[1], "rb").read()
index = build_layer_index(data)
times = []
for frame in range(int(sys.argv[2])):
    evaluate("rect", [(0, 0), (612, 396), frame], data, media_type="application/pdf", index=index)
    start = time.perf_counter()
    evaluate("rect", [(0, 396), (612, 792), frame], data, media_type="application/pdf", index=index)
    times.append(time.perf_counter() - start)
print(statistics.median(times))
"""


def main() -> None:
    parser = _pairs.parser(__doc__, rounds=5)
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--get", metavar="URN")
    args = parser.parse_args()
    trees = list(_pairs.variants(parser, args).items())
    seconds: dict[str, list[float]] = {name: [] for name, _ in trees}
    gets: dict[str, list[float]] = {name: [] for name, _ in trees}
    for _ in range(args.rounds):
        for name, src in trees:
            env = {**os.environ, "PYTHONPATH": src}
            out = subprocess.run([sys.executable, "-c", CHILD, str(PDF), str(args.pages)], env=env, check=True,
                                 capture_output=True, text=True).stdout
            seconds[name].append(float(out))
            if args.get:
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "pdi", "get", f"{args.get}#rect=(0,396),(612,792),2"],
                               env=env, check=True, capture_output=True)
                gets[name].append(time.perf_counter() - start)
    for name, _ in trees:
        got = seconds[name]
        print(f"{name}: second rect on a page, in-process: median {statistics.median(got) * 1000:.1f} ms"
              f" (range {min(got) * 1000:.1f} to {max(got) * 1000:.1f} ms over {len(got)} rounds)")
        if gets[name]:
            got = gets[name]
            print(f"{name}: pdi get of a rect: median {statistics.median(got) * 1000:.0f} ms"
                  f" (range {min(got) * 1000:.0f} to {max(got) * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
