"""Chunked transfer coding (RFC 9112 §7.1) read within bounds, wherever its octets lie: one decoder for pdi's three
readers of a chunked body (a mirror's octets answer, :mod:`pdi.network.peers`; a WARC record's payload,
:mod:`pdi.interop.warc.coding`; a body the capture proxy recorded, :mod:`pdi.capture.rendered`).

:class:`Chunks` reads a body's framing and nothing else, from no stream of its own: given a buffer and where its
unread octets are, it takes the framing that begins there and says where a chunk's data begins and how many
octets it holds (:attr:`Chunks.size`), that the body has ended, or that it needs more octets. The framing is:

- a chunk's size line (§7.1: ``chunk-size [ chunk-ext ] CRLF``): hex digits only, at most ``max_digits`` of
  them (and, given ``max_size``, no larger a size), spaces and tabs after them (the ``BWS`` before an
  extension, §7.1.1), any chunk extensions (``;`` and what follows, to the line's end: passed over, none is
  understood), the whole line at most ``max_line`` octets before its CRLF; ``spaces``: spaces and tabs before the
  digits too, for the readers of what strangers recorded (warcio and :mod:`http.client` strip them);
- the CRLF after each chunk's data, where the chunk's size says it ends;
- after the last chunk (a size of 0), the trailer section (§7.1.2), its field lines passed over to the empty
  line that ends it, at most ``max_trailer`` octets (the empty line with them) and, given ``max_fields``, as
  many lines.

A size line and the end of a chunk's data end with CRLF, as §7.1 writes them: a bare LF there is refused (a bare
LF read as a line's end where another reader does not read one is how a chunk is smuggled). A trailer field line
may end with a bare LF, as RFC 9112 §2.2 lets a recipient read a field line (h11 reads it so). A trailer's field
lines are not read as fields: nothing of them is kept.

The data is the caller's to take where it lies (the mirror's reader takes it from its own buffer, never copied);
:meth:`Chunks.framing` is called again once the chunk's data is all taken, and counts it then.
:func:`pieces` reads a body from a stream with it, a piece at a time. Anything else is a :class:`ChunkedError`
naming what was wrong and at which octet of the body; a body whose octets end before its framing says it does
is a :class:`CutShort` (:meth:`Chunks.cut_short`), which each reader treats as its own rules say: the WARC
reader gives what a record its crawler cut short holds, as warcio does.

The module imports nothing of pdi's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Protocol

__all__ = ["ChunkedError", "Chunks", "CutShort", "Readable", "pieces"]

#: A chunk size line without its CRLF: its digits (group 1), spaces and tabs, then any extensions.
_SIZE = re.compile(rb"([0-9A-Fa-f]+)[ \t]*(?:;[^\r\n]*)?")
#: The same, with spaces and tabs before the digits too (``spaces``).
_SPACED_SIZE = re.compile(rb"[ \t]*([0-9A-Fa-f]+)[ \t]*(?:;[^\r\n]*)?")

# Where the decoder is: before a size line; in a chunk's data (the caller's to take); before the CRLF after it;
# in the trailer section; past the body's end.
_SIZE_LINE, _DATA, _DATA_END, _TRAILER, _ENDED = range(5)


class ChunkedError(ValueError):
    """A chunked body whose framing is not RFC 9112 §7.1's, or is past a bound; :attr:`offset`: the octet of the
    body where (the octets before it were read as framing or data)."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


class CutShort(ChunkedError):
    """A chunked body whose octets end before its framing says the body does."""


def _octets(count: int) -> str:
    return f"{count >> 30} GiB" if count >= 1 << 30 and not count & ((1 << 30) - 1) else f"{count} octets"


