"""A pipeline of valid requests is read the same however TCP cuts it into reads: the requests the app sees (method,
target, content) and the octets of the answers are those of the whole pipeline in one read, and those the requests
themselves ask for, worked out here from how each was written.

The requests mix content by length (holding anything, a head's end and a whole request among it), chunked content
(chunk extensions, with the whitespace RFC 9112 §7.1.1 lets before them, and trailer fields), ``Expect:
100-continue``, ``Upgrade`` (ignored: answered as HTTP/1.1, RFC 9110 §7.8), ``HEAD`` and the empty lines RFC 9112
§2.2 lets a request follow; the reads are cut at any octet. Written in review (2026-11-29) of the protocol giving
each read to the parser one head, or one content by length, at a time; it holds as well of the protocol before.

The protocol is driven in memory (as ``test_server_http11`` drives it), each read followed by the event loop's
turns for the app to answer.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any

import hypothesis.strategies as st
import uvicorn
from hypothesis import HealthCheck, given, settings

from pdi.server.process.guarded import _CHUNKED_END, GuardedHttpToolsProtocol, _chunked_end
from support.memory_transport import MemoryTransport


def _said(method: str, target: bytes, content: bytes) -> bytes:
    """What the app answers a request with: what it saw of it."""
    return b"%s %s %d %s" % (method.encode(), target, len(content), hashlib.sha256(content).hexdigest()[:16].encode())


def _app(seen: list[tuple[str, bytes, bytes]]) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        content = b""
        while True:  # the content read whole, whatever the method
            message = await receive()
            if message["type"] != "http.request":
                return
            content += message["body"]
            if not message["more_body"]:
                break
        target = scope["raw_path"] + (b"?" + scope["query_string"] if scope["query_string"] else b"")
        seen.append((scope["method"], target, content))
        body = _said(scope["method"], target, content)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", b"%d" % len(body))]})
        await send({"type": "http.response.body", "body": body})

    return app


async def _settle() -> None:
    for _ in range(30):
        await asyncio.sleep(0)


async def _exchange(reads: list[bytes]) -> tuple[bytes, list[tuple[str, bytes, bytes]], bool]:
    seen: list[tuple[str, bytes, bytes]] = []
    config = uvicorn.Config(_app(seen), log_level="critical", ws="none", proxy_headers=False)
    config.load()
    state = uvicorn.server.ServerState()
    state.default_headers = [(b"server", b"pdi")]
    protocol = GuardedHttpToolsProtocol(config=config, server_state=state, app_state={},
                                        _loop=asyncio.get_running_loop())
    transport = MemoryTransport()
    protocol.connection_made(transport)
    try:
        for read in reads:
            if transport.closed:
                break
            protocol.data_received(read)
            await _settle()
        closed = transport.closed
    finally:
        protocol.connection_lost(None)
        await _settle()
    return bytes(transport.written), seen, closed


def _read(reads: list[bytes]) -> tuple[bytes, list[tuple[str, bytes, bytes]], bool]:
    logging.getLogger("uvicorn.error").disabled = True
    try:
        return asyncio.run(_exchange(reads))
    finally:
        logging.getLogger("uvicorn.error").disabled = False


#: Octets a content may hold that look like framing: a head's end, a whole request, a chunk's size line, its end.
_FRAMING = st.sampled_from([b"\r\n\r\n", b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n", b"0\r\n\r\n", b"\r\n", b"5\r\n",
                            b"HTTP/1.1 200 OK\r\n"])
_CONTENT = st.lists(st.binary(max_size=40) | _FRAMING, max_size=5).map(b"".join)
_EXTENSION = st.sampled_from([b"", b";a=b", b" ;a", b"\t;a=\"q;\\\"\"", b";x;y=1", b"  "])
_TRAILER = st.sampled_from([b"", b"X-T: 1\r\n", b"X-T: 1\r\nX-U: a b\r\n", b"X-Len: 99\r\n"])


@st.composite
def _request(draw: st.DrawFn) -> tuple[bytes, str, bytes, bytes, bool]:
    """A request, the method and target the app is to see, its content, and whether it asks for ``100``."""
    method = draw(st.sampled_from(["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"]))
    target = b"/p%d" % draw(st.integers(0, 999)) + draw(st.sampled_from([b"", b"?q=1", b"?a=%20b&c"]))
    fields = [b"Host: h"] + [b"X-%d: %s" % (i, draw(st.sampled_from([b"v", b"", b"a b", b"\t x \t"])))
                             for i in range(draw(st.integers(0, 2)))]
    framing = draw(st.sampled_from(["none", "length", "chunked"]))
    content = b""
    framed = b""
    if framing == "length":
        content = draw(_CONTENT)
        fields.append(b"Content-Length: %d" % len(content))
        framed = content
    elif framing == "chunked":
        pieces = draw(st.lists(_CONTENT.filter(bool), max_size=3))
        content = b"".join(pieces)
        fields.append(b"Transfer-Encoding: chunked")
        framed = b"".join(b"%x%s\r\n%s\r\n" % (len(piece), draw(_EXTENSION), piece) for piece in pieces)
        framed += b"0%s\r\n%s\r\n" % (draw(_EXTENSION), draw(_TRAILER))
    expect = framing != "none" and draw(st.booleans())
    if expect:
        fields.append(b"Expect: 100-continue")
    if framing == "none" and draw(st.booleans()):  # ignored: read on as HTTP/1.1
        fields[1:1] = [b"Connection: Upgrade", b"Upgrade: h2c"]
    empty = b"\r\n" * draw(st.integers(0, 2))
    head = b"%s %s HTTP/1.1\r\n" % (method.encode(), target) + b"".join(field + b"\r\n" for field in fields) + b"\r\n"
    return empty + head + framed, method, target, content, expect


def _expected(requests: list[tuple[bytes, str, bytes, bytes, bool]]) -> bytes:
    """The answers' octets, as the requests ask for them."""
    out = b""
    for _, method, target, content, expect in requests:
        if expect:  # the app reads the content: "100 Continue" first (RFC 9110 §10.1.1)
            out += b"HTTP/1.1 100 Continue\r\n\r\n"
        body = _said(method, target, content)
        out += b"HTTP/1.1 200 OK\r\nserver: pdi\r\ncontent-length: %d\r\n\r\n" % len(body)
        out += body if method != "HEAD" else b""
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(_request(), min_size=1, max_size=6), st.lists(st.integers(0, 2000), max_size=8),
       st.booleans())
