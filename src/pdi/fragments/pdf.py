"""The text layer of a PDF, as ``docs/pdf-text-layer.md`` defines it (a prototype for issue 25).

The characters are PDFium's text page of each page (``FPDFText_*``, through
pypdfium2), in PDFium's order, with pdi's rules on top (§2 of that page):

* a character PDFium flags as a hyphen ending a line (``FPDFText_IsHyphen``;
  ``FPDFText_GetText`` writes U+FFFE there and joins the lines) becomes
  ``-`` and CR LF: the printed line and its hyphen are kept;
* any other U+FFFE or U+FFFF, and a glyph whose character is a control
  character other than TAB (``tracemonkey.pdf`` draws "©" with a glyph
  mapped to CR), becomes U+FFFD, so that only PDFium's line breaks end lines;
* generated spaces and CR LF line breaks are kept, with no box;
* the document text joins the pages with one FF (U+000C) between them, each
  page that has text ending with CR LF.

Each character of the text has a box (its page, and left, bottom, right,
top in the page's PDF user space, points, before ``/Rotate``) or none (also
where PDFium gives a coordinate that is not finite: a glyph drawn past the
range of a float).

The layer is made once, at deposit, and kept as the PDF's fragment index
(:func:`pdi.fragments.build_index`, sealed as :mod:`pdi.fragments.sealed`
seals every index, magic ``PDIP``): its text, where each page starts, each
page's size and the PDFium build that read it. Positions count on that stored
text (:meth:`TextLayer.to_bytes`, :meth:`TextLayer.from_bytes`); the boxes are
not kept yet (they serve ``rect`` and the viewer, not built).
:func:`evaluate_pdf` answers ``char`` and ``line`` (the text evaluators of
:mod:`pdi.fragments.text` on the layer's UTF-8 text: the passage's text, as
``text/plain; charset=utf-8``), RFC 8118's ``page`` and ``nameddest`` (the
whole PDF), ``rect`` and RFC 8118's ``viewrect`` (a region's characters) and
``search`` (the first occurrence of any of its words, folded: :func:`fold`).

PDFium reads a stranger's PDF only in a child process under :data:`LIMITS`
(:func:`build_layer_index`, :func:`pages_boxes`, :func:`pdi.fragments.pdf_render.render_png`; the child
is :mod:`pdi.fragments.pdf_child`, the bounds :mod:`pdi._bounded`): past its
deadline or memory bound the work is a :class:`~pdi.errors.LimitError` naming
the PDF and the limit. A refusal of a PDF read for a name (:func:`evaluate_pdf`, :func:`layer_of`,
:func:`pages_boxes`, :func:`pdi.fragments.pdf_render.render_png` given ``name``) begins with that name, ``NAME: ``,
as a deposit's refusal begins with its file's (:func:`said_of`). :func:`text_layer`, :func:`read_pages_now` and
:func:`pdi.fragments.pdf_render.render_png_now` are what the child runs, in the calling process and
unbounded (tests, benchmarks: files one trusts); pypdfium2 is imported only there.
"""

from __future__ import annotations

import bisect
import ctypes
import dataclasses
import itertools
import math
import re
import struct
import threading
from array import array
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeVar

from pdi._wording import clipped
from pdi.errors import (
    IntegrityError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    UnsupportedError,
)
from pdi.fragments.pdf_build import pdfium_build as _pdfium_build
from pdi.fragments.pdf_forms import SelfDrawing
from pdi.fragments.pdf_pages import pages_from_bytes
from pdi.fragments.pdf_positions import cite_pages_of, page_number, viewrect_as_rect
from pdi.fragments.pdf_region import Centres, region_characters
from pdi.fragments.pdf_search import LINE_BREAK, MAX_SEARCH_WORDS, fold, fold_with_map, search_words
from pdi.fragments.results import Buffer, FragmentResult, Page, Range, Region
from pdi.fragments.sealed import DIGEST_SIZE, Reader, pack_text, seal, sealed_version, unseal

if TYPE_CHECKING:
    from collections.abc import Sequence

#: What separates two pages' texts.
PAGE_BREAK = "\f"
#: FPDFText_GetText's stand-in for a hyphen that ends a line inside a word.
_PDFIUM_HYPHEN = "\ufffe"
_NO_BOX = (math.nan, math.nan, math.nan, math.nan)
#: The sealed index's magic and layout version (:mod:`pdi.fragments.sealed`): 2 adds :attr:`TextLayer.page_tree`
#: after the destinations (a layer of version 1, kept before, is read with none).
MAGIC = b"PDIP"
VERSION = 2
_SIZE = struct.Struct("<QQ")
#: What a glyph's character may not be as it stands: PDFium's hyphen marks (U+FFFE from GetText,
#: U+0002 from GetUnicode), U+FFFF, and the C0 and C1 control characters but TAB (rule 3)
_ODD = frozenset("\ufffe\uffff" + "".join(map(chr, [*range(0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0)])))


