"""What a blob's reading costs, counted rather than timed: octets hashed, octets read from PostgreSQL, and a wait for
a file's change to be old enough for the fixity memo.

``monkeypatch.setattr(pdi.archive.blobs, "hashlib", counter)``: every SHA-256 the readers make (a chunk's, the
whole blob's) adds the octets it is given to ``counter.octets``, so a test can say a read hashed nothing, or every
octet, without timing it. :func:`count_store_reads` records each read of a blob's rows from PostgreSQL's large
objects; :func:`wait_changed_ago` waits until a file's ctime is old enough for the memo to trust it.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pdi.archive.blobs.large_objects import LargeObjects


class _Counted:
    """A SHA-256 that adds the octets it is given to its owner's count."""

    def __init__(self, owner: CountingHashlib, data: Any = b"") -> None:
        self._owner = owner
        self._hash = hashlib.sha256()
        self.update(data)

    def update(self, data: Any) -> None:
        self._owner.octets += memoryview(data).nbytes
        self._hash.update(data)

    def digest(self) -> bytes:
        return self._hash.digest()

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


class CountingHashlib:
    """Stands for ``hashlib`` in :mod:`pdi.archive.blobs`: how many octets the blob readers hash."""

    def __init__(self) -> None:
        self.octets = 0

    def sha256(self, data: Any = b"") -> _Counted:
        return _Counted(self, data)


def count_store_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The octets each read of a blob's chunk rows brings back from PostgreSQL from now on, in order (a list that
    grows as they are read)."""
    reads: list[int] = []
    real = LargeObjects._part_reader

    def counted(self: LargeObjects, upload: int, size: int, primary: bool) -> Callable[[int, int], bytes]:
        read_raw = real(self, upload, size, primary)

        def counting(offset: int, length: int) -> bytes:
            piece = read_raw(offset, length)
            reads.append(len(piece))
            return piece

        return counting

    monkeypatch.setattr(LargeObjects, "_part_reader", counted)
    return reads


def wait_changed_ago(path: Path, seconds: float) -> None:
    """Wait until the file's last change is ``seconds`` old (ctime cannot be set, only waited for)."""
    while time.time_ns() - os.stat(path).st_ctime_ns < seconds * 1e9:
        time.sleep(0.02)
