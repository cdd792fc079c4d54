"""Element fragments on HTML and XML: ``elt`` and ``name`` (draft lines 590–674; PDI-GRAMMAR.md §3).

* ``elt=a,b`` — start tags are counted from 0 in source order; the fragment
  runs from the ``<`` of start tag ``a`` through the end of the element that
  start tag ``b`` opens. On XML (``text/xml``, ``application/xml``, ``+xml``, XHTML)
  start tags and empty-element tags are counted and an element ends with its
  end tag (or with its empty-element tag). On HTML the end is the element's
  explicit end tag, or the point where an HTML5 parser closes it implicitly:
  the start of the tag that closes it (``<p>one<p>two``: the first ``p``
  ends where the second begins), the tag itself for a void element
  (``<br>``), the end of the document for an element left open. ``body``
  and ``html`` end with their end tags, though the parser keeps them (and
  what is open inside them) open for what follows; an element still open
  inside them ends where ``</body>`` or ``</html>`` begins.
* ``name=x,y`` (HTML and XHTML) — ``x`` is the first element whose ``name`` or
  ``id`` attribute equals ``x`` (%-decoded by the identifier parser,
  compared case-sensitively); the fragment runs from its start tag through
  the end of the first element named ``y``.

The result is exactly the ``char`` fragment over the same stretch of the
CRLF-canonical source (PDI-GRAMMAR.md: "``char`` as for text, on the HTML
source"): positions are code points of the CRLF-canonical text, and
:func:`~pdi.fragments.text.evaluate_pdi` cuts the octets, so ``elt=a,b``
and the ``char=s,e`` in its ranges select the same bytes.

How the source is read:

* **HTML** with ``html5lib``, the HTML5 parsing algorithm in pure Python,
  chosen because its tokenizer can be asked where each tag starts and ends
  and its tree builder shows when each element is taken off the stack of
  open elements, which is what "the point where an HTML5 parser closes it"
  means; the standard ``html.parser`` has positions but no tree
  construction, and the C parsers (lxml, html5-parser, selectolax) report
  no source positions. Asking takes extending html5lib's private classes
  (:mod:`pdi.fragments.markup.html`), so html5lib is pinned to exactly 1.1
  and a test names each of those parts that differs in the html5lib
  installed. A start tag that makes no element of its own (a
  second ``<body>``) spans just itself. html5lib 1.1 (2020) predates parts
  of today's HTML: ``<dialog>`` and ``<search>`` are taught to close an open
  ``<p>`` here, ``<isindex>`` to be an element like any unknown one, and ruby's
  ``<rb>`` and ``<rtc>`` to close as they do today, and the "special" elements
  are today's; a document with ``<template>`` is refused
  (:class:`~pdi.errors.UnsupportedError`) rather than cut where a current
  parser would not cut it; scripting is off, so ``<noscript>`` content is
  markup. Parsing is pure Python (about 3 s per MB) and stops with a
  :class:`~pdi.errors.LimitError` after :data:`MAX_PARSE_SECONDS` of processor time; a page
  larger than :data:`~pdi.fragments.markup.bounds.MAX_MARKUP_OCTETS`, or of
  more start tags, depth or attributes than html5lib is given
  (:mod:`pdi.fragments.markup.reading` says how many, and why), is a
  :class:`~pdi.errors.LimitError` before or as soon as the parse meets it,
  so that one request's parse is bounded in time and memory.
* **XML** with the standard ``pyexpat`` (non-validating, no external
  entities fetched, the internal subset's parameter entities read,
  expat's limits on entity amplification), its names
  those of XML 1.0 Fifth Edition, which expat (of the Fourth) is given
  written over octet for octet (:mod:`pdi.fragments.markup.xml_names`); a document that
  is not well-formed cannot be cut and is
  :class:`~pdi.errors.UnsupportedError`, with expat's line and column.
  expat is fast, but every element read is kept as a Python value, so XML
  (SVG too) is bounded as HTML is: larger than
  :data:`~pdi.fragments.markup.bounds.MAX_MARKUP_OCTETS`, of more start
  tags or of a tag of more attributes than expat is given, it is a
  :class:`~pdi.errors.LimitError` before expat starts; deeper, or of more
  attributes in all, as soon as the parse meets it.
* Both parsers read CR, LF and CRLF as CRLF and U+0085 (NEL) as the
  character it is (neither HTML nor XML 1.0 ends a line there), and the
  positions are those of the CRLF-canonical text, which counts NEL as a line
  ending (:func:`~pdi.fragments.markup.reading.markup_elements`).
* The charset is the stored one; without one, HTML is sniffed as a browser
  would (:func:`pdi.charsets.sniff_encoding`: BOM, ``<meta charset>``, UTF-8,
  windows-1252) and XML read by its
  BOM and encoding declaration (default UTF-8).

Made once, at deposit, an :class:`~pdi.fragments.markup.index.ElementIndex`
keeps what a parse finds (every element's extent, the ``name``/``id`` table,
the charset read in, the text's block table, or the error the document
gives); :func:`evaluate_markup` given it (``index=``) answers without
parsing, exactly as it answers without it.

A start tag number past the last one, or a name no element has, is
:class:`~pdi.errors.NotFoundError`; a ``name`` range whose second element
ends before the first begins is a :class:`~pdi.errors.ParseError`.

* **SGML** (``text/sgml``): ``elt`` only; the elements are those OpenSP's
  ``onsgmls`` reports given the document's DTD, every one counted whether
  its start tag is written or implied
  (:mod:`pdi.fragments.markup.sgml` says how their positions are found and
  what is read when the DTD is missing). Not pure: it runs ``onsgmls``.

HTML and XML are pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pdi.errors import LimitError, NotFoundError, ParseError, UnsupportedError
from pdi.fragments.markup.bounds import check_markup_size
from pdi.fragments.markup.element import Element
from pdi.fragments.markup.reading import (
    MAX_PARSE_SECONDS,
    document_charset,
    html_elements,
    markup_elements,
    markup_kind,
    xml_elements,
)
from pdi.fragments.results import FragmentResult

if TYPE_CHECKING:
    from pdi.fragments.markup.sgml import SgmlCatalog
    from pdi.fragments.text.index import Buffer

__all__ = [
    "MAX_PARSE_SECONDS",
    "Element",
    "document_charset",
    "evaluate_markup",
    "html_elements",
    "markup_elements",
    "markup_kind",
    "xml_elements",
]


def evaluate_markup(
    scheme: str,
    positions: Sequence[object],
    data: Buffer,
    media_type: str,
    charset: str | None,
    *,
    index: bytes | None = None,
    sgml_catalog: SgmlCatalog | None = None,
) -> FragmentResult:
    """Evaluate ``elt`` or ``name`` on an HTML or XML entity (see the module docstring).

    ``sgml_catalog``: the archive's own SGML catalog, read before the system's when SGML is parsed here (it has
    no element index).

    ``index`` is an index made beforehand from these octets: an
    :class:`~pdi.fragments.markup.index.ElementIndex` (``to_bytes()``), and
    then nothing is parsed and only the selection is decoded, or a
    :class:`~pdi.fragments.text.TextTable` (the document is parsed, and the
    selection cut with the table). Either gives the same result as no index;
    an index made for other octets is an :class:`~pdi.errors.IntegrityError`.
    """
    from pdi.fragments.sealed import index_kind
    from pdi.fragments.text import TextIndex, evaluate_pdi

    kind = markup_kind(media_type)
    if scheme not in ("elt", "name"):
        raise UnsupportedError(f"no element fragment scheme {scheme!r}: elt or name")
    if kind is None:
        raise UnsupportedError(f"{scheme} fragments are for HTML and XML, not {media_type}")
    if scheme == "name" and kind not in ("html", "xhtml"):
        raise UnsupportedError("name fragments are HTML's (draft lines 612-628); XML has elt and char")
    first, last = _ends(scheme, positions)
    elements: Sequence[Element]
    if index is not None and index_kind(index) == "markup":
        from pdi.fragments.markup.index import ElementIndex

        element_index = ElementIndex.from_bytes(index)
        read_in = element_index.reading(data, media_type, charset)
        element_index.raise_failure()
        text_index = TextIndex(data, read_in, table=element_index.text_table)
        elements = element_index
    else:
        check_markup_size(kind, len(data))
        text_index = TextIndex(data, document_charset(data, media_type, charset), table=index)
        elements = _table(kind, text_index.whole_text(), sgml_catalog)
    if scheme == "elt":
        a, b = _numbered(elements, first), _numbered(elements, last)
    else:
        a, b = _named(elements, first), _named(elements, last)
    if b.end < a.start:
        raise ParseError(
            f"{scheme} fragment ends before it starts: element {b.number} ({b.name}) ends at {b.end},"
            f" before element {a.number} ({a.name}) starts at {a.start}",
            rule="fragment-specifier",
        )
    result = evaluate_pdi("char", (a.start, b.end), text_index, media_type=media_type)
    return dataclasses.replace(result, scheme=scheme)


def _table(kind: str, text: str, sgml_catalog: SgmlCatalog | None = None) -> tuple[Element, ...]:
    """The element table of a document's decoded ``text`` (:func:`_elements`), or the LimitError its parse gave, said again.

    SGML parsed with an archive's own catalog is parsed each time, never kept: the folder gains DTDs (``pdi sgml
    add``), and a table kept from before would answer otherwise than a process started after."""
    if kind == "sgml" and sgml_catalog is not None:
        found = _elements.__wrapped__(kind, text, sgml_catalog)
    else:
        found = _elements(kind, text, None)
    if isinstance(found, str):
        raise LimitError(found)
    return found


@functools.lru_cache(maxsize=4)
def _elements(kind: str, text: str, sgml_catalog: SgmlCatalog | None) -> tuple[Element, ...] | str:
    """The element table of a document, kept for the last few documents (a resolver cites one page often).

    A parse past its bounds is kept too, as its :class:`~pdi.errors.LimitError`'s
    message, so that a parse known to fail is not tried again.
    """
    try:
        if kind == "sgml":
            from pdi.fragments.markup.sgml import sgml_elements
            from pdi.fragments.text.lines import to_crlf

            return tuple(sgml_elements(to_crlf(text), sgml_catalog))
        return tuple(markup_elements(kind if kind == "html" else "xml", text))
    except LimitError as exc:
        return exc.message


def _ends(scheme: str, positions: Sequence[object]) -> tuple[Any, Any]:
    if scheme == "elt":
        ok = len(positions) == 2 and all(
            isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in positions
        )
        what = "start tag numbers"
    else:
        ok = len(positions) == 2 and all(isinstance(p, str) and p for p in positions)
        what = "element names"
    if not ok:
        raise ParseError(f"{scheme}= is two {what} (start,end), not {tuple(positions)!r}", rule="position")
    first, last = positions
    if scheme == "elt" and isinstance(first, int) and isinstance(last, int) and last < first:
        raise ParseError(f"elt fragment ends before it starts ({last} < {first})", rule="fragment-specifier")
    return first, last


def _numbered(elements: Sequence[Element], number: int) -> Element:
    if number >= len(elements):
        raise NotFoundError(
            f"no start tag {number}: the document has {len(elements)} start tags,"
            f" numbered 0 to {len(elements) - 1}" if len(elements) > 1
            else f"no start tag {number}: the document has one start tag, numbered 0" if elements
            else f"no start tag {number}: the document has no start tags"
        )
    return elements[number]


def _named(elements: Sequence[Element], name: str) -> Element:
    from pdi.fragments.markup.index import ElementIndex

    if isinstance(elements, ElementIndex):
        found = elements.first_named(name)
        if found is not None:
            return found
        raise NotFoundError(f"no element has the name or id {name!r}")
    for element in elements:
        if element.attributes.get("name") == name or element.attributes.get("id") == name:
            return element
    raise NotFoundError(f"no element has the name or id {name!r}")
