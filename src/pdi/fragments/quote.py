"""Text quotes: a passage with its context, and finding it again (W3C Web Annotation §4.2.4, ``TextQuoteSelector``).

:func:`text_quote` takes the quote of a stretch of a text (``exact``, and up to
:data:`CONTEXT_CHARS` characters of ``prefix`` and ``suffix``);
:func:`find_quote` finds where a quote stands in a text, the place whose
context agrees preferred. Used by :mod:`pdi.interop.annotation` and by anyone
re-anchoring a quote.

Pure: no I/O.
"""

from __future__ import annotations

import bisect
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from pdi.errors import LimitError, ParseError

__all__ = ["CONTEXT_CHARS", "MAX_QUOTE_CHARS", "QuoteMatch", "TextQuote", "find_quote", "text_quote"]

#: How many characters of context a quote's prefix and suffix hold (Hypothesis takes 32).
CONTEXT_CHARS: Final = 32
#: The longest quote looked for, and the most places one quote is weighed at.
MAX_QUOTE_CHARS: Final = 100_000
MAX_PLACES: Final = 100_000
#: How much of a prefix (its end) and of a suffix (its start) is compared at each place: the characters beside the
#: quote, which is what they are for; a longer one (a stranger's 8 million characters) is read so far, not compared
#: whole at each of up to :data:`MAX_PLACES` places.
MAX_CONTEXT_CHARS: Final = 1_000


@dataclass(frozen=True)
class TextQuote:
    """A ``TextQuoteSelector``'s three strings."""

    exact: str
    prefix: str
    suffix: str


def text_quote(text: str, start: int, end: int, *, context: int = CONTEXT_CHARS) -> TextQuote:
    """The quote of ``text[start:end]``, with up to ``context`` characters before and after it."""
    if not 0 <= start <= end <= len(text):
        raise ParseError(f"a quote runs from {start} to {end}, not inside a text of {len(text)}", rule="quote")
    return TextQuote(text[start:end], text[max(0, start - context) : start], text[end : end + context])


@dataclass(frozen=True)
class QuoteMatch:
    """Where a quote stands in a text: ``[start, end)``, and how well its context agrees.

    ``context`` is ``"both"``, ``"prefix"``, ``"suffix"`` or ``"none"``
    (which of the quote's prefix and suffix stand beside it; a missing one
    counts as agreeing); ``collapsed``: found only with white space runs
    read as one space.
    """

    start: int
    end: int
    context: str
    collapsed: bool = False


_RUN: Final = re.compile(r"\s+")


def _collapse(text: str) -> tuple[str, array[int]]:
    """``text`` with each white-space run as one space, and where each of its characters comes from (and the end):
    eight octets a character, made in C (``array.extend`` of a ``range``), not a Python int each. Made for one
    block of a text at a time (:class:`_Squeezed`)."""
    where = array("q")
    at = 0
    for m in _RUN.finditer(text):
        where.extend(range(at, m.start() + 1))  # the characters before the run, then its one space
        at = m.end()
    where.extend(range(at, len(text) + 1))
    return _RUN.sub(" ", text), where


#: Characters of a text read so at a time by :func:`_squeezed_holds` and :class:`_Squeezed`.
_BLOCK: Final = 1 << 18


def _squeezed_pieces(text: str) -> Iterator[tuple[int, str, bool]]:
    """``text`` with each white-space run read as one space, a block at a time: each block's start in ``text``,
    what it reads as, and whether its first character (a space going on from the block before) was dropped. The
    pieces joined are ``_RUN.sub(" ", text)``."""
    ended_in_space = False
    for start in range(0, len(text), _BLOCK):
        piece = _RUN.sub(" ", text[start : start + _BLOCK])
        dropped = ended_in_space and piece.startswith(" ")  # one run cut in two by the blocks: one space
        if dropped:
            piece = piece[1:]
        if piece:
            ended_in_space = piece.endswith(" ")
        yield start, piece, dropped


def _squeezed_holds(text: str, quote: str) -> bool:
    """Whether ``text``, each white-space run read as one space, holds ``quote`` (so read already): a block at a
    time, so that neither the text read so nor a map of it is ever made whole, in time linear in the text."""
    carry = ""
    keep = len(quote) - 1
    for _, piece, _ in _squeezed_pieces(text):
        window = carry + piece
        if quote in window:
            return True
        carry = window[-keep:] if keep else ""
    return False


