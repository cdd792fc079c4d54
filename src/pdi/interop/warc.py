"""WARC in: importing web archives' captures as aggregates; WARC out: a capture's HTTP exchanges.

Implements, of ISO 28500:2017 (WARC 1.1), what an importer needs: the
record types ``response`` (§6.3), ``resource`` (§6.4) and ``revisit``
(§6.7, both profiles: §6.7.2 identical payload digest and §6.7.3 server
not modified), and the named fields ``WARC-Target-URI`` (§5.11),
``WARC-Date`` (§5.4), ``WARC-Payload-Digest`` (§5.9), ``WARC-Block-Digest``
(§5.8) and ``WARC-Refers-To-Target-URI``/``-Date`` (§5.12, §5.13). The
records are read with ``warcio`` (never by hand).

An import runs in two passes.

1. **Index and check** (:func:`read_index`): every record is read once to
   its end; its block and payload digests are checked (warcio's digest
   verifier, over the payload as sent), its payload's transfer and content
   codings are undone with the output bounded, and a record whose length
   does not match what follows it, that ends early, or whose digests fail is
   an error naming the file and the record's offset. So a damaged file
   deposits nothing at all (and so nothing of the damaged record's page).
2. **Pages** (:func:`plan_import`, :func:`import_warc`): each ``200``
   response of HTML (or a revisit that resolves to one) is a page. Its parts
   are gathered by the capture path's own crawl (:func:`pdi.capture.crawl.crawl`)
   with a fetch that answers from the index instead of the network: the
   record of the URL nearest in time to the page's ``WARC-Date`` (as replay
   tools pick them), redirects (3xx with ``Location``) followed inside the
   file, revisits followed to the record with the payload they name. The
   aggregate is packed by :func:`pdi.capture.crawl.pack_crawl` and deposited
   by :func:`pdi.capture.deposit.deposit_capture` under the page's URL on
   the GMT day of its ``WARC-Date``. A ``200`` record that no page uses
   (a lone PDF, an image) is deposited as itself, in its own format. Each
   deposit is all or nothing; what the WARC said of each record (date,
   record id, payload digest, and the parts' digests) is kept as
   statements (``warc:…``) about the deposited name.

:func:`write_exchanges` writes a capture's HTTP exchanges (``request`` and
``response`` records, with payload digests) as WARC.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import datetime
import io
import tempfile
import zlib
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from pdi import formats
from pdi._wording import plural
from pdi.archive import Archive, Content, Deposit
from pdi.archive import canonical_series as _canonical_series
from pdi.capture.crawl import crawl, pack_crawl
from pdi.capture.fetch import Exchange, Fetched, Limits, Redirect
from pdi.errors import (
    IntegrityError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    UnsupportedError,
)
from pdi.identifier import PDI
from pdi.mhtml.resolve import comparable
from pdi.uri import resolve

__all__ = [
    "Entry",
    "Exchange",
    "ImportPlan",
    "Imported",
    "Source",
    "WarcIndex",
    "import_warc",
    "plan_import",
    "read_index",
    "sources_for",
    "write_exchanges",
]

#: media types that make a record a page (an aggregate), not a lone resource
PAGE_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_CHUNK = 1 << 16
_MAX_REDIRECTS = 10


@dataclass(frozen=True)
class Source:
    """One WARC file: its name in messages and a way to open it (seekable) afresh."""

    name: str
    open: Callable[[], AbstractContextManager[BinaryIO]]
    size: int = 0  # bytes, for progress


def sources_for(path: str | Path) -> list[Source]:
    """The WARC files of ``path``: itself (``.warc``, ``.warc.gz``), or those a WACZ holds."""
    name = str(path)
    if name.lower().endswith(".wacz"):
        from pdi.interop.wacz import wacz_sources

        return wacz_sources(path)
    if not Path(path).is_file():
        raise NotFoundError(f"no file {name}")

    @contextlib.contextmanager
    def opener() -> Iterator[BinaryIO]:
        with open(path, "rb") as fh:
            yield fh

    return [Source(Path(path).name, opener, Path(path).stat().st_size)]


def is_web_archive(path: str | Path) -> bool:
    """Whether ``path`` is named as a WARC or WACZ file (what ``pdi import`` dispatches on)."""
    lower = str(path).lower()
    return lower.endswith((".warc", ".warc.gz", ".wacz"))


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
    size: int = 0
    #: its payload decodes to more than the limit: listed, not imported (its digests were still checked)
    oversize: bool = False
    #: the first segment of a segmented record (WARC 1.1 §6.8): the rest is in ``continuation``
    #: records, which pdi does not join; listed, not imported
    segmented: bool = False

    def unusable(self, limit: int) -> str | None:
        """Why this record's payload cannot be used, or ``None``."""
        if self.segmented:
            return "it is a segment of a record split over several (WARC-Segment-Number), which pdi does not join"
        if self.oversize:
            return f"its payload is larger than the limit of {plural(limit, 'byte')}"
        return None


