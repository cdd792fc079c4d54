"""Debian's Chromium writes MHTML from local test pages; we read it back with every part and reference checked.

The tests start their own HTTP server on 127.0.0.1 and their own headless
Chromium (``/usr/bin/chromium``, which ``scripts/bootstrap`` installs).
Chromium's Content-IDs are random, so parts are identified by their
Content-Location, or (for the style sheets Chromium makes of ``<style>``
elements) by their text.
"""

from __future__ import annotations

import datetime
import struct
import zlib
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.capture import capture_with_browser, unpack_to
from pdi.cli import cli
from pdi.errors import LimitError, NotFoundError, ParseError, PDIError, UnsupportedError
from pdi.mhtml import Aggregate, Part, parse
from pdi.mhtml.unpack import plan


def png(seed: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(bytes((0, seed, 0, 0))))
        + chunk(b"IEND", b"")
    )


IMAGES = {name: png(i + 1) for i, name in enumerate(["a", "bg", "inl", "fr", "st"])}
SJIS_TEXT = "日本語の表示"

FILES: dict[str, tuple[str, bytes]] = {
    "/main.html": (
        "text/html",
        b'<!doctype html><html><head><base href="/sub/"><link rel="stylesheet" href="s.css">'
        b"<style>h2 { background: url(img/st.png) }</style></head><body>"
        b"<h2>S</h2><h1 style=\"background: url('img/inl.png')\">T</h1>"
        b'<img src="img/a.png"><iframe src="frame.html"></iframe><iframe src="/sjis.html"></iframe>'
        b'<a href="next.html">next</a><script>document.body.insertAdjacentHTML("beforeend", "<p id=js>built by script</p>")</script>'
        b"</body></html>",
    ),
    "/sub/s.css": ("text/css", b"body { background: url(img/bg.png) }"),
    "/sub/frame.html": ("text/html", b'<p style="color: red">frame <img src="img/fr.png"></p>'),
    "/sjis.html": (
        "text/html",
        f'<html><head><meta charset="shift_jis"></head><body><p>{SJIS_TEXT}</p><img src="sub/img/a.png"></body></html>'.encode(
            "shift_jis"
        ),
    ),
    **{f"/sub/img/{name}.png": ("image/png", data) for name, data in IMAGES.items()},
    "/big.html": ("text/html", b"<p>" + b"0123456789 " * 100_000 + b"</p>"),
    "/svg.html": (
        "text/html",
        b'<!doctype html><p>one SVG, shown twice</p><object data="a.svg" type="image/svg+xml"></object>'
        b'<object data="a.svg" type="image/svg+xml"></object>',
    ),
    "/a.svg": ("image/svg+xml", b'<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"><circle r="4"/></svg>'),
    # Built by script: an image the page inserts, and text it writes into its own frame.
    "/scripted.html": (
        "text/html",
        b'<!doctype html><body><iframe src="/sub/frame.html" onload="this.contentDocument.body.insertAdjacentHTML('
        b"'beforeend', '<p id=written>written by the parent</p>')\"></iframe>"
        b"<script>const i = document.createElement('img'); i.src = '/sub/img/bg.png'; document.body.append(i);</script>",
    ),
}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        media, body = FILES.get(self.path.split("?", 1)[0], ("text/plain", b"not here"))
        self.send_response(200 if self.path.split("?", 1)[0] in FILES else 404)
        self.send_header("Content-Type", media)  # no charset: Chromium must find Shift_JIS in <meta>
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def main_capture(server: str) -> bytes:
    return capture_with_browser(server + "/main.html", allow_private=True, settle=0.3).mhtml


def _by_location(agg: Aggregate) -> dict[str, Part]:
    return {p.location or "": p for p in agg.parts}


