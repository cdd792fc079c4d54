"""What the archive holds near a name it does not: for a 404 page, ``pdi get``'s message and the API's problem.

A name carries the GMT day it was minted (PDI-GRAMMAR.md §2.4), so a name
copied with another day, or another number, or from another archive, is not
here although something like it is. :func:`nearest` says what is, in this
order, only what the current reader may learn of (:mod:`pdi.archive.access`:
a hidden series is said of as one never registered):

* the series is not held here at all;
* the document is here, the version or format is not: its other names (the
  not-found message already lists its versions and formats, so no sentence);
* the day holds a document whose foreign id differs from the one asked for
  only in case, or by at most two edits (its numbers the same) among the
  day's first foreign ids: it
  (a serial differs from a near serial by being another document: none);
* a foreign id the series holds on other days: those names (the name with
  only its day wrong), found by the unique id's index;
* the day holds other documents of the series: the first of them;
* the day holds none: the series' nearest days before and after that hold
  some, named in the sentence without their documents (a document of another
  day with the same serial is another document, not the one meant), the
  first documents of each listed on a page under their heading;
* the series holds no documents yet.

Bounded cost: the nearest days are one statement seeking the key of
``document_days`` (:meth:`~pdi.archive.catalog.browse.BrowsePart.nearest_days`),
sought again past each day all of whose documents are embargoed from the
reader (so each part of the answer, "holds no documents" too, reads as if they
did not exist; those days are among the embargoes in force, already read);
each day named is one keyset page of ``documents_by_day`` cut at ``limit``,
and the same unique id on a day is a look-up of the key ``(series, day,
unique_id)``; an id in another case is one such look-up a spelling, the same id
on other days one seek of ``documents_by_unique_id``, and ids a few edits away
are sought only in the day's first :data:`NEAR_PAGE` foreign ids. Nothing scans
the catalog, and only a name not found pays for it.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from typing import TYPE_CHECKING, Protocol

from rapidfuzz.distance import Levenshtein

from pdi._wording import clipped
from pdi.archive.access import HIDDEN, Unlisted
from pdi.archive.results import DocumentPage, Generic, Resolved
from pdi.errors import PDIError
from pdi.identifier import PDI, escape_unique_id

if TYPE_CHECKING:
    from pdi.archive.catalog import SQLStore


class Holding(Protocol):
    """What :func:`nearest` asks of the archive (:class:`pdi.archive.Archive`, named so without importing it)."""

    @property
    def store(self) -> SQLStore: ...

    def _unreadable(self) -> dict[str, str]: ...

    def _unlisted(self) -> Unlisted: ...

    def day_documents(self, series: str, day: datetime.date, *, after: str | None = None,
                      limit: int = 100) -> DocumentPage: ...

    def locate(self, pdi: PDI | str, *, latest: bool = False) -> Resolved | Generic: ...

#: The most names one sentence names of a day (a page lists more).
SAID_MOST = 5


@dataclasses.dataclass(frozen=True)
class Nearest:
    """What the archive holds near a name: ``names`` (each with its title, or ``""``) under ``heading``, and
    ``sentence``, the same said in words for a message (``""``: nothing to add to the not-found message)."""

    heading: str = ""
    names: tuple[tuple[PDI, str], ...] = ()
    sentence: str = ""


def _generic(parsed: PDI, day: datetime.date | None = None) -> PDI:
    """``parsed``'s document's generic name (on ``day`` instead of its own, if given)."""
    generic = dataclasses.replace(parsed, format=None, version=None, fragment=None, citation=None, warnings=())
    if day is not None:
        generic = dataclasses.replace(generic, year=day.year, month=day.month, day=day.day)
    return generic.canonical()


def _listed(names: list[PDI], more: bool) -> str:
    return ", ".join(map(str, names)) + (" and more" if more else "")


#: How many of a day's documents with a foreign id are read for ids a few edits from the one asked for: one keyset
#: page of the catalog's rows, however large the day.
NEAR_PAGE = 50
#: The most edits (a character inserted, removed or changed; case apart) from the id asked for to one suggested.
_NEAR_EDITS = 2
#: The runs of digits in an id: its numbers, which a near id must share.
_DIGITS = re.compile(r"[0-9]+")
#: The most documents of one id on other days read from the unique id's index.
_OTHER_DAYS = 20


def _near_ids(archive: Holding, parsed: PDI, series: str, day: datetime.date) -> list[Generic]:
    """The documents of ``series`` minted on ``day`` whose foreign id is like ``parsed``'s, nearest first: the same
    but for case (a keyed look-up a spelling), else at most :data:`_NEAR_EDITS` edits away, case ignored, with the
    same numbers, among the day's first :data:`NEAR_PAGE` foreign ids. None for a serial: serial 12 and serial 13
    are two documents."""
    uid = parsed.unique_id
    if parsed.serial is not None or not uid:
        return []
    cased: list[Generic] = []
    for spelling in dict.fromkeys((uid.lower(), uid.upper(), uid[:1].upper() + uid[1:], uid[:1].lower() + uid[1:],
                                   uid.capitalize())):
        if spelling != uid and (found := _located(archive, _with_id(parsed, spelling))) is not None:
            cased.append(found)
    if cased:
        return cased
    most = min(_NEAR_EDITS, len(uid) // 3)  # a short id a few edits away is any other short id
    # the catalog's rows, not the archive's page of documents (their names and titles made: ten times the time);
    # what the reader may learn of is asked of each id found
    records = archive.store.day_documents(series, day, "", NEAR_PAGE)  # after "": its foreign ids, no serial
    folded = uid.casefold()
    numbers = _DIGITS.findall(uid)
    scored: dict[str, int] = {}
    for record in records:
        other = record.unique_id
        # ids whose numbers differ are other documents (Report_0500 and Report_0501), as serials are
        if record.serial is None and other not in scored and _DIGITS.findall(other) == numbers:
            edits = Levenshtein.distance(folded, other.casefold(), score_cutoff=most)
            if edits <= most:
                scored[other] = edits
    near = (_located(archive, _with_id(parsed, other)) for other in sorted(scored, key=scored.__getitem__))
    return [document for document in near if document is not None]


def _other_days(archive: Holding, parsed: PDI, series: str) -> list[Generic]:
    """The documents of ``series`` with ``parsed``'s foreign id minted on other days (the unique id's index), the
    reader's own; none for a serial, which names another document on each day."""
    if parsed.serial is None and parsed.unique_id:
        records = archive.store.unique_id_documents(parsed.unique_id, None, _OTHER_DAYS)
        days = dict.fromkeys(r.day for r in records if r.series.lower() == series and r.day != parsed.date)
        return [found for day in days if (found := _located(archive, _generic(parsed, day))) is not None]
    return []


