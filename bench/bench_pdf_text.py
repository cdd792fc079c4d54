"""PDF text with positions: pypdfium2 and pdfminer.six against pdftotext, on real PDFs (issue 25).

Which library gives pdi the text layer of a PDF (``docs/pdf-text-layer.md``)?
Times, interleaved in one run (each round runs every reader once, in a
rotated order; medians of the rounds), on

* the corpus of ``tests/data/pdf/`` (pdf.js's test PDFs and one written by
  hand, see ``tests/data/README.md``), every file read whole;
* one large PDF: ``tracemonkey.pdf`` (a two-column, 14-page paper) joined 36
  times by ``pdfunite`` (poppler-utils), 504 pages, made in a temporary folder;

these readers:

* ``pdftotext`` (Debian's poppler-utils), text only: the floor every ratio is
  taken against; ``pdftotext -bbox``, poppler's words with their boxes;
* pypdfium2 (PDFium): each page's text (``FPDFText_GetText``), and the same
  with every character's box (``FPDFText_GetCharBox``), what pdi needs;
* pdi's text layer (:func:`pdi.fragments.pdf.text_layer`): the same, with
  the rules of ``docs/pdf-text-layer.md`` (hyphens, page breaks), whole
  documents only (as at deposit);
* pdfminer.six: its layout analysis (``extract_pages``, default ``LAParams``),
  the text of its text boxes and every ``LTChar``'s box;
* pdf.js's text layer (``getTextContent``, through ``bench/pdfjs_text.mjs``
  in Node, each run starting Node) when an unpacked pdfjs-dist package is
  given (``--pdfjs DIR`` or ``PDI_PDFJS_DIST``; ``npm pack pdfjs-dist``).

Then it prints what each reader makes of the hard parts, read from its own
output: per-character boxes, ligatures (``copy_paste_ligatures.pdf``: U+FB00–
U+FB06 kept or spelt out), hyphenation at a line end (``tracemonkey.pdf``
page 1, "pop-" / "ular"), overprinted fake bold and a 90° rotated line
(``hand-overprint-hyphens.pdf``), two-column reading order, vertical Japanese
(``vertical.pdf``), Arabic in logical order (``ArabicCIDTrueType.pdf``), a
page with no text layer (``ccitt_EndOfBlock_false.pdf``), how pages come
apart; and how far each reader's letters agree with pdftotext's and pdf.js's
(NFKC, letters and digits only, an edit-distance similarity over each file).

``--only pdfium,pdi`` times only some readers (and pdftotext). ``--small``
reads at most two pages of each file and a 4-page joined PDF, one
round. Run with ``python3 bench/run_all.py pdf_text``.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pdfminer.high_level import extract_pages
from pdfminer.layout import LTChar, LTComponent, LTTextContainer
from rapidfuzz.fuzz import ratio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import readme  # noqa: E402  (bench/ is not a package)

sys.path.insert(0, str(HERE.parent / "src"))
from pdi.fragments.pdf import text_layer  # noqa: E402

CORPUS = HERE.parent / "tests" / "data" / "pdf"
PDFJS_SCRIPT = HERE / "pdfjs_text.mjs"
BIG_SOURCE, BIG_COPIES = "tracemonkey.pdf", 36
SMALL_SOURCE, SMALL_COPIES = "paragraph_and_link.pdf", 2

#: A reader: (file, at most this many pages or None) -> the text of each page, and how many boxes it gave.
Reader = Callable[[Path, int | None], tuple[list[str], int]]


def read_pdftotext(path: Path, last: int | None) -> tuple[list[str], int]:
    pages = ["-l", str(last)] if last else []
    out = subprocess.run(["pdftotext", "-q", "-enc", "UTF-8", *pages, str(path), "-"],
                         capture_output=True, check=True).stdout.decode("utf-8")
    return out.split("\f")[:-1], 0  # a form feed ends every page


def read_pdftotext_bbox(path: Path, last: int | None) -> tuple[list[str], int]:
    pages = ["-l", str(last)] if last else []
    out = subprocess.run(["pdftotext", "-q", "-bbox", "-enc", "UTF-8", *pages, str(path), "-"],
                         capture_output=True, check=True).stdout.decode("utf-8")
    return [], out.count("<word ")


def read_pdfium(path: Path, last: int | None, *, boxes: bool = False) -> tuple[list[str], int]:
    document = pdfium.PdfDocument(path)
    texts, counted = [], 0
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    try:
        for number in range(min(len(document), last or len(document))):
            page = document[number]
            textpage = page.get_textpage()
            texts.append(textpage.get_text_range())
            if boxes:
                for index in range(textpage.count_chars()):
                    pdfium_c.FPDFText_GetCharBox(textpage.raw, index, left, right, bottom, top)
                    counted += 1
            textpage.close()
            page.close()
    finally:
        document.close()
    return texts, counted


def read_pdfium_boxes(path: Path, last: int | None) -> tuple[list[str], int]:
    return read_pdfium(path, last, boxes=True)


def read_pdi(path: Path, last: int | None) -> tuple[list[str], int]:
    layer = text_layer(path.read_bytes())  # the whole document: the layer is made once, at deposit
    pages = [layer.text[slice(*layer.page_range(n))] for n in range(1, min(layer.pages, last or layer.pages) + 1)]
    return pages, len(layer.boxes) // 4


def read_pdfminer(path: Path, last: int | None) -> tuple[list[str], int]:
    texts, counted = [], 0

    def chars(item: LTComponent) -> int:
        if isinstance(item, LTChar):
            return 1
        return sum(chars(child) for child in item) if hasattr(item, "__iter__") else 0

    for page in extract_pages(path, maxpages=last or 0):
        texts.append("".join(item.get_text() for item in page if isinstance(item, LTTextContainer)))
        counted += chars(page)
    return texts, counted


def pdfjs_reader(dist: Path) -> Reader:
    def read_pdfjs(path: Path, last: int | None) -> tuple[list[str], int]:
        out = subprocess.run(["node", str(PDFJS_SCRIPT), str(dist), str(path)],
                             capture_output=True, check=True).stdout.decode("utf-8")
        pages = [json.loads(line)["text"] for line in out.splitlines()]
        return pages[: last or len(pages)], 0
    return read_pdfjs


def letters(text: str) -> str:
    """What agreement is measured on: NFKC, letters and digits only."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text) if ch.isalnum())