@dataclass(frozen=True)
class TextLayer:
    """A PDF's text layer: the text, where each page starts in it, and each character's box."""

    text: str
    #: offset in :attr:`text` of page n's text (index n-1), one per page
    page_starts: tuple[int, ...]
    #: four floats per character of :attr:`text` (left, bottom, right, top), NaN where it has none
    boxes: array[float]
    #: the PDFium build that read it (pypdfium2's ``PDFIUM_INFO``)
    pdfium: str
    #: (width, height) of each page in points, after ``/Rotate``, of its :func:`visible_box` (``FPDF_GetPageSizeF``)
    page_sizes: tuple[tuple[float, float], ...] = ()
    #: the named destinations (RFC 8118 ``nameddest``): name -> (page from 1, offset in :attr:`text`)
    destinations: dict[str, tuple[int, int]] = dataclasses.field(default_factory=dict)
    #: what makes its page tree one PDFium and pdf.js read differently (:func:`pdi.fragments.pdf_tree.page_tree_fault`),
    #: "" where none is known: then no page of it is cited (:func:`evaluate_pdf`)
    page_tree: str = ""

    @property
    def pages(self) -> int:
        return len(self.page_starts)

    def page_range(self, number: int) -> tuple[int, int]:
        """``[start, end)`` of page ``number`` (1-based) in :attr:`text`: its text and final CR LF, no FF."""
        if not 1 <= number <= self.pages:
            raise ParseError(f"page {number} is not a page of this PDF (it has {self.pages})", rule="page")
        start = self.page_starts[number - 1]
        end = self.page_starts[number] - len(PAGE_BREAK) if number < self.pages else len(self.text)
        return start, end

    def page_of(self, offset: int) -> int:
        """The page (1-based) that character ``offset`` belongs to (an FF: the page it opens)."""
        return bisect.bisect_right(self.page_starts, offset) if offset >= 0 else 1

    @property
    def utf8(self) -> bytes:
        """The text as UTF-8, what ``char`` and ``line`` count on and ``length``/``md5`` are taken of."""
        return self.text.encode("utf-8", "surrogatepass")

    @property
    def empty(self) -> bool:
        """Whether no page has a character (a scan with no OCR layer): cite it by page and region."""
        return not self.text.strip(PAGE_BREAK)

    def to_bytes(self, size: int) -> bytes:
        """The layer as the PDF's fragment index, for a PDF of ``size`` octets (the boxes are not kept)."""
        starts = array("Q", self.page_starts)
        sizes = array("d", [v for pair in self.page_sizes for v in pair])
        if len(sizes) != 2 * len(starts):
            raise ValueError("a page size for every page")
        payload = b"".join([
            _SIZE.pack(size, len(starts)), starts.tobytes(), sizes.tobytes(), pack_text(self.pdfium),
            _SIZE.pack(len(self.utf8), len(self.destinations)), self.utf8,
            *(pack_text(name) + _SIZE.pack(page, offset) for name, (page, offset) in sorted(self.destinations.items())),
            pack_text(self.page_tree),
        ])
        return seal(MAGIC, VERSION, payload)

    @classmethod
    def from_bytes(cls, data: bytes, size: int | None = None) -> TextLayer:
        """The layer :meth:`to_bytes` kept; ``size``: the PDF's octets it must have been made from."""
        reader = Reader(unseal(data, MAGIC, VERSION, "PDF text layer", also=(1,)), "PDF text layer")
        made_for, pages = reader.unpack(_SIZE)
        if size is not None and made_for != size:
            raise IntegrityError(f"the PDF text layer was made for {made_for} octets, not these {size}")
        starts = array("Q")
        starts.frombytes(bytes(reader.take(8 * pages)))
        sizes = array("d")
        sizes.frombytes(bytes(reader.take(16 * pages)))
        pdfium = reader.text() or ""
        (length, named) = reader.unpack(_SIZE)
        try:
            text = bytes(reader.take(length)).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise reader.damaged("its text is not UTF-8") from None
        destinations: dict[str, tuple[int, int]] = {}
        for _ in range(named):
            name = reader.text() or ""
            page, offset = reader.unpack(_SIZE)
            if not 1 <= page <= pages or offset > len(text):
                raise reader.damaged(f"its destination {name!r} is not on a page of its text")
            destinations[name] = (page, offset)
        page_tree = (reader.text() or "") if sealed_version(data) >= 2 else ""
        reader.end()
        if any(b < a for a, b in itertools.pairwise(starts)) or (pages and starts[-1] > len(text)):
            raise reader.damaged("its pages do not start in order within its text")
        return cls(text, tuple(starts), array("d"), pdfium, tuple(zip(sizes[::2], sizes[1::2], strict=True)),
                   destinations, page_tree)

    def box(self, offset: int) -> tuple[int, float, float, float, float] | None:
        """(page, left, bottom, right, top) of character ``offset``, or None (generated, a break)."""
        left, bottom, right, top = self.boxes[4 * offset: 4 * offset + 4]
        if math.isnan(left):
            return None
        return self.page_of(offset), left, bottom, right, top


def _pdfium_reason(error: Exception) -> str:
    """PDFium's own words from a pypdfium2 error (``Data format error``), else the whole message."""
    found = re.search(r"\(PDFium: ([^)]*)\)", str(error))
    return found.group(1) if found else str(error).rstrip(".")


#: What a PDF read for no name is called in refusals (the default ``name`` of the functions that read one).
UNNAMED: Final = "the PDF"
_Refusal = TypeVar("_Refusal", bound=PDIError)


def said_of(refused: _Refusal, name: str) -> _Refusal:
    """``refused`` said of the PDF ``name``: its message begins ``NAME: ``, as a deposit's refusal begins with its
    file's name (:func:`pdi.archive.readable.where`); as it is for :data:`UNNAMED` (found by a probe, 2026-12-01:
    ``pdi get NAME#page=1`` of a PDF kept with ``--force`` said "not a PDF PDFium can open", naming no PDF, and so
    did the resolver's answer and ``/api/pdf/page``'s refusals)."""
    return refused if name == UNNAMED else refused.within(f"{name}: ")


def open_document(octets: bytes | memoryview) -> Any:
    """The PDF ``octets`` opened by PDFium (a ``pypdfium2.PdfDocument``; close it after).

    A PDF PDFium cannot open is a :class:`ParseError` naming PDFium's reason
    (``Data format error``: no PDF header, cross-reference table or trailer it
    can read or rebuild; none, for a page tree of no page); one that needs a password to open is an
    :class:`UnsupportedError` (an owner password alone does not stop it), and so is one whose ``/Encrypt``
    dictionary PDFium cannot use, each saying what is wrong (found by a probe, 2026-12-01: a PDF whose ``/Encrypt``
    had no ``/Filter`` was "not a PDF PDFium can open (PDFium: Unsupported security scheme error)", and one with an
    unknown ``/V`` or a damaged ``/O`` "needs a password", which no password would open). PDFium's
    ``CPDF_Parser::SetEncryptHandler`` gives the first for a ``/Filter`` other than ``/Standard`` (ISO 32000-1
    §7.6.1, Table 20: the security handler; §7.6.3 the standard one), and the second both for a wrong password and
    when its standard handler refuses the dictionary (a ``/V`` or ``/R`` it does not know, an ``/O`` or ``/U``
    altered: the key it computes then opens nothing): the two cannot be told apart through its API, so the message names both.
    """
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(bytes(octets) if isinstance(octets, memoryview) else octets)
    except pdfium.PdfiumError as error:
        reason = _pdfium_reason(error)
        if "password" in reason.lower():
            raise UnsupportedError(
                "the PDF is encrypted and PDFium cannot open it: it needs a password to open, or its /Encrypt"
                " dictionary is damaged (a /V or /R PDFium does not know, an /O or /U altered or cut short) (PDFium:"
                f" {reason})") from error
        if "security" in reason.lower():
            raise UnsupportedError(
                "the PDF is encrypted by a security handler PDFium does not have: its /Encrypt dictionary's /Filter"
                f" is missing or other than /Standard (PDFium: {reason})") from error
        if reason == "Success":  # PDFium's last error is none: it refuses a page tree of no page so (found by an
            # attack: "not a PDF PDFium can open (PDFium: Success)"; pdfinfo says "Invalid page count 0")
            raise ParseError("not a PDF PDFium can open: PDFium refuses it and gives no reason, as it refuses a PDF"
                             " whose page tree holds no page", rule="pdf") from error
        raise ParseError(f"not a PDF PDFium can open (PDFium: {reason})", rule="pdf") from error


