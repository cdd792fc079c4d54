"""Re-anchoring a cited passage in another version of its document: texts in, positions out.

A passage cited as ``[start, end)`` of one version's text is looked for in
another version's text, by three methods in order; the first that answers
decides, and the answer says which one it was:

1. **exact** — the two texts are compared (their common head and tail, then
   a diff of the rest: rapidfuzz's ``Indel.opcodes``, a longest common
   subsequence of characters, or of lines when the part that differs is too
   long for a character diff, :data:`MAX_DIFF_CELLS`; with too many lines
   for that too, only the head and tail: then the quote method takes only a
   quote that stands once in the cited version, and there is no fuzzy
   search, since neither could tell the passage from where other text went).
   When the passage *and* :data:`CONTEXT` characters on each side of it
   (or the start or end of the document, which must then still be the start
   or end) lie in one block the diff keeps unchanged, its positions are
   mapped through that block: character for character, score 1.
2. **quote** — the passage's exact text (its *quote*) is looked for in the
   other version, each occurrence with the :data:`CONTEXT` characters before
   and after it compared to the cited passage's (a normalized Levenshtein
   similarity, :func:`context_similarity`). An occurrence is taken when it
   is the only one whose context is similar enough (:data:`QUOTE_CONTEXT_MIN`,
   or one side alone :data:`SIDE_MIN`: text inserted just before or after
   the passage) or clearly the most similar (by :data:`MARGIN`); or, with no context
   left, when the quote is long (:data:`DISTINCT_CHARS`) and occurs exactly
   once in each version. Position tells occurrences apart through the
   diff: an occurrence that lies wholly in a block the diff kept unchanged
   from *other* text of the cited version (another copy of a repeated
   phrase, a near copy of a deleted sentence) is where that text went, not
   the passage, and is passed over (:func:`_image_of_other`). Occurrences
   whose contexts are equally good (within :data:`MARGIN`; the best good
   enough, the others whatever their own) are **ambiguous**: the answer
   lists them, never guesses. Nor is the best taken when another occurrence
   of the quote in the *cited* version has a context as like the cited
   one's (within :data:`MARGIN`, :func:`_alike_in_cited`): contexts that
   alike come by chance in this text, and that occurrence may be what
   stands at the best place now (a short quote, a paragraph moved beside
   it); the answer is ambiguous, or orphaned when one place alone fits. (Where the diff merely aligned a
   passage with one of two new copies of it, that alignment is not taken as
   evidence: either copy could be the one kept.)
   Where a list number (:data:`_LIST_NUMBER`: ``3.``, ``12)`` at the start
   of a line) stands in the passage or its context, these two methods are
   asked again with every list number of both texts replaced by ``#``
   (:func:`_renumbered`): a list item whose only change is its number ("3."
   became "4.") is found so, and answered as **fuzzy** with its score.
3. **fuzzy** — the quote with its context is aligned to the most similar
   stretch of the other version (rapidfuzz's ``partial_ratio_alignment``),
   the passage's ends are mapped through a diff of that stretch (a place
   that is the unchanged image of other text is passed over, as above), and
   the answer is taken when the text found is similar enough to the quote
   (:data:`FUZZY_MIN`, ``fuzz.ratio``) *and* its context to the cited
   context (:data:`FUZZY_CONTEXT_MIN`). A second alignment, with the first
   stretch blanked, that scores as well makes the answer ambiguous; so does
   the quote standing unchanged elsewhere, at a place the quote method could
   take, when the stretch found is merely like it (a near copy inserted
   beside where the passage went). A stretch that overlaps one occurrence of
   the quote is that occurrence (text inserted beside the passage is not it).

Otherwise the passage is **orphaned**: it is not in the other version as far
as these methods can tell. A passage whose quote is blank (white space
only, or empty: a position) is anchored by the exact method alone.

What this module does not decide: which texts to compare (for HTML, the
page's text without its markup: :mod:`pdi.archive.anchoring`), and how the
answer is named. Positions are ``[start, end)`` over the code points of the
strings given; :mod:`pdi.archive.anchoring` gives it the CRLF-canonical text
the PDI ``char`` scheme counts (PDI-GRAMMAR.md §3). The limits
(:data:`MAX_DIFF_CELLS`, :data:`MAX_FUZZY_QUOTE`, :data:`MAX_FUZZY_TEXT`,
:data:`MAX_FUZZY_WORK`, :data:`MAX_HITS`) bound the work on any input: past them a method is
skipped (and the answer says so in ``notes``), never run long.

Pure: no I/O.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel, Levenshtein, Opcode

__all__ = [
    "CONTEXT",
    "Anchoring",
    "Candidate",
    "anchor_passage",
    "context_similarity",
    "equal_blocks",
]

#: Characters of context on each side of a passage that the exact and quote methods compare.
CONTEXT: Final = 32
#: The largest character diff (characters of one version's differing part times the other's): about 50 MB of bit matrix.
MAX_DIFF_CELLS: Final = 400_000_000
#: A quote at least this long that occurs once in each version is the same passage even where its context changed.
DISTINCT_CHARS: Final = 40
#: How similar (0..1) an exact quote's context must be to the cited one's.
QUOTE_CONTEXT_MIN: Final = 0.6
#: How similar (0..1) one side of an exact quote's context must be, where the other side changed (text inserted there).
SIDE_MIN: Final = 0.9
#: How much better (0..1) the best occurrence's context must be than the next one's.
MARGIN: Final = 0.15
#: The shortest quote searched fuzzily (characters): a shorter one matches too much by chance.
MIN_FUZZY_QUOTE: Final = 12
#: The longest quote searched fuzzily (characters): the alignment's work grows with its square.
MAX_FUZZY_QUOTE: Final = 4000
#: The smallest similarity (0..1, ``fuzz.ratio``) of a fuzzy match to the quote.
FUZZY_MIN: Final = 0.75
#: The smallest similarity (0..1) of a fuzzy match's context to the cited context.
FUZZY_CONTEXT_MIN: Final = 0.5
#: How close (0..1) a second fuzzy stretch may score to the first before the answer is ambiguous.
FUZZY_MARGIN: Final = 0.03
#: The longest other version searched fuzzily (characters): the alignment's work grows with it.
MAX_FUZZY_TEXT: Final = 2_000_000
#: The most work (the quote with its context squared, times the other version's characters) of one fuzzy
#: alignment: ``partial_ratio_alignment`` compares a window of the quote's length at each place of the text,
#: about half a second here; 4,000 characters of quote are searched in up to 12,000 characters of text,
#: 1,000 in 180,000, 300 in 2,000,000.
MAX_FUZZY_WORK: Final = 200_000_000_000
#: The most alignments made in a fuzzy search (places passed over included).
FUZZY_ROUNDS: Final = 6
#: The most occurrences of a quote compared by context; more, and the quote method does not answer.
MAX_HITS: Final = 10_000


@dataclass(frozen=True)
class Candidate:
    """One place a passage may stand: ``[start, end)`` of the other text, with how similar its context is (0..1).

    ``context`` weighs both sides; ``side`` is the more similar side alone.
    """

    start: int
    end: int
    context: float
    side: float = 0.0


@dataclass(frozen=True)
class Anchoring:
    """Where a cited passage stands in the other version, or why it cannot be said.

    ``status`` is ``"anchored"`` (then ``method`` is ``"exact"``, ``"quote"``
    or ``"fuzzy"`` and ``[start, end)`` the passage in the other text),
    ``"orphaned"`` or ``"ambiguous"`` (then ``candidates`` are the places
    that could not be told apart). ``score`` is the similarity (0..1) of the
    text found to the quote (1 for exact and quote), ``context`` that of the
    context around it to the cited context. ``notes`` say which methods were
    skipped and why.
    """

    status: str
    method: str | None = None
    start: int = 0
    end: int = 0
    score: float = 0.0
    context: float = 0.0
    candidates: tuple[Candidate, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def anchored(self) -> bool:
        return self.status == "anchored"


# --- the diff: blocks kept unchanged -----------------------------------------------------------


def equal_blocks(
    old: str, new: str, *, max_cells: int = MAX_DIFF_CELLS
) -> tuple[list[tuple[int, int, int]], str | None, bool]:
    """The blocks two texts share, ``(old_start, new_start, size)`` in order; a note if the diff was coarsened; whether it is whole.

    The common head and tail are blocks of their own; the rest is diffed by
    characters (an LCS) when its size allows (``max_cells``), else by lines
    when their number allows, else not at all: then only the head and the
    tail are known, and the last value is ``False``.
    """
    n, m = len(old), len(new)
    head = _common_run(old, 0, new, 0, min(n, m), backwards=False)
    tail = _common_run(old, n, new, m, min(n, m) - head, backwards=True)
    blocks: list[tuple[int, int, int]] = []
    if head:
        blocks.append((0, 0, head))
    a, b = old[head:n - tail], new[head:m - tail]
    note, whole = None, True
    if a and b:
        if len(a) * len(b) <= max_cells:
            for op in Indel.opcodes(a, b):
                if op.tag == "equal":
                    blocks.append((head + op.src_start, head + op.dest_start, op.src_end - op.src_start))
        else:
            lines_a, lines_b = a.splitlines(keepends=True), b.splitlines(keepends=True)
            if len(lines_a) * len(lines_b) <= max_cells:
                note = "the versions differ over too much text for a character diff: lines were compared"
                starts_a, starts_b = _starts(lines_a), _starts(lines_b)
                for op in Indel.opcodes(lines_a, lines_b):
                    if op.tag == "equal":
                        i, k = op.src_start, op.dest_start
                        blocks.append((head + starts_a[i], head + starts_b[k], starts_a[op.src_end] - starts_a[i]))
            else:
                note = "the versions differ over too many lines for a diff: only their common start and end were compared"
                whole = False
    if tail:
        blocks.append((n - tail, m - tail, tail))
    return blocks, note, whole


#: Characters compared at a time when looking for the common head and tail: slices this long (256 KB of
#: text beyond the Basic Multilingual Plane), never copies of half a text (64 MB of two 32 MB texts).
COMMON_CHUNK: Final = 1 << 16


def _common_run(old: str, i: int, new: str, j: int, limit: int, *, backwards: bool) -> int:
    """How many characters (at most ``limit``) ``old`` and ``new`` share from ``old[i]`` and ``new[j]`` on.

    Forwards, or with ``backwards`` those before ``i`` and ``j``. Chunks of
    :data:`COMMON_CHUNK` characters are compared (C speed), then the first
    chunk that differs is narrowed down by halves, so no slice is longer than
    a chunk.
    """

    def same(done: int, k: int) -> bool:  # the k characters after the done ones are the same in both
        if backwards:
            return old[i - done - k:i - done] == new[j - done - k:j - done]
        return old[i + done:i + done + k] == new[j + done:j + done + k]

    done = 0
    while done < limit:
        step = min(COMMON_CHUNK, limit - done)
        if not same(done, step):
            lo, hi = 0, step - 1  # the largest k in [lo, hi] with same(done, k)
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if same(done, mid):
                    lo = mid
                else:
                    hi = mid - 1
            return done + lo
        done += step
    return limit


def _starts(lines: list[str]) -> list[int]:
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts


def _block_holding(blocks: list[tuple[int, int, int]], lo: int, hi: int) -> tuple[int, int, int] | None:
    """The block whose old side holds ``[lo, hi)`` (for ``lo == hi``: a block holding ``lo``, its end included)."""
    i = bisect_right(blocks, (lo, 1 << 62, 0)) - 1
    if i < 0:
        return None
    a, _, size = blocks[i]
    return blocks[i] if a <= lo and hi <= a + size else None


# --- context -----------------------------------------------------------------------------------


def context_similarity(old: str, start: int, end: int, new: str, at: int, to: int, width: int = CONTEXT) -> float:
    """How similar (0..1) the ``width`` characters around ``new[at:to]`` are to those around ``old[start:end]``.

    Each side is compared by normalized Levenshtein similarity (the side
    before read backwards, from the passage out), weighted by its length; a
    side cut short by the start or end of a document compares as what is
    there (a W3C TextQuoteSelector prefix or suffix is the text that stands
    there), the start or end itself one character more: that many characters
    of the other text are compared with it, and weigh as many. No context on
    either side (the whole document) is 1.
    """
    return _sides(old, start, end, new, at, to, width)[0]


def _edged(cited: str, there: str, edge_there: bool) -> tuple[str, str]:
    """A side of the cited context cut short by its document's edge, and the side compared with it, each with the edge.

    Both read from the passage out; the edge is one character that neither
    holds, ending the cited side, and ``there`` too when ``edge_there`` (it
    reached its own document's edge).
    """
    mark = next(c for c in map(chr, range(len(cited) + len(there) + 1)) if c not in cited and c not in there)
    return cited + mark, there + mark if edge_there else there


def _sides(
    old: str, start: int, end: int, new: str, at: int, to: int, width: int, alone: tuple[bool, bool] = (True, True)
) -> tuple[float, float]:
    """The context similarity of both sides weighed together, and of the more similar side alone.

    ``alone`` says which side (before, after) may count alone. A side alone
    compares the characters as they stand (up to ``width``, the document's
    edge left out), over the longer of the two: a side cut short by the edge
    counts alone only beside one about as short (the passage still near the
    edge), never for its few characters against a whole side.
    """
    before_old, before_new = old[max(0, start - width):start], new[max(0, at - width):at]
    after_old, after_new = old[end:end + width], new[to:to + width]
    w1, w2 = max(len(before_old), len(before_new)), max(len(after_old), len(after_new))
    s1 = Levenshtein.normalized_similarity(before_old[::-1], before_new[::-1])
    s2 = Levenshtein.normalized_similarity(after_old, after_new)
    side = max(s1 if w1 and alone[0] else 0.0, s2 if w2 and alone[1] else 0.0)
    # weighed together, a side cut short by the document's edge is what stood there and the edge: as many
    # characters of the other text (and its edge, where it is reached first) are compared with it, not ``width``
    if start < width:
        k = len(before_old) + 1
        b_old, b_new = _edged(before_old[::-1], new[max(0, at - k):at][::-1], at < k)
        w1, s1 = k, Levenshtein.normalized_similarity(b_old, b_new)
    if end + width > len(old):
        k = len(after_old) + 1
        a_old, a_new = _edged(after_old, new[to:to + k], to + k > len(new))
        w2, s2 = k, Levenshtein.normalized_similarity(a_old, a_new)
    if w1 + w2 == 0:
        return 1.0, 1.0
    return (s1 * w1 + s2 * w2) / (w1 + w2), side


def _candidate(
    old: str, start: int, end: int, new: str, at: int, to: int, width: int, alone: tuple[bool, bool] = (True, True)
) -> Candidate:
    both, side = _sides(old, start, end, new, at, to, width, alone)
    return Candidate(at, to, both, side)


#: A list item's start: its number (or the ``#`` that stands for it in :class:`_Masked` text), a ``.`` or ``)``, a space.
_ITEM_START: Final = re.compile(r"[ \t]*(?:\d{1,9}(?:\.\d{1,9})*|#)[.)][ \t]")


def _item_edges(old: str, start: int, end: int) -> tuple[bool, bool]:
    """Whether the passage starts a list item (from its number) and whether it ends one with another item next."""
    line = old.rfind("\n", 0, start) + 1
    starts_item = not old[line:start].strip() and _ITEM_START.match(old, line) is not None
    after = old.find("\n", end)
    ends_item = after >= 0 and not old[end:after].strip() and _ITEM_START.match(old, after + 1) is not None
    return starts_item, ends_item


def _line_rest(text: str, pos: int) -> str:
    """The rest of the line from ``pos`` (its line break left out)."""
    after = text.find("\n", pos)
    return text[pos:after if after >= 0 else len(text)].rstrip("\r")


def _line_head(text: str, pos: int) -> str:
    """The line up to ``pos``."""
    return text[text.rfind("\n", 0, pos) + 1:pos]


def _alone(old: str, start: int, end: int, new: str, at: int, to: int, edges: tuple[bool, bool]) -> tuple[bool, bool]:
    """Which side of the context of ``new[at:to]`` may count alone: not one that is a whole other list item.

    A passage cited from a list item's number has the item before it as
    its context before; that item stays where the cited one is deleted, and
    the next one takes the cited number ("2. Da" of "2. Da enon", deleted,
    is not "2. Da!", the item renumbered in its place), so that side alone
    counts only where the rest of the cited line stands after the place
    too. The same, mirrored, for a passage that ends its item.
    """
    starts_item, ends_item = edges
    before = not starts_item or _line_rest(old, end) == _line_rest(new, to)
    after = not ends_item or _line_head(old, start) == _line_head(new, at)
    return before, after


#: How similar (0..1) the rest of a cited list item's line must be at a place taken for it (:func:`_item_kept`).
ITEM_REST_MIN: Final = 0.5


def _item_kept(old: str, start: int, end: int, new: str, at: int, to: int, edges: tuple[bool, bool]) -> bool:
    """Whether ``new[at:to]`` keeps the line of the list item a passage was cited from.

    Where a cited item is deleted, the next one takes its number and its
    place ("3. Sel." deleted, "4. Sel gravopi …" is now "3. Sel gravopi …"):
    only the rest of the line tells them apart. So a passage cited from an
    item's number is taken only where the rest of its line (up to
    :data:`CONTEXT` characters) stands after it much as it did
    (:data:`ITEM_REST_MIN`); mirrored, the line before a passage that ends
    its item.
    """
    starts_item, ends_item = edges
    if starts_item and Levenshtein.normalized_similarity(
            _line_rest(old, end)[:CONTEXT], _line_rest(new, to)[:CONTEXT]) < ITEM_REST_MIN:
        return False
    return not ends_item or Levenshtein.normalized_similarity(
        _line_head(old, start)[::-1][:CONTEXT], _line_head(new, at)[::-1][:CONTEXT]) >= ITEM_REST_MIN


def _image_of_other(blocks: list[tuple[int, int, int]], by_new: list[int], start: int, end: int, at: int, to: int) -> bool:
    """Whether ``[at, to)`` of the new text is wholly the unchanged image of old text other than ``[start, end)``.

    Such a stretch is where other text of the old version went (a second
    copy of a repeated phrase, a near copy of a deleted sentence), so it is
    not the passage, however like it it reads.
    """
    i = bisect_right(by_new, at) - 1
    if i < 0:
        return False
    a, b, size = blocks[i]
    if not (b <= at and to <= b + size) or to == at:
        return False
    p, q = a + at - b, a + to - b
    return q <= start or p >= end


def _word_edge(text: str, i: int) -> bool:
    """Whether position ``i`` of ``text`` is not inside a word (letters and digits on both sides)."""
    return i <= 0 or i >= len(text) or not (text[i - 1].isalnum() and text[i].isalnum())


def _same_edges(old: str, start: int, end: int, new: str, at: int, to: int) -> bool:
    """Whether ``new[at:to]`` starts and ends between words wherever the cited ``old[start:end]`` does."""
    return (not _word_edge(old, start) or _word_edge(new, at)) and (not _word_edge(old, end) or _word_edge(new, to))


def _occurrences(text: str, quote: str, cap: int) -> list[int]:
    found: list[int] = []
    at = text.find(quote)
    while at >= 0 and len(found) <= cap:
        found.append(at)
        at = text.find(quote, at + 1)
    return found


# --- the three methods -------------------------------------------------------------------------


def anchor_passage(old: str, start: int, end: int, new: str, *, context: int = CONTEXT) -> Anchoring:
    """Find ``old[start:end]`` in ``new`` (see the module docstring): exactly, by quote and context, or fuzzily."""
    if not 0 <= start <= end <= len(old):
        raise ValueError(f"the passage [{start}, {end}) is not within the text's {len(old)} characters")
    if old == new:  # the same text: the passage is where it was (also in an empty text, which has no block)
        return Anchoring("anchored", "exact", start, end, 1.0, 1.0)
    notes: list[str] = []
    blocks, note, whole = equal_blocks(old, new)
    if note:
        notes.append(note)
    found = _exact(blocks, old, start, end, new, context)
    if found is not None:
        return found
    quote = old[start:end]
    if not quote.strip():
        return Anchoring("orphaned", notes=(*notes, "a blank passage is anchored by the unchanged text around it only"))
    by_quote = _by_quote(blocks, old, start, end, new, context, notes, whole)
    if by_quote is not None:
        return by_quote
    if not whole:  # without a diff, a similar stretch cannot be told from where other text went
        return Anchoring("orphaned", notes=(*notes, "no fuzzy search without a diff of the versions"))
    renumbered = _renumbered(old, start, end, new, context, notes)
    if renumbered is not None:
        return renumbered
    if len(new) > MAX_FUZZY_TEXT:
        return Anchoring("orphaned", notes=(*notes, f"no fuzzy search in a text over {MAX_FUZZY_TEXT} characters"))
    return _fuzzy(blocks, old, start, end, new, context, notes)


def _exact(
    blocks: list[tuple[int, int, int]], old: str, start: int, end: int, new: str, context: int
) -> Anchoring | None:
    lo, hi = max(0, start - context), min(len(old), end + context)
    block = _block_holding(blocks, lo, hi)
    if block is None:
        return None
    a, b, size = block
    if start - context < 0 and b - a != 0:  # the passage's context is the document's start: it must still be
        return None
    if end + context > len(old) and (b + size != len(new) or a + size != len(old)):
        return None
    shift = b - a
    return Anchoring("anchored", "exact", start + shift, end + shift, 1.0, 1.0)


def _places_of_quote(
    blocks: list[tuple[int, int, int]], old: str, start: int, end: int, new: str, hits: list[int]
) -> list[int]:
    """The occurrences ``hits`` of the quote in ``new`` that may be the passage (not where other text went, etc.)."""
    length = end - start
    by_new = [b for _, b, _ in blocks]
    hits = [h for h in hits if not _image_of_other(blocks, by_new, start, end, h, h + length)]
    if length < DISTINCT_CHARS:
        # a short passage cited from word to word is not found inside other words ("da lo do" in
        # "studa lo do"); a long one that stands once is itself the evidence, whatever was glued to it
        hits = [h for h in hits if _same_edges(old, start, end, new, h, h + length)]
    edges = _item_edges(old, start, end)
    return [h for h in hits if _item_kept(old, start, end, new, h, h + length, edges)]


def _by_quote(
    blocks: list[tuple[int, int, int]], old: str, start: int, end: int, new: str, context: int, notes: list[str],
    whole: bool,
) -> Anchoring | None:
    quote = old[start:end]
    if not whole and len(_occurrences(old, quote, 1)) > 1:
        notes.append("the quote stands more than once in the cited version and the versions were not diffed")
        return None
    hits = _occurrences(new, quote, MAX_HITS)
    if not hits:
        return None
    if len(hits) > MAX_HITS:
        notes.append(f"the quote occurs more than {MAX_HITS} times: not compared by context")
        return None
    length = len(quote)
    hits = _places_of_quote(blocks, old, start, end, new, hits)
    edges = _item_edges(old, start, end)
    scored = sorted((_candidate(old, start, end, new, h, h + length, context,
                                _alone(old, start, end, new, h, h + length, edges)) for h in hits),
                    key=lambda c: (-c.context, c.start))
    if len(hits) == 1 and length >= DISTINCT_CHARS and len(_occurrences(old, quote, 1)) == 1:
        only = scored[0]
        return Anchoring("anchored", "quote", only.start, only.end, 1.0, only.context)
    good = [c for c in scored if c.context >= QUOTE_CONTEXT_MIN or c.side >= SIDE_MIN]
    if not good:
        return None
    best = good[0]
    # a rival is any place whose context fits as well, good enough alone or not: one just under the bar
    # is no less likely the passage than the best just over it
    rivals = [c for c in scored if c.context > best.context - MARGIN]
    if len(rivals) > 1:
        return Anchoring("ambiguous", "quote", candidates=tuple(sorted(rivals, key=lambda c: c.start)),
                         notes=tuple(notes))
    # how alike contexts are by chance in this text: another occurrence of the quote in the cited version
    # whose context is as like the cited one's may be what stands at the best place now (a paragraph moved
    # beside it), and a short quote has many
    alike = _alike_in_cited(old, start, end, context, edges)
    if alike > best.context - MARGIN:
        places = [c for c in scored if c.context > alike - MARGIN]
        why = ("another occurrence of the quote in the cited version has a context as like the cited one's"
               " as the best place's: context does not tell them apart")
        if len(places) > 1:
            return Anchoring("ambiguous", "quote", candidates=tuple(sorted(places, key=lambda c: c.start)),
                             notes=(*notes, why))
        return Anchoring("orphaned", notes=(*notes, why))
    return Anchoring("anchored", "quote", best.start, best.end, 1.0, best.context)


def _alike_in_cited(old: str, start: int, end: int, context: int, edges: tuple[bool, bool]) -> float:
    """How like the cited passage's context (0..1) the most alike other occurrence's of its quote in the cited version is.

    The occurrences are those the quote method would weigh (:func:`_places_of_quote`'s edges and list
    items); -1 when there are none. At most :data:`MAX_HITS` are compared.
    """
    length = end - start
    hits = [h for h in _occurrences(old, old[start:end], MAX_HITS)[:MAX_HITS] if h != start]
    if length < DISTINCT_CHARS:
        hits = [h for h in hits if _same_edges(old, start, end, old, h, h + length)]
    hits = [h for h in hits if _item_kept(old, start, end, old, h, h + length, edges)]
    return max((context_similarity(old, start, end, old, h, h + length, context) for h in hits), default=-1.0)


def _fuzzy(
    blocks: list[tuple[int, int, int]], old: str, start: int, end: int, new: str, context: int, notes: list[str]
) -> Anchoring:
    quote = old[start:end]
    if len(quote) < MIN_FUZZY_QUOTE:
        return Anchoring("orphaned", notes=(*notes, f"a quote under {MIN_FUZZY_QUOTE} characters is not searched fuzzily"))
    if len(quote) > MAX_FUZZY_QUOTE:
        return Anchoring("orphaned", notes=(*notes, f"a quote over {MAX_FUZZY_QUOTE} characters is not searched fuzzily"))
    needle = min(len(old), end + context) - max(0, start - context)
    if needle * needle * len(new) > MAX_FUZZY_WORK:
        return Anchoring("orphaned", notes=(
            *notes, f"a quote of {len(quote)} characters is not searched fuzzily in a text of {len(new)}: that is"
            f" over {MAX_FUZZY_WORK} steps (its length with context squared, times the text's)"))
    search = _FuzzySearch(blocks, old, start, end, new, context)
    first = search.next()
    if first is None:
        return Anchoring("orphaned", notes=tuple(notes))
    candidate, score = first
    if score < FUZZY_MIN or candidate.context < FUZZY_CONTEXT_MIN:
        return Anchoring("orphaned", notes=tuple(notes))
    # the quote itself, unchanged, where it may be the passage: a place merely like it is not told from it
    # by context alone (a near copy inserted beside where the passage went, its context the cited one's)
    hits = _occurrences(new, quote, MAX_HITS) if new[candidate.start:candidate.end] != quote else []
    exact = _places_of_quote(blocks, old, start, end, new, hits) if len(hits) <= MAX_HITS else []
    if exact:
        places = [candidate, *(_candidate(old, start, end, new, h, h + len(quote), context) for h in exact)]
        return Anchoring("ambiguous", "fuzzy", candidates=tuple(sorted(places, key=lambda c: c.start)),
                         notes=(*notes, "the quote stands unchanged elsewhere than the most similar place"))
    # the next best place, the first blanked: one as good makes the answer ambiguous
    second = search.next()
    if second is not None:
        other, other_score = second
        if (
            other_score >= FUZZY_MIN and other.context >= FUZZY_CONTEXT_MIN
            and other_score + other.context >= score + candidate.context - 2 * FUZZY_MARGIN
        ):
            return Anchoring(
                "ambiguous", "fuzzy", candidates=tuple(sorted((candidate, other), key=lambda c: c.start)),
                notes=tuple(notes),
            )
    return Anchoring("anchored", "fuzzy", candidate.start, candidate.end, score, candidate.context)


#: A list item's number at the start of a line (``3.``, ``12)``, ``2.1.``): what renumbering a list changes.
_LIST_NUMBER: Final = re.compile(r"^[ \t]*(\d{1,9}(?:\.\d{1,9})*)(?=[.)][ \t])", re.MULTILINE)


class _Masked:
    """A text with each list number (:data:`_LIST_NUMBER`) replaced by one ``#``, and the way between the two."""

    def __init__(self, text: str) -> None:
        self.spans = [m.span(1) for m in _LIST_NUMBER.finditer(text)]
        parts, last, length = [], 0, 0
        self.at: list[int] = []  # where each number's '#' stands in the masked text
        for i, j in self.spans:
            parts.append(text[last:i])
            length += i - last  # a running count: summing the parts again for each number is quadratic
            self.at.append(length + len(self.at))
            last = j
        parts.append(text[last:])
        self.text = "#".join(parts) if self.spans else text
        self.starts = [i for i, _ in self.spans]

    def near(self, lo: int, hi: int) -> bool:
        """Whether a list number stands in ``[lo, hi)`` of the text (or touches it)."""
        k = bisect_right(self.starts, hi) - 1
        return k >= 0 and self.spans[k][1] >= lo

    def masked(self, pos: int, *, end: bool) -> int:
        """Where position ``pos`` of the text stands in the masked text (inside a number: before or after its '#')."""
        k = bisect_right(self.starts, pos) - 1
        if k < 0:
            return pos
        i, j = self.spans[k]
        if pos >= j:
            return self.at[k] + 1 + pos - j
        return self.at[k] + (1 if end and pos > i else 0)

    def unmasked(self, pos: int) -> int:
        """Where position ``pos`` of the masked text stands in the text (before or after a '#': its number's ends)."""
        k = bisect_right(self.at, pos) - 1
        if k < 0:
            return pos
        i, j = self.spans[k]
        return i if pos == self.at[k] else j + pos - self.at[k] - 1


