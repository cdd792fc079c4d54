"""A message of more lines than Python's parser is given (``MailLimits.max_lines``, 2,000,000) but of at most
:data:`pdi.mail.large.STREAMED_FROM` octets is deposited and cited, read by its structure as one past that size
is (:func:`pdi.mail.large.by_structure`), where it was refused at deposit (``docs/email.md`` §1, §5).

The first tests lower the lines' bound (to 40) so that a message of some kilobytes takes that path: its every
``part=``, ``char=``, ``line=`` and ``byte=`` answer and ``--info``'s facts are those of the same octets read whole
under the bound of 2,000,000, and each part the octets Python's :mod:`email` decodes, the body's text the text it
reads. The last deposits and cites a message of 4,000,000 short lines, 16 MB, through ``pdi`` in child processes
whose peak resident memory is measured.
"""

from __future__ import annotations

import base64
import email
import email.policy
import functools
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from pdi.archive import Archive, Generic
from pdi.errors import LimitError
from pdi.fragments.email_text import forget_body_texts
from pdi.mail.message import MailLimits, read_message

S = "oma.eop.gov.us"
MIB = 1 << 20
ATTACHMENT = random.Random(5).randbytes(3_000)
FRAGMENTS = ["part=0", "part=1", "part=a%2Ebin", "char=0,12", "char=30,400", "line=3,5", "line=60,90", "byte=10,200"]


def _message(tag: bytes) -> bytes:
    """A text body of 80 short lines and an attachment in base64: some 150 lines in all."""
    coded = base64.b64encode(ATTACHMENT)
    return b"\r\n".join([
        b"From: Ann <ann@example.org>", b"Subject: The lines", b"Message-ID: <" + tag + b"@example.org>",
        b"MIME-Version: 1.0", b'Content-Type: multipart/mixed; boundary="B"', b"", b"--B",
        b"Content-Type: text/plain; charset=utf-8", b"Content-Transfer-Encoding: 8bit", b"",
        *(b"line %d, caf\xc3\xa9" % n for n in range(80)), b"--B",
        b'Content-Type: application/octet-stream; name="a.bin"', b"Content-Transfer-Encoding: base64", b"",
        *(coded[i : i + 60] for i in range(0, len(coded), 60)), b"--B--", b"",
    ])


def _answer(archive: Archive, name: str) -> tuple[Any, ...]:
    found = archive.resolve(name)
    assert not isinstance(found, Generic) and found.fragment is not None
    chosen = found.fragment
    return found.data, found.media_type, found.charset, chosen.ranges, chosen.clamped, chosen.past_end


def _few_lines(monkeypatch: pytest.MonkeyPatch, most: int) -> None:
    """Every reading's default limits with the lines' bound lowered to ``most`` (the rest as they are)."""
    few = functools.partial(MailLimits, max_lines=most)
    monkeypatch.setattr("pdi.mail.message.MailLimits", few)
    monkeypatch.setattr("pdi.mail.large.MailLimits", few)
    forget_body_texts()  # a body's text is kept by its octets' SHA-256: made again, by the other reading


