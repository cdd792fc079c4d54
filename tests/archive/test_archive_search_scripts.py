"""Full-text search of scripts with combining marks, and of the scripts of South-East Asia, on both stores.

A Devanagari vowel sign, an Arabic haraka, a Thai tone mark is a combining mark (Unicode general category Mn or
Mc). SQLite's FTS5 (``unicode61``) reads such a mark as a separator, PostgreSQL's parser as a letter: a query's
word was cut at its marks, so PostgreSQL found no Hindi, Arabic with its vowels, Thai, Myanmar or Khmer word at all,
and SQLite's hit ended before a word's last mark (``हिन्दी`` at ``#char=30,35``, one short). Thai, Lao, Myanmar and
Khmer are also written without spaces between words: their characters are words of their own to the index now, as
Chinese and Japanese ones are (a mark kept with its letter). PostgreSQL marks every word of a query wherever it
stands, so a stray one before a phrase's match (``门`` in ``大门天安门``) began the hit there; only the marked words
that spell the phrase are a match now.

Each hit is checked against Python alone: its ``char`` range is where ``str.find`` finds the query's characters
in the text, and the name resolved gives them.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
import unicodedata
from pathlib import Path

import pytest
from archive_helpers import as_an_earlier_step_wrote
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.archive.catalog.schema_steps import RESPACED_STEP, SELECTORS_STEP
from pdi.archive.sqlite import FTS5_TOKENIZER
from pdi.archive.store import SCHEMA_VERSION
from pdi.passages.fulltext import SPACER, UNSPACED, spaced

S = "oma.eop.gov.us"
TEXT = (
    "भारत की राजधानी नई दिल्ली है। हिन्दी भाषा।\n"  # Hindi: spaces between words, marks inside them
    "আমি বাংলায় গান গাই।\n"  # Bengali
    "عَرَبِيّ كِتَاب\n"  # Arabic with its vowels
    "กินข้าวแล้วหรือยัง\n"  # Thai: no spaces
    "ສະບາຍດີ\n"  # Lao
    "မြန်မာစာ\n"  # Myanmar
    "ភាសាខ្មែរ\n"  # Khmer
    "大门天安门广场\n"
    "naïve café\n"
)


def first_hit(archive: Archive, query: str, series: str = S) -> tuple[int, int, bytes] | None:
    hits = archive.search(query, series=series).hits
    return (hits[0].start, hits[0].end, archive.get(str(hits[0].name)).data) if hits else None


@pytest.mark.parametrize("query", [
    "हिन्दी", "दिल्ली", "राजधानी", "नई दिल्ली", "বাংলায়", "গান", "كِتَاب", "عَرَبِيّ", "ข้าว", "แล้ว", "กิน", "หรือ",
    "ສະບາຍ", "မြန်မာ", "ខ្មែរ", "ភាសា", "天安门", "门广场", "naïve",
])
def test_a_word_is_found_where_it_stands(archive: Archive, query: str) -> None:
    archive.add(S, TEXT.encode("utf-8"), format="text")
    text = TEXT.replace("\n", "\r\n")
    at = text.find(query)
    assert at >= 0
    assert first_hit(archive, query) == (at, at + len(query), query.encode("utf-8"))


def test_a_mark_stays_with_its_letter_and_each_letter_is_a_word_to_sqlite() -> None:
    # SQLite's own FTS5 (the tokenizer the catalog uses) says what words the spaced text is: each Thai letter one,
    # its marks in it (schema step 23: they were separators, and กิ was the word ก); a variation selector apart
    db = sqlite3.connect(":memory:")
    tokenizer = FTS5_TOKENIZER.replace("'", "''")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{tokenizer}')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    assert spaced("กินข้าว") == SPACER.join(["", "กิ", "น", "ข้", "า", "ว", ""])
    db.execute("INSERT INTO t (body) VALUES (?)", (spaced("กินข้าว ok काल 葛\U000E0100"),))
    assert [row[0] for row in db.execute("SELECT term FROM v ORDER BY offset")] == [
        "กิ", "น", "ข้", "า", "ว", "ok", "काल", "葛"]


@pytest.mark.parametrize(("text", "query", "at"), [
    ("กกิ ", "กิ", (1, 3)),  # found by hypothesis, 2026-11-30: SQLite answered the bare ก at 0,1
    ("กิก ", "ก", (2, 3)),  # the ก of กิ is not the letter ก alone
    ("กน กิน", "กิน", (3, 6)),
    ("กก ", "กิ", None),  # FTS5 reads กิ as ก, which this text holds twice: no hit all the same
    ("か\u3099っこう", "か", None),  # か with a voiced mark is が (NFC's own), another syllable
])
def test_a_thai_letter_is_matched_with_its_marks(archive: Archive, text: str, query: str, at: tuple[int, int] | None):
    archive.add(S, text.encode("utf-8"), format="text")
    hit = first_hit(archive, query)
    assert (hit[:2] if hit else None) == at
    assert hit is None or hit[2] == text.replace("\n", "\r\n")[at[0]:at[1]].encode("utf-8")


#: Mongolian ᠮᠣᠩᠭᠣᠯ ("Mongol") with the free variation selector FVS1 (U+180B) after its third letter, as a writer
#: picks that letter's other form.
MONGOL = "\u182e\u1823\u1829\u180b\u182d\u1823\u182f"


@pytest.mark.parametrize(("text", "query", "at"), [
    ("葛\U000E0100城市", "葛", (0, 2)),  # 葛 at 0, its selector at 1: the hit covers both
    ("葛城", "葛\U000E0100", (0, 1)),  # the query's selector read away: the bare 葛 is found
    ("葛\U000E0100城", "葛\U000E0100", (0, 2)),
    ("東京都葛\U000E0100飾区", "葛飾", (3, 6)),  # 東 京 都 at 0 to 2, 葛 3, the selector 4, 飾 5
    ("漢\uFE00字", "漢字", (0, 3)),  # U+FE00 (VS1) after 漢
    ("辻\uFE01", "辻", (0, 2)),
    (f"ᠤᠯᠤᠰ {MONGOL} ᠤᠯᠤᠰ", "\u182e\u1823\u1829\u182d\u1823\u182f", (5, 12)),  # ᠤᠯᠤᠰ and a space: 0 to 4
])
def test_a_variation_selector_is_found_with_its_character(
        archive: Archive, text: str, query: str, at: tuple[int, int]) -> None:
    """A variation selector (U+E0100, U+FE00, as official Japanese registers write kanji; Mongolian's free variation
    selectors) picks a glyph of the same character: a word is found with or without it, on both stores, and the hit
    covers the selector with its character (schema step 24: PostgreSQL's parser read it as a letter of the word, so
    ``葛`` did not find ``葛󠄀``, and FTS5 read it as a separator, so a Mongolian word was cut in two there)."""
    archive.add(S, text.encode("utf-8"), format="text")
    assert first_hit(archive, query) == (*at, text[at[0]:at[1]].encode("utf-8"))


#: Any variation selector, its code points written out from Unicode's StandardizedVariants and IVD ranges.
_SELECTOR = st.one_of(st.integers(0x180B, 0x180D), st.just(0x180F), st.integers(0xFE00, 0xFE0F),
                      st.integers(0xE0100, 0xE01EF)).map(chr)
_selector_series = itertools.count()


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_property_a_character_with_any_selector_is_found_with_any_or_none(archive: Archive, data: st.DataObject) -> None:
    kanji = data.draw(st.integers(0x4E00, 0x9FFF).map(chr))
    written = kanji + data.draw(_SELECTOR)
    typed = kanji + data.draw(st.one_of(st.just(""), _SELECTOR))
    text = f"walrus {written} carpenter"  # the character at 7, its selector at 8
    series = f"v{next(_selector_series)}.example.us"
    archive.add_series(series)
    archive.add(series, text.encode("utf-8"), format="text")
    assert first_hit(archive, typed, series) == (7, 9, written.encode("utf-8"))


def test_pages_of_a_marked_thai_letter_hold_its_hits_alone(archive: Archive) -> None:
    """Many passages of the bare letter (ก, which FTS5 found for กิ before schema step 23) and a few of the letter
    with its mark: the pages hold these, every page but the last full, the next cursor only where hits follow."""
    real = {str(archive.add(S, f"ขกิ {i}".encode(), format="text")) for i in range(5)}
    for i in range(60):
        archive.add(S, f"กก {i}".encode(), format="text")
    found: list[str] = []
    after = None
    pages = 0
    while True:
        page = archive.search("กิ", series=S, limit=2, after=after)
        pages += 1
        found += [str(hit.name).partition("#")[0] for hit in page.hits]
        assert all(hit.end - hit.start == 2 for hit in page.hits)
        if page.next is None:
            break
        assert len(page.hits) == 2
        after = page.next
    assert sorted(found) == sorted(real)
    assert pages == 3


_THAI_CLUSTERS = ["ก", "กิ", "น", "ข้", "า", "ว", "แ", "ล้", "ห", "รื", "อ", "ยั", "ง"]
_THAI = st.sampled_from(_THAI_CLUSTERS)
_CJK = st.sampled_from(list("大门天安广场"))
_OTHER = st.sampled_from([" ", "。", "\n", "a", "1"])
_series = itertools.count(1)
#: The combining marks of the letters drawn (Unicode's general category M).
_MARKS = "".join(sorted({c for c in "".join(_THAI_CLUSTERS) if unicodedata.category(c).startswith("M")}))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(_THAI, _THAI, _CJK, _OTHER), min_size=3, max_size=40), st.data())
def test_property_any_run_of_clusters_is_found_at_its_first_place(
    archive: Archive, clusters: list[str], data: st.DataObject,
) -> None:
    """A run of one to four letters (each with its marks) of Thai or Chinese, anywhere in a text of them: its
    first place is the first hit, on both engines (each example in a series of its own)."""
    text = "".join(clusters)
    starts = list(itertools.accumulate(len(c) for c in clusters))
    bounds = [0, *starts]
    runs = [(bounds[i], bounds[j]) for i in range(len(clusters)) for j in range(i + 1, min(len(clusters), i + 4) + 1)
            if all(re.match(f"[{UNSPACED}]", c) for c in clusters[i:j])]
    if not runs:
        return
    i, j = data.draw(st.sampled_from(runs))
    query = text[i:j]
    series = f"s{next(_series)}.example.us"
    archive.add_series(series)
    archive.add(series, text.encode("utf-8"), format="text")
    canonical = text.replace("\n", "\r\n")
    # each letter is a word of its own to the index: the query's letters with only a separator between them (a
    # space, 。, a line's end) match too, "ก น" as "กน" does (found in review, 2026-11-27: str.find alone failed)
    letters = [c for c in spaced(query).split(SPACER) if c]
    # a letter is matched with the marks it has, whole: the query ก is not the ก of กิ, nor กิ a ก with a mark
    # (found by hypothesis, 2026-11-30: SQLite's FTS5 answered the bare ก of "กกิ " for กิ)
    whole = f"(?![{_MARKS}])"
    found = re.search("(?:[ 。\r\n])*".join(re.escape(c) + whole for c in letters), canonical)
    assert found is not None
    at, end = found.span()
    assert first_hit(archive, query, series) == (at, end, canonical[at:end].encode("utf-8")), (text, query)


#: Step 17's rule: a separator beside each Han, kana and Bopomofo character, and no other.
_STEP_17_RANGES = "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c\u3041-\u30ff\u3105-\u312f" \
    "\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
_STEP_17 = re.compile(f"(?<=[{_STEP_17_RANGES}])|(?=[{_STEP_17_RANGES}])")


def _as_step_17_wrote(archive: Archive) -> None:
    """Put the catalog back as schema 17 left it: each passage spaced by step 17's rule, step 18 not yet made."""
    store = archive.store
    with store._write():
        for pid, body in store._query("SELECT id, body FROM search_passages"):
            old = _STEP_17.sub(SPACER, body.replace(SPACER, ""))
            if old != body:
                if hasattr(store, "_conn"):
                    store._query("INSERT INTO search_fts (search_fts, rowid, body) VALUES ('delete', ?, ?)", (pid, body))
                store._query("UPDATE search_passages SET body = ? WHERE id = ?", (old, pid))
                if hasattr(store, "_conn"):
                    store._query("INSERT INTO search_fts (rowid, body) VALUES (?, ?)", (pid, old))
        store._query("DELETE FROM schema_migrations WHERE version >= ?", (RESPACED_STEP,))


