"""Mirrors over HTTP: a series copied
from its origin (a :class:`~pdi.network.peers.Peer`), checked against the origin's signed manifests (``pdi mirror sync``). Copies compared with every
peer (``pdi mirror audit``) and a damaged blob fetched again (``pdi verify --repair``) are :mod:`pdi.network.polls`.

**What changed since the last sync** is read from the origin's signed
manifest of the whole series (``/api/manifest?series=S``, a page of 1000
names at a time, each page a JWS checked with the key pinned by
``pdi mirror add``), not from OAI-PMH: the manifest is what every blob must
be checked against anyway, so one walk gives both the list and the proof,
and a page costs one request. A name already held with the listed digest
costs no request; new ones are asked for together, up to :data:`GROUP_NAMES`
names or :data:`GROUP_OCTETS` octets a request (``POST /api/octets``,
:mod:`pdi.server.protocol.octets`: one ``multipart/mixed`` part a name; an
origin without it is asked ``N2R`` a name at a time), :data:`WORKERS`
requests at once over kept-alive connections (:class:`pdi.network.peers._Direct` says why
those of :mod:`http.client` for a plain ``http://`` origin), while the next
manifest page is fetched and checked. Each blob is written as it
arrives straight to where its import takes it
(:meth:`pdi.archive.Archive.write_ahead`), hashed on the way once (its
SHA-256 and chunk digests), and refused unless SHA-256 and size are the
manifest's; one that is, the fetching thread puts at its name, marked as not
yet durable (:meth:`~pdi.archive.blobs.seam.Spooled.place`), so that the
batch's import renames nothing. The
manifest's entry also says (signed) what the record needs besides: media
type, charset, line endings, when it was deposited, how it is stored; from
an origin whose manifests do not, they are read from the name's ``N2C``
description (a second request). New names are brought in a batch at a time (:data:`BATCH_NAMES`
names or :data:`BATCH_OCTETS` octets) through the archive's import, under
the origin's exact names (:meth:`pdi.archive.Archive.import_mirrored`), each
batch one transaction, its blobs made durable together before it commits
(:mod:`pdi.archive.blobs.files`): a sync killed mid-way keeps every batch
committed and the next one fetches only what is not held yet. A held name the
origin lists as withdrawn is withdrawn here too (and purged, if it was
purged there: a legal takedown reaches the copies); one never held is
recorded gone (:meth:`pdi.archive.Archive.withdrawn_at_origin`), so that this
resolver answers it ``410`` as the origin does, not ``404``.

**An SGML document's passages** (``#elt=``) are answered at once, as its
origin answers them: the origin's entry signs the SHA-256 of the parse it
keeps (``element_index``), and the mirror keeps the parse it makes of the
same octets (its own SGML folder first, as a deposit) only if it is byte for
byte that one (:meth:`pdi.archive.Archive.keep_brought_parse`). Else (the
DTD the origin read is not here, or ``onsgmls`` is missing) it keeps the
origin's own (``GET /api/element-index``, :meth:`Peer.element_index`: read
within the bounds of any answer of a peer, and never past the largest
element index pdi makes), only if its SHA-256 is the one signed and it is an
element index of these octets as this pdi reads them; else it says why
(``unparsed``, not a problem) and remembers it (schema step 22): the
syncs that follow neither parse nor ask again before an hour has passed,
doubled at each refusal in a row (a week at most), unless the origin signs
another parse or a DTD is added here (:func:`_keep_parse`). A parse held
here already that is not the origin's is replaced by this one's or the
origin's, if either is, else taken away. An origin that signs none (it keeps
no parse, or an earlier pdi) gets none kept here.

**Private and embargoed names** are copied only by a mirror that reads with
a token of the origin (``pdi mirror add … --token-file``), and kept under
the origin's access rules, which its signed manifest says
(:mod:`pdi.network.mirror_access`); without a token, a mirror holds what
anyone may read there, and withholds here from readers without access a name
held that the origin no longer lists to anyone (hidden there since it was
copied), until it lists it again (:mod:`pdi.network.mirror_access` says when
a sync compares them).

A manifest page that does not verify (changed, or signed by another key),
that is of another series, or that does not start where it was asked to,
stops the sync before anything it lists is fetched; a blob whose octets
differ from the manifest's digest or size is reported and not kept, the
others are; either way the sync ends with :class:`~pdi.errors.IntegrityError`
(exit 3). The bounds on what an origin sends are :mod:`pdi.network.peers`'; a
sync also stops after ``max_seconds`` (:data:`SYNC_SECONDS`), and fetches no name whose
signed size would leave the archive's disk less than its reserve free.
"""

from __future__ import annotations

import contextlib
import datetime
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pdi import formats
from pdi._wording import clipped, plural, shown_url
from pdi.archive.blobs import Octets
from pdi.archive.blobs.seam import Spooled
from pdi.archive.fixity import LINE_ENDINGS, Problem
from pdi.archive.mirroring import ParseRefusal
from pdi.archive.naming import (
    key_of,
    parse_pdi,
    record_name,
    timestamp,
    timestamp_problem,
    utc_now,
    versioned_name,
)
from pdi.archive.store import (
    STORED_CANONICAL,
    STORED_EXACT,
    DocumentKey,
    RepresentationRecord,
    WithdrawalRecord,
)
from pdi.errors import (
    ImmutabilityError,
    IntegrityError,
    ParseError,
    PDIError,
)
from pdi.identifier import PDI
from pdi.network.mirror_access import Embargoes, follow_rules
from pdi.signing import Manifest

