"""References (URIs) inside HTML and CSS, with their source offsets (RFC 2557 §8).

HTML tokenizer: the standard library's :class:`html.parser.HTMLParser`. It is the
tokenizer ARCHITECTURE.md names, it has no dependency, it never raises on bad
markup (it is tolerant like a browser's: unclosed quotes, stray ``<``, junk
attributes), it treats ``<style>`` and ``<script>`` content as raw text as HTML
does, and it reports where each tag starts (:meth:`~html.parser.HTMLParser.getpos`,
a line and a column counted in characters). Attribute value offsets are not
reported by it, so each start tag's raw text (``get_starttag_text()``) is
re-scanned here with the parser's attribute grammar, white space being HTML's
(ASCII only: a no-break space belongs to a value); an entity in a
value (``&amp;``, ``&quot;``) is decoded in :attr:`Reference.url` while
``start``/``end`` span the raw text, so a writer can replace ``text[start:end]``.
html5lib would give a spec-exact tree but no source offsets for attributes, and
lxml none at all.

CSS: a small scanner for what CSS Syntax Level 3 tokenizes as ``url(…)`` (quoted or
not), ``@import "…"`` and ``@import url(…)``, and the strings of ``image-set(…)``
(CSS Images 4: they are URLs too), passing over comments and other strings;
CSS escapes are decoded in ``url``.

Kinds: ``src`` (img, script, input, embed, audio, video, source, track, and the
``href``/``xlink:href`` of inline SVG's image, use and feImage), ``frame``
(frame and iframe ``src``), ``srcset`` (one reference per candidate), ``stylesheet``
(link rel=stylesheet), ``icon`` (link rel=icon and similar), ``href`` (a, area, other
links: navigation, not needed to render the page), ``poster`` (video), ``data``
(object), ``background`` (the old ``background`` attribute), ``style-url`` (``url()``
in a ``style`` attribute, a ``<style>`` element or a CSS part), ``import`` (CSS
``@import``) and ``base`` (``<base href>``).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser

INLINE_KINDS = frozenset(
    {"src", "frame", "srcset", "stylesheet", "icon", "poster", "data", "background", "style-url", "import"}
)
"""Kinds whose target is needed to render the page (an ``href`` link is not)."""


@dataclass(frozen=True)
class Reference:
    """One URI written in an HTML or CSS text.

    ``url`` is the value as written with HTML entities (or CSS escapes) decoded and
    nothing else changed; ``text[start:end]`` is its raw source text.
    """

    url: str
    start: int
    end: int
    kind: str
    element: str | None = None

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

# A marked section's keyword as _markupbase reads it, and the keywords it knows.
_MARKED_SECTION = re.compile(r"<!\[([a-zA-Z][-_.a-zA-Z0-9]*)?")
_MARKED_SECTION_KEYWORDS = frozenset({"temp", "cdata", "ignore", "include", "rcdata", "if", "else", "endif"})


class _Collector(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text = text
        self.line_starts = [0]
        for m in re.finditer("\n", text):
            self.line_starts.append(m.end())
        self.refs: list[Reference] = []
        self.base: str | None = None
        self.base_seen = False
        self._style_start: int | None = None
        self._style_parts: list[str] = []

    def _offset(self) -> int:
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raw = self.get_starttag_text() or ""
        start = self._offset()
        name, scanned = _scan_attrs(raw, start)
        if name:
            self._collect(name, scanned)
        if tag == "style":
            self._style_start = None
            self._style_parts = []

    def parse_html_declaration(self, i: int) -> int:
        # html.parser reads "<![" as an SGML marked section and raises AssertionError on
        # a keyword it does not know ("<![x[", "<![ if"); HTML reads any such "<![" as a
        # bogus comment up to the next ">" (HTML §13.2.5.42), which html.parser has too.
        m = _MARKED_SECTION.match(self.rawdata, i)
        if m is not None and (m.group(1) or "").lower() not in _MARKED_SECTION_KEYWORDS:
            return self.parse_bogus_comment(i)
        return super().parse_html_declaration(i)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raw = self.get_starttag_text() or ""
        name, scanned = _scan_attrs(raw, self._offset())
        if name:
            self._collect(name, scanned)

    def handle_data(self, data: str) -> None:
        if self.lasttag == "style" and self.cdata_elem == "style":
            if self._style_start is None:
                self._style_start = self._offset()
            self._style_parts.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._flush_style()

    def close(self) -> None:
        super().close()
        self._flush_style()

    def _flush_style(self) -> None:
        if self._style_start is not None:
            css = "".join(self._style_parts)
            shift = self._style_start
            # html.parser hands raw text for <style>: offsets map one to one.
            if self.text[shift : shift + len(css)] == css:
                for r in css_references(css):
                    self.refs.append(
                        Reference(r.url, r.start + shift, r.end + shift, r.kind, "style")
                    )
        self._style_start = None
        self._style_parts = []

    def _add(self, attr: _Attr, kind: str, element: str) -> None:
        if attr.value is None:
            return
        raw = self.text[attr.raw_start : attr.raw_end]
        url, offsets = _unescape_with_map(raw)
        start, end = _mapped(0, len(url), offsets, attr.raw_start)
        self.refs.append(Reference(url, start, end, kind, element))

    def _collect(self, name: str, attrs: list[_Attr]) -> None:
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
            elif n == "srcset" and name in ("img", "source") and a.value is not None:
                raw = self.text[a.raw_start : a.raw_end]
                value, offsets = _unescape_with_map(raw)
                for s, e in _srcset_candidates(value):
                    rs, re_ = _mapped(s, e, offsets, a.raw_start)
                    self.refs.append(Reference(value[s:e], rs, re_, "srcset", name))
            elif n in ("href", "xlink:href") and name in _SVG_HREF_ELEMENTS:
                self._add(a, "src", name)
            elif n == "href":
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
            elif n == "background" and name in ("body", "table", "td", "th"):
                self._add(a, "background", name)


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
            if m.start() > 0 and (css[m.start() - 1].isalnum() or css[m.start() - 1] in "-_\\"):
                pos = m.end()
                continue
            pos = _image_set(css, m.end(), refs)
            continue
        if tok.lower() == "url(":
            # "url(" must start an identifier: not preceded by a name character
            if m.start() > 0 and (css[m.start() - 1].isalnum() or css[m.start() - 1] in "-_\\"):
                pos = m.end()
                continue
            kind = "style-url"
            r, pos = _url_token(css, m.end(), kind)
            if r:
                refs.append(r)
            continue
        # @import
        i = m.end()
        if i < n and (css[i].isalnum() or css[i] in "-_"):
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
        elif css[i : i + 4].lower() == "url(" and not (css[i - 1].isalnum() or css[i - 1] in "-_\\"):
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
