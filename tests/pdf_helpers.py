"""PDFs made for the tests: what no corpus file is (a hostile one)."""

from __future__ import annotations

import os
import sys
import zlib
from pathlib import Path


def operators_pdf(operators: int) -> bytes:
    """A one-page PDF whose content stream is ``operators`` text-showing blocks, Flate-compressed."""
    return pages_pdf(1, b"BT /F1 1 Tf 10 10 Td (ab) Tj ET\n" * operators)


def pages_pdf(pages: int, content: bytes = b"BT /F1 12 Tf 10 10 Td (ab) Tj ET\n") -> bytes:
    """A PDF of ``pages`` pages, each drawing the one ``content`` stream (Flate-compressed)."""
    compressed = zlib.compress(content, 9)
    kids = b" ".join(b"%d 0 R" % (6 + n) for n in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        b"<< /Font << /F1 5 0 R >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(compressed) + compressed + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        *(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources 3 0 R /Contents 4 0 R >>"
          for _ in range(pages)),
    ]
    return pdf_of(objects)


def pdf_of(objects: list[bytes]) -> bytes:
    """A PDF of ``objects`` (numbered from 1; the first its catalog) with its cross-reference table."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % at for at in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def huge_page_pdf(side: int, shapes: list[tuple[tuple[int, int, int, int], tuple[int, int, int]]]) -> bytes:
    """One page of ``side`` × ``side`` points filling each of ``shapes``: a rectangle (x1, y1, x2, y2 in points from
    the page's top-left, y downwards, as a ``rect`` names them) and its colour (red, green, blue, 0 to 255)."""
    content = b"".join(  # PDF user space: y upwards from the bottom
        b"%g %g %g rg %d %d %d %d re f\n" % (*(c / 255 for c in colour), x1, side - y2, x2 - x1, y2 - y1)
        for (x1, y1, x2, y2), colour in shapes)
    stream = zlib.compress(content, 9)
    return pdf_of([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Resources << >> /Contents 3 0 R >>" % (side, side),
    ])


def tounicode_pdf(glyphs: list[bytes]) -> bytes:
    """One page drawing one glyph of Helvetica for each of ``glyphs``, codes 0x41 upwards, whose font's ToUnicode
    map gives glyph k the UTF-16BE octets ``glyphs[k]`` (any units: lone surrogates too)."""
    mapping = b"".join(b"<%02X> <%s>\n" % (0x41 + k, units.hex().upper().encode()) for k, units in enumerate(glyphs))
    cmap = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /X def\n"
            b"1 begincodespacerange <00> <FF> endcodespacerange\n%d beginbfchar\n" % len(glyphs) + mapping
            + b"endbfchar\nendcmap CMapName currentdict /CMap defineresource pop end end")
    content = b"BT /F1 24 Tf 50 700 Td <%s> Tj ET" % bytes(range(0x41, 0x41 + len(glyphs))).hex().encode()
    return pdf_of([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >>"
        b" /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"\nendstream",
    ])


def turned_pdf(rotate: bytes, *, inherited: bool = False, entries: bytes = b"") -> bytes:
    """One page of 200 × 400 units of user space, ``/Rotate rotate`` (on the page, or on its page tree node when
    ``inherited``), a black square of 20 units at its top-left corner and the word ``Hi`` under it (``entries``:
    more of the page dictionary's, ``/UserUnit 2``)."""
    content = b"0 g 0 380 20 20 re f BT /F1 24 Tf 10 340 Td (Hi) Tj ET"
    node, page = (b" /Rotate " + rotate, b"") if inherited else (b"", b" /Rotate " + rotate)
    page += b" " + entries if entries else b""
    return pdf_of([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1%s >>" % node,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 400]%s /Resources << /Font << /F1 5 0 R >> >>"
        b" /Contents 4 0 R >>" % page,
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ])


def forms_pdf(draws: list[list[int]], page_draws: list[int], *, named: list[int] | None = None,
              shared: bool = False) -> bytes:
    """One page and ``len(draws)`` Form XObjects, form k drawing (``/Xj Do``) each form j of ``draws[k]``, then the
    word ``fk``; the page draws each form of ``page_draws``, then ``hi``. The page's resources name the forms
    ``named`` (all of them by default). Each form has its own resources naming what it draws; ``shared``: none,
    so it is read with those of the page or form that draws it (Table 95: a PDF 1.1 form inherits them)."""
    forms = 6  # the object number of form 0
    names = range(len(draws)) if named is None else named
    xobjects = b" ".join(b"/X%d %d 0 R" % (k, forms + k) for k in names)
    page = b"".join(b"/X%d Do\n" % k for k in page_draws) + b"BT /F1 12 Tf 10 10 Td (hi) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources 4 0 R /Contents 5 0 R >>",
        b"<< /Font << /F1 %d 0 R >> /XObject << %s >> >>" % (forms + len(draws), xobjects),
        b"<< /Length %d >>\nstream\n" % len(page) + page + b"\nendstream",
    ]
    for k, drawn in enumerate(draws):
        content = b"0.5 0 0 0.5 20 20 cm\n" + b"".join(b"/X%d Do\n" % j for j in drawn) \
            + b"BT /F1 12 Tf 0 40 Td (f%d) Tj ET" % k
        own = b"" if shared else b" /Resources << /Font << /F1 %d 0 R >> /XObject << %s >> >>" % (
            forms + len(draws), b" ".join(b"/X%d %d 0 R" % (j, forms + j) for j in drawn))
        objects.append(b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792]%s /Length %d >>\nstream\n"
                       % (own, len(content)) + content + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return pdf_of(objects)


