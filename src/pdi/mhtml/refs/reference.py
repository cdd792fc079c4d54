"""A reference as :mod:`pdi.mhtml.refs` gives it, and the value helpers its readers share: entities, ``srcset``, ``refresh``.

Pure: no I/O.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass

from pdi.passages.scan import REFERENCE, decoded_pieces, unescape

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



class OffsetMap:
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
        width = len(unescape(m.group(0)))
        return r if i < d + width else m.end() + (i - d - width)


def unescape_with_map(raw: str) -> tuple[str, OffsetMap | None]:
    """Decode HTML character references; ``offsets[i]`` is the raw index of decoded char ``i``
    (``None``: nothing was decoded, each character is where it was)."""
    if "&" not in raw:
        return raw, None
    out: list[str] = []
    offsets = OffsetMap(raw)
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


def mapped_range(decoded_start: int, decoded_end: int, offsets: OffsetMap | None, shift: int) -> tuple[int, int]:
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



def srcset_candidates(value: str) -> list[tuple[int, int]]:
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


