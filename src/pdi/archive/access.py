"""Who may read what: private series and embargoes (issue 15).

Reading is open, except where a series is made private or a document or
version is embargoed:

* a series is ``public`` (the default), ``private`` (a reader without access
  is answered *forbidden*, HTTP 403: the name exists, its content is not
  theirs) or ``hidden`` (private, and such a reader is answered *not found*,
  HTTP 404, exactly as for a name never minted: even existence is private).
  A subseries is as private as the most private series it is delegated
  under (a ``hidden`` one above a ``private`` one hides it);
* a document, or one version of it, may be embargoed until a moment: until
  then it reads as in a ``private`` series (403); from then on the embargo is
  over by itself, measured by the archive's clock (:meth:`Archive.now`).

Access is the token's series scope. Every token (any role, including the
weakest, ``read``) may read every series its scope covers, private or not,
embargoed or not; nothing else changes in the role model. The archive's
owner — the command line, reading the archive directly — is not restricted.
The resolver reads as a :class:`Reader`: anonymous, or the token a request
presents (:data:`current_reader`, set for each request).
"""

from __future__ import annotations

import contextvars
import datetime
from dataclasses import dataclass

from pdi.archive.store import SeriesRecord, TokenRecord
from pdi.archive.tokens import covers
from pdi.errors import ParseError

PUBLIC = "public"
PRIVATE = "private"
HIDDEN = "hidden"
#: The settings of a series, least private first.
ACCESS = (PUBLIC, PRIVATE, HIDDEN)


@dataclass(frozen=True)
class Reader:
    """Who reads through the resolver: anonymous (``token`` None) or a token's holder."""

    token: TokenRecord | None = None

    def may_read(self, series: str) -> bool:
        """Whether this reader has access to ``series`` (a token whose scope covers it)."""
        return self.token is not None and covers(self.token.series, series)


#: The reader of the request being answered; ``None`` (the default) is the archive's owner.
current_reader: contextvars.ContextVar[Reader | None] = contextvars.ContextVar("pdi_reader", default=None)

#: An anonymous reader.
ANONYMOUS = Reader()


def check_access(value: str) -> str:
    """``value`` if it is one of :data:`ACCESS`."""
    if value not in ACCESS:
        raise ParseError(f"a series is {', '.join(ACCESS)}, not {value!r}", text=value, rule="access")
    return value


def effective_access(series: dict[str, SeriesRecord], name: str) -> str:
    """The access of ``name``: the most private of its own setting and those of the series above it."""
    found = PUBLIC
    current: str | None = name
    while current is not None and current in series:
        record = series[current]
        if ACCESS.index(record.access) > ACCESS.index(found):
            found = record.access
        current = record.parent
    return found


def parse_until(text: str) -> str:
    """An embargo's end as a catalog timestamp: a date (``2027-01-01``: its start, GMT) or an ISO 8601 time with a zone."""
    from pdi.archive import _timestamp

    raw = text.strip()
    try:
        if len(raw) == 10:
            moment = datetime.datetime.combine(datetime.date.fromisoformat(raw), datetime.time(), datetime.UTC)
        else:
            moment = datetime.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ParseError(
            f"an embargo ends at a date (2027-01-01) or a time with its zone (2027-01-01T09:00:00Z), not {text[:40]!r}",
            text=text[:40], rule="embargo",
        ) from exc
    if moment.tzinfo is None:
        raise ParseError(f"{text[:40]!r} has no time zone: add Z for GMT", text=text[:40], rule="embargo")
    return _timestamp(moment.astimezone(datetime.UTC))
