"""Listing benchmark: a day of 10,000 names, beside reading a file of the same names.

For SQLite (a directory) and PostgreSQL (a throw-away cluster on a unix socket,
:class:`support.pgcluster.TemporaryCluster`), one GMT day of ``--names`` serial
names (default 10,000) is put into a fresh catalog (``import_all``, one
transaction), and then, interleaved (``--rounds`` times each; medians):

1. in process: :meth:`Archive.iter_names` (the names as text, what ``pdi ls``
   prints) and :meth:`Archive.ls` (the names as :class:`~pdi.identifier.PDI`
   values) beside reading a file of the same names (``read_text().splitlines()``);
2. as the user runs it: ``pdi ls urn:pdi://…/2026/11/22/*`` writing the names to
   a pipe, beside ``cat`` of the names file and beside a bare ``python3`` that
   reads and prints the file (a Python command's own floor: start-up).

Run: ``python3 bench/bench_listing.py [--names N] [--rounds R] [--small]``.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# the throw-away cluster is a test tool (tests/support/), not part of the package
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import readme
from pdi.archive import Archive
from pdi.archive.store import RepresentationRecord, SeriesRecord
from support.pgcluster import TemporaryCluster

S = "bench.example.us"
DAY = datetime.date(2026, 11, 22)
PATTERN = f"urn:pdi://{S}/2026/11/22/*"


def fill_day(archive: Archive, names: int) -> None:
    """``names`` serial names on :data:`DAY` (one blob), and a name on the days before and after."""
    content = b"x"
    sha = hashlib.sha256(content).hexdigest()
    at = "2026-11-22T12:00:00.000000Z"
    records = [
        (RepresentationRecord(S, day, str(n), n, 1, "png", "image/png", None, None, sha, 1, at), content)
        for day, count in ((DAY - datetime.timedelta(days=1), 1), (DAY, names), (DAY + datetime.timedelta(days=1), 1))
        for n in range(1, count + 1)
    ]
    archive.store.import_all([SeriesRecord(S, None, "", "2026-11-22T12:00:00Z")], records, [])
    if archive.store.dialect == "postgresql":
        # what autovacuum does soon after a bulk load: the planner's statistics of the new rows
        archive.store.query("ANALYZE")


def _median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _cpu(fn: Callable[[], object]) -> float:
    """This process's CPU time for ``fn`` (on a loaded machine, wall time is mostly waiting for a core)."""
    start = time.process_time()
    fn()
    return time.process_time() - start


def _run(argv: list[str]) -> bytes:
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE).stdout


