"""URLs as a browser writes them before it asks for them (WHATWG URL, WHATWG Encoding).

A reference in a page is a string; what the browser requests, and what a part of an
MHTML file must be labelled with for the browser to find it there, is that string
parsed by the WHATWG URL parser, which percent-encodes as it goes:

* the query with the page's encoding (WHATWG URL §4.4, "query state", with the
  document's encoding as HTML's "encoding-parse a URL" gives it), through the
  *special-query percent-encode set* (C0 controls, space, ``"``, ``#``, ``<``, ``>``,
  ``'`` and every byte above 0x7E); a character the encoding cannot encode is written
  as the percent-encoded form of an HTML numeric character reference,
  ``%26%23NNNN%3B`` ("percent-encode after encoding"). In a windows-1251 page
  ``?я`` is ``?%FF``; in Shift_JIS ``?≡`` is ``?%81%DF`` and ``?‽`` is
  ``?%26%238253%3B``. Where the URL standard and Chromium differ, Chromium is followed,
  since the files must open in it (measured with Chromium 156, ``docs/specs/README.md``):
  the standard takes UTF-8 and leaves ``'`` alone for a URL that is not special (not
  ``http``, ``https``, ``ftp``, ``file``), and takes UTF-8 for ``ws`` and ``wss``;
  Chromium uses the page's encoding and encodes ``'`` for every URL whose path starts
  with ``/`` (``thismessage:/x?я`` is ``thismessage:/x?%FF``, ``ws://h/?я`` is
  ``ws://h/?%FF``), and UTF-8 only for an opaque path (``mailto:x?я``), ``'`` encoded
  there too;
* everything before the query (the path above all) in UTF-8, whatever the page's
  encoding: characters outside printable ASCII, and ``"``, ``<``, ``>``, `````,
  ``{``, ``}``, ``|`` and ``^``, which Chromium encodes in a path;
* the fragment in UTF-8 through the fragment set (C0 controls, space, ``"``, ``<``,
  ``>``, `````, above 0x7E).

Nothing already percent-encoded is touched, and other ASCII is kept as written (a
browser canonicalizes both a reference and an MHTML label the same way, so only what
it would encode matters).

The encoders (WHATWG Encoding §§9–14) are built from this project's decoders
(:mod:`pdi.charsets.sniff`) with the Encoding Standard's rules for which byte sequence
a character gets: single-byte encodings invert their table (the first byte wins);
Shift_JIS, EUC-JP and ISO-2022-JP (its three states) use index jis0208 as the
Shift_JIS decoder gives it (the pointers 8272 to 8835 left out for Shift_JIS), with
their special cases (``¥``, ``‾``, ``−``, half-width katakana); EUC-KR inverts index
EUC-KR; x-user-defined its private-use block. Big5, GBK and gb18030 are Python's
encoders (GBK without four-byte sequences, ``€`` as 0x80), which differ from the
WHATWG indexes in some characters. UTF-16 documents encode URLs as UTF-8 ("get an
output encoding").
"""

from __future__ import annotations

import functools
import re
import unicodedata
import urllib.parse
from collections.abc import Callable

from pdi import charsets
from pdi.charsets.sniff import single_byte_table

__all__ = ["SPECIAL_SCHEMES", "browser_url", "encode_or_fail", "encode_query", "output_encoding"]

SPECIAL_SCHEMES = frozenset({"ftp", "file", "http", "https", "ws", "wss"})
"""WHATWG URL §4.2: the schemes whose URLs are special."""

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_SURROGATE = re.compile("[\ud800-\udfff]")


def output_encoding(encoding: str) -> str:
    """WHATWG Encoding "get an output encoding": UTF-16BE/LE (and replacement) give UTF-8."""
    return "UTF-8" if encoding in ("UTF-16BE", "UTF-16LE", "replacement") else encoding


# --- encoders ------------------------------------------------------------------------------


@functools.cache
def _single_byte_encoder(name: str) -> dict[str, int]:
    table = single_byte_table(name)
    out: dict[str, int] = {}
    for b in range(0x80, 0x100):
        if table[b] != "\ufffd":
            out.setdefault(table[b], b)
    return out


