"""E-mail's bounds as a stranger tests them: what reading one message may cost in memory, in encoded words
and in nesting, and how often a request reads it; each checked against Python's ``email`` with
``policy.default`` (the oracle of ``docs/email.md``), the RFC that says what is right, or a child's peak memory.
(Split from ``test_mail_hostile.py``, which holds the rest of the attack.)"""

from __future__ import annotations

import email
import email.policy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.mail.message import read_message

# --- a field of a million encoded words ----------------------------------------------------------------------

_SHOW = ("import sys\nfrom pdi.mail.message import read_message\n"
         "print(len(read_message(open(sys.argv[1], 'rb').read()).header('Subject') or ''))\n")


def test_a_field_of_a_million_encoded_words_is_shown_in_memory_of_its_size(tmp_path: Path) -> None:
    """Found by an attack: showing a field of RFC 2047 encoded words (:func:`pdi.charsets.rfc2047.decode_header`)
    held lists of every word and of its pieces: a Subject of 1,000,000 words (14 MB) took 525 MB, one filling a
    64 MiB message 2.4 GB, at each ``/view`` and ``/thread`` of it. Shown as Python's ``decode_header`` shows it
    (RFC 2047 §6.2: the white space between encoded words dropped), its first ``MAX_ENCODED_WORDS`` words decoded
    and the rest as written, in no more memory than a field of the same size without encoded words."""
    import subprocess
    import sys

    from pdi.charsets.rfc2047 import MAX_ENCODED_WORDS
    from peak_memory import run_with_peak

    words, plain = tmp_path / "words.eml", tmp_path / "plain.eml"
    words.write_bytes(b"From: a@example.org\r\nSubject: " + b"=?utf-8?q?a?= " * 1_000_000 + b"\r\n\r\nbody\r\n")
    plain.write_bytes(b"From: a@example.org\r\nSubject: " + b"a b c d e f g " * 1_000_000 + b"\r\n\r\nbody\r\n")
    peaks, shown = [], []
    for path in (words, plain):
        status, peak, out = run_with_peak([sys.executable, "-c", _SHOW, str(path)], stdout=subprocess.PIPE)
        assert status == 0
        peaks.append(peak)
        shown.append(int(out))
    # the first MAX_ENCODED_WORDS words' letters, then the rest as written; the plain field as written, unfolded
    assert shown == [MAX_ENCODED_WORDS + 1 + 14 * (1_000_000 - MAX_ENCODED_WORDS) - 1, 14 * 1_000_000 - 1]
    assert peaks[0] - peaks[1] < 64 * 1024, f"{(peaks[0] - peaks[1]) // 1024} MiB more for encoded words"


