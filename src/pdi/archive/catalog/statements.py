"""Statements about names: assertions, kept Web Annotations (pdi.archive.kept_annotations), the audit log."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pdi.archive.catalog.base import (
    PAGE_ROWS,
    CatalogBase,
    SearchAccess,
    describe_key,
)
from pdi.archive.catalog.rows import (
    assertion_record,
)
from pdi.archive.store import (
    AnnotationRecord,
    AssertionRecord,
    AuditRecord,
    DocumentKey,
)
from pdi.errors import ImmutabilityError, NotFoundError


class StatementsPart(CatalogBase):
    """Assertions, annotations and the audit log: what is said about documents, and what was done."""

    def add_annotation(
        self, slug: str | None, fallback: str, data: str, targets: Sequence[tuple[DocumentKey, int | None]],
        who: str, at: str, *, address: str | None = None, check: Callable[[], None] | None = None,
    ) -> AnnotationRecord:
        """Keep a new annotation as ``slug`` (``None``, or a slug taken, deleted or not: as ``fallback``), audited.

        The slug is claimed by the insert itself (``ON CONFLICT DO NOTHING``), so two writers asking for
        one slug at once never both get it, on either database. ``check`` (a client's precondition on the
        container, raising to refuse) runs first in the same write transaction, after every other create with a
        ``check`` has ended (:meth:`_lock_annotation_creates`): what it read is what the insert follows.
        """
        with self._write():
            if check is not None:
                self._lock_annotation_creates()
                check()
            documents = self._annotation_documents(targets)
            chosen = None
            for name in ([slug] if slug is not None else []) + [fallback]:
                rows = self._query(
                    "INSERT INTO annotations (slug, data, revision, created_at, created_by) VALUES (?, ?, 1, ?, ?)"
                    " ON CONFLICT (slug) DO NOTHING RETURNING id",
                    (name, data, at, who),
                )
                if rows:
                    chosen = (name, int(rows[0][0]))
                    break
            if chosen is None:
                raise ImmutabilityError(f"the annotation name {fallback!r} is taken")
            self._insert_annotation_targets(chosen[1], documents)
            self._insert_audit(AuditRecord(at, who, "annotation-create", f"annotation:{chosen[0]}", "", address))
            found = self._annotation(chosen[0])
        assert found is not None
        return found

    def _annotation_documents(self, targets: Sequence[tuple[DocumentKey, int | None]]) -> list[tuple[int, int | None]]:
        """The catalog ids of the documents ``targets`` name, each with its version; each must exist."""
        found = []
        for key, version in dict.fromkeys(targets):
            doc = self._document_id(key)
            if doc is None:
                raise NotFoundError(f"no document {describe_key(key)} in the archive")
            found.append((doc, version))
        return found

    def _insert_annotation_targets(self, annotation: int, documents: Sequence[tuple[int, int | None]]) -> None:
        for doc, version in documents:
            self._query("INSERT INTO annotation_targets (annotation, document, version) VALUES (?, ?, ?)",
                        (annotation, doc, version))

    def _annotation(self, slug: str) -> AnnotationRecord | None:
        rows = self._query(
            "SELECT id, slug, data, revision, created_at, created_by, modified_at, deleted_at FROM annotations"
            " WHERE slug = ?", (slug,),
        )
        if not rows:
            return None
        return self._annotation_records(rows)[0]

    def _annotation_records(self, rows: Sequence[Sequence[Any]]) -> list[AnnotationRecord]:
        """Records of ``annotations`` rows (id first), with their targets (one statement for all of them)."""
        targets: dict[int, list[tuple[DocumentKey, int | None]]] = {}
        if rows:
            ids = [int(r[0]) for r in rows]
            found = self._query(
                "SELECT t.annotation, d.series, d.day, d.unique_id, t.version FROM annotation_targets t"
                f" JOIN documents d ON d.id = t.document WHERE t.annotation IN ({', '.join('?' * len(ids))})"
                " ORDER BY t.annotation, d.id, t.version",
                ids,
            )
            for a, series, day, unique_id, version in found:
                targets.setdefault(int(a), []).append(
                    (DocumentKey(str(series), datetime.date.fromisoformat(str(day)), str(unique_id)),
                     None if version is None else int(version)))
        return [
            AnnotationRecord(str(r[1]), str(r[2]), int(r[3]), str(r[4]), str(r[5]),
                             None if r[6] is None else str(r[6]), None if r[7] is None else str(r[7]),
                             tuple(targets.get(int(r[0]), ())))
            for r in rows
        ]

    def annotation(self, slug: str) -> AnnotationRecord | None:
        """The annotation kept as ``slug`` (a deleted one too, with when), or ``None``."""
        with self._read():
            return self._annotation(slug)

    def replace_annotation(
        self, slug: str, revision: int, data: str, targets: Sequence[tuple[DocumentKey, int | None]],
        who: str, at: str, *, address: str | None = None,
    ) -> AnnotationRecord | None:
        """Replace the state of ``slug`` if it is still at ``revision`` (``None``: it is not), audited."""
        with self._write():
            documents = self._annotation_documents(targets)
            rows = self._query(
                "UPDATE annotations SET data = ?, revision = revision + 1, modified_at = ?"
                " WHERE slug = ? AND revision = ? AND deleted_at IS NULL RETURNING id",
                (data, at, slug, revision),
            )
            if not rows:
                return None
            self._query("DELETE FROM annotation_targets WHERE annotation = ?", (rows[0][0],))
            self._insert_annotation_targets(int(rows[0][0]), documents)
            self._insert_audit(AuditRecord(at, who, "annotation-update", f"annotation:{slug}", "", address))
            return self._annotation(slug)

    def delete_annotation(self, slug: str, revision: int, who: str, at: str, *, address: str | None = None) -> bool:
        """Delete ``slug`` if it is still at ``revision`` (its row, name and targets are kept, marked deleted), audited."""
        with self._write():
            rows = self._query(
                "UPDATE annotations SET deleted_at = ? WHERE slug = ? AND revision = ? AND deleted_at IS NULL"
                " RETURNING id",
                (at, slug, revision),
            )
            if not rows:
                return False
            # its targets stay: who may not read them is not told even that it was deleted
            self._insert_audit(AuditRecord(at, who, "annotation-delete", f"annotation:{slug}", "", address))
        return True

    def annotation_page(
        self, access: SearchAccess | None, offset: int, limit: int
    ) -> tuple[int, list[AnnotationRecord]]:
        """How many annotations ``access`` lets a reader see, and ``limit`` of them from ``offset``, oldest first.

        An annotation is left out when any document it targets is one the
        reader may not read: of a series it may not read, or embargoed (the
        document or the version targeted) outside the series it may read.
        """
        where = "a.deleted_at IS NULL"
        params: list[Any] = []
        if access is not None:
            refused = []
            if access.excluded:
                refused.append(f"d.series IN ({', '.join('?' * len(access.excluded))})")
                params += access.excluded
            exempt = f"d.series NOT IN ({', '.join('?' * len(access.readable))}) AND " if access.readable else ""
            refused.append(f"({exempt}(d.embargo_until > ? OR v.embargo_until > ?))")
            params += [*access.readable, access.now, access.now]
            where += (
                " AND NOT EXISTS (SELECT 1 FROM annotation_targets t JOIN documents d ON d.id = t.document"
                " LEFT JOIN versions v ON v.document = t.document AND v.version = t.version"
                f" WHERE t.annotation = a.id AND ({' OR '.join(refused)}))"
            )
        with self._read():
            total = int(self._query(f"SELECT COUNT(*) FROM annotations a WHERE {where}", params)[0][0])
            rows = self._query(
                "SELECT a.id, a.slug, a.data, a.revision, a.created_at, a.created_by, a.modified_at, a.deleted_at"
                f" FROM annotations a WHERE {where} ORDER BY a.id LIMIT ? OFFSET ?",
                [*params, limit, offset],
            )
            return total, self._annotation_records(rows)

    def add_assertion(
        self, key: DocumentKey, subject: str, name: str, value: str, who: str, at: str,
        *, address: str | None = None, audited: bool = False,
    ) -> AssertionRecord:
        with self._write():
            doc = self._document_id(key)
            if doc is None:
                raise NotFoundError(f"no document {describe_key(key)} in the archive")
            rows = self._query(
                "INSERT INTO assertions (document, subject, key, value, who, at)"
                " VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (doc, subject, name, value, who, at),
            )
            if audited:
                self._insert_audit(AuditRecord(at, who, "statement", subject, name, address))
        return AssertionRecord(int(rows[0][0]), subject, name, value, who, at)

    def add_assertions(
        self, key: DocumentKey, subject: str, pairs: Sequence[tuple[str, str]], who: str, at: str,
    ) -> list[AssertionRecord]:
        """Several statements about one subject, in one transaction (all or none), in the order given."""
        with self._write():
            return self._insert_assertions(key, subject, pairs, who, at)

    def _insert_assertions(
        self, key: DocumentKey, subject: str, pairs: Sequence[tuple[str, str]], who: str, at: str,
    ) -> list[AssertionRecord]:
        """Inside a write transaction: :meth:`add_assertions`' rows (a batch's statements, with its deposits)."""
        records: list[AssertionRecord] = []
        doc = self._document_id(key)
        if doc is None:
            raise NotFoundError(f"no document {describe_key(key)} in the archive")
        for name, value in pairs:
            rows = self._query(
                "INSERT INTO assertions (document, subject, key, value, who, at)"
                " VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (doc, subject, name, value, who, at),
            )
            records.append(AssertionRecord(int(rows[0][0]), subject, name, value, who, at))
        return records

    def iter_assertions(self, *, page: int = PAGE_ROWS) -> Iterator[AssertionRecord]:
        """Every statement, oldest first, read a page at a time (keyset on the id)."""
        after = -1
        while True:
            with self._read():
                rows = self._query(
                    "SELECT id, subject, key, value, who, at FROM assertions WHERE id > ?"
                    " ORDER BY id LIMIT ?",
                    (after, page),
                )
            for row in rows:
                yield assertion_record(row)
            if len(rows) < page:
                return
            after = int(rows[-1][0])

    def assertions(self, subject: str | None = None) -> list[AssertionRecord]:
        sql = "SELECT id, subject, key, value, who, at FROM assertions"
        params: list[Any] = []
        if subject is not None:
            sql += " WHERE subject = ?"
            params.append(subject)
        with self._read():
            rows = self._query(sql + " ORDER BY id", params)
        return [assertion_record(r) for r in rows]

    def audit_log(self, after: int = 0, limit: int = 1000) -> list[AuditRecord]:
        """Audit entries with ids above ``after``, oldest first (a keyset page of at most ``limit``)."""
        with self._read():
            rows = self._query(
                "SELECT id, at, who, action, subject, detail, address FROM audit_log"
                " WHERE id > ? ORDER BY id LIMIT ?",
                (after, limit),
            )
        return [
            AuditRecord(str(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5]),
                        None if r[6] is None else str(r[6]), int(r[0]))
            for r in rows
        ]
