"""Polls and repairs between archives holding a series (``pdi mirror audit``, ``pdi verify --repair``).

An **audit** is LOCKSS's poll: this archive's digests of a series compared
with every recorded origin's and peer's signed manifest, each checked with its
pinned key; copies that agree vouch for each other, and each name they
disagree on is told with who holds which digest. A **repair** fetches a
damaged or missing blob from the series' origin, else a peer, checks it
against the digest that archive's signed manifest lists, and puts it in
place of the stored copy (:meth:`pdi.archive.Archive.replace_blob`). The
transport (a :class:`~pdi.network.peers.Peer`, its manifests) is
:mod:`pdi.network.peers`'.
"""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pdi import formats
from pdi._ascii import ascii_lower
from pdi._wording import clipped, shown_url
from pdi.archive.access import PUBLIC
from pdi.archive.fixity import Problem
from pdi.archive.naming import key_of, parse_pdi, timestamp
from pdi.archive.results import Generic
from pdi.errors import IntegrityError, LimitError, NotFoundError, ParseError, PDIError
from pdi.network.mirrors import _digest_and_size, _kept_as
from pdi.network.peers import Peer, _client, peer_of, within

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence

    import httpx

    from pdi.archive import Archive
    from pdi.archive.mirroring import MirrorRecord

__all__ = ["AuditReport", "Disagreement", "RepairReport", "audit", "repair"]


# --- audit -----------------------------------------------------------------------------------------


@dataclass
class Disagreement:
    """A name whose digest is not the same everywhere: each archive (``here``: this one) and what it holds
    (a SHA-256, ``missing``, ``withdrawn``, or ``unlisted``: read as anyone, a peer did not list a name private or
    under embargo here, which it may hold and withhold as this archive does; or ``hidden``: read as anyone, the
    origin did not list a name this archive holds and shows to anyone, which the origin shows to no one)."""

    name: str
    holders: dict[str, str]


@dataclass
class AuditReport:
    """What an audit of ``series`` found: ``names`` compared, each archive asked (``peers``), those that could not
    be read (``unreachable``, with why), how many names were ``disagreed`` on (each told to the audit's
    ``tell`` as it was found), and, of each peer read without a token, how many names private or under embargo
    here it did not list (``unlisted``, by base URL: not compared with it, it may withhold them as this archive
    does); and, of an origin read without a token, how many names shown here to anyone it did not list
    (``hidden``, by base URL: embargoed or made private there since they were copied, disagreements all the
    same)."""

    series: str
    names: int = 0
    peers: list[str] = field(default_factory=list)
    unreachable: list[tuple[str, str]] = field(default_factory=list)
    disagreed: int = 0
    unlisted: dict[str, int] = field(default_factory=dict)
    hidden: dict[str, int] = field(default_factory=dict)


#: Rows written to the audit's scratch database at once.
_BATCH = 5_000


def _keep(views: sqlite3.Connection, who: int, held: Iterable[tuple[str, str, bool]]) -> None:
    """Write ``who``'s (name, digest, withheld) triples to ``views``, a batch at a time; a name listed twice keeps
    its last."""
    batch: list[tuple[str, int, str, bool]] = []
    for name, digest, withheld in held:
        batch.append((name, who, digest, withheld))
        if len(batch) >= _BATCH:
            views.executemany("INSERT OR REPLACE INTO held VALUES (?, ?, ?, ?)", batch)
            batch.clear()
    views.executemany("INSERT OR REPLACE INTO held VALUES (?, ?, ?, ?)", batch)


def _own(archive: Archive, series: str) -> Iterator[tuple[str, str, bool]]:
    """This archive's names of ``series``, their digests (``withdrawn``), as its manifest lists them, and whether
    it withholds each from anyone (its series not public, or the name under an embargo in force)."""
    after = None
    now = timestamp(archive.now())
    while True:
        page = archive.manifest_page(series, after=after, limit=10_000)
        for entry in page.entries:
            withheld = page.access != PUBLIC or any(until > now for until in entry.get("embargo", {}).values())
            yield str(entry["name"]), "withdrawn" if "withdrawn" in entry else str(entry.get("sha256")), withheld
        if page.next is None:
            return
        after = page.next


