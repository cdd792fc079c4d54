"""When a mirrored name was withdrawn, as its origin's manifest says it (``pdi.network.mirrors``): a UTC time
``YYYY-MM-DDTHH:MM:SS[.fraction]Z`` of ASCII digits (RFC 3339's DIGIT, %x30-39), a real day and time, not still
to come; anything else is refused and nothing recorded."""

from __future__ import annotations

import datetime
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pdi.errors import ParseError
from pdi.network.mirrors import _withdrawn_at

_CHARS = st.sampled_from([*"0123456789", "-", ":", "T", "Z", ".", "\u0661", "\u0663", "\uff15", "\U0001d7d8"])


@st.composite
def _times(draw: st.DrawFn) -> str:
    moment = draw(st.datetimes(datetime.datetime(1, 1, 1), datetime.datetime(2026, 1, 1)))
    written = moment.strftime("%Y-%m-%dT%H:%M:%S").rjust(19, "0")
    if draw(st.booleans()):
        written += "." + draw(st.text(st.sampled_from("0123456789"), min_size=1, max_size=9))
    chars = list(written + "Z")
    for _ in range(draw(st.integers(0, 2))):
        chars[draw(st.integers(0, len(chars) - 1))] = draw(_CHARS)
    return "".join(chars)


@given(_times())
@example("2020-01-01T00:00:00.\u0661Z")  # ARABIC-INDIC DIGIT ONE in the fraction, which no check read
@example("2020-01-01T00:00:00.\uff15Z")
def test_a_withdrawal_time_is_taken_only_as_rfc_3339_writes_one(value: str) -> None:
    form = re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?Z", value)
    soon = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) + datetime.timedelta(days=1)
    try:  # a real day and time, a day's leeway for a clock ahead
        real = form is not None and datetime.datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S") <= soon
    except ValueError:
        real = False
    if real:
        assert _withdrawn_at(value) == value
    else:
        with pytest.raises(ParseError):
            _withdrawn_at(value)
