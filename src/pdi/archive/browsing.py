"""Browsing: what the reader's pages and the harvesters are shown of the catalog.

Series with their counts, the days of a series, the documents of a day, the
captures of a URL (a TimeMap), the e-mail messages of a thread (by
Message-ID and by the id they reply to), the documents in the order they
changed (an OAI-PMH harvest) and one document's whole record. Each list leaves out what
the current reader may not learn of (:class:`~pdi.archive.access.Unlisted`)
before its page is cut, so the counts and cursors a reader sees are its own.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pdi.archive.access import Unlisted
from pdi.archive.base import ArchiveBase, refused
from pdi.archive.naming import (
    canonical_series,
    documents_of,
    generic_of,
    key_of,
    parse_pdi,
    timestamp,
)
from pdi.archive.results import DocumentChange, DocumentDetail, DocumentPage, Generic
from pdi.archive.store import (
    DayCount,
    DocumentKey,
    DocumentStamp,
    RepresentationRecord,
    SeriesCount,
)
from pdi.errors import LimitError, NotFoundError, ParseError, UnsupportedError
from pdi.identifier import PDI

if TYPE_CHECKING:
    from pdi.archive.nearest import Nearest

__all__ = ["Browsing"]

#: Documents whose stamps :meth:`Browsing.changes` reads at once while it looks for changed ones.
_STAMP_BATCH = 500


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _version_of_subject(subject: str) -> int | None:
    """The version a statement's subject names (``None``: the document, by its generic name)."""
    try:
        parsed = PDI.parse(subject)
    except ParseError:
        return None
    return parsed.version if parsed.format is not None else None


