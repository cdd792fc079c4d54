"""A record's payload codings undone within bounds (pdi.interop.warc.coding): what warcio gives for a payload in good
order, and for a bomb or a lie a bounded piece at a time or an error naming the record.

warcio read a chunk whole and decompressed a chunk or a 16 KiB block in one call with no output bound: 12 KB of
``Content-Encoding: br`` peaked at 1.9 GB in `pdi import`, a 1 MB chunk of gzip at a gigabyte. The chunked framing
here is written by hand from RFC 9112 §7.1 (it is that simple); the codings by the standard library and brotli.
"""

from __future__ import annotations

import gzip
import io
import random
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any

import brotli  # type: ignore[import-untyped,import-not-found,unused-ignore]  # brotlipy (dev.lock)
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from warc_builder import WarcBuilder, everything, parts_of
from warcio.bufferedreaders import BufferedReader, ChunkedDataReader
from warcio.statusandheaders import StatusAndHeaders

from pdi.archive import Archive
from pdi.errors import ParseError
from pdi.interop.warc import import_warc
from pdi.interop.warc.coding import DecodingError, decoded, decodes
from peak_memory import run_with_peak

S = "web.example.us"
DATE = "2024-05-06T10:00:00Z"
#: a child `pdi import` peaks near 60 MiB (Python and pdi's imports); the bombs below peaked at 1 to 2 GB
PEAK_MIB = 160


def _http(coding: str | None = None, chunked: bool = False) -> StatusAndHeaders:
    fields = [("Content-Type", "text/plain")]
    if coding:
        fields.append(("Content-Encoding", coding))
    if chunked:
        fields.append(("Transfer-Encoding", "chunked"))
    return StatusAndHeaders("200 OK", fields, protocol="HTTP/1.1")


def _chunked(data: bytes, sizes: list[int], extension: bytes = b"", trailer: bytes = b"") -> bytes:
    """``data`` in the chunked transfer coding (RFC 9112 §7.1): chunks of ``sizes`` (cycled), the last chunk, a
    trailer and the closing CRLF."""
    out = io.BytesIO()
    at = 0
    k = 0
    while at < len(data):
        size = max(1, sizes[k % len(sizes)])
        piece = data[at:at + size]
        out.write(b"%x%s\r\n%s\r\n" % (len(piece), extension, piece))
        at += size
        k += 1
    out.write(b"0\r\n" + trailer + b"\r\n")
    return out.getvalue()


def _coded(data: bytes, coding: str | None) -> bytes:
    if coding == "gzip":
        return gzip.compress(data)
    if coding == "deflate":
        return zlib.compress(data)
    if coding == "deflate-raw":
        c = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        return c.compress(data) + c.flush()
    if coding == "br":
        return brotli.compress(data)
    return data


def _read(stream: io.RawIOBase | io.BufferedIOBase | object, step: int = 1000) -> bytes:
    pieces = []
    while piece := stream.read(step):  # type: ignore[attr-defined]
        pieces.append(piece)
    return b"".join(pieces)


CODINGS = [None, "gzip", "deflate", "deflate-raw", "br"]


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=3000), coding=st.sampled_from(CODINGS), chunked=st.booleans(),
       sizes=st.lists(st.integers(1, 700), min_size=1, max_size=5), step=st.integers(1, 5000))
def test_a_payload_in_good_order_decodes_as_it_was_and_as_warcio_decodes_it(
    data: bytes, coding: str | None, chunked: bool, sizes: list[int], step: int,
) -> None:
    body = _coded(data, coding)
    if chunked:
        body = _chunked(body, sizes)
    said = "deflate" if coding == "deflate-raw" else coding
    got = _read(decoded(io.BytesIO(body), _http(said, chunked)), step)
    assert got == data
    # warcio's own readers, which give the same for a payload in good order (but raw deflate in chunks: warcio
    # tries the zlib format on the first chunk alone and raw deflate on the next alone, losing the first)
    if chunked and coding == "deflate-raw":
        return
    if chunked:
        theirs = ChunkedDataReader(io.BytesIO(body), decomp_type=said)
    elif said:
        theirs = BufferedReader(io.BytesIO(body), decomp_type=said)
    else:
        theirs = io.BytesIO(body)
    assert _read(theirs) == got


