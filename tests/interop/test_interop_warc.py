"""`pdi import FILE.warc[.gz]|FILE.wacz --series S` (pdi.interop.warc): pages, parts, dates, digests, revisits, damage."""

from __future__ import annotations

import datetime
import gzip
import hashlib
import re
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from warc_builder import DATA, WarcBuilder, everything, parts_of, sha1_digest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders

from pdi.archive import Archive
from pdi.capture.fetch import Limits
from pdi.cli import cli
from pdi.errors import IntegrityError, ParseError, PDIError
from pdi.identifier import PDI
from pdi.interop.warc import import_warc
from pdi.interop.warc.bounded import ReadLimits

S = "web.example.us"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(40))
PAGE = b'<!doctype html><html><head><link rel="stylesheet" href="s.css"></head><body><img src="i.png"><p>v1</p></body></html>'
CSS = b"p { color: red }"


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    opened = Archive.init(tmp_path / "archive")
    opened.add_series(S)
    return opened


def page_name(url: str, day: datetime.date, fmt: str = "related", version: int = 1) -> PDI:
    return PDI.build(series=S, date=day, foreign_id=url, format=fmt, version=version)


def site(builder: WarcBuilder, base: str, date: str, page: bytes = PAGE) -> dict[str, int]:
    return {
        "page": builder.response(base, page, "text/html; charset=utf-8", date),
        "css": builder.response(base + "s.css", CSS, "text/css", date),
        "png": builder.response(base + "i.png", PNG, "image/png", date),
    }


# --- files made by other tools ---------------------------------------------------------------


def _records(path: Path) -> dict[str, tuple[str, str]]:
    """Each response's URL -> (WARC-Date, WARC-Payload-Digest), read by warcio from the file itself."""
    found: dict[str, tuple[str, str]] = {}
    with path.open("rb") as fh:
        for record in ArchiveIterator(fh):
            if record.rec_type == "response":
                found[record.rec_headers["WARC-Target-URI"]] = (
                    record.rec_headers["WARC-Date"], record.rec_headers["WARC-Payload-Digest"]
                )
    return found


@pytest.mark.parametrize("name", ["site.warc.gz", "site.wacz"])
def test_real_warc_and_wacz_import_as_page_and_pdf(archive: Archive, name: str) -> None:
    records = _records(DATA / "site.warc.gz")
    base = "http://127.0.0.1:18080/"
    done, plan = import_warc(archive, DATA / name, S)
    day = datetime.date.fromisoformat(records[base][0][:10])
    page = page_name(base, day)
    pdf = page_name(base + "paper.pdf", datetime.date.fromisoformat(records[base + "paper.pdf"][0][:10]), "pdf")
    assert [d.name for d in done] == [page, pdf] and not plan.skipped
    parts = parts_of(archive.get(page).data)
    site_files = DATA / "site"
    assert parts == {
        base: ("text/html", (site_files / "index.html").read_bytes()),
        base + "style.css": ("text/css", (site_files / "style.css").read_bytes()),
        base + "logo.png": ("image/png", (site_files / "logo.png").read_bytes()),
        base + "bg.png": ("image/png", (site_files / "bg.png").read_bytes()),
    }
    assert archive.get(pdf).data == (site_files / "paper.pdf").read_bytes()
    meta = archive.meta(page)
    assert meta["warc:payload-digest"] == records[base][1]
    assert meta["warc:date"] == records[base][0]
    assert "warc:target-uri" not in meta  # the name's unique id is the target URI
    listed = {line.rsplit(" ", 1)[1]: line.split(" ")[0] for line in meta["warc:parts"].splitlines()}
    assert listed == {u: records[u][1] for u in (base + "style.css", base + "logo.png", base + "bg.png")}
    assert archive.meta(pdf)["warc:payload-digest"] == records[base + "paper.pdf"][1]


# --- built with warcio ------------------------------------------------------------------------


@pytest.mark.parametrize("compressed", [True, False])
def test_page_and_parts_come_back_byte_for_byte(archive: Archive, tmp_path: Path, compressed: bool) -> None:
    b = WarcBuilder(gzip=compressed)
    site(b, "http://example.org/", "2024-05-06T23:59:59Z")
    warc = b.save(tmp_path / ("a.warc.gz" if compressed else "a.warc"))
    (got,), _ = import_warc(archive, warc, S)
    assert got.name == page_name("http://example.org/", datetime.date(2024, 5, 6)) and got.page
    assert parts_of(archive.get(got.name).data) == {
        "http://example.org/": ("text/html", PAGE),
        "http://example.org/s.css": ("text/css", CSS),
        "http://example.org/i.png": ("image/png", PNG),
    }
    assert archive.meta(got.name)["warc:payload-digest"] == sha1_digest(PAGE)


def test_capture_dates_decide_documents_and_versions(archive: Archive, tmp_path: Path) -> None:
    b = WarcBuilder()
    site(b, "http://example.org/", "2024-05-06T08:00:00Z")
    site(b, "http://example.org/", "2024-05-06T23:59:59Z", PAGE.replace(b"v1", b"v2"))  # same GMT day: version 2
    site(b, "http://example.org/", "2024-05-07T00:00:00Z", PAGE.replace(b"v1", b"v3"))  # next day: a new document
    done, _ = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    url = "http://example.org/"
    assert [d.name for d in done] == [
        page_name(url, datetime.date(2024, 5, 6)),
        page_name(url, datetime.date(2024, 5, 6), version=2),
        page_name(url, datetime.date(2024, 5, 7)),
    ]
    assert b"<p>v2</p>" in parts_of(archive.get(done[1].name).data)[url][1]
    assert b"<p>v3</p>" in parts_of(archive.get(done[2].name).data)[url][1]


def test_parts_are_taken_nearest_the_page_in_time(archive: Archive, tmp_path: Path) -> None:
    b = WarcBuilder()
    b.response("http://example.org/s.css", b"p{color:blue}", "text/css", "2024-05-01T00:00:00Z")
    site(b, "http://example.org/", "2024-05-06T12:00:00Z")
    b.response("http://example.org/s.css", b"p{color:green}", "text/css", "2024-05-20T00:00:00Z")
    done, _ = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    page = next(d for d in done if d.page)
    assert parts_of(archive.get(page.name).data)["http://example.org/s.css"][1] == CSS
    # the two style sheets no page used are deposited as themselves, each on its own day
    lone = sorted(str(d.name) for d in done if not d.page)
    assert lone == sorted(str(page_name("http://example.org/s.css", datetime.date(2024, 5, d), "css")) for d in (1, 20))


