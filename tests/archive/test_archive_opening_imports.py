"""Opening an archive loads only the catalog and blob store its location needs (pdi.archive.catalog.opening).

A command on a SQLite archive with its own files is a short process: importing
psycopg and boto3 for it would more than double its start-up (they are most of
what `pdi ls` imported before). Each test runs `pdi` in a fresh interpreter and
asks it which of them it loaded.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.pgcluster import TemporaryCluster

#: Runs `pdi ARGS…` in this interpreter, then prints which of the heavy client libraries it imported.
PROBE = """
import sys
from click.testing import CliRunner
from pdi.cli import cli
result = CliRunner().invoke(cli, sys.argv[1:])
assert result.exit_code == 0, result.output
print(*sorted(m for m in ("psycopg", "psycopg_pool", "boto3", "botocore") if m in sys.modules))
"""


def _loaded(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_a_sqlite_archive_loads_neither_psycopg_nor_boto3(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    assert _loaded("init", "--archive", location) == set()
    assert _loaded("ls", "--archive", location) == set()


def test_a_postgresql_archive_loads_psycopg_and_not_boto3(pg_cluster: TemporaryCluster) -> None:
    url = pg_cluster.create_database("opening_imports")
    assert _loaded("init", "--archive", url) == {"psycopg", "psycopg_pool"}
