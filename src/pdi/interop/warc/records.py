"""WARC records, read and checked once (pass 1 of an import): ISO 28500:2017 (WARC 1.1) §5, §6.3, §6.4, §6.7, §6.8.

Every record is read to its end with warcio (a file of plain records only: by
:mod:`~pdi.interop.warc.direct`, which gives the same); its block and payload digests
(§5.8, §5.9) are checked as it passes, its payload's codings undone with the
output bounded; what an import can use is indexed by URL (as URIs are
compared, :func:`pdi.mhtml.resolve.comparable`) and by payload digest, so that
revisits (§6.7) find their payload.
"""

from __future__ import annotations

import bisect
import contextlib
import datetime
import io
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.recordloader import ArcWarcRecord

from pdi._wording import clipped
from pdi.errors import (
    IntegrityError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    UnsupportedError,
)
from pdi.interop.warc.bounded import (
    UNCLOSED_HTTP,
    BoundedIterator,
    ReadLimits,
    Refused,
    any_case_schemes,
)
from pdi.interop.warc.coding import decoded
from pdi.interop.warc.digests import digest_key
from pdi.interop.warc.direct import Handover, Read, read_plain
from pdi.interop.warc.entries import (
    _CHUNK,
    EXPANSION,
    KEEP_RECORD,
    Entry,
    LeftOut,
    _drain,
    _index_fields,
    _where,
    check_fields,
    unheld,
)
from pdi.interop.warc.sources import Source
from pdi.mhtml.resolve import comparable

__all__ = ["KEEP_RECORD", "KEEP_TOTAL", "PAGE_TYPES", "Entry", "WarcIndex", "nearest_of", "read_index"]

#: media types that make a record a page (an aggregate), not a lone resource
PAGE_TYPES = frozenset({"text/html", "application/xhtml+xml"})
#: All the payloads pass 1 keeps for pass 2, at most (octets; each at most :data:`KEEP_RECORD`).
KEEP_TOTAL = 32 << 20


