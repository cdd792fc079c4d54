"""N2L's 302 and a 304 answered from a worker's facts, and an N2R's 200 from its whole answers, by the compiled
request-head answerer (pdi.server.process._fasthead), held to httptools' (llhttp's) reading and to the Python
path's answers.

Every head the compiled path answers must be one llhttp reads the same way
(method, target, version, fields, kept alive, no error, what follows read as
the next request), and its answer must be the octets the Python path
(``CachedAnswerProtocol._answer_from_cache``) writes for the same read; a read
it declines is read by httptools as before. Heads are made by the grammar the
compiled path takes and then changed an octet at a time (near misses). Two
``pdi serve``, one without the compiled module (as a wheel built without a C
compiler is), answer the same requests octet for octet alike.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httptools
import pytest
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_helpers import read_response, start_serve, stop, wait_answering
from starlette.applications import Starlette

from pdi.archive import Archive
from pdi.archive.content import Content
from pdi.server.http.middleware import valid_host
from pdi.server.process import _fasthead, connection
from pdi.server.process.cache import Entity, Fact, ResponseCache, negotiates
from pdi.server.process.connection import (
    _ANSWERED,
    _Answered,
    _not_plain_fields,
    answering_protocol,
)
from support.stored_blobs import flip_octet

#: Names whose facts the cache holds (their N2L's Location known), each with its entity tag.
TAG = '"' + "ab" * 32 + '"'
OTHER_TAG = '"' + "cd" * 32 + '"'
KNOWN = {
    b"urn:pdi://wire.example.us/2026/11/29/1.text.1": TAG,
    b"urn:pdi://wire.example.us/2026/11/29/2.text.1": OTHER_TAG,
}
#: A name whose fact has a Location of its own (not the N2R of its spelling).
ELSEWHERE = b"urn:pdi://wire.example.us/2026/11/29/3.text.1"
#: A name whose fact is kept without N2L's Location (told by a 304 alone).
UNLOCATED = b"urn:pdi://wire.example.us/2026/11/29/4.text.1"
#: A name whose whole N2R answer is kept under the key of Host 127.0.0.1 (its 304 is the entity's, not the fact's).
WHOLE = b"urn:pdi://wire.example.us/2026/11/29/5.text.1"
QUERIES = [*KNOWN, ELSEWHERE, UNLOCATED, WHOLE]
#: Each name's entity tag.
TAGS = {**KNOWN, ELSEWHERE: TAG, UNLOCATED: OTHER_TAG, WHOLE: TAG}


def _cache(*others: bytes) -> ResponseCache:
    """The cache of these tests' names, and facts of ``others`` (tag :data:`TAG`, their Location known)."""
    cache = ResponseCache()
    for query in others:
        cache.learn_told(query, TAG, True)
    for query, tag in KNOWN.items():
        cache.learn_told(query, tag, True)
    cache.learn(ELSEWHERE, Fact((ELSEWHERE.decode(), ELSEWHERE.decode().rsplit(".", 2)[0]), TAG,
                                b"https://elsewhere.example/uri-res/N2R?x"))
    cache.learn_told(UNLOCATED, OTHER_TAG, False)
    cache.learn_told(WHOLE, TAG, True)
    cache.put(b"http://127.0.0.1 " + WHOLE, Entity(b"whole", b"text/plain", TAG, (
        (b"cache-control", b"public, max-age=31536000, immutable"), (b"vary", b"Accept"), (b"etag", TAG.encode())),
        (WHOLE.decode(), WHOLE.decode().rsplit(".", 2)[0])))
    return cache


class Transport(asyncio.Transport):
    """A transport keeping what it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 40000)}.get(name, default)

    def write(self, data: Any) -> None:
        self.written.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def can_write_eof(self) -> bool:  # a refusal closes at once, not in stages (nothing here reads after it)
        return False

    def abort(self) -> None:
        self.closed = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass


class _Done(_Answered):
    """What stands for an app's request cycle, its answer complete (not the one the cache's answers leave)."""

    scope = None


class Pair:
    """Two connections of ``pdi serve``'s protocol on the same cache, one with the compiled path and one without;
    a request that would go to the ASGI app is only noted (no app runs here)."""

    def __init__(self, cache: ResponseCache, loop: asyncio.AbstractEventLoop) -> None:
        config = uvicorn.Config(Starlette(), log_level="warning", limit_concurrency=1000)
        config.load()
        state = uvicorn.server.ServerState()
        self.protocols = []
        for fast in (True, False):
            cls = answering_protocol(10, cache)

            class Noting(cls):  # type: ignore[valid-type,misc]
                went_to_app = 0

                def to_app(self) -> None:  # the app's request, answered at once (by no one)
                    self.went_to_app += 1
                    self.scope = {}
                    self.cycle = _Done()

            if not fast:
                Noting.fast_answer = None
            protocol = Noting(config=config, server_state=state, app_state={}, _loop=loop)
            transport = Transport()
            protocol.connection_made(transport)
            self.protocols.append((protocol, transport))
        assert self.protocols[0][0]._fast is not None and self.protocols[1][0]._fast is None

    def feed(self, data: bytes) -> tuple[list[bytes], list[bytes]]:
        for protocol, _ in self.protocols:
            protocol.data_received(data)
        (fast, fast_t), (slow, slow_t) = self.protocols
        assert fast_t.written == slow_t.written
        assert (fast.went_to_app, fast_t.closed, fast.refusal) == (slow.went_to_app, slow_t.closed, slow.refusal)
        assert (fast.cycle is _ANSWERED) == (slow.cycle is _ANSWERED)
        return fast_t.written, slow_t.written


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    made = asyncio.new_event_loop()
    yield made
    made.close()


# --- what llhttp reads ---------------------------------------------------------------------------------------


class Reading:
    """What httptools' parser reports of what it is fed."""

    def __init__(self) -> None:
        self.urls: list[bytes] = []
        self.fields: list[list[tuple[bytes, bytes]]] = []
        self.heads: list[tuple[bytes, str, bool, bool]] = []
        self.complete = 0
        self.parser = httptools.HttpRequestParser(self)
        self.parser.set_dangerous_leniencies(lenient_version=True)  # as the protocol's

    def on_message_begin(self) -> None:
        self.urls.append(b"")
        self.fields.append([])

    def on_url(self, url: bytes) -> None:
        self.urls[-1] += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.fields[-1].append((name.lower(), value))

    def on_headers_complete(self) -> None:
        parser = self.parser
        self.heads.append((parser.get_method(), parser.get_http_version(), parser.should_keep_alive(),
                           parser.should_upgrade()))

    def on_message_complete(self) -> None:
        self.complete += 1


