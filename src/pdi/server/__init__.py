"""The resolver over HTTP: RFC 2169 services, a JSON API and a viewer (an edge, read-only).

:func:`create_app` serves one archive (SQLite directory or PostgreSQL URL)
with Starlette; ``pdi serve`` runs it on uvicorn. Nothing here writes to the
archive: deposits stay with the ``pdi`` command and the Python API.

RFC 2169 ("A Trivial Convention for using HTTP in URN Resolution"): the URN
is the whole query string, ``GET /uri-res/<service>?<urn>``:

* ``N2R`` — the resource: the bytes of the representation (or of its
  fragment) with its media type. A generic PDI (no format) names several
  resources: ``300 Multiple Choices`` with a ``text/uri-list`` of every
  format of every version, oldest version first. A fragment that reaches
  past the end is cut there, and one that lies wholly past it selects
  nothing; both still answer ``200`` (the name is valid and resolves: the
  draft reads a position past the end as the end), with a ``Warning: 299``
  header saying which. ``416 Range Not Satisfiable`` was considered and not
  used: RFC 9110 §15.5.17 defines it for the ``Range`` header field (with a
  ``Content-Range`` it needs), not for a fragment named in the URN. ``I2R`` is ``N2R`` (PDI-GRAMMAR.md §2.11: the White House resolver's
  links of the 1990s).
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

JSON API (``application/json``; ``pdi=`` and ``citation=`` are form
parameters: percent-encode the whole name, as ``encodeURIComponent`` does):
``/api/resolve?pdi=…`` (what a name selects:
media type, size, SHA-256, fragment ranges, region or samples, and
``clamped`` and ``past_end`` when it reaches or lies wholly past the end;
for a generic name every version with ``created_at`` and its formats),
``/api/ls?pattern=…&series=…&limit=…&offset=…&after=…`` (a page of names and
the ``next`` page's URL), ``/api/meta?pdi=…``,
``/api/cite?citation=…`` and ``/api/series``.

Errors are RFC 9457 problem details (``application/problem+json``: ``type``,
``title``, ``status``, ``detail``), the status taken from the
:mod:`pdi.errors` class (syntax error 400, not found 404, unsupported 415 …).

The viewer, ``/view?pdi=…``, shows a text (or the source of an HTML or XML
document) with the passage a fragment names marked; a reader selects a
passage and reads its citable name, ``…#char=a,b`` over the CRLF-canonical
text (:mod:`pdi.server.viewer`).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route

from pdi.archive import Archive
from pdi.server.app import ReaderApp
from pdi.server.cache import DEFAULT_CACHE_BYTES, CachedAnswers, ResponseCache
from pdi.server.limits import WorkLimits
from pdi.server.problems import HANDLERS
from pdi.server.read import ReadAPI, Resolver

__all__ = ["create_app"]


def create_app(
    location: str,
    *,
    archive: Archive | None = None,
    base_url: str | None = None,
    limits: WorkLimits | None = None,
    cache_bytes: int = DEFAULT_CACHE_BYTES,
) -> Starlette:
    """The resolver for the archive at ``location`` (opened now; ``archive`` to pass one already open).

    ``base_url`` (``https://resolver.example.org``) is put in front of the
    URLs that ``N2Ls`` and a ``300`` list; without it they are built from
    the request's ``Host``. ``N2L`` redirects with a relative ``Location``.
    ``limits`` bounds the expensive requests (those that read a whole
    representation) running at once and how long one may wait for a place
    (:mod:`pdi.server.limits`); cheap catalog look-ups never wait for them.
    ``cache_bytes`` bounds the whole N2R answers of names with a format kept
    in memory (:mod:`pdi.server.cache`; 0: none), which are then answered
    before any routing; ``app.state.cache`` is that cache.
    """
    opened = archive if archive is not None else Archive.open(location)
    work = limits if limits is not None else WorkLimits()
    cache = ResponseCache(cache_bytes)
    resolver = Resolver(opened, work, base_url, cache)
    api = ReadAPI(opened, work)
    pages = ReaderApp(opened, work)
    routes = [
        Route("/", pages.view),
        Route("/view", pages.view),
        Route("/uri-res/{service}", resolver.endpoint),
        Route("/api/resolve", api.resolve),
        Route("/api/ls", api.ls),
        Route("/api/meta", api.meta),
        Route("/api/cite", api.cite),
        Route("/api/series", api.series),
    ]
    app = Starlette(routes=routes, exception_handlers=HANDLERS, middleware=[Middleware(CachedAnswers, cache=cache)])
    app.state.archive = opened
    app.state.cache = cache
    return app
