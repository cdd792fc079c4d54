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
``/api/ls?pattern=…&series=…&limit=…&offset=…``, ``/api/meta?pdi=…``,
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

import json
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Route

from pdi.archive import Archive, Generic, Resolved
from pdi.archive.describe import describe
from pdi.errors import LimitError, ParseError, PDIError
from pdi.identifier import PDI
from pdi.server.limits import Busy, WorkLimits

#: RFC 2169 services this resolver answers, and the others it knows of (501).
SERVICES = ("N2R", "I2R", "N2L", "N2Ls", "N2C", "N2Ns")
OTHER_SERVICES = ("N2Rs", "N2Cs", "L2R", "L2Ns", "L2Ls", "L2L", "L2C", "I2L", "I2Ls", "I2C", "I2N", "I2Ns", "I2Rs")
#: What an archived page served by N2R may do: run no script (``sandbox`` without
#: ``allow-scripts``, which also gives it an opaque origin, so it can read nothing of
#: the resolver's), and load nothing from anywhere but the archive itself: no image,
#: style sheet, font, frame or media from the live web, no form sent, no base reset.
ARCHIVED_CONTENT_POLICY = (
    "sandbox; default-src 'self' data:; script-src 'none'; object-src 'none';"
    " connect-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'self'"
)
#: Services that read (and hash) a whole representation: they run within :class:`WorkLimits`.
EXPENSIVE_SERVICES = ("N2R", "I2R", "N2C")
#: The largest ``limit`` of /api/ls.
MAX_LIST = 10_000


class Problem(Exception):
    """An HTTP error with an RFC 9457 body."""

    def __init__(self, status: int, title: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail = status, title, detail


def problem(status: int, title: str, detail: str) -> JSONResponse:
    """An RFC 9457 problem details response."""
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail}
    return JSONResponse(body, status_code=status, media_type="application/problem+json")


