"""``nameddest=`` on names beyond ASCII (RFC 8118 §3; docs/pdf-text-layer.md §3), as pdf.js's viewer finds them.

A named destination's name is a key of the ``/Names /Dests`` name tree, a *string* (ISO 32000-1 §7.9.6), or of the
catalog's old ``/Dests`` dictionary, a *name* (§12.3.2.3). pdf.js's viewer takes ``#nameddest=`` through
``URLSearchParams`` (its %-escapes read as UTF-8) and looks the result up in ``Catalog.destinations``, whose keys are
``stringToPDFString(key)``: UTF-16BE after the octets FE FF, UTF-16LE after FF FE, UTF-8 after EF BB BF, else
PDFDocEncoding (Annex D, pdf.js's ``PDFStringTranslateTable``), a name's octets read as such a string. So
``nameddest=Caf%C3%A9`` finds ``(Caf\\351)``, ``<FEFF00430061006600E9>`` and ``/Caf#E9`` alike, and a string or
name holding UTF-8 with no mark, ``/Caf#C3#A9``, is ``CafÃ©`` (its octets as PDFDocEncoding), found by
``nameddest=Caf%C3%83%C2%A9``, not by ``Caf%C3%A9``. Checked against pdf.js 6.5.438 under Node for each case here.
pdi keeps the name PDFium decodes (``FPDF_GetNamedDest``) and reads a PDI's %-escapes as UTF-8: the same names.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdf_helpers import pdf_of
from pdi.errors import NotFoundError
from pdi.fragments import evaluate
from pdi.fragments.pdf import text_layer
from pdi.identifier import Fragment

#: PDFDocEncoding where it is not Latin-1 (ISO 32000-1 Annex D, Table D.2; pdf.js's PDFStringTranslateTable)
PDFDOC = {0x18: "˘", 0x19: "ˇ", 0x1A: "ˆ", 0x1B: "˙", 0x1C: "˝", 0x1D: "˛", 0x1E: "˚", 0x1F: "˜",
          **dict(zip(range(0x80, 0x9F), "•†‡…—–ƒ⁄‹›−‰„“”‘’‚™ﬁﬂŁŒŠŸŽıłœšž", strict=True)), 0xA0: "€"}
#: Each character PDFDocEncoding writes, and its octet (not 0x7F, 0x9F, 0xAD: undefined; nor the C0 controls)
PDFDOC_OCTET = {**{chr(b): b for b in [*range(0x20, 0x7F), *range(0xA1, 0x100)] if b != 0xAD},
                **{c: b for b, c in PDFDOC.items()}}


def named_pdf(*, key: bytes | None = None, name: bytes | None = None) -> bytes:
    """One page whose destination (its line ``Middle``) is named ``key`` in the ``/Names /Dests`` tree (a string
    as written, ``(…)`` or ``<…>``) or ``name`` in the old ``/Dests`` dictionary (a name as written, ``/…``)."""
    content = b"BT /F1 24 Tf 50 700 Td (Top) Tj 0 -300 Td (Middle) Tj ET"
    catalog = b"<< /Type /Catalog /Pages 2 0 R"
    if key is not None:
        catalog += b" /Names << /Dests << /Names [" + key + b" [3 0 R /XYZ 0 420 0]] >> >>"
    if name is not None:
        catalog += b" /Dests << " + name + b" [3 0 R /XYZ 0 420 0] >>"
    return pdf_of([
        catalog + b" >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >>"
        b" /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ])


def _literal(octets: bytes) -> bytes:
    """``octets`` as a PDF literal string (§7.3.4.2), each octet but a letter or digit escaped in octal."""
    return b"(" + b"".join(bytes([o]) if chr(o).isascii() and chr(o).isalnum() else b"\\%03o" % o for o in octets) + b")"


def _escaped(name: str) -> str:
    """``name`` as a PDI writes it in ``nameddest=``: each character but an ASCII letter or digit %-escaped in UTF-8."""
    return "".join(c if c.isascii() and c.isalnum() else "".join(f"%{o:02X}" for o in c.encode()) for c in name)


def _middle(data: bytes) -> int:
    layer = text_layer(data)
    return layer.text.index("Middle")


#: How a destination is named in the PDF -> the name pdf.js's viewer finds it by, as a PDI writes it
SPELLINGS = [
    (dict(key=b"(Caf\\351)"), "Caf%C3%A9"),  # PDFDocEncoding: é is E9
    (dict(key=b"<FEFF00430061006600E9>"), "Caf%C3%A9"),  # UTF-16BE, after its mark
    (dict(key=b"<FFFE430061006600E900>"), "Caf%C3%A9"),  # UTF-16LE, after its mark (pdf.js reads it too)
    (dict(key=b"(\\357\\273\\277Caf\\303\\251)"), "Caf%C3%A9"),  # UTF-8 after its mark (ISO 32000-2 §7.9.2.2.1)
    (dict(key=b"<FEFFD83DDE00>"), "%F0%9F%98%80"),  # a character beyond the BMP: a surrogate pair
    (dict(key=b"(\\200x)"), "%E2%80%A2x"),  # PDFDocEncoding's 80 is a bullet, U+2022
    (dict(name=b"/Caf#E9"), "Caf%C3%A9"),  # an old /Dests name: its octets as PDFDocEncoding
    (dict(key=b"(Caf\\303\\251)"), "Caf%C3%83%C2%A9"),  # UTF-8 with no mark: PDFDocEncoding's Ã ©, as pdf.js
    (dict(name=b"/Caf#C3#A9"), "Caf%C3%83%C2%A9"),
]


@pytest.mark.parametrize(("written", "found_by"), SPELLINGS)
def test_a_destination_named_beyond_ascii_is_found_by_the_name_pdfjs_finds_it_by(
        written: dict[str, bytes], found_by: str) -> None:
    data = named_pdf(**written)
    fragment = Fragment.parse(f"nameddest={found_by}", format="pdf")
    assert fragment.scheme is not None
    got = evaluate(fragment.scheme, fragment.positions, data, media_type="application/pdf")
    assert got.page is not None and got.page.number == 1
    assert [(r.start, r.end) for r in got.ranges] == [(_middle(data), _middle(data))]
    if found_by == "Caf%C3%83%C2%A9":  # not by the name its octets would be in UTF-8: pdf.js's viewer finds none
        with pytest.raises(NotFoundError, match="no destination named 'Café'"):
            evaluate("nameddest", ["Café"], data, media_type="application/pdf")


@pytest.mark.parametrize(("key", "name", "not_name"), [(b"(AB\\000)", "AB\x00", "AB"),
                                                      (b"<FEFF004100000000>", "A\x00\x00", "A")])
def test_a_name_that_ends_with_nul_keeps_it(key: bytes, name: str, not_name: str) -> None:
    # pdf.js's viewer finds (AB\000) by nameddest=AB%00, not by AB (checked under Node); PDFium ends the name it
    # gives with one NUL more, its terminator, which alone is not the name's (found by a test made with pdf.js: all
    # of a name's final NULs were dropped)
    kept = text_layer(named_pdf(key=key)).destinations
    assert set(kept) == {name}
    assert not_name not in kept


@given(st.text(st.sampled_from(sorted(PDFDOC_OCTET)), min_size=1, max_size=12),
       st.text(st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\x1b"), min_size=1, max_size=12))
@settings(max_examples=60, deadline=None)
def test_any_name_pdfdocencoding_or_utf16_writes_is_the_name_nameddest_finds(latin: str, anything: str) -> None:
    """A name tree's key in PDFDocEncoding or in UTF-16BE is kept as the text it encodes (pdf.js's
    ``stringToPDFString``), and ``nameddest=`` with that text %-escaped in UTF-8 names it. Not ESC (U+001B) in
    UTF-16: PDFium drops what it takes for a language escape (ISO 32000-1 §7.9.2.2: ESC, a language code, ESC) and a
    lone ESC from a name it gives, where pdf.js keeps them in a destination's name (``keepEscapeSequence``), and
    its API gives no other (found by this test; docs/pdf-text-layer.md §3)."""
    for key, name in ((_literal(bytes(PDFDOC_OCTET[c] for c in latin)), latin),
                      (b"<FEFF" + anything.encode("utf-16-be").hex().upper().encode() + b">", anything)):
        kept = text_layer(named_pdf(key=key)).destinations
        assert set(kept) == {name}, (key, kept)
        assert Fragment.parse(f"nameddest={_escaped(name)}", format="pdf").positions == (name,)


def _spelt(name: str) -> str:
    """A named destination's name spelt in a PDI: every octet of its UTF-8 %-escaped but ASCII letters and digits
    (urllib's quote, Python's stdlib; RFC 3986's unreserved ``-._~``, which it leaves, escaped by hand: ``.`` is
    reserved in a PDI, ``~`` no urn-char)."""
    from urllib.parse import quote

    return "".join(c if c.isascii() and c.isalnum() else f"%{ord(c):02X}" if c in "-._~" else quote(c, safe="")
                   for c in name)


NAMED = "urn:pdi://example.us/2026/12/01/1.pdf.1#nameddest="
BEYOND_ASCII = st.characters(min_codepoint=0x80, exclude_categories=("Cs",))


@given(st.text(st.characters(exclude_categories=("Cs",)), max_size=8), BEYOND_ASCII,
       st.text(st.characters(exclude_categories=("Cs",)), max_size=8))
@settings(max_examples=200, deadline=None)
def test_a_character_beyond_ascii_written_as_it_is_in_nameddest_is_refused_saying_how_to_write_it(
        before: str, character: str, after: str) -> None:
    """PDI-GRAMMAR.md §1: a position is an element name, urn-chars (ASCII) %-decoded as UTF-8; so ``nameddest=Café``
    is no PDI (found by a probe, 2026-12-01: it was "character 'é' is not allowed in an element name"). The refusal
    is at the character, names a named destination and the character's UTF-8 octets %-escaped (as urllib spells
    them), and that spelling in its place is the PDI of the name meant."""
    from urllib.parse import quote

    from pdi.errors import ParseError
    from pdi.identifier import PDI

    written = NAMED + _spelt(before) + character + _spelt(after)
    with pytest.raises(ParseError) as refused:
        PDI.parse(written)
    assert refused.value.offset == len(NAMED + _spelt(before))
    assert refused.value.reason == (f"character {character!r} in a named destination (nameddest=) must be %-escaped as"
                                    f" its UTF-8 octets, {quote(character, safe='')}: a PDI is written in ASCII")
    fixed = PDI.parse(NAMED + _spelt(before) + quote(character, safe="") + _spelt(after))
    assert fixed.fragment == Fragment("nameddest", (before + character + after,))
