"""The refusal of octets a withdrawn latest version holds says what is true where it is shown (both stores, CLI).

A deposit of the octets a document's latest version holds, that version
withdrawn, is refused (exit 5, ``409``), naming the version and its withdrawal
(CHANGELOG). What deposits them after all depends on who asks and on what was
withdrawn: when the version alone was withdrawn, a forced new version holds
them (``pdi version --force``; ``pdi capture --force`` for a capture, in its own
words); when the whole document was withdrawn, nothing can be deposited in it
(docs/reference/write-api.md: its tombstone covers every version). The
archive's message says what holds and why; each command adds the hint that
applies to it, and a command with no such flag (an mbox, the write API) none.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from archive_helpers import Clock, snapshot
from click.testing import CliRunner

from pdi.archive import Archive, Content
from pdi.cli import cli
from pdi.errors import ImmutabilityError

S = "oma.eop.gov.us"
HELD = b"sealed by order\n"
WITHDRAWN_AT = "2026-11-22T15:30:00.000000Z"


def _held_then_withdrawn(archive: Archive, clock: Clock, *, whole: bool) -> str:
    """``HELD`` as version 1 of the document ``case-12``, withdrawn (the version, or ``whole``) at ``WITHDRAWN_AT``:
    the versioned name."""
    name = str(archive.add(S, HELD, format="text", foreign_id="case-12"))
    clock.now = datetime.datetime(2026, 11, 22, 15, 30, tzinfo=datetime.UTC)
    archive.withdraw(name.rsplit(".", 2)[0] if whole else name, "sealed by the court")
    clock.now += datetime.timedelta(minutes=5)
    return name


@pytest.mark.parametrize("whole", [False, True], ids=["the version", "the whole document"])
def test_the_archives_refusal_names_what_holds_the_octets_and_no_command(
        archive: Archive, clock: Clock, whole: bool) -> None:
    name = _held_then_withdrawn(archive, clock, whole=whole)
    before = snapshot(archive)
    with pytest.raises(ImmutabilityError) as refused:
        archive.deposit(S, [Content(HELD, "text")], foreign_id="case-12")
    message = str(refused.value)
    assert name in message and WITHDRAWN_AT in message and "sealed by the court" in message, message
    assert "nothing was deposited" in message, message
    # no command's flag: the archive is asked by the command line, captures, imports and the write API alike
    assert "--force" not in message and "pdi " not in message, message
    assert ("withdrawn whole" in message) == whole, message
    if whole:
        assert name.rsplit(".", 2)[0] in message
    assert snapshot(archive) == before


def _cli(tmp_path: Path, *, whole: bool) -> tuple[list[str], str, Path]:
    location = str(tmp_path / "archive")
    clock = Clock(datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC))
    made = Archive.init(location, clock=clock)
    made.add_series(S)
    name = _held_then_withdrawn(made, clock, whole=whole)
    made.close()
    held = tmp_path / "held.txt"
    held.write_bytes(HELD)
    return ["--archive", location], name, held


@pytest.mark.usefixtures("one_gmt_day")  # the --id deposit must find the first one's name: one GMT day
@pytest.mark.parametrize("whole", [False, True], ids=["the version", "the whole document"])
def test_pdi_add_with_the_id_says_pdi_version_force_only_when_it_would_deposit_them(
        tmp_path: Path, whole: bool) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as opened:  # on the one_gmt_day clock, as the command's archive
        opened.add_series(S)
        name = str(opened.add(S, HELD, format="text", foreign_id="case-12"))
        opened.withdraw(name.rsplit(".", 2)[0] if whole else name, "sealed by the court")
    held = tmp_path / "held.txt"
    held.write_bytes(HELD)
    archive = ["--archive", location]
    done = CliRunner().invoke(cli, ["add", str(held), "--series", S, "--id", "case-12", *archive])
    assert done.exit_code == 5 and done.stdout == "", (done.exit_code, done.stdout, done.stderr)
    assert name in done.stderr and "sealed by the court" in done.stderr, done.stderr
    hint = "(pdi version --force deposits them as a new version)"
    assert (hint in done.stderr) == (not whole), done.stderr
    assert done.stderr.count("--force") == (0 if whole else 1), done.stderr


def test_pdi_version_says_its_own_force_and_force_deposits_them(tmp_path: Path) -> None:
    archive, name, held = _cli(tmp_path, whole=False)
    generic = name.rsplit(".", 2)[0]
    done = CliRunner().invoke(cli, ["version", generic, str(held), *archive])
    assert done.exit_code == 5 and done.stdout == "", (done.exit_code, done.stdout, done.stderr)
    assert name in done.stderr and "sealed by the court" in done.stderr, done.stderr
    assert done.stderr.rstrip().endswith("(--force deposits them as a new version)"), done.stderr
    assert "pdi version --force" not in done.stderr, done.stderr
    forced = CliRunner().invoke(cli, ["version", generic, str(held), "--force", *archive])
    assert (forced.exit_code, forced.stdout) == (0, f"{generic}.text.2\n"), forced.output
    got = CliRunner().invoke(cli, ["get", f"{generic}.text.2", *archive])
    assert got.exit_code == 0 and got.stdout_bytes == HELD, got.output


@pytest.mark.parametrize("batch", [False, True], ids=["a deposit", "a batch"])
def test_other_octets_under_the_id_of_a_document_withdrawn_whole_are_not_told_to_make_a_new_version(
        archive: Archive, clock: Clock, batch: bool) -> None:
    # "already minted; deposit a new version of it instead" is the advice for a document in service: one withdrawn
    # whole takes no new version (exit 11), so the refusal names the withdrawal and gives no such advice
    name = _held_then_withdrawn(archive, clock, whole=True)
    before = snapshot(archive)
    with pytest.raises(ImmutabilityError) as refused:
        if batch:
            archive.deposit_batch(S, [([Content(b"a new one\n", "text")], None),
                                      ([Content(b"other octets\n", "text")], "case-12")])
        else:
            archive.deposit(S, [Content(b"other octets\n", "text")], foreign_id="case-12")
    message = str(refused.value)
    assert "already minted" in message and "new version" not in message, message
    assert name.rsplit(".", 2)[0] in message and "withdrawn whole" in message and WITHDRAWN_AT in message, message
    assert "sealed by the court" in message and message.startswith("item 1: ") == batch, message
    assert snapshot(archive) == before