def _where(source: Source, offset: int, uri: str | None = None) -> str:
    about = f" ({uri})" if uri else ""
    return f"{source.name}: the record at offset {offset}{about}"


def _parse_date(value: str | None, source: Source, offset: int) -> datetime.datetime:
    if not value:
        raise ParseError(f"{_where(source, offset)} has no WARC-Date", rule="WARC-Date")
    try:
        parsed = datetime.datetime.fromisoformat(value.strip())
    except ValueError:
        raise ParseError(
            f"{_where(source, offset)}: WARC-Date {value!r} is not a W3C-ISO8601 date", rule="WARC-Date"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)  # WARC dates are UTC (§5.4)
    return parsed.astimezone(datetime.UTC)


def _content_type(value: str | None) -> tuple[str | None, str | None]:
    if not value:
        return None, None
    pieces = [p.strip() for p in value.split(";")]
    media = pieces[0].lower() or None
    charset = None
    for piece in pieces[1:]:
        key, _, val = piece.partition("=")
        if key.strip().lower() == "charset":
            charset = val.strip().strip('"').strip() or None
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
    except PDIError:
        raise
    except (zlib.error, ValueError, EOFError, OSError, ArchiveLoadFailed) as exc:
        raise ParseError(f"{where}: its payload cannot be decoded: {exc}", rule="payload") from None
    except Exception as exc:  # warcio's chunked and brotli decoders raise their own classes
        raise ParseError(f"{where}: its payload cannot be decoded: {type(exc).__name__}: {exc}", rule="payload") from None
    return b"".join(pieces) if keep else total


def _http_target(uri: str | None) -> bool:
    return uri is not None and uri.lower().startswith(("http://", "https://"))


