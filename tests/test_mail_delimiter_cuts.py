"""Where a multipart's parts lie between its delimiter lines: one rule for a message read whole and by its structure.

:func:`pdi.mail.message.entity_span` (a message read whole: where an enclosed message's octets are answered from)
and :func:`pdi.mail.large.read_large` (a message read by its structure: each part's span) both cut along
:meth:`pdi.mail.delimiters.Delimiters.parts`; here they are checked against each other on every part of generated
multiparts with delimiter lines at odd places (one right after another, a close delimiter right after one, the last
line with no line end, transport padding, CR or LF or CR LF line ends, no close delimiter, a close delimiter first,
the message cut anywhere past its header fields), and both against the independent reference, Python's parser
(``email.policy.default``) on the same octets: the part's header block, read alone, holds the header fields Python
read for that part, and its body is the payload Python read for it. pdi reads an enclosed message (``message/*``) as
a leaf, its body as written, so the reference reads the same octets with each ``message/`` and ``multipart/digest``
media type renamed one of the same length that Python reads as a leaf (a digest's parts then default to
``text/plain``): where each part lies is unchanged, and Python's payload of each is then the octets it holds. A
multipart Python reads as a leaf (no delimiter line of its own, no boundary, a close delimiter first) is answered
as Python reads its body, which is not where the entity lies (:func:`pdi.mail.large._line_end_at`).
"""

from __future__ import annotations

import email
import email.parser
import email.policy
from email.message import Message
from typing import Any, cast

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pdi.errors import LimitError
from pdi.mail.large import part_pieces, read_large
from pdi.mail.message import MailLimits, _body_start, entity_span, read_message

_HEAD = b"From: a@example.org{eol}Subject: s{eol}MIME-Version: 1.0{eol}"
_PADDING = st.sampled_from([b"", b" ", b"\t", b" \t "])
#: Boundaries that begin one another (``b`` in ``bx``), equal one another, or hold a space; or one of a depth's own.
_BOUNDARIES = [b"b", b"bx", b"b x", b"c"]


@st.composite
def _eol(draw: Any, eol: bytes | None) -> bytes:
    """The message's line end, or (``None``: lines ended as they come) any of CR LF, LF and CR."""
    return eol if eol is not None else draw(st.sampled_from([b"\r\n", b"\n", b"\r"]))


@st.composite
def _lines(draw: Any, eol: bytes | None, boundaries: tuple[bytes, ...]) -> bytes:
    """Some lines of text, among them lines that begin ``--`` and an enclosing boundary: some delimiter lines of
    theirs (padded, closing), some not quite (``--b-``, ``--bx``, ``--b --``, ``--b--x``), and some text."""
    out = b""
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.integers(0, 3))
        if kind == 0 or not boundaries:
            line = draw(st.sampled_from([b"", b"text", b"--", b"-- ", b"---", b"Subject: no field"]))
        else:
            tail = draw(st.sampled_from([b"", b"--", b"-", b"x", b" --", b"--x", b"-- ", b"\t"]))
            line = b"--" + draw(st.sampled_from(boundaries)) + tail
        out += line + draw(_eol(eol))
    return out


@st.composite
def _leaf(draw: Any, eol: bytes | None, boundaries: tuple[bytes, ...]) -> bytes:
    kind = draw(st.sampled_from([b"text/plain", b"message/rfc822", None]))
    head = b"" if kind is None else b"Content-Type: " + kind + draw(_eol(eol))
    if kind == b"message/rfc822":  # an enclosed message, perhaps a multipart of its own
        head += draw(_eol(eol)) + b"From: x@example.org" + draw(_eol(eol))
        if draw(st.booleans()):
            return head + draw(_multipart(eol, boundaries, 2))
    if head or draw(st.booleans()):
        head += draw(_eol(eol))  # the empty line (or, no header field, a part whose first line is empty)
    return head + draw(_lines(eol, boundaries))


