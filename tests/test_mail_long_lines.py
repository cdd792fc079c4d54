"""A message of one very long line (RFC 5322 §2.1.1 bounds a line at 998 octets; real mail breaks that, so a body
of such lines is read, never refused): what ``pdi add`` of it costs in memory, and the parser's buffer of lines
(:func:`pdi.mail.parser.parse`) that holds such a line in its pieces, against Python's own buffer and the private
parts of :mod:`email.feedparser` it relies on (:data:`pdi.mail.parser.FEEDPARSER_INTERNALS`)."""

from __future__ import annotations

import email.feedparser
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.mail.limits import MailLimits
from pdi.mail.parser import FEEDPARSER_INTERNALS, _pieced_lines, bounded_policy, parse
from support.pinned import resolve_dotted

S = "mail.example.us"
SIZE = 16 << 20
HEAD = (b"From: a@example.org\nSubject: s\nMessage-ID: <%d@example.org>\n"
        b"Content-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: 8bit\n\n")


def _add_peak(tmp_path: Path, name: str, data: bytes) -> int:
    """``pdi add`` of ``data`` (a file called ``name``) into a new archive: its peak resident memory in KiB."""
    from peak_memory import run_with_peak

    location = tmp_path / f"archive-{name}"
    with Archive.init(location) as archive:
        archive.add_series(S)
    path = tmp_path / name
    path.write_bytes(data)
    status, peak, out = run_with_peak(
        [sys.executable, "-m", "pdi", "add", str(path), "--series", S, "--archive", str(location)],
        stdout=subprocess.PIPE)
    assert status == 0
    with Archive.open(location) as archive:  # deposited whole, as written
        held = b"".join(archive.get(line).data for line in out.decode().split())
    assert held == (data if name.endswith(".eml") else data.split(b"\n", 1)[1])
    return peak


@pytest.mark.parametrize("kind", ["eml", "mbox"])
def test_pdi_add_of_one_long_line_of_8_bit_octets_costs_no_more_than_the_same_octets_in_short_lines(
    tmp_path: Path, kind: str
) -> None:
    """Found: a body of one 8-bit line of many MiB cost some 8 to 10 times its size to add (Python's parser holds
    a line it is cutting in a ``StringIO``, four octets a character, and reads it out as a string of two octets a
    character): more than the same octets in lines of 998 (RFC 5322 §2.1.1), the shape ``docs/email.md`` bounds.
    Now no more than those, and within seven times the message beside what adding a small one takes."""
    mbox = b"From a@example.org Mon Jan  1 00:00:00 2026\n" if kind == "mbox" else b""
    small = mbox + HEAD % 0 + b"body\n"
    long = mbox + HEAD % 1 + b"\xe9" * SIZE + b"\n"
    short = mbox + HEAD % 2 + (b"\xe9" * 998 + b"\n") * (SIZE // 999)
    peaks = [_add_peak(tmp_path, f"{shape}.{kind}", data)
             for shape, data in (("small", small), ("long", long), ("short", short))]
    assert (peaks[1] - peaks[2]) * 1024 < SIZE // 4, (
        f"{(peaks[1] - peaks[2]) // 1024} MiB more for one line of {SIZE:,} octets than for lines of 998")
    grown = (peaks[1] - peaks[0]) * 1024
    assert grown < 7 * len(long), f"{grown / len(long):.1f} times the message's {len(long):,} octets"


# --- the parser's buffer of lines -------------------------------------------------------------------------------

_TEXT = st.text(alphabet=st.sampled_from(["a", "\r", "\n", "\udce9", "\x85", "\u2028", "-"]), max_size=60)


def _lines_of(buffer: email.feedparser.BufferedSubFile, pieces: list[str]) -> list[str]:
    """Each line ``buffer`` gives, read as the parser reads it (readline until it needs more data), fed ``pieces``
    then closed."""
    lines: list[str] = []

    def drain() -> None:
        while (line := buffer.readline()) not in ("", email.feedparser.NeedMoreData):
            assert isinstance(line, str)
            lines.append(line)

    for piece in pieces:
        buffer.push(piece)
        drain()
    buffer.close()
    drain()
    return lines


@settings(max_examples=500, deadline=None)
@given(_TEXT, st.lists(st.integers(min_value=0, max_value=60), max_size=8))
def test_property_the_pieced_buffer_cuts_the_lines_pythons_buffer_cuts(text: str, cuts: list[int]) -> None:
    """The oracle: :class:`email.feedparser.BufferedSubFile`, given the same pieces (a CR LF cut in two, a CR
    last, a line over many pieces, NEL and U+2028, which are no line end to it)."""
    at = sorted({min(c, len(text)) for c in cuts})
    pieces = [text[a:b] for a, b in zip([0, *at], [*at, len(text)], strict=True)]
    expected = _lines_of(email.feedparser.BufferedSubFile(), pieces)
    assert _lines_of(_pieced_lines()(), pieces) == expected
    assert "".join(expected) == text


def test_a_line_fed_in_many_pieces_is_held_as_them_and_read_whole() -> None:
    line = "\udce9" * (1 << 20) + "\r\n"
    data = ("From: a@example.org\r\n\r\n" + line).encode("ascii", "surrogateescape")
    message = parse(data, bounded_policy(MailLimits()))
    assert message.get_payload(decode=True) == line.encode("ascii", "surrogateescape")


def test_each_private_part_of_the_feedparser_relied_on_is_there_and_the_parser_reads_through_the_buffer_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Python's :mod:`email.feedparser` names its buffer of lines neither in ``__all__`` nor in its documentation:
    each part listed is where it was, and a parser whose ``_input`` is replaced reads its lines from that one
    (were it renamed, the message would be read with Python's buffer, and this fails)."""
    for name, why in FEEDPARSER_INTERNALS.items():
        try:
            resolve_dotted(name)
        except (LookupError, AttributeError) as exc:
            pytest.fail(f"Python has no {name} ({exc!r}); pdi.mail.message relies on it: {why}")
    pieced = _pieced_lines()
    assert issubclass(pieced, email.feedparser.BufferedSubFile)
    pushed: list[str] = []
    real = pieced.push
    monkeypatch.setattr(pieced, "push", lambda self, data: pushed.append(data) or real(self, data))
    message = parse(b"From: a@example.org\r\n\r\nbody\r\n", bounded_policy(MailLimits()), feed=8)
    assert message["From"] == "a@example.org" and message.get_payload() == "body\r\n"
    assert "".join(pushed) == "From: a@example.org\r\n\r\nbody\r\n"
