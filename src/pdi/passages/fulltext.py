"""Full-text search, the pure part: the reader's query, the passages a document is indexed as, and what a match marks.

A document is indexed as **passages** of about :data:`PASSAGE_CHARS`
characters of its text, each with where its characters stand in the
document, so that a match can be named as a ``char`` fragment
(``NAME#char=a,b``) covering exactly the matched words. Positions are those
``char`` counts (PDI-GRAMMAR.md §3): code points of the CRLF-canonical text,
a byte-order mark not counted; for HTML and XML, of the CRLF-canonical
*source*, so a passage's text (the page's text, its markup left out) keeps a
map from its own positions to the source's (:class:`Passage`).

What is text:

* ``text/*`` (but HTML and XML) and RFC 822 headers: all of it, cut into
  passages as it streams past (:class:`PassageBuilder`, memory: one passage).
* HTML and XML (:class:`MarkupScanner`, fed in pieces; memory: what is
  not yet closed, and one passage): the text between tags. Tags
  (quoted attribute values included: a word in an attribute is not text),
  comments, ``<!…>`` and ``<?…>`` are markup; so is the content of HTML's
  raw-text elements (``script``, ``style``, ``xmp``, ``iframe``,
  ``noembed``, ``noframes``, ``noscript``), while that of ``title`` and
  ``textarea`` is text. A character reference (``&amp;``, ``&#233;``) is
  indexed as the character it stands for, and maps to the whole reference
  in the source. A tag other than an inline one (``b``, ``i``, ``a``,
  ``span`` …) separates words, as the rendered page does: ``one<p>two`` is
  two words, ``on<b>e</b>`` one. In XML a CDATA section is text. The
  scanner is a simplified reading of the WHATWG tokenizer (tags with their
  quoted attribute values, comments, raw-text and RCDATA elements; no tree,
  no foreign content; :mod:`pdi.passages.scan`): where a browser reads otherwise (an SVG
  ``<style>``, a comment ended by ``--!>``) it may index a little markup
  as text or pass over a little text.

The query (:func:`parse_query`) is the reader's words, never a query
language: a word is a run of the characters the catalog's index reads as
word characters (SQLite FTS5's ``unicode61`` tables, Unicode 6.1's letters
and digits, and private-use and later-assigned characters: :mod:`._fts5_chars`),
with the combining marks that follow them (a Devanagari vowel sign, a Thai tone
mark: FTS5 reads them as separators, PostgreSQL's parser as letters, so a word is
kept whole and each engine reads it as it reads the index),
so a query holds a word exactly when an indexed passage could; every word must
occur in one passage (or the first words of the next after it: :attr:`Passage.tail`); ``"two words"`` in double quotes is a phrase, and a
word written with punctuation inside (``e-mail``, ``o'clock``) is the phrase
of its parts. Everything else (``AND``, ``NEAR``, ``*``, ``^``,
``column:``) is read as words or passed over, so nothing the reader types
reaches a search engine as syntax: :func:`fts5_expression` writes each
phrase as an FTS5 string. A quote left open is a
:class:`~pdi.errors.ParseError` naming where it opened.

Reading a hit back (what an engine marked, the window, the snippet) is :mod:`pdi.passages.hits`.

Pure: no I/O.
"""

from __future__ import annotations

import functools
import itertools
import re
import struct
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pdi.errors import LimitError, ParseError
from pdi.passages import _fts5_chars, _marks
from pdi.passages.scan import (
    RAW_TEXT,
    RCDATA,
    TAG_NAME,
    TAG_OPEN,
    close_tag,
    decoded_pieces,
    tag_end,
)

__all__ = [
    "MARK_END",
    "MARK_START",
    "PASSAGE_CHARS",
    "SPACER",
    "UNSPACED",
    "UNSPACED_RANGES",
    "MarkupScanner",
    "Passage",
    "PassageBuilder",
    "Query",
    "fts5_expression",
    "markup_passages",
    "parse_query",
    "phrase_words",
    "spaced",
]

#: About how many characters of text one passage holds (cut at white space).
PASSAGE_CHARS: Final = 4000
#: The most words (phrases' words counted) a query may have, and the longest word.
MAX_QUERY_WORDS: Final = 32
MAX_WORD_CHARS: Final = 200
#: The longest query text read (characters).
MAX_QUERY_CHARS: Final = 2000
#: The most words a query may hold as the index reads them, each Chinese or Japanese character one
#: (:func:`phrase_words`): ten phrases of 200 such characters, within every bound above, took a page 12 s of FTS5
#: phrase matching (found by an attack, 2026-11-27). A sentence of a hundred characters is searched whole.
MAX_QUERY_INDEXED: Final = 128

#: What the engines are asked to put around each matched word: private-use
#: characters, which never stand in an indexed passage (:func:`_clean`).
MARK_START: Final = "\ue000"
MARK_END: Final = "\ue001"

