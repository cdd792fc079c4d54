"""pdi.interop.memento: RFC 7089's datetimes, the TimeGate's choice and its Link values, against independent readers."""

from __future__ import annotations

import datetime
import email.utils

import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from pdi.errors import ParseError
from pdi.interop.memento import (
    Memento,
    http_datetime,
    memento_links,
    parse_http_datetime,
    select,
    timegate_links,
    timemap,
)

moments = st.datetimes(
    min_value=datetime.datetime(1000, 1, 1), max_value=datetime.datetime(9999, 12, 31, 23, 59, 59),
    timezones=st.just(datetime.UTC),
).map(lambda d: d.replace(microsecond=0))


def test_rfc7089_2_1_1_the_example_datetime() -> None:
    # RFC 7089 §2.1.1: "Accept-Datetime: Thu, 31 May 2007 20:35:00 GMT"
    moment = parse_http_datetime("Thu, 31 May 2007 20:35:00 GMT")
    assert moment == datetime.datetime(2007, 5, 31, 20, 35, tzinfo=datetime.UTC)
    assert http_datetime(moment) == "Thu, 31 May 2007 20:35:00 GMT"


@given(moments)
def test_http_datetime_is_what_the_standard_library_writes_and_reads(moment: datetime.datetime) -> None:
    written = http_datetime(moment)
    assert written == email.utils.format_datetime(moment, usegmt=True)
    assert parse_http_datetime(written) == moment == email.utils.parsedate_to_datetime(written)


# RFC 7089 §2.1.1: Accept-Datetime is an RFC 1123 date in GMT, as the standard library writes one
_WRITTEN = moments.map(lambda m: email.utils.format_datetime(m, usegmt=True))


@given(st.one_of(st.text(max_size=40), _WRITTEN))
def test_parse_http_datetime_accepts_only_what_it_writes(text: str) -> None:
    try:
        expected = email.utils.parsedate_to_datetime(text)
        valid = email.utils.format_datetime(expected, usegmt=True) == text and expected.tzinfo is not None
    except (TypeError, ValueError, IndexError, OverflowError):
        valid = False
    try:
        moment = parse_http_datetime(text)
    except ParseError as wrong:
        assert not valid, f"{text!r} is an RFC 1123 date in GMT but was refused"
        assert wrong.rule in ("rfc1123-date", "wkday", "month")
        return
    assert http_datetime(moment) == text.strip(" \t")
    if valid:
        assert moment == expected


