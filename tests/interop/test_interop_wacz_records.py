"""The WARC records and CDXJ lines an export writes itself are warcio's and cdxj-indexer's, octet for octet.

:class:`pdi.interop.wacz._Writer` serializes a record of plain values
(printable ASCII) itself and makes its CDXJ line from the values at hand;
any other record goes through warcio and cdxj-indexer. Whichever way, each
gzip member must hold what warcio's own ``WARCWriter`` writes for the same
response, revisit or redirect (the record ids aside: random UUIDs, each of
version 4 and none twice), warcio
must read the file with every digest checked, and the index must be the
lines ``cdxj-indexer`` makes reading the file back.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import tempfile
import uuid
import zlib
from pathlib import Path

from cdxj_indexer.main import CDXJIndexer
from hypothesis import given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from pdi.interop.wacz import _Writer

_ID = re.compile(rb"WARC-Record-ID: <urn:uuid:[0-9a-f-]{36}>\r\n")

#: Some URLs warcio writes as they are, some with octets beyond ASCII (written as UTF-8) or a control character.
URLS = [
    "http://example.org/", "http://example.org/a.png", "https://example.org/s.css?v=1&x=%20",
    "http://example.org/p/q;r?s#t", "http://bücher.example/é.png", "http://example.org/tab\there",
    "http://EXAMPLE.org:8080/Index.HTML",
]
MEDIA = [("text/html", "utf-8"), ("image/png", None), ("text/css", None), ("text/plain;x=y", None),
         ("application/pdf", None), ("text/html", "iso-8859-1"), ("image/jpeg", "é")]
DATES = ["2024-05-06T10:00:00Z", "2024-05-06T10:00:00.123456Z", "1999-12-31T23:59:59Z"]
DATA = [b"", b"hello", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 300, b"<html>" + b"x" * 70_000 + b"</html>"]


def _digest(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def _warcio(ops: list[tuple[object, ...]]) -> list[bytes]:
    """Each record as warcio's own writer serializes it (uncompressed), from the same values."""
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=False, warc_version="WARC/1.1")
    written: dict[tuple[str, str], tuple[str, str]] = {}
    records: list[bytes] = []
    for op in ops:
        out.seek(0)
        out.truncate()
        if op[0] == "redirect":
            _, url, target, date = op
            headers = StatusAndHeaders("302 Found", [("Location", target), ("Content-Length", "0")], protocol="HTTP/1.1")
            record = writer.create_warc_record(url, "response", payload=io.BytesIO(b""), length=0,
                                               http_headers=headers, warc_headers_dict={"WARC-Date": date})
        else:
            _, url, date, (media, charset), data, extra = op
            kind = f"{media}; charset={charset}" if charset else media
            headers = StatusAndHeaders("200 OK", [("Content-Type", kind), ("Content-Length", str(len(data)))],
                                       protocol="HTTP/1.1")
            digest = _digest(data)
            fields = {"WARC-Date": date, **(extra or {})}
            first = written.get((url, digest))
            if first is not None:
                record = writer.create_revisit_record(url, digest, first[0], first[1], http_headers=headers,
                                                      warc_headers_dict=fields)
            else:
                written[(url, digest)] = (url, date)
                record = writer.create_warc_record(url, "response", payload=io.BytesIO(data), length=len(data),
                                                   http_headers=headers,
                                                   warc_headers_dict={**fields, "WARC-Payload-Digest": digest})
        writer.write_record(record)
        records.append(_ID.sub(b"", out.getvalue()))
    return records


def _members(warc: bytes) -> list[bytes]:
    """The file's gzip members, each decompressed on its own."""
    members = []
    while warc:
        member = zlib.decompressobj(zlib.MAX_WBITS + 16)
        members.append(member.decompress(warc))
        assert member.eof
        warc = member.unused_data
    return members


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("response"), st.sampled_from(URLS), st.sampled_from(DATES), st.sampled_from(MEDIA),
                  st.sampled_from(DATA), st.sampled_from([None, {"PDI": "urn:pdi://web.example.us/2024/05/06/x"}])),
        st.tuples(st.just("redirect"), st.sampled_from(URLS), st.sampled_from(URLS), st.sampled_from(DATES)),
    ),
    min_size=1, max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(ops=OPS)
def test_each_record_is_what_warcio_writes_and_the_index_what_cdxj_indexer_reads(ops: list[tuple[object, ...]]) -> None:
    _check_records(ops)


