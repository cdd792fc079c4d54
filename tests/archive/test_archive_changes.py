"""Archive.changes and Archive.document_change (what OAI-PMH harvests), on both stores.

Expected times are the ones the test's clock gave each deposit, statement and
withdrawal, as the catalog records them (ISO 8601 UTC, microseconds).
"""

from __future__ import annotations

import datetime

import pytest
from archive_helpers import Clock

from pdi.archive import Archive, Content
from pdi.errors import LimitError, NotFoundError

S = "oma.eop.gov.us"
T = "press.oma.eop.gov.us"


def _at(clock: Clock, day: int, hour: int = 9) -> str:
    clock.now = datetime.datetime(2026, 3, day, hour, tzinfo=datetime.UTC)
    return clock.now.strftime("%Y-%m-%dT%H:%M:%S.000000Z")


def test_changes_page_through_documents_with_when_each_last_changed(archive: Archive, clock: Clock) -> None:
    archive.add_series(T)
    deposited = []
    for day, series in ((1, S), (2, T), (3, S), (4, T)):
        at = _at(clock, day)
        name = str(archive.deposit(series, [Content(f"day {day}\n".encode(), "text")])[0])
        deposited.append((name.rsplit(".", 2)[0], at))
    first, second, third, fourth = (g for g, _ in deposited)
    stated = _at(clock, 10)
    archive.annotate(first, "title", "First")
    versioned = _at(clock, 11)
    archive.add_version(second, [Content(b"again\n", "text")])
    gone = _at(clock, 12)
    archive.withdraw(third, "a duplicate")
    archive.withdraw(second + ".text.2", "the wrong file")  # the same day, later: second changed again
    later = clock.now.strftime("%Y-%m-%dT%H:%M:%S.000000Z")

    everything = archive.changes(limit=10)
    assert [str(c.generic.pdi) for c in everything] == [first, second, third, fourth]
    assert [c.changed_at for c in everything] == [stated, later, gone, deposited[3][1]]
    assert [c.withdrawn_at for c in everything] == [None, None, gone, None]
    assert [v.number for v in everything[1].generic.versions] == [1]  # version 2 withdrawn
    assert [(s.key, s.value) for s in everything[0].statements] == [("title", "First")]
    assert versioned < later

    page = archive.changes(limit=2)
    rest = archive.changes(after=page[-1].cursor, limit=2)
    assert [c.generic.pdi for c in page + rest] == [c.generic.pdi for c in everything]
    assert archive.changes(after=rest[-1].cursor, limit=2) == []
    assert [str(c.generic.pdi) for c in archive.changes(series=T.upper(), limit=10)] == [second, fourth]

    one = archive.document_change(first + ".text.1")  # any name of the document
    assert one == everything[0]
    with pytest.raises(NotFoundError):
        archive.document_change(first.replace("/1", "/9"))
    with pytest.raises(LimitError):
        archive.changes(limit=0)


def test_a_document_with_every_version_withdrawn_is_listed_as_withdrawn(archive: Archive, clock: Clock) -> None:
    _at(clock, 1)
    name = str(archive.deposit(S, [Content(b"one\n", "text")])[0])
    gone = _at(clock, 2)
    archive.withdraw(name, "wrong")
    (change,) = archive.changes()
    assert change.withdrawn_at == gone and change.changed_at == gone
    assert [v.number for v in change.generic.versions] == [1]


def test_changes_between_two_times_skip_the_others_without_reading_them(archive: Archive, clock: Clock) -> None:
    names = []
    for day in range(1, 8):
        _at(clock, day)
        names.append(str(archive.deposit(S, [Content(f"{day}\n".encode(), "text")])[0]).rsplit(".", 2)[0])
    _at(clock, 20)
    archive.annotate(names[0], "title", "changed late")
    since, until = "2026-03-03T00:00:00.000000Z", "2026-03-05T09:00:00.000000Z"
    found = archive.changes(since=since, until=until, limit=2)
    assert [str(c.generic.pdi) for c in found] == names[2:4]
    rest = archive.changes(after=found[-1].cursor, since=since, until=until, limit=2)
    assert [str(c.generic.pdi) for c in rest] == names[4:5]
    assert [str(c.generic.pdi) for c in archive.changes(since="2026-03-20T00:00:00.000000Z")] == names[:1]
    assert archive.changes(until="2026-02-28T23:59:59.999999Z") == []
