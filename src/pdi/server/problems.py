"""RFC 9457 problem details: how every error of the resolver is answered.

:class:`Problem` is an HTTP error raised by the resolver's own checks; the
:mod:`pdi.errors` family answers with the status its class names; a request
that found no place in time (:class:`~pdi.server.limits.Busy`) is ``503``
with ``Retry-After``; anything else is a bug, ``500``, without a traceback.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pdi.errors import PDIError
from pdi.server.limits import Busy


class Problem(Exception):
    """An HTTP error with an RFC 9457 body."""

    #: the ``WWW-Authenticate`` challenge of a ``401`` (RFC 9110 §11.6.1), if any
    challenge: str | None = None

    def __init__(self, status: int, title: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail = status, title, detail
        #: more header fields of the answer (the ``Allow`` of a ``405``, RFC 9110 §15.5.6)
        self.headers: dict[str, str] = {}


def problem(
    status: int, title: str, detail: str, *, type: str = "about:blank", extensions: dict[str, object] | None = None
) -> JSONResponse:
    """An RFC 9457 problem details response (``extensions``: its extension members, §3.2)."""
    body: dict[str, object] = {"type": type, "title": title, "status": status, "detail": detail}
    body.update({k: v for k, v in (extensions or {}).items() if k not in body})
    return JSONResponse(body, status_code=status, media_type="application/problem+json")


async def on_problem(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Problem)
    answer = problem(exc.status, exc.title, exc.detail)
    answer.headers.update(exc.headers)
    if exc.challenge is not None:
        answer.headers["WWW-Authenticate"] = exc.challenge
    return answer


async def on_pdi_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, PDIError)
    return problem(exc.http_status, exc.title, str(exc), type=exc.problem_type, extensions=exc.details)


async def on_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    titles = {404: "not found", 405: "method not allowed"}
    # Starlette lists a route's methods from a set, in no fixed order: say them in one
    order = ("GET", "HEAD", "POST", "PUT", "DELETE")
    methods = (exc.headers.get("Allow", "GET") if exc.headers else "GET").split(", ")
    allowed = ", ".join(sorted(methods, key=lambda m: (order.index(m) if m in order else len(order), m)))
    detail = {404: f"no such page: {request.url.path}", 405: f"{request.method} is not allowed here: use {allowed}"}
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
