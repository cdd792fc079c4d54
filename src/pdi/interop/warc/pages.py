"""Pages and lone resources of an indexed WARC, planned and deposited (pass 2 of an import).

Each page's parts are gathered by the capture path's crawl
(:func:`pdi.capture.crawl.crawl`) with a fetch that answers from the index,
packed by :func:`pdi.capture.crawl.pack_crawl` and deposited by
:func:`pdi.capture.deposit.deposit_capture` on the GMT day of the page's
``WARC-Date`` (WARC 1.1 §5.4); a record no page uses is deposited as itself.

An import does only what makes its names resolvable and checkable: every
deposit's full-text passages are left to the background indexer's queue
(:attr:`pdi.archive.Content.index_later`), as a large deposit's are. Indexing
them in the deposit was two thirds of the deposits' time (issue 24,
``bench/bench_warc.py``); until ``pdi index`` (or ``pdi serve --indexer``) has
drained the queue, a search says their text is pending.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import os
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pdi import formats
from pdi._wording import plural
from pdi._workdirs import WorkFolder
from pdi.archive import Archive, Content, Deposit, canonical_series
from pdi.capture.crawl import Crawl, crawl, pack_crawl, run_at_once
from pdi.capture.values import Fetched, Limits, Redirect
from pdi.errors import (
    ImmutabilityError,
    IntegrityError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    SeriesNotRegisteredError,
    UnsupportedError,
    WithdrawnError,
)
from pdi.identifier import PDI
from pdi.interop.warc.bounded import ReadLimits
from pdi.interop.warc.entries import _where
from pdi.interop.warc.records import PAGE_TYPES, Entry, WarcIndex, nearest_of, read_index
from pdi.interop.warc.sources import Source, sources_for, spool_error
from pdi.mhtml.resolve import comparable
from pdi.uri import resolve

__all__ = ["ImportPlan", "Imported", "Item", "import_warc", "plan_import"]

_MAX_REDIRECTS = 10
#: The octets of pages a plan holds in memory as crawled (packed as MHTML when deposited, on the staging
#: threads, while other blobs are written and synced: packing was two fifths of pass 2); past it, each page
#: is packed at once and spooled to a file.
PLAN_IN_MEMORY = 32 << 20


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
    mhtml: Crawl | Path | None = None  # the page: its crawl (packed when deposited), or its MHTML spooled to a file
    failures: tuple[str, ...] = ()

    def foreign_id(self) -> str:
        """The id its name holds: its record's URL (:func:`_name`: or the same URL as the export it came from
        spelt it)."""
        uri = self.name.read_back().unique_id
        assert uri is not None
        return uri

    def aggregate(self) -> bytes:
        """A page's aggregate (MHTML), from memory or its spool file."""
        assert self.mhtml is not None, "a lone resource has no aggregate"
        return self.mhtml.read_bytes() if isinstance(self.mhtml, Path) else pack_crawl(self.mhtml)

    def size(self) -> int:
        """About how many octets the page's aggregate holds (its parts' octets, before they are encoded)."""
        assert self.mhtml is not None, "a lone resource has no aggregate"
        if isinstance(self.mhtml, Path):
            return self.mhtml.stat().st_size
        return _crawled(self.mhtml)

    def pieces(self) -> Iterator[bytes]:
        """The page's aggregate, a piece at a time: packed only when first asked for (on a staging thread)."""
        assert self.mhtml is not None, "a lone resource has no aggregate"
        if isinstance(self.mhtml, Path):
            yield from _file_pieces(self.mhtml)
        else:
            yield pack_crawl(self.mhtml)


def _crawled(result: Crawl) -> int:
    return sum(len(f.data) for f in (result.root, *result.resources))


@dataclass
class ImportPlan:
    """What an import will deposit, in the files' order, and the records it leaves out (and why)."""

    items: tuple[Item, ...]
    skipped: list[str]
    records: int
    #: with ``partial``: each file's damage, where its reading stopped (the whole records before it are imported)
    dropped: tuple[str, ...] = ()


