"""The ``Store`` protocol: what the archive needs from a storage backend.

A store keeps the catalog (series, documents, versions, representations,
assertions, daily serial counters) and the bytes of every representation.
Every operation that changes something is one transaction: a deposit is
either wholly in the store or not at all, and the daily serial a deposit
takes is allocated inside the same transaction, so serials are gap-free and
never reused even when several processes mint at once or one dies midway.

Two implementations: :mod:`pdi.archive.sqlite` (SQLite in WAL mode plus
content-addressed blob files, the embedded default) and
:mod:`pdi.archive.postgres` (PostgreSQL through psycopg 3). Both share the
SQL in :mod:`pdi.archive.sql`; the protocol is what :class:`pdi.archive.Archive`
relies on.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from pdi.archive.blobs import BlobInfo, ChunkedReader, Octets

#: A blob's bytes, or a function that gives them when the store needs them, in
#: hand or as a stream (an import reads one object at a time, never the whole bag).
BlobSource = bytes | Callable[[], "bytes | Octets"]


def blob_octets(source: BlobSource) -> Octets:
    """The octets of ``source``: bytes, or what its function returns (bytes or a stream)."""
    return source if isinstance(source, bytes) else source()



class BlobPin(Protocol):
    """A staged blob held safe from removal until the deposit that names it has committed.

    A store that writes blobs before its catalog transaction hands one back
    for each blob it staged; the deposit calls :meth:`secure` inside its
    catalog transaction and :meth:`close` after it.
    """

    def secure(self) -> None:
        """Inside the catalog transaction: put the blob back if it was removed meanwhile."""
        ...

    def close(self) -> None:
        """Release the pin."""
        ...


class StagedBlob(BlobPin, Protocol):
    """A blob written from a stream before its catalog transaction: what it is, and its pin.

    :meth:`close` after a deposit that failed (or found the blob already
    stored) removes what staging added, when nothing else holds it.
    """

    info: BlobInfo

    def discard(self) -> None:
        """After a failed deposit: remove the blob if staging added it and nothing else holds it; release the pin."""
        ...


#: The schema version this code writes. Older catalogs are migrated forward on open.
SCHEMA_VERSION = 4

#: How a representation's octets are kept: ``exact`` (as deposited, the
#: default since schema 4) or ``canonical`` (a text deposited before then,
#: stored only in its CRLF-canonical form: the deposited line endings are lost).
STORED_EXACT = "exact"
STORED_CANONICAL = "canonical"


@dataclass(frozen=True)
class SeriesRecord:
    """A registered document series; ``parent`` is the series it was delegated under."""

    name: str
    parent: str | None
    authority: str
    created_at: str


@dataclass(frozen=True)
class NewRepresentation:
    """One format of a deposit, checked and its octets already staged (:meth:`Store.stage_blob`)."""

    format: str
    media_type: str
    charset: str | None
    line_ending: str | None
    blob: StagedBlob

    @property
    def sha256(self) -> str:
        return self.blob.info.sha256

    @property
    def size(self) -> int:
        return self.blob.info.size


@dataclass(frozen=True)
class RepresentationRecord:
    """One stored format of one version of one document."""

    series: str
    day: datetime.date
    unique_id: str
    serial: int | None
    version: int
    format: str
    media_type: str
    charset: str | None
    line_ending: str | None
    sha256: str
    size: int
    created_at: str
    stored: str = STORED_EXACT


@dataclass(frozen=True)
class DocumentKey:
    """A document (a generic, unversioned name): series, GMT day of minting, unique id."""

    series: str
    day: datetime.date
    unique_id: str


@dataclass(frozen=True)
class DepositResult:
    """What a deposit created: the document's key and the version.

    ``unchanged``: nothing was created, as the latest version ``version``
    already holds exactly these representations (a deposit with ``skip_identical``).
    """

    key: DocumentKey
    version: int
    unchanged: bool = False


@dataclass(frozen=True)
class AssertionRecord:
    """An append-only statement ``key = value`` about ``subject`` (a canonical PDI string)."""

    id: int
    subject: str
    key: str
    value: str
    who: str
    at: str


@dataclass(frozen=True)
class CatalogProblem:
    """One inconsistency in the catalog itself (not in the blobs): what kind, about what, and how."""

    kind: str
    subject: str
    detail: str


@dataclass(frozen=True)
class AuditRecord:
    """One entry of the audit log: at what time, who, did what, to which name, in what detail, from where."""

    at: str
    who: str
    action: str
    subject: str
    detail: str
    address: str | None = None
    id: int = 0


@dataclass(frozen=True)
class ListQuery:
    """Filters for listing representations; ``None`` means any."""

    series: str | None = None
    year: int | None = None
    month: int | None = None
    day: int | None = None
    unique_id: str | None = None
    format: str | None = None
    version: int | None = None
    limit: int | None = None
    offset: int = 0


class BlobObserver(Protocol):
    """What rides on a blob's one pass while it is staged (content checks, index builders)."""

    def update(self, piece: bytes) -> None: ...

    def finish(self, info: BlobInfo) -> None: ...


