"""The encoding of text a browser would read, and its decoding (WHATWG Encoding and HTML).

Used wherever bytes are read as a browser reads them: the text parts of an MHTML
file (:mod:`pdi.mhtml`), an HTML document stored without a charset
(:mod:`pdi.fragments.markup`, whose positions the resolver's viewer shares). Order
(issue 6, and what browsers do with saved pages), after the HTML Standard's *encoding
sniffing algorithm* (HTML §13.2.3.2, "Determining the character encoding"):

1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE) wins over everything (Encoding §6.1,
   *BOM sniff*);
2. then the ``charset=`` parameter the bytes came with (the transport layer's encoding);
3. then, for HTML, the first ``<meta charset>`` or ``<meta http-equiv=Content-Type
   content="…; charset=…">`` in the first 1024 bytes (HTML §13.2.3.2, *prescan a byte
   stream to determine its encoding*, simplified to the first ``<meta>`` that declares
   an encoding); for CSS the ``@charset`` rule (CSS Syntax §3.2);
4. else UTF-8 when the bytes are valid UTF-8, else windows-1252, with a warning
   (Chromium writes no ``charset=`` on parts and keeps the page's original bytes).

Labels are mapped with the WHATWG Encoding Standard's label table (Encoding §4.2), so
``iso-8859-1``, ``latin1`` and ``ascii`` mean windows-1252, ``shift_jis`` means the
Windows-31J table, ``gb2312`` means GBK (decoded with the gb18030 decoder, a superset),
``utf-16`` means UTF-16LE, and a ``<meta>`` naming UTF-16 means UTF-8. These are not the
IANA registry's meanings (:mod:`pdi.charsets.iana`, where ``iso-8859-1`` is
ISO-8859-1): this module is for what a browser does, that one for the charset a
depositor or a fragment's integrity check names. Python codecs stand in for the WHATWG
decoders (Encoding §§8–14); the single-byte encodings (Encoding §9) are decoded with
the bytes from 0x80 to 0x9F that Python leaves undefined mapped to the C1 controls, as
the WHATWG indexes do (windows-1252's five, windows-1250's 0x81 …), and KOI8-U and
windows-1255's 0xCA as the WHATWG indexes have them
(:func:`single_byte_table`; ``tests/test_mhtml_urlencoding.py`` compares every table
with the WHATWG index). Big5, GBK, gb18030 and EUC-JP are Python's codecs, which
differ from the WHATWG indexes in some characters.

Pure: no I/O, and nothing of pdi's but :mod:`pdi.errors`.
"""

from __future__ import annotations

import codecs
import functools
import re

from pdi._wording import clipped
from pdi.errors import UnsupportedError

# WHATWG encoding name -> Python codec.
_CODECS: dict[str, str] = {
    "UTF-8": "utf-8",
    "IBM866": "cp866",
    "ISO-8859-2": "iso8859_2",
    "ISO-8859-3": "iso8859_3",
    "ISO-8859-4": "iso8859_4",
    "ISO-8859-5": "iso8859_5",
    "ISO-8859-6": "iso8859_6",
    "ISO-8859-7": "iso8859_7",
    "ISO-8859-8": "iso8859_8",
    "ISO-8859-8-I": "iso8859_8",
    "ISO-8859-10": "iso8859_10",
    "ISO-8859-13": "iso8859_13",
    "ISO-8859-14": "iso8859_14",
    "ISO-8859-15": "iso8859_15",
    "ISO-8859-16": "iso8859_16",
    "KOI8-R": "koi8_r",
    "KOI8-U": "koi8_u",
    "macintosh": "mac_roman",
    "windows-874": "cp874",
    "windows-1250": "cp1250",
    "windows-1251": "cp1251",
    "windows-1252": "pdi-windows-1252",
    "windows-1253": "cp1253",
    "windows-1254": "cp1254",
    "windows-1255": "cp1255",
    "windows-1256": "cp1256",
    "windows-1257": "cp1257",
    "windows-1258": "cp1258",
    "x-mac-cyrillic": "mac_cyrillic",
    "GBK": "gb18030",
    "gb18030": "gb18030",
    "Big5": "big5hkscs",
    "EUC-JP": "euc_jp",
    "ISO-2022-JP": "iso2022_jp",
    "Shift_JIS": "cp932",
    "EUC-KR": "cp949",
    "UTF-16BE": "utf-16-be",
    "UTF-16LE": "utf-16-le",
}