if TYPE_CHECKING:
    from pdi.archive import Archive
    from pdi.archive.mirroring import MirrorRecord

from pdi.network.peers import WORKERS, Peer, _checked, _client, peer_of, within

__all__ = ["Problems", "SyncReport", "sync"]

#: A sync brings new names in by batches of at most this many names, or octets: one transaction each.
BATCH_NAMES = 1000
BATCH_OCTETS = 256 << 20
#: Names asked for in one ``POST /api/octets``, at most, and about as many octets.
GROUP_NAMES = 250
GROUP_OCTETS = 32 << 20
#: Requests answered ahead of the batch being kept (their blobs written ahead, waiting).
AHEAD = 3 * WORKERS


# --- sync -------------------------------------------------------------------------------------------


@dataclass
class SyncReport:
    """What a sync did: names listed by the origin, new ones kept (and their octets), those held already (before
    the sync, or kept meanwhile by another), withdrawn ones. Each name listed is counted once as new, held
    already, withdrawn, or refused (a problem); a held or withdrawn name whose rule could not be followed here
    (an embargo, a withdrawal) is reported as a problem besides."""

    listed: int = 0
    copied: int = 0
    held: int = 0
    withdrawn: int = 0
    #: Names the origin withdrew that were not withdrawn here yet: withdrawn here too (held), or recorded gone.
    tombstoned: int = 0
    octets: int = 0
    #: The problems found, told as they are found when the sync was given ``tell`` (then only counted here).
    problems: Problems = field(default_factory=lambda: Problems())
    #: Access rules changed here as the origin's signed manifest says (the series' access, embargoes).
    access_changes: int = 0
    #: The embargoes new names come in with, by name (:mod:`pdi.network.mirror_access`), until they are kept.
    embargoes: dict[str, Embargoes] = field(default_factory=dict, repr=False)
    #: New names of a version (or a document) withdrawn here, not copied (:func:`_not_withdrawn_here`): told as
    #: the problems are (kind ``withdrawn-here``), but not problems: the sync goes on, and ends whole.
    withheld: Problems = field(default_factory=lambda: Problems())
    #: The first few of them, for the sync's line in the audit log.
    withheld_names: list[str] = field(default_factory=list, repr=False)
    #: The SHA-256 of the parse the origin keeps of each new SGML name (its signed ``element_index``), until the
    #: name is kept and its parse made here (:func:`_keep_parse`).
    parses: dict[str, str] = field(default_factory=dict, repr=False)
    #: SGML names whose parse made here is not the origin's, or could not be made, and whose origin's parse could
    #: not be kept either (kind ``unparsed``): kept all the same, their ``#elt=`` refused here until a parse
    #: kept is the origin's; told as the problems are, but not problems (the sync ends whole).
    unparsed: Problems = field(default_factory=lambda: Problems())
    #: Try again now the parses of SGML names syncs could not keep lately (``pdi mirror sync --retry-parses``).
    retry_parses: bool = False
    #: Of those, the ones not tried again by this sync (:func:`_keep_parse`): told among the ``unparsed``.
    put_off: int = 0
    #: Read as anyone, with a count of rules changes higher than the one followed before: the versions the origin
    #: lists (withdrawn ones too), each (document, version), gathered from the first page on, to withhold here
    #: those held that it no longer lists once the walk reaches its end (:mod:`pdi.network.mirror_access`).
    listed_versions: set[tuple[DocumentKey, int]] | None = field(default=None, repr=False)
    #: Whether the versions held were compared with those listed (the walk reached the end of a manifest whose
    #: count rose), and how many names were withheld here then, or shown again (listed again after one was).
    compared: bool = False
    hidden: int = 0
    shown_again: int = 0
    #: What an SGML parse here is made with (:meth:`pdi.archive.Archive.parse_state`), read at the first SGML name
    #: of the sync that needs it: once a sync, not once a name (it lists the SGML folder).
    parse_state: str | None = None


class Problems:
    """The problems a sync finds, in order: each told to ``tell`` as it is found and only counted, or (no ``tell``)
    kept. An origin may list ten million names (:data:`~pdi.network.peers.MAX_PAGES` pages), each a problem (of
    another series, say): kept, 100,000 of them took some 40 MiB, so the command tells them as they come."""

    def __init__(self, tell: Callable[[Problem], None] | None = None) -> None:
        self.tell = tell
        self.count = 0
        self._kept: list[Problem] = []

    def append(self, problem: Problem) -> None:
        self.count += 1
        if self.tell is None:
            self._kept.append(problem)
        else:
            self.tell(problem)

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Problem]:
        """Those kept (none, when they were told)."""
        return iter(self._kept)


class _Written:
    """Every blob a sync writes ahead (:meth:`pdi.archive.Archive.write_ahead`, on any of its threads) until it is
    kept or removed: what is left when the sync ends, however it ends (a refusal, an error, Ctrl-C while a
    request's answer waits to be kept), is removed then, so that nothing it was writing stays in ``tmp/``."""

    def __init__(self, archive: Archive) -> None:
        self._write = archive.write_ahead
        self._lock = threading.Lock()
        self._held: dict[int, Spooled] = {}

    def __call__(self, source: Octets) -> Spooled:
        spooled = self._write(source)
        with self._lock:
            self._held[id(spooled)] = spooled
        return spooled

    def settled(self, spooled: Iterable[Spooled]) -> None:
        """These were kept by an import or removed: forgotten."""
        with self._lock:
            for one in spooled:
                self._held.pop(id(one), None)

    def discard_rest(self) -> None:
        with self._lock:
            left, self._held = list(self._held.values()), {}
        for one in left:
            one.discard()


