"""A position index over the octets of a text entity: characters, code points, lines ↔ octets.

The index cuts the octets into blocks of ``block_size`` octets (256 KiB by
default; a cut never falls inside a multi-octet character, a CR+LF or a
CR+NEL) and keeps, for the start of each block, the running counts of code
points, RFC 5147 characters, line endings and two-code-point line endings.

* For UTF-8 and one-octet-per-character charsets the counts of a block come
  from the octets themselves, never from a per-character Python loop or a
  decode: a UTF-8 code point starts at every octet that is not a
  continuation octet (``80``–``BF``); a line ending is found by its octets
  (``0A``, ``0D``, ``C2 85`` …). :mod:`~pdi.fragments.text.counting` counts
  them in one pass of its compiled module (numpy passes where it was not
  built) and shares the blocks of a batch between threads. Only the
  selection itself is decoded (and so validated).
* Blocks are counted lazily, only as far as a query needs ("cold" query), in
  batches that grow from one block to :data:`_MAX_BATCH`; once the whole
  entity has been counted every query is a binary search over the block
  table plus the decoding of one block ("indexed" query, logarithmic in the
  size of the entity).
* Or the block table was made beforehand, at deposit, from a stream of the
  octets (:class:`~pdi.fragments.text.table.TextTable`, given as ``table=``):
  then even the first query on a memory map of a 400 MB file is a binary
  search and the decoding of the block or two it falls in, and each block
  decoded is checked against the table's counts for it.
* Nothing but the selection is decoded to ``str``; the octets may be ``bytes``, ``bytearray``, a ``memoryview`` or an ``mmap``, so
  a file far larger than memory can be memory-mapped and queried.
* Other charsets (UTF-16, UTF-32, Shift_JIS, ISO-2022-JP …) are decoded whole
  with Python's codec, as one block: correct, not fast.

Counting models (code points are what the charset decodes to, after the BOM):

* ``cp``: code points. The PDI ``char`` scheme counts these over
  CRLF-canonical text, so CR and LF count one each.
* ``char``: RFC 5147 characters: code points, except that every line ending
  (CR+LF, LF, CR, NEL, CR+NEL) is one character.
* ``line``: RFC 5147 line positions: position ``k`` (``k ≥ 1``) is just after
  the ``k``-th line ending; the text's end is the last line position. A final
  line ending does not open an empty last line (``a\\n`` has one line).
"""

from __future__ import annotations

import codecs
import mmap
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from pdi.errors import IntegrityError, ParseError
from pdi.fragments.text.charset import DEFAULT_CHARSET, Encoding, encoding_for
from pdi.fragments.text.counting import WORKERS, BlockCounter, count_blocks, resolve_engine
from pdi.fragments.text.lines import LINE_ENDING_RE
from pdi.fragments.text.table import TextTable, safe_cut

Buffer = bytes | bytearray | memoryview | mmap.mmap

_ASTRAL: Final = re.compile("[\U00010000-\U0010ffff]")
_CACHE_BLOCKS: Final = 16
#: Most blocks one cold scan step counts (see ``TextIndex._scan``).
_MAX_BATCH: Final = 64
#: How far apart the marks of a general charset's decoding are (octets; ``TextIndex._decoding_marks``).
_MARK_OCTETS: Final = 64 << 10


@dataclass(frozen=True)
class _Local:
    """Where the code points and line endings of one block are (offsets local to the block)."""

    cps: int  # code points in the block
    ends: Sequence[int]  # code point offset just after each line ending
    twos: Sequence[int]  # twos[j]: two-code-point endings among the first j endings
    char_ends: Sequence[int]  # RFC 5147 character offset just after each line ending
    text: str | None = None  # the decoded block (general charsets only)
    starts: Any = None  # UTF-8: octet offset of each code point (numpy array)


