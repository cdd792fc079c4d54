"""A header block whose last line, not its first, begins ``From `` (a misplaced mbox From_ line).

Python's parser (``email.feedparser``, ``_parse_headers``) reads such a line as the body's first line: it unreads
it. Where no empty line follows it (the header block ended by a line that is no header field, or by the entity's
end), the body is then a span of the octets, from that line on, and a message read by its structure
(:func:`pdi.mail.large.read_large`) must answer it as Python's reading of the whole does
(``get_payload(decode=True)``, with ``policy=email.policy.default``). It answered the body from the line after it:
``From x`` was lost from the part, or the whole body when it was the entity's last line.
"""

from __future__ import annotations

import email
import email.policy
from email.message import Message
from typing import cast

from hypothesis import given
from hypothesis import strategies as st

from pdi.fragments.email_text import body_text
from pdi.mail.large import part_pieces, read_large
from pdi.mail.message import read_message


def _leaves(message: Message) -> list[Message]:
    if message.get_content_maintype() == "multipart" and message.is_multipart():
        return [leaf for child in cast(list[Message], message.get_payload()) for leaf in _leaves(child)]
    return [message]


_AFTER = st.sampled_from([b"hello", b"text line", b"-- sig", b"From y"])


@given(eol=st.sampled_from([b"\r\n", b"\n", b"\r"]), fields=st.integers(1, 3), after=st.lists(_AFTER, max_size=3),
       nested=st.booleans(), closed=st.booleans(), window=st.integers(2, 40))
def test_property_a_misplaced_from_line_last_in_a_header_block_is_the_bodys_first_line(
        eol: bytes, fields: int, after: list[bytes], nested: bool, closed: bool, window: int) -> None:
    # the header block's last lines "From x" (and perhaps "From y"), then lines that are no header field: no empty line
    head = [*[b"Content-Type: text/plain; charset=utf-8", b"X-A: 1", b"X-B: 2"][:fields], b"From x"]
    entity = eol.join(head + after) + eol
    if nested:
        data = eol.join([b"From: a@example.org", b"MIME-Version: 1.0", b"Content-Type: multipart/mixed; boundary=b",
                         b"", b"--b", b"Content-Type: text/plain", b"", b"first", b"--b"]) + eol + entity
        data += b"--b--" + eol if closed else b""
    else:
        data = b"From: a@example.org" + eol + entity
    python = _leaves(email.message_from_bytes(data, policy=email.policy.default))
    expected = [(leaf.get_content_type(), leaf.get_payload(decode=True) or b"") for leaf in python]
    assert expected[-1][1].startswith(b"From ")  # the reference reads the last such line as the body's first
    whole = read_message(data)
    by_structure = read_large(data, window=window)
    assert [(p.media_type, whole.part_octets(p)) for p in whole.parts] == expected
    assert [(p.media_type, b"".join(part_pieces(data, p, window))) for p in by_structure.parts] == expected
    assert body_text(by_structure) == body_text(whole)


def test_a_message_whose_header_block_ends_with_a_from_line_has_it_as_its_body() -> None:
    data = b"From: a@example.org\r\nSubject: s\r\nFrom x\r\n"
    expected = email.message_from_bytes(data, policy=email.policy.default).get_payload(decode=True)
    assert expected == b"From x\r\n"
    part = read_large(data, window=4).parts[0]
    assert b"".join(part_pieces(data, part, 4)) == expected


def test_followed_by_the_empty_line_the_whole_reading_is_pythons_and_the_structures_the_rfcs() -> None:
    """docs/email.md §5: the header section runs to the first empty line (RFC 5322 §2.1, §3.5) and a ``From `` line
    is an mbox's envelope line (RFC 4155), so the body follows the empty line, as the structure reads it; the
    whole reading stays Python's (the line pushed back as the body's first, the empty line dropped), whose body
    text names deposited so far count on."""
    data = b"From: a@example.org\r\nSubject: s\r\nFrom x\r\n\r\nbody\r\n"
    python = email.message_from_bytes(data, policy=email.policy.default).get_payload(decode=True)
    assert python == b"From x\r\nbody\r\n"
    whole = read_message(data)
    assert whole.part_octets(whole.parts[0]) == python
    part = read_large(data).parts[0]
    assert part.span is not None and data[part.span[1] :] == b"body\r\n"  # after the header section's empty line
    assert b"".join(part_pieces(data, part)) == b"body\r\n"
