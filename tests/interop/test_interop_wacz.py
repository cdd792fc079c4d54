"""`pdi export --wacz OUT.wacz` (pdi.interop.wacz): py-wacz validates it, pywb replays it, importing it gives the same bytes."""

from __future__ import annotations

import datetime
import io
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from warc_builder import DATA, WarcBuilder, parts_of, sha1_digest
from warcio.archiveiterator import ArchiveIterator

from pdi._ports import free_port
from pdi.archive import Archive
from pdi.capture import pack_path
from pdi.capture.deposit import deposit_capture
from pdi.cli import cli
from pdi.errors import ImmutabilityError, NotFoundError
from pdi.identifier import PDI
from pdi.interop.wacz import export_wacz
from pdi.interop.warc import import_warc

S = "web.example.us"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(40))
BIN = Path(sys.executable).parent


def _archive(path: Path) -> Archive:
    opened = Archive.init(path)
    opened.add_series(S)
    return opened


@pytest.fixture
def filled(tmp_path: Path) -> Iterator[Archive]:
    """An archive holding the real recorded site, a page captured on two days (the second by revisits), and a lone image."""
    opened = _archive(tmp_path / "archive")
    import_warc(opened, DATA / "site.warc.gz", S)
    b = WarcBuilder()
    url = "http://example.org/"
    page = b'<html><head><link rel=stylesheet href="s.css"></head><body><img src="i.png">v1</body></html>'
    b.response(url, page, "text/html; charset=utf-8", "2024-05-06T10:00:00Z")
    b.response(url + "s.css", b"body{color:red}", "text/css", "2024-05-06T10:00:01Z")
    b.response(url + "i.png", PNG, "image/png", "2024-05-06T10:00:02Z")
    b.response(url, page.replace(b"v1", b"v2"), "text/html; charset=utf-8", "2024-05-07T10:00:00Z")
    b.revisit(url + "i.png", sha1_digest(PNG), url + "i.png", "2024-05-06T10:00:02Z", "2024-05-07T10:00:01Z")
    b.revisit(url + "s.css", sha1_digest(b"body{color:red}"), url + "s.css", "2024-05-06T10:00:01Z",
              "2024-05-07T10:00:01Z", content_type="text/css")
    b.response("http://example.org/photo.png", PNG + b"!", "image/png", "2024-05-08T10:00:00Z")
    import_warc(opened, b.save(tmp_path / "b.warc.gz"), S)
    yield opened
    opened.close()


def _held(archive: Archive) -> dict[str, bytes]:
    """Every name an archive holds (series, day, id, format, version) and its bytes."""
    held: dict[str, bytes] = {}
    for r in archive.store.iter_representations():
        name = PDI.build(series=r.series, date=r.day, foreign_id=r.unique_id, format=r.format, version=r.version)
        held[str(name)] = archive.get(name).data
    return held


