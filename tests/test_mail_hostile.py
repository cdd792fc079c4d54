"""E-mail as a stranger writes it: what an attack on pdi's reading of messages found, each checked against
Python's ``email`` with ``policy.default`` (the oracle of ``docs/email.md``) or the RFC that says what is right."""

from __future__ import annotations

import email
import email.policy
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.mail.message import head_message_id, message_ids, mid_url, read_message, thread_ids

# --- RFC 6532: a message id of UTF-8 -------------------------------------------------------------------------

#: RFC 6532 §3.2: the atext of a msg-id's id-left and id-right takes UTF8-non-ascii as well as ASCII atext
_ATEXT = st.text(alphabet=st.sampled_from("abcXYZ019.-_+!#$%&'*/=?^`{|}~\u00e9\u00fc\u00df\u0416\u4e2d\u05d0\U0001f600"),
                 min_size=1, max_size=8).filter(lambda t: not t.startswith(".") and not t.endswith(".") and ".." not in t)


def _message(message_id: str, replies_to: list[str]) -> bytes:
    head = f"From: a@example.org\r\nMessage-ID: {message_id}\r\nSubject: s\r\n"
    if replies_to:
        head += f"In-Reply-To: {replies_to[-1]}\r\nReferences: {' '.join(replies_to)}\r\n"
    return (head + "\r\nbody\r\n").encode("utf-8")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_ATEXT, _ATEXT).map(lambda p: f"<{p[0]}@{p[1]}>"), min_size=1, max_size=4))
def test_property_a_utf_8_message_id_is_read_for_the_thread_index_as_python_reads_it(ids: list[str]) -> None:
    """Found by an attack: the thread index (:func:`thread_ids`, read by compat32) wrote each 8-bit octet of a
    Message-ID, In-Reply-To or References as U+FFFD, where the message's page (:attr:`Mail.thread`, policy.default)
    read them as UTF-8: a reply to ``<café@example.org>`` said its parent was not in the archive, and the parent
    listed no reply; and ``pdi add`` named ``<é@x>`` and ``<è@x>`` alike (``mid:%EF%BF%BD%EF%BF%BD%40x``)."""
    data = _message(ids[0], ids[1:])
    oracle = email.message_from_bytes(data, policy=email.policy.default)
    assert head_message_id(data) == str(oracle["Message-ID"]) == ids[0]
    got = thread_ids(data)
    assert got == read_message(data).thread
    references = message_ids(str(oracle["References"])) if ids[1:] else ()
    assert got.references == references == tuple(ids[1:])
    assert got.parent == (ids[-1] if ids[1:] else None)


def test_a_reply_to_a_utf_8_message_id_finds_its_parent_and_the_parent_its_reply(tmp_path: Path) -> None:
    from pdi.server.pages.mail_pages import render_thread

    parent, reply = "<caf\u00e9@example.org>", "<r\u00e9ponse@example.org>"
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series("mail.example.us")
        first = archive.add("mail.example.us", _message(parent, []), format="rfc822",
                            foreign_id=mid_url(head_message_id(_message(parent, [])) or ""))
        second = archive.add("mail.example.us", _message(reply, [parent]), format="rfc822")
        assert first.unique_id == "mid:caf\u00e9@example.org"  # not mid:caf\ufffd\ufffd@example.org
        assert [n for n, _ in archive.messages_by_id([parent])] == [parent]
        assert [n for n, _ in archive.message_replies([parent])] == [parent]
        page = render_thread(archive, str(second))
        assert "not in the archive" not in page
        assert page.count("/view?pdi=") >= 2


# --- mbox: memory ----------------------------------------------------------------------------------------------

_SPLIT = ("import sys\nfrom pdi.mail.mbox import split_mbox\n"
          "with open(sys.argv[1], 'rb') as f:\n    print(sum(len(m.data) for m in split_mbox(f)))\n")


def test_an_mbox_message_of_short_lines_is_cut_in_memory_of_its_size_not_of_its_lines(tmp_path: Path) -> None:
    """Found by an attack: :func:`split_mbox` kept a message as a list of its lines, each an object of some 40
    octets beside its own, so a message of short lines took some 70 times its size (19 MB of ``a`` lines, 1.3
    GB; a message at the 64 MiB limit, 4 GB). Its module says memory is one message and one line: a message of
    4 million short lines costs no more to cut than one of the same size in long lines."""
    import subprocess
    import sys

    from peak_memory import run_with_peak

    head = b"From a@example.org Mon Jan  1 00:00:00 2026\nFrom: a@example.org\nSubject: s\n\n"
    short, long = tmp_path / "short.mbox", tmp_path / "long.mbox"
    short.write_bytes(head + b"a\n" * 4_000_000)
    long.write_bytes(head + (b"a" * 999 + b"\n") * 8_000)
    peaks = []
    for path in (short, long):
        status, peak, out = run_with_peak([sys.executable, "-c", _SPLIT, str(path)], stdout=subprocess.PIPE)
        assert status == 0
        assert int(out) == path.stat().st_size - len(head.split(b"\n", 1)[0]) - 1  # all but the From_ line
        peaks.append(peak)
    assert peaks[0] - peaks[1] < 32 * 1024, f"{(peaks[0] - peaks[1]) // 1024} MiB more for short lines"


# --- a message of millions of lines ----------------------------------------------------------------------------

_LINE_ENDS = st.sampled_from([b"\r\n", b"\n", b"\r"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=6).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b"")), _LINE_ENDS),
                max_size=12), _LINE_ENDS, st.booleans())
