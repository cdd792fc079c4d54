"""Withdrawals and access: tombstones (and purges), private series and embargoes, the write API's tokens."""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterator, Sequence
from typing import Any

from pdi.archive.catalog.base import (
    MAX_PARAMETERS,
    RULE_CHANGED,
    CatalogBase,
    describe_key,
    pages,
)
from pdi.archive.store import (
    AuditRecord,
    DocumentKey,
    SeriesRecord,
    TokenRecord,
    WithdrawalRecord,
)
from pdi.errors import ImmutabilityError, NotFoundError

#: Whether a document (``documents``' row) is shown at a moment (the parameter, twice) to a reader without access to
#: its series, were the series public: not embargoed whole, and a version of it not embargoed
#: (:class:`pdi.archive.access.Unlisted`; a withdrawn one is shown as withdrawn).
SHOWN_AT = ("(documents.embargo_until IS NULL OR documents.embargo_until <= ?) AND EXISTS (SELECT 1 FROM versions v"
            " WHERE v.document = documents.id AND (v.embargo_until IS NULL OR v.embargo_until <= ?))")
#: Documents one query of :meth:`SQLStore.withdrawals_of` looks up (3 parameters each, within SQLite's limit).
_KEYS_A_QUERY = MAX_PARAMETERS // 3


