"""Which chunks of which blob files a process has verified, for as long as the files cannot have changed.

Fixity is checked on every read (:mod:`pdi.archive.blobs`): each chunk a
read touches is hashed and compared with its SHA-256 in the catalog. For a
blob kept as a file (the files store beside the SQLite catalog), a resolver
worker that serves the same large file again and again would hash the same
octets again and again, which costs more than sending them (SHA-256 runs at
about 1.5 GB/s a core; ``sendfile`` copies page-cache pages to a socket).

:class:`FixityMemo` remembers, per blob, the chunks a read has verified,
together with the file's identity at the time (:func:`identity`: device,
inode, size, modification and status-change times in nanoseconds, taken by
``fstat`` on the open file descriptor *before* the octets were read). A
later read trusts a remembered chunk only if ``fstat`` on its own descriptor
gives the same identity, at each read, and only until the memo's expiry
(``seconds`` after the first chunk was verified; 0 remembers nothing).
A ``write`` to the file, a ``chmod``, a ``utime`` that puts the modification
time back, a rename over it: each sets the status-change time (``ctime``),
which no user can set, so a damaged or replaced file is hashed again at its
next read and refused. A write through a writable shared ``mmap`` of the
file is the exception: the kernel sets ``ctime`` only at the first write to
a page since the page was last written to the disk, and further writes to
the page while it is dirty leave ``ctime`` as it was, until writeback
(``/proc/sys/vm/dirty_expire_centisecs`` plus
``dirty_writeback_centisecs``: 35 s by default) cleans the page and the next
write sets it again. The racy window below is therefore never shorter than
that delay (:func:`racy_window`). A file system that never writes its pages
back (``tmpfs``, ``ramfs``) keeps such a page dirty for good, so no window
would do: nothing is remembered of a blob file on one (:func:`written_back`,
asked by the reader when it is given a memo), and each of its reads is
hashed. Damage the kernel does not see (a disk's silent
corruption under the page cache) is caught at the first read after the
expiry, and always by ``pdi verify``, which never uses the memo.

File times tick in steps (a kernel's clock tick, or a second on some file
systems), so a write within the same step as the last one can leave
``ctime`` unchanged. An identity whose ``ctime`` was less than the racy
window old when its ``fstat`` was taken is therefore never remembered: the
same precaution as git's "racily clean" index entries. The window is
:data:`RACY_SECONDS` at least, for the times' steps, and the writeback delay
above; it is measured from a time taken before the ``fstat``, not after the
read and the hash, which can take long.

The memo is bounded (``max_chunks`` chunks over all blobs, least recently
used blob out first) and thread-safe (reads run on worker threads).

One process's memo is its own. ``pdi serve``'s workers share what they have
verified whole through a :class:`SharedFixity`, a small table in memory the
supervisor maps (anonymous, shared) before it forks them: once every chunk of
a blob file is verified for one identity, the memo writes there "this blob
file, with this identity, was verified until this expiry" (nothing else: no
chunk of a file verified in part), and any worker's memo trusts it for a file
that ``fstat`` gives the same identity, until the same expiry, as it trusts
its own. A worker that finds a blob file damaged writes a tombstone for the blob
there (:meth:`SharedFixity.forget`), however it found it (a chunk that fails its digest, read by chunks or
whole at once, a whole SHA-256 that fails, a file of another size than recorded, a file that changed under a
send of it the memo vouched for), live for its memo's ``seconds``: while it
is, every worker's memo refuses to trust the blob, its own entry included
(dropped when seen), and no worker's note of the blob verified whole
outweighs it (a read that began before the damage was found and ends
after it): tombstones are kept in a table of their own, which a note reads
and never writes. Why memory shared from before the fork, and not a file in the
archive or the catalog: only the server's own processes can write it (a file
beside the blobs could be written by whoever may write there, to vouch for a
file they changed, and a user that may only read the archive could not make
one); it holds nothing past the server's life (a file would outlive a reboot,
after which ``time.monotonic``'s expiries mean nothing); and it costs no
write to the disk or the catalog for each blob verified. A slot is written
whole with a BLAKE2b check over it, and read without a lock: a slot two
processes wrote at once, or read while it was written, fails its check and
is taken as empty (no lock a worker killed while it held it could leave
held for the others). Without a lock, a note that looked for a tombstone
an instant before one was written (microseconds) writes its slot all the
same, but in the other table: the tombstone stays, and is found by every
``holds``. Two processes that find two blobs of one set damaged in the
same microseconds (1 in 1,024 by default to share a set) write their
tombstones into empty slots drawn at random, and each reads its own again
after and writes it again where it was torn or written over; the one
written first can still be lost where both drew the same slot and the
second wrote after the first had read its own again.
"""

