"""PDFium runs in a child process, bounded (:mod:`pdi._bounded`, :data:`pdi.fragments.pdf.LIMITS`; issue 25).

A real PDF gives in the child exactly what PDFium gives in this process; a
hostile one — a 78 KB PDF whose one page is a million text operators,
compressed ~1000:1, which takes PDFium seconds and half a gigabyte — is
refused at the deadline or the memory bound with a LimitError naming the
PDF and the limit, and the child's peak resident set (``wait4``) stays
under its bound. The deadlines are made tiny through the configuration, so
no test waits long; nothing here asserts a duration.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import pdi.fragments.pdf as pdf
import pdi.fragments.pdf_render as pdf_render
from pdf_helpers import operators_pdf, pages_pdf
from pdi._bounded import ChildLimit, ChildLimits, run_child
from pdi.errors import LimitError, NotFoundError

CORPUS = Path(__file__).resolve().parent / "data" / "pdf"


HOSTILE = operators_pdf(1_000_000)


def test_the_hostile_pdf_is_small_and_pdfium_opens_it() -> None:
    assert len(HOSTILE) < 100_000
    assert pdf.page_count(HOSTILE) == 1


@pytest.mark.parametrize("name", ["tracemonkey.pdf", "copy_paste_ligatures.pdf", "hand-overprint-hyphens.pdf"])
def test_a_real_pdf_gives_in_the_child_what_pdfium_gives_here(name: str) -> None:
    data = (CORPUS / name).read_bytes()
    index = pdf.build_layer_index(data, name=name)
    assert index == pdf.text_layer(data).to_bytes(len(data))
    here, here_boxes = pdf.read_pages_now(data, [1])[0]
    (boxes,) = pdf.pages_boxes(data, index, [1], name=name)
    assert boxes.text == here["text"] and list(boxes.crop) == here["crop"]
    assert boxes.boxes.tobytes() == here_boxes.tobytes()  # every float as PDFium gave it, NaN where no box
    png = pdf_render.render_png(data, 1, (0, 0, 100, 50), name=name)
    assert png == pdf_render.render_png_now(data, 1, (0, 0, 100, 50))
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_a_refusal_in_the_child_is_raised_here_as_itself() -> None:
    data = (CORPUS / "sizes.pdf").read_bytes()
    with pytest.raises(NotFoundError, match="page 9 is not a page of this PDF: it has 3"):
        pdf_render.render_png(data, 9)
    with pytest.raises(pdf.ParseError, match=r"not a PDF PDFium can open \(PDFium: Data format error\)"):
        pdf.build_layer_index(b"%PDF-1.7\nnot really")


def test_a_hostile_pdf_is_refused_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deadlines the work passes by orders of magnitude on any machine, however idle or loaded: the child's start
    alone (an interpreter, pypdfium2) takes several times 10 ms, and the hostile page's text layer 2 to 4.5 s, its
    rendering 3 to 7 s (measured 2026-11-29, idle and under a load of 3 on two cores). The 0.3 s this test had was
    passed by some 10 times only, and left the parent's timer 1.7 s of the child's CPU time before the child's own
    ``RLIMIT_CPU`` (the deadline rounded up, plus a second) stopped it, under other words; at 10 ms it has 1.99."""
    monkeypatch.setattr(pdf, "LIMITS", pdf.PdfiumLimits(document_seconds=0.01, page_seconds=0.01))
    with pytest.raises(LimitError) as refused:
        pdf.build_layer_index(HOSTILE, name="hostile.pdf")
    assert str(refused.value) == ("PDFium took longer than 0.01 s reading hostile.pdf"
                                  " (the limit pdi.fragments.pdf.LIMITS.document_seconds)")
    assert refused.value.exit_code == 7 and refused.value.http_status == 413
    # read for a name (not at deposit), the refusal begins with it, as a deposit's begins with its file's
    with pytest.raises(LimitError, match=r"^hostile.pdf: PDFium took longer than 0.01 s reading the PDF \(page 1\)"
                                         r" \(the limit pdi.fragments.pdf.LIMITS.page_seconds\)$"):
        pdf_render.render_png(HOSTILE, 1, name="hostile.pdf")


