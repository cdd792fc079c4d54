"""What the ``*_pairs.py`` scripts share: the command line of two (or more) checkouts run in turn, ``NAME=SRC``
each, and the way a figure's median and range are printed.

A pairs script runs each checkout's ``src`` (``PYTHONPATH=SRC``) in turn, ``--rounds`` times, so that the load of a
shared machine falls on both alike; see docs/benchmarks.md for what each one measured.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
from collections.abc import Sequence


def parser(doc: str | None, rounds: int) -> argparse.ArgumentParser:
    """The command line of a pairs script: its description (``doc``'s first paragraph), ``--rounds`` (default
    ``rounds``) and one ``NAME=SRC`` or more; add the script's own options to it."""
    made = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    made.add_argument("--rounds", type=int, default=rounds, help=f"rounds of every checkout in turn ({rounds})")
    made.add_argument("variants", nargs="+", metavar="NAME=SRC", help="a checkout's src directory, run as NAME")
    return made


def variants(made: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, str]:
    """``NAME`` → the absolute path of its ``SRC``, in the order given; a usage error (exit 2) naming the argument
    that is not ``NAME=SRC`` with a directory, or a ``NAME`` given twice. Each ``SRC`` is compiled (its
    ``__pycache__``) before any round: where ``PYTHONDONTWRITEBYTECODE`` is set, a checkout never run before would
    otherwise compile every module it imports again in each process a round starts (some 0.13 s of CPU a ``pdi``
    command), charged to that checkout alone."""
    chosen: dict[str, str] = {}
    for given in args.variants:
        name, eq, src = given.partition("=")
        if not eq or not name or not src:
            made.error(f"{given!r} is not NAME=SRC (e.g. before=/tmp/old/src)")
        if name in chosen:
            made.error(f"{name!r} is given twice")
        if not os.path.isdir(src):
            made.error(f"{given!r}: {src!r} is not a directory")
        chosen[name] = os.path.abspath(src)
    for src in chosen.values():
        compileall.compile_dir(src, quiet=1)  # py_compile writes whatever PYTHONDONTWRITEBYTECODE says
    return chosen


def spread(figures: Sequence[float], digits: int = 2) -> str:
    """``median (least-most)`` of ``figures``, each with ``digits`` decimals."""
    return f"{statistics.median(figures):.{digits}f} ({min(figures):.{digits}f}-{max(figures):.{digits}f})"
