"""References in CSS, with their source offsets (see :mod:`pdi.mhtml.refs`).

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator

from pdi.mhtml.limits import Budget
from pdi.mhtml.refs.reference import Reference

#: An escape as a string's or a name's value reads it (CSS Syntax 3 §4.3.7): up to six hex digits and one white
#: space after them (CR LF one: §3.3 makes it an LF before anything is read), a newline (in a string: nothing, the
#: string goes on), or any other character.
_CSS_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})(?:\r\n|[ \t\n\r\f])?|(\r\n|[\n\r\f])|(.))", re.S)
#: Where an escape ends, from its backslash (as :data:`_CSS_ESCAPE` reads it).
_ESCAPE_END = re.compile(r"\\(?:[0-9a-fA-F]{1,6}(?:\r\n|[ \t\n\r\f])?|\r\n|.)?", re.S)


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
    """Index of the closing quote of the string whose opening quote is at ``pos``, or of the newline that ends it
    unclosed (CSS Syntax 3 §4.3.5: LF, CR or FF, §3.3), or ``n``. An escape is passed over whole (§4.3.7): its hex
    digits and the one white space after them, a CR LF after a backslash as one newline."""
    quote = css[pos]
    i = pos + 1
    while i < n:
        c = css[i]
        if c == "\\":
            escape = _ESCAPE_END.match(css, i, n)
            assert escape is not None  # (the backslash at least)
            i = max(escape.end(), i + 1)
            continue
        if c == quote or c in "\n\r\f":
            return i
        i += 1
    return n


def _continues_name(ch: str) -> bool:
    """``ch`` belongs to a CSS name (CSS Syntax 3 §4.2: ident code points are letters,
    digits, ``-``, ``_`` and every non-ASCII code point; ``\\`` starts an escape in one):
    "url(" right after it is part of a longer function name, not a URL."""
    return not ch.isascii() or ch.isalnum() or ch in "-_\\"


#: A CSS escape (CSS Syntax 3 §4.3.7): up to six hex digits and one white space after them, or any other
#: character but a line end.
_ESC = r"\\(?:[0-9a-fA-F]{1,6}(?:\r\n|[ \t\n\r\f])?|[^\n\r\f0-9a-fA-F])"
#: A name holding an escape, as far as ``url``, ``image-set``, ``-webkit-image-set`` or ``import`` could be
#: written with escapes: a browser reads ``u\72l(`` as ``url(`` (§4.3.4 compares the name's value, escapes
#: undone). Bounded on both sides of its first escape, so that a long run of letters or escapes costs a look
#: of at most this length at each place, never a look to its end.
_ESCAPED_NAME = rf"[A-Za-z-]{{0,17}}{_ESC}(?:[A-Za-z-]|{_ESC}){{0,17}}"

# The lookahead names every first character: re then skips to one of them (four times the speed of
# trying each alternative at every character of a style sheet). re.A: names are compared in ASCII (CSS Syntax 3
# §2.1, "ASCII case-insensitive"), where re.I alone matched ``@ımport`` (a dotless i) and ``image-ſet(`` (a long s).
_CSS_TOKEN = re.compile(
    rf"""(?=[/"'uU@iI\\-])(?:/\*|["']|url\(|@import|(?:-webkit-)?image-set\(|@?{_ESCAPED_NAME}\(?)""",
    re.I | re.A)

#: What a name written with escapes means here, its escapes undone and lower-cased.
_ESCAPED_MEANING = {"url(": "url(", "image-set(": "image-set(", "-webkit-image-set(": "image-set(",
                    "@import": "@import"}


def css_references(css: str, budget: Budget | None = None) -> list[Reference]:
    """Every ``url()`` and ``@import`` reference in a CSS text, with its source offsets
    (``budget`` as for :func:`scan_html`)."""
    if budget is None:
        budget = Budget("the CSS text")
    refs: list[Reference] = []
    for url, start, end, kind in css_urls(css, 0, len(css), budget):
        budget.found()
        refs.append(Reference(url, start, end, kind, None))
    return refs


Url = tuple[str, int, int, str]
"""A URL found in CSS: (url, start, end, kind)."""


def css_urls(css: str, pos: int, n: int, budget: Budget) -> Iterator[Url]:
    """The references of the CSS text ``css[pos:n]``, read in place: (url, start, end, kind)."""
    lo = pos
    while True:
        budget.tick()
        m = _CSS_TOKEN.search(css, pos, n)
        if not m:
            break
        tok = m.group(0)
        if "\\" in tok:  # a name written with escapes: what it means, or nothing of ours
            meaning = _ESCAPED_MEANING.get(_css_unescape(tok).lower())
            if meaning is None or (meaning == "@import") != tok.startswith("@"):
                pos = m.end()
                continue
            tok = meaning
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


def _image_set(css: str, pos: int, n: int, budget: Budget) -> Generator[Url, None, int]:
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


def _url_token(css: str, pos: int, n: int, kind: str) -> tuple[Url | None, int]:
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

