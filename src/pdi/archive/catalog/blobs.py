"""The rules that cross the blob seam, written once for any catalog with any blob store.

The catalog holds a blob store (:class:`pdi.archive.blobs.seam.BlobStore`) and
answers what it may ask (:class:`pdi.archive.blobs.seam.BlobCatalog`): which
blobs are *held* (named by a representation keeping its octets, or by a
staging row), the *removal lock* (a write transaction excluding deposits:
SQLite's writer lock, a PostgreSQL advisory lock that deposits take
shared), and the *staging rows* of a store whose blobs have no pin of their
own. Deposits record their blobs' chunk digests here, and everything that
deletes blobs (a purge, the remover) does so inside the removal lock.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import cast

from pdi.archive.blobs import BlobInfo, ChunkedReader, Octets
from pdi.archive.blobs.inline import Inline
from pdi.archive.blobs.seam import (
    BlobObserver,
    BlobPin,
    BlobSource,
    BlobStore,
    Durable,
    ImportDurability,
    Spooled,
    StagedBlob,
    spool_ahead,
)
from pdi.archive.catalog.base import (
    CatalogBase,
    pages,
    timestamp,
    timestamp_ago,
)

#: A staging row older than this (a day) belongs to a killed process, whatever grace the remover gives.
STAGING_LIFETIME = 24 * 3600.0


#: The blobs a representation keeping its octets names that are not rows of ``blobs`` (name, size), by name.
NAMED_OUTSIDE_ROWS = (
    "SELECT DISTINCT r.sha256, r.size FROM representations r WHERE r.purged IS NULL"
    " AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.sha256 = r.sha256) ORDER BY r.sha256"
)

#: Names one query of :meth:`SQLStore.held` asks about.
_HELD_A_QUERY = 500


def _index_head() -> int:
    """The octets of an index that say what it is: its magic and version, and the payload's first (an element
    index's document's kind). Asked here, not at import: ``pdi get`` reads the catalog without the fragments."""
    from pdi.fragments.sealed import payload_start

    return payload_start() + 1


def _made_earlier(head: bytes) -> bool:
    """Whether an index beginning with ``head`` is an element index or a video's index an earlier reading made."""
    from pdi.fragments.markup.index import MAGIC, made_by_an_earlier_reading
    from pdi.fragments.video import MAGIC as VIDEO
    from pdi.fragments.video import made_by_an_earlier_reading as earlier_video

    return (head[:4] == MAGIC and made_by_an_earlier_reading(head)) or (head[:4] == VIDEO and earlier_video(head))