def _fetcher(
    index: WarcIndex, when: datetime.datetime, limits: Limits, used: list[tuple[Entry, Entry]],
    own: dict[str, list[Entry]] | None = None, lost: int = 0,
) -> Callable[[str], Awaitable[Fetched]]:
    """The crawl's fetch of one page: any record of a URL, the nearest in time to ``when``; or, with ``own`` (the
    page's records, :meth:`WarcIndex.own_parts`), one of those alone (``lost``: how many of them its ``PDI-Parts``
    counts that the file does not hold, a damaged copy read with ``--partial``)."""
    async def fetch(url: str) -> Fetched:
        current = url
        hops: list[Redirect] = []
        while True:
            if own is None:
                entry = index.nearest(current, when)
                if entry is None:
                    raise NotFoundError(f"{current} is not in the WARC")
            else:
                entry = nearest_of(own.get(comparable(current)), when)
                if entry is None and lost:
                    raise NotFoundError(f"{current} is not in the WARC, which lacks {plural(lost, 'record')} of the"
                                        " page's parts that its export wrote (a damaged copy)")
                if entry is None:
                    raise NotFoundError(f"{current} is not among the parts the page was exported with")
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
    for uri in (_exported_id(entry), entry.uri):
        if uri is None:
            continue
        try:
            built = PDI.build(series=series, date=entry.date.date(), foreign_id=uri, format=token, version=1)
            if built.read_back().unique_id == uri:
                return built
        except PDIError:
            pass
    raise ParseError(f"{_where(source, entry.offset, entry.uri)}: this URL cannot be the id of a PDI", rule="encapsulated-unique-id")


def _exported_id(entry: Entry) -> str | None:
    """The id of the name a record of pdi's export was written from (its ``PDI`` field) when it is the record's URL
    spelt otherwise (an IRI, ``http://exämple.org/ä.html``, whose record is at ``http://ex%C3%A4mple.org/…``), so
    that the name comes back as it was; else ``None``. A stranger's ``PDI`` field can choose only among spellings
    of the record's own URL."""
    if entry.pdi is None:
        return None
    try:
        uri = PDI.parse(entry.pdi).read_back().unique_id
    except (PDIError, ValueError):
        return None
    if uri is None or uri == entry.uri or comparable(uri) != comparable(entry.uri):
        return None
    return uri


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
    """Pass 2 without depositing: every page crawled (held in memory up to :data:`PLAN_IN_MEMORY`, then packed
    into a file in ``spool``), every lone resource found.

    A record whose URL no PDI can hold, or a page past the limits (too many
    parts, too many bytes), is listed in ``skipped`` with its offset; a
    page's part that cannot be had is left out and listed with the page, as
    capture does.
    """
    limits = limits or Limits()
    series = canonical_series(series)
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
    #: the records pdi's export wrote as a planned page's parts (WARC-Concurrent-To its root), the crawl reaching
    #: them or not: neither pages nor documents of their own (an iframe's HTML, an image a --browser capture's
    #: script loaded), as they were not in the archive exported
    owned: set[tuple[int, int]] = set()
    total = len(candidates)
    held = 0  # octets of crawled pages kept in memory
    for done, (entry, headers, payload) in enumerate(candidates, 1):
        if headers.media_type not in PAGE_TYPES or (entry.source, entry.offset) in owned:
            continue
        source = index.sources[entry.source]
        parts: list[tuple[Entry, Entry]] = []
        records = index.own_parts(entry)
        lost = 0 if records is None else max(0, (entry.parts or 0) + 1 - sum(map(len, records.values())))
        fetch = _fetcher(index, entry.date, limits, parts, records, lost)
        try:
            name = _name(series, entry, related, source)
            # the fetch answers from the index, never waiting: the crawl runs at once, its parts one after another
            result = run_at_once(crawl(entry.uri, fetch, limits=limits, one_at_a_time=True))
        except PDIError as exc:  # a URL no PDI can hold, a page past the limits: listed, not imported
            skipped.append(str(exc) if str(exc).startswith(source.name) else f"{_where(source, entry.offset, entry.uri)}: {exc}")
            continue
        own = (entry.source, entry.offset)
        rest = tuple(p for p in parts if (p[0].source, p[0].offset) != own)
        for e, p in rest:
            used.update({(e.source, e.offset), (p.source, p.offset)})
        if records is not None:
            owned.update((e.source, e.offset) for same in records.values() for e in same if e is not entry)
        kept: Crawl | Path = result
        if held + _crawled(result) > PLAN_IN_MEMORY:
            kept = spool / f"{len(pages)}.mht"
            packed = pack_crawl(result)
            try:
                kept.write_bytes(packed)
            except OSError as exc:
                with contextlib.suppress(OSError):  # (a folder made read-only refuses this too: the first error is said)
                    kept.unlink(missing_ok=True)
                raise spool_error(spool, exc, f"page {len(pages) + 1}, {entry.uri}, packed") from exc
        else:
            held += _crawled(result)
        pages.append(
            Item(entry, headers, payload, True, name, rest, kept, tuple(f.reason for f in result.failures))
        )
        if progress is not None:
            progress(done, total)
    items: list[Item] = list(pages)
    for entry, headers, payload in candidates:
        if headers.media_type in PAGE_TYPES or (entry.source, entry.offset) in used or (entry.source, entry.offset) in owned:
            continue
        source = index.sources[entry.source]
        try:
            name = _name(series, entry, _lone_token(headers.media_type), source)
        except ParseError as exc:
            skipped.append(str(exc))
            continue
        items.append(Item(entry, headers, payload, False, name))
    items.sort(key=lambda i: (i.entry.source, i.entry.offset))
    other = index.left_out.said(index.sources)
    if other is not None:
        skipped.append(other)
    return ImportPlan(tuple(items), skipped, index.records, tuple(index.dropped))


