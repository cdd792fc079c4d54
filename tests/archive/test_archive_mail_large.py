"""A message past :data:`pdi.mail.large.STREAMED_FROM` is answered by its structure, by verified chunks, as the same
octets are answered read whole: every ``part=``, ``char=``, ``line=`` and ``byte=`` the same (octets, media type,
charset, ranges), a part streamed the same octets, ``--info``'s facts the same; and each part the octets Python's
:mod:`email` decodes (``get_payload(decode=True)``), the independent reference.

The threshold is lowered here (to 100 octets) so that a message of some kilobytes takes the large path; the
server's test (``tests/server/test_server_email_large.py``) reads a message of 60 MB through ``pdi serve``.
"""

from __future__ import annotations

import base64
import email
import email.policy
import random
import re
from typing import Any, cast

import pytest

from pdi.archive import Archive, Generic
from pdi.errors import LimitError, NotFoundError

S = "oma.eop.gov.us"

ATTACHMENT = random.Random(3).randbytes(20_000)


def _message() -> bytes:
    coded = base64.b64encode(ATTACHMENT)
    return b"\r\n".join([
        b"From: Ann <ann@example.org>", b"Subject: The scan", b"Message-ID: <scan@example.org>", b"MIME-Version: 1.0",
        b'Content-Type: multipart/mixed; boundary="OUT"', b"", b"--OUT",
        b'Content-Type: multipart/alternative; boundary="ALT"', b"", b"--ALT",
        b"Content-Type: text/plain; charset=iso-8859-1", b"Content-Transfer-Encoding: quoted-printable", b"",
        b"Thanks,=0D=0Ahere is the r=E9sum=E9 and a line that goes on and on =", b"and on.", b"--ALT",
        b"Content-Type: text/html; charset=utf-8", b"", b"<p>Thanks, here is the <b>r\xc3\xa9sum\xc3\xa9</b>.</p>",
        b"--ALT--", b"", b"--OUT", b"Content-Type: image/png", b'Content-Disposition: attachment; filename="scan.png"',
        b"Content-ID: <scan@x.org>", b"Content-Transfer-Encoding: base64", b"",
        *(coded[i:i + 76] for i in range(0, len(coded), 76)), b"--OUT--", b"",
    ])


FRAGMENTS = ["part=0", "part=1", "part=2", "part=cid:scan%40x%2Eorg", "part=scan%2Epng", "char=0,10", "char=7,2000",
             "line=1,2", "byte=10,200"]


def _answer(archive: Archive, name: str) -> tuple[Any, ...]:
    found = archive.resolve(name)
    assert not isinstance(found, Generic) and found.fragment is not None
    chosen = found.fragment
    return found.data, found.media_type, found.charset, chosen.ranges, chosen.clamped, chosen.past_end, str(found.pdi)


