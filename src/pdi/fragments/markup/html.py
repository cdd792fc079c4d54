"""Where each element of an HTML document ends: html5lib's HTML5 parser, watched as it works.

The HTML side of :mod:`pdi.fragments.markup.reading` (which imports this module only
when an ``elt`` or ``name`` fragment is evaluated on HTML). html5lib builds a
tree and forgets the source; the classes here extend one part of html5lib
each and record, on one :class:`_Extents` per parse, where each tag begins and
ends in the source and when the tree builder takes each element off the
stack of open elements, which is "the point where an HTML5 parser closes it"
(PDI-GRAMMAR.md §3):

* :class:`_Tokenizer` (html5lib's ``HTMLTokenizer``): where each tag starts
  and ends; the time limit; ``</body>`` and ``</html>``, which close nothing;
* :class:`_OpenElements` (the list html5lib keeps as the stack of open
  elements): when each element leaves it;
* :class:`_TreeBuilder` (html5lib's etree tree builder): which start tag made
  which element;
* :class:`_InBody` (html5lib's "in body" insertion mode): ``<dialog>`` and
  ``<search>`` as today's HTML parses them;
* :class:`_Parser` (html5lib's ``HTMLParser``): the four put together.

They override and call private parts of html5lib, so ``pyproject.toml`` pins
html5lib to exactly 1.1; :data:`HTML5LIB_INTERNALS` names every part they rely
on and what here relies on it, and ``tests/test_fragments_markup_html5lib.py``
fails, naming the part and what to re-check, when the installed html5lib
differs from 1.1 in any of them.

Each override's docstring cites the steps it follows in the WHATWG HTML Living
Standard, section 13.2 "Parsing HTML documents"
(https://html.spec.whatwg.org/multipage/parsing.html; 13.2.5 Tokenization,
13.2.6 Tree construction), by the name and anchor of the step, which outlive
the standard's section numbers. Pure: no I/O.
"""

from __future__ import annotations

import functools
import itertools
import re
import types
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final, SupportsIndex

import html5lib
from html5lib import _tokenizer, _utils, html5parser
from html5lib.constants import namespaces, tokenTypes

from pdi._work_deadline import WorkDeadline
from pdi.errors import LimitError, PDIError, UnsupportedError
from pdi.fragments.markup.bounds import (
    MAX_ATTRIBUTES,
    MAX_DEPTH,
    MAX_TAG_ATTRIBUTES,
    OTHERWISE,
    crowded_tag,
    too_deep,
    too_many_attributes,
)
from pdi.fragments.markup.element import Element

