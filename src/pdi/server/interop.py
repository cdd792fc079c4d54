"""Memento TimeGates and TimeMaps (RFC 7089) and the OAI-PMH 2.0 endpoint, over one archive (an edge).

Memento, in the routes pywb uses:

* ``/timegate/<URI-R>`` — a TimeGate (RFC 7089 §4.1, pattern 2.2): ``302``
  to the memento nearest the ``Accept-Datetime`` (the latest without one),
  ``Vary: accept-datetime``, and a ``Link`` with the ``original``, the
  ``timemap`` and the ``first``, ``last``, ``prev`` and ``next`` mementos
  around the one chosen; ``400`` for an ``Accept-Datetime`` that is not an
  RFC 1123 date (§2.1.1), ``404`` when the archive holds no memento of it.
* ``/timemap/link/<URI-R>`` — its TimeMap (§5.1.1), ``application/link-format``.

``<URI-R>`` is either a URL the archive holds captures of (documents whose
encapsulated unique id is that URL, on any day, in any series: every
version of each is a memento, found with the catalog query of the
``/captures`` page), written after the route as it is, query included, and
compared exactly as it was captured; or a document, by its generic name
(``/timegate/urn:pdi://…/id``) or the N2R URL of that name, whose versions
are its mementos (the original resource is then the generic name's N2R
URL). A version's memento is the N2R of its first format in token order
(a capture has one, ``related``). Withdrawn versions and documents are no
mementos: they are left out of TimeMaps and never chosen by a TimeGate.

The N2R answer of a versioned name is itself a memento (§4.1.2): it
carries ``Memento-Datetime`` (the version's deposit time) and a ``Link``
with ``original``, ``timegate``, ``timemap`` and the ``first`` and ``prev``
mementos (:func:`memento_headers`), which do not change as later versions
come, so the answer stays immutable.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from pdi.archive import Archive, Generic, Resolved
from pdi.errors import NotFoundError, ParseError, PDIError, UnsupportedError
from pdi.identifier import PDI
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
)
from pdi.server.problems import Problem

#: The most mementos one TimeGate or TimeMap reads: past it, a ``413`` problem says so.
MAX_MEMENTOS = 100_000
#: Documents read from the catalog at once while gathering the captures of a URL.
_CAPTURES_PAGE = 500
#: How long a shared cache may keep a TimeGate's or a TimeMap's answer: a new capture changes it.
MEMENTO_MAX_AGE = 60
#: An absolute URI with an authority (``http://…``): a unique id that is a captured URL.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_PDI_PREFIX = re.compile(r"(?:urn:)?pdi:", re.IGNORECASE)


def is_url(unique_id: str) -> bool:
    """Whether a unique id is a URL (an encapsulated id with a scheme and an authority): a capture's."""
    return _URL.match(unique_id) is not None


def n2r_url(base: str, name: PDI | str) -> str:
    """The N2R URL of ``name`` as the Memento answers write it (:func:`sturdy`)."""
    from pdi.server.read import rfc2169_query

    return f"{base.rstrip('/')}/uri-res/N2R?{sturdy(rfc2169_query(str(name)))}"


def sturdy(query: str) -> str:
    """A name in a URL with each ``%2E`` written ``%252E``, which no client rewrites.

    Many HTTP clients normalize a URL before they send it and decode the
    escapes of unreserved characters (RFC 3986 §6.2.2.2): ``requests``, and
    so ``memento_client``, sends ``%2E`` as ``.``, which turns a PDI's
    encapsulated id into a name that does not parse (a ``.`` there must be
    escaped). ``%25`` is a ``%`` to the resolver (:func:`pdi.server.read.urn_from_query`)
    and to no client an unreserved character, so ``%252E`` arrives as written.
    """
    return _ESCAPED_DOT.sub("%252E", query)


_ESCAPED_DOT = re.compile("%2E", re.IGNORECASE)


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

    def timemap(self, base: str) -> str:
        return f"{base.rstrip('/')}/timemap/link/{self._path()}"

    def _path(self) -> str:
        """The target as it follows a route: a generic name as in an N2R query (:func:`sturdy`), a URL as it is."""
        if _PDI_PREFIX.match(self.target):
            from pdi.server.read import rfc2169_query

            return sturdy(rfc2169_query(self.target))
        return self.target


