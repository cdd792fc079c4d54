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
