"""The text of a document as a reader sees it, and where each of its characters stands in the document.

What text directives (WICG Text Fragments, :mod:`pdi.fragments.textdirective`)
and text quotes (W3C Web Annotation ``TextQuoteSelector`` and
``TextPositionSelector``, :mod:`pdi.interop.annotation`) are matched against.
A :class:`PageText` holds

* ``text``: the reader's text. For ``text/*`` (but HTML and XML) the
  CRLF-canonical text itself (PDI-GRAMMAR.md §3), so its positions *are*
  ``char`` positions. For HTML and XML, the rendered text of the page, read
  from its CRLF-canonical source: one line per block, white space inside a
  block collapsed to one space and dropped at the block's two ends (CSS
  ``white-space: normal``; kept inside ``pre``, ``listing``, ``xmp``,
  ``plaintext`` and ``textarea``, and where a style says ``white-space: pre``,
  ``pre-wrap`` or ``break-spaces``; only line breaks kept for ``pre-line``),
  a character reference read as its
  character (but in an ``xmp``, and after a ``plaintext`` start tag, where
  all the rest of the page is that element's text as written). What is text follows WICG Text Fragments §3.5.2 ("visible text
  node", "search invisible") as Chromium applies it, checked in Chromium
  page by page (tests/interop/test_textdirective_chromium.py):

  - not text: an element that is ``display: none`` (the ``head`` and all in
    it, ``script``, ``style``, ``template``, ``noscript`` (a browser runs
    scripts), ``noembed``, ``noframes``, ``datalist``, an element with a
    ``hidden`` attribute, or one a style hides, below) and all inside it;
    the content of ``iframe``, ``img``, ``meter``, ``progress``,
    ``object``, ``video``, ``audio``, ``canvas`` and a ``select`` without
    ``multiple`` or a ``size`` above 1 (a drop-down: search invisible, or replaced); text whose ``visibility``
    is ``hidden`` or ``collapse`` (inherited: a ``visible`` element inside
    shows), which still ends the collapsing of white space around it as
    laid-out text does (``a <span hidden-by-visibility>x</span> b`` reads
    ``a``, two spaces, ``b``);
  - text: ``hidden=until-found`` content and a closed ``details``' content
    (a browser reveals them to show a match); a ``textarea``'s text and a
    list box's options (``select multiple``, or ``size`` above 1), each a
    line read as one string (no word ends at a tag inside); the ``label`` of an
    ``optgroup``, and of an ``option`` in place of its text, each a line of
    its own (in a list box, and out of any ``select``); a ``button``'s label;
  - blocks: the elements the HTML standard's rendering section (§15.3)
    displays as block, list-item, table or one of its parts, or that a style
    makes block-level or ``inline-block`` (and ``inline-flex``, ``-grid``,
    ``-table``), and each child of a flex or grid container (blockified);
    an element a style makes ``inline`` is not a block. A
    ``<br>`` ends a line as a block does, and so does a box in the line
    (``img``, ``input``, ``button``, ``select``, ``textarea``, ``iframe``,
    ``object``, ``video``, ``audio``, ``canvas``, ``meter``, ``progress``):
    no text directive term runs across one (Chromium's reading: it reads an
    image as an object replacement character), though a suffix may follow
    it. A ``display: none`` element is no boundary: the text around it joins.
  - ruby: an ``rt``'s text runs on from its base's, in source order, a
    ZERO WIDTH SPACE (which stands for nothing in the source) between them
    (a word boundary no match needs to spell); an ``rp`` is not shown;
  - SVG and MathML: an ``svg`` and a ``math`` are boxes in the line; in an
    svg only its ``text`` elements' text is text, each a block (not in
    ``desc``, ``title``, ``defs`` and the others of :data:`SVG_UNRENDERED`);
    every MathML element is a block, and so is an HTML element in one; only
    the text of MathML token elements (``mi``, ``mo``, ``mn``, ``ms``,
    ``mtext``, which hold HTML) is text, not of a ``semantics``' or an
    ``maction``'s later children, an annotation or an ``mphantom``; an HTML
    start tag of the parser's breakout list (``b``, ``p``, ``span`` …) ends the
    svg or math around it (not in a token element).

  Styles are read as far as they can be without a CSS engine
  (:mod:`pdi.fragments.pagestyle`): ``style`` attributes, and the page's
  own ``<style>`` rules (for the screen) whose selectors are compounds of a
  type, ``#id`` and ``.class``, with the cascade's importance, specificity
  and order. Anything else a page's CSS does (a rule with another selector,
  inside ``@media``, from a linked or imported style sheet, a script) is not
  seen: such text counts as shown, where a browser may hide it or cut it
  apart.
* ``blocks``: where each block starts and ends in ``text``; a text directive
  term never matches across two of them (WICG Text Fragments §3.6.1, "find a
  string in range").
* a map from ``text`` to the document: :meth:`document_range` names a stretch
  of ``text`` as the ``char`` range of the CRLF-canonical document (or source)
  that holds it, as :class:`pdi.passages.fulltext.Passage` does for the full-text
  index (a character reference stands for the whole reference).

The reading of markup is the full-text index's (:mod:`pdi.passages.scan`, as
:class:`pdi.passages.fulltext.MarkupScanner` reads it:
tags with their quoted attribute values, comments, raw-text and RCDATA
elements; no scripts), extended with block boundaries, the elements open
(with the end tags HTML lets a page leave out: ``<p>`` before a block,
``<li>`` before ``<li>``, table cells and rows) and the styles above.

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from pdi._work_deadline import WorkDeadline
from pdi.errors import LimitError
from pdi.fragments.pagestyle import PageStyle, attribute_span, attributes, display_breaks
from pdi.passages import scan
from pdi.passages.fulltext import Passage

__all__ = ["EMAIL_READING", "LATEST_READING", "MAX_TEXT_CHARS", "READINGS", "PageText", "markup_page_text", "page_text",
           "plain_page_text"]

#: The longest document text read (characters): a text directive or a quote is matched in memory.
MAX_TEXT_CHARS: Final = 32 << 20
#: The longest reading a page's text may take (CPU seconds, about 1 MB a second: :mod:`pdi._work_deadline`, whose
#: backstop on the clock is ten times that).
MAX_SECONDS: Final = 30.0

#: Elements the HTML standard's rendering section (§15.3) displays as block, list-item, table
#: or one of its parts: a text directive term never runs across their start or end.
BLOCK: Final = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
    "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
    "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend",
    "li", "listing", "main", "menu", "nav", "ol", "optgroup", "p", "plaintext", "pre", "search",
    "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul", "xmp",
})
#: Elements whose content is never rendered text (WICG Text Fragments "search invisible", the
#: ``head``'s ``title``, and the raw-text elements of WHATWG HTML §13.2.5).
SKIPPED: Final = frozenset({
    "title", "script", "style", "noscript", "noembed", "noframes", "iframe", "template",
    "datalist", "audio", "video", "object", "canvas", "head", "meter", "progress", "img",
})
#: Elements in which white space is kept as written (CSS ``white-space: pre``).
PREFORMATTED: Final = frozenset({"pre", "listing", "xmp", "plaintext"})
#: Void elements: they have no end tag, so they never hold what follows.
VOID: Final = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
})
#: Elements laid out as one box in a line (replaced elements and form controls): Chromium matches no term
#: across one (it reads an image as an object replacement character), though a suffix may follow it.
ATOMIC: Final = frozenset({
    "img", "input", "iframe", "embed", "object", "video", "audio", "canvas", "select", "textarea", "button",
    "meter", "progress",
})
#: Elements a start tag of which ends an open ``p`` (WHATWG HTML §13.2.6.4.7, "close a p element").
P_CLOSERS: Final = BLOCK - {"body", "html", "caption", "td", "th", "tr", "tbody", "thead", "tfoot", "optgroup",
                            "legend", "frameset"}
#: Elements a start tag of which ends these open ones (their end tags may be left out: WHATWG HTML §13.1.2.4).
_ENDS: Final = {
    "li": frozenset({"li"}), "dt": frozenset({"dt", "dd"}), "dd": frozenset({"dt", "dd"}),
    "option": frozenset({"option"}), "optgroup": frozenset({"option", "optgroup"}),
    "tr": frozenset({"tr", "td", "th"}), "td": frozenset({"td", "th"}), "th": frozenset({"td", "th"}),
    "thead": frozenset({"tr", "td", "th", "thead", "tbody", "tfoot"}),
    "tbody": frozenset({"tr", "td", "th", "thead", "tbody", "tfoot"}),
    "tfoot": frozenset({"tr", "td", "th", "thead", "tbody", "tfoot"}),
}
#: The parts of a table: their tags outside a table are ignored (WHATWG HTML §13.2.6.4.7, "in body": a parse error).
_TABLE_PARTS: Final = frozenset({"caption", "col", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr"})
#: SVG elements whose content is never rendered (SVG 2 §5.3, §5.5, and the paint servers, clipping paths, masks,
#: markers and filters, drawn only where referred to): Chromium matches no text in them (tested).
SVG_UNRENDERED: Final = frozenset({
    "desc", "title", "metadata", "defs", "symbol", "clippath", "mask", "pattern", "marker", "lineargradient",
    "radialgradient", "filter", "script", "style",
})
#: MathML elements not rendered: a ``semantics``' annotations (MathML Core §3.1.2.1, only its first child shows).
MATH_UNRENDERED: Final = frozenset({"annotation", "annotation-xml"})
#: MathML token elements: the only MathML elements whose text is rendered, and text integration points, where the
#: tags are HTML's (WHATWG HTML §13.2.6.5; MathML Core §3.2). Text in another MathML element is not shown.
MATH_TOKENS: Final = frozenset({"mi", "mo", "mn", "ms", "mtext"})
#: MathML elements that show only their first child (MathML Core §3.1.2.1, §3.7.1: ``semantics``, ``maction``).
MATH_FIRST_CHILD: Final = frozenset({"semantics", "maction"})
#: HTML start tags that end SVG and MathML content (WHATWG HTML §13.2.6.5, "any other start tag" breakout list; a
#: ``font`` with ``color``, ``face`` or ``size`` too): the foreign elements open are closed and the tag is HTML's.
FOREIGN_BREAKOUT: Final = frozenset({
    "b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em", "embed", "h1", "h2",
    "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing", "menu", "meta", "nobr", "ol", "p", "pre",
    "ruby", "s", "small", "span", "strong", "strike", "sub", "sup", "table", "tt", "u", "ul", "var",
})
_NO_ATTRIBUTES: Final[Mapping[str, str]] = {}
#: ``display`` values whose element lays its children out as blocks (flex and grid items are blockified).
_LAYS_OUT_ITEMS: Final = frozenset({
    "flex", "grid", "inline-flex", "inline-grid", "block flex", "block grid", "inline flex", "inline grid",
})
_TELLING: Final = re.compile(r"style|hidden|multiple|size|label|color|face", re.IGNORECASE)
_DIGITS: Final = re.compile(r"[ \t\n\f\r]*\+?([0-9]+)")
_COLLAPSING: Final = re.compile(r"[ \t\n\r\f]{2,}|[\t\n\r\f]")
_WHITE: Final = " \t\n\r\f"
#: ``white-space`` values that keep every white space character (CSS Text 3 §3).
_KEEPS: Final = frozenset({"pre", "pre-wrap", "break-spaces"})


@dataclass(frozen=True)
class PageText:
    """The reader's text of a document, its blocks, and where its characters stand (see the module docstring).

    ``kind`` is ``"text"``, ``"html"`` or ``"xml"``; ``length`` the length
    of the document's CRLF-canonical text (or source), which positions of
    :meth:`document_range` never pass.
    """

    kind: str
    text: str
    blocks: tuple[tuple[int, int], ...]
    map: Passage
    length: int
    #: Where in :attr:`text` one text node runs on across markup an HTML parser ignores (``a<td>b`` outside a table):
    #: no text node starts there, though the source holds a tag.
    glued: frozenset[int] = frozenset()

    def document_range(self, start: int, end: int) -> tuple[int, int]:
        """Where ``text[start:end]`` stands in the document, as ``char`` positions (``start == end``: a point)."""
        if not self.text:
            return 0, 0
        if start >= end:
            at = self.map.document_range(min(start, len(self.text) - 1), min(start, len(self.text) - 1) + 1)
            point = at[0] if start < len(self.text) else at[1]
            return point, point
        return self.map.document_range(start, end)

    def text_range(self, start: int, end: int) -> tuple[int, int]:
        """The stretch of :attr:`text` whose characters stand inside document positions ``[start, end)``.

        The inverse of :meth:`document_range` on what the text holds: markup
        in the range is left out, a character reference counts if it lies
        wholly inside.
        """
        first: int | None = None
        last = 0
        runs = self.map.runs
        for k, (t, s, e) in enumerate(runs):
            t1 = runs[k + 1][0] if k + 1 < len(runs) else len(self.text)
            if t1 == t:
                continue
            if t1 - t == e - s:  # one for one
                a = max(start, s)
                b = min(end, e)
                if a < b:
                    first = t + (a - s) if first is None else first
                    last = t + (b - s)
            elif s >= start and e <= end and e > s:
                first = t if first is None else first
                last = t1
        if first is None:
            point = self._text_point(start)
            return point, point
        return first, last

    def _text_point(self, position: int) -> int:
        for k, (t, s, e) in enumerate(self.map.runs):
            if s >= position:
                return t
            t1 = self.map.runs[k + 1][0] if k + 1 < len(self.map.runs) else len(self.text)
            if position < e and t1 - t == e - s:
                return t + (position - s)
        return len(self.text)


class _Builder:
    """Collects the page text: pieces of text with the document range each stands for, cut into blocks."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.runs: list[tuple[int, int, int]] = []
        self.blocks: list[tuple[int, int]] = []
        self.block_start: int | None = None  # where the open block began in the text
        self.pending: tuple[int, int] | None = None  # collapsed white space waiting for the next word
        self.line_start = False  # just after a line break kept in white-space: pre-line (spaces there are removed)
        self.word_break = False  # a word ends here though the text runs on (a ruby annotation's ends)
        self.glued = False  # markup an HTML parser ignores was just read: the next text runs on in the same text node
        self.glue: list[int] = []  # where in the text that happened (PageText.glued)

    def _append(self, text: str, start: int, end: int) -> None:
        if self.glued:
            self.glue.append(self.length)
            self.glued = False
        linear = len(text) == end - start
        if self.runs and linear:
            t, s, e = self.runs[-1]
            if e == start and self.length - t == e - s:
                self.runs[-1] = (t, s, end)
                self.parts.append(text)
                self.length += len(text)
                return
        self.runs.append((self.length, start, end))
        self.parts.append(text)
        self.length += len(text)

    def word(self, text: str, start: int, end: int) -> None:
        """Text without white space at ``[start, end)`` of the document."""
        if self.block_start is None:
            if self.blocks:
                self._append("\n", start, start)  # the line between two blocks stands for nothing
            self.block_start = self.length
        elif self.pending is not None:
            self._append(" ", *self.pending)
        elif self.word_break:
            self._append("\u200b", start, start)  # ignored in matching, yet a word boundary; it stands for nothing
        self.pending = None
        self.line_start = False
        self.word_break = False
        self._append(text, start, end)

    def invisible(self) -> None:
        """Text that is laid out but not shown (``visibility: hidden``): it ends the collapsing of white space.

        A browser collapses white space on the line as laid out, hidden text
        included, and then leaves the hidden text out: ``a <span
        style="visibility:hidden">x</span> b`` shows ``a``, two spaces and
        ``b`` (Chromium matches no ``a b`` there), ``a <span …>x</span>b``
        one space.
        """
        if self.block_start is not None and self.pending is not None:
            self._append(" ", *self.pending)
        self.pending = None

    def space(self, start: int, end: int) -> None:
        """White space at ``[start, end)``: one space before the next word of the block, if any."""
        if self.block_start is not None and self.pending is None and not self.line_start:
            self.pending = (start, end)

    def kept(self, text: str, start: int, end: int) -> None:
        """Preformatted text: every character kept (a CRLF pair read as one line break, as a parser reads it)."""
        if self.block_start is None:
            if self.blocks:
                self._append("\n", start, start)
            self.block_start = self.length
        self.pending = None
        self.line_start = False
        if len(text) != end - start:  # a character reference: its character stands for the whole reference
            self._append(text, start, end)
            return
        at = 0
        while at < len(text):
            cr = text.find("\r\n", at)
            if cr < 0:
                self._append(text[at:], start + at, start + len(text))
                break
            if cr > at:
                self._append(text[at:cr], start + at, start + cr)
            self._append("\n", start + cr, start + cr + 2)
            at = cr + 2

    def line_break(self, start: int, end: int) -> None:
        """A line break kept where other white space collapses (``white-space: pre-line``): the white space
        around it is removed (CSS Text 3 §4.1.1)."""
        self.kept("\n", start, end)
        self.line_start = True

    def boundary(self) -> None:
        """A block starts or ends here."""
        if self.block_start is not None:
            self.blocks.append((self.block_start, self.length))
        self.block_start = None
        self.pending = None
        self.line_start = False
        self.word_break = False

    def finish(self, kind: str, length: int) -> PageText:
        self.boundary()
        text = "".join(self.parts)
        if not self.runs:
            self.runs.append((0, 0, 0))
        return PageText(kind, text, tuple(self.blocks), Passage(0, text, tuple(self.runs)), length,
                        frozenset(self.glue))


