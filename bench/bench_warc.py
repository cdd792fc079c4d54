"""WARC and WACZ benchmark: pdi's import and export beside the tools that do the nearest work.

1. Checking a WARC: pdi's first import pass (``pdi.interop.warc.read_index``: every
   record read, its digests checked, its codings undone, indexed) beside warcio's own
   ``warcio check`` (``warcio.checker.Checker``: every record read, digests checked).
2. The whole import (check, build every page's MHTML with the crawl, deposit in a
   SQLite archive) and ``export_wacz`` of what it deposited, each beside warcio reading
   the same file (every record parsed, its content read, its digests checked): the
   ratio of their records per second (issue 24's goal: at least 0.5). An import leaves
   its full text to the indexer's queue; ``pdi index`` draining it
   (``Archive.index_queued``) is timed after each import, off the import's path.
3. Packaging: ``pdi export --wacz`` (``export_wacz``: write the WARC from the archive,
   index it, zip) beside py-wacz's ``wacz create`` of the same WARC (index and zip only).

Run: ``python3 bench/bench_warc.py [--rounds R] [--small]`` (a minute or two). The WARC is made here
with warcio: PAGES pages, each with a style sheet, three images and its HTML. Everything is written under
``$TMPDIR`` (``/tmp`` unless set), whose file system is printed: an import's wall clock is its blobs' syncs on a
real disk, so give it one (``TMPDIR=/mnt/ext4 python3 bench/bench_warc.py``, a fresh ext4 loop file:
docs/benchmarks.md). ``--write-warc PATH`` only writes the WARC there, for timing ``pdi import`` of it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.checker import Checker
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

import readme
from pdi.archive import Archive
from pdi.interop.wacz import export_wacz
from pdi.interop.warc import Imported, import_warc, pages, read_index, sources_for

S = "bench.example.us"
PAGES = 150


def _make_warc(path: Path) -> int:
    with path.open("wb") as out:
        writer = WARCWriter(out, gzip=True)

        def response(url: str, body: bytes, media: str, date: str) -> None:
            http = StatusAndHeaders("200 OK", [("Content-Type", media), ("Content-Length", str(len(body)))],
                                    protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), length=len(body), http_headers=http,
                warc_headers_dict={"WARC-Date": date},
            ))

        for n in range(PAGES):
            base = f"http://site{n % 10}.example.org/p{n}/"
            date = f"2024-05-{1 + n % 28:02d}T10:00:00Z"
            images = "".join(f'<img src="i{k}.png">' for k in range(3))
            html = (f'<html><head><link rel="stylesheet" href="s.css"></head><body>{images}'
                    + "<p>text of the page</p>" * 200 + "</body></html>").encode()
            response(base, html, "text/html; charset=utf-8", date)
            response(base + "s.css", b"p { color: #%06x }\n" % n * 100, "text/css", date)
            for k in range(3):
                png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(20_000)
                response(base + f"i{k}.png", png, "image/png", date)
    return path.stat().st_size


_PHASES = {"read_index": "pass 1 (read, check, index)", "plan_import": "pass 2 (crawl each page)",
           "_deposit_all": "deposits (each page packed as MHTML on the staging threads, batches of new names,"
                           " with their statements)"}


def _phases() -> dict[str, list[float]]:
    """Time each phase of ``import_warc`` (its module's functions wrapped): the time of each call, appended."""
    took: dict[str, list[float]] = {name: [] for name in _PHASES}

    def wrapped(name: str, fn: Callable[..., object]) -> Callable[..., object]:
        def timed(*args: object, **kwargs: object) -> object:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                took[name].append(time.perf_counter() - start)
        return timed

    for name in _PHASES:
        setattr(pages, name, wrapped(name, getattr(pages, name)))
    return took


def _timed(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _once(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def warcio_read(warc: Path) -> int:
    """What warcio does to read the file: every record parsed and its content read to the end, digests checked."""
    count = 0
    with warc.open("rb") as stream:
        for record in ArchiveIterator(stream, check_digests=True):
            while record.content_stream().read(1 << 16):
                pass
            count += 1
    return count


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="Imports and exports of each, interleaved (medians).")
    parser.add_argument("--write-warc", type=Path, metavar="PATH",
                        help="Only write the benchmark's WARC to PATH (for timing `pdi import PATH`), then stop.")
    readme.arguments(parser, markdown=True)  # --small: 10 pages, 1 round
    args = parser.parse_args(argv)
    global PAGES
    if args.small:
        PAGES, args.rounds = 10, 1
    if args.write_warc is not None:
        print(f"{args.write_warc}: {PAGES} pages, {_make_warc(args.write_warc) / 1e6:.1f} MB")
        return
    print(f"load average {os.getloadavg()[0]:.2f} (2 cores shared: compare ratios, not times)")
    with tempfile.TemporaryDirectory() as work:
        where = readme.file_system(work)
        print(f"written under {work}: {where}")
        warc = Path(work) / "bench.warc.gz"
        size = _make_warc(warc)
        records = PAGES * 5
        print(f"WARC: {PAGES} pages, {records} records, {size / 1e6:.1f} MB (gzip per record)")
        assert warcio_read(warc) == records

        check_ours = ours = _timed(lambda: read_index(sources_for(warc), limit=50 << 20))

        def warcio_check() -> None:
            cmd = argparse.Namespace(inputs=[str(warc)], verbose=False)
            with contextlib.redirect_stdout(io.StringIO()):
                assert Checker(cmd).process_all() == 0

        check_peer = peer = _timed(warcio_check)
        print(f"check   pdi read_index {ours * 1e3:8.1f} ms   warcio check {peer * 1e3:8.1f} ms"
              f"   ratio pdi / warcio: {ours / peer:.2f}x")

        # interleaved: warcio reading the file, pdi importing it into a fresh archive, pdi exporting that archive
        # CPU time too (the process's, staging threads included): a shared machine's load moves the wall
        # clock's ratios more than the code does, the CPU's far less
        times: dict[str, list[float]] = {"warcio": [], "import": [], "export": [], "index": []}
        cpu: dict[str, list[float]] = {"warcio": [], "import": [], "export": []}
        phases = _phases()
        archive = None
        for round_ in range(args.rounds):
            used = time.process_time()
            times["warcio"].append(_once(lambda: warcio_read(warc)))
            cpu["warcio"].append(time.process_time() - used)
            if archive is not None:
                archive.close()
            archive = Archive.init(Path(work) / f"archive{round_}")
            archive.add_series(S)
            start, used = time.perf_counter(), time.process_time()
            done: list[Imported] = import_warc(archive, warc, S)[0]
            times["import"].append(time.perf_counter() - start)
            cpu["import"].append(time.process_time() - used)
            for phase, took in phases.items():
                times.setdefault(phase, []).append(took.pop())
            assert sum(1 for d in done if d.page) == PAGES and not any(d.unchanged for d in done)
            assert archive.pending_index() == PAGES  # resolvable now, searched once pdi index has run
            start = time.perf_counter()
            run = archive.index_queued()
            times["index"].append(time.perf_counter() - start)
            assert run.indexed == PAGES and not run.failed and archive.pending_index() == 0
            start, used = time.perf_counter(), time.process_time()
            export_wacz(archive, Path(work) / f"out{round_}.wacz")
            times["export"].append(time.perf_counter() - start)
            cpu["export"].append(time.process_time() - used)
        assert archive is not None
        warcio_s, import_s, export_s, index_s = (
            statistics.median(times[k]) for k in ("warcio", "import", "export", "index"))
        print(f"warcio reading the file  {records / warcio_s:8.0f} records/s ({warcio_s * 1e3:.0f} ms), medians of"
              f" {args.rounds}")
        print(f"pdi import (WARC)        {records / import_s:8.0f} records/s ({import_s * 1e3:.0f} ms)"
              f"   ratio of rates pdi / warcio: {warcio_s / import_s:.3f}x")
        print(f"pdi export --wacz        {records / export_s:8.0f} records/s ({export_s * 1e3:.0f} ms)"
              f"   ratio of rates pdi / warcio: {warcio_s / export_s:.3f}x")
        warcio_cpu, import_cpu, export_cpu = (statistics.median(cpu[k]) for k in ("warcio", "import", "export"))
        print(f"CPU time: warcio {warcio_cpu * 1e3:.0f} ms, import {import_cpu * 1e3:.0f} ms"
              f" (ratio {warcio_cpu / import_cpu:.3f}x), export {export_cpu * 1e3:.0f} ms"
              f" (ratio {warcio_cpu / export_cpu:.3f}x)")
        print(f"then pdi index (the pages' full text, queued by the import) {index_s * 1e3:.0f} ms")
        split = {phase: statistics.median(times[phase]) for phase in phases}
        print("  the import's time: " + ", ".join(f"{_PHASES[p]} {t * 1e3:.0f} ms" for p, t in split.items()))

        exported = Path(work) / "out0.wacz"
        import zipfile
        with zipfile.ZipFile(exported) as zf:
            zf.extract("archive/data.warc.gz", work)
        inner = Path(work) / "archive" / "data.warc.gz"
        n = iter(range(1000))
        ours = _timed(lambda: export_wacz(archive, Path(work) / f"again{next(n)}.wacz"), repeat=2)

        def wacz_create() -> None:
            from wacz.main import main as wacz_main
            target = Path(work) / f"peer{time.perf_counter_ns()}.wacz"
            with contextlib.redirect_stdout(io.StringIO()):
                assert wacz_main(["create", "-o", str(target), str(inner)]) == 0

        peer = _timed(wacz_create, repeat=2)
        print(f"export  pdi export_wacz {ours * 1e3:8.1f} ms   py-wacz create {peer * 1e3:8.1f} ms"
              f"   ratio pdi / py-wacz: {ours / peer:.2f}x  (pdi also writes the WARC from the archive)")
        archive.close()
    rate = f"{records / warcio_s:,.0f} records/s"
    readme.write(args.markdown, (
        f"A WARC made with warcio: {PAGES} pages, {records} records (each page an HTML file, a style sheet and three"
        f" images), {size / 1e6:.1f} MB, gzip per record. Import and export: medians of {args.rounds} interleaved"
        f" rounds, each import into a fresh SQLite archive on {where}; the ratio is of rates (records a second), so the goal"
        " is at least 0.5; the checks and the packaging are the best of three and two (times, so lower is better).\n\n"
    ) + readme.table(
        ["what", "pdi", "peer", "ratio"],
        [["the whole import (check, crawl and pack each page, deposit, statements; full text queued)",
          f"{import_s * 1e3:,.0f} ms ({records / import_s:,.0f} records/s)", f"warcio reading the file: {rate}",
          f"**{warcio_s / import_s:.3f}×**"],
         ["… its CPU time (the process's, its threads' included)", f"{import_cpu * 1e3:,.0f} ms",
          f"warcio's: {warcio_cpu * 1e3:,.0f} ms", f"{warcio_cpu / import_cpu:.3f}×"],
         ["its phases: " + " / ".join(_PHASES[p] for p in split),
          " / ".join(f"{t * 1e3:,.0f}" for t in split.values()) + " ms", "", ""],
         ["then `pdi index`: the pages' full text, which the import queued (off its path; `pdi search` says"
          " \"index pending\" until then)", f"{index_s * 1e3:,.0f} ms", "", ""],
         ["`pdi export --wacz` of what was imported (WARC from the archive, CDXJ, zip)",
          f"{export_s * 1e3:,.0f} ms ({records / export_s:,.0f} records/s)", f"warcio reading the file: {rate}",
          f"**{warcio_s / export_s:.3f}×**"],
         ["… its CPU time", f"{export_cpu * 1e3:,.0f} ms", f"warcio's: {warcio_cpu * 1e3:,.0f} ms",
          f"{warcio_cpu / export_cpu:.3f}×"],
         ["check every record (read, digests, codings undone): `read_index`", f"{check_ours * 1e3:.0f} ms",
          f"`warcio check`: {check_peer * 1e3:.0f} ms", f"{check_ours / check_peer:.2f}× the time"],
         ["`export_wacz` (writes the WARC from the archive too)", f"{ours * 1e3:.0f} ms",
          f"`wacz create` of the same WARC (index and zip only): {peer * 1e3:.0f} ms", f"{ours / peer:.2f}× the time"]]))


if __name__ == "__main__":
    main()
