"""The bound on a request head (``431``, RFC 6585 §5) and the wording of a refused request line hold however the
reads cut the requests: a head that begins in the read where the request before it ends is counted from its
first octet, and its line is the one a ``400`` or ``501`` quotes.

Found in review (2026-11-29): the octets of a head begun after a whole request in the same read were not counted
(one read of slack past the bound), and the first octets of the next read were taken for its request line.

The protocol is driven in memory (as ``test_server_http11`` drives it): the reads are given to
:meth:`~pdi.server.process.guarded.GuardedHttpToolsProtocol.data_received` as drawn, each followed by the event
loop's turns for the app to answer. The expected status is worked out from the octets alone: the head's octets are
those after the end of the request before it (its head's empty line, or the last octet of its content by length).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import hypothesis.strategies as st
import uvicorn
from hypothesis import HealthCheck, given, settings

from pdi.server.process.guarded import GuardedHttpToolsProtocol
from support.memory_transport import MemoryTransport


class _Small(GuardedHttpToolsProtocol):
    """Bounds small enough that a head past them fits a few reads: the head's bound is 64 + 256 + 4 * 8 + 1024."""

    target_octets = 64
    head_octets = 256
    head_fields = 8


BOUND = 64 + 256 + 4 * 8 + 1024


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    while scope["method"] == "POST":  # the content read whole (or the client gone)
        message = await receive()
        if message["type"] != "http.request" or not message["more_body"]:
            break
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def _exchange(reads: list[bytes]) -> bytes:
    config = uvicorn.Config(_app, log_level="critical", ws="none", proxy_headers=False)
    config.load()
    state = uvicorn.server.ServerState()
    state.default_headers = [(b"server", b"pdi")]
    protocol = _Small(config=config, server_state=state, app_state={}, _loop=asyncio.get_running_loop())
    transport = MemoryTransport()
    protocol.connection_made(transport)
    try:
        for read in reads:
            if transport.closed:
                break
            protocol.data_received(read)
            await _settle()
    finally:
        protocol.connection_lost(None)
        await _settle()
    return bytes(transport.written)


def _answers(reads: list[bytes]) -> tuple[list[int], dict[str, Any] | None]:
    """The statuses written, and the problem of the last answer, if it is one."""
    logging.getLogger("uvicorn.error").disabled = True  # refusals are logged
    try:
        written = asyncio.run(_exchange(reads))
    finally:
        logging.getLogger("uvicorn.error").disabled = False
    answers = written.split(b"HTTP/1.1 ")[1:]
    problem = None
    if answers and b"application/problem+json" in answers[-1]:
        problem = json.loads(answers[-1].split(b"\r\n\r\n", 1)[1])
    return [int(answer[:3]) for answer in answers], problem


@st.composite
def _whole_requests(draw: st.DrawFn) -> bytes:
    """A request read whole: a GET, or a POST whose content (by length, or chunked, with a trailer section or not)
    may hold anything, a head's end and a chunked content's included; after 0 to 2 empty lines (RFC 9112 §2.2)."""
    empty = b"\r\n" * draw(st.integers(0, 2))
    kind = draw(st.sampled_from(["get", "length", "chunked"]))
    if kind == "get":
        return empty + b"GET /%d HTTP/1.1\r\nHost: h\r\n\r\n" % draw(st.integers(0, 99))
    content = draw(st.binary(max_size=300) | st.sampled_from([b"\r\n\r\n", b"GET / HTTP/1.1\r\n\r\n",
                                                              b"x\r\n0\r\n\r\n", b"a" * (BOUND + 9)]))
    if kind == "length":
        return empty + b"POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n" % len(content) + content
    chunks = b"%x\r\n%s\r\n" % (len(content), content) if content else b""
    trailer = draw(st.sampled_from([b"", b"X-T: 1\r\n"]))
    return empty + b"POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n%s\r\n" % trailer


#: How far from the bound the begun head's octets are drawn: within a few octets either side of it.
_NEAR = st.integers(-3, 3) | st.integers(-BOUND // 2, BOUND // 2)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_whole_requests(), min_size=1, max_size=3), st.integers(0, 2), _NEAR,
       st.lists(st.integers(0, 4000), max_size=4))
def test_a_head_past_the_bound_is_431_however_the_reads_cut_it(whole: list[bytes], empty: int, near: int,
                                                               cuts: list[int]) -> None:
    # the begun head: its line and one field that never ends (no field is kept until its end: only the bound on
    # what arrives refuses it)
    begun = b"\r\n" * empty + b"GET /b HTTP/1.1\r\nX-Long: "
    begun += b"a" * (BOUND + near - len(begun))
    octets = b"".join(whole) + begun
    points = sorted({cut for cut in cuts if 0 < cut < len(octets)})
    reads = [octets[start:end] for start, end in zip([0, *points], [*points, len(octets)], strict=True)]
    statuses, problem = _answers(reads)
    if len(begun) > BOUND:
        assert statuses == [200] * len(whole) + [431], (statuses, len(begun))
        assert problem is not None and f"more than {BOUND} octets" in problem["detail"]
    else:
        assert statuses == [200] * len(whole), (statuses, len(begun))