_REQUEST_LINE = re.compile(rb"(GET|HEAD) (/uri-res/(N2L|N2R|I2R)\?([^ ]+)) HTTP/1\.1\r\n")
_FIELD = re.compile(rb"([^:\r\n]+): *([^\r\n]*)\r\n")
NEXT = b"GET /next HTTP/1.1\r\nHost: a\r\n\r\n"


def _as_llhttp_reads(head: bytes) -> None:
    """``head``, which the compiled path answered, is read by llhttp as the compiled path reads it."""
    line = _REQUEST_LINE.match(head)
    assert line is not None
    fields = [(name.lower(), value) for name, value in _FIELD.findall(head, line.end())]
    reading = Reading()
    reading.parser.feed_data(head + NEXT)  # no error
    assert reading.complete == 2 and reading.urls == [line[2], b"/next"]
    assert reading.heads[0] == (line[1], "1.1", True, False)
    assert reading.fields[0] == fields
    # and the Python path reads it as a plain request of the cache's
    url = httptools.parse_url(line[2])
    assert (url.path, url.query) == (b"/uri-res/" + line[3], line[4])
    assert not _not_plain_fields(fields) and valid_host(dict(fields)[b"host"])
    assert line[3] == b"N2L" or not negotiates(fields)


# --- heads by the grammar, and near misses -------------------------------------------------------------------

_VALUE = st.from_regex(r"[!-~]([ -~]{0,20}[!-~])?", fullmatch=True)
_HOST = st.builds(lambda name, port: name + (f":{port}" if port is not None else ""),
                  st.text("abcXYZ019.-", min_size=1, max_size=20), st.none() | st.integers(0, 99999))


def _cased(draw: st.DrawFn, name: str) -> str:
    return "".join(c.upper() if draw(st.booleans()) else c for c in name)


#: What a query the compiled path reads may hold (RFC 3986 §3.4's query less what this server never mints).
_QUERY = st.text(st.sampled_from("abcXYZ0129-._~!$&'()*+,;=:@/?%"), min_size=1, max_size=40).map(str.encode)


#: Values of Host, If-None-Match and Accept that :func:`heads` draws with ``variants``: Host an IPv6 literal, with a
#: trailing dot, a port, in capitals, empty or with spaces (which llhttp strips); a weak tag, a list, ``*``, another
#: name's tag, a tag in capitals or cut short; each type that makes the Python path negotiate, in any case.
_HOSTS = st.sampled_from(["[::1]", "[::1]:8000", "a.", "A.Example", "127.0.0.1", "127.0.0.1:8000", "", " ", "a:",
                          "a:65536", "xn--bcher-kva.example", "a%41", "a_b"])
_TAGS = st.sampled_from([TAG, f"W/{TAG}", f"{TAG}, {OTHER_TAG}", f"{OTHER_TAG},{TAG}", "*", OTHER_TAG, TAG.upper(),
                         TAG[:-1], f'"{"ab" * 33}"', f"{TAG} ,"])
_ACCEPTS = st.sampled_from(["application/json", "Application/JSON", "text/plain", "TEXT/PLAIN;q=0.1",
                            "application/*", "image/png", "IMAGE/PNG", "application/pdf", "application/ld+json",
                            "*/*", "text/html,*/*;q=0.8", "text/*", "image/*"])


