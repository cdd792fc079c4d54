"""`pdi mhtml ls` on a line-heavy page stays within memory, and a page past the reference limit is a limit (issue 12).

Reported: `ls`, `check` and `unpack` used about 25 times the size of a
line-heavy HTML part (1.16 GB for a 50 MB file). Measured here on a 6 MB
page of 150,000 lines, each with a link: the code before the fix grew by
133 MiB over a one-line page, the fixed code by about 79 MiB (49 MB: 1.1 GB
and 87 s before; 416 MB and a clean limit at a million references after). The peak comes
from the kernel's account of the child process (``os.wait4``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _mhtml(body: bytes) -> bytes:
    return (
        b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="BB"; type="text/html"\r\n\r\n--BB\r\n'
        b"Content-Type: text/html; charset=utf-8\r\nContent-Location: http://example.org/\r\n\r\n"
        + body + b"\r\n--BB--\r\n"
    )


# A small launcher reaps the command and reports its peak: a child forked straight from the
# test process would count the test process's own pages as its peak.
_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = child.stderr.read()
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
sys.stdout.flush()
sys.stderr.buffer.write(err)
"""


def _ls(path: Path, *options: str) -> tuple[int, int, str]:
    """Exit status, peak resident KiB and stderr of `pdi mhtml ls PATH` in a child process."""
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, sys.executable, "-m", "pdi", "mhtml", "ls", str(path), *options],
        capture_output=True, text=True, check=True, timeout=300,
    )
    code, peak = done.stdout.split()
    return int(code), int(peak), done.stderr


def _grown_mib(page: Path, small: Path) -> float:
    """How many MiB more ``pdi mhtml ls`` of ``page`` peaks at than of a small page written to ``small``."""
    small.write_bytes(_mhtml(b"<p>x"))
    code, base, _ = _ls(small)
    assert code == 0
    code, peak, err = _ls(page)
    assert code == 0, err
    return (peak - base) / 1024


def test_a_line_heavy_page_is_read_in_bounded_memory(tmp_path: Path) -> None:
    lines = b"".join(b'<p>line %d <a href="p%d.html">x</a>\r\n' % (i, i % 50) for i in range(150_000))
    big, small = tmp_path / "big.mhtml", tmp_path / "small.mhtml"
    big.write_bytes(_mhtml(b"<html><body>\r\n" + lines + b"</body></html>\r\n"))
    grown_mib = _grown_mib(big, small)
    assert grown_mib < 110, f"ls grew by {grown_mib:.0f} MiB for a {big.stat().st_size / 1e6:.0f} MB file"


def test_a_page_past_the_reference_limit_is_a_limit(tmp_path: Path) -> None:
    page = tmp_path / "refs.mhtml"
    page.write_bytes(_mhtml(b"".join(b'<img src="i%d.png">' % i for i in range(2_000))))
    code, _, err = _ls(page, "--max-references", "1000")
    assert code == 7
    assert err.startswith("pdi: limit exceeded: part 0") and "past 1,000 references (the limit for one file)" in err


def test_a_base64_body_of_many_padded_runs_is_decoded_in_bounded_memory(tmp_path: Path) -> None:
    """Reported: a base64 part of "QQ==" over and over (data after padding: each padded run decoded on its own)
    was split into a list of its runs and a list of their decodings, 23 times its size (48 MB: 1.1 GB). Now the
    runs are decoded one by one into one buffer, and what they decode to is the same."""
    from pdi.mhtml import parse

    runs = 2_000_000
    page = tmp_path / "runs.mhtml"
    page.write_bytes(
        b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="BB"; type="text/html"\r\n\r\n--BB\r\n'
        b"Content-Type: text/html\r\nContent-Location: http://example.org/\r\n\r\n<img src=a.png>\r\n--BB\r\n"
        b"Content-Type: image/png\r\nContent-Transfer-Encoding: base64\r\nContent-Location: http://example.org/a.png"
        b"\r\n\r\n" + b"QQ==" * runs + b"\r\n--BB--\r\n")
    grown_mib = _grown_mib(page, tmp_path / "small.mhtml")
    assert grown_mib < 60, f"ls grew by {grown_mib:.0f} MiB for a {page.stat().st_size / 1e6:.0f} MB file"
    (image,) = [part for part in parse(page.read_bytes()).parts if part.content_type == "image/png"]
    assert image.data == b"A" * runs
