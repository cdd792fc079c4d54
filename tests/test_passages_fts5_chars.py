"""The query's word characters are SQLite FTS5's own: the generated table agrees with SQLite asked again."""

from __future__ import annotations

import sqlite3

import pytest

from pdi.passages import _fts5_chars
from pdi.passages.fulltext import parse_query, words_of
from support.fts5_chars import asked_of_sqlite


@pytest.mark.slow
def test_the_table_is_what_sqlite_says_today() -> None:
    joined, not_alone = asked_of_sqlite()
    assert tuple(joined) == _fts5_chars.JOINED, "SQLite's FTS5 reads words otherwise: run tests/support/fts5_chars.py"
    assert tuple(not_alone) == _fts5_chars.NOT_ALONE


def _tokens(text: str) -> list[str]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.execute("INSERT INTO t (body) VALUES (?)", (text,))
    return [term for (term,) in db.execute("SELECT term FROM v ORDER BY \"offset\"")]


@pytest.mark.parametrize(
    "text",
    [
        "\u2b5a",  # a symbol assigned after Unicode 6.1: a word to FTS5 (hypothesis found it refused)
        "cafe \u00a9 2024",  # a symbol of Unicode 6.1 separates words
        "e-mail o'clock",
        "\u0915\u094d\u0937",  # Devanagari with a virama (a mark FTS5 joins)
    ],
)
def test_words_are_fts5s_tokens(text: str) -> None:
    assert [w.lower() for w in words_of(text)] == _tokens(text)
    assert [w.lower() for p in parse_query(text).phrases for w in p] == _tokens(text)