def test_a_hostile_pdf_is_refused_at_the_memory_bound_and_the_child_stays_under_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    bound = 256 << 20
    with tempfile.TemporaryFile() as given:
        given.write(HOSTILE)
        given.flush()
        os.lseek(given.fileno(), 0, os.SEEK_SET)
        with pytest.raises(ChildLimit) as stopped:
            run_child(pdf.CHILD, ["layer"], ChildLimits(seconds=60, memory=bound, output=1 << 20),
                      stdin=given.fileno())
    assert stopped.value.kind == "memory"
    assert 0 < stopped.value.peak_kib * 1024 <= bound  # the child's own peak RSS (its VmHWM, read while it runs)
    monkeypatch.setattr(pdf, "LIMITS", pdf.PdfiumLimits(memory=bound))
    with pytest.raises(LimitError, match=r"^PDFium needed more than its 256 MiB of memory .*reading hostile.pdf"
                                         r" \(the limit pdi.fragments.pdf.LIMITS.memory\)$"):
        pdf.build_layer_index(HOSTILE, name="hostile.pdf")


def test_a_real_pdf_stays_far_under_the_memory_bound() -> None:
    data = (CORPUS / "tracemonkey.pdf").read_bytes()
    with tempfile.TemporaryFile() as given:
        given.write(data)
        given.flush()
        os.lseek(given.fileno(), 0, os.SEEK_SET)
        done = run_child(pdf.CHILD, ["layer"], ChildLimits(seconds=60, memory=pdf.LIMITS.memory, output=64 << 20),
                         stdin=given.fileno())
    assert done.data == pdf.text_layer(data).to_bytes(len(data))
    assert done.peak_kib * 1024 < 200 << 20


def test_the_parent_never_loads_pdfium() -> None:
    """Every PDFium call of the archive and the resolver is made in a child: this process never imports it."""
    code = (
        "import sys, json\n"
        "from pdi.fragments import pdf, pdf_render\n"
        f"data = open({str(CORPUS / 'sizes.pdf')!r}, 'rb').read()\n"
        "index = pdf.build_layer_index(data)\n"
        "pdf.pages_boxes(data, index, [1, 2]); pdf_render.render_png(data, 1)\n"
        "print(json.dumps(sorted(m for m in sys.modules if 'pdfium' in m or m.startswith('PIL'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(Path(pdf.__file__).parents[2])})
    assert json.loads(done.stdout) == []


#: One stream of 30,000 characters, which every page of a PDF draws (:func:`pages_pdf`).
_DRAWN = b"BT /F1 1 Tf 0 0 Td (" + b"ab " * 10_000 + b") Tj ET"


def test_a_text_layer_far_larger_than_its_pdf_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reported: a 47 KB PDF whose 300 pages draw one shared stream made 20 MB of text layer at deposit. A layer
    is kept up to LAYER_TIMES its PDF's octets (or LAYER_FLOOR, here lowered to 256 KiB); past it, a LimitError
    naming the bound. tracemonkey.pdf, a real paper, makes a layer of a few times its size, far under it."""
    data = pages_pdf(20, _DRAWN)  # 600,000 characters drawn from a PDF of 3 KB
    assert len(data) < 4_000
    monkeypatch.setattr(pdf, "LAYER_FLOOR", 256 << 10)
    with pytest.raises(LimitError, match=f"more than {256 << 10:,} octets, 64 times its {len(data):,} octets"):
        pdf.build_layer_index(data)
    fewer = pages_pdf(1, _DRAWN)
    assert len(pdf.TextLayer.from_bytes(pdf.build_layer_index(fewer), len(fewer)).text) >= 29_000
    real = (CORPUS / "tracemonkey.pdf").read_bytes()
    assert len(pdf.build_layer_index(real)) < 8 * len(real)


def test_an_answer_past_the_childs_output_bound_is_a_limit_not_cut_short() -> None:
    """``RLIMIT_FSIZE`` lets the child's last write stop at the bound, and Python's buffered write then says how
    much it wrote instead of failing: the answer used to come back cut short, as if whole. Now one octet short
    of room is the output limit, and exactly enough room gives the whole answer."""
    data = (CORPUS / "tracemonkey.pdf").read_bytes()
    whole = pdf.text_layer(data).to_bytes(len(data))
    with tempfile.TemporaryFile() as given:
        given.write(data)
        for room, expected in ((len(whole) - 1, None), (len(whole), whole)):
            given.flush()
            os.lseek(given.fileno(), 0, os.SEEK_SET)
            limits = ChildLimits(seconds=60, memory=pdf.LIMITS.memory, output=room)
            if expected is None:
                with pytest.raises(ChildLimit) as refused:
                    run_child(pdf.CHILD, ["layer"], limits, stdin=given.fileno())
                assert refused.value.kind == "output"
            else:
                assert run_child(pdf.CHILD, ["layer"], limits, stdin=given.fileno()).data == expected
