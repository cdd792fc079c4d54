"""Answers from the cache written by the HTTP/1.1 protocol itself (pdi.server.process.connection.CachedAnswerProtocol).

The protocol answers a plain request for a name the cache holds as soon as
its head is parsed, with no ASGI request cycle. These tests speak HTTP/1.1
over a socket: that its answers are byte for byte the resolver's (the Date
aside), that the ASGI app is not called for them but is for every request
that is not the plain case, that pipelined requests are answered in order,
and that a client which sends many requests and reads nothing cannot make
the server hold their answers.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from server_helpers import exchange, in_thread, read_response, start_serve, stop
from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.process.connection import answering_protocol
from support.memory_transport import MemoryTransport

S = "wire.example.us"


@pytest.fixture
def names(tmp_path: Path) -> dict[str, str]:
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        text = str(archive.add(S, b"Hello, world.\nSecond line.\n", format="text"))
        big = str(archive.add(S, b"0123456789abcdef" * 6400, format="text"))  # 100 KB
    return {"text": text, "big": big, "location": str(tmp_path / "archive")}


class Calls:
    """ASGI middleware counting the requests that reach the app, by path."""

    def __init__(self, app: Starlette) -> None:
        self.app = app
        self.paths: list[str] = []
        self.state = app.state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.paths.append(scope["path"])
        await self.app(scope, receive, send)


@contextmanager
def _serving(app: Starlette, *, cached: bool = True) -> Iterator[tuple[int, Calls]]:
    """uvicorn in a thread with pdi serve's protocol (the app's cache, or none), on a free port."""
    calls = Calls(app)
    protocol = answering_protocol(10, app.state.cache if cached else None)
    with in_thread(calls, host="127.0.0.1", port=0, log_level="warning", http=protocol) as server:
        yield server.servers[0].sockets[0].getsockname()[1], calls


def _request(name: str, method: str = "GET", **fields: str) -> bytes:
    lines = [f"{method} /uri-res/N2R?{name.replace('#', '%23')} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{key.replace('_', '-')}: {value}" for key, value in fields.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_answers_from_the_protocol_are_the_resolvers(names: dict[str, str]) -> None:
    text = names["text"]
    with _serving(create_app(names["location"], cache_bytes=0), cached=False) as (port, _):
        tag = exchange(port, [_request(text)])[0].split(b"etag: ")[1].split(b"\r\n")[0].decode()
        requests = [
            _request(text),
            _request(text, "HEAD"),
            _request(text, Range="bytes=0-4"),
            _request(text, Range="bytes=-3"),
            _request(text, Range="bytes=999-"),
            _request(text, If_None_Match=tag),
            _request(text, If_None_Match='"other"'),
            _request(text, Range="bytes=0-4", If_Range='"other"'),
            _request(text + "#line=1,2"),
        ]
        expected = exchange(port, requests)
    assert [e.split(b" ")[1] for e in expected] == [b"200", b"200", b"206", b"206", b"416", b"304", b"200", b"200", b"200"]
    assert expected[2].endswith(b"\r\n\r\nHello") and expected[8].endswith(b"\r\n\r\nSecond line.\r\n")  # a line, CRLF-canonical

    app = create_app(names["location"])
    with _serving(app) as (port, calls):
        exchange(port, [_request(text), _request(text + "#line=1,2")])  # kept now
        assert calls.paths == ["/uri-res/N2R"] * 2
        answers = exchange(port, requests)
        assert calls.paths == ["/uri-res/N2R"] * 2, "the app was asked for answers the cache holds"
    assert answers == expected


def test_requests_other_than_the_plain_case_go_to_the_app(names: dict[str, str]) -> None:
    text = names["text"]
    app = create_app(names["location"])
    with _serving(app) as (port, calls):
        plain = exchange(port, [_request(text)])[0]
        calls.paths.clear()
        closing = _request(text, Connection="close")
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(closing)
            assert read_response(conn, bytearray()) == plain.replace(b"\r\n\r\n", b"\r\nconnection: close\r\n\r\n")
            assert conn.recv(1) == b""  # closed, as asked
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(_request(text).replace(b"HTTP/1.1", b"HTTP/1.0"))
            assert conn.recv(65536).startswith(b"HTTP/1.1 200 ")
        assert calls.paths == ["/uri-res/N2R"] * 2


def test_if_match_is_the_resolvers_to_answer_from_the_cache_or_not(names: dict[str, str]) -> None:
    # RFC 9110 §13.1.1: a GET whose If-Match holds no tag of the answer is not performed (412), even of an answer the
    # cache holds; a tag that holds (or *) is the answer itself; If-Match is read before If-None-Match (§13.2.2)
    text = names["text"]
    app = create_app(names["location"])
    with _serving(app) as (port, calls):
        whole = exchange(port, [_request(text)])[0]
        tag = whole.split(b"etag: ")[1].split(b"\r\n")[0].decode()
        calls.paths.clear()
        failed, held, anything, weak, both, unchanged, empty = exchange(port, [
            _request(text, If_Match='"nope"'), _request(text, If_Match=f'"other", {tag}'), _request(text, If_Match="*"),
            _request(text, If_Match="W/" + tag), _request(text, If_Match='"nope"', If_None_Match=tag),
            _request(text, If_Match=tag, If_None_Match=tag), _request(text, If_Match="")])
        assert calls.paths == ["/uri-res/N2R"] * 7, "the protocol answered an If-Match from the cache"
    assert unchanged.startswith(b"HTTP/1.1 304 ")  # If-Match holds, then If-None-Match is read (§13.2.2)
    assert empty.startswith(b"HTTP/1.1 412 ")  # an empty list holds no tag, from the cache or not
    with _serving(app) as (port, calls):
        described, any_ = exchange(port, [_request(text, If_Match=tag, Accept="application/json"),
                                          _request(text, If_Match="*", Accept="application/json")])
    assert described.startswith(b"HTTP/1.1 412 ")  # N2C's description has no tag: only * holds
    assert any_.startswith(b"HTTP/1.1 200 ") and b"application/json" in any_
    for refused in (failed, weak, both):  # a weak tag never matches by strong comparison (§8.8.3.2)
        assert refused.startswith(b"HTTP/1.1 412 ") and b"application/problem+json" in refused
        assert b"holds no tag of this answer" in refused
    for given in (held, anything):
        assert given.startswith(b"HTTP/1.1 200 ") and given.endswith(b"\r\n\r\nHello, world.\nSecond line.\n")


def test_pipelined_requests_are_answered_in_order(names: dict[str, str]) -> None:
    text, big = names["text"], names["big"]
    generic = text.rsplit(".", 2)[0]
    app = create_app(names["location"])
    with _serving(app) as (port, calls):
        exchange(port, [_request(text), _request(text + "#char=0,5")])
        calls.paths.clear()
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            # cached, not cached (a generic name's list), cached while that one is answered, not cached yet
            conn.sendall(_request(text) + _request(generic) + _request(text + "#char=0,5") + _request(big))
            buffered = bytearray()
            answers = [read_response(conn, buffered) for _ in range(4)]
    assert [a.split(b" ")[1] for a in answers] == [b"200", b"300", b"200", b"200"]
    assert answers[0].endswith(b"\r\n\r\nHello, world.\nSecond line.\n")
    assert b"/uri-res/N2R?" + text.encode() in answers[1]
    assert answers[2].endswith(b"\r\n\r\nHello")
    assert answers[3].endswith(b"\r\n\r\n" + b"0123456789abcdef" * 6400)
    # the first answered by the protocol; the third, asked while the second was answered, by the app
    # (from the cache); the generic name's and the big text's by the resolver
    assert calls.paths == ["/uri-res/N2R"] * 3


def _rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1])


def test_a_client_that_reads_nothing_cannot_make_the_server_hold_the_answers(names: dict[str, str]) -> None:
    # 3,000 requests for a 100 KB answer the cache holds, sent at once and never read: 300 MB
    # if each were written out at once; the protocol stops answering itself when the
    # connection's write buffer is full, and uvicorn then stops reading the requests.
    process, port, _ = start_serve(names["location"], "--workers", "1", drain=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                exchange(port, [_request(names["big"])])  # kept now
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None, "pdi serve did not start"
                time.sleep(0.1)
        before = _rss_kib(process.pid)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as greedy:
            greedy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            greedy.settimeout(1)
            sent = 0
            try:
                for _ in range(3000):
                    greedy.sendall(_request(names["big"]))
                    sent += 1
            except TimeoutError:
                pass  # the server stopped reading: its receive buffer and ours are full
            time.sleep(2)
            grown = _rss_kib(process.pid) - before
            assert exchange(port, [_request(names["text"])])[0].startswith(b"HTTP/1.1 200 ")  # others still served
        assert grown < 50 * 1024, f"pdi serve grew by {grown // 1024} MiB for a client that read nothing ({sent} sent)"
    finally:
        stop(process, timeout=30)


class _Scopes:
    """An ASGI app keeping the scope of each request it is given (a copy, less the extensions), answering 204."""

    def __init__(self) -> None:
        self.scopes: list[dict[str, object]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.scopes.append({k: v for k, v in scope.items() if k != "extensions"})
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})


def test_the_scope_of_a_request_for_the_app_is_the_one_uvicorn_makes() -> None:
    # the connection makes a request's ASGI scope only when the request goes to the app: the same scope, key for key,
    # as uvicorn's own httptools protocol gives the same request (the addresses aside: each server its own port)
    requests = [b"GET /a%20b/c?x=1&y HTTP/1.1\r\nHost: h.example\r\nX-One: 1\r\nX-One: 2\r\n\r\n",
                b"HEAD /uri-res/N2R?urn:pdi://x HTTP/1.1\r\nHost: h.example\r\nAuthorization: Bearer t\r\n\r\n",
                b"GET http://other.example/p HTTP/1.1\r\nHost: h.example\r\n\r\n",
                b"GET /old HTTP/1.0\r\nHost: h.example\r\n\r\n"]
    seen = []
    for http in ("httptools", answering_protocol(10, None)):
        app = _Scopes()
        with in_thread(app, host="127.0.0.1", port=0, log_level="warning", http=http, ws="none") as server:
            port = server.servers[0].sockets[0].getsockname()[1]
            for request in requests:
                exchange(port, [request])
        for scope in app.scopes:
            assert scope["server"] == ("127.0.0.1", port)
            assert isinstance(scope["client"], tuple) and scope["client"][0] == "127.0.0.1"
        seen.append([{k: v for k, v in scope.items() if k not in ("server", "client")} for scope in app.scopes])
    uvicorns, ours = seen
    # uvicorn reads an absolute target's authority as a path; RFC 9112 §3.2.2 has it stand for Host (target_authority)
    assert [dict(s, headers=[f for f in s["headers"] if f[0] != b"host"]) for s in ours] == [
        dict(s, headers=[f for f in s["headers"] if f[0] != b"host"]) for s in uvicorns]
    assert [s["method"] for s in ours] == ["GET", "HEAD", "GET", "GET"]
    assert ours[0]["path"] == "/a b/c" and ours[0]["query_string"] == b"x=1&y" and ours[3]["http_version"] == "1.0"
    assert ours[0]["headers"] == [(b"host", b"h.example"), (b"x-one", b"1"), (b"x-one", b"2")]


def test_an_answer_the_connection_writes_makes_no_asgi_scope(names: dict[str, str]) -> None:
    # a plain N2R of a name no cache holds is answered by the connection (the app's public answers): no ASGI scope is
    # made for it (uvicorn makes one for every request, at its head's first octet)
    app = create_app(names["location"])

    async def ask() -> tuple[object, bytes]:
        config = uvicorn.Config(app, log_level="warning", ws="none", proxy_headers=False)
        config.load()
        made = answering_protocol(10, app.state.cache, None, app.state.public)
        protocol = made(config=config, server_state=uvicorn.server.ServerState(), app_state={},
                        _loop=asyncio.get_running_loop())
        transport = MemoryTransport()
        protocol.connection_made(transport)
        try:
            protocol.data_received(_request(names["text"]) + _request(names["text"], "HEAD"))
        finally:
            protocol.connection_lost(None)
        return protocol.scope, bytes(transport.written)

    scope, written = asyncio.run(ask())
    assert written.startswith(b"HTTP/1.1 200 OK\r\n") and written.count(b"HTTP/1.1 200 OK\r\n") == 2
    assert written.split(b"\r\n\r\n")[1].startswith(b"Hello, world.\nSecond line.\n")
    assert scope is None
