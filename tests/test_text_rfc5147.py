"""RFC 5147 text/plain fragment identifiers: every §5 example, §2–§4 rules, and a slow reference.

Expected values are worked out by hand from the RFC text; the property tests
compare the engine with ``ref_select`` below, a deliberately naive reading of
§2.1 and §4.1 (decode everything, split it into characters and lines with a
plain loop).
"""

from __future__ import annotations

import codecs
import hashlib

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pdi.errors import IntegrityError, LimitError, ParseError, PDIError
from pdi.fragments.text import (
    IntegrityCheck,
    TextFragment,
    TextIndex,
    evaluate_rfc5147,
    make_rfc5147,
)

# --------------------------------------------------------------------------- reference

ENDINGS = ("\r\n", "\r\x85", "\r", "\n", "\x85")


def ref_chars(text: str) -> list[str]:
    """RFC 5147 §2.1.2/§4.1: code points, but every line ending is a single character."""
    chars: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\r" and i + 1 < len(text) and text[i + 1] in "\n\x85":
            chars.append(text[i : i + 2])
            i += 2
        else:
            chars.append(text[i])
            i += 1
    return chars


def ref_line_starts(chars: list[str]) -> list[int]:
    """Character index of every line position: 0, after each line ending, and the end."""
    starts = [0]
    for i, c in enumerate(chars):
        if c in ENDINGS:
            starts.append(i + 1)
    if starts[-1] != len(chars) or len(starts) == 1:
        starts.append(len(chars))  # the last line has no ending, or there are none at all
    return starts


def ref_select(text: str, scheme: str, start: int | None, end: int | None) -> tuple[str, bool, int, int]:
    """(selected text, clamped, start char, end char) for char=/line= on ``text``."""
    chars = ref_chars(text)
    if scheme == "char":
        top = len(chars)
        s = 0 if start is None else start
        e = top if end is None else end
        clamped = s > top or e > top
        s, e = min(s, top), min(e, top)
        return "".join(chars[s:e]), clamped, s, e
    starts = ref_line_starts(chars)
    top = len(starts) - 1
    s = 0 if start is None else start
    e = top if end is None else end
    clamped = s > top or e > top
    s, e = min(s, top), min(e, top)
    return "".join(chars[starts[s] : starts[e]]), clamped, starts[s], starts[e]


# --------------------------------------------------------------------------- §5 examples


def _lines(n: int, ending: str = "\n") -> str:
    return "".join(f"Zeile {i:02d} – ü{ending}" for i in range(1, n + 1))


def test_rfc5147_5_example_char_100() -> None:
    # "identifies the position after the 100th character"
    text = "é" * 150
    sel = evaluate_rfc5147("char=100", text.encode(), charset="utf-8")
    assert sel.text == ""
    assert (sel.ranges[0].start, sel.ranges[0].end) == (100, 100)
    assert (sel.ranges[0].byte_start, sel.ranges[0].byte_end) == (200, 200)
    assert not sel.clamped


def test_rfc5147_5_example_char_100_fewer_characters() -> None:
    # "If the MIME entity has fewer than 100 characters, the URI identifies the
    # position after the MIME entity's last character."
    sel = evaluate_rfc5147("char=100", ("a\r\n" * 10).encode("ascii"), charset="us-ascii")
    # 10 × (a + one line-ending character) = 20 characters
    assert (sel.ranges[0].start, sel.ranges[0].end) == (20, 20)
    assert (sel.ranges[0].byte_start, sel.ranges[0].byte_end) == (30, 30)
    assert sel.clamped


def test_rfc5147_5_example_line_10_20() -> None:
    # "identifies lines 11 to 20"
    sel = evaluate_rfc5147("line=10,20", _lines(30).encode(), charset="utf-8")
    assert sel.text == "".join(f"Zeile {i:02d} – ü\n" for i in range(11, 21))
    assert not sel.clamped


def test_rfc5147_5_example_line_10_20_fewer_than_11_lines() -> None:
    # "If the MIME entity has fewer than 11 lines, it identifies the position after the last line."
    data = _lines(5).encode()
    sel = evaluate_rfc5147("line=10,20", data, charset="utf-8")
    assert sel.text == ""
    assert sel.ranges[0].byte_start == sel.ranges[0].byte_end == len(data)
    assert sel.clamped


