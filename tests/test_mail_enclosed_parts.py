"""Enclosed messages, digests and boundaries that begin another read whole as by their structure, as Python reads them.

The independent reference is Python's parser on the same octets (``email.policy.default``), as in
``test_mail_large.py``: each leaf's facts, the body's number and each leaf's decoded octets; an enclosed message's
octets as the message holds them, which a message read whole (:meth:`pdi.mail.message.Mail.part_octets`) and one
read by its structure (:func:`pdi.mail.large.part_pieces`) give alike. Here the messages hold what that file's do
not: ``message/rfc822`` parts (holding multiparts of their own), ``multipart/digest`` whose parts are
``message/rfc822`` by default, a multipart whose boundary is the one around it and more (``b`` in ``bx``, ``b y``),
delimiter lines with transport padding after them (RFC 2046 §5.1.1), and the last part with no close delimiter.
"""

from __future__ import annotations

import email
import email.policy
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pdi.mail.large import part_pieces, read_large
from pdi.mail.message import read_message
from test_mail_large import _EOL, _TEXT, _leaf, _same_as_python


@st.composite
def _entity(draw: Any, eol: bytes, depth: int = 0, outer: bytes = b"") -> Any:
    kind = draw(st.integers(0, 3)) if depth < 3 else 0
    if kind == 0:
        return draw(_leaf(eol))
    if kind == 1:  # an enclosed message, perhaps a multipart whose boundary begins with the one around it
        inner = b"From: x@example.org" + eol + b"Subject: in" + eol + draw(_entity(eol, depth + 1, outer))
        return b"Content-Type: message/rfc822" + eol + eol + inner
    subtype = draw(st.sampled_from(["mixed", "alternative", "digest", "related"]))
    boundary = draw(st.sampled_from([outer + b"x", outer + b" y", b"b" + str(depth).encode()])).strip() or b"z"
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        if subtype == "digest" and draw(st.booleans()):  # no Content-Type: message/rfc822
            parts.append(eol + b"From: d@example.org" + eol + b"Subject: d" + eol + eol + draw(_TEXT))
        else:
            parts.append(draw(_entity(eol, depth + 1, boundary)))
    out = b"Content-Type: multipart/" + subtype.encode() + b'; boundary="' + boundary + b'"' + eol + eol
    out += draw(st.sampled_from([b"", b"A preamble." + eol, b"--" + boundary + b"x" + eol]))
    for part in parts:
        out += b"--" + boundary + draw(st.sampled_from([b"", b" ", b"\t "])) + eol + part + eol
    if draw(st.booleans()):  # the close delimiter, else the last part runs to the message's end
        out += b"--" + boundary + b"--" + draw(st.sampled_from([b"", b"  ", b"\t"])) + eol + draw(_TEXT)
    return out


@st.composite
def _message(draw: Any) -> Any:
    eol = draw(_EOL)
    return b"From: a@example.org" + eol + b"Subject: s" + eol + b"MIME-Version: 1.0" + eol + draw(_entity(eol))


def _enclosed_last(eol: bytes, tail: bytes) -> bytes:
    return eol.join([b"From: a@example.org", b'Content-Type: multipart/mixed; boundary="x"', b"", b"--x",
                     b"Content-Type: message/rfc822", b"", b"From: b@example.org", b"", b"body"]) + tail


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_message(), window=st.integers(2, 64))
@example(data=_enclosed_last(b"\r\n", b"\r\n"), window=5)
@example(data=b'From: a@example.org\r\nContent-Type: multipart/mixed; boundary="x"\r\n\r\n--x\r\n\r\n--x\r\n--x\r\n'
               b"Content-Type: message/rfc822\r\n\r\nFrom: x@example.org\r\n\r\n\r\n", window=2)  # a delimiter line right after one
def test_enclosed_messages_and_digests_read_by_structure_and_whole_as_python_reads_them(data: bytes, window: int) -> None:
    _same_as_python(data, window)


@pytest.mark.parametrize("eol", [b"\r\n", b"\n"])
@pytest.mark.parametrize("tail", [b"", b"{eol}", b"{eol}{eol}"])
def test_an_enclosed_message_last_with_no_close_delimiter_ends_where_python_ends_it(eol: bytes, tail: bytes) -> None:
    """Python's parser ends the last part of a multipart with no close delimiter before the message's last line
    end (docs/email.md: "the last part runs to the message's end less its last line ending"); read whole, an
    enclosed message there kept that line end, read by its structure not: the same message, two answers."""
    data = _enclosed_last(eol, tail.replace(b"{eol}", eol))
    enclosed = email.message_from_bytes(data, policy=email.policy.compat32).get_payload()[0].get_payload()[0]
    expected = b"From: b@example.org" + eol + eol + b"body" + (eol if tail.count(b"{eol}") == 2 else b"")
    assert enclosed.get_payload() == (b"body" + expected.partition(b"body")[2]).decode()  # Python's own cut
    whole = read_message(data)
    assert whole.part_octets(whole.parts[0]) == expected
    assert b"".join(part_pieces(data, read_large(data, window=3).parts[0], 3)) == expected
