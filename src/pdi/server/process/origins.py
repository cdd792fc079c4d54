"""Two origins in one server: the resolver's and replay's, told apart by the socket a request came in on.

``pdi serve`` listens on two sockets (the resolver's port and the replay
port) in the same process or processes; :class:`ByPort` hands each request to
the app of the port it arrived at (the connection's local address, which a
client cannot choose, unlike a ``Host`` header). A request on the replay
port never reaches the resolver's app, and the resolver's app has no replay
routes, so neither origin serves the other's pages. Lifespan events go to
the resolver's app. ``state`` is the resolver's (``pdi serve`` finds its
cache of whole answers there, :mod:`pdi.server.process.cache`).
"""

from __future__ import annotations

from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send


class ByPort:
    """ASGI app: requests to local port ``replay_port`` go to ``replay``, all others to ``resolver``."""

    def __init__(self, resolver: ASGIApp, replay: ASGIApp, replay_port: int) -> None:
        self.resolver = resolver
        self.replay = replay
        self.replay_port = replay_port
        self.state: Any = getattr(resolver, "state", None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        server = scope.get("server")
        if scope["type"] in ("http", "websocket") and server is not None and server[1] == self.replay_port:
            await self.replay(scope, receive, send)
        else:
            await self.resolver(scope, receive, send)
