"""Small blobs in the catalog's own ``blobs`` table, written by the deposit's own catalog transaction.

A blob of at most :data:`INLINE_LIMIT` octets is not written before the
deposit's transaction as a larger one is (a file, an upload): it is kept in
hand while hashed (:func:`stage_small`, an :class:`Inline`) and written as
one row of ``blobs`` (``sha256``, ``data``) by the transaction that names it
(:func:`record_inline`). It commits, or not, with the names that hold it:
nothing to pin, nothing for a failed deposit to clean up, and nothing to make
durable but the catalog's own commit (on SQLite, the WAL's one ``fsync``
instead of a blob file's, its directory's and the WAL's).

Read back, a small blob is checked as any other: :func:`octets_reader`
verifies each chunk against the digests the catalog keeps in ``blob_fixity``.
Both catalogs' own stores keep their small blobs so: rows beside a
PostgreSQL catalog (:mod:`.large_objects`, whose ``blobs`` table this is)
and blob files beside a SQLite catalog (:mod:`.files`; the table is schema
step 9). An import writes every blob the large way, as before (a page of a
bag may bring thousands: none is held in hand).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from pdi.archive.blobs import BlobInfo, ChunkedReader, Digests, Octets, pieces
from pdi.archive.blobs.seam import BlobCatalog, BlobObserver, StagedBlob

#: A blob of at most this many octets is written in the deposit's own transaction (``blobs.data``).
INLINE_LIMIT = 64 << 10


@runtime_checkable
class CatalogRows(BlobCatalog, Protocol):
    """What a store keeping small blobs in its catalog needs of it beyond :class:`BlobCatalog`: its statements."""

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One statement (``?`` placeholders) in this thread's catalog transaction, if any."""
        ...

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        """One statement whose rows are not wanted, perhaps sent with the next one waited for."""
        ...

    def reading(self) -> AbstractContextManager[None]:
        """A read transaction that reads made within join."""
        ...


class Inline:
    """A small blob kept in hand, written in ``blobs.data`` by the deposit's catalog transaction: nothing to pin or undo."""

    def __init__(self, info: BlobInfo, data: bytes) -> None:
        self.info = info
        self.data = data

    def secure(self) -> None:
        return None  # written inside the catalog transaction itself

    def close(self) -> None:
        return None

    def discard(self) -> None:
        return None  # a failed deposit's transaction took its row back with it


def stage_small(
    source: Octets,
    observe: BlobObserver | None,
    larger: Callable[[Iterable[bytes], BlobObserver | None], StagedBlob],
) -> StagedBlob:
    """A blob of at most :data:`INLINE_LIMIT` octets kept in hand (an :class:`Inline`); a larger one given,
    as the pieces read so far and the rest of the stream, to ``larger`` (the store's own way)."""
    stream = pieces(source)
    head: list[bytes] = []
    held = 0
    for piece in stream:
        head.append(piece)
        held += len(piece)
        if held > INLINE_LIMIT:
            return larger(itertools.chain(head, stream), observe)
    data = head[0] if len(head) == 1 else b"".join(head)
    digests = Digests()
    digests.update(data)
    if observe is not None:
        for piece in head:
            observe.update(piece)
    info = digests.finish()
    if observe is not None:
        observe.finish(info)
    return Inline(info, data)


def record_inline(catalog: CatalogRows, blobs: Sequence[StagedBlob]) -> list[StagedBlob]:
    """Inside the deposit's catalog transaction: write each small blob kept in hand (unless the same octets
    are stored already); the other staged blobs, for the store to record its own way."""
    inline: dict[str, bytes] = {}
    rest: list[StagedBlob] = []
    for blob in blobs:
        if isinstance(blob, Inline):
            inline[blob.info.sha256] = blob.data
        else:
            rest.append(blob)
    if inline:
        catalog.execute(
            "INSERT INTO blobs (sha256, data) VALUES " + ", ".join(["(?, ?)"] * len(inline))
            + " ON CONFLICT (sha256) DO NOTHING",
            [value for pair in inline.items() for value in pair],
        )
    return rest


def octets_reader(info: BlobInfo, data: bytes, *, name: str) -> ChunkedReader:
    """A reader of a blob's octets in hand, by chunks verified against ``info`` as any stored blob's."""
    return ChunkedReader(info, lambda offset, length: data[offset : offset + length], name=name)


def read_inline(catalog: CatalogRows, sha256: str) -> bytes | None:
    """A small blob's stored octets, or ``None`` if the catalog keeps none under that name."""
    with catalog.reading():
        rows = catalog.query("SELECT data FROM blobs WHERE sha256 = ?", (sha256,))
    if not rows or rows[0][0] is None:
        return None
    value = rows[0][0]
    # SQLite keeps whatever a hand or a tool wrote into the row (its replace() of a BLOB is TEXT): read it as
    # the octets SQLite's CAST(data AS BLOB) gives, so that the chunk digests find it damaged (or whole)
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (int, float)):
        return str(value).encode("ascii")
    return bytes(value)


def inline_names(catalog: CatalogRows, *, page: int = 5000) -> Iterator[str]:
    """The name of every blob of the ``blobs`` table, ascending, a page at a time (keyset on its primary key)."""
    after = ""
    while True:
        with catalog.reading():
            rows = catalog.query("SELECT sha256 FROM blobs WHERE sha256 > ? ORDER BY sha256 LIMIT ?", (after, page))
        for (name,) in rows:
            yield str(name)
        if len(rows) < page:
            return
        after = str(rows[-1][0])