def test_revisits_are_followed(archive: Archive, tmp_path: Path) -> None:
    b = WarcBuilder()
    url = "http://example.org/"
    site(b, url, "2024-05-06T10:00:00Z")
    # the next day: a new page, whose image and style sheet were deduplicated (identical payload digest)
    b.response(url, PAGE.replace(b"v1", b"v2"), "text/html", "2024-05-07T10:00:00Z")
    b.revisit(url + "s.css", sha1_digest(CSS), url + "s.css", "2024-05-06T10:00:00Z", "2024-05-07T10:00:01Z",
              content_type="text/css")
    b.revisit(url + "i.png", sha1_digest(PNG), url + "i.png", "2024-05-06T10:00:00Z", "2024-05-07T10:00:01Z",
              status="304 Not Modified")
    # and a third day on which the page itself was a revisit
    b.revisit(url, sha1_digest(PAGE), url, "2024-05-06T10:00:00Z", "2024-05-08T10:00:00Z",
              content_type="text/html")
    done, plan = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    assert [d.name for d in done] == [page_name(url, datetime.date(2024, 5, day)) for day in (6, 7, 8)]
    second = parts_of(archive.get(done[1].name).data)
    assert second[url + "s.css"] == ("text/css", CSS) and second[url + "i.png"] == ("image/png", PNG)
    third = parts_of(archive.get(done[2].name).data)
    assert third[url] == ("text/html", PAGE) and third[url + "i.png"] == ("image/png", PNG)
    assert not plan.skipped


def test_warc_1_1_a_revisit_naming_its_original_by_warc_refers_to_alone_is_followed(archive: Archive,
                                                                                      tmp_path: Path) -> None:
    """WARC 1.1 §6.7.3 and its WARC-Refers-To field: a revisit may name the record it repeats by that record's
    WARC-Record-ID alone, with no payload digest nor WARC-Refers-To-Target-URI (a server-not-modified revisit: the
    server said 304)."""
    from warcio.statusandheaders import StatusAndHeaders

    b = WarcBuilder()
    url = "http://example.org/"
    first = "<urn:uuid:6f1b0c3e-2a4d-4c55-9a7e-0d6c1f3b9a01>"
    b.response(url, PAGE, "text/html; charset=utf-8", "2024-05-06T10:00:00Z", warc_headers={"WARC-Record-ID": first})
    b.response(url + "s.css", CSS, "text/css", "2024-05-06T10:00:00Z")
    b.response(url + "i.png", PNG, "image/png", "2024-05-06T10:00:00Z")
    b.writer.write_record(b.writer.create_warc_record(
        url, "revisit", http_headers=StatusAndHeaders("304 Not Modified", [], protocol="HTTP/1.1"),
        warc_headers_dict={"WARC-Date": "2024-05-07T10:00:00Z", "WARC-Refers-To": first,
                           "WARC-Profile": "http://netpreserve.org/warc/1.1/revisit/server-not-modified"}))
    done, plan = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    assert not plan.skipped, plan.skipped
    assert [d.name for d in done] == [page_name(url, datetime.date(2024, 5, day)) for day in (6, 7)]
    assert parts_of(archive.get(done[1].name).data)[url] == ("text/html", PAGE)


def test_a_revisit_whose_warc_refers_to_names_another_payload_than_its_digest_repeats_the_digests(
        archive: Archive, tmp_path: Path) -> None:
    """WARC 1.1 §6.7.2: an identical-payload-digest revisit's WARC-Payload-Digest is that of the payload it repeats.
    One whose WARC-Refers-To names a record of another payload (here the page's second capture, v2) says two things
    that cannot both hold: the digest, which the bytes are checked against, is the one followed, as it was before
    WARC-Refers-To was read (the page of the 8th is v1, the payload of that digest)."""
    b = WarcBuilder()
    url = "http://example.org/"
    second = "<urn:uuid:0e6f9a52-77c4-4f0b-9d1e-3b8a2c5d7e10>"
    site(b, url, "2024-05-06T10:00:00Z")
    b.response(url, PAGE.replace(b"v1", b"v2"), "text/html", "2024-05-07T10:00:00Z",
               warc_headers={"WARC-Record-ID": second})
    b.writer.write_record(b.writer.create_revisit_record(
        url, sha1_digest(PAGE), url, "2024-05-06T10:00:00Z",
        http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1"),
        warc_headers_dict={"WARC-Date": "2024-05-08T10:00:00Z", "WARC-Refers-To": second}))
    done, plan = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    assert not plan.skipped, plan.skipped
    assert [d.name for d in done] == [page_name(url, datetime.date(2024, 5, day)) for day in (6, 7, 8)]
    assert parts_of(archive.get(done[2].name).data)[url] == ("text/html", PAGE)


def test_a_revisit_of_a_payload_not_in_the_file_is_listed_not_imported(archive: Archive, tmp_path: Path) -> None:
    b = WarcBuilder()
    offset = b.revisit("http://example.org/x.png", sha1_digest(b"elsewhere"), "http://example.org/x.png",
                       "2020-01-01T00:00:00Z", "2024-05-06T10:00:00Z", content_type="image/png")
    done, plan = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    assert done == [] and len(plan.skipped) == 1
    assert f"offset {offset}" in plan.skipped[0] and "not in the file" in plan.skipped[0]


def test_redirects_inside_the_warc_are_followed(archive: Archive, tmp_path: Path) -> None:
    b = WarcBuilder()
    url = "http://example.org/"
    page = b'<html><body><img src="old.png"></body></html>'
    b.response(url, page, "text/html", "2024-05-06T10:00:00Z")
    b.response(url + "old.png", b"", None, "2024-05-06T10:00:01Z", status="301 Moved Permanently",
               headers=(("Location", "/img/new.png"),))
    b.response(url + "img/new.png", PNG, "image/png", "2024-05-06T10:00:01Z")
    (got,), _ = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    assert parts_of(archive.get(got.name).data)[url + "old.png"] == ("image/png", PNG)


def test_lone_pdf_and_image_are_deposited_as_themselves(archive: Archive, tmp_path: Path) -> None:
    pdf = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
    b = WarcBuilder()
    b.response("http://example.org/paper.pdf", pdf, "application/pdf", "2024-05-06T10:00:00Z")
    b.response("http://example.org/photo.png", PNG, "image/png", "2024-05-06T10:00:00Z")
    b.response("http://example.org/gone", b"not found", "text/plain", "2024-05-06T10:00:00Z", status="404 Not Found")
    done, _ = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    day = datetime.date(2024, 5, 6)
    assert [d.name for d in done] == [
        page_name("http://example.org/paper.pdf", day, "pdf"), page_name("http://example.org/photo.png", day, "png")
    ]
    assert archive.get(done[0].name).data == pdf and archive.get(done[1].name).data == PNG
    assert not any(d.page for d in done)


def test_importing_again_deposits_nothing(archive: Archive, tmp_path: Path) -> None:
    b = WarcBuilder()
    site(b, "http://example.org/", "2024-05-06T10:00:00Z")
    b.response("http://example.org/photo.png", PNG + b"x", "image/png", "2024-05-06T10:00:00Z")
    warc = b.save(tmp_path / "a.warc.gz")
    first, _ = import_warc(archive, warc, S)
    before = everything(archive)
    again, _ = import_warc(archive, warc, S)
    assert [d.name for d in again] == [d.name for d in first] and all(d.unchanged for d in again)
    assert everything(archive) == before


