"""The three readings of HTML agree (pdi.passages.scan): on the corpus pages of tests/data and on generated HTML.

html5lib (the HTML5 algorithm, through its public ``parse`` for the text and
:func:`pdi.fragments.markup.html_elements` for where each start tag stands) is
the oracle; the scanner of :mod:`pdi.passages.scan`, as the full-text index
reads a page (:func:`pdi.passages.fulltext.markup_passages`) and as the page
text does (:func:`pdi.fragments.pagetext.markup_page_text`), and html.parser,
as :func:`pdi.mhtml.refs.html_references` reads it, are held to it:

* text: the scanner's text is the text of html5lib's tree (its text nodes in
  document order, but the content of the raw-text elements of
  :data:`pdi.passages.scan.RAW_TEXT`, in any namespace: the scanner reads an
  SVG ``<style>`` as HTML's, as its docstring says), character for
  character once white space is taken out (the scanner cuts and joins at
  white space as the rendered page does; html5lib keeps it as written);
* offsets: each stretch of the scanner's text (but white space, which may
  stand for a tag that separates words) stands in the source where
  the source holds exactly that text (a decoded character reference: the
  whole reference), and no start tag html5lib reads begins inside one;
* the page text, which leaves out what a browser does not show (the
  ``head``, hidden elements) and collapses white space, reads its text in
  the same places: each of its stretches stands where the source holds it,
  outside every start tag html5lib reads, and its text is a part of
  html5lib's, in order (``xmp`` included: a browser shows it);
* references: each URL html.parser finds in an attribute value sits inside
  the start tag of an element html5lib reads at that place, of the same
  name, and is written in one of that element's attribute values.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import html5lib
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.errors import UnsupportedError
from pdi.fragments.markup import html_elements
from pdi.fragments.pagetext import markup_page_text
from pdi.mhtml import Aggregate
from pdi.mhtml.refs import html_references
from pdi.passages.fulltext import Passage, markup_passages
from pdi.passages.scan import RAW_TEXT

DATA = Path(__file__).parent / "data"


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\r\n")


def _pages() -> list[tuple[str, str]]:
    """(label, CRLF-canonical text) of every HTML page in tests/data: the HTML parts of the MHTML files, and the .html files."""
    pages = []
    for path in sorted(DATA.rglob("*.mht*")):
        try:
            aggregate = Aggregate.parse(path.read_bytes())
        except Exception:  # the malformed files kept for the parser's tests: no page to read
            continue
        for number, part in enumerate(p for p in aggregate.parts if p.is_html):
            pages.append((f"{path.relative_to(DATA)}#{number}", _crlf(part.text())))
    for path in sorted(DATA.rglob("*.htm*")):
        pages.append((str(path.relative_to(DATA)), _crlf(path.read_text("utf-8"))))
    return pages


PAGES = _pages()


def _html5lib_text(source: str, hidden: frozenset[str] = RAW_TEXT) -> str:
    """The text nodes of html5lib's tree in document order, but those of the ``hidden`` elements (raw-text ones)."""
    root = html5lib.parse(source, treebuilder="etree", namespaceHTMLElements=False)
    out: list[str] = []

    def walk(element: Any) -> None:  # an ElementTree element, or a comment
        tag = getattr(element, "tag", None)
        shown = isinstance(tag, str) and tag.rpartition("}")[2] not in hidden  # a comment's tag is a function
        if shown:
            out.append(getattr(element, "text", None) or "")
            for child in element:
                walk(child)
        out.append(getattr(element, "tail", None) or "")

    walk(root)
    return "".join(out)


def _squashed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _text_spans(passages: list[Passage]) -> Iterator[tuple[str, int, int]]:
    """Each stretch of a reading's text: (text, start, end in the source); white space left out.

    (A tag that separates words is a space standing for the whole tag.)
    """
    for passage in passages:
        runs = passage.runs
        for k, (t0, s, e) in enumerate(runs):
            t1 = runs[k + 1][0] if k + 1 < len(runs) else len(passage.text)
            if passage.text[t0:t1].strip():
                yield passage.text[t0:t1], passage.start + s, passage.start + e


def _is_subsequence(part: str, whole: str) -> bool:
    characters = iter(whole)
    return all(c in characters for c in part)


