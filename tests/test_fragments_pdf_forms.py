"""A Form XObject that draws itself (ISO 32000-1 §8.10), directly or through other forms, is found before PDFium
is handed its page (:mod:`pdi.fragments.pdf_forms`), and the page is refused at once, naming the cycle's objects.

Found by an attack (2026-12-02): a 1-KB page drawing a form that draws itself twice took PDFium's child past its
2 GiB and was refused for memory after 4 to 10 s, where ``pdftotext`` reads it at once. The cycles found are
checked against the standard library's ``graphlib`` on the graph the PDF was written from; ``pdftotext`` (poppler)
and pdf.js are the readers shown to read the same PDFs.
"""

from __future__ import annotations

import graphlib
import itertools
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pdi.fragments.pdf as pdf
from pdf_helpers import forms_pdf, pdfjs_pages
from pdi.errors import ParseError, UnsupportedError
from pdi.fragments.pdf_forms import self_drawing

#: form k is object 6 + k (pdf_helpers.forms_pdf)
FORM = 6


def _pdftotext(tmp_path: Path, data: bytes) -> str:
    (tmp_path / "forms.pdf").write_bytes(data)
    return subprocess.run(["pdftotext", str(tmp_path / "forms.pdf"), "-"], check=True, capture_output=True,
                          timeout=60).stdout.decode()


@pytest.mark.parametrize(("draws", "objects", "said"), [
    ([[0]], (6, 6), "a Form XObject that draws itself (object 6)"),
    ([[0, 0]], (6, 6), "a Form XObject that draws itself (object 6)"),  # drawn 2, 4, 8… times by PDFium
    ([[1, 1], [0]], (6, 7, 6), "Form XObjects that draw one another in a cycle (objects 6 → 7 → 6)"),
    ([[1], [2], [1]], (7, 8, 7), "Form XObjects that draw one another in a cycle (objects 7 → 8 → 7)"),
], ids=["itself", "itself-twice", "through-another", "further-on"])
def test_a_page_drawing_a_form_that_draws_itself_is_refused_naming_the_cycle(
        tmp_path: Path, draws: list[list[int]], objects: tuple[int, ...], said: str) -> None:
    data = forms_pdf(draws, [0])
    assert "hi" in _pdftotext(tmp_path, data) and "f0" in _pdftotext(tmp_path, data)  # poppler reads it
    assert self_drawing(data).pages == {0: objects}
    expected = (f"page 1 of its 1 draws {said}: a picture with no end (ISO 32000-1 §8.10), which PDFium would draw"
                " again and again until it had no more memory (pdf.js skips a form where it comes round again)")
    with pytest.raises(ParseError) as refused:
        pdf.text_layer(data)
    assert refused.value.reason == expected and refused.value.rule == "pdf"
    # in PDFium's child, as a deposit makes the layer and the resolver reads a PDF kept with none
    with pytest.raises(ParseError) as refused:
        pdf.build_layer_index(data, name="forms.pdf")
    assert str(refused.value) == f"{expected} (rule pdf)"
    with pytest.raises(ParseError, match=r"^forms\.pdf: page 1 of its 1 draws"):
        pdf.pages_boxes(data, None, [1], name="forms.pdf")  # the viewer's boxes: the layer is made first
    with pytest.raises(UnsupportedError) as unsupported:
        pdf.evaluate_pdf("page", [1], data, "application/pdf", None, name="forms.pdf")
    assert str(unsupported.value) == (f"forms.pdf: {expected}: kept as it came (deposited with --force), it has no"
                                      " page, text or region pdi can cite; cite the whole PDF")


def test_pdfjs_reads_the_page_skipping_the_form_where_it_comes_round(tmp_path: Path) -> None:
    """What the refusal says of pdf.js: it draws form 0 once, and form 1 (drawn twice) each time, without the
    form 0 each of those would draw again."""
    (tmp_path / "forms.pdf").write_bytes(forms_pdf([[1, 1], [0]], [0]))
    assert pdfjs_pages(tmp_path / "forms.pdf") == (1, ["f1f1f0hi"])