def create_app(
    location: str,
    *,
    archive: Archive | None = None,
    base_url: str | None = None,
    limits: WorkLimits | None = None,
) -> Starlette:
    """The resolver for the archive at ``location`` (opened now; ``archive`` to pass one already open).

    ``base_url`` (``https://resolver.example.org``) is put in front of the
    URLs that ``N2Ls`` and a ``300`` list; without it they are built from
    the request's ``Host``. ``N2L`` redirects with a relative ``Location``.
    ``limits`` bounds the expensive requests (those that read a whole
    representation) running at once and how long one may wait for a place
    (:mod:`pdi.server.limits`); cheap catalog look-ups never wait for them.
    """
    opened = archive if archive is not None else Archive.open(location)
    work = limits if limits is not None else WorkLimits()

    def n2r_path(name: PDI | str) -> str:
        return f"/uri-res/N2R?{_quote(str(name))}"

    def n2r_url(request: Request, name: PDI | str) -> str:
        base = base_url if base_url is not None else str(request.base_url)
        return base.rstrip("/") + n2r_path(name)

    def uri_list(urn: str, urls: list[str]) -> str:
        # RFC 2169's examples: the URN first, as a comment, then one URL a line
        return f"# {urn}\r\n" + "".join(f"{u}\r\n" for u in urls)

    async def uri_res(request: Request) -> Response:
        if request.path_params["service"] in EXPENSIVE_SERVICES:
            return await work.run(answer_uri_res, request)
        return await anyio.to_thread.run_sync(answer_uri_res, request)

    def answer_uri_res(request: Request) -> Response:
        service = request.path_params["service"]
        query = request.url.query
        if service not in SERVICES:
            if service in OTHER_SERVICES:
                raise Problem(501, "not implemented", f"this resolver does not offer the RFC 2169 service {service}")
            raise Problem(404, "not found", f"no RFC 2169 service {service!r} (try N2R, N2L, N2Ls, N2C, N2Ns)")
        if not query:
            raise Problem(400, "syntax error", f"{service} takes the URN as the query string: /uri-res/{service}?urn:pdi://…")
        name = _urn(query)
        if service in ("N2R", "I2R"):
            resolved = opened.resolve(name)
            if isinstance(resolved, Generic):  # one resource per format of each version: let the client choose
                body = uri_list(str(resolved.pdi), [n2r_url(request, n) for n in resolved.names])
                return PlainTextResponse(body, status_code=300, media_type="text/uri-list")
            return Response(resolved.data, media_type=_content_type(resolved), headers=_about(resolved))
        if service == "N2C":
            return JSONResponse(_description(opened, opened.resolve(name)))
        # N2Ns, N2L, N2Ls: only names the catalog holds, but their bytes need not be read
        resolved = opened.locate(name)
        if service == "N2Ns":
            names = [resolved.pdi] if isinstance(resolved, Generic) else [resolved.pdi, _generic(resolved)]
            return PlainTextResponse(uri_list(name, [str(n) for n in names]), media_type="text/uri-list")
        names = list(resolved.names) if isinstance(resolved, Generic) else [resolved.pdi]
        if service == "N2L" and len(names) == 1:
            return RedirectResponse(n2r_path(names[0]), status_code=302)
        # N2Ls, or N2L of a generic PDI: one location per format
        body = uri_list(name, [n2r_url(request, n) for n in names])
        return PlainTextResponse(body, status_code=200 if service == "N2Ls" else 300, media_type="text/uri-list")

    async def api_resolve(request: Request) -> Response:
        name = _param(request, "pdi")
        resolved = await work.run(opened.resolve, name)
        return JSONResponse(_description(opened, resolved, statements=False))

    def api_ls(request: Request) -> Response:
        limit = _integer(request, "limit", 100)
        if limit > MAX_LIST:
            raise LimitError(f"limit {limit} is more than {MAX_LIST}: page with offset")
        names = opened.ls(
            request.query_params.get("pattern") or None,
            series=request.query_params.get("series") or None,
            limit=limit,
            offset=_integer(request, "offset", 0),
        )
        return JSONResponse({"names": [str(n) for n in names]})

    def api_meta(request: Request) -> Response:
        name = _param(request, "pdi")
        history = [
            {"key": r.key, "value": r.value, "who": r.who, "at": r.at} for r in opened.history(name)
        ]
        return JSONResponse({"pdi": name, "meta": opened.meta(name), "history": history})

    async def api_cite(request: Request) -> Response:
        citation = _param(request, "citation")
        return JSONResponse((await work.run(opened.cite, citation)).to_json())

    def api_series(request: Request) -> Response:
        return JSONResponse(
            {"series": [{"name": s.name, "parent": s.parent, "authority": s.authority} for s in opened.series()]}
        )

    async def view(request: Request) -> Response:
        from pdi.server.viewer import render_home, render_view

        name = request.query_params.get("pdi")
        if not name:
            return HTMLResponse(render_home([s.name for s in opened.series()]))
        try:
            return HTMLResponse(await work.run(render_view, opened, name))
        except PDIError as exc:
            page = render_home([s.name for s in opened.series()], error=exc, value=name)
            return HTMLResponse(page, status_code=exc.http_status)

    async def on_problem(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Problem)
        return problem(exc.status, exc.title, exc.detail)

    async def on_pdi_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, PDIError)
        return problem(exc.http_status, exc.title, str(exc))

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        titles = {404: "not found", 405: "method not allowed"}
        detail = {404: f"no such page: {request.url.path}", 405: f"{request.method} is not allowed here: use GET"}
        return problem(exc.status_code, titles.get(exc.status_code, "error"), detail.get(exc.status_code, str(exc.detail)))

    async def on_busy(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Busy)
        answer = problem(503, "service unavailable", str(exc))
        answer.headers["Retry-After"] = str(max(1, round(exc.waited / 3)))
        return answer

    async def on_bug(request: Request, exc: Exception) -> Response:
        return problem(500, "internal error", f"the resolver failed on this request ({type(exc).__name__})")

    routes = [
        Route("/", view),
        Route("/view", view),
        Route("/uri-res/{service}", uri_res),
        Route("/api/resolve", api_resolve),
        Route("/api/ls", api_ls),
        Route("/api/meta", api_meta),
        Route("/api/cite", api_cite),
        Route("/api/series", api_series),
    ]
    handlers = {
        Problem: on_problem, PDIError: on_pdi_error, Busy: on_busy, HTTPException: on_http_error, Exception: on_bug,
    }
    app = Starlette(routes=routes, exception_handlers=handlers)
    app.state.archive = opened
    return app


