"""Import: a bag brought into the archive, all or nothing.

A bag pdi exported (:func:`import_bag`) moves every name as it was, in one
transaction of the target store; a bag another tool made
(:func:`import_payload`) becomes new documents of a series, with
bag-info.txt's labels as statements on each.
"""

from __future__ import annotations

import datetime
import hashlib
import mimetypes
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pdi._wording import plural
from pdi.archive.bagit.catalog import EXPORT_FORMAT, Export, carried_parse, read_export
from pdi.archive.bagit.manifests import BagInfo, validate_bag
from pdi.archive.naming import (
    MAX_ASSERTION_VALUE,
    UNKEPT_IN_VALUE,
    canonical_series,
    checked_foreign_id,
    generic_text,
    record_name,
    timestamp,
)
from pdi.archive.store import AuditRecord, RepresentationRecord
from pdi.errors import (
    IntegrityError,
    LimitError,
    ParseError,
    PDIError,
    SeriesNotRegisteredError,
    UnsupportedError,
)
from pdi.identifier import PDI

if TYPE_CHECKING:
    from pdi.archive.catalog import SQLStore
    from pdi.archive.content import Content
    from pdi.archive.results import Deposit
    from pdi.archive.store import AssertionRecord


class Importing(Protocol):
    """What an import needs of the archive (an :class:`~pdi.archive.Archive` is one).

    Its catalog, clock and depositor, and, for a bag another tool made, its
    batch deposit and statements. Named here, not imported, so that the
    archive's own ``import_bag`` and this module do not import each other.
    """

    @property
    def store(self) -> SQLStore: ...

    @property
    def who(self) -> str: ...

    def now(self) -> datetime.datetime: ...

    def deposit_batch(self, series: str, items: Sequence[tuple[Sequence[Content], str | None]]) -> list[Deposit]: ...

    def annotate(self, pdi: PDI | str, key: str, value: str) -> AssertionRecord: ...

    def keep_brought_parse(self, record: RepresentationRecord, *, carried: bytes | None = None,
                           origin_sha256: str | None = None) -> str | None: ...


def import_bag(
    archive: Importing,
    bag: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
    series: str | None = None,
    deposited: Callable[[PDI, str], None] | None = None,
    force: bool = False,
) -> int:
    """Validate the bag, then import all of it into the archive in one transaction.

    With ``series``, the bag is one another tool made (:func:`import_payload`):
    its payload files become new documents of ``series``. Without, it is one
    :func:`export_bag` wrote, and every name in it moves as it was: but none
    new here of a version (or a document) withdrawn here, nor, unless
    ``force``, one whose octets a version of its document withdrawn here
    holds (as a deposit, :meth:`~pdi.archive.catalog.imports.ImportsPart.import_all`).

    ``catalog.json`` is never read whole: one streamed pass finds its
    sections and counts them, a second checks every representation (and
    each object beside it) and statement, and the store then reads the
    representations again as it stages the objects and as it writes the
    rows (each pass checking that the file is still the one the manifest
    names). Memory grows with the distinct objects and the days, not with
    the names.
    """

    now = archive.now()
    try:
        info = validate_bag(bag)
    except OSError as exc:
        raise IntegrityError(f"cannot read bag {bag}: {exc}") from exc
    if series is not None:
        if is_pdi_export(bag):
            raise UnsupportedError(f"{bag} is a bag pdi exported: it carries its own series (import it without one)")
        return import_payload(archive, bag, info, series, progress=progress, deposited=deposited)
    export = read_export(bag, info, now, progress)

    def new_document(first: RepresentationRecord) -> AuditRecord:
        # Who brought these names in, and from which bag, goes to the audit log.
        return AuditRecord(
            timestamp(now), archive.who, "import", generic_text(first),
            f"from the bag {bag} (catalog.json source {export.source!r})",
        )

    new = archive.store.import_all(
        export.series, export.representations, export.statements, (), export.withdrawals, export.embargoes,
        new_document=new_document, force=force, access_changes=export.access_changes, rules=export.rules,
    )
    return BagImported(len(new), listed=export.listed, unparsed=keep_parses(archive, bag, export))


