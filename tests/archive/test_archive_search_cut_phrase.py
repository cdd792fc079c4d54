"""A phrase a passage's cut runs through is found, once, on both stores.

A document is indexed as passages of about 4,000 characters that do not overlap; a phrase whose words stand on
both sides of a cut was found in neither (``天安|门``, ``quick | brown``). Each passage now carries the first words
of the next (its tail), indexed after its own text, and a match starting in the tail is the next passage's.

The texts here are made so that where the cut falls is known by hand: a passage is cut at the last white space
before its 4,000th character (``word `` is five characters: 800 of them are a passage), or in a text without white
space between two Chinese characters at its 4,000th.
"""

from __future__ import annotations

import pytest

from pdi.archive import Archive
from pdi.archive import search as search_module

S = "oma.eop.gov.us"



def filler(n: int, first: int = 0) -> str:
    """``n`` words of four letters (``aaaa``, ``aaab`` …) each with a space after it, no two alike: five characters
    a word. (PostgreSQL keeps the first 255 places of a word in a passage: ``word word …`` would lose the 256th on.)"""
    def word(i: int) -> str:
        return "".join(chr(ord("a") + i // 26**k % 26) for k in (3, 2, 1, 0))
    return "".join(word(i) + " " for i in range(first, first + n))


#: 798 words are 3,990 characters: "quick" stands at 3,990 to 3,995, the space after it at 3,995 (the last white
#: space before character 4,000), "brown" at 3,996 to 4,001: the cut falls between the two words.
SPACED = filler(798) + "quick brown fox " + filler(50, 798)
QUICK_BROWN = (3990, 4001)
BROWN_FOX = (3996, 4005)  # wholly after the cut: the second passage's, and in the first one's tail
LAST = SPACED[3985:3989]  # the word before "quick"
#: 3,998 Chinese characters, no two alike, then 天安门: the cut at character 4,000 falls between 安 and 门.
UNSPACED = "".join(chr(0x6000 + i) for i in range(3998)) + "天安门" + "广场" * 100


def found(archive: Archive, query: str, series: str = S, limit: int = 20) -> list[str]:
    """Every hit's name, page after page."""
    names: list[str] = []
    after: str | None = None
    while True:
        page = archive.search(query, series=series, limit=limit, after=after)
        assert page.hits or page.next is None  # no empty page before another
        names += [str(h.name) for h in page.hits]
        if page.next is None:
            return names
        after = page.next


@pytest.mark.parametrize(("text", "query", "cited"), [
    (UNSPACED, "天安门", (3998, 4001)),
    (UNSPACED, UNSPACED[3996:4001], (3996, 4001)),  # two characters before it, and it: a phrase of five words
    (SPACED, '"quick brown"', QUICK_BROWN),
    (SPACED, "quick brown", QUICK_BROWN),  # two words, one on each side: the shortest stretch holding both
    (SPACED, '"brown fox"', BROWN_FOX),  # found once, in the second passage, not again in the first one's tail
    (SPACED, f'"{LAST} quick"', (3985, 3995)),  # wholly before the cut, as before
])
def test_a_phrase_across_a_passage_cut_is_found_once(
    archive: Archive, text: str, query: str, cited: tuple[int, int]
) -> None:
    name = archive.add(S, text.encode("utf-8"), format="text")
    want = [f"{name}#char={cited[0]},{cited[1]}"]
    assert found(archive, query) == want
    assert found(archive, query, limit=1) == want


def test_pages_of_hits_leave_out_a_passage_matched_only_in_its_tail(archive: Archive) -> None:
    # three documents, each matched by "brown fox" in two passages (the first only in its tail): three hits, one a
    # page, each the second passage's, and no page empty
    names = [archive.add(S, (SPACED + "x" * n).encode("utf-8"), format="text") for n in range(3)]
    want = sorted(f"{name}#char={BROWN_FOX[0]},{BROWN_FOX[1]}" for name in names)
    assert sorted(found(archive, '"brown fox"', limit=1)) == want
    assert sorted(found(archive, '"brown fox"', limit=2)) == want


def test_reindex_makes_the_tails_again(archive: Archive) -> None:
    name = archive.add(S, SPACED.encode("utf-8"), format="text")
    archive.reindex()
    assert found(archive, '"quick brown"') == [f"{name}#char={QUICK_BROWN[0]},{QUICK_BROWN[1]}"]


def test_a_long_text_spooled_and_queued_keeps_its_tails(archive: Archive, monkeypatch: pytest.MonkeyPatch) -> None:
    # past 64 K characters the passages wait in a temporary file; past QUEUE_PAST octets the indexer makes them
    monkeypatch.setattr(search_module, "QUEUE_PAST", 50_000)
    # 20 passages of 800 words (each 4,000 characters, cut at its last space), then SPACED: the cut 80,000 on
    text = filler(16000, 2000) + SPACED + filler(20000, 20000)
    name = archive.add(S, text.encode("utf-8"), format="text")
    archive.index_queued()
    a, b = 80000 + QUICK_BROWN[0], 80000 + QUICK_BROWN[1]
    assert text[a:b] == "quick brown"
    assert found(archive, '"quick brown"') == [f"{name}#char={a},{b}"]
    a, b = 80000 + BROWN_FOX[0], 80000 + BROWN_FOX[1]
    assert found(archive, '"brown fox"') == [f"{name}#char={a},{b}"]


def test_a_phrase_across_a_cut_of_a_page_is_named_in_its_source(archive: Archive) -> None:
    # the page's text is SPACED with "brown" bold: "<p>" is 3 characters, so "quick" stands at 3 + 3,990 = 3,993 of
    # the source, "<b>" at 3,999, "brown" at 4,002 to 4,007; the cut, at the text's 3,996th, between the two words
    page = "<p>" + SPACED.replace("quick brown", "quick <b>brown</b>", 1) + "</p>"
    assert page[3993:4007] == "quick <b>brown"
    name = archive.add(S, page.encode("utf-8"), format="html")
    assert found(archive, '"quick brown"') == [f"{name}#char=3993,4007"]
