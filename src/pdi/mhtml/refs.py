"""References (URIs) inside HTML and CSS, with their source offsets (RFC 2557 §8).

HTML tokenizer: the standard library's :class:`html.parser.HTMLParser`. It is the
tokenizer ARCHITECTURE.md names, it has no dependency, it never raises on bad
markup (it is tolerant like a browser's: unclosed quotes, stray ``<``, junk
attributes), and it reports where each tag starts (:meth:`~html.parser.HTMLParser.getpos`,
a line and a column counted in characters). Where it reads markup otherwise than
HTML's tokenizer (WHATWG HTML §13.2.5) so that it would miss a tag a browser sees, it
is corrected here (:class:`_Collector`): comments end at ``-->``, ``--!>`` or at once
(``<!-->``); ``<![…`` is a bogus comment to the first ``>`` (html.parser took
``<![x[`` for an SGML marked section and raised ``AssertionError``); ``<script>``,
``<style>``, ``<title>``, ``<textarea>``, ``<xmp>``, ``<iframe>``, ``<noembed>``,
``<noframes>``, ``<noscript>`` and ``<plaintext>`` hold text up to their own end tag
(``</style `` and ``</style/`` end it too; a script's text follows the escaped and
double-escaped states), but not inside ``<svg>`` or ``<math>``, whose namespaces are
tracked as the tree builder does (§13.2.6.5: integration points, the tags that break
out); an SVG ``<style>``'s text and CDATA sections are CSS all the same. What a
browser reads as text and html.parser as a tag is left so (one reference too many).
``<noscript>`` is read both ways (scripting on and off). Attribute value offsets are
not reported by html.parser, so each start tag's raw text (``get_starttag_text()``) is
re-scanned here with the parser's attribute grammar, white space being HTML's
(ASCII only: a no-break space belongs to a value); an entity in a
value (``&amp;``, ``&quot;``) is decoded in :attr:`Reference.url` while
``start``/``end`` span the raw text, so a writer can replace ``text[start:end]``.
The document in an ``<iframe srcdoc>`` value is read the same way, recursively (at
most :data:`MAX_SRCDOC_DEPTH` deep), its references given offsets in the outer text.
html5lib would give a spec-exact tree but no source offsets for attributes, and
lxml none at all; html5lib is the oracle the tests compare with.

CSS: a small scanner for what CSS Syntax Level 3 tokenizes as ``url(…)`` (quoted or
not), ``@import "…"`` and ``@import url(…)``, and the strings of ``image-set(…)``
(CSS Images 4: they are URLs too), passing over comments and other strings;
CSS escapes are decoded in ``url``.

Kinds: ``src`` (img, script, input, embed, audio, video, source, track, and the
``href``/``xlink:href`` of inline SVG's image, use and feImage), ``frame``
(frame and iframe ``src``), ``srcset`` (one reference per candidate of ``srcset`` and
of link ``imagesrcset``), ``stylesheet`` (link rel=stylesheet), ``icon`` (link rel=icon
and similar), ``href`` (a, area, other links: navigation, not needed to render the
page), ``action`` (form ``action``, button and input ``formaction``), ``ping`` (a and
area, one reference per URL), ``refresh`` (the URL of ``<meta http-equiv=refresh>``,
WHATWG HTML §7.11.1), ``poster`` (video), ``data`` (object), ``background`` (the old
``background`` attribute), ``style-url`` (``url()`` in a ``style`` attribute, a
``<style>`` element, an SVG presentation attribute such as ``fill`` or a CSS part),
``import`` (CSS ``@import``) and ``base`` (``<base href>``).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser

from pdi.errors import LimitError

INLINE_KINDS = frozenset(
    {"src", "frame", "srcset", "stylesheet", "icon", "poster", "data", "background", "style-url", "import"}
)
"""Kinds whose target is needed to render the page (an ``href`` link is not)."""


@dataclass(frozen=True)
class Reference:
    """One URI written in an HTML or CSS text.

    ``url`` is the value as written with HTML entities (or CSS escapes) decoded and
    nothing else changed; ``text[start:end]`` is its raw source text. A reference in
    the document of an ``<iframe srcdoc>`` has its offsets in the outer text, and
    ``quoting`` names the quote character (``'``, ``"``, or ``""`` for none) of each
    ``srcdoc`` value it sits in, outermost first: text written in its place must be
    escaped for each. ``raw_text`` is True in text where character references mean
    nothing (a ``<style>`` element's text, a CDATA section).
    """

    url: str
    start: int
    end: int
    kind: str
    element: str | None = None
    quoting: tuple[str, ...] = ()
    raw_text: bool = False

    @property
    def inline(self) -> bool:
        """True when the page needs the target to render (not a navigation link)."""
        return self.kind in INLINE_KINDS


# The attribute grammar of html.parser (attrfind_tolerant), with the value groups split,
# and with HTML's white space (ASCII: tab, LF, FF, CR, space) where html.parser has
# Python's \s, which also matches U+00A0 and U+0085 (a browser keeps those in a value).
_ATTR = re.compile(
    r"""((?<=['"\t\n\f\r /])[^\t\n\f\r />][^\t\n\f\r /=>]*)"""
    r"""([\t\n\f\r ]*=+[\t\n\f\r ]*('([^']*)'|"([^"]*)"|(?!['"])([^>\t\n\f\r ]*)))?(?:[\t\n\f\r ]|/(?!>))*"""
)
_TAGNAME = re.compile(r"<([a-zA-Z][^\t\n\r\f />\x00]*)(?:[\t\n\f\r ]|/(?!>))*")
_ENTITY = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]*;?)")

_SRC_ELEMENTS = frozenset({"img", "script", "input", "embed", "audio", "video", "source", "track"})
_SVG_HREF_ELEMENTS = frozenset({"image", "use", "feimage"})  # inline SVG: href / xlink:href
_ICON_RELS = frozenset({"icon", "shortcut", "apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon"})


def _unescape_with_map(raw: str) -> tuple[str, list[int]]:
    """Decode HTML character references; ``offsets[i]`` is the raw index of decoded char ``i``.

    ``offsets`` has one extra entry, ``len(raw)``, for an end position.
    """
    if "&" not in raw:
        return raw, list(range(len(raw) + 1))
    out: list[str] = []
    offsets: list[int] = []
    pos = 0
    for m in _ENTITY.finditer(raw):
        for i in range(pos, m.start()):
            out.append(raw[i])
            offsets.append(i)
        decoded = html.unescape(m.group(0))
        # html.unescape may decode only a prefix of a semicolon-less name ("&ampx").
        for ch in decoded:
            out.append(ch)
            offsets.append(m.start())
        pos = m.end()
    for i in range(pos, len(raw)):
        out.append(raw[i])
        offsets.append(i)
    offsets.append(len(raw))
    return "".join(out), offsets


def _mapped(decoded_start: int, decoded_end: int, offsets: list[int], shift: int) -> tuple[int, int]:
    start = offsets[decoded_start] + shift
    if decoded_end == 0:
        end = offsets[0] + shift
    else:
        # end just after the raw text of the last decoded character
        last = offsets[decoded_end - 1]
        nxt = offsets[decoded_end]
        end = (nxt if nxt > last else last + 1) + shift
    return start, end


class _Attr:
    __slots__ = ("name", "raw_end", "raw_start", "value")

    def __init__(self, name: str, value: str | None, raw_start: int, raw_end: int) -> None:
        self.name = name
        self.value = value
        self.raw_start = raw_start
        self.raw_end = raw_end


def _scan_attrs(tag_text: str, tag_offset: int) -> tuple[str, list[_Attr]]:
    m = _TAGNAME.match(tag_text)
    if not m:
        return "", []
    name = m.group(1).lower()
    attrs: list[_Attr] = []
    k = m.end()
    end = len(tag_text)
    while k < end:
        a = _ATTR.match(tag_text, k)
        if not a:
            break
        attr_name = a.group(1).lower()
        if a.group(2) is None:
            attrs.append(_Attr(attr_name, None, tag_offset + a.end(1), tag_offset + a.end(1)))
        else:
            for g in (4, 5, 6):
                if a.group(g) is not None:
                    attrs.append(
                        _Attr(attr_name, a.group(g), tag_offset + a.start(g), tag_offset + a.end(g))
                    )
                    break
        k = a.end()
    return name, attrs


def _srcset_candidates(value: str) -> list[tuple[int, int]]:
    """(start, end) of each URL in a srcset value (HTML "parse a srcset attribute", URLs only)."""
    out: list[tuple[int, int]] = []
    pos = 0
    n = len(value)
    while pos < n:
        while pos < n and value[pos] in "\t\n\f\r ,":
            pos += 1
        if pos >= n:
            break
        start = pos
        while pos < n and value[pos] not in "\t\n\f\r ":
            pos += 1
        url_end = pos
        if value[url_end - 1] == ",":
            while url_end > start and value[url_end - 1] == ",":
                url_end -= 1
        else:
            depth = 0  # descriptors run to the next comma outside parentheses
            while pos < n:
                c = value[pos]
                pos += 1
                if c == "(":
                    depth += 1
                elif c == ")":
                    depth = max(0, depth - 1)
                elif c == "," and depth == 0:
                    break
        if url_end > start:
            out.append((start, url_end))
    return out



# --- how a browser splits HTML into markup and text (WHATWG HTML §13.2.5, §13.2.6) ------
#
# html.parser is a tolerant tokenizer, not HTML's: where the two disagree, a tag the
# browser sees could be hidden from us (inside what html.parser takes for a comment, a
# marked section or the text of a <style>), and a reference in it would be left as it
# was. The rules below bring it to the browser's reading wherever hiding is possible;
# where only the other way is (html.parser sees a tag in what a browser takes for text),
# that is kept: a reference too many is rewritten, never one too few.

_RAW_TEXT = frozenset(
    {"script", "style", "xmp", "iframe", "noembed", "noframes", "noscript", "title", "textarea", "plaintext"}
)
"""HTML elements whose content is text up to their end tag (script data, RAWTEXT, RCDATA, PLAINTEXT)."""
_BREAKOUT = frozenset(
    {
        "b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em", "embed",
        "h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing", "menu", "meta", "nobr",
        "ol", "p", "pre", "ruby", "s", "small", "span", "strong", "strike", "sub", "sup", "table", "tt", "u",
        "ul", "var",
    }
)
"""Start tags that end foreign content (§13.2.6.5), as ``font`` does with color, face or size."""
_SVG_HTML_POINTS = frozenset({"foreignobject", "desc", "title"})
_MATH_TEXT_POINTS = frozenset({"mi", "mo", "mn", "ms", "mtext"})
_END_FOLLOW = r"(?=[\t\n\f\r />])"
_SCRIPT_DATA = re.compile(r"<!--|</script" + _END_FOLLOW, re.I)
_SCRIPT_ESCAPED = re.compile(r"-->|</script" + _END_FOLLOW + r"|<script" + _END_FOLLOW, re.I)
_DASHES_GT = re.compile(r"-{0,2}>")
_COMMENT_END = re.compile(r"--!?>")
_TABLE_BACKGROUND = frozenset({"body", "table", "thead", "tbody", "tfoot", "tr", "td", "th"})
_SVG_URL_ATTRIBUTES = frozenset(
    {"fill", "stroke", "filter", "clip-path", "mask", "marker-start", "marker-mid", "marker-end", "cursor"}
)
MAX_SRCDOC_DEPTH = 16
"""How deeply ``<iframe srcdoc>`` documents may nest (deeper is a :class:`~pdi.errors.LimitError`)."""


class _At:
    """A match-like position, for html.parser's ``interesting.search(...).start()``."""

    def __init__(self, index: int) -> None:
        self._index = index

    def start(self) -> int:
        return self._index


class _RawTextEnd:
    """Finds where the text of a raw text element ends, as HTML's tokenizer does: at
    ``</name`` followed by white space, ``/`` or ``>`` (§13.2.5.11 and the like), a
    script's as :func:`_script_end` says, a ``<plaintext>``'s never."""

    def __init__(self, element: str) -> None:
        self.element = element
        self._end = re.compile("</" + re.escape(element) + _END_FOLLOW, re.I)

    def search(self, text: str, pos: int = 0) -> _At | None:
        if self.element == "plaintext":
            return None
        if self.element == "script":
            at = _script_end(text, pos)
            return None if at < 0 else _At(at)
        m = self._end.search(text, pos)
        return None if m is None else _At(m.start())


def _script_end(text: str, pos: int) -> int:
    """Index of the ``</script`` that ends a script's text, -1 if it runs to the end.

    §13.2.5.4 and §13.2.5.15–.31: after ``<!--`` the text is "escaped"; a ``<script``
    there makes it "double-escaped", where ``</script`` only goes back to escaped;
    ``-->`` goes back to plain script data.
    """
    state = 0  # 0 script data, 1 escaped, 2 double-escaped
    i = pos
    while True:
        m = (_SCRIPT_DATA if state == 0 else _SCRIPT_ESCAPED).search(text, i)
        if m is None:
            return -1
        token = m.group(0).lower()
        i = m.end()
        if token == "<!--":
            state = 1
            if text.startswith(">", i) or text.startswith("->", i):  # "<!-->", "<!--->": escaped dash dash, then ">"
                state = 0
        elif token == "-->":
            state = 0
        elif token.startswith("</"):
            if state != 2:
                return m.start()
            state = 1
        elif state == 1:  # "<script" while escaped
            state = 2


class _Collector(HTMLParser):
    """Collects the references of an HTML text.

    Besides html.parser's own reading it follows HTML's tokenizer for comments, ``<!``
    and raw text (above), and the tree builder as far as namespaces go: inside ``<svg>``
    and ``<math>`` no element holds raw text (an SVG ``<style>``'s text is CSS all the
    same), ``<![CDATA[`` opens a CDATA section, and the elements of :data:`_BREAKOUT`
    end the foreign content (§13.2.6.5).
    """

    def __init__(self, text: str, depth: int = 0, *, scripting: bool = True) -> None:
        super().__init__(convert_charrefs=True)
        if depth > MAX_SRCDOC_DEPTH:
            raise LimitError(f"<iframe srcdoc> documents nested more than {MAX_SRCDOC_DEPTH} deep")
        self.text = text
        self.depth = depth
        self.scripting = scripting  # off: <noscript> is markup, as a browser with scripting off reads it
        self.line_starts = [0]
        for m in re.finditer("\n", text):
            self.line_starts.append(m.end())
        self.refs: list[Reference] = []
        self.base: str | None = None
        self.base_seen = False
        self._raw_start = 0  # where the text of the current raw text element begins
        self._frames: list[tuple[str, str]] = []  # (namespace of the content, element): foreign elements, integration points
        self._svg_style = 0  # SVG <style> elements open: their text is CSS

    def _offset(self) -> int:
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def _namespace(self) -> str:
        return self._frames[-1][0] if self._frames else "html"

    def _leave_foreign(self) -> None:
        while self._frames and self._frames[-1][0] != "html":
            if self._frames.pop() == ("svg", "style"):
                self._svg_style -= 1

    # -- the tokenizer ----------------------------------------------------------------

    def set_cdata_mode(self, elem: str, *, escapable: bool = False) -> None:
        """html.parser's own call after ``<script>`` or ``<style>``: ignored, raw text is
        entered in :meth:`_start`, where the namespace is known."""

    def _enter_raw_text(self, elem: str) -> None:
        self.cdata_elem = elem
        self.interesting = _RawTextEnd(elem)  # type: ignore[assignment]

    def parse_endtag(self, i: int) -> int:
        if self.cdata_elem is None:
            return super().parse_endtag(i)
        # Only the end tag that ends the raw text stops html.parser here (_RawTextEnd).
        gt = self.rawdata.find(">", i + 2)
        if gt < 0:
            return -1
        self._raw_text(self.cdata_elem, self._raw_start, self._offset())
        self.clear_cdata_mode()
        return gt + 1

    def parse_comment(self, i: int, report: int = 1) -> int:
        rawdata = self.rawdata
        abrupt = _DASHES_GT.match(rawdata, i + 4)  # "<!-->", "<!--->" (§13.2.5.44, .45), "<!---->"
        if abrupt:
            return abrupt.end()
        m = _COMMENT_END.search(rawdata, i + 4)  # "-->" or "--!>" (§13.2.5.50, .52)
        return -1 if m is None else m.end()

    def parse_html_declaration(self, i: int) -> int:
        rawdata = self.rawdata
        if not rawdata.startswith("<![", i):
            return int(super().parse_html_declaration(i))
        # A bogus comment up to the first ">" (§13.2.5.42), except "<![CDATA[" in foreign
        # content, a CDATA section up to "]]>": in an SVG <style> its text is CSS and is read
        # so here, but what follows the first ">" is read as markup all the same, so that
        # mistaking where foreign content ends hides nothing.
        gt = rawdata.find(">", i + 3)
        if self._svg_style and self._namespace() == "svg" and rawdata.startswith("<![CDATA[", i):
            end = rawdata.find("]]>", i + 9)
            shift = self._offset() - i
            self._css(shift + i + 9, shift + (len(rawdata) if end < 0 else end), "style", entities=False)
        return -1 if gt < 0 else gt + 1

    # -- the tree builder, as far as namespaces go -------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(self_closing=False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(self_closing=True)

    def _start(self, self_closing: bool) -> None:
        raw = self.get_starttag_text() or ""
        name, scanned = _scan_attrs(raw, self._offset())
        if not name:
            return
        namespace = self._namespace()
        if namespace != "html" and (
            name in _BREAKOUT or (name == "font" and any(a.name in ("color", "face", "size") for a in scanned))
        ):
            self._leave_foreign()
            namespace = self._namespace()
        if namespace == "html":
            if name == "image":
                name = "img"  # §13.2.6.4.7: "change the token's tag name to img"
            self._collect(name, scanned, foreign=False)
            if name in ("svg", "math"):
                if not self_closing:
                    self._frames.append((name, name))
            elif name in _RAW_TEXT and (self.scripting or name != "noscript"):  # "/>" is ignored on these
                self._raw_start = self._offset() + len(raw)
                self._enter_raw_text(name)
            return
        self._collect(name, scanned, foreign=True)
        if self_closing:
            return
        html_point = (namespace == "svg" and name in _SVG_HTML_POINTS) or (
            namespace == "math"
            and (
                name in _MATH_TEXT_POINTS
                or (
                    name == "annotation-xml"
                    and any(
                        a.name == "encoding"
                        and html.unescape(a.value or "").strip().lower() in ("text/html", "application/xhtml+xml")
                        for a in scanned
                    )
                )
            )
        )
        self._frames.append(("html" if html_point else namespace, name))
        if (namespace, name) == ("svg", "style"):
            self._svg_style += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("p", "br") and self._namespace() != "html":
            self._leave_foreign()  # §13.2.6.5: "</br>" and "</p>" in foreign content
            return
        for depth in range(len(self._frames) - 1, -1, -1):
            if self._frames[depth][1] == tag:
                self._svg_style -= sum(1 for frame in self._frames[depth:] if frame == ("svg", "style"))
                del self._frames[depth:]
                return

    def handle_data(self, data: str) -> None:
        if self.cdata_elem is None and self._svg_style and self._namespace() == "svg":
            start = self._offset()
            end = self.text.find("<", start)
            self._css(start, len(self.text) if end < 0 else end, "style", entities=True)

    def close(self) -> None:
        super().close()
        if self.cdata_elem is not None:
            self._raw_text(self.cdata_elem, self._raw_start, len(self.text))
            self.clear_cdata_mode()

    def _raw_text(self, element: str, start: int, end: int) -> None:
        """The text of a raw text element, from ``start`` to ``end``, is over."""
        if element == "style":
            self._css(start, end, "style", entities=False)
        elif element == "noscript" and start < end:
            # A browser with scripting off reads it as markup: its references count too.
            self._nested(self.text[start:end], start, None, self.depth, scripting=False)

    def _css(self, start: int, end: int, element: str, *, entities: bool) -> None:
        raw = self.text[start:end]
        css, offsets = _unescape_with_map(raw) if entities else (raw, list(range(len(raw) + 1)))
        for r in css_references(css):
            s, e = _mapped(r.start, r.end, offsets, start)
            self.refs.append(Reference(r.url, s, e, r.kind, element, raw_text=not entities))

    def _nested(
        self,
        text: str,
        shift: int,
        quote: str | None,
        depth: int,
        offsets: list[int] | None = None,
        *,
        scripting: bool | None = None,
    ) -> None:
        """References of markup within this text: ``text`` begins at ``shift``; when it is an
        attribute value decoded with ``offsets``, ``quote`` is the value's quote character."""
        inner = _Collector(text, depth, scripting=self.scripting if scripting is None else scripting)
        inner.feed(text)
        inner.close()
        for r in inner.refs:
            if offsets is None:
                s, e = r.start + shift, r.end + shift
            else:
                s, e = _mapped(r.start, r.end, offsets, shift)
            quoting = r.quoting if quote is None else (quote, *r.quoting)
            self.refs.append(Reference(r.url, s, e, r.kind, r.element, quoting, r.raw_text))

    # -- attributes ------------------------------------------------------------------

    def _add(self, attr: _Attr, kind: str, element: str) -> None:
        if attr.value is None:
            return
        raw = self.text[attr.raw_start : attr.raw_end]
        url, offsets = _unescape_with_map(raw)
        start, end = _mapped(0, len(url), offsets, attr.raw_start)
        self.refs.append(Reference(url, start, end, kind, element))

    def _add_list(self, attr: _Attr, kind: str, element: str) -> None:
        """A value that is URLs separated by white space (``ping``)."""
        if attr.value is None:
            return
        raw = self.text[attr.raw_start : attr.raw_end]
        value, offsets = _unescape_with_map(raw)
        for m in re.finditer(r"[^\t\n\f\r ]+", value):
            s, e = _mapped(m.start(), m.end(), offsets, attr.raw_start)
            self.refs.append(Reference(m.group(0), s, e, kind, element))

    def _add_refresh(self, attr: _Attr, element: str) -> None:
        if attr.value is None:
            return
        raw = self.text[attr.raw_start : attr.raw_end]
        value, offsets = _unescape_with_map(raw)
        span = refresh_url(value)
        if span is not None:
            s, e = _mapped(span[0], span[1], offsets, attr.raw_start)
            self.refs.append(Reference(value[span[0] : span[1]], s, e, "refresh", element))

    def _add_srcdoc(self, attr: _Attr) -> None:
        if attr.value is None:
            return
        raw = self.text[attr.raw_start : attr.raw_end]
        before = self.text[attr.raw_start - 1 : attr.raw_start]
        quote = before if before in ("'", '"') else ""
        value, offsets = _unescape_with_map(raw)
        self._nested(value, attr.raw_start, quote, self.depth + 1, offsets)

    def _collect(self, name: str, attrs: list[_Attr], *, foreign: bool) -> None:
        seen: set[str] = set()
        first: list[_Attr] = []
        for a in attrs:  # HTML keeps the first of duplicate attributes
            if a.name not in seen:
                seen.add(a.name)
                first.append(a)
        by_name = {a.name: a for a in first}
        for a in first:
            n = a.name
            if n == "style" and a.value is not None:
                raw = self.text[a.raw_start : a.raw_end]
                css, offsets = _unescape_with_map(raw)
                for r in css_references(css):
                    s, e = _mapped(r.start, r.end, offsets, a.raw_start)
                    self.refs.append(Reference(r.url, s, e, "style-url", name))
            elif n == "src":
                if name in ("frame", "iframe"):
                    self._add(a, "frame", name)
                elif name in _SRC_ELEMENTS:
                    self._add(a, "src", name)
            elif n == "srcdoc" and name == "iframe":
                self._add_srcdoc(a)
            elif (n == "srcset" and name in ("img", "source")) or (n == "imagesrcset" and name == "link"):
                if a.value is None:
                    continue
                raw = self.text[a.raw_start : a.raw_end]
                value, offsets = _unescape_with_map(raw)
                for s, e in _srcset_candidates(value):
                    rs, re_ = _mapped(s, e, offsets, a.raw_start)
                    self.refs.append(Reference(value[s:e], rs, re_, "srcset", name))
            elif n in ("href", "xlink:href") and name in _SVG_HREF_ELEMENTS:
                self._add(a, "src", name)
            elif n == "href" or (n == "xlink:href" and name == "a"):
                if name == "base":
                    if not self.base_seen and a.value is not None:
                        self.base_seen = True
                        self.base = html.unescape(a.value)
                    self._add(a, "base", name)
                elif name == "link":
                    rel_attr = by_name.get("rel")
                    rels = set((html.unescape(rel_attr.value or "") if rel_attr else "").lower().split())
                    if "stylesheet" in rels:
                        self._add(a, "stylesheet", name)
                    elif rels & _ICON_RELS:
                        self._add(a, "icon", name)
                    else:
                        self._add(a, "href", name)
                elif name in ("a", "area"):
                    self._add(a, "href", name)
            elif n == "poster" and name == "video":
                self._add(a, "poster", name)
            elif n == "data" and name == "object":
                self._add(a, "data", name)
            elif n == "background" and name in _TABLE_BACKGROUND:
                self._add(a, "background", name)
            elif (n == "action" and name == "form") or (n == "formaction" and name in ("button", "input")):
                self._add(a, "action", name)
            elif n == "ping" and name in ("a", "area"):
                self._add_list(a, "ping", name)
            elif n == "content" and name == "meta":
                equiv = by_name.get("http-equiv")
                if equiv is not None and html.unescape(equiv.value or "").strip().lower() == "refresh":
                    self._add_refresh(a, name)
            elif foreign and n in _SVG_URL_ATTRIBUTES and a.value is not None:
                raw = self.text[a.raw_start : a.raw_end]
                css, offsets = _unescape_with_map(raw)
                for r in css_references(css):
                    s, e = _mapped(r.start, r.end, offsets, a.raw_start)
                    self.refs.append(Reference(r.url, s, e, "style-url", name))


_ASCII_WS = "\t\n\f\r "


def refresh_url(content: str) -> tuple[int, int] | None:
    """Where the URL of a ``<meta http-equiv=refresh content=…>`` value is (``None``: no URL).

    WHATWG HTML §7.11.1, "shared declarative refresh steps": a time (digits and dots),
    then ``;``, ``,`` or white space, then optionally ``url`` and ``=`` (any case, white
    space around ``=``), then the URL, to the end or to the quote that opened it.
    """
    n = len(content)
    i = 0
    while i < n and content[i] in _ASCII_WS:
        i += 1
    digits = i
    while i < n and content[i] in "0123456789":
        i += 1
    if i == digits and not content.startswith(".", i):
        return None
    while i < n and content[i] in ".0123456789":
        i += 1
    if i < n:
        if content[i] not in ";," + _ASCII_WS:
            return None
        while i < n and content[i] in _ASCII_WS:
            i += 1
        if i < n and content[i] in ";,":
            i += 1
        while i < n and content[i] in _ASCII_WS:
            i += 1
    if i >= n:
        return None
    j = i
    if content[j] in "Uu":
        if content[j + 1 : j + 3].lower() != "rl":
            return i, n
        j += 3
        while j < n and content[j] in _ASCII_WS:
            j += 1
        if not content.startswith("=", j):
            return i, n
        j += 1
        while j < n and content[j] in _ASCII_WS:
            j += 1
    if j < n and content[j] in "'\"":
        end = content.find(content[j], j + 1)
        j += 1
        return (j, n if end < 0 else end) if j < (n if end < 0 else end) else None
    return (j, n) if j < n else None


def _collect(text: str) -> _Collector:
    c = _Collector(text)
    c.feed(text)
    c.close()
    return c


def scan_html(html_text: str) -> tuple[list[Reference], str | None]:
    """:func:`html_references` and :func:`html_base` in one pass over the text."""
    c = _collect(html_text)
    c.refs.sort(key=lambda r: r.start)
    return c.refs, c.base


def html_references(html_text: str) -> list[Reference]:
    """Every URI reference in an HTML text, in source order, with its source offsets."""
    return scan_html(html_text)[0]


def html_base(html_text: str) -> str | None:
    """The ``href`` of the first ``<base href>`` element (entities decoded), as written."""
    return _collect(html_text).base


# --- CSS ---------------------------------------------------------------------------

_CSS_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})[ \t\n\r\f]?|(\r\n|[\n\r\f])|(.))", re.S)


