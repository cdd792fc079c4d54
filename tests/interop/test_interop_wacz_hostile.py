"""A stranger's names: a WACZ whose ZIP entries' names are odd or ambiguous (read as its WARCs say, or refused naming
the entry), whose entries share their octets or are named otherwise in their local headers (refused naming both),
and a WARC's URLs holding control characters (never echoed as they are).

Each WACZ is written here with the standard ``zipfile`` (whose writer puts down any name, twice if asked), or by
hand where zipfile's writer cannot lie (entries sharing octets).
"""

from __future__ import annotations

import io
import random
import re
import struct
import tempfile
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from warc_builder import WarcBuilder

from pdi.archive import Archive
from pdi.cli import cli
from pdi.errors import ParseError
from pdi.interop.warc import import_warc
from pdi.interop.warc.sources import _check_layout

S = "web.example.us"
DATE = "2024-05-06T10:00:00Z"


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    opened = Archive.init(tmp_path / "archive")
    opened.add_series(S)
    return opened


def _warc(url: str, body: bytes) -> bytes:
    b = WarcBuilder()
    b.response(url, body, "text/plain", DATE)
    return b.out.getvalue()


def _wacz(path: Path, entries: list[tuple[str, bytes, int]]) -> Path:
    with warnings.catch_warnings(), zipfile.ZipFile(path, "w") as zf:
        warnings.simplefilter("ignore")  # zipfile warns of a name written twice, and writes it
        for name, data, method in entries:
            zf.writestr(zipfile.ZipInfo(name, (2024, 5, 6, 10, 0, 0)), data, compress_type=method)
    return path


def test_a_deflated_warc_with_a_long_name_is_read(archive: Archive, tmp_path: Path) -> None:
    """The spool copy of a deflated WARC was named with the entry's own suffixes: one of 300 octets was an OSError
    (file name too long), not an import."""
    name = "archive/a." + "x" * 300 + ".warc"
    wacz = _wacz(tmp_path / "long.wacz", [(name, _warc("http://example.org/a.txt", b"hello"), zipfile.ZIP_DEFLATED)])
    done, plan = import_warc(archive, wacz, S)
    assert [d.url for d in done] == ["http://example.org/a.txt"] and plan.skipped == []
    assert archive.get(done[0].name).data == b"hello"


def test_two_entries_of_one_name_are_refused_naming_both(archive: Archive, tmp_path: Path) -> None:
    """zipfile reads the last of two entries of one name (and ``unzip`` asks which), so the WARC a WACZ holds was
    whichever a reader picked: the package is refused, naming the entry and both offsets, and nothing imported."""
    first = _warc("http://example.org/a.txt", b"the first")
    wacz = _wacz(tmp_path / "twice.wacz", [
        ("archive/data.warc.gz", first, zipfile.ZIP_STORED),
        ("archive/data.warc.gz", _warc("http://example.org/b.txt", b"the second"), zipfile.ZIP_STORED),
    ])
    with zipfile.ZipFile(wacz) as zf:
        offsets = [i.header_offset for i in zf.infolist()]
    assert offsets[0] == 0 and offsets[1] > len(first)
    with pytest.raises(ParseError, match=(
            rf"twice\.wacz: two ZIP entries are named 'archive/data\.warc\.gz' \(at offsets 0 and {offsets[1]}\)")):
        import_warc(archive, wacz, S)
    assert archive.ls(series=S) == []


@pytest.mark.parametrize("name", ["archive/../../etc/a.warc.gz", "/archive/a.warc.gz", "archive/..\\a.warc.gz",
                                  "datapackage.json/../archive/a.warc.gz"])
def test_an_entry_named_outside_the_package_is_refused(archive: Archive, tmp_path: Path, name: str) -> None:
    wacz = _wacz(tmp_path / "out.wacz", [
        ("archive/good.warc.gz", _warc("http://example.org/a.txt", b"good"), zipfile.ZIP_STORED),
        (name, _warc("http://example.org/b.txt", b"bad"), zipfile.ZIP_DEFLATED),
    ])
    with zipfile.ZipFile(wacz) as zf:
        (stored,) = [i for i in zf.infolist() if i.filename != "archive/good.warc.gz"]
    with pytest.raises(ParseError, match=(
            rf"out\.wacz: the ZIP entry {re.escape(chr(39) + stored.filename + chr(39))} at offset {stored.header_offset} is named"
            " outside the package")):
        import_warc(archive, wacz, S)
    assert archive.ls(series=S) == []


