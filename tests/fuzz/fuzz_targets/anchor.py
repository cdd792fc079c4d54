"""Re-anchoring a cited passage in another version of its text: :func:`pdi.passages.reanchor.anchor_passage`.

Input: ``start NUL end NUL old NUL new``: two numbers (decimal digits, taken
modulo the old text's length plus one, and put in order) and the two texts
(UTF-8, other bytes as lone surrogates). What must hold: anchoring a text
to itself is exact and gives back the same passage; an answer in the other
text lies inside it, and the exact and quote methods find the very text
cited; an ambiguous answer lists at least two places, each inside the
other text; the blocks the diff keeps are the same text in both versions.
"""

from __future__ import annotations

from fuzz_harness import Target

from fuzz_targets._common import fields, text_of
from pdi.passages.reanchor import anchor_passage, equal_blocks


def _number(raw: bytes) -> int:
    digits = raw.strip()[:18]
    return int(digits) if digits.isdigit() else 0


def run(data: bytes) -> None:
    start_b, end_b, old_b, new_b = fields(data, 4)
    old, new = text_of(old_b), text_of(new_b)
    start, end = sorted((_number(start_b) % (len(old) + 1), _number(end_b) % (len(old) + 1)))
    same = anchor_passage(old, start, end, old)
    assert (same.status, same.method, same.start, same.end) == ("anchored", "exact", start, end), same
    found = anchor_passage(old, start, end, new)
    assert found.status in ("anchored", "orphaned", "ambiguous")
    if found.anchored:
        assert 0 <= found.start <= found.end <= len(new)
        assert 0.0 <= found.score <= 1.0
        if found.method in ("exact", "quote"):
            assert new[found.start : found.end] == old[start:end]
    if found.status == "ambiguous":
        assert len(found.candidates) >= 2
        assert all(0 <= c.start <= c.end <= len(new) for c in found.candidates)
    blocks, _, _ = equal_blocks(old, new)
    for a, b, size in blocks:
        assert old[a : a + size] == new[b : b + size]


TARGET = Target(
    "anchor",
    run,
    warmup=b"24\x0047\x00Preamble.\r\n\r\nThe budget was approved.\x00A new line.\r\nPreamble.\r\n\r\nThe budget was approved.",
    tokens=(
        b"\x00", b"0", b"1", b"\r\n", b"\n", b"\r\n\r\n", b" ", b".", b"the fee is due", b"The budget was approved",
        b"without amendment", b"\xe2\x98\x83", b"\xc3\xa9", b"\xf0\x9f\x98\x80", b"\x80",
    ),
    examples=0.6,
)