#: Every private part of html5lib 1.1 the classes here subclass, override or
#: call, by module and qualified name, with what here relies on it and how.
HTML5LIB_INTERNALS: Final[dict[str, str]] = {
    "html5lib._tokenizer.HTMLTokenizer.__init__":
        "_Tokenizer.__init__: takes (stream, parser=None, **kwargs) and sets stream, parser and currentToken",
    "html5lib._tokenizer.HTMLTokenizer.__iter__":
        "_Tokenizer.__iter__: a generator of tokens, each asked for after the last was processed",
    "html5lib._tokenizer.HTMLTokenizer.tagOpenState":
        "_Tokenizer.tagOpenState: entered with '<' read; makes a new start tag token the currentToken",
    "html5lib._tokenizer.HTMLTokenizer.closeTagOpenState":
        "_Tokenizer.closeTagOpenState: entered with '</' read; makes a new end tag token the currentToken",
    "html5lib._tokenizer.HTMLTokenizer.emitCurrentToken":
        "_Tokenizer.emitCurrentToken: called once per tag token, with its '>' just read; lowercases the name",
    "html5lib._tokenizer.HTMLTokenizer.rcdataEndTagNameState":
        "_Tokenizer.emitCurrentToken: makes </title>, </textarea> without closeTagOpenState ('</' searched for)",
    "html5lib._tokenizer.HTMLTokenizer.rawtextEndTagNameState":
        "_Tokenizer.emitCurrentToken: makes </style>, </xmp> ... without closeTagOpenState ('</' searched for)",
    "html5lib._tokenizer.HTMLTokenizer.scriptDataEndTagNameState":
        "_Tokenizer.emitCurrentToken: makes </script> without closeTagOpenState ('</' searched for)",
    "html5lib._tokenizer.HTMLTokenizer.scriptDataEscapedEndTagNameState":
        "_Tokenizer.emitCurrentToken: makes </script> after '<!--' without closeTagOpenState ('</' searched for)",
    "html5lib._tokenizer.HTMLTokenizer.attributeNameState":
        "_Tokenizer.attributeNameState: entered once or more for each attribute name, the current tag token's"
        " attributes a list of [name, value] that it compares the last with every other",
    "html5lib._inputstream.HTMLUnicodeInputStream.position":
        "_Extents.offset: (line from 1, column from 0) of the next character to be read",
    "html5lib._inputstream.HTMLUnicodeInputStream._position":
        "_Extents.offset: lines counted by '\\n', columns in code points",
    "html5lib._inputstream.HTMLUnicodeInputStream.readChunk":
        "_Extents.offset: CRLF read as one '\\n', so a line of the CRLF text is a line of the stream",
    "html5lib.treebuilders.etree.getETreeBuilder.<locals>.TreeBuilder":
        "_TreeBuilder subclasses it: it leaves reset and the insert methods to base.TreeBuilder",
    "html5lib.treebuilders.base.TreeBuilder.__init__":
        "_TreeBuilder.__init__: takes (namespaceHTMLElements) and calls reset()",
    "html5lib.treebuilders.base.TreeBuilder.reset":
        "_TreeBuilder.reset: the stack of open elements is the list in openElements, made anew here",
    "html5lib.treebuilders.base.TreeBuilder.insertRoot":
        "_TreeBuilder.insertRoot: pushes the root element it makes from the token",
    "html5lib.treebuilders.base.TreeBuilder.insertElementNormal":
        "_TreeBuilder.insertElementNormal: returns the element it makes for the token and pushes",
    "html5lib.treebuilders.base.TreeBuilder.insertElementTable":
        "_TreeBuilder.insertElementTable: returns the element it makes (or insertElementNormal's) and pushes",
    "html5lib.treebuilders.base.TreeBuilder._setInsertFromTable":
        "_TreeBuilder: insertElement is bound to self.insertElementNormal or self.insertElementTable",
    "html5lib.treebuilders.base.TreeBuilder.generateImpliedEndTags":
        "_TreeBuilder.generateImpliedEndTags replaces it: (exclude=None), pops the current node while in its list",
    "html5lib.treebuilders.base.TreeBuilder.elementInScope":
        "_InBody.startTagRuby: elementInScope('ruby') is 'has a ruby element in scope'",
    "html5lib.html5parser.HTMLParser.__init__":
        "_Parser.__init__: tree(namespaceHTMLElements) makes the builder; phases maps mode names to instances",
    "html5lib.html5parser.HTMLParser._parse":
        "_Parser._parse: a copy of it with _Tokenizer for HTMLTokenizer",
    "html5lib.html5parser.HTMLParser.reset":
        "_Parser._parse: resets the tree builder (a new stack) and the insertion mode",
    "html5lib.html5parser.HTMLParser.mainLoop":
        "_Tokenizer.__iter__: each token is processed to the end before the next is asked for",
    "html5lib.html5parser.getPhases.<locals>.Phase.processStartTag":
        "_InBody: start tags are dispatched through self.startTagHandler by name",
    "html5lib.html5parser.getPhases.<locals>.Phase.processEndTag":
        "_InBody: end tags are dispatched through self.endTagHandler by name",
    "html5lib.html5parser.getPhases.<locals>.InBodyPhase":
        "_InBody subclasses it; its startTagHandler and endTagHandler lack 'search' ('dialog' in the first)",
    "html5lib.html5parser.getPhases.<locals>.InBodyPhase.startTagCloseP":
        "_InBody: 'close a p element' if one is in button scope, then insert an HTML element",
    "html5lib.html5parser.getPhases.<locals>.InBodyPhase.endTagBlock":
        "_InBody: generate implied end tags, then pop up to the element of the end tag's name",
    "html5lib.html5parser.getPhases.<locals>.InBodyPhase.startTagOther":
        "_InBody: reconstruct the active formatting elements, then insert an HTML element (isindex)",
    "html5lib.html5parser.getPhases.<locals>.InBodyPhase.startTagListItem":
        "_modern_special: no closure; reads the special category from the module global specialElements",
    "html5lib.html5parser.getPhases.<locals>.InBodyPhase.endTagFormatting":
        "_modern_special: no closure; reads the special category from the module global specialElements",
    "html5lib.html5parser.getPhases.<locals>.InBodyPhase.endTagOther":
        "_modern_special: no closure; reads the special category from the module global specialElements",
    "html5lib.html5parser.getPhases.<locals>.InBodyPhase.endTagBody":
        "_Tokenizer.__iter__: an accepted </body> switches to phases['afterBody'] and pops nothing",
    "html5lib.html5parser.getPhases.<locals>.AfterBodyPhase.endTagHtml":
        "_Tokenizer.__iter__: an accepted </html> switches to phases['afterAfterBody'] and pops nothing",
    "html5lib._utils.MethodDispatcher.__init__":
        "_InBody: a table of (name or tuple of names, handler) pairs, each name once",
    "html5lib._utils.MethodDispatcher.__getitem__":
        "_InBody: a name not in the table gets the table's default",
}

