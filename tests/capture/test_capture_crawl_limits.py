"""What a page can make a crawl hold: references, resources and the parts packed from them.

Served by a local HTTP server on 127.0.0.1. A page is read for the references it
needs (:func:`pdi.mhtml.write.needed_references`), then each new URL is fetched,
and the MHTML written holds a resource once for each URL with fragment the pages
name it by (as Chromium labels its parts). Each of the three can be made large by
a small page; each is bounded by :class:`pdi.capture.Limits` and stops with a
:class:`~pdi.errors.LimitError` (exit 7) before the cost is paid.
"""

from __future__ import annotations

import re
import sys
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from pdi.capture import Limits, capture
from pdi.capture.crawl import PART_HEAD
from pdi.errors import LimitError
from pdi.mhtml import parse
from peak_memory import run_with_peak

IMAGE = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 400  # 102,408 octets
asked: list[str] = []
lock = threading.Lock()


def page(path: str) -> bytes:
    """The pages, by path: ``/frags-N`` names one image by N fragments, ``/many-N`` N images,
    ``/same-N`` one image N times."""
    kind, _, count = path.strip("/").partition("-")
    n = int(count)
    if kind == "frags":
        return b"".join(b'<img src="i.png#%d">' % i for i in range(n))
    if kind == "many":
        return b"".join(b'<img src="i%d.png">' % i for i in range(n))
    if kind == "base":  # a base 1,001 octets long: each reference resolves to a URL of over a kilobyte
        return b'<base href="/' + b"d/" * 500 + b'">' + b"".join(b'<img src="i.png#%d">' % i for i in range(n))
    return b'<img src="i.png">' * n


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        with lock:
            asked.append(self.path)
        if self.path.endswith(".png"):
            kind, body = "image/png", IMAGE
        else:
            kind, body = "text/html", page(self.path)
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(autouse=True)
def _forget() -> None:
    with lock:
        asked.clear()


def packed(server: str, page: int, labels: int) -> int:
    """What the parts of /frags-N come to: the page and one image a label, each with its label and header fields."""
    root = page + len(f"{server}/frags-{labels}") + PART_HEAD
    return root + sum(len(IMAGE) + len(f"{server}/i.png#{i}") + PART_HEAD for i in range(labels))


def test_fragments_of_one_image_are_parts_and_count_against_the_total(server: str) -> None:
    # Five labels of one 102,408-octet image and the 95-octet page: 512,135 octets of bodies, and the labels.
    assert packed(server, 95, 5) < 600_000
    got = capture(server + "/frags-5", allow_private=True, limits=Limits(max_total_bytes=600_000))
    parts = parse(got.mhtml).parts
    assert [p.location for p in parts] == [server + "/frags-5"] + [f"{server}/i.png#{i}" for i in range(5)]
    assert all(p.data == IMAGE for p in parts[1:])
    assert asked.count("/i.png") == 1  # fetched once, written five times
    # Six labels are 614,562 octets of bodies: past the limit, though only 102,522 were fetched.
    with pytest.raises(LimitError, match=rf"would be {packed(server, 114, 6):,} bytes packed, larger than the limit of 600,000"):
        capture(server + "/frags-6", allow_private=True, limits=Limits(max_total_bytes=600_000))


def test_the_urls_parts_are_named_by_are_bounded_as_they_are_made(server: str) -> None:
    # 200 references under a base of 1,001 octets: each label over a kilobyte, some 213 KB in all
    with pytest.raises(LimitError, match=r"name their parts by URLs of more than 100,000 octets in all"):
        capture(server + "/base-200", allow_private=True, limits=Limits(max_label_octets=100_000))
    assert asked == ["/base-200"]  # refused while the page was read: nothing else fetched
    got = capture(server + "/base-50", allow_private=True, limits=Limits(max_label_octets=100_000))
    assert len(parse(got.mhtml).parts) == 51


def test_a_page_of_too_many_resources_is_refused_before_any_is_fetched(server: str) -> None:
    # the page, the bound, and the one reference past it (the 501st image, i500.png), named
    with pytest.raises(LimitError, match=rf"^{re.escape(server)}/many-501 needs more than 500 resources: the one"
                                         rf" past them is {re.escape(server)}/i500\.png$"):
        capture(server + "/many-501", allow_private=True)
    assert asked == ["/many-501"]
    got = capture(server + "/many-500", allow_private=True, limits=Limits(max_total_bytes=60_000_000))
    assert len(parse(got.mhtml).parts) == 501


def test_references_are_counted_across_the_capture(server: str) -> None:
    # The same image named 100,001 times: one resource, one label, 100,001 references read.
    with pytest.raises(LimitError, match=r"takes the capture past 100,000 references \(the limit for one capture\)"):
        capture(server + "/same-100001", allow_private=True)
    assert asked == ["/same-100001"]
    got = capture(server + "/same-1000", allow_private=True, limits=Limits(max_references=1000))
    assert [p.location for p in parse(got.mhtml).parts] == [server + "/same-1000", server + "/i.png"]
    with pytest.raises(LimitError, match="past 999 references"):
        capture(server + "/same-1000", allow_private=True, limits=Limits(max_references=999))


def test_a_page_of_a_million_references_is_refused_in_bounded_memory(server: str, tmp_path: Path) -> None:
    # 17 MB of <img src="i.png">: read whole, the references alone took 612 MB.
    status, peak_kib, _ = run_with_peak(
        [sys.executable, "-m", "pdi", "capture", server + "/same-1000000", "--allow-private", "-o", str(tmp_path / "c.mht")],
        stderr=-1,
    )
    assert status == 7
    assert peak_kib < 250 * 1024, f"peak {peak_kib // 1024} MiB"
    assert not (tmp_path / "c.mht").exists()
