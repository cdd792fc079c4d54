"""A web archive cut short: `pdi import` names the damaged record and its offset, exits non-zero and imports nothing,
unless --partial, which imports the whole records before the damage, says what was dropped and exits 14.

The files are written by warcio (:mod:`warc_builder`) and cut at offsets
hypothesis picks. A cut exactly between two records leaves a shorter file
that is whole (ISO 28500 §4: a WARC file is records one after another), so
those offsets are left out; every other cut is inside a record, whose offset
the error must name.
"""

from __future__ import annotations

import bisect
import datetime
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warc_builder import DATA, WarcBuilder, everything

from pdi.archive import Archive
from pdi.errors import PDIError
from pdi.identifier import PDI
from pdi.interop.warc import import_warc, read_index, sources_for

S = "web.example.us"
DATE = "2024-05-06T10:00:00Z"
PARTIAL_EXIT = 14


def _file(compressed: bool) -> tuple[bytes, list[int]]:
    """A WARC (warcinfo, a page, two lone texts) and the offset of each record."""
    b = WarcBuilder(gzip=compressed)
    offsets = [0]
    offsets.append(b.response("http://example.org/", b"<html><body><p>hello</p></body></html>", "text/html", DATE))
    offsets.append(b.response("http://example.org/a.txt", b"first text\n" * 40, "text/plain", DATE))
    offsets.append(b.response("http://example.org/b.txt", b"second text\n" * 40, "text/plain", DATE))
    return b.out.getvalue(), offsets


GZ = _file(True)
PLAIN = _file(False)


def _cuts(raw: bytes, offsets: list[int]) -> st.SearchStrategy[int]:
    boundaries = {*offsets, len(raw)}
    return st.integers(1, len(raw) - 1).filter(lambda cut: cut not in boundaries)


def _refused(compressed: bool, cut: int) -> None:
    raw, offsets = GZ if compressed else PLAIN
    damaged = offsets[bisect.bisect_right(offsets, cut) - 1]  # the record the cut falls in
    with tempfile.TemporaryDirectory() as folder:
        warc = Path(folder) / ("a.warc.gz" if compressed else "a.warc")
        warc.write_bytes(raw[:cut])
        with Archive.init(Path(folder) / "archive") as opened:
            opened.add_series(S)
            before = everything(opened)
            with pytest.raises(PDIError, match=rf"a\.warc(\.gz)?: the record at offset {damaged}\b"):
                import_warc(opened, warc, S)
            assert everything(opened) == before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.data())
def test_a_warc_gz_cut_anywhere_inside_a_record_is_refused_naming_it(data: st.DataObject) -> None:
    _refused(True, data.draw(_cuts(*GZ)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.data())
def test_a_plain_warc_cut_anywhere_inside_a_record_is_refused_naming_it(data: st.DataObject) -> None:
    _refused(False, data.draw(_cuts(*PLAIN)))


@pytest.mark.parametrize("compressed", [True, False])
def test_every_cut_of_the_files_is_found_in_the_first_pass(tmp_path: Path, compressed: bool) -> None:
    # Not only those hypothesis draws: all of them (the files are 1.2 and 2.7 KB), through the reading pass.
    raw, offsets = GZ if compressed else PLAIN
    warc = tmp_path / "a.warc"
    for cut in range(1, len(raw)):
        if cut in offsets:
            continue
        warc.write_bytes(raw[:cut])
        damaged = offsets[bisect.bisect_right(offsets, cut) - 1]
        # each says the record is damaged, and how: a cut inside a record's payload once read "its payload
        # cannot be decoded: Refused: the file ends inside its gzip member", the reader's own exception's name
        with pytest.raises(PDIError, match=rf"a\.warc: the record at offset {damaged}( \([^)]*\))? is damaged: ") as raised:
            read_index(sources_for(warc), limit=1 << 20)
        assert "Refused" not in str(raised.value)


def test_an_empty_file_holds_no_record(tmp_path: Path) -> None:
    (tmp_path / "a.warc").write_bytes(b"")
    with Archive.init(tmp_path / "archive") as opened:
        opened.add_series(S)
        with pytest.raises(PDIError, match=r"a\.warc holds no WARC record"):
            import_warc(opened, tmp_path / "a.warc", S)


def _pdi(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *argv], capture_output=True, text=True, timeout=300, check=False)


def _names(archive: Path) -> list[str]:
    with Archive.open(archive) as opened:
        return sorted(r.unique_id for r in opened.store.iter_representations())


