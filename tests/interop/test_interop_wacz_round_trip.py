"""A WACZ export imported into an empty archive gives every page back with the parts it was deposited with.

The cases a probe found (2026-11-30): captures of one URL whose parts differ, deposited by separate imports (so
each page holds only what its own crawl found), came back from the archive's WACZ with parts of the other capture
(the import took each part from the record of its URL nearest in time), and two captures in one second came back
as one page. The export now marks each page's part records (``WARC-Concurrent-To`` its root, the root's
``PDI-Parts`` their count); warcio reads the fields, and every MHTML is compared part by part with ``email``.
"""

from __future__ import annotations

import datetime
import io
import zipfile
from pathlib import Path

import pytest
from test_interop_wacz import _held
from warc_builder import WarcBuilder, parts_of
from warcio.archiveiterator import ArchiveIterator

from pdi.archive import Archive
from pdi.identifier import PDI
from pdi.interop.wacz import export_wacz
from pdi.interop.warc import import_warc

S = "web.example.us"
URL = "http://example.org/"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(40))
PAGE = b'<html><head><link rel=stylesheet href="s.css"></head><body><img src="i.png">%s</body></html>'


def _name(version: int) -> str:
    return str(PDI.build(series=S, date=datetime.date(2024, 5, 6), foreign_id=URL, format="related", version=version))


def _archive(path: Path) -> Archive:
    opened = Archive.init(path)
    opened.add_series(S)
    return opened


def _import(archive: Archive, path: Path, *records: tuple[str, bytes, str, str]) -> None:
    b = WarcBuilder()
    for url, body, media, date in records:
        b.response(url, body, media, date)
    import_warc(archive, b.save(path), S)


def _round_trip(first: Archive, tmp_path: Path) -> Archive:
    out = tmp_path / "out.wacz"
    export_wacz(first, out, series=S)
    again = _archive(tmp_path / "again")
    import_warc(again, out, S)
    return again


def _pages(archive: Archive) -> list[dict[str, tuple[str, bytes]]]:
    """Each page's parts (by Content-Location), in the order of the names."""
    held = _held(archive)
    return [parts_of(held[name]) for name in sorted(held) if ".related." in name]


def test_a_page_deposited_without_a_part_another_capture_has_comes_back_without_it(tmp_path: Path) -> None:
    first = _archive(tmp_path / "first")
    # the later crawl missed the image (its WARC has none); the earlier one, imported after it, has it
    _import(first, tmp_path / "later.warc.gz",
            (URL, PAGE % b"v2", "text/html", "2024-05-07T10:00:00Z"),
            (URL + "s.css", b"body{color:blue}", "text/css", "2024-05-07T10:00:01Z"))
    _import(first, tmp_path / "earlier.warc.gz",
            (URL, PAGE % b"v1", "text/html", "2024-05-06T10:00:00Z"),
            (URL + "s.css", b"body{color:red}", "text/css", "2024-05-06T10:00:01Z"),
            (URL + "i.png", PNG, "image/png", "2024-05-06T10:00:02Z"))
    before = _pages(first)
    assert [sorted(p) for p in before] == [[URL, URL + "i.png", URL + "s.css"], [URL, URL + "s.css"]]
    again = _round_trip(first, tmp_path)
    assert _pages(again) == before
    assert _held(again) == _held(first)
    first.close()
    again.close()


