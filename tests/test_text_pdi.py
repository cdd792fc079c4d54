"""PDI ``char``/``line`` on text (PDI-GRAMMAR.md §3), the registry, and the line-ending helpers."""

from __future__ import annotations

import mmap
import re
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pdi.errors import ParseError, PDIError, UnsupportedError
from pdi.fragments import FragmentResult, Range, evaluate
from pdi.fragments.text import (
    TextIndex,
    canonical_octets,
    evaluate_pdi,
    evaluate_rfc5147,
    line_ending_convention,
    parse_pdi_text_fragment,
    pdi_to_rfc5147_char,
    rfc5147_to_pdi_char,
    to_crlf,
)


def test_to_crlf_every_line_ending_becomes_crlf() -> None:
    # RFC 5147 §4.1: CRLF, LF, CR, NEL and CR+NEL are each one line ending.
    assert to_crlf("a\r\nb\nc\rd\x85e\r\x85f") == "a\r\nb\r\nc\r\nd\r\ne\r\nf"
    assert to_crlf("\n\r") == "\r\n\r\n"  # LF then CR: two endings, not one
    assert to_crlf("") == ""


def test_line_ending_convention_names() -> None:
    assert line_ending_convention("a\r\nb\r\n") == "crlf"
    assert line_ending_convention("a\nb") == "lf"
    assert line_ending_convention("a\rb\r") == "cr"
    assert line_ending_convention("a\x85") == "nel"
    assert line_ending_convention("a\r\x85b\r\x85") == "crnel"
    assert line_ending_convention("a\nb\r\n") == "mixed"
    assert line_ending_convention("abc") == "none"


def test_pdi_char_is_half_open_over_crlf_canonical_code_points() -> None:
    data = "héllo\r\nwörld".encode()
    # h é l l o CR LF w ö r l d : positions 0..12; [7, 12) is "wörld"
    result = evaluate("char", (7, 12), data, media_type="text/plain", charset="utf-8")
    assert isinstance(result, FragmentResult)
    assert result.data == "wörld".encode()
    assert result.ranges == (Range(7, 12, 8, 14),)
    assert not result.clamped
    # CR and LF count one each: [5, 6) is the CR alone
    assert evaluate("char", (5, 6), data, media_type="text/plain", charset="utf-8").data == b"\r"


def test_pdi_char_on_lf_text_counts_the_canonical_form() -> None:
    # "a\nb" is "a\r\nb" canonical: b is at [3, 4)
    result = evaluate("char", (3, 4), b"a\nb", media_type="text/plain; charset=us-ascii")
    assert result.data == b"b"
    assert result.canonicalized


def test_pdi_line_includes_line_endings_and_clamps() -> None:
    data = b"one\r\ntwo\r\nthree"
    assert evaluate("line", (1, 2), data, media_type="text/plain").data == b"two\r\n"
    past = evaluate("line", (2, 9), data, media_type="text/plain")
    assert past.data == b"three"
    assert past.clamped


def test_pdi_a_fragment_wholly_past_the_end_says_so() -> None:
    fifty = b"0123456789" * 5  # 50 characters, no line ending
    for positions, past, clamped in [
        ((100, 200), True, True),  # starts past the end
        ((50, 60), True, True),  # starts at the end and asks for more: nothing of the text
        ((51,), True, True),  # a position past the end
        ((50, 50), False, False),  # the empty range at the end is legal, not past it
        ((50,), False, False),  # so is the position at the end
        ((40, 60), False, True),  # reaches past the end: only cut
        ((0, 0), False, False),
    ]:
        result = evaluate("char", positions, fifty, media_type="text/plain")
        assert (result.past_end, result.clamped) == (past, clamped), positions
        if past:
            assert result.data == b"" and [(r.start, r.end) for r in result.ranges] == [(50, 50)]
    # "one\ntwo\n": two lines; line position 2 is the end
    for charset_text in (b"one\r\ntwo\r\n", b"one\ntwo\n"):  # canonical, and counted as canonical
        for positions, past in [((2, 3), True), ((5, 9), True), ((2, 2), False), ((1, 3), False), ((2,), False)]:
            result = evaluate("line", positions, charset_text, media_type="text/plain")
            assert result.past_end == past, (charset_text, positions)
        assert evaluate("char", (10, 11), charset_text, media_type="text/plain").past_end  # 10 canonical chars
        assert not evaluate("char", (10, 10), charset_text, media_type="text/plain").past_end


def test_pdi_range_end_before_start_is_an_error() -> None:
    with pytest.raises(ParseError):
        evaluate("char", (5, 2), b"abcdef", media_type="text/plain")


def test_registry_rejects_unknown_pairs() -> None:
    with pytest.raises(UnsupportedError):
        evaluate("rect", (1, 2), b"abc", media_type="text/plain")
    with pytest.raises(UnsupportedError):
        evaluate("char", (1, 2), b"abc", media_type="image/png")


# --------------------------------------------------------------------------- references and properties

