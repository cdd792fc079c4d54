"""What a stranger's PDF or fragment could still make of pdi's PDF reading, each found by trying it, each bounded.

* A PDF deposited with no text layer kept (``--force`` past PDFium's limits, or over 256 MiB): its ``char`` and
  ``line`` made the layer with PDFium in the calling process, the resolver's worker, with no deadline and no
  memory bound (a 20 KB PDF: 28 s and 1.1 GB in the worker). Now they make it in the child, as ``page``,
  ``rect`` and ``search`` did.
* ``rect`` chose a character with no box by looking ahead through the rest of the page for the next one with
  a box: on a page of two million characters and 40,000 line breaks, 35 s for one request. Now one pass.
* A glyph drawn under a matrix past the range of a float has an infinite box: a passage's rendering
  (``Accept: image/png``) was an ``OverflowError`` (500), ``/api/pdf/page`` a ``ValueError`` (500, JSON has no
  infinity). Now such a glyph has no box, as a generated space has none.
* ``search=`` looked for each of its words in turn over the whole layer: 12,500 words in a 62 KB request took
  19 s on a layer of two million characters. Now each different word once, at most
  :data:`~pdi.fragments.pdf.MAX_SEARCH_WORDS` of them.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import subprocess
import sys
import zlib
from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pdi.fragments.pdf as pdf
from pdf_helpers import operators_pdf, pages_pdf, pdf_of, tounicode_pdf
from pdi.errors import LimitError

CORPUS = Path(__file__).resolve().parent / "data" / "pdf"


def test_a_pdf_with_no_kept_layer_is_read_in_the_child_for_char_line_and_search() -> None:
    code = (
        "import sys, json\n"
        "from pdi.fragments import pdf\n"
        f"data = open({str(CORPUS / 'sizes.pdf')!r}, 'rb').read()\n"
        "out = [pdf.evaluate_pdf(s, p, data, 'application/pdf', None).data.decode()\n"
        "       for s, p in (('char', [0, 6]), ('line', [1, 2]), ('search', ['\"envelope\"']))]\n"
        "print(json.dumps([out, sorted(m for m in sys.modules if 'pdfium' in m)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(Path(pdf.__file__).parents[2])})
    answers, loaded = json.loads(done.stdout)
    assert answers == ["Normal", "\fEnvelope\r\n", "Envelope"]
    assert loaded == []


def test_char_on_a_hostile_pdf_with_no_kept_layer_meets_the_childs_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdf, "LIMITS", pdf.PdfiumLimits(document_seconds=0.3, page_seconds=0.3))
    for scheme in ("char", "line"):
        with pytest.raises(LimitError, match=r"took longer than 0.3 s reading the PDF \(the limit"
                                             r" pdi.fragments.pdf.LIMITS.document_seconds\)"):
            pdf.evaluate_pdf(scheme, [0, 5], operators_pdf(1_000_000), "application/pdf", None)


def _page(inside: list[bool | None]) -> pdf.PageBoxes:
    """A page whose character i has its centre in the region [0, 10) × [0, 10) (True), outside it (False), or no
    box (None)."""
    boxes = array("d")
    for flag in inside:
        if flag is None:
            boxes.extend((math.nan,) * 4)
        else:  # the region's top-left is the CropBox's (0, 100): y downwards from the top
            x = 4.0 if flag else 50.0
            boxes.extend((x, 95.0, x + 2, 97.0))
    return pdf.PageBoxes(1, 1, 0, "x" * len(inside), boxes, (0.0, 0.0, 100.0, 100.0), 0)


def _chosen_as_specified(inside: list[bool | None]) -> list[int]:
    """docs/pdf-text-layer.md §3: a character with a box whose centre is in the region; one with none whose
    nearest characters with a box before and after it are both selected."""
    chosen = []
    for i, flag in enumerate(inside):
        if flag is None:
            before = next((f for f in reversed(inside[:i]) if f is not None), False)
            after = next((f for f in inside[i + 1:] if f is not None), False)
            if before and after:
                chosen.append(i)
        elif flag:
            chosen.append(i)
    return chosen


def test_a_rects_characters_are_those_the_rule_names() -> None:
    rng = random.Random(5147)
    for _ in range(300):
        inside = [rng.choice([True, False, None]) for _ in range(rng.randrange(0, 30))]
        assert pdf.region_characters(_page(inside), 0, 0, 10, 10) == _chosen_as_specified(inside)


def test_a_rect_on_a_page_of_many_characters_and_breaks_is_one_pass() -> None:
    """Two words and a line break, 150,000 times: each break used to look through the rest of the page."""
    inside: list[bool | None] = [True, True, None] * 150_000
    chosen = pdf.region_characters(_page(inside), 0, 0, 10, 10)
    assert len(chosen) == len(inside) - 1  # all but the last break, after which no character has a box


def _far_glyphs() -> bytes:
    """A page drawing "Hi" under a matrix that scales by 1e38 (its boxes past a float's range: PDFium gives
    infinities), then "Hello" at the origin."""
    scale = b"1000000000 0 0 1000000000 0 0 cm " * 4 + b"100 0 0 100 0 0 cm "
    return pages_pdf(1, b"q " + scale + b"BT /F1 12 Tf (Hi) Tj ET Q BT /F1 12 Tf 10 10 Td (Hello) Tj ET")


def test_a_glyph_whose_box_is_not_finite_has_none() -> None:
    data = _far_glyphs()
    ((page, boxes),) = pdf.read_pages_now(data, [1])
    text = page["text"]
    assert "Hi" in text and "Hello" in text
    for i in range(len(text)):
        box = boxes[4 * i: 4 * i + 4]
        assert all(map(math.isfinite, box)) or all(map(math.isnan, box)), (text[i], list(box))
    assert all(math.isnan(v) for i in range(text.index("Hi"), text.index("Hi") + 2) for v in boxes[4 * i: 4 * i + 4])
    index = pdf.build_layer_index(data)
    made = pdf.page_boxes(data, index, 1)
    json.dumps(made.to_json(), allow_nan=False)  # the viewer's JSON: no Infinity
    hello = made.text.index("Hello")
    assert made.centre(hello) is not None and made.centre(text.index("Hi")) is None


def test_search_looks_for_each_different_word_once_and_for_at_most_so_many() -> None:
    data = (CORPUS / "sizes.pdf").read_bytes()
    index = pdf.build_layer_index(data)
    many = " ".join(["nowhere"] * 5000 + ["LANDSCAPE"])
    found = pdf.evaluate_pdf("search", [f'"{many}"'], data, "application/pdf", None, index=index)
    assert found.data == b"Landscape"
    words = " ".join(f"w{n}" for n in range(pdf.MAX_SEARCH_WORDS + 1))
    with pytest.raises(LimitError, match=f"at most {pdf.MAX_SEARCH_WORDS} different words"):
        pdf.evaluate_pdf("search", [f'"{words}"'], data, "application/pdf", None, index=index)
    fewer = " ".join(f"w{n}" for n in range(pdf.MAX_SEARCH_WORDS - 1)) + " envelope"
    assert pdf.evaluate_pdf("search", [f'"{fewer}"'], data, "application/pdf", None, index=index).data == b"Envelope"


def _destinations_pdf(lines: int, named: int) -> bytes:
    """One page of ``lines`` lines of 21 characters (Helvetica 10 pt, 12 pt apart, the first's baseline at
    y = 768) and ``named`` destinations in its ``/Dests`` dictionary (ISO 32000-1 §12.3.2.3): ``d{i}`` is
    ``[page /XYZ 0 top 0]``, its top 8 points above line ``i mod lines``'s baseline."""
    content = b"BT /F1 10 Tf 12 TL 10 780 Td " + b"(abcdefghij klmnopqrst) '\n" * lines + b"ET"
    stream = zlib.compress(content, 9)
    dests = b" ".join(b"/d%d [4 0 R /XYZ 0 %d 0]" % (i, 768 - 12 * (i % lines) + 8) for i in range(named))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R /Dests 6 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Font << /F1 5 0 R >> >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 %d] /Resources 3 0 R /Contents 7 0 R >>" % (800 + 12 * lines),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< " + dests + b" >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    return pdf_of(objects)


