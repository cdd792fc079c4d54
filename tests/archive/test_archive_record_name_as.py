"""``record_name_as``: a name parsed from a request stands for its record's name only when it is that name, field for
field (a resolver then neither builds the name nor parses it again)."""

from __future__ import annotations

import dataclasses
import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.archive.naming import generic_text, record_name, record_name_as, record_text
from pdi.archive.store import RepresentationRecord
from pdi.identifier import PDI


def _record(serial: int | None, unique_id: str, fmt: str = "text", version: int = 1) -> RepresentationRecord:
    return RepresentationRecord(series="oma.eop.gov.us", day=datetime.date(2026, 11, 5), unique_id=unique_id,
                                serial=serial, version=version, format=fmt, media_type="text/plain", charset="utf-8",
                                line_ending=None, sha256="0" * 64, size=3, created_at="2026-11-05T00:00:00Z")


@pytest.mark.parametrize(("record", "spelling"), [
    (_record(12, "12"), "urn:pdi://oma.eop.gov.us/2026/11/05/12.text.1"),
    (_record(12, "12", version=3), "urn:pdi://oma.eop.gov.us/2026/11/05/12.text.3"),
    (_record(12, "12", "html"), "urn:pdi://oma.eop.gov.us/2026/11/05/12.html.1"),
])
def test_a_canonical_serial_name_is_its_records_name_itself(record: RepresentationRecord, spelling: str) -> None:
    parsed = PDI.parse(spelling)
    assert record_name_as(record, parsed) is parsed
    assert parsed == record_name(record) and str(parsed) == str(record_name(record)) == spelling


@pytest.mark.parametrize(("record", "spelling"), [
    (_record(12, "12"), "urn:pdi://OMA.eop.gov.us/2026/11/05/12.text.1"),  # the series in another case
    (_record(12, "12"), "urn:pdi://oma.eop.gov.us/2026/11/05/012.text.1"),  # a serial with a leading zero
    (_record(12, "12"), "urn:pdi://oma.eop.gov.us/2026/11/05/12.text.1#char=0,1"),  # a fragment
    (_record(None, "report-7"), "urn:pdi://oma.eop.gov.us/2026/11/05/report-7.text.1"),  # a foreign id: built
])
def test_any_other_spelling_gives_the_records_name_built(record: RepresentationRecord, spelling: str) -> None:
    parsed = PDI.parse(spelling)
    made = record_name_as(record, parsed)
    assert made is not parsed
    assert made == record_name(record)


@given(
    series=st.from_regex(r"[a-z0-9](?:[a-z0-9-]{0,8}[a-z0-9])?(?:\.[a-z]{2,6}){0,2}\.(?:us|fr|de|jp)", fullmatch=True),
    day=st.dates(min_value=datetime.date(1, 1, 1), max_value=datetime.date(9999, 12, 31)),
    serial=st.one_of(st.integers(min_value=1, max_value=10**18), st.none()),
    foreign=st.from_regex(r"[A-Za-z][A-Za-z0-9_()-]{0,20}", fullmatch=True),
)
def test_generic_text_is_the_generic_name_built(series: str, day: datetime.date, serial: int | None,
                                                 foreign: str) -> None:
    """An audit line's subject made without building a PDI is what building the generic name gives, and what
    parsing it back reads."""
    record = dataclasses.replace(_record(serial, str(serial) if serial is not None else foreign), series=series,
                                 day=day)
    text = generic_text(record)
    assert text == str(record_name(record, generic=True))
    parsed = PDI.parse(text)
    assert (parsed.series_name, parsed.date, parsed.unique_id, parsed.format) == (
        series, day, record.unique_id, None)


@pytest.mark.parametrize(("record", "spelling"), [
    (_record(12, "12"), "urn:pdi://oma.eop.gov.us/2026/11/05/12.text.1"),
    (_record(7, "7", "HTML", 3), "urn:pdi://oma.eop.gov.us/2026/11/05/7.html.3"),  # the format token as minted
    (_record(None, "a/b c", "text", 2), "urn:pdi://oma.eop.gov.us/2026/11/05/a%2Fb%20c.text.2"),  # %-escaped
])
def test_record_text_is_the_versioned_name_as_minted(record: RepresentationRecord, spelling: str) -> None:
    """A manifest page names each entry by ``record_text`` (PDI draft §2: series, GMT day, unique id, format and
    version; a foreign id %-escaped)."""
    assert record_text(record) == spelling


@given(
    series=st.from_regex(r"[a-z0-9](?:[a-z0-9-]{0,8}[a-z0-9])?(?:\.[a-z]{2,6}){0,2}\.(?:us|fr|de|jp)", fullmatch=True),
    day=st.dates(min_value=datetime.date(1, 1, 1), max_value=datetime.date(9999, 12, 31)),
    serial=st.one_of(st.integers(min_value=1, max_value=10**18), st.none()),
    foreign=st.from_regex(r"[A-Za-z][A-Za-z0-9_()/ %-]{0,20}", fullmatch=True),
    fmt=st.sampled_from(["text", "html", "PDF", "octet-stream", "xml", "jpeg", "Text"]),
    version=st.integers(min_value=1, max_value=10**9),
)
def test_record_text_is_the_versioned_name_built(series: str, day: datetime.date, serial: int | None, foreign: str,
                                                 fmt: str, version: int) -> None:
    """The versioned name made without building a PDI is what building it gives, and what parsing it back reads."""
    record = dataclasses.replace(_record(serial, str(serial) if serial is not None else foreign, fmt, version),
                                 series=series, day=day)
    text = record_text(record)
    assert text == str(record_name(record))
    parsed = PDI.parse(text)
    assert (parsed.series_name, parsed.date, parsed.unique_id, parsed.version) == (
        series, day, record.unique_id, version)
