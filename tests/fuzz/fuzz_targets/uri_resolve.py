"""RFC 3986 §5.2 (and RFC 2396's results as a mode): resolving a reference against a base.

The input is ``base NUL reference`` (UTF-8 text, other bytes as lone
surrogates). What must hold for a valid absolute base and a valid
reference (RFC 3986 §5.2, §5.3): the result is a valid reference with the
reference's scheme or the base's; resolving the result again against the
base removes its dot segments (§5.2.2 keeps the base's path as it is for an
empty reference) and is then a fixed point; where the base's path has no dot
segments, the result is one already.
"""

from __future__ import annotations

from fuzz_harness import Target

from fuzz_targets._common import fields, text_of
from pdi.errors import ParseError
from pdi.uri import parse, remove_dot_segments, resolve


def run(data: bytes) -> None:
    base_b, ref_b = fields(data, 2)
    base, ref = text_of(base_b), text_of(ref_b)
    results = {}
    for rfc in (3986, 2396):
        for strict in (True, False):
            try:
                results[rfc, strict] = resolve(base, ref, rfc=rfc, strict=strict)
            except ParseError:
                return
    try:
        base_uri, ref_uri = parse(base), parse(ref)
    except ParseError:
        return
    if base_uri.scheme is None:
        return
    result = results[3986, True]
    uri = parse(result)
    assert uri.scheme is not None
    assert uri.scheme == (ref_uri.scheme if ref_uri.scheme is not None else base_uri.scheme)
    again = resolve(base, result)
    assert resolve(base, again) == again
    if remove_dot_segments(base_uri.path) == base_uri.path:
        assert again == result


TARGET = Target(
    "uri_resolve",
    run,
    warmup=b"http://a/b/c/d;p?q\x00../../g",
    tokens=(
        b"\x00", b"//", b"/", b"?", b"#", b"@", b":", b"..", b".", b"./", b"../", b"/..", b"/.",
        b"g", b"http:", b"thismessage:/", b"cid:", b"urn:", b"%2E", b"%2e%2E", b";p", b"[::1]",
    ),
)