@st.composite
def heads(draw: st.DrawFn, other: bytes | None = None, variants: bool = False) -> bytes:
    """A request head of the subset the compiled path answers (its fact known, a 304's tag held); with
    ``variants``, its Host, If-None-Match and Accept also some the compiled path declines or the Python path reads
    otherwise (:data:`_HOSTS`, :data:`_TAGS`, :data:`_ACCEPTS`)."""
    method = draw(st.sampled_from(["GET", "HEAD"]))
    path = draw(st.sampled_from(["N2L", "N2R", "I2R"]))
    query = draw(st.sampled_from([*QUERIES, *([other] if other else [])]))
    fields: dict[str, str] = {"host": draw(_HOST | _HOSTS) if variants else draw(_HOST)}
    if path != "N2L" or draw(st.booleans()):
        fields["if-none-match"] = TAGS.get(query, TAG) if draw(st.integers(0, 5)) else draw(
            _TAGS | _VALUE if variants else _VALUE)
    for name in ("accept", "accept-encoding", "accept-language", "user-agent"):
        if draw(st.booleans()):
            fields[name] = draw(st.sampled_from(["*/*", "text/html", "application/json", "image/png;q=0.5"]) | _VALUE
                                | (_ACCEPTS if variants and name == "accept" else st.nothing()))
    if draw(st.booleans()):
        fields["connection"] = _cased(draw, "keep-alive")
    order = draw(st.permutations(list(fields)))
    lines = [f"{method} /uri-res/{path}?{query.decode()} HTTP/1.1"]
    lines += [f"{_cased(draw, name)}:{' ' * draw(st.integers(0, 3))}{fields[name]}" for name in order]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@st.composite
def near_misses(draw: st.DrawFn) -> bytes:
    """A head of :func:`heads` with a few octets inserted, removed or changed (often ones HTTP gives a meaning)."""
    head = bytearray(draw(heads()))
    special = b"\r\n \t:;,\"\x00\x7f\x80\xff/?#%HTkK-"
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(head)))
        octet = draw(st.sampled_from(list(special)) | st.integers(0, 255))
        change = draw(st.sampled_from(["insert", "remove", "replace"]))
        if change == "insert":
            head[at:at] = bytes([octet])
        elif at < len(head):
            head[at:at + 1] = b"" if change == "remove" else bytes([octet])
    return bytes(head)


_FRAMING = [b"Content-Length: 0", b"Transfer-Encoding: chunked", b"Expect: 100-continue", b"Upgrade: h2c",
            b"Connection: close", b"Connection: keep-alive, Upgrade", b"Proxy-Connection: close",
            b"Authorization: Bearer x", b"Cookie: a=b", b"Range: bytes=0-1", b"If-Modified-Since: x",
            b"X-Request-Id: a", b"Host: b", b"Host: [::1]", b"Host: a b", b"If-Match: *", b"Keep-Alive: 5",
            b" folded", b"\tfolded", b"Host : a", b"Accept:  ", b"User-Agent: a \t", b"Accept: \x80"]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), other=_QUERY)
def test_every_head_of_the_grammar_is_answered_as_the_python_path_answers_it(
        data: st.DataObject, other: bytes, loop: asyncio.AbstractEventLoop) -> None:
    head = data.draw(heads(other))
    pair = Pair(_cache(other), loop)
    written, _ = pair.feed(head)
    line = _REQUEST_LINE.match(head)
    assert line is not None
    fields = dict((name.lower(), value) for name, value in _FIELD.findall(head, line.end()))
    facts, entries = _cache(other).tables
    answered = _fasthead.answer(head, facts, entries, b"http://", b"")
    if answered is not None:
        _as_llhttp_reads(head)
        assert written and written[-1].startswith(answered[0][:12])
    # the compiled path declines only what it must: no Location known, a 304 not held, another answer negotiated
    # (the heads' Host is never 127.0.0.1, under which WHOLE's whole answer is kept)
    query = line[4]
    must = query != UNLOCATED if line[3] == b"N2L" else (
        fields.get(b"if-none-match") == TAGS.get(query, TAG).encode() and not negotiates(list(fields.items())))
    assert (answered is not None) == must, (head, answered)
    # what follows is read as before, by either path
    again = b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\n" % next(iter(KNOWN))
    pair.feed(again)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(head=near_misses(), framing=st.none() | st.sampled_from(_FRAMING), where=st.integers(0, 8))
