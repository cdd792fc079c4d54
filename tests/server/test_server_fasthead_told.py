"""A first asking of N2L's ``302`` or of an N2R's ``304``, its head read by the compiled path
(:mod:`pdi.server.process._fasthead`) and told by the resolver's ``public_told`` without ``httptools``.

For a name no fact is kept for, the compiled path gives the connection the method, the name and the
``If-None-Match`` it read (``None`` for N2L); the connection asks
:meth:`~pdi.server.protocol.resolver.Resolver.public_told` and writes what it tells, or has the parser read the
head as before when it tells nothing. These tests hold every head so given to llhttp's reading, and what a
connection with the compiled path writes and learns, and how often it asks the catalog, to what one without it
does, for every name of :mod:`test_server_plain_answers`'s archive.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import uvicorn
from hypothesis import given, settings
from hypothesis import strategies as st
from test_server_fasthead import (
    _FIELD,
    _REQUEST_LINE,
    TAG,
    Transport,
    _as_llhttp_reads,
    _cache,
    _Done,
    heads,
)
from test_server_plain_answers import MOST, NOT_PLAIN, NOT_PUBLIC_NOW, PLAIN, archive_names

from pdi.server import create_app
from pdi.server.process import _fasthead, connection
from pdi.server.process.cache import ResponseCache, negotiates
from pdi.server.process.connection import _ANSWERED, answering_protocol
from pdi.server.protocol.resolver import Resolver

__all__ = ["archive_names"]  # the module-scoped archive of test_server_plain_answers, used here too

NAME = b"urn:pdi://wire.example.us/2026/11/29/1.text.1"
UNKNOWN = b"urn:pdi://wire.example.us/2026/11/29/77.text.1"


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    made = asyncio.new_event_loop()
    yield made
    made.close()


# --- what the compiled path gives ---------------------------------------------------------------------------


def test_a_first_asking_of_n2l_or_a_304_is_given_to_the_told_path() -> None:
    facts, entries = _cache().tables  # NAME's fact kept, UNKNOWN's not
    n2l = b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a.example:8000\r\nAccept: */*\r\n\r\n" % UNKNOWN
    inm = b"HEAD /uri-res/N2R?%s HTTP/1.1\r\nIf-None-Match: %s\r\nHost: a\r\n\r\n" % (UNKNOWN, TAG.encode())
    assert _fasthead.answer(n2l, facts, entries, b"http://", b"") is None  # as before, without ``first``
    assert _fasthead.answer(inm, facts, entries, b"http://", b"") is None
    assert _fasthead.answer(n2l, facts, entries, b"http://", b"", True) == (b"GET", UNKNOWN, None)
    assert _fasthead.answer(n2l.replace(b"GET", b"HEAD").replace(b"\r\n\r\n", b"\r\nIf-None-Match: *\r\n\r\n"),
                            facts, entries, b"http://", b"", True) == (b"HEAD", UNKNOWN, None)  # N2L: no tag read
    assert _fasthead.answer(inm, facts, entries, b"http://", b"", True) == (b"HEAD", UNKNOWN, TAG)
    assert _fasthead.answer(inm.replace(b"N2R", b"I2R").replace(b"HEAD", b"GET"), facts, entries, b"https://", b"",
                            True) == (b"GET", UNKNOWN, TAG)
    # a name whose fact is kept is answered from it, as before
    assert _fasthead.answer(n2l.replace(UNKNOWN, NAME), facts, entries, b"http://", b"", True)[2] == 302
    assert _fasthead.answer(inm.replace(UNKNOWN, NAME), facts, entries, b"http://", b"", True)[2] == 304
    # what the told path would not answer as the Python path does is not given: several tags, a weak one, ``*``,
    # an Accept that negotiates, another version of HTTP, more after the head
    for read in (inm.replace(TAG.encode(), b"*"), inm.replace(TAG.encode(), b"W/" + TAG.encode()),
                 inm.replace(TAG.encode(), TAG.encode() + b", " + TAG.encode()),
                 inm.replace(b"\r\n\r\n", b"\r\nAccept: application/json\r\n\r\n"),
                 n2l.replace(b"HTTP/1.1", b"HTTP/1.0"), n2l + b"G", n2l.replace(b"\r\n\r\n", b"\r\nCookie: x\r\n\r\n")):
        assert _fasthead.answer(read, facts, entries, b"http://", b"", True) is None, read
    # an N2R without If-None-Match is the public path's (None, method, query, key, Host), as before
    n2r = b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: a\r\n\r\n" % UNKNOWN
    assert _fasthead.answer(n2r, facts, entries, b"http://", b"", True) == (
        None, b"GET", UNKNOWN, b"http://a " + UNKNOWN, b"a")


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_every_head_given_to_the_told_path_is_read_alike_by_llhttp(data: st.DataObject) -> None:
    head = data.draw(heads(variants=data.draw(st.booleans())))
    facts, entries = ResponseCache().tables  # no fact: every name asked for the first time
    given_ = _fasthead.answer(head, facts, entries, b"http://", b"", True)
    line = _REQUEST_LINE.match(head)
    assert line is not None
    fields = {name.lower(): value for name, value in _FIELD.findall(head, line.end())}
    if given_ is not None and len(given_) == 3:
        _as_llhttp_reads(head)
        method, query, tag = given_
        assert (method, query) == (line[1], line[4])
        assert tag == (None if line[3] == b"N2L" else fields[b"if-none-match"].decode("ascii"))
    # every N2L of the subset, and every 304 of one tag (66 octets) with no Accept that negotiates, is given; no
    # other head (its Host one of the subset's: letters, digits, dots and hyphens, a port of 1 to 5 digits)
    inm = fields.get(b"if-none-match")
    expected = re.fullmatch(rb"[A-Za-z0-9.-]+(:[0-9]{1,5})?", fields[b"host"]) is not None and (
        line[3] == b"N2L" or (inm is not None and len(inm) == 66 and not negotiates(list(fields.items()))))
    assert (given_ is not None and len(given_) == 3) == expected, (head, given_)


# --- through the connection, on a resolver of a real archive --------------------------------------------------


class Side:
    """One connection of ``pdi serve``'s protocol on a resolver and a cache of its own (a worker just started),
    with or without the compiled path; the catalog's reads, the parser's reads and the app's requests counted."""

    def __init__(self, location: str, fast: bool, loop: asyncio.AbstractEventLoop) -> None:
        app = create_app(location)
        resolver: Resolver = app.state.public.__self__
        resolver.cache = cache = ResponseCache(32 << 20, MOST)
        self.cache, self.resolver = cache, resolver
        self.catalog: list[str] = []
        archive = resolver.archive
        for method in ("locate_public", "read_public", "public_serial", "public_serial_named", "public_digest"):
            real = getattr(archive, method)
            setattr(archive, method, self._counted(real, method))
        config = uvicorn.Config(app, log_level="warning", ws="none", proxy_headers=False, limit_concurrency=1000)
        config.load()
        cls = answering_protocol(10, cache, None, resolver.public_answer)

        class Noting(cls):  # type: ignore[valid-type,misc]
            went_to_app = 0

            def to_app(self) -> None:  # the app's request, answered at once (by no one)
                self.went_to_app += 1
                self.scope = {}
                self.cycle = _Done()

        if not fast:
            Noting.fast_answer = None
        self.protocol = Noting(config=config, server_state=uvicorn.server.ServerState(), app_state={}, _loop=loop)
        self.transport = Transport()
        self.protocol.connection_made(self.transport)
        assert (self.protocol._fast is not None) is fast

    def _counted(self, real: Callable[..., Any], method: str) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.catalog.append(method)
            return real(*args, **kwargs)
        return counted

    def feed(self, data: bytes) -> bytes:
        self.transport.written.clear()
        self.protocol.data_received(data)
        if self.protocol.cycle is not None and self.protocol.cycle is not _ANSWERED:
            self.protocol.cycle = _ANSWERED  # the app's answer, done
        return re.sub(rb"\r\ndate: [^\r]*", b"", b"".join(self.transport.written))


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The protocols whose reads ``httptools`` parsed, one entry a read."""
    read = connection._read
    seen: list[Any] = []

    def noted(protocol: Any, data: bytes) -> None:
        seen.append(protocol)
        read(protocol, data)

    monkeypatch.setattr(connection, "_read", noted)
    return seen


def _plans(query: bytes, tag: bytes) -> list[list[bytes]]:
    """Reads of a name on one connection, its first asking first: N2L, HEAD, a 304 of its tag or of another (one
    tag of 66 octets, which the compiled path gives), of I2R, an N2R after."""
    n2l = b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nUser-Agent: curl/8\r\n\r\n" % query
    inm = b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nIf-None-Match: %s\r\n\r\n" % (query, tag)
    other = inm.replace(tag, b'"' + b"0" * 64 + b'"')
    n2r = b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n" % query
    return [[n2l, n2l, n2r, inm], [n2l.replace(b"GET", b"HEAD"), inm], [inm, inm, n2l, n2r],
            [inm.replace(b"GET", b"HEAD").replace(b"N2R", b"I2R"), inm], [other, inm, n2l], [other, other, n2r],
            [n2l.replace(b"\r\n\r\n", b"\r\nIf-None-Match: *\r\n\r\n"), n2l]]


def _tag(location: str, name: str) -> bytes:
    """``name``'s entity tag as the archive's record says it (its SHA-256), or another's where it has none now."""
    app = create_app(location)
    try:
        return b'"%s"' % app.state.public.__self__.archive.get(name).sha256.encode()
    except Exception:  # withdrawn, embargoed, private: asked with a tag all the same
        return b'"' + b"f" * 64 + b'"'