def test_a_catalog_of_step_17_is_written_again_when_migrated(location: str) -> None:
    thai = TEXT.replace("\n", "\r\n").find("แล้ว")
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = archive.add(S, TEXT.encode("utf-8"), format="text")
        kana = archive.add(S, "か\u3099っこいい\n".encode(), format="text")  # が written as か and a sound mark
        _as_step_17_wrote(archive)
        assert archive.store.schema_version() == RESPACED_STEP - 1
        assert first_hit(archive, "แล้ว") is None  # a Thai sentence is one word to step 17's index
        assert first_hit(archive, "天安门") is not None
    with Archive.init(location) as archive:  # pdi init migrates it
        assert archive.store.schema_version() == SCHEMA_VERSION
        assert [str(h.name) for h in archive.search("แล้ว").hits] == [f"{name}#char={thai},{thai + 4}"]
        assert [str(h.name) for h in archive.search("か\u3099っこ").hits] == [f"{kana}#char=0,4"]
        assert first_hit(archive, "天安门") is not None
        assert not archive.verify().problems
    if "://" not in location:  # SQLite's own check that the FTS5 index holds what the passages say
        db = sqlite3.connect(Path(location) / "catalog.sqlite")
        db.execute("INSERT INTO search_fts (search_fts) VALUES ('integrity-check')")
        db.close()


