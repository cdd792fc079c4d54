"""SQLite full-text search against a reference matcher written from docs/reference/search.md.

The reference reads a query as the reference says (double quotes a phrase, a word with punctuation inside the
phrase of its parts, everything else words or passed over, an open quote an error), reads a document's words with
a regular expression of its own over a small vocabulary (each Chinese character a word), folds case and diacritics
as FTS5 does, and says which documents hold every phrase and the hit's range: for one phrase its first match, for
several the shortest (then leftmost) stretch holding a match of each. The ranges are checked by slicing the
CRLF-canonical text (written with ``str.replace``), never against pdi's own output.
"""

from __future__ import annotations

import re
import tempfile
import unicodedata

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.errors import LimitError, ParseError
from support.search_reference import matches_of, shortest_hit

S = "oma.eop.gov.us"

# words Porter leaves as they are, and that stem to no other's stem; "café" folds to "cafe"
LATIN = ["cat", "dog", "sea", "tea", "red", "e", "mail", "x1", "café", "cafe", "Cat", "and", "or", "near", "not"]
HAN = ["北", "京", "天", "安", "门"]
SEPARATORS = [" ", "\r\n", "\n", "\r", "-", "'", ", ", "。", "\u00a0", "…", " * ", ":", "(", ")", '"', "\t"]
_TOKEN = re.compile("[A-Za-z0-9é]+|[北京天安门]")


def crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\r\n")


def fold(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word.lower()) if not unicodedata.combining(c))


