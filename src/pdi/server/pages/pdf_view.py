"""The viewer's page of a PDF (issue 25): its pages drawn by pdf.js, the cited passage or region marked.

:func:`render_pdf` writes the page's frame: a ``<div id="pdf">`` whose
``data-`` attributes tell the viewer's script (:mod:`pdi.server.pages.viewer_script`,
its PDF part) where the PDF's octets are (its ``N2R``, fetched by pdf.js in
ranges), where pdi's copy of pdf.js is (:mod:`pdi.server.pages.pdfjs`), each
page's size in points (from the text layer kept at deposit), and what the
name cites: a passage (``char``/``line``: its ``[a, b)`` in the text layer
*D*), a region (``rect``: its corners in points and its page) or a page
(``page``, ``nameddest``). The script draws the pages as they come into
view, a page at a time, lays each page's characters over it at the boxes
PDFium gives them (``/api/pdf/page``, :func:`page_json`), so that a
selection is counted on *D* exactly as pdi counts it (never on pdf.js's own
text, which spells ligatures, hyphens and spaces otherwise:
``docs/pdf-text-layer.md`` §6), marks the cited passage or region and
scrolls to it. Select → cite: a selection on the text (``#char=a,b``) or a
box dragged on a page in box mode (``#rect=(x1,y1),(x2,y2),f``), each name
resolved by the server and compared with what was selected before it is
offered.
"""

from __future__ import annotations

import collections
import html
import json
import threading
from collections.abc import Callable

from pdi.archive import Archive, Generic, Resolved
from pdi.errors import LimitError, NotFoundError, ParseError, UnsupportedError
from pdi.identifier import PDI
from pdi.server.pages.layout import COUNTING_LINK, n2r_href, scripted_or
from pdi.server.pages.pdfjs import manifest

HINT = (
    scripted_or("Select text on a page to name that passage", "A passage is named")
    + ": <code>#char=a,b</code>, the characters after the first <var>a</var> of the PDF's text up to the"
    f" <var>b</var>th, counted from page 1 on, line ends and page turns included ({COUNTING_LINK}). "
    + scripted_or("Or press <strong>Draw a box</strong> and drag on a page to name a region", "A region is named")
    + ": <code>#rect=(x1,y1),(x2,y2),f</code>, in points from the page's top-left corner, <var>f</var> the page"
    " less one (left out on page 1)."
)
#: The hint of a PDF of which pdi cites no page or region (its page tree read otherwise by PDFium and pdf.js): its
#: text is not laid over pdf.js's pages, whose page n may not be PDFium's, so a passage is named by hand.
TEXT_HINT = (
    "A passage of its text is named <code>#char=a,b</code>: the characters after the first <var>a</var> of the"
    f" PDF's text up to the <var>b</var>th, counted from page 1 on, line ends and page turns included ({COUNTING_LINK})."
)
#: The most characters of a cited passage a PDF's page without text over its pages shows (the rest said cut).
SHOWN_PASSAGE = 2000