# --- depositing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Imported:
    """One deposit an import made: the name, whether it was a page, and whether it was new."""

    name: PDI
    page: bool
    unchanged: bool
    url: str
    failures: tuple[str, ...] = ()
    #: what the deposit warned of (a page whose withdrawn version's octets were purged, or past the last
    #: WITHDRAWN_COMPARED withdrawn versions, not compared with it)
    warnings: tuple[str, ...] = ()


def _deposit_lone(archive: Archive, series: str, item: Item, data: Iterator[bytes]) -> Deposit:
    token = item.name.format
    assert token is not None
    charset = item.headers.charset if (item.headers.media_type or "").startswith("text/") else None
    # a PDF PDFium cannot open is kept as the server sent it (no text layer), not refused
    content = Content(data, token, charset, source=item.entry.uri, keep_unreadable=True, index_later=True)
    if not archive.versions(item.name):
        return archive.deposit(series, [content], foreign_id=item.foreign_id(), day=item.entry.date.date())
    # unchanged when the newest holds these bytes; refused (WithdrawnError) when the document was withdrawn whole
    return archive.add_version(item.name, [content])


def _held_already(archive: Archive, index: WarcIndex, item: Item, aggregate: bytes | None) -> PDI | None:
    """The name of the version of ``item``'s document that is this very record already, or ``None``.

    That is a version holding the record's bytes (its payload as deposited,
    or a page's aggregate as :func:`deposit_capture` would store it) that
    the archive's own export dates by the record's ``WARC-Date``: the
    archive's export imported again, any version of it, not only the
    newest (a page captured twice on a day holds both captures). The same
    bytes captured at another time are a capture of their own, and are
    deposited as before (a new version unless the newest holds them). A
    page with parts is held only by its aggregate: a version holding its
    root alone (an ``.html`` deposit of the same URL and time) lacks its
    images and styles, and the page is a new version.
    """
    digests = _digests(index, item, aggregate)
    return (_dated_in(archive, item.name, digests, item.entry.warc_date) or _same_record(archive, item)
            or _exported_whole(archive, item, aggregate))


