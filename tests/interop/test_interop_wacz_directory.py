"""A stranger's WACZ whose ZIP directory is huge: refused by what its end record says and by counting its entries,
before ``zipfile`` makes an object of every one (APPNOTE.TXT §4.3.16, §4.3.14: the end of central directory record
and its ZIP64 form; §4.3.12: a central directory header). ``zipfile`` is the oracle of what a directory holds."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.cli import cli
from pdi.errors import LimitError
from pdi.interop.warc.sources import MAX_ZIP_DIRECTORY, MAX_ZIP_FILES, zip_directory
from peak_memory import run_with_peak

S = "web.example.us"


def _directory_zip(entries: int, *, said: int | None = None, zip64: bool = False, comment: int = 0) -> bytes:
    """A ZIP of one empty stored file ``archive/a.warc``, whose central directory lists it ``entries`` times (the
    first under its name, the others under names of their own; each with ``comment`` octets of comment), the end
    record saying ``said`` entries."""
    name = b"archive/a.warc"
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, zlib.crc32(b""), 0, 0, len(name), 0) + name
    note = b"c" * comment
    directory = b"".join(
        struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0, 0, 0, 0, len(n), 0, len(note), 0, 0, 0, 0)
        + n + note
        for n in (b"f%07d" % i if i else name for i in range(entries))
    )
    count = entries if said is None else said
    end = b""
    if zip64:
        end = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, len(directory), len(local))
        end += struct.pack("<IIQI", 0x07064B50, 0, len(local) + len(directory), 1)
        count = 0xFFFF
    small = min(count, 0xFFFF)
    end += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, small, small, min(len(directory), 0xFFFFFFFF), len(local), 0)
    return local + directory + end


_READ = (
    "import sys\n"
    "from pdi.errors import PDIError\n"
    "from pdi.interop.warc.sources import wacz_sources\n"
    "try:\n"
    "    print(len(wacz_sources(sys.argv[1])))\n"
    "except PDIError as exc:\n"
    "    print(type(exc).__name__, exc)\n"
)


@pytest.mark.parametrize(("what", "entries", "said", "zip64", "comment"), [
    ("300,000 entries, said", 300_000, None, True, 0),
    ("300,000 entries, the end record saying one", 300_000, 1, False, 0),
    ("300 entries of 64 KiB comments", 300, None, False, 65_535),
])
def test_a_wacz_of_a_huge_zip_directory_is_refused_before_zipfile_reads_it(
    tmp_path: Path, what: str, entries: int, said: int | None, zip64: bool, comment: int
) -> None:
    """Found by an attack: a 54 MB WACZ whose ZIP directory lists 1,000,000 files took ``pdi import`` 535 MB and
    35 s before it was refused (a syntax error: "more than 10000 files"); ``zipfile`` reads the directory whole and
    makes an object of some 500 octets of each entry before the count was looked at. It is a limit now, said
    from the end record and a walk of the directory's headers that keeps nothing, so that refusing it costs no
    more memory than reading an ordinary WACZ."""
    bomb, plain = tmp_path / "bomb.wacz", tmp_path / "plain.wacz"
    bomb.write_bytes(_directory_zip(entries, said=said, zip64=zip64, comment=comment))
    plain.write_bytes(_directory_zip(1))
    peaks, said_lines = [], []
    for path in (bomb, plain):
        status, peak, out = run_with_peak([sys.executable, "-c", _READ, str(path)], stdout=subprocess.PIPE)
        assert status == 0
        peaks.append(peak)
        said_lines.append(out.decode().strip())
    assert said_lines[1] == "1"
    assert said_lines[0].startswith(f"LimitError {bomb}: its ZIP directory at offset 44"), said_lines[0]
    if comment:
        assert f"more than the {MAX_ZIP_DIRECTORY:,} octets" in said_lines[0]
    else:
        assert f"lists more than {MAX_ZIP_FILES:,} files" in said_lines[0]
    assert peaks[0] - peaks[1] < 8 * 1024, f"{what}: {(peaks[0] - peaks[1]) // 1024} MiB more to refuse it"


def test_pdi_import_says_the_huge_directory_is_past_a_limit(tmp_path: Path) -> None:
    """The CLI's answer: exit 7 (limit exceeded), naming the file and the bound; nothing imported."""
    archive = Archive.init(tmp_path / "archive")
    archive.add_series(S)
    bomb = tmp_path / "bomb.wacz"
    bomb.write_bytes(_directory_zip(MAX_ZIP_FILES + 1))
    result = CliRunner().invoke(cli, ["import", str(bomb), "--series", S, "--archive", str(tmp_path / "archive")])
    assert result.exit_code == 7, result.output
    assert f"limit exceeded: {bomb}: its ZIP directory at offset 44 lists more than {MAX_ZIP_FILES:,} files" \
        in result.output
    assert list(archive.ls(f"urn:pdi://{S}/*/*/*/*")) == []


def test_a_wacz_of_as_many_files_as_the_bound_is_read(tmp_path: Path) -> None:
    """The bound itself is allowed: a directory of exactly ``MAX_ZIP_FILES`` entries is zipfile's to read."""
    path = tmp_path / "full.wacz"
    path.write_bytes(_directory_zip(MAX_ZIP_FILES))
    with path.open("rb") as fh:
        assert zip_directory(fh, str(path)) == (44, MAX_ZIP_FILES)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=30), st.binary(max_size=300), st.booleans(),
       st.binary(max_size=50))
def test_property_the_directory_is_where_and_as_long_as_zipfile_reads_it(
    contents: list[bytes], comment: bytes, zip64: bool, before: bytes
) -> None:
    """For ZIPs ``zipfile`` writes (a comment, ZIP64 records forced or not, octets prepended as a self-extracting
    archive's are), the directory's offset and entry count are those ``zipfile`` reads."""
    out = io.BytesIO(before)
    with zipfile.ZipFile(out, "a" if before else "w") as zf:
        for i, data in enumerate(contents):
            with zf.open(f"d/{i}", "w", force_zip64=zip64) as fh:
                fh.write(data)
        zf.comment = comment
    out.seek(0)
    with zipfile.ZipFile(out) as zf:
        infos = zf.infolist()
        start = zf.start_dir
    out.seek(0)
    assert zip_directory(out, "x.zip") == (start, len(infos))


def test_what_does_not_walk_is_left_to_zipfile() -> None:
    """What is no ZIP, or a directory cut short, is not the walk's to say: it answers ``None`` and zipfile's own
    error follows."""
    assert zip_directory(io.BytesIO(b"not a zip at all"), "x.zip") is None
    whole = _directory_zip(3)
    cut = whole[:40] + whole[60:]
    assert zip_directory(io.BytesIO(cut), "x.zip") is None
    with pytest.raises(zipfile.BadZipFile):
        zipfile.ZipFile(io.BytesIO(cut))
    with pytest.raises(LimitError):
        zip_directory(io.BytesIO(_directory_zip(MAX_ZIP_FILES + 1)), "x.zip")