@functools.cache
def _jis0208() -> dict[int, str]:
    """Index jis0208 (pointer to character), as the Shift_JIS decoder gives it."""
    index: dict[int, str] = {}
    for pointer in range(60 * 188):  # lead bytes 0x81 to 0x9F and 0xE0 to 0xFC
        if 8836 <= pointer <= 10715:
            continue  # decoded as private use by the Shift_JIS decoder, not in the index
        lead, trail = divmod(pointer, 188)
        raw = bytes([lead + (0x81 if lead < 0x1F else 0xC1), trail + (0x40 if trail < 0x3F else 0x41)])
        ch = charsets.whatwg_decode(raw, "Shift_JIS")
        if len(ch) == 1 and ch != "\ufffd":
            index[pointer] = ch
    return index


@functools.cache
def _jis0208_pointers(shift_jis: bool) -> dict[str, int]:
    """The pointer each character gets: the first, leaving 8272–8835 out for Shift_JIS."""
    out: dict[str, int] = {}
    for pointer, ch in sorted(_jis0208().items()):
        if shift_jis and 8272 <= pointer <= 8835:
            continue
        out.setdefault(ch, pointer)
    return out


@functools.cache
def _euc_kr_pointers() -> dict[str, int]:
    out: dict[str, int] = {}
    for lead in range(0x81, 0xFF):
        for trail in range(0x41, 0xFF):
            ch = charsets.whatwg_decode(bytes([lead, trail]), "EUC-KR")
            if len(ch) == 1 and ch != "\ufffd":
                out.setdefault(ch, (lead - 0x81) * 190 + trail - 0x41)
    return out


def _half_width_katakana(ch: str) -> str:
    """Index ISO-2022-JP katakana: the full-width form (the two sound marks as spacing ones)."""
    return {"\uff9e": "\u309b", "\uff9f": "\u309c"}.get(ch) or unicodedata.normalize("NFKC", ch)


#: The WHATWG Shift_JIS and EUC-JP encoders' own bytes for U+00A5 and U+203E (JIS X 0201 Roman).
_JIS_ROMAN = {0xA5: b"\x5c", 0x203E: b"\x7e"}


def _jis_pointer(ch: str, shift_jis: bool) -> int | None:
    """The jis0208 index pointer of ``ch`` for the two encoders (U+2212 encoded as U+FF0D), or ``None``."""
    return _jis0208_pointers(shift_jis).get("\uff0d" if ch == "\u2212" else ch)


def _shift_jis(ch: str) -> bytes | None:
    cp = ord(ch)
    if cp <= 0x80:
        return bytes([cp])
    if cp in _JIS_ROMAN:
        return _JIS_ROMAN[cp]
    if 0xFF61 <= cp <= 0xFF9F:
        return bytes([cp - 0xFF61 + 0xA1])
    pointer = _jis_pointer(ch, True)
    if pointer is None:
        return None
    lead, trail = divmod(pointer, 188)
    return bytes([lead + (0x81 if lead < 0x1F else 0xC1), trail + (0x40 if trail < 0x3F else 0x41)])


def _euc_jp(ch: str) -> bytes | None:
    cp = ord(ch)
    if cp < 0x80:
        return bytes([cp])
    if cp in _JIS_ROMAN:
        return _JIS_ROMAN[cp]
    if 0xFF61 <= cp <= 0xFF9F:
        return bytes([0x8E, cp - 0xFF61 + 0xA1])
    pointer = _jis_pointer(ch, False)
    if pointer is None:
        return None
    lead, trail = divmod(pointer, 94)
    return bytes([lead + 0xA1, trail + 0xA1])


def _euc_kr(ch: str) -> bytes | None:
    cp = ord(ch)
    if cp < 0x80:
        return bytes([cp])
    pointer = _euc_kr_pointers().get(ch)
    if pointer is None:
        return None
    lead, trail = divmod(pointer, 190)
    return bytes([lead + 0x81, trail + 0x41])


Encoder = Callable[[str], "bytes | None"]


def _python(codec: str, *, gbk: bool = False) -> Encoder:
    def encode(ch: str) -> bytes | None:
        if gbk and ch == "\u20ac":
            return b"\x80"
        if ch == "\ue5e5" and codec == "gb18030":
            return None  # WHATWG gb18030 encoder: U+E5E5 is an error
        try:
            out = ch.encode(codec)
        except UnicodeEncodeError:
            return None
        return None if gbk and len(out) == 4 else out

    return encode