#: What the index holds between the characters of scripts written without spaces between words (Han, kana,
#: Bopomofo, Thai, Lao, Myanmar, Khmer and the Tai scripts: :data:`UNSPACED`), so that each is a word of its own
#: to both engines (FTS5's ``unicode61`` and PostgreSQL's parser read runs of letters as one word, so a Chinese,
#: Japanese or Thai sentence was one word, found only whole): U+001F, a control character both read as a
#: separator, which never stands in a passage (:func:`_clean`) and is taken out of what the engines mark
#: (:func:`pdi.passages.hits.marked`). A combining mark stays with the character before it (a Thai vowel above its consonant).
SPACER: Final = "\x1f"
#: What the index holds before and after each separator beyond ASCII (punctuation, symbols, spaces:
#: :func:`_separators`): U+001E, a control character both engines read as a separator, which never stands in a
#: passage (:func:`_clean`) and is taken out of what the engines mark (:func:`pdi.passages.hits.marked`). PostgreSQL's index reads
#: the one character between two of them as a space (schema step 19: its parser reads every character beyond
#: ASCII as a letter in a database of ``LC_CTYPE`` ``C``, so ``“walrus”`` was one word to it, and a phrase with
#: such a character between its words was no phrase).
APART: Final = "\x1e"
#: What the index holds between a passage's own text and its :attr:`Passage.tail`, the first words of the passage
#: after it: U+001D, a control character both engines read as a separator (the words on either side of it are one
#: after the other to a phrase), which never stands in a passage (:func:`_clean`) and is taken out of what the
#: engines mark (:func:`pdi.passages.hits.marked`), where it says what of a passage is its own (:func:`pdi.passages.hits.joint`).
JOINT: Final = "\x1d"
#: How much of the next passage a passage's :attr:`~Passage.tail` holds: the first words of it, so that a phrase
#: the cut between the two passages runs through is found in the first. Its words after the cut are at most a
#: query's most (:data:`MAX_QUERY_WORDS`: the first may be the rest of one the cut parts, ``天安|门``) and fewer than
#: :data:`MAX_QUERY_INDEXED` as the index reads them; up to :data:`TAIL_CHARS` characters, past which a longer
#: phrase's words (long words, or much between them) are not looked for.
TAIL_WORDS: Final = MAX_QUERY_WORDS
TAIL_INDEXED: Final = MAX_QUERY_INDEXED - 1
TAIL_CHARS: Final = 1000
#: The characters kept apart by :data:`SPACER`, first and last of each range (CJK radicals, ideographs of every extension and the
#: compatibility ones, the ideographic iteration and number marks, hiragana, katakana and its halfwidth forms,
#: Bopomofo; Thai, Lao, Myanmar and its extensions, Khmer and its symbols, Tai Le, New Tai Lue, Tai Tham and Tai
#: Viet). Hangul is left as it is: Korean puts spaces between its words; so are the scripts of India, which do too.
UNSPACED_RANGES: Final = (
    (0x0E01, 0x0E5B), (0x0E81, 0x0EDF), (0x1000, 0x109F), (0x1780, 0x17F9), (0x1950, 0x19FF), (0x1A20, 0x1AAD),
    (0x2E80, 0x2FDF), (0x3005, 0x3007), (0x3021, 0x3029), (0x3031, 0x3035), (0x3038, 0x303C),
    (0x3041, 0x30FF), (0x3105, 0x312F), (0x31A0, 0x31BF), (0x31F0, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
    (0xA9E0, 0xA9FE), (0xAA60, 0xAADF), (0xF900, 0xFAFF), (0xFF66, 0xFF9F), (0x20000, 0x3134F),
)
#: The same as a character class's inside (``[…]`` in Python's, PostgreSQL's and SQLite's ``GLOB``), the
#: characters themselves.
UNSPACED: Final = "".join(f"{chr(first)}-{chr(last)}" for first, last in UNSPACED_RANGES)
_UNSPACED_CHAR: Final = re.compile(f"[{UNSPACED}]")


#: The combining marks (Unicode's general categories Mn, Mc and Me) as a character class's inside.
_MARKS: Final = "".join(f"{chr(first)}-{chr(last)}" for first, last in _marks.MARKS)
#: Where :func:`spaced` puts a :data:`SPACER` first: beside a character of :data:`UNSPACED`; then the one before a
#: mark is taken out (:data:`_SPACER_BEFORE_MARK`). One pattern of both, the positions beside such a character and
#: not before a mark, asked the mark class at every position of a Chinese text: twice as slow (about 6 s for
#: 20 MB of it, against 3 s; before the marks, 1.5 s).
_BESIDE_UNSPACED: Final = re.compile(f"(?<=[{UNSPACED}])|(?=[{UNSPACED}])")
_SPACER_BEFORE_MARK: Final = re.compile(f"{SPACER}+(?=[{_MARKS}])")


#: The variation selectors, first and last of each range: Mongolian's free variation selectors (U+180B to U+180D,
#: U+180F), U+FE00 to U+FE0F (VS1 to VS16: a CJK compatibility variant, text or emoji presentation) and U+E0100 to
#: U+E01EF (VS17 to VS256, the Ideographic Variation Sequences of official Japanese registers: ``葛󠄀``). Each
#: picks a glyph of the character before it, the same character: a reader searching ``葛`` means ``葛󠄀`` too.
SELECTOR_RANGES: Final = ((0x180B, 0x180D), (0x180F, 0x180F), (0xFE00, 0xFE0F), (0xE0100, 0xE01EF))
#: The same as a character class's inside (``[…]`` in Python's, PostgreSQL's and SQLite's ``GLOB``).
SELECTORS: Final = "".join(f"{chr(first)}-{chr(last)}" for first, last in SELECTOR_RANGES)

#: Marks a writer may set down or leave out, which a search does not tell apart (a word is found written with them
#: or without, as Arabic and Hebrew readers search): Arabic's honorifics and small high letters, harakat, tanwin,
#: shadda, sukun, superscript alef and Quranic annotation marks, and its tatweel (a letter's stroke drawn out to
#: fill a line); Hebrew's points and cantillation marks; Syriac's vowels and marks; and the variation selectors
#: (:data:`SELECTOR_RANGES`, since schema step 24: PostgreSQL's parser read ``葛󠄀`` as a word of its own, which
#: ``葛`` did not find, and SQLite's FTS5 read a selector as a separator, cutting a Mongolian word in two). A
#: passage's text is indexed without them (:class:`PassageBuilder`: the letter before them stands for itself and
#: them, so a match still covers them in the document), and so is a query: ``葛`` and ``葛󠄀`` find both writings.
#: Not the vowel signs of the scripts of India or of Thai, which are letters of their words, nor Arabic's madda
#: and hamza above and below (U+0653 to U+0655), which Unicode composes with a letter (``ا`` and U+0654 are ``أ``).
OPTIONAL_RANGES: Final = (
    (0x0591, 0x05BD), (0x05BF, 0x05BF), (0x05C1, 0x05C2), (0x05C4, 0x05C5), (0x05C7, 0x05C7),
    (0x0610, 0x061A), (0x0640, 0x0640), (0x064B, 0x0652), (0x0656, 0x065F), (0x0670, 0x0670), (0x06D6, 0x06DC), (0x06DF, 0x06E4),
    (0x06E7, 0x06E8), (0x06EA, 0x06ED), (0x0730, 0x074A), *SELECTOR_RANGES,
)
#: The same as a character class's inside (``[…]`` in Python's, PostgreSQL's and SQLite's ``GLOB``).
OPTIONAL: Final = "".join(f"{chr(first)}-{chr(last)}" for first, last in OPTIONAL_RANGES)
_OPTIONAL_RUN: Final = re.compile(f"[{OPTIONAL}]+")


def without_optional_marks(text: str) -> str:
    """``text`` without the marks of :data:`OPTIONAL_RANGES`."""
    return _OPTIONAL_RUN.sub("", text)


@functools.cache
def _separators() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The characters beyond ASCII that FTS5 reads as separators, combining marks but: punctuation (``“`` ``”``
    ``’`` ``…`` ``،`` ``।``), symbols (an emoji), spaces (U+00A0); those of the Basic Multilingual Plane and
    those beyond it apart (Python's regular expressions test a class of the first in one step, of the second
    range by range: ten times as slow, so it is asked only of a text holding such a character).

    PostgreSQL's parser reads every character beyond ASCII as a letter when the database's ``LC_CTYPE`` is ``C``
    (as ``initdb --locale=C`` makes it), so ``“walrus”`` was one word to it and ``walrus`` was not found."""
    taken = sorted([*_fts5_chars.JOINED, *_marks.MARKS, *UNSPACED_RANGES])
    ranges: list[tuple[int, int]] = []
    at = 0x80
    for first, last in taken:
        if first > at:
            ranges.append((at, first - 1))
        at = max(at, last + 1)
    if at <= 0x10FFFF:
        ranges.append((at, 0x10FFFF))

    def within(low: int, high: int) -> re.Pattern[str]:
        kept = [(max(a, low), min(b, high)) for a, b in ranges if a <= high and b >= low]
        inside = "".join(re.escape(chr(a)) + ("" if a == b else "-" + re.escape(chr(b))) for a, b in kept)
        return re.compile(f"[{inside}]")

    return within(0x80, 0xFFFF), within(0x10000, 0x10FFFF)


_BEYOND_THE_BMP: Final = re.compile("[\U00010000-\U0010FFFF]")


def spaced(text: str) -> str:
    """``text`` as the index holds it: :data:`APART` before and after each separator beyond ASCII
    (:func:`_separators`), so that both engines read it as one; then :data:`SPACER` before and after each character
    of :data:`UNSPACED` (once between two of them; none before a combining mark, which stays with the character
    before it), so that the engines read each as a word; a text without either comes back as it is."""
    if not text.isascii():
        basic, beyond = _separators()
        text = basic.sub(rf"{APART}\g<0>{APART}", text)
        if _BEYOND_THE_BMP.search(text) is not None:
            text = beyond.sub(rf"{APART}\g<0>{APART}", text)
    if _UNSPACED_CHAR.search(text) is None:
        return text  # no SPACER put in: none to take out before a mark
    return _SPACER_BEFORE_MARK.sub("", _BESIDE_UNSPACED.sub(SPACER, text))


# --- the query ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """A parsed query: its phrases, each a tuple of words (a one-word phrase is a word); all must match."""

    phrases: tuple[tuple[str, ...], ...]
    text: str
    #: Where each phrase's first word starts in :attr:`text` (a character offset), one for each of :attr:`phrases`.
    offsets: tuple[int, ...] = ()

    def __str__(self) -> str:
        return " ".join(p[0] if len(p) == 1 else '"' + " ".join(p) + '"' for p in self.phrases)


def _bitmap(ranges: Sequence[tuple[int, int]], but: Sequence[tuple[int, int]] = ()) -> bytes:
    table = bytearray(0x110000)
    for first, last in ranges:
        table[first : last + 1] = b"\x01" * (last + 1 - first)
    for first, last in but:
        table[first : last + 1] = bytes(last + 1 - first)
    return bytes(table)


_JOINS: Final = _bitmap(_fts5_chars.JOINED)
_ALONE: Final = _bitmap(_fts5_chars.JOINED, but=_fts5_chars.NOT_ALONE)
#: The combining marks, by code point (:data:`_MARKS`).
_MARK: Final = _bitmap(_marks.MARKS)


def _word_char(ch: str) -> bool:
    """Whether FTS5's tokenizer reads ``ch`` as part of a word (the index and the query read alike)."""
    return _JOINS[ord(ch)] == 1


def _letter_or_number(ch: str) -> bool:
    """Whether ``ch`` is a word even alone, not a diacritic the tokenizer (``remove_diacritics``) folds away."""
    return _ALONE[ord(ch)] == 1


def _words_at(text: str, start: int, end: int) -> list[tuple[str, int]]:
    """The words of ``text[start:end]`` (:func:`words_of`), each with where it starts in ``text``."""
    found: list[tuple[str, int]] = []
    begun = -1
    for i in range(start, end):
        ch = text[i]
        if (_word_char(ch) or (begun >= 0 and _MARK[ord(ch)])) and ch not in (MARK_START, MARK_END):
            if begun < 0:
                begun = i
        elif begun >= 0:
            found.append((text[begun:i], begun))
            begun = -1
    if begun >= 0:
        found.append((text[begun:end], begun))
    return found


def words_of(text: str) -> list[str]:
    """The words of ``text``: its runs of the characters FTS5's tokenizer joins into words (:func:`_word_char`),
    each with the combining marks that follow its characters (a Devanagari vowel sign, a Thai tone mark), which
    FTS5 reads as separators and PostgreSQL's parser as letters: ``हिन्दी`` is one word, which FTS5 reads as
    the phrase of its three letters, and PostgreSQL as one."""
    found: list[str] = []
    current: list[str] = []
    for ch in text:
        if (_word_char(ch) or (current and _MARK[ord(ch)])) and ch not in (MARK_START, MARK_END):
            current.append(ch)
        elif current:
            found.append("".join(current))
            current = []
    if current:
        found.append("".join(current))
    return found


def parse_query(text: str) -> Query:
    """The reader's words as a :class:`Query` (see the module docstring); :class:`ParseError` for no words or an open quote."""
    if not isinstance(text, str):
        raise ParseError("a search query must be text", rule="query")
    if len(text) > MAX_QUERY_CHARS:
        raise LimitError(f"a search query may have at most {MAX_QUERY_CHARS} characters, not {len(text)}"
                         f" (from character {MAX_QUERY_CHARS} on)")
    phrases: list[tuple[str, ...]] = []
    offsets: list[int] = []
    starts: list[int] = []  # where each word of the phrases starts
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            close = text.find('"', i + 1)
            if close < 0:
                raise ParseError(
                    f'the quotation mark at character {i + 1} of the query (counted from 1) is not closed: a phrase is'
                    ' written "like this"',
                    text=text, offset=i, rule="query",
                )
            found = _words_at(text, i + 1, close)
            i = close + 1
        elif ch.isspace():
            i += 1
            continue
        else:
            end = i
            while end < n and not text[end].isspace() and text[end] != '"':
                end += 1
            found = _words_at(text, i, end)
            i = end
        # a word as the index holds it: without the marks a writer may leave out (كِتَابٌ is كتاب); a run of
        # marks alone (a lone combining accent, a variation selector) is no word SQLite's FTS5 finds: its
        # unicode61 tokenizer with remove_diacritics folds it away, so it could match nothing
        kept = [(without_optional_marks(w), at) for w, at in found]
        kept = [(w, at) for w, at in kept if any(_letter_or_number(c) for c in w)]
        if kept:
            phrases.append(tuple(w for w, _ in kept))
            offsets.append(kept[0][1])
            starts += [at for _, at in kept]
    if not phrases:
        raise ParseError(
            f"the query {text[:80]!r} has no words to search for (letters or digits)", text=text, rule="query"
        )
    words = [word for phrase in phrases for word in phrase]
    if len(words) > MAX_QUERY_WORDS:
        raise LimitError(f"a search query may have at most {MAX_QUERY_WORDS} words, not {len(words)}: the word at"
                         f" character {starts[MAX_QUERY_WORDS]} is one too many")
    for word, at in zip(words, starts, strict=True):
        if len(word) > MAX_WORD_CHARS:
            raise LimitError(f"a search word may have at most {MAX_WORD_CHARS} characters, not {len(word)}: the word"
                             f" at character {at}")
    read = [len(words_of(spaced(word))) for word in words]
    indexed = sum(read)
    if indexed > MAX_QUERY_INDEXED:
        at = next(a for a, total in zip(starts, itertools.accumulate(read), strict=True) if total > MAX_QUERY_INDEXED)
        raise LimitError(f"a search query may have at most {MAX_QUERY_INDEXED} words as the index reads them (each"
                         f" Chinese, Japanese or Thai character one), not {indexed}: the word at character {at}"
                         " passes the bound")
    # a phrase written twice is asked once, as first written, in whatever case (both engines fold it): ``dog Dog``
    # was two phrases, named by the shortest match, where ``dog dog`` was one, named by its first
    first: dict[tuple[str, ...], tuple[tuple[str, ...], int]] = {}
    for phrase, at in zip(phrases, offsets, strict=True):
        first.setdefault(tuple(unicodedata.normalize("NFC", w).lower() for w in phrase), (phrase, at))
    return Query(tuple(p for p, _ in first.values()), text, tuple(at for _, at in first.values()))


def fts5_expression(phrases: Sequence[Sequence[str]]) -> str:
    """An FTS5 query matching every phrase: each one an FTS5 string, so no word is read as an operator (its
    words :func:`spaced`, as the index holds them: a Chinese word is the phrase of its characters)."""
    return " ".join('"' + " ".join(spaced(w).replace('"', '""') for w in phrase) + '"' for phrase in phrases)


def phrase_words(phrase: Sequence[str]) -> int:
    """How many words the index reads in ``phrase``: its words, each character of :data:`UNSPACED` one of its
    own (``北京大学`` is four). A match of it is that many words, which the engines mark one by one."""
    return sum(len(words_of(spaced(word))) for word in phrase)


# --- passages -----------------------------------------------------------------------------

_RUN: Final = struct.Struct("<iii")


@dataclass(frozen=True)
class Passage:
    """A stretch of a document's text, and where its characters stand in the document.

    ``start`` is the position in the document (``char`` positions, see the module
    docstring) of the passage's first character; ``runs`` are ``(t, s, e)``:
    from position ``t`` of ``text`` on (up to the next run), the text stands at
    ``[start + s, start + e)`` of the document, one character for one when the
    lengths agree, else as a whole (a character reference).
    """

    start: int
    text: str
    runs: tuple[tuple[int, int, int], ...]
    #: The first words of the passage after it (:data:`TAIL_WORDS`), indexed after its text so that a phrase the cut
    #: between the two runs through is found; :attr:`runs` go on over them (from ``len(text)``). A match that starts
    #: in them is the next passage's (:func:`pdi.passages.hits.joint`).
    tail: str = ""

    def encoded_runs(self) -> bytes:
        return b"".join(_RUN.pack(*r) for r in self.runs)

    @property
    def indexed(self) -> str:
        """Its text as the catalog's index holds it (:func:`spaced`), then its :attr:`tail` after a :data:`JOINT`."""
        return spaced(self.text) + JOINT + spaced(self.tail) if self.tail else spaced(self.text)

    def with_tail(self, after: Passage) -> Passage:
        """This passage with the first words of ``after`` (the passage after it) as its :attr:`tail`."""
        k = _tail_end(after.text)
        if k == 0:
            return self
        n, shift = len(self.text), after.start - self.start
        runs = list(self.runs)
        for i, (t, s, e) in enumerate(after.runs):
            if t >= k:
                break
            t1 = after.runs[i + 1][0] if i + 1 < len(after.runs) else len(after.text)
            if t1 > k and t1 - t == e - s:  # one for one: as far as the tail goes
                e = s + (k - t)
            runs.append((n + t, s + shift, e + shift))
        return Passage(self.start, self.text, tuple(runs), after.text[:k])

    @classmethod
    def decode(cls, start: int, text: str, runs: bytes) -> Passage:
        return cls(start, text, tuple(_RUN.iter_unpack(runs)))

    def without_optional_marks(self) -> Passage | None:
        """This passage as :class:`PassageBuilder` makes it now, the marks of :data:`OPTIONAL_RANGES` left out
        (a passage made before they were: schema step 19; before the variation selectors were: step 24); ``None``
        when no word is left."""
        builder = PassageBuilder(size=len(self.text) + 1)
        ends = [t for t, _, _ in self.runs[1:]] + [len(self.text)]
        for (t, s, e), t1 in zip(self.runs, ends, strict=True):
            builder.add(self.text[t:t1], self.start + s, self.start + e)
        made = builder.finish()
        return made[0] if made else None

    def _run(self, i: int) -> tuple[int, int, int, int]:
        """The run holding text position ``i``: (t0, t1, s, e)."""
        lo, hi = 0, len(self.runs) - 1
        while lo < hi:  # the last run starting at or before i
            mid = (lo + hi + 1) // 2
            if self.runs[mid][0] <= i:
                lo = mid
            else:
                hi = mid - 1
        t0, s, e = self.runs[lo]
        t1 = self.runs[lo + 1][0] if lo + 1 < len(self.runs) else len(self.text)
        return t0, t1, s, e

    def document_range(self, a: int, b: int) -> tuple[int, int]:
        """Where text ``[a, b)`` of the passage (``a < b``) stands in the document."""
        t0, t1, s, e = self._run(a)
        first = s + (a - t0) if t1 - t0 == e - s else s
        t0, t1, s, e = self._run(b - 1)
        last = s + (b - t0) if t1 - t0 == e - s else e
        return self.start + first, self.start + last


_UNINDEXED: Final = re.compile(f"[\x00{SPACER}{APART}{JOINT}{MARK_START}{MARK_END}]")

#: White space, where a passage may be cut (HTML's ASCII white space).
_SPACE: Final = " \t\n\r\f"


#: How far back from a passage's longest a place to cut it between words is looked for where it holds no white space
#: (characters): a word is seldom longer; a run without a place, cut at its longest.
_WORD_CUT_LOOK: Final = 256


def _word_cut(text: str, low: int, at: int) -> int:
    """The last place in ``(low, at]`` of ``text`` a passage may be cut without cutting a word, for a text without
    white space there (a Chinese or Thai one, words apart by no-break spaces): after a character the index reads as
    no word's (a no-break space, ``。``, ``、``), else between two characters of the scripts written without spaces
    (:data:`UNSPACED`, each a word of its own); never before a combining mark. Where there is none (a word longer
    than the range), the last place before no mark (inside the word, but with every letter's marks kept with it);
    ``at`` where even that is not there."""
    between = grapheme = 0
    for k in range(at, low, -1):
        if k < len(text) and _MARK[ord(text[k])]:
            continue
        grapheme = grapheme or k
        before = text[k - 1]
        if not _word_char(before) and not _MARK[ord(before)]:
            return k
        if not between and k < len(text) and _UNSPACED_CHAR.match(before) and _UNSPACED_CHAR.match(text[k]):
            between = k
    return between or grapheme or at


_ASCII_WORD: Final = re.compile("[0-9A-Za-z]+")


def _tail_end(text: str) -> int:
    """Where the :attr:`Passage.tail` taken from the start of ``text`` (the next passage's) ends: after its first
    words, at most :data:`TAIL_WORDS` of them as a query reads them (:func:`words_of`) and :data:`TAIL_INDEXED` as the
    index reads them (:func:`word_spans`: each character of :data:`UNSPACED` one), within :data:`TAIL_CHARS`
    characters; always between two words as the index reads them, never inside one (a part of a word would be
    another word to the engines); 0 for none."""
    limit = min(len(text), TAIL_CHARS)
    if text[:limit].isascii():  # a word is a run of letters and digits, to a query and to the index: a fifth of the time
        end = 0
        for count, run in enumerate(_ASCII_WORD.finditer(text, 0, limit), 1):
            if count > min(TAIL_WORDS, TAIL_INDEXED) or (run.end() == limit < len(text)):
                break
            end = run.end()
        return end
    end = indexed = queried = 0
    begun = -1
    running = False  # inside a word as a query reads it
    for i in range(limit):
        ch = text[i]
        mark = _MARK[ord(ch)] == 1
        word = _word_char(ch)
        inside = word or (running and mark)
        begins = inside and not running  # a query's word begins at i
        queried += begins
        running = inside
        if begun >= 0 and (mark or (word and not _unspaced(ch) and not _unspaced(text[i - 1]))):
            continue  # the index's word goes on
        if begun >= 0:  # an index word ended at i
            begun = -1
            indexed += 1
            if indexed > TAIL_INDEXED or queried - begins > TAIL_WORDS:
                return end
            end = i
        if word:
            begun = i
    if begun >= 0 and limit == len(text):
        indexed += 1
        if indexed <= TAIL_INDEXED and queried <= TAIL_WORDS:
            end = limit
    return end


def _clean(text: str) -> str:
    """``text`` with the two mark characters, the :data:`SPACER`, the :data:`APART`, the :data:`JOINT` and NUL
    (which no database text holds) written as spaces: the same length."""
    if ("\x00" in text or SPACER in text or APART in text or JOINT in text or MARK_START in text
            or MARK_END in text):
        return _UNINDEXED.sub(" ", text)
    return text


def _in_word(ch: str) -> bool:
    """Whether ``ch`` is a word's character, or a combining mark (which stays with its word)."""
    return _word_char(ch) or _MARK[ord(ch)] == 1


def _has_word(text: str) -> bool:
    return any(_word_char(ch) for ch in text)


class PassageBuilder:
    """Cuts a stream of text pieces, each with where it stands in the document, into :class:`Passage` values.

    :meth:`add` a piece of text and the document range it stands for (the same
    length: one for one; else the piece stands for that range as a whole);
    :meth:`gap` says that a word ends there (markup that separates words).
    A passage is cut at the last white space before it grows past
    :data:`PASSAGE_CHARS`; in a text without white space there, between two words
    (:func:`_word_cut`); or there, when a word is longer. Passages without a
    word are dropped. Time is linear in the text: the pieces waiting are
    joined once each time a passage can be cut.
    """

    def __init__(self, size: int = PASSAGE_CHARS) -> None:
        self.size = size
        self._parts: list[str] = []
        self._length = 0
        self._runs: list[tuple[int, int, int]] = []  # (t, s, e), t from the first waiting character
        self._ready: list[Passage] = []
        #: Where marks left out at a word's start began in the document: the character after them stands for them too
        self._lead: int | None = None
        #: The last passage cut, held until the next is (its tail is the next one's first words)
        self._held: Passage | None = None

    def add(self, text: str, start: int, end: int) -> None:
        if not text:
            return
        if _OPTIONAL_RUN.search(text) is not None:
            self._add_without_optional_marks(text, start, end)
            return
        self._add(text, start, end)

    def _add_without_optional_marks(self, text: str, start: int, end: int) -> None:
        """:meth:`add` of a piece holding marks of :data:`OPTIONAL_RANGES`: left out of the passage's text, each
        run of them stands with the character before it (that character a piece standing for the range of both,
        as a reference does), so a match of the word covers its marks in the document; a run at the piece's
        start stands with the character before the piece, where that is the document's character before it (a mark
        after a character reference or an inline tag, or after the end of a piece the text streamed in). A run at a
        word's start (after white space or punctuation, or at the text's start: ``ـكتاب``, a tatweel drawing out the
        first stroke) stands with the character after it instead, when that is a word's: both engines read the run
        as the start of the word (FTS5's tokenizer and PostgreSQL's parser, ``ـa`` one word), so a match covers it.
        A piece standing for its range as a whole stays so, without its marks."""
        if len(text) != end - start:
            bare = without_optional_marks(text)
            if bare:
                self._add(bare, start, end)
            elif not self._extend_last(start, end):
                self._lead = start if self._lead is None else self._lead
            return
        at = 0
        for run in _OPTIONAL_RUN.finditer(text):
            a, b = run.span()
            if a > at and _in_word(text[a - 1]):
                if a - 1 > at:
                    self._add(text[at : a - 1], start + at, start + a - 1)
                self._add(text[a - 1], start + a - 1, start + b)
            elif a > at:  # after white space or punctuation: with the word after it, if one comes next
                self._add(text[at:a], start + at, start + a)
                self._lead = start + a
            elif not self._extend_last(start, start + b) and self._lead is None:  # a == 0
                self._lead = start
            at = b
        if at < len(text):
            self._add(text[at:], start + at, end)

    def _extend_last(self, start: int, end: int) -> bool:
        """Marks left out at ``[start, end)`` of the document: the waiting character before them, when nothing
        but markup inside a word (an inline tag, a comment) stands between it and ``start`` and it is a word's
        character (not white space, punctuation, nor a tag that separates words), stands for itself and them (and
        that markup); whether it does."""
        if self._lead is not None or not self._runs or not self._parts or self._runs[-1][2] > start:
            return False
        if not _in_word(self._parts[-1][-1:] or " "):
            return False
        t, s, e = self._runs[-1]
        last = self._length - 1
        if self._length - t == e - s and last > t:  # one for one: its last character made a run of its own
            self._runs[-1] = (t, s, e - 1)
            self._runs.append((last, e - 1, end))
        else:
            self._runs[-1] = (t, s, end)
        return True

    def _add(self, text: str, start: int, end: int) -> None:
        if self._lead is not None:  # marks at a word's start: its first character stands for them too
            lead, self._lead = self._lead, None
            if lead <= start and _word_char(text[0]):
                if len(text) == end - start and len(text) > 1:
                    self._add(text[0], lead, start + 1)
                    self._add(text[1:], start + 1, end)
                else:
                    self._add(text, lead, end)
                return
        text = _clean(text)
        linear = len(text) == end - start
        if self._runs and linear:
            t, s, e = self._runs[-1]
            if e == start and self._length - t == e - s:  # continues the last one-for-one run
                self._runs[-1] = (t, s, end)
                self._append(text)
                return
        self._runs.append((self._length, start, end))
        self._append(text)

    def gap(self, start: int, end: int) -> None:
        """Markup at ``[start, end)`` that separates words: a space in the passage's text."""
        self._lead = None
        if self._length and not self._parts[-1][-1:].isspace():
            self._runs.append((self._length, start, end))
            self._append(" ")

    def _append(self, text: str) -> None:
        self._parts.append(text)
        self._length += len(text)
        if self._length >= self.size:
            self._cut(final=False)

    def _cut(self, final: bool) -> None:
        whole = "".join(self._parts)
        runs = self._runs
        n = len(whole)
        pos = 0
        r = 0  # the first run not wholly in passages already cut
        while n - pos >= (1 if final else self.size):
            at = n
            if n - pos > self.size or not final:
                at = pos + self.size
                space = max(whole.rfind(blank, pos + self.size // 2, at) for blank in _SPACE)
                if space > 0:
                    at = space + 1
                else:
                    at = _word_cut(whole, max(pos + self.size // 2, at - _WORD_CUT_LOOK), at)
                at = self._splittable(runs, r, pos, at, n)
            passage_runs: list[tuple[int, int, int]] = []
            while r < len(runs) and runs[r][0] < at:
                t, s, e = runs[r]
                t1 = runs[r + 1][0] if r + 1 < len(runs) else n
                a, b = max(t, pos), min(t1, at)
                if t1 - t == e - s:
                    passage_runs.append((a, s + (a - t), s + (b - t)))
                else:
                    passage_runs.append((a, s, e))
                if t1 > at:
                    break
                r += 1
            head = whole[pos:at]
            if passage_runs and _has_word(head):
                base = passage_runs[0][1]
                self._release(Passage(base, head, tuple((t - pos, s - base, e - base) for t, s, e in passage_runs)))
            pos = at
        rest: list[tuple[int, int, int]] = []
        for t, s, e in runs[r:]:
            if t < pos:  # one for one, split at pos (_splittable saw to that)
                s, t = s + (pos - t), pos
            rest.append((t - pos, s, e))
        self._parts = [whole[pos:]] if pos < n else []
        self._length = n - pos
        self._runs = rest

    @staticmethod
    def _splittable(runs: list[tuple[int, int, int]], r: int, pos: int, at: int, n: int) -> int:
        """``at``, or an end of the run as a whole that holds it (never cut inside a reference)."""
        for i in range(r, len(runs)):
            t, s, e = runs[i]
            if t >= at:
                break
            t1 = runs[i + 1][0] if i + 1 < len(runs) else n
            if t < at < t1 and t1 - t != e - s:
                return t if t > pos else t1
        return at

    def _release(self, passage: Passage) -> None:
        """A passage cut: the one held before it is ready, with the first words of this one as its tail."""
        if self._held is not None:
            self._ready.append(self._held.with_tail(passage))
        self._held = passage

    def take(self) -> list[Passage]:
        """The passages cut so far but the last, held for its tail (each given once)."""
        ready, self._ready = self._ready, []
        return ready

    def finish(self) -> list[Passage]:
        """Cut what is left; every passage not yet taken."""
        if self._length:
            self._cut(final=True)
        if self._held is not None:
            self._ready.append(self._held)
            self._held = None
        return self.take()


# --- markup -------------------------------------------------------------------------------

#: Tags inside a word: phrasing elements the rendered page runs together with their neighbours.
INLINE: Final = frozenset({
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "del", "dfn", "em", "font", "i", "ins",
    "kbd", "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time", "tt",
    "u", "var",
})


#: The longest construct opening (``<![CDATA[``) and character reference (``&CounterClockwiseContourIntegral;``)
#: a piece may end inside: that much is kept for the next piece.
_LOOKAHEAD: Final = 40


class MarkupScanner:
    """The text of an HTML or XML document's CRLF-canonical source, fed in pieces, cut into passages (see the module docstring).

    :meth:`feed` pieces in order (each may end anywhere); the scanner keeps
    only what it cannot decide yet (a tag, comment or raw-text element not
    yet closed) and one passage. ``kind`` is ``"html"`` or ``"xml"``.
    """

    def __init__(self, kind: str, size: int = PASSAGE_CHARS) -> None:
        self.is_html = kind == "html"
        self.builder = PassageBuilder(size)
        self._buffer = ""
        self._offset = 0  # the document position of the buffer's first character
        self._inside: tuple[str, bool] | None = None  # a raw-text (False) or RCDATA (True) element
        self._plaintext = False

    def feed(self, text: str, final: bool = False) -> list[Passage]:
        """Read ``text`` (the next piece; ``final``: the last) and return the passages it completed."""
        self._buffer += text
        used = self._scan(final)
        self._buffer = self._buffer[used:]
        self._offset += used
        return self.builder.finish() if final else self.builder.take()

    def _text(self, start: int, end: int) -> None:
        """Text ``[start, end)`` of the buffer, each character reference as its character."""
        base, builder = self._offset, self.builder
        for piece, s, e in decoded_pieces(self._buffer, start, end):
            builder.add(piece, base + s, base + e)

    def _scan(self, final: bool) -> int:
        """Read the buffer as far as it can be decided; how far that is."""
        text, base, builder, is_html = self._buffer, self._offset, self.builder, self.is_html
        n = len(text)
        i = 0
        while i < n:
            if self._plaintext:
                builder.add(text[i:], base + i, base + n)
                return n
            if self._inside is not None:
                name, is_text = self._inside
                close = close_tag(text, name, i)
                if close < 0:
                    stop = n if final else max(i, n - len(name) - 3)
                    if is_text and not final:  # a character reference may go on in the next piece
                        amp = text.rfind("&", max(i, stop - _LOOKAHEAD), stop)
                        stop = amp if amp >= 0 else stop
                    if is_text:
                        self._text(i, stop)
                    return stop
                if is_text:
                    self._text(i, close)
                self._inside = None
                i = close
                continue
            lt = text.find("<", i)
            if lt < 0:
                stop = n
                if not final:
                    amp = text.rfind("&", max(i, n - _LOOKAHEAD), n)
                    stop = amp if amp >= 0 else n
                self._text(i, stop)
                return stop
            self._text(i, lt)
            i = lt
            if not final and n - lt < len("<![CDATA["):
                return lt
            if text.startswith("<!--", lt):
                end = text.find("-->", lt + 4)
                if end < 0:
                    return n if final else lt
                i = end + 3  # a comment joins what is around it, as on the rendered page
            elif text.startswith("<![CDATA[", lt) and not is_html:
                end = text.find("]]>", lt + 9)
                if end < 0:
                    if not final:
                        return lt
                    end = n
                builder.add(text[lt + 9 : end], base + lt + 9, base + end)
                i = min(n, end + 3)
            elif TAG_OPEN.match(text, lt):
                closing = text[lt + 1] == "/"
                name_match = TAG_NAME.match(text, lt + (2 if closing else 1))
                assert name_match is not None
                end = tag_end(text, name_match.end())
                if end < 0:
                    if not final:
                        return lt
                    end = n  # the end of the input in a tag: the rest is that tag (WHATWG 13.2.5.8 eof-in-tag)
                name = name_match.group().lower()
                if not (is_html and name in INLINE):
                    builder.gap(base + lt, base + end)
                i = end
                if is_html and not closing:
                    if name in RAW_TEXT:
                        self._inside = (name, False)
                    elif name in RCDATA:
                        self._inside = (name, True)
                    elif name == "plaintext":
                        self._plaintext = True
            elif text.startswith(("<!", "<?", "</"), lt):
                end = text.find(">", lt + 2)
                if end < 0 and not final:
                    return lt
                i = n if end < 0 else end + 1
                builder.gap(base + lt, base + i)
            else:  # a "<" that opens nothing is text
                builder.add("<", base + lt, base + lt + 1)
                i = lt + 1
        return n


def markup_passages(text: str, kind: str, *, size: int = PASSAGE_CHARS) -> list[Passage]:
    """The passages of the text of an HTML (``kind="html"``) or XML (``"xml"``) document's whole CRLF-canonical source."""
    return MarkupScanner(kind, size).feed(text, final=True)


# --- what a match marks ---------------------------------------------------------------------


def _unspaced(ch: str) -> bool:
    return _UNSPACED_CHAR.match(ch) is not None