@dataclass
class WarcIndex:
    """Every usable record of some WARC files, by URL (in the form URIs are compared in) and by payload digest."""

    sources: list[Source]
    entries: list[Entry] = field(default_factory=list)
    by_key: dict[str, list[Entry]] = field(default_factory=dict)
    by_digest: dict[str, list[Entry]] = field(default_factory=dict)
    records: int = 0
    #: with ``partial``: the damage that ended the reading of a file, and what was left out
    dropped: list[str] = field(default_factory=list)
    #: the payloads pass 1 read and kept (checked with their digests), by (file, offset): pass 2 reads them
    #: again from here, not from the file (small records only, :data:`KEEP_RECORD`, up to :data:`KEEP_TOTAL`)
    kept: dict[tuple[int, int], bytes] = field(default_factory=dict)
    kept_bytes: int = 0
    #: the candidates of :meth:`original` (one digest's records, or one URL's), by URI and by URI and date, made
    #: once each: 40,000 revisits of one payload, each naming its URI, took 111 s read a candidate at a time
    _by_uri: dict[tuple[str, str], tuple[dict[str, list[Entry]], dict[tuple[str, str], Entry]]] = field(
        default_factory=dict, repr=False)
    #: the records that are not revisits by their WARC-Record-ID, made at the first revisit that names one so
    _by_id: dict[str, Entry] | None = field(default=None, repr=False)
    #: the records that name another in their ``WARC-Concurrent-To``, by the WARC-Record-ID they name
    concurrent: dict[str, list[Entry]] = field(default_factory=dict)
    #: the records left out for their target's scheme (dns:, ftp:, urn: …), said in the import's report
    left_out: LeftOut = field(default_factory=LeftOut)

    def add(self, entry: Entry) -> None:
        self.entries.append(entry)
        same = self.by_key.setdefault(comparable(entry.uri), [])
        bisect.insort(same, entry, key=lambda e: e.date)
        if entry.payload_digest and entry.kind != "revisit":
            self.by_digest.setdefault(_digest_key(entry.payload_digest), []).append(entry)
        if self._by_id is not None and entry.kind != "revisit" and entry.record_id:
            self._by_id.setdefault(entry.record_id, entry)
        if entry.concurrent_to:
            self.concurrent.setdefault(entry.concurrent_to, []).append(entry)

    def count(self, number: int, offset: int, entry: Entry | None, payload: bytes | None) -> None:
        """One record read, at ``offset`` of file ``number``: its entry if it is usable, and its payload if kept."""
        self.records += 1
        if entry is not None:
            self.add(entry)
            if payload is not None:
                self.kept[(number, offset)] = payload
                self.kept_bytes += len(payload)

    def nearest(self, url: str, when: datetime.datetime) -> Entry | None:
        """The record of ``url`` captured nearest in time to ``when`` (the earlier on a tie)."""
        return nearest_of(self.by_key.get(comparable(url)), when)

    def own_parts(self, page: Entry) -> dict[str, list[Entry]] | None:
        """The records a page that pdi's export wrote was deposited with (its root first), by URL as URIs are
        compared; ``None`` for any other page (its parts are any record of their URL, the nearest in time).

        Such a page's root carries ``PDI`` and ``PDI-Parts`` (how many records hold its parts), and each of its
        parts a ``WARC-Concurrent-To`` naming the root: a part the page was deposited without is not taken from
        another capture of its URL, and two captures of one URL in one second keep their own parts.
        """
        if page.pdi is None or page.parts is None or not page.record_id:
            return None
        own: dict[str, list[Entry]] = {comparable(page.uri): [page]}
        for entry in self.concurrent.get(page.record_id, ()):
            bisect.insort(own.setdefault(comparable(entry.uri), []), entry, key=lambda e: e.date)
        return own

    def original(self, revisit: Entry) -> Entry:
        """The record whose payload a revisit repeats (§6.7): the one its WARC-Refers-To names by its WARC-Record-ID,
        else by its payload digest, else by the URI and date it refers to. A named record whose payload digest is
        not the revisit's is not it (§6.7.2: the revisit's digest is the payload's): the digest is followed."""
        if revisit.refers_to:
            if self._by_id is None:
                self._by_id = {}
                for entry in self.entries:
                    if entry.kind != "revisit" and entry.record_id:
                        self._by_id.setdefault(entry.record_id, entry)
            named = self._by_id.get(revisit.refers_to)
            if named is not None and not _digests_differ(named.payload_digest, revisit.payload_digest):
                return named
        candidates: list[Entry] = []
        key = ("", "")
        if revisit.payload_digest:
            key = ("digest", _digest_key(revisit.payload_digest))
            candidates = self.by_digest.get(key[1], [])
        if not candidates and revisit.refers_to_uri:
            key = ("uri", comparable(revisit.refers_to_uri))
            candidates = [e for e in self.by_key.get(key[1], []) if e.kind != "revisit"]
        if revisit.refers_to_uri and candidates:
            by_uri, by_date = self._candidates_by_uri(key, candidates)
            exact = by_uri.get(revisit.refers_to_uri, [])
            dated = by_date.get((revisit.refers_to_uri, revisit.refers_to_date)) if revisit.refers_to_date else None
            candidates = [dated] if dated is not None else exact or candidates
        if not candidates:
            raise NotFoundError(
                f"{_where(self.sources[revisit.source], revisit.offset, revisit.uri)} is a revisit of a"
                " payload that is not in the file"
            )
        return candidates[0]

    def _candidates_by_uri(
        self, key: tuple[str, str], candidates: list[Entry],
    ) -> tuple[dict[str, list[Entry]], dict[tuple[str, str], Entry]]:
        """``candidates`` (the records ``key`` names) by URI, and the first of each URI and date, in file order."""
        made = self._by_uri.get(key)
        if made is None:
            by_uri: dict[str, list[Entry]] = {}
            by_date: dict[tuple[str, str], Entry] = {}
            for entry in candidates:
                by_uri.setdefault(entry.uri, []).append(entry)
                if entry.warc_date:
                    by_date.setdefault((entry.uri, entry.warc_date), entry)
            made = self._by_uri[key] = (by_uri, by_date)
        return made

    def effective(self, entry: Entry) -> tuple[Entry, Entry]:
        """``(headers, payload)``: the record whose status and type count, and the one holding the bytes."""
        if entry.kind != "revisit":
            return entry, entry
        original = self.original(entry)
        # A revisit may repeat the response's headers (status 200) or say 304, or carry none.
        headers = entry if entry.status and entry.status != 304 and entry.media_type else original
        return headers, original

    def payload(self, entry: Entry, limit: int) -> bytes:
        """The payload of a (non-revisit) record, transfer and content codings undone."""
        source = self.sources[entry.source]
        why = entry.unusable(limit)
        if why is not None:
            raise (LimitError if entry.oversize else UnsupportedError)(f"{_where(source, entry.offset, entry.uri)}: {why}")
        kept = self.kept.get((entry.source, entry.offset))
        if kept is not None and len(kept) <= limit:
            return kept
        with source.open() as fh:
            fh.seek(entry.offset)
            it = any_case_schemes(ArchiveIterator(fh))
            try:
                record = next(iter(it))
            except Exception as exc:  # any exception from warcio: see _damaged
                raise ParseError(f"{_where(source, entry.offset, entry.uri)} cannot be read again: {exc}") from None
            data = _drain(decoded(record.raw_stream, record.http_headers, cut=_cut(record)), limit,
                          _where(source, entry.offset, entry.uri), keep=True)
            it.close()
        assert isinstance(data, bytes)
        return data


    def payload_pieces(self, entry: Entry) -> Iterator[bytes]:
        """The payload of a record checked by :func:`read_index` (so within the limit), in pieces, never whole."""
        kept = self.kept.get((entry.source, entry.offset))
        if kept is not None:
            yield kept
            return
        source = self.sources[entry.source]
        where = _where(source, entry.offset, entry.uri)
        with source.open() as fh:
            fh.seek(entry.offset)
            it = any_case_schemes(ArchiveIterator(fh))
            try:
                record = next(iter(it))
                stream = decoded(record.raw_stream, record.http_headers, cut=_cut(record))
                while chunk := stream.read(_CHUNK):
                    yield chunk
            except PDIError:
                raise
            except Exception as exc:  # any exception from warcio: see _damaged
                raise ParseError(f"{where} cannot be read again: {exc}", rule="WARC record") from None
            finally:
                it.close()


