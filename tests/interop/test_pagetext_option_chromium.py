"""An element in a list box's option (``<select size=3><option>one<plaintext>…``), read as Chromium shows it: the
option's text as one string, its white space collapsed, no line of its own for a ``plaintext``, a ``pre``, a
``div`` or an ``xmp`` in it (Debian's Chromium over DevTools: ``document.body.innerText``, each page as Chromium's
HTML parser builds it, checked too).

pdi's page text is one line per block where ``innerText`` puts the blank lines of a paragraph's margins: runs of
line breaks in ``innerText`` are read as one. A drop-down (a ``select`` of size 1) is search invisible in pdi's
page text (WICG Text Fragments), where ``innerText`` gives its options: not compared here.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterator

import pytest

from chromium_helpers import evaluate, open_page
from pdi.capture.browser import Pipe, devtools
from pdi.fragments.pagetext import LATEST_READING, markup_page_text

PAGES = {
    "plaintext": "<!DOCTYPE html><body><p>before</p><select size=3><option>one<plaintext>a <b>b</b> &amp; c\nd",
    "plaintext-after-an-option": ("<!DOCTYPE html><body><p>before</p><select size=3><option>zero</option>"
                                  "<option>one<plaintext>a\n  b</option><option>c"),
    "plaintext-multiple": "<!DOCTYPE html><body><p>before</p><select multiple><option><plaintext>a <b>b</b> &amp; c",
    "pre": ("<!DOCTYPE html><body><p>before</p><select size=3><option>one<pre>a\n b</pre></option><option>two"
            "</option></select><p>after</p>"),
    "div": "<!DOCTYPE html><body><p>before</p><select size=3><option>one<div>a</div>b</option></select><p>after</p>",
    "xmp": "<!DOCTYPE html><body><p>before</p><select size=3><option>one<xmp>a <b>\n b</xmp></option></select><p>after</p>",
    "plaintext-out-of-a-select": "<!DOCTYPE html><body><p>before</p><option><plaintext>a <b>b</b> &amp; c",
}


@pytest.fixture(scope="module")
def chromium() -> Iterator[Pipe]:
    with devtools() as pipe:
        yield pipe


@pytest.mark.parametrize("name", list(PAGES))
def test_an_element_in_a_list_box_option_reads_as_chromiums_inner_text(chromium: Pipe, name: str) -> None:
    html = PAGES[name]
    session = open_page(chromium, "data:text/html;charset=utf-8," + urllib.parse.quote(html))
    dom, inner, plain = json.loads(evaluate(chromium, session, (
        "const p = document.querySelector('plaintext');"
        "JSON.stringify([document.body.innerHTML, document.body.innerText,"
        " p && [p.childElementCount, p.closest('option') !== null]])")))
    if "plaintext" in name:  # Chromium's parser reads the rest of the page as the plaintext's text, in the option too
        assert plain == [0, True], dom
    expected = re.sub(r"\n+", "\n", inner).strip()
    assert markup_page_text(html, "html").text == expected, (dom, inner)


def test_the_earlier_readings_are_kept() -> None:
    """Reading 3 made a plaintext or a pre in a list box's option a line of its own (the readings before the latest
    stay as they were: a new reading is what moves a page's text)."""
    assert LATEST_READING == 4
    assert markup_page_text(PAGES["plaintext"], "html", reading=3).text.startswith("before\none\na <b>b</b>")
    assert markup_page_text(PAGES["pre"], "html", reading=3).text == "before\none\na\n b\ntwo\nafter"
