"""A stranger's names: a WACZ whose ZIP entries' names are odd or ambiguous (read as its WARCs say, or refused naming
the entry), and a WARC's URLs holding control characters (never echoed as they are).

Each WACZ is written here with the standard ``zipfile`` (whose writer puts down any name, twice if asked).
"""

from __future__ import annotations

import random
import re
import warnings
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from warc_builder import WarcBuilder

from pdi.archive import Archive
from pdi.cli import cli
from pdi.errors import ParseError
from pdi.interop.warc import import_warc

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
            rf"out\.wacz: the ZIP entry {re.escape(repr(stored.filename))} at offset {stored.header_offset} is named"
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