def keep_parses(archive: Importing, bag: Path, export: Export) -> tuple[tuple[str, str], ...]:
    """Right after the import commits: keep the parse of each SGML document of the bag that has none here, so that
    its ``#elt=`` is answered at once (:meth:`~pdi.archive.Archive.keep_brought_parse`): the one the bag carries
    (checked before the import), else one made here, as a deposit makes it. Each in a transaction of its own:
    one not kept (the import stopped between two, ``onsgmls`` missing here) leaves that document's ``elt``
    refused, as before, until ``pdi reindex --elements`` keeps one. Those not kept, each with why."""
    left: list[tuple[str, str]] = []
    for record, carried in export.parses:
        why = archive.keep_brought_parse(record, carried=None if carried is None else carried_parse(bag, carried))
        if why is not None:
            left.append((str(record_name(record)), why))
    return tuple(left)


class BagImported(int):
    """How many new representations a bag import made (the number itself), and how many the bag listed.

    The others the archive held already, byte for byte under the same
    names: importing an archive's own export into it changes nothing.
    """

    listed: int
    #: The SGML documents whose parse was not kept (each name, and why): their ``elt`` is refused until
    #: ``pdi reindex --elements`` keeps one.
    unparsed: tuple[tuple[str, str], ...]

    def __new__(cls, new: int, *, listed: int, unparsed: tuple[tuple[str, str], ...] = ()) -> BagImported:
        made = super().__new__(cls, new)
        made.listed = listed
        made.unparsed = unparsed
        return made

    @property
    def unchanged(self) -> int:
        return self.listed - int(self)


# --- bags other tools made ----------------------------------------------------------------


def is_pdi_export(bag: Path) -> bool:
    """Whether ``bag`` is one :func:`export_bag` wrote: its ``data/catalog.json`` opens with pdi's ``format``.

    Reads the first few JSON events only; any other catalog.json (or none) is a bag another tool made.
    """
    import ijson

    path = bag / "data" / "catalog.json"
    if not path.is_file() or path.is_symlink():
        return False
    try:
        with path.open("rb") as handle:
            # events without their paths (a path a level, memory of the depth squared for a deep bomb), and
            # use_float: ijson's C reader crashes the process (SIGSEGV) on an integer of more than 4,300 digits
            depth, key = 0, None
            for count, (event, value) in enumerate(ijson.basic_parse(handle, use_float=True, buf_size=4096)):
                if event in ("start_map", "start_array"):
                    depth += 1
                elif event in ("end_map", "end_array"):
                    depth -= 1
                elif depth == 1 and event == "map_key":
                    key = value
                elif depth == 1 and key == "format":
                    return bool(event == "string" and value == EXPORT_FORMAT)
                if count > 16:
                    return False
    except (ijson.JSONError, OSError, UnicodeDecodeError):
        return False
    return False


def _payload_format(path: Path) -> str:
    """The format a payload file is deposited in: its name's media type, unless its bytes say otherwise.

    The type ``mimetypes`` gives the name, when pdi knows it and the first
    octets do not contradict it (:func:`pdi.archive.content.check_format`)
    and, for a text, every octet decodes in the charset a deposit would
    detect; otherwise ``application/octet-stream``, which claims nothing: a
    bag's files are kept whatever their names say.
    """
    from pdi import formats
    from pdi.archive.blobs import BlobInfo
    from pdi.archive.content import SNIFF_BYTES, TextCheck, charset_from_head, check_format, is_text

    unknown = formats.token_for("application/octet-stream")
    media_type, encoding = mimetypes.guess_type(path.name, strict=False)
    if media_type is None or encoding is not None:
        return unknown
    try:
        token = formats.token_for(media_type)
        media_type = formats.media_type_for(token)
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
        check_format(head, token, media_type)
        if is_text(token, media_type):
            check = TextCheck(formats.charset_for(token) or charset_from_head(head), detected=True)
            size = 0
            with path.open("rb") as handle:
                while piece := handle.read(1 << 20):
                    check.update(piece)
                    size += len(piece)
            check.finish(BlobInfo("", size))
    except PDIError:
        return unknown
    return token


