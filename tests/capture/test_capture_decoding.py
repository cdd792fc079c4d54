"""Content codings undone with the decoded size bounded (pdi.capture.decoding), and the
decompression bomb that `pdi capture --max-mb 1` once decoded to gigabytes in memory.

Expected bodies are what the standard library's gzip and zlib were given to compress;
the bomb is served by a local HTTP server and captured by `pdi capture` in a child
process whose peak memory (``tests/peak_memory.py``) is compared with that of
the same command capturing a small page.
"""

from __future__ import annotations

import gzip
import struct
import subprocess
import sys
import zlib
from functools import cache
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.capture import Limits, capture
from pdi.capture.decoding import BodyDecoder
from pdi.errors import LimitError, UnsupportedError
from pdi.mhtml import parse
from peak_memory import run_with_peak

PAGE = b"<html><body><p>" + b"hello " * 200 + b"</p></body></html>"


def raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def encode(data: bytes, codings: list[str]) -> bytes:
    """``data`` with ``codings`` applied in the order listed (RFC 9110 §8.4)."""
    for coding in codings:
        if coding in ("gzip", "x-gzip"):
            data = gzip.compress(data, mtime=0)
        elif coding == "deflate":
            data = zlib.compress(data)
        elif coding == "raw-deflate":
            data = raw_deflate(data)
    return data


