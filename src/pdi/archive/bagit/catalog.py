"""``data/catalog.json`` of a bag pdi exported, read back: streamed, checked, never held whole.

Its format and version, its sections streamed afresh at each pass (each
pass checking the file is still the one the manifest names), and each
representation and statement refused (a :class:`~pdi.errors.ParseError`
naming it) unless a deposit could have made it.
"""

from __future__ import annotations

import datetime
import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from pdi.archive.access import PUBLIC, check_access, parse_until
from pdi.archive.bagit.manifests import BagInfo
from pdi.archive.blobs import SHA256_HEX
from pdi.archive.naming import (
    MAX_ASSERTION_VALUE,
    STATEMENT_KEY,
    UNKEPT_IN_VALUE,
    canonical_series,
    key_of,
    parse_pdi,
    record_name,
    timestamp_problem,
)
from pdi.archive.store import (
    STORED_CANONICAL,
    STORED_EXACT,
    AssertionRecord,
    BlobSource,
    DocumentKey,
    RepresentationRecord,
    SeriesRecord,
    WithdrawalRecord,
)
from pdi.errors import IntegrityError, LimitError, ParseError, PDIError
from pdi.fragments.markup.bounds import MAX_SGML_INDEX_OCTETS
from pdi.identifier import spells_serial

EXPORT_FORMAT = "pdi-archive-export"
EXPORT_VERSION = 1
#: Where a bag keeps the parses of its SGML documents (their element indexes), each named by its SHA-256: what a
#: representation's optional ``element_index`` names (bags made before have none; an older pdi ignores them).
PARSES = "data/element-indexes"
#: The largest element index a bag may carry, of any document (each is checked against its own document's bound too).
MAX_PARSE_OCTETS = MAX_SGML_INDEX_OCTETS


class _CatalogBytes:
    """catalog.json opened for one pass, hashed as it is read: :meth:`check` says whether it is the file validated."""

    def __init__(self, path: Path, sha256: str) -> None:
        self.path = path
        self.sha256 = sha256
        self.handle = path.open("rb")
        self.digest = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.digest.update(data)
        return data

    def check(self) -> None:
        """At the end of a pass: the octets read are still the ones the manifest names."""
        while self.read(1 << 20):
            pass
        if self.digest.hexdigest() != self.sha256:
            raise IntegrityError(f"{self.path} changed during the import; nothing was imported")

    def close(self) -> None:
        self.handle.close()


