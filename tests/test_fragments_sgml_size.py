"""SGML past :data:`~pdi.fragments.markup.bounds.MAX_SGML_OCTETS` is held whole neither at deposit nor at a query:
its deposit keeps its text's block table (as a plain text's) in bounded memory, its ``elt`` is refused by its size
alone, saying how to cite it instead, and its ``char`` reads its text as any document's does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pdi.fragments.markup.bounds import MAX_SGML_OCTETS
from peak_memory import run_with_peak

SERIES = "sgml.example.us"
PARAGRAPH = b"<P>The quick brown fox jumps over the lazy dog, again and again, in SGML.\n"


def _pdi(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *args], capture_output=True, text=True, timeout=600, check=False)


def test_a_larger_sgml_is_deposited_in_bounded_memory_and_its_elt_refused_by_its_size(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    assert _pdi("init", "--archive", str(archive)).returncode == 0
    assert _pdi("series", "add", SERIES, "--archive", str(archive)).returncode == 0
    document = tmp_path / "big.sgml"
    head = b'<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">\n<HTML><HEAD><TITLE>t</TITLE></HEAD><BODY>\n'
    count = (MAX_SGML_OCTETS + (8 << 20)) // len(PARAGRAPH)  # 40 MiB: past the bound
    with document.open("wb") as out:
        out.write(head)
        for _ in range(count // 1000):
            out.write(PARAGRAPH * 1000)
        out.write(b"</BODY></HTML>\n")
    size = document.stat().st_size
    assert size > MAX_SGML_OCTETS
    status, peak_kib, out = run_with_peak(
        [sys.executable, "-m", "pdi", "add", "--archive", str(archive), "--series", SERIES, "--format", "sgml",
         str(document)], stdout=subprocess.PIPE)
    assert status == 0
    name = out.decode().strip().splitlines()[-1]
    # the document held whole, decoded and copied while onsgmls ran, was five times its size and more
    assert peak_kib < 160 * 1024, f"{peak_kib // 1024} MiB to deposit {size >> 20} MiB of SGML"
    refused = _pdi("get", "--archive", str(archive), f"{name}#elt=3,3")
    assert refused.returncode != 0
    assert f"this SGML is {size:,} octets, more than the {MAX_SGML_OCTETS >> 20} MiB" in refused.stderr
    assert "#char=" in refused.stderr
    # char counts the CRLF-canonical text (PDI-GRAMMAR.md): each LF of the head and paragraphs is two characters
    start = len(head) + 2 + 3 * (len(PARAGRAPH) + 1) + len(b"<P>")
    cited = _pdi("get", "--archive", str(archive), f"{name}#char={start},{start + 9}")
    assert cited.returncode == 0 and cited.stdout == "The quick", cited
