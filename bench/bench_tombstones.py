"""Tombstones of the documents a TimeMap names: ``Archive.withdrawals_of`` beside the query it replaced.

A TimeMap or TimeGate of a URL captured on K days asks the catalog for the
tombstones of those K documents. pdi joins the keys, as a relation (a
``VALUES`` list on SQLite, arrays through ``unnest`` on PostgreSQL), to the
documents' unique index; the peer is the query it replaced: the same keys as
``OR``-ed conditions, 100 a statement, which PostgreSQL sometimes answered
by scanning the table.

Makes a catalog of N documents by SQL (default 1,000,000): the captures of
one URL on K days (default 1,000), the rest others, and a tombstone of every
50th; then times each way on each store (``--rounds``, median) and checks
both give the same tombstones. PostgreSQL runs on a cluster this benchmark
starts itself (:class:`support.pgcluster.TemporaryCluster`).
Run: ``python3 bench/bench_tombstones.py [--documents N] [--keys K] [--rounds R]``
(``--markdown FILE``: the README's table).
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# the throw-away cluster is a test tool (tests/support/), not part of the package
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import readme
from pdi.archive import Archive
from pdi.archive.store import DocumentKey
from support.pgcluster import TemporaryCluster

S = "web.example.us"
URL = "http://www.example.com/"
#: A tombstone of every this many documents.
WITHDRAWN_EVERY = 50


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1_000_000, help="documents in the catalog")
    parser.add_argument("--keys", type=int, default=1_000, help="days the URL was captured on: the keys asked")
    parser.add_argument("--rounds", type=int, default=7, help="times each way is timed (the median is printed)")
    readme.arguments(parser, markdown=True)
    args = parser.parse_args(argv)
    if args.small:
        args.documents, args.keys, args.rounds = 2_000, 100, 1
    if not 0 < args.keys <= min(args.documents, 9_000):
        parser.error("--keys is from 1 to the documents, and at most 9,000 (one a day)")
    print(f"{args.documents:,} documents, the tombstones of {args.keys:,} asked; median of {args.rounds}")
    print(f"{'':<12} {'pdi (join)':>12} {'OR, 100 each':>14} {'ratio':>8}")
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="pdi-bench-tomb-") as work:
        with Archive.init(f"{work}/archive") as archive:
            rows.append(_row("SQLite", archive, args, modulo="%"))
        with TemporaryCluster() as cluster, Archive.init(cluster.url()) as archive:
            rows.append(_row("PostgreSQL", archive, args, modulo="mod"))
    readme.write(args.markdown, f"A catalog of {args.documents:,} documents, a tombstone of every {WITHDRAWN_EVERY}th;"
                 f" the tombstones of the {args.keys:,} captures of one URL, median of {args.rounds} rounds:\n\n"
                 + readme.table(["store", "pdi: the keys joined (`Archive.withdrawals_of`)",
                                 "the keys `OR`-ed, 100 a statement", "ratio"], rows))
    return 0


def _row(label: str, archive: Archive, args: argparse.Namespace, *, modulo: str) -> list[str]:
    store: Any = archive.store
    archive.add_series(S)
    mod = (lambda a, b: f"({a} % {b})") if modulo == "%" else (lambda a, b: f"mod({a}, {b})")
    numbers = ("(WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < {m}) SELECT n FROM g)"
               if modulo == "%" else "(SELECT generate_series(1, {m}) AS n)").format(m=args.documents)
    day = ("date('2000-01-01', '+' || {d} || ' days')" if modulo == "%"
           else "to_char(date '2000-01-01' + {d}, 'YYYY-MM-DD')").format(d=mod("n", 9000))
    store._query(
        "INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)"
        f" SELECT '{S}', {day}, 2000, 1, 1, CASE WHEN n <= {args.keys} THEN '{URL}' ELSE 'id' || n END,"
        f" NULL, '2000-01-01T00:00:00Z' FROM {numbers} AS g"
    )
    store._query(
        "INSERT INTO withdrawals (document, version, reason, who, at) SELECT id, NULL, 'bench', 'bench',"
        f" '2001-01-01T00:00:00Z' FROM documents WHERE {mod('id', WITHDRAWN_EVERY)} = 0"
    )
    store._query("ANALYZE")
    keys = [DocumentKey(S, datetime.date.fromisoformat(str(d)), str(u))
            for d, u in store._query("SELECT day, unique_id FROM documents WHERE unique_id = ?", [URL])]

    def ours() -> list[int]:
        return sorted(w.id for w in archive.withdrawals_of(keys))

    def peer() -> list[int]:
        found: list[int] = []
        for start in range(0, len(keys), 100):
            batch = keys[start : start + 100]
            found += [int(row[0]) for row in store._query(
                "SELECT w.id FROM withdrawals w JOIN documents d ON d.id = w.document WHERE "
                + " OR ".join(["(d.series = ? AND d.day = ? AND d.unique_id = ?)"] * len(batch)),
                [v for key in batch for v in (key.series, key.day.isoformat(), key.unique_id)],
            )]
        return sorted(found)

    assert ours() == peer(), f"{label}: the two give other tombstones"
    mine, theirs = _median(ours, args.rounds), _median(peer, args.rounds)
    print(f"{label:<12} {mine * 1000:>9.1f} ms {theirs * 1000:>11.1f} ms {mine / theirs:>7.2f}×")
    return [label, f"{mine * 1000:.1f} ms", f"{theirs * 1000:.1f} ms", f"**{mine / theirs:.2f}×**"]


def _median(run: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
