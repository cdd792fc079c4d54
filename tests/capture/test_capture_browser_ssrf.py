"""`pdi capture --browser` reaches no address the plain capture would refuse (issue 12).

Three sites on three loopback addresses (Linux routes all of 127/8 to lo):

- the page under capture on 127.0.0.1, allowed by ``(address, port)``;
- a second site on 127.0.0.3, also allowed: a cross-site frame (Chromium puts it in
  a process of its own) and its worker;
- the internal target on 127.0.0.2, which nothing allows: loopback, refused as the
  plain capture refuses it. It answers HTTP and WebSocket handshakes with a secret
  only it knows, and records every TCP connection and every UDP datagram it gets.

The page tries every way a page has to reach it: ``<img>``, a style sheet, ``fetch``
(http and https), a redirect of an image, of a frame and of a fetch, WebSockets (ws
and wss), a dedicated, a shared and a service worker, EventSource, sendBeacon,
WebRTC (STUN over UDP, TURN over TCP), WebTransport (QUIC over UDP), and the
cross-site frame and its worker do it again. Whatever the page gets it writes into
itself, so what got through would be in the MHTML.

The control capture allows the internal address too: the secret then arrives by
each way, which shows the attempts are real and would leak; the capture under test
must leave the internal server without a single connection or datagram.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import socket
import socketserver
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.capture import capture_with_browser
from pdi.cli import cli
from pdi.errors import NotFoundError, UnsupportedError
from pdi.mhtml import parse

SECRET = "internal-" + secrets.token_hex(12)
WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455 §1.3


@dataclass
class Internal:
    """What the internal target saw."""

    connections: list[str] = field(default_factory=list)  # the first line each connection sent
    datagrams: int = 0

    def paths(self) -> set[str]:
        return {line.split(" ")[1] for line in self.connections if line.count(" ") == 2}


class InternalHandler(socketserver.BaseRequestHandler):
    """HTTP and WebSocket (RFC 6455 §4.2.2) from the standard library: the secret for every request."""

    server: InternalServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(5)
        data = b""
        try:
            while b"\r\n\r\n" not in data and len(data) < 65536:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        self.server.seen.connections.append(data.split(b"\r\n", 1)[0].decode("latin-1"))
        head = data.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
        fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}
        path = head[0].split(" ")[1] if head[0].count(" ") == 2 else "?"
        message = f"{SECRET} via {path}".encode()
        try:
            if fields.get("upgrade", "").lower() == "websocket":
                accept = base64.b64encode(hashlib.sha1(fields["sec-websocket-key"].encode() + WEBSOCKET_GUID).digest())
                sock.sendall(
                    b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n"
                )
                sock.sendall(bytes((0x81, len(message))) + message)  # one unmasked text frame (§5.2)
                sock.recv(1024)
                return
            if path == "/events":
                body = b"data: " + message + b"\n\n"
                media = b"text/event-stream"
            elif path == "/style":
                body = b"body::after { content: '" + message + b"' }"
                media = b"text/css"
            else:
                body, media = message, b"text/plain"
            sock.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: " + media + b"\r\nAccess-Control-Allow-Origin: *\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
            )
        except OSError:
            return


class InternalServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    seen: Internal


@dataclass(frozen=True)
class Sites:
    page: str  # http://127.0.0.1:P
    frame: str  # http://127.0.0.3:R
    internal: str  # 127.0.0.2:Q
    seen: Internal

    @property
    def allow(self) -> list[tuple[str, int]]:
        return [(u.rsplit("/", 1)[1].rsplit(":", 1)[0], int(u.rsplit(":", 1)[1])) for u in (self.page, self.frame)]


def _script(name: str, internal: str) -> bytes:
    i = internal
    scripts = {
        "/worker.js": f"""
            fetch('http://{i}/worker-fetch').then(r => r.text()).then(postMessage, () => postMessage('worker fetch failed'));
            const ws = new WebSocket('ws://{i}/worker-ws');
            ws.onmessage = e => postMessage(e.data);
            ws.onerror = () => postMessage('worker ws failed');""",
        "/shared.js": f"""
            onconnect = e => {{
              const port = e.ports[0];
              fetch('http://{i}/shared-fetch').then(r => r.text()).then(t => port.postMessage(t), () => port.postMessage('shared fetch failed'));
            }};""",
        "/sw.js": f"""
            const tell = async t => {{ for (const c of await clients.matchAll({{includeUncontrolled: true}})) c.postMessage(t); }};
            self.addEventListener('install', e => {{
              self.skipWaiting();
              e.waitUntil(fetch('http://{i}/sw-fetch').then(r => r.text()).then(tell, () => tell('service worker fetch failed')));
            }});""",
        "/frame-worker.js": f"""
            fetch('http://{i}/frame-worker-fetch').then(r => r.text()).then(postMessage, () => postMessage('frame worker fetch failed'));""",
    }
    return scripts[name].encode()


def _page(internal: str, frame: str) -> bytes:
    i = internal
    return f"""<!doctype html><html><head><link rel="stylesheet" href="http://{i}/style"></head><body>
