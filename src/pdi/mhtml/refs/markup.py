"""How a browser splits HTML into markup and text (WHATWG HTML §13.2.5, §13.2.6), for html.parser.

The tables, patterns and raw-text scanners :class:`pdi.mhtml.refs.collector.Collector`
corrects html.parser with (see :mod:`pdi.mhtml.refs`), and the reading of a start tag's
attributes in place. Pure: no I/O.
"""

from __future__ import annotations

import re

from pdi._ascii import ascii_lower
from pdi.errors import LimitError
from pdi.mhtml.limits import MAX_ATTRIBUTES, Budget

# The runs of white space and "/" between a tag's name and attributes end each pattern below in a
# possessive "*+": Python's regular expressions keep some 150 octets for each repetition of a group
# that may be given back, so "(?:\s|/(?!>))*" over 20 MB of spaces in one tag took 3 GB (nothing after
# the run can fail, so giving none back changes no match).

# The attribute grammar of html.parser (attrfind_tolerant), with the value groups split,
# and with HTML's white space (ASCII: tab, LF, FF, CR, space) where html.parser has
# Python's \s, which also matches U+00A0 and U+0085 (a browser keeps those in a value).
_ATTR = re.compile(
    r"""((?<=['"\t\n\f\r /])[^\t\n\f\r />][^\t\n\f\r /=>]*)"""
    r"""([\t\n\f\r ]*=+[\t\n\f\r ]*('([^']*)'|"([^"]*)"|(?!['"])([^>\t\n\f\r ]*)))?(?:[\t\n\f\r ]|/(?!>))*+"""
)
_TAGNAME = re.compile(r"<([a-zA-Z][^\t\n\r\f />\x00]*)(?:[\t\n\f\r ]|/(?!>))*+")


class Attr:
    """An attribute of a start tag: its name, and where its value is in the text
    (``valued`` False: no value, ``raw_start == raw_end``)."""

    __slots__ = ("name", "raw_end", "raw_start", "valued")

    def __init__(self, name: str, valued: bool, raw_start: int, raw_end: int) -> None:
        self.name = name
        self.valued = valued
        self.raw_start = raw_start
        self.raw_end = raw_end


def too_many_attributes(budget: Budget | None, at: int) -> LimitError:
    """The refusal of a start tag (at character ``at``) with more than :data:`MAX_ATTRIBUTES` attributes."""
    what = budget.what if budget is not None else "the HTML text"
    return LimitError(
        f"reading {what}: the start tag at character {at:,} has more than {MAX_ATTRIBUTES:,} attributes"
        " (the limit for one tag)"
    )


def scan_attrs(text: str, start: int, end: int, budget: Budget | None = None) -> tuple[str, list[Attr]]:
    """The name and attributes of the start tag ``text[start:end]``, read in place (no
    copy of the tag); ``budget`` is charged once an attribute. More than
    :data:`~pdi.mhtml.limits.MAX_ATTRIBUTES` attributes is a :class:`~pdi.errors.LimitError`."""
    m = _TAGNAME.match(text, start, end)
    if not m:
        return "", []
    name = ascii_lower(m.group(1))
    attrs: list[Attr] = []
    k = m.end()
    while k < end:
        a = _ATTR.match(text, k, end)
        if not a:
            break
        if len(attrs) >= MAX_ATTRIBUTES:
            raise too_many_attributes(budget, start)
        if budget is not None:
            budget.tick()
        attr_name = ascii_lower(a.group(1))
        if a.group(2) is None:
            attrs.append(Attr(attr_name, False, a.end(1), a.end(1)))
        else:
            for g in (4, 5, 6):
                if a.start(g) >= 0:
                    attrs.append(Attr(attr_name, True, a.start(g), a.end(g)))
                    break
        k = a.end()
    return name, attrs



# --- how a browser splits HTML into markup and text (WHATWG HTML §13.2.5, §13.2.6) ------
#
# html.parser is a tolerant tokenizer, not HTML's: where the two disagree, a tag the
# browser sees could be hidden from us (inside what html.parser takes for a comment, a
# marked section or the text of a <style>), and a reference in it would be left as it
# was. The rules below bring it to the browser's reading wherever hiding is possible;
# where only the other way is (html.parser sees a tag in what a browser takes for text),
# that is kept: a reference too many is rewritten, never one too few.