def test_a_page_whose_held_version_is_its_root_alone_is_a_new_version_with_its_parts(
        archive: Archive, tmp_path: Path) -> None:
    # the root HTML deposited alone under the page's URL (an .html version, dated as its export dates it), then a
    # WARC of that page at that very time with its style and image: the held version lacks them, so the page is
    # not "unchanged" with the .html name; it is the next version, an aggregate holding all three (RFC 2557)
    from pdi.interop.wacz import exported_as

    url = "http://example.org/"
    root = archive.add(S, PAGE, format="html", foreign_id=url, charset="utf-8")
    (record,) = archive.holding(root, [hashlib.sha256(PAGE).hexdigest()])
    _, date = exported_as(archive, record)
    alone = WarcBuilder()
    alone.response(url, PAGE, "text/html; charset=utf-8", date)
    (same,), _ = import_warc(archive, alone.save(tmp_path / "root.warc.gz"), S)
    assert (same.name, same.unchanged) == (root, True)  # the root alone at its time: that version, as before
    b = WarcBuilder()
    site(b, url, date)
    (got,), _ = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    assert got.page and not got.unchanged
    assert got.name == PDI.parse(str(root)).with_format("related").with_version(2)
    held = parts_of(archive.get(got.name).data)
    assert {where: octets for where, (_, octets) in held.items()} == {
        url: PAGE, url + "s.css": CSS, url + "i.png": PNG}
    (again,), _ = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    assert (again.name, again.unchanged) == (got.name, True)


# --- damage ----------------------------------------------------------------------------------


@pytest.mark.parametrize("compressed", [True, False])
def test_a_wrong_payload_digest_is_refused_with_its_offset(archive: Archive, tmp_path: Path, compressed: bool) -> None:
    b = WarcBuilder(gzip=compressed)
    url = "http://example.org/"
    b.response(url, PAGE, "text/html", "2024-05-06T10:00:00Z")
    b.response(url + "s.css", CSS, "text/css", "2024-05-06T10:00:00Z")
    bad = b.response(url + "i.png", PNG, "image/png", "2024-05-06T10:00:00Z",
                     warc_headers={"WARC-Payload-Digest": sha1_digest(PNG + b"!")})
    b.response("http://example.org/other.pdf", b"%PDF-1.4\n%%EOF\n", "application/pdf", "2024-05-06T10:00:00Z")
    warc = b.save(tmp_path / "a.warc")
    before = everything(archive)
    with pytest.raises(IntegrityError, match=rf"a\.warc: the record at offset {bad} \(http://example\.org/i\.png\)"):
        import_warc(archive, warc, S)
    assert everything(archive) == before


def test_a_wrong_content_length_is_refused_with_its_offset(archive: Archive, tmp_path: Path) -> None:
    b = WarcBuilder(gzip=False)
    url = "http://example.org/"
    b.response(url, PAGE, "text/html", "2024-05-06T10:00:00Z")
    bad = b.response(url + "s.css", CSS, "text/css", "2024-05-06T10:00:00Z")
    b.response(url + "i.png", PNG, "image/png", "2024-05-06T10:00:00Z")
    data = b.out.getvalue()
    header_end = data.index(b"\r\n\r\n", bad)
    block = data[bad:header_end]
    length = int(re.search(rb"Content-Length: (\d+)", block).group(1))  # type: ignore[union-attr]
    damaged = data[:bad] + block.replace(b"Content-Length: %d" % length, b"Content-Length: %d" % (length + 7)) + data[header_end:]
    warc = tmp_path / "a.warc"
    warc.write_bytes(damaged)
    before = everything(archive)
    with pytest.raises(PDIError, match=rf"offset {bad}\b"):
        import_warc(archive, warc, S)
    assert everything(archive) == before


@pytest.mark.parametrize("compressed", [True, False])
def test_a_truncated_file_is_refused(archive: Archive, tmp_path: Path, compressed: bool) -> None:
    b = WarcBuilder(gzip=compressed)
    site(b, "http://example.org/", "2024-05-06T10:00:00Z")
    last = b.response("http://example.org/z.png", PNG * 4, "image/png", "2024-05-06T10:00:00Z")
    warc = tmp_path / "a.warc"
    warc.write_bytes(b.out.getvalue()[:-30])
    before = everything(archive)
    with pytest.raises(PDIError, match=rf"offset {last}\b"):
        import_warc(archive, warc, S)
    assert everything(archive) == before


def test_a_payload_that_decodes_past_the_limit_is_listed_not_imported(archive: Archive, tmp_path: Path) -> None:
    bomb = gzip.compress(b"\0" * (8 << 20))  # 8 MiB of zeros in a few kilobytes
    b = WarcBuilder()
    url = "http://example.org/"
    page = b'<html><body><img src="big.png"><img src="i.png"></body></html>'
    b.response(url, page, "text/html", "2024-05-06T10:00:00Z")
    part = b.response(url + "big.png", bomb, "image/png", "2024-05-06T10:00:00Z", headers=(("Content-Encoding", "gzip"),))
    b.response(url + "i.png", PNG, "image/png", "2024-05-06T10:00:00Z")
    lone = b.response(url + "big.txt", bomb, "text/plain", "2024-05-06T10:00:00Z", headers=(("Content-Encoding", "gzip"),))
    done, plan = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S, limits=Limits(max_resource_bytes=1 << 20))
    assert [d.name for d in done] == [page_name(url, datetime.date(2024, 5, 6))]
    assert parts_of(archive.get(done[0].name).data) == {url: ("text/html", page), url + "i.png": ("image/png", PNG)}
    assert len(done[0].failures) == 1 and f"offset {part} " in done[0].failures[0]
    assert plan.skipped == [
        f"a.warc.gz: the record at offset {offset} ({url}{name}): its payload, its codings undone, is larger than the"
        " limit of 1048576 bytes or than 100 times the record (a MiB at least; pdi import --max-expansion)"
        for offset, name in ((part, "big.png"), (lone, "big.txt"))
    ]


def test_a_payload_that_decodes_to_far_more_than_its_record_is_not_embedded_in_every_page(
    archive: Archive, tmp_path: Path,
) -> None:
    """Found by the third attack: 628 octets of gzip (here) or br undoing to 45 MB of zeros, under the 50 MB limit
    of one resource, which each of 20 tiny pages embedded again: 10 KB of WARC made 1.2 GB of archive. A payload
    that decodes to more than 100 times its record (a MiB at least) is as one past the limit: listed, and each
    page is kept without it."""
    bomb = gzip.compress(b"\0" * (12 << 20))  # 12 MiB of zeros in some 12 KB: under the default limit of 50 MB
    assert len(bomb) < 20_000
    b = WarcBuilder()
    url = "http://example.org/"
    part = b.response(url + "big.png", bomb, "image/png", "2024-05-06T10:00:00Z", headers=(("Content-Encoding", "gzip"),))
    pages = [f"{url}p{k}.html" for k in range(3)]
    for page in pages:
        b.response(page, b'<html><body><img src="big.png"></body></html>', "text/html", "2024-05-06T10:00:00Z")
    done, _ = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    assert len(done) == 3
    for made in done:
        assert len(archive.get(made.name).data) < 100_000  # no 12 MiB part in any of them
        assert len(made.failures) == 1 and f"offset {part} " in made.failures[0]
        assert "100 times the record" in made.failures[0]