def bench(label: str, location: str, scratch: Path, names: int, rounds: int) -> dict[str, float]:
    """Time the listings of one catalog; the medians (ms) by what was timed."""
    with Archive.init(location) as archive:
        fill_day(archive, names)
        listed = [str(n) for n in archive.ls(PATTERN)]
        assert len(listed) == names, len(listed)
        assert list(archive.iter_names(PATTERN)) == listed
        text_file = scratch / f"names-{label}.txt"
        text_file.write_text("".join(f"{n}\n" for n in listed))
        times: dict[str, list[float]] = {"names": [], "pdi": [], "file": [], "names cpu": [], "file cpu": []}
        for _ in range(rounds):
            times["names"].append(_timed(lambda: list(archive.iter_names(PATTERN))))
            times["pdi"].append(_timed(lambda: archive.ls(PATTERN)))
            times["file"].append(_timed(lambda: text_file.read_text().splitlines()))
            times["names cpu"].append(_cpu(lambda: list(archive.iter_names(PATTERN))))
            times["file cpu"].append(_cpu(lambda: text_file.read_text().splitlines()))
    file_ms = _median_ms(times["file"])
    print(f"\n== {label}: a day of {names:,} names, medians of {rounds}")
    for key, what in (("names", "Archive.iter_names (text)"), ("pdi", "Archive.ls (PDI values)")):
        ms = _median_ms(times[key])
        print(f"in process  {what:<28} {ms:8.2f} ms   read names file {file_ms:6.2f} ms   ratio {ms / file_ms:6.1f}x")
    ms, file_cpu = _median_ms(times["names cpu"]), _median_ms(times["file cpu"])
    server = " (this process only: not the server's)" if label == "PostgreSQL" else ""
    print(f"CPU time    {'Archive.iter_names (text)':<28} {ms:8.2f} ms   read names file {file_cpu:6.2f} ms"
          f"   ratio {ms / file_cpu:6.1f}x{server}")

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(Path(__file__).resolve().parents[1] / "src"),
                                                                    os.environ.get("PYTHONPATH")) if p)}
    pdi_ls = [sys.executable, "-m", "pdi", "ls", PATTERN, "--archive", location]
    printed = subprocess.run(pdi_ls, check=True, stdout=subprocess.PIPE, env=env).stdout
    assert printed == text_file.read_bytes(), "pdi ls printed other names than the file holds"
    python_cat = [sys.executable, "-c", "import sys; sys.stdout.write(open(sys.argv[1]).read())", str(text_file)]
    runs: dict[str, list[float]] = {"pdi": [], "cat": [], "python": []}
    for _ in range(rounds):
        runs["pdi"].append(_timed(lambda: subprocess.run(pdi_ls, check=True, stdout=subprocess.PIPE, env=env)))
        runs["cat"].append(_timed(lambda: _run(["cat", str(text_file)])))
        runs["python"].append(_timed(lambda: _run(python_cat)))
    pdi_ms, cat_ms, py_ms = (_median_ms(runs[k]) for k in ("pdi", "cat", "python"))
    print(f"command     pdi ls {pdi_ms:8.1f} ms   cat names file {cat_ms:6.1f} ms   ratio {pdi_ms / cat_ms:6.1f}x"
          f"   python3 printing the file {py_ms:6.1f} ms   ratio {pdi_ms / py_ms:5.1f}x")
    return {"names": _median_ms(times["names"]), "pdi": _median_ms(times["pdi"]), "file": file_ms,
            "names cpu": ms, "file cpu": file_cpu, "pdi ls": pdi_ms, "cat": cat_ms, "python": py_ms}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", type=int, default=10_000, help="Names on the day (default 10,000).")
    parser.add_argument("--rounds", type=int, default=15, help="Timings of each, interleaved (medians).")
    readme.arguments(parser, markdown=True)  # --small: 500 names, 3 rounds
    args = parser.parse_args(argv)
    if args.small:
        args.names, args.rounds = 500, 3
    print(f"load average {os.getloadavg()[0]:.2f} (2 cores shared: compare ratios, not times)")
    with tempfile.TemporaryDirectory(prefix="pdi-bench-listing-") as tmp:
        scratch = Path(tmp)
        lite = bench("SQLite", str(scratch / "sqlite"), scratch, args.names, args.rounds)
        with TemporaryCluster() as cluster:
            pg = bench("PostgreSQL", cluster.create_database("listing"), scratch, args.names, args.rounds)

    def row(what: str, key: str, floor: str, floor_what: str) -> list[str]:
        return [what, f"{lite[key]:.1f} ms", f"{pg[key]:.1f} ms",
                f"{floor_what}: {lite[floor]:.2f} / {pg[floor]:.2f} ms",
                f"**{lite[key] / lite[floor]:.1f}×** / **{pg[key] / pg[floor]:.1f}×**"]

    readme.write(args.markdown, f"A day of {args.names:,} serial names; medians of {args.rounds} interleaved rounds."
                 " PostgreSQL's CPU time is this process's only, not the server's.\n\n" + readme.table(
        ["listing", "SQLite", "PostgreSQL", "floor (SQLite run / PostgreSQL run)", "ratio"],
        [row("`Archive.iter_names` (the names as text)", "names", "file", "read a file of the names"),
         row("same, CPU time", "names cpu", "file cpu", "read a file of the names"),
         row("`Archive.ls` (the names as `PDI` values)", "pdi", "file", "read a file of the names"),
         row("`pdi ls PATTERN` as a command, the names to a pipe", "pdi ls", "python",
             "`python3` printing the file"),
         row("same", "pdi ls", "cat", "`cat` of the file")]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
