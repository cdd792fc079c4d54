"""A word in an address, a path or a number written with ASCII punctuation is found, on both stores (schema 20).

PostgreSQL's text search parser reads ``walrus@example.com`` as one e-mail address, ``www.example.org`` as one
host, ``https://…/beach/oysters.html`` as a URL, ``/usr/local/bin`` as a path, ``3.14.15`` as a version and
``-42`` as a signed number: each one token, so a search for ``walrus``, ``example``, ``oysters``, ``usr``, ``14``
or ``42`` found nothing there, where SQLite's FTS5 (whose ``unicode61`` tokenizer reads every ASCII character but
a letter or a digit as a separator) found each. The index now reads ASCII punctuation as a space there too.

Each hit is checked against Python alone (its ``char`` range is where ``str.find`` finds the word in the text);
the property asks SQLite's own FTS5 tokenizer which words a text holds, and PostgreSQL whether its index finds
each of them.
"""

from __future__ import annotations

import re
import sqlite3
import string
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.archive.catalog.schema_steps import ASCII_APART_STEP
from pdi.archive.postgres_text import INDEXED_BODY
from pdi.archive.store import SCHEMA_VERSION
from support.pgcluster import TemporaryCluster

S = "oma.eop.gov.us"
TEXT = ("Write to walrus@example.com or see https://www.example.org/beach/oysters.html and /usr/local/bin/carpenter;"
        " version 3.14.15, -42 degrees, <b>tags</b>, x=y&z=w, don't.\n")
CANONICAL = TEXT.replace("\n", "\r\n")


def _first(word: str) -> int:
    """Where ``word`` first stands in the text as a whole word (no ASCII letter or digit beside it)."""
    found = re.search(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", CANONICAL)
    assert found is not None
    return found.start()


@pytest.mark.parametrize("word", ["walrus", "example", "oysters", "beach", "usr", "carpenter", "14", "42", "tags",
                                  "b", "www.example.org", "walrus@example.com", "3.14.15", "x=y"])
def test_a_word_written_with_ascii_punctuation_is_found(archive: Archive, word: str) -> None:
    name = archive.add(S, TEXT.encode(), format="text")
    at = _first(word)
    assert [str(h.name) for h in archive.search(word).hits] == [f"{name}#char={at},{at + len(word)}"]


def test_the_hit_of_a_word_in_a_url_is_marked_in_its_snippet(archive: Archive) -> None:
    archive.add(S, TEXT.encode(), format="text")
    (hit,) = archive.search("oysters").hits
    (mark,) = hit.marks
    assert hit.snippet[mark[0] : mark[1]] == "oysters"
    assert "https://www.example.org/beach/oysters.html" in hit.snippet  # the text as written, punctuation and all


def test_a_catalog_of_step_19_is_indexed_again_when_migrated(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = archive.add(S, TEXT.encode(), format="text")
        store = archive.store
        if not hasattr(store, "_conn"):  # PostgreSQL: its index as step 19 made it
            with store._write():
                store._query("ALTER TABLE search_passages DROP COLUMN tsv")
                store._query("ALTER TABLE search_passages ADD COLUMN tsv tsvector GENERATED ALWAYS AS"
                             " (to_tsvector('english'::regconfig, regexp_replace(body, E'\\x1e.\\x1e', E'\\x1e \\x1e',"
                             " 'g'))) STORED")
                store._query("CREATE INDEX search_passages_tsv ON search_passages USING GIN (tsv)")
                store._query("DELETE FROM schema_migrations WHERE version >= ?", (ASCII_APART_STEP,))
            assert not archive.search("oysters").hits
    with Archive.init(location) as archive:  # pdi init migrates it
        assert archive.store.schema_version() == SCHEMA_VERSION
        at = _first("oysters")
        assert [str(h.name) for h in archive.search("oysters").hits] == [f"{name}#char={at},{at + 7}"]


def test_a_catalog_of_step_18_has_its_postgresql_index_made_once(
    pg_cluster: TemporaryCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Steps 19 and 20 both make PostgreSQL's index again; run in one migration, 19 leaves it to 20 (it was made
    twice, on a large archive the longest part of the upgrade), and the index made finds what both steps ask."""
    location = pg_cluster.create_schema("pdi_test_step_18_index_once")
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = archive.add(S, TEXT.encode(), format="text")
        store = archive.store
        with store._write():
            store._query("DELETE FROM schema_migrations WHERE version >= ?", (ASCII_APART_STEP - 1,))
        ran: list[str] = []
        query = store._query

        def recorded(sql: str, *args: Any, **kwargs: Any) -> Any:
            ran.append(sql)
            return query(sql, *args, **kwargs)

        monkeypatch.setattr(store, "_query", recorded)
        assert store.migrate() == SCHEMA_VERSION
        assert [sql for sql in ran if sql.startswith("CREATE INDEX search_passages_tsv")] == [
            "CREATE INDEX search_passages_tsv ON search_passages USING GIN (tsv)"]
        monkeypatch.undo()
        at = _first("oysters")
        assert [str(h.name) for h in archive.search("oysters").hits] == [f"{name}#char={at},{at + 7}"]
        assert not archive.verify().problems


def _fts5_words(text: str) -> list[str]:
    """The words SQLite's own FTS5 tokenizer (``unicode61``, as the catalog's index) reads in ``text``."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.execute("INSERT INTO t (body) VALUES (?)", (text,))
    return [str(r[0]) for r in db.execute("SELECT term FROM v")]


@pytest.fixture(scope="module")
def pg(pg_cluster: TemporaryCluster) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(pg_cluster.url("postgres"), autocommit=True) as conn:
        yield conn


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=string.ascii_letters + string.digits + string.punctuation + " ", min_size=1, max_size=60))
def test_every_word_fts5_reads_in_ascii_text_postgresql_finds(pg: psycopg.Connection[Any], text: str) -> None:
    """The oracle: SQLite's FTS5 tokenizer. Each word it reads is found by PostgreSQL's index of the text, as
    the catalog makes it (``INDEXED_BODY``), asked as a phrase (the query's words are FTS5's words too); the
    ``simple`` configuration, so that no stop word is left out."""
    indexed = INDEXED_BODY.replace("%", "%%")  # psycopg's placeholders
    for word in dict.fromkeys(_fts5_words(text)):
        row = pg.execute(
            f"SELECT to_tsvector('simple', {indexed}) @@ phraseto_tsquery('simple', %s) FROM (SELECT %s::text AS body) s",
            (word, text),
        ).fetchone()
        assert row == (True,), (text, word)


