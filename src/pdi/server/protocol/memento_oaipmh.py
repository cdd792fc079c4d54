"""Memento TimeGates and TimeMaps (RFC 7089) and the OAI-PMH 2.0 endpoint, over one archive (an edge).

Memento, in the routes pywb uses:

* ``/timegate/<URI-R>`` — a TimeGate (RFC 7089 §4.1, pattern 2.2): ``302``
  to the memento nearest the ``Accept-Datetime`` (the latest without one),
  ``Vary: accept-datetime, Authorization, Cookie``, and a ``Link`` with the
  ``original``, the ``timemap`` and the ``first``, ``last``, ``prev`` and
  ``next`` mementos around the one chosen; ``400`` for an ``Accept-Datetime``
  that is not an RFC 1123 date (§2.1.1), ``404`` when the archive holds no
  memento of it.
* ``/timemap/link/<URI-R>`` — its TimeMap (§5.1.1), ``application/link-format``,
  in pages (RFC 7089 leaves their size to the server; Memento's practice of
  paged TimeMaps): each page holds the mementos of at most
  :data:`TIMEMAP_PAGE` captures (documents) of a URL, or that many versions
  of a document, in time order; ``self`` carries the page's own ``from``
  and ``until``, and ``rel="next"`` and ``rel="prev"`` (``type=
  "application/link-format"``), in the body and in the ``Link`` field (RFC
  8288), name the pages after and before it,
  ``/timemap/link/page/<cursor>/<URI-R>`` (a cursor is opaque: where the
  page starts in the catalog's order of captures, by day then series, so
  any page costs the same however many there are). A URL's
  captures are in the order of the days their names carry, which is the
  order of their times but for a version added on a later day.

Both list only the mementos their reader may read: kept a minute by any
cache when read anonymously; read with a token, ``private, no-store``; and
varying by who reads (both by :class:`pdi.server.http.readers.Readers`).

``<URI-R>`` is either a URL the archive holds captures of (documents whose
encapsulated unique id is that URL, on any day, in any series: every
version of each is a memento, found with the catalog query of the
``/captures`` page), written after the route as it is, query included, and
compared exactly as it was captured; or a document, by its generic name
(``/timegate/urn:pdi://…/id``) or the N2R URL of that name, whose versions
are its mementos (the original resource is then the generic name's N2R
URL); a name with a version, a format or a fragment names a memento, not
the resource, and is refused (``400``), not read as its generic name. A version's memento is the N2R of its first format in token order
(a capture has one, ``related``), at its deposit time, or for a capture
imported from a WARC at its ``WARC-Date`` (:meth:`Mementos.captured`). Withdrawn versions and documents are no
mementos: they are left out of TimeMaps and never chosen by a TimeGate.

The N2R answer of a versioned name is itself a memento (§4.1.2): it
carries ``Memento-Datetime`` (that time) and a ``Link``
with ``original``, ``timegate``, ``timemap`` and the version's memento
(:meth:`Mementos.headers`), which do not change as later versions
come, so the answer stays immutable. URLs these answers write (as every
N2R URL of the resolver) hold a PDI's ``%2E`` as ``%252E`` (:func:`sturdy`).

OAI-PMH 2.0 (:class:`OAIRoutes`): ``/oai`` by GET or POST (§3.1.1), the
six verbs of §4 over the catalog's documents, a set per series (§2.7.1),
``oai_dc`` records (§6) and stateless resumption tokens (§3.5); the
protocol itself (requests, tokens, XML) is :mod:`pdi.interop.oaipmh`.
"""

from __future__ import annotations

import dataclasses
import datetime
import itertools
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pdi.archive import Archive, DocumentChange, DocumentPage, Generic, GenericVersion, Resolved
from pdi.archive.store import DocumentKey
from pdi.errors import LimitError, NotFoundError, ParseError, PDIError, UnsupportedError
from pdi.identifier import PDI
from pdi.interop import oaipmh
from pdi.interop.memento import (
    LINK_FORMAT,
    Memento,
    http_datetime,
    memento_links,
    parse_http_datetime,
    parse_timestamp,
    select,
    timegate_links,
    timemap,
    timemap_pages,
)
from pdi.server.http.bodies import read_body
from pdi.server.http.preconditions import refuse_if_match
from pdi.server.http.problems import Problem
from pdi.server.process.limits import TIMEMAP_PAGE, WorkLimits
from pdi.server.protocol.rfc2169 import n2r_url, rfc2169_query, sturdy, urn_from_query

