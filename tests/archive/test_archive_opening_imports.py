"""Opening an archive loads only the catalog and blob store its location needs (pdi.archive.catalog.opening).

A command on a SQLite archive with its own files is a short process: importing
psycopg and boto3 for it would more than double its start-up (they are most of
what `pdi ls` imported before). Each test runs `pdi` in a fresh interpreter and
asks it which of them it loaded. Where they are not installed at all (pdi
without its postgres or s3 extra, pyproject.toml), a SQLite archive still
works and the other stores name the extra to install (pdi._extras); the
same is checked on a real `pipx install` of the wheel in tests/test_package.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pdi._extras import missing_extra
from pdi.errors import UnsupportedError
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


#: Runs `pdi ARGS…` in this interpreter, then prints which of pdi's full-text modules it imported.
FULLTEXT_PROBE = PROBE.replace('("psycopg", "psycopg_pool", "boto3", "botocore")',
                               '("pdi.passages.fulltext", "pdi.passages.scan", "pdi.archive.search")')


def test_a_listing_on_postgresql_loads_no_full_text_module(pg_cluster: TemporaryCluster) -> None:
    """`pdi ls` searches nothing: the catalog's search part reads pdi.passages.fulltext only when asked to search
    (its import was 12 to 25 ms of a PostgreSQL command's start-up, as SQLite's catalog already left it)."""
    url = pg_cluster.create_database("opening_imports_ls")
    subprocess.run([sys.executable, "-m", "pdi", "init", url], capture_output=True, check=True)
    for args in (("ls", "--archive", url), ("series", "add", "ls.example.us", "--archive", url),
                 ("ls", "urn:pdi://ls.example.us/2026/11/22/*", "--archive", url)):
        done = subprocess.run([sys.executable, "-c", FULLTEXT_PROBE, *args], capture_output=True, text=True, check=True)
        assert done.stdout.split() == [], (args, done.stdout)
    probe = subprocess.run([sys.executable, "-c", FULLTEXT_PROBE, "search", "walrus", "--archive", url],
                           capture_output=True, text=True, check=False)
    assert "pdi.passages.fulltext" in probe.stdout.split(), probe  # the probe sees the module where it is used


#: Runs `pdi ARGS…` (the console script's entry) as if the libraries named in $PDI_TEST_BLOCK were not installed.
BLOCKED = """
import os, sys
sys.modules.update(dict.fromkeys(os.environ["PDI_TEST_BLOCK"].split()))  # None: importing it fails
from pdi.cli import main
main()
"""


def _without(libraries: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCKED, *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PDI_TEST_BLOCK": libraries}, timeout=120, check=False)


SERVER_LIBRARIES = "psycopg psycopg_pool boto3 botocore"


def test_without_the_server_libraries_a_sqlite_archive_works(tmp_path: Path) -> None:
    text = tmp_path / "a.txt"
    text.write_text("one\n")
    for args in (["init", "a"], ["series", "add", "example.org.us", "--archive", "a"],
                 ["add", "a.txt", "--series", "example.org.us", "--archive", "a"], ["ls", "--archive", "a"],
                 ["serve", "--help"], ["backup", "--help"]):
        done = _without(SERVER_LIBRARIES, *args, cwd=tmp_path)
        assert done.returncode == 0, (args, done.stderr)


def test_without_psycopg_a_postgresql_archive_names_the_postgres_extra(tmp_path: Path) -> None:
    done = _without("psycopg psycopg_pool", "init", "postgresql://127.0.0.1:1/none", cwd=tmp_path)
    assert done.returncode == UnsupportedError.exit_code == 6
    wanted = " ".join(f"'{r}'" for r in _extra("postgres"))  # as pyproject.toml lists them
    assert wanted == "'psycopg[binary]>=3.1' 'psycopg-pool>=3.2'"
    assert done.stderr == (
        "pdi: unsupported: pdi's postgres extra is not installed (psycopg is missing), and a PostgreSQL catalog"
        f" (postgresql://…) needs it: add its packages to pdi's environment, pipx inject pdi {wanted} (or, in the"
        f" virtual environment pdi is installed in, pip install {wanted}), or install pdi's wheel again as"
        " 'WHEEL[postgres]'\n"
    )  # never "pip install 'pdi[postgres]'": pdi is installed from its wheel, a "pdi" on an index could be anyone's


def _extra(name: str) -> list[str]:
    """The requirements of pdi's extra ``name`` as pyproject.toml lists them."""
    import tomllib

    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]
    return list(project["optional-dependencies"][name])


def test_without_boto3_blobs_in_s3_name_the_s3_extra_and_make_no_archive(tmp_path: Path) -> None:
    done = _without("boto3 botocore", "init", "a", "--blobs", "s3://bucket/prefix", cwd=tmp_path)
    assert done.returncode == 6
    assert "pdi's s3 extra is not installed (boto3 is missing)" in done.stderr
    # what needs the extra is one thing, and the sentence says so: "… store (s3://…) needs it", not "blobs … needs"
    assert ", and an S3-compatible blob store (s3://…) needs it:" in done.stderr, done.stderr
    assert f"pipx inject pdi {' '.join(repr(r) for r in _extra('s3'))} " in done.stderr
    assert not (tmp_path / "a").exists()


def test_a_missing_module_that_is_no_extra_of_ours_is_a_bug_not_a_message() -> None:
    bug = ModuleNotFoundError("No module named 'numpy'", name="numpy")
    with pytest.raises(ModuleNotFoundError) as raised:
        missing_extra("postgres", bug)
    assert raised.value is bug
    with pytest.raises(UnsupportedError) as named:
        missing_extra("s3", ModuleNotFoundError("No module named 'botocore.config'", name="botocore.config"))
    assert named.value.details == {"extra": "s3", "missing": "botocore"}
