"""RFC 9457 problem details: how every error of the resolver is answered.

:class:`Problem` is an HTTP error raised by the resolver's own checks; the
:mod:`pdi.errors` family answers with the status its class names; a request
that found no place in time (:class:`Busy`, raised by :class:`pdi.server.process.limits.WorkLimits`) is ``503``
with ``Retry-After``, as is a storage error (:class:`~pdi.errors.StoreError`; a write asked of a resolver that may
only read its archive, :class:`~pdi.errors.ReadOnlyArchiveError`, without it); anything else is a bug, ``500``,
without a traceback.

The methods a path takes are read from the app's route table, never written
twice (:func:`allowed_methods`): several routes may serve one path, one a
method (``GET`` and ``POST /api/annotation``), and a ``405``'s ``Allow``
(RFC 9110 §15.5.6) lists the methods of all of them, not only of the first
whose path matched. :class:`Options` answers ``OPTIONS`` (§9.3.7) with the same
list, ``204`` and ``Allow``, for every path a route serves.
"""

from __future__ import annotations

import http
import logging
from collections.abc import Iterable

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from pdi._wording import MESSAGE_MOST, clipped
from pdi.errors import (
    CommitUnknownError,
    DamagedError,
    ParseError,
    PDIError,
    ReadOnlyArchiveError,
    ScopeError,
    StoreError,
)
from pdi.identifier import saying_name_meant
from pdi.server.http.bodies import sends_content
from pdi.server.http.loglines import RefusalLog
from pdi.server.http.metrics import counters

#: The ``Retry-After`` of a storage error's 503: a failover of PostgreSQL takes seconds (docs/reference/postgresql.md).
STORE_RETRY_SECONDS = 5

_log = logging.getLogger("pdi.server")
#: A storage error's message, which its answer leaves out (:meth:`~pdi.errors.StoreError.over_http`), said in the
#: server's log instead: at most a line a second (a failover fails every request for a while), the next counting.
_STORE_ERRORS = RefusalLog(done="storage errors")


def note_store_error(client: str | None, where: str, exc: StoreError, said: str | None = None) -> None:
    """Say in the server's log what ``exc`` says (its answer to ``client``, asking ``where``, does not), or
    ``said`` in its place."""
    _STORE_ERRORS.say_line(_log, "storage error answering %s (%s): %s%s", client, clipped(where, 200),
                           clipped(exc.message if said is None else said, MESSAGE_MOST))


class Busy(Exception):
    """No place for an expensive request came free in time (:class:`~pdi.server.process.limits.WorkLimits`; answered 503)."""

    def __init__(self, waited: float, message: str | None = None) -> None:
        super().__init__(message or f"the resolver is busy: no place for this request came free within {waited:g} s")
        self.waited = waited


class Problem(Exception):
    """An HTTP error with an RFC 9457 body."""

    #: the ``WWW-Authenticate`` challenge of a ``401`` (RFC 9110 §11.6.1), if any
    challenge: str | None = None

    def __init__(self, status: int, title: str, detail: str, *, type: str = "about:blank",
                 extensions: dict[str, object] | None = None) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail = status, title, detail
        #: the problem's type (RFC 9457 §3.1.1): ``about:blank``, or one of pdi's own described on the ``/api`` page
        #: (:data:`pdi.server.pages.api_docs.OTHER_PROBLEM_TYPES`), whose title it keeps
        self.type = type
        #: its extension members (§3.2)
        self.extensions = dict(extensions or {})
        #: more header fields of the answer (the ``Allow`` of a ``405``, RFC 9110 §15.5.6)
        self.headers: dict[str, str] = {}


#: RFC 9110 §15's phrases where Python's http.HTTPStatus keeps an older one (RFC 7231's, RFC 4918's).
_PHRASES = {413: "Content Too Large", 414: "URI Too Long", 416: "Range Not Satisfiable", 422: "Unprocessable Content"}


def status_phrase(status: int) -> str | None:
    """The reason phrase RFC 9110 §15 gives a status (``None`` for one it does not name)."""
    if status in _PHRASES:
        return _PHRASES[status]
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return None


