"""Charset names: the IANA Character Sets registry, and the Python codec of each charset.

RFC 2978 §2 (and RFC 5147 §2.3, which compares "the same charset"): a charset
has one registered name and any number of aliases, none of which is
preferred over another for comparison, and "no distinction is made between
use of upper and lower case letters" (the registry's own note). The registry
is shipped as ``pdi/data/character-sets.xml``, IANA's file as published (its
``<updated>`` element says which edition; docs/reference/identifiers.md names its source), never
what the local Python happens to know.

* :func:`lookup` finds the registered charset a label names: its name, its
  preferred MIME name or any alias, the ``cs…`` ones included (``csUTF8``,
  ``MS_Kanji``, ``Extended_UNIX_Code_Packed_Format_for_Japanese``,
  ``ISO_8859-1:1987``, ``l1``, ``IBM819``).
* Each registered charset is decoded with the Python codec that one of its
  own labels names in Python's codec registry (its preferred MIME name, then
  its name, then its aliases, the first that Python knows), or, for the few
  Python spells differently, the codec of :data:`CODEC_TABLE`. Registry
  first: ``MS_Kanji`` is an alias of Shift_JIS, so it is decoded as
  Shift_JIS, although Python's own alias ``ms_kanji`` means cp932.
* A label the registry does not know is still a charset when Python's codec
  registry resolves it to a *text* encoding (``latin-1``, ``utf8``,
  ``sjis``, ``mac-cyrillic``), and then it is the same charset as the
  registered charset decoded by that codec, if there is one. Codecs that are
  not charsets are refused (:class:`~pdi.errors.UnsupportedError`): the
  binary transforms Python itself flags (``zlib_codec``, ``base64``,
  ``rot13``) and the Python-specific text codecs of :data:`NOT_CHARSETS`
  (``punycode``, ``idna``, ``unicode_escape`` …).

Pure: the only input is the package's own data file, read once.
"""

from __future__ import annotations

import codecs
import encodings
import encodings.aliases
import functools
import re
import threading
from typing import TYPE_CHECKING, Final

from pdi._wording import clipped
from pdi.errors import UnsupportedError

if TYPE_CHECKING:
    from dataclasses import dataclass
else:
    from pdi._later import dataclass

__all__ = [
    "CODEC_TABLE",
    "NOT_CHARSETS",
    "Charset",
    "byte_order",
    "codec_for",
    "iana_name",
    "lookup",
    "near_charsets",
    "registry",
    "registry_updated",
    "same_charset",
]

_NS: Final = "{http://www.iana.org/assignments}"

#: Registered charsets (by registry name) whose Python codec none of their
#: labels names. Each is the same octet-to-character mapping: Windows-31J is
#: Microsoft's code page 932; windows-874 is code page 874; IBM00858 and
#: IBM01140 are code pages 850 and 037 with the euro sign, Python's cp858 and
#: cp1140; ISO-8859-6-E/-I and ISO-8859-8-E/-I (RFC 1556) are ISO-8859-6 and
#: ISO-8859-8 with the direction of the text made explicit or implicit, the
#: octets mean the same characters.
CODEC_TABLE: Final[dict[str, str]] = {
    "Windows-31J": "cp932",
    "windows-874": "cp874",
    "IBM00858": "cp858",
    "IBM01140": "cp1140",
    "ISO_8859-6-E": "iso8859-6",
    "ISO_8859-6-I": "iso8859-6",
    "ISO_8859-8-E": "iso8859-8",
    "ISO_8859-8-I": "iso8859-8",
}

#: Python text codecs (their canonical names) that are not charsets: IDNA and
#: Punycode encode domain names, the escape codecs Python string literals,
#: ``undefined`` refuses everything, ``charmap`` needs a table, and ``mbcs``
#: and ``oem`` are the Windows code page of the moment (Python's "Python
#: Specific Encodings", less ``palmos``, which is a real 8-bit charset).
NOT_CHARSETS: Final = frozenset(
    {"idna", "punycode", "raw-unicode-escape", "unicode-escape", "undefined", "charmap", "mbcs", "oem"}
)


