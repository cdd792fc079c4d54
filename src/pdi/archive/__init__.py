"""The archive: the one domain service (mint, deposit, version, resolve, list, assert, verify).

:class:`Archive` is the only place in pdi that knows about storage and time.
It mints PDIs (draft-mallery-urn-pdi-00 §2, read as ``PDI-GRAMMAR.md``: the
GMT day of minting, gap-free daily serials, or an encapsulated foreign id),
deposits the formats of each version immutably, resolves a name — down to a
fragment, through :mod:`pdi.fragments` — to exactly the stored bytes, lists
names, keeps append-only assertions, audits fixity, and moves whole archives
between stores as BagIt bags (:mod:`pdi.archive.bagit`).

Storage is the catalog (:mod:`pdi.archive.catalog`) holding a blob store
(:mod:`pdi.archive.blobs`): a directory
(SQLite catalog + content-addressed blob files, the default) or a
``postgresql://`` URL. What a deposit is — its format and charset, checked
against its bytes, and its CRLF-canonical text — is :mod:`pdi.archive.content`.
The values it answers with are :mod:`pdi.archive.results`; what a fixity
audit reports, :mod:`pdi.archive.fixity`; how a blob is read and checked by
chunk, :mod:`pdi.archive.blobs`.
A deposit whose bytes equal the latest version's of the same document stores
nothing and answers with that version (:class:`Deposit`, ``unchanged``)
unless forced.

:class:`Archive` is one public face joined from its parts, one module each
by concern, all on :class:`~pdi.archive.base.ArchiveBase` (the catalog, the
clock and the reader's guards): :mod:`~pdi.archive.deposits`,
:mod:`~pdi.archive.reading`, :mod:`~pdi.archive.statements`,
:mod:`~pdi.archive.listing`, :mod:`~pdi.archive.manifests`, :mod:`~pdi.archive.mirroring`,
:mod:`~pdi.archive.registries`, :mod:`~pdi.archive.browsing`,
:mod:`~pdi.archive.curation` and :mod:`~pdi.archive.checks`; the names and
times they share are :mod:`pdi.archive.naming`. Code outside the package uses
:class:`Archive`'s public methods only.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pdi._closing import Closing
from pdi._lazy import exports
from pdi.archive.browsing import Browsing
from pdi.archive.checks import Checks
from pdi.archive.curation import Curation
from pdi.archive.deposits import BatchItem, Deposits
from pdi.archive.listing import MAX_SEARCH_LIMIT, Listing
from pdi.archive.manifests import ManifestPage, Manifests
from pdi.archive.mirroring import Mirroring
from pdi.archive.naming import MAX_ASSERTION_VALUE, canonical_series, parse_pdi, utc_now
from pdi.archive.registries import Registries
from pdi.archive.results import (
    CitationResolved,
    Deposit,
    DocumentChange,
    DocumentDetail,
    DocumentPage,
    ElementReindexReport,
    Generic,
    GenericVersion,
    IndexRun,
    ReindexReport,
    Resolved,
    SearchHit,
    SearchResults,
)
from pdi.archive.statements import Statements
from pdi.archive.store import AssertionRecord, AuditRecord, OlderSchema, SeriesRecord
from pdi.identifier import PDI

if TYPE_CHECKING:
    from pdi.archive.catalog import SQLStore
    from pdi.archive.content import Content, canonical_text, detect_charset, is_text_format
    from pdi.archive.fixity import VerifyReport
else:  # what a deposit is, and what an audit reports: loaded when asked for, not by a command that reads
    __getattr__, __dir__ = exports(__name__, {
        "content": "Content canonical_text detect_charset is_text_format", "fixity": "VerifyReport"})

__all__ = [
    "DEFAULT_LOCATION",
    "MAX_ASSERTION_VALUE",
    "MAX_SEARCH_LIMIT",
    "Archive",
    "AssertionRecord",
    "AuditRecord",
    "BatchItem",
    "CitationResolved",
    "Content",
    "Deposit",
    "DocumentChange",
    "DocumentDetail",
    "DocumentPage",
    "ElementReindexReport",
    "Generic",
    "GenericVersion",
    "IndexRun",
    "ManifestPage",
    "ReindexReport",
    "Resolved",
    "SearchHit",
    "SearchResults",
    "SeriesRecord",
    "VerifyReport",
    "canonical_series",
    "canonical_text",
    "detect_charset",
    "is_text_format",
    "parse_pdi",
    "refuse_writing_in",
    "resolve_location",
]

#: Where the archive lives when neither ``--archive`` nor ``$PDI_ARCHIVE`` says.
DEFAULT_LOCATION = "pdi-archive"

def resolve_location(location: str | os.PathLike[str] | None) -> str:
    """The archive location: the argument, else ``$PDI_ARCHIVE``, else ``./pdi-archive``."""
    if location is not None and str(location) != "":
        return str(location)
    return os.environ.get("PDI_ARCHIVE") or DEFAULT_LOCATION


def refuse_writing_in(location: str, path: str | os.PathLike[str]) -> None:
    """A :class:`~pdi.errors.ReadOnlyArchiveError` naming the archive and who may write it, before anything is
    written, when ``path`` (a key, the registry, the SGML folder, an export) is in the folder of the archive at
    ``location`` and this process may read that archive, not write it; nothing when it may, or ``path`` is
    elsewhere (:func:`pdi.archive.sqlite_opening.refuse_writing_in`)."""
    from pdi.archive.sqlite_opening import refuse_writing_in as refuse

    refuse(resolve_location(location), path)


def _open_store(
    location: str, *, create: bool, older: OlderSchema, blobs: str | None = None, connections: int = 0,
    read_url: str | None = None,
) -> SQLStore:
    """The catalog at ``location`` holding the blob store it records (``blobs``: the one to record at init), an
    older schema migrated or refused as ``older`` says."""
    from pdi.archive.catalog.opening import open_store

    return open_store(location, create=create, blobs=blobs, connections=connections, older=older, read_url=read_url)


class Archive(Deposits, Statements, Listing, Manifests, Mirroring, Registries, Browsing, Curation, Checks, Closing):
    """Mint, deposit, version, resolve, list, assert and verify, over one catalog (:class:`~pdi.archive.catalog.SQLStore`).

    The public face of the archive: its methods are those of its parts (see
    the module's docstring), each of which holds one concern; this class
    opens and closes the store and moves whole archives as BagIt bags.
    """

    # --- opening -----------------------------------------------------------------
    @classmethod
    def init(
        cls,
        location: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], datetime.datetime] = utc_now,
        blobs: str | None = None,
        migrate: bool = True,
    ) -> Archive:
        """Create an archive (or open and migrate an existing one) at ``location``: what ``pdi init`` does, and
        the only opening that migrates an archive whose schema is older than this pdi's (all steps or none, in one
        transaction; back it up first, :func:`pdi.archive.backup.backup`). ``migrate=False`` makes one where there
        is none but refuses an older one, as :meth:`open` does (``pdi init --no-migrate``).

        A directory it makes is its owner's alone whatever the umask (0700, the catalog 0600); one there already
        keeps its mode, and what is made in it is readable by its group only if it is shared with it
        (:mod:`pdi.archive.modes`). An existing archive's modes are left as they are.

        ``blobs`` (``s3://bucket/prefix``) keeps the blobs in an S3-compatible
        store instead of beside the catalog; it is recorded in the catalog, so
        :meth:`open` finds it again. The endpoint and keys come from the
        environment (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``,
        ``AWS_SECRET_ACCESS_KEY``), never from the catalog.
        """
        older: OlderSchema = "migrate" if migrate else "refuse"
        return cls(_open_store(resolve_location(location), create=True, older=older, blobs=blobs), clock=clock)

    @classmethod
    def open(
        cls,
        location: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], datetime.datetime] = utc_now,
        connections: int = 0,
        read_url: str | None = None,
    ) -> Archive:
        """Open an existing archive; :class:`NotFoundError` when there is none.

        An archive whose schema is older than this pdi's is refused, before
        anything of it is changed (:class:`~pdi.errors.OlderSchemaError`, a
        :class:`~pdi.errors.StoreError`): opening never migrates, as every
        ``pdi`` command but ``pdi init`` never does, so that a program, a
        resolver restarted after an upgrade or a look at a restored rollback
        leaves the catalog as the older pdi wrote it. :meth:`init` migrates it.
        One newer than this pdi is refused too.

        ``connections`` is how many catalog connections a PostgreSQL archive
        keeps at most, in a pool (0: :data:`pdi.archive.catalog.base.DEFAULT_CONNECTIONS`);
        each thread's transaction takes one, and waits while all are taken.
        ``read_url`` names a streaming replica of a PostgreSQL archive: reads go
        there, writes to ``location`` (:mod:`pdi.archive.postgres`).
        """
        store = _open_store(resolve_location(location), create=False, older="refuse", connections=connections,
                            read_url=read_url)
        return cls(store, clock=clock)

    @property
    def location(self) -> str:
        """Where the archive lives (a directory or a URL without its password)."""
        return self.store.location

    @property
    def read_only(self) -> bool:
        """Whether this process may only read the archive (a member of the group of a directory archive shared with
        it, docs/reference/backup.md "Who can read an archive"): each write is refused with a
        :class:`~pdi.errors.ReadOnlyArchiveError` naming the archive and who may write it."""
        return self.store.read_only

    def refuse_if_read_only(self) -> None:
        """A :class:`~pdi.errors.ReadOnlyArchiveError` naming the archive and who may write it when this process may
        only read it (:attr:`read_only`): said by a command that writes before it reads or fetches anything (``pdi
        verify --repair``, ``pdi mirror sync``), rather than at its first write."""
        self.store.refuse_if_read_only()

    def schema_version(self) -> int:
        """The version of the catalog's schema (what ``pdi init`` made or migrated it to)."""
        return self.store.schema_version()

    def close(self) -> None:
        """Release the store's connections."""
        self.store.close()


    # --- moving ----------------------------------------------------------------------------------
    def export_bag(
        self,
        directory: str | os.PathLike[str],
        *,
        series: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Write the archive (or one series and its subseries) as a BagIt bag; returns the names."""
        from pdi.archive.bagit import export_bag

        return export_bag(self, Path(directory), series=series, progress=progress)

    def import_bag(
        self,
        directory: str | os.PathLike[str],
        *,
        progress: Callable[[int, int], None] | None = None,
        series: str | None = None,
        deposited: Callable[[PDI, str], None] | None = None,
        force: bool = False,
    ) -> int:
        """Validate a bag and bring every name and byte in it into this archive (all or nothing).

        Without ``series``: a bag :meth:`export_bag` wrote, whose names move as they were;
        returns the new representations. A version whose octets a version of its document
        withdrawn here holds is refused, as a deposit of them is (:class:`~pdi.errors.ImmutabilityError`,
        :attr:`~pdi.errors.ImmutabilityError.forceable`), unless ``force``. With ``series``: a bag
        another tool made, whose payload files become new documents of ``series``
        (:func:`pdi.archive.bagit.import_payload`; ``deposited`` is told each name and its path in
        the bag); returns how many.
        """
        from pdi.archive.bagit import import_bag

        return import_bag(self, Path(directory), progress=progress, series=series, deposited=deposited,
                          force=force)