def test_a_field_is_decoded_up_to_its_bound_of_encoded_words_and_shown_as_written_past_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found by an attack: a Subject of 3,000,000 encoded words (a 42 MB message) took some 15 s to show, at each
    ``pdi get --info`` and ``/view`` of it: each word costs its decoding. Its first ``MAX_ENCODED_WORDS`` words
    are decoded (RFC 2047 §6.2: the white space between them dropped), the rest shown as written, each word past
    them left undecoded."""
    import email.quoprimime

    from pdi.charsets.rfc2047 import MAX_ENCODED_WORDS

    calls = []
    real = email.quoprimime.header_decode
    monkeypatch.setattr(email.quoprimime, "header_decode", lambda text: calls.append(text) or real(text))
    past = 3 * MAX_ENCODED_WORDS
    subject = b"=?utf-8?q?a?= " * (MAX_ENCODED_WORDS + past) + b"end"
    shown = read_message(b"From: a@b\r\nSubject: " + subject + b"\r\n\r\nbody\r\n").header("Subject")
    assert shown == "a" * MAX_ENCODED_WORDS + " " + "=?utf-8?q?a?= " * past + "end"
    assert len(calls) == MAX_ENCODED_WORDS


_TOKENS = st.lists(st.tuples(st.sampled_from(["=?utf-8?q?caf=C3=A9?=", "=?iso-8859-1?b?6Q==?=", "=?us-ascii?q?a_b?=",
                                              "plain", "x=y", "\u00e9t\u00e9"]), st.sampled_from([" ", "  ", "\t"])),
                   min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(_TOKENS, st.integers(min_value=1, max_value=4))
def test_property_past_the_bound_the_rest_of_a_field_is_as_written(tokens: list[tuple[str, str]], bound: int) -> None:
    """The words up to the bound decoded as Python's ``decode_header`` decodes the field cut before the next
    encoded word; the rest, from the end of the word before it, as written: its white space too (which RFC 2047
    §6.2 drops only between two encoded words both decoded)."""
    import email.header
    from unittest import mock

    from pdi.charsets import rfc2047

    value, starts = "", []
    for text, space in tokens:
        if text.startswith("=?"):
            starts.append(len(value))
        value += text + space
    value = value.rstrip()
    with mock.patch.object(rfc2047, "MAX_ENCODED_WORDS", bound):
        shown = rfc2047.decode_header(value)
    if len(starts) <= bound:
        assert shown == email.header.decode_header(value)
        return
    at = starts[bound]
    before = value[:at].rstrip()
    expected = email.header.decode_header(before)
    rest = value[len(before) :].encode("raw-unicode-escape")  # from the end of the word before, as written
    if expected[-1][1] is None:  # joined to the words of no charset it follows
        expected[-1] = (bytes(expected[-1][0]) + rest, None)
    else:
        expected.append((rest, None))
    assert shown == expected


# --- what reading one message costs ---------------------------------------------------------------------------

_FACTS = ("import sys\nfrom pdi.fragments.email_text import message_facts\nfrom pdi.mail.message import read_message\n"
          "print(message_facts(read_message(open(sys.argv[1], 'rb').read()))['body']['characters'])\n")


@pytest.mark.parametrize("shape", ["a field of one line", "a body of one line", "a body of long 8-bit lines",
                                   "a base64 attachment"])
def test_reading_a_message_takes_at_most_nine_times_its_size(tmp_path: Path, shape: str) -> None:
    """Found by an attack: Python's :func:`email.message_from_bytes` makes the message a string and a
    :class:`io.StringIO` of it (four octets a character) before parsing, so a 60 MiB message took 600 MB to
    read and 900 MB with its body's text (``pdi get --info``, ``/view``; 12 to 15 times its size), in the
    resolver's process. ``docs/email.md``: reading a message, its parts and its body text takes at most nine
    times its octets beside what the process holds (576 MiB for one at the 64 MiB limit), each shape of message
    that costs most measured against reading one of a line: one long line (held four octets a character while
    the parser cuts it), lines of 8-bit octets (held two octets each), a base64 part decoded."""
    import base64
    import subprocess
    import sys

    from peak_memory import run_with_peak

    size = 12 << 20
    head = b"From: a@example.org\r\nSubject: s\r\n"
    latin = b"Content-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
    if shape == "a field of one line":
        data = head + b"X-Long: " + b"a" * size + b"\r\n\r\nbody\r\n"
        characters = 6
    elif shape == "a body of one line":
        data = head + latin + b"\xe9" * size + b"\r\n"
        characters = size + 2
    elif shape == "a body of long 8-bit lines":
        data = head + latin + (b"\xe9" * 998 + b"\r\n") * (size // 1000)
        characters = size // 1000 * 1000
    else:
        encoded = base64.encodebytes(bytes(range(256)) * (size * 3 // 4 // 256)).replace(b"\n", b"\r\n")
        data = (head + b"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n"
                b"hello\r\n--b\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n"
                + encoded + b"--b--\r\n")
        characters = 5
    small, large = tmp_path / "small.eml", tmp_path / "large.eml"
    small.write_bytes(head + b"\r\nbody\r\n")
    large.write_bytes(data)
    peaks = []
    for path, length in ((small, 6), (large, characters)):
        status, peak, out = run_with_peak([sys.executable, "-c", _FACTS, str(path)], stdout=subprocess.PIPE)
        assert status == 0
        assert int(out) == length  # read whole: its body text's characters (RFC 2045 §6.8 for the base64)
        peaks.append(peak)
    grown = (peaks[1] - peaks[0]) * 1024
    assert grown < 9 * len(data), f"{grown / len(data):.1f} times the message's {len(data):,} octets"


_LINE_ENDS = st.sampled_from([b"\r\n", b"\n", b"\r"])
_PIECES = st.sampled_from([b"From: a@example.org", b"Subject: =?utf-8?q?caf=C3=A9?=", b"Content-Type: multipart/mixed;",
                            b" boundary=b", b"Content-Type: text/plain; charset=iso-8859-1", b"--b", b"--b--", b"",
                            b"Content-Transfer-Encoding: base64", b"YWJj", b"\xe9t\xe9", b"body", b" folded", b"x: y"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_PIECES, _LINE_ENDS), min_size=1, max_size=16), st.integers(min_value=1, max_value=9))
def test_property_a_message_fed_in_pieces_is_read_as_python_reads_it_whole(
    lines: list[tuple[bytes, bytes]], feed: int,
) -> None:
    """The parser given a message a few octets at a time (a CR LF cut in two, a boundary line in pieces) reads
    what :func:`email.message_from_bytes` reads of it whole: the same entities, header fields, payloads, defects."""
    from pdi.mail.message import MailLimits
    from pdi.mail.parser import bounded_policy, parse

    data = b"From: a@example.org\r\n" + b"".join(text + end for text, end in lines)

    def shape(message: Any) -> list[Any]:
        return [(part.get_content_type(), part.items(), part.is_multipart() or part.get_payload(decode=True),
                 part.preamble, part.epilogue, [type(d).__name__ for d in part.defects]) for part in message.walk()]

    whole = email.message_from_bytes(data, policy=email.policy.default)
    assert shape(parse(data, bounded_policy(MailLimits()), feed)) == shape(whole)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab\r\n\x85\u00e9"))
def test_property_every_line_ending_is_written_crlf(text: str) -> None:
    from pdi.fragments.text.lines import to_crlf

    written, at = [], 0  # the oracle: CR LF, CR NEL, then any one CR, LF or NEL, each one line ending
    while at < len(text):
        if text[at : at + 2] in ("\r\n", "\r\x85"):
            written.append("\r\n")
            at += 2
        else:
            written.append("\r\n" if text[at] in "\r\n\x85" else text[at])
            at += 1
    assert to_crlf(text) == "".join(written)


# --- entities nested past MailLimits.max_depth --------------------------------------------------------------


def _nested(kinds: list[str], before: list[int]) -> tuple[bytes, list[tuple[int, ...]]]:
    """A message whose entities nest one in another, ``kinds[i]`` the i-th from the top (``multipart`` or
    ``message``, a message/rfc822) with ``before[i]`` text parts before the one nested in it (a message/rfc822
    encloses one message only: none before it), a text part innermost; and the part numbers (RFC 2046 §5.1, from
    0, as :attr:`pdi.mail.message.MailPart.path` counts) of each entity nested, from the top's first."""
    out = bytearray(b"From: a@example.org\r\nMessage-ID: <deep@example.org>\r\nMIME-Version: 1.0\r\n")
    paths, path = [], ()
    for level, kind in enumerate(kinds):
        if kind == "message":
            out += b"Content-Type: message/rfc822\r\n\r\nFrom: b@example.org\r\nMIME-Version: 1.0\r\n"
            path = (*path, 0)
        else:
            out += b"Content-Type: multipart/mixed; boundary=b%d\r\n\r\n" % level
            out += b"--b%d\r\nContent-Type: text/plain\r\n\r\nbefore\r\n" % level * before[level]
            out += b"--b%d\r\n" % level
            path = (*path, before[level])
        paths.append(path)
    out += b"Content-Type: text/plain\r\n\r\ninnermost\r\n"
    for level in reversed(range(len(kinds))):
        if kinds[level] == "multipart":
            out += b"--b%d--\r\n" % level
    return bytes(out), paths


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["multipart", "message"]), st.integers(0, 3)), min_size=1, max_size=12),
       st.integers(1, 10))
