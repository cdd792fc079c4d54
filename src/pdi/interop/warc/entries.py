"""A WARC record's index entry, made from its header fields and payload: what pass 1 makes of each record,
whichever reader read it (warcio, :mod:`~pdi.interop.warc.records`; or :mod:`~pdi.interop.warc.direct`).

ISO 28500:2017 (WARC 1.1) §5.4 (``WARC-Date``), §5.11 (``WARC-Target-URI``), §6.3, §6.4, §6.7 (the record
types an import uses) and §6.8 (segments).
"""

from __future__ import annotations

import dataclasses
import datetime
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from warcio.exceptions import ArchiveLoadFailed

from pdi import formats
from pdi._wording import clipped, plural
from pdi.archive.naming import UNKEPT_IN_VALUE
from pdi.errors import LimitError, ParseError, PDIError
from pdi.interop.warc.bounded import Refused, target_uri
from pdi.interop.warc.sources import Source

__all__ = ["KEEP_RECORD", "TARGETED", "Entry", "LeftOut", "check_fields", "no_target", "unheld"]

_CHUNK = 1 << 16


@dataclass(frozen=True)
class Entry:
    """One record of a WARC, as indexed: where it is and what its headers said."""

    source: int
    offset: int
    kind: str
    uri: str
    date: datetime.datetime
    warc_date: str
    record_id: str
    status: int
    media_type: str | None
    charset: str | None
    location: str | None
    payload_digest: str | None
    refers_to_uri: str | None = None
    refers_to_date: str | None = None
    #: a revisit's WARC-Refers-To: the WARC-Record-ID of the record it repeats (WARC 1.1)
    refers_to: str | None = None
    #: the ``PDI`` field pdi's own WACZ export writes on a version's record (a page's root): the name it was
    #: exported from, which an import of that export answers by when this archive holds it with these bytes
    pdi: str | None = None
    #: the ``PDI-Parts`` field pdi's WACZ export (from 2026-11-30) writes on a page's root: how many records hold
    #: the page's parts, each naming the root in its ``WARC-Concurrent-To``; an import takes that page's parts from
    #: them alone, so a page comes back with the parts it was deposited with, no more
    parts: int | None = None
    #: ``WARC-Concurrent-To`` (§5.7): the WARC-Record-ID of the record this one was made with (for a part of a
    #: page pdi exported, the page's root)
    concurrent_to: str | None = None
    size: int = 0
    #: its payload decodes to more than the limit: listed, not imported (its digests were still checked)
    oversize: bool = False
    #: the first segment of a segmented record (WARC 1.1 §6.8): the rest is in ``continuation``
    #: records, which pdi does not join; listed, not imported
    segmented: bool = False
    #: how many times the record's length its payload was allowed to decode to (``pdi import --max-expansion``)
    expansion: float = 100.0

    def unusable(self, limit: int) -> str | None:
        """Why this record's payload cannot be used, or ``None``."""
        if self.segmented:
            return "it is a segment of a record split over several (WARC-Segment-Number), which pdi does not join"
        if self.oversize:
            return (f"its payload, its codings undone, is larger than the limit of {plural(limit, 'byte')} or than"
                    f" {self.expansion:g} times the record (a MiB at least; pdi import --max-expansion)")
        return None


#: The WARC fields an import keeps as statements as they are (``warc:record-id``; a payload digest is checked
#: against the payload, a date parsed).
_STATED_FIELDS = ("WARC-Record-ID",)


def _where(source: Source, offset: int, uri: str | None = None) -> str:
    about = f" ({uri})" if uri else ""
    return f"{source.name}: the record at offset {offset}{about}"


#: WARC 1.1 §5.4's W3C-ISO8601 (W3C-DTF): YYYY-MM-DD, then a time (hh:mm, hh:mm:ss, a fraction of a second; after a
#: ``T``, or a space as warcio reads it too) and its zone (Z or ±hh:mm; none read as UTC), ASCII digits; or, at
#: W3C-DTF's coarser granularities, which §5.4 allows ("WARC-Date may be specified at any of the levels of
#: granularity described in [W3CDTF]"), a year (YYYY) or a month (YYYY-MM) alone, read as its first day (pdi
#: refused them as no W3C-ISO8601 date). ``datetime.fromisoformat`` reads more of ISO 8601 (the week date
#: ``2024-W01-1``, the basic form ``20240101T000000Z``), which no WARC writer writes and warcio does not read.
_W3C_DTF = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?"
                      r"(?:Z|[+-][0-9]{2}:[0-9]{2})?)?")
_YEAR_OR_MONTH = re.compile(r"[0-9]{4}(?:-[0-9]{2})?")


