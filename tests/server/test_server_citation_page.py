"""A citation's name (``A@position=B#fragment``, PDI-GRAMMAR.md §3) opened in the viewer, in Chromium.

The page shows the citing document, as for its plain name, and says at its
top what the name adds: the passage it cites (a link to it), where, and
whether the quotation stands there, as ``pdi cite`` says it. The citing text
is made here, so each position is counted from it: the PDI ``char`` scheme
counts code points of the CRLF-canonical text.
"""

from __future__ import annotations

import base64
import html
import json
import re
import time
import urllib.parse

import httpx
import pytest
from server_helpers import S, Served
from test_server_pages_screenshots import SHOTS

from chromium_helpers import open_page
from pdi.capture.browser import devtools

#: The served text (server_helpers.TEXT) begins "Hello, world." (13 characters); this one quotes it.
CITING = "As the letter says: Hello, world. And so on.\n"

NOTE = """JSON.stringify((() => { const n = document.getElementById('citation');
  return n === null ? null : [n.innerText, [...n.querySelectorAll('a')].map((a) => a.getAttribute('href')),
    n.getBoundingClientRect().top >= 0 && n.getBoundingClientRect().bottom <= innerHeight]; })())"""


@pytest.mark.parametrize("where", ["stands", "elsewhere"])
def test_a_citation_says_what_it_cites_and_whether_the_quotation_stands(served: Served, where: str) -> None:
    citing = str(served.archive.add(S, CITING.encode(), format="text"))
    cited = served.text + "#char=0,13"  # "Hello, world."
    at = CITING.index("Hello, world.") if where == "stands" else 0
    name = f"{citing}@{at}={cited}"
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(name, safe='')}")
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride", {"width": 1100, "height": 700, "deviceScaleFactor": 1,
                                                          "mobile": False}, session, deadline)
        note = json.loads(pipe.call("Runtime.evaluate", {"expression": NOTE, "returnByValue": True},
                                    session, deadline)["result"]["value"])
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"citation-{where}.png").write_bytes(base64.b64decode(shot["data"]))
    assert note is not None, "the page says nothing of the citation"
    said, links, in_view = note
    assert f"/view?pdi={urllib.parse.quote(cited, safe='')}" in links  # the cited passage, one click away
    assert f"/view?pdi={urllib.parse.quote(f'{citing}#char={at},{at + 13}', safe='')}" in links  # where it is quoted
    assert "Hello, world." in said and in_view
    if where == "stands":
        assert "The quotation stands" in said and "does not" not in said
    else:
        assert "The quotation does not stand" in said and "As the letter" in said  # what is there instead


def test_a_citation_by_a_replayed_page_says_so_above_the_frame(served: Served) -> None:
    # served.page is "<p id=a>one<p>two</p>", replayed in a frame: at its character 0 stands "<p id", not "Hello"
    name = f"{served.page}@0={served.text}#char=0,5"
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(name, safe='')}")
        deadline = time.monotonic() + 30
        note = json.loads(pipe.call("Runtime.evaluate", {"expression": NOTE, "returnByValue": True},
                                    session, deadline)["result"]["value"])
        framed = pipe.call("Runtime.evaluate", {"expression": "document.querySelector('iframe.replay') !== null",
                                                "returnByValue": True}, session, deadline)["result"]["value"]
    assert framed is True
    assert note is not None and "The quotation does not stand" in note[0] and "\u201c<p id\u201d" in note[0], note  # its first 5


def test_a_citations_links_to_the_bytes_and_json_lead_to_the_citing_document(served: Served) -> None:
    # N2R and /api/resolve take no citation (a citation is checked by /api/cite): the page links the citing
    # document's own octets and description, which the page shows, not a 400
    citing = str(served.archive.add(S, CITING.encode(), format="text"))
    name = f"{citing}@{CITING.index('Hello')}={served.text}#char=0,5"
    page = httpx.get(f"{served.url}/view?pdi={urllib.parse.quote(name, safe='')}").text
    links = {text: html.unescape(href) for href, text in re.findall(r'<a href="([^"]+)">(the bytes|JSON)</a>', page)}
    assert set(links) == {"the bytes", "JSON"}, links
    octets = httpx.get(served.url + links["the bytes"])
    described = httpx.get(served.url + links["JSON"])
    assert (octets.status_code, octets.content) == (200, CITING.encode()), octets.text  # the octets as deposited
    assert described.status_code == 200 and described.json()["pdi"] == citing, described.text
