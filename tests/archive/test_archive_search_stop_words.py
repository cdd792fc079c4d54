"""Stop words: PostgreSQL's English index leaves them out, SQLite's FTS5 keeps them (docs/reference/search.md).

A query word PostgreSQL's index holds no word of (``the``, ``and``: ``phraseto_tsquery`` of it is empty) is passed
over there, as its engine passes it over: the hit names the stretch holding the other words, never the whole
passage (a phrase found nowhere to mark made the hit's window the passage's whole text: found by an attack,
2026-11-28). A query of nothing but such words finds nothing there, so it is refused, naming the first such word
and where it stands in the query, rather than answered with no hits while SQLite finds them.

Each hit's range is checked against Python alone (``str.find`` in the CRLF-canonical text).
"""

from __future__ import annotations

import pytest

from pdi.archive import Archive
from pdi.errors import ParseError

S = "oma.eop.gov.us"
TEXT = "The walrus and the carpenter were walking close at hand; " + "they wept like anything to see " * 40 + "\n"
CANONICAL = TEXT.replace("\n", "\r\n")


def _range(words: str) -> str:
    at = CANONICAL.find(words)
    return f"#char={at},{at + len(words)}"


def test_a_stop_word_beside_another_word_names_the_other_words_stretch(archive: Archive) -> None:
    name = archive.add(S, TEXT.encode(), format="text")
    results = archive.search("the walrus")
    if archive.store.dialect == "postgresql":  # 'the' is no word its index holds: passed over
        assert [str(h.name) for h in results.hits] == [f"{name}{_range('walrus')}"]
        assert str(results.query) == "walrus"
    else:
        assert [str(h.name) for h in results.hits] == [f"{name}{_range('The walrus')}"]
        assert str(results.query) == "the walrus"
    (hit,) = results.hits
    assert archive.get(hit.name).data in (b"walrus", b"The walrus")


@pytest.mark.parametrize(("query", "word", "offset"), [("the", "the", 0), ("  and  the ", "and", 2),
                                                        ('"and the" at', "and", 1)])
def test_a_query_of_stop_words_alone_is_found_by_sqlite_and_refused_by_postgresql(
    archive: Archive, query: str, word: str, offset: int
) -> None:
    name = archive.add(S, TEXT.encode(), format="text")
    if archive.store.dialect == "postgresql":
        with pytest.raises(ParseError, match=f"'{word}' at character {offset}") as raised:
            archive.search(query)
        assert raised.value.offset == offset and raised.value.rule == "query"
        assert "stop word" in str(raised.value)
    else:
        assert [str(h.name).split("#")[0] for h in archive.search(query).hits] == [str(name)]


@pytest.mark.parametrize(("text", "query", "found"), [
    ("the walrus and the carpenter", '"walrus and the carpenter"', "walrus and the carpenter"),
    ("one two one two and", '"one two and"', "one two and"),
    ("one two three one and three", '"one and three"', "one and three"),
    ("and one two", '"and one two"', "and one two"),
])
def test_a_phrase_holding_a_stop_word_names_the_whole_phrase(archive: Archive, text: str, query: str, found: str) -> None:
    """Found by hypothesis, 2026-12-01: PostgreSQL marks no stop word, and a phrase holding one was named by a stray
    run of its other words (``"one two and"`` in ``one two one two and`` was ``one two one``, ``"walrus and the
    carpenter"`` was ``walrus``); on both stores it is the phrase as it stands in the text."""
    archive.add(S, text.encode(), format="text")
    (hit,) = archive.search(query).hits
    assert (hit.start, hit.end) == (text.find(found), text.find(found) + len(found))


@pytest.mark.parametrize(("text", "query", "found"), [
    ("the walrus and the carpenter were walking", '"walrus to the carpenter"', None),
    ("the walrus and the carpenter were walking", '"walrus and a carpenter"', None),
    ("the walrus and the carpenter were walking", '"carpenter were walking the"', None),
    ("the walrus and the carpenter were walking", '"a walrus"', None),
    ("the Walrus, AND The carpenter", '"walrus and the carpenter"', "Walrus, AND The carpenter"),
    ("a walrus to a carpenter; the walrus to the carpenter", '"walrus to the carpenter"', "walrus to the carpenter"),
    ("walrus and the walrus to the walrus", '"the walrus to"', "the walrus to"),
    ("we were having fun", '"having fun"', "having fun"),
])
def test_a_phrases_stop_words_are_found_as_written(archive: Archive, text: str, query: str, found: str | None) -> None:
    """Found by an attack, 2026-12-01: on PostgreSQL ``"walrus to the carpenter"`` was ``'walrus' <3> 'carpent'``,
    which ``walrus and the carpenter`` matched, named by ``walrus`` alone; the stop words of a phrase are now found
    where they stand, case aside (docs/reference/search.md, "Stop words")."""
    archive.add(S, text.encode(), format="text")
    hits = archive.search(query).hits
    if found is None:
        assert hits == ()
    else:
        (hit,) = hits
        assert (hit.start, hit.end) == (text.find(found), text.find(found) + len(found))


def test_a_stop_word_is_stemmed_on_sqlite_and_matched_as_written_on_postgresql(archive: Archive) -> None:
    """``having`` is a stop word of PostgreSQL's English configuration, which it does not stem; Porter stems it to
    ``have`` (docs/reference/search.md, "Stop words")."""
    archive.add(S, b"we have fun", format="text")
    hits = archive.search('"having fun"').hits
    if archive.store.dialect == "postgresql":
        assert hits == ()
    else:
        assert [(h.start, h.end) for h in hits] == [(3, 11)]


def test_a_phrases_stop_word_past_its_255th_place_is_not_found_on_postgresql(archive: Archive) -> None:
    """PostgreSQL keeps the first 255 places of a word in a passage, of a stop word read again as of any other
    (docs/reference/search.md, "A word repeated in one passage")."""
    text = "the " * 300 + "walrus"
    archive.add(S, text.encode(), format="text")
    hits = archive.search('"the walrus"').hits
    if archive.store.dialect == "postgresql":
        assert hits == ()
    else:
        assert [(h.start, h.end) for h in hits] == [(1196, 1206)]


def test_a_phrase_of_stop_words_alone_beside_another_word_is_passed_over_on_postgresql(archive: Archive) -> None:
    """docs/reference/search.md, "Stop words": ``walrus "it's the"`` is answered as ``walrus`` there."""
    text = "it's the walrus"
    archive.add(S, text.encode(), format="text")
    results = archive.search('walrus "it\'s the"')
    if archive.store.dialect == "postgresql":
        assert str(results.query) == "walrus"
        assert [(h.start, h.end) for h in results.hits] == [(9, 15)]
    else:
        assert [(h.start, h.end) for h in results.hits] == [(0, 15)]