def test_a_near_miss_the_compiled_path_answers_is_read_alike_by_llhttp(
        head: bytes, framing: bytes | None, where: int, loop: asyncio.AbstractEventLoop) -> None:
    if framing is not None:  # a field that changes how the request is framed or read, somewhere in the head
        lines = head.split(b"\r\n")
        lines.insert(min(1 + where, max(1, len(lines) - 2)), framing)
        head = b"\r\n".join(lines)
    facts, entries = _cache().tables
    answered = _fasthead.answer(head, facts, entries, b"http://", b"")
    if answered is not None:
        _as_llhttp_reads(head)
    pair = Pair(_cache(), loop)
    pair.feed(head)
    pair.feed(b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\n" % next(iter(KNOWN)))


@st.composite
def reads(draw: st.DrawFn) -> list[bytes]:
    """Reads one after another on a connection: a head of :func:`heads` (its variants too), a near miss, a head cut
    across two reads, two heads in one read, a head and the first octets of another (then the rest, or a head of
    its own), a head and junk, a few octets alone."""
    head = draw(heads(b"zz", variants=True))
    kind = draw(st.sampled_from([0, 1, 2, 3, 4, 4, 4, 5, 6, 7]))  # a head begun after another's: often
    if kind == 1:
        return [draw(near_misses())]
    if kind == 2:
        at = draw(st.integers(0, len(head)))
        return [head[:at], head[at:]]
    if kind == 3:
        return [head + draw(heads(variants=True))]
    if kind in (4, 7):
        after = draw(heads(variants=True))
        at = draw(st.integers(1, len(after) - 1))
        return [head + after[:at], after[at:] if kind == 7 else draw(heads())]
    if kind == 5:
        return [head + draw(st.binary(min_size=1, max_size=20))]
    if kind == 6:
        return [draw(st.sampled_from([b"\r\n", b"\r", b"G", b"GET /", b"\x00", b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n"]))]
    return [head]


#: What happens to the cache between reads: a name forgotten (withdrawn), the cache stale (its revalidation due),
#: the catalog's generation moved on (a withdrawal elsewhere: the next asking forgets everything), revalidated.
_CACHE_STEPS = st.sampled_from(["forget", "stale", "moved", "revalidated"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(reads() | _CACHE_STEPS, min_size=1, max_size=8))
def test_reads_in_sequence_are_answered_alike_whatever_the_cache_went_through(
        steps: list[list[bytes] | str], loop: asyncio.AbstractEventLoop) -> None:
    """Reads one after another on a connection, the cache changing between them, are answered by the compiled path
    as the Python path answers them; a name withdrawn (forgotten, or the generation moved on) is never answered
    from the compiled path's tables after."""
    cache = _cache(b"zz")
    generation = [0]
    cache.generation = lambda: generation[0]
    cache._seen = 0  # the generation the cache's names were kept under
    cache.revalidate(0)
    facts, entries = cache.tables
    name = next(iter(KNOWN))
    withdrawn = [b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\n" % name,
                 b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: a\r\nIf-None-Match: %s\r\n\r\n" % (name, KNOWN[name].encode())]
    assert all(_fasthead.answer(read, facts, entries, b"http://", b"") for read in withdrawn)
    pair = Pair(cache, loop)
    gone = False
    for step in steps:
        if step == "forget":
            cache.forget(name.decode())
            gone = True
        elif step == "stale":
            cache._fresh_until = float("-inf")
        elif step == "moved":
            generation[0] += 1
            cache.at_once = lambda: generation[0]
            cache._fresh_until = float("-inf")
            gone = True  # forgotten by whichever path asks next
        elif step == "revalidated":
            cache.revalidate(generation[0])
        else:
            assert isinstance(step, list)
            for read in step:
                pair.feed(read)
        if gone and cache.fresh:
            assert not any(_fasthead.answer(read, facts, entries, b"http://", b"") for read in withdrawn)


@pytest.mark.parametrize("read", [
    # a head cut across reads, two pipelined in one read, a head and more, leading empty lines: httptools reads them
    b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n",
    b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\nGET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\n",
    b"\r\nGET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\nG",
    b"GET /uri-res/N2L?%s HTTP/1.0\r\nHost: a\r\n\r\n",
    b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\nProxy-Connection: close\r\n\r\n",
    b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
    b"GET /uri-res/N2L?%s HTTP/1.1\r\nhost:a\r\n\r\n",
])
def test_reads_other_than_one_whole_plain_head_are_httptools(read: bytes, loop: asyncio.AbstractEventLoop) -> None:
    name = next(iter(KNOWN))
    read = read.replace(b"%s", name)
    facts, entries = _cache().tables
    answered = _fasthead.answer(read, facts, entries, b"http://", b"")
    assert (answered is not None) == read.endswith(b"host:a\r\n\r\n")
    pair = Pair(_cache(), loop)
    if read.endswith(b"\r\nHost: a\r\n"):
        pair.feed(read)
        written, _ = pair.feed(b"\r\n")  # the rest of the head: now the Python path answers it
        assert written[0].startswith(b"HTTP/1.1 302 Found\r\n")
    else:
        pair.feed(read)


@pytest.mark.parametrize("held", [
    b"G", b"GET /uri-res/N2L?", b"GET /uri-res/N2R?x HTTP/1.1\r\nAuthorization: Bearer t\r\n", b"\r\nGET",
])
def test_a_request_begun_in_the_read_before_is_read_on_by_httptools(held: bytes, loop: asyncio.AbstractEventLoop
                                                                      ) -> None:
    """A read the compiled path would answer, when the parser holds the start of a request from the read before
    (it followed an answer from the cache in that read): llhttp reads it as the rest of that request (an unknown
    method ``GGET``, a target with a space, more fields of a head with a token), never as a request of its own
    (found in review, 2026-11-29: the compiled path answered it, and the parser read the next read on from the held
    octets)."""
    read = b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\n" % next(iter(KNOWN))
    pair = Pair(_cache(), loop)
    written, _ = pair.feed(read + held)
    assert len(written) == 1 and written[0].startswith(b"HTTP/1.1 302 Found\r\n")
    pair.feed(read)
    pair.feed(b"\r\n")
    pair.feed(read)


def test_the_answers_are_the_python_paths_octets_and_touch_the_fact(loop: asyncio.AbstractEventLoop) -> None:
    cache = _cache()
    pair = Pair(cache, loop)
    first, elsewhere = next(iter(KNOWN)), ELSEWHERE
    written, _ = pair.feed(b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\n" % first)
    assert written[-1].startswith(b"HTTP/1.1 302 Found\r\n")
    assert b"\r\nlocation: /uri-res/N2R?" + first + b"\r\n" in written[-1]
    written, _ = pair.feed(b"HEAD /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\n" % elsewhere)
    assert b"\r\nlocation: https://elsewhere.example/uri-res/N2R?x\r\n" in written[-1]
    written, _ = pair.feed(b"GET /uri-res/I2R?%s HTTP/1.1\r\nHost: a\r\nIf-None-Match: %s\r\n\r\n"
                           % (first, TAG.encode()))
    assert written[-1].startswith(b"HTTP/1.1 304 Not Modified\r\n")
    assert b"\r\netag: " + TAG.encode() + b"\r\n" in written[-1] and written[-1].endswith(b"\r\n\r\n")
    assert list(cache.tables[0])[-1] == first  # the most recently used
    # a whole answer kept under the request's key: its 304 (the Python path's), not the fact's
    written, _ = pair.feed(b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: %s\r\n\r\n"
                           % (WHOLE, TAG.encode()))
    assert written[-1].startswith(b"HTTP/1.1 304 Not Modified\r\n")
    facts, entries = cache.tables
    assert _fasthead.answer(b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: %s\r\n\r\n"
                            % (WHOLE, TAG.encode()), facts, entries, b"http://", b"") is None
    # its 200: the compiled path's at once (its header lines made when it was kept), the Python path's the same
    whole = b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % WHOLE
    written, _ = pair.feed(whole)
    assert written[-1].startswith(b"HTTP/1.1 200 OK\r\n") and written[-1].endswith(b"\r\n\r\nwhole")
    assert b"\r\ncontent-length: 5\r\n" in written[-1]
    entries.move_to_end(next(iter(entries)))  # another most recently used
    answered = _fasthead.answer(whole, facts, entries, b"http://", b"date: x\r\n")
    assert answered is not None and answered[1:] == (b"GET", 200, 5)
    assert answered[0] == b"HTTP/1.1 200 OK\r\ndate: x\r\n" + written[-1].split(b"\r\n", 1)[1]
    assert list(entries)[-1] == b"http://127.0.0.1 " + WHOLE
    head = _fasthead.answer(whole.replace(b"GET", b"HEAD"), facts, entries, b"http://", b"date: x\r\n")
    assert head is not None and head[1:] == (b"HEAD", 200, 0) and head[0] == answered[0][:-5]
    for read in (whole, whole.replace(b"GET", b"HEAD"), whole.replace(b"N2R", b"I2R"),
                 whole.replace(b"\r\n\r\n", b"\r\nAccept: text/plain\r\n\r\n"),
                 whole.replace(b"\r\n\r\n", b"\r\nIf-None-Match: \"x\"\r\n\r\n")):
        pair.feed(read)


def test_a_head_the_compiled_path_reads_waits_as_the_python_paths_does(loop: asyncio.AbstractEventLoop) -> None:
    pair = Pair(_cache(), loop)
    read = b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\n" % next(iter(KNOWN))
    for protocol, _ in pair.protocols:  # the client takes none of what is written: the app's, which waits
        protocol.flow.write_paused = True
    pair.feed(read)
    assert [protocol.went_to_app for protocol, _ in pair.protocols] == [1, 1]
    for protocol, _ in pair.protocols:
        protocol.flow.write_paused = False
    written, _ = pair.feed(read)  # after the app's answer: httptools reads it, and the cache answers
    assert written[-1].startswith(b"HTTP/1.1 302 Found\r\n")
    written, _ = pair.feed(read)  # after the cache's: the compiled path
    state = pair.protocols[0][0].server_state
    state.default_headers = [(b"date", b"Sun, 29 Nov 2026 05:00:00 GMT"), (b"server", b"pdi")]  # a second later
    written, _ = pair.feed(read)
    assert written[-1].startswith(b"HTTP/1.1 302 Found\r\ndate: Sun, 29 Nov 2026 05:00:00 GMT\r\nserver: pdi\r\n")
    assert state.total_requests == 2 * 3


def test_arguments_of_the_wrong_kind_are_named_in_the_error() -> None:
    facts, entries = _cache().tables
    read = b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\n" % next(iter(KNOWN))
    good: list[Any] = [read, facts, entries, b"http://", b""]
    for at, (name, wrong, kind) in enumerate([("data", bytearray(read), "bytes"), ("facts", list(facts), "dict"),
                                              ("entries", None, "dict"), ("origin", "http://", "bytes"),
                                              ("defaults", memoryview(b""), "bytes")]):
        args = [*good[:at], wrong, *good[at + 1:]]
        with pytest.raises(TypeError, match=rf"^answer\(\): {name} \(argument {at + 1}\) must be {kind}, not "
                                            rf"{type(wrong).__name__}$"):
            _fasthead.answer(*args)
    with pytest.raises(TypeError, match=r"^answer\(\) takes 5 or 6 arguments \(4 given\)$"):
        _fasthead.answer(*good[:4])
    for at, (name, wrong, kind) in enumerate([("after_location", "x", "bytes"), ("validator_lines", None, "bytes"),
                                              ("n2r_prefix", bytearray(), "bytes")]):
        args: list[Any] = [b"", b"", b""]
        args[at] = wrong
        with pytest.raises(TypeError, match=rf"^configure\(\): {name} \(argument {at + 1}\) must be {kind}, not "
                                            rf"{type(wrong).__name__}$"):
            _fasthead.configure(*args)
    with pytest.raises(TypeError, match=r"^configure\(\) takes 3 arguments \(0 given\)$"):
        _fasthead.configure()
    assert _fasthead.answer(*good) is not None  # configured as it was: a refused configure() changed nothing


def test_what_is_configured_off_the_plain_path_is_never_answered_by_the_compiled_path(
        loop: asyncio.AbstractEventLoop) -> None:
    from pdi.server.http.forwarded import TrustedProxies
    from pdi.server.process.observe import AccessLog

    config = uvicorn.Config(Starlette(), log_level="warning")
    config.load()
    state = uvicorn.server.ServerState()
    cache = _cache()
    made = [
        answering_protocol(10, cache, json_logs=True),
        answering_protocol(10, cache, access=AccessLog(os.devnull)),
        answering_protocol(10, cache, trusted=TrustedProxies.parse(["127.0.0.1"])),
        answering_protocol(10, cache, replay_port=8000),
        answering_protocol(10, None),
    ]
    tight = answering_protocol(10, cache)
    tight.target_octets = 100
    for cls in [*made, tight]:
        protocol = cls(config=config, server_state=state, app_state={}, _loop=loop)
        protocol.connection_made(Transport())
        assert protocol._fast is None, cls
    plain = answering_protocol(10, cache)(config=config, server_state=state, app_state={}, _loop=loop)
    plain.connection_made(Transport())
    assert plain._fast is connection.FAST_ANSWER is _fasthead.answer


# --- two pdi serve, with and without the compiled module -------------------------------------------------------

#: What a Python without the compiled module finds: pdi.server.process._fasthead cannot be imported (as in a
#: wheel built without a C compiler).
BLOCKER = '''
import importlib.abc, sys
class _Without(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "pdi.server.process._fasthead":
            raise ImportError("built without a C compiler")
        return None
sys.meta_path.insert(0, _Without())
'''


def _answers(port: int, reads: list[bytes]) -> list[bytes]:
    """The answers to the requests in ``reads``, each read sent alone, on one connection; the Date left out."""
    requests = re.findall(rb"(GET|HEAD) /", b"".join(reads))
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        buffered = bytearray()
        for read in reads:  # each a read of its own (not pipelined in one): a moment apart
            conn.sendall(read)
            time.sleep(0.05)
        answers = [read_response(conn, buffered, head_only=method == b"HEAD") for method in requests]
        conn.settimeout(0.2)
        with pytest.raises(TimeoutError):  # nothing more
            buffered += conn.recv(1)
    assert not buffered
    return answers


def test_two_resolvers_with_and_without_the_compiled_path_answer_alike(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series("wire.example.us")
        archive.add_series("closed.example.us")
        names = [str(archive.add("wire.example.us", b"text %d\n" % n, format="text")).encode() for n in range(3)]
        # names first asked by N2R in the plans below, on both servers (the compiled path reads their heads and the
        # public path answers them, or the parser and the ASGI path do): anyone's, a blob file, another format, two
        # formats, damaged octets, an embargo, a withdrawal, a private series, none
        cold = {key: str(archive.add("wire.example.us", data, format=form, **kw)).encode() for key, data, form, kw in [
            ("text", b"a first asking\n", "text", {}), ("head", b"a first HEAD\n", "text", {}),
            ("i2r", b"a first I2R\n", "text", {}), ("html", b"<p>a page</p>\n", "html", {}),
            ("file", b"a line of a blob file\n" * 4000, "text", {}), ("damaged", b"to be damaged\n", "text", {}),
            ("embargoed", b"not yet\n", "text", {"embargo_until": "2999-01-01"}),
            ("withdrawn", b"withdrawn\n", "text", {})]}
        two = archive.deposit("wire.example.us", [Content(b"two formats\n", "text"), Content(b"<p>two</p>\n", "html")])
        cold["two"] = str(two.names[0]).encode()
        cold["private"] = str(archive.add("closed.example.us", b"private\n", format="text")).encode()
        archive.set_series_access("closed.example.us", "private")
        archive.withdraw(cold["withdrawn"].decode(), "a test")
        damaged = archive.get(cold["damaged"].decode()).sha256
    flip_octet(tmp_path / "archive", damaged, 3)
    cold["none"] = b"urn:pdi://wire.example.us/2026/01/01/9.text.1"
    site = tmp_path / "without"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
    check = "import pdi.server.process.connection as c; print(c.FAST_ANSWER is None)"
    assert subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True,
                          check=True).stdout == "True\n"
    servers = [start_serve(tmp_path / "archive", "--workers", "1", drain=True)]
    try:
        servers.append(start_serve(tmp_path / "archive", "--workers", "1", drain=True, env=env))
        for process, port, _ in servers:
            wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        tags = {}
        for name in names:
            with socket.create_connection(("127.0.0.1", servers[0][1]), timeout=30) as conn:
                conn.sendall(b"HEAD /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % name)
                tags[name] = re.search(rb"\r\netag: ([^\r]*)", read_response(conn, bytearray(), head_only=True))[1]
        plans: list[list[bytes]] = []
        for name in names:
            n2l = b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % name
            inm = b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: %s\r\n\r\n" % (name, tags[name])
            n2r = b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % name
            plans += [
                [n2r, n2r, n2r.replace(b"GET", b"HEAD"), n2r.replace(b"N2R", b"I2R")],  # kept, then whole
                [n2l, n2l, n2l.replace(b"GET", b"HEAD")],  # the first asking, then from the fact
                [inm, inm, inm.replace(b"N2R", b"I2R")],
                [inm.replace(b"\r\n\r\n", b"\r\nAccept: application/json\r\n\r\n")],
                [inm.replace(tags[name], b'"other"')],
                [n2l + n2l],  # pipelined in one read
                [n2l[:20], n2l[20:]],  # cut across two reads
                [n2l.replace(b"\r\n\r\n", b"\r\nUser-Agent: curl/8\r\nAccept: */*\r\n\r\n")],
                [n2l.replace(b"Host: 127.0.0.1", b"HOST:127.0.0.1")],
                [n2l.replace(b"\r\n\r\n", b"\r\nConnection: keep-alive\r\n\r\n")],
            ]
        plans.append([b"GET /uri-res/N2L?urn:pdi://wire.example.us/2026/01/01/9.text.1 HTTP/1.1\r\nHost: a\r\n\r\n"])
        first_askings = []
        for key, name in cold.items():
            n2r = b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: curl/8\r\nAccept: */*\r\n\r\n" % name
            if key == "head":
                n2r = n2r.replace(b"GET", b"HEAD")
            elif key == "i2r":
                n2r = n2r.replace(b"N2R", b"I2R")
            first_askings.append([n2r, n2r, n2r.replace(b"127.0.0.1", b"localhost"), n2r.replace(b"N2R", b"N2L")])
        plans = first_askings + plans  # each of those names asked first there, on each server
        statuses = []
        for reads in plans:
            first, second = (_answers(port, reads) for _, port, _ in servers)
            assert first == second, reads
            statuses += [answer[9:12] for answer in first]
        assert set(statuses) == {b"200", b"302", b"304", b"403", b"404", b"410", b"500"}
    finally:
        for process, _, _ in servers:
            stop(process)


# --- a first asking of an N2R: the compiled path reads the head, the public path answers it -------------------


class Public:
    """A stand-in for the resolver's ``public_answer`` on one cache: the whole answer of a name of
    :data:`ANSWERED` (learning its fact, as the resolver does), ``None`` for any other, and an error for
    :data:`FAILING`; each call noted."""

    def __init__(self, cache: ResponseCache) -> None:
        self.cache = cache
        self.asked: list[tuple[bytes, str, bytes, bytes, bool]] = []

    def __call__(self, path: bytes, scheme: str, server: Any, host: bytes, query: bytes,
                 revalidating: bool) -> Entity | None:
        self.asked.append((path, scheme, host, query, revalidating))
        if query == FAILING:
            raise RuntimeError("a resolver's own failure")
        if query not in ANSWERED:
            return None
        name = query.decode()
        self.cache.learn_told(query, TAG, False)
        return Entity(b"first " + query, b"text/plain; charset=utf-8", TAG, (
            (b"link", b"<" + host + b">; rel=\"original\""), (b"vary", b"Accept"), (b"etag", TAG.encode())),
            (name, name.rsplit(".", 2)[0]))


#: Names the stand-in answers, and one it fails on.
ANSWERED = {b"urn:pdi://wire.example.us/2026/11/29/%d.text.1" % n for n in range(10, 14)}
FAILING = b"urn:pdi://wire.example.us/2026/11/29/19.text.1"


class FirstPair:
    """Two connections of ``pdi serve``'s protocol, one with the compiled path and one without, each on a cache and
    a :class:`Public` of its own (the same to begin with)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        config = uvicorn.Config(Starlette(), log_level="warning", limit_concurrency=1000)
        config.load()
        self.sides = []
        for fast in (True, False):
            cache = _cache()
            public = Public(cache)
            cls = answering_protocol(10, cache, public=public)

            class Noting(cls):  # type: ignore[valid-type,misc]
                went_to_app = 0

                def to_app(self) -> None:
                    self.went_to_app += 1
                    self.scope = {}
                    self.cycle = _Done()

            if not fast:
                Noting.fast_answer = None
            protocol = Noting(config=config, server_state=uvicorn.server.ServerState(), app_state={}, _loop=loop)
            transport = Transport()
            protocol.connection_made(transport)
            self.sides.append((protocol, transport, cache, public))

    def feed(self, data: bytes) -> list[bytes]:
        for protocol, transport, _, _ in self.sides:
            transport.written.clear()
            protocol.data_received(data)
            if protocol.cycle is not None and protocol.cycle is not _ANSWERED:
                protocol.cycle = _ANSWERED  # the app's answer, done
        (fast, fast_t, fast_c, fast_p), (slow, slow_t, slow_c, slow_p) = self.sides
        assert fast_t.written == slow_t.written, data
        assert (fast.went_to_app, fast_t.closed, fast.refusal) == (slow.went_to_app, slow_t.closed, slow.refusal)
        assert [list(table.items()) for table in fast_c.tables] == [list(table.items()) for table in slow_c.tables]
        assert (fast_c.bytes, fast_c.fact_bytes) == (slow_c.bytes, slow_c.fact_bytes)
        assert fast_p.asked == slow_p.asked  # the catalog asked as often, the same
        assert fast.server_state.total_requests == slow.server_state.total_requests
        return fast_t.written


def test_the_compiled_path_gives_a_first_asking_n2r_to_the_public_path() -> None:
    facts, entries = _cache().tables
    name = next(iter(ANSWERED))
    head = b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: a.example:8000\r\nAccept: text/*\r\n\r\n" % name
    assert _fasthead.answer(head, facts, entries, b"http://", b"") is None  # as before, without ``first``
    assert _fasthead.answer(head, facts, entries, b"http://", b"", True) == (
        None, b"GET", name, b"http://a.example:8000 " + name, b"a.example:8000")
    assert _fasthead.answer(head.replace(b"GET", b"HEAD").replace(b"N2R", b"I2R"), facts, entries, b"https://", b"",
                            True) == (None, b"HEAD", name, b"https://a.example:8000 " + name, b"a.example:8000")
    # what is not a first asking of an N2R is as before: a whole answer kept, another answer negotiated; a 304
    # asked and N2L are the told path's (test_server_fasthead_told.py)
    whole = b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % WHOLE
    answered = _fasthead.answer(whole, facts, entries, b"http://", b"", True)  # its lines made when it was kept
    assert answered is not None and answered[1:] == (b"GET", 200, 5) and answered[0].endswith(b"\r\n\r\nwhole")
    assert _fasthead.answer(head.replace(b"\r\n\r\n", b"\r\nIf-None-Match: %s\r\n\r\n" % TAG.encode()), facts,
                            entries, b"http://", b"", True) == (b"GET", name, TAG)
    assert _fasthead.answer(head.replace(b"N2R", b"N2L"), facts, entries, b"http://", b"", True) == (b"GET", name, None)
    for read in (head.replace(b"text/*", b"application/json"), head.replace(b"HTTP/1.1", b"HTTP/1.0"), head + b"GET"):
        assert _fasthead.answer(read, facts, entries, b"http://", b"", True) is None, read


def test_a_first_asking_is_answered_kept_and_declined_as_the_python_path_does(
        loop: asyncio.AbstractEventLoop) -> None:
    pair = FirstPair(loop)
    answered = sorted(ANSWERED)
    for n, name in enumerate(answered):
        n2r = b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.%d\r\n\r\n" % (name, n + 1)
        written = pair.feed(n2r)
        assert written[0].startswith(b"HTTP/1.1 200 OK\r\n") and written[0].endswith(b"\r\n\r\nfirst " + name)
        pair.feed(n2r)  # from the whole answer kept
        pair.feed(n2r.replace(b"GET", b"HEAD"))
        pair.feed(n2r.replace(b"N2R", b"N2L"))  # from the fact the first asking taught
    head = b"HEAD /uri-res/I2R?%s HTTP/1.1\r\nHost: b.example\r\nUser-Agent: x\r\n\r\n" % answered[0]
    assert pair.feed(head)[0].startswith(b"HTTP/1.1 200 OK\r\n")  # another Host: a first asking of its key
    # a name the public path does not answer goes to the app, the catalog asked once
    other = b"GET /uri-res/N2R?urn:pdi://wire.example.us/2026/11/29/77.text.1 HTTP/1.1\r\nHost: a\r\n\r\n"
    pair.feed(other)
    assert [(protocol.went_to_app, len(public.asked)) for protocol, _, _, public in pair.sides] == [(1, 10)] * 2
    pair.feed(other)  # and again (nothing was kept of it)
    assert pair.sides[0][3].asked[-1] == (b"/uri-res/N2R", "http", b"a", other[17:63], False)
    pair.feed(b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: a\r\n\r\n" % answered[1])  # the next read: answered
    assert [protocol.went_to_app for protocol, _, _, _ in pair.sides] == [2, 2]
    # the resolver's own failure: a 500, the connection closed, on either path
    written = pair.feed(b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: a\r\n\r\n" % FAILING)
    assert written[0].startswith(b"HTTP/1.1 500 ")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(requests=st.lists(st.tuples(st.sampled_from(["head", "length", "chunked"]), st.booleans()), min_size=1,
                         max_size=6),
       cuts=st.lists(st.integers(0, 1500), max_size=6), data=st.data())
def test_heads_in_contents_are_never_answered_however_the_reads_cut_them(
        requests: list[tuple[str, bool]], cuts: list[int], data: st.DataObject, loop: asyncio.AbstractEventLoop
) -> None:
    """Heads the compiled path answers, and requests whose content (by length or chunked) is such a head, pipelined
    and cut into reads anywhere (a read may be exactly the head inside a content): the compiled path answers only
    a head of its own, when the parser holds no request begun (found in review, 2026-11-29, of the reads given to
    the parser a head, or a content, at a time: held to the Python path's answers)."""
    head = b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\n" % next(iter(KNOWN))
    octets = b""
    for kind, empty in requests:
        octets += b"\r\n" if empty else b""
        if kind == "head":
            octets += head
        elif kind == "length":
            octets += b"POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n%s" % (len(head), head)
        else:
            octets += b"POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (
                len(head), head)
    # reads cut anywhere, and at the start and end of each head (each of them a read of its own, often)
    edges = [at for found in re.finditer(re.escape(head), octets) for at in (found.start(), found.end())]
    cuts += [at for at in edges if data.draw(st.booleans())]
    points = sorted({cut for cut in cuts if 0 < cut < len(octets)})
    pair = Pair(_cache(), loop)
    written: list[bytes] = []
    for start, end in zip([0, *points], [*points, len(octets)], strict=True):
        written, _ = pair.feed(octets[start:end])
    answered = sum(answer.count(b"HTTP/1.1 302 Found\r\n") for answer in written)
    assert answered == sum(kind == "head" for kind, _ in requests)
    assert pair.protocols[0][0].went_to_app == len(requests) - answered