@dataclass
class WarcIndex:
    """Every usable record of some WARC files, by URL (in the form URIs are compared in) and by payload digest."""

    sources: list[Source]
    entries: list[Entry] = field(default_factory=list)
    by_key: dict[str, list[Entry]] = field(default_factory=dict)
    by_digest: dict[str, list[Entry]] = field(default_factory=dict)
    records: int = 0

    def add(self, entry: Entry) -> None:
        self.entries.append(entry)
        same = self.by_key.setdefault(comparable(entry.uri), [])
        bisect.insort(same, entry, key=lambda e: e.date)
        if entry.payload_digest and entry.kind != "revisit":
            self.by_digest.setdefault(_digest_key(entry.payload_digest), []).append(entry)

    def nearest(self, url: str, when: datetime.datetime) -> Entry | None:
        """The record of ``url`` captured nearest in time to ``when`` (the earlier on a tie)."""
        same = self.by_key.get(comparable(url))
        if not same:
            return None
        return min(same, key=lambda e: (abs((e.date - when).total_seconds()), e.date > when))

    def original(self, revisit: Entry) -> Entry:
        """The record whose payload a revisit repeats (§6.7): by its payload digest, else by the URI and date it refers to."""
        candidates: list[Entry] = []
        if revisit.payload_digest:
            candidates = self.by_digest.get(_digest_key(revisit.payload_digest), [])
        if not candidates and revisit.refers_to_uri:
            candidates = [
                e for e in self.by_key.get(comparable(revisit.refers_to_uri), []) if e.kind != "revisit"
            ]
        if revisit.refers_to_uri:
            exact = [e for e in candidates if e.uri == revisit.refers_to_uri]
            if revisit.refers_to_date:
                dated = [e for e in exact if e.warc_date == revisit.refers_to_date]
                exact = dated or exact
            candidates = exact or candidates
        if not candidates:
            raise NotFoundError(
                f"{_where(self.sources[revisit.source], revisit.offset, revisit.uri)} is a revisit of a"
                " payload that is not in the file"
            )
        return candidates[0]

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
        with source.open() as fh:
            fh.seek(entry.offset)
            it = ArchiveIterator(fh)
            try:
                record = next(iter(it))
            except Exception as exc:  # any exception from warcio: see _damaged
                raise ParseError(f"{_where(source, entry.offset, entry.uri)} cannot be read again: {exc}") from None
            data = _drain(record.content_stream(), limit, _where(source, entry.offset, entry.uri), keep=True)
            it.close()
        assert isinstance(data, bytes)
        return data


    def payload_pieces(self, entry: Entry) -> Iterator[bytes]:
        """The payload of a record checked by :func:`read_index` (so within the limit), in pieces, never whole."""
        source = self.sources[entry.source]
        where = _where(source, entry.offset, entry.uri)
        with source.open() as fh:
            fh.seek(entry.offset)
            it = ArchiveIterator(fh)
            try:
                stream = next(iter(it)).content_stream()
                while chunk := stream.read(_CHUNK):
                    yield chunk
            except PDIError:
                raise
            except Exception as exc:  # any exception from warcio: see _damaged
                raise ParseError(f"{where} cannot be read again: {exc}", rule="WARC record") from None
            finally:
                it.close()


def _digest_key(value: str) -> str:
    """A payload digest compared with another: algorithm lower-cased (``sha1:`` vs ``SHA1:``)."""
    algo, _, digest = value.strip().partition(":")
    return f"{algo.lower()}:{digest}"


def read_index(
    sources: Sequence[Source], *, limit: int, progress: Callable[[int, int], None] | None = None
) -> WarcIndex:
    """Read every record once, checking it (pass 1): an error names the file and the record's offset.

    ``progress`` is told the bytes read of all the files, and their total.
    """
    index = WarcIndex(list(sources))
    total = sum(source.size for source in sources)
    before = 0
    for number, source in enumerate(sources):
        with source.open() as fh, contextlib.redirect_stderr(io.StringIO()):
            # warcio writes its warning about a record not followed by blank lines to
            # stderr and counts it; here the count makes it an error.
            it = ArchiveIterator(fh, check_digests=True)
            records = iter(it)
            while True:
                offset = it.offset
                try:
                    record = next(records)
                except StopIteration:
                    break
                except Exception as exc:  # any exception from warcio: see _damaged
                    raise _damaged(source, offset, exc) from None
                offset = it.offset
                errors = it.err_count
                try:
                    entry = _index_one(record, source, number, offset, limit)
                    it.read_to_end()
                except PDIError:
                    raise
                except Exception as exc:  # any exception from warcio: see _damaged
                    raise _damaged(source, offset, exc) from None
                uri = entry.uri if entry else record.rec_headers.get_header("WARC-Target-URI")
                if it.err_count > errors:
                    raise ParseError(
                        f"{_where(source, offset, uri)} is damaged: its Content-Length does not end where"
                        " the next record begins",
                        rule="WARC record",
                    )
                if getattr(record.raw_stream, "limit", 0) > 0:
                    raise ParseError(
                        f"{_where(source, offset, uri)} is damaged: the file ends before its Content-Length",
                        rule="WARC record",
                    )
                checker = getattr(record, "digest_checker", None)
                if checker is not None and checker.problems:
                    raise IntegrityError(f"{_where(source, offset, uri)} is damaged: {_digest_problem(checker.problems[0])}")
                index.records += 1
                if entry is not None:
                    index.add(entry)
                if progress is not None:
                    progress(min(before + it.offset, total), total)
        before += source.size
    return index