@st.composite
def _multipart(draw: Any, eol: bytes | None, outer: tuple[bytes, ...] = (), depth: int = 0) -> bytes:
    boundary = draw(st.sampled_from([*_BOUNDARIES, *[b"=_%d" % depth] * 2]))
    subtype = draw(st.sampled_from([b"mixed", b"digest", b"alternative"]))
    inner = (*outer, boundary)
    out = b"Content-Type: multipart/" + subtype + b'; boundary="' + boundary + b'"' + draw(_eol(eol)) + draw(_eol(eol))
    preamble = [b"", b"A preamble." + draw(_eol(eol)), b"--" + boundary + b"x" + draw(_eol(eol)),
                b"--" + boundary + b"--" + draw(_eol(eol))]  # the last a close delimiter first: Python reads a leaf
    out += draw(st.sampled_from([*preamble[:3] * 2, preamble[3]]))
    delimiter = b"--" + boundary
    for _ in range(draw(st.sampled_from([1, 2, 2, 3] if depth == 0 else [0, 1, 2, 2, 3]))):
        for _ in range(draw(st.sampled_from([1, 1, 1, 2]))):  # perhaps one right after another
            out += delimiter + draw(_PADDING) + draw(_eol(eol))
        if depth < 2 and draw(st.integers(0, 2)) == 0:
            part = draw(_multipart(eol, inner, depth + 1))
        else:
            part = draw(_leaf(eol, inner))
        out += part + draw(st.sampled_from([b"", draw(_eol(eol))]))  # the delimiter's line end, or none
    ending = draw(st.integers(0, 3))
    if ending == 1:  # a close delimiter right after a delimiter line
        out += delimiter + draw(_eol(eol))
    if ending:  # the close delimiter, padded, then an epilogue (perhaps holding delimiter lines)
        out += delimiter + b"--" + draw(_PADDING) + draw(_eol(eol)) + draw(_lines(eol, inner))
    return out


@st.composite
def _message(draw: Any) -> bytes:
    eol = draw(st.sampled_from([b"\r\n", b"\n", b"\r", None]))
    head = _HEAD.replace(b"{eol}", eol or b"\r\n")
    body = draw(_multipart(eol))
    cut = draw(st.sampled_from([None, None, None, 1, 2]))
    if cut == 1:  # no line end last
        body = body.rstrip(b"\r\n")
    elif cut == 2:  # cut anywhere past the header fields: in a line, a CR LF, a delimiter line
        body = body[: draw(st.integers(0, len(body)))]
    return head + body


def _as_leaves(data: bytes) -> bytes:
    """``data`` with each ``message/`` and ``multipart/digest`` media type named one Python reads as a leaf, every
    octet where it was."""
    return data.replace(b"Content-Type: message/", b"Content-Type: messagX/").replace(b"/digest", b"/digesX")


def _python_leaves(message: Message, path: tuple[int, ...] = ()) -> list[tuple[tuple[int, ...], Message]]:
    """The leaves of Python's reading, depth first, with their part numbers (as pdi numbers them)."""
    if message.is_multipart():
        return [leaf for number, child in enumerate(cast(list[Message], message.get_payload()))
                for leaf in _python_leaves(child, (*path, number))]
    return [(path, message)]


def _same_cuts(data: bytes, window: int, max_delimiters: int) -> None:
    limits = MailLimits(max_delimiters=max_delimiters)
    try:
        whole = read_message(data, limits)
    except LimitError:  # too many delimiter lines: refused by its structure too
        try:
            read_large(data, limits, window=window)
        except LimitError:
            return
        raise AssertionError("refused read whole, not by its structure") from None
    large = read_large(data, limits, window=window)
    reference = _as_leaves(data)
    python = _python_leaves(email.message_from_bytes(reference, policy=email.policy.default))
    assert [p.path for p in whole.parts] == [p.path for p in large.parts] == [path for path, _ in python]
    for part, by_structure, (_, expected) in zip(whole.parts, large.parts, python, strict=True):
        span = entity_span(data, whole.message, part.path, whole.limits)  # within the limits it was read with
        assert span is not None and by_structure.span is not None, part.path
        start, body, end = by_structure.span
        assert span[0] == start, part.path
        if part.entity.get_content_maintype() != "multipart":
            assert span[1] == end and _body_start(data, *span) == body, part.path
        elif end >= span[1]:  # a multipart read as a leaf, no delimiter line in it: Python reads on over the line
            assert data[span[1] : end] in (b"", b"\r\n", b"\n", b"\r"), part.path  # end the next delimiter has
        else:  # a close delimiter first ends its body; the rest of it, to the next delimiter, is read and let go
            assert data[end:].startswith(b"--" + cast(str, part.entity.get_boundary()).encode() + b"--"), part.path
        # the reference: the header block read alone holds Python's fields of that part, the body its payload
        fields = email.parser.BytesHeaderParser(policy=email.policy.default).parsebytes(reference[start:body])
        assert list(fields.raw_items()) == list(expected.raw_items()), part.path
        assert reference[body:end].decode("ascii") == expected.get_payload(), part.path
        # the octets answered, read whole (Python's payload; an enclosed message's from entity_span) and by structure
        assert whole.part_octets(part) == b"".join(part_pieces(data, by_structure, window)) == data[body:end]


