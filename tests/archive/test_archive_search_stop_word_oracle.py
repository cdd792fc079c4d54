"""Phrases holding stop words, on both stores, against a reference matcher written from docs/reference/search.md.

"A phrase is its words in order as written": the reference splits a text into words at every character that is
not an ASCII letter or digit (the texts here hold no other letters: punctuation beyond ASCII, ``“`` ``—`` and a
no-break space among the separators, separates words on both engines), folds case, and finds a phrase where its
words stand one after another, equal. PostgreSQL's English configuration leaves the stop words (``the``, ``and``,
``to``, ``of``, ``a``, ``in``) out of its index and keeps their places: ``"walrus to the carpenter"`` was
``'walrus' <3> 'carpent'``, which any two words between matched. Both stores must find exactly the passages the
reference finds, and name the same range: one phrase, its first match; several, the shortest (then leftmost)
stretch holding a match of each.

The other words are ones both stemmers (Porter's and Snowball's) leave as they are, so stemming cannot matter
(checked below against PostgreSQL itself). Ranges are checked by slicing the CRLF-canonical text, written with
``str.replace``, never against pdi's own output.
"""

from __future__ import annotations

import itertools
import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from support.search_reference import shortest_hit

S = "oma.eop.gov.us"

STOP = ["the", "and", "to", "of", "a", "in"]
WORDS = ["cat", "dog", "sea", "red", "box", "sun"]
SEPARATORS = [" ", "  ", ", ", "\n", "\r\n", "-", "'", " “", "” ", "—", ". ", "\u00a0", "\t"]
_WORD = re.compile("[A-Za-z0-9]+")

_series = itertools.count(1)


def crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\r\n")


#: Plurals both stemmers read as their singular (Porter's ``cats`` and Snowball's are ``cat``: checked below against
#: each store's own stemmer), so that a phrase is found in words written otherwise.
PLURAL = {w + "s": w for w in WORDS if w != "box"}


def tokens(text: str) -> list[tuple[str, int, int]]:
    """The words of ``text``, case folded, each plural of :data:`PLURAL` read as its singular (a text without one
    reads as written)."""
    return [(PLURAL.get(m.group().casefold(), m.group().casefold()), m.start(), m.end()) for m in _WORD.finditer(text)]


def reference_hit(text: str, phrases: list[tuple[str, ...]]) -> tuple[int, int] | None:
    return shortest_hit(tokens(text), phrases)


def _cased(vocabulary: list[str] = STOP + WORDS + STOP) -> st.SearchStrategy[str]:
    return st.tuples(st.sampled_from(vocabulary), st.sampled_from([str.lower, str.title, str.upper])).map(
        lambda pair: pair[1](pair[0]))


def _text(vocabulary: list[str] = STOP + WORDS + STOP) -> st.SearchStrategy[str]:
    return st.lists(st.tuples(_cased(vocabulary), st.sampled_from(SEPARATORS)), min_size=1, max_size=14).map(
        lambda items: "".join(w + s for w, s in items))


def _phrase(vocabulary: list[str] = STOP + WORDS + STOP) -> st.SearchStrategy[tuple[str, ...]]:
    # at least one word PostgreSQL indexes (a phrase of stop words alone is refused there: test_archive_search_stop_words)
    return st.lists(_cased(vocabulary), min_size=1, max_size=5).filter(
        lambda words: any(w.lower() not in STOP for w in words)).map(tuple)


def _query(phrases: list[tuple[str, ...]]) -> str:
    return " ".join('"' + " ".join(p) + '"' for p in phrases)


