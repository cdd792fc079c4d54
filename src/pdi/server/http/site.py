"""Where the resolver's own paths are as a browser reaches them: under the path of ``pdi serve --base-url``.

An institution may serve the resolver at a path of a host rather than at its root: ``https://library.example/pdi/``
proxied to ``http://127.0.0.1:8000/``, the proxy stripping ``/pdi`` (nginx's ``location /pdi/ { proxy_pass
http://127.0.0.1:8000/; }``, docs/how-to/deploy.md). The routes still see ``/series``, ``/view``, ``/uri-res/N2R``; a browser must be sent
to ``/pdi/series`` … . :func:`site_path` is that path, read from the base URL; :data:`site` holds it while a request
is answered (:class:`SitePath`), and :func:`at` puts it in front of one of the resolver's own paths.

The pages link their own paths absolutely under it (``/pdi/series``), not relatively (``series``, ``../series``):
one page is reached at several depths (``/`` and ``/view``; ``/series/S`` and ``/series/S/2024/05``; an error page
at any path at all), and a relative link would have to be worked out again for each, where an absolute path under
the base means the same from every one. It is put in where a page is assembled
(:func:`pdi.server.pages.layout.page`, :func:`in_pages`) rather than at each link, so that a page's code writes the
paths its routes have and none of them can be missed; a page's script reads it from its ``<html data-site>``. The
``Location``, ``Content-Location`` and ``Link`` fields of every answer of the app that name a path of it are moved
under it too (:class:`SitePath`), but for the answers the cache keeps (N2R's, N2L's ``302``, a ``304``), which the
connection sends again without any middleware (:mod:`pdi.server.process.connection`): their paths are made under
it where they are made (:attr:`pdi.server.protocol.resolver.Resolver.site`; a name's kept N2L ``Location`` with
them), and the app sends them marked :data:`SITED`, which :class:`SitePath` leaves as they are. The origin and base
URL a page names (the viewer's policy, a tombstone's citation) are the base URL's there (:func:`origin_of`, :func:`base_of`): the request's
``Host`` is the proxy's way to pdi. The sign-in cookie's ``Path`` and ``/openapi.json``'s server are the path too.
Without a base URL, or one at a host's root, the path is empty and nothing changes.
"""

from __future__ import annotations

import contextvars
import html
import re
from typing import Final
from urllib.parse import quote, urlsplit

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pdi.server.http.middleware import HTTPMiddleware

__all__ = ["SITED", "SitePath", "at", "base_of", "in_pages", "origin_of", "site", "site_path"]

#: The path of the base URL of the request being answered, without its last ``/`` (``/pdi``); empty at a root.
site: contextvars.ContextVar[str] = contextvars.ContextVar("pdi_site", default="")
#: The base URL without its last ``/`` while a request is answered, when it has a path; empty otherwise.
_base: contextvars.ContextVar[str] = contextvars.ContextVar("pdi_site_base", default="")


def site_path(base_url: str | None) -> str:
    """The path of ``base_url`` without its last ``/`` (``https://library.example/pdi/`` → ``/pdi``): empty for
    none, or for a base URL at its host's root. A character no path has (``"``, ``<``, a space) is %-escaped."""
    if not base_url:
        return ""
    # %-escaped where it is not a path's character (RFC 3986 §3.3), so that it is one in any attribute it is put in
    return quote(urlsplit(base_url).path.rstrip("/"), safe="/%:@!$&'()*+,;=-._~")


def base_of(request: Request) -> str:
    """The resolver's base URL as a reader reaches it, without its last ``/``: the base URL, when it has a path
    (the request's ``Host`` is then the proxy's way to pdi, not the reader's), else the request's own, as before."""
    return _base.get() or str(request.base_url).rstrip("/")


def origin_of(request: Request) -> str:
    """The origin a reader reaches the resolver at (``scheme://host[:port]``): :func:`base_of`'s, when the base URL
    has a path, else the request's scheme and ``Host`` as sent."""
    base = _base.get()
    if base:
        parts = urlsplit(base)
        return f"{parts.scheme}://{parts.netloc}"
    return f"{request.url.scheme}://{request.headers.get('host', '')}"