@settings(max_examples=100, deadline=None)
@given(ops=OPS, held=st.integers(0, 3))
def test_revisits_refer_to_the_first_record_after_the_payloads_written_move_to_their_scratch_file(
    ops: list[tuple[object, ...]], held: int,
) -> None:
    # a few (URL, payload digest) pairs held in memory, then all of them in the SQLite file: revisits either side
    from pdi.interop import wacz_index

    saved = wacz_index._WRITTEN_HELD
    wacz_index._WRITTEN_HELD = held
    try:
        _check_records(ops)
    finally:
        wacz_index._WRITTEN_HELD = saved


def _check_records(ops: list[tuple[object, ...]]) -> None:
    out, index = io.BytesIO(), io.StringIO()
    with tempfile.TemporaryDirectory() as work:
        writer = _Writer(out, index, work=Path(work))
        for op in ops:
            if op[0] == "redirect":
                writer.redirect(*op[1:])  # type: ignore[arg-type]
            else:
                _, url, date, (media, charset), data, extra = op
                writer.response(url, date, media, charset, data, extra)  # type: ignore[arg-type]
        assert writer.index is not None
        writer.index.finish()
        writer.written.close()
    assert writer.records == len(ops)
    warc = out.getvalue()
    members = _members(warc)
    assert members[0].startswith(b"WARC/1.1\r\nWARC-Type: warcinfo\r\n")
    assert [_ID.sub(b"", m) for m in members[1:]] == _warcio(ops)
    # each record's id a URN of a random UUID (RFC 9562 §5.4: version 4, its variant), none twice
    ids = [uuid.UUID(found.decode()) for m in members for found in re.findall(rb"WARC-Record-ID: <urn:uuid:([^>]*)>", m)]
    assert len(ids) == len(members) == len(set(ids))
    assert all(i.version == 4 and i.variant == uuid.RFC_4122 for i in ids)
    # warcio reads every record back, each digest checked
    read = [r.rec_type for r in ArchiveIterator(io.BytesIO(warc), check_digests="raise")]
    assert len(read) == len(ops) + 1
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "data.warc.gz"
        path.write_bytes(warc)
        theirs = Path(work) / "theirs.cdxj"
        CDXJIndexer(output=str(theirs), inputs=[str(path)], sort=True, post_append=True).process_all()
        assert index.getvalue() == theirs.read_text(encoding="utf-8")


_LINES = st.lists(st.text(st.sampled_from("ab é,{}\"0"), max_size=12).map(lambda t: t + "\n"), max_size=300)


@settings(max_examples=150, deadline=None)
@given(lines=_LINES, held=st.integers(1, 64), at_once=st.integers(2, 5))
def test_the_index_is_sorted_as_cdxj_indexers_sorting_writer_sorts_it_with_bounded_memory(
    lines: list[str], held: int, at_once: int,
) -> None:
    # a few octets held and a few files merged at once: spills, and merges of merges, on small inputs
    from cdxj_indexer.main import SortingWriter

    from pdi.interop import wacz_index

    expected = io.StringIO()
    theirs = SortingWriter(expected, max_sort_buff_size=held)
    for line in lines:
        theirs.write(line)
    theirs.flush()
    got = io.StringIO()
    with tempfile.TemporaryDirectory() as work:
        saved = wacz_index._SORT_OCTETS, wacz_index._MERGE_AT_ONCE
        wacz_index._SORT_OCTETS, wacz_index._MERGE_AT_ONCE = held, at_once
        try:
            ours = wacz_index.SortedLines(got, Path(work))
            for line in lines:
                ours.write(line)
            ours.flush()
        finally:
            wacz_index._SORT_OCTETS, wacz_index._MERGE_AT_ONCE = saved
        assert list(Path(work).iterdir()) == []  # every spill file merged and removed
    assert got.getvalue() == expected.getvalue()
    assert got.getvalue().splitlines(keepends=True) == sorted(set(lines))


_PAIRS = st.lists(st.tuples(st.sampled_from(URLS[:3]), st.sampled_from(["sha1:A", "sha1:B", "sha1:C"]),
                            st.sampled_from(DATES)), max_size=30)


@settings(max_examples=200, deadline=None)
@given(pairs=_PAIRS, held=st.integers(0, 5))
def test_the_payloads_written_are_kept_in_memory_up_to_a_bound_then_in_a_sqlite_file(
    pairs: list[tuple[str, str, str]], held: int,
) -> None:
    # the first date of each (URL, digest), as a dict would keep it; the scratch file made only past ``held`` pairs
    from pdi.interop import wacz_index

    model: dict[tuple[str, str], str] = {}
    with tempfile.TemporaryDirectory() as work:
        written = wacz_index.Written(Path(work), held=held)
        try:
            for url, digest, date in pairs:
                assert written.first(url, digest, date) == model.get((url, digest))
                model.setdefault((url, digest), date)
                assert (Path(work) / "written.sqlite").exists() == (len(model) > held)
        finally:
            written.close()
