"""Parts of a stranger's message, as Python's :mod:`email` (``policy=email.policy.default``) finds them.

Messages made to be awkward: multiparts nested up to three deep (``mixed``, ``alternative``, ``digest``,
``related``), boundaries that are quoted, folded, continued or encoded by RFC 2231, that hold spaces, regular
expression characters, 8-bit octets, that are a prefix of a line that is no delimiter, longer than the octets kept of
a delimiter line, or empty; preambles, epilogues, a missing close delimiter, a second ``Content-Type``; parameters
continued and encoded (RFC 2231) and encoded words (RFC 2047) in file names, 8-bit Content-IDs and locations; base64
with junk and short lines, quoted-printable soft breaks, odd transfer-encoding values, enclosed messages; lines ended
CR LF, LF or CR. The reference is Python's reading of the whole: each leaf's media type, charset, file name and
disposition, and its ``get_payload(decode=True)``. pdi's reading whole (:func:`pdi.mail.message.read_message`) and by
its structure (:func:`pdi.mail.large.read_large`, windows of a few octets) must find the same, and ``part=``, ``char=``
and ``line=`` must answer alike on the small path and the streamed one (the threshold set to 0).
"""

from __future__ import annotations

import base64
import email
import email.policy
import quopri
from email.message import Message
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pdi.mail.large as large
from pdi.errors import PDIError
from pdi.fragments.email import evaluate_email
from pdi.fragments.email_text import body_text
from pdi.mail.large import part_pieces, read_large
from pdi.mail.message import read_message


def _leaves(message: Message) -> list[Message]:
    """The leaves as pdi numbers them: depth first, a multipart entered, anything else one part."""
    if message.get_content_maintype() == "multipart" and message.is_multipart():
        return [leaf for child in cast(list[Message], message.get_payload()) for leaf in _leaves(child)]
    return [message]


_BOUNDARIES = [b" b", b"\xe9t\xe9", b"b\xc3\xa9", b"\xe2\x82\xac", b"L"*130, b"L"*126, b"L"*127 + b" ", b"", b"b", b"bb", b"b b", b"a.b(c)+?", b"=_x", b"'x'", b"b ", b"-", b"--", b"x=y", b"b\t", b"a,b", b"a/b:c"]
@st.composite
def _leaf(draw: Any, eol: bytes) -> bytes:
    head = []
    kind = draw(st.sampled_from([b"text/plain; charset=utf-8", b"text/plain; charset*=utf-8''iso-8859-1",
        b'text/plain; charset="ISO-8859-1 "', b"text/html", b"application/pdf", b"message/rfc822", b"TEXT/Plain",
        b"text/plain; name*0=\"a\"; name*1=\"b.txt\"", b"application/x; name=\"=?utf-8?q?caf=C3=A9.txt?=\"", None]))
    if kind:
        head.append(b"Content-Type: " + kind)
    if draw(st.integers(0, 3)) == 0:
        head.append(draw(st.sampled_from([b"Content-ID: <\xc3\xa9@x>", b"Content-Location: caf\xc3\xa9.html", b"Content-ID: <\xe9@x>",
            b"Content-Type: text/plain; charset=\xc3\xa9", b"Content-Disposition: attachment; filename=\"\xe9t\xe9.txt\"",
            b"Content-Disposition: attachment; filename*=x-unknown''%E9.txt", b"Content-Disposition: attachment; filename*=utf-8''%FF.txt",
            b"Content-Type: text/plain; name*=utf-8'en'%C3%A9.txt; charset=\"utf-8\"", b"content-type: Text/HTML; CHARSET=UTF-8",
            b"Content-Disposition: attachment; filename*0*=utf-8''a; filename*2=c; filename*1=b"])))
    if draw(st.booleans()):
        head.append(draw(st.sampled_from([b"Content-Disposition: attachment; filename*=utf-8''%E2%82%AC.txt",
            b"Content-Disposition: attachment; filename*0*=utf-8''%E2%82; filename*1*=%AC.txt",
            b"Content-Disposition: inline; filename=\"a b.txt\"", b"Content-Disposition: attachment;\r\n filename=x.bin".replace(b"\r\n", eol)])))
    enc = draw(st.sampled_from([b"base64", b"quoted-printable", b"7bit", b"8bit", b"BASE64", b" base64 ", b"x-uue", b"base64 (c)", b"quoted-printable" + eol + b"\t", None]))
    if enc:
        head.append(b"Content-Transfer-Encoding: " + enc)
    payload = draw(st.binary(max_size=120))
    if kind == b"message/rfc822":
        body = b"From: x@y" + eol + b"Subject: inner" + eol + eol + b"hi" + eol
        if enc and enc.strip().lower() == b"base64":
            body = base64.encodebytes(body).replace(b"\n", eol)
    elif enc and enc.strip().lower() == b"base64":
        c = base64.b64encode(payload)
        junk = draw(st.sampled_from([b"", b"!", b" ", b"=", b"*", b"\t"]))
        w = draw(st.sampled_from([76, 3, 5]))
        body = (junk + eol).join(c[i : i + w] for i in range(0, len(c), w))
    elif enc and enc.strip().lower() == b"quoted-printable":
        body = quopri.encodestring(payload).replace(b"\n", eol)
        if draw(st.booleans()):  # soft breaks, a trailing blank
            body += b"=" + eol + b"x= " + eol
    else:
        body = eol.join(draw(st.lists(st.sampled_from([b"text", b"--", b"caf\xe9", b"-- ", b"From x", b""]), max_size=4)))
    return eol.join(head) + eol + eol + body

