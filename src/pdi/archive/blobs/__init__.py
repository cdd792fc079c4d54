"""Blobs: the deposited octets, written from a stream while hashed, read back in verified chunks.

A blob is named by the SHA-256 of its octets, the fixity of record. Beside
that whole-blob digest the catalog keeps one SHA-256 per :data:`CHUNK_SIZE`
octets (the last chunk may be shorter): a read of any byte range hashes only
the chunks it touches and refuses one that no longer matches
(:class:`~pdi.errors.IntegrityError` naming the chunk and its octets), so
fixity is checked on every read at the cost of the range, and a flipped
octet anywhere is still found by ``pdi verify``, which hashes everything.
A :class:`FileReader` given a :class:`~pdi.archive.blobs.memo.FixityMemo`
trusts the chunks an earlier read of the same, unchanged file verified
(:mod:`pdi.archive.blobs.memo` says when a file counts as unchanged).

Nothing here holds a whole blob: :class:`Digests` takes the octets as they
stream in (from a file, standard input or an HTTP body) and :class:`ChunkedReader`
gives them back chunk by chunk.

Where the blobs live is a :class:`~pdi.archive.blobs.seam.BlobStore`'s business, one module each:
files beside a SQLite catalog (:mod:`pdi.archive.blobs.files`), rows in
PostgreSQL (:mod:`pdi.archive.blobs.large_objects`), objects in an
S3-compatible store (:mod:`pdi.archive.blobs.s3`). A catalog holds one
(``catalog.blobs``) and never inherits one; what a blob store may ask of the
catalog that holds it is :class:`~pdi.archive.blobs.seam.BlobCatalog`, whose rules (staging rows, the
removal lock, what "held" means) are written once, on the catalog's side, for
any catalog with any blob store.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import hashlib
import mmap
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, BinaryIO, overload

from pdi._closing import Closing
from pdi.archive.blobs.memo import FixityMemo, Identity, identity, written_back
from pdi.errors import DamagedError

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor
    from dataclasses import dataclass

    from pdi.fragments import FragmentResult
else:
    from pdi._later import dataclass

#: A SHA-256 as pdi writes it (a blob's name, a catalog's digest): 64 lower-case hex digits.
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
#: Octets per chunk digest (1 MiB): a range read hashes at most this much more than it returns.
CHUNK_SIZE = 1 << 20

#: How much a stream is read at a time.
READ_SIZE = 1 << 20

_DIGEST = 32

# Chunk digests are computed on a second thread while the calling one computes
# the whole SHA-256 (hashlib releases the GIL on large buffers): the two passes
# over the octets then cost about one on a machine with two cores.
# The pool is made when first used (a command that only reads never imports it).
@functools.cache
def _hasher() -> ThreadPoolExecutor:
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=2, thread_name_prefix="pdi-chunk-digests")


@dataclass(frozen=True)
class BlobInfo:
    """What the catalog knows of a blob: its SHA-256, size, and one SHA-256 per chunk.

    ``chunks`` is the concatenated 32-octet digests of each ``chunk_size``
    octets in order; empty for a blob stored before chunk digests were kept
    (then a read verifies the whole blob).
    """

    sha256: str
    size: int
    chunk_size: int = CHUNK_SIZE
    chunks: bytes = b""

    @property
    def chunked(self) -> bool:
        """Whether chunk digests are known (a blob stored by this version of pdi)."""
        return bool(self.chunks) or self.size == 0

    def chunk_digest(self, index: int) -> bytes:
        """The SHA-256 of chunk ``index``."""
        return self.chunks[index * _DIGEST : (index + 1) * _DIGEST]

    def chunk_count(self) -> int:
        """How many chunks the blob has (0 for an empty blob)."""
        return -(-self.size // self.chunk_size)


def _chunk_digests(chunks: list[bytearray | memoryview]) -> bytes:
    return b"".join(hashlib.sha256(c).digest() for c in chunks)


class Digests:
    """The whole SHA-256, the chunk digests and the size of octets fed in order, in any pieces.

    A piece given to :meth:`update` is not kept: it may be a view of a buffer
    read into again as soon as ``update`` returns. The first chunk is hashed
    once, by the whole's hasher (its digest is that hasher's state where the
    chunk ends, ``copy().digest()``): a blob of one chunk, most of them, is
    hashed once and not copied at all. The octets after the first chunk
    are copied, a chunk to a buffer (a whole chunk of ``bytes``, which
    cannot change, is kept as it is), and hashed on a second thread while
    this one hashes the whole (hashlib releases the GIL on large buffers),
    at most about 24 MiB of them waiting.
    """

    def __init__(self, chunk_size: int = CHUNK_SIZE) -> None:
        self.chunk_size = chunk_size
        self._whole = hashlib.sha256()
        self._first = b""  # the first chunk's digest, once it is complete
        self._filling = bytearray()  # octets of the chunk being filled, after the first
        self._full: list[bytearray | memoryview] = []  # whole chunks after the first, not yet handed to the hasher
        self._futures: list[Future[bytes]] = []
        self.size = 0

    def update(self, data: bytes | bytearray | memoryview) -> None:
        """Feed the next octets (used before this returns, never kept)."""
        view = data if isinstance(data, memoryview) else memoryview(data)
        if view.ndim != 1 or view.itemsize != 1:
            view = view.cast("B")
        count = len(view)
        if not count:
            return
        first_left = self.chunk_size - self.size  # octets of the first chunk yet to come (if above 0)
        self.size += count
        if first_left > 0:
            if count < first_left:
                self._whole.update(view)
                return
            # the first chunk ends in this piece: its digest is the whole's state there (hashed once)
            self._whole.update(view[:first_left])
            self._first = self._whole.copy().digest()
            view = view[first_left:]
            if not view:
                return
        self._whole.update(view)
        chunk_size = self.chunk_size
        kept = isinstance(view.obj, bytes)  # octets that cannot change: a whole chunk of them is kept, not copied
        while view:
            if kept and not self._filling and len(view) >= chunk_size:
                self._full.append(view[:chunk_size])
                view = view[chunk_size:]
                continue
            room = chunk_size - len(self._filling)
            self._filling += view[:room]
            view = view[room:]
            if len(self._filling) == chunk_size:
                self._full.append(self._filling)
                self._filling = bytearray()
        if len(self._full) >= 8:
            self._flush()

    def _flush(self) -> None:
        if self._full:
            self._futures.append(_hasher().submit(_chunk_digests, self._full))
            self._full = []
            if len(self._futures) >= 3:
                self._futures[-3].result()  # at most about 24 MiB waiting to be hashed

    def finish(self) -> BlobInfo:
        """The blob's :class:`BlobInfo` (the digests of every chunk, the last one short)."""
        whole = self._whole.digest()
        if self.size <= self.chunk_size:  # one chunk (or none): its digest is the whole's
            return BlobInfo(whole.hex(), self.size, self.chunk_size, whole if self.size else b"")
        if self._filling:
            self._full.append(self._filling)
            self._filling = bytearray()
        if not self._futures:  # a small blob: hashed here, not handed to a thread and waited for
            rest, self._full = _chunk_digests(self._full), []
        else:
            self._flush()
            rest = b"".join(f.result() for f in self._futures)
            self._futures = []
        return BlobInfo(whole.hex(), self.size, self.chunk_size, self._first + rest)


