"""WACZ out: the archive's web pages as a WACZ 1.1.1 package (a WACZ read in: :mod:`pdi.interop.warc.sources`).

Implements, of the WACZ 1.1.1 specification (webrecorder), the layout
(`archive/` WARC files stored without compression, `indexes/index.cdx`
in CDXJ, `pages/pages.jsonl`, `datapackage.json` listing every file with
its SHA-256 and size, `datapackage-digest.json` with the SHA-256 of
`datapackage.json`, signed when a key is given: :mod:`pdi.wacz_signing`), so that py-wacz's `wacz validate`, pywb and
ReplayWeb.page open what :func:`export_wacz` writes. The WARC (ISO 28500:2017,
WARC 1.1) is written as warcio's writer writes it (a record of plain values
serialized here octet for octet as warcio does, any other by warcio: see
:class:`_Writer`): one ``response`` record for each
part of each archived page (its ``Content-Location`` the target URI, its
type and ``charset=`` the HTTP ``Content-Type``, its bytes the payload),
dated by the ``warc:date`` statement an import left (else the time the
version was deposited); a part whose bytes were already written under the
same URL is a ``revisit`` (§6.7.2, identical payload digest). A document
that is not a page but whose id is a URL (a PDF, an image) is one
``response``. Each page's PDI stands in `pages/pages.jsonl` (``"pdi"``,
and as the page's ``id``) and in a ``PDI`` field of its root's record
(WARC §4 lets named fields be added). The CDXJ index is made as each
record is written, each line what ``cdxj-indexer`` makes of that record
(its SURT key made as cdxj-indexer's own function makes it, its lines sorted as its
``SortingWriter`` sorts them: see :class:`CdxjIndex`). Nothing grows with the archive: the records are
written as the listing is read, ``pages.jsonl`` as they are, the index sorted by spill files in
the export's folder (:class:`SortedLines`), and what a revisit refers to kept in a SQLite file
there (:class:`Written`).

:func:`pdi.interop.warc.sources.wacz_sources` opens the WARC files of a WACZ for
:mod:`pdi.interop.warc` (read in place from the ZIP: WACZ stores them
uncompressed, so reading at an offset is a seek; one deflated is
decompressed once into a spool folder, after its ratio is checked).
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import io
import itertools
import json
import os
import re
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO

from warcio.recordbuilder import RecordBuilder
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from pdi import __version__
from pdi._files import written_whole
from pdi._workdirs import WorkFolder
from pdi.archive import Archive, canonical_series
from pdi.archive.modes import EXPORT, open_private
from pdi.archive.store import RepresentationRecord
from pdi.errors import (
    IntegrityError,
    NotFoundError,
    PDIError,
    StoreError,
    WithdrawnError,
)
from pdi.identifier import PDI
from pdi.interop.wacz_index import WARC_NAME, CdxjIndex, Written, cdxj_mime
from pdi.interop.wacz_room import (
    check_target,
    disk_full,
    file_size,
    no_space_working,
    no_space_writing,
    work_parent,
)
from pdi.interop.warc.write import warc_date
from pdi.mhtml.plain import PlainPart, page_parts
from pdi.mhtml.resolve import comparable
from pdi.wacz_signing import DIGEST_FILE, Identity, WaczKey, digest_file

__all__ = ["WACZ_VERSION", "Exported", "capture_time", "captured_at", "dated_capture", "export_wacz"]

#: the version of the WACZ specification written (py-wacz validates exactly this one)
WACZ_VERSION = "1.1.1"
#: The statements an export reads (:meth:`Archive.latest_statements`), of this many names at a time.
_STATED = ("warc:date", "warc:parts", "title")
_STATED_AT_ONCE = 500


@dataclass(frozen=True)
class Exported:
    """What an export wrote: pages, other documents, WARC records."""

    pages: int
    documents: int
    records: int


def _sha1_digest(data: bytes) -> str:
    return "sha1:" + _base32(hashlib.sha1(data).digest())


#: Every pair of base32 digits (RFC 4648 §6), by the ten bits they stand for.
_BASE32_PAIRS = tuple(a + b for a in "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567" for b in "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")


def _base32(digest: bytes) -> str:
    """RFC 4648 §6 base32 of a 20-octet SHA-1 digest, as ``base64.b32encode`` writes it, in half its time.

    160 bits are 32 digits, with no padding: sixteen pairs of ten bits each.
    ``base64.b32encode`` (pure Python in 3.11) was two a record, 2% of an export.
    """
    n = int.from_bytes(digest, "big")
    p = _BASE32_PAIRS
    return (p[n >> 150 & 1023] + p[n >> 140 & 1023] + p[n >> 130 & 1023] + p[n >> 120 & 1023]
            + p[n >> 110 & 1023] + p[n >> 100 & 1023] + p[n >> 90 & 1023] + p[n >> 80 & 1023]
            + p[n >> 70 & 1023] + p[n >> 60 & 1023] + p[n >> 50 & 1023] + p[n >> 40 & 1023]
            + p[n >> 30 & 1023] + p[n >> 20 & 1023] + p[n >> 10 & 1023] + p[n & 1023])


def _content_type(media_type: str, charset: str | None) -> str:
    return f"{media_type}; charset={charset}" if charset else media_type


#: Media types whose octets are compressed already: their records are gzip members of stored
#: (level 0) deflate blocks, since deflating them again gains nothing and was a third of an export.
_COMPRESSED_MEDIA = frozenset({
    "image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/heic", "image/jxl",
    "application/zip", "application/gzip", "application/x-gzip", "application/x-bzip2", "application/x-xz",
    "application/zstd", "application/x-7z-compressed", "font/woff", "font/woff2", "application/font-woff",
})


def _level(media_type: str) -> int:
    """The deflate level of a record's gzip member: 0 for octets compressed already, else zlib's default (6)."""
    kind = media_type.split(";", 1)[0].strip().lower()
    if kind in _COMPRESSED_MEDIA or kind.startswith(("video/", "audio/")):
        return 0
    return 6


class _Writer:
    """The WARC of an export: responses, and revisits for bytes already written under the same URL.

    Each record is a gzip member of its own (WARC 1.1 annex D), as warcio's
    writer makes them, but deflated here at :func:`_level` (warcio deflates
    every record at level 9: a PNG's octets, deflated again, were a third
    of an export's time).

    A record whose every value is printable ASCII (the common case: URLs as
    pdi keeps them, ``Content-Type`` values, dates, names) is serialized here,
    octet for octet as warcio's ``WARCWriter`` serializes it (its header
    order, its ``WARC/1.1`` record and HTTP head, its SHA-1 digests in
    base32; tests/interop/test_interop_wacz_records.py compares the two), and
    its CDXJ line made from the values at hand, as cdxj-indexer makes it from
    warcio's record: building warcio's record objects and indexing them were
    two fifths of an export's CPU. Any other record (a URL or a value with
    octets beyond ASCII, which warcio writes as UTF-8 or %-encodes, or a
    control character) is built and indexed by warcio and cdxj-indexer, as
    before.
    """

    def __init__(self, out: BinaryIO, index: TextIO | None = None, *, work: Path) -> None:
        self.out = out
        self.offset = out.tell()
        self.index = None if index is None else CdxjIndex(index, work)
        self.buffer = io.BytesIO()
        self.warc = WARCWriter(self.buffer, gzip=False, warc_version="WARC/1.1")
        self.written = Written(work)  # the date each (url, payload digest) was first written: its revisits refer to it
        self.records = 0
        self.record_id = _RecordIds()
        self.sha256 = hashlib.sha256()  # of the file as written: the zip step need not read it again to list it
        info = self.warc.create_warcinfo_record(
            WARC_NAME, {"software": f"pdi {__version__}", "format": "WARC File Format 1.1"}
        )
        self._write(info, 6)

    def _write(self, record: ArcWarcRecord, level: int) -> None:
        """One record, serialized by warcio, as one gzip member at ``level``."""
        self.buffer.seek(0)
        self.buffer.truncate()
        self.warc.write_record(record)
        offset, length = self._member((self.buffer.getvalue(),), level)
        if self.index is not None:
            self.index.add(record, offset, length)

    def _member(self, pieces: tuple[bytes, ...], level: int) -> tuple[int, int]:
        """``pieces`` as one gzip member at ``level``: its offset and length in the WARC."""
        deflate = zlib.compressobj(level, zlib.DEFLATED, zlib.MAX_WBITS + 16)
        offset = self.offset
        for piece in (*pieces, None):
            member = deflate.compress(piece) if piece is not None else deflate.flush()
            self.out.write(member)
            self.sha256.update(member)
            self.offset += len(member)  # counted, not asked of the file (a system call a record)
        return offset, self.offset - offset

    def _direct(
        self, url: str, date: str, kind: str, fields: list[tuple[str, str]], status: str,
        http_fields: list[tuple[str, str]], data: bytes, digest: str, mime: str | None, level: int,
    ) -> None:
        """A record of plain values (see the class), as warcio's writer serializes it, and its CDXJ line.

        ``fields`` are the WARC fields warcio puts after ``WARC-Target-URI``
        (a revisit's profile and referents, or the payload's digest); a
        revisit's block is its HTTP head alone (WARC 1.1 §6.7.2), as warcio
        writes it.
        """
        http = (f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in http_fields) + "\r\n").encode("ascii")
        block = hashlib.sha1(http)
        if kind != "revisit":
            block.update(data)
        size = len(http) + (len(data) if kind != "revisit" else 0)
        head = "".join(f"{k}: {v}\r\n" for k, v in fields)
        text = (
            f"WARC/1.1\r\n{head}WARC-Block-Digest: sha1:{_base32(block.digest())}\r\n"
            f"Content-Type: application/http; msgtype=response\r\nContent-Length: {size}\r\n\r\n"
        )
        pieces = (text.encode("ascii") + http, data, b"\r\n\r\n") if kind != "revisit" else (
            text.encode("ascii") + http + b"\r\n\r\n",)
        offset, length = self._member(pieces, level)
        if self.index is not None:
            self.index.line(url, date, mime, status.split(" ", 1)[0], digest, offset, length)

    def response(
        self, url: str, date: str, media_type: str, charset: str | None, data: bytes, extra: dict[str, str] | None = None
    ) -> str:
        """A ``response`` record of ``data`` at ``url`` (a ``revisit`` when those bytes were written at ``url``
        before), with the WARC fields ``extra`` too; its WARC-Record-ID."""
        content_type = _content_type(media_type, charset)
        digest = _sha1_digest(data)
        first_date = self.written.first(url, digest, date)
        first = None if first_date is None else (url, first_date)
        warc_headers = {"WARC-Date": date, **(extra or {})}
        level = 6 if first is not None else _level(media_type)
        if _plain(url, content_type, *warc_headers.values(), *(first or ())):
            http_fields = [("Content-Type", content_type), ("Content-Length", str(len(data)))]
            fields = [*warc_headers.items()]
            record_id = self.record_id()
            if first is not None:
                fields += [("WARC-Type", "revisit"), ("WARC-Record-ID", record_id), ("WARC-Target-URI", url),
                           ("WARC-Profile", RecordBuilder.REVISIT_PROFILE_1_1), ("WARC-Refers-To-Target-URI", first[0]),
                           ("WARC-Refers-To-Date", first[1]), ("WARC-Payload-Digest", digest)]
                self._direct(url, date, "revisit", fields, "200 OK", http_fields, data, digest, "warc/revisit", level)
            else:
                fields += [("WARC-Payload-Digest", digest), ("WARC-Type", "response"),
                           ("WARC-Record-ID", record_id), ("WARC-Target-URI", url)]
                self._direct(url, date, "response", fields, "200 OK", http_fields, data, digest,
                             cdxj_mime(content_type), level)
            self.records += 1
            return record_id
        headers = StatusAndHeaders(
            "200 OK",
            [("Content-Type", content_type), ("Content-Length", str(len(data)))],
            protocol="HTTP/1.1",
        )
        if first is not None:
            record = self.warc.create_revisit_record(
                url, digest, first[0], first[1], http_headers=headers, warc_headers_dict=warc_headers
            )
        else:
            # the payload's digest given (made above): warcio does not read the payload again to make it
            record = self.warc.create_warc_record(
                url, "response", payload=io.BytesIO(data), length=len(data),
                http_headers=headers, warc_headers_dict={**warc_headers, "WARC-Payload-Digest": digest},
            )
        self._write(record, level)
        self.records += 1
        return str(record.rec_headers.get_header("WARC-Record-ID"))

    def redirect(self, url: str, target: str, date: str) -> None:
        if _plain(url, target, date):
            fields = [("WARC-Date", date), ("WARC-Type", "response"), ("WARC-Record-ID", self.record_id()),
                      ("WARC-Target-URI", url), ("WARC-Payload-Digest", _EMPTY_DIGEST)]
            http_fields = [("Location", target), ("Content-Length", "0")]
            self._direct(url, date, "response", fields, "302 Found", http_fields, b"", _EMPTY_DIGEST, None, 6)
            self.records += 1
            return
        headers = StatusAndHeaders(
            "302 Found", [("Location", target), ("Content-Length", "0")], protocol="HTTP/1.1"
        )
        record = self.warc.create_warc_record(
            url, "response", payload=io.BytesIO(b""), length=0, http_headers=headers,
            warc_headers_dict={"WARC-Date": date},
        )
        self._write(record, 6)
        self.records += 1


_EMPTY_DIGEST = _sha1_digest(b"")
def _plain(*values: str) -> bool:
    """Whether every value is printable ASCII: a record :class:`_Writer` serializes itself."""
    joined = "".join(values)  # each character's own test: the values' is their concatenation's
    return joined.isascii() and joined.isprintable()


class _RecordIds:
    """``WARC-Record-ID`` values as warcio makes them (WARC §5.2: a URI; a version 4 UUID's URN, RFC 9562 §5.4).

    The random octets are drawn from ``os.urandom`` (as :func:`uuid.uuid4` draws them) 4 KiB at a time, not 16
    octets a record.
    """

    def __init__(self) -> None:
        self.pool = b""
        self.at = 0

    def __call__(self) -> str:
        if self.at == len(self.pool):
            self.pool, self.at = os.urandom(4096), 0
        raw = self.pool[self.at : self.at + 16]
        self.at += 16
        return _uuid4_urn(raw)


#: The version (4) and variant (RFC 9562) bits of a UUID, cleared and set as ``uuid.UUID(bytes=…, version=4)`` does.
_UUID_CLEAR = ~((0xC000 << 48) | (0xF000 << 64))
_UUID_SET = (0x8000 << 48) | (4 << 76)


def _uuid4_urn(raw: bytes) -> str:
    """``f"<{uuid.UUID(bytes=raw, version=4).urn}>"`` of 16 random octets, without making a ``UUID`` (a third of the time)."""
    h = "%032x" % (int.from_bytes(raw, "big") & _UUID_CLEAR | _UUID_SET)
    return f"<urn:uuid:{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}>"


#: Records of the catalog listed a page at a time, and names counted a page at a time, by an export.
_LISTED_AT_ONCE = 1000


def _name_of(r: RepresentationRecord) -> PDI:
    return PDI.build(series=r.series, date=r.day, foreign_id=r.unique_id, format=r.format, version=r.version)


def exported_as(archive: Archive, r: RepresentationRecord) -> tuple[PDI, str]:
    """The name and ``WARC-Date`` the export gives the record of representation ``r``."""
    name = _name_of(r)
    return name, _date_of(r, archive.meta(name))


def _date_of(r: RepresentationRecord, statements: dict[str, str]) -> str:
    """The ``WARC-Date`` of a version: :func:`captured_at`, from its statements (:meth:`Archive.meta`) read once."""
    when, stated = dated_capture(r.day, r.created_at, statements.get("warc:date"))
    return warc_date(when if stated else when.replace(microsecond=0))


def capture_time(archive: Archive, name: PDI, day: datetime.date, created_at: str) -> datetime.datetime:
    """A capture's time as its memento and its replay banner give it: the ``WARC-Date`` a WARC import left
    (the ``warc:date`` statement, :func:`captured_at`), else its deposit time.

    The statement is always read: a WARC imported on the day its page was
    captured mints the name on that day too, so a deposit on the name's day
    does not tell a capture made then from one imported then.
    """
    return dated_capture(day, created_at, archive.meta(name).get("warc:date"))[0]


def captured_at(archive: Archive, name: PDI, day: datetime.date, created_at: str) -> tuple[datetime.datetime, bool]:
    """When the version ``name`` (of a document minted on ``day``, deposited at ``created_at``) was captured.

    The ``warc:date`` statement a WARC import left about it when it falls on
    ``day`` (the second member then ``True``); else its deposit time (a
    capture deposited as it was made, or a later version of it deposited on
    a later day: ``pdi version``). The one reading of a capture's time: WACZ
    export and Memento (:mod:`pdi.server.protocol.memento_oaipmh`) both date
    captures by it. An import of the archive's own export finds a version
    dated on another day than its document's by the record's ``PDI`` field
    (:mod:`pdi.interop.warc.pages`).
    """
    return dated_capture(day, created_at, archive.meta(name).get("warc:date"))


def dated_capture(day: datetime.date, created_at: str, stated: str | None) -> tuple[datetime.datetime, bool]:
    """:func:`captured_at` with the ``warc:date`` statement (``stated``) already read: for many at once."""
    if stated:
        if re.fullmatch(r"[0-9]{4}(?:-[0-9]{2})?", stated):  # a year or a month alone (WARC 1.1 §5.4): its first day
            stated += "-01" * (3 - len(stated.split("-")))
        with contextlib.suppress(ValueError):
            parsed = datetime.datetime.fromisoformat(stated)
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=datetime.UTC)
            if parsed.astimezone(datetime.UTC).date() == day:
                return parsed.astimezone(datetime.UTC), True
    return _utc(created_at), False


def _utc(created_at: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(created_at.replace("Z", "+00:00")).astimezone(datetime.UTC)


def _iso_ts(date: str) -> str:
    return date if "." not in date else date.split(".", 1)[0] + "Z"


class _Keys(dict[str, str]):
    """:func:`~pdi.mhtml.locations.comparable` of the URLs of one page, each made once (its statement's lines and its
    parts name the same URLs)."""

    def __missing__(self, url: str) -> str:
        key = self[url] = comparable(url)
        return key


def _part_dates(stated: str | None, keys: _Keys) -> dict[str, str]:
    """The parts' own WARC-Dates, from the ``warc:parts`` statement an import left (``digest date url`` lines)."""
    dates: dict[str, str] = {}
    written: dict[str, str] = {}  # each date as a WARC-Date once: a page's parts are often of one second
    for line in (stated or "").splitlines():
        pieces = line.split(" ", 2)
        if len(pieces) == 3:
            with contextlib.suppress(ValueError):
                when = written.get(pieces[1])
                if when is None:
                    when = written[pieces[1]] = warc_date(datetime.datetime.fromisoformat(pieces[1]))
                dates[keys[pieces[2]]] = when
    return dates


def _write_page(
    writer: _Writer, url: str, date: str, data: bytes, name: PDI, part_dates: dict[str, str], keys: _Keys
) -> str | None:
    """Each part of an aggregate as a record; the page's URL (its root's), or ``None`` when it has no http(s) root."""
    parts = page_parts(data)
    root = parts[0]
    root_url = (root.location or root.content_location or "").split("#", 1)[0]
    if not root_url.lower().startswith(("http://", "https://")):
        return None
    seen: set[str] = set()
    written: list[tuple[str, str, PlainPart]] = []
    for part in parts:
        location = (part.location or part.content_location or "").split("#", 1)[0]
        if not location.lower().startswith(("http://", "https://")):
            continue  # cid: parts (Chromium's inline sheets) are found through the page, not by URL
        key = keys[location]
        if key in seen:
            continue
        seen.add(key)
        written.append((location, key, part))
    # the root says how many records hold its parts, each part names the root: an import takes this page's parts
    # from those records alone (pdi.interop.warc.records.WarcIndex.own_parts)
    root_id = ""
    for n, (location, key, part) in enumerate(written):
        if n == 0:
            extra = {"PDI": str(name), "PDI-Parts": str(len(written) - 1)}
            root_id = writer.response(location, date, part.content_type, part.charset, part.data, extra)
        else:
            writer.response(location, part_dates.get(key, date), part.content_type, part.charset, part.data,
                            {"WARC-Concurrent-To": root_id})
    if keys[url] != keys[root_url]:  # the page answered at another URL: the redirect
        writer.redirect(url, root_url, date)
    return root_url


def export_wacz(
    archive: Archive,
    output: str | Path | BinaryIO,
    *,
    series: str | None = None,
    title: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    key: WaczKey | None = None,
    identity: Identity | None = None,
    work_dir: str | Path | None = None,
) -> Exported:
    """Write the archive's web documents (those whose id is an http(s) URL) as a WACZ at ``output``.

    Every version of every such document of ``series`` (or of the whole
    archive) is written; withdrawn names are left out. The whole export
    reads one snapshot of the catalog (:meth:`Archive.snapshot`): what is
    deposited or withdrawn while it runs is not seen, and a name purged
    while it runs whose octets are gone from the blob store (files, S3)
    fails it (a :class:`~pdi.errors.StoreError`, nothing written). The file is written
    beside ``output`` and renamed when complete; an existing ``output`` is
    not overwritten. A named pipe or a device is written in place; ``output``
    may also be a binary stream (written from where it stands, not closed).
    With ``key``, ``datapackage-digest.json`` is signed
    (:mod:`pdi.wacz_signing`: the WACZ signing specification's anonymous form;
    with ``identity`` too, its domain-identity form).

    The work files (the WARC, the CDXJ index and its spill files, the pages,
    the SQLite file of revisits' referents) are in a folder of their own made
    in ``work_dir``; without it, beside ``output`` (``.NAME.pdi-work-…``: on
    the file system the WACZ goes to), or in ``$TMPDIR`` when ``output`` is
    a stream, a pipe or a device. The folder is removed however the export
    ends. A disk that fills is a :class:`~pdi.errors.StoreError` naming the
    folder and about how much room the export needs there.
    """
    stream: BinaryIO | None = None
    target: Path | None = None
    if isinstance(output, (str, os.PathLike)):
        target = Path(output)
        check_target(target, str(output))
    else:
        stream = output
    shown = "the stream" if target is None else str(output)
    work_at, prefix = work_parent(target, work_dir)
    if series is not None:
        series = canonical_series(series)
        if archive.find_series(series) is None:
            raise NotFoundError(f"series {series} is not registered")
    state = _Progress(progress)
    try:
        made = WorkFolder(prefix, work_at)  # one a killed export left there: removed (pdi._workdirs)
    except OSError as exc:
        raise StoreError(f"cannot make the work folder of {shown} in {work_at or tempfile.gettempdir()}:"
                         f" {exc.strerror or exc}") from exc
    with made as folder:
        work = Path(folder)
        try:
            writer, pages, documents, first_page = _write_work(archive, work, series, state)
        except Exception as exc:  # a full disk is said by OSError or sqlite3's
            if not disk_full(exc):
                raise
            raise _no_space(archive, series, work, target, shown, state, writing=False) from exc
        if writer.records == 0:
            raise NotFoundError(
                "nothing to export as WACZ: no document" + (f" of series {series}" if series else "")
                + " has a URL for its id"
            )
        args = ((work / WARC_NAME, writer.sha256.hexdigest()), work / "index.cdx", work / "pages.jsonl",
                title or _title(series), first_page, key, identity)
        if stream is not None:
            try:
                _write_zip(stream, *args)
                stream.flush()
            except OSError as exc:
                raise StoreError(f"cannot write the WACZ to {shown}: {exc.strerror or exc}") from exc
        else:
            assert target is not None
            with written_whole(target, shown, EXPORT.file) as partial:  # made its owner's alone
                try:
                    _write_zip(partial, *args)
                except Exception as exc:  # a full disk is said by OSError or sqlite3's
                    if not disk_full(exc):
                        raise
                    raise _no_space(archive, series, work, target, shown, state, writing=True) from exc
    return Exported(pages, documents, writer.records)


class _Progress:
    """The export's progress callback, and what the export has done: a disk that fills is told how far it got."""

    def __init__(self, callback: Callable[[int, int], None] | None) -> None:
        self.callback = callback
        self.done = 0
        self.total = 0
        self.writer: _Writer | None = None  # its WARC's octets counted as written (some in a buffer still)


def _write_work(
    archive: Archive, work: Path, series: str | None, state: _Progress,
) -> tuple[_Writer, int, int, dict[str, str] | None]:
    """The WARC, index and pages of an export in ``work``: the writer, the pages and other documents written, and the
    first page (none: no page)."""
    warc_path = work / WARC_NAME
    cdx_path = work / "index.cdx"
    pages_path = work / "pages.jsonl"
    progress = state.callback
    # One snapshot of the catalog for the whole export: the listing, every batch of statements and every
    # record's octets read as the catalog was at its first read, whatever is deposited, withdrawn or purged
    # meanwhile (docs/reference/commands.md, "One view of the archive"). Each record is written as it is
    # read: what is held is a batch of names, one record's octets and a few MiB of index lines to sort, however
    # many captures the archive holds (the rest is in files in the export's folder).
    reading: RepresentationRecord | None = None  # the record whose octets are being read
    writer: _Writer | None = None
    try:  # a MiB of buffer: a record's member is written with others, not in a system call of its own
        with (warc_path.open("wb", buffering=1 << 20) as out, cdx_path.open("w", encoding="utf-8") as cdx,
              pages_path.open("w", encoding="utf-8") as pages_out, archive.snapshot()):
            writer = _Writer(out, cdx, work=work)
            state.writer = writer
            pages_out.write(json.dumps({"format": "json-pages-1.0", "id": "pages", "title": "Pages"}) + "\n")
            listed = _web_records(archive, series)
            total = archive.count_records(series, ids=_WEB, page=_LISTED_AT_ONCE) if progress is not None else 0
            state.total = total
            done = pages = documents = 0
            first_page: dict[str, str] | None = None
            while batch := list(itertools.islice(listed, _STATED_AT_ONCE)):
                # the next names' statements a query a key, not a few a name
                names = [_name_of(r) for r in batch]
                stated = {key: archive.latest_statements(names, key) for key in _STATED}
                for r, name in zip(batch, names, strict=True):
                    done += 1
                    state.done = done
                    reading = r
                    try:
                        data = archive.get_record(r, name).data  # the record listed: not looked up again
                    except WithdrawnError:
                        reading = None
                        continue
                    reading = None
                    page = _write_record(writer, r, name, data, stated)
                    if page is None:
                        documents += 1
                    elif page:
                        pages_out.write(json.dumps(page, ensure_ascii=False) + "\n")
                        pages += 1
                        first_page = first_page or page
                    if progress is not None:
                        progress(done, max(total, done))
            assert writer.index is not None
            writer.index.finish()
    except (IntegrityError, StoreError) as exc:
        # its octets missing: a purge committed since the snapshot began (asked now, the snapshot ended)?
        purged = None if reading is None else archive.purged_meanwhile(reading, _name_of(reading))
        if purged is None:
            raise
        raise purged from exc
    finally:
        if writer is not None:
            writer.written.close()
    assert writer is not None
    return writer, pages, documents, first_page


def _no_space(
    archive: Archive, series: str | None, work: Path, target: Path | None, shown: str, state: _Progress,
    *, writing: bool,
) -> StoreError:
    """The error of a disk that filled (:mod:`pdi.interop.wacz_room`): ``writing``, while the WACZ was written (its
    work files all written); else while the work files were, their size so far for the records done telling what
    they will need."""
    made = sum(file_size(f) for f in work.iterdir() if f.name != WARC_NAME) + max(
        file_size(work / WARC_NAME), 0 if state.writer is None else state.writer.offset)  # the WARC's buffer too
    if writing:
        assert target is not None
        return no_space_writing(work, target, shown, made)
    total = state.total
    if not total:
        with contextlib.suppress(PDIError):  # how far it got is only for the estimate
            total = archive.count_records(series, ids=_WEB, page=_LISTED_AT_ONCE)
    return no_space_working(work, target, shown, made, state.done, total)


#: The foreign ids of the documents an export writes: URLs (any case).
_WEB = ("http://", "https://")


def _web_records(archive: Archive, series: str | None) -> Iterator[RepresentationRecord]:
    """The records an export writes, in listing order, a page at a time: those of documents whose id is a URL."""
    listed = archive.iter_records(series, page=_LISTED_AT_ONCE)
    return (r for r in listed if r.serial is None and r.unique_id.lower().startswith(_WEB))


def _write_record(
    writer: _Writer, r: RepresentationRecord, name: PDI, data: bytes, stated: dict[str, dict[str, str]]
) -> dict[str, str] | None:
    """The WARC records of ``r`` (its octets ``data``): a page's line of ``pages.jsonl`` (``{}``: a page with no
    http(s) root, written but not listed), or ``None`` for any other document (one ``response``)."""
    subject = str(name.canonical())
    statements = {key: found[subject] for key, found in stated.items() if subject in found}
    date = _date_of(r, statements)
    if r.media_type != "multipart/related":
        writer.response(r.unique_id, date, r.media_type, r.charset, data, {"PDI": str(name)})
        return None
    keys = _Keys()
    parts = _part_dates(statements.get("warc:parts"), keys)
    if _write_page(writer, r.unique_id, date, data, name, parts, keys) is None:
        return {}
    page = {"id": str(name), "url": r.unique_id, "ts": _iso_ts(date), "pdi": str(name)}
    stated_title = statements.get("title")
    if stated_title:
        page["title"] = stated_title
    return page


def _title(series: str | None) -> str:
    return f"pdi archive, series {series}" if series else "pdi archive"


def _write_zip(
    path: Path | BinaryIO, warc: tuple[Path, str], cdx_path: Path, pages: Path, title: str, main_page: dict[str, str] | None,
    key: WaczKey | None, identity: Identity | None,
) -> None:
    """The WACZ at ``path``; ``warc`` is the WARC's path and the SHA-256 (hex) of the octets written to it,
    ``main_page`` the first line of ``pages`` after its header (none: no page)."""
    created = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    resources: list[dict[str, object]] = []

    def add(zf: zipfile.ZipFile, member: str, source: Path | bytes, stored: bool, sha256: str | None = None) -> None:
        info = zipfile.ZipInfo(member, datetime.datetime.now(datetime.UTC).timetuple()[:6])
        info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
        # The size given up front lets zipfile write ZIP64 fields only for a member that
        # needs them: ReplayWeb.page's ZIP reader cannot read a small member written with them.
        info.file_size = len(source) if isinstance(source, bytes) else source.stat().st_size
        digest = hashlib.sha256()
        size = 0
        with zf.open(info, "w") as out:
            if isinstance(source, bytes):
                out.write(source)
                digest.update(source)
                size = len(source)
            else:
                with source.open("rb") as fh:
                    while chunk := fh.read(1 << 20):
                        out.write(chunk)
                        if sha256 is None:
                            digest.update(chunk)
                        size += len(chunk)
        resources.append({
            "name": os.path.basename(member).lower(), "path": member,
            "hash": "sha256:" + (sha256 or digest.hexdigest()), "bytes": size,
        })

    # Opened here for writing only: zipfile, given a name, opens it for reading and writing first, and a named pipe
    # so opened (then closed, as it cannot seek) let a waiting reader in and told it the end of the file.
    with contextlib.ExitStack() as opened:
        # A file of its owner's alone whatever the umask (it may hold a private series' pages); a pipe or a
        # device as it is.
        out = opened.enter_context(open_private(path, EXPORT.file)) if isinstance(path, Path) else path
        with zipfile.ZipFile(out, "w") as zf:
            add(zf, f"archive/{WARC_NAME}", warc[0], stored=True, sha256=warc[1])  # WACZ §: WARCs stored, so replay can seek
            add(zf, "indexes/index.cdx", cdx_path, stored=False)
            add(zf, "pages/pages.jsonl", pages, stored=False)
            package: dict[str, object] = {
                "profile": "data-package",
                "resources": resources,
                "title": title,
                "created": created,
                "wacz_version": WACZ_VERSION,
                "software": f"pdi {__version__}",
            }
            if main_page:
                package["mainPageURL"] = main_page["url"]
                package["mainPageDate"] = main_page["ts"]
            package_bytes = json.dumps(package, indent=2).encode("utf-8")
            zf.writestr(zipfile.ZipInfo("datapackage.json", datetime.datetime.now(datetime.UTC).timetuple()[:6]),
                        package_bytes, compress_type=zipfile.ZIP_DEFLATED)
            zf.writestr(zipfile.ZipInfo(DIGEST_FILE, datetime.datetime.now(datetime.UTC).timetuple()[:6]),
                        digest_file(package_bytes, created, f"pdi {__version__}", key, identity), compress_type=zipfile.ZIP_DEFLATED)

