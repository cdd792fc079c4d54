"""Pass 1's fast path (:mod:`pdi.interop.warc.direct`) reads what warcio reads, and gives what warcio's reading gives.

Each file is indexed twice: as an import reads it (plain records by the fast
path, the rest by warcio) and by warcio alone (the fast path handing every
file over at its start). The two must give the same index (entries, kept
payloads, record count) or the same error, for files warcio writes, files
with records the fast path hands over (continuation lines, base16 digests,
codings, bare LFs, ``<…>`` targets), and those files damaged at offsets
hypothesis picks.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import hashlib
import io
import random
import tempfile
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warc_builder import DATA, WarcBuilder, sha1_digest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from pdi.errors import PDIError
from pdi.interop.warc import ReadLimits, direct, read_index, records, sources_for
from pdi.interop.warc.entries import Entry

DATE = "2024-05-06T10:00:00Z"


def _index(path: Path, *, fast: bool, monkeypatch: pytest.MonkeyPatch, bounds: ReadLimits | None = None) -> object:
    """What pass 1 makes of ``path`` (entries, kept payloads, records, dropped), or its error's text."""
    with monkeypatch.context() as patch:
        if not fast:
            def hand_over(*_args: object, **_kwargs: object) -> None:
                raise direct.Handover(0)
            patch.setattr(records, "read_plain", hand_over)
        try:
            index = read_index(sources_for(path), limit=1 << 20, bounds=bounds)
        except PDIError as exc:
            return f"{type(exc).__name__}: {exc}"
        return index.entries, index.kept, index.records, index.dropped, index.by_key, index.by_digest


def _same(path: Path, monkeypatch: pytest.MonkeyPatch, bounds: ReadLimits | None = None) -> object:
    ours = _index(path, fast=True, monkeypatch=monkeypatch, bounds=bounds)
    assert ours == _index(path, fast=False, monkeypatch=monkeypatch, bounds=bounds)
    return ours


def _site(compressed: bool) -> bytes:
    """A page, its parts, a revisit, a redirect, a lone resource, a request, a metadata record and a DNS one."""
    b = WarcBuilder(gzip=compressed)
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
    b.response("http://example.org/", b'<html><img src="a.png"><link rel=stylesheet href=s.css></html>',
               "text/html; charset=utf-8", DATE)
    b.response("http://example.org/a.png", png, "image/png", DATE)
    b.response("http://example.org/s.css", b"p { color: red }", "text/css", DATE)
    b.revisit("http://example.org/a.png", sha1_digest(png), "http://example.org/a.png", DATE, "2024-05-07T10:00:00Z")
    b.response("http://example.org/old", b"", None, DATE, status="301 Moved Permanently",
               headers=(("Location", "/"),))
    writer = b.writer
    writer.write_record(writer.create_warc_record("http://example.org/r.txt", "resource",
                                                  payload=io.BytesIO(b"a resource\n"), length=11,
                                                  warc_content_type="text/plain",
                                                  warc_headers_dict={"WARC-Date": DATE}))
    request = StatusAndHeaders("GET / HTTP/1.1", [("Host", "example.org")], is_http_request=True)
    writer.write_record(writer.create_warc_record("http://example.org/", "request", payload=io.BytesIO(b""),
                                                  length=0, http_headers=request,
                                                  warc_headers_dict={"WARC-Date": DATE}))
    writer.write_record(writer.create_warc_record("metadata:x", "metadata", payload=io.BytesIO(b"via: x\r\n"),
                                                  length=8, warc_headers_dict={"WARC-Date": DATE}))
    writer.write_record(writer.create_warc_record("dns:example.org", "response", payload=io.BytesIO(b"1.2.3.4"),
                                                  length=7, warc_content_type="text/dns",
                                                  warc_headers_dict={"WARC-Date": DATE}))
    return b.out.getvalue()


def _coded(compressed: bool) -> bytes:
    """Responses whose payloads are gzip and chunked (warcio's readers undo them, the fast path's too)."""
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=compressed, warc_version="WARC/1.1")
    body = b"<html><p>coded</p></html>" * 20
    zipped = gzip.compress(body)
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(zipped), zipped)
    for url, payload, fields in (
        ("http://example.org/gz", zipped, [("Content-Encoding", "gzip")]),
        ("http://example.org/chunked", chunked, [("Content-Encoding", "GZIP"), ("Transfer-Encoding", "chunked")]),
    ):
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), *fields], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(payload),
                                                      length=len(payload), http_headers=http,
                                                      warc_headers_dict={"WARC-Date": DATE}))
    return out.getvalue()


