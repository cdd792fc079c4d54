"""Uuencode, and quoted-printable lines that no cut of a few octets leaves whole, in a large message's part: decoded
a window at a time to the octets Python's :mod:`email` gives of the part read whole (``docs/email.md`` §5).

Before, a large message's part in ``x-uuencode`` (``uuencode``, ``uue``, ``x-uue``) was refused naming the part,
while the same octets in a small message decoded as ``get_payload(decode=True)`` decodes them
(``email.message._decode_uu``: lines before a ``begin`` line whose mode is octal skipped, each line then read by
``binascii.a2b_uu``, its first octets alone if the rest is not blank, an ``end`` line ending it; an empty line, a
line that does not decode or no ``begin`` line making Python answer the part as written); and a line of
quoted-printable longer than four windows with an ``=`` every octet or two was refused, though ``binascii.a2b_qp``
reads it left to right with two octets of look-ahead. The reference is Python's reading of the same message whole,
for bodies drawn from the characters that make these cases, read in windows of a few octets; each range of the
part is that slice of it, from every place its decoding starts again.
"""

from __future__ import annotations

import binascii
import email
import email.policy
import random
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.mail.large import WINDOW, part_map, part_pieces, part_range, read_large
from pdi.mail.message import read_message


def _message(encoding: bytes, body: bytes) -> bytes:
    return b"\r\n".join([
        b"From: a@example.org", b"MIME-Version: 1.0", b'Content-Type: multipart/mixed; boundary="B"', b"", b"--B",
        b"Content-Type: text/plain", b"", b"The body.", b"--B", b"Content-Type: application/octet-stream",
        b"Content-Transfer-Encoding: " + encoding, b"", body, b"--B--", b"",
    ])


def _python_part(data: bytes) -> bytes:
    message = email.message_from_bytes(data, policy=email.policy.default)
    return cast(bytes, cast(Any, message).get_payload()[1].get_payload(decode=True))