def test_rfc5147_5_example_line_10_20_between_11_and_20_lines() -> None:
    # "less than 20 but at least 11 lines, it identifies the range from line 11 to the last line"
    sel = evaluate_rfc5147("line=10,20", _lines(15, "\r\n").encode(), charset="utf-8")
    assert sel.text == "".join(f"Zeile {i:02d} – ü\r\n" for i in range(11, 16))
    assert sel.clamped


def test_rfc5147_5_example_line_first() -> None:
    # https://example.com/text.txt#line=,1 "identifies the first line"
    sel = evaluate_rfc5147("line=,1", b"first\rsecond\rthird", charset="us-ascii")
    assert sel.text == "first\r"
    assert (sel.ranges[0].start, sel.ranges[0].end) == (0, 6)


def _entity_9876() -> str:
    # 20 lines of 489 "é" + "x" + CRLF (491 characters each, the CRLF counting one) = 9820,
    # then a last line of 56 characters without a line ending: 9876 characters.
    return ("é" * 489 + "x\r\n") * 20 + "ü" * 56


def test_rfc5147_5_example_line_10_20_length_utf8() -> None:
    text = _entity_9876()
    sel = evaluate_rfc5147("line=10,20;length=9876,UTF-8", text.encode("utf-8"), charset="utf-8")
    assert sel.integrity == "ok"
    assert sel.text == ("é" * 489 + "x\r\n") * 10


def test_rfc5147_5_example_length_mismatch_fails() -> None:
    text = _entity_9876() + "!"
    with pytest.raises(IntegrityError) as info:
        evaluate_rfc5147("line=10,20;length=9876,UTF-8", text.encode("utf-8"), charset="utf-8")
    assert info.value.exit_code == 3
    ignored = evaluate_rfc5147(
        "line=10,20;length=9876,UTF-8", text.encode("utf-8"), charset="utf-8", on_error="ignore"
    )
    assert not ignored.interpreted
    assert ignored.integrity == "failed: length=9876,UTF-8"


def test_rfc5147_5_example_length_only_if_utf8_or_transcoded() -> None:
    # "...but only if the retrieved MIME entity uses the UTF-8 encoding or has
    # been locally transcoded into this encoding."
    latin = _entity_9876().encode("iso-8859-1")
    sel = evaluate_rfc5147("line=10,20;length=9876,UTF-8", latin, charset="iso-8859-1")
    assert sel.integrity == "unchecked"
    assert sel.text == ("é" * 489 + "x\r\n") * 10
    transcoded = evaluate_rfc5147(
        "line=10,20;length=9876,UTF-8", latin, charset="iso-8859-1", transcode=True
    )
    assert transcoded.integrity == "ok"


