"""A whole N2R answer as the cache keeps it (pdi.server.process.cache's ``Whole``): atoms the garbage collector stops
tracking, from which every answer is the octets the :class:`Entity` it was made of gives.

The reference is the entity itself, never kept: :func:`respond` of a copy of it, with each request's
``If-None-Match``, ``Range`` and ``If-Range`` (RFC 9110 §13.1.2, §14.2, §13.1.5), against what the cache answers
from what it keeps, by every path that reads it (:func:`asked_wire`, the connection's; :func:`kept_answer`, the
ASGI middleware's; :meth:`ResponseCache.get`; the compiled path, ``tests/server/test_server_fasthead.py``).
"""

from __future__ import annotations

import gc
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.process.cache import (
    Entity,
    ResponseCache,
    Validator,
    asked_wire,
    kept_answer,
    respond,
)
from pdi.server.protocol.resolver import Resolver

NAME = "urn:pdi://kept.example.us/2026/11/29/1.text.1"
NAMES = (NAME, NAME.rsplit(".", 2)[0])
TAG = '"' + "ab" * 32 + '"'
#: What a header value may hold (a sendable one: no control character but a tab).
VALUE = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.just("\t"), max_size=40).map(str.encode)
#: Header names an entity's ``headers`` may hold (not Content-Length nor Content-Type, which depend on the range).
FIELD = st.sampled_from([b"link", b"vary", b"x-pdi-sha256", b"memento-datetime", b"content-security-policy",
                         b"x-content-type-options", b"cache-control", b"accept-ranges", b"x-a"])
#: Request fields: If-None-Match, Range, If-Range.
CONDITIONS = st.tuples(
    st.sampled_from([None, TAG, "W/" + TAG, '"other"', "*", f'"x", {TAG}']),
    st.sampled_from([None, "bytes=0-0", "bytes=1-3", "bytes=0-0,2-3", "bytes=-2", "bytes=100-200", "bytes=5-",
                     "lines=1-2", "bytes=0-0,0-0,0-0"]),
    st.sampled_from([None, TAG, '"other"', "Sun, 29 Nov 2026 05:00:00 GMT", "Sat, 28 Nov 2026 05:00:00 GMT"]),
)


@st.composite
def entities(draw: st.DrawFn) -> tuple[bytes, bytes, tuple[tuple[bytes, bytes], ...]]:
    """The body, Content-Type and header pairs of an entity (its tag :data:`TAG`, its names :data:`NAMES`)."""
    pairs = draw(st.lists(st.tuples(FIELD, VALUE), max_size=8))
    if draw(st.booleans()):
        pairs.insert(draw(st.integers(0, len(pairs))), (b"last-modified", b"Sun, 29 Nov 2026 05:00:00 GMT"))
    body = draw(st.binary(max_size=30))
    kind = draw(st.sampled_from([b"text/plain; charset=utf-8", b"application/octet-stream", b""]))
    return body, kind, tuple(pairs)


def _lines(answered: tuple[int, list[tuple[bytes, bytes]], bytes]) -> tuple[int, bytes, bytes]:
    status, fields, body = answered
    return status, b"".join(b"%s: %s\r\n" % pair for pair in fields) + b"\r\n", body


@settings(max_examples=200, deadline=None)
@given(entities(), st.lists(CONDITIONS, min_size=1, max_size=6))
def test_every_answer_from_a_kept_whole_is_the_entitys(
    parts: tuple[bytes, bytes, tuple[tuple[bytes, bytes], ...]],
    asked: list[tuple[str | None, str | None, str | None]],
) -> None:
    body, kind, pairs = parts
    cache = ResponseCache(1 << 20, 1 << 20)
    query = NAME.encode()
    key = b"http://h.example " + query
    kept = Entity(body, kind, TAG, pairs, NAMES)
    assert cache.put(key, kept)
    assert cache.bytes == Entity(body, kind, TAG, pairs, NAMES).size + len(key)  # counted as before
    for fields in [(None, None, None), *asked]:
        reference = respond(Entity(body, kind, TAG, pairs, NAMES), *fields)
        assert reference is not None
        assert asked_wire(cache, query, key, fields, n2l=False, negotiated=False) == _lines(reference), fields
        request = [(b"host", b"h.example")] + [(name, value.encode()) for name, value in zip(
            (b"if-none-match", b"range", b"if-range"), fields, strict=True) if value is not None]
        assert kept_answer(cache, "/uri-res/N2R", request, query, "http") == reference, fields
    got = cache.get(key)
    assert isinstance(got, Entity) and got == kept
    assert (got.body, got.content_type, got.etag, got.headers, got.names, got.shared, got.size) == (
        body, kind, TAG, pairs, NAMES, True, kept.size)