def test_a_large_message_is_answered_as_the_same_octets_read_whole(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _message()
    name = str(archive.add(S, data, format="rfc822"))
    whole = {f: _answer(archive, f"{name}#{f}") for f in FRAGMENTS}
    facts = archive.message_of(cast(Any, archive.locate(name)).record)
    assert archive.locate_message_part(cast(Any, archive.locate(f"{name}#part=2"))) is None  # read whole: no stream

    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
    for fragment in FRAGMENTS:
        assert _answer(archive, f"{name}#{fragment}") == whole[fragment], fragment
    assert archive.message_of(cast(Any, archive.locate(name)).record) == facts
    for fragment in FRAGMENTS[:5]:
        located = archive.locate(f"{name}#{fragment}")
        assert not isinstance(located, Generic)
        part = archive.locate_message_part(located)
        assert part is not None
        octets, media_type, charset, ranges, *_ = whole[fragment]
        assert b"".join(part.pieces()) == octets and part.size == len(octets)
        assert (part.resolved.media_type, part.resolved.charset) == (media_type, charset)
        assert part.resolved.fragment is not None and part.resolved.fragment.ranges == ranges

    # Python's email, the independent reference: each leaf's octets and the body's text
    python = email.message_from_bytes(data, policy=email.policy.default)
    leaves = [p for p in python.walk() if not p.is_multipart()]
    assert [whole[f"part={i}"][0] for i in range(3)] == [p.get_payload(decode=True) for p in leaves]
    assert whole["part=2"][0] == ATTACHMENT
    body = cast(Any, python.get_body(preferencelist=("plain", "html"))).get_content()
    assert whole["char=0,10"][0] == re.sub(r"\r\n|\r|\n", "\r\n", body)[:10].encode()  # CRLF-canonical


def test_a_large_messages_refusals_name_what_is_wrong(archive: Archive, monkeypatch: pytest.MonkeyPatch) -> None:
    name = str(archive.add(S, _message(), format="rfc822"))
    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
    with pytest.raises(NotFoundError, match="part=7: the message has 3 parts, numbered from 0"):
        archive.resolve(f"{name}#part=7")
    monkeypatch.setattr("pdi.mail.large.MAX_BODY_OCTETS", 10)
    # its body as written: a line of 68 octets, CR LF, "and on." (7)
    with pytest.raises(LimitError, match=r"the message's body \(part 0, text/plain\) is 77 octets as written"):
        archive.resolve(f"{name}#char=0,10")
    info = archive.message_of(cast(Any, archive.locate(name)).record)
    assert info is not None and info["body"]["characters"] is None


def test_a_part_located_again_is_not_found_and_decoded_again(archive: Archive, monkeypatch: pytest.MonkeyPatch) -> None:
    """Locating a large message's part reads its structure and maps the part to learn its size; the same part
    asked again (a ``304``, a ``HEAD``, another reader) pays neither, and still streams the same octets, checked
    as they are read."""
    import pdi.archive.record_facts
    import pdi.fragments.email
    import pdi.mail.large

    # a process's memo is by the message's SHA-256, whatever archive holds it: another test's deposit of the same
    # octets must not have located the part already
    monkeypatch.setattr(pdi.archive.record_facts, "_PARTS", pdi.archive.record_facts._Kept(256))
    data = _message()
    name = str(archive.add(S, data, format="rfc822"))
    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
    calls: list[str] = []
    find, mapped = pdi.fragments.email.find_large_part, pdi.mail.large.part_map
    monkeypatch.setattr(pdi.fragments.email, "find_large_part", lambda *a: calls.append("find") or find(*a))
    monkeypatch.setattr(pdi.mail.large, "part_map", lambda *a: calls.append("size") or mapped(*a))
    located = archive.locate(f"{name}#part=2")
    assert not isinstance(located, Generic)
    first = archive.locate_message_part(located)
    again = archive.locate_message_part(located)
    assert first is not None and again is not None
    assert calls == ["find", "size"]
    assert b"".join(again.pieces()) == ATTACHMENT and again.size == len(ATTACHMENT) == first.size


def test_a_large_messages_uuencoded_part_is_answered_as_read_whole(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part in ``x-uuencode`` (refused past the threshold before): ``part=`` and its stream give the octets Python
    decodes, as a small message's reading does; one Python answers as written (an empty line inside) as written."""
    import binascii

    lines = [binascii.b2a_uu(ATTACHMENT[k : k + 45]).rstrip(b"\n") for k in range(0, len(ATTACHMENT), 45)]
    bodies = {"ok": [b"begin 644 scan.bin", *lines, b"`", b"end"],
              "as written": [b"begin 644 scan.bin", *lines[:100], b"", *lines[100:], b"end"]}
    for tag, body in bodies.items():
        data = _message().replace(b"Content-Transfer-Encoding: base64", b"Content-Transfer-Encoding: x-uuencode")
        data = data[: data.index(b"x-uuencode") + 14] + b"\r\n".join(body) + b"\r\n--OUT--\r\n"
        python = email.message_from_bytes(data, policy=email.policy.default)
        expected = [p for p in python.walk() if not p.is_multipart()][2].get_payload(decode=True)
        assert (expected == ATTACHMENT) == (tag == "ok")
        name = str(archive.add(S, data, format="rfc822", foreign_id=tag))
        monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 1 << 20)
        assert archive.resolve(f"{name}#part=2").data == expected  # read whole
        monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
        assert archive.resolve(f"{name}#part=2").data == expected
        located = archive.locate(f"{name}#part=2")
        assert not isinstance(located, Generic)
        part = archive.locate_message_part(located)
        assert part is not None and part.size == len(expected) and b"".join(part.pieces()) == expected
        assert b"".join(part.range_pieces(5_000, 5_100)) == expected[5_000:5_100]
