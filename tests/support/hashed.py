"""A stand-in for ``hashlib`` in :mod:`pdi.archive.blobs` that counts the octets the blob readers hash.

``monkeypatch.setattr(pdi.archive.blobs, "hashlib", counter)``: every SHA-256 the readers make (a chunk's, the
whole blob's) adds the octets it is given to ``counter.octets``, so a test can say a read hashed nothing, or every
octet, without timing it.
"""

from __future__ import annotations

import hashlib
from typing import Any


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
