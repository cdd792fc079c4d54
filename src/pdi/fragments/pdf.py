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
top in the page's PDF user space, points, before ``/Rotate``) or none.

Not yet wired into :func:`pdi.fragments.evaluate` nor made at deposit: this
module only reads a PDF's octets into a :class:`TextLayer`. pypdfium2 is a
``[dev]`` dependency for now, imported when a layer is made.
"""

from __future__ import annotations

import bisect
import ctypes
import math
import re
from array import array
from dataclasses import dataclass
from typing import Any

from pdi.errors import ParseError, UnsupportedError

#: What separates two pages' texts.
PAGE_BREAK = "\f"
LINE_BREAK = "\r\n"
#: FPDFText_GetText's stand-in for a hyphen that ends a line inside a word.
_PDFIUM_HYPHEN = "\ufffe"
_NO_BOX = (math.nan, math.nan, math.nan, math.nan)
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


def open_document(octets: bytes | memoryview) -> Any:
    """The PDF ``octets`` opened by PDFium (a ``pypdfium2.PdfDocument``; close it after).

    A PDF PDFium cannot open is a :class:`ParseError` naming PDFium's reason
    (``Data format error``: no PDF header, cross-reference table or trailer it
    can read or rebuild); one that needs a password to open is an
    :class:`UnsupportedError` (an owner password alone does not stop it).
    """
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(bytes(octets) if isinstance(octets, memoryview) else octets)
    except pdfium.PdfiumError as error:
        reason = _pdfium_reason(error)
        if "password" in reason.lower():
            raise UnsupportedError(f"the PDF is encrypted and needs a password to open (PDFium: {reason})") from error
        raise ParseError(f"not a PDF PDFium can open (PDFium: {reason})", rule="pdf") from error


def page_count(octets: bytes | memoryview) -> int:
    """How many pages the PDF ``octets`` has, as PDFium opens it (:func:`open_document`'s errors)."""
    document = open_document(octets)
    try:
        return len(document)
    finally:
        document.close()


def text_layer(octets: bytes) -> TextLayer:
    """Read the text layer of the PDF ``octets`` (``docs/pdf-text-layer.md`` §1–2)."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    document = open_document(octets)
    pieces: list[str] = []
    boxes: array[float] = array("d")
    starts: list[int] = []
    length = 0
    left, bottom, right, top = (ctypes.c_double() for _ in range(4))
    try:
        for number in range(len(document)):
            if number:
                pieces.append(PAGE_BREAK)
                boxes.extend(_NO_BOX)
                length += 1
            starts.append(length)
            page = document[number]
            textpage = page.get_textpage()
            try:
                count = textpage.count_chars()
                raw = textpage.get_text_range() if count else ""
                if len(raw) != count:  # a character outside the BMP: GetText's UTF-16 has two units for it
                    raw = "".join(chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, i)) for i in range(count))
                out: list[str] = []
                for index, char in enumerate(raw):
                    pdfium_c.FPDFText_GetCharBox(textpage.raw, index, left, right, bottom, top)
                    box = (left.value, bottom.value, right.value, top.value)
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
                text = "".join(out)
                if text:
                    text += LINE_BREAK
                    boxes.extend(_NO_BOX * len(LINE_BREAK))
                pieces.append(text)
                length += len(text)
            finally:
                textpage.close()
                page.close()
    finally:
        document.close()
    return TextLayer("".join(pieces), tuple(starts), boxes, str(pdfium.version.PDFIUM_INFO))