class _Squeezed:
    """A text with each white-space run read as one space, and the way back: positions are mapped one block at
    a time (:data:`_BLOCK` characters), so that no map of every character of a long text is ever made (30 MB of
    ``word`` and a space took 771 MB and 5 s with one)."""

    def __init__(self, text: str) -> None:
        self.text = text
        pieces = list(_squeezed_pieces(text))
        self.squeezed = "".join(piece for _, piece, _ in pieces)
        self._starts = [start for start, _, _ in pieces]  # each block's start in the text
        self._dropped = [dropped for _, _, dropped in pieces]
        self._squeezed_starts: list[int] = []  # and in the text read so
        at = 0
        for _, piece, _ in pieces:
            self._squeezed_starts.append(at)
            at += len(piece)

    def _block(self, number: int) -> tuple[int, array[int]]:
        """Block ``number``'s map: where each character of its piece comes from in the text (and its end)."""
        start = self._starts[number]
        where = _collapse(self.text[start : start + _BLOCK])[1]
        return start, where[1:] if self._dropped[number] else where

    def original(self, position: int) -> int:
        """Where character ``position`` of the text read so comes from in the text."""
        number = max(0, bisect.bisect_right(self._squeezed_starts, position) - 1)
        start, where = self._block(number)
        return start + where[position - self._squeezed_starts[number]]

    def squeezed_at(self, position: int) -> int:
        """The first character of the text read so that comes from ``position`` of the text or after it."""
        if not self._starts or position >= len(self.text):
            return len(self.squeezed)
        number = max(0, bisect.bisect_right(self._starts, position) - 1)
        start, where = self._block(number)
        return min(self._squeezed_starts[number] + bisect.bisect_left(where, position - start), len(self.squeezed))


def find_quote(
    text: str, exact: str, prefix: str | None = None, suffix: str | None = None, *, near: int | None = None
) -> QuoteMatch | None:
    """Where ``exact`` stands in ``text``, chosen by its ``prefix`` and ``suffix``; ``None`` if it is nowhere.

    Every place ``exact`` occurs is a candidate; the best one has both its
    prefix and suffix beside it (their :data:`MAX_CONTEXT_CHARS` characters
    nearest the quote), then one of them, then neither; among
    equals, the nearest to ``near`` (a position the annotation also gave),
    else the first. When ``exact`` is not in ``text`` as written, white space
    runs on both sides are read as one space (a quote taken from a rendered
    page), and ``collapsed`` says so.
    """
    if not exact:
        raise ParseError("a TextQuoteSelector's exact text is empty", rule="TextQuoteSelector")
    if len(exact) > MAX_QUOTE_CHARS:
        raise LimitError(f"a quote may have at most {MAX_QUOTE_CHARS} characters")
    prefix = (prefix or "")[-MAX_CONTEXT_CHARS:]
    suffix = (suffix or "")[:MAX_CONTEXT_CHARS]
    found = _best(text, exact, prefix, suffix, near)
    if found is not None:
        return found
    squeezed = _RUN.sub(" ", exact)
    q = squeezed.strip()
    if not q or not _squeezed_holds(text, q):
        return None  # nowhere even read so: told without the map of every character
    read = _Squeezed(text)
    # the quote's own white space at its ends (stripped from q) is read as the prefix's end and the suffix's start:
    # in the text read so, the space before q's first word is the one a prefix taken from a page ends in
    # (a prefix or suffix not given stays none, which agrees wherever the quote stands)
    p = _RUN.sub(" ", prefix + (" " if squeezed.startswith(" ") else "")) if prefix else ""
    s = _RUN.sub(" ", (" " if squeezed.endswith(" ") else "") + suffix) if suffix else ""
    hint = None if near is None else read.squeezed_at(near)  # the first character at or after near
    found = _best(read.squeezed, q, p, s, hint)
    if found is None:
        return None
    return QuoteMatch(read.original(found.start), read.original(found.end - 1) + 1, found.context, True)


def _best(text: str, exact: str, prefix: str, suffix: str, near: int | None) -> QuoteMatch | None:
    best: tuple[int, int, int] | None = None  # (-agreeing context, distance from near, start)
    contexts: dict[int, tuple[bool, bool]] = {}
    at = text.find(exact)
    while at >= 0 and len(contexts) < MAX_PLACES:
        before = not prefix or text.endswith(prefix, 0, at)
        after = not suffix or text.startswith(suffix, at + len(exact))
        contexts[at] = (before, after)
        key = (-(before + after), abs(at - near) if near is not None else 0, at)
        if best is None or key < best:
            best = key
        at = text.find(exact, at + 1)
    if best is None:
        return None
    start = best[2]
    agree = {(True, True): "both", (True, False): "prefix", (False, True): "suffix", (False, False): "none"}
    return QuoteMatch(start, start + len(exact), agree[contexts[start]])