def _renumbered(old: str, start: int, end: int, new: str, context: int, notes: list[str]) -> Anchoring | None:
    """The passage found by the exact or quote method once list numbers are set aside ("3." became "4."), or ``None``.

    Only where a list number stands in the passage or its context. The
    answer is fuzzy (its text differs from the quote by the numbers), with
    its score; the methods' own rules (context, edges, ambiguity) decide, so
    a place they would not take with the numbers equal is not taken here.
    """
    was = _Masked(old)
    if not was.near(max(0, start - context), min(len(old), end + context)):
        return None
    now = _Masked(new)
    if not now.spans:
        return None
    a, b = was.masked(start, end=False), was.masked(end, end=True)
    blocks, _, whole = equal_blocks(was.text, now.text)
    found = _exact(blocks, was.text, a, b, now.text, context) or _by_quote(
        blocks, was.text, a, b, now.text, context, [], whole)
    if found is None or not found.anchored:
        return None
    at, to = now.unmasked(found.start), now.unmasked(found.end)
    score = fuzz.ratio(old[start:end], new[at:to]) / 100
    return Anchoring("anchored", "fuzzy", at, to, score, context_similarity(old, start, end, new, at, to, context),
                     notes=(*notes, "found with the list numbers set aside (a list renumbered)"))


