"""W3C Web Annotations of fragment names and citations, out and back in (PDI-GRAMMAR.md §3, annotations).

Implements, from the W3C *Web Annotation Data Model* (Recommendation, 23
February 2017, https://www.w3.org/TR/annotation-model/):

* §3.1 the Annotation (``@context`` ``http://www.w3.org/ns/anno.jsonld``,
  ``id``, ``type``, ``motivation``, ``body``, ``target``);
* §4 the ``SpecificResource`` whose ``source`` is the versioned PDI, with
  its selectors (§4.2): ``TextQuoteSelector`` (§4.2.4: ``exact``, and
  ``prefix``/``suffix`` of :data:`CONTEXT_CHARS` characters),
  ``TextPositionSelector`` (§4.2.5: ``start``/``end``, code points),
  ``DataPositionSelector`` (§4.2.6, a ``byte`` fragment), and a
  ``FragmentSelector`` (§4.2.1) that ``conformsTo`` RFC 5147 (a text's
  ``char`` range, RFC 5147 counting a line ending as one character; none
  when an end falls between a CR and its LF, where RFC 5147 has no
  position), Media
  Fragments (``xywh=pixel:`` of an image, ``t=npt:`` of audio) or HTML
  (RFC 3236: an element's ``id``), as fits.

What the text positions count (decision): for a PDF, its text layer (what
its ``char`` positions count; docs/pdf-text-layer.md); for a text, the CRLF-canonical
text (so ``TextPositionSelector`` holds the ``char`` positions, which for a
text deposited with CR LF line ends are the code points of its own text);
for HTML,
XML and an aggregate, the page text of :mod:`pdi.fragments.pagetext` (the
rendered text, one line per block, white space collapsed), which is what a
quote is taken from and matched in.

Exported (:func:`export_annotation`, ``pdi annotate --export``,
``GET /api/annotation``): a fragment name is an Annotation with motivation
``identifying`` whose body is the fragment name and whose target is the
passage; a citation ``A@p=B#f`` is one with motivation ``linking``, target
the cited passage of B and body the position ``p`` of A; a browser fragment
(``#:~:text=``, ``#t=``, ``#xywh=``) is exported as the native name it
equals.

Imported (:func:`import_annotations`, ``pdi annotate --import``,
``POST /api/annotation``): a W3C Annotation, a list or page of them, or a
Hypothesis export (its ``annotations`` or ``rows``, each with ``uri`` and
``target[].selector[]``), against an archived document: the document named
(``--pdi``, ``pdi=``), else the target's source, which must then be a PDI.
Each target gives the ``char`` name of the
passage it points at: by its quote (:func:`find_quote`, the position a hint
among several places), else its position or fragment selector; a quote
that is not in the document is reported ``missing``, never guessed; a
selector ``refinedBy`` another (§4.2.9) is refused, not read as the whole
it refines.

:func:`~pdi.fragments.quote.text_quote` and
:func:`~pdi.fragments.quote.find_quote` (a pure core, re-exported here) take
quotes out of a text and find them again, for any caller.
"""

from __future__ import annotations

import dataclasses
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

from pdi.archive import Archive, Resolved
from pdi.errors import LimitError, ParseError, PDIError, UnsupportedError
from pdi.fragments.quote import CONTEXT_CHARS, QuoteMatch, TextQuote, find_quote, text_quote
from pdi.identifier import PDI, Fragment

if TYPE_CHECKING:
    from pdi.fragments.pagetext import PageText

__all__ = [
    "CONTEXT",
    "CONTEXT_CHARS",
    "QuoteMatch",
    "TargetResult",
    "TextQuote",
    "export_annotation",
    "find_quote",
    "import_annotations",
    "text_quote",
]