# WHATWG Encoding Standard §4.2, the label table (labels are matched after trimming
# ASCII whitespace and lower-casing).
_LABELS_BY_NAME: dict[str, tuple[str, ...]] = {
    "UTF-8": ("unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8", "x-unicode20utf8"),
    "IBM866": ("866", "cp866", "csibm866", "ibm866"),
    "ISO-8859-2": ("csisolatin2", "iso-8859-2", "iso-ir-101", "iso8859-2", "iso88592", "iso_8859-2", "iso_8859-2:1987", "l2", "latin2"),
    "ISO-8859-3": ("csisolatin3", "iso-8859-3", "iso-ir-109", "iso8859-3", "iso88593", "iso_8859-3", "iso_8859-3:1988", "l3", "latin3"),
    "ISO-8859-4": ("csisolatin4", "iso-8859-4", "iso-ir-110", "iso8859-4", "iso88594", "iso_8859-4", "iso_8859-4:1988", "l4", "latin4"),
    "ISO-8859-5": ("csisolatincyrillic", "cyrillic", "iso-8859-5", "iso-ir-144", "iso8859-5", "iso88595", "iso_8859-5", "iso_8859-5:1988"),
    "ISO-8859-6": ("arabic", "asmo-708", "csiso88596e", "csiso88596i", "csisolatinarabic", "ecma-114", "iso-8859-6", "iso-8859-6-e", "iso-8859-6-i", "iso-ir-127", "iso8859-6", "iso88596", "iso_8859-6", "iso_8859-6:1987"),
    "ISO-8859-7": ("csisolatingreek", "ecma-118", "elot_928", "greek", "greek8", "iso-8859-7", "iso-ir-126", "iso8859-7", "iso88597", "iso_8859-7", "iso_8859-7:1987", "sun_eu_greek"),
    "ISO-8859-8": ("csiso88598e", "csisolatinhebrew", "hebrew", "iso-8859-8", "iso-8859-8-e", "iso-ir-138", "iso8859-8", "iso88598", "iso_8859-8", "iso_8859-8:1988", "visual"),
    "ISO-8859-8-I": ("csiso88598i", "iso-8859-8-i", "logical"),
    "ISO-8859-10": ("csisolatin6", "iso-8859-10", "iso-ir-157", "iso8859-10", "iso885910", "l6", "latin6"),
    "ISO-8859-13": ("iso-8859-13", "iso8859-13", "iso885913"),
    "ISO-8859-14": ("iso-8859-14", "iso8859-14", "iso885914"),
    "ISO-8859-15": ("csisolatin9", "iso-8859-15", "iso8859-15", "iso885915", "iso_8859-15", "l9"),
    "ISO-8859-16": ("iso-8859-16",),
    "KOI8-R": ("cskoi8r", "koi", "koi8", "koi8-r", "koi8_r"),
    "KOI8-U": ("koi8-ru", "koi8-u"),
    "macintosh": ("csmacintosh", "mac", "macintosh", "x-mac-roman"),
    "windows-874": ("dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620", "windows-874"),
    "windows-1250": ("cp1250", "windows-1250", "x-cp1250"),
    "windows-1251": ("cp1251", "windows-1251", "x-cp1251"),
    "windows-1252": ("ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1", "iso-ir-100", "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1", "us-ascii", "windows-1252", "x-cp1252"),
    "windows-1253": ("cp1253", "windows-1253", "x-cp1253"),
    "windows-1254": ("cp1254", "csisolatin5", "iso-8859-9", "iso-ir-148", "iso8859-9", "iso88599", "iso_8859-9", "iso_8859-9:1989", "l5", "latin5", "windows-1254", "x-cp1254"),
    "windows-1255": ("cp1255", "windows-1255", "x-cp1255"),
    "windows-1256": ("cp1256", "windows-1256", "x-cp1256"),
    "windows-1257": ("cp1257", "windows-1257", "x-cp1257"),
    "windows-1258": ("cp1258", "windows-1258", "x-cp1258"),
    "x-mac-cyrillic": ("x-mac-cyrillic", "x-mac-ukrainian"),
    "GBK": ("chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80", "gbk", "iso-ir-58", "x-gbk"),
    "gb18030": ("gb18030",),
    "Big5": ("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"),
    "EUC-JP": ("cseucpkdfmtjapanese", "euc-jp", "x-euc-jp"),
    "ISO-2022-JP": ("csiso2022jp", "iso-2022-jp"),
    "Shift_JIS": ("csshiftjis", "ms932", "ms_kanji", "shift-jis", "shift_jis", "sjis", "windows-31j", "x-sjis"),
    "EUC-KR": ("cseuckr", "csksc56011987", "euc-kr", "iso-ir-149", "korean", "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601", "ksc_5601", "windows-949"),
    "UTF-16BE": ("unicodefffe", "utf-16be"),
    "UTF-16LE": ("csunicode", "iso-10646-ucs-2", "ucs-2", "unicode", "unicodefeff", "utf-16", "utf-16le"),
    "x-user-defined": ("x-user-defined",),
}

