"""`pdi capture --timeout` holds for reading what was fetched, and a tag's attributes cost memory
in proportion to the limits, not to the page.

A security tester's pages, served by a local HTTP server on 127.0.0.1: one ``<img>`` of
6.5 million attributes (44 MB) took 20.7 s under ``--timeout 10``, exit 0, at 3.48 GB; four
frames of it 90 s. The reading of a page runs on the capture's event loop, where no
``asyncio`` timeout can interrupt it, and each page had a minute of its own. Python's
regular expressions kept some 150 octets for each repetition of a group, so a tag of
millions of attributes, or of millions of spaces (in a start tag, between its attributes,
in an end tag), took gigabytes: those are read a match at a time now, and a start tag may
have 10,000 attributes (``pdi.mhtml.limits.MAX_ATTRIBUTES``; HTML sets no bound, browsers
write a few dozen). Exit 7 is :class:`~pdi.errors.LimitError`'s
(``docs/reference/exit-codes.md``).
"""

from __future__ import annotations

import sys
import time
from functools import cache
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from pdi.capture import Limits, capture
from pdi.capture.rendered import Document, pack_rendered
from pdi.errors import LimitError
from pdi.mhtml import parse
from pdi.mhtml.limits import Deadline
from peak_memory import run_with_peak

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
SPACES = 8_000_000


@cache
def busy() -> bytes:
    """20 MB of tags of 5,000 attributes each, within every bound: seconds of reading."""
    return (b"<b" + b" a" * 5000 + b">") * 2000


@cache
def crowded() -> bytes:
    """One image of two million attributes (4 MB): past the bound on one tag."""
    return b'<img src="a.png"' + b" a" * 2_000_000 + b">"


@cache
def spaced() -> bytes:
    """Millions of spaces where a tag allows them: before and after an attribute, in an end tag,
    and as "/ " between a start tag's name and its attribute (32 MB)."""
    return (
        b"<img" + b" " * SPACES + b'src="a.png"' + b" " * SPACES + b">"
        + b"</a" + b" " * SPACES + b">"
        + b"<img" + b"/ " * (SPACES // 2) + b'src="b.png">'
    )


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        kind = "text/html"
        if self.path == "/busy.html":
            body = busy()
        elif self.path == "/frames.html":
            body = b"".join(b'<iframe src="busy.html?%d"></iframe>' % n for n in range(4))
        elif self.path.startswith("/busy.html?"):
            body = busy()
        elif self.path == "/crowded.html":
            body = crowded()
        elif self.path == "/spaced.html":
            body = spaced()
        elif self.path.endswith(".png"):
            kind, body = "image/png", PNG
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_the_timeout_stops_a_capture_while_it_reads_a_page(server: str) -> None:
    started = time.monotonic()
    with pytest.raises(LimitError, match=r"^capturing http://\S+/busy\.html took longer than 1 s$"):
        capture(server + "/busy.html", allow_private=True, limits=Limits(total_timeout=1))
    # Reading the page takes many seconds (its 10 million attributes); the capture stops at its second.
    assert time.monotonic() - started < 1 + 4


def _capture_cli(url: str, tmp_path: Path, *options: str) -> tuple[int, int, list[str], Path]:
    """``pdi capture URL --allow-private [options] -o FILE`` as a process: its exit status, its peak memory (KiB),
    the lines it wrote to standard error, and the file it was to write."""
    out, err = tmp_path / "c.mht", tmp_path / "err"
    with err.open("wb") as stderr:
        status, peak_kib, _ = run_with_peak(
            [sys.executable, "-m", "pdi", "capture", url, "--allow-private", *options, "-o", str(out)], stderr=stderr)
    return status, peak_kib, err.read_text().splitlines(), out


def test_cli_timeout_covers_the_frames_read_one_after_another(server: str, tmp_path: Path) -> None:
    started = time.monotonic()
    status, peak_kib, lines, out = _capture_cli(server + "/frames.html", tmp_path, "--timeout", "2")
    assert status == 7, lines
    assert lines == [f"pdi: limit exceeded: capturing {server}/frames.html took longer than 2 s"]
    assert time.monotonic() - started < 2 + 8  # the interpreter's start and the four fetches besides
    assert not out.exists()
    # the four 20 MB frames as fetched, and one read at a time
    assert peak_kib < 300 * 1024, f"peak {peak_kib // 1024} MiB"


def test_a_tag_of_millions_of_attributes_is_refused_in_bounded_memory(server: str, tmp_path: Path) -> None:
    status, peak_kib, lines, out = _capture_cli(server + "/crowded.html", tmp_path)
    assert status == 7, lines
    assert lines == [
        f"pdi: limit exceeded: reading {server}/crowded.html: the start tag at character 0 has more than 10,000"
        " attributes (the limit for one tag)"
    ]
    assert peak_kib < 150 * 1024, f"peak {peak_kib // 1024} MiB"
    assert not out.exists()


def test_millions_of_spaces_in_tags_are_read_in_bounded_memory(server: str, tmp_path: Path) -> None:
    status, peak_kib, lines, out = _capture_cli(server + "/spaced.html", tmp_path)
    assert status == 0, lines
    # Both images are the page's (HTML §13.2.5.32-.36: white space and "/" separate attributes; the end tag's
    # spaces are passed over to its ">"), and the page is kept byte for byte.
    parts = parse(out.read_bytes()).parts
    assert [p.location for p in parts] == [f"{server}/spaced.html", f"{server}/a.png", f"{server}/b.png"]
    assert parts[0].data == spaced()
    # the 32 MB page as fetched, decoded and written (the regular expressions alone took 3 GB)
    assert peak_kib < 400 * 1024, f"peak {peak_kib // 1024} MiB"


def test_packing_a_rendered_page_stops_at_the_capture_deadline() -> None:
    # what `pdi capture --browser` packs once Chromium is done: the page as the browser serialized it
    page = Document("http://example.org/", busy().decode("ascii"), "UTF-8", "text/html")
    started = time.monotonic()
    with pytest.raises(LimitError, match=r"^capturing http://example\.org/ took longer than 1 s$"):
        pack_rendered(page.url, [page], {}, deadline=Deadline.after(1, "capturing http://example.org/ took longer than 1 s"))
    assert time.monotonic() - started < 1 + 4
    with pytest.raises(LimitError, match=r"^past$"):  # a deadline already passed: nothing is read
        pack_rendered(page.url, [page], {}, deadline=Deadline(time.monotonic() - 1, "past"))
