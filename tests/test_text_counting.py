"""The fast block counter of cold queries (``pdi.fragments.text.counting``) against a slow reference.

The reference decodes each block and walks it one code point at a time,
reading RFC 5147 §4.1 literally: CR+LF and CR+NEL are one line ending and one
character, a lone CR, LF or NEL is one. The fast path counts octets with numpy
masks, skips the CR and NEL passes when ``find`` says those octets are absent,
pads masks to whole rows and splits batches between threads; the tests cut
random texts into random blocks (line endings and multi-octet characters right
at the cuts), count them with every number of threads and through every kind
of buffer, and compare.
"""

from __future__ import annotations

import mmap
from itertools import pairwise
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.fragments.text import TextIndex
from pdi.fragments.text.charset import encoding_for
from pdi.fragments.text.counting import BlockCounter, BlockCounts, count_blocks

ENDINGS = ("\r\n", "\r\x85", "\r", "\n", "\x85")

#: charset -> characters it can write (line-ending characters included where the charset has them)
ALPHABETS = {
    # U+0100 is C4 80, U+00C2 is C3 82, U+0145 is C5 85: octets like the NEL's C2 85 that are not a NEL
    "utf-8": "ab \r\n\x85é€😀\u0100\u00c2\u0145",
    "iso-8859-1": "ab \r\n\x85éÂ",
    "cp037": "ab \r\n\x85é",  # EBCDIC: LF is 25, NEL is 15
    "us-ascii": "ab \r\n",
}


def ref_counts(text: str) -> BlockCounts:
    """Code points, RFC 5147 characters, line endings, CRLF-canonical, by a plain walk over the code points."""
    endings = two = 0
    canonical = True
    i = 0
    while i < len(text):
        if text[i] == "\r" and i + 1 < len(text) and text[i + 1] in "\n\x85":
            endings += 1
            two += 1
            canonical = canonical and text[i + 1] == "\n"
            i += 2
            continue
        if text[i] in "\r\n\x85":
            endings += 1
            canonical = False
        i += 1
    return BlockCounts(len(text), len(text) - two, endings, canonical)