@pytest.mark.parametrize(("draws", "page_draws", "named", "shared"), [
    ([[1], []], [0], None, True),  # forms read with the page's resources, which name form 0 itself: no Do of it
    ([[0]], [], None, False),  # a form drawing itself that the page names but never draws
    ([[1], [1]], [0], [0], False),  # form 1 draws itself, but form 0 names it and draws it, the page only 0
], ids=["shared-resources", "named-not-drawn", "cycle-further-on"])
def test_what_draws_no_form_again_is_read_as_ever(
        tmp_path: Path, draws: list[list[int]], page_draws: list[int], named: list[int] | None, shared: bool) -> None:
    data = forms_pdf(draws, page_draws, named=named, shared=shared)
    cycle = self_drawing(data).pages
    if draws == [[1], [1]]:  # the page reaches the cycle through form 0: refused
        assert cycle == {0: (7, 7)}
        return
    assert cycle == {}
    ours = pdf.text_layer(data).text.split()
    assert sorted(ours) == sorted(_pdftotext(tmp_path, data).split())


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 5).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.integers(0, n - 1), max_size=3), min_size=n, max_size=n),
    st.lists(st.integers(0, n - 1), max_size=3),
    st.booleans())))
def test_a_cycle_is_found_where_graphlib_finds_one_among_the_forms_the_page_reaches(
        case: tuple[list[list[int]], list[int], bool]) -> None:
    draws, page_draws, shared = case
    found = self_drawing(forms_pdf(draws, page_draws, shared=shared)).pages
    reached, todo = set(page_draws), list(page_draws)
    while todo:
        for kid in draws[todo.pop()]:
            if kid not in reached:
                reached.add(kid)
                todo.append(kid)
    sorter = graphlib.TopologicalSorter({k: set(draws[k]) for k in reached})
    try:
        sorter.prepare()
    except graphlib.CycleError:
        cyclic = True
    else:
        cyclic = False
    assert bool(found) == cyclic
    if found:
        objects = [n - FORM for n in found[0]]
        assert objects[0] == objects[-1] and objects[0] in reached
        assert all(b in draws[a] for a, b in itertools.pairwise(objects))


_PAGE = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources 5 0 R >>"
_HELLO = b"BT /F1 12 Tf 10 10 Td (Hello) Tj ET"
_STREAM = b"<< /Length %d >>\nstream\n" % len(_HELLO) + _HELLO + b"\nendstream"


@pytest.mark.parametrize("objects", [
    # the page's /Resources (object 5) a reference to itself
    [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", _PAGE, _STREAM, b"5 0 R"],
    # the root's /Count (object 5) a reference to object 6, a reference to object 5
    [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 5 0 R >>",
     _PAGE.replace(b" /Resources 5 0 R", b""), _STREAM, b"6 0 R", b"5 0 R"],
], ids=["resources-itself", "count-through-another"])
def test_an_object_that_is_a_reference_to_itself_leaves_the_pdf_unjudged_in_its_time_not_refused(
        tmp_path: Path, objects: list[bytes]) -> None:
    """Found by a review: pdfminer.six's ``resolve1`` follows ``5 0 obj 5 0 R endobj`` for ever, so the checks
    held PDFium's child until its 120 s and a PDF PDFium and poppler read at once was refused. The checks now
    have their own time (:data:`pdi.fragments.pdf_forms.CHECK_SECONDS`): past it the PDF is not judged, and
    its text layer is read as PDFium reads it."""
    import pypdfium2

    from pdf_helpers import pdf_of
    from pdi.fragments.pdf_forms import checked

    data = pdf_of(objects)
    opened = pypdfium2.PdfDocument(data)  # PDFium itself reads it at once: one page, its text
    try:
        assert len(opened) == 1
        said = opened[0].get_textpage().get_text_range()
    finally:
        opened.close()
    assert "Hello" in said
    forms, fault = checked(data, seconds=0.5)  # what was not found within its time is not judged
    assert forms.pages == {} and fault == ""
    layer = pdf.build_layer_index(data)  # PDFium's child, the deposit's reading: the checks' 10 s, not 120
    assert pdf.TextLayer.from_bytes(layer).text.rstrip("\r\n") == said