#: Octets to store: bytes in hand, a binary file (read to its end), or an iterable of pieces (each copied as it
#: comes: a view of a buffer read into again is used before the next piece is asked for).
Octets = bytes | bytearray | memoryview | BinaryIO | Iterable[bytes | bytearray | memoryview]


def pieces(source: Octets, read_size: int = READ_SIZE) -> Iterator[bytes]:
    """The octets of ``source`` in pieces of about ``read_size``, never all at once."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        view = memoryview(source)
        for start in range(0, len(view), read_size):
            yield bytes(view[start : start + read_size])
        return
    read = getattr(source, "read", None)
    if read is not None:
        reader: Callable[[int], bytes] = getattr(source, "read1", None) or read
        while True:
            piece = reader(read_size)
            if not piece:
                return
            yield piece
    else:
        for given in source:
            if given:
                yield bytes(given)


def views(source: Octets, read_size: int = READ_SIZE) -> Iterator[bytes | bytearray | memoryview]:
    """The octets of ``source`` in pieces as :func:`pieces` gives them, but not copied: each piece is to be used
    (hashed, written) before the next is asked for, never kept (a piece of an iterable may be a view of a buffer
    read into again)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        view = memoryview(source)
        for start in range(0, len(view), read_size):
            yield view[start : start + read_size]
        return
    if getattr(source, "read", None) is not None:
        yield from pieces(source, read_size)
        return
    for given in source:
        if given:
            yield given


