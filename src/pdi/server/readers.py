"""Who reads: each request's reader, for private series and embargoes (:mod:`pdi.archive.access`).

Reading needs no token; a request that presents one (``Authorization:
Bearer …``, RFC 6750 §2.1) reads as its holder, and may then read the private
series and embargoed documents of the token's scope (any role). The reader
is set for the whole request (:data:`pdi.archive.access.current_reader`, a
context variable that the worker threads reading for it inherit), so every
read path — N2R and the other RFC 2169 services, ``/api/*``, the viewer,
replay, search and the browse pages — answers as the archive answers that
reader. A token that is unknown, revoked or malformed is ``401`` (RFC 6750
§3.1) rather than read as anonymous, so a reader is never silently shown
less than they are allowed to see.
"""

from __future__ import annotations

import anyio.to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

from pdi.archive import Archive
from pdi.archive.access import ANONYMOUS, Reader, current_reader
from pdi.server.problems import problem


class Readers:
    """ASGI middleware: the reader of each HTTP request, anonymous or the token it presents."""

    def __init__(self, app: ASGIApp, archive: Archive) -> None:
        self.app = app
        self.archive = archive

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = next((v for k, v in scope["headers"] if k == b"authorization"), None)
        reader = ANONYMOUS
        if header is not None:
            scheme, _, secret = header.decode("latin-1").partition(" ")
            record = None
            if scheme.lower() != "bearer" or not secret.strip():
                detail, error = "Authorization must be 'Bearer <token>'", "invalid_request"
            else:
                record = await anyio.to_thread.run_sync(self.archive.authenticate, secret.strip())
                detail, error = "the token is not known, or was revoked", "invalid_token"
            if record is None:
                refusal = problem(401, "unauthorized", detail)
                refusal.headers["WWW-Authenticate"] = f'Bearer realm="pdi", error="{error}"'
                await refusal(scope, receive, send)
                return
            reader = Reader(record)
        token = current_reader.set(reader)
        try:
            await self.app(scope, receive, send)
        finally:
            current_reader.reset(token)