def problem(
    status: int, title: str, detail: str, *, type: str = "about:blank", extensions: dict[str, object] | None = None
) -> JSONResponse:
    """An RFC 9457 problem details response (``extensions``: its extension members, §3.2).

    A problem of type ``about:blank`` is titled with the status's phrase (§4.2.1: "Not Found"), whatever
    ``title`` says; a problem of pdi's own type (:attr:`pdi.errors.PDIError.problem_type`) keeps its title.
    The ``detail`` is "a human-readable explanation" (§3.1.4), which a client prints: escaped and cut in its
    middle as every line pdi writes (:func:`pdi._wording.clipped`), so one that quotes what the request sent (a
    name of 60,000 characters, an escape sequence) neither drives the client's terminal nor comes back whole.
    """
    if type == "about:blank":
        title = status_phrase(status) or title
    body: dict[str, object] = {"type": type, "title": title, "status": status,
                               "detail": clipped(detail, MESSAGE_MOST)}
    body.update({k: v for k, v in (extensions or {}).items() if k not in body})
    return JSONResponse(body, status_code=status, media_type="application/problem+json")


def problem_body(status: int, detail: str) -> bytes:
    """The body of an ``about:blank`` problem, titled with the status's phrase, as :func:`problem` writes it, for
    an answer written without a response object (:mod:`pdi.server.process.connection`'s refusals, the cache's
    ``416``: :func:`pdi.server.http.conditional.unsatisfiable`)."""
    return bytes(problem(status, "", detail).body)


async def on_problem(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Problem)
    answer = problem(exc.status, exc.title, exc.detail, type=exc.type, extensions=exc.extensions)
    answer.headers.update(exc.headers)
    if exc.challenge is not None:
        answer.headers["WWW-Authenticate"] = exc.challenge
    return answer


def status_of(error: PDIError, request: Request | None = None) -> int:
    """The status ``error`` is answered with: its class's, but a ``415`` or a ``413`` only where the request sends
    content.

    ``415`` says that the request's content is in a format the method does not take (RFC 9110 §15.5.16),
    ``413`` that it is larger than the server will take (§15.5.14): an
    :class:`~pdi.errors.UnsupportedError` or a :class:`~pdi.errors.LimitError` of a request that sends none
    (a ``GET``'s name, fragment or parameter that pdi cannot act on: a fragment scheme this media type has no
    reading for, a pattern where a name is needed, a search query longer than its bound, more work than the
    resolver's limits allow) is the client's request that will not be answered, ``400``, still titled
    "unsupported" or "limit exceeded". ``request`` ``None``: a page of the reader's app, which is a ``GET``.
    """
    if error.http_status not in (413, 415):
        return error.http_status
    if request is not None and request.method not in ("GET", "HEAD", "OPTIONS", "DELETE") \
            and sends_content(request.scope["headers"]):
        return error.http_status
    return 400


async def on_pdi_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, PDIError)
    # a write of unknown outcome: how to find out, in the words of a request that sent an Idempotency-Key or none
    # where its route reads one (pdi.server.write.api says so in request.state), of one its route applies once
    # however often it is sent (request.state.same_again: what sending it again answers), else of one none replays;
    # the log says what was lost where, and that advice (not the command line's, a deposit's: pdi add --id)
    advice = said = None
    if isinstance(exc, CommitUnknownError):
        advice = exc.advice_over_http(getattr(request.state, "idempotency_keyed", None),
                                      again=getattr(request.state, "same_again", None))
        said = f"{exc.what}: the client is told: {advice}"
    if isinstance(exc, DamagedError):  # stored octets that are not what their SHA-256 says
        counters().fixity_failures.inc()
    elif isinstance(exc, StoreError):
        counters().store_errors.labels("store").inc()
        note_store_error(request.client.host if request.client else None, f"{request.method} {request.url.path}",
                         exc, said)
    if isinstance(exc, ParseError):  # a name pasted from an N2R address, its "#" written %23: the name meant, as pdi says
        exc = saying_name_meant(exc)
    detail = exc.over_http() if advice is None else f"{CommitUnknownError.LOST_OVER_HTTP}: {advice}"
    answer = problem(status_of(exc, request), exc.title, detail, type=exc.problem_type, extensions=exc.details)
    if isinstance(exc, StoreError) and not isinstance(exc, ReadOnlyArchiveError):
        # a database or blob store not answering (a failover under way): ask again soon; a resolver that may only
        # read the archive answers a write so however often it is asked
        answer.headers["Retry-After"] = str(STORE_RETRY_SECONDS)
    elif isinstance(exc, ScopeError) and request.headers.get("authorization", "")[:7].lower() == "bearer ":
        # a live token whose role or series does not cover this: RFC 6750 §3.1's insufficient_scope
        answer.headers["WWW-Authenticate"] = 'Bearer realm="pdi", error="insufficient_scope"'
    return answer