def test_two_captures_of_one_url_in_one_second_keep_their_own_parts(tmp_path: Path) -> None:
    first = _archive(tmp_path / "first")
    _import(first, tmp_path / "a.warc.gz",
            (URL, PAGE % b"a", "text/html", "2024-05-06T10:00:00Z"),
            (URL + "s.css", b"body{color:red}", "text/css", "2024-05-06T10:00:00Z"),
            (URL + "i.png", PNG, "image/png", "2024-05-06T10:00:00Z"))
    _import(first, tmp_path / "b.warc.gz",
            (URL, PAGE % b"b", "text/html", "2024-05-06T10:00:00Z"),
            (URL + "s.css", b"body{color:green}", "text/css", "2024-05-06T10:00:00Z"),
            (URL + "i.png", PNG + b"b", "image/png", "2024-05-06T10:00:00Z"))
    held = _held(first)
    assert sorted(held) == [_name(v) for v in (1, 2)]
    again = _round_trip(first, tmp_path)
    assert _held(again) == held  # two pages, not one page and its other capture's parts as names of their own
    pages = _pages(again)
    assert pages[0][URL + "s.css"][1] == b"body{color:red}" and pages[1][URL + "s.css"][1] == b"body{color:green}"
    first.close()
    again.close()


def test_the_export_marks_each_pages_part_records(tmp_path: Path) -> None:
    """As warcio reads the exported WARC: the root's PDI-Parts counts the records whose WARC-Concurrent-To names it."""
    first = _archive(tmp_path / "first")
    _import(first, tmp_path / "a.warc.gz",
            (URL, PAGE % b"a", "text/html", "2024-05-06T10:00:00Z"),
            (URL + "s.css", b"body{color:red}", "text/css", "2024-05-06T10:00:01Z"),
            (URL + "i.png", PNG, "image/png", "2024-05-06T10:00:02Z"),
            ("http://example.org/lone.png", PNG + b"!", "image/png", "2024-05-06T10:00:03Z"))
    out = tmp_path / "out.wacz"
    export_wacz(first, out, series=S)
    with zipfile.ZipFile(out) as zf, zf.open("archive/data.warc.gz") as fh:
        records = [r.rec_headers for r in ArchiveIterator(fh) if r.rec_type != "warcinfo"]
    roots = [h for h in records if h.get_header("PDI-Parts") is not None]
    assert len(roots) == 1 and roots[0].get_header("WARC-Target-URI") == URL
    root_id = roots[0].get_header("WARC-Record-ID")
    concurrent = sorted(h.get_header("WARC-Target-URI") for h in records if h.get_header("WARC-Concurrent-To") == root_id)
    assert concurrent == [URL + "i.png", URL + "s.css"]
    assert roots[0].get_header("PDI-Parts") == "2"
    lone = next(h for h in records if h.get_header("WARC-Target-URI").endswith("lone.png"))
    assert lone.get_header("PDI") is not None and lone.get_header("PDI-Parts") is None
    first.close()


NAME = _name(1)


@pytest.mark.parametrize("marks", [{}, {"PDI": NAME}, {"PDI-Parts": "0"}, {"PDI": NAME, "PDI-Parts": "none"}],
                         ids=["a crawler's", "pdi's before the marks", "a count alone", "not a count"])
def test_a_page_of_another_warc_takes_its_parts_nearest_in_time(tmp_path: Path, marks: dict[str, str]) -> None:
    """Without both marks a page's parts are any records of their URLs, as before: here the image of a capture
    three days later, which no record names as the page's."""
    b = WarcBuilder()
    b.response(URL, PAGE % b"a", "text/html", "2024-05-06T10:00:00Z", warc_headers=marks)
    b.response(URL + "s.css", b"body{color:red}", "text/css", "2024-05-06T10:00:01Z")
    b.response(URL + "i.png", PNG, "image/png", "2024-05-09T10:00:00Z")
    archive = _archive(tmp_path / "a")
    import_warc(archive, b.save(tmp_path / "x.warc.gz"), S)
    (page,) = _pages(archive)
    assert sorted(page) == [URL, URL + "i.png", URL + "s.css"]
    archive.close()


