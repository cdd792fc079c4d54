"""Pass 1 (:func:`pdi.interop.warc.read_index`) reads back what warcio wrote, whatever the headers and payloads.

The oracle is warcio: a WARC is written by warcio's ``WARCWriter`` from
records hypothesis draws (URIs, dates, HTTP status lines and header fields,
payloads, gzip or not, WARC/1.0 or 1.1), and read back twice, by warcio's
``ArchiveIterator`` and by pdi. pdi must count every record, index each
``response`` and ``resource`` of an ``http(s)`` target with the URI, date,
record id, status and digests warcio reads, and keep its payload as written.
"""

from __future__ import annotations

import base64
import datetime
import email.message
import hashlib
import io
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from pdi.interop.warc import read_index, sources_for

_TOKEN = st.text(alphabet="!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                 min_size=1, max_size=12)
#: field values: visible ASCII, spaces and tabs inside (RFC 9110 §5.5), never obs-text, which warcio's writer
#: cannot write (its to_ascii_bytes raises UnicodeEncodeError on some, percent-encodes others)
_VALUE = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.just("\t"),
                 max_size=30).map(str.strip)
#: the fields whose meaning changes how the payload is read (codings), left out of the random ones
_CODINGS = {"content-encoding", "transfer-encoding", "content-type", "location", "content-length"}
_PATH = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/%?", max_size=20)
_MEDIA = st.sampled_from([None, "text/html", "text/html; charset=UTF-8", "Text/Plain;charset=\"iso-8859-1\"",
                          "image/png", "application/octet-stream", "text/css;charset=utf-8;q=1"])


@st.composite
def _records(draw: st.DrawFn) -> dict[str, object]:
    kind = draw(st.sampled_from(["response", "resource", "request", "metadata"]))
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "HTTPS", "dns", "urn"]))
    uri = f"{scheme}://example.org/{draw(_PATH)}" if scheme != "urn" else "urn:x:" + draw(_PATH)
    when = draw(st.datetimes(min_value=datetime.datetime(1000, 1, 1), max_value=datetime.datetime(9999, 12, 30)))
    date = when.strftime("%Y-%m-%dT%H:%M:%S") + (draw(st.sampled_from(["", ".5", ".123456"]))) + "Z"
    fields = draw(st.lists(st.tuples(_TOKEN.filter(lambda n: n.lower() not in _CODINGS), _VALUE), max_size=6))
    return {
        "kind": kind,
        "uri": uri,
        "date": date,
        "status": draw(st.integers(100, 599)),
        "reason": draw(st.sampled_from(["OK", "", "Not Found", "I'm a teapot"])),  # (warcio writes ASCII only)
        "media": draw(_MEDIA),
        "fields": fields,
        "payload": draw(st.binary(max_size=3000)),
    }


def _write(records: list[dict[str, object]], *, gzip: bool, version: str) -> bytes:
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=gzip, warc_version=version)
    for record in records:
        payload = record["payload"]
        assert isinstance(payload, bytes)
        http = None
        kind = record["kind"]
        uri = str(record["uri"])
        media = record["media"]
        if kind in ("response", "request") and uri.lower().startswith("http"):
            fields = list(record["fields"])  # type: ignore[call-overload]
            if media is not None:
                fields.append(("Content-Type", media))
            if kind == "response":
                http = StatusAndHeaders(f"{record['status']} {record['reason']}".strip(), fields, protocol="HTTP/1.1")
            else:
                http = StatusAndHeaders("GET / HTTP/1.1", fields, is_http_request=True)
        written = writer.create_warc_record(
            uri, str(kind), payload=io.BytesIO(payload), length=len(payload), http_headers=http,
            warc_content_type=str(media) if kind == "resource" and media else None,
            warc_headers_dict={"WARC-Date": str(record["date"])})
        writer.write_record(written)
    return out.getvalue()


