"""An import into PostgreSQL, then a day of its names listed at once: two checkouts of pdi in turn, for paired figures.

One throw-away PostgreSQL cluster (a unix socket, fsync off, autovacuum as
PostgreSQL sets it). Each round, for each ``NAME=SRC`` given in turn (the
order alternating from round to round), with ``PYTHONPATH=SRC``: a child
process makes an archive in a fresh schema, imports ``--days`` days of
``--names`` serial names each (``import_all``, as ``pdi import`` of a bag
does; one blob), timed whole (wall and the child's CPU; and, where the
checkout analyses after the import, its ``ANALYZE`` alone), then lists the
middle day ``--listings`` times at once, as ``pdi ls`` in process
(``bench_archive.py``'s ``pdi_ls``), and prints the medians (wall, the
child's CPU), whether autovacuum had analysed ``documents`` by then, and the
median "Execution Time" of ``EXPLAIN (ANALYZE, TIMING OFF)`` of the listing's
statement, the page's aggregate whole (``--listings`` times; the server's own time, which the load moves
least) and of the statement alone, its rows fetched (a round trip).
Run: ``python3 bench/analyze_pairs.py [--names N] [--days D] [--listings L]
[--rounds R] before=/path/to/old/src after=src``.
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
import contextlib, datetime, hashlib, io, json, statistics, sys, time
from pdi.archive import Archive
from pdi.archive.store import RepresentationRecord, SeriesRecord
from pdi.cli import main as pdi_main
url, names, days, listings = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
S, first = "bench.example.us", datetime.date(2026, 11, 20)
listed = first + datetime.timedelta(days=days // 2)
sha = hashlib.sha256(b"x").hexdigest()
records = [(RepresentationRecord(S, first + datetime.timedelta(days=d), str(n), n, 1, "png", "image/png", None, None,
                                 sha, 1, "2026-11-22T12:00:00.000000Z"), b"x")
           for d in range(days) for n in range(1, names + 1)]
analysing = []
with Archive.init(url) as archive:
    store = archive.store
    real = getattr(store, "_analyze", None)
    if real is not None:
        def timed(tables, real=real):
            started = time.perf_counter()
            real(tables)
            analysing.append(time.perf_counter() - started)
        store._analyze = timed
    wall, cpu = time.perf_counter(), time.process_time()
    store.import_all([SeriesRecord(S, None, "", "2026-11-22T12:00:00Z")], records, [])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu

def ls():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            pdi_main(["ls", f"urn:pdi://{S}/{listed:%Y/%m/%d}/*", "--archive", url])
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise
    return out.getvalue()

assert ls().count("\n") == names
walls, cpus = [], []
for _ in range(listings):
    w, c = time.perf_counter(), time.thread_time()
    ls()
    cpus.append(time.thread_time() - c)
    walls.append(time.perf_counter() - w)
with Archive.open(url) as archive:
    ((auto,),) = archive.store.query(
        "SELECT last_autoanalyze IS NOT NULL FROM pg_stat_user_tables"
        " WHERE schemaname = current_schema() AND relname = 'documents'")
    # the server's own time for the listing's statement (as pdi ls sent it), EXPLAIN ANALYZE's "Execution Time"
    store, sent = archive.store, []
    real_page = getattr(store, "_page_text", None)
    if real_page is not None:  # the page's whole statement, as sent (schema 21: the names its documents keep)
        store._page_text = lambda names, last, page: sent.append(names) or real_page(names, last, page)
    else:  # the names' statement, in the aggregate _serial_text wraps it in
        real_text = store._serial_text
        def wrapped(names, last, page, ranged=None, *name):
            if ranged is None:  # before 65a7977b: the aggregate sorted the page again
                sent.append((f"SELECT string_agg(n, E'\n' ORDER BY k0, k1, k2, k3, k4, k5), count(*) FROM ({names[0]}) AS p",
                             names[1]))
                return real_text(names, last, page)
            bounds, within = ranged
            # the name made of each row around the page (its expression and parameters), or (an older checkout)
            # within it, as column n
            made, made_params = name[0][:2] if name else ("n", [])
            sent.append((f"SELECT string_agg({made}, E'\n'), count(*) FROM ({names[0]}) AS p",
                         [*made_params, *names[1]]))
            def recorded(least, greatest):  # read by the range of the page's ids, with the settings set for it
                rows = within(least, greatest)
                sent[-1] = (f"SELECT string_agg({made}, E'\n'), count(*) FROM ({rows[0]}) AS p", [*made_params, *rows[1]],
                            ("SET enable_nestloop = off", "SET jit = off"))
                return rows
            return real_text(names, last, page, (bounds, recorded), *name)
        store._serial_text = wrapped
    "".join(archive.iter_name_text(f"urn:pdi://{S}/{listed:%Y/%m/%d}/*"))
    sql, params, *rest = sent[0]
    import psycopg
    with psycopg.connect(url, autocommit=True) as conn:
        for setting in (rest[0] if rest else ()):
            conn.execute(setting)
        sql = sql.replace("?", "%s")
        executions = [conn.execute(f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {sql}", params).fetchone()[0][0]["Execution Time"]
                      for _ in range(listings)]
        statement = []  # the statement alone, its rows fetched: one round trip
        for _ in range(listings):
            w = time.perf_counter()
            conn.execute(sql, params).fetchall()
            statement.append((time.perf_counter() - w) * 1000)
print(json.dumps({"import_wall": wall, "import_cpu": cpu, "analyze": sum(analysing),
                  "list_wall": statistics.median(walls), "list_cpu": statistics.median(cpus), "autoanalysed": auto,
                  "server_ms": statistics.median(executions), "statement_ms": statistics.median(statement)}))
"""


