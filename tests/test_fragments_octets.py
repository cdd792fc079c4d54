"""The ``byte`` scheme (PDI-GRAMMAR.md §3): half-open octet ranges of the stored bytes, any media type."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.errors import ParseError, PDIError
from pdi.fragments import evaluate


def test_pdi_grammar_3_byte_is_half_open() -> None:
    # byte=2,5 over "abcdefg": octets 2, 3 and 4.
    result = evaluate("byte", (2, 5), b"abcdefg", media_type="image/png")
    assert result.data == b"cde"
    assert not result.clamped
    assert [(r.byte_start, r.byte_end) for r in result.ranges] == [(2, 5)]


def test_pdi_grammar_3_byte_applies_to_every_media_type() -> None:
    for media_type in ("text/plain; charset=utf-8", "audio/wav", "application/pdf", "multipart/related"):
        assert evaluate("BYTE", (0, 1), b"xyz", media_type=media_type).data == b"x"


def test_pdi_grammar_3_a_position_past_the_end_is_the_end_and_says_so() -> None:
    result = evaluate("byte", (5, 10), b"abcdefg", media_type="image/gif")
    assert result.data == b"fg" and result.clamped
    assert evaluate("byte", (9, 12), b"abc", media_type="image/gif").data == b""


def test_a_byte_range_wholly_past_the_end_says_so() -> None:
    # four octets: byte=4,4 is the empty range at the end; byte=4,5 and byte=9,12 ask for octets after it
    data = b"abcd"
    for (start, end), past in [((4, 4), False), ((4, 5), True), ((9, 12), True), ((3, 9), False), ((0, 4), False)]:
        result = evaluate("byte", (start, end), data, media_type="application/pdf")
        assert result.past_end == past, (start, end)
        assert result.clamped == (end > 4)


@given(st.binary(max_size=20), st.integers(0, 30), st.integers(0, 30))
def test_past_end_is_a_start_at_or_after_the_end_that_reaches_further(data: bytes, a: int, b: int) -> None:
    start, end = min(a, b), max(a, b)
    result = evaluate("byte", (start, end), data, media_type="application/octet-stream")
    assert result.past_end == (start >= len(data) and end > len(data))
    assert result.data == data[start:end]


def test_pdi_grammar_3_end_before_start_is_an_error() -> None:
    with pytest.raises(ParseError, match="ends before it starts"):
        evaluate("byte", (5, 2), b"abcdefg", media_type="image/png")


@pytest.mark.parametrize("positions", [(1,), (1, 2, 3), ("a", 2), (1, (2, 3)), (-1, 2), (True, 2)])
def test_byte_positions_are_two_octet_offsets(positions: tuple[object, ...]) -> None:
    with pytest.raises(ParseError):
        evaluate("byte", positions, b"abc", media_type="image/png")


@given(st.binary(max_size=64), st.integers(0, 80), st.integers(0, 80))
def test_byte_matches_a_slice(data: bytes, a: int, b: int) -> None:
    start, end = min(a, b), max(a, b)
    result = evaluate("byte", (start, end), data, media_type="application/octet-stream")
    assert result.data == data[start:end]
    assert result.clamped == (end > len(data))


@given(st.lists(st.one_of(st.integers(), st.text(max_size=3), st.none()), max_size=4))
def test_byte_only_raises_pdi_errors(positions: list[object]) -> None:
    try:
        evaluate("byte", positions, b"abcdef", media_type="image/png")
    except PDIError:
        pass