#: Seconds a sync of one series may take, by default (``pdi mirror sync --max-seconds``): a stranger's origin that
#: answers every page just inside each bound would hold it for days; a sync stopped so goes on from there.
SYNC_SECONDS = 86_400.0


def sync(archive: Archive, record: MirrorRecord, progress: Callable[[SyncReport], None] | None = None,
         max_seconds: float | None = SYNC_SECONDS, tell: Callable[[Problem], None] | None = None, *,
         retry_parses: bool = False) -> SyncReport:
    """Copy what ``record``'s origin lists of its series and this archive does not hold yet (module docstring);
    past ``max_seconds`` (``None``: no bound) a :class:`LimitError` once what was fetched is kept. Each problem
    is told to ``tell`` as it is found (and only counted in the report), else kept in the report.
    ``retry_parses``: try again now the parses of SGML names that syncs could not keep lately."""
    report = SyncReport(problems=Problems(tell), withheld=Problems(tell), unparsed=Problems(tell),
                        retry_parses=retry_parses)
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    written = _Written(archive)
    batch: list[tuple[RepresentationRecord, Spooled]] = []
    running: deque[Future[list[Fetched]]] = deque()
    octets = 0
    # read as anyone, a name the origin hides since it was copied is no longer listed: compared when the count rose
    rules_before = archive.origin_rules_followed(record) if record.token_source is None else None

    def take(fetched: list[Fetched]) -> None:
        nonlocal octets
        for one in fetched:
            if isinstance(one, Problem):
                report.problems.append(one)
                continue
            batch.append(one)
            octets += one[0].size
            if len(batch) >= BATCH_NAMES or octets >= BATCH_OCTETS:
                _keep(archive, record, origin, batch, report, written)
                octets = 0
                if progress is not None:
                    progress(report)

    with _client() as client, contextlib.ExitStack() as leftovers:
        leftovers.callback(written.discard_rest)  # last, once every thread has ended
        origin = peer_of(record, client)
        # the threads end first, then the connections they asked over are closed
        with contextlib.closing(origin), ThreadPoolExecutor(WORKERS) as pool, ThreadPoolExecutor(1) as lister:
            bulk = [True]  # the origin answers POST /api/octets (until it says it does not)
            stopped: PDIError | None = None
            pages = _one_ahead(origin.manifest(record.series), lister)
            try:
                try:
                    too_long = (f"the sync of {record.series} from {shown_url(record.base_url)} took more than {max_seconds or 0:g}"
                                " s (--max-seconds): what it fetched is kept, and the next sync goes on from there")
                    for group in _groups(archive, record, origin, within(pages, deadline, too_long), report,
                                         rules_before):
                        running.append(pool.submit(_fetch_group, written, origin, record, group, bulk))
                        while len(running) > AHEAD:
                            take(running.popleft().result())
                except PDIError as exc:  # a manifest page refused: what was fetched before it is kept
                    stopped = exc
                while running:
                    take(running.popleft().result())
                _keep(archive, record, origin, batch, report, written)
                if stopped is None and report.listed_versions is not None:
                    report.hidden = len(archive.withhold_unlisted(record, report.listed_versions))
                    report.compared = True
                report.listed_versions = None
            finally:
                for future in running:  # a failure while keeping: what the requests in flight wrote is removed
                    for one in future.result():
                        if not isinstance(one, Problem):
                            one[1].discard()
                for _, spooled in batch:
                    spooled.discard()
            if progress is not None:
                progress(report)
            if stopped is not None:
                raise stopped
    if report.withheld:  # in the audit log whether the sync ended whole or not
        archive.withheld_from_mirror(record, len(report.withheld), report.withheld_names)
    if not report.problems:
        withheld = f", {len(report.withheld)} withheld (withdrawn here)" if report.withheld else ""
        if report.hidden or report.shown_again:
            withheld += f", {report.hidden} no longer listed withheld here, {report.shown_again} shown again"
        archive.mark_synced(record, f"{report.copied} new of {report.listed} listed, {report.octets} octets{withheld}")
    return report


def _one_ahead(pages: Iterator[Manifest], thread: ThreadPoolExecutor) -> Iterator[Manifest]:
    """The verified pages of ``pages`` in order, the next one asked for and checked on ``thread`` while this one is
    used (its names looked up, fetched, kept): a page refused is raised where it comes, after those before it."""
    following = thread.submit(next, pages, None)
    try:
        while (page := following.result()) is not None:
            following = thread.submit(next, pages, None)
            yield page
    finally:
        following.cancel()


def _kept_as(name: str, parsed: PDI | None) -> str:
    """The name ``name`` (``parsed``) is kept under, as pdi writes it (:func:`~pdi.archive.naming.record_name` of its
    record): what a batch's records are matched by to what the sync learnt of their names (their embargoes, their
    parses). An origin may spell a name otherwise (``1.TEXT.01``, its series in capitals, ``%61``), and what it
    signed of it must follow it all the same: an embargo matched by the name as listed was never brought in, and
    the name was served to anyone until the next sync."""
    if parsed is None or parsed.format is None or parsed.version is None:
        return name
    try:
        return versioned_name(key_of(parsed), formats.canonical_token(parsed.format), parsed.version)
    except PDIError:  # no record is made of it either (_record refuses it)
        return name


