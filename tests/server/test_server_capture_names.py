"""A capture's name as a person reads it: its URL and date first, the name that encapsulates the URL one click away.

A document deposited under its URL is named with the URL encapsulated
(PDI-GRAMMAR §2.4: ``…/http:%2F%2Fwww%2Eexample%2Ecom%2F….html.1``), right for
a machine and unreadable for a person. The viewer's heading, the document
page's, and the search's hits show the URL and when it was deposited; the
name stays on the page, in a ``<details>``. Pages are parsed with html5lib.
"""

from __future__ import annotations

import datetime
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import html5lib
import pytest
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.server import create_app

S = "library.example.us"
URL = "http://www.example.com/news/today.html?id=1&x=2"
NOW = datetime.datetime(2026, 11, 25, 10, 0, tzinfo=datetime.UTC)


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    opened = Archive.init(tmp_path / "archive", clock=lambda: NOW)
    opened.add_series(S)
    try:
        yield opened
    finally:
        opened.close()


def _get(client: TestClient, url: str) -> ET.Element:
    answer = client.get(url)
    assert answer.status_code == 200, answer.text[:300]
    return html5lib.parse(answer.text, namespaceHTMLElements=False)


def _text(element: ET.Element | None) -> str:
    assert element is not None
    return " ".join("".join(element.itertext()).split())


def test_a_capture_is_headed_by_its_url_and_date_its_name_one_click_away(archive: Archive) -> None:
    name = str(archive.deposit(S, [Content(b"<p>weather: rain today</p>", "html")], foreign_id=URL)[0])
    assert "%2F" in name  # the name encapsulates the URL
    client = TestClient(create_app(archive.location, archive=archive))
    view = _get(client, f"/view?pdi={urllib.parse.quote(name, safe='')}")
    heading = view.find(".//main//h1")
    assert _text(heading) == f"{URL} captured 2026-11-25 10:00:00 UTC"
    assert "%2F" not in _text(heading)
    hidden = view.find(".//main//details[@class='pdi-name']")
    assert hidden is not None and _text(hidden.find("summary")) == "PDI" and _text(hidden.find("code")) == name
    # the document page: the URL heads it; each version's name one click away
    document = _get(client, f"/view?pdi={urllib.parse.quote(name.rsplit('.', 2)[0], safe='')}")
    assert _text(document.find(".//main//h1")) == URL
    names = [_text(d.find("code")) for d in document.findall(".//table[@id='versions']//details")]
    assert names == [name]
    # a search's hit: the URL and the date, its link to the passage; the name in a details
    hits = _get(client, "/search?q=rain").findall(".//ol[@class='hits']/li")
    assert len(hits) == 1
    link = hits[0].find("a")
    assert link is not None and _text(link) == f"{URL} captured 2026-11-25 10:00:00 UTC"
    assert link.get("href", "").endswith("#passage")
    assert _text(hits[0].find("details/code")).startswith(name + "#char=")


def test_a_serial_name_is_shown_as_it_is(archive: Archive) -> None:
    name = str(archive.add(S, b"plain words\n", format="text"))
    client = TestClient(create_app(archive.location, archive=archive))
    view = _get(client, f"/view?pdi={urllib.parse.quote(name, safe='')}")
    assert _text(view.find(".//main//h1")) == name and view.find(".//main//details[@class='pdi-name']") is None
