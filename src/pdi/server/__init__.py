"""The resolver over HTTP: RFC 2169 services, a JSON API, a write API behind tokens, and a viewer (an edge).

:func:`create_app` serves one archive (SQLite directory or PostgreSQL URL)
with Starlette; ``pdi serve`` runs it on uvicorn. Reading is open to all;
writing (``POST /api/deposit`` and the rest, :mod:`pdi.server.write.api`) needs
a bearer token made with ``pdi token add``.

RFC 2169 ("A Trivial Convention for using HTTP in URN Resolution"): the URN
is the whole query string, ``GET /uri-res/<service>?<urn>``:

* ``N2R`` — the resource: the bytes of the representation (or of its
  fragment) with its media type, and as a memento (RFC 7089) its
  ``Memento-Datetime`` and ``Link``. An ``Accept`` that prefers
  ``application/json``, or ``?info`` after the name, answers what ``N2C``
  answers. A generic PDI (no format) names several resources: the format an
  ``Accept`` range names (``302`` to it), else ``300 Multiple Choices`` with
  a ``text/uri-list`` of every format of every version, oldest version first. A fragment that reaches
  past the end is cut there (the draft reads a position past the end as the
  end: PDI-GRAMMAR.md §3) and answers ``200`` with a ``Warning: 299`` header
  saying so. One that lies wholly past it selects nothing: ``416 Range Not
  Satisfiable``, a problem whose detail is ``pdi get``'s warning (which exits
  9) word for word (:func:`pdi.fragments.past_end_message`). RFC 9110
  §15.5.17's 416 is for a ``Range`` field none of whose ranges overlaps the
  representation; a fragment in the URN asks for a range of it another way,
  and none of it overlaps: a ``200`` with an empty body read as an empty
  passage. No ``Content-Range`` (a ``Range`` field's units). ``I2R`` is ``N2R`` (PDI-GRAMMAR.md §2.11: the White House resolver's
  links of the 1990s).
  A URN whose fragment a browser wrote (``#:~:text=``, ``#t=``,
  ``#xywh=``) is answered ``302`` to the ``N2R`` of the native name it
  equals (for ``N2C``, ``N2Ls`` and ``N2Ns``, its answer of the same
  service; :mod:`pdi.interop.aliases`).
* ``N2L`` — ``302 Found``, ``Location`` the URL of the resource (this
  server's ``N2R``, relative; ``300`` and a list for a generic PDI with
  several formats); ``N2Ls`` — those URLs as ``text/uri-list``.
* A ``#`` cannot travel in a URL: write it ``%23`` (``/uri-res/N2R?urn:pdi://…/1.text.1%23char=0,5``),
  and a ``%23`` of the PDI itself ``%2523``. Every other escape in the query
  is the PDI's own and is kept as it is.
* ``N2C`` — a description of the resource (its URC): JSON with the name,
  media type, size, SHA-256 and the current statements about it.
* ``N2Ns`` — the names of the same resource: the canonical name, and for a
  versioned PDI its generic name.
* Any other service of RFC 2169 (``N2Rs``, ``N2Cs``, ``L2R`` …) is ``501 Not
  Implemented``; a name that is not in the archive ``404``.
* A refusal of any of these (``400``, ``403``, ``404``, ``410``, ``416``, ``501`` …) is an RFC 9457
  problem, but to a browser following the address (a ``GET`` or ``HEAD`` whose ``Accept`` prefers ``text/html`` to
  problem JSON and JSON) the viewer's error page for the name, its status and header fields the same; either
  says ``Vary: Accept`` (:func:`pdi.server.pages.problem_pages.pages_for_citations`).

JSON API (``application/json``; ``pdi=`` and ``citation=`` are form
parameters: percent-encode the whole name, as ``encodeURIComponent`` does):
``/api/resolve?pdi=…`` (what a name selects:
media type, size, SHA-256, fragment ranges, region or samples, and
``clamped`` and ``past_end`` when it reaches or lies wholly past the end;
for a generic name every version with ``created_at`` and its formats; for a
browser fragment, ``#:~:text=``, ``#t=`` or ``#xywh=``, also the native name
it equals, ``equivalent``: :mod:`pdi.interop.aliases`),
``/api/ls?pattern=…&series=…&limit=…&offset=…&after=…`` (a page of names and
the ``next`` page's URL), ``/api/meta?pdi=…``,
``/api/cite?citation=…``, ``/api/series``, ``/api/rfc5147?pdi=…&fragment=…``
(an RFC 5147 fragment evaluated on a text's N2R entity: :mod:`pdi.server.pages.cite`),
``/api/annotation?pdi=…`` (``GET``: the W3C Web Annotation of a fragment name
or citation; ``POST``: the names a posted annotation or Hypothesis export
points at, no token needed as it writes nothing: :mod:`pdi.server.protocol.web_annotation`),
``/api/annotations/`` (an annotation server, the W3C Web Annotation Protocol:
a container of annotations kept in the catalog, created, replaced and
deleted with a token of the role ``curate``: :mod:`pdi.server.write.annotations`) and
``/api/search?q=…&series=…&limit=…&after=…`` (full-text search: hits with
their ``char`` fragment names and snippets, and the ``next`` page's URL) and
``/api/anchor?pdi=…&to=…`` (a cited passage found in another version:
:mod:`pdi.server.protocol.reanchor`).

Errors are RFC 9457 problem details (``application/problem+json``: ``type``,
``title``, ``status``, ``detail``), the status taken from the
:mod:`pdi.errors` class (syntax error 400, not found 404, unsupported 415 where the
request sends content and 400 where it sends none …);
the ``type`` is the error class's own (``/api#problem-syntax-error``, ``/api#problem-passage-orphaned`` …,
each described on the ``/api`` page); any other problem is ``about:blank``, titled with its status's phrase.

The viewer, ``/view?pdi=…``, shows a text (or the source of an HTML or XML
document) with the passage a fragment names marked; a reader selects a
passage and reads its citable name, ``…#char=a,b`` over the CRLF-canonical
text (:mod:`pdi.server.pages.viewer`). An archived web page (``multipart/related``
or HTML) is shown as the page it was, from the replay origin
(:mod:`pdi.server.replay.origin`, its own app on its own port), under a banner
(:mod:`pdi.server.pages.replay_frame`).
Memento TimeGates and TimeMaps (``/timegate/<URL>``, ``/timemap/link/<URL>``)
and the OAI-PMH 2.0 endpoint (``/oai``) are :mod:`pdi.server.protocol.memento_oaipmh`.
``/search?q=…`` finds passages by their
words and links each to the viewer (:mod:`pdi.server.pages.text_search`).

A script of another origin (a catalogue's discovery layer, a citation manager) reads the public answers
(the RFC 2169 services, the JSON read API, Memento, OAI-PMH, manifests, ``.well-known``: the routes
:func:`create_app` marks read) as ``cors`` allows, by default any origin's, never the write API, never with
cookies (:mod:`pdi.server.http.cors`).

A person signs in with a token at ``/signin`` (:mod:`pdi.server.pages.signin`):
the browser then keeps it in an ``HttpOnly`` cookie that the resolver's reads
(``GET``, ``HEAD``) take as they take a bearer token, and its writes never
(:mod:`pdi.server.http.readers`); the replay origin ignores it.

The package is grouped by audience, each room importing only those below
it: :mod:`pdi.server.http` (what every answer shares: parameters, problems,
preconditions, bodies, who reads), :mod:`pdi.server.process` (running it:
workers, uvicorn, limits, the cache of whole answers),
:mod:`pdi.server.protocol` (answers to machines), :mod:`pdi.server.pages`
(the reader's pages), :mod:`pdi.server.write` (writes behind tokens) and
:mod:`pdi.server.replay` (archived pages from their own origin). This module
puts them together in one app.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.routing import Route

from pdi.archive import Archive
from pdi.archive.blobs import memo
from pdi.federation.authorities import Authorities, RegistrySource
from pdi.federation.naptr import NaptrFinder
from pdi.server.http.codings import ContentCodings
from pdi.server.http.cors import CrossOrigin, CrossOriginReads, ReadPaths
from pdi.server.http.middleware import BrowserFields, HeadWithoutRange, HostField, MiddlewareErrors
from pdi.server.http.preconditions import Preconditions
from pdi.server.http.problems import HANDLERS, Options
from pdi.server.http.readers import Readers
from pdi.server.http.site import SitePath, site_path
from pdi.server.pages import site_icon
from pdi.server.pages.api_docs import APIDocs
from pdi.server.pages.browse import BrowsePages
from pdi.server.pages.cite import CiteAPI
from pdi.server.pages.pdfjs import PdfJsAssets
from pdi.server.pages.problem_pages import on_http_error as page_or_problem
from pdi.server.pages.problem_pages import pages_for_citations
from pdi.server.pages.reader import ReaderApp
from pdi.server.pages.replay_frame import ReplaySite
from pdi.server.pages.signin import SignIn, expired_sign_in
from pdi.server.pages.text_search import SearchPages
from pdi.server.process.cache import DEFAULT_CACHE_BYTES, CachedAnswers, ResponseCache
from pdi.server.process.health import Readiness, healthz
from pdi.server.process.limits import (
    DEFAULT_BODY_RATE,
    DEFAULT_BODY_SECONDS,
    TIMEMAP_PAGE,
    BodyDeadline,
    PacedAnswers,
    WorkLimits,
)
from pdi.server.process.observe import METRICS_PATH, AccessLog, Observe, metrics
from pdi.server.protocol.elsewhere import Elsewhere, ResolverToken
from pdi.server.protocol.manifests import ManifestAPI
from pdi.server.protocol.memento_oaipmh import MementoRoutes, OAIRoutes
from pdi.server.protocol.octets import OctetsAPI
from pdi.server.protocol.reanchor import AnchorAPI
from pdi.server.protocol.resolver import ReadAPI, Resolver
from pdi.server.protocol.web_annotation import AnnotationAPI
from pdi.server.write.annotations import DEFAULT_PAGE_SIZE, AnnotationServer
from pdi.server.write.api import WriteAPI
from pdi.server.write.mirrors import MirrorAnnouncements
from pdi.signing import SigningKey

__all__ = ["ReplaySite", "create_app"]


def create_app(
    location: str,
    *,
    archive: Archive | None = None,
    base_url: str | None = None,
    limits: WorkLimits | None = None,
    cache_bytes: int = DEFAULT_CACHE_BYTES,
    max_upload: int | None = None,
    replay: ReplaySite | None = None,
    oai_admin_email: str | None = None,
    fixity_memo_seconds: float = memo.DEFAULT_SECONDS,
    fixity_shared: memo.SharedFixity | None = None,
    connections: int = 0,
    read_url: str | None = None,
    annotation_page_size: int = DEFAULT_PAGE_SIZE,
    body_seconds: float = DEFAULT_BODY_SECONDS,
    body_rate: int = DEFAULT_BODY_RATE,
    timemap_page: int = TIMEMAP_PAGE,
    signing_key: SigningKey | None = None,
    registries: Sequence[RegistrySource] = (),
    dns: NaptrFinder | None = None,
    tsa: str | None = None,
    access_log: AccessLog | None = None,
    json_logs: bool = False,
    metrics_token: str | None = None,
    resolver_token: str | None = None,
    cors: CrossOrigin | None = None,
) -> Starlette:
    """The resolver for the archive at ``location`` (opened now; ``archive`` to pass one already open).

    ``connections`` sizes a PostgreSQL catalog's pool of connections (0: the default); ``read_url`` names a
    streaming replica of a PostgreSQL catalog that the reads go to, the writes going to ``location``
    (:mod:`pdi.archive.postgres`).

    ``base_url`` (``https://resolver.example.org``) is put in front of the
    URLs that ``N2Ls`` and a ``300`` list; without it they are built from
    the request's ``Host``. ``N2L`` redirects with a relative ``Location``.
    A base URL with a path (``https://library.example/pdi/``, a proxy that strips ``/pdi``) puts the pages'
    links, their scripts' requests, every ``Location`` and ``Link`` of a path of the app under that path
    (:mod:`pdi.server.http.site`).
    ``limits`` bounds the expensive requests (those that read a whole
    representation) running at once and how long one may wait for a place
    (:mod:`pdi.server.process.limits`), and the octets of large answers in memory sent at once
    (:class:`~pdi.server.process.limits.PacedAnswers`); cheap catalog look-ups never wait for them.
    ``cache_bytes`` bounds the whole N2R answers of names with a format kept
    in memory (:mod:`pdi.server.process.cache`; 0: none), which are then answered
    before any routing; ``app.state.cache`` is that cache (and ``app.state.openapi()`` the document
    ``/openapi.json`` answers). ``max_upload``
    bounds the octets of one body the write API takes (None: no bound). ``replay`` says
    where the replay origin is (:func:`pdi.server.replay.origin.create_replay_app`
    serves it): ``/view`` of an archived page then shows it replayed there;
    without it, ``/view`` shows its source or its description.
    ``oai_admin_email`` is the address OAI-PMH's ``Identify`` gives
    (:mod:`pdi.server.protocol.memento_oaipmh`; default ``postmaster@`` this host).
    ``annotation_page_size`` is how many annotations a page of the annotation
    container holds (:mod:`pdi.server.write.annotations`).
    ``fixity_memo_seconds`` is how long chunks of a blob file verified by
    one read are trusted by the next, while the file is unchanged
    (:mod:`pdi.archive.blobs.memo`; 0: every read hashes every chunk);
    ``fixity_shared``, the table of blob files verified whole that this
    process shares with the others forked from where it was made (``pdi
    serve``'s workers), so that a blob one worker verified is trusted by all.
    ``body_seconds`` and ``body_rate`` bound the time a request's body may
    take, a token holder's upload's too: ``body_seconds`` and one second more
    for every ``body_rate`` octets, else ``408``
    (:class:`~pdi.server.process.limits.BodyDeadline`).
    ``timemap_page`` is how many captures of a URL (or versions of a
    document) a Memento TimeMap page holds the mementos of (:mod:`pdi.server.protocol.memento_oaipmh`).
    ``signing_key`` signs the manifests of ``/api/manifest`` (:mod:`pdi.server.protocol.manifests`); without
    it, the archive's own (:mod:`pdi.archive.signing_key`) if it has one; it also signs the archive's registry
    at ``/.well-known/pdi-registry``. A name of a series the archive does not hold is looked up in its own
    registry, then ``registries``, then the DNS server of ``dns`` (:mod:`pdi.server.protocol.elsewhere`); each of
    ``registries`` keeps the newest it loads in this archive from then on (a replay of an older one refused).
    ``tsa``, a time-stamping authority's URL, makes ``/api/manifest.tsr`` answer RFC 3161 timestamps of them.
    ``access_log``, ``json_logs`` and ``metrics_token`` are what the outermost middleware
    (:class:`~pdi.server.process.observe.Observe`) writes each request to and who may read ``/metrics``;
    ``/healthz`` and ``/readyz`` are :mod:`pdi.server.process.health`.
    ``resolver_token`` is what the resolver answers a probe of other resolvers with, to know itself under any of its
    names (:class:`~pdi.server.protocol.elsewhere.ResolverToken`): the same in every worker of one ``pdi serve``
    (default: one made now).
    ``cors`` says which origins' scripts may read the public answers (the RFC 2169 services, the JSON read API,
    Memento, OAI-PMH, manifests, the ``.well-known`` documents: the read routes; :mod:`pdi.server.http.cors`):
    default any (``*``).
    """
    opened = archive if archive is not None else Archive.open(location, connections=connections, read_url=read_url)
    if fixity_memo_seconds > 0:
        opened.fixity_memo = memo.FixityMemo(fixity_memo_seconds, shared=fixity_shared)
    work = limits if limits is not None else WorkLimits()
    cross_origin = cors if cors is not None else CrossOrigin()
    cache = ResponseCache(cache_bytes, generation=opened.withdrawals_generation, at_once=opened.generation_at_once,
                          cross_origin=cross_origin)
    resolver = Resolver(opened, work, base_url, cache)
    pages = ReaderApp(opened, work, replay)
    key = signing_key or _signing_key(opened)
    token = resolver_token if resolver_token is not None else secrets.token_hex(16)
    for source in registries:  # the newest registry of each source, kept in the archive from here on
        source.keep_in(opened)
    authorities = Authorities(_registry_file(opened), list(registries), dns,
                              peers=lambda: [m.base_url for m in opened.mirrors()], strangers=opened.announced_peers,
                              token=token)
    elsewhere = Elsewhere(opened, resolver, authorities, base_url, key)
    resolver.elsewhere = pages.elsewhere = elsewhere
    catalogue = BrowsePages(opened)
    search = SearchPages(opened, work)
    annotations = AnnotationAPI(opened, work)
    readable: list[Route] = []  # what a script of another origin may read (CrossOriginReads)

    def read(*made: Route) -> list[Route]:
        readable.extend(made)
        return list(made)

    routes = [
        Route("/", pages.view),
        Route("/view", pages.view),
        Route("/thread", pages.thread),
        *catalogue.routes(),
        *SignIn(opened, base_url).routes(),
        Route("/search", search.page),
        *read(Route("/api/search", search.api)),
        *read(Route("/uri-res/{service}", resolver.endpoint)),
        *PdfJsAssets().routes(),
        *read(*ReadAPI(opened, work).routes()),
        *WriteAPI(opened, max_upload=max_upload, cache=cache).routes(),
        *MirrorAnnouncements(opened).routes(),
        *read(Route("/api/rfc5147", CiteAPI(opened, work).rfc5147),
              Route("/api/pdf/page", CiteAPI(opened, work).pdf_page),
              Route("/api/image/preview", CiteAPI(opened, work).image_preview),
              Route("/api/anchor", AnchorAPI(opened, work).anchor),
              Route("/api/annotation", annotations.export, methods=["GET"]),
              # it writes nothing: the names a posted annotation points at (pdi.server.protocol.web_annotation)
              Route("/api/annotation", annotations.import_, methods=["POST"])),
        # the annotation server says CORS itself, its writes' too (pdi.server.write.annotations)
        *AnnotationServer(opened, base_url=base_url, page_size=annotation_page_size).routes(),
        *read(*MementoRoutes(opened, base_url, work, page=timemap_page).routes(),
              *OAIRoutes(opened, base_url, work=work, admin_email=oai_admin_email).routes(),
              *ManifestAPI(opened, work, key, tsa).routes(),
              *OctetsAPI(opened, work).routes(),
              *elsewhere.routes()),
        *site_icon.routes(),
    ]
    docs = APIDocs(readable, cross_origin)
    routes += [*read(Route("/openapi.json", docs.json)), Route("/api", docs.page)]
    routes += [Route("/healthz", healthz), Route("/readyz", Readiness(opened, metrics_token=metrics_token).readyz),
               Route(METRICS_PATH, metrics(metrics_token))]
    # a browser's unknown path of the app is a page (pdi.server.pages.problem_pages), and so is a browser's refusal
    # of an RFC 2169 path (a citation's N2R followed); the rest RFC 9457 problems
    handlers = {kind: pages_for_citations(handler) for kind, handler in {**HANDLERS, HTTPException: page_or_problem}.items()}
    app = Starlette(routes=routes, exception_handlers=handlers, middleware=[
        # the pages' links, redirects' Location and Link under the path of base_url (pdi.server.http.site); at a
        # host's root, no layer at all
        *([Middleware(SitePath, base_url=base_url)] if site_path(base_url) else []),
        # a probe's answer says which resolver this is (every answer to one: a problem's too)
        Middleware(ResolverToken, token=token),
        # a large answer in memory goes a piece at a time as the client takes it, within the worker's budget
        Middleware(PacedAnswers),
        # every HTML answer says who may frame it: the resolver's own pages alone, unless it says so itself
        Middleware(BrowserFields),
        # request ids, metrics, logs; /metrics answered before a token is looked at (pdi.server.process.observe)
        Middleware(Observe, access=access_log, json_logs=json_logs, metrics_token=metrics_token, archive=opened),
        # what a script of another origin may read, and the preflights of it, before a token or a body is looked at
        Middleware(CrossOriginReads, policy=cross_origin, routes=readable),
        Middleware(BodyDeadline, seconds=body_seconds, rate=body_rate),  # whoever sends it, a token holder too
        Middleware(HostField),  # RFC 9112 §3.2: one Host field (none in HTTP/1.1: 400)
        Middleware(HeadWithoutRange),  # RFC 9110 §14.2: Range is a GET's alone
        Middleware(Options),  # OPTIONS of any route's path: its Allow, read from the routes (pdi.server.http.problems)
        Middleware(MiddlewareErrors),  # a storage error of a token's look-up or the cache's answered as a route's: 503
        Middleware(Readers, archive=opened, cookies=True, base_url=base_url, expired_page=expired_sign_in),  # before the cache: a token that is not live is 401, even for a kept answer
        Middleware(ContentCodings),  # content in a coding (gzip …) is refused, never kept coded (RFC 9110 §8.4)
        Middleware(Preconditions),  # If-Match, If-None-Match of any GET or HEAD: 412, 304 (RFC 9110 §13.2)
        Middleware(CachedAnswers, cache=cache),  # only answers anyone may read are kept there
    ])
    docs.routes = app.routes
    cache.read_paths = ReadPaths(readable)  # the connection's own refusals of them say CORS too
    app.state.archive = opened
    app.state.cache = cache
    app.state.openapi = docs.document  # what /openapi.json answers, for pdi docs reference/http-api too
    app.state.access = access_log  # the connections write in it what they answer from the cache themselves
    # the plain N2R or N2L of a name the cache does not hold yet, made by the connection (pdi.server.process.connection)
    app.state.public = resolver.public_answer if cache.max_entry_bytes > 0 else None
    return app


def _signing_key(archive: Archive) -> SigningKey | None:
    """The archive's signing key where it has one (``$PDI_SIGNING_KEY``, or its directory's) and this user may read
    it, else ``None``: a member of the group of an archive shared with it reads the archive, not its key."""
    from pdi.archive.signing_key import key_path, load_key
    from pdi.errors import NotFoundError, StoreError, UnsupportedError

    try:
        return load_key(key_path(archive.location))
    except (NotFoundError, UnsupportedError):
        return None
    except StoreError:
        if archive.read_only:  # a member of its group: the key is its owner's alone (0600), and what needs it
            return None  # says so (signed_by_key_here)
        raise


def _registry_file(archive: Archive) -> Path | None:
    """The archive's own registry file (``registry.json`` or ``$PDI_REGISTRY``), if it can have one."""
    from pdi.errors import UnsupportedError
    from pdi.federation.registry import registry_path

    try:
        return registry_path(archive.location)
    except UnsupportedError:
        return None
