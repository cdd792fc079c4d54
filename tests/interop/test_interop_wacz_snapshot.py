"""A WACZ export is one view of the archive, whatever a second writer commits while it runs.

A second archive opened on the same catalog (its own connection: a real
writer, in another transaction) deposits a page, withdraws one and purges
another while the export is under way (from its ``progress`` callback, told
after each record is written, with a batch of names as small as two so that
the writes fall between batches). What the WACZ must hold is what was
deposited and not withdrawn when the export began, spelled from the names the
imports returned; py-wacz's ``wacz validate`` must pass it, and its
``pages.jsonl``, its CDXJ index and ``datapackage.json`` must agree with its
WARC records. Both catalogs: SQLite (blob files beside it) and PostgreSQL
(blobs in its own tables).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from warc_builder import WarcBuilder
from warcio.archiveiterator import ArchiveIterator

from pdi.archive import Archive
from pdi.archive.naming import key_of
from pdi.errors import DamagedError, StoreError
from pdi.identifier import PDI
from pdi.interop import wacz
from pdi.interop.wacz import export_wacz
from pdi.interop.warc import import_warc

S = "web.example.us"
BIN = Path(sys.executable).parent
PAGES = 5


def _page(n: int, tag: str = "") -> tuple[str, bytes, bytes]:
    url = f"http://example.org/p{n}{tag}"
    html = f'<html><body><img src="i{n}{tag}.png">page {n}{tag}</body></html>'.encode()
    # past the 64 KiB a deposit keeps in the catalog's own rows: a blob file beside SQLite, PostgreSQL's blob parts
    png = b"\x89PNG\r\n\x1a\n" + b"".join(hashlib.sha256(f"image {n}{tag} {i}".encode()).digest() for i in range(2500))
    return url, html, png


def _import_page(archive: Archive, n: int, folder: Path, tag: str = "") -> PDI:
    """One page (its HTML and an image) imported from a WARC made with warcio: its name."""
    url, html, png = _page(n, tag)
    b = WarcBuilder()
    b.response(url, html, "text/html; charset=utf-8", f"2026-11-2{n % 8}T10:00:00Z")
    b.response(url.rsplit("/", 1)[0] + f"/i{n}{tag}.png", png, "image/png", f"2026-11-2{n % 8}T10:00:01Z")
    imported, _ = import_warc(archive, b.save(folder / f"p{n}{tag}.warc.gz"), S)
    (page,) = [i.name for i in imported if i.page and i.url == url]
    return page


@pytest.fixture
def two(location: str, tmp_path: Path) -> Iterator[tuple[Archive, Archive, list[PDI]]]:
    """An archive of ``PAGES`` pages, open twice: the exporter and a writer, each on its own connections."""
    exporter = Archive.init(location)
    try:
        exporter.add_series(S)
        names = [_import_page(exporter, n, tmp_path) for n in range(PAGES)]
        writer = Archive.open(location)
        try:
            yield exporter, writer, names
        finally:
            writer.close()
    finally:
        exporter.close()


def _validated(path: Path) -> None:
    checked = subprocess.run([str(BIN / "wacz"), "validate", "-f", str(path)], capture_output=True, text=True,
                             timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Validation succeeded, the passed WACZ is valid" in checked.stdout


def _contents(path: Path) -> tuple[list[str], dict[str, bytes]]:
    """The WACZ's pages (their PDIs, from pages.jsonl) and its WARC's response payloads by URL, after checking
    that the pages, the CDXJ index and datapackage.json agree with the WARC."""
    with zipfile.ZipFile(path) as zf:
        package = json.loads(zf.read("datapackage.json"))
        for resource in package["resources"]:
            octets = zf.read(resource["path"])
            assert resource["hash"] == "sha256:" + hashlib.sha256(octets).hexdigest()
            assert resource["bytes"] == len(octets)
        lines = zf.read("pages/pages.jsonl").decode("utf-8").splitlines()
        pages = [json.loads(line) for line in lines[1:]]
        cdx = zf.read("indexes/index.cdx").decode("utf-8").splitlines()
        warc = zf.read("archive/data.warc.gz")
    payloads: dict[str, bytes] = {}
    roots: dict[str, str] = {}
    offsets: set[int] = set()
    stream = ArchiveIterator(io.BytesIO(warc))
    for record in stream:
        if record.rec_type != "response":
            continue
        url = record.rec_headers.get_header("WARC-Target-URI")
        payloads[url] = record.content_stream().read()
        offsets.add(stream.get_record_offset())
        if record.rec_headers.get_header("PDI"):
            roots[record.rec_headers.get_header("PDI")] = url
    indexed = {json.loads(line.split(" ", 2)[2])["url"]: int(json.loads(line.split(" ", 2)[2])["offset"])
               for line in cdx}
    assert set(indexed) == set(payloads)
    assert set(indexed.values()) == offsets
    assert {p["pdi"]: p["url"] for p in pages} == roots
    return [p["pdi"] for p in pages], payloads


def test_a_wacz_exported_while_a_writer_deposits_and_withdraws_is_the_archive_as_it_began(
    two: tuple[Archive, Archive, list[PDI]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    exporter, writer, names = two
    monkeypatch.setattr(wacz, "_STATED_AT_ONCE", 2)  # batches of two names: the writes fall between batches
    added: list[PDI] = []

    def meanwhile(done: int, total: int) -> None:
        if done == 1:  # the first record written: a page deposited, the last one listed withdrawn, committed
            added.append(_import_page(writer, PAGES, tmp_path, "-meanwhile"))
            writer.withdraw(names[-1], "withdrawn while the export ran")

    out = tmp_path / "out.wacz"
    done = export_wacz(exporter, out, series=S, progress=meanwhile)
    assert added
    _validated(out)
    pages, payloads = _contents(out)
    assert sorted(pages) == sorted(str(n) for n in names)
    assert done.pages == PAGES
    for n in range(PAGES):
        url, html, png = _page(n)
        assert payloads[url] == html
        assert payloads[url.rsplit("/", 1)[0] + f"/i{n}.png"] == png
    # after it, an export sees the writer's commits
    again = tmp_path / "again.wacz"
    export_wacz(exporter, again, series=S)
    assert sorted(_contents(again)[0]) == sorted(str(n) for n in [*names[:-1], *added])


def test_a_wacz_exported_while_a_page_is_purged_is_whole_or_refused(
    two: tuple[Archive, Archive, list[PDI]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, location: str,
) -> None:
    """A takedown committed while the export runs: PostgreSQL's blob parts are rows its snapshot still sees, so
    the WACZ is the archive as the export began, the page purged since in it; the blob files beside SQLite are
    deleted at once, so the export fails saying why, and writes nothing. The purge does not wait for the export
    (SQLite's checkpoint after it waited its two minutes for the export's read transaction)."""
    exporter, writer, names = two
    monkeypatch.setattr(wacz, "_STATED_AT_ONCE", 2)
    took: list[float] = []

    def meanwhile(done: int, total: int) -> None:
        if done == 1:
            started = time.monotonic()
            writer.withdraw(names[-1], "a takedown while the export ran", purge=True)
            took.append(time.monotonic() - started)

    out = tmp_path / "out.wacz"
    if location.startswith("postgres"):
        export_wacz(exporter, out, series=S, progress=meanwhile)
        _validated(out)
        pages, payloads = _contents(out)
        assert sorted(pages) == sorted(str(n) for n in names)
        url, html, png = _page(PAGES - 1)
        assert payloads[url] == html and payloads[url.rsplit("/", 1)[0] + f"/i{PAGES - 1}.png"] == png
    else:
        with pytest.raises(StoreError, match=rf"^{re.escape(str(names[-1]))} was purged while the export ran .*"
                                             "nothing was written; export again$"):
            export_wacz(exporter, out, series=S, progress=meanwhile)
        assert not out.exists()
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(("out", ".out"))] == []
    assert took and took[0] < 10
    # after it, the page is gone from an export
    again = tmp_path / "again.wacz"
    export_wacz(exporter, again, series=S)
    assert sorted(_contents(again)[0]) == sorted(str(n) for n in names[:-1])


def test_an_export_that_finds_octets_lost_says_so(
    two: tuple[Archive, Archive, list[PDI]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Octets missing that no purge took (damage) are not taken for a purge: the export's own error stands."""
    exporter, _, names = two
    real = exporter.store.open_blob
    lost = exporter.store.representations(key_of(names[1]))[0].sha256
    monkeypatch.setattr(exporter.store, "open_blob",
                        lambda sha256, *, name: None if sha256 == lost else real(sha256, name=name))
    with pytest.raises(DamagedError, match=f"the bytes of {re.escape(str(names[1]))} are missing from the store"):
        export_wacz(exporter, tmp_path / "out.wacz", series=S)
    assert not (tmp_path / "out.wacz").exists()