def test_many_destinations_on_a_long_page_are_placed_reading_its_lines_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # each destination read the page's lines again: 8,000 of them on a page of 2,000 lines took minutes, past the
    # child's deadline (a LimitError); and PDFium was asked for each name twice, its length then it, each time walking
    # the names from the first: 30,000 took 100 s. The work is counted here, not timed (this machine's load moves
    # any time): the page's lines read once, each name asked for once.
    import pypdfium2.raw as pdfium_c

    from pdi.fragments import pdf_destinations

    lines, named = 2_000, 3_000
    data = _destinations_pdf(lines, named)
    layer = pdf.TextLayer.from_bytes(pdf.build_layer_index(data), len(data))  # made in the child, as at deposit
    assert layer.text == "abcdefghij klmnopqrst\r\n" * lines
    # line k's glyphs reach from 2.2 points below its baseline to 7.2 above (Helvetica's g and d at 10 pt): its
    # middle is 2.5 points above its baseline, 5.5 below d(k)'s top, and line k-1's is 6.5 above that top; so d(k)
    # is at the start of line k (23 characters a line with its CR LF)
    expected = {f"d{i}": (1, 23 * (i % lines)) for i in range(named)}
    assert layer.destinations == expected
    calls = {"lines": 0, "names": 0}
    read_lines, get_named = pdf_destinations._lines, pdfium_c.FPDF_GetNamedDest

    def counted_lines(*args: object) -> object:
        calls["lines"] += 1
        return read_lines(*args)  # type: ignore[arg-type]

    def counted_names(*args: object) -> object:
        calls["names"] += 1
        return get_named(*args)

    monkeypatch.setattr(pdf_destinations, "_lines", counted_lines)
    monkeypatch.setattr(pdfium_c, "FPDF_GetNamedDest", counted_names)
    assert pdf.text_layer(data).destinations == expected  # what the child does, in this process: counted
    assert calls == {"lines": 1, "names": named}


