"""A hostile look at a first-asking N2L or ``304`` told from the compiled path's read (``_first_told``).

What such a request gets is held to what the ASGI resolver (no cache, no protocol of its own) gives and to what a
connection without the compiled path gives: in a pipeline behind an answer the app has not finished, for a name
withdrawn or embargoed in this worker after its first ``302`` was told, for every ``If-None-Match`` the compiled
path hands over (one field of 66 characters: one tag, several, weak ones, ``*``), and in the counts a scrape reads.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from server_helpers import exchange, h11_answers, in_thread
from starlette.types import ASGIApp, Receive, Scope, Send
from test_server_fasthead_told import Side
from test_server_plain_answers import archive_names
from test_server_public_answers import S, _request, _resolvers, _warm, _without_date, names
from test_server_public_answers import _serving as _asgi_serving

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.process import _fasthead, observe
from pdi.server.process.cache import ResponseCache
from pdi.server.process.connection import CachedAnswerProtocol, answering_protocol

__all__ = ["archive_names", "names"]  # the archives of test_server_plain_answers and test_server_public_answers


class Slow:
    """ASGI middleware holding back the app's answer to a query ``marked`` for ``seconds``; the requests that reach
    the app, in order."""

    def __init__(self, app: ASGIApp, marked: bytes, seconds: float) -> None:
        self.app, self.marked, self.seconds = app, marked, seconds
        self.targets: list[bytes] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.targets.append(scope["query_string"])
            if scope["query_string"] == self.marked:
                await asyncio.sleep(self.seconds)
        await self.app(scope, receive, send)


@contextmanager
def _serving(location: str, *, fast: bool, marked: bytes = b"", seconds: float = 0.0,
             monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, Slow, Any]]:
    """uvicorn in a thread with pdi serve's protocol, the app's cache and public answers (a worker just started),
    with or without the compiled path."""
    app = create_app(location)
    slow = Slow(app, marked, seconds)
    with monkeypatch.context() as patched:
        if not fast:
            patched.setattr(CachedAnswerProtocol, "fast_answer", None)
        protocol = answering_protocol(10, app.state.cache, None, app.state.public)
        with in_thread(slow, host="127.0.0.1", port=0, log_level="warning", http=protocol) as server:
            yield server.servers[0].sockets[0].getsockname()[1], slow, app


def _raw(port: int, reads: list[bytes], answers: int, pause: float) -> bytes:
    """What the server writes on one connection to ``reads``, sent ``pause`` seconds apart, until ``answers``
    answers are in or it has said nothing for 5 seconds."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        for n, read in enumerate(reads):
            if n:
                time.sleep(pause)
            conn.sendall(read)
        got = bytearray()
        while not _complete(bytes(got), answers):
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            got += chunk
        return bytes(got)


def _complete(raw: bytes, answers: int) -> bool:
    """Whether ``raw`` holds ``answers`` whole answers (h11's reading)."""
    try:
        read, _ = h11_answers(raw, ["GET"] * answers)
    except Exception:
        return False
    return len(read) == answers


# --- (a) every state of a name, each asked first in a worker just started --------------------------------------


