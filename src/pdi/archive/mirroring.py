"""What a mirror keeps: the archives a series is mirrored from or held by, names brought in exactly as the
origin minted them, and a damaged blob written again from a checked copy.

The network side (fetching, checking signed manifests) is
:mod:`pdi.network.mirrors`; here only what the archive records. Names come
in through the same import a bag of another archive does
(:meth:`pdi.archive.catalog.SQLStore.import_all`): every record under its
origin's exact name, never minted again, all or nothing, identical records
already held kept.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from pdi import formats
from pdi._wording import clipped, plural, shown_url
from pdi.archive.access import check_access
from pdi.archive.base import ArchiveBase
from pdi.archive.blobs import Octets
from pdi.archive.blobs.seam import BlobSource, Spooled
from pdi.archive.catalog.mirrors import MIRROR_ROLES, MirrorRecord, MirrorWithdrawal, ParseRefusal
from pdi.archive.naming import (
    canonical_series,
    generic_text,
    key_of,
    parse_pdi,
    record_name,
    timestamp,
)
from pdi.archive.store import (
    AuditRecord,
    DocumentKey,
    FixityCheck,
    ListQuery,
    RepresentationRecord,
    SeriesRecord,
    WithdrawalRecord,
)
from pdi.errors import AccessError, IntegrityError, NotFoundError, ParseError, PDIError

if TYPE_CHECKING:
    from pdi.archive.tokens import Writer
    from pdi.identifier import PDI

__all__ = ["WITHHELD_UNTIL", "MirrorRecord", "Mirroring", "ParseRefusal", "base_url", "recorded_url"]

#: The end of the embargo a mirror reading its origin as anyone sets on a version held here that the origin no
#: longer lists (:meth:`Mirroring.withhold_unlisted`): "until the origin lists it again", which no date says. The
#: catalog's embargo is an end, and no end at all is none: the last moment a catalog timestamp writes, so that
#: it is an embargo as any other to every reader (N2R, N2Ls, listings, OAI-PMH, search, manifests), and one the
#: mirror tells from an origin's own by its end (the next sync that finds the name listed lifts it).
WITHHELD_UNTIL = "9999-12-31T23:59:59.999999Z"


def base_url(text: str) -> str:
    """An archive's base URL as recorded: ``http(s)://host[:port][/path]``, no query, no trailing ``/``."""
    import httpx  # its URL rules (lower-case host, default port left out), not a request

    shown = shown_url(text)[:200]  # a refusal names it without its userinfo: a password never reaches a log
    try:
        url = httpx.URL(text)
        host = url.host  # an A-label is decoded here, not above: "xn--" is an IDNAError (a UnicodeError)
    except (httpx.InvalidURL, UnicodeError) as exc:
        raise ParseError(f"a resolver's base URL is http(s)://host[:port][/path], not {shown!r}: {exc}",
                         text=shown, rule="base-url") from exc
    if url.scheme not in ("http", "https") or not host or url.query or url.fragment:
        raise ParseError(f"a resolver's base URL is http(s)://host[:port][/path], not {shown!r}",
                         text=shown, rule="base-url")
    if url.userinfo:  # it would be sent as Basic credentials to every archive that reads the URL
        raise ParseError(f"a resolver's base URL names no user or password: {shown!r}",
                         text=shown, rule="base-url")
    if url.port is not None and not 0 < url.port < 65536:
        raise ParseError(f"a resolver's base URL has a port from 1 to 65535, not {url.port} in {shown!r}",
                         text=shown, rule="base-url")
    return str(url).rstrip("/")


def recorded_url(text: str) -> str:
    """The base URL a recorded origin or peer is found by, to forget it: :func:`base_url`, or, for one an earlier
    pdi recorded that it now refuses (a port past 65535, a user in it), the URL as that pdi wrote it."""
    try:
        return base_url(text)
    except ParseError:
        import httpx

        try:
            return str(httpx.URL(text)).rstrip("/")
        except httpx.InvalidURL:
            return text.rstrip("/")


#: The octets of the disk a mirror's sync leaves free, at least (:meth:`Mirroring.blob_room`).
DISK_RESERVE = 1 << 30


