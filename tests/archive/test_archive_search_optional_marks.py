"""Full-text search finds a word of Arabic, Hebrew or Syriac however it was vowelled, on both stores (schema 19).

Arabic's harakat (fatha, kasra, damma, tanwin, shadda, sukun), its tatweel (a letter's stroke drawn out to fill a
line), Hebrew's points and cantillation and Syriac's vowels are written in some texts (scripture, poetry, teaching,
a word read two ways) and left out of most: a reader searching ``كتاب`` means ``كِتَابٌ`` too, and one who types a
vowelled ``שָׁלוֹם`` means the ``שלום`` of a newspaper. The index holds a passage's text without them, each letter
before them standing for itself and them in the document, and a query is read without them.

Each hit is checked against Python alone: its ``char`` range is where a regular expression of the query's letters,
each followed by any of these marks, finds the word in the text (the marks after its last letter with it), and the
name resolved gives those characters as written.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
from pathlib import Path

import pytest
from archive_helpers import as_an_earlier_step_wrote
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.archive.catalog.schema_steps import OPTIONAL_STEP
from pdi.archive.store import SCHEMA_VERSION
from pdi.passages.fulltext import SPACER

S = "oma.eop.gov.us"
#: The marks, as Unicode names them (their code points written out here, not read from pdi).
HARAKAT = "\u064b\u064c\u064d\u064e\u064f\u0650\u0651\u0652"  # fathatan … sukun
TATWEEL = "\u0640"
HEBREW_POINTS = "\u05b0\u05b4\u05b5\u05b6\u05b7\u05b8\u05b9\u05bc\u05c1\u05c2"  # sheva … shin and sin dots
SYRIAC_VOWELS = "\u0730\u0733\u0736\u073a\u073d"
MARKS = HARAKAT + TATWEEL + HEBREW_POINTS + SYRIAC_VOWELS
TEXT = (
    "هذا كِتَابٌ جَمِيلٌ، وهذا كتـــاب آخر.\n"  # vowelled, stretched with tatweel, and bare
    "שָׁלוֹם עולם וּמְבֹרָךְ\n"  # Hebrew: pointed and bare
    "ܟܬܳܒܳܐ ܕܫܠܳܡܐ\n"  # Syriac with its vowels
    "भारत की राजधानी\n"  # Devanagari: its vowel signs are letters of its words, not left out
)
CANONICAL = TEXT.replace("\n", "\r\n")


def where(word: str, text: str = CANONICAL) -> list[tuple[int, int]]:
    """Every place ``word``'s letters stand in ``text`` as a word, each followed by any of :data:`MARKS`."""
    letters = [c for c in word if c not in MARKS]
    pattern = "".join(re.escape(c) + f"[{MARKS}]*" for c in letters)
    return [m.span() for m in re.finditer(f"(?<![\\w{MARKS}]){pattern}(?!\\w)", text)]


def hits(archive: Archive, query: str, series: str = S) -> list[tuple[int, int, bytes]]:
    return [(h.start, h.end, archive.get(str(h.name)).data) for h in archive.search(query, series=series).hits]


@pytest.mark.parametrize(("query", "word"), [
    ("كتاب", "كتاب"),  # bare: the vowelled كِتَابٌ and the stretched كتـــاب both
    ("كِتَاب", "كتاب"),  # vowelled otherwise than either
    ("جميل", "جميل"),
    ("שלום", "שלום"),  # the pointed word, typed bare
    ("עוֹלָם", "עולם"),  # the bare word, typed pointed
    ("ומברך", "ומברך"),
    ("ܟܬܒܐ", "ܟܬܒܐ"),
])
def test_a_word_is_found_however_it_was_vowelled(archive: Archive, query: str, word: str) -> None:
    archive.add(S, TEXT.encode("utf-8"), format="text")
    found = hits(archive, query)
    assert len(found) == 1  # one passage, named by its first match
    start, end, octets = found[0]
    assert (start, end) == where(word)[0]
    assert octets == CANONICAL[start:end].encode("utf-8")  # the word as written, its marks with it


def test_every_writing_of_a_word_is_a_match_of_the_phrase(archive: Archive) -> None:
    # a phrase of two words, the first vowelled in the text and the second bare
    archive.add(S, TEXT.encode("utf-8"), format="text")
    start, end, octets = hits(archive, '"שלום עולם"')[0]
    assert (start, end) == (where("שלום")[0][0], where("עולם")[0][1])
    assert octets.decode("utf-8") == "שָׁלוֹם עולם"