def _digest_problem(problem: str) -> str:
    """warcio's account of a failed digest, in the WARC's own terms."""
    for kind, field_name in (("payload", "WARC-Payload-Digest"), ("block", "WARC-Block-Digest")):
        if problem.startswith(f"{kind} digest failed"):
            declared = problem.removeprefix(f"{kind} digest failed").strip(": ")
            return f"its {kind} does not match its {field_name} {declared}"
    return problem


def _damaged(source: Source, offset: int, exc: Exception) -> ParseError:
    """A record warcio could not read. On damaged input warcio raises whatever its
    parsing hits (``ArchiveLoadFailed``, ``ValueError``, ``zlib.error``, but also
    ``AttributeError`` on a missing header or ``IndexError``), so every exception
    from it is a damaged record, named by its offset."""
    detail = str(exc) or type(exc).__name__
    return ParseError(f"{_where(source, offset)} is damaged: {detail}", rule="WARC record")


def _index_one(record: object, source: Source, number: int, offset: int, limit: int) -> Entry | None:
    """The index entry of a record an import can use (or ``None``); reads its payload through."""
    kind = record.rec_type  # type: ignore[attr-defined]
    headers = record.rec_headers  # type: ignore[attr-defined]
    uri = headers.get_header("WARC-Target-URI")
    if kind not in ("response", "resource", "revisit") or not _http_target(uri):
        return None  # warcinfo, request, metadata, dns: … records say nothing a page is made of
    assert uri is not None
    uri = uri.strip().strip("<>")  # WARC 1.0 writers put <…> around it (§5.11 erratum)
    warc_date = headers.get_header("WARC-Date") or ""
    date = _parse_date(warc_date, source, offset)
    http = record.http_headers  # type: ignore[attr-defined]
    where = _where(source, offset, uri)
    if kind == "resource":
        status = 200
        media, charset = _content_type(headers.get_header("Content-Type"))
        location = None
    elif http is None:
        if kind == "response":
            return None  # a response that is not HTTP (ftp:, gopher:)
        status, media, charset, location = 0, None, None, None
    else:
        code = (http.get_statuscode() or "").strip()
        if not code.isdigit():
            raise ParseError(f"{where} is damaged: its HTTP status line is {http.statusline!r}", rule="status-line")
        status = int(code)
        media, charset = _content_type(http.get_header("Content-Type"))
        location = http.get_header("Location")
    size = 0
    oversize = False
    segmented = headers.get_header("WARC-Segment-Number") is not None
    if kind != "revisit" and not segmented:
        try:
            counted = _drain(record.content_stream(), limit, where, keep=False)  # type: ignore[attr-defined]
        except LimitError:
            oversize = True  # the rest is read raw by read_to_end, so its digests are still checked
        else:
            assert isinstance(counted, int)
            size = counted
    return Entry(
        source=number,
        offset=offset,
        kind=kind,
        uri=uri,
        date=date,
        warc_date=warc_date.strip(),
        record_id=(headers.get_header("WARC-Record-ID") or "").strip(),
        status=status,
        media_type=media,
        charset=charset,
        location=location,
        payload_digest=headers.get_header("WARC-Payload-Digest"),
        refers_to_uri=(headers.get_header("WARC-Refers-To-Target-URI") or "").strip("<> ") or None,
        refers_to_date=(headers.get_header("WARC-Refers-To-Date") or "").strip() or None,
        size=size,
        oversize=oversize,
        segmented=segmented,
    )


