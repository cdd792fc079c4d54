"""What a hostile site can send `pdi capture`: redirects httpx cannot read, bad ports, markup
html.parser once choked on. Served by a local HTTP server on 127.0.0.1.

Expected targets are worked out with RFC 3986 §5.2.2 by hand (non-strict: a reference with
the base's scheme loses it first, as browsers do for http).
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.capture import capture
from pdi.capture.browser import capture_with_browser
from pdi.capture.fetch import check_url
from pdi.cli import cli
from pdi.errors import ParseError, PDIError, UnsupportedError
from pdi.mhtml import parse
from pdi.uri import resolve

CRASHERS = Path(__file__).resolve().parents[1] / "data" / "crashers"
MARKED = b'<html><![x[ y ]]><p>hi</p><img src="a.png"><![CDATA[ > <img src="b.png"> ]]></html>'
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
# "xn--a" and "xn--zz" are no A-labels (RFC 5891 §5.4: "a" decodes to U+0080, which IDNA2008 disallows; "zz" is
# no Punycode, RFC 3492 §6.2), so a browser's URL parser fails on them (WHATWG URL, domain to ASCII)
#: (path, Authorization) of each request the server was sent
asked: list[tuple[str, str | None]] = []
BAD_IDN = b'<img src="http://xn--a/x.png"><img src="/to-bad-idn"><img src="ok.png">'


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        port = self.server.server_address[1]
        asked.append((self.path, self.headers.get("Authorization")))
        headers = {"Content-Type": "text/html"}
        body = b""
        status = 200
        if self.path == "/colon":
            status, headers["Location"] = 302, f"http:127.0.0.1:{port}/ok.html"
        elif self.path == "/backslashes":
            status, headers["Location"] = 302, "http:\\\\127.0.0.1\\ok.html"
        elif self.path == "/bad-port":
            status, headers["Location"] = 302, "http://127.0.0.1:99999/ok.html"
        elif self.path == "/bad-bracket":
            status, headers["Location"] = 302, "http://[::1/ok.html"
        elif self.path == "/to-file":
            status, headers["Location"] = 302, "file:///etc/passwd"
        elif self.path == "/to-bad-idn":
            status, headers["Location"] = 302, "http://xn--zz/"
        elif self.path == "/bad-idn.html":
            body = BAD_IDN
        elif self.path == "/to-userinfo":
            status, headers["Location"] = 302, f"http://user:secret@127.0.0.1:{port}/ok.html"
        elif self.path == "/userinfo.html":
            body = b'<img src="http://user:secret@127.0.0.1:%d/a.png"><img src="b.png">' % port
        elif self.path == "/marked.html":
            body = MARKED
        elif self.path == "/crasher.html":
            body = parse((CRASHERS / "assert_min.mht").read_bytes()).root.data
        elif self.path.endswith((".png",)):
            headers["Content-Type"], body = "image/png", PNG + self.path.encode()
        elif self.path.endswith("ok.html"):
            body = b"<p>ok " + self.path.encode() + b"</p>"
        else:
            status = 404
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_redirect_to_http_colon_without_slashes_is_followed_as_a_relative_reference(server: str) -> None:
    # httpx raised InvalidURL on this Location before the response reached pdi (a traceback).
    port = server.rsplit(":", 1)[1]
    got = capture(server + "/colon", allow_private=True)
    # "http:127.0.0.1:PORT/ok.html" less its scheme is the path "127.0.0.1:PORT/ok.html",
    # merged with the base path "/colon" (§5.2.3): "/127.0.0.1:PORT/ok.html"
    assert got.final_url == f"{server}/127.0.0.1:{port}/ok.html"
    assert [(h.status, h.target) for h in got.redirects] == [(302, got.final_url)]
    assert parse(got.mhtml).root.data == f"<p>ok /127.0.0.1:{port}/ok.html</p>".encode()


def test_cli_capture_of_the_redirect_crasher_exits_0(server: str, tmp_path: Path) -> None:
    port = server.rsplit(":", 1)[1]
    result = CliRunner().invoke(cli, ["capture", server + "/colon", "--allow-private", "-o", str(tmp_path / "c.mht")])
    assert result.exit_code == 0, result.output
    assert f"redirect 302: {server}/colon -> {server}/127.0.0.1:{port}/ok.html" in result.output


def test_redirect_with_backslashes_stays_on_the_same_host(server: str) -> None:
    got = capture(server + "/backslashes", allow_private=True)
    assert got.final_url.startswith(server + "/")


@pytest.mark.parametrize(
    ("path", "error", "message"),
    [
        ("/bad-port", ParseError, "port 99999 is not a TCP port"),
        ("/bad-bracket", ParseError, "not a URL capture can fetch"),
        ("/to-file", UnsupportedError, "only http and https"),
    ],
)
def test_redirects_capture_cannot_follow_are_pdi_errors(server: str, path: str, error: type[PDIError], message: str) -> None:
    with pytest.raises(error, match=message):
        capture(server + path, allow_private=True)


def test_a_bad_idn_host_of_a_part_is_a_missing_part(server: str) -> None:
    got = capture(server + "/bad-idn.html", allow_private=True)
    assert [p.location for p in parse(got.mhtml).parts] == [server + "/bad-idn.html", server + "/ok.png"]
    assert [f.url for f in got.failures] == ["http://xn--a/x.png", server + "/to-bad-idn"]
    assert all("xn--" in f.reason and "no IDNA A-label" in f.reason for f in got.failures), got.failures


@pytest.mark.parametrize("url", ["http://xn--a/", "http://xn--zz/", "https://xn--/x"])
def test_a_page_at_a_bad_idn_host_is_a_syntax_error(url: str) -> None:
    with pytest.raises(ParseError, match=r"not a host capture can fetch: xn--\w* is no IDNA A-label"):
        capture(url, allow_private=True)


@pytest.mark.parametrize(("path", "status", "title"), [("/bad-port", 1, "syntax error"), ("/to-file", 6, "unsupported"),
                                                       ("/to-bad-idn", 1, "syntax error")])
def test_cli_redirect_errors_are_one_line(server: str, tmp_path: Path, path: str, status: int, title: str) -> None:
    result = CliRunner().invoke(cli, ["capture", server + path, "--allow-private", "-o", str(tmp_path / "x.mht")])
    assert result.exit_code == status, result.output
    assert result.output.startswith(f"pdi: {title}: ") and result.output.count("\n") == 1, result.output


def test_cli_capture_of_a_bad_idn_host_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["capture", "http://xn--a/", "--allow-private", "-o", str(tmp_path / "x.mht")])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("pdi: syntax error: not a host capture can fetch: xn--a is no IDNA A-label")
    assert result.output.count("\n") == 1, result.output


def test_a_url_with_user_information_is_refused_before_anything_is_sent(server: str) -> None:
    # RFC 3986 §3.2.1, §7.5: "user:password" in a URI is deprecated and "a security risk"; the page's URL
    # becomes its permanent name, and httpx would send the pair as Basic credentials (RFC 7617)
    asked.clear()
    credentialed = server.replace("http://", "http://user:secret@") + "/ok.html"
    with pytest.raises(UnsupportedError, match=r"a URL with user information \(http://…@127\.0\.0\.1:\d+/ok\.html\)"):
        capture(credentialed, allow_private=True)
    with pytest.raises(UnsupportedError, match="user information"):
        capture(server.replace("http://", "http://@") + "/ok.html", allow_private=True)  # an empty one too
    assert asked == []
    with pytest.raises(UnsupportedError, match="user information"):  # nor is one followed where a page redirects
        capture(server + "/to-userinfo", allow_private=True)
    assert asked == [("/to-userinfo", None)]


def test_a_part_with_user_information_is_missing_and_never_asked_for(server: str) -> None:
    asked.clear()
    got = capture(server + "/userinfo.html", allow_private=True)
    assert [p.location for p in parse(got.mhtml).parts] == [server + "/userinfo.html", server + "/b.png"]
    assert [f.url for f in got.failures] == [server.replace("http://", "http://user:secret@") + "/a.png"]
    assert "user information" in got.failures[0].reason and "secret" not in got.failures[0].reason
    assert sorted(asked) == [("/b.png", None), ("/userinfo.html", None)]


def test_cli_capture_of_a_url_with_user_information_mints_no_name(server: str, tmp_path: Path) -> None:
    from pdi.archive import Archive

    Archive.init(tmp_path / "arch").add_series("web.example.us")
    credentialed = server.replace("http://", "http://user:secret@") + "/ok.html"
    result = CliRunner().invoke(cli, ["capture", credentialed, "--allow-private", "--series", "web.example.us",
                                      "--archive", str(tmp_path / "arch")])
    assert result.exit_code == 6, result.output
    assert result.output.startswith("pdi: unsupported: capture refuses a URL with user information")
    assert result.output.count("\n") == 1 and "secret" not in result.output, result.output
    assert result.stdout == ""
    assert Archive.open(tmp_path / "arch").ls() == []


def test_capture_of_a_page_with_a_marked_section(server: str) -> None:
    # <![x[ made html.parser raise AssertionError. HTML reads "<![x[ y ]]>" as a bogus
    # comment up to the first ">", and "<![CDATA[ >" outside SVG likewise, so both images
    # are on the page (Chromium loads b.png too).
    got = capture(server + "/marked.html", allow_private=True)
    parts = {p.location: p.data for p in parse(got.mhtml).parts}
    assert parts == {
        server + "/marked.html": MARKED,
        server + "/a.png": PNG + b"/a.png",
        server + "/b.png": PNG + b"/b.png",
    }


def test_cli_capture_of_the_marked_section_crasher(server: str, tmp_path: Path) -> None:
    # The page of tests/data/crashers/assert_min.mht, served.
    out = tmp_path / "m.mht"
    result = CliRunner().invoke(cli, ["capture", server + "/crasher.html", "--allow-private", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert parse(out.read_bytes()).root.data == b"<html><![x[ y ]]><p>hi</p></html>"


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:99999/", "http://[::1/", "http://x:-1/", "ftp://127.0.0.1/", "http://u:p@127.0.0.1/"]
)
def test_browser_capture_refuses_bad_urls_before_starting_chromium(url: str) -> None:
    with pytest.raises((ParseError, UnsupportedError)):
        capture_with_browser(url, allow_private=True, chromium="/nonexistent/chromium")


LOCATION = st.lists(
    st.sampled_from(
        ["http:", "https:", "HTTP:", "//", "/", "\\", "127.0.0.1", ":", "99999", "0", "65535", "[", "]", "::1", "@",
         "%", "%zz", "%41", "?", "#", ".", "..", " ", "\t", "é", "a", "x.html", "file:", "javascript:"]
    ),
    max_size=10,
).map("".join)


# RFC 9110 §10.2.2: Location is a URI-reference (RFC 3986 §4.1). These are well-formed ones that resolve,
# against an http base, to an http or https URL with a host and a TCP port: each must be followed
_SEGMENT = r"([A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-F]{2})*"
_SEGMENT_NZ_NC = r"([A-Za-z0-9._~!$&'()*+,;=@-]|%[0-9A-F]{2})+"  # §3.3: a relative path's first segment has no ':'
_WELL_FORMED_LOCATION = st.one_of(
    st.from_regex(rf"(\.\./|/)?{_SEGMENT_NZ_NC}(/{_SEGMENT}){{0,3}}(\?{_SEGMENT})?", fullmatch=True),
    st.tuples(
        st.sampled_from(["http", "https", "HTTP"]),
        # a label "xn--…" is an A-label, well formed only if it decodes (RFC 5890 §2.3.2.1): those are tested above
        st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?){0,2}", fullmatch=True)
        .filter(lambda host: not any(label.startswith("xn--") for label in host.split("."))),
        st.one_of(st.just(""), st.integers(1, 65535).map(lambda p: f":{p}")),
        st.from_regex(rf"(/{_SEGMENT}){{0,3}}", fullmatch=True),
    ).map(lambda t: f"{t[0]}://{t[1]}{t[2]}{t[3]}"),
)


@settings(max_examples=500, deadline=None)
@given(st.one_of(LOCATION.map(lambda x: (x, False)), _WELL_FORMED_LOCATION.map(lambda x: (x, True))))
def test_property_any_location_gives_a_url_httpx_can_request_or_a_pdi_error(case: tuple[str, bool]) -> None:
    location, well_formed = case
    try:
        target = resolve("http://127.0.0.1:8000/dir/r", location, strict=False)
        url = check_url(target)
    except PDIError as refused:
        assert not well_formed, f"Location: {location} is a URL capture can follow, but was refused: {refused}"
        return
    assert url.scheme in ("http", "https") and url.host
    assert url.port is None or 0 < url.port < 65536
    request = httpx.Request("GET", target)  # what the fetcher sends: must build
    assert request.url.host == url.host


@pytest.mark.parametrize("given_url", ["notaurl", "example.org", "/index.html", "www.example.org/a?b=c"])
def test_pdi_capture_of_what_has_no_scheme_says_it_is_not_a_url(given_url: str, tmp_path: Path) -> None:
    # no scheme (RFC 3986 §3: a URI begins with one): a host or a path alone, said as what it is, not as "no scheme"
    assert httpx.URL(given_url).scheme == ""  # as httpx reads it too
    result = CliRunner().invoke(cli, ["capture", given_url, "-o", str(tmp_path / "page.mht")])
    assert result.exit_code == 6, result.output
    assert result.stderr == f"pdi: unsupported: {given_url} is not a URL: give an http:// or https:// URL\n"
    assert not (tmp_path / "page.mht").exists()
    with pytest.raises(UnsupportedError, match="capture fetches only http and https URLs, not ftp: ftp://"):
        check_url("ftp://example.org/" + given_url)
