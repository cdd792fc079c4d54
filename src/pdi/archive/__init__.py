"""The archive: the one domain service (mint, deposit, version, resolve, list, assert, verify).

:class:`Archive` is the only place in pdi that knows about storage and time.
It mints PDIs (draft-mallery-urn-pdi-00 §2, read as ``PDI-GRAMMAR.md``: the
GMT day of minting, gap-free daily serials, or an encapsulated foreign id),
deposits the formats of each version immutably, resolves a name — down to a
fragment, through :mod:`pdi.fragments` — to exactly the stored bytes, lists
names, keeps append-only assertions, audits fixity, and moves whole archives
between stores as BagIt bags (:mod:`pdi.archive.bagit`).

Storage is behind the :class:`~pdi.archive.store.Store` protocol: a directory
(SQLite catalog + content-addressed blob files, the default) or a
``postgresql://`` URL. What a deposit is — its format and charset, checked
against its bytes, and its CRLF-canonical text — is :mod:`pdi.archive.content`.
The values it answers with are :mod:`pdi.archive.results`; what a fixity
audit reports, :mod:`pdi.archive.fixity`; how a blob is read and checked by
chunk, :mod:`pdi.archive.blobs`.
A deposit whose bytes equal the latest version's of the same document stores
nothing and answers with that version (:class:`Deposit`, ``unchanged``)
unless forced.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pdi import formats
from pdi.archive.blobs import (
    ChunkedReader,
    FileReader,
    Octets,
    RangedOctets,
    mapped,
    verify_selected,
)
from pdi.archive.blobs.memo import FixityMemo
from pdi.archive.content import (
    Content,
    canonical_text,
    detect_charset,
    is_text_format,
    prepare,
)
from pdi.archive.fixity import Problem, VerifyReport, described_problem
from pdi.archive.results import (
    CitationResolved,
    Deposit,
    DocumentChange,
    DocumentDetail,
    DocumentPage,
    Generic,
    GenericVersion,
    Opened,
    ReindexReport,
    Resolved,
    SearchHit,
    SearchResults,
)
from pdi.archive.store import (
    AnnotationRecord,
    AssertionRecord,
    AuditRecord,
    DayCount,
    DepositResult,
    DocumentKey,
    DocumentStamp,
    FixityCheck,
    Idempotency,
    ListKey,
    ListQuery,
    NewRepresentation,
    RepresentationRecord,
    SeriesCount,
    SeriesRecord,
    Store,
    TokenRecord,
    WithdrawalRecord,
    WriteNote,
)
from pdi.archive.tokens import Writer
from pdi.errors import (
    AccessError,
    DeletedError,
    ImmutabilityError,
    IntegrityError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    PreconditionError,
    UnsupportedError,
    WithdrawnError,
)
from pdi.identifier import PDI, Fragment, series_for_minting, spells_serial

if TYPE_CHECKING:
    from pdi.archive.access import Unlisted
    from pdi.archive.catalog import SearchAccess

__all__ = [
    "DEFAULT_LOCATION",
    "MAX_SEARCH_LIMIT",
    "Archive",
    "AssertionRecord",
    "AuditRecord",
    "CitationResolved",
    "Content",
    "Deposit",
    "DocumentChange",
    "DocumentDetail",
    "DocumentPage",
    "Generic",
    "GenericVersion",
    "ReindexReport",
    "Resolved",
    "SearchHit",
    "SearchResults",
    "SeriesRecord",
    "VerifyReport",
    "canonical_text",
    "detect_charset",
    "is_text_format",
    "resolve_location",
]

#: Where the archive lives when neither ``--archive`` nor ``$PDI_ARCHIVE`` says.
DEFAULT_LOCATION = "pdi-archive"

#: The most hits one page of search results may hold.
MAX_SEARCH_LIMIT = 200

#: The largest single assertion value accepted (characters).
MAX_ASSERTION_VALUE = 1 << 16

#: Fixity checks :meth:`Archive.verify` records in one transaction.
FIXITY_CHECKS_PAGE = 1000

#: Names one statement query asks about (:meth:`Archive.latest_statements`): well under SQLite's 32,766 parameters.
_STATEMENT_NAMES = 1000
_KEY = re.compile(r"[A-Za-z][A-Za-z0-9._:-]{0,199}\Z")



def resolve_location(location: str | os.PathLike[str] | None) -> str:
    """The archive location: the argument, else ``$PDI_ARCHIVE``, else ``./pdi-archive``."""
    if location is not None and str(location) != "":
        return str(location)
    return os.environ.get("PDI_ARCHIVE") or DEFAULT_LOCATION


def _open_store(location: str, *, create: bool, blobs: str | None = None, connections: int = 0) -> Store:
    """The catalog at ``location`` holding the blob store it records (``blobs``: the one to record at init)."""
    from pdi.archive.catalog.opening import open_store

    return open_store(location, create=create, blobs=blobs, connections=connections)


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _timestamp(now: datetime.datetime) -> str:
    return now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_until(text: str) -> str:
    from pdi.archive.access import parse_until

    return parse_until(text)


def _default_who() -> str:
    for variable in ("PDI_USER", "USER", "LOGNAME"):
        value = os.environ.get(variable)
        if value:
            return value
    return f"uid {os.getuid()}"


def canonical_series(name: str) -> str:
    """Check a series name for minting (:func:`pdi.identifier.series_for_minting`); lower-cased."""
    if not isinstance(name, str):
        raise ParseError("a series name must be text", rule="document-series")
    return ".".join(series_for_minting(name))


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _foreign_serial(pdi: PDI) -> bool:
    # "%31" decodes to "1" but is a foreign id, not serial 1 (the catalog keys by the
    # decoded id, so it must not be looked up as one).
    return not pdi.is_serial and not pdi.unique_id_is_wildcard and spells_serial(pdi.unique_id)


def _key_of(pdi: PDI) -> DocumentKey:
    date = pdi.date
    if date is None:
        raise UnsupportedError(f"{pdi} has a wildcard date: it is a pattern (use ls)")
    if _foreign_serial(pdi):
        raise NotFoundError(
            f"{pdi.without_fragment()} is not in this archive: its foreign id"
            f" {pdi.unique_id!r} is spelled like a daily serial, which no archive mints"
        )
    return DocumentKey(pdi.series_name.lower(), date, pdi.unique_id)


def _generic_name(key: DocumentKey) -> str:
    """The generic name of the document ``key`` (how the audit log names what a write touched)."""
    serial = spells_serial(key.unique_id)
    built = PDI.build(
        series=key.series, date=key.day, serial=int(key.unique_id) if serial else None,
        foreign_id=None if serial else key.unique_id, format="text", version=1,
    )
    return str(dataclasses.replace(built, format=None, version=None).canonical())


def _name(
    record: RepresentationRecord, *, generic: bool = False, fragment: Fragment | None = None
) -> PDI:
    """The versioned name of a record (with ``fragment``), or the generic name of its document."""
    versioned = PDI.build(
        series=record.series,
        date=record.day,
        serial=record.serial,
        foreign_id=None if record.serial is not None else record.unique_id,
        format=record.format,
        version=record.version,
        fragment=fragment,
    )
    if generic:
        # PDI.build wants a format with a foreign id; the generic name drops it.
        return dataclasses.replace(versioned, format=None, version=None).canonical()
    return versioned


class _Namer:
    """Names for many catalog records at once (listing 10,000 names of a day).

    :meth:`PDI.build` checks and re-parses every name; a catalog's records are
    already valid, and serial names of one series, day and format differ only
    in the serial and version numbers, so one built name per (series, day,
    format) is copied with those two fields changed. Foreign ids are built.
    """

    def __init__(self) -> None:
        self._templates: dict[tuple[str, datetime.date, str], PDI] = {}

    def __call__(self, record: RepresentationRecord) -> PDI:
        if record.serial is None:
            return _name(record)
        key = (record.series, record.day, record.format)
        template = self._templates.get(key)
        if template is None:
            template = self._templates[key] = _name(record)
        serial = str(record.serial)
        # The constructor, not dataclasses.replace (which takes 1.6 times as
        # long), as this runs once per listed name; a template has no fragment
        # or warnings.
        return PDI(
            series=template.series, year=template.year, month=template.month, day=template.day,
            unique_id=serial, unique_id_raw=serial, serial=record.serial,
            format=template.format, version=record.version,
        )


def _generic_of(records: Sequence[RepresentationRecord], latest: bool = False) -> Generic:
    """The :class:`Generic` of one document from the records of its formats (the newest version only with ``latest``)."""
    by_version: dict[int, list[RepresentationRecord]] = {}
    for record in records:
        by_version.setdefault(record.version, []).append(record)
    numbers = sorted(by_version)[-1:] if latest else sorted(by_version)
    versions = tuple(
        GenericVersion(
            n,
            min(r.created_at for r in by_version[n]),
            tuple(_name(r) for r in sorted(by_version[n], key=lambda r: r.format)),
        )
        for n in numbers
    )
    return Generic(_name(records[0], generic=True), versions)


#: Documents whose stamps :meth:`Archive.changes` reads at once while it looks for changed ones.
_STAMP_BATCH = 500


def _documents_of(records: Sequence[RepresentationRecord]) -> tuple[Generic, ...]:
    """The documents of records that come a document at a time, each with its versions, in that order."""
    grouped: dict[tuple[str, datetime.date, str], list[RepresentationRecord]] = {}
    for record in records:
        grouped.setdefault((record.series, record.day, record.unique_id), []).append(record)
    return tuple(_generic_of(group) for group in grouped.values())


def _list_key(pdi: PDI) -> ListKey:
    """Where the versioned name ``pdi`` stands in a listing (a cursor: it need not be in the archive)."""
    if pdi.is_pattern or pdi.format is None or pdi.version is None:
        raise UnsupportedError(
            f"{pdi} is not a versioned name: a listing goes on after the last name it gave"
        )
    if pdi.fragment is not None or pdi.citation is not None:
        raise UnsupportedError(f"{pdi} names a passage: a listing goes on after a whole name")
    date = pdi.date
    assert date is not None  # not a pattern
    return ListKey(
        date, pdi.serial if pdi.is_serial else None, pdi.unique_id, pdi.series_name.lower(),
        pdi.version, formats.canonical_token(pdi.format),
    )


def parse_pdi(pdi: PDI | str) -> PDI:
    """A PDI value from a PDI or its text (lenient parsing)."""
    if isinstance(pdi, PDI):
        return pdi
    if not isinstance(pdi, str):
        raise ParseError("a PDI must be given as text", rule="pdi-urn")
    return PDI.parse(pdi.strip())


def _document(pdi: PDI | str, what: str) -> PDI:
    """A PDI that names one whole document (no pattern, fragment or citation)."""
    parsed = parse_pdi(pdi)
    if parsed.is_pattern:
        raise UnsupportedError(f"{parsed} is a pattern: {what} is of one document")
    if parsed.fragment is not None or parsed.citation is not None:
        raise UnsupportedError(
            f"{what} is of the whole document {parsed.without_fragment()}, not of a passage"
        )
    return parsed


class Archive:
    """Mint, deposit, version, resolve, list, assert and verify, over one :class:`Store`."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], datetime.datetime] = _utc_now,
        who: str | None = None,
    ) -> None:
        self.store = store
        self._clock = clock
        self.who = who or _default_who()
        #: The chunks of blob files this process has verified (:mod:`pdi.archive.blobs.memo`), trusted
        #: while the file is unchanged; ``None`` (the default): every read hashes every chunk it touches.
        self.fixity_memo: FixityMemo | None = None

    # --- opening -----------------------------------------------------------------
    @classmethod
    def init(
        cls,
        location: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], datetime.datetime] = _utc_now,
        blobs: str | None = None,
    ) -> Archive:
        """Create an archive (or open and migrate an existing one) at ``location``.

        ``blobs`` (``s3://bucket/prefix``) keeps the blobs in an S3-compatible
        store instead of beside the catalog; it is recorded in the catalog, so
        :meth:`open` finds it again. The endpoint and keys come from the
        environment (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``,
        ``AWS_SECRET_ACCESS_KEY``), never from the catalog.
        """
        return cls(_open_store(resolve_location(location), create=True, blobs=blobs), clock=clock)

    @classmethod
    def open(
        cls,
        location: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], datetime.datetime] = _utc_now,
        connections: int = 0,
    ) -> Archive:
        """Open an existing archive; :class:`NotFoundError` when there is none.

        ``connections`` is how many catalog connections a PostgreSQL archive
        keeps at most, in a pool (0: :data:`pdi.archive.postgres.DEFAULT_CONNECTIONS`);
        each thread's transaction takes one, and waits while all are taken.
        """
        return cls(_open_store(resolve_location(location), create=False, connections=connections), clock=clock)

    @property
    def location(self) -> str:
        """Where the archive lives (a directory or a URL without its password)."""
        return self.store.location

    def close(self) -> None:
        """Release the store's connections."""
        self.store.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def now(self) -> datetime.datetime:
        """The archive's clock, in GMT: what a deposit made now is dated (tests give it a fixed one)."""
        return self._clock().astimezone(datetime.UTC)

    _now = now

    # --- series ----------------------------------------------------------------------
    def add_series(
        self, name: str, *, parent: str | None = None, authority: str = ""
    ) -> SeriesRecord:
        """Register a document series; with ``parent``, a subseries delegated under it.

        A subseries adds components in front of its parent's name
        (``press.oma.eop.gov.us`` under ``oma.eop.gov.us``). Without ``parent``,
        the nearest registered series the name ends with becomes its parent.
        """
        series = canonical_series(name)
        if parent is not None:
            parent = canonical_series(parent)
            if not series.endswith("." + parent):
                raise ParseError(
                    f"subseries {series} must end with its parent's name .{parent}",
                    text=name,
                    rule="document-series",
                )
            if self.store.get_series(parent) is None:
                raise NotFoundError(f"parent series {parent} is not registered")
        else:
            parts = series.split(".")
            for i in range(1, len(parts) - 1):
                candidate = ".".join(parts[i:])
                if self.store.get_series(candidate) is not None:
                    parent = candidate
                    break
        record = SeriesRecord(series, parent, authority, _timestamp(self._now()))
        self.store.add_series(record)
        return record

    def series(self) -> list[SeriesRecord]:
        """Every registered series, by name (a reader is shown only those it may read: :mod:`pdi.archive.access`)."""
        unreadable = self._unreadable()
        return [s for s in self.store.list_series() if s.name not in unreadable]

    # --- deposits ---------------------------------------------------------------------
    # Each deposit checks its bytes against their declared format and charset
    # (pdi.archive.content) and, unless forced, answers with the latest version
    # of the same document instead of storing bytes it already holds.
    def _deposited(self, result: DepositResult, reps: Sequence[NewRepresentation]) -> Deposit:
        records = {r.format: r for r in self.store.representations(result.key, result.version)}
        missing = [rep.format for rep in reps if rep.format not in records]
        if missing:  # pragma: no cover - a store bug
            raise NotFoundError(f"deposit of {', '.join(missing)} vanished")
        return Deposit(tuple(_name(records[rep.format]) for rep in reps), result.unchanged, result.replayed)

    def add(
        self,
        series: str,
        content: Octets,
        *,
        format: str,
        foreign_id: str | None = None,
        charset: str | None = None,
        force: bool = False,
        embargo_until: str | None = None,
    ) -> PDI:
        """Mint a PDI in ``series`` for today (GMT) and deposit one format; returns the versioned PDI.

        The one-format :meth:`deposit`: with a ``foreign_id`` already minted
        today whose latest version holds these bytes, it returns that name
        (:meth:`deposit` says whether it did).
        """
        return self.deposit(
            series, [Content(content, format, charset)], foreign_id=foreign_id, force=force,
            embargo_until=embargo_until,
        )[0]

    def deposit(
        self,
        series: str,
        contents: Sequence[Content],
        *,
        foreign_id: str | None = None,
        force: bool = False,
        progress: Callable[[int], None] | None = None,
        writer: Writer | None = None,
        idempotency_key: str | None = None,
        request: str = "",
        day: datetime.date | None = None,
        embargo_until: str | None = None,
    ) -> Deposit:
        """Mint a PDI and deposit every format of version 1 at once (all or nothing).

        Each format's bytes are checked against their format and charset
        (:func:`pdi.archive.content.prepare`): a contradiction is an
        :class:`IntegrityError` unless ``force``. A ``foreign_id`` already
        minted today is an :class:`~pdi.errors.ImmutabilityError`, except that
        when its latest version holds exactly these formats and bytes the
        answer is that version, ``unchanged`` (and nothing is stored). With
        ``force`` the content checks are skipped and that exception is not
        made: a name is minted once, and ``add_version(..., force=True)``
        deposits the same bytes again.

        A ``writer`` (a token of the write API) must be allowed to deposit in
        the series; the deposit is then audited in its own transaction, and an
        ``idempotency_key`` makes it answer a retry with the first answer
        (``request`` identifies what was asked besides the bodies:
        :meth:`_note`).

        ``day`` dates the name on another GMT day than today's, for a
        document whose date is known from elsewhere (a web archive's capture
        date, :mod:`pdi.interop.warc`); only with a ``foreign_id``, since
        daily serials are minted in the order of deposit. ``embargo_until`` (a date or a time with its zone,
        :func:`pdi.archive.access.parse_until`) embargoes the version from its
        deposit on, in the deposit's own transaction.
        """
        embargo = None if embargo_until is None else _parse_until(embargo_until)
        name = canonical_series(series)
        if writer is not None:
            writer.require("deposit" if embargo is None else "curate", name)
        if not contents:
            raise ParseError("a deposit needs at least one format", rule="format")
        if day is not None and foreign_id is None:
            raise UnsupportedError("a name is dated on another day than today only with a foreign id")
        if self.store.get_series(name) is None:  # before a single octet is read
            raise NotFoundError(f"series {name} is not registered (pdi series add {name})")
        if foreign_id is not None:
            token = formats.canonical_token(contents[0].format)
            foreign_id = self._check_foreign_id(name, foreign_id, token, day or self._now().date())
        with self._staging(contents, force, progress) as reps:
            now = self._now()  # one instant: the minting day and the deposit's time agree
            note = self._note(writer, "deposit", reps, idempotency_key, request, embargo)
            result = self.store.mint(
                name, day or now.date(), foreign_id, reps, _timestamp(now), skip_identical=not force, note=note
            )
            return self._deposited(result, reps)

    def deposit_batch(
        self,
        series: str,
        items: Sequence[tuple[Sequence[Content], str | None]],
        *,
        writer: Writer | None = None,
        idempotency_key: str | None = None,
        request: str = "",
        embargo_until: str | None = None,
    ) -> list[Deposit]:
        """Mint a name for each item (its formats, and a foreign id or ``None``) and deposit them all, or none.

        Every item is checked and staged first; one refusal (naming the item
        by its index) stages nothing and mints nothing. The names are minted
        in one transaction, in the items' order (their serials consecutive
        among themselves). ``writer``, ``idempotency_key``, ``request`` and
        ``embargo_until`` (every item embargoed until then, in the same
        transaction; the role ``curate``) as for :meth:`deposit`.
        """
        embargo = None if embargo_until is None else _parse_until(embargo_until)
        name = canonical_series(series)
        if writer is not None:
            writer.require("deposit" if embargo is None else "curate", name)
        if not items:
            raise ParseError("a batch needs at least one item", rule="batch")
        if self.store.get_series(name) is None:
            raise NotFoundError(f"series {name} is not registered (pdi series add {name})")
        day = self._now().date()
        checked: list[str | None] = []
        for index, (contents, foreign_id) in enumerate(items):
            if not contents:
                raise ParseError(f"item {index}: an item needs at least one format", rule="format")
            if foreign_id is not None:
                token = formats.canonical_token(contents[0].format)
                try:
                    foreign_id = self._check_foreign_id(name, foreign_id, token, day)
                except PDIError as exc:
                    raise type(exc)(f"item {index}: {exc}") from None
            checked.append(foreign_id)
        staged: list[list[NewRepresentation]] = []
        try:
            for index, (contents, _) in enumerate(items):
                reps: list[NewRepresentation] = []
                staged.append(reps)
                for content in contents:
                    try:
                        reps.append(prepare(content, self.store))
                    except PDIError as exc:
                        raise type(exc)(f"item {index}: {exc}") from None
            everything = [rep for reps in staged for rep in reps]
            now = self._now()
            note = self._note(writer, "deposit", everything, idempotency_key, request, embargo)
            results = self.store.mint_batch(
                name, now.date(), list(zip(checked, staged, strict=True)), _timestamp(now), note=note
            )
        except BaseException:
            # last staged first: a blob staged twice is pinned by both, and only the first may remove it
            for rep in reversed([rep for reps in staged for rep in reps]):
                rep.blob.discard()
            raise
        finally:
            for reps in staged:
                for rep in reps:
                    if rep.passages is not None:
                        rep.passages.close()  # the full-text index's spool (pdi.archive.search), as _staging does
        for reps in staged:
            for rep in reps:
                rep.blob.close()
        return [self._deposited(result, reps) for result, reps in zip(results, staged, strict=True)]

    def _note(
        self,
        writer: Writer | None,
        action: str,
        reps: Sequence[NewRepresentation],
        key: str | None,
        request: str,
        embargo_until: str | None = None,
    ) -> WriteNote | None:
        """What a write through the API records with itself: its audit entry, and its Idempotency-Key.

        The key's fingerprint is the SHA-256 of ``request`` (the edge's
        account of the method, target and parameters) and of each format's
        token, charset and octets' SHA-256 — the bodies are known by the
        digests staging computed, never held.
        """
        if writer is None:
            if embargo_until is None:
                return None
            return WriteNote(self.who, action, _generic_name, ", ".join(rep.format for rep in reps),
                             embargo_until=embargo_until)
        idempotency = None
        if key is not None:
            h = hashlib.sha256(request.encode("utf-8"))
            for rep in reps:
                h.update(f"\n{rep.format} {rep.charset or ''} {rep.blob.info.sha256}".encode())
            idempotency = Idempotency(writer.token.id, key, h.hexdigest())
        formats_written = ", ".join(rep.format for rep in reps)
        return WriteNote(
            writer.name, action, _generic_name, f"{formats_written}", writer.address, idempotency, embargo_until,
        )

    @contextlib.contextmanager
    def _staging(
        self,
        contents: Sequence[Content],
        force: bool,
        progress: Callable[[int], None] | None = None,
    ) -> Iterator[list[NewRepresentation]]:
        """Check and stage every format of a deposit; after it, release the blobs, or discard them if it failed.

        Each format is streamed into the store once (never held whole) while
        its checks ride on the same pass; a refusal of any format, or a
        failed catalog transaction, takes away what staging added.
        """
        reps: list[NewRepresentation] = []
        try:
            for content in contents:
                reps.append(prepare(content, self.store, force=force, progress=progress))
            yield reps
        except BaseException:
            for rep in reversed(reps):  # as deposit_batch: the pin that placed a blob goes last
                rep.blob.discard()
            raise
        finally:
            for rep in reps:
                if rep.passages is not None:
                    rep.passages.close()  # the full-text index's spool (pdi.archive.search)
        for rep in reps:
            rep.blob.close()

    def _check_foreign_id(
        self, series: str, foreign_id: str, token: str, day: datetime.date
    ) -> str:
        if not isinstance(foreign_id, str) or foreign_id == "":
            raise ParseError("a foreign id must be non-empty text", rule="encapsulated-unique-id")
        if spells_serial(foreign_id):
            raise ParseError(
                "an id of digits only (no leading zero) is a daily serial, which the archive"
                " mints itself",
                text=foreign_id,
                offset=0,
                rule="encapsulated-unique-id",
            )
        if foreign_id == "*":
            raise ParseError(
                "* is a wildcard, not an id", text=foreign_id, offset=0, rule="unique-id"
            )
        # Round-trip through the grammar so the name we mint parses back to this id.
        built = PDI.build(
            series=series, date=day, foreign_id=foreign_id, format=token, version=1
        )
        if PDI.parse(str(built)).unique_id != foreign_id:
            raise ParseError(
                "this id cannot be written in a PDI", text=foreign_id, rule="encapsulated-unique-id"
            )
        return foreign_id

    def add_version(
        self,
        pdi: PDI | str,
        contents: Sequence[Content],
        *,
        force: bool = False,
        progress: Callable[[int], None] | None = None,
        writer: Writer | None = None,
        idempotency_key: str | None = None,
        request: str = "",
        embargo_until: str | None = None,
    ) -> Deposit:
        """Deposit a new version of a document; it must cover every format it is to have.

        When the latest version has exactly these formats with these bytes
        (compared by the SHA-256 of what would be stored) and charsets, nothing
        is stored and the answer is that version, ``unchanged``; ``force``
        deposits a new version all the same, and skips the content checks.
        ``writer``, ``idempotency_key``, ``request`` and ``embargo_until`` as for :meth:`deposit`.
        """
        embargo = None if embargo_until is None else _parse_until(embargo_until)
        key = _key_of(_document(pdi, "a new version"))
        if writer is not None:
            writer.require("deposit" if embargo is None else "curate", key.series)
        if not contents:
            raise ParseError("a version needs at least one format", rule="format")
        if not self.store.document_exists(key):
            raise NotFoundError(f"no document {key.series} {key.day.isoformat()} {key.unique_id} in the archive")
        with self._staging(contents, force, progress) as reps:
            note = self._note(writer, "version", reps, idempotency_key, request, embargo)
            result = self.store.new_version(
                key, reps, _timestamp(self._now()), skip_identical=not force, note=note
            )
            return self._deposited(result, reps)

    def add_format(
        self,
        pdi: PDI | str,
        content: Octets,
        *,
        format: str,
        charset: str | None = None,
        force: bool = False,
        source: str | None = None,
        progress: Callable[[int], None] | None = None,
        writer: Writer | None = None,
        idempotency_key: str | None = None,
        request: str = "",
    ) -> PDI:
        """Add a format with the same content to an existing version (named by ``pdi``).

        The same bytes again change nothing and answer with the same name;
        ``force`` skips the content checks; ``source`` (a file name) is named
        when they refuse. ``writer``, ``idempotency_key`` and ``request`` as
        for :meth:`deposit`.
        """
        parsed = _document(pdi, "a new format")
        key = _key_of(parsed)
        if writer is not None:
            writer.require("deposit", key.series)
        version = parsed.version if parsed.version is not None else 1
        where = f"{key.series} {key.day.isoformat()} {key.unique_id}"
        versions = self.store.versions(key)
        if not versions:
            raise NotFoundError(f"no document {where} in the archive")
        if version not in versions:
            raise NotFoundError(f"no version {version} of {where} in the archive")
        with self._staging([Content(content, format, charset, source)], force, progress) as reps:
            note = self._note(writer, "format", reps, idempotency_key, request)
            result = self.store.add_formats(key, version, reps, _timestamp(self._now()), note=note)
            return self._deposited(result, reps)[0]

    # --- resolving -----------------------------------------------------------------------
    def _version_of(self, pdi: PDI, key: DocumentKey, latest: bool) -> int:
        stored = self.store.versions(key)
        if not stored:
            raise NotFoundError(f"{pdi.without_fragment()} is not in this archive")
        version = pdi.version if pdi.version is not None else 1
        if not latest and version in stored:
            return version  # the embargo guard decides whether the reader may read it
        # the latest and the versions a refusal names are those the reader may learn of (pdi.archive.access)
        hidden = self._unlisted()
        versions = [v for v in stored if hidden.version_listed(key, v)]
        if latest:
            return versions[-1] if versions else stored[-1]  # none: the embargo guard refuses it
        raise NotFoundError(
            f"{pdi.without_fragment()}: no version {version} (versions: {', '.join(map(str, versions))})"
        )

    def resolve(self, pdi: PDI | str, *, latest: bool = False) -> Resolved | Generic:
        """Bytes of a format of a version (or of its fragment), or for a generic PDI its versions.

        ``latest=True`` takes the newest version whatever version the PDI names;
        otherwise an omitted version is version 1 (draft: "when VERSION is
        omitted, it defaults to version 1"). A generic PDI (no format, and so
        no version: PDI-GRAMMAR.md §2.7) names the document: the
        :class:`Generic` lists every version with its deposit time and
        formats (with ``latest=True`` the newest only).
        """
        parsed, found = self._look_up(pdi, latest)
        return found if isinstance(found, Generic) else self._read(parsed, found)

    def read(self, located: Resolved) -> Resolved:
        """What :meth:`resolve` answers for a name :meth:`locate` has found: its bytes (or fragment) read now.

        Saves looking the name up in the catalog twice when a caller first
        decides from the record (its size) whether to read it at all.
        """
        return self._read(located.pdi, located.record)

    def locate(self, pdi: PDI | str, *, latest: bool = False) -> Resolved | Generic:
        """What :meth:`resolve` would answer, from the catalog alone: no bytes are read.

        For a PDI with a format the :class:`Resolved` has empty ``data`` and no
        fragment result (the fragment is only named); a resolver uses this to
        say where a name resolves without fetching it.
        """
        parsed, found = self._look_up(pdi, latest)
        if isinstance(found, Generic):
            return found
        return Resolved(_name(found, fragment=parsed.fragment), b"", found.media_type, found.charset, found)

    def _look_up(self, pdi: PDI | str, latest: bool) -> tuple[PDI, Generic | RepresentationRecord]:
        """The parsed PDI and either its versions (a generic PDI) or the record of the format it names."""
        parsed = parse_pdi(pdi)
        if parsed.is_pattern:
            raise UnsupportedError(f"{parsed} is a pattern; list it with ls")
        if parsed.citation is not None:
            raise UnsupportedError("a citation names two documents: resolve it with cite (pdi cite)")
        if parsed.format is None:
            if parsed.fragment is not None:
                raise UnsupportedError("a fragment needs a format: name one")
            self._guard_series(parsed)
            generic = self._generic(parsed, latest)
            self._guard_embargo(parsed, None)
            hidden = self._unlisted()
            if hidden:  # the versions under an embargo the reader is not exempt from are not its to list
                shown = self._listed([generic], hidden)
                if not shown:
                    raise AccessError(f"{parsed.without_fragment()}: every version is embargoed")
                generic = shown[0]
            return parsed, generic
        self._guard_series(parsed)
        version, records = self._records(parsed, latest)
        record = self._record(parsed, version, records)
        self._guard_embargo(parsed, record.version)
        self._not_withdrawn(parsed, record)
        return parsed, record

    # --- who may read (pdi.archive.access) ------------------------------------------------------
    def series_access(self) -> dict[str, str]:
        """Each registered series and who may read it, its own setting and those above it taken together."""
        from pdi.archive.access import effective_access

        records = {s.name: s for s in self.store.list_series()}
        return {name: effective_access(records, name) for name in records}

    def _unreadable(self) -> dict[str, str]:
        """The series the current reader may not read, with their access (none for the owner)."""
        from pdi.archive.access import Disclosure, current_reader, disclosure

        reader = current_reader.get()
        if reader is None:
            return {}
        return {name: access for name, access in self.series_access().items()
                if disclosure(reader, name, access) is not Disclosure.ALL}

    def _unlisted(self) -> Unlisted:
        """What every list shown to the current reader leaves out (:func:`pdi.archive.access.unlisted`).

        Nothing for the owner; for a reader, the series it may not read and
        the embargoes not yet over outside the series it may read (read by
        index: costs the embargoes in force, not the catalog).
        """
        from pdi.archive.access import Unlisted, current_reader, unlisted

        reader = current_reader.get()
        if reader is None:
            return Unlisted()
        return unlisted(reader, self.series_access(), self.store.embargoes_in_force(_timestamp(self._now())))

    @staticmethod
    def _listed(documents: Iterable[Generic], hidden: Unlisted) -> list[Generic]:
        """``documents`` as the reader may see them listed: without those it may not, nor their embargoed versions."""
        shown: list[Generic] = []
        for document in documents:
            key = _key_of(document.pdi)
            if not hidden.document_listed(key):
                continue
            versions = tuple(v for v in document.versions if hidden.version_listed(key, v.number))
            if versions:
                shown.append(document if len(versions) == len(document.versions)
                             else dataclasses.replace(document, versions=versions))
        return shown

    def _guard_series(self, parsed: PDI) -> None:
        """Refuse a name of a series the current reader may not read: 404 if it may learn nothing of it, else 403."""
        from pdi.archive.access import PUBLIC, Disclosure, current_reader, disclosure

        reader = current_reader.get()
        if reader is None:
            return
        series = parsed.series_name.lower()
        told = disclosure(reader, series, self.series_access().get(series, PUBLIC))
        if told is Disclosure.NOTHING:
            raise NotFoundError(f"{parsed.without_fragment()} is not in this archive")
        if told is Disclosure.EXISTENCE:
            raise AccessError(
                f"{parsed.without_fragment()}: the series {series} is private; a token that may read it is needed"
            )

    def _guard_embargo(self, parsed: PDI, version: int | None) -> None:
        """Refuse (403) a document or version under an embargo not yet over, to a reader without access."""
        from pdi.archive.access import PUBLIC, Disclosure, current_reader, disclosure

        reader = current_reader.get()
        if reader is None:
            return
        key = _key_of(parsed)
        if reader.may_read(key.series):
            return
        until = self.store.embargo(key, version)
        embargoed = until is not None and until > _timestamp(self._now())
        if disclosure(reader, key.series, PUBLIC, embargoed=embargoed) is not Disclosure.ALL:
            raise AccessError(f"{parsed.without_fragment()} is embargoed until {until}")

    def _search_access(self) -> SearchAccess | None:
        """What the current reader's search leaves out (None: the owner, who sees all)."""
        from pdi.archive.access import current_reader
        from pdi.archive.catalog import SearchAccess

        reader = current_reader.get()
        if reader is None:
            return None
        access = self.series_access()
        return SearchAccess(
            tuple(sorted(self._unreadable())),
            tuple(sorted(n for n in access if reader.may_read(n))),
            _timestamp(self._now()),
        )

    def readable_by_anyone(self, record: RepresentationRecord) -> bool:
        """Whether anyone, without a token, may read this representation now (what a shared cache may keep)."""
        from pdi.archive.access import PUBLIC

        if self.series_access().get(record.series, PUBLIC) != PUBLIC:
            return False
        until = self.store.embargo(DocumentKey(record.series, record.day, record.unique_id), record.version)
        return until is None or until <= _timestamp(self._now())

    def set_series_access(self, series: str, access: str, *, who: str | None = None) -> SeriesRecord:
        """Make a series ``public``, ``private`` (403 to readers without access) or ``hidden`` (404); audited.

        The owner's decision, made on the command line (no token may change
        it). Every resolver's cache forgets what it keeps (an access change
        moves :meth:`withdrawals_generation`).
        """
        from pdi.archive.access import check_access

        name = canonical_series(series)
        self._require_series(name)
        self.store.set_series_access(name, check_access(access), who or self.who, _timestamp(self._now()))
        record = self.store.get_series(name)
        assert record is not None
        return record

    def embargo(
        self, pdi: PDI | str, until: str | None, *, who: str | None = None, writer: Writer | None = None
    ) -> str | None:
        """Embargo a document (a generic name) or a version (a versioned name) until ``until``; ``None`` lifts it.

        ``until`` is a date (its start, GMT) or an ISO 8601 time with its
        zone; from then on the embargo is over by itself. Returns it as the
        catalog keeps it. A ``writer`` needs the role ``curate`` over the
        series. Audited; every resolver's cache forgets what it keeps.
        """
        from pdi.archive.access import parse_until

        parsed = parse_pdi(pdi)
        if parsed.is_pattern or parsed.citation is not None or parsed.fragment is not None:
            raise UnsupportedError("embargo a name (generic or versioned), not a pattern, citation or fragment")
        key = _key_of(parsed)
        if writer is not None:
            writer.require("curate", key.series)
        moment = None if until is None else parse_until(until)
        version = None if parsed.format is None else self._version_of(parsed, key, latest=False)
        self.store.set_embargo(
            key, version, moment, writer.name if writer else (who or self.who), _timestamp(self._now()),
            subject=str(parsed.without_fragment()), address=writer.address if writer else None,
        )
        return moment

    def _not_withdrawn(self, parsed: PDI, record: RepresentationRecord) -> None:
        """Refuse (:class:`WithdrawnError`, HTTP 410) a name whose version or document was withdrawn."""
        tombstone = self.store.withdrawal(DocumentKey(record.series, record.day, record.unique_id), record.version)
        if tombstone is not None:
            what = "its document was" if tombstone.version is None else f"version {record.version} was"
            purged = " (its octets purged)" if tombstone.purged else ""
            raise WithdrawnError(
                f"{parsed.without_fragment()}: {what} withdrawn {tombstone.at}{purged}: {tombstone.reason}",
                reason=tombstone.reason, at=tombstone.at, who=tombstone.who, purged=tombstone.purged,
            )

    def withdraw(
        self, pdi: PDI | str, reason: str, *, who: str | None = None, writer: Writer | None = None,
        purge: bool = False,
    ) -> WithdrawalRecord:
        """Withdraw a version (a versioned name) or a whole document (a generic name), for good, saying why.

        The name stays: it is never minted again, it is still listed, and it
        resolves to its tombstone (:class:`~pdi.errors.WithdrawnError`, ``410
        Gone`` over HTTP) instead of its bytes, which are kept. The
        withdrawal is in the audit log. A ``writer`` (a token of the write
        API) needs the role ``curate`` over the series.

        ``purge=True`` (a legal takedown; a ``writer`` needs the role
        ``admin``) also deletes the octets: each representation is marked
        purged in the withdrawal's own transaction (audited as ``purge``),
        then each blob is deleted unless another representation that keeps
        its octets (of any name, withdrawn or not) holds the same bytes.
        A name already withdrawn may be purged later the same way; purging
        again finishes what an interrupted purge left. The tombstone's
        :attr:`~pdi.archive.store.WithdrawalRecord.purged` is then true.
        """
        parsed = parse_pdi(pdi)
        if parsed.is_pattern or parsed.citation is not None or parsed.fragment is not None:
            raise UnsupportedError("withdraw a name (generic or versioned), not a pattern, citation or fragment")
        key = _key_of(parsed)
        if writer is not None:
            writer.require("admin" if purge else "curate", key.series)
        if not isinstance(reason, str) or not reason.strip():
            raise ParseError("a withdrawal needs a reason", rule="reason")
        if len(reason) > MAX_ASSERTION_VALUE:
            raise LimitError(f"a reason may have at most {MAX_ASSERTION_VALUE} characters")
        version = None
        if parsed.format is not None:
            version = self._version_of(parsed, key, latest=False)
        record, purged = self.store.withdraw(
            key, version, reason.strip(), writer.name if writer else (who or self.who), _timestamp(self._now()),
            subject=str(parsed.without_fragment()), address=writer.address if writer else None, purge=purge,
        )
        if purged:
            _, kept = self.store.delete_purged_blobs(purged)
            record = dataclasses.replace(record, kept=tuple(kept))
        return record

    def withdrawals(self) -> list[WithdrawalRecord]:
        """Every tombstone, oldest first."""
        return list(self.store.iter_withdrawals())

    def withdrawals_of(self, documents: Iterable[DocumentKey]) -> list[WithdrawalRecord]:
        """The tombstones of these documents (generic names' keys), oldest first, read by index.

        What a resolver needs about the documents it answers for: unlike
        :meth:`withdrawals`, its cost does not grow with the catalog.
        """
        return self.store.withdrawals_of(list(documents))

    def withdrawals_generation(self) -> int:
        """A number that grows with every withdrawal (what a resolver's cache watches)."""
        return self.store.withdrawals_generation()

    def _generic(self, parsed: PDI, latest: bool) -> Generic:
        """Every version of the document a generic PDI names (the newest only with ``latest``), from one catalog query."""
        records = self.store.representations(_key_of(parsed))
        if not records:
            raise NotFoundError(f"{parsed.without_fragment()} is not in this archive")
        return _generic_of(records, latest)

    def cite(self, pdi: PDI | str) -> CitationResolved:
        """Resolve both ends of a citation and check that the quotation stands where it says.

        ``urn:pdi://A/…/5.html.1@120=pdi://B/…/1.text.1#char=37,51``: the
        fragment of B is quoted in A at position 120 of A's default scheme
        (PDI-GRAMMAR.md §3). A must be in this archive; B may not be, and then
        the check is ``unchecked``. See :func:`pdi.fragments.citation.check_quotation`.
        """
        from pdi.fragments.citation import QuotationCheck, check_quotation

        parsed = parse_pdi(pdi)
        if parsed.citation is None:
            raise UnsupportedError(f"{parsed} is not a citation (NAME@position=PDI)")
        citing = self.resolve(dataclasses.replace(parsed, citation=None))
        if not isinstance(citing, Resolved):
            raise UnsupportedError("the citing document needs a format and a version")
        origin = parsed.citation.origin
        try:
            cited = self.resolve(parsed.citation.cited)
        except NotFoundError as exc:
            return CitationResolved(
                parsed, citing, origin, None, QuotationCheck("unchecked", f"the cited document is not here: {exc}")
            )
        if not isinstance(cited, Resolved):
            raise UnsupportedError("the cited PDI needs a format and a version")
        scheme = formats.default_fragment_scheme(citing.record.format)
        check = check_quotation(
            citing.data, citing.media_type, citing.charset, scheme, origin,
            cited.data, cited.media_type, cited.charset,
        )
        return CitationResolved(parsed, citing, origin, cited, check)

    def _records(self, parsed: PDI, latest: bool) -> tuple[int, list[RepresentationRecord]]:
        """The version a PDI names and the records of its formats (not their bytes)."""
        key = _key_of(parsed)
        version = self._version_of(parsed, key, latest)
        return version, self.store.representations(key, version)

    @staticmethod
    def _record(
        parsed: PDI, version: int, records: list[RepresentationRecord]
    ) -> RepresentationRecord:
        """The record of the format ``parsed`` names among ``records`` (of ``version``)."""
        token = formats.canonical_token(parsed.format or "")
        for record in records:
            if record.format == token:
                return record
        raise NotFoundError(
            f"{parsed.without_fragment()}: version {version} has no format {token} (formats: "
            f"{', '.join(r.format for r in records)})"
        )

    def get(self, pdi: PDI | str, *, latest: bool = False) -> Resolved:
        """Bytes of a format of a version, or of a fragment of it; a generic PDI is refused."""
        result = self.resolve(pdi, latest=latest)
        if isinstance(result, Generic):
            raise UnsupportedError(
                f"{result.pdi} is generic (no format): name one of "
                + ", ".join(str(p) for p in result.names)
            )
        return result

    def formats(self, pdi: PDI | str, *, latest: bool = False) -> list[PDI]:
        """The versioned PDIs of every format of the version a PDI names."""
        parsed = parse_pdi(pdi)
        self._guard_series(parsed)
        version, records = self._records(parsed, latest)
        self._guard_embargo(parsed, version)
        return [_name(r) for r in records]

    def versions(self, pdi: PDI | str) -> list[int]:
        """The version numbers of the document a PDI names."""
        parsed = parse_pdi(pdi)
        self._guard_series(parsed)
        key = _key_of(parsed)
        hidden = self._unlisted()
        return [v for v in self.store.versions(key) if hidden.version_listed(key, v)]

    def open_octets(self, pdi: PDI | str, *, latest: bool = False) -> Opened:
        """A versioned name's stored octets, to be read by verified chunks (never whole); close it after.

        The fragment, if any, is only named (:meth:`resolve` evaluates it).
        A generic name is refused as by :meth:`get`.
        """
        parsed, found = self._look_up(pdi, latest)
        if isinstance(found, Generic):
            raise UnsupportedError(
                f"{found.pdi} is generic (no format): name one of "
                + ", ".join(str(p) for p in found.names)
            )
        return Opened(_name(found, fragment=parsed.fragment), found, self._reader(found))

    def _reader(self, record: RepresentationRecord) -> ChunkedReader:
        reader = self.store.open_blob(record.sha256, name=str(_name(record)))
        if reader is None:
            raise IntegrityError(f"the bytes of {_name(record)} are missing from the store")
        if isinstance(reader, FileReader):
            reader.memo = self.fixity_memo
        if reader.size != record.size:
            reader.close()
            raise IntegrityError(
                f"the bytes of {_name(record)} are {reader.size} octets, not the {record.size} recorded"
            )
        return reader

    def _read(self, parsed: PDI, record: RepresentationRecord) -> Resolved:
        with self._reader(record) as reader:
            if parsed.fragment is None:
                data = reader.read()
                return Resolved(_name(record), data, record.media_type, record.charset, record)
            if reader.path is None and parsed.fragment.effective_scheme(record.format) == "byte":
                # a byte range of a blob with no local file: read the chunks it touches, not the whole
                lazy = Resolved(_name(record), RangedOctets(reader), record.media_type, record.charset, record)  # type: ignore[arg-type]
                return self.select(lazy, parsed.fragment)
            index = self.store.fragment_index(record.sha256, record.media_type, record.charset)
            with mapped(reader) as octets:
                whole = Resolved(_name(record), octets, record.media_type, record.charset, record)  # type: ignore[arg-type]
                result = self.select(whole, parsed.fragment, index=index)
                if record.media_type.startswith("multipart/"):
                    reader.verify()  # an aggregate's fragment is read from its parsed root part
                else:
                    verify_selected(reader, result.fragment)
                selected: object = result.data  # the map itself when a fragment selects it whole (rect)
                if not isinstance(selected, bytes):
                    result = dataclasses.replace(result, data=bytes(result.data))
                return result

    @staticmethod
    def select(whole: Resolved, fragment: Fragment, *, index: bytes | None = None) -> Resolved:
        """What ``fragment`` selects in a whole representation already resolved (its bytes read and checked).

        ``index`` is the one made at deposit (:meth:`Store.fragment_index`), if any: the
        result is the same, read from less.
        """
        from pdi import fragments

        record = whole.record
        result = fragments.evaluate(
            fragment.effective_scheme(record.format),
            fragment.positions,
            whole.data,
            media_type=record.media_type,
            charset=record.charset,
            index=index,
        )
        # an aggregate has no charset of its own; its root part's text has (pdi.fragments.aggregate)
        charset = record.charset if record.charset is not None else result.charset
        return Resolved(_name(record, fragment=fragment), result.data, result.media_type, charset, record, result)

    # --- full-text search ------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        series: str | None = None,
        limit: int = 20,
        after: str | None = None,
    ) -> SearchResults:
        """The passages holding every word of ``query``, best first, each named as a ``char`` fragment.

        ``query`` is the reader's words (:func:`pdi.fulltext.parse_query`:
        ``"…"`` a phrase, no operators; a query without words is a
        :class:`~pdi.errors.ParseError`). Words are matched as the store's
        engine folds and stems them (SQLite FTS5: Porter; PostgreSQL:
        English). A hit is one passage (about :data:`pdi.fulltext.PASSAGE_CHARS`
        characters) of one name: its ``name`` is ``NAME#char=a,b``, the
        shortest stretch of the passage holding a match of every phrase;
        ``matches`` each matched word's own range. A page is ``limit`` hits
        after the cursor ``after`` (the ``next`` of the page before).
        """
        from pdi.archive.store import SearchKey
        from pdi.passages.fulltext import Passage, marked, parse_query, smallest_window, snippet

        parsed = parse_query(query)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise LimitError(f"a page of search results holds 1 to {MAX_SEARCH_LIMIT} hits, not {limit!r}")
        name = None
        if series is not None and series != "":
            name = canonical_series(series)
            self._require_series(name)
        cursor = SearchKey.parse(after) if after else None
        rows = self.store.search(parsed.phrases, series=name, limit=limit + 1, after=cursor,
                                 access=self._search_access())
        hits: list[SearchHit] = []
        for row in rows[:limit]:
            text, marks = marked(row.marked)
            groups = [marks] if len(row.each) == 1 else [marked(each)[1] for each in row.each]
            # one phrase: its first match; several: the shortest stretch with a match of each
            window = (marks[0] if len(groups) == 1 and marks else smallest_window(groups)) or (0, len(text))
            passage = Passage(row.passage.start, text, row.passage.runs)
            start, end = passage.document_range(*window) if window[1] > window[0] else (passage.start,) * 2
            shown, shown_marks = snippet(text, marks, window)
            hits.append(SearchHit(
                name=_name(row.record, fragment=Fragment("char", (start, end))),
                record=row.record,
                start=start,
                end=end,
                snippet=shown,
                marks=shown_marks,
                matches=tuple(passage.document_range(a, b) for a, b in marks),
                score=row.key.score,
                cursor=str(row.key),
            ))
        following = hits[-1].cursor if len(rows) > limit and hits else None
        return SearchResults(parsed, tuple(hits), following)

    def reindex(
        self, *, series: str | None = None, progress: Callable[[int, int], None] | None = None
    ) -> ReindexReport:
        """Make the full-text index again from the stored octets (of the names in ``series``, if given).

        One write transaction: a failure leaves the index as it was. Every
        blob is read once by verified chunks; ``progress`` is told how many
        blobs of how many are done.
        """
        name = None
        if series is not None:
            name = canonical_series(series)
            self._require_series(name)
        sources, passages, notes = self.store.rebuild_search_index(name, progress)
        return ReindexReport(sources, passages, tuple(notes))

    # --- listing -----------------------------------------------------------------------
    def ls(
        self,
        pattern: PDI | str | None = None,
        *,
        series: str | None = None,
        year: int | None = None,
        month: int | None = None,
        day: int | None = None,
        limit: int | None = None,
        offset: int = 0,
        after: PDI | str | None = None,
    ) -> list[PDI]:
        """Versioned PDIs in date, then serial order: by pattern, series and/or date; paginated.

        A page is ``limit`` names, after the name ``after`` (a keyset
        cursor: the last name of the page before, as cheap at the millionth
        name as at the first) and then ``offset`` more (which costs reading
        them). A series (given, or named by the pattern) that is not
        registered is a :class:`~pdi.errors.NotFoundError`, not an empty
        list: a mistyped series name must not look like an empty series.
        :meth:`iter_ls` yields the same names one at a time.
        """
        return list(self.iter_ls(
            pattern, series=series, year=year, month=month, day=day, limit=limit, offset=offset, after=after
        ))

    def iter_ls(
        self,
        pattern: PDI | str | None = None,
        *,
        series: str | None = None,
        year: int | None = None,
        month: int | None = None,
        day: int | None = None,
        limit: int | None = None,
        offset: int = 0,
        after: PDI | str | None = None,
    ) -> Iterator[PDI]:
        """The names :meth:`ls` lists, as the catalog is read a page at a time (memory: one page).

        The arguments are checked before the first name is read. Order:
        GMT day; then a day's serial names by serial, then its names with a
        foreign id by id (code points, or the catalog's collation); then
        series, version and format (:class:`~pdi.archive.store.ListKey`).
        """
        query = self._list_query(pattern, series, year, month, day, limit, offset, after)
        return self._names(query)

    def _names(self, query: ListQuery | None) -> Iterator[PDI]:
        if query is None:
            return
        namer = _Namer()
        hidden = self._unlisted()
        if not hidden:
            for record in self.store.iter_representations(query):
                yield namer(record)
            return
        # names the reader may not learn of are left out before the page is counted
        skip, left = query.offset, query.limit
        for record in self.store.iter_representations(dataclasses.replace(query, offset=0, limit=None)):
            if not hidden.version_listed(DocumentKey(record.series, record.day, record.unique_id), record.version):
                continue
            if skip:
                skip -= 1
                continue
            if left is not None:
                if left <= 0:
                    return
                left -= 1
            yield namer(record)

    def _list_query(
        self,
        pattern: PDI | str | None,
        series: str | None,
        year: int | None,
        month: int | None,
        day: int | None,
        limit: int | None,
        offset: int,
        after: PDI | str | None,
    ) -> ListQuery | None:
        """The store's query for :meth:`iter_ls` (``None``: nothing can match)."""
        if limit is not None and limit < 0:
            raise LimitError("limit must not be negative")
        if offset < 0:
            raise LimitError("offset must not be negative")
        cursor = None if after is None else _list_key(parse_pdi(after))
        query = ListQuery(
            series=canonical_series(series) if series is not None else None,
            year=year,
            month=month,
            day=day,
            limit=limit,
            offset=offset,
            after=cursor,
        )
        if query.series is not None:
            self._require_series(query.series)
        if pattern is not None:
            parsed = parse_pdi(pattern)
            if parsed.citation is not None or parsed.fragment is not None:
                raise UnsupportedError("list with a pattern without fragment or citation")
            for name, value in (("year", year), ("month", month), ("day", day)):
                if value is not None:
                    raise UnsupportedError(f"give the {name} in the pattern, not beside it")
            wanted = parsed.to_query()
            self._require_series(wanted.series.lower())
            if _foreign_serial(parsed):
                return None
            if series is not None and canonical_series(series) != wanted.series.lower():
                raise UnsupportedError("the pattern names another series than --series")
            query = ListQuery(
                series=wanted.series.lower(),
                year=wanted.year,
                month=wanted.month,
                day=wanted.day,
                unique_id=wanted.unique_id,
                format=wanted.format,
                version=wanted.version,
                limit=limit,
                offset=offset,
                after=cursor,
            )
        return query

    def _require_series(self, series: str) -> None:
        """:class:`NotFoundError` unless ``series`` (canonical) is registered and the current reader may read it.

        A series the reader may not read is a :class:`~pdi.errors.AccessError`
        (403), or the same not-found as an unregistered one when it is hidden.
        """
        from pdi.archive.access import HIDDEN

        access = self._unreadable().get(series)
        if access == HIDDEN or self.store.get_series(series) is None:
            raise NotFoundError(f"series {series} is not registered (`pdi series ls` lists those that are)")
        if access is not None:
            raise AccessError(f"the series {series} is private; a token that may read it is needed")

    # --- assertions ------------------------------------------------------------------------
    def annotate(
        self, pdi: PDI | str, key: str, value: str, *, who: str | None = None, writer: Writer | None = None
    ) -> AssertionRecord:
        """Append a statement ``key = value`` about a PDI (or fragment PDI); history is kept.

        Keys are Dublin Core terms (``title``, ``creator``, ``date``, ``dcterms:…``)
        or free keys: a letter, then letters, digits, ``.``, ``_``, ``:``, ``-``.
        A ``writer`` (a token of the write API) must have the role ``curate``
        over the series; the statement is then audited in its transaction.
        """
        parsed = parse_pdi(pdi)
        if writer is not None:
            writer.require("curate", parsed.series_name.lower())
        if not isinstance(key, str) or not _KEY.match(key):
            raise ParseError(
                f"bad key {key!r}: a letter, then up to 199 letters, digits, '.', '_', ':', '-'",
                rule="key",
            )
        if not isinstance(value, str):
            raise ParseError("a value must be text", rule="value")
        if len(value) > MAX_ASSERTION_VALUE:
            raise LimitError(f"a value may have at most {MAX_ASSERTION_VALUE} characters")
        subject = self._subject(parsed)
        if writer is not None:
            return self.store.add_assertion(
                _key_of(parsed), subject, key, value, writer.name, _timestamp(self._now()),
                address=writer.address, audited=True,
            )
        return self.store.add_assertion(
            _key_of(parsed), subject, key, value, who or self.who, _timestamp(self._now())
        )

    def _subject(self, parsed: PDI) -> str:
        """The canonical text of a name statements are about; it must be in the archive.

        The document must exist, and the version and format if named (their
        bytes are not read: that is :meth:`verify`'s work).
        """
        if parsed.is_pattern:
            raise UnsupportedError(f"{parsed} is a pattern; statements are about one name")
        if parsed.format is not None:
            self._record(parsed, *self._records(parsed, latest=False))
        elif not self.store.document_exists(_key_of(parsed)):
            raise NotFoundError(f"{parsed} is not in this archive")
        return str(parsed.canonical())

    def history(self, pdi: PDI | str) -> list[AssertionRecord]:
        """Every statement made about exactly this PDI, oldest first; it must be in the archive."""
        parsed = parse_pdi(pdi)
        self._guard_series(parsed)
        subject = self._subject(parsed)
        self._guard_embargo(parsed, None if parsed.format is None else (parsed.version or 1))
        return self.store.assertions(subject)

    def meta(self, pdi: PDI | str) -> dict[str, str]:
        """The latest value of each key stated about exactly this PDI."""
        current: dict[str, str] = {}
        for record in self.history(pdi):
            current[record.key] = record.value
        return current

    # --- web annotations (pdi.archive.kept_annotations: the annotation server's domain) ---------------------
    def create_annotation(
        self, data: object, *, slug: str | None = None, writer: Writer | None = None, who: str | None = None
    ) -> AnnotationRecord:
        """Keep a new W3C Web Annotation (Web Annotation Protocol §5.1, §5.2): its record, audited.

        Its name is ``slug`` if that is a safe path segment naming no
        annotation, present or deleted (:func:`pdi.archive.kept_annotations.safe_slug`),
        else a UUID. An ``id`` it has is kept as ``via``. Its archived targets
        must be in the archive and readable now; a ``writer`` needs the role
        ``curate`` over each one's series (over all, when it has none).
        """
        from pdi.archive import kept_annotations as anno

        kept = anno.check_annotation(data)
        given = data.get("id") if isinstance(data, dict) else None
        if isinstance(given, str) and given:
            kept.setdefault("via", given)
        targets = self._annotation_targets(kept, writer)
        return self.store.add_annotation(
            anno.safe_slug(slug), anno.new_slug(), anno.encode(kept), targets,
            writer.name if writer else (who or self.who), _timestamp(self._now()),
            address=writer.address if writer else None,
        )

    def annotation(self, slug: str) -> AnnotationRecord:
        """The annotation named ``slug``, if the current reader may read every archived document it targets.

        Not found (404) when there is none, or when one of its documents is
        in a hidden series; 403 when one is private or embargoed; once
        deleted, :class:`~pdi.errors.DeletedError` (410).
        """
        record = self.store.annotation(slug)
        if record is None:
            raise NotFoundError(f"no annotation {slug!r} in this archive")
        for key, version in record.targets:
            self._guard_document(key, version, f"the annotation {slug!r}")
        if record.deleted_at is not None:
            raise DeletedError(f"the annotation {slug!r} was deleted {record.deleted_at}")
        return record

    def replace_annotation(
        self, slug: str, data: object, *, holds: Callable[[str], bool], writer: Writer | None = None,
        who: str | None = None,
    ) -> AnnotationRecord:
        """Replace an annotation's whole state (Web Annotation Protocol §5.3): its new record, audited.

        ``holds`` says whether the precondition the client sent holds for the
        current entity tag (:func:`pdi.archive.kept_annotations.entity_tag`):
        :class:`~pdi.errors.PreconditionError` (412) when it does not, or when
        another change came first. A ``canonical`` or ``via`` once set may not
        change (409). A ``writer`` needs ``curate`` over the series of the
        targets before and after.
        """
        from pdi.archive import kept_annotations as anno

        current = self._annotation_to_change(slug, holds, writer)
        kept = anno.check_annotation(data)
        changed = anno.unchanged_links(json.loads(current.data), kept)
        if changed:
            raise ImmutabilityError(f"the annotation {slug!r} keeps its {' and '.join(changed)}: they may not change")
        targets = self._annotation_targets(kept, writer)
        replaced = self.store.replace_annotation(
            slug, current.revision, anno.encode(kept), targets, writer.name if writer else (who or self.who),
            _timestamp(self._now()), address=writer.address if writer else None,
        )
        if replaced is None:
            raise PreconditionError(f"the annotation {slug!r} changed (or was deleted) meanwhile: read it again")
        return replaced

    def delete_annotation(
        self, slug: str, *, holds: Callable[[str], bool], writer: Writer | None = None, who: str | None = None
    ) -> None:
        """Delete an annotation (Web Annotation Protocol §5.4), audited; its name is never given again.

        ``holds`` and ``writer`` as for :meth:`replace_annotation`.
        """
        current = self._annotation_to_change(slug, holds, writer)
        if not self.store.delete_annotation(
            slug, current.revision, writer.name if writer else (who or self.who), _timestamp(self._now()),
            address=writer.address if writer else None,
        ):
            raise PreconditionError(f"the annotation {slug!r} changed (or was deleted) meanwhile: read it again")

    def _annotation_to_change(self, slug: str, holds: Callable[[str], bool], writer: Writer | None) -> AnnotationRecord:
        from pdi.archive import kept_annotations as anno

        current = self.annotation(slug)
        if writer is not None:
            writer.require("curate")
            for key, _ in current.targets:
                writer.require("curate", key.series)
        if not holds(anno.entity_tag(current)):
            raise PreconditionError(
                f"the annotation {slug!r} is no longer in the state its If-Match names: read it again (ETag)"
            )
        return current

    def annotations(self, offset: int = 0, limit: int = 100) -> tuple[int, list[AnnotationRecord]]:
        """How many annotations the current reader may read, and ``limit`` of them from ``offset``, oldest first."""
        if offset < 0 or not 1 <= limit <= 10_000:
            raise LimitError(f"a page of annotations starts at 0 or after and holds 1 to 10000, not {offset}+{limit}")
        return self.store.annotation_page(self._search_access(), offset, limit)

    def _annotation_targets(self, data: dict[str, object], writer: Writer | None) -> list[tuple[DocumentKey, int | None]]:
        """The archived documents (and versions) an annotation targets: each in the archive, readable now, and
        (for a ``writer``) in a series its token may curate."""
        from pdi.archive import kept_annotations as anno

        found: list[tuple[DocumentKey, int | None]] = []
        for name in anno.archived_targets(data):
            parsed = parse_pdi(name)
            if parsed.is_pattern or parsed.citation is not None:
                raise UnsupportedError(f"an annotation targets one archived name, not a pattern or citation: {name[:120]}")
            if writer is not None:
                writer.require("curate", parsed.series_name.lower())
            located = self.locate(parsed.without_fragment())
            version = located.record.version if isinstance(located, Resolved) else None
            found.append((_key_of(parsed), version))
        if writer is not None and not found:
            writer.require("curate")
        return found

    def _guard_document(self, key: DocumentKey, version: int | None, what: str) -> None:
        """Refuse ``what`` (about a document, or a version of it) to a reader who may not read it: not found if its
        series is hidden, forbidden if private or embargoed (:mod:`pdi.archive.access`)."""
        from pdi.archive.access import PUBLIC, Disclosure, current_reader, disclosure

        reader = current_reader.get()
        if reader is None or reader.may_read(key.series):
            return  # the rule's first clause (the owner, a token of the series learn all), before any catalog read
        access = self.series_access().get(key.series, PUBLIC)
        until = self.store.embargo(key, version) if access == PUBLIC else None
        embargoed = until is not None and until > _timestamp(self._now())
        told = disclosure(reader, key.series, access, embargoed=embargoed)  # the one rule (pdi.archive.access)
        if told is Disclosure.NOTHING:
            raise NotFoundError(f"{what} is not in this archive")
        if told is Disclosure.EXISTENCE:
            raise AccessError(f"{what} is about a document embargoed until {until}" if embargoed else
                              f"{what} is about the private series {key.series}; a token that may read it is needed")

    def latest_statements(self, names: Sequence[PDI], key: str) -> dict[str, str]:
        """The latest value of ``key`` stated about each of ``names``, by canonical name (absent: none stated).

        :meth:`meta` for a list (a TimeMap's captures): one catalog query a
        thousand names at a time, where :meth:`meta` costs a few a name. The
        names are of documents the caller found through this archive (which
        checked their series for the current reader); a version under an
        embargo the reader is not exempt from gets no value, as :meth:`meta`
        refuses it.
        """
        from pdi.archive.access import current_reader

        reader = current_reader.get()
        subjects: list[str] = []
        now = _timestamp(self._now())
        for name in names:
            document = _key_of(name)
            if reader is not None and not reader.may_read(document.series):
                until = self.store.embargo(document, name.version)
                if until is not None and until > now:
                    continue
            subjects.append(str(name.canonical()))
        found: dict[str, str] = {}
        for start in range(0, len(subjects), _STATEMENT_NAMES):
            for record in self.store.statements_about(subjects[start : start + _STATEMENT_NAMES], key):
                found[record.subject] = record.value  # oldest first: the last one read is the latest
        return found

    # --- browsing (the reader's pages) ------------------------------------------------------
    def series_counts(self) -> list[SeriesCount]:
        """Every registered series with how many documents it holds and its first and last day of minting.

        A reader (:mod:`pdi.archive.access`) sees only the series it may read.
        """
        hidden = self._unlisted()
        counts = [c for c in self.store.series_counts() if hidden.series_listed(c.series)]
        less = self._embargoed_days(hidden)
        if not hidden.embargoed:
            return counts
        adjusted = []
        touched = {key.series for key in hidden.embargoed}
        for count in counts:
            if any(series == count.series for series, _ in less):
                days = self._days_less(count.series, self.store.day_counts(count.series), less)
                count = dataclasses.replace(
                    count, documents=sum(d.documents for d in days),
                    first_day=days[0].day if days else None, last_day=days[-1].day if days else None,
                )
            if count.series in touched:
                count = dataclasses.replace(count, last_deposit=self._last_listed_deposit(count.series, hidden))
            adjusted.append(count)
        return adjusted

    def _last_listed_deposit(self, series: str, hidden: Unlisted) -> str | None:
        """When the latest deposit the reader may learn of was made into ``series``.

        A day without an embargo in force gives its kept time; the documents
        of a day with one are read (a page at a time), from the latest day
        down, only while that day could still hold a later deposit.
        """
        embargoed_days = {key.day for key in hidden.embargoed if key.series == series}
        kept = self.store.day_last_deposits(series)
        best = max((at for day, at in kept.items() if day not in embargoed_days), default=None)
        for day in sorted(embargoed_days & kept.keys(), key=kept.__getitem__, reverse=True):
            if best is not None and kept[day] <= best:
                break
            after = None
            while True:
                records = self.store.day_documents(series, day, after, 100)
                for record in records:
                    key = DocumentKey(record.series, record.day, record.unique_id)
                    if hidden.version_listed(key, record.version) and (best is None or record.created_at > best):
                        best = record.created_at
                documents = _documents_of(records)
                if len(documents) < 100:
                    break
                after = documents[-1].pdi.unique_id
        return best

    @staticmethod
    def _embargoed_days(hidden: Unlisted) -> dict[tuple[str, datetime.date], int]:
        """How many documents embargoed whole (not listed) each (series, day) has, for its counts."""
        less: dict[tuple[str, datetime.date], int] = {}
        for key, versions in hidden.embargoed.items():
            if versions is None:
                less[(key.series, key.day)] = less.get((key.series, key.day), 0) + 1
        return less

    @staticmethod
    def _days_less(series: str, days: list[DayCount], less: dict[tuple[str, datetime.date], int]) -> list[DayCount]:
        """``days`` of ``series`` with the documents ``less`` leaves out taken off (a day left with none dropped)."""
        kept = [dataclasses.replace(d, documents=d.documents - less.get((series, d.day), 0)) for d in days]
        return [d for d in kept if d.documents > 0]

    def day_counts(self, series: str, *, year: int | None = None, month: int | None = None) -> list[DayCount]:
        """The GMT days on which documents of ``series`` were minted (in ``year``, and ``month`` of it), with how many."""
        name = canonical_series(series)
        self._require_series(name)
        if month is not None and year is None:
            raise UnsupportedError("a month needs its year")
        first = last = None
        if year is not None:
            try:
                first = datetime.date(year, month or 1, 1)
                last = (
                    datetime.date(year, 12, 31) if month is None
                    else datetime.date(year + month // 12, month % 12 + 1, 1) - datetime.timedelta(days=1)
                )
            except (ValueError, OverflowError) as exc:
                raise ParseError(f"no such year and month: {year}, {month}: {exc}", rule="date") from exc
        return self._days_less(name, self.store.day_counts(name, first, last), self._embargoed_days(self._unlisted()))

    def day_documents(
        self, series: str, day: datetime.date, *, after: str | None = None, limit: int = 100
    ) -> DocumentPage:
        """A page of the documents of ``series`` minted on ``day``: serial ones by serial, then by foreign id.

        ``after`` is the unique id of the last document of the page before
        (the page's own ``after`` gives it): a keyset, as cheap deep in a day
        of a hundred thousand documents as at its start.
        """
        name = canonical_series(series)
        self._require_series(name)
        if limit < 1:
            raise LimitError("a page holds at least one document")
        hidden = self._unlisted()
        documents: list[Generic] = []
        while True:  # one more than a page: is there a next page? (what the reader may not see is not counted)
            batch = _documents_of(self.store.day_documents(name, day, after, limit + 1))
            documents += self._listed(batch, hidden)
            if len(documents) > limit or len(batch) <= limit:
                break
            after = batch[-1].pdi.unique_id
        following = documents[limit - 1].pdi.unique_id if len(documents) > limit else None
        return DocumentPage(tuple(documents[:limit]), self._titles(documents[:limit]), following)

    def captures(self, url: str, *, after: PDI | str | None = None, limit: int = 500,
                 before: PDI | str | None = None) -> DocumentPage:
        """The captures of ``url``: the documents whose encapsulated unique id is ``url``, in every series.

        By day, then series; each version of a document is one capture (a
        page captured again on the same day and found changed becomes its next
        version: :func:`pdi.capture.deposit.deposit_capture`). ``after`` is
        the generic name of the last document of the page before (the page's
        own ``after``); ``before`` instead, that of the first document of the
        page after (the page then holds the ``limit`` documents before it, and
        its ``after`` is always its last one's). ``url`` is compared exactly as
        the id was deposited.
        """
        if not url:
            raise ParseError("a URL to list the captures of is needed", rule="encapsulated-unique-id")
        if limit < 1:
            raise LimitError("a page holds at least one document")
        cursor = None if after is None else self._capture_cursor(after)
        upto = None if before is None else self._capture_cursor(before)
        hidden = self._unlisted()
        documents: list[Generic] = []
        while True:  # what the reader may not see is left out before the page is cut
            batch = _documents_of(self.store.unique_id_documents(url, cursor, limit + 1, before=upto))
            shown = self._listed(batch, hidden)
            documents = shown + documents if upto is not None else documents + shown
            if len(documents) > limit or len(batch) <= limit:
                break
            edge = batch[0] if upto is not None else batch[-1]
            edge_date = edge.pdi.date
            assert edge_date is not None  # a document the catalog holds
            if upto is not None:
                upto = (edge_date, edge.pdi.series_name.lower())
            else:
                cursor = (edge_date, edge.pdi.series_name.lower())
        if upto is not None:
            page = documents[-limit:]
            return DocumentPage(tuple(page), self._titles(page), str(page[-1].pdi) if page else None)
        following = str(documents[limit - 1].pdi) if len(documents) > limit else None
        return DocumentPage(tuple(documents[:limit]), self._titles(documents[:limit]), following)

    @staticmethod
    def _capture_cursor(name: PDI | str) -> tuple[datetime.date, str]:
        """The keyset cursor of :meth:`captures` a generic name gives: its day and series."""
        last = parse_pdi(name)
        if last.date is None or last.is_pattern:
            raise UnsupportedError(f"{last} names no one document: after= and before= take a generic name")
        return (last.date, last.series_name.lower())

    def changes(
        self, *, after: int = 0, series: str | None = None, limit: int = 100,
        since: str | None = None, until: str | None = None,
    ) -> list[DocumentChange]:
        """The next ``limit`` documents after the cursor ``after`` (of ``series`` only), each as it is now.

        In catalog order (the order documents were first deposited), which
        never changes, so a harvester pages through with the last
        :attr:`~pdi.archive.results.DocumentChange.cursor` it was given. With
        ``since`` or ``until`` (ISO 8601 UTC, inclusive) only the documents
        that last changed between them, found from the catalog's stamps
        before any document is read. A whole withdrawn document is still
        listed, with its ``withdrawn_at``; withdrawn versions are left out of
        its versions.
        """
        if limit < 1:
            raise LimitError("a page holds at least one document")
        wanted = None if series is None else series.lower()
        hidden = self._unlisted()
        found: list[DocumentChange] = []
        while len(found) < limit:
            stamps = self.store.document_stamps(after, wanted, max(limit, _STAMP_BATCH))
            for stamp in stamps:
                # a document with versions the reader may not learn of is dated by the rest (its change
                # may be earlier than its stamp): it is read before it is matched against until
                partly = stamp.key in hidden.embargoed
                if (since is None or stamp.changed_at >= since) and (until is None or stamp.changed_at <= until
                                                                      or partly):
                    change = self._change(stamp, hidden)
                    if change is None:  # not the reader's to learn of, withdrawn or not
                        continue
                    if partly and not ((since is None or change.changed_at >= since)
                                       and (until is None or change.changed_at <= until)):
                        continue
                    found.append(change)
                    if len(found) == limit:
                        break
            if len(stamps) < max(limit, _STAMP_BATCH):
                break
            after = stamps[-1].cursor
        return found

    def changed_document(self, series: str, day: datetime.date, digest: str) -> str | None:
        """The generic name of the document of ``series`` minted on ``day`` whose name's SHA-256 is ``digest``.

        How a harvest goes on after a record whose name is too long to carry
        in a resumption token (:mod:`pdi.server.interop`): reads that day's
        documents a page at a time.
        """
        after = None
        while True:
            documents = _documents_of(self.store.day_documents(canonical_series(series), day, after, 100))
            for document in documents:
                name = str(document.pdi)
                if _sha256(name.encode()) == digest:
                    return name
            if len(documents) < 100:
                return None
            after = documents[-1].pdi.unique_id

    def document_change(self, pdi: PDI | str) -> DocumentChange:
        """One document as :meth:`changes` lists it, by its generic name (or any of its names)."""
        parsed = parse_pdi(pdi)
        if parsed.is_pattern or parsed.citation is not None:
            raise UnsupportedError(f"{parsed} names no one document")
        stamp = self.store.document_stamp(_key_of(parsed))
        change = None if stamp is None else self._change(stamp, self._unlisted())
        if change is None:  # a document the reader may not learn of all of is not in the list: not found
            raise NotFoundError(f"{parsed.without_fragment()} is not in this archive")
        return change

    def _change(self, stamp: DocumentStamp, hidden: Unlisted) -> DocumentChange | None:
        """The document as a list shows it to the reader (``None``: not the reader's to learn of)."""
        if not hidden.document_listed(stamp.key):
            return None
        shown = [r for r in self.store.representations(stamp.key) if hidden.version_listed(stamp.key, r.version)]
        if not shown:
            return None
        records = [
            r for r in shown
            if stamp.withdrawn_at is not None or self.store.withdrawal(stamp.key, r.version) is None
        ]
        withdrawn_at: str | None = stamp.withdrawn_at
        if not records:  # every version withdrawn: the document is listed as it was, marked withdrawn
            records = shown
            withdrawn_at = stamp.changed_at
        statements = tuple(self.store.document_assertions(stamp.key))
        partly = stamp.key in hidden.embargoed
        if withdrawn_at is None or partly:  # what was said of a withdrawn (or unlisted) version goes with it
            held = {r.version for r in records}
            statements = tuple(s for s in statements if _version_of_subject(s.subject) in held | {None})
        changed_at = stamp.changed_at
        if partly:  # dated by what the reader may learn of: its versions, statements and withdrawals
            moments = [r.created_at for r in shown] + [s.at for s in statements]
            moments += [w.at for w in self.store.withdrawals_of([stamp.key])
                        if w.version is None or hidden.version_listed(stamp.key, w.version)]
            changed_at = max(moments)
            if withdrawn_at is not None and stamp.withdrawn_at is None:
                withdrawn_at = changed_at
        return DocumentChange(stamp.cursor, _generic_of(records), statements, changed_at, withdrawn_at)

    def document(self, pdi: PDI | str) -> DocumentDetail:
        """What the catalog knows of the document a name belongs to: versions, formats, statements, fixity checks."""
        parsed = parse_pdi(pdi)
        if parsed.is_pattern or parsed.citation is not None:
            raise UnsupportedError(f"{parsed} names no one document")
        key = _key_of(parsed)
        self._guard_series(parsed)
        records = self.store.representations(key)
        if not records:
            raise NotFoundError(f"{parsed.without_fragment()} is not in this archive")
        self._guard_embargo(parsed, None)
        hidden = self._unlisted()
        records = [r for r in records if hidden.version_listed(key, r.version)]
        if not records:
            raise AccessError(f"{parsed.without_fragment()}: every version is embargoed")
        statements = self.store.document_assertions(key)
        if key in hidden.embargoed:  # what was said of a version the reader may not learn of goes with it
            held = {r.version for r in records} | {None}
            statements = [s for s in statements if _version_of_subject(s.subject) in held]
        return DocumentDetail(
            _generic_of(records),
            tuple(records),
            tuple(statements),
            self.store.last_fixity_checks([r.sha256 for r in records]),
        )

    def _titles(self, documents: Sequence[Generic]) -> dict[str, str]:
        """The title of each document that has one: stated about its generic name, or else about a versioned name.

        A document under an embargo the current reader is not exempt from
        shows no title (its statements are its content's).
        """
        hidden = self._unlisted()
        if hidden:
            documents = [d for d in documents if _key_of(d.pdi) not in hidden.embargoed]
        owner: dict[str, str] = {}
        for each in documents:
            generic = str(each.pdi.canonical())
            owner[generic] = generic
            for name in each.names:
                owner[str(name.canonical())] = generic
        found: dict[str, tuple[bool, int, str]] = {}  # document -> (about the document itself, id, value)
        for record in self.store.statements_about(list(owner), "title"):
            about = owner[record.subject]
            rank = (record.subject == about, record.id, record.value)
            if about not in found or rank > found[about]:
                found[about] = rank
        return {str(d.pdi): found[str(d.pdi.canonical())][2] for d in documents if str(d.pdi.canonical()) in found}

    # --- fixity -------------------------------------------------------------------------------
    def verify(self, progress: Callable[[int, int], None] | None = None) -> VerifyReport:
        """Recompute the SHA-256 of every stored representation and check the catalog itself.

        Reports missing or altered blobs, and damage to the catalog: what the
        database's own integrity check finds and any broken invariant of the
        catalog (:meth:`pdi.archive.catalog.SQLStore.catalog_problems`), as
        problems of kind ``catalog-…``. Blobs are checked in SHA-256 order,
        read from the catalog a page at a time and merged with the sorted
        names of the stored blobs (to find those no name holds), so memory
        does not grow with the number of names; only a problem's names are
        gathered. Each blob's check (when, and whether its bytes were whole) is
        recorded in the catalog, :data:`FIXITY_CHECKS_PAGE` to a transaction,
        for the reader's document page (:meth:`document`).
        """
        report = VerifyReport()
        total = self.store.count_blobs_used()
        stored = self.store.iter_blob_names()
        waiting = next(stored, None)  # the next stored blob not yet matched
        described: dict[tuple[str, str, str | None, str | None], tuple[str, str] | None] = {}
        checks: list[FixityCheck] = []
        for done, use in enumerate(self.store.iter_blob_uses(), start=1):
            while waiting is not None and waiting < use.sha256:
                report.unreferenced.append(waiting)
                waiting = next(stored, None)
            if waiting == use.sha256:
                waiting = next(stored, None)
            if use.purged:
                gone = tuple(
                    (str(_name(r)), r.purged) for r in self.store.blob_representations(use.sha256) if r.purged
                )
                report.purged.extend(Problem("purged", use.sha256, (name,), f"octets purged {at}") for name, at in gone)
            if use.purged == use.representations:  # every name purged: the octets should be gone
                report.checked_representations += use.representations
                left = self.store.open_blob(use.sha256, name=f"blob {use.sha256}")
                if left is not None:
                    left.close()
                    report.problems.append(Problem(
                        "unpurged", use.sha256, tuple(name for name, _ in gone),
                        "the octets of purged names are still stored; purge again (pdi withdraw NAME --reason … --purge)",
                    ))
                if progress is not None:
                    progress(done, max(total, done))
                continue
            problem = self._check_blob(use.sha256, use.sizes)
            checks.append(FixityCheck(
                use.sha256, _timestamp(self._now()), problem is None, None if problem is None else problem[0]
            ))
            if len(checks) >= FIXITY_CHECKS_PAGE:
                self.store.record_fixity_checks(checks)
                checks.clear()
            if problem is None:
                problem = described_problem(use, described)
            if problem is not None:
                names = tuple(sorted(str(_name(r)) for r in self.store.blob_representations(use.sha256)))
                report.problems.append(Problem(problem[0], use.sha256, names, problem[1]))
            report.checked_blobs += 1
            report.checked_representations += use.representations
            if progress is not None:
                progress(done, max(total, done))
        self.store.record_fixity_checks(checks)
        while waiting is not None:
            report.unreferenced.append(waiting)
            waiting = next(stored, None)
        for found in self.store.catalog_problems():
            report.problems.append(Problem(f"catalog-{found.kind}", "", (found.subject,), found.detail))
        return report

    def _check_blob(self, sha: str, sizes: tuple[int, int]) -> tuple[str, str] | None:
        """Read one blob whole, streamed: ``(kind, detail)`` if it is missing, altered or of another size.

        ``sizes`` are the smallest and the largest size the catalog records
        for it (:class:`~pdi.archive.store.BlobUse`).
        """
        reader = self.store.open_blob(sha, name=f"blob {sha}")
        if reader is None:
            return ("missing", "no stored bytes")
        with reader:
            found = reader.audit()
        if found.sha256 != sha:
            where = ""
            if found.damaged:
                first = found.damaged[0]
                start = first * reader.info.chunk_size
                where = (
                    f" (chunk {first}, octets {start} to"
                    f" {min(start + reader.info.chunk_size, found.size) - 1}"
                    + (f", and {len(found.damaged) - 1} more" if len(found.damaged) > 1 else "")
                    + ")"
                )
            return ("altered", f"SHA-256 is now {found.sha256}{where}")
        if sizes != (found.size, found.size):
            return ("size", f"size {found.size} differs from the catalog")
        return None

    def remove_unreferenced(self, older_than: float = 3600.0) -> list[str]:
        """Delete what interrupted deposits left: blobs no name holds, untouched for ``older_than`` seconds.

        Nothing any name holds is ever removed; a deposit still in progress
        keeps its blob (see the store's method). Returns what was removed.
        """
        if older_than < 0:
            raise LimitError("older_than must not be negative")
        return self.store.remove_unreferenced(older_than)

    def audit(self, after: int = 0, limit: int = 1000) -> list[AuditRecord]:
        """The audit log after entry ``after``, oldest first: who wrote what, when and from where.

        Imports, writes through the API (each in the transaction that made
        it), and the making and revoking of tokens are logged.
        """
        return self.store.audit_log(after, limit)

    # --- tokens of the write API (pdi.archive.tokens) -----------------------------------------
    def add_token(
        self, name: str, *, role: str, series: Sequence[str] = (), who: str | None = None
    ) -> tuple[TokenRecord, str]:
        """Make a token; returns its record and the token itself, which is shown this once and never kept.

        The making (and a revoking) is in the audit log, in its own transaction.

        ``series`` (each registered) limits what it may write, each with its
        subseries; none: every series.
        """
        from pdi.archive import tokens

        tokens.check_name(name)
        tokens.check_role(role)
        scope = []
        for one in series:
            canonical = canonical_series(one)
            self._require_series(canonical)
            scope.append(canonical)
        secret = tokens.new_secret()
        at = _timestamp(self._now())
        record = self.store.add_token(name, tokens.digest(secret), role, scope, at, who or self.who)
        return record, secret

    def tokens(self) -> list[TokenRecord]:
        """Every token ever made (revoked ones too, with when), oldest first; never the tokens themselves."""
        return self.store.list_tokens()

    def revoke_token(self, name: str, *, who: str | None = None) -> TokenRecord:
        """Revoke a token by name, at once and for good; revoking it again changes nothing."""
        return self.store.revoke_token(name, _timestamp(self._now()), who or self.who)

    def authenticate(self, secret: str) -> TokenRecord | None:
        """The live token ``secret`` is, or ``None`` (unknown, or revoked)."""
        from pdi.archive import tokens

        if not secret.startswith(tokens.PREFIX):
            return None
        record = self.store.token_by_digest(tokens.digest(secret))
        return record if record is not None and record.revoked_at is None else None

    # --- moving ----------------------------------------------------------------------------------
    def export_bag(
        self,
        directory: str | os.PathLike[str],
        *,
        series: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Write the archive (or one series and its subseries) as a BagIt bag; returns the names."""
        from pdi.archive.bagit import export_bag

        return export_bag(self, Path(directory), series=series, progress=progress)

    def import_bag(
        self,
        directory: str | os.PathLike[str],
        *,
        progress: Callable[[int, int], None] | None = None,
        series: str | None = None,
        deposited: Callable[[PDI, str], None] | None = None,
    ) -> int:
        """Validate a bag and bring every name and byte in it into this archive (all or nothing).

        Without ``series``: a bag :meth:`export_bag` wrote, whose names move as they were;
        returns the new representations. With ``series``: a bag another tool made, whose
        payload files become new documents of ``series`` (:func:`pdi.archive.bagit.import_payload`;
        ``deposited`` is told each name and its path in the bag); returns how many.
        """
        from pdi.archive.bagit import import_bag

        return import_bag(self, Path(directory), progress=progress, series=series, deposited=deposited)


def _version_of_subject(subject: str) -> int | None:
    """The version a statement's subject names (``None``: the document, by its generic name)."""
    try:
        parsed = PDI.parse(subject)
    except ParseError:
        return None
    return parsed.version if parsed.format is not None else None
