"""Text quotes (pdi.fragments.quote): taken out of a text and found again, W3C Web Annotation §4.2.4."""

from __future__ import annotations

import bisect
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pdi.errors import LimitError, ParseError
from pdi.fragments.quote import MAX_CONTEXT_CHARS, find_quote, text_quote


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


def test_a_context_is_read_by_its_thousand_characters_nearest_the_quote() -> None:
    """A prefix's end and a suffix's start stand beside the quote: past MAX_CONTEXT_CHARS they are not compared."""
    text = "x" + "p" * 1500 + "QUOTE" + "s" * 1000 + "!" + "QUOTE" + "s" * 999 + "?"
    found = find_quote(text, "QUOTE", suffix="s" * 1000 + "... and more that is not there")  # no prefix: it holds
    assert found is not None and (found.start, found.context) == (1501, "both")
    found = find_quote(text, "QUOTE", prefix="not there either " + "p" * 1000, suffix="s" * 999 + "!")
    assert found is not None and (found.start, found.context) == (1501, "prefix")
    assert MAX_CONTEXT_CHARS == 1000


def test_a_context_of_millions_of_characters_is_no_work_of_minutes() -> None:
    # a stranger's annotation: a suffix of 8 million characters, compared whole at each of 100,000 places, took
    # 40 s of a worker; read by its first thousand, it is a blink (the timeout is a hang's bound, not a speed)
    import subprocess
    import sys

    code = (
        "from pdi.fragments.quote import find_quote\n"
        "found = find_quote('a' * 10_000_000, 'a', prefix='b', suffix='a' * 8_000_000)\n"
        "print(found.start, found.context)\n"
    )
    said = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=15).stdout
    assert said.split() == ["0", "suffix"]


def test_errors() -> None:
    with pytest.raises(ParseError):
        find_quote("abc", "")
    with pytest.raises(ParseError):
        text_quote("abc", 2, 1)
    with pytest.raises(LimitError):
        find_quote("abc", "x" * 100_001)


_SPACED = st.text(alphabet="ab \n\t\u00a0", max_size=60)


@given(_SPACED, _SPACED)
@settings(max_examples=400, deadline=None)
def test_a_quote_is_found_read_so_block_by_block_exactly_when_the_whole_text_read_so_holds_it(
    text: str, quote: str,
) -> None:
    # the text read a block at a time (blocks of 5 characters here, so runs and quotes straddle them) holds the
    # quote exactly when the whole text, each white-space run one space, does
    import pdi.fragments.quote as module

    squeezed_quote = re.sub(r"\s+", " ", quote).strip()
    if not squeezed_quote:
        return
    whole = re.sub(r"\s+", " ", text)  # the whole text read so at once
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "_BLOCK", 5)
        assert module._squeezed_holds(text, squeezed_quote) == (squeezed_quote in whole)


