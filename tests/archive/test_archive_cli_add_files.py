"""``pdi add FILE...``: several files, each its own document, deposited in turn, each name printed as it is made.

Not all or none (unlike an mbox): a refused file stops the command there, the files before it deposited and
printed, the error naming the file, its place and how many were deposited, with that file's exit status.
"""

from __future__ import annotations

import hashlib
import mailbox
import mimetypes
import subprocess
import sys
from email.message import EmailMessage
from pathlib import Path

import pytest
from archive_helpers import SRC
from click.testing import CliRunner, Result

from pdi.cli import cli
from pdi.errors import UnsupportedError
from pdi.formats import token_for

S = "library.example.fr"
PDFS = SRC.parent / "tests" / "data" / "pdf"


def run(location: str, *argv: str, code: int = 0, stdin: bytes | None = None) -> Result:
    result = CliRunner().invoke(cli, [*argv, "--archive", location], input=stdin)
    assert result.exit_code == code, (argv, result.output, result.stderr, result.exception)
    return result


@pytest.fixture
def archive(tmp_path: Path) -> str:
    location = str(tmp_path / "archive")
    run(location, "init")
    run(location, "series", "add", S)
    return location


def _stored(location: str) -> list[tuple[str, str]]:
    """Every name the archive lists in the series, with the SHA-256 of the octets it gives back."""
    names = run(location, "ls", S).stdout.split()
    return [(name, hashlib.sha256(run(location, "get", name).stdout_bytes).hexdigest()) for name in names]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_several_files_are_each_a_document_deposited_in_the_order_given(archive: str, tmp_path: Path) -> None:
    """Three files of three formats: three documents, serials 1, 2, 3 in the order given (not the names' order),
    each format told from its own file's name, one line each on stdout, each name giving back its file's octets."""
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"first line\n")
    paper = tmp_path / "a-paper.pdf"
    paper.write_bytes((PDFS / "paragraph_and_link.pdf").read_bytes())
    page = tmp_path / "page.html"
    page.write_bytes(b"<!DOCTYPE html><title>t</title><p>a page</p>")
    added = run(archive, "add", "-s", S, str(notes), str(paper), str(page))
    lines = added.stdout.splitlines()
    assert len(lines) == 3, added.stdout
    assert [line.rsplit("/", 1)[1] for line in lines] == ["1.text.1", "2.pdf.1", "3.html.1"]
    assert added.stderr == ""
    assert sorted(_stored(archive)) == sorted(
        zip(lines, [_sha256(notes), _sha256(paper), _sha256(page)], strict=True))


def test_a_file_refused_in_the_middle_stops_there_the_ones_before_kept(location: str, tmp_path: Path) -> None:
    """A text named .pdf, second of three: exit 3 (its refusal's), the first deposited and printed, the error line
    naming the file, its place and the one deposited; the third not tried; the archive holds the first alone (on
    SQLite and PostgreSQL)."""
    run(location, "init")
    run(location, "series", "add", S)
    first = tmp_path / "one.txt"
    first.write_bytes(b"one\n")
    bad = tmp_path / "two.pdf"
    bad.write_bytes(b"hello\n")
    third = tmp_path / "three.txt"
    third.write_bytes(b"three\n")
    refused = run(location, "add", str(first), str(bad), str(third), "--series", S, code=3)
    name = refused.stdout.strip()
    assert refused.stdout == f"{name}\n" and name.endswith("/1.text.1"), refused.stdout
    assert refused.stderr == (
        f"pdi: format check failed: {bad}, file 2 of 3 (the 1 before it deposited, its name printed; the 1 after it"
        " not tried): the content is text/plain (ASCII text), but it was declared application/pdf (pdi's format token pdf);"
        " give --format text, or --force to deposit it as declared\n"
    )
    assert _stored(location) == [(name, _sha256(first))]
    # going on with the files after it: the next serial, nothing minted for the refused one
    assert run(location, "add", str(third), "-s", S).stdout.strip().endswith("/2.text.1")


