"""Charsets of text entities: names, byte-order marks, and how fast a codec can be counted.

RFC 5147 §2 and §1.1: positions count *characters*, so the entity's charset
decides how octets map to positions; "in the absence of an explicit character
encoding declaration, US-ASCII is assumed". A byte-order mark at the start of
a Unicode entity "does not count as a character" (§2.1.2).

A charset label is looked up in the IANA registry, then in Python's codec
registry (:mod:`pdi.charsets`); codecs that are not charsets are refused.
Three kinds are distinguished:

* ``utf-8`` (UTF-8, also spelled ``utf8``, ``utf-8-sig``): counted with bytes
  primitives (continuation bytes are not characters);
* ``single``: one octet per character (US-ASCII, ISO-8859-x, windows-125x,
  KOI8, EBCDIC code pages …): character index = octet index;
* ``general``: everything else (UTF-16, UTF-32, Shift_JIS, GB18030,
  ISO-2022-JP …), decoded with Python's codec; correctness before speed.
"""

from __future__ import annotations

import codecs
import functools
import sys
from dataclasses import dataclass
from typing import Final

from pdi import charsets

DEFAULT_CHARSET: Final = "us-ascii"

_BOMS: Final[dict[str, tuple[tuple[bytes, str], ...]]] = {
    # charset family -> (BOM octets, codec for the rest)
    "utf-8": ((codecs.BOM_UTF8, "utf-8"),),
    "utf-16": ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")),
    "utf-16-le": ((codecs.BOM_UTF16_LE, "utf-16-le"),),
    "utf-16-be": ((codecs.BOM_UTF16_BE, "utf-16-be"),),
    "utf-32": ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be")),
    "utf-32-le": ((codecs.BOM_UTF32_LE, "utf-32-le"),),
    "utf-32-be": ((codecs.BOM_UTF32_BE, "utf-32-be"),),
}
# Without a BOM, "UTF-16" and "UTF-32" are big-endian (RFC 2781 §4.3).
_NO_BOM: Final[dict[str, str]] = {"utf-16": "utf-16-be", "utf-32": "utf-32-be"}


def codec_name(charset: str) -> str:
    """Python's canonical codec name for a charset label (``UTF-8`` → ``utf-8``, ``MS_Kanji`` → ``shift_jis``).

    Labels are looked up in the IANA registry first, then in Python's codec
    registry (:func:`pdi.charsets.codec_for`). Raises
    :class:`~pdi.errors.UnsupportedError` for a label that names no charset with a decoder
    (``klingon``, ``zlib_codec``, ``punycode``).
    """
    name = charsets.codec_for(charset)
    if name == "utf-8-sig":
        name = "utf-8"
    return name


def same_charset(a: str, b: str) -> bool:
    """True when two charset labels name the same charset (``UTF-8``, ``utf8`` and ``csUTF8``).

    See :func:`pdi.charsets.same_charset`.
    """
    return charsets.same_charset(a, b)


@dataclass(frozen=True)
class Encoding:
    """How the octets of one entity are decoded.

    ``name`` is the codec of the entity's charset, ``body`` the codec that
    decodes the octets after the BOM (endianness made explicit), ``bom`` the
    octets of the byte-order mark that was found (``b""`` if none), ``kind``
    one of ``"utf-8"``, ``"single"``, ``"general"``. For the first two kinds,
    ``cr``, ``lf`` and ``nel`` are the octet strings of CR, LF and NEL (NEL
    ``b""`` where the charset has none).
    """

    name: str
    body: str
    bom: bytes
    kind: str
    cr: bytes = b"\r"
    lf: bytes = b"\n"
    nel: bytes = b""


def _single_byte_table(name: str) -> str | None:
    """The 256-character decoding table of a one-octet-per-character codec, else ``None``."""
    if name in ("ascii", "iso8859-1", "latin-1"):
        return "".join(map(chr, range(256 if name != "ascii" else 128)))
    info = codecs.lookup(name)
    module = sys.modules.get(getattr(info.incrementaldecoder, "__module__", ""), None)
    table = getattr(module, "decoding_table", None)
    if isinstance(table, str) and len(table) == 256:
        return table
    return None


def encoding_for(charset: str | None, head: bytes) -> Encoding:
    """Decide how to decode an entity in ``charset`` whose first octets are ``head``."""
    return _encoding_for(charset, bytes(head[:4]))  # a byte-order mark is at most four octets


@functools.lru_cache(maxsize=256)  # a few charsets and marks; a one-octet charset's table is read once
def _encoding_for(charset: str | None, head: bytes) -> Encoding:
    name = codec_name(charset if charset is not None else DEFAULT_CHARSET)
    family = name
    if family in _BOMS:
        bom_found = b""
        body = _NO_BOM.get(family, family)
        for bom, bom_body in _BOMS[family]:
            if head.startswith(bom):
                bom_found, body = bom, bom_body
                break
        if family == "utf-8":
            return Encoding(name=name, body="utf-8", bom=bom_found, kind="utf-8", nel=b"\xc2\x85")
        return Encoding(name=name, body=body, bom=bom_found, kind="general")
    table = _single_byte_table(name)
    if table is not None:
        marks = {}
        for char, key in (("\r", "cr"), ("\n", "lf"), ("\x85", "nel")):
            octets = [i for i, c in enumerate(table) if c == char]
            if len(octets) > 1:
                return Encoding(name=name, body=name, bom=b"", kind="general")
            marks[key] = bytes(octets)
        if not marks["cr"] or not marks["lf"]:
            return Encoding(name=name, body=name, bom=b"", kind="general")
        return Encoding(
            name=name, body=name, bom=b"", kind="single", cr=marks["cr"], lf=marks["lf"], nel=marks["nel"]
        )
    return Encoding(name=name, body=name, bom=b"", kind="general")
