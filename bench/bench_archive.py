"""Archive benchmark, for both stores, beside reading/writing the same bytes as plain files.

1. Deposits per second of small (1 KB) text documents — each minted, canonicalized,
   fsynced and committed — beside writing each document to its own file with fsync.
2. Resolve latency (p50, p99) of a ``#line=a,b`` fragment of a 1 MB text — parse the
   PDI, look it up, read the blob, check its SHA-256, evaluate the fragment — beside
   reading the same CRLF-canonical bytes from a file and cutting the same lines.
3. Listing one day of 10,000 names beside reading a file of the same 10,000 names.

Run: ``python3 bench/run_all.py archive`` (about two minutes). The PostgreSQL store
runs on a throw-away local cluster over a unix socket (fsync off, as in the tests).
"""

from __future__ import annotations

import datetime
import hashlib
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

from pdi.archive import Archive
from pdi.archive.store import RepresentationRecord, SeriesRecord
from support.pgcluster import TemporaryCluster

S = "bench.example.us"
DAY = datetime.datetime(2026, 11, 22, 12, tzinfo=datetime.UTC)
DEPOSITS = 300
RESOLVES = 300
NAMES = 10_000


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


def bench_deposits(archive: Archive, scratch: Path) -> tuple[float, float]:
    docs = [(f"document {i}\n" + "lorem ipsum dolor sit amet\n" * 36).encode() for i in range(DEPOSITS)]
    def plain(i: int) -> None:
        fd = os.open(scratch / f"doc-{i}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, docs[i])
            os.fsync(fd)
        finally:
            os.close(fd)

    # Interleaved, so both see the same disk (its fsync time drifts a lot on a shared machine).
    ours: list[float] = []
    theirs: list[float] = []
    for i in range(DEPOSITS):
        start = time.perf_counter()
        archive.add(S, docs[i], format="text")
        middle = time.perf_counter()
        plain(i)
        ours.append(middle - start)
        theirs.append(time.perf_counter() - middle)
    return statistics.median(ours), statistics.median(theirs)


def bench_resolve(archive: Archive, scratch: Path) -> tuple[list[float], list[float]]:
    rng = random.Random(5)
    lines = [f"{n:06d} " + "".join(rng.choice("abcdefgh ") for _ in range(rng.randint(20, 120)))
             for n in range(14_000)]
    text = ("\n".join(lines) + "\n").encode()[: 1 << 20]
    pdi = archive.add(S, text, format="text")
    canonical = archive.get(pdi).data
    (scratch / "big.txt").write_bytes(canonical)
    count = canonical.count(b"\r\n")
    ranges = []
    for _ in range(RESOLVES):
        a = rng.randrange(count - 10)
        ranges.append((a, a + rng.randint(1, 10)))
    ours = _times(lambda i: archive.get(f"{pdi}#line={ranges[i][0]},{ranges[i][1]}"), RESOLVES)

    def plain(i: int) -> bytes:
        data = (scratch / "big.txt").read_bytes()
        a, b = ranges[i]
        return b"".join(data.splitlines(keepends=True)[a:b])

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


def bench_list(archive: Archive, scratch: Path) -> tuple[float, float]:
    names = archive.ls(series=S, year=2026, month=11, day=22)
    assert len(names) >= NAMES
    (scratch / "names.txt").write_text("".join(f"{n}\n" for n in names))
    ours = _times(lambda _: archive.ls(series=S, year=2026, month=11, day=22), 5)
    theirs = _times(lambda _: (scratch / "names.txt").read_text().splitlines(), 5)
    return statistics.median(ours), statistics.median(theirs)


def run_store(label: str, make: Callable[[str], str]) -> None:
    with tempfile.TemporaryDirectory(prefix="pdi-bench-") as tmp:
        scratch = Path(tmp)
        print(f"\n== {label}")
        with Archive.init(make("deposits"), clock=_clock) as archive:
            archive.add_series(S)
            ours, plain = bench_deposits(archive, scratch)
            print(f"deposit 1 KB text   pdi {_ms(ours)} ({1 / ours:7.0f}/s)   "
                  f"file+fsync {_ms(plain)} ({1 / plain:7.0f}/s)   ratio {ours / plain:6.1f}x")
            ours_r, plain_r = bench_resolve(archive, scratch)
            for q, name in ((0.5, "p50"), (0.99, "p99")):
                o, p = _p(ours_r, q), _p(plain_r, q)
                print(f"resolve line= 1 MB  {name} pdi {_ms(o)}   file read+cut {_ms(p)}"
                      f"   ratio {o / p:6.1f}x")
        with Archive.init(make("listing"), clock=_clock) as archive:
            fill_day(archive)
            ours, plain = bench_list(archive, scratch)
            print(f"list a day of 10k   pdi {_ms(ours)}   read names file {_ms(plain)}"
                  f"   ratio {ours / plain:6.1f}x")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="pdi-bench-sqlite-") as root:
        run_store("SQLite + blob files", lambda name: str(Path(root) / name))
    with TemporaryCluster() as cluster:
        run_store("PostgreSQL (local, unix socket)", lambda name: cluster.create_schema(name))


if __name__ == "__main__":
    main()