LABELS: dict[str, str] = {label: name for name, labels in _LABELS_BY_NAME.items() for label in labels}
"""Every WHATWG label (lower case) and the encoding name it means."""

_WS = " \t\n\f\r"

# windows-1252 as the WHATWG index has it: cp1252 plus 0x81 0x8D 0x8F 0x90 0x9D -> C1.
_CP1252_EXTRA = {0x81: "\x81", 0x8D: "\x8d", 0x8F: "\x8f", 0x90: "\x90", 0x9D: "\x9d"}
_WINDOWS_1252_TABLE = "".join(
    _CP1252_EXTRA.get(b) or bytes([b]).decode("cp1252") for b in range(256)
)
_X_USER_DEFINED_TABLE = "".join(chr(b) if b < 0x80 else chr(0xF780 + b - 0x80) for b in range(256))


def lookup(label: str) -> str | None:
    """The WHATWG encoding name a label means (``None`` for an unknown label or ``replacement``).

    The label is matched in ASCII lower case (Encoding §4.2): ``str.lower`` also makes U+212A KELVIN SIGN a ``k``,
    and ``\u212aoi8-r`` was read as KOI8-R, a label no browser knows."""
    key = label.strip(_WS)
    return LABELS.get(key.lower()) if key.isascii() else None  # every label is ASCII


SINGLE_BYTE = frozenset(
    name
    for name in _CODECS
    if name.startswith(("ISO-8859-", "windows-", "KOI8-")) or name in ("IBM866", "macintosh", "x-mac-cyrillic")
)
"""The WHATWG single-byte encodings (each byte one character, ASCII below 0x80)."""

# Where Python's codec and the WHATWG index disagree: KOI8-U is KOI8-RU in the WHATWG
# index (0xAE and 0xBE are the Belarusian short U, where Python's koi8_u has box drawings);
# windows-1255's 0xCA is U+05BA HEBREW POINT HOLAM HASER FOR VAV there, undefined in cp1255.
_SINGLE_BYTE_FIXES: dict[str, dict[int, str]] = {
    "KOI8-U": {0xAE: "\u045e", 0xBE: "\u040e"},
    "windows-1255": {0xCA: "\u05ba"},
}