#: The ``rule`` of :func:`load_page`'s refusal of a page PDFium cannot load (a :class:`ParseError`, no kind of its own).
PAGE_NOT_LOADED: Final = "pdf-page"


def load_page(document: Any, index: int, forms: SelfDrawing | None = None) -> Any:
    """Page ``index`` (from 0) of a document :func:`open_document` opened (a ``pypdfium2.PdfPage``; close it after).

    ``forms``: the document's forms that draw themselves (:func:`pdi.fragments.pdf_forms.self_drawing` of its
    octets): a page drawing one is a :class:`ParseError` naming the cycle's objects, before PDFium parses it
    (PDFium would draw such a form again and again until its child had no more memory, 4 to 10 s later).
    :func:`text_layer` gives them, reading every page; a page's boxes (:func:`read_pages_now`) and rendering
    (:func:`pdi.fragments.pdf_render.render_png_now`) are read only of a PDF whose layer pdi made first
    (:func:`layer_of`, at deposit or in the child then), so they are not checked again (pdfminer.six reads each
    page's object, 0.5 ms a page: a quarter of a second more for each page of a 500-page PDF in the viewer).

    A page PDFium cannot load (``FPDF_LoadPage`` finds no page dictionary: the page tree leading to it loops,
    is nested deeper than PDFium reads, or holds no page there) is a :class:`ParseError` naming the page (found
    by an attack: a page tree whose kid is its parent was pypdfium2's ``PdfiumError`` in the child, said as "the
    child reading it stopped (exit status 1): pypdfium2._helpers.misc.PdfiumError: Failed to load page.").
    A page whose CropBox shares no area with its MediaBox is given its MediaBox as CropBox, in this copy of the
    document only (:func:`visible_box`).
    """
    import pypdfium2 as pdfium

    cycle = forms.cycle(index, len(document)) if forms is not None else None
    if cycle is not None:
        raise ParseError(f"page {index + 1} of its {len(document)} draws {_cycle_said(cycle)}: a picture with no"
                         " end (ISO 32000-1 §8.10), which PDFium would draw again and again until it had no more"
                         " memory (pdf.js skips a form where it comes round again)", rule="pdf")
    try:
        page = document[index]
    except pdfium.PdfiumError as error:
        raise ParseError(f"page {index + 1} of its {len(document)} is not one PDFium can load (PDFium:"
                         f" {_pdfium_reason(error)}): its page tree loops, is nested too deep, or holds no page there",
                         rule=PAGE_NOT_LOADED) from error
    left, bottom, right, top = page.get_bbox()
    if not (right > left and top > bottom):  # the CropBox and MediaBox share no area: the MediaBox, as pdf.js
        page.set_cropbox(-_BEYOND, -_BEYOND, _BEYOND, _BEYOND)  # clipped to the MediaBox: PDFium's (inherited,
        left, bottom, right, top = page.get_bbox()  # normalized, US Letter where it has none, as pdf.js's)
        page.set_cropbox(left, bottom, right, top)
    return page


def _cycle_said(cycle: tuple[int, ...]) -> str:
    """A cycle of forms (their object numbers, the first again at the end) in words."""
    if len(cycle) == 2:
        return f"a Form XObject that draws itself (object {cycle[0]})"
    return f"Form XObjects that draw one another in a cycle (objects {' → '.join(map(str, cycle))})"


#: Past any MediaBox's edge (ISO 32000-1 Annex C: a real is within ±3.403 × 10^38; PDFium's are floats)
_BEYOND: Final = 1e37


def page_count(octets: bytes | memoryview) -> int:
    """How many pages the PDF ``octets`` has, as PDFium opens it (:func:`open_document`'s errors)."""
    document = open_document(octets)
    try:
        return len(document)
    finally:
        document.close()


def text_layer(octets: bytes) -> TextLayer:
    """Read the text layer of the PDF ``octets`` (``docs/pdf-text-layer.md`` §1–2).

    A PDF whose page tree PDFium and pdf.js may read differently (:func:`pdi.fragments.pdf_tree.page_tree_fault`,
    kept as :attr:`TextLayer.page_tree`: no page of it is cited) is read whole, a page PDFium cannot load having
    no text and a size of 0 × 0 (``/Count 3`` over one page: PDFium's pages 2 and 3); elsewhere such a page is
    a refusal (:func:`load_page`)."""
    import pypdfium2 as pdfium

    from pdi.fragments.pdf_forms import checked

    document = open_document(octets)
    forms, fault = checked(octets)
    pieces: list[str] = []
    boxes: array[float] = array("d")
    starts: list[int] = []
    sizes: list[tuple[float, float]] = []
    length = 0
    try:
        for number in range(len(document)):
            if number:
                pieces.append(PAGE_BREAK)
                boxes.extend(_NO_BOX)
                length += 1
            starts.append(length)
            try:
                page = load_page(document, number, forms)
            except ParseError as refused:
                if not fault or refused.rule != PAGE_NOT_LOADED:
                    raise
                sizes.append((0.0, 0.0))  # a page of a tree no page of which is cited: no text, kept whole
                continue
            try:
                sizes.append(_page_size(page))
                text, page_boxes = _page_text(page)
            finally:
                page.close()
            pieces.append(text)
            boxes.extend(page_boxes)
            length += len(text)
        layer = TextLayer("".join(pieces), tuple(starts), boxes, str(pdfium.version.PDFIUM_INFO), tuple(sizes),
                          page_tree=fault)
        from pdi.fragments.pdf_destinations import destinations

        layer.destinations.update(destinations(document, layer))
    finally:
        document.close()
    return layer