def _listed(peer: Peer, series: str, base_url: str) -> Iterator[tuple[str, str, bool]]:
    """The names of ``series`` ``peer``'s signed manifest lists and their digests; no name of another series (an
    origin speaks for its own series alone); a :class:`LimitError` past :data:`AUDIT_SECONDS` or
    :data:`MAX_LISTED` octets, an :class:`IntegrityError` for an entry no name or digest can be (checked as a
    sync checks it: :func:`_checked_entry`)."""
    own = f"urn:pdi://{series}/"
    too_long = f"reading {base_url}'s manifest of {series} took more than {AUDIT_SECONDS:g} s: given up"
    kept = 0
    for page in within(peer.manifest(series), time.monotonic() + AUDIT_SECONDS, too_long):
        for entry in page.names:
            name = entry.get("name")
            if isinstance(name, str) and not ascii_lower(name).startswith(own):  # (str.lower makes K a k)
                continue
            checked, digest = _checked_entry(entry, series)
            kept += len(checked) + len(digest)
            if kept > MAX_LISTED:
                raise LimitError(f"its signed manifest of {series} lists more than {MAX_LISTED:,} octets of names and"
                                 " digests, more than an audit keeps: given up")
            yield checked, digest, False


def _checked_entry(entry: Mapping[str, Any], series: str) -> tuple[str, str]:
    """An entry's name (spelt as pdi writes it) and digest (``withdrawn``) once its name is a versioned name of ``series`` and its ``sha256`` and
    ``size`` what a blob's can be (as a sync checks them, :mod:`pdi.network.mirrors`); else an
    :class:`IntegrityError` naming the entry (its first 200 characters) and what is wrong."""
    name = entry.get("name")
    shown = repr(name[:200]) if isinstance(name, str) else "an entry"
    try:
        if not isinstance(name, str):
            raise ParseError("its name is not a string", rule="manifest")
        parsed = parse_pdi(name)
        if parsed.format is None or parsed.version is None:
            raise ParseError("it is not a versioned name (a format and a version)", rule="mirror-name")
        if "withdrawn" not in entry and not _digest_and_size(entry):
            raise ParseError("its sha256 and size are not 64 hex digits and a whole number of octets",
                             rule="manifest")
    except PDIError as exc:
        raise IntegrityError(f"its signed manifest of {series} lists {shown}: {exc}: refused") from None
    # as pdi writes it: a peer that spells a name otherwise (1.TEXT.01, %61) names the same version, not another
    return _kept_as(name, parsed), "withdrawn" if "withdrawn" in entry else str(entry["sha256"])


#: Octets of names and digests an audit keeps of one peer's manifest (on disk): some ten million of pdi's names, of
#: the 80 GB a peer's 10,000 pages of 8 MiB may list.
MAX_LISTED = 2 << 30
#: Seconds an audit may spend reading one peer's manifest, and a repair searching one peer's manifest of a day for a
#: name: a peer that answers each page just inside every bound is given up then (``unreachable``, ``unrepaired``).
AUDIT_SECONDS = 3600.0
REPAIR_SECONDS = 300.0


def audit(archive: Archive, series: str, tell: Callable[[Disagreement], None]) -> AuditReport:
    """Compare this archive's digests of ``series`` with every recorded peer's (and origin's) signed manifest,
    LOCKSS-style: every name one of them lists with a digest another does not hold the same is a disagreement,
    told to ``tell`` as it is found, in the order of the names (``tell=found.append`` keeps them all).
    A peer whose manifest cannot be had, does not verify with its pinned key, or takes more than
    :data:`AUDIT_SECONDS` is ``unreachable`` (with why); a name it lists of another series is no name of this
    audit (an origin speaks for its own series alone).

    What each archive holds is kept in a temporary database on disk, not in memory: a peer may list up to
    :data:`~pdi.network.peers.MAX_PAGES` pages of names (ten million), which as Python objects took gigabytes."""
    records = archive.mirrors(series)
    if not records:
        raise NotFoundError(f"no origin nor peer is recorded for {series} (pdi mirror add)")
    report = AuditReport(records[0].series)
    whos = ["here"]  # who each row's number stands for; a peer given up keeps its number, and no row
    reached = [0]
    anonymous: set[int] = set()  # the peers read without a token: a name withheld here may be withheld there
    # the origin, read without a token: a pdi origin lists every name it minted (withdrawn ones too) to whoever may
    # read it, so one it does not list to anyone is one it shows to no one now, not one it lost
    origin_as_anyone: set[int] = set()
    strangers = set(archive.announced_peers())
    with contextlib.closing(sqlite3.connect("")) as views, _client() as client, \
            _client(public_only=True) as public:  # "": a private file on disk
        views.execute("CREATE TABLE held (name TEXT NOT NULL, who INTEGER NOT NULL, digest TEXT NOT NULL,"
                      " withheld INTEGER NOT NULL, PRIMARY KEY (name, who)) WITHOUT ROWID")
        _keep(views, 0, _own(archive, report.series))
        for record in records:
            report.peers.append(record.base_url)
            who = len(whos)
            whos.append(record.base_url)
            try:
                _keep(views, who, _listed(_peer(record, strangers, client, public), report.series, record.base_url))
            except PDIError as exc:
                views.execute("DELETE FROM held WHERE who = ?", (who,))
                report.unreachable.append((record.base_url, str(exc)))
                continue
            reached.append(who)
            if record.token_source is None:
                anonymous.add(who)
                if record.role == "origin":
                    origin_as_anyone.add(who)
        views.commit()
        name: str | None = None
        holders: dict[int, str] = {}
        unasked: set[int] = set()
        for row_name, who, digest, withheld in views.execute(
                "SELECT name, who, digest, withheld FROM held ORDER BY name, who"):
            if row_name != name:
                _told(report, name, _gone_here(archive, name, holders), whos, reached, tell, unasked, origin_as_anyone)
                name, holders, unasked = row_name, {}, set()
                report.names += 1
            holders[who] = digest
            if withheld:  # here's row, the first of the name
                unasked = anonymous
        _told(report, name, _gone_here(archive, name, holders), whos, reached, tell, unasked, origin_as_anyone)
    return report


