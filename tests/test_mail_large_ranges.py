"""A range of a large message's part, decoded from the nearest place its decoding can start again
(:func:`pdi.mail.large.part_map`, :func:`pdi.mail.large.part_range`), and its size learnt without decoding it
(``docs/email.md`` §5).

The reference is Python's :mod:`email`: each range is the same slice of ``get_payload(decode=True)`` of the part
of the message read whole, for messages hypothesis draws (base64 of lines of any width, quoted-printable, 7bit,
CR LF and LF) read in windows of a few octets, so every cut a window makes is met.
"""

from __future__ import annotations

import base64
import binascii
import email
import email.policy
import quopri
import random
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.errors import UnsupportedError
from pdi.mail.large import part_map, part_pieces, part_range, read_large


def _message(eol: bytes, encoding: str, payload: bytes, width: int) -> bytes:
    if encoding == "base64":
        coded = base64.b64encode(payload)
        body = eol.join(coded[i:i + width] for i in range(0, len(coded), width))
    elif encoding == "quoted-printable":
        body = quopri.encodestring(payload).replace(b"\n", eol)
    else:
        body = payload
    return eol.join([
        b"From: a@example.org", b"MIME-Version: 1.0", b'Content-Type: multipart/mixed; boundary="B"', b"", b"--B",
        b"Content-Type: text/plain", b"", b"The body.", b"--B", b"Content-Type: application/octet-stream",
        b"Content-Transfer-Encoding: " + encoding.encode(), b"", body, b"--B--", b"",
    ])


def _python_part(data: bytes) -> bytes:
    message = email.message_from_bytes(data, policy=email.policy.default)
    return cast(bytes, cast(Any, message).get_payload()[1].get_payload(decode=True))


_PAYLOAD = st.one_of(st.binary(max_size=400), st.text(max_size=200).map(lambda t: t.encode("utf-8")))
_SEVEN_BIT = st.binary(max_size=300).map(lambda b: bytes(c for c in b if 0 < c < 128 and c not in b"\r\n-"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(eol=st.sampled_from([b"\r\n", b"\n"]), encoding=st.sampled_from(["base64", "quoted-printable", "7bit"]),
       payload=_PAYLOAD, seven=_SEVEN_BIT, width=st.sampled_from([76, 64, 4, 7, 1000]), window=st.integers(2, 64),
       cuts=st.lists(st.integers(0, 500), min_size=2, max_size=2))
def test_a_range_of_a_part_is_that_slice_of_what_python_decodes(
    eol: bytes, encoding: str, payload: bytes, seven: bytes, width: int, window: int, cuts: list[int]
) -> None:
    data = _message(eol, encoding, seven if encoding == "7bit" else payload, width)
    expected = _python_part(data)
    mail = read_large(data, window=window)
    part = mail.parts[1]
    mapped = part_map(data, part, window)
    assert mapped.size == len(expected)
    first, stop = sorted(min(c, len(expected)) for c in cuts)
    assert b"".join(part_range(data, part, mapped, first, stop, window)) == expected[first:stop]
    assert b"".join(part_range(data, part, mapped, 0, len(expected), window)) == expected


def test_the_size_of_a_base64_part_is_learnt_without_decoding_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a first answer needs before its first octet (its ``Content-Length``) costs a count of the part's
    characters, not a decoding (which ran at a third of the speed); its octets are decoded once, as they are
    sent, and a range of them from the place nearest before it."""
    scan = random.Random(5).randbytes(300_000)
    data = _message(b"\r\n", "base64", scan, 76)
    part = read_large(data).parts[1]
    decoded: list[int] = []
    real = binascii.a2b_base64
    monkeypatch.setattr(binascii, "a2b_base64", lambda s, *a, **k: decoded.append(len(s)) or real(s, *a, **k))
    mapped = part_map(data, part, 4096)
    assert mapped.size == len(scan) and sum(decoded) <= 8  # its padding at the end, decoded as Python decodes it
    assert b"".join(part_pieces(data, part, 4096)) == scan
    whole = sum(decoded)
    assert whole == len(base64.b64encode(scan))
    decoded.clear()
    assert b"".join(part_range(data, part, mapped, 200_000, 200_010, 4096)) == scan[200_000:200_010]
    assert sum(decoded) <= 2 * 4096  # the window that holds it (and the carry before), not the 200,000 before


def test_a_part_that_cannot_be_decoded_a_window_at_a_time_is_refused_before_its_size_is_said() -> None:
    """Uuencode whose ``begin`` line's mode (the octal number Python reads with ``int(mode, 8)``) is longer than
    :data:`pdi.mail.large.MAX_BEGIN_LINE`: refused naming the part and its octets as written (no uuencoder writes
    one; uuencode itself decodes, ``tests/test_mail_large_uuencode.py``)."""
    from pdi.mail.large import MAX_BEGIN_LINE

    body = b"begin " + b"6" * (MAX_BEGIN_LINE + 1) + b"\r\n#86)C\r\nend"
    data = _message(b"\r\n", "7bit", body, 76).replace(b"Content-Transfer-Encoding: 7bit",
                                                         b"Content-Transfer-Encoding: x-uuencode")
    part = read_large(data).parts[1]
    with pytest.raises(UnsupportedError, match=r"part 1 of the message: its uuencode has a begin line whose mode"
                                               r" is more than 65,536 octets \(offset \d+\).*byte=\d+,\d+"):
        part_map(data, part, 64)
    assert _python_part(data) == b"abc"  # what Python reads, whole


def test_a_range_of_long_lines_decodes_from_a_window_before_it_not_from_the_start() -> None:
    """A place of a part's map keeps no line (a stranger's quoted-printable of lines almost a window long would make
    each map some windows): it starts where the line begins; so a range is decoded from at most a line and a window
    before it, never from the part's start (before, every place that carried more than 4 KiB was dropped, and a
    range of lines of 8 KiB each was decoded from the part's first octet)."""
    lines = b"".join(b"%05d " % k + b"x" * 8000 + b"=E9\r\n" for k in range(60))
    data = _message(b"\r\n", "7bit", b"", 76).replace(b"Content-Transfer-Encoding: 7bit\r\n\r\n",
                                                       b"Content-Transfer-Encoding: quoted-printable\r\n\r\n" + lines)
    expected = _python_part(data)
    part = read_large(data).parts[1]
    mapped = part_map(data, part, 4096)
    assert mapped.size == len(expected) and all(len(carry) <= 2 for _, _, carry in mapped.resumes)
    read: list[int] = []

    class Counted:
        def __len__(self) -> int:
            return len(data)

        def __getitem__(self, key: slice) -> bytes:
            read.append(len(data[key]))
            return data[key]

    first = len(expected) - 100
    assert b"".join(part_range(Counted(), part, mapped, first, first + 50, 4096)) == expected[first:first + 50]
    assert sum(read) <= 8100 + 2 * 4096
