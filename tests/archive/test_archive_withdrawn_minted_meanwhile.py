"""A foreign id another writer mints (and withdraws whole) while a deposit under it is made: the refusal names it.

A deposit under a foreign id checks that the id is free twice, the second time
in its write transaction; on PostgreSQL another writer may still mint the same
id between that check and the deposit's own insert, which the unique index then
refuses (exit 5, ``409``). That refusal said "deposit a new version of it
instead", which a document withdrawn whole never takes (exit 11,
tests/archive/test_archive_withdrawn_whole.py): as on the ordinary path
(tests/archive/test_archive_withdrawn_octets.py), it names the withdrawal.

On PostgreSQL the race is made for real: another archive, on its own
connections, mints the id and withdraws the document while the deposit's write
transaction stands between its check and its insert. SQLite's writers take its
one write lock up front, so the other writer could not commit there: the check
is made to find the id free, as it found it before the other writer committed.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from archive_helpers import Clock

from pdi.archive import Archive, Content
from pdi.archive.naming import key_of
from pdi.errors import ImmutabilityError
from pdi.identifier import PDI

S = "oma.eop.gov.us"
ID = "case-12"
REASON = "sealed by the court"
WITHDRAWN_AT = "2026-11-22T15:30:00.000000Z"


def _minted_then_withdrawn(archive: Archive, clock: Clock) -> str:
    """The other writer's deposit under ``ID``, withdrawn whole at ``WITHDRAWN_AT``: its generic name."""
    name = str(archive.deposit(S, [Content(b"the other writer's\n", "text")], foreign_id=ID).names[0])
    generic = name.rsplit(".", 2)[0]
    clock.now = datetime.datetime(2026, 11, 22, 15, 30, tzinfo=datetime.UTC)
    archive.withdraw(generic, REASON)
    return generic


def _ours(archive: Archive, batch: bool) -> None:
    contents = [Content(b"ours\n", "text")]
    if batch:
        # the item under the id first: a serial minted before it would hold its day's count row, which the other
        # writer's deposit waits for
        archive.deposit_batch(S, [(contents, ID), ([Content(b"another\n", "text")], None)])
    else:
        archive.deposit(S, contents, foreign_id=ID)


def _said(message: str, generic: str, batch: bool) -> None:
    # a batch's refusal names its item (by index from 0, as every refusal of a batch's item does)
    assert message.startswith("item 0: ") == batch, message
    assert "already minted" in message and "new version" not in message, message
    assert generic in message and "withdrawn whole" in message and WITHDRAWN_AT in message, message
    assert REASON in message and "nothing was deposited" in message, message


@pytest.mark.parametrize("location", ["postgres"], indirect=True)
@pytest.mark.parametrize("batch", [False, True], ids=["a deposit", "a batch"])
def test_an_id_another_writer_mints_and_withdraws_meanwhile_is_refused_naming_the_withdrawal(
        archive: Archive, clock: Clock, location: str, monkeypatch: pytest.MonkeyPatch, batch: bool) -> None:
    store = archive.store
    real = store._new_document_row
    made: list[str] = []

    def minted_meanwhile(*args: Any) -> Any:
        # inside our write transaction, its check made: the other writer commits the id, then its withdrawal
        if not made and args[2] == ID:
            other = Archive.open(location, clock=clock)
            try:
                made.append(_minted_then_withdrawn(other, clock))
            finally:
                other.close()
        return real(*args)

    monkeypatch.setattr(store, "_new_document_row", minted_meanwhile)
    with pytest.raises(ImmutabilityError) as refused:
        _ours(archive, batch)
    monkeypatch.undo()
    (generic,) = made
    _said(str(refused.value), generic, batch)
    # nothing of ours was deposited: the other writer's one document, its one version, and our batch's first item
    # not minted either
    assert archive.store.versions(key_of(PDI.parse(generic))) == [1]
    assert [r.unique_id for r in archive.store.iter_representations()] == [ID]


@pytest.mark.parametrize("location", ["sqlite"], indirect=True)
@pytest.mark.parametrize("batch", [False, True], ids=["a deposit", "a batch"])
def test_sqlite_an_id_minted_after_the_check_is_refused_naming_the_withdrawal(
        archive: Archive, clock: Clock, monkeypatch: pytest.MonkeyPatch, batch: bool) -> None:
    generic = _minted_then_withdrawn(archive, clock)
    store = archive.store
    # the checks find the id free, as they would have before the other writer committed
    monkeypatch.setattr(store, "_check_mint", lambda *args, **kwargs: None)
    monkeypatch.setattr(store, "_minted_of", lambda keys: set())
    with pytest.raises(ImmutabilityError) as refused:
        _ours(archive, batch)
    monkeypatch.undo()
    _said(str(refused.value), generic, batch)
    assert archive.store.versions(key_of(PDI.parse(generic))) == [1]
    assert [r.unique_id for r in archive.store.iter_representations()] == [ID]
