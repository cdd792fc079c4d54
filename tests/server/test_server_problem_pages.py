"""The reader's app's error pages (pdi.server.pages.problem_pages): pages in the app's layout, statuses kept.

A withdrawn name is its tombstone (410: what was here, as the catalog
recorded it, when and why it was withdrawn, how to cite the tombstone); a
name a token is needed for says how to sign in (403), coming back to the
name; a name not here suggests the nearest names the reader may see (404);
an unknown path is a page for a browser and the RFC 9457 problem it was for
every other client. A version that is not the latest says so, and every
page links the API reference. Pages are parsed with html5lib and read by
element; the values checked are the deposited bytes' own (their length,
their SHA-256 by :mod:`hashlib`) and the catalog's record of the withdrawal.
"""

from __future__ import annotations

import datetime
import hashlib
import re
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
from pdi.errors import AccessError, LimitError, NotFoundError, ParseError, StoreError
from pdi.server import create_app
from pdi.server.pages import problem_pages as pages
from pdi.server.pages import reader

S = "library.example.us"
CLOSED = "closed.example.us"
SECRET = "secret.example.us"
NOW = datetime.datetime(2026, 11, 25, 10, 0, tzinfo=datetime.UTC)
HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}  # as Chromium asks
DRAFT = b"A draft deposited by mistake.\r\nIt names the wrong people.\r\n"


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    opened = Archive.init(tmp_path / "archive", clock=lambda: NOW)
    for series in (S, CLOSED, SECRET):
        opened.add_series(series)
    opened.set_series_access(CLOSED, "private")
    opened.set_series_access(SECRET, "hidden")
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def client(archive: Archive) -> TestClient:
    return TestClient(create_app(archive.location, archive=archive))


def _generic(name: object) -> str:
    return str(name).rsplit(".", 2)[0]


def _view(client: TestClient, name: str, status: int) -> ET.Element:
    answer = client.get("/view", params={"pdi": name}, headers=HTML)
    assert answer.status_code == status, answer.text[:500]
    assert answer.headers["content-type"] == "text/html; charset=utf-8"
    return html5lib.parse(answer.text, namespaceHTMLElements=False)


def _text(element: ET.Element | None) -> str:
    assert element is not None
    return " ".join("".join(element.itertext()).split())


def _links(page: ET.Element) -> list[str]:
    return [a.get("href", "") for a in page.iter("a")]


def test_a_withdrawn_document_is_its_tombstone(client: TestClient, archive: Archive) -> None:
    name = str(archive.add(S, DRAFT, format="text"))
    archive.annotate(_generic(name), "title", "Minutes of the board, draft")
    record = archive.withdraw(_generic(name), "deposited by mistake: a draft, not the minutes")
    page = _view(client, name, 410)
    assert _text(page.find(".//h1")) == "This name was withdrawn"
    facts = _text(page.find(".//dl[@class='tombstone']"))
    assert "Minutes of the board, draft" in facts and name in facts
    assert "deposited by mistake: a draft, not the minutes" in facts
    assert record.at.replace("T", " ")[:19] in facts  # when, as the catalog recorded it
    # what was here: its format, its size and SHA-256, those of the deposited bytes
    rows = page.findall(".//table[@id='withdrawn']/tbody/tr")
    assert len(rows) == 1
    cells = [_text(td) for td in rows[0].findall("td")]
    # the format as the media type its token names (PDI-GRAMMAR.md, decision 6: text is text/plain), the token in
    # the cell's tooltip
    assert cells[0] == "1" and cells[1] == "text/plain" and rows[0].findall("td")[1].get("title") == "format text"
    assert cells[2] == str(len(DRAFT)) and cells[3] == hashlib.sha256(DRAFT).hexdigest()
    # how to cite the tombstone: its title, its name, when and why it was withdrawn, where it resolves
    citation = _text(page.find(".//blockquote[@class='citation']"))
    assert citation.startswith("Minutes of the board, draft. " + name + ". Withdrawn 2026-11-25:")
    assert citation.endswith("/view?pdi=" + urllib.parse.quote(name, safe=""))
    assert page.find(".//h2[@id='cite-tombstone']") is not None
    assert "the deposited" not in _text(page.find(".//main"))  # its bytes are not shown
    assert DRAFT.decode().split("\r\n")[1] not in _text(page.find(".//main"))


