"""The fast block counter of cold queries (``pdi.fragments.text.counting``) against a slow reference.

The reference decodes each block and walks it one code point at a time,
reading RFC 5147 §4.1 literally: CR+LF and CR+NEL are one line ending and one
character, a lone CR, LF or NEL is one. Both engines are tested: the compiled
one-pass counter (``_count.c``: 32-octet vector steps, 8-bit lane counters
added up every 255 steps, a scalar tail) and the numpy passes (masks padded to
whole rows, CR and NEL passes skipped when ``find`` says those octets are
absent). The tests cut random texts into random blocks (line endings and
multi-octet characters right at the cuts), count them with every number of
threads and through every kind of buffer, and compare; the compiled kernel is
also compared, octet by octet, with a plain count over long random ranges.
"""

from __future__ import annotations

import mmap
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.errors import UnsupportedError
from pdi.fragments.text import TextIndex, counting
from pdi.fragments.text.charset import encoding_for
from pdi.fragments.text.counting import BlockCounter, BlockCounts, count_blocks, resolve_engine

#: both engines, in every test that counts
engines = pytest.mark.parametrize("engine", ["compiled", "numpy"])

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


@engines
@settings(max_examples=400, deadline=None)
@given(blocked_texts(), st.integers(0, 4), st.sampled_from(["bytes", "bytearray", "memoryview"]), st.integers(0, 3))
def test_counting_blocks_matches_the_reference(
    engine: str, entity: tuple[str, list[str]], workers: int, kind: str, lead: int
) -> None:
    charset, blocks = entity
    body, cuts = _cuts(charset, blocks, lead)
    raw = b"x" * lead + body  # blocks need not start at offset 0 of the buffer
    buf: bytes | bytearray | memoryview = {"bytes": raw, "bytearray": bytearray(raw), "memoryview": memoryview(raw)}[
        kind
    ]
    encoding = encoding_for(charset, b"")
    capacity = max([b - a for a, b in pairwise(cuts)] + [1])
    got = count_blocks([BlockCounter(buf, encoding, capacity, engine) for _ in range(workers + 1)], cuts)
    assert got == [ref_counts(block) for block in blocks]


@engines
@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["a", "é", "€", "\r\n", "\r", "\n", "\x85", "\r\x85"]), max_size=3000).map("".join))
def test_counting_one_block_over_many_rows(engine: str, text: str) -> None:
    """Blocks of several 1024-octet mask rows, padded, reused for a shorter block afterwards."""
    data = text.encode("utf-8")
    counter = BlockCounter(data, encoding_for("utf-8", b""), max(1, len(data)), engine)
    assert counter.count(0, len(data)) == ref_counts(text)
    half = len(text) // 2
    assert counter.count(0, len(text[:half].encode())) == ref_counts(text[:half])
    assert counter.count(0, len(data)) == ref_counts(text)


@engines
def test_counting_ending_pairs_right_at_the_cuts(engine: str) -> None:
    # line endings and multi-octet characters at both edges of the blocks; no pair is split
    blocks = ["ab\r\n", "\r\x85", "\nx\r", "y\x85\r\n", "é\r", "€\n"]
    data, cuts = _cuts("utf-8", blocks)
    enc = encoding_for("utf-8", b"")
    for workers in range(4):
        counts = count_blocks([BlockCounter(data, enc, 8, engine) for _ in range(workers + 1)], cuts)
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


@engines
def test_counting_canonical_blocks(engine: str) -> None:
    enc = encoding_for("utf-8", b"")
    for text, canonical in [
        ("a\r\nŅ\r\n", True),  # an 85 octet (C5 85) but no NEL
        ("a\r\n\r\x85", False),  # every ending a pair, one of them CR+NEL
        ("\r\n\x85", False),
        ("abc", True),  # no line ending at all
        ("", True),
    ]:
        data = text.encode()
        counts = count_blocks([BlockCounter(data, enc, max(1, len(data)), engine)], [0, len(data)])
        assert counts == [ref_counts(text)]
        assert counts[0].canonical is canonical


