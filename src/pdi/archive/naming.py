"""Names and times as the archive writes them: the helpers every part of :class:`~pdi.archive.Archive` shares.

The lowest room of the archive's domain (it imports no other part of it):
the canonical series name for minting and the lenient parse of a PDI; the
catalog key of a document (:class:`~pdi.archive.store.DocumentKey`) and the
names of its records, one at a time (:func:`record_name`) or many at once
(:class:`Namer`); the :class:`~pdi.archive.results.Generic` of a document from
its records; and the catalog's timestamps (``…Z``, GMT, microseconds).
:mod:`pdi.archive.bagit` and :mod:`pdi.archive.access` use them as the
archive's parts do.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import re
from collections.abc import Sequence

from pdi import formats
from pdi._wording import clipped
from pdi.archive.results import Generic, GenericVersion
from pdi.archive.store import DocumentKey, RepresentationRecord
from pdi.errors import LimitError, NotFoundError, ParseError, UnsupportedError
from pdi.identifier import PDI, Fragment, series_for_minting, spells_serial

__all__ = [
    "MAX_ASSERTION_VALUE",
    "MAX_FOREIGN_ID_OCTETS",
    "STATEMENT_KEY",
    "Namer",
    "canonical_series",
    "checked_foreign_id",
    "default_who",
    "documents_of",
    "foreign_serial",
    "generic_name",
    "generic_of",
    "key_of",
    "parse_pdi",
    "record_name",
    "timestamp",
    "utc_now",
]

#: The largest single assertion value accepted (characters).
MAX_ASSERTION_VALUE = 1 << 16
#: What a statement's value may not hold: NUL (SQLite's text ended there: the rest was dropped) and a lone
#: surrogate (no character: not UTF-8, not kept).
UNKEPT_IN_VALUE = re.compile("[\\x00\\ud800-\\udfff]")

#: The longest foreign id a name is minted with (octets of UTF-8). A name must be answerable: a resolver takes a
#: request target of at most 64 KiB - 1 octets (pdi.server.process.limits.MAX_TARGET_OCTETS, httptools' bound;
#: longer is 414). A name writes each octet of its id in at most 3 (``%2E``), and an RFC 2169 URL each of those in
#: at most 5 (``%252E``): 40 KiB for an id of 8 KiB, leaving room for the series, the date, the format and a
#: fragment or a citation. It is also the longest URL Apache (``LimitRequestLine`` 8190) and nginx (8 KiB
#: buffers) serve by default, so a page captured by its URL is not refused by it.
MAX_FOREIGN_ID_OCTETS = 8 << 10

#: A statement's key: a letter, then up to 199 letters, digits, ``.``, ``_``, ``:``, ``-``.
STATEMENT_KEY = re.compile(r"[A-Za-z][A-Za-z0-9._:-]{0,199}\Z")


def utc_now() -> datetime.datetime:
    """The wall clock, in GMT (the archive's default clock)."""
    return datetime.datetime.now(datetime.UTC)


def timestamp(now: datetime.datetime) -> str:
    """A moment as the catalog keeps it: ISO 8601 in GMT with microseconds and ``Z``."""
    return now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def default_who() -> str:
    """Who the command line writes as: ``$PDI_USER``, else the login name (``$USER``, ``$LOGNAME``, else the
    account's own name, as a service or a container without those runs), else the uid."""
    for variable in ("PDI_USER", "USER", "LOGNAME"):
        value = os.environ.get(variable)
        if value:
            return value
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # no account of this uid (a container's arbitrary uid)
        return f"uid {os.getuid()}"


def canonical_series(name: str) -> str:
    """Check a series name for minting (:func:`pdi.identifier.series_for_minting`); lower-cased."""
    if not isinstance(name, str):
        raise ParseError("a series name must be text", rule="document-series")
    return ".".join(series_for_minting(name))


def parse_pdi(pdi: PDI | str) -> PDI:
    """A PDI value from a PDI or its text (lenient parsing)."""
    if isinstance(pdi, PDI):
        return pdi
    if not isinstance(pdi, str):
        raise ParseError("a PDI must be given as text", rule="pdi-urn")
    return PDI.parse(pdi.strip())


def foreign_serial(pdi: PDI) -> bool:
    """Whether ``pdi``'s foreign id is spelled like a daily serial (``%31``), which no archive mints."""
    # "%31" decodes to "1" but is a foreign id, not serial 1 (the catalog keys by the
    # decoded id, so it must not be looked up as one).
    return not pdi.is_serial and not pdi.unique_id_is_wildcard and spells_serial(pdi.unique_id)


def key_of(pdi: PDI) -> DocumentKey:
    """The catalog key of the document ``pdi`` names (a pattern's date is refused)."""
    date = pdi.date
    if date is None:
        raise UnsupportedError(f"{pdi} has a wildcard date: it is a pattern (use ls)")
    if foreign_serial(pdi):
        raise NotFoundError(
            f"{pdi.without_fragment()} is not in this archive: its unique id, %-escaped, is the foreign id"
            f" '{clipped(pdi.unique_id)}', and no archive mints a foreign id spelled like a daily serial (the daily serial"
            f" {clipped(pdi.unique_id)} is written unescaped)"
        )
    return DocumentKey(pdi.series_name.lower(), date, pdi.unique_id)


def generic_name(key: DocumentKey) -> str:
    """The generic name of the document ``key`` (how the audit log names what a write touched)."""
    built = _built(key, "text", 1)
    return str(dataclasses.replace(built, format=None, version=None).canonical())


def versioned_name(key: DocumentKey, format: str, version: int) -> str:
    """The versioned name of format ``format`` of version ``version`` of the document ``key``."""
    return str(_built(key, format, version))


def _built(key: DocumentKey, format: str, version: int) -> PDI:
    serial = spells_serial(key.unique_id)
    return PDI.build(
        series=key.series, date=key.day, serial=int(key.unique_id) if serial else None,
        foreign_id=None if serial else key.unique_id, format=format, version=version,
    )


def record_name(
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


def generic_text(record: RepresentationRecord) -> str:
    """``str(record_name(record, generic=True))``, the document's generic name as text; for a serial record made
    without building a :class:`PDI` (an import or a sync names each new document in its audit line)."""
    if record.serial is None:
        return str(record_name(record, generic=True))
    day = record.day
    return f"urn:pdi://{record.series}/{day.year:04d}/{day.month:02d}/{day.day:02d}/{record.serial}"


def record_text(record: RepresentationRecord) -> str:
    """``str(record_name(record))``, the versioned name as text; for a serial record made without building a
    :class:`PDI` and reading it back (a manifest page names a thousand records: building each was half its
    making). A foreign id is built, as it may need %-escapes."""
    if record.serial is None:
        return str(record_name(record))
    day = record.day
    return (f"urn:pdi://{record.series}/{day.year:04d}/{day.month:02d}/{day.day:02d}/{record.serial}"
            f".{formats.canonical_token(record.format)}.{record.version}")


def record_name_as(record: RepresentationRecord, parsed: PDI) -> PDI:
    """:func:`record_name` of ``record`` (no fragment), or ``parsed`` itself when it is already that name as
    :meth:`PDI.build` makes it: a serial name spelled canonically, field for field (a resolver then neither
    builds the name nor parses it again)."""
    day = record.day
    if (record.serial is not None and parsed.serial == record.serial and parsed.version == record.version
            and parsed.format == record.format and parsed.unique_id_raw == parsed.unique_id == str(record.serial)
            and parsed.year == day.year and parsed.month == day.month and parsed.day == day.day
            and parsed.fragment is None and parsed.citation is None and not parsed.warnings
            and not parsed.version_wildcard and ".".join(parsed.series) == record.series):
        return parsed
    return record_name(record)


class Namer:
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
            return record_name(record)
        key = (record.series, record.day, record.format)
        template = self._templates.get(key)
        if template is None:
            template = self._templates[key] = record_name(record)
        serial = str(record.serial)
        # The constructor, not dataclasses.replace (which takes 1.6 times as
        # long), as this runs once per listed name; a template has no fragment
        # or warnings.
        return PDI(
            series=template.series, year=template.year, month=template.month, day=template.day,
            unique_id=serial, unique_id_raw=serial, serial=record.serial,
            format=template.format, version=record.version,
        )


def generic_of(records: Sequence[RepresentationRecord], latest: bool = False) -> Generic:
    """The :class:`Generic` of one document from the records of its formats (the newest version only with ``latest``)."""
    by_version: dict[int, list[RepresentationRecord]] = {}
    for record in records:
        by_version.setdefault(record.version, []).append(record)
    numbers = sorted(by_version)[-1:] if latest else sorted(by_version)
    versions = tuple(
        GenericVersion(
            n,
            min(r.created_at for r in by_version[n]),
            tuple(record_name(r) for r in sorted(by_version[n], key=lambda r: r.format)),
        )
        for n in numbers
    )
    return Generic(record_name(records[0], generic=True), versions)


def documents_of(records: Sequence[RepresentationRecord]) -> tuple[Generic, ...]:
    """The documents of records that come a document at a time, each with its versions, in that order."""
    grouped: dict[tuple[str, datetime.date, str], list[RepresentationRecord]] = {}
    for record in records:
        grouped.setdefault((record.series, record.day, record.unique_id), []).append(record)
    return tuple(generic_of(group) for group in grouped.values())


def checked_foreign_id(series: str, foreign_id: str, token: str, day: datetime.date) -> str:
    """``foreign_id``, checked to be an encapsulated unique id a name minted in ``series`` on ``day`` can carry.

    Not empty, not longer than :data:`MAX_FOREIGN_ID_OCTETS` (a
    :class:`~pdi.errors.LimitError`), not a wildcard, not spelled like a
    daily serial (which only the archive mints), and read back the same from
    the name it makes.
    """
    if not isinstance(foreign_id, str) or foreign_id == "":
        raise ParseError("a foreign id must be non-empty text", rule="encapsulated-unique-id")
    size = len(foreign_id.encode("utf-8", "surrogatepass"))
    if size > MAX_FOREIGN_ID_OCTETS:
        raise LimitError(
            f"the id is {size:,} octets (UTF-8), more than the {MAX_FOREIGN_ID_OCTETS:,} a name's id may have"
            " (its name, written in a resolver's URL, must fit the 64 KiB a request target may be)"
        )
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
    if built.read_back().unique_id != foreign_id:
        raise ParseError(
            "this id cannot be written in a PDI", text=foreign_id, rule="encapsulated-unique-id"
        )
    return foreign_id


#: The shape of a catalog timestamp (:func:`timestamp_problem`).
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")


def timestamp_problem(stamp: str) -> str | None:
    """What keeps ``stamp`` from being a catalog timestamp (``2026-11-26T12:00:00.000000Z``, a real time, GMT:
    :func:`pdi.archive.naming.timestamp`), or ``None``."""
    if _TIMESTAMP.fullmatch(stamp) is not None:
        try:
            datetime.datetime.fromisoformat(stamp[:-1])  # a real time: no hour 99, no 30 February
            return None
        except ValueError:
            pass
    return f"its time {stamp[:40]!r} is not a catalog timestamp (YYYY-MM-DDTHH:MM:SS.ffffffZ)"


def minting_problem(day: str, serial: int | None, created_at: str) -> str | None:
    """What is wrong with when a document of ``day`` (``YYYY-MM-DD``) was minted, or ``None``.

    A serial is minted on its day; a foreign id may be dated by its source, earlier (a web archive's capture
    date: ``Archive.deposit(day=)``), never later."""
    wrong = timestamp_problem(created_at)
    if wrong is not None:
        return wrong
    dated_by_source = serial is None and created_at[:10] > day
    if not dated_by_source and not created_at.startswith(day):
        return f"it was minted at {created_at}, not on its day {day} (GMT)"
    return None
