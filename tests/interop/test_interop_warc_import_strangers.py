"""Three leftovers of reading a stranger's WARC: a header line that is no field, records whose target is no HTTP URI,
and a .warc.gz whose gzip member holds several records.

Each record is written here octet by octet; what is expected is worked out from WARC 1.1 (ISO 28500:2017) §4 and
annex D, RFC 1952 (gzip members, with the standard library's ``gzip``) and warcio's own reading, never from pdi's
output.
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator

from pdi.archive import Archive
from pdi.errors import ParseError
from pdi.interop.warc import read_index, sources_for

S = "web.example.us"
BLOCK = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello"


def _record(n: int, extra: str = "", uri: str | None = None, kind: str = "response", block: bytes = BLOCK) -> bytes:
    head = (f"WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:uuid:6f2c4f7e-0000-4000-8000-{n:012d}>\r\n"
            f"WARC-Date: 2024-05-06T10:00:00Z\r\n{extra}"
            f"WARC-Target-URI: {uri or f'http://example.org/{n}'}\r\n"
            f"Content-Type: application/http;msgtype=response\r\nContent-Length: {len(block)}\r\n\r\n")
    return head.encode() + block + b"\r\n\r\n"


def _write(folder: Path, records: list[bytes], compression: str) -> Path:
    """``compression``: "" (none), "members" (a gzip member a record, WARC 1.1 annex D), "whole" (one member)."""
    path = folder / ("a.warc" if not compression else "a.warc.gz")
    if compression == "members":
        path.write_bytes(b"".join(gzip.compress(r) for r in records))
    elif compression == "whole":
        path.write_bytes(gzip.compress(b"".join(records)))
    else:
        path.write_bytes(b"".join(records))
    return path


def _pdi(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *argv], capture_output=True, text=True, timeout=300, check=False)


def _archive(folder: Path) -> Path:
    archive = folder / "archive"
    Archive.init(archive).add_series(S)
    return archive


# --- a WARC header line that is no field (WARC 1.1 §4: named-field = field-name ":" [ field-value ]) ----------------

#: WARC 1.1 §4 (from RFC 2616's): a field-name is a token, characters that are no CTL nor separator, SP and HT among
#: the separators, then its colon. pdi reads white space before the colon (a leniency, docs/explanation/web-archives.md)
#: and, as warcio does, a name holding another separator ("X-/"); white space inside a name, or no colon, it refuses.
_NAMED_FIELD = re.compile(r"[^\x00-\x20\x7f:]+[ \t]*:.*")


@settings(max_examples=150, deadline=None)
@given(rest=st.text(alphabet="abcXYZ09-_.: \t/", max_size=24), compression=st.sampled_from(["", "members"]))
def test_a_warc_header_line_that_is_no_field_is_refused_naming_the_record_and_the_line(
        tmp_path_factory: pytest.TempPathFactory, rest: str, compression: str) -> None:
    """warcio drops a line with no colon unsaid (and reads ``WARC-Payload-Digest sha1:…`` as a field named
    ``WARC-Payload-Digest sha1``, the digest unchecked); pdi refuses a line that is no named field, in the direct
    reader and in warcio's alike, naming the record (the second here, its offset) and the line."""
    line = "X-" + rest
    first = _record(0)
    path = _write(tmp_path_factory.mktemp("w"), [first, _record(1, extra=line + "\r\n")], compression)
    offset = len(gzip.compress(first)) if compression else len(first)
    if _NAMED_FIELD.fullmatch(line):
        index = read_index(sources_for(path), limit=1 << 20)
        assert [e.uri for e in index.entries] == ["http://example.org/0", "http://example.org/1"]
        return
    # warcio reads it: the oracle that the file is otherwise whole
    with path.open("rb") as fh:
        assert len(list(ArchiveIterator(fh))) == 2
    with pytest.raises(ParseError) as caught:
        read_index(sources_for(path), limit=1 << 20)
    shown = line.replace("\t", "\\t")  # (a tab shown as \t, as every stranger's text in a message)
    assert str(caught.value).startswith(f"{path.name}: the record at offset {offset} (http://example.org/1) is"
                                        f" damaged: its WARC header line '{shown}' is no field"), str(caught.value)


