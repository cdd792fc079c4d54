"""``pdi --help`` and ``pdi --version`` without importing click: the same bytes click writes.

Importing click takes more than three times as long as Python starting with
nothing to do, so :func:`pdi.cli.main` answers these two by themselves here.
:func:`page` lays out :data:`pdi.cli.GROUP_HELP` and :data:`pdi.cli.COMMAND_HELP`
as click's ``HelpFormatter`` does (``write_usage``, ``write_text``,
``write_dl``, never breaking a line after a hyphen, as pdi's
:class:`~pdi.cli.group.PDIHelpFormatter`; the width from the terminal's
columns, at most 80, less 2, at least 50; each command's first sentence shortened as click's
``get_short_help_str``): ``tests/test_cli_startup_imports.py`` checks that the
page equals click's own at every width it can have. Where click would do
something else (its shell completion asked for, an output that cannot encode
the page), :func:`answer` declines and click answers.
"""

from __future__ import annotations

import os
import sys
import textwrap

from pdi import __version__
from pdi.cli.commands import COMMAND_HELP, GROUP_HELP

#: The options of the top-level group, as click lists them: (term, help).
OPTIONS = (("--version", "Show the version and exit."), ("-h, --help", "Show this message and exit."))


def terminal_width() -> int:
    """The width click lays help out to: the terminal's columns (``shutil``'s rule), at most 80, less 2, at least 50."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # no stdout (None), or not a terminal
            columns = 80
    return max(min(columns, 80) - 2, 50)


def short_help(text: str, limit: int) -> str:
    """The first sentence of ``text``, shortened to ``limit`` characters with ``...`` (click's rule)."""
    words = text.partition("\n\n")[0].split()
    for i, word in enumerate(words):
        if word.endswith(".") and (i == len(words) - 1 or not words[i + 1][0].islower()):
            words = words[: i + 1]
            break
    shown = " ".join(words)
    if len(shown) <= limit:
        return shown
    return textwrap.shorten(shown, limit, placeholder="...", break_on_hyphens=False)


def _wrap(text: str, width: int, indent: str = "") -> str:
    """``text``'s paragraphs (split at blank lines) each refilled to ``width`` after ``indent`` (click's ``wrap_text``,
    as :class:`pdi.cli.group.PDIHelpFormatter` calls it: never breaking a line after a hyphen inside a word)."""
    wrapper = textwrap.TextWrapper(width, initial_indent=indent, subsequent_indent=indent,
                                   replace_whitespace=False, break_on_hyphens=False)
    paragraphs = [" ".join(line.strip() for line in block.splitlines())
                  for block in text.expandtabs().split("\n\n") if block.strip()]
    return "\n\n".join(wrapper.fill(paragraph) for paragraph in paragraphs)


def _definitions(rows: list[tuple[str, str]], width: int) -> list[str]:
    """Terms and their help as two columns indented by 2 (click's ``write_dl``)."""
    first_col = min(max(len(term) for term, _ in rows), 30) + 2
    lines = []
    for term, help_text in rows:
        start = f"  {term}" + " " * (first_col - len(term)) if len(term) <= first_col - 2 else (
            f"  {term}\n" + " " * (first_col + 2))
        wrapped = _wrap(help_text, max(width - first_col - 2, 10)).splitlines()
        lines.append(start + wrapped[0])
        lines.extend(" " * (first_col + 2) + line for line in wrapped[1:])
    return lines


def page(width: int) -> str:
    """``pdi --help`` laid out to ``width`` columns, without the final newline."""
    limit = width - 6 - max(len(name) for name in COMMAND_HELP)
    commands = [(name, short_help(COMMAND_HELP[name], limit)) for name in sorted(COMMAND_HELP)]
    return "\n".join([
        "Usage: pdi [OPTIONS] COMMAND [ARGS]...",
        "",
        _wrap(GROUP_HELP, width, "  "),
        "",
        "Options:",
        *_definitions(list(OPTIONS), width),
        "",
        "Commands:",
        *_definitions(commands, width),
    ])


def answer(option: str) -> bool:
    """Write what ``pdi OPTION`` (``--help``, ``-h``, ``--version``) writes; False where click must answer instead."""
    if "_PDI_COMPLETE" in os.environ:  # click's shell completion
        return False
    if option == "--version":
        text = f"pdi, version {__version__}\n"
    else:
        text = page(terminal_width()) + "\n"
        try:
            text.encode(sys.stdout.encoding or "ascii")
        except (UnicodeEncodeError, LookupError):
            return False
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # as click: quietly, status 1
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    return True
