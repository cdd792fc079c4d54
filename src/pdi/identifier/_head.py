"""The resource identifier of a PDI read from its text: series, date, unique id, format and version (a ``_Head``).

Two readers give the same ``_Head``: :func:`_fast_head`, one regular expression for the canonical spelling of
most names, and :func:`_slow_head`, a reading part by part that names the rule and offset of whatever is wrong
and collects the lenient readings as warnings. :func:`pdi.identifier._pdi._parse_pdi` reads the fragment or
citation after it and makes the :class:`~pdi.identifier.PDI`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from pdi import formats
from pdi._grammar import TOKEN_PATTERN, TOKEN_SAFE, UNIQUE_SAFE
from pdi._wording import clipped
from pdi.identifier._syntax import (
    _COMPONENT_RE,
    _COUNTRY_RE,
    _RESERVED,
    _UNIQUE_ID_RE,
    _fail,
    _first_bad,
    _number,
    _percent_decode,
    _unescaped,
    _Warning,
    spells_serial,
)


def _days_in(year: int | None, month: int | None) -> int:
    if month is None:
        return 31
    if month == 2:
        if year is None:
            return 29
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _date_part(raw: str, text: str, at: int, rule: str, warnings: list[_Warning]) -> int | None:
    if raw == "*":
        return None
    if not raw:
        raise _fail(f"the {rule} is missing", text, at, rule)
    if not (raw.isdigit() and raw.isascii()):
        bad = next(i for i, c in enumerate(raw) if not ("0" <= c <= "9"))
        raise _fail(
            f"invalid character {raw[bad]!r} in the {rule}: digits or '*' only",
            text,
            at + bad,
            rule,
        )
    if rule == "year":
        if len(raw) != 4:
            raise _fail(f"the year is four digits, not '{clipped(raw)}'", text, at, rule)
        value = int(raw)
        if value == 0:
            raise _fail("year 0000 is not a calendar year", text, at, rule)
        return value
    if len(raw) == 1:
        warnings.append((f"one-digit {rule} {raw!r} read as {int(raw):02d} (§2.4)", at, rule))
    elif len(raw) != 2:
        raise _fail(f"the {rule} is two digits, not '{clipped(raw)}'", text, at, rule)
    return int(raw)


class _Head(NamedTuple):
    """The resource identifier (line 129) as the fast or the slow head reads it.

    What the parts say together (country, a foreign id without format), what
    follows (a fragment or a citation) and the :class:`PDI` itself are the
    shared tail's (:func:`_parse_pdi`). The heads make it with
    ``_Head.__new__(_Head, name=…)``: by keyword, without the class call, which
    would first pack the keywords into a dict (a tenth of a short PDI's parse).
    """

    series: tuple[str, ...]  # components as written, the country last (lines 131-135)
    series_end: int  # offset of the '/' after the series
    year: int | None  # None: the wildcard (lines 137-143)
    month: int | None
    day: int | None
    unique_id_raw: str  # as written, "*" for the wildcard (line 147)
    unique_id: str  # %-decoded (line 154)
    serial: int | None  # the daily serial number, if the id spells one (line 150)
    unique_id_at: int  # offset of the unique id
    format: str | None  # the token as written (line 156)
    version: int | None  # None when omitted or the wildcard (line 162)
    version_wildcard: bool
    end: int  # offset where the resource identifier ends: '#', '@' or the end


def _read_unique_id(raw: str, text: str, at: int) -> tuple[str, int | None]:
    """A well-formed unique id (or ``*``), %-decoded, and its daily serial number if any.

    Lines 147-154: a daily serial is spelled as :func:`spells_serial` says;
    anything else is an encapsulated id, decoded as UTF-8.
    """
    if raw == "*":
        return raw, None
    unique_id = _percent_decode(raw, text=text, offset=at, rule="unique-id") if "%" in raw else raw
    if spells_serial(raw):
        return unique_id, _number(raw, text=text, offset=at, rule="daily-serial-number")
    return unique_id, None


def _slow_head(text: str, start: int, end: int, warnings: list[_Warning]) -> _Head:
    """The resource identifier (lines 129-164), rule by rule, with an exact error for any input."""
    pos = _after_scheme(text, start)
    # The resource identifier runs to the first '#' or '@' (both reserved, line 217).
    hash_at = text.find("#", pos, end)
    at_at = text.find("@", pos, end)
    if hash_at < 0:
        ri_end = at_at if at_at >= 0 else end
    elif at_at < 0:
        ri_end = hash_at
    else:
        ri_end = min(hash_at, at_at)
    comps, slash = _slow_series(text, pos, ri_end)
    year, month, day, spec_start = _slow_date(text, slash + 1, ri_end, warnings)
    spec = text[spec_start:ri_end]
    parts = _specifier_parts(spec, text, spec_start)
    uid_raw = parts[0]
    unique_id, serial = _read_unique_id(uid_raw, text, spec_start)
    fmt: str | None = None
    version: int | None = None
    version_wildcard = False
    fmt_at = spec_start + len(uid_raw) + 1
    if len(parts) >= 2:
        fmt = parts[1]
        _check_format(fmt, text, fmt_at)
    if len(parts) == 3:
        v_raw = parts[2]
        version_wildcard = v_raw == "*"
        if not version_wildcard:
            version = _slow_version(v_raw, text, fmt_at + len(parts[1]) + 1, warnings)
    return _Head.__new__(
        _Head,
        series=tuple(comps), series_end=slash,
        year=year, month=month, day=day,
        unique_id_raw=uid_raw, unique_id=unique_id, serial=serial, unique_id_at=spec_start,
        format=fmt, version=version, version_wildcard=version_wildcard, end=ri_end,
    )


def _after_scheme(text: str, start: int) -> int:
    """Where the document series starts, after ``urn:pdi://`` or ``pdi://`` (lines 129-131)."""
    pos = start
    head = text[pos : pos + 4].lower()
    if head == "urn:":
        pos += 4
        head = text[pos : pos + 4].lower()
    if head != "pdi:":
        raise _fail("expected 'urn:pdi:' or 'pdi:'", text, pos, "pdi")
    pos += 4
    if text[pos : pos + 2] != "//":
        raise _fail("expected '//' before the document series", text, pos, "resource-identifier")
    return pos + 2


def _slow_series(text: str, pos: int, ri_end: int) -> tuple[list[str], int]:
    """The document series' components (lines 133-136) and the offset of the ``/`` after it."""
    slash = text.find("/", pos, ri_end)
    if slash < 0:
        raise _fail(
            "expected '/' and the date after the document series",
            text,
            ri_end,
            "resource-identifier",
        )
    series_text = text[pos:slash]
    if not series_text:
        raise _fail("the document series is missing", text, pos, "document-series")
    comps = series_text.split(".")
    at = pos
    for comp in comps:
        if not comp or not (_COMPONENT_RE.fullmatch(comp) and comp.isascii()):
            bad = next(
                (i for i, c in enumerate(comp) if not (c.isascii() and (c.isalnum() or c == "-"))),
                0,
            )
            what = (
                "empty component"
                if not comp
                else f"invalid character {comp[bad]!r} in a series component"
            )
            raise _fail(f"{what}: letters, digits and '-' only", text, at + bad, "component")
        at += len(comp) + 1
    if len(comps) < 2:
        raise _fail(
            "the document series needs a component and a country code ('name.cc')",
            text,
            slash,
            "document-series",
        )
    country = comps[-1]
    country_at = slash - len(country)
    if not (_COUNTRY_RE.fullmatch(country) and country.isascii()):
        raise _fail(
            f"the last series component '{clipped(country)}' must be a country code (2*alpha)",
            text,
            country_at,
            "iso-country",
        )
    return comps, slash


def _slow_date(
    text: str, at: int, ri_end: int, warnings: list[_Warning]
) -> tuple[int | None, int | None, int | None, int]:
    """The iso-date from ``at`` (lines 137-145): year, month, day, and where the specifier starts."""
    fields: list[tuple[str, int]] = []
    while len(fields) < 3:
        nxt = text.find("/", at, ri_end)
        if nxt < 0:
            rule = ("year", "month", "day")[len(fields)]
            seg = text[at:ri_end]
            if rule == "day" or (rule == "month" and "." in seg):
                # pdi://oma.eop.gov/1997/09/01.html.1 (draft lines 437-448).
                raise _fail(
                    "the unique id is missing: expected '/' and a unique id after the "
                    'day (line 129: "//" document-series "/" iso-date "/" specifier)',
                    text,
                    at + len(seg.split(".", 1)[0]),
                    "resource-identifier",
                )
            raise _fail(
                f"the date is incomplete: expected '/' after the {rule}",
                text,
                ri_end,
                "iso-date",
            )
        fields.append((text[at:nxt], at))
        at = nxt + 1
    year = _date_part(fields[0][0], text, fields[0][1], "year", warnings)
    month = _date_part(fields[1][0], text, fields[1][1], "month", warnings)
    day = _date_part(fields[2][0], text, fields[2][1], "day", warnings)
    if month is not None and not 1 <= month <= 12:
        raise _fail(f"month {month:02d} is not 01-12", text, fields[1][1], "month")
    if day is not None and not 1 <= day <= _days_in(year, month):
        raise _fail(
            f"day {day:02d} is not a day of "
            + (
                f"{year:04d}-{month:02d}" if year is not None and month is not None else "the month"
            ),
            text,
            fields[2][1],
            "day",
        )
    return year, month, day, at


def _specifier_parts(spec: str, text: str, spec_start: int) -> list[str]:
    """The specifier (lines 146-164) cut at its dots: a well-formed unique id, then the format and version as written."""
    slash_in_spec = spec.find("/")
    if slash_in_spec >= 0:
        raise _fail(
            "reserved character '/' in the specifier must be %-escaped (%2F)",
            text,
            spec_start + slash_in_spec,
            "unique-id",
        )
    parts = spec.split(".")
    if len(parts) > 3:
        extra = spec_start + len(parts[0]) + len(parts[1]) + len(parts[2]) + 2
        raise _fail(
            "more than unique-id.format.version: a '.' inside a unique id or format must be "
            "%-escaped (%2E)",
            text,
            extra,
            "specifier",
        )
    uid_raw = parts[0]
    if not uid_raw:
        raise _fail("the unique id is missing", text, spec_start, "unique-id")
    if uid_raw != "*" and not _UNIQUE_ID_RE.fullmatch(uid_raw):
        bad = _first_bad(uid_raw, UNIQUE_SAFE)
        ch = uid_raw[bad]
        if ch in _RESERVED:
            why = _unescaped(uid_raw, bad, "the unique id")
        else:
            why = f"character {ch!r} is not allowed in the unique id (escape it as UTF-8 %XX)"
        raise _fail(why, text, spec_start + bad, "unique-id")
    return parts


def _check_format(fmt: str, text: str, fmt_at: int) -> None:
    """Refuse a format token (line 156) that is empty or not well-formed, naming the character at fault."""
    if not fmt:
        raise _fail("the format is empty", text, fmt_at, "format")
    if fmt != "*" and not formats.is_valid_token(fmt):
        bad = _first_bad(fmt, TOKEN_SAFE | {"+"})
        ch = fmt[bad]
        if ch in TOKEN_SAFE | {"+"}:  # every character is allowed: the '+' is misplaced
            bad = fmt.rfind("+") if fmt.count("+") > 1 or fmt.endswith("+") else fmt.find("+")
            why = "a format token holds one '+', between the major and the minor type (%-escape others: %2B)"
        elif ch in _RESERVED:
            why = _unescaped(fmt, bad, "the format token")
        else:
            why = (
                f"character {ch!r} is not allowed in a format token (letters, digits, "
                f"!$&'-^_`{{}}~, one '+'; escape others as UTF-8 %XX)"
            )
        raise _fail(why, text, fmt_at + bad, "format")


def _slow_version(v_raw: str, text: str, v_at: int, warnings: list[_Warning]) -> int:
    """The version (line 162), a positive integer; leading zeros are a warning."""
    if not (v_raw.isdigit() and v_raw.isascii()):
        # at the first character that is neither a digit nor a leading wildcard ('1\n' at the newline, '*x' at 'x')
        bad = next((i for i, c in enumerate(v_raw) if not ("0" <= c <= "9" or (c == "*" and i == 0))), len(v_raw))
        raise _fail(
            f"the version is a positive integer or '*', not '{clipped(v_raw)}'", text, v_at + bad, "version"
        )
    version = _number(v_raw, text=text, offset=v_at, rule="version")
    if version == 0:
        raise _fail(
            "the version is a positive integer: 0 is not one", text, v_at, "version"
        )
    if v_raw[0] == "0":
        warnings.append((f"version '{clipped(v_raw)}' has leading zeros", v_at, "version"))
    return version


# The resource identifier of the common, fully valid case in one expression
# (the ABNF of PDI-GRAMMAR.md §1 with two-digit month and day). Whatever it does
# not match, or matches with a value out of range, goes the rule-by-rule way.
_FAST_HEAD = re.compile(
    r"(?:[uU][rR][nN]:)?[pP][dD][iI]://"
    r"((?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,})/"
    r"([0-9]{4}|\*)/([0-9]{2}|\*)/([0-9]{2}|\*)/"
    r"((?:[A-Za-z0-9()\-:;$_!']+|%[0-9A-Fa-f]{2})+|\*)"
    rf"(?:\.({TOKEN_PATTERN}|\*)(?:\.([1-9][0-9]*|\*))?)?"
)


def _fast_head(text: str, start: int, end: int) -> _Head | None:
    """The resource identifier (line 129) of the common case, or ``None`` for the slow head.

    Whatever :data:`_FAST_HEAD` reads is valid and two-digit dated, so nothing
    here warns or fails but a number too long to read (``_number``) or
    %-escapes that are not UTF-8: errors the slow head gives alike.
    """
    m = _FAST_HEAD.match(text, start, end)
    if m is None:
        return None
    ri_end = m.end()
    if ri_end != end and text[ri_end] not in "#@":
        return None
    series_text, y, mo, d, uid_raw, fmt, v = m.groups()
    if y == "*":
        year = None
    else:
        year = int(y)
        if year == 0:
            return None
    month = None if mo == "*" else int(mo)
    if month is not None and not 1 <= month <= 12:
        return None
    day = None if d == "*" else int(d)
    # Every month has 28 days: only a later day needs the calendar.
    if day is not None and (day < 1 or (day > 28 and day > _days_in(year, month))):
        return None
    uid_at = m.start(5)
    unique_id, serial = _read_unique_id(uid_raw, text, uid_at)
    version: int | None = None
    if v is not None and v != "*":
        version = _number(v, text=text, offset=m.start(7), rule="version")
    return _Head.__new__(
        _Head,
        series=tuple(series_text.split(".")), series_end=m.end(1),
        year=year, month=month, day=day,
        unique_id_raw=uid_raw, unique_id=unique_id, serial=serial, unique_id_at=uid_at,
        format=fmt, version=version, version_wildcard=v == "*", end=ri_end,
    )
