"""The reader finds every URL an SVG animation (``<set>``, ``<animate>``) gives an element's ``href``, as Chromium does.

A ``<set attributeName="href" to="URL">`` in an SVG ``<a>`` makes it a link to a URL that no ``href`` attribute
holds; one in an ``<image>`` shows another image. Chromium runs the animations of documents put in a page (SMIL's
timeline, paused and stepped through by ``setCurrentTime``) and reports every value it gives an element's ``href``
(its ``animVal``): :func:`pdi.mhtml.html_references` must find each, or ``mhtml unpack`` and replay leave it as
written (a replayed page's link led to the live web).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chromium_helpers import new_tab
from pdi.capture.browser import Pipe, devtools
from pdi.mhtml import html_references

#: Each document is put in the page and its animations stepped through 4 s: every value an element's href took.
PROBE = """(docs) => docs.map((text) => {
  document.body.innerHTML = text;
  const svgs = [...document.querySelectorAll("svg")];
  svgs.forEach((s) => s.pauseAnimations());
  const seen = new Set();
  for (let t = 0.05; t < 4; t += 0.1) {
    svgs.forEach((s) => s.setCurrentTime(t));
    for (const el of document.querySelectorAll("svg *"))
      if (el.href && el.href.animVal !== el.href.baseVal) seen.add(el.href.animVal);
  }
  return [...seen];
})"""


@pytest.fixture(scope="module")
def chromium() -> Iterator[tuple[Pipe, str]]:
    with devtools() as pipe:
        yield pipe, new_tab(pipe, "Runtime")


def animated(chromium: tuple[Pipe, str], documents: list[str]) -> list[list[str]]:
    """Every value Chromium's animations of each document gave an element's ``href``."""
    pipe, session = chromium
    answer: Any = pipe.call("Runtime.evaluate", {"expression": f"({PROBE})({json.dumps(documents)})",
                                                 "returnByValue": True}, session, time.monotonic() + 60)
    return list(answer["result"]["value"])


def test_the_values_an_animation_gives_a_link_or_an_image_are_found_with_their_places(
    chromium: tuple[Pipe, str],
) -> None:
    # SMIL Animation §3.2.2: values is a list separated by ";", each value stripped of white space; to and from are
    # one value each, a ";" in them a character of the URL
    document = ('<svg><a href="#x"><animate attributeName="href" dur="2s" values=" http://w.example/v1 ;'
                'http://w.example/v2?a=1&amp;b=2;"/></a><a><set attributeName="href" to="http://w.example/t;u"/></a>'
                '<image><animate attributeName="href" dur="2s" from="http://w.example/f.png" to="http://w.example/t.png"/>'
                "</image></svg>")
    (given_by_chromium,) = animated(chromium, [document])
    found = html_references(document)
    assert sorted(given_by_chromium) == sorted(
        ["http://w.example/v1", "http://w.example/v2?a=1&b=2", "http://w.example/t;u",
         "http://w.example/f.png", "http://w.example/t.png"])
    assert [(r.url, r.kind, document[r.start:r.end]) for r in found if r.element in ("set", "animate")] == [
        ("http://w.example/v1", "href", "http://w.example/v1"),
        ("http://w.example/v2?a=1&b=2", "href", "http://w.example/v2?a=1&amp;b=2"),
        ("http://w.example/t;u", "href", "http://w.example/t;u"),
        ("http://w.example/f.png", "src", "http://w.example/f.png"),  # an image's: needed to show it
        ("http://w.example/t.png", "src", "http://w.example/t.png"),
    ]


URLS = st.sampled_from(["http://w.example/a", "b.html", "http://w.example/c?d=1&amp;e=2", "//w.example/f",
                        "http://w.example/g h", "file:///etc/passwd", "smb://share/x"])
SPACE = st.sampled_from(["", " ", "\n", "\t "])
VALUES = st.lists(st.tuples(SPACE, URLS, SPACE).map("".join), min_size=1, max_size=4).map(";".join)


@st.composite
def animation(draw: st.DrawFn) -> str:
    """An SVG element animated to URLs: a ``<set>`` or an ``<animate>`` of its ``href``, by any of its attributes."""
    target = draw(st.sampled_from(["a", "image", "use"]))
    name = draw(st.sampled_from(["href", "href", " href", "xlink:href"]))
    if draw(st.booleans()):
        values = f'to="{draw(st.tuples(SPACE, URLS, SPACE).map("".join))}"'
        return f'<svg><{target}><set attributeName="{name}" {values}/></{target}></svg>'
    given = draw(st.sampled_from(["values", "from-to", "to"]))
    if given == "values":
        values = f'values="{draw(VALUES)}{draw(st.sampled_from(["", ";"]))}"'
    elif given == "from-to":
        values = f'from="{draw(URLS)}" to="{draw(URLS)}"'
    else:
        values = f'to="{draw(URLS)}"'
    return f'<svg><{target}><animate attributeName="{name}" dur="3s" {values}/></{target}></svg>'


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(animation(), min_size=60, max_size=60))
def test_property_every_url_an_animation_gives_chromium_the_reader_finds(
    chromium: tuple[Pipe, str], documents: list[str],
) -> None:
    for document, given_by_chromium in zip(documents, animated(chromium, documents), strict=True):
        found = {r.url for r in html_references(document)}
        assert [url for url in given_by_chromium if url not in found] == [], document
