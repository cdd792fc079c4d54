"""What a hostile web server can do to `pdi capture`: a server of raw sockets on 127.0.0.1 that answers as
it likes (many large parts, cookies without end, frames and imports nested past the crawl's depth).

Each answer is written by hand on the socket, so nothing in between (``http.server``) tidies it up. The
expected values are worked out from the limits the capture is given and from the server's own count of
what it was sent, never from the capture's output.
"""

from __future__ import annotations

import contextlib
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pdi.capture.fetch
from pdi._addresses import not_public
from pdi.capture import Limits, capture
from pdi.errors import LimitError, RemoteError, UnsupportedError
from peak_memory import run_with_peak

MB = 1 << 20
#: What each path answers: (Content-Type, extra header lines, body), or a redirect: (status, Location, b"").
Answer = tuple[bytes, bytes, bytes]


class RawServer:
    """An HTTP/1.1 server on 127.0.0.1 that writes each answer on the socket as ``answer(path)`` gives it,
    keeps connections open (as servers do), and records every request's head."""

    def __init__(self, answer: Callable[[str], Answer], host: str = "127.0.0.1") -> None:
        self.answer = answer
        self.requests: list[bytes] = []
        self.connections = 0
        self.lock = threading.Lock()
        self.sock = socket.create_server((host, 0))
        self.url = f"http://{host}:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(30)
        buffered = b""
        try:
            while True:
                while b"\r\n\r\n" not in buffered:
                    got = conn.recv(1 << 20)
                    if not got:
                        return
                    buffered += got
                head, _, buffered = buffered.partition(b"\r\n\r\n")
                with self.lock:
                    self.requests.append(head)
                path = head.split(b" ")[1].decode("latin-1")
                if path.startswith("/endless-"):  # 2 MB of a status line or of a header field, never ended
                    conn.sendall((b"HTTP/1.1 200 " if path == "/endless-status" else b"HTTP/1.1 200 OK\r\nX-A: ")
                                 + b"a" * 2_000_000)
                    return
                if path.startswith("/trickle"):
                    self._trickle(conn, path)
                    return
                kind, extra, body = self.answer(path)
                if kind.startswith(b"30"):  # a redirect: (status, Location, b"")
                    conn.sendall(b"HTTP/1.1 " + kind + b" Moved\r\nLocation: " + extra + b"\r\nContent-Length: 0\r\n\r\n")
                    continue
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: " + kind + b"\r\nContent-Length: %d\r\n" % len(body)
                             + extra + b"\r\n" + body)
        except OSError:
            return
        finally:
            conn.close()

    @staticmethod
    def _trickle(conn: socket.socket, path: str) -> None:
        """A byte every 0.2 s, without end: of the body (``/trickle-body``) or of the status line (any other)."""
        if path == "/trickle-body":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n")
        for _ in range(3000):  # ten minutes: longer than any test waits
            conn.sendall(b"H" if path != "/trickle-body" else b"x")
            time.sleep(0.2)

    def paths(self) -> list[str]:
        with self.lock:
            return [head.split(b" ")[1].decode("latin-1") for head in self.requests]

    def close(self) -> None:
        self.sock.close()


