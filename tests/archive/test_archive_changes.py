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


# --- who may read what, changed by the archive's owner (OAI-PMH §2.5.1, §2.7.1) ---------------------------------
P = "sealed.oma.eop.gov.us"  # made private and public again
H = "hidden.oma.eop.gov.us"  # made hidden


def _anonymous(archive: Archive, **kwargs: object) -> dict[str, tuple[str, str | None]]:
    """What a reader without a token is shown of the changes: each document's (changed_at, withdrawn_at)."""
    from pdi.archive.access import Reader, reading_as

    with reading_as(Reader()):
        return {str(c.generic.pdi): (c.changed_at, c.withdrawn_at) for c in archive.changes(limit=100, **kwargs)}


def test_a_document_shown_by_a_change_of_access_is_dated_by_it(archive: Archive, clock: Clock) -> None:
    # §2.7.1: a record's datestamp is when it was created, changed or deleted, as the harvester sees it: a record an
    # embargo lifted early, an embargo moved into the past or a series made public shows it one from that moment,
    # which a harvest from= the last one must find (the archive's clock is the only one here: nothing ends by itself)
    archive.add_series(P)
    _at(clock, 1)
    archive.set_series_access(P, "private")
    lifted = str(archive.deposit(S, [Content(b"lifted\n", "text")], embargo_until="2099-01-01")[0]).rsplit(".", 2)[0]
    moved = str(archive.deposit(S, [Content(b"moved\n", "text")], embargo_until="2099-01-01")[0]).rsplit(".", 2)[0]
    revised = str(archive.deposit(S, [Content(b"one\n", "text")])[0]).rsplit(".", 2)[0]
    archive.add_version(revised, [Content(b"two\n", "text")], embargo_until="2099-01-01")
    private = str(archive.deposit(P, [Content(b"private\n", "text")])[0]).rsplit(".", 2)[0]
    deposited = clock.now.strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    assert _anonymous(archive) == {revised: (deposited, None)}
    lift = _at(clock, 5)
    archive.embargo(lifted + ".text.1", None)  # pdi embargo --lift of the version deposited under embargo
    move = _at(clock, 6)
    archive.embargo(moved + ".text.1", "2026-03-02", shorten=True)  # an end already past: over since now, not since 2 March
    shown = _at(clock, 7)
    archive.embargo(revised + ".text.2", None)  # a version shown: its record changed
    public = _at(clock, 8)
    archive.set_series_access(P, "public")
    assert _anonymous(archive) == {lifted: (lift, None), moved: (move, None), revised: (shown, None),
                                   private: (public, None)}
    # an incremental harvest from a moment after the deposits and before the changes finds every one of them
    assert set(_anonymous(archive, since=_at(clock, 4).replace("09:00", "00:00"))) == {lifted, moved, revised, private}
    # the owner sees the same moments: the records did change then (a token's holder harvests them again, harmlessly)
    assert {str(c.generic.pdi): c.changed_at for c in archive.changes()} == {
        lifted: lift, moved: move, revised: shown, private: public}


def test_a_document_withheld_after_it_was_shown_is_a_deleted_record_from_then_on(archive: Archive,
                                                                                 clock: Clock) -> None:
    # §2.5.1 with deletedRecord persistent: a record a harvester was shown and may no longer be is reported deleted,
    # dated when it was withheld, so the harvester deletes its copy; one it was never shown is not reported at all
    archive.add_series(P)
    archive.add_series(H)
    _at(clock, 1)
    sealed = str(archive.deposit(S, [Content(b"sealed later\n", "text")])[0]).rsplit(".", 2)[0]
    archive.annotate(sealed, "title", "Sealed later")
    in_p = str(archive.deposit(P, [Content(b"made private later\n", "text")])[0]).rsplit(".", 2)[0]
    in_h = str(archive.deposit(H, [Content(b"made hidden later\n", "text")])[0]).rsplit(".", 2)[0]
    never = str(archive.deposit(S, [Content(b"never shown\n", "text")], embargo_until="2099-01-01")[0]).rsplit(".", 2)[0]
    seal = _at(clock, 3)
    archive.embargo(sealed, "2099-01-01")
    close = _at(clock, 4)
    archive.set_series_access(P, "private")
    archive.set_series_access(H, "hidden")
    _at(clock, 5)
    after = str(archive.deposit(H, [Content(b"deposited hidden\n", "text")])[0]).rsplit(".", 2)[0]
    archive.embargo(never, "2099-06-01")  # an embargo moved while in force: nothing a harvester was shown changed
    assert _anonymous(archive) == {sealed: (seal, seal), in_p: (close, close), in_h: (close, close)}
    from pdi.archive.access import Reader, reading_as

    with reading_as(Reader()):
        deleted = archive.document_change(sealed)  # GetRecord of it: its deleted record, nothing of what it held
        assert (deleted.withdrawn_at, deleted.statements) == (seal, ())
        for name in (never, after):
            with pytest.raises(NotFoundError):
                archive.document_change(name)
        assert _anonymous(archive, series=H) == {in_h: (close, close)}  # a selective harvest of its set too
        assert archive.changes(since=_at(clock, 4).replace("09:00", "09:00:01")) == []
    # the owner (and a token for the series) sees them as they are: none deleted
    assert {str(c.generic.pdi): c.withdrawn_at for c in archive.changes()} == dict.fromkeys(
        (sealed, in_p, in_h, never, after))
    # shown again (the embargo lifted): no longer deleted, dated by the lift
    shown = _at(clock, 6)
    archive.embargo(sealed, None)
    assert _anonymous(archive)[sealed] == (shown, None)
