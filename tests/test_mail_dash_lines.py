"""Lines that begin ``--`` in an e-mail (``MailLimits.max_delimiters``, docs/email.md §1): only a multipart's own
boundary delimiter lines are counted, so a patch or a log in a text part, however many of its lines begin ``--``, is
kept and read by passage, read whole or by its structure alike, while a stranger's 30,000 delimiter lines are refused
naming where the first past the limit is."""

from __future__ import annotations

import email
import email.policy

import pytest

from pdi.errors import LimitError
from pdi.fragments.email import evaluate_email
from pdi.fragments.email_text import body_text
from pdi.mail.large import read_large
from pdi.mail.message import read_message

HEAD = b'From: dev@example.org\r\nSubject: [PATCH] many files\r\nMessage-ID: <patch@example.org>\r\n'


def _patch(files: int) -> bytes:
    """A ``git format-patch`` of ``files`` files: each a ``diff --git`` header, ``---``/``+++`` lines, a hunk with a
    removed line that starts ``--`` itself (a SQL comment); three lines that begin ``--`` a file, and the ``-- ``
    signature line."""
    out = bytearray(b"Many files changed.\n\n---\n")
    for k in range(files):
        out += (b"diff --git a/db/m%05d.sql b/db/m%05d.sql\nindex 3b18e51..a2c4f7e 100644\n--- a/db/m%05d.sql\n"
                b"+++ b/db/m%05d.sql\n@@ -1,2 +1,2 @@\n--- drop the old table\n+-- keep the old table\n"
                b" SELECT 1;\n" % (k, k, k, k))
    return bytes(out + b"-- \n2.43.0\n")


def _message(patch: bytes, attachment: bytes = b"") -> bytes:
    return (HEAD + b'Content-Type: multipart/mixed; boundary="==patch=="\r\n\r\n--==patch==\r\n'
            b"Content-Type: text/plain; charset=utf-8\r\n\r\n" + patch + b"\r\n--==patch==\r\n"
            b"Content-Type: application/octet-stream\r\n\r\n" + attachment + b"\r\n--==patch==--\r\n")


def _python_text(data: bytes) -> str:
    """The body's text as Python's email decodes it, its line ends written CR LF (RFC 5147 §4.1)."""
    body = email.message_from_bytes(data, policy=email.policy.default).get_body(("plain",))
    assert body is not None
    return body.get_payload(decode=True).decode("utf-8").replace("\r\n", "\n").replace("\n", "\r\n")


def test_a_patch_of_30000_lines_that_begin_dashes_is_kept_and_read_by_passage_whole_or_by_structure() -> None:
    patch = _patch(15_000)
    assert patch.count(b"\n--") >= 30_000  # the limit was 20,000 such lines in all
    data = _message(patch)
    text = _python_text(data)
    last = text.rindex("--- a/db/m14999.sql")
    whole, large = read_message(data), read_large(data, window=4096)
    assert [p.media_type for p in whole.parts] == [p.media_type for p in large.parts] == [
        "text/plain", "application/octet-stream"]
    assert body_text(whole) == body_text(large) == text
    passage = evaluate_email("char", [last, last + 19], data, "message/rfc822", None)
    assert passage.data == text[last : last + 19].encode() == b"--- a/db/m14999.sql"


def test_a_patch_past_32_mib_is_kept_and_its_passage_read_by_the_archive(tmp_path: object) -> None:
    """Deposited past :data:`pdi.mail.large.STREAMED_FROM`, read by its structure at deposit and at each passage."""
    from pathlib import Path

    from pdi.archive import Archive

    assert isinstance(tmp_path, Path)
    data = _message(_patch(15_000), b"z" * (33 << 20))
    text = _python_text(data)
    last = text.rindex("+-- keep the old table")
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series("mail.example.us")
        name = str(archive.add("mail.example.us", data, format="rfc822"))
        assert archive.resolve(f"{name}#char={last},{last + 22}").data == b"+-- keep the old table"


def test_30000_delimiter_lines_are_refused_naming_the_first_past_the_limit_whole_or_by_structure() -> None:
    """Each a delimiter of the open multipart (consecutive ones make no part, but each is read as one): the
    20,001st refused, where it is; and in a part's multipart, naming the part."""
    start = len(HEAD + b'Content-Type: multipart/mixed; boundary="==patch=="\r\n\r\n')
    attack = HEAD + b'Content-Type: multipart/mixed; boundary="==patch=="\r\n\r\n' + b"--==patch==\r\n" * 30_000
    nested = (HEAD + b'Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\n\r\nfirst\r\n--B\r\n'
              b'Content-Type: multipart/alternative; boundary="C"\r\n\r\n' + b"--Cx\r\n" * 30_000 + b"--B--\r\n")
    inner = nested.index(b"--Cx") - 3 * 6  # the outer multipart's three delimiter lines are counted first
    for read in (read_message, read_large):
        with pytest.raises(LimitError, match=f"more than 20,000 boundary delimiter lines .* the first past it at offset"
                                             f" {start + 20_000 * 13}, in the message's body"):
            read(attack)
        with pytest.raises(LimitError, match=f"at offset {inner + 20_000 * 6}, in the body of part 1$"):
            read(nested)


def test_parts_past_the_limit_are_refused_as_the_parser_makes_them_naming_the_first() -> None:
    """3,000 parts: the 1,001st entity refused as Python's parser attaches it (it made them all, then they were
    counted), naming its part; as a message read by its structure names it."""
    data = HEAD + b'Content-Type: multipart/mixed; boundary="B"\r\n\r\n' + b"--B\r\n\r\nx\r\n" * 3000 + b"--B--\r\n"
    for read in (read_message, read_large):
        with pytest.raises(LimitError, match=r"more than 1,000 entities .*: part 999 is past it"):
            read(data)


def test_multiparts_nested_around_a_patch_are_read_within_four_readings_or_refused_naming_where() -> None:
    """A patch in a text part of a multipart/alternative in a multipart/mixed is kept (its body searched twice);
    30 multiparts nested one in another around it would search it 30 times: refused past four readings of the
    message, naming the multipart, read whole or by its structure alike."""
    lines = b"--- x\r\n" * 30_000

    def nested(levels: int) -> bytes:
        heads = b"".join(b"Content-Type: multipart/mixed; boundary=b%d\r\n\r\n--b%d\r\n" % (k, k) for k in range(levels))
        return HEAD + heads + b"Content-Type: text/plain\r\n\r\n" + lines

    for read in (read_message, read_large):
        assert body_text(read(nested(2))) == lines[:-2].decode()  # (no close delimiter: its last line end is not its)
        with pytest.raises(LimitError, match=r"would be searched for in more than 4 readings of its octets: refused at"
                                             r" the body of part 0(\.0)*"):
            read(nested(30))