@functools.cache
def single_byte_table(name: str) -> str:
    """The 256 characters a WHATWG single-byte encoding gives for each byte (U+FFFD: none).

    Python's codec, except that a byte from 0x80 to 0x9F it leaves undefined is the C1
    control of the same number, as in the WHATWG indexes (windows-1250's 0x81 is U+0081),
    and the fixes of :data:`_SINGLE_BYTE_FIXES`.
    """
    if name == "windows-1252":
        return _WINDOWS_1252_TABLE
    if name not in SINGLE_BYTE:
        raise UnsupportedError(f"{name} is not a single-byte encoding")
    fixes = _SINGLE_BYTE_FIXES.get(name, {})
    chars: list[str] = []
    for b in range(256):
        ch = fixes.get(b) or codecs.decode(bytes([b]), _CODECS[name], "replace")
        if ch == "\ufffd" and 0x80 <= b <= 0x9F:
            ch = chr(b)
        chars.append(ch)
    return "".join(chars)


def _python_decode(data: bytes | memoryview, name: str) -> str:
    if isinstance(data, bytes) and data.isascii() and name != "x-user-defined" and name not in _ASCII_NOT_ASCII:
        return data.decode("ascii")  # the same characters, without a second copy
    if isinstance(data, memoryview) and (name in ("windows-1252", "x-user-defined") or name in SINGLE_BYTE):
        data = bytes(data)
    if name == "x-user-defined":
        assert isinstance(data, bytes)
        return data.decode("latin-1").translate(_X_USER_DEFINED_MAP)
    if name == "windows-1252" or name in SINGLE_BYTE:
        assert isinstance(data, bytes)
        return data.decode("latin-1").translate(_single_byte_map(name))
    return codecs.decode(data, _CODECS[name], "replace")


@functools.cache
def _single_byte_map(name: str) -> dict[int, str]:
    return {i: c for i, c in enumerate(single_byte_table(name)) if chr(i) != c}


# Encodings in which ASCII bytes may not mean ASCII characters (UTF-16's, and ISO-2022-JP's
# escape sequences): pure-ASCII bytes are decoded by their own codec.
_ASCII_NOT_ASCII = frozenset({"UTF-16LE", "UTF-16BE", "ISO-2022-JP"})


_X_USER_DEFINED_MAP = {i: c for i, c in enumerate(_X_USER_DEFINED_TABLE) if chr(i) != c}


def codec_name(encoding: str) -> str:
    """The Python codec that decodes a WHATWG encoding (``KeyError`` for one it has not)."""
    return _CODECS[encoding]


def decode(data: bytes, encoding: str) -> str:
    """Decode ``data`` with a WHATWG encoding name (malformed sequences become U+FFFD, as browsers do).

    A byte order mark matching the encoding is removed. An unknown name is an
    :class:`~pdi.errors.UnsupportedError` (use :func:`lookup` to turn a label into a name).
    """
    if encoding not in _CODECS and encoding != "x-user-defined":
        raise UnsupportedError(f"no decoder for encoding {encoding!r} (a WHATWG encoding name is needed)")
    if encoding == "UTF-8" and data.startswith(codecs.BOM_UTF8):
        return _python_decode(memoryview(data)[3:], encoding)  # no copy of the bytes
    if encoding == "UTF-16LE" and data.startswith(codecs.BOM_UTF16_LE):
        return _python_decode(memoryview(data)[2:], encoding)
    if encoding == "UTF-16BE" and data.startswith(codecs.BOM_UTF16_BE):
        return _python_decode(memoryview(data)[2:], encoding)
    return _python_decode(data, encoding)


def bom_encoding(data: bytes) -> str | None:
    """The encoding a byte order mark announces (Encoding §6.1, *BOM sniff*)."""
    if data.startswith(codecs.BOM_UTF8):
        return "UTF-8"
    if data.startswith(codecs.BOM_UTF16_BE):
        return "UTF-16BE"
    if data.startswith(codecs.BOM_UTF16_LE):
        return "UTF-16LE"
    return None