@engines
def test_counting_through_a_memory_map(tmp_path: Path, engine: str) -> None:
    text = ("Grüße\r\nnaïve\rcafé\x85日本語\n" * 500) + "end"
    path = tmp_path / "t.txt"
    path.write_bytes(text.encode("utf-8"))
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        index = TextIndex(mapped, "utf-8", block_size=64, engine=engine)
        assert index.char_count == ref_counts(text).chars
        assert index.ending_count == ref_counts(text).endings
        assert not index.is_crlf_canonical()
        del index


@engines
@settings(max_examples=150, deadline=None)
@given(blocked_texts(), st.sampled_from([16, 17, 23, 64]), st.data())
def test_counting_index_over_many_batches(
    engine: str, entity: tuple[str, list[str]], block: int, data: st.DataObject
) -> None:
    """A text of many small blocks: batches grow and are split between threads; totals and positions stay exact."""
    charset, blocks = entity
    text = "".join(blocks) * 8
    raw = text.encode(charset)
    index = TextIndex(raw, charset, block_size=block, engine=engine)
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


def plain_octet_counts(data: bytes, utf8: bool, lf: int, cr: int, nel: bytes) -> tuple[int, ...]:
    """Continuation octets, LF, CR, NEL, CR+LF, CR+NEL in ``data``, one octet at a time, looking at nothing outside it."""
    cont = lfs = crs = nels = crlf = crnel = 0
    for i, octet in enumerate(data):
        cont += utf8 and 0x80 <= octet < 0xC0
        lfs += octet == lf
        crs += octet == cr
        nels += bool(nel) and data.startswith(nel, i)
        if octet == cr:
            crlf += data.startswith(bytes([lf]), i + 1)
            crnel += bool(nel) and data.startswith(nel, i + 1)
    return cont, lfs, crs, nels, crlf, crnel


#: octets that matter (CR, LF, C2 85, continuation octets, EBCDIC's 25 and 15) and some that do not
_OCTETS = st.sampled_from([0x0A, 0x0D, 0xC2, 0x85, 0x80, 0xBF, 0xC0, 0x25, 0x15, 0x41, 0x00, 0xFF])


@st.composite
def octet_strings(draw: st.DrawFn) -> bytes:
    """Up to 20 000 octets, the length drawn first (a list strategy alone stays short), mostly ones that matter."""
    n = draw(st.one_of(st.integers(0, 600), st.integers(8_000, 20_000)))  # the long ones pass 255 vector steps
    rng = draw(st.randoms(use_true_random=True))  # seeded by one draw: long strings stay cheap to generate
    pool = [0x0A, 0x0D, 0xC2, 0x85, 0x80, 0xBF, 0xC0, 0x25, 0x15, 0x41, 0x00, 0xFF]
    return bytes(rng.choice(pool) if rng.random() < 0.8 else rng.randrange(256) for _ in range(n))


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(octet_strings(), st.lists(st.one_of(_OCTETS, st.integers(0, 255)), max_size=60).map(bytes)),
    st.data(),
    st.sampled_from([(True, 0x0A, 0x0D, b"\xc2\x85"), (False, 0x0A, 0x0D, b"\x85"), (False, 0x25, 0x0D, b"\x15"),
                     (False, 0x0A, 0x0D, b"")]),
)
def test_compiled_kernel_matches_a_plain_count(
    data: bytes, draw: st.DataObject, charset: tuple[bool, int, int, bytes]
) -> None:
    """Any range of any octets, long enough for 255 vector steps (8 160 octets) and the scalar tail, and short ones."""
    from pdi.fragments.text import _count

    a = draw.draw(st.integers(0, len(data)))
    b = draw.draw(st.integers(a, len(data)))
    utf8, lf, cr, nel = charset
    assert _count.count(data, a, b, utf8, lf, cr, nel) == plain_octet_counts(data[a:b], utf8, lf, cr, nel)