@pytest.mark.parametrize(("text", "query", "at"), [
    ("कील काल", "काल", (4, 7)),  # kīl, kāl: the same letters, other vowel signs, other words
    ("काल कल", "कल", (4, 6)),
    ("কিছু কাছু", "কাছু", (5, 9)),  # Bengali
    ("กกิ ", "กิ", (1, 3)),
])
def test_a_word_with_vowel_signs_is_not_found_in_one_with_others(
        archive: Archive, text: str, query: str, at: tuple[int, int]) -> None:
    """A combining mark is a letter of its word to both engines (schema step 23 on SQLite, whose FTS5 read it as a
    separator: ``काल`` was found in ``कील``, ``কাছু`` in ``কিছু``): only the word as written is found."""
    archive.add(S, text.encode("utf-8"), format="text")
    assert first_hit(archive, query) == (*at, query.encode("utf-8"))


def test_a_catalog_of_step_22_makes_its_index_again_when_migrated(tmp_path: Path) -> None:
    """Step 23 on SQLite: an index made with the tokenizer before it (marks read as separators) is made again from
    the passages, and finds a word by its vowel signs; FTS5's own check says it holds what the passages say."""
    location = str(tmp_path / "a")
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = archive.add(S, "कील काल\n".encode(), format="text")
        store = archive.store
        with store._write():
            store._query("DROP TABLE search_fts")
            store._query("CREATE VIRTUAL TABLE search_fts USING fts5(body, content='search_passages',"
                         " content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')")
            store._query("INSERT INTO search_fts (search_fts) VALUES ('rebuild')")
            store._query("DELETE FROM schema_migrations WHERE version >= 23")
        assert first_hit(archive, "काल")[:2] == (0, 3)  # the step before: कील, the same letters
    with Archive.init(location) as archive:  # pdi init migrates it
        assert archive.store.schema_version() == SCHEMA_VERSION
        assert [str(h.name) for h in archive.search("काल").hits] == [f"{name}#char=4,7"]
    db = sqlite3.connect(Path(location) / "catalog.sqlite")
    db.execute("INSERT INTO search_fts (search_fts) VALUES ('integrity-check')")
    assert "categories" in db.execute("SELECT sql FROM sqlite_master WHERE name = 'search_fts'").fetchone()[0]
    db.close()