class Mirroring(ArchiveBase):
    """The archive's mirrors and peers, mirrored names, and blobs repaired."""

    def add_mirror(self, series: str, base_url: str, role: str, jwk: str, token_source: str | None = None, *,
                   writer: Writer | None = None) -> MirrorRecord:
        """Record that the archive at ``base_url`` is ``series``' origin (this archive mirrors it; the series is
        registered here if it is not) or a peer holding a copy, with its public key ``jwk`` pinned, and where
        the token its names are read with is kept (``token_source``, never the token itself). A ``writer``
        (a mirror announcing itself over HTTP) records only a peer of a registered series its token covers
        (role ``mirror``)."""
        if (wrong := _role_refusal(role)) is not None:
            raise wrong
        canonical = canonical_series(series)
        if writer is not None:
            writer.require("mirror", canonical)
            if role != "peer":
                raise ParseError("an archive announces itself as a peer holding a copy, never as an origin",
                                 rule="mirror-role")
            if self.store.get_series(canonical) is None:
                raise NotFoundError(f"series {canonical} is not registered here")
        if role == "origin" and self.store.get_series(canonical) is None:
            self.store.add_series(SeriesRecord(canonical, None, shown_url(base_url), timestamp(self.now())))
        record = MirrorRecord(canonical, base_url, role, jwk, timestamp(self.now()), token_source=token_source)
        token = f", token from {token_source}" if token_source else ""
        self.store.add_mirror(record, AuditRecord(timestamp(self.now()), writer.name if writer else self.who,
                                                  f"mirror-{role}", canonical, f"{shown_url(base_url)} (key {jwk}){token}",
                                                  writer.address if writer else None))
        return record

    def mirror_refusal(self, series: str, base_url: str, role: str, jwk: str,
                       token_source: str | None = None) -> PDIError | None:
        """Why :meth:`add_mirror` would refuse to record this now (a role not known, another key or role for an
        archive recorded already, a second origin, a token's source recorded for another archive), or ``None``:
        asked before the other archive is, so that what this archive refuses is said first."""
        if (wrong := _role_refusal(role)) is not None:
            return wrong
        return self.store.mirror_refusal(
            MirrorRecord(canonical_series(series), base_url, role, jwk, timestamp(self.now()), token_source=token_source))

    def minted_here(self, series: str) -> int:
        """How many documents of ``series`` this archive holds that it minted itself: those no sync of a mirror
        brought in (before the series was mirrored, or after its origin was removed)."""
        return self.store.minted_here(canonical_series(series))

    def remove_mirror(self, series: str, base_url: str, *, writer: Writer | None = None) -> None:
        """Forget that the archive at ``base_url`` holds ``series``; a ``writer`` (a mirror withdrawing its
        announcement) only a peer its own token announced, of a series its token covers (role ``mirror``): not
        another archive's announcement, nor a peer the operator recorded (else, with the address free, it could
        announce it again with a key of its own, which the ``409`` of :meth:`add_mirror` keeps for the operator)."""
        canonical = canonical_series(series)
        if writer is not None:
            writer.require("mirror", canonical)
            if any(m.base_url == base_url and m.role == "origin" for m in self.store.list_mirrors(canonical)):
                raise AccessError(f"{shown_url(base_url)} is the origin {canonical} is mirrored from here, not a"
                                  " peer that announced itself: pdi mirror remove forgets it")
        self.store.remove_mirror(canonical, base_url, AuditRecord(
            timestamp(self.now()), writer.name if writer else self.who, "mirror-remove", canonical, shown_url(base_url),
            writer.address if writer else None), recorded_by=writer.name if writer else None)

    def announced_peers(self) -> list[str]:
        """The base URLs of the peers that announced themselves over HTTP with a token, not recorded by the
        operator for any series: strangers' host names (a resolver connects to them at public addresses only)."""
        return self.store.announced_mirrors()

    def mirrors(self, series: str | None = None) -> list[MirrorRecord]:
        """The recorded origins and peers (of ``series``), origins first."""
        return self.store.list_mirrors(None if series is None else canonical_series(series))

    def mark_synced(self, record: MirrorRecord, detail: str) -> None:
        self.store.mark_synced(record.series, record.base_url, AuditRecord(
            timestamp(self.now()), self.who, "mirror-sync", record.series, f"from {shown_url(record.base_url)}: {detail}"))

    def parse_refusal(self, record: RepresentationRecord) -> ParseRefusal | None:
        """What the last syncs that could not keep a parse of ``record``'s octets remember, or ``None``."""
        return self.store.parse_refusal(record.sha256, record.media_type, record.charset or "")

    def remember_parse_refusal(self, record: RepresentationRecord, refusal: ParseRefusal | None) -> None:
        """Remember that a sync could not keep a parse of ``record``'s octets (``None``: forget it, one is kept)."""
        self.store.remember_parse_refusal(record.sha256, record.media_type, record.charset or "", refusal)

    def keeps_parse(self, record: RepresentationRecord) -> bool:
        """Whether a parse (an element index) of ``record``'s octets is kept, whoever made it."""
        from pdi.fragments.markup.index import MAGIC

        kept = self.store.fragment_index(record.sha256, record.media_type, record.charset)
        return kept is not None and kept[:4] == MAGIC

    def parse_state(self) -> str:
        """What an SGML parse here is made with (:func:`pdi.archive.sgml_dtds.parse_state`)."""
        from pdi.archive.sgml_dtds import parse_state

        return parse_state(self.store.location)

    def withheld_from_mirror(self, record: MirrorRecord, count: int, names: Sequence[str]) -> None:
        """Say in the audit log (``mirror-withheld``) that a sync of ``record``'s series left ``count`` new names
        of its origin's uncopied, each of a version or a document withdrawn here (the first few ``names``)."""
        shown = ", ".join(names) + (f" and {count - len(names)} more" if count > len(names) else "")
        self.store.append_audit(AuditRecord(
            timestamp(self.now()), self.who, "mirror-withheld", record.series,
            f"from {shown_url(record.base_url)}: {count} new name{'' if count == 1 else 's'} of versions withdrawn"
            f" here not copied: {shown}"))

    def withdrawn_over(self, wanted: Sequence[tuple[DocumentKey, int, str]]) -> list[tuple[WithdrawalRecord, int] | None]:
        """For each (document, version, SHA-256) of ``wanted`` new here, the tombstone here that :meth:`import_mirrored`
        would refuse it for, and the version it is over: its version's or its document's (withdrawn whole,
        version ``None``), or a version of its document withdrawn alone that holds those octets; ``None`` when it
        would be kept. One look-up a page of names."""
        return self.store.withdrawn_over(wanted)

    def held(self, name: str) -> RepresentationRecord | None:
        """The catalog's record of the versioned ``name``, or ``None`` when this archive does not hold it."""
        key, version, token = _versioned(name)
        return next((r for r in self.store.representations(key) if r.version == version and r.format == token), None)

    def digests_held(self, names: Sequence[PDI | str]) -> list[str | None]:
        """The SHA-256 held under each of the versioned ``names`` (as :meth:`held` says, one look-up a page of
        names, not one a name), in their order: ``None`` for one not held; :class:`~pdi.errors.ParseError` if one
        is not versioned. A name parsed already is not parsed again."""
        wanted = [_versioned(name) for name in names]
        held = self.store.digests_held(wanted)
        return [held.get(asked) for asked in wanted]

    def withdrawn_here(self, name: str) -> str | None:
        """``purged`` or ``withdrawn`` when the versioned ``name`` (held) is so here, as a version or with its whole
        document; ``None`` when it is not."""
        parsed = parse_pdi(name)
        if parsed.version is None:
            raise ParseError(f"{name} is not a versioned name (a format and a version)", rule="mirror-name")
        tombstone = self.store.withdrawal(key_of(parsed), parsed.version)
        return None if tombstone is None else "purged" if tombstone.purged else "withdrawn"

    def withdrawn_at_origin(self, origin: MirrorRecord, name: str, at: str, *, purged: bool) -> bool:
        """Record that the versioned ``name``, not held here, was withdrawn at ``origin`` (at ``at``): this archive
        answers it as gone (:class:`~pdi.errors.WithdrawnError`, 410), as the origin does. Whether it is new.
        A :class:`~pdi.errors.AccessError` for a name of another series than ``origin``'s."""
        _of_series(origin, name)
        key, version, token = _versioned(name)
        return self.store.record_mirror_withdrawal(MirrorWithdrawal(key, version, token, at, purged,
                                                                          shown_url(origin.base_url)))

    def gone_at_origin(self, wanted: Sequence[tuple[DocumentKey, int, str]]) -> list[MirrorWithdrawal | None]:
        """For each (document, version, format token) of ``wanted``, what :meth:`withdrawn_at_origin` recorded of
        it (withdrawn at its origin before this archive held it), or ``None``. One look-up a page of names."""
        found = self.store.mirror_withdrawn(wanted)
        return [found.get(i) for i in range(len(wanted))]

    def import_mirrored(self, origin: MirrorRecord, items: Sequence[tuple[RepresentationRecord, BlobSource]],
                        embargoes: Sequence[tuple[str, int | None, str]] = ()) -> list[RepresentationRecord]:
        """Bring ``items`` in under their origin's exact names, in one transaction (an audit line each new
        document), with the ``embargoes`` the origin's signed manifest says they are under (a name, the version
        embargoed or ``None``: its document, until when; an audit line each), so that no reader without access
        may read one of them here even for a moment; returns the records of those that are new (not those held
        already: another sync of the series may have kept them meanwhile, or a name listed twice). A new one of a
        version or a document withdrawn here refuses the batch (:class:`~pdi.errors.WithdrawnError`), as a deposit
        of it would be: a sync leaves those out first (:mod:`pdi.network.mirrors`)."""
        if not items:
            return []
        series = self.store.get_series(origin.series)
        known = [] if series is None else [series]

        at = timestamp(self.now())  # the moment of the batch's import, every audit line of it
        detail = f"from {shown_url(origin.base_url)}"

        def new_document(first: RepresentationRecord) -> AuditRecord:
            return AuditRecord(at, self.who, "mirror", generic_text(first), detail)

        once: dict[tuple[DocumentKey, int | None], tuple[str, str]] = {}
        for name, version, until in embargoes:  # a document's, said with each of its names: once
            once.setdefault((key_of(parse_pdi(name)), version), (name, until))
        keyed = [(key, version, until) for (key, version), (_, until) in once.items()]
        audit = [AuditRecord(at, self.who, "embargo", name, _embargo_detail(version, until),
                             shown_url(origin.base_url))
                 for (_, version), (name, until) in once.items()]
        return self.store.import_all(known, items, (), audit, embargoes=keyed, new_document=new_document,
                                     gapless=False)

    def embargoes_held(self, keys: Sequence[DocumentKey]) -> dict[tuple[DocumentKey, int | None], str]:
        """The embargoes set here on these documents (lifted or not): each document's (version ``None``) and each
        version's, until when."""
        return self.store.embargoes_of(keys)

    def follow_origin_rules_count(self, origin: MirrorRecord, rules: int | None) -> None:
        """Take the count of changes of its access rules a verified page of ``origin``'s manifest signs (``None``:
        it says none), refusing (:class:`~pdi.errors.IntegrityError`, nothing recorded) a page that says fewer
        than one it signed before, or none after one that said: a page older than the rules this mirror follows,
        replayed (a cache, a copy, someone between the two archives) to lift an embargo or open a series the
        origin closed since. Asked before anything the page says is followed or fetched."""
        seen = self.store.see_origin_rules(origin.series, origin.base_url, rules)
        if seen is None:
            return
        said = "does not say how many times its access rules changed" if rules is None else \
            f"says its access rules had changed {plural(rules, 'time')}"
        raise IntegrityError(
            f"{shown_url(origin.base_url)}'s signed manifest of {origin.series} {said}, and a page of it said"
            f" {seen} before: an older page, replayed (a stale cache, or someone between the two archives), whose"
            " rules this mirror does not go back to; refused, and nothing it lists is followed or fetched. An origin"
            " that answers from a read replica behind its primary says an older count too, for a while: if so, the"
            " next sync reads the newer one. If the origin itself went back (restored from a backup), forget and add"
            " it again once its operator says so"
            f" (pdi mirror remove {shown_url(origin.base_url)} --series {origin.series}; pdi mirror add …)")

    def follow_origin_access(self, origin: MirrorRecord, access: str) -> bool:
        """Give the mirrored series the ``access`` its origin's signed manifest says (audited, from the origin's
        address), unless it has it already; whether it changed."""
        record = self.store.get_series(origin.series)
        if record is None or record.access == check_access(access):
            return False
        self.store.set_series_access(origin.series, access, self.who, timestamp(self.now()),
                                      address=shown_url(origin.base_url))
        return True

    def follow_origin_embargo(self, origin: MirrorRecord, name: str, version: int | None, until: str | None) -> None:
        """Embargo the held ``name``'s document (``version`` None) or that version until ``until`` (``None``: lift
        it), as its origin's signed manifest says; audited, from the origin's address. A
        :class:`~pdi.errors.AccessError` for a name of another series than ``origin``'s."""
        _of_series(origin, name)
        self.store.set_embargo(key_of(parse_pdi(name)), version, until, self.who, timestamp(self.now()),
                               subject=name, address=shown_url(origin.base_url))

    def origin_rules_followed(self, origin: MirrorRecord) -> int | None:
        """How many changes of its rules ``origin``'s signed manifest said at most so far (``None``: none yet):
        what :meth:`follow_origin_rules_count` refuses a page below."""
        return self.store.origin_rules_seen(origin.series, origin.base_url)

    def withhold_unlisted(self, origin: MirrorRecord, listed: Collection[tuple[DocumentKey, int]]) -> list[str]:
        """Withhold here from readers without access each version of ``origin``'s series held (not withdrawn here)
        that the origin's whole manifest, read as anyone, no longer lists (``listed``: every version it lists,
        withdrawn ones too): hidden there since it was copied (embargoed, say), so shown here to no one who may
        not read it there either. Each is embargoed until :data:`WITHHELD_UNTIL` (unless it is already), on the
        origin's word: audited, from its address. Returns a name of each version withheld now."""
        series = origin.series
        unlisted: dict[tuple[DocumentKey, int], str] = {}
        for record in self.store.iter_representations(ListQuery(series=series)):
            if record.series != series:
                continue  # a subseries is mirrored (or not) on its own
            key = DocumentKey(record.series, record.day, record.unique_id)
            if (key, record.version) not in listed:
                unlisted.setdefault((key, record.version), str(record_name(record)))
        if not unlisted:
            return []
        keys = list(dict.fromkeys(key for key, _ in unlisted))
        gone = {(t.key, t.version) for t in self.store.withdrawals_of(keys)}
        here = self.store.embargoes_of(keys)
        withheld: list[str] = []
        for (key, version), name in unlisted.items():
            if (key, version) in gone or (key, None) in gone or here.get((key, version)) == WITHHELD_UNTIL:
                continue
            self.follow_origin_embargo(origin, name, version, WITHHELD_UNTIL)
            withheld.append(name)
        return withheld

    def blob_room(self) -> int | None:
        """The octets a blob may still take on the disk that holds this archive's blob files, keeping
        :data:`DISK_RESERVE` (or a twentieth of the disk, if less) free for the catalog and the resolver;
        ``None`` for a store that keeps no files of its own (S3, PostgreSQL's rows): a sync of a stranger's
        series never fills this archive's disk to its last octet."""
        import shutil

        from pdi.archive.blobs.files import FileBlobs

        blobs = self.store.blobs
        if not isinstance(blobs, FileBlobs):
            return None
        try:
            usage = shutil.disk_usage(blobs.root)
        except OSError:
            return None
        return usage.free - min(DISK_RESERVE, usage.total // 20)

    def write_ahead(self, octets: Octets) -> Spooled:
        """A mirrored blob's ``octets`` written ahead of its :meth:`import_mirrored` (which takes it as it is where
        the blob store can), hashed: check its ``info`` against the signed digest first; ``discard`` it after."""
        return self.store.write_ahead(octets)

    def replace_blob(self, sha256: str, octets: Octets, detail: str) -> None:
        """Write the blob ``sha256`` again from ``octets`` (hashed as they are staged: any other digest is
        refused, :class:`IntegrityError`, and nothing is kept), over a damaged or missing copy; an audit line
        ``repair`` says where the octets came from (``detail``), and a fixity check records the blob whole (its
        octets were just hashed), so that the fixity gauges of ``/metrics`` no longer count it damaged."""
        staged = self.store.stage_blob(octets, replace=True)  # over the damaged copy, whatever its size
        if staged.info.sha256 != sha256:
            staged.discard()
            raise IntegrityError(f"the octets fetched for blob {sha256} hash to {staged.info.sha256}: not kept")
        try:
            self.store.replace_blob(staged, AuditRecord(timestamp(self.now()), self.who, "repair", sha256, detail))
        except BaseException:
            staged.discard()
            raise
        staged.close()
        self.store.record_fixity_checks([FixityCheck(sha256, timestamp(self.now()), True)])


def _versioned(name: PDI | str) -> tuple[DocumentKey, int, str]:
    """The document, version and canonical format token the versioned ``name`` names (parsed, unless it is
    already); :class:`~pdi.errors.ParseError` if it is not versioned."""
    parsed = parse_pdi(name)
    if parsed.format is None or parsed.version is None:
        raise ParseError(f"{name} is not a versioned name (a format and a version)", rule="mirror-name")
    return key_of(parsed), parsed.version, formats.canonical_token(parsed.format)


def _embargo_detail(version: int | None, until: str) -> str:
    """An embargo's audit line, as :meth:`pdi.archive.catalog.SQLStore.set_embargo` writes it, and its source."""
    what = "the document" if version is None else f"version {version}"
    return f"{what} until {until} (from its origin's signed manifest)"


def _role_refusal(role: str) -> ParseError | None:
    if role in MIRROR_ROLES:
        return None
    return ParseError(f"a mirror's role is one of {', '.join(MIRROR_ROLES)}, not '{clipped(role)}'", rule="mirror-role")


def _of_series(origin: MirrorRecord, name: str) -> None:
    """Nothing, when ``name`` is of the series ``origin`` is the origin of; else an :class:`AccessError`: an origin's
    signed manifest says what is so of its own series' names, never of another's."""
    if parse_pdi(name).series_name.lower() != origin.series:
        raise AccessError(f"{name[:200]} is not of {origin.series}: {shown_url(origin.base_url)} speaks for that series alone")
