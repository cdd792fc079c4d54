"""Write ``hand-overprint-hyphens.pdf`` beside this file (``python3 make_hand_pdf.py``).

A PDF written by hand for the cases pdf.js's corpus lacks: a line drawn twice
0.4 pt apart (fake bold by overprinting), a word broken by a soft hyphen
(WinAnsi 0xAD, U+00AD) and one by a hyphen at the end of a line, a gap of 40 pt
and a TJ kerning of 0.6 em between words, a line rotated 90°, a named
destination ``end``, and a second page with no content at all. Helvetica, not
embedded (a standard font).
"""

from pathlib import Path

CONTENT = b"""BT /F1 14 Tf 72 720 Td (Bold by overprinting) Tj ET
BT /F1 14 Tf 72.4 720 Td (Bold by overprinting) Tj ET
BT /F1 12 Tf 72 690 Td (A word broken by a soft hy\xad) Tj 0 -14 Td (phen and one by a hard hy-) Tj 0 -14 Td (phen, then the end.) Tj ET
BT /F1 12 Tf 72 630 Td (gap) Tj 40 0 Td (after) Tj 0 0 Td [(kern)-600(ed)] TJ ET
BT /F1 12 Tf 0 1 -1 0 300 400 Tm (Rotated ninety degrees) Tj ET
"""
OBJECTS = [
    b"<< /Type /Catalog /Pages 2 0 R /Names << /Dests << /Names [(end) [3 0 R /XYZ 72 650 0]] >> >> >>",
    b"<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 2 >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    b"<< /Length %d >>\nstream\n" % len(CONTENT) + CONTENT + b"endstream",
    b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 7 0 R >>",
    b"<< /Length 0 >>\nstream\n\nendstream",
]


def pdf() -> bytes:
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(OBJECTS, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(OBJECTS) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(OBJECTS) + 1, xref)
    return bytes(out)


if __name__ == "__main__":
    (Path(__file__).resolve().parent / "hand-overprint-hyphens.pdf").write_bytes(pdf())
