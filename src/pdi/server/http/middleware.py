"""The shape every ASGI middleware of the resolver shares: it acts on HTTP requests and passes the rest on."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send


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