#: The named fields WARC 1.1 defines (§5.2 to §5.17, and the two of its §5.1 it takes from HTTP), lower-cased, and
#: pdi's own two (an export's ``PDI`` and ``PDI-Parts``): each may be given once in a record (§5.1: "WARC named
#: fields of the same type shall not be repeated in the same WARC record ... except as noted (e.g.
#: WARC-Concurrent-To)"). A field of another name is an extension's, which a reader ignores (§5.1), given twice or
#: not.
_ONCE = frozenset(name.lower() for name in (
    "WARC-Record-ID", "Content-Length", "WARC-Date", "WARC-Type", "Content-Type", "WARC-Block-Digest",
    "WARC-Payload-Digest", "WARC-IP-Address", "WARC-Refers-To", "WARC-Refers-To-Target-URI", "WARC-Refers-To-Date",
    "WARC-Target-URI", "WARC-Truncated", "WARC-Warcinfo-ID", "WARC-Filename", "WARC-Profile",
    "WARC-Identified-Payload-Type", "WARC-Segment-Number", "WARC-Segment-Origin-ID", "WARC-Segment-Total-Length",
    "PDI", "PDI-Parts"))
#: The fields every record has (WARC 1.1 §5.2 to §5.5: "mandatory"), in the order the specification gives them.
_MANDATORY = (("WARC-Record-ID", "§5.2"), ("Content-Length", "§5.3"), ("WARC-Date", "§5.4"), ("WARC-Type", "§5.5"))


#: The record types that have a ``WARC-Target-URI`` (WARC 1.1, WARC-Target-URI: "All 'response', 'resource',
#: 'request', 'revisit', 'conversion' and 'continuation' records shall have a WARC-Target-URI field").
TARGETED = frozenset({"response", "resource", "request", "revisit", "conversion", "continuation"})


def no_target(kind: str, where: str) -> ParseError:
    """The refusal of a record of type ``kind`` (one of :data:`TARGETED`) without a ``WARC-Target-URI``."""
    return ParseError(f"{where} is damaged: it has no WARC-Target-URI, which every {kind} record has (WARC 1.1:"
                      " \"All 'response', 'resource', 'request', 'revisit', 'conversion' and 'continuation' records"
                      " shall have a WARC-Target-URI field\")", rule="WARC record")


def check_fields(names: list[str], where: str, kind: str | None = None) -> None:
    """A :class:`ParseError` (``where`` names the record) unless the WARC header block whose field names are
    ``names`` (as written, in order) gives each mandatory field (:data:`_MANDATORY`) and no field of :data:`_ONCE`
    twice, and one of a type that has a target (:data:`TARGETED`, ``kind``) its ``WARC-Target-URI`` (warcio failed
    on a response without one in its own words, "'NoneType' object has no attribute 'startswith'", and pdi left out
    a resource without one unsaid). warcio reads such a record, taking the first of two values (two ``WARC-Target-URI``, two
    ``Content-Length``: which the record means is not said) and reading a record with no ``WARC-Type`` as
    nothing an import uses, unsaid; the specification forbids both, and pdi reads a record as it says it is."""
    seen: set[str] = set()
    for name in names:
        key = name.strip().lower()
        if key in seen and key in _ONCE:
            raise ParseError(f"{where} is damaged: it gives its {clipped(name.strip(), 40)} twice (WARC 1.1 §5.1: a"
                             " named field other than WARC-Concurrent-To is not repeated in a record, and which of"
                             " the two the record means is not said)", rule="WARC record")
        seen.add(key)
    for name, section in _MANDATORY:
        if name.lower() not in seen:
            raise ParseError(f"{where} is damaged: it has no {name}, which every WARC record has (WARC 1.1 {section})",
                             rule="WARC record")
    if kind in TARGETED and "warc-target-uri" not in seen:
        raise no_target(kind, where)


def _parse_date(value: str | None, source: Source, offset: int) -> datetime.datetime:
    if not value:
        raise ParseError(f"{_where(source, offset)} has no WARC-Date", rule="WARC-Date")
    try:
        text = value.strip()
        if _YEAR_OR_MONTH.fullmatch(text):
            text += "-01" * (3 - len(text.split("-")))  # its first day (a month's "-01", a year's "-01-01")
        elif not _W3C_DTF.fullmatch(text):
            raise ValueError(value)
        parsed = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise ParseError(
            f"{_where(source, offset)}: WARC-Date {value!r} is not a W3C-ISO8601 date", rule="WARC-Date"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)  # WARC dates are UTC (§5.4)
    try:
        return parsed.astimezone(datetime.UTC)
    except OverflowError:  # 9999-12-31T23:59:59-05:00 is after the last instant a datetime holds
        raise ParseError(
            f"{_where(source, offset)}: WARC-Date {value!r} lies outside the years 1 to 9999 in UTC", rule="WARC-Date"
        ) from None


