"""The HTTP ``Accept`` field (RFC 9110 §12.5.1): :mod:`pdi.interop.accept`, and N2R's choice of a description.

The input is the field's value as UTF-8 text (other bytes as lone
surrogates). What must hold: at most :data:`~pdi.interop.accept.MAX_RANGES`
ranges are read, each lower-cased, weighted 0 to 1 with at most three
decimals, never ``*/subtype``; the ranges written again
(``type/subtype;q=…``) read back as the same ranges; the type
:func:`~pdi.interop.accept.choose` picks among offered ones is one the
client prefers most (and ``None`` only when every one is weighted 0);
:func:`pdi.server.protocol.resolver.prefers_description` answers for any field.
"""

from __future__ import annotations

from fuzz_harness import Target

from fuzz_targets._common import text_of
from pdi.interop.accept import MAX_RANGES, choose, parse_accept, preference
from pdi.server.protocol.resolver import prefers_description

_OFFERED = ["text/html", "application/json", "text/plain", "image/png", "multipart/related"]


def run(data: bytes) -> None:
    text = text_of(data)
    ranges = parse_accept(text)
    assert len(ranges) <= MAX_RANGES
    for r in ranges:
        assert r.type == r.type.lower() and r.subtype == r.subtype.lower()
        assert 0.0 <= r.q <= 1.0 and round(r.q, 3) == r.q
        assert not (r.type == "*" and r.subtype != "*")
    assert parse_accept(", ".join(f"{r.type}/{r.subtype};q={r.q:.3f}" for r in ranges)) == ranges
    chosen = choose(ranges, _OFFERED)
    prefs = [preference(ranges, t) for t in _OFFERED]
    if chosen is None:
        assert all(q == 0 for q, _ in prefs)
    else:
        assert prefs[chosen] == max(prefs) and prefs[chosen][0] > 0
    for media_type in (None, *_OFFERED):
        prefers_description(text, media_type)


TARGET = Target(
    "accept",
    run,
    warmup=b"text/html;q=0.9, application/json, */*;q=0.1",
    tokens=(
        b",", b", ", b";", b"q=", b";q=0", b";q=1", b";q=0.5", b";q=1.000", b";q=0.001", b";q=2", b"*/*", b"text/*",
        b"*/plain", b"application/json", b"application/*", b"text/html", b"text/plain", b'"', b'level="1"',
        b"charset=utf-8", b"\t", b" ", b"TEXT/HTML", b"Q=0.7", "\u0131".encode(), "\u212a".encode(),
    ),
)
