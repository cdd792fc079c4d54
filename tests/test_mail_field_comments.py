"""Comments nested in a field of a message's MIME structure: read within a bound, or refused naming the field.

Python parses ``Content-Type``, ``Content-Disposition`` and ``Content-Transfer-Encoding`` each time one is read (the
parser, ``get_content_type``, ``get_body``), recursing once for each comment (RFC 5322 §3.2.2) nested in another:
a field of some 1,000 ``(`` (within the 4,096 octets a field may hold) raised ``RecursionError`` from reading a
stranger's message, or was refused as entities nested too deep ("part 0 is 0 deep"). The independent reference
for how deep a value's comments nest is Python's own parse of it, run here with room to recurse.
"""

from __future__ import annotations

import email.headerregistry
import email.policy
import sys
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pdi.errors import LimitError
from pdi.fragments.email_text import body_text
from pdi.mail.large import read_large
from pdi.mail.message import read_message
from pdi.mail.parser import MAX_COMMENT_DEPTH, MAX_FIELD_MARKS

_FIELDS = ["Content-Type", "Content-Disposition", "Content-Transfer-Encoding"]
_VALUES = {"Content-Type": "text/plain; charset=utf-8 ", "Content-Disposition": "attachment; filename=a.txt ",
           "Content-Transfer-Encoding": "7bit "}


def _message(name: str, value: str, nested: bool) -> bytes:
    field = f"{name}: {value}".encode("ascii")
    if not nested:
        return b"From: a@example.org\nSubject: s\n" + field + b"\n\nbody\n"
    return (b"From: a@example.org\nContent-Type: multipart/mixed; boundary=\"b\"\n\n--b\n" + field
            + b"\n\nbody\n--b--\n")


def _python_depth(name: str, value: str) -> int:
    """How deep Python's parse of the field's value nests its comments (with room to recurse)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 20_000)
    try:
        header = email.policy.default.header_factory(name, value)
    finally:
        sys.setrecursionlimit(limit)
    stack: list[tuple[Any, int]] = [(getattr(header, "_parse_tree", None), 0)]
    deepest = 0
    while stack:
        token, depth = stack.pop()
        if token is None or isinstance(token, str):
            continue
        if getattr(token, "token_type", None) == "comment":
            depth += 1
            deepest = max(deepest, depth)
        stack.extend((child, depth) for child in token if not isinstance(token, str))
    return deepest


@pytest.mark.parametrize("name", _FIELDS)
@pytest.mark.parametrize("nested", [False, True])
def test_a_field_of_a_thousand_nested_comments_is_refused_naming_it_read_whole_or_by_structure(
        name: str, nested: bool) -> None:
    value = _VALUES[name] + "(" * 1000 + "x" + ")" * 1000
    assert _python_depth(name, value) == 1000  # the reference agrees with the value written
    data = _message(name, value, nested)
    with pytest.raises(LimitError, match=rf"^line {5 if nested else 3}: the {name} field has comments nested 1,000"
                                         rf" deep, more than the {MAX_COMMENT_DEPTH} pdi reads"):
        read_message(data)
    where = "part 0's" if nested else "the message's"
    with pytest.raises(LimitError, match=rf"^{where} {name} field \(its header block at offset \d+\) has comments"
                                         r" nested 1,000 deep"):
        read_large(data, window=7)


_PIECES = st.sampled_from(["(", "(", "(", ")", "\\(", "\\)", "\\", '"', "x", " ", ";", "=", "a=", "*"])


@settings(max_examples=300)
@given(st.sampled_from(_FIELDS), st.lists(_PIECES, max_size=120).map("".join), st.booleans())
@example("Content-Type", "(" * (MAX_COMMENT_DEPTH + 1), False)
@example("Content-Type", "(" * MAX_COMMENT_DEPTH, False)
@example("Content-Disposition", "\\(" * 100, True)
def test_property_a_field_is_read_as_python_reads_it_or_refused_only_when_its_comments_may_nest_past_the_bound(
        name: str, tail: str, nested: bool) -> None:
    value = _VALUES[name] + tail
    data = _message(name, value, nested)
    depth = _python_depth(name, value)
    try:
        whole = read_message(data)
    except LimitError as exc:
        if "of the marks" in str(exc):  # (MAX_FIELD_MARKS: refused for its many parts, however they nest)
            assert value.count(";") + value.count("(") + value.count('"') > MAX_FIELD_MARKS
            with pytest.raises(LimitError, match="of the marks"):
                read_large(data, window=7)
            return
        assert f"the {name} field has comments nested" in str(exc)
        assert value.count("(") > MAX_COMMENT_DEPTH  # refused only where they may nest past it
        with pytest.raises(LimitError, match="comments nested"):
            read_large(data, window=7)
        return
    assert depth <= MAX_COMMENT_DEPTH  # Python's parse nests no deeper than what is read
    large = read_large(data, window=7)
    python = email.message_from_bytes(data, policy=email.policy.default)
    leaf = python.get_payload()[0] if nested else python
    assert isinstance(leaf, email.message.Message)
    for mail in (whole, large):
        part = mail.parts[0]
        assert (part.media_type, part.disposition, part.filename) == (
            leaf.get_content_type(), leaf.get_content_disposition(), leaf.get_filename())
        body_text(mail)