#: A JSON escape of a UTF-16 surrogate (``\ud800``), or the same octets after an escaped backslash. ijson's C reader
#: reads a lone one as ``?``, so a value would change silently; its Python reader keeps it, and the checks of the
#: values refuse it (:data:`pdi.archive.naming.UNKEPT_IN_VALUE`).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class _Scanned:
    """A file read for a pass of ijson that notes whether :data:`_SURROGATE_ESCAPE` stands in its octets."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.tail = b""  # the end of the read before: an escape cut between two reads
        self.found = False

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        if not self.found and _SURROGATE_ESCAPE.search(self.tail + data) is not None:
            self.found = True
        self.tail = data[-3:]
        return data


class _Section:
    """One top-level list of catalog.json, streamed afresh at each iteration (one object at a time).

    Each pass hashes the octets it parses and ends with an
    :class:`IntegrityError` if they are no longer those the bag's manifest
    names (a catalog changed between two passes of an import). A catalog
    holding escapes of surrogates (``surrogates``) is read by ijson's Python
    reader, which keeps a lone one for the checks to refuse.
    """

    def __init__(self, path: Path, sha256: str, name: str, *, surrogates: bool = False) -> None:
        self.path = path
        self.sha256 = sha256
        self.name = name
        self.surrogates = surrogates

    def __iter__(self) -> Iterator[dict[str, Any]]:
        import ijson

        reader = ijson.get_backend("python") if self.surrogates else ijson
        try:
            source = _CatalogBytes(self.path, self.sha256)
        except OSError as exc:
            raise IntegrityError(f"cannot read {self.path}: {exc}") from exc
        try:
            for item in reader.items(source, f"{self.name}.item", use_float=True):
                if not isinstance(item, dict):
                    raise ParseError(f"catalog.json: {self.name} must be a list of objects", rule="catalog")
                yield item
            source.check()
        except ijson.JSONError as exc:
            raise ParseError(f"catalog.json is not JSON: {exc}", rule="catalog") from exc
        except OSError as exc:
            raise IntegrityError(f"cannot read {self.path}: {exc}") from exc
        finally:
            source.close()


@dataclass(frozen=True)
class _Header:
    """What catalog.json says about itself: its top-level values other than lists, and which lists it has."""

    values: dict[str, Any]
    lists: dict[str, int]  # each top-level list and how many items it holds
    surrogates: bool = False  # whether an escape of a surrogate stands in it (:data:`_SURROGATE_ESCAPE`)


#: The most changes of access rules an import brings in, all its series' ``rules`` together: each series' count is
#: one integer of its row (:meth:`~pdi.archive.catalog.imports.ImportsPart.import_all`), which a page of a series
#: adds to those of the series above it and each change of a rule then adds one to; a trillion leaves 64-bit room.
MAX_RULES_CHANGES = 1_000_000_000_000
#: How deep catalog.json may nest (pdi writes five levels at most): its header is read first, by events that carry
#: no path, and refused past it, so that the passes after it (whose parser keeps each event's path, memory of the
#: depth squared) never meet a deeper one. Found by an attack (2026-11-27): 80 KB nested 40,000 deep took 3.9 GB.
MAX_DEPTH = 100


def _catalog_header(path: Path) -> _Header:
    """One streamed pass over catalog.json: its top-level scalars, and its lists with their lengths; refused
    nested past :data:`MAX_DEPTH`."""
    import ijson

    values: dict[str, Any] = {}
    lists: dict[str, int] = {}
    top = True
    key = ""
    depth = 0
    in_list = False  # whether the value at depth 2 being read is one of the top-level lists
    try:
        with path.open("rb") as opened:
            handle = _Scanned(opened)
            for event, value in ijson.basic_parse(handle, use_float=True):
                if depth == 0 and event != "start_map":
                    raise ParseError("this bag is not a pdi archive export", rule="catalog")
                if event in ("start_map", "start_array"):
                    depth += 1
                    if depth > MAX_DEPTH:
                        raise ParseError(f"catalog.json nests more than {MAX_DEPTH} deep", rule="catalog")
                    if depth == 2 and event == "start_array":
                        lists[key], in_list = 0, True
                    elif depth == 2:
                        values[key], in_list = {}, False  # an object where a list or a value belongs
                    elif depth == 3 and in_list:
                        lists[key] += 1
                elif event in ("end_map", "end_array"):
                    depth -= 1
                elif depth == 1 and event == "map_key":
                    key = str(value)
                elif depth == 1:
                    values[key] = value
                elif depth == 2 and in_list:
                    lists[key] += 1  # a scalar item (refused later: items are objects)
                top = False
    except ijson.JSONError as exc:
        raise ParseError(f"catalog.json is not JSON: {exc}", rule="catalog") from exc
    except OSError as exc:
        raise IntegrityError(f"cannot read bag catalog {path}: {exc}") from exc
    if top:
        raise ParseError("catalog.json is empty", rule="catalog")
    return _Header(values, lists, handle.found)


def _field(entry: dict[str, Any], name: str, kind: type) -> Any:
    value = entry.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ParseError(f"catalog.json: {name} must be {kind.__name__}", rule="catalog")
    return value


def _optional(entry: dict[str, Any], name: str, kind: type) -> Any:
    return None if entry.get(name) is None else _field(entry, name, kind)


def _object_reader(bag: Path, sha256: str) -> Callable[[], bytes]:
    """A function that reads one object of the bag when the store writes it, checking it again.

    The store reads objects one at a time, so an import never holds more
    than one in memory; the second hash catches a file changed since
    :func:`validate_bag` hashed it (the import then stops, all or nothing).
    """

    def read() -> bytes:
        path = bag / "data" / "objects" / sha256
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise IntegrityError(f"cannot read bag object {path}: {exc}") from exc
        if hashlib.sha256(data).hexdigest() != sha256:
            raise IntegrityError(f"bag object {path} changed during the import: its SHA-256 is no longer its name")
        return data

    return read


def _moment(text: str, what: str) -> datetime.datetime:
    """A timestamp of the catalog (``…Z``, GMT) as a value; a ParseError naming ``what`` if it is not one."""
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ParseError(f"catalog.json: {what}: {text!r} is not a timestamp", rule="catalog") from exc
    if moment.tzinfo is None:
        raise ParseError(f"catalog.json: {what}: {text!r} has no time zone", rule="catalog")
    return moment.astimezone(datetime.UTC)


def _check_as_deposited(record: RepresentationRecord, pdi: str, now: datetime.datetime) -> None:
    """What minting and depositing would have refused, refused on import too.

    A name is minted on the GMT day of its deposit (a later version, or a
    name with a foreign id dated by its source, may be deposited later),
    never in the future; its
    format is a canonical token whose media type is the registry's; a charset
    is a registered one on a text format; the line-ending convention is one
    pdi records; the size is within the deposit limit.
    """
    from pdi import formats
    from pdi.archive.content import is_text_format
    from pdi.archive.fixity import LINE_ENDINGS

    created = _moment(record.created_at, f"{pdi} created_at")
    written = timestamp_problem(record.created_at)  # as the catalog writes it, which pdi verify reads
    if written is not None:
        raise ParseError(f"catalog.json: {pdi} created_at: {written}", rule="catalog")
    if created > now:
        raise ParseError(f"catalog.json: {pdi} was deposited in the future ({record.created_at})", rule="catalog")
    # Version 1 of a serial name is minted on the day of its deposit. A later version
    # is deposited on a later day, and a name with a foreign id may be dated by where
    # it came from (a web archive's capture date: Archive.deposit(day=)); none is
    # deposited before the day it names.
    later = record.day < created.date() and (record.serial is None or record.version > 1)
    if record.day != created.date() and not later:
        raise ParseError(
            f"catalog.json: {pdi} names the day {record.day}, but was deposited on {created.date()} (GMT)",
            rule="catalog",
        )
    if formats.canonical_token(record.format) != record.format:
        raise ParseError(f"catalog.json: {pdi}: format {record.format!r} is not a canonical token", rule="catalog")
    if record.media_type != formats.media_type_for(record.format):
        raise ParseError(
            f"catalog.json: {pdi}: media type {record.media_type!r} is not that of format"
            f" {record.format} ({formats.media_type_for(record.format)})",
            rule="catalog",
        )
    if record.charset is not None:
        if not is_text_format(record.format):
            raise ParseError(f"catalog.json: {pdi}: a charset on a format that is not text", rule="catalog")
        if formats.registered_charset(record.charset) != record.charset:
            raise ParseError(f"catalog.json: {pdi}: charset {record.charset!r} is not a registered name", rule="catalog")
    if record.line_ending is not None and record.line_ending not in LINE_ENDINGS:
        raise ParseError(f"catalog.json: {pdi}: line-ending convention {record.line_ending!r}", rule="catalog")
    if not 0 <= record.size < 1 << 63:
        raise ParseError(f"catalog.json: {pdi}: size {record.size}", rule="catalog")
    if record.stored not in (STORED_EXACT, STORED_CANONICAL):
        raise ParseError(f"catalog.json: {pdi}: stored {record.stored!r} is neither exact nor canonical", rule="catalog")


def _check_text_decodes(path: Path, record: RepresentationRecord, pdi: str) -> None:
    """A text's octets decode in its charset, as a deposit requires even with ``--force``.

    Read a piece at a time through the deposit's own check
    (:class:`pdi.archive.content.TextCheck`), so a large text costs one piece
    of memory. The UTF-8-declared-as-Latin-1 refusal is left out: a deposit
    may have been forced past it.
    """
    from pdi.archive.blobs import BlobInfo
    from pdi.archive.content import TextCheck

    assert record.charset is not None
    check = TextCheck(record.charset, detected=False, source=f"catalog.json: {pdi}")
    try:
        with path.open("rb") as stream:
            while piece := stream.read(1 << 20):
                check.update(piece)
    except OSError as exc:
        raise IntegrityError(f"cannot read bag object {path}: {exc}") from exc
    check.finish(BlobInfo(record.sha256, record.size))


def _check_statement(a: AssertionRecord, minted_at: str | None, now: datetime.datetime) -> None:
    """A statement is made by someone, after its document was minted and not in the future."""

    at = _moment(a.at, f"the statement {a.key!r} about {a.subject}")
    if at > now:
        raise ParseError(f"catalog.json: the statement {a.key!r} about {a.subject} is dated in the future ({a.at})", rule="catalog")
    if minted_at is not None and at < _moment(minted_at, a.subject):
        raise ParseError(
            f"catalog.json: the statement {a.key!r} about {a.subject} is dated {a.at},"
            f" before its document was minted ({minted_at})",
            rule="catalog",
        )
    if not STATEMENT_KEY.match(a.key) or len(a.value) > MAX_ASSERTION_VALUE or not a.who.strip():
        raise ParseError(f"catalog.json: the statement {a.key!r} about {a.subject} is malformed", rule="catalog")
    if (bad := UNKEPT_IN_VALUE.search(a.value)) is not None:
        raise ParseError(f"catalog.json: the statement {a.key!r} about {a.subject} holds U+{ord(bad[0]):04X} in its"
                         f" value (character {bad.start()}), which the catalog cannot keep whole", rule="catalog")
    if any(ch in a.who for ch in "\r\n\x00"):
        raise ParseError(f"catalog.json: the statement {a.key!r} about {a.subject}: who holds a control character", rule="catalog")


def _record(r: dict[str, Any], now: datetime.datetime, *, check: bool = True) -> RepresentationRecord:
    """A representation of catalog.json as a record, refused (a ParseError naming it) unless a deposit could have made it.

    ``check=False`` builds the record only: for the passes after the one
    that checked it, which end by making sure catalog.json is still the file
    that was checked (:class:`_CatalogBytes`).
    """

    try:
        record = RepresentationRecord(
            series=_field(r, "series", str),
            day=datetime.date.fromisoformat(_field(r, "day", str)),
            unique_id=_field(r, "unique_id", str),
            serial=_optional(r, "serial", int),
            version=_field(r, "version", int),
            format=_field(r, "format", str),
            media_type=_field(r, "media_type", str),
            charset=_optional(r, "charset", str),
            line_ending=_optional(r, "line_ending", str),
            sha256=_field(r, "sha256", str),
            size=_field(r, "size", int),
            created_at=_field(r, "created_at", str),
            # a bag made before schema 4 does not say: its texts were kept CRLF-canonical
            stored=_optional(r, "stored", str)
            or (STORED_CANONICAL if r.get("line_ending") is not None else STORED_EXACT),
            purged=_optional(r, "purged", str),
        )
        pdi = _field(r, "pdi", str)
        if not check:
            return record
        if pdi != str(record_name(record)):
            raise ParseError(f"catalog.json: {pdi} does not match its own parts", rule="catalog")
    except PDIError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise ParseError(f"catalog.json is malformed: {exc!r}", rule="catalog") from exc
    if not SHA256_HEX.fullmatch(record.sha256) or record.version < 1:
        raise ParseError(f"catalog.json: bad entry for {pdi}", rule="catalog")
    spelled = int(record.unique_id) if spells_serial(record.unique_id) else None
    if record.serial != spelled:
        raise ParseError(f"catalog.json: bad serial for {pdi}", rule="catalog")
    _check_as_deposited(record, pdi, now)
    if record.purged is not None:  # purged where it came from: no object, and none wanted
        _moment(record.purged, f"{pdi} purged")
    return record


def _access_change(entry: dict[str, Any]) -> tuple[DocumentKey, str]:
    """A document a change of access dated, and when (a catalog timestamp)."""
    key, at = _document_key(entry), _field(entry, "at", str)
    problem = timestamp_problem(at)
    if problem is not None:
        raise ParseError(f"catalog.json: the change of access of {key.series}/{key.day}/{key.unique_id}: {problem}",
                         rule="catalog")
    return key, at


def _document_key(entry: dict[str, Any]) -> DocumentKey:
    try:
        return DocumentKey(
            _field(entry, "series", str), datetime.date.fromisoformat(_field(entry, "day", str)),
            _field(entry, "unique_id", str),
        )
    except ValueError as exc:
        raise ParseError(f"catalog.json is malformed: {exc!r}", rule="catalog") from exc


class _Representations:
    """The representations of catalog.json with a reader of each one's object, streamed afresh at each iteration."""

    def __init__(self, section: _Section, bag: Path, now: datetime.datetime) -> None:
        self.section = section
        self.bag = bag
        self.now = now
        #: Set once a whole pass has checked every record (the later passes only build them).
        self.checked = False

    def __iter__(self) -> Iterator[tuple[RepresentationRecord, BlobSource]]:
        check = not self.checked
        for entry in self.section:
            record = _record(entry, self.now, check=check)
            yield record, (b"" if record.purged is not None else _object_reader(self.bag, record.sha256))
        self.checked = True