RAW_TEXT = frozenset(
    {"script", "style", "xmp", "iframe", "noembed", "noframes", "noscript", "title", "textarea", "plaintext"}
)
"""HTML elements whose content is text up to their end tag (script data, RAWTEXT, RCDATA, PLAINTEXT)."""
BREAKOUT = frozenset(
    {
        "b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em", "embed",
        "h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing", "menu", "meta", "nobr",
        "ol", "p", "pre", "ruby", "s", "small", "span", "strong", "strike", "sub", "sup", "table", "tt", "u",
        "ul", "var",
    }
)
"""Start tags that end foreign content (§13.2.6.5), as ``font`` does with color, face or size."""
SVG_HTML_POINTS = frozenset({"foreignobject", "desc", "title"})
MATH_TEXT_POINTS = frozenset({"mi", "mo", "mn", "ms", "mtext"})
_END_FOLLOW = r"(?=[\t\n\f\r />])"
_SCRIPT_DATA = re.compile(r"<!--|</script" + _END_FOLLOW, re.I | re.A)
_SCRIPT_ESCAPED = re.compile(r"-->|</script" + _END_FOLLOW + r"|<script" + _END_FOLLOW, re.I | re.A)
DASHES_GT = re.compile(r"-{0,2}>")
COMMENT_END = re.compile(r"--!?>")
GT = re.compile(">")
CDATA_END = re.compile(r"\]\]>")
NOT_PLAIN = re.compile(
    r"<(?:(?=(?:"
    + "|".join("".join(f"[{c}{c.upper()}]" for c in name) for name in sorted(RAW_TEXT | {"svg", "math"}))
    + r")>)|(?!/?[a-zA-Z][a-zA-Z0-9]*+>))"
)
"""The first ``<`` that does not begin a plainly written end tag (``</div>``) or start tag
without attributes (``<p>``) other than those of raw text elements, ``<svg>`` and
``<math>``. Outside foreign content, the text and tags before it hold no reference and
change nothing the collector tracks, so a page of a million lines or paragraphs is passed
over in one search."""
STARTTAGOPEN = re.compile("<[a-zA-Z]")
# html.parser's own grammar of a tag's name and a start tag's attributes (Python 3.11's tagfind_tolerant
# and attrfind_tolerant, each ending in a possessive run: see above), for its rule that a tag whose
# attributes stop short of its ">" is text, and its reading of an end tag.
TAGFIND = re.compile(r"([a-zA-Z][^\t\n\r\f />\x00]*)(?:\s|/(?!>))*+")
ATTRFIND = re.compile(
    r"""((?<=['"\s/])[^\s/>][^\s/=>]*)(\s*=+\s*('[^']*'|"[^"]*"|(?!['"])[^>\s]*))?(?:\s|/(?!>))*+"""
)
#: What html.parser's locatestarttagend_tolerant reads between a start tag's name and its first attribute.
SLASHES_AND_SPACE = re.compile(r"[\s/]*+")
SPACE = re.compile(r"\s*+")


def run_end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where a run of ``pattern`` (one that matches the empty string too) that begins at ``pos`` ends."""
    m = pattern.match(text, pos)
    return pos if m is None else m.end()

#: An end tag html.parser reads plainly (its endtagfind).
ENDTAGFIND = re.compile(r"</\s*([a-zA-Z][-.a-zA-Z0-9:_]*)\s*>")


class _At:
    """A match-like position, for html.parser's ``interesting.search(...).start()``."""

    def __init__(self, index: int) -> None:
        self._index = index

    def start(self) -> int:
        return self._index


class Next:
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


class RawTextEnd:
    """Finds where the text of a raw text element ends, as HTML's tokenizer does: at
    ``</name`` followed by white space, ``/`` or ``>`` (§13.2.5.11 and the like), a
    script's as :func:`_script_end` says, a ``<plaintext>``'s never."""

    def __init__(self, element: str, budget: Budget) -> None:
        self.element = element
        self.budget = budget
        self._end = re.compile("</" + re.escape(element) + _END_FOLLOW, re.I | re.A)

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


