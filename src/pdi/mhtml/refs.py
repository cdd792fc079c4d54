"""References (URIs) inside HTML and CSS, with their source offsets (RFC 2557 §8).

HTML tokenizer: the standard library's :class:`html.parser.HTMLParser`. It is the
tokenizer ARCHITECTURE.md names, it has no dependency, it never raises on bad
markup (it is tolerant like a browser's: unclosed quotes, stray ``<``, junk
attributes), and its parts (where a start tag ends, its attribute grammar, end tags,
declarations) can be driven one construct at a time. Where it reads markup otherwise than
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
not reported by html.parser, so each start tag is read here in place, with the
parser's attribute grammar, white space being HTML's
(ASCII only: a no-break space belongs to a value); an entity in a
value (``&amp;``, ``&quot;``) is decoded in :attr:`Reference.url` while
``start``/``end`` span the raw text, so a writer can replace ``text[start:end]``.
The document in an ``<iframe srcdoc>`` value is read the same way, recursively (at
most :data:`MAX_SRCDOC_DEPTH` deep), its references given offsets in the outer text.
html5lib would give a spec-exact tree but no source offsets for attributes, and
lxml none at all; html5lib is the oracle the tests compare with.

Cost: the collector runs html.parser's main loop itself (:meth:`_Collector.goahead`),
keeping the index of what it reads instead of html.parser's line and column (which
would need a table of line starts: 36 bytes a line), passing over runs of text, end
tags and plain start tags (``<p>``) in one regular-expression search, and copying out
neither text nor tags nor attribute values except the values it reports. Memory is the
text and the references found; time is linear, and bounded: reading charges a
:class:`~pdi.mhtml.limits.Budget` (time, and references found), a
:class:`~pdi.errors.LimitError` past either.

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
from array import array
from bisect import bisect_right
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from html import parser as _html_parser
from html.parser import HTMLParser

from pdi.errors import LimitError
from pdi.mhtml.limits import Budget
from pdi.passages.scan import REFERENCE, decoded_pieces

INLINE_KINDS = frozenset(
    {"src", "frame", "srcset", "stylesheet", "icon", "poster", "data", "background", "style-url", "import"}
)
"""Kinds whose target is needed to render the page (an ``href`` link is not)."""


@dataclass(frozen=True, slots=True)
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

_SRC_ELEMENTS = frozenset({"img", "script", "input", "embed", "audio", "video", "source", "track"})
_SVG_HREF_ELEMENTS = frozenset({"image", "use", "feimage"})  # inline SVG: href / xlink:href
_ICON_RELS = frozenset({"icon", "shortcut", "apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon"})


class _OffsetMap:
    """Where each character of a text decoded from character references was in the raw
    text: ``m[i]`` for ``0 <= i <= len(decoded)`` (``m[len(decoded)]`` is ``len(raw)``).

    Every decoded character of a reference maps to where the reference starts; other
    characters map one to one. Only the references that change the text are recorded
    (where each starts, decoded and raw: two integers), so a long value costs no table
    with an entry per character.
    """

    __slots__ = ("_decoded", "_raw", "_text")

    def __init__(self, raw: str) -> None:
        self._text = raw
        self._decoded = array("q")
        self._raw = array("q")

    def __getitem__(self, i: int) -> int:
        k = bisect_right(self._decoded, i) - 1
        if k < 0:
            return i
        d, r = self._decoded[k], self._raw[k]
        m = REFERENCE.match(self._text, r)
        assert m is not None
        width = len(html.unescape(m.group(0)))
        return r if i < d + width else m.end() + (i - d - width)


def _unescape_with_map(raw: str) -> tuple[str, _OffsetMap | None]:
    """Decode HTML character references; ``offsets[i]`` is the raw index of decoded char ``i``
    (``None``: nothing was decoded, each character is where it was)."""
    if "&" not in raw:
        return raw, None
    out: list[str] = []
    offsets = _OffsetMap(raw)
    length = 0  # of the decoded text so far
    for number, (piece, start, _) in enumerate(decoded_pieces(raw, 0, len(raw))):
        if number % 2:  # a reference, decoded
            offsets._decoded.append(length)
            offsets._raw.append(start)
        out.append(piece)
        length += len(piece)
    if len(out) == 1:
        return raw, None
    return "".join(out), offsets


def _mapped(decoded_start: int, decoded_end: int, offsets: _OffsetMap | None, shift: int) -> tuple[int, int]:
    if offsets is None:
        return decoded_start + shift, decoded_end + shift
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
    """An attribute of a start tag: its name, and where its value is in the text
    (``valued`` False: no value, ``raw_start == raw_end``)."""

    __slots__ = ("name", "raw_end", "raw_start", "valued")

    def __init__(self, name: str, valued: bool, raw_start: int, raw_end: int) -> None:
        self.name = name
        self.valued = valued
        self.raw_start = raw_start
        self.raw_end = raw_end


def _scan_attrs(text: str, start: int, end: int) -> tuple[str, list[_Attr]]:
    """The name and attributes of the start tag ``text[start:end]``, read in place (no
    copy of the tag)."""
    m = _TAGNAME.match(text, start, end)
    if not m:
        return "", []
    name = m.group(1).lower()
    attrs: list[_Attr] = []
    k = m.end()
    while k < end:
        a = _ATTR.match(text, k, end)
        if not a:
            break
        attr_name = a.group(1).lower()
        if a.group(2) is None:
            attrs.append(_Attr(attr_name, False, a.end(1), a.end(1)))
        else:
            for g in (4, 5, 6):
                if a.start(g) >= 0:
                    attrs.append(_Attr(attr_name, True, a.start(g), a.end(g)))
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
_GT = re.compile(">")
_CDATA_END = re.compile(r"\]\]>")
_TABLE_BACKGROUND = frozenset({"body", "table", "thead", "tbody", "tfoot", "tr", "td", "th"})
_SVG_URL_ATTRIBUTES = frozenset(
    {"fill", "stroke", "filter", "clip-path", "mask", "marker-start", "marker-mid", "marker-end", "cursor"}
)
_NOT_PLAIN = re.compile(
    r"<(?:(?=(?:"
    + "|".join("".join(f"[{c}{c.upper()}]" for c in name) for name in sorted(_RAW_TEXT | {"svg", "math"}))
    + r")>)|(?!/?[a-zA-Z][a-zA-Z0-9]*+>))"
)
"""The first ``<`` that does not begin a plainly written end tag (``</div>``) or start tag
without attributes (``<p>``) other than those of raw text elements, ``<svg>`` and
``<math>``. Outside foreign content, the text and tags before it hold no reference and
change nothing the collector tracks, so a page of a million lines or paragraphs is passed
over in one search."""
_STARTTAGOPEN = re.compile("<[a-zA-Z]")
# html.parser's own grammar of a start tag's name and attributes (module globals in every
# version, absent from its type stubs), for its rule that a tag whose attributes stop short
# of its ">" is text.
_TAGFIND: re.Pattern[str] = vars(_html_parser)["tagfind_tolerant"]
_ATTRFIND: re.Pattern[str] = vars(_html_parser)["attrfind_tolerant"]
MAX_SRCDOC_DEPTH = 16
"""How deeply ``<iframe srcdoc>`` documents may nest (deeper is a :class:`~pdi.errors.LimitError`)."""


class _At:
    """A match-like position, for html.parser's ``interesting.search(...).start()``."""

    def __init__(self, index: int) -> None:
        self._index = index

    def start(self) -> int:
        return self._index