# --- planning ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One thing an import deposits: a page (``parts`` are the records it uses) or a lone resource."""

    entry: Entry
    headers: Entry
    payload: Entry
    page: bool
    name: PDI
    parts: tuple[tuple[Entry, Entry], ...] = ()
    mhtml: Path | None = None  # the page's aggregate, spooled to a file
    failures: tuple[str, ...] = ()


@dataclass
class ImportPlan:
    """What an import will deposit, in the files' order, and the records it leaves out (and why)."""

    items: tuple[Item, ...]
    skipped: list[str]
    records: int


def _fetcher(
    index: WarcIndex, when: datetime.datetime, limits: Limits, used: list[tuple[Entry, Entry]]
) -> Callable[[str], Awaitable[Fetched]]:
    async def fetch(url: str) -> Fetched:
        current = url
        hops: list[Redirect] = []
        while True:
            entry = index.nearest(current, when)
            if entry is None:
                raise NotFoundError(f"{current} is not in the WARC")
            headers, payload = index.effective(entry)
            if 300 <= headers.status < 400 and headers.location:
                target = resolve(current, headers.location.strip(), strict=False)
                hops.append(Redirect(headers.status, current, target))
                if len(hops) > _MAX_REDIRECTS:
                    raise LimitError(f"more than {plural(_MAX_REDIRECTS, 'redirect')} from {url} in the WARC")
                current = target
                continue
            if headers.status != 200:
                raise NotFoundError(f"{current} was captured with HTTP status {headers.status}")
            data = index.payload(payload, limits.max_resource_bytes)
            used.append((entry, payload))
            return Fetched(
                url=url,
                final_url=current,
                status=headers.status,
                media_type=headers.media_type,
                charset=headers.charset,
                data=data,
                redirects=tuple(hops),
            )

    return fetch


def _name(series: str, entry: Entry, token: str, source: Source) -> PDI:
    try:
        built = PDI.build(series=series, date=entry.date.date(), foreign_id=entry.uri, format=token, version=1)
        if PDI.parse(str(built)).unique_id == entry.uri:
            return built
    except PDIError:
        pass
    raise ParseError(f"{_where(source, entry.offset, entry.uri)}: this URL cannot be the id of a PDI", rule="encapsulated-unique-id")


def _lone_token(media: str | None) -> str:
    if media:
        with contextlib.suppress(PDIError):
            return formats.token_for(media)
    return formats.token_for("application/octet-stream")