class Chunks:
    """The framing of one chunked body, read within bounds (see the module's docstring), and where it is.

    :meth:`framing` takes the framing at a place in a buffer; after it, :attr:`in_data` says that the data of a
    chunk of :attr:`size` octets begins where it returned, :attr:`ended` that the body ended there, and neither
    that the octets from there on are not yet all of a line: they are to be given again with more after them.
    :attr:`last`: the last chunk's size line is read (all of the body's data was given; its trailer section may
    not be read yet). :attr:`at`: the octets of the body before where :meth:`framing` returned; :attr:`number`:
    the chunks whose size line was read, the last chunk's among them. ``noun`` names the body in messages."""

    def __init__(self, *, max_digits: int = 16, max_line: int = 4 << 10, max_trailer: int = 8 << 10,
                 max_fields: int | None = None, max_size: int | None = None, spaces: bool = False,
                 noun: str = "the body") -> None:
        self.max_digits = max_digits
        self.max_line = max_line
        self.max_trailer = max_trailer
        self.max_fields = max_fields
        self.max_size = max_size
        self.noun = noun
        self._pattern = _SPACED_SIZE if spaces else _SIZE
        self.at = 0
        self.number = 0
        self.size = 0
        self.in_data = False
        self.last = False
        self.ended = False
        self._state = _SIZE_LINE
        self._trailer_at = 0  # the octet of the body where the trailer section begins
        self._trailer_read = 0  # octets of the trailer section read
        self._fields = 0  # its field lines read
        self._line = b""  # the first octets (two at most) of the trailer line being read
        self._line_length = 0  # that line's octets read

    def framing(self, buffer: bytes | bytearray, start: int, end: int) -> int:
        """Take the framing that begins at ``buffer[start]`` (``buffer[start:end]`` the octets in hand; called
        first at the body's start, then wherever the last call returned, once the data it gave is all taken) as
        far as it goes: where it stops (the start of a chunk's data, the body's end, or the first octet of a line
        not yet all in hand). :class:`ChunkedError` if the framing is not RFC 9112's or runs past a bound."""
        at = start
        state = self._state
        if state == _DATA:
            self.at += self.size  # the chunk's data, taken since the last call
            self.in_data = False
            state = self._state = _DATA_END
        if state == _DATA_END:
            if end - at < 2 or buffer[at] != 0x0D or buffer[at + 1] != 0x0A:
                # what is found in its place: its first octet, or a CR and the next
                if end > at and buffer[at] != 0x0D:
                    raise self._unended(at, start, bytes(buffer[at:at + 1]))
                if end - at < 2:
                    return at
                raise self._unended(at, start, bytes(buffer[at:at + 2]))
            at += 2
            state = self._state = _SIZE_LINE
        if state == _SIZE_LINE:
            most = self.max_line + 2
            lf = buffer.find(b"\n", at, end if end - at < most else at + most)
            offset = self.at + at - start
            if lf < 0:
                if end - at >= most:
                    raise ChunkedError(f"chunk {self.number + 1}, at octet {offset} of {self.noun}, has a size line"
                                       f" longer than {self.max_line} octets", offset)
                self.at = offset
                return at
            found = self._pattern.fullmatch(buffer, at, lf - 1) if lf > at and buffer[lf - 1] == 0x0D else None
            if found is None:
                raise ChunkedError(
                    f"chunk {self.number + 1}, at octet {offset} of {self.noun}, does not begin with a chunk size"
                    f" line (it begins {bytes(buffer[at:min(lf + 1, at + 20)])!r})", offset)
            digits = found[1]
            if len(digits) > self.max_digits:
                raise ChunkedError(
                    f"chunk {self.number + 1}, at octet {offset} of {self.noun}, has a size of {len(digits)} hex"
                    f" digits, more than the {self.max_digits} a size may have here", offset)
            size = int(digits, 16)
            if self.max_size is not None and size > self.max_size:
                raise ChunkedError(
                    f"chunk {self.number + 1}, at octet {offset} of {self.noun}, says it holds {size} octets, more"
                    f" than the {_octets(self.max_size)} a chunk may hold here", offset)
            self.number += 1
            at = lf + 1
            if size:
                self.size = size
                self.in_data = True
                self._state = _DATA
                self.at += at - start
                return at
            self.size = 0
            self.last = True
            state = self._state = _TRAILER
            self._trailer_at = self.at + at - start
        if state == _TRAILER:
            at = self._trailer(buffer, at, end)
        self.at += at - start
        return at

    def _trailer(self, buffer: bytes | bytearray, at: int, end: int) -> int:
        """The trailer section's octets in hand, passed over (not held: a line may come in any number of calls),
        to its empty line; where they stop."""
        while at < end:
            lf = buffer.find(b"\n", at, end)
            stop = end if lf < 0 else lf
            if len(self._line) < 2:
                self._line = (self._line + bytes(buffer[at:min(stop, at + 2)]))[:2]
            self._line_length += stop - at
            self._trailer_read += stop + (lf >= 0) - at
            if self._trailer_read > self.max_trailer:
                raise ChunkedError(
                    f"the trailer section after the last chunk, at octet {self._trailer_at} of {self.noun}, holds"
                    f" more than {self.max_trailer} octets", self._trailer_at)
            if lf < 0:
                return end
            at = lf + 1
            empty = self._line_length == 0 or (self._line_length == 1 and self._line == b"\r")
            self._line, self._line_length = b"", 0
            if empty:
                self._state = _ENDED
                self.ended = True
                return at
            self._fields += 1
            if self.max_fields is not None and self._fields > self.max_fields:
                raise ChunkedError(
                    f"the trailer section after the last chunk, at octet {self._trailer_at} of {self.noun}, holds"
                    f" more than {self.max_fields} lines", self._trailer_at)
        return at

    def _unended(self, at: int, start: int, found: bytes) -> ChunkedError:
        offset = self.at + at - start
        return ChunkedError(f"chunk {self.number}, of {self.size} octets, is not followed by CRLF at octet {offset}"
                            f" of {self.noun} (but by {found!r})", offset)

    def cut_short(self, held: int = 0) -> CutShort:
        """The error of a body whose octets end here: ``held`` of them past where :meth:`framing` last returned
        (in a chunk's data, those of its data taken; else those of an unfinished line)."""
        offset = self.at + held
        state = self._state
        if state == _DATA:
            message = (f"chunk {self.number}, of {self.size} octets, is cut short: {self.noun} ends after {held} of"
                       f" them, at its octet {offset}")
        elif state == _DATA_END:
            ends = "there" if not held else "after its CR"
            message = (f"chunk {self.number}, of {self.size} octets, is not followed by CRLF at octet {self.at} of"
                       f" {self.noun} ({self.noun} ends {ends})")
        elif state == _SIZE_LINE and held:
            message = (f"{self.noun} ends at octet {offset}, inside the size line of chunk {self.number + 1},"
                       " without its last chunk (a chunk of size 0)")
        elif state == _SIZE_LINE:
            after = f"after chunk {self.number}" if self.number else "before its first chunk"
            message = f"{self.noun} ends at octet {offset}, {after}, without its last chunk (a chunk of size 0)"
        else:
            message = f"{self.noun} ends at octet {offset}, inside the trailer section after its last chunk"
        return CutShort(message, offset)