def _page_size(page: Any) -> tuple[float, float]:
    """A PDFium page's width and height in points after ``/Rotate``: PDFium's own (``FPDF_GetPageWidthF``), a
    float; where that is not finite (a MediaBox from -3e38 to 3e38 is 6e38 points wide, past a float's range:
    N2C's JSON of such a page's size was a 500), its visible box's sides (:func:`visible_box`) in doubles."""
    width, height = page.get_size()
    if math.isfinite(width) and math.isfinite(height):
        return width, height
    left, bottom, right, top = visible_box(page)
    width, height = right - left, top - bottom
    return (height, width) if page.get_rotation() in (90, 270) else (width, height)


def _page_text(page: Any) -> tuple[str, array[float]]:
    """*T(n)* of one pypdfium2 page (§1–2: its text and, when not empty, a final CR LF) and its characters' boxes."""
    import pypdfium2.raw as pdfium_c

    boxes: array[float] = array("d")
    left, bottom, right, top = (ctypes.c_double() for _ in range(4))
    textpage = page.get_textpage()
    try:
        count = textpage.count_chars()
        raw = textpage.get_text_range() if count else ""
        if len(raw) != count:  # a lone surrogate GetText wrote (dropped in decoding), or a pair (one character)
            raw = "".join(chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, i)) for i in range(count))
        out: list[str] = []
        paired = -1  # the index of a low surrogate joined to the high one before it (rule 4)
        for index, char in enumerate(raw):
            if index == paired:
                continue
            box = _char_box(textpage, index, left, right, bottom, top)
            if "\ud800" <= char <= "\udfff":  # rule 4: PDFium gives a character outside the BMP as two surrogates
                after = raw[index + 1] if index + 1 < len(raw) else ""
                if char <= "\udbff" and "\udc00" <= after <= "\udfff":
                    out.append(chr(0x10000 + ((ord(char) - 0xD800) << 10) + (ord(after) - 0xDC00)))
                    boxes.extend(_union(box, _char_box(textpage, index + 1, left, right, bottom, top)))
                    paired = index + 1
                    continue
                out.append("\ufffd")  # a lone surrogate is no character: its UTF-8 would not be UTF-8
                boxes.extend(box)
                continue
            # PDFium's own spaces and CR LF have an empty box; only those are asked about
            if left.value == right.value and bottom.value == top.value \
                    and pdfium_c.FPDFText_IsGenerated(textpage.raw, index) == 1:
                out.append(char)
                boxes.extend(_NO_BOX)
                continue
            if char in _ODD:
                if char != "\uffff" and pdfium_c.FPDFText_IsHyphen(textpage.raw, index) == 1:
                    out.append("-" + LINE_BREAK)
                    boxes.extend(box)
                    boxes.extend(_NO_BOX * len(LINE_BREAK))
                    continue
                char = "\ufffd"  # a glyph whose Unicode is a control character: no line break of its own
            out.append(char)
            boxes.extend(box)
    finally:
        textpage.close()
    text = "".join(out)
    if text:
        text += LINE_BREAK
        boxes.extend(_NO_BOX * len(LINE_BREAK))
    return text, boxes


def _char_box(textpage: Any, index: int, *where: Any) -> tuple[float, float, float, float]:
    """Character ``index``'s box on a PDFium text page (left, bottom, right, top), :data:`_NO_BOX` where PDFium
    gives a coordinate that is not finite (a glyph scaled past float range: cm 1e9 five times)."""
    import pypdfium2.raw as pdfium_c

    left, right, bottom, top = where
    pdfium_c.FPDFText_GetCharBox(textpage.raw, index, left, right, bottom, top)
    box = (left.value, bottom.value, right.value, top.value)
    return box if all(map(math.isfinite, box)) else _NO_BOX


def _union(one: tuple[float, float, float, float], two: tuple[float, float, float, float],
           ) -> tuple[float, float, float, float]:
    """The smallest box holding both boxes (either, where the other is none)."""
    if math.isnan(one[0]):
        return two
    if math.isnan(two[0]):
        return one
    return min(one[0], two[0]), min(one[1], two[1]), max(one[2], two[2]), max(one[3], two[3])


@dataclass(frozen=True)
class PageBoxes:
    """One page of a PDF's kept text layer with its characters' boxes, read from PDFium now (the viewer, ``rect``).

    :attr:`text` is *T(n)* as the layer kept it, starting at offset :attr:`start`
    of *D*; :attr:`boxes` has four floats per character (left, bottom, right,
    top in the page's user space, points, before ``/Rotate``; NaN where it has
    none); :attr:`crop` is the CropBox clipped to the MediaBox (:func:`visible_box`: left, bottom, right, top);
    :attr:`centres`, each character's box centre as :meth:`centre` gives it, worked out once for the page when
    read (:func:`region_characters`; None: not yet).
    """

    number: int
    pages: int
    start: int
    text: str
    boxes: array[float]
    crop: tuple[float, float, float, float]
    rotation: int
    centres: Centres | None = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def width(self) -> float:
        return self.crop[2] - self.crop[0]

    @property
    def height(self) -> float:
        return self.crop[3] - self.crop[1]

    def centre(self, i: int) -> tuple[float, float] | None:
        """Character ``i``'s box centre (of :attr:`text`) from the CropBox's top-left, y downwards; None: no box."""
        left, bottom, right, top = self.boxes[4 * i: 4 * i + 4]
        if math.isnan(left):
            return None
        return (left + right) / 2 - self.crop[0], self.crop[3] - (bottom + top) / 2

    def to_json(self) -> dict[str, object]:
        """The page as the viewer's JSON: boxes rounded to 1/100 point, ``null`` where a character has none."""
        boxes = [None if math.isnan(self.boxes[4 * i]) else [round(v, 2) for v in self.boxes[4 * i: 4 * i + 4]]
                 for i in range(len(self.text))]
        return {"page": self.number, "pages": self.pages, "start": self.start, "text": self.text, "boxes": boxes,
                "crop": [round(v, 3) for v in self.crop], "rotation": self.rotation}


def page_boxes(data: Buffer, index: bytes | None, number: int, *, name: str = UNNAMED) -> PageBoxes:
    """Page ``number`` (from 1) of the PDF ``data``'s text layer (kept in ``index``) with PDFium's boxes
    (:func:`pages_boxes` for one page)."""
    return pages_boxes(data, index, [number], name=name)[0]