class _Next:
    """Where ``pattern`` next matches in ``text`` at or after a position, remembered: a search
    that found nothing answers every later question from further on at once, and one that
    found a match answers those up to it. So text with no ``>`` (or no ``-->``) left is
    searched once, not once a ``<``."""

    __slots__ = ("_end", "_from", "_pattern", "_start", "_text")

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self._text = text
        self._pattern = pattern
        self._from = len(text) + 1
        self._start = self._end = -1

    def __call__(self, pos: int) -> tuple[int, int]:
        """(start, end) of the first match at or after ``pos``; (-1, -1) when there is none."""
        if not (self._from <= pos and (self._start < 0 or self._start >= pos)):
            m = self._pattern.search(self._text, pos)
            self._from = pos
            self._start, self._end = (m.start(), m.end()) if m else (-1, -1)
        return self._start, self._end


class _RawTextEnd:
    """Finds where the text of a raw text element ends, as HTML's tokenizer does: at
    ``</name`` followed by white space, ``/`` or ``>`` (§13.2.5.11 and the like), a
    script's as :func:`_script_end` says, a ``<plaintext>``'s never."""

    def __init__(self, element: str, budget: Budget) -> None:
        self.element = element
        self.budget = budget
        self._end = re.compile("</" + re.escape(element) + _END_FOLLOW, re.I)

    def search(self, text: str, pos: int = 0) -> _At | None:
        if self.element == "plaintext":
            return None
        if self.element == "script":
            at = _script_end(text, pos, self.budget)
            return None if at < 0 else _At(at)
        m = self._end.search(text, pos)
        return None if m is None else _At(m.start())


