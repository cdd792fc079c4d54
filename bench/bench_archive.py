"""Archive benchmark, for both stores, beside reading/writing the same bytes as plain files.

1. Deposits per second of small (1 KB) text documents — each minted, indexed and
   committed, its blob a row of the catalog made durable by the commit's one sync —
   beside writing each document to a new file of its own with fsync. The figures
   are ``bench_deposit.deposit_1kb``'s, the same function as ``bench_deposit.py``'s
   1 KB rows (``Archive.deposit`` in this process, which ``Archive.add`` calls).
2. Resolve latency (p50, p99) of a ``#line=a,b`` fragment of a 1 MB text — parse the
   PDI, look it up, read the blob, check its digests, evaluate the fragment — beside
   reading the same bytes from a file and cutting the same lines, CRLF-ended as
   pdi answers them (RFC 5147's canonical form).
3. Listing one day of 10,000 names — ``pdi ls`` of the day, run in this process with
   its output kept in memory — beside reading a file of the same 10,000 names.

Run: ``python3 bench/run_all.py archive`` (a few minutes; ``--small`` for CI). The
PostgreSQL store runs on a throw-away local cluster over a unix socket, switched to
``fsync``, ``synchronous_commit`` and ``full_page_writes`` on (the tests run it with
them off): a deposit is acknowledged once it is on disk, as the plain file's is.
Deposits and plain writes, and listings and file reads, are interleaved so that
both see the same machine load; medians.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import io
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# the throw-away cluster is a test tool (tests/support/), not part of the package
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import readme
from bench_deposit import deposit_1kb
from pdi.archive import Archive
from pdi.archive.store import RepresentationRecord, SeriesRecord
from pdi.cli import main as pdi_main
from support.pgcluster import TemporaryCluster

S = "bench.example.us"
DAY = datetime.datetime(2026, 11, 22, 12, tzinfo=datetime.UTC)
DEPOSITS = 300
RESOLVES = 300
NAMES = 10_000
LISTINGS = 7


def _clock() -> datetime.datetime:
    return DAY


def _times(fn: Callable[[int], object], n: int) -> list[float]:
    out = []
    for i in range(n):
        start = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - start)
    return out


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.3f} ms"


def bench_resolve(archive: Archive, scratch: Path) -> tuple[list[float], list[float]]:
    rng = random.Random(5)
    lines = [f"{n:06d} " + "".join(rng.choice("abcdefgh ") for _ in range(rng.randint(20, 120)))
             for n in range(14_000)]
    text = ("\n".join(lines) + "\n").encode()[: 1 << 20]
    pdi = archive.add(S, text, format="text")
    canonical = archive.get(pdi).data  # the bytes as stored: LF line ends
    (scratch / "big.txt").write_bytes(canonical)
    count = len(canonical.splitlines())  # the stored text's own line endings (no longer CRLF throughout)
    assert count > 10, count
    ranges = []
    for _ in range(RESOLVES):
        a = rng.randrange(count - 10)
        ranges.append((a, a + rng.randint(1, 10)))
    ours = _times(lambda i: archive.get(f"{pdi}#line={ranges[i][0]},{ranges[i][1]}"), RESOLVES)

    def plain(i: int) -> bytes:
        data = (scratch / "big.txt").read_bytes()
        a, b = ranges[i]
        # RFC 5147's lines, ended by CRLF as pdi answers them (its canonical form of a text)
        return b"".join(line + b"\r\n" for line in data.splitlines()[a:b])

    theirs = _times(plain, RESOLVES)
    # Same answer, or the comparison means nothing.
    a, b = ranges[0]
    assert archive.get(f"{pdi}#line={a},{b}").data == plain(0)
    return ours, theirs


def fill_day(archive: Archive) -> None:
    content = b"x"
    sha = hashlib.sha256(content).hexdigest()
    day = DAY.date()
    records = [
        (
            RepresentationRecord(S, day, str(n), n, 1, "png", "image/png", None, None, sha, 1,
                                 "2026-11-22T12:00:00.000000Z"),
            content,
        )
        for n in range(1, NAMES + 1)
    ]
    archive.store.import_all([SeriesRecord(S, None, "", "2026-11-22T12:00:00Z")], records, [])


def pdi_ls(location: str) -> str:
    """What ``pdi ls`` of the day prints, run in this process (no interpreter start-up)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            pdi_main(["ls", f"urn:pdi://{S}/2026/11/22/*", "--archive", location])
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise
    return out.getvalue()


