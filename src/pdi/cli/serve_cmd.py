"""``pdi serve``: the resolver over HTTP (:mod:`pdi.server`) on uvicorn."""

from __future__ import annotations

import click

from pdi.cli.archive_cmd import archive_option
from pdi.server.limits import (
    DEFAULT_HEADER_SECONDS,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_QUEUE_SECONDS,
    DEFAULT_WORKERS,
)


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option("--base-url", help="Public URL of the resolver, put in front of the locations N2Ls lists "
              "(default: from each request's Host).")
@click.option("--evaluations", default=DEFAULT_WORKERS, show_default=True, type=click.IntRange(1, 64),
              help="Expensive requests (N2R, N2C, /api/resolve, /api/cite, /view: they read a whole "
              "document) served at once; the others wait, cheap look-ups do not.")
@click.option("--queue-seconds", default=DEFAULT_QUEUE_SECONDS, show_default=True,
              type=click.FloatRange(min=0.1), help="How long an expensive request may wait before it is answered 503.")
@click.option("--header-timeout", default=DEFAULT_HEADER_SECONDS, show_default=True,
              type=click.FloatRange(min=0.1), help="Seconds a client has to send a request's line and headers.")
@click.option("--max-connections", default=DEFAULT_MAX_CONNECTIONS, show_default=True,
              type=click.IntRange(min=1), help="Connections at once; beyond them requests are answered 503.")
@archive_option
def serve_cmd(
    host: str, port: int, base_url: str | None, evaluations: int, queue_seconds: float,
    header_timeout: float, max_connections: int, archive: str,
) -> None:
    """Serve the archive read-only: RFC 2169 /uri-res/N2R?urn:pdi:… and friends, /api/…, and a viewer at /.

    A # in a name travels as %23 in an RFC 2169 query (a % before 23 or 25
    as %25). --port 0 takes a free port and says which. Stop with Ctrl-C.
    A stranger cannot starve other readers: expensive requests run a few
    at a time (--evaluations), a slow or silent client is disconnected
    (--header-timeout), and connections are capped (--max-connections).
    """
    from pdi.server import create_app
    from pdi.server.limits import WorkLimits
    from pdi.server.run import listening_socket, serve

    app = create_app(archive, base_url=base_url, limits=WorkLimits(evaluations, queue_seconds))
    listener = listening_socket(host, port)
    bound = listener.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"pdi: serving {archive} at http://{shown}:{bound}/ (Ctrl-C stops)", err=True)
    serve(app, listener, header_timeout=header_timeout, max_connections=max_connections)


def register(cli: click.Group) -> None:
    """Add this module's commands to the top-level ``pdi`` group."""
    cli.add_command(serve_cmd)
