"""What SQLite's FTS5 tokenizer counts as a word character, asked of SQLite itself; writes ``pdi/passages/_fts5_chars.py``.

The catalog's full-text index tokenizes with FTS5's ``unicode61`` tokenizer
(``remove_diacritics 2``), whose tables are Unicode 6.1's: characters
assigned since then (``⭚``, most emoji) are word characters to it, and a few
letters and many combining marks are not. :mod:`pdi.passages.fulltext` reads
a query's words by the same tables, so a query holds a word exactly when the
index could hold it. Each code point ``c`` is asked of SQLite twice: in
``a{c}a`` (one token: ``c`` joins a word) and alone (a token: ``c`` is a word
by itself, not a diacritic the tokenizer removes).

    python tests/support/fts5_chars.py     # rewrites src/pdi/passages/_fts5_chars.py
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from pdi.archive.sqlite import FTS5_TOKENIZER

#: The catalog's tokenizer without Porter's stemmer, which reads ``a{c}a`` as it does every such word.
TOKENIZER = FTS5_TOKENIZER.removeprefix("porter ")
MODULE = Path(__file__).resolve().parents[2] / "src" / "pdi" / "passages" / "_fts5_chars.py"


def fts5_tokens(text: str) -> list[str]:
    """The tokens SQLite's FTS5 reads in ``text`` (the catalog's tokenizer, without the stemmer), in order."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{TOKENIZER.replace(chr(39), chr(39) * 2)}')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.execute("INSERT INTO t (body) VALUES (?)", (text,))
    return [term for (term,) in db.execute('SELECT term FROM v ORDER BY "offset"')]


def _code_points() -> list[int]:
    return [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000 and cp != 0]


def asked_of_sqlite() -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The ranges (first, last) of code points FTS5 joins into a word, and of those it joins but not alone."""
    db = sqlite3.connect(":memory:")
    quoted = TOKENIZER.replace("'", "''")
    for table, vocab in (("joined", "joined_v"), ("alone", "alone_v")):
        db.execute(f"CREATE VIRTUAL TABLE {table} USING fts5(body, tokenize='{quoted}')")
        db.execute(f"CREATE VIRTUAL TABLE {vocab} USING fts5vocab({table}, 'instance')")
    points = _code_points()
    db.executemany("INSERT INTO joined (rowid, body) VALUES (?, ?)", ((cp, f"a{chr(cp)}a") for cp in points))
    db.executemany("INSERT INTO alone (rowid, body) VALUES (?, ?)", ((cp, chr(cp)) for cp in points))
    joined = [d for (d,) in db.execute("SELECT doc FROM joined_v GROUP BY doc HAVING count(*) = 1 ORDER BY doc")]
    # a lone diacritic is an empty token, folded away (with categories M*): no word of its own
    alone = {d for (d,) in db.execute("SELECT DISTINCT doc FROM alone_v WHERE COALESCE(term, '') <> ''")}
    return _ranges(joined), _ranges([cp for cp in joined if cp not in alone])


def _ranges(points: list[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for cp in points:
        if out and cp == out[-1][1] + 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return [(a, b) for a, b in out]


def module_text() -> str:
    joined, not_alone = asked_of_sqlite()

    def table(name: str, ranges: list[tuple[int, int]]) -> str:
        cells = [f"(0x{a:X}, 0x{b:X})," for a, b in ranges]
        lines = [" ".join(cells[i : i + 7]) for i in range(0, len(cells), 7)]
        return f"{name}: Final = (\n" + "".join(f"    {line}\n" for line in lines) + ")\n"

    return (
        '"""The characters SQLite\'s FTS5 ``unicode61`` tokenizer reads as words (generated: do not edit).\n\n'
        f"Asked of SQLite {sqlite3.sqlite_version} (the catalog's tokenizer, ``pdi.archive.sqlite.FTS5_TOKENIZER``,"
        " without its stemmer) by\n"
        "``tests/support/fts5_chars.py``, which rewrites this file;\n"
        "``tests/test_passages_fts5_chars.py`` asks SQLite again and compares.\n"
        '"""\n\n'
        "from typing import Final\n\n"
        "#: Code points (first, last) that join the characters either side of them into one word.\n"
        + table("JOINED", joined)
        + "\n#: Code points of JOINED that are no word alone (diacritics the tokenizer removes).\n"
        + table("NOT_ALONE", not_alone)
    )


if __name__ == "__main__":
    MODULE.write_text(module_text())
    print(f"wrote {MODULE}", file=sys.stderr)
