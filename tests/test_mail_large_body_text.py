"""A large message's body text (:func:`pdi.mail.large.read_large`, its body's part decoded a window at a time and kept
as those octets) is the text the whole reading gives and the one Python's :mod:`email` decodes: the same body
octets in each transfer encoding and charset, every line ending, whatever the window."""

from __future__ import annotations

import base64
import email
import email.policy
import quopri

from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.fragments.email_text import body_text
from pdi.fragments.text.lines import to_crlf
from pdi.mail.large import body_octets, body_unread, read_large
from pdi.mail.message import read_message

_PIECES = st.sampled_from([b"a", b"--", b"\r\n", b"\n", b"\r", b"\xc3\xa9", b"\xe9", b"=", b" ", b"\xc2\x85", b"-- \n"])


def _message(body: bytes, encoding: str, charset: str) -> bytes:
    if encoding == "base64":
        written = base64.encodebytes(body)
    elif encoding == "quoted-printable":
        written = quopri.encodestring(body)
    else:
        written = body
    return (b'From: a@example.org\r\nContent-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\n'
            b"Content-Type: text/plain; charset=" + charset.encode() + b"\r\nContent-Transfer-Encoding: "
            + encoding.encode() + b"\r\n\r\n" + written + b"\r\n--B\r\nContent-Type: image/png\r\n\r\nPNG\r\n--B--\r\n")


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=60).map(b"".join), st.sampled_from(["8bit", "base64", "quoted-printable"]),
       st.sampled_from(["utf-8", "iso-8859-1", "us-ascii"]), st.integers(4, 64))
def test_a_large_body_text_is_pythons_decoding_of_the_body_and_the_whole_readings(
    body: bytes, encoding: str, charset: str, window: int
) -> None:
    data = _message(body, encoding, charset)
    python = email.message_from_bytes(data, policy=email.policy.default).get_body(("plain",))
    assert python is not None
    decoded = python.get_payload(decode=True)
    expected = to_crlf(decoded.decode(charset, "replace"))
    large = read_large(data, window=window)
    assert body_octets(large.parts[0].entity) == decoded
    assert body_text(large) == body_text(read_message(data)) == expected


def test_a_body_past_what_is_read_keeps_no_octets_and_is_said_unread() -> None:
    data = _message(b"a\r\n" * 100, "8bit", "utf-8")
    large = read_large(data, max_body=10)
    assert body_octets(large.parts[0].entity) is None and body_unread(large) is large.parts[0]
    assert body_unread(read_large(data)) is None
