"""A 500-page PDF: deposited and indexed beside ``pdftotext``, then its passages answered by ``pdi serve``.

Issue 25's two figures for PDF, on ``tracemonkey.pdf`` (``tests/data/pdf``, a
two-column 14-page paper) joined 36 times by ``pdfunite`` (poppler-utils):
504 pages, made in a temporary folder.

1. **Text extraction and indexing**: ``pdi add big.pdf`` (the deposit checks
   the PDF and makes its text layer, ``docs/pdf-text-layer.md``) followed by
   ``pdi index`` (the full-text index of that layer, which the deposit leaves
   to the indexer's queue), each a new process on a new SQLite archive,
   interleaved with ``pdftotext big.pdf out.txt`` (Debian's poppler-utils,
   text only): medians of ``--runs`` rounds, and the ratio.
2. **A passage, once indexed**: ``pdi serve`` on that archive answers
   ``N2R`` of ``#char=a,b`` passages of 200 characters at random places of the
   layer (each a name not asked for before: no answer cache helps), one client
   at a time, timed from the request to the last octet (each answer checked
   against the layer's text); beside it, what a user without pdi would run
   for a page's text, ``pdftotext -f N -l N big.pdf -`` (a process each).
   Medians and 95th percentiles, and the ratio of medians.

Run: ``python3 bench/bench_pdf_passage.py`` (``--runs``, ``--passages``;
``--small``: a 4-page PDF, one round, ten passages). Needs poppler-utils
(``scripts/bootstrap --dev``). ``--markdown FILE`` writes the README's table
(``bench/run_all.py --write-readme pdf_passage``).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import readme  # noqa: E402  (bench/ is not a package)
from bench_serve import _env, pdi_serve  # noqa: E402

CORPUS = HERE.parent / "tests" / "data" / "pdf"
SERIES = "bench.example.us"
BIG_SOURCE, BIG_COPIES = "tracemonkey.pdf", 36
SMALL_SOURCE, SMALL_COPIES = "tracemonkey.pdf", 1
PASSAGE = 200


def pdi(arguments: list[str], cwd: Path) -> str:
    """Run this checkout's ``pdi``; its standard output."""
    done = subprocess.run([sys.executable, "-m", "pdi", *arguments], capture_output=True, cwd=cwd, env=_env())
    if done.returncode != 0:
        raise SystemExit(f"pdi {' '.join(arguments)} failed ({done.returncode}): {done.stderr.decode()}")
    return done.stdout.decode()  # as written: a text layer's CRLF page and line breaks kept


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """Run ``command`` to its end: wall-clock seconds, and the CPU seconds of it and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=cwd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def deposit_and_index(big: Path, work: Path) -> tuple[float, float, str]:
    """``pdi add`` then ``pdi index`` of ``big`` into a new archive: wall and CPU seconds of both, and the name."""
    archive = work / "archive"
    if archive.exists():
        shutil.rmtree(archive)
    pdi(["init", str(archive)], work)
    pdi(["series", "add", SERIES, "--archive", str(archive)], work)
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    name = pdi(["add", "-s", SERIES, str(big), "--archive", str(archive)], work).strip()
    pdi(["index", "--archive", str(archive)], work)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return time.perf_counter() - start, cpu, name


def layer_text(archive: Path, name: str, work: Path) -> str:
    """The whole text layer, as ``pdi get NAME#char=0,N`` gives it (N: the layer's length from ``--info``)."""
    info = pdi(["get", name, "--info", "--archive", str(archive)], work)
    line = next(line for line in info.splitlines() if line.startswith("text-layer\t"))
    characters = int(line.split("\t", 1)[1].split()[0].replace(",", ""))
    return pdi(["get", f"{name}#char=0,{characters}", "--archive", str(archive)], work)