def _with_id(parsed: PDI, unique_id: str) -> PDI:
    """``parsed``'s document's generic name with the foreign id ``unique_id``."""
    generic = _generic(parsed)
    return dataclasses.replace(generic, unique_id=unique_id, unique_id_raw=escape_unique_id(unique_id)).canonical()


def _meant(parsed: PDI, documents: list[Generic], where: str) -> Nearest:
    """The documents a name not found may have meant, ``where`` said of them: each by the name most like
    ``parsed``."""
    names = [_likest(parsed, d) for d in documents]
    return Nearest(f"Documents whose id is like '{clipped(parsed.unique_id)}'", tuple((n, "") for n in names),
                   f"{where}; did you mean {_listed(names[:SAID_MOST], len(names) > SAID_MOST)}?")


def nearest(archive: Holding, parsed: PDI, limit: int) -> Nearest:
    """What ``archive`` holds near ``parsed`` (a name it does not hold) that the current reader may learn of."""
    if parsed.is_pattern or parsed.citation is not None or parsed.date is None:
        return Nearest()
    series = parsed.series_name.lower()
    access = archive._unreadable().get(series)
    if access == HIDDEN or archive.store.get_series(series) is None:
        return Nearest(sentence=f"this archive holds no series {series}")
    if access is not None:  # private: the reader learns that it exists (a 403), nothing of what it holds
        return Nearest()
    if parsed.format is not None:
        found = _located(archive, _generic(parsed))
        if found is not None and found.names:
            return Nearest("Other versions and formats of this document", tuple((n, "") for n in found.names[-limit:]))
    day = parsed.date
    seen = _SeenDays(archive, series)
    before, after = seen.nearest(day)
    absent = f"{series} holds no document '{clipped(parsed.unique_id)}' minted on {day.isoformat()}"
    if before == day and (near := _near_ids(archive, parsed, series, day)):
        return _meant(parsed, near, absent)
    if other := _other_days(archive, parsed, series):
        return _meant(parsed, other, absent + " (a name carries the GMT day it was minted)")
    if before == day:
        page = archive.day_documents(series, day, limit=limit)
        if page.documents:
            names = [d.pdi for d in page.documents]
            return Nearest(f"Documents of {series} first deposited on {day.isoformat()}",
                           tuple((n, page.titles.get(str(n), "")) for n in names),
                           f"{series} holds these documents minted on {day.isoformat()}:"
                           f" {_listed(names[:SAID_MOST], len(names) > SAID_MOST or page.after is not None)}")
        before, _ = seen.nearest(day - datetime.timedelta(days=1))
    sides: list[tuple[datetime.date, list[tuple[PDI, str]], bool]] = []
    for side in (before, after):
        if side is None:
            continue
        try:
            page = archive.day_documents(series, side, limit=limit)
        except PDIError:
            continue
        if page.documents:  # none: all of that day is hidden from this reader
            sides.append((side, [(d.pdi, page.titles.get(str(d.pdi), "")) for d in page.documents],
                          page.after is not None))
    if not sides:
        return Nearest(sentence=f"the series {series} holds no documents minted on any day"
                       if before is None and after is None else "")
    days = " and ".join(side.isoformat() for side, _, _ in sides)
    # the days only: a document of another day is not the one meant (serial 1 of each day is another document)
    said = " and ".join(_apart(side, day) for side, _, _ in sides)
    return Nearest(f"Documents of {series} first deposited on the nearest day{'s' if len(sides) > 1 else ''}, {days}",
                   tuple(n for _, names, _ in sides for n in names[:limit]),
                   f"a name carries the GMT day it was minted, and {series} has nothing minted on"
                   f" {day.isoformat()}, so no document '{clipped(parsed.unique_id)}'; the nearest days with documents are {said}")


