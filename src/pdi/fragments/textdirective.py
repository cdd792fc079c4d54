"""Text directives, ``#:~:text=``: WICG *URL Fragment Text Directives* (Text Fragments), on archived text.

Implements, from the Draft Community Group Report (https://wicg.github.io/scroll-to-text-fragment/;
sections numbered as it numbers them, 1 Infrastructure, 2 Introduction, 3 Description):

* §3.3.1 "Extracting the fragment directive": what follows the fragment directive
  delimiter ``:~:`` in a fragment (:func:`split_fragment_directive`);
* §3.4 "parse the fragment directive" (directives split at ``&``; each
  ``text=`` one parsed, others passed over) and "parse a text directive"
  (``text=[prefix-,]start[,end][,-suffix]``, at most four terms split at
  ``,``, a term never empty and never holding ``-``) with "percent-decode a
  text directive term" (percent-decoding, then UTF-8 decode without BOM: an
  octet that is not UTF-8 is U+FFFD, as in Chromium):
  :func:`parse_fragment_directive`, :func:`parse_text_directive`;
* §3.6.1 "find a range from a text directive", with "find a string in
  range", "find a range from a node list" and "advance range start to next
  non-whitespace position", over a :class:`~pdi.fragments.pagetext.PageText`
  instead of a DOM: a term matches inside one block only; the matching text
  and its prefix and suffix may cross blocks, with only white space between
  (no character the comparison ignores, SOFT HYPHEN, ZERO WIDTH SPACE …); the
  first match in document order wins (:func:`find_text_directive`);
* §3.6.1 the comparison "at the primary level of UTS #10", as Chromium's ICU
  applies it: both sides are folded (:func:`fold`): compatibility
  decomposition, combining marks dropped (but a kana voicing mark after a kana letter), decimal
  digits as ASCII digits, Unicode case folding, the few letters the root
  collation tells apart only past the primary level (``ø``, ``ł``, ``æ`` …),
  hiragana for katakana, the curly quotation marks Chromium folds, format
  characters (SOFT HYPHEN, joiners), controls that are not white space and variation selectors ignored; every
  space separator (NO-BREAK
  SPACE too) is one space, and TAB, LF, CR and FF are themselves, not a space;
* §3.6.2 word boundaries, after UAX #29's default rules: a position is a
  boundary unless it lies between two word characters (letters, digits,
  marks, connector punctuation, NARROW NO-BREAK SPACE), or between two letters with one of
  ``' ’ ·`` (MidLetter, MidNumLet) between them, or two digits with one
  of ``, ; . '`` (MidNum). As in Chromium's ICU, a colon and a full stop
  between letters are boundaries (``www.example.com``, ``foo:bar``), and so is
  where a ZERO WIDTH SPACE stands, though the comparison ignores it, and where one text node of a page ends and
  the next begins (markup between them: Chromium checks a word's ends in its own text node). Han, Hiragana and Katakana characters are words
  of one character each (UAX #29 leaves them to a dictionary, which this
  does not have), but a spacing voicing mark (``゛``, ``゜``) is one with the kana or Han character beside it.
  Boundaries are of the page's characters, not of their folding: one never falls inside a
  character whose folding is several (``½`` is ``1⁄2``, yet holds no ``2``, as ICU's search rejects a match inside
  an expansion), and such a character is read as itself (``™`` is a symbol: ``Apple™`` ends a word after
  ``Apple``, though it folds to ``appletm``; ``²`` is no digit to UAX #29, though it folds to ``2``); an emoji is one
  word, its ZWJ sequence, modifier or flag's regional indicator pair whole).

Where the spec returns null for a directive that does not parse, this module
raises :class:`~pdi.errors.ParseError` naming the term and what is wrong with
it: a PDI that does not parse is an error, never silently a whole document.

Pure: no I/O. Folding and matching are bounded by :data:`MAX_SECONDS` of processor time (and a text by
:data:`MAX_IRREGULAR`).
"""

from __future__ import annotations

import array
import bisect
import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote_to_bytes

from pdi._work_deadline import WorkDeadline
from pdi.errors import LimitError, ParseError
from pdi.fragments.pagetext import PageText

__all__ = [
    "DELIMITER",
    "MAX_FRAGMENT_CHARS",
    "TextDirective",
    "find_text_directive",
    "fold",
    "parse_fragment_directive",
    "parse_text_directive",
    "split_fragment_directive",
]

#: The fragment directive delimiter (§3.3.1).
DELIMITER: Final = ":~:"
#: The longest a search for one directive may take (CPU seconds: :mod:`pdi._work_deadline`, whose backstop on the
#: clock is ten times that): a directive whose terms occur very often (``text=a,b,-c`` on pages of ``a`` and
#: ``b``) is a :class:`LimitError`, not a hang.
MAX_SECONDS: Final = 5.0
#: The most text directives in one fragment, and the longest term (characters).
MAX_DIRECTIVES: Final = 32
MAX_TERM_CHARS: Final = 4000
#: The longest fragment directive read (characters): as many text directives as are read, each of four terms at
#: their longest as written (a character of four UTF-8 octets is twelve, ``%F0%9F%98%80``). Past it nothing is read
#: (a stranger's ten million ``&`` took seconds and a hundred megabytes to pass over).
MAX_FRAGMENT_CHARS: Final = MAX_DIRECTIVES * (len("text=-,,,-&") + 4 * 12 * MAX_TERM_CHARS)