def test_a_missing_file_last_is_refused_before_any_is_deposited_exit_4(archive: str, tmp_path: Path) -> None:
    """Every named file is looked at before the first deposit: a missing one last refuses the command, nothing of
    the two before it deposited (they were, and printed, before it was found)."""
    files = []
    for n in range(2):
        files.append(tmp_path / f"{n}.txt")
        files[-1].write_bytes(f"file {n}\n".encode())
    missing = tmp_path / "gone.txt"
    refused = run(archive, "add", "-s", S, *map(str, files), str(missing), code=4)
    assert refused.stdout == ""
    assert refused.stderr == (f"pdi: not found: 1 of the 3 files cannot be read, so none was deposited:"
                              f" {missing}: no such file\n")
    assert _stored(archive) == []


def test_every_file_that_cannot_be_read_is_named_before_any_is_deposited(archive: str, tmp_path: Path) -> None:
    """A missing file, a socket (no file open(2) reads: ENXIO) and a name under a file (ENOTDIR) among good ones:
    each is named, in the order given, with why; the exit status is the first one's (4: no such file); nothing is
    deposited. The same command with the good files alone deposits them all."""
    import socket

    good = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for n, path in enumerate(good):
        path.write_bytes(f"good {n}\n".encode())
    missing = tmp_path / "gone.txt"
    under = tmp_path / "a.txt" / "c.txt"
    sock_path = tmp_path / "s.txt"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        refused = run(archive, "add", "-s", S, str(good[0]), str(missing), str(good[1]), str(sock_path), str(under),
                      code=4)
        assert refused.stdout == ""
        assert refused.stderr == (f"pdi: not found: 3 of the 5 files cannot be read, so none was deposited:"
                                  f" {missing}: no such file; {sock_path}: a socket, not a file;"
                                  f" {under}: no such file\n")
        assert _stored(archive) == []
        # a socket alone: a storage error as any file open(2) refuses (exit 8), said as one file's always was
        refused = run(archive, "add", "-s", S, str(sock_path), code=8)
        assert refused.stderr == f"pdi: storage error: cannot read {sock_path}: a socket, not a file\n"
    added = run(archive, "add", "-s", S, *map(str, good))
    assert [n.rsplit("/", 1)[1] for n in added.stdout.splitlines()] == ["1.text.1", "2.text.1"]


def test_a_missing_file_alone_is_said_as_before(archive: str, tmp_path: Path) -> None:
    missing = tmp_path / "gone.txt"
    refused = run(archive, "add", "-s", S, str(missing), code=4)
    assert refused.stderr == f"pdi: not found: cannot read {missing}: no such file\n"


def test_a_named_pipe_is_taken_as_a_file_and_not_opened_before_its_turn(archive: str, tmp_path: Path) -> None:
    """A FIFO (mkfifo, or a shell's process substitution) is not opened by the look before the first deposit: an
    open and close there would let its writer's open return and its first write meet no reader (EPIPE)."""
    import os
    import threading

    first = tmp_path / "first.txt"
    first.write_bytes(b"first\n")
    fifo = tmp_path / "piped.txt"
    os.mkfifo(fifo)
    written: list[int] = []

    def writer() -> None:
        with open(fifo, "wb") as out:  # blocks until the reader opens it, at its turn
            written.append(out.write(b"through a pipe\n"))

    thread = threading.Thread(target=writer)
    thread.start()
    added = run(archive, "add", "-s", S, str(first), str(fifo))
    thread.join(10)
    assert written == [15]
    names = added.stdout.splitlines()
    assert run(archive, "get", names[1]).stdout_bytes == b"through a pipe\n"


def test_the_first_of_several_refused_deposits_nothing(archive: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"hello\n")
    good = tmp_path / "good.txt"
    good.write_bytes(b"good\n")
    refused = run(archive, "add", "-s", S, str(bad), str(good), str(good), code=3)
    assert refused.stdout == ""
    assert refused.stderr.startswith(f"pdi: format check failed: {bad}, file 1 of 3 (none before it; the 2 after it"
                                     " not tried): the content is text/plain"), refused.stderr
    assert _stored(archive) == []


def test_one_file_refused_is_said_as_before(archive: str, tmp_path: Path) -> None:
    """With one file, the error line is today's: no place, no count."""
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"hello\n")
    refused = run(archive, "add", "-s", S, str(bad), code=3)
    assert refused.stderr.startswith(f"pdi: format check failed: {bad}: the content is text/plain"), refused.stderr