class Readable(Protocol):
    """What :func:`pieces` reads a body from (a binary file, :class:`io.BufferedReader`)."""

    def read(self, size: int = -1, /) -> bytes: ...

    def readline(self, size: int = -1, /) -> bytes: ...


def pieces(raw: Readable, chunks: Chunks, first: bytes = b"", most: int = 1 << 16) -> Iterator[bytes]:
    """The data of the chunked body ``raw`` reads on from (``first``: its octets already read), at most ``most``
    octets a piece, its framing read by ``chunks``: each chunk's data read straight from ``raw``, a line of its
    framing at a time (at most ``max_line`` and its CRLF a read). :class:`ChunkedError`, and :class:`CutShort` when
    ``raw`` ends before the body does (:attr:`Chunks.last` then says whether its data was all given)."""
    held = first
    line = chunks.max_line + 2
    while True:
        at = chunks.framing(held, 0, len(held))
        held = held[at:]
        if chunks.ended:
            return
        if not chunks.in_data:
            more = raw.readline(line)
            if not more:
                raise chunks.cut_short(len(held))
            held += more
            continue
        left = chunks.size
        while left and held:
            piece, held = held[:min(left, most)], held[min(left, most):]
            left -= len(piece)
            yield piece
        while left:
            piece = raw.read(left if left < most else most)
            if not piece:
                raise chunks.cut_short(chunks.size - left)
            left -= len(piece)
            yield piece
        if not held:  # the CRLF after the data, then the next size line, read before the framing is looked at
            held = raw.readline(line)
            if held == b"\r\n":
                held += raw.readline(line)
