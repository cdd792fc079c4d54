"""The reference matcher of the search tests, written from docs/reference/search.md: a phrase is consecutive words
equal as the test's tokenizer reads them, and a hit is one phrase's first match, or the shortest stretch holding a
match of every phrase (the earliest of equal ones)."""

from __future__ import annotations

from itertools import product

Token = tuple[str, int, int]


def matches_of(doc: list[Token], phrase: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where ``phrase`` stands in the words ``doc`` (word, start, end), in order."""
    n = len(phrase)
    return [(doc[i][1], doc[i + n - 1][2]) for i in range(len(doc) - n + 1)
            if tuple(w for w, _, _ in doc[i : i + n]) == phrase]


def shortest_hit(doc: list[Token], phrases: list[tuple[str, ...]]) -> tuple[int, int] | None:
    """The hit of ``phrases`` in the words ``doc``: ``None`` where a phrase is missing."""
    groups = [matches_of(doc, p) for p in phrases]
    if any(not g for g in groups):
        return None
    if len(groups) == 1:
        return groups[0][0]
    best: tuple[int, int] | None = None
    for choice in product(*groups):
        window = (min(a for a, _ in choice), max(b for _, b in choice))
        if best is None or (window[1] - window[0], window[0]) < (best[1] - best[0], best[0]):
            best = window
    return best
