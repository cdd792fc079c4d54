"""``pdi serve``: the resolver over HTTP (:mod:`pdi.server`) on uvicorn."""

from __future__ import annotations

import click

from pdi.cli.archive_cmd import archive_option


def register(cli: click.Group) -> None:
    """Add ``serve`` to the top-level ``pdi`` group."""

    @cli.command("serve")
    @click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
    @click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
    @archive_option
    def serve_cmd(host: str, port: int, archive: str) -> None:
        """Serve the archive read-only: RFC 2169 /uri-res/N2R?urn:pdi:… and friends, /api/…, and a viewer at /.

        A # in a name travels as %23 in an RFC 2169 query. Stop with Ctrl-C.
        """
        import uvicorn

        from pdi.server import create_app

        app = create_app(archive)
        click.echo(f"pdi: serving {archive} at http://{host}:{port}/ (Ctrl-C stops)", err=True)
        uvicorn.run(app, host=host, port=port, log_level="warning")
