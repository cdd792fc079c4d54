"""E-mail messages and mbox files: ``pdi.mail`` and ``pdi.fragments.email``.

The input is a message's octets. What must hold (docs/email.md): reading
it either succeeds or raises a PDIError (a refusal or a limit), never
another exception; a message read has a CRLF-canonical body text that
``char`` selects exactly, each part is found by its number, its facts
encode as UTF-8 (no surrogate of an 8-bit octet leaks), and every
message cut from the same octets read as an mbox is octets of the input.
"""

from __future__ import annotations

import io
import json

from fuzz_harness import Target

from pdi import fragments
from pdi.errors import ParseError, PDIError
from pdi.fragments.email_text import body_text, message_facts
from pdi.mail.mbox import split_mbox
from pdi.mail.message import read_message


def run(data: bytes) -> None:
    cut = list(split_mbox(io.BytesIO(data), max_message_bytes=1 << 20, max_messages=1000, strict=False))
    for message in cut:
        assert message.data in data
    try:  # strict: the same messages, or a refusal of a line before the first From_ line
        assert list(split_mbox(io.BytesIO(data), max_message_bytes=1 << 20, max_messages=1000)) == cut
    except ParseError as exc:
        assert exc.rule == "mbox" and exc.offset is not None and data[exc.offset:].strip()
    try:
        mail = read_message(data)
    except PDIError:
        return
    text = body_text(mail)
    assert "\r" not in text.replace("\r\n", "")
    assert "\n" not in text.replace("\r\n", "")
    got = fragments.evaluate("char", (0, 10), data, media_type="message/rfc822")
    assert got.data.decode("utf-8") == text[:10]
    for part in mail.parts:
        assert mail.find_part(part.index) is part
        part.octets()
    json.dumps(message_facts(mail)).encode("utf-8")  # what pages and JSON show: no lone surrogate


TARGET = Target(
    "mail",
    run,
    warmup=b"From: a@b\r\nSubject: x\r\n\r\nbody\r\n",
    tokens=(
        b"From: ", b"From ", b"Subject: ", b"Message-ID: <a@b>", b"Content-Type: ", b"multipart/mixed",
        b"multipart/alternative", b"multipart/related", b"message/rfc822", b"text/plain", b"text/html",
        b"; boundary=", b"; charset=", b"utf-8", b"iso-8859-1", b"Content-Transfer-Encoding: ", b"base64",
        b"quoted-printable", b"Content-Disposition: attachment; filename=", b"Content-ID: <x@y>",
        b"--", b"\r\n", b"\n", b"\r\n\r\n", b"=?utf-8?q?=C3=A9?=", b"<p>", b"</p>",
    ),
    examples=0.5,
)