@settings(max_examples=200, deadline=None)
@given(st.lists(_records(), min_size=1, max_size=5), st.booleans(), st.sampled_from(["WARC/1.0", "WARC/1.1"]))
def test_pass_one_reads_what_warcio_wrote_and_reads(records: list[dict[str, object]], gzip: bool, version: str) -> None:
    raw = _write(records, gzip=gzip, version=version)
    seen = []  # what warcio reads back: (offset, type, headers, HTTP headers, payload as written)
    reader = ArchiveIterator(io.BytesIO(raw))
    # RFC 3986 §3.1: a scheme in any case (warcio's writer writes HTTP headers under HTTP://, its reader takes
    # them only under http: and https:, which it checks with str.startswith against this tuple)
    reader.loader.HTTP_SCHEMES = tuple(s + ":" for s in {"http", "HTTP", "https", "HTTPS"})
    for rec in reader:
        body = rec.raw_stream.read()  # first: get_record_offset reads the record to its end
        seen.append((reader.get_record_offset(), rec.rec_type, rec.rec_headers, rec.http_headers, body))
    assert len(seen) == len(records)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("a.warc.gz" if gzip else "a.warc")
        path.write_bytes(raw)
        index = read_index(sources_for(path), limit=1 << 20)
    assert index.records == len(records)
    usable = [(record, read) for record, read in zip(records, seen, strict=True)
              if record["kind"] in ("response", "resource") and str(record["uri"]).lower().startswith("http")]
    assert len(index.entries) == len(usable)
    for entry, (record, (offset, kind, headers, http, body)) in zip(index.entries, usable, strict=True):
        assert entry.offset == offset
        assert entry.kind == kind == record["kind"]
        assert entry.uri == record["uri"] == headers.get_header("WARC-Target-URI")
        assert entry.record_id == headers.get_header("WARC-Record-ID")
        assert entry.warc_date == record["date"]
        assert entry.date == datetime.datetime.fromisoformat(str(record["date"]))
        assert entry.payload_digest == headers.get_header("WARC-Payload-Digest")
        payload = record["payload"]
        assert isinstance(payload, bytes)
        if kind == "response":
            assert entry.status == record["status"] == int(http.get_statuscode())
            if http.get_header("Content-Type") is not None:
                # the standard library's reading of the Content-Type (RFC 2045 §5.1), the media type lower-cased
                message = email.message.Message()
                message["Content-Type"] = http.get_header("Content-Type")
                assert entry.media_type == message.get_content_type()
                assert (entry.charset or "").lower() == (message.get_param("charset") or "").lower()
            digest_of = body[len(body) - len(payload):]
            assert digest_of == payload
        else:
            assert entry.status == 200
            assert body == payload
        assert entry.size == len(payload)
        assert index.kept[(0, entry.offset)] == payload
        if entry.payload_digest:
            algorithm, _, _ = entry.payload_digest.partition(":")
            assert entry.payload_digest == algorithm + ":" + base64.b32encode(
                hashlib.new(algorithm, payload).digest()).decode()


@pytest.mark.parametrize("gzip", [False, True])
@pytest.mark.parametrize("scheme", ["HTTP", "Https"])
def test_a_target_uri_whose_scheme_is_in_capitals_is_read_with_its_http_headers(
    tmp_path: Path, gzip: bool, scheme: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RFC 3986 §3.1: a scheme is case-insensitive. Found by a hunt: warcio's reader takes a record's HTTP header
    block only under a target URI starting ``http:`` or ``https:`` in lower case (its writer writes one under any),
    so a response to ``HTTP://example.org/`` that warcio wrote was refused as damaged, its HTTP header block read as
    payload (which its payload digest does not match); without a payload digest, its page was dropped unsaid. The
    payload is read whole in pass 1 (kept), by warcio's reader alone, and again in pass 2 (too large to keep)."""
    from pdi.interop.warc import direct, records
    from pdi.interop.warc.entries import KEEP_RECORD

    small, large = b"<p>capitals</p>", random.Random(0).randbytes(KEEP_RECORD + 1)  # (x * n: a gzip bomb)
    raw = _write([{"kind": "response", "uri": f"{scheme}://example.org/{n}", "date": "2024-05-06T10:00:00Z",
                   "status": 200, "reason": "OK", "media": "text/html", "fields": [], "payload": payload}
                  for n, payload in enumerate((small, large))], gzip=gzip, version="WARC/1.1")
    path = tmp_path / ("a.warc.gz" if gzip else "a.warc")
    path.write_bytes(raw)
    for fast in (True, False):
        with monkeypatch.context() as patch:
            if not fast:  # the fast path hands every file over: warcio's reader reads it
                def hand_over(*_args: object, **_kwargs: object) -> None:
                    raise direct.Handover(0)
                patch.setattr(records, "read_plain", hand_over)
            index = read_index(sources_for(path), limit=4 << 20)
        first, second = index.entries
        assert (first.uri, first.status, first.media_type) == (f"{scheme}://example.org/0", 200, "text/html")
        assert index.kept[(0, first.offset)] == small
        assert (second.status, second.size, (0, second.offset) in index.kept) == (200, len(large), False)
        assert b"".join(index.payload_pieces(second)) == large
        assert index.payload(second, limit=4 << 20) == large
