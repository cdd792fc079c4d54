"""Run every benchmark in this folder (``bench_*.py``), one after another.

Each benchmark times pdi and its nearest peer in the same run and prints the
ratio. ``python bench/run_all.py NAME…`` runs only the named ones
(``uri``, ``identifier``, …).
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    if argv:
        wanted = {f"bench_{name.removeprefix('bench_').removesuffix('.py')}.py" for name in argv}
        scripts = [s for s in scripts if s.name in wanted]
        missing = wanted - {s.name for s in scripts}
        if missing:
            print(f"no such benchmark: {', '.join(sorted(missing))}", file=sys.stderr)
            return 2
    for script in scripts:
        print(f"\n##### {script.stem}", flush=True)
        sys.argv = [str(script)]  # each runs with its own defaults, not with the names given here
        runpy.run_path(str(script), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
