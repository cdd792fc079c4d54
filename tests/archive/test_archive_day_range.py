"""The day range a listing by year, month or day reads (``pdi.archive.catalog.listing._day_range``), against the calendar.

A listing filtered by year, month and day also bounds ``documents.day`` (an
ISO date, which sorts as the date does) so that it reads a range of the
index ``documents_by_day``; the range must hold exactly the days the
filters select, worked out here from :mod:`datetime` day by day.
"""

from __future__ import annotations

import datetime

from hypothesis import given
from hypothesis import strategies as st

from pdi.archive.catalog.listing import _day_range


@given(
    st.dates(datetime.date(1990, 1, 1), datetime.date(2100, 12, 31)),
    st.integers(-40, 40),
    st.sampled_from(["year", "month", "day"]),
)
def test_the_range_holds_exactly_the_days_the_filters_select(chosen: datetime.date, shift: int, depth: str) -> None:
    filters: dict[str, int] = {"d.year": chosen.year}
    if depth in ("month", "day"):
        filters["d.month"] = chosen.month
    if depth == "day":
        filters["d.dom"] = chosen.day
    bounds = _day_range(filters)
    assert bounds is not None
    first, after = bounds
    probe = chosen + datetime.timedelta(days=shift)
    selected = probe.year == chosen.year and (
        depth == "year" or (probe.month == chosen.month and (depth == "month" or probe.day == chosen.day))
    )
    assert (first <= probe.isoformat() < after) == selected


def test_no_range_without_a_year_or_for_a_day_without_its_month_or_a_date_that_is_not() -> None:
    assert _day_range({"d.month": 2}) is None
    assert _day_range({"d.year": 2026, "d.dom": 3}) is None
    assert _day_range({"d.year": 2026, "d.month": 2, "d.dom": 30}) is None
    assert _day_range({"d.year": 2026, "d.month": 12}) == ("2026-12-01", "2027-01-01")
