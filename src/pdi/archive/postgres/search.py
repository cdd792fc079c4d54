"""The full-text index of a PostgreSQL catalog (schema step 5, and 19 and 20 that made it again).

Each passage's tsvector in the English configuration (lower case, stop words
left out, Snowball stems), kept by PostgreSQL itself beside the text and found
through a GIN index; a query is a ``phraseto_tsquery`` of each phrase, never
query syntax (:mod:`pdi.archive.postgres_text` says how a body is read).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

from pdi.archive.catalog import SearchAccess, search_page
from pdi.archive.catalog.base import timestamp
from pdi.archive.catalog.search_index import NEW_SOURCE
from pdi.archive.postgres.transactions import PostgresTransactions
from pdi.archive.postgres_text import APART_BODY, INDEXED_BODY, restored

#: A source of at most this many passages is written with them in one statement (:meth:`PostgresSearch._index_source`).
_PASSAGES_AT_ONCE = 256


class PostgresSearch(PostgresTransactions):
    """The full-text index's statements that differ on PostgreSQL."""

    unspaced_filter = "body ~ ('[' || ? || ']')"

    search_schema = (
        "ALTER TABLE search_passages ADD COLUMN tsv tsvector"
        " GENERATED ALWAYS AS (to_tsvector('english'::regconfig, body)) STORED",
        "CREATE INDEX search_passages_tsv ON search_passages USING GIN (tsv)",
    )
    #: Schema step 19: the index made again from :data:`APART_BODY`.
    apart_schema = (
        "ALTER TABLE search_passages DROP COLUMN tsv",
        "ALTER TABLE search_passages ADD COLUMN tsv tsvector"
        f" GENERATED ALWAYS AS (to_tsvector('english'::regconfig, {APART_BODY})) STORED",
        "CREATE INDEX search_passages_tsv ON search_passages USING GIN (tsv)",
    )
    #: Schema step 20: the index made again from :data:`INDEXED_BODY` (ASCII punctuation read as a space); after step
    #: 19 in the same migration there is none to drop (:meth:`SchemaPart._step`).
    ascii_apart_schema = (
        "ALTER TABLE search_passages DROP COLUMN IF EXISTS tsv",
        "ALTER TABLE search_passages ADD COLUMN tsv tsvector"
        f" GENERATED ALWAYS AS (to_tsvector('english'::regconfig, {INDEXED_BODY})) STORED",
        "CREATE INDEX search_passages_tsv ON search_passages USING GIN (tsv)",
    )

    # --- the full-text index ---------------------------------------------------------
    def _index_source(self, sha256: str, media_type: str, charset: str | None, passages: Any) -> None:
        # a small text's few passages: the source and its passages in one statement sent with the next one
        # waited for (not a round trip of its own to learn whether the source is new)
        if passages.count > _PASSAGES_AT_ONCE:
            super()._index_source(sha256, media_type, charset, passages)
            return
        rows = [(p.start, p.indexed, p.encoded_runs()) for p in passages]
        source = (sha256, media_type, charset or "")
        self._execute(
            f"WITH s AS ({NEW_SOURCE} RETURNING 1)"
            " INSERT INTO search_passages (sha256, media_type, charset, start, body, runs)"
            " SELECT ?, ?, ?, k.start, k.body, k.runs FROM unnest(?::bigint[], ?::text[], ?::bytea[]) AS k(start, body, runs)"
            " WHERE EXISTS (SELECT 1 FROM s)",
            (*source, passages.count, passages.note, timestamp(), *source,
             [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]),
        )

    def _delete_passages(self, sources: Sequence[tuple[str, str, str]] | None) -> None:
        if sources is None:
            self._query("DELETE FROM search_passages")
            return
        for source in sources:
            self._query(
                "DELETE FROM search_passages WHERE sha256 = ? AND media_type = ? AND charset = ?", source
            )

    @staticmethod
    def _tsquery(phrases: Sequence[Sequence[str]]) -> tuple[str, list[Any]]:
        """A tsquery matching every phrase, each one a parameter of ``phraseto_tsquery`` (never query syntax).

        PostgreSQL's parser compares a word's code points as they are written, where SQLite's tokenizer folds
        accents away: a phrase written with a composed character (``é``) or a decomposed one (``e`` and U+0301)
        is asked in both forms (Unicode's NFC and NFD), so that it finds a text written in either, and as it is
        written, so that it finds a text written as it is, neither (``ê`` and a combining dot below, as Vietnamese
        input methods write ``ệ``)."""
        # (not imported by a command that searches nothing: pdi ls)
        from pdi.passages.fulltext import spaced

        query: list[str] = []
        params: list[Any] = []
        for phrase in phrases:
            text = " ".join(spaced(w) for w in phrase)
            forms = dict.fromkeys([text, *(unicodedata.normalize(form, text) for form in ("NFC", "NFD"))])
            query.append("(" + " || ".join("phraseto_tsquery('english'::regconfig, ?)" for _ in forms) + ")")
            params += forms
        return " && ".join(query), params

    def unsearchable(self, phrases: Sequence[Sequence[str]]) -> list[int]:
        # a phrase of stop words alone is an empty tsquery, which the engine passes over (and which matches nothing)
        from pdi.passages.fulltext import spaced

        with self._read():
            rows = self._query(
                "SELECT numnode(phraseto_tsquery('english'::regconfig, u.t)) FROM unnest(?::text[])"
                " WITH ORDINALITY AS u(t, n) ORDER BY u.n",
                ([" ".join(spaced(w) for w in phrase) for phrase in phrases],),
            )
        return [i for i, (nodes,) in enumerate(rows) if int(nodes) == 0]

    def _search_page(
        self, phrases: Sequence[Sequence[str]], series: str | None, limit: int, skip: int,
        access: SearchAccess | None = None,
    ) -> list[tuple[Any, ...]]:
        query, params = self._tsquery(phrases)
        match = (
            "SELECT p.id AS pid, (-ts_rank(p.tsv, q.q))::float8 AS score"
            f" FROM search_passages p, (SELECT {query} AS q) q WHERE p.tsv @@ q.q"
        )
        return self._query(*search_page(match, params, series, access, skip, limit))

    def _highlight(self, passage: int, phrases: Sequence[Sequence[str]]) -> str | None:
        from pdi.passages.fulltext import MARK_END, MARK_START

        query, params = self._tsquery(phrases)
        rows = self._query(
            f"SELECT ts_headline('english'::regconfig, {INDEXED_BODY}, q.q, ?), p.body"
            f" FROM search_passages p, (SELECT {query} AS q) q WHERE p.id = ? AND p.tsv @@ q.q",
            [f"StartSel={MARK_START}, StopSel={MARK_END}, HighlightAll=true", *params, passage],
        )
        return restored(str(rows[0][0]), str(rows[0][1])) if rows else None