def answer(path: str) -> Answer:
    """``/many-N-K``: a page of N images of K KiB each (``/big-…``); ``/cookies-N``: a page of N images, each
    answered with a 4,000-octet cookie of its own."""
    if path.startswith("/many-"):
        count, size = path.removeprefix("/many-").split("-")
        return b"text/html", b"", b"".join(b'<img src="/big-%s-%d.png">' % (size.encode(), i) for i in range(int(count)))
    if path.startswith("/cookies-"):
        return b"text/html", b"", b"".join(b'<img src="/c-%d.png">' % i for i in range(int(path.split("-")[1])))
    if path.startswith("/c-"):  # each image its own cookie of 4,000 octets, and one of 5,000 past the bound of one
        n = int(path.removeprefix("/c-").removesuffix(".png"))
        return b"image/png", b"Set-Cookie: k%d=%s; Path=/\r\nSet-Cookie: huge%d=%s\r\n" % (
            n, b"v" * 3990, n, b"h" * 5000), b"\x89PNG"
    if path.startswith("/import-"):  # a chain of style sheets, each importing the next, without end
        n = int(path.removeprefix("/import-").removesuffix(".css"))
        return b"text/css", b"", b'@import "/import-%d.css";' % (n + 1)
    if path.startswith("/frame-"):  # a chain of frames, each framing the next, without end
        n = int(path.removeprefix("/frame-").removesuffix(".html"))
        return b"text/html", b"", b'<iframe src="/frame-%d.html"></iframe>' % (n + 1)
    if path == "/nested.html":
        return b"text/html", b"", b'<link rel="stylesheet" href="/import-1.css"><iframe src="/frame-1.html"></iframe>'
    if path.startswith("/refresh-"):  # a page that sends itself and another page elsewhere, without end
        return b"text/html", b"Refresh: 0; url=%s?again\r\n" % path.encode(), (
            b'<meta http-equiv="refresh" content="0; url=/refresh-next.html"><img src="/ok.png">'
        )
    if path.startswith("/big-"):
        return b"image/png", b"", b"\x89PNG" + b"\0" * (int(path.split("-")[1]) * 1024 - 4)
    return b"text/plain", b"", b"not here"


@pytest.fixture(scope="module")
def hostile() -> Iterator[RawServer]:
    server = RawServer(answer)
    yield server
    server.close()


def test_the_whole_captures_limit_holds_while_its_parts_are_fetched(hostile: RawServer) -> None:
    # 200 images of 1 MiB each (less a KiB) under a limit of 4 MiB for the whole capture: the fifth one
    # passes it. The crawl added the parts up only once a level was fetched: all 200 were asked for and
    # held (200 MiB) before the capture failed.
    limits = Limits(max_resource_bytes=MB, max_total_bytes=4 * MB, concurrency=2)
    with pytest.raises(LimitError, match=r"the capture is larger than the limit of 4,?194,?304 bytes"):
        capture(hostile.url + "/many-200-1023", allow_private=True, limits=limits)
    # the page, and at most the four that fit, the one past the limit and the one fetched beside it
    assert len(hostile.paths()) <= 1 + 4 + 2, len(hostile.paths())


def test_the_whole_captures_limit_bounds_its_memory(hostile: RawServer, tmp_path: Path) -> None:
    def run(path: str) -> tuple[int, int]:
        with (tmp_path / "err").open("wb") as err:
            status, peak, _ = run_with_peak([sys.executable, "-m", "pdi", "capture", hostile.url + path,
                                             "--allow-private", "--max-mb", "1", "-o", str(tmp_path / "c.mht")],
                                            stderr=err)
        return status, peak

    status, baseline = run("/many-1-1")
    assert status == 0, (tmp_path / "err").read_text()
    (tmp_path / "c.mht").unlink()
    # --max-mb 1: 4 MiB for the whole capture; 300 images of 1,023 KiB are 300 MiB
    status, peak = run("/many-300-1023")
    assert status == 7, (tmp_path / "err").read_text()
    assert "larger than the limit" in (tmp_path / "err").read_text()
    assert peak < baseline + 48 * 1024, (peak, baseline)
    assert not (tmp_path / "c.mht").exists()


def _cookies_sent(head: bytes) -> list[bytes]:
    cookies: list[bytes] = []
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"cookie":
            cookies += [c.strip() for c in value.split(b";") if c.strip()]
    return cookies