class _Statements:
    """The statements of catalog.json, each under the document it is about, streamed."""

    def __init__(self, section: _Section) -> None:
        self.section = section

    def __iter__(self) -> Iterator[tuple[DocumentKey, AssertionRecord]]:
        for a in self.section:
            yield _document_key(a), AssertionRecord(
                0, _field(a, "subject", str), _field(a, "key", str), _field(a, "value", str),
                _field(a, "who", str), _field(a, "at", str),
            )


class _Withdrawals:
    """The withdrawals of catalog.json, streamed (none in a bag made before withdrawal existed)."""

    def __init__(self, section: _Section | None) -> None:
        self.section = section

    def __iter__(self) -> Iterator[WithdrawalRecord]:
        for w in self.section or ():
            yield WithdrawalRecord(
                _document_key(w), _optional(w, "version", int), _field(w, "reason", str), _field(w, "who", str),
                _field(w, "at", str), purged=w.get("purged") is True,
            )


class _Minted:
    """When each document of the bag was minted (its version 1 deposited), kept on disk, not in memory.

    A scratch SQLite database (SQLite's private temporary database on disk,
    gone when closed): an import of millions of names looks a statement's
    document up here without holding them all.
    """

    def __init__(self) -> None:
        import sqlite3

        self._db = sqlite3.connect("")
        self._db.execute("PRAGMA journal_mode = OFF")
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.execute("CREATE TABLE minted (series TEXT, day TEXT, unique_id TEXT, at TEXT,"
                         " PRIMARY KEY (series, day, unique_id)) WITHOUT ROWID")
        self._pending: list[tuple[str, str, str, str]] = []

    def add(self, record: RepresentationRecord) -> None:
        self._pending.append((record.series, record.day.isoformat(), record.unique_id, record.created_at))
        if len(self._pending) >= 5000:
            self._flush()

    def _flush(self) -> None:
        self._db.executemany("INSERT OR IGNORE INTO minted VALUES (?, ?, ?, ?)", self._pending)
        self._pending = []

    def at(self, key: DocumentKey) -> str | None:
        if self._pending:
            self._flush()
        row = self._db.execute("SELECT at FROM minted WHERE series = ? AND day = ? AND unique_id = ?",
                               (key.series, key.day.isoformat(), key.unique_id)).fetchone()
        return None if row is None else str(row[0])

    def close(self) -> None:
        self._db.close()


