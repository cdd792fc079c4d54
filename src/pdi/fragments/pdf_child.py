"""The child process PDFium runs in for pdi (``python -m pdi.fragments.pdf_child LIMITS WORK ARG…``).

:func:`pdi.fragments.pdf.build_layer_index`, :func:`~pdi.fragments.pdf.pages_boxes`
and :func:`pdi.fragments.pdf_render.render_png` run it under
:data:`pdi.fragments.pdf.LIMITS` (:mod:`pdi._bounded`: a deadline, an
address-space and a CPU-time limit). It reads the PDF from its standard
input and writes one answer to its standard output:

* ``layer``: the text layer, sealed as the PDF's fragment index
  (:meth:`pdi.fragments.pdf.TextLayer.to_bytes`);
* ``boxes N…``: pages N… with their characters' boxes
  (:func:`pdi.fragments.pdf.read_pages_now`, written by
  :func:`pdi.fragments.pdf_pages.pages_to_bytes`: JSON, then the boxes as doubles);
* ``png N [X1 Y1 X2 Y2]``: page N (or that region of it) rendered as PNG
  (:func:`pdi.fragments.pdf_render.render_png_now`).
"""

from __future__ import annotations

import sys

from pdi._bounded import child_main


def work(args: list[str]) -> bytes:
    """The answer to ``args`` (``WORK ARG…``) for the PDF on standard input."""
    from pdi.fragments import pdf, pdf_pages, pdf_render

    octets = sys.stdin.buffer.read()
    what, rest = args[0], args[1:]
    if what == "layer":
        return pdf.text_layer(octets).to_bytes(len(octets))
    if what == "boxes":
        return pdf_pages.pages_to_bytes(pdf.read_pages_now(octets, [int(n) for n in rest]))
    if what == "png":
        region = tuple(float(v) for v in rest[1:5])
        return pdf_render.render_png_now(octets, int(rest[0]), (region[0], region[1], region[2], region[3])
                                         if len(region) == 4 else None)
    raise ValueError(f"no such work: {what!r}")


if __name__ == "__main__":
    child_main(work)
