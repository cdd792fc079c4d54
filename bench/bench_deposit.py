"""Deposits beside their floor: ``pdi add`` of a large text, and a 1 KB deposit, interleaved with plain writes.

1. ``pdi add FILE`` of a generated text of ``--mb`` MiB (default 1024): words
   of a 30,000-word vocabulary drawn by Zipf's law, lines of 6 to 14 words,
   paragraphs of 2 to 12 lines (a block of up to 16 MiB made once, repeated), run as
   the user runs it (a new process, a new SQLite archive each run), beside its
   floor: reading the same file, hashing it with ``hashlib.sha256`` and
   writing it to a new file in the same folder with 1 MiB buffers, then
   ``fsync`` (in Python, one thread). Interleaved (floor, pdi, floor, pdi …),
   both read the file from the page cache. Each ``pdi add``'s peak resident
   set is its own (``os.wait4``). Then ``pdi index`` drains what the deposit
   left to the indexer's queue (the full text), timed once: work done later,
   off the depositor's path.
2. A 1 KB text deposited in-process (``Archive.deposit``: mint, checks, full
   text, the blob, a row of the catalog as any of at most 64 KiB, written and
   made durable by the catalog's commit) beside ``open``/``write``/``fsync``
   of the same octets to a new file in the same folder, interleaved, medians;
   on SQLite (the archive in a temporary folder) and on a throw-away
   PostgreSQL cluster (``tests/support/pgcluster.py``) with fsync off, as the
   tests run it, and then on a second cluster with PostgreSQL's defaults
   (``TemporaryCluster(durable=True)``: fsync, synchronous_commit and
   full_page_writes on). Beside this process's CPU, PostgreSQL's: what its
   processes (``/proc``) spent over the deposits, a mean a deposit.

Run: ``python3 bench/bench_deposit.py`` (``--mb``, ``--runs``, ``--small``
for a run of a few seconds that takes every path: 8 MiB, one run, 20 small
deposits). Prints medians and ratios, and the load average; ``--markdown
FILE`` writes the README's table (``bench/run_all.py --write-readme deposit``).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(SRC))
sys.path.insert(0, str(HERE.parent / "tests"))  # the throw-away cluster is a test tool, not part of the package
sys.path.insert(0, str(HERE))

import readme  # noqa: E402  (bench/ is not a package)
from pdi.archive import Archive, Content  # noqa: E402

S = "bench.example.us"
PDI = [sys.executable, "-c", "from pdi.cli import main; main()"]
BLOCK = 16 << 20


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    consonants, vowels = "bcdfghjklmnprstvwz", "aeiou"
    words: set[str] = set()
    while len(words) < size:
        syllables = rng.choice((1, 1, 2, 2, 2, 3, 3, 4))
        words.add("".join(
            rng.choice(consonants) + rng.choice(vowels) + ("" if rng.random() < 0.5 else rng.choice(consonants))
            for _ in range(syllables)
        ))
    return sorted(words)


def text_block(size: int, seed: int = 2557) -> bytes:
    """About ``size`` octets of prose-like text: Zipf-distributed words, lines of 6-14 words, paragraphs."""
    rng = random.Random(seed)
    words = _vocabulary(rng, 30_000)
    weights = list(itertools.accumulate(1 / rank for rank in range(1, len(words) + 1)))
    out: list[str] = []
    total = 0
    while total < size:
        for _ in range(rng.randint(2, 12)):
            line = " ".join(rng.choices(words, cum_weights=weights, k=rng.randint(6, 14)))
            line = line[0].upper() + line[1:] + rng.choice((".", ",", ";", "")) + "\n"
            out.append(line)
            total += len(line)
        out.append("\n")
        total += 1
    return "".join(out).encode("ascii")


def generate(path: Path, mib: int) -> None:
    block = text_block(max(1 << 20, min(BLOCK, (mib << 20) // 8)))
    left = mib << 20
    with path.open("wb") as out:
        while left > 0:
            out.write(block[:left])
            left -= len(block)


def floor(source: Path, target: Path) -> tuple[float, float]:
    """Read ``source``, SHA-256 it and write it to ``target`` with 1 MiB buffers, then fsync: seconds, CPU seconds."""
    cpu = time.process_time()
    start = time.perf_counter()
    digest = hashlib.sha256()
    buffer = bytearray(1 << 20)
    view = memoryview(buffer)
    with source.open("rb", buffering=0) as f, target.open("wb", buffering=0) as out:
        while n := f.readinto(buffer):  # type: ignore[attr-defined]
            digest.update(view[:n])
            out.write(view[:n])
        os.fsync(out.fileno())
    elapsed = time.perf_counter() - start
    spent = time.process_time() - cpu
    target.unlink()
    return elapsed, spent


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def pdi(*args: str) -> tuple[float, int, str, float]:
    """Run ``pdi ARGS`` as a new process: seconds, its own peak RSS (KiB), its standard output, its CPU seconds."""
    start = time.perf_counter()
    proc = subprocess.Popen([*PDI, *args], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"pdi {' '.join(args)} failed ({proc.returncode}): {err.strip()}")
    return elapsed, int(usage.ru_maxrss), out, usage.ru_utime + usage.ru_stime


def bench_large(mib: int, runs: int, scratch: Path) -> list[list[str]]:
    """``pdi add`` of ``mib`` MiB beside its floor, then ``pdi index``: the README table's rows."""
    text = scratch / "text.txt"
    made = time.perf_counter()
    generate(text, mib)
    print(f"generated {mib} MiB of text in {time.perf_counter() - made:.1f} s: {text.stat().st_size} octets")
    ours: list[float] = []
    theirs: list[float] = []
    ours_cpu: list[float] = []
    theirs_cpu: list[float] = []
    peaks: list[int] = []
    archive = scratch / "archive"
    for run in range(runs):
        shutil.rmtree(archive, ignore_errors=True)
        pdi("init", str(archive))
        pdi("series", "add", S, "--archive", str(archive))
        os.sync()
        seconds, cpu = floor(text, scratch / "copy.bin")
        theirs.append(seconds)
        theirs_cpu.append(cpu)
        os.sync()
        seconds, peak, out, cpu = pdi("add", str(text), "-s", S, "--archive", str(archive), "--no-progress")
        ours.append(seconds)
        ours_cpu.append(cpu)
        peaks.append(peak)
        print(f"  run {run + 1}: floor {theirs[-1]:7.2f} s (CPU {theirs_cpu[-1]:6.2f} s)   pdi add {seconds:7.2f} s"
              f" (CPU {cpu:6.2f} s; {out.strip()}), peak RSS {peak / 1024:.0f} MiB   ratio {seconds / theirs[-1]:5.2f}x",
              flush=True)
    o, t = statistics.median(ours), statistics.median(theirs)
    oc, tc = statistics.median(ours_cpu), statistics.median(theirs_cpu)
    print(f"pdi add {mib} MiB   median {o:7.2f} s ({mib / o:6.0f} MiB/s)   floor {t:7.2f} s ({mib / t:6.0f} MiB/s)"
          f"   ratio {o / t:5.2f}x   CPU {oc:.2f} s vs {tc:.2f} s ({oc / max(tc, 1e-6):4.2f}x)   peak RSS {max(peaks) / 1024:.0f} MiB")
    pending = pdi("index", "--pending", "--archive", str(archive))[2].strip()
    seconds, index_peak, out, _ = pdi("index", "--archive", str(archive))
    print(f"then pdi index (the queued full text, off the deposit's path): {seconds:.2f} s"
          f" ({mib / seconds:.1f} MiB/s), peak RSS {index_peak / 1024:.0f} MiB: {out.strip()}"
          f"{'' if pending else ' (nothing was queued!)'}")
    found = pdi("search", "the", "-n", "1", "--archive", str(archive))  # a word the vocabulary may lack: any answer
    del found
    shutil.rmtree(archive, ignore_errors=True)
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
    return [
        [f"`pdi add` {mib:,} MiB (SHA-256, chunk digests, charset check, line index, write, fsync, commit)",
         f"{o:.2f} s ({mib / o:.0f} MiB/s)", f"{t:.2f} s ({mib / t:.0f} MiB/s)",
         f"**{o / t:.2f}×** (runs {min(ratios):.2f}–{max(ratios):.2f}×)"],
        ["CPU of the same (user + system)", f"{oc:.2f} s", f"{tc:.2f} s", f"{oc / max(tc, 1e-6):.2f}×"],
        ["peak RSS of `pdi add` (`wait4`)", f"{max(peaks) / 1024:.0f} MiB", "", ""],
        ["then `pdi index`: the queued full text, off the depositor's path",
         f"{seconds:.1f} s ({mib / seconds:.1f} MiB/s), peak RSS {index_peak / 1024:.0f} MiB", "", ""],
    ]