def test_a_quote_nowhere_in_a_long_text_is_told_in_bounded_memory_and_time() -> None:
    # a stranger's annotation naming a quote that is nowhere in a 30 MB text once cost 2 GB and seconds a target
    import subprocess
    import sys

    code = (
        "import resource, time\n"
        "from pdi.fragments.quote import find_quote\n"
        "text = 'word ' * 6_000_000\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "for q in ['absent', 'word ' * 19000 + 'x', 'word  wordx']:\n"
        "    assert find_quote(text, q) is None\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    grown = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                               timeout=120).stdout)
    assert grown < 64 * 1024, f"{grown} KiB more for three quotes nowhere in 30 MB"  # ru_maxrss is in KiB


@given(_SPACED, st.data())
@settings(max_examples=400, deadline=None)
def test_positions_mapped_a_block_at_a_time_are_those_of_the_whole_map(text: str, data: st.DataObject) -> None:
    """The text read so, and the way back, made a block at a time (5 characters here, so that runs straddle
    blocks and whole blocks are runs), agree with the whole text read at once and the map of every character."""
    import pdi.fragments.quote as module

    whole, where = module._collapse(text)  # the whole text at once: the definition
    assert whole == re.sub(r"\s+", " ", text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "_BLOCK", 5)
        read = module._Squeezed(text)
        assert read.squeezed == whole
        for position in range(len(whole)):
            assert read.original(position) == where[position]
        near = data.draw(st.integers(0, len(text) + 2))
        assert read.squeezed_at(near) == min(bisect.bisect_left(where, near), len(whole))


def test_a_quote_found_only_read_so_in_a_long_text_is_found_in_bounded_memory() -> None:
    """Reported: a quote found only with white-space runs read as one space, in 30 MB of text, took 771 MB and 5 s:
    a map of every character. Now a block's map at a time: the text read so and little more."""
    import subprocess
    import sys

    code = (
        "import resource\n"
        "from pdi.fragments.quote import find_quote\n"
        "text = 'word ' * 6_000_000 + 'last  \\n one'\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "found = find_quote(text, 'last one', near=12)\n"
        "print(found.start, found.end, found.context, found.collapsed)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    said = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          timeout=120).stdout.split("\n")
    # after 6,000,000 words of five characters: 'last', the run of four white-space characters, 'one'
    assert said[0] == "30000000 30000011 both True"
    grown = int(said[1])
    assert grown < 96 * 1024, f"{grown} KiB more to find it"  # the text read so (30 MB) and a block's map


def _one_space(text: str) -> str:
    """Each run of white space (``str.isspace``) as one space: a rendered page's reading of the text."""
    out: list[str] = []
    for c in text:
        if not c.isspace():
            out.append(c)
        elif not out or not out[-1].isspace():
            out.append(" ")
    return "".join(out)


_WORDS = st.text(alphabet="ab \n\t\u00a0\x1c\u2028", max_size=40)


@given(_WORDS, _WORDS.filter(lambda t: t.strip() != ""), _WORDS, _WORDS)
@example("q cd  ef\nab cd  ef", "cd ef", "ab ", "")  # the prefix of the second place, its space kept
@example("cd  ef x\ncd  ef y", "cd ef", "", " y")
@example("q cd  ef\nab cd  ef", " cd ef", "ab", "")  # the space between them is the quote's own
@example("cd  ef", " cd ef", "", "")  # no prefix given: none disagrees, at the text's start too
def test_a_quote_is_found_where_its_context_agrees_read_as_written_or_one_space_a_run(
    text: str, exact: str, prefix: str, suffix: str,
) -> None:
    """W3C Web Annotation §4.2.4 read as find_quote's docstring says: of the places the quote stands, one with both
    its prefix right before it and its suffix right after it, else one of them, else neither, the first of equals;
    when the quote stands nowhere as written, the same with text, quote, prefix and suffix each read with a white
    space run as one space, and the quote's own white space at its ends read as the prefix's end and the suffix's
    start (a prefix taken from a page ends in the space before the quote's first word); a prefix or suffix not
    given agrees wherever the quote stands."""
    if exact in text:
        t, q, p, s = text, exact, prefix, suffix
    else:
        t, squeezed = _one_space(text), _one_space(exact)
        q = squeezed.strip()
        p = _one_space(prefix + squeezed[: len(squeezed) - len(squeezed.lstrip())]) if prefix else ""
        s = _one_space(squeezed[len(squeezed.rstrip()):] + suffix) if suffix else ""
    places = [at for at in range(len(t)) if t.startswith(q, at)]
    found = find_quote(text, exact, prefix, suffix)
    if not places:
        assert found is None
        return
    agree = {at: (t.endswith(p, 0, at), t.startswith(s, at + len(q))) for at in places}
    best = min(places, key=lambda at: (-sum(agree[at]), at))
    assert found is not None and found.collapsed == (exact not in text)
    at = found.start if exact in text else len(_one_space(text[: found.start]))
    assert at == best, (at, best)
    assert _one_space(text[found.start:found.end]) == (q if found.collapsed else _one_space(exact))
    names = {(True, True): "both", (True, False): "prefix", (False, True): "suffix", (False, False): "none"}
    assert found.context == names[agree[best]]
