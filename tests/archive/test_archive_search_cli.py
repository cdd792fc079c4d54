"""``pdi search`` and ``pdi reindex`` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pdi.archive import Archive
from pdi.cli import cli


def test_search_prints_hits_and_reindex_rebuilds(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    with Archive.init(location) as archive:
        archive.add_series("oma.eop.gov.us")
        name = archive.add("oma.eop.gov.us", b"The walrus and the carpenter", format="text")
    runner = CliRunner()
    found = runner.invoke(cli, ["search", "--archive", location, "walrus"])
    assert found.exit_code == 0, found.output
    assert found.output.splitlines()[:2] == [f"{name}#char=4,10", "    The [walrus] and the carpenter"]
    page = json.loads(runner.invoke(cli, ["search", "--archive", location, "--json", '"the carpenter"']).output)
    assert [h["char"] for h in page["hits"]] == [[15, 28]] and page["next"] is None
    rebuilt = runner.invoke(cli, ["reindex", "--archive", location])
    assert rebuilt.exit_code == 0 and "indexed 1 passage of 1 stored octet stream\n" in rebuilt.output  # counts agree in number (docs/reference/cli.md)
    bad = runner.invoke(cli, ["search", "--archive", location, '"walrus'])
    assert bad.exit_code == 1 and "not closed" in bad.output
    # a passage that ends its line: its line ending is no trailing space on the snippet's line
    with Archive.open(location) as archive:
        archive.add("oma.eop.gov.us", b"A lone walrus\n", format="text")
    lines = runner.invoke(cli, ["search", "--archive", location, "lone"]).output.splitlines()
    assert lines[1] == "    A [lone] walrus"


def test_search_without_a_hit_says_so_on_stderr_and_exits_0(tmp_path: Path) -> None:
    """A clerk searching for words no passage holds saw nothing at all and could not tell a miss from a command
    that did nothing. Standard output stays empty (a script reads no hit) and the exit status 0; standard error
    says no passage holds them and what to try, as the reader's search page does. ``--json`` says it in JSON."""
    location = str(tmp_path / "a")
    with Archive.init(location) as archive:
        archive.add_series("oma.eop.gov.us")
        archive.add("oma.eop.gov.us", b"The walrus and the carpenter", format="text")
    missed = CliRunner().invoke(cli, ["search", "--archive", location, '"carpenter walrus"'])
    assert missed.exit_code == 0 and missed.stdout == ""
    assert missed.stderr == ("note: no passage holds every one of these words: try fewer words, other spellings,"
                             " or a phrase's words without its quotes\n")
    page = CliRunner().invoke(cli, ["search", "--archive", location, "--json", "unicorn"])
    assert page.exit_code == 0 and page.stderr == "" and json.loads(page.stdout)["hits"] == []