@given(data=_message(), window=st.integers(2, 64), max_delimiters=st.sampled_from([3, 8, 20_000]))
@example(data=b'From: a@example.org\r\nContent-Type: multipart/mixed; boundary="x"\r\n\r\n--x\r\n\r\n--x\r\n--x\r\n'
              b"Content-Type: message/rfc822\r\n\r\nFrom: x@example.org\r\n\r\n\r\n", window=2,
         max_delimiters=20_000)  # a delimiter line right after one (c64b70a8): the regular expression cut apart
@example(data=b'From: a@example.org\r\nSubject: s\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"'
              b'\r\n\r\n--b\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n\r\n', window=2,
         max_delimiters=3)  # a multipart read as a leaf: Python's body of it is the empty line, by structure was none
def test_each_part_lies_where_the_structure_reading_and_pythons_parser_find_it(
        data: bytes, window: int, max_delimiters: int) -> None:
    _same_cuts(data, window, max_delimiters)


_LEAF_HEAD = b'From: a@example.org\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\n'


@pytest.mark.parametrize(("part", "expected"), [
    # a multipart with no delimiter line of its own, then another part: its body keeps the line end before "--b"
    (b'Content-Type: multipart/mixed; boundary="c"\r\n\r\nx\r\n--b\r\n\r\ny\r\n--b--\r\n', b"x\r\n"),
    (b"Content-Type: multipart/mixed\r\n\r\nx\r\n--b\r\n\r\ny\r\n--b--\r\n", b"x\r\n"),  # (no boundary)
    # last, no close delimiter: its body keeps the message's last line end, or is that line end
    (b'Content-Type: multipart/mixed; boundary="c"\r\n\r\nx\r\n', b"x\r\n"),
    (b'Content-Type: multipart/mixed; boundary="c"\r\n\r\n\r\n', b"\r\n"),
    (b'Content-Type: multipart/mixed; boundary="c"\r\n\r\n', b""),  # (that line end the empty line's)
    (b'Content-Type: multipart/mixed; boundary="c"\r\n', b""),  # (the header block's last line's)
    # a close delimiter first: its body is what comes before it, line end and all
    (b'Content-Type: multipart/mixed; boundary="c"\r\n\r\nx\r\n--c--\r\nz\r\n--b\r\n\r\ny\r\n', b"x\r\n"),
])
def test_a_multipart_python_reads_as_a_leaf_is_answered_by_structure_as_python_reads_it(
        part: bytes, expected: bytes) -> None:
    """Python's parser takes the line end before a delimiter line off a part's body, but off a multipart's
    epilogue: a multipart it reads as a leaf for want of a delimiter line keeps that line end in its body, which a
    reading by structure cut off. ``expected``: Python's payload of that part (``email.message_from_bytes``)."""
    data = _LEAF_HEAD + part
    python = cast(Message, email.message_from_bytes(data, policy=email.policy.default).get_payload()[0])
    assert python.get_content_maintype() == "multipart" and not python.is_multipart()
    assert python.get_payload() == expected.decode()  # the reference agrees with the values written here
    whole, large = read_message(data), read_large(data, window=3)
    assert whole.part_octets(whole.parts[0]) == b"".join(part_pieces(data, large.parts[0], 3)) == expected