@settings(max_examples=100, deadline=None)
@given(body=st.binary(max_size=2000), coding=st.sampled_from(CODINGS), chunked=st.booleans())
def test_any_payload_decodes_or_fails_with_a_decoding_error(body: bytes, coding: str | None, chunked: bool) -> None:
    said = "deflate" if coding == "deflate-raw" else coding
    try:
        _read(decoded(io.BytesIO(body), _http(said, chunked)))
    except DecodingError:
        pass


def test_a_payload_not_chunked_or_not_coded_as_its_headers_say_is_read_as_it_is() -> None:
    """A server's mislabel: a payload whose first line is no chunk size line, or that its coding cannot undo from
    its start, is read as it is (as warcio reads it)."""
    text = b"plain text, no chunks\r\nand no coding"
    for coding in ("gzip", "deflate", "br"):
        assert _read(decoded(io.BytesIO(text), _http(coding, True))) == text
        assert _read(decoded(io.BytesIO(text), _http(coding))) == text
        assert _read(ChunkedDataReader(io.BytesIO(text), decomp_type=coding)) == text
    # a coding pdi does not undo, and a Transfer-Encoding other than exactly "chunked": as it is, as warcio
    assert _read(decoded(io.BytesIO(b"abc"), _http("compress"))) == b"abc"
    assert _read(decoded(io.BytesIO(b"3\r\nabc\r\n0\r\n\r\n"), _http(None, False))) == b"3\r\nabc\r\n0\r\n\r\n"


def test_chunk_extensions_and_trailer_fields_are_not_payload() -> None:
    """RFC 9112 §7.1.1 and §7.1.2: ``;name=value`` after a size and fields after the last chunk are framing
    (warcio gave a trailer's octets as if they were payload)."""
    body = _chunked(b"hello world", [4], extension=b";ext=1", trailer=b"Expires: never\r\nX-A: b\r\n")
    assert _read(decoded(io.BytesIO(body), _http(None, True))) == b"hello world"


@pytest.mark.parametrize(("body", "words"), [
    (b"3\r\nabcXY0\r\n\r\n", "chunk 1, of 3 octets, is not followed by CRLF at octet 6 of the payload"),
    (b"3\r\nabc\r\nzz\r\nabc\r\n0\r\n\r\n", "chunk 2, at octet 8 of the payload, does not begin with a chunk size"),
    (b"3\r\nabc\r\n-1\r\n", "chunk 2, at octet 8 of the payload, does not begin with a chunk size"),
    (b"3\r\nabc\r\n0\r\n" + b"X: y\r\n" * 200, "more than 100 lines"),
])
def test_a_chunked_payload_that_lies_past_its_first_chunk_is_a_decoding_error(body: bytes, words: str) -> None:
    with pytest.raises(DecodingError, match=words):
        _read(decoded(io.BytesIO(body), _http(None, True)))


def test_a_coded_stream_broken_past_its_start_is_a_decoding_error() -> None:
    good = gzip.compress(random.Random(1).randbytes(200_000))
    broken = good[:100_000] + bytes(b ^ 0x55 for b in good[100_000:])
    with pytest.raises(DecodingError, match="its Content-Encoding gzip cannot be undone past octet"):
        _read(decoded(io.BytesIO(broken), _http("gzip")))


