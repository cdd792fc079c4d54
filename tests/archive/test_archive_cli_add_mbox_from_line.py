"""``pdi add FILE.mbox`` of a file that does not begin with a From_ line (docs/email.md §1).

RFC 4155 (Appendix A): each message of an mbox is immediately preceded by a separator line that begins ``From ``,
so an mbox begins with one. A file named ``.mbox`` that is one RFC 5322 message (line 1 ``From: …``) was refused
as a usage error (exit 2, "holds no message: no line starts with 'From '"), and one whose first message had lost
its From_ line had that message dropped without a word, the others deposited (exit 0). Either is refused now as
what it is, a syntax error (exit 1) naming the file, the line, what it holds and what was expected, with how to
deposit one message, and the archive left as it was."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from archive_helpers import snapshot
from click.testing import CliRunner, Result

from pdi.archive import Archive
from pdi.cli import cli

S = "mail.example.us"
ONE = (b"From: a@example.org\r\nTo: b@example.org\r\nSubject: one message\r\nMessage-ID: <one@example.org>\r\n"
       b"\r\nA message saved on its own, named .mbox.\r\n")
LATER = [b"From: c@example.org\nSubject: later %d\nMessage-ID: <later%d@example.org>\n\nlater %d\n" % (n, n, n)
         for n in (1, 2)]


def run(location: Path, *argv: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, [*argv, "--archive", str(location)])
    assert result.exit_code == code, (argv, result.output, result.exception)
    return result


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    location = tmp_path / "archive"
    run(location, "init")
    run(location, "series", "add", S)
    return location


def _held(location: Path) -> object:
    with Archive.open(str(location)) as opened:
        return snapshot(opened)


def _refusal(path: Path, line: int, offset: int, shown: str) -> str:
    """The one line ``pdi add`` says, as docs/email.md words it."""
    return (f"pdi: syntax error: {path}: line {line} is not an mbox From_ line (one that begins 'From '): {shown};"
            " an mbox begins with one (RFC 4155), and what comes before it would be in no message; nothing was"
            f" deposited (if it is one message, not an mbox, pdi add {shlex.quote(str(path))} --format rfc822"
            f" deposits it) (rule mbox, offset {offset})")


def test_one_message_named_mbox_is_refused_saying_so_and_deposited_as_one_message(archive: Path,
                                                                                 tmp_path: Path) -> None:
    box = tmp_path / "saved message.mbox"
    box.write_bytes(ONE)
    before = _held(archive)
    refused = run(archive, "add", "-s", S, str(box), code=1)
    assert refused.stdout == ""
    assert refused.stderr.splitlines() == [_refusal(box, 1, 0, "'From: a@example.org'")]
    assert _held(archive) == before
    # what it says to do deposits it: one message, named by its Message-ID
    added = run(archive, "add", "-s", S, str(box), "--format", "rfc822")
    (name,) = added.stdout.split()
    assert name.endswith("/mid:one%40example%2Eorg.rfc822.1"), name
    assert run(archive, "get", name).stdout_bytes == ONE


def test_a_first_line_past_ascii_is_quoted_with_each_octet_escaped_once(archive: Path, tmp_path: Path) -> None:
    """A Latin-1 subject line first (``Sujet: \\xe9t\\xe9``): quoted as Python writes its bytes, each octet past
    ASCII ``\\xe9`` once, where it wrote ``\\\\xe9``, the backslash twice."""
    box = tmp_path / "latin.mbox"
    box.write_bytes(b"Sujet: \xe9t\xe9\nFrom c@example.org Mon Jan  1 00:00:00 2024\n" + ONE)
    refused = run(archive, "add", "-s", S, str(box), code=1)
    assert refused.stderr.splitlines() == [_refusal(box, 1, 0, r"'Sujet: \xe9t\xe9'")]


def test_an_mbox_whose_first_message_lost_its_from_line_deposits_none_of_them(archive: Path, tmp_path: Path) -> None:
    """It deposited the two messages after From_ lines and dropped the first, exit 0."""
    box = tmp_path / "list.mbox"
    box.write_bytes(ONE + b"".join(b"\nFrom c@example.org Mon Jan  1 00:00:00 2024\n" + m for m in LATER))
    before = _held(archive)
    refused = run(archive, "add", "-s", S, str(box), code=1)
    assert refused.stderr.splitlines() == [_refusal(box, 1, 0, "'From: a@example.org'")]
    assert _held(archive) == before


def test_given_as_mbox_a_message_is_refused_as_well_and_in_a_list_of_files_said_of_its_place(
        archive: Path, tmp_path: Path) -> None:
    message, note = tmp_path / "one.eml", tmp_path / "note.txt"
    message.write_bytes(ONE)
    note.write_bytes(b"a note\n")
    refused = run(archive, "add", "-s", S, "--format", "mbox", str(message), code=1)
    assert refused.stderr.splitlines() == [_refusal(message, 1, 0, "'From: a@example.org'")]
    refused = run(archive, "add", "-s", S, "-f", "mbox", str(message), str(message), code=1)
    assert refused.stderr.startswith(f"pdi: syntax error: {message}, file 1 of 2 (none before it; the 1 after it not"
                                     " tried): line 1 is not an mbox From_ line"), refused.stderr


def test_blank_lines_before_the_first_from_line_hold_nothing_and_are_passed_over(archive: Path,
                                                                                tmp_path: Path) -> None:
    """Blank lines (spaces, tabs, line ends) before the first From_ line would be in no message, and hold nothing
    to lose: the mbox is deposited, each message its own octets. A line after them that is not blank is named by
    its number and offset."""
    box = tmp_path / "list.mbox"
    lead = b"\n \t\r\n\n"
    box.write_bytes(lead + b"\n".join(b"From c@example.org Mon Jan  1 00:00:00 2024\n" + m for m in LATER))
    added = run(archive, "add", "-s", S, str(box))
    names = added.stdout.split()
    assert [run(archive, "get", name).stdout_bytes for name in names] == LATER

    late = tmp_path / "late.mbox"
    late.write_bytes(lead + b"Subject: no From_ line\n\n" + box.read_bytes())
    before = _held(archive)
    refused = run(archive, "add", "-s", S, str(late), code=1)
    assert refused.stderr.splitlines() == [_refusal(late, 4, len(lead), "'Subject: no From_ line'")]
    assert _held(archive) == before


def test_an_mbox_given_as_one_message_is_refused_saying_to_drop_the_format_and_that_deposits_it(
    archive: Path, tmp_path: Path,
) -> None:
    """``pdi add list.mbox --format rfc822`` (a clerk who read that an e-mail is rfc822): refused, nothing deposited,
    saying that without ``--format rfc822`` each message is deposited, where it said "pdi add FILE.mbox", which is
    what was run; and so it is."""
    box = tmp_path / "list.mbox"
    box.write_bytes(b"From a@example.org Mon Jan  1 00:00:00 2024\n" + ONE)
    before = _held(archive)
    refused = run(archive, "add", "-s", S, str(box), "--format", "rfc822", code=3)
    assert refused.stdout == "" and "without --format rfc822, deposits each of its messages" in refused.stderr
    assert _held(archive) == before
    added = run(archive, "add", "-s", S, str(box))
    (name,) = added.stdout.split()
    assert name.endswith("/mid:one%40example%2Eorg.rfc822.1"), name
