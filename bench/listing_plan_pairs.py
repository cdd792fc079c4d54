"""A day listed from one analysed PostgreSQL catalog by two checkouts of pdi in turn, for paired figures.

One throw-away PostgreSQL cluster (a unix socket, fsync off) holds one
catalog of ``--days`` days of ``--names`` serial names each (and two foreign
ids a day), made by SQL (``tests/archive/big_catalog.py``) and then analysed
(``ANALYZE``, as autovacuum does within a minute of a large load). Each
round, for each ``NAME=SRC`` given in turn (the order alternating from round
to round), with ``PYTHONPATH=SRC``, a child process lists the middle day
``--listings`` times as ``pdi ls`` in process and prints the medians of its
wall time and CPU (the child's thread), and the median "Execution Time" of
``EXPLAIN (ANALYZE, TIMING OFF)`` of the statement of the day's serial names as
the listing read them (by the look-ups, or by the range of the page's document
ids under the settings the listing sets for it: the server's own time, which
the load moves least), and the plan's node types. Run: ``python3 bench/listing_plan_pairs.py [--names N] [--days D]
[--listings L] [--rounds R] before=/path/to/old/src after=src``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import _pairs

HERE = Path(__file__).resolve().parent

CHILD = r"""
import contextlib, datetime, io, json, statistics, sys, time
from pdi.archive import Archive
from pdi.cli import main as pdi_main
url, series, listed, listings = sys.argv[1], sys.argv[2], datetime.date.fromisoformat(sys.argv[3]), int(sys.argv[4])
pattern = f"urn:pdi://{series}/{listed:%Y/%m/%d}/*"

def ls():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            pdi_main(["ls", pattern, "--archive", url])
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise
    return out.getvalue()

lines = ls().count("\n")
walls, cpus = [], []
for _ in range(listings):
    w, c = time.perf_counter(), time.thread_time()
    ls()
    cpus.append(time.thread_time() - c)
    walls.append(time.perf_counter() - w)

def nodes(plan):
    yield plan["Node Type"] + (":" + plan["Relation Name"] if "Relation Name" in plan else "")
    for child in plan.get("Plans", []):
        yield from nodes(child)

with Archive.open(url) as archive:
    store, sent = archive.store, []
    real_text = store._serial_text

    def wrapped(names, last, page, ranged=None, *name):
        # the page's rows as the listing read them: by the look-ups (names), or (a checkout that reads a page by
        # the range of its documents' ids) by that range, under the settings it sets for it
        chosen = [names, ()]
        if ranged is None:
            sent.append(chosen)
            return real_text(names, last, page)
        bounds, within = ranged

        def recorded(least, greatest):
            chosen[:] = [within(least, greatest), ("SET enable_nestloop = off", "SET jit = off")]
            return chosen[0]

        sent.append(chosen)
        return real_text(names, last, page, (bounds, recorded), *name)

    store._serial_text = wrapped
    "".join(t for t in archive.iter_name_text(pattern) if isinstance(t, str))
    (sql, params), settings = sent[0]
import psycopg
with psycopg.connect(url, autocommit=True) as conn:
    for setting in settings:
        conn.execute(setting)
    plans = [conn.execute(f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {sql}".replace("?", "%s"), params).fetchone()[0][0]
             for _ in range(listings)]
print(json.dumps({"lines": lines, "list_wall": statistics.median(walls), "list_cpu": statistics.median(cpus),
                  "server_ms": statistics.median(p["Execution Time"] for p in plans),
                  "plan": " > ".join(nodes(plans[0]["Plan"]))}))
"""


def main() -> int:
    parser = _pairs.parser(__doc__, rounds=5)
    parser.add_argument("--names", type=int, default=10_000, help="serial names a day (10,000)")
    parser.add_argument("--days", type=int, default=20, help="days in the catalog; the middle one is listed (20)")
    parser.add_argument("--listings", type=int, default=15, help="listings of the day a round (15)")
    args = parser.parse_args()
    chosen = _pairs.variants(parser, args)
    sys.path[:0] = [str(HERE.parent / "tests"), str(HERE.parent / "tests" / "archive"), str(HERE.parent / "src")]
    import datetime

    from big_catalog import FIRST, SERIES, fill

    from pdi.archive import Archive
    from support.pgcluster import TemporaryCluster

    listed = FIRST + datetime.timedelta(days=1 + args.days // 2)
    figures: dict[str, list[dict[str, float]]] = {name: [] for name in chosen}
    with TemporaryCluster() as cluster:
        url = cluster.create_schema("listing_plan")
        fill(url, days=args.days, per_day=args.names, foreign_per_day=2)
        with Archive.open(url) as archive:
            archive.store.query("ANALYZE")
        for round_ in range(args.rounds):
            order = list(chosen.items())
            for name, src in order if round_ % 2 == 0 else reversed(order):
                done = subprocess.run([sys.executable, "-c", CHILD, url, SERIES, listed.isoformat(),
                                       str(args.listings)], capture_output=True, text=True, check=True,
                                      env={**os.environ, "PYTHONPATH": src})
                figures[name].append(json.loads(done.stdout))
                print(name, done.stdout.strip(), flush=True)
    for name, runs in figures.items():
        print(f"{name}: listing {_pairs.spread([r['list_wall'] * 1000 for r in runs], 1)} ms wall,"
              f" {_pairs.spread([r['list_cpu'] * 1000 for r in runs], 1)} ms CPU,"
              f" {_pairs.spread([r['server_ms'] for r in runs], 1)} ms executing (the server's)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
