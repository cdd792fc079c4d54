"""What running PDFium in a bounded child process costs (``pdi._bounded``, ``docs/pdf-text-layer.md`` §7).

Each piece of PDFium work pdi does on a stranger's PDF runs in a child
(``python -m pdi.fragments.pdf_child``) under a deadline and a memory bound.
The floor is the same work done in this process, unbounded, with pypdfium2
already imported (``pdi.fragments.pdf.text_layer``, ``read_pages_now``,
``pdf_render.render_png_now``). Interleaved, each case ``--rounds`` times:

* ``layer`` of ``hand-overprint-hyphens.pdf`` (1 KB, 2 pages): nearly all
  start-up — the child's cost over the floor is the start-up cost;
* ``layer`` of ``tracemonkey.pdf`` (1 MB, 14 pages): a deposit's text layer;
* ``boxes`` of four pages of ``tracemonkey.pdf`` (what the viewer asks at once);
* ``png`` of page 1 of ``tracemonkey.pdf`` at 144 dpi (an ``image/png`` answer).

Prints the medians, the child's cost over the floor and the ratio.
Run: ``python3 bench/bench_pdf_child.py`` (``--rounds``; ``--small``: one round).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import readme  # noqa: E402  (bench/ is not a package)
from pdi.fragments import pdf, pdf_render  # noqa: E402

CORPUS = HERE.parent / "tests" / "data" / "pdf"


def cases() -> list[tuple[str, Callable[[], object], Callable[[], object]]]:
    """(name, the floor: in this process, pdi: in a bounded child)."""
    small = (CORPUS / "hand-overprint-hyphens.pdf").read_bytes()
    paper = (CORPUS / "tracemonkey.pdf").read_bytes()
    index = pdf.build_layer_index(paper)
    return [
        ("layer, 1 KB, 2 pages (start-up)", lambda: pdf.text_layer(small).to_bytes(len(small)),
         lambda: pdf.build_layer_index(small)),
        ("layer, 1 MB, 14 pages", lambda: pdf.text_layer(paper).to_bytes(len(paper)),
         lambda: pdf.build_layer_index(paper)),
        ("boxes of pages 1-4", lambda: pdf.read_pages_now(paper, [1, 2, 3, 4]),
         lambda: pdf.pages_boxes(paper, index, [1, 2, 3, 4])),
        ("page 1 as PNG, 144 dpi", lambda: pdf_render.render_png_now(paper, 1), lambda: pdf_render.render_png(paper, 1)),
    ]


def main(argv: list[str]) -> int:
    parser = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), markdown=True)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    rounds = 1 if args.small else args.rounds
    load = os.getloadavg()[0]
    chosen = cases()
    pdf.text_layer((CORPUS / "sizes.pdf").read_bytes())  # pypdfium2 imported here before the floor is timed
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, _, _ in chosen}
    for _ in range(rounds):
        for name, here, child in chosen:
            for which, work in ((0, here), (1, child)):
                started = time.perf_counter()
                work()
                times[name][which].append(time.perf_counter() - started)
    print(f"PDFium in a bounded child vs in this process: medians of {rounds} interleaved rounds;"
          f" load average {load:.1f} before, {os.getloadavg()[0]:.1f} after, {os.cpu_count()} cores")
    rows = []
    for name, (here_times, child_times) in times.items():
        floor, ours = statistics.median(here_times), statistics.median(child_times)
        rows.append([name, f"{floor * 1000:.1f} ms", f"{ours * 1000:.1f} ms", f"+{(ours - floor) * 1000:.0f} ms",
                     f"{ours / floor:.2f}×"])
    table = readme.table(["work", "in this process (floor)", "in a bounded child (pdi)", "child's cost", "ratio"], rows)
    print(table, end="")
    readme.write(args.markdown, f"PDFium's work in a bounded child against the same work in this process (pypdfium2"
                 f" already imported), medians of {rounds} interleaved rounds:\n\n" + table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