def test_browser_capture_every_part(server: str, main_capture: bytes) -> None:
    # pdi's own writer (as pdi mhtml pack writes): one part per URL the page needs, each
    # labelled with that URL (RFC 2557 §7), the root first; no cid: parts, no Content-IDs.
    agg = parse(main_capture)
    assert agg.warnings == ()
    parts = _by_location(agg)
    s = server
    assert sorted(parts) == sorted(
        [s + "/main.html", s + "/sub/s.css", s + "/sub/frame.html", s + "/sjis.html",
         *(f"{s}/sub/img/{name}.png" for name in IMAGES)]
    )
    assert len(agg.parts) == 9 and all(p.content_id is None for p in agg.parts)
    # Images byte for byte, the style sheet as served.
    for name, data in IMAGES.items():
        part = parts[f"{s}/sub/img/{name}.png"]
        assert part.content_type == "image/png"
        assert part.data == data
    assert parts[s + "/sub/s.css"].data == FILES["/sub/s.css"][1]
    # The root is the page after its script ran: its work in the DOM, the script itself gone
    # (the saved page is inert, as Chromium's own serializer makes it); the <base href>
    # made absolute, the <style> element and the style attribute where they were.
    root = agg.root
    assert root.location == s + "/main.html"
    assert root.content_type == "text/html"
    text = root.text()
    assert '<p id="js">built by script</p>' in text and "<script" not in text
    assert '<base href="' + s + '/sub/">' in text
    assert "<style>h2 { background: url(img/st.png) }</style>" in text
    assert "<h1 style=\"background: url('img/inl.png')\">" in text
    # A page that declares no charset is windows-1252 (WHATWG Encoding: the default for
    # an unlabelled page in an English locale), and is written and labelled so.
    assert root.charset == "windows-1252"
    # The Shift_JIS frame: its DOM written back in Shift_JIS, and labelled so.
    sjis = parts[s + "/sjis.html"]
    assert sjis.charset == "Shift_JIS" and sjis.encoding == "Shift_JIS"
    assert SJIS_TEXT in sjis.text()
    assert SJIS_TEXT.encode("shift_jis") in sjis.data


def test_browser_capture_every_reference(server: str, main_capture: bytes) -> None:
    agg = parse(main_capture)
    s = server
    got = sorted(
        (
            (r.source.location or ""),
            r.reference.kind,
            r.status,
            r.rule,
            (r.target.location or "") if r.target is not None else None,
        )
        for r in agg.references
    )
    main, frame, sjis, css = s + "/main.html", s + "/sub/frame.html", s + "/sjis.html", s + "/sub/s.css"
    expected = sorted(
        [
            (main, "base", "ignored", None, None),
            (main, "stylesheet", "satisfied", "content-location", css),
            (main, "style-url", "satisfied", "content-location", s + "/sub/img/st.png"),
            (main, "style-url", "satisfied", "content-location", s + "/sub/img/inl.png"),
            (main, "src", "satisfied", "content-location", s + "/sub/img/a.png"),
            (main, "frame", "satisfied", "content-location", frame),
            (main, "frame", "satisfied", "content-location", sjis),
            (main, "href", "unsatisfied", None, None),  # a link, not part of the page
            (css, "style-url", "satisfied", "content-location", s + "/sub/img/bg.png"),
            (frame, "src", "satisfied", "content-location", s + "/sub/img/fr.png"),
            (sjis, "src", "satisfied", "content-location", s + "/sub/img/a.png"),
        ]
    )
    assert got == expected


def test_browser_capture_unpacks_to_a_page_that_opens_offline(main_capture: bytes, tmp_path: Path) -> None:
    agg = parse(main_capture)
    result = plan(agg)
    unpack_to(result, tmp_path)
    index = (tmp_path / "index.html").read_text("windows-1252")
    assert '<base href="./">' in index
    assert 'src="a.png"' in index and 'href="s.css"' in index
    assert "cid:" not in index
    assert 'url("st.png")' in index or "url(st.png)" in index
    assert (tmp_path / "st.png").read_bytes() == IMAGES["st"]
    sjis = (tmp_path / "sjis.html").read_bytes()
    assert SJIS_TEXT.encode("shift_jis") in sjis and b'src="a.png"' in sjis
    assert [u.rsplit("/", 1)[1] for u in result.unsatisfied] == ["next.html"]


