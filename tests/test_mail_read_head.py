"""A message's header fields read from its first octets alone (:func:`pdi.mail.message.read_head`), whatever its line ends.

What a list of messages shows of each is read from its header fields, never its body: a body of many delimiter lines
(past ``max_delimiters``) or many lines must not refuse it. The header block ended only at ``\\n\\n`` or
``\\r\\n\\r\\n``, so that a message of CR line ends, or whose empty line ends otherwise than its fields' lines, was read
body and all, and refused for what its body holds. The independent reference is Python's header parser
(``email.parser.BytesHeaderParser``, ``email.policy.default``) on the whole message: the fields it reads.
"""

from __future__ import annotations

import email.parser
import email.policy
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pdi.mail.message import MailLimits, read_head, thread_ids

_EOL = st.sampled_from([b"\r\n", b"\n", b"\r"])
_FIELDS = st.sampled_from([b"Subject: hello", b"Message-ID: <m@example.org>", b"In-Reply-To: <p@example.org>",
                           b"To: b@example.org", b"X-Long: a", b" folded on", b"\tand on"])


@st.composite
def _message(draw: Any) -> bytes:
    fields = [b"From: a@example.org", *draw(st.lists(_FIELDS, max_size=6)),
              b'Content-Type: multipart/mixed; boundary="b"']
    head = b"".join(field + draw(_EOL) for field in fields)
    end = draw(st.sampled_from([b"", b"no field here"]))  # the block ends at an empty line, or at a line that is none
    body = b"".join(b"--b" + draw(_EOL) for _ in range(draw(st.integers(4, 8))))  # past max_delimiters=3
    return head + end + draw(_EOL) + body


@settings(max_examples=300)
@given(_message())
@example(b'From: a@example.org\rSubject: hello\rContent-Type: multipart/mixed; boundary="b"\r\r' + b"--b\r" * 5)
@example(b'From: a@example.org\nSubject: hello\nContent-Type: multipart/mixed; boundary="b"\n\r\n' + b"--b\n" * 5)
def test_the_header_fields_are_read_without_the_body_whatever_the_line_ends(data: bytes) -> None:
    python = email.parser.BytesHeaderParser(policy=email.policy.default).parsebytes(data)
    mail = read_head(data, MailLimits(max_delimiters=3))
    assert [(name, " ".join(str(value).split())) for name, value in mail.message.raw_items()] == [
        (name, " ".join(str(value).split())) for name, value in python.raw_items()]
    assert mail.header("Subject") == (" ".join(str(python["Subject"]).split()) if "Subject" in python else None)
    assert thread_ids(data).message_id == mail.message_id