def check(archive: Archive, texts: list[str], phrases: list[tuple[str, ...]]) -> None:
    series = f"s{next(_series)}.example.us"
    archive.add_series(series)
    names = {str(archive.add(series, t.encode(), format="text")): crlf(t) for t in texts}
    # a phrase written twice, in whatever case, is one phrase; a plural beside its singular is another phrase
    folded = [tuple(PLURAL.get(w, w) for w in p) for p in dict.fromkeys(tuple(w.casefold() for w in p) for p in phrases)]
    query = _query(phrases)
    results = archive.search(query, series=series, limit=200)
    assert results.next is None
    found = {}
    for hit in results.hits:
        name, _, fragment = str(hit.name).partition("#")
        assert fragment == f"char={hit.start},{hit.end}"
        assert name not in found, "one passage, one hit"
        found[name] = (hit.start, hit.end)
    expected = {name: w for name, text in names.items() if (w := reference_hit(text, folded)) is not None}
    assert set(found) == set(expected), (query, [names[n] for n in set(found) ^ set(expected)])
    for name, (start, end) in found.items():
        text = names[name]
        assert (start, end) == expected[name], (query, text, text[start:end], text[slice(*expected[name])])


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_text(), min_size=1, max_size=3), st.lists(_phrase(), min_size=1, max_size=2))
@example(["the walrus and the carpenter"], [("cat", "to", "the", "dog")])
@example(["cat and the dog"], [("cat", "to", "the", "dog")])  # the reproducer, in this vocabulary
@example(["the cat"], [("cat", "the")])  # a stop word after the last word PostgreSQL indexes: nothing there
@example(["a cat"], [("the", "cat")])  # and before the first
@example(["cat the dog. The cat sea"], [("the", "cat")])
def test_phrases_with_stop_words_find_what_the_reference_finds(
    archive: Archive, texts: list[str], phrases: list[tuple[str, ...]]
) -> None:
    check(archive, texts, phrases)


#: Words and their plurals, which a few stop words stand among.
STEMMED = [*WORDS, *PLURAL, "the", "of"]


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_text(STEMMED), min_size=1, max_size=3), st.lists(_phrase(STEMMED), min_size=1, max_size=2))
@example(["cats cat cat "], [("cat", "cat")])  # SQLite named the match written as asked, 5,12, after the first, 0,8
@example(["cat cats cats"], [("cats", "cats")])  # and 4,13
@example(["dogs cats, cats dogs, cat dog"], [("cat", "dog")])
@example(["cat  cat cat "], [("cat",), ("cat", "cat")])  # PostgreSQL left out the overlapping 5,12: named 0,8
def test_phrases_of_plurals_find_what_the_reference_finds(
    archive: Archive, texts: list[str], phrases: list[tuple[str, ...]]
) -> None:
    """A phrase is found in words its index reads alike (``cats`` for ``cat``), and named as any phrase is: one
    phrase, its first match, however written; several, the shortest stretch holding a match of each."""
    check(archive, texts, phrases)


def test_the_vocabulary_is_its_own_stem(archive: Archive) -> None:
    """The reference compares words as written, a plural as its singular: each word above must be its own stem, and
    each plural its singular's, to the store's own stemmer
    (PostgreSQL's Snowball, asked through its catalog; Porter, asked of an FTS5 table of SQLite's own), and the
    stop words stop words to PostgreSQL's English configuration."""
    store = archive.store
    if store.dialect == "postgresql":
        with store._read():  # type: ignore[attr-defined]
            rows = store._query(  # type: ignore[attr-defined]
                "SELECT u.w, to_tsvector('english'::regconfig, u.w)::text FROM unnest(?::text[]) AS u(w)",
                (WORDS + STOP + list(PLURAL),))
        assert dict(rows) == {**{w: f"'{w}':1" for w in WORDS}, **{w: "" for w in STOP},
                              **{p: f"'{w}':1" for p, w in PLURAL.items()}}
    else:
        import sqlite3

        db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61')")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, row)")
        for word in WORDS + STOP:
            db.execute("DELETE FROM t")
            db.execute("INSERT INTO t (x) VALUES (?)", (word,))
            assert [term for term, in db.execute("SELECT term FROM v")] == [word]
        for plural, word in PLURAL.items():
            db.execute("DELETE FROM t")
            db.execute("INSERT INTO t (x) VALUES (?)", (plural,))
            assert [term for term, in db.execute("SELECT term FROM v")] == [word]
        db.close()


def test_a_phrase_with_stop_words_pages_only_its_own_matches(archive: Archive) -> None:
    """Thirty passages hold the phrase's other words with other words between (``walrus and the carpenter``), five
    the phrase itself: five hits, two a page, and no page says another follows when none does."""
    for i in range(35):
        between = "to the" if i % 7 == 3 else "and the"
        archive.add(S, f"the walrus {between} carpenter number {i}".encode(), format="text")
    names: list[str] = []
    sizes: list[int] = []
    after: str | None = None
    while True:
        page = archive.search('"walrus to the carpenter"', limit=2, after=after)
        sizes.append(len(page.hits))
        names += [archive.get(h.name).data.decode() for h in page.hits]
        if page.next is None:
            break
        after = page.next
    assert names == ["walrus to the carpenter"] * 5
    assert sizes == [2, 2, 1]