def at(path: str) -> str:
    """One of the resolver's own paths (``/series``, ``/view?pdi=…``) as a browser reaches it: under the base URL's
    path. Anything else (an absolute URL, a network-path ``//host``, a fragment ``#main``) is returned as it is."""
    if path.startswith("/") and not path.startswith("//"):
        return site.get() + path
    return path


#: The attributes of the pages that hold a URL of the resolver (HTML's ``href``, ``src``, ``action``, ``poster``,
#: ``formaction``, ``<object data>``, and the ``data-`` attributes a page's script loads from): their values that
#: are a root-relative path (one ``/``, not two) are moved under the base URL's path. Text attributes (``value``,
#: ``title``, ``alt``, ``data-pdi`` …) are left as they are: what a reader typed may begin with ``/``.
_URL_ATTRIBUTE: Final = re.compile(
    r'(?<=[\s"])((?:href|src|action|poster|formaction|data|data-src|data-rfc-url|data-pdfjs|data-worker|data-wasm'
    r'|data-cmaps|data-fonts)=")/(?!/)')


def in_pages(document: str) -> str:
    """``document``, one of the resolver's own HTML pages, with the paths of its URL attributes under the base URL's
    path (:data:`_URL_ATTRIBUTE`) and its ``<html>`` element saying that path in ``data-site`` for its script;
    ``document`` itself at a host's root. A value the page escaped (``&quot;``) is text, never an attribute here."""
    prefix = html.escape(site.get())  # its & as &amp; in an attribute
    if not prefix:
        return document
    moved = _URL_ATTRIBUTE.sub(lambda m: m.group(1) + prefix + "/", document)
    return moved.replace("<html ", f'<html data-site="{prefix}" ', 1)


#: The fields whose value is one URL, a root-relative path of the app's when an answer makes one (RFC 9110
#: §10.2.2, §8.7: a redirect's, N2R's whole version's).
_PATH_FIELDS: Final = frozenset({b"location", b"content-location"})
#: A ``Link`` field's target that is a root-relative path (``</api/manifest?…>``).
_LINK_TARGET: Final = re.compile(rb"<(/(?!/))")
#: A key of an answer's ``http.response.start`` message, true when its paths are under the base URL's path already
#: (an answer the cache keeps, made there: :class:`pdi.server.protocol.entity_answers.RawResponse`,
#: :class:`pdi.server.process.cache.CachedAnswers`): :class:`SitePath` does not move them twice. A key, not a path's
#: shape: a path of the app may begin as the base URL's does (``--base-url https://host/series/`` and ``/series/S``).
SITED: Final = "pdi.sited"


class SitePath(HTTPMiddleware):
    """ASGI middleware: :data:`site` is :func:`site_path` of ``base_url`` while a request is answered,
    and an answer's ``Location`` and ``Content-Location`` that are a root-relative path (``/uri-res/N2R?…``, a
    sign-in's way back) and the root-relative targets of its ``Link`` are moved under it. Absolute URLs (made from
    the base URL already) are left as they are, and so are those of an answer marked :data:`SITED`; a path an
    answer's body names is the handler's to write with :func:`at`."""

    def __init__(self, app: ASGIApp, base_url: str | None = None) -> None:
        super().__init__(app)
        self.prefix = site_path(base_url)
        self.base = base_url.rstrip("/") if base_url and self.prefix else ""
        self._bytes = self.prefix.encode("latin-1")

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.prefix:
            await self.app(scope, receive, send)
            return
        prefix = self._bytes

        async def moved(message: Message) -> None:
            if message["type"] == "http.response.start" and not message.get(SITED):
                headers = []
                for key, value in message.get("headers", []):
                    name = key.lower()
                    if name in _PATH_FIELDS and value.startswith(b"/") and not value.startswith(b"//"):
                        value = prefix + value
                    elif name == b"link":
                        value = _LINK_TARGET.sub(lambda m: b"<" + prefix + m.group(1), value)
                    headers.append((key, value))
                message = {**message, "headers": headers}
            await send(message)

        token, based = site.set(self.prefix), _base.set(self.base)
        try:
            await self.app(scope, receive, moved)
        finally:
            _base.reset(based)
            site.reset(token)
