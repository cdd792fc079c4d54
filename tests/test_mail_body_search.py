"""The part a message's body text is read from, where a multipart nested in another is read as a leaf.

Python's parser reads a multipart with no delimiter line of its own (or a close delimiter first) as a leaf: its
payload is its body's text, not a list of parts. Its ``get_body`` then went into that text as if it were the
parts: a ``multipart/related`` so read, nested in a multipart, had its first character taken as its start part
(``AttributeError: 'str' object has no attribute 'is_attachment'``; with a ``start`` parameter, ``TypeError``), so
that a stranger's message of a few lines could not be shown, cited or indexed. Of a ``multipart/mixed`` or
``multipart/alternative`` so read it finds nothing. The independent reference here is Python's ``get_body`` on the
same octets with each such multipart's media type renamed one Python reads as a leaf of no text
(``application/x-leaf``): such a part holds no body, and the rest of the search is Python's.
"""

from __future__ import annotations

import email
import email.policy
from email.message import Message
from typing import Any, cast

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pdi.fragments.email_text import body_text
from pdi.mail.large import read_large
from pdi.mail.message import read_message

_LEAF = b"Content-Type: multipart/%s; boundary=\"in\"%s\n"


@st.composite
def _child(draw: Any, number: int) -> tuple[bytes, bytes]:
    """A part of the top multipart, and the same octets as the reference reads them."""
    kind = draw(st.sampled_from(["plain", "html", "attachment", "leaf", "leaf", "nested"]))
    if kind == "plain":
        part = b"Content-Type: text/plain\n\nplain %d\n" % number
    elif kind == "html":
        part = b"Content-Type: text/html\n\n<p>html %d</p>\n" % number
    elif kind == "attachment":
        part = b"Content-Type: text/plain\nContent-Disposition: attachment\n\nfile %d\n" % number
    elif kind == "nested":
        part = (b"Content-Type: multipart/alternative; boundary=\"n%d\"\n\n--n%d\nContent-Type: text/plain\n\n"
                b"nested %d\n--n%d--\n" % (number, number, number, number))
    else:  # a multipart Python reads as a leaf: no delimiter line of its own, or a close delimiter first
        subtype = draw(st.sampled_from([b"related", b"mixed", b"alternative"]))
        start = draw(st.sampled_from([b"", b'; start="<s@x>"']))
        body = draw(st.sampled_from([b"pre %d\n" % number, b"pre\n--in--\n", b"--in--\n", b"\n"]))
        head = _LEAF % (subtype, start)
        renamed = b"Content-Type: application/x-leaf\n"
        return head + b"\n" + body, renamed + b"\n" + body
    return part, part


@st.composite
def _message(draw: Any) -> tuple[bytes, bytes]:
    """A message whose top multipart holds some parts, some of them multiparts read as leaves; and its reference."""
    subtype = draw(st.sampled_from([b"mixed", b"alternative", b"related"]))
    children = [draw(_child(number)) for number in range(draw(st.integers(1, 4)))]
    head = b"From: a@example.org\nContent-Type: multipart/%s; boundary=\"top\"\n\n" % subtype
    data = head + b"".join(b"--top\n" + part for part, _ in children) + b"--top--\n"
    reference = head + b"".join(b"--top\n" + part for _, part in children) + b"--top--\n"
    return data, reference


def _leaves(message: Message) -> list[Message]:
    if message.get_content_maintype() == "multipart" and message.is_multipart():
        return [leaf for child in message.get_payload() for leaf in _leaves(cast(Message, child))]
    return [message]


@settings(max_examples=300)
@given(_message())
@example((b"From: a@b\nContent-Type: multipart/mixed; boundary=\"top\"\n\n--top\n"
          b"Content-Type: multipart/related; boundary=\"in\"\n\npre\n--top--\n",
          b"From: a@b\nContent-Type: multipart/mixed; boundary=\"top\"\n\n--top\n"
          b"Content-Type: application/x-leaf\n\npre\n--top--\n"))
def test_a_multipart_read_as_a_leaf_holds_no_body_and_the_search_goes_on_as_pythons(
        messages: tuple[bytes, bytes]) -> None:
    data, reference = messages
    python = email.message_from_bytes(reference, policy=email.policy.default)
    found = cast(Any, python).get_body(preferencelist=("plain", "html"))
    expected = next((i for i, leaf in enumerate(_leaves(python)) if leaf is found), None)
    for mail in (read_message(data), read_large(data, window=5)):
        assert mail.body_index() == expected
        text = body_text(mail)
        if expected is None:
            assert text == ""
        elif found.get_content_subtype() == "plain":
            assert text == found.get_content().replace("\n", "\r\n")
        else:
            assert text == found.get_content().replace("<p>", "").replace("</p>", "").strip()
