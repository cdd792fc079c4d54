"""The viewer's facts and the document's page list statements (``pdi meta``); a statement whose whole value is a PDI (the
``source`` a clerk records of an attachment deposited alone, docs/how-to/court-record.md step 5) is a link to that
name's page, so a reader goes from the attachment to the message it came from. Any other value stays text."""

from __future__ import annotations

import datetime
import urllib.parse
import xml.etree.ElementTree as ET
from pathlib import Path

import html5lib
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app

S = "court.example.fr"
NOW = datetime.datetime(2026, 11, 29, 10, 0, tzinfo=datetime.UTC)
NS = "{http://www.w3.org/1999/xhtml}"


def _facts(client: TestClient, name: str) -> dict[str, ET.Element]:
    answer = client.get("/view", params={"pdi": name}, headers={"Accept": "text/html"})
    assert answer.status_code == 200, answer.text
    page = html5lib.parse(answer.text, namespaceHTMLElements=False)
    terms = page.findall(".//main//dl/dt")
    return {"".join(dt.itertext()): dd for dt, dd in zip(terms, page.findall(".//main//dl/dd"), strict=True)}


def test_a_statement_naming_a_pdi_links_to_its_page_and_other_values_stay_text(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "a", clock=lambda: NOW) as archive:
        archive.add_series(S)
        message = str(archive.add(S, b"From: a@b.example\r\nSubject: x\r\n\r\nschedule\r\n", format="rfc822"))
        attachment = str(archive.add(S, b"Item 1: 400 chairs\n", format="text"))
        source = message + "#part=0"
        archive.annotate(attachment, "source", source)
        archive.annotate(attachment, "title", "urn:pdi: is how our names begin")
        archive.annotate(attachment, "relation", "pdi://court.example.fr/2026/11/29/1.rfc822.1")
        with TestClient(create_app(archive.location, archive=archive)) as client:
            facts = _facts(client, attachment)
            link = facts["source"].find(".//a")
            assert link is not None and "".join(link.itertext()) == source
            assert link.get("href") == "/view?pdi=" + urllib.parse.quote(source, safe="")
            assert client.get(link.get("href") or "", headers={"Accept": "text/html"}).status_code == 200
            # the draft's spelling links as its canonical name
            other = facts["relation"].find(".//a")
            assert other is not None and other.get("href") == "/view?pdi=" + urllib.parse.quote(message, safe="")
            assert facts["title"].find(".//a") is None  # words that begin like a name, but are none, stay words
            # the document's page lists the statement, linked alike
            answer = client.get("/view", params={"pdi": attachment.rsplit(".", 2)[0]}, headers={"Accept": "text/html"})
            table = html5lib.parse(answer.text, namespaceHTMLElements=False).find(".//table[@id='statements']")
            assert table is not None
            hrefs = [a.get("href") for a in table.findall(".//td[@class='value']//a")]
            assert hrefs == ["/view?pdi=" + urllib.parse.quote(source, safe=""),
                             "/view?pdi=" + urllib.parse.quote(message, safe="")]


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)
       | st.sampled_from(["urn:pdi://court.example.fr/2026/11/29/1.text.1", "pdi://x.example.us/2026/11/29/1.text.1#line=2,3",
                          "urn:pdi:// not a name", "urn:pdi://x.example.us/2026/11/29/1.text.1 and more"]))
def test_any_value_that_is_not_a_name_is_escaped_text(value: str) -> None:
    from pdi.server.pages.layout import statement_value

    shown = statement_value(value)
    assert "<a " not in shown or value.strip().lower().startswith(("urn:pdi:", "pdi:"))
    parsed = html5lib.parse(f"<dd>{shown}</dd>", namespaceHTMLElements=False)
    assert "".join(parsed.find(".//body").itertext()) == value


#: A capture's id escaped as PDI-GRAMMAR §2.4 escapes a URL in a unique id: ``%`` itself, then ``/`` and ``.``.
_URL_ID = st.text(st.sampled_from("ab/.-:%9"), min_size=1, max_size=60).map(
    lambda url: url.replace("%", "%25").replace("/", "%2F").replace(".", "%2E"))


def _text(shown: str) -> str:
    """What a reader reads (and copies) of ``shown``, an HTML fragment."""
    return "".join(html5lib.parse(f"<div>{shown}</div>", namespaceHTMLElements=False).find(".//div").itertext())


@settings(max_examples=200, deadline=None)
@given(_URL_ID, st.sampled_from(["", "#char=4,10", "#" + "x" * 50]), st.booleans())
def test_a_name_in_pieces_copies_whole_and_never_breaks_inside_an_escape(uid: str, fragment: str, whole: bool) -> None:
    from pdi.server.pages.layout import name_in_pieces

    last = f"{uid}.html.1{fragment}"
    name = f"urn:pdi://court.example.fr/2026/11/29/{last}" if whole else last
    shown = name_in_pieces(name)
    assert _text(shown) == name  # nothing put into it, nothing left out
    at, breaks = 0, []
    for piece in shown.split("<wbr>"):  # each <wbr> a place the line may break
        at += len(_text(piece))
        breaks.append(at)
    for k in breaks[:-1]:
        assert "%" not in name[max(0, k - 2):k], (name, k)  # never after a % nor after its first digit