_START_TAG: Final = tokenTypes["StartTag"]
_END_TAG: Final = tokenTypes["EndTag"]
_PARSE_ERROR: Final = tokenTypes["ParseError"]


def elements(text: str, seconds: float) -> list[Element]:
    """Every start tag of the CRLF-canonical HTML ``text``, with the extent of the element an HTML5 parser makes of it.

    Parsing longer than ``seconds`` of processor time (:class:`~pdi._work_deadline.WorkDeadline`) is a
    :class:`~pdi.errors.LimitError`; an assertion html5lib trips on a rare input is an
    :class:`~pdi.errors.UnsupportedError`.
    """
    extents = _Extents(text, seconds)
    try:
        _Parser(extents).parse(text)
    except PDIError:
        raise
    except Exception as exc:  # html5lib's own assertions on rare inputs: a clear error, not a crash
        raise UnsupportedError(f"html5lib could not parse this HTML ({type(exc).__name__}: {exc})") from exc
    return extents.elements()


@dataclass(eq=False)
class _Extents:
    """What one parse of one text records: the tokenizer, the tree builder and its stack write here.

    Elements are told apart by ``id()``; every element entered in
    :attr:`ends` or :attr:`makers` is kept in :attr:`kept`, so that no id is
    reused while the parse lasts.
    """

    text: str
    seconds: float
    line_starts: array[int] = field(init=False)  # the offset of each line: after each CRLF (8 octets a line)
    tags: list[dict[str, Any]] = field(default_factory=list)  # the start tag tokens, in source order
    ends: dict[int, int] = field(default_factory=dict)  # id(element) -> where its source ends
    makers: dict[int, int] = field(default_factory=dict)  # id(element) -> number of the start tag that made it
    kept: list[Any] = field(default_factory=list)
    token: dict[str, Any] | None = None  # the token tree construction is processing; None at the end
    attributes: int = 0  # of the tags emitted so far

    def __post_init__(self) -> None:
        self.line_starts = array("q", itertools.chain((0,), (m.end() for m in re.finditer("\r\n", self.text))))

    def offset(self, position: tuple[int, int]) -> int:
        """The offset in the text of html5lib's (line, column): html5lib reads CRLF as one newline, and the text has only CRLF."""
        line, column = position
        return self.line_starts[line - 1] + column

    def made(self, token: dict[str, Any], element: Any) -> None:
        """``element`` was made for ``token``: the first element made for a start tag of the source is the one it opens."""
        number = token.get("_number")
        if number is not None and "_element" not in token:
            self.kept.append(element)
            token["_element"] = element
            self.makers[id(element)] = number

    def close(self, element: Any) -> None:
        """``element`` leaves the stack of open elements while :attr:`token` is processed: its source ends here.

        At the token's end if the element is that start tag's own (a void or
        self-closing element: the tag itself) or the token is its end tag;
        else where the token begins; at the end of the text once the tokens
        are out. An element closed before keeps its end (``head``, pushed back
        for a ``<link>`` after ``</head>``).
        """
        key = id(element)
        if key in self.ends:
            return
        self.kept.append(element)
        token = self.token
        if token is None:  # the end of the document
            self.ends[key] = len(self.text)
        elif key in self.makers and self.makers[key] == token.get("_number"):
            self.ends[key] = token["_end"]  # a void or self-closed element: the tag itself
        elif token.get("type") == _END_TAG and token.get("name") == element.name and "_end" in token:
            self.ends[key] = token["_end"]  # its own end tag
        else:
            self.ends[key] = token.get("_start", token.get("_end", len(self.text)))

    def close_open_at(self, token: dict[str, Any], open_elements: list[Any]) -> None:
        """An accepted ``</body>`` or ``</html>``: that element ends with the tag, what is open inside it where the tag begins.

        The parser keeps them open (see :meth:`_Tokenizer.__iter__`); their source ends here.
        """
        for depth, element in enumerate(open_elements):
            if element.name == token["name"] and id(element) not in self.ends:
                for inner in [element, *open_elements[depth + 1 :]]:
                    if id(inner) not in self.ends:
                        self.kept.append(inner)
                        self.ends[id(inner)] = token["_end" if inner is element else "_start"]
                return

    def elements(self) -> list[Element]:
        """The element table: one entry per start tag of the source, a tag that made no element spanning itself."""
        table = []
        for token in self.tags:
            element = token.get("_element")
            end = token["_end"] if element is None else self.ends.get(id(element), len(self.text))
            attributes = {str(k) if not isinstance(k, tuple) else k[1]: v for k, v in token["data"].items()}
            table.append(Element(token["_number"], token["name"], token["_start"], max(end, token["_end"]), attributes))
        return table


