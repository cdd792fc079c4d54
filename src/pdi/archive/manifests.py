"""What a series' manifest lists: each name of a day (or of the whole series), its SHA-256 and size, a page at a time.

The values a signed manifest (:mod:`pdi.signing`) is made of. A manifest is
a list like any other (:mod:`pdi.archive.access`): what the current reader
may not learn all of — a private or hidden series, an embargoed document or
version — is left out before the page is cut, so no digest of it is shown;
a series the reader may not read is refused as ``ls --series`` refuses it.
A withdrawn name is listed, marked ``withdrawn`` (when) with no digest, as
its tombstone is described; a purged one says so too. An SGML document's
entry also gives the SHA-256 of the parse kept of it (``element_index``),
if one is, so that a mirror keeps only the same parse.

A page also says the access rules the origin applies, signed with the rest,
so that a mirror applies the same (:mod:`pdi.network.mirrors`) and no one
between them can change one: the series' effective ``access`` (``public``,
``private``, ``hidden``) and, for each name with an embargo set (over or
not), ``embargo``: the document's (``document``) and the version's
(``version``) ends. A reader who may not read them is shown none of those
names anyway.

A page signs, with those rules, how many times they have changed here
(``rules``: each change of the series' access or of an embargo of one of
its documents, and of the series above it, counted since schema step 25):
a number that only grows, so that a mirror that has followed a later page
refuses an older one replayed to it (:mod:`pdi.network.mirror_access`), and
that changes only with the rules, so that the same names and rules still
give the very same page (its ``ETag``, its kept timestamp).
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from pdi import formats
from pdi.archive.access import PUBLIC, ruled_by
from pdi.archive.base import ArchiveBase
from pdi.archive.listing import _list_key
from pdi.archive.naming import canonical_series, key_of, parse_pdi, record_text
from pdi.archive.store import DocumentKey, ListQuery, RepresentationRecord, WithdrawalRecord
from pdi.errors import IntegrityError, LimitError, PDIError, StoreError

if TYPE_CHECKING:
    from dataclasses import dataclass

    from pdi.archive.fixity import Problem
else:
    from pdi._later import dataclass

__all__ = ["MANIFEST_PAGE", "MAX_MANIFEST_PAGE", "ManifestPage", "Manifests", "kept_sgml_parse"]

#: Names one manifest page lists unless asked for fewer or more.
MANIFEST_PAGE = 1000
#: The most names one manifest page may list (a page is one signature and one answer held whole).
MAX_MANIFEST_PAGE = 10_000


@dataclass(frozen=True)
class ManifestPage:
    """One page of a manifest: the series, the day (``None``: the whole series), the cursor it starts ``after``,
    the one the next page starts after (``next``; ``None``: the last page) and its entries (JSON objects)."""

    series: str
    day: str | None
    after: str | None
    next: str | None
    entries: tuple[dict[str, Any], ...]
    #: The series' effective access here (:mod:`pdi.archive.access`); ``None``: not said.
    access: str | None = None
    #: How many changes of the series' rules (its access, its embargoes, and those of the series above it) there
    #: have been here (:meth:`~pdi.archive.catalog.access.AccessPart.rules_changes`); ``None``: not said.
    rules: int | None = None


class Manifests(ArchiveBase):
    """The manifest pages of a series."""

    def manifest_page(
        self, series: str, *, day: datetime.date | None = None, after: str | None = None,
        limit: int = MANIFEST_PAGE,
    ) -> ManifestPage:
        """The names of ``series`` minted on ``day`` (every day: ``None``), after the versioned name ``after``,
        at most ``limit`` of them, in listing order, as the current reader may see them."""
        if not 1 <= limit <= MAX_MANIFEST_PAGE:
            raise LimitError(f"a manifest page lists 1 to {MAX_MANIFEST_PAGE} names, not {limit}")
        canonical = canonical_series(series)
        cursor = None if after is None else _list_key(parse_pdi(after))

        def read() -> tuple[
            list[RepresentationRecord], bool, list[WithdrawalRecord], dict[tuple[DocumentKey, int | None], str], str,
            int,
        ]:
            self._require_series(canonical)
            hidden = self._unlisted()
            query = ListQuery(
                series=canonical, year=day.year if day else None, month=day.month if day else None,
                day=day.day if day else None, after=cursor,
            )
            records: list[RepresentationRecord] = []
            more = False
            for record in self.store.iter_representations(query, page=min(limit + 1, 1000)):
                if record.series != canonical:
                    continue  # a subseries has manifests of its own
                if hidden and not hidden.version_listed(DocumentKey(record.series, record.day, record.unique_id),
                                                        record.version):
                    continue
                if len(records) == limit:
                    more = True
                    break
                records.append(record)
            documents = list(dict.fromkeys(DocumentKey(r.series, r.day, r.unique_id) for r in records))
            tombstones = self.store.withdrawals_of(documents)
            embargoes = self.store.embargoes_of(documents)
            access = self.series_access().get(canonical, PUBLIC)
            rules = self.store.rules_changes(ruled_by({s.name: s for s in self.store.list_series()}, canonical))
            return records, more, tombstones, embargoes, access, rules

        records, more, tombstones, embargoes, access, rules = self.in_one_view(read)
        gone: dict[tuple[DocumentKey, int | None], WithdrawalRecord] = {(t.key, t.version): t for t in tombstones}
        entries = []
        for record in records:
            key = DocumentKey(record.series, record.day, record.unique_id)
            entry: dict[str, Any] = {"name": record_text(record), "format": record.format,
                                     "version": record.version}
            tombstone = (gone.get((key, record.version)) or gone.get((key, None))) if gone else None
            if tombstone is not None:
                entry["withdrawn"] = tombstone.at
                if record.purged is not None:
                    entry["purged"] = record.purged
            else:
                entry["sha256"] = record.sha256
                entry["size"] = record.size
                # what a mirror needs to keep the name as it is here (pdi.network.mirrors), signed with the rest
                entry.update(media_type=record.media_type, charset=record.charset, line_ending=record.line_ending,
                             created_at=record.created_at, stored=record.stored)
                parse = self._kept_parse_digest(record)
                if parse is not None:
                    entry["element_index"] = parse
                embargo = {which: until for which, until in (("document", embargoes.get((key, None))),
                                                             ("version", embargoes.get((key, record.version))))
                           if until is not None} if embargoes else None  # most pages: no embargo to look up
                if embargo:
                    entry["embargo"] = embargo
            entries.append(entry)
        following = entries[-1]["name"] if more and entries else None
        return ManifestPage(canonical, day.isoformat() if day else None, after, following, tuple(entries), access,
                            rules)

    def _kept_parse_digest(self, record: RepresentationRecord) -> str | None:
        """The SHA-256 of the parse kept of an SGML ``record`` (:func:`kept_sgml_parse`), or ``None``: signed in its
        manifest entry (``element_index``), so that a mirror keeps a parse of the same octets only when it is byte
        for byte this one (:mod:`pdi.network.mirrors`), its own or this one (``GET /api/element-index``)."""
        index = kept_sgml_parse(self.store, record)
        return None if index is None else hashlib.sha256(index).hexdigest()

    def check_manifest(
        self, entries: Iterable[Mapping[str, Any]], progress: Callable[[int], None] | None = None,
    ) -> tuple[int, list[Problem]]:
        """Check a (verified) manifest's entries against this archive, as its owner: each name is in the catalog
        with the digest and size listed, and its stored octets hash to that digest (read by verified chunks).

        Answers how many entries were checked and the problems, one a name:
        ``manifest-name`` (not a versioned name), ``manifest-missing`` (not in
        the catalog), ``manifest-digest``, ``manifest-size`` (the catalog says
        otherwise), ``manifest-withdrawn`` (withdrawn in one and not the
        other), ``missing``/``altered`` (the stored octets are gone or differ).
        """
        problems: list[Problem] = []
        checked = 0
        for entry in entries:
            checked += 1
            if progress is not None:
                progress(checked)
            problem = self._check_entry(entry)
            if problem is not None:
                problems.append(problem)
        return checked, problems

    def _check_entry(self, entry: Mapping[str, Any]) -> Problem | None:
        from pdi.archive.fixity import Problem  # here: only a manifest's check reports one
        name = str(entry.get("name"))
        listed = entry.get("sha256")
        try:
            parsed = parse_pdi(name)
            if parsed.format is None or parsed.version is None or parsed.fragment is not None:
                raise LimitError("not a versioned name")
        except PDIError as exc:
            return Problem("manifest-name", str(listed or ""), (name[:200],), f"not a versioned name: {exc}")
        key = key_of(parsed)
        token = formats.canonical_token(parsed.format)
        record = next((r for r in self.store.representations(key)
                       if r.version == parsed.version and r.format == token), None)
        if record is None:
            if "withdrawn" in entry and any(g.version == parsed.version and g.format == token
                                            for g in self.store.mirror_withdrawals(key)):
                return None  # withdrawn at this mirror's origin before a sync copied it: gone here too (410)
            return Problem("manifest-missing", str(listed or ""), (name,), "the manifest lists it; the catalog has no such name")
        tombstone = self.store.withdrawal(key, record.version)
        if "withdrawn" in entry or tombstone is not None:
            if "withdrawn" in entry and tombstone is not None:
                return None
            said = "withdrawn in the manifest, not in the archive" if tombstone is None else \
                f"withdrawn in the archive ({tombstone.at}), not in the manifest"
            return Problem("manifest-withdrawn", record.sha256, (name,), said)
        if listed != record.sha256:
            return Problem("manifest-digest", record.sha256, (name,),
                           f"the manifest says sha256 {listed}, the catalog {record.sha256}")
        if entry.get("size") != record.size:
            return Problem("manifest-size", record.sha256, (name,),
                           f"the manifest says {entry.get('size')} octets, the catalog {record.size}")
        return self._check_octets(record, name)

    def _check_octets(self, record: RepresentationRecord, name: str) -> Problem | None:
        """Whether the stored octets of ``record`` hash to its SHA-256 (each chunk verified as read, then the whole)."""
        from pdi.archive.fixity import Problem
        try:
            reader = self.store.open_blob(record.sha256, name=name)
        except (IntegrityError, StoreError) as exc:
            return Problem("missing", record.sha256, (name,), str(exc))
        if reader is None:
            return Problem("missing", record.sha256, (name,), "its octets are not in the store")
        digest = hashlib.sha256()
        try:
            with reader:
                for chunk in reader.chunks(0, reader.size):
                    digest.update(chunk)
        except (IntegrityError, StoreError) as exc:
            return Problem("altered", record.sha256, (name,), str(exc))
        if digest.hexdigest() != record.sha256:
            return Problem("altered", record.sha256, (name,), f"its stored octets hash to {digest.hexdigest()}")
        return None


class _Indexes(Protocol):
    def fragment_index(self, sha256: str, media_type: str, charset: str | None) -> bytes | None: ...


def kept_sgml_parse(store: _Indexes, record: RepresentationRecord) -> bytes | None:
    """The parse kept of an SGML ``record``: its element index, made by this pdi's reading (its
    :data:`~pdi.fragments.markup.index.VERSION`); ``None`` when it is not SGML, is purged, or has none such (not
    parsed, past the SGML bound, or parsed by an earlier reading)."""
    from pdi.fragments.markup import markup_kind

    if markup_kind(record.media_type) != "sgml" or record.purged is not None:
        return None
    from pdi.fragments.markup.index import MAGIC, made_by_an_earlier_reading

    index = store.fragment_index(record.sha256, record.media_type, record.charset)
    if index is None or index[:4] != MAGIC or made_by_an_earlier_reading(index):
        return None
    return index
