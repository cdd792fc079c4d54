"""draft-wilde-text-fragment-00 (2002): ``char(n)``, ``line(a,b)``, ``match(regex)`` and their unions.

The first draft of what became RFC 5147, implemented as written:

* §3 syntax (RFC 2234 ABNF, so the scheme names are case-insensitive)::

    text-fragment = 1*text-scheme
    text-scheme   = ( char-scheme / line-scheme / match-scheme )
    char-scheme   = "char(" ( count / range ) ")"
    line-scheme   = "line(" ( count / range ) ")"
    match-scheme  = "match(" regex ")"
    count         = 1*DIGIT
    range         = count "," count
    regex         = StringWithBalancedParens

  §3 names ``regex-scheme`` in one rule and defines ``match-scheme`` in the
  next: the same thing (``docs/specs/README.md``). The fragment is
  percent-decoded (UTF-8) first, as §4's last example does; then in the
  regex ``^(``, ``^)`` and ``^^`` stand for ``(``, ``)`` and ``^``, any
  other ``^`` is a syntax error, and unescaped parentheses must balance.
* §2.1: counts start at 1 and ranges are closed: ``char(3,5)`` is the third
  to the fifth character, ``line(10,20)`` lines 10 to 20 with their line
  endings.
* §2.1.3: "Lines in text/plain resources are separated by CRLF sequences
  [...] If a resource does not contain any CRLF sequences, then it consists
  of a single (the first) line." Only CR+LF ends a line: a bare LF, a bare
  CR or a NEL is a character inside a line. A line includes its CR+LF, and a
  final CR+LF does not open an empty last line (as the project reads RFC
  5147, ``docs/specs/README.md``). On CRLF-canonical text (the archive's
  stored form) every line ending is a CR+LF, so the lines are those of the
  text as deposited.
* Characters are counted as RFC 5147 counts them (a CR+LF, like every other
  line ending, is one character), so ``char`` and ``line`` ranges are
  reported in the same RFC 5147 characters as :mod:`.rfc5147`'s.
* §3: a count past the end identifies the last character or line
  (``clamped``); a range whose first count is *greater* than the second is
  ignored (the parenthesis "ie, the first number is less than the second" is
  inverted, as in RFC 5147 §4.4); a count of 0, which names nothing since
  counting starts at 1, is ignored the same way. Equal counts are one
  character or line.
* §2.1.5/§4: ``match(re)`` identifies every occurrence of the POSIX BRE
  ``re`` (non-overlapping, leftmost-longest, searched left to right over
  the whole text) — run by RE2 in linear time, see :mod:`.bre`. A match
  edge between the two code points of a CR+LF is widened to the whole line
  ending. An empty match (``a*`` where there is no ``a``) identifies no
  character and is left out.
* §2.1.6: several schemes mean the union of what they identify, which may be
  disjoint; overlapping or touching ranges are merged.

Selections are reported as 0-based, half-open RFC 5147 character ranges.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from pdi.errors import LimitError, ParseError
from pdi.fragments.results import Range
from pdi.fragments.text.bre import compile_bre
from pdi.fragments.text.index import Buffer, TextIndex
from pdi.fragments.text.rfc5147 import OnError, TextSelection, count_of, parsed_or_not_interpreted

MAX_MATCHES: Final = 100_000
_HEXDIGITS: Final = frozenset("0123456789abcdefABCDEF")


@dataclass(frozen=True)
class WildePart:
    """One scheme of a wilde fragment: ``char``/``line`` with 1-based closed counts, or ``match`` with a BRE."""

    scheme: Literal["char", "line", "match"]
    start: int = 0
    end: int = 0
    is_range: bool = False
    regex: str = ""  # the BRE, unescaped (for match)

    def __str__(self) -> str:
        if self.scheme == "match":
            escaped = self.regex.replace("^", "^^").replace("(", "^(").replace(")", "^)")
            return f"match({_percent_encode(escaped)})"
        body = f"{self.start},{self.end}" if self.is_range else str(self.start)
        return f"{self.scheme}({body})"


@dataclass(frozen=True)
class WildeFragment:
    """A draft-wilde fragment identifier: one or more schemes, meaning their union."""

    parts: tuple[WildePart, ...]

    @classmethod
    def parse(cls, text: str) -> WildeFragment:
        """Percent-decode then parse the §3 grammar; :class:`ParseError` names rule and offset.

        Offsets are into the percent-decoded text.
        """
        return cls(_parse(_percent_decode(text)))

    def __str__(self) -> str:
        return "".join(str(part) for part in self.parts)


def _percent_decode(text: str) -> str:
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == "%":
            pair = text[i + 1 : i + 3]
            if len(pair) != 2 or not set(pair) <= _HEXDIGITS:
                raise ParseError("'%' must be followed by two hex digits", text=text, offset=i, rule="pct-encoded")
            out.append(int(pair, 16))
            i += 3
        else:
            out.extend(c.encode("utf-8", "surrogatepass"))
            i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(
            "percent-decoded fragment is not UTF-8", text=text, offset=exc.start, rule="pct-encoded"
        ) from None


_SAFE: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?"
)


def _percent_encode(text: str) -> str:
    return "".join(
        c if c in _SAFE else "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in text
    )


def _parse(text: str) -> tuple[WildePart, ...]:
    parts: list[WildePart] = []
    i = 0
    if not text:
        raise ParseError("empty fragment: text-fragment = 1*text-scheme", text=text, offset=0, rule="text-fragment")
    while i < len(text):
        head = text[i : i + 6].lower()
        if head.startswith(("char(", "line(")):
            scheme: Literal["char", "line"] = "char" if head.startswith("char(") else "line"
            i += 5
            start, i = _count(text, i, f"{scheme}-scheme")
            end, is_range = start, False
            if i < len(text) and text[i] == ",":
                end, i = _count(text, i + 1, "range")
                is_range = True
            if i >= len(text) or text[i] != ")":
                raise ParseError(f"expected ')' to close {scheme}(", text=text, offset=i, rule=f"{scheme}-scheme")
            parts.append(WildePart(scheme, start, end, is_range))
            i += 1
        elif head == "match(":
            regex, i = _balanced(text, i + 6)
            if not regex:
                raise ParseError("empty regular expression in match()", text=text, offset=i - 1, rule="regex")
            parts.append(WildePart("match", regex=regex))
        else:
            raise ParseError(
                "expected 'char(', 'line(' or 'match('", text=text, offset=i, rule="text-scheme"
            )
    return tuple(parts)


def _count(text: str, i: int, rule: str) -> tuple[int, int]:
    j = i
    while j < len(text) and text[j] in "0123456789":
        j += 1
    if j == i:
        raise ParseError("expected a count (digits)", text=text, offset=i, rule=rule)
    return count_of(text[i:j], i), j


def _balanced(text: str, i: int) -> tuple[str, int]:
    """Read a StringWithBalancedParens up to its closing ')'; return it unescaped and the offset after ')'."""
    out: list[str] = []
    depth = 0
    while i < len(text):
        c = text[i]
        if c == "^":
            nxt = text[i + 1 : i + 2]
            if nxt not in ("(", ")", "^"):
                raise ParseError(
                    "in match(), '^' must be followed by '(', ')' or '^' (write '^^' for '^')",
                    text=text,
                    offset=i,
                    rule="StringWithBalancedParens",
                )
            out.append(nxt)
            i += 2
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return "".join(out), i + 1
            depth -= 1
        out.append(c)
        i += 1
    raise ParseError("match( is never closed: unbalanced parentheses", text=text, offset=i, rule="StringWithBalancedParens")


def _clamp(index: TextIndex, count: int) -> tuple[int, int, bool]:
    """1-based character count → RFC 5147 positions [count-1, count), clamped to the last character."""
    total = index.char_count
    if count > total:
        return max(total - 1, 0), total, True
    return count - 1, count, False


_CHUNK: Final = 1 << 20


def _after_crlf(index: TextIndex, n: int) -> tuple[int | None, int]:
    """The code point position just after the ``n``-th CR+LF (``n ≥ 1``), and how many were counted.

    ``None`` when the text has fewer than ``n``; then the count is all of them.
    UTF-8 and one-octet charsets are searched in their octets, a chunk at a
    time (a CR+LF is the octets of CR then of LF there, and never part of
    another character); other charsets in the decoded text.
    """
    enc = index.encoding
    if enc.kind not in ("utf-8", "single"):
        text = index.whole_text()
        seen = text.count("\r\n")
        if seen < n:
            return None, seen
        at = -2
        for _ in range(n):
            at = text.find("\r\n", at + 2)
        return at + 2, n
    pattern = enc.cr + enc.lf
    width = len(pattern)
    pos, size, seen = index.bom_length, index.size, 0
    while pos < size:
        end = min(pos + _CHUNK, size)
        block = index.octets(pos, min(end + width - 1, size))  # a pair that starts before `end`
        found = block.count(pattern)
        if seen + found >= n:
            at = -width
            for _ in range(n - seen):
                at = block.find(pattern, at + width)
            return index.octet_to_cp(pos + at + width), n
        seen += found
        pos = end
    return None, seen


def _ends_with_crlf(index: TextIndex) -> bool:
    enc = index.encoding
    if enc.kind not in ("utf-8", "single"):
        return index.whole_text().endswith("\r\n")
    width = len(enc.cr) + len(enc.lf)
    return index.size - index.bom_length >= width and index.octets(index.size - width, index.size) == enc.cr + enc.lf


def _lines(index: TextIndex, first: int, last: int) -> tuple[int, int, bool]:
    """Lines ``first`` to ``last`` (1-based, closed, ``first ≤ last``) as RFC 5147 positions, and whether clamped.

    §2.1.3: lines are separated by CR+LF; §3: a count past the last line is the last line.
    """
    end_cp, crlfs = _after_crlf(index, last)
    clamped = False
    if end_cp is None:  # line `last` is the last line, or past it
        total = crlfs + (0 if crlfs and _ends_with_crlf(index) else 1)
        clamped = last > total
        first = min(first, total)
        end_cp = index.cp_count
    start_cp = 0 if first == 1 else _after_crlf(index, first - 1)[0]
    assert start_cp is not None  # line `first` exists, so does the CR+LF before it
    return index.cp_to_char(start_cp), index.cp_to_char(end_cp), clamped


def evaluate_wilde(
    fragment: WildeFragment | str,
    data: Buffer | TextIndex,
    *,
    charset: str | None = None,
    max_matches: int = MAX_MATCHES,
    on_error: OnError = "raise",
) -> TextSelection:
    """Evaluate a draft-wilde fragment on the octets of a text entity (see the module docstring)."""
    index = data if isinstance(data, TextIndex) else TextIndex(data, charset)
    parsed = parsed_or_not_interpreted(fragment, WildeFragment.parse, index, on_error)
    if isinstance(parsed, TextSelection):
        return parsed
    fragment = parsed
    spans: list[tuple[int, int]] = []  # (start, end) in RFC 5147 characters, or lines to convert
    ignored: list[str] = []
    clamped = False
    for part in fragment.parts:
        if part.scheme == "match":
            spans.extend(_matches(index, part.regex, max_matches))
            continue
        if part.start == 0 or part.end == 0:
            ignored.append(f"{part}: counts start at 1")
            continue
        if part.start > part.end:
            ignored.append(f"{part}: range is not properly ordered")
            continue
        if part.scheme == "char":
            a0, _, c0 = _clamp(index, part.start)
            _, b1, c1 = _clamp(index, part.end)
            clamped = clamped or c0 or c1
            spans.append((a0, b1))
        else:
            a0, b1, c = _lines(index, part.start, part.end)
            clamped = clamped or c
            spans.append((a0, b1))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    ranges: list[Range] = []
    texts: list[str] = []
    datas: list[bytes] = []
    for start, end in merged:
        cp0, _ = index.char_to_cp(start)
        cp1, _ = index.char_to_cp(end)
        b0, b1 = index.cp_to_octet(cp0), index.cp_to_octet(cp1)
        ranges.append(Range(start, end, b0, b1))
        texts.append(index.text(cp0, cp1))  # not the octets' own decoding: a stateful charset's lose their state
        datas.append(index.octets(b0, b1))
    return TextSelection(
        ranges=tuple(ranges),
        text="".join(texts),
        data=b"".join(datas),
        clamped=clamped,
        charset=index.encoding.body,
        ignored=tuple(ignored),
    )


def _matches(index: TextIndex, regex: str, max_matches: int) -> list[tuple[int, int]]:
    compiled = compile_bre(regex)
    text = index.whole_text()
    spans: list[tuple[int, int]] = []
    for n, match in enumerate(compiled.finditer(text)):
        if n >= max_matches:  # empty matches count too: they cost time
            raise LimitError(f"match({regex}) has more than {max_matches} occurrences")
        start, end = match.span()
        if start == end:
            continue
        spans.append((index.cp_to_char(start), index.cp_to_char(end, round_up=True)))
    return spans
