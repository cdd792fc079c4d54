"""The resolver over HTTP against a static file server, on the same stack and the same bytes.

Starts, in this process, one uvicorn serving :func:`pdi.server.create_app`
over a fresh SQLite archive, and one uvicorn serving the same bytes as plain
files with Starlette's ``StaticFiles`` (the nearest peer: what a web server
does when a name is just a path). Then times, with one keep-alive client,
request after request, interleaved so both see the same load:

* ``N2R`` of a 10 KB text against ``GET`` of the same 10 KB file;
* ``N2R`` of a ``#line=`` fragment of a 1 MB text against ``GET`` of a file
  holding just those lines (what a site would have to precompute);
* ``N2C`` (the JSON description) and ``/api/resolve`` of the fragment, for
  the record.

Prints medians and p99 in milliseconds and the ratios (``--markdown FILE``:
the README's table). Run with ``python3 bench/run_all.py server``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import httpx  # noqa: E402
import uvicorn  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.routing import Mount  # noqa: E402
from starlette.staticfiles import StaticFiles  # noqa: E402

import readme  # noqa: E402
from pdi.archive import Archive  # noqa: E402
from pdi.server import create_app  # noqa: E402

ROUNDS = 400


def serve(app: object) -> tuple[uvicorn.Server, str]:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))  # type: ignore[arg-type]
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return server, f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"


def text_of(size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    words = ["archive", "citation", "passage", "Grüße", "naïve", "document", "name", "bytes"]
    lines = []
    total = 0
    while total < size:
        line = " ".join(rng.choice(words) for _ in range(rng.randint(3, 14))) + "\r\n"
        lines.append(line)
        total += len(line.encode())
    return "".join(lines).encode()


def main() -> None:
    global ROUNDS
    args = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), markdown=True).parse_args()
    if args.small:
        ROUNDS = 5
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="pdi-bench-server-") as tmp:
        root = Path(tmp)
        archive = Archive.init(root / "archive")
        archive.add_series("bench.example.us")
        small, large = text_of(10_000, 1), text_of(1_000_000, 2)
        small_name = archive.add("bench.example.us", small, format="text")
        large_name = archive.add("bench.example.us", large, format="text")
        archive.close()
        lines = large.split(b"\r\n")
        middle = len(lines) // 2
        fragment = f"{large_name}#line={middle},{middle + 10}"
        files = root / "files"
        files.mkdir()
        (files / "small.txt").write_bytes(small)
        (files / "lines.txt").write_bytes(b"".join(line + b"\r\n" for line in lines[middle : middle + 10]))

        ours, ours_url = serve(create_app(str(root / "archive")))
        peer, peer_url = serve(Starlette(routes=[Mount("/", StaticFiles(directory=files))]))
        try:
            with httpx.Client(timeout=30) as client:
                checks = {
                    f"{ours_url}/uri-res/N2R?{small_name}": small,
                    f"{ours_url}/uri-res/N2R?{fragment.replace('#', '%23')}": (files / "lines.txt").read_bytes(),
                }
                for url, expected in checks.items():
                    assert client.get(url).content == expected, url
                pairs: list[tuple[str, str, str]] = [
                    ("N2R 10 KB text", f"{ours_url}/uri-res/N2R?{small_name}", f"{peer_url}/small.txt"),
                    ("N2R #line= of 1 MB", f"{ours_url}/uri-res/N2R?{fragment.replace('#', '%23')}", f"{peer_url}/lines.txt"),
                ]
                labels = {"N2R 10 KB text": ("`N2R` of a 10 KB text", ""),
                          "N2R #line= of 1 MB": ("`N2R` of `#line=` 10 lines in a 1 MB text", ", a file of just those lines"),
                          "N2C (JSON) 10 KB text": ("`N2C` (JSON) of the 10 KB text", ""),
                          "/api/resolve #line=": ("`/api/resolve` of the `#line=` fragment", "")}
                print(f"{'request':<26} {'pdi median':>11} {'p99':>8} {'static':>9} {'p99':>8} {'ratio':>7}")
                for label, url, peer_request in pairs:
                    mine, theirs = interleaved(client, url, peer_request)
                    print(f"{label:<26} {ms(statistics.median(mine))} {ms(p99(mine))} "
                          f"{ms(statistics.median(theirs))} {ms(p99(theirs))} "
                          f"{statistics.median(mine) / statistics.median(theirs):>6.1f}×")
                    rows.append([labels[label][0], cell(mine), cell(theirs) + labels[label][1],
                                 f"{statistics.median(mine) / statistics.median(theirs):.2f}×"])
                for label, url in (
                    ("N2C (JSON) 10 KB text", f"{ours_url}/uri-res/N2C?{small_name}"),
                    ("/api/resolve #line=", f"{ours_url}/api/resolve?pdi={urllib.parse.quote(fragment, safe='')}"),
                ):
                    times = timed(lambda url=url: client.get(url), ROUNDS)  # type: ignore[misc]
                    print(f"{label:<26} {ms(statistics.median(times))} {ms(p99(times))}")
                    rows.append([labels[label][0], cell(times), "", ""])
        finally:
            ours.should_exit = peer.should_exit = True
    readme.write(args.markdown, f"One keep-alive client, {ROUNDS} requests each, pdi and the static file interleaved;"
                 " medians and p99:\n\n"
                 + readme.table(["request", "pdi", "static file of the same bytes", "ratio"], rows))


def cell(times: list[float]) -> str:
    return f"{statistics.median(times) * 1000:.2f} ms (p99 {p99(times) * 1000:.2f})"


def interleaved(client: httpx.Client, ours: str, peer: str) -> tuple[list[float], list[float]]:
    mine: list[float] = []
    theirs: list[float] = []
    for _ in range(ROUNDS):
        mine.extend(timed(lambda: client.get(ours), 1))
        theirs.extend(timed(lambda: client.get(peer), 1))
    return mine, theirs


def timed(fn: Callable[[], object], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        response = fn()
        times.append(time.perf_counter() - t0)
        assert getattr(response, "status_code", 200) == 200
    return times


def p99(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:>8.2f} ms"


if __name__ == "__main__":
    main()
