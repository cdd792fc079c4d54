"""A WARC record's digest fields read as the octets they spell, in whichever encoding a writer chose.

WARC 1.1 (ISO 28500:2017) §5.8 and §5.9: ``labelled-digest = algorithm ":" digest-value``, ``digest-value =
token``, "No particular algorithm is recommended"; its example is "a SHA-1 labelled Base32 ([RFC4648]) value".
Writers spell the value in RFC 4648 base32 (warcio, Heritrix, wget), base16 (hexadecimal) or base64. warcio's
checker reads a value by its length alone (as long as its own padded base32: compared as it is; longer: base16;
shorter: base64), so two spellings the specification allows were refused as not matching the record they
vouch for: base32 without its ``=`` padding (a ``token`` has no ``=``: the unpadded form is the grammar's own,
for SHA-256, SHA-512, MD5, whose base32 is padded) and base32 in lower case. Here a value is read as each
encoding that spells a digest of its algorithm's length (the lengths differ, so at most one does), and two
values are the same digest when they spell the same octets, however spelt.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import re

__all__ = ["algorithm_of", "digest_key", "digest_octets", "warcio_spelling"]

_BASE32 = re.compile(r"[A-Za-z2-7]+=*")
_BASE16 = re.compile(r"[0-9A-Fa-f]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]+=*")
#: RFC 4648 base32's alphabet as the digits ``int(..., 32)`` reads: a value is read as the number it spells
#: (``base64.b32decode`` is Python code: some 2 ms of an import's pass 1 for 750 payload digests, issue 24)
_B32_DIGITS = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "0123456789abcdefghijklmnopqrstuv")


@functools.lru_cache(maxsize=64)  # a file names few algorithms; a stranger's many are asked again, not kept
def _algorithm(name: str) -> tuple[str, int] | None:
    """hashlib's name of the algorithm ``name`` (``sha1`` for ``SHA-1``, as OpenSSL reads it) and its digest's size
    in octets, or ``None`` for an algorithm hashlib does not know or whose size is not fixed (``shake_128``)."""
    try:
        made = hashlib.new(name)
    except (ValueError, TypeError):
        return None
    return (made.name, made.digest_size) if made.digest_size else None


def algorithm_of(value: str) -> tuple[str, int] | None:
    """The algorithm a digest value is labelled with, as hashlib names it, and its digest's size in octets;
    ``None`` when it names none hashlib knows."""
    name, sep, _ = value.strip().partition(":")
    return _algorithm(name.strip()) if sep else None


def digest_octets(value: str) -> tuple[str, bytes] | None:
    """``(algorithm, octets)`` of a ``WARC-Block-Digest`` or ``WARC-Payload-Digest`` value: the algorithm as hashlib
    names it (``sha1`` for ``SHA1`` and ``sha-1``), the octets its value spells in RFC 4648 base32 (padded or not, in either case), base16 (either case) or
    base64 (the standard or the URL-safe alphabet, padded or not), whichever spells as many octets as the
    algorithm's digest has. ``None`` when the algorithm is not one hashlib knows, or the value spells no such
    digest."""
    name, sep, text = value.strip().partition(":")
    text = text.strip()
    known = _algorithm(name.strip()) if sep else None
    if known is None or not text:
        return None
    algorithm, size = known
    found: bytes | None = None
    bare = text.rstrip("=")
    if _BASE16.fullmatch(text) and len(text) == 2 * size:
        found = bytes.fromhex(text)
    elif _BASE32.fullmatch(text) and len(bare) == -(-8 * size // 5) and text in (bare, bare + "=" * (-len(bare) % 8)):
        # the octets are the number's first 8 * size bits, as base64.b32decode reads them (the rest, under 5, are
        # padding it ignores); a length of ceil(8 * size / 5) characters is always a whole base32 spelling
        found = (int(bare.upper().translate(_B32_DIGITS), 32) >> (5 * len(bare) - 8 * size)).to_bytes(size, "big")
    elif _BASE64.fullmatch(text) and len(bare) == -(-4 * size // 3) and text in (bare, bare + "=" * (-len(bare) % 4)):
        try:
            found = base64.b64decode(bare.replace("-", "+").replace("_", "/") + "=" * (-len(bare) % 4), validate=True)
        except binascii.Error:
            return None
    if found is None or len(found) != size:
        return None
    return algorithm, found


def digest_key(value: str) -> str:
    """A digest value as two are compared: ``algorithm:`` and the hexadecimal octets it spells (``sha1:`` and
    ``SHA1:``, base32 and base16, are one digest); a value that spells none, as it is, its algorithm in lower
    case."""
    read = digest_octets(value)
    if read is not None:
        return f"{read[0]}:{read[1].hex()}"
    algorithm, _, text = value.strip().partition(":")
    return f"{algorithm.lower()}:{text}"


def warcio_spelling(value: str | None) -> str | None:
    """``value`` spelt as warcio's checker compares it (``algorithm:`` and padded upper-case base32), or as it is
    when it spells no digest (warcio judges it: an unknown algorithm is its problem to report)."""
    if not value:
        return value
    read = digest_octets(value)
    if read is None:
        return value
    return f"{read[0]}:{base64.b32encode(read[1]).decode('ascii')}"
