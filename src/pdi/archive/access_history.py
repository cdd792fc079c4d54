"""What readers without access were shown of a document before schema step 21, read again from the audit log.

Before step 21 a change of access (``pdi embargo``, ``pdi series access``,
a mirror following its origin) dated nothing but the audit log's entry and a
row of ``access_changes``: a record's OAI-PMH datestamp (OAI-PMH 2.0 §2.7.1)
did not move, so a harvester never learned that a record it holds was
withheld (§2.5.1: a deleted record) or that one was shown. Step 21 reads the
history back (:meth:`DocumentHistory.dated_by_migration`) and dates, at the
migration, each document that showed a reader without access, at some moment
since its first deposit, other versions than its deposits and the ends of its
embargoes as the catalog holds them now say: withheld now, it is a deleted
record from then; shown now, an incremental harvest reads it again. One never
shown is not named; one only an embargo's end showed is dated by that end.

What the log does not say is taken as pdi 0.1.0 and 0.2.0 made it. A series
with no ``series-access`` entry was always as it is now; one with entries was
public until the first (``pdi series add`` registered every series public),
unless a mirror following its origin wrote it (an entry with an address: no
token may change a series' access), which held from the start. Likewise a
document or version with no ``embargo`` entry was always as it is now; one
with entries was unembargoed until the first (a deposit never embargoed a
whole document), unless its origin's manifest said it (a mirror takes a
document and its embargo together). Two cases the log cannot tell apart are
read as the common one: a version deposited under an embargo (``pdi deposit
--embargo-until``) then embargoed again, and a private series brought in by
``pdi import`` whose access was then changed, are taken as shown before the
entry.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pdi.archive.access import PUBLIC, effective_access
from pdi.archive.store import SeriesRecord

#: An ``embargo`` entry's detail, as pdi 0.1.0 on wrote it: ``the document until T``, ``version 2: lifted`` …
#: (`` (was until T)`` after it, since 0.3.0, when an embargo was set before; `` (from its origin's signed
#: manifest)`` when a mirror followed its origin).
EMBARGO_DETAIL = re.compile(r"(?:the document|version (?P<version>[0-9]+))(?: until (?P<until>\S+)|: lifted)"
                            r"(?: \(was until \S+\))?(?P<origin> \(from its origin's signed manifest\))?")


@dataclass(frozen=True)
class Setting:
    """An entry of the audit log that set an access: when, to what (a series' access; an embargo's end, ``None``
    lifted), and whether a mirror's origin said so."""

    at: str
    value: str | None
    from_origin: bool = False


def value_at(settings: Sequence[Setting], moment: str, before_any: str | None, now: str | None) -> str | None:
    """The value ``settings`` (oldest first) had at ``moment``: the last set by then; before the first,
    ``before_any`` (the first's own if it came from a mirror's origin); with none, ``now``."""
    if not settings:
        return now
    found: str | None = settings[0].value if settings[0].from_origin else before_any
    for setting in settings:
        if setting.at > moment:
            break
        found = setting.value
    return found


@dataclass(frozen=True)
class SeriesHistory:
    """The registered series as they are now and the ``series-access`` entries of each (oldest first)."""

    now: dict[str, SeriesRecord]
    settings: Mapping[str, Sequence[Setting]]
    _public: dict[tuple[str, str], bool] = field(default_factory=dict, repr=False, compare=False)
    _moments: list[str] = field(default_factory=list, repr=False, compare=False)

    def moments(self) -> set[str]:
        return {s.at for each in self.settings.values() for s in each}

    def public_at(self, name: str, moment: str) -> bool:
        """Whether series ``name`` was public (its own access and those above it) at ``moment``: as at the last
        entry by then (``""``: before any), worked out once for each."""
        ordered = self._ordered()
        last = ordered[bisect.bisect_right(ordered, moment) - 1] if ordered and ordered[0] <= moment else ""
        known = self._public.get((name, last))
        if known is None:
            then = {
                series: SeriesRecord(record.name, record.parent, record.authority, record.created_at,
                                     value_at(self.settings.get(series, ()), last, PUBLIC, record.access) or PUBLIC)
                for series, record in self.now.items()
            }
            known = self._public[name, last] = effective_access(then, name) == PUBLIC
        return known

    def _ordered(self) -> list[str]:
        if not self._moments:
            self._moments.extend(sorted(self.moments()))
        return self._moments

    def public_now(self, name: str) -> bool:
        return effective_access(self.now, name) == PUBLIC

    def changed(self) -> set[str]:
        """The series whose access (with those above it) was not the same at every moment of the log."""
        moments = sorted(self.moments())
        if not moments:
            return set()
        probes = ["", *moments]  # "": before the first entry
        return {name for name in self.now if len({self.public_at(name, m) for m in probes}) > 1}