#: The statement a WARC import leaves about each capture: its record's WARC-Date (:mod:`pdi.interop.warc`).
WARC_DATE = "warc:date"
#: The most mementos one TimeGate, or one TimeMap page, reads: past it, a problem says so (``400``, limit exceeded).
MAX_MEMENTOS = 100_000
#: Documents read from the catalog at once while gathering the captures of a URL.
_CAPTURES_PAGE = 500
#: How long a shared cache may keep a TimeGate's or a TimeMap's answer: a new capture changes it.
MEMENTO_MAX_AGE = 60
#: The problem type of a ``410`` for a resource every memento of which was withdrawn (described on the ``/api`` page:
#: :data:`pdi.server.pages.api_docs.OTHER_PROBLEM_TYPES`).
MEMENTOS_WITHDRAWN = "/api#problem-mementos-withdrawn"
#: An absolute URI with an authority (``http://…``): a unique id that is a captured URL.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_PDI_PREFIX = re.compile(r"(?:urn:)?pdi:", re.IGNORECASE)
#: A %-escape of an ASCII octet (what one encoded segment's URI-R is decoded of: :func:`_target`).
_ASCII_ESCAPE = re.compile("%([0-7][0-9A-Fa-f])")
#: An absolute URI whose scheme's colon is %-encoded (RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
_ENCODED_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*%3A", re.IGNORECASE)


def is_url(unique_id: str) -> bool:
    """Whether a unique id is a URL (an encapsulated id with a scheme and an authority): a capture's."""
    return _URL.match(unique_id) is not None and not _PDI_PREFIX.match(unique_id)


def generic_of(name: PDI) -> PDI:
    """The generic name (the document) of a versioned name."""
    return dataclasses.replace(name, format=None, version=None, version_wildcard=False,
                               fragment=None, citation=None).canonical()


@dataclass(frozen=True)
class Subject:
    """An original resource (URI-R) and its mementos, oldest first.

    ``target`` is what follows ``/timegate/`` and ``/timemap/link/`` for it:
    the URL, or the document's generic name.
    """

    original: str
    target: str
    mementos: tuple[Memento, ...]

    def timegate(self, base: str) -> str:
        return f"{base.rstrip('/')}/timegate/{self._path()}"

    def timemap(self, base: str, cursor: str | None = None) -> str:
        """The TimeMap's URL: its first page, or the page at ``cursor``."""
        page = f"page/{cursor}/" if cursor else ""
        return f"{base.rstrip('/')}/timemap/link/{page}{self._path()}"

    def _path(self) -> str:
        """The target as it follows a route: a generic name as in an N2R query (:func:`sturdy`), a URL as it is."""
        if _PDI_PREFIX.match(self.target):
            return sturdy(rfc2169_query(self.target))
        return self.target