@pytest.mark.parametrize("compressed", [True, False])
def test_the_command_exits_non_zero_and_with_partial_keeps_the_whole_records(tmp_path: Path, compressed: bool) -> None:
    raw, offsets = GZ if compressed else PLAIN
    cut = offsets[3] + 40  # inside the last record (b.txt)
    warc = tmp_path / ("a.warc.gz" if compressed else "a.warc")
    warc.write_bytes(raw[:cut])
    archive = tmp_path / "archive"
    Archive.init(archive).add_series(S)
    refused = _pdi("import", str(warc), "--series", S, "--archive", str(archive))
    assert refused.returncode not in (0, PARTIAL_EXIT), refused.stderr
    assert f"{warc.name}: the record at offset {offsets[3]} is damaged" in refused.stderr
    assert refused.stdout == "" and _names(archive) == []
    kept = _pdi("import", str(warc), "--series", S, "--partial", "--archive", str(archive))
    assert kept.returncode == PARTIAL_EXIT, kept.stderr
    day = datetime.date(2024, 5, 6)
    assert kept.stdout.split() == [
        str(PDI.build(series=S, date=day, foreign_id="http://example.org/", format="related", version=1)),
        str(PDI.build(series=S, date=day, foreign_id="http://example.org/a.txt", format="text", version=1)),
    ]
    assert f"dropped: {warc.name}: the record at offset {offsets[3]} is damaged" in kept.stderr
    assert _names(archive) == ["http://example.org/", "http://example.org/a.txt"]


@pytest.mark.parametrize("cut", [100, 5_000, -5_000, -100, -1])
def test_a_cut_wacz_is_refused_and_imports_nothing(tmp_path: Path, cut: int) -> None:
    raw = (DATA / "site.wacz").read_bytes()
    wacz = tmp_path / "site.wacz"
    wacz.write_bytes(raw[:cut])
    archive = tmp_path / "archive"
    Archive.init(archive).add_series(S)
    for flags in ((), ("--partial",)):
        done = _pdi("import", str(wacz), "--series", S, *flags, "--archive", str(archive))
        assert done.returncode not in (0, PARTIAL_EXIT), done.stderr
        assert "site.wacz is not a WACZ" in done.stderr  # its ZIP directory, at the end, is gone
        assert _names(archive) == []


def test_a_wacz_holding_a_cut_warc_names_the_record(tmp_path: Path) -> None:
    import zipfile

    raw, offsets = GZ
    wacz = tmp_path / "cut.wacz"
    with zipfile.ZipFile(wacz, "w") as zf:  # stored, as WACZ stores its WARCs
        zf.writestr("archive/data.warc.gz", raw[: offsets[2] + 30])
    archive = tmp_path / "archive"
    Archive.init(archive).add_series(S)
    refused = _pdi("import", str(wacz), "--series", S, "--archive", str(archive))
    assert refused.returncode not in (0, PARTIAL_EXIT)
    assert f"cut.wacz!archive/data.warc.gz: the record at offset {offsets[2]} is damaged" in refused.stderr
    assert _names(archive) == []
    kept = _pdi("import", str(wacz), "--series", S, "--partial", "--archive", str(archive))
    assert kept.returncode == PARTIAL_EXIT, kept.stderr
    assert _names(archive) == ["http://example.org/"]


def test_a_damaged_copy_read_again_makes_no_version_with_fewer_parts_and_a_whole_one_after_a_damaged_one_does(
    tmp_path: Path,
) -> None:
    """A page's record read again from a copy of its WARC cut inside its image (``--partial``) is the same capture
    (its WARC-Record-ID): no version without the image is made, and the page's newest version is still the one
    with it. The other way round, a whole copy after a damaged one adds the image as the next version."""
    b = WarcBuilder(gzip=True)
    b.response("http://example.org/", b'<html><body><img src="i.png"><p>hello</p></body></html>', "text/html", DATE)
    image = b.response("http://example.org/i.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40, "image/png", DATE)
    raw = b.out.getvalue()
    whole, cut = tmp_path / "whole.warc.gz", tmp_path / "cut.warc.gz"
    whole.write_bytes(raw)
    cut.write_bytes(raw[: image + 60])  # inside the image's record
    page = PDI.build(series=S, date=datetime.date(2024, 5, 6), foreign_id="http://example.org/", format="related")

    first, second = tmp_path / "first", tmp_path / "second"
    for archive, files in ((first, (whole, cut)), (second, (cut, whole))):
        Archive.init(archive).add_series(S)
        for warc in files:
            done = _pdi("import", str(warc), "--series", S, "--partial", "--archive", str(archive))
            assert done.returncode == (PARTIAL_EXIT if warc == cut else 0), done.stderr
    with Archive.open(first) as opened:
        assert opened.versions(page) == [1]
        assert b"Content-Location: http://example.org/i.png" in opened.get(str(page.with_version(1))).data
    with Archive.open(second) as opened:
        assert opened.versions(page) == [1, 2]
        assert b"Content-Location: http://example.org/i.png" not in opened.get(str(page.with_version(1))).data
        assert b"Content-Location: http://example.org/i.png" in opened.get(str(page.with_version(2))).data
