"""WARC files (ISO 28500:2017, WARC 1.1) as ``pdi import FILE.warc[.gz]`` reads them: :mod:`pdi.interop.warc`.

The input is the file, plain or gzip per record. Pass 1 (``read_index``)
reads and checks every record; pass 2 (``plan_import``) gathers each page's
parts and packs its aggregate, without an archive. What must hold: every
record indexed with a payload reads back at its offset to the size pass 1
counted, whole and in pieces alike; every planned name holds its record's
URL as its id; every page's aggregate is MHTML that ``pdi.mhtml.parse``
reads back with the page's URL on its root part.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

from fuzz_harness import Target

from pdi.capture.fetch import Limits
from pdi.errors import PDIError
from pdi.interop.warc import Source, WarcIndex, plan_import, read_index
from pdi.mhtml import parse

#: The largest payload read (bytes); inputs are at most 64 KiB, but a coding may inflate them.
LIMIT = 1 << 20
SERIES = "web.example.us"


def source_of(name: str, data: bytes) -> Source:
    """A WARC held in memory, opened afresh each time as a seekable stream."""
    return Source(name, lambda: contextlib.nullcontext(io.BytesIO(data)), len(data))


def check_index(index: WarcIndex) -> None:
    for entry in index.entries:
        if entry.kind == "revisit" or entry.unusable(LIMIT) is not None:
            continue
        payload = index.payload(entry, LIMIT)
        assert len(payload) == entry.size, (len(payload), entry.size)
        assert b"".join(index.payload_pieces(entry)) == payload
        try:
            headers, original = index.effective(entry)
        except PDIError:
            continue
        assert headers is entry and original is entry


def check_plan(index: WarcIndex) -> None:
    with tempfile.TemporaryDirectory() as spool:
        plan = plan_import(index, SERIES, Path(spool), limits=Limits(max_resource_bytes=LIMIT, max_total_bytes=4 * LIMIT))
        assert plan.records == index.records
        for item in plan.items:
            assert item.name.unique_id == item.entry.uri
            if item.page:
                assert item.mhtml is not None
                agg = parse(item.aggregate())
                assert agg.root.data == index.payload(item.payload, LIMIT)


def run(data: bytes) -> None:
    index = read_index([source_of("fuzz.warc", data)], limit=LIMIT)
    check_index(index)
    check_plan(index)


TARGET = Target(
    "warc",
    run,
    warmup=(
        b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://example.org/\r\n"
        b"WARC-Date: 2024-05-06T10:00:00Z\r\nWARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000000>\r\n"
        b"Content-Type: application/http; msgtype=response\r\nContent-Length: 84\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 19\r\n\r\n<p>hello</p>\r\n\r\n\r\n"
        b"\r\n\r\n"
    ),
    tokens=(
        b"WARC/1.1\r\n", b"WARC/1.0\r\n", b"\r\n", b"\r\n\r\n", b"WARC-Type: ", b"response", b"resource", b"revisit",
        b"request", b"warcinfo", b"metadata", b"continuation", b"WARC-Target-URI: ", b"http://example.org/",
        b"WARC-Date: ", b"2024-05-06T10:00:00Z", b"2024-05-06T10:00:00.123456Z", b"WARC-Record-ID: ",
        b"Content-Length: ", b"Content-Type: ", b"application/http; msgtype=response", b"WARC-Payload-Digest: ",
        b"WARC-Block-Digest: ", b"sha1:", b"sha256:", b"md5:", b"WARC-Refers-To-Target-URI: ",
        b"WARC-Refers-To-Date: ", b"WARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest",
        b"WARC-Segment-Number: ", b"HTTP/1.1 200 OK\r\n", b"HTTP/1.1 301 Moved\r\n", b"HTTP/1.1 304 Not Modified\r\n",
        b"Location: ", b"Transfer-Encoding: chunked\r\n", b"Content-Encoding: gzip\r\n", b"Content-Encoding: br\r\n",
        b"Content-Encoding: deflate\r\n", b"text/html", b"text/css", b"image/png", b"; charset=", b"\x1f\x8b\x08",
        b'<img src="', b'<link rel="stylesheet" href="', b"url(", b"0\r\n\r\n",
    ),
    examples=0.4,
)