# What a URL fragment may hold unescaped: printable ASCII but the URL Standard's fragment percent-encode set
# (C0 controls, space, '"', '<', '>', '`', and all past '~'); '|', '^', '{', '}', '\\' and '#' are left as written.
_FRAGMENT_CHARS: Final = re.compile(r"[!#-;=?-_a-~]*")
#: A text directive among the directives a fragment directive holds, split at ``&`` (§3.4): its value.
_TEXT_DIRECTIVE: Final = re.compile(r"(?:^|(?<=&))text=([^&]*)")
#: Between blocks in the folded text: a lone surrogate, which no term holds and no page text folds to (U+FFFF, once
#: the separator, is a character of a page: Chromium 150 finds ``text=a%EF%BF%BFb`` in ``a`` U+FFFF ``b``).
_SEPARATOR: Final = "\udfff"


@dataclass(frozen=True)
class TextDirective:
    """A parsed text directive: ``start`` and the optional ``end``, ``prefix`` and ``suffix`` (decoded)."""

    start: str
    end: str | None = None
    prefix: str | None = None
    suffix: str | None = None

    def __str__(self) -> str:
        """The directive as written in a URL (``text=`` and its terms, percent-encoded)."""
        terms = []
        if self.prefix is not None:
            terms.append(_encode(self.prefix) + "-")
        terms.append(_encode(self.start))
        if self.end is not None:
            terms.append(_encode(self.end))
        if self.suffix is not None:
            terms.append("-" + _encode(self.suffix))
        return "text=" + ",".join(terms)

    def said(self) -> str:
        """The directive in words, its terms decoded: ``"words"``, ``from "a" to "b"``, with ``after "p"`` and
        ``before "s"`` where it has a prefix or a suffix (what a reader is told it asked for, not its %-escapes)."""
        def term(text: str) -> str:  # a long term (a stranger's) told by its ends
            return f'"{text}"' if len(text) <= 80 else f'"{text[:60]}…{text[-15:]}"'

        words = term(self.start) if self.end is None else f"from {term(self.start)} to {term(self.end)}"
        if self.prefix is not None:
            words += f" after {term(self.prefix)}"
        if self.suffix is not None:
            words += f" before {term(self.suffix)}"
        return words


def _encode(term: str) -> str:
    from urllib.parse import quote

    return quote(term, safe="").replace("-", "%2D")


def split_fragment_directive(fragment: str) -> tuple[str, str | None]:
    """``(the fragment before the delimiter, the fragment directive)``; the directive is ``None`` without ``:~:``."""
    at = fragment.find(DELIMITER)
    if at < 0:
        return fragment, None
    return fragment[:at], fragment[at + len(DELIMITER) :]


def parse_fragment_directive(directive: str) -> tuple[TextDirective, ...]:
    """The text directives of a fragment directive (what follows ``:~:``), in order.

    Directives other than ``text=`` are passed over, as §3.4 says; a
    ``text=`` directive that does not parse is a :class:`ParseError`, and so is
    a fragment directive without any text directive.
    """
    if not isinstance(directive, str):
        raise ParseError("a fragment directive is text", rule="fragment-directive")
    if len(directive) > MAX_FRAGMENT_CHARS:
        raise LimitError(f"a fragment directive may have at most {MAX_FRAGMENT_CHARS:,} characters"
                         f" ({MAX_DIRECTIVES} text directives of four terms at their longest), not {len(directive):,}")
    bad = _FRAGMENT_CHARS.match(directive)
    assert bad is not None
    if bad.end() != len(directive):
        raise ParseError(
            f"character {directive[bad.end()]!r} must be percent-encoded in a fragment directive",
            text=directive, offset=bad.end(), rule="fragment-directive",
        )
    found: list[TextDirective] = []
    for piece in _TEXT_DIRECTIVE.finditer(directive):  # the others passed over where they stand, never split apart
        if len(found) == MAX_DIRECTIVES:
            raise LimitError(f"a fragment may hold at most {MAX_DIRECTIVES} text directives")
        found.append(parse_text_directive(piece.group(1), text=directive, offset=piece.start(1)))
    if not found:
        raise ParseError(
            f"the fragment directive {directive[:60]!r} holds no text directive (text=…)",
            text=directive, offset=0, rule="text-directive",
        )
    return tuple(found)


def parse_text_directive(value: str, *, text: str | None = None, offset: int = 0) -> TextDirective:
    """Parse a text directive's value (after ``text=``), §3.4 "parse a text directive".

    ``text`` and ``offset`` say where ``value`` stands, for the error's place.
    """
    where = text if text is not None else value
    tokens = value.split(",")

    def fail(message: str, at: int) -> ParseError:
        return ParseError(message, text=where, offset=offset + at, rule="text-directive")

    if len(tokens) > 4:
        raise fail(f"a text directive has at most four terms (prefix-,start,end,-suffix), not {len(tokens)}", 0)
    starts = []
    at = 0
    for token in tokens:
        starts.append(at)
        at += len(token) + 1
    items = list(zip(tokens, starts, strict=True))
    prefix = suffix = end = None
    if items and items[0][0].endswith("-"):
        raw, at = items.pop(0)
        prefix = _term(raw[:-1], "prefix", fail, at)
        if not items:
            raise fail("a text directive needs a start term after its prefix", len(value))
    if items and items[-1][0].startswith("-"):
        raw, at = items.pop()
        suffix = _term(raw[1:], "suffix", fail, at + 1)
        if not items:
            raise fail("a text directive needs a start term before its suffix", at)
    if len(items) > 2:
        raise fail("a text directive has one start term and at most one end term", items[2][1])
    raw, at = items[0]
    start = _term(raw, "start", fail, at)
    if len(items) == 2:
        end = _term(items[1][0], "end", fail, items[1][1])
    return TextDirective(start, end, prefix, suffix)


