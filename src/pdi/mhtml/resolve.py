"""Which part a reference means (RFC 2557 §8.2, §8.3, and the Chromium rule).

For every reference in an HTML or CSS part (:mod:`pdi.mhtml.refs`):

* ``cid:`` URIs are percent-decoded (RFC 2392) and matched against Content-IDs
  (§8.3, rule ``"content-id"``); then, as the compatibility rule of
  ``specs/README.md`` for files Chromium writes (inline stylesheets labelled
  ``Content-Location: cid:…`` with no Content-ID), against a Content-Location equal
  to the ``cid:`` URI on a part that has no Content-ID (rule
  ``"cid-content-location"``). A part with a Content-ID keeps §8.3 exactly: its
  ``cid:`` Content-Location is ignored.
* every other URI is resolved against the part's base (§5: ``<base>``, the part's
  Content-Location, the enclosing ones, the retrieval URI, ``thismessage:/``) with
  :func:`pdi.uri.resolve` and compared octet by octet with the parts' resolved
  Content-Locations (§8.2 (d), rule ``"content-location"``).

A style sheet labelled ``Content-Location: cid:…`` (how Chromium saves a ``<style>``
element) has no URI to serve as its base: its relative references resolve against the
base of the first HTML part that uses it, as they do in the browser (the second half
of the Chromium compatibility rule).

Before comparing, both sides are percent-encoded as a browser's URL parser writes them
(:func:`pdi.mhtml.urlencoding.browser_url`): non-ASCII, spaces and controls in UTF-8,
except in the query of an ``http``, ``https``, ``ftp`` or ``file`` reference, which is
encoded with the encoding of the text it is written in (WHATWG URL §4.4: a windows-1251
page's ``?я`` is ``?%FF``, and that is the URL the browser asks for and the label it
finds). That encoding is the part's (:attr:`~pdi.mhtml.model.Part.encoding`: for a
style sheet as for a page, as Chromium encodes a style sheet's ``url()``), except that
the document of an ``<iframe srcdoc>`` is always UTF-8; a Content-Location's query is
UTF-8. Nothing else is normalised (``%2e`` stays ``%2e``, §8.2 (a)). A reference is
matched with its fragment first (§8.2 (d), and Chromium, which finds ``a.png#x`` only
under a label ``a.png#x``), then, as a compatibility rule for files that label a
resource once for all its fragments, both sides without their fragment (``#…`` selects
inside a resource, it does not name another one).

A style sheet's own encoding, when neither a BOM, a ``charset=`` nor ``@charset`` gives
one, is the encoding of what refers to it (CSS Syntax §3.2, the environment encoding):
the first page in the file that links or imports it, or the sheet that ``@import`` rule imports it
(:func:`environment_encodings`).

Resolution uses the RFC 3986 algorithm in its backward-compatible mode
(``strict=False``, §5.2.2): a reference whose scheme equals the base's scheme, such as
``http:images/a.gif`` in §9.6, is read as relative, as RFC 1808 (which RFC 2557 cites)
and browsers read it.

Scope (§7, §9.6): a reference from a part is satisfied only by a body part of the
multipart/related that contains it or of one that encloses it, nearest first; parts
inside a nested or a parallel structure are out of reach. A reference that names a
nested multipart (by its Content-Location or Content-ID) means that structure's root.
A multipart/alternative is one resource in several forms (RFC 2046 §5.1.4), so the
Content-Locations of its alternatives label it too, and a reference to one of them means the
alternative's root (RFC 2557 §7): Internet Explorer writes each frame of a framed page
as a multipart/alternative (text/plain, then text/html) whose Content-Location is on
the text/html alternative, and Chromium, opening the file, shows that frame.
Within one structure the FIRST of several parts carrying the same label wins (the
check reports the duplicates). Frames are matched like every other reference, so a
``cid:`` frame reference reaches its own part even when 27 frames share one
Content-Location.

References that cannot name a part are ``ignored``: empty, fragment-only (``#top``),
``data:``, ``javascript:``, ``about:``, ``mailto:``, ``tel:``, ``blob:`` URIs, and the
``<base href>`` itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pdi.mhtml.limits import Budget, Limits
from pdi.mhtml.locations import (
    IGNORED_SCHEMES,
    cid_of,
    clean_reference,
    comparable,
    is_cid,
    location_key,
    resolve_uri,
)
from pdi.mhtml.parts import Multipart, Part

# Named here before pdi.mhtml.locations held them; capture/ and interop/ import them from here.
__all__ = [
    "IGNORED_SCHEMES",
    "ResolvedReference",
    "Resolver",
    "Whole",
    "cid_of",
    "clean_reference",
    "comparable",
    "environment_encodings",
    "is_cid",
    "location_key",
    "reference_encoding",
    "resolve_one",
    "resolve_reference",
    "resolve_references",
    "resolve_uri",
    "text_encoding",
    "url_encoding",
]

if TYPE_CHECKING:
    from pdi.mhtml.refs import Reference

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")


def _without_fragment(key: str) -> str:
    cut = key.find("#")
    return key if cut < 0 else key[:cut]


def _cid_key(uri: str) -> str:
    # a cid: URI as the Chromium rule compares it: scheme case-folded, rest octet by octet
    return "cid:" + comparable(uri)[4:]


@dataclass(frozen=True, slots=True)
class ResolvedReference:
    """One reference of one part and what it resolved to.

    ``status`` is ``"satisfied"`` (``target`` is the part it means, ``rule`` says how:
    ``"content-location"``, ``"content-id"`` or ``"cid-content-location"``),
    ``"unsatisfied"`` (no part of the aggregate in scope carries that URI) or
    ``"ignored"`` (it cannot name a part). ``uri`` is the resolved URI (``None``
    when ignored).
    """

    source: Part
    reference: Reference
    uri: str | None
    status: str
    target: Part | None = None
    rule: str | None = None

    @property
    def satisfied(self) -> bool:
        """True when a part of the aggregate satisfies the reference."""
        return self.status == "satisfied"


class Whole(Protocol):
    """What the resolver reads of an aggregate (a :class:`pdi.mhtml.model.Aggregate`)."""

    @property
    def parts(self) -> tuple[Part, ...]: ...

    @property
    def multiparts(self) -> tuple[Multipart, ...]: ...

    @property
    def limits(self) -> Limits: ...

    @property
    def references(self) -> tuple[ResolvedReference, ...]: ...


class _Index:
    """Per multipart structure: its children's labels, first occurrence winning."""

    def __init__(self, agg: Whole) -> None:
        self.loc: dict[int, dict[str, Part | Multipart]] = {}
        self.plain: dict[int, dict[str, Part | Multipart]] = {}
        self.cid: dict[int, dict[str, Part | Multipart]] = {}
        self.cid_loc: dict[int, dict[str, Part | Multipart]] = {}
        for mp in agg.multiparts:
            locs: dict[str, Part | Multipart] = {}
            plains: dict[str, Part | Multipart] = {}
            cids: dict[str, Part | Multipart] = {}
            cid_locs: dict[str, Part | Multipart] = {}
            for child in mp.children:
                labelled = [child]
                if isinstance(child, Multipart) and child.content_type == "multipart/alternative":
                    labelled += child.children  # its alternatives' labels name it too
                for node in labelled:
                    if node.location is not None:
                        key = location_key(node.location)
                        locs.setdefault(key, child)
                        plains.setdefault(_without_fragment(key), child)
                        if node.content_id is None and is_cid(node.location):
                            cid_locs.setdefault(_cid_key(node.location), child)
                if child.content_id is not None:  # a Content-ID names one body part (RFC 2392)
                    cids.setdefault(child.content_id, child)
            self.loc[mp.id] = locs
            self.plain[mp.id] = plains
            self.cid[mp.id] = cids
            self.cid_loc[mp.id] = cid_locs
        self.Multipart = Multipart

    def _find(self, table: dict[int, dict[str, Part | Multipart]], scope: tuple[int, ...], key: str) -> Part | None:
        # the nearest structure first; a multipart found means its root
        for mp in reversed(scope):
            node = table[mp].get(key)
            if node is not None:
                return node.root if isinstance(node, self.Multipart) else node
        return None

    def by_location(self, scope: tuple[int, ...], key: str) -> Part | None:
        """The part labelled ``key`` (a :func:`location_key`), else one whose label is
        ``key`` when both lose their fragment."""
        found = self._find(self.loc, scope, key)
        return found if found is not None else self._find(self.plain, scope, _without_fragment(key))

    def by_cid_location(self, scope: tuple[int, ...], uri: str) -> Part | None:
        return self._find(self.cid_loc, scope, _cid_key(uri))

    def by_cid(self, scope: tuple[int, ...], cid: str) -> Part | None:
        return self._find(self.cid, scope, cid)