#: A manifest entry to fetch, with its name as :func:`_wanted` parsed it.
Wanted = tuple[Mapping[str, Any], PDI]

#: What fetching one name comes to: its record and octets written ahead, or a problem.
Fetched = tuple[RepresentationRecord, Spooled] | Problem


def _groups(archive: Archive, record: MirrorRecord, origin: Peer, pages: Iterable[Manifest], report: SyncReport,
            rules_before: int | None = None) -> Iterator[list[Wanted]]:
    """The entries to fetch with their names parsed, page after page, in groups of :data:`GROUP_NAMES` names or
    :data:`GROUP_OCTETS`. Read as anyone, and the first page's count of rules changes higher than
    ``rules_before`` (the one followed before the sync), the versions listed are gathered in ``report.listed_versions``."""
    first = True
    for page in pages:
        group: list[Wanted] = []
        octets = 0
        parsed: dict[str, PDI] = {}
        # an older page replayed is refused before anything of it is followed or fetched (its withdrawals, the
        # parses of names held, which _wanted follows and asks for): it would lift the rules set since
        archive.follow_origin_rules_count(record, page.rules)
        if first and record.token_source is None and page.rules is not None and (
                rules_before is None or page.rules > rules_before):
            report.listed_versions = set()
        first = False
        shown: list[str] = []
        wanted, embargoes, changed = follow_rules(archive, record, page,
                                                  _wanted(archive, record, origin, page, report, parsed), report.problems.append,
                                                  parsed, shown)
        report.access_changes += changed
        report.shown_again += len(shown)
        if report.listed_versions is not None:
            _gather_listed(page, parsed, report.listed_versions)
        for name, version, until in embargoes:
            report.embargoes.setdefault(_kept_as(name, parsed.get(name)), []).append((name, version, until))
        asked = 0  # octets of this page's names asked for so far: not on the disk yet
        room: int | None = None
        for entry in wanted:
            if not group:  # the disk asked at each group's start, not each name's (10,000 statvfs in a sync)
                room = archive.blob_room()
            if room is not None and int(entry["size"]) > room - asked:
                report.problems.append(Problem("unfetched", str(entry["sha256"]), (str(entry["name"]),),
                                               f"from {shown_url(record.base_url)}: its {int(entry['size']):,} octets would leave"
                                               " this archive's disk less than its reserve free (not fetched)"))
                continue
            asked += int(entry["size"])
            group.append((entry, parsed[str(entry["name"])]))
            octets += int(entry["size"])
            if len(group) >= GROUP_NAMES or octets >= GROUP_OCTETS:
                yield group
                group, octets = [], 0
        if group:
            yield group


def _gather_listed(page: Manifest, parsed: Mapping[str, PDI], listed: set[tuple[DocumentKey, int]]) -> None:
    """Add to ``listed`` each version ``page`` lists, withdrawn or not (its name parsed already, or parsed now):
    one whose name is no name, or has no version, names nothing held here."""
    for entry in page.names:
        name = entry.get("name")
        if not isinstance(name, str):
            continue
        one = parsed.get(name)
        if one is None:
            try:
                one = parse_pdi(name)
            except PDIError:
                continue
        if one.version is not None:
            listed.add((key_of(one), one.version))


def _fetch_group(write: Callable[[Octets], Spooled], origin: Peer, record: MirrorRecord, group: list[Wanted],
                 bulk: list[bool]) -> list[Fetched]:
    """The records and octets of a group of new names (on a worker thread): in one request, or N2R each, each
    written ahead by ``write``."""
    records: list[RepresentationRecord | Problem] = []
    for entry, parsed in group:
        name, sha256, size = str(entry["name"]), str(entry["sha256"]), int(entry["size"])
        try:
            # the signed entry says all a record needs; an origin whose manifests do not, its N2C description
            signed = "created_at" in entry and "media_type" in entry
            records.append(_record(name, parsed, sha256, size,
                                   _from_entry(entry) if signed else origin.description(name)))
        except PDIError as exc:
            records.append(_problem(record, name, sha256, exc))
    asked = [e for (e, _), r in zip(group, records, strict=True) if not isinstance(r, Problem)]
    got = origin.octets_of(asked, write) if bulk[0] and asked else None
    if got is None:
        bulk[0] = False
        got = [_one(write, origin, e) for e in asked]
    answers = iter(got)
    fetched: list[Fetched] = []
    for (entry, _), rec in zip(group, records, strict=True):
        if isinstance(rec, Problem):
            fetched.append(rec)
            continue
        one = next(answers)
        if isinstance(one, PDIError):
            fetched.append(_problem(record, str(entry["name"]), rec.sha256, one))
            continue
        one.place()  # checked against its signed digest: at its name now, here, not on the thread that keeps it
        fetched.append((rec, one))
    return fetched


def _one(write: Callable[[Octets], Spooled], origin: Peer, entry: Mapping[str, Any]) -> Spooled | PDIError:
    """One name's octets by N2R, written ahead by ``write`` and checked against its entry."""
    name, sha256, size = str(entry["name"]), str(entry["sha256"]), int(entry["size"])
    try:
        return _checked(write(origin.n2r_pieces(name, size)), name, sha256, size, origin.base)
    except PDIError as exc:
        return exc