def test_a_pipeline_is_read_alike_however_the_reads_cut_it(requests: list[tuple[bytes, str, bytes, bytes, bool]],
                                                           cuts: list[int], octet_reads: bool) -> None:
    octets = b"".join(request[0] for request in requests)
    points = sorted({cut for cut in cuts if 0 < cut < len(octets)})
    reads = [octets[start:end] for start, end in zip([0, *points], [*points, len(octets)], strict=True)]
    if octet_reads:  # the last request one octet a read
        last = len(octets) - len(requests[-1][0])
        reads = [octets[:last], *(octets[at:at + 1] for at in range(last, len(octets)))]
    seen = [(method, target, content) for _, method, target, content, _ in requests]
    whole = _read([octets])
    assert whole == (_expected(requests), seen, False)
    assert _read(reads) == whole


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from([b"\r", b"\n", b"\r\n", b"\r\n\r\n", b"x", b"0", b" "]), max_size=30).map(b"".join),
       st.integers(0, 40))
def test_where_chunked_content_may_end_is_found_as_the_pattern_says(data: bytes, at: int) -> None:
    # the search by memchr finds what the pattern does: an octet neither CR nor LF, then CRLF CRLF, from at on
    at = min(at, len(data))
    found = _CHUNKED_END.search(data, at)
    assert _chunked_end(data, at) == (len(data) if found is None else found.end())
