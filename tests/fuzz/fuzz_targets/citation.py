"""Checking a quotation (``@origin=pdi`` citations): ``pdi.fragments.citation.check_quotation``.

Input: ``origin NUL citing-type NUL citing-charset NUL quoted-type NUL
quoted-charset NUL citing-text NUL quoted-text`` (an origin that is not a
whole number is passed as text; empty charsets are none). What must hold:
a status of ``ok``, ``mismatch`` or ``unchecked``, and ``ok`` only where the
text found is the quotation.
"""

from __future__ import annotations

from fuzz_harness import Target

from fuzz_targets._common import fields, text_of
from pdi.fragments.citation import check_quotation


def run(data: bytes) -> None:
    origin_b, citing_type, citing_cs, quoted_type, quoted_cs, citing, quoted = fields(data, 7)
    origin_text = text_of(origin_b)
    origin: object = int(origin_text) if origin_text.isascii() and origin_text.isdigit() else origin_text
    result = check_quotation(
        citing, text_of(citing_type), text_of(citing_cs) or None, "char", origin,
        quoted, text_of(quoted_type), text_of(quoted_cs) or None,
    )
    assert result.status in ("ok", "mismatch", "unchecked")
    if result.status == "ok":
        assert result.found == result.quote is not None


TARGET = Target(
    "citation",
    run,
    warmup=b"4\x00text/plain\x00utf-8\x00text/plain\x00utf-8\x00the quick brown fox\x00quick",
    tokens=(
        b"\x00", b"text/plain", b"text/html", b"text/xml", b"image/png", b"audio/wav", b"utf-8", b"utf-16",
        b"us-ascii", b"iso-8859-1", b"shift_jis", b"\r\n", b"\n", b"\r", b"\xef\xbb\xbf", b"\xc3\xa9", b"<p>",
    ),
    examples=0.5,
)
