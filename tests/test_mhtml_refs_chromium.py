"""The reader finds every image and style sheet URL Chromium finds in the same HTML.

Chromium (Debian's, over the DevTools protocol on a pipe) parses each generated
document with ``DOMParser`` (the HTML parser a page gets; scripting is off there, so
``<noscript>`` is markup) and reports the ``src`` of every HTML ``<img>`` it made and
the ``url()`` of the rules of every HTML or SVG ``<style>`` as its CSS parser reads
them. :func:`pdi.mhtml.html_references` must find each of them: a reference the
browser sees and the reader does not is one ``mhtml unpack`` would leave as written.
The documents are made of the pieces of markup where a tolerant tokenizer and HTML's
disagree (comments, ``<![``, raw text, script escapes, SVG and MathML, breakouts).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chromium_helpers import new_tab
from pdi.capture.browser import Pipe, devtools
from pdi.mhtml import html_references

PIECES = [
    "<svg>", "</svg>", "<math>", "</math>", "<style>", "</style>", "</style ", "<script>", "</script>", "<!--",
    "-->", "--!>", "<!-->", "<![CDATA[", "]]>", "<![x[", "<title>", "</title>", "<textarea>", "</textarea>",
    "<foreignObject>", "</foreignObject>", "<desc>", "<mi>", "<p>", "</p>", "<b>", "<div>", "</div>", "<table>",
    "<td>", "<noscript>", "</noscript>", "<xmp>", "</xmp>", "<iframe>", "</iframe>", "<noembed>", "<noframes>",
    "<plaintext>", "<template>", "</template>", "<select>", "</select>", "<option>", "<image src=I>",
    "<font color=red>", "<font>", "<br>", "</br>", "<a href=A>", ">", "<", "'", '"', " ", "x", "=", "/",
    "<!doctype html>", "<?x>", "</ x>", "<head>", "<body>", "<html>", "<frameset>", "<object>",
    "<annotation-xml encoding=text/html>", "<annotation-xml>", "<g>", "</g>", "<![CDATA[<img src=C>]]>",
    "<img src=A1>", "<img src='A2'>", '<img src="A3">', "<img src=A4/>", "&amp;", "&lt;", "-", "!", "<!", "</",
    "<script><!--<script>", "<svg/>", "<style/>", "<title/>", "<math><mi>", "<svg><desc>",
    "*{background:url(S1)}", "p{background:url('S2')}", "url(S3)", "<style>q{background:url(S4)}</style>",
]
DOCUMENT = st.lists(st.sampled_from(PIECES), max_size=25).map("".join)

PROBE = """(docs) => docs.map((text) => {
  const doc = new DOMParser().parseFromString(text, "text/html");
  const images = [...doc.getElementsByTagNameNS("http://www.w3.org/1999/xhtml", "img")]
    .filter((i) => i.hasAttribute("src")).map((i) => i.getAttribute("src"));
  const sheets = ["http://www.w3.org/1999/xhtml", "http://www.w3.org/2000/svg"]  // MathML has no <style>
    .flatMap((ns) => [...doc.getElementsByTagNameNS(ns, "style")]);
  const rules = sheets.map((s) => {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(s.textContent);
    return [...sheet.cssRules].map((r) => r.cssText).join("\\n");
  });
  return [images, rules.join("\\n")];
})"""
URL = re.compile(r'url\("([^"]*)"\)')  # how CSSOM serializes a URL


@pytest.fixture(scope="module")
def chromium() -> Iterator[tuple[Pipe, str]]:
    with devtools() as pipe:
        yield pipe, new_tab(pipe)


def chromium_reads(chromium: tuple[Pipe, str], documents: list[str]) -> list[tuple[list[str], list[str]]]:
    pipe, session = chromium
    expression = f"({PROBE})({json.dumps(documents)})"
    answer: Any = pipe.call(
        "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session, time.monotonic() + 60
    )
    return [(images, URL.findall(css)) for images, css in answer["result"]["value"]]


def missed(document: str, images: list[str], css_urls: list[str]) -> list[str]:
    refs = html_references(document)
    srcs = [r.url for r in refs if r.kind == "src"]
    styles = [r.url for r in refs if r.kind in ("style-url", "import")]
    return [u for u in images if u not in srcs] + [u for u in css_urls if u not in styles]


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(DOCUMENT, min_size=250, max_size=250))
def test_property_every_url_chromium_finds_the_reader_finds(chromium: tuple[Pipe, str], documents: list[str]) -> None:
    for document, (images, css_urls) in zip(documents, chromium_reads(chromium, documents), strict=True):
        assert missed(document, images, css_urls) == [], document


def test_the_reader_and_chromium_agree_on_the_hand_made_cases(chromium: tuple[Pipe, str]) -> None:
    from test_mhtml_hostile_html import CASES

    documents = [text for text, _ in CASES]
    for (text, expected), (images, css_urls) in zip(CASES, chromium_reads(chromium, documents), strict=True):
        # Chromium (scripting off in DOMParser) sees what the hand-made expectation says,
        # except what only a browser with scripting on hides (noscript read as text).
        assert set(images + css_urls) <= set(expected), (text, images, css_urls)
        assert missed(text, images, css_urls) == [], text


# Pieces whose reading needs HTML's tree builder, which the reader does not follow (after
# <frameset>, in <select>, in a <template>'s fragment, <noscript> read both ways) or where
# the reader reads on where a browser may not (a CDATA section in foreign content): left
# out of the other direction below.
_TREE_BUILDER = ("frameset", "select", "option", "template", "noscript", "CDATA")
_PLAIN_PIECES = [p for p in PIECES if not any(word in p for word in _TREE_BUILDER)]
# The input ends inside a tag or a comment: HTML's tokenizer drops the tag (§13.2.5.32-.38,
# "eof-in-tag") and reads the comment to the end, so nothing after either is markup.
_UNENDED = ['<img alt="', "<img src=T1 alt='", '<img src="T2', "<img src=T3 /", "<img src=T4", "<!--", "<!--<img"]
ENDED_INSIDE = st.tuples(
    st.lists(st.sampled_from(_PLAIN_PIECES), max_size=15).map("".join),
    st.sampled_from(_UNENDED),
    st.lists(st.sampled_from([p for p in _PLAIN_PIECES if not any(c in p for c in ("--", "'", '"'))]), max_size=6)
    .map("".join),
).map("".join)


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(ENDED_INSIDE, min_size=250, max_size=250))
def test_property_what_chromium_drops_at_the_end_the_reader_finds_nothing_in(
    chromium: tuple[Pipe, str], documents: list[str]
) -> None:
    for document, (images, _) in zip(documents, chromium_reads(chromium, documents), strict=True):
        found = {r.url for r in html_references(document) if r.kind == "src"}
        assert found <= set(images), document


def test_a_tag_cut_by_the_end_of_the_input_hides_what_it_holds(chromium: tuple[Pipe, str]) -> None:
    # Found by the unpack property: the reader read the first "<img" as text (html.parser's
    # tolerant rule) and then a tag in its attribute value.
    # An end tag's quoted attribute value holds a ">" as a start tag's does.
    documents = [
        '<img alt="><img src="<img src=<img alt="<p>',
        "<img src=A><img alt='x> <img src=B>",
        "<img src=A><!--<img src=B>",
        '</a b="><img src=Z>"><img src=Y>',
        '</p title="x"><img src=Y></a b="',
    ]
    read = [images for images, _ in chromium_reads(chromium, documents)]
    assert read == [[], ["A"], ["A"], ["Y"], ["Y"]]  # what Chromium makes of them
    assert [[r.url for r in html_references(d) if r.kind == "src"] for d in documents] == read


def _escaped(name: str, draw: st.DrawFn) -> str:
    """``name`` with each character as itself, in the other case, or a CSS escape of it (CSS Syntax 3 §4.3.7: hex
    digits and a space that ends them, or a backslash before a character that is no hex digit)."""
    written = []
    for ch in name:
        choices = [ch, ch.swapcase(), f"\\{ord(ch):x} ", f"\\{ord(ch):06X}"]
        if ch not in "0123456789abcdefABCDEF":
            choices.append("\\" + ch)
        written.append(draw(st.sampled_from(choices)))
    return "".join(written)


@st.composite
def _escaped_rule(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(["url", "image-set", "-webkit-image-set"]))
    spelled = _escaped(name, draw)
    argument = "(E1)" if name == "url" else '("E1" 1x)'
    return f"<style>p{{background-image:{spelled}{argument}}}</style>"


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_escaped_rule(), min_size=100, max_size=100))
def test_property_a_url_whose_function_name_is_written_with_escapes_is_found_as_chromium_finds_it(
    chromium: tuple[Pipe, str], documents: list[str]
) -> None:
    # A browser compares a function's name with its escapes undone (CSS Syntax 3 §4.3.4): `u\72l(x)` is `url(x)`.
    # The reader matched the letters "url(" alone, so such a URL was left as written by `mhtml unpack` and replay.
    pipe, session = chromium
    expression = f"({PROBE})({json.dumps(documents)})"
    answer: Any = pipe.call(
        "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session, time.monotonic() + 60
    )
    for document, (_, css) in zip(documents, answer["result"]["value"], strict=True):
        seen = re.findall(r'(?:url\(|image-set\()"([^"]*)"', css)
        found = [r.url for r in html_references(document) if r.kind == "style-url"]
        assert seen == ["E1"] and found == seen, (document, css)