@dataclass(frozen=True)
class Charset:
    """One charset of the IANA registry.

    ``name`` is the registered name, ``preferred`` the preferred MIME name
    (``None`` where the registry gives none: then the name is the one to
    use), ``aliases`` the aliases in registry order, ``mibenum`` the
    registry's number, ``codec`` the Python codec that decodes it (``None``
    where Python has none).
    """

    name: str
    mibenum: int
    preferred: str | None
    aliases: tuple[str, ...]

    @functools.cached_property
    def codec(self) -> str | None:
        """The Python codec that decodes the charset (looked up once, when first asked)."""
        if self.name in CODEC_TABLE:
            return _python_codec(CODEC_TABLE[self.name])
        for label in (self.preferred, self.name, *self.aliases):
            if label and _stdlib_may_know(label):
                codec = _python_codec(label)
                if codec is not None:
                    return codec
        return None

    @property
    def mime_name(self) -> str:
        """The name to write in a ``charset=`` parameter: the preferred MIME name, else the name."""
        return self.preferred or self.name

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label of the charset: its name, its preferred MIME name and its aliases (no repeats)."""
        out: list[str] = []
        for label in (self.name, self.preferred, *self.aliases):
            if label is not None and label.lower() not in (x.lower() for x in out):
                out.append(label)
        return tuple(out)


@functools.cache
def _stdlib_names() -> frozenset[str]:
    """Every name the standard ``encodings`` package answers to: its modules and its aliases."""
    import pkgutil

    modules = {m.name for m in pkgutil.iter_modules(encodings.__path__)}
    return frozenset(modules | set(encodings.aliases.aliases) | set(encodings.aliases.aliases.values()))


def _stdlib_may_know(label: str) -> bool:
    """False when the standard ``encodings`` package surely has no codec for ``label``.

    Only to spare the registry's hundreds of labels Python does not know a
    failed import each: the answer for a label that passes is ``codecs.lookup``'s.
    """
    norm = encodings.normalize_encoding(label.lower())
    names = _stdlib_names()
    return norm in names or norm.replace(".", "_") in names


def _python_codec(label: str) -> str | None:
    """The canonical name of the Python *charset* codec ``label`` names, else ``None``."""
    try:
        info = codecs.lookup(label)
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in NOT_CHARSETS:
        return None
    return info.name


class _Registry:
    def __init__(self, xml: bytes) -> None:
        # the registry is read when first asked for, and then only
        from xml.etree import ElementTree

        root = ElementTree.fromstring(xml)
        self.updated = (root.findtext(f"{_NS}updated") or "").strip()
        charsets: list[Charset] = []
        for record in root.iter(f"{_NS}record"):
            name = (record.findtext(f"{_NS}name") or "").strip()
            value = (record.findtext(f"{_NS}value") or "").strip()
            if not name or not value.isdigit():
                continue  # not a charset record (there is none such in the file)
            preferred = (record.findtext(f"{_NS}preferred_alias") or "").strip() or None
            aliases = tuple(a.text.strip() for a in record.iter(f"{_NS}alias") if a.text and a.text.strip())
            charsets.append(Charset(name, int(value), preferred, aliases))
        self.charsets = tuple(charsets)
        self.by_label: dict[str, Charset] = {}
        for cs in self.charsets:
            for label in cs.labels:
                self.by_label.setdefault(label.lower(), cs)
        self._by_codec: dict[str, Charset] | None = None

    @property
    def by_codec(self) -> dict[str, Charset]:
        """For each codec, the registered charset it stands for (made when first asked: it imports every codec).

        One whose own name or preferred MIME name names the codec, then one with
        a preferred MIME name, then the lowest MIBenum (gb2312: GB2312, not
        GB_2312-80; euc_kr: EUC-KR, not KS_C_5601-1987).
        """
        if self._by_codec is None:

            def rank(cs: Charset) -> tuple[bool, bool, int]:
                own = (x for x in (cs.name, cs.preferred) if x and _stdlib_may_know(x))
                return (not any(_python_codec(x) == cs.codec for x in own), cs.preferred is None, cs.mibenum)

            by_codec: dict[str, Charset] = {}
            for cs in sorted(self.charsets, key=rank):
                if cs.codec is not None:
                    by_codec.setdefault(cs.codec, cs)
            self._by_codec = by_codec
        return self._by_codec


#: The labels nearly every text is deposited with, and the codec the registry names for each: answered
#: without reading the registry, which takes 100-150 ms to parse (a first ``#char=`` in a process paid it).
#: tests/test_charsets.py checks each against the registry.
_COMMON: Final[dict[str, str]] = {
    "utf-8": "utf-8", "us-ascii": "ascii", "iso-8859-1": "iso8859-1", "windows-1252": "cp1252",
    "utf-16": "utf-16", "utf-16le": "utf-16-le", "utf-16be": "utf-16-be", "utf-32": "utf-32",
}

_REGISTRY_LOCK = threading.Lock()


@functools.cache
def _registry() -> _Registry:
    """The registry, read once: threads that ask for it first at once (an import's staging threads) wait for one."""
    with _REGISTRY_LOCK:
        return _read_registry()


@functools.cache
def _read_registry() -> _Registry:
    from importlib import resources

    data = resources.files("pdi").joinpath("data/character-sets.xml").read_bytes()
    return _Registry(data)


def registry() -> tuple[Charset, ...]:
    """Every charset of the shipped IANA registry, in registry order."""
    return _registry().charsets


def registry_updated() -> str:
    """The date of the shipped edition of the registry (its ``<updated>`` element)."""
    return _registry().updated


#: The white space a label may come with (ASCII's): ``str.strip`` also strips U+00A0, U+3000 and the controls 1C-1F,
#: and ``"utf-8\\xa0"`` was UTF-8.
_ASCII_WS: Final = " \t\n\r\f\v"


#: A label Python's codec registry may be asked for: the characters of its codecs' names and aliases.
_PYTHON_LABEL: Final = re.compile(r"[a-z0-9._-]+")


def _key(label: object) -> str | None:
    if not isinstance(label, str):
        return None
    key = label.strip(_ASCII_WS)
    if not key or not key.isascii() or "\x00" in key:  # Python's codec look-up refuses a NUL (ValueError)
        return None
    return key.lower()


def lookup(label: str) -> Charset | None:
    """The registered charset ``label`` names (any name or alias, any case), else ``None``."""
    key = _key(label)
    return None if key is None else _registry().by_label.get(key)


def codec_for(label: str) -> str:
    """The canonical name of the Python codec that decodes the charset ``label`` names.

    The IANA registry first (``MS_Kanji`` → ``shift_jis``), then Python's
    codec registry (``latin-1`` → ``iso8859-1``). Raises
    :class:`UnsupportedError`, naming the label, for a label that is neither
    a registered charset with a decoder nor a Python text codec that is a
    charset (``klingon``, ``zlib_codec``, ``punycode``).
    """
    key = _key(label)
    if key is None:
        raise UnsupportedError(f"not a charset name: {label!r}")
    if (common := _COMMON.get(key)) is not None:
        return common
    cs = _registry().by_label.get(key)
    if cs is not None:
        if cs.codec is None:
            raise UnsupportedError(f"charset {label!r} ({cs.mime_name} in the IANA registry) has no decoder here")
        return cs.codec
    # Python's codec registry makes every run of other characters one "_" (encodings.normalize_encoding): "utf 8",
    # "utf-8,", "\x1cutf-8" and "utf!!8" were UTF-8. Its own names are spelled with these characters only
    codec = _python_codec(key) if _PYTHON_LABEL.fullmatch(key) else None
    if codec is None:
        try:
            if not _PYTHON_LABEL.fullmatch(key):
                raise LookupError(key)
            codecs.lookup(key)
        except LookupError:
            raise UnsupportedError(f"unknown charset '{clipped(label)}': neither in the IANA registry nor a codec"
                                   + _meant(near_charsets(label))) from None
        raise UnsupportedError(
            f"{label!r} is not a charset: Python's codec of that name does not encode text in a character set"
        )
    return codec


#: The longest label :func:`near_charsets` looks for names near: a longer text is no charset's name misspelt, and
#: ``difflib`` takes time as the product of the lengths it compares.
_NEAR_MOST: Final = 40


def near_charsets(label: str) -> list[str]:
    """Up to three names of charsets pdi decodes whose labels are near ``label`` (``difflib.get_close_matches``,
    its ratio 0.6 or more, any case), nearest first, one name a charset: ``utf8x`` → ``UTF-8``. A charset of the
    registry is named by its preferred MIME name (else its name), whichever of its labels was near; a Python charset
    codec the registry has no charset for, by the codec's name. Nothing for a label past :data:`_NEAR_MOST`
    characters, or beyond ASCII (no label is)."""
    import difflib  # on a refusal only: it imports heapq, which a plain read never needs (pdi.cli.FAST_GET_DEFERRED)

    key = _key(label)
    if key is None or len(key) > _NEAR_MOST:
        return []
    table = _near_table()
    named: list[str] = []
    for near in difflib.get_close_matches(key, list(table), n=12, cutoff=0.6):
        if table[near] not in named:
            named.append(table[near])
    return named[:3]


@functools.cache
def _near_table() -> dict[str, str]:
    """Every label :func:`codec_for` reads as a charset (lower-case), and the name :func:`near_charsets` gives it."""
    registry = _registry()
    table: dict[str, str] = {}
    for cs in registry.charsets:
        if cs.codec is not None:
            for label in cs.labels:
                table.setdefault(label.lower(), cs.mime_name)
    for name in sorted(_stdlib_names()):
        key = name.lower()
        codec = None if key in table else _python_codec(key)
        if codec is not None:
            known = registry.by_codec.get(codec)
            table[key] = codec if known is None else known.mime_name
    return table


def _meant(near: list[str]) -> str:
    """``"; did you mean 'a', 'b' or 'c'?"`` for the ``near`` names, or nothing when there are none."""
    if not near:
        return ""
    shown = [repr(n) for n in near]
    return "; did you mean " + (", ".join(shown[:-1]) + " or " if len(shown) > 1 else "") + shown[-1] + "?"


def byte_order(codec: str, head: bytes | bytearray) -> str:
    """``codec`` for octets that start with ``head``, its byte order made the RFCs' where no byte order mark says it.

    RFC 2781 §4.3: UTF-16 text without a BOM "SHOULD be interpreted as being big-endian" (and UTF-32's likewise,
    Unicode §3.10, D99), where Python's ``utf-16`` and ``utf-32`` read the machine's order (little-endian here). So
    ``utf-16`` without a BOM is ``utf-16-be``; with one, or any other codec, ``codec`` as it is (Python's
    ``utf-16`` reads the BOM and leaves it out)."""
    if codec == "utf-16" and not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16-be"
    if codec == "utf-32" and not head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32-be"
    return codec


def iana_name(label: str) -> str | None:
    """The registered MIME name of the charset ``label`` names, else ``None``.

    ``csUTF8`` → ``UTF-8``, ``l1`` → ``ISO-8859-1``, Python's ``latin-1`` →
    ``ISO-8859-1``, ``cp1252`` → ``windows-1252``, ``MS_Kanji`` → ``Shift_JIS``;
    ``None`` for a text codec the registry lacks (``mac-cyrillic``). Raises
    :class:`UnsupportedError` as :func:`codec_for` does for a label that is
    neither registered nor a charset codec.
    """
    cs = lookup(label)
    if cs is not None:
        return cs.mime_name
    codec = codec_for(label)
    found = _registry().by_codec.get("utf-8" if codec == "utf-8-sig" else codec)
    return None if found is None else found.mime_name


def same_charset(a: str, b: str) -> bool:
    """True when two labels name the same charset (RFC 5147 §2.3).

    Two registered labels are the same charset when they name the same
    registration (``csUTF8`` and ``utf-8``; ``MS_Kanji`` and ``Shift_JIS``,
    but not ``Windows-31J``). A label only Python knows (``utf8``,
    ``iso8859-1``, a codec's own name) is the same charset as any label
    decoded by the same codec. Two labels neither the registry nor Python
    knows are the same only when they are spelled the same, ignoring case.
    """
    ka, kb = _key(a), _key(b)
    if ka is None or kb is None:
        return False
    reg = _registry()
    ra, rb = reg.by_label.get(ka), reg.by_label.get(kb)
    if ra is not None and rb is not None:
        return ra is rb
    ca, cb = _soft_codec(ka), _soft_codec(kb)
    if ca is None or cb is None:
        return ca is None and cb is None and ka == kb
    return ca == cb


def _soft_codec(key: str) -> str | None:
    try:
        codec = codec_for(key)
    except UnsupportedError:
        return None
    return "utf-8" if codec == "utf-8-sig" else codec
