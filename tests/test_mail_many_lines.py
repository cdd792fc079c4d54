"""A message of more lines than Python's parser is given (``MailLimits.max_lines``) is read by its structure
(:func:`pdi.mail.large.by_structure`, :func:`pdi.mail.large.read_mail`), whatever its size, as one past
:data:`pdi.mail.large.STREAMED_FROM` is: not refused below that size and read past it (``docs/email.md`` §1, §5).

The lines' bound is lowered here (``MailLimits(max_lines=…)``) so that a message of a few lines takes the path a
message of millions does; the independent references are :meth:`bytes.splitlines` (the lines, as Python's parser
cuts them) and Python's :mod:`email` reading the same octets whole (each leaf's media type, file name and decoded
octets, the body ``get_body(("plain", "html"))`` finds and its text).
"""

from __future__ import annotations

import base64
import email
import email.policy
import quopri
import re
from email.message import Message
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.errors import LimitError
from pdi.fragments.email_text import body_text, large_body_text
from pdi.mail.large import by_structure, part_octets, read_mail
from pdi.mail.message import MailLimits, line_count, more_lines_than, read_message

# --- the lines, counted a window at a time as Python's parser cuts them -----------------------------------------

_OCTETS = st.lists(st.sampled_from([b"\r", b"\n", b"\r\n", b"a", b"bc", b" "]), max_size=40).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(_OCTETS, st.integers(1, 8))
def test_property_lines_are_counted_in_windows_as_bytes_splitlines_cuts_them(data: bytes, window: int) -> None:
    """A CR LF cut by a window's end is one line end; a last line without one is a line."""
    assert line_count(data, window) == len(data.splitlines())


@settings(max_examples=300, deadline=None)
@given(_OCTETS, st.integers(0, 45), st.integers(1, 8))
def test_property_more_lines_than_a_bound_is_told_as_bytes_splitlines_counts_them(
    data: bytes, most: int, window: int,
) -> None:
    """Told from the LF and CR alone where they decide it, else from the lines counted."""
    assert more_lines_than(data, most, window) is (len(data.splitlines()) > most)


# --- which reading: the lines' bound, then the reading Python's email agrees with ------------------------------

_EOL = st.sampled_from([b"\r\n", b"\n"])
_LINE = st.text(alphabet="ab -é=.", max_size=12)


@st.composite
def _message(draw: Any) -> bytes:
    """A text body of short lines (its transfer encoding drawn), an attachment or none, CR LF or LF."""
    eol = draw(_EOL)
    text = "\n".join(draw(st.lists(_LINE, min_size=1, max_size=30))).encode("utf-8")
    encoding = draw(st.sampled_from(["8bit", "quoted-printable", "base64"]))
    if encoding == "base64":
        coded = base64.b64encode(text)
        body = eol.join(coded[i : i + 8] for i in range(0, len(coded), 8))
    elif encoding == "quoted-printable":
        body = quopri.encodestring(text).replace(b"\n", eol)
    else:
        body = text.replace(b"\n", eol)
    leaf = eol.join([b"Content-Type: text/plain; charset=utf-8", b"Content-Transfer-Encoding: " + encoding.encode(),
                     b"", body])
    head = eol.join([b"From: a@example.org", b"Subject: lines", b"MIME-Version: 1.0"]) + eol
    attachment = draw(st.one_of(st.none(), st.binary(max_size=90)))
    if attachment is None:
        return head + leaf
    coded = base64.b64encode(attachment)
    return head + eol.join([
        b'Content-Type: multipart/mixed; boundary="B"', b"", b"--B", leaf, b"--B",
        b'Content-Type: application/octet-stream; name="a.bin"', b"Content-Transfer-Encoding: base64", b"",
        *(coded[i : i + 4] for i in range(0, len(coded), 4)), b"--B--", b"",
    ])


def _python(data: bytes) -> tuple[list[tuple[Any, ...]], str]:
    """Python's email on the whole: each leaf's media type, file name and decoded octets; the body's text."""
    message = email.message_from_bytes(data, policy=email.policy.default)
    leaves = [p for p in message.walk() if not cast(Message, p).is_multipart()]
    body = cast(Any, message).get_body(preferencelist=("plain", "html"))
    text = re.sub(r"\r\n|\r|\n", "\r\n", body.get_content())  # the body text is CRLF-canonical (docs/email.md §2)
    return [(p.get_content_type(), p.get_filename(), p.get_payload(decode=True)) for p in leaves], text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_message(), st.integers(0, 8))
def test_property_a_message_past_the_lines_bound_is_read_by_its_structure_as_python_reads_it(
    data: bytes, below: int,
) -> None:
    lines = len(data.splitlines())  # the oracle: as Python's parser cuts them
    limits = MailLimits(max_lines=max(1, lines - below))
    past = lines > limits.max_lines
    assert by_structure(data, limits) is past
    if past:
        with pytest.raises(LimitError, match=f"the message has {lines:,} lines, more than the limit"):
            read_message(data, limits)  # the whole reading's own bound stands
    mail = read_mail(data, limits)
    assert mail.by_structure is past
    parts, text = _python(data)
    octets = [part_octets(data, p) if past else mail.part_octets(p) for p in mail.parts]
    assert [(p.media_type, p.filename, o) for p, o in zip(mail.parts, octets, strict=True)] == parts
    assert (large_body_text(data, mail) if past else body_text(mail)) == text
    assert mail.header("Subject") == "lines"


def test_a_message_of_few_octets_never_has_its_lines_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line is at least one octet: a message of no more octets than the bound has no more lines."""
    import pdi.mail.message

    monkeypatch.setattr(pdi.mail.message, "_pieces", lambda *_: pytest.fail("counted"))
    data = b"From: a@example.org\n\n" + b"\n" * 20
    assert not by_structure(data, MailLimits(max_lines=len(data)))
    assert read_mail(data, MailLimits(max_lines=len(data))).by_structure is False


def test_a_message_past_streamed_from_is_read_by_its_structure_whatever_its_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 30)
    data = b"From: a@example.org\r\n\r\n" + b"one line of text\r\n"
    assert len(data.splitlines()) == 3 and by_structure(data)
    assert read_mail(data).by_structure and read_mail(data).parts[0].span == (0, 23, 41)


def test_a_body_too_long_for_its_text_in_a_message_of_many_lines_is_refused_saying_the_lines() -> None:
    """A message under 32 MiB read by its structure for its lines (2,100,000 of 9 octets: 18.9 MB) whose body is more
    than the 16 MiB whose text pdi reads: the refusal says it is read so for its lines, which its size, below the
    size read so, does not tell its reader (found by a review, 2026-12-01: it said only "a message of 18,900,060
    octets")."""
    data = b"From: a@example.org\r\nSubject: lines\r\n\r\n" + b"abcdefgh\n" * 2_100_000
    assert 16 << 20 < len(data) < 32 << 20
    with pytest.raises(LimitError, match=r"whose text pdi reads in a message of more than 2,000,000 lines \(read by its"
                                         r" structure, as one of more than 33,554,432 octets is\)"):
        large_body_text(data)