def _script_end(text: str, pos: int, budget: Budget) -> int:
    """Index of the ``</script`` that ends a script's text, -1 if it runs to the end.

    §13.2.5.4 and §13.2.5.15–.31: after ``<!--`` the text is "escaped"; a ``<script``
    there makes it "double-escaped", where ``</script`` only goes back to escaped;
    ``-->`` goes back to plain script data.
    """
    state = 0  # 0 script data, 1 escaped, 2 double-escaped
    i = pos
    while True:
        budget.tick()
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

    def __init__(self, text: str, budget: Budget, depth: int = 0, *, scripting: bool = True) -> None:
        super().__init__(convert_charrefs=True)
        if depth > MAX_SRCDOC_DEPTH:
            raise LimitError(f"<iframe srcdoc> documents nested more than {MAX_SRCDOC_DEPTH} deep")
        self.text = text
        self.budget = budget
        self.depth = depth
        self.scripting = scripting  # off: <noscript> is markup, as a browser with scripting off reads it
        self._at = 0  # index in the text of what the tokenizer reads (see updatepos)
        self._next_gt = _Next(text, _GT)
        self._next_comment_end = _Next(text, _COMMENT_END)
        self._next_cdata_end = _Next(text, _CDATA_END)
        self.refs: list[Reference] = []
        self.base: str | None = None
        self.base_seen = False
        self._raw_start = 0  # where the text of the current raw text element begins
        self._frames: list[tuple[str, str]] = []  # (namespace of the content, element): foreign elements, integration points
        self._open: dict[str, int] = {}  # element: how many frames it has (an end tag no frame has is passed at once)
        self._svg_style = 0  # SVG <style> elements open: their text is CSS

    def _offset(self) -> int:
        return self._at

    def _emit(self, ref: Reference) -> None:
        self.budget.found()
        self.refs.append(ref)

    # -- the main loop ---------------------------------------------------------------

    def read(self) -> None:
        """Read the whole text (what ``feed`` then ``close`` do, without copying it)."""
        self.rawdata = self.text
        self.goahead(True)
        self.rawdata = ""
        if self.cdata_elem is not None:
            self._raw_text(self.cdata_elem, self._raw_start, len(self.text))
            self.clear_cdata_mode()

    def updatepos(self, i: int, j: int) -> int:
        # html.parser keeps a line and a column here (counting the line breaks of all it
        # passes); the index itself is what the offsets need.
        if i < j:
            self._at = j
        return j

    def goahead(self, end: bool) -> None:
        """html.parser's main loop (Python 3.11's ``goahead``, at the end of the input),
        with three changes: runs of text and of start and end tags that can hold no
        reference and change no state here (up to :data:`_NOT_PLAIN`, outside foreign
        content) are passed over in one step; text is not copied out (only an SVG ``<style>``'s
        is read, as CSS, in place); the budget is charged once a step."""
        rawdata = self.rawdata
        budget = self.budget
        i = 0
        n = len(rawdata)
        while i < n:
            budget.tick()
            if self.cdata_elem is None:
                if not self._frames:
                    plain = _NOT_PLAIN.search(rawdata, i)
                    i = self._at = n if plain is None else plain.start()
                    if i == n:
                        break
                j = rawdata.find("<", i)
                if j < 0:
                    j = n
            else:
                match = self.interesting.search(rawdata, i)
                if match is None:
                    break  # the raw text runs to the end: read() reads it
                j = match.start()
            if i < j:
                self._text(i)
            i = self.updatepos(i, j)
            if i == n:
                break
            startswith = rawdata.startswith
            if _STARTTAGOPEN.match(rawdata, i):
                if self._next_gt(i + 2)[0] < 0:
                    # No ">" is left: a browser reads all the rest as this tag, dropped at the
                    # end of the input (§13.2.5.6-.38: every tag state ends only at ">" or
                    # there), so nothing after it is markup. (html.parser would look again
                    # from each "<" after it, each time to the end.)
                    break
                k = self.parse_starttag(i)
            elif startswith("<!--", i):
                k = self.parse_comment(i)
            elif startswith(("</", "<?", "<!"), i) and not startswith("<![", i) and self._next_gt(i + 2)[0] < 0:
                k = -1  # an end tag, a processing instruction, a declaration: each ends at a ">", and none is left
            elif startswith("</", i):
                k = self.parse_endtag(i)
            elif startswith("<?", i):
                k = self.parse_pi(i)
            elif startswith("<!", i):
                k = self.parse_html_declaration(i)
            elif (i + 1) < n:
                self._text(i)
                k = i + 1
            else:
                break
            if k < 0:
                k = self._next_gt(i + 1)[0]
                if k < 0:
                    k = rawdata.find("<", i + 1)
                    if k < 0:
                        k = i + 1
                else:
                    k += 1
                self._text(i)
            i = self.updatepos(i, k)
        if i < n and self.cdata_elem is None:
            self._text(i)
            i = self.updatepos(i, n)

    def parse_starttag(self, i: int) -> int:
        # html.parser's, less the copies: it takes the tag and each attribute's value out
        # of the text and decodes them; here its own attribute grammar only says where the
        # attributes stop (a tag whose attributes do not run to its ">" is text, as in
        # html.parser), and _start reads them in place.
        endpos = self.check_for_whole_start_tag(i)
        if endpos < 0:
            return endpos
        rawdata = self.rawdata
        name = _TAGFIND.match(rawdata, i + 1)
        assert name is not None, "unexpected call to parse_starttag()"
        k = name.end()
        while k < endpos:
            attr = _ATTRFIND.match(rawdata, k)
            if not attr:
                break
            k = attr.end()
        end = rawdata[k:endpos].strip()
        if end not in (">", "/>"):
            self._text(i)
        else:
            self._start(i, endpos, self_closing=end.endswith("/>"))
        return endpos

    def _namespace(self) -> str:
        return self._frames[-1][0] if self._frames else "html"

    def _push(self, frame: tuple[str, str]) -> None:
        self._frames.append(frame)
        self._open[frame[1]] = self._open.get(frame[1], 0) + 1
        if frame == ("svg", "style"):
            self._svg_style += 1

    def _pop_to(self, depth: int) -> None:
        """Close the frames from ``depth`` up."""
        while len(self._frames) > depth:
            frame = self._frames.pop()
            self._open[frame[1]] -= 1
            if frame == ("svg", "style"):
                self._svg_style -= 1

    def _leave_foreign(self) -> None:
        depth = len(self._frames)
        while depth and self._frames[depth - 1][0] != "html":
            depth -= 1
        self._pop_to(depth)

    # -- the tokenizer ----------------------------------------------------------------

    def set_cdata_mode(self, elem: str, *, escapable: bool = False) -> None:
        """html.parser's own call after ``<script>`` or ``<style>``: ignored, raw text is
        entered in :meth:`_start`, where the namespace is known."""

    def _enter_raw_text(self, elem: str) -> None:
        self.cdata_elem = elem
        self.interesting = _RawTextEnd(elem, self.budget)  # type: ignore[assignment]

    def parse_endtag(self, i: int) -> int:
        if self.cdata_elem is None:
            return super().parse_endtag(i)
        # Only the end tag that ends the raw text stops html.parser here (_RawTextEnd).
        gt = self._next_gt(i + 2)[0]
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
        return self._next_comment_end(i + 4)[1]  # "-->" or "--!>" (§13.2.5.50, .52)

    def parse_html_declaration(self, i: int) -> int:
        rawdata = self.rawdata
        if not rawdata.startswith("<![", i):
            return int(super().parse_html_declaration(i))
        # A bogus comment up to the first ">" (§13.2.5.42), except "<![CDATA[" in foreign
        # content, a CDATA section up to "]]>": in an SVG <style> its text is CSS and is read
        # so here, but what follows the first ">" is read as markup all the same, so that
        # mistaking where foreign content ends hides nothing.
        gt = self._next_gt(i + 3)[0]
        if self._svg_style and self._namespace() == "svg" and rawdata.startswith("<![CDATA[", i):
            end = self._next_cdata_end(i + 9)[0]
            shift = self._offset() - i
            self._css(shift + i + 9, shift + (len(rawdata) if end < 0 else end), "style", entities=False)
        return -1 if gt < 0 else gt + 1

    # -- the tree builder, as far as namespaces go -------------------------------------

    def _start(self, tag_start: int, tag_end: int, *, self_closing: bool) -> None:
        name, scanned = _scan_attrs(self.text, tag_start, tag_end)
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
                    self._push((name, name))
            elif name in _RAW_TEXT and (self.scripting or name != "noscript"):  # "/>" is ignored on these
                self._raw_start = tag_end
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
                        and html.unescape(self._value(a) or "").strip().lower() in ("text/html", "application/xhtml+xml")
                        for a in scanned
                    )
                )
            )
        )
        self._push(("html" if html_point else namespace, name))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("p", "br") and self._namespace() != "html":
            self._leave_foreign()  # §13.2.6.5: "</br>" and "</p>" in foreign content
            return
        if not self._open.get(tag):
            return
        for depth in range(len(self._frames) - 1, -1, -1):
            if self._frames[depth][1] == tag:
                self._pop_to(depth)
                return

    def _text(self, start: int) -> None:
        """Text begins at ``start`` (html.parser's ``handle_data``, without the text)."""
        if self.cdata_elem is None and self._svg_style and self._namespace() == "svg":
            end = self.text.find("<", start)
            self._css(start, len(self.text) if end < 0 else end, "style", entities=True)

    def _raw_text(self, element: str, start: int, end: int) -> None:
        """The text of a raw text element, from ``start`` to ``end``, is over."""
        if element == "style":
            self._css(start, end, "style", entities=False)
        elif element == "noscript" and start < end:
            # A browser with scripting off reads it as markup: its references count too.
            self._nested(self.text[start:end], start, None, self.depth, scripting=False)

    def _css(self, start: int, end: int, element: str, *, entities: bool) -> None:
        if entities:
            css, offsets = _unescape_with_map(self.text[start:end])
            urls = _css_urls(css, 0, len(css), self.budget)
        else:  # read in place
            offsets = None
            urls = _css_urls(self.text, start, end, self.budget)
            start = 0
        for url, s, e, kind in urls:
            s, e = _mapped(s, e, offsets, start)
            self._emit(Reference(url, s, e, kind, element, raw_text=not entities))

    def _css_value(self, attr: _Attr, element: str) -> None:
        """The ``url()`` references of an attribute value that is CSS (``style``, SVG's ``fill`` …)."""
        css, offsets = _unescape_with_map(self.text[attr.raw_start : attr.raw_end])
        for url, s, e, _kind in _css_urls(css, 0, len(css), self.budget):
            s, e = _mapped(s, e, offsets, attr.raw_start)
            self._emit(Reference(url, s, e, "style-url", element))

    def _nested(
        self,
        text: str,
        shift: int,
        quote: str | None,
        depth: int,
        offsets: _OffsetMap | None = None,
        *,
        scripting: bool | None = None,
    ) -> None:
        """References of markup within this text: ``text`` begins at ``shift``; when it is an
        attribute value decoded with ``offsets``, ``quote`` is the value's quote character.
        The inner document's references count once, in this text's budget."""
        inner = _Collector(text, self.budget, depth, scripting=self.scripting if scripting is None else scripting)
        inner.read()
        for r in inner.refs:
            s, e = _mapped(r.start, r.end, offsets, shift)
            quoting = r.quoting if quote is None else (quote, *r.quoting)
            self.refs.append(Reference(r.url, s, e, r.kind, r.element, quoting, r.raw_text))

    # -- attributes ------------------------------------------------------------------

    def _value(self, attr: _Attr | None) -> str | None:
        """The value of ``attr`` as written (``None``: no such attribute, or no value)."""
        return self.text[attr.raw_start : attr.raw_end] if attr is not None and attr.valued else None

    def _add(self, attr: _Attr, kind: str, element: str) -> None:
        if not attr.valued:
            return
        raw = self.text[attr.raw_start : attr.raw_end]
        url, offsets = _unescape_with_map(raw)
        start, end = _mapped(0, len(url), offsets, attr.raw_start)
        self._emit(Reference(url, start, end, kind, element))

    def _add_list(self, attr: _Attr, kind: str, element: str) -> None:
        """A value that is URLs separated by white space (``ping``)."""
        if not attr.valued:
            return
        raw = self.text[attr.raw_start : attr.raw_end]
        value, offsets = _unescape_with_map(raw)
        for m in re.finditer(r"[^\t\n\f\r ]+", value):
            s, e = _mapped(m.start(), m.end(), offsets, attr.raw_start)
            self._emit(Reference(m.group(0), s, e, kind, element))

    def _add_refresh(self, attr: _Attr, element: str) -> None:
        if not attr.valued:
            return
        raw = self.text[attr.raw_start : attr.raw_end]
        value, offsets = _unescape_with_map(raw)
        span = refresh_url(value)
        if span is not None:
            s, e = _mapped(span[0], span[1], offsets, attr.raw_start)
            self._emit(Reference(value[span[0] : span[1]], s, e, "refresh", element))

    def _add_srcdoc(self, attr: _Attr) -> None:
        if not attr.valued:
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
            if n == "style" and a.valued:
                self._css_value(a, name)
            elif n == "src":
                if name in ("frame", "iframe"):
                    self._add(a, "frame", name)
                elif name in _SRC_ELEMENTS:
                    self._add(a, "src", name)
            elif n == "srcdoc" and name == "iframe":
                self._add_srcdoc(a)
            elif (n == "srcset" and name in ("img", "source")) or (n == "imagesrcset" and name == "link"):
                if not a.valued:
                    continue
                raw = self.text[a.raw_start : a.raw_end]
                value, offsets = _unescape_with_map(raw)
                for s, e in _srcset_candidates(value):
                    rs, re_ = _mapped(s, e, offsets, a.raw_start)
                    self._emit(Reference(value[s:e], rs, re_, "srcset", name))
            elif n in ("href", "xlink:href") and name in _SVG_HREF_ELEMENTS:
                self._add(a, "src", name)
            elif n == "href" or (n == "xlink:href" and name == "a"):
                if name == "base":
                    if not self.base_seen and a.valued:
                        self.base_seen = True
                        self.base = html.unescape(self.text[a.raw_start : a.raw_end])
                    self._add(a, "base", name)
                elif name == "link":
                    rel_attr = by_name.get("rel")
                    rels = set(html.unescape(self._value(rel_attr) or "").lower().split())
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
                if equiv is not None and html.unescape(self._value(equiv) or "").strip().lower() == "refresh":
                    self._add_refresh(a, name)
            elif foreign and n in _SVG_URL_ATTRIBUTES and a.valued:
                self._css_value(a, name)


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


