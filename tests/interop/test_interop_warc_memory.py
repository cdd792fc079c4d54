"""Importing a WARC holds no record's payload whole: a child process's peak grows far less than the payload."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from warc_builder import WarcBuilder

from pdi.archive import Archive

S = "web.example.us"
BIG = 80 << 20

# As in tests/test_mhtml_memory.py: a launcher reaps the command and reports its peak
# (a child forked straight from the test process would count the test's own pages).
_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = child.stderr.read()
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
sys.stdout.flush()
sys.stderr.buffer.write(err)
"""


def _import(warc: Path, archive: Path) -> tuple[int, int, str]:
    """Exit status, peak resident KiB and stderr of `pdi import WARC` in a child process."""
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, sys.executable, "-m", "pdi", "import", str(warc), "--series", S,
         "--max-mb", "200", "--archive", str(archive)],
        capture_output=True, text=True, check=True, timeout=600,
    )
    code, peak = done.stdout.split()
    return int(code), int(peak), done.stderr


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
