"""The reader's catalogue pages (pdi.server.pages.browse) through Starlette's TestClient, against what each test deposits.

Pages are parsed with html5lib (the HTML5 algorithm a browser uses) and read
by element, so a test sees what a reader sees: the rows of a table, the
targets of links, the items of a timeline.
"""

from __future__ import annotations

import datetime
import hashlib
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import html5lib
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.errors import ParseError
from pdi.server import create_app
from pdi.server.pages import browse

S = "library.example.us"
T = "news.example.us"
URL = "https://www.example.org/news?id=1&x=<y>"


class Clock:
    def __init__(self) -> None:
        self.now = datetime.datetime(2026, 11, 22, 10, 0, tzinfo=datetime.UTC)

    def __call__(self) -> datetime.datetime:
        return self.now

    def at(self, stamp: str) -> None:
        self.now = datetime.datetime.fromisoformat(stamp).replace(tzinfo=datetime.UTC)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def archive(tmp_path: Path, clock: Clock) -> Iterator[Archive]:
    opened = Archive.init(tmp_path / "archive", clock=clock)
    opened.add_series(S)
    opened.add_series(T)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def client(archive: Archive) -> TestClient:
    return TestClient(create_app(archive.location, archive=archive))


def _tree(text: str) -> ET.Element:
    return html5lib.parse(text, namespaceHTMLElements=False)


def _text(element: ET.Element | None) -> str:
    """The text of ``element`` as a reader sees it: white space collapsed, a ``<br>`` a space."""
    assert element is not None
    parts: list[str] = []

    def walk(node: ET.Element) -> None:
        parts.append(" " if node.tag == "br" else node.text or "")
        for child in node:
            walk(child)
            parts.append(child.tail or "")

    walk(element)
    return " ".join("".join(parts).split())


def _rows(page: ET.Element, table_id: str) -> list[list[str]]:
    table = page.find(f".//table[@id='{table_id}']")
    assert table is not None, f"no table #{table_id}"
    return [[_text(cell) for cell in row] for row in table.findall("./tbody/tr")]


def _links(element: ET.Element) -> list[str]:
    return [a.get("href", "") for a in element.iter("a")]


def _crumbs(page: ET.Element) -> list[str]:
    nav = page.find(".//nav[@class='crumbs']")
    assert nav is not None
    return [_text(li) for li in nav.iter("li")]


def _get(client: TestClient, path: str, status: int = 200) -> ET.Element:
    answer = client.get(path)
    assert answer.status_code == status, (path, answer.status_code, answer.text[:500])
    assert answer.headers["content-type"].startswith("text/html")
    return _tree(answer.text)


def _deposit_days(archive: Archive, clock: Clock) -> dict[str, int]:
    """Documents on a few days in S (and one in T); returns how many each day of S holds."""
    plan = {"2025-12-31": 2, "2026-01-02": 1, "2026-11-21": 1, "2026-11-22": 3}
    n = 0
    for day, count in plan.items():
        clock.at(f"{day}T09:00:00")
        for _ in range(count):
            n += 1
            archive.add(S, f"document {n}\n".encode(), format="text")
    clock.at("2026-11-22T09:00:00")
    archive.add(T, b"elsewhere\n", format="text")
    return plan


def test_home_shows_series_with_counts_and_latest_day_and_how_to_cite(client: TestClient, archive: Archive, clock: Clock) -> None:
    _deposit_days(archive, clock)
    page = _get(client, "/")
    assert _rows(page, "series") == [[S, "7", "2026-11-22", "2026-11-22 09:00:00 UTC"], [T, "1", "2026-11-22", "2026-11-22 09:00:00 UTC"]]
    assert f"/series/{S}" in _links(page)
    assert page.find(".//h2[@id='cite']") is not None
    # the boxes are labelled GET forms: to /view and to /captures
    forms = {f.get("action"): f for f in page.iter("form")}
    for action, field in (("/view", "pdi"), ("/captures", "url")):
        box = forms[action].find(f".//input[@name='{field}']")
        assert box is not None and forms[action].get("method") == "get"
        assert page.find(f".//label[@for='{box.get('id')}']") is not None


def test_view_errors_are_pages_of_their_own_with_their_status(client: TestClient) -> None:
    name = f"urn:pdi://{S}/2026/11/22/9.text.1"
    answer = client.get("/view", params={"pdi": name})
    assert answer.status_code == 404
    page = _tree(answer.text)
    assert "not in this archive" in _text(page.find(".//p[@class='error']"))
    assert page.find(".//input[@id='site-pdi']").get("value") == name  # type: ignore[union-attr]
    assert page.find(".//input[@id='home-pdi']") is None  # not the home page
    assert client.get("/view", params={"pdi": "urn:pdi:bad"}).status_code == 400