def test_rfc5147_many_checks_cost_one_pass_per_charset(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reported: each check hashed (or transcoded) the whole entity again, so 1,600 ``md5=`` checks in one 60 KB
    request to /api/rfc5147 took 113 s on a 45 MB text. What a pass gives is kept for the checks after it: one md5
    of the entity, one transcoding (and one md5) per charset, whatever its alias; every outcome as before."""
    import types

    import pdi.fragments.text.rfc5147 as rfc5147

    passes: list[int] = []

    def counted(data: object, **options: object) -> object:
        passes.append(len(memoryview(data)))  # type: ignore[arg-type]
        return hashlib.md5(data, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(rfc5147, "hashlib", types.SimpleNamespace(md5=counted))
    latin = ("é" * 40 + "\n").encode("iso-8859-1") * 50
    right = hashlib.md5(latin).hexdigest()
    as_utf8 = hashlib.md5(latin.decode("iso-8859-1").encode("utf-8")).hexdigest()
    checks = f";md5={'0' * 32}" * 500 + f";md5={right}" + f";md5={as_utf8},UTF-8;md5={as_utf8},csUTF8" * 300
    checks += ";md5=" + "1" * 32 + ",US-ASCII" + ";length=2050,utf8" * 300
    selection = evaluate_rfc5147("char=0,3" + checks, latin, charset="iso-8859-1", transcode=True, on_error="ignore")
    assert [o.status for o in selection.checks] == (["failed"] * 500 + ["ok"] + ["ok"] * 600 + ["failed"]
                                                    + ["ok"] * 300)
    assert selection.checks[-301].detail == "the text cannot be transcoded to US-ASCII"
    assert len(passes) == 2  # the entity once, its UTF-8 once


# --------------------------------------------------------------------------- §3 syntax


@pytest.mark.parametrize(
    ("text", "scheme", "start", "end", "is_range"),
    [
        ("char=0", "char", 0, 0, False),
        ("char=007", "char", 7, 7, False),
        ("line=3,", "line", 3, None, True),
        ("line=,3", "line", None, 3, True),
        ("char=4,4", "char", 4, 4, True),
    ],
)
def test_rfc5147_3_positions_and_ranges(
    text: str, scheme: str, start: int | None, end: int | None, is_range: bool
) -> None:
    frag = TextFragment.parse(text)
    assert (frag.scheme, frag.start, frag.end, frag.is_range) == (scheme, start, end, is_range)


def test_rfc5147_3_integrity_checks_any_number() -> None:
    frag = TextFragment.parse(
        "char=1,2;length=10;md5=0123456789ABCDEF0123456789abcdef,iso-8859-1;length=11,UTF-8"
    )
    assert frag.checks == (
        IntegrityCheck("length", "10", None),
        IntegrityCheck("md5", "0123456789abcdef0123456789abcdef", "iso-8859-1"),
        IntegrityCheck("length", "11", "UTF-8"),
    )
    assert str(frag) == (
        "char=1,2;length=10;md5=0123456789abcdef0123456789abcdef,iso-8859-1;length=11,UTF-8"
    )


def test_rfc5147_3_1_unknown_integrity_checks_are_ignored() -> None:
    # §3.1: "implementations MUST ignore new types of integrity checks"
    sel = evaluate_rfc5147("char=0,1;sha256=deadbeef,UTF-8", b"ab", charset="utf-8")
    assert sel.text == "a"
    assert sel.integrity == "unchecked"
    assert sel.checks[0].status == "unchecked"


@pytest.mark.parametrize(
    ("text", "offset", "rule"),
    [
        ("CHAR=1", 0, "text-scheme"),  # §3 NOTE: exactly the lower-case letters
        ("Line=1", 0, "text-scheme"),
        ("char=", 5, "position"),
        ("char=,", 6, "range"),
        ("char=-1", 5, "position"),
        ("char=1,2,3", 8, "text-fragment"),
        ("char=1 ", 6, "text-fragment"),
        ("char=1;", 7, "integrity-check"),
        ("char=1;length=", 14, "length-scheme"),
        ("char=1;md5=abc", 11, "md5-value"),
        ("char=1;md5=" + "0" * 33, 11, "md5-value"),
        ("char=1;length=5,", 16, "mime-charset"),
        ("char=1;LENGTH=5", 7, "integrity-check"),
        ("line=20,10", 8, "range"),  # §4.4 (first number greater than the second)
        ("", 0, "text-scheme"),
    ],
)
def test_rfc5147_4_4_syntax_errors_are_never_guessed(text: str, offset: int, rule: str) -> None:
    with pytest.raises(ParseError) as info:
        TextFragment.parse(text)
    assert info.value.offset == offset
    assert info.value.rule == rule


def test_rfc5147_3_upper_case_check_names_are_named_as_the_error() -> None:
    for text, offset in (("char=1;LENGTH=5", 7), ("char=1;md5X=0", 10), ("char=1;leNgth=5", 9)):
        with pytest.raises(ParseError, match="integrity check names are lower case") as info:
            TextFragment.parse(text)
        assert info.value.offset == offset
    with pytest.raises(ParseError, match="written name=value"):  # not a letter at all
        TextFragment.parse("char=1;\u00e9=5")


def test_rfc5147_4_4_ignore_option() -> None:
    sel = evaluate_rfc5147("line=20,10", b"a\nb\n", charset="us-ascii", on_error="ignore")
    assert not sel.interpreted
    assert sel.reason is not None and "syntax error" in sel.reason
    assert sel.ranges == ()


def test_rfc5147_4_2_equal_numbers_are_a_zero_length_range() -> None:
    sel = evaluate_rfc5147("line=1,1", b"a\nb\n", charset="us-ascii")
    assert sel.text == ""
    assert (sel.ranges[0].start, sel.ranges[0].end) == (2, 2)


def test_rfc5147_3_huge_numbers() -> None:
    sel = evaluate_rfc5147("char=" + "9" * 60, b"abc", charset="us-ascii")
    assert sel.clamped and sel.ranges[0].start == 3
    with pytest.raises(LimitError):
        TextFragment.parse("char=" + "9" * 5000)


@given(st.integers(0, 10**30), st.integers(0, 6000), st.integers(0, 6000),
       st.sampled_from(["char={a}", "line={a},{b}", "char=,{b}", "char={a},", "line={a};length={b}"]))
def test_rfc5147_3_leading_zeros_are_the_number_however_many(a: int, zeros_a: int, zeros_b: int, form: str) -> None:
    # number = 1*DIGIT: 0…07 is 7. Python's int() counts the zeros against its 4,300 digits, which made
    # char=<5,000 zeros>1 a ValueError (a traceback from pdi text, a 500 from /api/rfc5147).
    b = a + 1
    text = form.format(a="0" * zeros_a + str(a), b="0" * zeros_b + str(b))
    parsed = TextFragment.parse(text)
    assert parsed == TextFragment.parse(form.format(a=a, b=b))
    assert str(parsed) == form.format(a=a, b=b)
    padded = evaluate_rfc5147(text, b"abc", charset="us-ascii", on_error="ignore")
    assert padded == evaluate_rfc5147(str(parsed), b"abc", charset="us-ascii", on_error="ignore")


# --------------------------------------------------------------------------- §2.1, §4.1 counting


def test_rfc5147_2_1_1_one_character_has_two_positions() -> None:
    assert evaluate_rfc5147("char=1", b"x", charset="us-ascii").ranges[0].byte_start == 1
    assert not evaluate_rfc5147("char=1", b"x", charset="us-ascii").clamped
    assert evaluate_rfc5147("char=2", b"x", charset="us-ascii").clamped


@pytest.mark.parametrize("ending", ["\r\n", "\n", "\r", "\x85", "\r\x85"])
def test_rfc5147_4_1_every_line_ending_is_one_character(ending: str) -> None:
    text = f"ab{ending}cd{ending}"
    data = text.encode("utf-8")
    # a b <end> c d <end>: 6 characters; char=2,3 is the first line ending
    sel = evaluate_rfc5147("char=2,3", data, charset="utf-8")
    assert sel.text == ending
    assert evaluate_rfc5147("char=3,5", data, charset="utf-8").text == "cd"
    assert TextIndex(data, "utf-8").char_count == 6
    # lines include their line endings
    assert evaluate_rfc5147("line=1,2", data, charset="utf-8").text == f"cd{ending}"
    # a final line ending does not open an empty third line
    assert TextIndex(data, "utf-8").line_count == 2


def test_rfc5147_4_1_lf_cr_is_two_line_endings() -> None:
    index = TextIndex(b"a\n\rb", "us-ascii")
    assert index.line_count == 3
    assert evaluate_rfc5147("line=1,2", index).text == "\r"


def test_rfc5147_2_1_2_text_without_line_ending_is_one_line() -> None:
    sel = evaluate_rfc5147("line=0,1", b"no ending", charset="us-ascii")
    assert sel.text == "no ending"
    assert not sel.clamped
    assert evaluate_rfc5147("line=0,2", b"no ending", charset="us-ascii").clamped


def test_rfc5147_4_1_nel_depends_on_the_charset() -> None:
    # NEL is 0x85 in ISO-8859-1 and 0x15 in EBCDIC cp037; in windows-1252, 0x85 is "…".
    assert TextIndex(b"a\x85b", "iso-8859-1").line_count == 2
    assert TextIndex("a\x85b".encode("cp037"), "cp037").line_count == 2
    assert TextIndex(b"a\x85b", "windows-1252").line_count == 1
    ebcdic = "one\ntwo\x85three".encode("cp037")
    assert evaluate_rfc5147("line=1,2", ebcdic, charset="cp037").text == "two\x85"


@pytest.mark.parametrize(
    ("charset", "bom"),
    [
        ("utf-8", codecs.BOM_UTF8),
        ("utf-16", codecs.BOM_UTF16_LE),
        ("utf-16", codecs.BOM_UTF16_BE),
        ("utf-32", codecs.BOM_UTF32_LE),
        ("utf-32", codecs.BOM_UTF32_BE),
    ],
)
def test_rfc5147_2_a_bom_is_not_a_character(charset: str, bom: bytes) -> None:
    body = {
        codecs.BOM_UTF8: "utf-8",
        codecs.BOM_UTF16_LE: "utf-16-le",
        codecs.BOM_UTF16_BE: "utf-16-be",
        codecs.BOM_UTF32_LE: "utf-32-le",
        codecs.BOM_UTF32_BE: "utf-32-be",
    }[bom]
    data = bom + "x😀\r\ny".encode(body)
    sel = evaluate_rfc5147("char=0,3", data, charset=charset)
    assert sel.text == "x😀\r\n"
    assert sel.ranges[0].byte_start == len(bom)
    assert sel.data == "x😀\r\n".encode(body)
    index = TextIndex(data, charset)
    assert index.char_count == 4
    # md5 is over the octets of the entity, BOM included
    digest = hashlib.md5(data).hexdigest()
    assert evaluate_rfc5147(f"char=0;md5={digest}", data, charset=charset).integrity == "ok"


def test_rfc5147_utf16_without_bom_is_big_endian() -> None:
    # RFC 2781 §4.3: UTF-16 without a BOM is big-endian
    data = "ab\ncd".encode("utf-16-be")
    assert evaluate_rfc5147("line=1,2", data, charset="UTF-16").text == "cd"


def test_rfc5147_multibyte_charsets() -> None:
    text = "日本語\r\nテキスト\nです"
    for charset in ("shift_jis", "euc-jp", "iso-2022-jp", "gb18030", "utf-16-le"):
        data = text.encode(charset)
        sel = evaluate_rfc5147("line=1,2", data, charset=charset)
        assert sel.text == "テキスト\n", charset
        assert sel.data == "テキスト\n".encode(charset) or charset == "iso-2022-jp"
        assert sel.data.decode(charset) == "テキスト\n" or charset == "iso-2022-jp"
        assert evaluate_rfc5147("char=3,5", data, charset=charset).text == "\r\nテ"


def test_rfc5147_default_charset_is_us_ascii() -> None:
    # RFC 5147 §1.1: without a declaration US-ASCII is assumed, so octets above 7F are an error
    with pytest.raises(ParseError) as info:
        evaluate_rfc5147("char=0,3", "aé".encode())
    assert info.value.rule == "charset"


def test_rfc5147_2_3_md5_case_and_charset() -> None:
    data = "grüße\n".encode()
    digest = hashlib.md5(data).hexdigest()
    assert evaluate_rfc5147(f"line=0,1;md5={digest.upper()}", data, charset="utf-8").integrity == "ok"
    assert evaluate_rfc5147(f"line=0,1;md5={digest},utf8", data, charset="UTF-8").integrity == "ok"
    # a check for another charset is not used
    sel = evaluate_rfc5147(f"line=0,1;md5={digest},ISO-8859-1", data, charset="utf-8")
    assert sel.integrity == "unchecked"
    with pytest.raises(IntegrityError):
        evaluate_rfc5147("line=0,1;md5=" + "0" * 32, data, charset="utf-8")


def test_rfc5147_4_3_failing_check_is_named() -> None:
    data = b"abc"
    sel = evaluate_rfc5147(
        "char=0,1;length=3;length=4", data, charset="us-ascii", on_error="ignore"
    )
    assert sel.integrity == "failed: length=4"
    assert [c.status for c in sel.checks] == ["ok", "failed"]
    assert evaluate_rfc5147(
        "char=0,1;length=4", data, charset="us-ascii", check_integrity=False
    ).text == "a"


# --------------------------------------------------------------------------- generation


def test_rfc5147_generate_line_range_with_checks() -> None:
    data = b"one\r\ntwo\r\nthree\r\n"
    digest = hashlib.md5(data).hexdigest()
    frag = make_rfc5147(data, "line", 1, 2, charset="utf-8", md5=True, length=True)
    # 3 + 1 + 3 + 1 + 5 + 1 = 14 characters
    assert str(frag) == f"line=1,2;length=14,UTF-8;md5={digest},UTF-8"
    assert evaluate_rfc5147(frag, data, charset="utf-8").text == "two\r\n"
    assert str(make_rfc5147(data, "char", 4, charset="utf-8")) == "char=4"
    assert str(make_rfc5147(data, "char", None, 3, charset="utf-8")) == "char=,3"
    with pytest.raises(PDIError):
        make_rfc5147(data, "line", 1, 9, charset="utf-8")


# --------------------------------------------------------------------------- properties

ALPHABET = st.sampled_from(["a", "b", " ", "é", "ß", "日", "😀", "\r", "\n", "\x85", "\r\n", "\r\x85"])
CHARSETS = ["utf-8", "utf-16", "utf-16-le", "utf-32-be", "iso-8859-1", "cp037", "shift_jis", "us-ascii", "gb18030"]


@st.composite
def entities(draw: st.DrawFn) -> tuple[str, str, bytes]:
    text = "".join(draw(st.lists(ALPHABET, max_size=40)))
    charset = draw(st.sampled_from(CHARSETS))
    try:
        data = text.encode(charset)
    except UnicodeEncodeError:
        assume(False)
        raise
    return text, charset, data


@st.composite
def selections(draw: st.DrawFn) -> tuple[str, int | None, int | None, bool]:
    scheme = draw(st.sampled_from(["char", "line"]))
    is_range = draw(st.booleans())
    start = draw(st.integers(0, 50))
    if not is_range:
        return scheme, start, start, False
    end = draw(st.integers(start, 60))
    form = draw(st.sampled_from(["both", "no-start", "no-end"]))
    if form == "no-start":
        return scheme, None, end, True
    if form == "no-end":
        return scheme, start, None, True
    return scheme, start, end, True


def _fragment_text(scheme: str, start: int | None, end: int | None, is_range: bool) -> str:
    if not is_range:
        return f"{scheme}={start}"
    return f"{scheme}={'' if start is None else start},{'' if end is None else end}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(entities(), selections(), st.sampled_from([16, 17, 64, 1 << 16]))
def test_rfc5147_matches_the_reference(
    entity: tuple[str, str, bytes], selection: tuple[str, int | None, int | None, bool], block: int
) -> None:
    text, charset, data = entity
    scheme, start, end, is_range = selection
    index = TextIndex(data, charset, block_size=block)
    sel = evaluate_rfc5147(_fragment_text(scheme, start, end, is_range), index)
    want, clamped, c0, c1 = ref_select(text, scheme, start, end)
    assert sel.text == want
    assert sel.clamped == clamped
    r = sel.ranges[0]
    assert (r.start, r.end) == (c0, c1)
    assert sel.data == data[r.byte_start : r.byte_end]
    prefix = "".join(ref_chars(text)[:c0])
    if charset == "utf-16":  # Python writes a two-octet BOM for "utf-16"
        assert r.byte_start == 2 + len(prefix.encode("utf-16-le"))
    else:
        assert r.byte_start == len(prefix.encode(charset))
    assert index.char_count == len(ref_chars(text))
    assert index.line_count == len(ref_line_starts(ref_chars(text))) - 1


@settings(max_examples=200, deadline=None)
@given(entities(), st.booleans(), st.booleans())
def test_rfc5147_generated_identifiers_verify(entity: tuple[str, str, bytes], md5: bool, length: bool) -> None:
    text, charset, data = entity
    index = TextIndex(data, charset)
    n = index.line_count
    frag = make_rfc5147(index, "line", 0, n, md5=md5, length=length)
    sel = evaluate_rfc5147(str(frag), data, charset=charset)
    assert sel.text == text
    assert sel.integrity == ("ok" if (md5 or length) else "unchecked")
    assert TextFragment.parse(str(frag)) == frag


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40), st.binary(max_size=30))
def test_rfc5147_no_input_raises_anything_but_pdi_errors(fragment: str, data: bytes) -> None:
    try:
        evaluate_rfc5147(fragment, data, charset="utf-8")
    except PDIError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.from_regex(r"(char|line)=([0-9]{1,3}|[0-9]{0,3},[0-9]{1,3}|[0-9]{1,3},)(;(length=[0-9]{1,3}|md5=[0-9a-fA-F]{32})(,[A-Za-z0-9-]{1,8})?)*", fullmatch=True))
def test_rfc5147_parse_print_parse(text: str) -> None:
    # §3 grammar: every string the regex makes is well-formed; §4.4 (read as PDI's specs/README.md says):
    # only a range whose first number is greater than its second is refused.
    numbers = text.split("=", 1)[1].split(";", 1)[0].split(",")
    improper = len(numbers) == 2 and all(numbers) and int(numbers[0]) > int(numbers[1])
    try:
        frag = TextFragment.parse(text)
    except ParseError as exc:
        assert improper and exc.rule == "range", f"{text!r} is well-formed and properly ordered (RFC 5147 §3, §4.4)"
        return
    assert not improper, f"{text!r} is improperly ordered (RFC 5147 §4.4) but was accepted"
    assert TextFragment.parse(str(frag)) == frag


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40), st.sampled_from(CHARSETS), st.integers(-5, 60), st.integers(16, 64))
def test_text_index_methods_raise_only_pdi_errors(data: bytes, charset: str, value: int, block: int) -> None:
    try:
        index = TextIndex(data, charset, block_size=block)
        index.char_to_cp(value)
        index.cp_to_char(value)
        index.line_to_cp(value)
        index.clamp_cp(value)
        index.clamp_char(value)
        index.cp_to_octet(max(0, min(value, index.cp_count)))
        index.octet_to_cp(value)
        _ = (index.char_count, index.line_count, index.ends_with_line_ending)
    except PDIError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", " ", "\r\n", "\n", "\r", "日", "本", "語", "한"]), max_size=16).map("".join),
       st.sampled_from(["iso-2022-jp", "iso-2022-kr", "iso-2022-jp-2", "utf-7"]), st.sampled_from(["char", "line"]),
       st.integers(0, 20), st.integers(0, 20))
def test_a_stateful_charsets_selection_is_the_text_it_names(
    text: str, charset: str, scheme: str, a: int, b: int
) -> None:
    """Found by a hunt: in ISO-2022-JP (ISO-2022-KR, UTF-7) the octets of a selection do not say which character
    set a run of them is in (the escape sequence that does is before the selection), and their own decoding read
    JIS X 0208 octets as ASCII: ``char=1,4`` of ``日本語abc`` was ``K\\8la``, not ``本語a``. The oracle: the
    reference counting of RFC 5147 §§2.1, 4.1 on the whole text decoded by Python's codec."""
    try:
        data = text.encode(charset)
    except UnicodeEncodeError:
        assume(False)
    start, end = min(a, b), max(a, b)
    sel = evaluate_rfc5147(f"{scheme}={start},{end}", data, charset=charset)
    assert sel.text == ref_select(text, scheme, start, end)[0]


def test_the_wilde_and_pdi_readings_of_a_stateful_charset_are_the_text_they_name() -> None:
    """The same hunt: draft-wilde's ``char(2,4)`` (counted from 1) decoded the octets of the selection alone, and the
    PDI ``char=1,4`` gave octets that read ``K\\8la`` (of a text with LF endings, rewritten CRLF-canonical) or that
    no decoder reads as the selection (of a CRLF-canonical text: the octets without the escape that starts them)."""
    from pdi.fragments.text import evaluate_pdi, evaluate_wilde

    for ending in ("\n", "\r\n"):
        data = f"日本語abc{ending}日本{ending}xyz".encode("iso-2022-jp")
        assert evaluate_wilde("char(2,4)", data, charset="iso-2022-jp").text == "本語a"
        part = evaluate_pdi("char", [1, 4], data, charset="iso-2022-jp")
        assert part.data.decode("iso-2022-jp") == "本語a"


@pytest.mark.parametrize(("entity", "other"), [("ISO-8859-8-I", "ISO-8859-8"), ("ISO-8859-6-E", "ISO-8859-6")])
def test_a_check_for_another_registration_of_the_same_codec_is_not_used(entity: str, other: str) -> None:
    """RFC 5147 §2.3: a check whose charset is not the entity's "MUST NOT" be used. ISO-8859-8-I and ISO-8859-8 are
    two registrations of the IANA registry (read from the shipped XML), which Python decodes with one codec. Found by
    a hunt: the check was compared with the codec, not with the charset the entity was named, so it was used; and a
    generated check of an ISO-8859-8-I text was labelled ISO-8859-8."""
    import re
    from importlib import resources

    xml = resources.files("pdi").joinpath("data/character-sets.xml").read_text(encoding="utf-8")
    names = re.findall(r"<(?:name|preferred_alias)>([^<]+)</", xml)
    assert entity in names and other in names
    data = "abc".encode("iso8859-8" if "8859-8" in entity else "iso8859-6")
    selection = evaluate_rfc5147(f"char=0,1;length=3,{other};length=3,{entity}", data, charset=entity)
    assert [check.status for check in selection.checks] == ["unchecked", "ok"]
    assert str(make_rfc5147(data, "char", 0, 1, charset=entity, length=True)) == f"char=0,1;length=3,{entity}"