def _problem(record: MirrorRecord, name: str, sha256: str, exc: PDIError) -> Problem:
    kind = "altered" if isinstance(exc, IntegrityError) else "unfetched"
    return Problem(kind, sha256, (name,), f"from {shown_url(record.base_url)}: {exc} (not kept)")


def _wanted(archive: Archive, record: MirrorRecord, origin: Peer, page: Manifest, report: SyncReport,
            parsed_names: dict[str, PDI]) -> list[Mapping[str, Any]]:
    """The entries of a verified page this archive does not hold yet (those held with another digest: problems);
    the name of each versioned entry that is not withdrawn (held or not) parsed, in ``parsed_names``."""
    listed: list[Mapping[str, Any]] = []
    parsed_listed: list[PDI] = []
    for entry in page.names:
        report.listed += 1
        name = str(entry["name"])
        try:
            if not isinstance(entry["name"], str):
                raise ParseError("its name is not a string", rule="manifest")
            parsed = parse_pdi(name)
            if parsed.series_name.lower() != record.series:  # withdrawn or not: the origin speaks for its own
                raise ParseError(f"a name of another series than {record.series}", rule="mirror-name")
            _within_catalog(parsed)
        except PDIError as exc:
            report.problems.append(Problem("manifest-name", "", (name[:200],), f"listed by {shown_url(record.base_url)}: {exc}"))
            continue
        if "withdrawn" in entry:
            report.withdrawn += 1
            _withdraw(archive, record, name, entry, report)
            continue
        try:
            if parsed.format is None or parsed.version is None:
                raise ParseError(f"{name} is not a versioned name (a format and a version)", rule="mirror-name")
            if not _digest_and_size(entry):
                raise ParseError("its sha256 and size are not 64 hex digits and a whole number of octets",
                                 rule="manifest")
        except PDIError as exc:
            report.problems.append(Problem("manifest-name", "", (name[:200],), f"listed by {shown_url(record.base_url)}: {exc}"))
            continue
        listed.append(entry)
        parsed_listed.append(parsed)
    held = archive.digests_held(parsed_listed)  # the page's names, one look-up
    wanted: list[Mapping[str, Any]] = []
    for one, parsed, sha256 in zip(listed, parsed_listed, held, strict=True):
        parsed_names[str(one["name"])] = parsed  # also for the access rules of those held (follow_rules)
        parse = one.get("element_index")
        if sha256 is None:
            wanted.append(one)
            if parse is not None:
                report.parses[_kept_as(str(one["name"]), parsed)] = parse
        elif sha256 == one["sha256"]:
            report.held += 1
            if parse is not None:  # held with no parse kept yet (the DTD added since, or a sync stopped): again
                rec = archive.held(str(one["name"]))
                if rec is not None:
                    _keep_parse(archive, record, origin, rec, parse, report)
        else:
            report.problems.append(Problem(
                "conflict", sha256, (str(one["name"]),),
                f"held here with sha256 {sha256}; {shown_url(record.base_url)}'s signed manifest says {one['sha256']}"))
    return _not_withdrawn_here(archive, record, wanted, parsed_names, report)


#: How many of the names a sync withheld its line in the audit log names (the rest counted).
WITHHELD_NAMED = 10


def _not_withdrawn_here(archive: Archive, record: MirrorRecord, wanted: list[Mapping[str, Any]],
                        parsed_names: dict[str, PDI], report: SyncReport) -> list[Mapping[str, Any]]:
    """``wanted`` but the names of a version, or a document, withdrawn here, and those whose octets a version of
    their document withdrawn here holds (one look-up a page): this archive's operator took them out of service (a
    court's order where it is, say), so no format of such a version is copied here, one new at the origin
    neither, as a deposit of one would be refused (:meth:`pdi.archive.Archive.withdrawn_over`). Each is left out
    with a line in the report (``withdrawn-here``), not fetched; the sync goes on with the rest. A withdrawal the
    origin made is not one of these: its manifest lists those names withdrawn (:func:`_withdraw`)."""
    if not wanted:
        return wanted
    wanted = _not_gone_at_origin(archive, record, wanted, parsed_names, report)
    if not wanted:
        return wanted
    over = archive.withdrawn_over([(key_of(parsed_names[str(e["name"])]), int(parsed_names[str(e["name"])].version or 0),
                                    str(e["sha256"])) for e in wanted])
    kept: list[Mapping[str, Any]] = []
    for entry, found in zip(wanted, over, strict=True):
        if found is None:
            kept.append(entry)
        else:
            _withhold(record, str(entry["name"]), str(entry["sha256"]), found, report)
    return kept


def _not_gone_at_origin(archive: Archive, record: MirrorRecord, wanted: list[Mapping[str, Any]],
                        parsed_names: dict[str, PDI], report: SyncReport) -> list[Mapping[str, Any]]:
    """``wanted`` but the names recorded here as withdrawn at the origin before this archive held them (by an
    earlier sync, or earlier in this page), each a ``conflict``: a withdrawal is for ever (a pdi origin lists the
    name withdrawn from then on), so a manifest that lists it live again contradicts what the origin signed, as an
    older page replayed would, and the name stays gone here (``410``) rather than be served again."""
    names: list[tuple[DocumentKey, int, str]] = []
    for entry in wanted:
        parsed = parsed_names[str(entry["name"])]
        try:
            token = formats.canonical_token(str(parsed.format))
        except PDIError:  # a format pdi does not know: refused by name later (_record), and recorded gone never
            token = str(parsed.format)
        names.append((key_of(parsed), int(parsed.version or 0), token))
    kept: list[Mapping[str, Any]] = []
    for entry, gone in zip(wanted, archive.gone_at_origin(names), strict=True):
        if gone is None:
            kept.append(entry)
            continue
        report.problems.append(Problem(
            "conflict", str(entry["sha256"]), (str(entry["name"]),),
            f"{shown_url(record.base_url)}'s signed manifest lists it with sha256 {entry['sha256']}, but it was"
            f" recorded here as withdrawn there at {gone.at}{' (purged)' if gone.purged else ''}: not copied, and"
            " still gone here (an older manifest replayed lists a name so)"))
    return kept


