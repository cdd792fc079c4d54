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
and the baseline select the same text, and deletes the files at the end.
Run with ``python3 bench/run_all.py text``.
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
from pathlib import Path

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
    if readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0])).parse_args().small:
        SIZE_MB = 4
    DATA.mkdir(exist_ok=True)
    path = DATA / ("text-1g.txt" if SIZE_MB == 1024 else f"text-{SIZE_MB}m.txt")
    try:
        t0 = time.perf_counter()
        lines, chars = generate(path, SIZE_MB)
        size = path.stat().st_size
        print(f"generated {size / 2**20:.0f} MiB, {lines} lines, {chars} characters "
              f"in {time.perf_counter() - t0:.1f} s: {path}")
        run(path, lines, chars)
    finally:
        path.unlink(missing_ok=True)
    try:
        lines, chars = generate(path, SIZE_MB, ["\n"])
        print(f"\nthe same text with LF endings only: {path.stat().st_size / 2**20:.0f} MiB, {lines} lines")
        subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)
        results, _ = run_cold(path, lines, chars, engine="auto")
        assert results["line middle"].count("\n") == 10
    finally:
        path.unlink(missing_ok=True)


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


def run_cold(
    path: Path, lines: int, chars: int, rounds: int = 5, engine: str = "auto"
) -> tuple[dict[str, str], float]:
    """Time the cold queries, each run right after a ``wc -l`` run; return the selections and the wc median."""
    wc_out = _wc(path)
    print(f"wc -l: {str(wc_out, 'ascii').split()[0]} LF")
    print(f"\ncold queries, {resolve_engine(engine)} counter")
    print(f"{'query':<12} {'fragment':<28} {'cold median':>12} {'CPU':>8} {'wc -l':>8} {'× wc -l':>8} "
          f"{'wc CPU':>7} {'CPU ×':>6}")
    results: dict[str, str] = {}
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
        print(f"{name:<12} {fragment:<28} {wall * 1000:>9.0f} ms {cpu * 1000:>5.0f} ms "
              f"{wc_median * 1000:>5.0f} ms {wall / wc_median:>7.1f}× {wc_cpu * 1000:>4.0f} ms {cpu / wc_cpu:>5.1f}×")
    return results, statistics.median(wc_all)


def run(path: Path, lines: int, chars: int) -> None:
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
    queries = _queries(lines, chars)
    cold_results, wc_median = run_cold(path, lines, chars)
    print(f"wc -l median over all rounds: {wc_median * 1000:.0f} ms")
    if resolve_engine("auto") == "compiled":
        numpy_results, _ = run_cold(path, lines, chars, rounds=3, engine="numpy")
        assert numpy_results == cold_results

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
            print(f"{name:<12} {statistics.median(times) * 1000:>12.2f} ms {p99(times) * 1000:>6.2f} ms")
        # a different place each time: the block holding it has not been looked at yet
        rng = random.Random(1)
        for scheme, top in (("line", lines), ("char", chars)):
            spots = [rng.randrange(top - 100) for _ in range(200)]
            fragments = iter(f"{scheme}={n},{n + 10}" for n in spots)
            times, _ = timed(lambda fragments=fragments: evaluate_rfc5147(next(fragments), index), 200)  # type: ignore[misc]
            label = f"{scheme} random"
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


if __name__ == "__main__":
    main()
