""":func:`pdi.fragments.text.lines.to_crlf` (RFC 5147 §4.1 line endings written CR LF) against an independent reading
of the endings, a character at a time, and in memory near the text's size."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pdi.fragments.text.lines import to_crlf


def _by_hand(text: str) -> str:
    """RFC 5147 §4.1: CR LF, CR NEL, CR, LF and NEL are each one line ending; each written CR LF."""
    out, at = [], 0
    while at < len(text):
        c = text[at]
        if c == "\r" and text[at + 1 : at + 2] in ("\n", "\x85"):
            out.append("\r\n")
            at += 2
        elif c in "\r\n\x85":
            out.append("\r\n")
            at += 1
        else:
            out.append(c)
            at += 1
    return "".join(out)


@given(st.lists(st.sampled_from(["a", "\r", "\n", "\x85", "é", "\u2028", "\r\n", "\r\x85", "\n\r"])).map("".join))
def test_rfc5147_4_1_every_line_ending_one_crlf_as_read_a_character_at_a_time(text: str) -> None:
    assert to_crlf(text) == _by_hand(text)


def test_rfc5147_4_1_the_endings_next_to_each_other() -> None:
    assert to_crlf("a\r\r\nb\r\r\x85c\r\n\x85d\n\re\x85\rf") == "a\r\n\r\nb\r\n\r\nc\r\n\r\nd\r\n\r\ne\r\n\r\nf"


def test_a_text_of_millions_of_short_lines_costs_no_list_of_its_pieces() -> None:
    """8 MiB of ``a`` LF: its CR LF text (24 MiB) and no more; ``re.sub`` kept a list of 16 million pieces (128 MiB)."""
    import tracemalloc

    text = "a\n" * (4 << 20)
    tracemalloc.start()
    try:
        made = to_crlf(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert made == "a\r\n" * (4 << 20)
    assert peak < 2 * len(made), f"{peak:,} octets traced for a text of {len(made):,}"
