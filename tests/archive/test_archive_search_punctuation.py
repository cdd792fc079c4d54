"""A word beside punctuation, a symbol or a space beyond ASCII is found, on both stores (schema 19).

PostgreSQL's text search parser reads every character beyond ASCII as a letter in a database whose ``LC_CTYPE`` is
``C`` (``initdb --locale=C``, as pdi's test clusters and many servers are made): ``“walrus”`` was one word to it,
``l’eau`` one, ``fast…`` one, so a search for ``walrus``, ``eau`` or ``fast`` found nothing there, where SQLite's
FTS5 found each. The index now holds a separator beside each such character (``spaced``), which both read as one.

Each hit is checked against Python alone: its ``char`` range is where ``str.find`` finds the word in the text.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pdi.archive import Archive
from pdi.archive.catalog.schema_steps import OPTIONAL_STEP
from pdi.archive.store import SCHEMA_VERSION
from pdi.passages.fulltext import APART

S = "oma.eop.gov.us"
TEXT = (
    "She said “walrus” twice—then ran fast… l’eau «citoyen» ¿qué? 50\u00a0km\n"
    "हिन्दी। भाषा 🐘elephant ‹x› 東京。大阪\n"
)
CANONICAL = TEXT.replace("\n", "\r\n")


@pytest.mark.parametrize("word", ["walrus", "twice", "ran", "fast", "eau", "citoyen", "qué", "km", "हिन्दी",
                                  "elephant", "x", "大阪"])
def test_a_word_beside_punctuation_beyond_ascii_is_found(archive: Archive, word: str) -> None:
    name = archive.add(S, TEXT.encode("utf-8"), format="text")
    at = CANONICAL.find(word)
    assert [str(h.name) for h in archive.search(word).hits] == [f"{name}#char={at},{at + len(word)}"]


def test_a_phrase_across_punctuation_is_found(archive: Archive) -> None:
    name = archive.add(S, TEXT.encode("utf-8"), format="text")
    at, end = CANONICAL.find("walrus"), CANONICAL.find("twice") + len("twice")
    assert [str(h.name) for h in archive.search('"walrus twice"').hits] == [f"{name}#char={at},{end}"]


def test_a_catalog_of_step_18_is_written_again_when_migrated(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = archive.add(S, TEXT.encode("utf-8"), format="text")
        store = archive.store
        with store._write():  # as step 18 left it: no separator beside its punctuation, PostgreSQL indexing the body
            if not hasattr(store, "_conn"):
                store._query("ALTER TABLE search_passages DROP COLUMN tsv")
                store._query("ALTER TABLE search_passages ADD COLUMN tsv tsvector"
                             " GENERATED ALWAYS AS (to_tsvector('english'::regconfig, body)) STORED")
                store._query("CREATE INDEX search_passages_tsv ON search_passages USING GIN (tsv)")
            for pid, body in store._query("SELECT id, body FROM search_passages"):
                old = body.replace(APART, "")  # step 18's spacing: a SPACER beside each CJK character only
                if hasattr(store, "_conn"):
                    store._query("INSERT INTO search_fts (search_fts, rowid, body) VALUES ('delete', ?, ?)", (pid, body))
                store._query("UPDATE search_passages SET body = ? WHERE id = ?", (old, pid))
                if hasattr(store, "_conn"):
                    store._query("INSERT INTO search_fts (rowid, body) VALUES (?, ?)", (pid, old))
            store._query("DELETE FROM schema_migrations WHERE version >= ?", (OPTIONAL_STEP,))
        if not hasattr(store, "_conn"):  # PostgreSQL read “walrus” as one word
            assert not archive.search("walrus").hits
    with Archive.init(location) as archive:  # pdi init migrates it
        assert archive.store.schema_version() == SCHEMA_VERSION
        at = CANONICAL.find("walrus")
        assert [str(h.name) for h in archive.search("walrus").hits] == [f"{name}#char={at},{at + 6}"]
        assert not archive.verify().problems
    if "://" not in location:
        db = sqlite3.connect(Path(location) / "catalog.sqlite")
        db.execute("INSERT INTO search_fts (search_fts) VALUES ('integrity-check')")
        db.close()
