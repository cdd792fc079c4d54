"""Importing a WARC holds no record's payload whole: a child process's peak grows far less than the payload."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from warc_builder import WarcBuilder

from pdi.archive import Archive
from peak_memory import run_with_peak

S = "web.example.us"
BIG = 80 << 20

def _import(warc: Path, archive: Path) -> tuple[int, int, str]:
    """Exit status, peak resident KiB and stderr of `pdi import WARC` in a child process."""
    with tempfile.TemporaryFile() as err:
        code, peak, _ = run_with_peak(
            [sys.executable, "-m", "pdi", "import", str(warc), "--series", S, "--max-mb", "200",
             "--archive", str(archive)],
            stdout=subprocess.DEVNULL, stderr=err,
        )
        err.seek(0)
        return code, peak, err.read().decode(errors="replace")


def _warc(path: Path, size: int) -> Path:
    b = WarcBuilder(gzip=False)
    b.response("http://example.org/data.bin", os.urandom(size), "application/octet-stream", "2024-05-06T10:00:00Z")
    return b.save(path)


def test_a_large_record_is_imported_in_bounded_memory(tmp_path: Path) -> None:
    for name in ("small", "big"):
        Archive.init(tmp_path / name).add_series(S)
    code, base, err = _import(_warc(tmp_path / "small.warc", 1000), tmp_path / "small")
    assert code == 0, err
    code, peak, err = _import(_warc(tmp_path / "big.warc", BIG), tmp_path / "big")
    assert code == 0, err
    with Archive.open(tmp_path / "big") as opened:
        (record,) = list(opened.store.iter_representations())
        assert record.size == BIG
    grown_mib = (peak - base) / 1024
    assert grown_mib < 40, f"import grew by {grown_mib:.0f} MiB for an {BIG >> 20} MiB record"
