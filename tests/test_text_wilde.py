"""draft-wilde-text-fragment-00: every §4 example, the §3 rules, POSIX BRE on RE2, and slow references."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pdi.errors import LimitError, ParseError, PDIError, UnsupportedError
from pdi.fragments.text import WildeFragment, WildePart, bre_to_re2, evaluate_wilde, to_crlf

LINES = "".join(f"line {i} text\r\n" for i in range(1, 31))  # 30 lines (§2.1.3: CRLF separates lines)


def _spans(text: str, fragment: str) -> list[str]:
    sel = evaluate_wilde(fragment, text.encode(), charset="utf-8")
    chars = text  # these texts have no two-code-point line endings
    return [chars[r.start : r.end] for r in sel.ranges]


# --------------------------------------------------------------------------- §4 examples


def test_wilde_4_example_char_100() -> None:
    # "identifies the 100th character": counting starts with 1 (§2.1.1)
    text = "".join(chr(ord("A") + i % 26) for i in range(150))
    sel = evaluate_wilde("char(100)", text.encode(), charset="utf-8")
    assert sel.text == text[99]
    assert (sel.ranges[0].start, sel.ranges[0].end) == (99, 100)
    # §3: a count past the end identifies the last character
    short = evaluate_wilde("char(100)", b"abc", charset="us-ascii")
    assert short.text == "c"
    assert short.clamped


def test_wilde_4_example_line_10_20() -> None:
    # "identifies lines 10 to 20"
    sel = evaluate_wilde("line(10,20)", LINES.encode(), charset="utf-8")
    assert sel.text == "".join(f"line {i} text\r\n" for i in range(10, 21))
    assert not sel.clamped


def test_wilde_4_example_line_10_20_fewer_than_10_lines() -> None:
    # "If the resource has fewer than 10 lines, it identifies the last line."
    text = "".join(f"line {i} text\r\n" for i in range(1, 6))
    sel = evaluate_wilde("line(10,20)", text.encode(), charset="utf-8")
    assert sel.text == "line 5 text\r\n"
    assert sel.clamped


def test_wilde_4_example_line_10_20_between_10_and_20_lines() -> None:
    # "less than 20 but at least 10 lines, it identifies the lines 10 to the last line"
    text = "".join(f"line {i} text\r\n" for i in range(1, 16))
    sel = evaluate_wilde("line(10,20)", text.encode(), charset="utf-8")
    assert sel.text == "".join(f"line {i} text\r\n" for i in range(10, 16))
    assert sel.clamped


def test_wilde_4_example_match_searchterm() -> None:
    # "identifies all occurrences of ... 'searchterm'"; several occurrences: a disjoint fragment
    text = "a searchterm b\nsearchterm\nno\nxsearchtermsearchterm"
    sel = evaluate_wilde("match(searchterm)", text.encode(), charset="utf-8")
    assert [(r.start, r.end) for r in sel.ranges] == [(2, 12), (15, 25), (30, 50)]
    # the last two occurrences touch and are merged (a union of characters)
    assert sel.text == "searchterm" * 4


def test_wilde_4_example_line_1_and_match() -> None:
    # "identifies the first line and all occurrences of ... 'searchterm'"
    text = "first searchterm line\r\nsecond\r\nthird searchterm\r\n"
    sel = evaluate_wilde("line(1)match(searchterm)", text.encode(), charset="utf-8")
    # RFC 5147 characters: each CRLF is one, so line 1 is characters [0, 22)
    assert [(r.start, r.end) for r in sel.ranges] == [(0, 22), (35, 45)]
    assert sel.text == "first searchterm line\r\nsearchterm"


def test_wilde_4_example_match_escaped_parenthesis() -> None:
    # match(hello%5E() -> URL-decoded 'hello^(' -> regular expression 'hello('
    frag = WildeFragment.parse("match(hello%5E()")
    assert frag.parts == (WildePart("match", regex="hello("),)
    text = "say hello( and hello( again, not hello)"
    assert _spans(text, "match(hello%5E()") == ["hello(", "hello("]


# --------------------------------------------------------------------------- §3 syntax and rules


def test_wilde_3_syntax_forms() -> None:
    frag = WildeFragment.parse("char(5)line(2,3)match(a^)b)CHAR(7)")
    assert frag.parts == (
        WildePart("char", 5, 5, False),
        WildePart("line", 2, 3, True),
        WildePart("match", regex="a)b"),
        WildePart("char", 7, 7, False),  # RFC 2234 literals are case-insensitive
    )
    assert str(frag) == "char(5)line(2,3)match(a%5E)b)char(7)"
    assert WildeFragment.parse(str(frag)) == frag


def test_wilde_3_caret_escapes() -> None:
    # ^( ^) ^^ are unescaped before the string is read as a BRE
    assert WildeFragment.parse("match(^^a^(b^))").parts[0].regex == "^a(b)"
    # balanced parentheses need no escape
    assert WildeFragment.parse("match(f(x))").parts[0].regex == "f(x)"


@pytest.mark.parametrize(
    ("text", "offset", "rule"),
    [
        ("", 0, "text-fragment"),
        ("chars(1)", 0, "text-scheme"),
        ("char()", 5, "char-scheme"),
        ("char(1,)", 7, "range"),
        ("char(1", 6, "char-scheme"),
        ("line(1,2,3)", 8, "line-scheme"),
        ("match(abc", 9, "StringWithBalancedParens"),
        ("match(a^b)", 7, "StringWithBalancedParens"),
        ("match()", 6, "regex"),
        ("char(1) ", 7, "text-scheme"),
        ("match(a%zz)", 7, "pct-encoded"),
    ],
)
def test_wilde_3_syntax_errors(text: str, offset: int, rule: str) -> None:
    with pytest.raises(ParseError) as info:
        WildeFragment.parse(text)
    assert info.value.rule == rule
    assert info.value.offset == offset


def test_wilde_3_improperly_ordered_range_part_is_ignored() -> None:
    # "this scheme part has to be ignored" (the parenthesis of §3 is inverted, as in RFC 5147)
    sel = evaluate_wilde("line(3,2)line(1)", b"a\r\nb\r\nc\r\n", charset="us-ascii")
    assert sel.text == "a\r\n"
    assert sel.ignored == ("line(3,2): range is not properly ordered",)


def test_wilde_2_1_counts_start_at_1() -> None:
    sel = evaluate_wilde("char(0)", b"abc", charset="us-ascii")
    assert sel.ranges == ()
    assert sel.ignored == ("char(0): counts start at 1",)
    assert evaluate_wilde("char(1,1)", b"abc", charset="us-ascii").text == "a"
    assert evaluate_wilde("char(2,3)", b"abc", charset="us-ascii").text == "bc"


def test_wilde_2_1_3_only_crlf_separates_lines() -> None:
    # "Lines in text/plain resources are separated by CRLF sequences"
    text = "one\r\ntwo\rthree\x85four\nfive\r\nsix"
    assert evaluate_wilde("line(2)", text.encode(), charset="utf-8").text == "two\rthree\x85four\nfive\r\n"
    sel = evaluate_wilde("line(3,9)", text.encode(), charset="utf-8")
    assert (sel.text, sel.clamped) == ("six", True)  # three lines: a count past them is the last line
    # a CRLF is one character (RFC 5147's count): the 4th character is the line ending of line 1
    assert evaluate_wilde("char(4)", text.encode(), charset="utf-8").text == "\r\n"


def test_wilde_2_1_3_no_crlf_is_one_line() -> None:
    # "If a resource does not contain any CRLF sequences, then it consists of a single (the first) line."
    text = "a\nb\rc\x85d\n"
    for charset in ("utf-8", "utf-16", "iso-8859-1", "cp037"):
        data = text.encode(charset)
        one = evaluate_wilde("line(1)", data, charset=charset)
        assert (one.text, one.clamped) == (text, False)
        two = evaluate_wilde("line(2)", data, charset=charset)
        assert (two.text, two.clamped) == (text, True)
    empty = evaluate_wilde("line(1)", b"", charset="utf-8")
    assert (empty.text, empty.clamped, [(r.start, r.end) for r in empty.ranges]) == ("", False, [(0, 0)])


def test_wilde_2_1_3_final_crlf_opens_no_empty_line() -> None:
    # the project's reading (docs/specs/README.md): "a\r\nb\r\n" has two lines, not three
    sel = evaluate_wilde("line(3)", b"a\r\nb\r\n", charset="us-ascii")
    assert (sel.text, sel.clamped) == ("b\r\n", True)
    assert evaluate_wilde("line(2)", b"a\r\nb\r\n", charset="us-ascii").clamped is False


def test_wilde_2_1_3_on_crlf_canonical_text_lines_are_the_deposited_lines() -> None:
    # the archive keeps text CRLF-canonical: there every line ending is a CRLF
    deposited = "one\ntwo\rthree\x85four\r\nfive"
    canonical = to_crlf(deposited).encode("utf-8")
    assert evaluate_wilde("line(2,3)", canonical, charset="utf-8").text == "two\r\nthree\r\n"
    assert evaluate_wilde("line(5)", canonical, charset="utf-8").text == "five"
    # the same text as deposited (LF, CR, NEL) is one line up to its only CRLF
    assert evaluate_wilde("line(1)", deposited.encode("utf-8"), charset="utf-8").text == "one\ntwo\rthree\x85four\r\n"


def test_wilde_2_1_6_union_is_sorted_and_merged() -> None:
    sel = evaluate_wilde("line(3)line(1)line(2)char(2,3)", b"a\r\nb\r\nc\r\nd\r\n", charset="us-ascii")
    assert [(r.start, r.end) for r in sel.ranges] == [(0, 6)]
    assert sel.text == "a\r\nb\r\nc\r\n"


def test_wilde_match_edge_inside_crlf_is_widened() -> None:
    # 'a%0D' matches "a" + CR; the CR is half of a CRLF line ending, which is one character
    sel = evaluate_wilde("match(a%0D)", b"xa\r\ny", charset="us-ascii")
    assert sel.text == "a\r\n"
    assert (sel.ranges[0].start, sel.ranges[0].end) == (1, 3)


# --------------------------------------------------------------------------- POSIX BRE on RE2


@pytest.mark.parametrize(
    ("bre", "text", "expected"),
    [
        ("a*b", "xaaab b", ["aaab", "b"]),
        ("*a", "x*a", ["*a"]),  # '*' at the start is literal
        ("\\(*a\\)", "x*a", ["*a"]),  # and right after \(
        ("^*a", "*ab", ["*a"]),  # and right after an anchoring ^
        ("^ab", "abab", ["ab"]),  # ^ anchors only at the start of the text
        ("a^b", "a^b", ["a^b"]),  # ^ elsewhere is literal
        ("ab$", "abab", ["ab"]),
        ("a$b", "a$b", ["a$b"]),
        ("a.c", "abc a\nc", ["abc", "a\nc"]),  # '.' matches a newline (no REG_NEWLINE)
        ("[]a]*", "x]a]y", ["]a]"]),
        ("[^]a]", "]ab", ["b"]),
        ("[a-c]\\{2\\}", "abcd", ["ab"]),
        ("x\\{1,\\}", "xxx", ["xxx"]),
        ("x\\{0,1\\}y", "xxy", ["xy"]),
        ("[[:digit:]][[:alpha:]]", "1a 2b", ["1a", "2b"]),
        ("[\\]", "a\\b", ["\\"]),  # a backslash is literal in brackets
        ("a+b?c|d(e){1}", "a+b?c|d(e){1}", ["a+b?c|d(e){1}"]),  # ordinary characters in a BRE
        ("\\.\\*\\[\\]\\^\\$\\\\", ".*[]^$\\", [".*[]^$\\"]),
        ("\\(ab\\)*c", "ababc", ["ababc"]),
        ("a\\|b", None, None),  # \| is a GNU extension, not BRE
        ("[[=e=]x]", "ex", ["ex"]),
        ("[[.-.]a]", "-a", ["-a"]),
        ("é.", "café!", ["é!"]),
    ],
)
def test_wilde_2_1_5_posix_bre(bre: str, text: str | None, expected: list[str] | None) -> None:
    escaped = bre.replace("^", "^^").replace("(", "^(").replace(")", "^)")
    encoded = "".join(c if c.isalnum() else "".join(f"%{b:02X}" for b in c.encode()) for c in escaped)
    if text is None:
        with pytest.raises(ParseError):
            WildeFragment.parse(f"match({encoded})")
            evaluate_wilde(f"match({encoded})", b"", charset="utf-8")
        return
    assert expected is not None
    sel = evaluate_wilde(f"match({encoded})", text.encode(), charset="utf-8")
    assert [text[r.start : r.end] for r in sel.ranges] == expected


def test_wilde_bre_leftmost_longest() -> None:
    # POSIX: the longest of the leftmost matches, not the first alternative found
    assert _spans("xyz", "match(x*" + "%5C(xy%5C)*z)") == ["xyz"]
    assert _spans("abcd", "match(a%5C(b%5C)*%5C(bc%5C)*d*)") == ["abcd"]


def test_wilde_bre_back_references_are_unsupported() -> None:
    with pytest.raises(UnsupportedError):
        evaluate_wilde("match(%5C(a%5C)%5C1)", b"aa", charset="us-ascii")


@given(st.integers(0, 10**30), st.integers(0, 6000), st.sampled_from(["char({n})", "line(1,{n})", "char({n},{n})"]))
def test_wilde_counts_with_leading_zeros_are_their_number(n: int, zeros: int, form: str) -> None:
    # count = 1*DIGIT: however many zeros lead it (int() alone refused more than 4,300 digits, zeros and all)
    padded = form.format(n="0" * zeros + str(n))
    assert WildeFragment.parse(padded) == WildeFragment.parse(form.format(n=n))
    with pytest.raises(LimitError):
        WildeFragment.parse("char(" + "0" * zeros + "1" * 4001 + ")")


def test_wilde_bre_limits() -> None:
    with pytest.raises(LimitError):
        bre_to_re2("a\\{1001\\}")
    with pytest.raises(LimitError):
        bre_to_re2("a" * 5000)
    with pytest.raises(LimitError):
        evaluate_wilde("match(a)", b"a" * 20, charset="us-ascii", max_matches=10)


def test_wilde_bre_catastrophic_pattern_runs_in_linear_time() -> None:
    # (a*)*b on a long run of a's backtracks exponentially in a backtracking engine; RE2 does not
    text = b"a" * 200_000
    sel = evaluate_wilde("match(%5C(a*%5C)*b)", text, charset="us-ascii")
    assert sel.ranges == ()


def test_wilde_bre_translation_is_plain_re2() -> None:
    assert bre_to_re2("ab") == "ab"
    assert bre_to_re2("^a.b*$") == "^a.b*$"
    assert bre_to_re2("\\(a\\)\\{2,3\\}") == "(?:a){2,3}"
    assert bre_to_re2("[^a-c[:space:]]") == "[^a-c[:space:]]"


# --------------------------------------------------------------------------- references

def ref_chars(text: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(text):
        step = 2 if text[i] == "\r" and text[i + 1 : i + 2] in ("\n", "\x85") else 1
        out.append(text[i : i + step])
        i += step
    return out


def ref_lines(chars: list[str]) -> list[tuple[int, int]]:
    """(start, end) character index of each line (§2.1.3: only a CRLF ends one), CRLF included."""
    lines: list[tuple[int, int]] = []
    start = 0
    for i, c in enumerate(chars):
        if c == "\r\n":
            lines.append((start, i + 1))
            start = i + 1
    if start < len(chars) or not lines:
        lines.append((start, len(chars)))
    return lines


def ref_wilde(text: str, parts: list[tuple[str, int, int]]) -> set[int]:
    """The set of character indexes the union of char/line parts covers (1-based, closed, clamped)."""
    chars = ref_chars(text)
    covered: set[int] = set()
    for scheme, a, b in parts:
        if a == 0 or b == 0 or a > b:
            continue
        if scheme == "char":
            n = len(chars)
            covered |= set(range(min(a, n) - 1, min(b, n))) if n else set()
        else:
            lines = ref_lines(chars)
            n = len(lines)
            first = lines[min(a, n) - 1][0]
            last = lines[min(b, n) - 1][1]
            covered |= set(range(first, last))
    return covered


TEXTS = st.lists(st.sampled_from(["a", "é", "😀", " ", "\r", "\n", "\x85", "\r\n"]), max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    TEXTS,
    st.lists(st.tuples(st.sampled_from(["char", "line"]), st.integers(0, 35), st.integers(0, 35)), min_size=1, max_size=4),
    st.sampled_from(["utf-8", "utf-16", "iso-8859-1", "gb18030"]),
)
def test_wilde_char_line_union_matches_the_reference(
    text: str, parts: list[tuple[str, int, int]], charset: str
) -> None:
    try:
        data = text.encode(charset)
    except UnicodeEncodeError:
        assume(False)
        raise
    fragment = "".join(f"{s}({a},{b})" for s, a, b in parts)
    sel = evaluate_wilde(fragment, data, charset=charset)
    got: set[int] = set()
    for r in sel.ranges:
        got |= set(range(r.start, r.end))
    assert got == ref_wilde(text, parts)
    chars = ref_chars(text)
    assert sel.text == "".join("".join(chars[r.start : r.end]) for r in sel.ranges)


@settings(max_examples=200, deadline=None)
@given(
    TEXTS,
    st.integers(1, 12),
    st.integers(0, 12),
    st.sampled_from(["utf-8", "iso-8859-1", "cp037"]),
    st.integers(2, 7),
)
def test_wilde_lines_across_search_chunks(text: str, a: int, extra: int, charset: str, chunk: int) -> None:
    # the octet search for CR+LF reads the entity a chunk at a time: a pair may straddle two chunks
    try:
        data = text.encode(charset)
    except UnicodeEncodeError:
        assume(False)
        raise
    import pdi.fragments.text.wilde as wilde

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wilde, "_CHUNK", chunk)
        sel = evaluate_wilde(f"line({a},{a + extra})", data, charset=charset)
    got: set[int] = set()
    for r in sel.ranges:
        got |= set(range(r.start, r.end))
    assert got == ref_wilde(text, [("line", a, a + extra)])


@settings(max_examples=200, deadline=None)
@given(TEXTS, st.integers(1, 35), st.integers(0, 35))
def test_wilde_lines_of_crlf_canonical_text_are_the_lines_of_every_ending(text: str, a: int, extra: int) -> None:
    # CRLF-canonical text (what the archive stores): every line ending of the deposited text is a CRLF
    # there, so its draft-wilde lines are the lines that every line ending of the deposit ends
    canonical = to_crlf(text)
    sel = evaluate_wilde(f"line({a},{a + extra})", canonical.encode("utf-8"), charset="utf-8")
    chars = ref_chars(text)
    lines: list[str] = []
    line = ""
    for c in chars:
        line += "\r\n" if c in ("\r\n", "\r\x85", "\r", "\n", "\x85") else c
        if line.endswith("\r\n"):
            lines.append(line)
            line = ""
    if line or not lines:
        lines.append(line)
    n = len(lines)
    assert sel.text == "".join(lines[min(a, n) - 1 : min(a + extra, n)])
    assert sel.clamped == (a + extra > n)


# A random BRE and the same expression in Python's syntax, built from one tree.
LITERALS = "ab.*[]^$\\(){}+?|"


@st.composite
def regexes(draw: st.DrawFn, depth: int = 0) -> tuple[str, str]:
    atoms: list[tuple[str, str]] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["lit", "lit", "dot", "set", "group"] if depth < 2 else ["lit", "dot", "set"]))
        if kind == "lit":
            c = draw(st.sampled_from(LITERALS))
            bre = "\\" + c if c in ".*[]^$\\" else c
            atom = (bre, re.escape(c))
        elif kind == "dot":
            atom = (".", ".")
        elif kind == "set":
            negate = draw(st.booleans())
            atom = ("[^ab]", "[^ab]") if negate else ("[a(]", "[a(]")
        else:
            inner = draw(regexes(depth + 1))
            atom = ("\\(" + inner[0] + "\\)", "(?:" + inner[1] + ")")
        quant = draw(st.sampled_from(["", "", "*", "{1,2}"]))
        if quant == "*":
            atom = (atom[0] + "*", "(?:" + atom[1] + ")*")
        elif quant:
            atom = (atom[0] + "\\{1,2\\}", "(?:" + atom[1] + "){1,2}")
        atoms.append(atom)
    return "".join(a for a, _ in atoms), "".join(p for _, p in atoms)


def ref_matches(pattern: str, text: str) -> list[tuple[int, int]]:
    """POSIX leftmost-longest, non-overlapping, by brute force over every substring."""
    compiled = re.compile(pattern, re.DOTALL)
    out: list[tuple[int, int]] = []
    i = 0
    while i <= len(text):
        best = None
        for j in range(len(text), i - 1, -1):
            if compiled.fullmatch(text, i, j):
                best = j
                break
        if best is not None and best > i:
            out.append((i, best))
            i = best
        else:  # no match here, or only an empty one, which identifies no character
            i += 1
    return out


@settings(max_examples=300, deadline=None)
@given(regexes(), st.lists(st.sampled_from([*"ab(.*[$\\", "\n"]), max_size=12).map("".join))
def test_wilde_match_agrees_with_brute_force_posix(regex: tuple[str, str], text: str) -> None:
    bre, python = regex
    escaped = bre.replace("^", "^^").replace("(", "^(").replace(")", "^)")
    encoded = "".join(c if c.isalnum() else f"%{ord(c):02X}" for c in escaped)
    sel = evaluate_wilde(f"match({encoded})", text.encode(), charset="utf-8")
    want = ref_matches(python, text)
    # the engine reports the union: merge the reference's touching matches the same way
    merged: list[tuple[int, int]] = []
    for a, b in want:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    assert [(r.start, r.end) for r in sel.ranges] == merged


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30), st.binary(max_size=20))
def test_wilde_no_input_raises_anything_but_pdi_errors(fragment: str, data: bytes) -> None:
    try:
        evaluate_wilde(fragment, data, charset="utf-8")
    except PDIError:
        pass
