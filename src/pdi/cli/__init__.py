"""The ``pdi`` command (an edge: parse argv, call a core or the archive, print).

Each family of subcommands lives in its own module here and is added to the
top-level group (:mod:`pdi.cli.group`) when a command of it is first asked
for: ``pdi text`` imports the text engine, not the HTTP client or the
archive, so a command starts in the time its own modules take to load.
``pdi --help`` and ``pdi --version`` by themselves do not import click at
all (:mod:`pdi.cli.top_help` writes click's own page), nor does a plain
``pdi get NAME`` (:mod:`pdi.cli.fast_get`). Errors from the
:mod:`pdi.errors` family become one line on stderr and the exit status the
error class names; nothing else is caught, so a bug still shows its traceback.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from pdi._lazy import exports
from pdi.cli.commands import (
    COMMAND_HELP,
    COMMAND_MODULES,
    EXIT_PAST_END,
    EXIT_USAGE,
    GROUP_HELP,
    error_line,
    one_line,
)

__all__ = [
    "COMMAND_HELP", "COMMAND_MODULES", "EXIT_PAST_END", "EXIT_USAGE", "GROUP_HELP", "PDIGroup",
    "cli", "error_line", "load_all", "main", "one_line",
]

if TYPE_CHECKING:
    from pdi.cli.group import PDIGroup, cli, load_all
else:
    __getattr__, __dir__ = exports(__name__, {"group": "PDIGroup cli load_all"})


#: What :mod:`dataclasses` (``inspect``, and with it ``ast``, ``dis``, ``tokenize``; ``copy``),
#: :mod:`pathlib` (``ntpath``, ``fnmatch``), :mod:`urllib.parse` (``ipaddress``) and the blob
#: files (``mmap`` for a large blob, ``fcntl`` for a pin, ``heapq`` for a listing) import that a
#: ``pdi get`` of a small stored text never uses: loaded only if something asks them (:mod:`pdi._deferred`).
FAST_GET_DEFERRED = ("inspect", "ipaddress", "copy", "ntpath", "fnmatch", "mmap", "fcntl", "heapq")


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``pdi`` console script.

    ``pdi --help``, ``pdi -h`` and ``pdi --version`` alone are answered
    without importing click (:mod:`pdi.cli.top_help`: the same output), and
    so is a plain ``pdi get NAME`` (:mod:`pdi.cli.fast_get`: the same
    reading of its command line, the same run, with the standard-library
    modules of :data:`FAST_GET_DEFERRED` loaded only if used); everything
    else goes to the click group.
    """
    args = argv if argv is not None else sys.argv[1:]
    if len(args) == 1 and args[0] in ("--help", "-h", "--version"):
        from pdi.cli import top_help

        if top_help.answer(args[0]):
            return
    if args and args[0] == "get":
        from pdi._deferred import defer

        defer(*FAST_GET_DEFERRED)  # standard-library modules a read by name imports and never uses
        from pdi.cli import fast_get

        code = fast_get.run(args[1:])
        if code is not None:
            raise SystemExit(code)
    # httpx's package imports its own command line (rich, pygments: some 40 ms of CPU at the start of a command
    # that asks over HTTP, as pdi mirror sync does) only to offer httpx.main, which pdi never calls: marked
    # absent, httpx defines a stand-in main instead (its own fallback for an install without its extras)
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    from pdi.cli.group import cli

    cli.main(args=args, prog_name="pdi")