class _Tokenizer(_tokenizer.HTMLTokenizer):  # type: ignore[misc]  # html5lib has no types: its class is Any
    """html5lib's tokenizer, writing each tag's source offsets into its token (``_start``, ``_end``, ``_number``)."""

    def __init__(self, stream: Any, parser: _Parser, **kwargs: Any) -> None:
        super().__init__(stream, parser=parser, **kwargs)
        self.extents = parser.extents

    def tagOpenState(self) -> bool:
        """WHATWG "Tag open state" (#tag-open-state): "ASCII alpha: create a new start tag token".

        The data state read the ``<`` that led here ("U+003C LESS-THAN SIGN
        (<): switch to the tag open state", #data-state): the tag starts one
        code point back.
        """
        return self._opened(_tokenizer.HTMLTokenizer.tagOpenState, _START_TAG, 1)

    def closeTagOpenState(self) -> bool:
        """WHATWG "End tag open state" (#end-tag-open-state): "ASCII alpha: create a new end tag token".

        The ``</`` that led here (#tag-open-state: "U+002F SOLIDUS (/):
        switch to the end tag open state") is read: the tag starts two code
        points back.
        """
        return self._opened(_tokenizer.HTMLTokenizer.closeTagOpenState, _END_TAG, 2)

    def _opened(self, state: Callable[[Any], bool], kind: int, back: int) -> bool:
        at = self.extents.offset(self.stream.position()) - back
        before = self.currentToken
        result = state(self)
        token = self.currentToken
        if token is not before and isinstance(token, dict) and token.get("type") == kind:
            token["_start"] = at
        return result

    def attributeNameState(self) -> bool:
        """WHATWG "Attribute name state" (#attribute-name-state), for a tag of at most :data:`MAX_TAG_ATTRIBUTES` attributes.

        html5lib compares each attribute's name with every one before it in
        its tag (the duplicate-attribute check), so that a tag of many costs
        the square of their number: the tag's attributes are counted here
        first, before that check.
        """
        if len(self.currentToken["data"]) > MAX_TAG_ATTRIBUTES:
            raise crowded_tag(self.currentToken.get("_start", "?"))
        return bool(super().attributeNameState())

    def emitCurrentToken(self) -> None:
        """WHATWG Tokenization (#tokenization), "emit the current tag token": the tag ends at the ``>`` just read.

        A start tag is numbered in source order (the ``elt`` number). An end
        tag of RCDATA, RAWTEXT or script data (``</title>``, ``</style>``,
        ``</script>``), which the standard creates in "RCDATA end tag open
        state" (#rcdata-end-tag-open-state) and its RAWTEXT and script data
        peers, html5lib makes in the end tag name states
        (#rcdata-end-tag-name-state), once it is known to be "an appropriate
        end tag token", and never in :meth:`closeTagOpenState`: its ``</`` is
        the last one before its end. A
        ``<template>`` start tag is refused: in body, "A start tag whose tag
        name is 'template'" is processed by the "in head" rules
        (#parsing-main-inhead), which push "in template" (#parsing-main-intemplate),
        a mode html5lib 1.1 does not have.
        """
        token = self.currentToken
        if token.get("type") == _START_TAG and token.get("name", "").lower() == "template":
            raise UnsupportedError(
                "elt and name on HTML with <template> are not evaluated: html5lib 1.1, the parser"
                " used, predates the template element"
            )
        if token.get("type") in (_START_TAG, _END_TAG):
            extents = self.extents
            extents.attributes += len(token.get("data") or ())
            if extents.attributes > MAX_ATTRIBUTES:
                raise too_many_attributes("HTML")
            token["_end"] = end = extents.offset(self.stream.position())
            if "_start" not in token:  # an end tag of RCDATA, RAWTEXT or script data: </title>
                token["_start"] = extents.text.rfind("</" if token["type"] == _END_TAG else "<", 0, end)
            if token["type"] == _START_TAG:
                token["_number"] = len(extents.tags)
                extents.tags.append(token)
        super().emitCurrentToken()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Each token, as WHATWG Tree construction (#tree-construction) takes it "as each token is emitted from the tokenizer".

        The token is :attr:`_Extents.token` while the tree builder processes
        it, so that what it takes off the stack is closed by that token. A
        token of text, a comment or a doctype begins where the token before it
        ended ("in head", text that is not whitespace pops the head there).
        After it: in body, "An end tag whose tag name is 'body'" (#parsing-main-inbody)
        and in "after body", "An end tag whose tag name is 'html'"
        (#parsing-main-afterbody) only switch the insertion mode; body, html
        and what is open inside them stay on the stack until "stop parsing"
        (#stop-parsing) pops them all, so that later content still goes in.
        Their source ends at that tag (:meth:`_Extents.close_open_at`), if
        the tag was not ignored: the mode is then "after body" or "after
        after body" (#the-after-after-body-insertion-mode).
        """
        extents, parser = self.extents, self.parser
        deadline = WorkDeadline(extents.seconds)
        after_body = (parser.phases["afterBody"], parser.phases["afterAfterBody"])
        read = 0  # where the last token but a parse error ended: where the next one's source begins
        for count, token in enumerate(super().__iter__()):
            if count % 512 == 0 and deadline.passed():
                raise LimitError(
                    f"parsing this HTML took {deadline.words()}: too large or too deeply nested{OTHERWISE}"
                )
            kind = token["type"]
            if kind in (_START_TAG, _END_TAG):
                read = token["_end"]
            elif kind != _PARSE_ERROR:  # text, a comment, a doctype: its source runs from there to here
                token["_start"] = read
                read = extents.offset(self.stream.position())
            extents.token = token
            yield token
            if token["type"] == _END_TAG and token["name"] in ("body", "html") and parser.phase in after_body:
                extents.close_open_at(token, list(parser.tree.openElements))
        extents.token = None


class _OpenElements(list[Any]):
    """WHATWG "The stack of open elements" (#the-stack-of-open-elements), closing each element that leaves it.

    html5lib 1.1 takes an element off its list in three ways, each seen here:
    ``pop()`` ("pop the current node off the stack": the end tag steps of
    every insertion mode, "generate implied end tags"
    (#generate-implied-end-tags), "close a p element" (#close-a-p-element),
    the adoption agency algorithm (#adoption-agency-algorithm) without a
    furthest block), ``remove()`` (in body, "An end tag whose tag name is
    'form'" and a second "A start tag whose tag name is 'a'"; in "after
    head" (#the-after-head-insertion-mode), the head element pushed back for a
    ``<link>``, ``<meta>`` ... after ``</head>``; in the adoption
    agency algorithm, "remove node from the stack of open elements" in its
    inner loop and "remove formatting element from the stack of open
    elements"), and item assignment (the adoption agency algorithm's inner
    loop: "replace the entry for node in the stack of open elements with an
    entry for the new element"). ``append()`` and ``insert()`` only add.
    """

    def __init__(self, extents: _Extents) -> None:
        super().__init__()
        self.extents = extents

    def append(self, element: Any) -> None:
        """Push ``element``, at most :data:`MAX_DEPTH` deep: every start tag costs html5lib a walk down the stack."""
        if len(self) >= MAX_DEPTH:
            token = self.extents.token or {}
            raise too_deep("HTML", token.get("_start", len(self.extents.text)))
        super().append(element)

    def pop(self, index: SupportsIndex = -1) -> Any:
        element = super().pop(index)
        self.extents.close(element)
        return element

    def remove(self, element: Any) -> None:
        super().remove(element)
        self.extents.close(element)

    def __setitem__(self, index: Any, element: Any) -> None:
        for old in self[index] if isinstance(index, slice) else [self[index]]:
            self.extents.close(old)
        super().__setitem__(index, element)


_ETreeBuilder: Any = html5lib.getTreeBuilder("etree")


class _TreeBuilder(_ETreeBuilder):  # type: ignore[misc]  # html5lib has no types: its class is Any
    """html5lib's etree tree builder, noting which start tag made which element, on an :class:`_OpenElements` stack."""

    def __init__(self, extents: _Extents, namespaceHTMLElements: bool) -> None:
        self.extents = extents  # before the base __init__, which calls reset()
        super().__init__(namespaceHTMLElements)

    def reset(self) -> None:
        """The stack of open elements starts empty (#the-stack-of-open-elements: "Initially, the stack of open elements is empty")."""
        super().reset()
        self.openElements = _OpenElements(self.extents)

    def insertElementNormal(self, token: dict[str, Any]) -> Any:
        """WHATWG "Insert an HTML element" (#insert-an-html-element) and "insert a foreign element" (#insert-a-foreign-element).

        "Create an element for the token", insert it at the appropriate
        place, and "push it onto the stack of open elements so that it is the
        new current node": the element the start tag opens.
        """
        element = super().insertElementNormal(token)
        self.extents.made(token, element)
        return element

    def insertElementTable(self, token: dict[str, Any]) -> Any:
        """The same with foster parenting (#foster-parent), which html5lib switches on for "in table", "anything else".

        "Enable foster parenting, process the token using the rules for the
        'in body' insertion mode, and then disable foster parenting"
        (#parsing-main-intable): the element goes before the table, and is
        still the one its start tag opens. When the current node is no table
        element, html5lib makes it with :meth:`insertElementNormal` (noted
        there first).
        """
        element = super().insertElementTable(token)
        self.extents.made(token, element)
        return element

    def generateImpliedEndTags(self, exclude: str | None = None) -> None:
        """WHATWG "Generate implied end tags" (#generate-implied-end-tags), as today's HTML lists them.

        "While the current node is a dd element, a dt element, an li element,
        an optgroup element, an option element, a p element, an rb element,
        an rp element, an rt element, or an rtc element, the UA must pop the
        current node off the stack of open elements", except ``exclude``.
        html5lib 1.1's list lacks ``rb`` and ``rtc`` (added to the standard in
        2016): an open ``<rb>`` was left open by an ``<rt>`` or a ``</form>``.
        """
        while self.openElements and self.openElements[-1].name in _IMPLIED_END_TAGS - {exclude}:
            self.openElements.pop()

    def insertRoot(self, token: dict[str, Any]) -> None:
        """WHATWG "The 'before html' insertion mode" (#the-before-html-insertion-mode), "A start tag whose tag name is 'html'".

        The standard creates the root html element for that token. html5lib
        creates it for an implied ``<html>`` and has the "in body" rules merge
        the real one ("A start tag whose tag name is 'html'",
        #parsing-main-inbody: add its attributes to the top element), so the
        root is the real ``<html>`` tag's when that tag is the token being
        processed.
        """
        super().insertRoot(token)
        current = self.extents.token
        if current is not None and current.get("type") == _START_TAG and current.get("name") == "html":
            token = current
        self.extents.made(token, self.openElements[-1])


def _extended(table: Any, names: tuple[str, ...], handler: Any) -> Any:
    """html5lib's handler ``table`` (a ``MethodDispatcher``, name -> function) with ``names`` sent to ``handler``, same default."""
    extended = _utils.MethodDispatcher([*{**table, **dict.fromkeys(names, handler)}.items()])
    extended.default = table.default
    return extended


_InBodyPhase: Any = html5parser.getPhases(False)["inBody"]  # debug=False: what HTMLParser() uses
#: The elements "generate implied end tags" pops (#generate-implied-end-tags).
_IMPLIED_END_TAGS: Final = frozenset(("dd", "dt", "li", "optgroup", "option", "p", "rb", "rp", "rt", "rtc"))


#: WHATWG "special" category (#special), as Chromium 150 has it: html5lib 1.1's ``specialElements`` lacks main,
#: summary, figcaption, hgroup, source, track, keygen and MathML's and SVG's text and HTML integration points but
#: foreignObject, and has isindex, command and image, which today's HTML does not. ``search`` is left out as
#: html5lib and Chromium 150 leave it (checked: ``<dt>a<search>b<dt>`` closes the first dt in both).
_SPECIAL: Final = frozenset(
    {(namespaces["html"], name) for name in (
        "address", "applet", "area", "article", "aside", "base", "basefont", "bgsound", "blockquote", "body", "br",
        "button", "caption", "center", "col", "colgroup", "dd", "details", "dir", "div", "dl", "dt", "embed",
        "fieldset", "figcaption", "figure", "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6",
        "head", "header", "hgroup", "hr", "html", "iframe", "img", "input", "keygen", "li", "link", "listing", "main",
        "marquee", "menu", "meta", "nav", "noembed", "noframes", "noscript", "object", "ol", "p", "param", "plaintext",
        "pre", "script", "section", "select", "source", "style", "summary", "table", "tbody", "td",
        "template", "textarea", "tfoot", "th", "thead", "title", "tr", "track", "ul", "wbr", "xmp")}
    | {(namespaces["mathml"], name) for name in ("mi", "mo", "mn", "ms", "mtext", "annotation-xml")}
    | {(namespaces["svg"], name) for name in ("foreignObject", "desc", "title")}
)


def _modern_special(function: Any) -> Any:
    """html5lib's ``function`` (an "in body" step) with today's special category: the same code, reading
    ``specialElements`` from a copy of its module's globals that holds :data:`_SPECIAL`.

    The special category decides where "an end tag whose tag name is" any
    other name stops looking (#parsing-main-inbody: "Otherwise, if node is
    in the special category, then this is a parse error; ignore the
    token"), where ``<li>``, ``<dd>`` and ``<dt>`` stop closing ("If node is
    in the special category, but is not an address, div, or p element, then
    jump to the step labeled done"), and which element is the adoption agency
    algorithm's furthest block (#adoption-agency-algorithm): so ``</span>``
    after an open ``<main>`` inside the span closes nothing, as today.
    """
    return types.FunctionType(function.__code__, {**function.__globals__, "specialElements": _SPECIAL},
                              function.__name__, function.__defaults__, function.__closure__)


def _start_tag_ruby(phase: Any, token: dict[str, Any]) -> None:
    """WHATWG "in body", "A start tag whose tag name is one of: 'rb', 'rtc'" and "... 'rp', 'rt'".

    "If the stack of open elements has a ruby element in scope, then
    generate implied end tags" (for ``rp`` and ``rt``: "except for rtc
    elements"), then "Insert an HTML element for the token". html5lib 1.1
    has the rule for ``rp`` and ``rt`` without the exception, and none for
    ``rb`` and ``rtc``, which it inserts as any other element.
    """
    tree = phase.tree
    if tree.elementInScope("ruby"):
        tree.generateImpliedEndTags("rtc" if token["name"] in ("rp", "rt") else None)
    tree.insertElement(token)


class _InBody(_InBodyPhase):  # type: ignore[misc]  # html5lib has no types: its class is Any
    """WHATWG "The 'in body' insertion mode" (#parsing-main-inbody), as today's HTML parses ``<dialog>`` and ``<search>``.

    "A start tag whose tag name is one of: 'address', ..., 'dialog', ...,
    'search', ...": "If the stack of open elements has a p element in button
    scope, then close a p element. Insert an HTML element for the token"
    (html5lib's ``startTagCloseP``). "An end tag whose tag name is one of:
    'address', ..., 'search', ...": "generate implied end tags", then "pop
    elements from the stack of open elements until an HTML element with the
    same tag name as the token has been popped" (html5lib's ``endTagBlock``).
    html5lib 1.1 has neither ``dialog`` nor ``search`` in the first list, nor
    ``search`` in the second; the tables here add them.

    ``<rb>``, ``<rtc>``, ``<rp>`` and ``<rt>``: :func:`_start_tag_ruby`.

    ``<isindex>``, which html5lib 1.1 still turns into a form, a rule, a label
    and an input (closing an open ``<p>`` as a ``<form>`` does), left the
    standard in 2016: today it is "any other start tag" ("Reconstruct the
    active formatting elements, if any. Insert an HTML element for the
    token", html5lib's ``startTagOther``), an element like any unknown one, as
    Chromium makes it.
    """

    __slots__ = ()
    startTagHandler = _extended(
        _extended(vars(_InBodyPhase)["startTagHandler"], ("dialog", "search"), vars(_InBodyPhase)["startTagCloseP"]),
        ("isindex",), vars(_InBodyPhase)["startTagOther"],
    )
    startTagHandler = _extended(startTagHandler, ("rb", "rtc", "rp", "rt"), _start_tag_ruby)
    # the steps that ask the special category, with today's (_modern_special): in the tables and for self.
    startTagListItem = _modern_special(vars(_InBodyPhase)["startTagListItem"])
    endTagFormatting = _modern_special(vars(_InBodyPhase)["endTagFormatting"])
    endTagOther = _modern_special(vars(_InBodyPhase)["endTagOther"])
    startTagHandler = _extended(startTagHandler, ("li", "dd", "dt"), startTagListItem)
    endTagHandler = _extended(vars(_InBodyPhase)["endTagHandler"], ("search",), vars(_InBodyPhase)["endTagBlock"])
    endTagHandler = _extended(endTagHandler, tuple(
        name for name, handler in endTagHandler.items() if handler is vars(_InBodyPhase)["endTagFormatting"]
    ), endTagFormatting)
    endTagHandler.default = endTagOther


class _Parser(html5parser.HTMLParser):  # type: ignore[misc]  # html5lib has no types: its class is Any
    """html5lib's HTML parser with :class:`_Tokenizer`, :class:`_TreeBuilder` and :class:`_InBody`; scripting off, no namespaces."""

    def __init__(self, extents: _Extents) -> None:
        self.extents = extents
        super().__init__(tree=functools.partial(_TreeBuilder, extents), namespaceHTMLElements=False)
        self.phases["inBody"] = _InBody(self, self.tree)

    def _parse(
        self, stream: Any, innerHTML: bool = False, container: str = "div", scripting: bool = False, **kwargs: Any
    ) -> None:
        """html5lib's ``_parse`` with :class:`_Tokenizer`, which it names inside: rewritten, not extended.

        html5lib parses once more when a ``<meta>`` changes the encoding of a
        byte stream (WHATWG "changing the encoding while parsing",
        #changing-the-encoding-while-parsing); the text here is a ``str``
        already, so that retry is left out.
        """
        self.innerHTMLMode = innerHTML
        self.container = container
        self.scripting = scripting
        self.tokenizer = _Tokenizer(stream, parser=self, **kwargs)
        self.reset()
        self.mainLoop()
