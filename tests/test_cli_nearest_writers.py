"""The commands that write about a name say what the archive holds near a name not in it, as ``pdi get`` does.

A clerk who typed a name with the wrong day was told by ``pdi get`` which days of the series hold documents
(``nearest.py``), but by ``pdi withdraw``, ``pdi embargo``, ``pdi meta`` and ``pdi version`` only that it is not in
the archive (found trying the guides as a new user, 2026-12-02). Each now says the same as ``pdi get`` of that name
(exit 4 still), and changes nothing.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.archive import Archive
from pdi.cli import cli

S = "archives.gov.us"
WRONG_DAY = datetime.date(1999, 1, 1)


def _run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("command", [
    ["withdraw", "{name}", "--reason", "a mistake"],
    ["embargo", "{name}", "--until", "2099-01-01"],
    ["meta", "{name}", "title=The minutes"],
    ["meta", "{name}"],
    ["version", "{name}", "{file}"],
])
def test_a_name_of_another_day_is_refused_naming_the_days_held(
    tmp_path: Path, one_gmt_day: datetime.datetime, command: list[str],
) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(S)
        held = str(archive.add(S, b"the minutes\n", format="text")).rsplit(".", 2)[0]
        before = archive.audit()
    day = one_gmt_day.date()
    wrong = held.replace(day.strftime("/%Y/%m/%d/"), WRONG_DAY.strftime("/%Y/%m/%d/"))
    assert wrong != held
    (tmp_path / "next.txt").write_bytes(b"the minutes, amended\n")
    args = [part.format(name=wrong, file=str(tmp_path / "next.txt")) for part in command]
    code, out, err = _run([*args, "--archive", location])
    # (pdi get's words of the same name, worked out from nearest.py's sentence)
    said = (f"; a name carries the GMT day it was minted, and {S} has nothing minted on {WRONG_DAY.isoformat()},"
            f" so no document '1'; the nearest days with documents are {day.isoformat()}"
            f" ({(day - WRONG_DAY).days:,} days after)\n")
    assert code == 4 and out == "" and err.startswith("pdi: not found: ") and err.endswith(said), err
    got = _run(["get", wrong, "--archive", location])
    assert got[0] == 4 and got[2].endswith(said)
    with Archive.open(location) as archive:
        assert archive.audit() == before  # nothing written
