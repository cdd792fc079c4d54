"""Pass 1 reads WARC records written by hand in the forms WARC 1.1 allows, as warcio and the specification read them.

The records are written octet by octet from what hypothesis draws (not by warcio's writer, which writes one form):
field names in any case (§4: "Field names are not case-sensitive"), any linear white space before a value and a
continuation line in an extension's field (§4: "Header fields can be extended over multiple lines by preceding each
extra line with at least one space or tab character"), a ``WARC-Target-URI`` in WARC 1.0's ``<…>`` (the 1.1 note on
its grammar), a ``Content-Length`` with leading zeros (``1*DIGIT``), WARC/1.0 and WARC/1.1, a gzip member a record
(annex D) with empty members between, HTTP payloads chunked and gzip-coded (RFC 9112 §7.1, RFC 9110 §8.4.1; their
names in any case), revisits, and digests in base32, base16 and base64 of SHA-1 and SHA-256 (§5.8, §5.9).

The oracle is twofold: what was drawn (each record's type, target URI, date, payload before its codings), and
warcio's ``ArchiveIterator``, which must read the same records, types, URIs and dates (warcio's reading of payloads
differs where HTTP's names are spelt otherwise than it expects: see test_interop_warc_codings.py).
"""

from __future__ import annotations

import base64
import datetime
import gzip
import hashlib
import io
import tempfile
import zlib
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator

from pdi.interop.warc import read_index, sources_for

_SPACES = st.sampled_from(["", " ", "  ", "\t", " \t "])
_CASES = st.sampled_from([str, str.lower, str.upper])
_PATH = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/%éü中", max_size=15)  # §4: UTF-8 too


def _spell(data: bytes, how: str) -> str:
    if how == "base32":
        return base64.b32encode(data).decode()
    if how == "base32-unpadded":
        return base64.b32encode(data).decode().rstrip("=")
    if how == "base16":
        return data.hex()
    return base64.b64encode(data).decode()


def _chunked(data: bytes, size: int) -> bytes:
    out = b"".join(b"%x\r\n%s\r\n" % (len(data[i:i + size]), data[i:i + size]) for i in range(0, len(data), size))
    return out + b"0\r\n\r\n"


