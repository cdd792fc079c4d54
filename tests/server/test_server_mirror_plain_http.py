"""A mirror sync from a plain ``http://`` origin makes no TLS context (loading the trusted certificates costs
some 20 to 40 ms of CPU a client; tests/test_answer_head_tls.py: one is made at a client's first ``https://``).

Each TLS context Python makes goes through :func:`ssl.create_default_context` (httpx's, httpcore's), so making
it raise (a fault injected) shows whether one was made; ``pdi serve`` (a real process, untouched) is the origin.
"""

from __future__ import annotations

import http.client
import os
import ssl
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from server_helpers import start_serve, stop, wait_answering

from pdi.archive import Archive
from pdi.cli import cli as main

S = "plain.example.us"


def pdi(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@contextmanager
def serving(location: Path) -> Iterator[str]:
    process, port, _ = start_serve(location, "--replay-port", "0", start_new_session=True, drain=True,
                                   env=dict(os.environ))
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


class Made(Exception):
    """A TLS context was made."""


def _raising(calls: list[str]) -> Any:
    """A stand-in for :func:`ssl.create_default_context` that raises :class:`Made`, its calls counted."""
    def refused(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        calls.append("made")
        raise Made("a TLS context was made")
    return refused


def test_a_sync_from_a_plain_http_origin_makes_no_tls_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    with Archive.init(a) as archive:
        archive.add_series(S)
        texts = {str(archive.add(S, f"the minutes of meeting {n}\n".encode(), format="text")): n for n in range(3)}
    Archive.init(b).close()
    assert pdi("keys", "init", "--archive", str(a))[0] == 0
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        made: list[str] = []
        monkeypatch.setattr(ssl, "create_default_context", _raising(made))
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0, out
        assert f"{S}\tfrom {a_url}: 3 names listed, 3 new" in out, out
    assert made == []
    with Archive.open(b) as archive:
        assert {str(n) for n in archive.ls(series=S)} >= set(texts)


def test_a_sync_asks_each_request_for_octets_over_the_connection_its_thread_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by the eighteenth pass over the mirrors' benchmark (2026-12-01): an octets answer read to its end was
    never taken as done (:mod:`http.client` says so by ``isclosed()``, and ``closed`` stays false until ``close()``
    is called), so each request of a sync made a connection of its own, 47 for 10,000 names. One fetching thread
    and a request a name: one connection for them all."""
    import http.client

    from pdi.network import mirrors

    a, b = tmp_path / "a", tmp_path / "b"
    with Archive.init(a) as archive:
        archive.add_series(S)
        for n in range(6):
            archive.add(S, f"the minutes of meeting {n}\n".encode() * 1000, format="text")  # each a blob file
    Archive.init(b).close()
    assert pdi("keys", "init", "--archive", str(a))[0] == 0
    connects: list[tuple[str, int | None]] = []
    real = http.client.HTTPConnection.connect

    def counted(self: http.client.HTTPConnection) -> None:
        connects.append((self.host, self.port))
        real(self)

    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        monkeypatch.setattr(mirrors, "WORKERS", 1)
        monkeypatch.setattr(mirrors, "GROUP_NAMES", 1)  # six requests
        monkeypatch.setattr(http.client.HTTPConnection, "connect", counted)
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0, out
        assert f"{S}\tfrom {a_url}: 6 names listed, 6 new" in out, out
    assert len(connects) == 1, connects


#: Header fields of one connection only (RFC 9110 §7.6.1), and those the proxy sets itself: not passed on.
_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host",
        "content-length"}


@contextmanager
def content_length_proxy(upstream: str) -> Iterator[tuple[str, list[list[str]]]]:
    """An HTTP/1.1 server on 127.0.0.1 (the standard library's) in front of ``upstream``, as a proxy that does not
    pass chunked answers on: each answer read whole from ``upstream`` and sent framed by ``Content-Length``
    (RFC 9112 §6.3). Its address, and the requests asked over each connection it accepted (one list a connection,
    in the order they were accepted)."""
    split = urllib.parse.urlsplit(upstream)
    connections: list[list[str]] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # kept alive unless the client says otherwise

        def setup(self) -> None:
            super().setup()
            self.asked: list[str] = []
            with lock:
                connections.append(self.asked)

        def log_message(self, format: str, *args: object) -> None:
            return

        def forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            self.asked.append(f"{self.command} {urllib.parse.urlsplit(self.path).path}")
            fields = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
            there = http.client.HTTPConnection(split.hostname or "", split.port, timeout=30)
            try:
                there.request(self.command, self.path, body, fields)
                answer = there.getresponse()
                octets = answer.read()  # the chunked framing taken out by http.client
            finally:
                there.close()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in _HOP:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(octets)))
            self.end_headers()
            self.wfile.write(octets)

        do_GET = do_POST = forward

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", connections
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_sync_keeps_its_connection_after_an_octets_answer_framed_by_content_length(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pdi origin sends an octets answer chunked; a proxy in front of it may send it framed by ``Content-Length``
    instead. Found by the nineteenth pass over the mirrors' benchmark (2026-12-01): such an answer, read to its
    end, left :mod:`http.client`'s ``closed`` false (it says so by ``isclosed()``), so its connection was closed
    and the next request made another, one a name here. One fetching thread and a request a name: the proxy
    accepts one connection for the six ``POST /api/octets``."""
    from pdi.network import mirrors

    a, b = tmp_path / "a", tmp_path / "b"
    with Archive.init(a) as archive:
        archive.add_series(S)
        texts = {str(archive.add(S, f"the minutes of meeting {n}\n".encode() * 1000, format="text")): n
                 for n in range(6)}
    Archive.init(b).close()
    assert pdi("keys", "init", "--archive", str(a))[0] == 0
    with serving(a) as a_url, content_length_proxy(a_url) as (proxy_url, connections):
        assert pdi("mirror", "add", proxy_url, "--series", S, "--archive", str(b))[0] == 0
        monkeypatch.setattr(mirrors, "WORKERS", 1)
        monkeypatch.setattr(mirrors, "GROUP_NAMES", 1)  # six requests
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0, out
        assert f"{S}\tfrom {proxy_url}: 6 names listed, 6 new" in out, out
        octets = [asked for asked in connections if "POST /api/octets" in asked]
        assert [asked.count("POST /api/octets") for asked in octets] == [6], connections
    with Archive.open(b) as archive:
        for name, n in texts.items():
            with archive.open_octets(name) as opened:
                assert b"".join(opened.reader.chunks(0, opened.size)) == f"the minutes of meeting {n}\n".encode() * 1000
