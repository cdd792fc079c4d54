"""A deposit into a PostgreSQL catalog in one round trip.

Daily serials come from a counter row updated inside the deposit's transaction
(``INSERT … ON CONFLICT DO UPDATE … RETURNING``): concurrent minters queue on
that row, and a rolled-back deposit gives its serial back. A deposit with a
new serial whose blobs are in hand (at most 64 KiB each) and whose passages
are few is one round trip: one statement sent outside any transaction, which
PostgreSQL commits before it answers (:meth:`PostgresDeposits.mint`; one format
by the function of schema 14, :data:`DEPOSIT_ONE`, whose plans the server
keeps; more by data-modifying ``WITH`` queries, :func:`_at_once`).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, cast

import psycopg
import psycopg.errors

from pdi.archive.blobs.inline import Inline
from pdi.archive.blobs.large_objects import oneline as _oneline
from pdi.archive.catalog.documents import COUNT_A_DAY
from pdi.archive.postgres.search import _PASSAGES_AT_ONCE
from pdi.archive.postgres.transactions import PostgresTransactions, commit_unknown
from pdi.archive.store import (
    STORED_EXACT,
    DepositResult,
    DocumentKey,
    NewRepresentation,
    WriteNote,
)
from pdi.errors import ImmutabilityError, StoreError

# The removal lock: an advisory lock between what deletes blobs (exclusive) and deposits naming them (shared).
_REMOVAL_LOCK = 0x0B10B6

#: Schema step 14: a deposit of one format whose blob is in hand and which has at most one full-text passage,
#: made by the server in one call (:meth:`PostgresDeposits._mint_at_once`): the statements of
#: :meth:`DocumentsPart.mint <pdi.archive.catalog.documents.DocumentsPart.mint>`, in its order, planned once a
#: connection (PL/pgSQL keeps its plans) rather than parsed and planned at every deposit. The new serial, or
#: ``NULL`` for a series mirrored here (nothing written: only its origin mints in it). A serial a foreign id
#: holds already raises (``PDI01``), so that the increment is not kept. ``p_passages`` ``NULL``: no full-text
#: source; else the source's passages (0 or 1, that one given). The removal lock is :data:`_REMOVAL_LOCK`.

DEPOSIT_ONE = f"""CREATE FUNCTION pdi_deposit_one(
    p_series text, p_day text, p_year integer, p_month integer, p_dom integer, p_at text,
    p_format text, p_media_type text, p_charset text, p_line_ending text,
    p_sha256 text, p_size bigint, p_chunk_size integer, p_chunks bytea, p_data bytea, p_index bytea,
    p_passages integer, p_note text, p_start bigint, p_body text, p_runs bytea
) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v_serial integer;
    v_doc bigint;
BEGIN
    IF EXISTS (SELECT 1 FROM mirrors WHERE series = p_series AND role = 'origin') THEN
        RETURN NULL;
    END IF;
    INSERT INTO daily_serials (series, day, last) VALUES (p_series, p_day, 1)
        ON CONFLICT (series, day) DO UPDATE SET last = daily_serials.last + 1 RETURNING last INTO v_serial;
    INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)
        VALUES (p_series, p_day, p_year, p_month, p_dom, v_serial::text, v_serial, p_at)
        ON CONFLICT (series, day, unique_id) DO NOTHING RETURNING id INTO v_doc;
    IF v_doc IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'PDI01',
            MESSAGE = 'serial ' || v_serial || ' of ' || p_series || ' on ' || p_day || ' is taken';
    END IF;
    INSERT INTO document_days (series, day, documents, last_deposit) VALUES (p_series, p_day, 1, p_at){COUNT_A_DAY};
    INSERT INTO versions (document, version, created_at) VALUES (v_doc, 1, p_at);
    INSERT INTO blob_fixity (sha256, size, chunk_size, chunks, created_at)
        VALUES (p_sha256, p_size, p_chunk_size, p_chunks, p_at) ON CONFLICT (sha256) DO NOTHING;
    PERFORM pg_advisory_xact_lock_shared({_REMOVAL_LOCK});
    INSERT INTO blobs (sha256, data) VALUES (p_sha256, p_data) ON CONFLICT (sha256) DO NOTHING;
    IF p_index IS NOT NULL THEN
        INSERT INTO fragment_indexes (sha256, media_type, charset, data)
            VALUES (p_sha256, p_media_type, coalesce(p_charset, ''), p_index)
            ON CONFLICT (sha256, media_type, charset) DO NOTHING;
    END IF;
    IF p_passages IS NOT NULL THEN
        INSERT INTO search_sources (sha256, media_type, charset, passages, note, indexed_at)
            VALUES (p_sha256, p_media_type, coalesce(p_charset, ''), p_passages, p_note, p_at)
            ON CONFLICT (sha256, media_type, charset) DO NOTHING;
        IF FOUND AND p_passages > 0 THEN
            INSERT INTO search_passages (sha256, media_type, charset, start, body, runs)
                VALUES (p_sha256, p_media_type, coalesce(p_charset, ''), p_start, p_body, p_runs);
        END IF;
    END IF;
    INSERT INTO representations (document, version, format, media_type, charset, line_ending, sha256, size,
        created_at, stored)
        VALUES (v_doc, 1, p_format, p_media_type, p_charset, p_line_ending, p_sha256, p_size, p_at, '{STORED_EXACT}');
    RETURN v_serial::text;
