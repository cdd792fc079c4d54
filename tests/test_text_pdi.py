"""PDI ``char``/``line`` on text (PDI-GRAMMAR.md §3), the registry, and the line-ending helpers."""

from __future__ import annotations

import pytest

from pdi.errors import ParseError, UnsupportedError
from pdi.fragments import FragmentResult, Range, evaluate
from pdi.fragments.text import line_ending_convention, to_crlf


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


def test_pdi_range_end_before_start_is_an_error() -> None:
    with pytest.raises(ParseError):
        evaluate("char", (5, 2), b"abcdef", media_type="text/plain")


def test_registry_rejects_unknown_pairs() -> None:
    with pytest.raises(UnsupportedError):
        evaluate("rect", (1, 2), b"abc", media_type="text/plain")
    with pytest.raises(UnsupportedError):
        evaluate("char", (1, 2), b"abc", media_type="image/png")