@st.composite
def _records(draw: st.DrawFn, n: int) -> dict[str, Any]:
    kind = draw(st.sampled_from(["response", "resource", "request", "metadata", "revisit"]))
    scheme = draw(st.sampled_from(["http", "https"]))
    uri = f"{scheme}://example.org/{draw(_PATH)}"
    when = draw(st.datetimes(min_value=datetime.datetime(1990, 1, 1), max_value=datetime.datetime(2100, 1, 1)))
    # W3C-DTF's granularities (WARC 1.1 §5.4), each dated by its first instant
    date = draw(st.sampled_from([when.strftime("%Y"), when.strftime("%Y-%m"), when.strftime("%Y-%m-%d"),
                                 when.strftime("%Y-%m-%dT%H:%MZ"), when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                 when.strftime("%Y-%m-%dT%H:%M:%S.5Z"), when.strftime("%Y-%m-%dT%H:%M:%S.123456789Z")]))
    payload = draw(st.binary(max_size=600))
    http = kind in ("response", "request", "revisit")
    coding = draw(st.sampled_from([None, "gzip", "GZip", "x-gzip", "deflate"])) if kind == "response" else None
    chunked = draw(st.sampled_from([None, "chunked", "Chunked"])) if kind == "response" else None
    body = payload
    if coding:
        body = gzip.compress(body) if coding.lower() != "deflate" else zlib.compress(body)
    if chunked:
        body = _chunked(body, draw(st.integers(1, 300)))
    if kind == "revisit":
        body = b""
    if http:
        fields = [("Content-Type", "text/html")]
        if coding:
            fields.append(("Content-Encoding", coding))
        if chunked:
            fields.append(("Transfer-Encoding", chunked))
        first = "GET / HTTP/1.1" if kind == "request" else "HTTP/1.1 200 OK"
        head = (first + "\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields) + "\r\n").encode()
        block = head + body
    else:
        block = body
    digests = []
    algorithm = draw(st.sampled_from(["sha1", "sha256"]))
    how = draw(st.sampled_from(["base32", "base32-unpadded", "base16", "base64"]))
    if kind != "revisit" and draw(st.booleans()):
        digests.append(("WARC-Block-Digest", f"{algorithm}:{_spell(hashlib.new(algorithm, block).digest(), how)}"))
    if (kind == "revisit" or http) and draw(st.booleans()):
        digests.append(("WARC-Payload-Digest", f"{algorithm}:{_spell(hashlib.new(algorithm, body if kind != 'revisit' else payload).digest(), how)}"))
    fields = [("WARC-Type", kind), ("WARC-Record-ID", f"<urn:uuid:00000000-0000-4000-8000-{n:012d}>"),
              ("WARC-Date", date), ("WARC-Target-URI", f"<{uri}>" if draw(st.booleans()) else uri), *digests]
    if kind == "revisit":
        fields += [("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"),
                   ("WARC-Refers-To-Target-URI", uri), ("WARC-Refers-To-Date", date)]
    if kind == "resource":
        fields.append(("Content-Type", "text/plain"))
    elif http:
        fields.append(("Content-Type", f"application/http; msgtype={'request' if kind == 'request' else 'response'}"))
    fields.append(("Content-Length", "0" * draw(st.integers(0, 2)) + str(len(block))))
    if draw(st.booleans()):
        fields.append(("X-Crawler-Note", "one line\r\n" + draw(st.sampled_from([" ", "\t", "  "])) + "and another"))
    order = draw(st.permutations(range(len(fields))))
    version = draw(st.sampled_from(["WARC/1.0", "WARC/1.1"]))
    head = version + "\r\n" + "".join(
        f"{draw(_CASES)(fields[i][0])}:{draw(_SPACES)}{fields[i][1]}\r\n" for i in order) + "\r\n"
    return {"kind": kind, "uri": uri, "date": date, "payload": payload,
            "raw": head.encode() + block + b"\r\n\r\n"}


@st.composite
def _files(draw: st.DrawFn) -> tuple[list[dict[str, Any]], bytes, bool]:
    count = draw(st.integers(1, 4))
    records = [draw(_records(n)) for n in range(count)]
    gzipped = draw(st.booleans())
    if not gzipped:
        return records, b"".join(r["raw"] for r in records), False
    out = b""
    for record in records:
        if draw(st.integers(0, 4)) == 0:
            out += gzip.compress(b"")  # an empty member between records: no record
        out += gzip.compress(record["raw"])
    return records, out, True


@settings(max_examples=150, deadline=None)
@given(_files())
def test_pass_one_reads_records_in_every_form_the_specification_allows(drawn: tuple[list[dict[str, Any]], bytes, bool]) -> None:
    records, raw, gzipped = drawn
    read = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.rec_headers.get_header("WARC-Date"))
            for r in ArchiveIterator(io.BytesIO(raw))]
    assert read == [(r["kind"], r["uri"], r["date"]) for r in records]  # warcio reads what was written
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("a.warc.gz" if gzipped else "a.warc")
        path.write_bytes(raw)
        index = read_index(sources_for(path), limit=1 << 20)
    assert index.records == len(records)
    usable = [r for r in records if r["kind"] in ("response", "resource", "revisit")]
    assert [(e.kind, e.uri, e.warc_date) for e in index.entries] == [(r["kind"], r["uri"], r["date"]) for r in usable]
    for entry, record in zip(index.entries, usable, strict=True):
        date = record["date"].replace(".123456789", ".123456")  # (a datetime holds microseconds)
        date += "-01" * (3 - len(date.split("-"))) if len(date) < 10 else ""
        first = datetime.datetime.fromisoformat(date)
        assert entry.date == (first if first.tzinfo else first.replace(tzinfo=datetime.UTC))
        if record["kind"] != "revisit":
            assert index.kept[(0, entry.offset)] == record["payload"]
            assert entry.status == 200