def test_what_import_prints_of_a_stranger_s_urls_never_drives_the_terminal(tmp_path: Path) -> None:
    """A WARC-Target-URI holding ESC and BEL (an xterm title sequence) was echoed as it was in `not imported:` lines
    (and `missing from …:` and `dropped:` lines); they are shown as \\x1b and \\x07, as pdi's error line shows them."""
    location = str(tmp_path / "archive")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", S, "--archive", location]).exit_code == 0
    evil = "http://example.org/\x1b]0;owned\x07"
    b = WarcBuilder()
    b.response(evil + "big", random.Random(1).randbytes(2_000_000), "application/octet-stream", DATE)  # past --max-mb 1
    b.response(evil + "page", b'<html><img src="gone.png"></html>', "text/html", DATE)
    warc = b.save(tmp_path / "a.warc.gz")
    result = runner.invoke(cli, ["import", str(warc), "--series", S, "--max-mb", "1", "--archive", location])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "(http://example.org/\\x1b]0;owned\\x07big): its payload" in result.stderr
    assert "not imported: a.warc.gz: the record at offset " in result.stderr  # the page: no MHTML can name it
    assert "(http://example.org/\\x1b]0;owned\\x07page)" in result.stderr


def _stored_zip(members: list[tuple[int, bytes, bytes]], entries: list[tuple[bytes, int, bytes]]) -> bytes:
    """A ZIP written by hand (APPNOTE.TXT §4.3.7 local headers, §4.3.12 directory headers, §4.3.16 end record):
    ``members`` are local headers (offset, name, data) laid down as given, ``entries`` the directory's (name, offset
    of its local header, data it says it holds), all stored, so that two entries may say they hold the same
    octets (``zipfile``'s writer never does)."""
    out = bytearray()
    for offset, name, data in members:
        local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, zlib.crc32(data), len(data), len(data),
                            len(name), 0) + name + data
        out[offset:offset + len(local)] = local
    directory = b"".join(
        struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0, zlib.crc32(data), len(data), len(data),
                    len(name), 0, 0, 0, 0, 0, offset) + name
        for name, offset, data in entries
    )
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(directory), len(out), 0)
    return bytes(out) + directory + end


def _records(count: int) -> bytes:
    b = WarcBuilder(gzip=False)
    for i in range(count):
        b.response(f"http://example.org/{i}.txt", b"word " * 200, "text/plain", DATE)
    return b.out.getvalue()


def test_many_entries_of_one_stored_member_are_refused_before_a_record_is_read(
        archive: Archive, tmp_path: Path) -> None:
    """Found by an attack (D. Fifield's zip bomb of overlapping files): a WACZ whose directory listed one stored WARC
    of 12 records of 1 MB as 2,000 WARCs, each at its one local header, was read as 2,000 WARCs (killed after 120 s,
    each record printed some 960 times; 10,000 entries run for hours). Entries at one offset are refused from the
    local headers, naming the first two and their offsets, before a record is read."""
    warc = _records(3)
    names = [b"archive/%d.warc" % i for i in range(4)]
    path = tmp_path / "shared.wacz"
    path.write_bytes(_stored_zip([(0, names[0], warc)], [(name, 0, warc) for name in names]))
    with zipfile.ZipFile(path) as zf:  # zipfile 3.11 lists four WARCs
        assert [i.header_offset for i in zf.infolist()] == [0, 0, 0, 0]
    end = 30 + len(names[0]) + len(warc)
    with pytest.raises(ParseError, match=(
            rf"shared\.wacz: the ZIP entries 'archive/0\.warc' \(at offset 0, its octets to offset {end}\) and"
            r" 'archive/1\.warc' \(at offset 0\) overlap: .* a zip bomb")):
        import_warc(archive, path, S)
    assert archive.ls(series=S) == []


def test_an_entry_whose_octets_hold_another_s_local_header_is_refused(archive: Archive, tmp_path: Path) -> None:
    """The quoted overlap: the first entry's data holds the second's local header and data, each entry named as its
    local header names it and its CRC-32 right, so that the second's octets are read twice."""
    warc = _records(2)
    inner = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, zlib.crc32(warc), len(warc), len(warc),
                        len(b"archive/b.warc"), 0) + b"archive/b.warc" + warc
    second = 30 + len(b"archive/a.warc")
    path = tmp_path / "quoted.wacz"
    path.write_bytes(_stored_zip([(0, b"archive/a.warc", inner)],
                                 [(b"archive/a.warc", 0, inner), (b"archive/b.warc", second, warc)]))
    with pytest.raises(ParseError, match=(
            rf"quoted\.wacz: the ZIP entries 'archive/a\.warc' \(at offset 0, its octets to offset"
            rf" {second + len(inner)}\) and 'archive/b\.warc' \(at offset {second}\) overlap")):
        import_warc(archive, path, S)
    assert archive.ls(series=S) == []