def text_encoding(part: Part, ref: Reference) -> str:
    """The encoding of the text ``ref`` is written in: UTF-8 in the document of an
    ``<iframe srcdoc>`` (always UTF-8), else the part's."""
    return "UTF-8" if ref.quoting else part.encoding


def reference_encoding(part: Part, ref: Reference) -> str:
    """The encoding the query of ``ref`` is written with, as Chromium (156) writes it.

    The encoding of the text it is in (:func:`text_encoding`: HTML's "encoding-parse a
    URL"), except for what Chromium parses as UTF-8 whatever the page: the URL of an
    ``@import`` and a ``url()`` in a ``style`` or SVG presentation attribute (a
    ``url()`` in a ``<style>`` element or a style sheet takes the sheet's encoding).
    """
    return url_encoding(ref, part.is_html, text_encoding(part, ref))


def url_encoding(ref: Reference, in_html: bool, encoding: str) -> str:
    """:func:`reference_encoding` of ``ref`` written in HTML (``in_html``) or CSS text of ``encoding``."""
    if ref.kind == "import" or (ref.kind == "style-url" and in_html and ref.element != "style"):
        return "UTF-8"
    return encoding


def resolve_one(part: Part, ref: Reference, index: _Index, base: str | None = None) -> ResolvedReference:
    """Resolve one reference of ``part`` (see the module docstring); ``base`` overrides ``part.base``.

    ``uri`` of the result is the resolved URI as a browser writes it (percent-encoded,
    the query in the encoding of the text the reference is written in), fragment kept.
    """
    text = clean_reference(ref.url)
    if ref.kind == "base" or text == "" or text.startswith("#"):
        return ResolvedReference(part, ref, None, "ignored")
    m = _SCHEME.match(text)
    if m and m.group(1).lower() in IGNORED_SCHEMES:
        return ResolvedReference(part, ref, None, "ignored")
    if is_cid(text):
        target = index.by_cid(part.scope, cid_of(text))
        if target is not None:
            return ResolvedReference(part, ref, text, "satisfied", target, "content-id")
        target = index.by_cid_location(part.scope, text)
        if target is not None:
            return ResolvedReference(part, ref, text, "satisfied", target, "cid-content-location")
        return ResolvedReference(part, ref, text, "unsatisfied")
    resolved = resolve_uri(base if base is not None else part.base, text)
    if resolved is None:
        return ResolvedReference(part, ref, None, "unsatisfied")
    resolved = location_key(resolved, reference_encoding(part, ref))
    target = index.by_location(part.scope, resolved)
    if target is not None:
        return ResolvedReference(part, ref, resolved, "satisfied", target, "content-location")
    return ResolvedReference(part, ref, resolved, "unsatisfied")


