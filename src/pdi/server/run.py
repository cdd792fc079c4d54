"""Running the resolver: the listening socket and uvicorn's server around the app.

:func:`listening_socket` binds before anything is served, so ``pdi serve``
can say where it serves (and a port in use is one clear error).
:func:`serve` runs uvicorn on that socket with the resolver's limits
(:mod:`pdi.server.limits`).
"""

from __future__ import annotations

import socket

from starlette.applications import Starlette

from pdi.errors import PDIError


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host`` and ``port`` (0: any free port); a :class:`PDIError` if it cannot be.

    It is made ``IPPROTO_TCP`` explicitly: asyncio sets ``TCP_NODELAY`` only
    on connections accepted from a socket that says it is TCP, and without it
    Nagle's algorithm held every small answer until the client's delayed ACK
    (about 40 ms a request).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise PDIError(f"cannot listen on {host} port {port}: {exc.strerror}") from exc
    return listener


def serve(app: Starlette, listener: socket.socket, *, header_timeout: float, max_connections: int) -> None:
    """Serve ``app`` on ``listener`` until interrupted (uvicorn, HTTP/1.1 with the request-head deadline)."""
    import uvicorn

    from pdi.server.limits import guarded_protocol

    config = uvicorn.Config(
        app, log_level="warning", http=guarded_protocol(header_timeout),
        limit_concurrency=max_connections, timeout_keep_alive=5,
    )
    # the socket itself: uvicorn would read an fd= as a Unix socket (no TCP_NODELAY again)
    uvicorn.Server(config).run(sockets=[listener])