def test_property_entities_nested_past_the_limit_are_refused_naming_it_and_the_first_part_past_it(
        levels: list[tuple[str, int]], most: int) -> None:
    """An enclosed message (``message``) is one part, never entered (docs/email.md §1): what nests in it is kept as
    written whatever its depth, as a message read by its structure keeps it; multiparts nested past the limit
    before any are refused."""
    from pdi.errors import LimitError
    from pdi.mail.message import MailLimits

    kinds = [kind for kind, _ in levels]
    before = [0 if kind == "message" else n for kind, n in levels]
    data, paths = _nested(kinds, before)
    # the deepest entity the parser reads: the first enclosed message (kinds[k], k deep), else the innermost
    deepest = kinds.index("message") if "message" in kinds else len(kinds)
    if deepest <= most:
        leaves, prefix = [], ()  # depth first (RFC 2046 §5.1.1's order): a message/rfc822 is one part
        for kind, ahead in zip(kinds, before, strict=True):
            if kind == "message":
                break
            leaves += [(*prefix, n) for n in range(ahead)]
            prefix = (*prefix, ahead)
        leaves.append(prefix)
        assert [part.path for part in read_message(data, MailLimits(max_depth=most)).parts] == leaves
        return
    with pytest.raises(LimitError) as refused:
        read_message(data, MailLimits(max_depth=most))
    # paths[i] is i + 1 deep: the first entity past the limit (depth first) is the first part of paths[most - 1]
    first_past = ".".join(map(str, (*paths[most - 1], 0)))
    assert str(refused.value) == (f"the message nests more than {most} entities deep (the limit"
                                  f" MailLimits.max_depth): part {first_past} is {most + 1} deep")


