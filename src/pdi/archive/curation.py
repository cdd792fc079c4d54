"""Curation: the series, who may read them, embargoes, withdrawals, the write API's tokens and the audit log.

The owner's decisions (:mod:`pdi.archive.access`: a series' access; the
tokens of :mod:`pdi.archive.tokens`) and a curator's (an embargo, a
withdrawal with its tombstone, a purge of the octets for a legal takedown),
each audited in the transaction that makes it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

import pdi.archive.tokens as tokens
from pdi._wording import clipped
from pdi.archive.access import check_access, parse_until
from pdi.archive.base import ArchiveBase
from pdi.archive.catalog.base import withdrawn_holding
from pdi.archive.naming import (
    MAX_ASSERTION_VALUE,
    canonical_series,
    generic_name,
    key_of,
    parse_pdi,
    timestamp,
    versioned_name,
)
from pdi.archive.store import (
    AuditRecord,
    DocumentKey,
    EmbargoChange,
    SeriesRecord,
    TokenRecord,
    WithdrawalRecord,
)
from pdi.archive.tokens import Writer
from pdi.errors import ImmutabilityError, LimitError, NotFoundError, ParseError, UnsupportedError
from pdi.identifier import PDI

__all__ = ["Curation"]


class Curation(ArchiveBase):
    """Register series and set their access; embargo and withdraw names; make and revoke tokens; read the audit log."""

    def add_series(
        self, name: str, *, parent: str | None = None, authority: str = "", exist_ok: bool = False
    ) -> SeriesRecord:
        """Register a document series; with ``parent``, a subseries delegated under it.

        A subseries adds components in front of its parent's name
        (``press.oma.eop.gov.us`` under ``oma.eop.gov.us``). Without ``parent``,
        the nearest registered series the name ends with becomes its parent.
        A series is registered once, and its parent and authority never change:
        one registered already is an :class:`~pdi.errors.ImmutabilityError`
        saying what is recorded, unless ``exist_ok`` and what is asked agrees
        with it (a ``parent`` or an ``authority`` not given agrees with any):
        then its record is returned as it is, nothing changed.
        """
        series = canonical_series(name)
        if parent is not None:
            parent = canonical_series(parent)
        held = self.store.get_series(series)
        if held is not None:
            return _registered_already(held, parent, authority, exist_ok)
        if parent is not None:
            if not series.endswith("." + parent):
                raise ParseError(
                    f"subseries {series} must end with its parent's name .{parent}",
                    text=name,
                    rule="document-series",
                )
            if self.store.get_series(parent) is None:
                raise NotFoundError(f"parent series {parent} is not registered")
        else:
            parts = series.split(".")
            for i in range(1, len(parts) - 1):
                candidate = ".".join(parts[i:])
                if self.store.get_series(candidate) is not None:
                    parent = candidate
                    break
        record = SeriesRecord(series, parent, authority, timestamp(self.now()))
        self.store.add_series(record)
        return record

    def series(self) -> list[SeriesRecord]:
        """Every registered series, by name (a reader is shown only those it may read: :mod:`pdi.archive.access`)."""
        unreadable = self._unreadable()
        return [s for s in self.store.list_series() if s.name not in unreadable]

    def find_series(self, name: str) -> SeriesRecord | None:
        """The registered series ``name`` (canonical), or ``None`` when there is none (the owner's view)."""
        return self.store.get_series(name)

    def set_series_access(self, series: str, access: str, *, who: str | None = None) -> SeriesRecord:
        """Make a series ``public``, ``private`` (403 to readers without access) or ``hidden`` (404); audited.

        The owner's decision, made on the command line (no token may change
        it). Every resolver's cache forgets what it keeps (an access change
        moves :meth:`withdrawals_generation`).
        """
        name = canonical_series(series)
        self._require_series(name)
        self.store.set_series_access(name, check_access(access), who or self.who, timestamp(self.now()))
        record = self.store.get_series(name)
        assert record is not None
        return record

    def embargo(
        self, pdi: PDI | str, until: str | None, *, who: str | None = None, writer: Writer | None = None,
        shorten: bool = False,
    ) -> EmbargoChange:
        """Embargo a document (a generic name) or a version (a versioned name) until ``until``; ``None`` lifts it.

        ``until`` is a date (its start, GMT) or an ISO 8601 time with its
        zone; from then on the embargo is over by itself. A document's
        embargo and each version's own are apart: one neither sets nor lifts
        the other, and a name is embargoed while either is in force. So the
        answer says what was changed and what still holds the name
        (:class:`~pdi.archive.store.EmbargoChange`). A lift that would lift
        nothing in force while another embargo still holds the name (a
        document with no embargo of its own whose version keeps one, or a
        version under its document's) is refused, :class:`~pdi.errors.ImmutabilityError`
        naming what holds it and by which name to lift that, and changes
        nothing. An ``until`` earlier than the name's own embargo in force
        shortens a sealing, and is refused (:class:`~pdi.errors.ImmutabilityError`
        naming both moments; nothing changed) unless ``shorten``; a later one,
        or a lift, needs no such word. A ``writer`` needs the role ``curate``
        over the series. Audited, the entry naming the embargo before and
        after (an embargo set as it is already changes nothing and is not);
        every resolver's cache forgets what it keeps.
        """
        parsed = parse_pdi(pdi)
        if parsed.is_pattern or parsed.citation is not None or parsed.fragment is not None:
            raise UnsupportedError("embargo a name (generic or versioned), not a pattern, citation or fragment")
        key = key_of(parsed)
        if writer is not None:
            writer.require("curate", key.series)
        moment = None if until is None else parse_until(until)
        version = None if parsed.format is None else self._version_of(parsed, key, latest=False)
        name = str(parsed.without_fragment())
        now = timestamp(self.now())
        if moment is None:
            own = self.store.embargoes_of([key]).get((key, version))
            if own is None or own <= now:
                held = self._embargoes_holding(key, version, None, now)
                if held:
                    raise ImmutabilityError(f"{name}: nothing lifted: {_no_own_embargo(version, own)}; " + "; ".join(
                        _holding(version, held_name, held_until) for held_name, held_until in held
                    ))
        before = self.store.set_embargo(
            key, version, moment, writer.name if writer else (who or self.who), now,
            subject=name, address=writer.address if writer else None, shorten=shorten or moment is None,
        )
        own_in_force = moment if moment is not None and moment > now else None
        return EmbargoChange(name, version, before, moment, self.embargo_in_force(parsed),
                             self._embargoes_holding(key, version, own_in_force, now),
                             over=moment is not None and own_in_force is None)

    def _embargoes_holding(
        self, key: DocumentKey, version: int | None, own: str | None, now: str
    ) -> tuple[tuple[str, str], ...]:
        """The embargoes in force, other than the name's own (in force until ``own``, ``None``: not), that hold it
        later than that: a version's document's; a document's versions' own, each by a versioned name."""
        set_ = self.store.embargoes_of([key])

        def later(until: str) -> bool:
            return until > now and (own is None or until > own)

        if version is not None:
            document = set_.get((key, None))
            return ((generic_name(key), document),) if document is not None and later(document) else ()
        held = []
        for (_, held_version), until in sorted(set_.items(), key=lambda item: item[0][1] or 0):
            if held_version is not None and later(until):
                reps = self.store.representations(key, held_version)
                held.append((versioned_name(key, reps[0].format, held_version) if reps else
                             f"{generic_name(key)} version {held_version}", until))
        return tuple(held)

    def embargo_in_force(self, pdi: PDI | str) -> str | None:
        """Until when the name ``pdi`` (generic: the document; versioned: that version) is embargoed now, as the
        catalog keeps a moment: its own embargo or its document's, the later, when not over; ``None`` when it reads
        as any other name. So a version's embargo lifted under its document's still in force answers the
        document's, as the resolver does (403 until then)."""
        parsed = parse_pdi(pdi)
        key = key_of(parsed)
        version = None if parsed.format is None else self._version_of(parsed, key, latest=False)
        until = self.store.embargo(key, version)
        return until if until is not None and until > timestamp(self.now()) else None

    def withdraw(
        self, pdi: PDI | str, reason: str, *, who: str | None = None, writer: Writer | None = None,
        purge: bool = False,
    ) -> WithdrawalRecord:
        """Withdraw a version (a versioned name) or a whole document (a generic name), for good, saying why.

        The name stays: it is never minted again, it is still listed, and it
        resolves to its tombstone (:class:`~pdi.errors.WithdrawnError`, ``410
        Gone`` over HTTP) instead of its bytes, which are kept. The
        withdrawal is in the audit log. A ``writer`` (a token of the write
        API) needs the role ``curate`` over the series.

        ``purge=True`` (a legal takedown; a ``writer`` needs the role
        ``admin``) also deletes the octets: each representation is marked
        purged in the withdrawal's own transaction (audited as ``purge``),
        then each blob is deleted unless another representation that keeps
        its octets (of any name, withdrawn or not) holds the same bytes.
        A name already withdrawn may be purged later the same way; purging
        again finishes what an interrupted purge left. The tombstone's
        :attr:`~pdi.archive.store.WithdrawalRecord.purged` is then true.

        Without ``purge``, a name already withdrawn (a version, or a document,
        withdrawn before; a version of a document withdrawn whole) is not
        withdrawn again: its tombstone is returned as it is, marked
        :attr:`~pdi.archive.store.WithdrawalRecord.earlier`, and nothing is
        recorded (the reason given now is not the one the name resolves to).
        """
        parsed = parse_pdi(pdi)
        if parsed.is_pattern or parsed.citation is not None or parsed.fragment is not None:
            raise UnsupportedError("withdraw a name (generic or versioned), not a pattern, citation or fragment")
        key = key_of(parsed)
        if writer is not None:
            writer.require("admin" if purge else "curate", key.series)
        if not isinstance(reason, str) or not reason.strip():
            raise ParseError("a withdrawal needs a reason", rule="reason")
        if len(reason) > MAX_ASSERTION_VALUE:
            raise LimitError(f"a reason may have at most {MAX_ASSERTION_VALUE} characters")
        version = None
        if parsed.format is not None:
            version = self._version_of(parsed, key, latest=False)
        record, purged = self.store.withdraw(
            key, version, reason.strip(), writer.name if writer else (who or self.who), timestamp(self.now()),
            subject=str(parsed.without_fragment()), address=writer.address if writer else None, purge=purge,
        )
        if purged:
            _, kept = self.store.delete_purged_blobs(purged)
            record = dataclasses.replace(record, kept=tuple(kept))
        return record

    def withdrawals(self) -> list[WithdrawalRecord]:
        """Every tombstone, oldest first."""
        return list(self.store.iter_withdrawals())

    def withdrawals_of(self, documents: Iterable[DocumentKey]) -> list[WithdrawalRecord]:
        """The tombstones of these documents (generic names' keys), oldest first, read by index.

        What a resolver needs about the documents it answers for: unlike
        :meth:`withdrawals`, its cost does not grow with the catalog.
        """
        return self.store.withdrawals_of(list(documents))

    def embargoes_in_force(self, documents: Sequence[DocumentKey]) -> dict[tuple[DocumentKey, int | None], str]:
        """The embargoes of these documents (generic names' keys) not over now, read by index as
        :meth:`withdrawals_of` is: each document's (version ``None``) and each version's, until when (a catalog
        moment). What a page listing them marks for a reader who may read them (:meth:`embargo_in_force` says it of
        one name)."""
        now = timestamp(self.now())
        return {held: until for held, until in self.store.embargoes_of(list(documents)).items() if until > now}

    def withdrawn_holder(self, held: PDI | str) -> ImmutabilityError | None:
        """The refusal of octets that ``held`` (a format of a version) holds when that version, or its document, was
        withdrawn; ``None`` when it is in service.

        For a front end that found the octets held already (a WARC import's record, by its SHA-256 or the name it
        carries) before any deposit: a withdrawn name holds them for no one (it answers with its tombstone), so it
        is never answered as holding them, nor are they deposited again under it. The refusal is worded as the
        catalog's of a deposit of the very octets (:func:`~pdi.archive.catalog.base.withdrawn_holding`): the
        document withdrawn whole, if it was; else the version's first tombstone, as a reader is shown it, and
        whether any purged its octets. The version's alone is :attr:`~pdi.errors.ImmutabilityError.forceable`.
        """
        parsed = parse_pdi(held)
        key = key_of(parsed)
        version = parsed.version if parsed.version is not None else 1
        tombstones = [t for t in self.store.withdrawals_of([key]) if t.version in (None, version)]
        if not tombstones:
            return None
        whole = next((t for t in tombstones if t.version is None), None)
        shown = whole or tombstones[0]
        return withdrawn_holding(str(parsed.without_fragment()), shown.at, shown.reason,
                                 any(t.purged for t in tombstones), whole=None if whole is None else generic_name(key))

    def withdrawals_generation(self) -> int:
        """A number that grows with every withdrawal (what a resolver's cache watches)."""
        return self.store.withdrawals_generation()

    def generation_at_once(self) -> int | None:
        """:meth:`withdrawals_generation` read in the calling thread without waiting for the catalog's lock (an
        event loop's), or ``None`` where the catalog cannot (PostgreSQL): then ask that off the loop."""
        return self.store.generation_at_once()

    def add_token(
        self, name: str, *, role: str, series: Sequence[str] = (), who: str | None = None
    ) -> tuple[TokenRecord, str]:
        """Make a token; returns its record and the token itself, which is shown this once and never kept.

        The making (and a revoking) is in the audit log, in its own transaction.

        ``series`` (each registered) limits what it may write, each with its
        subseries; none: every series.
        """
        tokens.check_name(name)
        tokens.check_role(role)
        scope = []
        for one in series:
            canonical = canonical_series(one)
            self._require_series(canonical)
            scope.append(canonical)
        secret = tokens.new_secret()
        at = timestamp(self.now())
        record = self.store.add_token(name, tokens.digest(secret), role, scope, at, who or self.who)
        return record, secret

    def tokens(self) -> list[TokenRecord]:
        """Every token ever made (revoked ones too, with when), oldest first; never the tokens themselves."""
        return self.store.list_tokens()

    def revoke_token(self, name: str, *, who: str | None = None) -> TokenRecord:
        """Revoke a token by name, at once and for good; revoking it again changes nothing."""
        return self.store.revoke_token(name, timestamp(self.now()), who or self.who)

    def authenticate(self, secret: str) -> TokenRecord | None:
        """The live token ``secret`` is, or ``None`` (unknown, or revoked)."""
        if not secret.startswith(tokens.PREFIX):
            return None
        record = self.store.token_by_digest(tokens.digest(secret))
        return record if record is not None and record.revoked_at is None else None

    def audit(self, after: int = 0, limit: int = 1000) -> list[AuditRecord]:
        """The audit log after entry ``after``, oldest first: who wrote what, when and from where.

        Imports, writes through the API (each in the transaction that made
        it), and the making and revoking of tokens are logged.
        """
        return self.store.audit_log(after, limit)


def _registered_already(held: SeriesRecord, parent: str | None, authority: str, exist_ok: bool) -> SeriesRecord:
    """``held``, the series asked to be registered, when ``exist_ok`` and what is asked agrees with it; else the
    :class:`~pdi.errors.ImmutabilityError` naming the series, what is recorded, what differs and what to do."""
    differs = []
    if parent is not None and parent != held.parent:
        differs.append(f"asked under {parent}, recorded {f'under {held.parent}' if held.parent else 'under none'}")
    if authority and authority != held.authority:
        differs.append(f"asked with authority {clipped(authority)!r}, recorded {clipped(held.authority)!r}")
    if exist_ok and not differs:
        return held
    since = f"since {held.created_at}" + (f", under {held.parent}" if held.parent else "")
    if not differs:
        raise ImmutabilityError(f"series {held.name} is registered already ({since}): nothing to register"
                                f" (pdi add FILE --series {held.name} mints in it; pdi series ls lists the series)")
    raise ImmutabilityError(f"series {held.name} is registered already ({since}), and a series' parent and authority"
                            f" never change: {'; '.join(differs)}. Mint in it as it is (pdi add FILE --series"
                            f" {held.name}) or register a series of another name (pdi series ls lists the series)")


def _no_own_embargo(version: int | None, own: str | None) -> str:
    """Of a lift that lifts nothing in force: the name's own embargo (``own``, over or none) as it is."""
    what = "the document" if version is None else f"version {version}"
    return f"{what} has no embargo of its own" if own is None else f"{what}'s own embargo until {own} is over already"


def _holding(version: int | None, name: str, until: str) -> str:
    """One embargo still in force over a name (``version`` None: a document), and the name that lifts it."""
    if version is None:
        return f"the version {name} keeps its own embargo until {until} (lift it by that name)"
    return f"its document's embargo until {until} still covers it (lift it by the generic name {name})"
