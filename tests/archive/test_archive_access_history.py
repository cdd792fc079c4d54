"""Schema step 21 reads back from the audit log what a change of access made before it showed or withheld
(:mod:`pdi.archive.access_history`): each rule of its docstring, on histories written here by hand.

The release archives' own harvest after an upgrade is tests/test_upgrade_releases.py (sickle, ``pdi serve``)."""

from __future__ import annotations

from pdi.archive.access_history import (
    DocumentHistory,
    SeriesHistory,
    Setting,
    embargo_settings,
)
from pdi.archive.store import SeriesRecord

DEPOSITED, CHANGED, LATER, NOW = "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"
FOREVER = "2099-01-01T00:00:00Z"


def _series(access: str, *settings: Setting, name: str = "a.example.us") -> SeriesHistory:
    return SeriesHistory({name: SeriesRecord(name, None, "", DEPOSITED, access)}, {name: list(settings)} if settings else {})


def _document(embargo: str | None = None, versions: dict[int, tuple[str, str | None]] | None = None,
              entries: tuple[tuple[str, str], ...] = ()) -> DocumentHistory:
    settings = embargo_settings(entries)
    return DocumentHistory("a.example.us", embargo, versions or {1: (DEPOSITED, None)}, settings.pop(None, ()),
                           {v: s for v, s in settings.items() if v is not None})


def test_a_series_made_private_and_public_again_dates_its_documents() -> None:
    series = _series("public", Setting(CHANGED, "private"), Setting(LATER, "public"))
    assert series.changed() == {"a.example.us"}
    assert _document().dated_by_migration(series, NOW)


def test_a_series_private_since_it_was_registered_hid_everything_and_dates_nothing() -> None:
    series = _series("private")  # no entry: as it is now since its registration (an imported private series)
    assert series.changed() == set() and not _document().dated_by_migration(series, NOW)


def test_a_series_a_mirror_made_private_as_its_origin_is_was_never_shown() -> None:
    followed = _series("private", Setting(CHANGED, "private", from_origin=True))
    assert not _document().dated_by_migration(followed, NOW)
    by_hand = _series("private", Setting(CHANGED, "private"))  # registered public by pdi series add, then made private
    assert _document().dated_by_migration(by_hand, NOW)


def test_an_embargo_moved_while_in_force_still_withholds_what_was_shown_before_it() -> None:
    entries = ((CHANGED, f"the document until {FOREVER}"), (LATER, "the document until 2098-01-01T00:00:00Z"))
    document = _document("2098-01-01T00:00:00Z", entries=entries)
    assert document.shown_at(DEPOSITED, _series("public")) == {1}
    assert document.shown_at(LATER, _series("public")) == frozenset()
    assert document.dated_by_migration(_series("public"), NOW)


def test_a_version_deposited_later_is_no_change_of_access() -> None:
    document = _document(versions={1: (DEPOSITED, None), 2: (LATER, None)})
    assert not document.dated_by_migration(_series("public", Setting(CHANGED, "public")), NOW)


def test_an_embargo_deposited_with_a_version_and_never_changed_dates_nothing() -> None:
    document = _document(versions={1: (DEPOSITED, FOREVER)})
    assert not document.dated_by_migration(_series("public"), NOW)
    over = _document(versions={1: (DEPOSITED, CHANGED)})  # over since: dated by its end, not by the migration
    assert not over.dated_by_migration(_series("public"), NOW)


def test_only_the_details_pdi_wrote_are_read() -> None:
    assert embargo_settings([
        (CHANGED, "version 2 until 2099-01-01T00:00:00Z"),
        (LATER, "the document: lifted"),
        (LATER, f"the document until {FOREVER} (from its origin's signed manifest)"),
        (NOW, "version two until tomorrow, said someone"),
    ]) == {2: [Setting(CHANGED, FOREVER)], None: [Setting(LATER, None), Setting(LATER, FOREVER, from_origin=True)]}
    # since 0.3.0 an entry names the embargo it replaced, which is not what it set
    assert embargo_settings([
        (CHANGED, f"version 2 until {FOREVER} (was until 2030-01-01T00:00:00.000000Z)"),
        (LATER, f"the document: lifted (was until {FOREVER})"),
        (NOW, "the document until 2030-01-01T00:00:00.000000Z (was until someone's whim)"),
    ]) == {2: [Setting(CHANGED, FOREVER)], None: [Setting(LATER, None)]}


def test_a_document_withheld_is_withheld_since_the_change_that_withheld_it() -> None:
    """Its deleted record lists the versions it had when dated: a version deposited while withheld (here in a
    private series) must not be among them, so the migration dates such a document when it was withheld."""
    series = _series("private", Setting(CHANGED, "private"))
    document = _document(versions={1: (DEPOSITED, None), 2: (LATER, None)})
    assert document.shown_at(DEPOSITED, series) == {1} and document.shown_at(LATER, series) == frozenset()
    assert document.dated_by_migration(series, NOW)
    assert document.withheld_since(series, NOW) == CHANGED  # version 2, deposited LATER, was never shown
    embargoed = _document(entries=((CHANGED, f"the document until {FOREVER}"),), embargo=FOREVER)
    assert embargoed.withheld_since(_series("public"), NOW) == CHANGED
    assert _document().withheld_since(_series("public"), NOW) is None  # shown now
    never = _series("private")  # never shown: nothing withheld from a reader who saw it
    assert _document().withheld_since(never, NOW) is None
