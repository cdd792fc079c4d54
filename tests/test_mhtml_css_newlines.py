"""CSS references read the same whichever newline a style sheet is written with.

CSS Syntax 3 §3.3 (preprocessing the input stream): each CR LF pair, each CR and each FF becomes one LF before
anything is read. So a style sheet written with CR LF, CR or FF line ends says what the same sheet with LF says:
an escape's hex digits take one white space after them, CR LF included (§4.3.7), a backslash before a newline in
a string continues it (§4.3.5), and an unescaped newline ends a string whichever it is. The property swaps every
LF of a generated sheet for each of the others and compares the references' values (their own newlines read as
§3.3 reads them).
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pdi.mhtml import css_references

PIECES = ["url(", '"', "'", ")", "\\", "\\41", "41", " ", "\n", "a", "b", "@import ", ";", "image-set(", "/*",
          "*/", ",", "2x"]
SHEETS = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)


def _as_read(value: str) -> str:
    """A value's newlines as §3.3 reads them."""
    return re.sub(r"\r\n|[\r\f]", "\n", value)


@given(SHEETS, st.sampled_from(["\r\n", "\r", "\f"]))
def test_a_sheets_references_do_not_depend_on_its_newlines(sheet: str, newline: str) -> None:
    with_lf = [(_as_read(r.url), r.kind) for r in css_references(sheet)]
    other = [(_as_read(r.url), r.kind) for r in css_references(sheet.replace("\n", newline))]
    assert other == with_lf


def test_an_escapes_white_space_may_be_cr_lf() -> None:
    """``\\41`` then one white space is ``A`` (§4.3.7); CR LF is one white space once read (§3.3)."""
    for newline in ("\n", "\r\n", " "):
        sheet = f'a {{ background: url("x\\41{newline}y.png") }}'
        assert [r.url for r in css_references(sheet)] == ["xAy.png"], repr(newline)


def test_a_backslash_before_cr_lf_continues_a_string() -> None:
    """§4.3.5: a backslash before a newline in a string is nothing, the string goes on (CR LF one newline)."""
    for newline in ("\n", "\r\n", "\r", "\f"):
        sheet = f'@import "sheets/a\\{newline}b.css";'
        assert [r.url for r in css_references(sheet)] == ["sheets/ab.css"], repr(newline)