def test_series_list_and_a_series_by_year_and_month(client: TestClient, archive: Archive, clock: Clock) -> None:
    _deposit_days(archive, clock)
    rows = _rows(_get(client, "/series"), "series")
    assert [r[0] for r in rows] == [S, T] and rows[0][2:6] == ["7", "2025-12-31", "2026-11-22", "2026-11-22 09:00:00 UTC"]
    page = _get(client, f"/series/{S}")
    assert _crumbs(page) == ["Home", "Series", S]
    assert "7 documents, minted from 2025-12-31 to 2026-11-22 (GMT days)." in _text(page.find(".//main"))
    one_day = _get(client, f"/series/{T}")  # a series whose documents were all minted on one day says so once
    assert ", minted on 2026-11-22 (a GMT day)." in _text(one_day.find(".//main")), _text(one_day.find(".//main"))
    years = _rows(page, "years")
    # year, Jan..Dec, total: newest year first
    assert years[0] == ["2026", "1", *["·"] * 9, "4", "·", "5"]
    assert years[1] == ["2025", *["·"] * 11, "2", "2"]
    assert f"/series/{S}/2026/11" in _links(page) and f"/series/{S}/2025" in _links(page)
    # a series named in other case is the same series, its links written canonically
    upper = _get(client, "/series/LIBRARY.Example.US")
    assert _rows(upper, "years") == years and f"/series/{S}/2026/11" in _links(upper)


def test_a_year_as_calendars_and_a_month_with_its_days(client: TestClient, archive: Archive, clock: Clock) -> None:
    _deposit_days(archive, clock)
    year = _get(client, f"/series/{S}/2026")
    assert _crumbs(year) == ["Home", "Series", S, "2026"]
    months = [_text(h) for h in year.iter("h2")]
    assert months == ["January 2026", "November 2026"]
    day_links = sorted(h for h in _links(year) if h.count("/") == 5)
    assert day_links == [f"/series/{S}/2026/01/02", f"/series/{S}/2026/11/21", f"/series/{S}/2026/11/22"]
    month = _get(client, f"/series/{S}/2026/11")
    assert _crumbs(month) == ["Home", "Series", S, "2026", "November"]
    # the year's page links each month; the month's own page does not link to itself
    assert f"/series/{S}/2026/11" in _links(year) and f"/series/{S}/2026/11" not in _links(month)
    assert [_text(h) for h in month.iter("h2")] == ["Calendar"]  # its heading names the month once
    assert _rows(month, "days") == [["2026-11-21", "Saturday", "1"], ["2026-11-22", "Sunday", "3"]]
    # November 2026 begins on a Sunday: the calendar's first week has six empty days before the 1st
    first_week = [_text(td) for td in month.findall(".//table[@class='month']/tbody/tr")[0]]
    assert first_week == ["", "", "", "", "", "", "1"]
    # the nearest months with documents either side, across a year's end; none after the last
    def near(page: ET.Element) -> dict[str, str]:
        return {a.get("rel", ""): a.get("href", "") for a in page.findall(".//p[@class='pager']/a")}

    assert near(month) == {"prev": f"/series/{S}/2026/01"}
    assert near(_get(client, f"/series/{S}/2026/01")) == {"prev": f"/series/{S}/2025/12", "next": f"/series/{S}/2026/11"}
    assert near(_get(client, f"/series/{S}/2026/06")) == {"prev": f"/series/{S}/2026/01", "next": f"/series/{S}/2026/11"}


@pytest.mark.parametrize(("path", "status"), [
    ("/series/nowhere.example.us", 404),
    ("/series/library..example.us", 400),
    (f"/series/{S}/26", 400),
    (f"/series/{S}/2026/13", 400),
    (f"/series/{S}/2026/2/01", 400),
    (f"/series/{S}/2026/02/30", 400),
    (f"/series/{S}/2026/11/22?limit=0", 400),
    (f"/series/{S}/2026/11/22?limit=1001", 400),
    (f"/series/{S}/2026/11/22?limit={'9' * 5000}", 400),  # past Python's 4,300 digits an int may be read from
])
def test_bad_paths_answer_the_status_of_their_error(client: TestClient, path: str, status: int) -> None:
    page = _get(client, path, status)
    assert page.find(".//p[@class='error']") is not None