#: The JSON-LD context of the Web Annotation Data Model.
CONTEXT: Final = "http://www.w3.org/ns/anno.jsonld"
RFC5147: Final = "http://tools.ietf.org/rfc/rfc5147"
MEDIA_FRAGMENTS: Final = "http://www.w3.org/TR/media-frags/"
HTML_FRAGMENT: Final = "http://tools.ietf.org/rfc/rfc3236"
#: The most annotations (targets) one import reads.
MAX_TARGETS: Final = 1000
#: The longest one import may take finding its targets (seconds): a quote absent from a long text is a scan of
#: all of it (0.7 s for 30 MB), and an anonymous import of a thousand such targets held a worker's place for
#: many minutes.
MAX_IMPORT_SECONDS: Final = 20.0


# --- export ---------------------------------------------------------------------------------


def _annotation_id(name: str) -> str:
    """A stable IRI for the annotation of ``name``: the same name always exports the same id."""
    return f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, name)}"


def export_annotation(archive: Archive, name: str) -> dict[str, Any]:
    """The Web Annotation (JSON-LD, compacted against :data:`CONTEXT`) of a fragment name or a citation."""
    from pdi.interop.aliases import alias_fragment, native_names

    if alias_fragment(name) is not None:
        name = str(native_names(archive, name).native)
    parsed = PDI.parse(name)
    if parsed.citation is not None:
        return _export_citation(archive, parsed)
    if parsed.fragment is None:
        raise UnsupportedError(
            f"{parsed} names a whole document: an annotation exports a fragment name (NAME#char=a,b) or a citation"
        )
    target = _specific_resource(archive, parsed)
    return {
        "@context": CONTEXT,
        "id": _annotation_id(str(target["source"]) + "#" + str(parsed.fragment)),
        "type": "Annotation",
        "motivation": "identifying",
        "body": str(_versioned(archive, parsed)),
        "target": target,
    }


def _versioned(archive: Archive, parsed: PDI) -> PDI:
    """The name with its version written (the lenient parser's version 1 made explicit by the archive)."""
    located = archive.locate(str(parsed))
    return dataclasses.replace(located.pdi, fragment=parsed.fragment) if isinstance(located, Resolved) else parsed


def _export_citation(archive: Archive, parsed: PDI) -> dict[str, Any]:
    from pdi import formats

    assert parsed.citation is not None
    citing_name = dataclasses.replace(parsed, citation=None)
    citing = archive.get(str(citing_name))
    cited = parsed.citation.cited
    if cited.citation is not None:
        raise UnsupportedError(f"{cited} is a citation itself: an annotation links one passage to another")
    if cited.fragment is None:  # as export_annotation says of a whole document: no selector names it
        raise UnsupportedError(
            f"{cited} names a whole document: the cited end of an exported citation is a passage (NAME#char=a,b)"
        )
    scheme = formats.default_fragment_scheme(citing.record.format)
    origin = parsed.citation.origin
    if scheme in ("rect", "crop") and isinstance(origin, tuple) and len(origin) == 2 and isinstance(origin[0], int):
        x, y = origin  # a coordinate names a pixel (x1 <= x < x2, draft lines 692-701): that pixel's region
        fragment = Fragment.of("rect", (x, y), (x + 1, y + 1))
    elif scheme in ("char", "line"):
        fragment = Fragment.of(scheme, origin, origin)  # a position between two characters: no length
    else:  # an instant: a Media Fragment (t=a,b) names a stretch, begin before end, never an instant
        raise UnsupportedError(
            f"the citing document {citing.pdi} is {citing.media_type}: its position {origin} is an instant, which"
            " no Web Annotation selector names; an exported citation quotes at a character or a pixel"
        )
    body_name = dataclasses.replace(citing.pdi, fragment=fragment)
    body = _specific_resource(archive, body_name)
    target = _specific_resource(archive, PDI.parse(str(cited)))
    return {
        "@context": CONTEXT,
        "id": _annotation_id(str(parsed)),
        "type": "Annotation",
        "motivation": "linking",
        "body": body,
        "target": target,
    }


