"""A format added to a withdrawn version, or to a version of a document withdrawn whole, is refused (both stores,
the command line, the write API).

docs/reference/write-api.md: a withdrawal takes a version (every format of it) or a whole document out of
service for good, and its names resolve to their tombstone (``pdi get`` exit 11, ``410``). A format added to
such a version afterwards (``pdi version --add-format``, :meth:`Archive.add_format`, ``/api/format``) would be
withdrawn from the moment it is stored, and its name, printed with exit 0, would serve only the tombstone. The
archive refuses it (:class:`~pdi.errors.WithdrawnError`, exit 11, ``410``, docs/reference/exit-codes.md), naming
the withdrawal, when and why, and that nothing was deposited; the archive is left as it was. A version still in
service of a document one of whose other versions was withdrawn takes a format as before.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from archive_helpers import Clock, snapshot
from click.testing import CliRunner
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.cli import cli
from pdi.errors import WithdrawnError
from pdi.server import create_app
from support.withdrawn_meanwhile import withdraw_while_staging

S = "oma.eop.gov.us"
#: When the test's clock withdraws, as the catalog keeps a moment (ISO 8601, GMT, microseconds, Z)
WITHDRAWN_AT = "2026-11-22T15:30:00.000000Z"
REASON = "filed under the wrong case"


def _withdrawn(archive: Archive, clock: Clock, *, whole: bool) -> tuple[str, str]:
    """A text document of two versions whose version 1 (``whole``: the whole document) is withdrawn an hour after
    the clock's start: version 1's name, and the name withdrawn."""
    name = str(archive.add(S, b"first\n", format="text"))
    generic = name.rsplit(".", 2)[0]
    archive.add_version(generic, [Content(b"second\n", "text")])
    clock.now = datetime.datetime(2026, 11, 22, 15, 30, tzinfo=datetime.UTC)
    withdrawn = generic if whole else name
    archive.withdraw(withdrawn, REASON)
    clock.now += datetime.timedelta(hours=1)
    return name, withdrawn


@pytest.mark.parametrize("whole", [False, True], ids=["the version", "its document"])
@pytest.mark.parametrize("format", ["utf-8", "text"], ids=["a new format", "the format it holds"])
def test_a_format_added_to_a_withdrawn_version_is_refused_naming_the_withdrawal(
        archive: Archive, clock: Clock, whole: bool, format: str) -> None:
    name, withdrawn = _withdrawn(archive, clock, whole=whole)
    before = snapshot(archive)
    with pytest.raises(WithdrawnError) as refused:
        archive.add_format(name, b"first\n", format=format)
    message = str(refused.value)
    assert withdrawn in message and WITHDRAWN_AT in message and REASON in message, message
    assert "nothing was deposited" in message, message
    assert (refused.value.reason, refused.value.at) == (REASON, WITHDRAWN_AT)
    assert snapshot(archive) == before


@pytest.mark.parametrize("whole", [False, True], ids=["the version", "its document"])
def test_a_withdrawal_made_while_the_format_is_staged_refuses_it(
        archive: Archive, clock: Clock, location: str, monkeypatch: pytest.MonkeyPatch, whole: bool) -> None:
    # the deposit's first checks find the version in service; another writer withdraws it before the format's
    # write transaction: that transaction's own check refuses it, and what was staged for it is gone
    name = str(archive.add(S, b"first\n", format="text"))
    withdrawn = name.rsplit(".", 2)[0] if whole else name
    clock.now = datetime.datetime(2026, 11, 22, 15, 30, tzinfo=datetime.UTC)
    store = archive.store
    withdraw_while_staging(monkeypatch, archive, location, clock, withdrawn, REASON)
    blobs = sorted(store.blob_names())
    with pytest.raises(WithdrawnError) as refused:
        archive.add_format(name, "first\n".encode("utf-16"), format="utf-16")
    monkeypatch.undo()
    message = str(refused.value)
    assert withdrawn in message and WITHDRAWN_AT in message and REASON in message, message
    assert "nothing was deposited" in message, message
    assert [r.format for r in archive.document(name.rsplit(".", 2)[0]).records] == ["text"]
    assert sorted(store.blob_names()) == blobs


def test_a_version_in_service_beside_a_withdrawn_one_takes_a_format(archive: Archive, clock: Clock) -> None:
    name, _ = _withdrawn(archive, clock, whole=False)
    second = name.rsplit(".", 1)[0] + ".2"  # …/1.text.2
    added = archive.add_format(second, b"second\n", format="utf-8")
    assert str(added) == second.replace(".text.2", ".utf-8.2")
    assert archive.get(str(added)).data == b"second\n"


def test_pdi_version_add_format_to_a_withdrawn_version_exits_11_and_deposits_nothing(tmp_path: Path) -> None:
    archive_dir = str(tmp_path / "archive")
    clock = Clock(datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC))
    made = Archive.init(archive_dir, clock=clock)
    made.add_series(S)
    name, _ = _withdrawn(made, clock, whole=False)
    made.close()
    same = tmp_path / "first.txt"
    same.write_bytes(b"first\n")
    done = CliRunner().invoke(cli, ["version", name, str(same), "--add-format", "--format", "utf-8",
                                    "--archive", archive_dir])
    assert done.exit_code == 11 and done.stdout == "", (done.exit_code, done.stdout, done.stderr)
    assert name in done.stderr and WITHDRAWN_AT in done.stderr and REASON in done.stderr, done.stderr
    listed = CliRunner().invoke(cli, ["ls", name.rsplit(".", 2)[0], "--archive", archive_dir])
    assert listed.exit_code == 0 and ".utf-8." not in listed.stdout, listed.stdout


def test_the_write_api_answers_410_to_a_format_of_a_withdrawn_version(location: str) -> None:
    clock = Clock(datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC))
    made = Archive.init(location, clock=clock)
    try:
        made.add_series(S)
        _, token = made.add_token("depositor", role="deposit", series=[S])
        name, _ = _withdrawn(made, clock, whole=False)
        before = snapshot(made)
        client = TestClient(create_app(location, archive=made))
        sent = client.post(f"/api/format?pdi={name}&format=utf-8", content=b"first\n",
                           headers={"Authorization": f"Bearer {token}", "Content-Type": "text/plain"})
        # RFC 9110 §15.5.11: 410 Gone, as every name of the version answers; an RFC 9457 problem naming it
        assert sent.status_code == 410, sent.text
        detail = sent.json()["detail"]
        assert name in detail and WITHDRAWN_AT in detail and REASON in detail, detail
        assert snapshot(made) == before
    finally:
        made.close()
