"""What the browser loaded, read back for pdi's writer (pdi.capture.rendered, issue 22).

The bodies the capture proxy saw pass are unframed (RFC 9112 §7.1 chunks) and decoded
(RFC 9110 §8.4.1: gzip, RFC 1952; deflate, RFC 1950, or the raw RFC 1951 some servers
send) with the standard library's zlib as the independent encoder; a body that cannot
be read back exactly, or that decodes to more than the limit, is not used. A document
is written back in its own encoding with WHATWG Encoding's "encode" (html error mode),
checked against Python's codecs.
"""

from __future__ import annotations

import gzip
import time
import zlib

from hypothesis import example, given
from hypothesis import strategies as st

from pdi.capture.proxy import AddressPolicy, CaptureProxy
from pdi.capture.rendered import NetworkLog, _unchunk, encode_html, recorded_body

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/css"


def _chunked(data: bytes, cuts: list[int]) -> bytes:
    out = b""
    pos = 0
    for cut in [*sorted({c % (len(data) + 1) for c in cuts}), len(data)]:
        if cut > pos:
            out += b"%x;ext=1\r\n" % (cut - pos) + data[pos:cut] + b"\r\n"
            pos = cut
    return out + b"0\r\nTrailer: x\r\n\r\n"


@given(st.binary(max_size=2000), st.lists(st.integers(min_value=0, max_value=5000), max_size=20))
def test_property_chunked_bodies_come_back_whole(data: bytes, cuts: list[int]) -> None:
    assert _unchunk(_chunked(data, cuts)) == data
    head = HEAD + b"\r\nTransfer-Encoding: chunked\r\n\r\n"
    assert recorded_body(head, _chunked(data, cuts), 10_000) == data


@given(st.binary(max_size=300))
def test_property_a_broken_or_cut_chunked_body_is_not_used(junk: bytes) -> None:
    got = _unchunk(junk)  # never raises, never invents bytes
    assert got is None or len(got) <= len(junk)
    assert _unchunk(b"5\r\nab") is None and _unchunk(b"zz\r\n") is None and _unchunk(b"") is None


@given(st.binary(max_size=3000))
def test_property_gzip_and_deflate_bodies_are_decoded(data: bytes) -> None:
    raw = zlib.compressobj(wbits=-15)
    raw_deflate = raw.compress(data) + raw.flush()
    for coding, body in [("gzip", gzip.compress(data)), ("x-gzip", gzip.compress(data)),
                         ("deflate", zlib.compress(data)), ("deflate", raw_deflate)]:
        head = HEAD + b"\r\nContent-Encoding: " + coding.encode() + b"\r\n\r\n"
        assert recorded_body(head, body, 10_000) == data


def test_bodies_that_cannot_be_read_back_exactly_are_not_used() -> None:
    assert recorded_body(HEAD + b"\r\nContent-Encoding: br\r\n\r\n", b"x", 100) is None
    assert recorded_body(HEAD + b"\r\nContent-Encoding: gzip\r\n\r\n", b"not gzip", 100) is None
    assert recorded_body(HEAD + b"\r\nContent-Length: 10\r\n\r\n", b"short", 100) is None
    assert recorded_body(HEAD + b"\r\nContent-Length: 3\r\n\r\n", b"abcdef", 100) == b"abc"
    assert recorded_body(HEAD + b"\r\n\r\n", b"a" * 101, 100) is None


def test_a_compression_bomb_stops_at_the_limit() -> None:
    bomb = gzip.compress(b"\0" * 50_000_000)  # 50 MB of zeros in about 50 kB
    started = time.monotonic()
    assert recorded_body(HEAD + b"\r\nContent-Encoding: gzip\r\n\r\n", bomb, 1_000_000) is None
    assert time.monotonic() - started < 2


def test_encode_html_in_the_documents_own_encoding() -> None:
    text = "<p>фон ‽ €</p>"
    data, encoding = encode_html(text, "windows-1251")
    assert encoding == "windows-1251"
    assert data == "<p>фон ".encode("cp1251") + b"&#8253; " + "€</p>".encode("cp1251")
    data, encoding = encode_html("<p>日本語 ‽</p>", "Shift_JIS")
    assert (data, encoding) == ("<p>日本語 ".encode("shift_jis") + b"&#8253;</p>", "Shift_JIS")
    assert encode_html("<p>\ud800 é</p>", "UTF-8") == ("<p>\ufffd é</p>".encode(), "UTF-8")
    assert encode_html("x", "latin1") == (b"x", "windows-1252")  # WHATWG: a label of windows-1252
    assert encode_html("x", "no such charset")[1] == "UTF-8"