def pages_boxes(data: Buffer, index: bytes | None, numbers: Sequence[int], *, name: str = UNNAMED,
                ) -> list[PageBoxes]:
    """Pages ``numbers`` (from 1) of the PDF ``data``'s text layer (kept in ``index``) with PDFium's boxes.

    The boxes are read now, from those pages alone, by PDFium in one child
    process (:data:`LIMITS`: :attr:`~PdfiumLimits.page_seconds`); the text
    PDFium gives now must be the kept one (a later PDFium that reads a page
    otherwise is an :class:`UnsupportedError` naming both builds, never boxes
    for other characters). A refusal begins with ``name`` (:func:`said_of`).
    """
    try:
        return _pages_boxes(data, index, numbers)
    except PDIError as refused:
        if name == UNNAMED:
            raise
        raise said_of(refused, name) from refused


def _pages_boxes(data: Buffer, index: bytes | None, numbers: Sequence[int]) -> list[PageBoxes]:
    """:func:`pages_boxes`'s work, its refusals said of :data:`UNNAMED` (held so: one PDF's refusal is never
    another name's)."""
    import hashlib

    layer = layer_of(data, index)  # a kept index is checked as ever (held only if whole the same)
    for number in numbers:
        layer.page_range(number)  # a page the PDF lacks is refused before any is read
    # what the boxes are of: these octets, this kept index (or none: the layer made now), the build that made the
    # layer and the PDFium library a child loads now, the page
    of = (hashlib.sha256(data).digest(), None if index is None else bytes(index[-DIGEST_SIZE:]), layer.pdfium,
          _pdfium_build())
    found: dict[int, PageBoxes] = {}
    with _recent_lock:
        for number in numbers:
            held = _boxes.get((*of, number))
            if held is not None:
                _boxes.move_to_end((*of, number))
                found[number] = held.page
    asked = [number for number in dict.fromkeys(numbers) if number not in found]
    refusal = (*of, LIMITS, tuple(asked))  # a refusal of these pages, held a while (:data:`_boxes_refused`)
    if asked:
        _raise_refusal(_boxes_refused, refusal)
    try:
        made = pages_from_bytes(_in_child("boxes", data, [str(n) for n in asked], LIMITS.page_seconds, "page_seconds",
                                          f"{UNNAMED} (page{'s' if len(asked) > 1 else ''} {', '.join(map(str, asked))})")
                                ) if asked else []
        if len(made) != len(asked):
            raise IntegrityError(f"PDFium's child gave {len(made)} pages of the PDF, not the {len(asked)} asked")
        for number, (page, _) in zip(asked, made, strict=True):
            start, end = layer.page_range(number)
            if page["text"] != layer.text[start:end]:
                raise UnsupportedError(
                    f"PDFium {page['pdfium']} reads page {number} otherwise than the build that made"
                    f" the kept text layer ({layer.pdfium}): no boxes for its characters")
    except (LimitError, ParseError, UnsupportedError) as refused:
        _hold_refusal(_boxes_refused, refusal, refused)
        raise
    for number, (page, boxes) in zip(asked, made, strict=True):
        start = layer.page_range(number)[0]
        left, bottom, right, top = (float(v) for v in page["crop"])
        crop = (left, bottom, right, top)
        found[number] = PageBoxes(number, layer.pages, start, page["text"], boxes, crop, int(page["rotation"]),
                                  Centres.of(boxes, crop))
        kept = _HeldBoxes(found[number])
        if kept.held <= _BOXES_HELD:
            with _recent_lock:
                _boxes[(*of, number)] = kept
                while sum(k.held for k in _boxes.values()) > _BOXES_HELD:
                    _boxes.popitem(last=False)
    # each caller its own array of boxes: one held is never changed under another
    return [dataclasses.replace(found[number], boxes=array("d", found[number].boxes)) for number in numbers]


@dataclass(frozen=True)
class _HeldBoxes:
    """A page's boxes held (:data:`_boxes`), and the octets they take."""

    page: PageBoxes

    @property
    def held(self) -> int:
        centres = self.page.centres
        made = 0 if centres is None else sum(v.nbytes for v in (centres.x, centres.y, centres.gaps, centres.before,
                                                                    centres.after))
        return len(self.page.boxes) * self.page.boxes.itemsize + 4 * len(self.page.text) + made + 256


#: Pages' boxes read lately: a reader drawing regions on a page, or a resolver asked rect after rect of it, had
#: PDFium read the page in a new child each time (0.2 s). Held by the PDF's octets' SHA-256, the kept index's
#: digest (None: the layer made now from the octets), the PDFium build that made the layer, the PDFium library
#: a child would load now (:func:`~pdi.fragments.pdf_build.pdfium_build`: one replaced under a running resolver reads pages again) and
#: the page: never one PDF's boxes for another's. At most :data:`_BOXES_HELD` octets (boxes and text), the
#: least recently used let go; guarded by :data:`_recent_lock`.
_boxes: OrderedDict[tuple[bytes, bytes | None, str, tuple[str, int, int, int], int], _HeldBoxes] = OrderedDict()
_BOXES_HELD = 16 << 20


def visible_box(page: Any) -> tuple[float, float, float, float]:
    """The visible region of the PDFium page ``page`` (left, bottom, right, top, in points of its user space): its
    CropBox reduced to its intersection with its MediaBox (ISO 32000-1 §14.11.2), the MediaBox where it has no
    CropBox, each inherited from the page tree if the page lacks it (Table 30) and normalized (§7.9.5). What
    PDFium renders (``FPDF_GetPageBoundingBox``), poppler's ``pdfinfo`` prints as the CropBox and pdf.js's
    ``page.view`` is; pypdfium2's ``get_cropbox`` is the raw entry of the page's own dictionary (not clipped, not
    inherited: crbug.com/pdfium/1786). Where that intersection has no area (§14.11.2 would leave nothing to
    show), the MediaBox, as pdf.js's ``page.view`` (the viewer the rect is drawn on) and PDFium for a CropBox
    of no area: :func:`load_page` gives such a page its MediaBox as CropBox."""
    left, bottom, right, top = page.get_bbox()
    return (float(left), float(bottom), float(right), float(top))


