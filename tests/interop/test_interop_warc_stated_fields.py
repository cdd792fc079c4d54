"""The WARC-Record-ID an import keeps as a statement (``warc:record-id``) is checked in its first pass: one a
statement cannot hold (a NUL, which SQLite's text ends at) is refused, naming the file and the
record, before anything is deposited. Found 2026-12-01: a WARC of 3,000 pages whose last record's
WARC-Record-ID held a NUL deposited the 2,944 pages before it, then failed with "a value may not hold U+0000",
naming neither the file nor the record.

The files are written by warcio (the WARC), and zipfile (the WACZ), never by pdi.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from pdi.archive import Archive
from pdi.errors import ParseError
from pdi.interop.warc import import_warc

S = "web.example.us"
PAGES = 30


def _warc(field: str, value: str) -> bytes:
    """``PAGES`` pages, the last with ``field: value`` among its WARC fields."""
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    for n in range(PAGES):
        html = b"<html><body><p>page %d</p></body></html>" % n
        fields = {"WARC-Date": "2024-01-01T00:00:00Z"}
        if n == PAGES - 1:
            fields[field] = value
        record = writer.create_warc_record(
            f"http://example.com/{n}", "response", payload=io.BytesIO(html), length=len(html),
            http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1"),
            warc_headers_dict=fields)
        writer.write_record(record)
    return out.getvalue()


def _snapshot(archive: Archive) -> object:
    store = archive.store
    return list(store.iter_representations()), store.assertions(), sorted(store.blob_names())


@pytest.mark.parametrize("container", ["warc.gz", "wacz"])
def test_a_record_id_holding_a_nul_is_refused_before_anything_is_deposited(tmp_path: Path, container: str) -> None:
    field = "WARC-Record-ID"
    data = _warc(field, "<urn:uuid:12345678-1234-4234-8234-\x00bcdef0123456>")
    path = tmp_path / f"file.{container}"
    if container == "wacz":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as package:
            package.writestr("archive/data.warc.gz", data)
    else:
        path.write_bytes(data)
    archive = Archive.init(tmp_path / "archive")
    archive.add_series(S)
    before = _snapshot(archive)
    with pytest.raises(ParseError, match=rf"file\.{container}.*the record at offset \d+ \(http://example\.com/"
                                         rf"{PAGES - 1}\) is damaged: its {field} holds U\+0000"):
        import_warc(archive, path, S)
    assert _snapshot(archive) == before


def test_the_same_pages_with_plain_fields_import(tmp_path: Path) -> None:
    path = tmp_path / "file.warc.gz"
    path.write_bytes(_warc("WARC-Record-ID", "<urn:uuid:12345678-1234-4234-8234-0bcdef0123456>"))
    archive = Archive.init(tmp_path / "archive")
    archive.add_series(S)
    imported, _ = import_warc(archive, path, S)
    assert len(imported) == PAGES