def test_max_expansion_bounds_a_payload_s_codings_too(archive: Archive, tmp_path: Path) -> None:
    # 12 MiB of zeros in about 12 KB of gzip: some 1,000 times its record. --max-expansion 2000 lets it in; 500
    # keeps it out, naming the limit it met.
    zeros = b"\0" * (12 << 20)
    b = WarcBuilder()
    url = "http://example.org/"
    b.response(url + "big.txt", gzip.compress(zeros), "text/plain", "2024-05-06T10:00:00Z",
               headers=(("Content-Encoding", "gzip"),))
    warc = b.save(tmp_path / "a.warc.gz")
    _, plan = import_warc(archive, warc, S, bounds=ReadLimits(max_expansion=500))
    assert len(plan.skipped) == 1 and plan.skipped[0].endswith(
        "or than 500 times the record (a MiB at least; pdi import --max-expansion)")
    done, plan = import_warc(archive, warc, S, bounds=ReadLimits(max_expansion=2000))
    assert plan.skipped == [] and [archive.get(d.name).data for d in done] == [zeros]


def test_the_limit_does_not_stop_digest_checks(archive: Archive, tmp_path: Path) -> None:
    bomb = gzip.compress(b"\0" * (4 << 20))
    b = WarcBuilder()
    bad = b.response("http://example.org/big.txt", bomb, "text/plain", "2024-05-06T10:00:00Z",
                     headers=(("Content-Encoding", "gzip"),), warc_headers={"WARC-Payload-Digest": sha1_digest(b"x")})
    with pytest.raises(IntegrityError, match=rf"offset {bad}\b"):
        import_warc(archive, b.save(tmp_path / "a.warc.gz"), S, limits=Limits(max_resource_bytes=1 << 20))


def _clean_warc() -> bytes:
    b = WarcBuilder(gzip=False)
    site(b, "http://example.org/", "2024-05-06T10:00:00Z")
    return b.out.getvalue()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_damaged_files_fail_with_pdi_errors_only(data: st.DataObject) -> None:
    raw = bytearray(_clean_warc())
    for _ in range(data.draw(st.integers(1, 4))):
        where = data.draw(st.integers(0, len(raw) - 1))
        raw[where] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        raw = raw[: data.draw(st.integers(0, len(raw)))]
    if data.draw(st.booleans()):
        raw = bytearray(gzip.compress(bytes(raw)))
    with tempfile.TemporaryDirectory() as folder:
        warc = Path(folder) / "a.warc"
        warc.write_bytes(bytes(raw))
        with Archive.init(Path(folder) / "archive") as opened:
            opened.add_series(S)
            try:
                import_warc(opened, warc, S)
            except PDIError:
                pass


# --- the command -----------------------------------------------------------------------------