@pytest.mark.parametrize(("title", "reason", "cited"), [
    ("Minutes of the board.", "Deposited in error.", "Minutes of the board. {name}. Withdrawn 2026-11-25: Deposited in error. "),
    ("Who signed it?", 'The clerk said "withdraw it."', 'Who signed it? {name}. Withdrawn 2026-11-25: The clerk said "withdraw it." '),
    ("Minutes", "a draft", "Minutes. {name}. Withdrawn 2026-11-25: a draft. "),
])
def test_a_tombstones_citation_has_one_full_stop_after_a_title_or_reason_that_ends_a_sentence(
    client: TestClient, archive: Archive, title: str, reason: str, cited: str
) -> None:
    """A reason or a title ending with its own stop (``Deposited in error.``) is not followed by a second one: the
    citation read ``…own copy.. http://…``."""
    name = str(archive.add(S, DRAFT, format="text"))
    archive.annotate(_generic(name), "title", title)
    archive.withdraw(_generic(name), reason)
    citation = _text(_view(client, name, 410).find(".//blockquote[@class='citation']"))
    assert citation.startswith(cited.format(name=name) + "http"), citation
    assert ".." not in citation.split(" http")[0], citation


def test_a_withdrawn_version_and_a_purged_one_say_so(client: TestClient, archive: Archive) -> None:
    name = str(archive.add(S, b"first\n", format="text"))
    archive.add_version(_generic(name), [Content(b"second\n", "text")])
    archive.withdraw(_generic(name) + ".text.2", "wrong file", purge=True)
    page = _view(client, _generic(name) + ".text.2", 410)
    said = _text(page.find(".//main"))
    assert "This version was withdrawn" in said and "Its octets were deleted as well" in said
    cells = [_text(td) for td in page.findall(".//table[@id='withdrawn']/tbody/tr/td")]
    assert cells[0] == "2" and cells[3] == hashlib.sha256(b"second\n").hexdigest()
    _view(client, name, 200)  # version 1 is still there
    # the document's page says which version was withdrawn, when and why
    rows = _view(client, _generic(name), 200).findall(".//table[@id='versions']/tbody/tr")
    assert "withdrawn" not in _text(rows[0]) and "withdrawn 2026-11-25 10:00:00 UTC: wrong file" in _text(rows[1])


def test_a_document_withdrawn_whole_is_its_tombstone_by_its_generic_name_too(client: TestClient, archive: Archive) -> None:
    name = str(archive.deposit(S, [Content(b"<p>x</p>", "html"), Content(b"x\n", "text")])[0])
    archive.withdraw(_generic(name), "never to be shown")
    page = _view(client, _generic(name), 410)
    assert "never to be shown" in _text(page.find(".//dl[@class='tombstone']"))
    assert [_text(r.find("td/code")) for r in page.findall(".//table[@id='withdrawn']/tbody/tr")] == [
        "text/html", "text/plain"]  # the tokens html and text, as media types (PDI-GRAMMAR.md, decision 6)


def test_a_generic_name_whose_versions_were_withdrawn_says_so_not_this_version(client: TestClient,
                                                                              archive: Archive) -> None:
    """A clerk withdraws the only version of a mistaken deposit (``…/2.html.1``) and follows the generic name
    (``…/2``): it names the document, not a version, so its tombstone says the document's only version was
    withdrawn (as ``pdi get`` says), never "This version"; with two versions, that every one was, the last when."""
    name = str(archive.add(S, DRAFT, format="text"))
    archive.withdraw(name, "deposited by mistake")
    said = _text(_view(client, _generic(name), 410).find(".//main"))
    assert "Its only version was withdrawn 2026-11-25 10:00:00 UTC" in said, said
    assert "This version" not in said
    assert "This version was withdrawn" in _text(_view(client, name, 410).find(".//main"))  # the versioned name's
    two = str(archive.add(S, b"first\n", format="text"))
    archive.add_version(_generic(two), [Content(b"second\n", "text")])
    archive.withdraw(two, "wrong file")
    archive.withdraw(_generic(two) + ".text.2", "wrong file too")
    said = _text(_view(client, _generic(two), 410).find(".//main"))
    assert "Every version was withdrawn, the last (version 2) 2026-11-25 10:00:00 UTC" in said, said
    assert "This version" not in said


def test_json_clients_keep_their_problems(client: TestClient, archive: Archive) -> None:
    name = str(archive.add(S, DRAFT, format="text"))
    archive.withdraw(_generic(name), "by mistake")
    for url in (f"/api/resolve?pdi={urllib.parse.quote(name, safe='')}", f"/uri-res/N2R?{name}"):
        # a browser's N2R (a citation's address followed) is the tombstone: tests/server/test_server_uri_res_pages.py
        for headers in ({}, {"Accept": "application/json"}, *([HTML] if url.startswith("/api/") else [])):
            answer = client.get(url, headers=headers)
            assert answer.status_code == 410 and answer.headers["content-type"] == "application/problem+json"
            assert answer.json()["status"] == 410 and "by mistake" in answer.json()["detail"]