def plain_page_text(text: str) -> PageText:
    """The page text of a plain text (CRLF-canonical): the text itself, one block (a browser shows it in one ``pre``)."""
    _check_size(text)
    return PageText("text", text, ((0, len(text)),), Passage(0, text, ((0, 0, len(text)),)), len(text))


#: The readings of a page into its text, each kept as it was made. A text directive is matched in the latest,
#: as a browser reads the page today (what it finds is named by its ``char`` range of the source, which no
#: reading moves). An HTML e-mail's body text is a page text that ``#char=`` and ``#line=`` count in
#: (``docs/email.md``, :func:`pdi.fragments.email_text.body_text`): it is read in :data:`EMAIL_READING` for ever, so that
#: a citation of its passage still lands on that passage. Reading 1 is the reading of 2026-11-27 (before
#: session 24); reading 2 keeps a ``&nbsp;`` as a NO-BREAK SPACE (1 collapsed it as white space), makes no box
#: of ``<input type=hidden>`` (1 ended the line there), blockifies the children of a flex or grid container,
#: shows the options of a ``select`` whose ``size`` is above 1, keeps white space as a ``white-space``
#: style says (``pre``, ``pre-wrap``, ``break-spaces``, ``pre-line``), reads SVG and MathML as laid out, and
#: parts a ruby annotation's words from its base's (a ZERO WIDTH SPACE that stands for nothing) and hides ``rp``.
#: Reading 3 (session 49) reads a numeric character reference to a control or a noncharacter (``&#1;``, ``&#x7f;``,
#: ``&#xFFFE;``) as that character, as an HTML parser does (1 and 2 read nothing there, as :func:`html.unescape`
#: does), ends a hidden element at the end tag of an element around it (``<option hidden>x</select>``: 1 and 2
#: read no more text until an ``</option>``), reads no text in an ``option`` with a ``label`` (it shows the label),
#: ignores the tags of a table's parts outside a table (``<td hidden>`` in a ``div``: 1 and 2 hid what it held), and
#: a NUL in a ``textarea``'s or an ``xmp``'s text or in SVG as U+FFFD (1 and 2 ignored it, as an HTML
#: element's text drops it). It reads the rest of a page after an HTML ``<plaintext>`` as that element's text, as
#: written (the tokenizer's PLAINTEXT state: 1 and 2 read tags and character references there), and an ``xmp``'s
#: text with no character references (RAWTEXT: 1 and 2 read ``&amp;`` there as ``&``).
#: It shows the ``label`` of an ``optgroup`` and of an ``option`` as a line of its own, reads a list box's option
#: as one string (no word ends at a tag in it), and makes an ``option`` out of a ``select`` a line of its own (1 and
#: 2 read no labels, and read an option out of a select inline).
#: In MathML it reads only token elements' text, a ``semantics``' and an ``maction``'s first child only and no
#: ``mphantom``, each HTML element in a token element a block, and it ends the SVG or MathML around an HTML breakout
#: start tag (1 and 2 read all text in MathML, and such a tag as SVG's or MathML's).
#: Reading 4 (session 51) reads an element in a list box's option (a ``pre``, a ``div``, an ``xmp``, a
#: ``plaintext``) as no block and keeps no white space in it: the option is one string, collapsed, as Chromium 150's
#: ``innerText`` gives it (3 made each such element a line of its own, a ``pre``'s white space kept).
#: A change that moves the text of some page makes a new reading.
READINGS: Final = (1, 2, 3, 4)
#: The reading a text directive is matched in.
LATEST_READING: Final = READINGS[-1]
#: The reading of an HTML e-mail's body text (its passages' positions count in it).
EMAIL_READING: Final = 1