def test_a_days_documents_a_page_at_a_time(client: TestClient, archive: Archive, clock: Clock) -> None:
    clock.at("2026-11-22T09:00:00")
    serials = [archive.add(S, f"serial {i}\n".encode(), format="text") for i in range(1, 6)]
    foreign = archive.deposit(S, [Content(b"<p>x</p>", "html"), Content(b"x\n", "text")], foreign_id="doi:10.1/x")
    archive.annotate(serials[1], "title", "The second")
    clock.at("2026-11-23T08:00:00")
    archive.add_version(serials[0], [Content(b"serial 1, again\n", "text")])
    generic = [str(p).rsplit(".", 2)[0] for p in serials] + [f"urn:pdi://{S}/2026/11/22/doi:10%2E1%2Fx"]
    seen: list[list[str]] = []
    path: str | None = f"/series/{S}/2026/11/22?limit=2"
    while path is not None:
        page = _get(client, path)
        rows = page.findall(".//table[@id='documents']/tbody/tr")
        assert 1 <= len(rows) <= 2
        seen += [[_text(c) for c in row] + [row[0].find("a").get("href", "")] for row in rows]  # type: ignore[union-attr]
        following = page.find(".//a[@rel='next']")
        path = None if following is None else following.get("href")
    assert [r[-1] for r in seen] == [f"/view?pdi={urllib.parse.quote(g, safe='')}" for g in generic]
    assert seen[0][0] == "1"
    assert seen[0][3:5] == ["2", "2026-11-23 08:00:00 UTC"]
    # each format the media type its token names (PDI-GRAMMAR.md §2.6: text is text/plain, html text/html)
    assert seen[1][1] == "The second" and seen[1][2] == "text/plain"
    assert seen[5][2] == "text/html, text/plain" and seen[5][4] == "2026-11-22 09:00:00 UTC"
    assert seen[0][2] == "text/plain"  # the formats of the latest version
    whole = _get(client, f"/series/{S}/2026/11/22")
    assert len(whole.findall(".//table[@id='documents']/tbody/tr")) == 6 and whole.find(".//a[@rel='next']") is None
    assert "6 documents minted on this day" in _text(whole.find(".//main"))
    assert _crumbs(whole) == ["Home", "Series", S, "2026", "November", "22"]
    assert str(foreign[0]).startswith(generic[5])
    # a withdrawn document, and one whose latest version is withdrawn, said so beside their titles
    archive.withdraw(generic[2], "deposited by mistake")
    archive.withdraw(str(archive.add_version(generic[1], [Content(b"serial 2, wrong\n", "text")])[0]), "wrong")
    titles = [_text(row[1]) for row in _get(client, f"/series/{S}/2026/11/22").findall(".//table[@id='documents']/tbody/tr")]
    # a document without a title says so (a blank cell reads as missing)
    assert titles[:4] == ["untitled", "The second latest version withdrawn", "untitled withdrawn", "untitled"]
    # a document whose only version was withdrawn is withdrawn, not "latest version withdrawn"
    archive.withdraw(str(serials[3]), "sealed")
    titles = [_text(row[1]) for row in _get(client, f"/series/{S}/2026/11/22").findall(".//table[@id='documents']/tbody/tr")]
    assert titles[3] == "untitled withdrawn"


def test_the_document_page_versions_formats_fixity_and_statement_history(
    client: TestClient, archive: Archive, clock: Clock
) -> None:
    clock.at("2026-11-22T10:00:00")
    first = archive.deposit(S, [Content(b"<p>one</p>", "html"), Content(b"one\n", "text")])
    generic = str(first[0]).rsplit(".", 2)[0]
    clock.at("2026-11-22T11:00:00")
    archive.annotate(generic, "title", "First title", who="ann")
    archive.annotate(f"{first[1]}#char=0,3", "x-note", "a word", who="bob")
    archive.annotate(generic, "title", "Second title", who="cy")
    clock.at("2026-11-23T12:30:00")
    archive.add_version(generic, [Content(b"two\n", "text")])
    view = f"/view?pdi={urllib.parse.quote(generic, safe='')}"
    page = _get(client, view)
    assert _text(page.find(".//h1")) == "Second title"
    assert _crumbs(page) == ["Home", "Series", S, "2026", "November", "22", "1"]
    assert _rows(page, "versions") == [
        # each format the media type its token names (PDI-GRAMMAR.md, decision 6), the name beside it as it is
        ["1", "2026-11-22 10:00:00 UTC", f"text/html {generic}.html.1text/plain {generic}.text.1"],
        ["2", "2026-11-23 12:30:00 UTC", f"text/plain {generic}.text.2"],
    ]
    formats = _rows(page, "formats")
    assert [r[:5] for r in formats] == [
        ["1", "html", "text/html charset utf-8", "10", hashlib.sha256(b"<p>one</p>").hexdigest()],
        ["1", "text", "text/plain charset utf-8", "4", hashlib.sha256(b"one\n").hexdigest()],
        ["2", "text", "text/plain charset utf-8", "4", hashlib.sha256(b"two\n").hexdigest()],
    ]
    assert all(r[6] == "not audited yet" for r in formats)
    statements = page.findall(".//table[@id='statements']/tbody/tr")
    assert [(tr.get("class"), [_text(td) for td in tr]) for tr in statements] == [
        ("superseded", ["the document", "title", "First title", "ann", "2026-11-22 11:00:00 UTC", "superseded"]),
        ("current", ["1.text.1#char=0,3", "x-note", "a word", "bob", "2026-11-22 11:00:00 UTC", "current"]),
        ("current", ["the document", "title", "Second title", "cy", "2026-11-22 11:00:00 UTC", "current"]),
    ]
    # the viewer of one format links to its document's page, and its tab says the document's title
    viewed = _get(client, f"/view?pdi={urllib.parse.quote(str(first[1]), safe='')}")
    assert view in _links(viewed)
    assert _text(viewed.find(".//title")) == f"Second title — {first[1]}"
    clock.at("2026-11-24T06:00:00")
    archive.verify()
    formats = _rows(_get(client, view), "formats")
    assert [r[6] for r in formats] == ["intact, verified 2026-11-24 06:00:00 UTC"] * 3