def _payload_reader(path: Path, sha256: str, name: str) -> Iterator[bytes]:
    """The octets of a payload file, opened when first read, hashed again: a file changed since validation is refused."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while piece := handle.read(1 << 20):
                digest.update(piece)
                yield piece
    except OSError as exc:
        raise IntegrityError(f"cannot read bag file {name}: {exc}") from exc
    if digest.hexdigest() != sha256:
        raise IntegrityError(f"{name} changed during the import; nothing was imported")


def _statement_key(label: str) -> str:
    """The statement key a bag-info.txt label is kept under: ``bag-info:`` and the label, other characters as ``-``."""
    return "bag-info:" + re.sub(r"[^A-Za-z0-9._:-]", "-", label)[:180]


def import_payload(
    archive: Importing,
    bag: Path,
    info: BagInfo,
    series: str,
    *,
    progress: Callable[[int, int], None] | None = None,
    deposited: Callable[[PDI, str], None] | None = None,
) -> int:
    """The payload files of a valid bag another tool made, as new documents of ``series`` (the documents all or none, their statements after); how many.

    Each file under ``data/`` is a document minted today, its foreign id its
    path under ``data/`` (a daily serial when that path cannot be an id: all
    digits, say), in the format :func:`_payload_format` finds, its octets
    exactly as they are. They are deposited in one batch
    (:meth:`pdi.archive.Archive.deposit_batch`): a refusal deposits none, and
    importing the same bag again on the same day is refused (a name is
    minted once). Then each gets the statements ``bagit:path`` (its path in
    the bag) and, for each label of bag-info.txt, ``bag-info:<label>`` (the
    label's values, a line each), each statement in a transaction of its own
    as the import of a WARC makes them (RFC 8493 §2.2.2 for the labels).
    """
    from pdi.archive.content import Content

    series = canonical_series(series)
    if archive.store.get_series(series) is None:
        raise SeriesNotRegisteredError(series)
    statements: dict[str, list[str]] = {}
    for label, value in info.labels:
        statements.setdefault(_statement_key(label), []).append(value)
    joined = {key: "\n".join(values) for key, values in statements.items()}
    for key, value in joined.items():
        if len(value) > MAX_ASSERTION_VALUE:
            raise LimitError(
                f"{bag / 'bag-info.txt'}: {key.removeprefix('bag-info:')} is longer than"
                f" {plural(MAX_ASSERTION_VALUE, 'character')}, the longest statement"
            )
        # checked before the deposit, as the length is: a NUL made the statement fail after the payload was in
        if (bad := UNKEPT_IN_VALUE.search(value)) is not None:
            raise ParseError(
                f"{bag / 'bag-info.txt'}: {key.removeprefix('bag-info:')} holds U+{ord(bad[0]):04X}, which no"
                " statement keeps (the catalog's text ends there); nothing was imported",
                text=value[:80], offset=min(bad.start(), 80), rule="bag-info.txt",
            )
    paths = sorted(info.payload)
    if not paths:
        return 0
    day = archive.now().date()
    items: list[tuple[list[Content], str | None]] = []
    for done, path in enumerate(paths, start=1):
        token = _payload_format(info.file(bag, path))
        foreign_id: str | None = path.removeprefix("data/")
        try:
            assert foreign_id is not None
            checked_foreign_id(series, foreign_id, token, day)
        except PDIError:
            foreign_id = None
        items.append(([Content(_payload_reader(info.file(bag, path), info.payload[path], path), token, source=path)], foreign_id))
        if progress is not None:
            progress(done, 2 * len(paths))
    try:
        deposits = archive.deposit_batch(series, items)
    except PDIError as exc:
        if exc.item is None:
            raise
        raise exc.item_said(f"{paths[exc.item]} in {bag}: ") from None
    for done, (path, deposit) in enumerate(zip(paths, deposits, strict=True), start=1):
        name = deposit[0]
        archive.annotate(name, "bagit:path", path)
        for key, value in joined.items():
            archive.annotate(name, key, value)
        if deposited is not None:
            deposited(name, path)
        if progress is not None:
            progress(len(paths) + done, 2 * len(paths))
    return len(deposits)
