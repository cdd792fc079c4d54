"""pdi.interop.accept: the Accept field of RFC 9110 §12.5.1, its examples and its precedence rules."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pdi.interop.accept import choose, parse_accept, preference


def test_rfc9110_12_5_1_precedence_example() -> None:
    # RFC 9110 §12.5.1: "text/*;q=0.3, text/plain;q=0.7, text/plain;format=flowed,
    #   text/plain;format=fixed;q=0.4, */*;q=0.5" gives text/plain 0.7 (parameters of ranges aside),
    #   text/html 0.3, image/jpeg 0.5
    ranges = parse_accept("text/*;q=0.3, text/plain;q=0.7, */*;q=0.5")
    assert preference(ranges, "text/plain")[0] == 0.7
    assert preference(ranges, "text/html")[0] == 0.3
    assert preference(ranges, "image/jpeg")[0] == 0.5


def test_rfc9110_12_5_1_audio_example() -> None:
    # "Accept: audio/*; q=0.2, audio/basic": audio/basic preferred, other audio at 0.2
    ranges = parse_accept("audio/*; q=0.2, audio/basic")
    assert choose(ranges, ["audio/mpeg", "audio/basic"]) == 1
    assert preference(ranges, "audio/mpeg") == (0.2, 2)
    assert choose(ranges, ["text/plain"]) is None


def test_no_accept_means_anything_and_q0_means_not() -> None:
    assert preference([], "image/png") == (1.0, 1)
    assert choose(parse_accept("text/plain;q=0"), ["text/plain"]) is None
    assert choose(parse_accept("text/plain;q=0, */*"), ["text/plain", "text/html"]) == 1


def test_malformed_ranges_are_left_out() -> None:
    assert parse_accept("text/plain;q=2, text/html;q=x, */plain, nonsense, image/png;q=0.5") == parse_accept(
        "image/png;q=0.5")
    assert [(r.type, r.subtype) for r in parse_accept("TEXT/Plain")] == [("text", "plain")]


types = st.sampled_from(["text/plain", "text/html", "image/png", "application/json", "audio/wav"])
ranges = st.lists(st.tuples(st.sampled_from(["text/plain", "text/*", "*/*", "image/png", "application/json",
                                             "image/*", "audio/wav"]),
                            st.sampled_from(["", ";q=0", ";q=0.5", ";q=1", ";q=0.25"])), max_size=6)


@given(ranges, st.lists(types, min_size=1, max_size=5))
def test_choose_picks_an_acceptable_type_no_other_beats(field: list[tuple[str, str]], offered: list[str]) -> None:
    parsed = parse_accept(", ".join(r + q for r, q in field))
    chosen = choose(parsed, offered)
    keys = [preference(parsed, t) for t in offered]
    if chosen is None:
        assert all(k[0] == 0 for k in keys)
    else:
        assert keys[chosen][0] > 0 and keys[chosen] == max(keys) and keys.index(max(keys)) == chosen


@given(st.text(max_size=200))
def test_parse_accept_never_fails(text: str) -> None:
    for each in parse_accept(text):
        assert 0 <= each.q <= 1 and each.type == each.type.lower()