def test_a_message_nested_deeper_than_pythons_parser_follows_is_refused_naming_the_limit_and_where() -> None:
    """Found: 1,000 multiparts one in another (33 KB) made Python's parser recurse past the interpreter's limit,
    refused as "the message nests its entities too deep to parse", naming neither the limit nor where."""
    from pdi.errors import LimitError
    from pdi.mail.message import MailLimits

    data, paths = _nested(["multipart"] * 1000, [1] * 1000)
    with pytest.raises(LimitError) as refused:
        read_message(data)
    # each multipart's first part is text, its second the next multipart: the 33rd level's first part is past it
    assert str(refused.value) == ("the message nests more than 32 entities deep (the limit MailLimits.max_depth):"
                                  f" part {'1.' * 32}0 is 33 deep")
    assert paths[31] == (1,) * 32
    # a max_depth set past what Python's parser follows: refused where the parser gave out, naming the limit
    with pytest.raises(LimitError, match=r"^the message nests its entities deeper than Python's parser follows"
                                         r" \(part 1\.1\..*\.1\.0 is [0-9,]+ deep\), though within the limit of 10,000"
                                         r" \(MailLimits\.max_depth\)"):
        read_message(data, MailLimits(max_depth=10_000, max_parts=10_000))
# --- a message read once a request -----------------------------------------------------------------------------