#: The order methods are listed in (the rest after them, alphabetically).
_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(routes: Iterable[BaseRoute], scope: Scope) -> list[str]:
    """Every method a route of ``routes`` takes at the request's path, and ``OPTIONS`` (:class:`Options`
    answers it) if any does; none when no route serves the path. In one order: Starlette keeps a route's
    methods in a set."""
    methods: set[str] = set()
    probe = {**scope, "type": "http", "method": "OPTIONS"}  # a path match is a partial match at least
    for route in routes:
        if route.matches(probe)[0] is not Match.NONE:
            methods |= set(route.methods or ()) if isinstance(route, Route) else {"GET", "HEAD"}
    if methods:
        methods.add("OPTIONS")
    return sorted(methods, key=lambda m: (_ORDER.index(m) if m in _ORDER else len(_ORDER), m))


class Options:
    """ASGI middleware: ``OPTIONS`` of a path some route serves is ``204`` with its ``Allow`` (RFC 9110 §9.3.7);
    of a route that answers ``OPTIONS`` itself (the annotation server's, with its ``Link`` types and CORS),
    what that route answers; of any other path, what the app answers (``404``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "OPTIONS" and scope.get("raw_path") == b"*":
            # OPTIONS * (asterisk-form, RFC 9112 §3.2.4): the server's own methods, any route's (RFC 9110 §9.3.7)
            every = sorted({m for r in scope["app"].routes if isinstance(r, Route) for m in (r.methods or ())}
                           | {"OPTIONS"}, key=lambda m: (_ORDER.index(m) if m in _ORDER else len(_ORDER), m))
            await Response(status_code=204, headers={"Allow": ", ".join(every)})(scope, receive, send)
            return
        if scope["type"] == "http" and scope["method"] == "OPTIONS":
            routes = scope["app"].routes
            if any(isinstance(r, Route) and r.matches(scope)[0] is Match.FULL for r in routes):
                await self.app(scope, receive, send)
                return
            allowed = allowed_methods(routes, scope)
            if allowed:
                await Response(status_code=204, headers={"Allow": ", ".join(allowed)})(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def on_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    titles = {404: "not found", 405: "method not allowed"}
    allowed = ", ".join(allowed_methods(request.app.routes, request.scope)) if exc.status_code == 405 else ""
    # a HEAD is answered as its GET would be, body length included (RFC 9110 §8.6, §9.3.2): so its 405 names GET
    method = "GET" if request.method == "HEAD" else request.method
    detail = {404: f"no such page: {request.url.path}", 405: f"{method} is not allowed here: use {allowed}"}
    answer = problem(exc.status_code, titles.get(exc.status_code, "error"), detail.get(exc.status_code, str(exc.detail)))
    if exc.status_code == 405:
        answer.headers["Allow"] = allowed
    return answer


async def on_busy(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Busy)
    answer = problem(503, "service unavailable", str(exc))
    answer.headers["Retry-After"] = str(max(1, round(exc.waited / 3)))
    return answer


async def on_bug(request: Request, exc: Exception) -> Response:
    return problem(500, "internal error", f"the resolver failed on this request ({type(exc).__name__})")


#: Starlette's exception handlers, most specific first.
HANDLERS = {Problem: on_problem, PDIError: on_pdi_error, Busy: on_busy, HTTPException: on_http_error, Exception: on_bug}
