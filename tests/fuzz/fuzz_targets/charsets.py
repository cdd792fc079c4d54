"""Charset labels: ``pdi.charsets`` (the IANA registry and the WHATWG sniffer) and the text engine's encodings.

Input: ``label NUL bytes``. What must hold (the module docstrings): a label
the registry knows looks its charset up again by its MIME name; a codec
``codec_for`` names is a text codec; ``same_charset`` is symmetric and
holds between a label and its IANA name; the sniffer names an encoding that
decodes the bytes (WHATWG decoders replace what they cannot read).
"""

from __future__ import annotations

import codecs

from fuzz_harness import Target

from fuzz_targets._common import fields, text_of
from pdi import charsets
from pdi.errors import PDIError
from pdi.fragments.text.charset import encoding_for


def run(data: bytes) -> None:
    label_b, body = fields(data, 2)
    label = text_of(label_b)
    found = charsets.lookup(label)
    if found is not None:
        assert charsets.lookup(found.mime_name) is found
    try:
        codec = charsets.codec_for(label)
    except PDIError:
        codec = None
    if codec is not None:
        assert codecs.lookup(codec).name == codec
        codecs.decode(b"", codec)
    try:
        name = charsets.iana_name(label)
    except PDIError:
        name = None
    if name is not None:
        assert charsets.same_charset(label, name)
    assert charsets.same_charset(label, "utf-8") == charsets.same_charset("utf-8", label)
    for declared in (label, None):
        for media_type in ("text/html", "text/css", "text/plain"):
            encoding, _, _ = charsets.sniff_encoding(body, declared=declared, media_type=media_type)
            charsets.whatwg_decode(body, encoding)
    try:
        encoding_for(label or None, body[:4])
    except PDIError:
        pass


TARGET = Target(
    "charsets",
    run,
    warmup=b"utf-8\x00<meta charset=utf-8>",
    tokens=(
        b"\x00", b"utf-8", b"UTF8", b"csUTF8", b"utf-16", b"utf-16le", b"utf-32", b"iso-8859-1", b"latin1",
        b"l1", b"cp1252", b"windows-1252", b"x-user-defined", b"replacement", b"MS_Kanji", b"shift_jis",
        b"iso-2022-jp", b"gb18030", b"big5", b"idna", b"punycode", b"zlib_codec", b"rot13", b"hex",
        b"base64", b"mbcs", b"oem", b"undefined", b"unicode_escape", b"raw_unicode_escape", b"utf-7",
        b"<meta charset=", b"<meta http-equiv=content-type content=\"text/html; charset=", b"@charset \"",
        b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b" ", b"\t", b"\"", b"'",
    ),
)
