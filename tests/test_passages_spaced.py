""":func:`pdi.passages.fulltext.spaced`: what it writes (a separator beside each character of a script written without
spaces, none before a combining mark). What it costs is measured by the benchmarks (bench/bench_index.py), not here."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from pdi.passages.fulltext import SPACER, UNSPACED_RANGES, spaced


def _unspaced(ch: str) -> bool:
    return any(first <= ord(ch) <= last for first, last in UNSPACED_RANGES)


def _mark(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "M"


def _by_position(text: str) -> str:
    """The rule, position by position: a separator where a character before or after it is one of those
    scripts', unless the character after it is a combining mark."""
    if not any(_unspaced(ch) for ch in text):
        return text
    out = []
    for i in range(len(text) + 1):
        before = i > 0 and _unspaced(text[i - 1])
        after = i < len(text) and _unspaced(text[i])
        if (before or after) and not (i < len(text) and _mark(text[i])):
            out.append(SPACER)
        if i < len(text):
            out.append(text[i])
    return "".join(out)


_CHARS = st.sampled_from([*"กิ่นข้าวแ大门天かっ a。\n", "\u3099", "\u0301", "\u0e31", "\u302a", "\U00020000", "\u1780",
                          "\u17b6", "\u0947", "\ufe0f"])


@given(st.lists(_CHARS, max_size=16).map("".join))
def test_spaced_puts_a_separator_beside_each_unspaced_character_but_not_before_a_mark(text: str) -> None:
    assert spaced(text) == _by_position(text)
