"""Where a multipart's parts lie between its delimiter lines, read whole and by its structure, as Python reads them.

The independent reference is Python's parser (``email.message_from_bytes``, ``email.policy.default``) on the same
octets: each part's payload.
"""

from __future__ import annotations

import email
import email.policy
from email.message import Message
from typing import cast

import pytest

from pdi.mail.large import part_pieces, read_large
from pdi.mail.message import read_message

_LEAF_HEAD = b'From: a@example.org\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\n'


@pytest.mark.parametrize(("part", "expected"), [
    # a multipart with no delimiter line of its own, then another part: its body keeps the line end before "--b"
    (b'Content-Type: multipart/mixed; boundary="c"\r\n\r\nx\r\n--b\r\n\r\ny\r\n--b--\r\n', b"x\r\n"),
    (b"Content-Type: multipart/mixed\r\n\r\nx\r\n--b\r\n\r\ny\r\n--b--\r\n", b"x\r\n"),  # (no boundary)
    # last, no close delimiter: its body keeps the message's last line end, or is that line end
    (b'Content-Type: multipart/mixed; boundary="c"\r\n\r\nx\r\n', b"x\r\n"),
    (b'Content-Type: multipart/mixed; boundary="c"\r\n\r\n\r\n', b"\r\n"),
    (b'Content-Type: multipart/mixed; boundary="c"\r\n\r\n', b""),  # (that line end the empty line's)
    (b'Content-Type: multipart/mixed; boundary="c"\r\n', b""),  # (the header block's last line's)
    # a close delimiter first: its body is what comes before it, line end and all
    (b'Content-Type: multipart/mixed; boundary="c"\r\n\r\nx\r\n--c--\r\nz\r\n--b\r\n\r\ny\r\n', b"x\r\n"),
])
def test_a_multipart_python_reads_as_a_leaf_is_answered_by_structure_as_python_reads_it(
        part: bytes, expected: bytes) -> None:
    """Python's parser takes the line end before a delimiter line off a part's body, but off a multipart's
    epilogue: a multipart it reads as a leaf for want of a delimiter line keeps that line end in its body, which a
    reading by structure cut off. ``expected``: Python's payload of that part (``email.message_from_bytes``)."""
    data = _LEAF_HEAD + part
    python = cast(Message, email.message_from_bytes(data, policy=email.policy.default).get_payload()[0])
    assert python.get_content_maintype() == "multipart" and not python.is_multipart()
    assert python.get_payload() == expected.decode()  # the reference agrees with the values written here
    whole, large = read_message(data), read_large(data, window=3)
    assert whole.part_octets(whole.parts[0]) == b"".join(part_pieces(data, large.parts[0], 3)) == expected
