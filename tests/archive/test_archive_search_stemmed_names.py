"""A phrase found in words written otherwise (``cats dogs`` for ``"cat dog"``) is named by its own first match, on both
stores.

PostgreSQL's ``ts_headline`` marks every word of the query wherever it stands, and a run of marked words written
otherwise was taken for the phrase whatever word stood where (``dogs cats`` for ``"cat dog"``); a match written as
the query is written was taken before an earlier one written otherwise, or composed otherwise (``café`` and
``cafe`` with U+0301). The words here stem alike on both engines (Porter's ``cats`` and Snowball's are ``cat``):
each expected range is where Python's ``str.find`` finds the phrase as the text writes it.
"""

from __future__ import annotations

import pytest

from pdi.archive import Archive

S = "oma.eop.gov.us"


@pytest.mark.parametrize(("text", "query", "found"), [
    ("dogs to the cat, cats to the dog", '"cat to the dog"', "cats to the dog"),
    ("dogs cats, cats dogs", '"cat dog"', "cats dogs"),
    ("dogs cats, cats dogs, cat dog", '"cat dog"', "cats dogs"),  # the first match, not the first written as asked
    ("café carpenter; cafe\u0301 carpenter", '"cafe\u0301 carpenter"', "café carpenter"),
    ("cafe\u0301 and the carpenter; café and the carpenter", '"café and the carpenter"', "cafe\u0301 and the carpenter"),
    ("dogs cats sea, cats dogs", '"cat dog" sea', "sea, cats dogs"),
    # SQLite named the later match where two overlap, one written as the query is (both engines' FTS5 mark is one)
    ("cats cat cat ", '"cat cat"', "cats cat"),
    ("cat cats cats", '"cats cats"', "cat cats"),
    # a word written twice in two cases was two words, named by the shortest match, where in one case it was one
    ("dogs dog ", "Dog dog", "dogs"),
    ("dogs dog ", "dog DOG", "dogs"),
    ("dogs dog ", '"Dog" "dog" dog', "dogs"),
])
def test_a_phrase_written_otherwise_is_named_by_its_own_match(
    archive: Archive, text: str, query: str, found: str
) -> None:
    archive.add(S, text.encode(), format="text")
    (hit,) = archive.search(query).hits
    assert (hit.start, hit.end) == (text.find(found), text.find(found) + len(found)), text[hit.start:hit.end]