def test_an_embargoed_name_says_until_when_in_words_and_the_problem_says_it_too(
    client: TestClient, archive: Archive,
) -> None:
    name = str(archive.add(S, b"the sealed minutes\n", format="text"))
    archive.embargo(name, "2099-01-01")
    page = _view(client, name, 403)
    assert _text(page.find(".//h1")) == "Under embargo until 1 January 2099"  # the catalog's 2099-01-01T00:00:00Z
    assert "from then on anyone may read it" in _text(page.find(".//main"))
    # a version was asked for: "This version", not "This document" (found in a walk of the app, 2026-11-30)
    assert _text(page.find(".//p[@class='lead']")).startswith("This version is under embargo until 2099-01-01")
    generic = _generic(name)
    archive.embargo(generic, "2099-01-01")
    lead = _text(_view(client, generic, 403).find(".//p[@class='lead']"))
    assert lead.startswith("This document is under embargo until 2099-01-01"), lead
    assert "the sealed minutes" not in _text(page.find(".//main"))
    # its message's time written as the page writes times, not as the catalog keeps it (…T00:00:00.000000Z)
    said = _text(page.find(".//p[@class='error']"))
    assert said == f"{name} is embargoed until 2099-01-01 00:00:00 UTC; a token that may read it is needed.", said
    problem = client.get(f"/uri-res/N2R?{name}").json()
    assert problem["status"] == 403 and problem["embargoed_until"].startswith("2099-01-01T00:00:00")
    archive.embargo(name, "2099-03-04T05:06:00Z")  # a time of day: said too, in UTC
    assert _text(_view(client, name, 403).find(".//h1")) == "Under embargo until 4 March 2099, 05:06 UTC"


def test_a_reader_with_a_token_is_told_an_embargoed_or_private_name_is_not_open_to_everyone(
    client: TestClient, archive: Archive,
) -> None:
    """A token reads an embargoed version and a private series' document as any other: its pages said nothing of
    it, so its reader shared a link that everyone else is refused. The page says so; a public one says nothing."""
    sealed = str(archive.add(S, b"the sealed minutes\n", format="text"))
    archive.embargo(sealed, "2099-01-01")
    closed = str(archive.add(CLOSED, b"closed minutes\n", format="text"))
    both = str(archive.add(CLOSED, b"sealed and closed\n", format="text"))
    archive.embargo(_generic(both), "2099-03-04T05:06:00Z")
    open_ = str(archive.add(S, b"open minutes\n", format="text"))
    _, token = archive.add_token("reader", role="read")
    bearer = {**HTML, "Authorization": f"Bearer {token}"}

    def note(name: str) -> str:
        answer = client.get("/view", params={"pdi": name}, headers=bearer)
        assert answer.status_code == 200, answer.text[:300]
        found = html5lib.parse(answer.text, namespaceHTMLElements=False).find(".//p[@id='access']")
        return "" if found is None else _text(found)

    assert note(sealed).startswith("Not open to everyone: this version is under embargo until 1 January 2099. You"
                                   " read it with your token; a reader without one is refused it")
    assert note(closed).startswith(f"Not open to everyone: its series, {CLOSED}, is private.")
    assert note(_generic(closed)).startswith(f"Not open to everyone: its series, {CLOSED}, is private.")
    assert note(_generic(both)).startswith("Not open to everyone: this document is under embargo until 4 March 2099,"
                                           f" 05:06 UTC, and its series, {CLOSED}, is private.")
    assert note(open_) == "" and note(_generic(open_)) == ""
    # the document of a version under its own embargo: the version's row says so
    answer = client.get("/view", params={"pdi": _generic(sealed)}, headers=bearer)
    rows = html5lib.parse(answer.text, namespaceHTMLElements=False).findall(".//table[@id='versions']/tbody/tr")
    assert "under embargo until 1 January 2099" in _text(rows[0]), _text(rows[0])