def _collect(text: str, budget: Budget | None) -> _Collector:
    c = _Collector(text, budget if budget is not None else Budget("the HTML text"))
    c.read()
    return c


def scan_html(html_text: str, budget: Budget | None = None) -> tuple[list[Reference], str | None]:
    """:func:`html_references` and :func:`html_base` in one pass over the text.

    ``budget`` bounds the time and the references (a :class:`~pdi.errors.LimitError`
    naming what it reads past either); by default :data:`~pdi.mhtml.limits.MAX_READ_SECONDS`
    and :data:`~pdi.mhtml.limits.MAX_REFERENCES`.
    """
    c = _collect(html_text, budget)
    c.refs.sort(key=lambda r: r.start)
    return c.refs, c.base


def html_references(html_text: str, budget: Budget | None = None) -> list[Reference]:
    """Every URI reference in an HTML text, in source order, with its source offsets
    (``budget`` as for :func:`scan_html`)."""
    return scan_html(html_text, budget)[0]


def html_base(html_text: str, budget: Budget | None = None) -> str | None:
    """The ``href`` of the first ``<base href>`` element (entities decoded), as written."""
    return _collect(html_text, budget).base


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


def _string_end(css: str, pos: int, n: int) -> int:
    """Index of the closing quote of the string whose opening quote is at ``pos`` (or ``n``)."""
    quote = css[pos]
    i = pos + 1
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


