"""`pdi capture URL --warc OUT.warc.gz`: the capture's HTTP exchanges as WARC, read back by warcio and imported again."""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

from click.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from pdi.archive import Archive
from pdi.cli import cli
from pdi.interop.warc import import_warc

S = "web.example.us"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(30))
CSS = b"body { background: url(bg.png) }\n" * 20

PAGES: dict[str, tuple[int, dict[str, str], bytes]] = {
    "/": (301, {"Location": "/index.html"}, b"moved"),
    "/index.html": (
        200,
        {"Content-Type": "text/html; charset=utf-8"},
        b'<html><head><link rel="stylesheet" href="s.css"></head><body><img src="a.png"><img src="gone.png"></body></html>',
    ),
    "/s.css": (200, {"Content-Type": "text/css", "Content-Encoding": "gzip"}, gzip.compress(CSS, mtime=0)),
    "/a.png": (200, {"Content-Type": "image/png"}, PNG),
    "/bg.png": (200, {"Content-Type": "image/png"}, PNG + b"bg"),
    # thirty images that are not there, each answered with 100 kB: 3 MB of error bodies
    "/errors.html": (200, {"Content-Type": "text/html"},
                     b"<html><body>" + b"".join(b'<img src="missing-%d.png">' % i for i in range(30)) + b"</body></html>"),
}
for _i in range(30):
    PAGES[f"/missing-{_i}.png"] = (404, {"Content-Type": "text/plain"}, b"e" * 100_000)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        status, headers, body = PAGES.get(self.path, (404, {"Content-Type": "text/plain"}, b"not here"))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_capture_writes_its_exchanges_as_warc(server: str, tmp_path: Path) -> None:
    warc = tmp_path / "capture.warc.gz"
    location = str(tmp_path / "archive")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", S, "--archive", location]).exit_code == 0
    result = runner.invoke(
        cli, ["capture", f"{server}/", "--allow-private", "--series", S, "--warc", str(warc), "--archive", location]
    )
    assert result.exit_code == 0, result.output
    name = result.stdout.strip()

    responses: dict[str, tuple[int, bytes]] = {}
    requests: set[str] = set()
    with warc.open("rb") as fh:
        for record in ArchiveIterator(fh):
            uri = record.rec_headers.get_header("WARC-Target-URI")
            if record.rec_type == "response":
                responses[uri] = (int(record.http_headers.get_statuscode()), record.raw_stream.read())
                assert record.rec_headers.get_header("WARC-IP-Address") == "127.0.0.1"
            elif record.rec_type == "request":
                requests.add(uri)
    for path in ("/", "/index.html", "/s.css", "/a.png", "/bg.png", "/gone.png"):
        expected_status, _, expected_body = PAGES.get(path, (404, {}, b"not here"))
        assert responses[server + path] == (expected_status, expected_body), path  # as sent: gzip kept
    assert requests == set(responses)
    checked = subprocess.run([str(Path(sys.executable).parent / "warcio"), "check", str(warc)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    _assert_requests_are_http_1_1(warc)

    # imported, the WARC gives the page the capture deposited, byte for byte
    with Archive.open(location) as captured, Archive.init(tmp_path / "again") as again:
        again.add_series(S)
        done, _ = import_warc(again, warc, S)
        page = next(d for d in done if d.page)
        assert page.url == f"{server}/index.html"
        assert again.get(page.name).data == captured.get(name).data


class _RequestReader(BaseHTTPRequestHandler):
    """The standard library's HTTP/1.1 server parser, fed a request record's block instead of a socket."""

    def __init__(self, block: bytes) -> None:  # no socket: parse_request reads rfile only
        self.rfile = io.BytesIO(block)
        self.wfile = io.BytesIO()
        self.client_address = ("127.0.0.1", 0)
        self.request_version = "HTTP/0.9"
        self.raw_requestline = self.rfile.readline(65537)
        self.parsed = self.parse_request()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        self.error = (code, message)


def _assert_requests_are_http_1_1(warc: Path) -> None:
    """Each request record's block is a whole HTTP/1.1 request (WARC 1.1 §6.4; RFC 9112 §3: method SP target SP version,
    and §3.2: a Host header), as warcio's record parser and the standard library's request parser read it."""
    seen = 0
    with warc.open("rb") as fh:
        for record in ArchiveIterator(fh):
            if record.rec_type != "request":
                continue
            seen += 1
            uri = record.rec_headers.get_header("WARC-Target-URI")
            parts = urlsplit(uri)
            assert record.http_headers.protocol == "GET", uri  # warcio: the method, then "target version"
            assert record.http_headers.statusline == f"{parts.path} HTTP/1.1", uri
            assert record.http_headers.get_header("Host") == parts.netloc, uri
    assert seen == 6
    with warc.open("rb") as fh:
        for record in ArchiveIterator(fh, no_record_parse=True):  # the block, unparsed
            if record.rec_type != "request":
                continue
            uri = record.rec_headers.get_header("WARC-Target-URI")
            block = record.raw_stream.read()
            assert block.endswith(b"\r\n\r\n"), uri  # the header section ends with an empty line
            reader = _RequestReader(block)
            assert reader.parsed, (uri, getattr(reader, "error", None))
            assert (reader.command, reader.path, reader.request_version) == ("GET", urlsplit(uri).path, "HTTP/1.1")
            assert reader.headers["Host"] == urlsplit(uri).netloc


def test_warc_is_not_for_browser_captures(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["capture", "http://127.0.0.1:9/", "--browser", "--warc", str(tmp_path / "x.warc.gz")])
    assert result.exit_code == 2 and "not available with --browser" in result.stderr


def test_the_bodies_a_warc_keeps_count_against_the_whole_captures_limit(server: str, tmp_path: Path) -> None:
    """Errors' and redirects' bodies are kept for the WARC, never packed: --max-mb 0.5 makes the whole 2 MB (4x),
    and thirty 404s of 100 kB each (3 MB) pass it, where a page of 300 such took 1.3 GB."""
    warc = tmp_path / "errors.warc.gz"
    result = CliRunner().invoke(cli, ["capture", f"{server}/errors.html", "--allow-private", "--max-mb", "0.5",
                                      "--warc", str(warc), "-o", str(tmp_path / "page.mhtml")])
    assert result.exit_code == 7, result.output
    assert "kept for the WARC" in result.output and f"limit of {4 * 512 * 1024} bytes" in result.output  # 4 x 0.5 MiB
    assert not warc.exists()
    # without a WARC nothing keeps them: the page is captured, its thirty images missing
    result = CliRunner().invoke(cli, ["capture", f"{server}/errors.html", "--allow-private", "--max-mb", "0.5",
                                      "-o", str(tmp_path / "page.mhtml")])
    assert result.exit_code == 0, result.output
