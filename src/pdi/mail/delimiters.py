"""The boundary delimiter lines of a message's multiparts (RFC 2046 §5.1.1), found and counted as each multipart is
cut: one code for a message read by its structure (:mod:`pdi.mail.large`) and for one read whole
(:func:`pdi.mail.message.read_message`, and :func:`pdi.mail.message.entity_span`, which cuts it again where an
enclosed message lies), so that both refuse the same messages and cut them alike. It stands below both modules, which
import it: it names no part of either (the limits it reads are a :class:`Protocol`)."""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, Protocol

from pdi._wording import clipped
from pdi.errors import LimitError

__all__ = ["KEPT_OF_LINE", "MAX_DELIMITER_LINE", "MAX_READINGS", "WINDOW", "Delimiters", "Octets", "too_many_delimiters"]

#: The octets read at a time: a pass, a part's body decoded.
WINDOW: Final = 1 << 20
#: The octets kept of each line that begins ``--``: a boundary (RFC 2046 §5.1.1: at most 70 characters) and its
#: ``--`` and line end fit; a longer delimiter line is read again from the octets.
KEPT_OF_LINE: Final = 128
#: The most readings of a message's octets that finding its multiparts' delimiter lines may take (:class:`Delimiters`):
#: one, and another for each multipart nested in one whose lines that start ``--`` are too many to index.
MAX_READINGS: Final = 4
#: The most octets of a delimiter line read to find its end (its boundary, ``--``, then blanks): RFC 5322 §2.1.1
#: bounds a line at 998 octets.
MAX_DELIMITER_LINE: Final = 64 << 10


class Octets(Protocol):
    """What the reading needs of the octets: their length and a plain slice (:class:`bytes` is one)."""

    def __len__(self) -> int: ...

    def __getitem__(self, key: slice, /) -> bytes: ...


class _Clock(Protocol):
    """What :class:`Delimiters` reads of :class:`~pdi.mail.limits.MailClock`."""

    def check(self, offset: int) -> None: ...


class _Limits(Protocol):
    """What :class:`Delimiters` reads of :class:`~pdi.mail.message.MailLimits`."""

    @property
    def max_delimiters(self) -> int: ...


@dataclass(frozen=True)
class _Line:
    """A line that begins ``--``: where, and its first :data:`KEPT_OF_LINE` octets."""

    at: int
    head: bytes


#: What follows the boundary on a delimiter line before its end: ``--`` (the close delimiter) or not, then blanks.
_TAIL: Final = re.compile(rb"(--)?[ \t]*")


def _without_line_end(octets: Octets, start: int, at: int) -> int:
    """``at`` moved back over the one line ending (CR LF, LF or CR) just before it, not before ``start``."""
    before = octets[max(start, at - 2) : at]
    if before.endswith(b"\r\n"):
        return at - 2
    if before.endswith((b"\n", b"\r")):
        return at - 1
    return at


def too_many_delimiters(limits: _Limits, at: int, path: tuple[int, ...]) -> LimitError:
    """The refusal of the boundary delimiter line at offset ``at``, in the multipart at ``path``, the first past
    ``limits.max_delimiters`` (:class:`Delimiters` counts them)."""
    where = "the message's body" if not path else f"the body of part {clipped('.'.join(map(str, path)), 120)}"
    return LimitError(
        f"the message has more than {limits.max_delimiters:,} boundary delimiter lines (lines that start '--' and"
        f" the boundary of the multipart they lie in), the limit MailLimits.max_delimiters: the first past it at"
        f" offset {at}, in {where}"
    )


