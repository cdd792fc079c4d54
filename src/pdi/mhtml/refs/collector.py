"""The references of an HTML text: html.parser's main loop, driven and corrected to a browser's reading (see :mod:`pdi.mhtml.refs`).

Pure: no I/O.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from pdi._ascii import ascii_lower
from pdi.errors import LimitError
from pdi.mhtml.limits import MAX_ATTRIBUTES, Budget
from pdi.mhtml.refs.css import css_urls
from pdi.mhtml.refs.markup import (
    ATTRFIND,
    BREAKOUT,
    CDATA_END,
    COMMENT_END,
    DASHES_GT,
    ENDTAGFIND,
    GT,
    MATH_TEXT_POINTS,
    NOT_PLAIN,
    RAW_TEXT,
    SLASHES_AND_SPACE,
    SPACE,
    STARTTAGOPEN,
    SVG_HTML_POINTS,
    TAGFIND,
    Attr,
    Next,
    RawTextEnd,
    run_end,
    scan_attrs,
    too_many_attributes,
)
from pdi.mhtml.refs.reference import (
    OffsetMap,
    Reference,
    mapped_range,
    refresh_url,
    srcset_candidates,
    unescape_with_map,
)
from pdi.passages.scan import unescape

_SRC_ELEMENTS = frozenset({"img", "script", "input", "embed", "audio", "video", "source", "track"})
_SVG_HREF_ELEMENTS = frozenset({"image", "use", "feimage"})  # inline SVG: href / xlink:href
_ICON_RELS = frozenset({"icon", "shortcut", "apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon"})


_TABLE_BACKGROUND = frozenset({"body", "table", "thead", "tbody", "tfoot", "tr", "td", "th"})
#: SVG's animation elements that set an attribute to values of their own (SMIL Animation §3.2.2): a ``<set>`` or an
#: ``<animate>`` of ``href`` makes its element a link, or an image, to a URL no ``href`` attribute holds.
_SVG_ANIMATIONS = frozenset({"set", "animate"})
#: Their attributes that hold the values set (``values``: a list, separated by ``;``).
_ANIMATION_VALUES = frozenset({"to", "from", "by", "values"})
_SVG_URL_ATTRIBUTES = frozenset(
    {"fill", "stroke", "filter", "clip-path", "mask", "marker-start", "marker-mid", "marker-end", "cursor"}
)
MAX_SRCDOC_DEPTH = 16
"""How deeply ``<iframe srcdoc>`` documents may nest (deeper is a :class:`~pdi.errors.LimitError`)."""



class Collector(HTMLParser):
    """Collects the references of an HTML text.

    Besides html.parser's own reading it follows HTML's tokenizer for comments, ``<!``
    and raw text (above), and the tree builder as far as namespaces go: inside ``<svg>``
    and ``<math>`` no element holds raw text (an SVG ``<style>``'s text is CSS all the
    same), ``<![CDATA[`` opens a CDATA section, and the elements of :data:`BREAKOUT`
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
        self._next_gt = Next(text, GT)
        self._next_comment_end = Next(text, COMMENT_END)
        self._next_cdata_end = Next(text, CDATA_END)
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
        reference and change no state here (up to :data:`NOT_PLAIN`, outside foreign
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
                    plain = NOT_PLAIN.search(rawdata, i)
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
            if STARTTAGOPEN.match(rawdata, i):
                if self._next_gt(i + 2)[0] < 0:
                    # No ">" is left: a browser reads all the rest as this tag, dropped at the
                    # end of the input (§13.2.5.6-.38: every tag state ends only at ">" or
                    # there), so nothing after it is markup. (html.parser would look again
                    # from each "<" after it, each time to the end.)
                    break
                k = self.parse_starttag(i)
                if k < 0:
                    # The input ends inside the tag (in an attribute value whose quote never
                    # closes, or before its ">"): a browser drops it and all after it, as
                    # above; html.parser would read its "<" as text and look again.
                    break
            elif startswith("<!--", i):
                k = self.parse_comment(i)
                if k < 0:
                    break  # a comment runs to the end of the input (§13.2.5.43-.52: "EOF in comment")
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

    def _attributes_end(self, i: int, j: int) -> int:
        """Where the attributes of the tag at ``i`` from ``j`` on end, as html.parser's tolerant grammar reads
        them: after its ">" or "/>"; the end of the text when the input ends inside the tag; -1 otherwise."""
        rawdata = self.rawdata
        j = run_end(SPACE, rawdata, self._past_attributes(i, j) or j)
        follows = rawdata[j : j + 1]
        if follows == ">":
            return j + 1
        if rawdata.startswith("/>", j):
            return j + 2
        if not follows or follows in "=/":
            return len(rawdata)  # in a quoted value that never closes, or before the tag's end
        return -1

    def _past_attributes(self, i: int, j: int) -> int | None:
        """The end of the last attribute of the tag at ``i`` read from ``j`` on (None: there is none),
        each one match of :data:`ATTRFIND`, counted and charged to the budget."""
        rawdata = self.rawdata
        last = None
        count = 0
        while (attr := ATTRFIND.match(rawdata, j)) is not None:
            count += 1
            if count > MAX_ATTRIBUTES:
                raise too_many_attributes(self.budget, i)
            self.budget.tick()
            j = last = attr.end()
        return last

    def parse_starttag(self, i: int) -> int:
        # html.parser's check_for_whole_start_tag and parse_starttag (Python 3.11) in one pass, less the
        # copies. Its locatestarttagend_tolerant read the whole tag in one match, keeping some 150 octets
        # for each attribute until it was done (a 44 MB tag of 6.5 million attributes took 3.5 GB); here
        # each attribute is one match of its own grammar, counted (MAX_ATTRIBUTES) and charged to the
        # budget. The grammar only says where the attributes stop (a tag whose attributes do not run to
        # its ">" is text, as in html.parser), and _start reads them in place.
        rawdata = self.rawdata
        name = TAGFIND.match(rawdata, i + 1)
        assert name is not None, "unexpected call to parse_starttag()"
        k = name.end()  # where html.parser's parse_starttag looks for the first attribute
        j = run_end(SLASHES_AND_SPACE, rawdata, name.end(1))  # and where check_for_whole_start_tag does
        last = self._past_attributes(i, j)  # the same attributes from k (no "/>" in one)
        if last is not None:
            j = k = last
        j = run_end(SPACE, rawdata, j)
        # check_for_whole_start_tag's reading of what follows
        follows = rawdata[j : j + 1]
        if follows == ">":
            endpos = j + 1
        elif follows == "/":
            endpos = j + 2 if rawdata.startswith("/>", j) else -1
        elif not follows or follows in "abcdefghijklmnopqrstuvwxyz=/ABCDEFGHIJKLMNOPQRSTUVWXYZ":
            endpos = -1  # the end of the input in or before an attribute value
        else:
            endpos = j if j > i else i + 1
        if endpos < 0:
            return endpos
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
        self.interesting = RawTextEnd(elem, self.budget)  # type: ignore[assignment]  # html.parser only calls .search()

    def parse_endtag(self, i: int) -> int:
        if self.cdata_elem is None:
            return self._end_tag(i)
        # Only the end tag that ends the raw text stops html.parser here (RawTextEnd).
        gt = self._next_gt(i + 2)[0]
        if gt < 0:
            return -1
        self._raw_text(self.cdata_elem, self._raw_start, self._offset())
        self.clear_cdata_mode()
        return gt + 1

    def _end_tag(self, i: int) -> int:
        """html.parser's ``parse_endtag`` (Python 3.11) outside raw text, with :data:`TAGFIND`'s possessive
        run (html.parser's own took 3 GB for 20 MB of spaces after ``</a``)."""
        rawdata = self.rawdata
        gt = self._next_gt(i + 1)[0]
        if gt < 0:
            return -1
        plain = ENDTAGFIND.match(rawdata, i)  # "</name>": its ">" is the first
        if plain is not None:
            self.handle_endtag(ascii_lower(plain.group(1)))
            return gt + 1
        name = TAGFIND.match(rawdata, i + 2)
        if name is None:
            return i + 3 if rawdata.startswith("</>", i) else self.parse_bogus_comment(i)
        # HTML's tokenizer reads an end tag's attributes as a start tag's (and drops them): a
        # quoted value may hold a ">", and the end of the input inside one drops the tag.
        end = self._attributes_end(i, name.end())
        if end == len(rawdata):
            return end
        self.handle_endtag(ascii_lower(name.group(1)))
        return gt + 1 if end < 0 else end

    def parse_comment(self, i: int, report: int = 1) -> int:
        rawdata = self.rawdata
        abrupt = DASHES_GT.match(rawdata, i + 4)  # "<!-->", "<!--->" (§13.2.5.44, .45), "<!---->"
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
        name, scanned = scan_attrs(self.text, tag_start, tag_end, self.budget)
        if not name:
            return
        namespace = self._namespace()
        if namespace != "html" and (
            name in BREAKOUT or (name == "font" and any(a.name in ("color", "face", "size") for a in scanned))
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
            elif name in RAW_TEXT and (self.scripting or name != "noscript"):  # "/>" is ignored on these
                self._raw_start = tag_end
                self._enter_raw_text(name)
            return
        self._collect(name, scanned, foreign=True)
        if self_closing:
            return
        html_point = (namespace == "svg" and name in SVG_HTML_POINTS) or (
            namespace == "math"
            and (
                name in MATH_TEXT_POINTS
                or (
                    name == "annotation-xml"
                    and any(
                        a.name == "encoding"
                        and unescape(self._value(a) or "").strip().lower() in ("text/html", "application/xhtml+xml")
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
            css, offsets = unescape_with_map(self.text[start:end])
            urls = css_urls(css, 0, len(css), self.budget)
        else:  # read in place
            offsets = None
            urls = css_urls(self.text, start, end, self.budget)
            start = 0
        for url, s, e, kind in urls:
            s, e = mapped_range(s, e, offsets, start)
            self._emit(Reference(url, s, e, kind, element, raw_text=not entities))

    def _css_value(self, attr: Attr, element: str) -> None:
        """The ``url()`` references of an attribute value that is CSS (``style``, SVG's ``fill`` …)."""
        css, offsets = unescape_with_map(self.text[attr.raw_start : attr.raw_end])
        for url, s, e, _kind in css_urls(css, 0, len(css), self.budget):
            s, e = mapped_range(s, e, offsets, attr.raw_start)
            self._emit(Reference(url, s, e, "style-url", element))

    def _nested(
        self,
        text: str,
        shift: int,
        quote: str | None,
        depth: int,
        offsets: OffsetMap | None = None,
        *,
        scripting: bool | None = None,
    ) -> None:
        """References of markup within this text: ``text`` begins at ``shift``; when it is an
        attribute value decoded with ``offsets``, ``quote`` is the value's quote character.
        The inner document's references count once, in this text's budget."""
        inner = Collector(text, self.budget, depth, scripting=self.scripting if scripting is None else scripting)
        inner.read()
        for r in inner.refs:
            s, e = mapped_range(r.start, r.end, offsets, shift)
            quoting = r.quoting if quote is None else (quote, *r.quoting)
            self.refs.append(Reference(r.url, s, e, r.kind, r.element, quoting, r.raw_text))

    # -- attributes ------------------------------------------------------------------

    def _value(self, attr: Attr | None) -> str | None:
        """The value of ``attr`` as written (``None``: no such attribute, or no value)."""
        return self.text[attr.raw_start : attr.raw_end] if attr is not None and attr.valued else None

    def _add(self, attr: Attr, kind: str, element: str) -> None:
        if not attr.valued:
            return
        raw = self.text[attr.raw_start : attr.raw_end]
        url, offsets = unescape_with_map(raw)
        start, end = mapped_range(0, len(url), offsets, attr.raw_start)
        self._emit(Reference(url, start, end, kind, element))

    def _add_list(self, attr: Attr, kind: str, element: str) -> None:
        """A value that is URLs separated by white space (``ping``)."""
        if not attr.valued:
            return
        raw = self.text[attr.raw_start : attr.raw_end]
        value, offsets = unescape_with_map(raw)
        for m in re.finditer(r"[^\t\n\f\r ]+", value):
            s, e = mapped_range(m.start(), m.end(), offsets, attr.raw_start)
            self._emit(Reference(m.group(0), s, e, kind, element))

    def _add_values(self, attr: Attr, kind: str, element: str) -> None:
        """A value that is a list separated by ``;``, each item stripped of white space (SMIL's ``values``)."""
        if not attr.valued:
            return
        raw = self.text[attr.raw_start : attr.raw_end]
        value, offsets = unescape_with_map(raw)
        for m in re.finditer(r"[^;]+", value):
            item = re.search(r"[^\t\n\f\r ](?:[^;]*[^\t\n\f\r ;])?", m.group(0))
            if item is not None:
                s, e = mapped_range(m.start() + item.start(), m.start() + item.end(), offsets, attr.raw_start)
                self._emit(Reference(item.group(0), s, e, kind, element))

    def _add_refresh(self, attr: Attr, element: str) -> None:
        if not attr.valued:
            return
        raw = self.text[attr.raw_start : attr.raw_end]
        value, offsets = unescape_with_map(raw)
        span = refresh_url(value)
        if span is not None:
            s, e = mapped_range(span[0], span[1], offsets, attr.raw_start)
            self._emit(Reference(value[span[0] : span[1]], s, e, "refresh", element))

    def _add_srcdoc(self, attr: Attr) -> None:
        if not attr.valued:
            return
        raw = self.text[attr.raw_start : attr.raw_end]
        before = self.text[attr.raw_start - 1 : attr.raw_start]
        quote = before if before in ("'", '"') else ""
        value, offsets = unescape_with_map(raw)
        self._nested(value, attr.raw_start, quote, self.depth + 1, offsets)

    def _collect(self, name: str, attrs: list[Attr], *, foreign: bool) -> None:
        seen: set[str] = set()
        first: list[Attr] = []
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
                value, offsets = unescape_with_map(raw)
                for s, e in srcset_candidates(value):
                    rs, re_ = mapped_range(s, e, offsets, a.raw_start)
                    self._emit(Reference(value[s:e], rs, re_, "srcset", name))
            elif n in ("href", "xlink:href") and name in _SVG_HREF_ELEMENTS:
                self._add(a, "src", name)
            elif n == "href" or (n == "xlink:href" and name == "a"):
                if name == "base":
                    if not self.base_seen and a.valued:
                        self.base_seen = True
                        self.base = unescape(self.text[a.raw_start : a.raw_end])
                    self._add(a, "base", name)
                elif name == "link":
                    rel_attr = by_name.get("rel")
                    rels = set(unescape(self._value(rel_attr) or "").lower().split())
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
                if equiv is not None and unescape(self._value(equiv) or "").strip().lower() == "refresh":
                    self._add_refresh(a, name)
            elif foreign and n in _SVG_URL_ATTRIBUTES and a.valued:
                self._css_value(a, name)
            elif foreign and name in _SVG_ANIMATIONS and n in _ANIMATION_VALUES and self._animates_href(by_name):
                # the animated element's link (or image, use, feImage) is these values: as its own href
                parent = self._frames[-1][1] if self._frames else ""
                kind = "src" if parent in _SVG_HREF_ELEMENTS else "href"
                (self._add_values if n == "values" else self._add)(a, kind, name)

    def _animates_href(self, by_name: dict[str, Attr]) -> bool:
        """Whether an animation element's ``attributeName`` is ``href`` or ``xlink:href``."""
        named = unescape(self._value(by_name.get("attributename")) or "").strip(" \t\n\f\r").lower()
        return named in ("href", "xlink:href")



def _collect(text: str, budget: Budget | None) -> Collector:
    c = Collector(text, budget if budget is not None else Budget("the HTML text"))
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


#: A ``base`` start tag's opening: a text without it has no ``<base>`` (a tag name is not decoded, and
#: only its ASCII letters are folded: HTML §13.2.5.8).
BASE_TAG = re.compile(r"<base", re.IGNORECASE | re.ASCII)


def html_base(html_text: str, budget: Budget | None = None) -> str | None:
    """The ``href`` of the first ``<base href>`` element (entities decoded), as written."""
    if BASE_TAG.search(html_text) is None:  # no need to scan the page again (a crawl scanned it for its references)
        return None
    return _collect(html_text, budget).base


