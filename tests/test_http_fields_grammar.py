"""The conditional and range request fields a stranger sends, read against RFC 9110's own grammar.

Each property restates a rule of RFC 9110 as a small oracle here (its ABNF with
DIGIT = %x30-39, ``calendar``, ``time.asctime`` and ``email.utils`` for the
dates), and compares :mod:`pdi.server.http.conditional` with it on fields made
from the grammar's pieces and from near misses.
"""

from __future__ import annotations

import calendar
import datetime
import email.utils
import re
import time

from hypothesis import example, given
from hypothesis import strategies as st

from pdi.server.http.byteranges import MAX_PARTS, NEAR
from pdi.server.http.conditional import byte_ranges, http_date, if_match_holds, tag_matches

_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_LONG_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

# RFC 9110 §5.6.7, transcribed: DIGIT is %x30-39 (RFC 5234 Appendix B.1), SP one space.
_D = "[0-9]"
_TIME = f"({_D}{_D}):({_D}{_D}):({_D}{_D})"
_ORACLE_IMF = re.compile(f"(?:{'|'.join(_DAYS)}), ({_D}{_D}) ({'|'.join(_MONTHS)}) ({_D}{{4}}) {_TIME} GMT")
_ORACLE_ASCTIME = re.compile(f"(?:{'|'.join(_DAYS)}) ({'|'.join(_MONTHS)}) ((?:{_D}{_D})|(?: {_D})) {_TIME} ({_D}{{4}})")

_moments = st.datetimes(datetime.datetime(1, 1, 1), datetime.datetime(9999, 12, 31, 23, 59, 59)).map(
    lambda d: d.replace(microsecond=0))


def _imf(d: datetime.datetime) -> str:
    return f"{_DAYS[d.weekday()]}, {d.day:02d} {_MONTHS[d.month - 1]} {d.year:04d} {d:%H:%M:%S} GMT"


def _seconds(d: datetime.datetime) -> int:
    return calendar.timegm((d.year, d.month, d.day, d.hour, d.minute, d.second, 0, 0, 0))


@given(_moments)
def test_an_imf_fixdate_is_its_instant(moment: datetime.datetime) -> None:
    written = _imf(moment)
    assert http_date(written) == _seconds(moment)
    if moment.year >= 1900:  # email.utils reads older years as RFC 2822's obsolete two- and three-digit ones
        assert email.utils.parsedate_to_datetime(written) == moment.replace(tzinfo=datetime.UTC)


@given(_moments)
def test_an_asctime_date_is_its_instant(moment: datetime.datetime) -> None:
    written = time.asctime(moment.timetuple())  # C's asctime: "Sun Nov  6 08:49:37 1994", §5.6.7's asctime-date
    if moment.year < 1000:
        return  # asctime pads no year to four digits; §5.6.7 has only four
    assert http_date(written) == _seconds(moment)


# Fields near a date: a real date's characters with some swapped for other digits (any script's), spaces or letters.
_NEAR = st.sampled_from([*"0123456789 ,:-GMTa", "\u0660", "\u0663", "\u06f5", "\u0966", "\uff11", "\U0001d7ce",
                         "\u00b2", "\t"])


@st.composite
def _near_dates(draw: st.DrawFn) -> str:
    moment = draw(_moments)
    written = _imf(moment) if draw(st.booleans()) else time.asctime(moment.timetuple())
    chars = list(written)
    for _ in range(draw(st.integers(0, 3))):
        chars[draw(st.integers(0, len(chars) - 1))] = draw(_NEAR)
    return "".join(chars)


@given(_near_dates())
@example("Sun, \u00306 Nov 1994 08:49:37 GMT")
@example("Sun, \u06606 Nov 1994 08:49:37 GMT")  # ARABIC-INDIC DIGIT ZERO: no DIGIT of RFC 5234
@example("Sun Nov  \u0666 08:49:37 1994")
@example("Sun, 06 Nov 1994 08:49:\uff137 GMT")
@example("Sunday, 06-Nov-9\u0664 08:49:37 GMT")  # an rfc850-date (not in the oracle above): only its DIGITs count
def test_a_date_is_read_only_when_it_is_rfc_9110s_grammar(field: str) -> None:
    got = http_date(field)
    if (found := _ORACLE_IMF.fullmatch(field)) is not None:
        day, month, year, hour, minute, second = found.groups()
    elif (found := _ORACLE_ASCTIME.fullmatch(field)) is not None:
        month, day, hour, minute, second, year = found.groups()
    else:
        assert got is None, field
        return
    numbers = [int(year), _MONTHS.index(month) + 1, int(day), int(hour), int(minute), int(second)]
    try:
        real = datetime.datetime(*numbers[:5], min(numbers[5], 59)) if numbers[5] <= 60 else None
    except ValueError:
        real = None
    if real is None:
        assert got is None, field
    else:
        assert got == _seconds(real) + (numbers[5] == 60), field  # a leap second is read as the next