def _gone_here(archive: Archive, name: str | None, holders: dict[int, str]) -> dict[int, str]:
    """``holders`` with this archive's (number 0) ``withdrawn`` when it holds no copy of ``name`` that another lists
    withdrawn, and a sync recorded it so: withdrawn at the origin before this archive held it, never copied, and
    answered gone (``410``) here as there; its manifest lists only what it holds. One look-up such a name, few."""
    if name is None or 0 in holders or "withdrawn" not in holders.values():
        return holders
    try:
        parsed = parse_pdi(name)
        token = formats.canonical_token(str(parsed.format))
    except PDIError:  # a peer's name pdi cannot read as a versioned one: never recorded gone here
        return holders
    [gone] = archive.gone_at_origin([(key_of(parsed), int(parsed.version or 0), token)])
    return holders if gone is None else {0: "withdrawn", **holders}


def _peer(record: MirrorRecord, strangers: set[str], client: httpx.Client, public: httpx.Client) -> Peer:
    """The peer ``record`` names: one that announced itself with a token (in ``strangers``) asked through
    ``public`` (at public addresses only, whatever its host name resolves to), another through ``client``."""
    if record.base_url in strangers:
        return peer_of(record, public, public_only=True)
    return peer_of(record, client)


def _told(report: AuditReport, name: str | None, holders: dict[int, str], whos: list[str], reached: list[int],
          tell: Callable[[Disagreement], None], unasked: Collection[int] = (),
          origin_as_anyone: Collection[int] = ()) -> None:
    """The disagreement on ``name``, if its ``holders`` (by number) differ or some archive reached lacks it; one of
    ``unasked`` (read as anyone, and ``name`` withheld here) that does not list it is ``unlisted``, no holding;
    the origin read as anyone (``origin_as_anyone``) that does not list a name shown here is ``hidden``."""
    if name is None:
        return
    shown_here = holders.get(0) not in (None, "withdrawn") and not unasked

    def absent(who: int) -> str:
        return "unlisted" if who in unasked else "hidden" if who in origin_as_anyone and shown_here else "missing"

    view = {whos[who]: holders.get(who) or absent(who) for who in reached}
    for who in reached:
        if who not in holders and (kind := absent(who)) != "missing":
            counts = report.unlisted if kind == "unlisted" else report.hidden
            counts[whos[who]] = counts.get(whos[who], 0) + 1
    if len({held for held in view.values() if held != "unlisted"}) > 1:
        report.disagreed += 1
        tell(Disagreement(name, view))


# --- repair ----------------------------------------------------------------------------------------


@dataclass
class RepairReport:
    """Each damaged blob put right (its name, and the archive its octets came from), and each that was not."""

    repaired: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


