"""Where to write marks into an HTML page so a passage shows highlighted in the rendered page (pure).

A fragment of an HTML page (``elt``, ``name``, ``char``, ``line``) selects
byte ranges of its source (:class:`pdi.fragments.Range`). Replay
(:mod:`pdi.server.replay.origin`) shows the page rendered, so the passage is marked
by markup written into the source the browser reads, server-side: nothing
depends on a script (the archived page runs none by default, and the replay
origin's Content-Security-Policy allows none of its own).

:func:`passage_insertions` gives ``(byte offset, markup)`` pairs:

* every run of text inside a range (outside tags, comments and the raw text
  of ``<script>``, ``<style>``, ``<textarea>``, ``<title>`` …, where markup
  would be shown as text or break the element) is wrapped in
  ``<pdi-mark>…</pdi-mark>``, a custom element no page styles (only ``*``
  rules reach it); an end that falls inside a character reference
  (``&amp;``) is moved to the reference's edge, so it is never split;
  runs of white space alone are left as they are;
* for ``elt`` and ``name``, the element whose start tag opens the first
  range gets the attribute ``data-pdi-passage`` (written just after the tag
  name, so no attribute of its own is displaced), outlined by the style;
* the first mark, or for an element with no text the place of its start
  tag, carries ``id="pdi-passage"``, the target of ``…/index.html#pdi-passage``
  that scrolls the passage into view without a script (HTML §7.4.6.3);
* :data:`MARK_STYLE` comes just before it, in a ``<style>`` element.

The source is read one byte a character (latin-1), which keeps the offsets
byte offsets: every markup character looked for is ASCII, and in an
ASCII-compatible encoding no byte of a multi-byte character is ASCII. The
scan is a tokenizer's approximation (a ``>`` inside a quoted attribute value
is skipped; a ``<`` that starts no tag is text), good for placing marks; it
decides nothing about what the fragment selects, which the fragment
evaluators do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pdi.fragments import Range

#: The style written in front of the first mark.
MARK_STYLE = (
    "pdi-mark{background:#ffe58a;color:inherit}"
    "[data-pdi-passage]{outline:3px solid #e8a400;outline-offset:2px}"
    # scrolled to with some of the page above it: not flush with the frame's top, its outline cut off
    "#pdi-passage{scroll-margin-top:3em}"
)

#: The id of the first mark: the target that scrolls the passage into view.
TARGET = "pdi-passage"

_RAW = "script|style|textarea|title|xmp|iframe|noembed|noframes|noscript|plaintext"
_TOKEN = re.compile(
    r"<!--.*?(?:--!?>|\Z)"  # a comment
    rf"|<({_RAW})(?=[\t\n\f\r />])(?:[^>\"']|\"[^\"]*\"|'[^']*')*>.*?(?:</\1[\t\n\f\r ]*>|\Z)"  # raw text
    r"|</?[A-Za-z](?:[^>\"']|\"[^\"]*\"|'[^']*')*>?"  # a start or end tag
    r"|<[!?][^>]*>?",  # a doctype, a declaration, a processing instruction
    re.I | re.S,
)
_TAG_NAME = re.compile(rb"<[A-Za-z][^\t\n\f\r />]*")
_REFERENCE = re.compile(r"&(?:#[xX][0-9A-Fa-f]+|#[0-9]+|[A-Za-z][A-Za-z0-9]*);?")


def text_runs(source: bytes) -> list[tuple[int, int]]:
    """The stretches of ``source`` (byte offsets ``[start, end)``) that are text content, in order."""
    text = source.decode("latin-1")
    runs: list[tuple[int, int]] = []
    at = 0
    for token in _TOKEN.finditer(text):
        if token.start() > at:
            runs.append((at, token.start()))
        at = token.end()
    if at < len(text):
        runs.append((at, len(text)))
    return runs


def _outside_references(text: str, run: tuple[int, int], a: int, b: int) -> tuple[int, int]:
    """``a`` and ``b`` moved out of any character reference of the run they lie in."""
    for ref in _REFERENCE.finditer(text, run[0], run[1]):
        if ref.start() < a < ref.end():
            a = ref.start()
        if ref.start() < b < ref.end():
            b = ref.end()
        if ref.start() >= b:
            break
    return a, b


def passage_insertions(source: bytes, ranges: Sequence[Range], scheme: str) -> list[tuple[int, str]]:
    """The marks to write into ``source`` for ``ranges`` (of fragment ``scheme``), in order of place."""
    if not ranges:
        return []
    text = source.decode("latin-1")
    marks: list[tuple[int, str]] = []
    for run in text_runs(source):
        for selected in ranges:
            a, b = max(run[0], selected.byte_start), min(run[1], selected.byte_end)
            if a >= b:
                continue
            a, b = _outside_references(text, run, a, b)
            if not text[a:b].strip("\t\n\f\r "):
                continue
            marks.append((a, "<pdi-mark>"))
            marks.append((b, "</pdi-mark>"))
    first = ranges[0].byte_start
    # an element's start tag, not a "<b" in a script's or a comment's text (where no markup may be written)
    element = (_TAG_NAME.match(source, first)
               if scheme in ("elt", "name") and _text_place(text, first) == first else None)
    insertions: list[tuple[int, str]] = []
    if element is not None:
        insertions.append((element.end(), " data-pdi-passage"))
    target = f'<style>{MARK_STYLE}</style><pdi-mark id="{TARGET}"'
    if marks and element is None:
        marks[0] = (marks[0][0], target + ">")  # the first mark is the target
    else:  # before the element's start tag, or where the range starts
        place = first if element is not None else _text_place(text, first)
        insertions.append((place, target + "></pdi-mark>"))
    return _ordered([*insertions, *marks])


def _text_place(text: str, at: int) -> int:
    """``at``, or the end of the tag or comment it lies inside, or the start of the character
    reference it lies inside: a place where markup may be written."""
    for token in _TOKEN.finditer(text):
        if token.start() < at < token.end():
            return token.end()
        if token.start() >= at:
            break
    start = text.rfind("&", 0, at)
    if start >= 0:
        reference = _REFERENCE.match(text, start)
        if reference is not None and reference.start() < at < reference.end():
            return reference.start()
    return at


def _ordered(insertions: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
    """By place; at one place an end mark first, then what is written inside a start tag, then the rest."""

    def key(item: tuple[int, str]) -> tuple[int, int]:
        return item[0], 0 if item[1] == "</pdi-mark>" else 1

    return sorted(insertions, key=key)


#: Selection in a replayed page (:func:`selection_insertions`): each text piece is one of these.
PIECE = "pdi-t"


def selection_insertions(
    source: bytes, codec: str, skip: int, canonical_length: int, elements: Sequence[tuple[int, int]],
    cuts: Iterable[int] = (),
) -> list[tuple[int, str]]:
    """Marks that carry source positions into a page, so a selection in it can be named (``char`` and ``elt``).

    Every run of text that is not white space alone becomes pieces wrapped
    in ``<pdi-t data-at="N">``, ``N`` the code point of the CRLF-canonical
    source where the piece starts; a character reference is a piece of its
    own, with ``data-end`` where it ends (a selection that cuts it takes it
    whole). The start tag of each of ``elements`` (``(start tag number,
    canonical position of its "<")``) gets ``data-pdi-e="number"`` after its
    name. A piece is cut in two at each of ``cuts`` (byte offsets) inside it:
    where a passage's marks are written (:func:`with_passage`), so that no
    mark ever stands inside a piece. ``source`` is read with ``codec`` from byte ``skip`` (after a byte
    order mark); ``canonical_length`` is the length of the CRLF-canonical
    text the fragment evaluators read: if the count made here does not come
    to it, the positions would be wrong, and an
    :class:`~pdi.errors.UnsupportedError` says so.
    """
    from pdi.errors import UnsupportedError
    from pdi.fragments.text.lines import to_crlf

    text = source.decode("latin-1")
    pieces: list[tuple[int, int, bool]] = []
    for a, b in text_runs(source):
        if not text[a:b].strip("\t\n\f\r "):
            continue
        at = a
        for ref in _REFERENCE.finditer(text, a, b):
            if ref.start() > at:
                pieces.append((at, ref.start(), False))
            pieces.append((ref.start(), ref.end(), True))
            at = ref.end()
        if at < b:
            pieces.append((at, b, False))
    inside = sorted(set(cuts))
    if inside:
        split: list[tuple[int, int, bool]] = []
        for a, b, reference in pieces:
            for cut in ([] if reference else [c for c in inside if a < c < b]):
                split.append((a, cut, False))
                a = cut
            split.append((a, b, reference))
        pieces = split
    tags = [token.start() for token in _TOKEN.finditer(text) if _TAG_NAME.match(source, token.start())]
    points = sorted({skip, len(source), *tags, *(p for a, b, _ in pieces for p in (a, b))})
    canonical: dict[int, int] = {}
    count = 0
    last = skip
    for point in points:
        if point > last:
            # boundaries are at "<", ">", "&" or ";": never inside a character or a CR LF
            count += len(to_crlf(source[last:point].decode(codec, "replace")))
            last = point
        canonical[point] = count if point >= skip else 0
    if count != canonical_length:
        raise UnsupportedError(
            f"the page's text could not be counted as its fragments count it ({count} code points, not "
            f"{canonical_length}): a selection in it cannot be named"
        )
    insertions: list[tuple[int, str]] = []
    for a, b, reference in pieces:
        end = f' data-end="{canonical[b]}"' if reference else ""
        insertions += [(a, f'<{PIECE} data-at="{canonical[a]}"{end}>'), (b, f"</{PIECE}>")]
    by_position = {canonical[t]: t for t in tags}
    for number, start in elements:
        tag = by_position.get(start)
        name = _TAG_NAME.match(source, tag) if tag is not None else None
        if name is not None:
            insertions.append((name.end(), f' data-pdi-e="{number}"'))
    return sorted(insertions, key=lambda item: (item[0], 0 if item[1] == f"</{PIECE}>" else 1))


def with_passage(selection: Sequence[tuple[int, str]], passage: Sequence[tuple[int, str]]) -> list[tuple[int, str]]:
    """The pieces of :func:`selection_insertions` (made with ``cuts`` at the places of ``passage``) and the marks of
    :func:`passage_insertions` together, in order of place: at one place a piece ends, then the passage's marks are
    written (in their order), then a piece starts; a mark is thus always between pieces, never inside one (a
    selection's positions count each piece's text from its start), and a piece is inside a mark or outside it."""
    ranked = [(place, 0 if markup == f"</{PIECE}>" else 2, i, markup) for i, (place, markup) in enumerate(selection)]
    ranked += [(place, 1, i, markup) for i, (place, markup) in enumerate(passage)]
    return [(place, markup) for place, _, _, markup in sorted(ranked)]
