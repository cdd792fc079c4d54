"""The search rows: the full-text index's passages, written at deposit, read by a search a page at a time.

Passages a deposit left to the background indexer wait in ``index_queue``
(:mod:`pdi.archive.search` says why): a worker leases a row
(:meth:`SearchIndexPart.claim_index`), then writes the passages a batch a
transaction while its lease holds (:meth:`SearchIndexPart.store_queued`).

The statements that differ by database (SQLite's FTS5, PostgreSQL's
tsvector) are the dialect's (:meth:`SearchIndexPart._search_page`,
:meth:`SearchIndexPart._highlight`); what both add after their match is
:func:`search_page`.
"""

from __future__ import annotations

import itertools
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pdi.archive.catalog.base import (
    CatalogBase,
    SearchAccess,
    timestamp,
)
from pdi.archive.catalog.rows import REP_COLUMNS, rep_record
from pdi.archive.store import (
    SearchRow,
)

if TYPE_CHECKING:
    from pdi.passages.fulltext import Passage


def search_scope(access: SearchAccess | None) -> tuple[str, list[Any]]:
    """The ``AND …`` that keeps a search to what may be shown: names keeping their octets, and what ``access`` allows."""
    sql = " AND r.purged IS NULL"
    params: list[Any] = []
    if access is None:
        return sql, params
    if access.excluded:
        sql += f" AND d.series NOT IN ({', '.join('?' * len(access.excluded))})"
        params += access.excluded
    exempt = f"d.series IN ({', '.join('?' * len(access.readable))}) OR " if access.readable else ""
    sql += (
        f" AND ({exempt}((d.embargo_until IS NULL OR d.embargo_until <= ?) AND NOT EXISTS"
        " (SELECT 1 FROM versions v WHERE v.document = d.id AND v.version = r.version AND v.embargo_until > ?)))"
    )
    params += [*access.readable, access.now, access.now]
    return sql, params


def search_page(
    match: str, params: list[Any], series: str | None, access: SearchAccess | None, skip: int, limit: int
) -> tuple[str, list[Any]]:
    """A page of search hits: ``match`` (the dialect's query of the passages that match, ``pid`` and
    ``score``, best lowest) with what both dialects make of it.

    The representations holding each passage's blob, but for withdrawn names;
    the series asked for, :func:`search_scope`, and the page of ``limit``
    hits after the first ``skip`` in their order (score, then passage,
    document, version and format: the catalog's numbers order ties, and
    never leave it).
    """
    params = list(params)
    sql = (
        f"SELECT {REP_COLUMNS}, d.id, p.id, p.start, p.runs, s.score FROM ({match}) s"
        " JOIN search_passages p ON p.id = s.pid"
        " JOIN representations r ON r.sha256 = p.sha256 AND r.media_type = p.media_type"
        " AND COALESCE(r.charset, '') = p.charset"
        " JOIN documents d ON d.id = r.document"
        # a withdrawn name is out of service: its text is not found (the same bytes under another name still are)
        " WHERE NOT EXISTS (SELECT 1 FROM withdrawals w WHERE w.document = d.id"
        " AND (w.version IS NULL OR w.version = r.version))"
    )
    if series is not None:
        sql += " AND d.series = ?"
        params.append(series)
    scope, bound = search_scope(access)
    sql += scope
    params += bound
    sql += " ORDER BY s.score, p.id, d.id, r.version, r.format LIMIT ? OFFSET ?"
    return sql, [*params, limit, skip]


#: A source of the full-text index, unless it is there already (its passages are then left as they are).
NEW_SOURCE = (
    "INSERT INTO search_sources (sha256, media_type, charset, passages, note, indexed_at)"
    " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (sha256, media_type, charset) DO NOTHING"
)


