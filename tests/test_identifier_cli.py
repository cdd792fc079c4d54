"""`pdi parse PDI [--strict] [--json]` (issue 3)."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import unicodedata

from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from pdi._wording import printable
from pdi.cli import cli
from pdi.identifier import PDI


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["parse", *args])
    return result.exit_code, result.stdout, result.stderr


def test_parse_prints_components_canonical_form_and_warnings() -> None:
    code, out, err = run("pdi://images.satellite.nasa.gov.us/1997/09/30/1234.gif#(5,10),(25,30),2")
    assert code == 0
    assert err == ""
    lines = out.splitlines()
    assert lines[0].split() == [
        "canonical:",
        "urn:pdi://images.satellite.nasa.gov.us/1997/09/30/1234.gif.1#rect=(5,10),(25,30),2",
    ]
    assert "series:          images.satellite.nasa.gov.us" in lines
    assert "date:            1997/09/30" in lines
    assert "unique id:       1234 (daily serial)" in lines
    assert "media type:      image/gif" in lines
    assert "fragment scheme: rect (default)" in lines
    assert (
        lines[-1]
        == "warning: no version on a fragment PDI (the PDI draft, line 457, requires one): read as version 1"
    )


@given(st.text(st.characters(codec="utf-8", categories=("Cc", "Cf", "Zl", "Zp", "L")), min_size=1, max_size=12))
def test_parse_shows_a_decoded_unique_id_without_driving_the_terminal(foreign: str) -> None:
    # the unique id is %-decoded: its NUL, ESC, C1 controls and bidirectional overrides are shown escaped, as
    # pdi prints every stranger's text, never written to the terminal as they are
    name = PDI.build(series="a.us", date=datetime.date(2020, 1, 2), foreign_id=foreign, format="text")
    code, out, _ = run(str(name))
    assert code == 0
    shown = next(line for line in out.splitlines() if line.startswith("unique id:"))
    assert shown == f"unique id:       {printable(foreign)} (encapsulated)"
    assert not any(0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069 or unicodedata.category(c) == "Cc"
                   for c in shown)


def test_parse_json() -> None:
    code, out, _ = run(
        "--json", "pdi://oma.eop.gov.us/1994/10/20/http%3a%2f%2fwww%2ewhitehouse%2egov%2f.html.1"
    )
    assert code == 0
    data = json.loads(out)
    assert data["canonical"] == (
        "urn:pdi://oma.eop.gov.us/1994/10/20/http%3A%2F%2Fwww%2Ewhitehouse%2Egov%2F.html.1"
    )
    assert data["unique_id"] == "http://www.whitehouse.gov/"
    assert data["is_serial"] is False
    assert (data["year"], data["month"], data["day"]) == (1994, 10, 20)
    assert (data["format"], data["media_type"], data["version"]) == ("html", "text/html", 1)
    assert data["components"] == ["oma", "eop", "gov", "us"]
    assert data["fragment"] is None and data["citation"] is None
    assert data["warnings"] == []
    assert data["version_omitted"] is False
    code, out, _ = run("--json", "pdi://a.us/2000/01/02/3.text")
    data = json.loads(out)
    assert (data["version"], data["version_omitted"]) == (1, True)
    code, out, _ = run("--json", "pdi://a.us/2000/01/02/3")
    data = json.loads(out)
    assert (data["format"], data["version"], data["version_omitted"]) == (None, None, False)


def test_parse_json_citation_and_pattern() -> None:
    code, out, _ = run(
        "--json", "pdi://a.us/1997/09/01/5.html.1@120=pdi://b.us/1997/09/01/1.text.1#37,51"
    )
    assert code == 0
    data = json.loads(out)
    assert data["citation"]["origin"] == 120
    cited = data["citation"]["cited"]
    assert cited["fragment"] == {
        "scheme": None,
        "effective_scheme": "char",
        "positions": [37, 51],
        "text": "37,51",
    }
    code, out, _ = run("--json", "pdi://a.us/1997/*/*/*.*.*")
    data = json.loads(out)
    assert data["is_pattern"] is True
    assert (data["month"], data["unique_id"], data["version"]) == (None, "*", "*")


def test_parse_invalid_exits_1_with_one_line() -> None:
    code, out, err = run("pdi://oma.eop.gov/1997/09/01.html.1")
    assert code == 1
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("pdi: syntax error: the unique id is missing")
    assert "rule resource-identifier, offset 28" in err


def test_parse_strict_turns_warnings_into_errors() -> None:
    code, out, _ = run("urn:pdi://oma.eop.gov.us/1999/9/16/15.text.1")
    assert code == 0
    assert "warning: one-digit month '9' read as 09 (§2.4)" in out
    code, _, err = run("--strict", "urn:pdi://oma.eop.gov.us/1999/9/16/15.text.1")
    assert code == 1
    assert "rule month" in err and err.count("\n") == 1


def test_parse_as_a_process() -> None:
    env = dict(os.environ)  # PYTHONPATH: the pdi under test (tests/conftest.py)
    ok = subprocess.run(
        [sys.executable, "-m", "pdi", "parse", "pdi://a.us/2000/01/02/3.text"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert ok.returncode == 0
    assert ok.stdout.splitlines()[0].endswith("urn:pdi://a.us/2000/01/02/3.text.1")
    bad = subprocess.run(
        [sys.executable, "-m", "pdi", "parse", "pdi://a.us/2000/01/02/3.text.0"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert bad.returncode == 1
    assert bad.stdout == ""
    assert len(bad.stderr.splitlines()) == 1


def test_parse_help_is_true() -> None:
    result = CliRunner().invoke(cli, ["parse", "--help"])
    assert result.exit_code == 0
    assert "--strict" in result.output and "--json" in result.output
    assert "Exit status 0 for a valid PDI, 1 for an invalid one" in result.output


def test_parse_wildcard_version_is_not_omitted() -> None:
    # `.*.*` writes the version, as a wildcard; only a missing version is "omitted".
    code, out, _ = run("urn:pdi://oma.eop.gov.us/*/*/*/*.*.*")
    assert code == 0
    assert "version:         *" in out.splitlines()
    code, out, _ = run("urn:pdi://oma.eop.gov.us/1997/09/01/1.text")
    assert "version:         1 (omitted)" in out.splitlines()


def test_parse_short_help_is_its_first_sentence() -> None:
    # `pdi --help` shows each command's first sentence; "..." would end it early.
    import click

    command = cli.get_command(click.Context(cli), "parse")
    assert command is not None
    short = command.get_short_help_str(limit=200)
    assert "print its components" in short, short