DOC = ("document {i}\n" + "lorem ipsum dolor sit amet\n" * 36)  # 1 KB


def deposit_1kb(
    archive: Archive, series: str, scratch: Path, count: int, cpu: list[float] | None = None
) -> tuple[float, float]:
    """Medians of ``count`` 1 KB deposits into ``series`` and of writing and fsyncing the same octets to new files.

    ``cpu``, if given, receives the medians of this process's CPU time for each (a
    PostgreSQL server's is not counted).

    Interleaved, alternating which goes first, so both see the same disk
    (its fsync time drifts a lot on a shared machine). ``bench_archive.py``
    takes its deposit row from here too: both tables time this, ``Archive.deposit`` in this process (what
    ``Archive.add``, ``pdi add`` and the write API call), not the ``pdi add`` command with its start-up.
    """
    docs = [DOC.format(i=i).encode() for i in range(count + 5)]

    def plain(i: int) -> None:
        fd = os.open(scratch / f"doc-{i}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, docs[i])
            os.fsync(fd)
        finally:
            os.close(fd)

    for i in range(5):  # warm: the first deposit opens what the rest reuse
        archive.deposit(series, [Content(docs[count + i], "text")])
    ours: list[float] = []
    theirs: list[float] = []
    ours_cpu: list[float] = []
    theirs_cpu: list[float] = []
    timed: list[tuple[list[float], list[float], Callable[[int], object]]] = [
        (ours, ours_cpu, lambda i: archive.deposit(series, [Content(docs[i], "text")])), (theirs, theirs_cpu, plain)]
    for i in range(count):
        for into, into_cpu, fn in timed if i % 2 == 0 else reversed(timed):
            spent = time.process_time()
            start = time.perf_counter()
            fn(i)
            into.append(time.perf_counter() - start)
            into_cpu.append(time.process_time() - spent)
    if cpu is not None:
        cpu[:] = [statistics.median(ours_cpu), statistics.median(theirs_cpu)]
    return statistics.median(ours), statistics.median(theirs)


def server_cpu(data: Path) -> float:
    """CPU seconds (user + system) spent so far by the PostgreSQL server whose data directory is ``data``: its
    postmaster and every process it started (backends, WAL writer, checkpointer, autovacuum), from ``/proc``."""
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(stat.parent.name) == postmaster or int(fields[1]) == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / tick


def bench_small(label: str, archive: Archive, scratch: Path, count: int, server: Path | None = None) -> list[str]:
    """1 KB deposits on one store beside write + fsync: the README table's row. ``server``: the data directory
    of the PostgreSQL cluster, whose CPU per deposit (a mean: the floor does not touch it) is told too."""
    archive.add_series(S)
    cpu: list[float] = []
    before = server_cpu(server) if server is not None else 0.0
    o, t = deposit_1kb(archive, S, scratch, count, cpu)
    spent = (server_cpu(server) - before) / (count + 5) if server is not None else None  # with deposit_1kb's 5 warm
    theirs = "" if spent is None else f", server {spent * 1000:.2f} ms"
    print(f"deposit 1 KB, {label:32s} pdi {o * 1000:7.3f} ms   write+fsync {t * 1000:7.3f} ms   ratio {o / t:5.2f}x"
          f"   CPU {cpu[0] * 1000:.3f} ms vs {cpu[1] * 1000:.3f} ms (this process){theirs}")
    return [f"deposit 1 KB (`Archive.deposit` in-process), {label}", f"{o * 1000:.2f} ms (CPU {cpu[0] * 1000:.2f} ms{theirs})",
            f"write + fsync of a new file {t * 1000:.2f} ms (CPU {cpu[1] * 1000:.2f} ms)", f"**{o / t:.1f}×**"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=1024, help="MiB of text for pdi add (default 1024)")
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs of pdi add and its floor")
    parser.add_argument("--deposits", type=int, default=300, help="1 KB deposits on each store")
    parser.add_argument("--no-postgres", action="store_true", help="leave out the PostgreSQL store")
    parser.add_argument("--no-large", action="store_true", help="only the 1 KB deposits")
    readme.arguments(parser, markdown=True)  # --small: 8 MiB, one run, 20 deposits
    args = parser.parse_args()
    if args.small:
        args.mb, args.runs, args.deposits = 8, 1, 20
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="pdi-bench-deposit-", dir=os.environ.get("PDI_BENCH_DIR")) as tmp:
        scratch = Path(tmp)
        if not args.no_large:
            rows += bench_large(args.mb, args.runs, scratch)
        with Archive.init(str(scratch / "small")) as archive:
            rows.append(bench_small("SQLite (the blob a catalog row)", archive, scratch, args.deposits))
    if not args.no_postgres:
        from support.pgcluster import TemporaryCluster

        with TemporaryCluster() as cluster, tempfile.TemporaryDirectory(prefix="pdi-bench-deposit-") as tmp, \
                Archive.init(cluster.create_schema("deposit_nofsync")) as archive:
            rows.append(bench_small("PostgreSQL, fsync off (as tests)", archive, Path(tmp), args.deposits, cluster.data))
        # fsync, synchronous_commit and full_page_writes on: PostgreSQL's defaults, kept from the start
        # (the tests' cluster turns them off on its command line, which ALTER SYSTEM cannot undo)
        with TemporaryCluster(durable=True) as cluster, tempfile.TemporaryDirectory(prefix="pdi-bench-deposit-") as tmp, \
                Archive.init(cluster.create_schema("deposit_fsync")) as archive:
            rows.append(bench_small("PostgreSQL, fsync on", archive, Path(tmp), args.deposits, cluster.data))
    print(f"load average {os.getloadavg()[0]:.2f}")
    large = "" if args.no_large else (
        f"`pdi add` of a generated {args.mb:,} MiB text as a new process, medians of {args.runs} runs interleaved"
        " with its floor (read, `hashlib.sha256`, write with 1 MiB buffers, fsync); ")
    readme.write(args.markdown, large + f"1 KB deposits in-process (`Archive.deposit`), medians of {args.deposits}"
                 " interleaved with `write` + `fsync` of the same octets to a new file (CPU: this process's;"
                 " server: the mean CPU a deposit cost the PostgreSQL cluster, all its processes):\n\n"
                 + readme.table(["work", "pdi", "floor", "ratio"], rows))


if __name__ == "__main__":
    main()
