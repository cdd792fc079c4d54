"""What a stranger (or a mistyped script) hands the command line whole, 120,000 characters of an option or an
argument, is quoted in ``pdi``'s error and warning lines cut in its middle: its start and its end, how many
characters were left out, escaped, on one short line; what the command prints for a pipe (a minted name on
stdout) stays exact. Each command runs as a user types it, through click's runner on a real archive."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pdi.cli import cli

S = "example.ac.gb"
#: 120,000 characters: 100 shown of each end, 119,800 left out (pdi._wording.clipped's 200)
LONG = "a" + "x" * 119_998 + "z"
SHOWN = "a" + "x" * 99 + "…[119,800 characters left out]…" + "x" * 99 + "z"


def pdi(archive: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"PDI_ARCHIVE": str(archive), "PDI_USER": "tester"})


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """An archive with the series S holding one text; the text's file; its name."""
    where = tmp_path_factory.mktemp("long-input")
    location = where / "archive"
    assert pdi(location, "init", str(location)).exit_code == 0
    assert pdi(location, "series", "add", S).exit_code == 0
    text = where / "a.txt"
    text.write_bytes(b"hello\r\n")
    added = pdi(location, "add", str(text), "--series", S)
    assert added.exit_code == 0, added.output
    return location, text, added.stdout.strip()


def test_a_long_series_is_quoted_by_its_start_and_end(archive: tuple[Path, Path, str]) -> None:
    location, text, _ = archive
    r = pdi(location, "add", str(text), "--series", LONG)
    assert r.exit_code == 1
    assert r.stderr == (f"pdi: syntax error: a document series is a component and a country: '{SHOWN}'"
                        " (rule document-series, offset 0)\n")


def test_a_long_key_and_a_long_statement_are_quoted_by_their_start_and_end(archive: tuple[Path, Path, str]) -> None:
    location, _, name = archive
    r = pdi(location, "meta", name, f"{LONG}=v")
    assert r.exit_code == 1
    assert r.stderr.startswith(f"pdi: syntax error: bad key '{SHOWN}': a letter, then up to 199"), r.stderr[:400]
    r = pdi(location, "meta", name, LONG)
    assert r.exit_code == 1
    assert r.stderr == f"pdi: syntax error: '{SHOWN}' is not KEY=VALUE (rule statement)\n"


def test_a_hostile_series_is_escaped_and_cut(archive: tuple[Path, Path, str]) -> None:
    location, text, _ = archive
    # an ESC sequence that clears the screen at the start, a right-to-left override at the end
    r = pdi(location, "add", str(text), "--series", "\x1b[2J" + "x" * 50_000 + "\u202e")
    assert r.exit_code == 1
    # 100 shown of the start: \x1b[2J (7) and 93 x's; of the end: 94 x's and \u202e (6); of the 50,005
    # characters, 97 + 95 shown, 49,813 left out
    assert r.stderr == ("pdi: syntax error: invalid series component '\\x1b[2J" + "x" * 93
                        + "…[49,813 characters left out]…" + "x" * 94 + "\\u202e': letters, digits and '-' only"
                        " (rule component, offset 0)\n")


def test_a_long_name_not_found_is_one_bounded_line(archive: tuple[Path, Path, str]) -> None:
    location, _, _ = archive
    r = pdi(location, "get", f"urn:pdi://{S}/2020/01/01/{LONG}.text.1")
    assert r.exit_code == 4
    line = r.stderr
    assert line.count("\n") == 1
    # the line keeps 2,000 characters of the message, a thousand of each end, and says how many it left out
    assert line.startswith(f"pdi: not found: urn:pdi://{S}/2020/01/01/axxx")
    assert "characters left out]…" in line
    assert len(line) < 2_100


def test_a_long_id_is_printed_whole_on_stdout_and_cut_in_the_warning(archive: tuple[Path, Path, str]) -> None:
    location, text, name = archive
    long_id = "a" + "x" * 8_190 + "z"  # as long as an id may be (8,192 octets: a name must fit a resolver's URL)
    r = pdi(location, "add", str(text), "--series", S, "--id", long_id)  # the same octets again: a second name
    assert r.exit_code == 0, r.stderr[:400]
    minted = r.stdout.strip()
    assert minted == f"{name.rsplit('/', 1)[0]}/{long_id}.text.1"  # for a pipe: exact
    warning = r.stderr
    assert warning.startswith(f"warning: {name} already holds these octets (deposited today); urn:pdi://{S}/")
    assert "characters left out]…" in warning and len(warning) < 1_400
    assert warning.count("\n") == 1


def test_an_id_longer_than_a_name_may_carry_is_refused_by_its_start_and_end(archive: tuple[Path, Path, str]) -> None:
    location, text, _ = archive
    r = pdi(location, "add", str(text), "--series", S, "--id", LONG)
    assert r.exit_code == 7 and r.stdout == ""
    assert r.stderr.startswith("pdi: limit exceeded: the id is 120,000 octets (UTF-8), more than the 8,192")
    assert r.stderr.count("\n") == 1 and len(r.stderr) < 2_100


def test_a_long_fragment_scheme_and_position_are_quoted_by_their_start_and_end(
    archive: tuple[Path, Path, str],
) -> None:
    location, _, name = archive
    r = pdi(location, "get", f"{name}#{LONG}=1")
    assert r.exit_code == 6
    assert r.stderr.startswith(f"pdi: unsupported: no evaluator for fragment scheme '{SHOWN}' on text/plain")
    assert r.stderr.count("\n") == 1 and len(r.stderr) < 500
    r = pdi(location, "get", f"{name}#char=({LONG}")
    assert r.exit_code == 1
    # "(" and the 120,000: 100 shown of each end, 119,801 left out
    shown = "(a" + "x" * 98 + "…[119,801 characters left out]…" + "x" * 99 + "z"
    assert r.stderr.startswith(f"pdi: syntax error: unbalanced parentheses in position '{shown}' (rule ext-position")


def test_a_long_charset_is_quoted_by_its_start_and_end(archive: tuple[Path, Path, str]) -> None:
    """``--charset`` is looked up in the IANA registry; a label that is not there is named cut, as any other."""
    location, text, _ = archive
    r = pdi(location, "add", str(text), "--series", S, "--charset", LONG)
    assert r.exit_code == 6  # unsupported (docs/reference/exit-codes.md)
    assert r.stderr == (f"pdi: unsupported: --charset: unknown charset '{SHOWN}': neither in the IANA registry nor a codec\n")