def test_cookies_a_site_sets_are_bounded_as_a_browsers_are(hostile: RawServer) -> None:
    # 300 images, each setting a cookie of 3,995 octets and one of 5,006. Kept whole, they made each request
    # carry every cookie set before it: the last ones' heads were 1.2 MB, 180 MB sent in all.
    with hostile.lock:
        hostile.requests.clear()
    got = capture(hostile.url + "/cookies-300", allow_private=True, limits=Limits(concurrency=1))
    assert got.parts == 301 and not got.failures
    with hostile.lock:
        sent = [_cookies_sent(head) for head in hostile.requests]
    # RFC 6265bis §5.6: a cookie whose name and value are more than 4,096 octets is ignored
    assert not any(c.startswith(b"huge") for cookies in sent for c in cookies)
    # RFC 6265 §6.1: a user agent keeps at least 50 cookies a domain; more than that it may evict
    assert max(len(cookies) for cookies in sent) <= 50
    # and a cookie the site sets is sent back (the first image's, with the second's request)
    assert sent[2] == [b"k0=" + b"v" * 3990]


def test_what_lies_deeper_than_the_crawl_goes_is_reported_missing(hostile: RawServer) -> None:
    # Frames and imports 3 levels deep are fetched (the page's own, theirs and theirs); the next ones are
    # named by the last but never fetched: they were left out without a word.
    got = capture(hostile.url + "/nested.html", allow_private=True, limits=Limits(max_depth=3))
    assert got.parts == 1 + 3 + 3
    assert [f.url for f in got.failures] == [hostile.url + "/import-4.css", hostile.url + "/frame-4.html"]
    assert all("more than 3 levels deep" in f.reason and f.url in f.reason for f in got.failures), got.failures


@pytest.fixture(scope="module")
def internal() -> Iterator[RawServer]:
    """A server on 127.0.0.2, an address no capture may reach: it counts the connections it gets."""
    server = RawServer(lambda path: (b"text/plain", b"", b"internal secret"), host="127.0.0.2")
    yield server
    server.close()


@pytest.fixture
def public_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """127.0.0.1 counts as a public address (the hostile site's), every other non-public one is refused as ever."""
    monkeypatch.setattr(pdi.capture.fetch, "not_public", lambda a: None if a == "127.0.0.1" else not_public(a))


def site(internal_url: str, long: str) -> Callable[[str], Answer]:
    def answer(path: str) -> Answer:
        if path == "/page.html":
            return b"text/html", b"", (
                f'<img src="{internal_url}/direct.png"><img src="/to-internal.png"><img src="/x.png?{long}">'
                '<img src="/to-data.png"><img src="/ok.png">'
            ).encode()
        if path == "/to-internal.png":
            return b"302", f"{internal_url}/redirected.png".encode(), b""
        if path == "/to-data.png":  # a Location of 80,000 octets, to a scheme capture does not fetch
            return b"302", b"data:image/png;base64," + b"A" * 80_000, b""
        if path == "/to-internal.html":
            return b"302", f"{internal_url}/".encode(), b""
        return b"image/png", b"", b"\x89PNG"
    return answer


def test_a_public_site_cannot_send_a_capture_to_a_private_address(
    internal: RawServer, public_loopback: None, tmp_path: Path
) -> None:
    long = "q=" + "x" * 70_000  # past the 65,536 characters httpx sends
    hostile = RawServer(site(internal.url, long))
    try:
        with pytest.raises(UnsupportedError) as refused:  # the page itself redirected there
            capture(hostile.url + "/to-internal.html")
        message = str(refused.value)
        assert message.startswith(f"cannot fetch {internal.url}/ (redirected from {hostile.url}/to-internal.html):"
                                  " refusing to connect to 127.0.0.2: not a public address (loopback)"), message
        got = capture(hostile.url + "/page.html")
    finally:
        hostile.close()
    assert internal.connections == 0
    assert [f.url for f in got.failures] == [
        f"{internal.url}/direct.png", f"{hostile.url}/to-internal.png", f"{hostile.url}/x.png?{long}",
        f"{hostile.url}/to-data.png",
    ]
    reasons = [f.reason for f in got.failures]
    # each names the URL it is about (a long one cut short) and what was wrong
    assert reasons[0].startswith(f"cannot fetch {internal.url}/direct.png: refusing to connect to 127.0.0.2"), reasons
    assert reasons[1].startswith(
        f"cannot fetch {internal.url}/redirected.png (redirected from {hostile.url}/to-internal.png): refusing"), reasons
    assert reasons[2].startswith(f"not a URL capture can fetch: {hostile.url}/x.png?q=xxx"), reasons
    assert "URL too long" in reasons[2]
    assert reasons[3].startswith("capture fetches only http and https URLs, not data: data:image/png;base64,AAA"), reasons
    assert reasons[3].endswith(f"(redirected from {hostile.url}/to-data.png)"), reasons
    assert all(len(reason) < 1000 for reason in reasons), [len(reason) for reason in reasons]


