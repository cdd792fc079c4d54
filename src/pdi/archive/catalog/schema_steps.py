"""The statements of each schema version: :func:`migrations` gives, for each version *n*, those that take a catalog
from *n-1* to *n* (tables, indexes, triggers); :class:`pdi.archive.catalog.schema.SchemaPart` runs them, and the
steps that rewrite rows (named by the ``…_STEP`` numbers here) when it reaches them.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "ACCESS_DATED_STEP", "ASCII_APART_STEP", "MARKS_IN_WORDS_STEP", "OPTIONAL_STEP", "PARSE_REFUSALS_STEP",
    "REGISTRIES_SEEN_STEP", "RESPACED_STEP", "RULES_COUNTED_STEP", "RULES_MARKED_STEP", "SELECTORS_STEP", "SPACED_STEP", "migrations",
]


def migrations(
    id_pk: str, blob_type: str, with_blob_table: bool, search: Sequence[str] = (), deposit: Sequence[str] = (),
    names: Sequence[str] = (), apart: Sequence[str] = (), ascii_apart: Sequence[str] = (), marks: Sequence[str] = (),
) -> dict[int, list[str]]:
    """Schema migrations by version; version *n* takes a catalog from *n-1* to *n*.

    ``search`` are the statements of the full-text index that differ by
    database (SQLite's FTS5 table, PostgreSQL's tsvector and GIN index);
    ``deposit`` those of step 14 (PostgreSQL's deposit function; none on SQLite);
    ``names`` those of step 15 (SQLite's table of serial names; none on PostgreSQL); ``apart`` those of step 19
    (PostgreSQL's index of each passage read again; none on SQLite), ``ascii_apart`` those of step 20 (the same,
    ASCII punctuation read as spaces; none on SQLite), ``marks`` those of step 23 (SQLite's index made again, each
    combining mark read in its word; none on PostgreSQL). Step 16's are made when it runs, from the
    catalog's own definitions (:meth:`SchemaPart._step`; none on PostgreSQL); step 24 has none (it writes
    passages again when it runs).
    """
    args = (id_pk, blob_type, with_blob_table, search)
    steps = [*_tables(*args), *_formats_and_blobs(*args), *_search_and_access(*args), *_purges_and_annotations(*args),
             _index_queue(), _small_blobs(*args), _message_threads(), _mirrors(), _mirror_withdrawals(),
             _mirror_tokens(), _deposit_function(deposit), _serial_names(names), _keyed_tables(), _spaced_passages(),
             _southeast_asian_passages(), _optional_marks_passages(apart), list(ascii_apart), _access_changes_dated(),
             _parse_refusals(), list(marks), _selectors_passages(), _rules_marked(), _registries_seen(),
             _rules_counted()]
    return {version: statements for version, statements in enumerate(steps, start=1)}


def _tables(id_pk: str, blob_type: str, with_blob_table: bool, search: Sequence[str]) -> list[list[str]]:
    """Steps 1 to 3: the tables of names and statements, their indexes, the audit log."""
    first = [
        """CREATE TABLE series (
            name TEXT PRIMARY KEY,
            parent TEXT REFERENCES series(name),
            authority TEXT NOT NULL,
            created_at TEXT NOT NULL)""",
        f"""CREATE TABLE documents (
            id {id_pk},
            series TEXT NOT NULL REFERENCES series(name),
            day TEXT NOT NULL,
            year INTEGER NOT NULL,
            month INTEGER NOT NULL,
            dom INTEGER NOT NULL,
            unique_id TEXT NOT NULL,
            serial INTEGER,
            created_at TEXT NOT NULL,
            UNIQUE (series, day, unique_id))""",
        """CREATE TABLE daily_serials (
            series TEXT NOT NULL REFERENCES series(name),
            day TEXT NOT NULL,
            last INTEGER NOT NULL,
            PRIMARY KEY (series, day))""",
        """CREATE TABLE versions (
            document INTEGER NOT NULL REFERENCES documents(id),
            version INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (document, version))""",
        """CREATE TABLE representations (
            document INTEGER NOT NULL,
            version INTEGER NOT NULL,
            format TEXT NOT NULL,
            media_type TEXT NOT NULL,
            charset TEXT,
            line_ending TEXT,
            sha256 TEXT NOT NULL,
            size BIGINT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (document, version, format),
            FOREIGN KEY (document, version) REFERENCES versions(document, version))""",
        f"""CREATE TABLE assertions (
            id {id_pk},
            document INTEGER NOT NULL REFERENCES documents(id),
            subject TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            who TEXT NOT NULL,
            at TEXT NOT NULL)""",
    ]
    if with_blob_table:
        first.append(f"CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, data {blob_type} NOT NULL)")
    second = [
        "CREATE INDEX documents_by_day ON documents (day, serial, unique_id)",
        "CREATE INDEX assertions_by_subject ON assertions (subject, id)",
        "CREATE INDEX representations_by_sha ON representations (sha256)",
    ]
    third = [
        # Every write, appended: who (a user, or a token's name), when, what, about
        # which name, from which address. Imports record themselves here today.
        f"""CREATE TABLE audit_log (
            id {id_pk},
            at TEXT NOT NULL,
            who TEXT NOT NULL,
            action TEXT NOT NULL,
            subject TEXT NOT NULL,
            detail TEXT NOT NULL,
            address TEXT)""",
    ]
    return [first, second, third]


def _formats_and_blobs(id_pk: str, blob_type: str, with_blob_table: bool, search: Sequence[str]) -> list[list[str]]:
    """Step 4: exact octets, chunk digests and fragment indexes (and PostgreSQL's blobs in chunk-sized rows)."""
    fourth = [
        # The deposited octets are kept exactly from now on; a text stored before
        # (its line-ending convention recorded) was kept only CRLF-canonical.
        "ALTER TABLE representations ADD COLUMN stored TEXT NOT NULL DEFAULT 'exact'",
        "UPDATE representations SET stored = 'canonical' WHERE line_ending IS NOT NULL",
        # One SHA-256 per chunk of each blob, so a range read verifies only what it touches.
        f"""CREATE TABLE blob_fixity (
            sha256 TEXT PRIMARY KEY,
            size BIGINT NOT NULL,
            chunk_size INTEGER NOT NULL,
            chunks {blob_type} NOT NULL,
            created_at TEXT NOT NULL)""",
        # What a fragment query reads instead of the whole text (pdi.fragments.build_index),
        # made once at deposit, for the octets of one blob read as one media type and charset.
        f"""CREATE TABLE fragment_indexes (
            sha256 TEXT NOT NULL,
            media_type TEXT NOT NULL,
            charset TEXT NOT NULL,
            data {blob_type} NOT NULL,
            PRIMARY KEY (sha256, media_type, charset))""",
    ]
    if with_blob_table:
        # Blobs uploaded in chunk-sized rows before (not inside) the catalog
        # transaction that names them; an old blob keeps its bytea.
        fourth += [
            f"""CREATE TABLE blob_uploads (
                id {id_pk},
                started_at TEXT NOT NULL,
                sha256 TEXT)""",
            """CREATE TABLE blob_parts (
                upload BIGINT NOT NULL REFERENCES blob_uploads(id) ON DELETE CASCADE,
                n INTEGER NOT NULL,
                data BYTEA NOT NULL,
                PRIMARY KEY (upload, n))""",
            # 1 MiB of already-compressed or random octets gains nothing from pglz
            "ALTER TABLE blob_parts ALTER COLUMN data SET STORAGE EXTERNAL",
            "ALTER TABLE blobs ALTER COLUMN data DROP NOT NULL",
            "ALTER TABLE blobs ADD COLUMN upload BIGINT REFERENCES blob_uploads(id)",
        ]
    return [fourth]


def _search_and_access(id_pk: str, blob_type: str, with_blob_table: bool, search: Sequence[str]) -> list[list[str]]:
    """Step 5: the full-text index, tokens, withdrawals, idempotency keys, the reader's indexes, blob stagings."""
    fifth = [
        # Bearer tokens of the write API: only a SHA-256 of each is kept (pdi.archive.tokens).
        f"""CREATE TABLE tokens (
            id {id_pk},
            name TEXT NOT NULL UNIQUE,
            digest TEXT NOT NULL UNIQUE,
            role TEXT NOT NULL,
            series TEXT NOT NULL,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            revoked_at TEXT)""",
        # The first answer to each Idempotency-Key of a token, written in the
        # transaction of the write it answers, so a retry can never mint twice.
        """CREATE TABLE idempotency_keys (
            token INTEGER NOT NULL REFERENCES tokens(id),
            key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            series TEXT NOT NULL,
            day TEXT NOT NULL,
            unique_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            unchanged INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            item INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (token, key, item))""",
        # Tombstones: a version (or, version NULL, a whole document) withdrawn, and why.
        f"""CREATE TABLE withdrawals (
            id {id_pk},
            document INTEGER NOT NULL REFERENCES documents(id),
            version INTEGER,
            reason TEXT NOT NULL,
            who TEXT NOT NULL,
            at TEXT NOT NULL)""",
        "CREATE INDEX withdrawals_by_document ON withdrawals (document, version)",
        # The reader's pages: the captures of one URL (documents whose encapsulated
        # id is that URL) over every day and series, and a document's statements.
        "CREATE INDEX documents_by_unique_id ON documents (unique_id, day, series)",
        "CREATE INDEX assertions_by_document ON assertions (document, id)",
        # How many documents each series has on each GMT day, and when any of them
        # last had a deposit, kept by the deposit's transaction (as daily_serials is),
        # so counts by year, month and day read a row a day rather than every document.
        """CREATE TABLE document_days (
            series TEXT NOT NULL REFERENCES series(name),
            day TEXT NOT NULL,
            documents BIGINT NOT NULL,
            last_deposit TEXT,
            PRIMARY KEY (series, day))""",
        "INSERT INTO document_days (series, day, documents, last_deposit)"
        " SELECT d.series, d.day, COUNT(DISTINCT d.id), MAX(r.created_at) FROM documents d"
        " LEFT JOIN representations r ON r.document = d.id GROUP BY d.series, d.day",
        # Each fixity check of a blob (pdi verify): when, and whether its bytes
        # still had their SHA-256 and size (problem: what was found when not).
        """CREATE TABLE fixity_checks (
            sha256 TEXT NOT NULL,
            checked_at TEXT NOT NULL,
            ok INTEGER NOT NULL,
            problem TEXT,
            PRIMARY KEY (sha256, checked_at))""",
        # The full-text index (pdi.passages.fulltext), made at deposit for the octets of one blob
        # read as one media type and charset: which were indexed (passages: how many;
        # note: why none, when the text could not be read), and their passages.
        """CREATE TABLE search_sources (
            sha256 TEXT NOT NULL,
            media_type TEXT NOT NULL,
            charset TEXT NOT NULL,
            passages INTEGER NOT NULL,
            note TEXT,
            indexed_at TEXT NOT NULL,
            PRIMARY KEY (sha256, media_type, charset))""",
        f"""CREATE TABLE search_passages (
            id {id_pk},
            sha256 TEXT NOT NULL,
            media_type TEXT NOT NULL,
            charset TEXT NOT NULL,
            start BIGINT NOT NULL,
            body TEXT NOT NULL,
            runs {blob_type} NOT NULL)""",
        "CREATE INDEX search_passages_by_source ON search_passages (sha256, media_type, charset, start)",
        *search,
        # Where the blobs live when not in the catalog's own store: one row,
        # e.g. s3://bucket/prefix (never a credential). No row: files or PostgreSQL.
        """CREATE TABLE blob_store (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            url TEXT NOT NULL,
            created_at TEXT NOT NULL)""",
        # Blobs being staged in an external blob store by a deposit in progress:
        # the remover keeps their objects (pdi.archive.blobs.s3).
        """CREATE TABLE blob_stagings (
            id TEXT PRIMARY KEY,
            sha256 TEXT,
            started_at TEXT NOT NULL)""",
    ]
    return [fifth]


def _purges_and_annotations(id_pk: str, blob_type: str, with_blob_table: bool, search: Sequence[str]) -> list[list[str]]:
    """Steps 6 and 7: purges, private series and embargoes; kept annotations."""
    sixth = [
        # Purge (a legal takedown of a withdrawn name): when a representation's
        # octets were deleted (NULL: kept), and whether a withdrawal purged them.
        "ALTER TABLE representations ADD COLUMN purged TEXT",
        "ALTER TABLE withdrawals ADD COLUMN purged INTEGER NOT NULL DEFAULT 0",
        # Private series (pdi.archive.access): public, private (403) or hidden (404).
        "ALTER TABLE series ADD COLUMN access TEXT NOT NULL DEFAULT 'public'",
        # Embargoes: a whole document or one version unreadable until then (a catalog timestamp).
        "ALTER TABLE documents ADD COLUMN embargo_until TEXT",
        "ALTER TABLE versions ADD COLUMN embargo_until TEXT",
        # One row per change of who may read what, so every resolver's cache can
        # tell that an answer it keeps may no longer be public (pdi.server.process.cache).
        f"""CREATE TABLE access_changes (
            id {id_pk},
            at TEXT NOT NULL)""",
    ]
    seventh = [
        # The annotation server (pdi.archive.kept_annotations, W3C Web Annotation Protocol): each annotation's
        # JSON without its id (slug: its name in the container, never used again once deleted), and
        # the archived documents it targets, whose readers alone may read it.
        f"""CREATE TABLE annotations (
            id {id_pk},
            slug TEXT NOT NULL UNIQUE,
            data TEXT NOT NULL,
            revision INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            modified_at TEXT,
            deleted_at TEXT)""",
        """CREATE TABLE annotation_targets (
            annotation BIGINT NOT NULL REFERENCES annotations(id),
            document BIGINT NOT NULL REFERENCES documents(id),
            version INTEGER)""",
        "CREATE INDEX annotation_targets_by_annotation ON annotation_targets (annotation)",
        "CREATE INDEX annotation_targets_by_document ON annotation_targets (document)",
        # The embargoes not yet over, found by index (few rows), so that every list a reader
        # without a token is shown leaves them out at the cost of the embargoes alone (issue 22).
        "CREATE INDEX documents_embargoed ON documents (embargo_until) WHERE embargo_until IS NOT NULL",
        "CREATE INDEX versions_embargoed ON versions (embargo_until) WHERE embargo_until IS NOT NULL",
    ]
    return [sixth, seventh]


def _index_queue() -> list[str]:
    """Step 8: the indexer's queue (:mod:`pdi.archive.search`).

    One row for the octets of a blob read as one media type and charset
    (what ``search_sources`` keys) whose full-text passages a deposit left to
    the background indexer, written in the deposit's own transaction. A
    worker leases a row (``leased_until``, ``leased_by``) while it builds;
    a worker killed mid-way leaves the lease to run out and the row to be
    taken again. ``attempts`` and ``error`` say how the last tries went.
    """
    return [
        """CREATE TABLE index_queue (
            sha256 TEXT NOT NULL,
            media_type TEXT NOT NULL,
            charset TEXT NOT NULL,
            size BIGINT NOT NULL,
            queued_at TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            leased_until TEXT,
            leased_by TEXT,
            error TEXT,
            PRIMARY KEY (sha256, media_type, charset))""",
        "CREATE INDEX index_queue_by_lease ON index_queue (leased_until, queued_at)",
    ]


def _small_blobs(id_pk: str, blob_type: str, with_blob_table: bool, search: Sequence[str]) -> list[str]:
    """Step 9: small blobs in the catalog's own rows (:mod:`pdi.archive.blobs.inline`).

    A blob of at most 64 KiB a deposit brings is one row of ``blobs``,
    written by the deposit's own transaction, beside a SQLite catalog as
    beside a PostgreSQL one (whose ``blobs`` table, of step 1, holds them
    already): no file, so nothing to make durable but the commit.
    """
    if with_blob_table:
        return []
    return [f"CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, data {blob_type} NOT NULL)"]


def _message_threads() -> list[str]:
    """Step 10: the thread index of e-mail messages (:mod:`pdi.archive.catalog.messages`, ``docs/email.md`` §4).

    For the octets of each blob deposited as a message (``message/rfc822``),
    keyed as ``fragment_indexes`` is by its SHA-256: its ``Message-ID``, the id
    it replies to (``parent``: In-Reply-To's last, else References' last) and
    every id its ``References`` and ``In-Reply-To`` name, in order. A thread
    finds a message by its id and its replies by their parent through an
    index, in any series and on any day, instead of scanning the days after
    it. A row is written by the deposit's own transaction; the messages
    deposited before this step are listed in ``message_heads_pending``, read
    (their header fields only) once the archive is opened with its blob store
    and removed from it in the transaction that writes their rows.
    """
    return [
        """CREATE TABLE message_heads (
            sha256 TEXT PRIMARY KEY,
            message_id TEXT,
            parent TEXT,
            read_at TEXT NOT NULL)""",
        "CREATE INDEX message_heads_by_id ON message_heads (message_id) WHERE message_id IS NOT NULL",
        "CREATE INDEX message_heads_by_parent ON message_heads (parent) WHERE parent IS NOT NULL",
        """CREATE TABLE message_references (
            sha256 TEXT NOT NULL,
            n INTEGER NOT NULL,
            message_id TEXT NOT NULL,
            PRIMARY KEY (sha256, n))""",
        "CREATE INDEX message_references_by_id ON message_references (message_id)",
        "CREATE TABLE message_heads_pending (sha256 TEXT PRIMARY KEY)",
        "INSERT INTO message_heads_pending (sha256) SELECT DISTINCT sha256 FROM representations"
        " WHERE media_type = 'message/rfc822' AND purged IS NULL",
    ]


def _mirrors() -> list[str]:
    """Step 11: the other archives that hold a series (:mod:`pdi.archive.catalog.mirrors`, ``docs/reference/mirrors.md``).

    One row for each archive known to hold a copy of a series: ``origin``,
    the archive this one mirrors the series from (``pdi mirror add``; at most
    one a series), or ``peer``, another archive holding a copy
    (``pdi mirror add --peer``: the origin records its mirrors so). ``jwk``
    is the peer's public key, pinned when it was added: its manifests are
    checked with it, never with a key fetched later. ``synced_at`` is when
    the last ``pdi mirror sync`` of the series ended whole.
    """
    return [
        """CREATE TABLE mirrors (
            series TEXT NOT NULL,
            base_url TEXT NOT NULL,
            role TEXT NOT NULL,
            jwk TEXT NOT NULL,
            added_at TEXT NOT NULL,
            synced_at TEXT,
            PRIMARY KEY (series, base_url))""",
    ]


def _mirror_withdrawals() -> list[str]:
    """Step 12: names of a mirrored series withdrawn at its origin before this archive held them.

    A mirror's sync (:mod:`pdi.network.mirrors`) finds a name its origin's
    signed manifest lists as withdrawn: held here, it is withdrawn here too
    (a tombstone of ``withdrawals``); never held, its tombstone is this row,
    so that the mirror answers ``410``, as the origin does, not ``404``.
    ``withdrawn_at`` is the origin's time, ``purged`` 1 when its octets were
    purged there, ``origin`` the base URL it was learnt from.
    """
    return [
        """CREATE TABLE mirror_withdrawals (
            series TEXT NOT NULL,
            day TEXT NOT NULL,
            unique_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            format TEXT NOT NULL,
            withdrawn_at TEXT NOT NULL,
            purged INTEGER NOT NULL,
            origin TEXT NOT NULL,
            recorded_at TEXT NOT NULL,
            PRIMARY KEY (series, day, unique_id, version, format))""",
    ]


def _mirror_tokens() -> list[str]:
    """Step 13: where the token a mirror reads its origin's private and embargoed names with is kept.

    ``token_source`` is ``file:PATH`` (a file, mode 0600) or
    ``env:VARIABLE`` (an environment variable of the process that syncs),
    ``NULL`` for none: the catalog never holds the token itself, as the
    archive's signing key is a file beside it, not a row in it
    (:mod:`pdi.network.mirror_tokens`).
    """
    return ["ALTER TABLE mirrors ADD COLUMN token_source TEXT"]


def _deposit_function(deposit: Sequence[str]) -> list[str]:
    """Step 14: what the database runs of a small deposit itself (PostgreSQL: :data:`pdi.archive.postgres.DEPOSIT_ONE`).

    A function, so that the server plans its statements once a connection
    rather than at every deposit; SQLite, in the depositing process, has
    nothing to plan again and nothing here.
    """
    return list(deposit)


def _serial_names(names: Sequence[str]) -> list[str]:
    """Step 15: each name a resolver is asked for most, spelled as ``pdi add`` prints it, one row keyed by it
    (SQLite: :data:`pdi.archive.sqlite.SERIAL_NAMES`, kept by triggers; none on PostgreSQL).

    A resolver answers a name it has not been asked for before by one walk
    down one B-tree instead of the five tables of a version
    (:meth:`pdi.archive.sqlite.SQLiteStore.public_serial_version`).
    """
    return list(names)


def _keyed_tables() -> list[str]:
    """Step 16: the tables every deposit writes kept by their keys alone (SQLite: four pages fewer a deposit written
    to its log, each key kept once), with statements made when it runs from the catalog's own definitions
    (:func:`pdi.archive.catalog.keyed_tables.keyed`, through :meth:`SchemaPart._step`), with foreign keys off and
    checked before the commit; none on PostgreSQL, whose tables are so already."""
    return []


#: The step that writes the full-text index's passages of Chinese and Japanese text again (:func:`_spaced_passages`).
SPACED_STEP = 17


def _spaced_passages() -> list[str]:
    """Step 17: the passages holding characters of scripts written without spaces (Han, kana, Bopomofo) are
    written again as the index now holds them (:func:`pdi.passages.fulltext.spaced`: each character a word of
    its own), so that a search finds a word inside a sentence; done when it runs (:meth:`SchemaPart._step`,
    :meth:`SchemaPart._respace_all`), by reading the passages, so no statement here."""
    return []


#: The step that writes again the passages of Thai, Lao, Myanmar, Khmer and the Tai scripts (and of a kana with a
#: combining sound mark) as the index now holds them (:func:`_southeast_asian_passages`).
RESPACED_STEP = 18


def _southeast_asian_passages() -> list[str]:
    """Step 18: the passages holding characters of Thai, Lao, Myanmar, Khmer or the Tai scripts, which are written
    without spaces between words too, are written again with each character a word of its own, its combining marks
    kept with it (:func:`pdi.passages.fulltext.spaced`); so is one with a kana's combining sound mark, which now
    stays with its kana. As step 17, done when it runs (:meth:`SchemaPart._respace_all`)."""
    return []


#: The step that writes again the passages holding marks a writer may leave out (Arabic's harakat, Hebrew's points:
#: :data:`pdi.passages.fulltext.OPTIONAL_RANGES`) without them (:func:`_optional_marks_passages`).
OPTIONAL_STEP = 19


def _optional_marks_passages(apart: Sequence[str]) -> list[str]:
    """Step 19: the passages holding marks of :data:`~pdi.passages.fulltext.OPTIONAL_RANGES` (Arabic's harakat,
    tanwin and shadda, its tatweel, Hebrew's points and cantillation, Syriac's vowels) are written again without
    them, each letter before a run of them standing for itself and them in the document, as a passage made now is
    (:class:`pdi.passages.fulltext.PassageBuilder`): a search then finds a word however it was vowelled; and the
    passages holding punctuation, symbols or spaces beyond ASCII (``“walrus”``, ``l’eau``, ``…``, ``،``) are
    written with a separator beside each (:func:`pdi.passages.fulltext.spaced`), which PostgreSQL's parser read as
    letters in a database of ``LC_CTYPE`` ``C``. As steps 17 and 18, done when it runs
    (:meth:`SchemaPart._unmark_all`), reading the passages that hold a character beyond ASCII; then, on
    PostgreSQL, ``apart``: its index made again reading the character between two
    :data:`~pdi.passages.fulltext.APART` as a space (:data:`pdi.archive.postgres_text.INDEXED_BODY`)."""
    return list(apart)


#: The step that makes PostgreSQL's full-text index again reading each ASCII punctuation character as a space, as
#: SQLite's FTS5 reads it (:data:`pdi.archive.postgres_text.INDEXED_BODY`: a word of an e-mail address, a host, a URL, a
#: path or a version was no word of its own there); no statement on SQLite, whose index reads them so already.
ASCII_APART_STEP = 20


#: The step that dates changes of access in the catalog (:func:`_access_changes_dated`).
ACCESS_DATED_STEP = 21


def _access_changes_dated() -> list[str]:
    """Step 21: when a change of who may read last changed what a reader without access to a document's series is
    shown of it (:meth:`pdi.archive.catalog.access.AccessPart.set_embargo`, :meth:`~pdi.archive.catalog.access.
    AccessPart.set_series_access`): the document shown (an embargo lifted early or moved into the past, its series
    made public), withheld (an embargo set on it, its series made private or hidden) or a version of it shown or
    withheld. An OAI-PMH record's datestamp counts it (OAI-PMH 2.0 §2.7.1), and a record withheld after it was
    shown is a deleted record dated by it (§2.5.1). ``NULL``: none. A catalog before it has the changes of
    access its audit log records dated at the migration, on the documents they showed or withheld
    (:meth:`SchemaPart._date_earlier_access_changes`)."""
    return ["ALTER TABLE documents ADD COLUMN access_changed_at TEXT"]


#: The step that remembers the parses a mirror's sync could not keep (:func:`_parse_refusals`).
PARSE_REFUSALS_STEP = 22


def _parse_refusals() -> list[str]:
    """Step 22: the SGML documents of a mirrored series whose parse a sync could not keep (neither made here as its
    origin made it, nor brought from the origin: :mod:`pdi.network.mirrors`), by their octets read as one media
    type and charset (as ``fragment_indexes`` keys them): the SHA-256 of the parse the origin signed then
    (``origin_parse``), what this archive parses with then (``here``: its SGML folder's files and whether
    ``onsgmls`` is there), how many syncs in a row could not (``refusals``), when the last did, why, and from when
    the next tries again (``retry_at``). A sync before then asks nothing and parses nothing, unless the origin
    signs another parse or ``here`` changed; a parse kept takes the row away."""
    return [
        """CREATE TABLE parse_refusals (
            sha256 TEXT NOT NULL,
            media_type TEXT NOT NULL,
            charset TEXT NOT NULL,
            origin_parse TEXT NOT NULL,
            here TEXT NOT NULL,
            refusals INTEGER NOT NULL,
            refused_at TEXT NOT NULL,
            retry_at TEXT NOT NULL,
            why TEXT NOT NULL,
            PRIMARY KEY (sha256, media_type, charset))""",
    ]


#: The step that makes SQLite's full-text index again reading each combining mark (a vowel sign, a tone mark) as
#: part of its word, as PostgreSQL's parser does (:data:`pdi.archive.sqlite.FTS5_TOKENIZER`): FTS5 read it as a
#: separator, so ``काल`` was found in ``कील`` and ``กิ`` in a bare ``ก``; the passages stay as they are.
MARKS_IN_WORDS_STEP = 23

#: The step that writes again the passages holding variation selectors without them (:func:`_selectors_passages`).
SELECTORS_STEP = 24


def _selectors_passages() -> list[str]:
    """Step 24: the passages holding variation selectors (:data:`pdi.passages.fulltext.SELECTOR_RANGES`: ``葛󠄀``,
    U+845B and U+E0100; U+FE00 to U+FE0F; Mongolian's) are written again without them, each character before
    them standing for itself and them in the document, as a passage made now is (the selectors are marks of
    :data:`~pdi.passages.fulltext.OPTIONAL_RANGES` now): PostgreSQL's parser read ``葛󠄀`` as a word ``葛`` did not
    find, and SQLite's FTS5 read a selector as a separator, cutting a Mongolian word in two. As step 19, done when it
    runs (:meth:`SchemaPart._unmark_all`), reading only the passages that hold a selector (the database scans every
    one for them: about 2.5 s for each 30 MB of text on SQLite); each engine keeps its
    index up as a passage is written, so no statement here."""
    return []


#: The step that tells each change of who may read what by its series (:func:`_rules_marked`).
RULES_MARKED_STEP = 25


def _rules_marked() -> list[str]:
    """Step 25: each change of who may read what says the series it changed (``access_changes.series``: the
    series made public, private or hidden, or the series of the document whose embargo was set, changed or lifted;
    ``NULL`` for the changes made before this step), so that a manifest page signs how many changes of its series'
    rules there have been (``rules``, :mod:`pdi.archive.manifests`); and a mirror records the most its origin has
    signed (``mirrors.rules_seen``, ``NULL``: none yet), refusing a page that says fewer: an older page replayed,
    which would lift a rule the origin set since (:mod:`pdi.network.mirror_access`)."""
    return [
        "ALTER TABLE access_changes ADD COLUMN series TEXT",
        "CREATE INDEX access_changes_by_series ON access_changes (series)",
        "ALTER TABLE mirrors ADD COLUMN rules_seen INTEGER",
    ]


#: The step that records the newest ``issued`` of each registry ``pdi serve --registry`` loaded (:func:`_registries_seen`).
REGISTRIES_SEEN_STEP = 26


def _registries_seen() -> list[str]:
    """Step 26: the newest signed registry each ``pdi serve --registry`` source (a URL without its userinfo, or a
    file's real path: :func:`pdi.federation.authorities.registry_source`) was issued (``issued``, as signed, and
    ``issued_order``, the same time written so that text order is time order), and when it was seen: a registry
    issued before it is refused as a replay after a restart too, and by every worker and resolver sharing the
    archive, not by the process that saw the newer one alone (:mod:`pdi.archive.registries`)."""
    return [
        """CREATE TABLE registries_seen (
            source TEXT PRIMARY KEY,
            issued TEXT NOT NULL,
            issued_order TEXT NOT NULL,
            seen_at TEXT NOT NULL)""",
    ]


#: The step that counts each series' changes of who may read what on its own row (:func:`_rules_counted`).
RULES_COUNTED_STEP = 27


def _rules_counted() -> list[str]:
    """Step 27: each series counts the changes of who may read what made to it on its own row
    (``series.rules_changes``, from step 25's rows of ``access_changes`` that name it), so that a manifest page
    reads its signed ``rules`` in the same time however many changes there have been, and an import that brings a
    larger count sets it, not a row a change; step 25's index, which only that counting read, goes."""
    return [
        "ALTER TABLE series ADD COLUMN rules_changes BIGINT NOT NULL DEFAULT 0",
        "UPDATE series SET rules_changes = (SELECT COUNT(*) FROM access_changes a WHERE a.series = series.name)",
        "DROP INDEX access_changes_by_series",
    ]