class _Parses:
    """Each SGML representation of catalog.json, distinct octets once, with the SHA-256 of the parse the bag carries
    of it (its ``element_index``; ``None``: none), streamed afresh at each iteration."""

    def __init__(self, section: _Section, now: datetime.datetime) -> None:
        self.section = section
        self.now = now

    def __iter__(self) -> Iterator[tuple[RepresentationRecord, str | None]]:
        from pdi.fragments.markup import markup_kind

        seen: set[tuple[str, str, str]] = set()
        for entry in self.section:
            record = _record(entry, self.now, check=False)
            carried = _optional(entry, "element_index", str)
            if carried is not None and markup_kind(record.media_type) != "sgml":
                raise ParseError(f"catalog.json: {entry.get('pdi')} is not SGML, yet names an element index",
                                 rule="catalog")
            source = (record.sha256, record.media_type, record.charset or "")
            if record.purged is None and markup_kind(record.media_type) == "sgml" and source not in seen:
                seen.add(source)
                yield record, carried


def carried_parse(bag: Path, sha256: str) -> bytes:
    """The element index the bag carries under ``sha256`` (:data:`PARSES`), read and hashed again: one changed
    since the bag was validated is an :class:`~pdi.errors.IntegrityError`."""
    path = bag / PARSES / sha256
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_PARSE_OCTETS + 1)
    except OSError as exc:
        raise IntegrityError(f"cannot read bag file {path}: {exc}") from exc
    if len(data) > MAX_PARSE_OCTETS:
        raise IntegrityError(f"bag file {path} is larger than {MAX_PARSE_OCTETS >> 20} MiB, more than any element"
                             " index")
    if hashlib.sha256(data).hexdigest() != sha256:
        raise IntegrityError(f"bag file {path} changed during the import: its SHA-256 is no longer its name")
    return data