def markup_page_text(source: str, kind: str, *, seconds: float = MAX_SECONDS,
                     reading: int = LATEST_READING) -> PageText:
    """The page text of an HTML (``kind="html"``) or XML (``"xml"``) document's whole CRLF-canonical source, in
    ``reading`` (:data:`READINGS`).

    Reading it may take at most ``seconds`` of processor time (a :class:`~pdi.errors.LimitError` after).
    """
    if reading not in READINGS:
        raise ValueError(f"no page-text reading {reading}: {READINGS}")
    _check_size(source)
    return _PageReader(source, kind, seconds, reading).read()


class _PageReader:
    """One reading of a page's source into its text (:func:`markup_page_text`): what the tags read so far leave open."""

    def __init__(self, source: str, kind: str, seconds: float, reading: int = LATEST_READING) -> None:
        self.source = source
        self.kind = kind
        self.reading = reading
        self.seconds = seconds
        self.deadline = WorkDeadline(seconds)
        self.builder = _Builder()
        self.is_html = kind == "html"
        self.skipping: list[str] = []  # the open elements whose content is not text (innermost last)
        self.style = PageStyle.of_html(source, self.deadline) if self.is_html else PageStyle([])
        self.open_elements: list[_Open] = [_Open("#root", False, True)]  # the shown elements open (innermost last)
        self.pre = 0  # how many preformatted elements are open
        self.raw_pre = False  # in an xmp's or a textarea's text (kept as written)
        self.after_pre = False  # just after <pre>: a first line break is not text (WHATWG 13.2.6.4.7)
        self.literal = False  # in a plaintext's text: no character references (PLAINTEXT state), NUL is U+FFFD
        self.past_first: set[int] = set()  # the ids of the open semantics and maction elements whose first child began

    def read(self) -> PageText:
        """Read the whole source: text, comments, CDATA sections, declarations and tags in turn."""
        source, n, is_html = self.source, len(self.source), self.is_html
        steps = 0
        i = 0
        while i < n:
            steps += 1
            if not steps % 256 and self.deadline.passed():  # an element may cost MAX_RULES rule checks
                raise LimitError(f"reading the text of a page of {n} characters took {self.deadline.words()}",
                                 details={"seconds": self.seconds})  # a bound of time: a quiet machine may keep it
            lt = source.find("<", i)
            if lt < 0:
                self._text(i, n)
                break
            self._text(i, lt)
            if source.startswith("<!--", lt):
                end = source.find("-->", lt + 4)
                i = n if end < 0 else end + 3
            elif source.startswith("<![CDATA[", lt) and not is_html:
                end = source.find("]]>", lt + 9)
                end = n if end < 0 else end
                self._text(lt + 9, end)
                i = min(n, end + 3)
            elif scan.TAG_OPEN.match(source, lt):
                i = self._tag(lt)
            elif source.startswith(("<!", "<?"), lt):
                end = source.find(">", lt + 2)
                i = n if end < 0 else end + 1
            else:  # a "<" that opens nothing is text
                self._text(lt, lt + 1)
                i = lt + 1
        return self.builder.finish(self.kind, n)

    def _spaced(self, content: str, at: int) -> None:
        """Text whose only white space is single spaces, at ``at`` of the source."""
        if not content:
            return
        builder = self.builder
        lead = content[0] == " "
        trail = len(content) > lead and content[-1] == " "
        if lead:
            builder.space(at, at + 1)
        core = content[lead : len(content) - trail]
        if core:
            builder.word(core, at + lead, at + lead + len(core))
        if trail:
            builder.space(at + len(content) - 1, at + len(content))

    def _text(self, a: int, b: int) -> None:
        """The text ``[a, b)`` of the source, as the elements open show it."""
        source, builder = self.source, self.builder
        inner = self.open_elements[-1]
        if a >= b or self.skipping or inner.foreign == "svg":  # SVG renders only its text elements
            return
        if inner.foreign == "math" and self.reading >= 3 and inner.name not in MATH_TOKENS:
            return  # MathML renders only its token elements' text (Chromium 150 finds no <mrow>text</mrow>)
        if not self.open_elements[-1].visible:
            if source[a:b].strip(_WHITE):
                builder.invisible()
            return
        if self.after_pre:
            self.after_pre = False
            if source.startswith("\r\n", a):
                a += 2
        if a >= b:
            return
        white_space = self.open_elements[-1].white_space if self.reading >= 2 and not self.raw_pre else None
        # a NUL is dropped from the text of an HTML element (as pdi's folding ignores it), but in RCDATA and RAWTEXT
        # (a textarea's, an xmp's text) and in SVG it is U+FFFD (WHATWG HTML §13.2.5.2, §13.2.5.3, §13.2.6.5)
        replaced = self.reading >= 3 and (self.raw_pre or self.literal or self.open_elements[-1].foreign == "svgtext")
        pieces = [(source[a:b], a, b)] if self.literal else scan.decoded_pieces(source, a, b)
        for piece, s, e in pieces:
            if not piece and e > s and self.reading >= 3:
                piece = _numeric_reference(source[s:e])
            if not piece:
                continue
            if replaced and len(piece) == e - s:
                piece = piece.replace("\x00", "\ufffd")
            if white_space in _KEEPS or (white_space is None and self.pre):
                builder.kept(piece, s, e)
            elif white_space == "pre-line" and len(piece) == e - s and "\r\n" in piece:
                at = 0
                while (cr := piece.find("\r\n", at)) >= 0:
                    self._collapsed(piece[at:cr], s + at)
                    builder.line_break(s + cr, s + cr + 2)
                    at = cr + 2
                self._collapsed(piece[at:], s + at)
            elif len(piece) != e - s:  # a character reference
                # what CSS collapses (not U+00A0 of &nbsp;, which str.isspace counts; reading 1 collapsed it)
                if (not piece.strip(_WHITE)) if self.reading >= 2 else piece.isspace():
                    builder.space(s, e)
                else:
                    builder.word(piece, s, e)
            else:
                self._collapsed(piece, s)

    def _collapsed(self, piece: str, s: int) -> None:
        """Text ``piece`` (no character reference) at ``s`` of the source, its white space collapsed."""
        # only runs that collapse are cut out: a lone space between words stays one for one
        last = 0
        for m in _COLLAPSING.finditer(piece):
            self._spaced(piece[last : m.start()], s + last)
            self.builder.space(s + m.start(), s + m.end())
            last = m.end()
        self._spaced(piece[last:], s + last)

    def _tag(self, lt: int) -> int:
        """The tag at ``lt`` (``<`` and a letter, or ``</`` and one) read; where reading goes on."""
        source, builder, skipping = self.source, self.builder, self.skipping
        closing = source[lt + 1] == "/"
        name_match = scan.TAG_NAME.match(source, lt + (2 if closing else 1))
        assert name_match is not None
        end = scan.tag_end(source, name_match.end())
        end = len(source) if end < 0 else end
        name = name_match.group().lower() if self.is_html else name_match.group()
        if self.is_html and not closing and (name in scan.RAW_TEXT or name in scan.RCDATA):
            return self._raw_text(name, name_match.end(), end)
        if not self.is_html:
            return end
        if skipping:
            if not closing and ((skipping[0] == "p" and name in P_CLOSERS) or skipping[0] in _ENDS.get(name, ())):
                skipping.clear()  # the hidden element ends here, its end tag left out (<p hidden>…<p>)
            elif closing and self.reading >= 3 and name not in skipping \
                    and any(e.name == name for e in self.open_elements[1:]):
                skipping.clear()  # the end tag of an element around it ends it too (<option hidden>…</select>)
            else:
                if name == "plaintext" and not closing and self._plaintext_here():
                    return len(source)  # the rest of the page is a hidden element's text
                if name == skipping[-1]:
                    if closing:
                        skipping.pop()
                    elif name not in VOID and source[end - 2 : end] != "/>":
                        skipping.append(name)
                return end
        if name in _TABLE_PARTS and self.reading >= 3 and not any(e.name == "table" for e in self.open_elements):
            builder.glued = True  # the text around it is one text node: no word ends there
            return end  # a table's part outside any table is no element: an HTML parser ignores its tags
        # an HTML plaintext start tag: the tokenizer's PLAINTEXT state, the rest of the page its text (WHATWG HTML
        # §13.2.5.5; reading 3 on, 1 and 2 read tags and references after it)
        plaintext = name == "plaintext" and not closing and self.reading >= 3 and self._plaintext_here()
        if name == "rt" and self.reading >= 2:
            builder.word_break = True  # a ruby annotation: its text joins the base's, each its own words (Chromium)
        in_option = self.reading >= 4 and self._in_list_box_option()
        if closing:
            closed = _close(self.open_elements, name)
            if (closed or (closed is None and name in BLOCK)) and not (
                    in_option and name not in ("option", "optgroup", "select")):
                builder.boundary()
        elif self._start_tag(name, name_match.end(), end):
            return len(source) if plaintext else end
        if plaintext:
            if in_option:
                builder.glued = True  # the option's one string runs on into the plaintext's text (Chromium 150)
            return self._plaintext(end)
        if name in PREFORMATTED:
            if closing:
                self.pre = max(0, self.pre - 1)
            else:
                self.pre += 1
                self.after_pre = True
        elif name == "br" and not closing:
            builder.boundary()  # Chromium matches no term across a line break (tested)
        if self.reading >= 3 and name not in ("option", "optgroup", "select") and self._in_list_box_option():
            builder.glued = True  # a list box shows an option's text as one string: no word ends at a tag in it
        return end

    def _in_list_box_option(self) -> bool:
        """Whether the innermost element open is in an ``option`` of a list box (Chromium 150 finds
        ``mixamixb`` and no ``mixa`` in ``<select size=3><option>mixa<b>mixb</b>``)."""
        names = [e.name for e in self.open_elements]
        return "option" in names and "select" in names

    def _start_tag(self, name: str, attributes_at: int, end: int) -> bool:
        """An HTML start tag (its attributes from ``attributes_at``, its end at ``end``) read; True if what it holds is not text."""
        builder, open_elements = self.builder, self.open_elements
        if _implied_ends(open_elements, name):
            builder.boundary()
        rest = self.source[attributes_at : end - 1]
        attrs: Mapping[str, str]
        if not rest or (self.style.empty and not _TELLING.search(rest)):
            attrs = _NO_ATTRIBUTES  # nothing an attribute could say: no rules, and no style, hidden or multiple
        else:
            attrs = attributes(rest)
        declared = self.style.declared(name, attrs)
        # the HTML rendering section's input[type=hidden i] { display: none !important }: no box, the text around
        # it joins (Chromium, tested; an <img hidden> still parts its text there, in Chromium too)
        hidden_input = (self.reading >= 2 and name == "input"
                        and attrs.get("type", "").strip().lower() == "hidden")
        none = hidden_input or _display_none(attrs, declared.display)
        if declared.display is not None:
            block = not none and display_breaks(declared.display)
        else:
            block = (name in BLOCK or name in ATOMIC) and not hidden_input
            if name == "option" and (self.reading >= 3 or (self.reading >= 2
                                                             and open_elements[-1].name in ("select", "optgroup"))):
                block = True  # each option is a line of its own, in a list box or out of a select (Chromium, tested)
        if open_elements[-1].items_are_blocks and declared.display != "contents":
            block = not none  # a flex or grid item is blockified (CSS Display 3 §2.7; Chromium, tested)
        # in a list box's option, an element is no block and keeps no white space: the option shows its text as one
        # string, collapsed (Chromium 150's innerText: "onea b" of <select size=3><option>one<pre>a\n b</pre>, and
        # of <option>one<plaintext>a\n b; WHATWG HTML §4.10.10, an option's text strips and collapses white space)
        in_option = self.reading >= 4 and name not in ("option", "optgroup", "select") and self._in_list_box_option()
        if in_option:
            block = False
        if self.reading >= 3:
            if self._breaks_out(name, attrs):
                builder.boundary()  # the svg or math ends here (a box of its own)
            parent = open_elements[-1]
            if parent.foreign == "math" and parent.name in MATH_FIRST_CHILD:
                if id(parent) in self.past_first:  # a later child of a semantics or an maction is not shown
                    self.skipping.append(name)
                    return True
                self.past_first.add(id(parent))
        foreign, unrendered = self._foreign(name)
        void = name in VOID or (bool(foreign) and self.source[end - 2 : end] == "/>")  # self-closing in SVG, MathML
        if foreign and (name in ("svg", "math", "text", "foreignobject") or foreign == "math"):
            block = True  # a box of its own in the line, each svg text and every MathML box (Chromium, tested)
        if self.reading >= 3 and open_elements[-1].foreign == "math":
            block = True  # an HTML element in a MathML token element is blockified (Chromium 150: no "a b" in
            # <mtext><b>a</b> b</mtext>)
        if not none and name in ATOMIC:
            builder.boundary()  # a box in the line: no term runs across it (Chromium, tested)
        if unrendered and not void:
            self.skipping.append(name)
            return True
        # rp: the parentheses a browser without ruby shows (the HTML rendering section, §15.3.4: display none)
        none = none or (name == "rp" and self.reading >= 2 and declared.display is None)
        if not none and name in ("option", "optgroup") and self.reading >= 3 and attrs.get("label"):
            # an optgroup's label shows, and an option's label in place of its content, each a line of its own (in
            # a list box, WHATWG HTML §15.5.15; Chromium 150 shows them out of a select too): the attribute's text
            span = attribute_span(rest, "label")
            assert span is not None
            builder.boundary()
            self._text(attributes_at + span[0], attributes_at + span[1])
            builder.boundary()
        # an option with a label shows the label, not its content (WHATWG HTML §4.10.10; Chromium 150 finds no text in
        # <option label=k>text</option>, in a list box or out of one)
        none = none or (name == "option" and self.reading >= 3 and bool(attrs.get("label")))
        if not void and (none or name in SKIPPED or (name == "select" and not self._list_box(attrs))):
            self.skipping.append(name)  # not laid out (display: none, the head …), or shows no text of its own
            return True
        if block:
            builder.boundary()
        if not void:
            parent = open_elements[-1]
            visible = parent.visible if declared.visibility is None else declared.visibility == "visible"
            # white-space is inherited; pre, listing and plaintext are pre (the HTML rendering section, §15.3.3)
            white_space = declared.white_space or ("pre" if name in PREFORMATTED else parent.white_space)
            if in_option:
                white_space = parent.white_space
            if foreign == "math" and name == "mphantom" and self.reading >= 3 and declared.visibility is None:
                visible = False  # MathML Core's mphantom { visibility: hidden } (Chromium 150 finds none of its text)
            opened = _Open(name, block, visible, self.reading >= 2 and declared.display in _LAYS_OUT_ITEMS, white_space,
                           foreign)
            self.past_first.discard(id(opened))  # an id a closed element had
            open_elements.append(opened)
        return False

    def _plaintext_here(self) -> bool:
        """Whether a ``plaintext`` start tag here is HTML's (it starts PLAINTEXT): outside SVG and MathML, or in a
        MathML text integration point (``mi``, ``mo``, ``mn``, ``ms``, ``mtext``: WHATWG HTML §13.2.6.5), or in
        a skipped svg ``desc`` or ``title`` (HTML integration points); in reading 3 on."""
        if self.reading < 3:
            return False
        inner = self.open_elements[-1]
        if self.skipping and inner.foreign in ("svg", "svgtext"):
            return self.skipping[0] in ("desc", "title")
        return not inner.foreign or (inner.foreign == "math" and inner.name in MATH_TOKENS)

    def _plaintext(self, end: int) -> int:
        """The text after a ``plaintext`` start tag (ending at ``end``): all the rest of the source, as written
        (no tags, no character references; a NUL is U+FFFD, a first line break is text); where reading goes on."""
        self.pre += 1
        self.after_pre = False
        self.literal = True
        self._text(end, len(self.source))
        return len(self.source)

    def _breaks_out(self, name: str, attrs: Mapping[str, str]) -> bool:
        """Whether the HTML start tag ``name`` ends the SVG or MathML open around it (not in a MathML token
        element, where tags are HTML's: WHATWG HTML §13.2.6.5): the foreign elements are closed; whether any was."""
        open_elements = self.open_elements
        inner = open_elements[-1]
        if not inner.foreign or (inner.foreign == "math" and inner.name in MATH_TOKENS):
            return False
        if name not in FOREIGN_BREAKOUT and not (name == "font" and ({"color", "face", "size"} & attrs.keys())):
            return False
        while open_elements[-1].foreign:
            open_elements.pop()
        return True

    def _foreign(self, name: str) -> tuple[str, bool]:
        """What an element ``name`` starting here is in (from reading 2 on): ``"svg"`` (SVG, where only a ``text``
        element's text is rendered), ``"svgtext"``, ``"math"`` or ``""`` (HTML); and whether it is not rendered."""
        outer = self.open_elements[-1].foreign
        if self.reading < 2:
            return "", False
        if not outer:
            return {"svg": "svg", "math": "math"}.get(name, ""), False
        if outer == "math":
            if self.reading >= 3 and self.open_elements[-1].name in MATH_TOKENS and name not in ("mglyph", "malignmark"):
                return "", False  # a token element is a text integration point: its tags are HTML's
            return "math", name in MATH_UNRENDERED
        if name == "foreignobject":
            return "", False  # HTML again
        return ("svgtext" if name == "text" or outer == "svgtext" else "svg"), name in SVG_UNRENDERED

    def _list_box(self, attrs: Mapping[str, str]) -> bool:
        """Whether a ``select`` shows as a list box, its options text: ``multiple``, or (from reading 2 on) a
        ``size`` above 1 (WHATWG HTML §4.10.7, its display size; Chromium matches such options, tested)."""
        if "multiple" in attrs:
            return True
        size = _DIGITS.match(attrs.get("size", ""))  # the rules for parsing non-negative integers (§2.3.4.1)
        digits = size.group(1).lstrip("0") if size is not None else ""  # compared as written: no int of a million digits
        return self.reading >= 2 and (len(digits) > 1 or digits > "1")

    def _raw_text(self, name: str, attributes_at: int, end: int) -> int:
        """A raw-text or RCDATA element's start tag read (nothing inside is a tag); where its content ends."""
        source, builder = self.source, self.builder
        close = scan.close_tag(source, name, end)
        stop = len(source) if close < 0 else close
        if name == "iframe" and not self.skipping:
            attrs = attributes(source[attributes_at : end - 1])
            if not _display_none(attrs, self.style.declared(name, attrs).display):
                builder.boundary()  # a box in the line (ATOMIC)
        if name == "xmp" and not self.skipping and self.reading >= 4 and self._in_list_box_option():
            # in a list box's option: its text as written, but in the option's one string, collapsed (Chromium 150's
            # innerText: "onea <b> b" of <select size=3><option>one<xmp>a <b>\n b</xmp>)
            builder.glued = True
            self.literal = True
            self._text(end, stop)
            self.literal = False
            return stop
        if name in ("xmp", "textarea") and not self.skipping:
            # shown as written, in a box of its own (a textarea's text too: Chromium matches it;
            # its first line break is not text, as after <pre>)
            builder.boundary()
            self.pre += 1
            self.after_pre = name == "textarea"
            self.raw_pre = True
            self.literal = name == "xmp" and self.reading >= 3  # RAWTEXT: no character references (&amp; is text)
            self._text(end, stop)
            self.raw_pre = self.literal = False
            self.after_pre = False
            self.pre -= 1
            builder.boundary()
        return stop