def _specific_resource(archive: Archive, parsed: PDI) -> dict[str, Any]:
    """A ``SpecificResource``: the versioned PDI as source, and the selectors of its fragment."""
    resolved = archive.get(str(parsed))
    source = resolved.pdi.without_fragment()
    result = resolved.fragment
    assert result is not None and parsed.fragment is not None
    if result.past_end:
        raise UnsupportedError(f"{parsed} lies wholly past the end of its document: it selects nothing to annotate")
    scheme = parsed.fragment.effective_scheme(resolved.record.format)
    selectors: list[dict[str, Any]] = []
    media_type = resolved.record.media_type
    if result.region is not None:
        r = result.region
        selectors.append({
            "type": "FragmentSelector", "conformsTo": MEDIA_FRAGMENTS,
            "value": f"xywh=pixel:{r.x1},{r.y1},{r.x2 - r.x1},{r.y2 - r.y1}",
        })
    elif result.interval is not None:
        if result.interval.end <= result.interval.start:  # Media Fragments has no empty interval (t=a,a is invalid)
            raise UnsupportedError(f"{parsed} is an empty interval, an instant: a Media Fragment (t=a,b, a before b)"
                                   " names a stretch, never an instant, so there is no selector to annotate it by")
        positions = parsed.fragment.positions
        unit = Decimal(1000) if scheme == "msec" else Decimal(1)
        t0, t1 = (Decimal(p) / unit if isinstance(p, int) else Decimal(0) for p in positions[:2])
        selectors.append({"type": "FragmentSelector", "conformsTo": MEDIA_FRAGMENTS, "value": f"t=npt:{t0},{t1}"})
    elif scheme == "byte":
        selectors.append({"type": "DataPositionSelector", "start": result.ranges[0].byte_start,
                          "end": result.ranges[0].byte_end})
    else:
        located = archive.locate(str(source))
        assert isinstance(located, Resolved)  # a versioned name's source: one representation
        page = page_text_of(archive, located)
        first, last = result.ranges[0].start, result.ranges[-1].end
        start, end = page.text_range(first, last)
        quote = text_quote(page.text, start, end)
        if quote.exact:
            selectors.append({"type": "TextQuoteSelector", "exact": quote.exact, "prefix": quote.prefix,
                              "suffix": quote.suffix})
        selectors.append({"type": "TextPositionSelector", "start": start, "end": end})
        if page.kind == "text" and media_type != "application/pdf" and not any(page.text[p - 1 : p + 1] == "\r\n" for p in (first, last) if p > 0):
            # an end between a CR and its LF has no RFC 5147 position (a line end is one character there): no selector
            a, b = _rfc5147(page.text, first), _rfc5147(page.text, last)
            selectors.append({"type": "FragmentSelector", "conformsTo": RFC5147,
                              "value": f"char={a}" if a == b else f"char={a},{b}"})
        elif scheme == "name" and parsed.fragment.positions[0] == parsed.fragment.positions[-1]:
            selectors.append({"type": "FragmentSelector", "conformsTo": HTML_FRAGMENT,
                              "value": str(parsed.fragment.positions[0])})
    return {
        "type": "SpecificResource",
        "source": str(source),
        "selector": selectors[0] if len(selectors) == 1 else selectors,
    }


def page_text_of(archive: Archive, located: Resolved) -> PageText:
    """The text quotes, text directives and positions are taken from: a PDF's text layer kept at deposit
    (docs/pdf-text-layer.md: what its ``char`` positions count), else the page text of the document's bytes (read
    here if not yet; an e-mail's body text, docs/email.md)."""
    from pdi.fragments.pagetext import document_page_text, plain_page_text

    whole = located if located.data or not located.record.size or located.media_type in (
        "application/pdf", "message/rfc822") else archive.read(located)  # their text: char_text reads it
    text = archive.char_text(whole)  # a PDF's text layer, an e-mail's body text
    if text is not None:
        return plain_page_text(text)
    return document_page_text(whole.data, whole.media_type, whole.charset)


def _rfc5147(text: str, position: int) -> int:
    """A ``char`` position of the CRLF-canonical text as RFC 5147 counts it (a CRLF is one character)."""
    return position - text.count("\r\n", 0, position)


def _from_rfc5147(text: str, position: int) -> int:
    """The inverse of :func:`_rfc5147`: the PDI ``char`` position of an RFC 5147 one."""
    at = 0
    counted = 0
    while counted < position and at < len(text):
        at += 2 if text.startswith("\r\n", at) else 1
        counted += 1
    return at