@pytest.mark.parametrize("path", ["/trickle-body", "/trickle-status"])
def test_a_server_that_trickles_is_stopped_by_the_whole_captures_timeout(
    hostile: RawServer, tmp_path: Path, path: str
) -> None:
    # A byte every 0.2 s: each read is well within the read time-out (20 s), and the answer would take 5 hours.
    # `--timeout` is for the whole capture; the archive is as it was, and no file is written.
    from click.testing import CliRunner

    from pdi.archive import Archive
    from pdi.cli import cli

    with Archive.init(tmp_path / "arch") as archive:
        archive.add_series("web.example.us")
    result = CliRunner().invoke(cli, ["capture", hostile.url + path, "--allow-private", "--timeout", "2", "--series",
                                      "web.example.us", "--archive", str(tmp_path / "arch"), "-o", str(tmp_path / "c.mht")])
    assert result.exit_code == 7, result.output
    assert result.output == f"pdi: limit exceeded: capturing {hostile.url}{path} took longer than 2 s\n"
    assert not (tmp_path / "c.mht").exists()
    with Archive.open(tmp_path / "arch") as archive:
        assert archive.ls() == []


def test_refresh_is_navigation_and_never_followed(hostile: RawServer) -> None:
    # HTML §7.11.1 (shared declarative refresh steps) and the Refresh header navigate to another document: it is
    # not part of the page, so a page that refreshes to itself, again and again, is the page and its image.
    with hostile.lock:
        hostile.requests.clear()
    got = capture(hostile.url + "/refresh-1.html", allow_private=True)
    assert got.parts == 2 and not got.failures
    assert sorted(hostile.paths()) == ["/ok.png", "/refresh-1.html"]


@pytest.mark.parametrize("path", ["/endless-status", "/endless-head"])
def test_a_head_without_end_is_refused_saying_so(hostile: RawServer, path: str) -> None:
    # httpcore reads at most 100 KiB of an answer's head (AsyncHTTP11Connection.MAX_INCOMPLETE_EVENT_SIZE);
    # past it h11 said only "Receive buffer too long".
    with pytest.raises(RemoteError) as refused:  # the server's failure: exit 16, not "not found"
        capture(hostile.url + path, allow_private=True)
    assert str(refused.value) == (
        f"cannot fetch {hostile.url}{path}: the head of its answer (status line and header fields) is longer than"
        " 100 KiB"
    )


@contextlib.contextmanager
def _unanswered_lookup(monkeypatch: pytest.MonkeyPatch, name: str) -> Iterator[threading.Event]:
    """``name``'s lookup answered only when the block ends (the fault a name server that never answers makes, which
    none on this machine can be made to); yields the event set once it has ended."""
    real = socket.getaddrinfo
    let_go, ended = threading.Event(), threading.Event()

    def lookup(host: str, *args: object, **kwargs: object) -> object:
        if host != name:
            return real(host, *args, **kwargs)  # type: ignore[arg-type]
        let_go.wait(timeout=60)
        ended.set()
        raise socket.gaierror(socket.EAI_AGAIN, "no answer")

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    try:
        yield ended
    finally:
        let_go.set()


