"""Counts on the reader's catalogue pages are grouped by thousands, as the rest of the app prints them (``1,234
documents``, not ``1234 documents``): the home page, a series, its year, month and day, each calendar's labels.

1,234 documents are deposited on one day, 2026-11-22, in one series: every count below is worked out from that by
hand, never read from the pages' own code.
"""

from __future__ import annotations

import datetime
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import html5lib
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from pdi._wording import counted
from pdi.archive import Archive, Content
from pdi.server import create_app

S = "library.example.us"
#: Documents deposited on 2026-11-22: one thousand two hundred and thirty-four.
MANY = 1234


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root: Path = tmp_path_factory.mktemp("counts")
    day = datetime.datetime(2026, 11, 22, 10, 0, tzinfo=datetime.UTC)
    with Archive.init(root / "archive", clock=lambda: day) as archive:
        archive.add_series(S)
        done = archive.deposit_batch(S, [([Content(b"minutes %d\n" % i, "text")], None) for i in range(MANY)])
        assert len(done) == MANY
        yield TestClient(create_app(archive.location, archive=archive))


def _page(client: TestClient, path: str) -> ET.Element:
    answer = client.get(path)
    assert answer.status_code == 200, answer.text[:300]
    return html5lib.parse(answer.text, namespaceHTMLElements=False)


def _text(element: ET.Element | None) -> str:
    assert element is not None
    return " ".join("".join(element.itertext()).split())


#: A count of documents printed as a run of four digits or more (ungrouped).
UNGROUPED = re.compile(r"\b\d{4,} (?:documents?|days?|versions?|captures?|blobs?)\b")


@pytest.mark.parametrize(("path", "said"), [
    ("/", "This archive has minted 1,234 documents in 1 series"),
    (f"/series/{S}", "1,234 documents, minted on"),
    (f"/series/{S}/2026", "1,234 documents minted in 2026 on 1 day."),
    (f"/series/{S}/2026/11", "1,234 documents minted this month."),
    (f"/series/{S}/2026/11/22", "1,234 documents minted on this day (GMT); this page shows the first 100."),
    (f"/series/{S}/2026/11/22?limit=1000", "1,234 documents minted on this day (GMT); this page shows the first 1,000."),
])
def test_a_catalogue_pages_count_is_grouped_by_thousands(client: TestClient, path: str, said: str) -> None:
    page = _page(client, path)
    main = _text(page.find(".//main"))
    assert said in main, main[:400]
    labels = [a.get("aria-label", "") for a in page.iter("a")]
    assert UNGROUPED.findall(main + " " + " ".join(labels)) == []


def test_a_calendars_labels_say_the_count_grouped(client: TestClient) -> None:
    labels = [a.get("aria-label") for path in (f"/series/{S}", f"/series/{S}/2026", f"/series/{S}/2026/11")
              for a in _page(client, path).iter("a") if a.get("aria-label")]
    assert "November 2026: 1,234 documents" in labels, labels  # the series' table of months
    assert "22 November 2026: 1,234 documents" in labels, labels  # the month's calendar


def test_counted_of_known_counts() -> None:
    assert counted(0, "document") == "0 documents"
    assert counted(1, "document") == "1 document"
    assert counted(999, "day") == "999 days"
    assert counted(1000, "day") == "1,000 days"
    assert counted(1234, "series", "series") == "1,234 series"
    assert counted(12_345_678, "entry", "entries") == "12,345,678 entries"


@given(st.integers(0, 10**24))
def test_counted_groups_the_count_by_threes_from_the_right(count: int) -> None:
    number, noun = counted(count, "name").split(" ")
    assert re.fullmatch(r"\d{1,3}(,\d{3})*", number), number
    assert int(number.replace(",", "")) == count
    assert noun == ("name" if count == 1 else "names")
