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
A deposit whose bytes equal the latest version's of the same document stores
nothing and answers with that version (:class:`Deposit`, ``unchanged``)
unless forced.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import mmap
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, overload

from pdi import charsets, formats
from pdi.archive.blobs import ChunkedReader, Octets
from pdi.archive.content import (
    Content,
    canonical_text,
    detect_charset,
    is_text_format,
    prepare,
)
from pdi.archive.store import (
    AssertionRecord,
    AuditRecord,
    BlobUse,
    DepositResult,
    DocumentKey,
    ListKey,
    ListQuery,
    NewRepresentation,
    RepresentationRecord,
    SeriesRecord,
    Store,
)
from pdi.errors import (
    IntegrityError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    UnsupportedError,
)
from pdi.identifier import PDI, Fragment, series_for_minting, spells_serial

if TYPE_CHECKING:
    from pdi.fragments import FragmentResult
    from pdi.fragments.citation import QuotationCheck

__all__ = [
    "DEFAULT_LOCATION",
    "Archive",
    "AssertionRecord",
    "AuditRecord",
    "CitationResolved",
    "Content",
    "Deposit",
    "Generic",
    "GenericVersion",
    "Resolved",
    "SeriesRecord",
    "VerifyReport",
    "canonical_text",
    "detect_charset",
    "is_text_format",
    "resolve_location",
]

#: Where the archive lives when neither ``--archive`` nor ``$PDI_ARCHIVE`` says.
DEFAULT_LOCATION = "pdi-archive"

#: The largest single assertion value accepted (characters).
MAX_ASSERTION_VALUE = 1 << 16

_KEY = re.compile(r"[A-Za-z][A-Za-z0-9._:-]{0,199}\Z")



def resolve_location(location: str | os.PathLike[str] | None) -> str:
    """The archive location: the argument, else ``$PDI_ARCHIVE``, else ``./pdi-archive``."""
    if location is not None and str(location) != "":
        return str(location)
    return os.environ.get("PDI_ARCHIVE") or DEFAULT_LOCATION


def _open_store(location: str, *, create: bool) -> Store:
    from pdi.archive.postgres import is_postgres_url, open_postgres
    from pdi.archive.sqlite import open_sqlite

    if is_postgres_url(location):
        return open_postgres(location, create=create)
    return open_sqlite(location, create=create)


@dataclass(frozen=True)
class Deposit(Sequence[PDI]):
    """What a deposit answers: the versioned names of its formats, and whether it stored them.

    ``unchanged`` is ``True`` when nothing was stored because every format's
    bytes (as the archive stores them: text CRLF-canonical) and charset equal
    those of the latest version of the same document, which has the same
    formats; ``names`` are then that version's existing names. A deposit is
    a sequence of its names, so ``deposit[0]`` and ``(name,) = deposit`` work.
    """

    names: tuple[PDI, ...]
    unchanged: bool = False

    @property
    def version(self) -> int:
        """The version the names are of (the new one, or the unchanged latest one)."""
        version = self.names[0].version
        assert version is not None
        return version

    def __len__(self) -> int:
        return len(self.names)

    @overload
    def __getitem__(self, index: int) -> PDI: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[PDI, ...]: ...

    def __getitem__(self, index: int | slice) -> PDI | tuple[PDI, ...]:
        return self.names[index]


@dataclass(frozen=True)
class Resolved:
    """A resolved PDI: the bytes of one format of one version (or of a fragment of it)."""

    pdi: PDI
    data: bytes
    media_type: str
    charset: str | None
    record: RepresentationRecord
    fragment: FragmentResult | None = None

    @property
    def sha256(self) -> str:
        """The fixity checksum of the whole stored representation."""
        return self.record.sha256


@dataclass(frozen=True)
class Opened:
    """A versioned name opened for reading: its record and a reader of its octets by verified chunks.

    ``reader.chunks(start, end)`` yields the octets (each chunk checked
    against its SHA-256 as it is read); ``reader.path`` is a local file with
    exactly these octets where the store has one. Close it (or use ``with``).
    """

    pdi: PDI
    record: RepresentationRecord
    reader: ChunkedReader

    @property
    def size(self) -> int:
        return self.record.size

    def close(self) -> None:
        self.reader.close()

    def __enter__(self) -> Opened:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Up to this size a blob without a local file is read into memory to evaluate a fragment on it;
#: a larger one is copied to a temporary file and memory-mapped (the selection's chunks checked after).
_IN_MEMORY = 64 << 20