def _term(raw: str, what: str, fail: object, at: int) -> str:
    assert callable(fail)
    if not raw:
        raise fail(f"the {what} term of a text directive is empty", at)
    if "-" in raw:
        raise fail(f"the {what} term holds '-': write it %2D inside a term", at + raw.index("-"))
    if len(raw) > 12 * MAX_TERM_CHARS:  # longer than the longest term written out: four octets a character, each %XX
        raise LimitError(f"a text directive term may have at most {MAX_TERM_CHARS:,} characters")
    # the Encoding Standard's "UTF-8 decode without BOM": a BOM kept, each maximal ill-formed subsequence U+FFFD
    term = unquote_to_bytes(raw).decode("utf-8", "replace")
    if len(term) > MAX_TERM_CHARS:  # counted decoded: é is 6 characters written (%C3%A9), 中 9, a 1
        raise LimitError(f"a text directive term may have at most {MAX_TERM_CHARS:,} characters, not {len(term):,}")
    return term


# --- comparison (§3.6.1: primary level of UTS #10) -----------------------------------------

_ASCII_FOLD: Final = {ord(c): c.lower() for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}


#: Letters the root collation tells from a base letter only past the primary level (a stroke, a ligature), after
#: case folding; and the quotation marks Chromium folds before it compares (its FoldQuoteMarks, and ICU's primary
#: weights of the low ones). Each was checked in Chromium 150 (``text=o`` highlights ``ø``; ``ŧ``, ``ı``, ``þ``, ``ĸ``,
#: ``«``, ``ʼ`` and ``′`` stay apart, as here).
_PRIMARY: Final = str.maketrans({
    "ø": "o", "ł": "l", "đ": "d", "ð": "d", "ħ": "h", "æ": "ae", "œ": "oe",
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u05f3": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u05f4": '"',
    **{chr(k): chr(k - 0x60) for k in range(0x30A1, 0x30F7)}, "\u30fd": "\u309d", "\u30fe": "\u309e",  # katakana
})
#: The kana voicing marks: a match tells ``が`` (``か`` and U+3099) from ``か``, as Chromium does.
_KEPT_MARKS: Final = frozenset("\u3099\u309a")
#: Format characters that are not ignorable: the prepended concatenation marks (Arabic number signs), which have a
#: primary weight. (ZERO WIDTH SPACE is ignored, but a word boundary: :data:`_BREAK`.)
_FORMAT_KEPT: Final = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd")


def _kana_letter(ch: str) -> bool:
    """Whether ``ch`` is a kana letter to Chromium's kana check (Blink's ``IsKanaLetter``: hiragana and katakana
    letters, the small katakana extension, half-width katakana but the prolonged sound mark)."""
    o = ord(ch)
    return 0x3041 <= o <= 0x3096 or 0x30A1 <= o <= 0x30FA or 0x31F0 <= o <= 0x31FF or (0xFF66 <= o <= 0xFF9D
                                                                                      and o != 0xFF70)


def _orphan_marks(text: str) -> frozenset[int]:
    """Where ``text`` holds a combining kana voicing mark (U+3099, U+309A) that follows no kana letter (nor a mark
    that does): ignored as any combining mark is at the primary level. Chromium tells the marks apart only after a
    kana letter (its kana check, after ICU's primary comparison, which ignores them): it finds ``text=%E3%82%99き``
    (U+3099, ``き``) as ``き``, and ``a`` U+3099 ``b`` as ``ab``."""
    found: list[int] = []
    for run in _MARK_RUN.finditer(text):
        if not run.start() or not _kana_letter(text[run.start() - 1]):
            found.extend(range(run.start(), run.end()))
    return frozenset(found)


_MARK_RUN: Final = re.compile("[\u3099\u309a]+")


def _unmarked(text: str) -> str:
    return "".join(c for c in text if not unicodedata.combining(c) or c in _KEPT_MARKS)


#: What the folded text holds of Unicode's White_Space: a space (for every space separator), the controls that are
#: white space (a CR LF of a text's line end, a tab, a line break kept in ``pre``), and the line and paragraph
#: separators.
_WHITE_SPACE: Final = frozenset(" \t\n\v\f\r\x85\u2028\u2029")


def _variation_selector(ch: str) -> bool:
    o = ord(ch)
    return 0xFE00 <= o <= 0xFE0F or 0xE0100 <= o <= 0xE01EF