def test_network_log_follows_redirects_and_prefers_what_the_proxy_saw() -> None:
    log = NetworkLog()

    def event(method: str, **params: object) -> None:
        log.event({"method": method, "sessionId": "S", "params": {"requestId": "1", **params}})

    event("Network.requestWillBeSent", request={"url": "http://a.example/old.css"})
    event("Network.requestWillBeSent", request={"url": "http://a.example/new.css"}, redirectResponse={"status": 301})
    event("Network.responseReceived",
          response={"url": "http://a.example/new.css", "status": 200, "mimeType": "text/css",
                    "headers": {"Content-Type": 'text/css; charset="koi8-r"'}})
    event("Network.loadingFinished")
    assert log.finished() == [("S", "1")]
    # The same request seen by a second session of the tab: its body is asked for once; a
    # body the proxy kept is not asked for.
    log.event({"method": "Network.requestWillBeSent", "sessionId": "T",
               "params": {"requestId": "1", "request": {"url": "http://a.example/new.css"}}})
    log.event({"method": "Network.responseReceived", "sessionId": "T",
               "params": {"requestId": "1", "response": {"url": "http://a.example/new.css", "status": 200}}})
    log.event({"method": "Network.loadingFinished", "sessionId": "T", "params": {"requestId": "1"}})
    assert log.finished() == [("S", "1")]
    assert log.finished(have={"http://a.example/new.css"}) == []
    chromium = {("S", "1"): (b"p{}", True)}
    got = log.responses(chromium)
    old, new = got["http://a.example/old.css"], got["http://a.example/new.css"]
    assert old.final_url == new.final_url == "http://a.example/new.css"
    assert [(r.status, r.source, r.target) for r in old.redirects] == [(301, "http://a.example/old.css", "http://a.example/new.css")]
    assert (old.media_type, old.charset, old.data) == ("text/css", "UTF-8", b"p{}")  # Chromium's text, in UTF-8
    proxied = log.responses(chromium, {"http://a.example/new.css": b"\xf0{}"})["http://a.example/old.css"]
    assert (proxied.charset, proxied.data) == ("koi8-r", b"\xf0{}")  # the bytes as they came


def test_the_proxy_records_plain_http_answers_to_get() -> None:
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    body = gzip.compress(b"body { color: red }")
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: text/css\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
              + _chunked(body, [7]))

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()
    with CaptureProxy(AddressPolicy.of(allow=[("127.0.0.1", port)]), record_bytes=10_000) as proxy:
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as conn:
            conn.sendall(f"GET http://127.0.0.1:{port}/s.css HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            while conn.recv(65536):
                pass
        head, sent = proxy.recorded[f"http://127.0.0.1:{port}/s.css"]
    listener.close()
    assert sent == _chunked(body, [7])
    assert recorded_body(head, sent, 10_000) == b"body { color: red }"


def _read_chunks(body: bytes) -> bytes | None:
    """RFC 9112 §7.1 restated: ``chunk-size [ chunk-ext ] CRLF chunk-data CRLF`` until a size of 0, chunk-size
    ``1*HEXDIG`` (spaces and tabs around it tolerated, as pdi's WARC reader does); ``None`` for anything else."""
    out, pos = b"", 0
    while True:
        end = body.find(b"\r\n", pos)
        if end < 0:
            return None
        line = body[pos:end].split(b";", 1)[0].strip(b" \t")
        if not line or any(c not in b"0123456789abcdefABCDEF" for c in line):
            return None
        size, pos = int(line, 16), end + 2
        if size == 0:
            return out
        if body[pos + size : pos + size + 2] != b"\r\n":
            return None
        out, pos = out + body[pos : pos + size], pos + size + 2


_SIZE_LINES = st.sampled_from(["{:x}", "{:X}", " {:x} ", "{:x};a=b", "\t{:x}", "0{:x}", "0x{:x}", "+{:x}", "{:x}_",
                               "-{:x}", "\x0c{:x}", "{:x}\x0b", "{:,}"])


@given(st.lists(st.tuples(_SIZE_LINES, st.binary(min_size=1, max_size=40), st.sampled_from([b"\r\n", b"\r\n",
                                                                                             b"\n", b"xx"])),
                max_size=5))
@example([("0x{:x}", b"abc", b"\r\n")])  # int(b"0x3", 16) is 3
@example([("{:x}", b"abc", b"xx")])  # the chunk's data not ended by CRLF
def test_property_a_chunked_body_is_read_as_rfc_9112_says_or_not_used(chunks: list[tuple[str, bytes, bytes]]) -> None:
    """Only a chunk size of hex digits is one (``int(…, 16)`` also reads ``0x3``, ``+3``, ``3_0`` and ``-1``, no
    size a server may send), and a chunk's data ends in CRLF: a body that is not so is not used (Chromium's copy
    is), rather than read back as octets the browser did not take for the body."""
    body = b"".join(form.format(len(data)).encode() + b"\r\n" + data + end for form, data, end in chunks)
    body += b"0\r\n\r\n"
    assert _unchunk(body) == _read_chunks(body)