def repair(archive: Archive, problems: Sequence[Problem]) -> RepairReport:
    """For each ``missing`` or ``altered`` blob: from the series' origin, else each peer, the octets of one of its
    names whose digest that archive's signed manifest (of the name's day, checked with its pinned key) lists as
    the catalog's; they replace the stored copy (:meth:`pdi.archive.Archive.replace_blob`, an audit line)."""
    report = RepairReport()
    strangers = set(archive.announced_peers())
    with _client() as client, _client(public_only=True) as public:
        for problem in problems:
            if problem.kind not in ("missing", "altered") or not problem.names:
                continue
            done = None
            why: list[str] = []
            for name in problem.names:
                parsed = parse_pdi(name)
                series = parsed.series_name.lower()
                for record in archive.mirrors(series):
                    try:
                        peer = _peer(record, strangers, client, public)
                        done = _repair_from(archive, peer, name, problem.sha256, parsed.date)
                    except _Unlisted as exc:
                        why.append(f"{shown_url(record.base_url)}: {exc}" + _as_anyone(record))
                        continue
                    except _Withdrawn as exc:
                        why.append(f"{shown_url(record.base_url)}: {exc}")
                        continue
                    except PDIError as exc:
                        why.append(f"{shown_url(record.base_url)}: {exc}")
                        continue
                    if done is not None:
                        break
                    why.append(f"{shown_url(record.base_url)}: its signed manifest does not list {name} with sha256 {problem.sha256}")
                if done is not None:
                    report.repaired.append((name, done))
                    break
            if done is None:
                report.failed.append((problem.names[0], "; ".join(why) or "no origin nor peer is recorded for it"))
    return report


class _Unlisted(Exception):  # no kind of pdi's errors: always caught below, said as its peer's refusal
    """A peer's signed manifest does not list the name a repair asked for at all (caught by the repair, which says
    it as that peer's refusal)."""


class _Withdrawn(Exception):  # as _Unlisted: always caught below
    """A peer's signed manifest lists the name a repair asked for as withdrawn there: it gives no octets of it."""


def _as_anyone(record: MirrorRecord) -> str:
    """What to add to a peer's refusal when ``record`` reads it without a token: it lists no name private or under
    embargo there, which it may hold (the names a mirror keeps under its origin's rules), and how to read them."""
    if record.token_source is not None:
        return ""
    peer = " --peer" if record.role == "peer" else ""
    return (f" (read as anyone: a name private or under embargo there is not listed to this archive; pdi mirror add"
            f" {shown_url(record.base_url)} --series {record.series}{peer} --token-file FILE, a token of that archive,"
            " reads it)")


def _repair_from(archive: Archive, peer: Peer, name: str, sha256: str, day: Any) -> str | None:
    """Put the blob ``sha256`` right from ``peer`` if its signed manifest lists ``name`` with that digest (an
    :class:`_Unlisted` if it does not list ``name`` at all)."""
    listed = None
    pages = peer.manifest(parse_pdi(name).series_name.lower(), day=None if day is None else day.isoformat())
    too_long = f"searching {peer.base}'s manifest for {name} took more than {REPAIR_SECONDS:g} s: given up"
    for page in within(pages, time.monotonic() + REPAIR_SECONDS, too_long):
        listed = next((e for e in page.names if e.get("name") == name), None)
        if listed is not None:
            break
    if listed is None:
        raise _Unlisted(f"its signed manifest does not list {name}")
    if "withdrawn" in listed:  # a withdrawn name's entry signs when, not its digest: its octets are given no more
        # withdrawn here too (a sync followed it), the damaged octets serve no reader: purging them is the way out
        purge = (f" (withdrawn here too: pdi withdraw {name} --purge --reason WHY lets its damaged octets go)"
                 if archive.withdrawn_here(name) == "withdrawn" else "")
        raise _Withdrawn(f"its signed manifest lists {name} as withdrawn there at {clipped(str(listed['withdrawn']))}:"
                         f" it gives its octets to no one{purge}")
    if listed.get("sha256") != sha256 or not isinstance(listed.get("size"), int):
        return None
    located = archive.locate(name)
    size = 0 if isinstance(located, Generic) else located.record.size  # what the catalog recorded: never more
    if listed["size"] != size:
        raise IntegrityError(f"its signed manifest says {name} is {listed['size']} octets; this archive recorded {size}")
    with tempfile.TemporaryFile() as spool:
        peer.octets(name, sha256, size, spool)
        spool.seek(0)
        archive.replace_blob(sha256, spool, f"{name} from {peer.base} (its signed manifest lists this sha256)")
    return peer.base
