"""Schema and migrations: the tables every catalog has, and the blob store it records.

Version *n* of :func:`~pdi.archive.catalog.schema_steps.migrations` takes a catalog from *n-1* to *n*; a
catalog is migrated forward when ``pdi init`` opens it, never back, and
refused by any other opening (:meth:`SchemaPart.open_schema`).
"""

from __future__ import annotations

import datetime
import re
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pdi.archive.catalog.base import (
    MAX_PARAMETERS,
    CatalogBase,
    pages,
    timestamp,
)
from pdi.archive.catalog.schema_steps import (
    ACCESS_DATED_STEP,
    ASCII_APART_STEP,
    OPTIONAL_STEP,
    PARSE_REFUSALS_STEP,
    REGISTRIES_SEEN_STEP,
    RESPACED_STEP,
    RULES_COUNTED_STEP,
    RULES_MARKED_STEP,
    SELECTORS_STEP,
    SPACED_STEP,
    migrations,
)
from pdi.archive.store import (
    SCHEMA_VERSION,
    AuditRecord,
    DocumentKey,
    OlderSchema,
    SeriesRecord,
)
from pdi.errors import (
    CommitUnknownError,
    ImmutabilityError,
    NotFoundError,
    OlderSchemaError,
    StoreError,
)

if TYPE_CHECKING:
    from pdi.passages.fulltext import Passage


def migration_record(before: int, now: int) -> AuditRecord:
    """The audit log's entry of a migration from schema version ``before`` to ``now``: who ran it (as the command
    line writes, :func:`~pdi.archive.naming.default_who`), the steps, and the pdi that ran them (an operator
    looking back at an archive's years finds each upgrade among its writes)."""
    from pdi import __version__
    from pdi.archive.naming import default_who

    return AuditRecord(timestamp(), default_who(), "migrate", "catalog",
                       f"schema version {before} to {now}, by pdi {__version__}")