def test_a_private_name_says_how_to_sign_in_and_comes_back_to_it(client: TestClient, archive: Archive) -> None:
    name = str(archive.add(CLOSED, b"closed minutes\n", format="text"))
    page = _view(client, name, 403)
    assert _text(page.find(".//h1")) == "A token is needed to read this"
    signin = [h for h in _links(page.find(".//main")) if h.startswith("/signin")]  # type: ignore[arg-type]
    assert signin, _links(page)
    back = urllib.parse.parse_qs(urllib.parse.urlsplit(signin[0]).query)["next"]
    assert back == ["/view?pdi=" + urllib.parse.quote(name, safe="")]
    assert page.find(".//input[@id='site-pdi']").get("value") == name  # type: ignore[union-attr]
    assert "closed minutes" not in _text(page.find(".//main"))
    # a name of the series never minted answers the same page, its name aside: existence is not told
    never = name.replace("/1.text.1", "/7.text.1")
    answered = client.get("/view", params={"pdi": never}, headers=HTML)
    shown = client.get("/view", params={"pdi": name}, headers=HTML)
    assert answered.status_code == 403
    def blanked(text: str, written: str) -> str:
        from pdi.server.pages.layout import breakable

        once = urllib.parse.quote(written, safe="")
        # the message's name is written to wrap between its parts (<wbr>), the box's and the title's as it is
        return (text.replace(urllib.parse.quote(once, safe=""), "N").replace(once, "N")
                .replace(breakable(written), "N").replace(written, "N"))

    assert blanked(answered.text, never) == blanked(shown.text, name)


def test_a_reader_signed_in_with_another_series_token_is_told_so(client: TestClient, archive: Archive) -> None:
    name = str(archive.add(CLOSED, b"closed minutes\n", format="text"))
    _, token = archive.add_token("clerk", role="read", series=[S])
    answer = client.get("/view", params={"pdi": name}, headers={**HTML, "Authorization": f"Bearer {token}"})
    assert answer.status_code == 403
    page = html5lib.parse(answer.text, namespaceHTMLElements=False)
    said = _text(page.find(".//main"))
    assert "You are signed in as clerk, whose token does not cover it" in said
    assert any(h.startswith("/signin?next=") for h in _links(page.find(".//main")))  # type: ignore[arg-type]


def test_a_name_of_another_day_suggests_the_nearest_days_names(client: TestClient, archive: Archive) -> None:
    """A name copied with another day (PDI-GRAMMAR.md §2.4: it carries the GMT day it was minted): the page lists
    the documents of the series' nearest day under its heading, and ``/api/resolve``'s problem names that day, not
    its serial 1, another document (§2.5: serials are counted afresh each day)."""
    held = str(archive.add(S, b"one\n", format="text"))  # minted on NOW's day, 2026-11-25
    assert held == f"urn:pdi://{S}/2026/11/25/1.text.1"
    wrong = f"urn:pdi://{S}/2026/11/20/1.text.1"
    page = _view(client, wrong, 404)
    assert [_text(li) for li in page.findall(".//ul[@class='nearest']/li")] == [held.removesuffix(".text.1")]
    # one day found (none before 2026-11-20): "the nearest day", not "days" (so it said, found following the app)
    assert _text(page.find(".//h2[@id='nearest']")) == f"Documents of {S} first deposited on the nearest day, 2026-11-25"
    answer = client.get("/api/resolve", params={"pdi": wrong})
    assert answer.status_code == 404
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["detail"] == (
        f"{wrong} is not in this archive; a name carries the GMT day it was minted, and {S} has nothing minted"
        " on 2026-11-20, so no document '1'; the nearest days with documents are 2026-11-25 (5 days after)")
    # a series this archive does not hold: said so, nothing listed
    answer = client.get("/api/resolve", params={"pdi": "urn:pdi://nowhere.example.us/2026/11/20/1.text.1"})
    assert answer.status_code == 404
    assert answer.json()["detail"].endswith("; this archive holds no series nowhere.example.us")


def test_a_name_of_a_day_between_two_suggests_both_nearest_days(tmp_path: Path) -> None:
    """A name of a day the series minted nothing on, between two days it did: both days' documents, the heading
    naming the two days."""
    now = [datetime.datetime(2026, 11, 20, 10, 0, tzinfo=datetime.UTC)]
    with Archive.init(tmp_path / "archive", clock=lambda: now[0]) as archive:
        archive.add_series(S)
        before = str(archive.add(S, b"before\n", format="text"))
        now[0] = datetime.datetime(2026, 11, 30, 10, 0, tzinfo=datetime.UTC)
        after = str(archive.add(S, b"after\n", format="text"))
        client = TestClient(create_app(archive.location, archive=archive))
        page = _view(client, f"urn:pdi://{S}/2026/11/25/9.text.1", 404)
    assert _text(page.find(".//h2[@id='nearest']")) == (
        f"Documents of {S} first deposited on the nearest days, 2026-11-20 and 2026-11-30")
    assert [_text(li) for li in page.findall(".//ul[@class='nearest']/li")] == [_generic(before), _generic(after)]


