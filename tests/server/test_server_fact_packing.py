"""A first asking's short cuts (issue 24) give what the general way gives: the fact a name's ``N2L`` or ``304`` teaches
a worker, packed without a :class:`~pdi.server.process.cache.Fact`, and a ``304``'s header lines made without the
list of fields.

``ResponseCache.learn_told`` packs the fact of a serial name spelled as
``pdi add`` prints it from its entity tag alone; it must keep what
``learn(fact_of(answer))`` keeps of the same ``302`` or validator, and the
answers the fact gives after (``known_wire``) must be the same octets.
``validated_wire`` must give the octets ``respond`` gives, joined as header
lines, for any ``If-None-Match`` (RFC 9110 §13.1.2: a list, ``*``, weak tags).
The entity tags are SHA-256 digests worked out here (hashlib) of octets
hypothesis makes.
"""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from pdi.server.process.cache import (
    SHARED_VALIDATOR_FIELDS,
    Entity,
    Fact,
    ResponseCache,
    Validator,
    fact_of,
    located,
    respond,
    validated_wire,
)

_SERIES = st.from_regex(r"[a-z0-9]([a-z0-9.-]{0,20}[a-z0-9])?\.[a-z]{2}", fullmatch=True)
_TOKEN = st.sampled_from(["text", "html", "image+jpeg", "utf-8", "octet-stream", "shift_jis", "x-1"])


@st.composite
def _names(draw: st.DrawFn) -> bytes:
    """A serial name spelled as ``pdi add`` prints it (specs/PDI-GRAMMAR.md)."""
    day = draw(st.dates())
    serial = draw(st.integers(1, 10**12))
    version = draw(st.integers(1, 10**6))
    return (f"urn:pdi://{draw(_SERIES)}/{day.year:04d}/{day.month:02d}/{day.day:02d}/{serial}.{draw(_TOKEN)}"
            f".{version}").encode()


def _names_of(query: bytes) -> tuple[str, str]:
    name = query.decode()
    return name, name.rsplit(".", 2)[0]


#: The path of a base URL (pdi serve --base-url https://host/pdi/: pdi.server.http.site), or none (a host's root).
_SITES = st.sampled_from([b"", b"/pdi", b"/uri-res", b"/a/b%20c"])


@given(_names(), st.binary(max_size=64), st.booleans(), _SITES)
def test_a_fact_packed_from_its_tag_is_the_fact_of_its_answer(
    query: bytes, octets: bytes, n2l: bool, site: bytes,
) -> None:
    etag = f'"{hashlib.sha256(octets).hexdigest()}"'
    names = _names_of(query)
    kept = located(site + b"/uri-res/N2R?" + query, names, True, etag) if n2l else Validator(
        etag, SHARED_VALIDATOR_FIELDS, names, True)
    fact = fact_of(kept)
    assert fact is not None
    general, short = ResponseCache(), ResponseCache()
    general.learn(query, fact)
    short.learn_told(query, etag, n2l, site)
    assert short._facts == general._facts and short.fact_bytes == general.fact_bytes > 0
    assert short.fact(query) == general.fact(query) == fact
    for asked in (True, False):
        assert short.known_wire(query, asked, etag) == general.known_wire(query, asked, etag)
    if n2l:  # the 302 to the N2R of the name as spelled (RFC 2169), told by the fact alone
        found = short.known_wire(query, True, None)
        assert found is not None and found[0] == 302
        assert b"\r\nlocation: " + site + b"/uri-res/N2R?" + query + b"\r\n" in found[1]


@given(_names(), st.binary(max_size=64), st.booleans(), st.booleans())
def test_a_whole_answer_teaches_what_its_fact_teaches_keeping_what_was_known(
    query: bytes, octets: bytes, located_before: bool, told_before: bool,
) -> None:
    """A first-asking N2R's whole answer is learnt by its tag alone (``learn_told``, not located): what ``learn`` of
    its ``fact_of`` keeps, with the ``Location`` an N2L taught before carried over, and the name now the most
    recently used."""
    etag = f'"{hashlib.sha256(octets).hexdigest()}"'
    names = _names_of(query)
    other = b"urn:pdi://other.us/2026/11/28/7.text.1"
    general, short = ResponseCache(), ResponseCache()
    for cache in (general, short):
        if told_before:
            cache.learn_told(query, etag, located_before)
        cache.learn_told(other, etag, False)
    fact = fact_of(Entity(octets, b"text/plain", etag, (), names))
    assert fact is not None and fact.location is None
    known = general.fact(query)
    if known is not None and known.location is not None and known.etag == fact.etag:  # what the resolver carries over
        fact = Fact(fact.names, fact.etag, known.location)
    general.learn(query, fact)
    short.learn_told(query, etag, False)
    assert list(short._facts.items()) == list(general._facts.items()) and short.fact_bytes == general.fact_bytes
    assert list(short._facts)[-1] == query
    found = short.known_wire(query, True, None)
    if told_before and located_before:
        assert found is not None and b"\r\nlocation: /uri-res/N2R?" + query + b"\r\n" in found[1]
    else:
        assert found is None


@given(st.binary(max_size=64), st.binary(max_size=64), st.booleans(), st.booleans(), st.booleans())
def test_a_validators_304_lines_are_its_fields_as_sent(
    octets: bytes, other: bytes, listed: bool, weak: bool, shared_fields: bool,
) -> None:
    etag = f'"{hashlib.sha256(octets).hexdigest()}"'
    fields = SHARED_VALIDATOR_FIELDS if shared_fields else ((b"vary", b"Accept, Cookie"),)
    validator = Validator(etag, fields, ("urn:pdi://a.us/2026/11/28/1.text.1", "urn:pdi://a.us/2026/11/28/1"))
    asked = ("W/" if weak else "") + etag
    if listed:
        asked = f'"{hashlib.sha256(other).hexdigest()}", {asked}'
    for field in (asked, "*", f'"{hashlib.sha256(other + b"x").hexdigest()}"', None):
        expected = respond(validator, field, None, None)
        made = validated_wire(validator, field)
        if expected is None:
            assert made is None
            continue
        status, headers, body = expected
        assert made == (status, b"".join(b"%s: %s\r\n" % pair for pair in headers) + b"\r\n", body)
        assert status == 304 and made[1].startswith(b"etag: " + etag.encode() + b"\r\n")