def _withhold(record: MirrorRecord, name: str, sha256: str, found: tuple[WithdrawalRecord, int],
              report: SyncReport) -> None:
    """Leave ``name`` uncopied, the tombstone here that refuses it (``found``: it, and the version it is over)
    said in the report."""
    tombstone, version = found
    own = parse_pdi(name).version == version
    what = ("its document was withdrawn whole here" if tombstone.version is None
            else f"its version {version} was withdrawn here" if own
            else f"version {version} of its document, withdrawn here, holds its octets")
    report.withheld.append(Problem(
        "withdrawn-here", sha256, (name,),
        f"new at {shown_url(record.base_url)}, but {what} at {tombstone.at} (reason: {tombstone.reason}): not"
        " copied; the rest of the sync goes on"))
    if len(report.withheld_names) < WITHHELD_NAMED:
        report.withheld_names.append(name)


#: The numbers a catalog holds are below this (SQLite's and PostgreSQL's 64-bit integers).
CATALOG_NUMBERS = 1 << 63


def _within_catalog(parsed: PDI) -> None:
    """Nothing, when ``parsed``'s daily serial and version are numbers a catalog holds; else a :class:`ParseError`
    saying which: a name of version 2**63 is a name (the grammar bounds no number), but no catalog row holds it,
    and the batch it came in would be refused whole, the names of the series signed with it kept by no sync."""
    for what, number in (("daily serial", parsed.serial), ("version", parsed.version)):
        if number is not None and number >= CATALOG_NUMBERS:
            raise ParseError(f"its {what} is past {CATALOG_NUMBERS - 1:,}, the largest number a catalog holds",
                             rule="mirror-name")


#: A SHA-256 as pdi writes it: 64 lower-case hex digits.
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _digest_and_size(entry: Mapping[str, Any]) -> bool:
    """Whether a manifest entry's ``sha256`` is a digest some octets may have (as pdi writes it) and its ``size`` a
    number of octets a catalog holds (from 0 to 2**63 - 1, not ``true``): else no blob can be the entry's, and
    asked for with others it would be refused as their answer's fault."""
    sha256, size = entry.get("sha256"), entry.get("size")
    return (isinstance(sha256, str) and _SHA256.fullmatch(sha256) is not None and type(size) is int
            and 0 <= size < 1 << 63)


def _withdraw(archive: Archive, record: MirrorRecord, name: str, entry: Mapping[str, Any], report: SyncReport) -> None:
    """A name the origin lists as withdrawn is withdrawn here too, if held (purged too, if it was purged there)."""
    try:
        purge = bool(entry.get("purged"))
        at = _withdrawn_at(entry["withdrawn"])
        if archive.held(name) is None:  # never held: its tombstone alone, so that it is gone here too (410)
            if archive.withdrawn_at_origin(record, name, at, purged=purge):
                report.tombstoned += 1
            return
        if archive.withdrawn_here(name) in (("purged",) if purge else ("withdrawn", "purged")):
            return
        archive.withdraw(name, f"withdrawn at its origin {shown_url(record.base_url)} ({at})", purge=purge)
    except PDIError as exc:
        report.problems.append(Problem("unwithdrawn", "", (name[:200],), f"withdrawn at {shown_url(record.base_url)}: {exc}"))
        return
    report.tombstoned += 1


#: When a name was withdrawn, as a manifest says it: a UTC time, to the second or finer.
#: ASCII digits alone: "\d" is any script's digit, and the fraction is not read by fromisoformat below
_WITHDRAWN_AT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?Z")


def _withdrawn_at(value: object) -> str:
    """The ``withdrawn`` of a manifest entry: a real UTC time ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``, not still to come
    (a day's leeway), as the tombstone recorded here says it; else a :class:`ParseError` (nothing is recorded)."""
    if isinstance(value, str) and _WITHDRAWN_AT.fullmatch(value):
        try:
            datetime.datetime.fromisoformat(value[:19])  # a real time: no hour 99, no 30 February
        except ValueError:
            pass
        else:
            if value[:19] <= timestamp(utc_now() + datetime.timedelta(days=1))[:19]:
                return value
    shown = repr(value[:40]) if isinstance(value, str) else type(value).__name__
    raise ParseError(f"when it was withdrawn is a UTC time YYYY-MM-DDTHH:MM:SS[.ffffff]Z, not still to come; not {shown}",
                     rule="manifest")


def _from_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A manifest entry's own fields in the shape of an N2C description (what :func:`_record` reads)."""
    return {"charset": entry.get("charset"), "stored": {
        "media_type": entry.get("media_type"), "line_ending": entry.get("line_ending"),
        "created_at": entry.get("created_at"), "kept": entry.get("stored")}}


