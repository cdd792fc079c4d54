"""`pdi capture` with httpx against a local HTTP server the tests start on 127.0.0.1."""

from __future__ import annotations

import datetime
import socket
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.capture import Limits, capture, check_address
from pdi.cli import cli
from pdi.errors import LimitError, ParseError, UnsupportedError
from pdi.mhtml import parse

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16

SJIS_PAGE = '<html><head><title>日本語</title></head><body><p>表示</p><img src="a.png"></body></html>'.encode("shift_jis")

PAGES: dict[str, tuple[int, dict[str, str], bytes]] = {
    "/index.html": (
        200,
        {"Content-Type": "text/html; charset=utf-8"},
        b'<html><head><link rel="stylesheet" href="s.css"></head><body style="background: url(inline.png)">'
        b'<img src="a.png"><img src="r"><img src="missing.png"><iframe src="frame.html"></iframe>'
        b'<a href="elsewhere.html">a link</a></body></html>',
    ),
    "/s.css": (200, {"Content-Type": "text/css"}, b'@import "imp.css";\nbody { background: url(bg.png) }\n'),
    "/imp.css": (200, {"Content-Type": "text/css"}, b"p { background: url('img/deep.png') }\n"),
    "/frame.html": (200, {"Content-Type": "text/html"}, b'<img src="a.png"><img src="f.png">'),
    "/a.png": (200, {"Content-Type": "image/png"}, PNG + b"a"),
    "/bg.png": (200, {"Content-Type": "image/png"}, PNG + b"bg"),
    "/inline.png": (200, {"Content-Type": "image/png"}, PNG + b"inline"),
    "/img/deep.png": (200, {"Content-Type": "image/png"}, PNG + b"deep"),
    "/f.png": (200, {"Content-Type": "image/png"}, PNG + b"f"),
    "/r": (302, {"Location": "/redirected/target.png"}, b""),
    "/redirected/target.png": (200, {"Content-Type": "image/png"}, PNG + b"target"),
    "/big.html": (200, {"Content-Type": "text/html"}, b"<p>" + b"x" * 5000),
    "/loop": (302, {"Location": "/loop"}, b""),
    "/sjis.html": (200, {"Content-Type": "text/html; charset=Shift_JIS"}, SJIS_PAGE),
    "/moved": (301, {"Location": "/index.html"}, b""),
    "/many.html": (200, {"Content-Type": "text/html"}, b"".join(b'<img src="slow/%d.png">' % i for i in range(12))),
    "/failing.html": (503, {"Content-Type": "text/plain", "Retry-After": "120"}, b"down for maintenance"),
    "/refused.html": (403, {"Content-Type": "text/plain"}, b"no robots"),
    "/gone.html": (410, {"Content-Type": "text/plain"}, b"gone"),
}


class Handler(BaseHTTPRequestHandler):
    active = 0
    peak = 0
    served_slow = 0
    slow_total = 12  # the images of /many.html
    served_changing = 0
    lock = threading.Lock()
    slow_turn = threading.Condition(lock)
    # /slow-root.html answers only when the test lets it (after the capture gave up)
    root_released = threading.Event()

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        path = self.path
        if path.startswith("/slow/"):
            # Count requests in flight at once. Each waits until three are in (or all that are
            # left are), so a client that keeps three going reaches a peak of exactly three,
            # however the threads are scheduled; one that sends more at once goes past it.
            with Handler.slow_turn:
                Handler.active += 1
                Handler.peak = max(Handler.peak, Handler.active)
                Handler.slow_turn.notify_all()
                Handler.slow_turn.wait_for(
                    lambda: Handler.active >= 3 or Handler.served_slow + Handler.active >= Handler.slow_total,
                    timeout=20,
                )
                Handler.active -= 1
                Handler.served_slow += 1
                Handler.slow_turn.notify_all()
            status, headers, body = 200, {"Content-Type": "image/png"}, PNG + path.encode()
        elif path == "/changing.html":
            with Handler.lock:
                Handler.served_changing += 1
                body = b"<p>edition %d</p>" % Handler.served_changing
            status, headers = 200, {"Content-Type": "text/html"}
        elif path == "/slow-root.html":
            Handler.root_released.wait(timeout=60)
            status, headers, body = 200, {"Content-Type": "text/html"}, b"late"
        else:
            status, headers, body = PAGES.get(path, (404, {"Content-Type": "text/plain"}, b"not here"))
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