def bench_list(location: str, scratch: Path) -> tuple[float, float]:
    listed = pdi_ls(location).splitlines()
    assert len(listed) == NAMES, len(listed)
    names = scratch / "names.txt"
    names.write_text("".join(f"{n}\n" for n in listed))
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(LISTINGS):  # interleaved
        start = time.perf_counter()
        pdi_ls(location)
        middle = time.perf_counter()
        names.read_text().splitlines()
        ours.append(middle - start)
        theirs.append(time.perf_counter() - middle)
    return statistics.median(ours), statistics.median(theirs)


class Figures:
    """One store's medians, in seconds: pdi's and the plain file's."""

    def __init__(self) -> None:
        self.deposit = (0.0, 0.0)
        self.resolve: dict[str, tuple[float, float]] = {}
        self.listing = (0.0, 0.0)


def run_store(label: str, make: Callable[[str], str]) -> Figures:
    figures = Figures()
    with tempfile.TemporaryDirectory(prefix="pdi-bench-") as tmp:
        scratch = Path(tmp)
        print(f"\n== {label}")
        with Archive.init(make("deposits"), clock=_clock) as archive:
            archive.add_series(S)
            ours, plain = figures.deposit = deposit_1kb(archive, S, scratch, DEPOSITS)
            print(f"deposit 1 KB text   pdi {_ms(ours)} ({1 / ours:7.0f}/s)   "
                  f"file+fsync {_ms(plain)} ({1 / plain:7.0f}/s)   ratio {ours / plain:6.1f}x", flush=True)
            ours_r, plain_r = bench_resolve(archive, scratch)
            for q, name in ((0.5, "p50"), (0.99, "p99")):
                o, p = figures.resolve[name] = _p(ours_r, q), _p(plain_r, q)
                print(f"resolve line= 1 MB  {name} pdi {_ms(o)}   file read+cut {_ms(p)}"
                      f"   ratio {o / p:6.1f}x", flush=True)
        location = make("listing")
        with Archive.init(location, clock=_clock) as archive:
            fill_day(archive)
        ours, plain = figures.listing = bench_list(location, scratch)
        print(f"list a day of {NAMES:,}  pdi ls {_ms(ours)}   read names file {_ms(plain)}"
              f"   ratio {ours / plain:6.1f}x", flush=True)
    return figures


def markdown(sqlite: Figures, pg: Figures) -> str:
    def ms(seconds: float) -> str:
        value = seconds * 1000
        return f"{value:.0f} ms" if value >= 100 else f"{value:.1f} ms" if value >= 10 else f"{value:.2f} ms"

    def row(what: str, s: tuple[float, float], p: tuple[float, float], floor: str, extra: str = "") -> list[str]:
        return [what, ms(s[0]) + extra.format(1 / s[0]), ms(p[0]) + extra.format(1 / p[0]),
                f"{floor}: {ms(s[1])} / {ms(p[1])}", f"**{s[0] / s[1]:.1f}×** / **{p[0] / p[1]:.1f}×**"]

    return readme.table(
        ["", "SQLite", "PostgreSQL (fsync on)", "plain file (SQLite run / PostgreSQL run)", "ratio"],
        [
            row("deposit a 1 KB text (`Archive.deposit` in-process, as `bench_deposit.py`: mint, full text, the blob"
                " a catalog row, one commit and its sync)", sqlite.deposit, pg.deposit, "write + fsync of a new file",
                " ({:,.0f}/s)"),
            row("resolve `#line=a,b` in a 1 MB text (on SQLite a blob file), p50", sqlite.resolve["p50"],
                pg.resolve["p50"], "read + cut lines"),
            row("same, p99", sqlite.resolve["p99"], pg.resolve["p99"], "read + cut lines"),
            row(f"list a day of {NAMES:,} names (`pdi ls`, in-process)", sqlite.listing, pg.listing,
                "read a file of the names"),
        ],
    )


def main(argv: list[str]) -> int:
    global DEPOSITS, RESOLVES, NAMES, LISTINGS
    args = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]),
                            markdown=True).parse_args(argv)
    if args.small:
        DEPOSITS, RESOLVES, NAMES, LISTINGS = 10, 10, 300, 3
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="pdi-bench-sqlite-") as root:
        sqlite = run_store("SQLite (1 KB blobs catalog rows, 1 MB a file)", lambda name: str(Path(root) / name))
    with TemporaryCluster(durable=True) as cluster:  # fsync, synchronous_commit, full_page_writes on
        pg = run_store("PostgreSQL (local, unix socket, fsync on)", cluster.create_schema)
    readme.write(args.markdown, markdown(sqlite, pg))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
