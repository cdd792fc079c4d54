"""Full-text search of Chinese and Japanese text, on both stores.

Chinese and Japanese are written without spaces between words, and both
engines read a run of letters as one word (SQLite FTS5's ``unicode61``,
PostgreSQL's parser): a sentence was one word, found only whole. The index
now holds each Han, kana and Bopomofo character as a word of its own
(:func:`pdi.passages.fulltext.spaced`), and a query's word of such
characters is the phrase of them, so any run of them is found where it
stands. Hangul is left alone: Korean puts spaces between its words.

Each hit is checked against Python alone: its ``char`` range is where
``str.find`` finds the query in the text, and the name resolved gives the
query's characters.
"""

from __future__ import annotations

import re
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.archive.catalog.schema_steps import SPACED_STEP
from pdi.archive.store import SCHEMA_VERSION
from pdi.passages.fulltext import SPACER, UNSPACED, spaced
from pdi.passages.hits import marked

S = "oma.eop.gov.us"
TEXT = (
    "我爱北京天安门。天安门上太阳升。\n"
    "東京大学の図書館で本を読みました。コーヒーを飲む。\n"
    "서울 대학교 도서관\n"
    "The walrus and the carpenter, 2024年5月.\n"
)


def hits(archive: Archive, query: str) -> list[tuple[int, int, bytes]]:
    return [(h.start, h.end, archive.get(str(h.name)).data) for h in archive.search(query).hits]


@pytest.mark.parametrize(
    "query",
    ["北京", "天安门", "太阳升", "图书馆", "図書館", "大学", "コーヒー", "読み", "飲む", "大学の図書館", "5月", "도서관"],
)
def test_a_word_inside_a_sentence_is_found_where_it_stands(archive: Archive, query: str) -> None:
    archive.add(S, TEXT.encode("utf-8"), format="text")
    text = TEXT.replace("\n", "\r\n")
    found = hits(archive, query)
    if query == "图书馆":  # simplified characters: the text has the traditional 図書館
        assert found == []
        return
    assert found, query
    start, end, data = found[0]
    assert (start, end) == (text.find(query), text.find(query) + len(query))
    assert data.decode("utf-8") == query


def test_each_match_of_a_word_twice_in_a_row_is_its_own(archive: Archive) -> None:
    archive.add(S, TEXT.encode("utf-8"), format="text")
    text = TEXT.replace("\n", "\r\n")
    result = archive.search("天安门")
    first = text.find("天安门")
    second = text.find("天安门", first + 1)
    assert [(h.start, h.end) for h in result.hits] == [(first, first + 3)]
    assert result.hits[0].matches[:2] == ((first, first + 3), (second, second + 3))


_CJK = st.sampled_from("我爱北京天安门上太阳升東大学の図書館で本を読みましたコーヒー飲")
_OTHER = st.sampled_from(list("ab 。、\n,1"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(_CJK, _CJK, _OTHER), min_size=3, max_size=60), st.data())
def test_property_any_run_of_cjk_characters_is_found_at_its_first_place(
    tmp_path: Path, characters: list[str], data: st.DataObject,
) -> None:
    text = "".join(characters)
    runs = [(i, j) for i in range(len(text)) for j in range(i + 1, min(len(text), i + 4) + 1)
            if all(re.match(f"[{UNSPACED}]", c) for c in text[i:j])]
    if not runs:
        return
    i, j = data.draw(st.sampled_from(runs))
    query = text[i:j]
    with tempfile.TemporaryDirectory(dir=tmp_path) as place, Archive.init(Path(place) / "a") as archive:
        archive.add_series(S)
        archive.add(S, text.encode("utf-8"), format="text")
        canonical = text.replace("\n", "\r\n")
        found = archive.search(query).hits
        assert found, (text, query)
        # each character is a word of its own to the index: the query's characters with only separators between
        # them (a space, 。, a line's end) match too, "我 我" as "我我" does; and of overlapping matches ("我我" in
        # "我我我") the first (found in a full run, 2026-11-27: str.find alone failed, and the hit was "我我我")
        wanted = re.search("(?:[ 。、,\r\n])*".join(map(re.escape, query)), canonical)
        assert wanted is not None
        assert (found[0].start, found[0].end) == wanted.span(), (text, query)
        assert archive.get(str(found[0].name)).data.decode("utf-8") == wanted.group()


def test_the_index_holds_each_character_as_a_word_and_the_reader_sees_none_of_it() -> None:
    # SQLite's own FTS5 (the tokenizer the catalog uses) says what words the spaced text is
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.execute("INSERT INTO t (body) VALUES (?)", (spaced("iPhone的北京, コーヒー 서울대학교"),))
    words = [row[0] for row in db.execute("SELECT term FROM v ORDER BY offset")]
    assert words == ["iphon", "的", "北", "京", "コ", "ー", "ヒ", "ー", "서울대학교"]
    db.execute("INSERT INTO t (body) VALUES (?)", ("iPhone的北京",))  # unspaced: one word
    assert [row[0] for row in db.execute("SELECT term FROM v WHERE doc = 2")] == ["iphone的北京"]
    text, marks = marked(f"{SPACER}\ue000北{SPACER}京\ue001{SPACER}。", most=2)
    assert (text, marks) == ("北京。", ((0, 2),))


def _unspace(archive: Archive) -> None:
    """Put the catalog back as schema 16 left it: passages as the text was, step 17 not yet made."""
    store = archive.store
    with store._write():
        for pid, body in store._query("SELECT id, body FROM search_passages"):
            if SPACER in body:
                if hasattr(store, "_conn"):
                    store._query("INSERT INTO search_fts (search_fts, rowid, body) VALUES ('delete', ?, ?)", (pid, body))
                store._query("UPDATE search_passages SET body = ? WHERE id = ?", (body.replace(SPACER, ""), pid))
                if hasattr(store, "_conn"):
                    store._query("INSERT INTO search_fts (rowid, body) VALUES (?, ?)", (pid, body.replace(SPACER, "")))
        store._query("DELETE FROM schema_migrations WHERE version >= ?", (SPACED_STEP,))


def test_an_older_catalog_is_written_again_when_migrated(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = archive.add(S, TEXT.encode("utf-8"), format="text")
        archive.add(S, b"no Chinese here, only walrus", format="text")
        _unspace(archive)
        assert archive.store.schema_version() == SPACED_STEP - 1
        assert archive.search("walrus").hits and not archive.search("北京").hits  # the index of schema 16
    with Archive.init(location) as archive:  # pdi init migrates it
        assert archive.store.schema_version() == SCHEMA_VERSION
        found = archive.search("北京").hits
        assert [str(h.name) for h in found] == [f"{name}#char=2,4"]
        assert len(archive.search("walrus").hits) == 2
        assert not archive.verify().problems
    if "://" not in location:  # SQLite's own check that the FTS5 index holds what the passages say
        db = sqlite3.connect(Path(location) / "catalog.sqlite")
        db.execute("INSERT INTO search_fts (search_fts) VALUES ('integrity-check')")
        db.close()