def test_a_chunked_payload_that_lies_is_refused_naming_the_record(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        b = WarcBuilder()
        b.response("http://example.org/a.txt", b"fine", "text/plain", DATE)
        bad = b.response("http://example.org/b.txt", b"3\r\nabcXY0\r\n\r\n", "text/plain", DATE,
                         headers=(("Transfer-Encoding", "chunked"),))
        with pytest.raises(ParseError, match=(
                rf"^a\.warc\.gz: the record at offset {bad} \(http://example\.org/b\.txt\): its payload cannot be"
                " decoded: its chunked transfer coding is broken: chunk 1, of 3 octets, is not followed by CRLF")):
            import_warc(archive, b.save(tmp_path / "a.warc.gz"), S)
        assert list(archive.iter_records(S)) == []  # nothing deposited, not even the good record before it


# --- a damaged payload: refused as a damaged record, never a part of the page or its framing ---------------


def _gzip_wrong_crc(data: bytes) -> bytes:
    coded = bytearray(gzip.compress(data, mtime=0))
    coded[-8] ^= 0xFF  # the CRC-32 of the member's trailer (RFC 1952 §2.3.1)
    return bytes(coded)


@settings(max_examples=150, deadline=None)
@given(data=st.binary(min_size=1, max_size=3000), coding=st.sampled_from(CODINGS), chunked=st.booleans(),
       sizes=st.lists(st.integers(1, 700), min_size=1, max_size=5), trailer=st.booleans(), drawn=st.data())
def test_a_payload_cut_anywhere_is_refused_never_a_part_of_it(
    data: bytes, coding: str | None, chunked: bool, sizes: list[int], trailer: bool, drawn: st.DataObject,
) -> None:
    """A payload cut past its first line is a decoding error, or (cut inside the framing after the last chunk, or
    after the coded stream's end) the whole of it: never a prefix, nor framing given as payload. A cut inside the
    first line is left out: a payload of one line without its CRLF is read as it is (a mislabel)."""
    chunked = chunked or coding is None
    body = _coded(data, coding)
    if chunked:
        body = _chunked(body, sizes, trailer=b"X-A: b\r\n" if trailer else b"")
    said = "deflate" if coding == "deflate-raw" else coding
    first = body.index(b"\r\n") + 2 if chunked else 1
    cut = drawn.draw(st.integers(first, len(body) - 1), label="cut")
    try:
        got = _read(decoded(io.BytesIO(body[:cut]), _http(said, chunked)))
    except DecodingError:
        return
    assert got == data, f"a cut at {cut} of {len(body)} gave {len(got)} octets that are not the payload"


@pytest.mark.parametrize(("body", "words"), [
    (b"20\r\nhello", "chunk 1, of 32 octets, is cut short: the payload ends after 5 of them, at its octet 9"),
    (b"5\r\nhello\r\n20\r\nonly a few", "chunk 2, of 32 octets, is cut short: the payload ends after 10 of them"),
    (b"5\r\nhello", r"chunk 1, of 5 octets, is not followed by CRLF at octet 8 of the payload \(the payload ends"),
    (b"5\r\nhello\r\n5\r\nworld\r\n", "the payload ends at octet 20, after chunk 2, without its last chunk"),
    (b"ZZ\r\nhello\r\n0\r\n\r\n", r"chunk 1, at octet 0 of the payload, does not begin with a chunk size line \(it"
                                  r" begins b'ZZ\\r\\n'\)"),
    (b"-5\r\nhello\r\n0\r\n\r\n", "chunk 1, at octet 0 of the payload, does not begin with a chunk size line"),
    (b"0x5\r\nhello\r\n0\r\n\r\n", "chunk 1, at octet 0 of the payload, does not begin with a chunk size line"),
    (b"ffffffffffffffff\r\nhello", "chunk 1, at octet 0 of the payload, says it holds 18446744073709551615 octets,"
                                   " more than the 2 GiB a chunk may hold here"),
])
def test_a_chunked_payload_cut_short_or_with_a_size_line_that_is_none_is_a_decoding_error(
    body: bytes, words: str,
) -> None:
    """RFC 9112 §7.1 (``chunk-size = 1*HEXDIG``): warcio gives ``hello``, ``hellohello only a few``, the framing
    as payload, or (``0x5``) ``hello``; each is damaged."""
    with pytest.raises(DecodingError, match=f"its chunked transfer coding is broken: {words}"):
        _read(decoded(io.BytesIO(body), _http(None, True)))


@pytest.mark.parametrize("body", [b"OK", b"1f", b"<!DOCTYPE html>\r\n<html></html>", b'{"url": 1}\r\n', b""])
def test_a_payload_whose_first_line_is_not_meant_as_a_chunk_size_is_read_as_it_is(body: bytes) -> None:
    """pywb records a chunked response with its chunks undone and its ``Transfer-Encoding: chunked`` kept
    (webrecorder/pywb#584): a first line that is not one word before a CRLF, or has no CRLF, is not chunked."""
    assert _read(decoded(io.BytesIO(body), _http(None, True))) == body


@pytest.mark.parametrize(("coding", "body", "words"), [
    ("gzip", gzip.compress(DATE.encode() * 400, mtime=0)[:50],
     "its Content-Encoding gzip stream is cut short: the payload ends at octet 50, before the stream's end"),
    ("gzip", gzip.compress(b"x", mtime=0)[:1], "its Content-Encoding gzip stream is cut short"),  # inside its magic
    ("gzip", _gzip_wrong_crc(DATE.encode() * 400), "its Content-Encoding gzip cannot be undone past octet [0-9]+ of the"
                                                    " payload: .*incorrect data check"),
    ("deflate", zlib.compress(DATE.encode() * 400)[:-3], "its Content-Encoding deflate stream is cut short"),
    ("deflate", _coded(DATE.encode() * 400, "deflate-raw")[:30], "its Content-Encoding deflate stream is cut short"),
    ("br", brotli.compress(DATE.encode() * 400)[:-2], "its Content-Encoding br stream is cut short"),
], ids=["gzip-cut", "gzip-cut-in-magic", "gzip-wrong-crc", "zlib-cut", "raw-deflate-cut", "br-cut"])
def test_a_coded_stream_cut_short_or_corrupt_at_its_start_is_a_decoding_error(
    coding: str, body: bytes, words: str,
) -> None:
    """warcio gives what it decoded of a stream cut short, and a gzip member whose CRC-32 is wrong as its coded
    octets (its mislabel guess): a payload that begins as a gzip member or a zlib stream is one."""
    for chunked in (False, True):
        with pytest.raises(DecodingError, match=words):
            _read(decoded(io.BytesIO(_chunked(body, [7]) if chunked else body), _http(coding, chunked)))


def _pdi(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *argv], capture_output=True, text=True, timeout=300, check=False)