def test_a_marked_page_takes_no_part_its_records_do_not_name(tmp_path: Path) -> None:
    """With both marks and PDI-Parts 1, the style sheet named as the page's is taken and the image beside it is not."""
    b = WarcBuilder()
    b.response(URL, PAGE % b"a", "text/html", "2024-05-06T10:00:00Z", warc_headers={"PDI": NAME, "PDI-Parts": "1"})
    b.response(URL + "i.png", PNG, "image/png", "2024-05-06T10:00:00Z")
    path = b.save(tmp_path / "x.warc.gz")
    with path.open("rb") as fh:
        root_id = next(r.rec_headers.get_header("WARC-Record-ID") for r in ArchiveIterator(fh)
                       if r.rec_headers.get_header("PDI"))
    b.response(URL + "s.css", b"body{color:red}", "text/css", "2024-05-06T10:00:00Z",
               warc_headers={"WARC-Concurrent-To": root_id})
    archive = _archive(tmp_path / "a")
    imported, _ = import_warc(archive, b.save(tmp_path / "y.warc.gz"), S)
    (page,) = _pages(archive)
    assert sorted(page) == [URL, URL + "s.css"]
    # the image no page took is deposited as itself
    assert sorted(i.url for i in imported) == [URL, URL + "i.png"]
    archive.close()


def test_a_captured_pages_frame_and_unreached_parts_come_back_as_parts_not_names(tmp_path: Path) -> None:
    """A capture's iframe (an HTML part) and a part the import's crawl does not find (an image a script loaded,
    as a --browser capture holds) were no names of their own in the archive exported: its WACZ imported, into an
    empty archive or into that archive, mints none for them."""
    from pdi.capture.deposit import deposit_capture
    from pdi.mhtml.write import Resource, build

    first = _archive(tmp_path / "first")
    data = build(Resource(URL, "text/html", b'<html><iframe src="f.html"></iframe><img src="i.png"></html>',
                          charset="utf-8"),
                 [Resource(URL + "f.html", "text/html", b'<html><img src="i.png">frame</html>', charset="utf-8"),
                  Resource(URL + "i.png", "image/png", PNG), Resource(URL + "js.png", "image/png", PNG + b"js")])
    deposit_capture(first, S, URL, data)
    held = _held(first)
    assert len(held) == 1
    out = tmp_path / "out.wacz"
    export_wacz(first, out, series=S)
    again = _archive(tmp_path / "again")
    imported, _ = import_warc(again, out, S)
    assert [i.url for i in imported] == [URL] and list(_held(again)) == list(held)
    imported, _ = import_warc(first, out, S)
    assert [i.url for i in imported] == [URL]
    # the reading lacks js.png, which its crawl does not reach: it is the version exported, not a poorer next one
    assert _held(first) == held and [i.unchanged for i in imported] == [True]
    first.close()
    again.close()


def test_a_damaged_copy_says_a_lost_part_record_is_lost_not_that_the_page_lacked_it(tmp_path: Path) -> None:
    """The export cut short inside its last part's record, read with --partial: the page's failure says its
    PDI-Parts counted a record the file lacks, not that the page was exported without that part."""
    first = _archive(tmp_path / "first")
    _import(first, tmp_path / "a.warc.gz",
            (URL, PAGE % b"a", "text/html", "2024-05-06T10:00:00Z"),
            (URL + "s.css", b"body{color:red}", "text/css", "2024-05-06T10:00:01Z"),
            (URL + "i.png", PNG * 100, "image/png", "2024-05-06T10:00:02Z"))
    out = tmp_path / "out.wacz"
    export_wacz(first, out, series=S)
    with zipfile.ZipFile(out) as zf:
        warc = zf.read("archive/data.warc.gz")
    with zipfile.ZipFile(out) as zf, zf.open("archive/data.warc.gz") as fh:
        it = ArchiveIterator(fh)
        last = [it.get_record_offset() for _ in it][-1]
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(warc[: last + 40])
    again = _archive(tmp_path / "again")
    imported, plan = import_warc(again, cut, S, partial=True)
    (page,) = imported
    assert len(page.failures) == 1 and "lacks 1 record of the page's parts" in page.failures[0], page.failures
    assert plan.dropped
    # into the archive it came from: the page it was exported from, which holds every part the copy kept
    held = _held(first)
    (page,), _ = import_warc(first, cut, S, partial=True)
    assert page.unchanged and _held(first) == held
    first.close()
    again.close()