@functools.lru_cache(maxsize=1 << 16)
def _fold_char(ch: str) -> str:
    """``ch`` at UTS #10's primary level: its compatibility decomposition (``ﬁ``, ``Ａ``, ``½``, half-width kana)
    without combining marks, a decimal digit as its ASCII digit, case-folded, :data:`_PRIMARY` applied; a format
    character (SOFT HYPHEN, joiners, bidi marks) folds to nothing."""
    category = unicodedata.category(ch)
    if category == "Cs":  # a lone surrogate (no UTF-8 text holds one) is a replacement character, never a separator
        return "\ufffd"
    if category == "Zs":  # U+00A0, U+2003, U+3000 …: a space at the primary level (TAB, LF, CR, FF are not)
        return " "
    if category == "Cc" and ch not in _WHITE_SPACE:  # a control is ignorable to UTS #10 (DUCET), but TAB … NEL
        return ""
    if _variation_selector(ch):  # ignorable too, though no combining mark (Chromium 150 finds "I ❤ NY" in "I ❤️ NY")
        return ""
    if category == "Cf" and ch not in _FORMAT_KEPT:
        return ""
    digit = unicodedata.decimal(ch, None)
    if digit is not None:
        return str(digit)
    decomposed = unicodedata.normalize("NFKD", ch)
    if " " in decomposed:  # a spacing accent (¨ is a space and U+0308): its own character, as in Chromium
        decomposed = unicodedata.normalize("NFD", ch)
    return _unmarked(_unmarked(decomposed).casefold()).translate(_PRIMARY)


class _FoldTable(dict[int, str]):
    """``str.translate``'s table of each non-ASCII character's folding, made as characters are met (bounded:
    emptied past 65,536 characters)."""

    def __missing__(self, code: int) -> str:
        if len(self) > 1 << 16:
            self.clear()
            _with_ascii()
        folded = self[code] = _fold_char(chr(code))
        return folded


class _MarkTable(dict[int, str]):
    """``str.translate``'s table marking each character that does not fold to exactly one character, or folds to
    one that :func:`_is_word` reads otherwise (``²`` to ``2``, NARROW NO-BREAK SPACE to a space) (``\x01``; else
    ``\x00``), made as characters are met (bounded as :class:`_FoldTable`)."""

    def __missing__(self, code: int) -> str:
        if len(self) > 1 << 16:
            self.clear()
            _with_ascii()
        ch = chr(code)
        folded = _fold_char(ch)
        # read as itself where its folding is of another kind to the word rules: a number but a digit (²) folds to a
        # digit, NARROW NO-BREAK SPACE (ExtendNumLet) to a space; a symbol that folds to a letter (Ⓐ) is Alphabetic,
        # as the letter
        regular = len(folded) == 1 and ch != "\u202f" and (unicodedata.category(ch) != "No" or not _is_word(folded))
        mark = self[code] = "\x00" if regular else "\x01"
        return mark


_FOLDS: Final = _FoldTable()
_MARKS: Final = _MarkTable()


def _with_ascii() -> None:
    """ASCII in the tables as :data:`_ASCII_FOLD` folds it (letters to lower case, the rest as it is), each to one
    character, but the controls that are not white space (ignored: :func:`_fold_char`); kept when a table is
    emptied."""
    for code in range(128):
        ch = chr(code)
        ignored = unicodedata.category(ch) == "Cc" and ch not in _WHITE_SPACE
        dict.__setitem__(_FOLDS, code, "" if ignored else ch.translate(_ASCII_FOLD))
        dict.__setitem__(_MARKS, code, "\x01" if ignored else "\x00")


_with_ascii()
#: ZERO WIDTH SPACE: ignored in a comparison, and yet a word boundary (Chromium 150 finds ``zero``, ``width`` and
#: ``zerowidth`` in ``zero`` U+200B ``width``).
_BREAK: Final = "\u200b"
#: What the comparison ignores and yet parts two words: ZERO WIDTH SPACE, and the controls that are not white space
#: but NUL (Chromium 150 finds ``ab`` and ``abcd`` in ``ab`` U+0001 ``cd``; an HTML parser drops a NUL from the text).
_BREAKS: Final = frozenset({_BREAK, *(chr(c) for c in (*range(1, 9), *range(14, 32), *range(127, 133), *range(134, 160)))})
_IRREGULAR_RUN: Final = re.compile("\x01+")
#: The most characters whose folding changes their length (``ß`` → ``ss``) a text may hold for a text directive
#: to be matched in it: each is a run of its own in the map back to the text (some 30 octets), made at about
#: two million a second.
MAX_IRREGULAR: Final = 4_000_000


def fold(text: str) -> str:
    """``text`` folded for comparison: what two strings equal at UTS #10's primary level share."""
    return _Runs().add(text, 0).text()


