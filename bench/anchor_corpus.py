"""A generated corpus of edited documents for re-anchoring, each case with its known right answer.

A document is paragraphs of sentences of made-up words (CRLF between
lines, a blank line between paragraphs: CRLF-canonical text). The cited
passage is marked in the document's structure with two control characters
that nothing else uses; the edit is made on the structure, the markers
still in place; each version is then written out, the markers' positions
read and the markers removed. So the right answer (where the passage stands
in the new version, or that it is gone) follows from how the edit was made,
never from the code under test.

Kinds of edit (:data:`KINDS`):

* ``insert-before`` — a paragraph or sentence inserted before the passage
  (and another after it);
* ``edit-elsewhere`` — words changed in other paragraphs, before and after;
* ``edit-inside`` — a word of the passage replaced, inserted or deleted
  (never its first or last word);
* ``edit-inside-near-copy`` — as ``edit-inside``, with a near copy of the
  cited sentence elsewhere (one word changed), left as it was;
* ``delete`` — the sentence holding the passage deleted (right answer:
  orphaned);
* ``delete-near-copy`` — the document holds a near copy of the cited
  sentence elsewhere (one word changed) and the cited sentence is deleted
  (right answer: orphaned; the copy is not the passage);
* ``move`` — the paragraph holding the passage moved elsewhere;
* ``repeated`` — the passage is a stock phrase that stands in several
  sentences; one occurrence is cited and text is inserted before it;
* ``repeated-context`` — as ``repeated``, but the words on both sides of
  the cited occurrence are changed instead (the other occurrences keep
  theirs);
* ``repeated-delete`` — as ``repeated``, but the cited occurrence's
  sentence is deleted while the others stay (right answer: orphaned);
* ``renumbered`` — the passage is an item of a numbered list (``3. …``, one
  item a line), cited from its number to one of its words (a short item
  whole); an item is inserted or deleted before it, so its number, and every
  later one, changes ("3." becomes "4."): the right answer is the item with
  its new number;
* ``renumbered-delete`` — as ``renumbered``, but the cited item is the one
  deleted (right answer: orphaned; the item now numbered as it was is not it).

Used by ``bench/bench_anchor.py`` and, on a small fixed-seed corpus, by
``tests/test_anchor_corpus.py``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

OPEN, CLOSE = "\x01", "\x02"

KINDS = (
    "insert-before", "edit-elsewhere", "edit-inside", "edit-inside-near-copy", "delete", "delete-near-copy", "move",
    "repeated", "repeated-context", "repeated-delete", "renumbered", "renumbered-delete",
)

#: The first element of a paragraph that is a numbered list: its items are rendered one a line, numbered from 1.
LIST = "\x03"

_SYLLABLES = (
    "ka", "lo", "mer", "ti", "san", "do", "ver", "al", "ne", "ro", "pi", "stu", "gra", "en", "mo", "li", "qua",
    "te", "bri", "on", "sel", "da", "fu", "ri", "cam", "po", "lin", "ex", "har", "ut", "vo", "zen",
)
_STOCK = (
    "in accordance with the provisions of this section",
    "subject to the conditions set out below",
    "for the avoidance of doubt",
)

Paragraph = list[str]


@dataclass(frozen=True)
class Case:
    """One re-anchoring case: the old text and the cited span, the new text, and the right answer (``None``: orphaned)."""

    kind: str
    old: str
    start: int
    end: int
    new: str
    expected: tuple[int, int] | None

    @property
    def quote(self) -> str:
        return self.old[self.start:self.end]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 3)))


def _sentence(rng: random.Random, words: int | None = None) -> str:
    n = words if words is not None else rng.randint(6, 16)
    text = " ".join(_word(rng) for _ in range(n))
    return text[0].upper() + text[1:] + rng.choice(".....;?!")


def _document(rng: random.Random) -> list[Paragraph]:
    return [[_sentence(rng) for _ in range(rng.randint(2, 6))] for _ in range(rng.randint(6, 14))]


def _render(doc: list[Paragraph]) -> tuple[str, tuple[int, int] | None]:
    """The text of ``doc`` (CRLF-canonical) and where the marked passage stands in it, markers removed."""
    marked = "\r\n\r\n".join("\r\n".join(_wrap(p)) for p in doc) + "\r\n"
    at = marked.find(OPEN)
    if at < 0:
        return marked, None
    to = marked.index(CLOSE) - 1
    return marked.replace(OPEN, "").replace(CLOSE, ""), (at, to)


def _wrap(paragraph: Paragraph) -> list[str]:
    """A paragraph's lines: two sentences a line, as a wrapped text would have them; a list's items one a line."""
    if paragraph and paragraph[0] == LIST:  # the number goes after an opening marker: it is cited with the item
        return [f"{OPEN if item.startswith(OPEN) else ''}{n}. {item.removeprefix(OPEN)}"
                for n, item in enumerate(paragraph[1:], 1)]
    return [" ".join(paragraph[i:i + 2]) for i in range(0, len(paragraph), 2)]


def _mark(rng: random.Random, sentence: str, min_words: int = 3) -> str:
    """``sentence`` with a run of at least ``min_words`` of its words marked (never its final punctuation)."""
    words = sentence.split(" ")
    length = rng.randint(min_words, len(words))
    first = rng.randint(0, len(words) - length)
    words[first] = OPEN + words[first]
    last = words[first + length - 1]
    if first + length == len(words):
        words[-1] = last[:-1] + CLOSE + last[-1]
    else:
        words[first + length - 1] = last + CLOSE
    return " ".join(words)


def _where(doc: list[Paragraph]) -> tuple[int, int]:
    for p, paragraph in enumerate(doc):
        for s, sentence in enumerate(paragraph):
            if OPEN in sentence:
                return p, s
    raise AssertionError("no passage marked")


def _unmarked(doc: list[Paragraph]) -> list[Paragraph]:
    return [[s.replace(OPEN, "").replace(CLOSE, "") for s in p] for p in doc]


def make_case(rng: random.Random, kind: str) -> Case:
    """One case of ``kind`` (see the module docstring), drawn from ``rng``."""
    doc = _document(rng)
    if kind.startswith("renumbered"):
        return _renumbered_case(rng, kind, doc)
    if kind.startswith("repeated"):
        stock = rng.choice(_STOCK)
        spots = rng.sample([(p, s) for p, par in enumerate(doc) for s in range(len(par))], 3)
        for p, s in spots:
            words = doc[p][s].split(" ")
            at = rng.randint(1, len(words) - 1)
            doc[p][s] = " ".join([*words[:at], stock, *words[at:]])
        p, s = rng.choice(spots)
        doc[p][s] = doc[p][s].replace(stock, OPEN + stock + CLOSE)
    else:
        p = rng.randrange(len(doc))
        s = rng.randrange(len(doc[p]))
        whole = kind == "move" and rng.random() < 0.3
        doc[p][s] = _mark(rng, doc[p][s], 6 if kind == "edit-inside" else 3)
        if kind in ("delete-near-copy", "edit-inside-near-copy"):
            copy = doc[p][s].replace(OPEN, "").replace(CLOSE, "").split(" ")
            copy[rng.randrange(len(copy))] = _word(rng)
            q = rng.choice([i for i in range(len(doc)) if i != p] or [p])
            doc[q].insert(rng.randint(0, len(doc[q])), " ".join(copy))
        if whole:  # a whole sentence cited
            doc[p][s] = OPEN + doc[p][s].replace(OPEN, "").replace(CLOSE, "") + CLOSE
    old, span = _render(doc)
    assert span is not None
    new_doc = [list(par) for par in doc]
    p, s = _where(new_doc)
    if kind in ("insert-before", "repeated"):
        if p and rng.random() < 0.5:
            new_doc.insert(rng.randint(0, p), [_sentence(rng) for _ in range(rng.randint(1, 4))])
        else:
            new_doc[p].insert(rng.randint(0, s), _sentence(rng))
        new_doc.append([_sentence(rng)])
    elif kind == "edit-elsewhere":
        for q in rng.sample(range(len(new_doc)), min(3, len(new_doc))):
            if q == p:
                continue
            t = rng.randrange(len(new_doc[q]))
            words = new_doc[q][t].split(" ")
            words[rng.randrange(len(words))] = _word(rng)
            new_doc[q][t] = " ".join(words)
    elif kind in ("edit-inside", "edit-inside-near-copy"):
        new_doc[p][s] = _edit_inside(rng, new_doc[p][s])
    elif kind == "repeated-context":
        head, rest = new_doc[p][s].split(OPEN)
        inside, tail = rest.split(CLOSE)
        before, after = head.split(" "), tail.split(" ")
        if len(before) > 1:
            before[-2] = _word(rng)
        after = after if len(after) < 2 else [after[0], _word(rng), *after[2:]]
        new_doc[p][s] = " ".join(before) + OPEN + inside + CLOSE + " ".join(after)
    elif kind in ("delete", "delete-near-copy", "repeated-delete"):
        del new_doc[p][s]
        if not new_doc[p]:
            del new_doc[p]
    elif kind == "move":
        paragraph = new_doc.pop(p)
        choices = [i for i in range(len(new_doc) + 1) if i != p]
        new_doc.insert(rng.choice(choices), paragraph)
    new, expected = _render(new_doc)
    return Case(kind, old, span[0], span[1], new, expected)


def _renumbered_case(rng: random.Random, kind: str, doc: list[Paragraph]) -> Case:
    """A ``renumbered`` or ``renumbered-delete`` case: an item of a numbered list cited, an item inserted or deleted."""
    items = [_sentence(rng, rng.randint(1, 8)) for _ in range(rng.randint(3, 12))]
    k = rng.randrange(1, len(items))  # the cited item has one before it to insert at or delete
    words = items[k].split(" ")
    last = rng.randrange(len(words)) if len(items[k]) > 16 else len(words) - 1
    words[last] += CLOSE if last < len(words) - 1 else ""
    if last == len(words) - 1:
        words[-1] = words[-1][:-1] + CLOSE + words[-1][-1]  # the item whole but its final punctuation
    items[k] = OPEN + " ".join(words)
    at = rng.randint(1, len(doc))
    doc.insert(at, [LIST, *items])
    old, span = _render(doc)
    assert span is not None
    if kind == "renumbered-delete":
        del items[k]
    elif rng.random() < 0.5:
        items.insert(rng.randint(0, k), _sentence(rng, rng.randint(1, 8)))
    else:
        del items[rng.randrange(k)]
    doc[at] = [LIST, *items]
    new, expected = _render(doc)
    return Case(kind, old, span[0], span[1], new, expected)


def _edit_inside(rng: random.Random, sentence: str) -> str:
    """One word inside the marked run replaced, inserted or deleted (not the first or the last)."""
    head, rest = sentence.split(OPEN)
    inside, tail = rest.split(CLOSE)
    words = inside.split(" ")
    i = rng.randint(1, len(words) - 2)
    how = rng.choice(("replace", "insert", "delete"))
    if how == "replace":
        words[i] = _word(rng)
    elif how == "insert":
        words.insert(i, _word(rng))
    else:
        del words[i]
    return head + OPEN + " ".join(words) + CLOSE + tail


def corpus(seed: int, per_kind: int) -> list[Case]:
    """``per_kind`` cases of every kind, from a generator seeded with ``seed``."""
    rng = random.Random(seed)
    return [make_case(rng, kind) for kind in KINDS for _ in range(per_kind)]


def judge(case: Case, answer: tuple[int, int] | None) -> str:
    """``"correct"``, ``"orphaned"`` (no answer) or ``"wrong"`` for an answer to ``case``.

    With the passage unchanged, the answer must be its span exactly; with
    words edited inside it, it must cover the edited passage with an overlap
    of at least 80% of the two spans' union, or be the cited words themselves,
    unchanged, within it ("har sel exlinut" after "har" was inserted inside:
    "har har sel exlinut"). Any answer where the right one is "orphaned" is
    wrong.
    """
    if answer is None:
        return "orphaned"
    if case.expected is None:
        return "wrong"
    if not case.kind.startswith("edit-inside"):
        return "correct" if answer == case.expected else "wrong"
    (a, b), (c, d) = answer, case.expected
    if c <= a <= b <= d and case.new[a:b] == case.old[case.start:case.end]:
        return "correct"
    overlap = max(0, min(b, d) - max(a, c))
    union = max(b, d) - min(a, c)
    return "correct" if union and overlap / union >= 0.8 else "wrong"
