""":func:`pdi.passages.fulltext.spaced`: what it writes (a separator beside each character of a script written without
spaces, none before a combining mark), and what that costs on a long text of such a script."""

from __future__ import annotations

import re
import time
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


def test_spacing_a_chinese_text_costs_little_more_than_finding_where_its_characters_stand() -> None:
    # found in review, 2026-11-27: one pattern asking the mark class at every position made spacing a Chinese text
    # four times the cost of the substitution that finds the places beside its characters (6.6 s for 20 MB)
    text = "大门天安门广场，北京大学。" * 60_000
    ranges = "".join(f"{chr(a)}-{chr(b)}" for a, b in UNSPACED_RANGES)
    beside = re.compile(f"(?<=[{ranges}])|(?=[{ranges}])")

    def best(work: object) -> float:
        times = []
        for _ in range(5):  # the least of five: a machine shared with others
            began = time.perf_counter()
            work()  # type: ignore[operator]
            times.append(time.perf_counter() - began)
        return min(times)

    ratio = best(lambda: spaced(text)) / best(lambda: beside.sub(SPACER, text))
    assert ratio < 3, ratio