class AccessPart(CatalogBase):
    """Who may read what, which names are out of service, and who may write."""

    def set_series_access(self, name: str, access: str, who: str, at: str, *, address: str | None = None) -> None:
        """Make a series public, private or hidden; audited, and counted as an access change unless it has that
        access already (then its manifest pages stay the very same octets: :mod:`pdi.archive.manifests`).

        Each document a reader without access is shown, or was shown, of a series made public or not by it (the
        series and those under it whose effective access goes from public to private or hidden, or back) is
        dated by it (its ``access_changed_at``): shown from now, or withheld from now. One statement a page of
        such series, in this transaction.
        """
        with self._write():
            before = self._public_series()
            had = self._query("SELECT access FROM series WHERE name = ?" + self.for_update, (name,))
            if not had:
                raise NotFoundError(f"series {name} is not registered")
            if str(had[0][0]) == access:  # no change: the operator's word audited, no rule counted as changed
                self._insert_audit(AuditRecord(at, who, "series-access", name, access, address))
                return
            self._query("UPDATE series SET access = ? WHERE name = ?", (access, name))
            after = self._public_series()
            flipped = sorted(series for series, public in after.items() if before.get(series) != public)
            for page in pages(flipped, MAX_PARAMETERS - 3):
                marks = ", ".join("?" * len(page))
                self._query(f"UPDATE documents SET access_changed_at = ? WHERE series IN ({marks}) AND {SHOWN_AT}",
                            [at, *page, at, at])
            self._query("INSERT INTO access_changes (at, series) VALUES (?, ?)", (at, name))
            self._query(RULE_CHANGED, (name,))
            self._insert_audit(AuditRecord(at, who, "series-access", name, access, address))

    def _public_series(self) -> dict[str, bool]:
        """Whether each registered series is public, as :func:`pdi.archive.access.effective_access` reads it (its
        own setting and those of the series above it), in the transaction begun."""
        from pdi.archive.access import PUBLIC, effective_access

        rows = self._query("SELECT name, parent, authority, created_at, access FROM series")
        records = {str(r[0]): SeriesRecord(str(r[0]), None if r[1] is None else str(r[1]), str(r[2]), str(r[3]),
                                           str(r[4])) for r in rows}
        return {name: effective_access(records, name) == PUBLIC for name in records}

    def _shown_versions(self, doc: int, at: str) -> frozenset[int]:
        """The versions of the document ``doc`` a reader without access is shown at ``at`` as far as embargoes go
        (its series apart): none while the document is embargoed whole (:class:`pdi.archive.access.Unlisted`)."""
        rows = self._query("SELECT d.embargo_until, v.version, v.embargo_until FROM documents d"
                           " JOIN versions v ON v.document = d.id WHERE d.id = ?", (doc,))
        if not rows or (rows[0][0] is not None and str(rows[0][0]) > at):
            return frozenset()
        return frozenset(int(r[1]) for r in rows if r[2] is None or str(r[2]) <= at)

    def set_embargo(
        self, key: DocumentKey, version: int | None, until: str | None, who: str, at: str,
        *, subject: str, address: str | None = None, shorten: bool = True,
    ) -> str | None:
        """Embargo a document (``version`` None) or a version until ``until`` (None: lift it); audited, the entry
        naming the embargo before and after.

        Returns its own embargo as it was before (over or not; ``None``: none). An embargo set as it is already
        changes nothing and is not audited. ``shorten=False`` refuses (:class:`ImmutabilityError`, nothing
        changed) an ``until`` earlier than its own embargo in force at ``at``; a lift is not refused.

        When that changes what a reader without access to its public series is shown of the document at ``at``
        (it or the version shown, or withheld), the document is dated by it (its ``access_changed_at``)."""
        with self._write():
            # the series' row first (its count of changes is written on it), as a change of the series' access
            # holds it before it dates the documents: the document first waited for the series' row while the
            # access change waited for the document, and PostgreSQL refused one ("deadlock detected")
            if self.for_no_key_update:  # (SQLite's one writer at a time holds everything already)
                self._query("SELECT 1 FROM series WHERE name = ?" + self.for_no_key_update, (key.series,))
            doc = self._check_document(key, lock=True)
            if version is None:
                rows = self._query("SELECT embargo_until FROM documents WHERE id = ?", (doc,))
            else:
                rows = self._query("SELECT embargo_until FROM versions WHERE document = ? AND version = ?",
                                   (doc, version))
                if not rows:
                    raise NotFoundError(f"no version {version} of {describe_key(key)} in the archive")
            before = None if rows[0][0] is None else str(rows[0][0])
            if before == until:
                return before
            if not shorten and until is not None and before is not None and until < before and before > at:
                raise ImmutabilityError(
                    f"{subject}: its embargo until {before} would end earlier, at {until}: an embargo is shortened"
                    " only when that is asked for (pdi embargo --shorten; shorten=true on POST /api/embargo)"
                )
            shown = self._shown_versions(doc, at)
            if version is None:
                self._query("UPDATE documents SET embargo_until = ? WHERE id = ?", (until, doc))
            else:
                self._query("UPDATE versions SET embargo_until = ? WHERE document = ? AND version = ?",
                            (until, doc, version))
            # what a reader without access is shown of it changed now (it, or a version, shown or withheld), not
            # when the embargo says: dated, for harvesters (OAI-PMH §2.7.1, §2.5.1); an embargo moved while in
            # force, or set on what such a reader never sees (its series is not public), changed nothing they see
            if self._shown_versions(doc, at) != shown and self._public_series().get(key.series, False):
                self._query("UPDATE documents SET access_changed_at = ? WHERE id = ?", (at, doc))
            self._query("INSERT INTO access_changes (at, series) VALUES (?, ?)", (at, key.series))
            self._query(RULE_CHANGED, (key.series,))
            what = "the document" if version is None else f"version {version}"
            was = "" if before is None else f" (was until {before})"
            self._insert_audit(AuditRecord(
                at, who, "embargo", subject, (f"{what} until {until}" if until else f"{what}: lifted") + was, address,
            ))
            return before

    def rules_changes(self, series: Sequence[str]) -> int:
        """How many changes of who may read what were made to any of ``series`` (its access set, an embargo of one
        of its documents set, changed or lifted) since schema step 25 recorded each one's series: a number that
        only grows (no change is ever taken back out), which a manifest page of a series signs with the series
        and those above it (:mod:`pdi.archive.manifests`). Each series' row holds its count (schema step 27), so
        this reads one row a series named, however many changes there have been."""
        if not series:
            return 0
        with self._read():
            marks = ", ".join("?" * len(series))
            rows = self._query(f"SELECT COALESCE(SUM(rules_changes), 0) FROM series WHERE name IN ({marks})",
                               list(series))
        return int(rows[0][0])

    def rules_changes_of_each(self) -> dict[str, int]:
        """How many changes of who may read what each series' own row of them counts (:meth:`rules_changes` of the
        series alone; a series with none is left out): what an export carries, so that the archive it is imported
        into signs no fewer (:meth:`~pdi.archive.catalog.imports.ImportsPart.import_all`)."""
        with self._read():
            rows = self._query("SELECT name, rules_changes FROM series WHERE rules_changes > 0")
        return {str(series): int(count) for series, count in rows}

    def embargo(self, key: DocumentKey, version: int | None) -> str | None:
        """Until when the document (and ``version`` of it, if given) is embargoed: the later of the two, or None."""
        with self._read():
            rows = self._query(
                "SELECT d.embargo_until, v.embargo_until FROM documents d"
                " LEFT JOIN versions v ON v.document = d.id AND v.version = ?"
                " WHERE d.series = ? AND d.day = ? AND d.unique_id = ?",
                (version if version is not None else -1, key.series, key.day.isoformat(), key.unique_id),
            )
        if not rows:
            return None
        found = [str(v) for v in rows[0] if v is not None]
        return max(found) if found else None

    def embargoes_in_force(self, now: str) -> dict[DocumentKey, frozenset[int] | None]:
        """The documents under an embargo not over at ``now``: the versions embargoed, ``None`` the whole document
        (embargoed itself, or every one of its versions).

        Read by the partial indexes ``documents_embargoed`` and ``versions_embargoed``: costs the embargoes.
        """
        with self._read():
            rows = self._query(
                "SELECT d.series, d.day, d.unique_id, NULL, 1 FROM documents d WHERE d.embargo_until > ?"
                " UNION ALL SELECT d.series, d.day, d.unique_id, v.version, CASE WHEN EXISTS (SELECT 1 FROM versions w"
                " WHERE w.document = v.document AND (w.embargo_until IS NULL OR w.embargo_until <= ?)) THEN 0 ELSE 1 END"
                " FROM versions v"
                " JOIN documents d ON d.id = v.document WHERE v.embargo_until > ?",
                (now, now, now),
            )
        found: dict[DocumentKey, frozenset[int] | None] = {}
        for series, day, unique_id, version, whole in rows:
            key = DocumentKey(str(series), datetime.date.fromisoformat(str(day)), str(unique_id))
            if version is None or whole:  # the document, or every version of it
                found[key] = None
            elif key not in found or found[key] is not None:
                found[key] = (found.get(key) or frozenset()) | {int(version)}
        return found

    def iter_embargoes(self) -> Iterator[tuple[DocumentKey, int | None, str]]:
        """Every embargo set (lifted or not): the document, the version (None: all of it), until when."""
        with self._read():
            rows = self._query(
                "SELECT d.series, d.day, d.unique_id, NULL, d.embargo_until FROM documents d"
                " WHERE d.embargo_until IS NOT NULL"
                " UNION ALL SELECT d.series, d.day, d.unique_id, v.version, v.embargo_until FROM versions v"
                " JOIN documents d ON d.id = v.document WHERE v.embargo_until IS NOT NULL ORDER BY 1, 2, 3, 4"
            )
        for series, day, unique_id, version, until in rows:
            key = DocumentKey(str(series), datetime.date.fromisoformat(str(day)), str(unique_id))
            yield key, None if version is None else int(version), str(until)

    def iter_access_changes(self) -> Iterator[tuple[DocumentKey, str]]:
        """Every document a change of access dated (``documents.access_changed_at``, schema 21), with when: what an
        export carries so that the archive it is imported into dates and withholds them as this one does."""
        with self._read():
            rows = self._query("SELECT series, day, unique_id, access_changed_at FROM documents"
                               " WHERE access_changed_at IS NOT NULL ORDER BY series, day, unique_id")
        for series, day, unique_id, at in rows:
            yield DocumentKey(str(series), datetime.date.fromisoformat(str(day)), str(unique_id)), str(at)

    def embargoes_of(self, keys: Sequence[DocumentKey]) -> dict[tuple[DocumentKey, int | None], str]:
        """The embargoes set (lifted or not) on these documents, found by their keys' index: each document's
        (version ``None``) and each version's, until when. What a manifest page says of its names, and what a
        mirror compares with it (:mod:`pdi.network.mirrors`)."""
        found: dict[tuple[DocumentKey, int | None], str] = {}
        with self._read():
            for batch in pages(list(dict.fromkeys(keys)), _KEYS_A_QUERY // 2):  # the relation twice
                relation, params = self._rows(
                    ("text", "text", "text"), [(key.series, key.day.isoformat(), key.unique_id) for key in batch]
                )
                joined = (f" FROM {relation} JOIN documents d ON d.series = k.column1 AND d.day = k.column2"
                          " AND d.unique_id = k.column3")
                rows = self._query(
                    f"SELECT d.series, d.day, d.unique_id, NULL, d.embargo_until{joined}"
                    " WHERE d.embargo_until IS NOT NULL"
                    f" UNION ALL SELECT d.series, d.day, d.unique_id, v.version, v.embargo_until{joined}"
                    " JOIN versions v ON v.document = d.id WHERE v.embargo_until IS NOT NULL",
                    params + params,
                )
                for series, day, unique_id, version, until in rows:
                    key = DocumentKey(str(series), datetime.date.fromisoformat(str(day)), str(unique_id))
                    found[key, None if version is None else int(version)] = str(until)
        return found

    def add_token(self, name: str, digest: str, role: str, series: Sequence[str], at: str, by: str) -> TokenRecord:
        with self._write():
            if self._query("SELECT 1 FROM tokens WHERE name = ?", (name,)):
                raise ImmutabilityError(f"a token named {name!r} exists already (names are never reused)")
            self._query(
                "INSERT INTO tokens (name, digest, role, series, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?)",
                (name, digest, role, " ".join(series), at, by),
            )
            self._insert_audit(AuditRecord(
                at, by, "token-add", f"token:{name}", f"role {role}, series {' '.join(series) or '(all)'}"
            ))
            found = self._tokens("WHERE name = ?", (name,))
        return found[0]

    def _tokens(self, where: str, params: tuple[object, ...] = ()) -> list[TokenRecord]:
        rows = self._query(
            f"SELECT id, name, role, series, created_at, created_by, revoked_at FROM tokens {where} ORDER BY id",
            params,
        )
        return [
            TokenRecord(int(r[0]), str(r[1]), str(r[2]), tuple(str(r[3]).split()), str(r[4]), str(r[5]),
                        None if r[6] is None else str(r[6]))
            for r in rows
        ]

    def list_tokens(self) -> list[TokenRecord]:
        with self._read():
            return self._tokens("")

    def token_by_digest(self, digest: str) -> TokenRecord | None:
        with self._read():
            found = self._tokens("WHERE digest = ?", (digest,))
        return found[0] if found else None

    def revoke_token(self, name: str, at: str, by: str) -> TokenRecord:
        with self._write():
            found = self._tokens("WHERE name = ?", (name,))
            if not found:
                raise NotFoundError(f"no token named {name!r}")
            if found[0].revoked_at is None:
                self._query("UPDATE tokens SET revoked_at = ? WHERE name = ?", (at, name))
                self._insert_audit(AuditRecord(at, by, "token-revoke", f"token:{name}", ""))
                found = self._tokens("WHERE name = ?", (name,))
        return found[0]

    def withdraw(
        self, key: DocumentKey, version: int | None, reason: str, who: str, at: str,
        *, subject: str, address: str | None = None, purge: bool = False,
    ) -> tuple[WithdrawalRecord, list[str]]:
        """Record a tombstone (and with ``purge`` mark its representations' octets purged), audited; one transaction.

        Returns the tombstone and the SHA-256 names of the blobs whose
        representations this purge marked, for :meth:`delete_purged_blobs`
        to delete after the commit (so a failed commit never loses bytes a
        name still holds).

        Without ``purge``, a name already withdrawn (the version by its own
        tombstone or the whole document's; the document by a tombstone of
        its own) is not withdrawn again: its first tombstone is returned,
        :attr:`~pdi.archive.store.WithdrawalRecord.earlier`, and nothing is
        written. That is decided in this transaction, with the document
        locked, so two withdrawals at once record one tombstone.
        """
        with self._write():
            doc = self._check_document(key, lock=True)
            if version is not None and not self._query(
                "SELECT 1 FROM versions WHERE document = ? AND version = ?", (doc, version)
            ):
                raise NotFoundError(f"no version {version} of {describe_key(key)} in the archive")
            if not purge:
                before = self._query(
                    "SELECT id, version, reason, who, at, purged FROM withdrawals WHERE document = ?"
                    + (" AND version IS NULL" if version is None else " AND (version IS NULL OR version = ?)")
                    + " ORDER BY id",
                    (doc,) if version is None else (doc, version),
                )
                if before:
                    return dataclasses.replace(_first_tombstone(key, before), earlier=True), []
            rows = self._query(
                "INSERT INTO withdrawals (document, version, reason, who, at, purged) VALUES (?, ?, ?, ?, ?, ?)"
                " RETURNING id",
                (doc, version, reason, who, at, 1 if purge else 0),
            )
            purged: list[str] = []
            if purge:
                scope = "document = ?" + ("" if version is None else " AND version = ?")
                params: list[Any] = [doc] if version is None else [doc, version]
                purged = sorted({str(r[0]) for r in self._query(
                    f"SELECT sha256 FROM representations WHERE {scope}", params
                )})
                self._query(f"UPDATE representations SET purged = ? WHERE {scope} AND purged IS NULL", [at, *params])
            what = "the document" if version is None else f"version {version}"
            self._insert_audit(AuditRecord(
                at, who, "purge" if purge else "withdraw", subject,
                f"{what}{', its octets purged' if purge else ''}: {reason}", address,
            ))
        return WithdrawalRecord(key, version, reason, who, at, int(rows[0][0]), purge), purged

    def withdrawal(self, key: DocumentKey, version: int) -> WithdrawalRecord | None:
        """The first tombstone over ``version`` of ``key``: its own, or the whole document's (``purged``: any purged it)."""
        with self._read():
            rows = self._query(
                "SELECT w.id, w.version, w.reason, w.who, w.at, w.purged FROM withdrawals w"
                " JOIN documents d ON d.id = w.document"
                " WHERE d.series = ? AND d.day = ? AND d.unique_id = ? AND (w.version IS NULL OR w.version = ?)"
                " ORDER BY w.id",
                (key.series, key.day.isoformat(), key.unique_id, version),
            )
        return _first_tombstone(key, rows) if rows else None

    def iter_withdrawals(self) -> Iterator[WithdrawalRecord]:
        with self._read():
            rows = self._query(
                "SELECT w.id, d.series, d.day, d.unique_id, w.version, w.reason, w.who, w.at, w.purged"
                " FROM withdrawals w JOIN documents d ON d.id = w.document ORDER BY w.id"
            )
        for wid, series, day, unique_id, version, reason, who, at, purged in rows:
            key = DocumentKey(str(series), datetime.date.fromisoformat(str(day)), str(unique_id))
            yield WithdrawalRecord(key, None if version is None else int(version), str(reason), str(who), str(at),
                                   int(wid), bool(purged))

    def withdrawals_of(self, keys: Sequence[DocumentKey]) -> list[WithdrawalRecord]:
        """The tombstones of these documents, oldest first: each document found by its key's index, never a scan.

        What a resolver asks for the one document (or the page of a URL's
        captures) it answers about: the time it takes grows with ``keys``,
        not with the catalog or with every withdrawal ever made.
        """
        found: list[WithdrawalRecord] = []
        wanted = list(dict.fromkeys(keys))
        with self._read():
            # the keys as a relation joined to the documents' unique index (a VALUES list here, arrays
            # on PostgreSQL): 1,000 keys of a catalog of a million documents in 5 ms, where the same
            # keys as ORs of conditions, 100 a statement, took 41 ms on PostgreSQL
            for batch in pages(wanted, _KEYS_A_QUERY):
                relation, params = self._rows(
                    ("text", "text", "text"), [(key.series, key.day.isoformat(), key.unique_id) for key in batch]
                )
                rows = self._query(
                    "SELECT w.id, d.series, d.day, d.unique_id, w.version, w.reason, w.who, w.at, w.purged"
                    f" FROM {relation} JOIN documents d ON d.series = k.column1 AND d.day = k.column2"
                    " AND d.unique_id = k.column3 JOIN withdrawals w ON w.document = d.id",
                    params,
                )
                for wid, series, day, unique_id, version, reason, who, at, purged in rows:
                    key = DocumentKey(str(series), datetime.date.fromisoformat(str(day)), str(unique_id))
                    found.append(WithdrawalRecord(key, None if version is None else int(version), str(reason),
                                                  str(who), str(at), int(wid), bool(purged)))
        return sorted(found, key=lambda w: w.id)

    def withdrawals_generation(self) -> int:
        """A number that grows with each withdrawal and each change of who may read what (a series
        made private, an embargo set): a resolver's cache compares it to know when to forget."""
        with self._read():
            rows = self._query(GENERATION)
        return int(rows[0][0])


def _first_tombstone(key: DocumentKey, rows: Sequence[Sequence[Any]]) -> WithdrawalRecord:
    """The first of a document's tombstones over a version (rows of id, version, reason, who, at, purged, oldest
    first): ``purged`` if any of them purged it."""
    wid, version, reason, who, at, _ = rows[0]
    return WithdrawalRecord(key, None if version is None else int(version), str(reason), str(who), str(at), int(wid),
                            any(int(r[5]) for r in rows))


#: :meth:`withdrawals_generation`'s statement.
GENERATION = (
    "SELECT (SELECT COALESCE(MAX(id), 0) FROM withdrawals) + (SELECT COALESCE(MAX(id), 0) FROM access_changes)"
)