def render_pdf(archive: Archive, whole: Resolved, selected: Resolved | None,
               cite_panel: Callable[[bool, bool], str]) -> str:
    """The body of a PDF's page after its head: notes, the cite panel (``cite_panel(marked, regions)``: ``marked``,
    whether the page marks what the name's fragment names, a passage, a region or a page to open at; ``regions``,
    whether a region is offered), the box-mode button and the pages' frame.

    Of a PDF whose page tree PDFium and pdf.js read differently (:attr:`pdi.fragments.pdf.TextLayer.page_tree`),
    whose pages and regions pdi does not cite, the page says so, and offers no box nor region form; nor does it lay
    the text layer over the pages (pdf.js's page n may not be PDFium's, whose characters the layer holds: a
    selection would name other text than the one seen): a passage is named by hand, and a passage cited is shown
    as text above the pages."""
    layer = archive.text_layer_of(whole.record)
    regions = layer is None or not layer.page_tree
    name = str(whole.pdi)
    pdfjs = manifest()
    attributes = {
        "data-pdi": name,
        "data-src": n2r_href(name),
        "data-pdfjs": pdfjs.url("pdf.min.mjs"),
        "data-worker": pdfjs.url("pdf.worker.min.mjs"),
        "data-wasm": pdfjs.url(),
        "data-cmaps": pdfjs.url() + "cmaps/",
        "data-fonts": pdfjs.url() + "standard_fonts/",
        "data-sizes": json.dumps([[w, h] for w, h in layer.page_sizes]) if layer is not None else "[]",
        "data-layer": "1" if layer is not None and not layer.empty and regions else "0",
    }
    fragment = selected.fragment if selected is not None else None
    cited = ""  # a passage of a PDF whose pages are not marked, as text
    if fragment is not None and not fragment.past_end and not regions and selected is not None:
        text = selected.data.decode("utf-8", "replace")
        cut = f" … ({len(text) - SHOWN_PASSAGE:,} more characters)" if len(text) > SHOWN_PASSAGE else ""
        cited = ('<figure class="pdf-cited"><figcaption>The passage this name cites, as text:</figcaption>'
                 '<blockquote id="pdf-cited"><p>' + html.escape(text[:SHOWN_PASSAGE]) + cut
                 + "</p></blockquote></figure>")
    elif fragment is not None and not fragment.past_end:
        if fragment.region is not None:
            r = fragment.region
            attributes["data-region"] = f"{r.x1},{r.y1},{r.x2},{r.y2},{r.frame}"
            attributes["data-page"] = str(r.frame + 1)
        elif fragment.scheme in ("char", "line", "search") and fragment.ranges and layer is not None:
            a, b = fragment.ranges[0].start, fragment.ranges[-1].end
            attributes["data-passage"] = f"{a},{b}"
            attributes["data-page"] = str(layer.page_of(a))
        elif fragment.page is not None:
            attributes["data-page"] = str(fragment.page.number)
    if layer is None:
        note = ('<p class="note" id="no-layer">No text layer: PDFium could not read this PDF when it was deposited,'
                " so its text cannot be selected or searched here. Cite it by page and region.</p>")
    elif not regions:
        from pdi.fragments.pdf_positions import page_tree_said

        note = ('<p class="note" id="page-tree">pdi cites no page or region of this PDF: '
                + html.escape(page_tree_said(layer.page_tree))
                + ", so a page drawn here could be another page, or none, in another viewer. "
                + ("It has no text either (a scan without OCR): cite the whole PDF.</p>" if layer.empty else
                   "A passage of its text (<code>#char=</code>, <code>#line=</code>, <code>#search=</code>) is"
                   " cited, as any viewer finds the same text; its text is not laid over the pages here, whose page"
                   " numbers may not be the text's, so type the passage's name, and a passage named is shown below"
                   " as text.</p>"))
    elif layer.empty:
        # the box is drawn by the script only: without one, what a region is named (the hint below says it too)
        note = ('<p class="note" id="no-layer">No text layer: this PDF has no text (a scan without OCR).'
                " Cite it by page and region: "
                + scripted_or("draw a box on a page.", "a region is named <code>#rect=(x1,y1),(x2,y2),f</code>.")
                + "</p>")
    else:
        note = ""
    data = "".join(f' {key}="{html.escape(value)}"' for key, value in attributes.items())
    pages = layer.pages if layer is not None else 0
    region = fragment.region if fragment is not None and not fragment.past_end else None
    given = {"x1": region.x1, "y1": region.y1, "x2": region.x2, "y2": region.y2} if region is not None else {}
    page_value = f' value="{region.frame + 1}"' if region is not None else ' value="1"'
    fields = '<span class="corners">' + "".join(
        f'<label>{axis} <input type="number" id="pdf-{axis}" min="0" step="1" inputmode="numeric"'
        + (f' value="{given[axis]}"' if axis in given else "") + "></label>"
        for axis in ("x1", "y1", "x2", "y2")
    ) + "</span>"  # two rows, x1 y1 over x2 y2, as an image's (media_view._corners)
    max_page = f' max="{pages}"' if pages else ""
    coords = (
        '<fieldset class="coords needs-script"><legend>Region in points from the page\'s top-left corner (x2, y2 excluded)</legend>'
        f'<label>page <input type="number" id="pdf-region-page" min="1"{max_page} step="1"'
        f' inputmode="numeric"{page_value}></label>{fields}</fieldset>'
    )
    # the button, the region's boxes and the pages' frame ("Loading the pages…") work only with a script:
    # needs-script, not drawn without one. The button to draw a box in the panel of names, which stays at the top of the window as the pages scroll
    # (its hint says to press it): at hand on page 14 as on page 1
    button = '<button type="button" id="pdf-box-mode" aria-pressed="false">Draw a box</button> ' if regions else ""
    tools = (f'<p class="pdf-tools needs-script">{button}'
             + (f'<span class="pdf-count">{pages or "its"} page{"" if pages == 1 else "s"}, drawn by pdf.js as'
                f' {"it comes" if pages == 1 else "they come"} into view</span></p>' if regions else
                # PDFium's count is not pdf.js's here (the note says why): the pages drawn are pdf.js's
                '<span class="pdf-count">its pages as pdf.js reads them, drawn as they come into view</span></p>'))
    return (
        note + cite_panel("data-page" in attributes or bool(cited), regions).replace('<p id="cite-status"', tools + '<p id="cite-status"', 1)
        + (coords if regions else cited)
        + '<noscript><p class="note">The pages are drawn by pdf.js, which needs JavaScript: without it, open'
        ' the bytes (above) in your browser, which shows the PDF itself.</p></noscript>'
        f'<div id="pdf" class="pdf needs-script"{data}><p class="pdf-loading" id="pdf-loading">Loading the pages…</p></div>'
    )


