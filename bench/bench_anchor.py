"""Re-anchoring cited passages in edited documents: pdi beside a naive ``str.find`` of the quote.

Generates the corpus of :mod:`anchor_corpus` (edited documents, each case
with its right answer known from how the edit was made: insertions before
the passage, edits elsewhere and inside it, deletions, near copies, moved
paragraphs, repeated phrases) and anchors every cited passage in the new version with

* pdi: :func:`pdi.passages.reanchor.anchor_passage` (exact, then quote with context,
  then fuzzy; otherwise orphaned or ambiguous, both counted as orphaned);
* the naive peer: the first occurrence of the quote in the new text
  (``str.find``), what most annotation tools fall back to, orphaned when
  there is none.

Prints, per kind of edit and in all, the correct, orphaned and wrong
answers of each, which methods pdi's answers came from, and the time each
took (and the ratio). Wrong must be zero for pdi.

Run: ``python3 bench/run_all.py anchor`` (``PDI_BENCH_ANCHOR_CASES`` cases
of each kind, 300 by default; ``PDI_BENCH_ANCHOR_SEED`` the seed, 2026).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import readme
from anchor_corpus import KINDS, Case, corpus, judge
from pdi.passages.reanchor import anchor_passage


def pdi_answer(case: Case, methods: collections.Counter[str]) -> tuple[int, int] | None:
    found = anchor_passage(case.old, case.start, case.end, case.new)
    methods[found.method if found.anchored else found.status] += 1  # type: ignore[index]
    return (found.start, found.end) if found.anchored else None


def naive_answer(case: Case) -> tuple[int, int] | None:
    at = case.new.find(case.quote)
    return None if at < 0 else (at, at + len(case.quote))


#: The README's names of the kinds of edit.
EDITS = {
    "insert-before": "insertions before the passage",
    "edit-elsewhere": "words changed elsewhere",
    "edit-inside": "a word edited inside the passage",
    "edit-inside-near-copy": "the same, a near copy of its sentence elsewhere",
    "delete": "the passage's sentence deleted",
    "delete-near-copy": "the same, a near copy of it elsewhere",
    "move": "its paragraph moved",
    "repeated": "a repeated phrase, text inserted before",
    "repeated-context": "a repeated phrase, the words around the cited one changed",
    "repeated-delete": "a repeated phrase, the cited one deleted",
    "renumbered": "a list item, renumbered (3. became 4.)",
    "renumbered-delete": "a list item deleted, the rest renumbered",
}


def markdown(per_kind: int, tallies: dict[str, dict[str, collections.Counter[str]]],
             totals: dict[str, collections.Counter[str]], methods: collections.Counter[str],
             times: dict[str, float], n: int) -> str:
    def cell(t: collections.Counter[str], bold: bool = False) -> str:
        text = f"{t['correct']:,} / {t['orphaned']:,} / {t['wrong']:,}"
        return f"**{text}**" if bold else text

    rows = [[EDITS.get(kind, kind), cell(tallies["pdi"][kind]), cell(tallies["naive"][kind])] for kind in KINDS]
    rows.append(["**all**", cell(totals["pdi"], True), cell(totals["naive"], True)])
    return (f"{n:,} cases, {per_kind:,} of each kind of edit:\n\n"
            + readme.table(["edit", "pdi correct / orphaned / wrong", "`str.find` correct / orphaned / wrong"], rows)
            + "\npdi's answers by method: " + ", ".join(f"{m} {k:,}" for m, k in sorted(methods.items()))
            + f". Time per case: pdi {times['pdi'] / n * 1e3:.2f} ms, `str.find` {times['naive'] / n * 1e3:.3f} ms"
            f" (ratio **{times['pdi'] / max(times['naive'], 1e-9):.0f}×**).\n")


def main() -> int:
    args = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]),
                            markdown=True).parse_args()
    per_kind = 5 if args.small else int(os.environ.get("PDI_BENCH_ANCHOR_CASES", "300"))
    seed = int(os.environ.get("PDI_BENCH_ANCHOR_SEED", "2026"))
    cases = corpus(seed, per_kind)
    print(f"{len(cases)} cases ({per_kind} of each of {len(KINDS)} kinds of edit), seed {seed}")
    tallies: dict[str, dict[str, collections.Counter[str]]] = {"pdi": {}, "naive": {}}
    methods: collections.Counter[str] = collections.Counter()
    times = {"pdi": 0.0, "naive": 0.0}
    for case in cases:
        t0 = time.perf_counter()
        ours = pdi_answer(case, methods)
        t1 = time.perf_counter()
        theirs = naive_answer(case)
        t2 = time.perf_counter()
        times["pdi"] += t1 - t0
        times["naive"] += t2 - t1
        tallies["pdi"].setdefault(case.kind, collections.Counter())[judge(case, ours)] += 1
        tallies["naive"].setdefault(case.kind, collections.Counter())[judge(case, theirs)] += 1
    print(f"\n{'kind':<22} {'pdi correct/orphaned/wrong':>28} {'str.find correct/orphaned/wrong':>34}")
    totals = {who: collections.Counter[str]() for who in tallies}
    for kind in KINDS:
        row = []
        for who in ("pdi", "naive"):
            t = tallies[who][kind]
            totals[who].update(t)
            row.append(f"{t['correct']:>8} {t['orphaned']:>8} {t['wrong']:>8}")
        print(f"{kind:<22} {row[0]:>28} {row[1]:>34}")
    row = [f"{totals[w]['correct']:>8} {totals[w]['orphaned']:>8} {totals[w]['wrong']:>8}" for w in ("pdi", "naive")]
    print(f"{'all':<22} {row[0]:>28} {row[1]:>34}")
    print("\npdi's answers by method: " + ", ".join(f"{m} {n}" for m, n in sorted(methods.items())))
    n = len(cases)
    print(
        f"time per case: pdi {times['pdi'] / n * 1e3:.3f} ms, str.find {times['naive'] / n * 1e3:.4f} ms"
        f" (ratio pdi/str.find {times['pdi'] / max(times['naive'], 1e-9):.0f}x)"
    )
    readme.write(args.markdown, markdown(per_kind, tallies, totals, methods, times, n))
    if totals["pdi"]["wrong"]:
        print(f"FAIL: pdi answered {totals['pdi']['wrong']} wrong anchors", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