# --- import ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TargetResult:
    """What one annotation target points at in the archive.

    ``status``: ``"found"`` (the quote stands where its position says, or it
    had no position), ``"moved"`` (the quote stands elsewhere than its
    position said), ``"missing"`` (the quote is not in the document), or
    ``"selected"`` (no quote: read from a position or fragment selector).
    ``name`` is the ``char`` (or ``rect``, ``sec`` …) name of the passage,
    ``None`` when missing.
    """

    annotation: str | None
    source: str
    document: str
    status: str
    name: PDI | None
    message: str
    quote: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "annotation": self.annotation,
            "source": self.source,
            "document": self.document,
            "status": self.status,
            "pdi": None if self.name is None else str(self.name),
            "quote": self.quote,
            "message": self.message,
        }


def _annotations(data: object) -> list[Mapping[str, Any]]:
    """The annotations of what was read: one, a list, a W3C page or collection, or a Hypothesis export."""
    if isinstance(data, list):
        items: list[Any] = data
    elif isinstance(data, Mapping):
        for key in ("annotations", "rows", "items"):
            if isinstance(data.get(key), list):
                items = data[key]
                break
        else:
            first = data.get("first")
            if isinstance(first, Mapping) and isinstance(first.get("items"), list):
                items = first["items"]
            else:
                items = [data]
    else:
        raise ParseError("an annotation is a JSON object (or a list of them)", rule="annotation")
    if len(items) > MAX_TARGETS:
        raise LimitError(f"an import reads at most {MAX_TARGETS} annotations, not {len(items)}")
    for k, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ParseError(f"annotation {k} is not a JSON object", rule="annotation")
    return items