class BlobRules(CatalogBase):
    """The catalog's side of the blob seam: held names, the removal lock, staging rows, and its blob methods."""

    def hold(self, blobs: BlobStore) -> None:
        """Hold ``blobs`` as this catalog's blob store (named in :attr:`location` when it is elsewhere).

        The store held before (the catalog's own, until the catalog's record
        of another is read) is closed.
        """
        blobs.attach(self)
        previous = getattr(self, "blobs", None)
        self.blobs = blobs
        self._catalog_location = getattr(self, "_catalog_location", self.location)
        self.location = self._catalog_location
        if blobs.elsewhere is not None:
            self.location = f"{self.location} (blobs in {blobs.elsewhere})"
        if previous is not None and previous is not blobs:
            previous.close()

    @contextmanager
    def removing(self, older_than: float | None = None) -> Iterator[None]:
        """A write transaction holding the removal lock exclusively: no deposit names a blob meanwhile.

        With ``older_than`` (a remover's grace period), staging rows older than
        it and than :data:`STAGING_LIFETIME` are dropped first: they belong to
        killed processes, and protect nothing any more.
        """
        with self._write():
            self._removal_lock(shared=False)
            if older_than is not None:
                self._query(
                    "DELETE FROM blob_stagings WHERE started_at < ?",
                    (timestamp_ago(max(older_than, STAGING_LIFETIME)),),
                )
            yield

    def held(self, names: Collection[str]) -> set[str]:
        """Which of ``names`` a representation keeping its octets (not purged) or a staging row names."""
        found: set[str] = set()
        for batch in pages(sorted(names), _HELD_A_QUERY):
            marks = ", ".join("?" * len(batch))
            for table, kept in (("representations", " AND purged IS NULL"), ("blob_stagings", "")):
                rows = self._query(f"SELECT DISTINCT sha256 FROM {table} WHERE sha256 IN ({marks}){kept}", batch)
                found |= {str(r[0]) for r in rows}
        return found

    def octets_purged(self, sha256: str) -> bool:
        """Whether the representations that name ``sha256`` all had their octets purged (and one does): a blob
        a takedown meant to be gone. Read outside a snapshot, it tells an export that found a blob its
        snapshot names missing that a purge committed since the snapshot began."""
        rows = self._query("SELECT count(*), count(purged) FROM representations WHERE sha256 = ?", (sha256,))
        named, purged = (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)
        return 0 < named == purged

    def named_blobs(self) -> Iterator[tuple[str, int]]:
        """Every blob a representation keeping its octets names that is not a row of the catalog's own, and its
        size, by name: what a backup copies beside the catalog's."""
        for name, size in self._query(NAMED_OUTSIDE_ROWS):
            yield str(name), int(size)

    def open_staging(self) -> str:
        """Record a new staging in a transaction of its own; its id."""
        import uuid  # only a deposit needs it (with platform, a millisecond of every command's start)

        ident = uuid.uuid4().hex
        with self._write():
            self._query("INSERT INTO blob_stagings (id, sha256, started_at) VALUES (?, NULL, ?)", (ident, timestamp()))
        return ident

    def name_staging(self, ident: str, sha256: str) -> None:
        with self._write():
            self._query("UPDATE blob_stagings SET sha256 = ? WHERE id = ?", (sha256, ident))

    def close_staging(self, ident: str) -> None:
        with self._write():
            self._query("DELETE FROM blob_stagings WHERE id = ?", (ident,))

    def live_stagings(self) -> set[str]:
        return {str(r[0]) for r in self._query("SELECT id FROM blob_stagings")}

    def stage_blob(self, source: Octets, observe: BlobObserver | None = None, *, replace: bool = False,
                   durable: bool = True) -> StagedBlob:
        """Write a blob from a stream, hashing it, before the catalog transaction that will name it.

        The returned pin keeps :meth:`remove_unreferenced` off the blob until
        it is closed (after the catalog transaction that names it has ended).
        ``observe`` sees every piece and its ``finish`` runs before the blob is
        placed: an exception from it leaves nothing behind. ``replace`` (a repair): written over what is
        stored under its name (:meth:`pdi.archive.blobs.seam.BlobStore.stage`). Not ``durable`` (a batch's
        blob): where the store can, written without its own sync, for :meth:`make_durable` to sync with the
        batch's others before the batch's catalog transaction (blob files:
        :meth:`~pdi.archive.blobs.files.FileBlobs.stage_deferred`); its pin's ``secure`` syncs it else.
        """
        self.refuse_if_read_only()
        deferred = None if durable or replace else getattr(self.blobs, "stage_deferred", None)
        if deferred is not None:
            return cast(StagedBlob, deferred(source, observe))
        return self.blobs.stage(source, observe, replace=replace)

    def make_durable(self, blobs: Sequence[StagedBlob]) -> None:
        """Before a batch's catalog transaction: the blobs it staged not ``durable`` made durable together, in as
        few syncs as the store can (nothing to do for a store that stages each durably)."""
        durable = getattr(self.blobs, "make_durable", None)
        if durable is not None:
            durable(blobs)

    def write_ahead(self, source: Octets) -> Spooled:
        """``source`` written ahead of the import that will take it, hashed (its :attr:`~Spooled.info` to be checked
        first): where the blob store takes it as it is (blob files: :meth:`~pdi.archive.blobs.files.FileBlobs.write_ahead`),
        else to a local temporary file (:func:`~pdi.archive.blobs.seam.spool_ahead`). ``discard`` it after the import."""
        self.refuse_if_read_only()
        ahead = getattr(self.blobs, "write_ahead", None)
        return spool_ahead(source) if ahead is None else cast(Spooled, ahead(source))

    def _stage_import(self, blobs: Iterable[tuple[str, BlobSource]]) -> tuple[list[StagedBlob], ImportDurability]:
        """Stage the blobs of an import, each checked against the SHA-256 its record names; and what makes them
        durable, begun (blob files: their one sync, on a thread of its own): wait for it before the commit."""
        self.refuse_if_read_only()
        begun = getattr(self.blobs, "stage_import_begun", None)
        if begun is not None:
            return cast(tuple[list[StagedBlob], ImportDurability], begun(blobs))
        return self.blobs.stage_import(blobs), Durable()

    @contextmanager
    def _staged(self, blobs: Sequence[StagedBlob]) -> Iterator[Sequence[StagedBlob]]:
        """The staged blobs of a deposit, for :meth:`_secure` inside its catalog transaction.

        Whoever staged them (:class:`pdi.archive.Archive`) releases them after
        the deposit, or discards them when it failed.
        """
        yield blobs

    def _secure(self, pins: Sequence[BlobPin]) -> None:
        """Inside the catalog write transaction: make sure every staged blob is still in place.

        Nothing removes a blob while a writer holds the catalog, so a blob in
        place now stays until the deposit that names it has committed.
        """
        for pin in pins:
            pin.secure()

    def _store_blobs(self, blobs: Sequence[StagedBlob]) -> None:
        """Inside the catalog transaction: record staged blobs' chunk digests, and have the blob store name them.

        The removal lock is held shared from here to the commit: a remover
        either went before (the blob store finds the blob gone, and the
        deposit fails cleanly) or waits for the commit. Small blobs kept in
        hand (:class:`~pdi.archive.blobs.inline.Inline`, written now) leave
        the store nothing to check under it: the lock is then sent with the
        statements after it, not waited for.
        """
        if not blobs:
            return
        infos = list({blob.info.sha256: blob.info for blob in blobs}.values())
        at = timestamp()  # one moment for the statement's rows (a clock read and strftime a blob was 4 µs of each)
        self._insert_rows(
            "INSERT INTO blob_fixity (sha256, size, chunk_size, chunks, created_at)",
            ("text", "bigint", "int", "bytea", "text"),
            [(i.sha256, i.size, i.chunk_size, i.chunks, at) for i in infos],
            " ON CONFLICT (sha256) DO NOTHING", wanted=False,
        )
        self._removal_lock(shared=True, wait=not all(isinstance(blob, Inline) for blob in blobs))
        self.blobs.record(blobs)

    def blob_info(self, sha256: str) -> BlobInfo | None:
        """What the catalog knows of a blob: its chunk digests, or (stored before them) its size alone."""
        with self._read():
            fixity = "SELECT size, chunk_size, chunks FROM blob_fixity WHERE sha256 = ?"
            rows = self._query(fixity, (sha256,)) or self._ask_primary(fixity, (sha256,))  # not yet replicated?
            if rows:
                size, chunk_size, chunks = rows[0]
                return BlobInfo(sha256, int(size), int(chunk_size), bytes(chunks))
            rows = self._query("SELECT size FROM representations WHERE sha256 = ? LIMIT 1", (sha256,))
        return BlobInfo(sha256, int(rows[0][0])) if rows else None

    def fragment_index(self, sha256: str, media_type: str, charset: str | None) -> bytes | None:
        """The index made at deposit for these octets read as ``media_type`` in ``charset``, if any."""
        with self._read():
            rows = self._query(
                "SELECT data FROM fragment_indexes WHERE sha256 = ? AND media_type = ? AND charset = ?",
                (sha256, media_type, charset or ""),
            )
        return bytes(rows[0][0]) if rows else None

    def earlier_fragment_indexes(self, series: str | None = None, *, page: int = 500) -> Iterator[tuple[str, str, str]]:
        """Each (sha256, media type, charset) whose element index or video index an earlier reading made
        (:func:`pdi.fragments.markup.index.made_by_an_earlier_reading`,
        :func:`pdi.fragments.video.made_by_an_earlier_reading`): of names in ``series`` only, if given;
        in order, a page at a time, each index's first octets read, not its whole."""
        scope, params = "", []
        if series is not None:
            scope = (" AND EXISTS (SELECT 1 FROM representations r JOIN documents d ON d.id = r.document"
                     " WHERE r.sha256 = f.sha256 AND d.series = ?)")
            params.append(series)
        after: tuple[str, str, str] | None = None
        while True:
            bound = "" if after is None else " AND (f.sha256, f.media_type, f.charset) > (?, ?, ?)"
            with self._read():
                rows = self._query(
                    f"SELECT f.sha256, f.media_type, f.charset, substr(f.data, 1, {_index_head()})"
                    f" FROM fragment_indexes f WHERE 1 = 1{scope}{bound} ORDER BY 1, 2, 3 LIMIT ?",
                    [*params, *(after or ()), page],
                )
            for row in rows:
                if _made_earlier(bytes(row[3])):
                    yield (str(row[0]), str(row[1]), str(row[2]))
            if len(rows) < page:
                return
            after = (str(rows[-1][0]), str(rows[-1][1]), str(rows[-1][2]))

    def replace_earlier_fragment_index(self, sha256: str, media_type: str, charset: str, data: bytes) -> bool:
        """Put ``data`` in place of the element index or video index of these octets read as ``media_type`` in ``charset``
        (``""``: none), if an earlier reading made the one kept (one write transaction, its row alone).
        Whether it did: False when the row is gone or was made anew meanwhile (by another run)."""
        key = (sha256, media_type, charset)
        with self._write():
            rows = self._query(
                f"SELECT substr(data, 1, {_index_head()}) FROM fragment_indexes"
                " WHERE sha256 = ? AND media_type = ? AND charset = ?", key,
            )
            if not rows or not _made_earlier(bytes(rows[0][0])):
                return False
            self._execute(
                "UPDATE fragment_indexes SET data = ? WHERE sha256 = ? AND media_type = ? AND charset = ?", (data, *key)
            )
        return True

    def unparsed_sgml(self, series: str | None = None, *, page: int = 500, mirrored: Sequence[str] = (),
                      ) -> Iterator[tuple[str, str, str, bool]]:
        """Each (sha256, media type, charset, of a mirrored series) of an SGML document kept whole (not purged)
        whose octets have no element index as read in that media type and charset (OpenSP's ``onsgmls`` was
        missing at its deposit, or it was imported: none, or a text's block table): of names in ``series`` only,
        if given; in order, a page at a time, each index's first octets read, not its whole. The last is true
        when every name of these octets is of one of the ``mirrored`` series (whose parse a mirror's sync keeps,
        only if it is its origin's)."""
        from pdi.fragments.markup import markup_kind
        from pdi.fragments.markup.bounds import MAX_SGML_OCTETS
        from pdi.fragments.markup.index import MAGIC

        scope, params = "", []
        if series is not None:
            scope = " AND d.series = ?"
            params.append(series)
        of_mirror = "0"
        if mirrored:  # no name of these octets in a series not mirrored
            of_mirror = ("CASE WHEN EXISTS (SELECT 1 FROM representations o JOIN documents od ON od.id = o.document"
                         f" WHERE o.sha256 = r.sha256 AND od.series NOT IN ({', '.join('?' * len(mirrored))}))"
                         " THEN 0 ELSE 1 END")
        after: tuple[str, str, str] | None = None
        while True:
            bound = "" if after is None else " AND (r.sha256, r.media_type, COALESCE(r.charset, '')) > (?, ?, ?)"
            with self._read():
                rows = self._query(
                    f"SELECT DISTINCT r.sha256, r.media_type, COALESCE(r.charset, ''), {of_mirror},"
                    f" substr(f.data, 1, {_index_head()}) FROM representations r"
                    " JOIN documents d ON d.id = r.document"
                    " LEFT JOIN fragment_indexes f ON f.sha256 = r.sha256 AND f.media_type = r.media_type"
                    " AND f.charset = COALESCE(r.charset, '')"
                    f" WHERE r.purged IS NULL AND r.size <= ? AND lower(r.media_type) LIKE ?{scope}{bound}"
                    " ORDER BY 1, 2, 3 LIMIT ?",
                    [*mirrored, MAX_SGML_OCTETS, "%/sgml%", *params, *(after or ()), page],
                )
            for row in rows:
                head = None if row[4] is None else bytes(row[4])
                if markup_kind(str(row[1])) == "sgml" and (head is None or head[:4] != MAGIC):
                    yield (str(row[0]), str(row[1]), str(row[2]), bool(row[3]))
            if len(rows) < page:
                return
            after = (str(rows[-1][0]), str(rows[-1][1]), str(rows[-1][2]))

    def replace_element_index(self, sha256: str, media_type: str, charset: str, kept_sha256: str,
                              data: bytes | None) -> bool:
        """Put ``data`` in place of the element index of these octets read as ``media_type`` in ``charset``
        (``""``: none), or remove it (``data`` ``None``), if the one kept is still the one whose SHA-256 is
        ``kept_sha256`` (one write transaction, its row alone): a mirror's parse found not to be its origin's
        (:meth:`pdi.archive.Archive.keep_brought_parse`). Whether it did: False when it changed meanwhile."""
        import hashlib

        key = (sha256, media_type, charset)
        with self._write():
            rows = self._query(
                "SELECT data FROM fragment_indexes WHERE sha256 = ? AND media_type = ? AND charset = ?", key)
            if not rows or hashlib.sha256(bytes(rows[0][0])).hexdigest() != kept_sha256:
                return False
            if data is None:
                self._execute("DELETE FROM fragment_indexes WHERE sha256 = ? AND media_type = ? AND charset = ?", key)
            else:
                self._execute("UPDATE fragment_indexes SET data = ? WHERE sha256 = ? AND media_type = ? AND charset = ?",
                              (data, *key))
        return True

    def keep_first_element_index(self, sha256: str, media_type: str, charset: str, data: bytes) -> bool:
        """Keep the element index ``data`` of these octets read as ``media_type`` in ``charset`` (``""``: none)
        where they have none: in place of a text's block table, or where no index is kept (one write transaction,
        its row alone). Whether it was kept: False when an element index was kept meanwhile (by another run),
        which is never replaced."""
        from pdi.fragments.markup.index import MAGIC

        key = (sha256, media_type, charset)
        with self._write():
            rows = self._query(
                f"SELECT substr(data, 1, {_index_head()}) FROM fragment_indexes"
                " WHERE sha256 = ? AND media_type = ? AND charset = ?", key,
            )
            if rows and bytes(rows[0][0])[:4] == MAGIC:
                return False
            if rows:
                self._execute("UPDATE fragment_indexes SET data = ? WHERE sha256 = ? AND media_type = ? AND charset = ?",
                              (data, *key))
            else:
                self._execute("INSERT INTO fragment_indexes (sha256, media_type, charset, data) VALUES (?, ?, ?, ?)",
                              (*key, data))
        return True

    def open_blob(self, sha256: str, *, name: str) -> ChunkedReader | None:
        """A reader of the stored blob by verified chunks, or ``None`` if it is missing."""
        return self.blobs.open(sha256, self.blob_info(sha256), name=name)

    def read_blob(self, sha256: str) -> bytes | None:
        """The stored bytes named by ``sha256``, verified, or ``None`` if missing (hold only what you can hold)."""
        reader = self.open_blob(sha256, name=sha256)
        if reader is None:
            return None
        with reader:
            return reader.read()

    def blob_names(self) -> set[str]:
        """The SHA-256 names of every stored blob."""
        return set(self.blobs.names())

    def iter_blob_names(self) -> Iterator[str]:
        """The names of every stored blob in ascending order (that of the catalog's ``ORDER BY sha256``), without holding them all."""
        return self.blobs.names()

    def remove_unreferenced(self, older_than: float) -> list[str]:
        """Delete stored blobs that no name holds, and what killed deposits left, older than ``older_than`` seconds.

        The blob store deletes inside :meth:`removing`, so no deposit commits
        meanwhile (what it only lists, it may list before). Returns what it removed.
        """
        return self.blobs.remove_unreferenced(older_than)

    def delete_purged_blobs(self, sha256s: Sequence[str]) -> tuple[list[str], list[str]]:
        """Delete each blob of ``sha256s`` that no representation still keeping its octets names.

        A blob another name holds (withdrawn or not, unless purged too) is
        kept, and so is one a deposit in progress has staged; each deleted
        blob's full-text passages and fragment index go with it. One write
        transaction holding the removal lock, so no deposit naming the same
        octets commits meanwhile. Returns the names deleted (or found
        already gone) and those kept.
        """
        deleted: list[str] = []
        kept: list[str] = []
        with self.removing():
            for sha256 in sorted(set(sha256s)):
                if self.held({sha256}) or not self.blobs.delete(sha256):
                    kept.append(sha256)
                    continue
                sources = [
                    (str(r[0]), str(r[1]), str(r[2]))
                    for r in self._query(
                        "SELECT sha256, media_type, charset FROM search_sources WHERE sha256 = ?", (sha256,)
                    )
                ]
                if sources:
                    self._delete_passages(sources)
                self._query("DELETE FROM search_sources WHERE sha256 = ?", (sha256,))
                self._query("DELETE FROM fragment_indexes WHERE sha256 = ?", (sha256,))
                self._query("DELETE FROM message_references WHERE sha256 = ?", (sha256,))
                self._query("DELETE FROM message_heads WHERE sha256 = ?", (sha256,))
                deleted.append(sha256)
        return deleted, kept