def test_capture_page_with_everything_it_needs(server: str) -> None:
    got = capture(server + "/index.html", allow_private=True)
    agg = parse(got.mhtml)
    parts = {p.location: p.data for p in agg.parts}
    assert parts == {
        server + "/index.html": PAGES["/index.html"][2],
        server + "/s.css": PAGES["/s.css"][2],
        server + "/imp.css": PAGES["/imp.css"][2],
        server + "/frame.html": PAGES["/frame.html"][2],
        server + "/a.png": PNG + b"a",
        server + "/bg.png": PNG + b"bg",
        server + "/inline.png": PNG + b"inline",
        server + "/img/deep.png": PNG + b"deep",
        server + "/f.png": PNG + b"f",
        server + "/r": PNG + b"target",  # labelled with the URL the page asked for
    }
    assert agg.root.location == server + "/index.html"
    assert agg.root.charset == "utf-8"
    assert [(h.status, h.source, h.target) for h in got.redirects] == [
        (302, server + "/r", server + "/redirected/target.png")
    ]
    assert [f.url for f in got.failures] == [server + "/missing.png"]
    assert "404" in got.failures[0].reason
    unsatisfied = sorted(r.uri or "" for r in agg.references if r.status == "unsatisfied")
    assert unsatisfied == [server + "/elsewhere.html", server + "/missing.png"]
    assert got.parts == 10


def test_capture_root_redirect_recorded_and_labelled_with_final_url(server: str) -> None:
    got = capture(server + "/moved", allow_private=True)
    assert got.final_url == server + "/index.html"
    assert [(h.status, h.target) for h in got.redirects][:1] == [(301, server + "/index.html")]
    assert parse(got.mhtml).root.location == server + "/index.html"


def test_capture_is_deterministic(server: str) -> None:
    assert capture(server + "/index.html", allow_private=True).mhtml == capture(server + "/index.html", allow_private=True).mhtml


def test_capture_shift_jis_page_keeps_bytes_and_charset(server: str) -> None:
    agg = parse(capture(server + "/sjis.html", allow_private=True).mhtml)
    assert agg.root.data == SJIS_PAGE
    assert agg.root.charset == "Shift_JIS"
    assert "<title>日本語</title>" in agg.root.text()


def test_capture_refuses_private_addresses(server: str) -> None:
    with pytest.raises(UnsupportedError, match="allow-private"):
        capture(server + "/index.html")
    port = server.rsplit(":", 1)[1]
    with pytest.raises(UnsupportedError, match="allow-private"):
        capture(f"http://localhost:{port}/index.html")


@pytest.mark.parametrize(
    "address", ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "fe80::1", "fc00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1"]
)
def test_check_address_refuses(address: str) -> None:
    with pytest.raises(UnsupportedError):
        check_address("h", address, allow_private=False)
    check_address("h", address, allow_private=True)


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"])
def test_check_address_allows_public(address: str) -> None:
    check_address("h", address, allow_private=False)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)", "gopher://x/"])
def test_capture_only_http(url: str) -> None:
    with pytest.raises(UnsupportedError):
        capture(url, allow_private=True)


def test_capture_bad_url() -> None:
    with pytest.raises((ParseError, UnsupportedError)):
        capture("http://", allow_private=True)


def test_capture_size_limit(server: str) -> None:
    with pytest.raises(LimitError, match="limit"):
        capture(server + "/big.html", allow_private=True, limits=Limits(max_resource_bytes=1000))
    with pytest.raises(LimitError, match="limit"):
        capture(server + "/index.html", allow_private=True, limits=Limits(max_total_bytes=400))


def test_capture_timeout(server: str) -> None:
    Handler.root_released.clear()
    try:
        with pytest.raises(LimitError, match="timed out"):
            capture(server + "/slow-root.html", allow_private=True, limits=Limits(read_timeout=0.5))
        # It gave up before the server ever answered: the answer is still held back.
        assert not Handler.root_released.is_set()
    finally:
        Handler.root_released.set()


def test_capture_redirect_loop(server: str) -> None:
    with pytest.raises(LimitError, match="redirects"):
        capture(server + "/loop", allow_private=True, limits=Limits(max_redirects=3))


def test_capture_concurrency_limit(server: str) -> None:
    Handler.peak = Handler.served_slow = 0
    got = capture(server + "/many.html", allow_private=True, limits=Limits(concurrency=3))
    assert got.parts == 13
    assert Handler.peak == 3


def test_capture_progress_reported(server: str) -> None:
    seen: list[tuple[int, int]] = []
    capture(server + "/index.html", allow_private=True, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1][0] == seen[-1][1] == 11  # the root, 9 parts and the missing one


