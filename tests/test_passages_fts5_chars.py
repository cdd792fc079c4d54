"""The query's word characters are SQLite FTS5's own: the generated table agrees with SQLite asked again, and FTS5
reads in a query's words the tokens it reads in the text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.passages import _fts5_chars
from pdi.passages.fulltext import parse_query, spaced, words_of
from support.fts5_chars import asked_of_sqlite, fts5_tokens


@pytest.mark.slow
def test_the_table_is_what_sqlite_says_today() -> None:
    joined, not_alone = asked_of_sqlite()
    assert tuple(joined) == _fts5_chars.JOINED, "SQLite's FTS5 reads words otherwise: run tests/support/fts5_chars.py"
    assert tuple(not_alone) == _fts5_chars.NOT_ALONE




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
    # a query's word is handed to FTS5 whole (an FTS5 string): what FTS5 reads in the words, one after another, is
    # what it reads in the text (a word keeps its combining marks, which FTS5 and PostgreSQL read as letters:
    # tests/archive/test_archive_search_scripts.py)
    assert [t for w in words_of(text) for t in fts5_tokens(w)] == fts5_tokens(text)
    assert [t for p in parse_query(text).phrases for w in p for t in fts5_tokens(w)] == fts5_tokens(text)


_SCRIPTS = st.text(alphabet=st.sampled_from(
    "ab\u00e9e\u0301 -'.,\u0915\u093f\u094d\u0937\u0940\u0639\u064e\u0631\u0e01\u0e34\u0e19\u0e49\u5929\u5b89"
    "\u304b\u3099\u1019\u103c\u1014\u103a\u17d2\u1781"), max_size=40)


@settings(max_examples=300, deadline=None)
@given(_SCRIPTS)
def test_property_fts5_reads_in_the_words_what_it_reads_in_the_text(text: str) -> None:
    """Any text of Latin, Devanagari, Arabic, Thai, Han, kana and Khmer letters, their combining marks, spaces and
    punctuation: FTS5 reads in its words, one after another, the tokens it reads in the text, and in the text as
    the index holds it (spaced) those of the words spaced."""
    assert [t for w in words_of(text) for t in fts5_tokens(w)] == fts5_tokens(text)
    assert [t for w in words_of(spaced(text)) for t in fts5_tokens(spaced(w))] == fts5_tokens(spaced(text))