def ref_to_crlf(text: str) -> str:
    """Replace each line ending, scanning left to right, by CR LF."""
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\r" and text[i + 1 : i + 2] in ("\n", "\x85"):
            out.append("\r\n")
            i += 2
        elif c in "\r\n\x85":
            out.append("\r\n")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def ref_pdi_lines(canon: str) -> list[int]:
    """Code point offsets of the line positions of CRLF-canonical text."""
    starts = [0]
    i = 0
    while i < len(canon):
        if canon.startswith("\r\n", i):
            starts.append(i + 2)
            i += 2
        else:
            i += 1
    if starts[-1] != len(canon) or len(starts) == 1:
        starts.append(len(canon))
    return starts


TEXTS = st.lists(st.sampled_from(["a", "é", "😀", "日", " ", "\r", "\n", "\x85", "\r\n", "\r\x85"]), max_size=30).map(
    "".join
)
CHARSETS = st.sampled_from(["utf-8", "utf-16", "utf-32-le", "iso-8859-1", "cp037", "shift_jis", "gb18030"])


def _encode(text: str, charset: str) -> bytes:
    try:
        return text.encode(charset)
    except UnicodeEncodeError:
        assume(False)
        raise


@settings(max_examples=300, deadline=None)
@given(TEXTS, CHARSETS, st.sampled_from(["char", "line"]), st.integers(0, 40), st.integers(0, 40), st.booleans())
def test_pdi_matches_the_reference(
    text: str, charset: str, scheme: str, a: int, b: int, single: bool
) -> None:
    data = _encode(text, charset)
    canon = ref_to_crlf(text)
    start, end = (a, a) if single else (min(a, b), max(a, b))
    positions = (start,) if single else (start, end)
    result = evaluate("char" if scheme == "char" else "line", positions, data, media_type="text/plain", charset=charset)
    if scheme == "char":
        top = len(canon)
        want = canon[min(start, top) : min(end, top)]
        clamped = end > top
    else:
        starts = ref_pdi_lines(canon)
        top = len(starts) - 1
        want = canon[starts[min(start, top)] : starts[min(end, top)]]
        clamped = end > top
    assert result.text() == want
    assert result.clamped == clamped
    # wholly past the end: it starts at or after the end and reaches past it
    assert result.past_end == (end > top and start >= top)
    if canon == text:
        assert not result.canonicalized


@settings(max_examples=200, deadline=None)
@given(TEXTS, CHARSETS)
def test_pdi_conversions_between_counts(text: str, charset: str) -> None:
    data = _encode(text, charset)
    index = TextIndex(data, charset)
    canon = ref_to_crlf(text)
    # RFC 5147 character r is preceded by as many line endings as RFC characters ending one
    rfc_chars = evaluate_rfc5147(f"char=0,{len(text) + 5}", index).text
    n = index.char_count
    for r in range(n + 1):
        prefix = evaluate_rfc5147(f"char=0,{r}", index).text
        pdi = rfc5147_to_pdi_char(r, index)
        assert pdi == len(ref_to_crlf(prefix))
        assert pdi_to_rfc5147_char(pdi, index) == r
    assert rfc_chars == text
    # a PDI position between CR and LF rounds down (or up) to the line ending's edges
    for i in range(len(canon) - 1):
        if canon[i : i + 2] == "\r\n":
            down = pdi_to_rfc5147_char(i + 1, index)
            up = pdi_to_rfc5147_char(i + 1, index, round_up=True)
            assert up == down + 1
            assert rfc5147_to_pdi_char(down, index) == i


@settings(max_examples=100, deadline=None)
@given(TEXTS, CHARSETS)
def test_pdi_canonical_octets(text: str, charset: str) -> None:
    data = _encode(text, charset)
    octets = canonical_octets(data, charset)
    assert TextIndex(octets, charset).whole_text() == ref_to_crlf(text)


@settings(max_examples=200, deadline=None)
@given(TEXTS)
def test_to_crlf_matches_the_reference(text: str) -> None:
    assert to_crlf(text) == ref_to_crlf(text)
    assert line_ending_convention(to_crlf(text)) in ("crlf", "none")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(-3, 50), st.text(max_size=3), st.booleans(), st.none()), max_size=4), st.binary(max_size=20))
def test_pdi_no_input_raises_anything_but_pdi_errors(positions: list[object], data: bytes) -> None:
    for scheme in ("char", "line", "rect"):
        try:
            evaluate(scheme, positions, data, media_type="text/plain; charset=utf-8")
        except PDIError:
            pass


# PDI-GRAMMAR.md §1 and §3: fragment-specifier = [ fragment-scheme "=" ] position *( "," position ),
# on text the schemes char (the default) and line, case-insensitive, one position or an ordered pair.
_TEXT_FRAGMENT = re.compile(r"(?:(?P<scheme>[cC][hH][aA][rR]|[lL][iI][nN][eE])=)?(?P<a>[0-9]{1,30})(?:,(?P<b>[0-9]{1,30}))?")
_WELL_FORMED = st.from_regex(_TEXT_FRAGMENT, fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=20), _WELL_FORMED))
def test_pdi_fragment_parse_raises_only_parse_errors(text: str) -> None:
    spelled = _TEXT_FRAGMENT.fullmatch(text)
    valid = spelled is not None and (spelled["b"] is None or int(spelled["b"]) >= int(spelled["a"]))
    try:
        scheme, positions = parse_pdi_text_fragment(text)
    except ParseError:
        assert not valid, f"{text!r} is a well-formed text fragment (PDI-GRAMMAR.md §1) but was refused"
        return
    assert valid, f"{text!r} was accepted"
    assert spelled is not None
    assert scheme == (spelled["scheme"] or "char").lower()
    assert positions == tuple(int(spelled[k]) for k in "ab" if spelled[k] is not None)


