"""How-to pages followed as written: their ``sh`` blocks' ``pdi`` lines that need no server, run in order.

The operator's guide and the upgrade page have their own test (tests/test_operator_guide.py); these are
the other operator pages (docs/how-to/mirrors.md, signatures.md), whose lines a new operator types one
after the other on one archive: each must do what the page says, not fail on what an earlier line made.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.cli import cli

ROOT = Path(__file__).resolve().parents[1]
HOWTO = ROOT / "docs" / "how-to"


def _pdi_lines(page: Path) -> list[tuple[list[str], str | None]]:
    """Each ``pdi`` line of the page's ``sh`` blocks, in order: its words (comments and redirections left
    out) and the file its standard output goes to (``> FILE``), if any."""
    text = page.read_text("utf-8")
    lines: list[tuple[list[str], str | None]] = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if not words or words[0] != "pdi":
                continue
            out = None
            if ">" in words:
                out = words[words.index(">") + 1]
                words = words[: words.index(">")]
            lines.append((words, out))
    return lines


def test_the_mirrors_pages_tokens_are_made_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``pdi token add`` of the mirrors page, typed on one origin in the page's order, makes its token
    (a token's name is never reused: a second ``mirror-b`` would be refused, exit 5)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", str(tmp_path / "origin"))
    runner = CliRunner()
    assert runner.invoke(cli, ["init"]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", "oma.eop.gov.us"]).exit_code == 0
    tokens = [(words, out) for words, out in _pdi_lines(HOWTO / "mirrors.md") if words[1:3] == ["token", "add"]]
    assert len(tokens) == 2, tokens
    for words, out in tokens:
        result = runner.invoke(cli, words[1:])
        assert result.exit_code == 0, (words, result.output)
        assert out is not None and result.stdout.startswith("pdi_"), (words, result.stdout)