def test_cli_capture_to_file_and_archive(server: str, tmp_path: object) -> None:
    from pathlib import Path

    from pdi.archive import Archive
    from pdi.identifier import PDI

    folder = Path(str(tmp_path))
    archive = Archive.init(folder / "arch")
    archive.add_series("web.example.us")
    out = folder / "page.mht"
    url = server + "/index.html"
    before = datetime.datetime.now(datetime.UTC).date()
    result = CliRunner().invoke(
        cli,
        ["capture", url, "--allow-private", "-o", str(out), "--series", "web.example.us", "--archive", str(folder / "arch")],
    )
    after = datetime.datetime.now(datetime.UTC).date()
    assert result.exit_code == 0, result.output
    printed = result.stdout.strip().splitlines()[-1]
    pdi = PDI.parse(printed)
    assert pdi.series_name == "web.example.us"
    assert pdi.date in (before, after)  # the GMT day of the capture (also across midnight)
    assert pdi.unique_id == url  # the URL, encapsulated (draft line 399)
    assert pdi.format == "related"
    assert pdi.version == 1
    assert "missing: " in result.stderr and "redirect 302" in result.stderr
    assert Archive.open(folder / "arch").get(printed).data == out.read_bytes()
    refused = CliRunner().invoke(cli, ["capture", url, "-o", str(out)])
    assert refused.exit_code == 6
    usage = CliRunner().invoke(cli, ["capture", url])
    assert usage.exit_code == 2


@pytest.mark.parametrize(("path", "status", "words"), [
    ("/not-there.html", 4, "answered HTTP 404"),  # not found (RFC 9110 §15.5.5), and 410 gone: exit 4
    ("/gone.html", 4, "answered HTTP 410"),
    ("/failing.html", 16, "answered HTTP 503"),  # the server's own failure: a remote error, try again later
    ("/refused.html", 16, "answered HTTP 403"),  # it refused: the page may well be there
])
def test_cli_capture_says_whether_the_page_is_not_there_or_its_server_failed(
    server: str, tmp_path: Path, path: str, status: int, words: str
) -> None:
    # docs/reference/exit-codes.md: 4 is "not found", 16 "another server pdi asked could not be reached in time or
    # answered with a failure of its own"; a script that captures pages retries the one and not the other
    result = CliRunner().invoke(cli, ["capture", server + path, "--allow-private", "-o", str(tmp_path / "p.mht")])
    assert result.exit_code == status, result.output
    assert f"{server}{path} {words}" in result.stderr
    assert not (tmp_path / "p.mht").exists()


def test_cli_capture_of_a_server_not_listening_is_a_remote_error(tmp_path: Path) -> None:
    with socket.socket() as holder:  # a port of this machine that nothing listens on while the capture runs
        holder.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{holder.getsockname()[1]}/page.html"
        result = CliRunner().invoke(cli, ["capture", url, "--allow-private", "-o", str(tmp_path / "p.mht")])
    assert result.exit_code == 16, result.output
    assert f"cannot fetch {url}: " in result.stderr


def test_capture_same_url_same_day_is_a_new_version_only_when_the_page_changed(
    server: str, tmp_path: object
) -> None:
    from pathlib import Path

    from pdi.archive import Archive
    from pdi.capture.deposit import deposit_capture
    from pdi.identifier import PDI

    folder = Path(str(tmp_path))
    # A fixed clock: every capture of this test falls on one GMT day, whenever it runs.
    noon = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=datetime.UTC)
    archive = Archive.init(folder / "arch", clock=lambda: noon)
    archive.add_series("web.example.us")

    def run(url: str) -> PDI:
        return deposit_capture(archive, "web.example.us", url, capture(url, allow_private=True).mhtml)[0]

    changing = server + "/changing.html"
    first, second = run(changing), run(changing)
    # One document (the URL on its day), two versions: the draft's monotonic versions.
    assert first.date == noon.date()
    assert first.without_fragment().with_version(2) == second
    assert (first.version, second.version) == (1, 2)
    assert b"edition" in archive.get(first).data
    assert archive.get(first).data != archive.get(second).data
    assert archive.versions(first) == [1, 2]
    # An unchanged page is not stored twice: the same name comes back.
    steady = server + "/index.html"
    assert run(steady) == run(steady)
    assert archive.versions(PDI.build(series="web.example.us", date=first.date, foreign_id=steady, format="related")) == [1]
