"""PDF deposits (issue 25): checked at deposit, their text layer kept, ``char``/``line``/``page`` on it.

The PDFs are the corpus of ``tests/data/pdf`` (sources in tests/data/README.md).
The oracles are poppler's ``pdfinfo`` (page count, page sizes) and
``pdftotext`` (text), another reader than the PDFium pdi uses, and offsets
counted by hand on docs/pdf-text-layer.md's rules.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from archive_helpers import snapshot
from click.testing import CliRunner, Result

from pdf_helpers import pdf_of
from pdi.archive import Archive, Content
from pdi.cli import cli
from pdi.errors import IntegrityError, UnsupportedError

S = "oma.eop.gov.us"
CORPUS = Path(__file__).resolve().parents[1] / "data" / "pdf"


def pdfinfo(path: Path, *args: str) -> str:
    found = shutil.which("pdfinfo")
    assert found, "pdfinfo is missing: scripts/bootstrap --dev installs Debian's poppler-utils"
    return subprocess.run([found, *args, str(path)], capture_output=True, text=True, check=True).stdout


def pages_of(path: Path) -> int:
    return int(re.search(r"^Pages:\s+(\d+)", pdfinfo(path), re.MULTILINE).group(1))  # type: ignore[union-attr]


def run(location: str, *argv: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, [*argv, "--archive", location])
    assert result.exit_code == code, (argv, result.output, result.stderr, result.exception)
    return result


# --- step 1: a format, checked at deposit --------------------------------------------------------


@pytest.mark.parametrize("name", ["tracemonkey.pdf", "scan-bad.pdf", "textfields.pdf", "sizes.pdf"])
def test_a_pdf_is_deposited_exactly(archive: Archive, name: str) -> None:
    data = (CORPUS / name).read_bytes()
    got = archive.get(archive.add(S, data, format="pdf"))
    assert got.data == data
    assert got.media_type == "application/pdf" and got.record.format == "pdf" and got.charset is None


@pytest.mark.parametrize(
    "data",
    [
        b"%PDF-1.4\n%%EOF\n",  # a header and an end, nothing between
        (CORPUS / "tracemonkey.pdf").read_bytes()[:1000],  # cut short: no page, no trailer
    ],
    ids=["empty-body", "truncated"],
)
def test_a_pdf_pdfium_cannot_open_is_refused_and_leaves_nothing(archive: Archive, data: bytes) -> None:
    before = snapshot(archive)
    with pytest.raises(IntegrityError) as refused:
        archive.deposit(S, [Content(data, "pdf", source="report.pdf")])
    assert str(refused.value) == (
        "report.pdf: the content is not a PDF pdi can read: not a PDF PDFium can open (PDFium: Data format error);"
        " --force deposits it as declared (with no text layer)"
    )
    assert snapshot(archive) == before
    name = archive.add(S, data, format="pdf", force=True)
    forced = archive.get(name)
    assert forced.data == data and forced.record.format == "pdf"
    # its passages: a valid name, of a PDF with nothing PDFium reads in it (not a syntax error of the name)
    for fragment in ("#page=1", "#char=0,5", "#rect=(0,0),(100,100)", "#search=%22hello%22"):
        with pytest.raises(UnsupportedError, match=r"not a PDF PDFium can open .*: kept as it came \(deposited with"
                                                   r" --force\), it has no page, text or region pdi can cite"):
            archive.get(str(name) + fragment)


def _looping_pages_pdf() -> bytes:
    """A PDF whose page tree loops (ISO 32000-1 §7.7.3.2: a Pages node's kid is its own parent), then finds its
    one page: object 2's kids are [4], object 4's are [2, 6]."""
    content = b"BT /F1 12 Tf 10 10 Td (hi) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Font << /F1 5 0 R >> >>",
        b"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R 6 0 R] /Count 1 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Page /Parent 4 0 R /MediaBox [0 0 612 792] /Resources 3 0 R /Contents 7 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    return pdf_of(objects)


def test_a_looping_page_tree_is_kept_whole_and_no_page_of_it_is_cited(archive: Archive, tmp_path: Path) -> None:
    """Neither PDFium nor pdf.js loads its one page (pdfjs_pages: one page, None); it was refused ("page 1 of its 1
    is not one PDFium can load"), and is now kept whole, its page tree's fault said, no page of it cited."""
    from pdf_helpers import pdfjs_pages

    data = _looping_pages_pdf()
    path = tmp_path / "looping.pdf"
    path.write_bytes(data)
    checked = subprocess.run(["qpdf", "--check", str(path)], capture_output=True, text=True, check=False)
    assert checked.returncode == 2 and "Loop detected in /Pages structure" in checked.stdout + checked.stderr
    assert pdfjs_pages(path) == (1, [None])
    name = archive.add(S, data, format="pdf")
    assert archive.get(name).data == data
    with pytest.raises(UnsupportedError) as refused:
        archive.get(str(name) + "#page=1")
    assert str(refused.value).startswith(
        f"{name}: pdi cites no page of this PDF (page 1 asked): its page tree is not one PDFium (Chromium's viewer)"
        " and pdf.js (Firefox's) are sure to read alike (it loops: object 2 is a kid of itself or of its own kids)")


def test_a_pdf_of_no_page_is_refused_saying_so_not_pdfiums_success(archive: Archive, tmp_path: Path) -> None:
    data = pdf_of([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"])  # no page
    path = tmp_path / "none.pdf"
    path.write_bytes(data)
    said = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=False)
    assert "Invalid page count 0" in said.stderr  # poppler's reading
    before = snapshot(archive)
    with pytest.raises(IntegrityError) as refused:
        archive.deposit(S, [Content(data, "pdf", source="none.pdf")])
    assert str(refused.value) == (
        "none.pdf: the content is not a PDF pdi can read: not a PDF PDFium can open: PDFium refuses it and gives no"
        " reason, as it refuses a PDF whose page tree holds no page; --force deposits it as declared (with no text"
        " layer)"
    )
    assert snapshot(archive) == before


def test_pdi_add_guesses_pdf_from_the_name_and_refuses_a_broken_one(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    good = tmp_path / "paper.pdf"
    good.write_bytes((CORPUS / "paragraph_and_link.pdf").read_bytes())
    name = run(location, "add", str(good), "-s", S).stdout.strip()
    assert name.endswith("/1.pdf.1")
    assert run(location, "get", name).stdout_bytes == good.read_bytes()
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\n")
    refused = run(location, "add", str(bad), "-s", S, code=3)
    assert refused.stderr == (
        f"pdi: format check failed: {bad}: the content is not a PDF pdi can read: not a PDF PDFium can open"
        " (PDFium: Data format error); --force deposits it as declared (with no text layer)\n"
    )
    assert run(location, "ls", S).stdout.strip() == name.rsplit(".", 2)[0] or name in run(location, "ls", S).stdout


# --- step 2: the text layer, kept; char= and line= on it ----------------------------------------------
# Offsets are counted by hand on docs/pdf-text-layer.md §2: each page's text ends with CR LF, one FF
# between pages, a hyphen ending a line kept with its CR LF. The characters come from make_hand_pdf.py's
# content stream (hand-overprint-hyphens.pdf) and from pdftotext's words (sizes.pdf, paragraph_and_link.pdf).

HAND = (
    "Bold by overprinting\r\n"
    "A word broken by a soft hy-\r\n"
    "phen and one by a hard hy-\r\n"
    "phen, then the end.\r\n"
    "gap after kern ed\r\n"
    "Rotated ninety degrees\r\n"
    "\f"  # page 2 has no content: an empty T(2)
)


def pdftotext(path: Path, page: int) -> str:
    found = shutil.which("pdftotext")
    assert found, "pdftotext is missing: scripts/bootstrap --dev installs Debian's poppler-utils"
    return subprocess.run([found, "-q", "-f", str(page), "-l", str(page), "-enc", "UTF-8", str(path), "-"],
                          capture_output=True, check=True).stdout.decode("utf-8")


def test_char_and_line_count_on_the_text_layer(archive: Archive) -> None:
    name = archive.add(S, (CORPUS / "hand-overprint-hyphens.pdf").read_bytes(), format="pdf")
    second = len("Bold by overprinting\r\n")
    got = archive.get(f"{name}#char={second},{second + len('A word broken by a soft hy-')}")
    assert got.data == b"A word broken by a soft hy-"
    assert got.media_type == "text/plain" and got.charset == "utf-8"
    assert archive.get(f"{name}#line=1,3").data == b"A word broken by a soft hy-\r\nphen and one by a hard hy-\r\n"
    assert archive.get(f"{name}#line=6,7").data == b"\f"  # the FF opens page 2's (empty) line
    whole = archive.get(f"{name}#char=0,100000")
    assert whole.data == HAND.encode() and whole.fragment is not None and whole.fragment.clamped
    past = archive.get(f"{name}#char=500,600")
    assert past.fragment is not None and past.fragment.past_end and past.data == b""


def test_char_on_pages_agrees_with_pdftotext(archive: Archive) -> None:
    path = CORPUS / "sizes.pdf"
    words = [pdftotext(path, n).split() for n in (1, 2, 3)]
    assert words == [["Normal"], ["Envelope"], ["Landscape"]]
    name = archive.add(S, path.read_bytes(), format="pdf")
    # D = "Normal" CR LF FF "Envelope" CR LF FF "Landscape" CR LF
    start = len("Normal\r\n\f")
    assert archive.get(f"{name}#char={start},{start + len('Envelope')}").data == b"Envelope"
    assert archive.get(f"{name}#line=2,3").data == b"\fLandscape\r\n"


def test_a_non_ascii_passage_counts_characters_not_octets(archive: Archive) -> None:
    path = CORPUS / "copy_paste_ligatures.pdf"
    name = archive.add(S, path.read_bytes(), format="pdf")
    # pdftotext keeps U+FB00.. as they stand; the layer spells them out (ﬀ -> ff) and keeps ſt as "ſt"
    theirs = pdftotext(path, 1).strip()
    assert theirs.startswith("abcdef\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06ghi")
    got = archive.get(f"{name}#char=6,25")  # after "abcdef": the seven ligatures spelt out, then "ghi"
    assert got.data.decode("utf-8") == "fffiflffifflſtstghi"  # 19 characters, 20 octets (ſ is two)
    assert got.fragment is not None and got.fragment.ranges[0].byte_end - got.fragment.ranges[0].byte_start == 20


def test_a_layer_index_damaged_or_made_for_other_octets_is_refused() -> None:
    from pdi.errors import IntegrityError as Damaged
    from pdi.fragments import evaluate
    from pdi.fragments.pdf import build_layer_index

    data = (CORPUS / "sizes.pdf").read_bytes()
    index = build_layer_index(data)
    assert evaluate("char", [0, 6], data, media_type="application/pdf", index=index).data == b"Normal"
    broken = index[:40] + bytes([index[40] ^ 1]) + index[41:]
    with pytest.raises(Damaged, match="damaged"):
        evaluate("char", [0, 6], data, media_type="application/pdf", index=broken)
    with pytest.raises(Damaged, match="made for"):
        evaluate("char", [0, 6], data + b"\n", media_type="application/pdf", index=index)


def test_info_says_the_text_layer_and_a_scan_has_none(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    hand = tmp_path / "hand.pdf"
    hand.write_bytes((CORPUS / "hand-overprint-hyphens.pdf").read_bytes())
    name = run(location, "add", str(hand), "-s", S).stdout.strip()
    import hashlib

    digest = hashlib.sha256(HAND.encode()).hexdigest()
    info = run(location, "get", name, "--info").stdout
    assert f"text-layer\t{len(HAND)} characters on 2 pages, {len(HAND)} octets in UTF-8, sha256 {digest}\n" in info
    scan = tmp_path / "scan.pdf"
    scan.write_bytes((CORPUS / "ccitt_EndOfBlock_false.pdf").read_bytes())
    assert pdftotext(scan, 1).strip() == ""
    scanned = run(location, "add", str(scan), "-s", S).stdout.strip()
    assert "text-layer\tnone on its 1 page: no text layer: cite by page and region\n" in run(
        location, "get", scanned, "--info").stdout
    forced = tmp_path / "forced.pdf"
    forced.write_bytes(b"%PDF-1.4\n%%EOF\n")
    kept = run(location, "add", str(forced), "-s", S, "--force").stdout.strip()
    assert ("text-layer\tnone made at deposit (PDFium could not read it: damaged, needing a password, or past"
            " pdi's limits; or it was over 256 MiB): cite by page and region\n") in run(
        location, "get", kept, "--info").stdout
    passage = run(location, "get", f"{name}#char=0,4", "--info").stdout
    assert "media-type\ttext/plain\ncharset\tutf-8\nbytes\t4\n" in passage
    # a region of a page is said in a PDF's words: points on a page (RFC 8118 counts the page from 0 in rect=)
    region = run(location, "get", f"{name}#rect=(50,50),(300,200),1", "--info").stdout
    assert "region\t(50,50),(300,200) in points, on page 2 of 2 (rect= counts pages from 0;" in region
    assert "frame" not in region.replace("rect= counts", "")


def test_a_passage_of_a_scan_says_it_has_no_text_and_a_text_pdf_says_nothing(tmp_path: Path) -> None:
    """A scan's ``#rect=`` printed nothing and exited 0, its ``#char=`` only said it lay past the end of 0 characters:
    neither told the archivist that the PDF has no text to select (pdftotext reads none of it)."""
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    scan = tmp_path / "scan.pdf"
    scan.write_bytes((CORPUS / "ccitt_EndOfBlock_false.pdf").read_bytes())
    assert pdftotext(scan, 1).strip() == ""
    scanned = run(location, "add", str(scan), "-s", S).stdout.strip()
    region = run(location, "get", f"{scanned}#rect=(0,0),(200,200)")
    assert region.stdout == ""
    assert f"note: {scanned} has no text (its text layer is empty" in region.stderr
    assert "#rect= selects no characters" in region.stderr
    passage = run(location, "get", f"{scanned}#char=0,5", code=9)
    assert "#char= selects no characters" in passage.stderr and "lies wholly past the end" in passage.stderr
    hand = tmp_path / "hand.pdf"
    hand.write_bytes((CORPUS / "hand-overprint-hyphens.pdf").read_bytes())
    name = run(location, "add", str(hand), "-s", S).stdout.strip()
    corner = run(location, "get", f"{name}#rect=(0,0),(1,1)")  # a region of no character, on a PDF with text
    assert corner.stdout == "" and "no text" not in corner.stderr


def test_a_pdf_over_the_layer_limit_is_kept_unchecked_with_no_layer(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PDFium reads a PDF whole from memory: past PDF_LAYER_UP_TO the deposit holds none of it and makes no layer."""
    from pdi.archive import readable

    data = (CORPUS / "hand-overprint-hyphens.pdf").read_bytes()
    monkeypatch.setattr(readable, "PDF_LAYER_UP_TO", len(data) - 1)
    name = archive.add(S, data, format="pdf")
    assert archive.get(str(name)).data == data
    assert archive.text_layer_of(archive.locate(str(name)).record) is None
    broken = b"%PDF-1.4\n" + b"x" * len(data)  # not checked either: it is not read whole
    assert archive.get(str(archive.add(S, broken, format="pdf"))).data == broken


# --- step 3: page= (RFC 8118 §3) -------------------------------------------------------------------


def test_page_answers_the_whole_pdf_and_info_names_the_page_and_its_size(tmp_path: Path) -> None:
    path = CORPUS / "sizes.pdf"
    sizes = re.findall(r"^Page\s+(\d+) size:\s+([\d.]+) x ([\d.]+) pts", pdfinfo(path, "-f", "1", "-l", "3"), re.MULTILINE)
    assert len(sizes) == pages_of(path) == 3
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    target = tmp_path / "sizes.pdf"
    target.write_bytes(path.read_bytes())
    name = run(location, "add", str(target), "-s", S).stdout.strip()
    for number, width, height in sizes:
        got = run(location, "get", f"{name}#page={number}", "-o", "-")
        assert got.stdout_bytes == path.read_bytes()
        info = run(location, "get", f"{name}#page={number}", "--info").stdout
        assert "media-type\tapplication/pdf\n" in info
        assert f"page\t{number} of 3 ({float(width):g} x {float(height):g} points)\n" in info
    # the page's range is its text and its CR LF, not the FF: page 2 of "Normal\r\n\fEnvelope\r\n\f…"
    start, length = len("Normal\r\n\f"), len("Envelope\r\n")
    assert f"range\tchar={start},{start + length} " in run(location, "get", f"{name}#page=2", "--info").stdout
    past = run(location, "get", f"{name}#page=4", "-o", "-", code=9)
    assert past.stdout_bytes == b""
    assert past.stderr == f"warning: {name}#page=4 lies wholly past the end (the PDF has 3 pages): it selects nothing\n"
    zero = run(location, "get", f"{name}#page=0", code=1)
    assert "pages are counted from 1" in zero.stderr


# --- step 4: search reads the text layer; its hits are char= names on the PDF ---------------------------


def test_search_finds_a_pdf_word_as_a_char_name_on_its_page(archive: Archive) -> None:
    path = CORPUS / "paragraph_and_link.pdf"
    assert "second page" in pdftotext(path, 2) and "second page" in pdftotext(path, 1)
    name = archive.add(S, path.read_bytes(), format="pdf")
    hits = archive.search('"first paragraph"').hits
    assert len(hits) == 1
    start = len("The first paragraph.\r\nLink to the second page.\r\n\f")  # page 2: "First paragraph on …"
    # page 1 says "The first paragraph." too: one passage holds both (hits are passages, best first)
    found = {(str(h.name), h.start, h.end) for h in hits}
    assert found <= {(f"{name}#char={a},{b}", a, b) for a, b in [(4, 19), (start, start + 15)]}
    hit = hits[0]
    assert archive.get(hit.name).data.decode().lower() == "first paragraph"


@pytest.mark.parametrize("queued", [False, True])
def test_a_long_layer_is_queued_and_indexed_from_the_kept_layer(
    archive: Archive, monkeypatch: pytest.MonkeyPatch, queued: bool
) -> None:
    import pdi.archive.search as search

    if queued:
        monkeypatch.setattr(search, "QUEUE_PAST", 1000)  # tracemonkey's layer has 84,358 characters
    path = CORPUS / "tracemonkey.pdf"
    assert "Type Specialization for Dynamic" in pdftotext(path, 1)  # the title
    name = archive.add(S, path.read_bytes(), format="pdf")
    if queued:
        assert archive.search("specialization").hits == ()
        assert archive.index_queued().indexed == 1
    hits = archive.search('"type specialization"').hits
    assert hits and all(str(h.name).startswith(f"{name}#char=") for h in hits)
    # the title: the first characters of the layer (docs/pdf-text-layer.md: content-stream order)
    title = "Trace-based Just-in-Time Type Specialization"
    first = [h for h in hits if h.start == title.index("Type")]
    assert len(first) == 1 and first[0].end == len(title)
    assert archive.get(first[0].name).data == b"Type Specialization"
    before = [str(h.name) for h in hits]
    archive.reindex()
    assert [str(h.name) for h in archive.search('"type specialization"').hits] == before


def test_a_scan_and_a_forced_pdf_have_no_text_to_find(archive: Archive) -> None:
    archive.add(S, (CORPUS / "ccitt_EndOfBlock_false.pdf").read_bytes(), format="pdf")
    archive.add(S, b"%PDF-1.4\n%%EOF\n", format="pdf", force=True)
    assert archive.search("PDF").hits == ()
    report = archive.reindex()
    assert any("no text layer" in note for _, note in report.unreadable)


# --- nameddest= (RFC 8118 §3) -------------------------------------------------------------------------


def test_nameddest_answers_the_whole_pdf_at_its_destination(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    hand = tmp_path / "hand.pdf"
    hand.write_bytes((CORPUS / "hand-overprint-hyphens.pdf").read_bytes())
    name = run(location, "add", str(hand), "-s", S).stdout.strip()
    # make_hand_pdf.py: /Dests (end) [page 1 /XYZ 72 650]; the line below 650 pt is "gap after kern ed" (630 pt)
    at = len("Bold by overprinting\r\nA word broken by a soft hy-\r\nphen and one by a hard hy-\r\nphen, then the end.\r\n")
    assert run(location, "get", f"{name}#nameddest=end", "-o", "-").stdout_bytes == hand.read_bytes()
    info = run(location, "get", f"{name}#nameddest=end", "--info").stdout
    assert f"range\tchar={at},{at} " in info and "page\t1 of 2 (612 x 792 points)\n" in info
    assert run(location, "get", f"{name}#char={at},{at + 3}").stdout_bytes == b"gap"
    missing = run(location, "get", f"{name}#nameddest=start", code=4)
    assert "the PDF has no destination named 'start'" in missing.stderr


def test_nameddest_of_a_heading_lands_on_the_heading(archive: Archive) -> None:
    path = CORPUS / "pdfjs_wikipedia.pdf"
    assert "History and application" in pdftotext(path, 1)
    name = archive.add(S, path.read_bytes(), format="pdf")
    got = archive.get(f"{name}#nameddest=History_and_application")
    assert got.data == path.read_bytes() and got.fragment is not None
    at = got.fragment.ranges[0].start
    assert archive.get(f"{name}#char={at},{at + len('History and application')}").data == b"History and application"
    # vertical.pdf's page.2 is a /Fit destination (no top): the start of page 2, just after the first FF
    vertical = archive.add(S, (CORPUS / "vertical.pdf").read_bytes(), format="pdf")
    page2 = archive.get(f"{vertical}#nameddest=page%2E2").fragment  # "." is reserved: %-escaped
    assert page2 is not None and page2.page is not None and page2.page.number == 2
    text = archive.get(f"{vertical}#char=0,100000").data.decode()
    assert page2.ranges[0].start == text.index("\f") + 1


def test_a_hostile_deposit_is_refused_and_leaves_nothing(archive: Archive, monkeypatch: pytest.MonkeyPatch) -> None:
    import pdi.fragments.pdf as pdf
    from pdf_helpers import operators_pdf
    from pdi.errors import LimitError as Limit

    hostile = operators_pdf(1_000_000)  # a 78 KB page of a million text operators: seconds and 500 MB of PDFium
    # a deadline passed by orders of magnitude however loaded the machine: the child's start alone takes several
    # times 10 ms, its text layer 2 to 4.5 s (tests/test_fragments_pdf_limits.py: 0.3 s was passed some 10 times)
    monkeypatch.setattr(pdf, "LIMITS", pdf.PdfiumLimits(document_seconds=0.01))
    before = snapshot(archive)
    with pytest.raises(Limit, match=r"^PDFium took longer than 0.01 s reading hostile.pdf \(the limit"):
        archive.deposit(S, [Content(hostile, "pdf", source="hostile.pdf")])
    assert snapshot(archive) == before
    forced = archive.get(archive.add(S, hostile, format="pdf", force=True))  # as declared, with no text layer
    assert forced.data == hostile and archive.fragment_index(forced.record) is None


# --- encrypted PDFs (made by qpdf 11.3.0 from sizes.pdf and hand-overprint-hyphens.pdf: tests/data/README.md) ---
# Decision (docs/pdf-text-layer.md §1): a PDF that needs a password to open is refused at deposit (exit 3; pdi
# keeps no passwords, and without one PDFium can read neither its text nor its pages); --force keeps it as
# declared, with no text layer. A PDF encrypted with an owner password only opens without one, and is read
# as if it were not encrypted (PDFium ignores the permissions: pdi only reads, never prints or changes).


def qpdf_encryption(path: Path) -> str:
    found = shutil.which("qpdf")
    assert found, "qpdf is missing: scripts/bootstrap --dev installs Debian's qpdf"
    done = subprocess.run([found, "--show-encryption", str(path)], capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


def test_the_encrypted_pdfs_are_what_qpdf_says() -> None:
    assert "Incorrect password supplied" in qpdf_encryption(CORPUS / "encrypted" / "user-password.pdf")
    # R = 6: AES-256 (PDF 2.0); R = 3: RC4 with a 128-bit key (PDF 1.4), for which qpdf names no method
    for name, method in (("owner-only.pdf", "stream encryption method: AESv3"),
                         ("owner-only-rc4.pdf", "R = 3\n")):
        said = qpdf_encryption(CORPUS / "encrypted" / name)
        assert "User password = \nSupplied password is user password\n" in said and method in said


def test_a_pdf_that_needs_a_password_is_refused_at_deposit(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    locked = tmp_path / "locked.pdf"
    locked.write_bytes((CORPUS / "encrypted" / "user-password.pdf").read_bytes())
    refused = run(location, "add", str(locked), "-s", S, code=3)
    assert refused.stderr == (
        f"pdi: format check failed: {locked}: the content is not a PDF pdi can read: the PDF is encrypted and"
        " PDFium cannot open it: it needs a password to open, or its /Encrypt dictionary is damaged (a /V or /R"
        " PDFium does not know, an /O or /U altered or cut short) (PDFium: Incorrect password error); --force"
        " deposits it as declared (with no text layer)\n"
    )
    assert run(location, "ls", S).stdout == ""
    kept = run(location, "add", str(locked), "-s", S, "--force").stdout.strip()
    assert run(location, "get", kept).stdout_bytes == locked.read_bytes()
    assert "text-layer\tnone made at deposit (PDFium could not read it: damaged, needing a password" in run(
        location, "get", kept, "--info").stdout
    assert "needs a password to open" in run(location, "get", f"{kept}#page=1", code=6).stderr


def test_a_refusal_of_a_pdf_read_for_a_name_begins_with_the_name(tmp_path: Path) -> None:
    """Found by a probe (2026-12-01): a passage of a PDF kept with ``--force`` was refused as "not a PDF PDFium can
    open", naming no document, where a deposit's refusal begins with its file's name. Read for a name, the refusal
    begins with that name, the PDF's versioned PDI, whichever spelling of it was asked; PDFium's reason follows,
    the deposit's words for the same octets (tested above)."""
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\n%%EOF\n")
    kept = run(location, "add", str(broken), "-s", S, "--force").stdout.strip()
    locked = tmp_path / "locked.pdf"
    locked.write_bytes((CORPUS / "encrypted" / "user-password.pdf").read_bytes())
    sealed = run(location, "add", str(locked), "-s", S, "--force").stdout.strip()
    assert kept.endswith("/1.pdf.1") and sealed.endswith("/2.pdf.1")
    for asked in (kept, kept.removesuffix(".1")):  # a version omitted is version 1 (PDI-GRAMMAR.md §2.2)
        for fragment in ("#page=1", "#char=0,5", "#nameddest=x", "#rect=(0,0),(10,10)", "#search=%22a%22"):
            said = run(location, "get", asked + fragment, code=6).stderr
            # the version omitted is said so first (PDI-GRAMMAR.md §7: the lenient parser "says so")
            lenient = "" if asked == kept else (
                "warning: no version on a fragment PDI (the PDI draft, line 457, requires one): read as version 1\n")
            assert said == lenient + (
                f"pdi: unsupported: {kept}: not a PDF PDFium can open (PDFium: Data format error): kept as it came"
                " (deposited with --force), it has no page, text or region pdi can cite; cite the whole PDF\n")
    assert run(location, "get", f"{sealed}#page=1", code=6).stderr.startswith(
        f"pdi: unsupported: {sealed}: the PDF is encrypted and PDFium cannot open it: it needs a password to open")
    # a syntax error of the name is the name's own: said of its place in the name, not of the PDF
    assert run(location, "get", f"{kept}#viewrect=1,2,3", code=1).stderr.startswith(
        "pdi: syntax error: viewrect= takes left,top,width,height")


def _broken(name: str, old: bytes, new: bytes) -> bytes:
    """The encrypted corpus PDF ``name`` with ``old`` in its /Encrypt dictionary (the last ``/Filter /Standard``'s
    object) written ``new``, as long, so that its cross-reference table still points at every object."""
    data = (CORPUS / "encrypted" / name).read_bytes()
    at = data.rindex(b"/Filter /Standard")
    start, end = data.rindex(b" obj", 0, at), data.index(b"endobj", at)
    assert len(old) == len(new) and data.count(old, start, end) == 1
    return data[:start] + data[start:end].replace(old, new) + data[end:]


#: Broken /Encrypt dictionaries (ISO 32000-1 §7.6.1 Table 20, §7.6.3.2 Table 21): what is altered, qpdf's
#: complaint about it (an independent reader: the dictionary is broken, not the password wrong) and what pdi says
#: is wrong. An owner password alone: each would open with no password, were its dictionary whole.
BROKEN = [
    ("owner-only.pdf", b"/Filter", b"/Fxlter", "unsupported encryption filter",
     "the PDF is encrypted by a security handler PDFium does not have: its /Encrypt dictionary's /Filter is"
     " missing or other than /Standard (PDFium: Unsupported security scheme error)"),
    ("owner-only.pdf", b"/Standard", b"/Standarx", "unsupported encryption filter",
     "the PDF is encrypted by a security handler PDFium does not have: its /Encrypt dictionary's /Filter is"
     " missing or other than /Standard (PDFium: Unsupported security scheme error)"),
    ("owner-only-rc4.pdf", b"/V 2", b"/V 9", "Unsupported /R or /V in encryption dictionary",
     "its /Encrypt dictionary is damaged (a /V or /R PDFium does not know, an /O or /U altered or cut short)"
     " (PDFium: Incorrect password error)"),
    ("owner-only-rc4.pdf", b"/R 3", b"/R 9", "Unsupported /R or /V in encryption dictionary",
     "its /Encrypt dictionary is damaged (a /V or /R PDFium does not know, an /O or /U altered or cut short)"
     " (PDFium: Incorrect password error)"),
    ("owner-only-rc4.pdf", b"/O <913b", b"/O <a13b", "Incorrect password supplied",
     "its /Encrypt dictionary is damaged (a /V or /R PDFium does not know, an /O or /U altered or cut short)"
     " (PDFium: Incorrect password error)"),
]


@pytest.mark.parametrize(("name", "old", "new", "qpdf", "said"), BROKEN)
def test_a_pdf_whose_encrypt_dictionary_is_broken_is_refused_saying_what_is_wrong(
        tmp_path: Path, name: str, old: bytes, new: bytes, qpdf: str, said: str) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(_broken(name, old, new))
    assert qpdf in qpdf_encryption(broken)
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    with Archive.open(location) as archive:
        before = snapshot(archive)
    refused = run(location, "add", str(broken), "-s", S, code=3).stderr
    assert refused.startswith(f"pdi: format check failed: {broken}: the content is not a PDF pdi can read: the PDF is"
                              " encrypted "), refused
    assert said in refused and "Success" not in refused
    with Archive.open(location) as archive:
        assert snapshot(archive) == before  # nothing kept: no blob, no name, no index
    kept = run(location, "add", str(broken), "-s", S, "--force").stdout.strip()
    assert run(location, "get", kept).stdout_bytes == broken.read_bytes()
    assert said in run(location, "get", f"{kept}#page=1", code=6).stderr


@pytest.mark.parametrize(("name", "plain"), [("owner-only.pdf", "sizes.pdf"),
                                             ("owner-only-rc4.pdf", "hand-overprint-hyphens.pdf")])
def test_a_pdf_with_an_owner_password_only_is_read_as_its_plain_original(
        archive: Archive, name: str, plain: str) -> None:
    encrypted = archive.add(S, (CORPUS / "encrypted" / name).read_bytes(), format="pdf")
    original = archive.add(S, (CORPUS / plain).read_bytes(), format="pdf")
    theirs = archive.get(f"{encrypted}#char=0,100000").data
    assert theirs == archive.get(f"{original}#char=0,100000").data
    assert theirs.split(b"\r\n")[0] in (b"Normal", b"Bold by overprinting")
    assert archive.get(f"{encrypted}#line=1,2").data == archive.get(f"{original}#line=1,2").data


def test_a_pdf_with_no_layer_is_given_to_pdfium_once_for_many_passages(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PDF kept with ``--force`` that PDFium cannot read has no layer: each passage asked of it ran PDFium again
    in a child (up to 120 s and 2 GiB for a hostile one) and got the same refusal; one that PDFium can read but
    a deposit does not (past its size) was read again for every passage. Each is read once now (a spy counts
    PDFium's children; each answer is still PDFium's)."""
    import pdi._bounded
    from pdi.archive import readable

    children: list[list[str]] = []
    real = pdi._bounded.run_child

    def counted(module: str, argv: list[str], *args: object, **kwargs: object) -> object:
        children.append(argv)
        return real(module, argv, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pdi._bounded, "run_child", counted)
    from collections import OrderedDict

    from pdi.fragments import pdf

    monkeypatch.setattr(pdf, "_refused", OrderedDict(), raising=False)  # what this process has read of other tests' PDFs
    monkeypatch.setattr(pdf, "_made", OrderedDict(), raising=False)
    broken = archive.add(S, b"%PDF-1.4\n%%EOF\n", format="pdf", force=True)
    children.clear()  # the deposit's own reading
    for passage in ("char=0,4", "line=0,1", "char=2,3"):
        with pytest.raises(UnsupportedError) as refused:
            archive.resolve(f"{broken}#{passage}")
    assert "not a PDF PDFium can open" in str(refused.value)  # each time PDFium's own refusal
    assert [argv[0] for argv in children] == ["layer"]

    children.clear()
    data = (CORPUS / "hand-overprint-hyphens.pdf").read_bytes()
    monkeypatch.setattr(readable, "PDF_LAYER_UP_TO", len(data) - 1)
    large = archive.add(S, data, format="pdf")
    assert children == []  # past the size a deposit reads
    assert archive.text_layer_of(archive.locate(str(large)).record) is None
    # the text pdftotext reads, as the deposit's layer would hold it (HAND, tested against poppler above)
    assert archive.resolve(f"{large}#char=0,{len(HAND)}").data.decode() == HAND
    assert archive.resolve(f"{large}#char=0,6").data.decode() == HAND[:6]
    assert [argv[0] for argv in children] == ["layer"]


def test_a_pdf_drawing_a_form_that_draws_itself_is_refused_at_once_naming_its_objects(archive: Archive) -> None:
    """Found by an attack: PDFium's child ran out of its 2 GiB after 4 to 10 s on this 1-KB PDF (form 6 draws
    form 7 twice, 7 draws 6: 2, 4, 8… copies at each level), and the deposit was refused for memory."""
    from pdf_helpers import forms_pdf

    data = forms_pdf([[1, 1], [0]], [0])
    before = snapshot(archive)
    with pytest.raises(IntegrityError) as refused:
        archive.deposit(S, [Content(data, "pdf", source="forms.pdf")])
    assert str(refused.value) == (
        "forms.pdf: the content is not a PDF pdi can read: page 1 of its 1 draws Form XObjects that draw one another"
        " in a cycle (objects 6 → 7 → 6): a picture with no end (ISO 32000-1 §8.10), which PDFium would draw again"
        " and again until it had no more memory (pdf.js skips a form where it comes round again); --force deposits"
        " it as declared (with no text layer)"
    )
    assert snapshot(archive) == before