class _Runs:
    """Folded text being built, and where its characters come from: runs, each one for one or one character whole.

    Run ``k`` covers folded ``[f[k], f[k+1])`` and source ``[p[k], p[k+1])``:
    one for one where the two lengths agree, else one source character
    whose folding is longer or shorter (``ß`` → ``ss``, a lone mark → nothing).
    """

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.f = array.array("q")
        self.p = array.array("q")
        #: Whether run ``k`` is one character folded as a whole (not one for one).
        self.own = array.array("b")
        self.length = 0

    def _run(self, folded: str, source_start: int, linear: bool) -> None:
        if linear and self.f and self._last_linear and self.p[-1] + (self.length - self.f[-1]) == source_start:
            pass  # continues the open one-for-one run
        else:
            self.f.append(self.length)
            self.p.append(source_start)
            self.own.append(not linear)
        self._last_linear = linear
        self.parts.append(folded)
        self.length += len(folded)
        self.source_end = source_start + (len(folded) if linear else 1)

    _last_linear = False
    source_end = 0

    #: When folding must end (``None``: never), and how many characters whose folding changes their length it has
    #: met (each a run of its own).
    deadline: WorkDeadline | None = None
    irregular = 0
    #: Where a ZERO WIDTH SPACE stood in the folded text (folded positions, ascending): word boundaries.
    breaks: array.array[int] | None = None
    #: Where a ZERO WIDTH JOINER stood in the folded text (folded positions, ascending): no word boundary before a
    #: pictograph there (UAX #29's WB3c, an emoji ZWJ sequence).
    joins: array.array[int] | None = None
    #: Where a format character UAX #29 calls Format stood (SOFT HYPHEN, WORD JOINER, bidi marks: folded positions,
    #: ascending): no word ends just before one (WB4), and a match does not take it in as it takes a combining mark.
    formats: array.array[int] | None = None

    def add(self, text: str, at: int) -> _Runs:
        """Fold ``text``, which stands at ``at`` of the source: each stretch of characters that fold to one
        character in one ``translate`` (ASCII as :data:`_ASCII_FOLD` says), each other character as a run of its
        own."""
        done = 0
        marked = text.translate(_MARKS)
        orphans = _orphan_marks(text) if "\u3099" in text or "\u309a" in text else frozenset()
        if orphans:  # each its own run, folded to nothing
            cut = bytearray(marked, "latin-1")
            for i in orphans:
                cut[i] = 1
            marked = cut.decode("latin-1")
        for found in _IRREGULAR_RUN.finditer(marked):
            if found.start() > done:
                self._run(text[done:found.start()].translate(_FOLDS), at + done, True)
            self.irregular += found.end() - found.start()
            if self.irregular > MAX_IRREGULAR:  # said before they are folded
                raise LimitError(
                    f"the text holds more than {MAX_IRREGULAR:,} characters whose folding changes their length"
                    f" (ß, ligatures, lone marks), the most a text directive is matched over"
                )
            for i in range(found.start(), found.end()):
                if text[i] in _BREAKS:
                    if self.breaks is None:
                        self.breaks = array.array("q")
                    self.breaks.append(self.length)
                elif text[i] == "\u200d":
                    if self.joins is None:
                        self.joins = array.array("q")
                    self.joins.append(self.length)
                elif text[i] not in "\u200c\u200d" and unicodedata.category(text[i]) == "Cf":
                    if self.formats is None:
                        self.formats = array.array("q")
                    self.formats.append(self.length)
                self._run("" if i in orphans else _fold_char(text[i]), at + i, False)
                self._last_linear = False
                if not i & 0xFFFF and self.deadline is not None and self.deadline.passed():
                    raise LimitError(f"folding the text for the text directive took {self.deadline.words()}")
            done = found.end()
        if done < len(text):
            self._run(text[done:].translate(_FOLDS), at + done, True)
        if self.deadline is not None and self.deadline.passed():
            raise LimitError(f"folding the text for the text directive took {self.deadline.words()}")
        return self

    def separator(self, at: int) -> None:
        """A block boundary: it stands for the page text's line break at ``at``, between two blocks."""
        self._run(_SEPARATOR, at, True)

    def text(self) -> str:
        return "".join(self.parts)

    def whole(self, i: int) -> tuple[int, int, int] | None:
        """Where folded character ``i`` comes from when its character is folded as a whole (``™`` → ``tm``, ``²`` →
        ``2``): ``(folded start, folded end, source position)`` of that character; ``None`` for one folded one for
        one."""
        k = bisect.bisect_right(self.f, i) - 1
        if not self.own[k]:
            return None
        return self.f[k], self.f[k + 1] if k + 1 < len(self.f) else self.length, self.p[k]

    def folded_at(self, position: int) -> int:
        """The folded position of source position ``position`` (the start of its character's folding)."""
        k = bisect.bisect_right(self.p, position) - 1
        if k < 0:
            return 0
        return self.f[k] if self.own[k] else self.f[k] + (position - self.p[k])

    def source_of(self, i: int) -> int:
        """The source position of folded character ``i``."""
        k = bisect.bisect_right(self.f, i) - 1
        f1 = self.f[k + 1] if k + 1 < len(self.f) else self.length
        p1 = self.p[k + 1] if k + 1 < len(self.p) else self.source_end
        if f1 - self.f[k] != p1 - self.p[k]:
            return self.p[k]  # one character folded to several (or none)
        return self.p[k] + (i - self.f[k])


# --- word boundaries (§3.6.2, UAX #29) -------------------------------------------------------

# ICU's tailoring, as Chromium applies it (checked in Chromium 150): no colon is MidLetter, and FULL STOP joins digits
# only (``3.5``), not letters (``www.example.com`` is three words, ``e.g`` two).
_MID_LETTER: Final = frozenset("'\u00b7\u2019\u2018\u0387\u05f4\u2027\ufe13")
_MID_NUM: Final = frozenset(",;.'\u066c\ufe50\ufe54\uff0c\uff1b\u2019")


def _is_word(ch: str) -> bool:
    """A letter, a digit (not another number: ``²``, ``½``, ``①`` are Word_Break Other to UAX #29), a mark, or
    what UAX #29 calls ExtendNumLet, which joins the word characters on either side (WB13a, WB13b): connector
    punctuation (``_``, ``‿``, ``⁀``, ``＿``) and NARROW NO-BREAK SPACE (``10 000``; ``Salut !`` holds no word
    ``Salut`` either, as Chromium reads it)."""
    category = unicodedata.category(ch)
    return category[0] == "M" or category == "Pc" or ch == "\u202f" or (ch.isalnum() and category != "No")


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


