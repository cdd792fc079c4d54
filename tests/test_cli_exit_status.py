"""Exit statuses are documented once, in the manual's table (docs/reference/exit-codes.md), and the table,
`pdi --help` and the code agree.

Every class of :mod:`pdi.errors` exits with its ``exit_code`` and prints its
``title`` as the kind of its one line (``pdi: not found: …``); the other
statuses are the command line's own constants. The table must list each of
them with that meaning, list nothing else, and the top-level help (click's
page and the fast path's, which are the same text) must name the same.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from pdi import errors
from pdi.cli import load_all
from pdi.cli.archive_cmd import PARTIAL_EXIT
from pdi.cli.commands import EXIT_INTERRUPTED, EXIT_PAST_END, EXIT_USAGE, GROUP_HELP

TABLE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "exit-codes.md"

#: The statuses no error class names, and a word the table's meaning and the help both hold for each.
OWN = {0: "success", EXIT_USAGE: "usage", EXIT_PAST_END: "past the end", PARTIAL_EXIT: "--partial",
       EXIT_INTERRUPTED: "interrupted"}


def _classes() -> list[type[errors.PDIError]]:
    load_all()  # every command's module: any error class one defines is a subclass by now
    found, todo = [], [errors.PDIError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return [cls for cls in found if cls is not errors.PDIError]


def _refines(cls: type[errors.PDIError]) -> bool:
    """A class that names a kind of its base class's failure, with the base's exit status and a title of its own."""
    return any(base is not errors.PDIError and issubclass(base, errors.PDIError) and base.exit_code == cls.exit_code
               and base.title != cls.title for base in cls.__bases__)


def _table() -> dict[int, str]:
    """The manual's exit status table: status -> meaning (the one table whose header is ``| status | meaning |``)."""
    text = TABLE.read_text(encoding="utf-8")
    assert text.count("| status | meaning |") == 1, "one exit status table, no more"
    block = text.split("| status | meaning |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in block.splitlines():
        match = re.fullmatch(r"\| (\d+) \| (.+) \|", line)
        assert match, f"not a row of the table: {line!r}"
        status = int(match.group(1))
        assert status not in rows, f"status {status} listed twice"
        rows[status] = match.group(2)
    return rows


def _help() -> dict[int, str]:
    """The statuses ``pdi --help`` lists: status -> its words (up to the next ", N ")."""
    paragraph = " ".join(GROUP_HELP.split()).split("Exit status: ", 1)[1]
    return {int(n): words for n, words in re.findall(r"(\d+) (.*?)(?=, \d+ |$)", paragraph)}


def test_every_error_class_is_in_the_table_with_its_title() -> None:
    table = _table()
    for cls in _classes():
        assert cls.exit_code in table, f"{cls.__name__} exits {cls.exit_code}: not in the manual's table"
        if cls.__module__ != errors.__name__:
            continue  # a server's own (406 Not Acceptable): its status is its base class's, its title an HTTP one
        assert cls.title in table[cls.exit_code], (
            f"{cls.__name__} exits {cls.exit_code} printing 'pdi: {cls.title}: …'; the table says"
            f" {table[cls.exit_code]!r}")


def test_the_table_lists_the_statuses_pdi_has_and_no_other() -> None:
    assert set(_table()) == {cls.exit_code for cls in _classes()} | set(OWN)
    for status, word in OWN.items():
        assert word in _table()[status], (status, word)


def test_the_top_level_help_names_the_same_statuses_with_the_same_meanings() -> None:
    shown = _help()
    assert list(shown) == sorted(_table()), "pdi --help lists the statuses of the table, in order"
    for cls in _classes():
        if cls.__module__ != errors.__name__:
            continue
        if _refines(cls):  # a kind of its base's failure (citation does not match): named after the base's title
            assert cls.title in shown[cls.exit_code], (cls.__name__, shown[cls.exit_code])
        else:
            assert shown[cls.exit_code].startswith(cls.title), (cls.__name__, shown[cls.exit_code])
    for status, word in OWN.items():
        assert word in shown[status], (status, word, shown[status])


def test_pdi_help_itself_prints_the_table_s_statuses() -> None:
    # the fast path (no click) and the manual agree through GROUP_HELP; this is what a person sees
    page = subprocess.run([sys.executable, "-m", "pdi", "--help"], capture_output=True, text=True, timeout=60,
                          check=True, env={"COLUMNS": "80", "PATH": "/usr/bin:/bin", **_pythonpath()}).stdout
    flat = " ".join(page.split())
    for status in _table():
        assert re.search(rf"(?:: |, ){status} ", flat), f"pdi --help does not list exit status {status}"


def _pythonpath() -> dict[str, str]:
    import os

    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}