def test_a_name_not_here_suggests_the_nearest_names(client: TestClient, archive: Archive) -> None:
    first = str(archive.deposit(S, [Content(b"<p>one</p>", "html"), Content(b"one\n", "text")])[0])
    archive.add_version(_generic(first), [Content(b"two\n", "text")])
    titled = str(archive.add(S, b"minutes\n", format="text"))
    archive.annotate(_generic(titled), "title", "The minutes")
    archive.add(S, b"sealed\n", format="text", embargo_until="2099-01-01")
    # another version of a document: its names, each linked
    page = _view(client, _generic(first) + ".text.9", 404)
    assert _text(page.find(".//h1")) == "Not in this archive"
    nearest = [a.get("href") for a in page.findall(".//ul[@class='nearest']//a")]
    assert nearest == ["/view?pdi=" + urllib.parse.quote(_generic(first) + end, safe="")
                       for end in (".html.1", ".text.1", ".text.2")]
    # a number not minted that day: the day's documents the reader may see, with their titles (not the embargoed)
    page = _view(client, first.replace("/1.", "/9."), 404)
    items = [_text(li) for li in page.findall(".//ul[@class='nearest']/li")]
    assert items == [_generic(first), f"{_generic(titled)} — The minutes"]
    # a hidden series' document: as a series never registered, nothing suggested
    hidden = str(archive.add(SECRET, b"secret\n", format="text"))
    page = _view(client, hidden, 404)
    assert page.find(".//ul[@class='nearest']") is None
    assert _text(page.find(".//p[@class='error']")) == f"{hidden} is not in this archive."
    # an element not in a document that is here: said of the document, which is linked, not "not in this archive"
    page = _view(client, f"{first}#name=nope,nope", 404)
    assert _text(page.find(".//h1")) == "Not in this document"
    assert "/view?pdi=" + urllib.parse.quote(first, safe="") in _links(page)
    assert page.find(".//ul[@class='nearest']") is None
    # a browser's text fragment whose words are not there: the same
    text = str(archive.add(S, b"Some words.\n", format="text"))
    assert _text(_view(client, f"{text}#:~:text=nomatch", 404).find(".//h1")) == "Not in this document"
    # its words said as the reader would read them, once, not as %-escapes (the Text Fragments draft §3.3.1 decodes
    # each term's percent-encoding as UTF-8)
    page = _view(client, f"{text}#:~:text=caf%C3%A9%20au,lait&text=w%2Dx-,y,-z", 404)
    assert _text(page.find(".//p[@class='error']")) == (
        f'The text from "café au" to "lait" is not in {text}; the text "y" after "w-x" before "z" is not in {text}.')
    # a name holding backticks of its own is shown as asked, not as code
    odd = f"urn:pdi://{S}/2026/11/25/1.te`x`t.1"
    said = _view(client, odd, 404).find(".//p[@class='error']")
    assert said is not None and odd in _text(said) and said.find(".//code") is None
    # a name that does not parse: what was wrong, 400, in the same layout
    page = _view(client, "urn:pdi:nonsense", 400)
    assert _text(page.find(".//h1")).startswith("Cannot show this")


@given(st.text(alphabet=" \t\r\nab<>", max_size=40))
def test_a_pasted_name_loses_its_line_breaks_and_the_blanks_beside_them(text: str) -> None:
    # what the expression [ \t]*[\r\n]+[ \t]* removed, read in one pass
    unwrapped = re.sub(r"[ \t]*[\r\n]+[ \t]*", "", text.strip())
    assert reader.pasted(text) in (unwrapped, unwrapped[1:-1])


def test_a_pasted_name_of_a_million_blanks_is_read_at_once() -> None:
    # the expression tried each blank of a run and ran to its end: quadratic, 17 s for 60,000 blanks in the
    # event loop of a worker (the viewer reads ?pdi= there); this run would take it hours
    assert reader.pasted("a" + " " * 1_000_000 + "b") == "a" + " " * 1_000_000 + "b"
    assert reader.pasted("a" + " \t" * 500_000 + "\n" + "\t " * 500_000 + "b") == "ab"


def test_a_name_pasted_with_spaces_line_breaks_or_delimiters_around_it_is_read(client: TestClient,
                                                                              archive: Archive) -> None:
    # RFC 3986 Appendix C: a URI copied out of running text may come with whitespace (a line broken by the text's
    # wrapping) and angle brackets or quotation marks around it, which are not part of it
    name = str(archive.add(S, b"A text cited in a letter.\n", format="text"))
    cut = len(name) // 2
    for pasted in (f" {name} ", f"{name}\n", f"<{name}>", f"\u201c{name}\u201d", f"{name[:cut]}\n  {name[cut:]}",
                   f"  <{name}#char=2,6>\t"):
        page = _view(client, pasted, 200)
        assert name in _text(page.find(".//h1")) or name in ET.tostring(page, encoding="unicode"), pasted
    assert "text" in _text(_view(client, f"<{name}#char=2,6>", 200).find(".//mark"))
    # a space inside is no wrapping: left for the parser, which refuses it (in #:~:text= it would quote other words)
    _view(client, f"{name}#:~:text=a text", 400)
    _view(client, f"{name[:cut]} {name[cut:]}", 400)