def nearest_of(same: list[Entry] | None, when: datetime.datetime) -> Entry | None:
    """The entry of ``same`` (records of one URL) captured nearest in time to ``when`` (the earlier on a tie)."""
    if not same:
        return None
    return min(same, key=lambda e: (abs((e.date - when).total_seconds()), e.date > when))


def _digest_key(value: str) -> str:
    """A payload digest compared with another: as the octets it spells (:func:`~pdi.interop.warc.digests.digest_key`:
    ``sha1:`` and ``SHA1:``, base32 and base16 are one digest; a revisit spelling its digest otherwise than its
    original was not found by it)."""
    return digest_key(value)


def _digests_differ(one: str | None, other: str | None) -> bool:
    """Whether two payload digests of one algorithm name different payloads (of two algorithms, or one missing,
    nothing is told)."""
    if not one or not other:
        return False
    first, second = _digest_key(one), _digest_key(other)
    return first.partition(":")[0] == second.partition(":")[0] and first != second


def read_index(
    sources: Sequence[Source],
    *,
    limit: int,
    progress: Callable[[int, int], None] | None = None,
    bounds: ReadLimits | None = None,
    partial: bool = False,
) -> WarcIndex:
    """Read every record once, checking it (pass 1): an error names the file and the record's offset.

    Each file is read within ``bounds`` (:mod:`pdi.interop.warc.bounded`:
    header lines, expansion, time) and must not be cut short. With
    ``partial``, the first damaged record of a file ends its reading instead
    of the import: the whole records before it are indexed and the damage is
    listed in the index's ``dropped``. ``progress`` is told the bytes read of
    all the files, and their total.
    """
    bounds = bounds or ReadLimits()
    deadline = None if bounds.max_seconds is None else time.monotonic() + bounds.max_seconds
    index = WarcIndex(list(sources))
    total = sum(source.size for source in sources)
    before = 0
    for number, source in enumerate(sources):
        records = index.records
        try:
            _read_source(index, source, number, limit, bounds, deadline, before, total, progress)
        except PDIError as exc:
            # a file that is no WARC at all is no damaged WARC whose whole records --partial keeps: refused as
            # without it (exit 1), as docs/how-to/web-archives.md says (found by a probe, 2026-11-30: exit 14)
            if not partial or (isinstance(exc, ParseError) and exc.rule == "WARC version"):
                raise
            index.dropped.append(f"{exc} (the rest of {source.name} is left out)")
        else:
            if index.records == records:
                raise ParseError(f"{source.name} holds no WARC record", rule="WARC record")
        before += source.size
    return index


