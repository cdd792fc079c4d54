"""The capture proxy alone, over real sockets: what it lets through, what it refuses, its bounds.

Upstream servers listen on loopback addresses (Linux routes all of 127/8 to lo): an
address the policy allows by ``(address, port)``, and others it must refuse as loopback
(RFC 6890). Each upstream records every connection it accepts, so "refused" is checked
as "no connection at all", not only as a status.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.capture.proxy import (
    AddressPolicy,
    CaptureProxy,
    ProxyLimits,
    _host_and_port,
    _parse_request,
    _Refused,
)
from pdi.errors import ParseError, UnsupportedError

OK_BODY = b"upstream says hello"


# Known, and left for now: a connection the asyncio server is still accepting when a CaptureProxy stops (the
# tests open one and close the proxy at once) can be left to the garbage collector, which warns about the
# unclosed socket or transport. The proxy runs for one capture, so it costs one descriptor until collected;
# the closing note of issue 22 names it. Only these tests' ResourceWarnings of that kind are not errors.
pytestmark = [
    pytest.mark.filterwarnings("ignore:unclosed transport <_SelectorSocketTransport:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:unclosed <socket\\.socket:ResourceWarning"),
]


@dataclass
class Upstream:
    """A TCP server on ``address``: answers HTTP, echoes after ``ECHO``, records what it was sent."""

    address: str
    port: int = 0
    connections: int = 0
    received: list[bytes] = field(default_factory=list)
    sock: socket.socket | None = None

    def start(self) -> Upstream:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((self.address, self.port))
        self.port = self.sock.getsockname()[1]
        self.sock.listen(16)
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def _serve(self) -> None:
        assert self.sock is not None
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        data = b""
        with conn:
            try:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                if data.startswith(b"ECHO"):
                    self.received.append(data)
                    conn.sendall(data)
                    while chunk := conn.recv(65536):
                        conn.sendall(chunk)
                    return
                if not data:
                    return
                head, _, body = data.partition(b"\r\n\r\n")
                length = next(
                    (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")),
                    0,
                )
                while len(body) < length:
                    body += conn.recv(65536)
                self.received.append(head + b"\r\n\r\n" + body)
                path = head.split(b" ")[1]
                if path == b"/upgrade":
                    conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
                    while chunk := conn.recv(65536):
                        conn.sendall(chunk)
                    return
                if path == b"/huge-head":
                    conn.sendall(b"HTTP/1.1 200 OK\r\n" + b"X-Big: " + b"a" * 300_000 + b"\r\n\r\n")
                    return
                if path == b"/interim":
                    conn.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n")
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nKeep-Alive: timeout=5\r\nConnection: keep-alive\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(OK_BODY), OK_BODY)
                )
            except OSError:
                return

    def stop(self) -> None:
        assert self.sock is not None
        self.sock.close()


@pytest.fixture
def allowed() -> Iterator[Upstream]:
    up = Upstream("127.0.0.1").start()
    yield up
    up.stop()


@pytest.fixture
def internal() -> Iterator[Upstream]:
    up = Upstream("127.0.0.2").start()
    yield up
    up.stop()


def _ask(proxy: CaptureProxy, data: bytes, *, read_timeout: float = 10.0) -> bytes:
    """Send ``data`` to the proxy and read until it closes the connection."""
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=read_timeout) as conn:
        conn.sendall(data)
        got = b""
        while chunk := conn.recv(65536):
            got += chunk
        return got


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def test_get_to_an_allowed_address_is_sent_on_in_origin_form_with_connection_close(allowed: Upstream) -> None:
    policy = AddressPolicy.of(allow=[("127.0.0.1", allowed.port)])
    with CaptureProxy(policy) as proxy:
        answer = _ask(
            proxy,
            f"GET http://127.0.0.1:{allowed.port}/p?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{allowed.port}\r\n"
            "Proxy-Connection: keep-alive\r\nX-Mine: 1\r\n\r\n".encode(),
        )
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 200 OK"
    assert body == OK_BODY
    # Hop-by-hop fields of the answer are dropped (RFC 9110 §7.6.1); the proxy closes.
    lines = head.split(b"\r\n")[1:]
    assert b"Connection: close" in lines and not any(line.lower().startswith(b"keep-alive") for line in lines)
    [sent] = allowed.received
    sent_lines = sent.split(b"\r\n")
    assert sent_lines[0] == b"GET /p?q=1 HTTP/1.1"
    assert f"Host: 127.0.0.1:{allowed.port}".encode() in sent_lines
    assert b"Connection: close" in sent_lines and b"X-Mine: 1" in sent_lines
    assert not any(line.lower().startswith(b"proxy-connection") for line in sent_lines)
    assert proxy.refused == []


def test_request_body_is_forwarded_by_its_length(allowed: Upstream) -> None:
    policy = AddressPolicy.of(allow=[("127.0.0.1", allowed.port)])
    with CaptureProxy(policy) as proxy:
        answer = _ask(
            proxy,
            f"POST http://127.0.0.1:{allowed.port}/form HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello".encode(),
        )
    assert _status(answer) == 200
    assert allowed.received[0].endswith(b"\r\n\r\nhello")


def test_interim_response_is_passed_on_then_the_final_one(allowed: Upstream) -> None:
    policy = AddressPolicy.of(allow=[("127.0.0.1", allowed.port)])
    with CaptureProxy(policy) as proxy:
        answer = _ask(proxy, f"GET http://127.0.0.1:{allowed.port}/interim HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 103 Early Hints\r\n")
    assert b"\r\n\r\nHTTP/1.1 200 OK\r\n" in answer and answer.endswith(OK_BODY)


@pytest.mark.parametrize("how", ["connect", "get"])
def test_loopback_address_is_refused_with_403_and_never_connected_to(internal: Upstream, how: str) -> None:
    with CaptureProxy(AddressPolicy()) as proxy:
        if how == "connect":
            answer = _ask(proxy, f"CONNECT 127.0.0.2:{internal.port} HTTP/1.1\r\nHost: 127.0.0.2:{internal.port}\r\n\r\n".encode())
            request = f"CONNECT 127.0.0.2:{internal.port}"
        else:
            answer = _ask(proxy, f"GET http://127.0.0.2:{internal.port}/secret HTTP/1.1\r\n\r\n".encode())
            request = f"GET http://127.0.0.2:{internal.port}/secret"
    assert _status(answer) == 403
    assert b"not a public address (loopback)" in answer
    assert internal.connections == 0
    assert [(r.request, "loopback" in r.reason) for r in proxy.refused] == [(request, True)]


def test_allow_list_is_by_address_and_port(allowed: Upstream) -> None:
    # The same address on another port is loopback like any other.
    other = Upstream("127.0.0.1").start()
    try:
        policy = AddressPolicy.of(allow=[("127.0.0.1", allowed.port)])
        with CaptureProxy(policy) as proxy:
            answer = _ask(proxy, f"GET http://127.0.0.1:{other.port}/ HTTP/1.1\r\n\r\n".encode())
        assert _status(answer) == 403 and other.connections == 0
    finally:
        other.stop()


def test_allow_private_lets_loopback_through(internal: Upstream) -> None:
    with CaptureProxy(AddressPolicy(allow_private=True)) as proxy:
        answer = _ask(proxy, f"GET http://127.0.0.2:{internal.port}/ HTTP/1.1\r\n\r\n".encode())
    assert _status(answer) == 200 and internal.connections == 1


@pytest.mark.parametrize(
    "host",
    [
        "localhost",  # resolves to loopback
        "[::1]",
        "[::ffff:127.0.0.2]",  # IPv6 carrying the loopback IPv4 (RFC 4291 §2.5.5.2)
        "0x7f.2",  # inet_aton's spelling of 127.0.0.2, which getaddrinfo accepts
        "2130706434",  # 127.0.0.2 as one number
        "169.254.169.254",  # link-local: cloud metadata
        "0.0.0.0",
    ],
)
def test_every_spelling_of_a_non_public_address_is_refused(internal: Upstream, host: str) -> None:
    with CaptureProxy(AddressPolicy()) as proxy:
        answer = _ask(proxy, f"CONNECT {host}:{internal.port} HTTP/1.1\r\n\r\n".encode())
    assert _status(answer) == 403, answer
    assert internal.connections == 0


def test_connects_to_the_address_it_checked_not_a_second_lookup(
    allowed: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DNS rebinding: the name first resolves to the allowed address, then to a refused
    # one on the same port. The proxy must look it up once and connect to what it checked.
    rebound = Upstream("127.0.0.2", port=allowed.port).start()
    real = socket.getaddrinfo
    lookups: list[str] = []

    def rebinding(host: str, port: object, *args: object, **kwargs: object) -> list[tuple[object, ...]]:
        if host == "rebind.test":
            lookups.append(host)
            address = "127.0.0.1" if len(lookups) == 1 else "127.0.0.2"
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]
        return real(host, port, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    try:
        policy = AddressPolicy.of(allow=[("127.0.0.1", allowed.port)])
        with CaptureProxy(policy) as proxy:
            answer = _ask(proxy, f"GET http://rebind.test:{allowed.port}/ HTTP/1.1\r\n\r\n".encode())
        assert _status(answer) == 200
        assert lookups == ["rebind.test"]
        assert allowed.connections == 1 and rebound.connections == 0
        assert f"Host: rebind.test:{allowed.port}".encode() in allowed.received[0]
    finally:
        rebound.stop()


def test_one_refused_address_among_those_found_refuses_the_host(
    allowed: Upstream, internal: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = socket.getaddrinfo

    def two(host: str, port: object, *args: object, **kwargs: object) -> list[tuple[object, ...]]:
        if host == "mixed.test":
            return [
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port)),
            ]
        return real(host, port, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", two)
    policy = AddressPolicy.of(allow=[("127.0.0.1", allowed.port)])
    with CaptureProxy(policy) as proxy:
        answer = _ask(proxy, f"CONNECT mixed.test:{allowed.port} HTTP/1.1\r\n\r\n".encode())
    assert _status(answer) == 403
    assert b"127.0.0.2" in answer
    assert allowed.connections == 0 and internal.connections == 0


def test_connect_tunnels_bytes_both_ways(allowed: Upstream) -> None:
    policy = AddressPolicy.of(allow=[("127.0.0.1", allowed.port)])
    with CaptureProxy(policy) as proxy, socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as conn:
        conn.sendall(f"CONNECT 127.0.0.1:{allowed.port} HTTP/1.1\r\nHost: 127.0.0.1:{allowed.port}\r\n\r\n".encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += conn.recv(1)
        assert answer == b"HTTP/1.1 200 Connection established\r\n\r\n"
        conn.sendall(b"ECHO one\r\n\r\n")
        got = b""
        while len(got) < len(b"ECHO one\r\n\r\n"):
            got += conn.recv(65536)
        conn.sendall(b"two")
        more = b""
        while len(more) < 3:
            more += conn.recv(65536)
    assert (got, more) == (b"ECHO one\r\n\r\n", b"two")


def test_upgrade_answered_101_becomes_a_tunnel(allowed: Upstream) -> None:
    # A ws:// handshake sent in absolute form (RFC 6455 §4.1 through an HTTP proxy).
    policy = AddressPolicy.of(allow=[("127.0.0.1", allowed.port)])
    with CaptureProxy(policy) as proxy, socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as conn:
        conn.sendall(
            f"GET http://127.0.0.1:{allowed.port}/upgrade HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n".encode()
        )
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += conn.recv(1)
        conn.sendall(b"ping")
        echoed = b""
        while len(echoed) < 4:
            echoed += conn.recv(65536)
    assert answer.startswith(b"HTTP/1.1 101 ") and b"Upgrade: echo\r\n" in answer and b"Connection: upgrade\r\n" in answer
    sent = allowed.received[0].split(b"\r\n")
    assert b"Upgrade: echo" in sent and b"Connection: Upgrade" in sent
    assert echoed == b"ping"


@pytest.mark.parametrize(
    ("request_bytes", "status", "says"),
    [
        (b"GET https://127.0.0.1:9/ HTTP/1.1\r\n\r\n", 403, b"only tunnelled"),
        (b"GET ftp://127.0.0.1:9/ HTTP/1.1\r\n\r\n", 403, b"only http URLs"),
        (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 403, b"only http URLs"),
        (b"GET ws://127.0.0.1:9/ HTTP/1.1\r\n\r\n", 403, b"only http URLs"),
        (b"CONNECT ex%61mple.org:443 HTTP/1.1\r\n\r\n", 403, b"not a host name"),
        (b"CONNECT [::1:443 HTTP/1.1\r\n\r\n", 400, b"no valid port"),
        (b"CONNECT example.org HTTP/1.1\r\n\r\n", 400, b"has no port"),
        (b"CONNECT example.org:0 HTTP/1.1\r\n\r\n", 400, b"not a TCP port"),
        (b"CONNECT user@example.org:443 HTTP/1.1\r\n\r\n", 400, b"is not host:port"),
        (b"GET http://127.0.0.1:9/ HTTP/2.0\r\n\r\n", 400, b"not an HTTP/1.x request line"),
        (b"GET http://127.0.0.1:9/ HTTP/1.1\r\nX: 1\r\n folded\r\n\r\n", 400, b"folds a header line"),
        (b"GET http://127.0.0.1:9/ HTTP/1.1\r\nBad Name: 1\r\n\r\n", 400, b"malformed header line"),
        (b"GET http://127.0.0.1:9/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400, b"Content-Length"),
        # found by an attack (2026-11-27): ASCII digits, too many for int() (Python reads 4,300 at most): its
        # ValueError dropped the connection unanswered; RFC 9110 §8.6 Content-Length = 1*DIGIT, but no body the
        # proxy forwards is 10**20 octets long
        (b"GET http://127.0.0.1:9/ HTTP/1.1\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n", 400,
         b"Content-Length"),
        (b"GET http://127.0.0.1:9/ HTTP/1.1\r\nContent-Length: \xc2\xb2\r\n\r\n", 400, b"Content-Length"),
    ],
)
def test_what_the_proxy_cannot_check_or_read_is_refused(request_bytes: bytes, status: int, says: bytes) -> None:
    with CaptureProxy(AddressPolicy(allow_private=True)) as proxy:
        answer = _ask(proxy, request_bytes)
    assert _status(answer) == status, answer
    assert says in answer, answer


def test_chunked_request_bodies_are_not_forwarded(allowed: Upstream) -> None:
    policy = AddressPolicy.of(allow=[("127.0.0.1", allowed.port)])
    with CaptureProxy(policy) as proxy:
        answer = _ask(
            proxy,
            f"POST http://127.0.0.1:{allowed.port}/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".encode(),
        )
    assert _status(answer) == 501 and allowed.connections == 0


def test_the_proxy_never_connects_to_itself() -> None:
    with CaptureProxy(AddressPolicy(allow_private=True)) as proxy:
        answer = _ask(proxy, f"CONNECT 127.0.0.1:{proxy.port} HTTP/1.1\r\n\r\n".encode())
    assert _status(answer) == 403 and b"the capture proxy itself" in answer


def test_request_header_block_is_bounded() -> None:
    limits = ProxyLimits(max_request_head_bytes=4096)
    with CaptureProxy(AddressPolicy(allow_private=True), limits) as proxy:
        long_line = _ask(proxy, b"GET http://127.0.0.1:9/ HTTP/1.1\r\nX: " + b"a" * 5000 + b"\r\n\r\n")
        many_lines = _ask(proxy, b"GET http://127.0.0.1:9/ HTTP/1.1\r\n" + b"X: aaaaaaaa\r\n" * 500 + b"\r\n")
    assert _status(long_line) == 400 and b"longer than 4096 bytes" in long_line
    assert _status(many_lines) == 400 and b"longer than 4096 bytes" in many_lines


def test_response_header_block_is_bounded(allowed: Upstream) -> None:
    policy = AddressPolicy.of(allow=[("127.0.0.1", allowed.port)])
    with CaptureProxy(policy, ProxyLimits(max_response_head_bytes=256 * 1024)) as proxy:
        answer = _ask(proxy, f"GET http://127.0.0.1:{allowed.port}/huge-head HTTP/1.1\r\n\r\n".encode())
    assert _status(answer) == 502 and b"longer than 262144 bytes" in answer


def test_a_request_sent_too_slowly_is_cut_off() -> None:
    limits = ProxyLimits(head_timeout=0.5)
    with CaptureProxy(AddressPolicy(allow_private=True), limits) as proxy:
        started = time.monotonic()
        answer = _ask(proxy, b"GET http://127.0.0.1:9/ HTTP/1.1\r\nX-Slow: ")
        took = time.monotonic() - started
    assert _status(answer) == 400 and b"within 0.5 s" in answer
    assert took < 5


def test_a_connection_that_sends_nothing_is_closed_without_an_answer() -> None:
    # Chromium opens connections to its proxy ahead of need; one it never uses is no refusal.
    with CaptureProxy(AddressPolicy(), ProxyLimits(head_timeout=0.5)) as proxy:
        started = time.monotonic()
        answer = _ask(proxy, b"")
        took = time.monotonic() - started
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10):
            pass  # opened and closed at once
    assert answer == b"" and took < 5
    assert proxy.refused == []


def test_an_idle_tunnel_is_closed(allowed: Upstream) -> None:
    policy = AddressPolicy.of(allow=[("127.0.0.1", allowed.port)])
    with CaptureProxy(policy, ProxyLimits(idle_timeout=0.5)) as proxy:
        started = time.monotonic()
        answer = _ask(proxy, f"CONNECT 127.0.0.1:{allowed.port} HTTP/1.1\r\n\r\n".encode())
        took = time.monotonic() - started
    assert answer == b"HTTP/1.1 200 Connection established\r\n\r\n"
    assert took < 5


def test_connections_are_bounded() -> None:
    limits = ProxyLimits(max_connections=2, head_timeout=5)
    with CaptureProxy(AddressPolicy(allow_private=True), limits) as proxy:
        waiting = [socket.create_connection(("127.0.0.1", proxy.port), timeout=10) for _ in range(2)]
        try:
            time.sleep(0.2)
            answer = _ask(proxy, b"GET http://127.0.0.1:9/ HTTP/1.1\r\n\r\n")
        finally:
            for conn in waiting:
                conn.close()
    assert _status(answer) == 503 and b"more than 2 connections" in answer


def test_refusals_kept_are_bounded_in_number_and_length(internal: Upstream) -> None:
    with CaptureProxy(AddressPolicy(), ProxyLimits(max_refusals_kept=2)) as proxy:
        long_path = "/" + "a" * 5000
        for path in [long_path, "/2", "/3", "/4"]:
            assert _status(_ask(proxy, f"GET http://127.0.0.2:{internal.port}{path} HTTP/1.1\r\n\r\n".encode())) == 403
    assert len(proxy.refused) == 2 and proxy.refused_unkept == 2
    assert len(proxy.refused[0].request) == 1001 and proxy.refused[0].request.endswith("a…")
    assert proxy.refused[1].request == f"GET http://127.0.0.2:{internal.port}/2"
    assert internal.connections == 0


def test_policy_checks_before_the_capture() -> None:
    assert AddressPolicy(allow_private=True).addresses("127.0.0.1", 80) == ["127.0.0.1"]
    with pytest.raises(UnsupportedError, match="loopback"):
        AddressPolicy().addresses("127.0.0.1", 80)
    assert AddressPolicy.of(allow=[("127.0.0.1", 80)]).addresses("127.0.0.1", 80) == ["127.0.0.1"]
    with pytest.raises(UnsupportedError, match="loopback"):
        AddressPolicy.of(allow=[("127.0.0.1", 80)]).addresses("127.0.0.1", 81)
    with pytest.raises(ParseError):
        AddressPolicy.of(allow=[("localhost", 80)])


HOSTS = st.one_of(
    st.from_regex(r"[a-z0-9-]{1,10}(\.[a-z0-9-]{1,10}){0,3}", fullmatch=True),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda a: f"[{a}]"),
    st.text(alphabet="abc.:[]%@/ \t\\-0123456789", max_size=20),
)


# RFC 9110 §9.3.6: CONNECT's target is authority-form, host ":" port; a DNS name of RFC 1123 §2.1 labels,
# an IPv4 address or a bracketed IPv6 one, and a port from 1 to 65535, is one the proxy must take
_LABEL = r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?"
_WELL_FORMED_HOSTS = st.one_of(
    st.from_regex(rf"{_LABEL}(\.{_LABEL}){{0,3}}", fullmatch=True),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda a: f"[{a}]"),
)


@given(st.one_of(
    st.tuples(HOSTS, st.one_of(st.integers(-5, 70000).map(str), st.just(""), st.text(alphabet="0123456789a:", max_size=6)),
              st.just(False)),
    st.tuples(_WELL_FORMED_HOSTS, st.integers(1, 65535).map(str), st.just(True)),
))
def test_property_a_connect_target_is_a_checkable_host_and_a_tcp_port_or_refused(case: tuple[str, str, bool]) -> None:
    host, port, well_formed = case
    target = f"{host}:{port}" if port else host
    try:
        name, number = _host_and_port(target, None, "CONNECT " + target)
    except _Refused as refused:
        assert not well_formed, f"CONNECT {target} is host:port (RFC 9110 §9.3.6) but was refused: {refused}"
        assert refused.status in (400, 403)
        return
    # taken: the target is host ":" port, split at its last colon (a host drawn with a colon in it and no port,
    # "0:1", is the host "0" and the port 1)
    written_host, _, written_port = target.rpartition(":")
    assert 0 < number < 65536 and number == int(written_port)
    assert name == written_host.strip("[]").lower()
    assert all(c.isalnum() or c in ".-_:" for c in name)


# RFC 9112 §3 and §5: request-line = method SP request-target SP HTTP-version, then field-name ":" OWS
# field-value OWS lines; a head built so, of tokens, an origin-form target and visible values, must be read
_TCHARS = "!#$%&'*+.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-"
_WELL_FORMED_HEADS = st.tuples(
    st.text(alphabet=_TCHARS, min_size=1, max_size=8),
    st.from_regex(r"/[A-Za-z0-9._~!$&'()*+,;=:@%/-]{0,20}(\?[A-Za-z0-9=&/?-]{0,10})?", fullmatch=True),
    st.sampled_from(["HTTP/1.1", "HTTP/1.0"]),
    st.lists(st.tuples(st.text(alphabet=_TCHARS, min_size=1, max_size=10),
                       st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=12)), max_size=4),
).map(lambda h: "\r\n".join([f"{h[0]} {h[1]} {h[2]}", *(f"{n}: {v}" for n, v in h[3])]).encode("ascii"))


@given(st.one_of(st.binary(max_size=200).map(lambda b: (b, False)), _WELL_FORMED_HEADS.map(lambda b: (b, True))))
def test_property_request_lines_parse_or_raise_parse_error(case: tuple[bytes, bool]) -> None:
    line, well_formed = case
    lines = line.split(b"\r\n")
    if not lines[0]:
        return
    try:
        head = _parse_request(lines)
    except ParseError as refused:
        assert not well_formed, f"{line!r} is an HTTP/1.1 request head (RFC 9112 §3, §5) but was refused: {refused}"
        return
    _method, target, version = head.start
    assert version in (b"HTTP/1.1", b"HTTP/1.0") and target and b" " not in target
    assert all(b":" not in name and name for name, _ in head.fields)


def test_a_lookup_that_never_ends_holds_neither_the_request_nor_the_proxys_end(monkeypatch: pytest.MonkeyPatch) -> None:
    # A site's name server may leave a lookup unanswered for as long as the resolver waits. Looked up in asyncio's
    # default executor, the request gave up at its connect timeout, but the proxy's end (asyncio.run waits for
    # that executor's threads) waited for the lookup, and the capture with it. Here the lookup ends only when the
    # test lets it, after the proxy has ended.
    real = socket.getaddrinfo
    let_go, ended = threading.Event(), threading.Event()

    def lookup(host: str, *args: object, **kwargs: object) -> object:
        if host != "slow.test":
            return real(host, *args, **kwargs)  # type: ignore[arg-type]
        let_go.wait(timeout=120)
        ended.set()
        raise socket.gaierror(socket.EAI_AGAIN, "no answer")

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    try:
        with CaptureProxy(AddressPolicy.of(), ProxyLimits(connect_timeout=1.0)) as proxy:
            answer = _ask(proxy, b"CONNECT slow.test:443 HTTP/1.1\r\n\r\n")
            assert _status(answer) == 403 and b"resolving slow.test took longer than 1.0 s" in answer
        assert not ended.is_set()  # the proxy ended while the lookup was still waiting
    finally:
        let_go.set()
