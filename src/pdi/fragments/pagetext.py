"""The text of a document as a reader sees it, and where each of its characters stands in the document.

What text directives (WICG Text Fragments, :mod:`pdi.fragments.textdirective`)
and text quotes (W3C Web Annotation ``TextQuoteSelector`` and
``TextPositionSelector``, :mod:`pdi.interop.annotation`) are matched against.
A :class:`PageText` holds

* ``text``: the reader's text. For ``text/*`` (but HTML and XML) the
  CRLF-canonical text itself (PDI-GRAMMAR.md §3), so its positions *are*
  ``char`` positions. For HTML and XML, the rendered text of the page, read
  from its CRLF-canonical source: one line per block (a paragraph, a heading,
  a list item, a table cell …: the elements the HTML standard's rendering
  section displays as blocks), white space inside a block collapsed to one
  space and dropped at the block's two ends (CSS ``white-space: normal``;
  kept inside ``pre``, ``listing``, ``plaintext`` and ``textarea``), a
  character reference read as its character. Not text: the ``title``,
  ``script``, ``style`` and the other raw-text elements, ``template``,
  ``select``, ``datalist``, ``audio``, ``video``, ``object``, ``canvas``,
  ``iframe``, and every element with a ``hidden`` attribute (the WICG
  spec's "search invisible" nodes, as far as they can be told without
  style sheets). A ``<br>`` ends a line as a block does: no text directive
  term runs across it (Chromium's reading, which its tests check).
* ``blocks``: where each block starts and ends in ``text``; a text directive
  term never matches across two of them (WICG Text Fragments §3.6.1, "find a
  string in range").
* a map from ``text`` to the document: :meth:`document_range` names a stretch
  of ``text`` as the ``char`` range of the CRLF-canonical document (or source)
  that holds it, as :class:`pdi.fulltext.Passage` does for the full-text
  index (a character reference stands for the whole reference).

The reading of markup is the full-text index's (:class:`pdi.fulltext.MarkupScanner`:
tags with their quoted attribute values, comments, raw-text and RCDATA
elements; no style sheets, no scripts), extended with block boundaries and
hidden elements. Where CSS says otherwise (an element made a block or hidden
by a style sheet) the page text differs from what a browser renders.

Pure: no I/O.
"""

from __future__ import annotations

import html
import re
import time
from dataclasses import dataclass
from typing import Final

from pdi.errors import LimitError
from pdi.fulltext import _REFERENCE, _TAG_NAME, _TAG_OPEN, Passage, _close_tag, _tag_end

__all__ = ["MAX_TEXT_CHARS", "PageText", "markup_page_text", "page_text", "plain_page_text"]

#: The longest document text read (characters): a text directive or a quote is matched in memory.
MAX_TEXT_CHARS: Final = 32 << 20
#: The longest reading a page's text may take (seconds; about 1 MB a second).
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
    "title", "textarea", "script", "style", "noscript", "noembed", "noframes", "iframe", "template",
    "select", "datalist", "audio", "video", "object", "canvas", "head",
})
#: Elements in which white space is kept as written (CSS ``white-space: pre``).
PREFORMATTED: Final = frozenset({"pre", "listing", "xmp", "plaintext"})
#: Void elements: they have no end tag, so they never hold what follows.
VOID: Final = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
})
_HIDDEN: Final = re.compile(r"[\t\n\f\r /]hidden(?:[\t\n\f\r ]*(?:=|/?>)|[\t\n\f\r /])", re.IGNORECASE)
_COLLAPSING: Final = re.compile(r"[ \t\n\r\f]{2,}|[\t\n\r\f]")
_WHITE: Final = " \t\n\r\f"


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

    def _append(self, text: str, start: int, end: int) -> None:
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
        self.pending = None
        self._append(text, start, end)

    def space(self, start: int, end: int) -> None:
        """White space at ``[start, end)``: one space before the next word of the block, if any."""
        if self.block_start is not None and self.pending is None:
            self.pending = (start, end)

    def kept(self, text: str, start: int, end: int) -> None:
        """Preformatted text: every character kept (a CRLF pair read as one line break, as a parser reads it)."""
        if self.block_start is None:
            if self.blocks:
                self._append("\n", start, start)
            self.block_start = self.length
        self.pending = None
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

    def boundary(self) -> None:
        """A block starts or ends here."""
        if self.block_start is not None:
            self.blocks.append((self.block_start, self.length))
        self.block_start = None
        self.pending = None

    def finish(self, kind: str, length: int) -> PageText:
        self.boundary()
        text = "".join(self.parts)
        if not self.runs:
            self.runs.append((0, 0, 0))
        return PageText(kind, text, tuple(self.blocks), Passage(0, text, tuple(self.runs)), length)


def plain_page_text(text: str) -> PageText:
    """The page text of a plain text (CRLF-canonical): the text itself, one block (a browser shows it in one ``pre``)."""
    _check_size(text)
    return PageText("text", text, ((0, len(text)),), Passage(0, text, ((0, 0, len(text)),)), len(text))