def test_a_head_begun_in_the_read_of_the_head_before_it_counts_from_its_first_octet() -> None:
    # the case found: a whole GET and a head just within the bound in one read, then a read that takes it past
    first = b"GET /a HTTP/1.1\r\nHost: h\r\n\r\n"
    begun = b"GET /b HTTP/1.1\r\nX-Long: "
    begun += b"a" * (BOUND - len(begun))
    assert _answers([first + begun]) == ([200], None)
    statuses, problem = _answers([first + begun, b"a"])
    assert statuses == [200, 431] and problem is not None


def test_a_head_begun_after_chunked_content_in_the_same_read_is_counted() -> None:
    # a chunked request's content ends with an empty line (the last chunk, then the trailer section's end, RFC 9112
    # §7.1): the head after it is counted from there
    first = b"POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunks = b"4\r\n\r\n\r\n\r\n0\r\n\r\n"
    begun = b"GET /b HTTP/1.1\r\nX-Long: "
    begun += b"a" * (BOUND - len(begun))
    assert _answers([first, chunks + begun]) == ([200], None)
    statuses, _ = _answers([first, chunks + begun, b"a"])
    assert statuses == [200, 431]


def test_a_refused_line_begun_in_the_read_of_the_head_before_it_is_quoted_from_its_first_octet() -> None:
    # RFC 9112 §3: "GET\t/" is no request line; what comes after the method is a tab, whichever read it came in
    first = b"GET /a HTTP/1.1\r\nHost: h\r\n\r\n"
    for reads in ([first + b"G", b"ET\t/ HTTP/1.1\r\nHost: h\r\n\r\n"],
                  [first + b"\r\nGE", b"T\t/ HTTP/1.1\r\n"],
                  [first + b"G", b"E", b"T\t/ HTTP/1.1\r\n"]):
        statuses, problem = _answers(reads)
        assert statuses == [200, 400], reads
        assert problem is not None and "after the method 'GET' comes '\\t'" in problem["detail"], problem


def test_a_refused_line_begun_after_content_by_length_is_quoted_from_its_first_octet() -> None:
    # the content's last octets, an empty line (RFC 9112 §2.2) and the method's first octets in one read
    first = b"POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n"
    statuses, problem = _answers([first, b"ab\r\n\r" + b"\nPO", b"ST\t/ HTTP/1.1\r\n"])
    assert statuses == [200, 400]
    assert problem is not None and "after the method 'POST' comes '\\t'" in problem["detail"], problem


def test_a_head_begun_after_chunked_content_whose_end_was_cut_is_counted() -> None:
    # the chunked content's last empty line cut by the read: the head after it counted from its first octet
    first = b"POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
    begun = b"GET /b HTTP/1.1\r\nX-Long: "
    begun += b"a" * (BOUND - len(begun))
    for cut in (1, 2, 3):
        end = b"\r\n\r\n"[-cut:]
        assert _answers([first + b"0\r\n\r\n"[:-cut], end + begun]) == ([200], None)
        statuses, _ = _answers([first + b"0\r\n\r\n"[:-cut], end + begun, b"a"])
        assert statuses == [200, 431], cut


def test_a_head_after_content_by_length_after_chunked_content_in_one_read_counts_its_own_octets() -> None:
    # found in review (2026-11-29): a head begun after chunked content was counted from the read's last empty line,
    # which may be the head's before a content by length between them: that content was counted as the head's
    first = b"POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
    content = b"x" * (BOUND + 100)  # no empty line in it
    second = b"POST /q HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n" % len(content) + content
    begun = b"GET /b HTTP/1.1\r\nX-Long: "
    assert _answers([first, b"0\r\n\r\n" + second + begun]) == ([200, 200], None)
    assert _answers([first, b"0\r\n\r\n" + second + begun, b"a\r\nHost: h\r\n\r\n"]) == ([200, 200, 200], None)
    # and the bound still holds of that head: counted from its own first octet
    long = begun + b"a" * (BOUND - len(begun))
    assert _answers([first, b"0\r\n\r\n" + second + long]) == ([200, 200], None)
    statuses, _ = _answers([first, b"0\r\n\r\n" + second + long, b"a"])
    assert statuses == [200, 200, 431]


def test_a_refused_line_after_chunked_content_in_the_same_read_is_quoted_from_its_first_octet() -> None:
    # the chunk's octets hold empty lines: the line is the one after the content's end, not after the first of them
    first = b"POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
    for reads in ([first, b"4\r\n\r\n\r\n\r\n0\r\n\r\nGET\t/ HTTP/1.1\r\n"],
                  [first + b"6\r\nx\r\n\r\nx\r\n0;a=b\r\nX-T: 1\r\n\r\n\r\nGET\t/ HTTP/1.1\r\n"]):
        statuses, problem = _answers(reads)
        assert statuses == [200, 400], reads
        assert problem is not None and "after the method 'GET' comes '\\t'" in problem["detail"], problem
