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
  no source positions. A start tag that makes no element of its own (a
  second ``<body>``) spans just itself. html5lib 1.1 (2020) predates parts
  of today's HTML: ``<dialog>`` and ``<search>`` are taught to close an open
  ``<p>`` here; a document with ``<template>`` is refused
  (:class:`~pdi.errors.UnsupportedError`) rather than cut where a current
  parser would not cut it; scripting is off, so ``<noscript>`` content is
  markup. Parsing is pure Python (about 3 s per MB) and stops with a
  :class:`~pdi.errors.LimitError` after :data:`MAX_PARSE_SECONDS`.
* **XML** with the standard ``pyexpat`` (non-validating, no external
  entities fetched, expat's limits on entity amplification); a document that
  is not well-formed cannot be cut and is
  :class:`~pdi.errors.UnsupportedError`, with expat's line and column.
* The charset is the stored one; without one, HTML is sniffed as a browser
  would (BOM, ``<meta charset>``, UTF-8, windows-1252) and XML read by its
  BOM and encoding declaration (default UTF-8).

A start tag number past the last one, or a name no element has, is
:class:`~pdi.errors.NotFoundError`; a ``name`` range whose second element
ends before the first begins is a :class:`~pdi.errors.ParseError`. SGML
(``text/sgml``) needs its DTD to be parsed and is not evaluated. Pure: no I/O.
"""

from __future__ import annotations

import codecs
import dataclasses
import functools
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, SupportsIndex

from pdi.errors import LimitError, NotFoundError, ParseError, PDIError, UnsupportedError
from pdi.fragments import FragmentResult

#: How long parsing one HTML document may take (seconds).
MAX_PARSE_SECONDS: Final = 30.0
_XML_DECLARATION: Final = re.compile(rb"""<\?xml\s[^>]*?encoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']""")


@dataclass(frozen=True)
class Element:
    """One start tag of the source and the element it opens: code points ``[start, end)`` of the CRLF-canonical text."""

    number: int
    name: str
    start: int
    end: int
    attributes: dict[str, str]


def markup_kind(media_type: str) -> str | None:
    """``"html"``, ``"xhtml"``, ``"xml"``, ``"sgml"`` or ``None`` for a media type (parameters ignored).

    The families are :func:`pdi.formats.media_family`'s; XHTML
    (``application/xhtml+xml``) is HTML's vocabulary in XML syntax: it is
    read as XML, and ``name`` applies to it as to HTML.
    """
    from pdi import formats

    mtype = media_type.split(";")[0].strip().lower()
    family = formats.media_family(mtype)
    if family == "html":
        return "html" if mtype == "text/html" else "xhtml"
    if family == "xml":
        return "sgml" if mtype.endswith("/sgml") else "xml"
    return None


def evaluate_markup(
    scheme: str, positions: Sequence[object], data: bytes, media_type: str, charset: str | None
) -> FragmentResult:
    """Evaluate ``elt`` or ``name`` on an HTML or XML entity (see the module docstring)."""
    from pdi.fragments.text import TextIndex, evaluate_pdi
    from pdi.fragments.text.lines import to_crlf

    kind = markup_kind(media_type)
    if scheme not in ("elt", "name"):
        raise UnsupportedError(f"no element fragment scheme {scheme!r}: elt or name")
    if kind is None:
        raise UnsupportedError(f"{scheme} fragments are for HTML and XML, not {media_type}")
    if kind == "sgml":
        raise UnsupportedError("elt on SGML is not evaluated: SGML cannot be parsed without its DTD")
    if scheme == "name" and kind not in ("html", "xhtml"):
        raise UnsupportedError("name fragments are HTML's (draft lines 612-628); XML has elt and char")
    first, last = _ends(scheme, positions)
    index = TextIndex(data, document_charset(data, media_type, charset))
    elements = _elements(kind, to_crlf(index.whole_text()))
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
    result = evaluate_pdi("char", (a.start, b.end), index, media_type=media_type)
    return dataclasses.replace(result, scheme=scheme)


@functools.lru_cache(maxsize=4)
def _elements(kind: str, text: str) -> tuple[Element, ...]:
    """The element table of a document, kept for the last few documents (a resolver cites one page often)."""
    return tuple(html_elements(text) if kind == "html" else xml_elements(text))


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
        raise ParseError(f"a {scheme} fragment is two {what} (start,end), not {tuple(positions)!r}", rule="position")
    if scheme == "elt" and positions[1] < positions[0]:  # type: ignore[operator]
        raise ParseError(
            f"elt fragment ends before it starts ({positions[1]} < {positions[0]})", rule="fragment-specifier"
        )
    return positions[0], positions[1]


def _numbered(elements: Sequence[Element], number: int) -> Element:
    if number >= len(elements):
        raise NotFoundError(
            f"no start tag {number}: the document has {len(elements)} (0 to {len(elements) - 1})"
            if elements
            else f"no start tag {number}: the document has none"
        )
    return elements[number]


def _named(elements: Sequence[Element], name: str) -> Element:
    for element in elements:
        if element.attributes.get("name") == name or element.attributes.get("id") == name:
            return element
    raise NotFoundError(f"no element has the name or id {name!r}")


# --- charsets ---------------------------------------------------------------------------------


def document_charset(data: bytes, media_type: str, charset: str | None) -> str | None:
    """The charset to read ``data`` in: ``charset`` if given; else sniffed for HTML and XML; else ``None``.

    Every scheme on a markup document (``char``, ``line``, ``elt``, ``name``)
    and the resolver's viewer read it in this charset, so their positions agree.
    """
    if charset is not None:
        return charset
    kind = markup_kind(media_type)
    if kind == "html":
        return _html_charset(data)
    if kind in ("xml", "xhtml"):
        return _xml_charset(data)
    return None


def _html_charset(data: bytes) -> str:
    from pdi.mhtml.charset import sniff

    encoding, _, _ = sniff(data, declared=None, media_type="text/html")
    return encoding


def _xml_charset(data: bytes) -> str:
    """XML 1.0 Appendix F: a byte-order mark, else the first octets of ``<?xml``, else the declaration, else UTF-8."""
    marks = (
        (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),  # before UTF-16: FF FE 00 00
        (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
        (b"\x00\x00\x00<", "utf-32-be"), (b"<\x00\x00\x00", "utf-32-le"),
        (b"\x00<\x00?", "utf-16-be"), (b"<\x00?\x00", "utf-16-le"),
    )
    for mark, name in marks:
        if data.startswith(mark):
            return name
    declared = _XML_DECLARATION.match(data[:1024])
    return declared.group(1).decode("ascii") if declared else "utf-8"


# --- XML ----------------------------------------------------------------------------------------


def xml_elements(text: str) -> list[Element]:
    """Every start tag and empty-element tag of the XML ``text``, with the extent of its element."""
    import xml.parsers.expat

    parser = xml.parsers.expat.ParserCreate()
    try:
        utf8 = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a str from a lenient decoding; XML's Char excludes surrogates
        raise UnsupportedError(
            f"element fragments on XML that is not well-formed: character {exc.start} is a lone surrogate"
        ) from None
    starts: list[tuple[str, int, dict[str, str]]] = []  # name, UTF-8 index of '<', attributes
    ends: dict[int, int] = {}  # element number -> UTF-8 index where its end event came
    open_stack: list[int | None] = []

    def start(name: str, attributes: dict[str, str]) -> None:
        index = parser.CurrentByteIndex
        if not utf8.startswith(b"<" + name.encode("utf-8"), index):
            open_stack.append(None)  # an element from an entity's replacement text: no start tag here
            return
        open_stack.append(len(starts))
        starts.append((name, index, attributes))

    def end(name: str) -> None:
        number = open_stack.pop()
        if number is not None:
            ends[number] = parser.CurrentByteIndex

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(text, True)  # a str is parsed as UTF-8: the indexes are into text.encode()
    except xml.parsers.expat.ExpatError as exc:
        if xml.parsers.expat.ErrorString(exc.code) == xml.parsers.expat.errors.XML_ERROR_AMPLIFICATION_LIMIT_BREACH:
            raise LimitError(f"the XML's entities expand too much (expat's amplification limit) at line {exc.lineno}") from exc
        raise UnsupportedError(
            f"element fragments on XML that is not well-formed: {xml.parsers.expat.ErrorString(exc.code)}"
            f" at line {exc.lineno}, column {exc.offset}"
        ) from exc
    to_char = _utf8_to_code_points(text, [i for _, i, _ in starts] + list(ends.values()))
    elements = []
    for number, (name, index, attributes) in enumerate(starts):
        start_char = to_char[index]
        tag_end = _tag_end(text, start_char)
        if text[tag_end - 2] == "/":  # <name .../>: the tag is the element
            end_char = tag_end
        else:  # the end event comes at the '<' of </name ...>
            end_char = text.index(">", to_char[ends[number]]) + 1
        elements.append(Element(number, name, start_char, end_char, dict(attributes)))
    return elements


def _utf8_to_code_points(text: str, indexes: list[int]) -> dict[int, int]:
    """The code point offset in ``text`` of each octet offset in ``text.encode()``, in one pass."""
    utf8 = text.encode("utf-8")
    found: dict[int, int] = {}
    octet = code_point = 0
    for index in sorted(set(indexes)):
        code_point += len(utf8[octet:index].decode("utf-8"))
        octet = index
        found[index] = code_point
    return found


def _tag_end(text: str, start: int) -> int:
    """The offset just after the ``>`` of the tag that starts at ``start`` (quoted values may hold ``>``)."""
    quote = ""
    for i in range(start + 1, len(text)):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == ">":
            return i + 1
    raise UnsupportedError(f"the tag at character {start} has no end")  # expat would have said so


# --- HTML ---------------------------------------------------------------------------------------


def html_elements(text: str, *, seconds: float = MAX_PARSE_SECONDS) -> list[Element]:
    """Every start tag of the CRLF-canonical HTML ``text``, with the extent of the element an HTML5 parser makes of it.

    Parsing longer than ``seconds`` is a :class:`~pdi.errors.LimitError`
    (html5lib is pure Python, and deep nesting makes it slow).
    """
    import html5lib
    from html5lib import _tokenizer, _utils, html5parser
    from html5lib.constants import tokenTypes

    start_tag, end_tag = tokenTypes["StartTag"], tokenTypes["EndTag"]
    line_starts = [0, *(m.end() for m in re.finditer("\r\n", text))]
    tags: list[dict[str, Any]] = []  # the start tag tokens, in source order
    closed: dict[int, int] = {}  # id(element) -> where it ends
    made: dict[int, int] = {}  # id(element) -> number of the start tag that made it
    seen: list[Any] = []  # every element in those tables, kept alive so that no id is reused
    state: dict[str, Any] = {"token": None}

    def offset(position: tuple[int, int]) -> int:
        line, column = position  # html5lib reads CRLF as one newline; the text has only CRLF
        return line_starts[line - 1] + column

    class Tokenizer(_tokenizer.HTMLTokenizer):  # type: ignore[misc]
        def tagOpenState(self) -> bool:
            return self._opened(_tokenizer.HTMLTokenizer.tagOpenState, start_tag, 1)

        def closeTagOpenState(self) -> bool:
            return self._opened(_tokenizer.HTMLTokenizer.closeTagOpenState, end_tag, 2)

        def _opened(self, state_method: Callable[[Any], bool], kind: int, back: int) -> bool:
            at = offset(self.stream.position()) - back  # the '<' (and '/') are read already
            before = self.currentToken
            result = state_method(self)
            token = self.currentToken
            if token is not before and isinstance(token, dict) and token.get("type") == kind:
                token["_start"] = at
            return result

        def emitCurrentToken(self) -> None:
            token = self.currentToken
            if token.get("type") == start_tag and token.get("name", "").lower() == "template":
                raise UnsupportedError(
                    "elt and name on HTML with <template> are not evaluated: html5lib 1.1, the parser"
                    " used, predates the template element"
                )
            if token.get("type") in (start_tag, end_tag):
                token["_end"] = end = offset(self.stream.position())
                if "_start" not in token:  # an end tag of RCDATA, RAWTEXT or script text: </title>
                    token["_start"] = text.rfind("</" if token["type"] == end_tag else "<", 0, end)
                if token["type"] == start_tag:
                    token["_number"] = len(tags)
                    tags.append(token)
            super().emitCurrentToken()

        def __iter__(self) -> Any:
            deadline = time.monotonic() + seconds
            for count, token in enumerate(super().__iter__()):
                if count % 512 == 0 and time.monotonic() > deadline:
                    raise LimitError(f"parsing this HTML took more than {seconds:g} s: too large or too deeply nested")
                state["token"] = token
                yield token
                phase = self.parser.phase
                after_body = (self.parser.phases["afterBody"], self.parser.phases["afterAfterBody"])
                if token.get("type") == end_tag and token.get("name") in ("body", "html") and phase in after_body:
                    # the parser keeps body and html open after </body> and </html> (later
                    # content still goes in), and what is open inside them; their source
                    # ends at that tag, and what is open inside ends where it begins
                    stack = list(self.parser.tree.openElements)
                    for depth, element in enumerate(stack):
                        if element.name == token["name"] and id(element) not in closed:
                            for inner in [element, *stack[depth + 1 :]]:
                                if id(inner) not in closed:
                                    seen.append(inner)
                                    closed[id(inner)] = token["_end" if inner is element else "_start"]
                            break
            state["token"] = None

    def close(element: Any) -> None:
        if id(element) in closed:
            return
        seen.append(element)
        token = state["token"]
        if token is None:  # the end of the document
            closed[id(element)] = len(text)
        elif id(element) in made and made[id(element)] == token.get("_number"):
            closed[id(element)] = token["_end"]  # a void or self-closed element: the tag itself
        elif token.get("type") == end_tag and token.get("name") == element.name and "_end" in token:
            closed[id(element)] = token["_end"]  # its own end tag
        else:
            closed[id(element)] = token.get("_start", token.get("_end", len(text)))

    class Stack(list):  # type: ignore[type-arg]
        def pop(self, index: SupportsIndex = -1) -> Any:
            element = super().pop(index)
            close(element)
            return element

        def remove(self, element: Any) -> None:
            super().remove(element)
            close(element)

        def __setitem__(self, index: Any, element: Any) -> None:  # the adoption agency swaps in a clone
            for old in self[index] if isinstance(index, slice) else [self[index]]:
                close(old)
            super().__setitem__(index, element)

    base = html5lib.getTreeBuilder("etree")

    class Tree(base):  # type: ignore[misc, valid-type]
        def reset(self) -> None:
            super().reset()
            self.openElements = Stack()

        def _made(self, token: dict[str, Any], element: Any) -> None:
            number = token.get("_number")
            if number is not None and "_element" not in token:
                seen.append(element)
                token["_element"] = element
                made[id(element)] = number

        def insertElementNormal(self, token: dict[str, Any]) -> Any:
            element = super().insertElementNormal(token)
            self._made(token, element)
            return element

        def insertElementTable(self, token: dict[str, Any]) -> Any:
            element = super().insertElementTable(token)
            self._made(token, element)
            return element

        def insertRoot(self, token: dict[str, Any]) -> None:
            super().insertRoot(token)
            # html5lib makes the root from an implied token and merges a real <html>
            # into it; the HTML5 algorithm makes the root for that <html> start tag
            current = state["token"]
            if current is not None and current.get("type") == start_tag and current.get("name") == "html":
                token = current
            self._made(token, self.openElements[-1])

    class Parser(html5parser.HTMLParser):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # HTML now closes an open <p> at <dialog> and <search> too (html5lib 1.1 predates that)
            in_body = type(self.phases["inBody"])
            starts, ends = vars(in_body)["startTagHandler"], vars(in_body)["endTagHandler"]  # name -> function
            handler = _utils.MethodDispatcher([*starts.items(), (("dialog", "search"), vars(in_body)["startTagCloseP"])])
            handler.default = starts.default
            end_handler = _utils.MethodDispatcher([*ends.items(), ("search", vars(in_body)["endTagBlock"])])
            end_handler.default = ends.default
            current = type("InBody", (in_body,), {"__slots__": (), "startTagHandler": handler, "endTagHandler": end_handler})
            self.phases["inBody"] = current(self, self.tree)

        def _parse(self, stream: Any, innerHTML: bool = False, container: str = "div",
                   scripting: bool = False, **kwargs: Any) -> None:
            self.innerHTMLMode = innerHTML
            self.container = container
            self.scripting = scripting
            self.tokenizer = Tokenizer(stream, parser=self, **kwargs)
            self.reset()
            self.mainLoop()

    parser = Parser(tree=Tree, namespaceHTMLElements=False)
    try:
        parser.parse(text)
    except PDIError:
        raise
    except Exception as exc:  # html5lib's own assertions on rare inputs: a clear error, not a crash
        raise UnsupportedError(f"html5lib could not parse this HTML ({type(exc).__name__}: {exc})") from exc
    elements = []
    for token in tags:
        element = token.get("_element")
        end = token["_end"] if element is None else closed.get(id(element), len(text))
        attributes = {str(k) if not isinstance(k, tuple) else k[1]: v for k, v in token["data"].items()}
        elements.append(Element(token["_number"], token["name"], token["_start"], max(end, token["_end"]), attributes))
    return elements
