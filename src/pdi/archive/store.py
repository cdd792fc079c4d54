"""The catalog's records: what the archive and its catalog hand each other.

The catalog itself is :mod:`pdi.archive.catalog` (series, documents,
versions, representations, assertions, daily serial counters), holding a
blob store (``blobs``: the bytes of every representation,
:class:`pdi.archive.blobs.seam.BlobStore`); its blob methods ask the blob
store, by the rules the catalog keeps for any. Every operation that changes
something is one transaction: a deposit is either wholly in the store or not
at all, and the daily serial a deposit takes is allocated inside the same
transaction, so serials are gap-free and never reused even when several
processes mint at once or one dies midway.

Two catalogs: :mod:`pdi.archive.sqlite` (SQLite in WAL mode, with
content-addressed blob files by default, the embedded default) and
:mod:`pdi.archive.postgres` (PostgreSQL through psycopg 3, with its blobs in
its own database by default). Both are :class:`pdi.archive.catalog.SQLStore`
with their dialect; either can hold an S3-compatible blob store instead
(:mod:`pdi.archive.blobs.s3`), composed at opening
(:mod:`pdi.archive.catalog.opening`). The values here are what
:class:`pdi.archive.Archive` and the catalog pass between them.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Literal

# The blob seam's own types, named here too for the catalog's callers (re-exported).
from pdi.archive.blobs.seam import BlobObserver as BlobObserver
from pdi.archive.blobs.seam import BlobPin as BlobPin
from pdi.archive.blobs.seam import BlobSource as BlobSource
from pdi.archive.blobs.seam import StagedBlob as StagedBlob
from pdi.archive.blobs.seam import blob_octets as blob_octets

if TYPE_CHECKING:
    from dataclasses import dataclass

    from pdi.mail.message import ThreadIds
else:
    from pdi._later import dataclass

#: The schema version this code writes. An older catalog is migrated forward by ``pdi init`` alone
#: (:data:`OlderSchema`); a newer one is refused.
SCHEMA_VERSION = 27

#: What opening a catalog whose schema is older than :data:`SCHEMA_VERSION` does with it: ``"migrate"`` it
#: forward (``pdi init``, :meth:`pdi.archive.Archive.init`), ``"refuse"`` it before anything is changed
#: (:class:`~pdi.errors.OlderSchemaError`: every other command, the resolver,
#: :meth:`pdi.archive.Archive.open`), or ``"keep"`` it as it is (a backup and a restore copy it, fit only for
#: reading what every released schema has). A new catalog (no schema yet) is made whatever this says, where
#: making one is asked for; a newer one is refused whatever this says.
OlderSchema = Literal["migrate", "refuse", "keep"]

#: How a representation's octets are kept: ``exact`` (as deposited, the
#: default since schema 4) or ``canonical`` (a text deposited before then,
#: stored only in its CRLF-canonical form: the deposited line endings are lost).
STORED_EXACT = "exact"
STORED_CANONICAL = "canonical"


@dataclass(frozen=True)
class SeriesRecord:
    """A registered document series; ``parent`` is the series it was delegated under."""

    name: str
    parent: str | None
    authority: str
    created_at: str
    #: Who may read it (pdi.archive.access): ``public``, ``private`` (403 to
    #: readers without a token for it) or ``hidden`` (private, and 404: even existence).
    access: str = "public"


@dataclass(frozen=True)
class NewRepresentation:
    """One format of a deposit, checked and its octets already staged (:meth:`Store.stage_blob`)."""

    format: str
    media_type: str
    charset: str | None
    line_ending: str | None
    blob: StagedBlob
    #: What fragment queries read instead of the whole (pdi.fragments.build_index), or None.
    index: bytes | None = None
    #: Its text for the full-text index (a :class:`pdi.archive.search.Passages`), or None.
    passages: Any = None
    #: An e-mail message's ids for the thread index (schema 10), or None: not a message.
    thread: ThreadIds | None = None

    @property
    def sha256(self) -> str:
        return self.blob.info.sha256

    @property
    def size(self) -> int:
        return self.blob.info.size


@dataclass(frozen=True)
class RepresentationRecord:
    """One stored format of one version of one document."""

    series: str
    day: datetime.date
    unique_id: str
    serial: int | None
    version: int
    format: str
    media_type: str
    charset: str | None
    line_ending: str | None
    sha256: str
    size: int
    created_at: str
    stored: str = STORED_EXACT
    #: When its octets were purged (a legal takedown of a withdrawn name); ``None``: they are kept.
    purged: str | None = None


@dataclass(frozen=True)
class PublicVersion:
    """What one catalog statement tells of a versioned name anyone may read now (:meth:`SQLStore.public_version`).

    The records of every format of the version (in format order), the one
    named, and where its octets are with their chunk digests: a blob file, or
    (a small blob's) the octets its catalog row holds.
    """

    records: tuple[RepresentationRecord, ...]
    record: RepresentationRecord
    #: The blob file's path, its size and its 32-octet chunk digests (concatenated), each chunk ``chunk_size``.
    path: str
    size: int
    chunk_size: int
    chunks: bytes
    #: The octets of a small blob kept in the catalog's row (:mod:`pdi.archive.blobs.inline`), else ``None``: read ``path``.
    data: bytes | None = None


#: What :meth:`~pdi.archive.catalog.SQLStore.public_serial_named` tells of a serial name anyone may read now whose
#: version has one format and whose octets are a small blob kept in the catalog's row: its media type, charset, SHA-256
#: (hex, as the catalog keeps it: the octets' digest is that hex's only if it spells one as pdi writes it), deposit
#: time (as the catalog keeps it) and octets (not yet checked: one chunk, whose digest is the SHA-256). A tuple, not
#: a record: a resolver's first asking of a name makes one, and nothing else of it.
SmallPublic = tuple[str, "str | None", str, str, bytes]


@dataclass(frozen=True)
class DocumentKey:
    """A document (a generic, unversioned name): series, GMT day of minting, unique id."""

    series: str
    day: datetime.date
    unique_id: str


@dataclass(frozen=True)
class DepositResult:
    """What a deposit created: the document's key and the version.

    ``unchanged``: nothing was created, as the latest version ``version``
    already holds exactly these representations (a deposit with ``skip_identical``).
    """

    key: DocumentKey
    version: int
    unchanged: bool = False
    #: the answer of an earlier request with the same Idempotency-Key (nothing was created now)
    replayed: bool = False


@dataclass(frozen=True)
class Idempotency:
    """A write's ``Idempotency-Key``, scoped to the token that sent it, and what identifies its request.

    ``fingerprint`` is a digest of the request (its method, target and
    parameters, and the SHA-256 of each body); the same key with another
    fingerprint is another request (draft-ietf-httpapi-idempotency-key-header §2.6).
    """

    token: int
    key: str
    fingerprint: str


@dataclass(frozen=True)
class WriteNote:
    """What a write records in the very transaction that makes it: its audit entry, and its idempotency key.

    ``subject`` names the document written, from its key, for the audit log
    (the store does not spell names). ``detail`` is the audit entry's detail;
    a deposit's is ``names`` of what it wrote.
    """

    who: str
    action: str
    subject: Callable[[DocumentKey], str]
    detail: str = ""
    address: str | None = None
    idempotency: Idempotency | None = None
    #: The version written is embargoed until this time (a catalog timestamp), set in the same transaction.
    embargo_until: str | None = None
    #: The exact versioned names a deposit wrote (from the item's place in the write, its document and version
    #: number), for the entry's detail.
    names: Callable[[int, DocumentKey, int], str] | None = None
    #: The token writing (its row id): still live in the transaction that writes, or nothing is written.
    token: int | None = None


@dataclass(frozen=True)
class WithdrawalRecord:
    """A tombstone: a version (``version``) or a whole document (``None``) taken out of service, and why.

    The name stays (it is never minted again) and resolves to this record
    instead of its bytes, which the archive keeps.
    """

    key: DocumentKey
    version: int | None
    reason: str
    who: str
    at: str
    id: int = 0
    #: Whether this withdrawal (or, from :meth:`Store.withdrawal`, any over the same name) purged the octets.
    purged: bool = False
    #: From a purge: the SHA-256 of each blob kept because another name that keeps its octets
    #: (or a deposit in progress) holds the same bytes.
    kept: tuple[str, ...] = ()
    #: From :meth:`~pdi.archive.Archive.withdraw`: the name was withdrawn before (this is that tombstone), and
    #: nothing was changed or recorded.
    earlier: bool = False


@dataclass(frozen=True)
class EmbargoChange:
    """What :meth:`~pdi.archive.Archive.embargo` changed of a name's own embargo, and what still holds it.

    ``name`` is a generic name (the document's own embargo) or a versioned one (that version's). ``before`` and
    ``after`` are its own embargo's end before and after (catalog moments, over or not; ``None``: none set).
    ``in_force`` is until when the name is embargoed now by its own embargo or, for a version, its document's
    (the later, when not over; ``None``: it reads as any other name). ``held`` is every other embargo in force
    that still covers it beyond its own: for a version, its document's; for a document, each version's own
    (the name to lift it by, and until when), which an embargo of the document neither sets nor lifts.
    """

    name: str
    version: int | None
    before: str | None
    after: str | None
    in_force: str | None
    held: tuple[tuple[str, str], ...] = ()
    #: Its own embargo (``after``) is over already by the archive's clock: it embargoes nothing.
    over: bool = False

    @property
    def changed(self) -> bool:
        """Whether the name's own embargo was changed (an embargo set as it was changes nothing)."""
        return self.before != self.after


@dataclass(frozen=True)
class TokenRecord:
    """A bearer token of the write API: its name, its role, the series it may write, and its state.

    Only a digest of the token is stored (:mod:`pdi.archive.tokens`);
    ``series`` is empty for a token over every series.
    """

    id: int
    name: str
    role: str
    series: tuple[str, ...]
    created_at: str
    created_by: str
    revoked_at: str | None = None


@dataclass(frozen=True)
class AnnotationRecord:
    """A W3C Web Annotation the annotation server keeps (:mod:`pdi.archive.kept_annotations`).

    ``slug`` is its name in the container, ``data`` its JSON (compacted
    against the Web Annotation context) without ``id``, which the server
    gives; ``revision`` counts its states (1 when created, one more each
    replacement); ``deleted_at`` is set once it is deleted (its slug is
    never used again). ``targets`` are the archived documents (and
    versions, ``None``: the document) it targets, whose readers alone may
    read it.
    """

    slug: str
    data: str
    revision: int
    created_at: str
    created_by: str
    modified_at: str | None = None
    deleted_at: str | None = None
    targets: tuple[tuple[DocumentKey, int | None], ...] = ()


@dataclass(frozen=True)
class AssertionRecord:
    """An append-only statement ``key = value`` about ``subject`` (a canonical PDI string)."""

    id: int
    subject: str
    key: str
    value: str
    who: str
    at: str


@dataclass(frozen=True)
class CatalogProblem:
    """One inconsistency in the catalog itself (not in the blobs): what kind, about what, and how."""

    kind: str
    subject: str
    detail: str


@dataclass(frozen=True)
class AuditRecord:
    """One entry of the audit log: at what time, who, did what, to which name, in what detail, from where."""

    at: str
    who: str
    action: str
    subject: str
    detail: str
    address: str | None = None
    id: int = 0

    def to_json(self) -> dict[str, object]:
        """The entry as a JSON object (``pdi audit --json`` and ``/api/audit`` alike)."""
        return {"id": self.id, "at": self.at, "who": self.who, "action": self.action, "subject": self.subject,
                "detail": self.detail, "address": self.address}


@dataclass(frozen=True)
class ListKey:
    """Where a name stands in a listing: its sort key, and so a keyset cursor.

    Names list by GMT day, then serial documents by serial before foreign
    ids by id, then series, version and format: ``(day, serial is None,
    serial, unique_id, series, version, format)``. A listing that goes on
    *after* a key reads from an index where the last page ended, however far
    in, rather than skipping rows.
    """

    day: datetime.date
    serial: int | None
    unique_id: str
    series: str
    version: int
    format: str

    @classmethod
    def of(cls, record: RepresentationRecord) -> ListKey:
        """The key of a catalog record."""
        return cls(record.day, record.serial, record.unique_id, record.series, record.version, record.format)


#: A page of a listing as the catalog reads it: its ISO day, whether its rows are of serial documents, and the rows.
NamePage = tuple[str, bool, list[tuple[Any, ...]]]


def window(pages: Iterable[NamePage], offset: int, limit: int | None) -> Iterator[NamePage]:
    """``pages`` cut to start after ``offset`` rows and to hold at most ``limit`` (``None``: all) rows."""
    skip, left = offset, limit
    if left is not None and left <= 0:
        return
    for day, serials, rows in pages:
        if skip:
            if skip >= len(rows):
                skip -= len(rows)
                continue
            rows, skip = rows[skip:], 0
        if left is not None:
            if left <= len(rows):
                yield day, serials, rows[:left]
                return
            left -= len(rows)
        yield day, serials, rows


@dataclass(frozen=True)
class ListQuery:
    """Filters for listing representations; ``None`` means any.

    ``after`` starts the listing after that key (a keyset cursor, cheap
    however deep); ``offset`` then skips that many more names, which costs
    reading them.
    """

    series: str | None = None
    year: int | None = None
    month: int | None = None
    day: int | None = None
    unique_id: str | None = None
    format: str | None = None
    version: int | None = None
    limit: int | None = None
    offset: int = 0
    after: ListKey | None = None


@dataclass(frozen=True)
class BlobUse:
    """How the catalog names one blob: by how many representations, and with which descriptions.

    ``descriptions`` are the distinct ``(format, media_type, charset,
    line_ending)`` of those representations; ``sizes`` the smallest and the
    largest size they record (equal when the catalog is sound).
    """

    sha256: str
    representations: int
    sizes: tuple[int, int]
    descriptions: tuple[tuple[str, str, str | None, str | None], ...]
    #: How many of the representations had their octets purged (all: the blob is meant to be gone).
    purged: int = 0


@dataclass(frozen=True)
class SeriesCount:
    """A series and how many documents it holds, minted from ``first_day`` to ``last_day`` (``None`` when empty).

    ``last_deposit``: when the latest deposit into it was made (a document,
    a version or a format; the catalog's ISO 8601 UTC time), ``None`` when empty.
    """

    series: str
    documents: int
    first_day: datetime.date | None
    last_day: datetime.date | None
    last_deposit: str | None = None


@dataclass(frozen=True)
class DocumentStamp:
    """A document in catalog order and when it last changed (what an OAI-PMH harvester pages through).

    ``cursor`` is its place in the catalog (a keyset cursor, increasing with
    each new document); ``changed_at`` the latest of its deposits, statements,
    withdrawals, ends of embargoes over and changes of access (ISO 8601 UTC); ``withdrawn_at``
    when the whole document was withdrawn, if it was; ``embargo_ended_at``
    when the latest embargo over of it or a version of it ended, if one did;
    ``access_changed_at`` when a change of who may read (an embargo set or
    lifted, a series made public or not: never the clock) last changed what a
    reader without access to its series is shown of it (schema 21): it or a
    version of it shown, or withheld.
    """

    cursor: int
    key: DocumentKey
    changed_at: str
    withdrawn_at: str | None
    embargo_ended_at: str | None = None
    access_changed_at: str | None = None


@dataclass(frozen=True)
class DayCount:
    """How many documents of a series were minted on one GMT day."""

    day: datetime.date
    documents: int


@dataclass(frozen=True)
class FixityCheck:
    """One fixity check of one blob: when, and whether its bytes still had their SHA-256 and size.

    ``problem`` is what was found when ``ok`` is false: ``missing``,
    ``altered`` or ``size`` (:class:`pdi.archive.fixity.Problem`'s kinds).
    """

    sha256: str
    checked_at: str
    ok: bool
    problem: str | None = None


@dataclass(frozen=True)
class FixitySummary:
    """What the latest fixity check of each blob ever checked (``pdi verify``) found, over the whole catalog.

    ``whole`` and ``damaged``: how many blobs' latest check found their
    bytes whole, or not; ``newest`` and ``oldest``: the latest check's time
    (catalog form, :func:`pdi.archive.naming.timestamp`) of the blob checked
    most and least recently (``None`` when none ever was).
    """

    whole: int
    damaged: int
    newest: str | None
    oldest: str | None


#: The most hits a search's cursor may skip (twelve digits): past any index's hits, and a bound on what is parsed.
MAX_SEARCH_SKIP = 10**12 - 1


def search_skip(text: str) -> int:
    """The hits a search cursor (the ``next`` of a page of results, :meth:`pdi.archive.Archive.search`) skips:
    a count of the hits shown before, in decimal, nothing else. A count, not a place in the catalog, so that it
    tells a reader nothing of the documents they may not read (their row numbers, or the scores the index gives);
    :class:`~pdi.errors.ParseError` for anything else."""
    from pdi.errors import ParseError

    if not isinstance(text, str) or not text.isascii() or not text.isdigit() or len(text) > 12 or text[0] == "0":
        raise ParseError(
            f"{str(text)[:80]!r} is not a search cursor (the 'next' of a page of results: how many hits came before)",
            rule="after",
        )
    return int(text)


@dataclass(frozen=True)
class SearchRow:
    """A passage that matched, for one representation that holds its blob.

    ``passage`` has the passage's start and runs (its text is ``marked`` with
    the marks taken out); ``marked`` is its text with every match marked
    (:data:`pdi.passages.fulltext.MARK_START` … ``MARK_END``), ``each`` the same for each
    phrase of the query alone.
    """

    record: RepresentationRecord
    passage: Any
    marked: str
    each: tuple[str, ...]
    score: float
    #: Whether the engine marks each match of a phrase whole, as one stretch (SQLite's FTS5, whose ``highlight``
    #: marks a phrase's instance from its first word to its last, overlapping ones as one), not word by word
    #: wherever a word of the query stands (PostgreSQL's ``ts_headline``).
    whole: bool = False
    #: Each word the engine marked and each word of the query's phrases (:func:`pdi.passages.hits.stem_key`) with
    #: what the engine's index reads of it (PostgreSQL: its lexemes, ``walrus`` for ``Walruses``), so that a run of
    #: marked words spells a phrase only where each word is read as the phrase's word is. SQLite's FTS5 marks each
    #: match whole: only where it made overlapping matches one mark (``cats cat cat`` for ``"cat cat"``), Porter's
    #: stems of that mark's words, which tell where each match starts; else none.
    stems: tuple[tuple[str, str], ...] = ()