class SearchIndexPart(CatalogBase):
    """The full-text index's rows: passages in, pages of hits out, and its rebuilding."""

    #: Whether :meth:`_highlight` marks each match of a phrase whole (:attr:`pdi.archive.store.SearchRow.whole`).
    marks_phrases_whole = False

    def _index_source(self, sha256: str, media_type: str, charset: str | None, passages: Any) -> None:
        """Inside a write transaction: the passages of one blob read as ``media_type`` in ``charset``, once.

        ``passages`` is a :class:`pdi.archive.search.Passages` (read one at a
        time, their ``count`` known); a blob already indexed so is left as it is.
        """
        new = self._query(
            NEW_SOURCE + " RETURNING sha256", (sha256, media_type, charset or "", passages.count, passages.note, timestamp()),
        )
        if new:
            self._insert_passages(sha256, media_type, charset or "", passages)

    def _index_stored(
        self, sha256: str, media_type: str, charset: str | None, *, size: int = 0, at: str = ""
    ) -> None:
        """Inside a write transaction: index a stored blob (read again from the store) if it has text;
        one of more than :data:`pdi.archive.search.QUEUE_PAST` octets is queued for the indexer instead."""
        import pdi.archive.search as search

        if search.search_kind(media_type) is None:
            return
        if size > search.QUEUE_PAST:  # queued unless indexed already (_queue_index asks)
            self._queue_index(sha256, media_type, charset, size, at or timestamp())
            return
        if self._query(
            "SELECT 1 FROM search_sources WHERE sha256 = ? AND media_type = ? AND charset = ?",
            (sha256, media_type, charset or ""),
        ):
            return
        index_blob = search.index_blob
        with index_blob(self, sha256, media_type, charset) as passages:
            self._index_source(sha256, media_type, charset, passages)

    def _insert_passages(self, sha256: str, media_type: str, charset: str, passages: Iterable[Passage]) -> int:
        """The passages of one source into the full-text index (inside a write transaction), 256 rows a statement; how many."""
        count = 0
        batch: list[tuple[Any, ...]] = []
        insert = ("INSERT INTO search_passages (sha256, media_type, charset, start, body, runs)"
                  " VALUES (?, ?, ?, ?, ?, ?)")
        for passage in passages:
            batch.append((sha256, media_type, charset, passage.start, passage.indexed, passage.encoded_runs()))
            count += 1
            if len(batch) >= 256:
                self._executemany(insert, batch)
                batch.clear()
        if batch:
            self._executemany(insert, batch)
        self._passages_inserted(sha256, media_type, charset)
        return count

    def _passages_inserted(self, sha256: str, media_type: str, charset: str, after: int | None = None) -> None:
        """After a source's passages are in: what the store's own index needs (SQLite's FTS5 table).

        ``after``: only the passages whose id is greater (the batch just
        inserted, in a transaction of the one writer).
        """
        return None

    # --- the indexer's queue ------------------------------------------------------------
    def _queue_index(self, sha256: str, media_type: str, charset: str | None, size: int, at: str) -> None:
        """Inside a deposit's transaction: queue the passages of a source not yet indexed for the indexer."""
        key = (sha256, media_type, charset or "")
        if self._query("SELECT 1 FROM search_sources WHERE sha256 = ? AND media_type = ? AND charset = ?", key):
            return
        self._query(
            "INSERT INTO index_queue (sha256, media_type, charset, size, queued_at) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (sha256, media_type, charset) DO NOTHING",
            (*key, size, at),
        )

    def claim_index(self, worker: str, now: str, until: str) -> tuple[str, str, str] | None:
        """Lease the oldest queued source no live lease holds to ``worker`` until ``until``; ``None`` if there is none."""
        skip = f"{self.for_update} SKIP LOCKED" if self.for_update else ""  # SQLite: one writer at a time
        with self._write():
            rows = self._query(
                "SELECT sha256, media_type, charset FROM index_queue WHERE leased_until IS NULL OR leased_until < ?"
                f" ORDER BY queued_at, sha256, media_type, charset LIMIT 1{skip}",
                (now,),
            )
            if not rows:
                return None
            source = (str(rows[0][0]), str(rows[0][1]), str(rows[0][2]))
            if not self._query(
                "SELECT 1 FROM representations WHERE sha256 = ? AND media_type = ? AND COALESCE(charset, '') = ?"
                " AND purged IS NULL LIMIT 1", source,
            ):  # every name of these octets purged since: nothing to index
                self._query("DELETE FROM index_queue WHERE sha256 = ? AND media_type = ? AND charset = ?", source)
                return self.claim_index(worker, now, until)
            self._query(
                "UPDATE index_queue SET leased_until = ?, leased_by = ?, attempts = attempts + 1"
                " WHERE sha256 = ? AND media_type = ? AND charset = ?",
                (until, worker, *source),
            )
        return source

    def _leased(self, source: tuple[str, str, str], worker: str) -> bool:
        """Inside a write transaction: whether ``worker`` still holds the lease on ``source`` (its row locked)."""
        return bool(self._query(
            "SELECT 1 FROM index_queue WHERE sha256 = ? AND media_type = ? AND charset = ? AND leased_by = ?"
            + self.for_update,
            (*source, worker),
        ))

    def store_queued(
        self, source: tuple[str, str, str], worker: str, passages: Any, at: str, *, batch: int = 2048
    ) -> bool:
        """Write a leased source's passages a ``batch`` a transaction, then its ``search_sources`` row and the
        queue row's removal; ``False`` (nothing more written) once another worker holds the lease.

        What a killed worker left of the same source is deleted first, in
        the first batch's transaction (a transaction of its own was a third of
        the commits a small source cost), so whichever worker finishes, the
        source's passages are made once.
        """
        insert = ("INSERT INTO search_passages (sha256, media_type, charset, start, body, runs)"
                  " VALUES (?, ?, ?, ?, ?, ?)")
        found = iter(passages)
        count = 0
        first = True
        while True:
            rows = [(*source, p.start, p.indexed, p.encoded_runs()) for p in itertools.islice(found, batch)]
            with self._write():
                if not self._leased(source, worker):
                    return False
                if first:
                    first = False
                    if self._query(
                        "SELECT 1 FROM search_sources WHERE sha256 = ? AND media_type = ? AND charset = ?", source
                    ):  # indexed meanwhile (pdi reindex)
                        self._query(
                            "DELETE FROM index_queue WHERE sha256 = ? AND media_type = ? AND charset = ?", source
                        )
                        return True
                    self._delete_passages([source])
                if rows:
                    last = self._query("SELECT MAX(id) FROM search_passages")[0][0]
                    self._executemany(insert, rows)
                    self._passages_inserted(*source, after=int(last or 0))
                    count += len(rows)
                if len(rows) < batch:
                    self._query(
                        "INSERT INTO search_sources (sha256, media_type, charset, passages, note, indexed_at)"
                        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (sha256, media_type, charset) DO NOTHING",
                        (*source, count, passages.note, at),
                    )
                    self._query(
                        "DELETE FROM index_queue WHERE sha256 = ? AND media_type = ? AND charset = ?", source
                    )
                    return True

    def index_failed(self, source: tuple[str, str, str], worker: str, error: str, retry_at: str) -> None:
        """Keep why indexing ``source`` failed; its row is left untried until ``retry_at``."""
        with self._write():
            self._query(
                "UPDATE index_queue SET error = ?, leased_until = ? WHERE sha256 = ? AND media_type = ?"
                " AND charset = ? AND leased_by = ?",
                (error[:1000], retry_at, *source, worker),
            )

    def pending_index(self, series: str | None = None, access: SearchAccess | None = None) -> int:
        """How many names (representations, as a search would show them) have text the indexer has yet to index."""
        with self._read():
            if not self._query("SELECT 1 FROM index_queue LIMIT 1"):
                return 0
            sql = (
                "SELECT COUNT(*) FROM index_queue q JOIN representations r ON r.sha256 = q.sha256"
                " AND r.media_type = q.media_type AND COALESCE(r.charset, '') = q.charset"
                " JOIN documents d ON d.id = r.document WHERE NOT EXISTS (SELECT 1 FROM withdrawals w"
                " WHERE w.document = d.id AND (w.version IS NULL OR w.version = r.version))"
            )
            params: list[Any] = []
            if series is not None:
                sql += " AND d.series = ?"
                params.append(series)
            scope, bound = search_scope(access)
            rows = self._query(sql + scope, params + bound)
        return int(rows[0][0])

    def index_pending_of(self, sha256: str, media_type: str, charset: str | None) -> bool:
        """Whether this representation's text waits in the indexer's queue (not yet found by a search)."""
        with self._read():
            return bool(self._query(
                "SELECT 1 FROM index_queue WHERE sha256 = ? AND media_type = ? AND charset = ?",
                (sha256, media_type, charset or ""),
            ))

    def queued_indexes(self) -> list[tuple[str, str, str, int, int, str | None]]:
        """Every queued source: sha256, media type, charset, size, attempts and the last error, oldest first."""
        with self._read():
            rows = self._query(
                "SELECT sha256, media_type, charset, size, attempts, error FROM index_queue ORDER BY queued_at, sha256"
            )
        return [(str(r[0]), str(r[1]), str(r[2]), int(r[3]), int(r[4]), None if r[5] is None else str(r[5]))
                for r in rows]

    def folds_case_beyond_ascii(self) -> tuple[str, bool]:
        """What decides how the index folds letters to lower case, and whether it folds those beyond ASCII
        (``École`` found by ``école``): SQLite's FTS5 folds every letter; a PostgreSQL database whose ``LC_CTYPE`` is
        ``C``, only ASCII ones."""
        return "", True

    def unsearchable(self, phrases: Sequence[Sequence[str]]) -> list[int]:
        """Which of ``phrases`` (their indexes) the index reads no word of, so that its engine passes them over: none
        here (SQLite's FTS5 keeps every word); PostgreSQL's English stop words (``the``, ``and``)."""
        return []

    @abstractmethod
    def _search_page(
        self, phrases: Sequence[Sequence[str]], series: str | None, limit: int, skip: int,
        access: SearchAccess | None = None,
    ) -> list[tuple[Any, ...]]:
        """Rows of one page of hits, best first, after the first ``skip``: the representation's columns, then
        document id, passage id, start, runs and score."""

    @abstractmethod
    def _highlight(self, passage: int, phrases: Sequence[Sequence[str]]) -> str | None:
        """The passage's text with every match of ``phrases`` (all must match) between the marks; ``None`` if they do not."""

    def search(
        self, phrases: Sequence[Sequence[str]], *, series: str | None = None, limit: int = 20,
        skip: int = 0, access: SearchAccess | None = None, deadline: float | None = None,
    ) -> list[SearchRow]:
        """One page of the passages matching every phrase, best first (then by passage, name), after the first ``skip``.

        Each row carries the passage's text marked for all the phrases, and
        for each phrase alone (to find the stretch that holds them all).
        Past ``deadline`` (a ``time.monotonic()``) the engine's work is
        stopped, a :class:`TimeoutError`.

        The page and its passages are read in one snapshot: on PostgreSQL a
        read sees each statement's latest commit, and a reindex committed
        between the page and a passage's highlight had deleted the passage
        (made again under another id), so that the hit was left out and the
        page came out short, its cursors shifted.
        """
        from pdi.passages.fulltext import Passage

        rows: list[SearchRow] = []
        with self._snapshot(), self._within(deadline):
            for row in self._search_page(phrases, series, limit, skip, access):
                record = rep_record(row)
                _doc, pid, start, runs, score = row[14:19]
                whole = self._highlight(int(pid), phrases)
                if whole is None:  # pragma: no cover - the same match of the same passage in the same snapshot
                    whole = ""  # never so; were it, the hit is kept, at its passage's start: the page stays whole
                each = (
                    tuple(self._highlight(int(pid), [phrase]) or "" for phrase in phrases)
                    if len(phrases) > 1 else (whole,)
                )
                rows.append(SearchRow(record, Passage.decode(int(start), "", bytes(runs)), whole, each, float(score),
                                      self.marks_phrases_whole, self._stems(whole, phrases)))
        return rows

    def _stems(self, marked: str, phrases: Sequence[Sequence[str]]) -> tuple[tuple[str, str], ...]:
        """:attr:`SearchRow.stems` of a passage the engine ``marked`` for ``phrases``: none here (each store that
        needs them says how its index reads words)."""
        return ()

    def search_sources(self, series: str | None = None, *, page: int = 500) -> Iterator[tuple[str, str, str]]:
        """Every (sha256, media type, charset) the catalog names (by names in ``series``), in order, a page at a time."""
        scope = "FROM representations r"
        params: list[Any] = []
        if series is not None:
            scope += " JOIN documents d ON d.id = r.document WHERE d.series = ? AND r.purged IS NULL"
            params.append(series)
        else:
            scope += " WHERE r.purged IS NULL"  # a purged name's octets are gone, and stay unindexed
        after: tuple[str, str, str] | None = None
        while True:
            bound = "" if after is None else " AND (r.sha256, r.media_type, COALESCE(r.charset, '')) > (?, ?, ?)"
            with self._read():
                rows = self._query(
                    f"SELECT DISTINCT r.sha256, r.media_type, COALESCE(r.charset, '') {scope}{bound}"
                    " ORDER BY 1, 2, 3 LIMIT ?",
                    [*params, *(after or ()), page],
                )
            for row in rows:
                yield (str(row[0]), str(row[1]), str(row[2]))
            if len(rows) < page:
                return
            after = (str(rows[-1][0]), str(rows[-1][1]), str(rows[-1][2]))

    def _count_sources(self, series: str | None) -> int:
        scope = "FROM representations r"
        params: list[Any] = []
        if series is not None:
            scope += " JOIN documents d ON d.id = r.document WHERE d.series = ?"
            params.append(series)
        rows = self._query(
            f"SELECT COUNT(*) FROM (SELECT DISTINCT r.sha256, r.media_type, COALESCE(r.charset, '') {scope}) s", params
        )
        return int(rows[0][0])

    def rebuild_search_index(
        self, series: str | None = None, progress: Callable[[int, int], None] | None = None
    ) -> tuple[int, int, list[tuple[str, str]]]:
        """Make the full-text index again, in one write transaction: a failure leaves the old one.

        With ``series``, only the blobs its names hold. Returns how many
        sources were read, how many passages made, and the sources that
        could not be read as text, each with why (``sha256``, note).
        """
        from pdi.archive.search import index_blob, search_kind

        with self._write():
            total = self._count_sources(series) if progress is not None else 0
            sources = 0
            passages = 0
            notes: list[tuple[str, str]] = []
            if series is None:
                self._delete_passages(None)
                self._query("DELETE FROM search_sources")
            batch: list[tuple[str, str, str]] = []

            def flush() -> None:
                nonlocal sources, passages
                if series is not None and batch:
                    self._delete_passages(batch)
                    for source in batch:
                        self._query(
                            "DELETE FROM search_sources WHERE sha256 = ? AND media_type = ? AND charset = ?", source
                        )
                for sha256, media_type, charset in batch:
                    self._query(  # rebuilt here: nothing left for the indexer (pdi.archive.search)
                        "DELETE FROM index_queue WHERE sha256 = ? AND media_type = ? AND charset = ?",
                        (sha256, media_type, charset),
                    )
                    if search_kind(media_type) is not None:
                        with index_blob(self, sha256, media_type, charset or None) as found:
                            self._index_source(sha256, media_type, charset or None, found)
                            if found.note is not None:
                                notes.append((sha256, found.note))
                            passages += found.count
                    sources += 1
                    if progress is not None:
                        progress(sources, max(total, sources))
                batch.clear()

            for source in self.search_sources(series):
                batch.append(source)
                if len(batch) >= 100:
                    flush()
            flush()
        return sources, passages, notes
