"""``pdi serve``: the resolver over HTTP (:mod:`pdi.server`) on uvicorn."""

from __future__ import annotations

import click

from pdi.cli.archive_cmd import archive_option


def register(cli: click.Group) -> None:
    """Add ``serve`` to the top-level ``pdi`` group."""

    @cli.command("serve")
    @click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
    @click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
    @click.option("--base-url", help="Public URL of the resolver, put in front of the locations N2Ls lists "
                  "(default: from each request's Host).")
    @archive_option
    def serve_cmd(host: str, port: int, base_url: str | None, archive: str) -> None:
        """Serve the archive read-only: RFC 2169 /uri-res/N2R?urn:pdi:… and friends, /api/…, and a viewer at /.

        A # in a name travels as %23 in an RFC 2169 query (a % before 23 or 25
        as %25). --port 0 takes a free port and says which. Stop with Ctrl-C.
        """
        import socket

        import uvicorn

        from pdi.errors import PDIError
        from pdi.server import create_app

        app = create_app(archive, base_url=base_url)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((host, port))
        except OSError as exc:
            listener.close()
            raise PDIError(f"cannot listen on {host} port {port}: {exc.strerror}") from exc
        bound = listener.getsockname()[1]
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        click.echo(f"pdi: serving {archive} at http://{shown}:{bound}/ (Ctrl-C stops)", err=True)
        uvicorn.run(app, fd=listener.fileno(), log_level="warning")
