"""``pdi verify --signatures URL`` against a stranger's resolver (pdi.cli.manifest_check): what it keeps of the
pages it walks, and what it reads of each page's timestamp. The resolver is a few lines of ``http.server`` serving
manifests signed with the test's key (pdi.signing, whose signatures tests/test_signing.py checks with jwcrypto)."""

from __future__ import annotations

import http.server
import tracemalloc
import urllib.parse

from pdi.cli import manifest_check
from pdi.signing import SigningKey, manifest_payload, sign_manifest
from support.handler_server import handler_server

KEY = SigningKey.generate()
SERIES = "a.example.us"
#: A cursor as long as a URL can carry to ask for the page after it (httpx builds none past 65,536 characters).
CURSOR_LENGTH = 60_000


def cursor(number: int) -> str:
    return f"{number:08d}" + "c" * (CURSOR_LENGTH - 8)


def test_the_cursors_walked_are_kept_as_digests_not_as_they_came() -> None:
    """Found by an attack (2026-11-27): to find a loop, every ``next`` cursor gone on from was kept as it came, up
    to 100,000 pages of 60,000-character cursors (6 GB); ``Peer.manifest`` keeps each one's SHA-256, and so does
    this walk now. 120 pages of such cursors: 7 MB kept before; now the cursors keep some kilobytes, and
    what else the walk holds (the last page, the client's last URL) about one."""
    pages = 120

    class Pages(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            after = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("after", [None])[0]
            number = 0 if after is None else int(after[:8]) + 1
            jws = sign_manifest(KEY, manifest_payload(SERIES, None, [], after=after, next_after=(
                cursor(number) if number < pages - 1 else None))).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(jws)))
            self.end_headers()
            self.wfile.write(jws)

        def log_message(self, *args: object) -> None:
            pass

    with handler_server(Pages) as base:
        walk = manifest_check._manifests(f"{base}api/manifest?series={SERIES}", [KEY.public])
        tracemalloc.start()
        try:
            next(walk)
            urllib.parse.clear_cache()  # urlsplit keeps the last 128 URLs it split (the server's and the client's)
            before = tracemalloc.get_traced_memory()[0]
            walked = 1 + sum(1 for _ in walk)
            urllib.parse.clear_cache()
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
    assert walked == pages
    assert kept < 3 << 20, f"{kept:,} octets kept after {pages} pages"


def test_a_loop_of_long_cursors_is_still_found() -> None:
    import pytest

    from pdi.errors import LimitError

    class Loop(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            after = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("after", [None])[0]
            following = cursor(1) if after in (None, cursor(2)) else cursor(2)
            jws = sign_manifest(KEY, manifest_payload(SERIES, None, [], after=after, next_after=following)).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(jws)))
            self.end_headers()
            self.wfile.write(jws)

        def log_message(self, *args: object) -> None:
            pass

    with handler_server(Loop) as base, pytest.raises(LimitError, match=(
            rf"its next page starts after {cursor(1)[:200]!r}… again \(a loop\)$")):
        for _ in manifest_check._manifests(f"{base}api/manifest?series={SERIES}", [KEY.public]):
            pass


def test_a_page_s_timestamp_is_read_no_further_than_a_timestamp_may_be() -> None:
    """Found by an attack (2026-11-27): each manifest page's ``.tsr`` was read up to a manifest page's bound (64 MiB)
    before being refused at a timestamp's (1 MiB, pdi.rfc3161.MAX_RESPONSE): 64 MiB read and held a page. Now the
    read stops past 1 MiB; a ``.tsr`` of 64 MiB is sent here, and what the server could write before the client
    closed is counted (1 MiB and the sockets' buffers now; the whole 64 MiB before)."""
    import threading

    from pdi.cli.manifest_check import SignatureReport, _check_page_timestamp
    from pdi.rfc3161 import MAX_RESPONSE

    sent: list[int] = []
    done = threading.Event()
    chunk = b"\x30" * (64 << 10)

    class Endless(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            count = 0
            try:
                self.send_response(200)
                self.send_header("Content-Length", str(64 << 20))
                self.end_headers()
                for _ in range(1024):
                    self.wfile.write(chunk)
                    count += len(chunk)
            except OSError:
                pass
            finally:
                sent.append(count)
                done.set()

        def log_message(self, *args: object) -> None:
            pass

    report = SignatureReport()
    with handler_server(Endless) as base:
        url = f"{base}api/manifest?series={SERIES}"
        _check_page_timestamp(url, "a.b.c", None, report)
        assert done.wait(30)
    where = f"{base}api/manifest.tsr?series={SERIES}"
    assert [(p.kind, p.names) for p in report.problems] == [("timestamp", (where,))]
    assert report.problems[0].detail == f"the manifest's timestamp {where} is larger than {MAX_RESPONSE} octets"
    assert sent[0] < 16 << 20, f"{sent[0]:,} octets sent"