def test_a_message_past_the_lines_bound_is_deposited_and_answered_as_read_whole(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _message(b"whole")
    assert 100 < len(data.splitlines()) < 2_000_000
    name = str(archive.add(S, data, format="rfc822"))
    whole = {f: _answer(archive, f"{name}#{f}") for f in FRAGMENTS}
    facts = archive.message_of(cast(Any, archive.locate(name)).record)

    _few_lines(monkeypatch, 40)
    with pytest.raises(LimitError, match=r"the message has 1\d\d lines, more than the limit of 40"):
        read_message(data)  # the whole reading's bound, which refused the deposit before
    for fragment in FRAGMENTS:
        assert _answer(archive, f"{name}#{fragment}") == whole[fragment], fragment
    assert archive.message_of(cast(Any, archive.locate(name)).record) == facts
    python = email.message_from_bytes(data, policy=email.policy.default)
    text = re.sub(r"\r\n|\r|\n", "\r\n", cast(Any, python.get_body(preferencelist=("plain",))).get_content())
    located = archive.locate(name)
    assert not isinstance(located, Generic)
    assert archive.char_text(located) == text  # what a citation's, a quote's, a text directive's check counts in

    # deposited so (another message: the same octets the same day are "unchanged"), each answer Python's email's
    other = _message(b"lines")
    named = str(archive.add(S, other, format="rfc822"))
    python = email.message_from_bytes(other, policy=email.policy.default)
    leaves = [p for p in python.walk() if not p.is_multipart()]
    for number, leaf in enumerate(leaves):
        found = _answer(archive, f"{named}#part={number}")
        assert found[:2] == (leaf.get_payload(decode=True), leaf.get_content_type())
    assert _answer(archive, f"{named}#part=1")[0] == ATTACHMENT
    text = re.sub(r"\r\n|\r|\n", "\r\n", cast(Any, python.get_body(preferencelist=("plain",))).get_content())
    assert _answer(archive, f"{named}#char=30,400")[0] == text[30:400].encode()
    lines = text.splitlines(keepends=True)  # (no line end but CR LF in it: lines as RFC 5147 counts them)
    assert _answer(archive, f"{named}#line=60,90")[0] == "".join(lines[60:90]).encode()
    assert _answer(archive, f"{named}#byte=10,200")[0] == other[10:200]


def test_the_page_of_a_message_past_the_lines_bound_shows_its_fields_parts_and_body(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    import html

    from pdi.server.pages.viewer import render_view

    data = _message(b"page")
    name = str(archive.add(S, data, format="rfc822"))
    _few_lines(monkeypatch, 40)
    page = render_view(archive, f"{name}#part=1")
    assert "<bdi>The lines</bdi>" in page and "Ann &lt;ann@" in page
    assert "part 0</a>: text/plain" in page and "part 1</a>: application/octet-stream" in page
    assert "The name asked for names part 1 of this message" in page
    python = email.message_from_bytes(data, policy=email.policy.default)
    body = cast(Any, python.get_body(preferencelist=("plain",))).get_content()
    assert all(html.escape(line) in page for line in body.splitlines())  # its body's text, every line of it


def test_a_message_of_millions_of_short_lines_is_deposited_and_cited_in_bounded_memory(tmp_path: Path) -> None:
    """4,000,000 lines of ``ab`` (16 MB): Python's parser would keep each as an object of its own (28 MB of them
    took 900 MB), so it is read by its structure, its body's octets alone held; each command peaks less than
    nine times the message's size above the same command on a message of ten lines (``docs/email.md`` §1,
    "Memory"). Before, its deposit was refused (``the message has 4,000,004 lines``)."""
    from peak_memory import run_with_peak

    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
    head = b"From: a@example.org\r\nSubject: lines\r\nMessage-ID: <%s@example.org>\r\n\r\n"
    files = {"small": head % b"small" + b"ab\r\n" * 10, "short": head % b"short" + b"ab\r\n" * 4_000_000}
    size = len(files["short"])
    assert len(files["short"].splitlines()) > 2_000_000 and size < 32 * MIB
    peaks: dict[str, dict[str, int]] = {}
    said: dict[str, dict[str, bytes]] = {}
    for tag, data in files.items():
        path = tmp_path / f"{tag}.eml"
        path.write_bytes(data)
        base = [sys.executable, "-m", "pdi"]
        status, added, out = run_with_peak([*base, "add", "--archive", str(location), "-s", S, str(path)],
                                           stdout=subprocess.PIPE)
        assert status == 0
        name = out.decode().strip()
        peaks[tag], said[tag] = {"add": added}, {}
        for command, argv in (("line", ["get", f"{name}#line=4,6"]), ("part", ["get", f"{name}#part=0"]),
                              ("info", ["get", "--info", name])):
            status, peaks[tag][command], said[tag][command] = run_with_peak(
                [*base, *argv[:1], "--archive", str(location), *argv[1:]], stdout=subprocess.PIPE)
            assert status == 0, command
    # the body is its octets as written (7bit): lines 4 and 5 of its text, part 0 the whole body
    assert said["short"]["line"] == b"ab\r\nab\r\n"
    assert said["short"]["part"] == b"ab\r\n" * 4_000_000
    assert b"body\tpart 0 (text/plain): 16000000 characters of body text" in said["short"]["info"]
    for command, peak in peaks["short"].items():
        grown = (peak - peaks["small"][command]) * 1024
        assert grown < 9 * size, f"pdi {command} peaked {grown / MIB:.0f} MiB above a small message's"
