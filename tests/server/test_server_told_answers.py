"""N2L's ``302`` and a ``304`` of a name asked for the first time, told by its digest alone
(:meth:`~pdi.server.protocol.resolver.Resolver.public_told`).

The connection asks ``public_told`` before ``public_answer``: for a serial name spelled canonically that anyone
may read, whose fact no cache keeps yet, it learns the fact from the catalog's one row and writes the answer as a
second asking does (:meth:`~pdi.server.process.cache.ResponseCache.known_wire`), without the :class:`Fixed` or
:class:`Validator` that ``public_answer`` makes. These tests check that what the connection writes, and what the
worker knows after, are what they were before, for the names of :mod:`test_server_plain_answers`'s archive and for
any spelling, service and ``If-None-Match`` hypothesis makes of them; and that the catalog is asked no more often.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_server_plain_answers import (
    MOST,
    NOT_PLAIN,
    NOT_PUBLIC_NOW,
    PLAIN,
    SERVER,
    _spellings,
    archive_names,
)

from pdi.errors import PDIError
from pdi.server import create_app
from pdi.server.process.cache import ResponseCache, Validator, respond, validated_wire, wire
from pdi.server.process.connection import answering_protocol
from pdi.server.protocol.resolver import Resolver
from support.memory_transport import MemoryTransport

__all__ = ["archive_names"]  # the module-scoped archive of test_server_plain_answers, used here too

HOST = b"127.0.0.1:8000"
N2L, N2R, I2R = b"/uri-res/N2L", b"/uri-res/N2R", b"/uri-res/I2R"
Wire = tuple[int, bytes, bytes]


@pytest.fixture(scope="module")
def resolvers(archive_names: tuple[str, dict[str, str]]) -> tuple[Resolver, Resolver]:
    """Two resolvers of the archive: one asked the new way, one the way before."""
    location, _ = archive_names
    told, before = (create_app(location).state.public.__self__ for _ in range(2))
    return told, before


def _lines(found: tuple[int, list[tuple[bytes, bytes]], bytes]) -> Wire:
    status, headers, body = found
    return status, b"".join(b"%s: %s\r\n" % pair for pair in headers) + b"\r\n", body


def _before(resolver: Resolver, path: bytes, query: bytes, if_none_match: str | None) -> Wire | None:
    """What the connection wrote of N2L or of an N2R with ``If-None-Match`` before ``public_told``, from
    ``public_answer``'s answers (``None``: the ASGI path answers): ``CachedAnswerProtocol._answer_public`` then."""
    fields = (if_none_match, None, None)
    if if_none_match is not None and path != N2L:
        validator = resolver.public_answer(path, "http", SERVER, HOST, query, True)
        if isinstance(validator, Validator):
            unchanged = validated_wire(validator, if_none_match)
            if unchanged is not None:
                return unchanged
        elif validator is not None and (found := respond(validator, *fields)) is not None:
            return _lines(found)
    made = resolver.public_answer(path, "http", SERVER, HOST, query, False)
    if made is None:
        return None
    sent = wire(made, fields)
    if sent is not None:
        return sent
    found = respond(made, *fields)
    return None if found is None else _lines(found)


def _now(resolver: Resolver, path: bytes, query: bytes, if_none_match: str | None) -> Wire | None:
    """What the connection writes now: ``public_told`` first, then as before when it does not tell."""
    said = resolver.public_told(path, query, None if path == N2L else if_none_match)
    if said is not True:
        return None if said is False else said
    return _before(resolver, path, query, if_none_match)


def _fresh(resolver: Resolver, known: bytes | None = None) -> None:
    """An empty answer cache (a worker just started), knowing the fact an N2R of ``known`` teaches, if given."""
    resolver.cache = ResponseCache(32 << 20, MOST)
    if known is not None:
        resolver.public_answer(N2R, "http", SERVER, HOST, known, False)


def _facts(resolver: Resolver) -> dict[bytes, bytes]:
    return dict(resolver.cache._facts)  # what the worker knows of each name asked, packed


def _tags(resolver: Resolver, name: str) -> list[str | None]:
    """``If-None-Match`` fields: none, the name's tag (its SHA-256, as the archive's record says it), another, ``*``,
    lists with and without it, and its weak form (weak comparison: RFC 9110 §13.1.2)."""
    try:
        sha256 = resolver.archive.get(name).sha256
    except PDIError:  # withdrawn: its digest is not told; another stands for it
        sha256 = "f" * 64
    return [None, f'"{sha256}"', f'"{"0" * 64}"', "*", f'"x", "{sha256}"', f'W/"{sha256}"', '"x", "y"']


@pytest.mark.parametrize("key", [*PLAIN, *NOT_PLAIN, "mhtml", "damaged"])
def test_a_first_asking_is_written_and_learnt_as_before(
    resolvers: tuple[Resolver, Resolver], archive_names: tuple[str, dict[str, str]], key: str
) -> None:
    told, before = resolvers
    query = archive_names[1][key].encode()
    for tag in _tags(before, archive_names[1][key]):
        for path in (N2L, N2R, I2R):
            for known in (None, query):
                _fresh(told, known)
                _fresh(before, known)
                assert _now(told, path, query, tag) == _before(before, path, query, tag), (key, path, tag, known)
                assert _facts(told) == _facts(before), (key, path, tag, known)


