"""WARC and WACZ benchmark: pdi's import and export beside the tools that do the nearest work.

1. Checking a WARC: pdi's first import pass (``pdi.interop.warc.read_index``: every
   record read, its digests checked, its codings undone, indexed) beside warcio's own
   ``warcio check`` (``warcio.checker.Checker``: every record read, digests checked).
2. The whole import (check, build every page's MHTML with the crawl, deposit in a
   SQLite archive) — no peer does this; its pages per second.
3. Packaging: ``pdi export --wacz`` (``export_wacz``: write the WARC from the archive,
   index it, zip) beside py-wacz's ``wacz create`` of the same WARC (index and zip only).

Run: ``python3 bench/run_all.py warc`` (well under a minute). The WARC is made here
with warcio: PAGES pages, each with a style sheet, three images and its HTML.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from warcio.checker import Checker
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from pdi.archive import Archive
from pdi.interop.wacz import export_wacz
from pdi.interop.warc import import_warc, read_index, sources_for

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


def _timed(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    with tempfile.TemporaryDirectory() as work:
        warc = Path(work) / "bench.warc.gz"
        size = _make_warc(warc)
        records = PAGES * 5
        print(f"WARC: {PAGES} pages, {records} records, {size / 1e6:.1f} MB (gzip per record)")

        ours = _timed(lambda: read_index(sources_for(warc), limit=50 << 20))

        def warcio_check() -> None:
            cmd = argparse.Namespace(inputs=[str(warc)], verbose=False)
            with contextlib.redirect_stdout(io.StringIO()):
                assert Checker(cmd).process_all() == 0

        peer = _timed(warcio_check)
        print(f"check   pdi read_index {ours * 1e3:8.1f} ms   warcio check {peer * 1e3:8.1f} ms"
              f"   ratio pdi / warcio: {ours / peer:.2f}x")

        archive = Archive.init(Path(work) / "archive")
        archive.add_series(S)
        start = time.perf_counter()
        done, _ = import_warc(archive, warc, S)
        whole = time.perf_counter() - start
        pages = sum(1 for d in done if d.page)
        print(f"import  {pages} pages in {whole:.2f} s: {pages / whole:.1f} pages/s, {records / whole:.0f} records/s")

        n = iter(range(1000))
        ours = _timed(lambda: export_wacz(archive, Path(work) / f"out{next(n)}.wacz"), repeat=2)
        exported = Path(work) / "out0.wacz"
        import zipfile
        with zipfile.ZipFile(exported) as zf:
            zf.extract("archive/data.warc.gz", work)
        inner = Path(work) / "archive" / "data.warc.gz"

        def wacz_create() -> None:
            from wacz.main import main as wacz_main
            target = Path(work) / f"peer{time.perf_counter_ns()}.wacz"
            with contextlib.redirect_stdout(io.StringIO()):
                assert wacz_main(["create", "-o", str(target), str(inner)]) == 0

        peer = _timed(wacz_create, repeat=2)
        print(f"export  pdi export_wacz {ours * 1e3:8.1f} ms   py-wacz create {peer * 1e3:8.1f} ms"
              f"   ratio pdi / py-wacz: {ours / peer:.2f}x  (pdi also writes the WARC from the archive)")
        archive.close()


if __name__ == "__main__":
    main()