@pytest.mark.parametrize("line", ["WARC-Foo bar", "WARC-Payload-Digest sha1:AAAA", "WARC-Foo"])
@pytest.mark.parametrize("compression", ["", "members"])
def test_the_command_refuses_a_header_line_without_its_colon(tmp_path: Path, line: str, compression: str) -> None:
    path = _write(tmp_path, [_record(0, extra=line + "\r\n")], compression)
    done = _pdi("import", str(path), "--series", S, "--archive", str(_archive(tmp_path)))
    assert done.returncode == 1, done.stderr
    assert f"the record at offset 0 (http://example.org/0) is damaged: its WARC header line '{line}' is no field" in done.stderr


# --- a .warc.gz whose gzip member holds several records (WARC 1.1 annex D: one member a record) -------------------

def _members(folder: Path, sizes: list[int], name: str = "a.warc.gz") -> tuple[Path, list[int], list[bytes]]:
    """A .warc.gz of ``sum(sizes)`` records, ``sizes[i]`` of them in gzip member ``i``: its path, each member's
    offset (RFC 1952: members follow one another, so each begins where those before it end) and each record."""
    records = [_record(n) for n in range(sum(sizes))]
    members, offsets, at, taken = [], [], 0, 0
    for size in sizes:
        member = gzip.compress(b"".join(records[taken:taken + size]))
        members.append(member)
        offsets.append(at)
        at += len(member)
        taken += size
    path = folder / name
    path.write_bytes(b"".join(members))
    return path, offsets, records


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 3), min_size=1, max_size=5), partial=st.booleans())
@example(sizes=[2, 1], partial=True)  # warcio: the second record at offset -51
@example(sizes=[1, 2, 1], partial=True)  # and at 159, inside the first member
def test_a_gzip_member_of_several_records_is_refused_and_no_record_is_indexed_at_an_offset_not_its_own(
        tmp_path_factory: pytest.TempPathFactory, sizes: list[int], partial: bool) -> None:
    """Only a record that is its gzip member's one record has an offset to be read again at (the member's). warcio
    gives a record after the first of a member an offset of its own making (before the member, or negative), and
    pdi's --partial indexed it there, pass 2 reading another record or failing; now the member is refused, naming
    the file and where the member begins, and with --partial the whole members before it are kept, at their
    offsets."""
    path, offsets, _records = _members(tmp_path_factory.mktemp("w"), sizes)
    several = next((i for i, size in enumerate(sizes) if size > 1), None)
    if several is None:  # annex D's layout: every record at its member's offset, as warcio says too
        with path.open("rb") as fh:
            it = ArchiveIterator(fh)
            told = [it.get_record_offset() for _record in it]
        index = read_index(sources_for(path), limit=1 << 20, partial=partial)
        assert [e.offset for e in index.entries] == offsets == told
        return
    whole = (f"{path.name} is compressed whole, one gzip member" if offsets[several] == 0 else
             f"{path.name} is compressed whole from offset {offsets[several]} on (its gzip member there holds several"
             " records)")
    if not partial:
        with pytest.raises(ParseError, match=re.escape(whole)):
            read_index(sources_for(path), limit=1 << 20)
        return
    index = read_index(sources_for(path), limit=1 << 20, partial=True)
    assert {e.offset for e in index.entries} <= set(offsets)  # never before a member, nor inside one
    assert [e.offset for e in index.entries] == offsets[:several]
    assert [e.uri for e in index.entries] == [f"http://example.org/{n}" for n in range(several)]
    assert len(index.dropped) == 1 and index.dropped[0].startswith(whole)
    index.kept.clear()  # each read again at its offset from the file
    assert [index.payload(e, 1 << 20) for e in index.entries] == [b"hello"] * several


def test_a_wacz_holding_a_warc_gz_compressed_whole_is_refused_naming_it_whatever_its_index_says(tmp_path: Path) -> None:
    """pdi reads a WACZ's WARCs, not its CDXJ index: one whose index points into a WARC compressed whole (at the
    offsets warcio gives, -318 and all) is refused as that WARC is, by its name in the package."""
    whole, _offsets, _records = _members(tmp_path, [3], "data.warc.gz")
    with whole.open("rb") as fh:
        it = ArchiveIterator(fh)
        record = next(iter(it))
        record.content_stream().read()
        it.read_to_end()
        first = (it.get_record_offset(), it.get_record_length())
    assert first[1] < 0  # warcio's own length of it: the member's end less what it has left
    cdxj = (f'org,example)/0 20240506100000 {{"url": "http://example.org/0", "offset": "{first[0]}",'
            f' "length": "{first[1]}", "filename": "data.warc.gz"}}\n')
    wacz = tmp_path / "a.wacz"
    with zipfile.ZipFile(wacz, "w") as zf:
        zf.writestr("archive/data.warc.gz", whole.read_bytes())
        zf.writestr("indexes/index.cdx", cdxj)
    with pytest.raises(ParseError, match=re.escape("data.warc.gz is compressed whole, one gzip member")):
        read_index(sources_for(wacz, spool=tmp_path), limit=1 << 20)
    done = _pdi("import", str(wacz), "--series", S, "--archive", str(_archive(tmp_path)))
    assert done.returncode == 1 and "data.warc.gz is compressed whole" in done.stderr, done.stderr