def test_the_destinations_read_lines_as_the_layer_ends_them() -> None:
    # pdf_destinations keeps its own LINE_BREAK (pdf.py runs it: an import of pdf there would be a circle)
    from pdi.fragments import pdf_destinations

    assert pdf_destinations.LINE_BREAK == pdf.LINE_BREAK == "\r\n"  # docs/pdf-text-layer.md §1


def test_a_destination_of_a_long_name_is_named_whole() -> None:
    # a name tree's keys are strings of any length (ISO 32000-1 §7.9.6), unlike a /Dests dictionary's names
    long = "x" * 700  # 1,400 octets of UTF-16, the name PDFium gives
    data = _destinations_pdf(3, 3).replace(b"/Dests 6 0 R", b"/Names << /Dests 6 0 R >>")
    leaves = b"(d0) [4 0 R /XYZ 0 776 0] (d1) [4 0 R /XYZ 0 764 0] (%s) [4 0 R /XYZ 0 752 0]" % long.encode()
    start = data.index(b"<< /d0 [")
    end = data.index(b">>", start) + 2
    data = _with_xref(data[:start] + b"<< /Names [" + leaves + b"] >>" + data[end:])
    layer = pdf.TextLayer.from_bytes(pdf.build_layer_index(data), len(data))
    assert layer.destinations == {"d0": (1, 0), "d1": (1, 23), long: (1, 46)}


def _with_xref(data: bytes) -> bytes:
    """``data`` (objects numbered 1 on, one after another) with its cross-reference table made again."""
    body = data[:data.index(b"xref\n")]
    offsets = [m.start() for m in re.finditer(rb"(?m)^\d+ 0 obj\n", body)]
    out = body + b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets) + 1)
    out += b"".join(b"%010d 00000 n \n" % at for at in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(offsets) + 1, len(body))


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.tuples(st.integers(-5, 5), st.integers(-5, 5)), max_size=12),
       top=st.one_of(st.integers(-6, 6).map(float), st.just(math.nan), st.just(math.inf)),
       left=st.one_of(st.integers(-6, 6).map(float), st.just(-math.inf), st.just(math.nan)))
def test_a_destinations_line_is_the_highest_below_its_top_and_right_of_its_left(
        lines: list[tuple[int, int]], top: float, left: float) -> None:
    from pdi.fragments.pdf_destinations import _PageLines

    page = [(10 * at, float(middle), float(right)) for at, (middle, right) in enumerate(lines)]
    # docs/pdf-text-layer.md: the highest line whose middle is at or below the top and whose right edge is right
    # of the left, the first in layer order among equals; none: the page's end
    below = [(-middle, at) for at, middle, right in page if middle <= top and right > left]
    assert _PageLines(page).highest_below(top, left) == (min(below)[1] if below else None)


_UNITS = st.one_of(st.integers(0xD800, 0xDFFF), st.sampled_from([0xD83D, 0xDE00, 0xDBFF, 0xDC00]),
                   st.integers(0x41, 0x5A))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(_UNITS, min_size=1, max_size=3), min_size=1, max_size=5))
def test_the_layer_is_the_pages_utf16_as_unicode_a_lone_surrogate_ufffd(glyphs: list[list[int]]) -> None:
    """Rule 4 of docs/pdf-text-layer.md §2: PDFium gives a character outside the BMP as two surrogates; the layer
    holds the character they encode, and a lone surrogate as U+FFFD, as the standard library's UTF-16 decoder
    reads the same units (found by a hunt: a ToUnicode map to <D83DDE00> was kept as two surrogates, and the
    layer's text served as UTF-8 was not UTF-8)."""
    octets = [b"".join(unit.to_bytes(2, "big") for unit in units) for units in glyphs]
    layer = pdf.text_layer(tounicode_pdf(octets))
    assert layer.text == b"".join(octets).decode("utf-16-be", "replace") + "\r\n"
    assert layer.utf8.decode("utf-8") == layer.text  # well-formed UTF-8, no surrogate in it
    assert len(layer.boxes) == 4 * len(layer.text)


def test_a_character_outside_the_bmp_reads_as_pdftotext_reads_it(tmp_path: Path) -> None:
    data = tounicode_pdf([b"\xd8\x3d\xde\x00", b"\xd8\x00", b"\x00B"])  # 😀, a lone high surrogate, B
    (tmp_path / "a.pdf").write_bytes(data)
    poppler = subprocess.run(["pdftotext", str(tmp_path / "a.pdf"), "-"], capture_output=True, check=True).stdout
    layer = pdf.TextLayer.from_bytes(pdf.build_layer_index(data), len(data))
    assert layer.utf8 == poppler.decode("utf-8").rstrip("\n\f").encode("utf-8") + b"\r\n"
    # a passage counts it as one character (PDI-GRAMMAR §3: code points), as UTF-8 (was "not valid utf-8")
    index = layer.to_bytes(len(data))
    assert pdf.evaluate_pdf("char", [0, 1], data, "application/pdf", None, index=index).data == "😀".encode()
