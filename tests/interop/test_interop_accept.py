"""pdi.interop.accept: the Accept field of RFC 9110 §12.5.1, its examples and its precedence rules."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from pdi.interop.accept import MAX_RANGES, _elements, choose, parse_accept, preference


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


# RFC 9110 §12.5.1, §5.6.2 (token), §5.6.4 (quoted-string, quoted-pair), §5.6.6 (parameters), restated.
_TCHAR = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_token = st.text(_TCHAR, min_size=1, max_size=8)
#: qdtext and quoted-pair: a list's comma and a parameter's semicolon among them
_quoted_text = st.lists(st.sampled_from([*"ab ,;=/:\t", "\u00e9", '\\"', "\\\\", "\\a"]), max_size=10).map("".join)


def _unquoted(text: str) -> str:
    """A quoted-string's content read: each quoted-pair is the character after its backslash."""
    out, at = [], 0
    while at < len(text):
        if text[at] == "\\":
            at += 1
        out.append(text[at])
        at += 1
    return "".join(out)


@st.composite
def _media_ranges(draw: st.DrawFn) -> tuple[str, tuple[str, str, float, str | None]]:
    """One media-range written by the grammar, and what it says: type and subtype lower-cased, its weight, and its
    first ``profile`` parameter before the weight (the media type's own parameters; after it, accept-ext)."""
    major = draw(_token.filter(lambda t: t != "*"))
    minor = draw(_token)
    written = f"{major}/{minor}"
    profile = None
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(["profile", "Profile", "charset", "level"]) | _token.filter(
            lambda t: t.lower() != "q"))
        if draw(st.booleans()):
            raw = draw(_quoted_text)
            value, read = f'"{raw}"', _unquoted(raw)
        else:
            value = read = draw(_token)
        written += draw(st.sampled_from([";", "; ", " ;", ";\t"])) + f"{name}={value}"
        if name.lower() == "profile" and profile is None:
            profile = read
    q = 1.0
    if draw(st.booleans()):
        weight = draw(st.sampled_from(["0", "0.5", "0.25", "1", "1.000", "0.001"]))
        q = float(weight)
        written += f";q={weight}"
        if draw(st.booleans()):
            written += f'; profile="{draw(_quoted_text)}"'  # accept-ext: not the media type's profile
    return written, (major.lower(), minor.lower(), q, profile)


@given(st.lists(_media_ranges(), min_size=1, max_size=5), st.sampled_from([",", ", ", " , ", ",\t"]))
@example([('text/html;q=0.1', ("text", "html", 0.1, None)),
          ('application/ld+json;profile="https://a.example/x,y"', ("application", "ld+json", 1.0,
                                                                    "https://a.example/x,y"))], ", ")
def test_every_range_written_by_the_grammar_is_read_as_it_says(ranges: list[tuple[str, tuple[str, str, float,
                                                                                              str | None]]],
                                                                comma: str) -> None:
    """A quoted parameter may hold a comma (a profile's IRI may, ``https://a.example/x,y``) or an escaped quote: it
    cuts no range in two, and the range is read, not left out as malformed."""
    field = comma.join(written for written, _ in ranges)
    read = parse_accept(field)
    assert [(r.type, r.subtype, r.q, r.profile) for r in read] == [said for _, said in ranges], field


def test_a_quote_never_closed_leaves_the_other_ranges_read() -> None:
    assert [(r.type, r.subtype) for r in parse_accept('text/html;x=", application/json')] == [("application", "json")]


#: RFC 9110 §5.6.4: a quoted-string, any character but a quote or a backslash standing for itself, a backslash
#: quoting the one after it (quoted-pair)
_QUOTED_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _cut(value: str) -> list[str]:
    """A list field's elements (RFC 9110 §5.6.1), written out: cut at each comma outside a quoted string; a quote
    that opens none (never closed) is a character like any other."""
    pieces, start, at = [], 0, 0
    while at < len(value):
        if value[at] == '"' and (quoted := _QUOTED_STRING.match(value, at)) is not None:
            at = quoted.end()
            continue
        if value[at] == ",":
            pieces.append(value[start:at])
            start = at + 1
        at += 1
    return [*pieces, value[start:]][:MAX_RANGES]


@given(st.lists(st.sampled_from(['"', "\\", ",", "a", ";", "=", "/", " "]), max_size=60).map("".join))
@example('text/html;x=", application/json')
@example('a;p="x\\",y", b')
@example('"\\')
def test_a_list_is_cut_at_each_comma_outside_a_quoted_string(value: str) -> None:
    assert _elements(value) == _cut(value)


def test_quotes_never_closed_are_read_in_one_pass() -> None:
    # each quote never closed was read to the end again: quadratic, a minute of a worker's CPU for 30,000 octets
    # of "\ (each quote's backslash quoting the next quote); this field would take hours
    assert _elements('"\\' * 500_000) == ['"\\' * 500_000]
    assert parse_accept('"\\' * 500_000 + ", text/html") == parse_accept("text/html")