class Delimiters:
    """The boundary delimiter lines of a message's multiparts, found and counted as each multipart is cut
    (:meth:`parts`), against :attr:`~pdi.mail.message.MailLimits.max_delimiters` in all: a line that begins ``--``
    and the boundary of the multipart whose body holds it (up to its close delimiter), read a window at a time.

    A line that begins ``--`` and no boundary of an open multipart (a patch's ``--- a/file``, a signature's ``-- ``,
    a log's rules, in a text part) is never kept nor counted; of those that do, each is looked at (and a stranger's
    millions of them, every one a part or none, refused past the limit, naming where). The same code cuts a message
    read by its structure (:func:`read_large`) and counts and cuts those of a message read whole
    (:func:`pdi.mail.message.read_message`, its octets in hand; :func:`pdi.mail.message.entity_span`), so both
    refuse the same messages and find their parts in the same octets."""

    def __init__(self, octets: Octets, limits: _Limits, window: int = WINDOW, clock: _Clock | None = None) -> None:
        self.octets, self.limits, self.window = octets, limits, window
        #: The time the reading may take (:class:`pdi.mail.limits.MailClock`), looked at a window at a time.
        self.clock = clock
        self.count = 0  # the delimiter lines met so far, of every multipart
        # ranges whose lines that start "--" are all known (at most max_delimiters each): a multipart nested in one is
        # cut from them, its body not read again
        self.indexed: list[tuple[int, int, list[_Line], list[int]]] = []
        self.read = 0  # octets read to find lines, but for the ranges indexed first

    def _found(self, delimiter: bytes, body: int, end: int, path: tuple[int, ...]) -> Iterator[_Line]:
        """Each line of ``octets[body:end]`` that begins ``delimiter``, in order: from a range indexed before that
        holds it; else from this range's index, made now if it holds at most ``max_delimiters`` lines that start
        ``--`` (as a message's do, unless a patch or a log is in it); else searched for, a regular expression a
        window at a time, in at most :data:`MAX_READINGS` readings of the message in all (refused past them: only
        multiparts nested in one another around more lines that start ``--`` than that read one range again)."""
        for low, high, lines, starts in reversed(self.indexed):
            if low <= body and end <= high:
                for index in range(bisect.bisect_left(starts, body), bisect.bisect_left(starts, end)):
                    if self._begins(lines[index], delimiter):
                        yield lines[index]
                return
        dashes = self._lines(b"--", body, end)
        lines = list(itertools.islice(dashes, self.limits.max_delimiters + 1))
        if len(lines) <= self.limits.max_delimiters:
            self.indexed.append((body, end, lines, [line.at for line in lines]))
            yield from (line for line in lines if self._begins(line, delimiter))
            return
        self.read += lines[-1].at - body + (end - body)  # the index begun, then the search
        if self.read > MAX_READINGS * len(self.octets) + self.window:
            where = "the message's body" if not path else f"the body of part {'.'.join(map(str, path))}"
            raise LimitError(
                f"the message's multiparts nest in one another around more than {self.limits.max_delimiters:,} lines"
                f" that start '--', so that their boundary delimiter lines would be searched for in more than"
                f" {MAX_READINGS} readings of its octets: refused at {where} (offset {body})"
            )
        del lines
        yield from self._lines(delimiter, body, end)

    def _begins(self, line: _Line, delimiter: bytes) -> bool:
        """Whether the line ``line`` (one that starts ``--``) begins ``delimiter``."""
        if len(delimiter) <= len(line.head) or len(line.head) < KEPT_OF_LINE:  # (a head short: the message's end)
            return line.head.startswith(delimiter)
        return self.octets[line.at : line.at + len(delimiter)] == delimiter

    def _lines(self, delimiter: bytes, body: int, end: int) -> Iterator[_Line]:
        """Each line of ``octets[body:end]`` (``body`` a line's start) that begins ``delimiter``, in order, with its
        first :data:`KEPT_OF_LINE` octets, found a window at a time."""
        pattern = re.compile(rb"[\r\n]" + re.escape(delimiter))
        if body == 0 and self.octets[: len(delimiter)] == delimiter:
            yield _Line(0, self.octets[:KEPT_OF_LINE])
        at = body
        while at < end:
            if self.clock is not None:
                self.clock.check(at)
            stop = min(end, at + self.window)
            low = max(0, at - 1)  # the line end before the window's first line
            text = self.octets[low : min(end, stop + len(delimiter) + KEPT_OF_LINE)]
            for found in pattern.finditer(text):
                line = low + found.start() + 1
                if line >= stop:  # (the next window's)
                    break
                head = text[found.start() + 1 : found.start() + 1 + KEPT_OF_LINE]
                if len(head) < KEPT_OF_LINE and line + len(head) < len(self.octets):  # cut by the entity's end
                    head = self.octets[line : line + KEPT_OF_LINE]
                yield _Line(line, head)
            at = stop

    def parts(self, boundary: str, body: int, end: int, path: tuple[int, ...]) -> list[tuple[int, int]] | int:
        """The spans of a multipart's parts between ``body`` and ``end``, cut as Python's parser cuts them (the
        line end before a delimiter line is the delimiter's, RFC 2046 §5.1.1; delimiter lines right after one are
        taken with it, no part between them; no close delimiter: the last part runs to the end, less the message's
        last line end); or, where Python reads the multipart as a leaf, where its body ends then: at a close
        delimiter that comes first, else (no delimiter line) at ``end`` (and Python reads on over the line end after
        it: :func:`pdi.mail.large._line_end_at`). ``path``: the multipart's part numbers, named in a refusal."""
        try:  # as Python's parser matches it: on lines read as ASCII, each 8-bit octet a lone surrogate
            delimiter = b"--" + boundary.encode("ascii", "surrogateescape")
        except UnicodeEncodeError:  # a letter no line read so holds (an 8-bit boundary read as UTF-8): no delimiter
            return end
        spans: list[tuple[int, int]] = []
        part_start: int | None = None  # None: in the preamble
        for line in self._found(delimiter, body, end, path):
            self.count += 1
            if self.count > self.limits.max_delimiters:
                raise too_many_delimiters(self.limits, line.at, path)
            matched = self._delimiter_end(line, delimiter, end)
            if matched is None:
                continue
            line_end, close = matched
            if part_start is None:
                if close:  # no part begun: Python reads the preamble as its body
                    return line.at
                part_start = line_end
            elif line.at == part_start:  # right after a delimiter line: taken with it, whatever it is
                part_start = line_end
            else:
                spans.append((part_start, max(part_start, _without_line_end(self.octets, part_start, line.at))))
                if close:  # the close delimiter: the epilogue follows
                    return spans
                part_start = line_end
        if part_start is None:
            return end
        last = _without_line_end(self.octets, part_start, end) if end == len(self.octets) else end
        spans.append((part_start, max(part_start, last)))
        return spans

    def _delimiter_end(self, line: _Line, delimiter: bytes, end: int) -> tuple[int, bool] | None:
        """Where the delimiter line at ``line`` ends and whether it closes, or ``None`` if it is no delimiter line:
        the boundary, then ``--`` or not, then spaces or tabs, then a line end (CR LF, CR, LF) or the entity's end,
        as Python's parser matches a line; read past the octets kept of the line when they do not tell."""
        limit = end - line.at  # the entity's octets from the line on
        text, want = line.head[:limit], KEPT_OF_LINE
        while True:
            if not text.startswith(delimiter[: len(text)]):
                return None
            whole = len(text) >= limit  # all of the entity's octets from here are held
            if len(text) >= len(delimiter):
                rest = text[len(delimiter) :]
                tail = _TAIL.match(rest)
                assert tail is not None
                close, k = tail.group(1) is not None, tail.end()
                ended = line.at + len(delimiter) + k
                if k < len(rest):
                    octet = rest[k : k + 1]
                    if octet == b"\n":
                        return ended + 1, close
                    if octet == b"\r" and (k + 1 < len(rest) or whole):  # CR LF, or a CR alone
                        return ended + (2 if rest[k + 1 : k + 2] == b"\n" else 1), close
                    if octet != b"\r" and not (octet == b"-" and k + 1 == len(rest) and not close):
                        return None  # something else on the line (a "-" last held may be half of "--": read on)
                elif whole:  # the entity ends on this line: a delimiter at its end
                    return end, close
            if whole:
                return None
            if want > MAX_DELIMITER_LINE:  # blanks after a boundary for longer than any line: not read on
                raise LimitError(
                    f"the line at offset {line.at} is a boundary delimiter followed by more than"
                    f" {MAX_DELIMITER_LINE:,} octets of blanks, more than pdi reads of one line"
                )
            want *= 4
            text = self.octets[line.at : line.at + min(want, limit)]