@st.composite
def _entity(draw: Any, eol: bytes, depth: int) -> bytes:
    if depth >= draw(st.integers(1, 3)) or not draw(st.booleans()):
        return draw(_leaf(eol))
    b = draw(st.sampled_from(_BOUNDARIES))
    sub = draw(st.sampled_from([b"mixed", b"alternative", b"digest", b"related"]))
    quoted = draw(st.sampled_from(["q", "u", "2231", "c"]))
    if quoted == "q" or b.strip() != b or any(ch in b for ch in b" (),/:=?'\t"):
        p = b'boundary="' + b + b'"'
    elif quoted == "2231" and draw(st.booleans()) and max(b, default=0) >= 0x80:
        p = b"boundary*=" + draw(st.sampled_from([b"utf-8", b"", b"iso-8859-1", b"x-unknown"])) + b"''" + b"".join(b"%%%02X" % c for c in b)
    elif quoted == "2231" and draw(st.booleans()):
        p = b"boundary*=''" + b.replace(b" ", b"%20").replace(b"\t", b"%09")
    elif quoted == "2231":
        p = b'boundary*0="' + b[:1] + b'"; boundary*1="' + b[1:] + b'"' if len(b) > 1 else b"boundary=" + b
    else:
        p = b"boundary=" + b
    eb = b.rstrip()  # Python's get_boundary rstrips
    out = b"Content-Type: multipart/" + sub + b";" + draw(st.sampled_from([b" ", eol + b" ", eol + b"\t(comment) "])) + p + eol
    if draw(st.integers(0, 5)) == 0:
        out += b"Content-Type: text/plain" + eol
    out += eol
    out += draw(st.sampled_from([b"", b"preamble" + eol, b"--" + eb + b"x" + eol]))
    for _ in range(draw(st.integers(1, 3))):
        out += b"--" + eb + draw(st.sampled_from([b"", b" ", b"\t"])) + eol + draw(_entity(eol, depth + 1)) + eol
    if draw(st.booleans()):
        out += b"--" + eb + b"--" + eol + draw(st.sampled_from([b"", b"epilogue" + eol]))
    return out

@st.composite
def _message(draw: Any) -> bytes:
    eol = draw(st.sampled_from([b"\r\n", b"\n", b"\r"]))
    head = b"From: a@b" + eol + b"Subject: =?utf-8?q?h=C3=A9?=" + eol + b"MIME-Version: 1.0" + eol
    if draw(st.integers(0, 4)) == 0:
        return head + draw(_leaf(eol))
    return head + draw(_entity(eol, 0))

@settings(max_examples=200)
@given(data=_message(), window=st.integers(2, 64))
def test_property_the_parts_of_a_strangers_message_are_those_python_finds(data: bytes, window: int) -> None:
    python = _leaves(email.message_from_bytes(data, policy=email.policy.default))
    try:
        whole = read_message(data)
    except PDIError:
        with pytest.raises(PDIError):
            read_large(data, window=window)
        return
    expected = [(leaf.get_content_type(), leaf.get_content_charset() if leaf.get_content_maintype() == "text" else None,
                 leaf.get_filename(), leaf.get_content_disposition()) for leaf in python]
    assert [(p.media_type, p.charset, p.filename, p.disposition) for p in whole.parts] == expected
    for part, leaf in zip(whole.parts, python, strict=True):
        if not part.media_type.startswith("message/"):  # (Python decodes none: pdi answers it as the message holds it)
            assert whole.part_octets(part) == (leaf.get_payload(decode=True) or b""), part.index
    by_structure = read_large(data, window=window)
    facts = [(p.media_type, p.charset, p.filename, p.disposition, p.path, p.content_id, p.location)
             for p in by_structure.parts]
    assert facts == [(p.media_type, p.charset, p.filename, p.disposition, p.path, p.content_id, p.location)
                     for p in whole.parts]
    assert by_structure.body_index() == whole.body_index()
    for read_whole, read_so in zip(whole.parts, by_structure.parts, strict=True):
        assert b"".join(part_pieces(data, read_so, window)) == whole.part_octets(read_whole), read_so.index
    assert body_text(by_structure) == body_text(whole)


def _answer(data: bytes, scheme: str, positions: list[object]) -> tuple[object, ...]:
    try:
        result = evaluate_email(scheme, positions, data, "message/rfc822", None)
    except PDIError as exc:
        return (type(exc).__name__,)
    return bytes(result.data), result.media_type, result.charset, result.ranges


@settings(max_examples=100)
@given(data=_message(), asked=st.sampled_from([
    ("part", [0]), ("part", [1]), ("part", [3]), ("char", [0, 5]), ("line", [0, 2]), ("part", ["x.bin"]),
    ("part", ["\u20ac.txt"]), ("part", ["ab.txt"]), ("part", ["caf\u00e9.txt"]), ("part", ["cid:\u00e9@x"]),
    ("part", ["caf\u00e9.html"]), ("part", ["abc"]), ("part", ["\u00e9t\u00e9.txt"]),
]))
def test_property_a_message_answers_alike_read_whole_or_by_its_structure(
        data: bytes, asked: tuple[str, list[object]]) -> None:
    small = _answer(data, *asked)
    with pytest.MonkeyPatch.context() as patched:  # (a fixture's would outlive the examples)
        patched.setattr(large, "STREAMED_FROM", 0)
        streamed = _answer(data, *asked)
    assert small == streamed