def interleaved(readers: dict[str, Reader], files: list[Path], last: int | None,
                rounds: int) -> dict[str, float]:
    """Median seconds each reader takes over all of ``files``, the readers taking turns."""
    names = list(readers)
    times: dict[str, list[float]] = {name: [] for name in names}
    for turn in range(rounds):
        for name in names[turn % len(names):] + names[: turn % len(names)]:
            start = time.perf_counter()
            for path in files:
                readers[name](path, last)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def timing_table(title: str, medians: dict[str, float], pages: int) -> None:
    floor = medians["pdftotext"]
    print(f"\n{title} ({pages} pages): median seconds, and the ratio to pdftotext")
    print(readme.table(["reader", "median s", "pages/s", "ratio to pdftotext"],
                       [[name, f"{s:.3f}", f"{pages / s:.0f}", f"{s / floor:.2f}x"]
                        for name, s in medians.items()]))


def describe(name: str, read: Reader, small: bool) -> dict[str, str]:
    """What a reader makes of the hard cases of the corpus, read from its own output."""
    last = 2 if small else None

    def text(file: str, pages: int | None = last) -> str:
        return "\f".join(read(CORPUS / file, pages)[0])

    facts: dict[str, str] = {}
    ligatures = text("copy_paste_ligatures.pdf")
    facts["ligatures (ﬁ)"] = ("kept as U+FB01" if "ﬁ" in ligatures
                              else "spelt out (fi)" if "abcdeffffifl" in ligatures else "lost")
    paper = text("tracemonkey.pdf", 1)
    i = paper.find("pop")
    after = paper[i + 3: i + 6] if i >= 0 else ""
    facts["hyphen at a line end (pop-/ular)"] = (
        "joined: popular" if after.startswith("ula") else
        "marked (U+FFFE), lines joined" if after.startswith("\ufffe") else
        f"kept: {after!r}" if after else "not found")
    flat = letters(paper)  # pdftotext writes "1." and "Introduction" apart
    left, right = flat.find("1Introduction"), flat.find("andisusedfortheapplicationlogic")
    facts["two columns (left before right)"] = "yes" if 0 <= left < right else "no" if right >= 0 else "?"
    hand = text("hand-overprint-hyphens.pdf")
    facts["overprinted fake bold"] = {1: "once", 2: "twice"}.get(hand.count("Bold by overprinting"), "?")
    facts["soft hyphen (U+00AD) at a line end"] = (
        "marked (U+FFFE)" if "soft hy\ufffephen" in hand else
        "joined" if "soft hyphen" in hand else "kept" if "soft hy\xad" in hand else
        "'-' and a line break" if "soft hy-\r\nphen" in hand or "soft hy-\nphen" in hand else "other")
    facts["90° rotated line"] = "in one piece" if "Rotated ninety degrees" in hand else "broken up"
    vertical = letters(text("vertical.pdf", 1))
    # two columns, read top to bottom and right to left: あいうえお (x = 234) before 日本語 (x = 218)
    facts["vertical Japanese"] = (
        "empty" if not vertical else "columns broken up" if "日本語" not in vertical or "あいうえお" not in vertical
        else "columns right to left" if vertical.find("あいうえお") < vertical.find("日本語")
        else "columns in drawing order (left one first)")
    arabic = letters(text("ArabicCIDTrueType.pdf"))
    facts["Arabic"] = ("logical order" if "انواع" in arabic else
                       "visual order" if "عاونا" in arabic else "?")
    facts["page with no text layer"] = "empty" if not text("ccitt_EndOfBlock_false.pdf").strip() else "text"
    return facts


