"""A message read by its structure (:mod:`pdi.mail.large`) reads as Python's :mod:`email` reads it whole.

The independent reference is Python's parser on the same octets (``email.message_from_bytes`` with
``email.policy.default``): each leaf's media type, charset, file name, Content-ID, Content-Location and
disposition, the part ``get_body(("plain", "html"))`` finds, and each leaf's ``get_payload(decode=True)``, which
:func:`pdi.mail.large.part_pieces` gives a window at a time (windows of a few octets here, so that every cut a
window makes is met: in a CR LF, a base64 quad, a quoted-printable escape, a delimiter line).
"""

from __future__ import annotations

import base64
import email
import email.policy
import quopri
import random
from email.message import Message
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.errors import LimitError, ParseError
from pdi.fragments.email_text import body_text
from pdi.mail.large import part_pieces, read_large
from pdi.mail.message import read_message


def _leaves(message: Message) -> list[Message]:
    """The leaves as pdi numbers them: depth first, a multipart entered, anything else one part."""
    if message.get_content_maintype() == "multipart" and message.is_multipart():
        return [leaf for child in message.get_payload() for leaf in _leaves(cast(Message, child))]
    return [message]


def _python(data: bytes) -> tuple[list[tuple[Any, ...]], int | None, list[bytes]]:
    """What Python's email reads of ``data`` whole: each leaf's facts, the body's number, each leaf's octets."""
    message = email.message_from_bytes(data, policy=email.policy.default)
    leaves = _leaves(message)
    body = message.get_body(preferencelist=("plain", "html"))
    facts = [(leaf.get_content_type(), leaf.get_content_charset() if leaf.get_content_maintype() == "text" else None,
              leaf.get_filename(), leaf.get_content_disposition()) for leaf in leaves]
    octets = [cast(bytes, leaf.get_payload(decode=True) or b"") for leaf in leaves]
    return facts, next((i for i, leaf in enumerate(leaves) if leaf is body), None), octets


def _same_as_python(data: bytes, window: int) -> None:
    facts, body, octets = _python(data)
    mail = read_large(data, window=window)
    assert [(p.media_type, p.charset, p.filename, p.disposition) for p in mail.parts] == facts
    assert mail.body_index() == body
    whole = read_message(data)  # pdi's reading of the whole: the same body text, ids and names
    for part, expected in zip(mail.parts, octets, strict=True):
        if part.media_type.startswith("message/"):  # Python decodes none: pdi answers it as the message holds it
            expected = whole.part_octets(whole.parts[part.index])
        assert b"".join(part_pieces(data, part, window)) == expected, part.index
    assert body_text(mail) == body_text(whole)
    assert [(p.content_id, p.location, p.path) for p in mail.parts] == [
        (p.content_id, p.location, p.path) for p in whole.parts]


_EOL = st.sampled_from([b"\r\n", b"\n"])
_TEXT = st.binary(max_size=60).map(lambda b: bytes(c for c in b if c not in b"\r\n\0"))


@st.composite
def _leaf(draw: Any, eol: bytes) -> Any:
    kind = draw(st.sampled_from(["text/plain; charset=utf-8", "text/plain; charset=iso-8859-1", "text/html",
                                 "application/octet-stream", "image/png", None]))
    encoding = draw(st.sampled_from(["base64", "quoted-printable", "7bit", "8bit", None]))
    payload = draw(st.binary(max_size=300))
    head = []
    if kind is not None:
        head.append(b"Content-Type: " + kind.encode())
    if draw(st.booleans()):
        head.append(b'Content-Disposition: attachment; filename="f' + str(draw(st.integers(0, 9))).encode() + b'.bin"')
    if draw(st.booleans()):
        head.append(b"Content-ID: <p" + str(draw(st.integers(0, 99))).encode() + b"@x>")
    if encoding is not None:
        head.append(b"Content-Transfer-Encoding: " + encoding.encode())
    if encoding == "base64":
        coded = base64.b64encode(payload)
        width = draw(st.sampled_from([76, 64, 4, 7]))
        body = eol.join(coded[i:i + width] for i in range(0, len(coded), width))
    elif encoding == "quoted-printable":
        body = quopri.encodestring(payload).replace(b"\n", eol)
    else:  # lines of text, some that begin "-" or "--" (no delimiter of this message's: they hold no "=")
        lines = draw(st.lists(st.one_of(_TEXT, st.sampled_from([b"--", b"-- x", b"--x", b"-"])), max_size=5))
        body = eol.join(lines)
    if not head and draw(st.booleans()):
        return eol + body  # no header field: a part with the default media type
    return eol.join(head) + eol + eol + body


@st.composite
def _entity(draw: Any, eol: bytes, depth: int = 0) -> Any:
    if depth >= 2 or not draw(st.booleans()):
        return draw(_leaf(eol))
    subtype = draw(st.sampled_from(["mixed", "alternative", "related"]))
    boundary = f"=_{depth}_{draw(st.text(alphabet='abcXYZ019', min_size=1, max_size=70))}".encode()
    parts = draw(st.lists(_entity(eol, depth + 1), min_size=1, max_size=3))
    out = b"Content-Type: multipart/" + subtype.encode() + b'; boundary="' + boundary + b'"' + eol + eol
    out += draw(st.sampled_from([b"", b"A preamble." + eol]))
    for part in parts:
        out += b"--" + boundary + draw(st.sampled_from([b"", b" ", b"\t "])) + eol + part + eol
    if draw(st.booleans()):  # the close delimiter, else the last part runs to the end
        out += b"--" + boundary + b"--" + draw(st.sampled_from([b"", b"  "])) + eol + draw(_TEXT)
    return out


