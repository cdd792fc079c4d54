"""A large message's part whose transfer encoding is not as RFC 2045 writes it decodes as Python's :mod:`email`
decodes it whole (``docs/email.md`` §5), a window at a time, so that a message is read alike past and under
:data:`pdi.mail.large.STREAMED_FROM`.

Before, base64 holding anything but its alphabet before its padding (a stray character, padding in the middle) was
deposited but its part refused when served, while the same octets in a small message decoded as Python decodes
them; and quoted-printable holding ``=`` CR (which Python reads as a soft line break up to the next LF) decoded to
other octets than Python's when a window cut the line. The reference is ``get_payload(decode=True)`` of the part of
the message read whole by Python, for bodies drawn from the characters that make these cases, read in windows of a
few octets; each range of the part is that slice of it, from every place its decoding starts again.
"""

from __future__ import annotations

import email
import email.policy
from typing import Any, cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.mail.large import part_map, part_pieces, part_range, read_large
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


def _read_alike(data: bytes, window: int) -> None:
    expected = _python_part(data)
    whole = read_message(data)
    assert whole.part_octets(whole.parts[1]) == expected  # the small path: Python's reading
    part = read_large(data, window=window).parts[1]
    assert b"".join(part_pieces(data, part, window)) == expected
    mapped = part_map(data, part, window)
    assert mapped.size == len(expected)
    for decoded, _, _ in mapped.resumes:  # a range from each place its decoding starts again, and one before it
        for first in {max(0, decoded - 1), decoded}:
            stop = min(len(expected), first + 5)
            assert b"".join(part_range(data, part, mapped, first, stop, window)) == expected[first:stop], first
    assert b"".join(part_range(data, part, mapped, 0, len(expected), window)) == expected
    if expected:
        last = len(expected) - 1
        assert b"".join(part_range(data, part, mapped, last, last + 1, window)) == expected[last:]


_BASE64 = st.lists(st.sampled_from([b"QUJD", b"A", b"z", b"+/", b"=", b"==", b"\r\n", b"\n", b"\r", b"!", b" ",
                                    b"\xe9", b"-", b"\t", b"QQ", b"Zm9v"]), max_size=40).map(b"".join)
_QP = st.lists(st.sampled_from([b"a", b"=", b"=\r", b"=\r\n", b"=41", b"=4", b"=e9", b" ", b"\t", b"\r", b"\n",
                                b"\r\n", b"F", b"xyz", b"=\n", b"=G"]), max_size=40).map(b"".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=_BASE64, window=st.integers(2, 16))
def test_base64_with_stray_characters_or_padding_inside_reads_as_python_reads_it(body: bytes, window: int) -> None:
    _read_alike(_message(b"base64", body), window)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=_QP, window=st.integers(2, 16))
def test_quoted_printable_with_soft_breaks_at_window_edges_reads_as_python_reads_it(body: bytes, window: int) -> None:
    _read_alike(_message(b"quoted-printable", body), window)


def test_stray_characters_far_into_a_large_base64_part() -> None:
    """A character outside the alphabet a MiB into the part, padding in the middle of it, a last quad of one
    character (which Python answers as the base64 written, its line ends taken out): read as Python reads them."""
    import base64
    import random

    scan = base64.encodebytes(random.Random(3).randbytes(2_000_000)).replace(b"\n", b"\r\n")
    for body in (scan[:1_500_000] + b"!*" + scan[1_500_000:], scan[:900_001] + b"==" + scan[900_001:],
                 scan[:-3] + b"QUJDA\r\n", scan.replace(b"\r\n", b" \r\n")):
        data = _message(b"base64", body)
        expected = _python_part(data)
        part = read_large(data).parts[1]
        mapped = part_map(data, part)
        assert mapped.size == len(expected)
        assert b"".join(part_pieces(data, part, mapped=mapped)) == expected
        assert b"".join(part_range(data, part, mapped, 1_200_000, 1_200_100)) == expected[1_200_000:1_200_100]


def test_an_enclosed_messages_broken_base64_reads_alike_in_a_small_and_a_large_message() -> None:
    """An enclosed message in base64 (which RFC 2046 §5.2.1 forbids, but which is met) whose last quad is one
    character: the small path raised ``binascii.Error`` (no error of pdi's: a 500), the large one answered it as
    written; both now read it as Python reads a base64 part (``decode_b``): as written, its line ends taken out."""
    body = b"U3ViamVjdDogeA0KDQpib2R5!\r\nQ"
    data = _message(b"base64", body).replace(b"application/octet-stream", b"message/rfc822")
    whole = read_message(data)
    assert whole.parts[1].media_type == "message/rfc822"
    assert whole.part_octets(whole.parts[1]) == b"U3ViamVjdDogeA0KDQpib2R5!Q"
    part = read_large(data).parts[1]
    assert b"".join(part_pieces(data, part)) == b"U3ViamVjdDogeA0KDQpib2R5!Q"
    fine = _message(b"base64", b"U3ViamVjdDogeA0KDQpib2R5\r\n").replace(b"application/octet-stream",
                                                                       b"message/rfc822")
    assert read_message(fine).part_octets(read_message(fine).parts[1]) == b"Subject: x\r\n\r\nbody"
