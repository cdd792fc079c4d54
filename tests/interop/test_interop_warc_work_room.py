"""An import whose work files fill their disk is a clear error, and deposits nothing.

``pdi import`` keeps some work files in ``$TMPDIR``: a WACZ's deflated WARCs, decompressed there once, and its pages
packed as MHTML once more of them than it holds in memory (``PLAN_IN_MEMORY``, made small here) are crawled. A disk
that fills there (``ENOSPC``, on a real 2 MiB tmpfs mounted for the test) is a storage error (exit 8) naming that
folder and what to do, not a traceback and not a fault of the file being imported; the archive is left as it was
and the work folder removed.
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from warc_builder import WarcBuilder, everything

from pdi.archive import Archive
from pdi.cli import cli
from pdi.errors import ParseError, StoreError
from pdi.interop.warc import import_warc, pages

S = "library.example.us"  # the series conftest's archive has
DATE = "2024-05-06T10:00:00Z"


def _site(pages_: int = 8) -> bytes:
    """``pages_`` pages, each with two images of 200 kB of random octets (3.2 MB in all, more packed): more than
    the small disk holds."""
    b = WarcBuilder(gzip=True)
    for n in range(pages_):
        b.response(f"http://example.org/p{n}/", f'<html><img src="a.png"><img src="b.png"><p>page {n}</p></html>'
                   .encode(), "text/html; charset=utf-8", DATE)
        for image in ("a", "b"):
            b.response(f"http://example.org/p{n}/{image}.png", b"\x89PNG\r\n\x1a\n" + os.urandom(200_000),
                       "image/png", DATE)
    return b.out.getvalue()


@pytest.fixture
def work_on(small_disk: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The small disk as the import's ``TMPDIR``."""
    monkeypatch.setattr(tempfile, "tempdir", str(small_disk))
    return small_disk


def test_pages_packed_past_the_disk_are_a_storage_error_and_nothing_is_deposited(
    archive: Archive, tmp_path: Path, work_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warc = tmp_path / "site.warc.gz"
    warc.write_bytes(_site())
    monkeypatch.setattr(pages, "PLAN_IN_MEMORY", 0)  # every page packed to the work folder
    before = everything(archive)
    with pytest.raises(StoreError) as refused:
        import_warc(archive, warc, S)
    said = str(refused.value)
    assert f"no space left in {work_on} for the import's work files" in said, said
    assert "http://example.org/p" in said and "packed" in said and "TMPDIR" in said, said
    assert "nothing was deposited" in said
    assert everything(archive) == before
    assert os.listdir(work_on) == []  # the work folder removed
    # the same file imports whole where there is room
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    done, _ = import_warc(archive, warc, S)
    assert sum(1 for d in done if d.page) == 8


def test_a_wacz_whose_deflated_warc_fills_the_disk_is_a_storage_error_not_a_damaged_wacz(
    archive: Archive, tmp_path: Path, work_on: Path
) -> None:
    wacz = tmp_path / "site.wacz"
    with zipfile.ZipFile(wacz, "w", zipfile.ZIP_DEFLATED) as zf:  # WACZ stores its WARCs; a deflated one is spooled
        zf.writestr("archive/data.warc.gz", _site())
    before = everything(archive)
    with pytest.raises(StoreError) as refused:
        import_warc(archive, wacz, S)
    assert not isinstance(refused.value, ParseError)
    said = str(refused.value)
    assert f"no space left in {work_on}" in said and "site.wacz!archive/data.warc.gz decompressed" in said, said
    assert everything(archive) == before
    assert os.listdir(work_on) == []


def test_pdi_import_says_it_in_one_line_with_the_storage_errors_status(
    tmp_path: Path, work_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warc = tmp_path / "site.warc.gz"
    warc.write_bytes(_site())
    monkeypatch.setattr(pages, "PLAN_IN_MEMORY", 0)
    location = tmp_path / "cli-archive"
    Archive.init(location).close()
    runner = CliRunner(env={"PDI_ARCHIVE": str(location)})
    assert runner.invoke(cli, ["series", "add", S]).exit_code == 0
    result = runner.invoke(cli, ["import", str(warc), "--series", S])
    assert result.exit_code == 8, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("pdi:")]
    assert len(lines) == 1 and lines[0].startswith("pdi: storage error: no space left in"), result.output
    assert "Traceback" not in result.output
    with Archive.open(location) as opened:
        assert list(opened.iter_names()) == []


def test_a_disk_that_fills_as_the_spooled_warc_is_closed_is_said_the_same(
    archive: Archive, tmp_path: Path, work_on: Path
) -> None:
    # the copy's last 6,000 octets wait in the file's buffer until it is closed: the 2 MiB disk is filled to leave
    # 1 MiB and one page of 4 KiB free, so the first MiB is written and those octets, at the close, find no room
    (work_on / "filler").write_bytes(b"\xff" * ((1 << 20) - 4096))
    wacz = tmp_path / "site.wacz"
    with zipfile.ZipFile(wacz, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("archive/data.warc", os.urandom((1 << 20) + 6000))
    before = everything(archive)
    with pytest.raises(StoreError) as refused:
        import_warc(archive, wacz, S)
    assert f"no space left in {work_on}" in str(refused.value), refused.value
    assert everything(archive) == before
    assert os.listdir(work_on) == ["filler"]
