"""The full-text index of a PostgreSQL catalog (schema step 5, and 19 and 20 that made it again).

Each passage's tsvector in the English configuration (lower case, stop words
left out, Snowball stems), kept by PostgreSQL itself beside the text and found
through a GIN index; a query is a ``phraseto_tsquery`` of each phrase, never
query syntax (:mod:`pdi.archive.postgres_text` says how a body is read). A
phrase holding a stop word is found where its stop words stand too: the
passages the index finds are read again (:meth:`PostgresSearch._exact`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from pdi.archive.catalog import SearchAccess, search_page
from pdi.archive.catalog.base import timestamp
from pdi.archive.catalog.search_index import NEW_SOURCE
from pdi.archive.postgres.transactions import PostgresTransactions
from pdi.archive.postgres_text import APART_BODY, INDEXED_BODY, restored

#: A word of ASCII letters (every stop word of PostgreSQL's English configuration): one a regular expression may
#: hold as it is (:meth:`PostgresSearch._exact`).
_ASCII_WORD = re.compile("[A-Za-z]+")
#: A passage's tsvector with its stop words beside its lexemes, at their places, each of weight A, those of the
#: query's phrases alone (``q.stops``): what PostgreSQL's English configuration leaves out, read again by its
#: ``simple`` one, whose parser is the same, so that its places are the index's. The two are joined as text: the
#: ``||`` of two tsvectors moves the second's places after the first's.
_STOPS_BESIDE = (
    "(p.tsv::text || ' ' || ts_filter(setweight(to_tsvector('simple'::regconfig,"
    f" {INDEXED_BODY}), 'A', q.stops), '{{a}}')::text)::tsvector"
)

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

    def case_folding(self) -> tuple[str, bool]:
        """The database's ``LC_CTYPE``, and whether its full-text search folds letters beyond ASCII to lower case.

        PostgreSQL's parser lower-cases a word with the database's character type: one whose ``LC_CTYPE`` is ``C``
        (``initdb --locale=C``) folds only ASCII letters, so ``école`` does not find ``École`` there. Asked of the
        database itself (a word of each case made a tsvector), not guessed from the locale's name.
        """
        with self._read():
            rows = self._query("SELECT current_setting('lc_ctype'), to_tsvector('simple', ?) = to_tsvector('simple', ?)",
                               ("ÉCOLE МОСКВА", "école москва"))
        return str(rows[0][0]), bool(rows[0][1])

    def folds_case_beyond_ascii(self) -> tuple[str, bool]:
        """:meth:`case_folding`, asked once: a database's character type is fixed when it is made."""
        known: tuple[str, bool] | None = getattr(self, "_case_folding", None)
        if known is None:
            known = self._case_folding = self.case_folding()
        return known

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

    def _stop_words(self, phrases: Sequence[Sequence[str]]) -> list[list[bool]]:
        """For each phrase, for each of its words as the index reads them (:func:`pdi.passages.hits.index_words`):
        whether it is a stop word, of which the English configuration holds no lexeme (``phraseto_tsquery`` of it
        is empty). A phrase of one word is not asked (none: it holds no stop word beside another word)."""
        from pdi.passages.hits import index_words

        slots = [words if len(words := index_words(phrase)) > 1 else [] for phrase in phrases]
        asked = [word for words in slots for word in words]
        if not asked:
            return [[] for _ in phrases]
        rows = self._query(
            "SELECT numnode(phraseto_tsquery('english'::regconfig, u.t)) = 0 FROM unnest(?::text[])"
            " WITH ORDINALITY AS u(t, n) ORDER BY u.n",
            (asked,),
        )
        flags = iter([bool(stop) for (stop,) in rows])
        return [[next(flags) for _ in words] for words in slots]

    @staticmethod
    def _exact(phrases: Sequence[Sequence[str]], stops: list[list[bool]]) -> tuple[str, list[Any], list[str], list[str]]:
        """What makes a match of a phrase holding a stop word exact, where ``phraseto_tsquery`` leaves each stop word
        out and keeps its place (``walrus to the carpenter`` is ``'walrus' <3> 'carpent'``, which any two words
        between matched): a tsquery of every such phrase (``&&``), each of its words in order, a stop word as
        written, case folded (``'to':A``, a lexeme of weight A, as :data:`_STOPS_BESIDE` puts the passage's own stop
        words beside its lexemes), any other word as the English configuration stems it, and the whole phrase as
        written, in Unicode's NFC and in NFD (as :meth:`_tsquery` asks it); its parameters; the stop words; and
        a regular expression for each run of stop words, which a passage's text holds wherever the index reads
        the run (ASCII letters, no ASCII letter or digit either side): a cheap test, first. An empty tsquery when
        no phrase holds a stop word beside another word."""
        from pdi.passages.hits import index_words

        query: list[str] = []
        params: list[Any] = []
        words: set[str] = set()
        runs: list[str] = []
        for phrase, stop in zip(phrases, stops, strict=True):
            if not any(stop) or all(stop):  # no stop word, or nothing but (passed over: unsearchable)
                continue
            forms = dict.fromkeys([tuple(phrase), *(
                tuple(unicodedata.normalize(form, word) for word in phrase) for form in ("NFC", "NFD"))])
            either: list[str] = []
            for form in forms:
                words_of_form = index_words(form)
                if len(words_of_form) != len(stop):  # pragma: no cover - normalized, a word stays one word
                    continue
                slots: list[str] = []
                for word, is_stop in zip(words_of_form, stop, strict=True):
                    if is_stop:
                        slots.append("to_tsquery('simple'::regconfig, ?)")
                        params.append("'" + word.replace("\\", "\\\\").replace("'", "''") + "':A")
                    else:
                        slots.append("phraseto_tsquery('english'::regconfig, ?)")
                        params.append(word)
                composed = slots[0]
                for slot in slots[1:]:
                    composed = f"tsquery_phrase({composed}, {slot})"
                either.append(composed)
            query.append("(" + " || ".join(either) + ")")
            run: list[str] = []
            for word, is_stop in [*zip(index_words(phrase), stop, strict=True), ("", False)]:
                if is_stop:
                    words.add(word)  # folded as the index folds it (lower(), in SQL)
                if is_stop and _ASCII_WORD.fullmatch(word):
                    run.append(word.lower())
                elif run:
                    runs.append(f"(^|[^a-z0-9]){'[^a-z0-9]+'.join(run)}([^a-z0-9]|$)")
                    run = []
        return " && ".join(query), params, sorted(words), runs

    def _search_page(
        self, phrases: Sequence[Sequence[str]], series: str | None, limit: int, skip: int,
        access: SearchAccess | None = None,
    ) -> list[tuple[Any, ...]]:
        query, params = self._tsquery(phrases)
        exact, exact_params, words, runs = self._exact(phrases, self._stop_words(phrases))
        columns, conditions = f"{query} AS q", ""
        if exact:  # a phrase holding a stop word: the passages the index finds are read again for it
            columns += f", {exact} AS e, ARRAY(SELECT lower(u.w) FROM unnest(?::text[]) AS u(w)) AS stops"
            conditions = "".join(" AND p.body ~* ?" for _ in runs) + f" AND {_STOPS_BESIDE} @@ q.e"
            params = [*params, *exact_params, words, *runs]
        match = (
            "SELECT p.id AS pid, (-ts_rank(p.tsv, q.q))::float8 AS score"
            f" FROM search_passages p, (SELECT {columns}) q WHERE p.tsv @@ q.q{conditions}"
        )
        return self._query(*search_page(match, params, series, access, skip, limit))

    def _stems(self, marked: str, phrases: Sequence[Sequence[str]]) -> tuple[tuple[str, str], ...]:
        """What the English configuration reads of each word ``marked`` and of each word of a phrase of several
        words (``phraseto_tsquery`` of it, in Unicode's NFC: ``'walrus'`` for ``Walruses``, nothing for a stop
        word), keyed by :func:`pdi.passages.hits.stem_key`: ``ts_headline`` marks every word of the query wherever
        it stands, so that in ``dogs cats, cats dogs`` the phrase ``"cat dog"`` was named by ``dogs cats``."""
        from pdi.passages.fulltext import MARK_END, MARK_START, words_of
        from pdi.passages.hits import index_words, stem_key

        several = [phrase for phrase in phrases if len(index_words(phrase)) > 1]
        if not several:
            return ()
        words = {stem_key(w) for phrase in several for w in index_words(phrase)}
        for mark in re.findall(f"{MARK_START}([^{MARK_END}]*){MARK_END}", marked):
            words.update(stem_key(w) for w in words_of(mark))
        asked = sorted(words)
        rows = self._query(
            "SELECT phraseto_tsquery('english'::regconfig, u.w)::text FROM unnest(?::text[]) WITH ORDINALITY AS u(w, n)"
            " ORDER BY u.n",
            (asked,),
        )
        return tuple((word, str(read)) for word, (read,) in zip(asked, rows, strict=True))

    def _highlight(self, passage: int, phrases: Sequence[Sequence[str]]) -> str | None:
        from pdi.passages.fulltext import MARK_END, MARK_START

        query, params = self._tsquery(phrases)
        rows = self._query(
            f"SELECT ts_headline('english'::regconfig, {INDEXED_BODY}, q.q, ?), p.body"
            f" FROM search_passages p, (SELECT {query} AS q) q WHERE p.id = ? AND p.tsv @@ q.q",
            [f"StartSel={MARK_START}, StopSel={MARK_END}, HighlightAll=true", *params, passage],
        )
        return restored(str(rows[0][0]), str(rows[0][1])) if rows else None