def _exported_whole(archive: Archive, item: Item, aggregate: bytes | None) -> PDI | None:
    """The version of ``item``'s page that pdi's export of this archive wrote it from, when that version holds every
    part this reading found, byte for byte; else ``None``.

    A page of pdi's export (its root's ``PDI`` and ``PDI-Parts``) names the version it was written from. Imported
    back into the archive it came from, a reading that finds less than that version holds (a damaged copy read
    with ``--partial``; a ``--browser`` capture, whose ``cid:`` style sheets and script-loaded images its crawl
    cannot reach) is that version, not a poorer next one (found in review, 2026-11-30). A reading with any part
    the version lacks, or other bytes, is deposited as before; a name this archive does not hold, or that its
    export dates otherwise, is none of this.
    """
    entry = item.entry
    if aggregate is None or entry.pdi is None or entry.parts is None:
        return None
    from pdi.interop.wacz import exported_as
    from pdi.mhtml.plain import page_parts

    try:
        named = PDI.parse(entry.pdi)
        if (named.version is None or _lower(named.series) != _lower(item.name.series) or named.format != item.name.format
                or (named.date, named.unique_id) != (item.name.date, item.name.unique_id)):
            return None
        held = archive.get(named)
        if exported_as(archive, held.record)[1] != entry.warc_date:
            return None
        found, kept = page_parts(aggregate), page_parts(held.data)
    except PDIError:  # not held here (another archive's export, a withdrawn name), or not read as MHTML
        return None
    parts = {(p.location or p.content_location, p.content_type, p.data) for p in kept}
    if all((p.location or p.content_location, p.content_type, p.data) in parts for p in found):
        return named
    return None


def _digests(index: WarcIndex, item: Item, aggregate: bytes | None) -> list[str]:
    """The SHA-256s a version holding ``item`` would have: of its payload (unless it is a page with parts, which
    its payload alone does not hold), and of a page's aggregate."""
    digests = []
    if aggregate is None or not item.parts:
        digest = hashlib.sha256()
        for piece in index.payload_pieces(item.payload):
            digest.update(piece)
        digests.append(digest.hexdigest())
    if aggregate is not None:
        digests.append(hashlib.sha256(aggregate).hexdigest())
    return digests


def _dated_in(archive: Archive, document: PDI, digests: list[str], warc_date: str) -> PDI | None:
    """The version of ``document``'s document holding one of ``digests`` that the archive's own export dates
    ``warc_date``, or ``None``."""
    from pdi.interop.wacz import exported_as

    for record in archive.holding(document, digests):
        name, dated = exported_as(archive, record)
        if dated == warc_date:
            return name
    return None


