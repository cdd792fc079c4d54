"""The part of a page's CSS its page text needs: which elements show no text, and which are blocks.

WICG Text Fragments matches only *visible text* (§3.5.2, "find a range from
a text directive"): a text node whose parent's computed ``visibility`` is
``visible``, being rendered, outside every *search invisible* subtree
(``display: none`` among them); and it cuts the text at elements of
*block-level display*. :mod:`pdi.fragments.pagetext` reads the page without a
CSS engine; this module computes, for one element, the two properties that
decide those questions, ``display`` and ``visibility``, and ``white-space``
(CSS Text 3 §3: which white space the text keeps), from what can be
evaluated exactly without one:

* the element's ``style`` attribute;
* the rules of the page's own ``<style>`` elements (those for the screen:
  no ``media`` attribute, or one naming ``all`` or ``screen``; ``type``
  absent or ``text/css``) whose selector is a *compound of simple
  selectors*: a type selector or ``*``, then any ``#id`` and ``.class``
  (``p``, ``.note``, ``#aside``, ``div.note.old``), each of a selector list;
* the cascade between them (CSS Cascade 4 §6): ``!important`` first, then
  the ``style`` attribute, then specificity (ids, classes, type), then
  order; and the HTML standard's rendering rules below author styles: the
  ``hidden`` attribute is ``display: none`` (but ``hidden=until-found``,
  which a browser reveals to show a match: WHATWG HTML §6.1), and the
  elements of :data:`pdi.fragments.pagetext.BLOCK` are blocks.

``display`` values: ``none``; block-level (``block``, ``flex``, ``grid``,
``table``, ``list-item``, ``flow-root`` and the ``table-*`` parts, and any
value whose outer type is ``block``); any other valid value (``inline``,
``inline-block``, ``contents`` …) is inline. ``visibility``: ``visible``,
``hidden``, ``collapse`` (it is inherited: a ``visible`` child of a hidden
element shows). ``white-space``: ``normal``, ``nowrap``, ``pre``,
``pre-wrap``, ``break-spaces``, ``pre-line`` (inherited too). ``initial`` is the initial value; ``inherit``, ``unset``,
``revert`` and anything not understood declare nothing.

Not read, so what they would hide is matched as visible text and what they
would make a block is not one: rules with any other selector (descendant
and child combinators, attribute selectors, pseudo-classes: ``div > p``,
``[aria-hidden]``, ``:not(.x)``), rules inside at-rules (``@media``,
``@supports``, ``@layer``), style sheets from elsewhere (``<link
rel=stylesheet>``, ``@import``, another part of an MHTML capture), scripts,
and every other property (``opacity: 0``, ``font-size: 0``, ``clip``,
``content-visibility``, off-screen positions).

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from pdi._work_deadline import WorkDeadline
from pdi.errors import LimitError
from pdi.passages import scan

__all__ = ["BLOCK_DISPLAY", "Declared", "PageStyle", "attribute_span", "attributes", "display_breaks", "display_is_block"]

#: ``display`` values of block-level display (the WICG spec's "block-level display", and the table parts,
#: which Chromium's text finder also ends a block at, as it does at ``td``).
BLOCK_DISPLAY: Final = frozenset({
    "block", "flex", "grid", "table", "list-item", "flow-root", "table-row-group", "table-header-group",
    "table-footer-group", "table-row", "table-cell", "table-column-group", "table-column", "table-caption",
})
_INLINE_DISPLAY: Final = frozenset({
    "inline", "inline-block", "inline-flex", "inline-grid", "inline-table", "contents", "ruby", "ruby-base",
    "ruby-text", "ruby-base-container", "ruby-text-container", "run-in", "inline flow-root", "inline flow",
    "math", "inline math",
})
_ATOMIC_DISPLAY: Final = frozenset({"inline-block", "inline-flex", "inline-grid", "inline-table", "inline flow-root"})
_VISIBILITY: Final = frozenset({"visible", "hidden", "collapse"})
#: ``white-space`` values (CSS Text 3 §3): ``break-spaces`` keeps white space as ``pre-wrap`` does.
_WHITE_SPACE: Final = frozenset({"normal", "pre", "nowrap", "pre-wrap", "pre-line", "break-spaces"})
#: The most display and visibility rules of a page's style sheets read: each element is matched against the
#: rules of its tag, id and classes, so a stranger's page of a million rules would cost a million an element.
MAX_RULES: Final = 5000
_COMMENT: Final = re.compile(r"/\*.*?(?:\*/|\Z)", re.DOTALL)
_COMPOUND: Final = re.compile(r"(\*|[A-Za-z][A-Za-z0-9-]*)?((?:[.#]-?[A-Za-z_][A-Za-z0-9_-]*)*)\Z")
_SIMPLE: Final = re.compile(r"[.#]-?[A-Za-z_][A-Za-z0-9_-]*")
_IMPORTANT: Final = re.compile(r"!\s*important\s*\Z", re.IGNORECASE)
_SPACES: Final = re.compile(r"[ \t\n\r\f]+")
#: The raw-text elements whose content is not markup, and ``style`` among them (WHATWG HTML §13.1.2).
_RAW_OPEN: Final = re.compile(
    r"<!--|<(script|style|textarea|title|xmp|iframe|noembed|noframes|noscript)(?=[\t\n\f\r />])",
    re.IGNORECASE | re.ASCII)  # (names in ASCII, as HTML's tokenizer reads them: re.I alone takes ſ for s, ı for i)
_ATTRIBUTE: Final = re.compile(
    r"""([^\t\n\f\r />"'=][^\t\n\f\r />"'=]*)(?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:"([^"]*)"|'([^']*)'|([^\t\n\f\r >]+)))?""")


@dataclass(frozen=True)
class Declared:
    """The ``display`` and ``visibility`` the cascade gives one element (``None``: nothing declared)."""

    display: str | None = None
    visibility: str | None = None
    white_space: str | None = None


_NOTHING: Final = Declared()


@dataclass(frozen=True)
class _Rule:
    tag: str | None  # lower case; None for * or none
    ids: tuple[str, ...]
    classes: tuple[str, ...]
    specificity: tuple[int, int, int]
    order: int
    prop: str
    value: str
    important: bool

    def matches(self, tag: str, element_id: str | None, classes: frozenset[str]) -> bool:
        return ((self.tag is None or self.tag == tag)
                and all(i == element_id for i in self.ids)
                and all(c in classes for c in self.classes))


class PageStyle:
    """The rules of a page's ``<style>`` elements that pdi evaluates (see the module docstring), indexed for lookup."""

    def __init__(self, rules: list[_Rule]) -> None:
        self._by_id: dict[str, list[_Rule]] = {}
        self._by_class: dict[str, list[_Rule]] = {}
        self._by_tag: dict[str, list[_Rule]] = {}
        self._any: list[_Rule] = []
        for rule in rules:
            if rule.ids:
                self._by_id.setdefault(rule.ids[0], []).append(rule)
            elif rule.classes:
                self._by_class.setdefault(rule.classes[0], []).append(rule)
            elif rule.tag is not None:
                self._by_tag.setdefault(rule.tag, []).append(rule)
            else:
                self._any.append(rule)
        #: No rule: only an element's own attributes (``style``, ``hidden``) say anything.
        self.empty = not rules

    @classmethod
    def of_html(cls, source: str, deadline: WorkDeadline | None = None) -> PageStyle:
        """The rules of every ``<style>`` element of an HTML ``source`` that applies to the screen.

        A :class:`~pdi.errors.LimitError` once ``deadline`` has passed (the reading's processor time) or past
        :data:`MAX_RULES` rules.
        """
        rules: list[_Rule] = []
        at = 0
        n = len(source)
        while True:
            m = _RAW_OPEN.search(source, at)
            if m is None:
                break
            if m.group() == "<!--":
                end = source.find("-->", m.end())
                at = n if end < 0 else end + 3
                continue
            name = m.group(1).lower()
            tag_end = source.find(">", m.end())
            if tag_end < 0:
                break
            close = re.compile(r"</" + name + r"(?=[\t\n\f\r />])", re.IGNORECASE | re.ASCII).search(source,
                                                                                                 tag_end + 1)
            stop = n if close is None else close.start()
            if name == "style" and _for_screen(attributes(source[m.end() : tag_end])):
                rules.extend(_rules(source[tag_end + 1 : stop], len(rules), deadline))
            at = stop + 1
        return cls(rules)

    def declared(self, tag: str, attrs: Mapping[str, str]) -> Declared:
        """What the cascade gives the element ``tag`` (lower case) with ``attrs`` (names lower case)."""
        inline = attrs.get("style")
        if self.empty and not inline:
            return _NOTHING
        candidates: list[_Rule] = list(self._any)
        candidates += self._by_tag.get(tag, ())
        element_id = attrs.get("id")
        if element_id and self._by_id:
            candidates += self._by_id.get(element_id, ())
        names = attrs.get("class")
        classes = frozenset(_SPACES.split(names.strip())) - {""} if names else frozenset()
        if self._by_class:
            for name in classes:
                candidates += self._by_class.get(name, ())
        if not candidates and not inline:
            return _NOTHING
        best: dict[str, tuple[tuple[bool, bool, tuple[int, int, int], int], str]] = {}
        for rule in candidates:
            if rule.matches(tag, element_id, classes):
                rank = (rule.important, False, rule.specificity, rule.order)
                if rule.prop not in best or rank > best[rule.prop][0]:
                    best[rule.prop] = (rank, rule.value)
        if inline:
            for order, (prop, value, important) in enumerate(_declarations(inline)):
                rank = (important, True, (0, 0, 0), order)
                if prop not in best or rank > best[prop][0]:
                    best[prop] = (rank, value)
        return Declared(best["display"][1] if "display" in best else None,
                        best["visibility"][1] if "visibility" in best else None,
                        best["white-space"][1] if "white-space" in best else None)


def attributes(tag_rest: str) -> dict[str, str]:
    """The attributes of a start tag from just after its name to before its ``>`` (the first of a name wins, as in HTML)."""
    found: dict[str, str] = {}
    for m in _ATTRIBUTE.finditer(tag_rest):
        name = m.group(1).lower()
        if name not in found:
            raw = m.group(2) if m.group(2) is not None else m.group(3) if m.group(3) is not None else m.group(4)
            found[name] = scan.unescape(raw) if raw else ""
    return found


def attribute_span(tag_rest: str, name: str) -> tuple[int, int] | None:
    """Where in ``tag_rest`` (as :func:`attributes` reads it) the value of the first attribute ``name`` (lower case)
    stands, as written (inside its quotes); ``None`` if the tag has no such attribute."""
    for m in _ATTRIBUTE.finditer(tag_rest):
        if m.group(1).lower() == name:
            for group in (2, 3, 4):
                if m.group(group) is not None:
                    return m.span(group)
            return m.end(), m.end()
    return None


def display_is_block(value: str) -> bool:
    """Whether a ``display`` value (as :meth:`PageStyle.declared` gives it, not ``none``) is block-level."""
    return value in BLOCK_DISPLAY or value.split(" ")[0] == "block"


def display_breaks(value: str) -> bool:
    """Whether no term runs across an element of this ``display``: block-level, or one box in a line.

    ``inline-block``, ``inline-flex``, ``inline-grid`` and ``inline-table``
    lay the element out as an atomic box, which Chromium's text finder does
    not read across (as it does not across a ``button``).
    """
    return display_is_block(value) or value in _ATOMIC_DISPLAY


def _for_screen(attrs: Mapping[str, str]) -> bool:
    kind = attrs.get("type", "").strip().lower()
    if kind not in ("", "text/css"):
        return False
    media = attrs.get("media", "").strip().lower()
    return not media or any(q.strip() in ("all", "screen") for q in media.split(","))


def _rules(sheet: str, first: int, deadline: WorkDeadline | None = None) -> list[_Rule]:
    """The display and visibility rules of a style sheet with simple selectors, outside every at-rule.

    Linear in the sheet: each search starts where the last rule ended and stops at the next brace.
    """
    sheet = _COMMENT.sub(" ", sheet)
    rules: list[_Rule] = []
    i = 0
    n = len(sheet)
    read = 0
    while i < n:
        read += 1
        if deadline is not None and not read % 256 and deadline.passed():
            raise LimitError(f"reading the style sheets of a page took {deadline.words()} ({read} rules read)")
        brace = sheet.find("{", i)
        if brace < 0:
            break
        prelude = sheet[i:brace].strip()
        semi = sheet.find(";", i, brace) if prelude.startswith("@") else -1
        if semi >= 0:  # a statement at-rule (@import, @charset …) ends before the brace
            i = semi + 1
            continue
        end = _block_end(sheet, brace)
        if not prelude.startswith("@"):
            selectors = [_selector(s.strip()) for s in prelude.split(",")]
            for prop, value, important in _declarations(sheet[brace + 1 : end]):
                for selector in selectors:
                    if selector is not None:
                        tag, ids, classes = selector
                        rules.append(_Rule(tag, ids, classes, (len(ids), len(classes), int(tag is not None)),
                                           first + len(rules), prop, value, important))
            if first + len(rules) > MAX_RULES:
                raise LimitError(f"a page's style sheets hold more than {MAX_RULES} display and visibility rules")
        i = end + 1
    return rules


def _block_end(sheet: str, brace: int) -> int:
    """Where the block opened at ``brace`` closes (nested blocks counted), or the sheet's end."""
    depth = 0
    for k in range(brace, len(sheet)):
        if sheet[k] == "{":
            depth += 1
        elif sheet[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(sheet)


def _selector(text: str) -> tuple[str | None, tuple[str, ...], tuple[str, ...]] | None:
    """A compound of simple selectors as (type, ids, classes); ``None`` for any other selector."""
    m = _COMPOUND.match(text)
    if m is None or not text:
        return None
    tag = m.group(1)
    simple = _SIMPLE.findall(m.group(2))
    return (None if tag in (None, "*") else tag.lower(),
            tuple(s[1:] for s in simple if s[0] == "#"), tuple(s[1:] for s in simple if s[0] == "."))


def _declarations(block: str) -> list[tuple[str, str, bool]]:
    """The valid ``display``, ``visibility`` and ``white-space`` declarations of a declaration block: (property,
    value, important)."""
    found: list[tuple[str, str, bool]] = []
    for piece in _COMMENT.sub(" ", block).split(";"):
        prop, colon, value = piece.partition(":")
        if not colon:
            continue
        prop = prop.strip().lower()
        if prop not in ("display", "visibility", "white-space"):
            continue
        value = value.strip()
        important = bool(_IMPORTANT.search(value))
        value = _SPACES.sub(" ", _IMPORTANT.sub("", value).strip().lower())
        if value == "initial":
            value = {"display": "inline", "visibility": "visible"}.get(prop, "normal")
        if prop == "display" and (value == "none" or value in _INLINE_DISPLAY or display_is_block(value)):
            found.append((prop, value, important))
        elif prop == "visibility" and value in _VISIBILITY:
            found.append((prop, value, important))
        elif prop == "white-space" and value in _WHITE_SPACE:
            found.append((prop, value, important))
    return found