def _iso_2022_jp(text: str) -> list[bytes | int]:
    """WHATWG ISO-2022-JP encoder over a whole string: its states ASCII, Roman, jis0208."""
    out: list[bytes | int] = []
    state = "ascii"
    pointers = _jis0208_pointers(False)
    for ch in text:
        cp = ord(ch)
        if state in ("ascii", "roman") and cp in (0x0E, 0x0F, 0x1B):
            out.append(0xFFFD)
            continue
        if state == "ascii" and cp < 0x80:
            out.append(bytes([cp]))
            continue
        if state == "roman" and ((cp < 0x80 and cp not in (0x5C, 0x7E)) or cp in (0xA5, 0x203E)):
            out.append(bytes([0x5C if cp == 0xA5 else 0x7E if cp == 0x203E else cp]))
            continue
        if cp < 0x80:
            out.append(b"\x1b(B" + bytes([cp]))
            state = "ascii"
            continue
        if cp in (0xA5, 0x203E):
            out.append(b"\x1b(J" + (b"\x5c" if cp == 0xA5 else b"\x7e"))
            state = "roman"
            continue
        if cp == 0x2212:
            ch = "\uff0d"
        elif 0xFF61 <= cp <= 0xFF9F:
            ch = _half_width_katakana(ch)
        pointer = pointers.get(ch)
        if pointer is None:
            if state == "jis0208":
                out.append(b"\x1b(B")
                state = "ascii"
            out.append(ord(ch))
            continue
        lead, trail = divmod(pointer, 94)
        if state != "jis0208":
            out.append(b"\x1b$B")
            state = "jis0208"
        out.append(bytes([lead + 0x21, trail + 0x21]))
    if state != "ascii":
        out.append(b"\x1b(B")
    return out


def _utf8(ch: str) -> bytes | None:
    return ch.encode("utf-8")


def _x_user_defined(ch: str) -> bytes | None:
    cp = ord(ch)
    if cp < 0x80:
        return bytes([cp])
    return bytes([cp - 0xF700]) if 0xF780 <= cp <= 0xF7FF else None


def _single_byte(encoding: str) -> Encoder:
    table = _single_byte_encoder(encoding)

    def encode(ch: str) -> bytes | None:
        if ord(ch) < 0x80:
            return bytes([ord(ch)])
        b = table.get(ch)
        return None if b is None else bytes([b])

    return encode


def _encoder(encoding: str) -> Encoder:
    if encoding == "UTF-8":
        return _utf8
    if encoding == "Shift_JIS":
        return _shift_jis
    if encoding == "EUC-JP":
        return _euc_jp
    if encoding == "EUC-KR":
        return _euc_kr
    if encoding == "Big5":
        return _python("big5")
    if encoding == "GBK":
        return _python("gb18030", gbk=True)
    if encoding == "gb18030":
        return _python("gb18030")
    if encoding == "x-user-defined":
        return _x_user_defined
    return _single_byte(encoding)


def encode_or_fail(text: str, encoding: str) -> list[bytes | int]:
    """``text`` encoded with a WHATWG encoding: byte strings, and for each character the
    encoding cannot encode its code point (WHATWG Encoding "encode or fail", repeated).

    Lone surrogates are U+FFFD first (a scalar value string, as the URL parser takes).
    """
    text = _SURROGATE.sub("\ufffd", text)
    encoding = output_encoding(encoding)
    if encoding == "ISO-2022-JP":
        return _iso_2022_jp(text)
    encode = _encoder(encoding)
    out: list[bytes | int] = []
    for ch in text:
        got = encode(ch)
        out.append(ord(ch) if got is None else got)
    return out


_QUERY_SET = frozenset(b" \"#<>")
_SPECIAL_QUERY_SET = _QUERY_SET | {0x27}
_QUERY_FAST = re.compile(r'[\x00-\x20"#<>\x7f]')
_SPECIAL_QUERY_FAST = re.compile(r'[\x00-\x20"#<>\x7f\']')


def encode_query(query: str, encoding: str, *, special: bool = True) -> str:
    """WHATWG URL "percent-encode after encoding" of a query with the (special-)query set."""
    keep = _SPECIAL_QUERY_SET if special else _QUERY_SET
    if query.isascii() and not (_SPECIAL_QUERY_FAST if special else _QUERY_FAST).search(query):
        return query  # nothing to encode, in every encoding (ASCII is itself in each)
    out: list[str] = []
    for item in encode_or_fail(query, encoding):
        if isinstance(item, int):
            out.append(f"%26%23{item}%3B")
            continue
        for b in item:
            out.append(f"%{b:02X}" if b < 0x20 or b > 0x7E or b in keep else chr(b))
    return "".join(out)


