"""Conditional requests and byte ranges, as N2R answers them (RFC 9110 §13, §14).

An N2R answer for a name with a format never changes, so its entity tag is
known from the catalog alone (:func:`entity_tag`); ``If-None-Match``
(:func:`tag_matches`), ``If-Match`` (:func:`if_match_holds`, for the
annotation server's changes), ``If-Range`` (:func:`if_range_holds`) and ``Range`` (:func:`byte_ranges`) are read here, for the resolver's handlers and
for the cache of whole answers (:mod:`pdi.server.process.cache`) alike.

Its ``Last-Modified`` is the deposit time of the stored bytes, which never
changes either: ``If-Modified-Since`` and ``If-Unmodified-Since`` are read
against it (:func:`date_precondition`, :func:`http_date`), and so is an
``If-Range`` that holds a date.
"""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Iterable, Mapping

from pdi._wording import shown_field
from pdi.server.http.byteranges import MAX_PARTS, coalesced
from pdi.server.http.problems import problem_body

#: What :func:`_range_spec` answers for a range that selects no byte of the body (left out: none left is ``416``).
UNSATISFIABLE = (-1, -1)

_ENTITY_TAG = re.compile(r'(?:W/)?"([\x21\x23-\x7e\x80-\xff]*)"')
#: RFC 9110 §13.1.1, §13.1.2: ``#entity-tag``, a list (§5.6.1: elements parted by commas and optional white space,
#: empty elements allowed) of ``[ W/ ] DQUOTE *etagc DQUOTE`` (§8.8.3, ``W/`` in that case alone). Possessive: a
#: field of thousands of commas and blanks is read in one pass.
_TAG_LIST = re.compile(r'[ \t,]*+(?:(?:W/)?+"[\x21\x23-\x7e\x80-\xff]*+"'
                       r'(?:[ \t]*+,[ \t,]*+(?:W/)?+"[\x21\x23-\x7e\x80-\xff]*+")*+)?+[ \t,]*+')


