"""Listing names: ``ls`` by pattern, series and date, a page at a time; full-text search and its index.

A listing is a keyset walk of the catalog (:class:`~pdi.archive.store.ListQuery`),
as cheap at the millionth name as at the first; search pages through the
full-text index made at deposit (:mod:`pdi.archive.search`,
:mod:`pdi.passages.fulltext`). What the current reader may not learn of is left out
before a page is cut.
"""

from __future__ import annotations

import dataclasses
import datetime
import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

import pdi.archive.store as values
from pdi import formats
from pdi.archive.base import ArchiveBase
from pdi.archive.naming import canonical_series, foreign_serial, key_of, parse_pdi, record_name
from pdi.archive.results import (
    Deposit,
    ElementReindexReport,
    IndexRun,
    ReindexReport,
    SearchHit,
    SearchResults,
)
from pdi.archive.store import DocumentKey, ListKey, ListQuery, RepresentationRecord
from pdi.errors import LimitError, ParseError, UnsupportedError
from pdi.identifier import PDI, Fragment

if TYPE_CHECKING:
    from pdi.archive.blobs import ChunkedReader
    from pdi.archive.store import SearchRow
    from pdi.fragments.markup.sgml import SgmlCatalog
    from pdi.passages.fulltext import Query

__all__ = ["MAX_SEARCH_LIMIT", "Listing"]

#: The most hits one page of search results may hold.
MAX_SEARCH_LIMIT = 200
#: Seconds a page of search results may take to make from the engine's rows (marks, windows, snippets): past them
#: the search is refused, saying so, rather than hold a resolver's place for evaluations (a page of common words
#: took 5 s, and two Chinese characters a minute, before the window was found in linear time: an attack,
#: 2026-11-27). A page of 200 hits of the most common words is about 2 s on a loaded machine.
SEARCH_SECONDS = 20.0
#: :attr:`SearchResults.note` of a first page that found nothing on a PostgreSQL database whose full-text search folds
#: only ASCII letters to lower case (its ``LC_CTYPE``, ``{ctype}``, is ``C``), asked a word of other letters with a
#: case: there ``école`` does not find ``École``, and nothing else said why (docs/how-to/postgresql.md).
ASCII_CASE_NOTE = (
    "this archive's PostgreSQL database (LC_CTYPE {ctype}) folds only ASCII letters to lower case, so a word of other"
    " letters is found only as its case is written (école does not find École): write it as the text does, or move"
    " the archive to a database made with a UTF-8 LC_CTYPE (createdb --template template0 --lc-ctype C.UTF-8;"
    " pdi backup DEST, then pdi restore DEST --to its URL: pdi docs how-to/postgresql)"
)
#: How many listed names' tombstones :meth:`Listing.iter_ls_withdrawn` asks for at once (one indexed read of them).
_TOMBSTONE_PAGE = 1000


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



def _page_names(day: str, serials: bool, rows: list[tuple[Any, ...]]) -> list[str]:
    """The names of a page of :meth:`~pdi.archive.catalog.SQLStore.iter_name_pages`, as ``str`` of each name prints.

    A serial name is a prefix of its series and day, its serial, its format
    and its version: one string made per row, from the row's own values.
    A foreign id is built and printed (:func:`record_name`), as it may need
    %-escapes.
    """
    date = datetime.date.fromisoformat(day)
    if not serials:
        return [str(PDI.build(series=series, date=date, foreign_id=unique_id, format=token, version=version))
                for unique_id, series, version, token in rows]
    path = f"/{day[:4]}/{day[5:7]}/{day[8:10]}/"
    affixes: dict[tuple[str, str], tuple[str, str]] = {}
    for _, _, series, _, token in rows:
        if (series, token) not in affixes:
            affixes[series, token] = (f"urn:pdi://{series}{path}", f".{formats.canonical_token(token)}.")
    if len(affixes) == 1:
        (head, middle), = affixes.values()
        return [f"{head}{serial}{middle}{version}" for serial, _, _, version, _ in rows]
    return [f"{affixes[series, token][0]}{serial}{affixes[series, token][1]}{version}"
            for serial, _, series, version, token in rows]


class ListFilters(TypedDict, total=False):
    """What :meth:`Listing.ls` and :meth:`Listing.iter_ls` narrow a listing by, and where a page starts."""

    series: str | None
    year: int | None
    month: int | None
    day: int | None
    limit: int | None
    offset: int
    after: PDI | str | None