def main() -> int:
    parser = _pairs.parser(__doc__, rounds=5)
    parser.add_argument("--names", type=int, default=10_000, help="names a day (10,000)")
    parser.add_argument("--days", type=int, default=5, help="days imported; the middle one is listed (5)")
    parser.add_argument("--listings", type=int, default=15, help="listings of the day a round (15)")
    args = parser.parse_args()
    chosen = _pairs.variants(parser, args)
    sys.path.insert(0, str(HERE.parent / "tests"))
    from support.pgcluster import TemporaryCluster

    figures: dict[str, list[dict[str, float]]] = {name: [] for name in chosen}
    with TemporaryCluster() as cluster:
        for round_ in range(args.rounds):
            order = list(chosen.items())
            for name, src in order if round_ % 2 == 0 else reversed(order):
                url = cluster.create_schema(f"pairs_{name}_{round_}")
                done = subprocess.run([sys.executable, "-c", CHILD, url, str(args.names), str(args.days),
                                       str(args.listings)], capture_output=True, text=True, check=True,
                                      env={**os.environ, "PYTHONPATH": src})
                figures[name].append(json.loads(done.stdout))
                print(name, done.stdout.strip(), flush=True)
    for name, runs in figures.items():
        print(f"{name}: import {_pairs.spread([r['import_wall'] for r in runs])} s wall,"
              f" {_pairs.spread([r['import_cpu'] for r in runs])} s CPU,"
              f" ANALYZE {_pairs.spread([r['analyze'] for r in runs], 3)} s;"
              f" listing {_pairs.spread([r['list_wall'] * 1000 for r in runs], 1)} ms wall,"
              f" {_pairs.spread([r['list_cpu'] * 1000 for r in runs], 1)} ms CPU,"
              f" {_pairs.spread([r['server_ms'] for r in runs], 1)} ms executing (the server's),"
              f" the statement alone {_pairs.spread([r['statement_ms'] for r in runs], 1)} ms;"
              f" autovacuum had analysed documents in {sum(bool(r['autoanalysed']) for r in runs)} of {len(runs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