def test_property_the_lines_of_a_message_are_counted_as_bytes_splitlines_cuts_them(
    body: list[tuple[bytes, bytes]], separator: bytes, ended: bool,
) -> None:
    from pdi.errors import LimitError
    from pdi.mail.message import MailLimits

    data = b"From: a@example.org" + separator + separator + b"".join(text + end for text, end in body)
    if not ended:
        data += b"last"
    lines = len(data.splitlines())  # the oracle: LF, CR and CR LF, as Python's parser cuts lines
    read_message(data.replace(b"\x00", b"0"), MailLimits(max_lines=lines))
    with pytest.raises(LimitError, match=f"has {lines:,} lines, more than the limit of {lines - 1:,}"):
        read_message(data.replace(b"\x00", b"0"), MailLimits(max_lines=lines - 1))


_READ = ("import sys\nfrom pdi.errors import LimitError\nfrom pdi.fragments.email_text import message_facts\n"
         "from pdi.mail.message import read_message\n"
         "try:\n    message_facts(read_message(open(sys.argv[1], 'rb').read()))\nexcept LimitError as exc:\n    print(exc)\n")


def test_a_message_of_millions_of_short_lines_is_refused_before_the_parser_holds_each(tmp_path: Path) -> None:
    """Found by an attack: Python's parser keeps each line of a message as a string of its own, some 90 octets
    beside the line: 28 MB of two-letter lines took 900 MB to read, and a message at the 64 MiB limit 2 GB, at
    each deposit and each request of a part or a passage. More than 2,000,000 lines is refused before the parser
    runs, in less memory than a message of the same size in long lines takes to read."""
    import subprocess
    import sys

    from peak_memory import run_with_peak

    head = b"From: a@example.org\r\nSubject: s\r\n\r\n"
    short, long = tmp_path / "short.eml", tmp_path / "long.eml"
    short.write_bytes(head + b"ab\r\n" * 5_000_000)
    long.write_bytes(head + (b"a" * 996 + b"\r\n") * 20_000)
    peaks, said = [], []
    for path in (short, long):
        status, peak, out = run_with_peak([sys.executable, "-c", _READ, str(path)], stdout=subprocess.PIPE)
        assert status == 0
        peaks.append(peak)
        said.append(out.decode().strip())
    assert said == ["the message has 5,000,003 lines, more than the limit of 2,000,000 (Python's parser keeps each"
                    " line as an object of its own)", ""]
    assert peaks[0] < peaks[1], f"{peaks[0] // 1024} MiB to refuse, {peaks[1] // 1024} MiB to read one of long lines"


# --- RFC 2045 §5.2: a Content-Type that is no media type -----------------------------------------------------

#: RFC 2045 §5.1: token := 1*<any (US-ASCII) CHAR except SPACE, CTLs, or tspecials>
_TSPECIALS = '()<>@,;:\\"/[]?='
_TOKEN_CHARS = "".join(chr(c) for c in range(33, 127) if chr(c) not in _TSPECIALS)


def _is_token(text: str) -> bool:
    return bool(text) and all(ch in _TOKEN_CHARS for ch in text)