class Mementos:
    """The mementos the catalog holds of a URL or a document, without withdrawn ones."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive

    def withdrawn(self, documents: Iterable[Generic]) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str, int]]]:
        """Which of ``documents`` are withdrawn whole, and which of their versions, by (series, day, unique id).

        Only these documents' tombstones are read, each found by index
        (:meth:`~pdi.archive.Archive.withdrawals_of`): an answer about one
        name costs the same in a catalog of ten million names with many
        withdrawals as in a small one.
        """
        keys = []
        for doc in documents:
            date = doc.pdi.date
            assert date is not None  # a document the catalog holds
            keys.append(DocumentKey(doc.pdi.series_name.lower(), date, doc.pdi.unique_id))
        gone: set[tuple[str, str, str]] = set()
        versions: set[tuple[str, str, str, int]] = set()
        for tomb in self.archive.withdrawals_of(keys):
            key = (tomb.key.series, tomb.key.day.isoformat(), tomb.key.unique_id)
            if tomb.version is None:
                gone.add(key)
            else:
                versions.add((*key, tomb.version))
        return gone, versions

    def dated(self, documents: Iterable[Generic], *, most: int | None = None,
              in_service: bool = False) -> tuple[list[tuple[datetime.datetime, PDI]], int]:
        """Every version of ``documents`` not withdrawn, as (when, the name of its first format), oldest first; and how many were withdrawn.

        The one list of a URL's captures by time: the TimeGate's and
        TimeMap's mementos, and the replay banner's earlier and later capture
        (:mod:`pdi.server.pages.replay_frame`). More than ``most`` is a
        :class:`~pdi.errors.LimitError`. The documents' withdrawals are read
        a page of documents at a time, as the documents come; not at all when
        they are ``in_service`` (as :meth:`~pdi.archive.Archive.locate` gives
        a generic name's versions: its withdrawn ones left out already).
        """
        most = MAX_MEMENTOS if most is None else most
        found: list[tuple[datetime.datetime, PDI]] = []
        withdrawn = 0
        pages = iter(documents)
        while page := list(itertools.islice(pages, _CAPTURES_PAGE)):
            gone_documents, gone_versions = (set(), set()) if in_service else self.withdrawn(page)
            stated = self.archive.latest_statements(
                [v.formats[0] for doc in page if _is_capture(doc.pdi) for v in doc.versions], WARC_DATE)
            for doc in page:
                date = doc.pdi.date
                assert date is not None  # a document the catalog holds
                key = (doc.pdi.series_name.lower(), date.isoformat(), doc.pdi.unique_id)
                for version in doc.versions:
                    if key in gone_documents or (*key, version.number) in gone_versions:
                        withdrawn += 1
                        continue
                    found.append((self.captured(doc.pdi, version, stated), version.formats[0]))
                    if len(found) > most:
                        raise _too_many(most)
        found.sort(key=lambda each: (each[0], str(each[1])))
        return found, withdrawn

    def _of_documents(self, documents: Iterable[Generic], base: str,
                      in_service: bool = False) -> tuple[list[Memento], int]:
        """The mementos of every version of ``documents`` not withdrawn, sorted; and how many were withdrawn."""
        dated, withdrawn = self.dated(documents, in_service=in_service)
        return sorted(Memento(when, n2r_url(base, name)) for when, name in dated), withdrawn

    def captured(self, document: PDI, version: GenericVersion, stated: Mapping[str, str] | None = None) -> datetime.datetime:
        """When a version of ``document`` (its generic name) was captured: its memento's datetime.

        A version is dated by its deposit time, but a capture of a URL
        imported from a WARC by the ``warc:date`` (its ``WARC-Date``) the
        import left, as a WACZ export dates it
        (:func:`pdi.interop.wacz.capture_time`), whichever day it was imported
        on. ``stated``: the ``warc:date`` statements of many versions, read at
        once (:meth:`~pdi.archive.Archive.latest_statements`); else this
        version's is read.
        """
        day = document.date
        if day is None or not _is_capture(document):
            return parse_timestamp(version.created_at)
        # only a capture's date needs the WACZ module (and so warcio): a first read of any other name does not
        from pdi.interop.wacz import capture_time, dated_capture

        if stated is None:
            return capture_time(self.archive, version.formats[0], day, version.created_at)
        return dated_capture(day, version.created_at, stated.get(str(version.formats[0].canonical())))[0]

    def _captures(self, url: str) -> Iterator[Generic]:
        after: str | None = None
        while True:
            page = self.archive.captures(url, after=after, limit=_CAPTURES_PAGE)
            yield from page.documents
            if page.after is None:
                return
            after = page.after

    def subject(self, target: str, base: str) -> Subject:
        """The URI-R ``target`` names (a URL, a generic name or its N2R URL) with its mementos.

        :class:`~pdi.errors.NotFoundError` when the archive holds no memento of
        it, a ``410`` problem when it held some and every one was withdrawn.
        """
        if not target:
            raise ParseError("name the original resource after the route (/timegate/ or /timemap/link/): a URL"
                             " (http://…) or a document's generic name (urn:pdi://…)", rule="URI-R")
        if _PDI_PREFIX.match(target):
            return self._document(PDI.parse(urn_from_query(target)), base)
        captures = self._captures(target)
        mementos, withdrawn = self._of_documents(captures, base)
        if not mementos and not withdrawn:
            own = _own_n2r_name(target)
            if own is not None:
                return self._document(own, base)
            raise NotFoundError(f"the archive holds no capture of {target} (the URL is compared exactly as captured)")
        return self._checked(Subject(target, target, tuple(mementos)), withdrawn)

    def _document(self, name: PDI, base: str) -> Subject:
        """The mementos of one document."""
        if name.is_pattern or name.citation is not None:
            raise UnsupportedError(f"{name} names no one document: a TimeGate is of one document")
        generic = generic_of(name)
        if name.format is not None or name.version is not None or name.version_wildcard or name.fragment is not None:
            # a version, a format or a fragment: a memento (or a part of one), not the resource
            raise ParseError(f"{name} names a memento of a document, not the document: a TimeGate or TimeMap is of"
                             f" the document, by its generic name ({generic}) or that name's N2R URL", rule="URI-R")
        found = self.archive.locate(str(generic))  # its versions in service (none left: its tombstone, 410)
        assert isinstance(found, Generic)
        mementos, withdrawn = self._of_documents(iter([found]), base, in_service=True)
        return self._checked(Subject(n2r_url(base, generic), str(generic), tuple(mementos)), withdrawn)

    @staticmethod
    def _checked(subject: Subject, withdrawn: int) -> Subject:
        if not subject.mementos:
            raise Problem(410, "every memento withdrawn", f"every memento of {subject.target} was withdrawn"
                          f" ({withdrawn})", type=MEMENTOS_WITHDRAWN, extensions={"withdrawn": withdrawn})
        return subject

    def page(self, target: str, base: str, cursor: str | None, size: int = TIMEMAP_PAGE) -> TimeMapPage:
        """One page of the TimeMap of ``target``: the first, or the one ``cursor`` names (:class:`TimeMapPage`).

        A URL's page holds the mementos of ``size`` of its captures
        (documents) in the catalog's order, read a page at a time
        (:meth:`~pdi.archive.Archive.captures`); a document's, ``size`` of its
        versions. Not found, or ``410`` when every memento was withdrawn, as
        :meth:`subject` says; a cursor that is not one this resolver wrote is
        a :class:`~pdi.errors.ParseError`.
        """
        if cursor is None and not _PDI_PREFIX.match(target):
            first = self.archive.captures(target, limit=size) if target else None
            if first is None or not first.documents:
                subject = self.subject(target, base)  # not found, or the N2R URL of a document's name
                return self._document_page(subject, None, size)
            return self._url_page(target, base, first, False, size)
        if cursor is None:
            return self._document_page(self.subject(target, base), None, size)
        direction, _, rest = cursor.partition("~")
        if direction != "after" or not rest:
            raise ParseError(f"{cursor[:80]!r} is not a TimeMap page's cursor (follow the rel=\"next\" and"
                             " rel=\"prev\" links of a TimeMap)", rule="timemap-page")
        if _PDI_PREFIX.match(target) or _own_n2r_name(target) is not None:
            if not (rest.isascii() and rest.isdigit()) or len(rest) > 12:  # '²', '①': digits to isdigit, not to int()
                raise ParseError(f"{cursor[:80]!r} is not a TimeMap page's cursor", rule="timemap-page")
            return self._document_page(self.subject(target, base), int(rest), size)
        day, _, series = rest.partition("~")
        try:
            date = datetime.date.fromisoformat(day)
        except ValueError:
            raise ParseError(f"{cursor[:80]!r} is not a TimeMap page's cursor", rule="timemap-page") from None
        try:
            found = self.archive.captures(target, after=f"urn:pdi://{series}/{date:%Y/%m/%d}/0", limit=size)
        except ParseError:
            raise ParseError(f"{cursor[:80]!r} is not a TimeMap page's cursor", rule="timemap-page") from None
        if not found.documents:
            raise NotFoundError(f"the TimeMap of {target} has no page after {cursor[:80]}")
        return self._url_page(target, base, found, True, size)

    def _url_page(self, url: str, base: str, found: DocumentPage, later_page: bool, size: int) -> TimeMapPage:
        """The page of ``found`` (a page of the URL's captures); ``later_page``: not the first.

        Its ``prev`` is the cursor of the page before, as the ``next`` of the
        page before that wrote it (or the first page's, ``""``): the capture
        just before the ``size`` captures before this page's first.
        """
        documents = found.documents
        mementos, withdrawn = self._of_documents(documents, base)
        subject = Subject(url, url, tuple(mementos))
        if not later_page and not mementos and found.after is None:
            self._checked(subject, withdrawn)  # every memento withdrawn: 410
        prev = None
        if later_page:
            before = self.archive.captures(url, before=str(documents[0].pdi), limit=size + 1).documents
            prev = _cursor(before[0].pdi) if len(before) > size else ""
        return TimeMapPage(subject, None if found.after is None else _cursor(documents[-1].pdi), prev)

    def _document_page(self, subject: Subject, after: int | None, size: int) -> TimeMapPage:
        """A page of a document's mementos (its versions, read whole: :meth:`subject`), after version ``after``."""
        numbered = [(_version_number(m.uri), m) for m in subject.mementos]
        start = 0 if after is None else next((i for i, (n, _) in enumerate(numbered) if n > after), len(numbered))
        chosen = numbered[start:start + size]
        if not chosen:
            raise NotFoundError(f"the TimeMap of {subject.target} has no page after version {after}")
        later = start + size < len(numbered)
        prev = None if start == 0 else ("" if start <= size else f"after~{numbered[start - size - 1][0]}")
        return TimeMapPage(dataclasses.replace(subject, mementos=tuple(m for _, m in chosen)),
                           f"after~{chosen[-1][0]}" if later else None, prev)

    @staticmethod
    def dated_by_deposit(located: Resolved) -> bool:
        """Whether :meth:`headers` reads nothing from the catalog for ``located``: it is no capture of a URL,
        whose memento a WARC import may have dated by a statement (:meth:`captured`)."""
        return not _is_capture(located.pdi)

    def headers(self, located: Resolved, base: str) -> dict[str, str]:
        """``Memento-Datetime`` and the memento's ``Link`` for the N2R of a versioned name (RFC 7089 §4.1.2).

        The link names the original resource, the TimeGate, the TimeMap and
        the memento itself (:func:`memento_links`), all known from the name
        and its version (:meth:`~pdi.archive.Archive.version_of`: from what
        locating the name read): no other capture is read.
        """
        version = self.archive.version_of(located)
        if self.dated_by_deposit(located):  # a document's version: its generic name is its own name's start
            own = located.pdi if located.pdi.fragment is None else located.pdi.without_fragment()
            document = str(own).rsplit(".", 2)[0]  # canonical: built from the catalog's record (no "." in an id)
            this = Memento(parse_timestamp(version.created_at), n2r_url(base, version.formats[0]))
            subject = Subject(n2r_url(base, document), document, (this,))
        else:  # a capture: the URL is the original resource
            generic = generic_of(located.pdi)
            this = Memento(self.captured(generic, version), n2r_url(base, version.formats[0]))
            subject = Subject(generic.unique_id, generic.unique_id, (this,))
        stamp = http_datetime(this.datetime)
        return {"Memento-Datetime": stamp,
                "Link": memento_links(subject.original, subject.timegate(base), subject.timemap(base), this, stamp)}


def _is_capture(document: PDI) -> bool:
    """Whether a document is a capture of a URL (its unique id the URL): one a WARC import may date."""
    return is_url(document.unique_id) and not document.is_serial


@dataclass(frozen=True)
class TimeMapPage:
    """A page of a TimeMap: its subject with the page's mementos, and the cursors of the pages after and before
    (``None``: none; ``""``: the first page, the TimeMap's own URL)."""

    subject: Subject
    next: str | None
    prev: str | None


def _cursor(document: PDI) -> str:
    """A TimeMap page's cursor: the day and series of the capture the page starts after."""
    assert document.date is not None  # a document the catalog holds
    return f"after~{document.date.isoformat()}~{document.series_name.lower()}"


def _version_number(uri: str) -> int:
    """The version number of a memento's N2R URL (``….format.N``)."""
    return int(uri.rsplit(".", 1)[1])


def _own_n2r_name(url: str) -> PDI | None:
    """The name in an N2R (or I2R) URL of a resolver (``…/uri-res/N2R?urn:pdi:…``), if ``url`` is one."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if not parts.path.endswith(("/uri-res/N2R", "/uri-res/I2R")) or not _PDI_PREFIX.match(parts.query):
        return None
    try:
        return PDI.parse(urn_from_query(parts.query))
    except ParseError:
        return None


def _too_many(most: int = MAX_MEMENTOS) -> PDIError:
    return LimitError(f"more than {most} mementos: this resolver lists at most that many")


def _target(request: Request, prefix: str) -> str:
    """The URI-R after ``prefix`` in the request's path as sent (not %-decoded), with the query.

    A URI-R sent as one %-encoded path segment (``https%3A%2F%2F…``, ``urn%3Apdi%3A…``, as
    ``encodeURIComponent`` writes it, and as an OpenAPI client sends a path parameter) is decoded once:
    with no literal ``:`` or ``/`` it can be no absolute URI as it stands, so the reading is unambiguous.
    Only escapes of ASCII are read: an escape of an octet beyond it (an IRI's ``é`` is ``%C3%A9``) stays one,
    as the URI the client would have sent unencoded holds it (RFC 3987 §3.1), never Latin-1's ``Ã©``.
    """
    raw: bytes = request.scope.get("raw_path") or request.scope["path"].encode("utf-8")
    path = raw.decode("latin-1")
    target = path[len(prefix):] if path.startswith(prefix) else str(request.path_params.get("target", ""))
    if ":" not in target and "/" not in target and _ENCODED_SCHEME.match(target):
        target = _ASCII_ESCAPE.sub(lambda escape: chr(int(escape[1], 16)), target)
    query = bytes(request.scope.get("query_string", b"")).decode("latin-1")
    return target + ("?" + query if query else "")


class MementoRoutes:
    """``/timegate/<URI-R>`` and ``/timemap/link/<URI-R>`` over one archive."""

    def __init__(self, archive: Archive, base_url: str | None = None, work: WorkLimits | None = None,
                 page: int = TIMEMAP_PAGE) -> None:
        self.mementos = Mementos(archive)
        self.base_url = base_url
        self.work = work if work is not None else WorkLimits()
        self.page = page

    def _base(self, request: Request) -> str:
        return self.base_url if self.base_url is not None else str(request.base_url)

    async def timegate(self, request: Request) -> Response:
        """RFC 7089 §4.1.1: ``302`` to the memento chosen for ``Accept-Datetime``."""
        raw = request.headers.get("accept-datetime")
        wanted = None if raw is None else parse_http_datetime(raw)
        base = self._base(request)
        return Response(status_code=302, headers=await self.work.run(self._timegate, _target(request, "/timegate/"),
                                                                     base, wanted))

    def _timegate(self, target: str, base: str, wanted: datetime.datetime | None) -> dict[str, str]:
        """:meth:`timegate`'s work, in a thread: the mementos found, the one chosen, the answer's fields."""
        subject = self.mementos.subject(target, base)
        chosen = select(subject.mementos, wanted)
        return {
            "Location": subject.mementos[chosen].uri,
            "Vary": "accept-datetime",  # and by who reads (pdi.server.http.readers)
            "Link": timegate_links(subject.original, subject.timemap(base), subject.mementos, chosen),
            "Cache-Control": f"public, max-age={MEMENTO_MAX_AGE}",  # read with a token: private (readers)
        }

    async def timemap(self, request: Request) -> Response:
        """RFC 7089 §5.1.1: the mementos of the URI-R, ``application/link-format``, a page at a time."""
        base = self._base(request)
        cursor = request.path_params.get("cursor")
        prefix = "/timemap/link/" if cursor is None else f"/timemap/link/page/{cursor}/"
        body, headers = await self.work.run(self._timemap, _target(request, prefix), base, cursor)
        return Response(body, media_type=LINK_FORMAT, headers=headers)

    def _timemap(self, target: str, base: str, cursor: str | None) -> tuple[bytes, dict[str, str]]:
        """:meth:`timemap`'s work, in a thread: the page of mementos found and written (UTF-8), and its fields."""
        page = self.mementos.page(target, base, cursor, self.page)
        subject = page.subject
        next_uri = None if page.next is None else subject.timemap(base, page.next)
        prev_uri = None if page.prev is None else subject.timemap(base, page.prev)
        body = timemap(subject.original, subject.timemap(base, cursor), subject.timegate(base), subject.mementos,
                       next_uri=next_uri, prev_uri=prev_uri)
        headers = {"Cache-Control": f"public, max-age={MEMENTO_MAX_AGE}"}
        if next_uri is not None or prev_uri is not None:  # RFC 8288 §3.3: the pages, to a client that reads headers
            headers["Link"] = ", ".join(timemap_pages(next_uri, prev_uri))
        return body.encode("utf-8"), headers

    def routes(self) -> list[Route]:
        return [
            Route("/timegate/{target:path}", self.timegate),
            Route("/timemap/link/page/{cursor}/{target:path}", self.timemap),  # before the first page's route
            Route("/timemap/link/{target:path}", self.timemap),
        ]


# --- OAI-PMH ------------------------------------------------------------------------------------
#: Records a ListRecords or ListIdentifiers page holds.
OAI_PAGE = 100
#: The largest form body a POST request may have (OAI-PMH arguments are short).
MAX_OAI_FORM = 64 << 10


#: The OAI-PMH schema's emailType (``\S+@(\S+\.)+\S+``).
_EMAIL = re.compile(r"\S+@(\S+\.)+\S+")


def check_admin_email(address: str) -> None:
    """A :class:`~pdi.errors.ParseError` unless ``address`` is one OAI-PMH's schema takes (``name@host.domain``)."""
    if not _EMAIL.fullmatch(address):
        raise ParseError(f"{address!r} is not an e-mail address OAI-PMH's Identify can give (name@host.domain)",
                         text=address, rule="adminEmail")


def _oai_identifier(generic: PDI) -> str:
    return str(generic)


#: The longest identifier a resumption token carries as it is; a longer one by its SHA-256 (the token's
#: argument is at most oaipmh.MAX_ARGUMENT characters: base64 of JSON).
_TOKEN_IDENTIFIER = 2000


def _resume_after(change: DocumentChange) -> str:
    """What a token carries of the last record of its page: its identifier, or its SHA-256, series and day."""
    identifier = _oai_identifier(change.generic.pdi)
    if len(identifier) <= _TOKEN_IDENTIFIER:
        return identifier
    import hashlib

    name = change.generic.pdi
    return (f"sha256:{hashlib.sha256(identifier.encode()).hexdigest()}@{name.series_name.lower()}/"
            f"{name.date.isoformat() if name.date else ''}")


class OAIRoutes:
    """``/oai``: the OAI-PMH 2.0 endpoint (GET and POST, §3.1.1) over one archive.

    Items are documents, identified by their generic names (``urn:pdi://…``,
    URIs as §2.4 asks); each series is a set (``setSpec`` the series' name);
    the one record of an item is ``oai_dc``, made from the statements filed
    under the document (a key naming a Dublin Core element: ``title``,
    ``creator``, ``dc:subject`` …), its names and N2R URL, its day of minting
    and its formats. Its datestamp is the latest of its deposits, statements,
    withdrawals, ends of embargoes over and changes of access that showed it
    or withheld it, so an incremental harvest (``from``) sees every change,
    and what an embargo hid once it ends or is lifted, or a series once it is
    made public. A withdrawn document is a deleted record (``deletedRecord``
    ``persistent``), and so is one the reader was shown and a change of
    access withheld later, dated then (§2.5.1). Lists come in pages of
    ``page`` records, in catalog order, with stateless resumption tokens.
    Answers are made within the resolver's ``work`` limits (a list may read
    the stamps of many documents to find those changed in a range of dates).
    A harvest shows only what its reader may read, as the archive answers
    that reader (:func:`pdi.archive.access.disclosure`): no record, header,
    deleted record or set of a private or hidden series or of an embargoed
    document it was never shown to a reader without a token for it (``idDoesNotExist`` to
    ``GetRecord`` of one), and a token names its last record, never a row
    number of the catalog.
    """

    def __init__(self, archive: Archive, base_url: str | None = None, *, work: WorkLimits | None = None,
                 admin_email: str | None = None, page: int = OAI_PAGE) -> None:
        if admin_email is not None:
            check_admin_email(admin_email)
        self.archive = archive
        self.base_url = base_url
        self.admin_email = admin_email
        self.page = page
        self.work = work if work is not None else WorkLimits()

    async def endpoint(self, request: Request) -> Response:
        """OAI-PMH 2.0: ``verb`` and its arguments in the query (GET) or a form body (POST); the answer is XML."""
        base = (self.base_url if self.base_url is not None else str(request.base_url)).rstrip("/") + "/oai"
        now = self.archive.now().astimezone(datetime.UTC).replace(microsecond=0)  # the archive's clock
        pairs: list[tuple[str, str]]
        unreadable: oaipmh.OAIError | None = None
        if request.method == "POST":
            refuse_if_match(request)  # the answer is made from the form: no representation of /oai to match
            kind = request.headers.get("content-type", "").split(";")[0].strip(" \t").lower()
            body = await read_body(request, MAX_OAI_FORM, f"an OAI-PMH request body is at most {MAX_OAI_FORM} octets")
            if body and kind != "application/x-www-form-urlencoded":
                raise Problem(415, "unsupported media type",
                              "an OAI-PMH POST carries its arguments as application/x-www-form-urlencoded")
            raw, where = body, "the form"
        else:
            raw, where = bytes(request.scope.get("query_string", b"")), "the query"
        try:
            pairs = oaipmh.form_pairs(raw, where)
        except oaipmh.OAIError as wrong:  # its arguments cannot be read: a badArgument saying where
            pairs, unreadable = [], wrong
        parsed: oaipmh.Request | None = None
        try:
            if unreadable is not None:
                raise unreadable
            parsed = oaipmh.parse_request(pairs)
            # a list may read many documents' stamps, and its XML is long: both are made within the resolver's
            # work limits, in a thread
            xml = await self.work.run(self._response, parsed, base, now)
        except oaipmh.OAIError as error:
            xml = oaipmh.response(base, now, parsed, error)
        return Response(xml, media_type="text/xml; charset=utf-8")

    def _response(self, request: oaipmh.Request, base: str, now: datetime.datetime) -> bytes:
        """The whole XML response to a well-formed request (:meth:`answer`'s element, written)."""
        return oaipmh.response(base, now, request, self.answer(request, base))

    def answer(self, request: oaipmh.Request, base: str) -> ET.Element:
        """The verb's element for a well-formed request (an :class:`~pdi.interop.oaipmh.OAIError` otherwise)."""
        verb, arguments = request.verb, request.arguments
        if verb == "Identify":
            return oaipmh.identify(oaipmh.Identity(
                "pdi archive", base, (self.admin_email or _default_admin_email(),), self._earliest()))
        if verb == "ListMetadataFormats":
            if "identifier" in arguments:
                self._document(arguments["identifier"])
            return oaipmh.metadata_formats()
        if verb == "ListSets":
            if "resumptionToken" in arguments:
                raise oaipmh.OAIError("badResumptionToken", "ListSets answers every set at once: it issues no token")
            sets = [(s.name, f"{s.name} ({s.authority})" if s.authority else s.name) for s in self.archive.series()]
            if not sets:
                raise oaipmh.OAIError("noSetHierarchy", "the archive has no series yet, so no sets")
            return oaipmh.list_sets(sets)
        if verb == "GetRecord":
            oaipmh.check_prefix(arguments["metadataPrefix"])
            return oaipmh.get_record(self._record(self._document(arguments["identifier"]), base))
        # ListRecords, ListIdentifiers
        if "resumptionToken" in arguments:
            resumed = oaipmh.Resumption.decode(arguments["resumptionToken"])
        else:
            resumed = oaipmh.Resumption(None, 0, oaipmh.selection(arguments))
        return self._list(verb, resumed, base, "resumptionToken" in arguments)

    def _list(self, verb: str, resumed: oaipmh.Resumption, base: str, was_resumed: bool) -> ET.Element:
        chosen = resumed.selection
        start, until = chosen.bounds()
        series = chosen.set
        unknown_set = False
        if series is not None:
            names = {s.name for s in self.archive.series()}
            # a series the reader may not read is no set of ListSets, but the deleted records of what it was shown
            # of it are still harvested by their set (§2.5.1: deletedRecord persistent); if there are none, there
            # is no such set for the reader, as for a series never registered (which is not read at all)
            unknown_set = series.lower() not in names
            registered = not unknown_set or self.archive.find_series(series.lower()) is not None
            # a token is issued after a record (one of the set the reader was shown, deleted or not: checked
            # below): one naming none, of a set the reader may not read, or of no series, was never issued here
            if was_resumed and (not registered or (unknown_set and resumed.after is None)):
                raise oaipmh.OAIError("badResumptionToken", f"the resumption token lists the set {series[:80]!r}, which"
                                      " is not a set here: harvest again from the start (see ListSets)")
            if not names:  # as ListSets says: no series, no set hierarchy (§4.3, §4.5 noSetHierarchy)
                raise oaipmh.OAIError("noSetHierarchy", "the archive has no series yet, so no sets")
            if not registered:
                raise oaipmh.OAIError("noRecordsMatch",
                                      f"there is no set {series[:80]!r} (each set is a series: see ListSets)")
        # ISO 8601 UTC texts of four-digit years compare as the times do; a datestamp is to the second, so until
        # runs to its end
        since = None if start is None else oaipmh.datestamp(start).replace("Z", ".000000Z")
        up_to = None if until is None else oaipmh.datestamp(until).replace("Z", ".999999Z")
        after = 0 if resumed.after is None else self._resumed_at(resumed.after)
        # one more than a page says whether a next page has any record
        changes = self.archive.changes(after=after, series=series, limit=self.page + 1, since=since, until=up_to)
        matched = [(change.cursor, change) for change in changes]
        if not matched:
            if was_resumed:  # the list ended where the page before did: say so with a record-less page
                raise oaipmh.OAIError("noRecordsMatch", "no more records match: the list is complete")
            if unknown_set:
                raise oaipmh.OAIError("noRecordsMatch",
                                      f"there is no set {str(series)[:80]!r} (each set is a series: see ListSets)")
            raise oaipmh.OAIError("noRecordsMatch", "no record matches the set and the datestamps given")
        page = matched[: self.page]
        token = None
        if len(matched) > self.page:
            token = oaipmh.Resumption(_resume_after(page[-1][1]), resumed.sent + len(page), chosen).encode()
        records = [self._record(change, base) for _, change in page]
        return oaipmh.list_records(verb, records, token, resumed.sent, resumed=was_resumed)

    def _resumed_at(self, after: str) -> int:
        """The catalog's cursor of the record a token goes on after: one the reader may still be shown.

        A token names its last record (:func:`_resume_after`), never a row
        number; one the reader may not learn of (a forged token, or a series
        made private since) is ``badResumptionToken``, as one never issued.
        """
        expired = oaipmh.OAIError("badResumptionToken", "the record this token goes on after is no longer"
                                  " listed here: harvest again from the start")
        if after.startswith("sha256:"):  # an identifier too long for a token: its digest, day and series
            digest, _, where = after.removeprefix("sha256:").partition("@")
            series, _, day = where.partition("/")
            try:
                found = self.archive.changed_document(series, datetime.date.fromisoformat(day), digest)
            except (PDIError, ValueError):
                raise expired from None
            if found is None:
                raise expired
            after = found
        try:
            return self.archive.document_change(after).cursor
        except PDIError:
            raise expired from None

    def _document(self, identifier: str) -> DocumentChange:
        """The document an OAI identifier (a generic PDI) names, as :meth:`Archive.changes` gives it; else ``idDoesNotExist``."""
        missing = oaipmh.OAIError("idDoesNotExist", f"{identifier[:200]!r} is not the identifier of an item here"
                                  " (items are documents, named by their generic urn:pdi names)")
        try:
            name = PDI.parse(identifier)
        except ParseError:
            raise missing from None
        if name.format is not None or name.is_pattern or name.fragment is not None or name.citation is not None:
            raise missing
        try:
            found = self.archive.document_change(name)
        except PDIError:
            raise missing from None
        return found

    def _record(self, change: DocumentChange, base: str) -> oaipmh.Record:
        generic: PDI = change.generic.pdi
        header = oaipmh.Header(_oai_identifier(generic), parse_timestamp(change.changed_at),
                               (generic.series_name.lower(),), deleted=change.withdrawn_at is not None)
        if header.deleted:
            return oaipmh.Record(header)
        current: dict[tuple[str, str], str] = {}
        for statement in change.statements:  # oldest first: a later one of a subject and key supersedes
            current[(statement.subject, statement.key)] = statement.value
        newest = change.generic.versions[-1]
        formats = [f.media_type for f in newest.formats if f.media_type]
        date = generic.date
        assert date is not None
        dc = oaipmh.dublin_core(
            [str(generic), n2r_url(base.removesuffix("/oai"), generic)],
            [(key, value) for (_, key), value in current.items()],
            dates=[date.isoformat()],
            formats=formats,
            sources=[generic.unique_id] if is_url(generic.unique_id) and not generic.is_serial else [],
        )
        return oaipmh.Record(header, dc)

    def _earliest(self) -> datetime.datetime:
        """A lower bound of every datestamp (§4.2 earliestDatestamp): the first day any series the reader sees has a
        document, or the first change of access if earlier (a deleted record of a series the reader no longer sees is
        dated when it was withheld, which may be before the first day of every series the reader sees)."""
        moments = [datetime.datetime.combine(c.first_day, datetime.time(), tzinfo=datetime.UTC)
                   for c in self.archive.series_counts() if c.first_day is not None]
        changed = self.archive.first_access_change()
        if changed is not None:
            moments.append(changed)
        if not moments:
            return self.archive.now().astimezone(datetime.UTC).replace(microsecond=0)
        return min(moments).replace(microsecond=0)

    def routes(self) -> list[Route]:
        return [Route("/oai", self.endpoint, methods=["GET", "POST"])]


def _default_admin_email() -> str:
    """``postmaster@`` this host (RFC 5321 §4.5.1: every mail domain has one), when no address was configured."""
    import socket

    host = socket.getfqdn()
    return f"postmaster@{host if '.' in host else 'localhost.localdomain'}"