@st.composite
def blocked_texts(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A charset and a text cut into blocks, each block a list of units (characters or two-part line endings)."""
    charset = draw(st.sampled_from(sorted(ALPHABETS)))
    alphabet = ALPHABETS[charset]
    unit = st.one_of(st.sampled_from(alphabet), st.sampled_from([e for e in ENDINGS if set(e) <= set(alphabet)]))
    blocks = draw(st.lists(st.lists(unit, max_size=40).map("".join), min_size=1, max_size=12))
    return charset, blocks


def _cuts(charset: str, blocks: list[str], start: int = 0) -> tuple[bytes, list[int]]:
    cuts = [start]
    for block in blocks:
        cuts.append(cuts[-1] + len(block.encode(charset)))
    return b"".join(block.encode(charset) for block in blocks), cuts


@settings(max_examples=400, deadline=None)
@given(blocked_texts(), st.integers(0, 4), st.sampled_from(["bytes", "bytearray", "memoryview"]), st.integers(0, 3))
def test_counting_blocks_matches_the_reference(
    entity: tuple[str, list[str]], workers: int, kind: str, lead: int
) -> None:
    charset, blocks = entity
    body, cuts = _cuts(charset, blocks, lead)
    raw = b"x" * lead + body  # blocks need not start at offset 0 of the buffer
    buf: bytes | bytearray | memoryview = {"bytes": raw, "bytearray": bytearray(raw), "memoryview": memoryview(raw)}[
        kind
    ]
    encoding = encoding_for(charset, b"")
    capacity = max([b - a for a, b in pairwise(cuts)] + [1])
    got = count_blocks([BlockCounter(buf, encoding, capacity) for _ in range(workers + 1)], cuts)
    assert got == [ref_counts(block) for block in blocks]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["a", "é", "€", "\r\n", "\r", "\n", "\x85", "\r\x85"]), max_size=3000).map("".join))
def test_counting_one_block_over_many_rows(text: str) -> None:
    """Blocks of several 1024-octet mask rows, padded, reused for a shorter block afterwards."""
    data = text.encode("utf-8")
    counter = BlockCounter(data, encoding_for("utf-8", b""), max(1, len(data)))
    assert counter.count(0, len(data)) == ref_counts(text)
    half = len(text) // 2
    assert counter.count(0, len(text[:half].encode())) == ref_counts(text[:half])
    assert counter.count(0, len(data)) == ref_counts(text)


def test_counting_ending_pairs_right_at_the_cuts() -> None:
    # line endings and multi-octet characters at both edges of the blocks; no pair is split
    blocks = ["ab\r\n", "\r\x85", "\nx\r", "y\x85\r\n", "é\r", "€\n"]
    data, cuts = _cuts("utf-8", blocks)
    enc = encoding_for("utf-8", b"")
    for workers in range(4):
        counts = count_blocks([BlockCounter(data, enc, 8) for _ in range(workers + 1)], cuts)
        assert counts == [
            BlockCounts(4, 3, 1, True),  # a b CRLF
            BlockCounts(2, 1, 1, False),  # CR+NEL
            BlockCounts(3, 3, 2, False),  # LF x CR
            BlockCounts(4, 3, 2, False),  # y NEL CRLF
            BlockCounts(2, 2, 1, False),  # é CR
            BlockCounts(2, 2, 1, False),  # € LF
        ]
        # a b CRLF CRNEL LF x CR y NEL CRLF é CR € LF: 14 characters, 8 line endings
        assert sum(c.chars for c in counts) == 14
        assert sum(c.endings for c in counts) == 8


def test_counting_canonical_blocks() -> None:
    enc = encoding_for("utf-8", b"")
    for text, canonical in [
        ("a\r\nŅ\r\n", True),  # an 85 octet (C5 85) but no NEL
        ("a\r\n\r\x85", False),  # every ending a pair, one of them CR+NEL
        ("\r\n\x85", False),
        ("abc", True),  # no line ending at all
        ("", True),
    ]:
        data = text.encode()
        counts = count_blocks([BlockCounter(data, enc, max(1, len(data)))], [0, len(data)])
        assert counts == [ref_counts(text)]
        assert counts[0].canonical is canonical


def test_counting_through_a_memory_map(tmp_path: Path) -> None:
    text = ("Grüße\r\nnaïve\rcafé\x85日本語\n" * 500) + "end"
    path = tmp_path / "t.txt"
    path.write_bytes(text.encode("utf-8"))
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        index = TextIndex(mapped, "utf-8", block_size=64)
        assert index.char_count == ref_counts(text).chars
        assert index.ending_count == ref_counts(text).endings
        assert not index.is_crlf_canonical()
        del index


@settings(max_examples=150, deadline=None)
@given(blocked_texts(), st.sampled_from([16, 17, 23, 64]), st.data())
def test_counting_index_over_many_batches(entity: tuple[str, list[str]], block: int, data: st.DataObject) -> None:
    """A text of many small blocks: batches grow and are split between threads; totals and positions stay exact."""
    charset, blocks = entity
    text = "".join(blocks) * 8
    raw = text.encode(charset)
    index = TextIndex(raw, charset, block_size=block)
    ref = ref_counts(text)
    probe = data.draw(st.integers(0, ref.chars))
    # a cold query first (counts only as far as it needs), then the totals
    cp, clamped = index.char_to_cp(probe)
    assert not clamped
    assert index.char_count == ref.chars
    assert index.cp_count == ref.cps
    assert index.ending_count == ref.endings
    assert index.is_crlf_canonical() == ref.canonical
    assert ref_counts(text[:cp]).chars == probe
    assert text[max(0, cp - 1) : cp + 1] not in ("\r\n", "\r\x85")  # never between the two halves of an ending