def tokens(text: str) -> list[tuple[str, int, int]]:
    return [(fold(m.group()), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def reference_query(query: str) -> list[tuple[str, ...]] | None:
    """The phrases of ``query``; ``None`` for an open quote or no words."""
    phrases: list[tuple[str, ...]] = []
    parts = query.split('"')
    if len(parts) % 2 == 0:
        return None
    for i, part in enumerate(parts):
        if i % 2:  # inside quotes: one phrase
            words = tuple(w for w, _, _ in tokens(part))
            if words:
                phrases.append(words)
        else:
            for chunk in part.split():
                words = tuple(w for w, _, _ in tokens(chunk))
                if words:
                    phrases.append(words)
    return list(dict.fromkeys(phrases)) or None  # a phrase written twice asks nothing more


def reference_hit(text: str, phrases: list[tuple[str, ...]]) -> tuple[int, int] | None:
    return shortest_hit(tokens(text), phrases)


def _doc() -> st.SearchStrategy[str]:
    def join(items: list[tuple[str, str]]) -> str:
        out = ""
        for i, (word, sep) in enumerate(items):
            if i and sep == "" and not (word in HAN or items[i - 1][0] in HAN):
                sep = " "
            out += (sep if i else "") + word
        return out

    return st.lists(st.tuples(st.sampled_from(LATIN + HAN), st.sampled_from([*SEPARATORS, ""])),
                    min_size=1, max_size=25).map(join)


_DECOR = ["", "*", "^", "(", ")", "+", "-", ":", "'", "{", "}", "."]


def _bare() -> st.SearchStrategy[str]:
    def join(parts: tuple[str, list[tuple[str, str]], str]) -> str:
        before, items, after = parts
        out = ""
        for i, (word, sep) in enumerate(items):
            if i and sep == "" and not (word in HAN or items[i - 1][0] in HAN):
                sep = "-"
            out += (sep if i else "") + word
        return before + out + after

    inner = st.lists(st.tuples(st.sampled_from(LATIN + HAN + ["AND", "OR", "NOT", "NEAR"]),
                               st.sampled_from(["", "-", "'", ".", ":", "*", "^"])), min_size=1, max_size=3)
    return st.tuples(st.sampled_from(_DECOR), inner, st.sampled_from(_DECOR)).map(join)


def _quoted() -> st.SearchStrategy[str]:
    words = st.lists(st.tuples(st.sampled_from(LATIN + HAN + ["*", "^", "NEAR", "(", ")", ":"]),
                               st.sampled_from([" ", "", ", ", "\u00a0", "-", "\t"])), min_size=0, max_size=4)
    return words.map(lambda items: '"' + "".join(w + s for w, s in items).strip() + '"')


QUERIES = st.lists(st.one_of(_bare(), _quoted(), st.sampled_from(['"', "NEAR(cat dog, 2)", "*", "body:cat", "-"])),
                   min_size=1, max_size=4).map(" ".join)


def check(docs: list[str], query: str) -> None:
    with tempfile.TemporaryDirectory() as where:
        archive = Archive.init(where)
        try:
            archive.add_series(S)
            names = {str(archive.add(S, d.encode("utf-8"), format="text")): crlf(d) for d in docs}
            phrases = reference_query(query)
            try:
                results = archive.search(query, limit=200)
            except (ParseError, LimitError) as exc:
                assert phrases is None or isinstance(exc, LimitError), (query, exc)
                return
            assert phrases is not None, query
            found = {}
            for hit in results.hits:
                name, _, fragment = str(hit.name).partition("#")
                assert fragment == f"char={hit.start},{hit.end}"
                assert name not in found, "one passage, one hit"
                found[name] = hit
            expected = {}
            for name, text in names.items():
                window = reference_hit(text, phrases)
                if window is not None:
                    expected[name] = window
            assert set(found) == set(expected), (query, phrases, [names[n] for n in set(found) ^ set(expected)])
            for name, hit in found.items():
                text = names[name]
                assert (hit.start, hit.end) == expected[name], (query, text, text[hit.start:hit.end],
                                                                text[slice(*expected[name])])
                # every match is a match of a phrase, and every match of a phrase is among them or overlaps one
                doc = tokens(text)
                spelled = {tuple(w for w, a, b in doc if s <= a and b <= e) for s, e in hit.matches}
                assert spelled <= set(phrases), (query, text, [text[s:e] for s, e in hit.matches])
                for phrase in phrases:
                    for a, b in matches_of(doc, phrase):
                        assert any(s < b and a < e for s, e in hit.matches), (query, text, phrase, (a, b),
                                                                              hit.matches)
        finally:
            archive.close()


@settings(max_examples=200)
@given(st.lists(_doc(), min_size=1, max_size=4), QUERIES)
@example(["cat café café café"], 'cat "café café"')  # a phrase's overlapping matches: a lone café was a match
@example(["café café café cat"], 'cat "café café"')  # and the later of them was lost: the window was not shortest
def test_search_finds_what_the_reference_finds(docs: list[str], query: str) -> None:
    check(docs, query)


def test_a_phrases_overlapping_matches_make_the_shortest_window_and_no_stray_match() -> None:
    # found by the property above: FTS5 marks a phrase's overlapping matches as one ("[café café café]" for
    # "café café"); pdi cut it into the first match and took the leftover "café" for a match of the phrase "cat",
    # and lost the second match, so that the hit named all four words where the last three hold both phrases
    text = "café café café cat"
    with tempfile.TemporaryDirectory() as where:
        archive = Archive.init(where)
        try:
            archive.add_series(S)
            archive.add(S, text.encode("utf-8"), format="text")
            (hit,) = archive.search('cat "café café"').hits
            assert text[hit.start:hit.end] == "café café cat"
            assert sorted(text[a:b] for a, b in hit.matches) == ["café café", "cat"]
            archive.add(S, b"cat cat cat dog", format="text")
            (hit,) = archive.search('"cat cat" dog').hits
            assert (hit.start, hit.end) == (4, 15)  # "cat cat dog"
            assert sorted(hit.matches) == [(0, 7), (12, 15)]  # no lone "cat"
            archive.add(S, b"cats cats cats dog", format="text")  # the same, stemmed
            (hit,) = [h for h in archive.search('"cat cat" dog').hits if h.start == 5]
            assert (hit.start, hit.end) == (5, 18)  # "cats cats dog"
            assert sorted(hit.matches) == [(0, 9), (15, 18)]  # no lone "cats"
        finally:
            archive.close()
