"""The block table of a text, made once (at deposit) from a stream of octets, and kept as octets.

:class:`~pdi.fragments.text.TextIndex` answers a position query with a binary
search over a table of running counts, one row per block of octets (code
points, RFC 5147 characters and line endings before each block, and the first
block that is not CRLF-canonical), and the decoding of one or two blocks.
Counted lazily, that table costs a read of the text up to the position asked
for. :class:`TextTable` is that table made ahead of time:

* :meth:`TextTable.from_chunks` counts it from an iterable of chunks of any
  sizes (a chunk may end inside a multi-octet character or between the CR and
  the LF of a line ending) in bounded memory: never more than one window of
  :data:`WINDOW` octets plus one block, whatever the text's size. The blocks
  are cut exactly where a lazily counting :class:`TextIndex` cuts them, and
  counted by the same block counter (the compiled one-pass module, or its
  numpy passes), so the table is the one that index would reach.
  UTF-8 and one-octet-per-character charsets only: a text in any other
  charset (UTF-16, UTF-32, Shift_JIS …) gets no table (``None``), since
  :class:`TextIndex` decodes such a text whole anyway.
* :meth:`TextTable.to_bytes` and :meth:`TextTable.from_bytes` keep it as
  16 octets per block (100 KB for 400 MB in blocks of :data:`BLOCK_SIZE`), sealed by
  :mod:`pdi.fragments.sealed` (magic ``PDIT``, a layout version, a digest).
  The header names the charset's codec, the byte-order mark, the block size
  and the text's size in octets, so an index given for other octets or
  another charset is refused (:class:`~pdi.errors.IntegrityError`) by
  ``TextIndex(data, charset, table=…)``.

Payload layout, version 1 (little-endian)::

    u32 block size   u64 size of the text in octets   u8 octets of the BOM
    i64 first block that is not CRLF-canonical (-1: none)
    u32 n blocks     then the codec name (u8 length, ASCII)
    u32[n] octets of each block, u32[n] code points,
    u32[n] RFC 5147 characters, u32[n] line endings

Pure: no I/O; the chunks come from whoever reads the file.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from pdi._wording import plural
from pdi.errors import IntegrityError
from pdi.fragments.sealed import Reader, seal, unseal
from pdi.fragments.text.charset import Encoding, encoding_for
from pdi.fragments.text.counting import WORKERS, BlockCounter, BlockCounts, count_blocks

#: The block size of a table made beforehand: 64 KiB. A query decodes one or two blocks (about a
#: millisecond each at this size, four at the 256 KiB of a lazily counting index, whose cold scan
#: gains from larger blocks); the table takes 16 octets per block, 100 KB for 400 MB.
BLOCK_SIZE: Final = 1 << 16
#: At most this many octets of a chunk are counted at a time (a larger chunk is taken in windows).
WINDOW: Final = 4 << 20
MAGIC: Final = b"PDIT"
VERSION: Final = 1
_WHAT: Final = "text index"
_HEAD: Final = struct.Struct("<IQBqI")
_MAX_BLOCK: Final = 1 << 31


def safe_cut(buf: Any, a: int, b: int, encoding: Encoding, fallback: int) -> int:
    """Move a block cut at ``b`` back so it splits no character and no two-part line ending.

    Reads ``buf[a:b + 2]`` at most (``b`` must be inside ``buf``); a cut that
    would move back to ``a`` or before (octets that are not valid text) is
    made at ``fallback`` instead. Both :class:`TextIndex` and the streaming
    builder cut here, so they cut alike.
    """
    if encoding.kind == "utf-8":
        while b > a and 0x80 <= buf[b] < 0xC0:
            b -= 1
    if b > a and buf[b - 1] == encoding.cr[0]:
        rest = bytes(buf[b : b + max(len(encoding.lf), len(encoding.nel))])
        if rest.startswith(encoding.lf) or (encoding.nel and rest.startswith(encoding.nel)):
            b -= 1
    if b <= a:  # only on octets that are not valid text; decoding will say where
        b = fallback
    return b


@dataclass(frozen=True)
class TextTable:
    """The complete block table of a text (see the module docstring).

    ``bounds[i]`` is the octet offset where block ``i`` starts (``bounds[-1]``
    is ``size``); ``cps``, ``chars`` and ``endings`` hold the code points, RFC
    5147 characters and line endings before each block (one more entry than
    there are blocks, the last being the totals). ``codec`` is the Python
    codec of the charset, ``bom`` the octets of the byte-order mark.
    """

    codec: str
    bom: int
    size: int
    block_size: int
    bounds: tuple[int, ...]
    cps: tuple[int, ...]
    chars: tuple[int, ...]
    endings: tuple[int, ...]
    first_noncanonical: int | None

    @property
    def blocks(self) -> int:
        """The number of blocks."""
        return len(self.bounds) - 1

    # ------------------------------------------------------------ building
    @classmethod
    def from_chunks(
        cls,
        chunks: Iterable[bytes | bytearray | memoryview],
        charset: str | None = None,
        *,
        block_size: int = BLOCK_SIZE,
        engine: str = "auto",
    ) -> TextTable | None:
        """Count the table of the text that ``chunks`` hold, in order, in ``charset`` (``None``: US-ASCII).

        Returns ``None`` for a charset that is neither UTF-8 nor one octet per
        character (the chunks are then not read past the first four octets).
        Raises :class:`~pdi.errors.UnsupportedError` for a label that names no
        charset. Memory: one window (:data:`WINDOW` octets, or the chunk if
        smaller) and one block, besides the table itself.
        """
        return _StreamCounter(charset, block_size, engine).run(chunks)

    # ------------------------------------------------------------ octets
    def to_bytes(self) -> bytes:
        """The table, sealed (see the module docstring for the layout)."""
        codec = self.codec.encode("ascii")
        head = _HEAD.pack(
            self.block_size, self.size, self.bom,
            -1 if self.first_noncanonical is None else self.first_noncanonical, self.blocks,
        )
        arrays = b"".join(
            np.diff(np.asarray(column, dtype=np.int64)).astype("<u4").tobytes()
            for column in (self.bounds, self.cps, self.chars, self.endings)
        )
        return seal(MAGIC, VERSION, head + bytes([len(codec)]) + codec + arrays)

    @classmethod
    def from_bytes(cls, data: bytes) -> TextTable:
        """The table :meth:`to_bytes` wrote; a damaged, foreign or inconsistent one is an :class:`~pdi.errors.IntegrityError`."""
        reader = Reader(unseal(data, MAGIC, VERSION, _WHAT), _WHAT)
        block_size, size, bom, first, blocks = reader.unpack(_HEAD)
        (length,) = reader.take(1)
        try:
            codec = bytes(reader.take(length)).decode("ascii")
        except UnicodeDecodeError:
            raise reader.damaged("its codec name is not ASCII") from None
        columns = [np.frombuffer(reader.take(4 * blocks), dtype="<u4").astype(np.int64) for _ in range(4)]
        reader.end()
        octets, cps, chars, endings = columns
        if not 16 <= block_size <= _MAX_BLOCK or bom > 4 or bom + int(octets.sum()) != size:
            raise reader.damaged(f"its blocks do not add up to its {plural(size, 'octet')}")
        if blocks and (octets.min() <= 0 or octets.max() > block_size):
            raise reader.damaged(f"a block is empty or larger than its block size {block_size}")
        if bool(np.any(cps > octets)) or bool(np.any(chars > cps)) or bool(np.any(endings > cps)):
            raise reader.damaged("a block holds more code points, characters or line endings than octets")
        if not -1 <= first < max(blocks, 1):
            raise reader.damaged(f"its first non-canonical block {first} is not one of its {blocks} blocks")

        def running(column: Any, start: int = 0) -> tuple[int, ...]:
            return (start, *(np.cumsum(column) + start).tolist())

        return cls(
            codec=codec, bom=bom, size=size, block_size=block_size,
            bounds=running(octets, bom), cps=running(cps), chars=running(chars), endings=running(endings),
            first_noncanonical=None if first < 0 else first,
        )

    def check_encoding(self, encoding: Encoding, size: int) -> None:
        """Refuse this table for ``size`` octets read as ``encoding`` unless it was made for them."""
        if encoding.kind == "general":
            raise IntegrityError(f"a text index cannot serve a text in {encoding.name}: it decodes whole")
        if encoding.name != self.codec or len(encoding.bom) != self.bom:
            raise IntegrityError(
                f"the text index was made for {self.codec} with a {self.bom}-octet byte-order mark,"
                f" not for {encoding.name} with {len(encoding.bom)}"
            )
        if size != self.size:
            raise IntegrityError(f"the text index was made for {plural(self.size, 'octet')}, not for these {size}")


class _StreamCounter:
    """One run of :meth:`TextTable.from_chunks`: windows of the stream, cut and counted as a :class:`TextIndex` would."""

    def __init__(self, charset: str | None, block_size: int, engine: str) -> None:
        self.charset = charset
        self.block_size = max(16, block_size)
        if self.block_size > _MAX_BLOCK:
            raise ValueError(f"a block size of {block_size} octets is more than {_MAX_BLOCK}")
        self.engine = engine
        self.encoding: Encoding | None = None
        self.counters: list[BlockCounter] = []
        self.bounds: list[int] = []
        self.counts: list[BlockCounts] = []

    def run(self, chunks: Iterable[bytes | bytearray | memoryview]) -> TextTable | None:
        pending = b""  # the octets from self.bounds[-1] on (before the encoding is known: from 0)
        offset = 0  # the stream offset of pending[0]
        for chunk in chunks:
            view = memoryview(chunk).cast("B")
            for at in range(0, len(view), WINDOW):
                pending = b"".join((pending, view[at : at + WINDOW]))
                if self.encoding is None:
                    if len(pending) < 4:
                        continue
                    if not self._begin(pending):
                        return None
                    pending, offset = pending[self.bounds[0] :], self.bounds[0]
                used = self._count(pending, offset, final=False)
                pending, offset = pending[used:], offset + used
        if self.encoding is None and not self._begin(pending):
            return None
        if self.encoding is not None and offset < self.bounds[0]:  # the stream was all BOM, or shorter
            pending, offset = pending[self.bounds[0] :], self.bounds[0]
        self._count(pending, offset, final=True)
        return self._table(offset + len(pending))

    def _begin(self, head: bytes) -> bool:
        """Decide the encoding from the first octets; ``False`` when this charset gets no table."""
        self.encoding = encoding_for(self.charset, head[:4])
        if self.encoding.kind == "general":
            return False
        self.bounds = [len(self.encoding.bom)]
        return True

    def _count(self, window: bytes, offset: int, *, final: bool) -> int:
        """Cut and count the blocks that ``window`` (stream offset ``offset``) holds whole; the octets used.

        A block ``[a, a + block size)`` is cut only once the two octets after
        it are in the window (the CR+LF and NEL tests look that far), unless
        the stream has ended (``final``): then the last block ends at the end.
        """
        encoding = self.encoding
        assert encoding is not None
        size, bs = len(window), self.block_size
        cuts = [0]
        while cuts[-1] < size:
            a = cuts[-1]
            b = a + bs
            if b >= size:
                if not final:
                    break
                cuts.append(size)
            elif b + 2 > size and not final:
                break
            else:
                cuts.append(safe_cut(window, a, b, encoding, b))
        if len(cuts) > 1:
            for counter in self._counters(window):
                counter.use(window)
            self.counts.extend(count_blocks(self.counters, cuts))
            self.bounds.extend(offset + cut for cut in cuts[1:])
        return cuts[-1]

    def _counters(self, window: bytes) -> Sequence[BlockCounter]:
        if not self.counters:
            assert self.encoding is not None
            self.counters = [
                BlockCounter(window, self.encoding, self.block_size, self.engine) for _ in range(WORKERS + 1)
            ]
        return self.counters

    def _table(self, size: int) -> TextTable:
        encoding = self.encoding
        assert encoding is not None
        cps, chars, endings = [0], [0], [0]
        first: int | None = None
        for i, counts in enumerate(self.counts):
            cps.append(cps[-1] + counts.cps)
            chars.append(chars[-1] + counts.chars)
            endings.append(endings[-1] + counts.endings)
            if first is None and not counts.canonical:
                first = i
        return TextTable(
            codec=encoding.name, bom=len(encoding.bom), size=size, block_size=self.block_size,
            bounds=tuple(self.bounds), cps=tuple(cps), chars=tuple(chars), endings=tuple(endings),
            first_noncanonical=first,
        )