def _check_parses(parses: _Parses, bag: Path, manifest: dict[str, str]) -> None:
    """Each parse the bag carries is in its manifest and is an element index of SGML made of its representation's
    octets (:meth:`~pdi.fragments.markup.index.ElementIndex.check_made_for`), checked before anything is imported:
    an :class:`~pdi.errors.IntegrityError` naming the representation."""
    from pdi.fragments.markup.index import VERSION, ElementIndex, made_by_an_earlier_reading
    from pdi.fragments.sealed import sealed_version

    for record, carried in parses:
        if carried is None:
            continue
        name = str(record_name(record))
        if not SHA256_HEX.fullmatch(carried) or manifest.get(f"{PARSES}/{carried}") != carried:
            raise IntegrityError(f"the element index of {name} ({carried[:80]!r}) is not in the bag's manifest")
        data = carried_parse(bag, carried)
        try:
            index = ElementIndex.from_bytes(data)
            if made_by_an_earlier_reading(data):
                raise IntegrityError(f"an earlier reading made it (version {sealed_version(data)}, not {VERSION})")
            if index.kind != "sgml":
                raise IntegrityError(f"it is of {index.kind}, not SGML")
            index.check_made_for((bag / "data" / "objects" / record.sha256).read_bytes(), record.media_type,
                                 record.charset)
        except IntegrityError as exc:
            raise IntegrityError(f"{PARSES}/{carried}, the element index of {name}, is not one of its octets:"
                                 f" {exc}") from exc