def test_every_first_asking_is_the_asgi_resolvers_answer_in_every_state(
        names: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    keys = [key for key in names if key not in ("location", "token")]  # public, withdrawn, embargoed, private,
    with Archive.open(names["location"]) as archive:  # hidden, under a private series, damaged, missing, ...
        tags = {}
        for key in keys:
            try:
                tags[key] = f'"{archive.get(names[key]).sha256}"'
            except Exception:  # not there for anyone now: asked with a tag all the same
                tags[key] = '"' + "f" * 64 + '"'
    other = '"' + "0" * 64 + '"'
    kinds = [("GET", "N2L", None), ("HEAD", "N2L", None), ("GET", "N2R", "own"), ("HEAD", "I2R", "own"),
             ("GET", "I2R", other), ("HEAD", "N2R", 'W/"' + "0" * 62 + '"')]
    for method, service, tag in kinds:
        asked = [_request(names[key], method, service,
                          **({} if tag is None else {"If_None_Match": tags[key] if tag == "own" else tag}))
                 for key in keys]
        expected = [_without_date(e) for e in _resolvers(names, asked)]
        for fast in (True, False):
            with _serving(names["location"], fast=fast, monkeypatch=monkeypatch) as (port, _, _app):
                got = exchange(port, [_warm(names), *asked, *asked])[1:]  # each name's first asking, then again
            for n, answer in enumerate(got):
                assert _without_date(answer) == expected[n % len(keys)], (fast, asked[n % len(keys)], n)


def test_other_spellings_and_a_series_not_held_here_are_the_resolvers(
        names: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = names["text"]
    with Archive.open(names["location"]) as archive:
        tag = f'"{archive.get(text).sha256}"'
    stranger = "urn:pdi://elsewhere.example.org" + text.split(S, 1)[1]  # a series this archive does not hold
    spellings = [text.replace("u", "%75", 1), text.replace(".text.", "%2Etext."), text.replace(":", "%3a", 1),
                 text + "%C3%A9", stranger, text.replace(".1", ".01")]
    raw = [text.encode() + "é".encode(), text.encode().replace(b"//", b"/%2F")]  # an octet not of the subset
    asked = []
    for query in [*(s.encode() for s in spellings), *raw]:
        for method, service, field in (("GET", "N2L", ""), ("HEAD", "N2L", ""), ("GET", "N2R", tag),
                                       ("HEAD", "I2R", tag)):
            asked.append(b"%s /uri-res/%s?%s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n" % (
                method.encode(), service.encode(), query,
                b"If-None-Match: %s\r\n" % field.encode() if field else b""))
    with _asgi_serving(create_app(names["location"], cache_bytes=0), public=False) as (port, _):
        expected = [_without_date(exchange(port, [request])[0]) for request in asked]  # a connection each
    for request, want in zip(asked, expected, strict=True):  # each a first asking, then a second
        with _serving(names["location"], fast=True, monkeypatch=monkeypatch) as (port, _slow, app):
            refused = want.startswith(b"HTTP/1.1 400 ")  # the connection closed after it: asked once
            got = exchange(port, [_warm(names), request] + ([] if refused else [request]))[1:]
            assert [_without_date(g) for g in got] == [want] * len(got), request
            assert stranger.encode() not in app.state.cache._facts  # the federation path's, never learnt here


# --- (d) a pipeline: the told answer after the answers asked before it -------------------------------------------


@pytest.mark.parametrize("reads", [1, 2])
@pytest.mark.parametrize("second", ["N2L", "304"])
def test_a_first_asking_behind_an_unfinished_answer_is_told_after_it(
        names: dict[str, str], reads: int, second: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # RFC 9112 §9.3.2: a server answers pipelined requests in the order they were received
    text = names["text"]
    generic = text.rsplit(".", 2)[0]  # N2R of a generic name: the app's answer (its formats), held back here
    slow_request = _request(generic, Accept="text/plain")
    with Archive.open(names["location"]) as archive:
        tag = f'"{archive.get(text).sha256}"'
    told = _request(text, service="N2L") if second == "N2L" else _request(text, If_None_Match=tag)
    expected = _resolvers(names, [slow_request, told])
    written = {}
    for fast in (True, False):
        with _serving(names["location"], fast=fast, marked=generic.encode(), seconds=0.6,
                      monkeypatch=monkeypatch) as (port, slow, _app):
            exchange(port, [_warm(names)])
            slow.targets.clear()
            sent = [slow_request + told] if reads == 1 else [slow_request, told]
            raw = _raw(port, sent, 2, 0.2)
            written[fast] = raw
            answers, left = h11_answers(raw, ["GET", "GET"])
            assert not left and [a[0] for a in answers] == [int(e.split(b" ")[1]) for e in expected], raw
            first_end = raw.index(b"HTTP/1.1 ", 1)
            assert _without_date(raw[:first_end]) == _without_date(expected[0])
            assert _without_date(raw[first_end:]) == _without_date(expected[1])
            assert slow.targets[0] == generic.encode()
    assert _without_date(written[True]) == _without_date(written[False])


def test_a_client_gone_before_its_told_answer_leaves_the_worker_answering(
        names: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = names["text"]
    asked = _request(text, service="N2L")
    expected = _without_date(_resolvers(names, [asked])[0])
    with _serving(names["location"], fast=True, monkeypatch=monkeypatch) as (port, slow, app):
        exchange(port, [_warm(names)])
        for _ in range(20):  # asked, and gone at once (a reset, its answer written to no one)
            conn = socket.create_connection(("127.0.0.1", port), timeout=5)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.sendall(asked.replace(text.encode(), names["utf8"].encode()))
            conn.close()
        deadline = time.monotonic() + 5
        while not app.state.cache.knows(names["utf8"].encode()) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [_without_date(a) for a in exchange(port, [asked, asked])] == [expected, expected]
        assert len(slow.targets) == 1  # the warming request alone reached the app


# --- (a) a name withdrawn or embargoed in this worker after its first 302 was told --------------------------------


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("change", ["withdraw", "embargo", "private"])
def test_a_name_no_longer_public_in_this_worker_is_never_told_again(
        names: dict[str, str], change: str, fast: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    later = names["later"]
    with Archive.open(names["location"]) as archive:
        tag = f'"{archive.get(later).sha256}"'
    asked = [_request(later, service="N2L"), _request(later, "HEAD", "N2L"), _request(later, If_None_Match=tag),
             _request(later, "HEAD", "I2R", If_None_Match=tag)]
    before = _resolvers(names, asked)
    assert [b.split(b" ")[1] for b in before] == [b"302", b"302", b"304", b"304"]
    with _serving(names["location"], fast=fast, monkeypatch=monkeypatch) as (port, slow, app):
        first = exchange(port, [_warm(names), *asked])[1:]
        assert [_without_date(a) for a in first] == [_without_date(b) for b in before]
        assert app.state.cache.knows(later.encode()) and slow.targets == [_warm(names).split(b"?")[1].split(b" ")[0]]
        with Archive.open(names["location"]) as archive:
            if change == "withdraw":
                archive.withdraw(later, "withdrawn while a worker knew its fact")
            elif change == "embargo":
                archive.embargo(later, "2999-01-01")
            else:
                archive.set_series_access(S, "private")
        app.state.cache.forget(later)  # what this worker's write API does after such a change (no wait)
        got = exchange(port, asked)
        assert not app.state.cache.knows(later.encode())
    expected = _resolvers(names, asked)
    assert [_without_date(a) for a in got] == [_without_date(e) for e in expected]
    want = {"withdraw": b"410", "embargo": b"403", "private": b"403"}[change]
    assert [a.split(b" ")[1] for a in got] == [want] * 4


# --- (b) every If-None-Match the compiled path hands over ---------------------------------------------------------


def _fields(length: int) -> st.SearchStrategy[str]:
    """``If-None-Match`` values of ``length`` characters as a client may send them: a list of strong or weak tags
    (or ``*``), with odd spacing, made up to ``length`` by one more tag (or cut short there, mid-tag)."""
    tag = st.builds(lambda weak, inner: ("W/" if weak else "") + f'"{inner}"', st.booleans(),
                    st.text("0123456789abcdef", min_size=0, max_size=64))
    item = st.one_of(tag, st.just("*"))
    sep = st.sampled_from([",", ", ", " ,", " , ", ",,", ",  "])

    def made(first: str, rest: list[tuple[str, str]]) -> str:
        value = first + "".join(s + t for s, t in rest)
        room = length - len(value) - 1
        if room < 0:
            return value[:length]
        return value + "," + ('"' + "a" * (room - 2) + '"' if room >= 2 else "x" * room)

    return st.builds(made, item, st.lists(st.tuples(sep, item), max_size=4)).filter(
        lambda v: v[0] != " " and v[-1] != " ")


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_an_if_none_match_handed_to_the_told_path_is_answered_as_without_the_compiled_path(
        archive_names: tuple[str, dict[str, str]], data: st.DataObject) -> None:
    location, names_ = archive_names
    key = data.draw(st.sampled_from(["text", "utf8", "png", "withdrawn", "private"]))
    query = names_[key].encode()
    value = data.draw(st.one_of(st.just(f'"{_sha256(location, names_[key])}"'),  # its own tag
                                st.sampled_from([f'"{_sha256(location, names_[v])}"' for v in ("v2", "first")]),
                                _fields(66)))  # another version's, or any list of 66 characters
    loop = asyncio.new_event_loop()
    try:
        method = data.draw(st.sampled_from([b"GET", b"HEAD"]))
        path = data.draw(st.sampled_from([b"N2R", b"I2R"]))
        read = b"%s /uri-res/%s?%s HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: %s\r\n\r\n" % (
            method, path, query, value.encode())
        facts, entries = ResponseCache().tables
        assert len(_fasthead.answer(read, facts, entries, b"http://", b"", True)) == 3  # the told path's
        fast, slow = Side(location, True, loop), Side(location, False, loop)
        written = fast.feed(read)
        assert written == slow.feed(read), (key, value)
        assert fast.protocol.went_to_app == slow.protocol.went_to_app
        assert list(fast.cache._facts.items()) == list(slow.cache._facts.items())
        if key in ("withdrawn", "private"):
            assert fast.protocol.went_to_app == 1 and not written  # the ASGI path's (no answer from here)
        elif value == f'"{_sha256(location, names_[key])}"':
            assert written.startswith(b"HTTP/1.1 304 ")
        else:  # RFC 9110 §13.1.2: 66 characters hold no other list with the name's tag; ``*`` alone is a list
            assert written.startswith(b"HTTP/1.1 200 ") or (fast.protocol.went_to_app == 1 and not written)
    finally:
        loop.close()


_DIGESTS: dict[tuple[str, str], str] = {}


def _sha256(location: str, name: str) -> str:
    found = _DIGESTS.get((location, name))
    if found is None:
        with Archive.open(location) as archive:
            try:
                found = archive.get(name).sha256
            except Exception:  # withdrawn, private: asked with a tag all the same
                found = "f" * 64
            _DIGESTS[location, name] = found
    return found


# --- (e) the counts a scrape reads ----------------------------------------------------------------------------


def test_told_answers_are_counted_as_without_the_compiled_path(
        archive_names: tuple[str, dict[str, str]]) -> None:
    location, names_ = archive_names
    query = names_["text"].encode()
    reads = [b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\n" % query,
             b"HEAD /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\n" % names_["utf8"].encode(),
             b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"%s\"\r\n\r\n"
             % (names_["png"].encode(), _sha256(location, names_["png"]).encode())]
    counted = {}
    loop = asyncio.new_event_loop()
    try:
        for fast in (True, False):
            side = Side(location, fast, loop)
            observe._tally.clear()
            for read in reads:
                assert side.feed(read).startswith((b"HTTP/1.1 302 ", b"HTTP/1.1 304 "))
            counted[fast] = (dict((k, list(v)) for k, v in observe._tally.items()),
                             side.protocol.server_state.total_requests)
    finally:
        observe._tally.clear()
        for handle in observe._flushing:
            handle.cancel()
        observe._flushing.clear()
        loop.close()
    # each told answer counted once, as an answer from here that the cache did not hold (its status, its octets)
    assert counted[True] == counted[False] == (
        {(b"GET", 302, False): [1, 0], (b"HEAD", 302, False): [1, 0], (b"GET", 304, False): [1, 0]}, 3)
