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

from pdi.archive import Archive, Content
from pdi.cli import cli
from pdi.errors import IntegrityError

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
    forced = archive.get(archive.add(S, data, format="pdf", force=True))
    assert forced.data == data and forced.record.format == "pdf"


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
        f"pdi: integrity check failed: {bad}: the content is not a PDF pdi can read: not a PDF PDFium can open"
        " (PDFium: Data format error); --force deposits it as declared (with no text layer)\n"
    )
    assert run(location, "ls", S).stdout.strip() == name.rsplit(".", 2)[0] or name in run(location, "ls", S).stdout
