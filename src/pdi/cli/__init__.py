"""The ``pdi`` command (an edge: parse argv, call a core or the archive, print).

Each family of subcommands lives in its own module here and is added to the
top-level group below. Errors from the :mod:`pdi.errors` family become one
line on stderr and the exit status the error class names; nothing else is
caught, so a bug still shows its traceback.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from pdi import __version__
from pdi.errors import PDIError


def one_line(text: str) -> str:
    """``text`` with every control character (CR, LF, ESC …) escaped, so it prints as one line."""
    return "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text
    )


class PDIGroup(click.Group):
    """A click group that turns :class:`PDIError` into one stderr line and an exit status."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PDIError as exc:
            click.echo(f"pdi: {exc.title}: {one_line(str(exc))}", err=True)
            ctx.exit(exc.exit_code)


@click.group(cls=PDIGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pdi")
def cli() -> None:
    """Persistent document identifiers: mint, archive and resolve urn:pdi names.

    Exit status: 0 success, 1 syntax error, 3 integrity check failed,
    4 not found, 5 immutability conflict, 6 unsupported, 7 limit exceeded,
    8 storage error, 2 bad command-line usage.
    """


def _register() -> None:
    # One module per family of subcommands, each owning its own commands.
    from pdi.cli import archive_cmd, capture_cmd, mhtml_cmd, parse_cmd, text_cmd, uri_cmd

    for module in (uri_cmd, parse_cmd, text_cmd, archive_cmd, mhtml_cmd, capture_cmd):
        module.register(cli)


_register()


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``pdi`` console script."""
    cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="pdi")