@dataclass(frozen=True)
class Audit:
    """What a full read of a stored blob found: its SHA-256 and size now, and which chunks no longer match."""

    sha256: str
    size: int
    damaged: tuple[int, ...]


class ChunkedReader(Closing):
    """A stored blob, read by verified chunks, over a function that reads raw octets ``[offset, offset + length)``.

    ``path`` is ``None``: the store keeps no local file (PostgreSQL, S3, a
    catalog's row); a :class:`FileReader` sets it to the local file holding
    exactly the blob's octets (so it can be memory-mapped or sent with
    ``sendfile``). Every octet :meth:`chunks` yields belongs to a chunk
    whose digest matched; one that does not is an :class:`IntegrityError`.
    Subclasses (or the store) give ``read_raw``; verification and slicing are here.
    """

    def __init__(
        self,
        info: BlobInfo,
        read_raw: Callable[[int, int], bytes],
        *,
        name: str,
        close: Callable[[], None] | None = None,
    ) -> None:
        self.info = info
        self.path: str | None = None
        self._read_raw = read_raw
        self._name = name
        self._close = close
        self._whole_checked = False

    @property
    def size(self) -> int:
        return self.info.size

    def _bounds(self, start: int, end: int | None) -> tuple[int, int]:
        end = self.info.size if end is None else min(end, self.info.size)
        return max(0, start), max(max(0, start), end)

    def _check_whole(self) -> None:
        """A blob without chunk digests: its whole SHA-256 (once per reader)."""
        if not self._whole_checked:
            self._whole_pass(0, 0, _dropped)

    def _whole_pass(self, start: int, end: int, keep: Callable[[bytes], object]) -> None:
        """A blob without chunk digests read once, every octet hashed and those of ``[start, end)`` given to
        ``keep`` in order, then its whole SHA-256 compared: a :class:`DamagedError` after the last octet if it does
        not match, and what ``keep`` was given must not be used (it is unchecked until this returns)."""
        digest = hashlib.sha256()
        size = self.info.size
        for offset in range(0, size, READ_SIZE):
            piece = self._raw(offset, min(READ_SIZE, size - offset))  # a short read: a DamagedError here
            digest.update(piece)
            if offset < end and offset + len(piece) > start:
                whole = start <= offset and offset + len(piece) <= end
                keep(piece if whole else piece[max(start - offset, 0) : end - offset])
        if digest.hexdigest() != self.info.sha256:
            raise self._damaged(f"the bytes of {self._name} do not match their SHA-256 {self.info.sha256}")
        self._whole_checked = True

    def _raw(self, offset: int, length: int) -> bytes:
        piece = self._read_raw(offset, length)
        if len(piece) != length:
            raise self._damaged(
                f"the bytes of {self._name} are cut short: {self.info.size} octets recorded,"
                f" fewer stored (octet {offset + len(piece)} is missing)"
            )
        return piece

    def _damaged(self, message: str) -> DamagedError:
        """The error of this blob's octets found other than recorded (``message`` says how and where), to raise:
        a :class:`FileReader` first forgets the blob in its fixity memo, here and in every process sharing it."""
        return DamagedError(message)

    def _chunk(self, index: int) -> bytes:
        size = self.info.chunk_size
        offset = index * size
        piece = self._raw(offset, min(size, self.info.size - offset))
        if hashlib.sha256(piece).digest() != self.info.chunk_digest(index):
            raise self._damaged(
                f"the bytes of {self._name} are damaged: chunk {index} (octets {offset}"
                f" to {offset + len(piece) - 1}) does not match its SHA-256"
            )
        return piece

    def chunks(self, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """The octets ``[start, end)`` in pieces, each from a chunk verified just before.

        A blob with no chunk digests is read twice: whole, to check its SHA-256, before a piece is yielded (a piece
        given before the last octet is hashed would be unchecked), then the range. Where the octets are wanted
        all before any is used, :meth:`read` and :meth:`copy_to` read it once."""
        start, end = self._bounds(start, end)
        if start >= end:
            return
        if not self.info.chunked:
            self._check_whole()
            for offset in range(start, end, READ_SIZE):
                yield self._raw(offset, min(READ_SIZE, end - offset))
            return
        size = self.info.chunk_size
        for index in range(start // size, (end - 1) // size + 1):
            piece = self._chunk(index)
            base = index * size
            yield piece[max(start - base, 0) : end - base]

    def spans(self, spans: Sequence[tuple[int, int]]) -> Iterator[tuple[int, bytes]]:
        """The octets of each of ``spans`` (``[start, end)``) in turn, in pieces, each with the index of its span
        and from a chunk verified just before (:meth:`chunks`); a chunk holding the end of one span and the start
        of the next is read once (so many spans in one chunk cost one read)."""
        if not self.info.chunked:
            for at, (start, end) in enumerate(spans):
                for piece in self.chunks(start, end):
                    yield at, piece
            return
        size = self.info.chunk_size
        held_index, held = -1, b""
        for at, (start, end) in enumerate(spans):
            start, end = self._bounds(start, end)
            for index in range(start // size, (end - 1) // size + 1) if start < end else ():
                if index != held_index:
                    held, held_index = self._chunk(index), index
                base = index * size
                yield at, held[max(start - base, 0) : end - base]

    def read(self, start: int = 0, end: int | None = None) -> bytes:
        """The octets ``[start, end)``, verified (hold only what you can hold).

        A blob with no chunk digests not yet checked by this reader is read once, whole: the range kept as the
        whole SHA-256 is computed, and given only if it matches."""
        if not self.info.chunked and not self._whole_checked:
            start, end = self._bounds(start, end)
            parts: list[bytes] = []
            if start < end:
                self._whole_pass(start, end, parts.append)
            return b"".join(parts)
        return b"".join(self.chunks(start, end))

    def copy_to(self, write: Callable[[bytes], object]) -> None:
        """Every octet, in order, to ``write`` (a temporary file's), checked: each chunk against its SHA-256 before
        it is written (a damaged one: an :class:`IntegrityError`, the chunks after it not read). A blob with no
        chunk digests is read once, each octet hashed as it is written, and its whole SHA-256 compared after the
        last: a :class:`DamagedError` then, and nothing written may be used (the caller lets no one read it)."""
        if not self.info.chunked and not self._whole_checked:
            self._whole_pass(0, self.info.size, write)
            return
        for piece in self.chunks():
            write(piece)

    def verify_range(self, start: int, end: int) -> None:
        """Check the chunks holding octets ``[start, end)`` (an :class:`IntegrityError` if one is damaged)."""
        for _ in self.chunks(start, end):
            pass

    def verify(self, *, remembered: bool = False) -> None:
        """Check every chunk, and the whole SHA-256 from the same read.

        ``remembered``: nothing is read where the reader's fixity memo holds every chunk verified for the file
        unchanged (:class:`FileReader`; a reader with no memo checks every chunk whatever it is asked). A blob with
        no chunk digests is read once, its whole SHA-256 checked (again, whatever this reader checked before)."""
        if not self.info.chunked:
            self._whole_pass(0, 0, _dropped)
            return
        digest = hashlib.sha256()
        size = 0
        for piece in self.chunks():
            digest.update(piece)
            size += len(piece)
        if size != self.info.size or digest.hexdigest() != self.info.sha256:
            raise self._damaged(f"the bytes of {self._name} do not match their SHA-256 {self.info.sha256}")

    def audit(self) -> Audit:
        """Read every stored octet (to the real end, whatever the catalog says): whole SHA-256, size, damaged chunks."""
        digest = hashlib.sha256()
        damaged: list[int] = []
        size = self.info.chunk_size
        offset = 0
        index = 0
        while True:
            piece = self._read_raw(offset, size)
            if not piece:
                break
            digest.update(piece)
            if (
                self.info.chunks
                and index < self.info.chunk_count()
                and hashlib.sha256(piece).digest() != self.info.chunk_digest(index)
            ):
                damaged.append(index)
            offset += len(piece)
            index += 1
            if len(piece) < size:
                break
        return Audit(digest.hexdigest(), offset, tuple(damaged))

    def close(self) -> None:
        if self._close is not None:
            self._close()
            self._close = None



def _dropped(_: bytes) -> None:
    """Where a pass that only checks puts the octets it reads."""


class FileReader(ChunkedReader):
    """A :class:`ChunkedReader` over a local file (``pread``: no shared file position), with an optional memo.

    With a :class:`~pdi.archive.blobs.memo.FixityMemo` (``memo``), a chunk
    verified by an earlier read of the same file, unchanged since
    (``fstat`` on this reader's descriptor, before each chunk), is not
    hashed again, and :meth:`verify_range` of chunks all remembered reads
    nothing; each chunk this reader verifies is remembered. :meth:`verify`
    hashes every chunk, unless asked to trust a memo that holds them all.
    """

    def __init__(self, info: BlobInfo, path: str, *, name: str, memo: FixityMemo | None = None) -> None:
        self.fd = os.open(path, os.O_RDONLY)
        #: The file's size when it was opened (``fstat``): :meth:`check_size` compares it with the recorded one.
        self.stored = os.fstat(self.fd).st_size
        super().__init__(info, self._pread, name=name, close=self._close_fd)
        self.path = path
        self._memo: FixityMemo | None = None
        self.memo = memo
        self._trust = True
        #: Read only what is in the page cache (``RWF_NOWAIT``): :class:`BlockingIOError` where the disk would be
        #: waited for (for an event loop's thread, which must not wait; where the system has no such flag, reads wait).
        self.nowait = False

    @property
    def memo(self) -> FixityMemo | None:
        """The fixity memo this reader trusts and tells what it verifies: the one it was given, but none for a file
        on a file system that never writes its pages back (tmpfs, ramfs: :func:`~pdi.archive.blobs.memo.written_back`),
        whose every read is hashed."""
        return self._memo

    @memo.setter
    def memo(self, memo: FixityMemo | None) -> None:
        self._memo = memo if memo is None or written_back(self.fd) else None

    def check_size(self) -> None:
        """Refuse (:class:`DamagedError`, and close) a file cut short or grown, before a byte is read or an answer
        begun (a reader that means to read what is there whatever its size, an audit, does not ask)."""
        if self.stored != self.info.size:
            self.close()
            raise self._damaged(f"the bytes of {self._name} are {'cut short' if self.stored < self.info.size else 'longer'}:"
                               f" {self.info.size} octets recorded, {self.stored} stored")

    def _pread(self, offset: int, length: int) -> bytes:
        parts: list[bytes] = []
        nowait = self.nowait and _NOWAIT
        while length > 0:
            if nowait:
                buffer = bytearray(length)
                got = os.preadv(self.fd, [buffer], offset, _NOWAIT)
                piece = bytes(buffer[:got])
            else:
                piece = os.pread(self.fd, length, offset)
            if not piece:
                break
            parts.append(piece)
            offset += len(piece)
            length -= len(piece)
        return b"".join(parts)

    def _close_fd(self) -> None:
        os.close(self.fd)

    def identity(self) -> Identity:
        """The identity of the open file now (``fstat``): see :mod:`pdi.archive.blobs.memo`."""
        return identity(self.fd)

    def _damaged(self, message: str) -> DamagedError:
        if self.memo is not None:
            self.memo.forget(self.info.sha256)
        return super()._damaged(message)

    def unchanged(self, verified: Identity) -> bool:
        """Whether the file is still as it was ``verified`` (its chunks all remembered so, and being sent without
        hashing): if not, the blob is forgotten in the memo, here and in every process sharing it, as a damaged
        chunk found is (a file changed under a send may be damaged; it is hashed at its next read whatever the
        memo held)."""
        if identity(self.fd) == verified:
            return True
        if self.memo is not None:
            self.memo.forget(self.info.sha256)
        return False

    def trusted(self, start: int, end: int) -> Identity | None:
        """The file's identity now if every chunk holding octets ``[start, end)`` is remembered verified for it, else ``None``."""
        start, end = self._bounds(start, end)
        memo = self.memo
        if memo is None or not self.info.chunked or not self._trust:
            return None
        now = self.identity()
        if start >= end:
            return now
        size = self.info.chunk_size
        return now if memo.holds(self.info.sha256, now, start // size, (end - 1) // size) else None

    def verify_range(self, start: int, end: int) -> None:
        """Check the chunks holding octets ``[start, end)``; nothing is read when the memo holds them all."""
        if self.trusted(start, end) is None:
            super().verify_range(start, end)

    def _chunk(self, index: int) -> bytes:
        memo = self.memo
        if memo is None:
            return super()._chunk(index)
        started = time.time_ns()  # before the fstat: the racy window is measured from it, not from the note
        before = self.identity()
        if self._trust and memo.holds(self.info.sha256, before, index, index):
            size = self.info.chunk_size
            offset = index * size
            return self._raw(offset, min(size, self.info.size - offset))
        piece = super()._chunk(index)  # a damaged chunk: forgotten (_damaged)
        memo.note(self.info.sha256, before, index, self.info.chunk_count(), started)
        return piece

    def verify(self, *, remembered: bool = False) -> None:
        """Check every chunk, hashing each whatever the memo holds (and remembering it), and the whole SHA-256 from
        the same read; with ``remembered``, nothing is read when the memo holds every chunk verified for the file
        as it is now (:meth:`trusted`), as :meth:`verify_range` does."""
        if remembered and self.trusted(0, self.size) is not None:
            return
        self._trust = False
        try:
            super().verify()
        finally:
            self._trust = True


#: ``preadv``'s flag to read only what needs no disk (Linux 4.14); 0 where there is none.
_NOWAIT: int = getattr(os, "RWF_NOWAIT", 0)


def read_cached(info: BlobInfo, path: str, memo: FixityMemo | None = None) -> bytes | None:
    """A chunked blob's octets read at once from its local file with ``RWF_NOWAIT`` and each chunk checked
    against its SHA-256, or ``None`` when that cannot be done without waiting or is not so (the file shorter,
    not all in the page cache, a chunk damaged, no such flag): the caller then reads it with a
    :class:`FileReader`, which says what is wrong.

    For a small blob an event loop's thread answers (one ``open``, one ``preadv``, one ``close``): every
    chunk is hashed, whatever a :class:`~pdi.archive.blobs.memo.FixityMemo` holds. A blob read whole and found
    damaged is forgotten in ``memo`` (the reader's memo, here and in every process sharing it), so that the
    :class:`FileReader` the caller reads it with next hashes it again, and refuses it, whatever the memo held.
    """
    size, digests = info.size, info.chunks
    if not _NOWAIT or not info.chunked or len(digests) != 32 * info.chunk_count():
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        buffer = bytearray(size)
        got = os.preadv(fd, [buffer], 0, _NOWAIT) if size else 0
    except OSError:  # BlockingIOError: the disk would be waited for
        return None
    finally:
        os.close(fd)
    if got != size:
        return None
    data = checked(info, bytes(buffer))
    if data is None and memo is not None:
        memo.forget(info.sha256)
    return data


def checked(info: BlobInfo, data: bytes) -> bytes | None:
    """``data``, a chunked blob's whole octets in hand (a file's read at once, a small blob's catalog row), if it
    is ``info.size`` octets and every chunk matches its SHA-256; else ``None`` (the caller's verified reader then
    says what is wrong)."""
    size, chunk_size, digests = info.size, info.chunk_size, info.chunks
    if len(data) != size:
        return None
    if 0 < size <= chunk_size:  # one chunk (a small blob: every cold N2R of one), hashed without the loop
        return data if len(digests) == 32 and hashlib.sha256(data).digest() == digests else None
    if not info.chunked or len(digests) != 32 * info.chunk_count():
        return None
    sha256 = hashlib.sha256
    for index, offset in enumerate(range(0, size, chunk_size)):
        if sha256(data[offset : offset + chunk_size]).digest() != digests[32 * index : 32 * index + 32]:
            return None
    return data


def file_reader(info: BlobInfo, path: str, *, name: str, memo: FixityMemo | None = None) -> FileReader:
    """A :class:`FileReader` over a local file (``memo``: the chunks already verified, if the caller keeps them)."""
    return FileReader(info, path, name=name, memo=memo)


#: Up to this size a blob without a local file is read into memory to evaluate a fragment on it;
#: a larger one is copied to a temporary file and memory-mapped (the selection's chunks checked after).
IN_MEMORY = 64 << 20


class RangedOctets:
    """A stored blob as something :func:`len` and slices work on, each slice read then by verified chunks.

    For an evaluator that only slices (the ``byte`` scheme) over a store with
    no local file (PostgreSQL, S3): it reads the chunks the selection touches,
    never the whole blob.
    """

    def __init__(self, reader: ChunkedReader) -> None:
        self._reader = reader

    def __len__(self) -> int:
        return self._reader.size

    def __getitem__(self, key: slice) -> bytes:
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("a blob read by chunks is sliced by a plain [start:end]")
        start, stop, _ = key.indices(self._reader.size)
        return self._reader.read(start, stop)


class VerifiedOctets:
    """A stored blob as something :func:`len`, an index, a slice and :meth:`find` work on, every octet from a chunk
    verified as it is read, the last :data:`KEPT` chunks held (never more).

    For a reader that walks a large blob's header, or samples it here and there (the viewer's image facts, a
    waveform's columns): what it touches is read and checked, by chunk, in memory bounded by :data:`KEPT` chunks
    and the largest slice asked for, whatever the blob's size and whether the store keeps a local file. Its octets
    are never mapped (a map's pages touched count in the process's resident set).
    """

    #: Chunks held at once (1 MiB each by default): a header walk steps back and forth within a few.
    KEPT = 4

    def __init__(self, reader: ChunkedReader) -> None:
        self._reader = reader
        self._size = reader.size
        self._chunk = reader.info.chunk_size
        self._held: collections.OrderedDict[int, bytes] = collections.OrderedDict()

    def __len__(self) -> int:
        return self._size

    def _piece(self, index: int) -> bytes:
        held = self._held.get(index)
        if held is not None:
            self._held.move_to_end(index)
            return held
        start = index * self._chunk
        piece = self._reader.read(start, min(start + self._chunk, self._size))
        self._held[index] = piece
        while len(self._held) > self.KEPT:
            self._held.popitem(last=False)
        return piece

    @overload
    def __getitem__(self, key: int) -> int: ...
    @overload
    def __getitem__(self, key: slice) -> bytes: ...

    def __getitem__(self, key: int | slice) -> int | bytes:
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise TypeError("a blob read by chunks is sliced by a plain [start:end]")
            start, stop, _ = key.indices(self._size)
            if start >= stop:
                return b""
            first, last = start // self._chunk, (stop - 1) // self._chunk
            if first == last:
                base = first * self._chunk
                return self._piece(first)[start - base:stop - base]
            return self._reader.read(start, stop)  # across chunks: read once, not held
        at = key + self._size if key < 0 else key
        if not 0 <= at < self._size:
            raise IndexError("octet index out of range")
        return self._piece(at // self._chunk)[at % self._chunk]

    def find(self, sub: bytes, start: int = 0) -> int:
        """The first offset at or after ``start`` where ``sub`` (a few octets) begins, or -1: chunk by chunk, each
        searched with the end of the one before it."""
        at = max(0, start)
        carry, base = b"", at
        while at < self._size:
            end = min((at // self._chunk + 1) * self._chunk, self._size)
            window = carry + self[at:end]
            found = window.find(sub)
            if found >= 0:
                return base + found
            keep = max(0, len(sub) - 1)
            carry = window[-keep:] if keep else b""  # the whole window where it is shorter than keep
            base = end - len(carry)
            at = end
        return -1


@contextlib.contextmanager
def mapped(reader: ChunkedReader) -> Iterator[bytes | mmap.mmap]:
    """The blob's octets as a buffer a fragment evaluator can index: a read-only memory map where possible.

    Where the store keeps the blob as a local file (:class:`FileReader`) its map is of the reader's own descriptor
    (so a file put in its place meanwhile is not what is read), and octets read through it are not verified as they
    are touched: :func:`verify_selected` checks the chunks a selection came from, after. Where the store keeps none
    (PostgreSQL, S3: any other reader, whose ``path`` is ``None``), every chunk is checked as it is read from the
    store, into memory or (past :data:`IN_MEMORY` octets) into a temporary file (a blob with no chunk digests: its
    whole SHA-256, after the last octet is read and before any is given): the store is read once, no octet is given
    unchecked and nothing is left to check after (:func:`checked_as_given`). A map is a
    :class:`~pdi.fragments.results.MappedFile` (of the blob's file, or of the temporary copy of its chunks): a
    child process that reads the octets (libvips' crop) reads that file, not a copy.
    """
    from pdi.fragments.results import MappedFile

    if reader.size == 0:
        yield b""
        return
    if isinstance(reader, FileReader):
        with MappedFile.of(reader.fd) as mapped:
            yield mapped
        return
    if reader.size <= IN_MEMORY:
        yield reader.read()
        return
    import tempfile

    with tempfile.TemporaryFile(prefix="pdi-blob-") as spool:
        reader.copy_to(spool.write)  # checked as it is copied: a damaged blob is refused here, before it is mapped
        spool.flush()
        with MappedFile.of(spool.fileno()) as mapped:
            yield mapped


@contextlib.contextmanager
def checked_file(reader: ChunkedReader) -> Iterator[tuple[str, tuple[int, ...]]]:
    """A path at which a child process (ffmpeg, ffprobe) reads the blob's octets, every chunk of them checked, and
    the descriptors it must inherit (``pass_fds``) for that path to be there.

    Where the store keeps the blob as a local file (:class:`FileReader`), every chunk is checked through the
    reader's descriptor and the path is ``/proc/self/fd/N`` of that descriptor, inherited: the child opens the file
    the reader opened and checked, not the blob's path again (a file renamed over it meanwhile, a repair's copy or
    anyone's, was read unchecked). Nothing is hashed where the reader's fixity memo holds every chunk verified for
    the file unchanged (:meth:`FileReader.verify`'s ``remembered``: a second region or probe of the same video); a
    file changed or replaced since is hashed again, and refused before the child reads it. Where the store keeps
    none (PostgreSQL, S3), or the system has no ``/proc``, the path is a temporary copy, checked as it is copied
    (:meth:`ChunkedReader.copy_to`: each chunk; a blob with no chunk digests, its whole SHA-256 after the last
    octet, before the path is given): the store is read once (it was read to check every chunk, then again to copy
    them)."""
    import tempfile

    if isinstance(reader, FileReader) and os.path.isdir("/proc/self/fd"):
        reader.verify(remembered=True)
        yield f"/proc/self/fd/{reader.fd}", (reader.fd,)
        return
    with tempfile.NamedTemporaryFile(prefix="pdi-blob-") as copy:
        reader.copy_to(copy.write)  # checked as it is copied: a damaged blob is refused here, before a child runs
        copy.flush()
        yield copy.name, ()


def checked_as_given(reader: ChunkedReader) -> bool:
    """Whether every octet :func:`mapped` gives of ``reader``'s blob was checked as it was read (a store with no
    local file: nothing to check after), rather than mapped from the blob's file unchecked."""
    return not isinstance(reader, FileReader)


def verify_selected(reader: ChunkedReader, result: FragmentResult | None) -> None:
    """Check the chunks a fragment's selection came from; the whole blob when it selects no octet range.

    An image fragment is checked whole: ``rect`` answers the whole image; a
    crop by Pillow decodes the whole frame, reading the map where its decoder
    goes, which no one records; a crop by libvips is read by a child process
    from the blob's file. Nothing is read again where the reader's fixity memo
    holds every chunk verified for the file unchanged
    (:meth:`FileReader.verify`'s ``remembered``), as for a PDF or an aggregate. A sound's (``sec``, ``msec``) is not evaluated on a
    map but on :class:`VerifiedOctets` (:mod:`pdi.archive.reading`): every
    chunk it reads is checked as it is read, and only those.
    """
    if result is None:
        return
    if result.ranges:
        for r in result.ranges:
            reader.verify_range(r.byte_start, r.byte_end)
    elif result.region is not None or result.interval is not None:
        reader.verify(remembered=True)
