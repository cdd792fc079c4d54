"""Start-up: ``pdi --help``, ``pdi --version`` and ``pdi get`` of a 1 KB text against ``python -c pass``.

Each command is a whole process, the installed ``pdi`` console script as a
user runs it (the one beside this Python, else its entry point; this tree's ``src`` first on
``PYTHONPATH``, for every command alike), against the floor ``python -c
pass`` of the same interpreter (for reference: ``python -S -c pass``, without
``site``, and ``python -c 'import click'``, the part of every command that is
click's own). The commands run interleaved, in a new random order each round,
after one warm-up run each that writes the byte-code caches a user's install
has (``PYTHONDONTWRITEBYTECODE`` is dropped for the children). It prints the
median wall-clock time and the median CPU time (user + system, from the
child's rusage: steadier than wall-clock on a loaded machine) of each, and
their ratios to ``python -c pass``.

``pdi get`` reads a 1 KB text from a fresh SQLite archive made in a temporary
directory. ``--runs N`` sets the rounds (default 31); ``--small`` runs 3.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import readme

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def console_script() -> list[str]:
    """The installed ``pdi`` console script beside this Python, as the argv that runs it.

    Where there is none, the same entry point through this interpreter: the
    floor and pdi then always run on the same Python.
    """
    beside = Path(sys.executable).parent / "pdi"
    if beside.exists():
        return [str(beside)]
    return [sys.executable, "-c", "import sys; from pdi.cli import main; sys.exit(main())"]


def child_env() -> dict[str, str]:
    """The environment every timed command runs in: this tree's ``src`` first, byte-code caches allowed."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    return env


def run(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, bytes]:
    """Run ``argv`` once: its wall-clock seconds, its CPU seconds (user + system) and its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    child = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({child.returncode}): {child.stderr.decode(errors='replace')}")
    return wall, cpu, child.stdout


def make_archive(pdi: list[str], env: dict[str, str], where: str) -> str:
    """A fresh SQLite archive in ``where`` holding one 1 KB text; the name to get it by."""
    text = Path(where) / "small.txt"
    line = b"The quick brown fox jumps over the lazy dog; a line of a small text.\n"
    text.write_bytes((line * (1024 // len(line) + 1))[:1024])
    archive = str(Path(where) / "archive")
    run([*pdi, "init", archive], env, where)
    run([*pdi, "series", "add", "bench.example.us", "--archive", archive], env, where)
    _, _, out = run([*pdi, "add", "-s", "bench.example.us", str(text), "--archive", archive], env, where)
    return out.decode().strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=31, help="rounds of every command (default 31)")
    readme.arguments(parser, markdown=True)  # --small: 3 rounds, a few seconds through every code path
    args = parser.parse_args()
    runs = 3 if args.small else args.runs

    env = child_env()
    pdi = console_script()
    with tempfile.TemporaryDirectory(prefix="pdi-bench-startup-") as where:
        name = make_archive(pdi, env, where)
        archive = str(Path(where) / "archive")
        commands: dict[str, list[str]] = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -S -c pass": [sys.executable, "-S", "-c", "pass"],
            "python -c 'import click'": [sys.executable, "-c", "import click"],
            "pdi --help": [*pdi, "--help"],
            "pdi --version": [*pdi, "--version"],
            "pdi get (1 KB text, SQLite)": [*pdi, "get", name, "--archive", archive],
        }
        got = run(commands["pdi get (1 KB text, SQLite)"], env, where)[2]
        if len(got) != 1024:
            raise SystemExit(f"pdi get wrote {len(got)} bytes, not the 1024 deposited")
        for argv in commands.values():  # warm-up: byte-code caches written, files in the page cache
            run(argv, env, where)
        walls: dict[str, list[float]] = {label: [] for label in commands}
        cpus: dict[str, list[float]] = {label: [] for label in commands}
        order = list(commands)
        for _ in range(runs):
            random.shuffle(order)
            for label in order:
                wall, cpu, _ = run(commands[label], env, where)
                walls[label].append(wall)
                cpus[label].append(cpu)

    floor_wall = statistics.median(walls["python -c pass"])
    floor_cpu = statistics.median(cpus["python -c pass"])
    print(f"start-up, {runs} interleaved runs each, medians; {' '.join(pdi)}; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'command':32} {'wall ms':>8} {'× pass':>7} {'CPU ms':>8} {'× pass':>7}")
    for label in commands:
        wall, cpu = statistics.median(walls[label]), statistics.median(cpus[label])
        print(f"{label:32} {wall * 1000:8.1f} {wall / floor_wall:6.2f}× {cpu * 1000:8.1f} {cpu / floor_cpu:6.2f}×")
    rows = []
    for label in commands:
        wall, cpu = statistics.median(walls[label]), statistics.median(cpus[label])
        rows.append([f"`{label}`", f"{wall * 1000:.1f} ms", f"{cpu * 1000:.1f} ms",
                     f"{wall / floor_wall:.1f}× / {cpu / floor_cpu:.1f}×"])
    readme.write(args.markdown, f"Medians of {runs} interleaved runs of each.\n\n" + readme.table(
        ["command", "wall", "CPU", "× `python -c pass` (wall / CPU)"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