def unsatisfiable(range_field: str, length: int) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The header fields and body of the ``416`` of a ``Range`` that selects nothing of ``length`` octets (RFC 9110
    §15.5.17): ``Content-Range: bytes */LENGTH``, an RFC 9457 problem saying so, and ``Cache-Control: no-store``,
    since a cache does not key its answers on ``Range`` (RFC 9111 §4) and must not give this one to another request."""
    said = shown_field(range_field, 200)  # as the client wrote it, not Latin-1's reading of its octets
    body = problem_body(416, f"the Range {said} selects none of the {length} octets (RFC 9110 §14.1.2)")
    return [(b"content-range", b"bytes */%d" % length), (b"cache-control", b"no-store"),
            (b"content-type", b"application/problem+json"), (b"content-length", b"%d" % len(body))], body


#: Fields of a whole answer a ``416`` leaves out: it is no memento, and it is not kept (:func:`unsatisfiable`).
NOT_OF_416 = frozenset({b"cache-control", b"memento-datetime", b"link", b"content-length", b"content-type",
                        b"last-modified"})

#: RFC 9110 §8's representation header fields (§8.3 to §8.6, §8.8.2) a ``206`` to a request with ``If-Range`` leaves
#: out (§15.3.7: the sender "SHOULD NOT generate other representation header fields beyond those required, because the
#: client already has a prior response containing those header fields"). ``ETag``, ``Content-Location`` and the
#: ``Content-Range`` are required and kept, as is a multipart body's own ``Content-Type`` (§15.3.7.2). Left out too:
#: ``X-PDI-SHA256``, a digest of the selected representation, as RFC 9530's ``Repr-Digest`` is. Kept:
#: ``Memento-Datetime``, which a memento's answer MUST carry (RFC 7089 §2.1.1); ``Link``, no representation field
#: (RFC 8288), whose ``original`` and ``timegate`` a memento's answer SHOULD carry (RFC 7089 §2.2.1); and the security
#: fields (``Content-Security-Policy``, ``X-Content-Type-Options``), which govern this answer, not describe the octets.
NOT_REPEATED_TO_IF_RANGE = frozenset({b"content-type", b"content-encoding", b"content-language", b"last-modified",
                                      b"x-pdi-sha256"})


def entity_tag(sha256: str, name: str) -> str:
    """A strong entity tag for what a name resolves to: the SHA-256 of the stored bytes, and the fragment.

    The stored bytes never change under a name, and a fragment always selects
    the same bytes from them, so the tag is known from the catalog alone.
    """
    fragment = name.split("#", 1)[1] if "#" in name else ""
    return f'"{sha256}{"#" + fragment if fragment else ""}"'


def tag_matches(field: str, tag: str) -> bool:
    """``If-None-Match``: ``*`` or a list holding ``tag`` (weak comparison, RFC 9110 §13.1.2); a field that is no list
    of entity tags (§8.8.3: ``w/"x"``, ``x"y"``, ``"a" "b"``) holds none."""
    if field == tag:  # the usual field: the one tag a cache kept
        return True
    if field.strip(" \t") == "*":
        return True
    if not _TAG_LIST.fullmatch(field):  # no list of entity tags (w/"x", x"y", "a" "b"): no tag of it matches
        return False
    # entity tags are quoted and may hold commas (a fragment's), so the list is read tag by tag
    return tag in (f'"{quoted}"' for quoted in _ENTITY_TAG.findall(field))


def if_match_holds(field: str, tag: str) -> bool:
    """``If-Match`` (RFC 9110 §13.1.1): ``*``, or a list holding ``tag`` by strong comparison (a weak tag never
    matches: §8.8.3.2); a field that is no list of entity tags holds none (``w/"x"`` is no strong ``"x"``)."""
    if field.strip(" \t") == "*":
        return True
    if not _TAG_LIST.fullmatch(field):
        return False
    return any(not found[0].startswith("W/") and f'"{found[1]}"' == tag for found in _ENTITY_TAG.finditer(field))


def if_range_holds(field: str | None, tag: str, last_modified: str | bytes | None = None) -> bool:
    """``If-Range`` (RFC 9110 §13.1.5): absent, the current entity tag (strong comparison), or an HTTP-date that is
    exactly ``last_modified`` (the answer's ``Last-Modified``) when that is a strong validator, a second or more
    before now (§8.8.2.2)."""
    if field is None:
        return True
    field = field.strip(" \t")
    if field == tag:
        return True
    if last_modified is None or field[:1] == '"' or field[:2] == "W/":
        return False
    date = http_date(field)
    modified = http_date(last_modified if isinstance(last_modified, str) else last_modified.decode("latin-1"))
    return date is not None and date == modified and date <= time.time() - 1


def date_precondition(headers: Mapping[str, str], last_modified: str | None) -> int | None:
    """RFC 9110 §13.2.2's steps 2 and 4 for a ``GET`` or ``HEAD`` of an answer last modified at ``last_modified``
    (its ``Last-Modified``; ``None``: it has none, and both fields are ignored): ``412`` when
    ``If-Unmodified-Since`` is a date before it (§13.1.4; ignored with ``If-Match``, step 1), ``304`` when
    ``If-Modified-Since`` is a date at or after it (§13.1.3; ignored with ``If-None-Match``, step 3), else
    ``None``. A field that is not one HTTP-date (:func:`http_date`) is ignored, as both sections say."""
    if last_modified is None:
        return None
    modified = http_date(last_modified)
    if modified is None:
        return None
    if "if-match" not in headers:
        since = _one(headers, "if-unmodified-since")
        if since is not None and (date := http_date(since)) is not None and modified > date:
            return 412
    if "if-none-match" not in headers:
        since = _one(headers, "if-modified-since")
        if since is not None and (date := http_date(since)) is not None and modified <= date:
            return 304
    return None


def _one(headers: Mapping[str, str], name: str) -> str | None:
    """A field's value when the request has it on one line; ``None`` when absent or on several (a list of dates,
    which §13.1.3 and §13.1.4 say to ignore)."""
    getlist = getattr(headers, "getlist", None)
    if getlist is not None:
        values = getlist(name)
        return values[0] if len(values) == 1 else None
    return headers.get(name)


def dated_fields(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether raw request fields ask what :func:`date_precondition` answers: ``If-Unmodified-Since`` (the
    resolver answers it; with ``If-Match``, which it answers too), or ``If-Modified-Since`` without
    ``If-None-Match`` (with it, the date is ignored and the tag answers)."""
    modified_since = none_match = False
    for key, _ in headers:
        if key == b"if-unmodified-since":
            return True
        if key == b"if-modified-since":
            modified_since = True
        elif key == b"if-none-match":
            none_match = True
    return modified_since and not none_match