def test_captures_of_a_url_as_a_timeline(client: TestClient, archive: Archive, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    names = []
    for series, stamp in [(S, "2026-11-22T08:00:00"), (T, "2025-03-04T10:00:00"), (S, "2026-01-01T00:00:00")]:
        clock.at(stamp)
        names.append(archive.add(series, f"<p>{stamp}</p>".encode(), format="html", foreign_id=URL))
    clock.at("2026-11-22T21:00:00")
    again = archive.add_version(names[0], [Content(b"<p>later</p>", "html")])
    archive.add(S, b"<p>other</p>", format="html", foreign_id=URL + "2")
    page = _get(client, "/captures?" + urllib.parse.urlencode({"url": URL}))
    items = page.findall(".//ol[@class='timeline']/li")
    assert [_text(li).split(" — ")[0] for li in items] == [
        "2025-03-04 10:00:00 UTC", "2026-01-01 00:00:00 UTC", "2026-11-22 08:00:00 UTC", "2026-11-22 21:00:00 UTC"
    ]
    assert [li.find("a").get("href") for li in items] == [  # type: ignore[union-attr]
        f"/view?pdi={urllib.parse.quote(str(n), safe='')}" for n in (names[1], names[2], names[0], again[0])
    ]
    assert [_text(h) for h in page.iter("h2")] == ["2025", "2026"]
    assert _text(page.find(".//h1")) == f"Captures of {URL}"  # escaped in the page, read back as text
    # the document page of a capture links to the timeline
    document = _get(client, f"/view?pdi={urllib.parse.quote(str(names[0]).rsplit('.', 2)[0], safe='')}")
    assert "/captures?" + urllib.parse.urlencode({"url": URL}) in _links(document)
    monkeypatch.setattr(browse, "CAPTURES_PAGE", 2)
    first = _get(client, "/captures?" + urllib.parse.urlencode({"url": URL}))
    assert len(first.findall(".//ol[@class='timeline']/li")) == 2
    following = first.find(".//a[@rel='next']")
    assert following is not None
    rest = _get(client, following.get("href", ""))
    assert [_text(li).split(" — ")[0] for li in rest.findall(".//ol[@class='timeline']/li")] == [
        "2026-11-22 08:00:00 UTC", "2026-11-22 21:00:00 UTC"
    ]
    assert rest.find(".//a[@rel='next']") is None
    none = _get(client, "/captures?" + urllib.parse.urlencode({"url": "https://nowhere.example/"}))
    assert "No capture of this URL" in _text(none.find(".//main"))
    assert _get(client, "/captures").find(".//input[@id='captures-url']") is not None


@given(st.dates(min_value=datetime.date(1, 1, 1), max_value=datetime.date(9999, 12, 31)))
def test_a_dates_path_parts_read_back_as_that_date(day: datetime.date) -> None:
    assert browse._parse_date_parts(S, f"{day.year:04d}", f"{day.month:02d}", f"{day.day:02d}") == (day.year, day.month, day.day)
    assert browse._parse_date_parts(S, f"{day.year:04d}", f"{day.month:02d}") == (day.year, day.month)


@given(st.text(max_size=6))
def test_a_path_part_that_is_not_a_date_is_a_parse_error(text: str) -> None:
    written = len(text) == 4 and text.isascii() and text.isdigit() and text != "0000"
    if written:
        assert browse._parse_date_parts(S, text) == (int(text),)
    else:
        with pytest.raises(ParseError):
            browse._parse_date_parts(S, text)
    month = len(text) == 2 and text.isascii() and text.isdigit() and 1 <= int(text) <= 12
    if month:
        assert browse._parse_date_parts(S, "2026", text) == (2026, int(text))
    else:
        with pytest.raises(ParseError):
            browse._parse_date_parts(S, "2026", text)
