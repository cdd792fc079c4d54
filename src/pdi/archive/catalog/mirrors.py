"""Mirrors: which other archives hold a copy of a series (schema step 11), and a damaged blob put right.

A row of ``mirrors`` is an archive this one mirrors a series from (role
``origin``) or one known to hold a copy (``peer``), with the public key
pinned when it was added (:mod:`pdi.network.mirrors` checks every manifest
with it) and, when its names are read with a token, where that token is
kept (``token_source``, schema step 13: a file's path or an environment
variable's name, never the token itself). :meth:`MirrorsPart.replace_blob` writes the octets of a blob again
over a damaged or missing copy (``pdi verify --repair``), in one catalog
transaction with its audit line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pdi._wording import shown_url
from pdi.archive.catalog.base import MAX_PARAMETERS, CatalogBase, timestamp
from pdi.archive.store import AuditRecord, DocumentKey
from pdi.errors import AccessError, ImmutabilityError, NotFoundError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from dataclasses import dataclass

    from pdi.archive.blobs.seam import StagedBlob
else:
    from pdi._later import dataclass

__all__ = ["MIRROR_ROLES", "MirrorRecord", "MirrorWithdrawal", "MirrorsPart"]

#: What another archive is to a series: the one it is mirrored from, or another that holds a copy.
MIRROR_ROLES = ("origin", "peer")


@dataclass(frozen=True)
class MirrorRecord:
    """Another archive holding ``series``: its base URL, ``role`` (origin or peer), pinned JWK (JSON text), and
    where the token its names are read with is kept (``token_source``: ``file:PATH`` or ``env:VARIABLE``;
    ``None``: read as anyone)."""

    series: str
    base_url: str
    role: str
    jwk: str
    added_at: str
    synced_at: str | None = None
    token_source: str | None = None


@dataclass(frozen=True)
class MirrorWithdrawal:
    """A name of a mirrored series withdrawn at its ``origin`` (at ``at``, its octets ``purged`` there or not)
    before this archive held it (schema step 12)."""

    key: DocumentKey
    version: int
    format: str
    at: str
    purged: bool
    origin: str


@dataclass(frozen=True)
class ParseRefusal:
    """The parse of an SGML document a mirror's syncs could not keep (schema step 22): the SHA-256 its origin
    signed (``origin_parse``) and what the mirror parsed with (``here``) when the last of ``refusals`` syncs in a
    row could not, at ``refused_at``, and ``why``; none tries again before ``retry_at`` unless either changed."""

    origin_parse: str
    here: str
    refusals: int
    refused_at: str
    retry_at: str
    why: str


class MirrorsPart(CatalogBase):
    """The ``mirrors`` table, and a blob's octets written again."""

    def add_mirror(self, record: MirrorRecord, audit: AuditRecord) -> None:
        """Record ``record`` (with its audit line); the same again changes nothing, but for another place its
        token is kept (recorded; none given keeps the one recorded, as an announcement over HTTP does); what
        :meth:`mirror_refusal` refuses is refused."""
        with self._write():
            refused, recorded = self._refusal_of(record)
            if refused is not None:
                raise refused
            if recorded is not None:
                if record.token_source is not None and recorded.token_source != record.token_source:
                    self._query("UPDATE mirrors SET token_source = ? WHERE series = ? AND base_url = ?",
                                (record.token_source, record.series, record.base_url))
                    self._insert_audit(audit)
                return
            self._query(
                "INSERT INTO mirrors (series, base_url, role, jwk, added_at, token_source) VALUES (?, ?, ?, ?, ?, ?)",
                (record.series, record.base_url, record.role, record.jwk, record.added_at, record.token_source))
            self._insert_audit(audit)

    def mirror_refusal(self, record: MirrorRecord) -> ImmutabilityError | None:
        """Why :meth:`add_mirror` would refuse ``record`` now, or ``None``: another key or role for an archive
        recorded already, a second origin of a series, or a token's source recorded for another archive (one
        secret is never sent to two). Asked before the other archive is (``pdi mirror add``)."""
        with self._read():
            return self._refusal_of(record)[0]

    def _refusal_of(self, record: MirrorRecord) -> tuple[ImmutabilityError | None, MirrorRecord | None]:
        """Inside a transaction: why ``record`` is refused (or ``None``), and the row recorded already for its
        series and base URL with its role and key (or ``None``)."""
        if record.token_source is not None:
            for (other,) in self._query("SELECT base_url FROM mirrors WHERE token_source = ? AND base_url <> ?",
                                        (record.token_source, record.base_url)):
                return ImmutabilityError(f"{record.token_source} holds the token of {other} already: a token is"
                                         " sent to one archive only (keep this one's in another file or variable)"), None
        rows = self._query("SELECT base_url, role, jwk, token_source FROM mirrors WHERE series = ?", (record.series,))
        for base_url, role, jwk, source in rows:
            if base_url == record.base_url:
                if (role, jwk) == (record.role, record.jwk):
                    return None, MirrorRecord(record.series, str(base_url), str(role), str(jwk), "", None,
                                              None if source is None else str(source))
                return ImmutabilityError(
                    f"{shown_url(record.base_url)} is recorded for {record.series} already as {role} with another key"
                    " or role: pdi mirror remove it first"), None
            if role == "origin" and record.role == "origin":
                return ImmutabilityError(f"{record.series} is mirrored from {shown_url(str(base_url))} already"
                                         " (one origin a series)"), None
        return None, None

    def minted_here(self, series: str) -> int:
        """How many documents ``series`` holds that no sync brought in: a sync names each document it brings in by
        a ``mirror`` line of the audit log (its generic name). Minted before the series was mirrored, or after it
        was mirrored no more (``pdi mirror remove``), they count alike."""
        prefix = f"urn:pdi://{series}/"
        with self._read():
            held = int(self._query("SELECT COUNT(*) FROM documents WHERE series = ?", (series,))[0][0])
            copied = int(self._query(
                "SELECT COUNT(DISTINCT subject) FROM audit_log WHERE action = 'mirror' AND substr(subject, 1, ?) = ?",
                (len(prefix), prefix))[0][0])
        return max(0, held - copied)

    def remove_mirror(self, series: str, base_url: str, audit: AuditRecord, *, recorded_by: str | None = None) -> None:
        """Forget that ``base_url`` holds ``series`` (with its audit line); with ``recorded_by`` (a token's
        ``token:NAME``), only if the audit line that recorded it names that writer, else :class:`AccessError`."""
        with self._write():
            if not self._query("SELECT 1 FROM mirrors WHERE series = ? AND base_url = ?", (series, base_url)):
                raise NotFoundError(f"{base_url} is not recorded as holding {series}")
            if recorded_by is not None:
                who = self._recorder(series, base_url)
                if who != recorded_by:
                    raise AccessError(f"{base_url} was recorded as holding {series} by {who or 'this archive'},"
                                      f" not by {recorded_by}: a token withdraws only its own announcement"
                                      " (the operator's pdi mirror remove forgets another)")
            self._query("DELETE FROM mirrors WHERE series = ? AND base_url = ?", (series, base_url))
            self._insert_audit(audit)

    def _recorder(self, series: str, base_url: str) -> str | None:
        """Who recorded ``base_url`` as holding ``series`` last: the ``who`` of the latest ``mirror-origin`` or
        ``mirror-peer`` audit line of it (its detail begins with the base URL and `` (key ``)."""
        said = f"{base_url} (key "
        rows = self._query("SELECT who, detail FROM audit_log WHERE subject = ? AND action IN ('mirror-origin',"
                           " 'mirror-peer') ORDER BY id DESC", (series,))
        return next((str(who) for who, detail in rows if str(detail).startswith(said)), None)

    def announced_mirrors(self) -> list[str]:
        """The base URLs of the peers that announced themselves with a token (``POST /api/mirrors``: the latest
        audit line recording each names a ``token:``) and that the operator recorded for no series."""
        with self._read():
            rows = [(str(s), str(b)) for s, b in self._query("SELECT series, base_url FROM mirrors")]
            by = {(s, b): self._recorder(s, b) or "" for s, b in rows}
        vouched = {b for (_, b), who in by.items() if not who.startswith("token:")}
        return sorted({b for (_, b), who in by.items() if who.startswith("token:")} - vouched)

    def list_mirrors(self, series: str | None = None) -> list[MirrorRecord]:
        """Every recorded mirror (of ``series``), by series, origins first."""
        where, params = ("WHERE series = ?", (series,)) if series is not None else ("", ())
        with self._read():
            rows = self._query(
                f"SELECT series, base_url, role, jwk, added_at, synced_at, token_source FROM mirrors {where}"
                " ORDER BY series, role, base_url", params)
        return [MirrorRecord(str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]),
                             None if r[5] is None else str(r[5]), None if r[6] is None else str(r[6])) for r in rows]

    def mark_synced(self, series: str, base_url: str, audit: AuditRecord) -> None:
        """Say that a sync of ``series`` from ``base_url`` ended whole, now (with its audit line)."""
        with self._write():
            self._query("UPDATE mirrors SET synced_at = ? WHERE series = ? AND base_url = ?",
                        (timestamp(), series, base_url))
            self._insert_audit(audit)

    def see_origin_rules(self, series: str, base_url: str, rules: int | None) -> int | None:
        """Record that ``base_url``'s signed manifest of ``series`` says its rules have changed ``rules`` times
        (``None``: it does not say), unless a page of it said more before (schema step 25): then nothing is
        recorded and that larger count is returned (an older page, refused); else ``None``. One transaction: two
        syncs at once never record a count smaller than either saw."""
        with self._write():
            # its row locked as it is read (PostgreSQL: FOR UPDATE), so that a sync at once waits for this one's
            # commit and reads its count: else both read the count before, and the smaller one was written last
            rows = self._query("SELECT rules_seen FROM mirrors WHERE series = ? AND base_url = ?" + self.for_update,
                               (series, base_url))
            seen = None if not rows or rows[0][0] is None else int(rows[0][0])
            if seen is not None and (rules is None or rules < seen):
                return seen
            if rules is not None and rules != seen:
                self._query("UPDATE mirrors SET rules_seen = ? WHERE series = ? AND base_url = ?",
                            (rules, series, base_url))
            return None

    def origin_rules_seen(self, series: str, base_url: str) -> int | None:
        """The most changes of its rules ``base_url``'s signed manifest of ``series`` has said (``None``: none yet)."""
        with self._read():
            rows = self._query("SELECT rules_seen FROM mirrors WHERE series = ? AND base_url = ?", (series, base_url))
        return None if not rows or rows[0][0] is None else int(rows[0][0])

    def append_audit(self, audit: AuditRecord) -> None:
        """Append one line to the audit log, in a transaction of its own (what a sync withheld)."""
        with self._write():
            self._insert_audit(audit)

    def record_mirror_withdrawal(self, gone: MirrorWithdrawal) -> bool:
        """Record ``gone`` unless it is already; whether it was new."""
        where = (gone.key.series, gone.key.day.isoformat(), gone.key.unique_id, gone.version, gone.format)
        with self._write():
            if self._query("SELECT 1 FROM mirror_withdrawals WHERE series = ? AND day = ? AND unique_id = ?"
                           " AND version = ? AND format = ?", where):
                return False
            self._query("INSERT INTO mirror_withdrawals (series, day, unique_id, version, format, withdrawn_at, purged,"
                        " origin, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (*where, gone.at, 1 if gone.purged else 0, gone.origin, timestamp()))
        return True

    def mirror_withdrawals(self, key: DocumentKey) -> list[MirrorWithdrawal]:
        """The names of the document ``key`` recorded as withdrawn at the origin before they were held here."""
        with self._read():
            rows = self._query("SELECT version, format, withdrawn_at, purged, origin FROM mirror_withdrawals"
                               " WHERE series = ? AND day = ? AND unique_id = ? ORDER BY version, format",
                               (key.series, key.day.isoformat(), key.unique_id))
        return [MirrorWithdrawal(key, int(v), str(f), str(at), bool(p), str(o)) for v, f, at, p, o in rows]

    def mirror_withdrawn(self, names: Sequence[tuple[DocumentKey, int, str]]) -> dict[int, MirrorWithdrawal]:
        """Those of ``names`` (a document, a version, a format token) recorded as withdrawn at the origin before they
        were held here, by their place in ``names``: one look-up a page of names."""
        found: dict[int, MirrorWithdrawal] = {}
        with self._read():
            for start in range(0, len(names), MAX_PARAMETERS // 6):
                chunk = names[start:start + MAX_PARAMETERS // 6]
                relation, params = self._rows(
                    ("int", "text", "text", "text", "bigint", "text"),
                    [(start + i, key.series, key.day.isoformat(), key.unique_id, version, token)
                     for i, (key, version, token) in enumerate(chunk)])
                for i, at, purged, origin in self._query(
                        "SELECT k.column1, w.withdrawn_at, w.purged, w.origin FROM mirror_withdrawals w JOIN"
                        f" {relation} ON w.series = k.column2 AND w.day = k.column3 AND w.unique_id = k.column4"
                        " AND w.version = k.column5 AND w.format = k.column6", params):
                    key, version, token = names[int(i)]
                    found[int(i)] = MirrorWithdrawal(key, version, token, str(at), bool(purged), str(origin))
        return found

    def parse_refusal(self, sha256: str, media_type: str, charset: str) -> ParseRefusal | None:
        """What the last syncs that could not keep a parse of these octets remember (schema step 22), or ``None``."""
        with self._read():
            rows = self._query("SELECT origin_parse, here, refusals, refused_at, retry_at, why FROM parse_refusals"
                               " WHERE sha256 = ? AND media_type = ? AND charset = ?", (sha256, media_type, charset))
        if not rows:
            return None
        origin_parse, here, refusals, refused_at, retry_at, why = rows[0]
        return ParseRefusal(str(origin_parse), str(here), int(refusals), str(refused_at), str(retry_at), str(why))

    def remember_parse_refusal(self, sha256: str, media_type: str, charset: str, refusal: ParseRefusal | None) -> None:
        """Remember ``refusal`` of these octets in place of what was (``None``: forget it: a parse is kept)."""
        key = (sha256, media_type, charset)
        with self._write():
            if refusal is None:
                self._query("DELETE FROM parse_refusals WHERE sha256 = ? AND media_type = ? AND charset = ?", key)
                return
            # one statement, not a delete and an insert: on PostgreSQL, whose writers are not serialized as
            # SQLite's are, two syncs refusing the same parse at once both inserted, and the second failed on the key
            self._query("INSERT INTO parse_refusals (sha256, media_type, charset, origin_parse, here, refusals,"
                        " refused_at, retry_at, why) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                        " ON CONFLICT (sha256, media_type, charset) DO UPDATE SET origin_parse = excluded.origin_parse,"
                        " here = excluded.here, refusals = excluded.refusals, refused_at = excluded.refused_at,"
                        " retry_at = excluded.retry_at, why = excluded.why",
                        (*key, refusal.origin_parse, refusal.here, refusal.refusals, refusal.refused_at,
                         refusal.retry_at, refusal.why))

    def replace_blob(self, blob: StagedBlob, audit: AuditRecord) -> None:
        """Inside one write transaction: the staged octets of a blob become its stored copy, and ``audit`` is
        appended. Its row of ``blobs`` (a small blob's octets; on PostgreSQL, which upload holds it) is written
        again; a blob file was put in place by staging, over a damaged one."""
        with self._write():
            self._query("DELETE FROM blobs WHERE sha256 = ?", (blob.info.sha256,))
            self._secure([blob])
            self._store_blobs([blob])
            self._insert_audit(audit)
