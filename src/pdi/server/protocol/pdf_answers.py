"""What ``N2R`` answers for a fragment of a PDF, and ``Accept`` to choose another (docs/pdf-text-layer.md §4).

| fragment | default | ``text/plain`` | ``image/png`` | ``application/pdf`` |
|---|---|---|---|---|
| passage: ``char``, ``line``, ``search`` | its text | the same | its characters' boxes rendered, when on one page (else ``406`` naming the first :data:`MOST_NAMED` passages of a page each) | the whole PDF |
| region: ``rect``, ``viewrect`` | rendered | the characters whose box centre lies in it | the same | the whole PDF |
| location: ``page``, ``nameddest`` | the whole PDF | the page's text *T(n)* | the page rendered | the same |

Only an ``Accept`` that names one of these three types exactly can choose
another answer than the default (``*/*`` and a browser's usual field leave it);
none acceptable is ``406`` listing them. Renderings are PDFium's at 144 dpi
(:func:`pdi.fragments.pdf_render.render_png`, in a child process under
:data:`pdi.fragments.pdf.LIMITS`: past them, ``400`` titled limit exceeded, naming the limit). An answer other than the default
carries its media type in its entity tag, is never kept by the resolver's
cache (:func:`pdi.server.process.cache.negotiates`), and says ``Vary: Accept``
as every N2R answer does. The whole PDF is read from its chunks, each checked
against its digests.
"""

from __future__ import annotations

import dataclasses
import math

from pdi.archive import Archive, Resolved
from pdi.interop.accept import choose, parse_accept
from pdi.server.http.problems import Problem

KINDS = {"char": "passage", "line": "passage", "search": "passage", "rect": "region", "viewrect": "region",
         "page": "location", "nameddest": "location"}
DEFAULTS = {"passage": "text/plain", "region": "image/png", "location": "application/pdf"}
TYPES = ("text/plain", "image/png", "application/pdf")
#: The most passages, one a page, that the ``406`` of a passage over several pages names: the first ones
#: (a passage over 30,000 pages would else name every one, in a detail of 2 MB).
MOST_NAMED = 3


def _not_acceptable(detail: str) -> Problem:
    """The ``406`` of an ``Accept`` that takes none of a PDF fragment's answers: it varies by ``Accept`` (RFC 9110
    §12.5.5), as the answers it chose among do."""
    refusal = Problem(406, "not acceptable", detail)
    refusal.headers["Vary"] = "Accept"
    return refusal


def chosen_type(scheme: str, accept: str | None) -> str | None:
    """The media type N2R answers for a PDF fragment of ``scheme`` under ``accept`` (None: not a PDF answer)."""
    kind = KINDS.get(scheme)
    if kind is None:
        return None
    default = DEFAULTS[kind]
    if not accept or not any(t in accept.lower() for t in TYPES):
        return default
    offered = [default, *(t for t in TYPES if t != default)]
    index = choose(parse_accept(accept), offered)
    if index is None:
        raise _not_acceptable(f"a {kind} of a PDF ({scheme}=) is answered as {', '.join(offered)}:"
                      f" the Accept field {accept!r} takes none of them")
    return offered[index]


def answer(archive: Archive, resolved: Resolved, accept: str | None) -> tuple[Resolved, str]:
    """``resolved`` (a PDF's fragment, read) as the answer ``accept`` chooses, and the tag's variant ("" for the
    default answer, else ``;type``)."""
    from pdi.fragments.pdf import layer_of
    from pdi.fragments.pdf_render import render_png

    fragment = resolved.fragment
    assert fragment is not None
    scheme = fragment.scheme
    wanted = chosen_type(scheme, accept)
    if wanted is None or wanted == DEFAULTS[KINDS[scheme]]:
        if scheme in ("rect", "viewrect") and wanted == "image/png":
            pass  # the evaluator gave the region's text: the default is its rendering
        else:
            return resolved, ""
    variant = "" if wanted == DEFAULTS[KINDS[scheme]] else f";{wanted}"
    if wanted == "text/plain" and KINDS[scheme] != "location":  # the evaluator's answer: the characters
        return resolved, variant
    whole = archive.read(dataclasses.replace(resolved, pdi=resolved.pdi.without_fragment(), fragment=None))
    if wanted == "application/pdf":
        return _as(resolved, whole.data, "application/pdf", None), variant
    index = archive.fragment_index(resolved.record)
    name = str(resolved.pdi.without_fragment())
    if wanted == "text/plain":  # a location: the page's text T(n)
        assert fragment.page is not None
        layer = layer_of(whole.data, index, name=name)
        start, end = layer.page_range(fragment.page.number)
        data = layer.text[start:end].encode("utf-8", "surrogatepass")
        return _as(resolved, data, "text/plain", "utf-8"), variant
    # image/png
    if fragment.region is not None:
        r = fragment.region
        png = render_png(whole.data, r.frame + 1, (r.x1, r.y1, r.x2, r.y2), name=name)
    elif fragment.page is not None and KINDS[scheme] == "location":
        png = render_png(whole.data, fragment.page.number, name=name)
    else:  # a passage: the box around its characters, when they lie on one page
        png = _passage_png(archive, resolved, whole.data, index)
    return _as(resolved, png, "image/png", None), variant


def _as(resolved: Resolved, data: bytes, media_type: str, charset: str | None) -> Resolved:
    """``resolved`` answering ``data`` of ``media_type`` (its fragment's selection kept, its charset this one)."""
    fragment = resolved.fragment
    assert fragment is not None
    fragment = dataclasses.replace(fragment, data=data, media_type=media_type, charset=charset)
    return dataclasses.replace(resolved, data=data, media_type=media_type, charset=charset, fragment=fragment)


def _passage_png(archive: Archive, resolved: Resolved, data: bytes, index: bytes | None) -> bytes:
    from pdi.fragments.pdf import layer_of, page_boxes
    from pdi.fragments.pdf_render import render_png

    fragment = resolved.fragment
    assert fragment is not None
    name = str(resolved.pdi.without_fragment())
    layer = layer_of(data, index, name=name)
    if not fragment.ranges or fragment.ranges[0].start == fragment.ranges[-1].end:
        raise _not_acceptable("an empty passage has no region to render: ask for text/plain")
    a, b = fragment.ranges[0].start, fragment.ranges[-1].end
    first, last = layer.page_of(a), layer.page_of(b - 1)
    if first != last:
        named, number = [], first
        for number in range(first, last + 1):
            s, e = layer.page_range(number)
            if max(a, s) < min(b, e):
                named.append(f"{resolved.pdi.without_fragment()}#char={max(a, s)},{min(b, e)}")
                if len(named) == MOST_NAMED:
                    break
        rest = f", and so on to page {last}" if number < last else ""
        raise _not_acceptable(f"the passage lies on pages {first} to {last}: an image is of one page;"
                      f" name a passage per page: {', '.join(named)}{rest}")
    page = page_boxes(data, index, first, name=name)
    boxes = [page.boxes[4 * i: 4 * i + 4] for i in range(max(0, a - page.start), min(len(page.text), b - page.start))]
    boxes = [box for box in boxes if not math.isnan(box[0])]
    if not boxes:
        raise _not_acceptable("the passage has no character drawn on the page: ask for text/plain")
    left, top = page.crop[0], page.crop[3]
    x1 = min(box[0] for box in boxes) - left
    x2 = max(box[2] for box in boxes) - left
    y1 = top - max(box[3] for box in boxes)
    y2 = top - min(box[1] for box in boxes)
    return render_png(data, first, (math.floor(x1), math.floor(y1), math.ceil(x2), math.ceil(y2)), name=name)