_META = re.compile(rb"<meta[\s/]", re.I)
_ATTR = re.compile(
    rb"""([^\s/>"'=][^\s/>=]*)\s*(?:=\s*("[^"]*"|'[^']*'|[^\s>]*))?""",
)
_CHARSET_IN_CONTENT = re.compile(rb"""charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;"']+))""", re.I)
_COMMENT = re.compile(rb"<!--.*?-->", re.S)


def meta_charset(data: bytes) -> str | None:
    """The WHATWG encoding the first declaring ``<meta>`` in the first 1024 bytes names.

    ``UTF-16LE``/``UTF-16BE`` from a ``<meta>`` mean UTF-8 and ``x-user-defined`` means
    windows-1252, as the prescan says (HTML §13.2.3.2). Comments are ignored.
    """
    head = _COMMENT.sub(b"", data[:1024])
    for m in _META.finditer(head):
        pos = m.end()
        end = head.find(b">", pos)
        tag = head[pos : end if end >= 0 else len(head)]
        attrs: dict[bytes, bytes] = {}
        for a in _ATTR.finditer(tag):
            name = a.group(1).lower()
            value = a.group(2) or b""
            if value[:1] in (b'"', b"'"):
                value = value[1:-1]
            attrs.setdefault(name, value)
        label: bytes | None = None
        if b"charset" in attrs:
            label = attrs[b"charset"]
        elif attrs.get(b"http-equiv", b"").lower() == b"content-type" and b"content" in attrs:
            c = _CHARSET_IN_CONTENT.search(attrs[b"content"])
            if c:
                label = c.group(1) or c.group(2) or c.group(3)
        if label is None:
            continue
        name = lookup(label.decode("latin-1"))
        if name is None:
            continue
        if name in ("UTF-16LE", "UTF-16BE"):
            return "UTF-8"
        if name == "x-user-defined":
            return "windows-1252"
        return name
    return None


_CSS_CHARSET = re.compile(rb'@charset "([^"]*)";')


def css_charset(data: bytes) -> str | None:
    """The encoding a CSS ``@charset "…";`` rule at the very start names (CSS Syntax §3.2)."""
    m = _CSS_CHARSET.match(data[:1024])
    if not m:
        return None
    name = lookup(m.group(1).decode("latin-1"))
    if name in ("UTF-16LE", "UTF-16BE"):
        return "UTF-8"
    return name


def sniff(data: bytes, *, declared: str | None, media_type: str) -> tuple[str, str, str | None]:
    """Pick the encoding of a text part.

    Returns ``(encoding, source, warning)``: the WHATWG encoding name, where it came
    from (``"bom"``, ``"charset"``, ``"meta"``, ``"@charset"``, ``"utf-8"``, ``"default"``),
    and a warning when a declared label was unknown or the last-resort default applied.
    """
    warning: str | None = None
    bom = bom_encoding(data)
    if bom:
        return bom, "bom", None
    if declared is not None:
        name = lookup(declared)
        if name is not None and name != "x-user-defined":
            return name, "charset", None
        if name == "x-user-defined":
            return name, "charset", None
        warning = f"unknown charset label '{clipped(declared)}' ignored"
    if media_type in ("text/html", "application/xhtml+xml"):
        name = meta_charset(data)
        if name:
            return name, "meta", warning
    elif media_type == "text/css":
        name = css_charset(data)
        if name:
            return name, "@charset", warning
    if not _is_utf8(data):
        note = "no charset declared and not UTF-8: decoded as windows-1252"
        return "windows-1252", "default", f"{warning}; {note}" if warning else note
    return "UTF-8", "utf-8", warning


def _is_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8, decoded 1 MiB at a time (the whole text is not made)."""
    if data.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    step = 1 << 20
    with memoryview(data) as view:
        try:
            for i in range(0, len(data), step):
                decoder.decode(view[i : i + step])
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return False
    return True


#: The entry points under the names :mod:`pdi.charsets` gives them (they say they are WHATWG's).
sniff_encoding = sniff
whatwg_encoding = lookup
whatwg_decode = decode
