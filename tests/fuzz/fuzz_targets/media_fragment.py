"""Media Fragments ``#t=`` and ``#xywh=`` read as aliases: :mod:`pdi.fragments.mediafragment`, :mod:`pdi.interop.aliases`.

Input: ``fragment NUL number``: the fragment after ``#``, and a number
(decimal digits, else 0) that stands for the recording's length in
milliseconds and for the image's width and height. What must hold: a name
with the fragment is an alias (:func:`~pdi.interop.aliases.alias_fragment`)
exactly when it holds a ``t`` or ``xywh`` pair; a time written again
(``t=npt:begin,end``) parses back to itself; its native ``sec`` fragment is
the same whole seconds, its ``msec`` one each end to within half a
millisecond; a pixel region's ``rect`` is ``x, y, x+w, y+h``; a percent
region's corners lie inside the image and cover the region (clipped to the image).
"""

from __future__ import annotations

from decimal import Context, Decimal, localcontext

from fuzz_harness import Target

from fuzz_targets._common import fields, text_of
from pdi.errors import PDIError
from pdi.fragments.mediafragment import (
    MediaRegion,
    MediaTime,
    is_media_fragment,
    native_region,
    native_time,
    parse_media_fragment,
    parse_time,
)
from pdi.interop.aliases import alias_fragment

NAME = "urn:pdi://sound.example.us/2026/11/23/rec.wav.1"


def _number(raw: bytes) -> int:
    digits = raw.strip()[:12]
    return int(digits) if digits.isdigit() else 0


def run(data: bytes) -> None:
    frag_b, number_b = fields(data, 2)
    fragment = text_of(frag_b)
    size = _number(number_b)
    media = is_media_fragment(fragment)
    split = alias_fragment(f"{NAME}#{fragment}")
    if media:
        assert split == (NAME, fragment)
    elif ":~:" not in fragment:
        assert split is None
    parsed = parse_media_fragment(fragment)
    assert media
    if isinstance(parsed, MediaTime):
        written = f"npt:{parsed.begin}" + ("" if parsed.end is None else f",{parsed.end}")
        assert parse_time(written) == parsed
        try:
            scheme, (a, b), rounded = native_time(parsed, duration_ms=size)
        except PDIError:
            return
        with localcontext(Context(prec=200)):  # exactly: a time of 45 characters has more than 28 digits
            # t=a ends at the end of the recording; begun at or past it, it is the empty range where it begins
            # (PDI-GRAMMAR.md §3, "#t=")
            end = parsed.end if parsed.end is not None else max(Decimal(size) / 1000, parsed.begin)
            if scheme == "sec":
                assert (a, b) == (parsed.begin, end) and not rounded
            else:
                assert scheme == "msec" and a >= 0 and (a < b if parsed.end is not None else a <= b)
                assert abs(a - parsed.begin * 1000) <= Decimal("0.5") and abs(b - end * 1000) <= Decimal("0.5")
                assert rounded == (a != parsed.begin * 1000 or b != end * 1000)
        return
    assert isinstance(parsed, MediaRegion) and parsed.w > 0 and parsed.h > 0
    if parsed.unit == "pixel":
        assert native_region(parsed) == ((parsed.x, parsed.y), (parsed.x + parsed.w, parsed.y + parsed.h))
        return
    (x1, y1), (x2, y2) = native_region(parsed, width=size, height=size)
    assert 0 <= x1 <= x2 <= size and 0 <= y1 <= y2 <= size
    assert x1 * 100 <= parsed.x * size and min(parsed.x + parsed.w, 100) * size <= x2 * 100
    assert y1 * 100 <= parsed.y * size and min(parsed.y + parsed.h, 100) * size <= y2 * 100


TARGET = Target(
    "media_fragment",
    run,
    warmup=b"t=npt:10,20.5\x004500",
    tokens=(
        b"\x00", b"t=", b"xywh=", b"&", b"=", b",", b":", b".", b"npt:", b"smpte:", b"smpte-30-drop:", b"clock:",
        b"pixel:", b"percent:", b"%74", b"%3D", b"%2C", b"%FF", b"track=", b"id=", b":~:text=", b"00:", b"59",
        b"60", b"0.0005", b"99", b"100", b"1:00:00", b"01:02.5",
    ),
)