def test_pdi_fragment_parse_forms() -> None:
    assert parse_pdi_text_fragment("0" * 5000 + "37," + "0" * 5000 + "51") == ("char", (37, 51))  # not int()'s 4,300
    assert parse_pdi_text_fragment("line=" + "0" * 9000) == ("line", (0,))
    assert parse_pdi_text_fragment("37,51") == ("char", (37, 51))
    assert parse_pdi_text_fragment("CHAR=37") == ("char", (37,))
    assert parse_pdi_text_fragment("line=10,20") == ("line", (10, 20))
    with pytest.raises(ParseError):
        parse_pdi_text_fragment("rect=1,2")
    with pytest.raises(ParseError):
        parse_pdi_text_fragment("char=5,2")


def test_pdi_on_a_memory_map(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    line = "Grüße, 世界!\r\n"
    path.write_bytes((line * 5000).encode())
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        index = TextIndex(mapped, "utf-8", block_size=4096)
        result = evaluate("line", (4000, 4002), mapped, media_type="text/plain", charset="utf-8")
        assert result.text() == line * 2
        assert not result.canonicalized
        # each line is 12 code points (CR and LF apart), 11 RFC 5147 characters, 18 octets
        assert result.ranges[0].start == 4000 * 12
        assert result.ranges[0].byte_start == 4000 * len(line.encode())
        assert index.line_count == 5000
        assert index.cp_count == 5000 * 12
        assert index.char_count == 5000 * 11


def test_registry_text_media_types_and_charset_parameter() -> None:
    data = "<p>Grüße</p>\n".encode("iso-8859-1")
    html = evaluate("char", (3, 8), data, media_type="text/html; charset=ISO-8859-1")
    assert html.text() == "Grüße"
    assert html.data == "Grüße".encode("iso-8859-1")
    xml = evaluate("line", (0, 1), b"<a/>\n<b/>", media_type="application/xml", charset="utf-8")
    assert xml.data == b"<a/>\r\n"  # counted and cut over the CRLF-canonical form
    assert xml.canonicalized
    assert evaluate("CHAR", (0, 1), b"ab", media_type="TEXT/PLAIN").data == b"a"


@settings(max_examples=200, deadline=None)
@given(TEXTS, st.sampled_from(["utf-8", "iso-8859-1", "cp037"]), st.integers(16, 40), st.integers(0, 40), st.integers(0, 40))
def test_pdi_small_blocks_match_the_reference(text: str, charset: str, block: int, a: int, b: int) -> None:
    data = _encode(text, charset)
    canon = ref_to_crlf(text)
    start, end = min(a, b), max(a, b)
    index = TextIndex(data, charset, block_size=block)
    result = evaluate_pdi("char", (start, end), index)
    assert result.text() == canon[min(start, len(canon)) : min(end, len(canon))]
    starts = ref_pdi_lines(canon)
    top = len(starts) - 1
    lines = evaluate_pdi("line", (start, end), TextIndex(data, charset, block_size=block))
    assert lines.text() == canon[starts[min(start, top)] : starts[min(end, top)]]


def test_pdi_char_halves_of_a_synthesized_crlf() -> None:
    # "a\nb" reads "a\r\nb": [2, 4) is the LF half and "b"; the octets cover the original LF and b
    result = evaluate("char", (2, 4), b"a\nb", media_type="text/plain")
    assert result.data == b"\nb"
    assert result.canonicalized
    assert result.ranges == (Range(2, 4, 1, 3),)
    # [1, 2) is the CR half of the ending written for a NEL
    nel = evaluate("char", (1, 2), "a\x85b".encode(), media_type="text/plain", charset="utf-8")
    assert nel.data == b"\r"
    assert nel.ranges == (Range(1, 2, 1, 3),)
    # line ranges: canonical positions, original octets
    lines = evaluate("line", (1, 2), b"x\ry\rz", media_type="text/plain")
    assert lines.data == b"y\r\n"
    assert lines.ranges == (Range(3, 6, 2, 4),)


def test_from_crlf_restores_a_recorded_convention() -> None:
    from pdi.fragments.text import from_crlf

    canonical = "a\r\nb\r\n"
    assert from_crlf(canonical, "lf") == "a\nb\n"
    assert from_crlf(canonical, "cr") == "a\rb\r"
    assert from_crlf(canonical, "nel") == "a\x85b\x85"
    assert from_crlf(canonical, "crnel") == "a\r\x85b\r\x85"
    assert from_crlf(canonical, "mixed") == canonical
    with pytest.raises(UnsupportedError):
        from_crlf(canonical, "vt")
