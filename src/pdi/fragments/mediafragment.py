"""Media Fragments URI 1.0 (basic), ``#t=`` and ``#xywh=``, read as aliases of the PDI's ``sec``/``msec`` and ``rect``.

Implements, from the W3C Recommendation of 25 September 2012
(https://www.w3.org/TR/media-frags/):

* §4.1 the fragment as name-value pairs: split at ``&``, each at its first
  ``=``, name and value percent-decoded as UTF-8; names other than ``t``
  and ``xywh`` (``track``, ``id``, unknown ones) are passed over, and of a
  dimension given twice the last valid one counts (§4.1: ``t=3,7&t=foo``
  is ``t=3,7``); none valid is the last one's error;
* §4.2.1 temporal: ``t=`` with the ``npt`` format only (``npt:`` optional):
  ``npt-sec`` (``10``, ``10.5``), ``npt-mmss`` (``01:02.5``) and
  ``npt-hhmmss`` (``1:01:02``), minutes and seconds ``00``–``59``; a begin,
  ``begin,end`` or ``,end`` (begin 0); the begin before the end. Valid ``smpte``
  and ``clock`` times are :class:`~pdi.errors.UnsupportedError` (invalid ones
  are passed over, as any invalid value is);
* §4.2.2 spatial: ``xywh=[pixel:|percent:]x,y,w,h``, integers, width and
  height above zero; in percent, ``x`` and ``y`` below 100 (a region
  reaching past 100 % is clipped to the media, as the semantics of xywh say).

:func:`native_time` and :func:`native_region` name the same selection in
PDI terms (PDI-GRAMMAR.md §3, decisions recorded there): a time in whole
seconds is ``sec=a,b``, else ``msec``, rounded to the nearest millisecond
where it is finer (the result says so); a missing end is the end of the
recording (in milliseconds, rounded up). ``x,y,w,h`` in pixels is
``rect=(x,y),(x+w,y+h)``; in percent, of the image's width and height,
rounded outwards to whole pixels (left and top down, right and bottom up).

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext
from typing import Any, Final, TypeVar
from urllib.parse import unquote_to_bytes

from pdi.errors import ParseError, UnsupportedError

__all__ = [
    "MediaRegion",
    "MediaTime",
    "is_media_fragment",
    "native_region",
    "native_time",
    "parse_media_fragment",
]

_NPT: Final = re.compile(
    r"(?:(?P<h>[0-9]+):(?P<hm>[0-9]{2}):(?P<hs>[0-9]{2}(?:\.[0-9]*)?)"
    r"|(?P<m>[0-9]{2}):(?P<ms>[0-9]{2}(?:\.[0-9]*)?)"
    r"|(?P<s>[0-9]+(?:\.[0-9]*)?))"
)
#: §4.2.1 ``frametime`` (``smpte``, ``smpte-25``, ``smpte-30``, ``smpte-30-drop``): hours, minutes, seconds, then
#: optionally frames and subframes; and ``clock``'s RFC 3339 ``date-time``. Read only to tell a valid time from an
#: invalid one.
_SMPTE: Final = re.compile(r"([0-9]{1,45}):([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{2}))?)?")
_CLOCK: Final = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2})(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
_XYWH: Final = re.compile(r"(?:(?P<unit>pixel|percent):)?([0-9]+),([0-9]+),([0-9]+),([0-9]+)")
#: The largest number read in a media fragment (digits): enough for any real time or image.
_MAX_DIGITS: Final = 15
#: Where times are added and scaled: exactly. An npt time is at most ``3 * _MAX_DIGITS`` characters, so its
#: seconds, and their milliseconds, have fewer than 100 digits; the default context's 28 would round
#: ``t=99999999999999999999999999999:00:00.5`` and fail to quantize a long time's milliseconds (InvalidOperation).
_EXACT: Final = Context(prec=128, rounding=ROUND_HALF_UP)
_T = TypeVar("_T")


@dataclass(frozen=True)
class MediaTime:
    """``t=``: from ``begin`` to ``end`` seconds (``end`` ``None``: the end of the recording)."""

    begin: Decimal
    end: Decimal | None


@dataclass(frozen=True)
class MediaRegion:
    """``xywh=``: a rectangle ``x, y, w, h`` in ``unit`` (``"pixel"`` or ``"percent"``)."""

    x: int
    y: int
    w: int
    h: int
    unit: str = "pixel"


def _pairs(fragment: str) -> list[tuple[str, str]]:
    out = []
    for piece in fragment.split("&"):
        name, sep, value = piece.partition("=")
        if not sep:
            continue
        try:
            out.append((unquote_to_bytes(name).decode("utf-8"), unquote_to_bytes(value).decode("utf-8")))
        except UnicodeError:
            # §4.1: a pair that does not decode is not a media fragment pair; nor is one holding a lone
            # surrogate (a command-line argument's byte that was not UTF-8), which has no UTF-8 to decode
            continue
    return out


def is_media_fragment(fragment: str) -> bool:
    """Whether a fragment holds a ``t`` or ``xywh`` pair (and so is read as a Media Fragment)."""
    return any(name in ("t", "xywh") for name, _ in _pairs(fragment))


def parse_media_fragment(fragment: str) -> MediaTime | MediaRegion:
    """The temporal or spatial selection of a Media Fragment (the last ``t``, else the last ``xywh``).

    A fragment with both is a :class:`ParseError`: a PDI fragment selects in one
    dimension (time on audio, space on an image).
    """
    time, time_error = _last_valid([value for name, value in _pairs(fragment) if name == "t"], parse_time)
    space, space_error = _last_valid([value for name, value in _pairs(fragment) if name == "xywh"], parse_region)
    if time is not None and space is not None:
        raise ParseError(
            "a Media Fragment alias selects time (t=) or space (xywh=), not both", text=fragment, rule="media-fragment"
        )
    if time is not None:
        return time
    if space is not None:
        return space
    error = time_error or space_error
    if error is not None:  # none valid: the last one's error
        raise error
    raise ParseError(f"no t= or xywh= in the Media Fragment {fragment[:60]!r}", text=fragment, rule="media-fragment")


def _last_valid(values: list[str], parse: Callable[[str], _T]) -> tuple[_T | None, ParseError | None]:
    """The last of a dimension's ``values`` that ``parse`` reads (§4.1: "only the last valid occurrence of a
    dimension … is interpreted"; W3C test cases TC0054, TC0085), else ``None`` and the last one's error (``None``
    too when none is given)."""
    error: ParseError | None = None
    for value in reversed(values):
        try:
            return parse(value), None
        except ParseError as exc:
            error = error or exc
    return None, error


def _npt(text: str, value: str) -> Decimal:
    m = _NPT.fullmatch(text)
    if m is None:
        raise ParseError(
            f"{text!r} is not an npt time (seconds 10.5, mm:ss 01:02, hh:mm:ss 1:01:02)",
            text=value, rule="npttime",
        )
    if len(text) > 3 * _MAX_DIGITS:
        raise ParseError(f"the time {text[:20]!r}… is too long", text=value, rule="npttime")
    if m.group("s") is not None:
        return Decimal(m.group("s").rstrip(".") or "0")
    hours = int(m.group("h")) if m.group("h") is not None else 0
    minutes = int(m.group("hm") or m.group("m"))
    seconds = Decimal((m.group("hs") or m.group("ms")).rstrip("."))
    if minutes > 59 or seconds >= 60:
        raise ParseError(f"minutes and seconds are 00 to 59 in an npt time, not {text!r}", text=value, rule="npttime")
    with localcontext(_EXACT):
        return hours * 3600 + minutes * 60 + seconds


def parse_time(value: str) -> MediaTime:
    """Parse the value of ``t=`` (§4.2.1, npt only)."""
    body = value
    if ":" in value.split(",", 1)[0]:
        head, _, rest = value.partition(":")
        if head in ("smpte", "smpte-25", "smpte-30", "smpte-30-drop", "clock"):
            _check_unread(head, rest, value)  # an invalid one is passed over (§4.1), as an invalid npt time is
            raise UnsupportedError(f"t={head}: times are not read; write npt times (t=10,20 or t=npt:10,20)")
        if head == "npt":
            body = rest
    begin_text, comma, end_text = body.partition(",")
    if not comma and not begin_text:
        raise ParseError("t= needs a begin, an end, or both (t=10,20; t=10; t=,20)", text=value, rule="npttimedef")
    if comma and not end_text:
        raise ParseError("t= with a comma needs an end time after it", text=value, rule="npttimedef")
    begin = _npt(begin_text, value) if begin_text else Decimal(0)
    end = _npt(end_text, value) if end_text else None
    if end is not None and begin >= end:
        raise ParseError(f"t= begins at {begin} s, not before its end {end} s", text=value, rule="npttimedef")
    return MediaTime(begin, end)


def _check_unread(head: str, rest: str, value: str) -> None:
    """A :class:`ParseError` unless ``rest`` is a valid ``smpte`` or ``clock`` time range of §4.2.1 (``a``, ``a,b`` or
    ``,b``, the begin before the end): only a valid one is the :class:`UnsupportedError` of a time pdi does not read.
    Found by a property test: ``t=3,7&t=smpte:junk`` was that error, where §4.1 passes over an invalid last ``t``
    and selects ``t=3,7``."""
    begin_text, comma, end_text = rest.partition(",")
    times = [t for t in (begin_text, end_text) if t]
    if not times or (comma and not end_text):
        raise ParseError(f"t={head}: needs a begin, an end, or both", text=value, rule="timeparam")
    keys: list[Any] = []  # datetimes (clock) or (hours, minutes, seconds, frames, subframes) (smpte)
    for text in times:
        if head == "clock":
            m = _CLOCK.fullmatch(text)
            try:  # to the second, then its fraction exactly (a datetime keeps microseconds)
                keys.append((datetime.fromisoformat(m[1].upper() + m[3].upper().replace("Z", "+00:00")),
                             Decimal("0" + (m[2] or ""))) if m else None)
            except ValueError:
                m = None
        else:
            m = _SMPTE.fullmatch(text)
            if m and (int(m.group(2)) > 59 or int(m.group(3)) > 59):
                m = None
            keys.append(tuple(int(g or 0) for g in m.groups()) if m else None)
        if m is None:
            raise ParseError(f"{text[:40]!r} is not a {head} time", text=value, rule="timeparam")
    if begin_text and end_text and not keys[0] < keys[1]:
        raise ParseError(f"t={head}: begins at {begin_text}, not before its end {end_text}", text=value,
                         rule="timeparam")


def parse_region(value: str) -> MediaRegion:
    """Parse the value of ``xywh=`` (§4.2.2)."""
    m = _XYWH.fullmatch(value)
    if m is None:
        raise ParseError(
            f"xywh={value[:60]!r} is not [pixel:|percent:]x,y,w,h in whole numbers", text=value, rule="xywhparam"
        )
    if any(len(m.group(k)) > _MAX_DIGITS for k in range(2, 6)):
        raise ParseError("a number in xywh= is too long", text=value, rule="xywhparam")
    x, y, w, h = (int(m.group(k)) for k in range(2, 6))
    if w == 0 or h == 0:
        raise ParseError("xywh= needs a width and a height above zero", text=value, rule="xywhparam")
    unit = m.group("unit") or "pixel"
    if unit == "percent" and (x >= 100 or y >= 100):  # a corner outside the media: an error (a region that
        # begins inside and reaches past 100 % is clipped to the media, by native_region: found by a property test,
        # xywh=percent:60,0,50,10 was refused, where the semantics of Media Fragments select 60 % to 100 % of the width)
        raise ParseError("xywh=percent: begins at or past 100 %, outside the media", text=value, rule="xywhparam")
    return MediaRegion(x, y, w, h, unit)


def native_time(time: MediaTime, *, duration_ms: int | None = None) -> tuple[str, tuple[int, int], bool]:
    """``(scheme, (a, b), rounded)``: the PDI time fragment equal to ``time``.

    ``duration_ms`` (the recording's length in milliseconds, rounded up) is
    needed only when ``time`` has no end. ``rounded`` says a time finer than
    a millisecond was rounded to the nearest one.
    """
    end = time.end
    if end is None:
        if duration_ms is None:
            raise UnsupportedError("t= without an end needs the length of the recording")
        # beginning at or past the end, it is the empty range where it begins: past the end as t=a,b is there
        # (W3C Media Fragments TC0014: t=15 of a 10 s recording is well formed, and seeks past the end)
        end = max(Decimal(duration_ms) / 1000, time.begin)
    if time.begin == time.begin.to_integral_value() and end == end.to_integral_value():
        return "sec", (int(time.begin), int(end)), False
    with localcontext(_EXACT):
        a = (time.begin * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP)
        b = (end * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP)
        rounded = a != time.begin * 1000 or b != end * 1000
    if b < a or (b == a and time.end is not None):  # open (t=a) at the end: the empty range there, as above
        raise ParseError(f"t={time.begin},{end} is shorter than a millisecond", rule="npttimedef")
    return "msec", (int(a), int(b)), rounded


def native_region(region: MediaRegion, *, width: int | None = None, height: int | None = None) -> tuple[
    tuple[int, int], tuple[int, int]
]:
    """The corners ``(x1, y1), (x2, y2)`` of the PDI ``rect`` equal to ``region`` (percent needs the image's size,
    and is clipped to it where it reaches past 100 %)."""
    if region.unit == "pixel":
        return (region.x, region.y), (region.x + region.w, region.y + region.h)
    if width is None or height is None:
        raise UnsupportedError("xywh=percent: needs the size of the image")
    x1 = region.x * width // 100
    y1 = region.y * height // 100
    x2 = min(width, -(-(region.x + region.w) * width // 100))  # rounded up, at most the edge
    y2 = min(height, -(-(region.y + region.h) * height // 100))
    return (x1, y1), (x2, y2)