def test_browser_capture_keeps_what_scripts_built_and_chromium_shows_it(server: str, tmp_path: Path) -> None:
    # What the page's script inserted (an image) and wrote into its frame is in the file,
    # and Chromium opening the file (scripts never run there) shows both.
    import time

    from chromium_helpers import open_page
    from pdi.capture.browser import devtools

    archive = tmp_path / "scripted.mht"
    archive.write_bytes(capture_with_browser(server + "/scripted.html", allow_private=True, settle=0.5).mhtml)
    agg = parse(archive.read_bytes())
    parts = _by_location(agg)
    assert parts[server + "/sub/img/bg.png"].data == IMAGES["bg"]
    assert "written by the parent" in parts[server + "/sub/frame.html"].text()
    assert "onload" not in agg.root.text() and "<script" not in agg.root.text()
    with devtools() as pipe:
        session = open_page(pipe, archive.as_uri())
        deadline = time.monotonic() + 60

        def evaluate(frame: str, expression: str) -> object:
            world = pipe.call("Page.createIsolatedWorld", {"frameId": frame}, session, deadline)["executionContextId"]
            found = pipe.call("Runtime.evaluate", {"expression": expression, "contextId": world, "returnByValue": True},
                              session, deadline)
            return found["result"]["value"]

        tree = pipe.call("Page.getFrameTree", None, session, deadline)["frameTree"]
        (child,) = tree["childFrames"]
        images = evaluate(tree["frame"]["id"], "[...document.images].map(i => i.naturalWidth)")
        written = evaluate(child["frame"]["id"], "document.getElementById('written').textContent")
    assert (images, written) == ([1], "written by the parent")


def test_chromium_refuses_private_pages_without_permission(server: str) -> None:
    with pytest.raises(UnsupportedError, match="allow-private"):
        capture_with_browser(server + "/main.html")