<h1>the page under capture</h1><div id="out"></div>
<img src="http://{i}/img"><img src="/redirect?to=http://{i}/redirected-img">
<iframe src="{frame}/frame.html"></iframe>
<iframe src="/redirect?to=http://{i}/redirected-frame"></iframe>
<script>
const out = t => document.getElementById('out').insertAdjacentText('beforeend', ' [' + t + ']');
const text = (url, failed) => fetch(url).then(r => r.text()).then(out, () => out(failed));
text('http://{i}/fetch', 'fetch failed');
text('https://{i}/fetch-https', 'https fetch failed');
text('/redirect?to=http://{i}/redirected-fetch', 'redirected fetch failed');
const ws = new WebSocket('ws://{i}/ws'); ws.onmessage = e => out(e.data); ws.onerror = () => out('ws failed');
const wss = new WebSocket('wss://{i}/wss'); wss.onmessage = e => out(e.data); wss.onerror = () => out('wss failed');
new Worker('/worker.js').onmessage = e => out(e.data);
const shared = new SharedWorker('/shared.js'); shared.port.onmessage = e => out(e.data); shared.port.start();
navigator.serviceWorker.onmessage = e => out(e.data);
navigator.serviceWorker.register('/sw.js').catch(e => out('no service worker: ' + e));
const events = new EventSource('http://{i}/events'); events.onmessage = e => {{ out(e.data); events.close(); }};
events.onerror = () => {{ out('events failed'); events.close(); }};
navigator.sendBeacon('http://{i}/beacon', 'x');
try {{
  const pc = new RTCPeerConnection({{iceServers: [{{urls: 'stun:{i}'}}, {{urls: 'turn:{i}?transport=tcp', username: 'u', credential: 'c'}}]}});
  pc.createDataChannel('d'); pc.createOffer().then(o => pc.setLocalDescription(o));
}} catch (e) {{ out('no webrtc: ' + e); }}
try {{ new WebTransport('https://{i}/webtransport').ready.catch(() => out('webtransport failed')); }}
catch (e) {{ out('no webtransport: ' + e); }}
</script></body></html>""".encode()


def _frame(internal: str) -> bytes:
    i = internal
    return f"""<!doctype html><p>cross-site frame loaded</p><div id="out"></div><img src="http://{i}/frame-img">
<script>
const out = t => document.getElementById('out').insertAdjacentText('beforeend', ' [' + t + ']');
fetch('http://{i}/frame-fetch').then(r => r.text()).then(out, () => out('frame fetch failed'));
const ws = new WebSocket('ws://{i}/frame-ws'); ws.onmessage = e => out(e.data); ws.onerror = () => out('frame ws failed');
new Worker('/frame-worker.js').onmessage = e => out(e.data);
</script>""".encode()


class Handler(BaseHTTPRequestHandler):
    internal = ""
    frame = ""

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        status, media, body, extra = 200, "text/html", b"", {}
        if path == "/attack.html":
            body = _page(self.internal, self.frame)
        elif path == "/frame.html":
            body = _frame(self.internal)
        elif path.endswith(".js"):
            media, body = "text/javascript", _script(path, self.internal)
        elif path == "/redirect":
            status, extra = 302, {"Location": query.removeprefix("to=")}
        elif path == "/navigate.html":
            body = f"<p>leaving</p><script>location.href = 'http://{self.internal}/navigated';</script>".encode()
        elif path == "/plain.html":
            body = b'<p>a plain page</p><img src="http://pdi-capture-test.invalid/x.png">'
        else:
            status = 404
        self.send_response(status)
        self.send_header("Content-Type", media)
        for name, value in extra.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def sites() -> Iterator[Sites]:
    seen = Internal()
    internal = InternalServer(("127.0.0.2", 0), InternalHandler)
    internal.seen = seen
    port = internal.server_address[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.2", port))  # STUN and QUIC would arrive here

    def count_datagrams() -> None:
        while True:
            try:
                udp.recvfrom(65536)
            except OSError:
                return
            seen.datagrams += 1

    Handler.internal = f"127.0.0.2:{port}"
    page = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    frame = ThreadingHTTPServer(("127.0.0.3", 0), Handler)
    Handler.frame = f"http://127.0.0.3:{frame.server_address[1]}"
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (internal, page, frame)]
    threads.append(threading.Thread(target=count_datagrams, daemon=True))
    for thread in threads:
        thread.start()
    try:
        yield Sites(f"http://127.0.0.1:{page.server_address[1]}", Handler.frame, Handler.internal, seen)
    finally:
        for s in (internal, page, frame):
            s.shutdown()
            s.server_close()
        udp.close()


def _texts(mhtml: bytes) -> str:
    """Every part's decoded bytes (quoted-printable may split a word across lines) and the file itself."""
    return "\n".join([mhtml.decode("latin-1"), *(p.data.decode("latin-1") for p in parse(mhtml).parts)])


