"""The ``pdi`` click group: loads a command's module when the command is first asked for."""

from __future__ import annotations

import importlib
from typing import Any

import click

from pdi import __version__
from pdi.cli.commands import (
    COMMAND_HELP,
    COMMAND_MODULES,
    EXIT_INTERRUPTED,
    GROUP_HELP,
    INTERRUPTED_LINE,
    error_line,
)
from pdi.errors import PDIError


class PDIGroup(click.Group):
    """A click group that turns :class:`PDIError` into one stderr line and an exit status (Ctrl-C: 130).

    With ``lazy`` (command name -> modules of ``pdi.cli``, as
    :data:`COMMAND_MODULES`), it loads the modules of a command the first
    time the command is looked up. With ``short_help`` too (command name ->
    the first sentence of its help, as :data:`COMMAND_HELP`), listing the
    commands in ``--help`` loads none: click formats the list from stand-ins
    that carry that sentence.
    """

    def __init__(
        self,
        *args: Any,
        lazy: dict[str, tuple[str, ...]] | None = None,
        short_help: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = lazy or {}
        self._short_help = short_help or {}
        self._loaded: set[str] = set()

    def load(self, module: str) -> None:
        """Import ``pdi.cli.<module>`` and let it add its commands (once)."""
        if module not in self._loaded:
            self._loaded.add(module)
            importlib.import_module(f"pdi.cli.{module}").register(self)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        for module in self._lazy.get(cmd_name, ()):
            self.load(module)
        return super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """click's, but an unknown command's "Did you mean" looks among every command, not only those loaded."""
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand:
            raise click.exceptions.NoSuchCommand(
                str(args[0]), possibilities=self.list_commands(ctx), ctx=ctx
            ) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self._lazy) | set(self.commands))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's own list of commands, from stand-ins for those not loaded that have a stored help sentence."""
        listed: dict[str, click.Command] = {}
        for name in self.list_commands(ctx):
            if name not in self.commands and name in self._short_help:
                listed[name] = click.Command(name, help=self._short_help[name])
            else:
                command = self.get_command(ctx, name)
                if command is not None:
                    listed[name] = command
        click.Group.format_commands(click.Group(self.name, commands=listed), ctx, formatter)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PDIError as exc:
            click.echo(error_line(exc), err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:  # not click's "Aborted!", status 1: a shell's 128 + SIGINT
            click.echo("\n" + INTERRUPTED_LINE, err=True)
            ctx.exit(EXIT_INTERRUPTED)


@click.group(
    cls=PDIGroup,
    help=GROUP_HELP,
    lazy=COMMAND_MODULES,
    short_help=COMMAND_HELP,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="pdi")
def cli() -> None:
    """``pdi`` itself (click shows :data:`pdi.cli.GROUP_HELP` as its help)."""


def load_all() -> None:
    """Add every command now (for tests and tools that walk the command tree)."""
    assert isinstance(cli, PDIGroup)
    for modules in COMMAND_MODULES.values():
        for module in modules:
            cli.load(module)


