"""A stranger's large message read by its structure (:mod:`pdi.mail.large`): what it keeps is what Python's
:mod:`email` reads of the same octets whole, and what it refuses it refuses naming what and where, in bounded
memory and time (``docs/email.md`` §5).

Found so: a part's header block longer than the first window its end is looked for in (64 KiB) was cut where that
window ended when the window cut a line before its colon: the rest of the header fields read as the part's body,
its media type, charset and file name lost (a PDF attachment served as ``text/plain``, its fields as its octets).
"""

from __future__ import annotations

import email
import email.policy
import re
from email.message import Message
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.mail.large import part_pieces, read_large


def _python_leaves(data: bytes) -> list[Message]:
    message = email.message_from_bytes(data, policy=email.policy.default)
    return [part for part in message.walk() if not part.is_multipart()]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fields=st.integers(3_500, 7_000), pad=st.integers(0, 40), eol=st.sampled_from([b"\r\n", b"\n", b"\r"]))
def test_property_a_header_block_longer_than_a_window_is_read_whole_as_python_reads_it(
    fields: int, pad: int, eol: bytes
) -> None:
    """A part's header block of 64 to 400 KiB, its media type and file name last: each window it is read in cuts
    some line somewhere; the part's fields, type, name and octets are those Python reads."""
    block = b"".join(b"X-Field-%d: value%s%s" % (k, b"v" * pad, eol) for k in range(fields))
    data = eol.join([
        b"From: a@example.org", b'Content-Type: multipart/mixed; boundary="B"', b"", b"--B", b"", b"The body.",
        b"--B", block + b'Content-Type: application/pdf; name="scan.pdf"', b"", b"%PDF-1.4 the scan", b"--B--", b"",
    ])
    assert len(block) > 64 << 10
    expected = _python_leaves(data)[1]
    part = read_large(data).parts[1]
    assert (part.media_type, part.filename) == (expected.get_content_type(), expected.get_filename()) == (
        "application/pdf", "scan.pdf")
    assert len(part.entity.keys()) == len(expected.keys()) == fields + 1
    assert b"".join(part_pieces(data, part)) == cast(Any, expected).get_payload(decode=True)


def _with_fields(counts: list[int]) -> bytes:
    """A multipart whose parts have ``counts`` header fields (and a Content-Type) each."""
    parts = [b"--B\r\n" + b"".join(b"X-%d: v\r\n" % k for k in range(n)) + b"Content-Type: text/plain\r\n\r\nx\r\n"
             for n in counts]
    return (b'From: a@example.org\r\nContent-Type: multipart/mixed; boundary="B"\r\n\r\n' + b"".join(parts)
            + b"--B--\r\n")


def test_the_header_fields_of_a_large_message_are_bounded_as_a_small_ones_are() -> None:
    """``MailLimits.max_fields`` bounds the header fields a large message's entities are read with, as it bounds
    the lines a small one's parser may read as fields: 1,600,000 fields in 8 MiB of header blocks cost 4.5 s of CPU
    and 100 MiB at each reading of the message (each ``/view``, each ``part=``), where a message read whole is
    refused past 100,000. The refusal names the part and where its header block is."""
    from pdi.errors import LimitError
    from pdi.mail.message import MailLimits

    data = _with_fields([50, 50, 50])
    delimiters = [found.start() for found in re.finditer(rb"--B\r\n", data)]
    third = delimiters[2] + 5  # where part 2's header block starts
    assert [len(p.entity.keys()) for p in read_large(data, MailLimits(max_fields=160)).parts] == [51, 51, 51]
    with pytest.raises(LimitError) as refused:
        read_large(data, MailLimits(max_fields=150))
    said = str(refused.value)
    assert "more than 150 header fields" in said and f"part 2's header block (offset {third})" in said, said



