"""The Memento protocol, RFC 7089 (pure: values in, header values and TimeMaps out).

What the resolver needs of RFC 7089, with no I/O:

* §2.1.1 ``Accept-Datetime`` and §2.1.1 ``Memento-Datetime``: an
  ``rfc1123-date`` of RFC 2616 §3.3.1 (``Thu, 31 May 2007 20:35:00 GMT``),
  read strictly by :func:`parse_http_datetime` (a :class:`~pdi.errors.ParseError`
  naming what is wrong, so the TimeGate answers ``400`` as §4.5.3 asks) and
  written by :func:`http_datetime`;
* §4.1 (pattern 2.2, the TimeGate apart from the original resource): the
  memento a TimeGate selects for a datetime, :func:`select` — the one
  nearest in time (the choice most archives make, pywb's among them; §4.1
  leaves it to the TimeGate), the earlier of two equally near;
* §2.2.1 the ``Link`` relation types ``original``, ``timegate``,
  ``timemap`` and ``memento`` with ``first``/``last``/``prev``/``next``
  (RFC 5988, now RFC 8288), :func:`timegate_links` for a TimeGate's
  ``302`` and :func:`memento_links` for a memento's ``200`` (which, kept
  as immutable, names no other memento);
* §5.1.1 the TimeMap in the ``application/link-format`` of RFC 6690,
  :func:`timemap`.

A datetime is a timezone-aware UTC :class:`datetime.datetime`; Memento
datetimes have a resolution of one second (§2.1.1), so the microseconds of a
deposit time are dropped when it is written.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from pdi._wording import shown_field
from pdi.errors import ParseError

#: The media type of a TimeMap (RFC 7089 §5.1.1, RFC 6690).
LINK_FORMAT = "application/link-format"

_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
#: rfc1123-date = wkday "," SP date1 SP time SP "GMT"; date1 = 2DIGIT SP month SP 4DIGIT; time = 2DIGIT ":" 2DIGIT ":" 2DIGIT
_RFC1123 = re.compile(
    r"(?P<wkday>[A-Za-z]{3}), (?P<day>[0-9]{2}) (?P<month>[A-Za-z]{3}) (?P<year>[0-9]{4})"
    r" (?P<hour>[0-9]{2}):(?P<minute>[0-9]{2}):(?P<second>[0-9]{2}) GMT"
)
#: What may stand in a URI as it is (RFC 3986 §2: reserved, unreserved and ``%``); anything else is %-encoded in a link.
_URI_CHARACTERS = ":/?#[]@!$&'()*+,;=-._~%"
#: A URI that :func:`urllib.parse.quote` leaves as it is with ``safe=_URI_CHARACTERS`` (ASCII letters and digits too).
_QUOTED = re.compile(r"[A-Za-z0-9:/?#\[\]@!$&'()*+,;=\-._~%]*")
#: Longer than any rfc1123-date: a longer value is refused before it is read.
_MAX_DATE = 64


def parse_http_datetime(value: str, *, field: str = "Accept-Datetime") -> datetime.datetime:
    """The UTC datetime of an ``rfc1123-date`` (RFC 7089 §2.1.1, RFC 2616 §3.3.1), strictly.

    ``Thu, 31 May 2007 20:35:00 GMT``: the weekday and month names as
    RFC 2616 spells them (case-sensitive), two-digit day, four-digit year,
    ``GMT``. White space around the value is allowed (RFC 9110 §5.5). The
    weekday must be the date's own. Anything else is a
    :class:`~pdi.errors.ParseError` that says which part is wrong.
    """
    text = value.strip(" \t")
    if len(text) > _MAX_DATE:
        raise ParseError(f"{field} is not an RFC 1123 date: it is {len(text)} characters long",
                         text=text[:_MAX_DATE], rule="rfc1123-date")
    found = _RFC1123.fullmatch(text)
    if found is None:
        raise ParseError(
            f"{field} {shown_field(text)} is not an RFC 1123 date such as 'Thu, 31 May 2007 20:35:00 GMT'",
            text=text, rule="rfc1123-date",
        )
    if found["wkday"] not in _WEEKDAYS:
        raise ParseError(f"{field}: {found['wkday']!r} is not a weekday (Mon … Sun)",
                         text=text, offset=found.start("wkday"), rule="wkday")
    if found["month"] not in _MONTHS:
        raise ParseError(f"{field}: {found['month']!r} is not a month (Jan … Dec)",
                         text=text, offset=found.start("month"), rule="month")
    try:
        moment = datetime.datetime(
            int(found["year"]), _MONTHS.index(found["month"]) + 1, int(found["day"]),
            int(found["hour"]), int(found["minute"]), int(found["second"]), tzinfo=datetime.UTC,
        )
    except ValueError as wrong:
        raise ParseError(f"{field} {shown_field(text)} is no real date or time: {wrong}", text=text,
                         rule="rfc1123-date") from None
    if _WEEKDAYS[moment.weekday()] != found["wkday"]:
        raise ParseError(
            f"{field} {shown_field(text)}: {found['day']} {found['month']} {found['year']} was a"
            f" {_WEEKDAYS[moment.weekday()]}, not a {found['wkday']}",
            text=text, offset=0, rule="wkday",
        )
    return moment


def http_datetime(moment: datetime.datetime) -> str:
    """``moment`` as an ``rfc1123-date`` in GMT (RFC 7089 §2.1.1), to the second."""
    utc = moment.astimezone(datetime.UTC)
    return (f"{_WEEKDAYS[utc.weekday()]}, {utc.day:02d} {_MONTHS[utc.month - 1]} {utc.year:04d}"
            f" {utc.hour:02d}:{utc.minute:02d}:{utc.second:02d} GMT")


def parse_timestamp(stamp: str) -> datetime.datetime:
    """A deposit time as the catalog records it (ISO 8601 UTC, ``2026-11-22T14:30:00.000000Z``), as a datetime."""
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(datetime.UTC)


@dataclass(frozen=True, order=True)
class Memento:
    """One memento (URI-M) and its Memento-Datetime; mementos sort by time, then by URI."""

    datetime: datetime.datetime
    uri: str


def select(mementos: Sequence[Memento], wanted: datetime.datetime | None) -> int:
    """The index of the memento a TimeGate selects for ``wanted`` among ``mementos`` (sorted, not empty).

    The nearest in time, to the second, as each memento's datetime is told
    (``Memento-Datetime``, a TimeMap: §2.1.1's resolution, the microseconds
    dropped): a memento told at the very second asked for is chosen over one
    a fraction of a second nearer but told a second earlier. Of two equally
    near, the earlier. Without a datetime (no ``Accept-Datetime``), the
    latest (RFC 7089 §4.1.1: "the most recent" is what a TimeGate commonly
    answers then).
    """
    if not mementos:
        raise ValueError("a TimeGate selects among one memento or more")
    if wanted is None:
        return len(mementos) - 1
    wanted = wanted.replace(microsecond=0)
    best, nearest = 0, None
    for i, memento in enumerate(mementos):
        off = abs(memento.datetime.replace(microsecond=0) - wanted)
        if nearest is None or off < nearest:
            best, nearest = i, off
    return best


def quotes_to_itself(uri: str) -> bool:
    """Whether :func:`link` writes ``uri`` as it is: all of it unreserved or allowed characters."""
    return _QUOTED.fullmatch(uri) is not None


def as_uri(text: str) -> str:
    """``text`` as a URI (RFC 3986): itself when it is one, else with every character a URI may not hold
    %-escaped (a space, ``<``, ``>``, ``"``, a control, any non-ASCII character as its UTF-8 octets)."""
    return text if quotes_to_itself(text) else quote(text, safe=_URI_CHARACTERS)


def link(uri: str, rel: str, **params: str) -> str:
    """One link-value of an RFC 8288 ``Link`` field (and of RFC 6690's link-format): ``<uri>; rel="…"; k="v"``."""
    out = f'<{as_uri(uri)}>; rel="{rel}"'
    for key, value in params.items():
        out += f'; {key}="{value}"'
    return out


def _memento_rel(mementos: Sequence[Memento], i: int, *, around: int | None) -> str:
    """The relation types of memento ``i``: ``memento`` with ``first``/``last`` and, next to ``around``, ``prev``/``next``."""
    rels = []
    if i == 0:
        rels.append("first")
    if i == len(mementos) - 1:
        rels.append("last")
    if around is not None and i == around - 1:
        rels.append("prev")
    if around is not None and i == around + 1:
        rels.append("next")
    return " ".join([*rels, "memento"])


def _neighbours(mementos: Sequence[Memento], i: int) -> list[int]:
    """The indexes a memento's or a TimeGate's Link names: first, prev, itself, next, last (each once)."""
    return sorted({0, max(i - 1, 0), i, min(i + 1, len(mementos) - 1), len(mementos) - 1})


def timegate_links(original: str, timemap_uri: str, mementos: Sequence[Memento], chosen: int) -> str:
    """The ``Link`` of a TimeGate's ``302`` (RFC 7089 §4.1.1 pattern 2.2, §2.2.1).

    ``original`` and ``timemap`` (with the ``from``/``until`` of the
    mementos), and the selected memento with the ``first``, ``last``,
    ``prev`` and ``next`` mementos around it, each with its ``datetime``.
    """
    first, last = mementos[0].datetime, mementos[-1].datetime
    parts = [
        link(original, "original"),
        link(timemap_uri, "timemap", type=LINK_FORMAT, **{"from": http_datetime(first)}, until=http_datetime(last)),
    ]
    for i in _neighbours(mementos, chosen):
        parts.append(link(mementos[i].uri, _memento_rel(mementos, i, around=chosen),
                          datetime=http_datetime(mementos[i].datetime)))
    return ", ".join(parts)


def memento_links(original: str, timegate_uri: str, timemap_uri: str, this: Memento, stamp: str | None = None) -> str:
    """The ``Link`` of a memento's own answer (RFC 7089 §2.2.1, the example of §4.1.2).

    ``original``, ``timegate`` and ``timemap``, and the memento itself with
    its ``datetime``: only what never changes, since the answer is kept as
    immutable (by the resolver's cache and by any HTTP cache, for a year).
    The ``first``, ``prev``, ``next`` and ``last`` mementos are left to the
    TimeGate and the TimeMap (RFC 7089 makes them optional here): each can
    change after the answer was made, a later capture changing ``next`` and
    ``last``, and an earlier one (a WARC imported, dated by its capture) or a
    withdrawal changing ``first`` and ``prev``. ``stamp``: the memento's datetime as :func:`http_datetime` writes it,
    when the caller has made it already.
    """
    return ", ".join([
        link(original, "original"), link(timegate_uri, "timegate"), link(timemap_uri, "timemap", type=LINK_FORMAT),
        link(this.uri, "memento", datetime=http_datetime(this.datetime) if stamp is None else stamp),
    ])


def timemap(original: str, self_uri: str, timegate_uri: str, mementos: Sequence[Memento], *,
            next_uri: str | None = None, prev_uri: str | None = None) -> str:
    """A TimeMap in ``application/link-format`` (RFC 7089 §5.1.1, RFC 6690 §2): one link-value a line.

    The original resource, the TimeMap itself (``self``, with ``from`` and
    ``until`` when there are mementos), the TimeGate, then every memento in
    time order, the first and the last marked so. A page of a TimeMap split
    in pages (RFC 7089 leaves their size to the server; Memento's practice
    of paged TimeMaps) links the page after it (``next_uri``) and the page
    before it (``prev_uri``), each ``rel="next"``/``rel="prev"`` with
    ``type="application/link-format"``; its ``self``'s ``from`` and ``until``
    are its own first and last mementos'; its first memento is marked
    ``first`` only on the first page, its last ``last`` only on the last.
    """
    about: dict[str, str] = {"type": LINK_FORMAT}
    if mementos:
        about["from"] = http_datetime(mementos[0].datetime)
        about["until"] = http_datetime(mementos[-1].datetime)
    lines = [link(original, "original"), link(self_uri, "self", **about)]
    lines += timemap_pages(next_uri, prev_uri)
    lines.append(link(timegate_uri, "timegate"))
    for i, m in enumerate(mementos):
        rel = _memento_rel(mementos, i, around=None)
        if prev_uri is not None:
            rel = rel.replace("first ", "")
        if next_uri is not None:
            rel = rel.replace("last ", "")
        lines.append(link(m.uri, rel, datetime=http_datetime(m.datetime)))
    return ",\n".join(lines) + "\n"


def timemap_pages(next_uri: str | None, prev_uri: str | None) -> list[str]:
    """The link-values to the pages after and before a TimeMap page (``rel="next"``, ``rel="prev"``)."""
    return [link(uri, rel, type=LINK_FORMAT) for uri, rel in ((next_uri, "next"), (prev_uri, "prev"))
            if uri is not None]