def test_id_with_several_files_is_a_usage_error_before_anything_is_deposited(archive: str, tmp_path: Path) -> None:
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_bytes(b"one\n")
    two.write_bytes(b"two\n")
    refused = run(archive, "add", "-s", S, "--id", "q3-report", str(one), str(two), code=2)
    assert "Error: --id names one document, and 2 files were given: give one FILE with --id" in refused.stderr
    assert refused.stdout == ""
    assert _stored(archive) == []


def test_a_file_whose_format_cannot_be_told_is_refused_before_any_is_deposited(archive: str, tmp_path: Path) -> None:
    """Every file's format is told from its name, and a directory said, before the first is deposited."""
    good = tmp_path / "good.txt"
    good.write_bytes(b"good\n")
    odd = tmp_path / "README"
    odd.write_bytes(b"odd\n")
    refused = run(archive, "add", "-s", S, str(good), str(odd), code=2)
    assert f"Error: cannot tell the format of {odd} from its name: give --format" in refused.stderr
    # a name whose media type has no format token (a new user's .mkv, found 2026-12-02): named, and what to give,
    # where it said "unsupported: media type 'video/x-matroska' is not in the registry", naming no file
    tarred = tmp_path / "papers.tar"
    tarred.write_bytes(b"odd\n")
    media_type = mimetypes.guess_type(tarred.name, strict=False)[0]
    assert media_type is not None
    with pytest.raises(UnsupportedError):  # pdi's registry has no token for it
        token_for(media_type)
    refused = run(archive, "add", "-s", S, str(good), str(tarred), code=2)
    assert (f"Error: cannot tell the format of {tarred} from its name: its media type {media_type} has no format"
            " token; give --format") in refused.stderr
    folder = tmp_path / "papers"
    folder.mkdir()
    refused = run(archive, "add", "-s", S, str(good), str(folder), code=2)
    assert f"Error: {folder} is a directory" in refused.stderr
    assert f"pdi add -s SERIES {folder}/*" in refused.stderr  # how to add a folder's files
    assert _stored(archive) == []
    refused = run(archive, "add", "-s", S, "--format", "text", str(good), str(folder), code=2)
    assert f"Error: {folder} is a directory" in refused.stderr
    assert _stored(archive) == []
    # --format is every file's
    added = run(archive, "add", "-s", S, "--format", "text", str(good), str(odd))
    assert [n.rsplit("/", 1)[1] for n in added.stdout.splitlines()] == ["1.text.1", "2.text.1"]


def test_a_missing_file_is_said_missing_not_of_a_format_its_name_cannot_tell(archive: str, tmp_path: Path) -> None:
    """A typo in a name without a suffix (``pdi add READMe``): the file is missing, which is what is said (exit 4, as
    of a missing ``notes.txt``), where it said its format could not be told from its name (exit 2), as if giving
    --format would help; by pdi add and by pdi version, one file or several, nothing deposited."""
    good = tmp_path / "good.txt"
    good.write_bytes(b"good\n")
    missing = tmp_path / "READMe"
    assert not missing.exists()
    refused = run(archive, "add", "-s", S, str(missing), code=4)
    assert refused.stderr == f"pdi: not found: cannot read {missing}: no such file\n"
    refused = run(archive, "add", "-s", S, str(good), str(missing), code=4)
    assert refused.stderr == (f"pdi: not found: 1 of the 2 files cannot be read, so none was deposited: {missing}:"
                              " no such file\n")
    assert _stored(archive) == []
    name = run(archive, "add", "-s", S, str(good)).stdout.strip()
    document = name.rsplit(".", 2)[0]
    refused = run(archive, "version", document, str(missing), code=4)
    assert refused.stderr == f"pdi: not found: cannot read {missing}: no such file\n"
    assert run(archive, "ls", S).stdout.split() == [name]
    # a file that is there, of a name that tells no format, is still asked its --format
    missing.write_bytes(b"odd\n")
    refused = run(archive, "version", document, str(missing), code=2)
    assert f"Error: cannot tell the format of {missing} from its name: give --format" in refused.stderr


def test_standard_input_is_read_once_among_several(archive: str, tmp_path: Path) -> None:
    good = tmp_path / "good.txt"
    good.write_bytes(b"good\n")
    refused = run(archive, "add", "-s", S, "-f", "text", "-", str(good), "-", code=2)
    assert "Error: standard input ('-') can be read once only" in refused.stderr
    # said before the format of '-' (which its name cannot tell): the usage error first
    refused = run(archive, "add", "-s", S, "-", "-", code=2)
    assert "Error: standard input ('-') can be read once only" in refused.stderr
    assert "cannot tell the format" not in refused.stderr
    added = run(archive, "add", "-s", S, "-f", "text", str(good), "-", stdin=b"from a pipe\n")
    names = added.stdout.splitlines()
    assert run(archive, "get", names[1]).stdout_bytes == b"from a pipe\n"