def test_cli_import_prints_names_and_needs_a_series(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", S, "--archive", location]).exit_code == 0
    b = WarcBuilder()
    site(b, "http://example.org/", "2024-05-06T10:00:00Z")
    warc = b.save(tmp_path / "a.warc.gz")
    result = runner.invoke(cli, ["import", str(warc), "--archive", location])
    assert result.exit_code == 2 and "needs --series S" in result.stderr
    result = runner.invoke(cli, ["import", str(warc), "--series", S, "--archive", location])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{page_name('http://example.org/', datetime.date(2024, 5, 6))}\n"
    assert "imported 1 page and 0 other resources from 4 WARC records (1 new, 0 unchanged)" in result.stderr
    unknown = runner.invoke(cli, ["import", str(warc), "--series", "other.example.us", "--archive", location])
    assert unknown.exit_code == 4 and "pdi: " in unknown.stderr and "not registered" in unknown.stderr
    no_bag = runner.invoke(cli, ["import", str(tmp_path), "--series", S, "--archive", location])
    assert no_bag.exit_code == 1 and "is a directory with no bagit.txt" in no_bag.stderr  # not "--series …"


def test_cli_import_of_what_it_does_not_read_says_what_it_reads(tmp_path: Path) -> None:
    """A WARC named otherwise, a directory that is no bag, a path that is not there: with --series or without, the
    message is about the source, not about --series."""
    location = str(tmp_path / "archive")
    runner = CliRunner()
    runner.invoke(cli, ["init", location])
    (tmp_path / "site.arc.gz").write_bytes((DATA / "site.warc.gz").read_bytes())
    (tmp_path / "dir").mkdir()
    for source, code, words in [
        (tmp_path / "site.arc.gz", 1, "is a file named neither .warc, .warc.gz nor .wacz"),
        (tmp_path / "dir", 1, "is a directory with no bagit.txt"),
        (tmp_path / "nothing", 4, "no file or directory"),
    ]:
        for series in (["--series", S], []):
            result = runner.invoke(cli, ["import", str(source), *series, "--archive", location])
            assert result.exit_code == code and words in result.stderr, (source, series, result.output)
            assert "--series" not in result.stderr
    # a bag pdi exported carries its own series: that one is about --series
    assert runner.invoke(cli, ["export", str(tmp_path / "bag"), "--archive", location]).exit_code == 0
    result = runner.invoke(cli, ["import", str(tmp_path / "bag"), "--series", S, "--archive", location])
    assert result.exit_code == 2 and "a bag carries its own series when pdi exported it" in result.stderr


def test_cli_import_names_the_damaged_record(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    runner = CliRunner()
    runner.invoke(cli, ["init", location])
    runner.invoke(cli, ["series", "add", S, "--archive", location])
    b = WarcBuilder()
    bad = b.response("http://example.org/", PAGE, "text/html", "2024-05-06T10:00:00Z",
                     warc_headers={"WARC-Payload-Digest": sha1_digest(b"other")})
    result = runner.invoke(cli, ["import", str(b.save(tmp_path / "a.warc.gz")), "--series", S, "--archive", location])
    assert result.exit_code == 3
    assert result.stderr == (
        f"pdi: integrity check failed: a.warc.gz: the record at offset {bad} (http://example.org/) is damaged:"
        f" its payload does not match its WARC-Payload-Digest {sha1_digest(b'other')}\n"
    )
    assert result.stdout == ""


def test_cli_import_of_a_warc_compressed_whole_says_so(tmp_path: Path) -> None:
    # wget's WARC of tests/data/warc, compressed as `gzip FILE` does: one member for all its records
    plain = (DATA / "wget-plain.warc").read_bytes()
    whole = tmp_path / "whole.warc.gz"
    whole.write_bytes(gzip.compress(plain))
    with pytest.raises(Exception, match="non-chunked gzip file detected"), whole.open("rb") as fh:
        list(ArchiveIterator(fh))  # warcio, reading it
    location = str(tmp_path / "archive")
    runner = CliRunner()
    runner.invoke(cli, ["init", location])
    runner.invoke(cli, ["series", "add", S, "--archive", location])
    result = runner.invoke(cli, ["import", str(whole), "--series", S, "--archive", location])
    assert result.exit_code == 1
    assert result.stderr == (
        "pdi: syntax error: whole.warc.gz is compressed whole, one gzip member for several records: pdi reads a"
        " .warc.gz of one member a record, as WARC 1.1's annex D asks, so that each record can be read at its"
        " offset. `gunzip` it and import the .warc, or rewrite it with `warcio recompress FILE NEW.warc.gz`"
        " (rule WARC file)\n"
    )
    assert result.stdout == "" and runner.invoke(cli, ["ls", S, "--archive", location]).stdout == ""
    (tmp_path / "whole.warc").write_bytes(plain)
    assert runner.invoke(cli, ["import", str(tmp_path / "whole.warc"), "--series", S, "--archive", location]).exit_code == 0


def test_wacz_that_is_not_a_zip_is_a_parse_error(archive: Archive, tmp_path: Path) -> None:
    bad = tmp_path / "x.wacz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ParseError, match="not a WACZ"):
        import_warc(archive, bad, S)


def _rezipped(source: Path, target: Path, replace: dict[str, bytes | None]) -> Path:
    """A copy of the WACZ ``source`` with members replaced (``None``: left out), stored as py-wacz stores them."""
    import zipfile

    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = replace.get(info.filename, zin.read(info.filename))
            if data is not None:
                zout.writestr(info.filename, data)
    return target


def test_an_unsigned_wacz_whose_warc_is_not_the_one_its_package_lists_is_refused(archive: Archive, tmp_path: Path) -> None:
    """py-wacz's site.wacz with another WARC (Wget's) in its WARC's place and no signature: datapackage.json's
    SHA-256 of the member says it is not the one listed (as ``wacz validate`` says), so nothing is imported. (A
    WACZ with no datapackage.json at all is read as its WARCs alone: there is nothing to check them against.)"""
    import json
    import zipfile

    other = (DATA / "wget.warc.gz").read_bytes()
    with zipfile.ZipFile(DATA / "site.wacz") as zf:
        package = json.loads(zf.read("datapackage.json"))
    for resource in package["resources"]:  # the size said made the other's: its hash alone tells them apart
        if resource["path"] == "archive/site.warc.gz":
            resource["bytes"] = len(other)
    swapped = _rezipped(DATA / "site.wacz", tmp_path / "swapped.wacz",
                        {"archive/site.warc.gz": other, "datapackage-digest.json": None,
                         "datapackage.json": json.dumps(package).encode()})
    with pytest.raises(IntegrityError, match=r"archive/site.warc.gz was changed: its SHA-256 is sha256:"
                                             + hashlib.sha256(other).hexdigest() + r", datapackage.json says sha256:"):
        import_warc(archive, swapped, S)
    assert archive.ls(series=S) == []



@pytest.mark.parametrize(("data", "first"), [
    (b"In Congress, July 4, 1776.\nThe unanimous Declaration\n", "In Congress, July 4, 1776."),
    (gzip.compress(b"just one line of text\n", mtime=0), "just one line of text"),  # a gzip member, not a WARC record
    (b"hello world foo bar 0\n\n", "hello world foo bar 0"),  # what warcio would take for an ARC record
], ids=["text", "gzip", "arc-like"])
@pytest.mark.parametrize("partial", [False, True])
def test_a_file_that_is_not_a_warc_says_so(archive: Archive, tmp_path: Path, data: bytes, first: str,
                                          partial: bool) -> None:
    # with --partial too: no damaged WARC whose whole records are kept (exit 14), but no WARC (exit 1)
    path = tmp_path / "text.warc"
    path.write_bytes(data)
    with pytest.raises(ParseError, match=re.escape(f"text.warc is not a WARC file: its first line is {first!r}, not a"
                                                   " version line (WARC/1.0 or WARC/1.1)")):
        import_warc(archive, path, S, partial=partial)
    assert archive.ls(series=S) == []


def test_a_file_cut_inside_a_records_version_line_is_said_to_be_cut_short(archive: Archive, tmp_path: Path) -> None:
    """Wget's uncompressed WARC cut three octets into its second record (where warcio says that record begins)."""
    whole = (DATA / "wget-plain.warc").read_bytes()
    with (DATA / "wget-plain.warc").open("rb") as fh:
        walk = ArchiveIterator(fh)
        offsets = []
        for _ in walk:
            offsets.append(walk.get_record_offset())
    cut = tmp_path / "cut.warc"
    cut.write_bytes(whole[: offsets[1] + 3])
    with pytest.raises(ParseError, match=re.escape(f"cut.warc: the record at offset {offsets[1]} is damaged: the file"
                                                   " ends inside its version line (the file is cut short)")):
        import_warc(archive, cut, S)


def test_a_name_is_dated_on_another_day_only_with_a_foreign_id(archive: Archive) -> None:
    from pdi.archive import Content
    from pdi.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match="only with a foreign id"):
        archive.deposit(S, [Content(b"text\n", "text")], day=datetime.date(2001, 2, 3))
    (name,) = archive.deposit(S, [Content(b"text\n", "text")], foreign_id="doc-7", day=datetime.date(2001, 2, 3))
    assert str(name) == f"urn:pdi://{S}/2001/02/03/doc-7.text.1"


def test_a_record_whose_bytes_contradict_its_type_is_listed_not_deposited(archive: Archive, tmp_path: Path) -> None:
    b = WarcBuilder()
    fake = b.response("http://example.org/fake.png", b"<html>soft 404</html>", "image/png", "2024-05-06T10:00:00Z")
    bad_text = b.response("http://example.org/t.txt", b"\xff\xfe not utf-8", "text/plain; charset=utf-8",
                          "2024-05-06T10:00:00Z")
    b.response("http://example.org/odd", b"abc", "application/x-no-such-type", "2024-05-06T10:00:00Z")
    done, plan = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    assert [d.name for d in done] == [page_name("http://example.org/odd", datetime.date(2024, 5, 6), "octet-stream")]
    assert archive.get(done[0].name).data == b"abc"
    assert len(plan.skipped) == 2
    assert plan.skipped[0].startswith(f"a.warc.gz: the record at offset {fake} (http://example.org/fake.png): ")
    assert "image/png" in plan.skipped[0] and "text/html" in plan.skipped[0]
    assert plan.skipped[1].startswith(f"a.warc.gz: the record at offset {bad_text} (http://example.org/t.txt): ")


def test_a_segmented_record_is_listed_not_imported(archive: Archive, tmp_path: Path) -> None:
    b = WarcBuilder()
    first = b.response("http://example.org/part.bin", b"first half", "application/octet-stream", "2024-05-06T10:00:00Z",
                       warc_headers={"WARC-Segment-Number": "1"})
    done, plan = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    assert done == [] and len(plan.skipped) == 1
    assert plan.skipped[0].startswith(f"a.warc.gz: the record at offset {first} (http://example.org/part.bin): it is a segment")


def test_a_page_past_the_limits_is_listed_and_the_rest_imported(archive: Archive, tmp_path: Path) -> None:
    b = WarcBuilder()
    many = b.response("http://example.org/many", b"".join(b'<img src="i%d.png">' % i for i in range(5)), "text/html",
                      "2024-05-06T10:00:00Z")
    for i in range(5):
        b.response(f"http://example.org/i{i}.png", PNG + bytes([i]), "image/png", "2024-05-06T10:00:00Z")
    site(b, "http://example.org/small/", "2024-05-06T10:00:00Z")
    done, plan = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S, limits=Limits(max_resources=3))
    assert plan.skipped == [f"a.warc.gz: the record at offset {many} (http://example.org/many): http://example.org/many"
                            " needs more than 3 resources: the one past them is http://example.org/i3.png"]
    names = [str(d.name) for d in done]
    assert str(page_name("http://example.org/small/", datetime.date(2024, 5, 6))) in names
    assert len(names) == 1 + 5  # the small page, and the five images no page that was imported uses