def _numeric_reference(reference: str) -> str:
    """The character of a numeric character reference :func:`html.unescape` reads as nothing (``&#1;``, ``&#x7f;``,
    ``&#xFFFE;``: a control or a noncharacter): the code point itself, as WHATWG HTML §13.2.5.80 ("numeric character
    reference end state") keeps it (a parse error, not a removal; NUL, a surrogate, past U+10FFFF and the C1 controls
    of its table are what :func:`html.unescape` already reads as HTML does)."""
    digits = reference[2:].rstrip(";")
    hexadecimal = digits[:1] in ("x", "X")
    digits = (digits[1:] if hexadecimal else digits).lstrip("0")  # no int of thousands of leading zeros' digits
    if len(digits) > 8:
        return ""  # past U+10FFFF: html.unescape reads it (U+FFFD)
    number = int(digits or "0", 16 if hexadecimal else 10)
    return chr(number) if 0 < number <= 0x10FFFF and not 0xD800 <= number <= 0xDFFF else ""


def _display_none(attrs: Mapping[str, str], declared: str | None) -> bool:
    """Whether an element is ``display: none``: as the cascade declares (``declared``), else by its ``hidden``.

    ``hidden=until-found`` is not: a browser reveals such content to show a
    match (WHATWG HTML §6.1; Chromium matches it, tested).
    """
    if declared is not None:
        return declared == "none"
    hidden = attrs.get("hidden")
    return hidden is not None and hidden.strip().lower() != "until-found"