def _is_embedded_sheet(part: Part) -> bool:
    return part.is_css and part.content_location is not None and is_cid(part.content_location)


def _user_base(sheet: Part, resolved: Iterable[ResolvedReference]) -> str | None:
    """The base of the first HTML part (in ``resolved`` order) whose reference reaches ``sheet``."""
    hit = next((r for r in resolved if r.target is sheet and r.source.is_html), None)
    return None if hit is None else hit.source.base


def resolve_references(agg: Whole) -> tuple[ResolvedReference, ...]:
    """Every reference of every HTML and CSS part of ``agg``, in part then source order.

    A style sheet labelled ``Content-Location: cid:…`` (Chromium's way of saving a
    ``<style>`` element) has no URI of its own to resolve against; as in the browser,
    its relative references resolve against the base of the HTML part that uses it
    (the first one, in file order), part of the Chromium compatibility rule.
    """
    index = _Index(agg)
    found: dict[int, list[ResolvedReference]] = {}
    sheets: list[Part] = []
    total = 0
    for part in agg.parts:
        if _is_embedded_sheet(part):
            sheets.append(part)
            continue
        found[part.index] = _resolve_part(agg, part, index, None, total)
        total += len(found[part.index])
    pages = [r for results in found.values() for r in results]
    for sheet in sheets:
        base = _user_base(sheet, pages)
        found[sheet.index] = _resolve_part(agg, sheet, index, base, total)
        total += len(found[sheet.index])
    return tuple(r for part in agg.parts for r in found[part.index])


