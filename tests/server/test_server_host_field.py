"""An HTTP/1.1 request without a ``Host`` field, or any request with two, is ``400`` (RFC 9112 §3.2: "A server MUST
respond with a 400 (Bad Request) status code to any HTTP/1.1 request message that lacks a Host header field and to
any request message that contains more than one Host header field line"), on ``pdi serve``'s own protocol (the
answer cache leaves it to the app, which refuses it); an HTTP/1.0 request needs none. A request before it on the
connection is answered first, and none after it is read.
"""

from __future__ import annotations

import json
import socket
import urllib.parse
from pathlib import Path

import pytest
from server_helpers import on_own_protocol

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.protocol.rfc2169 import rfc2169_query

S = "library.example.us"


def _ask(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(request)
        answer = b""
        while piece := conn.recv(65536):
            answer += piece
    return answer


@pytest.mark.parametrize("public", [False, True])
def test_host_missing_or_twice_is_400_and_the_connection_closes(tmp_path: Path, public: bool) -> None:
    with Archive.init(str(tmp_path / "a")) as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"a text\n", format="text"))
    target = f"/uri-res/N2R?{rfc2169_query(name)}".encode()
    with on_own_protocol(create_app(str(tmp_path / "a")), public=public) as url:
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        kept = _ask(port, b"GET %s HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" % target)
        assert kept.startswith(b"HTTP/1.1 200 ") and kept.endswith(b"a text\n")  # the same name, answered
        for version, fields in ((b"1.1", b""), (b"1.1", b"Host: a\r\nHost: b\r\n"), (b"1.0", b"Host: a\r\nHost: b\r\n")):
            # a second request behind it on the connection is not answered: the connection is closed
            answer = _ask(port, b"GET %s HTTP/%s\r\n%s\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n" % (target, version, fields))
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 400 "), answer[:200]
            assert b"\r\ndate: " in head.lower()  # RFC 9110 §6.6.1
            assert b"content-type: application/problem+json" in head.lower()
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")))
            assert len(body) == length  # nothing after it: the request behind it was not answered
            problem = json.loads(body)
            assert (problem["type"], problem["title"], problem["status"]) == ("about:blank", "Bad Request", 400)
            assert "RFC 9112" in problem["detail"]
        older = _ask(port, b"GET %s HTTP/1.0\r\n\r\n" % target)
        assert older.startswith(b"HTTP/1.1 200 ")
        # a good request, then one without Host, on one connection: the first is answered, then the refusal
        both = _ask(port, b"GET %s HTTP/1.1\r\nHost: a\r\n\r\nGET %s HTTP/1.1\r\n\r\n" % (target, target))
        assert both.startswith(b"HTTP/1.1 200 ") and b"a text\n" in both and b"HTTP/1.1 400 " in both