def test_names_dated_by_their_capture_travel_in_bags(archive: Archive, tmp_path: Path) -> None:
    b = WarcBuilder()
    site(b, "http://example.org/", "2024-05-06T10:00:00Z")
    site(b, "http://example.org/", "2024-05-06T11:00:00Z", PAGE.replace(b"v1", b"v2"))
    done, _ = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    assert [d.name.version for d in done] == [1, 2]
    archive.export_bag(tmp_path / "bag")
    with Archive.init(tmp_path / "copy") as copy:
        assert copy.import_bag(tmp_path / "bag") == 2
        for d in done:
            assert copy.get(d.name).data == archive.get(d.name).data
            assert copy.meta(d.name) == archive.meta(d.name)



def test_verify_accepts_names_dated_by_their_capture(archive: Archive, tmp_path: Path) -> None:
    b = WarcBuilder()
    site(b, "http://example.org/", "2024-05-06T10:00:00Z")
    b.response("http://example.org/photo.png", PNG, "image/png", "2023-01-02T03:04:05Z")
    import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    report = archive.verify()
    assert report.ok and report.problems == [] and report.checked_representations == 2


def test_verify_still_reports_names_minted_off_their_day(archive: Archive, tmp_path: Path) -> None:
    import sqlite3

    from pdi.archive import Content

    archive.deposit(S, [Content(b"text\n", "text")])  # a serial name, minted today
    archive.deposit(S, [Content(b"later\n", "text")], foreign_id="doc-1", day=datetime.date(2020, 1, 1))
    assert archive.verify().ok
    conn = sqlite3.connect(Path(archive.location) / "catalog.sqlite")
    with conn:
        conn.execute("UPDATE documents SET created_at = '2019-12-31T23:00:00.000000Z' WHERE unique_id = 'doc-1'")
        conn.execute("UPDATE documents SET created_at = '2031-01-01T00:00:00.000000Z' WHERE serial = 1")
    conn.close()
    problems = sorted(p.detail for p in archive.verify().problems if p.kind == "catalog-document")
    assert len(problems) == 2
    assert problems[0].startswith("it was minted at 2019-12-31T23:00:00.000000Z, not on its day 2020-01-01")  # before its day
    assert problems[1].startswith("it was minted at 2031-01-01T00:00:00.000000Z, not on its day")  # a serial, later
    # a time that is none, on its day by its first ten characters: hour 99
    conn = sqlite3.connect(Path(archive.location) / "catalog.sqlite")
    with conn:
        conn.execute("UPDATE documents SET created_at = '2020-01-01T99:00:00.000000Z' WHERE unique_id = 'doc-1'")
    conn.close()
    problems = [p.detail for p in archive.verify().problems if p.kind == "catalog-document"]
    assert any(p.startswith("its time '2020-01-01T99:00:00.000000Z' is not a catalog timestamp") for p in problems)


def test_importing_again_completes_statements_an_interrupted_import_left_out(archive: Archive, tmp_path: Path) -> None:
    from pdi.capture.deposit import deposit_capture
    from pdi.interop.warc import plan_import, read_index, sources_for

    b = WarcBuilder()
    site(b, "http://example.org/", "2024-05-06T10:00:00Z")
    warc = b.save(tmp_path / "a.warc.gz")
    # what an import stopped right after its deposit leaves: the page, no statements
    index = read_index(sources_for(warc), limit=1 << 20)
    spool = tmp_path / "spool"
    spool.mkdir()
    (item,) = plan_import(index, S, spool).items
    assert item.mhtml is not None
    (name,) = deposit_capture(archive, S, item.entry.uri, item.aggregate(), day=datetime.date(2024, 5, 6))
    assert archive.meta(name) == {}
    (again,), _ = import_warc(archive, warc, S)
    assert again.name == name and again.unchanged
    assert archive.meta(name)["warc:payload-digest"] == sha1_digest(PAGE)
    before = archive.history(name)
    import_warc(archive, warc, S)
    assert archive.history(name) == before  # complete now: nothing stated twice


# --- full text: left to the indexer's queue ---------------------------------------------------


def test_an_imported_capture_resolves_at_once_is_pending_and_is_found_once_the_queue_drains(
    archive: Archive, tmp_path: Path
) -> None:
    b = WarcBuilder()
    site(b, "http://example.org/", "2024-05-06T10:00:00Z", PAGE.replace(b"v1", b"a quagga grazed"))
    b.response("http://example.org/notes.txt", b"another quagga, in plain text\n", "text/plain; charset=utf-8",
               "2024-05-06T10:00:00Z")
    done, plan = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    page, notes = (d.name for d in done)
    assert not plan.skipped
    # resolvable and checkable at once: the page's parts, the text's bytes
    assert parts_of(archive.get(page).data)["http://example.org/"][1] == PAGE.replace(b"v1", b"a quagga grazed")
    assert archive.get(notes).data == b"another quagga, in plain text\n"
    # its text waits for the indexer, and readers are told so
    results = archive.search("quagga")
    assert results.hits == () and results.pending == 2
    assert archive.pending_index(series=S) == 2
    assert archive.index_pending_of(archive.locate(str(page)).record)
    assert archive.index_pending_of(archive.locate(str(notes)).record)
    assert len(archive.queued_indexes()) == 2
    run = archive.index_queued()
    assert (run.indexed, run.failed) == (2, ())
    results = archive.search("quagga")
    assert results.pending == 0 and not archive.index_pending_of(archive.locate(str(page)).record)
    hits = {str(h.name).split("#")[0]: h for h in results.hits}
    assert set(hits) == {str(page), str(notes)}
    assert archive.get(str(hits[str(notes)].name)).data == b"quagga"
    assert "quagga" in archive.get(str(hits[str(page)].name)).data.decode()