class Store(Protocol):
    """A catalog plus blob storage with transactional deposits."""

    location: str

    def schema_version(self) -> int: ...

    def close(self) -> None: ...

    # series
    def add_series(self, record: SeriesRecord) -> None: ...

    def get_series(self, name: str) -> SeriesRecord | None: ...

    def list_series(self) -> list[SeriesRecord]: ...

    # deposits (each is one transaction). With ``skip_identical``, a deposit
    # whose representations (format, SHA-256, charset: the same set) equal those
    # of the document's latest version creates nothing and answers with that
    # version, ``unchanged``; for ``mint`` this applies to an existing unique id,
    # which is otherwise an ImmutabilityError.
    def mint(
        self,
        series: str,
        day: datetime.date,
        unique_id: str | None,
        representations: Sequence[NewRepresentation],
        at: str,
        *,
        skip_identical: bool = False,
    ) -> DepositResult: ...

    def new_version(
        self,
        key: DocumentKey,
        representations: Sequence[NewRepresentation],
        at: str,
        *,
        skip_identical: bool = False,
    ) -> DepositResult: ...

    def add_formats(
        self,
        key: DocumentKey,
        version: int,
        representations: Sequence[NewRepresentation],
        at: str,
    ) -> DepositResult: ...

    def import_all(
        self,
        series: Sequence[SeriesRecord],
        representations: Sequence[tuple[RepresentationRecord, BlobSource]],
        assertions: Sequence[tuple[DocumentKey, AssertionRecord]],
        audit: Sequence[AuditRecord] = (),
    ) -> int: ...

    # reading
    def document_exists(self, key: DocumentKey) -> bool: ...

    def versions(self, key: DocumentKey) -> list[int]: ...

    def representations(
        self, key: DocumentKey, version: int | None = None
    ) -> list[RepresentationRecord]: ...

    def list_representations(self, query: ListQuery) -> list[RepresentationRecord]: ...

    def iter_representations(self) -> Iterator[RepresentationRecord]: ...

    def stage_blob(self, source: Octets, observe: BlobObserver | None = None) -> StagedBlob:
        """Write a blob from a stream before any catalog transaction, hashing it as it comes.

        ``observe`` sees every piece, and its ``finish`` runs before the blob is
        put in place: an exception from either leaves nothing behind.
        """
        ...

    def blob_info(self, sha256: str) -> BlobInfo | None: ...

    def open_blob(self, sha256: str, *, name: str) -> ChunkedReader | None:
        """A reader of the blob by verified chunks, or ``None`` when it is missing; ``name`` is named in errors."""
        ...

    def read_blob(self, sha256: str) -> bytes | None: ...

    def blob_names(self) -> set[str]: ...

    def catalog_problems(self, limit: int = 1000) -> list[CatalogProblem]: ...

    def audit_log(self, after: int = 0, limit: int = 1000) -> list[AuditRecord]: ...

    def remove_unreferenced(self, older_than: float) -> list[str]: ...

    # assertions
    def add_assertion(
        self, key: DocumentKey, subject: str, name: str, value: str, who: str, at: str
    ) -> AssertionRecord: ...

    def assertions(self, subject: str | None = None) -> list[AssertionRecord]: ...
