"""A name read leniently is said so by the commands that read it: ``pdi get``, ``pdi cite``, ``pdi anchor``.

docs/specs/PDI-GRAMMAR.md §7: "Minting, fragments and citations require a version; the lenient parser supplies
version 1 where it is missing and says so"; §4: real PDIs were published without zero padding, so "the lenient
parser accepts one-digit months and days with a warning". ``pdi parse`` said so; ``pdi get`` and the others read
such a name as version 1, or the day padded, and said nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.cli import cli

S = "lenient.example.us"


@pytest.fixture
def archive(tmp_path: Path) -> tuple[str, str]:
    """An archive holding one text of three lines: its location and the name minted (its version 1)."""
    location = str(tmp_path / "archive")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", S, "--archive", location]).exit_code == 0
    (tmp_path / "t.txt").write_bytes(b"one\ntwo\nthree\n")
    added = runner.invoke(cli, ["add", str(tmp_path / "t.txt"), "-s", S, "--archive", location])
    assert added.exit_code == 0, added.output
    return location, added.stdout.strip()


def _run(location: str, *argv: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [*argv, "--archive", location])
    return result.exit_code, result.stdout, result.stderr


def _unpadded(name: str) -> str:
    """``name`` with its month and day written without zero padding where they have one (2026/12/02 -> 2026/12/2)."""
    parts = name.split("/")  # urn:pdi:, "", series, year, month, day, unique id and the rest
    parts[4], parts[5] = str(int(parts[4])), str(int(parts[5]))
    return "/".join(parts)


def test_pdi_get_says_a_missing_version_was_read_as_1(archive: tuple[str, str]) -> None:
    location, name = archive
    generic = name.removesuffix(".1")  # the format kept, the version left out
    code, out, err = _run(location, "get", f"{generic}#line=1,2")
    assert (code, out) == (0, "two\n")  # the second line, of version 1
    assert "warning:" in err and "read as version 1" in err
    # the same name with its version: nothing to say
    assert _run(location, "get", f"{name}#line=1,2") == (0, "two\n", "")


def test_pdi_get_says_a_one_digit_day_or_month_was_padded(archive: tuple[str, str]) -> None:
    location, name = archive
    loose = _unpadded(name)
    code, out, err = _run(location, "get", f"{loose}#line=1,2")
    assert (code, out) == (0, "two\n")
    month, day = name.split("/")[4:6]
    if loose == name:  # a day and month of two digits both (10 to 12, 10 to 31): nothing padded, nothing said
        assert err == ""
    else:
        said = [line for line in err.splitlines() if line.startswith("warning: one-digit")]
        expected = [f"{what} '{int(value)}' read as {value}" for what, value in (("month", month), ("day", day))
                    if value.startswith("0")]
        assert [line.split("one-digit ", 1)[1].split(" (")[0] for line in said] == expected


def test_pdi_cite_and_anchor_say_a_missing_version_was_read_as_1(archive: tuple[str, str]) -> None:
    location, name = archive
    generic = name.removesuffix(".1")
    code, out, err = _run(location, "cite", f"{name}@4={generic}#char=4,7")
    assert code == 0 and "check\tok" in out, (out, err)
    assert "read as version 1" in err
    code, out, err = _run(location, "anchor", f"{generic}#line=1,2", "--to", "1")
    assert code == 0 and out.splitlines()[0] == f"{name}#line=1,2", (out, err)
    assert "read as version 1" in err