def _urn(query: str) -> str:
    """The URN of an RFC 2169 query string: the inverse of :func:`_quote`.

    ``%23`` is the ``#`` a URL cannot carry and ``%25`` a ``%`` written so
    that it is not read as one of these two; every other escape is the PDI's
    own and is kept, so ``http:%2F%2F…`` ids travel unchanged.
    """
    out: list[str] = []
    i = 0
    while i < len(query):
        code = query[i + 1 : i + 3] if query[i] == "%" else ""
        if code == "23":
            out.append("#")
            i += 3
        elif code == "25":
            out.append("%")
            i += 3
        else:
            out.append(query[i])
            i += 1
    return "".join(out)


def _quote(name: str) -> str:
    """A PDI as an RFC 2169 query string: ``#`` as ``%23``, a ``%`` before ``23`` or ``25`` as ``%25``."""
    out: list[str] = []
    for i, ch in enumerate(name):
        if ch == "#":
            out.append("%23")
        elif ch == "%" and name[i + 1 : i + 3] in ("23", "25"):
            out.append("%25")
        else:
            out.append(ch)
    return "".join(out)


def _param(request: Request, key: str) -> str:
    value = request.query_params.get(key)
    if not value:
        raise ParseError(f"the query parameter {key}= is missing", rule=key)
    return value


def _integer(request: Request, key: str, default: int) -> int:
    raw = request.query_params.get(key)
    if raw is None or raw == "":
        return default
    if not raw.isdigit() or not raw.isascii():
        raise ParseError(f"{key}={raw[:40]!r} is not a number", text=raw[:40], offset=0, rule=key)
    if len(raw) > 12:
        raise LimitError(f"{key}= is at most 999999999999")
    return int(raw)


def _content_type(resolved: Resolved) -> str:
    from pdi.formats import registered_charset

    if resolved.fragment is None:
        charset = resolved.charset
    else:  # the fragment's own codec (no BOM: utf-16be), under its IANA name
        charset = registered_charset(resolved.fragment.charset) if resolved.fragment.charset else None
    return f"{resolved.media_type}; charset={charset}" if charset else resolved.media_type


def _about(resolved: Resolved) -> dict[str, str]:
    """Headers that say which name and which stored bytes a response is."""
    headers = {
        "Link": f'<{resolved.pdi}>; rel="canonical"',
        "X-PDI-SHA256": resolved.sha256,
        "Content-Security-Policy": ARCHIVED_CONTENT_POLICY,
        "X-Content-Type-Options": "nosniff",
    }
    if resolved.fragment is not None and resolved.fragment.past_end:
        headers["Warning"] = '299 pdi "the fragment lies wholly past the end: it selects nothing"'
    elif resolved.fragment is not None and resolved.fragment.clamped:
        headers["Warning"] = '299 pdi "the fragment reaches past the end: cut there"'
    return headers


def _generic(resolved: Resolved) -> str:
    name = str(resolved.pdi).split("#", 1)[0]
    return name.rsplit(".", 2)[0]


def _description(archive: Archive, resolved: Resolved | Generic, *, statements: bool = True) -> dict[str, Any]:
    """JSON about a resolved name (:func:`pdi.archive.describe.describe`), with the statements about it."""
    out = describe(resolved)
    if statements and isinstance(resolved, Resolved):
        out["meta"] = archive.meta(str(resolved.pdi).split("#", 1)[0])
    json.dumps(out)  # everything above is JSON already; fail here rather than half-way through a response
    return out
