"""``pdi serve`` against nginx on names drawn at random from a large catalog: ``bench_serve.py --cold``.

Its own script so that ``bench/run_all.py`` runs the cold section once (and
``--write-readme serve_cold`` regenerates its README table); every option of
``bench_serve.py`` is passed on (``--small``, ``--markdown FILE``,
``--catalog DIR``, ``--runs``, ``--only ROW``, …).

    python3 bench/run_all.py serve_cold     # or: python3 bench/bench_serve_cold.py [--catalog DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_serve

if __name__ == "__main__":
    sys.exit(bench_serve.main(["--cold", *sys.argv[1:]]))
