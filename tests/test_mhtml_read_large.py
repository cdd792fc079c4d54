"""A 67 MB Chromium-like capture parses with peak memory under three times its size."""

from __future__ import annotations

import base64
import io
import random
import tracemalloc

from pdi.mhtml import parse

BOUNDARY = "----MultipartBoundary--LARGEtest0123456789abcdefghijklmnopq----"
SIZE = 67_000_000


def large_capture() -> tuple[bytes, list[bytes]]:
    rng = random.Random(67)
    blobs: list[bytes] = []
    chunks = [
        (
            "From: <Saved by Blink>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/related;\r\n"
            f'\ttype="text/html";\r\n\tboundary="{BOUNDARY}"\r\n\r\n\r\n'
            f"--{BOUNDARY}\r\nContent-Type: text/html\r\nContent-Transfer-Encoding: quoted-printable\r\n"
            "Content-Location: https://big.example/\r\n\r\n<html><body>\r\n"
        ).encode()
    ]
    total = sum(map(len, chunks))
    while total < SIZE - 100:
        blob = rng.randbytes(min(4_000_000, int((SIZE - total) * 0.74) + 3))
        blobs.append(blob)
        n = len(blobs)
        chunk = (
            f"--{BOUNDARY}\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: base64\r\n"
            f"Content-Location: https://big.example/{n}.png\r\n\r\n"
        ).encode() + base64.encodebytes(blob).replace(b"\n", b"\r\n")
        chunks.append(chunk)
        total += len(chunk)
    chunks.append(f"--{BOUNDARY}--\r\n".encode())
    return b"".join(chunks), blobs


def test_large_capture_parses_under_three_times_its_size() -> None:
    data, blobs = large_capture()
    size = len(data)
    assert size >= SIZE

    tracemalloc.start()
    agg = parse(data)
    _, peak_bytes = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # the input itself counts: it is in memory while it is parsed
    assert size + peak_bytes < 3 * size, f"peak {(size + peak_bytes) / size:.2f}x"
    assert [p.data for p in agg.parts[1:]] == blobs
    del agg

    tracemalloc.start()
    agg = parse(io.BytesIO(data))
    _, peak_bytes = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # from a stream only the decoded parts and one part's raw bytes are held
    assert peak_bytes < 1.5 * size, f"peak {peak_bytes / size:.2f}x"
    assert len(agg.parts) == len(blobs) + 1
