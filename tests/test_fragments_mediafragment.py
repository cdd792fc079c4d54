"""Media Fragments URI 1.0 ``t=`` and ``xywh=``: the parser (§4.2.1, §4.2.2) and the native names they equal.

Expected values are the spec's own examples or worked out by hand from its
definitions; the property tests compare the samples and pixels the native
name selects with those the Media Fragment's definition selects, computed
independently from the numbers the test drew.
"""

from __future__ import annotations

import io
import math
import wave
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from pdi import fragments
from pdi.errors import ParseError, UnsupportedError
from pdi.fragments.mediafragment import (
    MediaRegion,
    MediaTime,
    is_media_fragment,
    native_region,
    native_time,
    parse_media_fragment,
    parse_region,
    parse_time,
)


@pytest.mark.parametrize(
    ("value", "begin", "end"),
    [
        ("10,20", "10", "20"),  # §4.2.1 examples
        ("npt:10,20", "10", "20"),
        ("npt:10", "10", None),
        ("10", "10", None),
        (",20", "0", "20"),
        ("npt:,121.5", "0", "121.5"),
        ("0:02:00,121.5", "120", "121.5"),
        ("npt:120,0:02:01.5", "120", "121.5"),
        ("01:02.5,02:00", "62.5", "120"),
        ("1:00:00,1:00:01", "3600", "3601"),
        ("10.,20", "10", "20"),
    ],
)
def test_4_2_1_npt_times(value: str, begin: str, end: str | None) -> None:
    assert parse_time(value) == MediaTime(Decimal(begin), None if end is None else Decimal(end))


@pytest.mark.parametrize("value", ["", ",", "20,10", "10,10", "1:2:3", "00:60", "00:00:60", "a", "10,", "-1,2", "1e3"])
def test_4_2_1_what_is_not_an_npt_time(value: str) -> None:
    with pytest.raises(ParseError):
        parse_time(value)


def test_4_2_1_smpte_and_clock_are_unsupported() -> None:
    with pytest.raises(UnsupportedError, match="npt"):
        parse_time("smpte-30:0:02:00,0:02:01:15")
    with pytest.raises(UnsupportedError):
        parse_time("clock:2011-10-01T23:00:45Z")


def test_4_1_an_invalid_smpte_or_clock_time_is_passed_over() -> None:
    # §4.1: only the last valid occurrence counts; a t= value that is not §4.2.1's smpte or clock grammar is not one
    assert parse_media_fragment("t=3,7&t=smpte:junk") == MediaTime(Decimal(3), Decimal(7))
    assert parse_media_fragment("t=3&t=smpte:00:00:02,00:00:01") == MediaTime(Decimal(3), None)  # end before begin
    assert parse_media_fragment("t=smpte-25:xx&xywh=1,2,3,4") == MediaRegion(1, 2, 3, 4)
    for bad in ("clock:", "clock:2011-13-01T00:00:00Z", "smpte:1:02", "smpte-30:0:00:60", "smpte:0:00:01,"):
        with pytest.raises(ParseError):
            parse_time(bad)
    with pytest.raises(UnsupportedError):
        parse_media_fragment("t=3&t=smpte-30-drop:0:02:00:29.99")
    # RFC 3339 times: a begin 0.8 µs before the end is before it; 23:00:46+01:00 is 22:00:46Z, before 23:00:45Z
    with pytest.raises(UnsupportedError):
        parse_media_fragment("t=3&t=clock:2011-10-01T23:00:45.1234561Z,2011-10-01T23:00:45.1234569Z")
    assert parse_media_fragment("t=3&t=clock:2011-10-01T23:00:45Z,2011-10-01T23:00:46+01:00") == MediaTime(
        Decimal(3), None)


def test_4_2_2_xywh_examples() -> None:
    assert parse_region("160,120,320,240") == MediaRegion(160, 120, 320, 240, "pixel")
    assert parse_region("pixel:160,120,320,240") == MediaRegion(160, 120, 320, 240, "pixel")
    assert parse_region("percent:25,25,50,50") == MediaRegion(25, 25, 50, 50, "percent")
    for bad in ("160,120,320", "em:1,2,3,4", "1,2,0,4", "percent:100,0,1,10", "percent:0,100,1,1", "1.5,2,3,4"):
        with pytest.raises(ParseError):
            parse_region(bad)