@dataclass(frozen=True)
class _Open:
    """An element open while the page text is read: its name, whether it is a block, whether its text shows."""

    name: str
    block: bool
    visible: bool
    items_are_blocks: bool = False  # a flex or grid container: its children are blockified
    white_space: str = "normal"  # the computed CSS white-space (read from reading 2 on)
    foreign: str = ""  # in SVG ("svg", "svgtext": in a text element) or MathML ("math"), from reading 2 on


def _close(open_elements: list[_Open], name: str) -> bool | None:
    """An end tag: the innermost open ``name`` and every element inside it closed; whether one was a block.

    ``None`` when no ``name`` is open (a stray end tag).
    """
    for k in range(len(open_elements) - 1, 0, -1):
        if open_elements[k].name == name:
            closed = open_elements[k:]
            del open_elements[k:]
            return any(e.block for e in closed)
    return None


def _implied_ends(open_elements: list[_Open], name: str) -> bool:
    """A start tag that ends open elements whose end tags were left out (``<p>…<div>``, ``<li>…<li>``).

    Inward from the innermost, past inline elements and the ones ``name``
    ends, stopping at any other block: the outermost one ``name`` ends is
    closed with everything inside it. Whether a block was closed.
    """
    ends = _ENDS.get(name, frozenset())
    if name in P_CLOSERS:
        ends = ends | {"p"}
    if not ends:
        return False
    outermost = None
    for k in range(len(open_elements) - 1, 0, -1):
        entry = open_elements[k]
        if entry.name in ends:
            outermost = k
        elif entry.block or entry.name in BLOCK:
            break
    if outermost is None:
        return False
    closed = open_elements[outermost:]
    del open_elements[outermost:]
    return any(e.block for e in closed)


