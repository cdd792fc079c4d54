"""A WACZ export's memory does not grow with the archive: its records are written as they are read.

A child process (a real ``python`` with pdi, measured by the kernel's
``VmHWM``: :func:`support.procnet.peak_kib`) exports a series of N captures,
another one of 10 N; what each grew by over a warmed-up start (a small
export made first, so that every module and buffer is there already) must be
about the same, not ten times. Each WACZ is then what py-wacz's ``wacz
validate`` accepts, and its index and pages list every capture once, in
order.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from pdi.archive import Archive
from pdi.archive.content import Content
from support.procnet import peak_kib

SMALL, LARGE, WARM = "small.example.us", "large.example.us", "warm.example.us"
N = 2_000
BIN = Path(sys.executable).parent

_CHILD = r"""
import sys
from pdi.archive import Archive
from pdi.interop.wacz import export_wacz

archive = Archive.open(sys.argv[1])
export_wacz(archive, sys.argv[2] + ".warm.wacz", series=sys.argv[4])  # every module and buffer used once
print("ready", flush=True)
sys.stdin.readline()
done = export_wacz(archive, sys.argv[2], series=sys.argv[3])
print("done", done.pages, done.documents, done.records, flush=True)
sys.stdin.readline()
"""


def _fill(archive: Archive, series: str, count: int, pages: bool) -> None:
    """``count`` captures of ``series``: texts whose ids are URLs, and (``pages``) one page in ten, an MHTML file."""
    archive.add_series(series)
    at = 0
    while at < count:
        items: list[tuple[list[Content], str | None]] = []
        for i in range(at, min(at + 1000, count)):
            url = f"https://{series}/item/{i:07d}"
            if pages and i % 10 == 0:
                items.append(([Content(_page(url, i), "related")], url))
            else:
                items.append(([Content(f"capture {i} of {series}\n".encode() * 3, "text")], url))
        archive.deposit_batch(series, items)
        at += 1000


def _page(url: str, i: int) -> bytes:
    return (
        "MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary=\"b\"; type=\"text/html\"\r\n\r\n"
        f"--b\r\nContent-Type: text/html; charset=utf-8\r\nContent-Location: {url}\r\n\r\n"
        f"<html><body><img src=\"{url}.png\">page {i}</body></html>\r\n"
        f"--b\r\nContent-Type: text/css\r\nContent-Location: {url}.css\r\n\r\nbody{{color:red}}\r\n--b--\r\n"
    ).encode()


def _grown(location: Path, out: Path, series: str) -> tuple[int, str]:
    """KiB the child's peak resident set grew by exporting ``series`` (over its warmed-up start), and what it said."""
    with subprocess.Popen([sys.executable, "-c", _CHILD, str(location), str(out), series, WARM],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as child:
        assert child.stdin is not None and child.stdout is not None
        try:
            assert child.stdout.readline().strip() == "ready"
            before = peak_kib(child.pid)
            child.stdin.write("\n")
            child.stdin.flush()
            said = child.stdout.readline().strip()
            assert said.startswith("done"), said
            after = peak_kib(child.pid)
            child.stdin.write("\n")
            child.stdin.flush()
            assert child.wait(timeout=120) == 0
        finally:
            if child.poll() is None:
                child.kill()
    return after - before, said


def _validated(wacz: Path) -> None:
    checked = subprocess.run([str(BIN / "wacz"), "validate", "-f", str(wacz)], capture_output=True, text=True,
                             timeout=600)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Validation succeeded, the passed WACZ is valid" in checked.stdout


def test_an_exports_memory_does_not_grow_with_the_archive(tmp_path: Path) -> None:
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        _fill(archive, WARM, 20, True)
        _fill(archive, SMALL, N, True)
        _fill(archive, LARGE, 10 * N, True)
    small, said_small = _grown(location, tmp_path / "small.wacz", SMALL)
    large, said_large = _grown(location, tmp_path / "large.wacz", LARGE)
    # every capture written: a page is its two parts' records, any other document one record (the warcinfo not counted)
    assert said_small == f"done {N // 10} {N - N // 10} {N // 10 * 2 + N - N // 10}"
    assert said_large == f"done {N} {9 * N} {N * 2 + 9 * N}"
    # the listing, the pages, the index's lines and the record of each payload written are not held: ten times the
    # captures is a few MiB more at most (a buffer's rounding), not ten times the memory
    assert large < 2 * small + 8 * 1024, (small, large)
    for wacz in (tmp_path / "small.wacz", tmp_path / "large.wacz"):
        _validated(wacz)
    with zipfile.ZipFile(tmp_path / "large.wacz") as zf:
        lines = zf.read("indexes/index.cdx").decode().splitlines()
        pages = zf.read("pages/pages.jsonl").decode().splitlines()
    assert lines == sorted(lines) and len(lines) == len(set(lines)) == N * 2 + 9 * N
    urls = sorted(json.loads(line.split(" ", 2)[2])["url"] for line in lines)
    expected = sorted([f"https://{LARGE}/item/{i:07d}" for i in range(10 * N)]
                      + [f"https://{LARGE}/item/{i:07d}.css" for i in range(0, 10 * N, 10)])
    assert urls == expected
    assert json.loads(pages[0])["format"] == "json-pages-1.0"
    assert [json.loads(p)["url"] for p in pages[1:]] == [f"https://{LARGE}/item/{i:07d}" for i in range(0, 10 * N, 10)]