# --- records whose target is no HTTP URL (dns:, ftp:, urn: …): left out, and said so --------------------------------

#: RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ); http and https (in any case) are the ones a
#: page is made of
_SCHEMES = st.from_regex(r"[A-Za-z][A-Za-z0-9+.-]{0,8}", fullmatch=True).filter(lambda s: s.lower() not in
                                                                                  ("http", "https"))
_CONTENT = ("response", "resource", "revisit")  # WARC 1.1 §6.3, §6.4, §6.7: the records that hold a capture


def _base16_digest(block: bytes) -> str:
    """A block digest in base16, which WARC 1.1 §5.8 allows and pdi's direct reader hands to warcio."""
    import hashlib
    return f"WARC-Block-Digest: sha1:{hashlib.sha1(block).hexdigest()}\r\n"


@settings(max_examples=60, deadline=None)
@given(others=st.lists(st.tuples(_SCHEMES, st.sampled_from([*_CONTENT, "request", "metadata"])), max_size=6),
       compression=st.sampled_from(["", "members"]), by_warcio=st.booleans())
def test_records_whose_target_is_no_http_url_are_counted_and_named(
        tmp_path_factory: pytest.TempPathFactory, others: list[tuple[str, str]], compression: str,
        by_warcio: bool) -> None:
    """A Heritrix crawl holds a dns: response for each host; others hold ftp:, urn:, data: records. An import makes
    pages of HTTP captures and leaves them out, as before, but no longer unsaid: the report counts the captures
    (responses, resources, revisits) it left out and names the first three, with their offsets."""
    records = [_record(0, extra=_base16_digest(BLOCK) if by_warcio else "")]  # read by warcio, or directly
    for n, (scheme, kind) in enumerate(others, 1):
        records.append(_record(n, uri=f"{scheme}:thing-{n}", kind=kind, block=b"" if kind == "revisit" else b"x"))
    path = _write(tmp_path_factory.mktemp("w"), records, compression)
    sizes = [len(gzip.compress(r)) if compression else len(r) for r in records]
    offsets = [sum(sizes[:n]) for n in range(len(records))]
    left = [(offsets[n], f"{scheme}:thing-{n}") for n, (scheme, kind) in enumerate(others, 1) if kind in _CONTENT]
    index = read_index(sources_for(path), limit=1 << 20)
    assert [e.uri for e in index.entries] == ["http://example.org/0"]
    assert index.left_out.count == len(left)
    said = index.left_out.said(index.sources)
    if not left:
        assert said is None
        return
    assert said is not None and said.startswith(f"{len(left)} record{'s' if len(left) > 1 else ''} whose"
                                                " WARC-Target-URI is not http: or https:"), said
    for offset, uri in left[:3]:
        assert f"{uri} ({path.name} at offset {offset})" in said, said
    assert said.endswith(f", and {len(left) - 3} more" if len(left) > 3 else f"at offset {left[-1][0]})"), said


def test_the_command_says_what_it_left_out_for_its_scheme(tmp_path: Path) -> None:
    dns = _record(1, uri="dns:example.org", block=b"20240506100000\nexample.org.\t300\tIN\tA\t93.184.216.34\n")
    path = _write(tmp_path, [_record(0), dns, _record(2, uri="ftp://example.org/a.txt", kind="resource")], "")
    done = _pdi("import", str(path), "--series", S, "--archive", str(_archive(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.split()) == 1  # the one HTTP capture, deposited
    offset = len(_record(0))
    assert (f"not imported: 2 records whose WARC-Target-URI is not http: or https: (pdi imports web pages and their"
            f" parts, HTTP captures; a crawler's dns:, ftp:, urn: … records are left out): dns:example.org (a.warc at"
            f" offset {offset}), ftp://example.org/a.txt (a.warc at offset {offset + len(dns)})") in done.stderr, \
        done.stderr