DAMAGED = {
    "a chunk cut short": (b"5\r\nhello\r\n20\r\nonly a few", ("Transfer-Encoding", "chunked"),
                          "its chunked transfer coding is broken: chunk 2, of 32 octets, is cut short"),
    "a first size line that is none": (b"ZZ\r\nhello\r\n0\r\n\r\n", ("Transfer-Encoding", "chunked"),
                                       "its chunked transfer coding is broken: chunk 1, at octet 0 of the payload,"
                                       " does not begin with a chunk size line"),
    "a size past the payload": (b"ffffffffffffffff\r\nhello", ("Transfer-Encoding", "chunked"),
                                "its chunked transfer coding is broken: chunk 1, at octet 0 of the payload, says it"
                                " holds 18446744073709551615 octets"),
    "a gzip stream cut short": (gzip.compress(DATE.encode() * 400, mtime=0)[:50], ("Content-Encoding", "gzip"),
                                "its Content-Encoding gzip stream is cut short"),
    "a gzip member's CRC-32 wrong": (_gzip_wrong_crc(DATE.encode() * 400), ("Content-Encoding", "gzip"),
                                     "its Content-Encoding gzip cannot be undone past octet 0"),
    "a br stream cut short": (brotli.compress(DATE.encode() * 400)[:-2], ("Content-Encoding", "br"),
                              "its Content-Encoding br stream is cut short"),
}


