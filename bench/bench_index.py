"""Indexes made once, at deposit: fragment queries with and without them, side by side.

Text: generates a UTF-8 text of 400 MB by default (``PDI_BENCH_INDEX_MB``
changes it) with lines of mixed lengths (empty to a few thousand octets,
ASCII and multi-octet characters, LF endings as most texts are deposited)
in a temporary folder, then times, in the same run:

* building the index (:func:`pdi.fragments.build_index`) from the file read
  in 1 MiB chunks, and the peak memory that costs (the process's peak
  resident set before and after; the generator ran before and kept little);
* the size of the serialized index;
* ``char=10,20`` and ``line=8000000,8000002`` through
  :func:`pdi.fragments.evaluate` on a fresh memory map of the file each run
  (so nothing is reused between runs but the page cache): with the index
  (the median of 30 runs, each reading the index octets anew) and without
  it, as the resolver does today (the median of 3 runs);
* the ratio of the two, and a check that both give the same result.

HTML: a generated page of about 1 MB (sections, paragraphs left open,
lists, tables, ids), its element index built once (one html5lib parse), and
``elt`` and ``name`` queries with the index (median of 30) and without it
(a parse per query, the parse cache emptied before each run; median of 3).

``--markdown FILE`` writes the README's table. Run with
``python3 bench/run_all.py index``.
"""

from __future__ import annotations

import argparse
import mmap
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import readme  # noqa: E402
from pdi import fragments  # noqa: E402
from pdi.fragments import markup  # noqa: E402

SIZE_MB = int(os.environ.get("PDI_BENCH_INDEX_MB", "400"))
WORDS = ["the", "archive", "Grüße", "naïve", "日本語", "café", "€uro", "passage", "ﬁle", "Ελλάδα", "text", "a", "😀"]
TEXT = "text/plain; charset=utf-8"
LINE: int | None = 8_000_000  # the line= query (None: the middle line of the text)
PAGE = 1 << 20
INDEXED_RUNS, UNINDEXED_RUNS = 30, 3


def _template(rng: random.Random, size: int) -> tuple[bytes, int]:
    """About ``size`` octets of lines of mixed lengths, ending with LF: (octets, lines)."""
    lines: list[str] = []
    total = 0
    while total < size:
        shape = rng.random()
        if shape < 0.1:
            count = 0  # an empty line
        elif shape < 0.995:
            count = rng.randint(1, 6)
        else:
            count = rng.randint(50, 300)  # a long paragraph on one line
        line = " ".join(rng.choice(WORDS) for _ in range(count)) + "\n"
        lines.append(line)
        total += len(line.encode())
    return "".join(lines).encode(), len(lines)


