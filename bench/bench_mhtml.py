"""MHTML benchmark: parse throughput (MB/s) and peak memory on a large capture.

Builds a Chromium-like capture (a quoted-printable HTML root, CSS, and large base64
images and fonts, CRLF line ends, ``----MultipartBoundary--…----`` boundary) of 67 MB under ``bench/data/`` (git-ignored), then times, in the same run:

* ``pdi.mhtml.parse`` on the file as bytes and as a stream (1 MiB chunks),
* the bare standard-library parse of the same bytes:
  ``email.message_from_bytes(data, policy=compat32)`` and decoding every leaf's payload
  (the nearest peer: what pdi would be without its own splitter),

and prints the median seconds, MB/s, the peak memory each needs (``tracemalloc``,
in a separate pass so tracing does not slow the timed runs) as a multiple of the file
size, and the ratios (``--markdown FILE``: the README's table). ``bench_mhtml_pack.py`` (the pack half) uses the same ``timed`` and ``peak``.

Run: ``python3 bench/run_all.py mhtml`` (about a minute).
"""

from __future__ import annotations

import argparse
import base64
import email
import gc
import io
import quopri
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from email.policy import compat32
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import readme  # noqa: E402
from pdi.mhtml import parse  # noqa: E402

DATA = HERE / "data"
BOUNDARY = "----MultipartBoundary--benchBENCHbench0123456789abcdefghijkl----"


def make_capture(size: int, *, seed: int = 2557) -> bytes:
    """A Chromium-like MHTML capture of roughly ``size`` bytes (deterministic)."""
    rng = random.Random(seed)
    crlf = b"\r\n"
    out = io.BytesIO()
    head = (
        "From: <Saved by Blink>\r\n"
        "Snapshot-Content-Location: https://bench.example/page\r\n"
        "Subject: bench\r\n"
        "MIME-Version: 1.0\r\n"
        "Content-Type: multipart/related;\r\n"
        '\ttype="text/html";\r\n'
        f'\tboundary="{BOUNDARY}"\r\n\r\n\r\n'
    )
    out.write(head.encode())
    images = []
    n = 0
    while out.tell() < size - 20_000:
        left = int((size - 20_000 - out.tell()) * 0.74) + 3
        blob = rng.randbytes(min(rng.randrange(200_000, 3_000_000), left))
        url = f"https://bench.example/img/{n}.png"
        images.append(url)
        n += 1
        part = io.BytesIO()
        part.write(
            f"--{BOUNDARY}\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: base64\r\n"
            f"Content-Location: {url}\r\n\r\n".encode()
        )
        part.write(base64.encodebytes(blob).replace(b"\n", crlf))
        out.write(part.getvalue())
    html = "<!DOCTYPE html><html><head><meta charset=utf-8><title>bench</title>"
    html += '<link rel="stylesheet" href="https://bench.example/s.css"></head><body>'
    html += "".join(f'<p>caf\u00e9 {i}<img src="{u}" alt="x"></p>\n' for i, u in enumerate(images))
    html += "</body></html>"
    qp = quopri.encodestring(html.encode(), quotetabs=False).replace(b"\n", crlf)
    root = (
        f"--{BOUNDARY}\r\nContent-Type: text/html\r\nContent-ID: <frame-1@mhtml.blink>\r\n"
        "Content-Transfer-Encoding: quoted-printable\r\n"
        "Content-Location: https://bench.example/page\r\n\r\n"
    ).encode() + qp + crlf
    css = (
        f"--{BOUNDARY}\r\nContent-Type: text/css\r\nContent-Transfer-Encoding: quoted-printable\r\n"
        "Content-Location: https://bench.example/s.css\r\n\r\n"
        "body { background: url(img/0.png) }\r\n"
    ).encode()
    return head.encode() + root + css + out.getvalue()[len(head) :] + f"--{BOUNDARY}--\r\n".encode()