def test_a_name_whose_lookup_never_ends_does_not_hold_the_capture_past_its_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A site's own name server can leave a lookup unanswered for as long as the resolver waits (30 s and more
    # with retries and search domains). The lookup ran in asyncio's default executor, whose threads
    # asyncio.run waits for at its end: the capture gave up at its timeout, then waited for the lookup all the
    # same. Here the lookup ends only when the test lets it, after the capture returned.
    with _unanswered_lookup(monkeypatch, "slow.example") as ended:
        with pytest.raises(LimitError, match=r"^capturing http://slow\.example/ took longer than 1 s$"):
            capture("http://slow.example/", limits=Limits(total_timeout=1))
        assert not ended.is_set()  # the capture returned while its lookup was still waiting


def test_a_browser_capture_of_a_name_whose_lookup_never_ends_stops_at_its_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # capture --browser looks the page's host up before Chromium starts (a private address is refused there): that
    # lookup called getaddrinfo itself, outside the capture's time, and waited as long as the name servers did
    from pdi.capture import capture_with_browser

    with _unanswered_lookup(monkeypatch, "slow.example") as ended:
        with pytest.raises(LimitError, match=r"^capturing http://slow\.example/ took longer than 1 s \(resolving"
                                             r" slow\.example took longer than 1 s\)$"):
            capture_with_browser("http://slow.example/", timeout=1)
        assert not ended.is_set()  # refused while its lookup was still waiting


LONG_LABEL = "a" * 64 + ".example"  # RFC 1035 §2.3.4: a label is 63 octets at most


def test_a_part_at_a_host_no_name_server_could_hold_is_missing(hostile: RawServer) -> None:
    # Python's idna codec refuses an empty label and one of 64 octets with a UnicodeError: raised while the
    # name was looked up, it was no pdi error, and one such image crashed the whole capture with a traceback.
    page = RawServer(lambda path: (b"text/html", b"", (
        f'<img src="http://a..b/x.png"><img src="http://{LONG_LABEL}/y.png"><img src="{hostile.url}/ok.png">'
    ).encode()) if path == "/page.html" else answer(path))
    try:
        got = capture(page.url + "/page.html", allow_private=True)
    finally:
        page.close()
    assert got.parts == 2
    assert [f.url for f in got.failures] == ["http://a..b/x.png", f"http://{LONG_LABEL}/y.png"]
    assert got.failures[0].reason.startswith("not a host capture can fetch: a..b has an empty label"), got.failures
    assert got.failures[1].reason.startswith(
        f"not a host capture can fetch: {LONG_LABEL} has a label of 64 octets, more than 63"), got.failures


@pytest.mark.parametrize("host", ["a..b", ".a", LONG_LABEL])
def test_a_page_at_a_host_no_name_server_could_hold_is_a_syntax_error(host: str) -> None:
    from pdi.errors import ParseError

    with pytest.raises(ParseError, match=rf"^not a host capture can fetch: {re.escape(host)} has"):
        capture(f"http://{host}/", allow_private=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab0-", max_size=70), min_size=1, max_size=4), st.booleans())
def test_property_a_host_is_refused_exactly_when_a_label_is_empty_or_past_63_octets(labels: list[str], dot: bool) -> None:
    from pdi.capture.fetch import check_url
    from pdi.errors import ParseError

    host = ".".join(labels) + ("." if dot else "")
    # RFC 1034 §3.1: a final "." is the root's empty label; every other label has 1 to 63 octets (RFC 1035 §2.3.4)
    holdable = all(0 < len(label) <= 63 for label in (host[:-1] if host.endswith(".") else host).split("."))
    try:
        check_url(f"http://{host}/")
    except ParseError as refused:
        if holdable:  # refused for something else httpx or IDNA hold against it: never for its labels
            assert "label" not in str(refused) or "IDNA" in str(refused), refused
        else:
            assert "empty label" in str(refused) or "more than 63" in str(refused) or not host, refused
        return
    assert holdable, host
