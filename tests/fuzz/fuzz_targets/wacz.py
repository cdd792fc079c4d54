"""WACZ packages (WACZ 1.1.1) as ``pdi import FILE.wacz`` opens them: :func:`pdi.interop.warc.sources.wacz_sources`.

The input is the ZIP file. Its WARC files under ``archive/`` are read in
place (a seek into the stored member) by pass 1 of a WARC import
(``read_index``) and planned by pass 2 (``plan_import``), with the same
checks as the ``warc`` target: each payload reads back at its offset to the
size first counted, every planned name holds its record's URL.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from fuzz_harness import Target

from fuzz_targets.warc import LIMIT, check_index, check_plan
from pdi.interop.warc import read_index
from pdi.interop.warc.sources import wacz_sources


def run(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.wacz"
        path.write_bytes(data)
        sources = wacz_sources(path)
        assert sources and all("!archive/" in s.name for s in sources)
        index = read_index(sources, limit=LIMIT)
        check_index(index)
        check_plan(index)


TARGET = Target(
    "wacz",
    run,
    warmup=b"PK\x05\x06" + bytes(18),  # an empty ZIP: no WARC under archive/
    tokens=(
        b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07", b"archive/", b"archive/data.warc",
        b"archive/data.warc.gz", b".warc", b".warc.gz", b"pages/pages.jsonl", b"datapackage.json",
        b"datapackage-digest.json", b"\"signedData\"", b"\"publicKey\"", b"\"hash\": \"sha256:",
        b"\x00\x00\x00\x00", b"\xff\xff\xff\xff", b"\x08\x00", b"WARC/1.1\r\n", b"Content-Length: ", b"\r\n\r\n",
    ),
    examples=0.4,
)
