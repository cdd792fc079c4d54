"""The lexical reading of HTML and XML source that the full-text index and the page text share.

What it reads (a simplified WHATWG HTML §13.2.5 tokenizer, no tree): where a
tag opens (``<`` and an ASCII letter, ``</`` and one), its name, where it ends
(after its ``>``; a quoted attribute value may hold ``>``), where a raw-text
or RCDATA element's content ends (its own end tag, any case), and the
character references of text, each decoded with :func:`unescape` (:func:`html.unescape`, a number of any length read) and
mapped to the whole reference in the source. :class:`pdi.passages.fulltext.MarkupScanner`
(passages for search, fed in pieces) and :func:`pdi.fragments.pagetext.markup_page_text`
(the rendered text of a page) both read markup with these, and
:mod:`pdi.mhtml.refs` decodes references in attribute values with
:func:`decoded_pieces`: one reading, one module.

Why HTML is still read three ways, measured (``bench/bench_html_readers.py``,
the HTML parts of tests/data/corpus/mhtml on this 2-core machine, 2026-11-24;
the 0.60 MB Stack Overflow page, and 4.4 MB of all the corpus pages joined):

================================  ==========  ==========  =================
reader                            MB/s        peak MB     time vs. scanner
================================  ==========  ==========  =================
html5lib tree (``elt``, ``name``)  0.78 / 0.94  25 / 126    9.0x / 10.9x
html.parser (references)          4.80 / 5.66  0.2 / 2.8   1.5x / 1.8x
this scanner, full-text passages  6.97 / 10.3  2.6 / 11.7  1x
this scanner, page text           3.86 / 4.35  2.3 / 10.5  1.8x / 2.4x
================================  ==========  ==========  =================

* html5lib stays for ``elt`` and ``name`` (:mod:`pdi.fragments.markup.html`):
  where an element *ends* needs HTML5 tree construction (implied end tags,
  the adoption agency, foster parenting), which no scanner does; at a tenth
  of the speed and 30 times the input's size in memory it runs once per
  document, at deposit, into the element index.
* This scanner stays for text: the full-text index reads every HTML and XML
  document at deposit, as a stream fed in pieces (memory: what is not yet
  closed, and one passage), which html5lib cannot do with source offsets;
  on html5lib it would take ten times as long and hold the document's tree.
* html.parser stays for references (:mod:`pdi.mhtml.refs`): it reads
  attributes with their offsets (the scanner reads none), follows script
  data's escaped states and SVG and MathML namespaces, which a rewriter of
  references needs and text does not, at the scanner's speed and a fifth of
  its memory.

``tests/test_passages_scan_agreement.py`` holds them to one reading: over
every HTML page of tests/data and over generated HTML, the scanner's text
is html5lib's text (character for character, white space aside), every
start tag html5lib reads is markup to the scanner and not text, and every
reference html.parser finds in an attribute is a value of that attribute of
the element html5lib reads there.

Pure: no I/O.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Final

__all__ = [
    "RAW_TEXT",
    "RCDATA",
    "REFERENCE",
    "TAG_NAME",
    "TAG_OPEN",
    "close_tag",
    "decoded_pieces",
    "tag_end",
    "unescape",
]

#: HTML elements whose content is not text (WHATWG HTML §13.2.5: RAWTEXT and script data).
RAW_TEXT: Final = frozenset({"script", "style", "xmp", "iframe", "noembed", "noframes", "noscript"})
#: HTML elements whose content is text though it holds no tags (RCDATA; PLAINTEXT runs to the end).
RCDATA: Final = frozenset({"title", "textarea"})
#: Where a tag opens: ``<`` or ``</`` and an ASCII letter (WHATWG HTML §13.2.5.6, §13.2.5.7).
TAG_OPEN: Final = re.compile(r"</?[A-Za-z]")
#: A tag's name, from just after its ``<`` or ``</`` (§13.2.5.8: to white space, ``/`` or ``>``).
TAG_NAME: Final = re.compile(r"[^\t\n\f\r />]*")
#: A character reference as written: named (the longest run of letters and digits), decimal or hexadecimal.
REFERENCE: Final = re.compile(r"&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]*;?)")
_TAG_STOP: Final = re.compile(r"[>=]")
_SPACE: Final = " \t\n\r\f"


def tag_end(text: str, i: int) -> int:
    """Where the tag whose name ends at ``i`` ends (after its ``>``; quoted attribute values may hold ``>``), or -1 if not in ``text``."""
    n = len(text)
    while True:
        m = _TAG_STOP.search(text, i)
        if m is None:
            return -1
        if m.group() == ">":
            return m.end()
        k = m.end()
        while k < n and text[k] in _SPACE:
            k += 1
        if k >= n:
            return -1
        if text[k] in "\"'":
            close = text.find(text[k], k + 1)
            if close < 0:
                return -1
            i = close + 1
        else:
            i = k


def close_tag(text: str, name: str, at: int) -> int:
    """Where ``</name`` (any case, then white space, ``/`` or ``>``) next starts at or after ``at``, or -1.

    Any case in ASCII (HTML §13.2.5: an end tag's name is ASCII letters): ``re.I`` alone matched ``</ſcript>``, a
    long s, which ends no script in a browser."""
    pattern = re.compile(r"</" + re.escape(name) + r"(?=[\t\n\f\r />])", re.IGNORECASE | re.ASCII)
    m = pattern.search(text, at)
    return -1 if m is None else m.start()


#: A numeric character reference: its ``x``, its digits but leading zeros, its ``;``.
_NUMBER: Final = re.compile(r"&#(?:([xX])(?=[0-9a-fA-F])0*+([0-9a-fA-F]*)|(?=[0-9])0*+([0-9]*))(;?)")


def _number(m: re.Match[str]) -> str:
    x, hexadecimal, decimal, semicolon = m.groups()
    digits = hexadecimal if x else decimal
    if len(digits) > (6 if x else 7):  # past U+10FFFF (0x10FFFF is 1114111)
        return "\ufffd"
    return f"&#{x or ''}{digits or '0'}{semicolon}"


def unescape(text: str) -> str:
    """``text`` with its character references decoded, as :func:`html.unescape` decodes them, but a number of any
    length read: leading zeros say nothing, and past U+10FFFF it is U+FFFD, as WHATWG HTML §13.2.5.80 reads it
    (:func:`html.unescape` raised a ``ValueError`` past 4,300 digits, zeros or not)."""
    if "&#" in text:
        text = _NUMBER.sub(_number, text)
    return html.unescape(text)


def decoded_pieces(text: str, start: int, end: int) -> Iterator[tuple[str, int, int]]:
    """``text[start:end]`` in pieces, each character reference decoded: (piece, where it starts, where it ends in ``text``).

    A reference :func:`html.unescape` leaves as written (``&nosuch;``) is
    text as it stands; a decoded one is a piece of its own spanning the whole
    reference. The pieces alternate: text, a decoded reference, text, …,
    text (so a reference is an odd-numbered piece); text pieces may be empty.
    """
    at = start
    if "&" in text[start:end]:
        for m in REFERENCE.finditer(text, start, end):
            decoded = unescape(m.group())
            if decoded == m.group():
                continue
            yield text[at : m.start()], at, m.start()
            yield decoded, m.start(), m.end()
            at = m.end()
    yield text[at:end], at, end