def _css_unescape(raw: str) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1):
            cp = int(m.group(1), 16)
            if cp == 0 or 0xD800 <= cp <= 0xDFFF or cp > 0x10FFFF:
                return "\ufffd"
            return chr(cp)
        if m.group(2):
            return ""  # escaped newline inside a string: a line continuation
        return m.group(3)

    return _CSS_ESCAPE.sub(sub, raw) if "\\" in raw else raw


_CSS_WS = " \t\n\r\f"


def _string_end(css: str, pos: int) -> int:
    """Index of the closing quote of the string whose opening quote is at ``pos`` (or len)."""
    quote = css[pos]
    i = pos + 1
    n = len(css)
    while i < n:
        c = css[i]
        if c == "\\":
            i += 2
            continue
        if c == quote or c == "\n":
            return i
        i += 1
    return n


def _continues_name(ch: str) -> bool:
    """``ch`` belongs to a CSS name (CSS Syntax 3 §4.2: ident code points are letters,
    digits, ``-``, ``_`` and every non-ASCII code point; ``\\`` starts an escape in one):
    "url(" right after it is part of a longer function name, not a URL."""
    return not ch.isascii() or ch.isalnum() or ch in "-_\\"


_CSS_TOKEN = re.compile(r"""/\*|["']|url\(|@import|(?:-webkit-)?image-set\(""", re.I)