def test_4_1_name_value_pairs() -> None:
    assert is_media_fragment("t=10,20") and is_media_fragment("xywh=1,2,3,4") and is_media_fragment("track=a&t=1")
    assert not is_media_fragment("char=1,2") and not is_media_fragment(":~:text=t")
    assert parse_media_fragment("%74=1,2") == MediaTime(Decimal(1), Decimal(2))  # names are percent-decoded
    assert parse_media_fragment("t=1,2&t=3,4") == MediaTime(Decimal(3), Decimal(4))  # the last one counts
    assert parse_media_fragment("track=x&t=5") == MediaTime(Decimal(5), None)
    with pytest.raises(ParseError, match="not both"):
        parse_media_fragment("t=1,2&xywh=1,2,3,4")


#: The temporal user-agent test cases of the W3C Media Fragments Working Group
#: (http://www.w3.org/2008/WebVideo/Fragments/TC/ua-test-cases, as WebKit's LayoutTests/media/media-fragments
#: carry them): the fragment, and the begin and end it selects (``None``: no end), or ``None``: not valid.
_W3C_UA_CASES = {
    "TC0001": ("t=,", None), "TC0002": ("t=3,3", None), "TC0003": ("t=7,3", None),
    "TC0005": ("t=3,7", ("3", "7")), "TC0011": ("t=3", ("3", None)), "TC0012": ("t=3,", None),
    "TC0015": ("t=,7", ("0", "7")), "TC0024": ("t=npt:3,7", ("3", "7")), "TC0027": ("t=banana", None),
    "TC0028": ("t=3,banana", None), "TC0029": ("t=banana,7", None), "TC0030": ("t='3'", None),
    "TC0031": ("t=3-7", None), "TC0032": ("t=3:7", None), "TC0033": ("t=3,7,9", None),
    "TC0035": ("%74=3", ("3", None)), "TC0036": ("t=%33", ("3", None)), "TC0037": ("t=3%2C7", ("3", "7")),
    "TC0038": ("t=%6Ept:3", ("3", None)), "TC0039": ("t=npt%3A3", ("3", None)), "TC0044": ("t=-1,3", None),
    "TC0051": ("t=3&", ("3", None)), "TC0052": ("u=12&t=3", ("3", None)), "TC0053": ("t=foo:7&t=npt:3", ("3", None)),
    "TC0054": ("&&=&=tom&jerry=&t=3&t=meow:0#", ("3", None)), "TC0055": ("t=7&t=3", ("3", None)),
    "TC0059": ("t=smpte:00:00:01&t=npt:3", ("3", None)), "TC0061": ("t=", None), "TC0062": ("t=.", None),
    "TC0063": ("t=.0", None), "TC0064": ("t=0s", None), "TC0065": ("t=,0s", None), "TC0066": ("t=0s,0s", None),
    "TC0067": ("t=00:00:00s", None), "TC0068": ("t=s", None), "TC0069": ("t=npt:", None),
    "TC0070": ("t=1e-1", None), "TC0071": ("t=00:00:01.1e-1", None), "TC0072": ("t=3.", ("3", None)),
    "TC0073": ("t=0:0:0", None), "TC0074": ("t=0:00:60", None), "TC0075": ("t=0:01:60", None),
    "TC0076": ("t=0:60:00", None), "TC0077": ("t=0:000:000", None), "TC0078": ("t=00:00:03,00:00:07", ("3", "7")),
    "TC0079": ("t=3,00:00:07", ("3", "7")), "TC0080": ("t=00:00.", ("0", None)), "TC0081": ("t=0:00:00.", ("0", None)),
    "TC0082": ("t=0:00:10e-1", None), "TC0083": ("t=0:00:60.000", None), "TC0084": ("t=0:60:00.000", None),
    "TC0085": ("t=3,7&t=foo", ("3", "7")), "TC0086": ("foo&t=3,7", ("3", "7")), "TC0087": ("t=3,7&foo", ("3", "7")),
    "TC0088": ("t=3,7&&", ("3", "7")), "TC0089": ("&t=3,7", ("3", "7")), "TC0090": ("&&t=3,7", ("3", "7")),
    "TC0091": ("&t=3,7&", ("3", "7")), "TC0093": ("t=10%26", None), "TC0094": ("t=3,7,", None),
    "TC0095": ("t=0:00:03,0:00:07", ("3", "7")),
}


@pytest.mark.parametrize("case", sorted(_W3C_UA_CASES))
def test_4_1_the_w3c_user_agent_test_cases(case: str) -> None:
    """Found by an attack (2026-11-27): of a dimension given twice an invalid last one (TC0054, TC0085) was an
    error, where §4.1 interprets "only the last valid occurrence"."""
    fragment, selected = _W3C_UA_CASES[case]
    assert is_media_fragment(fragment)
    if selected is None:
        with pytest.raises(ParseError):
            parse_media_fragment(fragment)
        return
    begin, end = selected
    assert parse_media_fragment(fragment) == MediaTime(Decimal(begin), None if end is None else Decimal(end))


