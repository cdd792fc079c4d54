"""Python's feed parser reading through :mod:`pdi.mail.message`'s buffer of lines (``_PiecedLines``) makes the
message :func:`email.message_from_bytes` makes, whatever pieces the octets are fed in: multipart boundaries (the
parser's false-EOF matchers), CR, LF and CR LF line ends cut anywhere, empty pieces; and on a Python whose
:mod:`email.feedparser` is not the one that buffer was written against, the message is read with Python's own
buffer, never refused."""

from __future__ import annotations

import email
import email.feedparser
import email.parser
import email.policy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.mail.message import MailLimits, read_message
from pdi.mail.parser import _pieced_lines, bounded_policy, parse

_EOL = st.sampled_from(["\r\n", "\n", "\r"])
_WORD = st.text(alphabet=st.sampled_from(["a", "b", " ", "-", "\xe9", ":", "="]), max_size=8)


@st.composite
def _entity(draw: Any, depth: int = 0) -> str:
    """An entity's text: header fields, then a body, a multipart's (preamble, parts, closing delimiter or none,
    epilogue) or a leaf's lines, each line ended by any of CR LF, LF, CR."""
    eol = draw(_EOL)
    boundary = draw(st.sampled_from(["b", "bb", "b-1", "=_x"]))
    multipart = depth < 2 and draw(st.booleans())
    head = [f"From: {draw(_WORD)}"]
    if multipart:
        head.append(f'Content-Type: multipart/mixed; boundary="{boundary}"')
    elif draw(st.booleans()):
        head.append(f"Subject: {draw(_WORD)}{draw(_EOL)} {draw(_WORD)}")  # folded, any line end
    text = "".join(line + draw(_EOL) for line in head) + draw(st.sampled_from([eol, ""]))
    if not multipart:
        lines = draw(st.lists(st.tuples(_WORD, _EOL), max_size=4))
        return text + "".join(w + e for w, e in lines) + draw(_WORD)
    text += "".join(w + e for w, e in draw(st.lists(st.tuples(_WORD, _EOL), max_size=2)))  # preamble
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        text += f"--{boundary}{draw(st.sampled_from(['', ' ', '--x']))}{draw(_EOL)}"
        text += draw(_entity(depth + 1))
        text += draw(_EOL)
    if draw(st.booleans()):
        text += f"--{boundary}--{draw(_EOL)}"
    return text + draw(_WORD)


def _shape(message: Any) -> list[Any]:
    """What the parser made of a message: each entity's fields, payload (a leaf's text), preamble, epilogue and
    defects, depth first."""
    return [(list(part.raw_items()), None if part.is_multipart() else part.get_payload(), part.preamble, part.epilogue,
             [type(d).__name__ for d in part.defects]) for part in message.walk()]


def _fed(data: bytes, cuts: list[int], policy: Any) -> Any:
    parser = email.parser.BytesFeedParser(policy=policy)
    parser._input = _pieced_lines()()  # as parse gives it
    at = sorted(min(c, len(data)) for c in cuts)  # repeated cuts: empty pieces
    for a, b in zip([0, *at], [*at, len(data)], strict=True):
        parser.feed(data[a:b])
    return parser.close()


@settings(max_examples=400, deadline=None)
@given(_entity(), st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_property_a_message_fed_in_any_pieces_is_the_message_python_reads_whole(text: str, cuts: list[int]) -> None:
    data = text.encode("utf-8")
    for policy in (email.policy.compat32, email.policy.default):
        expected = _shape(email.message_from_bytes(data, policy=policy))
        assert _shape(_fed(data, cuts, policy)) == expected


@settings(max_examples=100, deadline=None)
@given(_entity(), st.integers(min_value=1, max_value=7))
def test_property_parse_in_small_feeds_is_the_message_python_reads_whole(text: str, feed: int) -> None:
    data = text.encode("utf-8")
    expected = _shape(email.message_from_bytes(data, policy=email.policy.default))
    assert _shape(parse(data, bounded_policy(MailLimits()), feed=feed)) == expected



def _lines_read(buffer: Any, pieces: list[str]) -> list[str]:
    lines: list[str] = []
    for piece in [*pieces, None]:
        buffer.push(piece) if piece is not None else buffer.close()
        while isinstance(line := buffer.readline(), str) and line:
            lines.append(line)
    return lines


@pytest.mark.parametrize("pieces", [["a\r", "", "\nb"], ["a\r", "", "", "\n"], ["a", "\r", "", "\n\r", "", "\n"]])
def test_an_empty_piece_after_a_cr_does_not_end_the_line_there(pieces: list[str]) -> None:
    """Found: an empty piece after a CR cut the CR off as a line of its own, where Python's buffer waits for the
    next piece to say whether an LF follows (a CR LF read as two line ends)."""
    expected = _lines_read(email.feedparser.BufferedSubFile(), pieces)
    assert expected[0] == "".join(pieces).splitlines(keepends=True)[0]
    assert _lines_read(_pieced_lines()(), pieces) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["", "a", "\r", "\n", "\r\n", "a\r", "\na"]), max_size=10))