#: The spacing kana voicing marks (゛, ゜): Chromium 150 finds no ``か``, ``゛`` or ``き`` in ``か゛き`` or ``漢゛字`` alone,
#: only the whole (ICU's dictionary reads them with the kana and Han characters beside them), and finds ``a``, ``゛``
#: and ``b`` in ``a゛b``.
_SPACING_MARKS: Final = frozenset("\u309b\u309c")


def _ideographic(ch: str) -> bool:
    o = ord(ch)
    return 0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x3FFFF


def is_word_boundary(text: str, position: int) -> bool:
    """Whether ``position`` of ``text`` is at a word boundary (the module docstring says how)."""
    if position <= 0 or position >= len(text):
        return True
    before, after = text[position - 1], text[position]
    if 0x1F3FB <= ord(after) <= 0x1F3FF and before not in _WHITE_SPACE and before != _SEPARATOR:
        return False  # WB4: an emoji modifier (Extend) is part of what it follows
    if 0x1F3FB <= ord(before) <= 0x1F3FF:  # WB4: and what follows it is read as following that (ab🏽cd is one word)
        k = position - 1
        while k > 0 and position - k < 16 and 0x1F3FB <= ord(text[k]) <= 0x1F3FF:
            k -= 1
        if k < position - 1 and text[k] not in _WHITE_SPACE and text[k] != _SEPARATOR \
                and not 0x1F3FB <= ord(text[k]) <= 0x1F3FF:
            window = text[max(k - 1, 0) : k + 1] + text[position : position + 2]
            return is_word_boundary(window, k + 1 - max(k - 1, 0))
    if _regional(before) and _regional(after):  # WB15, WB16: flags are pairs of regional indicators
        run = 1
        while run < 64 and position - run - 1 >= 0 and _regional(text[position - run - 1]):
            run += 1
        return run % 2 == 0
    if (before in _SPACING_MARKS and _ideographic(after)) or (after in _SPACING_MARKS and _ideographic(before)):
        return False  # a spacing voicing mark is one with the kana or Han character beside it (Chromium 150)
    if _ideographic(before) or _ideographic(after):
        return True
    if _is_word(before) and _is_word(after):
        return False
    left = text[position - 2] if position >= 2 else ""
    right = text[position + 1] if position + 1 < len(text) else ""
    if before in _MID_LETTER and left.isalpha() and after.isalpha():
        return False  # WB7: letter (MidLetter) × letter
    if after in _MID_LETTER and before.isalpha() and right.isalpha():
        return False  # WB6
    if before in _MID_NUM and left.isdigit() and after.isdigit():
        return False  # WB11
    return not (after in _MID_NUM and before.isdigit() and right.isdigit())  # WB12


# --- matching (§3.6.1) ----------------------------------------------------------------------


def _node_starts(page: PageText) -> list[int]:
    """Where in ``page.text`` a text node of the page starts right after another's text: what stands between them in
    the source is markup (a tag, a comment, a hidden element), not text. Chromium 150 reads each text node's ends as
    word boundaries (it finds ``hazel`` and ``ivory`` in ``hazel<b>ivory</b>`` and in ``hazel<!-- -->ivory``, and
    ``hazelivory`` too)."""
    found: list[int] = []
    last = -1
    for t, s, e in page.map.runs:
        if s == e:  # stands for nothing in the source (the line between two blocks, a ruby's ZERO WIDTH SPACE)
            continue
        if last >= 0 and s != last and t not in page.glued:
            found.append(t)
        last = e
    return found


class _Folded:
    """The page text folded, blocks joined by a separator no term holds, with the map back to the page text."""

    def __init__(self, page: PageText, deadline: WorkDeadline | None = None) -> None:
        runs = _Runs()
        runs.deadline = deadline
        for k, (a, b) in enumerate(page.blocks):
            if k:
                runs.separator(page.blocks[k - 1][1])
            runs.add(page.text[a:b], a)
        if page.kind != "text":  # where one text node of the page ends and the next begins: a word boundary
            starts = {runs.folded_at(t) for t in _node_starts(page)}
            if starts:
                runs.breaks = array.array("q", sorted(starts.union(runs.breaks or ())))
        self.text = runs.text()
        self.runs = runs
        self.page = page
        # a browser shows a plain text in a pre whose text node holds a line feed for each CRLF (the HTML parser's
        # newline normalization): on a CRLF-canonical text, a term's LF is the text's CRLF, and a term's CR is
        # nowhere (Chromium 150 finds text=a%0Ab on the text "a" CRLF "b", and not text=a%0D%0Ab)
        text = page.text
        self.crlf = page.kind == "text" and text.count("\r") == text.count("\n") == text.count("\r\n")

    def term(self, term: str | None) -> str | None:
        """A directive's term folded as the text is (``""``: a term found nowhere)."""
        if term is None:
            return None
        folded = fold(term)
        if not self.crlf:
            return folded
        return "" if "\r" in folded else folded.replace("\n", "\r\n")

    def page_range(self, start: int, end: int) -> tuple[int, int]:
        """The page-text range of folded ``[start, end)`` (``start < end``).

        The combining marks that follow the last character (folded to nothing) are its own: the range holds
        them, as a browser highlights ``e`` + U+0301 whole for ``text=e``.
        """
        last = self.runs.source_of(end - 1) + 1
        text = self.page.text
        while last < len(text) and not _fold_char(text[last]) and (
                unicodedata.combining(text[last]) or _variation_selector(text[last]) or text[last] == "\u200d"):
            last += 1
        return self.runs.source_of(start), last