@st.composite
def _message(draw: Any) -> Any:
    eol = draw(_EOL)
    head = b"From: a@example.org" + eol + b"Subject: s" + eol + b"MIME-Version: 1.0" + eol
    return head + draw(_entity(eol))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_message(), window=st.integers(2, 64))
def test_a_message_read_by_its_structure_reads_as_pythons_email_reads_it_whole(data: bytes, window: int) -> None:
    _same_as_python(data, window)


def _mail(eol: bytes, attachment: bytes) -> bytes:
    coded = base64.b64encode(attachment)
    lines = eol.join(coded[i:i + 76] for i in range(0, len(coded), 76))
    return eol.join([
        b"From: Ann <ann@example.org>", b"Subject: =?utf-8?q?caf=C3=A9?=", b"Message-ID: <m@example.org>",
        b"MIME-Version: 1.0", b'Content-Type: multipart/mixed; boundary="OUT"', b"", b"--OUT",
        b'Content-Type: multipart/alternative; boundary="ALT"', b"", b"--ALT",
        b"Content-Type: text/plain; charset=iso-8859-1", b"Content-Transfer-Encoding: quoted-printable", b"",
        b"Thanks,=0D=0Ahere: r=E9sum=E9 =", b"and a soft break.", b"--ALT", b"Content-Type: text/html", b"",
        b"<p>Thanks</p>", b"--ALT--", b"", b"--OUT", b"Content-Type: image/png",
        b'Content-Disposition: attachment; filename="scan.png"', b"Content-ID: <scan@x>",
        b"Content-Location: http://example.org/scan.png", b"Content-Transfer-Encoding: base64", b"", lines,
        b"--OUT", b"Content-Type: message/rfc822", b"", b"From: b@x", b"Subject: inner", b"", b"Inner body.",
        b"--OUT--", b"",
    ])


@pytest.mark.parametrize("eol", [b"\r\n", b"\n"])
@pytest.mark.parametrize("window", [3, 1000, 1 << 20])
def test_an_alternative_body_an_attachment_and_an_enclosed_message(eol: bytes, window: int) -> None:
    data = _mail(eol, random.Random(7).randbytes(50_000))
    _same_as_python(data, window)
    mail = read_large(data, window=window)
    whole = read_message(data)
    assert [p.path for p in mail.parts] == [(0, 0), (0, 1), (1,), (2,)]
    assert body_text(mail) == "Thanks,\r\nhere: résumé and a soft break."
    # the enclosed message: its octets as the message holds them (Mail.part_octets)
    assert b"".join(part_pieces(data, mail.parts[3], window)) == whole.part_octets(whole.parts[3])
    assert mail.header("Subject") == "café" and mail.message_id == "<m@example.org>"
    assert mail.find_part("cid:scan@x").index == 2 and mail.find_part("http://example.org/scan.png").index == 2


def test_a_body_past_the_limit_is_not_read_and_its_parts_still_are() -> None:
    data = _mail(b"\r\n", b"x" * 3000)
    mail = read_large(data, max_body=10)
    assert mail.body_index() == 0 and mail.parts[0].entity.get_payload() == ""
    assert b"".join(part_pieces(data, mail.parts[0])) == b"Thanks,\r\nhere: r\xe9sum\xe9 and a soft break."


def test_base64_holding_other_characters_decodes_as_python_decodes_it() -> None:
    data = _mail(b"\r\n", b"y" * 3000)
    at = data.index(b"eXl5")  # "yyy" in base64: the attachment's first line
    bad = data[:at + 200] + b"!" + data[at + 200:]  # Python decodes past it (binascii's lenient mode)
    mail = read_large(bad)
    assert b"".join(part_pieces(bad, mail.parts[2], 64)) == _python(bad)[2][2] == b"y" * 3000


@pytest.mark.parametrize(("data", "error", "words"), [
    (b"", ParseError, "empty"),
    (b"From someone Mon\r\nSubject: x\r\n\r\n", ParseError, "mbox"),
    (b"not a field\r\n\r\n", ParseError, "not a header field"),
    (b"Subject: a\r\n\r\nb\x00c", ParseError, "NUL octet at offset 15"),
])
def test_what_is_no_message_is_refused_as_the_whole_reading_refuses_it(data: bytes, error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        read_large(data)
    with pytest.raises(error):
        read_message(data)


def test_its_limits_are_the_whole_readings() -> None:
    parts = b"".join(b"--b\r\n\r\nx\r\n" for _ in range(30))
    data = b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n' + parts + b"--b--\r\n"
    from pdi.mail.message import MailLimits

    with pytest.raises(LimitError, match="more than 20 entities"):
        read_large(data, MailLimits(max_parts=20))
    with pytest.raises(LimitError, match="more than 10 boundary delimiter lines"):
        read_large(data, MailLimits(max_delimiters=10))
    long = b"Content-Type: text/plain; name=" + b"a" * 5000 + b"\r\n\r\nx"
    with pytest.raises(LimitError, match=r"Content-Type field .* is 5,031 octets"):
        read_large(long)
    # the delimiter line starts after the 47 octets of the header field and the empty line
    blanks = b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b' + b" " * 300_000 + b"\r\n\r\nx\r\n--b--\r\n"
    with pytest.raises(LimitError, match="the line at offset 47 is a boundary delimiter followed by more than 65,536"):
        read_large(blanks)
