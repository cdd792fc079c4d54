"""Who may read what: private series and embargoes (issue 15).

Reading is open, except where a series is made private or a document or
version is embargoed:

* a series is ``public`` (the default), ``private`` (a reader without access
  is answered *forbidden*, HTTP 403: the name exists, its content is not
  theirs) or ``hidden`` (private, and such a reader is answered *not found*,
  HTTP 404, exactly as for a name never minted: even existence is private).
  A subseries is as private as the most private series it is delegated
  under (a ``hidden`` one above a ``private`` one hides it): every registered
  series its name ends with after a dot, whichever was registered first;
* a document, or one version of it, may be embargoed until a moment: until
  then it reads as in a ``private`` series (403); from then on the embargo is
  over by itself, measured by the archive's clock (:meth:`Archive.now`).

Access is the token's series scope. Every token (any role, including the
weakest, ``read``) may read every series its scope covers, private or not,
embargoed or not; nothing else changes in the role model. The archive's
owner — the command line, reading the archive directly — is not restricted.
The resolver reads as a :class:`Reader`: anonymous, or the token a request
presents (:data:`current_reader`, set for each request).

**What a reader may learn** of a document is decided here, once, by
:func:`disclosure`, and every read path asks the archive, which asks it
(issue 22): a reader may learn *all* of a document it may read; of a
private series' or an embargoed one it learns that it exists when it names
it exactly (``403``) and nothing else; of a hidden series' it learns
*nothing* (``404``, the answer to a name never minted). Whatever a reader may
not learn all of is left out of every list, count, harvest (OAI-PMH,
deleted records included), TimeMap and search it is shown, before a page is
cut, as if it had never been deposited (:class:`Unlisted`). One exception:
a document a reader was shown and a change of access withheld later (an
embargo set, its series made private or hidden) is a deleted record of its
OAI-PMH harvests from then on, its name and that moment only
(:meth:`pdi.archive.browsing.Browsing.changes`): what a harvester was shown
it is told to let go of (OAI-PMH 2.0 §2.5.1, ``deletedRecord`` persistent).
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime
import enum
from collections.abc import Iterator, Mapping
from dataclasses import field
from typing import TYPE_CHECKING

from pdi._wording import clipped
from pdi.archive.naming import timestamp
from pdi.archive.store import DocumentKey, SeriesRecord, TokenRecord
from pdi.archive.tokens import covers
from pdi.errors import ParseError

if TYPE_CHECKING:
    from dataclasses import dataclass
else:
    from pdi._later import dataclass

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

@contextlib.contextmanager
def reading_as(reader: Reader | None) -> Iterator[None]:
    """Answer as ``reader`` inside the block (``None``: the owner), outside a request (scripts, tests)."""
    token = current_reader.set(reader)
    try:
        yield
    finally:
        current_reader.reset(token)


class Disclosure(enum.Enum):
    """What a reader may learn of a document (:func:`disclosure`)."""

    #: Everything: its content, its statements, and that it is in every list.
    ALL = "all"
    #: That it exists, when named exactly (``403``); it is in no list, count or harvest.
    EXISTENCE = "existence"
    #: Nothing: it is answered as a name never minted (``404``) and is in no list.
    NOTHING = "nothing"


def disclosure(reader: Reader | None, series: str, access: str, *, embargoed: bool = False) -> Disclosure:
    """The one rule: what ``reader`` may learn of a document of ``series`` (whose effective access is ``access``).

    ``embargoed``: the document, or the version asked about, is under an
    embargo not yet over. The owner (``None``) and a token whose scope covers
    the series learn all; otherwise a hidden series teaches nothing, and a
    private series or an embargo teaches only existence.
    """
    if reader is None or reader.may_read(series):
        return Disclosure.ALL
    if access == HIDDEN:
        return Disclosure.NOTHING
    if access == PRIVATE or embargoed:
        return Disclosure.EXISTENCE
    return Disclosure.ALL


@dataclass(frozen=True)
class Unlisted:
    """What a reader may not learn all of, so that lists leave it out (:func:`disclosure` not ``ALL``).

    ``series``: the series it may not read, with their access; ``embargoed``:
    the documents under an embargo not yet over, outside the series it may
    read, each with the versions embargoed (``None``: the whole document).
    """

    series: Mapping[str, str] = field(default_factory=dict)
    embargoed: Mapping[DocumentKey, frozenset[int] | None] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.series or self.embargoed)

    def series_listed(self, name: str) -> bool:
        """Whether the series ``name`` (canonical) may be listed: the reader may read it."""
        return name not in self.series

    def document_listed(self, key: DocumentKey) -> bool:
        """Whether the document may be listed at all (some of its versions may still be left out)."""
        return key.series not in self.series and self.embargoed.get(key, frozenset()) is not None

    def version_listed(self, key: DocumentKey, version: int) -> bool:
        """Whether ``version`` of the document may be listed."""
        if key.series in self.series:
            return False
        versions = self.embargoed.get(key, frozenset())
        return versions is not None and version not in versions


def unlisted(reader: Reader | None, access: Mapping[str, str],
             embargoes: Mapping[DocumentKey, frozenset[int] | None]) -> Unlisted:
    """What lists leave out for ``reader``: by :func:`disclosure`, from every series' effective ``access`` and
    the ``embargoes`` not yet over (document: versions embargoed, ``None`` the whole document)."""
    if reader is None:
        return Unlisted()
    series = {name: level for name, level in access.items() if disclosure(reader, name, level) is not Disclosure.ALL}
    embargoed = {key: versions for key, versions in embargoes.items()
                 if key.series not in series and disclosure(reader, key.series, PUBLIC, embargoed=True)
                 is not Disclosure.ALL}
    return Unlisted(series, embargoed)


def check_access(value: str) -> str:
    """``value`` if it is one of :data:`ACCESS`."""
    if value not in ACCESS:
        raise ParseError(f"a series is {', '.join(ACCESS)}, not '{clipped(value)}'", text=value, rule="access")
    return value


def effective_access(series: dict[str, SeriesRecord], name: str) -> str:
    """The access of ``name``: the most private of its own setting and those of the series above it.

    Above it is every registered series its name ends with after a dot (draft-mallery-urn-pdi-00 §2.2: a
    subseries is delegated by adding a component to the left; a token's scope covers them so,
    :func:`pdi.archive.tokens.covers`), whether or not it was registered before it and so recorded as its
    ``parent``; and the recorded parents too.
    """
    found = PUBLIC
    for each in ruled_by(series, name):
        record = series.get(each)
        if record is not None and ACCESS.index(record.access) > ACCESS.index(found):
            found = record.access
    return found


def ruled_by(series: dict[str, SeriesRecord], name: str) -> list[str]:
    """The series whose settings rule who may read ``name`` (:func:`effective_access`): every series its name ends
    with after a dot, ``name`` itself and its recorded parents, each once."""
    above = [name[i + 1:] for i, ch in enumerate(name) if ch == "."]
    current: str | None = name
    while current is not None and current in series:
        above.append(current)
        current = series[current].parent
    return list(dict.fromkeys([name, *above]))


def parse_until(text: str) -> str:
    """An embargo's end as a catalog timestamp: a date (``2027-01-01``: its start, GMT) or an ISO 8601 time with a zone."""
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
    return timestamp(moment.astimezone(datetime.UTC))