def _as_step_23_wrote(archive: Archive, text: str) -> None:
    """Put the catalog back as schema 23 left it: the passage of a one-passage text its whole text, variation
    selectors and all, standing for the document one for one (a selector was no mark a passage left out)."""
    as_an_earlier_step_wrote(archive, spaced(text), len(text), SELECTORS_STEP)



def test_a_catalog_of_step_23_is_written_again_without_its_selectors(location: str) -> None:
    """Step 24 on both stores: a passage holding variation selectors is written again without them, each character
    before one standing for itself and it, so that the bare character finds it and the hit covers both."""
    # 葛 0, its selector 1, 城 2, an ideographic comma 3 (a separator beyond ASCII, which the index holds between two
    # APART characters), ᠤᠯᠤᠰ 4 to 7, a space 8
    text = f"葛\U000E0100城、ᠤᠯᠤᠰ {MONGOL}\r\n"
    bare_mongol = MONGOL.replace("\u180b", "")
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = archive.add(S, text.replace("\r\n", "\n").encode("utf-8"), format="text")
        _as_step_23_wrote(archive, text)
        assert archive.store.schema_version() == SELECTORS_STEP - 1
        assert first_hit(archive, bare_mongol) is None  # a word to PostgreSQL with its selector, two words to FTS5
        if "://" in location:
            assert first_hit(archive, "葛") is None  # PostgreSQL's word was 葛 and its selector
    with Archive.init(location) as archive:  # pdi init migrates it
        assert archive.store.schema_version() == SCHEMA_VERSION
        assert [str(h.name) for h in archive.search("葛").hits] == [f"{name}#char=0,2"]
        assert [str(h.name) for h in archive.search("葛\U000E0100城").hits] == [f"{name}#char=0,3"]
        assert [str(h.name) for h in archive.search(bare_mongol).hits] == [f"{name}#char=9,16"]
        assert archive.get(f"{name}#char=9,16").data == MONGOL.encode("utf-8")
        assert archive.get(f"{name}#char=0,2").data == "葛\U000E0100".encode()
        with archive.store._read():
            bodies = [str(b) for (b,) in archive.store._query("SELECT body FROM search_passages")]
        assert bodies and not any(c in body for body in bodies for c in "\U000E0100\u180b")
        assert not archive.verify().problems
    if "://" not in location:  # SQLite's own check that the FTS5 index holds what the passages say
        db = sqlite3.connect(Path(location) / "catalog.sqlite")
        db.execute("INSERT INTO search_fts (search_fts) VALUES ('integrity-check')")
        db.close()