def css_references(css: str, budget: Budget | None = None) -> list[Reference]:
    """Every ``url()`` and ``@import`` reference in a CSS text, with its source offsets
    (``budget`` as for :func:`scan_html`)."""
    if budget is None:
        budget = Budget("the CSS text")
    refs: list[Reference] = []
    for url, start, end, kind in _css_urls(css, 0, len(css), budget):
        budget.found()
        refs.append(Reference(url, start, end, kind, None))
    return refs


_Url = tuple[str, int, int, str]  # url, start, end, kind


def _css_urls(css: str, pos: int, n: int, budget: Budget) -> Iterator[_Url]:
    """The references of the CSS text ``css[pos:n]``, read in place: (url, start, end, kind)."""
    lo = pos
    while True:
        budget.tick()
        m = _CSS_TOKEN.search(css, pos, n)
        if not m:
            break
        tok = m.group(0)
        if tok == "/*":
            end = css.find("*/", m.end(), n)
            pos = n if end < 0 else end + 2
            continue
        if tok in ("'", '"'):
            pos = _string_end(css, m.start(), n) + 1
            continue
        if tok.lower().endswith("image-set("):
            # image-set("a.png" 1x, url(b.png) 2x): its strings are URLs too (CSS Images 4)
            if m.start() > lo and _continues_name(css[m.start() - 1]):
                pos = m.end()
                continue
            pos = yield from _image_set(css, m.end(), n, budget)
            continue
        if tok.lower() == "url(":
            # "url(" must start an identifier: not preceded by a name character
            if m.start() > lo and _continues_name(css[m.start() - 1]):
                pos = m.end()
                continue
            r, pos = _url_token(css, m.end(), n, "style-url")
            if r:
                yield r
            continue
        # @import
        i = m.end()
        if i < n and _continues_name(css[i]) and css[i] != "\\":
            pos = i
            continue
        while i < n and css[i] in _CSS_WS:
            i += 1
        if i < n and css[i] in "'\"":
            end = _string_end(css, i, n)
            yield _css_unescape(css[i + 1 : end]), i + 1, end, "import"
            pos = end + 1
        elif css[i : min(i + 4, n)].lower() == "url(":
            r, pos = _url_token(css, i + 4, n, "import")
            if r:
                yield r
        else:
            pos = i