END
$$"""
#: The call of :data:`DEPOSIT_ONE`, its arguments by name.
_DEPOSIT_ONE_CALL = (
    "SELECT pdi_deposit_one(%(series)s, %(day)s, %(year)s, %(month)s, %(dom)s, %(at)s, %(format0)s, %(media0)s,"
    " %(charset0)s, %(ending0)s, %(sha0)s, %(size0)s, %(chunk0)s, %(chunks0)s, %(data0)s, %(index0)s,"
    " %(count0)s, %(note0)s, %(start0)s, %(body0)s, %(runs0)s)"
)
#: The SQLSTATE :data:`DEPOSIT_ONE` raises for a serial a foreign id holds.
_SERIAL_TAKEN = "PDI01"


class PostgresDeposits(PostgresTransactions):
    """Minting and depositing, in one round trip where the deposit allows."""

    #: Schema step 14: the function a small deposit is made by (:data:`DEPOSIT_ONE`).
    deposit_schema = (DEPOSIT_ONE,)
    #: Whether the catalog has it (schema 14 or later, as migrated or found when opened).
    _deposit_one = False

    def mint(
        self,
        series: str,
        day: datetime.date,
        unique_id: str | None,
        representations: Sequence[NewRepresentation],
        at: str,
        *,
        skip_identical: bool = False,
        note: WriteNote | None = None,
        registered: bool = False,
    ) -> DepositResult:
        # A new serial whose formats are all in hand: one statement, one round trip (:meth:`_mint_at_once`).
        # Not with a replica (the commit's WAL location comes with the COMMIT of the long way), nor inside
        # a transaction, nor with an audit entry or an Idempotency-Key to keep (the API's, the long way).
        if (unique_id is None and registered and note is None and self._replica is None
                and getattr(self._local, "conn", None) is None):
            shape = _at_once_shape(representations)
            if shape is not None:
                made = self._mint_at_once(shape, series, day, representations, at)
                if made is not None:
                    return DepositResult(DocumentKey(series, day, made), 1)
        return super().mint(series, day, unique_id, representations, at, skip_identical=skip_identical, note=note,
                            registered=registered)

    def _mint_at_once(
        self, shape: tuple[tuple[bool, int], ...], series: str, day: datetime.date,
        representations: Sequence[NewRepresentation], at: str,
    ) -> str | None:
        """The new document's serial, minted with every row of its deposit in one round trip, committed on its
        own: one format with at most one passage by the function of schema 14 (:data:`DEPOSIT_ONE`), any other
        by one statement (:func:`_at_once`). ``None`` when it was refused as a whole (a mirrored series, a
        serial a foreign id has taken), which the deposit made the long way then says why."""
        params: dict[str, Any] = {"series": series, "day": day.isoformat(), "year": day.year, "month": day.month,
                                  "dom": day.day, "at": at}
        one = self._deposit_one and len(shape) == 1 and shape[0][1] <= 1
        for n, rep in enumerate(representations):
            info = rep.blob.info
            params.update({
                f"sha{n}": info.sha256, f"size{n}": info.size, f"chunk{n}": info.chunk_size,
                f"chunks{n}": info.chunks, f"data{n}": cast(Inline, rep.blob).data,
                f"format{n}": rep.format, f"media{n}": rep.media_type, f"charset{n}": rep.charset,
                f"charset_key{n}": rep.charset or "", f"ending{n}": rep.line_ending, f"index{n}": rep.index,
            })
            passages = rep.passages
            if passages is None:
                params[f"count{n}"] = params[f"note{n}"] = None
                held: list[Any] = []
            else:
                params[f"count{n}"], params[f"note{n}"] = passages.count, passages.note
                held = list(passages)
            if len(held) == 1 or one:
                first = held[0] if held else None
                params[f"start{n}"] = None if first is None else first.start
                params[f"body{n}"] = None if first is None else first.indexed
                params[f"runs{n}"] = None if first is None else first.encoded_runs()
            elif held:
                params[f"start{n}"] = [p.start for p in held]
                params[f"body{n}"] = [p.indexed for p in held]
                params[f"runs{n}"] = [p.encoded_runs() for p in held]
        try:
            with self._pool.connection() as conn:
                try:
                    row = conn.execute(_DEPOSIT_ONE_CALL if one else _at_once(shape), params).fetchone()
                except psycopg.OperationalError as exc:  # committed on its own: lost as it was, maybe committed
                    lost = commit_unknown(self.location, conn, exc)
                    if lost is not None:
                        raise lost from exc
                    raise
        except psycopg.errors.NotNullViolation:  # no document was made (_at_once): nothing was
            return None
        except psycopg.errors.UniqueViolation as exc:
            raise ImmutabilityError(f"already in the archive: {exc.diag.message_detail}") from exc
        except psycopg.Error as exc:
            if exc.sqlstate == _SERIAL_TAKEN:  # nothing was written (DEPOSIT_ONE)
                return None
            raise StoreError(f"{self.location}: {_oneline(exc)}") from exc
        return None if row is None or row[0] is None else str(row[0])

    def _insert_version_one(
        self, series: str, day: datetime.date, unique_id: str | None, at: str, embargo_until: str | None
    ) -> tuple[int, str]:
        # one round trip: the serial (or the foreign id), the document, its day's count and its version 1
        if unique_id is None:
            taken = ("INSERT INTO daily_serials (series, day, last) VALUES (?, ?, 1) ON CONFLICT (series, day)"
                     " DO UPDATE SET last = daily_serials.last + 1 RETURNING last::text AS uid, last AS serial")
            params: list[Any] = [series, day.isoformat()]
        else:
            taken, params = "SELECT ?::text AS uid, NULL::integer AS serial", [unique_id]
        rows = self._query(
            f"WITH s AS ({taken}),"
            " d AS (INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)"
            " SELECT ?, ?, ?, ?, ?, s.uid, s.serial, ? FROM s"
            " ON CONFLICT (series, day, unique_id) DO NOTHING RETURNING id),"
            " n AS (INSERT INTO document_days (series, day, documents, last_deposit) SELECT ?, ?, 1, ? FROM d"
            f"{COUNT_A_DAY}),"
            " v AS (INSERT INTO versions (document, version, created_at, embargo_until) SELECT id, 1, ?, ? FROM d)"
            " SELECT (SELECT id FROM d), (SELECT uid FROM s)",
            [*params, series, day.isoformat(), day.year, day.month, day.day, at,
             series, day.isoformat(), at, at, embargo_until],
        )
        doc, uid = rows[0]
        if doc is None:  # another writer minted it since this transaction's check: named as that check names it
            key = DocumentKey(series, day, str(uid))
            raise self._minted_already(self._document_id(key), key)
        return int(doc), str(uid)


def _at_once_shape(representations: Sequence[NewRepresentation]) -> tuple[tuple[bool, int], ...] | None:
    """What :func:`_at_once` needs to know of a deposit's formats, or ``None`` when it is made the long way.

    Each format: whether it has a fragment index, and its full-text passages
    (-1: none; else how many, at most :data:`_PASSAGES_AT_ONCE`, 2 standing for
    any number past 1). Made at once: blobs in hand (:class:`Inline`), passages
    known now (not queued), no message of the thread index, formats and sources distinct.
    """
    shape: list[tuple[bool, int]] = []
    sources: set[tuple[str, str, str | None]] = set()
    formats: set[str] = set()
    for rep in representations:
        passages = rep.passages
        if not isinstance(rep.blob, Inline) or rep.media_type == "message/rfc822" or rep.format in formats:
            return None
        formats.add(rep.format)
        if passages is None:
            shape.append((rep.index is not None, -1))
            continue
        source = (rep.sha256, rep.media_type, rep.charset)
        if passages.queued or passages.count > _PASSAGES_AT_ONCE or source in sources:
            return None
        sources.add(source)
        shape.append((rep.index is not None, min(passages.count, 2)))
    return tuple(shape)


@lru_cache(maxsize=64)
def _at_once(shape: tuple[tuple[bool, int], ...]) -> str:
    """One statement that mints the day's next serial and writes every row of its deposit (data-modifying
    ``WITH`` queries chained by ``RETURNING``); sent alone, outside a transaction, it is committed on its own
    before its answer, the serial, comes back.

    What the long way (:meth:`DocumentsPart.mint`) does in a transaction, in its order, each query made to
    wait for the one before by reading what it returned (PostgreSQL runs the queries of a ``WITH`` in an order
    of its own otherwise, and two deposits of the same octets would meet on their unique keys in different
    orders: a deadlock): the serial counter's row first (concurrent minters queue on it, and a failed
    statement takes its increment back), the document, its day's count and version 1, then the blobs' chunk
    digests, the removal lock (shared), the blobs, each format's fragment index and full-text source and
    passages, and the representations. A document not made (a mirrored series: no serial is taken; a serial
    a foreign id holds: the insert does nothing) leaves the representations without one, refused as ``NULL``
    (``NotNullViolation``), so nothing of the statement stays.
    """
    blobs = range(len(shape))
    parts = [
        "s AS (INSERT INTO daily_serials (series, day, last) SELECT %(series)s, %(day)s, 1"
        " WHERE NOT EXISTS (SELECT 1 FROM mirrors WHERE series = %(series)s AND role = 'origin')"
        " ON CONFLICT (series, day) DO UPDATE SET last = daily_serials.last + 1 RETURNING last)",
        "d AS (INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)"
        " SELECT %(series)s, %(day)s, %(year)s, %(month)s, %(dom)s, last::text, last, %(at)s FROM s"
        " ON CONFLICT (series, day, unique_id) DO NOTHING RETURNING id, unique_id)",
        "n AS (INSERT INTO document_days (series, day, documents, last_deposit) SELECT %(series)s, %(day)s, 1, %(at)s"
        f" FROM d{COUNT_A_DAY} RETURNING 1)",
        "v AS (INSERT INTO versions (document, version, created_at) SELECT id, 1, %(at)s FROM d RETURNING 1)",
        "f AS (INSERT INTO blob_fixity (sha256, size, chunk_size, chunks, created_at) SELECT k.*, %(at)s"
        " FROM d, (SELECT count(*) FROM n) AS n, (SELECT count(*) FROM v) AS v, (VALUES "
        + ", ".join(f"(%(sha{n})s::text, %(size{n})s::bigint, %(chunk{n})s::int, %(chunks{n})s::bytea)" for n in blobs)
        + ") AS k ON CONFLICT (sha256) DO NOTHING RETURNING 1)",
        f"l AS (SELECT pg_advisory_xact_lock_shared({_REMOVAL_LOCK}) FROM d, (SELECT count(*) FROM f) AS f)",
        "b AS (INSERT INTO blobs (sha256, data) SELECT k.* FROM l, (VALUES "
        + ", ".join(f"(%(sha{n})s::text, %(data{n})s::bytea)" for n in blobs)
        + ") AS k ON CONFLICT (sha256) DO NOTHING RETURNING 1)",
    ]
    before = "b"  # the query each one waits for
    source = "%(sha{n})s, %(media{n})s, %(charset_key{n})s"
    for n, (indexed, passages) in enumerate(shape):
        key = source.format(n=n)
        after = f"FROM d, (SELECT count(*) FROM {before}) AS w"
        if indexed:
            parts.append(f"x{n} AS (INSERT INTO fragment_indexes (sha256, media_type, charset, data)"
                         f" SELECT {key}, %(index{n})s {after}"
                         " ON CONFLICT (sha256, media_type, charset) DO NOTHING RETURNING 1)")
            before, after = f"x{n}", f"FROM d, (SELECT count(*) FROM x{n}) AS w"
        if passages < 0:
            continue
        parts.append(f"t{n} AS (INSERT INTO search_sources (sha256, media_type, charset, passages, note, indexed_at)"
                     f" SELECT {key}, %(count{n})s, %(note{n})s, %(at)s {after}"
                     " ON CONFLICT (sha256, media_type, charset) DO NOTHING RETURNING 1)")
        columns = "INSERT INTO search_passages (sha256, media_type, charset, start, body, runs)"
        if passages <= 0:
            before = f"t{n}"
            continue
        if passages == 1:
            parts.append(f"p{n} AS ({columns} SELECT {key}, %(start{n})s, %(body{n})s, %(runs{n})s FROM t{n}"
                         " RETURNING 1)")
        else:
            parts.append(f"p{n} AS ({columns} SELECT {key}, k.* FROM t{n},"
                         f" unnest(%(start{n})s::bigint[], %(body{n})s::text[], %(runs{n})s::bytea[]) AS k RETURNING 1)")
        before = f"p{n}"
    parts.append(
        "r AS (INSERT INTO representations (document, version, format, media_type, charset, line_ending, sha256,"
        f" size, created_at, stored) SELECT (SELECT id FROM d), 1, k.*, %(at)s, '{STORED_EXACT}'"
        f" FROM (SELECT count(*) FROM {before}) AS w, (VALUES "
        + ", ".join(f"(%(format{n})s::text, %(media{n})s::text, %(charset{n})s::text, %(ending{n})s::text,"
                    f" %(sha{n})s::text, %(size{n})s::bigint)" for n in blobs)
        + ") AS k)"
    )
    return "WITH " + ", ".join(parts) + " SELECT unique_id FROM d"
