"""The thread index of e-mail messages (schema 10; ``docs/email.md`` §4), both stores.

For the octets of each blob deposited as a message (``message/rfc822``),
keyed by their SHA-256 as a fragment index is: its ``Message-ID``, the id it
replies to (its *parent*) and every id it names
(:class:`pdi.mail.message.ThreadIds`). A thread finds a message by its id
(``message_heads_by_id``), a message's replies by their parent
(``message_heads_by_parent``) and the messages that name it in their References
(``message_references_by_id``), in any series and on any day; each answer is
the documents whose representations hold those octets (not purged), read
through ``representations_by_sha``.

The rows of a message are written by the transaction that deposits it (or
imports it); those of the messages deposited before schema 10 are listed by
the migration in ``message_heads_pending`` and read, by their header
fields alone, by :meth:`MessagesPart.fill_message_heads` once the catalog
holds its blob store (:func:`pdi.archive.catalog.opening.open_store`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pdi.archive.catalog.base import MAX_PARAMETERS, CatalogBase, timestamp
from pdi.archive.catalog.rows import LISTING_ORDER, REP_COLUMNS, rep_record
from pdi.archive.store import RepresentationRecord
from pdi.errors import PDIError

if TYPE_CHECKING:
    from pdi.mail.message import ThreadIds

#: Pending messages read (outside a transaction) and then written by one write transaction.
FILL_PAGE = 64

#: The documents whose message (not purged) is the blob of an index row; ``{table}.{key}`` the column matched.
_HOLDERS = (
    "SELECT DISTINCT h.{key}, r.document FROM {table} h"
    " JOIN representations r ON r.sha256 = h.sha256 AND r.media_type = 'message/rfc822' AND r.purged IS NULL"
    " WHERE h.{key} IN ({marks})"
)


class MessagesPart(CatalogBase):
    """The thread index: a message's ids written with its deposit, and read by id and by parent."""

    def _insert_thread(self, sha256: str, thread: ThreadIds | None) -> None:
        """Inside a write transaction: the ids of the message whose octets are ``sha256`` (``None``: none read), once."""
        message_id = None if thread is None else thread.message_id
        parent = None if thread is None else thread.parent
        new = self._query(
            "INSERT INTO message_heads (sha256, message_id, parent, read_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (sha256) DO NOTHING RETURNING sha256",
            (sha256, message_id, parent, timestamp()),
        )
        if new and thread is not None and thread.references:
            self._executemany(
                "INSERT INTO message_references (sha256, n, message_id) VALUES (?, ?, ?)",
                [(sha256, n, ref) for n, ref in enumerate(thread.references)],
            )
        self._execute("DELETE FROM message_heads_pending WHERE sha256 = ?", (sha256,))

    def _thread_stored(self, sha256: str) -> None:
        """Inside a write transaction: index a stored message (an import's), read again from the blob store."""
        if self._query("SELECT 1 FROM message_heads WHERE sha256 = ?", (sha256,)):
            return
        self._insert_thread(sha256, self._read_thread(sha256))

    def _read_thread(self, sha256: str) -> ThreadIds | None:
        """The ids of a stored message, read from its first octets (verified); ``None`` if the blob is missing."""
        from pdi.mail.message import THREAD_HEAD, thread_ids

        reader = self.open_blob(sha256, name=sha256)
        if reader is None:
            return None
        with reader:
            return thread_ids(reader.read(0, min(THREAD_HEAD, reader.size)))

    def fill_message_heads(self) -> int:
        """Index the messages deposited before schema 10 (``message_heads_pending``); how many were indexed.

        Each page of :data:`FILL_PAGE` is read outside any transaction and
        written by one write transaction, which takes it off the list; a
        message whose blob cannot be read now (missing, damaged) stays listed
        for the next opening (``pdi verify`` reports it). Two processes filling
        at once write each row once.
        """
        done = 0
        after = ""
        while True:
            with self._read():
                rows = self._query(
                    "SELECT sha256 FROM message_heads_pending WHERE sha256 > ? ORDER BY sha256 LIMIT ?",
                    (after, FILL_PAGE),
                )
            if not rows:
                return done
            after = str(rows[-1][0])
            read: list[tuple[str, ThreadIds]] = []
            for (sha256,) in rows:
                try:
                    thread = self._read_thread(str(sha256))
                except PDIError:
                    continue
                if thread is not None:
                    read.append((str(sha256), thread))
            if read:
                with self._write():
                    for sha256, thread in read:
                        self._insert_thread(sha256, thread)
                done += len(read)

    def refill_message_heads(self) -> int:
        """List every message (not purged) the thread index lacks as pending, and index them
        (:meth:`fill_message_heads`; ``pdi reindex``); how many were indexed."""
        with self._write():
            self._query(
                "INSERT INTO message_heads_pending (sha256) SELECT DISTINCT r.sha256 FROM representations r"
                " WHERE r.media_type = 'message/rfc822' AND r.purged IS NULL"
                " AND NOT EXISTS (SELECT 1 FROM message_heads h WHERE h.sha256 = r.sha256)"
                " ON CONFLICT (sha256) DO NOTHING"
            )
        return self.fill_message_heads()

    def messages_pending(self) -> int:
        """How many messages deposited before schema 10 are not yet in the thread index."""
        with self._read():
            rows = self._query("SELECT COUNT(*) FROM message_heads_pending")
        return int(rows[0][0])

    def messages_by_id(self, message_ids: Sequence[str], limit: int) -> list[tuple[str, list[RepresentationRecord]]]:
        """The documents holding a message whose ``Message-ID`` is one of ``message_ids`` (at most ``limit``):
        each with the id it matched and every representation of it, in listing order."""
        return self._holders("message_id", message_ids, limit)

    def message_replies(self, message_ids: Sequence[str], limit: int) -> list[tuple[str, list[RepresentationRecord]]]:
        """The documents holding a message that replies to one of ``message_ids`` (its parent, :class:`ThreadIds`;
        at most ``limit``): each with the id it replies to and every representation of it, in listing order."""
        return self._holders("parent", message_ids, limit)

    def message_referrers(self, message_ids: Sequence[str], limit: int) -> list[tuple[str, list[RepresentationRecord]]]:
        """The documents holding a message whose References or In-Reply-To name one of ``message_ids`` (at most
        ``limit``): each with the id it names and every representation of it, in listing order."""
        return self._holders("message_id", message_ids, limit, table="message_references")

    def _holders(self, key: str, message_ids: Sequence[str], limit: int, *, table: str = "message_heads",
                 ) -> list[tuple[str, list[RepresentationRecord]]]:
        wanted = list(dict.fromkeys(message_ids))[:MAX_PARAMETERS]
        if not wanted or limit < 1:
            return []
        marks = ", ".join("?" * len(wanted))
        with self._read():
            matched = self._query(_HOLDERS.format(table=table, key=key, marks=marks) + " ORDER BY r.document LIMIT ?",
                                  [*wanted, limit])
            if not matched:
                return []
            documents = sorted({int(r[1]) for r in matched})
            doc_marks = ", ".join("?" * len(documents))
            rows = self._query(
                f"SELECT r.document, {REP_COLUMNS} FROM documents d {self.run_representations}"
                f" WHERE d.id IN ({doc_marks}){LISTING_ORDER}",
                documents,
            )
        by_document: dict[int, list[RepresentationRecord]] = {}
        for row in rows:
            by_document.setdefault(int(row[0]), []).append(rep_record(row[1:]))
        order = {doc: n for n, doc in enumerate(by_document)}  # listing order: by day, serial, unique id
        found: list[tuple[Any, int]] = sorted(((str(r[0]), int(r[1])) for r in matched), key=lambda m: order[m[1]])
        return [(message_id, by_document[doc]) for message_id, doc in found if doc in by_document]