class Browsing(ArchiveBase):
    """Series counts, days, a day's documents, captures of a URL, changes, one document's detail."""

    def first_access_change(self) -> datetime.datetime | None:
        """When the first change of access was made that dates a document (an embargo lifted or set, a series' access
        changed: :meth:`changes`), UTC; ``None`` if none was. Below it no record withheld by one is dated."""
        at = self.store.first_access_change()
        return None if at is None else datetime.datetime.fromisoformat(at).astimezone(datetime.UTC)

    def series_counts(self) -> list[SeriesCount]:
        """Every registered series with how many documents it holds and its first and last day of minting.

        A reader (:mod:`pdi.archive.access`) sees only the series it may read.
        """
        hidden = self._unlisted()
        counts = [c for c in self.store.series_counts() if hidden.series_listed(c.series)]
        less = self._embargoed_days(hidden)
        if not hidden.embargoed:
            return counts
        adjusted = []
        touched = {key.series for key in hidden.embargoed}
        for count in counts:
            if any(series == count.series for series, _ in less):
                days = self._days_less(count.series, self.store.day_counts(count.series), less)
                count = dataclasses.replace(
                    count, documents=sum(d.documents for d in days),
                    first_day=days[0].day if days else None, last_day=days[-1].day if days else None,
                )
            if count.series in touched:
                count = dataclasses.replace(count, last_deposit=self._last_listed_deposit(count.series, hidden))
            adjusted.append(count)
        return adjusted

    def _last_listed_deposit(self, series: str, hidden: Unlisted) -> str | None:
        """When the latest deposit the reader may learn of was made into ``series``.

        A day without an embargo in force gives its kept time; the documents
        of a day with one are read (a page at a time), from the latest day
        down, only while that day could still hold a later deposit.
        """
        embargoed_days = {key.day for key in hidden.embargoed if key.series == series}
        kept = self.store.day_last_deposits(series)
        best = max((at for day, at in kept.items() if day not in embargoed_days), default=None)
        for day in sorted(embargoed_days & kept.keys(), key=kept.__getitem__, reverse=True):
            if best is not None and kept[day] <= best:
                break
            after = None
            while True:
                records = self.store.day_documents(series, day, after, 100)
                for record in records:
                    key = DocumentKey(record.series, record.day, record.unique_id)
                    if hidden.version_listed(key, record.version) and (best is None or record.created_at > best):
                        best = record.created_at
                documents = documents_of(records)
                if len(documents) < 100:
                    break
                after = documents[-1].pdi.unique_id
        return best

    @staticmethod
    def _embargoed_days(hidden: Unlisted) -> dict[tuple[str, datetime.date], int]:
        """How many documents embargoed whole (not listed) each (series, day) has, for its counts."""
        less: dict[tuple[str, datetime.date], int] = {}
        for key, versions in hidden.embargoed.items():
            if versions is None:
                less[(key.series, key.day)] = less.get((key.series, key.day), 0) + 1
        return less

    @staticmethod
    def _days_less(series: str, days: list[DayCount], less: dict[tuple[str, datetime.date], int]) -> list[DayCount]:
        """``days`` of ``series`` with the documents ``less`` leaves out taken off (a day left with none dropped)."""
        kept = [dataclasses.replace(d, documents=d.documents - less.get((series, d.day), 0)) for d in days]
        return [d for d in kept if d.documents > 0]

    def day_counts(self, series: str, *, year: int | None = None, month: int | None = None) -> list[DayCount]:
        """The GMT days on which documents of ``series`` were minted (in ``year``, and ``month`` of it), with how many."""
        name = canonical_series(series)
        self._require_series(name)
        if month is not None and year is None:
            raise UnsupportedError("a month needs its year")
        first = last = None
        if year is not None:
            try:
                first = datetime.date(year, month or 1, 1)
                last = (
                    datetime.date(year, 12, 31) if month is None
                    else datetime.date(year + month // 12, month % 12 + 1, 1) - datetime.timedelta(days=1)
                )
            except (ValueError, OverflowError) as exc:
                raise ParseError(f"no such year and month: {year}, {month}: {exc}", rule="date") from exc
        return self._days_less(name, self.store.day_counts(name, first, last), self._embargoed_days(self._unlisted()))

    def day_documents(
        self, series: str, day: datetime.date, *, after: str | None = None, limit: int = 100
    ) -> DocumentPage:
        """A page of the documents of ``series`` minted on ``day``: serial ones by serial, then by foreign id.

        ``after`` is the unique id of the last document of the page before
        (the page's own ``after`` gives it): a keyset, as cheap deep in a day
        of a hundred thousand documents as at its start.
        """
        name = canonical_series(series)
        self._require_series(name)
        if limit < 1:
            raise LimitError("a page holds at least one document")
        hidden = self._unlisted()
        documents: list[Generic] = []
        while True:  # one more than a page: is there a next page? (what the reader may not see is not counted)
            batch = documents_of(self.store.day_documents(name, day, after, limit + 1))
            documents += self._listed(batch, hidden)
            if len(documents) > limit or len(batch) <= limit:
                break
            after = batch[-1].pdi.unique_id
        following = documents[limit - 1].pdi.unique_id if len(documents) > limit else None
        return DocumentPage(tuple(documents[:limit]), self._titles(documents[:limit]), following)

    def nearest(self, pdi: PDI | str, *, limit: int = 12) -> Nearest:
        """What this archive holds near ``pdi``, a name it does not hold, that the current reader may learn of
        (:mod:`pdi.archive.nearest`): at most ``limit`` names a day, and a sentence for a message. A name that does
        not parse has nothing near it."""
        from pdi.archive.nearest import Nearest, nearest

        try:
            parsed = parse_pdi(pdi)
        except ParseError:
            return Nearest()
        return nearest(self, parsed, limit)  # type: ignore[arg-type]  # self is the Archive this mixin is part of

    def not_found(self, error: NotFoundError, pdi: PDI | str) -> NotFoundError:
        """``error`` (``pdi`` not found) with what this archive holds near ``pdi`` added (:meth:`nearest`), if
        anything: what ``pdi get`` and the API say of a name not here."""
        from pdi.archive.nearest import SAID_MOST

        said = self.nearest(pdi, limit=SAID_MOST).sentence
        return NotFoundError(f"{error.message}; {said}") if said else error

    def captures(self, url: str, *, after: PDI | str | None = None, limit: int = 500,
                 before: PDI | str | None = None) -> DocumentPage:
        """The captures of ``url``: the documents whose encapsulated unique id is ``url``, in every series.

        By day, then series; each version of a document is one capture (a
        page captured again on the same day and found changed becomes its next
        version: :func:`pdi.capture.deposit.deposit_capture`). ``after`` is
        the generic name of the last document of the page before (the page's
        own ``after``); ``before`` instead, that of the first document of the
        page after (the page then holds the ``limit`` documents before it, and
        its ``after`` is always its last one's). ``url`` is compared exactly as
        the id was deposited.
        """
        if not url:
            raise ParseError("a URL to list the captures of is needed", rule="encapsulated-unique-id")
        if limit < 1:
            raise LimitError("a page holds at least one document")
        cursor = None if after is None else self._capture_cursor(after)
        upto = None if before is None else self._capture_cursor(before)
        hidden = self._unlisted()
        documents: list[Generic] = []
        while True:  # what the reader may not see is left out before the page is cut
            batch = documents_of(self.store.unique_id_documents(url, cursor, limit + 1, before=upto))
            shown = self._listed(batch, hidden)
            documents = shown + documents if upto is not None else documents + shown
            if len(documents) > limit or len(batch) <= limit:
                break
            edge = batch[0] if upto is not None else batch[-1]
            edge_date = edge.pdi.date
            assert edge_date is not None  # a document the catalog holds
            if upto is not None:
                upto = (edge_date, edge.pdi.series_name.lower())
            else:
                cursor = (edge_date, edge.pdi.series_name.lower())
        if upto is not None:
            page = documents[-limit:]
            return DocumentPage(tuple(page), self._titles(page), str(page[-1].pdi) if page else None)
        following = str(documents[limit - 1].pdi) if len(documents) > limit else None
        return DocumentPage(tuple(documents[:limit]), self._titles(documents[:limit]), following)

    def messages_by_id(self, message_ids: Sequence[str], *, limit: int = 500) -> list[tuple[str, Generic]]:
        """The documents holding an e-mail message whose ``Message-ID`` is one of ``message_ids`` (with angle
        brackets, compared exactly), each with the id it has: in any series, on any day, however it was named.

        Read from the thread index (schema 10), at most ``limit`` documents,
        without those the current reader may not learn of.
        """
        return self._messages(self.store.messages_by_id(message_ids, limit), limit)

    def message_replies(self, message_ids: Sequence[str], *, limit: int = 500) -> list[tuple[str, Generic]]:
        """The documents holding an e-mail message that replies to one of ``message_ids`` (its In-Reply-To's
        last id, else its References' last: :class:`pdi.mail.message.ThreadIds`), each with the id it replies to.

        Read from the thread index (schema 10), in any series and on any day,
        at most ``limit`` documents, without those the current reader may not learn of.
        """
        return self._messages(self.store.message_replies(message_ids, limit), limit)

    def message_referrers(self, message_ids: Sequence[str], *, limit: int = 500) -> list[tuple[str, Generic]]:
        """The documents holding an e-mail message whose References or In-Reply-To name one of ``message_ids``
        (a reply, a reply to a reply, …), each with the id it names.

        Read from the thread index (schema 10), in any series and on any day,
        at most ``limit`` documents, without those the current reader may not learn of.
        """
        return self._messages(self.store.message_referrers(message_ids, limit), limit)

    def _messages(self, found: Sequence[tuple[str, Sequence[RepresentationRecord]]], limit: int) -> list[tuple[str, Generic]]:
        if limit < 1:
            raise LimitError("a list of messages holds at least one")
        hidden = self._unlisted()
        shown: list[tuple[str, Generic]] = []
        for message_id, records in found:
            shown += [(message_id, document) for document in self._listed(documents_of(records), hidden)]
        return shown

    @staticmethod
    def _capture_cursor(name: PDI | str) -> tuple[datetime.date, str]:
        """The keyset cursor of :meth:`captures` a generic name gives: its day and series."""
        last = parse_pdi(name)
        if last.date is None or last.is_pattern:
            raise UnsupportedError(f"{last} names no one document: after= and before= take a generic name")
        return (last.date, last.series_name.lower())

    def changes(
        self, *, after: int = 0, series: str | None = None, limit: int = 100,
        since: str | None = None, until: str | None = None,
    ) -> list[DocumentChange]:
        """The next ``limit`` documents after the cursor ``after`` (of ``series`` only), each as it is now.

        In catalog order (the order documents were first deposited), which
        never changes, so a harvester pages through with the last
        :attr:`~pdi.archive.results.DocumentChange.cursor` it was given. With
        ``since`` or ``until`` (ISO 8601 UTC, inclusive) only the documents
        that last changed between them, found from the catalog's stamps
        before any document is read. A whole withdrawn document is still
        listed, with its ``withdrawn_at``; withdrawn versions are left out of
        its versions. So is a document the reader was shown and is no longer
        (an embargo set, its series made private or hidden: :meth:`_change`),
        withdrawn from its sight when that was done.
        """
        if limit < 1:
            raise LimitError("a page holds at least one document")
        wanted = None if series is None else series.lower()
        now = timestamp(self.now())  # before the reader's embargoes in force: an embargo over by then is over there
        hidden = self._unlisted()
        found: list[DocumentChange] = []
        while len(found) < limit:
            stamps = self.store.document_stamps(after, wanted, max(limit, _STAMP_BATCH), now)
            for stamp in stamps:
                # a document with versions the reader may not learn of is dated by the rest, and one withheld from
                # the reader by when it was withheld (its change may be earlier than its stamp): it is read before
                # it is matched against until
                partly = stamp.key in hidden.embargoed or not hidden.series_listed(stamp.key.series)
                if (since is None or stamp.changed_at >= since) and (until is None or stamp.changed_at <= until
                                                                      or partly):
                    change = self._change(stamp, hidden)
                    if change is None:  # not the reader's to learn of, withdrawn or not
                        continue
                    if partly and not ((since is None or change.changed_at >= since)
                                       and (until is None or change.changed_at <= until)):
                        continue
                    found.append(change)
                    if len(found) == limit:
                        break
            if len(stamps) < max(limit, _STAMP_BATCH):
                break
            after = stamps[-1].cursor
        return found

    def changed_document(self, series: str, day: datetime.date, digest: str) -> str | None:
        """The generic name of the document of ``series`` minted on ``day`` whose name's SHA-256 is ``digest``.

        How a harvest goes on after a record whose name is too long to carry
        in a resumption token (:mod:`pdi.server.protocol.memento_oaipmh`): reads that day's
        documents a page at a time.
        """
        after = None
        while True:
            documents = documents_of(self.store.day_documents(canonical_series(series), day, after, 100))
            for document in documents:
                name = str(document.pdi)
                if _sha256(name.encode()) == digest:
                    return name
            if len(documents) < 100:
                return None
            after = documents[-1].pdi.unique_id

    def document_change(self, pdi: PDI | str) -> DocumentChange:
        """One document as :meth:`changes` lists it, by its generic name (or any of its names)."""
        parsed = parse_pdi(pdi)
        if parsed.is_pattern or parsed.citation is not None:
            raise UnsupportedError(f"{parsed} names no one document")
        now = timestamp(self.now())  # before the reader's embargoes in force, as in changes()
        stamp = self.store.document_stamp(key_of(parsed), now)
        change = None if stamp is None else self._change(stamp, self._unlisted())
        if change is None:  # a document the reader may not learn of all of is not in the list: not found
            raise NotFoundError(f"{parsed.without_fragment()} is not in this archive")
        return change

    def _change(self, stamp: DocumentStamp, hidden: Unlisted) -> DocumentChange | None:
        """The document as a list shows it to the reader (``None``: not the reader's to learn of).

        One the reader may not learn all of now (an embargo in force, a
        private or hidden series) but was shown before a change of access
        withheld it (:attr:`~pdi.archive.store.DocumentStamp.access_changed_at`:
        a change of access that left it unlisted withheld it) is shown as
        withdrawn then, with nothing of what it holds: OAI-PMH's deleted
        record (§2.5.1), which tells a harvester that kept it to let it go.
        One never shown to the reader is not its to learn of.
        """
        if not hidden.document_listed(stamp.key):
            return self._withheld(stamp)
        records = self.store.representations(stamp.key)
        shown = [r for r in records if hidden.version_listed(stamp.key, r.version)]
        if not shown:
            return self._withheld(stamp, records)
        records = [
            r for r in shown
            if stamp.withdrawn_at is not None or self.store.withdrawal(stamp.key, r.version) is None
        ]
        withdrawn_at: str | None = stamp.withdrawn_at
        if not records:  # every version withdrawn: the document is listed as it was, marked withdrawn
            records = shown
            withdrawn_at = stamp.changed_at
        statements = tuple(self.store.document_assertions(stamp.key))
        partly = stamp.key in hidden.embargoed
        if withdrawn_at is None or partly:  # what was said of a withdrawn (or unlisted) version goes with it
            held = {r.version for r in records}
            statements = tuple(s for s in statements if _version_of_subject(s.subject) in held | {None})
        changed_at = stamp.changed_at
        if partly:  # dated by what the reader may learn of: its versions, statements and withdrawals
            moments = [r.created_at for r in shown] + [s.at for s in statements]
            if stamp.embargo_ended_at is not None:  # the end of an embargo over: what it hid is shown since
                moments.append(stamp.embargo_ended_at)
            if stamp.access_changed_at is not None:  # a version shown or withheld by a change of access
                moments.append(stamp.access_changed_at)
            moments += [w.at for w in self.store.withdrawals_of([stamp.key])
                        if w.version is None or hidden.version_listed(stamp.key, w.version)]
            changed_at = max(moments)
            if withdrawn_at is not None and stamp.withdrawn_at is None:
                withdrawn_at = changed_at
        return DocumentChange(stamp.cursor, generic_of(records), statements, changed_at, withdrawn_at)

    def _withheld(self, stamp: DocumentStamp, records: Sequence[RepresentationRecord] | None = None
                  ) -> DocumentChange | None:
        """A document the reader may not learn all of, as a list shows it: withdrawn from the reader's sight when a
        change of access withheld it after it was shown (its name, and the versions it had then); ``None`` if it
        was never shown to readers without access."""
        withheld = stamp.access_changed_at
        if withheld is None:
            return None
        if records is None:
            records = self.store.representations(stamp.key)
        then = [r for r in records if r.created_at <= withheld] or list(records[:1])
        if not then:
            return None
        return DocumentChange(stamp.cursor, generic_of(then), (), withheld, withheld)

    def document(self, pdi: PDI | str) -> DocumentDetail:
        """What the catalog knows of the document a name belongs to: versions, formats, statements, fixity checks."""
        parsed = parse_pdi(pdi)
        if parsed.is_pattern or parsed.citation is not None:
            raise UnsupportedError(f"{parsed} names no one document")
        key = key_of(parsed)
        self._guard_series(parsed)
        records = self.store.representations(key)
        if not records:
            raise NotFoundError(f"{parsed.without_fragment()} is not in this archive")
        self._guard_embargo(parsed, None)
        hidden = self._unlisted()
        records = [r for r in records if hidden.version_listed(key, r.version)]
        if not records:
            raise refused(f"{parsed.without_fragment()}: every version is embargoed")
        statements = self.store.document_assertions(key)
        if key in hidden.embargoed:  # what was said of a version the reader may not learn of goes with it
            held = {r.version for r in records} | {None}
            statements = [s for s in statements if _version_of_subject(s.subject) in held]
        return DocumentDetail(
            generic_of(records),
            tuple(records),
            tuple(statements),
            self.store.last_fixity_checks([r.sha256 for r in records]),
        )

    def _titles(self, documents: Sequence[Generic]) -> dict[str, str]:
        """The title of each document that has one: stated about its generic name, or else about a versioned name.

        A document under an embargo the current reader is not exempt from
        shows no title (its statements are its content's).
        """
        hidden = self._unlisted()
        if hidden:
            documents = [d for d in documents if key_of(d.pdi) not in hidden.embargoed]
        owner: dict[str, str] = {}
        for each in documents:
            generic = str(each.pdi.canonical())
            owner[generic] = generic
            for name in each.names:
                owner[str(name.canonical())] = generic
        found: dict[str, tuple[bool, int, str]] = {}  # document -> (about the document itself, id, value)
        for record in self.store.statements_about(list(owner), "title"):
            about = owner[record.subject]
            rank = (record.subject == about, record.id, record.value)
            if about not in found or rank > found[about]:
                found[about] = rank
        return {str(d.pdi): found[str(d.pdi.canonical())][2] for d in documents if str(d.pdi.canonical()) in found}
