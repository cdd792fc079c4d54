"""What a stranger's request says, read by the grammars the RFCs and protocols write out, hammered with hypothesis.

Each reference here is written from the specification, not from pdi's code: the value a reader accepts agrees
with it, and anything else is a :mod:`pdi.errors` error (a ``400`` naming what was wrong), never another exception.
"""

from __future__ import annotations

import calendar
import datetime
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.errors import ParseError
from pdi.server.protocol.manifests import _day

#: ``day=`` of /api/manifest: a GMT day, YYYY-MM-DD (RFC 3339's full-date), ASCII digits.
FULL_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")


def _full_date(text: str) -> datetime.date | None:
    """RFC 3339 §5.6 full-date, with §5.7's day-of-month limits (year 0 is no year of Python's calendar)."""
    found = FULL_DATE.match(text)
    if found is None:
        return None
    year, month, day = (int(part) for part in found.groups())
    if year < 1 or not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    return datetime.date(year, month, day)


_DAY_TEXT = st.one_of(
    st.dates().map(lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}"),
    st.text(st.sampled_from("0123456789-W:T+Z ٣"), min_size=8, max_size=12),
    st.dates().map(lambda d: "{}-W{:02d}-{}".format(*d.isocalendar())),
)


@given(_DAY_TEXT)
def test_a_manifest_day_is_a_full_date_or_refused(text: str) -> None:
    expected = _full_date(text)
    if expected is None:
        with pytest.raises(ParseError, match="YYYY-MM-DD"):
            _day(text)
    else:
        assert _day(text) == expected


def test_an_iso_week_date_is_no_manifest_day() -> None:
    # ten characters, as YYYY-MM-DD is, and read by date.fromisoformat as 2024-01-01
    with pytest.raises(ParseError, match="YYYY-MM-DD"):
        _day("2024-W01-1")