#: How many times its own length a record's payload may decode to (its HTTP content and transfer codings
#: undone), beyond :data:`EXPANSION_FLOOR`, by default: ``--max-expansion``, which bounds a gzip member too.
EXPANSION = 100.0
EXPANSION_FLOOR = 1 << 20


#: The largest payload pass 1 keeps for pass 2 (octets; all it keeps: :data:`~pdi.interop.warc.records.KEEP_TOTAL`):
#: pass 2 reads a part kept so without opening the file and parsing its record again (a third of pass 2's time).
KEEP_RECORD = 1 << 20


def _content_type(value: str | None) -> tuple[str | None, str | None]:
    media, charset = formats.content_type_of(value)
    if media is not None and "/" not in media:
        media = None
    return media, charset


def _drain(stream: BinaryIO, limit: int, where: str, keep: bool) -> bytes | int:
    """Read ``stream`` to its end, at most ``limit`` bytes; the bytes (``keep``) or their count."""
    pieces: list[bytes] = []
    total = 0
    try:
        while True:
            chunk = stream.read(_CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise LimitError(f"{where}: its payload is larger than the limit of {plural(limit, 'byte')}")
            if keep:
                pieces.append(chunk)
    except (PDIError, Refused):  # Refused: the file's own reading (cut short, a bomb, the deadline), which
        raise  # read_index names as the record's damage or refusal, with its own error class
    except (zlib.error, ValueError, EOFError, OSError, ArchiveLoadFailed) as exc:
        raise ParseError(f"{where}: its payload cannot be decoded: {exc}", rule="payload") from None
    except Exception as exc:  # warcio's chunked and brotli decoders raise their own classes
        raise ParseError(f"{where}: its payload cannot be decoded: {type(exc).__name__}: {exc}", rule="payload") from None
    return b"".join(pieces) if keep else total


def _count(value: str | None) -> int | None:
    """A ``PDI-Parts`` value: a count of records, or ``None`` (absent, or not a count: the page's parts are then
    found as any other WARC's are, nearest in time)."""
    value = (value or "").strip()
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 9 else None


def _http_target(uri: str | None) -> bool:
    return uri is not None and uri.lower().startswith(("http://", "https://"))


#: the records :class:`LeftOut` names, at most
LEFT_OUT_SHOWN = 3
#: the record types an import makes documents of (by their HTTP target URI)
_CONTENT_TYPES = ("response", "resource", "revisit")


def unheld(kind: str, uri: str | None) -> bool:
    """Whether a record of type ``kind`` and target ``uri`` (read by :func:`target_uri`) is content an import
    leaves out for its target's scheme alone: a ``response``, ``resource`` or ``revisit`` of a ``dns:``, ``ftp:``,
    ``urn:`` … target (a page is made of HTTP captures, its links resolved as HTTP URLs)."""
    return kind in _CONTENT_TYPES and uri is not None and not _http_target(uri)


@dataclass
class LeftOut:
    """The records an import leaves out for their target's scheme (:func:`unheld`): how many, and the first few
    (file number, offset, target URI) to name."""

    count: int = 0
    first: list[tuple[int, int, str]] = dataclasses.field(default_factory=list)

    def add(self, number: int, offset: int, uri: str) -> None:
        self.count += 1
        if len(self.first) < LEFT_OUT_SHOWN:
            self.first.append((number, offset, uri))

    def merge(self, other: LeftOut) -> None:
        for number, offset, uri in other.first:
            if len(self.first) < LEFT_OUT_SHOWN:
                self.first.append((number, offset, uri))
        self.count += other.count

    def said(self, sources: Sequence[Source]) -> str | None:
        """What an import's report says of them (``None``: none)."""
        if not self.count:
            return None
        shown = ", ".join(f"{clipped(uri, 80)} ({sources[n].name} at offset {offset})" for n, offset, uri in self.first)
        more = f", and {self.count - len(self.first)} more" if self.count > len(self.first) else ""
        return (f"{plural(self.count, 'record')} whose WARC-Target-URI is not http: or https: (pdi imports web pages"
                f" and their parts, HTTP captures; a crawler's dns:, ftp:, urn: … records are left out): {shown}{more}")


def _index_fields(
    kind: str, headers: Any, http: Any, length: int | None, content: Callable[[], BinaryIO], source: Source,
    number: int, offset: int, limit: int, keep: bool, expansion: float = EXPANSION,
) -> tuple[Entry | None, bytes | None]:
    """The index entry of a record an import can use (or ``None``), and its payload when kept; reads the payload
    through.

    The record is given read (by warcio, or by :mod:`~pdi.interop.warc.direct`) into its type, its WARC and
    HTTP header fields (``get_header``; the HTTP ones ``None`` when it has none, and ``statusline`` and
    ``get_statuscode``, as warcio's), its ``Content-Length`` and its payload's stream, codings undone. With
    ``keep``, a payload of at most :data:`KEEP_RECORD` octets is kept too (it is the index's only once its
    record's digests are found right). A payload that decodes to more than ``limit`` octets, or than
    ``expansion`` times the record's length (past :data:`EXPANSION_FLOOR`), is too large to use.
    """
    written = headers.get_header("WARC-Target-URI")
    uri = None if written is None else target_uri(written)  # WARC 1.0 writers put <…> around it (§5.11 erratum)
    if kind not in _CONTENT_TYPES or not _http_target(uri):
        return None, None  # warcinfo, request, metadata, dns: … records say nothing a page is made of
    assert uri is not None
    warc_date = headers.get_header("WARC-Date") or ""
    date = _parse_date(warc_date, source, offset)
    where = _where(source, offset, uri)
    for field in _STATED_FIELDS:
        value = headers.get_header(field)
        if value and (bad := UNKEPT_IN_VALUE.search(value)) is not None:
            # found in pass 1, so that nothing is deposited: in pass 2 the pages before it were, then the
            # statement was refused, naming neither the file nor the record
            raise ParseError(f"{where} is damaged: its {field} holds U+{ord(bad[0]):04X}, which no statement keeps",
                             text=value[:80], offset=min(bad.start(), 80), rule=field)
    if kind == "resource":
        status = 200
        media, charset = _content_type(headers.get_header("Content-Type"))
        location = None
    elif http is None:
        if kind == "response":
            return None, None  # a response that is not HTTP (ftp:, gopher:)
        status, media, charset, location = 0, None, None, None
    else:
        code = (http.get_statuscode() or "").strip()
        if not (len(code) == 3 and code.isascii() and code.isdigit()):  # '²00' is digits to isdigit, not to int()
            raise ParseError(f"{where} is damaged: its HTTP status line is {clipped(http.statusline, 80)!r}: its status"
                             " code is not three digits (RFC 9112 §4)", rule="status-line")
        status = int(code)
        media, charset = _content_type(http.get_header("Content-Type"))
        location = http.get_header("Location")
    size = 0
    oversize = False
    segmented = headers.get_header("WARC-Segment-Number") is not None
    payload: bytes | None = None
    if kind != "revisit" and not segmented:
        small = keep and 0 <= (length or 0) <= KEEP_RECORD
        # a content coding (gzip, br) may undo to far more than the record holds: past `expansion` times its
        # length (a MiB at least), it is as a payload past the limit (628 octets of br were 45 MB of zeros, which
        # each page of a WARC holding it embedded again)
        most = limit if length is None else min(limit, max(EXPANSION_FLOOR, int(expansion * length)))
        try:
            counted = _drain(content(), most, where, keep=small)
        except LimitError:
            oversize = True  # the rest is read raw by read_to_end, so its digests are still checked
        else:
            if isinstance(counted, bytes):
                size = len(counted)
                payload = counted if size <= KEEP_RECORD else None  # a content coding may undo to more
            else:
                size = counted
    return _entry({
        "source": number,
        "offset": offset,
        "kind": kind,
        "uri": uri,
        "date": date,
        "warc_date": warc_date.strip(),
        "record_id": (headers.get_header("WARC-Record-ID") or "").strip(),
        "status": status,
        "media_type": media,
        "charset": charset,
        "location": location,
        "payload_digest": headers.get_header("WARC-Payload-Digest"),
        "refers_to_uri": (headers.get_header("WARC-Refers-To-Target-URI") or "").strip("<> ") or None,
        "refers_to_date": (headers.get_header("WARC-Refers-To-Date") or "").strip() or None,
        "refers_to": (headers.get_header("WARC-Refers-To") or "").strip() or None,
        "pdi": (headers.get_header("PDI") or "").strip() or None,
        "parts": _count(headers.get_header("PDI-Parts")),
        "concurrent_to": (headers.get_header("WARC-Concurrent-To") or "").strip() or None,
        "size": size,
        "oversize": oversize,
        "segmented": segmented,
        "expansion": expansion,
    }), payload


def _entry(values: dict[str, Any]) -> Entry:
    """The :class:`Entry` of ``values`` (each of its fields by name, none left out), made without its generated
    ``__init__``, which sets each of a frozen dataclass's 22 fields through ``object.__setattr__`` (6 µs an entry:
    some 4 ms of an import's pass 1 for 750 records, issue 24); the same value, frozen as any other
    (tests/interop/test_interop_warc_direct.py)."""
    made = object.__new__(Entry)
    object.__setattr__(made, "__dict__", values)
    return made