def test_4_1_of_a_dimension_the_last_valid_occurrence_counts() -> None:
    assert parse_media_fragment("xywh=1,2,3,4&xywh=1,2,0,4") == MediaRegion(1, 2, 3, 4)
    assert parse_media_fragment("t=1,2&xywh=1,2,0,4") == MediaTime(Decimal(1), Decimal(2))  # no valid xywh: time
    with pytest.raises(ParseError, match="banana"):  # none valid: the last one's error
        parse_media_fragment("t=apple&t=banana")
    for not_media in ("t%3D3", "t%3d10", "T=3,7"):  # TC0034, TC0092, TC0058: no t= pair at all
        assert not is_media_fragment(not_media)


def test_native_names() -> None:
    assert native_time(MediaTime(Decimal(10), Decimal(20))) == ("sec", (10, 20), False)
    assert native_time(MediaTime(Decimal("1.5"), Decimal(3))) == ("msec", (1500, 3000), False)
    assert native_time(MediaTime(Decimal("1.0004"), Decimal(3))) == ("msec", (1000, 3000), True)
    assert native_time(MediaTime(Decimal(2), None), duration_ms=4500) == ("msec", (2000, 4500), False)
    assert native_region(MediaRegion(160, 120, 320, 240)) == ((160, 120), (480, 360))
    # 25 % of 10 pixels is 2.5: the left edge rounds down, 75 % (7.5) the right edge up
    assert native_region(MediaRegion(25, 25, 50, 50, "percent"), width=10, height=4) == ((2, 1), (8, 3))


def wav(frames: int, rate: int) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join((k % 30000).to_bytes(2, "little", signed=True) for k in range(frames)))
    return out.getvalue()


@given(
    st.integers(1, 4000), st.sampled_from([8000, 11025, 44100]),
    st.decimals(0, 3, places=3), st.decimals(Decimal("0.001"), 3, places=3),
)
@settings(max_examples=60, deadline=None)
def test_t_selects_the_samples_its_definition_says(frames: int, rate: int, begin: Decimal, length: Decimal) -> None:
    end = begin + length
    data = wav(frames, rate)
    scheme, (a, b), rounded = native_time(parse_time(f"{begin},{end}"))
    assert not rounded
    result = fragments.evaluate(scheme, (a, b), data, media_type="audio/wav")
    assert result.interval is not None
    # Media Fragments: the samples from time begin (included) to time end (excluded): k/rate in [begin, end)
    first = min(frames, math.ceil(Fraction(begin) * rate))
    last = min(frames, math.ceil(Fraction(end) * rate))
    assert (result.interval.start, result.interval.end) == (first, max(first, last))


@given(st.integers(1, 40), st.integers(1, 40), st.integers(0, 50), st.integers(0, 50), st.integers(1, 50),
       st.integers(1, 50))
@settings(max_examples=60, deadline=None)
def test_xywh_selects_the_pixels_its_definition_says(width: int, height: int, x: int, y: int, w: int, h: int) -> None:
    image = Image.new("RGB", (width, height))
    out = io.BytesIO()
    image.save(out, "PNG")
    (x1, y1), (x2, y2) = native_region(parse_region(f"{x},{y},{w},{h}"))
    region = fragments.evaluate("rect", ((x1, y1), (x2, y2)), out.getvalue(), media_type="image/png").region
    assert region is not None
    # §4.2.2: the rectangle x ≤ px < x+w, y ≤ py < y+h, clipped to the image
    assert (region.x1, region.x2) == (min(x, width), min(x + w, width))
    assert (region.y1, region.y2) == (min(y, height), min(y + h, height))


def _npt_value(text: str) -> Fraction:
    """An npt time's seconds, exactly (§4.2.1, read independently of the parser)."""
    parts = text.split(":")
    seconds = Fraction(Decimal(parts[-1].rstrip(".") or "0"))
    for k, part in enumerate(reversed(parts[:-1]), start=1):
        seconds += int(part) * 60**k
    return seconds


_digits = st.text(alphabet="0123456789", min_size=1, max_size=40)
_npt_times = st.one_of(
    st.tuples(_digits, st.one_of(st.just(""), st.just("."), _digits.map(lambda d: "." + d))).map("".join),
    st.tuples(_digits, st.integers(0, 59), st.integers(0, 59), st.sampled_from(["", ".5", ".0004", "." + "9" * 12]))
    .map(lambda t: f"{t[0]}:{t[1]:02d}:{t[2]:02d}{t[3]}"),
)