def find_text_directive(
    directive: TextDirective, page: PageText, *, folded: object = None, deadline: WorkDeadline | None = None
) -> tuple[int, int] | None:
    """The first stretch of ``page.text`` the directive selects, as ``(start, end)``; ``None`` if it is not there.

    §3.6.1 "find a range from a text directive", step by step, over the
    folded page text (``folded``: the folding :func:`find_all` makes once, to share
    among several directives). ``deadline`` (default: :data:`MAX_SECONDS` of processor time from now)
    bounds the folding and the search: past it, a :class:`LimitError`.
    """
    deadline = deadline if deadline is not None else WorkDeadline(MAX_SECONDS)
    buf = folded if isinstance(folded, _Folded) else _Folded(page, deadline)
    terms = buf.term(directive.start), buf.term(directive.end), buf.term(directive.prefix), buf.term(directive.suffix)
    found = _find_range(terms, buf.text, deadline, _Bounds(buf))
    return None if found is None else buf.page_range(*found)


def _find_range(
    terms: tuple[str | None, str | None, str | None, str | None], buf: str, deadline: WorkDeadline,
    bounds: _Bounds | None = None,
) -> tuple[int, int] | None:
    """The folded ``(start, end, prefix, suffix)`` terms' first match in the folded ``buf``, as ``(start, end)``."""
    start_q, end_q, prefix_q, suffix_q = terms
    assert start_q is not None
    if any(q is not None and (not q or q not in buf) for q in (start_q, end_q, prefix_q, suffix_q)):
        return None  # a term found nowhere: no stretch holds them all, however often the others are found
    n = len(buf)
    search = 0
    while search < n:
        if prefix_q is not None:
            prefix = _find(prefix_q, buf, search, True, False, False, deadline, bounds)
            if prefix is None:
                return None
            search = prefix[0] + 1
            at = _skip_space(buf, prefix[1])
            if at >= n:
                return None
            must_end = end_q is not None or suffix_q is None
            match = _find(start_q, buf, at, False, must_end, True, deadline, bounds)
            if match is None or (bounds is not None and not bounds.adjacent(prefix[1], match[0])):
                continue
        else:
            must_end = end_q is not None or suffix_q is None
            match = _find(start_q, buf, search, True, must_end, False, deadline, bounds)
            if match is None:
                return None
            search = match[0] + 1
        first, last = match
        end_search = last
        # the document's end lies after the last character's: an end search at n finds nothing
        while end_search <= n:
            if end_q is not None:
                end_match = _find(end_q, buf, end_search, True, suffix_q is None, False, deadline, bounds)
                if end_match is None:
                    return None
                last = end_match[1]
            if suffix_q is None:
                return first, last
            suffix = _find(suffix_q, buf, _skip_space(buf, last), False, True, True, deadline, bounds)
            if suffix is not None and (bounds is None or bounds.adjacent(last, suffix[0])):
                return first, last
            if end_q is None:
                break
            end_search = last
        else:
            return None
    return None


def _skip_space(buf: str, at: int) -> int:
    """§3.6.1 "advance range start to next non-whitespace position": past spaces and block boundaries."""
    n = len(buf)
    while at < n and (buf[at] in _WHITE_SPACE or buf[at] == _SEPARATOR):
        at += 1
    return at


def _find(
    query: str, buf: str, start: int, word_start: bool, word_end: bool, at_beginning: bool, deadline: WorkDeadline,
    bounds: _Bounds | None = None,
) -> tuple[int, int] | None:
    """§3.6.1 "find a string in range": the first ``query`` at or after ``start`` within one block, bounded as asked."""
    if not query or _SEPARATOR in query:
        return None
    at = start
    while True:
        if deadline.tick():  # every 16th try of a term reads the clocks
            raise LimitError(f"matching the text directive took {deadline.words()}: make it more specific")
        if at_beginning:
            index = at if buf.startswith(query, at) else -1
        else:
            index = buf.find(query, at)
        if index < 0:
            return None
        stop = index + len(query)
        if (not word_start or _bounded(buf, index, bounds)) and (not word_end or _ends_word(buf, stop, bounds)) \
                and not (stop < len(buf) and buf[stop] in _KEPT_MARKS):  # か is not the start of が
            return index, stop
        if at_beginning:
            return None
        at = index + 1


