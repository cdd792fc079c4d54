"""An mbox file cut into its messages, as Python's :class:`mailbox.mbox` cuts it on a POSIX system (``docs/email.md``).

A message starts at a line that begins ``From `` (its *From_ line*, which is
not part of the message) and runs to the next such line or the end of the
file; when the line before the next From_ line is empty (``\\n`` alone),
that empty line separates the messages and is not part of either. Nothing is unquoted: a
``>From`` line stays as it is written (mboxo and mboxrd cannot be told
apart), so each message is octets of the file, never rewritten.

Read from a stream a line at a time: memory is one message (at most
``max_message_bytes``; :class:`~pdi.errors.LimitError` past it) and one line,
a longer line read in pieces of that size: only a piece that starts a line may
start a message, and a From_ line's pieces are all its own.
Pure: reads only the stream handed in.

**What comes before the first From_ line.** RFC 4155 (Appendix A: each
message of the database begins with a separator line, ``From `` and the
envelope's sender and date): an mbox begins with a From_ line. :mod:`mailbox` drops whatever is before it;
here, octets before it other than blank lines (spaces, tabs, line ends) are
refused (a :class:`~pdi.errors.ParseError` naming the line and its offset), as
they would be in no message: a file that is one RFC 5322 message, named
``.mbox`` (its line 1 ``From: …``), deposited nothing and said no more than
that no line begins ``From ``, and one whose first message had lost its From_
line had that message dropped without a word. ``strict=False`` drops them as
:mod:`mailbox` does (the tests compare the cutting with it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from pdi.errors import LimitError, ParseError

__all__ = ["MboxMessage", "split_mbox"]

_LINESEP = b"\n"


@dataclass(frozen=True)
class MboxMessage:
    """One message of an mbox: its number (from 0), its From_ line (without the line end) and its octets."""

    number: int
    from_line: bytes
    data: bytes
    #: the line of the file its From_ line is (from 1)
    line: int


def split_mbox(
    stream: BinaryIO, *, max_message_bytes: int = 64 << 20, max_messages: int = 100_000, strict: bool = True,
) -> Iterator[MboxMessage]:
    """The messages of the mbox ``stream`` in order (see the module docstring; ``strict``: octets before the first
    From_ line but blank lines are a :class:`~pdi.errors.ParseError`, rule ``mbox``, not dropped)."""
    # one buffer of octets, not a list of lines: a line kept as an object of its own costs some 40 octets beside
    # its own, so a message of short lines took some 70 times its size (19 MB of "a\n" lines, 1.3 GB)
    current: bytearray | None = None
    from_line = b""
    from_at = 0
    number = 0
    last_was_empty = False
    line_number = 0
    at_start = True  # whether what is read next starts a line (a line longer than a read is read in pieces)
    offset = 0  # of what is read next, in the file
    while True:
        line = stream.readline(max_message_bytes + 2)
        starts, at_start = at_start, line.endswith(_LINESEP)
        line_number += 1 if line and starts else 0
        offset += len(line)
        if not line or (starts and line.startswith(b"From ")):  # a piece of a line that starts "From " starts none
            if current is not None:
                if last_was_empty and current.endswith(_LINESEP):
                    del current[-1:]
                yield MboxMessage(number, from_line.rstrip(b"\r\n"), bytes(current), from_at)
                number += 1
            if not line:
                return
            if number >= max_messages:
                raise LimitError(f"the mbox has more than {max_messages:,} messages: message {number + 1:,} begins"
                                 f" at line {line_number:,}")
            current, from_line, from_at, last_was_empty = bytearray(), line, line_number, False
            while not at_start:  # a From_ line longer than a read: the rest of it is the From_ line's, not the message's
                rest = stream.readline(max_message_bytes + 2)
                at_start = not rest or rest.endswith(_LINESEP)
            continue
        last_was_empty = starts and line == _LINESEP
        if current is None:  # before the first From_ line: no message's
            if strict and line.strip(b" \t\r\n"):
                raise _no_from_line(line, line_number, offset - len(line), starts)
            continue
        if len(current) + len(line) > max_message_bytes:
            raise LimitError(
                f"message {number + 1:,} of the mbox (its From_ line is line {from_at:,}) is larger than"
                f" {max_message_bytes:,} octets"
            )
        current += line


def _no_from_line(piece: bytes, line_number: int, offset: int, starts: bool) -> ParseError:
    """The refusal of an mbox whose line ``line_number`` (a ``piece`` of it, at ``offset``) comes before its first
    From_ line and is no blank line: RFC 4155's mbox begins with a From_ line, and it would be in no message."""
    shown = repr(piece[:60].rstrip(b"\r\n"))[1:]  # each octet past ASCII escaped once, as Python writes bytes
    what = shown if starts else f"a line that holds {shown}"
    return ParseError(
        f"line {line_number:,} is not an mbox From_ line (one that begins 'From '): {what}; an mbox begins with one"
        " (RFC 4155), and what comes before it would be in no message",
        offset=offset, rule="mbox",
    )