@given(_npt_times, _npt_times)
@settings(max_examples=300, deadline=None)
def test_long_times_are_read_exactly_or_refused_never_a_crash(first: str, second: str) -> None:
    # Up to 45 characters a time is read: its seconds, and their milliseconds, exactly (the default decimal
    # context's 28 digits rounded 99999999999999999999999999999:00:00.5 and failed to quantize a long time's
    # milliseconds, an InvalidOperation that the resolver answered 500); past that a ParseError.
    a, b = sorted((first, second), key=_npt_value)
    try:
        time = parse_time(f"{a},{b}")
    except ParseError:
        assert max(len(a), len(b)) > 45 or _npt_value(a) == _npt_value(b)
        return
    assert time.end is not None
    assert (Fraction(time.begin), Fraction(time.end)) == (_npt_value(a), _npt_value(b))
    try:
        scheme, (start, end), rounded = native_time(time)
    except ParseError:  # shorter than a millisecond
        assert (_npt_value(b) - _npt_value(a)) * 1000 < 1
        return
    unit = 1 if scheme == "sec" else 1000
    for got, want in ((start, _npt_value(a)), (end, _npt_value(b))):
        exact = want * unit
        assert abs(got - exact) <= Fraction(1, 2) and rounded >= (got != exact)


def test_a_time_of_40_digits_is_its_milliseconds() -> None:
    time = parse_time("0.5,99999999999999999999999999999999999.5")
    assert native_time(time) == ("msec", (500, 99999999999999999999999999999999999500), False)
    hours = parse_time("99999999999999999999999999999:00:00.5,99999999999999999999999999999:00:00.75")
    assert hours.begin == Decimal("359999999999999999999999999996400.5")  # not rounded to 28 digits


# §4.2.1's grammar, written out here: the three time formats, and of each a begin, ``begin,end`` or ``,end``
_REF_NPT = r"(?:[0-9]+(?:\.[0-9]*)?|[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?|[0-9]+:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?)"
_REF_SMPTE = r"(?:[0-9]+:[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{2})?)?)"
_REF_CLOCK = r"(?:[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2}))"


def _ref_range(time: str) -> str:
    return f"(?:{time}(?:,{time})?|,{time})"


def _ref_times(value: str) -> tuple[str, list[str]] | None:
    """The format and the times of a ``t=`` value §4.2.1's grammar accepts, else None."""
    import re

    for prefix, time in (("(?:npt:)?", _REF_NPT), ("(?:smpte|smpte-25|smpte-30|smpte-30-drop):", _REF_SMPTE),
                         ("clock:", _REF_CLOCK)):
        m = re.fullmatch(f"({prefix}){_ref_range(time)}", value)
        if m:
            fmt = m.group(1).rstrip(":") or "npt"
            return ("smpte" if fmt.startswith("smpte") else fmt), value[m.end(1):].split(",")
    return None


def _ref_key(fmt: str, time: str) -> object | None:
    """A time's place (None: out of range): npt seconds; smpte (h, m, s, frames, subframes); clock a datetime."""
    from datetime import datetime

    if fmt == "clock":  # to the second, and the fraction exactly (a datetime keeps microseconds)
        head, dot, tail = time.partition(".")
        zone = tail.lstrip("0123456789")
        fraction = Fraction(Decimal("0." + tail[: len(tail) - len(zone)])) if dot else Fraction(0)
        try:
            return datetime.fromisoformat((head + zone if dot else time).replace("Z", "+00:00")), fraction
        except ValueError:
            return None
    parts = time.split(":")
    if fmt == "npt":
        if len(parts) > 1 and (int(parts[-2]) > 59 or Fraction(Decimal(parts[-1].rstrip("."))) >= 60):
            return None
        return _npt_value(time)
    fields = [int(p) for p in time.replace(".", ":").split(":")]
    return None if fields[1] > 59 or fields[2] > 59 else (*fields, 0, 0)[:5]


def _ref_valid(value: str) -> tuple[str, Fraction | None, Fraction | None] | None:
    """A valid ``t=`` value's format and (for npt) its begin and end seconds; None if it is not valid."""
    found = _ref_times(value)
    if found is None:
        return None
    fmt, times = found
    keys = [None if not t else _ref_key(fmt, t) for t in times]
    if any(t and k is None for t, k in zip(times, keys, strict=True)):
        return None
    if len(times) == 2 and times[0] and not keys[0] < keys[1]:  # type: ignore[operator]
        return None
    if fmt != "npt":
        return fmt, None, None
    begin = keys[0] if times[0] else Fraction(0)
    end = keys[1] if len(times) == 2 else None
    if (begin is not None and not isinstance(begin, Fraction)) or (end is not None and not isinstance(end, Fraction)):
        return None
    if end is not None and begin >= end:  # ",0": no time before 0
        return None
    return fmt, begin, end


