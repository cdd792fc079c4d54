"""Opening an archive's store: the catalog a location names, holding the blob store the catalog records.

A catalog and a blob store are chosen independently at ``pdi init`` and the
choice is recorded in the catalog (``blob_store``): no record means the
catalog's own blobs (files beside a SQLite catalog, rows in a PostgreSQL
catalog's database); ``s3://bucket/prefix`` an S3-compatible store, under
either catalog, through the same code.

Each catalog and blob store is imported when a location needs it: a command
on a SQLite archive with its own files loads neither psycopg nor boto3.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pdi.errors import ImmutabilityError, UnsupportedError

if TYPE_CHECKING:
    from pdi.archive.blobs.seam import BlobStore
    from pdi.archive.catalog import SQLStore
    from pdi.archive.store import OlderSchema



def is_postgres_url(location: str) -> bool:
    """Whether a location names a PostgreSQL database rather than a directory."""
    return location.startswith(("postgresql://", "postgres://"))


def open_store(
    location: str, *, create: bool, blobs: str | None = None, connections: int = 0, older: OlderSchema = "refuse",
    read_url: str | None = None,
) -> SQLStore:
    """The catalog at ``location`` holding the blob store it records (``blobs``: the one to record at init).

    ``connections`` sizes a PostgreSQL catalog's pool (0: the default). ``older`` says what is done with a
    catalog older than this pdi's schema (:data:`~pdi.archive.store.OlderSchema`): refused (the default, before
    anything is written), migrated (``pdi init`` alone), or kept as it is (what a backup and a restore do: they
    copy an archive, they do not upgrade it; such a catalog is fit only for reading what every released schema
    has, its blobs and where they are).
    ``read_url`` names a streaming replica of a PostgreSQL catalog that its reads go to (:mod:`pdi.archive.postgres`).
    """
    if read_url is not None and not (is_postgres_url(location) and is_postgres_url(read_url)):
        raise UnsupportedError(
            f"a replica to read from (--read-url {shown_location(read_url)}) needs a PostgreSQL archive and a postgresql://"
            f" URL of its replica; the archive is {shown_location(location)}"
        )
    if blobs is not None:  # the s3 extra is there (pdi._extras), or nothing is made
        import pdi.archive.blobs.s3  # noqa: F401
    checked = False
    if is_postgres_url(location):
        from pdi.archive.postgres import open_postgres

        catalog: SQLStore = open_postgres(location, create=create, connections=connections, older=older,
                                          read_url=read_url)
    else:
        from pdi.archive.sqlite import CATALOG, open_sqlite

        if blobs is not None and create and not os.path.exists(os.path.join(location, CATALOG)):
            # a new archive whose blobs are elsewhere has no blobs/ folder: its store is asked first, so that one
            # that does not answer leaves no catalog recording none (which would be a file archive without blobs/)
            _check_blob_store(blobs)
            checked = True
        catalog = open_sqlite(location, create=create, older=older, elsewhere=blobs is not None)
    try:
        recorded, waiting = catalog.opening_reads()
        if blobs is not None:
            recorded = _choose_blob_store(catalog, recorded, blobs, checked=checked)
        if recorded is not None:
            catalog.hold(_blob_store(recorded))
        # the messages deposited before the thread index (schema 10) are read once it can read their blobs (by
        # the opening that migrated it, or the next if that one stopped first: the catalog is at this schema)
        if older != "keep" and waiting and not catalog.read_only:  # a reader leaves them to the owner's next
            catalog.fill_message_heads()
    except BaseException:
        catalog.close()
        raise
    return catalog


def shown_location(location: str) -> str:
    """A location as it may be shown (a URL without its password)."""
    if not is_postgres_url(location):
        return location
    from pdi.archive.postgres import redact_url

    return redact_url(location)


def _blob_store(url: str) -> BlobStore:
    """The blob store a catalog records."""
    from pdi.archive.blobs.s3 import S3Store

    return S3Store.at(url)


def _choose_blob_store(catalog: SQLStore, recorded: str | None, blobs: str, *, checked: bool = False) -> str:
    """At ``pdi init --blobs``: the blob store to record (checked to answer, unless it was just now: ``checked``),
    or the one recorded already.

    A blob store is chosen when an archive is made: another one asked of an archive that records one, or of one
    whose own store holds documents, is an :class:`ImmutabilityError` (exit 5, as a series registered again with
    another parent is), raised before the store asked for is contacted, naming both and what to do instead.
    """
    from pdi.archive.blobs.s3 import S3Location

    wanted = str(S3Location.parse(blobs))
    if recorded is not None:
        if recorded != wanted:
            raise ImmutabilityError(
                f"the archive at {catalog.location} keeps its blobs in {recorded}, not in {wanted} as --blobs asks:"
                " a blob store is chosen when an archive is made. Run pdi init without --blobs to open and migrate"
                f" it as it is; to move its blobs into {wanted}: pdi backup DEST, then pdi restore DEST --to NEW"
                f" --blobs {wanted}"
            )
        return recorded
    if catalog.holds_documents():
        raise ImmutabilityError(_own_store_refusal(catalog, wanted))
    if not checked:
        _check_blob_store(wanted)
    catalog.record_blob_store(wanted)
    return wanted


def _own_store_refusal(catalog: SQLStore, wanted: str) -> str:
    """Why an archive whose own blob store holds documents is not given the S3 store ``wanted``."""
    if is_postgres_url(catalog.location):
        own = "in its PostgreSQL database"
    else:
        own = f"in files beside its catalog ({os.path.join(catalog.location, 'blobs')})"
    return (
        f"the archive at {catalog.location} keeps its blobs {own}, not in {wanted} as --blobs asks: a blob store"
        " is chosen when an archive is made, and this one holds documents. Run pdi init without --blobs to open and"
        f" migrate it as it is; to keep them in {wanted}: pdi init NEW --blobs {wanted}, then pdi export BAG here"
        " and pdi import BAG --archive NEW"
    )


def _check_blob_store(blobs: str) -> None:
    """That the object store ``blobs`` names answers, its bucket there (a :class:`StoreError` if not)."""
    from pdi.archive.blobs.s3 import S3Blobs, S3Location

    S3Blobs.open(str(S3Location.parse(blobs))).check_bucket()
