"""An error said of a place or a batch's item (:meth:`pdi.errors.PDIError.within`, :meth:`~pdi.errors.PDIError.of_item`)
says its message once, with the place before it, whatever its class adds to the message it is made with."""

from __future__ import annotations

from pdi.errors import CommitUnknownError


def test_a_commit_unknown_error_of_an_item_says_its_advice_once() -> None:
    lost = CommitUnknownError("the connection to db.example:5432 was lost as the batch was committed")
    said = lost.of_item(3)
    assert isinstance(said, CommitUnknownError)
    assert said.message == f"item 3: {lost.message}"
    assert said.message.count(CommitUnknownError.LOOK) == 1
    assert said.what == f"item 3: {lost.what}"
    assert said.item == 3
    # said of another place instead of the item (an mbox's message): the item's prefix replaced, the advice once
    again = said.item_said("list.mbox: message 2: ")
    assert again.message == f"list.mbox: message 2: {lost.message}"


def test_a_commit_unknown_error_with_its_own_advice_keeps_it_said_of_a_place() -> None:
    lost = CommitUnknownError("the import's commit was lost", look="pdi ls --series S shows what was imported")
    said = lost.within("the registry at r.example: ")
    assert said.message == ("the registry at r.example: the import's commit was lost:"
                            " pdi ls --series S shows what was imported")
    assert CommitUnknownError.LOOK not in said.message
