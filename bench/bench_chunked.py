"""Benchmark: pdi._chunked against h11 and http.client, each reading the data of the same chunked bodies.

Each body holds ``MB`` MiB of data in chunks of one size (256 octets, 4 KiB,
64 KiB; an extension on every tenth size line, a trailer field after the
last chunk). pdi reads it with :func:`pdi._chunked.pieces` from an
:class:`io.BytesIO` (as the WARC reader reads a payload; the mirror's reader
calls :meth:`pdi._chunked.Chunks.framing` the same way a chunk, and takes the
data in its own buffer); h11 from a client connection given the body in
pieces of 64 KiB (as uvicorn's and httpx's h11 are fed); http.client from
an :class:`http.client.HTTPResponse` over the same body in memory (its
``read()``, as the mirror read an answer before pdi read its chunks itself).
Rounds are interleaved (pdi, h11, http.client, again); the figure is each
one's median CPU (``time.process_time``) a body, and pdi's ratio to each.
Run: ``python3 bench/run_all.py chunked``.
"""

from __future__ import annotations

import argparse
import http.client
import io
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import h11

import readme
from pdi._chunked import Chunks, pieces

MB = 32
ROUNDS = 7
SIZES = (256, 4 << 10, 64 << 10)
HEAD = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"


def body(total: int, size: int) -> bytes:
    data = bytes(range(256)) * (size // 256 + 1)
    out = bytearray()
    for index in range(total // size):
        out += b"%x%s\r\n" % (size, b";ext=1" if index % 10 == 0 else b"") + data[:size] + b"\r\n"
    return bytes(out + b"0\r\nX-Trailer: 1\r\n\r\n")


def by_pdi(raw: bytes) -> int:
    return sum(len(piece) for piece in pieces(io.BytesIO(raw), Chunks()))


def by_h11(raw: bytes) -> int:
    connection = h11.Connection(h11.CLIENT)
    connection.send(h11.Request(method="GET", target="/", headers=[("Host", "a.example")]))
    connection.receive_data(HEAD)
    count, at = 0, 0
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            connection.receive_data(raw[at:at + (64 << 10)])
            at += 64 << 10
        elif isinstance(event, h11.Data):
            count += len(event.data)
        elif isinstance(event, h11.EndOfMessage):
            return count


class _Socket:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def makefile(self, mode: str, *args: object, **kwargs: object) -> io.BufferedReader:
        return io.BufferedReader(io.BytesIO(self.data))  # type: ignore[arg-type]


def by_http_client(raw: bytes) -> int:
    answer = http.client.HTTPResponse(_Socket(HEAD + raw))  # type: ignore[arg-type]
    answer.begin()
    return len(answer.read())


def cpu(read: Callable[[bytes], int], raw: bytes, expected: int) -> float:
    start = time.process_time()
    got = read(raw)
    spent = time.process_time() - start
    assert got == expected, (read.__name__, got, expected)
    return spent


def main() -> None:
    global MB, ROUNDS
    args = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0])).parse_args()
    if args.small:
        MB, ROUNDS = 1, 1
    readers = {"pdi._chunked": by_pdi, "h11": by_h11, "http.client": by_http_client}
    print(f"{MB} MiB of data a body, median CPU of {ROUNDS} interleaved rounds:")
    for size in SIZES:
        raw = body(MB << 20, size)
        expected = (MB << 20) // size * size
        spent: dict[str, list[float]] = {name: [] for name in readers}
        for _ in range(ROUNDS):
            for name, read in readers.items():
                spent[name].append(cpu(read, raw, expected))
        medians = {name: statistics.median(times) for name, times in spent.items()}
        figures = ", ".join(f"{name} {median * 1e3:.1f} ms" for name, median in medians.items())
        print(f"  chunks of {size} octets: {figures}; ratio pdi / h11 {medians['pdi._chunked'] / medians['h11']:.2f},"
              f" pdi / http.client {medians['pdi._chunked'] / medians['http.client']:.2f}")


if __name__ == "__main__":
    main()
