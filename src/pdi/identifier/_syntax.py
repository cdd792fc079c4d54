"""Characters, escapes, limits and country codes of the PDI grammar (PDI-GRAMMAR.md §1)."""

from __future__ import annotations

import re
from typing import Union
from urllib.parse import unquote_to_bytes

from pdi._grammar import ESCAPE_RE, UNIQUE_SAFE, escape
from pdi._wording import clipped
from pdi.errors import LimitError, ParseError

#: A fragment position: ``int`` (digits), ``str`` (a %-decoded element name),
#: ``tuple[int, int]`` (an ``(x,y)`` coordinate) or ``tuple[str, ...]`` (an
#: extension position). An extension position of exactly two digit-only items
#: is written like a coordinate and is read back as one.
Position = Union[int, str, tuple[int, int], tuple[str, ...]]  # noqa: UP007

#: The fragment schemes the draft defines (line 176), plus ``line``
#: (PDI-GRAMMAR.md §3, an extension scheme that pdi defines for text).
FRAGMENT_SCHEMES = frozenset({"char", "elt", "name", "rect", "msec", "sec", "crop", "byte", "line"})

#: ISO 3166-1 alpha-2 codes, lower case. Source: Debian's iso-codes 4.15.0
#: (``/usr/share/iso-codes/json/iso_3166-1.json``), 249 codes.
_ISO_3166_TEXT = """
    ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bl bm bn bo bq br
    bs bt bv bw by bz ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz
    ec ee eg eh er es et fi fj fk fm fo fr ga gb gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw
    gy hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo jp ke kg kh ki km kn kp kr kw ky
    kz la lb lc li lk lr ls lt lu lv ly ma mc md me mf mg mh mk ml mm mn mo mp mq mr ms mt mu mv
    mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps pt pw py
    qa re ro rs ru rw sa sb sc sd se sg sh si sj sk sl sm sn so sr ss st sv sx sy sz tc td tf tg
    th tj tk tl tm tn to tr tt tv tw tz ua ug um us uy uz va vc ve vg vi vn vu wf ws ye yt za zm
    zw
"""
ISO_3166_ALPHA2 = frozenset(_ISO_3166_TEXT.split())

#: Codes written for a country that are not its ISO 3166-1 alpha-2 code, and the code that is: country-code
#: top-level domains and ISO 3166's exceptionally or transitionally reserved codes (uk: GB's domain).
COUNTRY_CODE_FOR = {"uk": "gb", "el": "gr", "tp": "tl", "yu": "rs", "zr": "cd", "fx": "fr"}

# Longest digit run read as a number (positions, serials, versions): beyond it
# a number is no use and Python's int() would refuse it anyway.
_MAX_DIGITS = 100
# Deepest nesting of citations (a citation cites a PDI that may cite another).
_MAX_DEPTH = 16
# Longest identifier read at all.
_MAX_LENGTH = 1 << 20

_RESERVED = "%.,/#*@=?+"  # line 217
_NAME_SAFE = UNIQUE_SAFE - {"(", ")"}  # an element name never starts a parenthesised position

_COMPONENT_RE = re.compile(r"[A-Za-z0-9-]+")
_COUNTRY_RE = re.compile(r"[A-Za-z]{2,}")
_UNIQUE_ID_RE = re.compile(r"(?:[A-Za-z0-9()\-:;$_!']|%[0-9A-Fa-f]{2})+")
_NAME_RE = re.compile(r"(?:[A-Za-z0-9\-:;$_!']|%[0-9A-Fa-f]{2})+")
_SCHEME_RE = re.compile(r"([A-Za-z-]+)=")
_SPEC_ITEM_RE = re.compile(r"[A-Za-z0-9]+")

_Warning = tuple[str, int | None, str]  # message, offset, rule


def _percent_decode(raw: str, *, text: str, offset: int, rule: str) -> str:
    """%-decode ``raw`` (already checked: ASCII with well-formed escapes) as UTF-8."""
    if "%" not in raw:
        return raw
    try:
        return unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        # at the escape of the first octet that is not UTF-8: each escape one octet, each other character one
        at = octets = 0
        while octets < exc.start:
            at += 3 if raw[at] == "%" else 1
            octets += 1
        raise ParseError(
            f"the %-escapes of '{clipped(raw)}' are not UTF-8 (from {raw[at:at + 3]!r} on)",
            text=text,
            offset=offset + at,
            rule=rule,
        ) from exc


def spells_serial(unique_id: str) -> bool:
    """Whether a unique id is written as a daily serial number: digits, no leading zero.

    ``daily-serial-number = 1*digit`` (line 150); serials start at 1 and leading
    zeros are never minted (PDI-GRAMMAR.md §2.5), so ``007`` and ``0`` are
    encapsulated (foreign) ids. The parser reads the id as written with this
    rule; the archive, which keys a document by its %-decoded id, reads the
    decoded id with it, so that ``%31`` (a foreign id decoding to ``1``) never
    takes serial 1's place.
    """
    return unique_id.isdigit() and unique_id.isascii() and unique_id[0] != "0"


def escape_unique_id(foreign_id: str) -> str:
    """The unique-id text for a foreign identifier (draft §2.4.1, line 367).

    Every character outside ``alpha / digit / other`` (line 154) is %-escaped
    as UTF-8 with upper-case hex, reserved characters (line 217) included. An
    all-digit foreign id that would read as a daily serial number (no leading
    zero) has its first digit escaped (``%31234``), so that it is never read
    back as one; one with a leading zero (``0306406152``) is not a serial and
    stays as it is.
    """
    if not isinstance(foreign_id, str) or not foreign_id:
        raise ParseError("a foreign id must be a non-empty string", rule="encapsulated-unique-id")
    escaped = escape(foreign_id, UNIQUE_SAFE)
    if spells_serial(escaped):
        escaped = f"%{ord(escaped[0]):02X}" + escaped[1:]
    return escaped


def _escape_name(name: str, *, digits_ok: bool) -> str:
    escaped = escape(name, _NAME_SAFE)
    if not digits_ok and escaped.isdigit() and escaped.isascii():
        escaped = f"%{ord(escaped[0]):02X}" + escaped[1:]
    return escaped


def _number(raw: str, *, text: str, offset: int, rule: str) -> int:
    if len(raw) > _MAX_DIGITS:
        raise LimitError(
            f"number of {len(raw)} digits at offset {offset} (rule {rule}) is longer than "
            f"{_MAX_DIGITS} digits"
        )
    return int(raw)


def _fail(message: str, text: str, offset: int | None, rule: str) -> ParseError:
    return ParseError(message, text=text, offset=offset, rule=rule)


def _unescaped(raw: str, bad: int, where: str) -> str:
    """Why the reserved character at ``raw[bad]`` is refused in ``where``: it must be %-escaped; a ``%`` not followed
    by two hex digits is a broken %-escape, said so."""
    ch = raw[bad]
    if ch == "%":
        return f"{raw[bad:bad + 3]!r} in {where} is not a %-escape: '%' and two hex digits ('%25' is a '%' itself)"
    return f"reserved character {ch!r} in {where} must be %-escaped ({escape(ch, UNIQUE_SAFE)})"


def _first_bad(raw: str, safe: frozenset[str]) -> int:
    """Offset of the first character of ``raw`` that is neither in ``safe`` nor a %-escape."""
    i = 0
    n = len(raw)
    while i < n:
        ch = raw[i]
        if ch == "%":
            if ESCAPE_RE.match(raw, i):
                i += 3
                continue
            return i
        if ch not in safe:
            return i
        i += 1
    return 0