_PATH_UNSAFE = re.compile(r'[^\x21-\x7e]|["<>`{}|^]')
_FRAGMENT_UNSAFE = re.compile(r'[^\x21-\x7e]|["<>`]')


def _utf8_escape(pattern: re.Pattern[str], text: str) -> str:
    if not pattern.search(text):
        return text
    return pattern.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode("utf-8")), text)


#: A special URL's scheme and authority (resolved: ``scheme://authority``).
_AUTHORITY = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://([^/?#]*)")


def _ascii_host(before: str) -> str:
    """``before`` (a URL up to its query) with the host of a special URL other than ``file`` written as the
    browser's host parser writes a domain (WHATWG URL §3.5, "domain to ASCII": percent-decoded, then UTS #46 ToASCII,
    nontransitional), when it holds anything but ASCII or a ``%``: ``http://bücher.example/`` is
    ``http://xn--bcher-kva.example/``. A host the browser would refuse is left as it is (it names no part)."""
    found = _AUTHORITY.match(before)
    if found is None or found[1].lower() not in SPECIAL_SCHEMES or found[1].lower() == "file":
        return before
    userinfo, at, hostport = found[2].rpartition("@")
    if hostport.startswith("["):  # an IPv6 literal
        return before
    host, colon, port = hostport.partition(":")
    if host.isascii() and "%" not in host:
        return before
    import idna

    try:  # UTS #46's mapping (case folded, compatibility forms), then each label beyond ASCII in Punycode
        mapped = idna.uts46_remap(urllib.parse.unquote(host, errors="strict"), std3_rules=False, transitional=False)
        domain = ".".join(label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")
                          for label in mapped.split("."))
    except (UnicodeError, idna.IDNAError):
        return before
    return f"{found[1]}://{userinfo}{at}{domain}{colon}{port}{before[found.end():]}"


def browser_url(uri: str, encoding: str = "UTF-8") -> str:
    """``uri`` (resolved, as written in a page of ``encoding``) percent-encoded as the
    browser's URL parser writes it (see the module docstring); the fragment is kept; a
    domain beyond ASCII in IDNA's ASCII form, as the browser asks for it."""
    if len(uri) <= SHORT_LENGTH:
        return _remembered_short(uri, encoding)
    if len(uri) <= REMEMBERED_LENGTH:
        return _remembered_browser_url(uri, encoding)
    return _browser_url(uri, encoding)


#: A URI of at most this many characters has its :func:`browser_url` kept (the last :data:`REMEMBERED` of them):
#: a crawl compares each part's URL five or six times, and a WARC import's crawls and packing asked 40 a page
#: (a third of its crawl, issue 24). Longer ones, rare, are written each time, so the memo holds at most a few MiB
#: (8 MiB were each of its URIs 1,024 characters beyond the BMP).
REMEMBERED_LENGTH = 1024
REMEMBERED = 512
#: The short URIs, most of them, have a memo of their own, of :data:`SHORT_REMEMBERED`: a WARC import writes each
#: URL in pass 1, in its page's crawl and in its packing, phases apart, and the benchmark's 750 URLs went through
#: the memo of 512 three times, written afresh each time (issue 24). At most about 8 MiB, 1 MiB for URIs of 100
#: ASCII characters.
SHORT_LENGTH = 128
SHORT_REMEMBERED = 4096


@functools.lru_cache(maxsize=REMEMBERED)
def _remembered_browser_url(uri: str, encoding: str) -> str:
    return _browser_url(uri, encoding)


@functools.lru_cache(maxsize=SHORT_REMEMBERED)
def _remembered_short(uri: str, encoding: str) -> str:
    return _browser_url(uri, encoding)


def _browser_url(uri: str, encoding: str) -> str:
    """:func:`browser_url`, written each time it is asked."""
    uri = _SURROGATE.sub("\ufffd", uri)
    cut = uri.find("#")
    head, fragment = (uri, None) if cut < 0 else (uri[:cut], uri[cut + 1 :])
    cut = head.find("?")
    before, query = (head, None) if cut < 0 else (head[:cut], head[cut + 1 :])
    out = _utf8_escape(_PATH_UNSAFE, _ascii_host(before))
    if query is not None:
        m = _SCHEME.match(before)
        hierarchical = m is None or before.startswith("/", m.end()) or m.group(1).lower() in SPECIAL_SCHEMES
        out += "?" + encode_query(query, encoding if hierarchical else "UTF-8")
    if fragment is not None:
        out += "#" + _utf8_escape(_FRAGMENT_UNSAFE, fragment)
    return out
