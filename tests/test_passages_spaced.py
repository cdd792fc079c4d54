""":func:`pdi.passages.fulltext.spaced`: what it writes (a separator beside each character of a script written without
spaces, and beside each character beyond ASCII that SQLite's FTS5 reads as a separator, none before a combining
mark). What it costs is measured by the benchmarks (bench/bench_index.py), not here."""

from __future__ import annotations

import functools
import sqlite3
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from pdi.passages.fulltext import APART, SPACER, UNSPACED_RANGES, spaced


def _unspaced(ch: str) -> bool:
    return any(first <= ord(ch) <= last for first, last in UNSPACED_RANGES)


def _mark(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "M"


@functools.cache
def _fts5_splits(ch: str) -> bool:
    """Whether SQLite's FTS5 (the catalog's tokenizer) reads ``ch`` between two letters as a separator."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
    db.execute("INSERT INTO t VALUES (?)", (f"q{ch}z",))
    return {term for (term,) in db.execute("SELECT term FROM v")} == {"q", "z"}


def _separator(ch: str) -> bool:
    """A character beyond ASCII that FTS5 reads as a separator, a combining mark but (a mark stays with its
    letter: SQLite reads it as a separator, PostgreSQL as a letter), and one of the scripts written without spaces
    but (a word of its own already)."""
    return not ch.isascii() and not _mark(ch) and not _unspaced(ch) and _fts5_splits(ch)


def _by_position(text: str) -> str:
    """The rules, position by position: APART before and after each separator beyond ASCII; then a SPACER where a
    character before or after it is one of those scripts', unless the character after it is a combining mark."""
    text = "".join(f"{APART}{ch}{APART}" if _separator(ch) else ch for ch in text)
    if not any(_unspaced(ch) for ch in text):
        return text
    out = []
    for i in range(len(text) + 1):
        before = i > 0 and _unspaced(text[i - 1])
        after = i < len(text) and _unspaced(text[i])
        if (before or after) and not (i < len(text) and _mark(text[i])):
            out.append(SPACER)
        if i < len(text):
            out.append(text[i])
    return "".join(out)


_CHARS = st.sampled_from([*"กิ่นข้าวแ大门天かっ a。\n", "\u3099", "\u0301", "\u0e31", "\u302a", "\U00020000", "\u1780",
                          "\u17b6", "\u0947", "\ufe0f", *"“”’…،।—«»·¿é", "\u00a0", "\u3000", "\U0001f418",
                          "\U0001d4b3", "\ue000", "\u0640"])


@given(st.lists(_CHARS, max_size=16).map("".join))
def test_spaced_puts_a_separator_beside_each_unspaced_character_but_not_before_a_mark(text: str) -> None:
    assert spaced(text) == _by_position(text)