def _local_from_text(text: str) -> _Local:
    ends: list[int] = []
    twos = [0]
    char_ends: list[int] = []
    n_two = 0
    for match in LINE_ENDING_RE.finditer(text):
        end = match.end()
        if end - match.start() == 2:
            n_two += 1
        ends.append(end)
        twos.append(n_two)
        char_ends.append(end - n_two)
    return _Local(len(text), ends, twos, char_ends, text=text)


def _shift_right(mask: Any, by: int = 1) -> Any:
    """``out[i] = mask[i - by]`` (``False`` for the first ``by``)."""
    out = np.zeros_like(mask)
    if by < len(mask):
        out[by:] = mask[:-by]
    return out


def _shift_left(mask: Any, by: int = 1) -> Any:
    """``out[i] = mask[i + by]`` (``False`` for the last ``by``)."""
    out = np.zeros_like(mask)
    if by < len(mask):
        out[:-by] = mask[by:]
    return out


class TextIndex:
    """Positions in the octets ``data`` of a text entity in ``charset``.

    ``charset`` is an IANA charset label (``None``: US-ASCII, RFC 5147 §1.1).
    The octets are not copied; they must not change while the index is used.
    ``engine`` picks how UTF-8 and one-octet texts are counted (``auto``,
    ``compiled`` or ``numpy``: :func:`~pdi.fragments.text.counting.resolve_engine`);
    every engine gives the same positions.

    ``table`` is the block table of these octets made beforehand (a
    :class:`~pdi.fragments.text.TextTable`, or the octets of its
    :meth:`~pdi.fragments.text.TextTable.to_bytes`): nothing is counted
    then, and the first query is a binary search and the decoding of the
    block or two it falls in. A table made for another charset, byte-order
    mark or size is an :class:`~pdi.errors.IntegrityError`, and so is a
    block whose counts, once decoded, are not the table's (``block_size`` is
    then the table's).
    """

    def __init__(
        self,
        data: Buffer,
        charset: str | None = None,
        *,
        block_size: int = 1 << 18,
        engine: str = "auto",
        table: TextTable | bytes | None = None,
    ) -> None:
        self._buf = data
        self._engine = resolve_engine(engine)
        self._size = len(data)
        self.encoding: Encoding = encoding_for(charset, self._slice(0, min(4, self._size)))
        #: The entity's charset as it was named (US-ASCII when none was, RFC 2046): RFC 5147 §2.3 compares
        #: registrations, and two may share a codec (ISO-8859-8-I and ISO-8859-8)
        self.charset: str = DEFAULT_CHARSET if charset is None else charset
        self._start = len(self.encoding.bom)
        self._block_size = max(16, block_size)
        self._bounds: list[int] = [self._start]  # octet offset where each block starts
        self._cps: list[int] = [0]  # code points before each block
        self._chars: list[int] = [0]  # RFC 5147 characters before each block
        self._endings: list[int] = [0]  # line endings before each block
        self._first_noncanonical: int | None = None  # first block that is not CRLF-canonical
        self._done = self._start >= self._size
        self._cache: dict[int, _Local] = {}
        self._batch = 1  # blocks the next _scan counts
        self._block_counters: list[BlockCounter] | None = None
        self._whole: str | None = None
        self._given: TextTable | None = None
        self._marks: list[tuple[int, int, Any]] | None = None  # (_decoding_marks)
        self._marks_refused = False
        if table is not None:
            self._use_table(TextTable.from_bytes(table) if isinstance(table, bytes) else table)
        elif self.encoding.kind == "general" and not self._done:
            self._index_whole()

    def _use_table(self, table: TextTable) -> None:
        table.check_encoding(self.encoding, self._size)
        self._given = table
        self._block_size = table.block_size
        self._bounds = list(table.bounds)
        self._cps = list(table.cps)
        self._chars = list(table.chars)
        self._endings = list(table.endings)
        self._first_noncanonical = table.first_noncanonical
        self._done = True

    def table(self) -> TextTable | None:
        """The complete block table (everything counted first), to keep and give back as ``table=``.

        ``None`` for a charset that is neither UTF-8 nor one octet per character:
        such a text is decoded whole, and a table would not spare that.
        """
        if self.encoding.kind == "general":
            return None
        if self._given is not None:
            return self._given
        self.build()
        return TextTable(
            codec=self.encoding.name, bom=self._start, size=self._size, block_size=self._block_size,
            bounds=tuple(self._bounds), cps=tuple(self._cps), chars=tuple(self._chars),
            endings=tuple(self._endings), first_noncanonical=self._first_noncanonical,
        )

    # ------------------------------------------------------------------ octets
    @property
    def data(self) -> Buffer:
        """The octets this index is over."""
        return self._buf

    @property
    def size(self) -> int:
        """Number of octets of the entity, BOM included."""
        return self._size

    @property
    def bom_length(self) -> int:
        """Octets of the byte-order mark at the start (0 if none)."""
        return self._start

    def _slice(self, a: int, b: int) -> bytes:
        chunk = self._buf[a:b]
        if isinstance(chunk, memoryview):
            return chunk.tobytes()
        return bytes(chunk) if isinstance(chunk, bytearray) else chunk

    def decode(self, start: int, end: int) -> str:
        """Decode the octets ``[start, end)`` (both on character boundaries)."""
        try:
            return codecs.decode(self._slice(start, end), self.encoding.body, "strict")
        except UnicodeDecodeError as exc:
            raise ParseError(
                f"the text is not valid {self.encoding.name} at octet {start + exc.start}",
                offset=start + exc.start,
                rule="charset",
            ) from None

    def octets(self, start: int, end: int) -> bytes:
        """The octets ``[start, end)``."""
        return self._slice(start, end)

    # ---------------------------------------------------------------- counting
    def _index_whole(self) -> None:
        text = self.decode(self._start, self._size)
        local = _local_from_text(text)
        self._whole = text
        self._cache[0] = local
        self._bounds.append(self._size)
        self._cps.append(len(text))
        n_two = local.twos[-1]
        self._chars.append(len(text) - n_two)
        self._endings.append(len(local.ends))
        if not _is_crlf_canonical(text):
            self._first_noncanonical = 0
        self._done = True

    def _safe_cut(self, a: int, b: int) -> int:
        """Move a block cut at ``b`` back so it splits no character and no two-part line ending."""
        return safe_cut(self._buf, a, b, self.encoding, min(a + self._block_size, self._size))

    def _octets(self, a: int, b: int) -> Any:
        """A numpy view (no copy) of the octets ``[a, b)``."""
        return np.frombuffer(self._buf, dtype=np.uint8, count=b - a, offset=a)

    def _scan(self) -> None:
        """Count the next batch of blocks (at least one).

        Batches grow from one block to :data:`_MAX_BATCH` blocks, doubling
        each time: a query near the start counts little, a query far into a
        large text counts in big batches that :func:`count_blocks` shares
        between threads. A batch may count up to ``_MAX_BATCH`` blocks past
        the block a query needs.
        """
        cuts = [self._bounds[-1]]
        while len(cuts) <= self._batch and cuts[-1] < self._size:
            a = cuts[-1]
            b = a + self._block_size
            cuts.append(self._size if b >= self._size else self._safe_cut(a, b))
        self._batch = min(2 * self._batch, _MAX_BATCH)
        for b, counts in zip(cuts[1:], count_blocks(self._counters(), cuts), strict=True):
            self._bounds.append(b)
            self._cps.append(self._cps[-1] + counts.cps)
            self._chars.append(self._chars[-1] + counts.chars)
            self._endings.append(self._endings[-1] + counts.endings)
            if self._first_noncanonical is None and not counts.canonical:
                self._first_noncanonical = len(self._bounds) - 2
        if self._bounds[-1] >= self._size:
            self._done = True
            self._block_counters = None  # their scratch arrays are not needed any more

    def _counters(self) -> list[BlockCounter]:
        """One block counter per counting thread, made once per index (their scratch arrays are reused)."""
        if self._block_counters is None:
            capacity = min(self._block_size, self._size - self._start)
            self._block_counters = [BlockCounter(self._buf, self.encoding, capacity, self._engine) for _ in range(WORKERS + 1)]
        return self._block_counters

    def build(self) -> TextIndex:
        """Count the whole entity now, so every later query is logarithmic. Returns ``self``."""
        while not self._done:
            self._scan()
        return self

    def _local(self, block: int) -> _Local:
        local = self._cache.get(block)
        if local is None:
            local = self._local_from_octets(self._bounds[block], self._bounds[block + 1])
            if self._given is not None:
                self._check_block(block, local)
            if len(self._cache) >= _CACHE_BLOCKS:
                del self._cache[next(iter(self._cache))]
            self._cache[block] = local
        return local

    def _check_block(self, block: int, local: _Local) -> None:
        """Refuse a given table whose counts for ``block`` are not those of its octets."""
        cps = self._cps[block + 1] - self._cps[block]
        endings = self._endings[block + 1] - self._endings[block]
        chars = self._chars[block + 1] - self._chars[block]
        found = (local.cps, len(local.ends), local.cps - local.twos[-1])
        if found != (cps, endings, chars):
            raise IntegrityError(
                f"the text index does not match the text: block {block} (octets {self._bounds[block]}"
                f" to {self._bounds[block + 1]}) holds {found[0]} code points, {found[1]} line endings and"
                f" {found[2]} characters, the index says {cps}, {endings} and {chars}"
            )

    def _local_from_octets(self, a: int, b: int) -> _Local:
        """Find code points and line endings of the octets ``[a, b)`` with vectorized comparisons."""
        enc = self.encoding
        c = self._octets(a, b)
        is_lf = c == enc.lf[0]
        is_cr = c == enc.cr[0]
        if enc.kind == "utf-8":
            nel_first = np.zeros_like(is_lf)
            nel_first[:-1] = (c[:-1] == 0xC2) & (c[1:] == 0x85)
            nel_last = _shift_right(nel_first)
            starts = np.flatnonzero(c.view(np.int8) >= -64)
        else:
            nel_first = nel_last = (c == enc.nel[0]) if enc.nel else np.zeros_like(is_lf)
            starts = None
        # the last octet of each line ending: an LF, the last octet of a NEL, a CR not followed by either
        end_mask = is_lf | nel_last | (is_cr & ~(_shift_left(is_lf) | _shift_left(nel_first)))
        end_octets = np.flatnonzero(end_mask) + 1
        # two-code-point endings: LF or NEL right after a CR
        nel_gap = 2 if enc.kind == "utf-8" else 1  # octets from the CR to the last octet of a NEL
        two = (is_lf & _shift_right(is_cr)) | (nel_last & _shift_right(is_cr, nel_gap))
        two_at_end = two[end_octets - 1] if len(end_octets) else np.zeros(0, dtype=bool)
        if starts is None:
            ends = end_octets
            cps = len(c)
        else:
            ends = np.searchsorted(starts, end_octets)
            cps = len(starts)
        twos = np.concatenate(([0], np.cumsum(two_at_end, dtype=np.int64)))
        char_ends = ends - twos[1:]
        del c
        return _Local(cps, ends.tolist(), twos.tolist(), char_ends.tolist(), starts=starts)

    def _block_of(self, table: list[int], value: int) -> int | None:
        """The block whose running count in ``table`` covers ``value``, or ``None`` past the end."""
        if value < 0:
            raise ParseError(f"a position cannot be negative ({value})", rule="position")
        while not self._done and table[-1] <= value:
            self._scan()
        if value >= table[-1]:
            return None
        return bisect_right(table, value) - 1

    # ------------------------------------------------------------------ totals
    @property
    def cp_count(self) -> int:
        """Number of code points (BOM excluded)."""
        self.build()
        return self._cps[-1]

    @property
    def char_count(self) -> int:
        """Number of RFC 5147 characters (every line ending is one; BOM excluded)."""
        self.build()
        return self._chars[-1]

    @property
    def ending_count(self) -> int:
        """Number of line endings."""
        self.build()
        return self._endings[-1]

    @property
    def ends_with_line_ending(self) -> bool:
        """True when the last character of the text is a line ending."""
        self.build()
        if len(self._bounds) < 2:
            return False
        last = self._local(len(self._bounds) - 2)
        return bool(last.ends) and last.ends[-1] == last.cps

    @property
    def line_count(self) -> int:
        """Number of lines (RFC 5147 §2.1.2): a text without line endings is one line."""
        return self.ending_count + (0 if self.ends_with_line_ending else 1)

    def is_crlf_canonical(self, through_cp: int | None = None) -> bool:
        """True when every line ending up to code point ``through_cp`` (default: all) is CR+LF."""
        if through_cp is None:
            self.build()
            return self._first_noncanonical is None
        block = self._block_of(self._cps, through_cp)
        last = len(self._bounds) - 2 if block is None else block
        return self._first_noncanonical is None or self._first_noncanonical > last

    # ------------------------------------------------------------- conversions
    def clamp_cp(self, cp: int) -> tuple[int, bool]:
        """``cp`` if it is a code point position of the text, else the end; and whether it was clamped."""
        if self._block_of(self._cps, cp) is None:
            return self._cps[-1], cp > self._cps[-1]
        return cp, False

    def clamp_char(self, char: int) -> tuple[int, bool]:
        """``char`` if it is an RFC 5147 character position of the text, else the end; and whether it was clamped."""
        if self._block_of(self._chars, char) is None:
            return self._chars[-1], char > self._chars[-1]
        return char, False

    def cp_to_octet(self, cp: int) -> int:
        """Octet offset of code point position ``cp`` (``0 ≤ cp ≤ cp_count``)."""
        block = self._block_of(self._cps, cp)
        if block is None:
            return self._size
        rest = cp - self._cps[block]
        if rest == 0:
            return self._bounds[block]
        return self._bounds[block] + self._local_octets(block, rest)

    def _local_octets(self, block: int, cps: int) -> int:
        enc = self.encoding
        if enc.kind == "single":
            return cps
        local = self._local(block)
        if enc.kind == "utf-8":
            if cps >= local.cps:
                return self._bounds[block + 1] - self._bounds[block]
            return int(local.starts[cps])
        text = local.text or ""
        body = enc.body
        if body.startswith("utf-32"):
            return 4 * cps
        if body.startswith("utf-16"):
            return 2 * (cps + len(_ASTRAL.findall(text, 0, cps)))
        return self._search_octets(cps)

    def _search_octets(self, cps: int) -> int:
        """Smallest octet count whose incremental decoding yields ``cps`` code points (any codec).

        A binary search over the octets, each step decoding a prefix: not from the text's start each step (a
        query on 10 MB of Shift_JIS decoded 47 prefixes, 1.5 s), but from the nearest of the marks
        (:meth:`_decoding_marks`) the decoder's state was kept at, so a step decodes at most
        :data:`_MARK_OCTETS`."""
        marks = self._decoding_marks()
        if marks is None:  # a decoder whose state cannot be kept: each step from the start
            return self._search_from(0, self._size - self._start, 0, None, cps)
        after = bisect_left(marks, cps, key=lambda mark: mark[1])  # the first mark with at least cps decoded
        if after == len(marks):  # (past the last mark: the octets' end, with what never decodes)
            return self._size - self._start
        lo = marks[after - 1][0] + 1 if after else 0
        base, decoded, state = marks[after - 1] if after else (0, 0, None)
        return self._search_from(lo, marks[after][0], decoded, (base, state), cps)

    def _search_from(self, lo: int, hi: int, decoded: int, mark: tuple[int, Any] | None, cps: int) -> int:
        """The smallest ``n`` in ``[lo, hi]`` whose first ``n`` octets decode to at least ``cps`` code points,
        each prefix decoded from ``mark`` (its octet count and the decoder's state there, ``decoded`` code points
        before it), or from the start when None (``decoded`` 0)."""
        base, state = mark if mark is not None else (0, None)
        while lo < hi:
            mid = (lo + hi) // 2
            decoder = codecs.getincrementaldecoder(self.encoding.body)("strict")
            if state is not None:
                decoder.setstate(state)
            got = decoded + len(decoder.decode(self._slice(self._start + base, self._start + mid), False))
            if got >= cps:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def _decoding_marks(self) -> list[tuple[int, int, Any]] | None:
        """``(octets fed, code points decoded, the decoder's state)`` after each :data:`_MARK_OCTETS` of the text
        (after its BOM) fed to one incremental decoder, the last at its end; made once, by one decoding pass.
        None when the codec's decoder cannot give its state and take it again (``getstate``/``setstate``)."""
        if self._marks is not None or self._marks_refused:
            return self._marks
        decoder = codecs.getincrementaldecoder(self.encoding.body)("strict")
        marks: list[tuple[int, int, Any]] = []
        decoded = 0
        try:
            for at in range(0, self._size - self._start, _MARK_OCTETS):
                end = min(at + _MARK_OCTETS, self._size - self._start)
                decoded += len(decoder.decode(self._slice(self._start + at, self._start + end), False))
                marks.append((end, decoded, decoder.getstate()))
            if marks:  # a state given is taken again (a decoder without setstate, or that refuses its own, fails here)
                codecs.getincrementaldecoder(self.encoding.body)("strict").setstate(marks[0][2])
        except (AttributeError, TypeError, ValueError):  # (a UnicodeError is a ValueError)
            self._marks_refused = True
            return None
        self._marks = marks
        return marks

    def char_to_cp(self, char: int) -> tuple[int, bool]:
        """Code point position of RFC 5147 character position ``char``, and whether it was clamped."""
        block = self._block_of(self._chars, char)
        if block is None:
            total = self._chars[-1]
            return self._cps[-1], char > total
        local = self._local(block)
        rest = char - self._chars[block]
        j = bisect_right(local.char_ends, rest)
        return self._cps[block] + rest + local.twos[j], False

    def cp_to_char(self, cp: int, *, round_up: bool = False) -> int:
        """RFC 5147 character position of code point position ``cp``.

        A position between the two code points of a CR+LF or CR+NEL is not a
        character position; it becomes the position before that line ending,
        or after it with ``round_up``.
        """
        block = self._block_of(self._cps, cp)
        if block is None:
            return self._chars[-1]
        local = self._local(block)
        rest = cp - self._cps[block]
        j = bisect_right(local.ends, rest)
        inside = (
            j < len(local.ends)
            and local.twos[j + 1] > local.twos[j]
            and local.ends[j] - 1 == rest
        )
        if inside:
            return self._chars[block] + rest - 1 - local.twos[j] + (1 if round_up else 0)
        return self._chars[block] + rest - local.twos[j]

    def line_to_cp(self, line: int) -> tuple[int, bool]:
        """Code point position of RFC 5147 line position ``line``, and whether it was clamped."""
        if line < 0:
            raise ParseError(f"a line position cannot be negative ({line})", rule="position")
        if line == 0:
            return 0, False
        block = self._block_of(self._endings, line - 1)
        if block is None:
            total_cp = self._cps[-1]
            return total_cp, line > self.line_count
        local = self._local(block)
        return self._cps[block] + local.ends[line - 1 - self._endings[block]], False

    def octet_to_cp(self, octet: int) -> int:
        """Code point position of octet offset ``octet`` (which must start a character)."""
        if octet < 0:
            raise ParseError(f"an octet offset cannot be negative ({octet})", rule="position")
        if octet <= self._start:
            return 0
        block = self._block_of(self._bounds, octet)
        if block is None:
            return self._cps[-1]
        rest = octet - self._bounds[block]
        if rest == 0:
            return self._cps[block]
        enc = self.encoding
        if enc.kind == "single":
            return self._cps[block] + rest
        if enc.kind == "utf-8":
            return self._cps[block] + int(np.searchsorted(self._local(block).starts, rest))
        decoder = codecs.getincrementaldecoder(enc.body)("strict")
        return len(decoder.decode(self._slice(self._start, octet), False))

    def text(self, cp_start: int, cp_end: int) -> str:
        """The code points ``[cp_start, cp_end)`` as a string."""
        if self._whole is not None:
            return self._whole[cp_start:cp_end]
        return self.decode(self.cp_to_octet(cp_start), self.cp_to_octet(cp_end))

    def whole_text(self) -> str:
        """The whole text (BOM removed). Decodes everything: for small texts and regular expressions."""
        if self._whole is not None:
            return self._whole
        return self.decode(self._start, self._size)

    def line_of_cp(self, cp: int) -> int:
        """Number of line endings that end at or before code point ``cp``."""
        block = self._block_of(self._cps, cp)
        if block is None:
            return self._endings[-1]
        local = self._local(block)
        return self._endings[block] + bisect_left(local.ends, cp - self._cps[block] + 1)


    # ------------------------------------------- the CRLF-canonical count (PDI char)
    def _canonical_before(self, block: int) -> int:
        """Code points of the CRLF-canonical text before ``block``: every line ending becomes two."""
        return self._chars[block] + self._endings[block]

    def canonical_count(self) -> int:
        """Code points of the CRLF-canonical form of the text."""
        self.build()
        return self._canonical_before(len(self._chars) - 1)

    def canonical_to_char(self, pos: int) -> tuple[int, bool, bool]:
        """The RFC 5147 character position of code point ``pos`` of the CRLF-canonical text.

        Returns ``(char, inside, clamped)``: ``inside`` when ``pos`` falls
        between the CR and the LF of a line ending (``char`` is then the
        position before that ending), ``clamped`` when ``pos`` is past the end.
        The text is not rewritten: counts come from the index.
        """
        if pos < 0:
            raise ParseError(f"a position cannot be negative ({pos})", rule="position")
        while not self._done and self._canonical_before(len(self._chars) - 1) <= pos:
            self._scan()
        last = len(self._chars) - 1
        total = self._canonical_before(last)
        if pos >= total:
            return self._chars[last], False, pos > total
        lo, hi = 0, last - 1  # the last block whose canonical start is <= pos
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._canonical_before(mid) <= pos:
                lo = mid
            else:
                hi = mid - 1
        block = lo
        local = self._local(block)
        rest = pos - self._canonical_before(block)
        ends = local.char_ends  # ending j ends at canonical offset ends[j] + j + 1
        lo, hi = 0, len(ends)
        while lo < hi:
            mid = (lo + hi) // 2
            if ends[mid] + mid + 1 <= rest:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(ends) and ends[lo] + lo == rest:
            return self._chars[block] + ends[lo] - 1, True, False
        return self._chars[block] + rest - lo, False, False

    def char_to_canonical(self, char: int) -> int:
        """The code point position in the CRLF-canonical text of RFC 5147 character position ``char``.

        Positions past the end are the end.
        """
        char, _ = self.clamp_char(char)
        cp, _ = self.char_to_cp(char)
        return char + self.line_of_cp(cp)


def _is_crlf_canonical(text: str) -> bool:
    crlf = text.count("\r\n")
    return text.count("\r") == crlf and text.count("\n") == crlf and "\x85" not in text