@pytest.mark.parametrize("case", DAMAGED)
def test_a_damaged_payload_is_refused_as_a_damaged_record_and_dropped_with_partial(tmp_path: Path, case: str) -> None:
    """Refused as a payload without its last chunk is: exit 1 naming the record's offset and URI, nothing
    deposited; with --partial, the whole records before it imported, it and the rest of its file dropped, exit 14."""
    body, field, words = DAMAGED[case]
    b = WarcBuilder()
    b.response("http://example.org/a.txt", b"fine", "text/plain", DATE)
    bad = b.response("http://example.org/b.txt", body, "text/plain", DATE, headers=(field,))
    b.response("http://example.org/c.txt", b"after", "text/plain", DATE)
    warc = b.save(tmp_path / "a.warc.gz")
    archive = tmp_path / "archive"
    with Archive.init(archive) as opened:
        opened.add_series(S)
        before = everything(opened)
    where = f"a.warc.gz: the record at offset {bad} (http://example.org/b.txt): its payload cannot be decoded: {words}"
    refused = _pdi("import", str(warc), "--series", S, "--archive", str(archive))
    assert refused.returncode == 1, refused.stderr
    assert f"pdi: syntax error: {where}" in refused.stderr
    assert refused.stdout == ""
    with Archive.open(archive) as opened:
        assert everything(opened) == before
    kept = _pdi("import", str(warc), "--series", S, "--partial", "--archive", str(archive))
    assert kept.returncode == 14, kept.stderr
    assert f"dropped: {where}" in kept.stderr and "(the rest of a.warc.gz is left out)" in kept.stderr
    with Archive.open(archive) as opened:
        assert sorted(r.unique_id for r in opened.store.iter_representations()) == ["http://example.org/a.txt"]


@pytest.mark.parametrize("case", ["a chunk cut short", "a gzip stream cut short", "a br stream cut short"])
@pytest.mark.parametrize("plain", [True, False], ids=["plain", "gzip-per-record"])
def test_a_payload_its_crawler_cut_short_is_read_as_it_is_not_refused(tmp_path: Path, case: str, plain: bool) -> None:
    """A record that says its crawler cut its payload short (``WARC-Truncated: length``, WARC 1.1 §5.13: Heritrix
    and wget write it for a response past their size limits) is no damaged record: its digests vouch for the octets
    it has, and its file imports whole, the payload given as far as it goes (as before damage was refused); the
    same payload without the field refuses the file (above). Both of pdi's readers (its own, a plain WARC's;
    warcio's, a gzip-per-record one) are asked."""
    body, field, _ = DAMAGED[case]
    b = WarcBuilder(gzip=not plain)
    b.response("http://example.org/a.txt", b"fine", "text/plain", DATE)
    b.response("http://example.org/b.txt", body, "text/plain", DATE, headers=(field,),
               warc_headers={"WARC-Truncated": "length"})
    warc = b.save(tmp_path / ("a.warc" if plain else "a.warc.gz"))
    with Archive.init(tmp_path / "archive") as opened:
        opened.add_series(S)
        done, _ = import_warc(opened, warc, S)
        assert sorted(d.name.unique_id for d in done) == ["http://example.org/a.txt", "http://example.org/b.txt"]


# --- bombs, in a child `pdi import` ------------------------------------------------------------------------


def _import(warc: Path, archive: Path) -> tuple[int, float, str]:
    """Exit status, peak MiB and stderr of `pdi import WARC` in a child process."""
    with tempfile.TemporaryFile() as err:
        code, peak, _ = run_with_peak([sys.executable, "-m", "pdi", "import", str(warc), "--series", S,
                                       "--archive", str(archive)], stdout=subprocess.DEVNULL, stderr=err, timeout=300)
        err.seek(0)
        return code, peak / 1024, err.read().decode(errors="replace")


def _zeros_gzip(size: int) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b"\0" * (1 << 20)
    return b"".join(c.compress(block) for _ in range(size >> 20)) + c.flush()


def _bomb_warc(path: Path, body: bytes, headers: tuple[tuple[str, str], ...]) -> int:
    b = WarcBuilder(gzip=False)
    offset = b.response("http://example.org/z.bin", body, "application/octet-stream", DATE, headers=headers)
    b.save(path)
    return offset


@pytest.mark.parametrize("kind", ["chunked gzip", "br"])
def test_a_coding_bomb_is_listed_not_imported_in_bounded_memory(tmp_path: Path, kind: str) -> None:
    if kind == "br":
        assert decodes("br")  # brotlipy's libbrotli API (tests/interop/test_interop_brotlipy_internals.py)
        body = brotli.compress(b"\0" * (256 << 20), quality=11)  # 256 MiB in some 3 KB
        headers: tuple[tuple[str, str], ...] = (("Content-Encoding", "br"),)
    else:
        body = _chunked(_zeros_gzip(256 << 20), [1 << 30])  # 256 MiB in one chunk of some 250 KB
        headers = (("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked"))
    assert len(body) < 2 << 20
    Archive.init(tmp_path / "archive").add_series(S)
    offset = _bomb_warc(tmp_path / "bomb.warc", body, headers)
    code, peak, err = _import(tmp_path / "bomb.warc", tmp_path / "archive")
    assert code == 0, err
    assert (f"not imported: bomb.warc: the record at offset {offset} (http://example.org/z.bin): its payload, its"
            " codings undone, is larger than the limit") in err
    assert peak < PEAK_MIB, f"{kind}: peak {peak:.0f} MiB"