def _resolve_part(agg: Whole, part: Part, index: _Index, base: str | None, total: int) -> list[ResolvedReference]:
    """The references of ``part`` resolved, within ``Limits.max_read_seconds`` and, with the
    ``total`` found in the parts before, ``Limits.max_references`` (a LimitError naming the part)."""
    refs = part.references
    budget = Budget(
        part.label, seconds=agg.limits.max_read_seconds, references=agg.limits.max_references, found_before=total
    )
    budget.found(len(refs))
    out: list[ResolvedReference] = []
    for ref in refs:
        budget.tick()
        out.append(resolve_one(part, ref, index, base))
    return out


class Resolver:
    """Resolves URIs as if written in the parts of one aggregate, exactly as the reader does.

    The label index is built once; an embedded style sheet's references resolve against
    the base of the page that uses it, as in :func:`resolve_references`.
    """

    def __init__(self, agg: Whole) -> None:
        self._agg = agg
        self._index = _Index(agg)
        self._bases: dict[int, str] = {}

    def base_of(self, part: Part) -> str:
        """The base URI ``part``'s relative references resolve against."""
        if part.index not in self._bases:
            base = _user_base(part, self._agg.references) if _is_embedded_sheet(part) else None
            self._bases[part.index] = part.base if base is None else base
        return self._bases[part.index]

    def resolve(self, part: Part, reference: str, kind: str = "src", *, srcdoc: bool = False) -> ResolvedReference:
        """Resolve one URI as if it were written in ``part`` (``srcdoc``: in the document of
        one of its ``<iframe srcdoc>``, whose queries are UTF-8)."""
        from pdi.mhtml.refs import Reference

        ref = Reference(reference, 0, len(reference), kind, None, ('"',) if srcdoc else ())
        return resolve_one(part, ref, self._index, self.base_of(part))


def resolve_reference(agg: Whole, part: Part, reference: str, kind: str = "src") -> ResolvedReference:
    """Resolve one URI as if it were written in ``part`` (for callers with their own references)."""
    return Resolver(agg).resolve(part, reference, kind)


_SHEET_KINDS = frozenset({"stylesheet", "import"})


def environment_encodings(agg: Whole, found: dict[int, str]) -> None:
    """Fill ``found`` (part index to encoding) with the environment encoding of each style
    sheet (CSS Syntax §3.2): a page's encoding for the sheets it links or imports
    (UTF-8 in an ``<iframe srcdoc>`` document), a sheet's for the sheets it imports; the
    first referrer in file order, pages before sheets, wins.

    ``found`` is filled breadth first and may be read while it is: a sheet's text is read
    (for its ``@import`` rules) only once its own entry is there.
    """
    from collections import deque

    index = _Index(agg)
    queue: deque[tuple[Part, str]] = deque()
    for page in agg.parts:
        if not page.is_html:
            continue
        for ref in page.references:
            if ref.kind not in _SHEET_KINDS:
                continue
            target = resolve_one(page, ref, index).target
            if target is not None and target.is_css and target.index not in found:
                found[target.index] = text_encoding(page, ref)
                queue.append((target, page.base))
    while queue:
        sheet, page_base = queue.popleft()
        base = page_base if _is_embedded_sheet(sheet) else None
        for ref in sheet.references:
            if ref.kind != "import":
                continue
            target = resolve_one(sheet, ref, index, base).target
            if target is not None and target.is_css and target.index not in found:
                found[target.index] = sheet.encoding
                queue.append((target, page_base))