def _read_source(
    index: WarcIndex,
    source: Source,
    number: int,
    limit: int,
    bounds: ReadLimits,
    deadline: float | None,
    before: int,
    total: int,
    progress: Callable[[int, int], None] | None,
) -> None:
    """Index the records of one file (see :func:`read_index`): by :mod:`~pdi.interop.warc.direct` when every
    record is plain, else by warcio."""
    def told(at: int) -> None:
        if progress is not None:
            progress(min(before + at, total), total)

    read = Read(index.kept_bytes, KEEP_TOTAL)
    whole = True
    with source.open() as fh:
        try:
            read_plain(fh, source, number, limit, bounds, deadline, read, told)
        except (Handover, PDIError):  # (PDIError: the file itself is damaged, a WACZ entry's CRC-32)
            whole = False  # warcio reads the whole file, and meets what is wrong where it is
    for offset, entry, payload in read.records if whole else ():
        index.count(number, offset, entry, payload)
    if whole:
        index.left_out.merge(read.left)
        return
    with source.open() as fh:
        _check_version_line(fh, source)
    with source.open() as fh, contextlib.redirect_stderr(io.StringIO()):
        # warcio writes its warning about a record not followed by blank lines to
        # stderr and counts it; here the count makes it an error.
        it = BoundedIterator(fh, limits=bounds, deadline=deadline)
        records = iter(it)
        while True:
            offset = it.offset
            uri: str | None = None
            try:
                try:
                    record = next(records)
                except StopIteration:
                    break
                offset = it.offset
                uri = record.rec_headers.get_header("WARC-Target-URI")
                declared = record.rec_headers.get_header("Content-Length")
                if record.format.startswith("warc"):
                    check_fields([name for name, _value in record.rec_headers.headers], _where(source, offset, uri),
                                 record.rec_type)
                if record.format.startswith("warc") and not (
                        declared is not None and declared.isascii() and declared.isdigit()):
                    # WARC 1.1 §5.3: 1*DIGIT (what int() also reads, "-5", "5_0", "５", is no length)
                    shown = "none" if declared is None else repr(declared[:40])
                    raise ParseError(f"{_where(source, offset, uri)} is damaged: its Content-Length is {shown},"
                                     " not a number of octets (WARC 1.1 §5.3: digits)", rule="WARC record")
                if it.loader.http_unclosed:
                    raise ParseError(f"{_where(source, offset, uri)} is damaged: {UNCLOSED_HTTP}", rule="WARC record")
                if it.loader.digest_unknown is not None:
                    raise UnsupportedError(f"{_where(source, offset, uri)} is refused: {it.loader.digest_unknown}")
                errors = it.err_count
                entry, payload = _index_one(record, source, number, offset, limit, index.kept_bytes < KEEP_TOTAL,
                                            bounds.max_expansion)
                uri = entry.uri if entry else uri
                it.read_to_end()
            except PDIError:
                raise
            except Refused as exc:
                if exc.at is not None and exc.at != offset:
                    offset, uri = exc.at, None
                elif uri is None:  # met inside warcio's reading of the record, after its WARC header block
                    uri = it.loader.target_read
                verdict = "is damaged" if issubclass(exc.error, (ParseError, IntegrityError)) else "is refused"
                raise exc.error(f"{_where(source, offset, uri)} {verdict}: {exc.detail}") from None
            except Exception as exc:  # any exception from warcio: see _damaged
                raise _damaged(source, offset, exc, uri or it.loader.target_read) from None
            if it.err_count > errors:
                raise ParseError(
                    f"{_where(source, offset, uri)} is damaged: its Content-Length does not end where"
                    " the next record begins",
                    rule="WARC record",
                )
            if it.reader.decompressor is not None and (it.next_line or b"").startswith(b"WARC/"):
                # the next record begins inside this record's gzip member: warcio says so only once it has read
                # that record, at an offset of its own making (the member's end less what is left of it, so
                # before the member, or negative), which --partial indexed it at, and pass 2 read another record
                # there, or nothing (found by a probe, 2026-12-01: offsets 159 and -51)
                raise _compressed_whole(source, offset)
            if getattr(record.raw_stream, "limit", 0) > 0:
                raise ParseError(
                    f"{_where(source, offset, uri)} is damaged: the file ends before its Content-Length",
                    rule="WARC record",
                )
            checker = getattr(record, "digest_checker", None)
            if checker is not None and checker.problems:
                raise IntegrityError(f"{_where(source, offset, uri)} is damaged:"
                                     f" {_digest_problem(checker.problems[0], record.rec_headers)}")
            index.count(number, offset, entry, payload)
            if record.format.startswith("warc") and unheld(record.rec_type, uri):
                assert uri is not None
                index.left_out.add(number, offset, uri)
            if progress is not None:
                progress(min(before + it.offset, total), total)