def test_the_vowel_signs_of_devanagari_still_tell_words_apart(archive: Archive) -> None:
    # राजधानी without its vowel signs is another string of letters: not found
    archive.add(S, TEXT.encode("utf-8"), format="text")
    assert hits(archive, "राजधानी")[0][:2] == (CANONICAL.find("राजधानी"), CANONICAL.find("राजधानी") + len("राजधानी"))
    assert hits(archive, "रजधन") == []


@pytest.mark.parametrize(("text", "form", "query", "cited"), [
    # SQLite's FTS5 (categories L* and M*) and PostgreSQL's parser read a tatweel (a letter, Lm) or a haraka before a
    # word's first letter as the word's start: "ـa" is one word to both, so the hit covers it. Counted by hand.
    ("\u0640walrus", "text", "walrus", (0, 7)),
    ("x \u0640walrus y", "text", "walrus", (2, 9)),
    ("قال: \u0640\u0640كتاب", "text", "كتاب", (5, 11)),  # قال: and a space are 5 characters
    ("في \u064eكتاب", "text", "كتاب", (3, 8)),  # a fatha before the first letter
    ("في ك\u0640تاب", "text", "كتاب", (3, 8)),  # a tatweel inside the word: found by its letters, and covered
    ("في كتاب", "text", "\u0640كتاب", (3, 7)),  # typed with a tatweel: the bare word is found
    ("<p>قال \u0640<b>كتاب</b></p>", "html", "كتاب", (7, 15)),  # an inline tag inside the word: the tatweel at 7
    ("<p>\u0640</p><p>كتاب</p>", "html", "كتاب", (11, 15)),  # a paragraph between: the tatweel is no part of it
])
def test_a_tatweel_or_a_mark_at_a_words_start_is_in_its_hit(
    archive: Archive, text: str, form: str, query: str, cited: tuple[int, int]
) -> None:
    name = archive.add(S, text.encode("utf-8"), format=form)
    assert [str(h.name) for h in archive.search(query, series=S).hits] == [f"{name}#char={cited[0]},{cited[1]}"]


_series = itertools.count()
_LETTERS = "بتثجحخدذرزسشصضطظعغفقكلمنهوي"


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_property_a_word_vowelled_anyhow_is_found_by_its_letters(archive: Archive, data: st.DataObject) -> None:
    word = data.draw(st.text(alphabet=_LETTERS, min_size=2, max_size=6))
    lead = data.draw(st.text(alphabet=HARAKAT + TATWEEL, max_size=2))  # both engines read them as the word's start
    written = lead + "".join(c + data.draw(st.text(alphabet=HARAKAT + TATWEEL, max_size=2)) for c in word)
    typed = "".join(c + data.draw(st.text(alphabet=HARAKAT, max_size=1)) for c in word)
    text = f"في {written} هنا"
    series = f"s{next(_series)}.example.us"
    archive.add_series(series)
    archive.add(series, text.encode("utf-8"), format="text")
    at = text.index(written)
    assert [h[:2] for h in hits(archive, typed, series)] == [(at, at + len(written))], (written, typed)


def _as_step_18_wrote(archive: Archive) -> None:
    """Put the catalog back as schema 18 left it: each passage of a one-passage text its whole text, marks and all,
    standing for the document one for one."""
    old = CANONICAL.replace(SPACER, "")
    as_an_earlier_step_wrote(archive, old, len(old), OPTIONAL_STEP)



def test_a_catalog_of_step_18_is_written_again_when_migrated(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = archive.add(S, TEXT.encode("utf-8"), format="text")
        _as_step_18_wrote(archive)
        assert archive.store.schema_version() == OPTIONAL_STEP - 1
        assert hits(archive, "עולם") != [] and hits(archive, "שלום") == []  # only a bare writing, before
    with Archive.init(location) as archive:  # pdi init migrates it
        assert archive.store.schema_version() == SCHEMA_VERSION
        (a, b), = where("שלום")
        assert [str(h.name) for h in archive.search("שלום").hits] == [f"{name}#char={a},{b}"]
        assert hits(archive, "جميل")[0][:2] == where("جميل")[0]
        assert not archive.verify().problems
    if "://" not in location:  # SQLite's own check that the FTS5 index holds what the passages say
        db = sqlite3.connect(Path(location) / "catalog.sqlite")
        db.execute("INSERT INTO search_fts (search_fts) VALUES ('integrity-check')")
        db.close()
