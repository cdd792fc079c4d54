"""docs/how-to/s3.md's lines, typed as a new operator types them, on an archive whose blobs are in a real S3 store
(the one-node Swift of tests/support/swiftnode.py, a fresh bucket of it in place of the page's ``pdi-blobs``).

A new archive has no series: the page must register the one its ``pdi add`` names before depositing, and each
line must then print what the paragraph after the block says it prints."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.cli import cli

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "how-to" / "s3.md"


def _block() -> str:
    found = re.search(r"^```sh\n(.*?)^```", PAGE.read_text("utf-8"), flags=re.MULTILINE | re.DOTALL)
    assert found is not None
    return found.group(1)


def test_the_s3_pages_lines_run_as_written(tmp_path: Path, s3_blobs: str, monkeypatch: pytest.MonkeyPatch) -> None:
    block = _block()
    assert "s3://pdi-blobs/archive/" in block and "postgresql://pdi@db/pdi" in block
    archive = str(tmp_path / "archive")
    # the page's database and bucket are this test's directory archive and fresh bucket (endpoint and keys: set)
    block = block.replace("postgresql://pdi@db/pdi", archive).replace("s3://pdi-blobs/archive/", s3_blobs)
    (tmp_path / "report.pdf").write_bytes((ROOT / "tests" / "data" / "pdf" / "sizes.pdf").read_bytes())
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDI_ARCHIVE", raising=False)
    runner = CliRunner()
    printed: list[tuple[str, str]] = []
    for line in block.splitlines():
        words = shlex.split(line, comments=True)
        if not words or words[0] == "export":
            continue
        assert words[0] == "pdi", line
        result = runner.invoke(cli, words[1:])
        assert result.exit_code == 0, (line, result.output)
        printed.append((words[1], result.output))
    assert [command for command, _ in printed] == ["init", "series", "add", "verify"]
    # what the paragraph after the block says each prints
    text = PAGE.read_text("utf-8")
    assert "`archive at … (blobs in s3://…) (schema version" in text
    assert re.fullmatch(rf"archive at {re.escape(archive)} \(blobs in {re.escape(s3_blobs)}\) \(schema version \d+\)\n",
                        printed[0][1]), printed[0]
    assert re.fullmatch(r"urn:pdi://oma\.eop\.gov\.us/\d{4}/\d\d/\d\d/1\.pdf\.1\n", printed[2][1]), printed[2]
    assert printed[3][1] == "checked 1 representation in 1 blob: 0 problems\n"