def test_control_allowing_the_internal_address_lets_every_way_reach_it(sites: Sites) -> None:
    # The same page, with the internal address allowed too: what each attempt would get.
    seen = sites.seen
    seen.connections.clear()
    internal = ("127.0.0.2", int(sites.internal.rsplit(":", 1)[1]))
    shot = capture_with_browser(sites.page + "/attack.html", allow=[*sites.allow, internal], settle=3.0)
    texts = _texts(shot.mhtml)
    assert SECRET in texts
    assert "cross-site frame loaded" in texts
    for way in ["/fetch", "/redirected-fetch", "/ws", "/worker-fetch", "/worker-ws", "/shared-fetch", "/sw-fetch",
                "/frame-fetch", "/frame-ws", "/frame-worker-fetch"]:
        assert f"{SECRET} via {way}" in texts, way
    assert {"/img", "/redirected-img", "/redirected-frame", "/style", "/events", "/beacon", "/frame-img"} <= seen.paths()
    seen.connections.clear()


def test_no_request_of_any_kind_reaches_the_internal_address(sites: Sites) -> None:
    seen = sites.seen
    seen.connections.clear()
    seen.datagrams = 0
    shot = capture_with_browser(sites.page + "/attack.html", allow=sites.allow, settle=3.0)
    texts = _texts(shot.mhtml)
    assert seen.connections == [] and seen.datagrams == 0
    assert SECRET not in texts
    # Every attempt was made, and failed: the cross-site frame and the workers ran.
    assert "cross-site frame loaded" in texts
    for failed in ["fetch failed", "https fetch failed", "redirected fetch failed", "ws failed", "wss failed",
                   "worker fetch failed", "worker ws failed", "shared fetch failed", "service worker fetch failed",
                   "frame fetch failed", "frame ws failed", "frame worker fetch failed", "events failed"]:
        assert f"[{failed}]" in texts, failed
    # What the proxy refused, as capture reports it.
    i = sites.internal
    refused = {r.split(": ", 1)[0] for r in shot.refused if i in r.split(": ", 1)[0]}
    assert f"CONNECT {i}" in refused  # ws, wss, https (Chromium tunnels WebSockets through a proxy)
    for path in ["/img", "/redirected-img", "/redirected-frame", "/style", "/fetch", "/redirected-fetch", "/worker-fetch",
                 "/shared-fetch", "/sw-fetch", "/events", "/frame-fetch", "/frame-img", "/frame-worker-fetch"]:
        assert f"GET http://{i}{path}" in refused, path
    assert all("not a public address (loopback)" in r for r in shot.refused if i in r.split(": ", 1)[0])


def test_a_page_that_redirects_to_the_internal_address_is_refused(sites: Sites) -> None:
    sites.seen.connections.clear()
    with pytest.raises(UnsupportedError, match=r"led to GET http://127\.0\.0\.2:\d+/root: .*loopback"):
        capture_with_browser(f"{sites.page}/redirect?to=http://{sites.internal}/root", allow=sites.allow, settle=0.2)
    with pytest.raises(NotFoundError, match=r"ERR_TUNNEL_CONNECTION_FAILED.*CONNECT 127\.0\.0\.2:\d+: .*loopback"):
        capture_with_browser(f"{sites.page}/redirect?to=https://{sites.internal}/root", allow=sites.allow, settle=0.2)
    with pytest.raises(UnsupportedError, match=r"led to GET http://127\.0\.0\.2:\d+/navigated: "):
        capture_with_browser(f"{sites.page}/navigate.html", allow=sites.allow, settle=1.0)
    assert sites.seen.connections == []


def test_allowed_addresses_are_by_port(sites: Sites) -> None:
    # The page's own address on the internal server's port: loopback like any other.
    port = int(sites.internal.rsplit(":", 1)[1])
    with pytest.raises(UnsupportedError, match="loopback"):
        capture_with_browser(f"http://127.0.0.2:{port}/", allow=[("127.0.0.2", port + 1)])
    with pytest.raises(UnsupportedError, match="allow-private"):
        capture_with_browser(sites.page + "/plain.html")


def test_cli_reports_what_the_proxy_refused(sites: Sites, tmp_path: Path) -> None:
    # With --allow-private every address is allowed; what the proxy still refuses is a
    # host it cannot check: .invalid never resolves (RFC 6761 §6.4).
    out = tmp_path / "plain.mht"
    result = CliRunner().invoke(
        cli, ["capture", sites.page + "/plain.html", "--browser", "--allow-private", "--settle", "0.2", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "a plain page" in _texts(out.read_bytes())
    assert "refused: GET http://pdi-capture-test.invalid/x.png: cannot resolve pdi-capture-test.invalid" in result.stderr