def test_a_fragment_wholly_past_the_end_says_how_long_the_text_is_and_offers_no_passage(client: TestClient,
                                                                                        archive: Archive) -> None:
    name = str(archive.add(S, b"Thirteen char", format="text"))  # 13 characters
    page = _view(client, f"{name}#char=999,1200", 200)
    assert "#char=999,1200 lies wholly past the end (the text has 13 characters): it selects nothing." in _text(
        page.find(".//p[@class='note']"))
    assert page.find(".//p[@class='to-passage']") is None  # nothing marked to go to
    assert _view(client, f"{name}#char=2,6", 200).find(".//p[@class='to-passage']") is not None
    assert _view(client, f"{name}#char=5", 200).find(".//p[@class='to-passage']") is not None  # a place, marked


def test_a_command_an_error_quotes_is_code_on_its_page() -> None:
    said = html5lib.parseFragment(pages._said(NotFoundError(
        "this archive keeps no registry: `pdi registry add SERIES BASE_URL` makes one")), namespaceHTMLElements=False)
    assert "`" not in _text(said) and [_text(c) for c in said.iter("code")] == ["pdi registry add SERIES BASE_URL"]


def test_a_series_not_registered_says_where_a_reader_finds_those_that_are(client: TestClient) -> None:
    """Not the operator's command (`pdi series ls`, which a reader cannot run), as it said before: the request."""
    answer = client.get("/series/nosuch.example.de", headers=HTML)
    assert answer.status_code == 404
    said = html5lib.parse(answer.text, namespaceHTMLElements=False).find(".//p[@class='error']")
    assert said is not None
    assert _text(said) == "Series nosuch.example.de is not registered (GET /api/series lists those that are)."


def test_an_unknown_path_is_a_page_for_a_browser_and_a_problem_for_a_program(client: TestClient) -> None:
    answer = client.get("/no/such/page", headers=HTML)
    assert answer.status_code == 404 and answer.headers["content-type"] == "text/html; charset=utf-8"
    page = html5lib.parse(answer.text, namespaceHTMLElements=False)
    assert _text(page.find(".//h1")) == "No such page" and "/api" in _links(page)
    problem = {"type": "about:blank", "title": "Not Found", "status": 404, "detail": "no such page: /no/such/page"}
    for headers in ({}, {"Accept": "application/json"}, {"Accept": "application/problem+json"}, {"Accept": "*/*"}):
        answer = client.get("/no/such/page", headers=headers)
        assert answer.status_code == 404 and answer.headers["content-type"] == "application/problem+json"
        assert answer.json() == problem
    # machine routes: problems always (RFC 2169's, a page to a browser: tests/server/test_server_uri_res_pages.py)
    for path in ("/api/nothing", "/oai/x", "/timemap/x"):
        answer = client.get(path, headers=HTML)
        assert answer.status_code == 404 and answer.headers["content-type"] == "application/problem+json", path
    answer = client.post("/view", headers=HTML)  # 405 stays a problem, with its Allow
    assert answer.status_code == 405 and answer.headers["content-type"] == "application/problem+json"


def test_an_old_version_says_it_is_old_and_every_version_shows_the_title(client: TestClient, archive: Archive) -> None:
    first = str(archive.deposit(S, [Content(b"<p>one</p>", "html"), Content(b"one\n", "text")])[0])
    generic = _generic(first)
    archive.add_version(generic, [Content(b"two\n", "text")])
    archive.annotate(generic, "title", "Minutes, amended")
    archive.add_version(generic, [Content(b"three\n", "text")])
    archive.embargo(generic + ".text.3", "2099-01-01")
    for end, banner in ((".html.1", ".text.2"), (".text.1", ".text.2"), (".text.2", None)):
        page = _view(client, generic + end, 200)
        assert _text(page.find(".//p[@class='doc-title']")) == "Title: Minutes, amended"
        shown = page.find(".//p[@class='version-banner']")
        if banner is None:  # the latest a stranger may read: version 3 is under embargo
            assert shown is None
            continue
        assert "this is version 1 of 2; the latest is version 2" in _text(shown)
        # an HTML version 1 links the latest's only format (text); a text one the text
        assert [a.get("href") for a in shown.iter("a")] == ["/view?pdi=" + urllib.parse.quote(generic + banner, safe="")]


