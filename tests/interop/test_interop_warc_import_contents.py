"""What a WARC import deposits, checked against values worked out without pdi's own readers or writers.

Each page's MHTML is read back with Python's ``email`` package, the WARC with
warcio's ``ArchiveIterator``: every page is a name of the grammar (the page's
URL its foreign id, the GMT day of its ``WARC-Date``), holds each record it uses
with the record's payload octet for octet, and carries the ``warc:`` statements
of those records; every blob's chunk digests check (``Archive.verify``). Issue 24
made the import cheaper (the MHTML check reads without decoding the bodies it throws
away); this is what must not move.
"""

from __future__ import annotations

import base64
import datetime
import email
import email.policy
import hashlib
import random
from pathlib import Path

from warc_builder import WarcBuilder
from warcio.archiveiterator import ArchiveIterator

from pdi.archive import Archive
from pdi.identifier import PDI
from pdi.interop.warc import import_warc

S = "web.example.us"
PAGES = 6


def _warc(path: Path) -> Path:
    """Pages as the benchmark makes them (a style sheet and three images each), one page's text beyond ASCII."""
    b = WarcBuilder()
    rng = random.Random(24)
    for n in range(PAGES):
        base = f"http://site{n % 2}.example.org/p{n}/"
        date = f"2024-05-{1 + n % 3:02d}T1{n}:00:00Z"
        images = "".join(f'<img src="i{k}.png">' for k in range(3))
        words = "<p>text of the page</p>" if n % 2 else "<p>Grüße, naïve café — ok</p>"
        html = f'<html><head><link rel="stylesheet" href="s.css"></head><body>{images}{words * 40}</body></html>'
        b.response(base, html.encode(), "text/html; charset=utf-8", date)
        b.response(base + "s.css", b"p { color: #%06x }\n" % n * 20, "text/css", date)
        for k in range(3):
            b.response(base + f"i{k}.png", b"\x89PNG\r\n\x1a\n" + rng.randbytes(3000 + 17 * k), "image/png", date)
    return b.save(path)


def _records(path: Path) -> dict[str, dict[str, object]]:
    """Each response of the WARC by its URI, as warcio reads it: payload, date, record id, payload digest."""
    found: dict[str, dict[str, object]] = {}
    with path.open("rb") as fh:
        for record in ArchiveIterator(fh, check_digests=True):
            if record.rec_type != "response":
                continue
            headers = record.rec_headers
            payload = record.content_stream().read()
            digest = "sha1:" + base64.b32encode(hashlib.sha1(payload).digest()).decode("ascii")
            assert headers.get_header("WARC-Payload-Digest") == digest
            found[headers.get_header("WARC-Target-URI")] = {
                "payload": payload, "date": headers.get_header("WARC-Date"),
                "id": headers.get_header("WARC-Record-ID"), "digest": digest,
                "type": record.http_headers.get_header("Content-Type").split(";")[0],
            }
    return found


def test_each_page_holds_its_records_payloads_and_statements(tmp_path: Path) -> None:
    warc = _warc(tmp_path / "pages.warc.gz")
    records = _records(warc)
    archive = Archive.init(tmp_path / "archive")
    archive.add_series(S)
    done, plan = import_warc(archive, warc, S)
    assert plan.skipped == [] and len(done) == PAGES and all(d.page and not d.unchanged for d in done)
    for d in done:
        page = records[d.url]
        name = PDI.parse(str(d.name))
        day = datetime.datetime.strptime(str(page["date"]), "%Y-%m-%dT%H:%M:%SZ").date()
        assert (".".join(name.series), name.date, name.unique_id, name.format, name.version) == (S, day, d.url, "related", 1)
        got = archive.get(d.name)
        data = got.data
        assert got.media_type == "multipart/related" and hashlib.sha256(data).hexdigest() == got.sha256
        message = email.message_from_bytes(data, policy=email.policy.default)
        assert message.get_content_type() == "multipart/related" and not message.defects
        parts = {}
        for part in message.iter_parts():
            assert not part.defects
            parts[str(part["Content-Location"])] = (part.get_content_type(), part.get_payload(decode=True))
        uses = [d.url, d.url + "s.css", *(d.url + f"i{k}.png" for k in range(3))]
        assert parts == {url: (records[url]["type"], records[url]["payload"]) for url in uses}
        stated = archive.meta(d.name)
        assert stated["warc:date"] == page["date"]
        assert stated["warc:record-id"] == page["id"]
        assert stated["warc:payload-digest"] == page["digest"]
        lines = stated["warc:parts"].split("\n")
        # each part but the page's own record (warc:record-id's): its payload digest, date and URL
        assert sorted(lines) == sorted(f"{records[u]['digest']} {records[u]['date']} {u}" for u in uses[1:])
    assert archive.verify().ok  # every blob read again through its chunk digests