def test_py_wacz_validates_the_export(filled: Archive, tmp_path: Path) -> None:
    out = tmp_path / "out.wacz"
    done = export_wacz(filled, out, series=S)
    assert (done.pages, done.documents) == (3, 2)  # the site, example.org on two days; the PDF and the photo
    checked = subprocess.run([str(BIN / "wacz"), "validate", "-f", str(out)], capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Validation succeeded, the passed WACZ is valid" in checked.stdout
    with zipfile.ZipFile(out) as zf:
        assert zf.getinfo("archive/data.warc.gz").compress_type == zipfile.ZIP_STORED  # WACZ: WARCs stored
        lines = zf.read("pages/pages.jsonl").decode().splitlines()
    assert json.loads(lines[0])["format"] == "json-pages-1.0"
    pages = [json.loads(line) for line in lines[1:]]
    related = sorted(name for name in _held(filled) if ".related." in name)
    assert sorted(p["pdi"] for p in pages) == related
    assert {p["url"] for p in pages} == {"http://127.0.0.1:18080/", "http://example.org/"}
    second = next(p for p in pages if p["pdi"].startswith(f"urn:pdi://{S}/2024/05/07/"))
    assert second["ts"] == "2024-05-07T10:00:00Z"


def test_the_exported_warc_dates_parts_and_deduplicates(filled: Archive, tmp_path: Path) -> None:
    out = tmp_path / "out.wacz"
    export_wacz(filled, out, series=S)
    with zipfile.ZipFile(out) as zf, zf.open("archive/data.warc.gz") as fh:
        records = [
            (r.rec_type, r.rec_headers["WARC-Target-URI"], r.rec_headers["WARC-Date"], r.rec_headers.get("PDI"))
            for r in ArchiveIterator(fh) if r.rec_type != "warcinfo"
        ]
    mine = [r for r in records if r[1].startswith("http://example.org/")]
    assert ("response", "http://example.org/s.css", "2024-05-06T10:00:01Z", None) in mine
    assert ("revisit", "http://example.org/i.png", "2024-05-07T10:00:01Z", None) in mine
    roots = [r for r in mine if r[3] is not None]
    assert {r[3] for r in roots} >= {
        str(PDI.build(series=S, date=datetime.date(2024, 5, d), foreign_id="http://example.org/", format="related", version=1))
        for d in (6, 7)
    }


def test_the_index_is_what_cdxj_indexer_makes_of_the_exported_warc(filled: Archive, tmp_path: Path) -> None:
    """The CDXJ an export makes as it writes is, line for line, cdxj-indexer's reading of the WARC it wrote."""
    out = tmp_path / "out.wacz"
    export_wacz(filled, out, series=S)
    with zipfile.ZipFile(out) as zf:
        zf.extract("archive/data.warc.gz", tmp_path)
        ours = zf.read("indexes/index.cdx").decode()
    theirs = tmp_path / "theirs.cdx"
    checked = subprocess.run(
        [str(BIN / "cdxj-indexer"), "--sort", "--post-append", "-o", str(theirs),
         str(tmp_path / "archive" / "data.warc.gz")],
        capture_output=True, text=True, timeout=300,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert ours == theirs.read_text() and len(ours.splitlines()) > 10
    kinds = {json.loads(line.split(" ", 2)[2]).get("mime") for line in ours.splitlines()}
    assert {"warc/revisit", "image/png", "text/html"} <= kinds


def test_importing_the_export_gives_the_same_bytes(filled: Archive, tmp_path: Path) -> None:
    out = tmp_path / "out.wacz"
    export_wacz(filled, out, series=S)
    again = _archive(tmp_path / "again")
    import_warc(again, out, S)
    assert _held(again) == _held(filled)
    again.close()


def test_a_packed_page_round_trips_through_wacz(tmp_path: Path) -> None:
    """A page as pdi's capture path writes it (pack, deposited as a capture), out as WACZ and in again."""
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(DATA / "site" / "style.css", site / "style.css")
    shutil.copy(DATA / "site" / "logo.png", site / "logo.png")
    shutil.copy(DATA / "site" / "bg.png", site / "bg.png")
    (site / "index.html").write_bytes((DATA / "site" / "index.html").read_bytes())
    packed = pack_path(site / "index.html", base="https://pages.example.org/a/")
    first = _archive(tmp_path / "first")
    name = deposit_capture(first, S, "https://pages.example.org/a/index.html", packed.mhtml)[0]
    out = tmp_path / "out.wacz"
    export_wacz(first, out)
    second = _archive(tmp_path / "second")
    (got,), _ = import_warc(second, out, S)
    assert got.name == name
    assert second.get(name).data == first.get(name).data == packed.mhtml


def test_cli_export_wacz_and_its_refusals(filled: Archive, tmp_path: Path) -> None:
    location = filled.location
    runner = CliRunner()
    out = tmp_path / "cli.wacz"
    result = runner.invoke(cli, ["export", "--wacz", str(out), "--series", S, "--archive", location])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("exported 3 pages and 2 other documents (") and out.is_file()
    again = runner.invoke(cli, ["export", "--wacz", str(out), "--archive", location])
    assert again.exit_code == 5 and "never overwrites" in again.stderr
    both = runner.invoke(cli, ["export", str(tmp_path / "bag"), "--wacz", str(tmp_path / "x.wacz"), "--archive", location])
    assert both.exit_code == 2
    with pytest.raises(ImmutabilityError):
        export_wacz(filled, out)
    empty = _archive(tmp_path / "empty")
    with pytest.raises(NotFoundError, match="nothing to export"):
        export_wacz(empty, tmp_path / "none.wacz")
    assert not (tmp_path / "none.wacz").exists()


# --- pywb, an independent replay tool ---------------------------------------------------------


def test_pywb_replays_the_exported_pages(filled: Archive, tmp_path: Path) -> None:
    out = tmp_path / "out.wacz"
    export_wacz(filled, out, series=S)
    root = tmp_path / "pywb"
    root.mkdir()
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    for argv in (["init", "pdi"], ["add", "--unpack-wacz", "pdi", str(out)]):
        done = subprocess.run([str(BIN / "wb-manager"), *argv], cwd=root, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    port = free_port()
    server = subprocess.Popen(
        [str(BIN / "wayback"), "-b", "127.0.0.1", "-p", str(port), "-t", "2"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}/pdi"
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.5)
        day6 = PDI.build(series=S, date=datetime.date(2024, 5, 6), foreign_id="http://example.org/", format="related", version=1)
        day7 = PDI.build(series=S, date=datetime.date(2024, 5, 7), foreign_id="http://example.org/", format="related", version=1)
        for name, stamp in ((day6, "20240506100000"), (day7, "20240507100000")):
            for url, (media, data) in parts_of(filled.get(name).data).items():
                got = httpx.get(f"{base}/{stamp}id_/{url}", timeout=30)  # id_: the bytes as archived
                assert got.status_code == 200, (url, got.text[:300])
                assert got.content == data and got.headers["content-type"].startswith(media)
        pdf = httpx.get(f"{base}/2030id_/http://127.0.0.1:18080/paper.pdf", timeout=30)
        assert pdf.status_code == 200 and pdf.content == (DATA / "site" / "paper.pdf").read_bytes()
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_withdrawn_names_are_left_out(filled: Archive, tmp_path: Path) -> None:
    photo = PDI.build(series=S, date=datetime.date(2024, 5, 8), foreign_id="http://example.org/photo.png", format="png", version=1)
    filled.withdraw(photo, "taken down at the owner's request")
    out = tmp_path / "out.wacz"
    assert export_wacz(filled, out, series=S).documents == 1
    with zipfile.ZipFile(out) as zf, zf.open("archive/data.warc.gz") as fh:
        uris = {r.rec_headers["WARC-Target-URI"] for r in ArchiveIterator(fh) if r.rec_type != "warcinfo"}
    assert "http://example.org/photo.png" not in uris and "http://example.org/i.png" in uris


def test_import_and_export_on_each_store(location: str, tmp_path: Path) -> None:
    """The same import and WACZ round trip on SQLite and on PostgreSQL."""
    with Archive.init(location) as opened:
        opened.add_series(S)
        done, _ = import_warc(opened, DATA / "site.warc.gz", S)
        assert [d.page for d in done] == [True, False]
        # the statements the import's batch made with each name: what warcio reads in each record's headers
        with (DATA / "site.warc.gz").open("rb") as fh:
            said = {r.rec_headers.get_header("WARC-Target-URI"): r.rec_headers for r in ArchiveIterator(fh)
                    if r.rec_type == "response"}
        for d in done:
            headers, meta = said[d.url], opened.meta(d.name)
            assert meta["warc:date"] == headers.get_header("WARC-Date")
            assert meta["warc:record-id"] == headers.get_header("WARC-Record-ID")
            assert meta["warc:payload-digest"] == headers.get_header("WARC-Payload-Digest")
        out = tmp_path / "out.wacz"
        export_wacz(opened, out, series=S)
        again = _archive(tmp_path / "again")
        import_warc(again, out, S)
        assert _held(again) == _held(opened)
        again.close()


# --- round trips: the archive's own export, imported into it, changes nothing (issue 26, item 8) -------------


def _same_day_twice(archive: Archive, tmp_path: Path) -> None:
    """A page captured twice on one day (one document, versions 1 and 2), and an HTML file deposited by a URL."""
    b = WarcBuilder()
    url = "http://twice.example.org/"
    b.response(url, b"<html><body>first</body></html>", "text/html; charset=utf-8", "2024-06-01T09:00:00Z")
    b.response(url, b"<html><body>second</body></html>", "text/html; charset=utf-8", "2024-06-01T17:00:00Z")
    import_warc(archive, b.save(tmp_path / "twice.warc.gz"), S)
    archive.add(S, b"<html><title>T</title><p>deposited</p></html>", format="html", foreign_id="http://dep.example.org/")


def _wacz_warc(wacz: Path, tmp_path: Path) -> Path:
    """The WARC a WACZ holds, as a file of its own."""
    with zipfile.ZipFile(wacz) as z:
        (member,) = [n for n in z.namelist() if n.startswith("archive/") and ".warc" in n]
        out = tmp_path / Path(member).name
        out.write_bytes(z.read(member))
    return out


@pytest.mark.parametrize("what", ["wacz", "warc"])
def test_importing_the_archives_own_export_into_it_changes_nothing(
    filled: Archive, tmp_path: Path, what: str
) -> None:
    _same_day_twice(filled, tmp_path)
    before = _held(filled)
    audit = filled.audit()
    out = tmp_path / "own.wacz"
    export_wacz(filled, out)
    source = out if what == "wacz" else _wacz_warc(out, tmp_path)
    done, plan = import_warc(filled, source, S)
    assert done and all(got.unchanged for got in done), [(str(g.name), g.unchanged) for g in done if not g.unchanged]
    assert {str(got.name) for got in done} <= set(before)  # each answered by the name that holds its bytes
    assert _held(filled) == before  # no new version, no new name
    assert filled.audit() == audit
    assert not plan.skipped


def test_cli_import_of_the_archives_own_wacz_reports_everything_unchanged(filled: Archive, tmp_path: Path) -> None:
    _same_day_twice(filled, tmp_path)
    location = str(filled.location)
    out = tmp_path / "own.wacz"
    assert CliRunner().invoke(cli, ["export", "--wacz", str(out), "--archive", location]).exit_code == 0
    before = _held(filled)
    got = CliRunner().invoke(cli, ["import", str(out), "-s", S, "--archive", location])
    assert got.exit_code == 0, got.output
    assert "0 new" in got.output and "unchanged" in got.output, got.output
    assert _held(filled) == before


def test_the_same_bytes_captured_again_later_are_a_capture_of_their_own(tmp_path: Path) -> None:
    # a page that went back to what it was: its third capture is not its first one imported again
    archive = _archive(tmp_path / "archive")
    b = WarcBuilder()
    url = "http://flip.example.org/"
    for body, at in ((b"<p>a</p>", "2024-06-01T09:00:00Z"), (b"<p>b</p>", "2024-06-01T12:00:00Z"),
                     (b"<p>a</p>", "2024-06-01T15:00:00Z")):
        b.response(url, body, "text/html; charset=utf-8", at)
    done, _ = import_warc(archive, b.save(tmp_path / "flip.warc.gz"), S)
    assert [(g.name.version, g.unchanged) for g in done] == [(1, False), (2, False), (3, False)]
    # and the archive's own export of all three, imported again, is three times unchanged
    export_wacz(archive, tmp_path / "flip.wacz")
    again, _ = import_warc(archive, tmp_path / "flip.wacz", S)
    assert sorted((g.name.version, g.unchanged) for g in again) == [(1, True), (2, True), (3, True)]
    archive.close()


def test_a_later_version_of_a_capture_is_dated_when_it_was_deposited(tmp_path: Path) -> None:
    """Found checking WARC against Memento (2026-11-28): a page deposited again on a later day (``pdi version``)
    was exported with the ``WARC-Date`` noon of its document's day, before its first version was captured, while
    its memento said when it was deposited. A capture's time is when it was deposited, unless a WARC said so."""
    from pdi.archive.content import Content

    times = [datetime.datetime(2026, 11, 20, 18, 0, 7, 250000, tzinfo=datetime.UTC),
             datetime.datetime(2026, 11, 21, 9, 30, 5, tzinfo=datetime.UTC)]
    clock = {"now": times[0]}
    archive = Archive.init(tmp_path / "archive", clock=lambda: clock["now"])
    archive.add_series(S)
    url = "http://later.example.org/"
    first = archive.add(S, b"<html><title>T</title><p>first</p></html>", format="html", foreign_id=url)
    clock["now"] = times[1]
    archive.add_version(str(first).rsplit(".", 2)[0], [Content(b"<html><title>T</title><p>second</p></html>", "html")])
    export_wacz(archive, tmp_path / "later.wacz")
    with zipfile.ZipFile(tmp_path / "later.wacz") as z:
        (member,) = [n for n in z.namelist() if n.startswith("archive/") and ".warc" in n]
        records = [(r.rec_headers.get_header("WARC-Date"), r.content_stream().read())
                   for r in ArchiveIterator(io.BytesIO(z.read(member))) if r.rec_type in ("response", "resource")]
    dated = {body.decode().split("<p>")[1].split("<")[0]: when for when, body in records if b"<p>" in body}
    # WARC 1.1 §5.4: WARC-Date is a W3CDTF time in UTC; the export writes seconds unless a WARC gave it finer
    assert dated == {"first": "2026-11-20T18:00:07Z", "second": "2026-11-21T09:30:05Z"}
    # and the archive's own export imported again is still all unchanged: no name minted on the later day
    again, _ = import_warc(archive, tmp_path / "later.wacz", S)
    assert sorted((str(g.name), g.unchanged) for g in again) == [(str(first), True), (str(first)[:-1] + "2", True)]
    archive.close()