def _targets(annotation: Mapping[str, Any]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """``(source, selectors)`` of each target (Hypothesis: ``uri`` is the source when a target has none)."""
    raw = annotation.get("target")
    if raw is None:
        raise ParseError("an annotation without a target", rule="target")
    targets = raw if isinstance(raw, list) else [raw]
    out: list[tuple[str, list[Mapping[str, Any]]]] = []
    for target in targets:
        if isinstance(target, str):
            out.append((target, []))
            continue
        if not isinstance(target, Mapping):
            raise ParseError("a target is an IRI or a JSON object", rule="target")
        source = target.get("source", annotation.get("uri"))
        if not isinstance(source, str):
            source = target.get("id", "")
        selectors = target.get("selector", [])
        selectors = selectors if isinstance(selectors, list) else [selectors]
        out.append((str(source), [s for s in selectors if isinstance(s, Mapping)]))
    return out


def _is_pdi(source: str) -> bool:
    return source.lower().startswith(("urn:pdi:", "pdi:"))


def import_annotations(archive: Archive, data: object, *, document: str | None = None) -> list[TargetResult]:
    """The name each target of the annotations in ``data`` points at (see the module docstring).

    ``document`` is the archived document the annotations were made on (a
    versioned PDI); without it, each target's source must be a PDI.
    """
    wanted: list[tuple[str | None, str, str, list[Mapping[str, Any]]]] = []
    places: list[str] = []  # where each wanted target is, as an error says it
    for number, annotation in enumerate(_annotations(data), start=1):
        ident = annotation.get("id")
        ident = str(ident) if ident is not None else None
        place = f"annotation {number}" + (f" ({ident[:120]})" if ident else "")
        try:
            targets = _targets(annotation)
        except PDIError as exc:
            raise exc.within(f"{place}: ") from None
        for which, (source, selectors) in enumerate(targets, start=1):
            places.append(f"{place}, target {which}: ")
            chosen = document if document is not None else (source if _is_pdi(source) else None)
            if chosen is None:
                raise UnsupportedError(
                    f"the annotation {ident or ''} targets {source[:120]!r}, which is not a PDI: name the archived "
                    "document it was made on (--pdi, or pdi= on the API)"
                )
            wanted.append((ident, source, chosen.split("#", 1)[0], selectors))
    # the targets of one document together: each document is read (and its page text made) once, and one is
    # held at a time, however many targets point at it and in whatever order they come
    results: list[TargetResult | None] = [None] * len(wanted)
    order = sorted(range(len(wanted)), key=lambda k: (wanted[k][2], k))
    current: tuple[str, _Document] | None = None
    deadline = time.monotonic() + MAX_IMPORT_SECONDS
    for done, k in enumerate(order):
        if time.monotonic() > deadline:
            raise LimitError(f"finding these annotations' targets took more than {MAX_IMPORT_SECONDS:g} s ({done} of"
                             f" {len(wanted)} found): send fewer at once")
        ident, source, key, selectors = wanted[k]
        if current is None or current[0] != key:
            current = None  # the document before is let go before the next one is read
            located = archive.locate(key)  # a PDF's text layer is read, not the PDF
            pdf = located if isinstance(located, Resolved) and located.media_type == "application/pdf" else None
            current = (key, _Document(archive, pdf or archive.get(key)))
        try:
            results[k] = _import_target(archive, ident, source, current[1], selectors)
        except PDIError as exc:
            raise exc.within(places[k]) from None
    return [r for r in results if r is not None]


class _Document:
    """An archived document targets point at: read once, its page text made the first time it is needed."""

    def __init__(self, archive: Archive, whole: Resolved) -> None:
        self.archive = archive
        self.whole = whole
        self._page: PageText | None = None

    def page(self) -> PageText:
        if self._page is None:
            self._page = page_text_of(self.archive, self.whole)
        return self._page


def _selector(selectors: Sequence[Mapping[str, Any]], kind: str) -> Mapping[str, Any] | None:
    return next((s for s in selectors if s.get("type") == kind), None)


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ParseError(f"{what} is a whole number of at least 0, not {value!r}", rule=what)
    return value


def _named(base: PDI, scheme: str, *positions: object) -> PDI:
    """``base`` with the fragment ``scheme=positions``, checked against its format."""
    return _valid(dataclasses.replace(base, fragment=Fragment.of(scheme, *positions)))


def _import_target(
    archive: Archive, ident: str | None, source: str, document: _Document, selectors: Sequence[Mapping[str, Any]]
) -> TargetResult:
    base = document.whole.pdi.without_fragment()
    refined = next((s for s in selectors if "refinedBy" in s), None)
    if refined is not None:
        # §4.2.9: the refinement selects within what the selector selects; read without it, the name would be of the
        # whole of that (a paragraph where the annotation is of one word in it), answered as if it were the passage
        raise UnsupportedError(f"the target of {ident or 'an annotation'} has a {str(refined.get('type'))[:60]} refined"
                               " by another selector (refinedBy, Web Annotation Data Model §4.2.9), which pdi does"
                               " not read: its name would be of more than the passage")
    quote = _selector(selectors, "TextQuoteSelector")
    position = _selector(selectors, "TextPositionSelector")
    fragment = _selector(selectors, "FragmentSelector")
    data_position = _selector(selectors, "DataPositionSelector")
    if quote is not None or position is not None:
        return _from_text(ident, source, base, document.page(), quote, position)
    if fragment is not None:
        return _from_fragment(archive, ident, source, base, document, fragment)
    if data_position is not None:
        start, end = _int(data_position.get("start"), "start"), _int(data_position.get("end"), "end")
        return TargetResult(ident, source, str(base), "selected", _named(base, "byte", start, end), "read from its octets")
    if not selectors and _is_pdi(source) and "#" in source:
        # the target is a PDI of a passage itself (its fragment, no selector): that passage of the document read
        named = PDI.parse(source)
        if (named.series_name.lower(), named.date, named.unique_id) == (
                base.series_name.lower(), base.date, base.unique_id):
            name = _valid(dataclasses.replace(base, fragment=named.fragment))
            return TargetResult(ident, source, str(base), "selected", name, "named by its target")
    raise UnsupportedError(f"the target of {ident or 'an annotation'} has no selector pdi reads "
                           "(TextQuoteSelector, TextPositionSelector, FragmentSelector, DataPositionSelector)")


def _from_text(
    ident: str | None, source: str, base: PDI, page: PageText,
    quote: Mapping[str, Any] | None, position: Mapping[str, Any] | None,
) -> TargetResult:
    """A target with a TextQuoteSelector (found near its TextPositionSelector, if any), or only a TextPositionSelector."""
    near = None
    if position is not None:
        start, end = _int(position.get("start"), "start"), _int(position.get("end"), "end")
        if end < start:
            raise ParseError(f"a TextPositionSelector ends ({end}) before it starts ({start})", rule="end")
        near = start
    if quote is not None:
        exact = quote.get("exact")
        if not isinstance(exact, str):
            raise ParseError("a TextQuoteSelector needs its exact text", rule="exact")
        prefix, suffix = quote.get("prefix"), quote.get("suffix")
        match = find_quote(
            page.text, exact, prefix if isinstance(prefix, str) else None,
            suffix if isinstance(suffix, str) else None, near=near,
        )
        if match is None:
            return TargetResult(ident, source, str(base), "missing", None,
                                f"the quote {_short(exact)} is not in {base}", exact)
        a, b = page.document_range(match.start, match.end)
        moved = near is not None and position is not None and (match.start, match.end) != (near, position["end"])
        status = "moved" if moved else "found"
        message = (f"the quote stands at {match.start}-{match.end} of the page text, not at {near}-{position['end']}"
                   if moved and position is not None else "the quote is there")
        if match.context != "both":
            message += f" (its context agrees: {match.context})"
        return TargetResult(ident, source, str(base), status, _named(base, "char", a, b), message, exact)
    assert position is not None
    start, end = _int(position["start"], "start"), _int(position["end"], "end")
    if end > len(page.text):
        raise ParseError(f"the TextPositionSelector ends at {end}, past the text's {len(page.text)} characters",
                         rule="end")
    a, b = page.document_range(start, end)
    return TargetResult(ident, source, str(base), "selected", _named(base, "char", a, b), "read from its position")


def _from_fragment(
    archive: Archive, ident: str | None, source: str, base: PDI, document: _Document, selector: Mapping[str, Any]
) -> TargetResult:
    from pdi.interop.aliases import native_names

    value = selector.get("value")
    conforms = str(selector.get("conformsTo", ""))
    if not isinstance(value, str) or not value:
        raise ParseError("a FragmentSelector needs a value", rule="FragmentSelector")
    if conforms.rstrip("/").endswith("media-frags"):
        native = native_names(archive, f"{base}#{value}").native
        return TargetResult(ident, source, str(base), "selected", native, "read from its Media Fragment")
    if conforms.endswith("rfc5147"):
        m = re.fullmatch(r"char=([0-9]{1,15})(?:,([0-9]{1,15}))?", value.split(";", 1)[0])
        if m is None:
            raise UnsupportedError(f"only RFC 5147 char= positions and ranges are read, not {value[:60]!r}")
        page = document.page()
        if page.kind != "text":
            raise UnsupportedError("an RFC 5147 fragment selects in text/plain")
        a = _from_rfc5147(page.text, int(m.group(1)))
        b = _from_rfc5147(page.text, int(m.group(2))) if m.group(2) else a
        name = _valid(dataclasses.replace(base, fragment=Fragment.of("char", a, b)))
        return TargetResult(ident, source, str(base), "selected", name, "read from its RFC 5147 fragment")
    if conforms.endswith("rfc3236"):
        name = _valid(dataclasses.replace(base, fragment=Fragment.of("name", value, value)))
        return TargetResult(ident, source, str(base), "selected", name, "read from its HTML id")
    raise UnsupportedError(f"a FragmentSelector conforming to {conforms[:80]!r} is not read")


def _valid(name: PDI) -> PDI:
    """``name`` once it is known to be a PDI (a selector's range that ends before it starts, or a scheme its
    format has not, makes none): a :class:`~pdi.errors.ParseError` saying why otherwise."""
    return PDI.parse(str(name))


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "…")
