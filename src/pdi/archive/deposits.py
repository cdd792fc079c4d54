"""Deposits: minting names and storing the formats of each version (draft-mallery-urn-pdi-00 §2).

Each deposit checks its bytes against their declared format and charset
(:mod:`pdi.archive.content`) and, unless forced, answers with the latest
version of the same document instead of storing bytes it already holds. A
name is minted on the GMT day of deposit (daily serials, gap-free, or an
encapsulated foreign id: ``PDI-GRAMMAR.md``); every format is staged while it
is hashed and checked, then written in one catalog transaction, all or nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import sys
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING

from pdi import formats
from pdi.archive.access import parse_until
from pdi.archive.base import ArchiveBase
from pdi.archive.blobs import Octets
from pdi.archive.blobs.seam import cleaning_up_after_failure, discard_all
from pdi.archive.catalog.base import (
    mirrored_series,
    withdrawn_holding,
    withdrawn_version,
    withdrawn_whole,
)
from pdi.archive.naming import (
    canonical_series,
    checked_foreign_id,
    generic_name,
    key_of,
    parse_pdi,
    record_name,
    timestamp,
    versioned_name,
)
from pdi.archive.results import Deposit, NotCompared
from pdi.archive.store import (
    DepositResult,
    DocumentKey,
    Idempotency,
    NewRepresentation,
    WithdrawalRecord,
    WriteNote,
)
from pdi.archive.tokens import Writer
from pdi.errors import (
    DamagedError,
    IntegrityError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    SeriesNotRegisteredError,
    UnsupportedError,
)
from pdi.identifier import PDI

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor
    from dataclasses import dataclass

    from pdi.archive.content import Content
else:
    from pdi._later import dataclass

__all__ = ["BatchItem", "Deposits"]


def _document(pdi: PDI | str, what: str) -> PDI:
    """A PDI that names one whole document (no pattern, fragment or citation)."""
    parsed = parse_pdi(pdi)
    if parsed.is_pattern:
        raise UnsupportedError(f"{parsed} is a pattern: {what} is of one document")
    if parsed.fragment is not None or parsed.citation is not None:
        raise UnsupportedError(
            f"{what} is of the whole document {parsed.without_fragment()}, not of a passage"
        )
    return parsed


#: Threads that stage the items of :meth:`Deposits.deposit_dated` (an import's batch) at once.
STAGING_THREADS = 8

#: Withdrawn versions before the newest whose kept octets a capture is compared with, at most, the newest first
#: (:meth:`Deposits.withdrawn_earlier_alike`): each is read whole, so a document with a long history of withdrawals
#: costs a capture 20 reads at most; the very octets of any withdrawn version are refused by the catalog, unbounded.
WITHDRAWN_COMPARED = 20
_POOL: tuple[int, int, ThreadPoolExecutor] | None = None  # (process, threads, pool)


def _staging_pool(threads: int) -> ThreadPoolExecutor:
    """The process's staging threads, made once (starting eight threads a batch was a twentieth of an import).

    Made again in a forked child (the parent's threads are not there) or for another number of threads.
    """
    global _POOL
    import os

    if _POOL is None or _POOL[:2] != (os.getpid(), threads):
        from concurrent.futures import ThreadPoolExecutor

        _POOL = (os.getpid(), threads, ThreadPoolExecutor(threads, thread_name_prefix="pdi-staging"))
    return _POOL[2]


def _discard(reps: Sequence[NewRepresentation], failure: BaseException | None = None) -> None:
    """Discard staged formats (their passages' spools too): the blobs a failed deposit placed go last.

    A blob staged twice is pinned by both, and only the pin that placed it may
    remove it, once no other pin holds it. Every one is discarded and closed
    even when discarding one fails; each such failure is a note of the
    deposit's (``failure``, else the one being handled, as
    :func:`~pdi.archive.blobs.seam.cleaning_up_after_failure` keeps it), or,
    with none to keep, the first is raised once all were tried.
    """
    failing = failure if failure is not None else sys.exception()
    if isinstance(failing, GeneratorExit):  # a generator closed as its consumer failed: the consumer's failure
        failing = failing.__context__
    errors: list[Exception] = []
    for rep in sorted(reversed(reps), key=lambda r: bool(getattr(r.blob, "created", False))):
        for let_go in (rep.blob.discard, None if rep.passages is None else rep.passages.close):
            if let_go is None:
                continue
            try:
                let_go()
            except Exception as exc:  # the rest are let go of too; said below
                errors.append(exc)
    if not errors:
        return
    if failing is None:
        for other in errors[1:]:
            errors[0].add_note(f"discarding another staged format also failed: {other}")
        raise errors[0]
    for error in errors:
        failing.add_note(f"cleaning up after it failed also failed: {error}")


@dataclass(frozen=True)
class BatchItem:
    """One item of :meth:`Deposits.deposit_dated`: its formats, foreign id, GMT day and statements."""

    contents: Sequence[Content]
    foreign_id: str | None = None
    day: datetime.date | None = None
    statements: Sequence[tuple[str, str]] = ()


class Deposits(ArchiveBase):
    """Mint and deposit: a new document, a batch of them, a new version, a new format of a version."""

    def _deposited(self, result: DepositResult, reps: Sequence[NewRepresentation]) -> Deposit:
        records = {r.format: r for r in self.store.representations(result.key, result.version)}
        missing = [rep.format for rep in reps if rep.format not in records]
        if missing:  # pragma: no cover - a store bug
            raise NotFoundError(f"deposit of {', '.join(missing)} vanished")
        # a retry's first answer, replayed: the write happened, and what it made may have been withdrawn since
        gone = self.store.withdrawal(result.key, result.version) if result.replayed else None
        return Deposit(tuple(record_name(records[rep.format]) for rep in reps), result.unchanged, result.replayed,
                       withdrawn=gone)

    def add(
        self,
        series: str,
        content: Octets,
        *,
        format: str,
        foreign_id: str | None = None,
        charset: str | None = None,
        force: bool = False,
        embargo_until: str | None = None,
    ) -> PDI:
        """Mint a PDI in ``series`` for today (GMT) and deposit one format; returns the versioned PDI.

        The one-format :meth:`deposit`: with a ``foreign_id`` already minted
        today whose latest version holds these bytes, it returns that name
        (:meth:`deposit` says whether it did).
        """
        from pdi.archive.content import (
            Content,  # here: what a deposit is, not loaded by a command that reads
        )

        return self.deposit(
            series, [Content(content, format, charset)], foreign_id=foreign_id, force=force,
            embargo_until=embargo_until,
        )[0]

    def deposit(
        self,
        series: str,
        contents: Sequence[Content],
        *,
        foreign_id: str | None = None,
        force: bool = False,
        progress: Callable[[int], None] | None = None,
        writer: Writer | None = None,
        idempotency_key: str | None = None,
        request: str = "",
        day: datetime.date | None = None,
        embargo_until: str | None = None,
    ) -> Deposit:
        """Mint a PDI and deposit every format of version 1 at once (all or nothing).

        Each format's bytes are checked against their format and charset
        (:func:`pdi.archive.content.prepare`): a contradiction is an
        :class:`IntegrityError` unless ``force``. A ``foreign_id`` already
        minted today is an :class:`~pdi.errors.ImmutabilityError`, except that
        when its latest version holds exactly these formats and bytes the
        answer is that version, ``unchanged`` (and nothing is stored). With
        ``force`` the content checks are skipped and that exception is not
        made: a name is minted once, and ``add_version(..., force=True)``
        deposits the same bytes again.

        A ``writer`` (a token of the write API) must be allowed to deposit in
        the series; the deposit is then audited in its own transaction, and an
        ``idempotency_key`` makes it answer a retry with the first answer
        (``request`` identifies what was asked besides the bodies:
        :meth:`_note`).

        ``day`` dates the name on another GMT day than today's, for a
        document whose date is known from elsewhere (a web archive's capture
        date, :mod:`pdi.interop.warc`); only with a ``foreign_id``, since
        daily serials are minted in the order of deposit. ``embargo_until`` (a date or a time with its zone,
        :func:`pdi.archive.access.parse_until`) embargoes the version from its
        deposit on, in the deposit's own transaction.
        """
        name, embargo = self._series_to_deposit(series, writer, embargo_until)
        if not contents:
            raise ParseError("a deposit needs at least one format", rule="format")
        if day is not None and foreign_id is None:
            raise UnsupportedError("a name is dated on another day than today only with a foreign id")
        self._registered(name)  # before a single octet is read
        if foreign_id is not None:
            token = formats.canonical_token(contents[0].format)
            foreign_id = checked_foreign_id(name, foreign_id, token, day or self.now().date())
        with self._staging(contents, force, progress) as reps:
            now = self.now()  # one instant: the minting day and the deposit's time agree
            note = self._note(writer, "deposit", reps, idempotency_key, request, embargo)
            result = self.store.mint(
                name, day or now.date(), foreign_id, reps, timestamp(now), skip_identical=not force, note=note,
                registered=True,  # by _registered above: a series is never removed
            )
            if result.unchanged or result.replayed:
                return self._deposited(result, reps)
            # minted just now, version 1 of the formats given: its names are known without reading them back
            key = result.key
            serial = None if foreign_id is not None else int(key.unique_id)
            return Deposit(tuple(
                PDI.build(series=key.series, date=key.day, serial=serial,
                          foreign_id=None if serial is not None else key.unique_id, format=rep.format, version=1)
                for rep in reps
            ), False, False, tuple(rep.sha256 for rep in reps))

    def deposit_batch(
        self,
        series: str,
        items: Sequence[tuple[Sequence[Content], str | None]],
        *,
        writer: Writer | None = None,
        idempotency_key: str | None = None,
        request: str = "",
        embargo_until: str | None = None,
        force: bool = False,
        unchanged: bool = False,
    ) -> list[Deposit]:
        """Mint a name for each item (its formats, and a foreign id or ``None``) and deposit them all, or none.

        Every item is checked and staged first; one refusal (naming the item
        by its index) stages nothing and mints nothing. The names are minted
        in one transaction, in the items' order (their serials consecutive
        among themselves). ``writer``, ``idempotency_key``, ``request`` and
        ``embargo_until`` (every item embargoed until then, in the same
        transaction; the role ``curate``) as for :meth:`deposit`; ``force``
        skips the content checks, as for :meth:`deposit` (a foreign id already
        minted still refuses the whole batch). With ``unchanged`` (and not
        ``force``), an item whose foreign id is minted today is answered as
        :meth:`deposit` answers it, by the same rule in the same transaction:
        when the latest version holds exactly its formats and bytes (after
        its checks), that version, ``unchanged``, else the batch is refused.
        """
        done = self._deposit_many(
            series, [BatchItem(contents, foreign_id) for contents, foreign_id in items], writer=writer,
            idempotency_key=idempotency_key, request=request, embargo_until=embargo_until, force=force,
            skip_identical=unchanged and not force,
        )
        return [d for d in done if d is not None]  # none is left out without ``refused``

    def deposit_dated(
        self, series: str, items: Sequence[BatchItem], *, refused: Callable[[int, PDIError], None] | None = None
    ) -> list[Deposit | None]:
        """:meth:`deposit_batch` of items each with its own day and statements (an import's), all in one transaction.

        Each item names a foreign id, dated on its ``day`` (``None``: today,
        GMT), as :meth:`deposit`'s ``day``; its ``statements`` (the owner's,
        checked as :meth:`annotate_all`'s) are made about its first format
        in the same transaction, so a deposit never stands without them. A
        foreign id already minted refuses the whole batch
        (:class:`~pdi.errors.ImmutabilityError` naming the item): give here
        only names not yet minted. With ``refused``, an item whose bytes the
        content checks refuse is left out (its answer ``None``) and
        ``refused`` is told its index and why; the others are deposited.
        """
        # staged on several threads only where staging touches no catalog (a blob store's own say)
        parallel = getattr(getattr(self.store, "blobs", None), "parallel_staging", False)
        return self._deposit_many(series, items, refused=refused, threads=STAGING_THREADS if parallel else 1)

    def _stage_each(
        self, items: Sequence[BatchItem], threads: int, force: bool = False
    ) -> Generator[tuple[list[NewRepresentation], BaseException | None], None, None]:
        """Each item's formats checked and staged (:func:`prepare`), in the items' order: what was staged, and why not.

        With ``threads`` past 1 the items are staged on that many threads
        (a blob's fsyncs wait while another item's checks and passages are
        made): only for a blob store whose staging touches no catalog
        (``parallel_staging``). What the consumer did not take (it stopped
        early) is waited for and discarded.
        """
        from pdi.archive.content import prepare

        def one(item: BatchItem) -> tuple[list[NewRepresentation], BaseException | None]:
            reps: list[NewRepresentation] = []
            try:
                for content in item.contents:
                    # each blob without a sync of its own: the batch's are synced together before its commit
                    reps.append(prepare(content, self.store, force=force, durable=False))
            except Exception as exc:  # handed on: the caller discards, on its own thread
                return reps, exc
            return reps, None

        if threads <= 1:
            for item in items:
                yield one(item)
            return
        from concurrent.futures import wait

        pool = _staging_pool(threads)
        futures = [pool.submit(one, item) for item in items]
        taken = 0
        try:
            for future in futures:
                outcome = future.result()
                taken += 1
                yield outcome
        finally:
            for future in futures[taken:]:
                future.cancel()
            wait(futures[taken:])  # those already running
            for future in futures[taken:]:
                if not future.cancelled() and future.exception() is None:
                    _discard(future.result()[0])

    def _deposit_many(
        self,
        series: str,
        items: Sequence[BatchItem],
        *,
        writer: Writer | None = None,
        idempotency_key: str | None = None,
        request: str = "",
        embargo_until: str | None = None,
        refused: Callable[[int, PDIError], None] | None = None,
        threads: int = 1,
        force: bool = False,
        skip_identical: bool = False,
    ) -> list[Deposit | None]:
        from pdi.archive.statements import _check_statement

        name, embargo = self._series_to_deposit(series, writer, embargo_until)
        if not items:
            raise ParseError("a batch needs at least one item", rule="batch")
        self._registered(name)
        today = self.now().date()
        checked: list[str | None] = []
        unnamed: set[int] = set()  # with ``refused``: items whose foreign id no name may carry, left out
        for index, item in enumerate(items):
            if not item.contents:
                raise ParseError("an item needs at least one format", rule="format").of_item(index)
            foreign_id = item.foreign_id
            if item.day is not None and foreign_id is None:
                raise UnsupportedError(
                    "a name is dated on another day than today only with a foreign id").of_item(index)
            if item.statements and foreign_id is None:
                raise UnsupportedError("statements go with a batch's items that have a foreign id").of_item(index)
            for stated_key, stated_value in item.statements:
                _check_statement(stated_key, stated_value)
            if foreign_id is not None:
                token = formats.canonical_token(item.contents[0].format)
                try:
                    foreign_id = checked_foreign_id(name, foreign_id, token, item.day or today)
                except (LimitError, ParseError) as exc:
                    if refused is None:
                        raise exc.of_item(index) from None
                    refused(index, exc)  # an import's page at a URL too long to name (one, not the whole import)
                    unnamed.add(index)
                except PDIError as exc:
                    raise exc.of_item(index) from None
            checked.append(foreign_id)
        staged: list[list[NewRepresentation] | None] = []
        subjects: dict[int, PDI] = {}
        try:
            # an item left out above is not staged at all (its content never read: nothing of it to let go of)
            to_stage = [BatchItem([], None) if i in unnamed else item for i, item in enumerate(items)]
            with contextlib.closing(self._stage_each(to_stage, threads, force)) as outcomes:
                for index, (reps, failure) in enumerate(outcomes):
                    staged.append(reps)
                    if index in unnamed:  # refused above, not staged
                        staged[index] = None
                        continue
                    if failure is None:
                        continue
                    staged[index] = None
                    if refused is not None and isinstance(failure, (IntegrityError, ParseError, UnsupportedError)):
                        _discard(reps, failure)
                        refused(index, failure)
                        continue
                    said = failure.of_item(index) if isinstance(failure, PDIError) else failure
                    _discard(reps, said)  # a discard that fails is a note of the refusal, not said instead of it
                    if said is failure:
                        raise failure
                    raise said from None
            kept = [i for i, reps in enumerate(staged) if reps is not None]
            results: list[DepositResult] = []
            if kept:
                everything = [rep for reps in staged if reps is not None for rep in reps]
                now = self.now()
                # what the items are besides their octets (a foreign id, how many formats) is the request too: the
                # same files under other names is another request, never the first one's answer again
                shape = "".join(f"\nitem {checked[i] or ''} {len(staged[i] or [])}" for i in kept)
                note = self._note(writer, "deposit", everything, idempotency_key, request + shape, embargo,
                                  [[rep.format for rep in staged[i] or []] for i in kept])
                entries = [(checked[i], staged[i] or []) for i in kept]
                days = [items[i].day for i in kept]
                stated: list[tuple[str, Sequence[tuple[str, str]]] | None] = []
                for i in kept:
                    item, first = items[i], (staged[i] or [])[0]
                    if not item.statements:
                        stated.append(None)
                        continue
                    subject = PDI.build(series=name, date=item.day or now.date(), foreign_id=checked[i],
                                        format=first.format, version=1)
                    subjects[i] = subject  # the first format's name too: built once
                    stated.append((str(subject.canonical()), item.statements))
                # the blobs' octets and directory entries made durable together, before the batch's transaction
                # (each pin's secure, inside it, would sync one left out; none is committed before it is durable)
                self.store.make_durable([rep.blob for rep in everything])
                try:
                    results = self.store.mint_batch(
                        name, now.date(), entries, timestamp(now), note=note, days=days,
                        statements=stated if any(stated) else None, who=self.who, skip_identical=skip_identical,
                    )
                except PDIError as exc:
                    if exc.item is None:
                        raise
                    # the catalog counts the items it was given: those left out (``refused``) are not among them
                    raise exc.item_said("").of_item(kept[exc.item]) from None
        except BaseException:
            # last staged first: a blob staged twice is pinned by both, and only the first may remove it
            with cleaning_up_after_failure():
                _discard([rep for one in staged if one is not None for rep in one])
            raise
        finally:
            for one in staged:
                for rep in one or []:
                    if rep.passages is not None:
                        rep.passages.close()  # the full-text index's spool (pdi.archive.search), as _staging does
        for one in staged:
            for rep in one or []:
                rep.blob.close()
        answers: list[Deposit | None] = [None] * len(items)
        for i, result in zip(kept, results, strict=True):
            minted = staged[i] or []
            if result.replayed or result.unchanged:
                answers[i] = self._deposited(result, minted)
                continue
            # minted just now, version 1 of the formats given: its names are known without reading them back
            made = result.key
            serial = None if checked[i] is not None else int(made.unique_id)
            known = subjects.get(i)
            answers[i] = Deposit(tuple(
                known if n == 0 and known is not None else
                PDI.build(series=made.series, date=made.day, serial=serial,
                          foreign_id=None if serial is not None else made.unique_id, format=rep.format, version=1)
                for n, rep in enumerate(minted)
            ), False, False, tuple(rep.sha256 for rep in minted))
        return answers

    def _series_to_deposit(
        self, series: str, writer: Writer | None, embargo_until: str | None
    ) -> tuple[str, str | None]:
        """The canonical series and the embargo's end (as the catalog keeps it); a ``writer``'s role checked.

        A deposit under embargo needs the role ``curate``, any other ``deposit``.
        """
        embargo = None if embargo_until is None else parse_until(embargo_until)
        name = canonical_series(series)
        if writer is not None:
            writer.require("deposit" if embargo is None else "curate", name)
        return name, embargo

    def _registered(self, series: str) -> None:
        """:class:`~pdi.errors.SeriesNotRegisteredError` unless ``series`` (canonical) is registered.

        A series once registered stays so (no statement removes one), so the
        answer is kept: the next deposit in it asks the catalog nothing here
        (on PostgreSQL, three round trips fewer).
        """
        if series in self._series_registered:
            return
        if self.store.get_series(series) is None:
            raise SeriesNotRegisteredError(series)
        self._not_mirrored(series)
        self._series_registered.add(series)

    def _not_mirrored(self, series: str) -> None:
        """:class:`ImmutabilityError` when this archive mirrors ``series``: only its origin mints in it
        (:mod:`pdi.archive.mirroring`)."""
        origin = next((m for m in self.store.list_mirrors(series) if m.role == "origin"), None)
        if origin is not None:
            raise mirrored_series(series, origin.base_url)

    def _note(
        self,
        writer: Writer | None,
        action: str,
        reps: Sequence[NewRepresentation],
        key: str | None,
        request: str,
        embargo_until: str | None = None,
        per_item: Sequence[Sequence[str]] | None = None,
    ) -> WriteNote | None:
        """What a write through the API records with itself: its audit entry, and its Idempotency-Key.

        The key's fingerprint is the SHA-256 of ``request`` (the edge's
        account of the method, target and parameters) and of each format's
        token, charset and octets' SHA-256 — the bodies are known by the
        digests staging computed, never held. The entry's detail is the exact
        versioned names written: of ``reps``' formats, or a batch's ``per_item``.
        """
        each = per_item or [[rep.format for rep in reps]]

        def names(item: int, key: DocumentKey, version: int) -> str:
            return ", ".join(versioned_name(key, token, version) for token in each[item])

        if writer is None:
            if embargo_until is None:
                return None
            return WriteNote(self.who, action, generic_name, embargo_until=embargo_until, names=names)
        idempotency = None
        if key is not None:
            h = hashlib.sha256(request.encode("utf-8"))
            for rep in reps:
                h.update(f"\n{rep.format} {rep.charset or ''} {rep.blob.info.sha256}".encode())
            idempotency = Idempotency(writer.token.id, key, h.hexdigest())
        return WriteNote(
            writer.name, action, generic_name, "", writer.address, idempotency, embargo_until, names,
            token=writer.token.id,
        )

    @contextlib.contextmanager
    def _staging(
        self,
        contents: Sequence[Content],
        force: bool,
        progress: Callable[[int], None] | None = None,
    ) -> Iterator[list[NewRepresentation]]:
        """Check and stage every format of a deposit; after it, release the blobs, or discard them if it failed.

        Each format is streamed into the store once (never held whole) while
        its checks ride on the same pass; a refusal of any format, or a
        failed catalog transaction, takes away what staging added.
        """
        from pdi.archive.content import prepare

        reps: list[NewRepresentation] = []
        try:
            for content in contents:
                reps.append(prepare(content, self.store, force=force, progress=progress))
            yield reps
        except BaseException:
            with cleaning_up_after_failure():  # the deposit's failure is what is said (a commit of unknown outcome)
                discard_all([rep.blob for rep in reversed(reps)])  # as deposit_batch: the placer last
            raise
        finally:
            for rep in reps:
                if rep.passages is not None:
                    rep.passages.close()  # the full-text index's spool (pdi.archive.search)
        for rep in reps:
            rep.blob.close()

    def add_version(
        self,
        pdi: PDI | str,
        contents: Sequence[Content],
        *,
        force: bool = False,
        progress: Callable[[int], None] | None = None,
        writer: Writer | None = None,
        idempotency_key: str | None = None,
        request: str = "",
        embargo_until: str | None = None,
    ) -> Deposit:
        """Deposit a new version of a document; it must cover every format it is to have.

        When the latest version has exactly these formats with these bytes
        (compared by the SHA-256 of what would be stored) and charsets, nothing
        is stored and the answer is that version, ``unchanged``; ``force``
        deposits a new version all the same, and skips the content checks.
        A document withdrawn whole takes no new version, forced or not (:class:`~pdi.errors.WithdrawnError`,
        naming the withdrawal): its tombstone would cover it from its start.
        ``writer``, ``idempotency_key``, ``request`` and ``embargo_until`` as for :meth:`deposit`.
        """
        embargo = None if embargo_until is None else parse_until(embargo_until)
        key = key_of(_document(pdi, "a new version"))
        if writer is not None:
            writer.require("deposit" if embargo is None else "curate", key.series)
        if not contents:
            raise ParseError("a version needs at least one format", rule="format")
        if not self.store.document_exists(key):
            raise NotFoundError(f"no document {generic_name(key)} in the archive")
        self._not_mirrored(key.series)
        # before its octets are read: a document withdrawn whole takes no version (its catalog asks again, in the
        # version's own transaction, so that a withdrawal made while they are staged refuses it too); but a retry
        # under an Idempotency-Key, whose first answer the catalog finds first once its octets are known (and
        # replays, with the tombstone: the write happened before the withdrawal)
        whole = next((t for t in self.store.withdrawals_of([key]) if t.version is None), None)
        if whole is not None and (writer is None or idempotency_key is None):
            raise withdrawn_whole(key, whole.at, whole.reason, whole.who, whole.purged)
        with self._staging(contents, force, progress) as reps:
            note = self._note(writer, "version", reps, idempotency_key, request, embargo)
            result = self.store.new_version(
                key, reps, timestamp(self.now()), skip_identical=not force, note=note
            )
            return self._deposited(result, reps)

    def withdrawn_alike(
        self, pdi: PDI | str, same: Callable[[bytes], bool], *, held: str, them: str
    ) -> WithdrawalRecord | None:
        """Refuse octets that ``same`` finds alike those of the withdrawn version ``pdi`` names (a format of it), as
        the catalog refuses the very octets a withdrawn latest version holds; else answer its tombstone, if any.

        For a front end whose "the same" is not byte for byte (a capture, compared by its parts,
        :func:`pdi.capture.deposit.deposit_capture`), before it deposits a new version after a withdrawn one: the
        archive reads the octets it keeps for that version (verified; never served, its tombstone answers readers)
        and gives them to ``same``. Alike: :class:`~pdi.errors.ImmutabilityError`, :attr:`~pdi.errors.ImmutabilityError.forceable`,
        naming the version's formats and its withdrawal (``held``: what it holds, ``this page``; ``them``: it named
        again). Otherwise the answer is the tombstone over ``pdi`` (``None``: it is in service, nothing compared),
        and nothing was compared when it is ``purged`` (the octets are gone), when the whole document was
        withdrawn (:meth:`add_version` refuses every version of it), or when the version has no such format.
        """
        parsed = parse_pdi(pdi)
        key = key_of(parsed)
        version = parsed.version if parsed.version is not None else 1
        whole = next((t for t in self.store.withdrawals_of([key]) if t.version is None), None)
        tombstone = whole or self.store.withdrawal(key, version)
        if tombstone is None or tombstone.version is None or tombstone.purged:
            return tombstone
        self._refuse_kept_alike(key, version, tombstone, parsed.format or "", same, held, them)
        return tombstone

    def withdrawn_earlier_alike(
        self, pdi: PDI | str, same: Callable[[bytes], bool], *, held: str, them: str
    ) -> NotCompared:
        """Refuse octets that ``same`` finds alike those of a version before ``pdi``'s that was withdrawn alone (a
        format of it), as the catalog refuses the very octets of any withdrawn version of a document.

        :meth:`withdrawn_alike` for the versions before the newest: with another version deposited after a withdrawn
        one, the same page in another file would be the next version and serve the withdrawn one again. Only
        versions whose octets are kept (not purged) and that have the format are compared, the newest first, and
        at most :data:`WITHDRAWN_COMPARED` of them (each is read whole, verified): an older one is not compared.
        Alike: :class:`~pdi.errors.ImmutabilityError` as :meth:`withdrawn_alike` raises it, naming that version.
        Otherwise the answer says what was not compared (:class:`~pdi.archive.results.NotCompared`), for the front
        end to warn of: the versions past the bound, and the purged ones that have the format (the last
        :data:`WITHDRAWN_COMPARED` of them, a look-up each), whose octets are gone.
        """
        parsed = parse_pdi(pdi)
        key = key_of(parsed)
        newest = parsed.version if parsed.version is not None else 1
        tombstones: dict[int, WithdrawalRecord] = {}
        for t in self.store.withdrawals_of([key]):  # oldest first: a version's first tombstone is the one shown
            if t.version is None:
                return NotCompared()  # withdrawn whole: add_version refuses every version of it
            if t.version < newest:
                first = tombstones.setdefault(t.version, t)
                if t.purged and not first.purged:
                    tombstones[t.version] = dataclasses.replace(first, purged=True)
        kept = [v for v in sorted(tombstones, reverse=True) if not tombstones[v].purged]
        for version in kept[:WITHDRAWN_COMPARED]:
            self._refuse_kept_alike(key, version, tombstones[version], parsed.format or "", same, held, them)
        purged = [v for v in sorted(tombstones, reverse=True) if tombstones[v].purged]
        token = formats.canonical_token(parsed.format or "")
        with_format = tuple(tombstones[v] for v in purged[:WITHDRAWN_COMPARED]
                            if any(r.format == token for r in self.store.representations(key, v)))
        return NotCompared(with_format, max(0, len(purged) - WITHDRAWN_COMPARED), tuple(kept[WITHDRAWN_COMPARED:]))

    def _refuse_kept_alike(
        self, key: DocumentKey, version: int, tombstone: WithdrawalRecord, format: str,
        same: Callable[[bytes], bool], held: str, them: str,
    ) -> None:
        """Read the octets ``version`` of ``key`` keeps in ``format`` (verified), and refuse what ``same`` finds
        alike them, naming the version's formats and ``tombstone``; nothing when it has no such format."""
        records = sorted(self.store.representations(key, version), key=lambda r: r.format)
        token = formats.canonical_token(format)
        record = next((r for r in records if r.format == token), None)
        if record is None:
            return
        name = versioned_name(key, record.format, version)
        reader = self.store.open_blob(record.sha256, name=name)
        if reader is None:
            raise DamagedError(f"the bytes of {name} are missing from the store")
        with reader:
            if reader.size != record.size:
                raise DamagedError(f"the bytes of {name} are {reader.size} octets, not the {record.size} recorded")
            kept = reader.read()
        if not same(kept):
            return
        names = ", ".join(versioned_name(key, r.format, version) for r in records)
        raise withdrawn_holding(names, tombstone.at, tombstone.reason, False, held=held, them=them)

    def add_format(
        self,
        pdi: PDI | str,
        content: Octets,
        *,
        format: str,
        charset: str | None = None,
        force: bool = False,
        source: str | None = None,
        progress: Callable[[int], None] | None = None,
        writer: Writer | None = None,
        idempotency_key: str | None = None,
        request: str = "",
    ) -> PDI:
        """Add a format with the same content to an existing version (named by ``pdi``).

        The same bytes again change nothing and answer with the same name;
        ``force`` skips the content checks; ``source`` (a file name) is named
        when they refuse. ``writer``, ``idempotency_key`` and ``request`` as
        for :meth:`deposit`. :meth:`deposit_format` says whether it stored it.
        """
        return self.deposit_format(
            pdi, content, format=format, charset=charset, force=force, source=source, progress=progress,
            writer=writer, idempotency_key=idempotency_key, request=request,
        )[0]

    def deposit_format(
        self,
        pdi: PDI | str,
        content: Octets,
        *,
        format: str,
        charset: str | None = None,
        force: bool = False,
        source: str | None = None,
        progress: Callable[[int], None] | None = None,
        writer: Writer | None = None,
        idempotency_key: str | None = None,
        request: str = "",
    ) -> Deposit:
        """:meth:`add_format`, answered as a deposit: the name, and ``unchanged`` when the version held the format
        with these bytes already (nothing was stored)."""
        parsed = _document(pdi, "a new format")
        key = key_of(parsed)
        if writer is not None:
            writer.require("deposit", key.series)
        version = parsed.version if parsed.version is not None else 1
        versions = self.store.versions(key)
        if not versions:
            raise NotFoundError(f"no document {generic_name(key)} in the archive")
        if parsed.version is None:  # not version 1 unsaid (nor the newest): the version is the writer's to name
            raise ParseError(f"{parsed} names no version: a format is added to the version a versioned name"
                             f" (ID.FORMAT.VERSION) names; {generic_name(key)} has versions"
                             f" {', '.join(map(str, versions))}", rule="versioned-name")
        if version not in versions:
            raise NotFoundError(f"no version {version} of {generic_name(key)} in the archive")
        # before its octets are read: a withdrawn version (or document) takes no format (its catalog asks again, in
        # the format's own transaction, so that a withdrawal made while they are staged refuses it too); but a
        # retry under an Idempotency-Key, as for a version (add_version)
        gone = next((t for t in self.store.withdrawals_of([key]) if t.version in (None, version)), None)
        if writer is not None and idempotency_key is not None:
            gone = None
        if gone is not None and gone.version is None:
            raise withdrawn_whole(key, gone.at, gone.reason, gone.who, gone.purged, added="a format added to one")
        if gone is not None:
            named = str(parsed) if parsed.format is not None and parsed.version is not None else (
                f"version {version} of {generic_name(key)}")
            raise withdrawn_version(named, gone.at, gone.reason, gone.who, gone.purged)
        from pdi.archive.content import Content

        with self._staging([Content(content, format, charset, source)], force, progress) as reps:
            note = self._note(writer, "format", reps, idempotency_key, request)
            result = self.store.add_formats(key, version, reps, timestamp(self.now()), note=note)
            return self._deposited(result, reps)
