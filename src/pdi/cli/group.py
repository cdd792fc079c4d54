"""The ``pdi`` click group: loads a command's module when the command is first asked for."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
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

#: What a hyphen inside the help is written as while click wraps it: a character click's wrapper never breaks after.
_UNBROKEN_HYPHEN = "\u2011"


class PDIHelpFormatter(click.HelpFormatter):
    """click's, but a help line never ends at a hyphen inside a word: ``pdi docs how-to/backup``, ``--replay-port``
    and ``[default: pdi-archive]`` stay whole on one line, so what a reader copies from it is what pdi takes.

    click wraps with a :class:`textwrap.TextWrapper` that breaks after hyphens; each text is given to it with its
    hyphens as U+2011 (a non-breaking hyphen, which it does not break after, of the same width) and they are
    written back as ``-`` when the help is read."""

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        super().write_usage(prog.replace("-", _UNBROKEN_HYPHEN), args.replace("-", _UNBROKEN_HYPHEN), prefix)

    def write_text(self, text: str) -> None:
        super().write_text(text.replace("-", _UNBROKEN_HYPHEN))

    def write_dl(self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        super().write_dl([(term.replace("-", _UNBROKEN_HYPHEN), text.replace("-", _UNBROKEN_HYPHEN))
                          for term, text in rows], col_max, col_spacing)

    def getvalue(self) -> str:
        return super().getvalue().replace(_UNBROKEN_HYPHEN, "-")


class PDIContext(click.Context):
    """The context of ``pdi`` and of each of its commands: help laid out by :class:`PDIHelpFormatter`."""

    formatter_class = PDIHelpFormatter


def use_pdi_context(command: click.Command) -> None:
    """Have ``command`` (and, a group, every command in it) lay its help out with :class:`PDIContext`."""
    command.context_class = PDIContext
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            use_pdi_context(sub)


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

    context_class = PDIContext

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        """click's, and the command lays its help out as ``pdi``'s does (:func:`use_pdi_context`)."""
        use_pdi_context(cmd)
        super().add_command(cmd, name)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        for module in self._lazy.get(cmd_name, ()):
            self.load(module)
        command = super().get_command(ctx, cmd_name)
        if command is not None:  # a group's commands may have been added to it after it was added here
            use_pdi_context(command)
        return command

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