def _digest_problem(problem: str, headers: Any) -> str:
    """warcio's account of a failed digest, in the WARC's own terms: the field's value as the record spells it
    (warcio is given it in base32: :mod:`pdi.interop.warc.digests`)."""
    for kind, field_name in (("payload", "WARC-Payload-Digest"), ("block", "WARC-Block-Digest")):
        if problem.startswith(f"{kind} digest failed"):
            declared = (headers.get_header(field_name) or "").strip() or problem.removeprefix(
                f"{kind} digest failed").strip(": ")
            return f"its {kind} does not match its {field_name} {clipped(declared, 200)}"
    return problem


def _damaged(source: Source, offset: int, exc: Exception, uri: str | None = None) -> ParseError:
    """A record warcio could not read. On damaged input warcio raises whatever its
    parsing hits (``ArchiveLoadFailed``, ``ValueError``, ``zlib.error``, but also
    ``AttributeError`` on a missing header or ``IndexError``), so every exception
    from it is a damaged record, named by its offset (and its target URI, ``uri``, when it is known); one whose first line the file
    ends inside (an uncompressed file cut there) is said to be cut short; a file
    compressed whole (``gzip file.warc``) is said to be so, with how to mend it."""
    if "non-chunked gzip file detected" in str(exc):  # warcio's ArchiveLoadFailed, at a record's end
        return _compressed_whole(source, 0)
    detail = str(exc) or type(exc).__name__
    if _ends_in_first_line(source, offset):
        detail = "the file ends inside its version line (the file is cut short)"
        uri = None  # (its first line cut: what was read before it was the record before's)
    return ParseError(f"{_where(source, offset, uri)} is damaged: {detail}", rule="WARC record")


