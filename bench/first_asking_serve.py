"""A first asking through ``pdi serve``: one run of wrk walking names not asked before, a server just started
(issue 24; not a ``bench_*`` file: run by hand, two checkouts in turns, to compare commits).

    python3 bench/first_asking_serve.py DIR KIND [CONNECTIONS [SECONDS [SEED]]]

``DIR`` is a catalog kept by ``bench/bench_serve_cold.py --catalog DIR`` (its ``archive`` and ``names.tsv``);
``KIND`` is ``n2l``, ``304`` or ``n2r``. The names are walked in an order shuffled with ``SEED`` (default 24), each
asked once, by ``CONNECTIONS`` (64) connections for ``SECONDS`` (3), as the table's first-asking rows do, with this
checkout's ``src`` (``bench/bench_serve.py``'s ``pdi_serve``); prints the requests a second and the CPU (user and
system) of the server's processes a request. nginx is not run: its figures are the table's.
"""
import random
import sys
import tempfile
from pathlib import Path

import bench_serve as serve


def main() -> None:
    serve.usage(__doc__, 2)
    home, kind = Path(sys.argv[1]), sys.argv[2]
    connections = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    seconds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 24
    rows = [line.split("\t") for line in (home / "names.tsv").read_text().splitlines()]
    order = random.Random(seed).sample(range(len(rows)), len(rows))
    asked = {"n2l": lambda n, t: f"/uri-res/N2L?{n}", "304": lambda n, t: f"/uri-res/N2R?{n}\t{t}",
             "n2r": lambda n, t: f"/uri-res/N2R?{n}"}[kind]
    threads = min(connections, 2)
    with tempfile.TemporaryDirectory() as work:
        script = serve.walk_paths_script(Path(work), "walk", [asked(*rows[i]) for i in order], threads)
        with serve.pdi_serve(home / "archive", [], str(Path(work) / "serve.log")) as server:
            load = serve.wrk_cpu("wrk", server.url, script, connections, seconds, threads, server.pid)
    print(f"{kind} first asking, {connections} connections: {load.rate:,.0f}/s, {load.cpu * 1e6:.1f} µs of CPU a"
          f" request ({load.requests:,} requests)")


if __name__ == "__main__":
    main()