def markup_page_text(source: str, kind: str, *, seconds: float = MAX_SECONDS) -> PageText:
    """The page text of an HTML (``kind="html"``) or XML (``"xml"``) document's whole CRLF-canonical source.

    Reading it may take at most ``seconds`` (a :class:`~pdi.errors.LimitError` after).
    """
    _check_size(source)
    deadline = time.monotonic() + seconds
    steps = 0
    builder = _Builder()
    is_html = kind == "html"
    n = len(source)
    i = 0
    skipping: list[str] = []  # the open elements whose content is not text (innermost last)
    pre = 0  # how many preformatted elements are open
    after_pre = False  # just after <pre>: a first line break is not text (WHATWG 13.2.6.4.7)

    def spaced(content: str, at: int) -> None:
        """Text whose only white space is single spaces, at ``at`` of the source."""
        if not content:
            return
        lead = content[0] == " "
        trail = len(content) > lead and content[-1] == " "
        if lead:
            builder.space(at, at + 1)
        core = content[lead : len(content) - trail]
        if core:
            builder.word(core, at + lead, at + lead + len(core))
        if trail:
            builder.space(at + len(content) - 1, at + len(content))

    def text(a: int, b: int) -> None:
        nonlocal after_pre
        if a >= b or skipping:
            return
        if after_pre:
            after_pre = False
            if source.startswith("\r\n", a):
                a += 2
        if a >= b:
            return
        at = a
        pieces: list[tuple[str, int, int]] = []
        if "&" in source[a:b]:
            for m in _REFERENCE.finditer(source, a, b):
                decoded = html.unescape(m.group())
                if decoded == m.group():
                    continue
                pieces.append((source[at : m.start()], at, m.start()))
                pieces.append((decoded, m.start(), m.end()))
                at = m.end()
        pieces.append((source[at:b], at, b))
        for piece, s, e in pieces:
            if not piece:
                continue
            if pre:
                builder.kept(piece, s, e)
            elif len(piece) != e - s:  # a character reference
                if piece.isspace():
                    builder.space(s, e)
                else:
                    builder.word(piece, s, e)
            else:
                # only runs that collapse are cut out: a lone space between words stays one for one
                last = 0
                for m in _COLLAPSING.finditer(piece):
                    spaced(piece[last : m.start()], s + last)
                    builder.space(s + m.start(), s + m.end())
                    last = m.end()
                spaced(piece[last:], s + last)

    while i < n:
        steps += 1
        if not steps % 4096 and time.monotonic() > deadline:
            raise LimitError(f"reading the text of a page of {n} characters took more than {seconds} seconds")
        lt = source.find("<", i)
        if lt < 0:
            text(i, n)
            break
        text(i, lt)
        if source.startswith("<!--", lt):
            end = source.find("-->", lt + 4)
            i = n if end < 0 else end + 3
            continue
        if source.startswith("<![CDATA[", lt) and not is_html:
            end = source.find("]]>", lt + 9)
            end = n if end < 0 else end
            text(lt + 9, end)
            i = min(n, end + 3)
            continue
        if not _TAG_OPEN.match(source, lt):
            if source.startswith(("<!", "<?"), lt):
                end = source.find(">", lt + 2)
                i = n if end < 0 else end + 1
            else:  # a "<" that opens nothing is text
                text(lt, lt + 1)
                i = lt + 1
            continue
        closing = source[lt + 1] == "/"
        name_match = _TAG_NAME.match(source, lt + (2 if closing else 1))
        assert name_match is not None
        end = _tag_end(source, name_match.end())
        end = n if end < 0 else end
        name = name_match.group().lower() if is_html else name_match.group()
        i = end
        if is_html and not closing and name in ("script", "style", "xmp", "iframe", "noembed", "noframes",
                                                "noscript", "title", "textarea"):
            close = _close_tag(source, name, end)  # raw text and RCDATA: nothing inside is a tag
            stop = n if close < 0 else close
            if name == "xmp" and not skipping:
                builder.boundary()
                pre += 1
                text(end, stop)
                pre -= 1
                builder.boundary()
            i = stop
            continue
        if not is_html:
            continue
        if skipping:
            if name == skipping[-1]:
                if closing:
                    skipping.pop()
                elif name not in VOID and source[end - 2 : end] != "/>":
                    skipping.append(name)
            continue
        if not closing and name not in VOID and (name in SKIPPED or _HIDDEN.search(source, lt, end)):
            if name in BLOCK or name in SKIPPED:
                builder.boundary()
            skipping.append(name)
            continue
        if name in BLOCK:
            builder.boundary()
        if name in PREFORMATTED:
            if closing:
                pre = max(0, pre - 1)
            else:
                pre += 1
                after_pre = True
        elif name == "br" and not closing:
            builder.boundary()  # Chromium matches no term across a line break (tested)
    return builder.finish(kind, n)


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
    :class:`~pdi.errors.UnsupportedError`.
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
        raise UnsupportedError(f"{mtype} has no text: text directives and quotes select in text, HTML and XML")
    if len(data) > 4 * MAX_TEXT_CHARS:
        raise LimitError(f"a document of {len(data)} octets is larger than the {4 * MAX_TEXT_CHARS} whose text is matched")
    text = to_crlf(TextIndex(data, document_charset(data, mtype, charset)).whole_text())
    kind = "html" if markup in ("html", "xhtml") else ("xml" if markup in ("xml", "sgml") else "text")
    return page_text(text, kind)