def _compressed_whole(source: Source, offset: int) -> ParseError:
    """A ``.warc.gz`` whose gzip member at ``offset`` holds several records (the whole file's, at 0): no record
    after the member's first has an offset to be read again at, so none of the member's is indexed."""
    where = "" if offset == 0 else f" from offset {offset} on (its gzip member there holds several records)"
    return ParseError(
        f"{source.name} is compressed whole{where}, one gzip member for several records: pdi reads a .warc.gz of"
        " one member a record, as WARC 1.1's annex D asks, so that each record can be read at its offset."
        " `gunzip` it and import the .warc, or rewrite it with `warcio recompress FILE NEW.warc.gz`",
        rule="WARC file",
    )


def _ends_in_first_line(source: Source, offset: int) -> bool:
    """Whether the file (uncompressed there) ends within :data:`_FIRST_LINE_AT_MOST` octets of ``offset``, before
    any line ends."""
    try:
        with source.open() as fh:
            fh.seek(offset)
            rest = fh.read(_FIRST_LINE_AT_MOST)
    except OSError:
        return False
    # (and what is there may begin a version line: seven octets of something else after the last gzip member were
    # said to be a version line cut short)
    return (0 < len(rest) < _FIRST_LINE_AT_MOST and rest[:2] != b"\x1f\x8b" and b"\n" not in rest
            and (rest.startswith(b"WARC/") or b"WARC/".startswith(rest)))


def _index_one(
    record: ArcWarcRecord, source: Source, number: int, offset: int, limit: int, keep: bool = False,
    expansion: float = EXPANSION,
) -> tuple[Entry | None, bytes | None]:
    """The index entry of a record an import can use (or ``None``); reads its payload through.

    With ``keep``, a payload of at most :data:`KEEP_RECORD` octets is kept too
    (it is the index's only once its record's digests are found right); ``expansion`` as for
    :func:`~pdi.interop.warc.entries._index_fields`.
    """
    return _index_fields(record.rec_type, record.rec_headers, record.http_headers, record.length,
                         lambda: decoded(record.raw_stream, record.http_headers, cut=_cut(record)), source, number,
                         offset, limit,
                         keep, expansion)


#: Octets of a file's start read to find its first line (decompressed, for a gzip member).
_FIRST_LINE_AT_MOST = 256


def _check_version_line(fh: BinaryIO, source: Source) -> None:
    """A :class:`ParseError` unless the file's first line (its first gzip member's, decompressed) begins ``WARC/``,
    the version line of every WARC record (ISO 28500:2017 §5.2, WARC 1.1): warcio would read anything else as
    ARC, the format before WARC, and report a file that is not a WARC at all as a damaged one. An empty file, or
    a first member that does not decompress, is left to the reader, which says what is wrong with it."""
    start = fh.read(_FIRST_LINE_AT_MOST * 4)
    if b"\x1f\x8b".startswith(start[:2]):  # gzip (or a file cut inside its magic, or empty)
        try:
            start = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(start, _FIRST_LINE_AT_MOST)
        except zlib.error:
            return
    line = start[:_FIRST_LINE_AT_MOST].split(b"\n", 1)[0].rstrip(b"\r")
    if line and not line.startswith(b"WARC/") and not b"WARC/".startswith(line):  # the latter: a WARC cut short
        shown = line[:60].decode("latin-1")
        raise ParseError(f"{source.name} is not a WARC file: its first line is {shown!r}, not a version line"
                         " (WARC/1.0 or WARC/1.1)", rule="WARC version")


def _cut(record: ArcWarcRecord) -> bool:
    """Whether a record warcio read says its crawler cut its payload short (``WARC-Truncated``, WARC 1.1 §5.13)."""
    return record.rec_headers.get_header("WARC-Truncated") is not None
