"""`pdi capture --browser` reaches nothing the page did not ask for, and Chromium runs sandboxed (issue 22).

Chromium's own services (sign-in's ListAccounts on accounts.google.com, GCM's check-in
on android.clients.google.com, the search engine's preconnect to www.google.com, the
network time on clients2.google.com…) asked the capture proxy for their hosts, and the
proxy looked each name up in the system's DNS. Now the flags switch off what they can,
and the proxy resolves and connects only to hosts the page's own targets (its frames
and workers, seen through the DevTools protocol) asked for.

The whole capture, ``pdi`` and Chromium with every process and thread, runs under
``strace -f``, which prints every ``connect``, ``sendto``, ``sendmsg`` and ``sendmmsg``
with the socket's protocol (``-yy``). A name looked up in DNS is a datagram (or a TCP
connection) to port 53 of the nameserver in ``/etc/resolv.conf``; a connection to
anything is a TCP ``connect``. The capture may only connect over TCP to the page's
server (127.0.0.1, its port) and to its own proxy (127.0.0.1, one other port), and may
send no datagram at all. Chromium also ``connect``\\ s UDP sockets without sending on
them (RFC 6724 address selection: which source address a destination would get, and
its IPv6 reachability probe): no packet leaves, so those are allowed, as long as nothing
is sent on any UDP socket.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from pdi.capture.browser import devtools
from pdi.capture.proxy import AddressPolicy, CaptureProxy, PageHosts, ProxyLimits
from pdi.mhtml import parse

PAGE = (
    b"<!doctype html><title>quiet</title><link rel=stylesheet href=/s.css><p>a page of its own</p>"
    b"<script>document.body.insertAdjacentHTML('beforeend', '<p id=js>built by script</p>')</script>"
)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        media, body = {"/page.html": ("text/html", PAGE), "/s.css": ("text/css", b"p { color: green }")}.get(
            self.path, ("text/plain", b"not here")
        )
        self.send_response(200 if body != b"not here" else 404)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


# strace -yy: "1591  connect(25<TCP:[92639]>, {sa_family=AF_INET, sin_port=htons(43683), sin_addr=inet_addr("127.0.0.1")}, 16) = …"
_CONNECT = re.compile(r"^\d+\s+connect\(\d+<(?P<proto>[A-Za-z0-9]+):[^>]*>, \{sa_family=(?P<family>AF_[A-Z0-9]+), (?P<rest>.*)")
_PORT = re.compile(r"sin6?_port=htons\((\d+)\)")
_ADDRESS = re.compile(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"')
_SEND = re.compile(r"^\d+\s+(sendto|sendmsg|sendmmsg)\(\d+<(?P<proto>[A-Za-z0-9]+):")


def _trace(tmp_path: Path, argv: list[str]) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    strace = shutil.which("strace")
    assert strace, "strace is not installed (scripts/bootstrap --dev installs it)"
    log = tmp_path / "strace.txt"
    done = subprocess.run(
        [strace, "-f", "-qq", "-yy", "-e", "trace=connect,sendto,sendmsg,sendmmsg", "-e", "signal=none", "-o", str(log),
         sys.executable, "-m", "pdi", *argv],
        capture_output=True, text=True, timeout=300,
    )
    return done, log.read_text(errors="replace").splitlines()


def test_a_capture_connects_to_the_page_and_its_proxy_only_and_looks_nothing_up(server: str, tmp_path: Path) -> None:
    page_port = int(server.rsplit(":", 1)[1])
    out = tmp_path / "quiet.mht"
    # Long enough for Chromium's own services to try (they start within the first seconds).
    done, lines = _trace(tmp_path, ["capture", server + "/page.html", "--browser", "--allow-private", "--settle", "6",
                                    "-o", str(out)])
    assert done.returncode == 0, done.stderr
    assert "built by script" in "".join(p.data.decode("latin-1") for p in parse(out.read_bytes()).parts)
    # Chromium's own requests are no part of the page: nothing of it was refused.
    assert "refused" not in done.stderr

    tcp: set[tuple[str, int]] = set()
    udp_probes: set[tuple[str, int]] = set()
    sent_datagrams: list[str] = []
    for line in lines:
        if (sent := _SEND.match(line)) and sent["proto"].startswith("UDP"):
            sent_datagrams.append(line)
        found = _CONNECT.match(line)
        if not found or found["family"] not in ("AF_INET", "AF_INET6"):
            continue
        port = int(_PORT.search(found["rest"]).group(1))  # type: ignore[union-attr]
        address = _ADDRESS.search(found["rest"])
        assert address, line
        where = (address.group(1) or address.group(2), port)
        assert port != 53, f"a DNS lookup: {line}"
        (tcp if found["proto"].startswith("TCP") else udp_probes).add(where)
    assert sent_datagrams == []  # no DNS query, no STUN, no QUIC: not one datagram
    assert ("127.0.0.1", page_port) in tcp
    others = tcp - {("127.0.0.1", page_port)}
    assert len(others) == 1 and all(address == "127.0.0.1" for address, _ in others), tcp  # the proxy


def test_the_proxy_resolves_only_hosts_the_page_asked_for() -> None:
    # A name nobody can resolve (RFC 6761 §6.4): looked up, it would be refused as "cannot resolve".
    page = PageHosts()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    limits = ProxyLimits(page_timeout=2.0)
    with CaptureProxy(AddressPolicy.of(allow=[("127.0.0.1", port)]), limits, page=page) as proxy:

        def ask(target: str) -> bytes:
            with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as conn:
                conn.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
                return conn.recv(65536)

        started = time.monotonic()
        answer = ask("chromium-own.invalid:443")
        assert answer.startswith(b"HTTP/1.1 403 ") and b"asked for nothing on chromium-own.invalid port 443" in answer
        assert b"resolve" not in answer
        assert time.monotonic() - started >= 2.0  # it waited for the page to ask
        assert proxy.refused == []  # not the page's: not among what the page lost

        # Asked for by the page while the request waits: let through.
        threading.Timer(0.5, page.announce, [f"http://127.0.0.1:{port}/x.png"]).start()
        assert ask(f"127.0.0.1:{port}").startswith(b"HTTP/1.1 200 ")
        # Another port of an announced host is another host.
        assert ask(f"127.0.0.1:{port + 1}").startswith(b"HTTP/1.1 403 ")
        page.announce("wss://Chromium-Own.invalid/socket")
        answer = ask("chromium-own.invalid:443")
        assert answer.startswith(b"HTTP/1.1 403 ") and b"cannot resolve chromium-own.invalid" in answer
    listener.close()


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("http://Example.COM/a", ("example.com", 80)),
        ("https://example.com:8443/", ("example.com", 8443)),
        ("ws://[::1]/s", ("::1", 80)),
        ("wss://example.com/s", ("example.com", 443)),
        ("data:text/plain,x", None),
        ("blob:http://example.com/1", None),
        ("http://example.com:99999/", None),
    ],
)
def test_page_hosts_key(url: str, key: tuple[str, int] | None) -> None:
    assert PageHosts.key(url) == key


def test_capture_chromium_runs_sandboxed_and_not_as_root() -> None:
    # devtools with a proxy is how a capture starts Chromium (sandbox by default then).
    with devtools(proxy="http://127.0.0.1:9") as pipe:
        deadline = time.monotonic() + 60
        processes = pipe.call("SystemInfo.getProcessInfo", None, None, deadline)["processInfo"]
        assert {p["type"] for p in processes} >= {"browser"}
        for process in processes:
            status = Path(f"/proc/{process['id']}/status").read_text()
            uids = next(line.split()[1:] for line in status.splitlines() if line.startswith("Uid:"))
            assert "0" not in uids, (process, uids)
            if os.geteuid() != 0:
                assert uids[0] == str(os.geteuid())
        target = pipe.call("Target.createTarget", {"url": "chrome://sandbox"}, None, deadline)["targetId"]
        session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True}, None, deadline)["sessionId"]
        text = ""
        while "sandboxed" not in text and time.monotonic() < deadline:
            time.sleep(0.2)
            evaluate = {"expression": "document.body ? document.body.innerText : ''", "returnByValue": True}
            text = pipe.call("Runtime.evaluate", evaluate, session, deadline)["result"].get("value", "")
        # Chromium's own verdict on the renderer it showed the page in (chrome://sandbox).
        assert "You are adequately sandboxed." in text, text
        assert re.search(r"Seccomp-BPF sandbox\s+Yes", text), text
        assert re.search(r"Layer 1 Sandbox\s+(Namespace|SUID)", text), text


def test_unsandboxed_devtools_for_pdis_own_pages_is_still_available() -> None:
    # The tests' own browser (pdi's pages and files in the test's folders) keeps --no-sandbox.
    with devtools(sandbox=False) as pipe:
        deadline = time.monotonic() + 60
        processes = pipe.call("SystemInfo.getProcessInfo", None, None, deadline)["processInfo"]
        browser = next(p for p in processes if p["type"] == "browser")
        status = Path(f"/proc/{browser['id']}/status").read_text()
        assert next(line.split()[1] for line in status.splitlines() if line.startswith("Uid:")) == str(os.geteuid())


