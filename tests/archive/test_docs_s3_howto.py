"""docs/how-to/s3.md's lines, typed as a new operator types them, on an archive whose blobs are in a real S3 store
(the one-node Swift of tests/support/swiftnode.py, its endpoint and keys in the environment as the page's
``export`` lines set them; a bucket of a name of its own in place of the page's ``pdi-blobs``).

A new archive has no series: the page must register the one its ``pdi add`` names before depositing. The bucket is
made by the page's own line (found following the page, 2026-12-01: it said the bucket must exist and gave no line to
make it), and each line prints what the page's output block shows."""

from __future__ import annotations

import datetime
import itertools
import os
import re
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.cli import cli
from support.swiftnode import TemporarySwift

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "how-to" / "s3.md"


def _pairs() -> list[tuple[str, str]]:
    """Each ``sh`` block of the page with the ``text`` block right after it (what its lines print)."""
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", PAGE.read_text("utf-8"), flags=re.MULTILINE | re.DOTALL)
    return [(body, after[1]) for (language, body), after in itertools.pairwise(blocks)
            if language == "sh" and after[0] == "text"]


def test_the_s3_pages_lines_run_as_written(
    tmp_path: Path, swift_node: TemporarySwift, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The page's block, typed in a directory holding ``report.pdf`` (tests/data/pdf/sizes.pdf), its PostgreSQL
    database this test's directory archive: ``pdi init`` before the bucket is made is refused as the page says
    (exit 4, naming the bucket); the ``python3`` line, run by a shell with the Python pdi runs in first on
    ``PATH``, makes the bucket; then each ``pdi`` line succeeds and prints the page's output block (its day made
    today's), and the blob is in the bucket, under the prefix, named by its SHA-256 (hashlib's)."""
    import hashlib

    import boto3

    [(block, shown)] = _pairs()
    assert "s3://pdi-blobs/archive/" in block and "postgresql://pdi@db/pdi" in block
    archive = str(tmp_path / "archive")
    bucket = f"pdi-blobs-{uuid.uuid4().hex[:12]}"

    def here(text: str) -> str:
        text = text.replace("postgresql://pdi@db/pdi", archive).replace("pdi-blobs", bucket)
        return re.sub(r"/\d{4}/\d\d/\d\d/", one_gmt_day.strftime("/%Y/%m/%d/"), text)

    for variable, value in swift_node.environment().items():
        monkeypatch.setenv(variable, value)
    monkeypatch.delenv("AWS_DEFAULT_REGION")  # the page sets none
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDI_ARCHIVE", raising=False)
    pdf = (ROOT / "tests" / "data" / "pdf" / "sizes.pdf").read_bytes()
    (tmp_path / "report.pdf").write_bytes(pdf)
    runner = CliRunner()
    lines = [line for line in here(block).splitlines() if not line.startswith("export ")]
    [made] = [line for line in lines if line.startswith("python3 ")]
    # before the bucket is made: refused, in the page's words
    refused = runner.invoke(cli, shlex.split(lines[lines.index(made) + 1])[1:])
    assert refused.exit_code == 4, refused.output
    assert re.fullmatch(rf"pdi: not found: no bucket '{bucket}' at {re.escape(swift_node.endpoint)}; create it first\n",
                        refused.stderr), refused.stderr
    assert "`pdi: not found: no bucket 'pdi-blobs' at …; create it first`" in " ".join(PAGE.read_text("utf-8").split())
    printed = ""
    for line in lines:
        if line.startswith("python3 "):
            done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=120, check=False,
                                  env=dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"))
            assert done.returncode == 0 and done.stdout == "", (line, done.stdout, done.stderr)
            continue
        words = shlex.split(line, comments=True)
        assert words[0] == "pdi", line
        result = runner.invoke(cli, words[1:])
        assert result.exit_code == 0, (line, result.output)
        printed += result.stdout
    assert printed == here(shown)
    client = boto3.client("s3", endpoint_url=swift_node.endpoint)
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=bucket, Prefix="archive/").get("Contents", [])]
    assert keys == ["archive/" + hashlib.sha256(pdf).hexdigest()], keys