def test_property_pieces_of_line_ends_and_empty_pieces_are_cut_as_python_cuts(pieces: list[str]) -> None:
    assert _lines_read(_pieced_lines()(), pieces) == _lines_read(email.feedparser.BufferedSubFile(), pieces)


# --- a Python whose feedparser is not the one _PiecedLines was written against -----------------------------------

_MESSAGE = (b'From: a@example.org\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\n\r\none\r\n'
            b"--b\r\nContent-Type: text/plain\r\n\r\ntwo\r--b--\r\n")


class _OtherBuffer(email.feedparser.BufferedSubFile):
    """A buffer of lines as another Python might write it: the lines kept by a method of another name (no
    ``pushlines``), so a buffer that pushes through ``pushlines`` breaks."""

    def __init__(self) -> None:
        super().__init__()
        del self._partial
        self._held = ""

    def push(self, data: str) -> None:
        lines = (self._held + data).splitlines(keepends=True)
        self._held = lines.pop() if lines and (lines[-1][-1:] not in "\n" or lines[-1].endswith("\r")) else ""
        self._lines.extend(lines)

    def close(self) -> None:
        self._lines.extend(self._held.splitlines(keepends=True))
        self._held = ""
        self._closed = True

    pushlines = property()  # type: ignore[assignment]  # gone: reading it raises AttributeError


class _SkewedBuffer(email.feedparser.BufferedSubFile):
    """A buffer whose ``pushlines`` keeps lines where its ``readline`` never reads them (as if it read from a list
    of another name): a buffer that pushes through ``pushlines`` gives the parser no line at all."""

    def pushlines(self, lines: list[str]) -> None:
        self.__dict__.setdefault("elsewhere", []).extend(lines)

    def push(self, data: str) -> None:
        self._partial.write(data)
        self._partial.seek(0)
        parts = self._partial.readlines()
        self._partial.seek(0)
        self._partial.truncate()
        if parts and not parts[-1].endswith("\n"):
            self._partial.write(parts.pop())
        self._lines.extend(parts)

    def close(self) -> None:
        self._partial.seek(0)
        self._lines.extend(self._partial.readlines())
        self._closed = True


@pytest.mark.parametrize("other", [_OtherBuffer, _SkewedBuffer])
def test_a_python_whose_feedparser_buffer_differs_reads_the_message_with_its_own_buffer(
    monkeypatch: pytest.MonkeyPatch, other: type
) -> None:
    """Found: ``_PiecedLines`` was used whatever Python's buffer was, so one whose internals moved made ``pdi add``
    of any message fail (AttributeError) or read it wrong. Now such a buffer is found when first wanted, and the
    message read with Python's own."""
    expected = _shape(email.message_from_bytes(_MESSAGE, policy=email.policy.default))
    assert [p.get_payload() for p in email.message_from_bytes(_MESSAGE).walk()][1:] == ["one", "two"]
    monkeypatch.setattr(email.feedparser, "BufferedSubFile", other)
    _pieced_lines.cache_clear()
    try:
        assert _shape(email.message_from_bytes(_MESSAGE, policy=email.policy.default)) == expected  # Python's own
        assert _shape(parse(_MESSAGE, bounded_policy(MailLimits()), feed=5)) == expected
        mail = read_message(_MESSAGE)
        assert [part.entity.get_payload() for part in mail.parts] == ["one", "two"]
    finally:
        monkeypatch.undo()
        _pieced_lines.cache_clear()

