"""Every answer with a body says ``X-Content-Type-Options: nosniff`` once (the Fetch standard's section of that
name): a browser reads a problem's JSON, an OAI-PMH answer or a search's JSON, which quote a stranger's words, as
their ``Content-Type`` says and never as a page or a script."""

from __future__ import annotations

import socket
import urllib.parse

import httpx
from server_helpers import S, Served, exchange, read_response, served_port


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def test_every_kind_of_answer_says_nosniff_once(served: Served) -> None:
    missing = "urn:pdi://nowhere.example.us/2026/11/22/1.text.1"
    asked = {
        # (path, Accept) -> the media type the answer is of
        (f"/uri-res/N2R?{served.text}", "*/*"): "text/plain",
        (f"/uri-res/N2R?{missing}", "*/*"): "application/problem+json",
        (f"/view?pdi={_q(missing)}", "text/html"): "text/html",
        (f"/uri-res/N2Ls?{served.text}", "*/*"): "text/uri-list",
        ("/no/such/page", "*/*"): "application/problem+json",
        ("/api/search?q=%3Cscript%3E", "*/*"): "application/json",
        ("/api/series", "*/*"): "application/json",
        ("/oai?verb=%3Cscript%3E", "*/*"): "text/xml",
        (f"/timemap/link/{served.captured}", "*/*"): "application/link-format",
        ("/", "text/html"): "text/html",
        (f"/series/{S}", "text/html"): "text/html",
        (f"/view?pdi={_q(served.text)}", "text/html"): "text/html",
        ("/api", "text/html"): "text/html",
    }
    for (path, accept), kind in asked.items():
        answer = httpx.get(served.url + path, headers={"Accept": accept})
        assert answer.headers["content-type"].split(";")[0] == kind, (path, answer.status_code, answer.headers)
        assert answer.headers.get_list("x-content-type-options") == ["nosniff"], (path, answer.headers)


def _fields(answer: bytes) -> list[tuple[str, str]]:
    """The header fields of a raw HTTP/1.1 answer, names lower case."""
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")[1:]
    return [(name.strip().lower(), value.strip()) for name, _, value in (line.partition(":") for line in head)]


def test_the_answers_pdi_serves_own_connections_make_say_nosniff_too(served: Served) -> None:
    # pdi serve's connections answer a name's N2L, a 304 and N2R from what they keep, and refuse a request that is
    # not HTTP they read, without the app (and its middleware): found in review, 2026-11-27, the N2L asked a second
    # time and every refusal (400, 431, 501) said no nosniff
    text = served.text
    tag = httpx.get(f"{served.url}/uri-res/N2R?{text}").headers["etag"]
    asked = [
        f"GET /uri-res/N2L?{text} HTTP/1.1\r\nHost: a\r\n\r\n".encode(),
        f"GET /uri-res/N2R?{text} HTTP/1.1\r\nHost: a\r\nIf-None-Match: {tag}\r\n\r\n".encode(),
        f"GET /uri-res/N2R?{text} HTTP/1.1\r\nHost: a\r\n\r\n".encode(),
    ]
    refused = {
        b"BREW / HTTP/1.1\r\nHost: a\r\n\r\n": b"501",
        b"GET / HTTP/1.1\r\nHost: a\r\nX: " + b"a" * 100_000 + b"\r\n\r\n": b"431",
        b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n": b"400",
    }
    with served_port(served, "own, public") as port:
        for _ in range(3):  # the first asking, then from what the connection keeps
            for answer in exchange(port, asked):
                assert [v for k, v in _fields(answer) if k == "x-content-type-options"] == ["nosniff"], answer[:400]
        for request, status in refused.items():
            with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
                conn.sendall(request)
                answer = read_response(conn, bytearray())
            assert answer.split(b" ")[1] == status, answer[:400]
            assert ("x-content-type-options", "nosniff") in _fields(answer), answer[:400]