_SPELT = st.sampled_from([str.lower, str.upper, str.title, lambda name: f" {name} "])


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=2000), content=st.sampled_from([None, "gzip", "x-gzip", "deflate"]),
       outer=st.sampled_from([[], ["gzip"], ["x-gzip"], ["deflate"], ["gzip", "deflate"]]), spelt=_SPELT,
       chunked=st.booleans(), sizes=st.lists(st.integers(1, 700), min_size=1, max_size=3))
def test_codings_are_named_in_any_case_and_x_gzip_is_gzip(
    data: bytes, content: str | None, outer: list[str], spelt: Any, chunked: bool, sizes: list[int],
) -> None:
    """RFC 9110 §8.4.1 and RFC 9112 §7: a content or transfer coding's name is case-insensitive; RFC 9110 §8.4.1.3:
    "A recipient SHOULD consider "x-gzip" to be equivalent to "gzip""; RFC 9112 §6.1: ``Transfer-Encoding`` lists
    the transfer codings in the order they were applied, ``chunked`` last. warcio undoes chunks only under a
    ``Transfer-Encoding`` of exactly ``chunked``, and leaves ``x-gzip`` and a transfer coding before ``chunked``
    as they are: a page was deposited as its chunks' framing (``Chunked``) or its gzip octets (``x-gzip``). The
    payload is coded here by the standard library, in the order the fields say, and read back as it was."""
    body = _coded(data, "gzip" if content == "x-gzip" else content)
    fields = [("Content-Type", "text/plain")]
    if content:
        fields.append(("Content-Encoding", spelt(content)))
    if chunked:
        for name in outer:  # applied after the content coding, before the chunks
            body = _coded(body, "gzip" if name == "x-gzip" else name)
        body = _chunked(body, sizes)
        fields.append(("Transfer-Encoding", ", ".join(spelt(name) for name in [*outer, "chunked"])))
    got = _read(decoded(io.BytesIO(body), StatusAndHeaders("200 OK", fields, protocol="HTTP/1.1")))
    assert got == data


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "warcio"])
@pytest.mark.parametrize(("coding", "transfer"), [(None, "Chunked"), ("x-gzip", None), ("X-GZIP", "CHUNKED"),
                                                  (None, "gzip, chunked")])
def test_a_page_so_coded_is_deposited_as_its_octets(
        tmp_path: Path, coding: str | None, transfer: str | None, fast: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from pdi.interop.warc import direct, records

    page = b"<html><body><p>Coded so.</p></body></html>"
    body = gzip.compress(page) if coding else page
    if transfer:
        body = _chunked(gzip.compress(body) if transfer.startswith("gzip") else body, [7])
    headers = tuple((name, value) for name, value in (("Content-Encoding", coding), ("Transfer-Encoding", transfer))
                    if value)
    builder = WarcBuilder()
    builder.response("http://example.org/", body, "text/html", DATE, headers=headers)
    path = tmp_path / "coded.warc.gz"
    path.write_bytes(builder.out.getvalue())
    if not fast:  # the fast path hands every file over: warcio's reader reads it
        def hand_over(*_args: object, **_kwargs: object) -> None:
            raise direct.Handover(0)
        monkeypatch.setattr(records, "read_plain", hand_over)
    archive = Archive.init(tmp_path / "archive")
    archive.add_series(S)
    done, plan = import_warc(archive, path, S)
    assert plan.skipped == [] and [d.url for d in done] == ["http://example.org/"]
    assert parts_of(archive.get(done[0].name).data)["http://example.org/"][1] == page