@pytest.mark.parametrize(("text", "rule"), [
    ("Thu, 31 May 2007 20:35:00 UTC", "rfc1123-date"),
    ("Thu, 31 Mai 2007 20:35:00 GMT", "month"),
    ("Don, 31 May 2007 20:35:00 GMT", "wkday"),
    ("Fri, 31 May 2007 20:35:00 GMT", "wkday"),  # it was a Thursday
    ("Thu, 31 Jun 2007 20:35:00 GMT", "rfc1123-date"),
    ("thu, 31 may 2007 20:35:00 gmt", "rfc1123-date"),
    ("Thursday, 31-May-07 20:35:00 GMT", "rfc1123-date"),
])
def test_parse_http_datetime_says_what_is_wrong(text: str, rule: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_http_datetime(text)
    assert caught.value.rule == rule and "Accept-Datetime" in str(caught.value)


def _told(moment: datetime.datetime) -> datetime.datetime:
    """A datetime as Memento tells it (RFC 7089 §2.1.1: rfc1123-date, to the second), read back."""
    return parse_http_datetime(http_datetime(moment))


#: deposit times as the catalog keeps them, to the microsecond
precise = st.datetimes(min_value=datetime.datetime(1000, 1, 1), max_value=datetime.datetime(9999, 12, 31, 23, 59, 59),
                       timezones=st.just(datetime.UTC))


@given(st.lists(precise, min_size=1, max_size=30, unique=True), moments)
def test_select_is_the_nearest_and_the_earlier_of_two(times: list[datetime.datetime], wanted: datetime.datetime) -> None:
    mementos = sorted(Memento(t, f"http://a.example/{i}") for i, t in enumerate(times))
    chosen = mementos[select(mementos, wanted)]
    # nearest as the client can see it: the datetimes told (Memento-Datetime, a TimeMap), and Accept-Datetime's
    asked = _told(wanted)
    distance = abs(_told(chosen.datetime) - asked)
    assert all(abs(_told(m.datetime) - asked) >= distance for m in mementos)
    assert all(m.datetime >= chosen.datetime for m in mementos if abs(_told(m.datetime) - asked) == distance)
    assert select(mementos, None) == len(mementos) - 1


@given(st.lists(st.integers(0, 999_999), min_size=1, max_size=5, unique=True))
def test_a_memento_told_at_the_second_asked_is_chosen_over_a_nearer_one_told_a_second_before(micros: list[int]) -> None:
    # deposits at 06:04:25.91 and then within 06:04:26: asked for 06:04:26, a TimeGate that compared microseconds
    # chose the one its TimeMap and Memento-Datetime tell as 06:04:25
    before = datetime.datetime(2026, 11, 26, 6, 4, 25, 910_000, tzinfo=datetime.UTC)
    within = sorted(before.replace(second=26, microsecond=m) for m in micros)
    mementos = [Memento(t, f"http://a.example/{i}") for i, t in enumerate([before, *within])]
    asked = parse_http_datetime("Thu, 26 Nov 2026 06:04:26 GMT")
    chosen = mementos[select(mementos, asked)]
    assert http_datetime(chosen.datetime) == "Thu, 26 Nov 2026 06:04:26 GMT" and chosen.datetime == within[0]


def _mementos(n: int) -> list[Memento]:
    start = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
    return [Memento(start + datetime.timedelta(days=i), f"http://arxiv.example.net/web/{i}") for i in range(n)]


@given(st.integers(1, 12), st.data())
def test_timegate_links_name_first_last_prev_next_around_the_chosen(n: int, data: st.DataObject) -> None:
    mementos = _mementos(n)
    chosen = data.draw(st.integers(0, n - 1))
    parsed = {e.pop("url"): e for e in requests.utils.parse_header_links(
        timegate_links("http://a.example.org/", "http://arxiv.example.net/timemap/x", mementos, chosen))}
    assert parsed["http://a.example.org/"] == {"rel": "original"}
    rels = {url: set(e["rel"].split()) for url, e in parsed.items() if "memento" in e["rel"].split()}
    assert "first" in rels[mementos[0].uri] and "last" in rels[mementos[-1].uri]
    if chosen > 0:
        assert "prev" in rels[mementos[chosen - 1].uri]
    if chosen < n - 1:
        assert "next" in rels[mementos[chosen + 1].uri]
    assert mementos[chosen].uri in rels
    assert sum("prev" in r for r in rels.values()) == (chosen > 0)
    assert sum("next" in r for r in rels.values()) == (chosen < n - 1)
    for url, e in parsed.items():
        if url in rels:
            assert parse_http_datetime(e["datetime"]) == next(m.datetime for m in mementos if m.uri == url)


def test_memento_links_name_no_other_memento() -> None:
    # a memento's answer is immutable: first/prev/next/last can all change later (a capture added
    # before or after it, or withdrawn), so only the original, the TimeGate, the TimeMap and itself
    mementos = _mementos(3)
    parsed = {e.pop("url"): e for e in requests.utils.parse_header_links(
        memento_links("http://a.example.org/", "http://g.example/", "http://t.example/", mementos[1]))}
    assert parsed == {
        "http://a.example.org/": {"rel": "original"},
        "http://g.example/": {"rel": "timegate"},
        "http://t.example/": {"rel": "timemap", "type": "application/link-format"},
        mementos[1].uri: {"rel": "memento", "datetime": http_datetime(mementos[1].datetime)},
    }


def test_rfc7089_5_1_1_timemap_shape() -> None:
    mementos = _mementos(2)
    text = timemap("http://a.example.org", "http://arxiv.example.net/timemap/http://a.example.org",
                   "http://arxiv.example.net/timegate/http://a.example.org", mementos)
    assert text.splitlines()[0] == '<http://a.example.org>; rel="original",'
    entries = requests.utils.parse_header_links(text.replace("\n", ""))
    assert [e["rel"] for e in entries] == ["original", "self", "timegate", "first memento", "last memento"]
    assert entries[1]["from"] == "Sat, 01 Jan 2000 00:00:00 GMT" and entries[1]["until"] == "Sun, 02 Jan 2000 00:00:00 GMT"


def test_a_link_target_with_angle_brackets_or_spaces_is_escaped() -> None:
    text = timemap("http://a.example.org/a b<c>", "http://t/", "http://g/", [])
    assert "<http://a.example.org/a%20b%3Cc%3E>" in text


def test_a_link_quotes_its_uri_as_urllib_quotes_it() -> None:
    # link() skips quote() for a URI that it would leave as it is: the same text either way, character by character
    from urllib.parse import quote

    from pdi.interop.memento import _URI_CHARACTERS, link

    for code in [*range(0x80), 0xE9, 0x2603, 0x1F600]:
        uri = f"http://example.org/a{chr(code)}b"
        assert link(uri, "original") == f'<{quote(uri, safe=_URI_CHARACTERS)}>; rel="original"', hex(code)