def test_an_outlook_msg_file_is_refused_saying_what_it_is_and_what_to_do(archive: str, tmp_path: Path) -> None:
    """A clerk's ``exhibit.msg`` (Outlook's own file: a compound file, whose first octets MS-CFB §2.2 fixes) asked
    only for --format, where the format it would name (rfc822) is then refused too: it now says what a .msg is and
    what to do (save it as .eml, or keep its octets as octet-stream), nothing deposited; and each way it names
    works."""
    msg = tmp_path / "exhibit.MSG"
    msg.write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + bytes(504))  # the compound file's signature, then its header
    refused = run(archive, "add", "-s", S, str(msg), code=2)
    assert (f"Error: cannot tell the format of {msg} from its name: a .msg file is Outlook's own format, not an"
            " e-mail message (RFC 5322) pdi reads: save the message from the mail program as .eml and add that, or"
            " keep this file's octets as they are with --format octet-stream") in " ".join(refused.stderr.split())
    assert _stored(archive) == []
    run(archive, "add", "-s", S, str(msg), "--format", "rfc822", code=3)  # what --format rfc822 would have met
    kept = run(archive, "add", "-s", S, str(msg), "--format", "octet-stream").stdout.strip()
    assert kept.endswith("/1.octet-stream.1")
    eml = tmp_path / "exhibit.eml"
    eml.write_bytes(b"From: a@example.org\r\nSubject: exhibit\r\n\r\nbody\r\n")
    assert run(archive, "add", "-s", S, str(eml)).stdout.strip().endswith("/2.rfc822.1")
    assert _stored(archive) == [(kept, _sha256(msg)), (kept.replace("/1.octet-stream.1", "/2.rfc822.1"), _sha256(eml))]


def test_standard_input_without_a_format_is_asked_for_one_as_having_no_name(archive: str) -> None:
    """``echo … | pdi add - -s S``: refused (exit 2, nothing read, nothing deposited) saying standard input has no
    name to tell its format by, where it said it could not tell the format "of - from its name", as if '-' were a
    file's name; by pdi add and pdi version alike. With --format it is deposited."""
    for argv in (["add", "-s", S, "-"], ["version", f"urn:pdi://{S}/2026/12/02/1", "-"]):
        refused = run(archive, *argv, code=2, stdin=b"from a pipe\n")
        assert ("Error: standard input ('-') has no name to tell its format by: give --format with its format token"
                in refused.stderr), refused.stderr
        assert "from its name" not in refused.stderr
    assert _stored(archive) == []
    added = run(archive, "add", "-s", S, "-f", "text", "-", stdin=b"from a pipe\n")
    assert run(archive, "get", added.stdout.strip()).stdout_bytes == b"from a pipe\n"


def test_an_mbox_among_files_prints_a_line_a_message(archive: str, tmp_path: Path) -> None:
    box = mailbox.mbox(tmp_path / "list.mbox")
    for n in range(2):
        message = EmailMessage()
        message["From"] = "a@example.org"
        message["Message-ID"] = f"<m{n}@example.org>"
        message.set_content(f"message {n}\n")
        box.add(message)
    box.close()
    note = tmp_path / "note.txt"
    note.write_bytes(b"a note\n")
    added = run(archive, "add", "-s", S, str(tmp_path / "list.mbox"), str(note))
    assert [n.rsplit("/", 1)[1] for n in added.stdout.splitlines()] == [
        "mid:m0%40example%2Eorg.rfc822.1", "mid:m1%40example%2Eorg.rfc822.1", "1.text.1"], added.stdout

    # refused after it: the count is of files deposited (1) and of names printed (3, the mbox's two and the note's)
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"hello\n")
    refused = run(archive, "add", "-s", S, "--serial", str(tmp_path / "list.mbox"), str(note), str(bad), code=3)
    assert len(refused.stdout.splitlines()) == 3
    said = refused.stderr.splitlines()[-1]  # (after the warnings of second names the mbox's messages got)
    assert said.startswith(f"pdi: format check failed: {bad}, file 3 of 3 (the 2 before it deposited, their 3 names"
                           " printed): the content is text/plain"), refused.stderr
    refused = run(archive, "add", "-s", S, "--serial", str(tmp_path / "list.mbox"), str(bad), code=3)
    assert refused.stderr.splitlines()[-1].startswith(
        f"pdi: format check failed: {bad}, file 2 of 2 (the 1 before it deposited, its 2 names printed): the content"
    ), refused.stderr