class _Bounds:
    """What word boundaries in the folded text are read from besides it: the page text and the map back to it."""

    def __init__(self, folded: _Folded) -> None:
        self.runs = folded.runs
        self.source = folded.page.text
        self.map = folded.page.map.runs

    def adjacent(self, end: int, start: int) -> bool:
        """Whether only white space stands between a match that ends at folded ``end`` and the next that starts at
        folded ``start``: no character the comparison ignores (SOFT HYPHEN, ZERO WIDTH SPACE, WORD JOINER …), which
        §3.6.1's "advance range start to next non-whitespace position" does not step over and a match never starts
        with (Chromium 150 finds no ``text=ab-,cd`` in ``ab`` U+00AD ``cd``). A combining mark or a ZERO WIDTH JOINER
        just after the first match's last character is part of it, and what stands for nothing in the source (the
        ZERO WIDTH SPACE between a ruby base and its annotation) is not there to a browser."""
        runs = self.runs
        if not runs.irregular:  # no character folded to nothing
            return True
        f, k = runs.f, bisect.bisect_left(runs.f, end)
        extending = True
        while k < len(f) and f[k] <= start:
            if runs.own[k] and (f[k + 1] if k + 1 < len(f) else runs.length) == f[k]:  # one folded to nothing
                at = runs.p[k]
                ch = self.source[at]
                # a mark extends the match's last character only just after it (f[k] == end), not after a space
                if not (extending and f[k] == end and (unicodedata.combining(ch) or ch == "\u200d")) \
                        and not self._nothing(at):
                    return False
            else:
                extending = False
            k += 1
        return True

    def _nothing(self, at: int) -> bool:
        """Whether page character ``at`` stands for nothing in the source (a ruby's ZERO WIDTH SPACE)."""
        k = bisect.bisect_right(self.map, at, key=lambda run: run[0]) - 1
        return k >= 0 and self.map[k][1] == self.map[k][2]

    def char(self, buf: str, i: int) -> str:
        """The character folded ``i`` stands for to the boundary rules: itself, or the page's character it is part
        of when that folds to several (``™``, not the ``t`` or ``m`` of its folding)."""
        if i < 0 or i >= len(buf):
            return ""
        whole = self.runs.whole(i)
        return buf[i] if whole is None else self.source[whole[2]]

    def broken(self, i: int) -> bool:
        """Whether a ZERO WIDTH SPACE stood just before folded ``i`` (it folds to nothing)."""
        return _holds(self.runs.breaks, i)

    def before_format(self, i: int) -> bool:
        """Whether a format character (UAX #29's Format) stood just before folded ``i`` (it folds to nothing)."""
        return _holds(self.runs.formats, i)

    def joined(self, i: int) -> bool:
        """Whether a ZERO WIDTH JOINER stood just before folded ``i`` (it folds to nothing)."""
        return _holds(self.runs.joins, i)


def _holds(positions: array.array[int] | None, i: int) -> bool:
    if not positions:
        return False
    k = bisect.bisect_left(positions, i)
    return k < len(positions) and positions[k] == i


def _pictographic(ch: str) -> bool:
    """Whether ``ch`` is an emoji's pictograph (UAX #29's Extended_Pictographic, as far as its blocks say)."""
    o = ord(ch)
    return 0x1F000 <= o <= 0x1FAFF or 0x2600 <= o <= 0x27BF or 0x2300 <= o <= 0x23FF or 0x2B00 <= o <= 0x2BFF \
        or ch in "\u00a9\u00ae\u203c\u2049\u2122\u2139"


def _ends_word(buf: str, stop: int, bounds: _Bounds | None) -> bool:
    """Whether a match ending at folded ``stop`` ends at a word boundary: as :func:`_bounded` says, but never just
    before a format character (SOFT HYPHEN, WORD JOINER, LEFT-TO-RIGHT MARK …), which UAX #29 joins to what precedes
    it (WB4) and a match does not take in (Chromium 150 finds no ``text=ab`` in ``ab`` U+00AD, then a space)."""
    if bounds is not None and stop > 0 and bounds.before_format(stop) and not bounds.broken(stop):
        return False
    return _bounded(buf, stop, bounds)


def _bounded(buf: str, position: int, bounds: _Bounds | None) -> bool:
    """Whether ``position`` of the folded ``buf`` is a word boundary: by UAX #29, or where a ZERO WIDTH SPACE stood.

    A boundary lies between two characters of the page, never inside one's folding (``ß`` → ``ss``, ``½`` →
    ``1⁄2``), and a character folded as a whole is read as itself: ``™`` is a symbol, so ``Apple™`` ends a word
    after ``Apple``, where its folding ``appletm`` does not; ``²`` is no digit, so ``x²`` does too."""
    if bounds is not None and bounds.broken(position):
        return True
    if bounds is not None and 0 < position < len(buf) and _pictographic(buf[position]) and bounds.joined(position):
        return False  # WB3c: ZWJ × pictograph, and WB4: nothing parts what precedes from the ZWJ
    if bounds is None or not bounds.runs.irregular or position <= 0 or position >= len(buf):
        return is_word_boundary(buf, position)
    # the characters either side, and the next ones out (a MidLetter's letters): the page's, as the rules read them
    before, after = bounds.runs.whole(position - 1), bounds.runs.whole(position)
    if before is not None and before[1] > position:
        return False  # inside one character's folding
    # a ZERO WIDTH SPACE there is a character to the rules (Word_Break Other), though the folding has none
    first = position - 1 if before is None else before[0]
    left = _BREAK if bounds.broken(first) else bounds.char(buf, first - 1)
    last = position + 1 if after is None else after[1]
    right = _BREAK if bounds.broken(last) else bounds.char(buf, last)
    window = left + bounds.char(buf, position - 1) + bounds.char(buf, position) + right
    return is_word_boundary(window, len(left) + 1)


def find_all(directives: Sequence[TextDirective], page: PageText) -> list[tuple[int, int] | None]:
    """Each directive's stretch of the page text (``None`` where it is not there): one folding, one deadline for all."""
    deadline = WorkDeadline(MAX_SECONDS)  # the folding's time counts
    buf = _Folded(page, deadline)
    return [find_text_directive(d, page, folded=buf, deadline=deadline) for d in directives]
