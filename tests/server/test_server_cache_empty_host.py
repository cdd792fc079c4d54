"""The resolver's answer cache and a request with no ``Host`` to key by. Found by an attack (2026-11-27): an N2R
with an empty ``Host`` (or HTTP/1.0 without one) was kept under an empty host, and its ``Link`` (RFC 7089: the
TimeGate and TimeMap, absolute URLs) names the address the connection that filled the cache reached, as Starlette
makes a URL without a ``Host``; on a server listening on several addresses (``--host 0.0.0.0``), a reader of
another address was told that one. Such an answer is not kept now: each names the address its reader reached."""

from __future__ import annotations

import re
import socket
from pathlib import Path

from server_helpers import serving

from pdi.archive import Archive

S = "library.example.us"


def _ask(address: str, port: int, request: bytes) -> bytes:
    with socket.create_connection((address, port), timeout=30) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer


def test_an_answer_to_a_request_without_a_host_names_the_address_its_reader_reached(tmp_path: Path) -> None:
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"a text\n", format="text"))
    with serving(location, "--host", "0.0.0.0", "--workers", "1") as (_, port):
        for version, host in ((b"1.1", b"Host: \r\n"), (b"1.0", b"")):
            request = b"GET /uri-res/N2R?" + name.encode() + b" HTTP/" + version + b"\r\n" + host + b"\r\n"
            for address in ("127.0.0.2", "127.0.0.1", "127.0.0.3", "127.0.0.1"):
                answer = _ask(address, port, request)
                head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1")
                assert head.split(" ", 2)[1] == "200", head
                links = set(re.findall(r"<http://([^/>]*)/", head))
                assert links == {f"{address}:{port}"}, head
