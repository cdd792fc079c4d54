"""A new version of a document withdrawn whole is refused (both stores, the command line, the write API).

docs/reference/write-api.md: a withdrawal of a generic name takes the whole
document out of service for good, and every version of it resolves to its
tombstone (``pdi get`` exit 11, ``410``). A version deposited after it would be
withdrawn from the moment it is stored: the archive refuses it
(:class:`~pdi.errors.WithdrawnError`, exit 11, ``410``, docs/reference/exit-codes.md),
naming the document, when and why it was withdrawn, and that nothing was
deposited, and the archive is left as it was. The refusal is made inside the
deposit's own write transaction, so a withdrawal made while the version's
octets were being staged refuses it too.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from archive_helpers import Clock, snapshot
from click.testing import CliRunner
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.archive.naming import key_of
from pdi.cli import cli
from pdi.errors import WithdrawnError
from pdi.identifier import PDI
from pdi.server import create_app
from support.withdrawn_meanwhile import withdraw_while_staging

S = "oma.eop.gov.us"
#: When the test's clock withdraws the document, as the catalog keeps a moment (ISO 8601, GMT, microseconds, Z)
WITHDRAWN_AT = "2026-11-22T15:30:00.000000Z"


def _withdrawn_whole(archive: Archive, clock: Clock) -> str:
    """A document of two versions, withdrawn whole an hour after the clock's start: its generic name."""
    name = archive.add(S, b"first\n", format="text")
    generic = str(name).rsplit(".", 2)[0]
    archive.add_version(generic, [Content(b"second\n", "text")])
    clock.now = datetime.datetime(2026, 11, 22, 15, 30, tzinfo=datetime.UTC)
    archive.withdraw(generic, "filed under the wrong case")
    clock.now += datetime.timedelta(hours=1)
    return generic


def _said_in_full(exc: WithdrawnError, generic: str) -> None:
    message = str(exc)
    assert generic in message and WITHDRAWN_AT in message, message
    assert "filed under the wrong case" in message and "nothing was deposited" in message, message
    assert (exc.reason, exc.at, exc.purged) == ("filed under the wrong case", WITHDRAWN_AT, False)


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("octets", [b"third\n", b"second\n"], ids=["other octets", "the latest's octets"])
def test_a_new_version_of_a_document_withdrawn_whole_is_refused_naming_the_withdrawal(
        archive: Archive, clock: Clock, force: bool, octets: bytes) -> None:
    generic = _withdrawn_whole(archive, clock)
    before = snapshot(archive)
    with pytest.raises(WithdrawnError) as refused:
        archive.add_version(generic, [Content(octets, "text")], force=force)
    _said_in_full(refused.value, generic)
    assert snapshot(archive) == before


def test_a_withdrawal_made_while_the_octets_are_staged_refuses_the_version(
        archive: Archive, clock: Clock, location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the deposit's first check (a read) finds the document in service; another writer withdraws it whole before
    # the version's write transaction: that transaction's own check refuses it
    name = archive.add(S, b"first\n", format="text")
    generic = str(name).rsplit(".", 2)[0]
    clock.now = datetime.datetime(2026, 11, 22, 15, 30, tzinfo=datetime.UTC)
    store = archive.store
    withdraw_while_staging(monkeypatch, archive, location, clock, generic, "filed under the wrong case")
    blobs = sorted(store.blob_names())
    with pytest.raises(WithdrawnError) as refused:
        archive.add_version(generic, [Content(b"second\n", "text")])
    _said_in_full(refused.value, generic)
    monkeypatch.undo()
    # nothing deposited: the document keeps its one version, and the octets staged for the refused one are gone
    assert archive.store.versions(key_of(PDI.parse(generic))) == [1]
    assert sorted(store.blob_names()) == blobs


def test_pdi_version_of_a_document_withdrawn_whole_exits_11_and_deposits_nothing(tmp_path: Path) -> None:
    archive_dir = str(tmp_path / "archive")
    clock = Clock(datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC))
    made = Archive.init(archive_dir, clock=clock)
    made.add_series(S)
    generic = _withdrawn_whole(made, clock)
    made.close()
    third = tmp_path / "third.txt"
    third.write_bytes(b"third\n")
    done = CliRunner().invoke(cli, ["version", generic, str(third), "--archive", archive_dir])
    assert done.exit_code == 11 and done.stdout == "", (done.exit_code, done.stdout, done.stderr)
    assert generic in done.stderr and WITHDRAWN_AT in done.stderr and "filed under the wrong case" in done.stderr
    assert "nothing was deposited" in done.stderr
    listed = CliRunner().invoke(cli, ["ls", generic, "--archive", archive_dir])
    assert listed.exit_code == 0 and listed.stdout.count(".text.") == 2, listed.stdout


def test_the_write_api_answers_410_to_a_version_of_a_document_withdrawn_whole(location: str) -> None:
    clock = Clock(datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC))
    made = Archive.init(location, clock=clock)
    try:
        made.add_series(S)
        _, token = made.add_token("depositor", role="deposit", series=[S])
        generic = _withdrawn_whole(made, clock)
        before = snapshot(made)
        client = TestClient(create_app(location, archive=made))
        sent = client.post(f"/api/version?pdi={generic}&format=text", content=b"third\n",
                           headers={"Authorization": f"Bearer {token}", "Content-Type": "text/plain"})
        # RFC 9110 §15.5.11: 410 Gone, as every name of the document answers; an RFC 9457 problem naming it
        assert sent.status_code == 410, sent.text
        detail = sent.json()["detail"]
        assert generic in detail and WITHDRAWN_AT in detail and "filed under the wrong case" in detail, detail
        assert snapshot(made) == before
    finally:
        made.close()


def test_a_withdrawn_refusal_said_of_a_batch_item_keeps_its_tombstone() -> None:
    # PDIError.of_item says an error of a batch's item; a WithdrawnError said so is still one, with its tombstone
    said = WithdrawnError("urn:pdi://oma.eop.gov.us/2026/11/22/1 was withdrawn whole", reason="by order",
                          at=WITHDRAWN_AT, who="curator", purged=True).of_item(3)
    assert isinstance(said, WithdrawnError) and said.item == 3
    assert str(said) == "item 3: urn:pdi://oma.eop.gov.us/2026/11/22/1 was withdrawn whole"
    assert (said.reason, said.at, said.who, said.purged) == ("by order", WITHDRAWN_AT, "curator", True)