# RFC 9110 §14.1.1 and §14.1.2, restated.
def _oracle_ranges(field: str, length: int) -> set[int] | None:
    """The octets a Range field selects, ``set()`` for none (416), ``None`` for the whole body: no valid bytes
    range-set (an invalid or other-range spec, an unknown unit), or a suffix of an empty body."""
    unit, eq, range_set = field.partition("=")
    if not eq or unit.lower() != "bytes":
        return None
    specs = [s.strip(" \t") for s in range_set.split(",")]
    specs = [s for s in specs if s]  # §5.6.1.2: empty list elements do not count
    if not specs:
        return None
    chosen: set[int] = set()
    for spec in specs:
        if (m := re.fullmatch("([0-9]+)-([0-9]*)", spec)) is not None:
            first = int(m[1])
            last = int(m[2]) if m[2] else None
            if last is not None and last < first:
                return None  # invalid: the whole field is ignored
            chosen.update(range(first, length if last is None else min(last + 1, length)))
        elif (m := re.fullmatch("-([0-9]+)", spec)) is not None:
            if length == 0 and int(m[1]) > 0:
                return None  # pdi's reading: satisfiable, but no 206 spells it
            chosen.update(range(max(0, length - int(m[1])), length))
        else:
            return None
    return chosen


_spec = st.one_of(
    st.tuples(st.integers(0, 120), st.integers(0, 120)).map(lambda p: f"{p[0]}-{p[1]}"),
    st.integers(0, 120).map(lambda n: f"{n}-"),
    st.integers(0, 120).map(lambda n: f"-{n}"),
    st.sampled_from(["", " ", "-", "x", "1-2-3", "\u0661-2", "1-\u0662", "0x1-2", "+1-2", "1 -2", "--1", "1-+2"]),
)


@given(
    st.sampled_from(["bytes", "BYTES", "Bytes", "octets", "byte", "bytes ", ""]),
    st.lists(st.tuples(st.sampled_from(["", " ", "\t"]), _spec, st.sampled_from(["", " ", "\t"])), max_size=8),
    st.integers(0, 100),
)
def test_a_range_field_selects_the_octets_rfc_9110_says(unit: str, specs: list[tuple[str, str, str]],
                                                        length: int) -> None:
    """The octets sent are those asked, each once, and no others but the gaps §14.2 lets a server fill (found
    first by asking for every octet sent exactly: ``bytes=2-,0-0`` of 3 octets is sent as one part, 0-2)."""
    field = unit + "=" + ",".join("".join(s) for s in specs)
    want = _oracle_ranges(field, length)
    got = byte_ranges(field, length)
    if unit == "bytes ":
        return  # pdi allows space before "=" (no OWS there in §14.1.1's grammar): not compared
    if got is None:
        assert want is None, (field, length)
        return
    assert want is not None, (field, length)
    selected = [i for first, last in got for i in range(first, last + 1)]
    assert all(0 <= first <= last < length for first, last in got)
    assert len(set(selected)) == len(selected) and want <= set(selected), (field, length)  # every octet asked, once
    # §14.2: a server MAY coalesce ranges "separated by a gap that is smaller than the overhead of sending multiple
    # parts" (NEAR octets here): a part begins and ends at octets asked, and any other octet it sends is in such a gap
    assert all(first in want and last in want for first, last in got), (field, length)
    gaps = "".join("." if i in want else "x" for i in selected).replace(".", " ").split()
    assert all(len(gap) < NEAR for gap in gaps), (field, length)
    assert len(got) <= MAX_PARTS


# RFC 9110 §8.8.3: entity-tag = [ weak ] opaque-tag; weak = %s"W/"; opaque-tag = DQUOTE *etagc DQUOTE.
_opaque = st.text(st.sampled_from([chr(0x21), *map(chr, range(0x23, 0x7F)), "\u00e9", "\u00ff"]), max_size=6)


@given(st.lists(st.tuples(st.booleans(), _opaque), min_size=1, max_size=5), _opaque,
       st.sampled_from([",", ", ", " ,", " , ", ",\t", ",,", ", ,"]))
def test_a_tag_list_holds_a_tag_by_weak_and_strong_comparison(listed: list[tuple[bool, str]], mine: str,
                                                               comma: str) -> None:
    """§13.1.2: If-None-Match compares weakly (the W/ ignored); §13.1.1: If-Match strongly (a weak tag never
    matches)."""
    field = comma.join(("W/" if weak else "") + f'"{opaque}"' for weak, opaque in listed)
    tag = f'"{mine}"'
    assert tag_matches(field, tag) == any(opaque == mine for _, opaque in listed), field
    assert if_match_holds(field, tag) == any(opaque == mine and not weak for weak, opaque in listed), field
