"""The blob seam: what a blob store does, and what it may ask of the catalog that holds it.

A :class:`BlobStore` stages a blob from a stream (its SHA-256 and chunk
digests computed on the way, :class:`~pdi.archive.blobs.Digests`), opens a
verified range of one (:class:`~pdi.archive.blobs.ChunkedReader`), lists and
removes them; one module each: :mod:`.files`, :mod:`.large_objects`,
:mod:`.s3`. A catalog holds one; the rules that cross the seam are the
catalog's (:class:`BlobCatalog`, written once in
:mod:`pdi.archive.catalog.blobs`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol, TypeVar

from pdi.archive.blobs import BlobInfo, ChunkedReader, Digests, Octets, pieces, views
from pdi.errors import IntegrityError, StoreError

#: A blob's bytes, or a function that gives them when the store needs them, in
#: hand or as a stream (an import reads one object at a time, never the whole bag).
BlobSource = bytes | Callable[[], "bytes | Octets"]


def blob_octets(source: BlobSource) -> Octets:
    """The octets of ``source``: bytes, or what its function returns (bytes or a stream)."""
    return source if isinstance(source, bytes) else source()


class BlobObserver(Protocol):
    """What rides on a blob's one pass while it is staged (content checks, index builders)."""

    def update(self, piece: bytes) -> None: ...

    def finish(self, info: BlobInfo) -> None: ...


class BlobPin(Protocol):
    """A staged blob held safe from removal until the deposit that names it has committed.

    A store writes blobs before its catalog transaction and hands one back
    for each blob it staged; the deposit calls :meth:`secure` inside its
    catalog transaction and :meth:`close` after it.
    """

    def secure(self) -> None:
        """Inside the catalog transaction: put the blob back if it was removed meanwhile."""
        ...

    def close(self) -> None:
        """Release the pin."""
        ...


class ImportDurability(Protocol):
    """What makes an import's staged blobs durable, begun when they were staged (blob files: one sync on a thread of
    its own, :class:`pdi.archive.blobs.import_sync.ImportSync`): ``wait`` before the catalog's commit."""

    def wait(self) -> None: ...


class Durable:
    """An import's blobs durable when staged (a store that stages each durably): nothing to wait for."""

    def wait(self) -> None:
        return None


class StagedBlob(BlobPin, Protocol):
    """A blob written from a stream before its catalog transaction: what it is, and its pin.

    :meth:`discard` after a deposit that failed (or found the blob already
    stored) removes what staging added, when nothing else holds it.
    """

    info: BlobInfo

    def discard(self) -> None:
        """After a failed deposit: remove the blob if staging added it and nothing else holds it; release the pin."""
        ...


class BlobCatalog(Protocol):
    """What a blob store may ask of the catalog that holds it: the rules that cross the seam.

    Written once on the catalog's side (:class:`pdi.archive.catalog.blobs.BlobRules`)
    for SQLite and PostgreSQL alike:

    * *held*: a blob is held while a representation that keeps its octets
      (not purged) names it, or a staging row of a deposit in progress does;
    * *the removal lock*: :meth:`removing` is a catalog write transaction that
      excludes every deposit's catalog transaction (SQLite's one writer lock;
      a PostgreSQL advisory lock, which deposits take shared), so what is not
      held inside it may be deleted;
    * *staging rows*: a store whose blobs have no pin of their own (objects
      in S3) records each staging in the catalog, in a transaction of its
      own, before its first octet is sent, and drops the row once the
      deposit's catalog transaction has ended.
    """

    location: str
    #: ``sqlite`` or ``postgresql``: the database the catalog is in.
    dialect: str

    def blob_info(self, sha256: str) -> BlobInfo | None:
        """What the catalog knows of a blob (its chunk digests), or ``None``."""
        ...

    def removing(self, older_than: float | None = None) -> AbstractContextManager[None]:
        """A catalog write transaction holding the removal lock exclusively (with ``older_than``, a remover's
        grace period: staging rows older than it and than a day, left by killed processes, dropped first)."""
        ...

    def held(self, names: Collection[str]) -> set[str]:
        """Inside :meth:`removing`: which of ``names`` a name keeping its octets, or a staging row, holds."""
        ...

    def open_staging(self) -> str:
        """Record a new staging (its own committed transaction); its id."""
        ...

    def name_staging(self, ident: str, sha256: str) -> None:
        """Record the SHA-256 a staging has turned out to hold (before it is put at its name)."""
        ...

    def close_staging(self, ident: str) -> None:
        """Drop a staging row (its deposit's catalog transaction has ended)."""
        ...

    def live_stagings(self) -> set[str]:
        """Inside :meth:`removing`: the ids of the staging rows of deposits still in progress."""
        ...