def test_a_kept_whole_is_not_tracked_by_the_collector_once_it_has_seen_it() -> None:
    """An Entity (a slotted instance) and its list of lines are tracked for as long as they live; what the cache
    keeps of one is not, after the first collection that sees it."""
    cache = ResponseCache(1 << 20, 1 << 20)
    key = b"http://h.example " + NAME.encode()
    assert cache.put(key, Entity(b"octets", b"text/plain", TAG, ((b"etag", TAG.encode()),), NAMES))
    gc.collect()
    assert not gc.is_tracked(cache.tables[1][key])


def test_a_plain_answer_kept_is_not_tracked_and_answers_as_it_did(tmp_path: Path) -> None:
    """A first-asking N2R's answer (pdi.server.protocol.plain), kept as the connection keeps it: untracked after a
    collection, and its 200, Range and 304 the octets of the answer made."""
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series("kept.example.us")
        name = str(archive.add("kept.example.us", b"Line one.\nLine two.\n", format="text"))
    resolver = create_app(str(tmp_path / "archive")).state.public.__self__
    assert isinstance(resolver, Resolver)
    resolver.cache = cache = ResponseCache(1 << 20, 1 << 20)
    query = name.encode()
    key = b"http://127.0.0.1:8000 " + query
    made = resolver.public_answer(b"/uri-res/N2R", "http", ("127.0.0.1", 8000), b"127.0.0.1:8000", query)
    assert isinstance(made, Entity)
    assert cache.keep(key, made, query)
    del made
    gc.collect()
    assert not gc.is_tracked(cache.tables[1][key])
    again = resolver.plain.answer(query, False, False, 1 << 20, "http://127.0.0.1:8000/")
    assert isinstance(again, Entity)
    for fields in [(None, None, None), (again.etag, None, None), (None, "bytes=2-5", None),
                   (None, "bytes=2-5", again.etag), (None, "bytes=0-0,3-4", None), (None, "bytes=90-99", None)]:
        reference = respond(again, *fields)
        assert reference is not None
        assert asked_wire(cache, query, key, fields, n2l=False, negotiated=False) == _lines(reference), fields


def test_a_kept_whole_is_forgotten_bounded_and_not_replaced_by_a_validator() -> None:
    key = b"http://h.example " + NAME.encode()
    entity = Entity(b"x" * 100, b"text/plain", TAG, ((b"etag", TAG.encode()),), NAMES)
    cache = ResponseCache(3 * (entity.size + len(key)) + 10, 1 << 20)
    assert cache.put(key, entity)
    assert not cache.put(key, Validator(TAG, (), NAMES))  # never in the whole answer's place
    assert cache.get(key) == entity
    keys = [key + b"#%d" % n for n in range(5)]
    for other in keys:
        assert cache.put(other, entity)
        assert cache.bytes <= cache.max_bytes
        assert cache.bytes == sum(entity.size + len(k) for k in cache.tables[1])
    assert list(cache.tables[1]) == keys[2:]  # the least recently used out first
    assert cache.forget(NAME.rsplit(".", 2)[0]) == 3
    assert cache.bytes == 0 and len(cache) == 0


def test_an_answer_not_shared_is_kept_as_it_was() -> None:
    """Only an answer anyone may be given is kept as atoms (the cache holds no other, but may be given one)."""
    cache = ResponseCache(1 << 20, 1 << 20)
    key = b"http://h.example " + NAME.encode()
    entity = Entity(b"octets", b"text/plain", TAG, ((b"etag", TAG.encode()),), NAMES, False)
    assert cache.put(key, entity)
    got = cache.get(key)
    assert got is entity and not got.shared