@dataclass(frozen=True)
class Export:
    """A bag pdi exported, checked whole: what the store imports (each section streamed again as it reads it)."""

    series: list[SeriesRecord]
    representations: _Representations
    statements: _Statements
    withdrawals: _Withdrawals
    embargoes: list[tuple[DocumentKey, int | None, str]]
    #: Where catalog.json says the bag was exported from (for the audit log).
    source: object
    #: How many representations catalog.json lists.
    listed: int = 0
    #: The documents a change of access dated, with when (bags made before schema 21 have none).
    access_changes: tuple[tuple[DocumentKey, str], ...] = ()
    #: Its SGML representations and the parse it carries of each (:data:`PARSES`), kept after the import.
    parses: Iterable[tuple[RepresentationRecord, str | None]] = ()
    #: How many times each series' access rules had changed where it was exported (a series' ``rules``; bags made
    #: before schema step 25 have none): the archive it is imported into counts no fewer.
    rules: dict[str, int] = field(default_factory=dict)


def _export_sections(bag: Path, info: BagInfo) -> tuple[_Header, dict[str, _Section]]:
    """catalog.json's header, checked to be an export pdi knows, and each of its top-level lists to stream."""
    path = bag / "data" / "catalog.json"
    catalog_sha = info.payload.get("data/catalog.json")
    if catalog_sha is None:
        raise IntegrityError(
            f"{bag} holds no data/catalog.json in its manifest: it is not a bag pdi exported"
            " (to import its payload files as new documents, give a series: pdi import --series S)"
        )
    header = _catalog_header(path)
    if header.values.get("format") != EXPORT_FORMAT:
        raise ParseError(
            "this bag is not a pdi archive export (to import its payload files as new documents,"
            " give a series: pdi import --series S)", rule="catalog",
        )
    if header.values.get("version") != EXPORT_VERSION:
        raise ParseError(f"unknown export version {header.values.get('version')!r}", rule="catalog")
    for name in ("series", "representations", "assertions"):
        if name not in header.lists:
            raise ParseError(f"catalog.json: {name} must be a list of objects", rule="catalog")
    return header, {name: _Section(path, catalog_sha, name, surrogates=header.surrogates) for name in header.lists}