def fetch(url: str) -> tuple[float, bytes]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as answer:
        body = answer.read()
    return time.perf_counter() - start, body


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def main(argv: list[str]) -> int:
    parser = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), markdown=True)
    parser.add_argument("--runs", type=int, default=3, help="rounds of deposit + index beside pdftotext (default 3)")
    parser.add_argument("--passages", type=int, default=200, help="passages asked for (default 200)")
    args = parser.parse_args(argv)
    for tool in ("pdftotext", "pdfunite"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is missing: apt-get install poppler-utils (scripts/bootstrap --dev installs it)")
    runs, passages = (1, 10) if args.small else (args.runs, args.passages)
    source, copies = (SMALL_SOURCE, SMALL_COPIES) if args.small else (BIG_SOURCE, BIG_COPIES)
    rng = random.Random(25)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="pdi-bench-pdf-passage-") as tmp:
        work = Path(tmp)
        big = work / "joined.pdf"
        if copies > 1:
            subprocess.run(["pdfunite", *[str(CORPUS / source)] * copies, str(big)], check=True)
        else:
            shutil.copyfile(CORPUS / source, big)
        pages = int(next(line.split()[-1] for line in subprocess.run(
            ["pdfinfo", str(big)], capture_output=True, text=True, check=True).stdout.splitlines()
            if line.startswith("Pages:")))
        size = big.stat().st_size
        print(f"{source} x {copies}: {pages} pages, {size / 1e6:.1f} MB; load average {load:.1f}, {os.cpu_count()} cores")

        mine: list[tuple[float, float]] = []
        theirs: list[tuple[float, float]] = []
        name = ""
        for _ in range(runs):  # interleaved: pdftotext, pdi, pdftotext, pdi …
            theirs.append(timed(["pdftotext", str(big), str(work / "out.txt")], work))
            wall, cpu, name = deposit_and_index(big, work)
            mine.append((wall, cpu))
        my_wall, my_cpu = (statistics.median(m[i] for m in mine) for i in (0, 1))
        their_wall, their_cpu = (statistics.median(t[i] for t in theirs) for i in (0, 1))
        print(f"pdi add + pdi index: {my_wall:.2f} s (CPU {my_cpu:.2f} s); pdftotext: {their_wall:.2f} s"
              f" (CPU {their_cpu:.2f} s); {my_wall / their_wall:.2f}x")

        archive = work / "archive"
        text = layer_text(archive, name, work)
        starts = [rng.randrange(0, max(1, len(text) - PASSAGE)) for _ in range(passages)]
        page_numbers = [rng.randrange(1, pages + 1) for _ in range(passages)]
        served: list[float] = []
        pages_timed: list[float] = []
        with pdi_serve(archive, ["--workers", "1"]) as serving:
            for start, page in zip(starts, page_numbers, strict=True):
                seconds, body = fetch(f"{serving.url}/uri-res/N2R?{name}%23char={start},{start + PASSAGE}")
                if body.decode() != text[start:start + PASSAGE]:
                    raise SystemExit(f"#char={start},{start + PASSAGE}: the answer is not the layer's text there")
                served.append(seconds)
                pages_timed.append(timed(["pdftotext", "-f", str(page), "-l", str(page), str(big), "-"], work)[0])
        p50, p95 = statistics.median(served), statistics.quantiles(served, n=20)[-1]
        t50, t95 = statistics.median(pages_timed), statistics.quantiles(pages_timed, n=20)[-1]
        print(f"N2R of a {PASSAGE}-character passage: p50 {_ms(p50)}, p95 {_ms(p95)};"
              f" pdftotext of one page: p50 {_ms(t50)}, p95 {_ms(t95)}; {p50 / t50:.2f}x")

    after = os.getloadavg()[0]
    rows = [
        [f"`pdi add` + `pdi index` of {pages} pages ({size / 1e6:.1f} MB): text layer and full-text index",
         f"{my_wall:.2f} s (CPU {my_cpu:.2f} s)", f"`pdftotext` {their_wall:.2f} s (CPU {their_cpu:.2f} s)",
         f"**{my_wall / their_wall:.2f}×**"],
        [f"`N2R` of `#char=a,b` ({PASSAGE} characters, {passages} random places), one client, `pdi serve`",
         f"p50 {_ms(p50)}, p95 {_ms(p95)}", f"`pdftotext -f N -l N` p50 {_ms(t50)}, p95 {_ms(t95)}",
         f"**{p50 / t50:.2f}×**"],
    ]
    table = readme.table(["work", "pdi", "peer", "ratio"], rows)
    print(table)
    print(f"load average {load:.1f} before, {after:.1f} after")
    readme.write(args.markdown, f"{source} joined {copies} times by `pdfunite`, medians of {runs} interleaved"
                 f" rounds (deposit) and of {passages} passages:\n\n" + table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