_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_MONTH = r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_MONTHS = {name: number for number, name in enumerate(_MONTH[1:-1].split("|"), start=1)}
_CLOCK = r"(\d\d):(\d\d):(\d\d)"
#: RFC 9110 §5.6.7: IMF-fixdate, and the two obsolete forms a recipient must accept (rfc850-date, asctime-date).
#: ``re.ASCII``: a DIGIT is 0 to 9 (RFC 5234), not any script's digit that ``\d`` and ``int`` read.
_IMF_FIXDATE = re.compile(rf"{_DAY}, (\d\d) {_MONTH} (\d{{4}}) {_CLOCK} GMT", re.ASCII)
_RFC850_DATE = re.compile(rf"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d\d)-{_MONTH}-(\d\d)"
                          rf" {_CLOCK} GMT", re.ASCII)
_ASCTIME_DATE = re.compile(rf"{_DAY} {_MONTH} ([ \d]\d) {_CLOCK} (\d{{4}})", re.ASCII)


def http_date(field: str) -> int | None:
    """Seconds since 1970 of an HTTP-date (RFC 9110 §5.6.7), GMT; ``None`` for anything else (another form, a day
    or a time that does not exist, a list of dates). An rfc850-date's two-digit year is the century's that puts
    it at most 50 years after now (§5.6.7: "a timestamp that appears to be more than 50 years in the future" is
    "the most recent year in the past that had the same last two digits")."""
    field = field.strip(" \t")
    if (found := _IMF_FIXDATE.fullmatch(field)) is not None:
        day, month, year, hour, minute, second = found.groups()
        full = int(year)
    elif (found := _RFC850_DATE.fullmatch(field)) is not None:
        day, month, year, hour, minute, second = found.groups()
        now = time.gmtime()
        full = now.tm_year - now.tm_year % 100 + int(year)
        # more than 50 years ahead by the timestamp, not the year alone: in the year fifty years on, a day after today
        if (full, _MONTHS[month], int(day), int(hour), int(minute), int(second)) > (
                now.tm_year + 50, now.tm_mon, now.tm_mday, now.tm_hour, now.tm_min, now.tm_sec):
            full -= 100
    elif (found := _ASCTIME_DATE.fullmatch(field)) is not None:
        month, day, hour, minute, second, year = found.groups()
        full = int(year)
    else:
        return None
    numbers = (full, _MONTHS[month], int(day), int(hour), int(minute), int(second))
    if full < 1 or not (1 <= numbers[2] <= calendar.monthrange(full, numbers[1])[1] and numbers[3] < 24
                        and numbers[4] < 60 and numbers[5] < 61):  # 60: a leap second, read as the next
        return None  # year 0 is no year of the calendar (calendar.monthrange refuses it)
    return calendar.timegm((*numbers, 0, 0, 0))


