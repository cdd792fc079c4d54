"""What pdi quotes of a stranger's text in an error or a log line (:func:`pdi._wording.clipped`): escaped as
:func:`pdi._wording.printable` shows it, and cut in its middle when long, its start and its end kept and the
count of what was left out said between them."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from pdi._wording import clipped, printable

#: Unicode's Bidi_Control property (PropList.txt, Unicode 15): ALM, LRM, RLM, LRE…RLO, LRI…PDI.
BIDI_CONTROL = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: The marker between the start and the end kept: the count of the characters left out, with thousands' commas.
MARKER = re.compile(r"…\[(\d{1,3}(?:,\d{3})*) characters? left out\]…")


def drives_a_terminal(ch: str) -> bool:
    """A control (C0, DEL, C1), a line or paragraph separator, a bidirectional control or a lone surrogate."""
    return unicodedata.category(ch) in ("Cc", "Zl", "Zp", "Cs") or ch in BIDI_CONTROL


def test_a_long_text_keeps_a_hundred_characters_each_side_and_counts_the_rest() -> None:
    # 120,000 characters, 200 shown: 100 from the start, 100 from the end, 119,800 left out
    assert clipped("s" + "x" * 119_998 + "e") == "s" + "x" * 99 + "…[119,800 characters left out]…" + "x" * 99 + "e"


def test_an_escape_counts_as_the_characters_it_shows_as() -> None:
    # 10 shown each side: ESC [ 2 J shows as \x1b[2J (7), then 3 a's; the end: 4 a's and RLO, shown as \u202e (6)
    text = "\x1b[2J" + "a" * 1000 + "\u202e"
    assert clipped(text, 20) == "\\x1b[2Jaaa…[993 characters left out]…aaaa\\u202e"


def test_a_short_text_is_only_escaped() -> None:
    assert clipped("evil\x1b]0;x\x07") == "evil\\x1b]0;x\\x07"
    assert clipped("x" * 200) == "x" * 200


def test_a_text_short_in_characters_but_long_escaped_is_cut_too() -> None:
    # 100 ESCs show as 400 characters: more than 200
    assert clipped("\x1b" * 100) == "\\x1b" * 25 + "…[50 characters left out]…" + "\\x1b" * 25


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=600),
       st.integers(min_value=2, max_value=300))
def test_what_is_quoted_is_bounded_printable_and_the_inputs_start_and_end(text: str, most: int) -> None:
    shown = clipped(text, most)
    assert not any(drives_a_terminal(ch) for ch in shown)
    shown.encode("utf-8")  # a lone surrogate is escaped: the line can be written
    whole = printable(text)
    if len(whole) <= most:
        assert shown == whole
        return
    cut = MARKER.search(shown)
    assert cut is not None, shown
    head, tail, left_out = shown[:cut.start()], shown[cut.end():], int(cut.group(1).replace(",", ""))
    assert len(head) + len(tail) <= most
    # each side fills its half but for less than one escape (\uXXXX, six characters)
    assert len(head) > most - most // 2 - 6 and len(tail) > most // 2 - 6
    assert 0 < left_out <= len(text)
    if most >= 12:  # each half holds one escape at least (six characters): something of the input is shown
        assert left_out < len(text)
    # the start and the end of the input, escaped, with exactly the count said between them
    assert any(printable(text[:k]) == head and printable(text[k + left_out:]) == tail
               for k in range(len(text) - left_out + 1))