def test_a_usage_error_of_a_file_in_the_middle_is_said_of_its_place(archive: str, tmp_path: Path) -> None:
    """An mbox that holds no message (an empty file, --allow-empty: else refused before any file is deposited),
    second of three: the usage error (exit 2) names its place, the first kept."""
    good = tmp_path / "good.txt"
    good.write_bytes(b"good\n")
    empty = tmp_path / "empty.mbox"
    empty.write_bytes(b"")
    refused = run(archive, "add", "-s", S, str(good), str(empty), str(good), "--allow-empty", code=2)
    assert refused.stdout.strip().endswith("/1.text.1")
    assert (f"Error: {empty}, file 2 of 3 (the 1 before it deposited, its name printed; the 1 after it not tried):"
            f" {empty} holds no message: no line starts with 'From '") in refused.stderr
    assert len(_stored(archive)) == 1


def test_help_says_what_a_line_holds_that_it_is_not_all_or_none_and_how_to_go_on() -> None:
    shown = " ".join(CliRunner().invoke(cli, ["add", "--help"], prog_name="pdi").stdout.split())
    assert "Usage: pdi add [OPTIONS] FILE..." in shown
    assert "one line a file, in the order given: the name minted for it" in shown
    assert "not all or none (unlike an mbox)" in shown
    assert ("mend the refused file and add it and the files after it, or add only the files after it; never add"
            " again those before it: a file added again gets a second name") in shown


