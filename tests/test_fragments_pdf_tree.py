"""A PDF whose page tree PDFium and pdf.js may read differently (ISO 32000-1 §7.7.3) is kept whole, and pdi cites
no page or region of it (:mod:`pdi.fragments.pdf_tree`): a page cited must be the same page in any viewer.

Each malformed tree is written by hand (:func:`pdf_helpers.tree_pdf`: page k draws ``pk``); what PDFium reads of
it is pypdfium2's page count and each page's text, what pdf.js reads is pdf.js's own (npm's pdfjs-dist under
Node: ``numPages``, as its viewer gets it, and each page's text, None for a page it cannot load).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import pdi.fragments.pdf as pdf
from pdf_helpers import pdfjs_pages, tree_pdf
from pdi.archive import Archive
from pdi.cli import cli
from pdi.errors import UnsupportedError
from pdi.fragments.pdf_tree import page_tree_fault
from pdi.fragments.sealed import pack_text, seal, unseal

S = "oma.eop.gov.us"


def _pdfium(data: bytes) -> tuple[int, list[str | None]]:
    """PDFium's page count of ``data`` and each page's text (None: a page it cannot load)."""
    import pypdfium2

    document = pypdfium2.PdfDocument(data)
    texts: list[str | None] = []
    for index in range(len(document)):
        try:
            page = document[index]
        except pypdfium2.PdfiumError:
            texts.append(None)
            continue
        texts.append(page.get_textpage().get_text_range().strip())
    return len(document), texts


#: (the tree, what PDFium reads, what pdf.js reads, what pdi says of it)
DISAGREED = {
    # pdf.js takes a /Count of 1 or less as it is: no page to show
    "count-0": (tree_pdf(["page"], counts={2: 0}), (1, ["p1"]), (0, []),
                "its root's /Count is 0 and it holds 1 page"),
    "count-negative": (tree_pdf(["page"], counts={2: -1}), (1, ["p1"]), (-1, []),
                       "its root's /Count is -1 and it holds 1 page"),
    # PDFium takes a /Count from 1 to 1,048,575 as it is: two pages it cannot load; pdf.js counts what it walks
    "count-3-one-kid": (tree_pdf(["page"], counts={2: 3}), (3, ["p1", None, None]), (1, ["p1"]),
                        "its root's /Count is 3 and it holds 1 page"),
    # a kid that is its parent, before the page: PDFium skips it, pdf.js cannot load the page
    "kid-cycle": (tree_pdf(["page"], kids={2: [2, "*"]}), (1, ["p1"]), (1, [None]),
                  "it loops: object 2 is a kid of itself or of its own kids"),
}


@pytest.mark.parametrize("case", list(DISAGREED))
def test_a_tree_pdfium_and_pdfjs_read_differently_has_no_page_cited(tmp_path: Path, case: str) -> None:
    data, pdfium_reads, pdfjs_reads, fault = DISAGREED[case]
    (tmp_path / "tree.pdf").write_bytes(data)
    assert _pdfium(data) == pdfium_reads
    assert pdfjs_pages(tmp_path / "tree.pdf") == pdfjs_reads
    assert page_tree_fault(data) == fault
    index = pdf.build_layer_index(data, name="tree.pdf")  # the whole PDF is kept, with its layer
    layer = pdf.TextLayer.from_bytes(index, len(data))
    assert layer.page_tree == fault
    said = (f"tree.pdf: pdi cites no page of this PDF (page 1 asked): its page tree is not one PDFium (Chromium's"
            f" viewer) and pdf.js (Firefox's) are sure to read alike ({fault}), so page 1 could be another page, or"
            " none, in another viewer; cite the whole PDF, or a passage of its text (char=, line=, search=)")
    for scheme, positions in (("page", [1]), ("rect", ((0, 0), (100, 100), 0)), ("viewrect", [0, 0, 50, 50])):
        with pytest.raises(UnsupportedError) as refused:
            pdf.evaluate_pdf(scheme, positions, data, "application/pdf", None, index=index, name="tree.pdf")
        assert str(refused.value) == said
    passage = pdf.evaluate_pdf("char", [0, 2], data, "application/pdf", None, index=index, name="tree.pdf")
    assert passage.data == b"p1"  # a passage of its text is cited


SOUND = {
    "one": tree_pdf(["page"]),
    "nested": tree_pdf(["page", ["page", ["page"], "page"], "page"]),
    "empty-node": tree_pdf([[], "page", "page"]),
}


@pytest.mark.parametrize("case", list(SOUND))
def test_a_tree_whose_counts_are_its_pages_is_read_alike_and_cited(tmp_path: Path, case: str) -> None:
    data = SOUND[case]
    (tmp_path / "tree.pdf").write_bytes(data)
    pages = _pdfium(data)
    assert pdfjs_pages(tmp_path / "tree.pdf") == pages
    assert page_tree_fault(data) is None
    index = pdf.build_layer_index(data, name="tree.pdf")
    last = pages[0]
    got = pdf.evaluate_pdf("page", [last], data, "application/pdf", None, index=index, name="tree.pdf")
    assert got.page is not None and got.page.number == last and got.data == data


@pytest.mark.parametrize(("tree", "fault"), [
    (tree_pdf([["page", "page"], "page"], counts={4: 1}), "the /Count of object 4 is 1 and it holds 2 pages"),
    (tree_pdf(["page"], counts={2: None}), "its root's /Count is missing and it holds 1 page"),
    (tree_pdf(["page", "page"], kids={2: [3, 3]}), "object 3 is a kid twice"),
    (tree_pdf([["page"]], kids={4: ["*", 2]}), "it loops: object 2 is a kid of itself or of its own kids"),
], ids=["inner-count", "no-count", "page-twice", "cycle-after"])
def test_what_a_viewer_may_read_otherwise_is_named(tree: bytes, fault: str) -> None:
    """Trees both read alike in the order this test asks their pages, but not surely: pdf.js skips a subtree by its
    /Count and refuses an object met twice in one walk, which depends on the pages asked before."""
    assert page_tree_fault(tree) == fault


def test_a_layer_kept_before_page_trees_were_judged_is_read_with_none() -> None:
    """Layout version 1 (before the page tree's fault was kept) is read, with no fault known."""
    data = SOUND["nested"]
    index = pdf.build_layer_index(data)
    payload = bytes(unseal(index, pdf.MAGIC, pdf.VERSION, "PDF text layer"))
    assert payload.endswith(pack_text(""))
    old = seal(pdf.MAGIC, 1, payload[:-len(pack_text(""))])
    assert pdf.TextLayer.from_bytes(old, len(data)).page_tree == ""
    assert pdf.TextLayer.from_bytes(old, len(data)).text == pdf.TextLayer.from_bytes(index, len(data)).text


def test_pdi_add_keeps_it_and_notes_that_no_page_of_it_is_cited(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    with Archive.init(location) as made:
        made.add_series(S)
    (tmp_path / "tree.pdf").write_bytes(DISAGREED["count-0"][0])
    added = CliRunner().invoke(cli, ["add", str(tmp_path / "tree.pdf"), "-s", S, "--archive", location])
    assert added.exit_code == 0, added.output
    name = added.stdout.strip()
    assert added.stderr == (
        f"note: {name}: its page tree is not one PDFium (Chromium's viewer) and pdf.js (Firefox's) are sure to read"
        " alike (its root's /Count is 0 and it holds 1 page): pdi cites no page or region of it (page=, rect=,"
        " viewrect=, nameddest=), only the whole PDF and passages of its text\n")
    info = CliRunner().invoke(cli, ["get", name, "--info", "--archive", location])
    assert ("page-tree\tits page tree is not one PDFium (Chromium's viewer) and pdf.js (Firefox's) are sure to read"
            " alike (its root's /Count is 0 and it holds 1 page): no page or region of it is cited") in info.stdout
    whole = CliRunner().invoke(cli, ["get", name, "--archive", location])
    assert whole.exit_code == 0 and whole.stdout_bytes == (tmp_path / "tree.pdf").read_bytes()
    page = CliRunner().invoke(cli, ["get", name + "#page=1", "--archive", location])
    assert page.exit_code == 6 and "pdi cites no page of this PDF (page 1 asked)" in page.stderr


def _nodes(depth: int) -> st.SearchStrategy[list[object]]:
    kid = st.just("page") if depth == 0 else st.one_of(st.just("page"), st.deferred(lambda: _nodes(depth - 1)))
    return st.lists(kid, max_size=4)


def _pages(node: list[object]) -> int:
    return sum(_pages(kid) if isinstance(kid, list) else 1 for kid in node)


@settings(max_examples=60, deadline=None)
@given(_nodes(3), st.integers(-2, 3))
def test_where_no_fault_is_found_pdfium_counts_the_pages_the_tree_holds_and_loads_each(
        root: list[object], off: int) -> None:
    """The root's /Count off by ``off`` pages: a fault unless 0; with none, PDFium reads every page, in order."""
    held = _pages(root)
    data = tree_pdf(root, counts={2: held + off})
    fault = page_tree_fault(data)
    if off:
        assert fault == f"its root's /Count is {held + off} and it holds {held} page{'' if held == 1 else 's'}"
        return
    assert fault is None
    if held:  # a tree of no page is one PDFium opens not at all (pdi refuses it at deposit)
        assert _pdfium(data) == (held, [f"p{k}" for k in range(1, held + 1)])