class Mementos:
    """The mementos the catalog holds of a URL or a document, without withdrawn ones."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive

    def withdrawn(self) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str, int]]]:
        """Withdrawn documents and withdrawn versions, by (series, day, unique id) (one query: they are few)."""
        documents: set[tuple[str, str, str]] = set()
        versions: set[tuple[str, str, str, int]] = set()
        for tomb in self.archive.withdrawals():
            key = (tomb.key.series, tomb.key.day.isoformat(), tomb.key.unique_id)
            if tomb.version is None:
                documents.add(key)
            else:
                versions.add((*key, tomb.version))
        return documents, versions

    def _of_documents(self, documents: Iterator[Generic], base: str) -> tuple[list[Memento], int]:
        """The mementos of every version of ``documents`` not withdrawn, sorted; and how many were withdrawn."""
        gone_documents, gone_versions = self.withdrawn()
        found: list[Memento] = []
        withdrawn = 0
        for doc in documents:
            date = doc.pdi.date
            assert date is not None  # a document the catalog holds
            key = (doc.pdi.series_name.lower(), date.isoformat(), doc.pdi.unique_id)
            for version in doc.versions:
                if key in gone_documents or (*key, version.number) in gone_versions:
                    withdrawn += 1
                    continue
                found.append(Memento(parse_timestamp(version.created_at), n2r_url(base, version.formats[0])))
                if len(found) > MAX_MEMENTOS:
                    raise _too_many()
        found.sort()
        return found, withdrawn

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
            raise ParseError("name the original resource after the route: /timegate/http://… or /timegate/urn:pdi://…",
                             rule="URI-R")
        if _PDI_PREFIX.match(target):
            from pdi.server.read import urn_from_query

            return self._document(PDI.parse(urn_from_query(target)), base)
        mementos, withdrawn = self._of_documents(self._captures(target), base)
        if not mementos and not withdrawn:
            own = _own_n2r_name(target)
            if own is not None:
                return self._document(own, base)
            raise NotFoundError(f"the archive holds no capture of {target} (the URL is compared exactly as captured)")
        return self._checked(Subject(target, target, tuple(mementos)), withdrawn)

    def _document(self, name: PDI, base: str) -> Subject:
        if name.is_pattern or name.citation is not None:
            raise UnsupportedError(f"{name} names no one document: a TimeGate is of one document")
        generic = generic_of(name)
        found = self.archive.locate(str(generic))
        assert isinstance(found, Generic)
        mementos, withdrawn = self._of_documents(iter([found]), base)
        return self._checked(Subject(n2r_url(base, generic), str(generic), tuple(mementos)), withdrawn)

    @staticmethod
    def _checked(subject: Subject, withdrawn: int) -> Subject:
        if not subject.mementos:
            raise Problem(410, "gone", f"every memento of {subject.target} was withdrawn ({withdrawn})")
        return subject

    def headers(self, located: Resolved, base: str) -> dict[str, str]:
        """``Memento-Datetime`` and the memento's ``Link`` for the N2R of a versioned name (RFC 7089 §4.1.2).

        Empty when the name's version is not among the mementos (it cannot be:
        a withdrawn name is never served).
        """
        generic = generic_of(located.pdi)
        target = generic.unique_id if is_url(generic.unique_id) and not generic.is_serial else str(generic)
        try:
            subject = self.subject(target, base)
        except (PDIError, Problem):
            return {}
        version = self.archive.locate(str(generic))
        assert isinstance(version, Generic)
        number = located.pdi.version
        mine = [v for v in version.versions if v.number == number]
        if not mine:
            return {}
        this = Memento(parse_timestamp(mine[0].created_at), n2r_url(base, mine[0].formats[0]))
        earlier = [m for m in subject.mementos if m <= this]
        if not earlier or earlier[-1] != this:
            return {}
        return {
            "Memento-Datetime": http_datetime(this.datetime),
            "Link": memento_links(subject.original, subject.timegate(base), subject.timemap(base),
                                  earlier, len(earlier) - 1),
        }


def _own_n2r_name(url: str) -> PDI | None:
    """The name in an N2R (or I2R) URL of a resolver (``…/uri-res/N2R?urn:pdi:…``), if ``url`` is one."""
    from urllib.parse import urlsplit

    from pdi.server.read import urn_from_query

    parts = urlsplit(url)
    if not parts.path.endswith(("/uri-res/N2R", "/uri-res/I2R")) or not _PDI_PREFIX.match(parts.query):
        return None
    try:
        return PDI.parse(urn_from_query(parts.query))
    except ParseError:
        return None


def _too_many() -> PDIError:
    from pdi.errors import LimitError

    return LimitError(f"more than {MAX_MEMENTOS} mementos: this resolver lists at most that many")


def _target(request: Request, prefix: str) -> str:
    """The URI-R after ``prefix`` in the request's path as sent (not %-decoded), with the query."""
    raw: bytes = request.scope.get("raw_path") or request.scope["path"].encode("utf-8")
    path = raw.decode("latin-1")
    target = path[len(prefix):] if path.startswith(prefix) else str(request.path_params.get("target", ""))
    query = bytes(request.scope.get("query_string", b"")).decode("latin-1")
    return target + ("?" + query if query else "")


class MementoRoutes:
    """``/timegate/<URI-R>`` and ``/timemap/link/<URI-R>`` over one archive."""

    def __init__(self, archive: Archive, base_url: str | None = None) -> None:
        self.mementos = Mementos(archive)
        self.base_url = base_url

    def _base(self, request: Request) -> str:
        return self.base_url if self.base_url is not None else str(request.base_url)

    async def timegate(self, request: Request) -> Response:
        """RFC 7089 §4.1.1: ``302`` to the memento chosen for ``Accept-Datetime``."""
        raw = request.headers.get("accept-datetime")
        wanted = None if raw is None else parse_http_datetime(raw)
        base = self._base(request)
        subject = await anyio.to_thread.run_sync(self.mementos.subject, _target(request, "/timegate/"), base)
        chosen = select(subject.mementos, wanted)
        headers = {
            "Location": subject.mementos[chosen].uri,
            "Vary": "accept-datetime",
            "Link": timegate_links(subject.original, subject.timemap(base), subject.mementos, chosen),
            "Cache-Control": f"public, max-age={MEMENTO_MAX_AGE}",
        }
        return Response(status_code=302, headers=headers)

    async def timemap(self, request: Request) -> Response:
        """RFC 7089 §5.1.1: every memento of the URI-R, ``application/link-format``."""
        base = self._base(request)
        subject = await anyio.to_thread.run_sync(self.mementos.subject, _target(request, "/timemap/link/"), base)
        body = timemap(subject.original, subject.timemap(base), subject.timegate(base), subject.mementos)
        return PlainTextResponse(body, media_type=LINK_FORMAT,
                                 headers={"Cache-Control": f"public, max-age={MEMENTO_MAX_AGE}"})

    def routes(self) -> list[Route]:
        return [
            Route("/timegate/{target:path}", self.timegate),
            Route("/timemap/link/{target:path}", self.timemap),
        ]