def read_pages_now(octets: bytes, numbers: Sequence[int]) -> list[tuple[dict[str, Any], array[float]]]:
    """Pages ``numbers`` of the PDF ``octets`` as PDFium reads them in this process, with no limit: each page's
    facts (*T(n)*, CropBox, ``/Rotate``, the PDFium build) and its characters' boxes (NaN where none): what
    :func:`pages_boxes`'s child answers."""
    import pypdfium2 as pdfium

    document = open_document(octets)
    found: list[tuple[dict[str, Any], array[float]]] = []
    try:
        for number in numbers:
            if not 1 <= number <= len(document):
                raise NotFoundError(f"page {number} is not a page of this PDF: it has {len(document)}")
            page = load_page(document, number - 1)
            try:
                text, boxes = _page_text(page)
                crop = visible_box(page)
                rotation = page.get_rotation()
            finally:
                page.close()
            found.append(({"text": text, "crop": list(crop), "rotation": rotation,
                           "pdfium": str(pdfium.version.PDFIUM_INFO)}, boxes))
    finally:
        document.close()
    return found


def _evaluate_rect(positions: Sequence[object], data: Buffer, index: bytes | None) -> FragmentResult:
    """``rect=(x1,y1),(x2,y2),f`` on a PDF: the characters of page f+1 in the region, as text (§3)."""
    from pdi.fragments.image import rectangle

    x1, y1, x2, y2, frame = rectangle("rect", positions)
    layer = layer_of(data, index)
    cite_pages_of(layer.page_tree, frame + 1)
    if frame >= layer.pages:
        raise NotFoundError(f"page {frame + 1} (rect frame {frame}) is not a page of this PDF: it has"
                            f" {layer.pages} (frames 0 to {layer.pages - 1})")
    page = page_boxes(data, index, frame + 1)
    width, height = math.ceil(page.width - 1e-6), math.ceil(page.height - 1e-6)
    region = Region(min(x1, width), min(y1, height), min(x2, width), min(y2, height), frame, width, height, layer.pages)
    chosen = region_characters(page, x1, y1, x2, y2)
    runs: list[tuple[int, int]] = []
    for i in chosen:
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    ranges: list[Range] = []
    octet = len(layer.text[:page.start].encode("utf-8", "surrogatepass"))
    at = 0
    for a, b in runs:
        octet += len(page.text[at:a].encode("utf-8", "surrogatepass"))
        size = len(page.text[a:b].encode("utf-8", "surrogatepass"))
        ranges.append(Range(page.start + a, page.start + b, octet, octet + size))
        octet, at = octet + size, b
    text = "".join(page.text[a:b] for a, b in runs)
    return FragmentResult(text.encode("utf-8", "surrogatepass"), "text/plain", x2 > width or y2 > height,
                          tuple(ranges), charset="utf-8", scheme="rect", region=region,
                          past_end=(x1 >= width and x2 > width) or (y1 >= height and y2 > height),
                          page=Page(frame + 1, layer.pages, page.width, page.height))


def build_layer_index(octets: Buffer, *, name: str = UNNAMED) -> bytes:
    """The fragment index of the PDF ``octets``: its text layer, made now by PDFium in a child process under
    :data:`LIMITS` (:attr:`~PdfiumLimits.document_seconds`), to keep (:meth:`TextLayer.to_bytes`)."""
    most = min(LIMITS.output, max(LAYER_FLOOR, LAYER_TIMES * len(octets)))
    made = _in_child("layer", octets, [], LIMITS.document_seconds, "document_seconds", name, output=most)
    TextLayer.from_bytes(made, len(octets))  # what the child answered is checked as a kept index is
    return made


#: The largest text layer index kept for a PDF: :data:`LAYER_TIMES` its octets, or :data:`LAYER_FLOOR`, whichever
#: is more. A page's text and boxes take a few octets a character, and a PDF's compressed content a fraction of
#: one, so a real PDF's layer is a few times its size; a PDF whose 300 pages draw one shared stream of 11,000
#: characters (47 KB) made 20 MB of index, and each such upload could have added half a gigabyte.
LAYER_TIMES = 64
LAYER_FLOOR = 8 << 20


def layer_of(data: Buffer, index: bytes | None, *, name: str = UNNAMED) -> TextLayer:
    """The text layer kept in ``index`` (checked against the PDF ``data``'s size), else read from ``data`` now
    (in a child process, :func:`build_layer_index`; a refusal of the same octets held a while: :data:`_refused`).
    A refusal begins with ``name`` (:func:`said_of`)."""
    try:
        return _layer_of(data, index)
    except PDIError as refused:
        if name == UNNAMED:
            raise
        raise said_of(refused, name) from refused


def _layer_of(data: Buffer, index: bytes | None) -> TextLayer:
    """:func:`layer_of`'s work, its refusals said of :data:`UNNAMED` (held so: one PDF's refusal is never another
    name's)."""
    if index is not None:
        return _kept_layer(index, len(data)).layer
    import hashlib

    key = (hashlib.sha256(data).digest(), LIMITS)  # what PDFium made of these octets within these limits
    _raise_refusal(_refused, key)
    with _recent_lock:
        made = _made.get(key)
    if made is None:
        try:
            made = build_layer_index(data)
        except (LimitError, ParseError, UnsupportedError) as refused:
            _hold_refusal(_refused, key, refused)
            raise
        if len(made) <= _HELD:
            with _recent_lock:
                _made[key] = made
                while sum(map(len, _made.values())) > _HELD:
                    _made.popitem(last=False)
    return _kept_layer(made, len(data)).layer


#: PDFs with no kept layer (deposited with ``--force``: damaged, needing a password, past PDFium's limits) that
#: PDFium refused to read when a passage of one was asked, by their octets' SHA-256 and the :data:`LIMITS` then: each asking ran PDFium again
#: in its child, up to :attr:`PdfiumLimits.document_seconds` and 2 GiB each time (30 to 37 s for a PDF of a
#: million text operators), and gave the same refusal. Held :data:`REFUSAL_SECONDS` (a refusal for the time limit
#: may pass on a quieter machine), at most :data:`_REFUSALS` of them.
_refused: OrderedDict[tuple[Any, ...], tuple[float, Exception]] = OrderedDict()
REFUSAL_SECONDS = 600.0
_REFUSALS = 256
#: Pages whose boxes PDFium refused (:func:`pages_boxes`: a child past :attr:`PdfiumLimits.page_seconds`, a page
#: it cannot load, a text other than the kept layer's), by the boxes' key (:data:`_boxes`), the :data:`LIMITS`
#: then and the pages asked: each rect on such a page ran a child again, up to the limit, for the same refusal.
#: Held as :data:`_refused` is.
_boxes_refused: OrderedDict[tuple[Any, ...], tuple[float, Exception]] = OrderedDict()


