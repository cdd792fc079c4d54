"""Text fragments at file-system speed: RFC 5147 ``line=``/``char=`` on a 1 GiB UTF-8 file.

Generates a UTF-8 text (1 GiB by default; ``PDI_BENCH_TEXT_MB`` changes it)
with mixed line endings (LF, CRLF, CR, NEL) and non-ASCII characters under
``bench/data/``, then times, in the same run:

* ``wc -l`` on the file (the memory-bandwidth floor for counting lines);
* a naive Python baseline: ``f.read().decode().splitlines(keepends=True)``
  and a slice of the lines;
* pdi cold: a new memory map and :class:`~pdi.fragments.text.TextIndex` per
  query (nothing counted beforehand), ``line=`` and ``char=`` ranges near the
  middle and near the end; each run right after a ``wc -l`` run, so both see
  the same load on a shared machine, and with the CPU time of the process
  (all its threads: pdi counts on every core) beside the CPU time of
  ``wc -l`` (a measure of work that the load of the machine disturbs less).
  First with the compiled one-pass counter (``pdi.fragments.text._count``,
  what ``pip install`` builds), then with the numpy engine that pdi falls
  back on where no C compiler was found;
* pdi indexed: the same queries on an index built once;
* then the cold queries again on the same text with LF endings only (no CR,
  no NEL: the counter skips those passes).

Prints medians (and p99 for indexed queries) and the ratios, checks that pdi
and the baseline select the same text, and deletes the files at the end;
``--markdown FILE`` writes the README's table. Run with
``python3 bench/run_all.py text``.
"""

from __future__ import annotations

import argparse
import mmap
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import readme  # noqa: E402
from pdi.fragments.text import TextIndex, evaluate_rfc5147  # noqa: E402
from pdi.fragments.text.counting import resolve_engine  # noqa: E402

SIZE_MB = int(os.environ.get("PDI_BENCH_TEXT_MB", "1024"))
DATA = HERE / "data"
WORDS = ["the", "archive", "Grüße", "naïve", "日本語", "café", "€uro", "passage", "ﬁle", "Ελλάδα", "text", "a"]
ENDINGS = ["\n", "\r\n", "\r", "\x85"]


def _template(rng: random.Random, size: int, endings: list[str]) -> tuple[bytes, int, int]:
    """A block of random lines, ending with LF: (octets, lines, RFC 5147 characters)."""
    lines: list[str] = []
    total = 0
    chars = 0
    while total < size:
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 16)))
        ending = rng.choice(endings)
        line = words + ending
        lines.append(line)
        total += len(line.encode())
        chars += len(words) + 1
    lines.append("end\n")
    chars += 4
    data = "".join(lines).encode()
    return data, len(lines), chars


def generate(path: Path, size_mb: int, endings: list[str] = ENDINGS) -> tuple[int, int]:
    """Write ``size_mb`` MiB of text; return (lines, characters)."""
    rng = random.Random(5147)
    block, block_lines, block_chars = _template(rng, 4 << 20, endings)
    repeats = max(1, (size_mb << 20) // len(block))
    with path.open("wb") as out:
        for _ in range(repeats):
            out.write(block)
    return block_lines * repeats, block_chars * repeats


def timed(fn: Callable[[], object], runs: int) -> tuple[list[float], object]:
    times: list[float] = []
    result: object = None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return times, result


def p99(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def main() -> None:
    global SIZE_MB
    args = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), markdown=True).parse_args()
    if args.small:
        SIZE_MB = 4
    figures: dict[str, object] = {}
    DATA.mkdir(exist_ok=True)
    path = DATA / ("text-1g.txt" if SIZE_MB == 1024 else f"text-{SIZE_MB}m.txt")
    try:
        t0 = time.perf_counter()
        lines, chars = generate(path, SIZE_MB)
        size = path.stat().st_size
        print(f"generated {size / 2**20:.0f} MiB, {lines} lines, {chars} characters "
              f"in {time.perf_counter() - t0:.1f} s: {path}")
        figures.update(size=size, lines=lines)
        figures.update(run(path, lines, chars))
    finally:
        path.unlink(missing_ok=True)
    try:
        lines, chars = generate(path, SIZE_MB, ["\n"])
        print(f"\nthe same text with LF endings only: {path.stat().st_size / 2**20:.0f} MiB, {lines} lines")
        subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)
        results, _, lf_only = run_cold(path, lines, chars, engine="auto")
        assert results["line middle"].count("\n") == 10
        figures["lf only"] = lf_only
    finally:
        path.unlink(missing_ok=True)
    readme.write(args.markdown, markdown(figures))


