"""Imports: records of another archive brought in exactly as named, a page at a time, in one transaction.

An import (:meth:`ImportsPart.import_all`) is checked and written a page of
records at a time: a page's rows are a relation ``k``
(:meth:`~pdi.archive.catalog.base.CatalogBase._rows`: a ``VALUES`` list on
SQLite, an array a column on PostgreSQL) that one statement looks up or
inserts, so a page costs a few round trips, not a few a record.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any

from pdi._wording import plural
from pdi.archive.blobs.seam import (
    BlobSource,
    StagedBlob,
    cleaning_up_after_failure,
    discard_all,
    release_all,
)
from pdi.archive.catalog.base import (
    MAX_PARAMETERS,
    RULE_CHANGED,
    CatalogBase,
    describe_key,
    key_of,
    pages,
    timestamp,
    withdrawn_holding,
    withdrawn_version,
    withdrawn_whole,
)
from pdi.archive.store import (
    AssertionRecord,
    AuditRecord,
    DocumentKey,
    RepresentationRecord,
    SeriesRecord,
    WithdrawalRecord,
)
from pdi.errors import ImmutabilityError, NotFoundError, ParseError

if TYPE_CHECKING:
    from dataclasses import dataclass
else:
    from pdi._later import dataclass

#: Days whose numbering an import's check asks of the catalog in one statement.
NUMBERING_DAYS = 500


class ImportsPart(CatalogBase):
    """``import_all`` and its pages."""

    def import_all(
        self,
        series: Sequence[SeriesRecord],
        representations: Iterable[tuple[RepresentationRecord, BlobSource]],
        assertions: Iterable[tuple[DocumentKey, AssertionRecord]],
        audit: Iterable[AuditRecord] = (),
        withdrawals: Iterable[WithdrawalRecord] = (),
        embargoes: Sequence[tuple[DocumentKey, int | None, str]] = (),
        *,
        new_document: Callable[[RepresentationRecord], AuditRecord] | None = None,
        gapless: bool = True,
        force: bool = False,
        access_changes: Sequence[tuple[DocumentKey, str]] = (),
        rules: Mapping[str, int] | None = None,
    ) -> list[RepresentationRecord]:
        """Bring records from another archive in, exactly as named; one transaction.

        Identical records already present (or given twice) are kept; a record that would change
        what is stored under an existing name raises :class:`ImmutabilityError`
        and nothing is imported. Returns the new representations' records, in the order given.
        Each blob may come as a function that reads it (:data:`BlobSource`),
        called when the store writes that blob. ``audit`` entries are appended
        to the audit log in the same transaction, and ``new_document(record)``
        for each document the import brings in (its first representation).

        ``representations`` is iterated three times, never held: to check
        each record against the catalog, to stage the blobs, and to write the
        rows; an exception from any pass (a bag changed meanwhile) leaves the
        archive as it was. ``assertions`` and ``withdrawals`` are iterated
        once, inside the transaction. Records are checked and written a page
        (:data:`IMPORT_PAGE`) at a time, a few statements a page whatever its
        size, and the first bad record of a page is the one named. Memory
        grows with the distinct blobs and the days touched, not with the names.

        ``gapless`` (the default) refuses an import that leaves gaps in a day's
        serials or a document's versions; a mirror's (:mod:`pdi.archive.mirroring`)
        may leave them, holding only what its origin lets it read, and never
        minting in the series.

        A representation new here of a version withdrawn here, or of a document withdrawn whole here (a new
        version too), is refused (:class:`~pdi.errors.WithdrawnError`): a tombstone covers every format of its
        version, one added after it too, as a deposit's does (:func:`~pdi.archive.catalog.base.withdrawn_version`).
        Tombstones the import itself brings cover the formats it brings with them. So is one whose octets (by
        SHA-256) a version of its document withdrawn alone here holds, unless ``force``: it would serve them
        again under another name, which a deposit refuses too (:func:`~pdi.archive.catalog.base.withdrawn_holding`,
        forceable). A mirror's sync (:mod:`pdi.archive.mirroring`) leaves such names out first
        (:meth:`withdrawn_over`): its operator's withdrawal (a court's order where the mirror is) holds against
        what its origin serves.

        ``access_changes`` date documents by the last change of access that changed what a reader without access
        is shown of them (schema 21, :attr:`~pdi.archive.store.DocumentStamp.access_changed_at`), as the archive
        exported from dated them; a later one held here is kept.

        ``rules`` gives how many changes of its access rules each series had where it was exported: a series that
        counts fewer here is given as many (its row's count set so: schema step 27), so that a page of it signs
        no fewer than its origin signed before the move, which the origin's mirrors would refuse as an older page
        replayed (:mod:`pdi.network.mirror_access`). Then one more change of each series the import changes the
        rules of: one it registers that is not public, or one an embargo of which it sets otherwise than held.
        """
        with self._read():  # refuse bad imports before staging any blob
            known = {str(r[0]) for r in self._query("SELECT name FROM series")}
            known |= {s.name for s in series}
            for s in series:
                if s.parent is not None and s.parent not in known:
                    raise NotFoundError(f"parent series {s.parent} of {s.name} is not in the import")
            for page in pages(rec for rec, _ in representations):
                self._check_import(page, known, force)
        staged, durability = self._stage_import(
            (rec.sha256, content) for rec, content in representations if rec.purged is None
        )
        try:
            # the statements run while the blobs are made durable (one sync, begun by the staging): the commit
            # waits for it, so that no name is committed before its blob's octets and folder entry are durable
            added = self._import_staged(series, representations, assertions, audit, staged, withdrawals,
                                        embargoes, new_document, gapless, force, access_changes,
                                        rules or {}, before_commit=durability.wait)
        except BaseException:
            with cleaning_up_after_failure():
                try:
                    durability.wait()  # (joined before its files are removed; what it raised is raised already)
                finally:
                    discard_all(staged)
            raise
        release_all(staged)
        return added

    def _import_staged(
        self,
        series: Sequence[SeriesRecord],
        representations: Iterable[tuple[RepresentationRecord, BlobSource]],
        assertions: Iterable[tuple[DocumentKey, AssertionRecord]],
        audit: Iterable[AuditRecord],
        staged: Sequence[StagedBlob],
        withdrawals: Iterable[WithdrawalRecord] = (),
        embargoes: Sequence[tuple[DocumentKey, int | None, str]] = (),
        new_document: Callable[[RepresentationRecord], AuditRecord] | None = None,
        gapless: bool = True,
        force: bool = False,
        access_changes: Sequence[tuple[DocumentKey, str]] = (),
        rules: Mapping[str, int] | None = None,
        *,
        before_commit: Callable[[], None] = lambda: None,
    ) -> list[RepresentationRecord]:
        added: list[RepresentationRecord] = []
        written = _ImportWritten({blob.info.sha256: blob for blob in staged})
        with self._write():
            # the rows of the series held here that it names first, in order, before any document: it may count a
            # change of their rules on them at its end, and a change of a series' access or an embargo holds the
            # series' row before its documents too (the other order waited on them while they waited on it, and
            # PostgreSQL refused one: "deadlock detected")
            for names in pages(sorted({s.name for s in series}) if self.for_no_key_update else [], MAX_PARAMETERS):
                self._query(f"SELECT name FROM series WHERE name IN ({', '.join('?' * len(names))}) ORDER BY name"
                            + self.for_no_key_update, names)
            self._secure(staged)
            changed: set[str] = set()  # the series whose rules this import changes (schema step 25)
            for s in sorted(series, key=lambda s: (s.name.count("."), s.name)):
                existing = self._query("SELECT parent FROM series WHERE name = ?", (s.name,))
                if not existing:
                    self._insert_series(s)
                    if s.access != "public":
                        changed.add(s.name)
            known = {str(r[0]) for r in self._query("SELECT name FROM series")}
            for page in pages(rec for rec, _ in representations):
                added += self._import_page(page, known, written, new_document, force)
            if gapless:
                self._check_numbering(written.days)
            for entry in audit:
                self._insert_audit(entry)
            for statements in pages(assertions):
                self._import_statements(statements)
            for tombstones in pages(withdrawals):
                self._import_withdrawals(tombstones)
            for key, version, until in embargoes:
                target = self._document_id(key)
                if target is None:
                    raise NotFoundError(f"embargo of {describe_key(key)}: no such document")
                # (an embargo held here already as the bag says it changes nothing: not counted)
                if version is None:
                    moved = self._query("UPDATE documents SET embargo_until = ? WHERE id = ? AND (embargo_until IS NULL"
                                        " OR embargo_until <> ?) RETURNING id", (until, target, until))
                else:
                    moved = self._query("UPDATE versions SET embargo_until = ? WHERE document = ? AND version = ?"
                                        " AND (embargo_until IS NULL OR embargo_until <> ?) RETURNING document",
                                        (until, target, version, until))
                if moved:
                    changed.add(key.series)
            for key, at in access_changes:
                target = self._document_id(key)
                if target is None:
                    raise NotFoundError(f"change of access of {describe_key(key)}: no such document")
                self._query("UPDATE documents SET access_changed_at = ? WHERE id = ?"
                            " AND (access_changed_at IS NULL OR access_changed_at < ?)", (at, target, at))
            at = timestamp()
            # as many changes of each series' rules as where it was exported, at least (schema step 27): a count
            # raised meanwhile by another writer's commit is never lowered, the row's own count compared as it is
            # written (PostgreSQL's READ COMMITTED reads it again once that writer's lock is let go), not as read
            for name, count in sorted((rules or {}).items()):
                if count > 0:
                    self._query("UPDATE series SET rules_changes = ? WHERE name = ? AND rules_changes < ?",
                                (count, name, count))
            if changed:  # one change of each series' rules (schema steps 25 and 27), at one time
                for name in sorted(changed):
                    self._query("INSERT INTO access_changes (at, series) VALUES (?, ?)", (at, name))
                    self._query(RULE_CHANGED, (name,))
            before_commit()  # the blobs durable (their sync, begun as they were staged, waited for)
        return added

    def digests_held(self, names: Sequence[tuple[DocumentKey, int, str]]) -> dict[tuple[DocumentKey, int, str], str]:
        """The SHA-256 the catalog holds under each of ``names`` (a document, a version, a format token) that it
        holds (purged or withdrawn too): what :meth:`representations` says of each, asked a page at a time."""
        held: dict[tuple[DocumentKey, int, str], str] = {}
        with self._read():
            for page in pages(list(dict.fromkeys(names)), MAX_PARAMETERS // 4):
                ids = self._document_ids(list(dict.fromkeys(key for key, _, _ in page)))
                stored, _ = self._stored_of(ids.values(), versions_too=False)
                for key, version, token in page:
                    doc = ids.get(key)
                    sha256 = None if doc is None else stored.get((doc, version, token))
                    if sha256 is not None:
                        held[(key, version, token)] = sha256
        return held

    def _document_ids(self, keys: Sequence[DocumentKey]) -> dict[DocumentKey, int]:
        """The catalog's id of each of ``keys`` that is a document in it."""
        found: dict[DocumentKey, int] = {}
        for chunk in pages(keys, MAX_PARAMETERS // 4):
            relation, params = self._rows(
                ("int", "text", "text", "text"),
                [(i, key.series, key.day.isoformat(), key.unique_id) for i, key in enumerate(chunk)],
            )
            rows = self._query(
                "SELECT k.column1, (SELECT d.id FROM documents d WHERE d.series = k.column2"
                f" AND d.day = k.column3 AND d.unique_id = k.column4) FROM {relation}",
                params,
            )
            found.update({chunk[int(i)]: int(doc) for i, doc in rows if doc is not None})
        return found

    def _stored_of(
        self, documents: Iterable[int], *, versions_too: bool = True
    ) -> tuple[dict[tuple[int, int, str], str], set[tuple[int, int]]]:
        """The representations (their SHA-256) and (``versions_too``) the versions the catalog holds of ``documents``."""
        ids = sorted(set(documents))
        reps: dict[tuple[int, int, str], str] = {}
        versions: set[tuple[int, int]] = set()
        for chunk in pages(ids, MAX_PARAMETERS):
            relation, params = self._rows(("bigint",), [(doc,) for doc in chunk])
            for doc, version, format, sha256 in self._query(
                "SELECT document, version, format, sha256 FROM representations"
                f" WHERE document IN (SELECT column1 FROM {relation})", params,
            ):
                reps[(int(doc), int(version), str(format))] = str(sha256)
            if versions_too:
                versions |= {(int(d), int(v)) for d, v in self._query(
                    f"SELECT document, version FROM versions WHERE document IN (SELECT column1 FROM {relation})", params,
                )}
        return reps, versions

    def _check_import(self, page: Sequence[RepresentationRecord], known: set[str], force: bool) -> None:
        """Before anything is staged: each record's series is known, its name holds no other bytes here, and a
        record new here is of no version withdrawn here nor (unless ``force``) holds a withdrawn version's octets."""
        ids = self._document_ids(list(dict.fromkeys(key_of(rec) for rec in page)))
        stored, _ = self._stored_of(ids.values(), versions_too=False)
        gone = self._tombstones_of(ids.values())
        for rec in page:
            if rec.series not in known:
                raise NotFoundError(f"series {rec.series} is not in the import")
            doc = ids.get(key_of(rec))
            sha256 = None if doc is None else stored.get((doc, rec.version, rec.format))
            if sha256 is not None and sha256 != rec.sha256:
                raise _import_conflict(rec)
            if sha256 is None and doc is not None:
                _not_into_withdrawn(rec, doc, gone, stored, force)

    def withdrawn_over(
        self, wanted: Sequence[tuple[DocumentKey, int, str]]
    ) -> list[tuple[WithdrawalRecord, int] | None]:
        """For each (document, version, SHA-256) of ``wanted``, what an import of it would be refused for here: the
        first tombstone over its version (its document's, withdrawn whole, first) or, else, over a version of its
        document withdrawn alone that holds those octets (the newest such), with that version; ``None`` when
        neither. The rules of :meth:`import_all`, asked before anything is fetched (a mirror's sync)."""
        found: list[tuple[WithdrawalRecord, int] | None] = []
        with self._read():
            for page in pages(list(wanted), MAX_PARAMETERS // 4):
                ids = self._document_ids(list(dict.fromkeys(key for key, _, _ in page)))
                gone = self._tombstones_of(ids.values())
                stored, _ = self._stored_of(ids.values(), versions_too=False)
                for key, version, sha256 in page:
                    doc = ids.get(key)
                    over = None if doc is None else _withdrawn_over(doc, version, sha256, gone, stored)
                    if over is None:
                        found.append(None)
                        continue
                    (at, reason, who, purged), over_version = over
                    found.append((WithdrawalRecord(key, over_version, reason, who, at, purged=purged),
                                  version if over_version is None else over_version))
        return found

    def _tombstones_of(self, documents: Iterable[int]) -> dict[tuple[int, int | None], tuple[str, str, str, bool]]:
        """The first tombstone (at, reason, who, purged) of each of ``documents`` withdrawn whole (version ``None``)
        and of each of their versions withdrawn alone, held here."""
        gone: dict[tuple[int, int | None], tuple[str, str, str, bool]] = {}
        for chunk in pages(sorted(set(documents)), MAX_PARAMETERS):
            relation, params = self._rows(("bigint",), [(doc,) for doc in chunk])
            for doc, version, at, reason, who, purged in self._query(
                "SELECT document, version, at, reason, who, purged FROM withdrawals"
                f" WHERE document IN (SELECT column1 FROM {relation}) ORDER BY id", params,
            ):
                gone.setdefault((int(doc), None if version is None else int(version)),
                                (str(at), str(reason), str(who), bool(purged)))
        return gone

    def _import_page(
        self,
        page: Sequence[RepresentationRecord],
        known: set[str],
        written: _ImportWritten,
        new_document: Callable[[RepresentationRecord], AuditRecord] | None,
        force: bool,
    ) -> list[RepresentationRecord]:
        """Inside the import's transaction: write one page of representations; those that are new."""
        ids = self._document_ids(list(dict.fromkeys(key_of(rec) for rec in page)))
        stored, versions = self._stored_of(ids.values())
        # asked again in the write transaction: a withdrawal committed since the check refuses the import too
        gone = self._tombstones_of(ids.values())
        documents: dict[DocumentKey, RepresentationRecord] = {}  # new, each with its first record
        new_versions: dict[tuple[DocumentKey, int], str] = {}
        in_page: dict[tuple[DocumentKey, int, str], str] = {}
        new: list[RepresentationRecord] = []
        new_keys: list[DocumentKey] = []  # each new record's key, as the loop made it (not made again below)
        for rec in page:
            if rec.series not in known:
                raise NotFoundError(f"series {rec.series} is not in the import")
            key = key_of(rec)
            written.days.add((rec.series, rec.day.isoformat()))
            doc = ids.get(key)
            if doc is None:
                documents.setdefault(key, rec)
            if (doc is None or (doc, rec.version) not in versions) and (key, rec.version) not in new_versions:
                new_versions[(key, rec.version)] = rec.created_at
            name = (key, rec.version, rec.format)
            sha256 = in_page.get(name) or (None if doc is None else stored.get((doc, rec.version, rec.format)))
            if sha256 is not None:
                if sha256 != rec.sha256:
                    raise _import_conflict(rec)
                continue
            if doc is not None:
                _not_into_withdrawn(rec, doc, gone, stored, force)
            in_page[name] = rec.sha256
            new.append(rec)
            new_keys.append(key)
        if documents:
            self._insert_documents(list(documents.values()), ids, new_document)
        self._insert_rows(
            "INSERT INTO versions (document, version, created_at)", ("bigint", "int", "text"),
            [(ids[key], version, at) for (key, version), at in new_versions.items()],
        )
        blobs = list(dict.fromkeys(rec.sha256 for rec in new if rec.purged is None and rec.sha256 not in written.blobs))
        self._store_blobs([written.staged[sha256] for sha256 in blobs])
        written.blobs.update(blobs)
        self._insert_rows(
            "INSERT INTO representations (document, version, format, media_type, charset, line_ending,"
            " sha256, size, created_at, stored, purged)",
            ("bigint", "int", "text", "text", "text", "text", "text", "bigint", "text", "text", "text"),
            [(ids[key], rec.version, rec.format, rec.media_type, rec.charset, rec.line_ending,
              rec.sha256, rec.size, rec.created_at, rec.stored, rec.purged) for rec, key in zip(new, new_keys, strict=True)],
        )
        latest: dict[tuple[str, str], str] = {}
        for rec in new:
            day = (rec.series, rec.day.isoformat())
            latest[day] = max(latest.get(day, rec.created_at), rec.created_at)
        if latest:
            self._executemany(
                "UPDATE document_days SET last_deposit = ? WHERE (last_deposit IS NULL OR last_deposit < ?)"
                " AND series = ? AND day = ?",
                [(at, at, series, day) for (series, day), at in latest.items()],
            )
        for rec in new:
            source = (rec.sha256, rec.media_type, rec.charset)
            if rec.purged is None and source not in written.indexed:
                self._index_stored(*source, size=rec.size, at=rec.created_at)
                written.indexed.add(source)
                if rec.media_type == "message/rfc822":
                    self._thread_stored(rec.sha256)
        return new

    def _insert_documents(
        self,
        firsts: Sequence[RepresentationRecord],
        ids: dict[DocumentKey, int],
        new_document: Callable[[RepresentationRecord], AuditRecord] | None,
    ) -> None:
        """New documents (each from its first record), their days' counts and serial counters, and their audit entries."""
        rows = self._insert_rows(
            "INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)",
            ("text", "text", "int", "int", "int", "text", "int", "text"),
            [(r.series, r.day.isoformat(), r.day.year, r.day.month, r.day.day, r.unique_id, r.serial, r.created_at)
             for r in firsts],
            " RETURNING id, series, day, unique_id",
        )
        ids.update({DocumentKey(str(s), datetime.date.fromisoformat(str(d)), str(u)): int(i) for i, s, d, u in rows})
        counts: dict[tuple[str, str], int] = {}
        serials: dict[tuple[str, str], int] = {}
        for r in firsts:
            day = (r.series, r.day.isoformat())
            counts[day] = counts.get(day, 0) + 1
            if r.serial is not None:
                serials[day] = max(serials.get(day, 0), r.serial)
        self._insert_rows(
            "INSERT INTO document_days (series, day, documents)", ("text", "text", "bigint"),
            [(series, day, n) for (series, day), n in counts.items()],
            " ON CONFLICT (series, day) DO UPDATE SET documents = document_days.documents + excluded.documents",
        )
        self._insert_rows(
            "INSERT INTO daily_serials (series, day, last)", ("text", "text", "int"),
            [(series, day, last) for (series, day), last in serials.items()],
            " ON CONFLICT (series, day) DO UPDATE SET last = CASE WHEN daily_serials.last > excluded.last"
            " THEN daily_serials.last ELSE excluded.last END",
        )
        if new_document is not None:
            self._insert_rows(
                "INSERT INTO audit_log (at, who, action, subject, detail, address)", ("text",) * 6,
                [(e.at, e.who, e.action, e.subject, e.detail, e.address) for e in map(new_document, firsts)],
            )

    def _import_statements(self, page: Sequence[tuple[DocumentKey, AssertionRecord]]) -> None:
        """Inside the import's transaction: one page of statements, each unless the catalog holds it already."""
        subjects = sorted({a.subject for _, a in page})
        held: set[tuple[str, str, str, str, str]] = set()
        for chunk in pages(subjects, MAX_PARAMETERS):
            relation, params = self._rows(("text",), [(subject,) for subject in chunk])
            held |= {(str(s), str(k), str(v), str(w), str(t)) for s, k, v, w, t in self._query(
                f"SELECT subject, key, value, who, at FROM assertions WHERE subject IN (SELECT column1 FROM {relation})",
                params,
            )}
        ids = self._document_ids(list(dict.fromkeys(about for about, _ in page)))
        rows: list[tuple[Any, ...]] = []
        for about, a in page:
            statement = (a.subject, a.key, a.value, a.who, a.at)
            if statement in held:
                continue
            target = ids.get(about)
            if target is None:
                raise NotFoundError(f"assertion about {a.subject}: no such document")
            held.add(statement)
            rows.append((target, *statement))
        self._insert_rows("INSERT INTO assertions (document, subject, key, value, who, at)",
                          ("bigint", "text", "text", "text", "text", "text"), rows)

    def _import_withdrawals(self, page: Sequence[WithdrawalRecord]) -> None:
        """Inside the import's transaction: one page of tombstones, each unless the catalog holds it already."""
        ids = self._document_ids(list(dict.fromkeys(w.key for w in page)))
        held: set[tuple[int, int | None, str]] = set()
        for chunk in pages(sorted(set(ids.values())), MAX_PARAMETERS):
            relation, params = self._rows(("bigint",), [(doc,) for doc in chunk])
            held |= {(int(d), None if v is None else int(v), str(at)) for d, v, at in self._query(
                f"SELECT document, version, at FROM withdrawals WHERE document IN (SELECT column1 FROM {relation})",
                params,
            )}
        rows: list[tuple[Any, ...]] = []
        for w in page:
            target = ids.get(w.key)
            if target is None:
                raise NotFoundError(f"withdrawal of {describe_key(w.key)}: no such document")
            if (target, w.version, w.at) in held:
                continue
            held.add((target, w.version, w.at))
            rows.append((target, w.version, w.reason, w.who, w.at, 1 if w.purged else 0))
        self._insert_rows("INSERT INTO withdrawals (document, version, reason, who, at, purged)",
                          ("bigint", "int", "text", "text", "text", "int"), rows)

    def _check_numbering(self, days: Iterable[tuple[str, str]]) -> None:
        """Inside an import's transaction: serials still run 1..n on every ``(series, day)`` it touched, and versions 1..n.

        A bag may not bring serial 999 to a day with 3 (2..998 would never
        exist and the next mint would be 1000), nor version 5 of a document
        with 2: minting never leaves gaps, and neither may an import. Asked
        of the catalog with the import's rows in it, :data:`NUMBERING_DAYS`
        days a statement (a row a day comes back, and the days with a gap in
        some document's versions), so the check holds no more than that
        whatever the import's size; the first day in order with a gap is the
        one named, its serials before its versions.
        """
        ordered = sorted(days)
        for batch in pages(ordered, NUMBERING_DAYS):
            values, params = self._rows(("text", "text"), batch)
            serials = {
                (str(series), str(day)): (int(count), low, high)
                for series, day, count, low, high in self._query(
                    "SELECT d.series, d.day, COUNT(DISTINCT d.serial), MIN(d.serial), MAX(d.serial)"
                    f" FROM {values} JOIN documents d ON d.series = k.column1 AND d.day = k.column2"
                    " WHERE d.serial IS NOT NULL GROUP BY d.series, d.day",
                    params,
                )
            }
            gaps = {(str(series), str(day)) for series, day in self._query(
                "SELECT DISTINCT g.series, g.day FROM (SELECT d.series, d.day"
                f" FROM {values} JOIN documents d ON d.series = k.column1 AND d.day = k.column2"
                " JOIN versions v ON v.document = d.id GROUP BY d.id, d.series, d.day"
                " HAVING MIN(v.version) <> 1 OR MAX(v.version) <> COUNT(DISTINCT v.version)) g",
                params,
            )}
            for series, day in batch:
                count, low, high = serials.get((series, day), (0, None, None))
                if count and (low != 1 or high != count):
                    raise ParseError(
                        f"the import would leave gaps in the serials of {series} on {day}:"
                        f" {count} serials numbered {low} to {high}"
                        " (serials run 1..n without gaps)",
                        rule="catalog",
                    )
                if (series, day) in gaps:
                    self._version_gap(series, day)

    def _version_gap(self, series: str, day: str) -> None:
        """Raise the gap in the versions of the first document of ``series`` on ``day`` that has one."""
        gaps = self._query(
            "SELECT d.unique_id, COUNT(DISTINCT v.version), MIN(v.version), MAX(v.version)"
            " FROM documents d JOIN versions v ON v.document = d.id"
            " WHERE d.series = ? AND d.day = ?"
            " GROUP BY d.id, d.unique_id"
            " HAVING MIN(v.version) <> 1 OR MAX(v.version) <> COUNT(DISTINCT v.version)"
            " ORDER BY d.unique_id LIMIT 1",
            (series, day),
        )
        if gaps:
            unique_id, count, low, high = gaps[0]
            key = DocumentKey(series, datetime.date.fromisoformat(day), str(unique_id))
            raise ParseError(
                f"the import would leave gaps in the versions of {describe_key(key)}:"
                f" {plural(count, 'version')} numbered {low} to {high}",
                rule="catalog",
            )


def _withdrawn_over(
    doc: int, version: int, sha256: str, gone: dict[tuple[int, int | None], tuple[str, str, str, bool]],
    stored: dict[tuple[int, int, str], str],
) -> tuple[tuple[str, str, str, bool], int | None] | None:
    """The tombstone (at, reason, who, purged) that refuses a format new here of ``version`` of ``doc`` holding
    ``sha256``, and the version it is over (``None``: the document, withdrawn whole): its document's, its
    version's, else the newest version of ``doc`` withdrawn alone that holds those octets."""
    whole = gone.get((doc, None))
    if whole is not None:
        return whole, None
    own = gone.get((doc, version))
    if own is not None:
        return own, version
    holding = sorted((v for (d, v, _), held in stored.items() if d == doc and held == sha256 and (doc, v) in gone),
                     reverse=True)
    return (gone[(doc, holding[0])], holding[0]) if holding else None


def _not_into_withdrawn(rec: RepresentationRecord, doc: int,
                        gone: dict[tuple[int, int | None], tuple[str, str, str, bool]],
                        stored: dict[tuple[int, int, str], str], force: bool = False) -> None:
    """Refuse ``rec``, new here, when its version (``doc``'s) or its whole document was withdrawn here, or (unless
    ``force``) a version of its document withdrawn alone holds its octets: named as a deposit names its refusal
    (:func:`withdrawn_version`, :func:`withdrawn_whole`, :func:`withdrawn_holding`), after the record it was."""
    from pdi.archive.naming import versioned_name

    key = key_of(rec)
    brought = f"format {rec.format} of version {rec.version} of {describe_key(key)}, in the import: "
    whole = gone.get((doc, None))
    if whole is not None:
        at, reason, who, purged = whole
        raise withdrawn_whole(key, at, reason, who, purged, added="a format or a version imported",
                              done="imported").within(brought)
    alone = gone.get((doc, rec.version))
    if alone is not None:
        at, reason, who, purged = alone
        held = sorted(f for (d, v, f) in stored if d == doc and v == rec.version)
        names = ", ".join(versioned_name(key, f, rec.version) for f in held)
        raise withdrawn_version(names, at, reason, who, purged, added="imported", done="imported").within(brought)
    over = None if force else _withdrawn_over(doc, rec.version, rec.sha256, gone, stored)
    if over is not None:
        (at, reason, _, purged), version = over
        assert version is not None  # its document's tombstone was said above
        formats = sorted(f for (d, v, f), held in stored.items() if d == doc and v == version and held == rec.sha256)
        names = ", ".join(versioned_name(key, f, version) for f in formats)
        refused = withdrawn_holding(names, at, reason, purged, done="imported").within(brought)
        refused.forceable = True
        raise refused


def _import_conflict(rec: RepresentationRecord) -> ImmutabilityError:
    return ImmutabilityError(
        f"format {rec.format} of version {rec.version} of {describe_key(key_of(rec))}"
        " is already in this archive with other bytes; nothing was imported"
    )


@dataclass
class _ImportWritten:
    """What an import's transaction has written so far, beyond its rows: each grows with the blobs or the days, not the names."""

    staged: dict[str, StagedBlob]
    blobs: set[str] = field(default_factory=set)  # recorded (_store_blob) once each
    indexed: set[tuple[str, str, str | None]] = field(default_factory=set)  # full-text sources looked at once each
    days: set[tuple[str, str]] = field(default_factory=set)  # (series, day) for the numbering check