def _raise_refusal(refusals: OrderedDict[tuple[Any, ...], tuple[float, Exception]], key: tuple[Any, ...]) -> None:
    """Raise again (a copy) the refusal held in ``refusals`` under ``key``, if one younger than
    :data:`REFUSAL_SECONDS` is."""
    import copy
    import time

    with _recent_lock:
        held = refusals.get(key)
    if held is not None and time.monotonic() - held[0] < REFUSAL_SECONDS:
        raise copy.copy(held[1])


def _hold_refusal(refusals: OrderedDict[tuple[Any, ...], tuple[float, Exception]], key: tuple[Any, ...],
                  refused: Exception) -> None:
    """Hold ``refused`` in ``refusals`` under ``key`` (at most :data:`_REFUSALS`, the oldest let go)."""
    import time

    with _recent_lock:
        refusals[key] = (time.monotonic(), refused.with_traceback(None))
        refusals.move_to_end(key)
        while len(refusals) > _REFUSALS:
            refusals.popitem(last=False)
#: The layers made of such PDFs that PDFium read (one over the size a deposit reads), by the same key: at most
#: :data:`_HELD` octets of index, the least recently made let go.
_made: OrderedDict[tuple[bytes, PdfiumLimits], bytes] = OrderedDict()


@dataclass(frozen=True)
class PdfiumLimits:
    """What PDFium may take to read one PDF for pdi: it runs in a child process (:mod:`pdi._bounded`), killed
    past its deadline, with at most :attr:`memory` octets of address space (``RLIMIT_AS``) and
    :attr:`output` octets of answer. Past any of them, the work is a :class:`~pdi.errors.LimitError`
    naming the PDF and the limit (exit 7, HTTP 413)."""

    #: the whole text layer of one PDF, at deposit (or read later for one that has none kept)
    document_seconds: float = 120.0
    #: a few pages' boxes (the viewer, ``rect``) or one page rendered
    page_seconds: float = 20.0
    memory: int = 2 << 30
    output: int = 512 << 20


#: The limits pdi's PDFium children run under (a program may set another :class:`PdfiumLimits` here).
LIMITS = PdfiumLimits()
#: The module a PDFium child runs (``python -m``): :mod:`pdi.fragments.pdf_child`.
CHILD = "pdi.fragments.pdf_child"


def _in_child(
    work: str, octets: Buffer, args: list[str], seconds: float, which: str, name: str, *, output: int | None = None,
) -> bytes:
    """What :data:`CHILD` answers for ``work`` on the PDF ``octets`` (given on its standard input) under
    :data:`LIMITS` with ``seconds`` (the limit :attr:`PdfiumLimits.<which>`), and at most ``output`` octets of
    answer (a text layer's bound: :data:`LAYER_TIMES`); a limit passed is a LimitError."""
    import os
    import tempfile

    from pdi._bounded import ChildLimit, ChildLimits, run_child
    from pdi.errors import LimitError

    limits = ChildLimits(seconds=seconds, memory=LIMITS.memory, output=LIMITS.output if output is None else output)
    with tempfile.TemporaryFile(prefix="pdi-pdf-") as given:
        given.write(octets)
        given.flush()
        os.lseek(given.fileno(), 0, os.SEEK_SET)
        try:
            return run_child(CHILD, [work, *args], limits, stdin=given.fileno()).data
        except ChildLimit as limit:
            if limit.kind == "output" and output is not None and output < LIMITS.output:
                raise LimitError(
                    f"the text layer of {name} is more than {output:,} octets, {LAYER_TIMES} times its"
                    f" {len(octets):,} octets (or {LAYER_FLOOR >> 20} MiB), the most kept of a PDF's: its pages"
                    " draw far more text than it holds (pdi.fragments.pdf.LAYER_TIMES)") from None
            field = which if limit.kind == "seconds" else limit.kind
            raise LimitError(f"PDFium {limit.detail} reading {name} (the limit pdi.fragments.pdf.LIMITS.{field})"
                             ) from None


@dataclass(frozen=True)
class _KeptLayer:
    """A kept text layer as read, with its UTF-8 and the block table the text evaluator counts on."""

    index: bytes  # the sealed index it was read from, whose digest was checked then
    layer: TextLayer
    utf8: bytes
    table: Any  # a pdi.fragments.text.TextTable
    _folded: tuple[str, array[int]] | None = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def held(self) -> int:
        return len(self.index) + len(self.utf8)

    def folded(self) -> tuple[str, array[int]]:
        """The layer's text as ``search=`` compares it, and where each character comes from (made once)."""
        made = self._folded
        if made is None:
            made = fold_with_map(self.layer.text)
            object.__setattr__(self, "_folded", made)
        return made


#: Kept layers read lately, by the digest that seals the index and the size of the PDF it was made for: a
#: resolver answers passage after passage of the same PDF, and reading a 500-page layer (its digest checked,
#: its text decoded, encoded and counted) costs far more than a passage. A layer held is used only for an
#: index of the very octets it was read from (compared whole: cheaper than their digest, and a damaged index
#: is refused as when read afresh); at most :data:`_HELD` octets (index and UTF-8) are held, the least
#: recently used let go.
_recent: OrderedDict[tuple[bytes, int], _KeptLayer] = OrderedDict()
_HELD = 16 << 20
_recent_lock = threading.Lock()


def _kept_layer(index: bytes, size: int) -> _KeptLayer:
    """The layer kept in ``index`` for a PDF of ``size`` octets (:class:`_KeptLayer`), read once and held a while."""
    key = (bytes(index[-DIGEST_SIZE:]), size)
    with _recent_lock:
        held = _recent.get(key)
        if held is not None and held.index == index:
            _recent.move_to_end(key)
            return held
    from pdi.fragments.text import TextTable

    layer = TextLayer.from_bytes(index, size)
    utf8 = layer.utf8
    kept = _KeptLayer(bytes(index), layer, utf8, TextTable.from_chunks([utf8], "utf-8"))
    if kept.held <= _HELD:
        with _recent_lock:
            _recent[key] = kept
            while sum(k.held for k in _recent.values()) > _HELD:
                _recent.popitem(last=False)
    return kept