def test_a_messages_facts_and_view_read_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by an attack: ``pdi get --info`` (:func:`message_facts`) and the ``/view`` page read the message,
    then read it again for its body text beside the first reading (a second copy of all a reading costs: a 60
    MiB message peaked at 740 MB): the body text is made from the reading they hold."""
    from pdi.fragments import email_text
    from pdi.fragments.email_text import forget_body_texts, message_body_text, message_facts

    again: list[int] = []
    monkeypatch.setattr(email_text, "read_message", lambda data, *a, **k: again.append(len(data)) or read_message(data, *a, **k))
    data = (b"From: a@example.org\r\nSubject: s\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
            + "caf\u00e9\r\n".encode())
    forget_body_texts()
    assert message_facts(read_message(data))["body"]["characters"] == len("caf\u00e9\r\n")
    assert again == []
    forget_body_texts()
    assert message_body_text(data, read_message(data)) == "caf\u00e9\r\n"
    assert again == []
    assert message_body_text(data) == "caf\u00e9\r\n"  # kept: not read again
    assert again == []
    forget_body_texts()
    assert message_body_text(data) == "caf\u00e9\r\n"  # none held: read
    assert again == [len(data)]


def test_an_mbox_is_cut_reading_its_file_by_the_block_not_by_the_octet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by an attack: ``pdi add FILE.mbox`` read its file an octet at a time: the reader that names the file
    in a read error had no ``readline`` of its own, and ``io.RawIOBase``'s reads one octet a call, so an mbox of
    the 256 MiB one deposit takes made 268 million calls and took two minutes to be cut (``split_mbox`` itself
    cuts it in a few seconds). Its lines come from the file's buffered reader: cutting an mbox of 2 MiB reads it
    in no call per octet, and every message is deposited as it is written."""
    from click.testing import CliRunner

    from pdi.archive import Archive
    from pdi.cli import cli, deposit_cmd

    calls: list[int] = []
    read = deposit_cmd._Reading.read
    monkeypatch.setattr(deposit_cmd._Reading, "read", lambda self, size=-1: calls.append(size) or read(self, size))
    body = b"a line of a long message, as a list's archive holds them\n" * 18_000
    messages = [b"From: a@example.org\nMessage-ID: <%d@example.org>\nSubject: s\n\n" % n + body for n in (1, 2)]
    (tmp_path / "list.mbox").write_bytes(b"".join(b"From a@example.org Sat Jan  1 00:00:00 2000\n" + m + b"\n"
                                                  for m in messages))
    location = str(tmp_path / "a")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", "mail.example.us", "--archive", location]).exit_code == 0
    done = runner.invoke(cli, ["add", str(tmp_path / "list.mbox"), "--series", "mail.example.us",
                               "--archive", location])
    assert done.exit_code == 0, done.output
    assert len(calls) < 100, f"{len(calls):,} reads of a {len(body) * 2:,}-octet mbox"
    names = [line for line in done.output.split() if line.startswith("urn:pdi:")]
    with Archive.open(location) as archive:
        assert [archive.get(name).data for name in names] == messages


@pytest.mark.parametrize(("what", "box", "said"), [
    ("100,001 messages", b"".join(b"From a@b Sat Jan  1 00:00:00 2000\nMessage-ID: <%d@x>\n\nx\n\n" % n
                                  for n in range(100_001)),
     "list.mbox: the mbox has more than 100,000 messages: message 100,001 begins at line 500,001"),
    ("a message of 64 MiB and one octet", b"From a@b Sat Jan  1 00:00:00 2000\nSubject: s\n\n"
     + b"a" * ((64 << 20) - 12) + b"\n",
     "list.mbox: message 1 of the mbox (its From_ line is line 1) is larger than 67,108,864 octets"),
])
def test_an_mbox_past_its_bounds_is_refused_naming_the_file_and_the_bound(
    tmp_path: Path, what: str, box: bytes, said: str
) -> None:
    """docs/email.md's bounds of one ``pdi add FILE.mbox``: 100,000 messages, each of 64 MiB at most (one more is
    exit 7, nothing deposited), said naming the file, as the bound of 256 MiB in all is (the first was said with
    no file, its numbers unformatted: "the mbox has more than 100000 messages (line 500001)")."""
    from click.testing import CliRunner

    from pdi.archive import Archive
    from pdi.cli import cli

    (tmp_path / "list.mbox").write_bytes(box)
    location = str(tmp_path / "a")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", "mail.example.us", "--archive", location]).exit_code == 0
    refused = runner.invoke(cli, ["add", str(tmp_path / "list.mbox"), "--series", "mail.example.us",
                                  "--archive", location])
    assert refused.exit_code == 7, f"{what}: {refused.output}"
    assert f"limit exceeded: {tmp_path / said}" in refused.output, refused.output
    with Archive.open(location) as archive:
        assert archive.ls("urn:pdi://mail.example.us/*/*/*/*") == []


