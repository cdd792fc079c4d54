"""``record_name_as``: a name parsed from a request stands for its record's name only when it is that name, field for
field (a resolver then neither builds the name nor parses it again)."""

from __future__ import annotations

import datetime

import pytest

from pdi.archive.naming import record_name, record_name_as
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