_time_piece = st.one_of(
    st.sampled_from(["npt:", "smpte:", "smpte-25:", "smpte-30:", "smpte-30-drop:", "clock:", "", ",", ":", ".", "T",
                     "Z", "+01:00", "-", "2011-10-01T23:00:45Z", "2011-10-01T23:00:46", "2011-02-30T00:00:00Z",
                     "2011-10-01T23:00:45.1234561Z", "2011-10-01T23:00:45.1234569Z", "2011-10-01T23:00:45.5",
                     "0:00:01:12.05", "1:02:03", "01:02", "00:59", "00:60", "99", "3", "7", ".5"]),
    st.text(alphabet="0123456789:.,", max_size=6),
)


@given(st.lists(_time_piece, max_size=5).map("".join), st.sampled_from(["", "t=3,7&", "xywh=1,2,3,4&"]))
@settings(max_examples=300)
def test_a_t_value_is_read_as_the_grammar_says(value: str, before: str) -> None:
    """An npt value the grammar accepts is its times; a valid smpte or clock value is an UnsupportedError; any
    other value is passed over for an earlier valid one (§4.1), and alone is a ParseError. Found by this test:
    ``t=3,7&t=smpte:junk`` was an UnsupportedError, where the invalid last ``t`` is passed over for ``t=3,7``."""
    want = _ref_valid(value)
    fragment = before + "t=" + value.replace("%", "%25").replace("&", "%26")
    if want is not None and want[0] != "npt":
        with pytest.raises(UnsupportedError):
            parse_media_fragment(fragment)
        return
    if want is None:
        if before.startswith("t="):
            assert parse_media_fragment(fragment) == MediaTime(Decimal(3), Decimal(7))
        elif before.startswith("xywh="):
            assert parse_media_fragment(fragment) == MediaRegion(1, 2, 3, 4)
        else:
            with pytest.raises(ParseError):
                parse_media_fragment(fragment)
        return
    _, begin, end = want
    if before.startswith("xywh="):
        with pytest.raises(ParseError, match="not both"):
            parse_media_fragment(fragment)
        return
    try:
        got = parse_media_fragment(fragment)
    except ParseError as error:  # a time of more than 45 characters is refused as too long
        assert "too long" in str(error)
        return
    assert isinstance(got, MediaTime)
    assert (Fraction(got.begin), None if got.end is None else Fraction(got.end)) == (begin, end)


@given(st.integers(0, 120), st.integers(0, 120), st.integers(0, 120), st.integers(0, 120), st.integers(1, 60),
       st.integers(1, 60))
@settings(max_examples=300)
def test_xywh_percent_selects_the_pixels_it_covers_clipped_to_the_image(
    x: int, y: int, w: int, h: int, width: int, height: int
) -> None:
    """Media Fragments' semantics of ``xywh``: a region whose top-left corner is outside the media (``x`` or ``y``
    at 100 % or more) is an error; one that begins inside and reaches past the edge is clipped to it. In percent,
    the pixels are those the region touches (pdi's reading: left and top edges down, right and bottom up). Found by
    this test: ``xywh=percent:60,0,50,10`` was refused as "reaches past 100 %"."""
    value = f"percent:{x},{y},{w},{h}"
    if w == 0 or h == 0 or x >= 100 or y >= 100:
        with pytest.raises(ParseError):
            parse_region(value)
        return
    (x1, y1), (x2, y2) = native_region(parse_region(value), width=width, height=height)
    # the pixel columns [i, i+1) that meet the region [x %, min(x+w, 100) %) of the width, exactly
    columns = [i for i in range(width) if Fraction(i) < Fraction(min(x + w, 100) * width, 100)
               and Fraction(i + 1) > Fraction(x * width, 100)]
    rows = [j for j in range(height) if Fraction(j) < Fraction(min(y + h, 100) * height, 100)
            and Fraction(j + 1) > Fraction(y * height, 100)]
    assert (x1, x2) == ((columns[0], columns[-1] + 1) if columns else (x1, x1))
    assert (y1, y2) == ((rows[0], rows[-1] + 1) if rows else (y1, y1))