def capture_file(size: int = 67_000_000) -> Path:
    """The benchmark capture under bench/data/, written once."""
    DATA.mkdir(exist_ok=True)
    path = DATA / f"capture-{size}.mhtml"
    if not path.exists():
        path.write_bytes(make_capture(size))
    return path


def email_parse(data: bytes) -> int:
    """The bare email parse: whole-file feed parser, then every leaf's decoded payload."""
    msg = email.message_from_bytes(data, policy=compat32)
    total = 0
    for part in msg.walk():
        if not part.is_multipart():
            payload = part.get_payload(decode=True)
            total += len(payload) if isinstance(payload, bytes) else 0
    return total


def pdi_parse_bytes(data: bytes) -> int:
    """pdi.mhtml.parse on the bytes in memory."""
    return sum(len(p.data) for p in parse(data).parts)


def pdi_parse_stream(path: Path) -> int:
    """pdi.mhtml.parse on an open file, read in 1 MiB chunks."""
    with path.open("rb") as f:
        return sum(len(p.data) for p in parse(f).parts)


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    """Wall-clock seconds of ``runs`` calls."""
    out = []
    for _ in range(runs):
        gc.collect()
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def peak(fn: Callable[[], object]) -> int:
    """Peak traced memory (bytes) of one call, the input excluded when it exists before."""
    gc.collect()
    tracemalloc.start()
    fn()
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top


def measure_parse(path: Path, runs: int = 5) -> dict[str, tuple[float, float]]:
    """Median seconds and peak memory / size of email, pdi on bytes, pdi on a stream."""
    size = path.stat().st_size
    results: dict[str, tuple[float, float]] = {}

    def with_read(fn: Callable[[bytes], int]) -> Callable[[], int]:
        # reading the file is part of the work: the bytes count in the peak
        return lambda: fn(path.read_bytes())

    cases: dict[str, Callable[[], int]] = {
        "email (compat32) bytes": with_read(email_parse),
        "pdi parse bytes": with_read(pdi_parse_bytes),
        "pdi parse stream": lambda: pdi_parse_stream(path),
    }
    for name, fn in cases.items():
        t = statistics.median(timed(fn, runs))
        results[name] = (t, peak(fn) / size)
    return results


def main() -> None:
    args = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), markdown=True).parse_args()
    path = capture_file(2_000_000) if args.small else capture_file()
    size = path.stat().st_size
    print(f"capture: {path.name}, {size / 1e6:.1f} MB")
    runs = 1 if args.small else 5
    res = measure_parse(path, runs=runs)
    print(f"{'parse':28s} {'median s':>9s} {'MB/s':>8s} {'peak/size':>10s}")
    for name, (t, p) in res.items():
        print(f"{name:28s} {t:9.3f} {size / 1e6 / t:8.1f} {p:10.2f}")
    e_t, e_p = res["email (compat32) bytes"]
    for name in ("pdi parse bytes", "pdi parse stream"):
        t, p = res[name]
        print(f"ratio {name} / email: time {t / e_t:.2f}x, peak memory {p / e_p:.2f}x")
    labels = {"email (compat32) bytes": "`email.message_from_bytes` (compat32) + decode every part",
              "pdi parse bytes": "`pdi.mhtml.parse(bytes)`", "pdi parse stream": "`pdi.mhtml.parse(stream)`"}
    rows = [[labels[name], f"{t:.2f} s", f"{size / 1e6 / t:.0f}", f"{p:.2f}×",
             "" if name.startswith("email") else f"**{t / e_t:.2f}×** / {p / e_p:.2f}×"]
            for name, (t, p) in res.items()]
    readme.write(args.markdown, f"A generated {size / 1e6:.0f} MB capture, medians of {runs} runs:\n\n"
                 + readme.table(["parse", "median", "MB/s", "peak memory / file size", "time / memory against `email`"],
                                rows))


if __name__ == "__main__":
    main()
