"""What every part of :class:`~pdi.archive.Archive` stands on: the catalog, the clock, and who may read what.

:class:`ArchiveBase` holds the catalog (:class:`~pdi.archive.catalog.SQLStore`), the clock
and the writer's name, and asks :mod:`pdi.archive.access` — the one rule of
what a reader may learn — on behalf of every read path: the guards that
refuse a name (404 or 403), and what a list leaves out (:class:`Unlisted`).
The parts of the archive (:mod:`pdi.archive.deposits`, :mod:`~pdi.archive.reading`,
:mod:`~pdi.archive.listing`, :mod:`~pdi.archive.browsing`,
:mod:`~pdi.archive.statements`, :mod:`~pdi.archive.curation`,
:mod:`~pdi.archive.checks`) extend it, and :class:`pdi.archive.Archive` joins them.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from pdi.archive.access import (
    HIDDEN,
    PUBLIC,
    Disclosure,
    Unlisted,
    current_reader,
    disclosure,
    effective_access,
    unlisted,
)
from pdi.archive.blobs.memo import FixityMemo
from pdi.archive.naming import default_who, key_of, timestamp, utc_now
from pdi.archive.results import Generic
from pdi.archive.store import DocumentKey, RepresentationRecord, WithdrawalRecord
from pdi.errors import (
    AccessError,
    NotFoundError,
    ReplicaBehindError,
    ScopeError,
    StoreError,
    UnknownSeriesError,
    WithdrawnError,
)
from pdi.identifier import PDI

if TYPE_CHECKING:
    from pdi.archive.catalog import SearchAccess, SQLStore

__all__ = ["ArchiveBase", "purged_meanwhile"]

#: The archive of the current :meth:`ArchiveBase.snapshot` and what its reads have read once for all of them
#: (None: in none).
_SNAPSHOT: ContextVar[tuple[ArchiveBase, dict[str, Any]] | None] = ContextVar("pdi_archive_snapshot", default=None)
_T = TypeVar("_T")


def gone(parsed: PDI, what: str, tombstone: WithdrawalRecord) -> WithdrawnError:
    """The :class:`WithdrawnError` (410) of ``parsed`` under ``tombstone``: "NAME: WHAT withdrawn AT: REASON"."""
    purged = " (its octets purged)" if tombstone.purged else ""
    return WithdrawnError(f"{parsed.without_fragment()}: {what} withdrawn {tombstone.at}{purged}: {tombstone.reason}",
                          reason=tombstone.reason, at=tombstone.at, who=tombstone.who, purged=tombstone.purged)


def purged_meanwhile(store: SQLStore, sha256: str, what: str) -> StoreError | None:
    """The error of an export that found the octets ``sha256`` (of ``what``) its snapshot names missing or cut
    short, when a purge committed since the snapshot began took them; ``None`` when none did (they are lost: the
    export's own error, a :class:`~pdi.errors.DamagedError`, stands). Asked after the snapshot has ended, of the
    catalog as it is now.

    A catalog's snapshot keeps what it names, rows and all, however long it lasts; the blob files beside a SQLite
    catalog and the objects of an S3-compatible store are outside it: a takedown deletes them at once, and an
    export that began before it cannot be finished as one view of the archive (nor would the octets be wanted).
    """
    if not store.octets_purged(sha256):
        return None
    return StoreError(f"{what} was purged while the export ran (a takedown committed after the export's snapshot of"
                      " the catalog began, and its octets are gone from the blob store): nothing was written;"
                      " export again")


def refused(what: str, *, embargoed_until: str | None = None) -> AccessError:
    """The ``403`` of a read the current reader may not make (``what``: what it is, "… is embargoed until …").

    A reader who presented a token (live: an unknown one never gets this far) is told that it does not cover
    this, a :class:`~pdi.errors.ScopeError` (RFC 6750 §3.1's ``insufficient_scope``); an anonymous reader that
    a token that may read it is needed. An embargo's end (a catalog timestamp) is the problem's
    ``embargoed_until`` member too, which the reader's app says in words."""
    details: dict[str, object] | None = None if embargoed_until is None else {"embargoed_until": embargoed_until}
    reader = current_reader.get()
    if reader is not None and reader.token is not None:
        return ScopeError(f"{what}; the token {reader.token.name!r} does not cover it", details=details)
    return AccessError(f"{what}; a token that may read it is needed", details=details)


class ArchiveBase:
    """The catalog, the clock and the current reader's guards, which every part of the archive uses."""

    def __init__(
        self,
        store: SQLStore,
        *,
        clock: Callable[[], datetime.datetime] = utc_now,
        who: str | None = None,
    ) -> None:
        self.store = store
        self._clock = clock
        self.who = who or default_who()
        #: The chunks of blob files this process has verified (:mod:`pdi.archive.blobs.memo`), trusted
        #: while the file is unchanged; ``None`` (the default): every read hashes every chunk it touches.
        self.fixity_memo: FixityMemo | None = None
        #: Series this archive has seen registered: a series once registered stays so (:meth:`Deposits._registered`).
        self._series_registered: set[str] = set()

    def now(self) -> datetime.datetime:
        """The archive's clock, in GMT: what a deposit made now is dated (tests give it a fixed one)."""
        return self._clock().astimezone(datetime.UTC)


    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads made within taken as one: one read transaction of the catalog (a consistent view, one round trip
        to open and close it), and who may read each series (:meth:`series_access`) read once.

        For the reads that make one answer (a resolver's look-up of a name):
        nothing written within is seen by the reads after it in the same
        snapshot. Snapshots within a snapshot join it.
        """
        current = _SNAPSHOT.get()
        if current is not None and current[0] is self:
            yield
            return
        with self.store.reading():
            token = _SNAPSHOT.set((self, {}))
            try:
                yield
            finally:
                _SNAPSHOT.reset(token)

    def in_one_view(self, read: Callable[[], _T]) -> _T:
        """``read()`` inside one :meth:`snapshot`, asked once more when a snapshot begun on a lagging streaming replica
        needed what only the primary had (:class:`~pdi.errors.ReplicaBehindError`): the second is read on the
        primary, whole. Either way its answer is of one view of the catalog. Inside a snapshot already, it joins
        it (and a refusal goes to whoever began that one)."""
        current = _SNAPSHOT.get()
        if current is not None and current[0] is self:
            return read()
        try:
            with self.snapshot():
                return read()
        except ReplicaBehindError:
            with self.snapshot():
                return read()

    def purged_meanwhile(self, record: RepresentationRecord, name: PDI | str) -> StoreError | None:
        """After an export's snapshot: the error to raise in place of the one reading ``record`` (named ``name``)
        inside it failed with, when a purge committed since took its octets (:func:`purged_meanwhile`)."""
        return purged_meanwhile(self.store, record.sha256, str(name))

    def series_access(self) -> dict[str, str]:
        """Each registered series and who may read it, its own setting and those above it taken together."""
        current = _SNAPSHOT.get()
        memo = current[1] if current is not None and current[0] is self else None
        if memo is not None and "series_access" in memo:
            return dict(memo["series_access"])
        records = {s.name: s for s in self.store.list_series()}
        access = {name: effective_access(records, name) for name in records}
        if memo is not None:
            memo["series_access"] = dict(access)
        return access

    def _unreadable(self) -> dict[str, str]:
        """The series the current reader may not read, with their access (none for the owner)."""
        reader = current_reader.get()
        if reader is None:
            return {}
        return {name: access for name, access in self.series_access().items()
                if disclosure(reader, name, access) is not Disclosure.ALL}

    def _unlisted(self) -> Unlisted:
        """What every list shown to the current reader leaves out (:func:`pdi.archive.access.unlisted`).

        Nothing for the owner; for a reader, the series it may not read and
        the embargoes not yet over outside the series it may read (read by
        index: costs the embargoes in force, not the catalog).
        """
        reader = current_reader.get()
        if reader is None:
            return Unlisted()
        return unlisted(reader, self.series_access(), self.store.embargoes_in_force(timestamp(self.now())))

    @staticmethod
    def _listed(documents: Iterable[Generic], hidden: Unlisted) -> list[Generic]:
        """``documents`` as the reader may see them listed: without those it may not, nor their embargoed versions."""
        shown: list[Generic] = []
        for document in documents:
            key = key_of(document.pdi)
            if not hidden.document_listed(key):
                continue
            versions = tuple(v for v in document.versions if hidden.version_listed(key, v.number))
            if versions:
                shown.append(document if len(versions) == len(document.versions)
                             else dataclasses.replace(document, versions=versions))
        return shown

    def _guard_series(self, parsed: PDI) -> None:
        """Refuse a name of a series the current reader may not read: 404 if it may learn nothing of it, else 403."""
        reader = current_reader.get()
        if reader is None:
            return
        series = parsed.series_name.lower()
        told = disclosure(reader, series, self.series_access().get(series, PUBLIC))
        if told is Disclosure.NOTHING:
            raise NotFoundError(f"{parsed.without_fragment()} is not in this archive")
        if told is Disclosure.EXISTENCE:
            raise refused(f"{parsed.without_fragment()}: the series {series} is private")

    def _guard_embargo(self, parsed: PDI, version: int | None) -> None:
        """Refuse (403) a document or version under an embargo not yet over, to a reader without access."""
        reader = current_reader.get()
        if reader is None:
            return
        key = key_of(parsed)
        if reader.may_read(key.series):
            return
        until = self.store.embargo(key, version)
        embargoed = until is not None and until > timestamp(self.now())
        if disclosure(reader, key.series, PUBLIC, embargoed=embargoed) is not Disclosure.ALL:
            raise refused(f"{parsed.without_fragment()} is embargoed until {until}", embargoed_until=until)

    def _search_access(self) -> SearchAccess | None:
        """What the current reader's search leaves out (None: the owner, who sees all)."""
        from pdi.archive.catalog import SearchAccess

        reader = current_reader.get()
        if reader is None:
            return None
        access = self.series_access()
        return SearchAccess(
            tuple(sorted(self._unreadable())),
            tuple(sorted(n for n in access if reader.may_read(n))),
            timestamp(self.now()),
        )

    def readable_by_anyone(self, record: RepresentationRecord) -> bool:
        """Whether anyone, without a token, may read this representation now (what a shared cache may keep)."""
        if self.series_access().get(record.series, PUBLIC) != PUBLIC:
            return False
        until = self.store.embargo(DocumentKey(record.series, record.day, record.unique_id), record.version)
        return until is None or until <= timestamp(self.now())

    def _require_series(self, series: str) -> None:
        """:class:`NotFoundError` unless ``series`` (canonical) is registered and the current reader may read it.

        A series the reader may not read is a :class:`~pdi.errors.AccessError`
        (403), or the same not-found as an unregistered one when it is hidden.
        """
        access = self._unreadable().get(series)
        if access == HIDDEN or self.store.get_series(series) is None:
            raise UnknownSeriesError(series)
        if access is not None:
            raise refused(f"the series {series} is private")

    def _guard_document(self, key: DocumentKey, version: int | None, what: str) -> None:
        """Refuse ``what`` (about a document, or a version of it) to a reader who may not read it: not found if its
        series is hidden, forbidden if private or embargoed (:mod:`pdi.archive.access`)."""
        reader = current_reader.get()
        if reader is None or reader.may_read(key.series):
            return  # the rule's first clause (the owner, a token of the series learn all), before any catalog read
        access = self.series_access().get(key.series, PUBLIC)
        until = self.store.embargo(key, version) if access == PUBLIC else None
        embargoed = until is not None and until > timestamp(self.now())
        told = disclosure(reader, key.series, access, embargoed=embargoed)  # the one rule (pdi.archive.access)
        if told is Disclosure.NOTHING:
            raise NotFoundError(f"{what} is not in this archive")
        if told is Disclosure.EXISTENCE:
            raise refused(f"{what} is about a document embargoed until {until}" if embargoed else
                          f"{what} is about the private series {key.series}", embargoed_until=until if embargoed else None)

    def _version_of(self, pdi: PDI, key: DocumentKey, latest: bool) -> int:
        stored = self.store.versions(key, wanted=pdi.version)
        if not stored:
            raise NotFoundError(f"{pdi.without_fragment()} is not in this archive")
        version = pdi.version if pdi.version is not None else 1
        if not latest and version in stored:
            return version  # the embargo guard decides whether the reader may read it
        # the latest and the versions a refusal names are those the reader may learn of (pdi.archive.access)
        hidden = self._unlisted()
        versions = [v for v in stored if hidden.version_listed(key, v)]
        if latest:  # the newest in service, as a generic name's --latest (every one withdrawn: its tombstone says so)
            withdrawn = {t.version for t in self.store.withdrawals_of([key])}
            if None not in withdrawn:
                versions = [v for v in versions if v not in withdrawn] or versions
            return versions[-1] if versions else stored[-1]  # none: the embargo guard refuses it
        if not versions:  # an embargoed document named inexactly: what its generic name says (403), no more
            raise refused(f"{pdi.without_fragment()}: every version of its document is embargoed")
        raise NotFoundError(
            f"{pdi.without_fragment()}: no version {version} (versions: {', '.join(map(str, versions))})"
        )

    def _not_withdrawn(self, parsed: PDI, record: RepresentationRecord) -> None:
        """Refuse (:class:`WithdrawnError`, HTTP 410) a name whose version or document was withdrawn."""
        tombstone = self.store.withdrawal(DocumentKey(record.series, record.day, record.unique_id), record.version)
        if tombstone is not None:
            what = "its document was" if tombstone.version is None else f"version {record.version} was"
            raise gone(parsed, what, tombstone)
