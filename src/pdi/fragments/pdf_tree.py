"""A PDF page tree that PDFium and pdf.js may read differently (ISO 32000-1 §7.7.3: a tree of ``/Pages`` nodes whose
``/Count`` is the number of pages below each), found so that pdi cites no page of it.

A page cited must be the same page in fifty years and in whatever viewer: Chromium's (PDFium) and Firefox's
(pdf.js) count and find pages otherwise once the tree is not one (read in their sources, and shown on handmade
PDFs by tests/test_fragments_pdf_tree.py):

* PDFium (``CPDF_Document::CountPages``) takes the root's ``/Count`` when it is from 1 to 1,048,574 (below its
  ``kPageMaxNum``), else counts the leaves (a node without ``/Kids``), skipping a kid that is its parent; it
  finds page *n* by walking ``/Kids`` in order, up to 1,024 levels deep.
* pdf.js (``Catalog.numPages``, ``PDFDocument.checkLastPage``) takes the root's ``/Count`` as it is when it is 1
  or less (0 or -1 pages: nothing shown), else loads the last page and, when that fails, counts what it walks;
  it finds page *n* skipping whole subtrees by their ``/Count``, and refuses a page whose walk meets an object
  it met before ("Pages tree contains circular reference").

So a root ``/Count 0`` over one page is one page to PDFium and none to pdf.js; ``/Count 3`` over one, three
(two that do not load) and one; a kid naming its own parent before the page, a page PDFium draws and pdf.js
cannot load. :func:`page_tree_fault` says what is wrong with a tree, or None where it is a tree whose every
``/Count`` is the number of pages below it, which both read alike: no object is met twice, every kid is a
dictionary, and no ``/Type /Page`` has ``/Kids`` (a page to pdf.js, a node to PDFium). It reads the objects with
pdfminer.six (PDFium's API gives none), in PDFium's child; a PDF pdfminer.six cannot read is given no fault.
"""

from __future__ import annotations

from typing import Any, Final

#: PDFium's deepest page tree (``kMaxPageLevel``): a page deeper is one it cannot load.
DEEPEST: Final = 1024
#: The most nodes and pages read: past them the tree is not judged (PDFium's own limit is a million pages).
MOST_NODES: Final = 2_000_000


def page_tree_fault(octets: bytes, document: Any = None) -> str | None:
    """What makes the page tree of the PDF ``octets`` one PDFium and pdf.js read differently (``"its root's /Count
    is 0 and it holds 1 page"``), or None. ``document``: pdfminer.six's ``PDFDocument`` of it, read already
    (:func:`pdi.fragments.pdf_forms.checked`, which bounds the time), else read here."""
    import io

    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import PDFObjRef, resolve1

    try:
        if document is None:
            document = PDFDocument(PDFParser(io.BytesIO(octets)))
        root_ref = document.catalog.get("Pages")
        root = resolve1(root_ref)
    except Exception:  # a PDF pdfminer.six cannot read (PDFium opened it): not judged here
        return None
    if not isinstance(root, dict):
        return None
    try:
        return _fault(root, root_ref.objid if isinstance(root_ref, PDFObjRef) else None)
    except Exception:  # an object pdfminer.six cannot read in the tree: not judged here
        return None


def _fault(root: dict[str, Any], root_number: int | None) -> str | None:
    """:func:`page_tree_fault`'s walk from the root node ``root`` (object ``root_number``)."""
    from pdfminer.pdftypes import PDFObjRef, resolve1

    seen: set[int] = set() if root_number is None else {root_number}
    if "Kids" not in root:
        return "its root is a page, with no /Kids"
    # each entry: the node, its object number, its kids left to read, the pages counted below it so far
    stack: list[tuple[dict[str, Any], int | None, list[Any], list[int]]] = []

    def enter(node: dict[str, Any], number: int | None) -> str | None:
        kids = resolve1(node.get("Kids"))
        if not isinstance(kids, list):
            return f"the /Kids of {_said(number)} is not an array"
        if len(stack) >= DEEPEST:
            return f"it is nested more than {DEEPEST} levels deep, deeper than PDFium reads"
        stack.append((node, number, list(reversed(kids)), [0]))
        return None

    said = enter(root, root_number)
    if said is not None:
        return said
    read = 0
    while stack:
        node, number, kids, below = stack[-1]
        if not kids:
            stack.pop()
            count = resolve1(node.get("Count"))
            if not isinstance(count, int) or isinstance(count, bool) or count != below[0]:
                if not stack:
                    return f"its root's /Count is {_count_said(count)} and it holds {_pages(below[0])}"
                return f"the /Count of {_said(number)} is {_count_said(count)} and it holds {_pages(below[0])}"
            if stack:
                stack[-1][3][0] += below[0]
            continue
        kid = kids.pop()
        read += 1
        if read > MOST_NODES:
            return None
        kid_number = kid.objid if isinstance(kid, PDFObjRef) else None
        if kid_number is not None:
            if kid_number in seen:
                on_path = any(n == kid_number for _, n, _, _ in stack)
                return (f"it loops: {_said(kid_number)} is a kid of itself or of its own kids" if on_path
                        else f"{_said(kid_number)} is a kid twice")
            seen.add(kid_number)
        value = resolve1(kid)
        if not isinstance(value, dict):
            return f"a kid of {_said(number)} is not a dictionary ({_said(kid_number)})"
        if "Kids" not in value:
            below[0] += 1
            continue
        if _name(value.get("Type")) == "Page":
            return f"{_said(kid_number)} is a /Page with /Kids (a page to pdf.js, a node of pages to PDFium)"
        said = enter(value, kid_number)
        if said is not None:
            return said
    return None


def _said(number: int | None) -> str:
    return "a direct object" if number is None else f"object {number}"


def _count_said(count: object) -> str:
    return "missing" if count is None else str(count) if isinstance(count, int) else "not a number"


def _pages(count: int) -> str:
    return f"{count} page" if count == 1 else f"{count} pages"


def _name(value: Any) -> str | None:
    from pdfminer.psparser import PSLiteral

    if isinstance(value, PSLiteral):
        name = value.name
        return name.decode("latin-1") if isinstance(name, bytes) else str(name)
    return None