def test_cli_capture_browser_shift_jis_root(server: str, tmp_path: Path) -> None:
    out = tmp_path / "sjis.mht"
    result = CliRunner().invoke(
        cli, ["capture", server + "/sjis.html", "--browser", "--allow-private", "--settle", "0.2", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    agg = parse(out.read_bytes())
    assert agg.root.location == server + "/sjis.html"
    assert agg.root.encoding == "Shift_JIS"
    assert SJIS_TEXT in agg.root.text()
    assert _by_location(agg)[server + "/sub/img/a.png"].data == IMAGES["a"]
    assert all(r.satisfied for r in agg.references)


@pytest.mark.parametrize(
    ("url", "error", "says"),
    [
        ("http://127.0.0.1/x", UnsupportedError, "loopback"),
        ("http://localhost:9/x", UnsupportedError, "loopback"),
        ("https://[::1]/", UnsupportedError, "loopback"),
        ("http://169.254.169.254/latest/meta-data/", UnsupportedError, "link-local"),
        ("file:///etc/passwd", UnsupportedError, "only http and https"),
        ("ftp://127.0.0.1/", UnsupportedError, "only http and https"),
        ("chrome://settings", UnsupportedError, "only http and https"),
        ("data:text/plain,hi", UnsupportedError, "only http and https"),
        ("http:///nohost", ParseError, "no host"),
    ],
)
def test_browser_capture_refuses_the_page_before_starting_chromium(url: str, error: type[PDIError], says: str) -> None:
    with pytest.raises(error, match=says):
        capture_with_browser(url, chromium="/nonexistent/chromium")


def test_browser_capture_with_allow_private_gets_as_far_as_starting_chromium() -> None:
    # The address passes; the browser that is not there is what fails.
    with pytest.raises(NotFoundError, match="Chromium closed the DevTools pipe"):
        capture_with_browser("http://127.0.0.1:9/x", allow_private=True, chromium="/nonexistent/chromium")


def test_chromium_snapshot_larger_than_the_limit_is_refused_as_it_arrives(server: str) -> None:
    # The page alone is 1.1 MB: its snapshot cannot fit 300 kB, and is not kept in memory
    # whole. (The CLI tests capture with the CLI's limit, which their pages fit.)
    with pytest.raises(LimitError, match="300000"):
        capture_with_browser(server + "/big.html", allow_private=True, settle=0.1, max_bytes=300_000)


def test_unpacked_capture_opens_offline_in_chromium(main_capture: bytes, tmp_path: Path) -> None:
    # Chromium opens out/index.html from disk, with no server running for it to reach:
    # every image of the page must have loaded from the folder (a 1x1 PNG each), and the
    # style sheets must apply (s.css gives the body a background image, the <style>
    # element gives h2 one). The page runs no script of its own
    # (unpack forbids them), so the question is asked over the DevTools protocol.
    import time

    from chromium_helpers import open_page
    from pdi.capture.browser import devtools

    out = tmp_path / "out"
    unpack_to(plan(parse(main_capture)), out)
    probe = (
        "(() => { const s = e => getComputedStyle(e).backgroundImage;"
        " return [...document.images].map(i => i.naturalWidth).join(',')"
        " + '|' + (s(document.body).includes('bg.png') && s(document.querySelector('h2')).includes('st.png')); })()"
    )
    with devtools() as pipe:
        session = open_page(pipe, (out / "index.html").as_uri())
        deadline = time.monotonic() + 60
        answer = pipe.call("Runtime.evaluate", {"expression": probe, "returnByValue": True}, session, deadline)
    assert answer["result"]["value"] == "1|true"


def test_check_passes_a_capture_that_shows_one_svg_twice(server: str, tmp_path: Path) -> None:
    # The SVG document of two <object>s is one resource: one part, named by both.
    out = tmp_path / "svg.mht"
    out.write_bytes(capture_with_browser(server + "/svg.html", allow_private=True, settle=0.3).mhtml)
    agg = parse(out.read_bytes())
    svgs = [p for p in agg.parts if p.location == server + "/a.svg"]
    assert len(svgs) == 1 and svgs[0].data == FILES["/a.svg"][1]
    result = CliRunner().invoke(cli, ["mhtml", "check", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output == "2 parts, 2 references satisfied, 0 errors, 0 warnings, 0 links to pages outside the file\n"


def _edition(n: int) -> bytes:
    # A frame and a <style> element (Chromium's own snapshot gave both a random Content-ID
    # each time, so its files of an unchanged page differed).
    return (
        b"<!doctype html><html><head><style>p { color: blue }</style></head><body>"
        b'<iframe src="/sub/frame.html"></iframe><img src="/sub/img/a.png">'
        b"<p>edition %d</p></body></html>" % n
    )


def test_cli_capture_browser_unchanged_page_is_one_version(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    # one document per URL and GMT day: every capture here on one day, or the next day's is a new document
    from pdi.archive import Archive
    from pdi.identifier import PDI

    location = str(tmp_path / "arch")
    Archive.init(location).add_series("web.example.us")
    url = server + "/edition.html"
    monkeypatch.setitem(FILES, "/edition.html", ("text/html", _edition(1)))

    def capture(out: str, *extra: str) -> tuple[PDI, str]:
        result = CliRunner().invoke(
            cli,
            ["capture", url, "--browser", "--allow-private", "--settle", "0.2", "--series", "web.example.us",
             "--archive", location, "-o", str(tmp_path / out), *extra],
        )
        assert result.exit_code == 0, result.output
        return PDI.parse(result.stdout.strip()), result.stderr

    first, quiet = capture("1.mht")
    second, note = capture("2.mht")
    one, two = (tmp_path / "1.mht").read_bytes(), (tmp_path / "2.mht").read_bytes()
    # pdi's writer is deterministic (no date, a boundary hashed from the parts): the same
    # page is the same bytes, and the same parts, which is what decides: one version.
    assert one == two
    assert first.version == 1 and second == first
    # Chromium's own requests are no part of the page: nothing of it was refused.
    assert quiet == ""
    assert note.splitlines()[-1].startswith("unchanged: version 1 of ")
    archive = Archive.open(location)
    assert archive.versions(first) == [1]
    assert archive.get(first).data == one

    monkeypatch.setitem(FILES, "/edition.html", ("text/html", _edition(2)))
    third, _ = capture("3.mht")
    assert third == first.with_version(2)
    assert "edition 2" in parse(archive.get(third).data).root.text()
    forced, note = capture("4.mht", "--force")
    assert forced == first.with_version(3) and all(not line.startswith("refused: ") for line in note.splitlines())
    assert archive.versions(first) == [1, 2, 3]