def _read_alike(data: bytes, window: int, ranges: int = 5) -> bytes:
    expected = _python_part(data)
    whole = read_message(data)
    assert whole.part_octets(whole.parts[1]) == expected  # the small path: Python's reading
    part = read_large(data, window=window).parts[1]
    assert b"".join(part_pieces(data, part, window)) == expected
    mapped = part_map(data, part, window)
    assert mapped.size == len(expected)
    assert b"".join(part_pieces(data, part, window, mapped)) == expected
    for decoded, _, _ in mapped.resumes[:: max(1, len(mapped.resumes) // ranges)]:  # from places it starts again
        for first in {max(0, decoded - 1), decoded}:
            stop = min(len(expected), first + 5)
            assert b"".join(part_range(data, part, mapped, first, stop, window)) == expected[first:stop], first
    assert b"".join(part_range(data, part, mapped, 0, len(expected), window)) == expected
    if expected:
        last = len(expected) - 1
        assert b"".join(part_range(data, part, mapped, last, last + 1, window)) == expected[last:]
    return expected


def _uu_lines(payload: bytes) -> list[bytes]:
    return [binascii.b2a_uu(payload[k : k + 45]).rstrip(b"\n") for k in range(0, len(payload), 45)]


_ENCODING = st.sampled_from([b"x-uuencode", b"uuencode", b"uue", b"x-uue", b"X-UUEncode"])
_EOL = st.sampled_from([b"\r\n", b"\n", b"\r"])
_UU_LINE = st.one_of(
    st.binary(max_size=60).map(lambda b: _uu_lines(b)[0] if b else b"`"),
    st.sampled_from([b"begin 644 scan.bin", b"begin 6x4 f", b"begin ", b"begin 0o7_7 f", b"begin -1", b"end",
                     b" end \t", b"end\x0c", b"en d", b"", b"`", b"M", b"!!", b"#86)C", b"#86)C#86)C", b"\x7f",
                     b"~~", b"  ", b"\t", b"-\x01", b"!  ", b"!``", b"xbegin 644 f", b"BEGIN 644 f"]),
)
#: What may follow the body's last line end: nothing, a line unended, a begin line unended (the structure reader's
#: search for the line after a begin line moved by nothing on the body's last octet and spun forever: found by a
#: review, 2026-12-01, on a message of 2,100,000 empty lines and ``begin 644 a``).
_UU_LAST = st.sampled_from([b"", b"trailing", b"begin 644 a", b"begin 644 scan.bin", b"begin 6"])
_UU_BODY = st.tuples(st.lists(_UU_LINE, max_size=12), st.lists(_EOL, min_size=1, max_size=12), _UU_LAST).map(
    lambda drawn: b"".join(line + drawn[1][k % len(drawn[1])] for k, line in enumerate(drawn[0])) + drawn[2])


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(encoding=_ENCODING, body=_UU_BODY, window=st.integers(2, 16))
def test_uuencode_reads_as_python_reads_it(encoding: bytes, body: bytes, window: int) -> None:
    _read_alike(_message(encoding, body), window)


@pytest.mark.timeout(60)
@given(lines=st.integers(0, 40), eol=_EOL, window=st.integers(2, 16), last=st.sampled_from([b"begin 644 a", b"begin 6"]))
def test_a_message_whose_body_ends_in_an_unended_begin_line_is_read_as_python_reads_it(
    lines: int, eol: bytes, window: int, last: bytes
) -> None:
    """A message of one part, its body empty lines and then a ``begin`` line without a line end, read by its
    structure: its decoded octets are Python's (none: no line follows the begin line), not a reading that never
    ends."""
    data = (b"From: a@example.org\r\nContent-Transfer-Encoding: x-uuencode\r\n\r\n" + eol * lines + last)
    expected = cast(bytes, email.message_from_bytes(data, policy=email.policy.default).get_payload(decode=True))
    part = read_large(data, window=window).parts[0]
    assert b"".join(part_pieces(data, part, window)) == expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=st.binary(max_size=400), eol=_EOL, window=st.integers(2, 64), ended=st.booleans())
def test_a_uuencoded_file_decodes_to_its_octets(payload: bytes, eol: bytes, window: int, ended: bool) -> None:
    body = eol.join([b"begin 644 scan.bin", *_uu_lines(payload), b"`", *([b"end"] if ended else [])]) + eol
    assert _read_alike(_message(b"x-uuencode", body), window) == payload


def test_a_large_uuencoded_part_decodes_a_window_at_a_time() -> None:
    """Some 3 MB of uuencoded scan, with an ``end`` line and the noise a mailer writes after it; its map keeps a
    place a window apart, so a range far into it is read from a window before it."""
    scan = random.Random(4).randbytes(2_000_000)
    body = b"\r\n".join([b"Here it is:", b"", b"begin 600 scan.bin", *_uu_lines(scan), b"`", b"end", b"", b"--",
                         b"sent from a phone"]) + b"\r\n"
    data = _message(b"x-uuencode", body)
    assert _python_part(data) == scan
    part = read_large(data).parts[1]
    mapped = part_map(data, part)
    assert mapped.size == len(scan) and not mapped.raw and len(mapped.resumes) >= 2
    assert b"".join(part_pieces(data, part, mapped=mapped)) == scan
    read: list[int] = []

    class Counted:
        def __len__(self) -> int:
            return len(data)

        def __getitem__(self, key: slice) -> bytes:
            read.append(len(data[key]))
            return data[key]

    assert b"".join(part_range(Counted(), part, mapped, 1_900_000, 1_900_100)) == scan[1_900_000:1_900_100]
    assert sum(read) <= 2 * WINDOW + 200


def test_a_uuencoded_part_python_answers_as_written_is_answered_as_written() -> None:
    """An empty line inside the encoded lines (``Truncated input``), far into the part: Python answers the part as
    written, which its map learns before anything is said of it."""
    lines = _uu_lines(random.Random(5).randbytes(1_500_000))
    body = b"\n".join([b"begin 644 f", *lines[:20_000], b"", *lines[20_000:], b"end"]) + b"\n"
    data = _message(b"x-uuencode", body)
    assert _python_part(data) == body
    part = read_large(data).parts[1]
    mapped = part_map(data, part)
    assert mapped.raw and mapped.size == len(body)
    assert b"".join(part_pieces(data, part, mapped=mapped)) == body
    assert b"".join(part_range(data, part, mapped, 1_000_000, 1_000_010)) == body[1_000_000:1_000_010]


_QP_RUN = st.lists(st.sampled_from([b"=", b"==", b"=4", b"=41", b"4", b"A", b"f", b"G", b"=G", b"=\r", b"\r",
                                    b"=\n", b"\n", b" "]), max_size=30).map(b"".join)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=_QP_RUN, repeat=st.integers(1, 40), window=st.integers(2, 8))
def test_quoted_printable_lines_of_escapes_longer_than_windows_read_as_python_reads_them(
    body: bytes, repeat: int, window: int
) -> None:
    """Lines of ``=``, ``=4``, ``==`` and hex digits many windows long (refused before, past four windows)."""
    _read_alike(_message(b"quoted-printable", body * repeat), window)