def generate(path: Path, size_mb: int) -> int:
    """Write ``size_mb`` MiB of text to ``path``; return its number of lines."""
    block, block_lines = _template(random.Random(2557), 4 << 20)
    repeats = max(1, (size_mb << 20) // len(block))
    with path.open("wb") as out:
        for _ in range(repeats):
            out.write(block)
    return block_lines * repeats


def timed(fn: Callable[[], object], runs: int) -> tuple[float, object]:
    """The median time of ``runs`` calls of ``fn``, and its last result."""
    times: list[float] = []
    result: object = None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def _chunks(path: Path, size: int = 1 << 20) -> Iterator[bytes]:
    with path.open("rb") as handle:
        while chunk := handle.read(size):
            yield chunk


def _query(path: Path, scheme: str, positions: tuple[object, ...], media_type: str, index: bytes | None) -> bytes:
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        result = fragments.evaluate(scheme, positions, mapped, media_type=media_type, index=index)
        return result.data


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


#: The README's rows: what, with the index, without, ratio.
ROWS: list[list[str]] = []
#: What the README's table says it measured.
ABOUT: dict[str, str] = {}


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"


def bench_text(folder: Path) -> None:
    path = folder / "text.txt"
    t0 = time.perf_counter()
    lines = generate(path, SIZE_MB)
    size = path.stat().st_size
    print(f"generated {size / 1e6:.0f} MB, {lines} lines, in {time.perf_counter() - t0:.1f} s")
    ABOUT["text"] = f"a {size / 1e6:,.0f} MB UTF-8 text of {lines / 1e6:.1f} million lines"
    line = LINE if LINE is not None else lines // 2
    if lines < line + 3:
        raise SystemExit(f"{lines} lines: too few for line={line},{line + 2} (raise PDI_BENCH_INDEX_MB)")
    for _ in _chunks(path):  # warm the page cache, as a deposit just written would be
        pass
    peak_before = _peak_mib()
    build, index = timed(lambda: fragments.build_index(_chunks(path), media_type=TEXT), 1)
    assert isinstance(index, bytes)
    print(f"index built from 1 MiB chunks in {build * 1000:.0f} ms ({size / build / 1e9:.2f} GB/s);"
          f" peak RSS {peak_before:.0f} -> {_peak_mib():.0f} MiB")
    print(f"serialized index: {len(index)} octets ({len(index) / size * 1e6:.0f} octets per MB of text)")
    ROWS.append(["index of the text, from 1 MiB chunks",
                 f"{_ms(build)} ({size / build / 1e9:.2f} GB/s), {len(index):,} octets;"
                 f" peak RSS {peak_before:.0f} → {_peak_mib():.0f} MiB", "", ""])
    print(f"\n{'query':<26} {'with index':>12} {'without':>12} {'ratio':>9}")
    for scheme, positions in (("char", (10, 20)), ("line", (line, line + 2))):
        with_index, fast = timed(lambda s=scheme, p=positions: _query(path, s, p, TEXT, index), INDEXED_RUNS)  # type: ignore[misc]
        without, slow = timed(lambda s=scheme, p=positions: _query(path, s, p, TEXT, None), UNINDEXED_RUNS)  # type: ignore[misc]
        assert fast == slow, (fast, slow)
        label = f"{scheme}={','.join(map(str, positions))}"
        print(f"{label:<26} {with_index * 1000:>9.2f} ms {without * 1000:>9.1f} ms {without / with_index:>8.0f}×")
        ROWS.append([f"`{label}`", _ms(with_index), _ms(without), f"{without / with_index:,.0f}×"])


def html_page(rng: random.Random, size: int) -> bytes:
    """A page of about ``size`` octets: sections of headings, paragraphs (some left open), lists and tables."""
    parts = ["<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>bench</title></head><body>\n"]
    total = 0
    n = 0
    while total < size:
        n += 1
        words = lambda k: " ".join(rng.choice(WORDS) for _ in range(k))  # noqa: E731
        section = [f'<section id="s{n}"><h2>{words(4)}</h2>\n']
        for _ in range(rng.randint(1, 4)):
            close = "</p>" if rng.random() < 0.5 else ""
            section.append(f"<p>{words(rng.randint(5, 40))} <b>{words(2)}</b> <a href='#s{n}'>{words(1)}</a>{close}\n")
        section.append("<ul>" + "".join(f"<li>{words(3)}" for _ in range(rng.randint(1, 6))) + "</ul>\n")
        if rng.random() < 0.3:
            rows = "".join("<tr>" + "".join(f"<td>{words(1)}" for _ in range(3)) for _ in range(3))
            section.append(f"<table>{rows}</table>\n")
        section.append(f'<div name="d{n}"><span>{words(6)}</span></div></section>\n')
        piece = "".join(section)
        parts.append(piece)
        total += len(piece.encode())
    parts.append("</body></html>\n")
    return "".join(parts).encode()


def bench_html(folder: Path) -> None:
    path = folder / "page.html"
    page = html_page(random.Random(1866), PAGE)
    path.write_bytes(page)
    media = "text/html"
    build, index = timed(lambda: fragments.build_index(page, media_type=media), 1)
    assert isinstance(index, bytes)
    count = page.count(b"<") - page.count(b"</") - page.count(b"<!")
    print(f"\nHTML page of {len(page) / 1e6:.2f} MB, {count} start tags: element index built in {build:.1f} s,"
          f" {len(index)} octets")
    ABOUT["page"] = f"a {len(page) / 1e6:.2f} MB HTML page of {count:,} start tags"
    ROWS.append(["element index of the page (one html5lib parse)", f"{build:.1f} s, {len(index):,} octets", "", ""])
    print(f"\n{'query':<26} {'with index':>12} {'without':>12} {'ratio':>9}")
    middle = count // 2
    for scheme, positions in (("elt", (middle, middle + 3)), ("name", (f"s{middle // 20}", f"d{middle // 20}"))):

        def cold(s: str = scheme, p: tuple[object, ...] = positions) -> bytes:
            markup._elements.cache_clear()  # a parse per query, as on a resolver that has not seen the page
            return _query(path, s, p, media, None)

        with_index, fast = timed(lambda s=scheme, p=positions: _query(path, s, p, media, index), INDEXED_RUNS)  # type: ignore[misc]
        without, slow = timed(cold, UNINDEXED_RUNS)
        assert fast == slow, (fast, slow)
        label = f"{scheme}={','.join(map(str, positions))}"
        print(f"{label:<26} {with_index * 1000:>9.2f} ms {without * 1000:>9.0f} ms {without / with_index:>8.0f}×")
        ROWS.append([f"`{label}`", _ms(with_index), _ms(without), f"{without / with_index:,.0f}×"])


def main() -> None:
    global SIZE_MB, LINE, PAGE, INDEXED_RUNS, UNINDEXED_RUNS
    args = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), markdown=True).parse_args()
    if args.small:
        SIZE_MB, LINE, PAGE, INDEXED_RUNS, UNINDEXED_RUNS = 4, None, 64 << 10, 2, 1
    with tempfile.TemporaryDirectory(prefix="pdi-bench-index-") as folder:
        bench_text(Path(folder))
        bench_html(Path(folder))
    readme.write(args.markdown, f"A{ABOUT['text'][1:]} and {ABOUT['page']}; with the index the median of"
                 f" {INDEXED_RUNS} queries, without it of {UNINDEXED_RUNS}:\n\n"
                 + readme.table(["", "with the index", "without", "ratio"], ROWS))


if __name__ == "__main__":
    main()