from __future__ import annotations

import functools
import hashlib
import math
import mmap
import os
import struct
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dataclasses import dataclass
else:
    from pdi._later import dataclass

#: How long a verified chunk is trusted without hashing it again, by default (seconds).
DEFAULT_SECONDS = 600.0
#: A file changed more recently than this (seconds) is not remembered, whatever the writeback delay: the file
#: times' step (see the module's docstring).
RACY_SECONDS = 2.0
#: Seconds added to the kernel's writeback delay for the racy window: a flusher late under load.
WRITEBACK_MARGIN = 10.0
#: The racy window when ``/proc/sys/vm`` cannot be read (no Linux, no ``/proc``), in seconds.
UNKNOWN_WRITEBACK = 60.0
#: Chunks remembered at most, over all blobs (16 Mi chunks of 1 MiB: 16 TiB, 2 MiB of bits).
DEFAULT_MAX_CHUNKS = 1 << 24

#: Blob files :class:`SharedFixity` remembers verified at most (by default: 6 MiB of memory shared by the workers,
#: and 0.76 MiB for as many as 8,192 tombstones).
DEFAULT_SHARED_BLOBS = 1 << 16

#: ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)`` of an open blob file.
Identity = tuple[int, int, int, int, int]


def writeback_seconds(vm: str = "/proc/sys/vm") -> float:
    """The longest a page written through a shared ``mmap`` can stay dirty, leaving ``ctime`` unmoved by later
    writes to it (seconds): ``(dirty_expire_centisecs + dirty_writeback_centisecs) / 100 +``
    :data:`WRITEBACK_MARGIN`, read from ``vm``; :data:`UNKNOWN_WRITEBACK` when they cannot be read; infinite
    when periodic writeback is off (``dirty_writeback_centisecs`` 0: a dirty page may never be written back)."""
    try:
        expire, every = (int(Path(vm, name).read_text(encoding="ascii"))
                         for name in ("dirty_expire_centisecs", "dirty_writeback_centisecs"))
    except (OSError, ValueError):
        return UNKNOWN_WRITEBACK
    if expire < 0 or every < 0:
        return UNKNOWN_WRITEBACK
    if every == 0:
        return math.inf
    return (expire + every) / 100 + WRITEBACK_MARGIN


@functools.cache
def racy_window() -> float:
    """The racy window of a :class:`FixityMemo` not given one (seconds): :data:`RACY_SECONDS` or this system's
    :func:`writeback_seconds`, whichever is longer, read once a process."""
    return max(RACY_SECONDS, writeback_seconds())


#: ``f_type`` of ``fstatfs`` for the file systems that never write a page back (linux/magic.h): tmpfs, ramfs.
NEVER_WRITTEN_BACK = frozenset({0x01021994, 0x858458F6})