def _fuzzy_score(quote: str, found: str, starts_item: bool) -> float:
    """How similar (0..1, ``fuzz.ratio``) the text found is to the quote; of a list item, without its number.

    A list item's number says nothing of the item (a renumbered list gives
    the next item the number of one deleted), so it is not let raise the
    score of a place.
    """
    if starts_item:
        quote, found = (text[m.end():] if (m := _ITEM_START.match(text)) else text for text in (quote, found))
    return fuzz.ratio(quote, found) / 100


class _FuzzySearch:
    """The places of a passage in the new text, best first, each stretch found blanked before the next search.

    A place that is the unchanged image of other old text
    (:func:`_image_of_other`) is passed over; at most :data:`FUZZY_ROUNDS`
    alignments are made in all.
    """

    def __init__(self, blocks: list[tuple[int, int, int]], old: str, start: int, end: int, new: str, context: int) -> None:
        self.blocks, self.by_new = blocks, [b for _, b, _ in blocks]
        self.old, self.start, self.end, self.new, self.context = old, start, end, new, context
        self.lo, self.hi = max(0, start - context), min(len(old), end + context)
        self.searched = new
        self.blanked: list[tuple[int, int]] = []
        self.taken: list[tuple[int, int]] = []  # the places answered: a later alignment may map to one again
        self.rounds = 0
        self.edges = _item_edges(old, start, end)

    def next(self) -> tuple[Candidate, float] | None:
        while self.rounds < FUZZY_ROUNDS:
            self.rounds += 1
            found = self._align()
            if found is None:
                return None
            place, stretch = found
            self._blank(stretch)
            if place is not None:
                self.taken.append((place[0].start, place[0].end))
                return place
        return None

    def _blank(self, stretch: tuple[int, int]) -> None:
        a, b = stretch
        self.blanked.append(stretch)
        self.searched = self.searched[:a] + "\x00" * (b - a) + self.searched[b:]

    def _narrowed(self, at: int, to: int) -> tuple[int, int]:
        """``[at, to)``, or the one exact occurrence of the quote that overlaps it (from word to word where the quote is).

        A diff may align the passage's first words with like words of text
        inserted just before it (or its last with text after it): the place
        then holds the quote unchanged *and* the inserted text, whose unchanged
        context beyond made it look right. The quote as it was is the passage;
        what was inserted beside it is not.
        """
        old, new, quote = self.old, self.new, self.old[self.start:self.end]
        if new[at:to] == quote:
            return at, to
        lo = max(0, at - len(quote) + 1)  # the occurrences that overlap the place
        inside = [lo + h for h in _occurrences(new[lo:to + len(quote) - 1], quote, 1)
                  if _same_edges(old, self.start, self.end, new, lo + h, lo + h + len(quote))]
        return (inside[0], inside[0] + len(quote)) if len(inside) == 1 else (at, to)

    def _align(self) -> tuple[tuple[Candidate, float] | None, tuple[int, int]] | None:
        """The best alignment's place (``None`` when it cannot be the passage) and the stretch it covered."""
        old, new, lo = self.old, self.new, self.lo
        whole = old[lo:self.hi]
        if len(self.searched) > len(whole):
            aligned = fuzz.partial_ratio_alignment(whole, self.searched)
            if aligned is None or aligned.score == 0:
                return None
            stretch = (aligned.dest_start, aligned.dest_end)
            # partial_ratio aligns a stretch as long as the needle; widen it for insertions inside
            slack = len(whole) // 2 + self.context
            w0, w1 = max(0, aligned.dest_start - slack), min(len(new), aligned.dest_end + slack)
        elif self.blanked:
            return None
        else:
            stretch = w0, w1 = 0, len(new)
        opcodes = _merged(Indel.opcodes(whole, self.searched[w0:w1]))
        a = _map_position(opcodes, self.start - lo, end=False)
        b = _map_position(opcodes, self.end - lo, end=True)
        if a is None or b is None or b <= a:
            return None, stretch
        at, to = w0 + a, w0 + b
        # a diff has many equally short alignments, and one may carry an end into a neighbouring word
        # ("testupo te tero" against "te tero"): where the cited passage's own context stands unchanged
        # just beside the place, the place ends (and starts) where that context begins (ends)
        reach = (self.end - self.start) // 2 + 1
        to = _beside_context(old, self.end, new, to, reach, after=True)
        at = _beside_context(old, self.start, new, at, reach, after=False)
        if to <= at:
            return None, stretch
        at, to = self._narrowed(at, to)
        if any(at < y and x < to for x, y in (*self.blanked, *self.taken)):
            return None, stretch
        if _image_of_other(self.blocks, self.by_new, self.start, self.end, at, to):
            return None, stretch
        if not _item_kept(old, self.start, self.end, new, at, to, self.edges):
            return None, stretch
        score = _fuzzy_score(old[self.start:self.end], new[at:to], self.edges[0])
        return (_candidate(old, self.start, self.end, new, at, to, self.context), score), stretch