def test_a_reading_with_a_part_its_version_lacks_is_the_next_version(tmp_path: Path) -> None:
    """The export's page with a part changed (another image under its URL, its PDI field kept) is not the version
    it names: deposited as the next version, as any other capture that differs."""
    first = _archive(tmp_path / "first")
    _import(first, tmp_path / "a.warc.gz",
            (URL, PAGE % b"a", "text/html", "2024-05-06T10:00:00Z"),
            (URL + "s.css", b"body{color:red}", "text/css", "2024-05-06T10:00:01Z"),
            (URL + "i.png", PNG, "image/png", "2024-05-06T10:00:02Z"))
    out = tmp_path / "out.wacz"
    export_wacz(first, out, series=S)
    b = WarcBuilder()
    with zipfile.ZipFile(out) as zf, zf.open("archive/data.warc.gz") as fh:
        for r in ArchiveIterator(fh):
            if r.rec_type != "response":
                continue
            body = r.content_stream().read()
            url = r.rec_headers.get_header("WARC-Target-URI")
            kept = {k: v for k, v in r.rec_headers.headers if k in ("PDI", "PDI-Parts", "WARC-Concurrent-To")}
            if url.endswith("i.png"):
                body = PNG + b"other"
            b.writer.write_record(b.writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), length=len(body),
                http_headers=r.http_headers, warc_headers_dict={"WARC-Date": r.rec_headers.get_header("WARC-Date"),
                                                                "WARC-Record-ID": r.rec_headers.get_header("WARC-Record-ID"),
                                                                **kept}))
    (page,), _ = import_warc(first, b.save(tmp_path / "changed.warc.gz"), S)
    assert not page.unchanged and str(page.name).endswith(".related.2")
    assert _pages(first)[1][URL + "i.png"][1] == PNG + b"other"
    first.close()


def test_a_page_and_a_document_named_by_an_iri_come_back_under_their_own_names(tmp_path: Path) -> None:
    """An IRI as a name's id (RFC 3987: ``http://exämple.org/ä.html``, as warcio writes it in WARC-Target-URI) is
    exported at its URI's spelling (``http://ex%C3%A4mple.org/%C3%A4.html``: the page's MHTML labels its root so);
    the import names it by the ``PDI`` field's id, the same URL spelt as the name spells it (found in review,
    2026-11-30: it came back as ``…ex%25C3%25A4mple…``, another name)."""
    first = _archive(tmp_path / "first")
    iri = "http://exämple.org/"
    _import(first, tmp_path / "iri.warc.gz",
            (iri + "ä.html", '<html><img src="bild-ü.png"><link rel=stylesheet href="s.css"></html>'.encode(),
             "text/html; charset=utf-8", "2024-05-06T10:00:00Z"),
            (iri + "bild-ü.png", PNG, "image/png", "2024-05-06T10:00:01Z"),
            (iri + "s.css", b"a{}", "text/css", "2024-05-06T10:00:01Z"),
            (iri + "allein-ö.png", PNG + b"!", "image/png", "2024-05-06T10:00:02Z"))
    held = _held(first)
    assert len(held) == 2 and all("ex%C3%A4mple" in name for name in held)
    out = tmp_path / "out.wacz"
    export_wacz(first, out, series=S)
    with zipfile.ZipFile(out) as zf, zf.open("archive/data.warc.gz") as fh:
        roots = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(fh)
                 if r.rec_headers.get_header("PDI-Parts") is not None]
    assert roots == ["http://ex%C3%A4mple.org/%C3%A4.html"]  # (what the test is about: the URI's spelling)
    again = _archive(tmp_path / "again")
    import_warc(again, out, S)
    assert _held(again) == held
    before = _held(first)
    import_warc(first, out, S)  # into the archive it came from: nothing new
    assert _held(first) == before
    first.close()
    again.close()
