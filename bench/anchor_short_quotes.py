"""Short quotes (4-10 characters) re-anchored after a paragraph moved: how often a wrong place is answered.

Not a ``bench_*`` file (run by hand, before and after a change to :mod:`pdi.passages.reanchor`):

    PYTHONPATH=src python3 bench/anchor_short_quotes.py [CASES] [SEED]

Two generators, each with the right answer known from how the move was made:

* ``words7`` and ``words10``: paragraphs (``\\r\\n\\r\\n`` between them) of 2-14
  words from a vocabulary of 7 or 10, so that a short quote stands in many
  places; a run of whole words of 4-10 characters is cited; one paragraph
  is moved elsewhere (drawn again when the text is unchanged);
* ``corpus``: documents of ``bench/anchor_corpus.py`` (made-up words of
  syllables), a quote of 4-10 characters cut anywhere in one paragraph, that
  paragraph moved (documents with two paragraphs alike are drawn again).

Prints, per generator, the answers: correct (the same characters of the
same paragraph), wrong (anchored elsewhere), ambiguous and orphaned.
Figures for docs/benchmarks.md ("Re-anchoring").
"""

from __future__ import annotations

import collections
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anchor_corpus
from pdi.passages.reanchor import anchor_passage

VOCABULARY = ["alpha", "beta", "gamma", "delta", "the", "of", "a", "fee", "is", "due"]
SEP = "\r\n\r\n"


def _moved(rng: random.Random, paragraphs: list[str], p: int | None = None) -> list[int]:
    order = list(range(len(paragraphs)))
    while order == sorted(order):
        order = list(range(len(paragraphs)))
        order.insert(rng.randrange(len(order)), order.pop(rng.randrange(len(order)) if p is None else p))
    return order


def _case(rng: random.Random, paragraphs: list[str], p: int, at: int, length: int,
          order: list[int]) -> tuple[str, int, int, str, int]:
    old, new = SEP.join(paragraphs), SEP.join(paragraphs[i] for i in order)
    start = sum(len(x) + len(SEP) for x in paragraphs[:p]) + at
    right = sum(len(paragraphs[i]) + len(SEP) for i in order[:order.index(p)]) + at
    return old, start, start + length, new, right


def words_case(rng: random.Random, size: int) -> tuple[str, int, int, str, int] | None:
    vocabulary = VOCABULARY[:size]
    paragraphs = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(2, 14))) + rng.choice(["", ".", "."])
                  for _ in range(rng.randint(2, 8))]
    if len(set(paragraphs)) < len(paragraphs):
        return None
    p = rng.randrange(len(paragraphs))
    words = [m.span() for m in re.finditer(r"\w+", paragraphs[p])]
    runs = [(a, d) for k, (a, _) in enumerate(words) for _, d in words[k:] if 4 <= d - a <= 10]
    if not runs:
        return None
    a, d = rng.choice(runs)
    return _case(rng, paragraphs, p, a, d - a, _moved(rng, paragraphs))


def corpus_case(rng: random.Random) -> tuple[str, int, int, str, int] | None:
    paragraphs = ["\r\n".join(anchor_corpus._wrap(p)) for p in anchor_corpus._document(rng)]
    if len(set(paragraphs)) < len(paragraphs):
        return None
    p, length = rng.randrange(len(paragraphs)), rng.randint(4, 10)
    if len(paragraphs[p]) <= length:
        return None
    return _case(rng, paragraphs, p, rng.randint(0, len(paragraphs[p]) - length), length,
                 _moved(rng, paragraphs, p))


def main() -> int:
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    makers = {"words7": lambda r: words_case(r, 7), "words10": lambda r: words_case(r, 10), "corpus": corpus_case}
    for name, make in makers.items():
        rng = random.Random(seed)
        tally: collections.Counter[str] = collections.Counter()
        while sum(tally.values()) < cases:
            case = make(rng)
            if case is None:
                continue
            old, start, end, new, right = case
            found = anchor_passage(old, start, end, new)
            if found.anchored:
                tally["correct" if (found.start, found.end) == (right, right + end - start) else "wrong"] += 1
            else:
                tally[found.status] += 1
        print(f"{name:<8} " + ", ".join(f"{k} {tally[k]:,}" for k in ("correct", "wrong", "ambiguous", "orphaned")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