def page_json(archive: Archive, name: str, page: str) -> dict[str, object]:
    """``/api/pdf/page``: page ``page`` of the PDF ``name``'s text layer with its characters' boxes
    (:class:`pdi.fragments.pdf.PageBoxes`), what the viewer lays over the drawn page."""
    from pdi.fragments.pdf import pages_boxes

    if not page.isascii() or not page.isdigit() or len(page) > 7 or int(page) < 1:
        raise ParseError(f"page={page[:20]!r}: a page number from 1 (at most 7 digits)", rule="page")
    parsed = PDI.parse(name)
    located = archive.locate(str(parsed.without_fragment()))  # the guards resolve asks (series, embargo), no read
    if isinstance(located, Generic):
        raise ParseError(f"{name} names a document, not a PDF: give a name with a format", rule="format")
    if located.record.media_type != "application/pdf":
        raise UnsupportedError(f"{name} is {located.record.media_type}, not a PDF: /api/pdf/page is for PDFs")
    number = int(page)
    key = (located.record.sha256, number)
    with _LOCK:
        kept = _PAGES.get(key)
        if kept is not None:
            _PAGES.move_to_end(key)
            return kept
    from pdi.fragments.pdf import TextLayer

    index = archive.fragment_index(located.record)
    if index is None:
        raise UnsupportedError(f"{name} has no text layer (PDFium could not read it when it was deposited): it has no"
                               " page, text or region pdi can cite; cite the whole PDF")
    layer = TextLayer.from_bytes(index, located.record.size)
    pages = layer.pages
    if number > pages:
        raise NotFoundError(f"page {number} is not a page of {name}: it has {pages}")

    def characters(n: int) -> int:
        start, end = layer.page_range(n)
        return end - start

    if characters(number) > MAX_PAGE_CHARACTERS:  # its boxes as JSON would be hundreds of megabytes, and minutes
        raise LimitError(f"page {number} of {name} has {characters(number):,} characters, more than the"
                         f" {MAX_PAGE_CHARACTERS:,} whose boxes the viewer is given: cite it by page, char or rect")
    whole = archive.read(located)  # its octets, each chunk checked against its digest
    # this page and the next few (a viewer asks for them as they scroll into view): one read of the PDF for them,
    # while their characters stay under the bound of one page's
    numbers, total = [number], characters(number)
    for n in range(number + 1, min(number + AHEAD, pages) + 1):
        total += characters(n)
        if total > MAX_PAGE_CHARACTERS:
            break
        numbers.append(n)
    try:
        read = pages_boxes(whole.data, index, numbers, name=name)  # one PDFium child for them all
    except (LimitError, ParseError, UnsupportedError):
        if len(numbers) == 1:
            raise
        # a page read ahead that PDFium refuses (reads otherwise than the kept layer, past its limits) refuses no
        # other: the page asked alone, and its own refusal if it has one
        read = pages_boxes(whole.data, index, [number], name=name)
    made = {boxes.number: (boxes.to_json(), len(boxes.text)) for boxes in read}
    with _LOCK:  # what the same octets give: kept by their SHA-256 for the next reader who may read them
        for n, (made_page, count) in made.items():
            _PAGES[(key[0], n)] = made_page
            _KEPT_CHARACTERS[(key[0], n)] = count
        while len(_PAGES) > KEPT_PAGES or sum(_KEPT_CHARACTERS.values()) > KEPT_CHARACTERS:
            gone, _ = _PAGES.popitem(last=False)
            _KEPT_CHARACTERS.pop(gone, None)
    return made[number][0]


#: How many pages' boxes :func:`page_json` keeps (the last asked), by the PDF's SHA-256 and the page number:
#: a viewer's next page of a long PDF then costs one read of the PDF, not one for each page asked twice.
KEPT_PAGES = 64
#: How many pages after the one asked :func:`page_json` makes from the same read of the PDF.
AHEAD = 3
#: The most characters of a page whose boxes :func:`page_json` gives (a dense real page has a few thousand; each
#: character's box costs some 150 octets as Python values and 30 as JSON), and of the pages one answer reads: a
#: 20 KB PDF can draw two million characters on a page, whose boxes took 24 s and 58 MB of JSON, and were kept.
MAX_PAGE_CHARACTERS = 200_000
#: The most characters of the pages :func:`page_json` keeps, all pages together (besides :data:`KEPT_PAGES`).
KEPT_CHARACTERS = 1_000_000
_PAGES: collections.OrderedDict[tuple[str, int], dict[str, object]] = collections.OrderedDict()
_KEPT_CHARACTERS: dict[tuple[str, int], int] = {}
_LOCK = threading.Lock()
