"""``pdi get`` of a ``char`` or ``line`` fragment of one position (RFC 5147 §3; PDI-GRAMMAR.md §3): a position,
an empty selection, printed as nothing (exit 0) with a note on stderr of what it is and of the fragment of the line
or character a reader may have meant; ``--info`` says its range is empty."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.cli import cli

S = "example.us"
TEXT = "first\nsecond\nthird\n"


@pytest.fixture(scope="module")
def archived(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    where = tmp_path_factory.mktemp("positions")
    location = str(where / "archive")
    assert CliRunner().invoke(cli, ["init", location]).exit_code == 0
    assert CliRunner().invoke(cli, ["series", "add", S, "--archive", location]).exit_code == 0
    (where / "t.txt").write_text(TEXT)
    added = CliRunner().invoke(cli, ["add", "-s", S, str(where / "t.txt"), "--archive", location])
    return location, added.output.strip().splitlines()[-1]


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(["line", "char"]), st.integers(min_value=0, max_value=3))
def test_rfc5147_3_one_position_selects_nothing_and_a_note_names_the_fragment_meant(
    archived: tuple[str, str], scheme: str, n: int
) -> None:
    location, name = archived
    got = CliRunner().invoke(cli, ["get", f"{name}#{scheme}={n}", "--archive", location])
    assert (got.exit_code, got.stdout) == (0, "")
    noun = "line" if scheme == "line" else "character"
    assert got.stderr == (f"note: {scheme}={n} is a position, not a {noun}: it selects nothing; a {noun} is written as"
                          f" a range, {scheme}={n},{n + 1}\n")
    meant = CliRunner().invoke(cli, ["get", f"{name}#{scheme}={n},{n + 1}", "--archive", location])
    if scheme == "line" and n == 3:  # at the end of the three lines: the range lies past it (exit 9), as it says
        assert meant.exit_code == 9 and meant.stdout == ""
        return
    # what the range selects: the line after n lines (RFC 5147, its end kept) or the character after n of the CRLF text
    expected = TEXT.splitlines(keepends=True)[n] if scheme == "line" else TEXT.replace("\n", "\r\n")[n]
    assert meant.stdout.replace("\r\n", "\n") == expected.replace("\r\n", "\n") and meant.stderr == ""


def test_a_range_of_two_positions_that_is_empty_prints_no_note(archived: tuple[str, str]) -> None:
    location, name = archived
    got = CliRunner().invoke(cli, ["get", f"{name}#line=1,1", "--archive", location])
    assert (got.exit_code, got.stdout, got.stderr) == (0, "", "")


def test_pdi_get_info_says_an_empty_range_is_empty(archived: tuple[str, str]) -> None:
    location, name = archived
    empty = CliRunner().invoke(cli, ["get", "--info", f"{name}#line=2", "--archive", location])
    # line=2 is before "third": 7 + 8 characters of CRLF text, 6 + 7 octets stored
    assert "range\tchar=15,15 (octets 13 to 13, none: an empty range)" in empty.stdout.splitlines()
    full = CliRunner().invoke(cli, ["get", "--info", f"{name}#line=1,2", "--archive", location])
    assert "range\tchar=7,15 (octets 6 to 13)" in full.stdout.splitlines()
