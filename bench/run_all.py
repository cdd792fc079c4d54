"""Run every benchmark in this folder (``bench_*.py``), one after another.

Each benchmark times pdi and its nearest peer in the same run and prints the
ratio. ``python bench/run_all.py NAME…`` runs only the named ones
(``uri``, ``identifier``, …), each with its own defaults; ``serve_cold``
names ``bench_serve.py --cold`` (a script's name, ``_`` and one of its modes).

``--small`` passes ``--small`` to each: a run of a few seconds through every
code path, which CI runs (tests/test_bench_small.py) so that no benchmark
crashes unnoticed. ``--write-docs NAME…`` (also spelt ``--write-readme``, its
name from when the tables stood in README.md) runs the named benchmarks with
``--markdown`` and replaces their tables in docs/benchmarks.md, between
``<!-- bench:NAME begin -->`` and ``<!-- bench:NAME end -->``, with the fresh
table and the commit, date, load average and cores it was measured on.

Each benchmark runs in its own process; if any fails, the others still run,
and this exits non-zero naming the ones that failed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import readme  # noqa: E402  (bench/ is not a package)


def scripts(names: list[str]) -> list[tuple[Path, list[str], str]]:
    """What each NAME runs: the script, the flags that pick its mode, and the name of its table.

    ``uri`` is ``bench_uri.py``; a name that is not a script of its own but a
    script's name, ``_`` and a mode (``serve_cold``) runs that script with
    ``--MODE`` (``bench_serve.py --cold``), its table named so.
    """
    found = sorted(HERE.glob("bench_*.py"))
    if not names:
        return [(s, [], s.stem.removeprefix("bench_")) for s in found]
    chosen: dict[str, tuple[Path, list[str], str]] = {}
    missing: list[str] = []
    for given in names:
        name = given.removeprefix("bench_").removesuffix(".py")
        head, _, mode = name.rpartition("_")
        if (HERE / f"bench_{name}.py").exists():
            chosen[name] = (HERE / f"bench_{name}.py", [], name)
        elif head and (HERE / f"bench_{head}.py").exists():
            chosen[name] = (HERE / f"bench_{head}.py", [f"--{mode}"], name)
        else:
            missing.append(f"bench_{name}.py")
    if missing:
        raise SystemExit(f"no such benchmark: {', '.join(missing)}")
    return list(chosen.values())


def run(script: Path, extra: list[str]) -> int:
    print(f"\n##### {' '.join([script.stem, *(e for e in extra if e != '--small')])}", flush=True)
    return subprocess.run([sys.executable, str(script), *extra], check=False).returncode


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--small", action="store_true", help="pass --small to each: a few seconds, for CI")
    mode.add_argument("--write-docs", "--write-readme", dest="write_docs", action="store_true",
                      help="run the named benchmarks and replace their tables in docs/benchmarks.md")
    args = parser.parse_args(argv)
    if args.write_docs and not args.names:
        parser.error("--write-docs needs the names of the benchmarks whose tables to regenerate")
    failed: list[str] = []
    for script, mode, name in scripts(args.names):
        label = " ".join([script.stem, *mode])
        if not args.write_docs:
            code = run(script, [*mode, *(["--small"] if args.small else [])])
            if code != 0:
                failed.append(f"{label} (exit {code})")
            continue
        page = readme.PAGE.relative_to(readme.ROOT)
        if any(f"\n{marker}\n" not in readme.PAGE.read_text(encoding="utf-8") for marker in readme.markers(name)):
            failed.append(f"{label} ({page} has no {readme.markers(name)[0]})")
            continue
        with tempfile.TemporaryDirectory(prefix="pdi-bench-readme-") as tmp:
            out = Path(tmp) / f"{name}.md"
            before = os.getloadavg()[0]
            code = run(script, [*mode, "--markdown", str(out)])
            after = os.getloadavg()[0]
            if code != 0 or not out.exists():
                failed.append(f"{label} (exit {code}{'' if out.exists() else ', no table written'})")
                continue
            body = out.read_text(encoding="utf-8") + "\n" + readme.stamp(before, after)
        readme.PAGE.write_text(readme.replace(readme.PAGE.read_text(encoding="utf-8"), name, body),
                               encoding="utf-8")
        print(f"{page}: {name}'s table regenerated", flush=True)
    if failed:
        print(f"\nFAILED: {', '.join(failed)}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
