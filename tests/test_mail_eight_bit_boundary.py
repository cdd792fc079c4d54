"""A boundary holding 8-bit octets (RFC 2046 §5.1.1 allows none: its characters are 7-bit ``bchars``).

The reference is Python's :mod:`email` (``policy=email.policy.default``) on the same octets: it reads the
``boundary`` parameter's 8-bit octets as UTF-8 (RFC 6532), else as U+FFFD, and matches it against body lines read as
ASCII (each 8-bit octet a lone surrogate), so no line is its delimiter and the multipart is one leaf. A message read
by its structure (:func:`pdi.mail.large.read_large`) was cut along the boundary's UTF-8 octets into parts Python and
:func:`pdi.mail.message.read_message` never found: the same message had other parts past 32 MiB.
"""

from __future__ import annotations

import email
import email.policy
from email.message import Message
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pdi.mail.large as large
from pdi.fragments.email import evaluate_email
from pdi.mail.large import part_pieces, read_large
from pdi.mail.message import read_message


def _leaves(message: Message) -> list[Message]:
    if message.get_content_maintype() == "multipart" and message.is_multipart():
        return [leaf for child in cast(list[Message], message.get_payload()) for leaf in _leaves(child)]
    return [message]


def _message(boundary: bytes, eol: bytes) -> bytes:
    return eol.join([
        b"From: a@example.org", b"MIME-Version: 1.0", b'Content-Type: multipart/mixed; boundary="' + boundary + b'"',
        b"", b"--" + boundary, b"Content-Type: text/html", b"", b"<p>hi", b"--" + boundary,
        b"Content-Type: image/png", b"", b"x", b"--" + boundary + b"--", b"",
    ])


_EIGHT_BIT = st.lists(st.one_of(st.binary(min_size=1, max_size=3).filter(lambda b: max(b) >= 0x80),
                                st.sampled_from([b"b", b"=_", b"x y"])), min_size=1, max_size=4).map(b"".join).filter(
    lambda b: max(b) >= 0x80 and not set(b) & set(b'\r\n"\\\0') and b.strip() == b)


@given(boundary=_EIGHT_BIT, eol=st.sampled_from([b"\r\n", b"\n"]), window=st.integers(2, 64))
def test_property_an_eight_bit_boundary_is_read_by_its_structure_as_python_reads_it(
        boundary: bytes, eol: bytes, window: int) -> None:
    data = _message(boundary, eol)
    python = _leaves(email.message_from_bytes(data, policy=email.policy.default))
    expected = [(leaf.get_content_type(), leaf.get_payload(decode=True) or b"") for leaf in python]
    whole = read_message(data)
    by_structure = read_large(data, window=window)
    assert [(p.media_type, whole.part_octets(p)) for p in whole.parts] == expected
    assert [(p.media_type, b"".join(part_pieces(data, p, window))) for p in by_structure.parts] == expected


def test_a_utf8_boundary_answers_the_same_part_small_or_streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _message("bé".encode(), b"\r\n")
    # Python: one leaf, the multipart, its body as written
    python = _leaves(email.message_from_bytes(data, policy=email.policy.default))
    assert [leaf.get_content_type() for leaf in python] == ["multipart/mixed"]
    small = evaluate_email("part", [0], data, "message/rfc822", None)
    monkeypatch.setattr(large, "STREAMED_FROM", 0)
    streamed = evaluate_email("part", [0], data, "message/rfc822", None)
    assert (small.data, small.media_type) == (streamed.data, streamed.media_type)
    assert small.media_type == "multipart/mixed"
    assert small.data == python[0].get_payload(decode=True)