_TYPE_PIECE = st.text(alphabet=st.sampled_from("aZ9-+.!~" + '"\\()[]<>@,;:?=' + "\x01\x7f\u00e9\u0085"),
                      min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(_TYPE_PIECE, _TYPE_PIECE)
def test_property_a_part_whose_content_type_is_no_media_type_is_plain_text(major: str, minor: str) -> None:
    """Found by an attack: a part's media type was whatever Python's reading kept of its Content-Type (it
    refuses only a second ``/``): ``text/htmlé``, ``a/b<U+0001>c``, ``application/x"y"``. ``N2R`` of such a
    part was a 500 (a field value beyond Latin-1) or a Content-Type no client reads (a control character, a
    quote). RFC 2045 §5.2: a syntactically invalid Content-Type is taken as the default, plain text (with no
    charset, as Python takes those it reads as invalid: ``,/,``)."""
    written = f"{major}/{minor}"
    data = (b"From: a@example.org\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"
            b"--b\r\nContent-Type: " + written.encode("utf-8") + b"\r\n\r\npart\r\n--b--\r\n")
    part = read_message(data).parts[0]
    python = email.message_from_bytes(data, policy=email.policy.default).get_payload()[0]  # type: ignore[index]
    read = python.get_content_type()  # Python's reading: "9/9\x85" is 9/9 (str.strip takes NEL for white space)
    if _is_token(major) and _is_token(minor):
        assert read == written.lower()
    if all(_is_token(piece) for piece in read.split("/")):
        assert (part.media_type, part.charset) == (read, python.get_content_charset() if read[:5] == "text/" else None)
    else:
        assert (part.media_type, part.charset) == ("text/plain", None)  # as Python defaults ",/,", no charset


# --- pdi add --force FILE.mbox: all or none ------------------------------------------------------------------

def _one_message(number: int, body: bytes = b"body\n") -> bytes:
    """A small message whose Message-ID is ``<number@example.org>``."""
    return b"From: a@example.org\nMessage-ID: <%d@example.org>\nSubject: s\n\n" % number + body


def _mail_archive(tmp_path: Path) -> tuple[str, CliRunner]:
    """A new archive with the series mail.example.us, made by the CLI: its location and the runner."""
    from pdi.cli import cli

    location = str(tmp_path / "a")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", "mail.example.us", "--archive", location]).exit_code == 0
    return location, runner


def _mbox(*messages: bytes) -> bytes:
    return b"".join(b"From a@example.org Mon Jan  1 00:00:00 2026\n" + m + b"\n" for m in messages)


def test_a_forced_mbox_deposit_that_fails_deposits_nothing(tmp_path: Path) -> None:
    """Found by an attack: ``pdi add --force FILE.mbox`` deposited each message on its own, so when a later one
    failed (its Message-ID already minted today: exit 5) the earlier ones stayed deposited, their names never
    printed, and the same command again failed on the first at once. All or none, forced or not; forced, a
    message the checks refuse (nested 40 deep) is deposited unchecked."""
    from pdi.cli import cli

    location, runner = _mail_archive(tmp_path)
    (tmp_path / "one.eml").write_bytes(_one_message(2))
    first = runner.invoke(cli, ["add", str(tmp_path / "one.eml"), "--series", "mail.example.us", "--archive", location])
    assert first.exit_code == 0, first.output
    (tmp_path / "clash.mbox").write_bytes(_mbox(_one_message(1), _one_message(2, b"another body\n"), _one_message(3)))
    failed = runner.invoke(cli, ["add", "--force", str(tmp_path / "clash.mbox"), "--series", "mail.example.us",
                                 "--archive", location])
    assert failed.exit_code == 5, failed.output  # docs/reference/exit-codes.md: an immutability conflict
    assert "/mid:2%40example%2Eorg is already minted" in failed.output
    with Archive.open(location) as archive:
        assert archive.messages_by_id([f"<{n}@example.org>" for n in (1, 2, 3)]) == [
            ("<2@example.org>", archive.messages_by_id(["<2@example.org>"])[0][1])]  # the first deposit alone
    nested = b"From: a@example.org\nMessage-ID: <4@example.org>\nMIME-Version: 1.0\n" + (
        b"".join(b"Content-Type: multipart/mixed; boundary=b%d\n\n--b%d\n" % (k, k) for k in range(40))) + b"\nbody\n"
    with pytest.raises(Exception, match="nests more than 32"):
        read_message(nested)
    (tmp_path / "forced.mbox").write_bytes(_mbox(_one_message(1), nested, _one_message(3)))
    done = runner.invoke(cli, ["add", "--force", str(tmp_path / "forced.mbox"), "--series", "mail.example.us",
                               "--archive", location])
    assert done.exit_code == 0, done.output
    assert [line.split("/")[-1] for line in done.output.split()] == [
        "mid:1%40example%2Eorg.rfc822.1", "mid:4%40example%2Eorg.rfc822.1", "mid:3%40example%2Eorg.rfc822.1"]



def test_an_mbox_added_again_the_same_day_is_unchanged_and_only_its_new_messages_are_deposited(tmp_path: Path) -> None:
    """``pdi add list.mbox`` run twice (a script run again, a list's archive that grew): a message whose
    Message-ID names a document minted today whose latest version holds exactly its octets is ``unchanged``, as
    ``pdi add msg.eml`` of it is (docs/email.md §1, "Naming"); it refused the whole mbox (exit 5, "already
    minted; deposit a new version of it instead", which the same octets cannot be). Other octets under one of
    those ids still refuse the whole mbox, and ``--force`` mints or refuses as before."""
    from pdi.cli import cli

    location, runner = _mail_archive(tmp_path)
    add = ["add", str(tmp_path / "list.mbox"), "--series", "mail.example.us", "--archive", location]
    (tmp_path / "list.mbox").write_bytes(_mbox(_one_message(1), _one_message(2)))
    first = runner.invoke(cli, add)
    assert first.exit_code == 0, first.output
    names = first.stdout.split()
    assert [name.split("/")[-1] for name in names] == ["mid:1%40example%2Eorg.rfc822.1", "mid:2%40example%2Eorg.rfc822.1"]
    again = runner.invoke(cli, add)
    assert again.exit_code == 0, again.output
    assert again.stdout.split() == names
    assert again.stderr.count("unchanged: version 1 of ") == 2, again.stderr
    (tmp_path / "list.mbox").write_bytes(_mbox(_one_message(1), _one_message(2), _one_message(3)))  # the list's archive grew
    grown = runner.invoke(cli, add)
    assert grown.exit_code == 0, grown.output
    assert grown.stdout.split()[:2] == names
    assert grown.stdout.split()[2].endswith("/mid:3%40example%2Eorg.rfc822.1")
    assert grown.stderr.count("unchanged: ") == 2, grown.stderr
    (tmp_path / "list.mbox").write_bytes(_mbox(_one_message(1), _one_message(2, b"another body\n"), _one_message(4)))
    clash = runner.invoke(cli, add)
    assert clash.exit_code == 5, clash.output  # other octets under <2@example.org>: an immutability conflict
    assert "message 2 (From_ line 8)" in clash.stderr  # its From_ line: 1, then 5 lines and the blank line 7
    assert "/mid:2%40example%2Eorg is already minted" in clash.stderr, clash.stderr
    forced = runner.invoke(cli, ["add", "--force", *add[1:]])
    assert forced.exit_code == 5, forced.output  # --force mints a name once, never answers "unchanged"
    with Archive.open(location) as archive:
        assert [mid for mid, _ in archive.messages_by_id([f"<{n}@example.org>" for n in (1, 2, 3, 4)])] == [
            "<1@example.org>", "<2@example.org>", "<3@example.org>"]  # <4@…> never deposited: all or none
        assert [archive.versions(name) for name in names] == [[1], [1]]

@pytest.mark.usefixtures("one_gmt_day")  # the second add must find the first one's name: one GMT day
@pytest.mark.parametrize("case", ["forced before", "latest withdrawn, same octets", "latest purged, same octets",
                                  "latest withdrawn, older same", "latest embargoed, same octets"])
def test_an_mbox_message_added_again_is_answered_as_the_same_message_added_alone(tmp_path: Path, case: str) -> None:
    """``pdi add list.mbox`` answers a message already held exactly as ``pdi add msg.eml`` of the same octets does
    (:meth:`Archive.deposit`: the bytes are checked first, then a name minted today whose *latest* version holds
    exactly them, embargoed as it may be, is the answer, ``unchanged``; any other version does not count, and a
    latest version withdrawn (purged or not) resolves to its tombstone, so it holds them for no one: refused, exit 5,
    naming the withdrawal, never ``unchanged`` with that name). The mbox path asked for itself before the deposit,
    unchecked: a message deposited with ``--force`` that the checks refuse (a NUL octet) was ``unchanged`` from the
    mbox and refused (exit 3) alone."""
    from pdi.cli import cli

    location, runner = _mail_archive(tmp_path)
    series = ["--series", "mail.example.us", "--archive", location]
    held = _one_message(1, b"body \x00 with a NUL\n" if case == "forced before" else b"body\n")
    (tmp_path / "one.eml").write_bytes(held)
    (tmp_path / "list.mbox").write_bytes(_mbox(held))
    first = runner.invoke(cli, ["add", str(tmp_path / "one.eml"), *series, *(["--force"] if "forced" in case else [])])
    assert first.exit_code == 0, first.output
    name = first.stdout.strip()
    if case != "forced before":
        (tmp_path / "other.eml").write_bytes(_one_message(1, b"another body\n"))
        second = str(tmp_path / ("other.eml" if "older" in case else "one.eml"))
        made = runner.invoke(cli, ["version", name, second, "--force", "--archive", location])
        assert made.exit_code == 0, made.output
        latest = made.stdout.strip()
        assert latest.endswith(".rfc822.2")
        if "embargoed" in case:
            done = runner.invoke(cli, ["embargo", latest, "--until", "2099-01-01", "--archive", location])
        else:
            done = runner.invoke(cli, ["withdraw", latest, "--reason", "asked to", "--archive", location,
                                       *(["--purge"] if "purged" in case else [])])
        assert done.exit_code == 0, done.output
    # what Archive.deposit answers (docs/email.md, pdi add --help): worked out from the case, not read from pdi
    status, answer = {"forced before": (3, ""), "latest withdrawn, older same": (5, ""),
                      "latest withdrawn, same octets": (5, ""), "latest purged, same octets": (5, "")}.get(
        case, (0, name[: -len("1")] + "2"))
    for file in ("one.eml", "list.mbox"):
        again = runner.invoke(cli, ["add", str(tmp_path / file), *series])
        assert (again.exit_code, again.stdout.strip()) == (status, answer), (file, again.output)
        assert ("unchanged: version 2 of " in again.stderr) == (status == 0), (file, again.stderr)
        assert ("format check failed" in again.stderr) == (status == 3), (file, again.stderr)
        assert ("is already minted" in again.stderr) == (case == "latest withdrawn, older same"), (file, again.stderr)
        withdrawn = f"{name[: -len('1')]}2 holds these octets but was withdrawn"
        assert (withdrawn in again.stderr) == (status == 5 and "same octets" in case), (file, again.stderr)
        # pdi add --id's hint (pdi version --force deposits them) for a message added alone; an mbox, whose
        # messages pdi version does not take as they are, has none
        if withdrawn in again.stderr:
            hinted = "(pdi version --force deposits them as a new version)" in again.stderr
            assert hinted == (file == "one.eml"), (file, again.stderr)
    with Archive.open(location) as archive:
        assert archive.versions(name) == ([1] if case == "forced before" else [1, 2])  # nothing deposited


@pytest.mark.usefixtures("one_gmt_day")  # the second add must find the first one's names: one GMT day
def test_an_mbox_added_again_by_serial_warns_of_each_second_name_as_a_file_added_again_does(tmp_path: Path) -> None:
    """``pdi add x.eml --serial`` of octets a name of the day holds mints a second permanent name and warns
    (docs/reference/deposit.md); ``pdi add x.mbox --serial`` did the same for every message without a word. Each
    message given a second name is now warned of, naming its place in the mbox, the earlier name and the new one,
    and the advice fits an mbox (its messages named by Message-ID without --serial, not --id, which it refuses)."""
    from pdi.cli import cli

    location, runner = _mail_archive(tmp_path)
    add = ["add", str(tmp_path / "list.mbox"), "--series", "mail.example.us", "--archive", location]
    (tmp_path / "list.mbox").write_bytes(_mbox(_one_message(1), _one_message(2)))
    serial = runner.invoke(cli, [*add, "--serial"])
    assert serial.exit_code == 0, serial.output
    first = serial.stdout.split()
    assert [name.rsplit("/", 1)[1] for name in first] == ["1.rfc822.1", "2.rfc822.1"]
    assert "warning" not in serial.stderr  # nothing held before
    again = runner.invoke(cli, [*add, "--serial"])
    assert again.exit_code == 0, again.output  # deposited as asked: every pdi add mints
    second = again.stdout.split()
    assert [name.rsplit("/", 1)[1] for name in second] == ["3.rfc822.1", "4.rfc822.1"]
    warnings = [line for line in again.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 2, again.stderr
    for n, (line, earlier, new) in enumerate(zip(warnings, first, second, strict=True), 1):
        assert f"list.mbox: message {n} (From_ line " in line, line
        assert f"{earlier} already holds these octets" in line and f"{new} is a second permanent name" in line, line
        assert "--id" not in line and "without --serial" in line, line
    # by Message-ID: new names for octets serial names hold are second names too, and said so
    by_id = runner.invoke(cli, add)
    assert by_id.exit_code == 0 and by_id.stderr.count("is a second permanent name") == 2, by_id.output
    assert "without --serial" not in by_id.stderr  # named by Message-ID already: no advice to be
    assert runner.invoke(cli, add).stderr.count("unchanged: ") == 2  # and again by Message-ID: nothing minted



@pytest.mark.parametrize("serial", [True, False])
def test_an_mbox_holding_one_message_twice_warns_only_of_the_later_copy(tmp_path: Path, serial: bool) -> None:
    """The same message twice in one new mbox (its Message-ID twice: the second copy gets a serial either way) mints
    two names for one octet string, the first copy's first. Only the second copy is a second permanent name of
    octets already held: the first copy's name was minted before it, so it is warned of nothing (it was told that
    the second copy's name, minted after it by the same command, "already holds these octets")."""
    from pdi.cli import cli

    location, runner = _mail_archive(tmp_path)
    (tmp_path / "list.mbox").write_bytes(_mbox(_one_message(1), _one_message(1)))
    added = runner.invoke(cli, ["add", str(tmp_path / "list.mbox"), "--series", "mail.example.us",
                                "--archive", location, *(["--serial"] if serial else [])])
    assert added.exit_code == 0, added.output
    first, second = added.stdout.split()
    warnings = [line for line in added.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1, added.stderr
    assert "list.mbox: message 2 (From_ line " in warnings[0], warnings
    assert f"{first} already holds these octets" in warnings[0], warnings
    assert f"{second} is a second permanent name" in warnings[0], warnings



@pytest.mark.usefixtures("one_gmt_day")  # the mbox must find the message's name of the first add: one GMT day
def test_an_mbox_holding_a_message_held_already_twice_warns_of_both_copies_naming_the_earlier_name(
        tmp_path: Path) -> None:
    """A message added alone (named by its Message-ID), then an mbox holding it twice added with ``--serial``: both
    copies are second permanent names of octets the first add's name holds, and each is warned of naming a name
    minted before it (the first copy: that name; the second: that name or the first copy's), never the second
    copy's, minted after the first by the same command."""
    from pdi.cli import cli

    location, runner = _mail_archive(tmp_path)
    series = ["--series", "mail.example.us", "--archive", location]
    (tmp_path / "one.eml").write_bytes(_one_message(1))
    alone = runner.invoke(cli, ["add", str(tmp_path / "one.eml"), *series])
    assert alone.exit_code == 0, alone.output
    (by_id,) = alone.stdout.split()
    assert "/mid:" in by_id
    (tmp_path / "list.mbox").write_bytes(_mbox(_one_message(1), _one_message(1)))
    added = runner.invoke(cli, ["add", str(tmp_path / "list.mbox"), *series, "--serial"])
    assert added.exit_code == 0, added.output
    first, second = added.stdout.split()
    warnings = [line for line in added.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 2, added.stderr
    assert "message 1 (From_ line " in warnings[0] and f"{by_id} already holds these octets" in warnings[0], warnings
    assert "message 2 (From_ line " in warnings[1] and f"{second} is a second permanent name" in warnings[1], warnings
    assert f"{by_id} already holds" in warnings[1] or f"{first} already holds" in warnings[1], warnings


# --- a message's body text, made once a process (pdi.fragments.email_text)----------------------------------------

def _plain(marker: str, body: str) -> bytes:
    return (f"From: a@example.org\r\nSubject: {marker}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Transfer-Encoding: 8bit\r\n\r\n" + body).encode("utf-8")


def _body_texts(**bounds: int) -> Any:
    """A cache of body texts as the process's own (pdi.fragments.email_text.message_body_text) makes them."""
    from pdi.fragments import email_text
    from pdi.mail import message

    return email_text.BodyTexts(lambda octets: email_text.body_text(message.read_message(octets)), **bounds)


def _count_body_text(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from pdi.fragments import email_text
    from pdi.mail import message

    made = email_text.body_text
    calls: list[str] = []

    def counting(mail: message.Mail) -> str:
        calls.append(str(mail.header("Subject")))
        return made(mail)

    monkeypatch.setattr(email_text, "body_text", counting)
    return calls


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab \u00e9\u4e2d\r\n"), max_size=40))
def test_property_the_body_text_kept_is_the_one_pythons_email_reads(body: str) -> None:
    data = _plain("s", body)
    oracle = email.message_from_bytes(data, policy=email.policy.default)
    content = oracle.get_body(preferencelist=("plain", "html")).get_content()  # type: ignore[attr-defined]
    expected = content.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\r\n")
    texts = _body_texts()
    assert texts.text_of(data) == texts.text_of(data) == expected


def test_body_texts_are_kept_least_recently_used_within_their_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_body_text(monkeypatch)
    texts = _body_texts(max_kept=2, max_characters=100)
    a, b, c = (_plain(m, f"body {m}\r\n") for m in "abc")
    for data in (a, b, a, c, a, b):  # c pushes out b (a was used after it), so b is made again (pushing out c)
        texts.text_of(data)
    assert calls == ["a", "b", "c", "b"]
    long = _plain("long", "x" * 101)
    texts.text_of(long)
    texts.text_of(long)  # longer than all the characters kept: made each time, pushing nothing out
    texts.text_of(a)
    texts.text_of(b)
    assert calls == ["a", "b", "c", "b", "long", "long"]


def test_a_refused_body_text_is_kept_and_said_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from pdi.errors import LimitError
    from pdi.fragments.email_text import MAX_HTML_BODY

    calls = _count_body_text(monkeypatch)
    data = (b"From: a@example.org\r\nSubject: big\r\nContent-Type: text/html\r\n\r\n"
            + b"<p>" * (MAX_HTML_BODY // 3 + 1))
    texts = _body_texts()
    for _ in range(3):
        with pytest.raises(LimitError, match=f"part 0, text/html\\) is {MAX_HTML_BODY + 2:,} characters of HTML"):
            texts.text_of(data)
    assert calls == ["big"]


def test_a_body_text_past_its_deadline_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # a deadline a loaded machine passed is no property of the octets: kept, the message's text was refused by
    # that worker until the text was pushed out or the process ended, however quiet the machine had become
    from pdi.errors import LimitError
    from pdi.fragments import pagetext

    data = (b"From: a@example.org\r\nSubject: slow\r\nContent-Type: text/html\r\n\r\n"
            + b"<p>walrus</p>" * 2000)
    texts = _body_texts()
    real = pagetext.markup_page_text
    monkeypatch.setattr(pagetext, "markup_page_text",
                        lambda source, kind, **given: real(source, kind, **{**given, "seconds": 0.0}))
    with pytest.raises(LimitError, match=r"took more than 0 CPU seconds"):
        texts.text_of(data)  # the real reading, its deadline passed at once (the fault a busy machine makes)
    monkeypatch.undo()
    assert texts.text_of(data).count("walrus") == 2000  # made again: the refusal was not kept


def test_a_body_text_asked_for_while_it_is_made_is_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from pdi.fragments import email_text
    from pdi.mail import message
    made = email_text.body_text
    started, release = threading.Event(), threading.Event()
    calls: list[int] = []

    def slow(mail: message.Mail) -> str:
        calls.append(1)
        started.set()
        release.wait()
        return made(mail)

    monkeypatch.setattr(email_text, "body_text", slow)
    texts = _body_texts()
    data = _plain("s", "the body\r\n")
    got: list[str] = []
    first = threading.Thread(target=lambda: got.append(texts.text_of(data)))
    first.start()
    started.wait()
    others = [threading.Thread(target=lambda: got.append(texts.text_of(data))) for _ in range(4)]
    for thread in others:
        thread.start()
    release.set()
    for thread in (first, *others):
        thread.join()
    assert got == ["the body\r\n"] * 5
    assert calls == [1]


# --- a Message-ID no resolver's URL can carry ------------------------------------------------------------------

def _long_id(octets: int) -> str:
    """A Message-ID of ``octets`` octets in all, its angle brackets counted."""
    right = "@example.org>"
    return "<" + "a" * (octets - 1 - len(right)) + right


def test_a_message_id_longer_than_a_line_of_a_message_does_not_name_it(tmp_path: Path) -> None:
    """Found by an attack: a message whose Message-ID is 100 KB got a 100 KB ``mid:`` name, which the resolver
    can never answer (a URL over 64 KiB is refused 414). RFC 5322 §2.1.1 bounds a line at 998 octets and a msg-id
    (§3.6.4) is never folded: a longer one is no message's, and the message is named by the next serial (said on
    stderr), as one without a Message-ID is, in an mbox as on its own."""
    from starlette.testclient import TestClient

    from pdi.cli import cli
    from pdi.server import create_app

    location, runner = _mail_archive(tmp_path)
    names = {}
    for octets in (998, 999, 100_000):
        message_id = _long_id(octets)
        data = f"From: a@example.org\r\nMessage-ID: {message_id}\r\n\r\nbody {octets}\r\n".encode()
        oracle = email.message_from_bytes(data, policy=email.policy.default)
        assert len(str(oracle["Message-ID"]).encode()) == octets
        (tmp_path / f"{octets}.eml").write_bytes(data)
        done = runner.invoke(cli, ["add", str(tmp_path / f"{octets}.eml"), "--series", "mail.example.us",
                                   "--archive", location])
        assert done.exit_code == 0, done.output
        names[octets] = done.stdout.strip()
        if octets == 998:
            assert "/mid:aaa" in names[octets] and done.stderr == ""
        else:
            assert names[octets].split("/")[-1] == f"{len(names) - 1}.rfc822.1"  # the day's next serial (1, 2)
            assert (f"{octets}.eml: its Message-ID is {octets:,} octets, longer than the 998 of a line of a"
                    " message (RFC 5322 §2.1.1): it is named by the next serial") in done.stderr
    (tmp_path / "long.mbox").write_bytes(
        b"From a@example.org Mon Jan  1 00:00:00 2026\nFrom: a@example.org\nMessage-ID: "
        + _long_id(5000).encode() + b"\n\nbody\n")
    done = runner.invoke(cli, ["add", str(tmp_path / "long.mbox"), "--series", "mail.example.us", "--archive",
                               location])
    assert done.exit_code == 0, done.output
    assert done.stdout.strip().split("/")[-1] == "3.rfc822.1"
    assert "long.mbox: message 1 (From_ line 1): its Message-ID is 5,000 octets" in done.stderr
    client = TestClient(create_app(location))
    for name in names.values():
        answer = client.get(f"/uri-res/N2R?{name}")
        assert answer.status_code == 200 and answer.content.startswith(b"From: a@example.org"), name
    with Archive.open(location) as archive:  # its thread still finds it by its id
        assert [n for n, _ in archive.messages_by_id([_long_id(100_000)])] == [_long_id(100_000)]


def test_an_id_too_long_for_a_resolvers_url_is_refused(tmp_path: Path) -> None:
    """``pdi add --id`` of an id whose name no resolver's URL could carry (each octet of the id up to 5 in an
    RFC 2169 URL, which may be 64 KiB): refused, exit 7 (a limit), naming the bound; nothing minted."""
    from pdi.archive.naming import MAX_FOREIGN_ID_OCTETS
    from pdi.cli import cli

    assert MAX_FOREIGN_ID_OCTETS * 5 < 64 * 1024 - 1024  # room for the series, the date, a fragment
    location, runner = _mail_archive(tmp_path)
    (tmp_path / "one.eml").write_bytes(b"From: a@example.org\r\nMessage-ID: <1@example.org>\r\n\r\nbody\r\n")
    for size, status in ((MAX_FOREIGN_ID_OCTETS, 0), (MAX_FOREIGN_ID_OCTETS + 1, 7), (100_000, 7)):
        foreign_id = "\u00e9" * (size // 2) + "x" * (size % 2)  # two octets each: counted in octets of UTF-8
        done = runner.invoke(cli, ["add", str(tmp_path / "one.eml"), "--series", "mail.example.us", "--id",
                                   foreign_id, "--archive", location])
        assert done.exit_code == status, done.output
        if status:
            assert (f"the id is {size:,} octets (UTF-8), more than the {MAX_FOREIGN_ID_OCTETS:,} a name's id may"
                    " have") in done.stderr
    with Archive.open(location) as archive:
        assert len(archive.messages_by_id(["<1@example.org>"])) == 1  # the first alone


# --- a Message-ID of octets that are not UTF-8 -----------------------------------------------------------------

#: Pieces of an id's octets: RFC 5322 atext (``%`` among it), UTF-8 letters (RFC 6532), and octets that are not
#: UTF-8 (Latin-1 letters, lone continuation octets, octets no UTF-8 holds). Not "/": a mid: URL's "/" starts a
#: Content-ID (RFC 2392 §2), and the names minted for ids holding one keep it unescaped
_ID_PIECES = st.sampled_from([b"a", b"Z", b"0", b".", b"%", b"%E9", b"%25", b"-", b"!", "\u00e9".encode(),
                              "\u4e2d".encode(), b"\xe9", b"\xe8", b"\xff", b"\x80", b"\xbf", b"\xc0", b"\xfe"])


def _octets_message(left: bytes, replies_to: bytes | None = None) -> bytes:
    head = b"From: a@example.org\r\nMessage-ID: <" + left + b"@example.org>\r\n"
    if replies_to is not None:
        head += b"In-Reply-To: <" + replies_to + b"@example.org>\r\n"
    return head + b"Subject: s\r\n\r\nbody\r\n"


@settings(max_examples=300, deadline=None)
@given(st.lists(_ID_PIECES, min_size=1, max_size=8).map(b"".join))
def test_property_a_message_ids_mid_url_holds_its_octets(left: bytes) -> None:
    """Found by an attack: a Message-ID's octets that are not UTF-8 were each read U+FFFD, so ``<\\xe9@x>`` and
    ``<\\xe8@x>`` (Latin-1) got the same name and the same thread id. RFC 2392 §2: a ``mid:`` URL is the id
    with its octets %-escaped as URLs escape them (RFC 3986 §2.1); read back as RFC 3986 reads it (Python's
    ``unquote_to_bytes``), it is the id's octets as written, so no two ids share one. An id that is UTF-8
    (RFC 6532) is read as Python reads it, and its mid: URL keeps its letters, as names minted before did."""
    from urllib.parse import unquote_to_bytes

    from pdi.mail.message import message_id_of_mid

    data = _octets_message(left)
    octets = left + b"@example.org"
    as_read = thread_ids(data).message_id
    assert as_read is not None and as_read == read_message(data).message_id
    url = mid_url(as_read)
    assert url.startswith("mid:") and unquote_to_bytes(url[4:]) == octets
    assert message_id_of_mid(url) == as_read  # the thread page's ?mid= finds it
    try:
        text = octets.decode("utf-8")
    except UnicodeDecodeError:
        assert as_read == url  # read as its mid: URL: no <…> id, so never one that is UTF-8
    else:
        oracle = email.message_from_bytes(data, policy=email.policy.default)
        assert as_read == str(oracle["Message-ID"]) == f"<{text}>"
        assert url == "mid:" + text.replace("%", "%25")


def test_two_messages_whose_ids_differ_in_an_octet_that_is_not_utf_8_get_two_names_and_threads(
        tmp_path: Path) -> None:
    """Found by an attack (see above): ``pdi add`` named ``<\xe9@example.org>`` and ``<\xe8@example.org>``
    alike, and the thread index took one for the other. Each is named and found by its own octets."""
    from pdi.cli import cli
    from pdi.server.pages.mail_pages import render_thread

    location, runner = _mail_archive(tmp_path)
    names = []
    for n, (left, parent) in enumerate(((b"\xe9", None), (b"\xe8", None), (b"reply", b"\xe9"))):
        (tmp_path / f"{n}.eml").write_bytes(_octets_message(left, parent))
        done = runner.invoke(cli, ["add", str(tmp_path / f"{n}.eml"), "--series", "mail.example.us",
                                   "--archive", location])
        assert done.exit_code == 0, done.output
        names.append(done.stdout.strip())
    assert [n.split("/")[-1] for n in names] == [
        "mid:%25E9%40example%2Eorg.rfc822.1", "mid:%25E8%40example%2Eorg.rfc822.1",
        "mid:reply%40example%2Eorg.rfc822.1"]
    with Archive.open(location) as archive:
        ids = ["mid:%E9@example.org", "mid:%E8@example.org"]
        assert sorted(i for i, _ in archive.messages_by_id(ids)) == sorted(ids)
        assert [i for i, _ in archive.message_replies(ids)] == ["mid:%E9@example.org"]  # the reply's parent alone
        page = render_thread(archive, names[2])
    assert "not in the archive" not in page and page.count("/view?pdi=") >= 2


# --- an mbox's refusals name the message as its other errors do -------------------------------------------------

def test_an_mbox_batchs_refusal_names_the_message_and_its_from_line(tmp_path: Path) -> None:
    """Found by an attack: a refusal of ``pdi add FILE.mbox`` counted the batch's items from 0 and the messages
    from 1 (``item 1: list.mbox: message 2 (From_ line 7): …``), and a name already minted was said of an item
    alone. Each is said of the message, counted from 1, and its From_ line, as Python's ``mailbox.mbox`` cuts
    the file (the oracle: its messages in order, their From_ lines)."""
    import mailbox

    from pdi.cli import cli

    location, runner = _mail_archive(tmp_path)
    (tmp_path / "one.eml").write_bytes(b"From: a@example.org\nMessage-ID: <1@example.org>\n\nbody\n")
    assert runner.invoke(cli, ["add", str(tmp_path / "one.eml"), "--series", "mail.example.us",
                               "--archive", location]).exit_code == 0
    for number, broken, status, said in (
        (2, b"\x89PNG\r\n\x1a\n", 3, "the content is not a message pdi can read: line 1 is not a header field"),
        (3, b"From: a@example.org\nMessage-ID: <1@example.org>\n\nanother body\n", 5,
         "urn:pdi://mail.example.us/20"),
    ):
        messages = [b"From: a@example.org\nMessage-ID: <%d@example.org>\n\nbody %d\n" % (n, n) for n in (7, 8, 9)]
        messages[number - 1] = broken
        data = b"".join(b"From a@example.org Mon Jan  1 00:00:00 2026\n" + m + b"\n" for m in messages)
        path = tmp_path / f"list{number}.mbox"
        path.write_bytes(data)
        oracle = mailbox.mbox(str(path), create=False)
        try:  # the message Python's mailbox reads as number N (from 1) is the broken one
            assert len(oracle) == 3 and oracle.get_bytes(number - 1) == broken
        finally:
            oracle.close()
        lines = data.split(b"\n")
        from_line = [i + 1 for i, line in enumerate(lines) if line.startswith(b"From ")][number - 1]
        done = runner.invoke(cli, ["add", str(path), "--series", "mail.example.us", "--archive", location])
        assert done.exit_code == status, done.output
        assert f"{path.name}: message {number} (From_ line {from_line}): {said}" in done.stderr
        assert "item " not in done.stderr
        assert done.stderr.count(path.name) == 1  # said once, not again by the content check
    with Archive.open(location) as archive:  # all or none: nothing of either
        assert [i for i, _ in archive.messages_by_id(["<7@example.org>", "<8@example.org>"])] == []


# --- a thread of many ids: each id of In-Reply-To looked for in References once, not along all of it -----------

class _Counted(str):
    """A message id that counts how often it is compared for equality (hashing is not counted)."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Counted.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_a_message_naming_many_ids_is_threaded_in_comparisons_of_its_ids_not_of_their_pairs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by an attack: the ids of In-Reply-To that References lacks were found by looking each up along all of
    References, once for every pair of ids: a 1 MiB message whose References and In-Reply-To each name 70,000
    ids took 284 s to deposit (its thread index is read from its first 1 MiB), and its ``/thread`` page, which
    reads the whole message (up to 64 MiB), longer still. ``docs/email.md`` §4: References oldest first, then
    the ids of In-Reply-To References lacks, in order, each once; the parent is the last of In-Reply-To."""
    import pdi.mail.message as message

    written = message.ids_written
    monkeypatch.setattr(message, "ids_written", lambda value: tuple(_Counted(i) for i in written(value)))
    n = 20_000
    references = [f"<r{i}@example.org>" for i in range(n)]
    replies_to = [f"<i{i}@example.org>" for i in range(n)] + references[:3] + ["<i0@example.org>"]
    head = (f"From: a@example.org\r\nMessage-ID: <m@example.org>\r\nReferences: {' '.join(references)}\r\n"
            f"In-Reply-To: {' '.join(replies_to)}\r\n\r\nbody\r\n").encode()
    _Counted.compared = 0
    thread = thread_ids(head)
    assert thread.references == (*references, *replies_to[:n])
    assert thread.parent == "<i0@example.org>" and thread.message_id == "<m@example.org>"
    assert _Counted.compared < 10 * n, f"{_Counted.compared:,} comparisons of ids for {2 * n:,} ids"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["<a@x>", "<b@x>", "<c@x>", "<d@x>", "<e@x>"]), max_size=6),
       st.lists(st.sampled_from(["<a@x>", "<b@x>", "<c@x>", "<d@x>", "<e@x>"]), max_size=6))
def test_property_a_threads_ids_are_references_then_the_replied_to_ids_references_lacks(
        references: list[str], replies_to: list[str]) -> None:
    """``docs/email.md`` §4, checked against Python's ``email`` reading the same two fields."""
    head = "From: a@example.org\r\n"
    if references:
        head += f"References: {' '.join(references)}\r\n"
    if replies_to:
        head += f"In-Reply-To: {' '.join(replies_to)}\r\n"
    head += "\r\nbody\r\n"
    parsed = email.message_from_string(head, policy=email.policy.default)
    oracle_refs = str(parsed["References"] or "").split()
    oracle_replies = str(parsed["In-Reply-To"] or "").split()
    expected = oracle_refs + [i for i in dict.fromkeys(oracle_replies) if i not in oracle_refs]
    thread = thread_ids(head.encode())
    assert list(thread.references) == expected
    parent = oracle_replies[-1] if oracle_replies else (oracle_refs[-1] if oracle_refs else None)
    assert thread.parent == parent
