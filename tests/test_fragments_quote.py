"""Text quotes (pdi.fragments.quote): taken out of a text and found again, W3C Web Annotation §4.2.4."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.errors import LimitError, ParseError
from pdi.fragments.quote import find_quote, text_quote


@given(st.text(alphabet="ab c\n", min_size=1, max_size=80), st.data())
@settings(max_examples=400, deadline=None)
def test_a_quote_taken_out_is_found_again_where_it_was(text: str, data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(text) - 1))
    j = data.draw(st.integers(i + 1, len(text)))
    context = data.draw(st.integers(0, 8))
    quote = text_quote(text, i, j, context=context)
    assert (quote.prefix + quote.exact + quote.suffix) in text
    found = find_quote(text, quote.exact, quote.prefix, quote.suffix, near=i)
    assert found is not None
    assert (found.start, found.end, found.context, found.collapsed) == (i, j, "both", False)
    # without the position: some place whose context agrees as well, holding the same words
    anywhere = find_quote(text, quote.exact, quote.prefix, quote.suffix)
    assert anywhere is not None and anywhere.context == "both"
    assert text[anywhere.start - len(quote.prefix) : anywhere.end + len(quote.suffix)] == (
        quote.prefix + quote.exact + quote.suffix
    )


def test_context_chooses_among_places_and_the_position_breaks_ties() -> None:
    text = "the cat sat. the cat ran. the cat sat."
    assert find_quote(text, "cat", "the ", " ran") == find_quote(text, "cat", near=17)
    found = find_quote(text, "cat", "the ", " sat", near=30)
    assert found is not None and (found.start, found.context) == (30, "both")
    found = find_quote(text, "cat", "a ", " flew")
    assert found is not None and (found.start, found.context) == (4, "none")


def test_errors() -> None:
    with pytest.raises(ParseError):
        find_quote("abc", "")
    with pytest.raises(ParseError):
        text_quote("abc", 2, 1)
    with pytest.raises(LimitError):
        find_quote("abc", "x" * 100_001)