@contextlib.contextmanager
def _mapped(reader: ChunkedReader) -> Iterator[bytes | mmap.mmap]:
    """The blob's octets as a buffer a fragment evaluator can index: a read-only memory map where possible.

    Octets read through a map are not verified as they are touched:
    :func:`_verify_selected` checks the chunks a selection came from.
    """
    if reader.size == 0:
        yield b""
        return
    if reader.path is None and reader.size <= _IN_MEMORY:
        yield reader.read()
        return
    if reader.path is not None:
        with open(reader.path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            yield mapped
        return
    with tempfile.TemporaryFile(prefix="pdi-blob-") as spool:
        for piece in reader.unverified():  # checked by range after the evaluation
            spool.write(piece)
        spool.flush()
        with mmap.mmap(spool.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            yield mapped


def _verify_selected(reader: ChunkedReader, result: FragmentResult | None) -> None:
    """Check the chunks a fragment's selection came from; the whole blob when it selects no octet range.

    An image or sound fragment reads the whole entity, and so is checked whole.
    """
    if result is None:
        return
    if result.ranges:
        for r in result.ranges:
            reader.verify_range(r.byte_start, r.byte_end)
    elif result.region is not None or result.interval is not None:
        reader.verify()


@dataclass(frozen=True)
class CitationResolved:
    """Both ends of a citation ``A@origin=B#fragment`` and whether the quotation stands at ``origin`` in A.

    ``cited`` is ``None`` when B is not in this archive (the check then says
    ``unchecked``); ``check`` is a :class:`pdi.fragments.citation.QuotationCheck`.
    """

    pdi: PDI
    citing: Resolved
    origin: object
    cited: Resolved | None
    check: QuotationCheck

    def to_json(self) -> dict[str, object]:
        """Both names, the position (as the PDI syntax writes it) and the check, as JSON values."""
        origin = self.origin
        position = "(" + ",".join(map(str, origin)) + ")" if isinstance(origin, tuple) else origin
        assert self.pdi.citation is not None
        return {
            "citing": str(self.citing.pdi),
            "cited": str(self.cited.pdi if self.cited is not None else self.pdi.citation.cited),
            "position": position,
            "check": self.check.status,
            "detail": self.check.detail,
            "quote": self.check.quote,
            "found": self.check.found,
        }


@dataclass(frozen=True)
class GenericVersion:
    """One version of the document a generic PDI names: its number, when it was deposited, its formats.

    ``created_at`` is the deposit time as the catalog records it (ISO 8601,
    UTC: ``2026-11-22T14:30:00.000000Z``), that of the version's first
    format (a format added later with :meth:`Archive.add_format` keeps its
    own time in its record). ``formats`` are the versioned names of its
    formats, in token order.
    """

    number: int
    created_at: str
    formats: tuple[PDI, ...]


@dataclass(frozen=True)
class Generic:
    """A resolved generic PDI (no format, so no version): every version of the document, oldest first.

    Resolved with ``latest=True``, only the newest version.
    """

    pdi: PDI
    versions: tuple[GenericVersion, ...]

    @property
    def names(self) -> tuple[PDI, ...]:
        """The versioned name of every format of every version, oldest version first."""
        return tuple(name for version in self.versions for name in version.formats)


@dataclass(frozen=True)
class Problem:
    """One fixity problem found by :meth:`Archive.verify`."""

    kind: str  # "missing" | "altered" | "size" | "catalog-<what>" (sha256 then empty)
    sha256: str
    names: tuple[str, ...]
    detail: str


@dataclass
class VerifyReport:
    """The result of a fixity audit."""

    checked_blobs: int = 0
    checked_representations: int = 0
    problems: list[Problem] = field(default_factory=list)
    unreferenced: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every stored representation is present and unaltered."""
        return not self.problems


#: What a representation's recorded line-ending convention may be (:func:`pdi.fragments.text.line_ending_convention`).
_LINE_ENDINGS = frozenset({"crlf", "lf", "cr", "nel", "crnel", "mixed", "none"})


def _description_problem(
    format: str, media_type: str, charset: str | None, line_ending: str | None
) -> tuple[str, str] | None:
    """A catalog problem in how a representation is described: what a deposit would not have written."""
    try:
        expected = formats.media_type_for(format)
    except PDIError:
        return ("catalog-representation", f"format {format!r} is not a format token")
    if media_type != expected:
        return ("catalog-representation", f"format {format} is {expected}, but the catalog says {media_type}")
    if charset is not None:
        try:
            charsets.codec_for(charset)
        except PDIError:
            return ("catalog-representation", f"charset {charset!r} is not a charset")
    if line_ending is not None and line_ending not in _LINE_ENDINGS:
        return ("catalog-representation", f"line-ending convention {line_ending!r} is not one pdi records")
    return None


def _described_problem(
    use: BlobUse, seen: dict[tuple[str, str, str | None, str | None], tuple[str, str] | None]
) -> tuple[str, str] | None:
    """The first problem in the descriptions of one blob's representations; ``seen`` remembers each description's answer."""
    for description in use.descriptions:
        if description not in seen:
            seen[description] = _description_problem(*description)
        if (found := seen[description]) is not None:
            return found
    return None


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _timestamp(now: datetime.datetime) -> str:
    return now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


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

    # --- opening -----------------------------------------------------------------
    @classmethod
    def init(
        cls,
        location: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], datetime.datetime] = _utc_now,
    ) -> Archive:
        """Create an archive (or open and migrate an existing one) at ``location``."""
        return cls(_open_store(resolve_location(location), create=True), clock=clock)

    @classmethod
    def open(
        cls,
        location: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], datetime.datetime] = _utc_now,
    ) -> Archive:
        """Open an existing archive; :class:`NotFoundError` when there is none."""
        return cls(_open_store(resolve_location(location), create=False), clock=clock)

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
        """Every registered series, by name."""
        return self.store.list_series()

    # --- deposits ---------------------------------------------------------------------
    # Each deposit checks its bytes against their declared format and charset
    # (pdi.archive.content) and, unless forced, answers with the latest version
    # of the same document instead of storing bytes it already holds.
    def _deposited(self, result: DepositResult, reps: Sequence[NewRepresentation]) -> Deposit:
        records = {r.format: r for r in self.store.representations(result.key, result.version)}
        missing = [rep.format for rep in reps if rep.format not in records]
        if missing:  # pragma: no cover - a store bug
            raise NotFoundError(f"deposit of {', '.join(missing)} vanished")
        return Deposit(tuple(_name(records[rep.format]) for rep in reps), result.unchanged)

    def add(
        self,
        series: str,
        content: Octets,
        *,
        format: str,
        foreign_id: str | None = None,
        charset: str | None = None,
        force: bool = False,
    ) -> PDI:
        """Mint a PDI in ``series`` for today (GMT) and deposit one format; returns the versioned PDI.

        The one-format :meth:`deposit`: with a ``foreign_id`` already minted
        today whose latest version holds these bytes, it returns that name
        (:meth:`deposit` says whether it did).
        """
        return self.deposit(
            series, [Content(content, format, charset)], foreign_id=foreign_id, force=force
        )[0]

    def deposit(
        self,
        series: str,
        contents: Sequence[Content],
        *,
        foreign_id: str | None = None,
        force: bool = False,
        progress: Callable[[int], None] | None = None,
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
        """
        name = canonical_series(series)
        if not contents:
            raise ParseError("a deposit needs at least one format", rule="format")
        if self.store.get_series(name) is None:  # before a single octet is read
            raise NotFoundError(f"series {name} is not registered (pdi series add {name})")
        if foreign_id is not None:
            token = formats.canonical_token(contents[0].format)
            foreign_id = self._check_foreign_id(name, foreign_id, token, self._now().date())
        with self._staging(contents, force, progress) as reps:
            now = self._now()  # one instant: the minting day and the deposit's time agree
            result = self.store.mint(
                name, now.date(), foreign_id, reps, _timestamp(now), skip_identical=not force
            )
            return self._deposited(result, reps)

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
            for rep in reps:
                rep.blob.discard()
            raise
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
    ) -> Deposit:
        """Deposit a new version of a document; it must cover every format it is to have.

        When the latest version has exactly these formats with these bytes
        (compared by the SHA-256 of what would be stored) and charsets, nothing
        is stored and the answer is that version, ``unchanged``; ``force``
        deposits a new version all the same, and skips the content checks.
        """
        key = _key_of(_document(pdi, "a new version"))
        if not contents:
            raise ParseError("a version needs at least one format", rule="format")
        if not self.store.document_exists(key):
            raise NotFoundError(f"no document {key.series} {key.day.isoformat()} {key.unique_id} in the archive")
        with self._staging(contents, force, progress) as reps:
            result = self.store.new_version(
                key, reps, _timestamp(self._now()), skip_identical=not force
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
    ) -> PDI:
        """Add a format with the same content to an existing version (named by ``pdi``).

        The same bytes again change nothing and answer with the same name;
        ``force`` skips the content checks; ``source`` (a file name) is named
        when they refuse.
        """
        parsed = _document(pdi, "a new format")
        key = _key_of(parsed)
        version = parsed.version if parsed.version is not None else 1
        where = f"{key.series} {key.day.isoformat()} {key.unique_id}"
        versions = self.store.versions(key)
        if not versions:
            raise NotFoundError(f"no document {where} in the archive")
        if version not in versions:
            raise NotFoundError(f"no version {version} of {where} in the archive")
        with self._staging([Content(content, format, charset, source)], force, progress) as reps:
            result = self.store.add_formats(key, version, reps, _timestamp(self._now()))
            return self._deposited(result, reps)[0]

    # --- resolving -----------------------------------------------------------------------
    def _version_of(self, pdi: PDI, key: DocumentKey, latest: bool) -> int:
        versions = self.store.versions(key)
        if not versions:
            raise NotFoundError(f"{pdi.without_fragment()} is not in this archive")
        if latest:
            return versions[-1]
        version = pdi.version if pdi.version is not None else 1
        if version not in versions:
            raise NotFoundError(
                f"{pdi.without_fragment()}: no version {version} (versions: "
                f"{', '.join(map(str, versions))})"
            )
        return version

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
            return parsed, self._generic(parsed, latest)
        version, records = self._records(parsed, latest)
        return parsed, self._record(parsed, version, records)

    def _generic(self, parsed: PDI, latest: bool) -> Generic:
        """Every version of the document a generic PDI names (the newest only with ``latest``), from one catalog query."""
        records = self.store.representations(_key_of(parsed))
        if not records:
            raise NotFoundError(f"{parsed.without_fragment()} is not in this archive")
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
        _, records = self._records(parse_pdi(pdi), latest)
        return [_name(r) for r in records]

    def versions(self, pdi: PDI | str) -> list[int]:
        """The version numbers of the document a PDI names."""
        return self.store.versions(_key_of(parse_pdi(pdi)))

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
            index = self.store.fragment_index(record.sha256, record.media_type, record.charset)
            with _mapped(reader) as octets:
                whole = Resolved(_name(record), octets, record.media_type, record.charset, record)  # type: ignore[arg-type]
                result = self.select(whole, parsed.fragment, index=index)
                _verify_selected(reader, result.fragment)
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
        return Resolved(_name(record, fragment=fragment), result.data, result.media_type, record.charset, record, result)

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
        for record in self.store.iter_representations(query):
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
        """:class:`NotFoundError` unless ``series`` (canonical) is registered."""
        if self.store.get_series(series) is None:
            raise NotFoundError(f"series {series} is not registered (`pdi series ls` lists those that are)")

    # --- assertions ------------------------------------------------------------------------
    def annotate(self, pdi: PDI | str, key: str, value: str, *, who: str | None = None) -> AssertionRecord:
        """Append a statement ``key = value`` about a PDI (or fragment PDI); history is kept.

        Keys are Dublin Core terms (``title``, ``creator``, ``date``, ``dcterms:…``)
        or free keys: a letter, then letters, digits, ``.``, ``_``, ``:``, ``-``.
        """
        parsed = parse_pdi(pdi)
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
        return self.store.assertions(self._subject(parse_pdi(pdi)))

    def meta(self, pdi: PDI | str) -> dict[str, str]:
        """The latest value of each key stated about exactly this PDI."""
        current: dict[str, str] = {}
        for record in self.history(pdi):
            current[record.key] = record.value
        return current

    # --- fixity -------------------------------------------------------------------------------
    def verify(self, progress: Callable[[int, int], None] | None = None) -> VerifyReport:
        """Recompute the SHA-256 of every stored representation and check the catalog itself.

        Reports missing or altered blobs, and damage to the catalog: what the
        database's own integrity check finds and any broken invariant of the
        catalog (:meth:`pdi.archive.sql.SQLStore.catalog_problems`), as
        problems of kind ``catalog-…``. Blobs are checked in SHA-256 order,
        read from the catalog a page at a time and merged with the sorted
        names of the stored blobs (to find those no name holds), so memory
        does not grow with the number of names; only a problem's names are
        gathered.
        """
        report = VerifyReport()
        total = self.store.count_blobs_used()
        stored = self.store.iter_blob_names()
        waiting = next(stored, None)  # the next stored blob not yet matched
        described: dict[tuple[str, str, str | None, str | None], tuple[str, str] | None] = {}
        for done, use in enumerate(self.store.iter_blob_uses(), start=1):
            while waiting is not None and waiting < use.sha256:
                report.unreferenced.append(waiting)
                waiting = next(stored, None)
            if waiting == use.sha256:
                waiting = next(stored, None)
            problem = self._check_blob(use.sha256, use.sizes)
            if problem is None:
                problem = _described_problem(use, described)
            if problem is not None:
                names = tuple(sorted(str(_name(r)) for r in self.store.blob_representations(use.sha256)))
                report.problems.append(Problem(problem[0], use.sha256, names, problem[1]))
            report.checked_blobs += 1
            report.checked_representations += use.representations
            if progress is not None:
                progress(done, max(total, done))
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
        """The audit log after entry ``after``, oldest first: who wrote what, and when (imports today)."""
        return self.store.audit_log(after, limit)

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
    ) -> int:
        """Validate a bag and bring every name and byte in it into this archive (all or nothing)."""
        from pdi.archive.bagit import import_bag

        return import_bag(self, Path(directory), progress=progress)