class Listing(ArchiveBase):
    """List names (``ls``), search the full text, and make its index again."""

    def search_case_folding(self) -> tuple[str, bool] | None:
        """Whether this archive's full-text search folds letters beyond ASCII to lower case, where that depends on
        its database: a PostgreSQL catalog's ``LC_CTYPE`` and whether its parser folds ``École`` to ``école`` (one
        whose character type is ``C`` folds only ASCII letters). ``None`` where the store folds every letter alike
        (SQLite's FTS5)."""
        store = self.store
        if store.dialect != "postgresql":
            return None
        from pdi.archive.postgres.search import PostgresSearch

        return store.case_folding() if isinstance(store, PostgresSearch) else None

    def search(
        self,
        query: str,
        *,
        series: str | None = None,
        limit: int = 20,
        after: str | None = None,
    ) -> SearchResults:
        """The passages holding every word of ``query``, best first, each named as a ``char`` fragment.

        ``query`` is the reader's words (:func:`pdi.passages.fulltext.parse_query`:
        ``"…"`` a phrase, no operators; a query without words is a
        :class:`~pdi.errors.ParseError`). Words are matched as the store's
        engine folds and stems them (SQLite FTS5: Porter; PostgreSQL:
        English). A hit is one passage (about :data:`pdi.passages.fulltext.PASSAGE_CHARS`
        characters) of one name: its ``name`` is ``NAME#char=a,b``, the
        shortest stretch of the passage holding a match of every phrase;
        ``matches`` each matched word's own range. A page is ``limit`` hits
        after the cursor ``after`` (the ``next`` of the page before: how many
        matched passages came before it, so a deposit between two pages may shift a hit
        by a page; never a catalog number or a score, which would count what
        the reader may not see). A passage matched only in its tail (the
        next passage's first words, :attr:`pdi.passages.fulltext.Passage.tail`) is
        no hit: the next passage is, and the page reads on past it.
        """
        import time

        from pdi.archive.store import search_skip
        from pdi.passages.fulltext import parse_query, phrase_words
        from pdi.passages.hits import index_words

        parsed = self._searchable(parse_query(query))
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise LimitError(f"a page of search results holds 1 to {MAX_SEARCH_LIMIT} hits, not {limit!r}")
        name = None
        if series is not None and series != "":
            name = canonical_series(series)
            self._require_series(name)
        skip = search_skip(after) if after else 0
        deadline = time.monotonic() + SEARCH_SECONDS
        too_long = (f"the search {query[:80]!r} took more than {SEARCH_SECONDS:g} s to show its hits:"
                    " ask fewer hits a page (limit), or rarer words")
        hits: list[SearchHit] = []
        # a phrase's words (a Chinese word's characters), marked one by one: one match
        words = [phrase_words(phrase) for phrase in parsed.phrases]
        spelled = [index_words(phrase) for phrase in parsed.phrases]
        joins = max(words) > 1
        place = skip  # the passages (rows) read so far: a passage whose every match is in its tail is no hit
        following: str | None = None
        while True:
            want = limit - len(hits) + 1  # one more than the page: whether there is a next one
            try:
                rows = self.store.search(parsed.phrases, series=name, limit=want, skip=place,
                                         access=self._search_access(), deadline=deadline)
            except TimeoutError as exc:
                raise LimitError(too_long) from exc
            for row in rows:
                if time.monotonic() > deadline:
                    raise LimitError(too_long)
                place += 1
                hit = self._hit(row, words, spelled, joins, place)
                if hit is None:
                    continue
                if len(hits) == limit:  # a hit after the page: the next page starts after the page's last
                    following = hits[-1].cursor
                    break
                hits.append(hit)
            if following is not None or len(rows) < want:
                break
        pending = self.store.pending_index(name, self._search_access())
        note = None
        if not hits and not skip and any(ch > "\x7f" and ch.lower() != ch.upper() for ch in parsed.text):
            ctype, folds = self.store.folds_case_beyond_ascii()
            note = None if folds else ASCII_CASE_NOTE.format(ctype=ctype)
        return SearchResults(parsed, tuple(hits), following, pending, note)

    @staticmethod
    def _hit(
        row: SearchRow, words: list[int], spelled: list[list[str]], joins: bool, place: int
    ) -> SearchHit | None:
        """The hit a passage the engine matched makes: the shortest stretch holding a match of every phrase (one
        phrase: its first match) that starts in the passage's own text; ``None`` where none does (every match is in
        its tail, the next passage's first words, which that passage's own hit names)."""
        from pdi.passages.fulltext import Passage
        from pdi.passages.hits import joint, marked, smallest_window, snippet

        # SQLite marks each match whole, PostgreSQL word by word: only its marks are joined into matches
        joining = joins and not row.whole
        stems = dict(row.stems) if row.stems else None
        text, marks = marked(row.marked, phrases=joining, most=max(words), spelled=spelled, stems=stems)
        own = joint(row.marked)
        groups = ([marks] if len(row.each) == 1 else
                  [marked(each, phrases=joining, most=n, spelled=[one], overlapping=True, stems=stems)[1]
                   for each, n, one in zip(row.each, words, spelled, strict=True)])
        # one phrase: its first match; several: the shortest stretch with a match of each
        if len(groups) == 1 and marks:
            first = marks[0] if own is None or marks[0][0] < own else None
        else:
            first = smallest_window(groups, own)
        if first is None and own is not None:
            return None  # its matches are the next passage's
        window = first or (0, len(text))
        if own is not None:  # the matches in its tail but those of its window are the next passage's
            marks = tuple(m for m in marks if m[0] < own or (window[0] <= m[0] and m[1] <= window[1]))
        passage = Passage(row.passage.start, text, row.passage.runs)
        start, end = passage.document_range(*window) if window[1] > window[0] else (passage.start,) * 2
        shown, shown_marks = snippet(text, marks, window)
        return SearchHit(
            name=record_name(row.record, fragment=Fragment("char", (start, end))),
            record=row.record,
            start=start,
            end=end,
            snippet=shown,
            marks=shown_marks,
            matches=tuple(passage.document_range(a, b) for a, b in marks),
            score=row.score,
            cursor=str(place),
        )

    def _searchable(self, parsed: Query) -> Query:
        """``parsed`` without the phrases the store's index reads no word of (PostgreSQL's English stop words), which
        its engine passes over; a :class:`~pdi.errors.ParseError` naming the first when they are all such.

        A phrase found nowhere to be marked made a hit's window the whole passage; a query of stop words alone
        found nothing on PostgreSQL, where SQLite's FTS5, which keeps every word, finds them."""
        from pdi.passages.fulltext import Query

        dropped = set(self.store.unsearchable(parsed.phrases))
        if not dropped:
            return parsed
        if len(dropped) == len(parsed.phrases):
            at = min(parsed.offsets)
            word = next(p[0] for p, o in zip(parsed.phrases, parsed.offsets, strict=True) if o == at)
            raise ParseError(
                f"{word!r} at character {at} of the query is a stop word, which this archive's index (PostgreSQL's"
                " English configuration) leaves out, and so is every other word of the query: add a rarer word",
                text=parsed.text, offset=at, rule="query",
            )
        kept = [i for i in range(len(parsed.phrases)) if i not in dropped]
        return Query(tuple(parsed.phrases[i] for i in kept), parsed.text, tuple(parsed.offsets[i] for i in kept))

    def pending_index(self, *, series: str | None = None) -> int:
        """How many names the reader may search have text not yet indexed (queued for :meth:`index_queued`)."""
        name = None
        if series is not None and series != "":
            name = canonical_series(series)
            self._require_series(name)
        return self.store.pending_index(name, self._search_access())

    def index_pending_of(self, record: RepresentationRecord) -> bool:
        """Whether a stored representation's text is still queued for the indexer: deposited, resolvable, not yet searched."""
        return self.store.index_pending_of(record.sha256, record.media_type, record.charset)

    def queued_indexes(self) -> list[tuple[str, str, str, int, int, str | None]]:
        """The indexer's queue, oldest first: sha256, media type, charset, size, attempts, the last error."""
        return self.store.queued_indexes()

    def index_queued(
        self,
        *,
        limit: int | None = None,
        worker: str | None = None,
        lease: float | None = None,
        progress: Callable[[tuple[str, str, str]], None] | None = None,
    ) -> IndexRun:
        """Drain the indexer's queue: make the passages deposits left to it (:func:`pdi.archive.search.drain`).

        ``worker`` names this worker's leases (default: host, process and a
        random part); ``lease`` how long one lasts (seconds). Safe to run in
        several processes at once, on SQLite or PostgreSQL.
        """
        import os
        import secrets
        import socket

        from pdi.archive.search import LEASE_SECONDS, drain

        who = worker or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        return drain(self.store, who, self.now, limit=limit, lease=LEASE_SECONDS if lease is None else lease,
                     progress=progress)

    def reindex(
        self, *, series: str | None = None, progress: Callable[[int, int], None] | None = None
    ) -> ReindexReport:
        """Make the full-text index again from the stored octets (of the names in ``series``, if given),
        and read into the thread index every e-mail message it lacks.

        One write transaction: a failure leaves the index as it was. Every
        blob is read once by verified chunks; ``progress`` is told how many
        blobs of how many are done.
        """
        name = None
        if series is not None:
            name = canonical_series(series)
            self._require_series(name)
        sources, passages, notes = self.store.rebuild_search_index(name, progress)
        self.store.refill_message_heads()  # and the e-mail messages the thread index lacks (any series)
        return ReindexReport(sources, passages, tuple(notes))

    def reindex_elements(
        self, *, series: str | None = None, progress: Callable[[int], None] | None = None
    ) -> ElementReindexReport:
        """Make anew, as this pdi reads them, the element indexes of XML and SGML octets and the indexes of videos
        that an earlier reading made (:func:`pdi.fragments.markup.index.made_by_an_earlier_reading`,
        :func:`pdi.fragments.video.made_by_an_earlier_reading`: a video read again by ffprobe, its duration as a
        browser plays it), and keep a first parse of each SGML
        document that has none (OpenSP's ``onsgmls`` was missing where it was deposited, or it was imported): of
        the names in ``series``, if given.

        Only those index rows change: each is read from its verified octets
        and written in its own transaction, so a run stopped midway keeps
        what it made and the next goes on with the rest; a run with nothing
        left to make writes nothing. One that cannot be made now (its octets
        missing or damaged, past a parser's bounds, or SGML where ``onsgmls``
        is missing) is left as it was and reported. An SGML document's DTD is
        looked for as its kept parse was made: an earlier reading's, made before
        archives had an SGML folder, with the machine's catalogs alone; a first
        parse with the archive's own SGML folder first (:mod:`pdi.archive.sgml_dtds`),
        as a deposit now reads it, and kept from then on. ``progress`` is told how
        many were looked at so far.
        """
        from pdi.archive.sgml_dtds import sgml_catalog_of

        name = None
        if series is not None:
            name = canonical_series(series)
            self._require_series(name)
        rewritten = videos = 0
        left: list[tuple[str, str, str]] = []
        sgml_catalog = sgml_catalog_of(self.store.location)  # a first SGML parse: the archive's DTDs first
        earlier = ((source, False) for source in self.store.earlier_fragment_indexes(name))
        # a mirrored series' parses are its origin's or none: kept by pdi mirror sync, checked against the origin's
        mirrored = sorted({one.series for one in self.store.list_mirrors(None) if one.role == "origin"})

        def first_parses() -> Iterator[tuple[tuple[str, str, str], bool]]:
            for sha256, media_type, charset, of_mirror in self.store.unparsed_sgml(name, mirrored=mirrored):
                if of_mirror:
                    left.append((sha256, media_type, "of a mirrored series: its parse is kept by pdi mirror sync,"
                                 " only if it is its origin's"))
                else:
                    yield (sha256, media_type, charset), True

        first = first_parses()
        for seen, ((sha256, media_type, charset), unparsed) in enumerate(itertools.chain(earlier, first), 1):
            # an earlier reading's SGML was parsed before archives had an SGML folder: not with it now
            index, why = self._made_index(sha256, media_type, charset, sgml_catalog if unparsed else None)
            if index is None:
                left.append((sha256, media_type, why))
            elif unparsed and self.store.keep_first_element_index(sha256, media_type, charset, index):
                rewritten += 1
            elif not unparsed and self.store.replace_earlier_fragment_index(sha256, media_type, charset, index):
                rewritten += 1
                videos += media_type.startswith("video/")
            if progress is not None:
                progress(seen)
        return ElementReindexReport(rewritten - videos, tuple(left), videos)

    def keep_brought_parse(self, record: RepresentationRecord, *, carried: bytes | None = None,
                           origin_sha256: str | None = None) -> str | None:
        """Keep the parse of an SGML document an import or a mirror's sync brought (its element index), as a
        deposit keeps one, so that its ``#elt=`` is answered at once; ``None`` when one is kept (now, or before),
        or the document needs none (not SGML, purged, past :data:`~pdi.fragments.markup.bounds.MAX_SGML_OCTETS`),
        else why none is kept (its ``elt`` refused, as before, until ``pdi reindex --elements`` keeps one).

        ``carried``: the parse the archive it came from kept (a pdi export's element index, or the one a mirror's
        origin serves), checked to be one of its octets
        (:meth:`~pdi.fragments.markup.index.ElementIndex.check_made_for`; an :class:`~pdi.errors.IntegrityError`
        if not) and kept as it is, never made here. Else the document is parsed here, with the archive's own SGML
        folder first, as a deposit parses it. With ``origin_sha256`` (the SHA-256 of its origin's kept element
        index, which the origin signed: a mirror), a parse is kept only if it is byte for byte the origin's, so
        that a mirror never answers a name otherwise than its origin: one made here that is not is not kept, and
        ``carried`` whose SHA-256 is not that one is an :class:`~pdi.errors.IntegrityError` (nothing kept). Written
        in a transaction of its own, its index row alone; one kept meanwhile is never replaced, but for a kept one
        that is not the origin's, which the origin's (made here, or ``carried``) replaces.
        """
        import hashlib

        from pdi.fragments.markup import markup_kind
        from pdi.fragments.markup.bounds import MAX_SGML_OCTETS
        from pdi.fragments.markup.index import MAGIC

        if markup_kind(record.media_type) != "sgml" or record.purged is not None or record.size > MAX_SGML_OCTETS:
            return None
        kept = self.store.fragment_index(record.sha256, record.media_type, record.charset)
        charset = record.charset or ""
        not_the_origins: str | None = None  # the SHA-256 of a kept parse that is not the origin's
        if kept is not None and kept[:4] == MAGIC:
            kept_sha256 = hashlib.sha256(kept).hexdigest()
            if origin_sha256 is None or kept_sha256 == origin_sha256:
                return None
            if carried is None:
                return self._not_the_origins(record, charset, kept_sha256, origin_sha256)
            not_the_origins = kept_sha256
        if carried is not None:
            if origin_sha256 is not None and (brought := hashlib.sha256(carried).hexdigest()) != origin_sha256:
                from pdi.errors import IntegrityError

                raise IntegrityError(f"the element index brought with {record_name(record)} hashes to {brought}, not"
                                     f" to {origin_sha256}, the SHA-256 its origin signed: not kept")
            self._check_carried_parse(record, carried)
            if not_the_origins is not None:
                self.store.replace_element_index(record.sha256, record.media_type, charset, not_the_origins, carried)
            else:
                self.store.keep_first_element_index(record.sha256, record.media_type, charset, carried)
            return None
        from pdi.archive.sgml_dtds import sgml_catalog_of

        index, why = self._made_index(record.sha256, record.media_type, charset, sgml_catalog_of(self.store.location))
        if index is None:
            return why
        if origin_sha256 is not None and hashlib.sha256(index).hexdigest() != origin_sha256:
            return ("its parse here is not its origin's (the origin found another DTD, or none: add the one it"
                    " parsed it with, pdi sgml add, and sync again)")
        self.store.keep_first_element_index(record.sha256, record.media_type, charset, index)
        return None

    def _not_the_origins(self, record: RepresentationRecord, charset: str, kept_sha256: str,
                         origin_sha256: str) -> str | None:
        """A mirror's kept parse of ``record`` that is not its origin's (SHA-256 ``kept_sha256``, the origin's
        ``origin_sha256``: made here by ``pdi reindex --elements`` with other DTDs, or by an earlier pdi, or
        changed): parsed again here, and put in its place if that parse is the origin's; else taken away, so that
        this archive refuses the name's ``#elt=`` rather than answer it otherwise than its origin (``None``: the
        origin's is kept now; else why not)."""
        import hashlib

        from pdi.archive.sgml_dtds import sgml_catalog_of

        index, why = self._made_index(record.sha256, record.media_type, charset, sgml_catalog_of(self.store.location))
        if index is not None and hashlib.sha256(index).hexdigest() == origin_sha256:
            self.store.replace_element_index(record.sha256, record.media_type, charset, kept_sha256, index)
            return None
        self.store.replace_element_index(record.sha256, record.media_type, charset, kept_sha256, None)
        made = ("its parse here is not its origin's either (add the DTD the origin parsed it with, pdi sgml add,"
                " and sync again)" if index is not None else why)
        return f"the parse kept here was not its origin's, and is taken away: {made}"

    def _check_carried_parse(self, record: RepresentationRecord, carried: bytes) -> None:
        """An :class:`~pdi.errors.IntegrityError` unless ``carried`` is an element index of this pdi's reading of
        SGML made of ``record``'s octets (read by verified chunks)."""
        from pdi.errors import IntegrityError
        from pdi.fragments.markup.bounds import max_sgml_index_octets
        from pdi.fragments.markup.index import VERSION, ElementIndex, made_by_an_earlier_reading
        from pdi.fragments.sealed import sealed_version

        name = record_name(record)
        try:
            if len(carried) > (most := max_sgml_index_octets(record.size)):  # what pdi makes of it is never larger
                raise IntegrityError(f"it is {len(carried):,} octets, more than the {most:,} of any element index of"
                                     f" a document of {record.size:,} octets")
            index = ElementIndex.from_bytes(carried)
            if made_by_an_earlier_reading(carried):
                raise IntegrityError(f"it was made by an earlier reading (version {sealed_version(carried)},"
                                     f" not {VERSION})")
            if index.kind != "sgml":
                raise IntegrityError(f"it is of {index.kind}, not SGML")
            reader = self.store.open_blob(record.sha256, name=str(name))
            if reader is None:
                raise IntegrityError("its octets are missing from the blob store")
            with reader:
                octets = b"".join(reader.chunks())
            index.check_made_for(octets, record.media_type, record.charset)
        except IntegrityError as exc:
            raise IntegrityError(f"the element index brought with {name} is not one of its octets: {exc}") from exc

    def _made_index(self, sha256: str, media_type: str, charset: str, sgml_catalog: SgmlCatalog | None,
                    ) -> tuple[bytes | None, str]:
        """The element index this pdi makes of the octets ``sha256`` (read by verified chunks, as a deposit reads
        them; SGML's DTDs looked for in ``sgml_catalog`` first, if given), or a video's index (read by ffprobe from
        a checked file, as a deposit reads it), or ``None`` and why none is made."""
        from pdi.archive.content import ELEMENT_INDEX_SECONDS
        from pdi.errors import IntegrityError
        from pdi.fragments import build_index
        from pdi.fragments.markup.index import MAGIC, VERSION
        from pdi.fragments.sealed import sealed_version

        index: bytes | None = None
        try:
            reader = self.store.open_blob(sha256, name=sha256)
            if reader is None:
                return None, "its octets are missing from the blob store"
            if media_type.startswith("video/"):
                return self._made_video_index(reader, media_type)
            with reader:
                index = build_index(reader.chunks(), media_type=media_type, charset=charset or None,
                                    seconds=ELEMENT_INDEX_SECONDS, sgml_catalog=sgml_catalog)
        except (IntegrityError, LimitError, ParseError, UnsupportedError) as exc:  # a store that fails: raised
            return None, str(exc)
        if index is None or index[:4] != MAGIC or sealed_version(index) != VERSION:
            return None, "no element index is made of it now (is OpenSP's onsgmls installed?)"
        return index, ""

    @staticmethod
    def _made_video_index(reader: ChunkedReader, media_type: str) -> tuple[bytes | None, str]:
        """A video's index as ffprobe reads the verified octets of ``reader`` now (:func:`pdi.archive.video.probe`),
        or ``None`` and why none is made (ffprobe missing, or the file not read as a video of ``media_type``)."""
        import pdi.archive.video as video
        from pdi.archive.blobs import checked_file
        from pdi.errors import IntegrityError

        try:
            with reader, checked_file(reader) as (path, descriptors):
                return video.probe(path, media_type, pass_fds=descriptors).to_bytes(), ""
        except (IntegrityError, LimitError, ParseError, UnsupportedError) as exc:
            return None, str(exc)

    def ls(self, pattern: PDI | str | None = None, **filters: Unpack[ListFilters]) -> list[PDI]:
        """Versioned PDIs in date, then serial order: by pattern, series and/or date; paginated.

        A page is ``limit`` names, after the name ``after`` (a keyset
        cursor: the last name of the page before, as cheap at the millionth
        name as at the first) and then ``offset`` more (which costs reading
        them). A series (given, or named by the pattern) that is not
        registered is a :class:`~pdi.errors.NotFoundError`, not an empty
        list: a mistyped series name must not look like an empty series.
        :meth:`iter_ls` yields the same names one at a time; the filters
        (:class:`ListFilters`) are its keyword arguments.
        """
        return list(self.iter_ls(pattern, **filters))

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
        query = self._list_query(
            pattern, series=series, year=year, month=month, day=day, limit=limit, offset=offset, after=after,
        )
        return self._names(query)

    def iter_ls_withdrawn(
        self, pattern: PDI | str | None = None, *, state: str | None = None, series: str | None = None,
        limit: int | None = None, offset: int = 0, after: PDI | str | None = None,
    ) -> Iterator[tuple[PDI, values.WithdrawalRecord | None]]:
        """Each name :meth:`iter_ls` yields with the tombstone it resolves to (``None``: in service): the first
        withdrawal over its version, its own or its whole document's, ``purged`` if any of them purged the octets,
        as :meth:`~pdi.archive.store.Store.withdrawal` gives it. What ``pdi ls --long`` prints.

        ``state`` ``"live"`` or ``"withdrawn"`` keeps names of that state
        only, and then ``offset`` and ``limit`` count the names kept (the
        walk reads past those left out); ``after`` is a cursor as ever. The
        tombstones of a page of names are read at once, by index
        (:meth:`withdrawals_of`), so a listing's cost grows with its names,
        not with every withdrawal ever made.
        """
        if state not in (None, "live", "withdrawn"):
            raise ValueError(f"state {state!r}: 'live', 'withdrawn' or None")
        if state is None:
            names = self.iter_ls(pattern, series=series, offset=offset, limit=limit, after=after)
        else:  # checked now, before the first name is read
            names = self.iter_ls(pattern, series=series, after=after)
        marked = self._with_tombstones(names)
        if state is None:
            return marked
        kept = ((name, tomb) for name, tomb in marked if (tomb is not None) is (state == "withdrawn"))
        return itertools.islice(kept, offset, None if limit is None else offset + limit)

    def _with_tombstones(self, names: Iterator[PDI]) -> Iterator[tuple[PDI, values.WithdrawalRecord | None]]:
        """:meth:`iter_ls_withdrawn`'s names, each with its tombstone, a page of names' tombstones read at once."""
        while page := list(itertools.islice(names, _TOMBSTONE_PAGE)):
            over: dict[tuple[DocumentKey, int | None], list[values.WithdrawalRecord]] = {}
            for tomb in sorted(self.store.withdrawals_of([key_of(name) for name in page]), key=lambda t: t.id):
                over.setdefault((tomb.key, tomb.version), []).append(tomb)
            for name in page:
                key = key_of(name)
                tombs = sorted(over.get((key, name.version), []) + over.get((key, None), []), key=lambda t: t.id)
                yield name, (dataclasses.replace(tombs[0], purged=any(t.purged for t in tombs)) if tombs else None)

    def iter_names(self, pattern: PDI | str | None = None, **filters: Unpack[ListFilters]) -> Iterator[str]:
        """The names :meth:`iter_ls` yields, as their canonical text (``str`` of each), made from the catalog's rows.

        What ``pdi ls`` prints: no :class:`~pdi.identifier.PDI` and no record
        is made per name (a serial name is its day's prefix, its serial, its
        format and its version put together). Same filters, same order, same
        keyset paging, and the arguments are checked before the first row is read.
        For the owner, a whole listing's names are cut from the catalog's text of
        them (:meth:`iter_name_text`), one split a page.
        """
        query = self._list_query(pattern, **filters)
        if query is None:
            return iter(())
        return self._catalog_names(query) if self._whole(query) else self._name_texts(query)

    def iter_name_text(self, pattern: PDI | str | None = None, **filters: Unpack[ListFilters]) -> Iterator[str]:
        """The names :meth:`iter_names` yields, each followed by a newline, a page of them to a string: what ``pdi
        ls`` prints, byte for byte.

        For the owner, a whole listing's serial names are made and joined by
        the catalog's own statement, no Python object made per name
        (:meth:`~pdi.archive.catalog.listing.ListingPart.iter_name_text`); a
        page cut by ``offset`` or ``limit``, what a reader may not see left
        out, and names with a foreign id are made from the rows as
        :meth:`iter_names` makes them. Same filters, order and keyset paging;
        the arguments are checked before the first row is read.
        """
        query = self._list_query(pattern, **filters)
        if query is None:
            return iter(())
        return self._catalog_texts(query) if self._whole(query) else self._page_texts(query)

    def _whole(self, query: ListQuery) -> bool:
        """Whether the catalog's own text of the names serves ``query``: the owner's listing, neither cut by
        ``offset`` nor ``limit`` nor missing what the current reader may not see."""
        return not (query.offset or query.limit is not None or self._unlisted())

    def iter_records(self, series: str | None = None, *, page: int | None = None) -> Iterator[RepresentationRecord]:
        """The catalog record of every representation (of ``series`` only, if given), in :meth:`iter_ls`'s order.

        The owner's view, for exports (:mod:`pdi.interop.wacz`): read a page
        (``page`` records, else the catalog's default) at a time, with no reader's guards and no check of
        ``series`` (canonical).
        """
        query = ListQuery() if series is None else ListQuery(series=series)
        return self.store.iter_representations(query) if page is None else self.store.iter_representations(query, page=page)

    def count_records(self, series: str | None = None, *, ids: tuple[str, ...] = (), page: int | None = None) -> int:
        """How many records :meth:`iter_records` gives (with ``ids``, only those of documents whose foreign id
        starts, in any case, with one of them), counted from the listing's pages of names (``page`` names at a
        time, else the catalog's default): no record is made, and inside a :meth:`snapshot` it is the count of the walk that follows (an
        export's progress)."""
        query = ListQuery() if series is None else ListQuery(series=series)
        wanted = tuple(i.lower() for i in ids)
        count = 0
        pages = self.store.iter_name_pages(query) if page is None else self.store.iter_name_pages(query, page=page)
        for _, serials, rows in pages:
            if not wanted:
                count += len(rows)
            elif not serials:
                count += sum(1 for row in rows if str(row[0]).lower().startswith(wanted))
        return count

    def held_the_same_day(self, deposit: Deposit) -> PDI | None:
        """Another name of the same series and GMT day that already keeps octets ``deposit`` just minted a name
        for (the first in listing order), or ``None``: the owner's view, for ``pdi add`` to warn that the same
        file was given a second permanent name. One indexed look-up; ``None`` for a deposit that minted nothing.
        """
        if not deposit.sha256s or deposit.unchanged or deposit.replayed:
            return None
        found = self.store.held_the_same_day(key_of(deposit[0]), deposit.sha256s)
        return None if found is None else record_name(found)

    def _names(self, query: ListQuery | None) -> Iterator[PDI]:
        if query is None:
            return
        # A serial name is copied from one built per (series, day, format) with its serial and
        # version changed: the constructor, not PDI.build, which checks and parses every name.
        templates: dict[tuple[str, str, str], PDI] = {}
        for day, serials, rows in self._listed_pages(query):
            date = datetime.date.fromisoformat(day)
            if not serials:
                for unique_id, series, version, token in rows:
                    yield PDI.build(series=series, date=date, foreign_id=unique_id, format=token, version=version)
                continue
            for number, _, series, version, token in rows:
                template = templates.get((series, day, token))
                if template is None:
                    template = templates[series, day, token] = PDI.build(
                        series=series, date=date, serial=number, format=token, version=version)
                serial = str(number)
                yield PDI(
                    series=template.series, year=template.year, month=template.month, day=template.day,
                    unique_id=serial, unique_id_raw=serial, serial=number, format=template.format, version=version,
                )

    def _name_texts(self, query: ListQuery) -> Iterator[str]:
        for day, serials, rows in self._listed_pages(query):
            yield from _page_names(day, serials, rows)

    def _page_texts(self, query: ListQuery) -> Iterator[str]:
        for day, serials, rows in self._listed_pages(query):
            if rows:
                yield "\n".join(_page_names(day, serials, rows)) + "\n"

    def _catalog_names(self, query: ListQuery) -> Iterator[str]:
        for made in self.store.iter_name_text(query):
            if isinstance(made, str):  # a page of serial names, each ended by a newline (no name holds one)
                yield from made[:-1].split("\n")
            else:
                yield from _page_names(*made)

    def _catalog_texts(self, query: ListQuery) -> Iterator[str]:
        for made in self.store.iter_name_text(query):
            if isinstance(made, str):
                yield made
            else:  # names with a foreign id, %-escaped by the grammar
                day, serials, rows = made
                yield "\n".join(_page_names(day, serials, rows)) + "\n"

    def _listed_pages(self, query: ListQuery) -> Iterator[values.NamePage]:
        """The catalog's pages of names ``query`` selects, without those the current reader may not learn of."""
        hidden = self._unlisted()
        if not hidden:
            yield from self.store.iter_name_pages(query)
            return
        # names the reader may not learn of are left out before the page is counted
        def listed(pages: Iterable[values.NamePage]) -> Iterator[values.NamePage]:
            for day, serials, rows in pages:
                date = datetime.date.fromisoformat(day)
                yield day, serials, [r for r in rows if hidden.version_listed(DocumentKey(r[-3], date, r[-4]), r[-2])]

        pages = self.store.iter_name_pages(dataclasses.replace(query, offset=0, limit=None))
        yield from values.window(listed(pages), query.offset, query.limit)

    def _list_query(self, pattern: PDI | str | None, **filters: Unpack[ListFilters]) -> ListQuery | None:
        """The store's query for :meth:`iter_ls` (``None``: nothing can match)."""
        series, year, month, day = filters.get("series"), filters.get("year"), filters.get("month"), filters.get("day")
        limit, offset, after = filters.get("limit"), filters.get("offset", 0), filters.get("after")
        if limit is not None and limit < 0:
            raise LimitError("limit must not be negative")
        if offset < 0:
            raise LimitError("offset must not be negative")
        cursor = None if after is None else _list_key(parse_pdi(after))
        query = ListQuery(
            series=canonical_series(series) if series is not None else None, year=year, month=month, day=day,
            limit=limit, offset=offset, after=cursor,
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
            if foreign_serial(parsed):
                return None
            if series is not None and canonical_series(series) != wanted.series.lower():
                raise UnsupportedError("the pattern names another series than --series")
            query = ListQuery(
                series=wanted.series.lower(), year=wanted.year, month=wanted.month, day=wanted.day,
                unique_id=wanted.unique_id, format=wanted.format, version=wanted.version,
                limit=limit, offset=offset, after=cursor,
            )
        return query