def _record(name: str, parsed: PDI, sha256: str, size: int, description: Mapping[str, Any]) -> RepresentationRecord:
    """The catalog record of a mirrored name (and the name parsed): what its name says, its digest and size from
    the signed manifest, and from its description only what the manifest does not carry (each checked for its
    shape)."""
    if parsed.format is None or parsed.version is None or parsed.fragment is not None:
        raise ParseError(f"{name} is not a versioned name", rule="mirror-name")
    token = formats.canonical_token(parsed.format)
    key = key_of(parsed)
    stored = description["stored"]
    media_type, charset = stored.get("media_type"), description.get("charset")
    line_ending, created_at, kept = stored.get("line_ending"), stored.get("created_at"), stored.get("kept")
    if media_type != formats.media_type_for(token):
        raise ParseError(f"{name}: media type {media_type!r} is not that of format {token}", rule="n2c")
    if charset is not None and not isinstance(charset, str):
        raise ParseError(f"{name}: charset {charset!r} is not text", rule="n2c")
    if charset is not None:  # a charset pdi knows, written as pdi stores it (as pdi verify reads the catalog)
        try:
            stored_as = formats.registered_charset(charset)
        except PDIError as exc:
            raise ParseError(f"{name}: {exc}", rule="n2c") from exc
        if stored_as != charset:
            raise ParseError(f"{name}: charset {charset!r} is not written as pdi stores it ({stored_as})", rule="n2c")
    # text first: a stranger's [] or {} is in no set (a TypeError, not a refusal)
    if line_ending is not None and (not isinstance(line_ending, str) or line_ending not in LINE_ENDINGS):
        raise ParseError(f"{name}: line endings {clipped(repr(line_ending), 80)} are not a convention pdi records",
                         rule="n2c")
    if not isinstance(created_at, str):
        raise ParseError(f"{name}: created_at {created_at!r} is not a catalog timestamp", rule="n2c")
    wrong = timestamp_problem(created_at)  # a real time, neither before its name's day nor after today
    if wrong is None and created_at[:10] < key.day.isoformat():
        wrong = f"it was made at {created_at}, before its name's day {key.day.isoformat()}"
    elif wrong is None and created_at > timestamp(utc_now() + datetime.timedelta(days=1)):
        wrong = f"it was made at {created_at}, which is still to come"
    if wrong is not None:
        raise ParseError(f"{name}: {wrong}", rule="n2c")
    if kept not in (STORED_EXACT, STORED_CANONICAL):
        raise ParseError(f"{name}: kept {kept!r} is neither {STORED_EXACT} nor {STORED_CANONICAL}", rule="n2c")
    return RepresentationRecord(
        series=key.series, day=key.day, unique_id=key.unique_id, serial=parsed.serial, version=parsed.version,
        format=token, media_type=media_type, charset=charset, line_ending=line_ending, sha256=sha256, size=size,
        created_at=created_at, stored=kept)


#: How long after a sync could not keep an SGML name's parse the next one tries again (unless the origin signs
#: another parse, or what this archive parses with changes): an hour, doubled at each refusal in a row, a week at
#: most. Each try may run onsgmls for up to 30 s and fetch the origin's parse.
RETRY_FIRST = datetime.timedelta(hours=1)
RETRY_MOST = datetime.timedelta(days=7)


def retry_after(refusals: int) -> datetime.timedelta:
    """How long after the last of ``refusals`` refusals in a row of a parse a sync tries it again."""
    return min(RETRY_FIRST * (1 << min(refusals - 1, 20)), RETRY_MOST)


def _keep_parse(archive: Archive, record: MirrorRecord, origin: Peer, rec: RepresentationRecord, parse: object,
                report: SyncReport) -> None:
    """Keep a parse of the SGML name ``rec`` whose SHA-256 is ``parse``, the one ``record``'s origin signed of its
    own: the one made here if it is that one, else the origin's (:meth:`Peer.element_index`) if it is and is one of
    these octets (:meth:`pdi.archive.Archive.keep_brought_parse`); else say why not (``unparsed``), and remember it
    (:meth:`pdi.archive.Archive.remember_parse_refusal`): the syncs that follow neither parse nor ask the origin
    again before :func:`retry_after` (they say so), unless the origin signs another parse, what this archive
    parses with changes (:meth:`pdi.archive.Archive.parse_state`: a DTD added, onsgmls installed), a parse is kept
    here meanwhile, or the sync is told to (``retry_parses``)."""
    name = str(record_name(rec))
    origin_url = shown_url(record.base_url)
    if not (isinstance(parse, str) and _SHA256.fullmatch(parse) is not None):
        report.unparsed.append(Problem("unparsed", rec.sha256, (name,), "kept, but its #elt= is refused here: its"
                                       f" element_index is not 64 hex digits (from {origin_url})"))
        return
    now = utc_now()
    if report.parse_state is None:
        report.parse_state = archive.parse_state()
    here = report.parse_state
    last = archive.parse_refusal(rec)
    same = last is not None and last.origin_parse == parse and last.here == here
    if (last is not None and same and not report.retry_parses and timestamp(now) < last.retry_at
            and not archive.keeps_parse(rec)):
        report.put_off += 1
        report.unparsed.append(Problem(
            "unparsed", rec.sha256, (name,),
            f"kept, but its #elt= is refused here: {last.why} (from {origin_url}); not tried again until"
            f" {last.retry_at[:19]}Z ({plural(last.refusals, 'sync')} in a row could not keep it, the last at"
            f" {last.refused_at[:19]}Z), unless the origin signs another parse or a DTD is added here"
            " (pdi mirror sync --retry-parses tries now)"))
        return
    why = archive.keep_brought_parse(rec, origin_sha256=parse)
    if why is not None:  # not made here as the origin made it: the origin's own, checked
        try:
            carried = origin.element_index(name, parse, rec.size)
            why = archive.keep_brought_parse(rec, carried=carried, origin_sha256=parse)
        except PDIError as exc:
            why = f"{why}; nor is the origin's parse kept: {exc}"
    if why is None:
        if last is not None:
            archive.remember_parse_refusal(rec, None)
        return
    refusals = last.refusals + 1 if last is not None and same else 1
    retry_at = timestamp(now + retry_after(refusals))
    archive.remember_parse_refusal(rec, ParseRefusal(parse, here, refusals, timestamp(now), retry_at, why[:4000]))
    report.unparsed.append(Problem(
        "unparsed", rec.sha256, (name,),
        f"kept, but its #elt= is refused here: {why} (from {origin_url}); tried again from {retry_at[:19]}Z, or"
        " once the origin signs another parse or a DTD is added here"))