def _indexed_by_python(body: str) -> str:
    """What :data:`INDEXED_BODY` says PostgreSQL's index reads of ``body``, worked out by Python alone: the character
    between two ``\\x1e`` written as a space (left to right, matches not overlapping, any character, a line end
    too, as PostgreSQL's ``.`` matches), then each ASCII punctuation character (``string.punctuation``) a space."""
    apart = re.sub("\x1e.\x1e", "\x1e \x1e", body, flags=re.DOTALL)
    return apart.translate({ord(c): " " for c in string.punctuation})


_BODIES = st.text(
    alphabet=st.one_of(
        st.sampled_from(string.punctuation + "\x1e\n\r\t a1Zé“…،\u3000"),
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    ),
    max_size=80,
)


@settings(max_examples=400, deadline=None)
@given(_BODIES)
def test_indexed_body_is_the_passage_with_apart_and_ascii_punctuation_spaced(
    pg: psycopg.Connection[Any], body: str
) -> None:
    """PostgreSQL's reading of a passage for its index (``INDEXED_BODY``) is, character for character, the text
    with the separators' middles and the ASCII punctuation written as spaces (the Python oracle above)."""
    indexed = INDEXED_BODY.replace("%", "%%")
    row = pg.execute(f"SELECT {indexed} FROM (SELECT %s::text AS body) s", (body,)).fetchone()
    assert row == (_indexed_by_python(body),)


def test_indexed_body_is_not_read_by_postgresqls_translate() -> None:
    """``translate()`` compares each character of a passage with each of the 32 it replaces: about 340 µs for a
    1 KB passage on the project's machine, more than ``to_tsvector`` itself (270 µs), on every deposit's
    passage and every search hit's headline; one regular expression of the same 32 characters takes about 70 µs
    and gives the same text (the property above)."""
    assert "translate(" not in INDEXED_BODY
