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

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pdi import formats
from pdi.archive.base import ArchiveBase
from pdi.archive.blobs import Octets
from pdi.archive.blobs.seam import BlobSource, Spooled
from pdi.archive.catalog.mirrors import MIRROR_ROLES, MirrorRecord, MirrorWithdrawal
from pdi.archive.naming import canonical_series, key_of, parse_pdi, record_name, timestamp
from pdi.archive.store import AuditRecord, RepresentationRecord, SeriesRecord
from pdi.errors import AccessError, IntegrityError, NotFoundError, ParseError

if TYPE_CHECKING:
    from pdi.archive.tokens import Writer

__all__ = ["MirrorRecord", "Mirroring", "base_url"]


def base_url(text: str) -> str:
    """An archive's base URL as recorded: ``http(s)://host[:port][/path]``, no query, no trailing ``/``."""
    import httpx  # its URL rules (lower-case host, default port left out), not a request

    try:
        url = httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise ParseError(f"a resolver's base URL is http(s)://host[:port][/path], not {text[:200]!r}: {exc}",
                         text=text[:200], rule="base-url") from exc
    if url.scheme not in ("http", "https") or not url.host or url.query or url.fragment:
        raise ParseError(f"a resolver's base URL is http(s)://host[:port][/path], not {text[:200]!r}",
                         text=text[:200], rule="base-url")
    return str(url).rstrip("/")


class Mirroring(ArchiveBase):
    """The archive's mirrors and peers, mirrored names, and blobs repaired."""

    def add_mirror(self, series: str, base_url: str, role: str, jwk: str, *, writer: Writer | None = None,
                   ) -> MirrorRecord:
        """Record that the archive at ``base_url`` is ``series``' origin (this archive mirrors it; the series is
        registered here if it is not) or a peer holding a copy, with its public key ``jwk`` pinned. A ``writer``
        (a mirror announcing itself over HTTP) records only a peer of a registered series its token covers
        (role ``mirror``)."""
        if role not in MIRROR_ROLES:
            raise ParseError(f"a mirror's role is one of {', '.join(MIRROR_ROLES)}, not {role!r}", rule="mirror-role")
        canonical = canonical_series(series)
        if writer is not None:
            writer.require("mirror", canonical)
            if role != "peer":
                raise ParseError("an archive announces itself as a peer holding a copy, never as an origin",
                                 rule="mirror-role")
            if self.store.get_series(canonical) is None:
                raise NotFoundError(f"series {canonical} is not registered here")
        if role == "origin" and self.store.get_series(canonical) is None:
            self.store.add_series(SeriesRecord(canonical, None, base_url, timestamp(self.now())))
        record = MirrorRecord(canonical, base_url, role, jwk, timestamp(self.now()))
        self.store.add_mirror(record, AuditRecord(timestamp(self.now()), writer.name if writer else self.who,
                                                  f"mirror-{role}", canonical, f"{base_url} (key {jwk})",
                                                  writer.address if writer else None))
        return record

    def remove_mirror(self, series: str, base_url: str, *, writer: Writer | None = None) -> None:
        """Forget that the archive at ``base_url`` holds ``series``; a ``writer`` (a mirror withdrawing its
        announcement) only a peer, of a series its token covers (role ``mirror``)."""
        canonical = canonical_series(series)
        if writer is not None:
            writer.require("mirror", canonical)
            if any(m.base_url == base_url and m.role == "origin" for m in self.store.list_mirrors(canonical)):
                raise AccessError(f"{base_url} is the origin {canonical} is mirrored from here, not a peer that"
                                  " announced itself: pdi mirror remove forgets it")
        self.store.remove_mirror(canonical, base_url, AuditRecord(
            timestamp(self.now()), writer.name if writer else self.who, "mirror-remove", canonical, base_url,
            writer.address if writer else None))

    def mirrors(self, series: str | None = None) -> list[MirrorRecord]:
        """The recorded origins and peers (of ``series``), origins first."""
        return self.store.list_mirrors(None if series is None else canonical_series(series))

    def mark_synced(self, record: MirrorRecord, detail: str) -> None:
        self.store.mark_synced(record.series, record.base_url, AuditRecord(
            timestamp(self.now()), self.who, "mirror-sync", record.series, f"from {record.base_url}: {detail}"))

    def held(self, name: str) -> RepresentationRecord | None:
        """The catalog's record of the versioned ``name``, or ``None`` when this archive does not hold it."""
        parsed = parse_pdi(name)
        if parsed.format is None or parsed.version is None:
            raise ParseError(f"{name} is not a versioned name (a format and a version)", rule="mirror-name")
        token = formats.canonical_token(parsed.format)
        return next((r for r in self.store.representations(key_of(parsed))
                     if r.version == parsed.version and r.format == token), None)

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
        answers it as gone (:class:`~pdi.errors.WithdrawnError`, 410), as the origin does. Whether it is new."""
        parsed = parse_pdi(name)
        if parsed.format is None or parsed.version is None:
            raise ParseError(f"{name} is not a versioned name (a format and a version)", rule="mirror-name")
        return self.store.record_mirror_withdrawal(MirrorWithdrawal(
            key_of(parsed), parsed.version, formats.canonical_token(parsed.format), at, purged, origin.base_url))

    def import_mirrored(self, origin: MirrorRecord, items: Sequence[tuple[RepresentationRecord, BlobSource]]) -> int:
        """Bring ``items`` in under their origin's exact names, in one transaction (an audit line each new
        document); returns how many representations are new."""
        if not items:
            return 0
        series = self.store.get_series(origin.series)
        known = [] if series is None else [series]

        def new_document(first: RepresentationRecord) -> AuditRecord:
            return AuditRecord(timestamp(self.now()), self.who, "mirror", str(record_name(first, generic=True)),
                               f"from {origin.base_url}")

        return self.store.import_all(known, items, (), new_document=new_document, gapless=False)

    def write_ahead(self, octets: Octets) -> Spooled:
        """A mirrored blob's ``octets`` written ahead of its :meth:`import_mirrored` (which takes it as it is where
        the blob store can), hashed: check its ``info`` against the signed digest first; ``discard`` it after."""
        return self.store.write_ahead(octets)

    def replace_blob(self, sha256: str, octets: Octets, detail: str) -> None:
        """Write the blob ``sha256`` again from ``octets`` (hashed as they are staged: any other digest is
        refused, :class:`IntegrityError`, and nothing is kept), over a damaged or missing copy; an audit line
        ``repair`` says where the octets came from (``detail``)."""
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