def _one_digest_each(archive: Archive, record: MirrorRecord, batch: list[tuple[RepresentationRecord, Spooled]],
                     report: SyncReport, written: _Written, *, held_too: bool = False) -> None:
    """Leave out of ``batch`` (a problem each, its octets removed) each record of a name that an earlier record of
    the batch is of with another digest, or (``held_too``) that is held here with another digest (kept since the
    sync looked its page's names up): an origin may list one name spelt two ways (``1.text.1``, ``1.TEXT.01``:
    each a name of its own to :func:`_wanted`) with two digests, and the catalog refused the batch whole for the
    second, at each sync again. The first the origin listed is kept. The catalog is asked only once it refused a
    batch (``held_too``), not each batch (``CHANGELOG.md`` gives the CPU measured both ways)."""
    held = archive.digests_held([record_name(rec) for rec, _ in batch]) if held_too else [None] * len(batch)
    first: dict[tuple[DocumentKey, int, str], str] = {}
    keeping: list[tuple[RepresentationRecord, Spooled]] = []
    for (rec, spooled), here in zip(batch, held, strict=True):
        which = (DocumentKey(rec.series, rec.day, rec.unique_id), rec.version, rec.format)
        earlier = first.setdefault(which, rec.sha256)
        if (here is None and earlier == rec.sha256) or here == rec.sha256:
            keeping.append((rec, spooled))
            continue
        origin = shown_url(record.base_url)
        why = (f"held here with sha256 {here}; {origin}'s signed manifest says {rec.sha256}" if here is not None else
               f"{origin}'s signed manifest lists it twice, spelt otherwise, with sha256 {earlier} first (kept) and"
               f" {rec.sha256}")
        report.problems.append(Problem("conflict", rec.sha256, (str(record_name(rec)),), why))
        spooled.discard()
        written.settled([spooled])
    batch[:] = keeping


def _keep(archive: Archive, record: MirrorRecord, origin: Peer, batch: list[tuple[RepresentationRecord, Spooled]],
          report: SyncReport, written: _Written) -> None:
    """One transaction: the batch's names and their octets, as written ahead (then emptied, and ``written``
    told)."""
    if not batch:
        return
    try:
        # looked up again as the batch is kept: a version withdrawn here since its names were asked for
        # (import_mirrored refuses one withdrawn after this, the whole batch then, which the next sync keeps)
        over = archive.withdrawn_over([(DocumentKey(rec.series, rec.day, rec.unique_id), rec.version, rec.sha256)
                                       for rec, _ in batch])
        if any(tombstone is not None for tombstone in over):
            keeping: list[tuple[RepresentationRecord, Spooled]] = []
            for (rec, spooled), tombstone in zip(batch, over, strict=True):
                if tombstone is None:
                    keeping.append((rec, spooled))
                    continue
                _withhold(record, str(record_name(rec)), rec.sha256, tombstone, report)
                report.embargoes.pop(str(record_name(rec)), None)
                spooled.discard()
                written.settled([spooled])
            batch[:] = keeping
        _one_digest_each(archive, record, batch, report, written)
        embargoes = ([one for rec, _ in batch for one in report.embargoes.pop(str(record_name(rec)), ())]
                     if report.embargoes else [])
        try:
            kept = archive.import_mirrored(record, batch, embargoes)
        except ImmutabilityError:  # a name kept by an earlier batch with another digest (spelt otherwise): once
            _one_digest_each(archive, record, batch, report, written, held_too=True)
            kept = archive.import_mirrored(record, batch, embargoes)
        for rec, _ in (batch if report.parses else ()):  # each SGML name's parse made here, kept if it is its origin's
            parse = report.parses.pop(str(record_name(rec)), None)  # (one transaction each)
            if parse is not None:
                _keep_parse(archive, record, origin, rec, parse, report)
        # only what this sync kept counts as new: a name kept meanwhile (by another sync of the series, or listed
        # twice) is held already, its octets not counted
        report.copied += len(kept)
        report.held += len(batch) - len(kept)
        report.octets += sum(rec.size for rec in kept)
    finally:
        for _, spooled in batch:
            spooled.discard()  # taken by the import, or not needed: removed
        written.settled(spooled for _, spooled in batch)
        batch.clear()