def test_cli_import_says_how_many_documents_wait_for_the_indexer(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", S, "--archive", location]).exit_code == 0
    b = WarcBuilder()
    site(b, "http://example.org/", "2024-05-06T10:00:00Z", PAGE.replace(b"v1", b"a quagga grazed"))
    result = runner.invoke(cli, ["import", str(b.save(tmp_path / "a.warc.gz")), "--series", S, "--archive", location])
    assert result.exit_code == 0, result.output
    assert (f"index pending: the text of 1 document of {S} waits for the indexer (`pdi index`, or"
            " `pdi serve --indexer`)") in result.stderr
    before = runner.invoke(cli, ["search", "quagga", "--archive", location])
    assert before.exit_code == 0 and "index pending: the text of 1 name" in before.output
    assert str(page_name("http://example.org/", datetime.date(2024, 5, 6))) not in before.stdout
    assert runner.invoke(cli, ["index", "--archive", location]).exit_code == 0
    after = runner.invoke(cli, ["search", "quagga", "--archive", location])
    assert after.exit_code == 0 and "index pending" not in after.output
    assert str(page_name("http://example.org/", datetime.date(2024, 5, 6))) + "#char=" in after.stdout


def test_pages_past_the_plans_memory_are_packed_and_spooled_and_imported_alike(
    archive: Archive, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pdi.interop.warc.pages as pages
    from pdi.interop.warc import plan_import, read_index, sources_for

    b = WarcBuilder()
    site(b, "http://example.org/", "2024-05-06T10:00:00Z")
    site(b, "http://example.net/", "2024-05-06T10:00:00Z")
    warc = b.save(tmp_path / "a.warc.gz")
    spool = tmp_path / "spool"
    spool.mkdir()
    held = plan_import(read_index(sources_for(warc), limit=1 << 20), S, spool).items
    assert not any(isinstance(item.mhtml, Path) for item in held)  # crawled, packed when deposited
    monkeypatch.setattr(pages, "PLAN_IN_MEMORY", held[0].size())  # the first page only
    first, second = plan_import(read_index(sources_for(warc), limit=1 << 20), S, spool).items
    assert not isinstance(first.mhtml, Path) and isinstance(second.mhtml, Path)
    assert second.size() == len(second.aggregate())
    assert second.aggregate() == held[1].aggregate()
    done, _ = import_warc(archive, warc, S)
    assert [archive.get(d.name).data for d in done] == [item.aggregate() for item in held]


def test_a_revisit_finds_the_record_it_names_among_many_of_one_payload(tmp_path: Path) -> None:
    """WARC 1.1 §6.7: a revisit's record is the one of its payload digest, of the URI it refers to, and of that
    URI's date when it names one. Found by the third attack: 40,000 records of one payload, each named by a
    revisit, took 111 s, every revisit reading every record of the payload; they are indexed by URI and date
    once. Here the choice itself: three records of one payload at two URIs, the revisits naming each."""
    from pdi.interop.warc import read_index, sources_for

    b = WarcBuilder()
    body = b"the same payload"
    first = b.response("http://example.org/a", body, "text/plain", "2024-01-01T00:00:00Z")
    later = b.response("http://example.org/a", body, "text/plain", "2024-02-01T00:00:00Z")
    other = b.response("http://example.org/b", body, "text/plain", "2024-01-01T00:00:00Z")
    digest = sha1_digest(body)
    b.revisit("http://example.org/c", digest, "http://example.org/a", "2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z")
    b.revisit("http://example.org/d", digest, "http://example.org/a", "2023-01-01T00:00:00Z", "2024-03-01T00:00:00Z")
    b.revisit("http://example.org/e", digest, "http://example.org/b", "2024-01-01T00:00:00Z", "2024-03-01T00:00:00Z")
    b.revisit("http://example.org/f", digest, "http://example.org/z", "2024-01-01T00:00:00Z", "2024-03-01T00:00:00Z")
    index = read_index(sources_for(b.save(tmp_path / "a.warc.gz")), limit=1 << 20)
    revisits = {e.uri: e for e in index.entries if e.kind == "revisit"}
    chosen = {uri[-1]: index.original(revisits[uri]).offset for uri in revisits}
    # its URI and date; its URI, the date named nowhere; the other URI; a URI of none: the payload's first record
    assert chosen == {"c": later, "d": first, "e": other, "f": first}


def test_a_warc_date_outside_the_years_a_date_holds_is_a_parse_error(tmp_path: Path) -> None:
    """Found by the third attack: 9999-12-31T23:59:59-05:00 is after the last instant Python's datetime holds in
    UTC, and the import ended in an OverflowError's traceback; it is a ParseError naming the record."""
    from pdi.errors import ParseError
    from pdi.interop.warc import read_index, sources_for

    for date in ("9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+01:00"):
        b = WarcBuilder()
        offset = b.response("http://example.org/", b"x", "text/plain", date)
        with pytest.raises(ParseError, match=f"offset {offset}.*lies outside the years 1 to 9999"):
            read_index(sources_for(b.save(tmp_path / "a.warc.gz")), limit=1 << 20)


def test_a_warc_date_in_another_iso_8601_form_is_a_parse_error_as_warcio_finds(tmp_path: Path) -> None:
    """WARC 1.1 §5.4: WARC-Date is W3C-ISO8601 (YYYY-MM-DDThh:mm:ssZ and its more and less precise forms). Python's
    ``fromisoformat`` also reads an ISO week date (2024-W01-1 is 1 January) and the basic form (20240101T000000Z):
    an import took each as a capture time no WARC writer writes, where warcio's own reading of the date
    (``iso_date_to_datetime``) finds none. A space for the T, which warcio reads too, is still read."""
    from warcio.timeutils import iso_date_to_datetime

    from pdi.errors import ParseError
    from pdi.interop.warc import read_index, sources_for

    for date in ("2024-W01-1", "2024-W01-1T00:00:00Z", "20240101T000000Z", "20240101"):
        with pytest.raises((ValueError, TypeError)):  # (too few numbers for a datetime, or none)
            iso_date_to_datetime(date)
        b = WarcBuilder()
        offset = b.response("http://example.org/", b"x", "text/plain", date)
        with pytest.raises(ParseError, match=f"offset {offset}.*is not a W3C-ISO8601 date"):
            read_index(sources_for(b.save(tmp_path / "a.warc.gz")), limit=1 << 20)
    for date, meant in (("2024-01-01T10:00:00Z", datetime.datetime(2024, 1, 1, 10, tzinfo=datetime.UTC)),
                        ("2024-01-01T10:00:00.5+01:00", datetime.datetime(2024, 1, 1, 9, 0, 0, 500000, datetime.UTC)),
                        ("2024-01-01T10:00Z", datetime.datetime(2024, 1, 1, 10, tzinfo=datetime.UTC)),
                        ("2024-01-01 10:00:00Z", datetime.datetime(2024, 1, 1, 10, tzinfo=datetime.UTC)),
                        ("2024-01-01", datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC))):
        b = WarcBuilder()
        b.response("http://example.org/", b"x", "text/plain", date)
        (entry,) = read_index(sources_for(b.save(tmp_path / "b.warc.gz")), limit=1 << 20).entries
        assert entry.date == meant, date


@given(st.datetimes(min_value=datetime.datetime(1, 1, 1, 12), max_value=datetime.datetime(9999, 12, 31, 11),
                    timezones=st.just(datetime.UTC)))
def test_a_warc_date_written_is_w3c_iso8601_whatever_the_year(when: datetime.datetime) -> None:
    # WARC 1.1 §5.4 (W3C-ISO8601: YYYY-MM-DDThh:mm:ss[.s]Z, four digits of year): glibc's strftime("%Y") writes
    # the year 1 as "1", and an import of the WACZ pdi wrote of a year-0001 capture refused its WARC-Date
    from pdi.interop.warc.write import warc_date

    written = warc_date(when)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z", written), written
    assert datetime.datetime.fromisoformat(written.replace("Z", "+00:00")) == when


def test_a_capture_of_the_year_1_goes_out_in_a_wacz_and_comes_back(archive: Archive, tmp_path: Path) -> None:
    from pdi.interop.wacz import export_wacz

    b = WarcBuilder()
    b.response("http://example.org/", PAGE, "text/html", "0001-01-01T00:00:00Z")
    (first,) = [d.name for d in import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)[0]]
    assert str(first).startswith(f"urn:pdi://{S}/0001/01/01/")
    export_wacz(archive, tmp_path / "out.wacz")
    again = Archive.init(tmp_path / "again")
    again.add_series(S)
    with again:
        (back,) = [d.name for d in import_warc(again, tmp_path / "out.wacz", S)[0]]
        assert back == first and again.get(back).data == archive.get(first).data