@dataclass(frozen=True)
class DocumentHistory:
    """A document as the catalog holds it now, with the ``embargo`` entries naming it (oldest first)."""

    series: str
    embargo_now: str | None
    versions: Mapping[int, tuple[str, str | None]]  # version -> (deposited at, embargo now)
    document_settings: Sequence[Setting] = ()
    version_settings: Mapping[int, Sequence[Setting]] = field(default_factory=dict)

    def _version_settings(self, version: int) -> Sequence[Setting]:
        return self.version_settings.get(version, ())

    def shown_at(self, moment: str, series: SeriesHistory, *, current: bool = False) -> frozenset[int]:
        """The versions a reader without access to the series was shown at ``moment`` (withdrawals apart), as the
        log says; ``current``: as the catalog holds it now."""
        if not (series.public_now(self.series) if current else series.public_at(self.series, moment)):
            return frozenset()
        whole = self.embargo_now if current else value_at(self.document_settings, moment, None, self.embargo_now)
        if whole is not None and whole > moment:
            return frozenset()
        shown = set()
        for version, (deposited, embargo) in self.versions.items():
            until = embargo if current else value_at(self._version_settings(version), moment, None, embargo)
            if deposited <= moment and (until is None or until <= moment):
                shown.add(version)
        return frozenset(shown)

    def moments(self, series: SeriesHistory, before: str) -> list[str]:
        """Every moment from its first deposit to ``before`` at which what it showed may have changed: a deposit,
        an entry of its own or of any series, an embargo's end."""
        since = min(deposited for deposited, _ in self.versions.values())
        found = {since, *series.moments(), *(deposited for deposited, _ in self.versions.values())}
        settings: list[Setting] = [*self.document_settings]
        for version in self.versions:
            settings += self._version_settings(version)
        found |= {s.at for s in settings}
        found |= {s.value for s in settings if s.value is not None}
        found |= {until for until in (self.embargo_now, *(e for _, e in self.versions.values())) if until is not None}
        return sorted(m for m in found if since <= m < before)

    def dated_by_migration(self, series: SeriesHistory, now: str) -> bool:
        """Whether the migration at ``now`` dates it: at some moment since its first deposit the log says it showed
        a reader without access other versions than the catalog as it is now says it did (its deposits and the ends
        of its embargoes alone, which its datestamp counts already): a change of access showed or withheld it."""
        return any(self.shown_at(moment, series) != self.shown_at(moment, series, current=True)
                   for moment in self.moments(series, now))


    def withheld_since(self, series: SeriesHistory, now: str) -> str | None:
        """The moment from which the log says it has shown a reader without access nothing, after it showed that
        reader some version; ``None`` if it shows some version now (as the catalog holds it) or never showed any.
        A deleted record of it lists the versions it had then, so a version deposited since is not named in it."""
        if self.shown_at(now, series, current=True):
            return None
        moments = self.moments(series, now)
        shown = [i for i, moment in enumerate(moments) if self.shown_at(moment, series)]
        if not shown:
            return None
        return moments[shown[-1] + 1] if shown[-1] + 1 < len(moments) else now

def embargo_settings(entries: Iterable[tuple[str, str]]) -> dict[int | None, list[Setting]]:
    """The embargoes ``entries`` (each an ``embargo`` entry's time and detail, oldest first) set, by version
    (``None``: the document's); a detail that is not one pdi wrote is left out."""
    found: dict[int | None, list[Setting]] = {}
    for at, detail in entries:
        matched = EMBARGO_DETAIL.fullmatch(detail)
        if matched is None:
            continue
        version = None if matched["version"] is None else int(matched["version"])
        found.setdefault(version, []).append(Setting(at, matched["until"], matched["origin"] is not None))
    return found
