"""A citation copied as a reader copies it, pasted back into the *Resolve* box, leads to the same passage.

What a reader copies is not always the name the viewer offers: the address
bar's ``…/view?pdi=…`` (the page they are reading), an N2R address (the
viewer's RFC 5147 form of the name, or a link in a paper), or the name as it
stands at the end of a sentence, with the full stop after it. Each is typed
into the header's box in Chromium and sent with Enter; the page that answers
must lead, by a link a reader follows, to the passage itself, "world" of
"Hello, world." (PDI characters 7 to 12: counted by hand over the text of
:data:`server_helpers.TEXT`). Screenshots: ``pasted-back-CASE.png``.
"""

from __future__ import annotations

import time
import urllib.parse
from typing import Any

import pytest
from server_helpers import Served
from test_server_keyboard import _js, _key, _keyboard_tab
from test_server_pdf_viewer import _shoot

from chromium_helpers import navigate_and_wait_for_load
from pdi.capture.browser import Pipe, devtools
from pdi.errors import UnsupportedError

#: The paragraph the page offers after its error (and the lines saying where in what was given the error is, and in
#: the grammar's words), and the link in it, which a reader follows.
HINT = "main p.error ~ p:not(.where):not(.given):not(.grammar)"
OFFERED = f"document.querySelector('{HINT} a[href^=\"/view?pdi=\"]')"


def _typed_and_sent(pipe: Pipe, session: str, text: str) -> None:
    """``text`` typed into the page's one box to resolve a name (the home page's own; elsewhere the header's), then
    Enter; back once the answer's page has loaded."""
    _js(pipe, session, "document.querySelector('form[action=\"/view\"] input[name=\"pdi\"]').focus()")
    pipe.call("Input.insertText", {"text": text}, session, time.monotonic() + 30)
    before = _js(pipe, session, "location.href")
    _key(pipe, session, "Enter", 13, "\r")
    deadline = time.monotonic() + 30
    while _asked(pipe, session, "location.href") in (before, None) or _asked(
            pipe, session, "document.readyState") != "complete":
        assert time.monotonic() < deadline, f"Enter did not send {text!r}"
        time.sleep(0.05)


def _asked(pipe: Pipe, session: str, expression: str) -> Any:
    """``expression``'s value, or ``None`` while the page is being replaced (Chromium refuses an evaluation whose
    page navigated away meanwhile: "Inspected target navigated or closed")."""
    try:
        return _js(pipe, session, expression)
    except UnsupportedError as exc:
        if "navigated or closed" not in str(exc):
            raise
        return None


def _followed(pipe: Pipe, session: str, served: Served) -> Any:
    """Follow the link the page offers: the text then marked, and the name in the header's Resolve box."""
    href = _js(pipe, session, f"{OFFERED} && {OFFERED}.getAttribute('href')")
    assert href, _js(pipe, session, "document.querySelector('main').innerText")
    navigate_and_wait_for_load(pipe, session, served.url + href, time.monotonic() + 30)
    return _js(pipe, session, "[[...document.querySelectorAll('#text mark')].map((m) => m.textContent).join(''),"
                              " document.getElementById('site-pdi').value]")


@pytest.mark.parametrize("case", ["address-bar", "n2r", "full-stop", "quoted-sentence"])
def test_a_citation_pasted_back_as_a_reader_copied_it_leads_to_its_passage(served: Served, case: str) -> None:
    name = served.text + "#char=7,12"
    pasted = {
        # the viewer's address, as its address bar shows it (Chromium percent-encodes the query's "#" as %23)
        "address-bar": f"{served.url}/view?pdi={urllib.parse.quote(name, safe='')}",
        # the RFC 2169 address of the name, its "#" written %23 (RFC 2169; docs/reference/resolver.md)
        "n2r": f"{served.url}/uri-res/N2R?{name.replace('#', '%23')}",
        # the name as cited at the end of a sentence: "… (urn:pdi://…#char=7,12)."
        "full-stop": name + ".",
        "quoted-sentence": name + ").",
    }[case]
    with devtools() as pipe:
        session = _keyboard_tab(pipe, served.url + "/")
        _typed_and_sent(pipe, session, pasted)
        _shoot(pipe, session, f"pasted-back-{case}.png")
        said = _js(pipe, session, "document.querySelector('main').innerText")
        assert "captures of it" not in said, said  # a resolver's address is no captured web page
        marked, shown = _followed(pipe, session, served)
    assert marked == "world", (case, said)
    assert shown == name


def test_an_n2r_address_with_a_browsers_fragment_names_its_document_and_says_the_fragment_is_left_out(
    served: Served,
) -> None:
    # the viewer's "RFC 5147" form: the name's N2R address, then a "#" the browser reads in the text it answers,
    # counting a line end as one character (RFC 5147 §2.2), not two as the PDI does: not the name's fragment
    address = f"{served.url}/uri-res/N2R?{served.text}#char=7,12"
    with devtools() as pipe:
        session = _keyboard_tab(pipe, served.url + "/")
        _typed_and_sent(pipe, session, address)
        _shoot(pipe, session, "pasted-back-rfc5147.png")
        said = _js(pipe, session, f"document.querySelector('{HINT}').innerText")
        href = _js(pipe, session, f"{OFFERED}.getAttribute('href')")
    assert href == "/view?pdi=" + urllib.parse.quote(served.text, safe="")
    assert "#char=7,12 after the address is no part of the name" in said
