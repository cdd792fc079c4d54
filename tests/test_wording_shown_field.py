"""A request header field as an answer quotes it (:func:`pdi._wording.shown_field`): as its client wrote it.

Starlette reads a field's octets as Latin-1, so the UTF-8 ``é`` a client sends (``C3 A9``) is the text ``Ã©`` to
the server; quoted as it is, a detail said ``Accept-Datetime 'Ã©' is not an RFC 1123 date``. The expected values
are worked out by hand from the octets, or are Python's own ``repr`` of the text the client encoded.
"""

from __future__ import annotations

import ast
import re

from hypothesis import given
from hypothesis import strategies as st

from pdi._wording import shown_field

#: Text a client may write in a field: any character but a lone surrogate (which UTF-8 cannot encode).
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=100)


def _as_starlette_reads(text: str) -> str:
    """``text`` sent in UTF-8 and read back as Starlette reads a field: its octets as Latin-1."""
    return text.encode("utf-8").decode("latin-1")


def test_a_utf8_field_is_quoted_as_written() -> None:
    assert _as_starlette_reads("é") == "Ã©"
    assert shown_field("Ã©") == "'é'"
    assert shown_field(b"\xc3\xa9") == "'é'"
    assert shown_field(_as_starlette_reads("Donnerstag, 31 Mai 2007 — 20:35")) == "'Donnerstag, 31 Mai 2007 — 20:35'"


def test_octets_utf8_does_not_read_are_shown_as_hex_escapes() -> None:
    # FF is never UTF-8; C3 alone is a sequence cut short; E9 is é in Latin-1, not in UTF-8
    assert shown_field(b"Thu\xff") == r"'Thu\xff'"
    assert shown_field("caf\xe9") == r"'caf\xe9'"  # the Latin-1 reading of the octets 63 61 66 E9
    assert shown_field(b"\xc3") == r"'\xc3'"


def test_what_would_drive_a_terminal_is_escaped_and_a_written_backslash_kept() -> None:
    assert shown_field(b"a\x1b[2Jb\r\n") == r"'a\x1b[2Jb\r\n'"
    assert shown_field(b"\\udc80 and \\xff") == r"'\\udc80 and \\xff'"  # written by the client: not an octet
    assert shown_field(_as_starlette_reads("a\u202eb")) == r"'a\u202eb'"  # right-to-left override


def test_a_long_field_is_cut_after_its_most_characters() -> None:
    assert shown_field("x" * 150) == "'" + "x" * 100 + "'…"
    assert shown_field(_as_starlette_reads("é" * 50), most=40) == "'" + "é" * 40 + "'…"  # characters, not octets
    assert shown_field("x" * 100) == "'" + "x" * 100 + "'"


def test_text_past_latin1_is_quoted_as_it_is() -> None:
    assert shown_field("Ωmega") == "'Ωmega'"


@given(_TEXT)
def test_any_text_sent_in_utf8_is_quoted_as_a_python_literal_of_it_on_one_line(text: str) -> None:
    shown = shown_field(_as_starlette_reads(text))
    assert ast.literal_eval(shown) == text
    assert shown.isprintable()  # one line, nothing that drives a terminal
    if text.isprintable() and "\\" not in text and "'" not in text:
        assert shown == f"'{text}'"  # written as it is


def test_a_character_of_latin1_is_told_apart_from_an_octet() -> None:
    # U+0085 (NEL) sent in UTF-8 is C2 85; the octet 85 alone is no UTF-8
    assert shown_field(b"\xc2\x85") == r"'\u0085'"
    assert shown_field(b"\x85") == r"'\x85'"


@given(st.binary(max_size=300))
def test_octets_and_their_latin1_reading_are_quoted_alike(octets: bytes) -> None:
    assert shown_field(octets) == shown_field(octets.decode("latin-1"))


@given(st.binary(max_size=100).filter(lambda b: b"\\" not in b))
def test_each_octet_is_shown_once_in_its_place(octets: bytes) -> None:
    # read back: each \xNN the octet NN; every other character its UTF-8 (the literal's escapes undone by eval)
    shown = shown_field(octets)
    marked = re.sub(r"\\x([0-9a-f]{2})", lambda m: "\\udc" + m[1] if int(m[1], 16) >= 0x80 else m[0], shown)
    assert ast.literal_eval(marked).encode("utf-8", "surrogateescape") == octets
