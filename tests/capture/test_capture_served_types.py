"""What a capture writes for a resource served with a `Content-Type` that is no media type, or a multipart one.

Served by a local HTTP server on 127.0.0.1. A security tester's findings: an image served as
``image/ png`` or ``image/png/x`` failed the whole capture with a syntax error once
everything was fetched (pdi's writer refused the type); one served as
``multipart/related; boundary=b``, or such a page, was written as a part of type
``multipart/related`` with no boundary, which no reader (pdi's own neither) can split
(RFC 2046 §5.1.1: a multipart's body is its parts between its boundaries), so the
deposit was refused, ``--force`` kept it, and every later capture of the URL that day
failed reading it back.

Expected: a type that is no ``type/subtype`` of RFC 2045 §5.1 tokens (a space, a second
``/``) counts as none given, as a browser reads it (WHATWG MIME Sniffing §5.1: "If
supplied-type is not a MIME type, the supplied MIME type is undefined"): a frame is then
HTML, a style sheet CSS, anything else ``application/octet-stream``; a ``multipart/*``
type is ``application/octet-stream``, bytes kept as served.
"""

from __future__ import annotations

import datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.archive import Archive, Content
from pdi.capture import capture
from pdi.capture.deposit import deposit_capture
from pdi.cli import cli
from pdi.errors import ParseError
from pdi.mhtml import parse
from pdi.mhtml.check import check

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
PAGE = (
    b'<img src="space.png"><img src="slash.png"><img src="multi.png">'
    b'<iframe src="frame.html"></iframe><link rel="stylesheet" href="s.css">'
)
SERVED = {
    "/page.html": ("text/html", PAGE),
    "/space.png": ("image/ png", PNG + b"1"),
    "/slash.png": ("image/png/x", PNG + b"2"),
    "/multi.png": ("multipart/related; boundary=b", PNG + b"3"),
    "/frame.html": ("text/html/x", b'<img src="in-frame.png">'),
    "/in-frame.png": ("image/png", PNG + b"4"),
    "/s.css": ("text/ css", b"body { background: url(bg.png) }"),
    "/bg.png": ("image/png", PNG + b"5"),
    "/related.html": ("multipart/related; boundary=b", b'<img src="space.png">'),
}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        if self.path not in SERVED:
            self.send_error(404)
            return
        kind, body = SERVED[self.path]
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_parts_served_with_types_that_are_none_or_multipart(server: str) -> None:
    got = capture(server + "/page.html", allow_private=True)
    aggregate = parse(got.mhtml)
    assert got.failures == ()
    typed = {p.location: (p.content_type, p.data) for p in aggregate.parts}
    assert typed == {
        server + "/page.html": ("text/html", PAGE),
        server + "/space.png": ("application/octet-stream", PNG + b"1"),
        server + "/slash.png": ("application/octet-stream", PNG + b"2"),
        server + "/multi.png": ("application/octet-stream", PNG + b"3"),
        server + "/frame.html": ("text/html", b'<img src="in-frame.png">'),  # a frame: read as HTML, its image kept
        server + "/in-frame.png": ("image/png", PNG + b"4"),
        server + "/s.css": ("text/css", b"body { background: url(bg.png) }"),  # a style sheet: read as CSS
        server + "/bg.png": ("image/png", PNG + b"5"),
    }
    assert check(aggregate).ok, check(aggregate).errors


def test_a_page_served_as_multipart_is_kept_as_octets_and_deposited_once_a_day(server: str, tmp_path: Path) -> None:
    url = server + "/related.html"
    got = capture(url, allow_private=True)
    aggregate = parse(got.mhtml)
    assert [(p.location, p.content_type, p.data) for p in aggregate.parts] == [
        (url, "application/octet-stream", SERVED["/related.html"][1])  # not read as a page: its image not fetched
    ]
    Archive.init(tmp_path / "arch").add_series("web.example.us")
    argv = ["capture", url, "--allow-private", "--series", "web.example.us", "--archive", str(tmp_path / "arch")]
    first = CliRunner().invoke(cli, argv)
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(cli, argv)
    assert again.exit_code == 0, again.output
    assert again.stdout == first.stdout and "unchanged: version 1" in again.stderr


def test_a_stored_version_that_cannot_be_read_does_not_stop_the_next_capture(server: str, tmp_path: Path) -> None:
    # What pdi once wrote for a part served as multipart/related: a multipart without a boundary.
    unreadable = (
        b'MIME-Version: 1.0\r\nContent-Type: multipart/related; type="text/html"; boundary="B"\r\n\r\n'
        b"--B\r\nContent-Type: text/html\r\nContent-Location: http://example.org/\r\n\r\n<img src=x>\r\n"
        b"--B\r\nContent-Type: multipart/related\r\nContent-Transfer-Encoding: base64\r\n"
        b"Content-Location: http://example.org/x\r\n\r\naGk=\r\n--B--\r\n"
    )
    with pytest.raises(ParseError, match="no boundary"):
        parse(unreadable)
    noon = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=datetime.UTC)
    archive = Archive.init(tmp_path / "arch", clock=lambda: noon)
    archive.add_series("web.example.us")
    url = server + "/page.html"
    kept = archive.deposit("web.example.us", [Content(unreadable, "related")], foreign_id=url, force=True)[0]
    assert kept.version == 1
    captured = capture(url, allow_private=True).mhtml
    second = deposit_capture(archive, "web.example.us", url, captured)
    assert not second.unchanged
    assert second[0].version == 2 and archive.get(second[0]).data == captured