#: pdf.js as npm ships it for Node (``scripts/bootstrap --dev`` puts the tarball's tree in .venv/share/pdfjs-dist)
PDFJS = Path(os.environ.get("PDI_PDFJS_DIST") or Path(sys.prefix) / "share" / "pdfjs-dist") / "legacy" / "build"
_PDFJS_READ = """
if (!Promise.withResolvers) Promise.withResolvers = () => {  // Node 20 lacks it; pdf.js 5 and later use it
  let resolve, reject; const promise = new Promise((a, b) => { resolve = a; reject = b; });
  return { promise, resolve, reject };
};
const pdfjs = await import(process.argv[1]);
const fs = await import("fs");
const task = pdfjs.getDocument({ data: new Uint8Array(fs.readFileSync(process.argv[2])), verbosity: 0 });
const doc = await task.promise;
const texts = [];
for (let n = 1; n <= Math.min(doc.numPages, 10); n++) {
  try {
    const page = await doc.getPage(n);
    texts.push((await page.getTextContent()).items.map((item) => item.str).join(""));
  } catch (error) { texts.push(null); }
}
console.log(JSON.stringify([doc.numPages, texts]));
await task.destroy();
"""


def pdfjs_pages(path: Path) -> tuple[int, list[str | None]]:
    """pdf.js's page count of the PDF at ``path`` (``numPages``, as its viewer gets it) and the text of its first
    pages (at most 10; None for a page pdf.js cannot load)."""
    import json
    import shutil
    import subprocess

    module = PDFJS / "pdf.mjs"
    assert module.is_file(), f"{module} is missing: run scripts/bootstrap --dev (or set PDI_PDFJS_DIST)"
    node = shutil.which("node")
    assert node, "node is missing: scripts/bootstrap --dev installs Debian's npm, and nodejs with it"
    said = subprocess.run([node, "--input-type=module", "-e", _PDFJS_READ, str(module), str(path)],
                          capture_output=True, text=True, check=True, timeout=120)
    count, texts = json.loads(said.stdout.strip().splitlines()[-1])
    return count, texts


def tree_pdf(root: list[object], *, counts: dict[int, int | None] | None = None,
             kids: dict[int, list[int | str]] | None = None) -> bytes:
    """A PDF whose page tree is ``root``: a list of kids, each ``"page"`` or a list (a node of pages), numbered
    depth-first from object 2 (the root); page k (from 1, in that order) draws the word ``pk``. Each node's
    ``/Count`` is the number of pages below it, or ``counts[object]`` (None: no /Count); ``kids[object]`` replaces
    a node's /Kids by its object numbers, ``"*"`` standing for its own kids (``[2, "*"]``: itself, then them)."""
    objects: dict[int, bytes] = {1: b"<< /Type /Catalog /Pages 2 0 R >>"}
    font, pages = 3, [0]
    number = [3]

    def place(node: list[object], parent: int | None, me: int) -> int:
        own: list[int] = []
        below = 0
        for kid in node:
            number[0] += 1
            at = number[0]
            own.append(at)
            if isinstance(kid, list):
                below += place(kid, me, at)
            else:
                pages[0] += 1
                content = b"BT /F1 12 Tf 10 10 Td (p%d) Tj ET" % pages[0]
                number[0] += 1
                objects[number[0]] = b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"
                objects[at] = (b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 200 200] /Resources << /Font << /F1"
                               b" %d 0 R >> >> /Contents %d 0 R >>" % (me, font, number[0]))
                below += 1
        listed = [n for k in (kids or {}).get(me, ["*"]) for n in (own if k == "*" else [int(k)])]
        count = (counts or {}).get(me, below)
        objects[me] = (b"<< /Type /Pages%s /Kids [%s]%s >>" % (
            b"" if parent is None else b" /Parent %d 0 R" % parent, b" ".join(b"%d 0 R" % n for n in listed),
            b"" if count is None else b" /Count %d" % count))
        return below

    place(root, None, 2)
    objects[font] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    return pdf_of([objects[n] for n in range(1, max(objects) + 1)])