def test_the_answers_told_are_the_names_location_and_tag(
    resolvers: tuple[Resolver, Resolver], archive_names: tuple[str, dict[str, str]]
) -> None:
    # values from the name and the archive's record, not from either path: RFC 2169's N2L is a 302 to the N2R of
    # the name as asked; a 304 (RFC 9110 §15.4.5) repeats the entity tag, Vary and Cache-Control of the 200
    told, _ = resolvers
    names = archive_names[1]
    sha256 = told.archive.get(names["utf8"]).sha256
    query = names["utf8"].encode()
    _fresh(told)
    status, lines, body = _now(told, N2L, query, None) or (0, b"", b"")
    assert (status, body) == (302, b"") and b"\r\nlocation: /uri-res/N2R?" + query + b"\r\n" in b"\r\n" + lines
    assert lines.startswith(b"content-length: 0\r\n") and lines.endswith(b"\r\n\r\n")
    _fresh(told)
    status, lines, body = _now(told, N2R, query, f'"{sha256}"') or (0, b"", b"")
    assert (status, body) == (304, b"")
    assert lines == (f'etag: "{sha256}"\r\nvary: Accept\r\n'
                     "cache-control: public, max-age=31536000, immutable\r\nx-content-type-options: nosniff\r\n\r\n"
                     ).encode()


def test_the_catalog_is_asked_once_and_not_for_a_name_known(
    resolvers: tuple[Resolver, Resolver], archive_names: tuple[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    told, _ = resolvers
    names = archive_names[1]
    asked: list[str] = []
    for method in ("locate_public", "read_public", "public_serial", "public_serial_named", "public_digest"):
        real = getattr(told.archive, method)
        monkeypatch.setattr(told.archive, method, lambda *a, _real=real, _name=method, **k: asked.append(_name) or _real(
            *a, **k))
    text = names["text"]
    for key, query in [("text", text), ("not there", text.rsplit("/", 1)[0] + "/987654.text.1"),
                       *((key, names[key]) for key in NOT_PUBLIC_NOW)]:
        for path in (N2L, N2R):
            _fresh(told)
            asked.clear()
            said = told.public_told(path, query.encode(), f'"{"0" * 64}"')
            assert asked == ["public_digest"], (key, path)  # the one row, whatever the answer
            if key != "text":
                assert said is False, (key, path)  # not public: public_answer would find no more, and is not asked
            elif path == N2L:
                assert isinstance(said, tuple) and said[0] == 302
            else:
                assert said is True  # another tag: its fact learnt, and the 200 is public_answer's to make
    _fresh(told, text.encode())  # its fact known: public_answer answers from it, with no catalog
    asked.clear()
    assert told.public_told(N2L, text.encode(), None) is True and told.public_told(N2R, text.encode(), '"x"') is True
    assert asked == []
    monkeypatch.setattr(told.plain, "_origin", lambda series: "http://origin.example.org/")
    _fresh(told)
    assert told.public_told(N2L, text.encode(), None) is True and asked == []  # mirrored: the general path's


@given(data=st.data())
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_spelling_service_and_tag_is_written_as_before(
    resolvers: tuple[Resolver, Resolver], archive_names: tuple[str, dict[str, str]], data: st.DataObject
) -> None:
    told, before = resolvers
    names = archive_names[1]
    query = data.draw(_spellings(names)).encode()
    path = data.draw(st.sampled_from([N2L, N2R, I2R]))
    tag = data.draw(st.one_of(st.none(), st.sampled_from(["*", '"x"']),
                              st.sampled_from(sorted(names[k] for k in PLAIN)).map(
                                  lambda name: _now_tag(before, name))))
    known = data.draw(st.sampled_from([None, query]))
    _fresh(told, known)
    _fresh(before, known)
    assert _now(told, path, query, tag) == _before(before, path, query, tag)
    assert _facts(told) == _facts(before)


def _now_tag(resolver: Resolver, name: str) -> str:
    """The entity tag of ``name``'s answer, as the general path tells it (a tag another name may be asked with)."""
    _fresh(resolver)
    made = resolver.public_answer(N2R, "http", SERVER, HOST, name.encode(), True)
    assert isinstance(made, Validator)
    return made.etag


def test_the_connection_writes_the_same_octets_with_and_without_it(
    archive_names: tuple[str, dict[str, str]]
) -> None:
    # through CachedAnswerProtocol: a protocol whose public is the resolver's public_answer asks public_told first;
    # one whose public is a plain function does not (the way before): the same octets but the Date, name by name
    location, names = archive_names

    async def ask(requests: list[bytes], new: bool) -> list[bytes]:
        app = create_app(location)
        public: Any = app.state.public
        config = uvicorn.Config(app, log_level="warning", ws="none", proxy_headers=False)
        config.load()
        made = answering_protocol(10, app.state.cache, None, public if new else lambda *a: public(*a))
        assert (made.told is not None) is new
        written = []
        for request in requests:
            protocol = made(config=config, server_state=uvicorn.server.ServerState(), app_state={},
                            _loop=asyncio.get_running_loop())
            transport = MemoryTransport()
            protocol.connection_made(transport)
            protocol.data_received(request)
            written.append(b"\r\n".join(line for line in bytes(transport.written).split(b"\r\n")
                                        if not line.startswith(b"date: ")))
            protocol.connection_lost(None)
        return written

    requests = []
    for key in PLAIN:
        tag = _now_tag(create_app(location).state.public.__self__, names[key])
        requests += [b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n" % names[key].encode(),
                     b"HEAD /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nIf-None-Match: %s\r\n\r\n"
                     % (names[key].encode(), tag.encode())]
    new, old = asyncio.run(ask(requests, True)), asyncio.run(ask(requests, False))
    assert all(answer.startswith((b"HTTP/1.1 302 ", b"HTTP/1.1 304 ")) for answer in new), new
    assert new == old