def page_text(text: str, kind: str) -> PageText:
    """The page text of a CRLF-canonical document of ``kind`` ``"text"``, ``"html"`` or ``"xml"``."""
    if kind == "text":
        return plain_page_text(text)
    return markup_page_text(text, kind)


def _check_size(text: str) -> None:
    if len(text) > MAX_TEXT_CHARS:
        raise LimitError(
            f"a document of {len(text)} characters is longer than the {MAX_TEXT_CHARS} whose text is matched"
        )


def document_page_text(data: bytes, media_type: str, charset: str | None) -> PageText:
    """The page text of an archived entity: a text, an HTML or XML page, or an aggregate's root part.

    Read as ``char`` fragments read it (PDI-GRAMMAR.md §3): decoded in the
    declared charset (HTML and XML without one: sniffed as a browser does),
    CRLF-canonical, a byte-order mark not counted. Another media type is an
    :class:`~pdi.errors.UnsupportedError` (a PDF's and an e-mail's text are
    what :meth:`pdi.archive.Archive.char_text` gives).
    """
    from pdi.errors import UnsupportedError
    from pdi.fragments.markup import document_charset, markup_kind
    from pdi.fragments.text import TextIndex
    from pdi.fragments.text.lines import to_crlf

    mtype = media_type.split(";")[0].strip().lower()
    if mtype == "multipart/related":
        from pdi.fragments.aggregate import root_text

        kind, text = root_text(data)
        if kind is None:
            raise UnsupportedError("the root part of this aggregate has no text to match")
        return page_text(text, kind)
    markup = markup_kind(mtype)
    if markup is None and not mtype.startswith("text/"):
        raise UnsupportedError(f"{mtype} has no text: text directives and quotes select in text, HTML, XML, PDF"
                               " (its text layer) and e-mail (its body)")
    if len(data) > 4 * MAX_TEXT_CHARS:
        raise LimitError(f"a document of {len(data)} octets is larger than the {4 * MAX_TEXT_CHARS} whose text is matched")
    text = to_crlf(TextIndex(data, document_charset(data, mtype, charset)).whole_text())
    kind = "html" if markup in ("html", "xhtml") else ("xml" if markup in ("xml", "sgml") else "text")
    return page_text(text, kind)