class SchemaPart(CatalogBase):
    """The schema's version and migrations, and which blob store the catalog records."""

    #: How a backend finds the passages that may hold a character of ``UNSPACED`` (the parameter: that class).
    unspaced_filter = "body GLOB '*[' || ? || ']*'"

    def blob_store_url(self) -> str | None:
        """The external blob store recorded at ``pdi init`` (``s3://…``), or ``None`` for the store's own."""
        with self._read():
            rows = self._query("SELECT url FROM blob_store WHERE id = 1")
        return str(rows[0][0]) if rows else None

    def opening_reads(self) -> tuple[str | None, bool]:
        """What opening the catalog reads after its schema's version (:func:`pdi.archive.catalog.opening.open_store`):
        the blob store it records (:meth:`blob_store_url`), and whether messages may wait for the thread index
        (:meth:`pdi.archive.catalog.messages.MessagesPart.fill_message_heads` looks). Here read now; a PostgreSQL
        catalog read them with its schema's version, in the opening's one statement, and hands them over once."""
        return self.blob_store_url(), True

    def holds_documents(self) -> bool:
        """Whether any representation is deposited (its octets in the archive's blob store)."""
        with self._read():
            return bool(self._query("SELECT 1 FROM representations LIMIT 1"))

    def record_blob_store(self, url: str) -> None:
        """Record the external blob store of a new archive (one that names no blob yet)."""
        with self._write():
            if self._query("SELECT 1 FROM representations LIMIT 1"):  # one deposited since holds_documents asked
                raise ImmutabilityError(
                    f"the archive at {self.location} already holds documents in its own blob store;"
                    " a blob store is chosen when an archive is made (run pdi init without --blobs)"
                )
            self._query("INSERT INTO blob_store (id, url, created_at) VALUES (1, ?, ?)", (url, timestamp()))

    def move_blob_store(self, url: str) -> None:
        """Record ``url`` as the external blob store instead of the one recorded (a restore into another bucket,
        :func:`pdi.archive.restore.restore`, which puts every blob there)."""
        with self._write():
            self._query("UPDATE blob_store SET url = ? WHERE id = 1", (url,))

    def schema_version(self) -> int:
        with self._read():
            if not self._has_table("schema_migrations"):
                return 0
            rows = self._query("SELECT MAX(version) FROM schema_migrations")
        return int(rows[0][0] or 0)

    def _too_new(self, current: int) -> StoreError:
        return StoreError(
            f"the archive at {self.location} has schema version {current}, newer than "
            f"this pdi understands ({SCHEMA_VERSION}); upgrade pdi"
        )

    def refuse_newer_schema(self) -> int:
        """The schema version, unchanged; a :class:`StoreError` when it is newer than this pdi knows."""
        current = self.schema_version()
        if current > SCHEMA_VERSION:
            raise self._too_new(current)
        return current

    def open_schema(self, older: OlderSchema, *, create: bool) -> int:
        """The schema version as an opening leaves it, ``older`` saying what it does with an older catalog
        (:data:`~pdi.archive.store.OlderSchema`): migrated, refused (:class:`OlderSchemaError`, before anything is
        written) or kept. A catalog with no schema yet is made with ``create``; without it, ``"refuse"`` refuses
        it as no archive (:class:`NotFoundError`). A newer one is refused whatever ``older`` says."""
        if older == "migrate":
            return self.migrate()
        current = self.refuse_newer_schema()
        if older == "keep" or current == SCHEMA_VERSION:
            return current
        if current == 0:
            if create:
                return self.migrate()
            raise NotFoundError(f"no archive at {self.location} (its catalog has no pdi tables): name the archive"
                                " (--archive, or PDI_ARCHIVE), or make one there with pdi init")
        raise self._too_old(current)

    def _too_old(self, current: int) -> OlderSchemaError:
        where = shlex.quote(self.location)
        return OlderSchemaError(
            f"the archive at {self.location} has schema version {current}, older than this pdi's"
            f" ({SCHEMA_VERSION}), and only pdi init migrates an archive: back it up and migrate it with"
            f" pdi init --archive {where} --backup DEST (pdi docs how-to/upgrade), once every older pdi that"
            " uses it is stopped; until then, use it with the pdi release that wrote it"
        )

    def migrate(self, target: int = SCHEMA_VERSION) -> int:
        """Apply missing migrations up to ``target``; returns the schema version now.

        A catalog already at ``target`` is only read (no write lock: opening an
        archive to read it never waits for a deposit in progress).
        """
        current = self.schema_version()
        if current > SCHEMA_VERSION:
            raise self._too_new(current)
        if current >= target:
            return current
        steps = migrations(self.id_pk, self.blob_type, self.blob_table, self.search_schema, self.deposit_schema,
                           self.names_schema, self.apart_schema, self.ascii_apart_schema, self.marks_schema)
        first: int | None = None
        try:
            with self._write():
                self._migrating()
                if not self._has_table("schema_migrations"):
                    self._query(
                        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
                    )
                rows = self._query("SELECT MAX(version) FROM schema_migrations")
                current = int(rows[0][0] or 0)
                if current > SCHEMA_VERSION:
                    raise self._too_new(current)
                first = current
                for version in range(current + 1, target + 1):
                    for statement in self._step(version, steps[version], target):
                        self._query(statement)
                    self._query(
                        "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                        (version, timestamp()),
                    )
                    current = version
                if 0 < first < current:  # an upgrade (not a new catalog's making): said in the audit log, in its commit
                    self._insert_audit(migration_record(first, current))
                self._migrated(first, current)
        except CommitUnknownError as exc:
            if first is None or first >= target:
                raise
            # the connection went as the COMMIT was sent: the server may have applied every step, or none
            raise CommitUnknownError(
                f"migrating the archive at {self.location} from schema version {first} to {target}: the connection"
                f" to the database server was lost as its transaction was committed, so whether it was applied is"
                f" unknown (the archive is at schema version {first} or {target}: every step or none)",
                look=f"run pdi init --archive again, which says its version and migrates it if it is still at"
                     f" {first} ({' '.join(str(exc.__cause__ or exc).split())})",
            ) from exc
        except StoreError as exc:
            if first is None or first >= target:
                raise
            # the steps ran in one transaction, rolled back: the operator is told the archive is as it was
            raise StoreError(
                f"migrating the archive at {self.location} from schema version {first} to {target} failed, and"
                f" nothing of it was applied (it is still at schema version {first}): {exc}"
            ) from exc
        return current

    def _step(self, version: int, statements: list[str], target: int) -> Sequence[str]:
        """Inside the migration's transaction to ``target``, as step ``version`` is to run: its statements (those
        :func:`migrations` made; SQLite makes step 16's from the catalog as it is then); steps 17 and 18 rewrite
        the passages they are about here (:meth:`_respace_all`). Step 19 on its way to 20 or later leaves
        PostgreSQL's index dropped: step 20 makes it, once. Step 21 adds its column unless it is there, and dates
        the documents a change of access made before it showed or withheld (:meth:`_date_earlier_access_changes`);
        step 22 and step 26 add their tables unless they are there, and steps 25 and 27 their columns, as the steps
        before them may run again without harm; step 24 writes the passages holding a variation selector again (:meth:`_unmark_all`)."""
        if version == SPACED_STEP:
            self._respace_all()
        elif version == RESPACED_STEP:
            self._respace_all(spaced_before=True)
        elif version == OPTIONAL_STEP:
            # PostgreSQL's index, made again after the passages are written: dropped first, not kept up as each is
            dropped = [statement for statement in statements if statement.startswith("ALTER TABLE search_passages DROP")]
            for statement in dropped:
                self._query(statement)
            self._unmark_all()
            if target >= ASCII_APART_STEP:
                return []  # step 20, in this transaction, makes the index again: made here too, it was made twice
            return [statement for statement in statements if statement not in dropped]
        elif version == ACCESS_DATED_STEP:
            if self._has_column("documents", "access_changed_at"):
                return []  # a catalog whose record of its steps was cut back to before this one (as the tests do)
            for statement in statements:
                self._query(statement)
            self._date_earlier_access_changes(timestamp())
            return []
        elif version == PARSE_REFUSALS_STEP and self._has_table("parse_refusals"):
            return []  # (likewise)
        elif version == RULES_MARKED_STEP and self._has_column("access_changes", "series"):
            return []  # (likewise)
        elif version == REGISTRIES_SEEN_STEP and self._has_table("registries_seen"):
            return []  # (likewise)
        elif version == RULES_COUNTED_STEP and self._has_column("series", "rules_changes"):
            return []  # (likewise)
        elif version == SELECTORS_STEP:
            from pdi.passages.fulltext import SELECTORS

            self._unmark_all(holding=SELECTORS, spaced_apart=True)
        return statements

    def _date_earlier_access_changes(self, now: str, page: int = 500) -> int:
        """Step 21, in the migration's transaction at ``now``: each document that a change of access made before
        it showed, or withheld, as the audit log tells (:mod:`pdi.archive.access_history`), dated ``now``
        (its ``access_changed_at``): an OAI-PMH harvester's next incremental harvest reads it again, or a deleted
        record of it (OAI-PMH 2.0 §2.7.1, §2.5.1). Reads only the documents of a series whose access the log
        changed, those an ``embargo`` entry names and those embargoed, a page at a time; how many are dated."""
        from pdi.archive.access import ACCESS
        from pdi.archive.access_history import (
            DocumentHistory,
            SeriesHistory,
            Setting,
            embargo_settings,
        )
        from pdi.archive.naming import key_of, parse_pdi
        from pdi.errors import PDIError

        records = {str(r[0]): SeriesRecord(str(r[0]), None if r[1] is None else str(r[1]), str(r[2]), str(r[3]),
                                           str(r[4]))
                   for r in self._query("SELECT name, parent, authority, created_at, access FROM series")}
        series_settings: dict[str, list[Setting]] = {}
        named: dict[DocumentKey, list[tuple[str, str]]] = {}
        for at, action, subject, detail, address in self._query(
                "SELECT at, action, subject, detail, address FROM audit_log"
                " WHERE action IN ('series-access', 'embargo') ORDER BY at, id"):
            if action == "series-access":  # from an address: a mirror following its origin (no token may)
                if str(detail) not in ACCESS:
                    continue  # not an access pdi wrote: it set none
                series_settings.setdefault(str(subject), []).append(Setting(str(at), str(detail), address is not None))
                continue
            try:
                key = key_of(parse_pdi(str(subject)))
            except PDIError:
                continue  # names no document: it embargoed none
            named.setdefault(key, []).append((str(at), str(detail)))
        history = SeriesHistory(records, series_settings)
        changed = history.changed()
        if not changed and not named and not self._query(
                "SELECT 1 FROM documents WHERE embargo_until IS NOT NULL"
                " UNION ALL SELECT 1 FROM versions WHERE embargo_until IS NOT NULL LIMIT 1"):
            return 0  # no change of access to read back: every document as deposited
        dated: list[int] = []
        dated_then: dict[str, list[int]] = {}
        last: object = None
        while True:
            rows = self._query(
                "SELECT d.id, d.series, d.day, d.unique_id, d.embargo_until, EXISTS (SELECT 1 FROM versions v"
                " WHERE v.document = d.id AND v.embargo_until IS NOT NULL) FROM documents d"
                + ("" if last is None else " WHERE d.id > ?") + " ORDER BY d.id LIMIT ?",
                ([] if last is None else [last]) + [page],
            )
            candidates = []
            for doc, series, day, unique_id, embargo, versions_embargoed in rows:
                key = DocumentKey(str(series), datetime.date.fromisoformat(str(day)), str(unique_id))
                if str(series) not in changed and embargo is None and not versions_embargoed and key not in named:
                    continue  # as it was since its deposit
                candidates.append((doc, series, key, embargo))
            # the candidates' versions, read a page of documents at a time (not one statement a document: a round
            # trip each on PostgreSQL)
            held: dict[int, dict[int, tuple[str, str | None]]] = {}
            for each in pages([int(c[0]) for c in candidates], MAX_PARAMETERS):
                for d, v, at, until in self._query(
                        "SELECT document, version, created_at, embargo_until FROM versions"
                        f" WHERE document IN ({', '.join('?' * len(each))})", each):
                    held.setdefault(int(d), {})[int(v)] = (str(at), None if until is None else str(until))
            for doc, series, key, embargo in candidates:
                settings = embargo_settings(named.get(key, ()))
                versions = held.get(int(doc), {})
                document = DocumentHistory(
                    str(series), None if embargo is None else str(embargo), versions, settings.pop(None, ()),
                    {v: s for v, s in settings.items() if v is not None},
                )
                if versions and document.dated_by_migration(history, now):
                    since = document.withheld_since(history, now)
                    if since is not None and any(at >= since for at, _ in versions.values()):
                        # a version deposited while it was withheld: its deleted record, which lists the versions
                        # it had when dated, is dated when it was withheld, never naming a version not shown
                        dated_then.setdefault(since, []).append(doc)
                    else:
                        dated.append(doc)
            if len(rows) < page:
                break
            last = rows[-1][0]
        for at, documents in [(now, dated), *dated_then.items()]:
            for each in pages(documents, MAX_PARAMETERS - 1):
                self._query(f"UPDATE documents SET access_changed_at = ? WHERE id IN ({', '.join('?' * len(each))})",
                            [at, *each])
        return len(dated) + sum(len(documents) for documents in dated_then.values())

    def _respace_all(self, page: int = 500, *, spaced_before: bool = False) -> int:
        """Every passage with a character of :data:`~pdi.passages.fulltext.UNSPACED` written as the index now holds
        it, a page of them at a time in the migration's transaction; how many. A passage written so already is left
        as it is. Before step 17 a :data:`~pdi.passages.fulltext.SPACER` in a passage stood for itself, and is
        written as a space, as a new passage's is; from it on (``spaced_before``) one is what step 17 put there."""
        from pdi.passages.fulltext import SPACER, UNSPACED, spaced

        done = 0
        last = -1
        while True:
            rows = self._query(
                f"SELECT id, body FROM search_passages WHERE id > ? AND {self.unspaced_filter} ORDER BY id LIMIT ?",
                (last, UNSPACED, page),
            )
            for pid, body in rows:
                written = spaced(str(body).replace(SPACER, ""))
                if written == body:
                    continue  # written so already (by this step, in a catalog taken back to an earlier step)
                now = written if spaced_before else spaced(str(body).replace(SPACER, " "))
                if now != body:
                    self._respace(int(pid), str(body), now)
                    done += 1
            if len(rows) < page:
                return done
            last = int(rows[-1][0])

    def _respace(self, passage: int, before: str, now: str) -> None:
        """Write passage ``passage``'s text ``before`` as ``now`` (and whatever the index keeps of it)."""
        self._query("UPDATE search_passages SET body = ? WHERE id = ?", (now, passage))

    def _unmark_all(self, page: int = 500, *, holding: str = "\u0080-\U0010ffff", spaced_apart: bool = False) -> int:
        """Every passage holding a character of ``holding`` (a character class's inside; by default any beyond
        ASCII) written again as a passage made now is, where that differs
        (:meth:`pdi.passages.fulltext.Passage.without_optional_marks`, :func:`pdi.passages.fulltext.spaced`), a page
        of them at a time in the migration's transaction; how many. One left with no word is taken out of the
        index. From step 19 on (``spaced_apart``) an :data:`~pdi.passages.fulltext.APART` in a passage is one
        :func:`~pdi.passages.fulltext.spaced` put there, taken out as a :data:`~pdi.passages.fulltext.SPACER` is;
        before it, it stood for itself. The passages it reads were made by a pdi of schema 23 or before, none with
        a tail (the next passage's first words after a :data:`~pdi.passages.fulltext.JOINT`, made since): a later
        step that writes passages again must split a tail off first (:meth:`_respace_all` likewise)."""
        from pdi.passages.fulltext import APART, OPTIONAL, SPACER, Passage

        optional = re.compile(f"[{OPTIONAL}]")
        done = 0
        last = -1
        while True:
            rows = self._query(
                f"SELECT id, start, body, runs FROM search_passages WHERE id > ? AND {self.unspaced_filter}"
                " ORDER BY id LIMIT ?",
                (last, holding, page),
            )
            for pid, start, body, runs in rows:
                text = str(body).replace(SPACER, "")
                was = Passage.decode(int(start), text.replace(APART, "") if spaced_apart else text, bytes(runs))
                now = was.without_optional_marks() if optional.search(was.text) else was
                if now is None or (now.start, now.indexed, now.runs) != (was.start, str(body), was.runs):
                    self._rewrite(int(pid), str(body), now)
                    done += 1
            if len(rows) < page:
                return done
            last = int(rows[-1][0])

    def _rewrite(self, passage: int, before: str, now: Passage | None) -> None:
        """Write passage ``passage`` (its text as indexed ``before``) as ``now``, or take it out (``None``), and
        whatever the index keeps of it."""
        if now is None:
            self._query("DELETE FROM search_passages WHERE id = ?", (passage,))
        else:
            self._query("UPDATE search_passages SET start = ?, body = ?, runs = ? WHERE id = ?",
                        (now.start, now.indexed, now.encoded_runs(), passage))

    def _migrating(self) -> None:
        """First in the migration's transaction (which commits the steps, or rolls them back, and which the
        failure of its ``COMMIT`` is said of): nothing here; PostgreSQL waits for any other process migrating."""

    def _migrated(self, before: int, now: int) -> None:
        """Inside the migration's transaction, before its commit: what must hold of the catalog after the steps
        ``before + 1`` to ``now`` (a :class:`StoreError` rolls them all back). Nothing here; SQLite checks its
        foreign keys after step 16."""