def test_compiled_kernel_counts_past_255_steps_per_lane() -> None:
    """Every octet of a long run is the same feature: each 8-bit lane reaches 255 and is added up, never wraps."""
    from pdi.fragments.text import _count

    for n in (32 * 255 + 34, 32 * 255 * 3 + 1, 100_003):
        assert _count.count(b"\r\n" * n, 0, 2 * n, True, 10, 13, b"\xc2\x85") == (0, n, n, 0, n, 0)
        assert _count.count(b"\x80" * n, 0, n, True, 10, 13, b"\xc2\x85") == (n, 0, 0, 0, 0, 0)
        assert _count.count(b"\r\xc2\x85" * n, 0, 3 * n, True, 10, 13, b"\xc2\x85") == (n, 0, n, n, 0, n)


def test_compiled_kernel_rejects_ranges_outside_the_buffer() -> None:
    from pdi.fragments.text import _count

    for a, b in ((-1, 2), (2, 1), (0, 5)):
        with pytest.raises(ValueError, match="not within the 4 octets"):
            _count.count(b"abcd", a, b, True, 10, 13, b"")


def test_the_compiled_counter_is_built() -> None:
    """``pip install`` builds ``_count`` where there is a C compiler (every machine ``scripts/bootstrap`` sets up)."""
    assert counting.COMPILED
    assert resolve_engine("auto") == "compiled"


def test_counting_engines_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PDI_TEXT_COUNTER", "numpy")
    assert resolve_engine("auto") == "numpy"
    assert resolve_engine("compiled") == "compiled"
    with pytest.raises(ValueError, match="unknown counting engine 'fast'"):
        resolve_engine("fast")
    monkeypatch.setenv("PDI_TEXT_COUNTER", "compiled")
    assert resolve_engine("auto") == "compiled"
    monkeypatch.setenv("PDI_TEXT_COUNTER", "numppy")
    with pytest.raises(UnsupportedError, match="PDI_TEXT_COUNTER='numppy'"):
        resolve_engine("auto")
    monkeypatch.setenv("PDI_TEXT_COUNTER", "numpy")
    monkeypatch.setattr(counting, "COMPILED", False)
    with pytest.raises(UnsupportedError, match="was not built"):
        resolve_engine("compiled")
    monkeypatch.delenv("PDI_TEXT_COUNTER")
    assert resolve_engine("auto") == "numpy"


_STATEFUL_OR_MULTIBYTE = ("shift_jis", "euc-jp", "iso-2022-jp", "gb18030", "big5", "euc-kr", "utf-7")
_CJK_TEXT = st.text(st.sampled_from("ab \n日本語のテキスト、。한국어中文字+-/"), max_size=60)


def _smallest_prefix(data: bytes, codec: str, cps: int) -> int:
    """The reference: the fewest octets whose incremental decoding gives ``cps`` code points, found by decoding
    each prefix in turn from the start with a new decoder (every n, no search, no state kept)."""
    import codecs

    for n in range(len(data) + 1):
        if len(codecs.getincrementaldecoder(codec)("strict").decode(data[:n], False)) >= cps:
            return n
    return len(data)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(_STATEFUL_OR_MULTIBYTE), _CJK_TEXT, st.integers(1, 9), st.data())
def test_a_general_charsets_octet_offset_is_the_reference_prefixs_from_any_mark(
        charset: str, text: str, mark: int, data: st.DataObject) -> None:
    """A code point's octet offset in a charset decoded whole (Shift_JIS, ISO-2022-JP …) is found by a search from
    marks of the decoder's state a few octets apart (``_MARK_OCTETS``, here 1 to 9), not by decoding from the start
    each step (a query on 10 MB of Shift_JIS took 1.5 s): the same offset as the reference's, for every code point."""
    from pdi.fragments.text import index as index_module

    try:
        octets = text.encode(charset)
    except UnicodeEncodeError:
        return  # (a character the charset cannot write)
    cps = data.draw(st.integers(0, max(0, len(text) - 1)))  # (the text's end is its octets' end, escapes and all)
    original = index_module._MARK_OCTETS
    index_module._MARK_OCTETS = mark
    try:
        found = TextIndex(octets, charset).cp_to_octet(cps)
    finally:
        index_module._MARK_OCTETS = original
    assert found == (_smallest_prefix(octets, TextIndex(octets, charset).encoding.body, cps) if text else 0)