@pytest.mark.parametrize("key", [*PLAIN, *NOT_PLAIN, "mhtml", "damaged", "not there"])
def test_a_first_asking_is_told_without_the_parser_as_the_python_path_tells_it(
        archive_names: tuple[str, dict[str, str]], key: str, loop: asyncio.AbstractEventLoop, parsed: list[Any]
) -> None:
    location, names = archive_names
    name = names.get(key) or names["text"].rsplit("/", 1)[0] + "/987654.text.1"
    tag = _tag(location, name)
    for reads in _plans(name.encode(), tag):
        fast, slow = Side(location, True, loop), Side(location, False, loop)
        for n, read in enumerate(reads):
            parsed.clear()
            written = fast.feed(read)
            assert written == slow.feed(read), (key, read)
            assert fast.protocol.went_to_app == slow.protocol.went_to_app, (key, read)
            assert fast.catalog == slow.catalog, (key, read)  # the catalog asked as often, the same way
            assert list(fast.cache._facts.items()) == list(slow.cache._facts.items())
            assert list(fast.cache._entries) == list(slow.cache._entries)
            if n == 0 and key in PLAIN and written.startswith((b"HTTP/1.1 302 ", b"HTTP/1.1 304 ")):
                assert fast.protocol not in parsed, (key, read)  # told: the parser never fed
        if key in NOT_PUBLIC_NOW or key == "not there":
            assert fast.protocol.went_to_app > 0 and not fast.cache._facts  # the ASGI path's, nothing learnt


