"""A plain N2R answer's :class:`~pdi.server.process.cache.Entity`, made without its frozen ``__init__``
(:func:`pdi.server.protocol.plain.made_entity`), is the one ``Entity(...)`` makes: every field, those its
comparison leaves out too, for any values; and ``Entity`` has the fields it sets, no more (a field added to it
would be left unset). And ``Resolver.public_answer``, whose N2R asks the plain path before it looks for a
fragment or an inflection in the query, still leaves every name with one to the resolver's endpoint."""

from __future__ import annotations

import dataclasses
import datetime
from email.utils import format_datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.process.cache import Entity, ResponseCache
from pdi.server.protocol.plain import made_entity
from pdi.server.protocol.resolver import Resolver

S = "entity.example.us"


@pytest.fixture(scope="module")
def small_archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """An archive of one small text: its directory and its name."""
    location = tmp_path_factory.mktemp("entity") / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"A small text.\n", format="text"))
    return str(location), name


@pytest.fixture(scope="module")
def resolver(small_archive: tuple[str, str]) -> Resolver:
    """The resolver of that archive (its answer cache emptied by each test)."""
    found = create_app(small_archive[0]).state.public.__self__
    assert isinstance(found, Resolver)
    return found


_pairs = st.tuples(st.binary(max_size=20), st.binary(max_size=40))


def test_entity_has_the_fields_made_entity_sets() -> None:
    assert [f.name for f in dataclasses.fields(Entity)] == [
        "body", "content_type", "etag", "headers", "names", "shared", "lines", "sendable", "held"]
    assert Entity.__slots__ == ("body", "content_type", "etag", "headers", "names", "shared", "lines", "sendable",
                                "held")


@given(body=st.binary(max_size=300), content_type=st.binary(max_size=40), etag=st.text(max_size=70),
       headers=st.lists(_pairs, max_size=12).map(tuple), names=st.lists(st.text(max_size=30), max_size=3).map(tuple),
       lines=st.lists(st.binary(max_size=60), max_size=2), held=st.integers(min_value=0, max_value=1 << 40))
def test_made_entity_is_the_entity_its_init_makes(
    body: bytes, content_type: bytes, etag: str, headers: tuple[tuple[bytes, bytes], ...], names: tuple[str, ...],
    lines: list[bytes], held: int,
) -> None:
    made = made_entity(body, content_type, etag, headers, names, lines, held)
    expected = Entity(body, content_type, etag, headers, names, True, lines, sendable=True, held=held)
    assert type(made) is Entity
    assert made == expected and hash(made) == hash(expected)
    for field in dataclasses.fields(Entity):  # those left out of == too (lines, sendable, held)
        assert getattr(made, field.name) is getattr(expected, field.name), field.name
    assert made.size == expected.size
    try:
        made.body = b"changed"  # type: ignore[misc]
    except dataclasses.FrozenInstanceError:
        pass
    else:
        raise AssertionError("a made entity is frozen as one its __init__ makes")


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60, deadline=None)
@given(at=st.integers(min_value=0, max_value=200), extra=st.sampled_from(["#", "%23", "?", "#char=0,3", "?format=json"]),
       revalidating=st.booleans(), n2l=st.booleans())
def test_a_name_with_a_fragment_or_inflection_is_never_answered_in_the_event_loop(
    small_archive: tuple[str, str], resolver: Resolver, at: int, extra: str, revalidating: bool, n2l: bool,
) -> None:
    """``Resolver.public_answer`` of a serial name with a fragment or an inflection put anywhere in it (``#``,
    ``%23``, ``?``) is ``None`` (the resolver's endpoint answers it), whichever service; the name alone is answered
    (its N2R asks the plain path before looking for them, which a serial name's pattern never holds)."""
    name = small_archive[1]
    path = b"/uri-res/N2L" if n2l else b"/uri-res/N2R"
    cut = at % (len(name) + 1)
    for query in ((name[:cut] + extra + name[cut:]).encode(), (name + extra).encode()):
        resolver.cache = ResponseCache(32 << 20, 1 << 20)
        assert resolver.public_answer(path, "http", ("127.0.0.1", 8000), b"127.0.0.1:8000", query, revalidating) is None
    resolver.cache = ResponseCache(32 << 20, 1 << 20)
    assert resolver.public_answer(path, "http", ("127.0.0.1", 8000), b"127.0.0.1:8000", name.encode(),
                                  revalidating) is not None


def test_answers_of_one_deposit_second_share_their_fixed_fields(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The header pairs a plain N2R answer holds that are the same for every answer of a deposit second
    (``Memento-Datetime``, ``Last-Modified``, ``Content-Security-Policy``, ``Cache-Control``) are one pair each, kept,
    not a tuple made (and tracked by the collector, for as long as the answer is kept) for each answer; their values
    are the deposit's HTTP-date (RFC 9110 §5.6.7, to the second) and the configured policy."""
    location = tmp_path_factory.mktemp("shared") / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        names = [str(archive.add(S, b"Text %d.\n" % i, format="text")) for i in range(3)]
        created = [archive.resolve(name).record.created_at for name in names]
    found = create_app(str(location)).state.public.__self__
    assert isinstance(found, Resolver)
    answers = []
    for name in names:
        found.cache = ResponseCache(32 << 20, 1 << 20)
        answer = found.public_answer(b"/uri-res/N2R", "http", ("127.0.0.1", 8000), b"127.0.0.1:8000", name.encode())
        assert isinstance(answer, Entity)
        answers.append(answer)
    fields = [dict(answer.headers) for answer in answers]
    for field, at in zip(fields, created, strict=True):
        when = datetime.datetime.fromisoformat(at.replace("Z", "+00:00"))
        assert field[b"memento-datetime"] == field[b"last-modified"] == format_datetime(when, usegmt=True).encode()
        assert field[b"cache-control"] == b"public, max-age=31536000, immutable"
    same_second = [(a, b) for i, a in enumerate(answers) for b in answers[i + 1:]
                   if dict(a.headers)[b"memento-datetime"] == dict(b.headers)[b"memento-datetime"]]
    assert same_second  # three deposits in a row: two of them in one second
    for one, other in same_second:
        for at in range(len(one.headers)):
            if one.headers[at][0] in (b"memento-datetime", b"last-modified", b"content-security-policy",
                                      b"cache-control"):
                assert one.headers[at] is other.headers[at], one.headers[at]