#: The README's names of the queries.
LABELS = {"line middle": "`line=` middle", "line end": "`line=` end",
          "char middle": "`char=` middle", "char end": "`char=` end"}


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.2f} ms"


def markdown(figures: dict[str, Any]) -> str:
    """The README's table: cold (both engines) and indexed queries beside ``wc -l``, then LF endings only."""
    cold: dict[str, Cold] = figures["cold"]
    numpy: dict[str, Cold] = figures["numpy"]
    indexed: dict[str, tuple[float, float]] = figures["indexed"]
    rows: list[list[str]] = []

    def cold_cells(c: Cold) -> list[str]:
        return [_ms(c.wall), f"{c.wall / c.wc:.1f}× ({_ms(c.wc)})",
                f"{c.cpu * 1000:.0f} / {c.wc_cpu * 1000:.0f} ms = {c.cpu / c.wc_cpu:.1f}×"]

    for name, label in LABELS.items():
        fallback = f"{_ms(numpy[name].wall)}, {numpy[name].wall / numpy[name].wc:.1f}×" if name in numpy else ""
        median, top = indexed[name]
        rows.append([label, *cold_cells(cold[name]), fallback, f"{_ms(median)} / {_ms(top)}"])
    (line_p50, line_p99), (char_p50, char_p99) = figures["random"]["line"], figures["random"]["char"]
    rows.append(["`line=` / `char=` at 200 random places", "", "", "", "",
                 f"{line_p50 * 1000:.2f} / {char_p50 * 1000:.2f} ms, p99 {line_p99 * 1000:.2f} / {char_p99 * 1000:.2f} ms"])
    for name, label in LABELS.items():
        rows.append([f"LF endings only: {label}", *cold_cells(figures["lf only"][name]), "", ""])
    wc = figures["wc"]
    rows.append(["the whole index built once", _ms(figures["build"]), f"{figures['build'] / wc:.1f}×", "", "", ""])
    naive = figures["naive"]
    rows.append(["naive `f.read().decode().splitlines()`, `line=` middle", _ms(naive),
                 f"{naive / wc:.0f}× ({naive / figures['cold line']:.0f}× pdi cold)", "", "", ""])
    engine = "compiled counter" if numpy else f"{resolve_engine('auto')} counter"
    return (f"A {figures['size'] / 2**20:,.0f} MiB text, {figures['lines'] / 1e6:.1f} million lines, LF, CRLF, CR"
            " and NEL endings mixed; then the same words with LF endings only. Medians of 5 cold rounds"
            " (3 for the numpy engine), 200 indexed queries; `× wc -l` is against the `wc -l` run just before"
            " each query, the whole index and the naive read against the median of all of them:\n\n"
            + readme.table(["query", f"pdi cold, {engine}", "× `wc -l`", "CPU pdi / `wc -l`",
                            "numpy engine (fallback), × `wc -l`", "pdi indexed, median / p99"], rows))


def _queries(lines: int, chars: int) -> dict[str, str]:
    return {
        "line middle": f"line={lines // 2},{lines // 2 + 10}",
        "line end": f"line={lines - 20},{lines - 10}",
        "char middle": f"char={chars // 2},{chars // 2 + 200}",
        "char end": f"char={chars - 300},{chars - 100}",
    }


def _cold(path: Path, fragment: str, engine: str = "auto") -> str:
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        index = TextIndex(mapped, "utf-8", engine=engine)
        return evaluate_rfc5147(fragment, index).text


def _wc(path: Path) -> bytes:
    return subprocess.run([shutil.which("wc") or "wc", "-l", str(path)], capture_output=True, check=True).stdout


@dataclass
class Cold:
    """Medians of a cold query and of the ``wc -l`` runs beside it (seconds)."""

    wall: float
    cpu: float
    wc: float
    wc_cpu: float