class BlobStore(Protocol):
    """Where the octets live: staged from a stream, read by verified ranges, listed, removed.

    ``elsewhere`` names the store when its blobs are not beside the catalog
    (``s3://bucket/prefix``), ``None`` when they are. A store is attached to
    the catalog that holds it (:meth:`attach`) before any other call.
    """

    elsewhere: str | None

    def attach(self, catalog: BlobCatalog) -> None:
        """The catalog this store answers to (for held names, the removal lock, staging rows)."""
        ...

    def stage(self, source: Octets, observe: BlobObserver | None = None, *, replace: bool = False) -> StagedBlob:
        """Write a blob from a stream before any catalog transaction, hashing it as it comes.

        ``observe`` sees every piece, and its ``finish`` runs before the blob is
        put in place: an exception from either leaves nothing behind. With
        ``replace`` (a repair) the blob is written over whatever is stored
        under its name, never kept because it looks the same.
        """
        ...

    def stage_import(self, blobs: Iterable[tuple[str, BlobSource]]) -> list[StagedBlob]:
        """Stage the blobs of an import, each checked against the SHA-256 its record names (all or none)."""
        ...

    def record(self, blobs: Sequence[StagedBlob]) -> None:
        """Inside the catalog transaction that names them, holding the removal lock shared: each must still
        be in place (:class:`~pdi.errors.StoreError` if a remover took it), and is made the stored blob."""
        ...

    def open(self, sha256: str, info: BlobInfo | None, *, name: str) -> ChunkedReader | None:
        """A reader of the blob by verified chunks (``info`` from the catalog, if it has it), or ``None`` if missing."""
        ...

    def names(self) -> Iterator[str]:
        """The SHA-256 names of every stored blob, ascending, without holding them all."""
        ...

    def delete(self, sha256: str) -> bool:
        """Inside :meth:`BlobCatalog.removing`, the blob not held: delete it; ``False`` if a deposit holds it."""
        ...

    def remove_unreferenced(self, older_than: float) -> list[str]:
        """Delete what no name holds and what killed deposits left, untouched for ``older_than`` seconds,
        inside :meth:`BlobCatalog.removing` (``older_than`` given); the names (and leftovers) removed."""
        ...

    def close(self) -> None:
        """Release connections and clients."""
        ...


class Attached:
    """The catalog a blob store answers to, once :meth:`attach` has named it (a base of the stores)."""

    _catalog: BlobCatalog | None = None

    def attach(self, catalog: BlobCatalog) -> None:
        self._catalog = catalog

    @property
    def catalog(self) -> BlobCatalog:
        if self._catalog is None:  # pragma: no cover - a store used before a catalog holds it
            raise StoreError(f"the blob store {self!r} is not attached to a catalog")
        return self._catalog


def stage_each(
    store: BlobStore, blobs: Iterable[tuple[str, BlobSource]], *, stage: Callable[[Octets], StagedBlob] | None = None
) -> list[StagedBlob]:
    """:meth:`BlobStore.stage_import` by staging one blob after the other (each checked); all discarded on failure.

    ``stage`` stages one blob (the store's :meth:`~BlobStore.stage` by default).
    """
    stage = stage or store.stage
    staged: list[StagedBlob] = []
    seen: set[str] = set()
    try:
        for sha256, content in blobs:
            if sha256 in seen:
                continue
            seen.add(sha256)
            blob = stage(blob_octets(content))
            staged.append(blob)
            check_imported_blob(sha256, blob.info.sha256)
    except BaseException:
        with cleaning_up_after_failure():
            discard_all(staged)
        raise
    return staged