class _SeenDays:
    """The days of one series with documents the current reader may learn of: the catalog's days, less those whose
    every document is under an embargo in force outside what the reader may read (as
    :meth:`~pdi.archive.browsing.Browsing.day_counts` counts them), so that a reader's message reads as if those
    documents did not exist. A day passed over is one holding an embargoed document: the seeks are bounded by the
    embargoes in force, already read."""

    def __init__(self, archive: Holding, series: str) -> None:
        self._store = archive.store
        self._series = series
        self._less: dict[datetime.date, int] = {}
        for key, versions in archive._unlisted().embargoed.items():
            if versions is None and key.series == series:
                self._less[key.day] = self._less.get(key.day, 0) + 1

    def _empty(self, day: datetime.date) -> bool:
        """Whether every document of ``day`` is one the reader may not learn of."""
        if day not in self._less:
            return False
        counts = self._store.day_counts(self._series, day, day)
        return sum(c.documents for c in counts) <= self._less[day]

    def nearest(self, day: datetime.date) -> tuple[datetime.date | None, datetime.date | None]:
        """The last day up to ``day`` (``day`` itself if it has some) and the first after it with documents the
        reader may learn of (:meth:`~pdi.archive.catalog.browse.BrowsePart.nearest_days` without the others)."""
        before, after = self._store.nearest_days(self._series, day)
        while before is not None and self._empty(before):
            before = None if before == datetime.date.min else self._store.nearest_days(
                self._series, before - datetime.timedelta(days=1))[0]
        while after is not None and self._empty(after):
            after = self._store.nearest_days(self._series, after)[1]
        return before, after


def _apart(side: datetime.date, day: datetime.date) -> str:
    days = (side - day).days
    return f"{side.isoformat()} ({abs(days):,} day{'s' if abs(days) != 1 else ''} {'after' if days > 0 else 'before'})"


def _located(archive: Holding, generic: PDI) -> Generic | None:
    """The document ``generic`` names as the reader may see it, or ``None`` (not here, or not the reader's)."""
    try:
        found = archive.locate(generic)
    except PDIError:
        return None
    return found if isinstance(found, Generic) else None


def _likest(parsed: PDI, document: Generic) -> PDI:
    """The name of ``document`` most like ``parsed``: its format and version, else its format's latest, else the
    document's generic name."""
    if parsed.format is None:
        return document.pdi
    same = [n for n in document.names if n.format == parsed.format]
    exact = [n for n in same if n.version == (parsed.version or 1)]
    return (exact or same[-1:] or [document.pdi])[0]