@pytest.mark.parametrize("deep", [33, 40, 30_000])
def test_an_enclosed_message_nested_past_the_limit_is_kept_as_written_read_whole_or_by_its_structure(
        tmp_path: Path, deep: int) -> None:
    """A forwarded message holding a forwarded message, ``deep`` times (docs/email.md §1): under 32 MiB, read whole,
    it was refused past 33 deep where read by its structure it was one part; both now keep it as one part, its
    octets those the message holds after its entity's header fields (cut by hand here), and its page, its passage
    and its part read without entering it (30,000 deep would pass any recursion limit)."""
    from pdi.archive import Archive
    from pdi.mail.large import part_octets, read_large
    from pdi.server.pages.viewer import render_view

    enclosed = b"From: b@example.org\r\nContent-Type: message/rfc822\r\n\r\n" * deep + b"From: c@example.org\r\n\r\nend\r\n"
    data = (b"From: a@example.org\r\nMessage-ID: <deep%d@example.org>\r\nContent-Type: multipart/mixed; boundary=B\r\n"
            b"\r\n--B\r\nContent-Type: text/plain\r\n\r\nthe body\r\n--B\r\nContent-Type: message/rfc822\r\n\r\n" % deep
            + enclosed + b"\r\n--B--\r\n")
    whole, large = read_message(data), read_large(data)
    assert [(p.path, p.media_type) for p in whole.parts] == [(p.path, p.media_type) for p in large.parts] == [
        ((0,), "text/plain"), ((1,), "message/rfc822")]
    assert whole.part_octets(whole.parts[1]) == part_octets(data, large.parts[1]) == enclosed
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series("mail.example.us")
        name = str(archive.add("mail.example.us", data, format="rfc822"))
        assert archive.resolve(f"{name}#part=1").data == enclosed
        assert archive.resolve(f"{name}#char=0,8").data == b"the body"
        assert "part 1</a>: message/rfc822" in render_view(archive, f"{name}#part=1")


def test_a_message_read_whole_has_its_lines_counted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A message of more octets than the lines' bound is counted for its lines by the rule that chooses its reading
    (:func:`pdi.mail.large.by_structure`); read whole, it is not counted again by :func:`read_message` (7.6 ms of
    104 ms for 10 MB once), whose own count still refuses a caller that did not check. Its reading is Python's."""
    import pdi.mail.large
    import pdi.mail.message
    from pdi.fragments import email_text
    from pdi.mail.large import read_mail
    from pdi.mail.limits import MailLimits

    counted: list[int] = []
    real = pdi.mail.message.more_lines_than

    def counting(octets: Any, most: int, *a: Any) -> bool:
        counted.append(most)
        return real(octets, most, *a)

    monkeypatch.setattr(pdi.mail.message, "more_lines_than", counting)
    monkeypatch.setattr(pdi.mail.large, "more_lines_than", counting)
    lines = b"".join(b"line %d of a long body, not many of them\r\n" % n for n in range(60_000))
    data = b"From: a@example.org\r\nSubject: long\r\nContent-Type: text/plain\r\n\r\n" + lines
    assert len(data) > MailLimits().max_lines  # more octets than the bound: its lines must be counted
    mail = read_mail(data)
    assert counted == [MailLimits().max_lines]
    python = email.message_from_bytes(data, policy=email.policy.default)
    assert mail.message.get_payload(decode=True) == python.get_payload(decode=True)
    counted.clear()
    email_text.forget_body_texts()
    assert email_text._made(data) == python.get_content().replace("\r\n", "\n").replace("\n", "\r\n")
    assert counted == [MailLimits().max_lines]
    counted.clear()
    few = MailLimits(max_lines=1_000)
    with pytest.raises(pdi.mail.message.LimitError, match="60,004 lines, more than the limit of 1,000"):
        read_message(data, few)
    assert counted == [1_000]