def test_every_page_links_the_api_reference(client: TestClient, archive: Archive) -> None:
    name = str(archive.add(S, b"one\n", format="text"))
    for url, status in (("/", 200), ("/series", 200), (f"/view?pdi={urllib.parse.quote(name, safe='')}", 200),
                        ("/search?q=one", 200), ("/signin", 200), ("/api", 200), ("/nowhere", 404),
                        (f"/series/{S}/2026/11/25", 200), ("/view?pdi=urn%3Apdi%3A%2F%2Fx.example.us%2F2026", 400)):
        answer = client.get(url, headers=HTML)
        assert answer.status_code == status, url
        page = html5lib.parse(answer.text, namespaceHTMLElements=False)
        footer = page.find(".//footer")
        assert footer is not None and "/api" in _links(footer), url
    home = html5lib.parse(client.get("/").text, namespaceHTMLElements=False)
    assert "/api" in _links(home.find(".//main"))  # type: ignore[arg-type]


def test_what_a_reader_typed_that_is_no_pdi_is_answered_with_what_they_may_have_meant(
    client: TestClient, archive: Archive,
) -> None:
    """A web address, plain words, and a name whose "+" a link read as a form turned into a space (the query
    ``pdi=…application+xml.1`` is ``application xml.1`` to a form reader, HTML's application/x-www-form-urlencoded)."""
    address = _view(client, "https://www.example.com/ruling.html", 400)
    assert "/captures?url=https%3A%2F%2Fwww.example.com%2Fruling.html" in _links(address)
    words = _view(client, "minutes of the board", 400)
    assert "/search?q=minutes%20of%20the%20board" in _links(words)
    name = str(archive.add(S, b"<?xml version='1.0'?><minutes/>", format="application+xml"))
    spaced = _view(client, name.replace("+", " "), 400)
    assert "/view?pdi=" + urllib.parse.quote(name, safe="") in _links(spaced)
    assert "write it %2B" in _text(spaced.find(".//main"))


def test_a_name_whose_hash_is_written_as_in_a_resolvers_address_is_answered_with_the_name_itself(
    client: TestClient, archive: Archive,
) -> None:
    """The name part of an N2R address (the README's curl line: ``…/1.text.1%23line=5,6``, RFC 2169 writing the
    ``#`` as ``%23``) pasted into the Resolve box: a version ``1%23line=0,1`` is no version, so the page offers the
    name with its ``#``; an id's own escaped ``#`` (``a%23b``: PDI-GRAMMAR.md, reserved characters) stays as it is."""
    plain = str(archive.add(S, b"one\ntwo\n", format="text"))
    own = str(archive.add(S, b"three\n", format="text", foreign_id="a#b"))
    assert "/a%23b.text.1" in own  # the id's "#" escaped in the name
    for name in (plain, own):
        pasted = _view(client, name + "%23line=0,1", 400)
        assert "/view?pdi=" + urllib.parse.quote(name + "#line=0,1", safe="") in _links(pasted), name
        assert "written %23" in _text(pasted.find(".//main")), name


def test_a_name_whose_own_escapes_an_address_decoded_is_answered_with_the_name_itself(
    client: TestClient, archive: Archive,
) -> None:
    """A capture's name typed into the address bar as ``/view?pdi=NAME`` (the replay how-to's address, with a
    capture's name put in it): its id's ``%2F`` and ``%2E`` (PDI-GRAMMAR.md, an encapsulated URL) are read by the
    query as ``/`` and ``.``, and the name that reaches the viewer is no name. The page says why, how to write it
    (each ``%`` as ``%25``, or the Resolve box), and offers the name itself."""
    name = str(archive.add(S, b"a page\n", format="text", foreign_id="https://example.org/a.txt"))
    assert name.endswith("/https:%2F%2Fexample%2Eorg%2Fa%2Etxt.text.1")
    answer = client.get(f"/view?pdi={name}", headers=HTML)  # as a browser sends what was typed: % left as it is
    assert answer.status_code == 400
    page = html5lib.parse(answer.text, namespaceHTMLElements=False)
    assert "/view?pdi=" + urllib.parse.quote(name, safe="") in _links(page)
    said = _text(page.find(".//main"))
    assert "%25" in said and "Resolve" in said, said
    with_passage = client.get(f"/view?pdi={name}%23line=0,1", headers=HTML)  # its passage kept
    assert "/view?pdi=" + urllib.parse.quote(name + "#line=0,1", safe="") in _links(
        html5lib.parse(with_passage.text, namespaceHTMLElements=False))
    assert client.get("/view", params={"pdi": name}, headers=HTML).status_code == 200  # written so, it is read