def _check_objects(
    reps: _Representations, bag: Path, manifest: dict[str, str], minted: _Minted, total: int,
    progress: Callable[[int, int], None] | None,
) -> None:
    """One pass over the representations: each checked (:func:`_record`), its object in the manifest and of its size,
    a text decoding in its charset; each document's minting noted in ``minted``."""
    sizes: dict[str, int] = {}  # each object looked at once, however many names share it
    decoded: set[tuple[str, str]] = set()  # and each text decoded once in each charset
    for done, (record, _) in enumerate(reps, start=1):
        if record.version == 1:
            minted.add(record)
        if record.purged is not None:  # no object to look at
            if progress is not None:
                progress(done, max(total, done))
            continue
        size = sizes.get(record.sha256)
        if size is None:
            # validate_bag hashed every payload file against the manifest: the
            # object is right when its manifest checksum is its own name.
            object_path = f"data/objects/{record.sha256}"
            if manifest.get(object_path) != record.sha256:
                raise IntegrityError(f"object {record.sha256} is not in the bag's manifest")
            size = sizes[record.sha256] = (bag / object_path).stat().st_size
        if size != record.size:
            raise IntegrityError(f"object {record.sha256} does not match its catalog entry")
        if record.charset is not None and (record.sha256, record.charset) not in decoded:
            _check_text_decodes(bag / "data" / "objects" / record.sha256, record, str(record_name(record)))
            decoded.add((record.sha256, record.charset))
        if progress is not None:
            progress(done, max(total, done))


def read_export(
    bag: Path, info: BagInfo, now: datetime.datetime, progress: Callable[[int, int], None] | None = None,
) -> Export:
    """The catalog of a valid bag pdi exported, every representation, object and statement checked once.

    ``catalog.json`` is never read whole: one streamed pass finds its
    sections and counts them, a second checks every representation (and
    each object beside it) and statement; ``progress`` is told how many
    representations of how many are checked.
    """
    header, sections = _export_sections(bag, info)
    minted = _Minted()
    try:
        series_records = [
            SeriesRecord(
                _field(s, "name", str), _optional(s, "parent", str),
                _field(s, "authority", str), _field(s, "created_at", str),
                check_access(_optional(s, "access", str) or PUBLIC),  # bags made before: public
            )
            for s in sections["series"]
        ]
        rules = {_field(s, "name", str): _rules_count(s) for s in sections["series"]}
        if sum(rules.values()) > MAX_RULES_CHANGES:
            raise LimitError(f"catalog.json: its series' access rules changed {sum(rules.values()):,} times in all"
                             f" (their \"rules\"), more than an import brings in ({MAX_RULES_CHANGES:,})")
        for one in series_records:
            if canonical_series(one.name) != one.name:
                raise ParseError(f"catalog.json: series {one.name!r} is not canonical",
                                 rule="catalog")
        reps = _Representations(sections["representations"], bag, now)
        _check_objects(reps, bag, info.payload, minted, header.lists["representations"], progress)
        statements = _Statements(sections["assertions"])
        for about, a in statements:
            if key_of(parse_pdi(a.subject)) != about:
                raise ParseError(
                    f"catalog.json: the statement about {a.subject} is filed under another"
                    " document",
                    rule="catalog",
                )
            _check_statement(a, minted.at(about), now)
        withdrawals = _Withdrawals(sections.get("withdrawals"))
        for _ in withdrawals:
            pass  # each one well formed before anything is staged
        embargoes = [  # few: a list (bags made before embargoes existed have none)
            (_document_key(e), _optional(e, "version", int), parse_until(_field(e, "until", str)))
            for e in sections.get("embargoes") or ()
        ]
        access_changes = tuple(_access_change(c) for c in sections.get("access_changes") or ())  # few
        parses = _Parses(sections["representations"], now)
        _check_parses(parses, bag, info.payload)
    except PDIError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise ParseError(f"catalog.json is malformed: {exc!r}", rule="catalog") from exc
    except FileNotFoundError as exc:
        raise IntegrityError(f"bag object missing: {exc.filename}") from exc
    except OSError as exc:
        raise IntegrityError(f"cannot read bag {bag}: {exc}") from exc
    finally:
        minted.close()
    return Export(series_records, reps, statements, withdrawals, embargoes, header.values.get("source"),
                  header.lists["representations"], access_changes, parses, rules)


def _rules_count(series: dict[str, Any]) -> int:
    """A series' ``rules``: a count, ``0`` when not given (bags made before schema step 25)."""
    count = _optional(series, "rules", int)
    if count is not None and count < 0:
        raise ParseError(f"catalog.json: the rules of series {str(series.get('name'))[:80]!r} must be a count, not"
                         f" {count}", rule="catalog")
    return count or 0
