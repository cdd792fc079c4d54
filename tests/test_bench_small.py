"""Every benchmark runs: ``bench/run_all.py --small NAME`` for each ``bench/bench_*.py``.

A benchmark's small mode (``--small``) takes a few seconds and goes through
each of its code paths, so a benchmark that crashes on the code as it is
fails here, not months later in a figure nobody can regenerate. Each run
starts what its benchmark needs, as the benchmark does on its own (the
throw-away PostgreSQL cluster of tests/support, nginx and wrk, which
``scripts/bootstrap --dev`` installs). No figure is asserted: speed is
measured in bench/, not in tests; only that the benchmark ran to the end and
printed the ratio of pdi to its floor or peer.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted(path.name.removeprefix("bench_").removesuffix(".py")
                    for path in (ROOT / "bench").glob("bench_*.py"))

#: A printed ratio: "ratio 2.3x", a column headed "ratio", "4.8×", "PostgreSQL / SQLite: 2.70".
RATIO = re.compile(r"\bratios?\b|\d(?:\.\d+)?\s?[×x](?!\w)|\w\s?/\s?\w[^\n:]*:\s*\d", re.IGNORECASE)


def _marks(name: str) -> list[pytest.MarkDecorator]:
    marks = [pytest.mark.slow]
    if "TemporaryCluster" in (ROOT / "bench" / f"bench_{name}.py").read_text(encoding="utf-8"):
        marks.append(pytest.mark.postgres)
    return marks


@pytest.mark.parametrize("name", [pytest.param(name, marks=_marks(name)) for name in BENCHMARKS])
def test_benchmark_runs_small(name: str) -> None:
    env = dict(os.environ)  # PYTHONPATH: the pdi under test (tests/conftest.py)
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "run_all.py"), "--small", name],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)
    report = f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"
    assert done.returncode == 0, report
    assert f"##### bench_{name}" in done.stdout, report
    assert RATIO.search(done.stdout), f"no ratio printed\n{report}"


def test_run_all_names_a_benchmark_that_fails(tmp_path: Path) -> None:
    """run_all exits non-zero and names the benchmark when one crashes (here: one that is not there)."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "run_all.py"), "--small", "no_such_thing"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0
    assert "bench_no_such_thing.py" in done.stderr


PAIRS = [*sorted(path.name for path in (ROOT / "bench").glob("?*_pairs.py")), "manifest_pages.py"]


@pytest.mark.parametrize("script", PAIRS)
def test_a_pairs_script_says_what_is_wrong_with_its_checkouts(script: str, tmp_path: Path) -> None:
    """The before/after scripts (bench/_pairs.py) read ``NAME=SRC``: a word without ``=``, a ``SRC`` that is no
    directory or a ``NAME`` given twice is a usage error naming it (argparse's exit 2), before anything runs."""
    run = [sys.executable, str(ROOT / "bench" / script)]
    for given, said in ((["before"], "'before' is not NAME=SRC"),
                        ([f"a={tmp_path / 'gone'}"], f"'{tmp_path / 'gone'}' is not a directory"),
                        ([f"a={tmp_path}", f"a={tmp_path}"], "'a' is given twice")):
        done = subprocess.run([*run, *given], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 2 and said in done.stderr, done.stderr
    assert "NAME=SRC" in subprocess.run([*run, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                                        check=True).stdout


def test_write_ahead_pairs_runs_two_checkouts_in_turn() -> None:
    """One of the pairs scripts end to end, tiny: each checkout once a round, and a median (range) for each."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "write_ahead_pairs.py"), "--blobs", "5",
                           "--size", "1000", "--rounds", "2", f"old={ROOT / 'src'}", f"new={ROOT / 'src'}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
    assert [line.split(":")[0] for line in done.stdout.splitlines() if line.startswith("round")] == [
        "round 1 old", "round 1 new", "round 2 old", "round 2 new"]
    summary = [line for line in done.stdout.splitlines() if not line.startswith("round")]
    assert len(summary) == 2 and all(re.search(r"user \d\.\d{3} \(\d\.\d{3}-\d\.\d{3}\) s", line) for line in summary)


def test_a_pairs_script_runs_each_checkout_from_its_bytecode_not_its_source(tmp_path: Path) -> None:
    """Every checkout a pairs script runs is compiled first (bench/_pairs.py): with ``PYTHONDONTWRITEBYTECODE`` set,
    as it is here, a fresh checkout's modules were compiled again by every process it started, some 0.13 s of CPU
    each ``pdi`` command (docs/benchmarks.md, "Mirrors"), counted against that checkout alone."""
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("")
    (src / "pkg" / "mod.py").write_text("VALUE = 1\n")
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import _pairs
    finally:
        sys.path.remove(str(ROOT / "bench"))
    made = _pairs.parser("d", rounds=1)
    chosen = _pairs.variants(made, made.parse_args([f"fresh={src}"]))
    assert chosen == {"fresh": str(src)}
    cached = {path.name.split(".")[0] for path in src.rglob("__pycache__/*.pyc")}
    assert cached == {"__init__", "mod"}


def test_warc_import_pairs_runs_each_checkout_and_times_each_step() -> None:
    """bench/warc_import_pairs.py, tiny: each checkout once a round, then for each its process's CPU an import and
    the thread CPU of each step of it (pass 1, pass 2, the deposits' two sides), each a median (range)."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "warc_import_pairs.py"), "--pages", "3",
                           "--imports", "2", "--rounds", "2", f"old={ROOT / 'src'}", f"new={ROOT / 'src'}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines if line.startswith("round")] == [
        "round 1 old", "round 1 new", "round 2 old", "round 2 new"]
    figure = r"\d+\.\d \(\d+\.\d-\d+\.\d\) ms"
    for name in ("old", "new"):
        assert re.search(rf"^{name}: process CPU an import {figure}$", done.stdout, re.M), done.stdout
        for step in ("pass 1 (read, check, index)", "pass 2 (crawl each page)", "deposits: the importing thread",
                     "deposits: staging threads (packing, checks, blobs)", "staging: packing MHTML"):
            assert re.search(rf"^  {re.escape(step)} {figure}$", done.stdout, re.M), (step, done.stdout)