@functools.cache
def _fstatfs() -> Callable[[int], int | None] | None:
    """``f_type`` of the file open as a descriptor, by the C library's ``fstatfs`` (``None`` if it fails), where it
    is Linux's (whose ``struct statfs`` starts with ``f_type``, a word); else ``None``. Looked up once, when a
    reader first needs it (ctypes is not loaded by every command)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        call = ctypes.CDLL(None, use_errno=True).fstatfs
    except (OSError, AttributeError):
        return None
    call.argtypes = (ctypes.c_int, ctypes.c_char_p)
    call.restype = ctypes.c_int

    def kind(fd: int) -> int | None:
        found = ctypes.create_string_buffer(256)  # struct statfs: 120 octets on 64-bit Linux, 84 on 32-bit
        if call(fd, found) != 0:
            return None
        return ctypes.c_long.from_buffer(found).value & 0xFFFFFFFF

    return kind


def written_back(fd: int) -> bool:
    """Whether the file open as ``fd`` is on a file system that writes its dirty pages back (not tmpfs or ramfs:
    :data:`NEVER_WRITTEN_BACK`), so that a racy window can vouch for it (see the module's docstring): ``False``
    where ``fstatfs`` fails, ``True`` where there is none of Linux's (no such file systems to tell apart)."""
    call = _fstatfs()
    if call is None:
        return True
    kind = call(fd)
    return kind is not None and kind not in NEVER_WRITTEN_BACK


def identity(fd: int) -> Identity:
    """The identity of the file open as ``fd`` (``fstat``): what any change to it changes."""
    st = os.fstat(fd)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass
class _Entry:
    identity: Identity
    expires: float
    count: int
    verified: bytearray = field(default_factory=bytearray)  # one bit per chunk
    held: int = 0  # how many bits are set

    def holds(self, index: int) -> bool:
        return bool(self.verified[index >> 3] & (1 << (index & 7)))


class SharedFixity:
    """Blob files verified whole, each with its identity then and its expiry, in memory shared by the processes
    forked after it was made (``pdi serve``'s workers), and blobs found damaged: see the module's docstring.

    A table of ``blobs`` slots in sets of :attr:`WAYS`, a blob's set chosen by a keyed hash of its SHA-256 (the
    key made here: which blobs share a set cannot be chosen by a depositor); in a full set the slot that expires
    first is taken. Each slot is the blob's SHA-256, its kind, the file's identity, its expiry
    (:func:`time.monotonic`, which is the system's one clock for every process) and a BLAKE2b check of them,
    written in one copy; a slot whose check fails (written by two processes at once, read while written, or
    empty) holds nothing. Tombstones (:meth:`forget`: no process may trust the blob until its expiry, whatever its
    own memo or the table holds) are kept in a table of their own, an eighth as large (a set of it for each eight
    of the other's, chosen by the same hash), which :meth:`note` reads but never writes: a note cannot write over
    a tombstone, however the two interleave."""

    WAYS = 8
    #: Sets of the table of blobs verified for each set of the table of tombstones.
    GRAVES_EVERY = 8
    _FIELDS = struct.Struct("<32sB5qd")
    _CHECK = 16
    _SLOT = _FIELDS.size + _CHECK
    _VERIFIED, _FORGOTTEN = 1, 2

    def __init__(self, blobs: int = DEFAULT_SHARED_BLOBS) -> None:
        if blobs < 1:
            raise ValueError("a shared fixity memo holds 1 blob or more")
        self._sets = -(-blobs // self.WAYS)
        self._grave_sets = -(-self._sets // self.GRAVES_EVERY)
        self._key = os.urandom(32)
        self._placing = hashlib.blake2b(key=self._key, digest_size=8)  # copied for each blob: the key set up once
        # anonymous and MAP_SHARED (mmap's default): the same pages in every process forked from this one
        self._map = mmap.mmap(-1, self._sets * self.WAYS * self._SLOT)
        self._graves = mmap.mmap(-1, self._grave_sets * self.WAYS * self._SLOT)

    def _index(self, digest: bytes) -> int:
        """The keyed hash of the blob whose SHA-256 is ``digest`` that places it in each table."""
        placing = self._placing.copy()
        placing.update(digest)
        return int.from_bytes(placing.digest(), "little")

    def _place(self, digest: bytes) -> tuple[range, range]:
        """Where the slots of the sets of the blob whose SHA-256 is ``digest`` start: in the table of blobs verified,
        in the table of tombstones."""
        index = self._index(digest)
        span = self.WAYS * self._SLOT
        start, grave = (index % self._sets) * span, (index % self._grave_sets) * span
        return range(start, start + span, self._SLOT), range(grave, grave + span, self._SLOT)

    def _slot(self, table: mmap.mmap, at: int) -> tuple[bytes, int, Identity, float] | None:
        """The slot at ``at`` of ``table`` (SHA-256, kind, identity, expiry), if its check holds."""
        raw = table[at : at + self._SLOT]
        fields = raw[: self._FIELDS.size]
        if hashlib.blake2b(fields, key=self._key, digest_size=self._CHECK).digest() != raw[self._FIELDS.size :]:
            return None
        digest, kind, dev, ino, size, mtime, ctime, expires = self._FIELDS.unpack(fields)
        return digest, kind, (dev, ino, size, mtime, ctime), expires

    def _made(self, digest: bytes, kind: int, identity: Identity, expires: float) -> bytes:
        fields = self._FIELDS.pack(digest, kind, *identity, expires)
        return fields + hashlib.blake2b(fields, key=self._key, digest_size=self._CHECK).digest()

    def _buried(self, digest: bytes, graves: range, clock: float) -> bool:
        """Whether a live tombstone of the blob is in its set of the table of tombstones: a slice and a search, and
        a check only of a slot that starts with the SHA-256."""
        block = self._graves[graves.start : graves.stop]
        at = block.find(digest)
        while at >= 0:
            if at % self._SLOT == 0:
                slot = self._slot(self._graves, graves.start + at)
                if slot is not None and slot[0] == digest and slot[1] == self._FORGOTTEN and clock < slot[3]:
                    return True
            at = block.find(digest, at + 1)
        return False

    def forgotten(self, sha256: str, clock: float) -> bool:
        """Whether a process found the blob damaged and its tombstone is live at ``clock``: one keyed hash to
        find the set, and a check only of a slot of this blob."""
        digest = bytes.fromhex(sha256)
        return self._buried(digest, self._place(digest)[1], clock)

    def holds(self, sha256: str, now: Identity, clock: float) -> bool:
        """Whether the blob was verified whole for the file as it is ``now``, ``clock`` is before the expiry, and
        no process has forgotten it since: one keyed hash, a slice of the blob's set and a search, a check only of
        a slot that starts with its SHA-256, and the same in the table of tombstones only then."""
        digest = bytes.fromhex(sha256)
        index = self._index(digest)
        span = self.WAYS * self._SLOT
        start = (index % self._sets) * span
        block = self._map[start : start + span]
        at = block.find(digest)
        held = False
        while at >= 0 and not held:
            if at % self._SLOT == 0:
                slot = self._slot(self._map, start + at)
                held = (slot is not None and slot[0] == digest and slot[1] == self._VERIFIED and clock < slot[3]
                        and slot[2] == now)
            at = block.find(digest, at + 1)
        if not held:
            return False
        grave = (index % self._grave_sets) * span
        return not self._buried(digest, range(grave, grave + span, self._SLOT), clock)

    def note(self, sha256: str, verified: Identity, expires: float, clock: float) -> None:
        """Every chunk of the blob was verified, read from the file as it was ``verified``: trusted until
        ``expires``, unless a process has forgotten the blob and its tombstone is live (then nothing is written;
        a tombstone written after this looked is in a table this never writes, and :meth:`holds` finds it). The
        slot taken: the blob's own, else an empty or expired one, else the one that expires first."""
        digest = bytes.fromhex(sha256)
        slots, graves = self._place(digest)
        if self._buried(digest, graves, clock):
            return
        chosen: tuple[int, float, int] | None = None
        for at in slots:
            slot = self._slot(self._map, at)
            if slot is not None and slot[0] == digest:
                rank = (0, 0.0, at)
            elif slot is None or slot[3] <= clock:
                rank = (1, 0.0, at)
            else:
                rank = (2, slot[3], at)
            chosen = rank if chosen is None else min(chosen, rank)
        if chosen is not None:
            self._map[chosen[2] : chosen[2] + self._SLOT] = self._made(digest, self._VERIFIED, verified, expires)

    def forget(self, sha256: str, expires: float, clock: float) -> None:
        """Trust nothing of this blob any more, in any process, until ``expires`` (a read found it damaged): a
        tombstone in the blob's own slot of the table of tombstones, else an empty or expired one (drawn at
        random), else the one that expires first; read again after it is written, and written again where it is not
        there (torn, or written over by another process's tombstone: the slot is then that one's). The table's
        slots of the blob verified are emptied."""
        digest = bytes.fromhex(sha256)
        slots, graves = self._place(digest)
        made = self._made(digest, self._FORGOTTEN, (0, 0, 0, 0, 0), expires)
        for _ in range(self.WAYS):
            ranks: list[tuple[int, float, int]] = []
            for at in graves:
                slot = self._slot(self._graves, at)
                if slot is not None and slot[0] == digest:
                    ranks.append((0, 0.0, at))
                elif slot is None or slot[3] <= clock:
                    ranks.append((1, 0.0, at))
                else:
                    ranks.append((2, slot[3], at))
            free = [rank[2] for rank in ranks if rank[0] == 1]
            # an empty slot drawn at random: two processes forgetting two blobs of the set at once seldom draw one
            at = min(ranks)[2] if len(free) < 2 or min(ranks)[0] == 0 else free[os.urandom(1)[0] % len(free)]
            self._graves[at : at + self._SLOT] = made
            if self._graves[at : at + self._SLOT] == made:
                break
        for at in slots:
            if self._map[at : at + 32] == digest:
                self._map[at : at + self._SLOT] = bytes(self._SLOT)


class FixityMemo:
    """The chunks verified of each blob file, trusted while the file's identity holds and the expiry has not passed.

    ``racy_seconds`` is the racy window (see the module's docstring): by default :func:`racy_window`, this
    system's; a shorter one only for files no process maps writable (tests that cannot wait for writeback)."""

    def __init__(
        self,
        seconds: float = DEFAULT_SECONDS,
        *,
        max_chunks: int = DEFAULT_MAX_CHUNKS,
        racy_seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        shared: SharedFixity | None = None,
    ) -> None:
        if racy_seconds is None:
            racy_seconds = racy_window()
        if seconds < 0 or max_chunks < 0 or not racy_seconds >= 0:
            raise ValueError("a fixity memo's bounds are 0 or more")
        self.seconds = seconds
        self.max_chunks = max_chunks
        #: A file whose ctime is less than this before its ``fstat`` (ns) is not remembered (infinite: none is).
        self.racy_ns = int(racy_seconds * 1e9) if math.isfinite(racy_seconds) else 1 << 64
        self._clock = clock
        #: What every process that shares it has verified whole (``pdi serve``'s workers), or ``None``.
        self.shared = shared
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._chunks = 0
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        """Whether anything is ever remembered (``seconds`` above 0)."""
        return self.seconds > 0 and self.max_chunks > 0

    def __len__(self) -> int:
        return len(self._entries)

    def holds(self, sha256: str, now: Identity, first: int, last: int) -> bool:
        """Whether chunks ``first`` to ``last`` (inclusive) of the blob are all verified for the file as it is ``now``,
        and no process sharing :attr:`shared` has forgotten the blob since (its own entry is then dropped)."""
        shared = self.shared
        with self._lock:
            entry = self._current(sha256, now)
            if entry is not None:
                if shared is not None and shared.forgotten(sha256, self._clock()):
                    self._drop(sha256)
                    return False
                self._entries.move_to_end(sha256)
                if entry.held == entry.count or all(entry.holds(i) for i in range(first, last + 1)):
                    return True
        return shared is not None and self.enabled and shared.holds(sha256, now, self._clock())

    def note(self, sha256: str, before: Identity, index: int, count: int, started: int) -> None:
        """Chunk ``index`` (of ``count``) was verified, read from the file as it was ``before`` the read, whose
        ``fstat`` was taken after ``started`` (:func:`time.time_ns`): a ``ctime`` less than the racy window before
        ``started`` is too recent to vouch for the octets read (however long the read and the hash took)."""
        if not self.enabled or count > self.max_chunks or before[4] > started - self.racy_ns:
            return
        with self._lock:
            entry = self._current(sha256, before)
            if entry is None or entry.count != count:
                self._drop(sha256)
                entry = _Entry(before, self._clock() + self.seconds, count, bytearray(-(-count // 8)))
                self._entries[sha256] = entry
                self._chunks += count
                while self._chunks > self.max_chunks:
                    self._drop(next(iter(self._entries)))
            if not entry.holds(index):
                entry.verified[index >> 3] |= 1 << (index & 7)
                entry.held += 1
                if entry.held == entry.count and self.shared is not None:  # the whole file: for every worker
                    self.shared.note(sha256, entry.identity, entry.expires, self._clock())

    def forget(self, sha256: str) -> None:
        """Trust nothing of this blob any more (a read found it damaged), in any process sharing :attr:`shared`:
        there for the memo's ``seconds``, whatever any process verifies of it meanwhile (a tombstone)."""
        with self._lock:
            self._drop(sha256)
        if self.shared is not None:
            clock = self._clock()
            self.shared.forget(sha256, clock + self.seconds, clock)

    def _current(self, sha256: str, now: Identity) -> _Entry | None:
        entry = self._entries.get(sha256)
        if entry is None:
            return None
        if entry.identity != now or self._clock() >= entry.expires:
            self._drop(sha256)
            return None
        return entry

    def _drop(self, sha256: str) -> None:
        entry = self._entries.pop(sha256, None)
        if entry is not None:
            self._chunks -= entry.count
