"""A name not here: what the archive holds near it (pdi.archive.nearest), on SQLite and PostgreSQL.

A PDI carries the GMT day it was minted (PDI-GRAMMAR.md §2.4), so a name
copied with another day is not here although the same document is, under its
own day. The names expected are built by hand from the days the test's clock
mints on and the serials §2.5 gives (from 1, one a document, a day at a
time); a reader sees only what it may learn of (a hidden series is as one never
registered).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest

from pdi.archive import Archive
from pdi.archive.access import Reader, reading_as
from pdi.errors import NotFoundError

S = "library.example.us"
OTHER = "other.example.us"
SECRET = "secret.example.us"


class Clock:
    def __init__(self) -> None:
        self.now = datetime.datetime(2026, 11, 20, 12, 0, tzinfo=datetime.UTC)

    def __call__(self) -> datetime.datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def archive(location: str, clock: Clock) -> Iterator[Archive]:
    opened = Archive.init(location, clock=clock)
    for series in (S, OTHER, SECRET):
        opened.add_series(series)
    opened.set_series_access(SECRET, "hidden")
    try:
        yield opened
    finally:
        opened.close()


def _on(clock: Clock, day: int) -> None:
    clock.now = datetime.datetime(2026, 11, day, 12, 0, tzinfo=datetime.UTC)


def _said(archive: Archive, name: str) -> str:
    """The message a name not here gets, with what is near it."""
    with pytest.raises(NotFoundError) as caught:
        archive.locate(name)
    return str(archive.not_found(caught.value, name))


def _fill(archive: Archive, clock: Clock) -> None:
    """Two documents of S on the 20th, one on the 28th; one of OTHER on the 25th."""
    _on(clock, 20)
    archive.add(S, b"first\n", format="text")
    archive.add(S, b"second\n", format="text")
    _on(clock, 25)
    archive.add(OTHER, b"elsewhere\n", format="text")
    _on(clock, 28)
    archive.add(S, b"later\n", format="text")


def test_a_serial_with_another_day_names_the_nearest_days_not_their_documents(archive: Archive, clock: Clock) -> None:
    # serial 1 of the 20th and of the 28th are two other documents (§2.5: serials are counted afresh each day)
    _fill(archive, clock)
    said = _said(archive, f"urn:pdi://{S}/2026/11/25/1.text.1")
    assert said == (
        f"urn:pdi://{S}/2026/11/25/1.text.1 is not in this archive; a name carries the GMT day it was minted, and"
        f" {S} has nothing minted on 2026-11-25, so no document '1'; the nearest days with documents are 2026-11-20"
        " (5 days before) and 2026-11-28 (3 days after)"
    )


def test_an_id_not_on_the_nearest_day_names_that_day(archive: Archive, clock: Clock) -> None:
    _fill(archive, clock)
    said = _said(archive, f"urn:pdi://{S}/2026/11/29/2.text.1")
    assert said.endswith("has nothing minted on 2026-11-29, so no document '2'; the nearest days with documents are"
                         " 2026-11-28 (1 day before)")


def test_a_count_of_days_has_thousands_separators(archive: Archive, clock: Clock) -> None:
    """Counts are printed with separators elsewhere ("1,073,741,824"): 1994-12-01 to 2026-11-20 is 11,677 days
    (GNU ``date -u +%s`` of each, apart by 86,400)."""
    _fill(archive, clock)
    said = _said(archive, f"urn:pdi://{S}/1994/12/01/1.text.1")
    assert said.endswith("the nearest days with documents are 2026-11-20 (11,677 days after)")


def test_a_number_not_minted_that_day_names_the_days_documents(archive: Archive, clock: Clock) -> None:
    _fill(archive, clock)
    said = _said(archive, f"urn:pdi://{S}/2026/11/20/7.text.1")
    assert said == (f"urn:pdi://{S}/2026/11/20/7.text.1 is not in this archive; {S} holds these documents minted on"
                    f" 2026-11-20: urn:pdi://{S}/2026/11/20/1, urn:pdi://{S}/2026/11/20/2")


def test_a_day_of_many_documents_is_named_in_part(archive: Archive, clock: Clock) -> None:
    _on(clock, 20)
    for n in range(7):
        archive.add(S, f"{n}\n".encode(), format="text")
    said = _said(archive, f"urn:pdi://{S}/2026/11/20/9.text.1")
    names = ", ".join(f"urn:pdi://{S}/2026/11/20/{n}" for n in range(1, 6))
    assert said.endswith(f"minted on 2026-11-20: {names} and more")


def test_a_series_not_here_and_a_hidden_one_are_said_alike(archive: Archive, clock: Clock) -> None:
    _fill(archive, clock)
    _on(clock, 28)
    archive.add(SECRET, b"secret\n", format="text")
    never = _said(archive, "urn:pdi://nowhere.example.us/2026/11/28/1.text.1")
    assert never.endswith("; this archive holds no series nowhere.example.us")
    with reading_as(Reader()):
        hidden = _said(archive, f"urn:pdi://{SECRET}/2026/11/27/1.text.1")
    assert hidden.endswith(f"; this archive holds no series {SECRET}")
    # the owner is told what the series holds
    assert _said(archive, f"urn:pdi://{SECRET}/2026/11/27/1.text.1").endswith(
        "the nearest days with documents are 2026-11-28 (1 day after)")


def test_an_empty_series_says_so(archive: Archive) -> None:
    said = _said(archive, f"urn:pdi://{S}/2026/11/28/1.text.1")
    assert said.endswith(f"; the series {S} holds no documents minted on any day")


def test_a_missing_version_keeps_its_own_message(archive: Archive, clock: Clock) -> None:
    _fill(archive, clock)
    said = _said(archive, f"urn:pdi://{S}/2026/11/20/1.text.3")
    assert said == f"urn:pdi://{S}/2026/11/20/1.text.3: no version 3 (versions: 1)"
    near = archive.nearest(f"urn:pdi://{S}/2026/11/20/1.text.3")
    assert [str(n) for n, _ in near.names] == [f"urn:pdi://{S}/2026/11/20/1.text.1"]


def test_an_embargoed_document_is_not_suggested_to_a_reader(archive: Archive, clock: Clock) -> None:
    _on(clock, 28)
    archive.add(S, b"sealed\n", format="text", embargo_until="2099-01-01")
    with reading_as(Reader()):
        said = _said(archive, f"urn:pdi://{S}/2026/11/25/1.text.1")
    # as an empty series answers (test_an_empty_series_says_so): nothing tells that a day holds a sealed document
    assert said == (f"urn:pdi://{S}/2026/11/25/1.text.1 is not in this archive;"
                    f" the series {S} holds no documents minted on any day")
    assert _said(archive, f"urn:pdi://{S}/2026/11/25/1.text.1").endswith(
        "the nearest days with documents are 2026-11-28 (3 days after)")


def test_nearest_days_reads_the_days_key(archive: Archive, clock: Clock) -> None:
    _fill(archive, clock)
    day = datetime.date
    assert archive.store.nearest_days(S, day(2026, 11, 25)) == (day(2026, 11, 20), day(2026, 11, 28))
    assert archive.store.nearest_days(S, day(2026, 11, 20)) == (day(2026, 11, 20), day(2026, 11, 28))
    assert archive.store.nearest_days(S, day(2026, 11, 1)) == (None, day(2026, 11, 20))
    assert archive.store.nearest_days(S, day(2026, 12, 1)) == (day(2026, 11, 28), None)
    assert archive.store.nearest_days(OTHER, day(2026, 11, 20)) == (None, day(2026, 11, 25))


def test_a_foreign_id_of_another_case_or_a_few_edits_away_on_that_day_is_offered(archive: Archive, clock: Clock) -> None:
    _on(clock, 20)
    for n in range(8):  # a day of other documents first: the near one is found however it sorts among them
        archive.add(S, f"{n}\n".encode(), format="text")
    archive.add(S, b"report\n", format="text", foreign_id="Report_2026")
    archive.add(S, b"minutes\n", format="text", foreign_id="Minutes-7")
    held = f"urn:pdi://{S}/2026/11/20/Report_2026.text.1"
    archive.add(S, b"report\n", format="text", foreign_id="Report_2025")
    for asked in ("report_2026", "REPORT_2026", "Reprot_2026", "Reportt_2026", "report-2026"):
        said = _said(archive, f"urn:pdi://{S}/2026/11/20/{asked}.text.1")
        assert said == (f"urn:pdi://{S}/2026/11/20/{asked}.text.1 is not in this archive; {S} holds no document"
                        f" {asked!r} minted on 2026-11-20; did you mean {held}?"), asked
    # three edits away, a short id two away, or another number (Report_2025 is another report): not offered as the
    # one meant; the day's documents are listed
    for asked in ("Rport_20", "Mnts-7", "Report_202", "Report_2027"):
        assert "did you mean" not in _said(archive, f"urn:pdi://{S}/2026/11/20/{asked}.text.1"), asked


def test_a_serial_a_few_edits_away_is_another_document_not_offered(archive: Archive, clock: Clock) -> None:
    _fill(archive, clock)
    said = _said(archive, f"urn:pdi://{S}/2026/11/20/12.text.1")
    assert "did you mean" not in said and said.endswith(f"minted on 2026-11-20: urn:pdi://{S}/2026/11/20/1,"
                                                        f" urn:pdi://{S}/2026/11/20/2")


def test_a_foreign_id_with_another_day_names_it_on_the_days_it_was_minted(archive: Archive, clock: Clock) -> None:
    # found by the unique id's index, on any day of the series (not on another series', nor a hidden one's)
    _fill(archive, clock)
    _on(clock, 28)
    archive.add(S, b"report\n", format="text", foreign_id="Report_2026")
    archive.add(OTHER, b"report\n", format="text", foreign_id="Report_2026")
    for day in ("2026/11/25", "2026/11/20", "2026/10/01"):
        said = _said(archive, f"urn:pdi://{S}/{day}/Report_2026.text.1")
        assert said.endswith(f"; {S} holds no document 'Report_2026' minted on {day.replace('/', '-')} (a name carries"
                             f" the GMT day it was minted); did you mean urn:pdi://{S}/2026/11/28/Report_2026.text.1?")


def test_an_embargoed_near_id_is_not_offered_to_a_reader(archive: Archive, clock: Clock) -> None:
    _on(clock, 20)
    archive.add(S, b"sealed\n", format="text", foreign_id="Report_2026", embargo_until="2099-01-01")
    with reading_as(Reader()):
        assert "did you mean" not in _said(archive, f"urn:pdi://{S}/2026/11/20/Reprot_2026.text.1")
    assert _said(archive, f"urn:pdi://{S}/2026/11/20/Reprot_2026.text.1").endswith(
        f"did you mean urn:pdi://{S}/2026/11/20/Report_2026.text.1?")
