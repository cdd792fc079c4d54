"""Reading a search engine's hit back: the matches an engine marked in a passage (:func:`marked`), the shortest
stretch holding a match of every phrase (:func:`smallest_window`), what of a passage is its own and what its tail
(:func:`joint`), and the snippet a reader is shown (:func:`snippet`). The passages themselves, and the queries, are
made in :mod:`pdi.passages.fulltext`."""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Mapping, Sequence

from pdi.passages.fulltext import (
    _MARK,
    APART,
    JOINT,
    MARK_END,
    MARK_START,
    SPACER,
    _has_word,
    _unspaced,
    _word_char,
    spaced,
    words_of,
)

__all__ = ["index_words", "joint", "marked", "smallest_window", "snippet", "stem_key", "word_spans"]
def stem_key(word: str) -> str:
    """``word`` as it is looked up in what an engine's index reads of a word (:attr:`pdi.archive.store.SearchRow.stems`)
    and compared with a phrase's word as written: case folded, in Unicode's NFC (``café`` is one word however
    written)."""
    return unicodedata.normalize("NFC", word).casefold()


def marked(
    highlighted: str, *, phrases: bool = True, most: int | None = None,
    spelled: Sequence[Sequence[str]] = (), overlapping: bool = False, stems: Mapping[str, str] | None = None,
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The text of a passage the engine marked (:data:`MARK_START` … :data:`MARK_END`), and each marked stretch.

    With ``phrases`` (the query has a phrase of several words), marks with
    nothing but white space and punctuation between them are one stretch (a
    phrase's words, which PostgreSQL marks one by one; a Chinese word's
    characters, which PostgreSQL marks one by one), ``most`` words at most
    (the words of the longest phrase: :func:`phrase_words`), so that two
    matches in a row stay two (``天安门。天安门``); without, each mark is its
    own (one word twice in a row, ``walrus\r\nwalrus``, is two matches).
    The :data:`SPACER` of the index is taken out: the text is the passage's.

    ``spelled`` without ``phrases``: the engine marks each match whole (SQLite's FTS5), and a mark is a match,
    but one of more words than the longest phrase, where FTS5 made overlapping matches one (``我我`` in
    ``我我我``), which is cut into the matches that spell it, left to right; with ``overlapping``, into every match
    that spells it, overlapping ones too (``我我`` twice in ``我我我``: the stretches a shortest window is made of).
    With ``stems`` (SQLite: what FTS5's tokenizer reads of such a mark's words), a word spells a phrase's word where
    the two are read alike, written so or not: ``cats cat`` is the first match of ``"cat cat"`` in ``cats cat cat``.

    ``spelled`` with ``phrases``: the words of each phrase as the index reads them (:func:`index_words`). PostgreSQL marks every
    word of the query wherever it stands, in a phrase's match or not, so ``门`` in ``大门天安门`` is marked before
    ``天安门``: where a run of marked words spells a phrase (a word of a script written without spaces the same
    character, any other word as the engine found it), each such spelling is a stretch, and a marked word
    spelling none is left out (:func:`_spellings`); where none does, the marks are joined as above. With ``stems``
    (what the index reads of each word: :attr:`pdi.archive.store.SearchRow.stems`), a marked word written otherwise
    spells a phrase's word only where the index reads the two alike. With ``overlapping``, every spelling, overlapping
    ones too (``cat cat`` twice in ``cat  cat cat``: the stretches a shortest window is made of).
    """
    plain: list[str] = []
    marks: list[tuple[int, int]] = []
    length = 0
    opened: int | None = None
    for piece in re.split(f"([{MARK_START}{MARK_END}])", highlighted):
        if piece == MARK_START:
            opened = length
        elif piece == MARK_END:
            if opened is not None and opened < length:
                marks.append((opened, length))
            opened = None
        else:
            # what the index holds beside characters (spaced), and between a passage and its tail
            piece = piece.replace(SPACER, "").replace(APART, "").replace(JOINT, "")
            plain.append(piece)
            length += len(piece)
    text = "".join(plain)
    # FTS5 ends a word at a combining mark (a Devanagari vowel sign): a match runs on over the marks after it,
    # which PostgreSQL marks with their word
    marks = [(a, _after_marks(text, b)) for a, b in marks]
    if spelled and phrases:
        found = _spellings(text, marks, spelled, every=True, overlapping=overlapping, stems=stems)
        if found:
            return text, tuple(found)
    elif spelled:  # marks of whole matches (FTS5's), overlapping ones made one: "我我" in "我我我" is one mark
        longest = max(len(p) for p in spelled)
        marks = [m for a, b in marks for m in (
            (_spellings(text, [(a, b)], spelled, overlapping=overlapping, stems=stems) or [(a, b)])
            if len(word_spans(text, a, b)) > longest else [(a, b)])]
        return text, tuple(marks)
    joined: list[tuple[int, int]] = []
    count = 0  # the words in the last stretch
    for a, b in marks:  # words of one phrase, which the engines mark one by one, as one stretch
        words = 1 if most is None else len(words_of(spaced(text[a:b]))) or 1  # FTS5 marks a phrase's match whole
        if phrases and joined and (most is None or count + words <= most) and not _has_word(text[joined[-1][1] : a]):
            joined[-1] = (joined[-1][0], b)
            count += words
        else:
            joined.append((a, b))
            count = words
    return text, tuple(joined)


def joint(highlighted: str) -> int | None:
    """Where a passage's own text ends in the text :func:`marked` makes of ``highlighted`` (what the engine marked),
    its :attr:`~Passage.tail` after it; ``None`` if it has none (all of it is its own)."""
    at = highlighted.find(JOINT)
    if at < 0:
        return None
    return len(re.sub(f"[{MARK_START}{MARK_END}{SPACER}{APART}]", "", highlighted[:at]))


def index_words(phrase: Sequence[str]) -> list[str]:
    """The words the index reads in ``phrase``, in order (``天安门``: ``天``, ``安``, ``门``)."""
    return [w for word in phrase for w in words_of(spaced(word))]


def word_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Where the words of ``text[start:end]`` stand, as the index reads them (``words_of(spaced(…))``: each
    character of :data:`UNSPACED` a word, with the marks after it)."""
    spans: list[tuple[int, int]] = []
    begun = -1
    for i in range(start, end):
        ch = text[i]
        mark = _MARK[ord(ch)] == 1
        if begun >= 0 and (mark or (_word_char(ch) and not _unspaced(ch) and not _unspaced(text[i - 1]))):
            continue  # the word goes on
        if begun >= 0:
            spans.append((begun, i))
            begun = -1
        if _word_char(ch) and ch not in (MARK_START, MARK_END):
            begun = i
    if begun >= 0:
        spans.append((begun, end))
    return spans


def _spellings(
    text: str, marks: Sequence[tuple[int, int]], spelled: Sequence[Sequence[str]], *, every: bool = False,
    overlapping: bool = False, stems: Mapping[str, str] | None = None,
) -> list[tuple[int, int]]:
    """The stretches of ``marks`` whose words, one after another with nothing but white space and punctuation
    between them, spell a phrase of ``spelled``, left to right, none overlapping another (the longer phrase first
    where two begin together; with ``overlapping``, every one); none if no run does.

    A run spells a phrase when each of its words is the phrase's word, case aside. Where none does, the engine
    found the phrase in words written otherwise (PostgreSQL stems ``walruses`` to ``walrus``): then a run spells it
    when its words of scripts written without spaces are the phrase's, whatever its other words.

    With ``every``, the runs are of all the words of ``text``, a marked one among them: a word the engine left
    unmarked spells the phrase's word only as written (PostgreSQL marks no stop word, so that ``"walrus and the
    carpenter"`` is a run with two words unmarked in it).

    With ``stems`` (what the index reads of each word, :func:`stem_key` its key), a word written otherwise spells
    the phrase's word only where the index reads the two alike (PostgreSQL marks every word of the query wherever
    it stands, so that ``dogs cats`` spelled ``"cat dog"`` in ``dogs cats, cats dogs``), and a run spelling the
    phrase so is as good as one spelling it as written: the first of them is the phrase's first match, as on
    SQLite. Case aside, a word is compared in Unicode's NFC (``café`` written composed or not)."""
    words: list[tuple[int, int, int]] = []  # start, end, and which run of marks without a word between
    marked: set[int] = set()  # with every: where each marked word starts
    if every:
        marked = {s for a, b in marks for s, _ in word_spans(text, a, b)}
        words = [(s, e, 0) for s, e in word_spans(text, 0, len(text))]
    else:
        run = 0
        last: int | None = None
        for a, b in marks:
            if last is not None and _has_word(text[last:a]):
                run += 1
            words += [(s, e, run) for s, e in word_spans(text, a, b)]
            last = b

    def spells(s: int, e: int, want: str, exact: bool) -> bool:
        word, wanted = stem_key(text[s:e]), stem_key(want)
        if word == wanted:
            return True
        if exact or (every and s not in marked) or any(_unspaced(c) for c in want):
            return False
        if stems is None:
            return True
        read, read_wanted = stems.get(word), stems.get(wanted)
        return read is None or read_wanted is None or (read == read_wanted and read != "")

    def windows(phrase: Sequence[str], exact: bool) -> list[tuple[int, int]]:
        n = len(phrase)
        return [
            (words[i][0], words[i + n - 1][1]) for i in range(len(words) - n + 1)
            if words[i][2] == words[i + n - 1][2] and spells(words[i][0], words[i][1], phrase[0], exact) and all(
                spells(s, e, want, exact) for (s, e, _), want in zip(words[i : i + n], phrase, strict=True)
            ) and (not every or any(s in marked for s, _, _ in words[i : i + n]))
        ]

    found: list[tuple[int, int]] = []
    if every:
        for phrase in (p for p in spelled if p):
            found += windows(phrase, exact=stems is None) or windows(phrase, exact=False)
    else:  # one mark of FTS5's (a match, or overlapping ones made one): a phrase spelled as written in it is what
        # it holds; only when none is, a word written otherwise (stemmed) spells one. A phrase not in the mark at
        # all spelled its every word: ``cat`` cut the ``café`` left over in ``café café café`` (found by hypothesis)
        # a mark of more words than one match is overlapping matches of a phrase of several words: a word alone
        # written otherwise would spell any word (``dog`` cut a stray ``cats`` out of ``cats cats cats``)
        # with ``stems`` (what FTS5's tokenizer reads of each word), a word spells a phrase's word where the two are
        # read alike, written so or not: the first match is the mark's, ``cats cat`` in ``cats cat cat`` for
        # ``"cat cat"``, not the ``cat cat`` after it written as the query is
        found = [w for phrase in spelled if phrase for w in windows(phrase, exact=stems is None)]
        if not found:
            found = [w for phrase in spelled if len(phrase) > 1 for w in windows(phrase, exact=False)]
    if overlapping:
        return sorted(set(found))
    kept: list[tuple[int, int]] = []
    for a, b in sorted(found, key=lambda w: (w[0], w[0] - w[1])):
        if not kept or a >= kept[-1][1]:
            kept.append((a, b))
    return kept


def _after_marks(text: str, end: int) -> int:
    """Where the combining marks from ``end`` on in ``text`` end (``end`` if none is there)."""
    while end < len(text) and _MARK[ord(text[end])]:
        end += 1
    return end


def smallest_window(
    groups: Sequence[Sequence[tuple[int, int]]], before: int | None = None
) -> tuple[int, int] | None:
    """The shortest stretch holding one stretch of every group (the leftmost such); ``None`` if a group is empty.

    With ``before``, the shortest of those starting before it (``None`` if none does): a passage's own text ends
    there, and a stretch starting after it, in its :attr:`~Passage.tail`, is the next passage's (:func:`_own_window`).

    For each place a stretch starts, each group's stretch starting there or
    after that ends first (the earliest end, then the earliest start): the
    shortest of those windows. Each group's stretches are sorted once, with
    the first-ending one from each place on kept beside them, so that each
    place asks each group one binary search: a passage of a common word's
    thousands of marks is some place × group × log(marks), not the square of
    its marks (found by an attack, 2026-11-27: 32 common words took a search
    page 5 s, two Chinese characters in a long text up to a minute).
    """
    if not groups or any(not g for g in groups):
        return None
    if before is not None:
        return _own_window(groups, before)
    tables = []
    for group in groups:
        ordered = sorted(group)  # by start
        starts = [a for a, _ in ordered]
        first_ending: list[tuple[int, int]] = [(0, 0)] * len(ordered)  # from each index on: min (end, start)
        best_here = (ordered[-1][1], ordered[-1][0])
        for i in range(len(ordered) - 1, -1, -1):
            here = (ordered[i][1], ordered[i][0])
            best_here = here if here < best_here else best_here
            first_ending[i] = best_here
        tables.append((starts, first_ending))
    best: tuple[int, int] | None = None
    for left in sorted({a for g in groups for a, _ in g}):
        lo = hi = None
        for starts, first_ending in tables:
            index = bisect.bisect_left(starts, left)
            if index == len(starts):
                break
            end, begin = first_ending[index]
            lo = begin if lo is None or begin < lo else lo
            hi = end if hi is None or end > hi else hi
        else:
            assert lo is not None and hi is not None
            if best is None or hi - lo < best[1] - best[0]:
                best = (lo, hi)
    return best


def _own_window(groups: Sequence[Sequence[tuple[int, int]]], before: int) -> tuple[int, int] | None:
    """:func:`smallest_window` of the windows starting before ``before``: for each place ``a`` before it where a
    stretch starts, and each group with a stretch starting there, that group's shortest stretch starting at ``a`` and
    every other group's first-ending stretch starting at ``a`` or after; the shortest of those windows, the leftmost
    such. (The window of each place alone, as :func:`smallest_window` takes it, may start later than the place: a
    window starting after ``before`` where one starting before it holds a long stretch, a phrase's match run
    through the cut.)"""
    tables = []
    for group in groups:
        ordered = sorted(group, key=lambda g: (g[0], g[1]))
        starts = [a for a, _ in ordered]
        first_ending: list[int] = [0] * len(ordered)  # from each index on: the least end
        least = ordered[-1][1]
        for i in range(len(ordered) - 1, -1, -1):
            least = min(least, ordered[i][1])
            first_ending[i] = least
        tables.append((starts, first_ending, ordered))
    best: tuple[int, int] | None = None
    for left in sorted({a for g in groups for a, _ in g if a < before}):
        others = []
        for starts, first_ending, _ in tables:
            index = bisect.bisect_left(starts, left)
            others.append(first_ending[index] if index < len(starts) else None)
        for forced, (starts, _, ordered) in enumerate(tables):
            index = bisect.bisect_left(starts, left)
            if index == len(starts) or starts[index] != left:
                continue
            ends = [ordered[index][1]] + [e for k, e in enumerate(others) if k != forced]
            if None in ends:
                continue
            hi = max(e for e in ends if e is not None)
            if best is None or hi - left < best[1] - best[0]:
                best = (left, hi)
    return best


def snippet(
    text: str, marks: Sequence[tuple[int, int]], focus: tuple[int, int], *, before: int = 90, after: int = 220
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Some ``before`` + ``after`` characters of ``text`` around ``focus`` (cut at spaces), white space written as one space.

    A ``focus`` longer than twice ``after`` (words of a query far apart in a
    passage) is shown from its start for that long, then ``…``. Returns the
    snippet (``…`` where it cuts the text) and the stretches of ``marks``
    inside it, as positions in the snippet.
    """
    lo = max(0, focus[0] - before)
    hi = min(len(text), max(focus[1], focus[0] + after), focus[0] + 2 * after)
    if lo > 0:
        space = text.find(" ", lo, focus[0])
        lo = space + 1 if space >= 0 else lo
    if hi < len(text):
        space = text.rfind(" ", min(focus[1], focus[0] + 1), hi)  # a capped focus: its last space within the cap
        hi = space if space > 0 else hi
    prefix = "…" if lo > 0 else ""
    out: list[str] = [prefix]
    length = len(prefix)
    position: dict[int, int] = {}
    after_space = False
    for i in range(lo, hi):
        position[i] = length
        ch = text[i]
        if ch.isspace():
            if after_space:
                continue
            ch, after_space = " ", True
        else:
            after_space = False
        out.append(ch)
        length += 1
    position[hi] = length
    if hi < len(text):
        out.append("…")
    inside = tuple(
        (position[max(a, lo)], position[min(b, hi)]) for a, b in marks if a < hi and b > lo
    )
    return "".join(out), tuple((a, b) for a, b in inside if b > a)