def test_a_message_id_name_whose_at_sign_an_address_decoded_is_refused_with_the_name_itself(
    client: TestClient, archive: Archive,
) -> None:
    """A Message-ID's name (``mid:minutes-42%40example%2Eorg``: PDI-GRAMMAR.md §1, ``@`` and ``.`` reserved) in
    ``/view?pdi=NAME`` as a browser sends it: the query reads ``%40`` as ``@``, a citation's mark (line 168), so the
    text is no name and is not taken for one (400); the page says to write each ``%`` as ``%25`` (``%2540``) and
    offers the name itself, which written so is read (200)."""
    name = str(archive.add(S, b"the minutes\n", format="text", foreign_id="mid:minutes-42@example.org"))
    assert name.endswith("/mid:minutes-42%40example%2Eorg.text.1")
    for passage in ("", "#line=0,1"):
        answer = client.get(f"/view?pdi={name}{passage.replace('#', '%23')}", headers=HTML)
        assert answer.status_code == 400, passage
        page = html5lib.parse(answer.text, namespaceHTMLElements=False)
        assert "/view?pdi=" + urllib.parse.quote(name + passage, safe="") in _links(page), passage
        said = _text(page.find(".//main"))
        assert "%2540" in said and "Resolve" in said, said
    assert client.get("/view", params={"pdi": name}, headers=HTML).status_code == 200
    # a citation whose cited name is wrong is no id to escape: no name offered as if it were the one meant
    cited = client.get("/view", params={"pdi": f"{name}@0=urn:pdi://{S}/2026/13/25/1.text.1#char=1,2"}, headers=HTML)
    assert cited.status_code == 400  # month 13
    assert not [a for a in _links(html5lib.parse(cited.text, namespaceHTMLElements=False)) if a.startswith("/view?")]


def test_the_json_api_offers_the_name_meant_by_a_name_whose_hash_is_written_as_in_a_resolvers_address(
    client: TestClient, archive: Archive,
) -> None:
    """The same name given to ``/api/resolve`` (``pdi=…%2523line=0,1``: its ``%23`` itself escaped in the query) is
    a syntax error, 400, whose problem ``detail`` offers the name with its ``#`` as ``pdi get`` and the reader's
    Resolve box do: one rule, the last ``%23`` (an id's own escaped ``#`` stays)."""
    plain = str(archive.add(S, b"one\ntwo\n", format="text"))
    own = str(archive.add(S, b"three\n", format="text", foreign_id="a#b"))
    for name in (plain, own):
        answer = client.get("/api/resolve?pdi=" + urllib.parse.quote(name + "%23line=0,1", safe=""))
        assert answer.status_code == 400
        problem = answer.json()
        assert problem["title"] == "syntax error"
        assert problem["detail"].startswith("the version is a positive integer"), problem
        assert f"; did you mean '{name}#line=0,1'? (rule version, offset " in problem["detail"], problem
        meant = client.get("/api/resolve?pdi=" + urllib.parse.quote(name + "#line=0,1", safe=""))
        assert meant.status_code == 200 and meant.json()["fragment"]["scheme"] == "line"
    answer = client.get("/api/resolve?pdi=" + urllib.parse.quote(plain + "%23line", safe=""))
    assert answer.status_code == 400 and "did you mean" not in answer.json()["detail"]  # "#line" names nothing


#: A name of the series never deposited, and one that does not parse: what a reader may type.
TYPED = [f"urn:pdi://{S}/2026/11/22/9.text.1#line=2,3", "urn:pdi:bad name"]


@pytest.mark.parametrize("typed", TYPED)
def test_every_error_page_has_one_box_to_resolve_a_name_the_headers_holding_what_was_typed(
    archive: Archive, typed: str
) -> None:
    rendered = {
        "404": pages.render_problem(archive, NotFoundError(f"{typed} is not in this archive"), typed),
        "400": pages.render_problem(archive, ParseError("a bad name"), typed),
        "413": pages.render_problem(archive, LimitError("past a limit"), typed),
        "503 storage": pages.render_problem(archive, StoreError("the catalog went away"), typed),
        "503 elsewhere": pages.render_unavailable("every resolver of it is down", typed),
        "508": pages.render_unavailable("its resolvers send it back and forth", typed, 508),
        "501": pages.render_refused(archive, 501, "Not implemented", "no such service", typed),
        "403": pages.render_forbidden(AccessError("a token is needed"), typed),
    }
    for status, text in rendered.items():
        page = html5lib.parse(text, namespaceHTMLElements=False)
        forms = [f for f in page.iter("form") if f.get("action") == "/view"]
        assert len(forms) == 1, f"{status}: {len(forms)} boxes to resolve a name"
        box = forms[0].find(".//input[@name='pdi']")
        assert box is not None and box.get("id") == "site-pdi" and box.get("value") == typed, status
