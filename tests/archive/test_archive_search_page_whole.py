"""A page of search hits is as long as asked while the index is made again beside it.

A search reads its page of hits (one statement) and then each hit's passage marked for the query (one statement
a hit). On PostgreSQL a read is READ COMMITTED, each statement seeing the latest commit: a ``pdi reindex``
committed between the two (by another process: a resolver serves searches while the operator reindexes) had
deleted the passages the page named and made them again under new ids, so that no marked passage was found for
them and those hits were left out. The page came out shorter than asked, the hits after it were numbered as if
the missing ones had not been there (the next page repeated hits), and the last page's ``next`` was lost. The
search now reads the page and its passages in one snapshot (SQLite's read transaction is one already).

What is expected is worked out from the deposits alone: three documents holding the word three times, twice and
once (ranked so by both engines, whatever ids the passages get when made again), so a page of two hits is the
first two with a next page, and that page the third.
"""

from __future__ import annotations

from typing import Any

import pytest

from pdi.archive import Archive

S = "oma.eop.gov.us"
TEXTS = [f"memorandum {n}: {'the walrus ' * times}was seen on the shore\n" for n, times in (("one", 3), ("two", 2),
                                                                                          ("three", 1))]


def test_a_page_of_hits_is_whole_while_the_index_is_made_again_beside_it(
    archive: Archive, location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [str(archive.add(S, text.encode(), format="text")) for text in TEXTS]
    other = Archive.open(location)  # another process's archive: the operator's pdi reindex
    store = archive.store
    page = type(store)._search_page
    reindexed: list[int] = []

    def page_then_reindex(self: Any, *args: Any, **kwargs: Any) -> Any:
        rows = page(self, *args, **kwargs)
        if not reindexed:  # committed after the page's statement, before its passages are read
            reindexed.append(other.reindex().passages)
        return rows

    try:
        monkeypatch.setattr(type(store), "_search_page", page_then_reindex)
        first = archive.search("walrus", limit=2)
        assert reindexed == [3]  # the index was made again in between: one passage a document
        assert len(first.hits) == 2 and first.next is not None, first
        second = archive.search("walrus", limit=2, after=first.next)
        assert second.next is None
        found = [str(hit.name).split("#")[0] for hit in (*first.hits, *second.hits)]
        assert found == names  # best first, each once: none repeated, none lost
        for hit in (*first.hits, *second.hits):
            assert archive.get(hit.name).data == b"walrus"  # the hit names the word itself
    finally:
        other.close()
