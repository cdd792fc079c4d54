"""Schemathesis hooks of tests/server/test_server_schemathesis.py: values for the custom formats of /openapi.json.

The description gives each parameter's pattern and limits; where a value's
grammar is beyond JSON Schema (a PDI with its fragments and citations, a
format token the registry knows, an RFC 5147 fragment, an RFC 1123 date whose
weekday must be its own) it names a custom ``format``. Positive data of such
a format comes from here: names of the test's archive (read from the JSON
file ``PDI_SCHEMATHESIS_VALUES`` names) and values built from the grammar;
negative data still violates the pattern and limits the description gives.
"""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path

import schemathesis
from hypothesis import strategies as st

_VALUES: dict[str, list[str]] = json.loads(Path(os.environ["PDI_SCHEMATHESIS_VALUES"]).read_text("utf-8"))

_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _rfc1123(moment: datetime.datetime) -> str:
    """RFC 7089 §2.1.1's rfc1123-date of ``moment`` (its own weekday)."""
    return (f"{_WEEKDAYS[moment.weekday()]}, {moment.day:02d} {_MONTHS[moment.month - 1]} {moment.year:04d}"
            f" {moment:%H:%M:%S} GMT")


for name, values in _VALUES.items():
    schemathesis.openapi.format(name, st.sampled_from(values))

schemathesis.openapi.format(
    "http-date",
    st.datetimes(datetime.datetime(1000, 1, 1), datetime.datetime(9999, 12, 31)).map(_rfc1123),
)