def css_references(css: str) -> list[Reference]:
    """Every ``url()`` and ``@import`` reference in a CSS text, with its source offsets."""
    refs: list[Reference] = []
    pos = 0
    n = len(css)
    while True:
        m = _CSS_TOKEN.search(css, pos)
        if not m:
            break
        tok = m.group(0)
        if tok == "/*":
            end = css.find("*/", m.end())
            pos = n if end < 0 else end + 2
            continue
        if tok in ("'", '"'):
            pos = _string_end(css, m.start()) + 1
            continue
        if tok.lower().endswith("image-set("):
            # image-set("a.png" 1x, url(b.png) 2x): its strings are URLs too (CSS Images 4)
            if m.start() > 0 and _continues_name(css[m.start() - 1]):
                pos = m.end()
                continue
            pos = _image_set(css, m.end(), refs)
            continue
        if tok.lower() == "url(":
            # "url(" must start an identifier: not preceded by a name character
            if m.start() > 0 and _continues_name(css[m.start() - 1]):
                pos = m.end()
                continue
            kind = "style-url"
            r, pos = _url_token(css, m.end(), kind)
            if r:
                refs.append(r)
            continue
        # @import
        i = m.end()
        if i < n and _continues_name(css[i]) and css[i] != "\\":
            pos = i
            continue
        while i < n and css[i] in _CSS_WS:
            i += 1
        if i < n and css[i] in "'\"":
            end = _string_end(css, i)
            refs.append(Reference(_css_unescape(css[i + 1 : end]), i + 1, end, "import", None))
            pos = end + 1
        elif css[i : i + 4].lower() == "url(":
            r, pos = _url_token(css, i + 4, "import")
            if r:
                refs.append(r)
        else:
            pos = i
    return refs


