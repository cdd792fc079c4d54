"""`pdi get NAME` without click: a plain command line read here, anything else left to click.

Importing click costs about three times a bare Python's start-up, more than
reading a small text from the archive. :func:`parse` reads the command
lines people type most — one name, ``--archive DIR|URL``, ``-o``/``--output
FILE``, ``--latest``, ``--info``, in any order, as click reads them (an
option's value is the next word whatever it looks like, or follows ``=``;
``--archive`` falls back to ``$PDI_ARCHIVE`` when that is set and not
empty, then to ``./pdi-archive``) — and answers ``None`` for anything else:
help, an unknown or repeated word, a missing value, ``--``, an output that
click's ``Path`` check would refuse (an existing directory, or a file this
user may not write). :func:`run` then hands the whole command line to click,
which reads it and reports as it always has. ``tests/test_cli_fast_get.py``
checks :func:`parse` against click's own reading of generated command lines.
"""

from __future__ import annotations

import os
import sys
from typing import NamedTuple

from pdi.archive import DEFAULT_LOCATION


class GetArguments(NamedTuple):
    """What click would hand ``get_cmd``: the name, and its options' values."""

    pdi: str
    output: str | None
    latest: bool
    info: bool
    archive: str


#: The options that take a value, by every spelling click accepts for them, and the parameter each sets.
_VALUED = {"--archive": "archive", "--output": "output", "-o": "output"}
#: The flags.
_FLAGS = {"--latest": "latest", "--info": "info"}


def parse(args: list[str], environ: dict[str, str] | os._Environ[str] = os.environ) -> GetArguments | None:
    """``args`` (the words after ``get``) read as click reads them, or ``None`` when click should read them."""
    if "_PDI_COMPLETE" in environ:  # a shell asking click to complete the line
        return None
    values: dict[str, str] = {}
    flags: set[str] = set()
    names: list[str] = []
    words = iter(args)
    for word in words:
        if word.startswith("--"):  # --flag, --option VALUE, --option=VALUE ("--" alone: click's turn)
            option, eq, value = word.partition("=")
            if option in _FLAGS and not eq:
                flags.add(_FLAGS[option])
                continue
            if option not in _VALUED:
                return None
        elif word.startswith("-o"):  # -o VALUE, or -oVALUE (all after "-o", "=" too, as click reads it)
            option, eq, value = "-o", "=" if len(word) > 2 else "", word[2:]
        elif word.startswith("-") and word != "-":  # another short option: unknown, or help
            return None
        else:
            names.append(word)
            continue
        if not eq:
            following = next(words, None)
            if following is None:  # click: "Option … requires an argument"
                return None
            value = following
        parameter = _VALUED[option]
        if parameter in values:  # given twice: click keeps the last; rare enough to leave to it
            return None
        values[parameter] = value
    if len(names) != 1 or not names[0]:
        return None
    output = values.get("output")
    if output is not None and not _writable(output):
        return None
    archive = values.get("archive")
    if archive is None:
        archive = environ.get("PDI_ARCHIVE") or DEFAULT_LOCATION
    return GetArguments(names[0], output, "latest" in flags, "info" in flags, archive)


def _writable(output: str) -> bool:
    """Whether click's ``Path(dir_okay=False, writable=True, allow_dash=True)`` lets ``output`` through."""
    if output == "-":
        return True
    if not output:
        return False
    try:
        os.stat(output)
    except OSError:  # not there (or not reachable): click lets it through, and the write says what is wrong
        return True
    return not os.path.isdir(output) and os.access(output, os.W_OK)


def run(args: list[str]) -> int | None:
    """Run ``pdi get`` on ``args`` if :func:`parse` reads them: the exit status; ``None``: click's turn.

    As the click group does, an error of the :mod:`pdi.errors` family is one
    line on stderr and the exit status its class names; Ctrl-C is one line
    and status 130, and a closed pipe ends quietly with status 1.
    """
    arguments = parse(args)
    if arguments is None:
        return None
    from pdi.cli.commands import EXIT_INTERRUPTED, INTERRUPTED_LINE, error_line
    from pdi.cli.get_run import run_get
    from pdi.errors import PDIError

    try:
        return run_get(arguments.pdi, output=arguments.output, latest=arguments.latest,
                       info=arguments.info, archive=arguments.archive)
    except PDIError as exc:
        sys.stderr.write(error_line(exc) + "\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("\n" + INTERRUPTED_LINE + "\n")
        return EXIT_INTERRUPTED
    except EOFError:  # as click
        sys.stderr.write("\nAborted!\n")
        return 1
    except BrokenPipeError:
        _quiet_streams()
        return 1


def _quiet_streams() -> None:
    """After a closed pipe, let the interpreter's last flush of stdout and stderr fail silently (as click does)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.dup2(devnull, sys.stderr.fileno())