def _record(warc_fields: list[bytes], block: bytes) -> bytes:
    """A record written by hand (what warcio's writer will not write: the fast path hands these over)."""
    return (b"WARC/1.1\r\n" + b"\r\n".join(warc_fields) + b"\r\nContent-Length: %d\r\n\r\n" % len(block)
            + block + b"\r\n\r\n")


def _odd() -> list[bytes]:
    """Records the fast path leaves to warcio, each a file of its own (uncompressed)."""
    body = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nodd text\n"
    payload = body.split(b"\r\n\r\n", 1)[1]
    sha1 = hashlib.sha1(payload).digest()
    common = [b"WARC-Type: response", b"WARC-Date: " + DATE.encode(), b"WARC-Record-ID: <urn:uuid:1>"]
    return [
        _record([*common, b"WARC-Target-URI: <http://example.org/wget>"], body),
        _record([*common, b"WARC-Target-URI: http://example.org/a b"], body),
        _record([*common, b"WARC-Target-URI: http://example.org/",
                 b"WARC-Payload-Digest: sha1:" + base64.b16encode(sha1)], body),
        _record([*common, b"WARC-Target-URI: http://example.org/",
                 b"WARC-Payload-Digest: sha1:" + base64.b64encode(sha1)], body),
        _record([*common, b"WARC-Target-URI: http://example.org/",
                 b"WARC-Payload-Digest: sha1:" + base64.b32encode(hashlib.sha1(b"other").digest())], body),
        _record([*common, b"WARC-Target-URI: http://example.org/a b", b"WARC-Target-URI: http://example.org/c d"],
                body),
        _record([*common, b"WARC-Target-URI: http://example.org/", b"X-Folded: a", b"  b"], body),
        _record([*common, b"WARC-Target-URI: http://example.org/", b"X-Latin: caf\xe9"], body),
        _record([*common, b"WARC-Target-URI: http://example.org/", b"X-Bare: a\nb"], body),
        _record([*common, b"WARC-Target-URI: http://example.org/"],
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n X-Folded: b\r\n\r\nodd\n"),
        _record([*common, b"WARC-Target-URI: http://example.org/"], b"HTTP/1.1 OK\r\n\r\nno status\n"),
        _record([*common, b"WARC-Target-URI: http://example.org/", b"WARC-Date: 2024-13-40T00:00:00Z"], body)
        .replace(b"WARC-Date: " + DATE.encode() + b"\r\n", b""),
        _record([*common, b"WARC-Target-URI: http://example.org/"], body).replace(b"WARC/1.1", b"WARC/1.0 "),
        _record([*common, b"WARC-Target-URI: http://example.org/"], body).replace(b"Content-Length: ",
                                                                                 b"Content-Length: +"),
        _record([*common, b"WARC-Target-URI: http://example.org/"], body)[:-2] + b"\n\n",
    ]


def _gzip_each(raw_records: list[bytes]) -> bytes:
    return b"".join(gzip.compress(r) for r in raw_records)


@pytest.mark.parametrize("compressed", [True, False])
def test_a_plain_file_is_read_by_the_fast_path_alone_and_gives_what_warcio_gives(
    compressed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / ("a.warc.gz" if compressed else "a.warc")
    path.write_bytes(_site(compressed) + _coded(compressed))
    index = _same(path, monkeypatch)
    assert not isinstance(index, str)
    entries, kept, count, *_ = index
    assert count == 12 and len(entries) == 8 and len(kept) == 7  # the revisit keeps no payload
    coded = {e.uri: kept[(e.source, e.offset)] for e in entries if e.uri.endswith(("/gz", "/chunked"))}
    assert coded == {"http://example.org/gz": b"<html><p>coded</p></html>" * 20,
                     "http://example.org/chunked": b"<html><p>coded</p></html>" * 20}

    def no_warcio(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("warcio was asked to read a plain file")

    monkeypatch.setattr(records, "BoundedIterator", no_warcio)
    assert _index(path, fast=True, monkeypatch=monkeypatch) == index


@pytest.mark.parametrize("name", ["site.warc.gz", "site.wacz", "wget.warc.gz", "wget-plain.warc"])
def test_the_corpus_is_read_by_the_fast_path_alone_and_gives_what_warcio_gives(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files other tools wrote (tests/data/warc/README.md): warcio's recorder, py-wacz, GNU Wget."""
    index = _same(DATA / name, monkeypatch)
    assert not isinstance(index, str) and index[0]

    def no_warcio(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("warcio was asked to read a plain file")

    monkeypatch.setattr(records, "BoundedIterator", no_warcio)
    assert _index(DATA / name, fast=True, monkeypatch=monkeypatch) == index


@pytest.mark.parametrize("number", range(len(_odd())))
@pytest.mark.parametrize("compressed", [True, False])
def test_a_record_the_fast_path_leaves_to_warcio_gives_what_warcio_gives(
    number: int, compressed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _site(compressed)
    odd = _odd()[number]
    path = tmp_path / ("a.warc.gz" if compressed else "a.warc")
    path.write_bytes(site + (_gzip_each([odd]) if compressed else odd) + _coded(compressed))
    _same(path, monkeypatch)


def test_a_gzip_member_of_two_records_gives_what_warcio_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.warc.gz"
    path.write_bytes(_site(True) + gzip.compress(_site(False)))
    assert isinstance(_same(path, monkeypatch), str)


def test_a_member_of_zeros_is_refused_as_warcio_refuses_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deflate = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    bomb = deflate.compress(_record([b"WARC-Type: resource", b"WARC-Target-URI: http://example.org/z",
                                     b"WARC-Date: " + DATE.encode()], b"\0" * (40 << 20))) + deflate.flush()
    path = tmp_path / "a.warc.gz"
    path.write_bytes(_site(True) + bomb)
    assert "decompresses to more than" in str(_same(path, monkeypatch))


@pytest.mark.parametrize("compressed", [True, False])
def test_header_bounds_near_a_record_s_own_give_what_warcio_gives(
    compressed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / ("a.warc.gz" if compressed else "a.warc")
    path.write_bytes(WHOLE[compressed])
    outcomes = set()
    for lines in range(8, 30):
        outcomes.add(isinstance(_same(path, monkeypatch, ReadLimits(max_header_lines=lines)), str))
    for size in range(300, 800, 20):
        outcomes.add(isinstance(_same(path, monkeypatch, ReadLimits(max_header_bytes=size)), str))
        outcomes.add(isinstance(_same(path, monkeypatch, ReadLimits(max_line_bytes=size // 4)), str))
    assert outcomes == {True, False}  # refused under the tighter bounds, read under the looser


#: the files damaged below, made once (their record ids are random: hypothesis replays its examples)
WHOLE = {compressed: _site(compressed) + _coded(compressed) for compressed in (True, False)}


@pytest.mark.parametrize("lead", [1 << 20, 10 << 20])
def test_a_member_whose_first_octets_expand_past_the_bound_is_refused_as_warcio_refuses_it(
    lead: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Zeros, then random octets: the member as a whole is within the bound, its first blocks are not."""
    body = b"\0" * lead + random.Random(lead).randbytes(1 << 20)
    record = _record([b"WARC-Type: resource", b"WARC-Target-URI: http://example.org/z", b"WARC-Date: " + DATE.encode(),
                      b"WARC-Block-Digest: sha1:" + base64.b32encode(hashlib.sha1(body).digest())], body)
    deflate = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    path = tmp_path / "a.warc.gz"
    path.write_bytes(_site(True) + deflate.compress(record) + deflate.flush() + _coded(True))
    _same(path, monkeypatch)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(compressed=st.booleans(), data=st.data())
def test_a_damaged_file_gives_what_warcio_gives(
    compressed: bool, data: st.DataObject, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = bytearray(WHOLE[compressed])
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(1, len(raw)))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("a.warc.gz" if compressed else "a.warc")
        path.write_bytes(bytes(raw[:cut]))
        _same(path, monkeypatch)


@pytest.mark.parametrize("status", ["²00 OK".encode(), b"9" * 5000 + b" OK", b"99999 OK", b"20 OK", b"2000 OK"])
@pytest.mark.parametrize("compressed", [False, True])
def test_a_status_code_that_is_not_three_ascii_digits_is_a_damaged_record_named_so(
    tmp_path: Path, status: bytes, compressed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # RFC 9112 §4: status-code = 3DIGIT. '²00' is digits to str.isdigit, not to int() ("invalid literal" was the
    # message); 5,000 digits passed int()'s limit; 99999 was taken for a status and its page dropped unsaid.
    http = b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html\r\n\r\n<p>hi</p>"
    record = _record([b"WARC-Type: response", b"WARC-Record-ID: <urn:uuid:12345678-1234-1234-1234-123456789abc>",
                      b"WARC-Date: 2020-01-01T00:00:00Z", b"WARC-Target-URI: http://example.org/",
                      b"Content-Type: application/http; msgtype=response",
                      b"WARC-Block-Digest: " + sha1_digest(http).encode()], http)
    path = tmp_path / ("a.warc.gz" if compressed else "a.warc")
    path.write_bytes(_gzip_each([record]) if compressed else record)
    said = _same(path, monkeypatch)
    assert isinstance(said, str) and said.startswith("ParseError: "), said
    assert "(http://example.org/) is damaged: its HTTP status line is " in said, said
    assert ": its status code is not three digits (RFC 9112 §4)" in said, said
    assert "int()" not in said and "invalid literal" not in said


@pytest.mark.parametrize("compressed", [True, False])
def test_an_entry_is_the_dataclass_its_fields_make(compressed: bool, tmp_path: Path) -> None:
    """Pass 1 makes each index entry without the frozen dataclass's ``__init__`` (issue 24): each is the value
    ``Entry`` makes of its fields, every field set, frozen, hashed and shown alike."""
    path = tmp_path / ("a.warc.gz" if compressed else "a.warc")
    path.write_bytes(_site(compressed) + _coded(compressed))
    entries = read_index(sources_for(path), limit=1 << 20).entries
    assert len(entries) == 8
    names = [field.name for field in dataclasses.fields(Entry)]
    for entry in entries:
        assert list(vars(entry)) == names
        made = Entry(**vars(entry))
        assert entry == made and hash(entry) == hash(made) and repr(entry) == repr(made)
        with pytest.raises(dataclasses.FrozenInstanceError):
            entry.uri = "http://example.org/other"  # type: ignore[misc]


#: HTTP header lines: fields, lines without a colon (RFC 9112 §5: field-line = field-name ":" OWS field-value OWS;
#: these are none), a field name holding a space, a continuation line (obs-fold)
_HTTP_LINES = ["Content-Type: text/html", "Content-Type: text/plain", "X-Broken-Line", "Content-Type text/css",
               "nocolon here", "X Spaced: a", " folded", "Location: /x"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.sampled_from(_HTTP_LINES), max_size=5), compressed=st.booleans())
def test_an_http_header_line_without_a_colon_is_dropped_as_warcio_drops_it(
    lines: list[str], compressed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """warcio's ``StatusAndHeadersParser`` (and pywb, which reads by it) drops an HTTP header line with no colon, with
    the continuation lines after it, and reads the fields around it; the import reads the response so, by the fast
    path alone when no other line is odd, by warcio's reader otherwise, the two alike."""
    payload = b"<p>hi</p>"
    http = ("HTTP/1.1 200 OK\r\n" + "".join(line + "\r\n" for line in lines) + "\r\n").encode() + payload
    record = _record([b"WARC-Type: response", b"WARC-Record-ID: <urn:uuid:12345678-1234-1234-1234-123456789abc>",
                      b"WARC-Date: " + DATE.encode(), b"WARC-Target-URI: http://example.org/broken",
                      b"WARC-Block-Digest: " + sha1_digest(http).encode()], http)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("a.warc.gz" if compressed else "a.warc")
        path.write_bytes(_site(compressed) + (_gzip_each([record]) if compressed else record))
        with path.open("rb") as fh:  # the oracle: warcio's own reading of the response's fields
            told = [r.http_headers for r in ArchiveIterator(fh) if r.rec_headers.get_header("WARC-Target-URI")
                    == "http://example.org/broken"]
        index = _same(path, monkeypatch)
        assert not isinstance(index, str), index
        entries, kept, *_ = index
        [entry] = [e for e in entries if e.uri == "http://example.org/broken"]
        written = told[0].get_header("Content-Type")
        assert entry.media_type == (written.split(";")[0].strip() if written else None)
        assert kept[(entry.source, entry.offset)] == payload
        odd = any(line.startswith(" ") or " " in line.partition(":")[0] for line in lines if ":" in line or
                  line.startswith(" "))  # a continuation line, a field name with a space: the fast path hands over
        if not odd:
            def no_warcio(*_args: object, **_kwargs: object) -> None:
                raise AssertionError("warcio was asked to read a file the fast path reads")

            with monkeypatch.context() as patch:
                patch.setattr(records, "BoundedIterator", no_warcio)
                assert _index(path, fast=True, monkeypatch=monkeypatch) == index