def _image_set(css: str, pos: int, refs: list[Reference]) -> int:
    """Collect the URLs of an ``image-set(`` whose arguments start at ``pos``; returns the end."""
    n = len(css)
    depth = 0
    i = pos
    while i < n:
        c = css[i]
        if c in "'\"":
            end = _string_end(css, i)
            if depth == 0:
                refs.append(Reference(_css_unescape(css[i + 1 : end]), i + 1, end, "style-url", None))
            i = end + 1
        elif css.startswith("/*", i):
            end = css.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif css[i : i + 4].lower() == "url(" and not _continues_name(css[i - 1]):
            r, i = _url_token(css, i + 4, "style-url")
            if r:
                refs.append(r)
        elif c == "(":
            depth += 1
            i += 1
        elif c == ")":
            if depth == 0:
                return i + 1
            depth -= 1
            i += 1
        elif c == "\\":
            i += 2
        else:
            i += 1
    return n


def _url_token(css: str, pos: int, kind: str) -> tuple[Reference | None, int]:
    n = len(css)
    i = pos
    while i < n and css[i] in _CSS_WS:
        i += 1
    if i < n and css[i] in "'\"":
        end = _string_end(css, i)
        close = css.find(")", end)
        return Reference(_css_unescape(css[i + 1 : end]), i + 1, end, kind, None), (
            n if close < 0 else close + 1
        )
    start = i
    while i < n and css[i] != ")":
        if css[i] == "\\":
            i += 2
            continue
        i += 1
    i = min(i, n)
    end = i
    while end > start and css[end - 1] in _CSS_WS:
        end -= 1
    if end == start:
        return None, i + 1
    return Reference(_css_unescape(css[start:end]), start, end, kind, None), i + 1