def _check_agreement(source: str) -> int:
    """Assert the three readings agree on ``source``; how many start tags html5lib read (-1: it refuses the page)."""
    oracle = _squashed(_html5lib_text(source))
    assert _squashed("".join(p.text for p in markup_passages(source, "html"))) == oracle
    page = markup_page_text(source, "html")
    assert _is_subsequence(_squashed(page.text), _squashed(_html5lib_text(source, RAW_TEXT - {"xmp"})))
    spans = list(_text_spans(markup_passages(source, "html"))) + list(_text_spans([page.map]))
    for text, start, end in spans:
        if len(text) == end - start:
            assert _squashed(text) == _squashed(source[start:end])
        else:  # a character reference, decoded
            assert html.unescape(source[start:end]) == text
    try:
        elements = html_elements(source)
    except UnsupportedError:  # <template>: html5lib 1.1 predates it (elt and name say so)
        return -1
    starts = [e.start for e in elements]
    for text, start, end in spans:
        inside = bisect_right(starts, start)
        assert inside == len(starts) or starts[inside] >= end, (text, start, end)
    for reference in html_references(source):
        if reference.quoting or reference.raw_text or reference.kind in ("style-url", "import"):
            continue  # in an iframe's srcdoc, or CSS: not an attribute value as html5lib gives it
        holder = elements[bisect_right(starts, reference.start) - 1]
        assert holder.name == reference.element
        assert any(reference.url in html.unescape(value) or reference.url in value for value in holder.attributes.values())
    return len(elements)


@pytest.mark.parametrize(("label", "source"), PAGES, ids=[label for label, _ in PAGES])
def test_corpus_page_read_alike(label: str, source: str) -> None:
    _check_agreement(source)


def test_corpus_pages_are_many_and_parsed() -> None:
    """The corpus holds the real pages the agreement is claimed over, and html5lib reads the start tags of most."""
    assert len(PAGES) >= 40
    read = 0
    for _, source in PAGES:
        try:
            read += len(html_elements(source))
        except UnsupportedError:  # <template>
            continue
    assert read > 5000


_WORDS = st.sampled_from(["one", "two", "Été", "x", "a-b", "  ", "\r\n", "\t", "3 < 4", "fish & chips"])
_REFERENCES = st.sampled_from(["&amp;", "&lt;", "&#233;", "&#x41;", "&eacute", "&nosuch;", "&copy2", "&"])
_ELEMENTS = st.sampled_from(["p", "div", "span", "b", "i", "em", "a", "h1", "ul", "li", "pre", "section", "img", "br"])
_RAW = st.sampled_from(["script", "style", "xmp", "title", "textarea"])
_VALUES = st.sampled_from(["x", "a > b", "c=d", "", "it's", "/img.png", "q\"r", "&amp;s"])


@st.composite
def _start_tag(draw: st.DrawFn) -> str:
    name = draw(_ELEMENTS)
    attributes = draw(st.lists(st.tuples(st.sampled_from(["href", "src", "title", "class", "data-x"]), _VALUES), max_size=3))
    written = "".join(f" {n}=\"{v.replace(chr(34), '&quot;')}\"" for n, v in dict(attributes).items())
    return f"<{name.upper() if draw(st.booleans()) else name}{written}>"


@st.composite
def _raw_element(draw: st.DrawFn) -> str:
    name = draw(_RAW)
    inside = draw(st.lists(st.one_of(_WORDS, st.just("<b>not a tag</b>"), st.just("<!-- -->")), max_size=3))
    return f"<{name}>{''.join(inside)}</{name}>"


_PIECES = st.one_of(
    _WORDS,
    _REFERENCES,
    _start_tag(),
    _ELEMENTS.map(lambda name: f"</{name}>"),
    _WORDS.map(lambda words: f"<!--{words.replace('-', '')}-->"),
    _raw_element(),
)


@given(st.lists(_PIECES, max_size=30).map("".join))
@settings(max_examples=300, deadline=None)
def test_generated_html_read_alike(body: str) -> None:
    _check_agreement(_crlf(f"<!DOCTYPE html><html><head><title>t</title></head><body>{body}</body></html>"))
