"""The shape every ASGI middleware of the resolver shares: it acts on HTTP requests and passes the rest on."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from pdi.server.http.problems import problem


class HTTPMiddleware:
    """ASGI middleware for HTTP requests: any other scope (``lifespan``, ``websocket``) goes to ``app`` untouched.

    A subclass says what it does with a request in :meth:`http`.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one HTTP request (``scope["type"] == "http"``)."""
        raise NotImplementedError


#: The request fields a ``HEAD`` loses (:class:`HeadWithoutRange`).
RANGE_FIELDS = (b"range", b"if-range")


class HeadWithoutRange(HTTPMiddleware):
    """ASGI middleware: a ``HEAD`` request's ``Range`` and ``If-Range`` are dropped before anything reads them.

    RFC 9110 §14.2: "A server MUST ignore a Range header field received
    with a request method that is unrecognized or for which range handling
    is not defined" — it is defined for ``GET`` alone, so a ``HEAD`` is
    answered as its ``GET`` without ``Range`` would be: ``200`` and the
    whole representation's ``Content-Length``, never ``206`` or ``416``.
    """

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "HEAD" and any(k in RANGE_FIELDS for k, _ in scope["headers"]):
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k not in RANGE_FIELDS]}
        await self.app(scope, receive, send)


class HostField(HTTPMiddleware):
    """ASGI middleware: a request with more than one ``Host`` field, or an HTTP/1.1 request with none, is ``400``
    (RFC 9112 §3.2: a server MUST; which host it asks for, and so which base URL its answers name, is not known),
    an RFC 9457 problem, with ``Connection: close``. Answered as any answer is, in the connection's order of
    requests (a request before it on the connection is answered first), with its ``Date``, logged and counted."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        hosts = sum(1 for key, _ in scope["headers"] if key == b"host")
        if hosts > 1 or (hosts == 0 and scope.get("http_version") == "1.1"):
            answer = problem(400, "Bad Request", f"a request has one Host field (RFC 9112 §3.2); this one has {hosts}")
            answer.headers["Connection"] = "close"
            await answer(scope, receive, send)
            return
        await self.app(scope, receive, send)