def _image_set(css: str, pos: int, n: int, budget: Budget) -> Generator[_Url, None, int]:
    """Yield the URLs of an ``image-set(`` whose arguments start at ``pos``; returns the end."""
    depth = 0
    i = pos
    while i < n:
        budget.tick()
        c = css[i]
        if c in "'\"":
            end = _string_end(css, i, n)
            if depth == 0:
                yield _css_unescape(css[i + 1 : end]), i + 1, end, "style-url"
            i = end + 1
        elif css.startswith("/*", i, n):
            end = css.find("*/", i + 2, n)
            i = n if end < 0 else end + 2
        elif css[i : min(i + 4, n)].lower() == "url(" and not _continues_name(css[i - 1]):
            r, i = _url_token(css, i + 4, n, "style-url")
            if r:
                yield r
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


def _url_token(css: str, pos: int, n: int, kind: str) -> tuple[_Url | None, int]:
    i = pos
    while i < n and css[i] in _CSS_WS:
        i += 1
    if i < n and css[i] in "'\"":
        end = _string_end(css, i, n)
        close = css.find(")", end, n)
        return (_css_unescape(css[i + 1 : end]), i + 1, end, kind), (n if close < 0 else close + 1)
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
    return (_css_unescape(css[start:end]), start, end, kind), i + 1