def plan_import(
    index: WarcIndex,
    series: str,
    spool: Path,
    *,
    limits: Limits | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ImportPlan:
    """Pass 2 without depositing: every page's aggregate built (into a file in ``spool``), every lone resource found.

    A record whose URL no PDI can hold, or a page past the limits (too many
    parts, too many bytes), is listed in ``skipped`` with its offset; a
    page's part that cannot be had is left out and listed with the page, as
    capture does.
    """
    limits = limits or Limits()
    series = _canonical_series(series)
    related = formats.token_for("multipart/related")
    skipped: list[str] = []
    pages: list[Item] = []
    candidates: list[tuple[Entry, Entry, Entry]] = []
    for entry in index.entries:
        source = index.sources[entry.source]
        try:
            headers, payload = index.effective(entry)
        except NotFoundError as exc:
            skipped.append(str(exc))
            continue
        if headers.status != 200:
            continue
        why = payload.unusable(limits.max_resource_bytes)
        if why is not None:
            skipped.append(f"{_where(source, entry.offset, entry.uri)}: {why}")
            continue
        candidates.append((entry, headers, payload))
    used: set[tuple[int, int]] = set()
    total = len(candidates)
    for done, (entry, headers, payload) in enumerate(candidates, 1):
        if headers.media_type not in PAGE_TYPES:
            continue
        source = index.sources[entry.source]
        parts: list[tuple[Entry, Entry]] = []
        fetch = _fetcher(index, entry.date, limits, parts)
        try:
            name = _name(series, entry, related, source)
            result = asyncio.run(crawl(entry.uri, fetch, limits=limits))
        except PDIError as exc:  # a URL no PDI can hold, a page past the limits: listed, not imported
            skipped.append(str(exc) if str(exc).startswith(source.name) else f"{_where(source, entry.offset, entry.uri)}: {exc}")
            continue
        own = (entry.source, entry.offset)
        rest = tuple(p for p in parts if (p[0].source, p[0].offset) != own)
        for e, p in rest:
            used.update({(e.source, e.offset), (p.source, p.offset)})
        spooled = spool / f"{len(pages)}.mht"
        spooled.write_bytes(pack_crawl(result))
        pages.append(
            Item(entry, headers, payload, True, name, rest, spooled, tuple(f.reason for f in result.failures))
        )
        if progress is not None:
            progress(done, total)
    items: list[Item] = list(pages)
    for entry, headers, payload in candidates:
        if headers.media_type in PAGE_TYPES or (entry.source, entry.offset) in used:
            continue
        source = index.sources[entry.source]
        try:
            name = _name(series, entry, _lone_token(headers.media_type), source)
        except ParseError as exc:
            skipped.append(str(exc))
            continue
        items.append(Item(entry, headers, payload, False, name))
    items.sort(key=lambda i: (i.entry.source, i.entry.offset))
    return ImportPlan(tuple(items), skipped, index.records)


# --- depositing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Imported:
    """One deposit an import made: the name, whether it was a page, and whether it was new."""

    name: PDI
    page: bool
    unchanged: bool
    url: str
    failures: tuple[str, ...] = ()


def _deposit_lone(archive: Archive, series: str, item: Item, data: Iterator[bytes]) -> Deposit:
    token = item.name.format
    assert token is not None
    charset = item.headers.charset if (item.headers.media_type or "").startswith("text/") else None
    content = Content(data, token, charset, source=item.entry.uri)
    if not archive.versions(item.name):
        return archive.deposit(series, [content], foreign_id=item.entry.uri, day=item.entry.date.date())
    return archive.add_version(item.name, [content])  # unchanged when the newest holds these bytes


def _state(archive: Archive, name: PDI, item: Item) -> None:
    """What the WARC said of the deposited record(s), as statements about ``name``.

    Not the target URI: the name's unique id is that URI. Each statement is a
    transaction of its own (a third of an import's time), so they are few.
    """
    entry, payload = item.entry, item.payload
    archive.annotate(name, "warc:date", entry.warc_date)
    if entry.record_id:
        archive.annotate(name, "warc:record-id", entry.record_id)
    digest = payload.payload_digest or entry.payload_digest
    if digest:
        archive.annotate(name, "warc:payload-digest", digest)
    if item.parts:
        lines = [f"{p.payload_digest or '-'} {e.warc_date} {e.uri}" for e, p in item.parts]
        archive.annotate(name, "warc:parts", "\n".join(lines))


def import_warc(
    archive: Archive,
    path: str | Path,
    series: str,
    *,
    limits: Limits | None = None,
    progress: Callable[[int, int], None] | None = None,
    deposited: Callable[[Imported], None] | None = None,
) -> tuple[list[Imported], ImportPlan]:
    """Import a ``.warc``, ``.warc.gz`` or ``.wacz`` file into ``series`` (both passes).

    Nothing is deposited unless every record of the file reads whole with its
    digests right and every page can be named. ``deposited`` is told of each
    deposit as it is made.
    """
    limits = limits or Limits()
    name = _canonical_series(series)
    if name not in {record.name for record in archive.series()}:
        raise NotFoundError(f"series {name} is not registered (pdi series add {name})")
    index = read_index(sources_for(path), limit=limits.max_resource_bytes, progress=progress)
    with tempfile.TemporaryDirectory(prefix="pdi-warc-") as spool:
        plan = plan_import(index, name, Path(spool), limits=limits, progress=progress)
        done = _deposit_all(archive, name, index, plan, limits, progress, deposited)
    return done, plan


def _deposit_all(
    archive: Archive,
    name: str,
    index: WarcIndex,
    plan: ImportPlan,
    limits: Limits,
    progress: Callable[[int, int], None] | None,
    deposited: Callable[[Imported], None] | None,
) -> list[Imported]:
    from pdi.capture.deposit import deposit_capture

    done: list[Imported] = []
    for number, item in enumerate(plan.items, 1):
        if item.page:
            assert item.mhtml is not None
            data = item.mhtml.read_bytes()
            result = deposit_capture(archive, name, item.entry.uri, data, day=item.entry.date.date())
        else:
            try:
                result = _deposit_lone(archive, name, item, index.payload_pieces(item.payload))
            except (IntegrityError, ParseError, UnsupportedError) as exc:
                # A server's Content-Type is often wrong (an HTML "soft 404" served as
                # image/png, a text that is not in its charset): the archive's content
                # checks refuse it, and the record is listed, not deposited.
                source = index.sources[item.entry.source]
                reason = str(exc).removeprefix(f"{item.entry.uri}: ").split("; give ", 1)[0]
                plan.skipped.append(f"{_where(source, item.entry.offset, item.entry.uri)}: {reason}")
                continue
        if not result.unchanged:
            _state(archive, result[0], item)
        got = Imported(result[0], item.page, result.unchanged, item.entry.uri, item.failures)
        done.append(got)
        if deposited is not None:
            deposited(got)
        if progress is not None:
            progress(number, len(plan.items))
    return done


# --- writing -------------------------------------------------------------------------------


def warc_date(when: datetime.datetime) -> str:
    """A WARC-Date (§5.4): UTC, to the microsecond when there is one (WARC 1.1)."""
    when = when.astimezone(datetime.UTC)
    if when.microsecond:
        return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def write_exchanges(out: BinaryIO, exchanges: Sequence[Exchange], *, software: str = "pdi") -> None:
    """Write ``exchanges`` as a gzip-per-record WARC 1.1: a ``warcinfo``, then ``response`` and ``request`` pairs.

    Each response carries its body exactly as the server sent it (content
    codings kept, as WARC §6.3 asks), with ``WARC-Payload-Digest`` and
    ``WARC-Block-Digest`` (warcio's).
    """
    writer = WARCWriter(out, gzip=True, warc_version="WARC/1.1")
    info = writer.create_warcinfo_record("", {"software": software, "format": "WARC File Format 1.1"})
    writer.write_record(info)
    for exchange in exchanges:
        date = warc_date(exchange.date)
        response_headers = StatusAndHeaders(
            f"{exchange.status} {exchange.reason}".strip(),
            [(k, v) for k, v in exchange.response_headers],
            protocol=exchange.http_version,
        )
        warc_headers = {"WARC-Date": date}
        if exchange.address:
            warc_headers["WARC-IP-Address"] = exchange.address
        response = writer.create_warc_record(
            exchange.url,
            "response",
            payload=io.BytesIO(exchange.body),
            length=len(exchange.body),
            http_headers=response_headers,
            warc_headers_dict=warc_headers,
        )
        target = _request_target(exchange.url)
        request_headers = StatusAndHeaders(
            f"{exchange.method} {target}", [(k, v) for k, v in exchange.request_headers], protocol=exchange.http_version,
            is_http_request=True,
        )
        request = writer.create_warc_record(
            exchange.url,
            "request",
            payload=io.BytesIO(b""),
            length=0,
            http_headers=request_headers,
            warc_headers_dict={
                "WARC-Date": date,
                "WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID"),
            },
        )
        writer.write_record(response)
        writer.write_record(request)


def _request_target(url: str) -> str:
    """The request-target of an origin-form request line (RFC 9112 §3.2.1): path and query."""
    rest = url.split("://", 1)[-1]
    slash = rest.find("/")
    target = rest[slash:] if slash >= 0 else "/"
    return target.split("#", 1)[0] or "/"