def _lower(series: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(label.lower() for label in series)


def _exported_from(archive: Archive, index: WarcIndex, item: Item) -> PDI | None:
    """The version ``item``'s record names in its ``PDI`` field (this archive's own export) when it is of another
    document than the one its ``WARC-Date`` mints in, this archive holds it with these bytes and its export
    dates it so: a version deposited on a later day than its document was minted (``pdi version``), whose
    record is dated when it was deposited; else ``None``, and the record is read as any other."""
    if item.entry.pdi is None:
        return None
    try:
        named = PDI.parse(item.entry.pdi)
    except PDIError:
        return None
    if (named.version is None or _lower(named.series) != _lower(item.name.series)
            or (named.date, named.unique_id) == (item.name.date, item.name.unique_id)):
        return None
    try:
        held = _dated_in(archive, named, _digests(index, item, item.aggregate() if item.page else None),
                         item.entry.warc_date)
    except PDIError:  # not held here (another archive's export), or not readable
        return None
    return held if held is not None and held.version == named.version else None


def _same_record(archive: Archive, item: Item) -> PDI | None:
    """The version of ``item``'s page that an import made from this very record (its ``WARC-Record-ID`` and
    ``WARC-Date`` stated) and that holds every part this reading of it found, or ``None``.

    A record is one capture (WARC 1.1 §5.2: its id is globally unique): read again, from a copy that lost some
    of its parts (``--partial`` of a file cut short) or from the same file, it is not another capture, and a
    version without those parts would make the page's generic name resolve to less than it held. A reading that
    finds a part the version lacks (a whole copy after a damaged one) is deposited as the next version."""
    if not item.page or not item.entry.record_id:
        return None
    parts = set(_part_lines(item))
    for version in reversed(archive.versions(item.name)):
        name = item.name.with_version(version)
        try:
            said = archive.meta(name)
        except NotFoundError:  # a version without the page's format (its root alone, .html): not this record
            continue
        if (said.get("warc:record-id") == item.entry.record_id and said.get("warc:date") == item.entry.warc_date
                and parts <= set(said.get("warc:parts", "").splitlines())):
            return name
    return None


def _part_lines(item: Item) -> list[str]:
    """The ``warc:parts`` statement's lines of a page: each part's payload digest, date and URL."""
    return [f"{p.payload_digest or '-'} {e.warc_date} {e.uri}" for e, p in item.parts]


def _statements(item: Item) -> list[tuple[str, str]]:
    """What the WARC said of the deposited record(s), as statements about the name.

    Not the target URI: the name's unique id is that URI.
    """
    entry, payload = item.entry, item.payload
    statements = [("warc:date", entry.warc_date)]
    if entry.record_id:
        statements.append(("warc:record-id", entry.record_id))
    digest = payload.payload_digest or entry.payload_digest
    if digest:
        statements.append(("warc:payload-digest", digest))
    if item.parts:
        statements.append(("warc:parts", "\n".join(_part_lines(item))))
    return statements


def _state(archive: Archive, name: PDI, item: Item) -> None:
    """:func:`_statements` about ``name``, in one transaction (each in its own was a third of an import's time)."""
    archive.annotate_all(name, _statements(item))


def import_warc(
    archive: Archive,
    path: str | Path,
    series: str,
    *,
    limits: Limits | None = None,
    progress: Callable[[int, int], None] | None = None,
    deposited: Callable[[Imported], None] | None = None,
    bounds: ReadLimits | None = None,
    partial: bool = False,
) -> tuple[list[Imported], ImportPlan]:
    """Import a ``.warc``, ``.warc.gz`` or ``.wacz`` file into ``series`` (both passes).

    Nothing is deposited unless every record of the file reads whole with its
    digests right, within ``bounds`` (:mod:`pdi.interop.warc.bounded`), and
    every page can be named. With ``partial``, a file damaged or cut short
    gives the whole records before the damage, and the plan's ``dropped``
    says what was left out. ``deposited`` is told of each deposit as it is
    made.
    """
    limits = limits or Limits()
    name = canonical_series(series)
    if name not in {record.name for record in archive.series()}:
        raise SeriesNotRegisteredError(name)
    bounds = bounds or ReadLimits()
    try:
        work = WorkFolder("pdi-warc-")  # one a killed import left there: removed (pdi._workdirs)
    except OSError as exc:  # (gettempdir's own "no usable temporary directory" too: the folder named from TMPDIR)
        tmp = tempfile.tempdir or os.environ.get("TMPDIR") or "/tmp"
        raise spool_error(Path(tmp) / "pdi-warc-", exc, "its folder") from exc
    with work as spool:
        index = read_index(
            sources_for(path, max_expansion=bounds.max_expansion, spool=Path(spool)), limit=limits.max_resource_bytes,
            progress=progress, bounds=bounds, partial=partial,
        )
        plan = plan_import(index, name, Path(spool), limits=limits, progress=progress)
        done = _deposit_all(archive, name, index, plan, limits, progress, deposited)
    return done, plan


#: A batch of new names (:meth:`Archive.deposit_dated`, one transaction) holds at most this many items...
BATCH_ITEMS = 64
#: ... and at most about this many octets (what stays staged, with its passages, until the batch commits).
BATCH_BYTES = 16 << 20


def _file_pieces(path: Path, size: int = 1 << 20) -> Iterator[bytes]:
    with path.open("rb") as fh:
        while piece := fh.read(size):
            yield piece


def _refusal(index: WarcIndex, item: Item, exc: PDIError) -> str:
    """A record the archive's content checks refused, as ``plan.skipped`` lists it."""
    source = index.sources[item.entry.source]
    reason = str(exc).removeprefix(f"{item.entry.uri}: ").split("; give ", 1)[0]
    return f"{_where(source, item.entry.offset, item.entry.uri)}: {reason}"


def _withdrawn(archive: Archive, index: WarcIndex, item: Item, held: PDI) -> str | None:
    """The refusal of ``item`` (as ``plan.skipped`` lists it) when ``held``, the version that holds its octets, was
    withdrawn (by its own name or its document's): it answers with its tombstone, so it holds them for no one, and
    the record is not answered with its name (nor deposited again under it); worded as a deposit's refusal of the
    very octets (:meth:`Archive.withdrawn_holder`); else ``None``."""
    refused = archive.withdrawn_holder(held)
    return None if refused is None else _refusal(index, item, refused)


def _deposit_all(
    archive: Archive,
    name: str,
    index: WarcIndex,
    plan: ImportPlan,
    limits: Limits,
    progress: Callable[[int, int], None] | None,
    deposited: Callable[[Imported], None] | None,
) -> list[Imported]:
    """Deposit the plan's items in order: new names in batches, each one transaction with its names' statements.

    A name not yet in the archive joins the current batch (:data:`BATCH_ITEMS`,
    :data:`BATCH_BYTES`), deposited with its ``warc:`` statements by
    :meth:`Archive.deposit_dated` in one transaction (one commit and its
    fsyncs for the whole batch, not three or four a page). A name already
    there (a page captured again on its day, an import run again) ends the
    batch and is deposited alone, as before: a new version when the page
    changed, else ``unchanged``, and its statements completed if an earlier
    import stopped before making them. ``deposited`` and ``progress`` are
    told of a batch's items once it is committed.

    A batch that fails (a concurrent writer minted one of its names, a disk
    error, a kill) leaves nothing of itself: no name, no statement, no blob
    a name holds. The batches before it stay deposited (they were
    acknowledged through ``deposited``), and the error stops the import;
    importing the file again finds them unchanged and deposits the rest. A
    record the content checks refuse (a lone resource whose bytes contradict
    its type) is listed in ``plan.skipped`` and the rest of its batch is
    deposited.
    """
    from pdi.archive import BatchItem
    from pdi.capture.deposit import deposit_capture

    related = formats.token_for("multipart/related")
    done: list[Imported] = []
    pending: list[tuple[int, Item, BatchItem]] = []
    keys: set[tuple[datetime.date | None, str]] = set()  # the documents the pending batch mints
    # the documents of the items ahead not minted when looked up, a batch's worth in one read (each item's
    # versions were a read of its own: issue 24); one a batch has minted, or tried to, is asked again
    absent: set[tuple[datetime.date | None, str]] = set()
    asked = 0  # the items looked up so far
    size = 0

    def report(number: int, got: Imported) -> None:
        done.append(got)
        if deposited is not None:
            deposited(got)
        if progress is not None:
            progress(number, len(plan.items))

    def flush() -> None:
        nonlocal size
        if not pending:
            return
        batch = list(pending)
        pending.clear()
        absent.difference_update(keys)
        keys.clear()
        size = 0

        def refused(at: int, exc: PDIError) -> None:
            plan.skipped.append(_refusal(index, batch[at][1], exc))

        answers = archive.deposit_dated(name, [b for _, _, b in batch], refused=refused)
        for (number, item, _), answer in zip(batch, answers, strict=True):
            if answer is not None:
                report(number, Imported(answer[0], item.page, False, item.entry.uri, item.failures))

    for number, item in enumerate(plan.items, 1):
        if number > asked:
            ahead = [i.name for i in plan.items[number - 1 : number - 1 + BATCH_ITEMS]]
            absent = {(n.date, n.unique_id) for n in archive.unminted(ahead)}
            asked = number - 1 + len(ahead)
        key = (item.name.date, item.name.unique_id)
        if item.entry.pdi is not None and (exported := _exported_from(archive, index, item)) is not None:
            flush()  # the version named may be of a document a pending batch touches
            if (gone := _withdrawn(archive, index, item, exported)) is not None:
                plan.skipped.append(gone)
                continue
            report(number, Imported(exported, item.page, True, item.entry.uri, item.failures))
            continue
        if key not in keys and (key in absent or not archive.versions(item.name)):
            if item.page:
                content = Content(item.pieces(), related, index_later=True)
                octets = item.size()
            else:
                token = item.name.format
                assert token is not None
                charset = item.headers.charset if (item.headers.media_type or "").startswith("text/") else None
                content = Content(index.payload_pieces(item.payload), token, charset, source=item.entry.uri,
                                  keep_unreadable=True,  # a PDF PDFium cannot open: kept as served
                                  index_later=True)
                octets = item.payload.size
            if pending and (len(pending) >= BATCH_ITEMS or size + octets > BATCH_BYTES):
                flush()
            pending.append((number, item, BatchItem([content], item.foreign_id(), item.entry.date.date(),
                                                    _statements(item))))
            keys.add(key)
            size += octets
            continue
        flush()  # in the file's order: a name already there after the batch that may have minted it
        data = item.aggregate() if item.page else None
        held = _held_already(archive, index, item, data)
        if held is not None and (gone := _withdrawn(archive, index, item, held)) is not None:
            plan.skipped.append(gone)  # a withdrawn name holds its bytes for no one: never answered as holding them
            continue
        if held is not None:  # bytes the document holds already (its own export imported again): nothing changes
            if held.format == item.name.format and "warc:date" not in archive.meta(held):
                _state(archive, held, item)  # an earlier import of the same file stopped before its statements
            report(number, Imported(held, item.page, True, item.entry.uri, item.failures))
            continue
        warned: list[str] = []
        try:
            if data is not None:
                result = deposit_capture(archive, name, item.foreign_id(), data, day=item.entry.date.date(),
                                         index_later=True, warn=warned.append)
            else:
                result = _deposit_lone(archive, name, item, index.payload_pieces(item.payload))
        except (ImmutabilityError, WithdrawnError) as exc:
            # The octets a withdrawn latest version holds, or a document withdrawn whole: the record is
            # refused, naming the withdrawal, and the rest of the file is imported.
            plan.skipped.append(_refusal(index, item, exc))
            continue
        except (IntegrityError, ParseError, UnsupportedError) as exc:
            if data is not None:
                raise
            # A server's Content-Type is often wrong (an HTML "soft 404" served as
            # image/png, a text that is not in its charset): the archive's content
            # checks refuse it, and the record is listed, not deposited.
            plan.skipped.append(_refusal(index, item, exc))
            continue
        # Here the statements follow the deposit in a transaction of their own: an import
        # stopped between the two leaves a name without them, which the next import
        # of the same file (finding the name unchanged) completes.
        if not result.unchanged or "warc:date" not in archive.meta(result[0]):
            _state(archive, result[0], item)
        report(number, Imported(result[0], item.page, result.unchanged, item.entry.uri, item.failures,
                                tuple(warned)))
    flush()
    return done