def test_an_empty_file_or_standard_input_is_refused_unless_allowed(archive: str, tmp_path: Path) -> None:
    """``cat nosuch.txt | pdi add -`` (cat failed: standard input empty) minted a 0-byte document for good, exit 0:
    refused now, saying what was empty, nothing minted; --allow-empty deposits one that is meant."""
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    for args, said in ((["-", "--format", "text"], "standard input gave no octets"),
                       ([str(empty)], f"{empty} is empty (0 octets)")):
        refused = run(archive, "add", "-s", S, *args, code=2)
        assert refused.stdout == ""
        assert f"Error: {said}: nothing was deposited (--allow-empty deposits an empty document)" in refused.stderr
    assert _stored(archive) == []
    # a real pipe from a command that failed, as the user typed it
    piped = subprocess.run(f"cat {tmp_path / 'nosuch.txt'} | {sys.executable} -m pdi add - -s {S} --format text"
                           f" --archive {archive}", shell=True, capture_output=True, text=True, timeout=120)
    assert piped.returncode == 2 and "standard input gave no octets" in piped.stderr, piped.stderr
    assert _stored(archive) == []
    allowed = run(archive, "add", "-s", S, str(empty), "--allow-empty")
    name = allowed.stdout.strip()
    assert run(archive, "get", name).stdout_bytes == b""
    # pdi version: the same rule
    refused = run(archive, "version", name.rsplit(".", 2)[0], str(empty), "--force", code=2)
    assert f"{empty} is empty (0 octets)" in refused.stderr
    assert run(archive, "version", name.rsplit(".", 2)[0], str(empty), "--force", "--allow-empty").stdout.strip(
    ).endswith(".text.2")
    # one octet is not empty, and what was looked at is deposited whole
    piped = subprocess.run([sys.executable, "-m", "pdi", "add", "-", "-s", S, "--format", "text", "--archive", archive],
                           input=b"x", capture_output=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert run(archive, "get", piped.stdout.decode().strip()).stdout_bytes == b"x"


def test_every_empty_file_is_refused_before_any_is_deposited(archive: str, tmp_path: Path) -> None:
    """``pdi add -s S a1.txt e.txt b1.txt``, e.txt empty, minted a1.txt and then refused e.txt (exit 2), where the
    help says an empty FILE is refused before anything is deposited: now every empty file is named, in the order
    given, and nothing is deposited; --allow-empty deposits all three."""
    a1, e, b1, f = (tmp_path / n for n in ("a1.txt", "e.txt", "b1.txt", "f.txt"))
    a1.write_bytes(b"a1\n")
    b1.write_bytes(b"b1\n")
    e.write_bytes(b"")
    f.write_bytes(b"")
    refused = run(archive, "add", "-s", S, str(a1), str(e), str(b1), code=2)
    assert refused.stdout == ""
    assert (f"Error: 1 of the 3 files is empty (0 octets), so none was deposited: {e}"
            " (--allow-empty deposits an empty document)") in refused.stderr
    assert _stored(archive) == []
    refused = run(archive, "add", "-s", S, str(e), str(a1), str(f), code=2)
    assert f"2 of the 3 files are empty (0 octets), so none was deposited: {e}, {f}" in refused.stderr
    assert _stored(archive) == []
    added = run(archive, "add", "-s", S, str(a1), str(e), str(b1), "--allow-empty")
    assert [n.rsplit("/", 1)[1] for n in added.stdout.splitlines()] == ["1.text.1", "2.text.1", "3.text.1"]
    assert len(_stored(archive)) == 3


def test_standard_input_at_a_terminal_is_asked_for(archive: str, tmp_path: Path) -> None:
    """``pdi add -`` at a terminal showed no prompt (a progress bar at most), so it looked hung: it says on stderr
    what it waits for and how to end it; the text typed, ended with Ctrl-D, is deposited."""
    import os
    import pty

    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen([sys.executable, "-m", "pdi", "add", "-", "-s", S, "--format", "text",
                                    "--no-progress", "--archive", archive],
                                   stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.close(follower)
        os.write(leader, b"typed at a terminal\n")
        os.write(leader, b"\x04")  # Ctrl-D at the start of a line: the end of the input (the terminal's VEOF)
        out, err = process.communicate(timeout=120)
    finally:
        os.close(leader)
    assert process.returncode == 0, err
    assert err.decode().splitlines()[0] == ("pdi: reading the document from standard input: type or paste it, then"
                                            " press Ctrl-D at the start of a line to end it")
    assert run(archive, "get", out.decode().strip()).stdout_bytes == b"typed at a terminal\n"


def test_a_format_not_told_names_the_tokens_and_a_media_type_is_taken_as_its_token(archive: str,
                                                                                   tmp_path: Path) -> None:
    """``pdi add files/README`` asked for --format naming no token; ``--format text/plain`` was refused as no
    token, where ``txt`` got a suggestion. The refusal lists common tokens, each one pdi takes; a media type is
    deposited as its token (the draft's ``text`` for text/plain, ``html`` for text/html), said in a note."""
    import re

    from pdi import formats

    readme = tmp_path / "README"
    readme.write_bytes(b"read me\n")
    refused = run(archive, "add", "-s", S, str(readme), code=2)
    listed = re.search(r"give --format with its format token \(([^)]*) …\) or its media type", refused.stderr)
    assert listed is not None, refused.stderr
    tokens = listed.group(1).split(", ")
    assert {"text", "html", "xml", "pdf", "png", "wav"} <= set(tokens)
    assert all(formats.is_known_token(token) for token in tokens), tokens  # each one pdi takes
    for media_type, token in (("text/plain", "text"), ("text/html", "html"), ("TEXT/PLAIN", "text")):
        page = tmp_path / "page"
        page.write_text(f"<p>read me as {media_type}</p>\n" if token == "html" else f"read me as {media_type}\n")
        added = run(archive, "add", "-s", S, str(page), "--format", media_type)
        assert added.stdout.strip().endswith(f".{token}.1"), added.stdout
        assert added.stderr == f"note: --format {media_type} is a media type: its format token {token} is used\n"
        info = run(archive, "get", "--info", added.stdout.strip()).stdout
        assert media_type.lower() in info, info
    # one no registry holds is refused as the token it is not
    unknown = run(archive, "add", "-s", S, str(readme), "--format", "foo/bar", code=6)
    assert "not a format token: 'foo/bar'" in unknown.stderr


def test_the_refusal_of_a_media_type_as_a_token_says_its_token() -> None:
    from pdi import formats
    from pdi.errors import UnsupportedError

    with pytest.raises(UnsupportedError) as refused:
        formats.media_type_for("text/plain")
    assert str(refused.value) == "'text/plain' is a media type, not a format token: its format token is 'text'"
