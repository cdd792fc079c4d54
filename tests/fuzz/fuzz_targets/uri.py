"""RFC 3986 references: parse (strict), split (Appendix B), normalize, percent-coding, iri_to_uri.

The input is the reference as UTF-8 text (other bytes as lone surrogates).
What must hold, from the functions' own contracts: ``str(split(t)) == t``
for any text; ``str(parse(t)) == t`` for a valid one; ``normalize`` gives a
valid reference and is idempotent; ``iri_to_uri`` leaves ASCII alone and
gives a valid reference from a valid IRI-like input; percent-encoding
decodes back to the text.
"""

from __future__ import annotations

from fuzz_harness import Target

from fuzz_targets._common import text_of
from pdi.errors import ParseError
from pdi.uri import (
    equivalent,
    iri_to_uri,
    normalize,
    parse,
    percent_decode,
    percent_decode_bytes,
    percent_encode,
    remove_dot_segments,
    split,
)


def run(data: bytes) -> None:
    text = text_of(data)
    assert str(split(text)) == text
    remove_dot_segments(text)
    try:
        encoded = percent_encode(text)
    except ParseError:
        assert any(0xD800 <= ord(c) <= 0xDFFF for c in text)  # only a lone surrogate has no UTF-8
    else:
        assert percent_decode(encoded) == text
        assert percent_decode_bytes(encoded) == text.encode("utf-8")
        assert str(parse(encoded)) == encoded  # every character escaped: a valid relative path
    try:
        percent_decode(text)
        percent_decode_bytes(text)
    except ParseError:
        pass
    try:
        mapped = iri_to_uri(text)
    except ParseError:
        mapped = None
    if text.isascii():
        assert mapped == text
    try:
        uri = parse(text)
    except ParseError:
        return
    assert str(uri) == text
    assert parse(str(uri)) == uri
    normal = normalize(text)
    assert normalize(normal) == normal
    assert equivalent(text, normal)


TARGET = Target(
    "uri",
    run,
    warmup=b"http://a/b/c/./../d;p?q#f",
    tokens=(
        b"://", b"//", b"/", b"?", b"#", b"@", b":", b"[", b"]", b"%", b"%2F", b"%zz", b"%C3%A9",
        b"..", b".", b"./", b"../", b"[::1]", b"[v7.x]", b"[::ffff:1.2.3.4]", b"127.0.0.1",
        b"http:", b"file:", b"urn:pdi:", b"thismessage:/", b"cid:", b"mailto:", "é".encode(),
        "\U000f0000".encode(), b"\xed\xa0\x80",
    ),
)