#: Characters of unchanged context that move a fuzzy place's end (or start) to stand beside them.
SNAP_CONTEXT: Final = 8


def _beside_context(old: str, pos_old: int, new: str, pos_new: int, reach: int, *, after: bool) -> int:
    """``pos_new``, or the position within ``reach`` of it beside which most of the old context stands unchanged.

    With ``after``, the context is the old text that follows ``pos_old`` (up to
    :data:`CONTEXT` characters), compared with what follows each position of
    the new text; otherwise the text that precedes it. A position is taken
    only when at least :data:`SNAP_CONTEXT` characters (or the whole context,
    at an end of the text) stand there unchanged and more than at ``pos_new``;
    of equals, the nearest.
    """
    ctx = old[pos_old:pos_old + CONTEXT] if after else old[max(0, pos_old - CONTEXT):pos_old]

    def kept(p: int) -> int:
        if after:
            there = new[p:p + len(ctx)]
            return next((i for i, (x, y) in enumerate(zip(ctx, there, strict=False)) if x != y), min(len(ctx), len(there)))
        there = new[max(0, p - len(ctx)):p]
        pairs = zip(reversed(ctx), reversed(there), strict=False)
        return next((i for i, (x, y) in enumerate(pairs) if x != y), min(len(ctx), len(there)))

    best, most = pos_new, kept(pos_new)
    for p in range(max(0, pos_new - reach), min(len(new), pos_new + reach) + 1):
        n = kept(p)
        if n > most or (n == most and abs(p - pos_new) < abs(best - pos_new)):
            best, most = p, n
    return best if most >= min(SNAP_CONTEXT, len(ctx)) and best != pos_new and most > kept(pos_new) else pos_new