def main(argv: list[str]) -> int:
    parser = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]))
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds on the corpus (default 5)")
    parser.add_argument("--big-rounds", type=int, default=3, help="timed rounds on the large PDF (default 3)")
    parser.add_argument("--pdfjs", type=Path, default=os.environ.get("PDI_PDFJS_DIST"),
                        help="an unpacked pdfjs-dist package: time and compare pdf.js's text layer too")
    parser.add_argument("--only", metavar="WORD,…",
                        help="time only the readers whose name holds one of these words (pdftotext always)")
    args = parser.parse_args(argv)
    if shutil.which("pdftotext") is None or shutil.which("pdfunite") is None:
        raise SystemExit("pdftotext and pdfunite are missing: apt-get install poppler-utils"
                         " (scripts/bootstrap --dev installs it)")
    readers: dict[str, Reader] = {
        "pdftotext": read_pdftotext,
        "pdftotext -bbox (words)": read_pdftotext_bbox,
        "pypdfium2 text": read_pdfium,
        "pypdfium2 text + char boxes": read_pdfium_boxes,
        "pdi text layer (pdi.fragments.pdf)": read_pdi,
        "pdfminer.six layout + char boxes": read_pdfminer,
    }
    if args.pdfjs:
        if shutil.which("node") is None or not (args.pdfjs / "legacy" / "build" / "pdf.mjs").exists():
            raise SystemExit(f"--pdfjs {args.pdfjs}: needs node and an unpacked pdfjs-dist package")
        readers["pdf.js text layer (node)"] = pdfjs_reader(args.pdfjs)
    if args.only:
        words = [word.strip() for word in args.only.split(",") if word.strip()]
        readers = {name: read for name, read in readers.items()
                   if name == "pdftotext" or any(word in name for word in words)}
    last = 2 if args.small else None
    rounds, big_rounds = (1, 1) if args.small else (args.rounds, args.big_rounds)
    files = sorted(CORPUS.glob("*.pdf"))
    load = os.getloadavg()[0]
    print(f"pypdfium2 {pdfium.version.PYPDFIUM_INFO} (PDFium {pdfium.version.PDFIUM_INFO}); load average {load:.1f},"
          f" {os.cpu_count()} cores")

    pages = sum(len(read_pdfium(path, last)[0]) for path in files)
    timing_table(f"corpus: {len(files)} files of tests/data/pdf", interleaved(readers, files, last, rounds), pages)

    source, copies = (SMALL_SOURCE, SMALL_COPIES) if args.small else (BIG_SOURCE, BIG_COPIES)
    with tempfile.TemporaryDirectory(prefix="pdi-bench-pdf-") as tmp:
        big = Path(tmp) / "joined.pdf"
        subprocess.run(["pdfunite", *[str(CORPUS / source)] * copies, str(big)], check=True)
        big_pages = len(read_pdfium(big, None)[0])
        timing_table(f"{source} joined {copies} times, {big.stat().st_size / 1e6:.0f} MB",
                     interleaved(readers, [big], None, big_rounds), big_pages)

    text_readers = {name: read for name, read in readers.items() if name != "pdftotext -bbox (words)"}
    facts = {name: describe(name, read, args.small) for name, read in text_readers.items()}
    cases = list(next(iter(facts.values())))
    print("\nwhat each reader makes of the hard cases")
    print(readme.table(["case", *facts], [[case, *(facts[name][case] for name in facts)] for case in cases]))

    oracles = ["pdftotext"] + (["pdf.js text layer (node)"] if args.pdfjs else [])
    texts = {name: {path.name: letters("".join(read(path, last)[0])) for path in files}
             for name, read in text_readers.items()}
    for oracle in oracles:
        print(f"\nagreement with {oracle}: similarity of letters and digits (NFKC), per cent")
        rows = []
        for path in files:
            theirs = texts[oracle][path.name]
            rows.append([path.name, str(len(theirs)), *(
                f"{ratio(texts[name][path.name], theirs):.0f}" if theirs or texts[name][path.name] else "both empty"
                for name in text_readers if name != oracle)])
        print(readme.table(["file", f"letters ({oracle})", *(n for n in text_readers if n != oracle)], rows))
    print(f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