class Spooled:
    """A blob's octets written ahead of its import to a local file, hashed on the way (:attr:`info`): a
    :data:`BlobSource` (calling it reads the file) to be checked before it is imported, and discarded after.

    What :func:`spool_ahead` makes for a store that cannot write a blob ahead in its own place; the blob files
    (:meth:`pdi.archive.blobs.files.FileBlobs.write_ahead`) write it where the import takes it without a copy.
    """

    def __init__(self, path: Path, info: BlobInfo) -> None:
        self.path = path
        self.info = info

    def __call__(self) -> Iterator[bytes]:
        with self.path.open("rb") as f:
            yield from pieces(f)

    def place(self) -> None:
        """Once its octets are known to be the blob's (checked against the digest it was fetched for): put it where
        its import takes it from, ahead of that import, where the store can (blob files: at its name, marked as not
        yet durable, :meth:`pdi.archive.blobs.files.FileBlobs.place_ahead`); here, nothing to do."""

    def discard(self) -> None:
        """Remove the file (after its import, or when it is refused)."""
        with contextlib.suppress(OSError):
            self.path.unlink()


def spool_ahead(source: Octets) -> Spooled:
    """``source`` written to a new temporary file (removed again if reading it fails), hashed as it is written."""
    import tempfile  # here: with shutil, random and the compressors it pulls in, not at every command's start

    fd, name = tempfile.mkstemp(prefix="pdi-ahead-")
    digests = Digests()
    try:
        with os.fdopen(fd, "wb") as out:
            for piece in views(source):  # each hashed and written before the next is read
                digests.update(piece)
                out.write(piece)
        return Spooled(Path(name), digests.finish())
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(name)
        if isinstance(exc, OSError):
            raise StoreError(f"cannot write a blob to {name}: {exc}") from exc
        raise


def check_imported_blob(expected: str, found: str) -> None:
    """An import's object must still have the SHA-256 its record names."""
    if found != expected:
        raise IntegrityError(
            f"the object for {expected} in the import has the SHA-256 {found}:"
            " it changed or is damaged; nothing was imported"
        )


_Pin = TypeVar("_Pin", bound=BlobPin)


def _each(items: Sequence[_Pin], action: Callable[[_Pin], None]) -> None:
    """``action`` on every item, even when it fails on one; then the first failure is raised."""
    errors: list[BaseException] = []
    for item in items:
        try:
            action(item)
        except BaseException as exc:  # act on the rest, then report the first
            errors.append(exc)
    if errors:
        raise errors[0]


def discard_all(blobs: Sequence[StagedBlob]) -> None:
    """After a failed deposit: take back what staging added, when nothing else holds it."""
    _each(blobs, lambda blob: blob.discard())


@contextlib.contextmanager
def cleaning_up_after_failure() -> Iterator[None]:
    """Around the clean-up of a write that failed, inside its ``except``: the clean-up's own failure does not
    replace the write's, which says what became of the write. After a PostgreSQL ``COMMIT`` of unknown outcome
    (:class:`~pdi.errors.CommitUnknownError`) the catalog is not asked again for a second
    (:mod:`pdi.archive.postgres.servers`), so the discard of a staged S3 object was refused, and its "try again
    shortly" was said in place of "whether it was applied is unknown": a client that tried again minted a second
    name. What the clean-up left is held by its staging row for at most
    :data:`~pdi.archive.catalog.blobs.STAGING_LIFETIME`, then ``pdi verify --remove-unreferenced`` takes it, unless
    the commit landed and a name holds it. The clean-up's failure is kept as a note of the write's (outside an
    ``except``, where there is no write's failure to keep, it is raised)."""
    # the write's failure, read on entering: inside the handler below, sys.exception() is the clean-up's own
    failing = sys.exception()
    try:
        yield
    except Exception as exc:
        if failing is None:  # not inside an except: nothing else to say
            raise
        failing.add_note(f"cleaning up after it failed also failed: {exc}")


def release_all(pins: Sequence[BlobPin]) -> None:
    """Close every pin, even when closing one fails."""
    _each(pins, lambda pin: pin.close())
