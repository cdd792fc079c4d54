"""Format tokens, media types and charsets of identifiers: ``pdi.formats``.

The input is the token, media type or charset label as UTF-8 text. What
must hold (the module docstring): canonical spelling is a fixed point and
keeps a token valid; a resolvable token's media type gives that token back
(a charset token means text/plain in that charset); a registered media
type's token resolves to that media type.
"""

from __future__ import annotations

from fuzz_harness import Target

from fuzz_targets._common import text_of
from pdi import formats
from pdi.errors import PDIError


def run(data: bytes) -> None:
    text = text_of(data)
    canonical = formats.canonical_token(text)
    assert formats.canonical_token(canonical) == canonical
    if formats.is_valid_token(text):
        assert formats.check_token(text) == canonical
        assert formats.is_valid_token(canonical)
    try:
        media_type = formats.media_type_for(text)
    except PDIError:
        media_type = None
    if media_type is not None:
        charset = formats.charset_for(text)
        if charset is None:
            assert formats.token_for(media_type) == canonical
        else:
            assert media_type == "text/plain"
            assert formats.token_for(media_type, charset=charset) == canonical
    try:
        token = formats.token_for(text)
    except PDIError:
        token = None
    if token is not None:
        assert formats.media_type_for(token) == text.split(";", 1)[0].strip().lower()
    for probe in (formats.media_family, formats.default_fragment_scheme, formats.registered_charset):
        try:
            probe(text)
        except PDIError:
            pass


TARGET = Target(
    "formats",
    run,
    warmup=b"text/plain; charset=utf-8",
    tokens=(
        b"text", b"html", b"xml", b"sgml", b"header", b"utf-8", b"shift_jis", b"audio+mpeg", b"svg%2Bxml",
        b"vnd%2Ems-excel", b"+", b"%", b"%2B", b"%C3%A9", b"%ff", b"/", b";", b"; charset=", b"\"", b"*",
        b"text/plain", b"image/svg+xml", b"message/rfc822", b"audio/mpeg", b"application/xhtml+xml",
        b"iso-8859-1", b"csUTF8", b"MS_Kanji", b"latin-1", b"idna", b"zlib_codec", b"punycode", b"rot13",
    ),
    examples=0.5,
)
