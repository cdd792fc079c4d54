"""Header values: RFC 2047 encoded words (RFC 2557 §4.4.3), with ``email.header``."""

from __future__ import annotations

import email.errors
import email.header

from pdi import charsets
from pdi.errors import UnsupportedError


def decode_words(value: str) -> tuple[str, list[str]]:
    """``value`` with its RFC 2047 encoded words decoded, and warnings about what could not be.

    Text outside encoded words is kept as written; a malformed encoded word is kept
    as written (warning); an unknown charset, or a codec that is not a charset
    (``idna``), is read as Latin-1 (warning).
    """
    if "=?" not in value:
        return value, []
    warnings: list[str] = []
    try:
        chunks = email.header.decode_header(value)
    except email.errors.HeaderParseError as exc:
        return value, [f"bad RFC 2047 encoded word kept as written: {exc}"]
    out: list[str] = []
    for chunk, cs in chunks:
        if isinstance(chunk, str):
            out.append(chunk)
        elif cs is None:
            # decode_header hands text between encoded words back as raw-unicode-escape bytes
            out.append(chunk.decode("raw-unicode-escape"))
        else:
            try:
                codec = charsets.codec_for(cs)  # a charset, never a codec such as idna or zlib
            except UnsupportedError:
                warnings.append(f"unknown charset {cs!r} in an encoded word: read as Latin-1")
                out.append(chunk.decode("latin-1"))
            else:
                out.append(chunk.decode(codec, "replace"))
    return "".join(out), warnings


def decoded(value: str | None) -> str | None:
    """``value`` with RFC 2047 encoded words decoded (``None`` stays ``None``)."""
    return None if value is None else decode_words(value)[0]
