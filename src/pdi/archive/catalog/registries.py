"""The newest registry each ``pdi serve --registry`` source was issued, as the resolvers sharing the catalog saw it
(schema step 26): one row a source, ``registries_seen``.

A row is written by one statement that never puts an older time over a
newer one (``INSERT … ON CONFLICT DO UPDATE … WHERE`` the time is later),
whatever another worker or resolver writes at once: on SQLite writers take
turns; on PostgreSQL the statement waits on the row another is writing and
reads its ``WHERE`` again on what that one committed. The one exception is
a time far ahead of the clock (a registry signed by a clock years ahead),
which the caller names (``beyond``): it holds nothing back, and the next
registry loaded takes its place.
"""

from __future__ import annotations

from pdi.archive.catalog.base import CatalogBase
from pdi.archive.store import AuditRecord
from pdi.errors import ReadOnlyArchiveError, StoreError

__all__ = ["RegistriesPart"]

#: PostgreSQL's SQLSTATE for a write in a read-only transaction: a hot standby's, or a role's
#: ``default_transaction_read_only``.
_READ_ONLY_SQL_TRANSACTION = "25006"


class RegistriesPart(CatalogBase):
    """The ``registries_seen`` table."""

    def see_registry(self, source: str, issued: str, order: str, seen_at: str, beyond: str) -> tuple[str, str]:
        """Record that a registry of ``source`` issued ``issued`` (``order``: the same time, written so that text
        order is time order) was loaded at ``seen_at``, unless one issued later was recorded, and that one is not
        past ``beyond`` (far ahead of the clock); the newest recorded now, ``(issued, order)``, in the same
        transaction. A :class:`~pdi.errors.ReadOnlyArchiveError` when this process may only read the catalog."""
        self.refuse_if_read_only()
        try:
            with self._write():
                self._query(
                    "INSERT INTO registries_seen (source, issued, issued_order, seen_at) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (source) DO UPDATE SET issued = excluded.issued,"
                    " issued_order = excluded.issued_order, seen_at = excluded.seen_at"
                    " WHERE registries_seen.issued_order < excluded.issued_order"
                    " OR registries_seen.issued_order > ?",
                    (source, issued, order, seen_at, beyond))
                rows = self._query("SELECT issued, issued_order FROM registries_seen WHERE source = ?", (source,))
        except StoreError as exc:
            if getattr(exc.__cause__, "sqlstate", None) == _READ_ONLY_SQL_TRANSACTION:  # psycopg's, on a standby
                raise ReadOnlyArchiveError(f"{exc}: this process may only read the catalog") from exc
            raise
        return str(rows[0][0]), str(rows[0][1])

    def registry_seen(self, source: str) -> tuple[str, str] | None:
        """The newest registry of ``source`` recorded, ``(issued, order)``; ``None``: none."""
        with self._read():
            rows = self._query("SELECT issued, issued_order FROM registries_seen WHERE source = ?", (source,))
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    def registries_seen(self) -> list[tuple[str, str, str]]:
        """Every source recorded, ``(source, issued, seen_at)``, by source."""
        with self._read():
            rows = self._query("SELECT source, issued, seen_at FROM registries_seen ORDER BY source")
        return [(str(source), str(issued), str(seen)) for source, issued, seen in rows]

    def forget_registry(self, source: str, audit: AuditRecord) -> str | None:
        """Take ``source``'s row away (so that its next registry is taken, however old), with ``audit``, in one
        transaction; the ``issued`` it held, ``None`` (nothing written) when there was none."""
        with self._write():
            rows = self._query("SELECT issued FROM registries_seen WHERE source = ?", (source,))
            if not rows:
                return None
            self._query("DELETE FROM registries_seen WHERE source = ?", (source,))
            self._insert_audit(audit)
        return str(rows[0][0])