def _merged(opcodes: Iterable[Opcode]) -> list[tuple[str, int, int, int, int]]:
    """The opcodes with each run of changes (deletions and insertions side by side) made one ``replace``."""
    merged: list[tuple[str, int, int, int, int]] = []
    for op in opcodes:
        tag = "equal" if op.tag == "equal" else "replace"
        if merged and tag == "replace" and merged[-1][0] == "replace":
            _, i1, _, j1, _ = merged[-1]
            merged[-1] = ("replace", i1, op.src_end, j1, op.dest_end)
        else:
            merged.append((tag, op.src_start, op.src_end, op.dest_start, op.dest_end))
    return merged


def _map_position(opcodes: list[tuple[str, int, int, int, int]], pos: int, *, end: bool) -> int | None:
    """Where position ``pos`` of the source stands in the destination of a diff.

    Inside a kept block: character for character. Inside a changed block:
    in proportion across the text that replaced it. A start is looked up in
    the block that begins at or holds it, an end in the block that ends at or
    holds it, so an insertion just outside the passage stays outside.
    """
    for tag, i1, i2, j1, j2 in opcodes:
        if i1 == i2:  # an insertion: between characters, it holds no position
            continue
        if (i1 <= pos < i2) if not end else (i1 < pos <= i2):
            if tag == "equal":
                return j1 + pos - i1
            return j1 + round((pos - i1) * (j2 - j1) / (i2 - i1))
    return None
