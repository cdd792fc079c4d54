"""Counting the blocks of a UTF-8 or one-octet-per-character text at memory speed ("cold" queries).

A cold query on a large text spends all its time here: before it can find
line ``n`` or character ``n``, :class:`~pdi.fragments.text.TextIndex` must
count, for every block of octets before it, the code points, the RFC 5147
characters and the line endings. Those counts are exact and need no decoding:

* UTF-8 code points = octets − continuation octets (``80``–``BF``);
* line endings = LF + CR + NEL − CR+LF pairs − CR+NEL pairs (a CR+LF or a
  CR+NEL is *one* ending, RFC 5147 §4.1);
* RFC 5147 characters = code points − CR+LF pairs − CR+NEL pairs (each
  two-code-point line ending is one character);
* a block is CRLF-canonical when CR = LF = CR+LF pairs and there is no NEL.

The block cuts are made by the caller so that no multi-octet character, no
CR+LF and no CR+NEL is split (``TextIndex._safe_cut``): a block's counts then
depend on its own octets only, which is what lets blocks be counted in any
order and on several threads.

How it is fast: two engines give the same counts.

* **Compiled, one pass** (``engine="compiled"``): the C module
  :mod:`pdi.fragments.text._count`, built by ``pip install`` where a C
  compiler is found, compares 32 octets at a time (SSE2/NEON, AVX2 where the
  CPU has it) and counts continuation octets, LFs, CRs, NELs, CR+LF and
  CR+NEL pairs in one read of the block, with the GIL released. About as
  fast as the memory can be read: ``wc -l`` speed.
* **numpy passes** (``engine="numpy"``, used when the module was not built):

  * **Few passes, few calls.** A comparison writes a mask into a scratch array
    allocated once (no allocation per block). A mask is counted by adding its
    octets (0 or 1) as ``uint64`` words, ``_LANES`` words per lane: eight
    independent octet lanes, none of which can exceed ``_LANES`` < 256, so no
    carry crosses a lane; this is faster than ``np.count_nonzero``. The
    partial sums of all masks of a block are added up by one call at the end.
  * **Work only where the octets occur.** Before counting CRs, CR+LF pairs or
    NELs, the block is searched for a CR (resp. an ``85`` octet) with the
    buffer's own ``find`` (``memchr`` speed); most texts have no CR or no NEL
    and skip those passes. A CR+NEL is looked for only when the block has both.
    Buffers without ``find`` (a ``memoryview``) take every pass: same counts.

With either engine, :func:`count_blocks` shares the blocks of a batch
between the calling thread and a small thread pool (numpy and the compiled
module both release the GIL while they count), one block at a time to
whichever thread is free; the counts come back in block order. With one CPU
it counts alone. ``PDI_TEXT_COUNTER=numpy`` in the environment makes
``engine="auto"`` choose the numpy passes even where the module is built.

Other charsets (UTF-16, UTF-32, multi-octet legacy codecs) are not counted
here: the index decodes them whole.
"""

from __future__ import annotations

import mmap
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, NamedTuple, cast

import numpy as np

from pdi.errors import UnsupportedError
from pdi.fragments.text.charset import Encoding

try:
    import pdi.fragments.text._count as _count
except ImportError:  # built without a C compiler: the numpy passes give the same counts
    _count = None  # type: ignore[assignment]  # the module's name holds None when it is missing

#: Whether the compiled one-pass counter was built.
COMPILED: Final = _count is not None
ENGINES: Final = ("auto", "compiled", "numpy")

Buffer = bytes | bytearray | memoryview | mmap.mmap

#: uint64 words of a mask added lane by lane; at most 255, so no octet lane overflows.
_LANES: Final = 128
#: Threads besides the caller's that count blocks (one less than the CPUs, at most 3).
WORKERS: Final = max(0, min(3, (os.cpu_count() or 1) - 1))
#: A batch is shared between threads only when there are at least this many blocks per thread.
_MIN_BLOCKS_PER_THREAD: Final = 2

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


class BlockCounts(NamedTuple):
    """What one block holds: code points, RFC 5147 characters, line endings, and CRLF-canonical or not."""

    cps: int
    chars: int
    endings: int
    canonical: bool


# the rows of BlockCounter._partials
_CONT, _LF_NEL, _CR, _TWO = range(4)
#: Octets of a mask that one column of partial sums covers (``_LANES`` words of eight).
_ROW: Final = 8 * _LANES
_MINUS_64: Final = np.int8(-64)
_C2: Final = np.uint8(0xC2)
_85: Final = np.uint8(0x85)


