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
Any write to the file, a ``chmod``, a ``utime`` that puts the modification
time back, a rename over it: each sets the status-change time (``ctime``),
which no user can set, so a damaged or replaced file is hashed again at its
next read and refused. Damage the kernel does not see (a disk's silent
corruption under the page cache) is caught at the first read after the
expiry, and always by ``pdi verify``, which never uses the memo.

File times tick in steps (a kernel's clock tick, or a second on some file
systems), so a write within the same step as the last one can leave
``ctime`` unchanged. An identity whose ``ctime`` is less than
:data:`RACY_SECONDS` old is therefore never remembered: the same precaution
as git's "racily clean" index entries.

The memo is bounded (``max_chunks`` chunks over all blobs, least recently
used blob out first) and thread-safe (reads run on worker threads).
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dataclasses import dataclass
else:
    from pdi._later import dataclass

#: How long a verified chunk is trusted without hashing it again, by default (seconds).
DEFAULT_SECONDS = 600.0
#: A file changed more recently than this (seconds) is not remembered (see the module's docstring).
RACY_SECONDS = 2.0
#: Chunks remembered at most, over all blobs (16 Mi chunks of 1 MiB: 16 TiB, 2 MiB of bits).
DEFAULT_MAX_CHUNKS = 1 << 24

#: ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)`` of an open blob file.
Identity = tuple[int, int, int, int, int]


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

    def holds(self, index: int) -> bool:
        return bool(self.verified[index >> 3] & (1 << (index & 7)))


class FixityMemo:
    """The chunks verified of each blob file, trusted while the file's identity holds and the expiry has not passed."""

    def __init__(
        self,
        seconds: float = DEFAULT_SECONDS,
        *,
        max_chunks: int = DEFAULT_MAX_CHUNKS,
        racy_seconds: float = RACY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if seconds < 0 or max_chunks < 0 or racy_seconds < 0:
            raise ValueError("a fixity memo's bounds are 0 or more")
        self.seconds = seconds
        self.max_chunks = max_chunks
        self.racy_ns = int(racy_seconds * 1e9)
        self._clock = clock
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
        """Whether chunks ``first`` to ``last`` (inclusive) of the blob are all verified for the file as it is ``now``."""
        with self._lock:
            entry = self._current(sha256, now)
            if entry is None:
                return False
            self._entries.move_to_end(sha256)
            return all(entry.holds(i) for i in range(first, last + 1))

    def note(self, sha256: str, before: Identity, index: int, count: int) -> None:
        """Chunk ``index`` (of ``count``) was verified, read from the file as it was ``before`` the read."""
        if not self.enabled or count > self.max_chunks or before[4] > time.time_ns() - self.racy_ns:
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
            entry.verified[index >> 3] |= 1 << (index & 7)

    def forget(self, sha256: str) -> None:
        """Trust nothing of this blob any more (a read found it damaged)."""
        with self._lock:
            self._drop(sha256)

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