def evaluate_pdf(
    scheme: str, positions: Sequence[object], data: Buffer, media_type: str, charset: str | None,
    /, *, index: bytes | None = None, name: str = UNNAMED,
) -> FragmentResult:  # a pdi.fragments.IndexedEvaluator
    """``char``, ``line``, ``page``, ``nameddest``, ``rect``, ``viewrect`` or ``search`` on the PDF ``data``
    (docs/pdf-text-layer.md §3–5).

    ``char`` and ``line`` count on the layer's text *D* as on a UTF-8 text
    (:func:`pdi.fragments.text.evaluate_pdi`): the result is the passage's
    text, ``text/plain`` in UTF-8, its ranges' octets those of *D* in UTF-8.
    ``page=n`` (RFC 8118 §3, 1-based) answers the whole PDF, with the page's
    characters ``[start(n), start(n) + len(T(n)))`` as its range and the page
    and its size in :attr:`FragmentResult.page`; a page past the last is
    :attr:`~FragmentResult.past_end`. ``nameddest=x`` answers the whole PDF
    too, with the destination's position in the layer (kept at deposit) as
    an empty range, and its page; a name the PDF lacks is a
    :class:`~pdi.errors.NotFoundError`.

    A PDF PDFium cannot open (kept as it came, deposited with ``--force``) has no page, text or region to cite:
    each is an :class:`~pdi.errors.UnsupportedError` saying so, not a syntax error of the name (found by a probe,
    2026-11-30: ``#page=1`` of such a PDF was "syntax error … (rule pdf)", exit 1).

    ``name``: the PDF's name, which a refusal of it begins with (:func:`said_of`); a syntax error of the
    fragment's positions is the name's own, and is said as it is.
    """
    try:
        return _evaluate_pdf(scheme, positions, data, media_type, index)
    except ParseError as exc:
        if exc.rule != "pdf":
            raise
        raise said_of(UnsupportedError(
            f"{exc.reason}: kept as it came (deposited with --force), it has no page, text or region pdi can cite;"
            " cite the whole PDF"), name) from exc
    except PDIError as refused:
        if name == UNNAMED:
            raise
        raise said_of(refused, name) from refused


def _evaluate_pdf(scheme: str, positions: Sequence[object], data: Buffer, media_type: str,
                  index: bytes | None) -> FragmentResult:
    """:func:`evaluate_pdf`'s work."""
    if scheme == "rect":
        return _evaluate_rect(positions, data, index)
    if scheme == "viewrect":
        return dataclasses.replace(_evaluate_rect(viewrect_as_rect(positions), data, index), scheme="viewrect")
    if scheme == "search":
        return _evaluate_search(positions, data, index)
    if scheme in ("char", "line"):
        from pdi.fragments.text import evaluate_pdi

        if index is not None:  # the layer, its UTF-8 and its counts as read before
            kept = _kept_layer(index, len(data))
            utf8, table = kept.utf8, kept.table
        else:  # none kept (a forced deposit, one over 256 MiB): made now by PDFium in its child, bounded
            utf8, table = layer_of(data, None).utf8, None
        result = evaluate_pdi(scheme, positions, utf8, charset="utf-8", media_type="text/plain", table=table)
        return dataclasses.replace(result, media_type="text/plain", charset="utf-8")
    layer = layer_of(data, index)
    if scheme == "nameddest":
        if len(positions) != 1 or not isinstance(positions[0], str):
            raise ParseError("nameddest= takes one destination name", rule="nameddest")
        found = layer.destinations.get(positions[0])
        if found is None:
            raise NotFoundError(f"the PDF has no destination named {clipped(repr(positions[0]))}")
        number, at = found
        cite_pages_of(layer.page_tree, number)
        width, height = layer.page_sizes[number - 1] if layer.page_sizes else (0.0, 0.0)
        octet = len(layer.text[:at].encode("utf-8", "surrogatepass"))
        return FragmentResult(bytes(data), media_type, False, (Range(at, at, octet, octet),),
                              scheme="nameddest", page=Page(number, layer.pages, width, height))
    if scheme == "page":
        number = page_number(positions)
        cite_pages_of(layer.page_tree, number)
        if number > layer.pages:
            return FragmentResult(b"", media_type, False, (), scheme="page", past_end=True,
                                  page=Page(number, layer.pages, 0.0, 0.0))
        start, end = layer.page_range(number)
        before = len(layer.text[:start].encode("utf-8", "surrogatepass"))
        octets = len(layer.text[start:end].encode("utf-8", "surrogatepass"))
        width, height = layer.page_sizes[number - 1] if layer.page_sizes else (0.0, 0.0)
        return FragmentResult(bytes(data), media_type, False, (Range(start, end, before, before + octets),),
                              scheme="page", page=Page(number, layer.pages, width, height))
    raise UnsupportedError(f"no evaluator for fragment scheme '{clipped(str(scheme))}' on {media_type}")


def _evaluate_search(positions: Sequence[object], data: Buffer, index: bytes | None) -> FragmentResult:
    """RFC 8118's ``search="w1 w2"``: the first occurrence in *D* of any of the words, as a passage (its text, as
    ``char`` gives it); among words found at the same place, the longest. A word found nowhere is not found."""
    from pdi.fragments.text import evaluate_pdi

    words = search_words(positions)
    needles = sorted({fold(word) for word in words}, key=len, reverse=True)
    if len(needles) > MAX_SEARCH_WORDS:
        raise LimitError(f"search= looks for at most {MAX_SEARCH_WORDS} different words (each is a pass over the"
                         f" PDF's text layer), not {len(needles)}")
    layer: TextLayer | None = None
    if index is not None:
        kept = _kept_layer(index, len(data))
        folded, origin = kept.folded()
    else:
        kept = None
        layer = layer_of(data, None)
        folded, origin = fold_with_map(layer.text)
    best: tuple[int, int] | None = None
    for needle in needles:
        at = folded.find(needle)
        if at >= 0 and (best is None or at < best[0] or (at == best[0] and len(needle) > best[1])):
            best = (at, len(needle))
    if best is None:
        raise NotFoundError(f"none of the words {clipped(repr(' '.join(dict.fromkeys(words))))} is in the PDF's text layer")
    start, end = origin[best[0]], origin[best[0] + best[1] - 1] + 1
    if kept is not None:
        result = evaluate_pdi("char", [start, end], kept.utf8, charset="utf-8", media_type="text/plain",
                              table=kept.table)
    else:
        assert layer is not None
        result = evaluate_pdi("char", [start, end], layer.utf8, charset="utf-8", media_type="text/plain")
    return dataclasses.replace(result, media_type="text/plain", charset="utf-8", scheme="search")