def run_cold(
    path: Path, lines: int, chars: int, rounds: int = 5, engine: str = "auto"
) -> tuple[dict[str, str], float, dict[str, Cold]]:
    """Time the cold queries, each run right after a ``wc -l`` run: the selections, the wc median, the figures."""
    wc_out = _wc(path)
    print(f"wc -l: {str(wc_out, 'ascii').split()[0]} LF")
    print(f"\ncold queries, {resolve_engine(engine)} counter")
    print(f"{'query':<12} {'fragment':<28} {'cold median':>12} {'CPU':>8} {'wc -l':>8} {'× wc -l':>8} "
          f"{'wc CPU':>7} {'CPU ×':>6}")
    results: dict[str, str] = {}
    figures: dict[str, Cold] = {}
    wc_all: list[float] = []
    for name, fragment in _queries(lines, chars).items():
        walls: list[float] = []
        cpus: list[float] = []
        wcs: list[float] = []
        wc_cpus: list[float] = []
        for _ in range(rounds):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wcs.append(timed(lambda: _wc(path), 1)[0][0])
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            wc_cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            cpu0 = time.process_time()
            times, result = timed(lambda fragment=fragment: _cold(path, fragment, engine), 1)  # type: ignore[misc]
            cpus.append(time.process_time() - cpu0)
            walls.append(times[0])
            results[name] = str(result)
        wall, wc_median = statistics.median(walls), statistics.median(wcs)
        wc_all.extend(wcs)
        cpu, wc_cpu = statistics.median(cpus), statistics.median(wc_cpus)
        figures[name] = Cold(wall, cpu, wc_median, wc_cpu)
        print(f"{name:<12} {fragment:<28} {wall * 1000:>9.0f} ms {cpu * 1000:>5.0f} ms "
              f"{wc_median * 1000:>5.0f} ms {wall / wc_median:>7.1f}× {wc_cpu * 1000:>4.0f} ms {cpu / wc_cpu:>5.1f}×")
    return results, statistics.median(wc_all), figures


def run(path: Path, lines: int, chars: int) -> dict[str, object]:
    """Every measurement on the text at ``path``; its figures, for the README's table."""
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
    queries = _queries(lines, chars)
    cold_results, wc_median, cold = run_cold(path, lines, chars)
    print(f"wc -l median over all rounds: {wc_median * 1000:.0f} ms")
    numpy: dict[str, Cold] = {}
    if resolve_engine("auto") == "compiled":
        numpy_results, _, numpy = run_cold(path, lines, chars, rounds=3, engine="numpy")
        assert numpy_results == cold_results
    indexed: dict[str, tuple[float, float]] = {}
    spread: dict[str, tuple[float, float]] = {}

    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        index = TextIndex(mapped, "utf-8")
        build_times, _ = timed(index.build, 1)
        print(f"\nindex build (whole file): {build_times[0] * 1000:.0f} ms "
              f"({build_times[0] / wc_median:.1f}× wc -l)")
        assert index.line_count == lines, (index.line_count, lines)
        assert index.char_count == chars, (index.char_count, chars)
        print(f"\n{'query':<12} {'indexed median':>15} {'p99':>9}")
        for name, fragment in queries.items():
            times, result = timed(lambda fragment=fragment: evaluate_rfc5147(fragment, index).text, 200)  # type: ignore[misc]
            assert result == cold_results[name]
            indexed[name] = (statistics.median(times), p99(times))
            print(f"{name:<12} {statistics.median(times) * 1000:>12.2f} ms {p99(times) * 1000:>6.2f} ms")
        # a different place each time: the block holding it has not been looked at yet
        rng = random.Random(1)
        for scheme, top in (("line", lines), ("char", chars)):
            spots = [rng.randrange(top - 100) for _ in range(200)]
            fragments = iter(f"{scheme}={n},{n + 10}" for n in spots)
            times, _ = timed(lambda fragments=fragments: evaluate_rfc5147(next(fragments), index), 200)  # type: ignore[misc]
            label = f"{scheme} random"
            spread[scheme] = (statistics.median(times), p99(times))
            print(f"{label:<12} {statistics.median(times) * 1000:>12.2f} ms {p99(times) * 1000:>6.2f} ms")

    def naive() -> str:
        with path.open("rb") as handle:
            text = handle.read().decode("utf-8").splitlines(keepends=True)
        start = lines // 2
        return "".join(text[start : start + 10])

    naive_times, naive_result = timed(naive, 1)
    assert naive_result == cold_results["line middle"]
    print(f"\nnaive decode().splitlines() line middle: {naive_times[0] * 1000:.0f} ms "
          f"({naive_times[0] / wc_median:.1f}× wc -l)")
    cold_line = statistics.median(timed(lambda: _cold(path, queries["line middle"]), 3)[0])
    print(f"pdi cold line middle: {cold_line * 1000:.0f} ms, naive / pdi = {naive_times[0] / cold_line:.1f}×")
    return {"cold": cold, "numpy": numpy, "indexed": indexed, "random": spread, "wc": wc_median,
            "build": build_times[0], "naive": naive_times[0], "cold line": cold_line}


if __name__ == "__main__":
    main()