@cache
def bomb() -> bytes:
    """2 GiB of zeros, gzipped, gzipped again: about 5 KB.

    The inner gzip is built from one compressed MiB repeated: after a full flush the
    compressor starts afresh, so every MiB of zeros compresses to the same bytes.
    """
    mib = 2048
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(bytes(1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
    last = zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # an empty final block
    crc = 0
    zeros = bytes(1 << 24)
    for _ in range(mib >> 4):
        crc = zlib.crc32(zeros, crc)
    inner = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + block * mib + last + struct.pack("<II", crc, (mib << 20) & 0xFFFFFFFF)
    return gzip.compress(inner, mtime=0)


def decode(body: bytes, codings: list[str], limit: int = 1 << 20, pieces: int = 1) -> bytes:
    decoder = BodyDecoder(codings, limit=limit, url="http://e.org/x")
    step = max(1, len(body) // pieces)
    for i in range(0, len(body), step):
        decoder.feed(body[i : i + step])
    return decoder.finish()


@pytest.mark.parametrize(
    ("applied", "header"),
    [
        ([], []),
        ([], ["identity"]),
        (["gzip"], ["gzip"]),
        (["gzip"], ["x-gzip"]),
        (["deflate"], ["deflate"]),
        (["raw-deflate"], ["deflate"]),  # what some servers send for deflate
        (["gzip", "gzip"], ["gzip, gzip"]),
        (["deflate", "gzip"], ["deflate", "gzip"]),  # two header fields
        (["gzip", "deflate", "gzip"], ["GZIP , deflate,gzip"]),
    ],
)
def test_codings_are_undone_in_reverse_order(applied: list[str], header: list[str]) -> None:
    codings = [c.strip() for h in header for c in h.split(",")]
    body = encode(PAGE, applied)
    assert decode(body, codings) == PAGE
    assert decode(body, codings, pieces=len(body)) == PAGE  # one byte at a time


def test_gzip_members_follow_one_another() -> None:
    # RFC 1952 §2.2: a gzip file is a series of members
    body = gzip.compress(b"first ", mtime=0) + gzip.compress(b"second", mtime=0)
    assert decode(body, ["gzip"]) == b"first second"


def test_limit_is_exact() -> None:
    body = gzip.compress(bytes(1000), mtime=0)
    assert decode(body, ["gzip"], limit=1000) == bytes(1000)
    with pytest.raises(LimitError, match=r"http://e\.org/x is larger than the limit of 999 bytes"):
        decode(body, ["gzip"], limit=999)


def test_an_inner_layer_larger_than_the_limit_is_stopped() -> None:
    # The outer gzip decodes to a gzip stream made of many empty members: it decodes to
    # nothing, but the layer in between is far larger than the limit.
    inner = gzip.compress(b"", mtime=0) * 5000
    with pytest.raises(LimitError, match=r"once decoded \(gzip, gzip\)"):
        decode(gzip.compress(inner, mtime=0), ["gzip", "gzip"], limit=10_000)


@pytest.mark.parametrize("coding", ["br", "zstd", "compress", "x-unknown"])
def test_codings_capture_does_not_ask_for_are_refused(coding: str) -> None:
    with pytest.raises(UnsupportedError, match=f"Content-Encoding '{coding}'"):
        BodyDecoder(["gzip", coding], limit=100, url="http://e.org/x")


def test_more_than_three_codings_is_a_limit() -> None:
    with pytest.raises(LimitError, match="4 content codings"):
        BodyDecoder(["gzip"] * 4, limit=100, url="http://e.org/x")


@pytest.mark.parametrize(
    ("body", "codings", "why"),
    [
        (gzip.compress(PAGE, mtime=0)[:-9], ["gzip"], "ends inside"),
        (zlib.compress(PAGE)[:20], ["deflate"], "ends inside"),
        (b"not gzip at all", ["gzip"], "not valid gzip"),
        (zlib.compress(PAGE) + b"junk", ["deflate"], "4 bytes after the end"),
        (zlib.compress(PAGE) + b"j", ["deflate"], "1 byte after the end"),
        (gzip.compress(PAGE, mtime=0) + b"junk", ["gzip"], "not valid gzip"),
        (b"x", ["deflate"], "single byte"),
    ],
)
def test_broken_bodies_are_refused(body: bytes, codings: list[str], why: str) -> None:
    with pytest.raises(UnsupportedError, match=why):
        decode(body, codings)


def test_an_empty_body_needs_no_stream() -> None:
    assert decode(b"", ["gzip"]) == b""


@settings(max_examples=150, deadline=None)
@given(
    st.binary(max_size=3000) | st.builds(lambda n, b: bytes([b]) * n, st.integers(0, 200_000), st.integers(0, 255)),
    st.lists(st.sampled_from(["gzip", "deflate", "raw-deflate"]), max_size=3),
    st.integers(1, 50),
    st.integers(0, 250_000),
)
def test_property_decoded_body_is_the_original_or_a_limit_error(
    data: bytes, applied: list[str], pieces: int, limit: int
) -> None:
    codings = ["deflate" if c == "raw-deflate" else c for c in applied]
    body = encode(data, applied)
    if len(data) <= limit:
        try:
            assert decode(body, codings, limit=limit, pieces=pieces) == data
        except LimitError:
            # only an inner layer may be larger than the body it decodes to (gzip of few bytes)
            assert any(len(encode(data, applied[:k])) > limit for k in range(1, len(applied)))
    else:
        with pytest.raises(LimitError):
            decode(body, codings, limit=limit, pieces=pieces)


# --- through HTTP ------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        headers = {"Content-Type": "text/html"}
        if self.path == "/bomb.html":
            body = bomb()
            headers["Content-Encoding"] = "gzip, gzip"
        elif self.path == "/twice.html":
            body = encode(PAGE, ["gzip", "gzip"])
            headers["Content-Encoding"] = "gzip, gzip"
        elif self.path == "/brotli.html":
            body = b"\x0b\x02\x80hello\x03"
            headers["Content-Encoding"] = "br"
        elif self.path == "/page.html":
            body = PAGE
        else:
            self.send_error(404)
            return
        self.send_response(200)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


def test_capture_decodes_a_body_gzipped_twice(server: str) -> None:
    got = capture(server + "/twice.html", allow_private=True)
    assert parse(got.mhtml).root.data == PAGE


def test_capture_refuses_a_coding_it_did_not_ask_for(server: str) -> None:
    with pytest.raises(UnsupportedError, match="Content-Encoding 'br'"):
        capture(server + "/brotli.html", allow_private=True)


def test_capture_stops_the_bomb_in_process(server: str) -> None:
    with pytest.raises(LimitError, match=r"bomb\.html is larger than the limit of 1048576 bytes"):
        capture(server + "/bomb.html", allow_private=True, limits=Limits(max_resource_bytes=1 << 20))


def _run(url: str, out: Path, err: Path) -> tuple[int, int]:
    """Exit status and peak resident memory (KiB) of ``pdi capture url --max-mb 1``."""
    with err.open("wb") as stderr:
        status, peak, _ = run_with_peak(
            [sys.executable, "-m", "pdi", "capture", url, "--allow-private", "--max-mb", "1", "-o", str(out)],
            stdout=subprocess.DEVNULL, stderr=stderr,
        )
    return status, peak


def test_cli_capture_of_a_decompression_bomb_stays_small_and_says_why(server: str, tmp_path: Path) -> None:
    assert len(bomb()) < 6000
    status, baseline = _run(server + "/page.html", tmp_path / "page.mht", tmp_path / "page.err")
    assert status == 0, (tmp_path / "page.err").read_text()
    status, peak = _run(server + "/bomb.html", tmp_path / "bomb.mht", tmp_path / "bomb.err")
    lines = (tmp_path / "bomb.err").read_text().splitlines()
    # The body decodes to 2 GiB; the capture may hold the 1 MiB limit and a few pieces more.
    assert peak < baseline + 32 * 1024, (peak, baseline)
    assert status == 7, lines
    assert lines == [
        f"pdi: limit exceeded: {server}/bomb.html is larger than the limit of 1048576 bytes once decoded (gzip, gzip)"
    ]
    assert not (tmp_path / "bomb.mht").exists()