def test_an_entry_named_otherwise_in_its_local_header_is_refused(archive: Archive, tmp_path: Path) -> None:
    """A stored WARC is read in place from its local header on, whose name was never looked at (zipfile compares it
    only as it opens a member): the directory and the local header naming two files is refused, naming both."""
    wacz = _wacz(tmp_path / "renamed.wacz", [
        ("archive/good.warc.gz", _warc("http://example.org/a.txt", b"good"), zipfile.ZIP_STORED),
        ("archive/data.warc.gz", _warc("http://example.org/b.txt", b"data"), zipfile.ZIP_STORED),
    ])
    with zipfile.ZipFile(wacz) as zf:
        offset = zf.getinfo("archive/data.warc.gz").header_offset
    octets = bytearray(wacz.read_bytes())
    octets[offset + 30:offset + 30 + len("archive/data.warc.gz")] = b"archive/else.warc.gz"
    wacz.write_bytes(bytes(octets))
    with pytest.raises(ParseError, match=(
            rf"renamed\.wacz: the ZIP entry 'archive/data\.warc\.gz' at offset {offset} is named"
            r" 'archive/else\.warc\.gz' in its local header")):
        import_warc(archive, wacz, S)
    assert archive.ls(series=S) == []


@pytest.mark.parametrize("partial", [False, True])
def test_pdi_import_refuses_overlapping_entries_with_or_without_partial(tmp_path: Path, partial: bool) -> None:
    """A ZIP that lies about where its files are is no damaged record to drop: ``--partial`` refuses it too,
    exit 1 (a syntax error: not the WACZ it says), and nothing is deposited."""
    location = str(tmp_path / "archive")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", S, "--archive", location]).exit_code == 0
    warc = _records(2)
    names = [b"archive/%d.warc" % i for i in range(3)]
    path = tmp_path / "shared.wacz"
    path.write_bytes(_stored_zip([(0, names[0], warc)], [(name, 0, warc) for name in names]))
    result = runner.invoke(cli, ["import", str(path), "--series", S, "--archive", location,
                                 *(["--partial"] if partial else [])])
    assert result.exit_code == 1, result.output
    assert (f"syntax error: {path}: the ZIP entries 'archive/0.warc' (at offset 0, its octets to offset"
            f" {30 + len(names[0]) + len(warc)}) and 'archive/1.warc' (at offset 0) overlap") in result.stderr
    assert "http://example.org/0.txt" not in result.output
    assert list(Archive.open(location).ls(series=S)) == []


class _Unseekable(io.RawIOBase):
    """A stream zipfile can only write forward (a pipe's), so that it writes a data descriptor after each entry."""

    def __init__(self) -> None:
        super().__init__()
        self.octets = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.octets += data
        return len(data)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=12), st.booleans(), st.booleans(),
       st.binary(max_size=50))
def test_property_zips_zipfile_writes_are_not_refused(
        contents: list[bytes], zip64: bool, streamed: bool, before: bytes) -> None:
    """The layout check refuses none of the ZIPs ``zipfile`` writes: data descriptors (written to a stream that
    cannot seek), ZIP64 fields forced, octets prepended as a self-extracting archive's are, deflated or stored."""
    target: Any = _Unseekable() if streamed else io.BytesIO()
    target.write(before)
    with zipfile.ZipFile(target, "a" if before and not streamed else "w") as zf:
        for i, data in enumerate(contents):
            info = zipfile.ZipInfo(f"archive/{i}.warc")
            info.compress_type = zipfile.ZIP_DEFLATED if i % 2 else zipfile.ZIP_STORED
            with zf.open(info, "w", force_zip64=zip64) as fh:
                fh.write(data)
    octets = bytes(target.octets if streamed else target.getvalue())
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "z.wacz"
        path.write_bytes(octets)
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if streamed:
                assert all(i.flag_bits & 0x8 for i in infos)
            _check_layout(path, infos, zf.start_dir)


def test_a_stored_entry_of_two_sizes_is_refused_saying_so(archive: Archive, tmp_path: Path) -> None:
    """A stored (uncompressed) WARC whose ZIP directory entry gives it fewer bytes stored than read out (APPNOTE.TXT
    §4.4.8, §4.4.9: stored, the two are one) was refused as running "past the end of the file", which it does not
    (zipfile cannot read it whole either): the refusal now says what the entry says. (More stored than read out
    runs into what follows, and is refused as such.)"""
    warc = _warc("http://example.org/a.txt", b"hello")
    wacz = _wacz(tmp_path / "sizes.wacz", [("archive/data.warc", warc, zipfile.ZIP_STORED)])
    data = bytearray(wacz.read_bytes())
    at = data.rfind(b"PK\x01\x02")  # its directory entry (APPNOTE.TXT §4.3.12): the sizes at 20 and 24
    stored, read_out = len(warc) - 10, len(warc)
    struct.pack_into("<II", data, at + 20, stored, read_out)
    wacz.write_bytes(bytes(data))
    with zipfile.ZipFile(wacz) as zf, pytest.raises((zipfile.BadZipFile, EOFError)):
        zf.read("archive/data.warc")
    with pytest.raises(ParseError) as caught:
        import_warc(archive, wacz, S)
    assert str(caught.value).startswith(
        f"{wacz}: archive/data.warc cannot be opened: its ZIP directory entry says it is stored (not compressed) but"
        f" gives it {stored:,} bytes stored and {read_out:,} bytes read out (the entry is damaged)"), caught.value
    assert archive.ls(series=S) == []
