"""A body's lines that look like header fields (a log, YAML, a form's ``key: value``) are not header fields.

``MailLimits.max_fields`` bounds the header fields of a message's header blocks, the top's and each part's. A
message read whole counted every line of it that looked like a field, its bodies' included, before the parser ran,
so that an ordinary 2 MB message with an access log attached (100,001 lines ``12:00:00 GET /x 200``) was refused
(``100007 lines that could be header fields``), where the same message past 32 MiB, read by its structure, was kept.
The reference is Python's :mod:`email` (``policy=email.policy.default``): the header fields it reads, each entity's
``keys()``, and the leaves it finds.
"""

from __future__ import annotations

import email
import email.policy
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.errors import LimitError
from pdi.mail.large import part_pieces, read_large
from pdi.mail.message import MailLimits, read_message

#: 100,001 lines of an access log: each begins with a run of field-name characters and a colon (``12:``).
LOG = b"".join(b"12:00:%02d GET /x 200\n" % (i % 60) for i in range(100_001))


def log_message(log: bytes = LOG) -> bytes:
    return (b"From: a@example.org\nSubject: the log\nMIME-Version: 1.0\n"
            b'Content-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: text/plain\n\nthe log, attached\n'
            b'--B\nContent-Type: text/plain\nContent-Disposition: attachment; filename="access.log"\n\n'
            + log + b"--B--\n")


def _python(data: bytes) -> tuple[int, list[tuple[str, bytes]]]:
    """The header fields Python's parser reads (every entity's) and its leaves (media type, decoded octets)."""
    message = email.message_from_bytes(data, policy=email.policy.default)
    fields = sum(len(entity.keys()) for entity in message.walk())
    leaves = [e for e in message.walk() if not (e.get_content_maintype() == "multipart" and e.is_multipart())]
    return fields, [(e.get_content_type(), cast(bytes, e.get_payload(decode=True) or b"")) for e in leaves]


def _read(data: bytes, limits: MailLimits) -> tuple[list[tuple[str, bytes]], list[tuple[str, bytes]]]:
    whole, structure = read_message(data, limits), read_large(data, limits, window=4096)
    return ([(p.media_type, whole.part_octets(p)) for p in whole.parts],
            [(p.media_type, b"".join(part_pieces(data, p, 4096))) for p in structure.parts])


def test_a_message_with_an_access_log_attached_is_read_whole_as_by_its_structure() -> None:
    data = log_message()
    fields, leaves = _python(data)
    assert fields == 7 and [t for t, _ in leaves] == ["text/plain", "text/plain"]
    assert leaves[1][1] == LOG[:-1]  # (its last LF is the delimiter line's, RFC 2046 §5.1.1)
    whole, structure = _read(data, MailLimits())
    assert whole == structure == leaves
    # its 7 header fields are within a limit of 7, its log's 100,001 lines not counted; 6 is past it, in part 1
    assert _read(data, MailLimits(max_fields=7)) == (leaves, leaves)
    part_1 = data.index(b"--B\nContent-Type: text/plain\nContent-Disp") + 4
    for read in (read_message, read_large):
        with pytest.raises(LimitError) as refused:
            read(data, MailLimits(max_fields=6))
        assert str(refused.value) == ("the message's header blocks hold more than 6 header fields in all (the limit"
                                      f" MailLimits.max_fields), past it in part 1's header block (offset {part_1})")


def test_a_yaml_body_of_a_message_of_one_part_is_no_header_fields() -> None:
    yaml = b"".join(b"key%d: value\n" % i for i in range(50))
    data = b"From: a@example.org\nSubject: config\n\n" + yaml
    assert _python(data) == (2, [("text/plain", yaml)])
    assert read_message(data, MailLimits(max_fields=2)).parts[0].entity.get_content() == yaml.decode()
    with pytest.raises(LimitError, match=r"more than 1 header fields in all .* the message's header block \(offset 0\)"):
        read_message(data, MailLimits(max_fields=1))


_NAME = st.binary(min_size=1, max_size=6).map(lambda b: bytes(0x21 + c % 94 for c in b)).map(
    lambda b: b.replace(b":", b";"))
#: A line that looks like a header field: a field name (printable ASCII but ':'), blanks perhaps, a colon, a value.
_FIELD_LIKE_LINE = st.tuples(_NAME, st.sampled_from([b"", b" ", b"\t"]), st.sampled_from([b"", b" v", b"x: y"])).map(
    lambda t: t[0] + t[1] + b":" + t[2]).filter(lambda line: not line.startswith(b"--"))
_BODY = st.lists(_FIELD_LIKE_LINE, min_size=1, max_size=12)


@given(top=st.integers(1, 3), parts=st.lists(st.tuples(st.integers(0, 3), _BODY), min_size=0, max_size=4),
       preamble=st.lists(_FIELD_LIKE_LINE, max_size=3), eol=st.sampled_from([b"\r\n", b"\n", b"\r"]))
def test_property_only_the_header_blocks_fields_are_counted_whole_and_by_structure(
    top: int, parts: list[tuple[int, list[bytes]]], preamble: list[bytes], eol: bytes,
) -> None:
    """Bodies (and a preamble) full of lines that look like header fields: the limit of exactly the header fields
    Python reads keeps the message, whole and by its structure, its parts Python's; one fewer refuses it, both
    readings naming the same header block."""
    head = [b"From: a@example.org", *(b"X-Top-%d: t" % i for i in range(top - 1))]
    if not parts:
        lines = [*head, b"", *preamble]
    else:
        lines = [*head, b'Content-Type: multipart/mixed; boundary="B"', b"", *preamble]
        for number, (extra, body) in enumerate(parts):
            lines += [b"--B", b"Content-Type: text/plain", *(b"X-Part-%d-%d: p" % (number, i) for i in range(extra)),
                      b"", *body]
        lines.append(b"--B--")
    data = eol.join([*lines, b""])
    fields, leaves = _python(data)
    whole, structure = _read(data, MailLimits(max_fields=fields))
    assert whole == structure == leaves
    refusals = []
    for read in (read_message, read_large):
        with pytest.raises(LimitError, match=f"more than {fields - 1:,} header fields in all") as refused:
            read(data, MailLimits(max_fields=fields - 1))
        refusals.append(str(refused.value))
    assert refusals[0] == refusals[1]
