"""Fixity checks: every stored blob read again against its SHA-256, and the catalog checked against itself.

What a check reports is :mod:`pdi.archive.fixity`; how a blob is read by
verified chunks, :mod:`pdi.archive.blobs`. Each blob's check is recorded in
the catalog for the reader's document page.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from pdi.archive.base import ArchiveBase
from pdi.archive.blobs.files import FileBlobs
from pdi.archive.catalog.serial_names import PROBLEM_KIND
from pdi.archive.naming import record_name, timestamp
from pdi.archive.store import FixityCheck, FixitySummary
from pdi.errors import LimitError, StoreError

if TYPE_CHECKING:
    from pdi.archive.fixity import VerifyReport

__all__ = ["DERIVED_PROBLEM", "FIXITY_CHECKS_PAGE", "Checks"]

#: Fixity checks :meth:`Checks.verify` records in one transaction.
FIXITY_CHECKS_PAGE = 1000
#: The kind of a :meth:`Checks.verify` problem that :meth:`Checks.repair_derived` puts right: a row of a table the
#: catalog keeps from its other tables for speed (SQLite's ``serial_names``) that says what they do not.
DERIVED_PROBLEM = f"catalog-{PROBLEM_KIND}"


class Checks(ArchiveBase):
    """Verify every blob and the catalog; remove what interrupted deposits left."""

    def repair_derived(self) -> int:
        """Make the tables the catalog keeps from its other tables for speed again from them (what puts right a
        :data:`DERIVED_PROBLEM`; not audited: no record of any name changes); the rows they hold now."""
        return self.store.repair_derived()

    def probe_catalog(self) -> None:
        """One cheap query of the catalog (a resolver's readiness, ``/readyz``); raises what a failing catalog raises,
        and a :class:`~pdi.errors.StoreError` when the catalog at the archive's place is not the one opened."""
        self.store.check_in_place()
        self.store.withdrawals_generation()

    def probe_blobs(self) -> None:
        """The blob store's first name listed (a resolver's readiness, ``/readyz``); raises what a failing store
        raises. Reads the first entry of a directory of blob files, one page of an S3 bucket's listing, one
        row of PostgreSQL's blobs."""
        blobs = self.store.blobs
        if isinstance(blobs, FileBlobs):  # its names() lists every subdirectory first: too much for a probe
            try:
                with os.scandir(blobs.root / "blobs") as entries:
                    next(entries, None)
            except OSError as exc:
                raise StoreError(f"cannot list blobs in {blobs.root}: {exc.strerror}") from exc
            return
        names = blobs.names()
        try:
            next(names, None)
        finally:
            close = getattr(names, "close", None)
            if close is not None:
                close()

    def fixity_summary(self) -> tuple[int, FixitySummary]:
        """How many blobs the catalog names, and what the latest fixity check of each checked blob found."""
        return self.store.count_blobs_used(), self.store.fixity_summary()

    def catalog_waits(self) -> tuple[int, float]:
        """Requests that waited for one of the catalog's pooled connections (PostgreSQL, ``--db-connections``) since
        this was last asked in this process, and the seconds they waited in all (SQLite: none)."""
        return self.store.pool_waits()

    def verify(self, progress: Callable[[int, int], None] | None = None) -> VerifyReport:
        """Recompute the SHA-256 of every stored representation and check the catalog itself.

        Reports missing or altered blobs, and damage to the catalog: what the
        database's own integrity check finds and any broken invariant of the
        catalog (:meth:`pdi.archive.catalog.SQLStore.catalog_problems`), as
        problems of kind ``catalog-…``. Blobs are checked in SHA-256 order,
        read from the catalog a page at a time and merged with the sorted
        names of the stored blobs (to find those no name holds), so memory
        does not grow with the number of names; only a problem's names are
        gathered. Each blob's check (when, and whether its bytes were whole) is
        recorded in the catalog, :data:`FIXITY_CHECKS_PAGE` to a transaction,
        for the reader's document page (:meth:`document`); by the owner alone: a
        member of the group of an archive shared with it checks each blob, records none.
        """
        from pdi.archive.fixity import (  # here: only an audit reports
            Problem,
            VerifyReport,
            described_problem,
        )

        report = VerifyReport()
        total = self.store.count_blobs_used()
        stored = self.store.iter_blob_names()
        waiting = next(stored, None)  # the next stored blob not yet matched
        described: dict[tuple[str, str, str | None, str | None], tuple[str, str] | None] = {}
        checks: list[FixityCheck] = []
        for done, use in enumerate(self.store.iter_blob_uses(), start=1):
            while waiting is not None and waiting < use.sha256:
                report.unreferenced.append(waiting)
                waiting = next(stored, None)
            if waiting == use.sha256:
                waiting = next(stored, None)
            if use.purged:
                gone = tuple(
                    (str(record_name(r)), r.purged) for r in self.store.blob_representations(use.sha256) if r.purged
                )
                report.purged.extend(Problem("purged", use.sha256, (name,), f"octets purged {at}") for name, at in gone)
            if use.purged == use.representations:  # every name purged: the octets should be gone
                report.checked_representations += use.representations
                left = self.store.open_blob(use.sha256, name=f"blob {use.sha256}")
                if left is not None:
                    left.close()
                    report.problems.append(Problem(
                        "unpurged", use.sha256, tuple(name for name, _ in gone),
                        "the octets of purged names are still stored; purge again (pdi withdraw NAME --reason … --purge)",
                    ))
                if progress is not None:
                    progress(done, max(total, done))
                continue
            problem = self._check_blob(use.sha256, use.sizes)
            checks.append(FixityCheck(
                use.sha256, timestamp(self.now()), problem is None, None if problem is None else problem[0]
            ))
            if len(checks) >= FIXITY_CHECKS_PAGE:
                self._record_fixity_checks(checks)
                checks.clear()
            if problem is None:
                problem = described_problem(use, described)
            if problem is not None:
                names = tuple(sorted(str(record_name(r)) for r in self.store.blob_representations(use.sha256)))
                report.problems.append(Problem(problem[0], use.sha256, names, problem[1]))
            report.checked_blobs += 1
            report.checked_representations += use.representations
            if progress is not None:
                progress(done, max(total, done))
        self._record_fixity_checks(checks)
        while waiting is not None:
            report.unreferenced.append(waiting)
            waiting = next(stored, None)
        for found in self.store.catalog_problems():
            report.problems.append(Problem(f"catalog-{found.kind}", "", (found.subject,), found.detail))
        return report

    def _record_fixity_checks(self, checks: list[FixityCheck]) -> None:
        """Each check recorded in the catalog, unless this process may only read it (a member of the group of an
        archive shared with it): its checks are reported, and left to the owner's to record."""
        if not self.store.read_only:
            self.store.record_fixity_checks(checks)

    def _check_blob(self, sha: str, sizes: tuple[int, int]) -> tuple[str, str] | None:
        """Read one blob whole, streamed: ``(kind, detail)`` if it is missing, altered or of another size.

        ``sizes`` are the smallest and the largest size the catalog records
        for it (:class:`~pdi.archive.store.BlobUse`).
        """
        reader = self.store.open_blob(sha, name=f"blob {sha}")
        if reader is None:
            return ("missing", "no stored bytes")
        with reader:
            found = reader.audit()
        where = ""
        if found.damaged:
            first = found.damaged[0]
            start = first * reader.info.chunk_size
            where = (
                f"chunk {first}, octets {start} to"
                f" {min(start + reader.info.chunk_size, found.size) - 1}"
                + (f", and {len(found.damaged) - 1} more" if len(found.damaged) > 1 else "")
            )
        if found.sha256 != sha:
            return ("altered", f"SHA-256 is now {found.sha256}" + (f" ({where})" if where else ""))
        if sizes != (found.size, found.size):
            return ("size", f"size {found.size} differs from the catalog")
        if where:  # the octets are whole, the catalog's digests of their chunks are not: every read is refused
            return ("catalog-chunks", f"the catalog's digest of {where.replace(', octets', ' (octets', 1)}) is not"
                                      " the SHA-256 of those octets, which are whole (they match the blob's"
                                      " SHA-256): every read of them is refused as damaged")
        return None

    def remove_unreferenced(self, older_than: float = 3600.0) -> list[str]:
        """Delete what interrupted deposits left: blobs no name holds, untouched for ``older_than`` seconds.

        Nothing any name holds is ever removed; a deposit still in progress
        keeps its blob (see the store's method). Returns what was removed.
        """
        if older_than < 0:
            raise LimitError("older_than must not be negative")
        return self.store.remove_unreferenced(older_than)