@pytest.mark.parametrize("spelled", [b"abc", b"-5", b"5_0", "\uff15".encode(), b"0x10", b""])
def test_a_content_length_that_is_no_number_of_octets_is_refused_saying_so(
        archive: Archive, tmp_path: Path, spelled: bytes) -> None:
    # WARC 1.1 §5.3: Content-Length = "Content-Length" ":" 1*DIGIT; Python's int() reads "-5", "5_0" and a
    # full-width digit too, none of them a length
    b = WarcBuilder(gzip=False)
    b.response("http://example.org/", PAGE, "text/html", "2024-05-06T10:00:00Z")
    bad = b.response("http://example.org/s.css", CSS, "text/css", "2024-05-06T10:00:00Z")
    data = b.out.getvalue()
    header_end = data.index(b"\r\n\r\n", bad)
    block = re.sub(rb"Content-Length: \d+", b"Content-Length: " + spelled, data[bad:header_end], count=1)
    warc = tmp_path / "a.warc"
    warc.write_bytes(data[:bad] + block + data[header_end:])
    before = everything(archive)
    with pytest.raises(ParseError, match=rf"offset {bad}\b.*its Content-Length is .*not a number of octets"):
        import_warc(archive, warc, S)
    assert everything(archive) == before


def test_an_xml_resource_whose_octets_are_not_in_its_encoding_is_listed_not_deposited(
        archive: Archive, tmp_path: Path) -> None:
    # as a text record not in its charset is: XML 1.0 §4.3.3, E9 under a UTF-8 declaration is no UTF-8 (38 + 9)
    import io

    b = WarcBuilder()
    good = b'<?xml version="1.0" encoding="ISO-8859-1"?><feed>caf\xe9</feed>'
    bad = b'<?xml version="1.0" encoding="UTF-8"?><feed>caf\xe9</feed>'
    offsets = []
    for url, body in (("http://example.org/good.xml", good), ("http://example.org/bad.xml", bad)):
        record = b.writer.create_warc_record(url, "resource", payload=io.BytesIO(body), length=len(body),
                                             warc_content_type="application/xml",
                                             warc_headers_dict={"WARC-Date": "2024-05-06T10:00:00Z"})
        offsets.append(b.out.tell())
        b.writer.write_record(record)
    done, plan = import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
    assert [archive.get(d.name).data for d in done] == [good]
    assert len(plan.skipped) == 1
    assert plan.skipped[0].startswith(f"a.warc.gz: the record at offset {offsets[1]} (http://example.org/bad.xml): ")
    assert "the XML is not valid UTF-8 at octet 47" in plan.skipped[0], plan.skipped


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 9999), st.integers(0, 14), st.booleans())
def test_a_warc_date_of_a_year_or_a_month_alone_is_its_first_day(year: int, month: int, with_month: bool) -> None:
    """WARC 1.1 §5.4: "WARC-Date may be specified at any of the levels of granularity described in [W3CDTF]", whose
    coarsest are a year (YYYY) and a month (YYYY-MM). pdi refused both as "not a W3C-ISO8601 date" (warcio's
    ``iso_date_to_datetime`` fails on them too); each is read as its first day, and a month that is none (00, 13)
    is still refused. A WACZ export and Memento date the capture by it too (``dated_capture``)."""
    from pdi.errors import ParseError
    from pdi.interop.wacz import dated_capture
    from pdi.interop.warc import read_index, sources_for

    date = f"{year:04d}-{month:02d}" if with_month else f"{year:04d}"
    b = WarcBuilder()
    b.response("http://example.org/", b"x", "text/plain", date)
    with tempfile.TemporaryDirectory() as folder:
        path = b.save(Path(folder) / "a.warc.gz")
        if with_month and not 1 <= month <= 12:
            with pytest.raises(ParseError, match="is not a W3C-ISO8601 date"):
                read_index(sources_for(path), limit=1 << 20)
            return
        (entry,) = read_index(sources_for(path), limit=1 << 20).entries
    first = datetime.datetime(year, month if with_month else 1, 1, tzinfo=datetime.UTC)
    assert entry.date == first and entry.warc_date == date
    assert dated_capture(first.date(), "2026-11-30T10:00:00Z", date) == (first, True)


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("after", [b"garbage", b"<html>", b"\x00\x01"])
def test_octets_after_the_last_record_that_begin_no_version_line_are_not_said_to_be_one_cut_short(
        archive: Archive, tmp_path: Path, after: bytes, gzipped: bool) -> None:
    """A few octets after the last record (no gzip member, no line end) were said to be "the file ends inside its
    version line (the file is cut short)", as for a file cut three octets into its last record (``WAR``): they
    begin no version line. The file is refused as damaged at their offset, in warcio's words, and not as cut."""
    b = WarcBuilder(gzip=gzipped)
    b.response("http://example.org/", b"x", "text/plain", "2024-05-06T10:00:00Z")
    whole = b.out.getvalue()
    path = tmp_path / ("odd.warc.gz" if gzipped else "odd.warc")
    path.write_bytes(whole + after)
    with pytest.raises(ParseError) as refused:
        import_warc(archive, path, S)
    said = str(refused.value)
    assert said.startswith(f"{path.name}: the record at offset {len(whole)} is damaged: ") and "cut short" not in said, said
    assert archive.ls(series=S) == []
    path.write_bytes(whole + b"WARC/1")  # what is a version line cut short is still said to be one
    with pytest.raises(ParseError, match=f"offset {len(whole)} is damaged: the file ends inside its version line"):
        import_warc(archive, path, S)