@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.sampled_from([b"--B", b"--B--", b"--Bx", b"--B ", b"-- ", b"text", b"--", b"--- a/f.c",
                                       b"--C", b"X: y", b""]), min_size=1, max_size=30),
       eol=st.sampled_from([b"\r\n", b"\n", b"\r"]), limit=st.integers(0, 6))
def test_property_too_many_boundary_delimiter_lines_are_refused_naming_where_the_first_past_the_limit_is(
    lines: list[bytes], eol: bytes, limit: int
) -> None:
    """Read whole or by its structure, a multipart's lines that begin ``--`` and its boundary, up to its close
    delimiter (RFC 2046 §5.1.1: ``--B--``, then blanks; not one right after a delimiter line, which Python's parser
    takes with it), are counted against ``max_delimiters``; past it the message is refused naming the offset of the
    first line past the limit. A line that begins ``--`` and no boundary
    (``-- ``, ``--- a/f.c``, ``--C``) is not counted, nor one after the close delimiter (its epilogue)."""
    from pdi.errors import LimitError
    from pdi.mail.message import MailLimits, read_message

    data = eol.join([b"From: a@example.org", b'Content-Type: multipart/mixed; boundary="B"', b"", *lines, b""])
    candidates, at = [], data.index(eol + eol) + 2 * len(eol)  # the body's first line
    after_one = False  # whether the line before is a delimiter line
    for line in lines:
        if line.startswith(b"--B"):
            candidates.append(at)
        delimiter = re.fullmatch(rb"--B(--)?[ \t]*", line)
        # a close delimiter ends the multipart (in the preamble, Python reads the multipart as a leaf), but one
        # right after a delimiter line, which Python's parser takes with it
        if delimiter and delimiter.group(1) and not after_one:
            break
        after_one = delimiter is not None
        at += len(line) + len(eol)
    limits = MailLimits(max_delimiters=limit)
    for read in (read_message, read_large):
        if len(candidates) <= limit:
            read(data, limits)
            continue
        with pytest.raises(LimitError) as refused:
            read(data, limits)
        said = str(refused.value)
        assert said.endswith(f"the first past it at offset {candidates[limit]}, in the message's body"), said
        assert f"more than {limit:,} boundary delimiter lines" in said, said


# --- an mbox of long lines ------------------------------------------------------------------------------------

_MBOX_LINES = st.lists(st.one_of(
    st.sampled_from([b"From a@b Mon Jan  1 00:00:00 2024\n", b"\n", b"Subject: x\n", b"From: x@y\n", b"body\n"]),
    st.tuples(st.sampled_from([b"", b"From ", b"x"]), st.integers(30, 130), st.sampled_from([b"From ", b"x", b""]),
              st.sampled_from([b"\n", b""])).map(lambda t: t[0] + b"y" * t[1] + t[2] + t[3]),
), max_size=12)


@settings(max_examples=150, deadline=None)
@given(lines=_MBOX_LINES)
def test_property_an_mbox_of_lines_longer_than_a_read_is_cut_as_mailbox_cuts_it(lines: list[bytes]) -> None:
    """Lines longer than a read of the file (``max_message_bytes``, lowered here to 64): a piece of one that starts
    ``From `` starts no message (it made one of a line before the first From_ line), and a From_ line longer than
    a read is the From_ line whole (its rest was read as the message's first line, or refused as too large)."""
    import io
    import mailbox
    import tempfile
    from pathlib import Path

    from pdi.errors import LimitError
    from pdi.mail.mbox import split_mbox

    data = b"".join(lines)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "box.mbox"
        path.write_bytes(data)
        box = mailbox.mbox(str(path), create=False)
        try:
            expected = [box.get_bytes(k) for k in box.iterkeys()]
        finally:
            box.close()
    try:
        cut = [m.data for m in split_mbox(io.BytesIO(data), max_message_bytes=64, strict=False)]
    except LimitError:
        assert any(len(m) + 1 > 64 for m in expected)
        return
    assert cut == expected