def byte_ranges(field: str | None, length: int) -> list[tuple[int, int]] | None:
    """Every byte range ``Range: bytes=…`` asks for that selects octets of a body of ``length`` (RFC 9110 §14.1.2),
    inclusive, in the order asked (a list of one or more: ``206``, one part or several), ``[]`` when none does
    (``416``), or ``None``: answer the whole body (no ``Range``, another unit, no range-spec, the last N bytes of
    an empty body, which §14.1.1 calls satisfiable but no ``206`` can say, as nginx answers it), and also when a
    range is invalid (the whole field is then invalid: §14.1.1), and when the field asks for more than
    :data:`~pdi.server.http.byteranges.MAX_PARTS` parts once overlapping and near ranges are one
    (:func:`~pdi.server.http.byteranges.coalesced`; §14.2: a server "MAY ignore or reject" such a field), and when
    white space stands between the unit and its ``=`` (``bytes = 0-1``: no range-unit "=" of §14.1.1).

    Empty list elements are skipped (RFC 9110 §5.6.1.2); unsatisfiable ranges are left out (§14.1.2)."""
    if field is None:
        return None
    unit, _, set_ = field.strip(" \t").partition("=")
    if unit.lower() != "bytes":  # range-unit "=" range-set: no white space before the "=" (nginx ignores it too)
        return None
    found: list[tuple[int, int]] = []
    asked = unspelled = False
    for element in set_.split(","):
        if not element.strip(" \t"):
            continue
        asked = True
        got = _range_spec(element, length)
        if got == _INVALID:
            return None
        if got == _UNSPELLED:
            unspelled = True
        elif got != UNSATISFIABLE:
            found.append(got)
    if not asked or unspelled:  # no range-spec (1#range-spec); the last N octets of an empty body: the whole of it
        return None
    parts = coalesced(found)
    return None if len(parts) > MAX_PARTS else parts


#: What :func:`_range_spec` answers for a range-spec that is invalid (the whole field is then ignored), and for the
#: last N bytes of an empty body (satisfiable, but no ``Content-Range`` spells it: the whole, empty body).
_INVALID = (-2, -2)
_UNSPELLED = (-3, -3)


def _range_spec(spec: str, length: int) -> tuple[int, int]:
    """One range-spec of a body of ``length`` octets (RFC 9110 §14.1.1): its first and last octets, or
    :data:`UNSATISFIABLE`, :data:`_INVALID` or :data:`_UNSPELLED`."""
    first_text, dash, last_text = spec.strip(" \t").partition("-")
    if not dash or not _digits_or_empty(first_text) or not _digits_or_empty(last_text):
        return _INVALID
    # A position of any number of digits is a position (RFC 9110 §14.1.1 bounds none); one past 19 significant
    # digits lies beyond every body, so it is read as HUGE, not as an int (a 64 KB field would exceed Python's
    # bound on converting digits, and no body is that long).
    first_digits, last_digits = first_text.lstrip("0") or "0", last_text.lstrip("0") or "0"
    if first_text == "":  # a suffix: the last N bytes
        if last_text == "":
            return _INVALID
        if last_digits == "0":
            return UNSATISFIABLE
        if length == 0:  # satisfiable (RFC 9110 §14.1.1), but no Content-Range spells it: the whole, empty body
            return _UNSPELLED
        return max(0, length - _position(last_digits)), length - 1
    if last_text != "" and (len(last_digits), last_digits) < (len(first_digits), first_digits):
        return _INVALID  # invalid: ignore it
    first = _position(first_digits)
    if first >= length:
        return UNSATISFIABLE
    last = length - 1 if last_text == "" else min(_position(last_digits), length - 1)
    return first, last


#: What a position of more than 19 significant digits is read as: past the end of any body.
_HUGE = 10**19


def _digits_or_empty(text: str) -> bool:
    return text == "" or (text.isascii() and text.isdigit())


def _position(digits: str) -> int:
    """A position's digits, leading zeros dropped, as a number; :data:`_HUGE` for one longer than any body."""
    return int(digits) if len(digits) <= 19 else _HUGE