def test_a_first_asking_is_told_once_and_the_catalog_read_once(
        archive_names: tuple[str, dict[str, str]], loop: asyncio.AbstractEventLoop, parsed: list[Any]) -> None:
    location, names = archive_names
    query = names["utf8"].encode()
    sha256 = create_app(location).state.public.__self__.archive.get(names["utf8"]).sha256
    side = Side(location, True, loop)
    written = side.feed(b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n" % query)
    # RFC 2169's N2L: a 302 to the N2R of the name as asked, nothing in its body
    assert written.startswith(b"HTTP/1.1 302 Found\r\n") and written.endswith(b"\r\n\r\n")
    assert b"\r\nlocation: /uri-res/N2R?" + query + b"\r\n" in written
    assert side.catalog == ["public_digest"] and not parsed
    # its 304 (RFC 9110 §15.4.5: the tag, Vary and Cache-Control of the 200) from the fact learnt: no catalog
    written = side.feed(b"HEAD /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nIf-None-Match: \"%s\"\r\n\r\n"
                        % (query, sha256.encode()))
    assert written.startswith(b"HTTP/1.1 304 Not Modified\r\n") and b'\r\netag: "%s"\r\n' % sha256.encode() in written
    assert side.catalog == ["public_digest"] and not parsed
    # another tag of one name: the digest read once, and the 200 the public path's, the catalog not asked again
    other = Side(location, True, loop)
    written = other.feed(b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"%s\"\r\n\r\n"
                         % (query, b"0" * 64))
    assert written.startswith(b"HTTP/1.1 200 OK\r\n") and other.catalog.count("public_digest") == 1
    assert parsed == [other.protocol]


def test_the_told_paths_own_failure_is_a_500_as_on_the_python_path(
        archive_names: tuple[str, dict[str, str]], loop: asyncio.AbstractEventLoop,
        monkeypatch: pytest.MonkeyPatch) -> None:
    location, names = archive_names
    read = b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: a\r\n\r\n" % names["text"].encode()
    for fast in (True, False):
        side = Side(location, fast, loop)

        def failing(*args: Any) -> Any:
            raise RuntimeError("a resolver's own failure")

        monkeypatch.setattr(side.resolver.plain, "digest", failing)
        side.protocol.data_received(read)
        assert side.transport.written[0].startswith(b"HTTP/1.1 500 ") and side.transport.closed, fast