class BlockCounter:
    """Counts blocks of ``buf`` (UTF-8 or one octet per character) with scratch space for blocks up to ``capacity`` octets.

    One counter per thread: the scratch arrays are reused from block to block.
    ``engine`` is ``auto``, ``compiled`` or ``numpy`` (:func:`resolve_engine`);
    the compiled engine needs no scratch space. With the numpy engine:

    Each feature is marked in a boolean mask (``m1`` … ``m4``: an octet is a
    continuation octet, an LF, a CR, the first octet of a NEL …) and summed
    ``_LANES`` ``uint64`` words per lane into one row of ``_partials``; the
    rows are added up with a single call at the end: a block costs a few
    dozen numpy calls, whatever its size. Masks are padded with ``False`` to
    a whole number of rows.
    """

    def __init__(self, buf: Buffer, encoding: Encoding, capacity: int, engine: str = "auto") -> None:
        if encoding.kind not in ("utf-8", "single"):
            raise UnsupportedError(f"cannot count {encoding.kind} charsets by blocks")
        self.engine = resolve_engine(engine)
        self._buf = buf
        self._utf8 = encoding.kind == "utf-8"
        self._lf_octet, self._cr_octet, self._nel_octets = encoding.lf[0], encoding.cr[0], encoding.nel
        if self.engine == "compiled":
            return  # no scratch space: the compiled module counts in one pass
        self._lf = np.uint8(encoding.lf[0])
        self._cr = np.uint8(encoding.cr[0])
        self._cr_needle = encoding.cr
        # UTF-8 NEL is C2 85: look for the 85; a one-octet charset's NEL is one octet (or none)
        self._nel_exists = bool(encoding.nel)
        self._nel = np.uint8(encoding.nel[-1] if encoding.nel else 0)
        self._nel_needle = encoding.nel[-1:]
        self._findable = isinstance(buf, (bytes, bytearray, mmap.mmap))
        size = -(-max(1, capacity) // _ROW) * _ROW
        self._m1 = np.zeros(size, dtype=bool)
        self._m2 = np.zeros(size, dtype=bool)
        self._m3 = np.zeros(size, dtype=bool)
        self._m4 = np.zeros(size, dtype=bool)
        self._partials = np.zeros((4, size // _ROW), dtype=np.uint64)
        self._views: dict[int, tuple[Any, ...]] = {}  # padded length -> word views of the masks, partial rows

    def use(self, buf: Buffer) -> None:
        """Count blocks of ``buf`` from now on (the scratch space is kept: a stream's windows reuse it)."""
        self._buf = buf
        if self.engine != "compiled":
            self._findable = isinstance(buf, (bytes, bytearray, mmap.mmap))

    def _words(self, padded: int) -> tuple[Any, ...]:
        """The masks' first ``padded`` octets as ``(_LANES, rows)`` word arrays, and the partial sums to fill."""
        views = self._views.get(padded)
        if views is None:
            rows = padded // _ROW
            views = tuple(m[:padded].view(np.uint64).reshape(_LANES, rows) for m in (self._m1, self._m2, self._m3, self._m4))
            views += (self._partials[:, :rows],)
            self._views[padded] = views
        return views

    def _has(self, needle: bytes, a: int, b: int) -> bool:
        """Whether ``needle`` may occur in ``[a, b)``: ``find`` where the buffer has it, else ``True``."""
        if not self._findable:
            return True
        buf: bytes | bytearray | mmap.mmap = self._buf  # type: ignore[assignment]  # as _findable found it
        return buf.find(needle, a, b) >= 0

    def _count_compiled(self, a: int, b: int) -> BlockCounts:
        """:meth:`count` in one pass of the compiled module."""
        cont, lf, cr, nel, crlf, crnel = _count.count(
            self._buf, a, b, self._utf8, self._lf_octet, self._cr_octet, self._nel_octets
        )
        cps = b - a - cont
        two = crlf + crnel
        return BlockCounts(cps, cps - two, lf + cr + nel - two, nel == 0 and lf == cr == crlf)

    def count(self, a: int, b: int) -> BlockCounts:
        """Count the octets ``[a, b)`` (``b - a`` ≤ capacity; the cut splits no character or CR+LF/CR+NEL).

        Four numbers are summed: continuation octets (UTF-8), "LF or NEL"
        (``m1``), CRs (``m2``) and "a CR right before an LF or a NEL" (the
        two-code-point endings, ``m4``). Then line endings = CRs + LFs + NELs −
        two-code-point endings, and characters = code points − two-code-point
        endings. A block is CRLF-canonical when every ending is a pair and no
        pair is a CR+NEL (looked at only in that rare case).
        """
        if self.engine == "compiled":
            return self._count_compiled(a, b)
        n = b - a
        if n <= 0:
            return BlockCounts(0, 0, 0, True)
        c = np.frombuffer(self._buf, dtype=np.uint8, count=n, offset=a)
        padded = -(-n // _ROW) * _ROW
        w1, w2, _, w4, partials = self._words(padded)
        partials[:] = 0
        m1, m2, m3, m4 = self._m1, self._m2, self._m3, self._m4
        m1[n:padded] = m2[n:padded] = m3[n:padded] = m4[n - 1 : padded] = False
        reduce = np.add.reduce

        if self._utf8:
            np.less(c.view(np.int8), _MINUS_64, out=m1[:n])  # 80–BF as signed octets: -128 … -65
            reduce(w1, axis=0, out=partials[_CONT])
        np.equal(c, self._lf, out=m1[:n])
        has_nel = self._nel_exists and self._has(self._nel_needle, a, b)
        if has_nel:  # m3: the first octet of each NEL
            if self._utf8:  # C2 85
                np.equal(c[:-1], _C2, out=m3[: n - 1])
                np.equal(c[1:], _85, out=m4[: n - 1])
                np.logical_and(m3[: n - 1], m4[: n - 1], out=m3[: n - 1])
                m3[n - 1] = False
            else:  # one octet
                np.equal(c, self._nel, out=m3[:n])
            np.logical_or(m1[:n], m3[:n], out=m1[:n])
        reduce(w1, axis=0, out=partials[_LF_NEL])
        if self._has(self._cr_needle, a, b):
            np.equal(c, self._cr, out=m2[:n])
            reduce(w2, axis=0, out=partials[_CR])
            np.logical_and(m2[: n - 1], m1[1:n], out=m4[: n - 1])  # a CR whose next octet starts an LF or a NEL
            reduce(w4, axis=0, out=partials[_TWO])
        totals = partials.view(np.uint8).reshape(len(partials), -1).sum(axis=1, dtype=np.int64).tolist()
        cont, lf_nel, cr, two = totals
        cps = n - cont
        endings = cr + lf_nel - two
        canonical = endings == two and not (has_nel and np.any(m3[:n]))
        del c  # release the view of the buffer at once
        return BlockCounts(cps, cps - two, endings, bool(canonical))


def resolve_engine(engine: str) -> str:
    """The engine that ``engine`` (``auto``, ``compiled`` or ``numpy``) means on this machine.

    ``auto`` is what ``PDI_TEXT_COUNTER`` in the environment says (``auto``,
    ``compiled`` or ``numpy``; another value is an
    :class:`~pdi.errors.UnsupportedError`), and ``auto`` there, or no such
    variable, is ``compiled`` where the module was built. Asking for
    ``compiled`` where it was not built is an
    :class:`~pdi.errors.UnsupportedError`.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown counting engine {engine!r}: expected one of {', '.join(ENGINES)}")
    if engine == "auto":
        wanted = os.environ.get("PDI_TEXT_COUNTER", "auto") or "auto"
        if wanted not in ENGINES:
            raise UnsupportedError(f"PDI_TEXT_COUNTER={wanted!r}: expected one of {', '.join(ENGINES)}")
        if wanted == "auto":
            return "compiled" if COMPILED else "numpy"
        engine = wanted
    if engine == "compiled" and not COMPILED:
        raise UnsupportedError("the compiled text counter (pdi.fragments.text._count) was not built: "
                               "reinstall pdi where a C compiler is found")
    return engine


class _Batch:
    """The blocks of one batch, handed out one at a time to whichever thread asks first."""

    def __init__(self, cuts: list[int]) -> None:
        self.cuts = cuts
        self.counts: list[BlockCounts | None] = [None] * (len(cuts) - 1)
        self._next = 0
        self._lock = threading.Lock()

    def work(self, counter: BlockCounter) -> None:
        """Count blocks with ``counter`` until none is left."""
        cuts, counts = self.cuts, self.counts
        while True:
            with self._lock:
                i = self._next
                self._next += 1
            if i >= len(counts):
                return
            counts[i] = counter.count(cuts[i], cuts[i + 1])


def count_blocks(counters: Sequence[BlockCounter], cuts: list[int]) -> list[BlockCounts]:
    """Counts of the blocks ``[cuts[i], cuts[i + 1])``, in order, with one counter per thread.

    The calling thread (with ``counters[0]``) and up to ``len(counters) - 1``
    threads of a shared pool take the blocks one at a time, each the next
    block nobody has taken yet, so a thread that the machine's load slows
    down takes fewer blocks and the caller waits at most for the block
    another thread is counting. A batch of fewer than two blocks per thread
    is counted by the caller alone. The result does not depend on who
    counted what: each block is counted on its own.
    """
    global _pool, _pool_size
    blocks = len(cuts) - 1
    threads = max(1, min(len(counters), blocks // _MIN_BLOCKS_PER_THREAD))
    batch = _Batch(cuts)
    if threads > 1:
        with _pool_lock:  # a pool is replaced (by a larger one) only between submissions
            if _pool is None or _pool_size < threads - 1:
                if _pool is not None:  # too small for these counters: its threads end once idle
                    _pool.shutdown(wait=False)
                _pool_size = max(threads - 1, WORKERS)
                _pool = ThreadPoolExecutor(max_workers=_pool_size, thread_name_prefix="pdi-text-count")
            futures = [_pool.submit(batch.work, counters[i]) for i in range(1, threads)]
        try:
            batch.work(counters[0])
        finally:  # never return (or raise) while a worker still uses a counter's scratch arrays
            for future in futures:
                if not future.cancel():  # a worker that has not started (the pool is busy) is not waited for
                    future.result()
    else:
        batch.work(counters[0])
    return cast(list[BlockCounts], batch.counts)  # every block counted: no None left