def test_the_marks_are_unicodes() -> None:
    """The combining marks kept with their letters are Unicode's (categories Mn, Mc, Me), as Python's unicodedata
    knows them: every one of them, and nothing else, in the Unicode version the table was made from."""
    from pdi.passages import _marks

    table = {code for first, last in _marks.MARKS for code in range(first, last + 1)}
    assert all(unicodedata.category(chr(code))[0] == "M" for code in table)
    if unicodedata.unidata_version == _marks.UNICODE:
        assert table == {code for code in range(0x110000) if unicodedata.category(chr(code))[0] == "M"}


def _places(text: str, word: str) -> list[tuple[int, int]]:
    """Every place ``word`` stands in ``text`` as a word of its own (str.find, not inside a longer word)."""
    found, at = [], text.find(word)
    while at >= 0:
        end = at + len(word)
        if (at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            found.append((at, end))
        at = text.find(word, at + 1)
    return found


@pytest.mark.parametrize(("text", "query", "phrase", "word"), [
    ("york new york", '"new york" york', "new york", "york"),
    ("york york new york", '"new york" york', "new york", "york"),
    ("new york, york new york york", '"new york" york', "new york", "york"),
])
def test_each_match_is_listed_where_its_words_stand(location: str, text: str, query: str, phrase: str, word: str) -> None:
    # FTS5 marks a phrase's match whole (one that overlaps another with it): the matches are its marks, not its
    # words read again and spelled into phrases. Found in review, 2026-11-27: "new york" york in "york new york"
    # listed "york new" as a match (its words spelled the phrase's two, neither of them Chinese or Thai).
    # PostgreSQL marks every word of the query wherever it stands: a match is the run of marked words that spells it
    with Archive.init(location) as archive:
        archive.add_series(S)
        archive.add(S, text.encode("utf-8"), format="text")
        (hit,) = archive.search(query, series=S).hits
    whole = _places(text, phrase)
    alone = [p for p in _places(text, word) if not any(a <= p[0] and p[1] <= b for a, b in whole)]
    assert sorted(hit.matches) == sorted(whole + alone)


@pytest.mark.parametrize(("text", "query", "found"), [
    ("The walrus walrus ran.", '"walrus ran"', "walrus ran"),
    ("york new york", '"new york"', "new york"),
    ("data science and science data", '"science data"', "science data"),
    ("大门天安门广场", "天安门", "天安门"),
    ("The walruses ran, and walrus ran.", '"walruses ran"', "walruses ran"),
])
def test_a_phrases_hit_is_where_the_phrase_stands_not_a_stray_word_of_it(
    archive: Archive, text: str, query: str, found: str,
) -> None:
    """Found in review, 2026-11-27: PostgreSQL marks each word of a phrase wherever it stands, and the hit began at
    a stray one (``"walrus ran"`` in ``The walrus walrus ran.`` was ``walrus walrus``)."""
    archive.add(S, text.encode("utf-8"), format="text")
    (hit,) = archive.search(query).hits
    assert (hit.start, hit.end) == (text.find(found), text.find(found) + len(found))


@pytest.mark.parametrize(("text", "query"), [
    ("un cafe\u0301 noir", "caf\u00e9"),  # the text decomposed, the query composed
    ("un caf\u00e9 noir", "cafe\u0301"),  # and the other way round
    ("le cafe\u0301 noir", '"cafe\u0301 noir"'),  # a phrase, both decomposed
    ("le caf\u00e9 noir", '"cafe\u0301 noir"'),
    # found by hypothesis, 2026-12-01: a word written half composed (ê and a combining dot below, as Vietnamese input
    # methods write ệ) is neither NFC nor NFD, and PostgreSQL found it with neither, not even as written
    ("ti\u00ea\u0301ng Vi\u00ea\u0323t nam", "Vi\u00ea\u0323t"),
    ("ti\u00ea\u0301ng Vi\u00ea\u0323t nam", '"Vi\u00ea\u0323t nam"'),
])
def test_a_word_is_found_whether_its_accents_are_composed_or_not(archive: Archive, text: str, query: str) -> None:
    """Found in review, 2026-11-27: PostgreSQL found ``café`` (one code point for é) only in text written so, not
    in ``cafe`` and U+0301 (SQLite's tokenizer folds both to ``cafe``). The hit is the word as the text writes it."""
    archive.add(S, text.encode("utf-8"), format="text")
    (hit,) = archive.search(query).hits
    word = text.split()[1]
    assert (hit.start, hit.end)[0] == text.find(word)
    assert archive.get(str(hit.name)).data.decode("utf-8").startswith(word)
